//! The session's slopes as report lines: the fitted ones (`session_growth`, `lag_growth`,
//! `render_growth`) and the per-turn series' growth (`turn`, `submit`, `first_token`,
//! `turn_cpu`), each shown only through at least [`MIN_SLOPE_POINTS`] points.

use crate::Metric;
use crate::detail::{SessionRun, SessionTurn};
use crate::stats::{Fit, MIN_SLOPE_POINTS, fit};
use crate::units::Unit;

/// How a turn's value of one series is read.
type Read = fn(&SessionTurn) -> Option<f64>;

/// The per-turn series whose growth over the turns is shown, and how to read a turn's
/// value of each.
const TURN_SERIES: [(Metric, Read); 4] = [
    (Metric::Turn, |t| Some(t.turn_seconds)),
    (Metric::Submit, |t| t.submit_seconds),
    (Metric::FirstToken, |t| t.first_token_seconds),
    (Metric::TurnCpu, |t| Some(t.cpu_seconds)),
];

/// The fitted slopes of `run`, with the scale they are shown at and what was fitted.
fn fitted(run: &SessionRun) -> [(Metric, Option<Fit>, f64, &'static str); 3] {
    [
        (Metric::SessionGrowth, run.growth, 1.0, "turns"),
        (Metric::LagGrowth, run.lag, 100.0, "checkpoints"),
        (Metric::RenderGrowth, run.render, 100.0, "checkpoints"),
    ]
}

/// The fit of one per-turn series over the turns after the warm-up.
fn turn_fit(run: &SessionRun, value: Read) -> Option<Fit> {
    let points: Vec<(f64, f64)> = run
        .turns
        .iter()
        .filter(|t| t.turn > run.warmup_turns)
        .filter_map(|t| Some((f64::from(t.turn), value(t)?)))
        .collect();
    fit(&points)
}

/// One line per trial with a slope through enough points: `trial 0 (after 1 warm-up
/// turns): `session_growth` 1.0 MiB/turn ± 12 KiB over 99 turns; `submit` 100 ms/100
/// turns ± 8 ms over 99 turns **grows**; ...`. A per-turn series is `steady` when its
/// slope is within two standard errors of none, and **grows** (or falls) otherwise; a
/// slope whose series curves up is **faster than linear**.
pub(super) fn lines(runs: &[SessionRun]) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            let mut parts: Vec<String> = fitted(run)
                .into_iter()
                .filter_map(|(metric, fit, scale, what)| {
                    let fit = fit.filter(|f| f.points >= MIN_SLOPE_POINTS)?;
                    Some(part(metric, &fit, scale, metric.per_short(), what, false))
                })
                .collect();
            parts.extend(TURN_SERIES.into_iter().filter_map(|(metric, value)| {
                let fit = turn_fit(run, value).filter(|f| f.points >= MIN_SLOPE_POINTS)?;
                Some(part(metric, &fit, 100.0, "/100 turns", "turns", true))
            }));
            (!parts.is_empty()).then(|| {
                format!(
                    "trial {} (after {} warm-up turns): {}",
                    run.trial,
                    run.warmup_turns,
                    parts.join("; ")
                )
            })
        })
        .collect()
}

/// `` `submit` 100 ms/100 turns ± 8 ms over 99 turns **grows** ``.
fn part(metric: Metric, fit: &Fit, scale: f64, per: &str, what: &str, flag: bool) -> String {
    let unit: Unit = metric.unit();
    let error = fit.std_error.map_or(String::new(), |error| {
        format!(" ± {}", unit.format(error * scale))
    });
    let mut flags = String::new();
    if flag {
        flags.push_str(match fit.std_error {
            Some(error) if fit.slope.abs() <= 2.0 * error => " steady",
            Some(_) if fit.slope > 0.0 => " **grows**",
            Some(_) => " falls",
            None => "",
        });
    }
    if fit.faster_than_linear() {
        flags.push_str(" **faster than linear**");
    }
    format!(
        "`{metric}` {}{per}{error} over {} {what}{flags}",
        signed(unit, fit.slope * scale),
        fit.points
    )
}

fn signed(unit: Unit, value: f64) -> String {
    if value < 0.0 {
        format!("-{}", unit.format(-value))
    } else {
        unit.format(value)
    }
}

/// The fitted slopes that no trial fitted through [`MIN_SLOPE_POINTS`] points, with the
/// most points one had; a slope no trial fitted at all is not named.
pub(super) fn few_points(runs: &[SessionRun]) -> Vec<(Metric, u32)> {
    let mut few = Vec::new();
    for index in 0..3 {
        let most = runs
            .iter()
            .filter_map(|run| fitted(run)[index].1.map(|f| f.points))
            .max();
        if let Some(points) = most.filter(|&p| p < MIN_SLOPE_POINTS) {
            let metric = runs.first().map(|run| fitted(run)[index].0);
            few.extend(metric.map(|m| (m, points)));
        }
    }
    few
}

/// "`session_growth` (2 points), ...: not shown, ..." for [`few_points`]'s slopes.
pub(super) fn note(few: &[(Metric, u32)]) -> Option<String> {
    if few.is_empty() {
        return None;
    }
    let named: Vec<String> = few
        .iter()
        .map(|(metric, points)| format!("`{metric}` ({points} points)"))
        .collect();
    Some(format!(
        "{}: not shown: a slope through fewer than {MIN_SLOPE_POINTS} points is no figure \
         (a longer session has them, `--scenario long-session`; result.json keeps the value).",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(turns: u32, submit: impl Fn(u32) -> f64) -> SessionRun {
        let mut run: SessionRun = serde_json::from_str(
            r#"{"trial":0,"dialect":"","turns":[],"warmup_turns":1,"idle_seconds":1.0}"#,
        )
        .unwrap();
        for n in 1..=turns {
            let mut turn: SessionTurn = serde_json::from_str(&format!(
                r#"{{"turn":{n},"turn_seconds":1.0,"cpu_seconds":0.1,"rss_bytes":1}}"#
            ))
            .unwrap();
            turn.submit_seconds = Some(submit(n));
            run.turns.push(turn);
        }
        run
    }

    #[test]
    fn a_per_turn_series_that_grows_is_flagged_and_one_that_does_not_is_steady() {
        // submit from 50 ms to 150 ms over 100 turns, with a little noise.
        let growing = run(100, |n| {
            0.05 + 0.001 * f64::from(n) + 0.002 * f64::from(n % 3)
        });
        let line = lines(&[growing]).join("\n");
        assert!(
            line.contains("`submit` 99.9 ms/100 turns ± 580 µs"),
            "{line}"
        );
        assert!(line.contains("over 99 turns **grows**"), "{line}");
        let flat = run(100, |n| 0.05 + 0.002 * f64::from(n % 3));
        let line = lines(&[flat]).join("\n");
        assert!(
            line.contains("`submit`") && line.contains(" steady"),
            "{line}"
        );
        assert!(!line.contains("**grows**"), "{line}");
    }

    #[test]
    fn a_slope_through_few_points_is_no_figure() {
        let mut short = run(3, |_| 0.05);
        short.growth = fit(&[(2.0, 100.0), (3.0, 200.0)]);
        assert!(lines(std::slice::from_ref(&short)).is_empty());
        let few = few_points(&[short]);
        assert_eq!(few, [(Metric::SessionGrowth, 2)]);
        insta::assert_snapshot!(note(&few).unwrap(), @"`session_growth` (2 points): not shown: a slope through fewer than 5 points is no figure (a longer session has them, `--scenario long-session`; result.json keeps the value).");
    }
}
