//! The runtime phase (built by the "demo" helper; this placeholder refuses to run).

use super::PhaseContext;
use bench_core::Side;

/// Runs the runtime phase for `ctx.trial`.
pub fn run(_ctx: &PhaseContext, _side: &mut Side) -> anyhow::Result<()> {
    anyhow::bail!("the runtime phase is not built yet")
}
