//! [`compare`]: every metric of both sides measured, tested, adjusted over the family
//! and judged.

use super::facts::process_counts;
use super::measured::{Measured, SideValues, trial_pairs};
use super::speed_probe::SpeedShift;
use super::{CompareOptions, Comparison, Interleaving, MissingMetric, SideFacts, failed_samples};
use crate::metric::Metric;
use crate::result::Side;
use crate::stats;
use crate::stats::MetricStats;

/// Compares `candidate` against `base` for every metric either side has samples of.
pub fn compare(base: &Side, candidate: &Side, options: &CompareOptions) -> Comparison {
    // What base does alone, before the duet's view keeps only the pairs that shared a CPU.
    let alone = super::duet::alone_base_values(base, candidate);
    let (base, candidate) = super::duet::shared_cpu_view(base, candidate);
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
                row.alone_base = alone
                    .get(&metric)
                    .map(|values| (center(values), values.len()));
                if metric.is_slope() {
                    let interleaved = interleaving == Interleaving::Interleaved;
                    let test =
                        crate::stats::slope_change::test(metric, base, candidate, interleaved);
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
    let families = Families::of(&measured, options);
    let tested = families.tested;
    let gated_tested = families.gated_tested;
    let metrics = measured
        .into_iter()
        .enumerate()
        .map(|(index, measured)| {
            let (p_adjusted, level, family) = families.of_row(index);
            measured.judged(p_adjusted, level, family, interleaving, options)
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
        gated_tested,
        base_overrides: None,
        candidate_overrides: None,
        speed_shift,
    }
}

/// Holm's adjustment of the tested rows: over the gated metrics alone when the options
/// name some ([`CompareOptions::gated`]), and over every tested metric for the rest.
struct Families {
    /// Holm over every tested metric.
    all: Holm,
    /// Holm over the gated metrics alone (`None` for the other rows), when gated.
    gated: Option<Holm>,
    /// Which rows are gated.
    is_gated: Vec<bool>,
    /// How many metrics were tested.
    tested: usize,
    /// How many gated metrics were tested, when gated.
    gated_tested: Option<usize>,
}

impl Families {
    fn of(measured: &[Measured], options: &CompareOptions) -> Families {
        let p_values: Vec<Option<f64>> = measured
            .iter()
            .map(|m| m.test.map(|test| test.p_value))
            .collect();
        let holm = |p: &[Option<f64>]| Holm {
            adjusted: stats::holm(p),
            levels: stats::holm_levels(p, options.alpha),
        };
        let is_gated: Vec<bool> = measured
            .iter()
            .map(|m| {
                options
                    .gated
                    .as_ref()
                    .is_some_and(|set| set.contains(&m.metric))
            })
            .collect();
        let gated = options.gated.as_ref().map(|_| {
            let p: Vec<Option<f64>> = p_values
                .iter()
                .zip(&is_gated)
                .map(|(p, &gated)| p.filter(|_| gated))
                .collect();
            holm(&p)
        });
        let gated_tested = gated
            .as_ref()
            .map(|family| family.adjusted.iter().flatten().count());
        Families {
            tested: p_values.iter().flatten().count(),
            all: holm(&p_values),
            gated,
            is_gated,
            gated_tested,
        }
    }

    /// Row `index`'s adjusted p-value, level and the size of the family it was judged in.
    fn of_row(&self, index: usize) -> (Option<f64>, Option<f64>, usize) {
        match (&self.gated, self.gated_tested) {
            (Some(family), Some(size)) if self.is_gated[index] => {
                (family.adjusted[index], family.levels[index], size)
            }
            _ => (
                self.all.adjusted[index],
                self.all.levels[index],
                self.tested,
            ),
        }
    }
}

/// One Holm family's adjusted p-values and the levels each row was held to, by row.
struct Holm {
    adjusted: Vec<Option<f64>>,
    levels: Vec<Option<f64>>,
}

/// The geometric mean of `values`, as the tests' centres are (the mean when one is not
/// positive).
fn center(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    if values.iter().all(|&value| value > 0.0) {
        (values.iter().map(|value| value.ln()).sum::<f64>() / n).exp()
    } else {
        values.iter().sum::<f64>() / n
    }
}
