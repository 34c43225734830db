//! The staircase phase (built by the "demo" helper; this placeholder refuses to run).

use super::PhaseContext;
use bench_core::Side;

/// Runs the staircase phase for `ctx.trial`.
pub fn run(_ctx: &PhaseContext, _side: &mut Side) -> anyhow::Result<()> {
    anyhow::bail!("the staircase phase is not built yet")
}
