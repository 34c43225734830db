//! `clibench startup`: a hyperfine for interactive programs (see
//! [`bench_cli::standalone::startup`], which measures). This file turns the flags into
//! settings, draws the progress bar, prints the summary and writes the exports.

use super::request::{StartupRequest, startup_settings};
use crate::exit::{FAILURE, input_error};
use anyhow::Context;
use bench_cli::exports::StartupExports;
use bench_cli::standalone::startup::{self, DAEMON_GRACE, Observer, Run, Settings};
use bench_core::export::text;
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench startup`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench startup -- python3
  clibench startup --ready 'pattern:>>> $' --runs 20 -- python3
  clibench startup --ready probe --show-screen -- pi
  clibench startup --ready stable:500ms --export-json startup.json -- htop
  clibench startup --export-hyperfine hyperfine.json -- python3
  clibench startup --ready-require '> $' --ready-reject 'Update' -- my-agent
  clibench startup --quit '/quit,Enter' -- my-agent

Ready modes:
  probe            raw mode, then a typed probe echoed on screen (TUIs)
  pattern:REGEX    the screen text matches REGEX
  first-frame      the first line with at least 3 letters or digits
  stable:DURATION  the screen stays unchanged for DURATION (ready = its last
                   change)
  exit             the program exits by itself (hyperfine's time, in a
                   terminal); a failing exit status fails the run unless
                   --ignore-failure

The screen at ready must not show a blocking dialog (trust this folder, an API
key, sign in, press Enter to continue, choose an option, a y/n question): such
a run fails \"blocked by a dialog\" with the screen, unless --allow-dialog or a
--ready-require that matches the dialog's line says it is expected.

Quit keys: names separated by commas or spaces: C-<letter>, Enter, Tab, Esc,
Backspace, Space, Comma, or text to type. A program still alive and silent
200 ms after them is hung up.

The command inherits this environment, with TERM=xterm-256color; --env adds
more.")]
pub struct Args {
    /// Measured runs.
    #[arg(long, default_value_t = 10, value_name = "N")]
    runs: usize,
    /// Runs before the measured ones, not recorded (warm caches).
    #[arg(long, default_value_t = 1, value_name = "N")]
    warmup: usize,
    /// When the program counts as ready: probe, pattern:REGEX, first-frame,
    /// stable:DURATION or exit.
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
    /// How long to keep the program running after ready before measuring its memory:
    /// auto (the default, as `clibench run`: until RSS and process count stay within 1%
    /// for 100ms, at most 5s), auto:MAX, auto:max=5s,quiet=100ms,tolerance=1%, or a
    /// fixed time (1s).
    #[arg(long, default_value = "auto", value_name = "SETTLE")]
    settle: String,
    /// With --ready exit: keep the time of a run that exited with a failing status
    /// (hyperfine's -i); without it such a run fails, as in hyperfine.
    #[arg(short = 'i', long)]
    ignore_failure: bool,
    /// Extra environment variables for the command.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Write the runs as a result file (the format of `clibench run`, which `clibench
    /// compare` compares) to FILE (`-` for stdout).
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
    /// Keys that ask the program to quit, e.g. `C-c,C-c,C-d` or `/quit,Enter`.
    #[arg(long, default_value = "C-c,C-c,C-d", value_name = "KEYS")]
    quit: String,
    /// Save each run's transcript (output.raw, input.raw, screen.txt, screen-at-ready.txt
    /// and recording.cast, an asciicast v2 recording) under DIR/warmup-N or DIR/run-N.
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Where the results go, from the flags: the files, `--export-json -` (stdout) and
/// `--show-screen`.
#[derive(Debug)]
struct Outputs {
    files: StartupExports,
    json_stdout: bool,
    show_screen: bool,
}

/// The flags as settings; a bad value is an input error.
fn resolve(args: Args) -> anyhow::Result<(Settings, Outputs)> {
    let json_stdout = args.export_json.as_deref() == Some(std::path::Path::new("-"));
    let outputs = Outputs {
        files: StartupExports {
            json: args.export_json.filter(|_| !json_stdout),
            markdown: args.export_markdown,
            hyperfine: args.export_hyperfine,
        },
        json_stdout,
        show_screen: args.show_screen,
    };
    let request = StartupRequest {
        runs: args.runs,
        warmup: args.warmup,
        size: (args.cols, args.rows),
        ready: args.ready,
        timeout: args.timeout,
        settle: args.settle,
        ignore_failure: args.ignore_failure,
        env: args.env,
        ready_require: args.ready_require,
        ready_reject: args.ready_reject,
        allow_dialog: args.allow_dialog,
        quit: args.quit,
        transcripts: args.transcripts,
        command: args.command,
    };
    let settings = startup_settings(request).map_err(|error| input_error(error.to_string()))?;
    Ok((settings, outputs))
}

/// The progress bar: which run, and the last time to ready or failure; and how many
/// warm-up runs come first, so that a failure names the run as `--runs` counts them.
struct Progress(ProgressBar, usize);

impl Observer for Progress {
    fn run_started(&mut self, _index: usize, warmup: bool) {
        self.0.set_prefix(if warmup { "warmup" } else { "run" });
    }

    fn run_finished(&mut self, index: usize, warmup: bool, run: &Run) {
        if let Some(error) = &run.error {
            let (kind, number) = if warmup {
                ("warm-up run", index + 1)
            } else {
                ("run", index - self.1 + 1)
            };
            self.0.suspend(|| say!("{kind} {number} failed: {error}"));
        } else if let Some(ready) = run.ready_seconds {
            self.0.set_message(format!(
                "ready {}",
                bench_core::units::format_seconds(ready)
            ));
        }
        self.0.inc(1);
    }
}

/// Runs `clibench startup`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (mut settings, outputs) = resolve(args)?;
    settings.subreaper = match super::interrupt::stop_family_on_signal(DAEMON_GRACE) {
        Ok(()) => true,
        Err(error) => {
            say!("warning: {error}; daemons the program detaches are neither measured nor stopped");
            false
        }
    };
    let total = settings.warmup + settings.runs;
    let progress = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    let mut observer = Progress(progress, settings.warmup);
    let outcome = startup::run(&settings, &mut observer);
    observer.0.finish_and_clear();

    let result = outcome.result;
    if outputs.show_screen
        && let Some(screen) = result.side.screens.first()
    {
        say!("Screen of the first run:\n{}\n", text::framed(&screen.text));
    }
    let report = bench_core::Report::new(&result);
    say_part!("{}", text::report(&report));
    say!(
        "\n({} ready, {} of {} runs ok)",
        settings.mode,
        outcome.runs - outcome.failed_runs,
        outcome.runs
    );
    if outputs.json_stdout {
        crate::show::json(result.to_json_string().trim_end());
    }
    if let Some(warning) = outputs
        .files
        .write(&result, &settings.command().join(" "))?
    {
        say!("{warning}");
    }
    if outcome.failed_runs > 0 {
        say!("{} of {} runs failed", outcome.failed_runs, outcome.runs);
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
