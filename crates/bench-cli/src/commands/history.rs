//! `clibench history`: keep every result in one SQLite file and read it back as series,
//! with change points; `check` judges a new result against its recent series. What each
//! subcommand computes and says is the history library's ([`told`], [`render`]); this
//! file parses the flags, calls it and prints.

use super::drive::open_store;
use crate::exit::{FAILURE, input_error, input_if};
use crate::text::history::{self as told, Shown};
use bench_cli::history::change_points::check;
use bench_cli::history::{Filter, ImportLimits, Store, bmf, ingest, location, page, render};
use bench_core::Metric;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench history`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench history add out/result.json --branch main
  clibench history show cold --target demo-agent
  clibench history report --out history.html --export-bmf history-bmf.json
  clibench history check out/result.json --fail-on-regression
  clibench history import ci-shard-1.sqlite ci-shard-2.sqlite

The store is --store PATH, else $CLIBENCH_HISTORY, else
$XDG_DATA_HOME/clibench/history.sqlite, else
~/.local/share/clibench/history.sqlite. See docs/history.md.")]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Add result files (every trial's values) to the store; a result already there is
    /// left as it is.
    Add(AddArgs),
    /// Merge other stores (other machines, CI shards) into this one.
    Import(ImportArgs),
    /// A metric's series per target, branch and testbed: a sparkline, change points and
    /// a table.
    Show(ShowArgs),
    /// One offline HTML page with a trend chart per metric and series, change points
    /// marked; and the whole history as Bencher Metric Format.
    Report(ReportArgs),
    /// Is this new result a change against the recent series on its testbed?
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
struct StoreArg {
    /// The history store: an SQLite file, or a `postgres://` URL (its password from
    /// PGPASSWORD, a pgpass file or CLIBENCH_HISTORY; `-` reads the URL from standard
    /// input) [default: see `clibench history --help`].
    #[arg(long, value_name = "PATH|URL", value_parser = crate::settings::store)]
    store: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct AddArgs {
    /// Result files (`result.json` of `clibench run`, a side of `ab`).
    #[arg(required = true, value_name = "RESULT.json")]
    results: Vec<PathBuf>,
    /// The branch the builds belong to.
    #[arg(long, default_value = "main")]
    branch: String,
    /// The target's name [default: the spec's name in each result].
    #[arg(long)]
    target: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, clap::Args)]
struct ImportArgs {
    /// Other history stores: SQLite files (read as data alone) or `postgres://` URLs.
    #[arg(required = true, value_name = "OTHER.sqlite|URL", value_parser = crate::settings::store)]
    others: Vec<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, clap::Args)]
struct Select {
    /// Only this target.
    #[arg(long)]
    target: Option<String>,
    /// Only this branch.
    #[arg(long)]
    branch: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The metric (`cold`, `warm`, `rss`, ...; `clibench report --explain` lists them).
    #[arg(value_parser = crate::settings::metric)]
    metric: Metric,
    /// Table rows: the last N points of each series (0: all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    rows: usize,
    #[command(flatten)]
    select: Select,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The page's format.
    #[arg(long, value_enum, default_value_t = PageFormat::Html)]
    format: PageFormat,
    /// Write the page to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Only these metrics (repeatable) [default: every metric in the store].
    #[arg(long = "metric", value_name = "METRIC", value_parser = crate::settings::metric)]
    metrics: Vec<Metric>,
    /// Also write every stored result in Bencher Metric Format to FILE (a JSON array,
    /// one BMF document per result beside its target, branch and testbed).
    #[arg(long, value_name = "FILE")]
    export_bmf: Option<PathBuf>,
    #[command(flatten)]
    select: Select,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PageFormat {
    /// One self-contained HTML page.
    Html,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The new result file.
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    /// Exit with 1 when a metric regressed.
    #[arg(long)]
    fail_on_regression: bool,
    /// The branch whose series it is checked against.
    #[arg(long, default_value = "main")]
    branch: String,
    /// The target's name [default: the spec's name in the result].
    #[arg(long)]
    target: Option<String>,
    /// How many of the most recent points it is compared with.
    #[arg(long, default_value_t = 30, value_name = "N")]
    lookback: usize,
    /// Only this metric (repeatable) [default: every metric of the result]. The metrics
    /// checked are one family: their p-values are adjusted together (Holm).
    #[arg(long = "metric", value_name = "METRIC", value_parser = crate::settings::metric)]
    metrics: Vec<Metric>,
    #[command(flatten)]
    store: StoreArg,
}

/// Runs `clibench history`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Sub::Add(args) => add(args),
        Sub::Import(args) => import(args),
        Sub::Show(args) => show(args),
        Sub::Report(args) => report(args),
        Sub::Check(args) => check(args),
    }
}

/// Opens the store to write, creating it.
fn open_to_write(store: &StoreArg) -> anyhow::Result<Store> {
    open_store(store.store.as_deref(), true)
}

/// Opens an existing store to read.
fn open_to_read(store: &StoreArg) -> anyhow::Result<Store> {
    open_store(store.store.as_deref(), false)
}

fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    let mut store = open_to_write(&args.store)?;
    let added = ingest::add_files(
        &mut store,
        &args.results,
        args.target.as_deref(),
        &args.branch,
    )
    .map_err(|error| match error {
        ingest::IngestError::Store(_) => anyhow::Error::new(error),
        other => input_error(bench_core::error_chain(&other)),
    })?;
    say!("{}", told::added_line(added, store.count()?, store.path()));
    Ok(ExitCode::SUCCESS)
}

fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let mut store = open_to_write(&args.store)?;
    for other in &args.others {
        location::check_flag(other).map_err(|error| input_if(true, error))?;
        let added = store
            .import(other, &ImportLimits::default())
            .map_err(|error| {
                let error = location::OpenError::from(error);
                input_if(error.is_input(), error)
                    .context(format!("failed to import {}", other.display()))
            })?;
        say!("{}", told::imported_line(other, added));
    }
    Ok(ExitCode::SUCCESS)
}

fn filter(select: &Select) -> Filter {
    Filter {
        target: select.target.clone(),
        branch: select.branch.clone(),
        testbed: None,
    }
}

fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = open_to_read(&args.select.store)?;
    let stored = store.records(&filter(&args.select))?;
    match told::show(&stored, args.metric, args.rows) {
        Shown::Nothing(line) => say!("{line}"),
        Shown::Series(text) => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let store = open_to_read(&args.select.store)?;
    let stored = store.records(&filter(&args.select))?;
    let metrics = if args.metrics.is_empty() {
        told::present_metrics(&stored)
    } else {
        args.metrics
    };
    let with_changes = told::with_changes(&stored, &metrics);
    let PageFormat::Html = args.format;
    let html = page::html(&with_changes)?;
    match &args.out {
        Some(path) => {
            bench_core::io::write_atomic(path, html.as_bytes())?;
            say!("{}", told::page_line(with_changes.len(), path));
        }
        None => out!("{html}"),
    }
    if let Some(path) = &args.export_bmf {
        bench_core::io::write_atomic(path, bmf::export(&stored).as_bytes())?;
        say!("{}", told::bmf_line(stored.len(), path));
    }
    Ok(ExitCode::SUCCESS)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let record = ingest::record_of(&args.result, args.target.as_deref(), &args.branch)
        .map_err(|error| input_error(bench_core::error_chain(&error)))?;
    let store = open_to_read(&args.store)?;
    let own = store.find(&record)?;
    let stored = store.records(&Filter::series_of(&record))?;
    let settings = check::Settings {
        lookback: args.lookback.max(1),
        ..check::Settings::default()
    };
    let checks = check::check(&record, own, &stored, &args.metrics, &settings);
    say!("{}", told::check_heading(&record));
    out!("{}", render::check_text(&checks));
    let regressed = told::regressed(&checks);
    if args.fail_on_regression && !regressed.is_empty() {
        say!("{}", told::regressed_line(&regressed));
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
