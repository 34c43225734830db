//! The staircase phase: the marginal memory of one more instance of the spec's instance
//! command, each instance a PTY session brought to ready (bench-proc's staircase engine:
//! a warm-up instance, then instances added one at a time, the family measured after each
//! settles, then all stopped and what was given back measured).
//!
//! An instance's background sessions (the ones its start added to the agent's session
//! list) belong to it: stopping the instance stops them too, so `reclaimed_rss` is the
//! memory really given back.
//!
//! With `[staircase] session = true` each instance (the warm-up too), once ready and
//! settled, completes the script's first turn with a prompt, typed and awaited by
//! [`one_turn`], as the session phase plays each turn, before the engine settles and
//! measures it: the cost of one more agent at work, not of one more idle prompt. The
//! instances share the trial's endpoint, and its script is rewound before each instance
//! starts, so every instance meets the script as the session phase's agent does and its
//! first prompt plays the same turn (a `when` or `repeat` in the script is not needed for
//! that).

use crate::pipeline::PhaseContext;
use crate::pipeline::context::LogFileError;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::model::TrialModel;
use crate::pipeline::program::terminal::{close_quietly, settle_terminal};
use crate::pipeline::program::trial::{Closing, ProgramTrial};
use crate::pipeline::program::turn::{Planned, TurnError, TurnSettings, one_turn, planned};
use crate::spec;
use bench_core::detail::StaircaseInstance;
use bench_core::error_chain;
use bench_core::{Metric, Sample, Side, record};
use bench_model::Journal;
use bench_proc::MemoryRead;
use bench_proc::staircase::{Instances, StaircaseOptions};
use bench_term::Terminal;

/// The staircase phase failed (a failed staircase itself is recorded, not returned).
#[derive(Debug, thiserror::Error)]
pub enum StaircaseError {
    /// The spec has no `[staircase]`.
    #[error("the spec has no [staircase] section")]
    NoSection,
    /// The spec has no `[measure]`, whose ready mode, size and sessions the phase uses.
    #[error("the staircase needs [measure] (the ready mode, size and sessions)")]
    NoMeasure,
    /// `[staircase] session = true` without a model endpoint or a prompted turn.
    #[error("[staircase] session = true needs [model] with a turn that has a prompt")]
    NoSessionTurn,
    /// The program's trial, its family or its model endpoint failed.
    #[error(transparent)]
    Program(#[from] TargetError),
    /// The report could not be kept in `OUT/logs`.
    #[error(transparent)]
    Log(#[from] LogFileError),
}

crate::pipeline::program::context_error_is_the_programs!(StaircaseError);

/// Runs the staircase phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), StaircaseError> {
    let staircase = ctx
        .spec
        .staircase
        .as_ref()
        .ok_or(StaircaseError::NoSection)?;
    let measure = ctx.spec.measure.as_ref().ok_or(StaircaseError::NoMeasure)?;
    let program = ProgramTrial::open(ctx, measure)?;
    let climbed = climb(ctx, side, &program, (staircase, measure));
    // Each instance stopped its own background sessions and kept no start files.
    program.close(Closing::default(), climbed)
}

/// The staircase of the trial's instances, recorded (a failed staircase as its metrics'
/// error), and its report kept in `OUT/logs/staircase-<trial>.json`.
fn climb(
    ctx: &PhaseContext,
    side: &mut Side,
    program: &ProgramTrial<'_>,
    (staircase, measure): (&spec::Staircase, &spec::Measure),
) -> Result<(), StaircaseError> {
    let (selector, exclude_pids) = program.family().selector();
    let options = StaircaseOptions {
        count: usize::try_from(staircase.count).unwrap_or(usize::MAX),
        settle: staircase.settle.0,
        family: selector,
        exclude_pids,
        warmup: true,
    };
    // The instances share the trial's endpoint: one scripted model, as one machine's
    // agents would share one provider.
    let turn = match (program.model(), staircase.session) {
        (_, false) => None,
        (Some(endpoint), true) => {
            let journal = endpoint.journal().ok_or(StaircaseError::NoSessionTurn)?;
            let plan = planned(ctx)
                .into_iter()
                .next()
                .ok_or(StaircaseError::NoSessionTurn)?;
            Some(FirstTurn {
                endpoint,
                journal,
                family: program.family(),
                plan,
                timeout: ctx
                    .spec
                    .session
                    .as_ref()
                    .map_or_else(|| spec::default_turn_timeout().0, |s| s.turn_timeout.0),
            })
        }
        (None, true) => return Err(StaircaseError::NoSessionTurn),
    };
    let kind = match turn {
        Some(_) => StaircaseInstance::Session,
        None => StaircaseInstance::Idle,
    };
    let mut instances = PtySessions {
        ctx,
        staircase,
        measure,
        program,
        created: 0,
        listed: None,
        turn,
    };
    let outcome = bench_proc::staircase::run(&mut instances, &options);
    drop(instances);
    let trial = ctx.trial;
    match outcome {
        Ok(report) => {
            ctx.write_log_json(&format!("staircase-{trial}.json"), &report)?;
            bench_proc::staircase::record_report(side, trial, &report, kind);
        }
        Err(error) => {
            let message = error_chain(&error);
            for metric in [
                Metric::InstanceRss,
                Metric::InstancePss,
                Metric::InstanceUss,
                Metric::ReclaimedRss,
            ] {
                record(side, metric, trial, Sample::Error(message.clone()));
            }
        }
    }
    Ok(())
}

/// Instances of the spec's instance command, each in its own terminal.
struct PtySessions<'a> {
    ctx: &'a PhaseContext,
    staircase: &'a spec::Staircase,
    measure: &'a spec::Measure,
    program: &'a ProgramTrial<'a>,
    created: usize,
    /// The background sessions listed after the last instance started, less those
    /// stopped since: the next instance's "before" without listing again (each listing
    /// is a run of the target's own command, 60 to 150 ms for the demo).
    listed: Option<Vec<String>>,
    /// With `[staircase] session = true`: the turn each instance completes.
    turn: Option<FirstTurn<'a>>,
}

/// The script's first prompted turn, as each session instance plays it.
struct FirstTurn<'a> {
    endpoint: &'a TrialModel,
    journal: Journal,
    family: Family,
    plan: Planned,
    /// `[session] turn_timeout`, or its default.
    timeout: std::time::Duration,
}

/// One running instance: its terminal and the background sessions its start added.
struct PtySession {
    terminal: Terminal,
    sessions_before: Vec<String>,
    sessions: Vec<String>,
}

/// What an instance operation failed with (the engine's `StaircaseError` names the
/// operation and the stage around it).
#[derive(Debug, thiserror::Error)]
enum InstanceError {
    /// Its terminal options, its transcript's folder or its sessions failed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Its terminal could not start.
    #[error("starting instance {index}")]
    Spawn {
        /// Which instance, from 0.
        index: usize,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// It did not become ready, or the screen at ready failed a check.
    #[error(transparent)]
    Ready(bench_term::TermError),
    /// Its terminal failed while it settled at its prompt, before its turn.
    #[error("letting the instance settle before its turn")]
    Settle(#[source] bench_term::TermError),
    /// Its scripted turn failed.
    #[error("the instance's scripted turn")]
    Turn(#[source] TurnError),
    /// It exited after it was ready.
    #[error("the instance exited; its last screen:\n{screen}")]
    Exited {
        /// Its last screen.
        screen: String,
    },
    /// Its terminal did not close cleanly.
    #[error("closing the instance")]
    Close(#[source] bench_term::TermError),
}

impl Instances for PtySessions<'_> {
    type Instance = PtySession;
    type Error = InstanceError;

    fn create(&mut self) -> Result<PtySession, InstanceError> {
        let index = self.created;
        self.created += 1;
        let command = self
            .staircase
            .command
            .as_ref()
            .unwrap_or(&self.measure.command);
        let transcript = self
            .ctx
            .log_path(&format!("staircase-{}-instance-{index}", self.ctx.trial))
            .map_err(TargetError::from)?;
        let options = self.program.spawn_options(
            command,
            self.staircase.cwd.as_ref(),
            &self.staircase.env,
            &transcript,
        )?;
        let sessions_before = match self.listed.take() {
            Some(listed) => listed,
            None => self.program.list_sessions()?,
        };
        if let Some(turn) = &self.turn {
            // A fresh script for a fresh agent: its start-up requests and its first
            // prompt meet the script as the session phase's agent does.
            turn.endpoint.rewind();
        }
        let terminal =
            Terminal::spawn(&options).map_err(|source| InstanceError::Spawn { index, source })?;
        Ok(PtySession {
            terminal,
            sessions_before,
            sessions: Vec::new(),
        })
    }

    fn start(&mut self, instance: &mut PtySession) -> Result<(), InstanceError> {
        instance
            .terminal
            .ready_guarded(
                &self.measure.ready,
                self.measure.ready_timeout.0,
                &self.measure.ready_guard,
            )
            .map_err(InstanceError::Ready)?;
        let now = self.program.list_sessions()?;
        instance.sessions = now
            .iter()
            .filter(|id| !instance.sessions_before.contains(id))
            .cloned()
            .collect();
        self.listed = Some(now);
        if let Some(turn) = &self.turn {
            // As the session phase does: the agent settles at its prompt before the
            // first key, so no key is typed into a half-drawn screen.
            settle_terminal(&mut instance.terminal, turn.family, &self.measure.settle)
                .map_err(InstanceError::Settle)?;
            let settings = TurnSettings {
                timeout: turn.timeout,
                typing_keys: None,
                memory: MemoryRead::Proportional,
                approvals: None,
            };
            one_turn(
                &mut instance.terminal,
                &turn.journal,
                turn.family,
                &turn.plan,
                1,
                settings,
            )
            .map_err(InstanceError::Turn)?;
        }
        Ok(())
    }

    fn verify(&mut self, instance: &mut PtySession) -> Result<(), InstanceError> {
        if instance.terminal.session_processes().is_empty() {
            return Err(InstanceError::Exited {
                screen: instance.terminal.screen_text(),
            });
        }
        Ok(())
    }

    fn stop(&mut self, mut instance: PtySession) -> Result<(), InstanceError> {
        let closed = instance.terminal.close();
        if closed.is_err() {
            close_quietly(&mut instance.terminal);
        }
        if let Some(listed) = self.listed.as_mut() {
            listed.retain(|id| !instance.sessions.contains(id));
        }
        self.program.stop_sessions(&instance.sessions)?;
        closed.map(drop).map_err(InstanceError::Close)
    }
}
