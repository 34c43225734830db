//! CSV: one row per metric, numbers in base units (seconds, bytes) at full
//! precision, empty cells where there is no number. Fields are quoted as RFC 4180 asks.

use crate::compare::Comparison;
use crate::report::Report;
use crate::stats::MetricStats;

/// One row per metric of `report`: its statistics over trials.
pub fn report(report: &Report) -> String {
    let mut out =
        String::from("metric,unit,n,errored,min,median,mean,std_dev,mad,p95,max,outlier_trials\n");
    for stats in &report.metrics {
        let numbers = match &stats.summary {
            Some(s) => [s.min, s.median, s.mean, s.std_dev, s.mad, s.p95, s.max]
                .map(|value| number(Some(value))),
            None => std::array::from_fn(|_| String::new()),
        };
        let mut row = vec![
            stats.metric.name().to_string(),
            stats.unit.symbol().to_string(),
            stats.n().to_string(),
            stats.errored.to_string(),
        ];
        row.extend(numbers);
        row.push(join_trials(&stats.outlier_trials));
        push_row(&mut out, &row);
    }
    out
}

/// One row per metric of `comparison`; metrics missing on a side have the verdict `missing`.
pub fn comparison(comparison: &Comparison) -> String {
    let mut out = String::from(
        "metric,unit,direction,base_n,base_errored,base_median,candidate_n,candidate_errored,\
         candidate_median,delta,ratio,ci_low,ci_high,floor,p_adjusted,detectable,verdict\n",
    );
    for row in &comparison.metrics {
        push_row(
            &mut out,
            &[
                row.metric.name().to_string(),
                row.unit.symbol().to_string(),
                direction(row.metric),
                row.base.n().to_string(),
                row.base.errored.to_string(),
                number(row.base.median()),
                row.candidate.n().to_string(),
                row.candidate.errored.to_string(),
                number(row.candidate.median()),
                number(Some(row.delta)),
                number(Some(row.ratio)),
                number(Some(row.ci_low)),
                number(Some(row.ci_high)),
                number(Some(row.floor)),
                number(row.p_adjusted),
                number(row.detectable),
                row.verdict.name().to_string(),
            ],
        );
    }
    for missing in &comparison.missing {
        let counts = |stats: &Option<MetricStats>| match stats {
            Some(stats) => [
                stats.n().to_string(),
                stats.errored.to_string(),
                number(stats.median()),
            ],
            None => ["0".to_string(), "0".to_string(), String::new()],
        };
        let mut row = vec![
            missing.metric.name().to_string(),
            missing.metric.unit().symbol().to_string(),
            direction(missing.metric),
        ];
        row.extend(counts(&missing.base));
        row.extend(counts(&missing.candidate));
        row.extend(std::iter::repeat_n(String::new(), 7));
        row.push("missing".to_string());
        push_row(&mut out, &row);
    }
    out
}

fn direction(metric: crate::metric::Metric) -> String {
    match metric.direction() {
        crate::metric::Direction::LowerIsBetter => "lower_is_better",
        crate::metric::Direction::HigherIsBetter => "higher_is_better",
    }
    .to_string()
}

/// A number at full precision (shortest text that reads back equal); empty when
/// absent or not finite.
fn number(value: Option<f64>) -> String {
    match value {
        Some(value) if value.is_finite() => value.to_string(),
        _ => String::new(),
    }
}

fn join_trials(trials: &[u32]) -> String {
    trials
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn push_row(out: &mut String, fields: &[String]) {
    let quoted: Vec<String> = fields.iter().map(|field| quote(field)).collect();
    out.push_str(&quoted.join(","));
    out.push('\n');
}

fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_separators_are_quoted() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn numbers_keep_full_precision_and_drop_non_finite() {
        assert_eq!(number(Some(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(number(Some(134217728.0)), "134217728");
        assert_eq!(number(Some(f64::INFINITY)), "");
        assert_eq!(number(None), "");
    }
}
