//! `clibench kernel`: the REPL kernel metrics of a protocol-3 kernel command, or of the
//! built-in reference kernel (see [`bench_cli::standalone::kernel`], which measures).
//! Summary on stderr; JSON on stdout with `--json`.

use super::request::{KernelRequest, kernel_settings};
use crate::exit::{FAILURE, input_error};
use bench_cli::exports::StartupExports;
use bench_cli::standalone::kernel::{self, Observer, Settings};
use bench_core::Side;
use bench_core::export::text;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench kernel`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench kernel                              the reference kernel, 5 runs
  clibench kernel --runs 10 --json > k.json    JSON on stdout
  clibench kernel -- ~/.venv/bin/python -m rlm.repl
                                               a protocol-3 kernel of your own

Each run starts the kernel in a new session in a temporary git repository with
an exact environment (PATH, USER, LOGNAME, VIRTUAL_ENV, PYTHONPATH, TMPDIR
when set; LANG=C.UTF-8; HOME a fresh empty folder, so that no ~/.bashrc or
other dotfile of yours is read, as for the pipeline's trial users; --env adds
more), measures every runtime metric in order, and stops at the first failure
of that run. Memory is the RSS of the kernel's session.")]
pub struct Args {
    /// Measured runs (each a fresh kernel, workspace and snapshot).
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: usize,
    /// Print the runs as a result file (the format of `clibench run`, which `clibench
    /// compare` compares) on stdout.
    #[arg(long)]
    json: bool,
    /// Write the summary as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Write the result file to FILE.
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
    /// Keep the `.jsonl` transcripts of every kernel session in DIR.
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
    /// The Python that runs the reference kernel (when no command is given).
    #[arg(long, default_value = "python3", value_name = "PROGRAM")]
    python: OsString,
    /// Code run first in the measured kernel; empty for none.
    #[arg(long, default_value = "from rlm import bash", value_name = "CODE")]
    prelude: String,
    /// How long to wait for `ready`, and for each request (e.g. 30s, 2m).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    timeout: String,
    /// Extra environment variables for the kernel.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The kernel command and its arguments; the reference kernel when omitted.
    #[arg(last = true, value_name = "KERNEL COMMAND")]
    command: Vec<OsString>,
}

/// The flags as settings, and the export files; a bad value is an input error.
fn resolve(args: Args) -> anyhow::Result<(Settings, StartupExports)> {
    let exports = StartupExports {
        json: args.export_json,
        markdown: args.export_markdown,
        hyperfine: None,
    };
    let request = KernelRequest {
        runs: args.runs,
        python: args.python,
        prelude: args.prelude,
        timeout: args.timeout,
        env: args.env,
        transcripts: args.transcripts,
        command: args.command,
    };
    let settings = kernel_settings(request).map_err(|error| input_error(error.to_string()))?;
    Ok((settings, exports))
}

/// Progress on stderr: each run as it starts, each failed metric as it ends.
struct Progress;

impl Observer for Progress {
    fn run_started(&mut self, index: usize, runs: usize) {
        say!("run {}/{runs}...", index + 1);
    }

    fn run_finished(&mut self, index: usize, side: &Side) {
        for line in kernel::failed_lines(index, side) {
            say!("{line}");
        }
    }
}

/// Runs `clibench kernel`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let (settings, exports) = resolve(args)?;
    let result = kernel::run(&settings, &mut Progress)?;
    let report = bench_core::Report::new(&result);
    say_part!("{}", text::report(&report));
    say!("\n{}", kernel::summary_line(&result.side, settings.runs));
    let complete = kernel::complete_runs(&result.side, settings.runs);
    if json {
        crate::show::json(result.to_json_string().trim_end());
    }
    exports.write(&result, "")?;
    if complete < settings.runs {
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
