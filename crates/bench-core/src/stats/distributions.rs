//! Student's t and the standard normal distribution: two-sided tails and quantiles,
//! which the t-tests, Holm's levels, the detectable change and the sequential looks read.

/// P(|T| ≥ |t|) for Student's T with `df` degrees of freedom (any positive real):
/// the regularized incomplete beta function `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn t_two_sided(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The `p` quantile of Student's T with `df` degrees of freedom, for `p` in
/// `(0, 1)`: the `t` with P(T ≤ t) = p, by bisection of [`t_two_sided`] (60
/// halvings of a bracket found by doubling: far below any printed digit).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    // P(T > t) = t_two_sided(t) / 2 for t > 0, falling in t.
    let tail = 1.0 - p;
    let upper_tail = |t: f64| t_two_sided(t, df) / 2.0;
    let mut high = 1.0;
    while upper_tail(high) > tail && high < 1e12 {
        high *= 2.0;
    }
    let mut low = 0.0;
    for _ in 0..60 {
        let middle = (low + high) / 2.0;
        if upper_tail(middle) > tail {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) / 2.0
}

/// The regularized incomplete beta function `I_x(a, b)` for `x` in `[0, 1]` and
/// positive `a`, `b`: its continued fraction (evaluated by Lentz's method), on the
/// side of `x` where it converges fast, the other side by `I_x(a, b) = 1 − I_{1−x}(b, a)`.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (-x).ln_1p()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function,
/// `1 / (1 + d₁ / (1 + d₂ / (1 + ...)))` with `d₂ₘ₊₁ = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1))`
/// and `d₂ₘ = m(b−m)x / ((a+2m−1)(a+2m))`, by the modified Lentz method.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |value: f64| if value.abs() < TINY { TINY } else { value };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..=500 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    fraction
}

/// ln Γ(x) for x > 0, by the Lanczos approximation (g = 7, nine terms; relative
/// error near 1e-15), with the reflection formula below 1/2.
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const TERMS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = TERMS[0];
    for (i, &term) in TERMS.iter().enumerate().skip(1) {
        sum += term / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// P(Z > z) for a standard normal Z.
pub fn normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, from the Chebyshev fit in Numerical Recipes
/// (relative error below 1.2e-7 everywhere): plenty for p-values and power.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let value = t * poly.exp();
    if x >= 0.0 { value } else { 2.0 - value }
}

/// The `p` quantile of the standard normal distribution (Acklam's rational
/// approximation, relative error below 1.2e-9), for `p` in `(0, 1)`.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let low = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < low {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - low {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_tails_match_the_closed_forms_and_tables() {
        // Closed forms of Student's t (e.g. Wikipedia, "Student's t-distribution",
        // special cases): df = 1 is Cauchy, P(|T| > t) = 1 − 2·atan(t)/π; df = 2 has
        // P(|T| > t) = 1 − t / √(2 + t²).
        for t in [0.1, 0.5, 1.0, 2.5, 10.0, 100.0] {
            let cauchy = 1.0 - 2.0 * f64::atan(t) / std::f64::consts::PI;
            assert!((t_two_sided(t, 1.0) - cauchy).abs() < 1e-12, "{t}");
            let two = 1.0 - t / (2.0 + t * t).sqrt();
            assert!((t_two_sided(t, 2.0) - two).abs() < 1e-12, "{t}");
        }
        // R: 2 * pt(-2, 5) = 0.1019395 (also by integrating the density numerically).
        assert!((t_two_sided(2.0, 5.0) - 0.101_939_5).abs() < 1e-7);
        assert!((t_two_sided(-2.0, 5.0) - 0.101_939_5).abs() < 1e-7);
        // Fractional df, as Welch's gives: 2 * pt(-3, 4.5) = 0.0343809.
        assert!((t_two_sided(3.0, 4.5) - 0.034_380_9).abs() < 1e-7);
        assert_eq!(t_two_sided(0.0, 7.0), 1.0);
        // Large df tends to the normal.
        assert!((t_two_sided(1.959_964, 1e7) - 0.05).abs() < 1e-6);
        // Quantiles from the t table (R: qt(0.975, 10), qt(0.975, 4), qt(0.995, 30),
        // qt(0.8, 18)).
        assert!((t_quantile(0.975, 10.0) - 2.228_139).abs() < 1e-6);
        assert!((t_quantile(0.975, 4.0) - 2.776_445).abs() < 1e-6);
        assert!((t_quantile(0.995, 30.0) - 2.749_996).abs() < 1e-6);
        assert!((t_quantile(0.8, 18.0) - 0.862_049).abs() < 1e-6);
        assert!((t_quantile(0.025, 10.0) + 2.228_139).abs() < 1e-6);
        assert_eq!(t_quantile(0.5, 3.0), 0.0);
    }

    #[test]
    fn normal_functions_match_tables() {
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.8) - 0.841_621).abs() < 1e-5);
        assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(-1.0) - 0.841_345).abs() < 1e-6);
    }
}
