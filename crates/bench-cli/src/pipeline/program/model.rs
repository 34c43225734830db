//! The trial's model endpoint: with `[model]`, every measure, ui, session and staircase
//! trial starts the scripted endpoint in its phase child, on the run's port and under
//! the run's token (so the `{model_url}` that install wrote into the home's config files
//! is right), and stops it with the trial; its journal goes to
//! `OUT/logs/model-<phase>-<trial>.jsonl` as the trial goes (a long session's journal is
//! written out as it grows, not held in memory), put in place when the trial ends, also
//! when it failed. It serves the
//! agent's uid alone (see docs/model-endpoint.md, "Who may connect").

use crate::pipeline::PhaseContext;
use crate::pipeline::program::TargetError;
use bench_core::io::{AtomicFile, WriteError};
use bench_model::{Endpoint, Journal, Limits, Settings};
use std::path::PathBuf;

/// The uid the trial's agent runs as: the trial user's when dedicated, ours otherwise.
fn agent_uid(ctx: &PhaseContext) -> u32 {
    match &ctx.user {
        Some(user) if user.dedicated => user.identity.uid,
        _ => rustix::process::geteuid().as_raw(),
    }
}

/// A running trial endpoint; its journal is at its path from the start, and written
/// whole when it is finished or dropped.
#[derive(Debug)]
pub(crate) struct TrialModel {
    endpoint: Option<Endpoint>,
    journal_path: PathBuf,
}

impl TrialModel {
    /// Starts the endpoint for `ctx`'s trial, `None` without `[model]`.
    pub(crate) fn start(ctx: &PhaseContext) -> Result<Option<TrialModel>, TargetError> {
        let (Some(model), Some(address)) = (ctx.spec.model.as_ref(), ctx.model.as_ref()) else {
            return Ok(None);
        };
        let Some(script) = model.compiled.clone() else {
            return Ok(None);
        };
        let journal_path = ctx.log_path(&format!("model-{}-{}.jsonl", ctx.phase, ctx.trial))?;
        let journal_error = |source| TargetError::ModelJournal {
            path: journal_path.clone(),
            source,
        };
        let journal_file = AtomicFile::create(&journal_path).map_err(journal_error)?;
        let spill = journal_file.file().map_err(journal_error)?;
        let endpoint = Endpoint::start(Settings {
            port: address.port,
            script,
            limits: Limits::default(),
            path_token: model.token.then(|| address.token.clone()),
            // The agent runs as the trial user (as us without a dedicated one): only its
            // connections are served, so a neighbour who read `{model_url}` from the
            // agent's command line can neither play the turns nor hold the slots.
            peer_uid: Some(agent_uid(ctx)),
        })
        .map_err(|source| TargetError::ModelStart {
            port: address.port,
            source,
        })?;
        // A 1,000-turn session's journal holds about 55,000 chunks: kept whole in memory
        // it was a few MiB of clibench's that grew with every turn, and then as many
        // again as one string when it was written.
        endpoint.journal().spill_to(spill);
        // Renamed into place now, still empty: the spill writes through its own handle of
        // the file, so the journal is at its path as it grows ([`Journal::sync_spill`]),
        // and a run stopped before the trial finished still has it.
        journal_file.commit().map_err(journal_error)?;
        Ok(Some(TrialModel {
            endpoint: Some(endpoint),
            journal_path,
        }))
    }

    /// The journal, shared with the running endpoint.
    pub(crate) fn journal(&self) -> Option<Journal> {
        self.endpoint.as_ref().map(Endpoint::journal)
    }

    /// Puts the endpoint's script back at its first turn (see [`Endpoint::rewind`]).
    pub(crate) fn rewind(&self) {
        if let Some(endpoint) = &self.endpoint {
            endpoint.rewind();
        }
    }

    /// Stops the endpoint and writes its journal.
    pub(crate) fn finish(mut self) -> Result<(), TargetError> {
        self.write()
    }

    fn write(&mut self) -> Result<(), TargetError> {
        let Some(endpoint) = self.endpoint.take() else {
            return Ok(());
        };
        let journal = endpoint.journal();
        endpoint.stop();
        journal
            .finish_spill()
            .map_err(|source| TargetError::ModelJournal {
                path: self.journal_path.clone(),
                source: WriteError {
                    path: self.journal_path.clone(),
                    source,
                },
            })
    }
}

impl Drop for TrialModel {
    fn drop(&mut self) {
        // A trial that failed early still leaves its journal; its error is the news.
        let _ = self.write();
    }
}

/// Finishes an optional trial endpoint.
pub(crate) fn finish(model: Option<TrialModel>) -> Result<(), TargetError> {
    model.map_or(Ok(()), TrialModel::finish)
}
