//! `clibench kernel`: the REPL kernel metrics (`kernel_start` ... `restore`) of a
//! protocol-3 kernel command, or of the built-in reference kernel, each run in a fresh
//! temporary git workspace. Summary on stderr; JSON on stdout with `--json`.

mod export;

use crate::exit::{FAILURE, input_error};
use anyhow::{Context, bail};
use bench_proc::{Selector, snapshot};
use bench_term::kernel::measure::{RuntimeOptions, run_all};
use bench_term::kernel::{KernelOptions, REFERENCE_KERNEL, REFERENCE_KERNEL_FILE_NAME};
use export::{Report, Run};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

/// Environment variables passed through to the kernel; everything else is left out.
const PASSED_THROUGH: [&str; 6] = [
    "PATH",
    "USER",
    "LOGNAME",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "TMPDIR",
];

/// Flags of `clibench kernel`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench kernel                                   the reference kernel, 5 runs
  clibench kernel --runs 10 --json > kernel.json    JSON on stdout
  clibench kernel -- ~/.venv/bin/python -m rlm.repl a protocol-3 kernel of your own

Each run starts the kernel in a new session in a temporary git repository with an exact
environment (PATH, USER, LOGNAME, VIRTUAL_ENV, PYTHONPATH, TMPDIR when set; LANG=C.UTF-8;
HOME a fresh empty folder, so that no ~/.bashrc or other dotfile of yours is read, as for
the pipeline's trial users; --env adds more), measures every runtime metric in order, and stops at the
first failure of that run. Memory is the RSS of the kernel's session.")]
pub struct Args {
    /// Measured runs (each a fresh kernel, workspace and snapshot).
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: usize,
    /// Print the runs and summaries as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Write the summary as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Write the JSON report to FILE.
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

/// What `clibench kernel` does, resolved from the flags.
#[derive(Debug)]
struct Settings {
    runs: usize,
    json: bool,
    export_markdown: Option<PathBuf>,
    export_json: Option<PathBuf>,
    transcripts: Option<PathBuf>,
    /// `None`: the reference kernel, run by `python`.
    command: Option<Vec<OsString>>,
    python: OsString,
    prelude: Option<String>,
    timeout: Duration,
    env: Vec<(OsString, OsString)>,
}

impl TryFrom<Args> for Settings {
    type Error = anyhow::Error;

    fn try_from(args: Args) -> anyhow::Result<Settings> {
        if args.runs == 0 {
            return Err(input_error("--runs must be at least 1"));
        }
        let timeout = bench_term::ready::parse_duration(&args.timeout)
            .map_err(|e| input_error(format!("--timeout: {e}")))?;
        let mut env: Vec<(OsString, OsString)> = PASSED_THROUGH
            .iter()
            .filter_map(|key| std::env::var_os(key).map(|value| (OsString::from(key), value)))
            .collect();
        env.push(("LANG".into(), "C.UTF-8".into()));
        for pair in &args.env {
            let (key, value) = super::env_pair(pair)?;
            env.retain(|(existing, _)| existing != key);
            env.push((key.into(), value.into()));
        }
        // Said once here rather than as the same spawn error for every run.
        let program = args.command.first().unwrap_or(&args.python);
        let path = env.iter().find(|(key, _)| key == "PATH").map(|(_, v)| v);
        super::program::find(program, path.map(OsString::as_os_str)).map_err(input_error)?;
        Ok(Settings {
            runs: args.runs,
            json: args.json,
            export_markdown: args.export_markdown,
            export_json: args.export_json,
            transcripts: args.transcripts,
            command: (!args.command.is_empty()).then_some(args.command),
            python: args.python,
            prelude: (!args.prelude.trim().is_empty()).then_some(args.prelude),
            timeout,
            env,
        })
    }
}

/// Runs `clibench kernel`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings::try_from(args)?;
    if let Some(folder) = &settings.transcripts {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating the transcript folder {}", folder.display()))?;
    }
    let mut runs = Vec::with_capacity(settings.runs);
    let mut shown_command = Vec::new();
    for trial in 0..settings.runs {
        eprintln!("run {}/{}...", trial + 1, settings.runs);
        let (run, command) = measure_once(&settings, trial)?;
        for (metric, error) in &run.errors {
            eprintln!("run {}: {metric} failed: {error}", trial + 1);
        }
        shown_command = command;
        runs.push(run);
    }
    let report = Report::new(shown_command, settings.command.is_none(), runs);
    eprint!("{}", export::summary_table(&report));
    let json = export::to_json(&report).context("encoding the JSON report")?;
    if settings.json {
        println!("{json}");
    }
    if let Some(path) = &settings.export_json {
        bench_core::io::write_atomic(path, json.as_bytes())?;
    }
    if let Some(path) = &settings.export_markdown {
        bench_core::io::write_atomic(path, export::to_markdown(&report).as_bytes())?;
    }
    if report.complete_runs() < report.runs.len() {
        return Ok(ExitCode::from(FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

/// One run in a fresh temporary folder: workspace, state, and (for the reference
/// kernel) the kernel's source. Returns the run and the command as shown to people.
fn measure_once(settings: &Settings, trial: usize) -> anyhow::Result<(Run, Vec<String>)> {
    let folder = tempfile::Builder::new()
        .prefix("clibench-kernel-")
        .tempdir()
        .context("creating a temporary folder for the kernel")?;
    let workspace = folder.path().join("workspace");
    create_workspace(&workspace)?;
    let state = folder.path().join("state");
    std::fs::create_dir(&state).context("creating the kernel's state folder")?;
    let (program, args, shown) = match &settings.command {
        Some(command) => {
            let (program, args) = command
                .split_first()
                .ok_or_else(|| input_error("empty kernel command"))?;
            let shown = command
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            (program.clone(), args.to_vec(), shown)
        }
        None => {
            let script = folder.path().join(REFERENCE_KERNEL_FILE_NAME);
            std::fs::write(&script, REFERENCE_KERNEL)
                .with_context(|| format!("writing the reference kernel to {}", script.display()))?;
            let shown = vec![
                settings.python.to_string_lossy().into_owned(),
                REFERENCE_KERNEL_FILE_NAME.to_owned(),
            ];
            (
                settings.python.clone(),
                vec![script.into_os_string()],
                shown,
            )
        }
    };
    // A fresh home, as the pipeline's trial users have: the caller's dotfiles (a ~/.bashrc
    // sourced by every shell cell) would be measured with the kernel.
    let mut env = settings.env.clone();
    if !env.iter().any(|(key, _)| key == "HOME") {
        let home = folder.path().join("home");
        std::fs::create_dir(&home).context("creating the kernel's home")?;
        env.push(("HOME".into(), home.into_os_string()));
    }
    let mut kernel = KernelOptions::new(program, args, &workspace, env);
    kernel.ready_timeout = settings.timeout;
    kernel.request_timeout = settings.timeout;
    let mut options = RuntimeOptions::new(kernel, &state);
    options.trial = trial;
    options.prelude = settings.prelude.clone();
    options.transcript_dir = settings.transcripts.clone();
    let report = run_all(&options, &mut |_, pid| {
        let family = snapshot(&Selector::Session(pid)).map_err(|error| error.to_string())?;
        if family.processes.is_empty() {
            return Err(format!("no process found in the kernel's session {pid}"));
        }
        Ok(family.total_rss_bytes())
    });
    let mut run = Run {
        python: report.python.clone(),
        workload: report.workload.map(|workload| workload.name().to_owned()),
        close_error: report.close_error.clone(),
        ..Run::default()
    };
    for (metric, value) in &report.values {
        match value {
            Ok(value) => {
                run.values.insert(metric.name().to_owned(), *value);
            }
            Err(error) => {
                run.errors.insert(metric.name().to_owned(), error.clone());
            }
        }
    }
    folder
        .close()
        .context("removing the kernel's temporary folder")?;
    Ok((run, shown))
}

/// A small git repository with one commit at fixed author and committer dates, so
/// `git status --porcelain` has a real (clean) tree to look at.
fn create_workspace(workspace: &Path) -> anyhow::Result<()> {
    // The same fixture repository the pipeline's install phase creates by default.
    let fixture = crate::spec::Workspace::default();
    std::fs::create_dir(workspace).context("creating the kernel's workspace")?;
    for (name, content) in &fixture.files {
        std::fs::write(workspace.join(name), content)
            .with_context(|| format!("writing {name} in the kernel's workspace"))?;
    }
    for argv in fixture.git_commands() {
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(workspace)
            .env("GIT_AUTHOR_DATE", &fixture.date)
            .env("GIT_COMMITTER_DATE", &fixture.date)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null())
            .output()
            .context("running git to create the kernel's workspace (is git installed?)")?;
        if !output.status.success() {
            bail!(
                "{} failed in the kernel's workspace: {}",
                argv.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
    }
    Ok(())
}
