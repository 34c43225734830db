//! One trial of the measured program, from set-up to close, written once for every phase
//! that starts it (measure and its tight pair, runtime, ui, session, staircase).
//!
//! [`ProgramTrial::open`] finds the trial user and the family its memory is read from,
//! stops what is left of the user from before, and starts the trial's model endpoint (with
//! `[model]`); the phase then spawns the program ([`ProgramTrial::spawn_options`],
//! [`in_terminal`]) and measures it; [`ProgramTrial::close`] keeps the start files, stops the agent's
//! background sessions, stops the user and finishes the model journal, in that order,
//! whatever the phase's outcome, and returns the first error.

use crate::pipeline::PhaseContext;
use crate::pipeline::isolation::command;
use crate::pipeline::out::state::TrialUser;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::pipeline::program::model::{self, TrialModel};
use crate::pipeline::program::recording::Recording;
use crate::pipeline::program::recording::keep_start_files;
use crate::pipeline::program::{sessions, terminal};
use crate::spec::{self, Template};
use bench_core::Side;
use bench_term::{SpawnOptions, Terminal};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The measured program's trial: its user, its family, its model endpoint and, for a
/// program in a terminal, `[measure]` (the terminal's size, quit keys and environment,
/// and the agent's session commands). Opened once per trial and closed once.
#[derive(Debug)]
pub(crate) struct ProgramTrial<'a> {
    ctx: &'a PhaseContext,
    user: &'a TrialUser,
    family: Family,
    /// `None` for the runtime phase's kernel, which has no terminal and no sessions.
    measure: Option<&'a spec::Measure>,
    model: Option<TrialModel>,
}

/// What [`ProgramTrial::close`] does besides stopping the user and finishing the journal.
#[derive(Debug, Default)]
pub(crate) struct Closing<'s> {
    /// The starts (`cold`, `ui`, ...) whose screen at ready and terminal recording are
    /// kept under `OUT/logs` and `OUT/transcripts` (see [`keep_start_files`]).
    pub(crate) keep: &'s [&'s str],
    /// Whether the agent's background sessions are stopped through its own commands
    /// before its user is stopped (ui, session). The measure phase stops them between its
    /// starts instead, and the staircase with each instance.
    pub(crate) stop_agents: bool,
}

impl<'a> ProgramTrial<'a> {
    /// Opens the trial of the program `[measure]` starts in a terminal: the trial user,
    /// its family (a child subreaper without a dedicated user), nothing of the user left
    /// running, and the trial's model endpoint when the spec has `[model]`.
    pub(crate) fn open(
        ctx: &'a PhaseContext,
        measure: &'a spec::Measure,
    ) -> Result<Self, TargetError> {
        ProgramTrial::set_up(ctx, Some(measure))
    }

    /// Opens the trial of the runtime phase's kernel: the trial user, its family (a child
    /// subreaper without a dedicated user) and nothing of the user left running; no
    /// terminal, sessions or model endpoint (a kernel talks to none).
    pub(crate) fn open_kernel(ctx: &'a PhaseContext) -> Result<Self, TargetError> {
        ProgramTrial::set_up(ctx, None)
    }

    fn set_up(
        ctx: &'a PhaseContext,
        measure: Option<&'a spec::Measure>,
    ) -> Result<Self, TargetError> {
        let user = ctx.user()?;
        let family = Family::of(user)?;
        command::stop_user(user).map_err(|source| TargetError::StopLeftovers {
            phase: ctx.phase,
            source,
        })?;
        // Started after the leftovers were stopped, so nothing of an earlier trial talks
        // to this trial's endpoint.
        let model = match measure {
            Some(_) => TrialModel::start(ctx)?,
            None => None,
        };
        Ok(ProgramTrial {
            ctx,
            user,
            family,
            measure,
            model,
        })
    }

    /// The trial user the program runs as.
    pub(crate) fn user(&self) -> &'a TrialUser {
        self.user
    }

    /// Where the program's processes are found.
    pub(crate) fn family(&self) -> Family {
        self.family
    }

    /// The trial's model endpoint, with `[model]`.
    pub(crate) fn model(&self) -> Option<&TrialModel> {
        self.model.as_ref()
    }

    /// The terminal options of one of the program's commands (see
    /// [`terminal::spawn_options`]): `command` in `cwd` with `env` besides `[measure]`'s,
    /// its transcript in `transcript`.
    pub(crate) fn spawn_options(
        &self,
        command: &[Template],
        cwd: Option<&Template>,
        env: &BTreeMap<String, Template>,
        transcript: &Path,
    ) -> Result<SpawnOptions, TargetError> {
        let measure = self.measure.ok_or(TargetError::NoTerminal)?;
        terminal::spawn_options(self.ctx, command, cwd, env, measure, transcript)
    }

    /// The ids of the agent's background sessions now (none without a list command).
    pub(crate) fn list_sessions(&self) -> Result<Vec<String>, TargetError> {
        match self.measure {
            Some(measure) => sessions::list_sessions(self.ctx, measure, self.user),
            None => Ok(Vec::new()),
        }
    }

    /// Stops the given background sessions (see [`sessions::stop_sessions`]).
    pub(crate) fn stop_sessions(&self, ids: &[String]) -> Result<(), TargetError> {
        match self.measure {
            Some(measure) => sessions::stop_sessions(self.ctx, measure, self.user, ids),
            None => Ok(()),
        }
    }

    /// Stops every background session the agent lists (see [`sessions::stop_agents`]).
    pub(crate) fn stop_agents(&self) -> Result<(), TargetError> {
        match self.measure {
            Some(measure) => sessions::stop_agents(self.ctx, measure, self.user),
            None => Ok(()),
        }
    }

    /// Ends the trial after the phase's `outcome`: keeps the start files `closing` names,
    /// stops the agent's background sessions (when `closing` asks), stops every process
    /// of the user and finishes the model journal. Each step runs whatever the ones
    /// before did; the first error wins, the phase's own first: a later one does not
    /// mask it.
    pub(crate) fn close<T, E: From<TargetError>>(
        self,
        closing: Closing<'_>,
        outcome: Result<T, E>,
    ) -> Result<T, E> {
        // The order: the agent's sessions are ended through its own commands while it
        // can still reach its model (a stop command or a session on its way out may send
        // a last request); then the user's processes are stopped, with the endpoint
        // still serving, so a request sent until the last process ended is answered and
        // journaled rather than refused; only then is the endpoint stopped and its
        // journal finished, whole. The start files come first: they are the terminal's,
        // closed before `close` is called, and do not depend on the rest.
        let kept = keep_start_files(self.ctx, closing.keep);
        let agents = if closing.stop_agents {
            self.stop_agents()
        } else {
            Ok(())
        };
        let stopped = command::stop_user(self.user).map_err(|source| TargetError::Stop {
            phase: self.ctx.phase,
            source,
        });
        let journaled = model::finish(self.model);
        let closed = kept.and(agents).and(stopped).and(journaled);
        let value = outcome?;
        closed?;
        Ok(value)
    }
}

/// Runs `measure` on the program started in a terminal by `options`, `what` (`ui`,
/// `session`) naming it in errors: the terminal closed after it, quietly when `measure`
/// failed (its error is the news), and `recording` finished with the moment `measure` saw
/// the program ready, if it did.
pub(crate) fn in_terminal<E: From<TargetError>>(
    side: &mut Side,
    options: &SpawnOptions,
    (what, recording): (&'static str, Recording),
    measure: impl FnOnce(&mut Side, &mut Terminal, &Recording, &mut Option<Duration>) -> Result<(), E>,
) -> Result<(), E> {
    let mut ready_after = None;
    let outcome = match Terminal::spawn(options) {
        Ok(mut terminal) => match measure(side, &mut terminal, &recording, &mut ready_after) {
            Ok(()) => terminal
                .close()
                .map(drop)
                .map_err(|source| E::from(TargetError::CloseTerminal { what, source })),
            Err(error) => {
                terminal::close_quietly(&mut terminal);
                Err(error)
            }
        },
        Err(source) => Err(TargetError::Spawn { what, source }.into()),
    };
    recording.finish(side, ready_after);
    outcome
}
