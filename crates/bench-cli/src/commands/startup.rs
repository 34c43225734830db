//! `clibench startup`: a hyperfine for interactive programs. Each run starts the
//! command in a fresh PTY and measures, from spawn: first byte, first frame,
//! ready (by the chosen mode), and the memory (RSS, PSS) of its family once settled.
//!
//! The family is the terminal's session plus any daemon the program detached
//! (setsid, double fork): clibench makes itself a child subreaper so that those
//! stay its descendants, measures all of its descendants, and stops them after
//! each run so that no run inherits another's daemon and nothing is left behind.

mod export;

use crate::exit::{FAILURE, input_error};
use crate::table::{Align, render};
use anyhow::Context;
use bench_proc::{Selector, snapshot, stop};
use bench_term::ready::parse_duration;
use bench_term::{ReadyGuard, ReadyMode, SpawnOptions, Terminal};
use export::{Figure, Report, Run};
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `clibench startup`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench startup -- python3
  clibench startup --ready 'pattern:>>> $' --runs 20 -- python3
  clibench startup --ready probe --show-screen -- pi
  clibench startup --ready stable:500ms --export-json startup.json -- htop
  clibench startup --export-hyperfine hyperfine.json -- python3
  clibench startup --ready-require '> $' --ready-reject 'Update available' -- my-agent
  clibench startup --quit '/quit,Enter' -- my-agent

Ready modes:
  probe            raw mode, then a typed probe echoed on screen (full-screen programs)
  pattern:REGEX    the screen text matches REGEX
  first-frame      the first line with at least 3 letters or digits
  stable:DURATION  the screen stays unchanged for DURATION (ready = its last change)

The screen at ready must not show a blocking dialog (trust this folder, an API key,
sign in, press Enter to continue, choose an option, a y/n question): such a run fails
\"blocked by a dialog\" with the screen, unless --allow-dialog or a --ready-require
that matches the dialog's line says it is expected.

Quit keys: names separated by commas or spaces: C-<letter>, Enter, Tab, Esc,
Backspace, Space, Comma, or text to type. A program still alive and silent 200 ms
after them is hung up.

The command inherits this environment, with TERM=xterm-256color; --env adds more.")]
pub struct Args {
    /// Measured runs.
    #[arg(long, default_value_t = 10, value_name = "N")]
    runs: usize,
    /// Runs before the measured ones, not recorded (warm caches).
    #[arg(long, default_value_t = 1, value_name = "N")]
    warmup: usize,
    /// When the program counts as ready: probe, pattern:REGEX, first-frame or stable:DURATION.
    #[arg(long, default_value = "probe", value_name = "MODE")]
    ready: String,
    /// Terminal columns.
    #[arg(long, default_value_t = 120)]
    cols: u16,
    /// Terminal rows.
    #[arg(long, default_value_t = 40)]
    rows: u16,
    /// Give up on a run after this long (e.g. 30s, 500ms, 2m).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    timeout: String,
    /// How long to keep the program running after ready before measuring its memory.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    settle: String,
    /// Extra environment variables for the command.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Write the runs and summary as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
    /// Write the summary as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Write the times to ready in hyperfine's --export-json shape to FILE, for
    /// hyperfine's plotting and statistics scripts.
    #[arg(long, value_name = "FILE")]
    export_hyperfine: Option<PathBuf>,
    /// Print the screen of the first measured run, as it was when memory was measured.
    #[arg(long)]
    show_screen: bool,
    /// A regex the screen at ready must match, else the run fails with the screen.
    #[arg(long, value_name = "REGEX")]
    ready_require: Option<String>,
    /// A regex that fails the run ("blocked by: REGEX") when the screen at ready matches
    /// it; repeatable.
    #[arg(long, value_name = "REGEX")]
    ready_reject: Vec<String>,
    /// Accept a blocking dialog on the screen at ready.
    #[arg(long)]
    allow_dialog: bool,
    /// Keys that ask the program to quit, e.g. `C-c,C-c` or `/quit,Enter`.
    #[arg(long, default_value = "C-c,C-c", value_name = "KEYS")]
    quit: String,
    /// Save each run's transcript (output.raw, input.raw, screen.txt, screen-at-ready.txt
    /// and recording.cast, an asciicast v2 recording) under DIR/warmup-N or DIR/run-N.
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// What `clibench startup` does, resolved from the flags.
#[derive(Debug)]
struct Settings {
    runs: usize,
    warmup: usize,
    mode: ReadyMode,
    guard: ReadyGuard,
    timeout: Duration,
    settle: Duration,
    options: SpawnOptions,
    command: Vec<String>,
    export_json: Option<PathBuf>,
    export_markdown: Option<PathBuf>,
    export_hyperfine: Option<PathBuf>,
    show_screen: bool,
    transcripts: Option<PathBuf>,
    /// Whether this process is a child subreaper, so that detached daemons stay
    /// its descendants.
    subreaper: bool,
}

impl TryFrom<Args> for Settings {
    type Error = anyhow::Error;

    fn try_from(args: Args) -> anyhow::Result<Settings> {
        if args.runs == 0 {
            return Err(input_error("--runs must be at least 1"));
        }
        if args.cols < 10 || args.rows < 2 {
            return Err(input_error(
                "the terminal must be at least 10 columns by 2 rows",
            ));
        }
        let mode: ReadyMode = args
            .ready
            .parse()
            .map_err(|e| input_error(format!("--ready: {e}")))?;
        let timeout =
            parse_duration(&args.timeout).map_err(|e| input_error(format!("--timeout: {e}")))?;
        let settle =
            parse_duration(&args.settle).map_err(|e| input_error(format!("--settle: {e}")))?;
        let regex = |flag: &str, pattern: &str| {
            regex::Regex::new(pattern).map_err(|e| input_error(format!("{flag}: {e}")))
        };
        let guard = ReadyGuard {
            require: args
                .ready_require
                .as_deref()
                .map(|p| regex("--ready-require", p))
                .transpose()?,
            reject: args
                .ready_reject
                .iter()
                .map(|p| regex("--ready-reject", p))
                .collect::<anyhow::Result<_>>()?,
            allow_dialog: args.allow_dialog,
            expected: Vec::new(),
        };
        let quit = bench_term::parse_key_list(&args.quit)
            .map_err(|e| input_error(format!("--quit: {e}")))?;
        let (program, rest) = args
            .command
            .split_first()
            .ok_or_else(|| input_error("no command given after --"))?;
        let mut options = SpawnOptions::new(program.clone())
            .args(rest.iter().cloned())
            .size(args.cols, args.rows)
            .quit_keys(quit, Duration::from_millis(150));
        for (key, value) in std::env::vars_os() {
            options = options.env(key, value);
        }
        options = options.env("TERM", "xterm-256color");
        let mut path = std::env::var_os("PATH");
        for pair in &args.env {
            let (key, value) = super::env_pair(pair)?;
            options = options.env(key, value);
            if key == "PATH" {
                path = Some(value.into());
            }
        }
        // Said once here rather than as the same spawn error for every run.
        super::program::find(program, path.as_deref()).map_err(input_error)?;
        Ok(Settings {
            runs: args.runs,
            warmup: args.warmup,
            mode,
            guard,
            timeout,
            settle,
            options,
            command: args
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            export_json: args.export_json,
            export_markdown: args.export_markdown,
            export_hyperfine: args.export_hyperfine,
            show_screen: args.show_screen,
            transcripts: args.transcripts,
            subreaper: false,
        })
    }
}

/// Runs `clibench startup`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut settings = Settings::try_from(args)?;
    settings.subreaper = match super::interrupt::stop_family_on_signal(DAEMON_GRACE) {
        Ok(()) => true,
        Err(error) => {
            eprintln!(
                "warning: {error}; daemons the program detaches are neither measured nor stopped"
            );
            false
        }
    };
    let total = settings.warmup + settings.runs;
    let progress = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    let mut runs = Vec::with_capacity(settings.runs);
    let mut first_screen = None;
    for index in 0..total {
        let warmup = index < settings.warmup;
        progress.set_prefix(if warmup { "warmup" } else { "run" });
        let mut options = settings.options.clone();
        if let Some(folder) = &settings.transcripts {
            options = options.transcript(folder.join(if warmup {
                format!("warmup-{}", index + 1)
            } else {
                format!("run-{}", index - settings.warmup + 1)
            }));
        }
        let (run, screen) = measure_once(&settings, &options);
        if let Some(error) = &run.error {
            progress.suspend(|| eprintln!("run {} failed: {error}", index + 1));
        } else if let Some(ready) = run.ready_seconds {
            progress.set_message(format!(
                "ready {}",
                bench_core::units::format_seconds(ready)
            ));
        }
        if !warmup {
            if first_screen.is_none() {
                first_screen = screen;
            }
            runs.push(run);
        }
        progress.inc(1);
    }
    progress.finish_and_clear();

    let report = Report::new(
        settings.command.clone(),
        settings.mode.to_string(),
        (settings.options.cols, settings.options.rows),
        runs,
    );
    if settings.show_screen
        && let Some(screen) = &first_screen
    {
        eprintln!(
            "Screen of the first run:\n{}\n",
            export::frame_screen(screen)
        );
    }
    eprint!("{}", summary_table(&report));
    if let Some(path) = &settings.export_json {
        let json = export::to_json(&report)?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            bench_core::io::write_atomic(path, json.as_bytes())?;
        }
    }
    if let Some(path) = &settings.export_markdown {
        bench_core::io::write_atomic(path, export::to_markdown(&report).as_bytes())?;
    }
    if let Some(path) = &settings.export_hyperfine {
        match export::to_hyperfine_json(&report) {
            Some(json) => bench_core::io::write_atomic(path, json.as_bytes())?,
            None => eprintln!(
                "warning: no run got ready, so there is nothing to export to {}",
                path.display()
            ),
        }
    }
    let failed = report.runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        eprintln!("{failed} of {} runs failed", report.runs.len());
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

/// How long detached daemons get between SIGTERM and SIGKILL after each run.
const DAEMON_GRACE: Duration = Duration::from_secs(2);

/// One run: spawn, ready, settle, measure the session's memory, close. Returns the
/// run and the screen at the memory measurement.
fn measure_once(settings: &Settings, options: &SpawnOptions) -> (Run, Option<String>) {
    let cpu_before = children_cpu_seconds();
    let (mut run, screen) = measure_run(settings, options);
    // Every process of the run is reaped by now (the terminal's child by close,
    // detached ones by stop), so their CPU time is in our children's counters.
    if let (Some(before), Some(after)) = (cpu_before, children_cpu_seconds()) {
        run.user_seconds = Some((after.0 - before.0).max(0.0));
        run.system_seconds = Some((after.1 - before.1).max(0.0));
    }
    (run, screen)
}

/// User and kernel CPU seconds of this process's reaped children, from
/// `/proc/self/stat`; `None` when it cannot be read.
fn children_cpu_seconds() -> Option<(f64, f64)> {
    let stat = bench_proc::process_stat(std::process::id())?;
    let per_second = rustix::param::clock_ticks_per_second() as f64;
    Some((
        stat.children_utime_ticks as f64 / per_second,
        stat.children_stime_ticks as f64 / per_second,
    ))
}

/// [`measure_once`] without the CPU accounting.
fn measure_run(settings: &Settings, options: &SpawnOptions) -> (Run, Option<String>) {
    let mut run = Run::default();
    let mut terminal = match Terminal::spawn(options) {
        Ok(terminal) => terminal,
        Err(error) => {
            run.error = Some(format!("{:#}", anyhow::Error::new(error)));
            return (run, None);
        }
    };
    let outcome = (|| -> anyhow::Result<()> {
        terminal.ready_guarded(&settings.mode, settings.timeout, &settings.guard)?;
        terminal.settle(settings.settle)?;
        let own = std::process::id();
        let family = if settings.subreaper {
            snapshot(&Selector::Tree(own)).map(|family| family.without(&[own]))
        } else {
            snapshot(&Selector::Session(terminal.pid()))
        }
        .context("failed to measure the memory of the program's processes")?;
        if family.processes.is_empty() {
            anyhow::bail!("the program exited while settling: no process left to measure");
        }
        run.rss_bytes = Some(family.total_rss_bytes());
        run.pss_bytes = family.total_pss_bytes();
        run.processes = Some(family.processes.len());
        Ok(())
    })();
    let timeline = terminal.timeline();
    run.first_byte_seconds = timeline.first_byte.map(|d| d.as_secs_f64());
    run.first_frame_seconds = timeline.first_frame.map(|d| d.as_secs_f64());
    // A start that ended at a dialog was not ready, whatever the ready mode saw.
    let blocked = outcome.as_ref().is_err_and(|error| {
        matches!(
            error.downcast_ref::<bench_term::TermError>(),
            Some(bench_term::TermError::Blocked { .. })
        )
    });
    run.ready_seconds = timeline.ready.filter(|_| !blocked).map(|d| d.as_secs_f64());
    let screen = terminal.screen_text();
    let closed = terminal.close();
    // Whatever is still a descendant left the terminal's session: a daemon.
    let detached = if settings.subreaper {
        stop(&Selector::Tree(std::process::id()), DAEMON_GRACE)
            .map(|report| {
                run.detached_stopped = Some(report.terminated.len());
            })
            .context("failed to stop the processes the program detached")
    } else {
        Ok(())
    };
    match (outcome, closed, detached) {
        (Err(error), _, _) => run.error = Some(format!("{error:#}")),
        (Ok(()), Err(error), _) => run.error = Some(format!("{:#}", anyhow::Error::new(error))),
        (Ok(()), Ok(_), Err(error)) => run.error = Some(format!("{error:#}")),
        (Ok(()), Ok(_), Ok(())) => {}
    }
    (run, Some(screen))
}

/// The summary for people: one row per figure.
fn summary_table(report: &Report) -> String {
    let rows: Vec<Vec<String>> = Figure::ALL
        .iter()
        .filter_map(|&figure| {
            let summary = report.summary(figure)?;
            let format = |value: f64| figure.format(value);
            Some(vec![
                figure.label().to_owned(),
                format(summary.min),
                format(summary.median),
                format!("{} ± {}", format(summary.mean), format(summary.std_dev)),
                format(summary.max),
            ])
        })
        .collect();
    let ok = report.runs.iter().filter(|r| r.error.is_none()).count();
    let mut out = format!(
        "{} ({} ready, {} of {} runs ok)\n",
        report.command.join(" "),
        report.ready_mode,
        ok,
        report.runs.len()
    );
    if rows.is_empty() {
        out.push_str("no run produced a measurement\n");
        return out;
    }
    out.push_str(&render(
        &["figure", "min", "median", "mean ± sd", "max"],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
        &rows,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_table_lists_every_measured_figure() {
        let report = export::tests::sample_report();
        insta::assert_snapshot!(summary_table(&report));
    }
}
