//! [`compare`]: every metric of both sides measured, tested, adjusted over the family
//! and judged.

use super::facts::process_counts;
use super::measured::{Measured, SideValues, trial_pairs};
use super::{CompareOptions, Comparison, Interleaving, MissingMetric, SideFacts, failed_samples};
use crate::metric::Metric;
use crate::result::Side;
use crate::significance;
use crate::speed_probe::SpeedShift;
use crate::stats::MetricStats;

/// Compares `candidate` against `base` for every metric either side has samples of.
pub fn compare(base: &Side, candidate: &Side, options: &CompareOptions) -> Comparison {
    let (base, candidate) = crate::duet::shared_cpu_view(base, candidate);
    let (base, candidate) = (base.as_ref(), candidate.as_ref());
    let interleaving = options
        .interleaving
        .unwrap_or_else(|| Interleaving::of(base, candidate));
    // Between separate runs the hosts' speed probes, when both runs recorded them, say
    // how far the machine moved: that is the drift term of timing and CPU, unless
    // `--drift` set it. Memory does not move with a CPU loop's speed.
    let speed_shift = (interleaving != Interleaving::Interleaved)
        .then(|| SpeedShift::between(base, candidate))
        .flatten();
    let mut options = options.clone();
    if let Some(shift) = speed_shift {
        options.drift.timing.get_or_insert(shift.drift_spread());
        options.drift.cpu.get_or_insert(shift.drift_spread());
    }
    let options = &options;
    let mut measured = Vec::new();
    let mut missing = Vec::new();
    for metric in Metric::ALL {
        let base_stats = MetricStats::of(base, metric);
        let candidate_stats = MetricStats::of(candidate, metric);
        match (base_stats, candidate_stats) {
            (None, None) => {}
            (Some(b), Some(c)) if b.n() > 0 && c.n() > 0 => {
                let pairs = (interleaving == Interleaving::Interleaved)
                    .then(|| trial_pairs(base, candidate, metric))
                    .flatten();
                let values = SideValues {
                    base: base.values(metric),
                    candidate: candidate.values(metric),
                    pairs,
                };
                let mut row = Measured::new(metric, b, c, &values, interleaving, options);
                if metric.is_slope() {
                    let interleaved = interleaving == Interleaving::Interleaved;
                    let test = crate::slope_change::test(metric, base, candidate, interleaved);
                    row.test = test.map(|(test, _)| test);
                    row.slope_from_fits = Some(test.is_some_and(|(_, fits)| fits));
                }
                measured.push(row);
            }
            (b, c) => missing.push(MissingMetric {
                metric,
                base: b,
                candidate: c,
            }),
        }
    }
    let p_values: Vec<Option<f64>> = measured
        .iter()
        .map(|m| m.test.map(|test| test.p_value))
        .collect();
    let adjusted = significance::holm(&p_values);
    let levels = significance::holm_levels(&p_values, options.alpha);
    let tested = p_values.iter().flatten().count();
    let metrics = measured
        .into_iter()
        .zip(adjusted.into_iter().zip(levels))
        .map(|(measured, (p_adjusted, level))| {
            measured.judged(p_adjusted, level, tested, interleaving, options)
        })
        .collect();
    Comparison {
        base_sha: base.sha.clone(),
        candidate_sha: candidate.sha.clone(),
        options: options.clone(),
        metrics,
        missing,
        base_error: base.error.clone(),
        candidate_error: candidate.error.clone(),
        base_failures: failed_samples(base),
        candidate_failures: failed_samples(candidate),
        process_counts: process_counts(base, candidate),
        base_facts: SideFacts::of(base),
        candidate_facts: SideFacts::of(candidate),
        interleaving,
        tested,
        base_overrides: None,
        candidate_overrides: None,
        speed_shift,
    }
}
