//! A side's memory by process, as `clibench mem` shows it: a row per process with a
//! totals row, the peaks while a started command settled, and notes on what the
//! table cannot say by itself.

use super::text::{Align, render};
use crate::metric::{Metric, Phase};
use crate::result::{ProcessMemory, Side};
use crate::units::format_bytes;

/// The `runtime` fact holding the most processes alive at once while the family settled.
pub const PEAK_PROCESS_COUNT_KEY: &str = "peak_process_count";
/// The `runtime` fact holding how many samples the peaks were taken from.
pub const PEAK_SAMPLES_KEY: &str = "peak_samples";

/// The table, the peaks line (when peaks were sampled) and the notes, one `note: ` line
/// each.
pub fn report(side: &Side) -> String {
    let mut out = table(side);
    if let Some(peak_rss) = first(side, Metric::PeakRss) {
        let fact = |key: &str| side.runtime.get(key).map_or("?", String::as_str);
        out.push_str(&format!(
            "peak while settling: RSS {}, PSS {}, {} processes ({} samples)\n",
            format_bytes(peak_rss),
            bytes(first(side, Metric::PeakPss)),
            fact(PEAK_PROCESS_COUNT_KEY),
            fact(PEAK_SAMPLES_KEY),
        ));
    }
    for note in notes(side) {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// How many processes the family had when it was measured: the measure phase's trial 0
/// record, else the processes listed.
fn process_count(side: &Side) -> usize {
    side.trials
        .iter()
        .find(|record| record.phase == Phase::Measure && record.trial == 0)
        .and_then(|record| record.process_count)
        .map_or(side.processes.len(), |count| count as usize)
}

/// What the table cannot say by itself: why some values are `?`, why the peak counted
/// more processes than the table shows, and that only the largest processes are listed.
pub fn notes(side: &Side) -> Vec<String> {
    let mut notes = Vec::new();
    let unreadable = side.processes.iter().filter(|p| p.pss.is_none()).count();
    if unreadable > 0 {
        notes.push(format!(
            "PSS, USS and swap are `?` for {unreadable} process(es) whose /proc/PID/smaps_rollup \
             could not be read: the kernel shows another user's smaps_rollup only to root or a \
             process with CAP_SYS_PTRACE (run clibench as root, or as that user); RSS then comes from \
             /proc/PID/stat, which anyone may read"
        ));
    }
    let count = process_count(side);
    if let Some(peak) = side
        .runtime
        .get(PEAK_PROCESS_COUNT_KEY)
        .and_then(|peak| peak.parse::<usize>().ok())
        && peak > count
    {
        notes.push(format!(
            "the peak counted {peak} processes, the table {count}: the others were short-lived (helpers \
             such as version-manager shims or wrapper scripts that start the real program and \
             exit); their memory is in the peak, not in the table"
        ));
    }
    if count > side.processes.len() {
        notes.push(format!(
            "the table lists the {} processes with the most RSS of {count}; the totals count them all",
            side.processes.len()
        ));
    }
    notes
}

fn first(side: &Side, metric: Metric) -> Option<f64> {
    side.values(metric).first().copied()
}

fn bytes(value: Option<f64>) -> String {
    value.map_or_else(|| "?".to_string(), format_bytes)
}

fn known<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "?".to_string(), |v| v.to_string())
}

/// The per-process table with a totals row (the family's metrics). `?` marks a value
/// the kernel would not show (another user's process without privilege) or that was
/// not recorded.
pub fn table(side: &Side) -> String {
    let size = |value: Option<u64>| bytes(value.map(|v| v as f64));
    let row = |p: &ProcessMemory| {
        vec![
            p.pid.to_string(),
            known(p.ppid),
            p.name.clone(),
            known(p.threads),
            format_bytes(p.rss as f64),
            size(p.pss),
            size(p.uss),
            size(p.swap),
        ]
    };
    let mut rows: Vec<Vec<String>> = side.processes.iter().map(row).collect();
    let threads: Option<u32> = side.processes.iter().map(|p| p.threads).sum();
    rows.push(vec![
        "total".into(),
        String::new(),
        match process_count(side) {
            1 => "1 process".to_string(),
            n => format!("{n} processes"),
        },
        known(threads),
        bytes(first(side, Metric::Rss)),
        bytes(first(side, Metric::Pss)),
        bytes(first(side, Metric::Uss)),
        bytes(first(side, Metric::Swap)),
    ]);
    use Align::{Left, Right};
    render(
        &[
            "pid", "ppid", "name", "threads", "RSS", "PSS", "USS", "swap",
        ],
        &[Right, Right, Left, Right, Right, Right, Right, Right],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sample, record};

    fn process(pid: u32, name: &str, rss_mib: u64, pss_mib: Option<u64>) -> ProcessMemory {
        ProcessMemory {
            pid,
            ppid: Some(1),
            name: name.into(),
            rss: rss_mib << 20,
            pss: pss_mib.map(|m| m << 20),
            uss: pss_mib.map(|m| m << 19),
            swap: pss_mib.map(|_| 0),
            cpu_seconds: Some(0.5),
            threads: Some(3),
        }
    }

    /// A side as `clibench mem` records it: the processes, their totals as metrics.
    fn family(processes: Vec<ProcessMemory>) -> Side {
        let mut side = Side::new("pid 100");
        let total = |value: fn(&ProcessMemory) -> Option<u64>| -> Option<u64> {
            processes.iter().map(value).sum()
        };
        for (metric, value) in [
            (Metric::Rss, total(|p| Some(p.rss))),
            (Metric::Pss, total(|p| p.pss)),
            (Metric::Uss, total(|p| p.uss)),
            (Metric::Swap, total(|p| p.swap)),
        ] {
            if let Some(value) = value {
                record(&mut side, metric, 0, Sample::Value(value as f64));
            }
        }
        side.trial_record_mut(Phase::Measure, 0).process_count = Some(processes.len() as u32);
        side.set_processes(processes);
        side
    }

    #[test]
    fn table_has_a_row_per_process_and_totals() {
        let side = family(vec![
            process(100, "node", 120, Some(96)),
            process(101, "python3", 30, Some(12)),
        ]);
        insta::assert_snapshot!(table(&side));
    }

    #[test]
    fn unknown_pss_shows_as_question_mark_and_unknown_total() {
        let side = family(vec![
            process(100, "node", 120, Some(96)),
            process(7, "sshd", 8, None),
        ]);
        insta::assert_snapshot!(table(&side));
    }

    #[test]
    fn notes_explain_question_marks_a_higher_peak_count_and_a_cut_list() {
        let mut readable = family(vec![process(100, "node", 120, Some(96))]);
        assert!(notes(&readable).is_empty());
        readable
            .runtime
            .insert(PEAK_PROCESS_COUNT_KEY.into(), "1".into());
        assert!(notes(&readable).is_empty());
        let mut mixed = family(vec![
            process(100, "node", 120, Some(96)),
            process(7, "sshd", 8, None),
        ]);
        mixed
            .runtime
            .insert(PEAK_PROCESS_COUNT_KEY.into(), "5".into());
        let said = notes(&mixed);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("PSS, USS and swap are `?` for 1 process(es)"));
        assert!(said[0].contains("CAP_SYS_PTRACE"));
        assert!(said[1].starts_with("the peak counted 5 processes, the table 2:"));
        mixed.trial_record_mut(Phase::Measure, 0).process_count = Some(300);
        assert!(notes(&mixed)[1].starts_with("the table lists the 2 processes with the most RSS of 300"));
    }

    #[test]
    fn a_measurement_shows_its_peaks_and_notes_under_the_table() {
        let mut side = family(vec![
            process(100, "node", 120, Some(96)),
            process(7, "sshd", 8, None),
        ]);
        record(&mut side, Metric::PeakRss, 0, Sample::Value((130u64 << 20) as f64));
        record(&mut side, Metric::PeakPss, 0, Sample::Value((100u64 << 20) as f64));
        side.runtime.insert(PEAK_PROCESS_COUNT_KEY.into(), "3".into());
        side.runtime.insert(PEAK_SAMPLES_KEY.into(), "40".into());
        let text = report(&side);
        assert!(text.starts_with(&table(&side)), "{text}");
        let below: Vec<&str> = text.lines().rev().take(3).collect();
        assert_eq!(
            below[2],
            "peak while settling: RSS 130.0 MiB, PSS 100.0 MiB, 3 processes (40 samples)"
        );
        assert!(below[1].starts_with("note: PSS, USS and swap are `?`"), "{text}");
        assert!(below[0].starts_with("note: the peak counted 3 processes"), "{text}");
    }
}
