//! A side's staircase as `clibench staircase` shows it: what was measured on which
//! machine, then the step table with the average and steady rows and what stopping
//! every instance gave back.

use super::text::{Align, render};
use crate::detail::{InstanceCost, StaircaseRun};
use crate::result::{ResultFile, Side};
use crate::units::format_bytes;

/// The lines above the steps: the command, the machine (the `runtime` facts `cpu`,
/// `cores`, `memory_bytes`, `kernel`, `machine`) and the settings (the `config` entries
/// `count` and `settle`). An unrecorded fact shows as `?`.
pub fn header(result: &ResultFile) -> String {
    let (side, config) = (&result.side, &result.request.config);
    let fact = |key: &str| side.runtime.get(key).map_or("?", String::as_str);
    let setting = |key: &str| config.get(key).map_or("?", String::as_str);
    let memory = side
        .runtime
        .get("memory_bytes")
        .and_then(|bytes| bytes.parse::<u64>().ok())
        .map_or_else(|| "?".to_string(), |bytes| format_bytes(bytes as f64));
    format!(
        "=== Staircase: marginal memory of one more instance ===\n\
         command: {}\n\
         CPU: {} ({} cores) | RAM: {memory} | kernel: {} ({})\n\
         count: {} | settle: {}\n",
        side.sha,
        fact("cpu"),
        fact("cores"),
        fact("kernel"),
        fact("machine"),
        setting("count"),
        setting("settle"),
    )
}

/// A change in bytes with its sign (`+64.0 MiB`, `-1.0 MiB`), `?` when unknown.
pub fn signed(bytes: Option<i64>) -> String {
    match bytes {
        None => "?".into(),
        Some(b) if b > 0 => format!("+{}", format_bytes(b as f64)),
        Some(b) => format_bytes(b as f64),
    }
}

/// Every staircase of the side (one per trial): its step table, the average and steady
/// rows, and what stopping all reclaimed.
pub fn steps(side: &Side) -> String {
    side.staircases.iter().map(run).collect()
}

fn cost_row(label: &str, cost: &InstanceCost) -> Vec<String> {
    vec![
        label.into(),
        String::new(),
        signed(Some(cost.rss_bytes)),
        signed(cost.pss_bytes),
        signed(cost.uss_bytes),
        String::new(),
    ]
}

fn run(run: &StaircaseRun) -> String {
    let mut rows: Vec<Vec<String>> = run
        .steps
        .iter()
        .map(|step| {
            vec![
                // Steps are numbered from 0, as they are shown while they are measured.
                step.instances.saturating_sub(1).to_string(),
                step.process_count
                    .map_or_else(|| "?".into(), |count| count.to_string()),
                signed(Some(step.rss_delta_bytes)),
                signed(step.pss_delta_bytes),
                signed(step.uss_delta_bytes),
                format_bytes(step.rss_bytes as f64),
            ]
        })
        .collect();
    if let Some(average) = &run.average {
        rows.push(cost_row("avg", average));
    }
    // With one step there are no later steps: no steady row rather than a blank one.
    if let Some(steady) = &run.steady {
        rows.push(cost_row("steady", steady));
    }
    use Align::{Left, Right};
    let mut out = render(
        &[
            "step",
            "processes",
            "RSS delta",
            "PSS delta",
            "USS delta",
            "family RSS",
        ],
        &[Left, Right, Right, Right, Right, Right],
        &rows,
    );
    if run
        .steps
        .iter()
        .any(|step| step.uss_delta_bytes.is_some_and(|bytes| bytes < 0))
    {
        // A falling USS looks like a measuring error; it is how USS is defined.
        out.push_str(&super::text::wrap(
            "note: a negative USS delta is not memory given back: USS counts the pages one \
             process alone maps, and the new instance mapped pages an earlier instance held \
             alone (the same binary, libraries, caches), which are shared from then on and \
             leave that instance's USS; RSS and PSS count them\n",
            80,
        ));
    }
    out.push_str(&format!(
        "reclaimed after stopping all: RSS {}, PSS {}\n",
        format_bytes(run.reclaimed_rss_bytes as f64),
        run.reclaimed_pss_bytes
            .map_or_else(|| "?".into(), |b| format_bytes(b as f64)),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detail::StaircaseStep;

    fn step(
        instances: u32,
        rss_mib: u64,
        delta: i64,
        pss: Option<i64>,
        uss: Option<i64>,
    ) -> StaircaseStep {
        StaircaseStep {
            instances,
            rss_bytes: rss_mib << 20,
            pss_bytes: Some(rss_mib << 19),
            rss_delta_bytes: delta,
            pss_delta_bytes: pss,
            uss_delta_bytes: uss,
            process_count: Some(instances),
        }
    }

    #[test]
    fn step_table_shows_deltas_average_and_reclaim() {
        let mut side = Side::new("node");
        side.staircases.push(StaircaseRun {
            trial: 0,
            baseline_rss_bytes: 0,
            steps: vec![
                step(1, 66, 66 << 20, Some(64 << 20), Some(63 << 20)),
                step(2, 131, 65 << 20, None, Some(-(1 << 20))),
            ],
            after_teardown_rss_bytes: 0,
            reclaimed_rss_bytes: 131 << 20,
            reclaimed_pss_bytes: None,
            after_teardown_process_count: Some(0),
            instance: crate::detail::StaircaseInstance::Idle,
            average: Some(InstanceCost {
                rss_bytes: 131 << 19,
                pss_bytes: None,
                uss_bytes: Some(31 << 20),
            }),
            steady: Some(InstanceCost {
                rss_bytes: 65 << 20,
                pss_bytes: None,
                uss_bytes: Some(-(1 << 20)),
            }),
        });
        insta::assert_snapshot!(steps(&side));
    }

    #[test]
    fn header_names_the_hardware() {
        let mut result = ResultFile::new(crate::Request::new("node -e 1", crate::Role::Candidate));
        for (key, value) in [
            ("cpu", "AMD EPYC"),
            ("cores", "2"),
            ("memory_bytes", "25769803776"),
            ("kernel", "6.18.44"),
            ("machine", "x86_64"),
        ] {
            result.side.runtime.insert(key.into(), value.into());
        }
        for (key, value) in [("count", "5"), ("settle", "2s")] {
            result.request.config.insert(key.into(), value.into());
        }
        insta::assert_snapshot!(header(&result));
    }

    #[test]
    fn signs_mark_growth_and_unknowns() {
        assert_eq!(signed(Some(64 << 20)), "+64.0 MiB");
        assert_eq!(signed(Some(-(1 << 20))), "-1.0 MiB");
        assert_eq!(signed(None), "?");
    }
}
