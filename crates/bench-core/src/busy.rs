//! Whether the host was busy while a side was measured: the one rule every report and
//! command warns by.
//!
//! Each trial records the load average at its start ([`crate::TrialRecord::load_average`])
//! and the run records the host's cores (the runtime fact `cores`). A 1-minute load
//! above the core count means some runnable thread waited for a CPU: a start measured
//! then can take several times longer (an agent CLI's cold start tripled at load 6 on
//! 2 cores), and nothing in the numbers themselves says so.
//!
//! ```
//! use bench_core::{Phase, Side, TrialRecord, busy::busy_host};
//!
//! let mut side = Side::new("abc");
//! side.runtime.insert("cores".into(), "2".into());
//! let mut record = TrialRecord::new(Phase::Measure, 3);
//! record.load_average = Some([6.1, 4.0, 2.0]);
//! side.trials.push(record);
//! let busy = busy_host(&side).unwrap();
//! assert_eq!(
//!     busy.to_string(),
//!     "the host was busy: load 6.10 on 2 CPUs at measure trial 3's start; timings may be off"
//! );
//! ```

use crate::metric::Phase;
use crate::result::Side;

/// The busiest trial start of a side whose 1-minute load exceeded its host's cores.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BusyHost {
    /// The 1-minute load average at that trial's start.
    pub load_1m: f64,
    /// The host's cores (the runtime fact `cores`).
    pub cpus: u32,
    /// The trial's phase.
    pub phase: Phase,
    /// The trial's number.
    pub trial: u32,
    /// How many trial starts of the side were above the core count.
    pub busy_trials: usize,
}

impl std::fmt::Display for BusyHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the host was busy: load {:.2} on {} CPU{} at {} trial {}'s start",
            self.load_1m,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            self.phase,
            self.trial
        )?;
        if self.busy_trials > 1 {
            write!(
                f,
                " ({} trial starts above {})",
                self.busy_trials, self.cpus
            )?;
        }
        write!(f, "; timings may be off")
    }
}

/// The busiest trial start of `side` when its 1-minute load average was above the
/// host's core count; `None` when no trial start was, or when the side does not record
/// its cores or any load (an older result: nothing to judge by).
pub fn busy_host(side: &Side) -> Option<BusyHost> {
    let cpus: u32 = side.runtime.get("cores")?.trim().parse().ok()?;
    let loads = side
        .trials
        .iter()
        .filter_map(|record| Some((record, record.load_average?[0])));
    let busy: Vec<_> = loads.filter(|(_, load)| *load > f64::from(cpus)).collect();
    // The first of equally busy starts: the earliest is where a reader looks first.
    let (record, load_1m) = busy
        .iter()
        .copied()
        .reduce(|best, next| if next.1 > best.1 { next } else { best })?;
    Some(BusyHost {
        load_1m,
        cpus,
        phase: record.phase,
        trial: record.trial,
        busy_trials: busy.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TrialRecord;

    fn side(cores: Option<&str>, loads: &[(u32, f64)]) -> Side {
        let mut side = Side::new("abc");
        if let Some(cores) = cores {
            side.runtime.insert("cores".into(), cores.into());
        }
        for &(trial, load) in loads {
            let mut record = TrialRecord::new(Phase::Measure, trial);
            record.load_average = Some([load, 0.0, 0.0]);
            side.trials.push(record);
        }
        side
    }

    #[test]
    fn a_load_above_the_cores_is_busy_and_the_busiest_start_is_named() {
        let busy = busy_host(&side(
            Some("2"),
            &[(0, 1.0), (1, 3.5), (2, 6.1), (3, 2.5), (4, 6.1)],
        ))
        .unwrap();
        assert_eq!(
            (busy.trial, busy.load_1m, busy.cpus, busy.busy_trials),
            (2, 6.1, 2, 4)
        );
        assert_eq!(
            busy.to_string(),
            "the host was busy: load 6.10 on 2 CPUs at measure trial 2's start \
             (4 trial starts above 2); timings may be off"
        );
    }

    #[test]
    fn a_load_at_or_below_the_cores_is_not_busy() {
        assert_eq!(busy_host(&side(Some("2"), &[(0, 2.0), (1, 0.3)])), None);
        assert_eq!(busy_host(&side(Some("4"), &[(0, 3.9)])), None);
    }

    #[test]
    fn without_cores_or_loads_nothing_is_judged() {
        assert_eq!(busy_host(&side(None, &[(0, 50.0)])), None);
        assert_eq!(busy_host(&side(Some("many"), &[(0, 50.0)])), None);
        assert_eq!(busy_host(&side(Some("2"), &[])), None);
    }
}
