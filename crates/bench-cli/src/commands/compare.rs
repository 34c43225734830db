//! `clibench compare`: compare a candidate build's result file against a base's,
//! metric by metric, with a verdict for each.
//!
//! Exit codes: 0 when the comparison was made (whatever it found), 1 when a metric
//! regressed and `--fail-on-regression` was given, 2 for unreadable input.

use super::report::{OutputFormat, load};
use crate::exit::FAILURE;
use crate::table::{Align, render};
use anyhow::Context;
use bench_core::compare::{CompareOptions, Comparison, DEFAULT_NOISE, MissingMetric, compare};
use bench_core::stats::MetricStats;
use bench_core::{Format, Verdict};
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench compare base/result.json candidate/result.json
  clibench compare base.json candidate.json --noise 0.1 --fail-on-regression
  clibench compare base.json candidate.json --export-markdown comment.md
  clibench compare base.json candidate.json --format json > comparison.json

A change counts only when the whole 95% bootstrap interval of the ratio of medians
lies beyond the noise floor; otherwise the verdict is `within noise`.")]
pub struct Args {
    /// The reference build's result file.
    #[arg(value_name = "BASE.json")]
    base: PathBuf,
    /// The result file of the build under review.
    #[arg(value_name = "CANDIDATE.json")]
    candidate: PathBuf,
    /// Noise floor as a fraction: changes within ±NOISE are not counted.
    #[arg(long, default_value_t = DEFAULT_NOISE, value_parser = parse_noise, value_name = "FRACTION")]
    noise: f64,
    /// Output: a table on stderr, or markdown, json or csv on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also write the comparison as Markdown (a pull-request comment) to FILE.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Exit with code 1 when any metric regressed.
    #[arg(long)]
    fail_on_regression: bool,
}

/// What `clibench compare` does, resolved from the flags.
#[derive(Debug)]
struct Settings {
    base: PathBuf,
    candidate: PathBuf,
    options: CompareOptions,
    format: OutputFormat,
    export_markdown: Option<PathBuf>,
    fail_on_regression: bool,
}

impl From<Args> for Settings {
    fn from(args: Args) -> Settings {
        Settings {
            base: args.base,
            candidate: args.candidate,
            options: CompareOptions {
                noise: args.noise,
                ..CompareOptions::default()
            },
            format: args.format,
            export_markdown: args.export_markdown,
            fail_on_regression: args.fail_on_regression,
        }
    }
}

pub(super) fn parse_noise(text: &str) -> Result<f64, String> {
    let noise: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !(0.0..1.0).contains(&noise) {
        return Err(format!(
            "{noise} is outside 0..1 (0.2 means changes within ±20% are noise)"
        ));
    }
    Ok(noise)
}

/// Runs `clibench compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings::from(args);
    let base = load(&settings.base)?;
    let candidate = load(&settings.candidate)?;
    let comparison = compare(&base.side, &candidate.side, &settings.options);
    match settings.format.export() {
        Some(format) => print!("{}", format.comparison(&comparison)),
        None => eprint!("{}", table(&comparison)),
    }
    if let Some(path) = &settings.export_markdown {
        bench_core::io::write_atomic(path, Format::Markdown.comparison(&comparison).as_bytes())
            .with_context(|| "failed to export the comparison as Markdown")?;
    }
    if settings.fail_on_regression && comparison.has_regression() {
        let names: Vec<String> = comparison
            .regressions()
            .map(|row| format!("{} ({:+.1}%)", row.metric, row.change() * 100.0))
            .collect();
        eprintln!(
            "error: regressed beyond the noise floor: {}",
            names.join(", ")
        );
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

/// The plain-text comparison: one row per metric, then the missing metrics and failures.
pub(super) fn table(comparison: &Comparison) -> String {
    let mut out = format!(
        "{} (candidate) vs {} (base)\n\n",
        comparison.candidate_sha, comparison.base_sha
    );
    if !comparison.metrics.is_empty() {
        let rows: Vec<Vec<String>> = comparison
            .metrics
            .iter()
            .map(|row| {
                vec![
                    row.metric.to_string(),
                    median(&row.base),
                    median(&row.candidate),
                    percent(row.ratio),
                    format!("{} .. {}", percent(row.ci_low), percent(row.ci_high)),
                    row.verdict.word().to_string(),
                    format!("{} / {}", trials(&row.base), trials(&row.candidate)),
                ]
            })
            .collect();
        out.push_str(&render(
            &[
                "metric",
                "base",
                "candidate",
                "change",
                "95% interval",
                "verdict",
                "trials",
            ],
            &[
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
                Align::Right,
            ],
            &rows,
        ));
    }
    if !comparison.missing.is_empty() {
        out.push('\n');
        for missing in &comparison.missing {
            out.push_str(&missing_line(missing));
        }
    }
    for (side, error, failures) in [
        ("base", &comparison.base_error, &comparison.base_failures),
        (
            "candidate",
            &comparison.candidate_error,
            &comparison.candidate_failures,
        ),
    ] {
        if let Some(error) = error {
            out.push_str(&format!("\n{side} run error: {error}\n"));
        }
        for failure in failures {
            out.push_str(&format!(
                "{side} failed: {} trial {}: {}\n",
                failure.metric, failure.trial, failure.error
            ));
        }
    }
    out.push_str(&format!(
        "\n{} regressed, {} improved, {} within noise (noise floor ±{}%)\n",
        comparison.count(Verdict::Regressed),
        comparison.count(Verdict::Improved),
        comparison.count(Verdict::WithinNoise),
        trimmed(comparison.options.noise * 100.0)
    ));
    out
}

fn missing_line(missing: &MissingMetric) -> String {
    let side = |stats: Option<&MetricStats>| match stats {
        None => "not measured".to_string(),
        Some(stats) => match stats.median() {
            None => format!("no successful sample ({} failed)", stats.errored),
            Some(median) => format!("{} over {} trials", stats.unit.format(median), stats.n()),
        },
    };
    format!(
        "missing: {}: base {}; candidate {}\n",
        missing.metric,
        side(missing.base.as_ref()),
        side(missing.candidate.as_ref())
    )
}

fn median(stats: &MetricStats) -> String {
    stats
        .median()
        .map_or("-".to_string(), |median| stats.unit.format(median))
}

fn trials(stats: &MetricStats) -> String {
    if stats.errored == 0 {
        stats.n().to_string()
    } else {
        format!("{} ({} failed)", stats.n(), stats.errored)
    }
}

/// One decimal, without a trailing `.0`: 20 -> `20`, 12.5 -> `12.5`.
fn trimmed(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").unwrap_or(&text).to_string()
}

fn percent(ratio: f64) -> String {
    if ratio.is_infinite() {
        return "+inf".to_string();
    }
    let change = (ratio - 1.0) * 100.0;
    if change.abs() < 0.05 {
        "0.0%".to_string()
    } else {
        format!("{change:+.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_must_be_a_fraction_below_one() {
        assert_eq!(parse_noise("0.1"), Ok(0.1));
        assert_eq!(parse_noise("0"), Ok(0.0));
        assert!(parse_noise("1").unwrap_err().contains("outside 0..1"));
        assert!(parse_noise("-0.1").is_err());
        assert!(parse_noise("NaN").is_err());
        assert!(parse_noise("twenty").unwrap_err().contains("not a number"));
    }

    #[test]
    fn percent_is_signed_with_one_decimal() {
        assert_eq!(percent(1.425), "+42.5%");
        assert_eq!(percent(0.7), "-30.0%");
        assert_eq!(percent(1.0), "0.0%");
        assert_eq!(percent(f64::INFINITY), "+inf");
    }
}
