//! The statistics' rules, over made-up samples.

use super::*;
use crate::metric::Metric;
use crate::result::Side;

#[test]
fn summary_of_known_samples() {
    let s = Summary::from_values(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
    assert_eq!(s.n, 5);
    assert_eq!(s.min, 1.0);
    assert_eq!(s.max, 100.0);
    assert_eq!(s.median, 3.0);
    assert_eq!(s.mean, 22.0);
    assert_eq!(s.mad, 1.0);
    assert_eq!(s.outliers, vec![4]);
    assert!((s.std_dev - 43.617_656_975).abs() < 1e-6);
    assert!((s.p95 - 80.8).abs() < 1e-9);
}

#[test]
fn metric_stats_count_errors_and_name_outlier_trials() {
    use crate::trial::{Sample, record};
    let mut side = Side::new("a");
    for (trial, value) in [(3, 1.0), (0, 1.1), (1, 0.9), (4, 1.0), (5, 9.0)] {
        record(&mut side, Metric::Cold, trial, Sample::Value(value));
    }
    record(
        &mut side,
        Metric::Cold,
        2,
        Sample::Error("timed out".into()),
    );
    let stats = MetricStats::of(&side, Metric::Cold).unwrap();
    assert_eq!((stats.n(), stats.errored), (5, 1));
    assert_eq!(stats.errored_trials, [2]);
    assert_eq!(stats.median(), Some(1.0));
    assert_eq!(stats.outlier_trials, [5]);
    assert!(MetricStats::of(&side, Metric::Warm).is_none());

    record(
        &mut side,
        Metric::Rss,
        0,
        Sample::Error("no processes".into()),
    );
    let rss = MetricStats::of(&side, Metric::Rss).unwrap();
    assert_eq!((rss.n(), rss.errored, rss.median()), (0, 1, None));
    let all: Vec<Metric> = side_stats(&side).iter().map(|s| s.metric).collect();
    assert_eq!(all, [Metric::Cold, Metric::Rss]);
}

#[test]
fn fewer_than_five_samples_mark_no_outlier() {
    // Of three, the farther sample is 4 MADs away: hyperfine's rule would mark it.
    assert!(
        Summary::from_values(&[10.0, 11.0, 14.0])
            .unwrap()
            .outliers
            .is_empty()
    );
    assert!(
        Summary::from_values(&[1.0, 1.0, 1.0, 9.0])
            .unwrap()
            .outliers
            .is_empty()
    );
    assert_eq!(
        Summary::from_values(&[1.0, 1.0, 1.2, 1.1, 9.0])
            .unwrap()
            .outliers,
        [4]
    );
}

#[test]
fn floating_point_rounding_is_not_an_outlier() {
    // The values `report` once flagged: 0.02 summed three ways.
    let values = [0.02, 0.020000000000000004, 0.019999999999999997, 0.02, 0.02];
    let s = Summary::from_values(&values).unwrap();
    assert_eq!(s.mad, 0.0);
    assert!(s.outliers.is_empty(), "{:?}", s.outliers);
    // A real difference among equal values still is one.
    let s = Summary::from_values(&[0.02, 0.02, 0.02, 0.02, 0.025]).unwrap();
    assert_eq!(s.outliers, [4]);
}

#[test]
fn one_step_of_resolution_is_not_an_outlier() {
    let ticks = [0.02, 0.02, 0.02, 0.02, 0.03];
    assert_eq!(Summary::from_values(&ticks).unwrap().outliers, [4]);
    assert!(
        Summary::with_resolution(&ticks, 0.01)
            .unwrap()
            .outliers
            .is_empty()
    );
    let far = [0.02, 0.02, 0.02, 0.02, 0.20];
    assert_eq!(Summary::with_resolution(&far, 0.01).unwrap().outliers, [4]);
}

#[test]
fn all_zero_samples_have_no_outlier_but_a_nonzero_one_is() {
    assert!(
        Summary::from_values(&[0.0, 0.0, 0.0])
            .unwrap()
            .outliers
            .is_empty()
    );
    assert_eq!(
        Summary::from_values(&[0.0, 0.0, 0.0, 0.0, 5.0])
            .unwrap()
            .outliers,
        [4]
    );
}

#[test]
fn empty_and_non_finite_inputs() {
    assert!(Summary::from_values(&[]).is_none());
    assert!(Summary::from_values(&[f64::NAN]).is_none());
    let one = Summary::from_values(&[f64::NAN, 2.0]).unwrap();
    assert_eq!((one.n, one.std_dev, one.outliers.len()), (1, 0.0, 0));
}
