//! The circumstances of a trial, recorded when it starts: the time, the load average,
//! the host and the host's speed (a fixed CPU loop's time), so that a comparison can show under what load and where each trial ran
//! (and `clibench merge` can flag results from different machines).

use bench_core::{Phase, Side};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the load average is read.
const LOADAVG: &str = "/proc/loadavg";
/// Where the host name is read.
const HOSTNAME: &str = "/proc/sys/kernel/hostname";

/// Records the start time, load average, host and speed probe of `trial` of `phase` in `side`,
/// overwriting what an earlier attempt of the same trial recorded. A fact that cannot be
/// read is left out: the trial itself does not depend on it.
pub(crate) fn record_start(side: &mut Side, phase: Phase, trial: u32) {
    let record = side.trial_record_mut(phase, trial);
    record.started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|since| u64::try_from(since.as_millis()).ok());
    record.load_average = std::fs::read_to_string(LOADAVG)
        .ok()
        .and_then(|text| parse_loadavg(&text));
    record.host = std::fs::read_to_string(HOSTNAME)
        .ok()
        .and_then(|text| parse_hostname(&text));
    // Last, so that it is timed right before the trial's own work.
    record.speed_probe_seconds = Some(bench_core::compare::speed_probe::probe().as_secs_f64());
}

/// The 1, 5 and 15 minute load averages of a `/proc/loadavg` line
/// (`0.52 0.58 0.59 1/467 12345`).
pub(crate) fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut fields = text
        .split_whitespace()
        .map(|field| field.parse::<f64>().ok());
    let load = [fields.next()??, fields.next()??, fields.next()??];
    load.iter()
        .all(|value| value.is_finite() && *value >= 0.0)
        .then_some(load)
}

/// The host name, trimmed and cut to what the result file keeps; `None` when empty.
pub(crate) fn parse_hostname(text: &str) -> Option<String> {
    let name: String = text
        .trim()
        .chars()
        .take(bench_core::MAX_HOST_CHARS)
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_gives_its_three_averages() {
        assert_eq!(
            parse_loadavg("0.52 1.58 12.59 1/467 12345\n"),
            Some([0.52, 1.58, 12.59])
        );
    }

    #[test]
    fn a_short_or_garbled_loadavg_is_not_a_load() {
        assert_eq!(parse_loadavg("0.52 1.58"), None);
        assert_eq!(parse_loadavg("0.52 x 0.1 1/2 3"), None);
        assert_eq!(parse_loadavg("-1 0 0 1/2 3"), None);
        assert_eq!(parse_loadavg("NaN 0 0 1/2 3"), None);
    }

    #[test]
    fn the_host_name_is_trimmed_and_an_empty_one_is_none() {
        assert_eq!(parse_hostname("runner-7\n").as_deref(), Some("runner-7"));
        assert_eq!(parse_hostname("\n"), None);
        assert_eq!(parse_hostname(&"h".repeat(300)).unwrap().len(), 255);
    }

    #[test]
    fn a_retried_trial_keeps_one_record() {
        let mut side = Side::new("x");
        record_start(&mut side, Phase::Measure, 1);
        record_start(&mut side, Phase::Measure, 1);
        record_start(&mut side, Phase::Measure, 2);
        assert_eq!(side.trials.len(), 2);
        let first = &side.trials[0];
        assert!(first.started_unix_ms.is_some());
        assert!(
            first.load_average.is_some(),
            "/proc/loadavg is readable on Linux"
        );
    }
}
