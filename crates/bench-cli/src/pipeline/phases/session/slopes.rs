//! The session's costs over its turns, as metrics: the slopes (`session_growth`,
//! `lag_growth`, `render_growth`) fitted after the warm-up, the last checkpoint's values
//! (`key_echo`, `key_bytes`) and the terminal's share (`stream_bytes`, `idle_output`).
//! Each slope's fit (with its standard error and curvature) stays in the session's record.

use bench_core::detail::{SessionCheckpoint, SessionRun};
use bench_core::stats::{Fit, MIN_SLOPE_POINTS, fit};
use bench_core::{Metric, Sample, Side, record};

/// Slopes per turn are shown per 100 turns: a latency that grows by 2 ms per 100 turns
/// reads better than 0.00002 s per turn, and it is the scale of the sessions users report.
const PER_HUNDRED: f64 = 100.0;

/// The fits of `run`'s series after its warm-up, stored in `run`.
pub(crate) fn fit_series(run: &mut SessionRun) {
    let warmup = run.warmup_turns;
    // PSS when every turn that read it has it, else RSS: one series, never a mix.
    let memory: Vec<(f64, f64)> = run
        .memory_points(run.has_pss())
        .into_iter()
        .filter(|&(turn, _)| turn > warmup)
        .map(|(turn, bytes)| (f64::from(turn), bytes as f64))
        .collect();
    run.growth = fit(&memory);
    run.growth_bytes_per_turn = run.growth.map(|f| f.slope);
    let checkpoints: Vec<&SessionCheckpoint> =
        run.checkpoints.iter().filter(|c| c.turn > warmup).collect();
    let lag: Vec<(f64, f64)> = checkpoints
        .iter()
        .filter_map(|c| Some((f64::from(c.turn), c.key_echo_median()?)))
        .collect();
    run.lag = fit(&lag);
    let render: Vec<(f64, f64)> = checkpoints
        .iter()
        .map(|c| (f64::from(c.turn), c.bytes_per_key))
        .collect();
    run.render = fit(&render);
}

/// Records the metrics of `run`'s fits, last checkpoint and terminal counts; a metric
/// without a value gets `failure` (what ended the session early), else what was missing.
pub(crate) fn record_metrics(side: &mut Side, trial: u32, run: &SessionRun, failure: Option<&str>) {
    let why = |missing: &str| failure.unwrap_or(missing).to_owned();
    let growth = |fit: Option<Fit>, scale: f64, missing: &str| match fit {
        // Growth is what a leak adds: a series that falls grew by nothing, and metrics are
        // non-negative for the verdicts' log-scale test. The signed fit stays in the record.
        Some(fit) => Sample::Value((fit.slope * scale).max(0.0)),
        None => Sample::Error(why(missing)),
    };
    // A slope is a metric only through enough points to say something of the noise: the
    // demo's three turns gave `session_growth` through two (28 KiB/turn, "± 0 B") and a
    // checkpoint after each turn gave `lag_growth` 9.0, 20.8 and 15.3 ms/100 turns in
    // three trials of one build. A short session asks for none (the phase's facts say so),
    // so none is missing unless the session failed; its fits stay in its record.
    let enough = |points: usize| points >= MIN_SLOPE_POINTS as usize || failure.is_some();
    let after_warmup = |turn: u32| turn > run.warmup_turns;
    let memory_points = run
        .memory_points(run.has_pss())
        .into_iter()
        .filter(|&(turn, _)| after_warmup(turn))
        .count();
    if enough(memory_points) {
        record(
            side,
            Metric::SessionGrowth,
            trial,
            growth(
                run.growth,
                1.0,
                "a growth slope needs at least two turns after the warm-up",
            ),
        );
    }
    let checkpoints = run
        .checkpoints
        .iter()
        .filter(|c| after_warmup(c.turn))
        .count();
    if enough(checkpoints) {
        record(
            side,
            Metric::LagGrowth,
            trial,
            growth(run.lag, PER_HUNDRED, "no checkpoint's key was echoed"),
        );
        record(
            side,
            Metric::RenderGrowth,
            trial,
            growth(run.render, PER_HUNDRED, "no checkpoint was measured"),
        );
    }
    let last = run.checkpoints.last();
    let value = |value: Option<f64>, missing: &str| match value {
        Some(value) => Sample::Value(value),
        None => Sample::Error(why(missing)),
    };
    record(
        side,
        Metric::KeyEcho,
        trial,
        value(
            last.and_then(SessionCheckpoint::key_echo_median),
            "no checkpoint was measured",
        ),
    );
    record(
        side,
        Metric::KeyBytes,
        trial,
        value(last.map(|c| c.bytes_per_key), "no checkpoint was measured"),
    );
    let per_token: Vec<f64> = run.turns.iter().filter_map(|t| t.bytes_per_token).collect();
    record(
        side,
        Metric::StreamBytes,
        trial,
        value(
            bench_core::stats::Summary::from_values(&per_token).map(|s| s.median),
            "no turn streamed a token",
        ),
    );
    let idle_rate = run
        .idle_output
        .filter(|_| run.idle_seconds > 0.0)
        .map(|output| output.bytes as f64 / run.idle_seconds);
    record(
        side,
        Metric::IdleOutput,
        trial,
        value(idle_rate, "the idle window was not measured"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::detail::SessionTurn;

    fn turn(turn: u32, rss_bytes: u64) -> SessionTurn {
        SessionTurn {
            turn,
            turn_seconds: 1.0,
            submit_seconds: None,
            first_token_seconds: None,
            stream_render_seconds: None,
            tool_roundtrip_seconds: None,
            cpu_seconds: 0.1,
            rss_bytes,
            pss_bytes: None,
            typing_lag_seconds: Vec::new(),
            first_chunk_at_seconds: None,
            last_chunk_at_seconds: None,
            tool_call_at_seconds: None,
            output: None,
            bytes_per_token: None,
        }
    }

    fn checkpoint(turn: u32, echo: f64, bytes_per_key: f64) -> SessionCheckpoint {
        SessionCheckpoint {
            turn,
            key_echo_seconds: vec![echo, echo, echo],
            bytes_per_key,
            rss_bytes: 1,
            pss_bytes: None,
            idle_cpu_share: None,
            idle_bytes_per_second: None,
        }
    }

    fn run(turns: Vec<SessionTurn>, checkpoints: Vec<SessionCheckpoint>) -> SessionRun {
        SessionRun {
            trial: 0,
            dialect: String::new(),
            turns,
            growth_bytes_per_turn: None,
            warmup_turns: 1,
            pss_every: 1,
            growth: None,
            lag: None,
            render: None,
            checkpoints,
            idle_seconds: 1.0,
            idle_cpu_share: None,
            idle_monotonic_ns: None,
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        }
    }

    #[test]
    fn a_long_session_fits_the_pss_it_read_on_every_tenth_turn() {
        // 1,000 turns: PSS read on 100 of them, 2 KiB a turn, 40 MiB under the RSS
        // (shared pages); the RSS alone, read after every turn, is noisy.
        let every = bench_core::detail::pss_every(1000, 1);
        assert_eq!(every, 10);
        let mut session = run(Vec::new(), Vec::new());
        session.pss_every = every;
        for n in 1..=1000u32 {
            let pss = (200 << 20) + u64::from(n) * 2048;
            let mut one = turn(n, pss + (40 << 20) + u64::from(n % 7) * (1 << 20));
            one.pss_bytes = session.pss_due(n, 1000).then_some(pss);
            session.turns.push(one);
        }
        assert!(session.has_pss());
        assert_eq!(session.memory_points(true).len(), 1 + 100);
        fit_series(&mut session);
        let growth = session.growth_bytes_per_turn.unwrap();
        assert!((growth - 2048.0).abs() < 1e-6, "{growth}");
        // A turn due to read PSS without it (an unreadable process): RSS everywhere,
        // never a series of both.
        session.turns[500].pss_bytes = None;
        assert!(!session.has_pss());
        assert_eq!(session.memory_points(false).len(), 1000);
    }

    #[test]
    fn the_warm_up_turn_is_left_out_of_the_growth() {
        // The first turn loads 60 MiB of modules; after it, 1 MiB a turn.
        let turns = vec![
            turn(1, 100 << 20),
            turn(2, 160 << 20),
            turn(3, 161 << 20),
            turn(4, 162 << 20),
        ];
        let mut session = run(turns, Vec::new());
        fit_series(&mut session);
        let growth = session.growth_bytes_per_turn.unwrap();
        assert!((growth - f64::from(1 << 20)).abs() < 1.0, "{growth}");
        // Without the warm-up the one-time load reads as a leak of about 18 MiB a turn.
        session.warmup_turns = 0;
        fit_series(&mut session);
        assert!(session.growth_bytes_per_turn.unwrap() > f64::from(10 << 20));
    }

    #[test]
    fn latency_and_render_slopes_are_per_hundred_turns() {
        // 1 ms more per key every 10 turns, and 50 bytes more per key every 10 turns.
        let checkpoints = (0..=10)
            .map(|k| {
                checkpoint(
                    k * 10,
                    0.010 + 0.001 * f64::from(k),
                    900.0 + 50.0 * f64::from(k),
                )
            })
            .collect();
        let mut session = run(Vec::new(), checkpoints);
        fit_series(&mut session);
        let mut side = Side::default();
        record_metrics(&mut side, 0, &session, None);
        let value = |metric| side.metrics[&metric][0].value.unwrap();
        assert!((value(Metric::LagGrowth) - 0.010).abs() < 1e-9);
        assert!((value(Metric::RenderGrowth) - 500.0).abs() < 1e-6);
        assert!((value(Metric::KeyEcho) - 0.020).abs() < 1e-12);
        assert_eq!(value(Metric::KeyBytes), 1400.0);
        // The checkpoint at turn 0 is in the warm-up: 10 points fitted.
        assert_eq!(session.lag.unwrap().points, 10);
        // Without turns there is no memory slope to ask for.
        assert!(!side.metrics.contains_key(&Metric::SessionGrowth));
    }

    #[test]
    fn a_short_session_has_no_checkpoint_slopes_rather_than_errors() {
        let mut session = run(Vec::new(), vec![checkpoint(3, 0.01, 500.0)]);
        fit_series(&mut session);
        let mut side = Side::default();
        record_metrics(&mut side, 0, &session, None);
        assert!(!side.metrics.contains_key(&Metric::LagGrowth));
        assert!(!side.metrics.contains_key(&Metric::RenderGrowth));
        assert_eq!(side.metrics[&Metric::KeyBytes][0].value, Some(500.0));
        // Nor a memory slope through the demo's three turns (two after the warm-up), or
        // four after it: a line through so few points says nothing of the noise.
        for turns in [3, 5] {
            let mut session = run(
                (1..=turns)
                    .map(|t| turn(t, 1000 + 10 * u64::from(t)))
                    .collect(),
                Vec::new(),
            );
            fit_series(&mut session);
            let mut side = Side::default();
            record_metrics(&mut side, 0, &session, None);
            assert!(
                !side.metrics.contains_key(&Metric::SessionGrowth),
                "{turns} turns"
            );
            assert!(session.growth.is_some(), "the fit stays in the record");
        }
        // A session that failed says so on every metric.
        record_metrics(&mut side, 0, &session, Some("turn 2 timed out"));
        let lag = &side.metrics[&Metric::LagGrowth][0];
        assert_eq!(lag.error.as_deref(), Some("turn 2 timed out"));
    }

    #[test]
    fn a_shrinking_series_records_no_growth_but_keeps_its_sign() {
        let turns = (1..=6).map(|t| turn(t, 1000 - u64::from(t) * 10)).collect();
        let mut session = run(turns, Vec::new());
        fit_series(&mut session);
        let mut side = Side::default();
        record_metrics(&mut side, 0, &session, None);
        assert_eq!(side.metrics[&Metric::SessionGrowth][0].value, Some(0.0));
        assert!(session.growth.unwrap().slope < 0.0);
    }

    #[test]
    fn a_quadratic_lag_is_flagged() {
        let checkpoints = (1..=20)
            .map(|k| checkpoint(k * 5, 0.001 * f64::from(k * k), 100.0))
            .collect();
        let mut session = run(Vec::new(), checkpoints);
        fit_series(&mut session);
        assert!(session.lag.unwrap().faster_than_linear());
        assert!(!session.render.unwrap().faster_than_linear());
    }
}
