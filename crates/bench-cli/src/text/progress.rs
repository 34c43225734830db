//! What a person watching a run reads: the line of the step being waited on, a line per
//! finished step (skips of one phase for one reason told once), and what the cleanups
//! removed. The text only; the binary draws it (a spinner, a line above it).

use bench_cli::pipeline::CleanupReport;
use bench_cli::pipeline::{Progress, StepResult};
use bench_core::Phase;

/// The line of the step being waited on: "[3/12] measure trial 1  2.0 s  (total 9.5 s)".
pub fn waiting_line(progress: &Progress) -> String {
    let turns = progress
        .turns
        .map_or(String::new(), |count| format!("  {count}"));
    format!(
        "[{}/{}] {}  {:.1} s  (total {:.1} s){turns}",
        progress.index + 1,
        progress.total,
        progress.label(),
        progress.step_elapsed.as_secs_f64(),
        progress.run_elapsed.as_secs_f64()
    )
}

/// Turns between two progress lines of a session when stderr is no terminal (a log,
/// CI), where the spinner line is not drawn.
pub(crate) const TURNS_PER_LINE: u32 = 10;

/// The line a session's count is told in when stderr is no terminal: one every
/// `TURNS_PER_LINE` turns (`session trial 0: turn 30 of 100, about 3m 10s left`),
/// `None` for a count already told or between two of them.
pub fn turns_line(progress: &Progress, told: &mut Option<(usize, u32)>) -> Option<String> {
    let count = progress.turns?;
    let at = (progress.index, count.done);
    let due = count.done.is_multiple_of(TURNS_PER_LINE) || count.done == count.total;
    if !due || *told == Some(at) {
        return None;
    }
    *told = Some(at);
    Some(format!("{}: {count}", progress.label()))
}

/// The lines of finished steps. Skipped trials of one phase for one reason are told in
/// one line, so it remembers the last skip it told.
#[derive(Debug, Default)]
pub struct StepLines {
    /// The last skip told: (side, phase, reason).
    last_skip: Option<(Option<String>, Phase, String)>,
}

impl StepLines {
    /// The line of a finished step, or `None` for a skip already told.
    pub fn line(&mut self, progress: &Progress, result: &StepResult) -> Option<String> {
        let seconds = progress.step_elapsed.as_secs_f64();
        Some(match result {
            StepResult::Succeeded => format!("{}: ok ({seconds:.1} s)", progress.label()),
            StepResult::Failed { message, .. } => {
                format!("{}: failed ({seconds:.1} s): {message}", progress.label())
            }
            StepResult::Skipped { reason } => {
                let key = (progress.side.clone(), progress.step.phase, reason.clone());
                if self.last_skip.as_ref() == Some(&key) {
                    return None;
                }
                self.last_skip = Some(key);
                let side = progress
                    .side
                    .as_ref()
                    .map(|side| format!("{side}: "))
                    .unwrap_or_default();
                let what = if progress.step.trial == 0 {
                    progress.step.phase.to_string()
                } else {
                    format!("{} from trial {}", progress.step.phase, progress.step.trial)
                };
                format!("{side}{what}: skipped: {reason}")
            }
        })
    }
}

/// What a cleanup removed and kept, for `clibench COMMAND`; `None` when it touched no user.
pub fn cleanup_line(command: &str, report: &CleanupReport) -> Option<String> {
    if report.removed_users.is_empty() && report.kept_users.is_empty() {
        return None;
    }
    Some(format!(
        "clibench {command}: removed {} user(s){}",
        report.removed_users.len(),
        if report.kept_users.is_empty() {
            String::new()
        } else {
            format!("; kept {} (--keep-users)", report.kept_users.join(", "))
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_cli::pipeline::Step;
    use std::time::Duration;

    fn progress(side: Option<&str>, trial: u32) -> Progress {
        Progress {
            index: 2,
            total: 12,
            side: side.map(str::to_owned),
            step: Step {
                phase: Phase::Measure,
                trial,
            },
            step_elapsed: Duration::from_millis(2_000),
            run_elapsed: Duration::from_millis(9_500),
            turns: None,
        }
    }

    #[test]
    fn the_waiting_line_counts_from_one() {
        assert_eq!(
            waiting_line(&progress(None, 1)),
            "[3/12] measure trial 1  2.0 s  (total 9.5 s)"
        );
    }

    #[test]
    fn skips_of_one_phase_for_one_reason_are_told_once() {
        let mut lines = StepLines::default();
        let skipped = StepResult::Skipped {
            reason: "same failure as measure trial 0".to_owned(),
        };
        assert_eq!(
            lines.line(&progress(Some("head"), 1), &skipped).as_deref(),
            Some("head: measure from trial 1: skipped: same failure as measure trial 0")
        );
        assert_eq!(lines.line(&progress(Some("head"), 2), &skipped), None);
        // The other side's skip is news.
        assert!(lines.line(&progress(Some("base"), 2), &skipped).is_some());
    }

    #[test]
    fn a_cleanup_that_touched_no_user_says_nothing() {
        assert_eq!(cleanup_line("run", &CleanupReport::default()), None);
        let report = CleanupReport {
            removed_users: vec!["cb1".to_owned()],
            kept_users: vec!["cb2".to_owned()],
            ..CleanupReport::default()
        };
        assert_eq!(
            cleanup_line("ab", &report).as_deref(),
            Some("clibench ab: removed 1 user(s); kept cb2 (--keep-users)")
        );
    }

    #[test]
    fn a_session_without_a_terminal_tells_its_turns_every_ten() {
        use bench_cli::pipeline::out::turns::TurnCount;
        let mut session = progress(None, 0);
        session.step.phase = Phase::Session;
        let mut told = None;
        let mut lines = Vec::new();
        for done in 1..=25 {
            let count = TurnCount::after(done, 25, Duration::from_secs(2 * u64::from(done)));
            session.turns = Some(count);
            // Asked every 50 ms: a count is told once.
            for _ in 0..3 {
                lines.extend(turns_line(&session, &mut told));
            }
        }
        assert_eq!(
            lines,
            [
                "session trial 0: turn 10 of 25, about 30.0 s left",
                "session trial 0: turn 20 of 25, about 10.0 s left",
                "session trial 0: turn 25 of 25",
            ]
        );
        assert!(waiting_line(&session).ends_with("  turn 25 of 25"));
    }
}
