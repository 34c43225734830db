//! `clibench compare`: compare a candidate build's result file against a base's,
//! metric by metric, with a verdict for each.
//!
//! Exit codes: 0 when the comparison was made (whatever it found), 1 when a metric
//! regressed and `--fail-on-regression` was given, 2 for unreadable input.

use super::report::{OutputFormat, load};
use crate::exit::{FAILURE, input_error};
use crate::table::{Align, render};
use anyhow::Context;
use bench_core::compare::{CompareOptions, Comparison, MetricComparison, MissingMetric, compare};
use bench_core::export::{bmf, github_benchmark};
use bench_core::stats::MetricStats;
use bench_core::{Format, Metric, Verdict};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `clibench compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench compare base/result.json candidate/result.json
  clibench compare base.json candidate.json --noise 0.1 --fail-on-regression
  clibench compare base.json candidate.json --noise 0.1 --noise cold=0.05 --noise disk=0.01
  clibench compare base.json candidate.json --export-markdown comment.md
  clibench compare base.json candidate.json --export-html comparison.html
  clibench compare base.json candidate.json --format json > comparison.json
  clibench compare base.json candidate.json --export-bmf bmf.json
  clibench compare base.json candidate.json --export-github-benchmark bench.json

Timing and memory change only when the whole 95% bootstrap interval of the ratio of
medians lies beyond the metric's noise floor, and need two samples a side (else `1
sample, no verdict`). Sizes on disk (bundle, disk) are exact: any change counts,
unless a floor is set for that metric. CPU time (ui_cpu) moves in 10 ms clock
ticks: a change of one tick is `within resolution`.

--export-github-benchmark writes the customSmallerIsBetter array to FILE and, when
a metric is bigger-is-better (reclaimed_rss), the customBiggerIsBetter array to
FILE with `-bigger` before its extension (bench.json -> bench-bigger.json).")]
pub struct Args {
    /// The reference build's result file.
    #[arg(value_name = "BASE.json")]
    base: PathBuf,
    /// The result file of the build under review.
    #[arg(value_name = "CANDIDATE.json")]
    candidate: PathBuf,
    /// Noise floor as a fraction (changes within ±FRACTION are not counted), or one
    /// metric's floor as METRIC=FRACTION; repeat for several metrics. [default: 0.2]
    #[arg(long, value_parser = parse_noise, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// Output: a table on stderr, or markdown, json or csv on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also write the comparison as Markdown (a pull-request comment) to FILE.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Also write the candidate's medians in Bencher Metric Format to FILE.
    #[arg(long, value_name = "FILE")]
    export_bmf: Option<PathBuf>,
    /// Also write github-action-benchmark's customSmallerIsBetter array to FILE
    /// (and customBiggerIsBetter to FILE-bigger, see below).
    #[arg(long, value_name = "FILE")]
    export_github_benchmark: Option<PathBuf>,
    /// Also write the comparison as a self-contained HTML page (charts included) to FILE.
    #[arg(long, value_name = "FILE")]
    export_html: Option<PathBuf>,
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
    export_bmf: Option<PathBuf>,
    export_github_benchmark: Option<PathBuf>,
    export_html: Option<PathBuf>,
    fail_on_regression: bool,
}

impl TryFrom<Args> for Settings {
    type Error = anyhow::Error;

    fn try_from(args: Args) -> anyhow::Result<Settings> {
        Ok(Settings {
            base: args.base,
            candidate: args.candidate,
            options: options(&args.noise)?,
            format: args.format,
            export_markdown: args.export_markdown,
            export_bmf: args.export_bmf,
            export_github_benchmark: args.export_github_benchmark,
            export_html: args.export_html,
            fail_on_regression: args.fail_on_regression,
        })
    }
}

/// One `--noise` value: the global floor or one metric's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Noise {
    Global(f64),
    Metric(Metric, f64),
}

pub(super) fn parse_noise(text: &str) -> Result<Noise, String> {
    let fraction = |text: &str| -> Result<f64, String> {
        let noise: f64 = text
            .parse()
            .map_err(|_| format!("`{text}` is not a number"))?;
        if !(0.0..1.0).contains(&noise) {
            return Err(format!(
                "{noise} is outside 0..1 (0.2 means changes within ±20% are noise)"
            ));
        }
        Ok(noise)
    };
    match text.split_once('=') {
        None => Ok(Noise::Global(fraction(text)?)),
        Some((metric, value)) => {
            let metric: Metric = metric.trim().parse().map_err(|error| format!("{error}"))?;
            Ok(Noise::Metric(metric, fraction(value.trim())?))
        }
    }
}

/// The comparison options from every `--noise`: at most one global floor, at most
/// one floor per metric.
pub(super) fn options(noise: &[Noise]) -> anyhow::Result<CompareOptions> {
    let mut options = CompareOptions::default();
    let mut global = None;
    for &value in noise {
        match value {
            Noise::Global(fraction) => {
                if global.replace(fraction).is_some() {
                    return Err(input_error(
                        "--noise FRACTION is given twice; set one metric's floor with METRIC=FRACTION",
                    ));
                }
                options.noise = fraction;
            }
            Noise::Metric(metric, fraction) => {
                if options.floors.contains_key(&metric) {
                    return Err(input_error(format!("--noise {metric}=... is given twice")));
                }
                options = options.with_floor(metric, fraction);
            }
        }
    }
    Ok(options)
}

/// Where the customBiggerIsBetter array goes: `bench.json` -> `bench-bigger.json`.
fn bigger_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(extension) => format!("{stem}-bigger.{}", extension.to_string_lossy()),
        None => format!("{stem}-bigger"),
    };
    path.with_file_name(name)
}

fn export(path: &Path, what: &str, text: &str) -> anyhow::Result<()> {
    bench_core::io::write_atomic(path, text.as_bytes())
        .with_context(|| format!("failed to export the comparison as {what}"))
}

/// Runs `clibench compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings::try_from(args)?;
    let exports = [
        ("--export-markdown", &settings.export_markdown),
        ("--export-bmf", &settings.export_bmf),
        (
            "--export-github-benchmark",
            &settings.export_github_benchmark,
        ),
    ];
    for (flag, export) in exports {
        let Some(export) = export else { continue };
        // write_atomic would replace the input with the comparison.
        for input in [&settings.base, &settings.candidate] {
            if bench_core::io::same_file(export, input) {
                return Err(input_error(format!(
                    "{flag} {} is the input {}; refusing to overwrite it",
                    export.display(),
                    input.display()
                )));
            }
        }
    }
    let base = load(&settings.base)?;
    let candidate = load(&settings.candidate)?;
    let comparison = compare(&base.side, &candidate.side, &settings.options);
    match settings.format.export() {
        Some(format) => print!("{}", format.comparison(&comparison)),
        None if settings.format == OutputFormat::Html => {
            print!("{}", bench_core::export::html::comparison(&comparison));
        }
        None => eprint!("{}", table(&comparison)),
    }
    if let Some(path) = &settings.export_markdown {
        export(path, "Markdown", &Format::Markdown.comparison(&comparison))?;
    }
    if let Some(path) = &settings.export_bmf {
        export(path, "BMF", &bmf::comparison(&comparison))?;
    }
    if let Some(path) = &settings.export_github_benchmark {
        let documents = github_benchmark::comparison(&comparison);
        export(
            path,
            "github-action-benchmark JSON",
            &documents.smaller_is_better,
        )?;
        if let Some(bigger) = &documents.bigger_is_better {
            export(&bigger_path(path), "github-action-benchmark JSON", bigger)?;
        }
    }
    if let Some(path) = &settings.export_html {
        export(
            path,
            "HTML",
            &bench_core::export::html::comparison(&comparison),
        )?;
    }
    if settings.fail_on_regression && comparison.has_regression() {
        let names: Vec<String> = comparison
            .regressions()
            .map(|row| {
                format!(
                    "{} ({}, {:+.1}%)",
                    row.metric,
                    amount(row),
                    row.change() * 100.0
                )
            })
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
                    amount(row),
                    percent(row.ratio),
                    interval(row),
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
                "delta",
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
    for counts in comparison.process_count_changes() {
        out.push_str(&format!(
            "\nwarning: the number of processes changed in the {} phase: base {:?}, candidate {:?}\n",
            counts.phase, counts.base, counts.candidate
        ));
    }
    let mut counts = Vec::new();
    for verdict in Verdict::ALL {
        let count = comparison.count(verdict);
        match verdict {
            Verdict::Regressed | Verdict::Improved => {
                counts.push(format!("{count} {}", verdict.word()));
            }
            Verdict::SingleSample if count > 0 => {
                counts.push(format!("{count} with a single sample (no verdict)"));
            }
            _ if count > 0 => counts.push(format!("{count} {}", verdict.word())),
            _ => {}
        }
    }
    let floors: Vec<String> = comparison
        .options
        .floors
        .iter()
        .map(|(metric, floor)| format!("{metric} ±{}%", trimmed(floor * 100.0)))
        .collect();
    let floors = if floors.is_empty() {
        String::new()
    } else {
        format!("; {}", floors.join(", "))
    };
    out.push_str(&format!(
        "\n{} (noise floor ±{}%{floors}; sizes exact)\n",
        counts.join(", "),
        trimmed(comparison.options.noise * 100.0)
    ));
    out
}

/// The interval of the change; none for a single sample, which has no spread.
fn interval(row: &MetricComparison) -> String {
    if row.verdict == Verdict::SingleSample {
        "-".to_string()
    } else {
        format!("{} .. {}", percent(row.ci_low), percent(row.ci_high))
    }
}

/// The absolute change in the metric's unit, signed: `+175 ms`, `-39.2 MiB`.
fn amount(row: &MetricComparison) -> String {
    let text = row.unit.format(row.delta);
    if row.delta > 0.0 {
        format!("+{text}")
    } else {
        text
    }
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
    use bench_core::compare::DEFAULT_NOISE;

    #[test]
    fn noise_must_be_a_fraction_below_one() {
        assert_eq!(parse_noise("0.1"), Ok(Noise::Global(0.1)));
        assert_eq!(parse_noise("0"), Ok(Noise::Global(0.0)));
        assert!(parse_noise("1").unwrap_err().contains("outside 0..1"));
        assert!(parse_noise("-0.1").is_err());
        assert!(parse_noise("NaN").is_err());
        assert!(parse_noise("twenty").unwrap_err().contains("not a number"));
    }

    #[test]
    fn noise_takes_one_metric_floor_as_metric_equals_fraction() {
        assert_eq!(
            parse_noise("cold=0.05"),
            Ok(Noise::Metric(Metric::Cold, 0.05))
        );
        assert!(
            parse_noise("colder=0.05")
                .unwrap_err()
                .contains("unknown metric `colder`")
        );
        assert!(parse_noise("cold=2").unwrap_err().contains("outside 0..1"));
        let set = options(&[
            Noise::Metric(Metric::Cold, 0.05),
            Noise::Global(0.1),
            Noise::Metric(Metric::Disk, 0.01),
        ])
        .unwrap();
        assert_eq!(set.noise, 0.1);
        assert_eq!(set.floor(Metric::Cold), 0.05);
        assert_eq!(set.floor(Metric::Disk), 0.01);
        assert_eq!(set.floor(Metric::Warm), 0.1);
        assert_eq!(options(&[]).unwrap().noise, DEFAULT_NOISE);
        assert!(options(&[Noise::Global(0.1), Noise::Global(0.2)]).is_err());
        assert!(
            options(&[
                Noise::Metric(Metric::Cold, 0.1),
                Noise::Metric(Metric::Cold, 0.2)
            ])
            .is_err()
        );
    }

    #[test]
    fn the_bigger_is_better_file_sits_beside_the_export() {
        assert_eq!(
            bigger_path(Path::new("out/bench.json")),
            Path::new("out/bench-bigger.json")
        );
        assert_eq!(bigger_path(Path::new("bench")), Path::new("bench-bigger"));
    }

    #[test]
    fn percent_is_signed_with_one_decimal() {
        assert_eq!(percent(1.425), "+42.5%");
        assert_eq!(percent(0.7), "-30.0%");
        assert_eq!(percent(1.0), "0.0%");
        assert_eq!(percent(f64::INFINITY), "+inf");
    }
}
