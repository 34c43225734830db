//! The ui phase (built by the "demo" helper; this placeholder refuses to run).

use super::PhaseContext;
use bench_core::Side;

/// Runs the ui phase for `ctx.trial`.
pub fn run(_ctx: &PhaseContext, _side: &mut Side) -> anyhow::Result<()> {
    anyhow::bail!("the ui phase is not built yet")
}
