//! Unit tests of [`super`]: Welch's and the paired test, Holm's adjustment and the detectable change, on made-up trials.

use super::*;

#[test]
fn pairs_see_through_a_load_both_sides_of_a_pair_shared() {
    // The machine's load multiplies both trials of a pair by up to 1.6; head is 5%
    // slower within every pair, give or take 1%.
    let load = [1.0, 1.3, 0.9, 1.6, 1.1, 1.0, 1.4, 0.95, 1.2, 1.05];
    let base: Vec<f64> = load.iter().map(|l| 0.2 * l).collect();
    let head: Vec<f64> = load
        .iter()
        .enumerate()
        .map(|(i, l)| 0.2 * l * (1.05 + 0.01 * ((i % 3) as f64 - 1.0)))
        .collect();
    let unpaired = welch(&base, &head).unwrap();
    let pairs = paired(&base, &head).unwrap();
    assert!(unpaired.p_value > 0.3, "{unpaired:?}");
    assert!(pairs.p_value < 1e-6, "{pairs:?}");
    assert_eq!(pairs.df, 9.0);
    assert!((pairs.difference - 1.05f64.ln()).abs() < 0.005, "{pairs:?}");
    // It could detect under 3%, where Welch's test sees only changes over 25%.
    assert!(pairs.detectable_change(0.05) < 0.03, "{pairs:?}");
    assert!(unpaired.detectable_change(0.05) > 0.25, "{unpaired:?}");
    // Sides of different lengths are no pairs.
    assert!(paired(&base, &head[1..]).is_none());
}
use crate::rng::SplitMix64;

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
fn welch_matches_the_formulas() {
    // x = 1..5, y = 2, 4, .., 10 with values not all positive-tested: R's
    // t.test(y, x) on the raw values gives t = 1.8974, df = 5.8824, p = 0.1075.
    // On the logs (every value positive, so that is what `welch` does) y is x
    // shifted by ln 2 with the same variance: df = 8 exactly, t = ln 2 / √(2 s²/5)
    // with s² the variance of ln(1..5), t = 1.72454, p = 0.122896 (the density
    // integrated numerically).
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    let y = [2.0, 4.0, 6.0, 8.0, 10.0];
    let test = welch(&x, &y).unwrap();
    assert!(test.log_scale);
    assert!((test.difference - std::f64::consts::LN_2).abs() < 1e-12);
    assert!((test.df - 8.0).abs() < 1e-9, "{test:?}");
    assert!((test.difference / test.standard_error - 1.724_541).abs() < 1e-6);
    assert!((test.p_value - 0.122_896).abs() < 1e-6, "{test:?}");
    // A zero among the values: the raw scale.
    let x0 = [0.0, 2.0, 3.0, 4.0, 6.0];
    let raw = welch(&x0, &y).unwrap();
    assert!(!raw.log_scale);
    // R: t.test(c(2,4,6,8,10), c(0,2,3,4,6)): mean difference 3, variances 10 and
    // 5, se = √3, df = 9 / (4/4 + 1/4) = 7.2.
    assert!((raw.difference - 3.0).abs() < 1e-12);
    assert!((raw.standard_error - 3f64.sqrt()).abs() < 1e-12);
    assert!((raw.df - 7.2).abs() < 1e-9, "{raw:?}");
    // Symmetric in the sides, but for the sign.
    let swapped = welch(&y, &x).unwrap();
    assert!((swapped.p_value - test.p_value).abs() < 1e-12);
    assert!((swapped.difference + test.difference).abs() < 1e-12);
}

#[test]
fn welch_handles_no_spread_and_too_few_values() {
    assert_eq!(welch(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap().p_value, 1.0);
    assert_eq!(welch(&[2.0, 2.0], &[3.0, 3.0]).unwrap().p_value, 0.0);
    assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
    assert_eq!(welch(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    // One side without spread still has a finite df.
    let one = welch(&[1.0, 1.0, 1.0], &[1.1, 1.2, 1.3]).unwrap();
    assert!((one.df - 2.0).abs() < 1e-9, "{one:?}");
    assert!(one.p_value > 0.01 && one.p_value < 0.1, "{one:?}");
}

#[test]
fn five_trials_a_side_can_show_a_doubling_through_holm() {
    // The regression of the last rule: 5 against 5 could give p = 0.008 at best,
    // never below 0.05 / 9. A doubling of a 10%-noisy time is far below it now.
    let base = [1.00, 1.12, 0.93, 1.05, 0.97];
    let doubled: Vec<f64> = [1.04, 0.95, 1.10, 0.99, 1.02]
        .iter()
        .map(|v| 2.0 * v)
        .collect();
    let p = welch(&base, &doubled).unwrap().p_value;
    assert!(p < 1e-6, "{p}");
    assert!(holm(&[Some(p); 25])[0].unwrap() < 0.05);
}

#[test]
fn holm_adjusts_step_down_and_keeps_untested_slots() {
    let adjusted = holm(&[Some(0.01), None, Some(0.04), Some(0.03)]);
    // Sorted: 0.01 * 3, max(0.03 * 2, 0.03), max(0.04 * 1, 0.06).
    assert_eq!(adjusted[1], None);
    assert!((adjusted[0].unwrap() - 0.03).abs() < 1e-12);
    assert!((adjusted[3].unwrap() - 0.06).abs() < 1e-12);
    assert!((adjusted[2].unwrap() - 0.06).abs() < 1e-12);
    assert_eq!(holm(&[Some(0.9), Some(0.8)]), [Some(1.0), Some(1.0)]);
}

#[test]
fn holm_levels_reject_exactly_what_the_adjusted_p_values_reject() {
    let p_values = [Some(0.01), None, Some(0.04), Some(0.03), Some(0.002)];
    let levels = holm_levels(&p_values, 0.05);
    // Sorted 0.002, 0.01, 0.03, 0.04 of 4: steps 0.0125, 0.0167, 0.025 (stops), then
    // the stopping step's level for the rest.
    assert_eq!(levels[1], None);
    assert!((levels[4].unwrap() - 0.05 / 4.0).abs() < 1e-15);
    assert!((levels[0].unwrap() - 0.05 / 3.0).abs() < 1e-15);
    assert!((levels[3].unwrap() - 0.05 / 2.0).abs() < 1e-15);
    assert!((levels[2].unwrap() - 0.05 / 2.0).abs() < 1e-15);
    let mut rng = crate::rng::SplitMix64::new(31);
    for _ in 0..2000 {
        let p_values: Vec<Option<f64>> = (0..6)
            .map(|_| {
                let u = rng.next_f64();
                (u > 0.1).then_some(u.powi(4))
            })
            .collect();
        let levels = holm_levels(&p_values, 0.05);
        for ((p, adjusted), level) in p_values.iter().zip(holm(&p_values)).zip(levels) {
            let (Some(p), Some(adjusted), Some(level)) = (p, adjusted, level) else {
                assert!(p.is_none() && adjusted.is_none() && level.is_none());
                continue;
            };
            assert_eq!(*p <= level, adjusted <= 0.05, "{p_values:?}");
        }
    }
}

#[test]
fn the_interval_excludes_no_change_exactly_when_the_test_rejects() {
    let base = [1.00, 1.12, 0.93, 1.05, 0.97, 1.02];
    for scale in [0.9, 0.97, 1.0, 1.04, 1.08, 1.15, 1.3] {
        let candidate: Vec<f64> = base.iter().rev().map(|v| v * scale).collect();
        for test in [
            welch(&base, &candidate).unwrap(),
            paired(&base, &candidate).unwrap(),
            welch_between_runs(&base, &candidate, 0.05).unwrap(),
        ] {
            for level in [0.05, 0.01, 0.05 / 7.0] {
                let (low, high) = test.interval(level);
                assert!(low <= test.estimate() && test.estimate() <= high);
                assert_eq!(
                    low > 1.0 || high < 1.0,
                    test.p_value < level,
                    "{scale} {level} {test:?}"
                );
            }
        }
    }
    // Raw values (a count with zeros) give an interval of the change of the mean.
    let test = welch(&[0.0, 2.0, 1.0], &[2.0, 4.0, 3.0]).unwrap();
    assert!(!test.log_scale);
    assert_eq!(test.estimate(), 3.0);
    let (low, high) = test.interval(0.05);
    assert!(low < 3.0 && high > 3.0);
}

#[test]
fn normal_functions_match_tables() {
    assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    assert!((normal_quantile(0.8) - 0.841_621).abs() < 1e-5);
    assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
    assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    assert!((normal_upper_tail(-1.0) - 0.841_345).abs() < 1e-6);
}

#[test]
fn the_detectable_change_follows_the_t_quantiles() {
    // Ten a side with log standard deviation 0.03: se = 0.03 √(2/10), df = 18,
    // (qt(0.975, 18) + qt(0.8, 18)) · se = (2.100922 + 0.862049) · 0.013416 = 3.975%
    // on the log scale, e^0.03975 − 1 = 4.06%.
    let spread = |n: usize| -> Vec<f64> {
        // Values whose logs have mean 0 and standard deviation exactly 0.03.
        let half = n / 2;
        let step = 0.03 * ((n - 1) as f64 / n as f64).sqrt();
        (0..n)
            .map(|i| if i < half { (-step).exp() } else { step.exp() })
            .collect()
    };
    let ten = welch(&spread(10), &spread(10)).unwrap();
    assert!((ten.df - 18.0).abs() < 1e-9, "{ten:?}");
    let detect = ten.detectable_change(0.05);
    assert!((detect - 0.0406).abs() < 0.0003, "{detect}");
    let thirty = welch(&spread(30), &spread(30))
        .unwrap()
        .detectable_change(0.05);
    assert!(thirty < detect * 0.6, "{thirty} {detect}");
    // A stricter level needs a larger change; three a side much more.
    assert!(ten.detectable_change(0.002) > detect);
    let three = welch(&spread(4)[..3], &spread(4)[1..]).unwrap();
    assert!(three.detectable_change(0.05) > 2.0 * detect);
}

#[test]
fn the_trials_a_target_needs_follow_the_spread() {
    // Ten pairs whose log ratios have standard deviation about 0.1, as a demo cold
    // start on a noisy 2-core VM.
    let base = vec![1.0; 10];
    let candidate: Vec<f64> = [0.1, -0.1, 0.12, -0.08, 0.0, 0.15, -0.12, 0.05, -0.05, -0.07]
        .iter()
        .map(|log: &f64| log.exp())
        .collect();
    let test = paired(&base, &candidate).unwrap();
    let alpha = 0.05 / 6.0;
    let now = test.detectable_change(alpha);
    // What this run could detect, it needs the trials it has.
    assert_eq!(test.trials_for(now * (1.0 + 1e-9), alpha, 101), Some(10));
    assert_eq!(
        test.trials_for(now * 2.0, alpha, 101).map(|n| n < 10),
        Some(true)
    );
    // Half the change needs about four times the pairs (fewer, as the t quantiles
    // shrink with the degrees of freedom); a tenth of it more than a run holds.
    let half = test.trials_for(now / 2.0, alpha, 101).unwrap();
    assert!((25..=40).contains(&half), "{half}");
    assert_eq!(test.trials_for(now / 10.0, alpha, 101), None);
    // Between separate runs the drift does not shrink: below it, no count will do.
    let separate = welch_between_runs(&base, &candidate, 0.05).unwrap();
    assert!(separate.trials_for(0.3, alpha, 101).is_some());
    assert_eq!(separate.trials_for(0.05, alpha, 101), None);
}

/// A/A: both sides drawn from one skewed, outlier-prone distribution (an
/// exponential tail on a base, like a start-up time). The test holds its level:
/// neither liberal (false alarms) nor far too conservative (blind).
#[test]
fn the_test_holds_its_level_on_a_a_data() {
    let mut rng = SplitMix64::new(11);
    let mut draw = || {
        let u = rng.next_f64();
        1.0 - 0.05 * (1.0 - u).ln()
    };
    for n in [3, 5, 10] {
        let repetitions = 2000;
        let mut rejected = 0;
        for _ in 0..repetitions {
            let a: Vec<f64> = (0..n).map(|_| draw()).collect();
            let b: Vec<f64> = (0..n).map(|_| draw()).collect();
            if welch(&a, &b).unwrap().p_value <= 0.05 {
                rejected += 1;
            }
        }
        // Nominal 100 of 2000; the binomial standard deviation is ~10. Welch's
        // test is conservative on skewed data with very few values (3 a side:
        // ~2% instead of 5%), which costs power, not false alarms.
        assert!(rejected <= 125, "n = {n}: {rejected} of {repetitions}");
        let least = if n == 3 { 25 } else { 60 };
        assert!(
            rejected >= least,
            "n = {n}: {rejected}: far too conservative"
        );
    }
}
