//! How a cost moves over a session's turns: an ordinary least-squares line with the
//! slope's standard error, and whether the growth is clearly faster than linear (the
//! quadratic term of a second fit is positive and significant).
//!
//! A slope's interval is `slope ± t × std_error`; the verdicts of `compare` judge the
//! slopes of several trials like any metric, so this error is what one trial's series says.

/// A line fitted to a series, with what tells a leak from noise.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// The least-squares slope, in the series' unit per step of x.
    pub slope: f64,
    /// The slope's standard error; absent with fewer than three points (a line through
    /// two points says nothing of the noise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_error: Option<f64>,
    /// The slope's standard error if the series is a random walk with the slope as its
    /// drift: the spread of the steps between consecutive points. Memory a turn keeps
    /// stays in every later reading, so a session's memory accumulates its noise (a
    /// one-time load or free is a step, not a point off the line), and the residuals
    /// about the line then make `std_error` far too small; absent with fewer than three
    /// points, and in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_std_error: Option<f64>,
    /// The points fitted.
    pub points: u32,
    /// The t statistic of the quadratic term of `y = a + b·x + c·x²`, when there are at
    /// least four points: above [`FASTER_THAN_LINEAR_T`] the series curves upwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curvature_t: Option<f64>,
}

/// The fewest points a slope is shown through as a figure: through two points a line
/// says nothing of the noise (a 3-turn session's `session_growth` read "11.6 MiB/turn ±
/// 0 B"), and through three or four its error is itself a guess.
pub const MIN_SLOPE_POINTS: u32 = 5;

/// The quadratic term's t statistic above which growth is called faster than linear:
/// about a 1-in-700 chance for a straight line's noise (normal errors, one-sided).
pub const FASTER_THAN_LINEAR_T: f64 = 3.0;

impl Fit {
    /// Whether the series grows clearly faster than linearly.
    pub fn faster_than_linear(&self) -> bool {
        self.curvature_t
            .is_some_and(|t| t > FASTER_THAN_LINEAR_T && self.slope > 0.0)
    }
}

/// The least-squares fit of `y` over `x`; `None` with fewer than two distinct `x` or a
/// value that is not finite.
pub fn fit(points: &[(f64, f64)]) -> Option<Fit> {
    if points.len() < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let std_error = (points.len() >= 3).then(|| {
        let residuals: f64 = points
            .iter()
            .map(|p| (p.1 - intercept - slope * p.0).powi(2))
            .sum();
        (residuals / (n - 2.0) / sxx).sqrt()
    });
    Some(Fit {
        slope,
        std_error,
        walk_std_error: walk_std_error(points),
        points: u32::try_from(points.len()).unwrap_or(u32::MAX),
        curvature_t: curvature_t(points, mean_x),
    })
}

/// The standard error of a random walk's drift, estimated from the steps between
/// consecutive points (in `x` order): a step over `dx` has variance `σ²·dx`, the drift's
/// estimate is the whole rise over the whole run, and its variance `σ²` over the run;
/// `None` with fewer than three points (two steps).
fn walk_std_error(points: &[(f64, f64)]) -> Option<f64> {
    let mut ordered = points.to_vec();
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
    let steps: Vec<(f64, f64)> = ordered
        .windows(2)
        .map(|pair| (pair[1].0 - pair[0].0, pair[1].1 - pair[0].1))
        .filter(|&(dx, _)| dx > 0.0)
        .collect();
    if steps.len() < 2 {
        return None;
    }
    let run: f64 = steps.iter().map(|&(dx, _)| dx).sum();
    let drift = steps.iter().map(|&(_, dy)| dy).sum::<f64>() / run;
    let variance = steps
        .iter()
        .map(|&(dx, dy)| (dy - drift * dx).powi(2) / dx)
        .sum::<f64>()
        / (steps.len() as f64 - 1.0);
    Some((variance / run).sqrt())
}

/// The t statistic of `c` in `y = a + b·z + c·z²` with `z = x − mean_x` (centred, so the
/// normal equations stay well conditioned for turns in the thousands); `None` with fewer
/// than four points or a singular design. A perfect quadratic (no residual) gives an
/// infinite t of the sign of `c`.
fn curvature_t(points: &[(f64, f64)], mean_x: f64) -> Option<f64> {
    if points.len() < 4 {
        return None;
    }
    // The normal equations' matrix (sums of z^0..z^4) and right-hand side.
    let mut s = [0.0f64; 5];
    let mut r = [0.0f64; 3];
    for &(x, y) in points {
        let z = x - mean_x;
        let mut power = 1.0;
        for (k, sum) in s.iter_mut().enumerate() {
            *sum += power;
            if k < 3 {
                r[k] += power * y;
            }
            power *= z;
        }
    }
    let m = [[s[0], s[1], s[2]], [s[1], s[2], s[3]], [s[2], s[3], s[4]]];
    let inverse = invert3(m)?;
    let coefficients: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| inverse[i][j] * r[j]).sum())
        .collect();
    let residuals: f64 = points
        .iter()
        .map(|&(x, y)| {
            let z = x - mean_x;
            (y - coefficients[0] - coefficients[1] * z - coefficients[2] * z * z).powi(2)
        })
        .sum();
    let variance = residuals / (points.len() as f64 - 3.0);
    let c = coefficients[2];
    let error = (variance * inverse[2][2]).sqrt();
    if error > 0.0 && error.is_finite() {
        Some(c / error)
    } else if c != 0.0 {
        Some(c.signum() * f64::INFINITY)
    } else {
        Some(0.0)
    }
}

fn invert3(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let cofactor =
        |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let det = m[0][0] * cofactor(1, 2, 1, 2) - m[0][1] * cofactor(1, 2, 0, 2)
        + m[0][2] * cofactor(1, 2, 0, 1);
    // Relative to the matrix's scale: a design of too few distinct x is singular.
    let scale = m.iter().flatten().fold(0.0f64, |a, b| a.max(b.abs()));
    if det.abs() <= f64::EPSILON * scale.powi(3) * 1e3 || !det.is_finite() {
        return None;
    }
    let adjugate = [
        [
            cofactor(1, 2, 1, 2),
            -cofactor(0, 2, 1, 2),
            cofactor(0, 1, 1, 2),
        ],
        [
            -cofactor(1, 2, 0, 2),
            cofactor(0, 2, 0, 2),
            -cofactor(0, 1, 0, 2),
        ],
        [
            cofactor(1, 2, 0, 1),
            -cofactor(0, 2, 0, 1),
            cofactor(0, 1, 0, 1),
        ],
    ];
    Some(adjugate.map(|row| row.map(|value| value / det)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic wobble of ±`size` (no random numbers in tests).
    fn wobble(i: usize, size: f64) -> f64 {
        [0.7, -1.0, 0.2, 0.9, -0.4, -0.6, 1.0, -0.8][i % 8] * size
    }

    #[test]
    fn a_line_is_found_with_an_error_that_covers_it() {
        let points: Vec<(f64, f64)> = (0..50)
            .map(|i| (i as f64, 1000.0 + 64.0 * i as f64 + wobble(i, 20.0)))
            .collect();
        let fit = fit(&points).unwrap();
        let error = fit.std_error.unwrap();
        assert!(error > 0.0 && error < 1.0, "{fit:?}");
        assert!((fit.slope - 64.0).abs() < 3.0 * error, "{fit:?}");
        assert_eq!(fit.points, 50);
        assert!(!fit.faster_than_linear(), "{fit:?}");
    }

    #[test]
    fn a_step_in_a_flat_series_is_a_wide_walk_error_and_a_steady_rise_a_narrow_one() {
        // The demo's session memory in a CI run: flat, one free of 3 MiB half-way. The
        // line's residuals call it a shrinking slope of some 480 KiB a turn, certain at
        // t 5; as a walk, one step of 3 MiB among 8 says the drift is anyone's guess.
        let mib = 1024.0 * 1024.0;
        let stepped: Vec<(f64, f64)> = (0..9)
            .map(|i| (i as f64, if i < 5 { 40.0 * mib } else { 37.0 * mib }))
            .collect();
        let step = fit(&stepped).unwrap();
        let line_t = step.slope / step.std_error.unwrap();
        let walk_t = step.slope / step.walk_std_error.unwrap();
        assert!(line_t < -4.0, "{step:?}");
        assert!(walk_t > -1.5, "{step:?}");
        // A leak of 4 MiB a turn with one reading late (its turn's allocation seen
        // one turn on): still certain as a walk.
        let leaking: Vec<(f64, f64)> = (0..9)
            .map(|i| {
                let late = if i == 4 { -4.0 * mib } else { 0.0 };
                (i as f64, 40.0 * mib + 4.0 * mib * i as f64 + late)
            })
            .collect();
        let leak = fit(&leaking).unwrap();
        assert!(leak.slope / leak.walk_std_error.unwrap() > 5.0, "{leak:?}");
        // Steps over uneven x (checkpoints): the same walk error whatever the spacing
        // of a steady rise.
        let uneven = fit(&[(0.0, 0.0), (1.0, 10.0), (3.0, 30.0), (4.0, 40.0)]).unwrap();
        assert!(uneven.walk_std_error.unwrap() < 1e-9, "{uneven:?}");
        assert_eq!(fit(&[(1.0, 1.0), (2.0, 3.0)]).unwrap().walk_std_error, None);
    }

    #[test]
    fn an_exact_line_has_no_error_and_two_points_no_error_at_all() {
        let exact = fit(&[(1.0, 100.0), (2.0, 200.0), (3.0, 300.0)]).unwrap();
        assert!((exact.slope - 100.0).abs() < 1e-9);
        assert!(exact.std_error.unwrap() < 1e-9);
        let two = fit(&[(1.0, 1.0), (2.0, 3.0)]).unwrap();
        assert_eq!((two.slope, two.std_error), (2.0, None));
        assert_eq!(fit(&[(1.0, 1.0), (1.0, 3.0)]), None);
        assert_eq!(fit(&[(1.0, f64::NAN), (2.0, 3.0)]), None);
    }

    #[test]
    fn growth_that_curves_upwards_is_faster_than_linear() {
        // An O(N) cost per key summed over N turns: y grows with the square of the turn.
        let points: Vec<(f64, f64)> = (1..=100)
            .map(|i| {
                let x = i as f64;
                (x, 0.5 * x * x + wobble(i, 30.0))
            })
            .collect();
        let curved = fit(&points).unwrap();
        assert!(curved.faster_than_linear(), "{curved:?}");
        // The same noise around a line is not.
        let straight: Vec<(f64, f64)> = (1..=100)
            .map(|i| (i as f64, 50.0 * i as f64 + wobble(i, 30.0)))
            .collect();
        let line = fit(&straight).unwrap();
        assert!(!line.faster_than_linear(), "{line:?}");
    }

    #[test]
    fn turns_in_the_thousands_stay_well_conditioned() {
        let points: Vec<(f64, f64)> = (1000..1100)
            .map(|i| (i as f64, 2.0 * (i as f64).powi(2) + wobble(i, 5.0)))
            .collect();
        let fit = fit(&points).unwrap();
        assert!(fit.faster_than_linear(), "{fit:?}");
    }
}
