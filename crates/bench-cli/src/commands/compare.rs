//! `clibench compare`: compare a candidate build's result file against a base's,
//! metric by metric, with a verdict for each.
//!
//! Exit codes: 0 when the comparison was made (whatever it found), 1 when a metric
//! regressed and `--fail-on-regression` was given, 2 for unreadable input.

use super::report::{OutputFormat, load};
use crate::exit::{FAILURE, input_error};
use anyhow::Context;
use bench_core::compare::{CompareOptions, compare};
use bench_core::export::{bmf, github_benchmark, text};
use bench_core::{Format, Metric, Nature};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `clibench compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench compare base/result.json candidate/result.json
  clibench compare base.json candidate.json --noise 0.1 --fail-on-regression
  clibench compare base.json candidate.json --noise 0.1 --noise cold=0.05
  clibench compare run1/result.json run2/result.json --drift timing=0.05
  clibench compare base.json candidate.json --export-markdown comment.md
  clibench compare base.json candidate.json --export-html comparison.html
  clibench compare base.json candidate.json --format json > comparison.json
  clibench compare base.json candidate.json --export-bmf bmf.json
  clibench compare base.json candidate.json --export-github-benchmark b.json

Timing, CPU and memory change when the interval printed beside them excludes no
change and their change exceeds the metric's threshold (--noise; defaults:
timing and CPU 3%, memory 2%). Change and interval are a t-test's on the logs
(paired trial by trial for interleaved sides, else Welch's), each interval at
the level Holm's procedure over every tested metric judged it at, so an A/A
comparison shows any verdict at most 5% of the time. They need two samples a
side (else `1 sample, no verdict`). Each row says what change it could have
detected (over ±100% when not even a doubling): with 3 trials a side, only large
ones. Results of separate runs (not interleaved) say so, and the test counts
their drift as variance (--drift; --drift 0 for none). Sizes on disk (bundle,
disk) are exact: every change is shown, and it counts only beyond 64 KiB and 1%
(else `changed`, which never fails --fail-on-regression). See docs/verdicts.md.

--export-github-benchmark writes the customSmallerIsBetter array to FILE and,
when a metric is bigger-is-better (reclaimed_rss), the customBiggerIsBetter
array to FILE with `-bigger` before its extension (b.json -> b-bigger.json).")]
pub struct Args {
    /// The reference build's result file.
    #[arg(value_name = "BASE.json")]
    base: PathBuf,
    /// The result file of the build under review.
    #[arg(value_name = "CANDIDATE.json")]
    candidate: PathBuf,
    /// Practical threshold as a fraction (changes within ±FRACTION are not
    /// counted), or one metric's as METRIC=FRACTION (a slope's as an amount in its unit:
    /// session_growth=262144 is 256 KiB per turn); repeatable. [default: by
    /// kind: timing and CPU 0.03, memory 0.02, sizes 0.01 and 64 KiB]
    #[arg(long, value_parser = parse_noise, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// For results of separate runs (not interleaved): the spread of one run's own
    /// offset on the log scale, for every kind or one as KIND=SPREAD (timing, cpu,
    /// memory); repeatable; 0 means none. Without it, timing and CPU take it from the
    /// runs' host-speed probes when both recorded them; else the defaults, measured on
    /// busy shared 2-core VMs (a quiet machine drifts less; docs/verdicts.md tells how
    /// to measure yours). [default: probes, else timing 0.22, cpu 0.06, memory 0.02]
    #[arg(long, value_parser = parse_drift, value_name = "[KIND=]SPREAD")]
    drift: Vec<Drift>,
    /// Output: a table on stderr, or markdown, json, csv or html on stdout.
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
            options: with_drift(options(&args.noise)?, &args.drift)?,
            format: args.format,
            export_markdown: args.export_markdown,
            export_bmf: args.export_bmf,
            export_github_benchmark: args.export_github_benchmark,
            export_html: args.export_html,
            fail_on_regression: args.fail_on_regression,
        })
    }
}

/// One `--drift` value: every kind's spread, or one kind's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Drift {
    kind: Option<Nature>,
    spread: f64,
}

pub(super) fn parse_drift(text: &str) -> Result<Drift, String> {
    let spread = |text: &str| -> Result<f64, String> {
        let spread: f64 = text
            .parse()
            .map_err(|_| format!("`{text}` is not a number"))?;
        if !(0.0..=1.0).contains(&spread) {
            return Err(format!(
                "{spread} is outside 0..1 (0.1: one run is typically 10% slower or faster than another)"
            ));
        }
        Ok(spread)
    };
    let Some((kind, value)) = text.split_once('=') else {
        return Ok(Drift {
            kind: None,
            spread: spread(text)?,
        });
    };
    let kind = match kind.trim() {
        "timing" => Nature::Timing,
        "cpu" => Nature::Cpu,
        "memory" => Nature::Memory,
        other => {
            return Err(format!(
                "`{other}` is not a kind of metric with drift: timing, cpu or memory"
            ));
        }
    };
    Ok(Drift {
        kind: Some(kind),
        spread: spread(value.trim())?,
    })
}

/// `options` with every `--drift`: each kind set at most once.
pub(super) fn with_drift(
    mut options: CompareOptions,
    drift: &[Drift],
) -> anyhow::Result<CompareOptions> {
    for value in drift {
        let kinds = match value.kind {
            Some(kind) => vec![kind],
            None => vec![Nature::Timing, Nature::Cpu, Nature::Memory],
        };
        for kind in kinds {
            let slot = match kind {
                Nature::Timing => &mut options.drift.timing,
                Nature::Cpu => &mut options.drift.cpu,
                _ => &mut options.drift.memory,
            };
            if slot.replace(value.spread).is_some() {
                return Err(input_error(format!(
                    "--drift sets the {} spread twice",
                    kind.name()
                )));
            }
        }
    }
    Ok(options)
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
            if metric.is_slope() {
                // A slope's threshold is an amount in its unit, not a fraction.
                let amount: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{}` is not a number", value.trim()))?;
                if !bench_core::thresholds::is_valid(metric, amount) {
                    return Err(format!(
                        "{metric}={amount} is not {}",
                        bench_core::thresholds::expected(metric)
                    ));
                }
                return Ok(Noise::Metric(metric, amount));
            }
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
                options.noise = Some(fraction);
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
    // The spec's `[compare] noise`, which the results recorded, for the metrics the
    // flags did not set.
    let options = bench_core::thresholds::with_recorded(
        settings.options.clone(),
        &base.request,
        &candidate.request,
    )
    .map_err(|error| input_error(bench_core::error_chain(&error)))?;
    let comparison = compare(&base.side, &candidate.side, &options)
        .with_overrides_of(&base.request, &candidate.request);
    match settings.format.export() {
        Some(format) => crate::show::export(format, &format.comparison(&comparison)),
        None if settings.format == OutputFormat::Html => {
            out!("{}", bench_core::export::html::comparison(&comparison));
        }
        None => say_part!(
            "{}",
            text::comparison_fit(&comparison, crate::show::stderr_columns())
        ),
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
        say!(
            "error: regressed beyond the threshold: {}",
            text::regressions(&comparison)
        );
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_sets_every_kind_or_one_and_each_once() {
        let all = with_drift(CompareOptions::default(), &[parse_drift("0.05").unwrap()]).unwrap();
        assert_eq!(all.drift.of(Nature::Timing), 0.05);
        assert_eq!(all.drift.of(Nature::Memory), 0.05);
        assert_eq!(all.drift.of(Nature::Exact), 0.0);
        let one = with_drift(
            CompareOptions::default(),
            &[parse_drift("cpu=0.01").unwrap()],
        )
        .unwrap();
        assert_eq!(one.drift.of(Nature::Cpu), 0.01);
        assert_eq!(one.drift.of(Nature::Timing), Nature::Timing.drift_spread());
        let twice = [
            parse_drift("0.1").unwrap(),
            parse_drift("timing=0.2").unwrap(),
        ];
        let error = with_drift(CompareOptions::default(), &twice).unwrap_err();
        assert!(error.to_string().contains("timing spread twice"), "{error}");
        assert!(
            parse_drift("bundle=0.1")
                .unwrap_err()
                .contains("timing, cpu or memory")
        );
        assert!(parse_drift("2").unwrap_err().contains("outside 0..1"));
    }

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
        // A slope's threshold is an amount in its unit, and a global fraction is not one.
        assert_eq!(
            parse_noise("session_growth=1048576"),
            Ok(Noise::Metric(Metric::SessionGrowth, 1_048_576.0))
        );
        assert!(
            parse_noise("lag_growth=-1")
                .unwrap_err()
                .contains("not an amount of at least 0")
        );
        let global = options(&[Noise::Global(0.1)]).unwrap();
        assert_eq!(
            global.slope_threshold(Metric::SessionGrowth),
            Some(262_144.0)
        );
        let set = options(&[
            Noise::Metric(Metric::Cold, 0.05),
            Noise::Global(0.1),
            Noise::Metric(Metric::Disk, 0.01),
        ])
        .unwrap();
        assert_eq!(set.noise, Some(0.1));
        assert_eq!(set.floor(Metric::Cold), 0.05);
        assert_eq!(set.floor(Metric::Disk), 0.01);
        assert_eq!(set.floor(Metric::Warm), 0.1);
        assert_eq!(options(&[]).unwrap().noise, None);
        assert_eq!(options(&[]).unwrap().floor(Metric::Cold), 0.03);
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
}
