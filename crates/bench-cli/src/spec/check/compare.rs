//! `[compare]`: the noise floors, the watched metrics and the target change.

use super::checker::{Checker, key, keyed};
use crate::spec::model::Compare;

/// `[compare]`: every metric named is known, and every number in its range.
pub(super) fn compare(c: &mut Checker<'_>, compare: &Compare) {
    for (metric, fraction) in &compare.noise {
        let path = key(&["compare", "noise", metric]);
        match metric.parse::<bench_core::Metric>() {
            Err(_) => c.problem(
                path,
                format!(
                    "unknown metric '{metric}' in [compare] noise (`clibench report --explain` lists them)"
                ),
            ),
            Ok(known) if !bench_core::compare::thresholds::is_valid(known, *fraction) => c.problem(
                path,
                format!(
                    "[compare] noise {metric} = {fraction} is not {}",
                    bench_core::compare::thresholds::expected(known)
                ),
            ),
            Ok(_) => {}
        }
    }
    for (index, metric) in compare.watch.iter().flatten().enumerate() {
        if metric.parse::<bench_core::Metric>().is_err() {
            c.problem(
                keyed(&["compare", "watch"], index, &[]),
                format!(
                    "unknown metric '{metric}' in [compare] watch (`clibench report --explain` lists them)"
                ),
            );
        }
    }
    if let Some(target) = compare.target_mde
        && !(target > 0.0 && target < 1.0)
    {
        c.problem(
            key(&["compare", "target_mde"]),
            format!("[compare] target_mde = {target} is outside 0..1 (0.05 means ±5%)"),
        );
    }
}
