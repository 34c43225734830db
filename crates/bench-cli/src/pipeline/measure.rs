//! The measure phase (built by the "demo" helper; this placeholder refuses to run).

use super::PhaseContext;
use bench_core::Side;

/// Runs the measure phase for `ctx.trial`.
pub fn run(_ctx: &PhaseContext, _side: &mut Side) -> anyhow::Result<()> {
    anyhow::bail!("the measure phase is not built yet")
}
