//! A side's memory by process, as `clibench mem` shows it: a row per process with a
//! totals row, the peaks while a started command settled, and notes on what the
//! table cannot say by itself.

use super::text::{Align, render};
use crate::metric::{Metric, Phase};
use crate::result::{ProcessMemory, SettleEnded, SettleRecord, SettleUntil, Side, TrialRecord};
use crate::units::format_bytes;

/// The `runtime` fact holding the most processes alive at once while the family settled.
pub const PEAK_PROCESS_COUNT_KEY: &str = "peak_process_count";
/// The `runtime` fact holding how many samples the peaks were taken from.
pub const PEAK_SAMPLES_KEY: &str = "peak_samples";
/// The `runtime` fact saying whether the measurement ran as root (`true` or `false`),
/// for whom another user's files are no reason for a `?`.
pub const AS_ROOT_KEY: &str = "as_root";

/// The table, the settle and peaks lines (for a started command) and the notes, one
/// `note: ` line each.
pub fn report(side: &Side) -> String {
    let mut out = table(side);
    if let Some(settle) = measured_trial(side).and_then(|record| record.settles.first()) {
        out.push_str(&format!(
            "settled ({}): {} after {:.3} s\n",
            asked(settle),
            ended(settle.ended),
            settle.took_seconds
        ));
    }
    if let Some(peak_rss) = first(side, Metric::PeakRss) {
        let fact = |key: &str| {
            side.runtime
                .get(key)
                .and_then(|value| value.parse::<usize>().ok())
        };
        let counted = |value: Option<usize>, one: &str, many: &str| {
            value.map_or_else(|| format!("? {many}"), |n| count(n, one, many))
        };
        out.push_str(&format!(
            "peak while settling: RSS {}, PSS {}, {} ({})\n",
            format_bytes(peak_rss),
            bytes(first(side, Metric::PeakPss)),
            counted(fact(PEAK_PROCESS_COUNT_KEY), "process", "processes"),
            counted(fact(PEAK_SAMPLES_KEY), "sample", "samples"),
        ));
    }
    for note in notes(side) {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// The measure phase's trial 0 record: the one measurement's.
fn measured_trial(side: &Side) -> Option<&TrialRecord> {
    side.trials
        .iter()
        .find(|record| record.phase == Phase::Measure && record.trial == 0)
}

/// How many processes the family had when it was measured: the measure phase's trial 0
/// record, else the processes listed.
fn process_count(side: &Side) -> usize {
    measured_trial(side)
        .and_then(|record| record.process_count)
        .map_or(side.processes.len(), |count| count as usize)
}

/// The settle asked for, as `clibench mem --settle` takes it: `1s`, or
/// `auto:max=5s,quiet=100ms,tolerance=1%`.
fn asked(settle: &SettleRecord) -> String {
    let duration = |seconds: f64| {
        let millis = (seconds * 1000.0).round() as u64;
        if millis > 0 && millis.is_multiple_of(1000) {
            format!("{}s", millis / 1000)
        } else {
            format!("{millis}ms")
        }
    };
    match (settle.until, settle.quiet_seconds, settle.tolerance) {
        (SettleUntil::Quiet, Some(quiet), Some(tolerance)) => format!(
            "auto:max={},quiet={},tolerance={}%",
            duration(settle.max_seconds),
            duration(quiet),
            tolerance * 100.0
        ),
        (SettleUntil::Quiet, _, _) => format!("auto:max={}", duration(settle.max_seconds)),
        (SettleUntil::Fixed, _, _) => duration(settle.max_seconds),
    }
}

/// How a settle ended, in the words of the result file.
fn ended(ended: SettleEnded) -> &'static str {
    match ended {
        SettleEnded::Elapsed => "elapsed",
        SettleEnded::Quiet => "quiet",
        SettleEnded::Max => "max",
        SettleEnded::Closed => "closed",
    }
}

/// `1 process`, `2 processes`: the count with the word it takes.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the table cannot say by itself: why some values are `?`, why the peak counted
/// more processes than the table shows, and that only the largest processes are listed.
pub fn notes(side: &Side) -> Vec<String> {
    let mut notes = Vec::new();
    let unreadable = side.processes.iter().filter(|p| p.pss.is_none()).count();
    if unreadable > 0 {
        let whose = match unreadable {
            1 => "1 process whose /proc/PID/smaps_rollup".to_owned(),
            n => format!("{n} processes whose /proc/PID/smaps_rollup"),
        };
        // Root can read every smaps_rollup of its own namespace; what stays unreadable is a
        // process the kernel's ptrace check refuses even to root (one of another PID or user
        // namespace, a Yama or LSM policy), or one that was exiting.
        let as_root = side.runtime.get(AS_ROOT_KEY).is_some_and(|v| v == "true");
        let why = if as_root {
            "even to root, the kernel refuses it for a process that ptrace may not inspect \
             (another namespace's, one an LSM or Yama policy protects) or one that was exiting"
        } else {
            "the kernel shows another user's smaps_rollup only to root or a process with \
             CAP_SYS_PTRACE (run clibench as root, or as that user)"
        };
        notes.push(format!(
            "PSS, USS and swap are `?` for {whose} could not be read: {why}; RSS then comes \
             from /proc/PID/stat, which anyone may read; a total marked `+?` is the sum of the \
             readable processes, to which the others add an unknown amount"
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

/// A family total: the recorded metric when every process's value was known; else the
/// sum of the listed processes' known values marked `+?` (the others, and any process
/// not listed, add an unknown amount), or `?` when none is known.
fn total(side: &Side, metric: Metric, value: fn(&ProcessMemory) -> Option<u64>) -> String {
    if let Some(total) = first(side, metric) {
        return format_bytes(total);
    }
    let known: Vec<u64> = side.processes.iter().filter_map(value).collect();
    if known.is_empty() {
        return "?".to_string();
    }
    let sum = known.iter().fold(0u64, |sum, v| sum.saturating_add(*v));
    format!("{}+?", format_bytes(sum as f64))
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
        count(process_count(side), "process", "processes"),
        known(threads),
        bytes(first(side, Metric::Rss)),
        total(side, Metric::Pss, |p| p.pss),
        total(side, Metric::Uss, |p| p.uss),
        total(side, Metric::Swap, |p| p.swap),
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
            cmdline: None,
            role: None,
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
        assert!(said[0].starts_with("PSS, USS and swap are `?` for 1 process whose"));
        assert!(said[0].contains("CAP_SYS_PTRACE"));
        assert!(said[1].starts_with("the peak counted 5 processes, the table 2:"));
        // Root is not told to run as root.
        mixed.runtime.insert(AS_ROOT_KEY.into(), "true".into());
        let as_root = notes(&mixed);
        assert!(!as_root[0].contains("run clibench as root"), "{as_root:?}");
        assert!(as_root[0].contains("even to root"), "{as_root:?}");
        mixed.trial_record_mut(Phase::Measure, 0).process_count = Some(300);
        assert!(
            notes(&mixed)[1]
                .starts_with("the table lists the 2 processes with the most RSS of 300")
        );
    }

    #[test]
    fn a_measurement_shows_its_peaks_and_notes_under_the_table() {
        let mut side = family(vec![
            process(100, "node", 120, Some(96)),
            process(7, "sshd", 8, None),
        ]);
        record(
            &mut side,
            Metric::PeakRss,
            0,
            Sample::Value((130u64 << 20) as f64),
        );
        record(
            &mut side,
            Metric::PeakPss,
            0,
            Sample::Value((100u64 << 20) as f64),
        );
        side.runtime
            .insert(PEAK_PROCESS_COUNT_KEY.into(), "3".into());
        side.runtime.insert(PEAK_SAMPLES_KEY.into(), "40".into());
        side.trial_record_mut(Phase::Measure, 0)
            .push_settle(SettleRecord {
                session: "settle".into(),
                until: SettleUntil::Quiet,
                max_seconds: 3.0,
                quiet_seconds: Some(0.1),
                tolerance: Some(0.01),
                took_seconds: 0.73,
                ended: SettleEnded::Quiet,
            });
        let text = report(&side);
        assert!(text.starts_with(&table(&side)), "{text}");
        assert!(
            text.contains(
                "\nsettled (auto:max=3s,quiet=100ms,tolerance=1%): quiet after 0.730 s\n"
            ),
            "{text}"
        );
        let below: Vec<&str> = text.lines().rev().take(3).collect();
        assert_eq!(
            below[2],
            "peak while settling: RSS 130.0 MiB, PSS 100.0 MiB, 3 processes (40 samples)"
        );
        assert!(
            below[1].starts_with("note: PSS, USS and swap are `?`"),
            "{text}"
        );
        assert!(
            below[0].starts_with("note: the peak counted 3 processes"),
            "{text}"
        );
    }

    #[test]
    fn a_fixed_settle_is_named_as_its_flag_takes_it() {
        let settle = |max_seconds| SettleRecord {
            session: "settle".into(),
            until: SettleUntil::Fixed,
            max_seconds,
            quiet_seconds: None,
            tolerance: None,
            took_seconds: max_seconds,
            ended: SettleEnded::Elapsed,
        };
        assert_eq!(asked(&settle(1.0)), "1s");
        assert_eq!(asked(&settle(0.25)), "250ms");
        assert_eq!(asked(&settle(0.0)), "0ms");
    }
}
