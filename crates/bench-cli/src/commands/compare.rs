//! `clibench compare`: compare a candidate build's result file against a base's,
//! metric by metric, with a verdict for each.
//!
//! Exit codes: 0 when the comparison was made (whatever it found), 1 when a metric
//! regressed and `--fail-on-regression` was given, 2 for unreadable input.

use crate::exit::{FAILURE, input_error, settings_error};
use crate::settings::{Drift, Noise, ThresholdFlags, compare_options, recorded_floors};
use crate::show::OutputFormat;
use bench_cli::exports::ComparisonExports;
use bench_core::compare::compare;
use bench_core::export::text;
use std::path::PathBuf;
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
    #[arg(long, value_name = "[METRIC=]FRACTION")]
    noise: Vec<Noise>,
    /// For results of separate runs (not interleaved): the spread of one run's own
    /// offset on the log scale, for every kind or one as KIND=SPREAD (timing, cpu,
    /// memory); repeatable; 0 means none. Without it, timing and CPU take it from the
    /// runs' host-speed probes when both recorded them; else the defaults, measured on
    /// busy shared 2-core VMs (a quiet machine drifts less; docs/verdicts.md tells how
    /// to measure yours). [default: probes, else timing 0.22, cpu 0.06, memory 0.02]
    #[arg(long, value_name = "[KIND=]SPREAD")]
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

/// Runs `clibench compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let flags = ThresholdFlags {
        noise: args.noise.clone(),
        drift: args.drift.clone(),
    };
    // The flags are checked before any file is read.
    flags.check().map_err(settings_error)?;
    let exports = ComparisonExports {
        markdown: args.export_markdown,
        bmf: args.export_bmf,
        github_benchmark: args.export_github_benchmark,
        html: args.export_html,
    };
    exports
        .check_inputs(&[&args.base, &args.candidate])
        .map_err(|error| input_error(error.to_string()))?;
    let base = super::load_result(&args.base)?;
    let candidate = super::load_result(&args.candidate)?;
    // The spec's `[compare] noise`, which the results recorded, for the metrics the
    // flags did not set.
    let floors = recorded_floors(&base.request, &candidate.request).map_err(settings_error)?;
    let options = compare_options(&flags, &floors).map_err(settings_error)?;
    let comparison = compare(&base.side, &candidate.side, &options)
        .with_overrides_of(&base.request, &candidate.request);
    match args.format.export() {
        Some(format) => crate::show::export(format, &format.comparison(&comparison)),
        None if args.format == OutputFormat::Html => {
            out!("{}", bench_core::export::html::comparison(&comparison));
        }
        None => say_part!(
            "{}",
            text::comparison_fit(&comparison, crate::show::stderr_columns())
        ),
    }
    exports.write(&comparison)?;
    if args.fail_on_regression && comparison.has_regression() {
        say!(
            "error: regressed beyond the threshold: {}",
            text::regressions(&comparison)
        );
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
