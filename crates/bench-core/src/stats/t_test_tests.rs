//! Unit tests of [`super`]: Welch's and the paired test and the detectable change, on made-up trials.

use super::*;
use crate::rng::SplitMix64;

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
