//! Snapshots of every exporter, for one result and for a comparison.

use crate::example;
use bench_core::compare::{CompareOptions, Verdict, compare};
use bench_core::export::Format;
use bench_core::export::text;
use bench_core::{Metric, Phase, Report, Sample, Side, record};

fn comparison() -> bench_core::compare::Comparison {
    compare(
        &example("base").side,
        &example("candidate").side,
        &CompareOptions::default(),
    )
}

#[test]
fn report_markdown() {
    insta::assert_snapshot!(Format::Markdown.report(&Report::new(&example("candidate"))));
}

#[test]
fn report_json() {
    insta::assert_snapshot!(Format::Json.report(&Report::new(&example("candidate"))));
}

#[test]
fn report_csv() {
    insta::assert_snapshot!(Format::Csv.report(&Report::new(&example("base"))));
}

#[test]
fn comparison_markdown() {
    insta::assert_snapshot!(Format::Markdown.comparison(&comparison()));
}

#[test]
fn comparison_text() {
    insta::assert_snapshot!(text::comparison(&comparison()));
}

/// Every line of `text` fits `columns`.
fn fits(text: &str, columns: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= columns,
            "wider than {columns}: {line}\n{text}"
        );
    }
}

#[test]
fn comparison_text_at_80_columns() {
    let text = text::comparison_fit(&comparison(), 80);
    fits(&text, 80);
    insta::assert_snapshot!(text);
}

#[test]
fn comparison_text_in_a_wide_terminal_keeps_every_column() {
    let text = text::comparison_fit(&comparison(), 200);
    let header = text.lines().nth(2).unwrap();
    for column in ["base", "could detect", "interval", "trials"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(!text.contains("left out"), "{text}");
    fits(&text, 200);
}

#[test]
fn report_text_at_80_columns() {
    let text = text::report_fit(&Report::new(&example("candidate")), 80);
    fits(&text, 80);
    insta::assert_snapshot!(text);
}

#[test]
fn report_text_wide() {
    insta::assert_snapshot!(text::report(&Report::new(&example("candidate"))));
}

#[test]
fn comparison_json() {
    insta::assert_snapshot!(Format::Json.comparison(&comparison()));
}

#[test]
fn comparison_csv() {
    insta::assert_snapshot!(Format::Csv.comparison(&comparison()));
}

#[test]
fn example_verdicts_follow_from_the_numbers() {
    let comparison = comparison();
    let verdict = |metric| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .map(|row| row.verdict)
    };
    // Two separate runs of 5 trials (no start times overlap): each run carries its
    // own offset, which on the shared VMs clibench is measured on drifts a run's
    // times by 22% (docs/verdicts.md), so cold's +42.5% between two runs is within
    // noise (its interval, the test's own, reaches from about −37% to +215%) and it
    // could detect only over ±100%; memory drifts 2% and its −30% is a change. Welch's test on the logs decides through Holm over
    // the 7 tested metrics, where the exact rank-sum test (p >= 2/252) could not.
    assert_eq!(verdict(Metric::Cold), Some(Verdict::WithinNoise));
    assert_eq!(verdict(Metric::Rss), Some(Verdict::Improved));
    assert_eq!(verdict(Metric::Pss), Some(Verdict::Improved));
    for metric in [Metric::Cold, Metric::Warm, Metric::Install] {
        let row = comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .unwrap();
        assert_eq!(row.verdict, Verdict::WithinNoise, "{metric}");
        // What they could have detected is finite, never below the threshold.
        let detectable = row.detectable.unwrap();
        assert!(
            detectable.is_finite() && detectable >= row.floor,
            "{metric}"
        );
    }
    let cold = comparison
        .metrics
        .iter()
        .find(|row| row.metric == Metric::Cold)
        .unwrap();
    // Capped: the row says "over ±100%", not ±201%.
    assert_eq!(
        cold.detectable,
        Some(bench_core::compare::DETECTABLE_CAP),
        "{cold:?}"
    );
    assert!(cold.ci_low < 1.0 && cold.ci_high > 1.5, "{cold:?}");
    // Sizes are exact: 256 KiB more bundle (1.4%) counts; 1 MiB more disk (0.5%) is shown
    // as changed and fails nothing.
    assert_eq!(verdict(Metric::Bundle), Some(Verdict::Regressed));
    assert_eq!(verdict(Metric::Disk), Some(Verdict::Changed));
    let missing: Vec<_> = comparison.missing.iter().map(|m| m.metric).collect();
    assert_eq!(missing, [Metric::Interrupt, Metric::Keystroke]);
    assert_eq!(comparison.candidate_failures.len(), 1);
}

#[test]
fn comparison_is_deterministic() {
    assert_eq!(comparison(), comparison());
}

/// Adds what a run with per-trial records has: host, load and start of each
/// measure trial, and the process count, which is `daemon_from` processes more
/// from that trial on.
fn with_trial_records(side: &mut Side, host: &str, load: f64, daemon_from: Option<u32>) {
    for trial in 0..5 {
        let record = side.trial_record_mut(Phase::Measure, trial);
        record.host = Some(host.to_string());
        record.load_average = Some([load + f64::from(trial) / 10.0, load, load]);
        record.started_unix_ms = Some(1_764_500_000_000 + u64::from(trial) * 12_500);
        record.process_count = Some(2 + u32::from(daemon_from.is_some_and(|from| trial >= from)));
    }
}

fn comparison_with_trial_records() -> bench_core::compare::Comparison {
    let mut base = example("base").side;
    let mut candidate = example("candidate").side;
    with_trial_records(&mut base, "runner-1", 0.5, None);
    with_trial_records(&mut candidate, "runner-1", 1.25, Some(3));
    for (trial, (b, c)) in [(0.02, 0.03), (0.02, 0.03), (0.03, 0.03)]
        .into_iter()
        .enumerate()
    {
        record(&mut base, Metric::UiCpu, trial as u32, Sample::Value(b));
        record(
            &mut candidate,
            Metric::UiCpu,
            trial as u32,
            Sample::Value(c),
        );
    }
    record(&mut base, Metric::UiSteps, 0, Sample::Value(1.2));
    record(&mut candidate, Metric::UiSteps, 0, Sample::Value(1.9));
    compare(
        &base,
        &candidate,
        &CompareOptions::default().with_floor(Metric::Warm, 0.05),
    )
}

#[test]
fn comparison_markdown_with_trial_records() {
    insta::assert_snapshot!(Format::Markdown.comparison(&comparison_with_trial_records()));
}

#[test]
fn comparison_text_with_trial_records() {
    insta::assert_snapshot!(text::comparison(&comparison_with_trial_records()));
}

#[test]
fn trial_records_show_in_the_comment() {
    let comparison = comparison_with_trial_records();
    let text = Format::Markdown.comparison(&comparison);
    let verdict = |metric| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == metric)
            .map(|row| row.verdict)
    };
    // Three trials a side cannot show a change at 5% (the best p-value is 0.1).
    assert_eq!(verdict(Metric::UiCpu), Some(Verdict::WithinNoise));
    assert_eq!(verdict(Metric::UiSteps), Some(Verdict::SingleSample));
    assert!(text.contains("**Process count changed** (measure phase): base 2 processes, candidate 2 or 3 processes"), "{text}");
    assert!(
        text.contains("host `runner-1`; load 1.25 to 1.65 (1 min, at trial start)"),
        "{text}"
    );
    assert!(text.contains("warm ±5%"), "{text}");
    // Rows without a verdict are folded away, changes are not.
    let folded = &text[text.find("<details>").unwrap()..text.find("</details>").unwrap()];
    assert!(folded.contains("`ui_cpu`") && folded.contains("`install`"));
    assert!(!folded.contains("`bundle`"));
}

/// A comparison of one commit run as it is (base) and with an override (candidate),
/// as `clibench ab --head measure.env.X=300` makes it.
fn comparison_by_overrides() -> bench_core::compare::Comparison {
    let base = example("base");
    let mut candidate = example("candidate").side;
    candidate.sha = base.side.sha.clone();
    compare(&base.side, &candidate, &CompareOptions::default())
        .with_overrides_of(&base.request, &overridden_request())
}

#[test]
fn sides_of_one_commit_are_titled_by_their_overrides() {
    let by_overrides = comparison_by_overrides();
    let markdown = Format::Markdown.comparison(&by_overrides);
    assert!(
        markdown.starts_with(
            "## clibench: `measure.env.X=300` (candidate) vs the spec as it is (base)\n"
        ),
        "{markdown}"
    );
    let terminal = text::comparison(&by_overrides);
    assert!(
        terminal.starts_with("measure.env.X=300 (candidate) vs the spec as it is (base)\n"),
        "{terminal}"
    );
    #[cfg(feature = "html")]
    {
        let html = bench_core::export::html::comparison(&by_overrides);
        assert!(
            html.contains("<title>clibench measure.env.X=300 vs the spec as it is</title>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<h1>clibench: <code>measure.env.X=300</code> (candidate) vs the spec as it is \
                 (base)</h1>"
            ),
            "{html}"
        );
    }
    // Different commits are still told apart by their shas, whatever the overrides.
    let by_sha =
        self::comparison().with_overrides_of(&example("base").request, &overridden_request());
    let markdown = Format::Markdown.comparison(&by_sha);
    assert!(
        markdown.starts_with("## clibench: `d07e9a3c51f8` (candidate) vs `4f1c2ab90e3d` (base)"),
        "{markdown}"
    );
}

/// The candidate's request with `measure.env.X=300` recorded as its overrides.
fn overridden_request() -> bench_core::Request {
    let mut request = example("candidate").request;
    request.config.insert(
        bench_core::OVERRIDES_KEY.to_owned(),
        "measure.env.X=300".to_owned(),
    );
    request
}

/// Three interleaved trials a side of a long session: head leaks 2 MiB a turn more and
/// its keystroke echo grows by 50 ms per 100 turns, base's slopes are noise near 0.
fn comparison_of_slopes() -> bench_core::compare::Comparison {
    use bench_core::compare::Interleaving;
    use bench_core::detail::SessionRun;
    use bench_core::stats::Fit;
    let side = |sha: &str, slopes: &[(f64, f64)]| {
        let mut side = Side::new(sha);
        for (trial, &(growth, lag)) in slopes.iter().enumerate() {
            let trial = trial as u32;
            let fit = |slope: f64, std_error: f64| Fit {
                slope,
                std_error: Some(std_error),
                walk_std_error: None,
                points: 99,
                curvature_t: None,
            };
            let growth_value = Sample::Value(growth.max(0.0));
            record(&mut side, Metric::SessionGrowth, trial, growth_value);
            let lag_value = Sample::Value((lag * 100.0).max(0.0));
            record(&mut side, Metric::LagGrowth, trial, lag_value);
            record(&mut side, Metric::Turn, trial, Sample::Value(2.0 + lag));
            side.sessions.push(SessionRun {
                trial,
                dialect: "anthropic".to_string(),
                turns: Vec::new(),
                growth_bytes_per_turn: Some(growth),
                warmup_turns: 1,
                pss_every: 1,
                growth: Some(fit(growth, 1_500.0)),
                lag: Some(fit(lag, 0.000_02)),
                render: None,
                checkpoints: Vec::new(),
                idle_seconds: 3.0,
                idle_cpu_share: None,
                idle_monotonic_ns: None,
                idle_output: None,
                startup_output: None,
                pastes: Vec::new(),
            });
        }
        side
    };
    let mib = 1024.0 * 1024.0;
    let base = side(
        "b",
        &[
            (11_000.0, 0.000_021),
            (-2_300.0, 0.000_150),
            (9_800.0, 0.000_012),
        ],
    );
    let head = side(
        "h",
        &[
            (2.0 * mib + 12_400.0, 0.000_550),
            (2.0 * mib + 10_100.0, 0.000_580),
            (2.0 * mib + 11_900.0, 0.000_570),
        ],
    );
    compare(
        &base,
        &head,
        &CompareOptions {
            interleaving: Some(Interleaving::Interleaved),
            ..CompareOptions::default()
        },
    )
}

#[test]
fn slopes_are_compared_by_their_difference_in_their_unit() {
    let comparison = comparison_of_slopes();
    let verdicts: Vec<(Metric, Verdict)> = comparison
        .metrics
        .iter()
        .map(|row| (row.metric, row.verdict))
        .collect();
    assert!(verdicts.contains(&(Metric::SessionGrowth, Verdict::Regressed)));
    assert!(verdicts.contains(&(Metric::LagGrowth, Verdict::Regressed)));
    insta::assert_snapshot!(text::comparison(&comparison));
    insta::assert_snapshot!(Format::Markdown.comparison(&comparison));
}

#[test]
fn the_html_comparison_lists_the_slopes_its_changes_chart_cannot_draw() {
    let html = bench_core::export::html::comparison(&comparison_of_slopes());
    let section = &html[html
        .find("<h2>Session slopes</h2>")
        .expect("a slopes section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        section.contains("<strong>+2.0 MiB/turn</strong>")
            && section.contains("<span class=\"regressed\">regressed</span>"),
        "{section}"
    );
    assert!(section.contains("+50.6 ms/100 turns"), "{section}");
}
