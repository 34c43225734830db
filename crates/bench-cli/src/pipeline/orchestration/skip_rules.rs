//! Which steps of a plan a run skips after a trial 0 failed, and the one line of a failure
//! that a skip reason and a summary repeat.

use crate::pipeline::orchestration::plan::Step;
use bench_core::Phase;

/// Which steps of one plan are skipped, from the failures of its trials 0.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkipRules {
    /// Prepare or install trial 0 failed: nothing later can run.
    blocked: Option<Step>,
    /// Phases whose trial 0 failed, with the first line of that failure.
    failed_first: Vec<(Phase, String)>,
}

/// The first line of an error, without a last clause that only introduces the lines after
/// it ("timed out ...; last screen:").
pub fn headline(error: &str) -> &str {
    let mut lines = error.lines();
    let first = lines.next().unwrap_or_default();
    if lines.next().is_some()
        && first.ends_with(':')
        && let Some((head, _)) = first.rsplit_once("; ")
    {
        return head;
    }
    first
}

/// How much of trial 0's failure a skip reason repeats.
const REASON_FAILURE_CHARS: usize = 200;

impl SkipRules {
    pub(crate) fn first_trial_failed(&mut self, step: Step, failure: &str) {
        if matches!(step.phase, Phase::Prepare | Phase::Install) && self.blocked.is_none() {
            self.blocked = Some(step);
        }
        let first_line = headline(failure);
        self.failed_first.push((
            step.phase,
            crate::pipeline::isolation::command::clip(first_line, REASON_FAILURE_CHARS),
        ));
    }

    /// Whether measure trial 0 failed waiting for ready: its cold start timed out.
    fn measure_never_ready(&self) -> bool {
        self.failed_first.iter().any(|(phase, failure)| {
            *phase == Phase::Measure
                && failure.split_once(": ").is_some_and(|(metrics, error)| {
                    metrics.split(", ").any(|metric| metric == "cold")
                        && error.starts_with("timed out after ")
                })
        })
    }

    /// Whether `step` is skipped: the step whose failure causes it, and the reason.
    pub(crate) fn reason(&self, step: Step, keep_going: bool) -> Option<(Step, String)> {
        if let Some(blocked) = self.blocked
            && step.phase != blocked.phase
        {
            return Some((blocked, format!("{} failed", blocked.label())));
        }
        if keep_going {
            return None;
        }
        // The staircase starts the target as measure does: a measure that never became
        // ready would make it wait for the same thing. So do ui and session, with the same
        // ready keys: after measure timed out waiting for ready, each of their trials
        // would wait the whole ready_timeout again for nothing.
        let same_as = match step.phase {
            Phase::Staircase => Phase::Measure,
            Phase::Ui | Phase::Session if self.measure_never_ready() => Phase::Measure,
            phase if step.trial > 0 => phase,
            _ => return None,
        };
        let (phase, failure) = self
            .failed_first
            .iter()
            .find(|(phase, _)| *phase == same_as)?;
        let cause = Step {
            phase: *phase,
            trial: 0,
        };
        Some((
            cause,
            format!("same failure as {}: {failure}", cause.label()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(phase: Phase, trial: u32) -> Step {
        Step { phase, trial }
    }

    #[test]
    fn a_failed_install_0_skips_every_later_phase_whatever_keep_going_says() {
        let mut rules = SkipRules::default();
        rules.first_trial_failed(step(Phase::Install, 0), "install: exit status: 7");
        for keep_going in [false, true] {
            for later in [step(Phase::Measure, 0), step(Phase::Staircase, 0)] {
                assert_eq!(
                    rules.reason(later, keep_going),
                    Some((step(Phase::Install, 0), "install trial 0 failed".to_owned()))
                );
            }
        }
        // The other installs are the same phase: skipped as the same failure, unless asked.
        assert_eq!(
            rules.reason(step(Phase::Install, 1), false).unwrap().1,
            "same failure as install trial 0: install: exit status: 7"
        );
        assert_eq!(rules.reason(step(Phase::Install, 1), true), None);
    }

    #[test]
    fn a_failed_trial_0_skips_its_later_trials_and_after_measure_the_staircase() {
        let mut rules = SkipRules::default();
        rules.first_trial_failed(
            step(Phase::Measure, 0),
            "cold: timed out after 60 s waiting for the probe echo; last screen:\n> Trust this folder?",
        );
        let (cause, reason) = rules.reason(step(Phase::Measure, 2), false).unwrap();
        assert_eq!(cause, step(Phase::Measure, 0));
        assert_eq!(
            reason,
            "same failure as measure trial 0: cold: timed out after 60 s waiting for the probe echo"
        );
        assert!(rules.reason(step(Phase::Staircase, 0), false).is_some());
        // Other phases do not start the same way; --keep-going runs everything.
        assert_eq!(rules.reason(step(Phase::Runtime, 1), false), None);
        assert_eq!(rules.reason(step(Phase::Measure, 2), true), None);
        assert_eq!(rules.reason(step(Phase::Staircase, 0), true), None);
    }

    #[test]
    fn a_measure_that_timed_out_at_ready_skips_ui_and_session_with_its_cause() {
        let mut rules = SkipRules::default();
        rules.first_trial_failed(
            step(Phase::Measure, 0),
            "cold, cold_cpu: timed out after 60.0 s waiting for the screen to match the ready \
             pattern \"^> $\" (^ and $ match at each line's start and end); last screen:\n>>> ",
        );
        for phase in [Phase::Ui, Phase::Session] {
            for trial in [0, 3] {
                let (cause, reason) = rules.reason(step(phase, trial), false).unwrap();
                assert_eq!(cause, step(Phase::Measure, 0));
                assert!(reason.contains("ready pattern \"^> $\""), "{reason}");
            }
        }
        // A measure that became ready and failed later says nothing about ui's start.
        let mut rules = SkipRules::default();
        rules.first_trial_failed(step(Phase::Measure, 0), "rss: no processes");
        assert_eq!(rules.reason(step(Phase::Ui, 0), false), None);
        let mut rules = SkipRules::default();
        rules.first_trial_failed(
            step(Phase::Measure, 0),
            "cold: `node` exited (exit status: 1) 0.1 s after it looked ready",
        );
        assert_eq!(rules.reason(step(Phase::Session, 0), false), None);
    }

    #[test]
    fn a_headline_is_the_first_line_without_a_clause_introducing_the_rest() {
        assert_eq!(headline("a: b; last screen:\nscreen"), "a: b");
        assert_eq!(
            headline("install: exit status: 7"),
            "install: exit status: 7"
        );
        assert_eq!(headline("ends with a colon:"), "ends with a colon:");
        assert_eq!(headline(""), "");
    }
}
