//! `clibench startup`: a hyperfine for interactive programs. Each run starts the
//! command in a fresh PTY and measures, from spawn: first byte, first frame,
//! ready (by the chosen mode), and the memory (RSS, PSS) of its family once settled.
//!
//! The family is the terminal's session plus any daemon the program detached
//! (setsid, double fork): when this process is a child subreaper
//! ([`Settings::subreaper`]) those stay its descendants, so every run measures all of
//! its descendants and stops them after the run, so that no run inherits another's
//! daemon and nothing is left behind.
//!
//! [`run`] does the warm-up and measured runs and tells an [`Observer`] about each;
//! the [`Report`] it returns renders as a summary table, JSON, Markdown or hyperfine's
//! JSON (see [`export`]).

pub mod export;

pub use export::{Figure, Report, Run};

use super::spawn;
use bench_proc::settle::Waited;
use bench_proc::{ProcRoot, Selector, Settle, SnapshotError, StopError, snapshot, stop};
use bench_term::{Key, ReadyGuard, ReadyMode, SpawnOptions, TermError, Terminal};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// How long detached daemons get between SIGTERM and SIGKILL after each run.
pub const DAEMON_GRACE: Duration = Duration::from_secs(2);

/// What one `clibench startup` measures and how.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The program to start (a name looked up on `PATH`, or a path).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Environment variables set on top of this process's environment and
    /// `TERM=xterm-256color`, in order (a later one replaces an earlier one).
    pub env: Vec<(OsString, OsString)>,
    /// Terminal columns.
    pub cols: u16,
    /// Terminal rows.
    pub rows: u16,
    /// Keys that ask the program to quit at the end of a run, sent 150 ms apart.
    pub quit_keys: Vec<Key>,
    /// Measured runs.
    pub runs: usize,
    /// Runs before the measured ones, not kept in the report.
    pub warmup: usize,
    /// When the program counts as ready.
    pub mode: ReadyMode,
    /// What the screen at ready must and must not show.
    pub guard: ReadyGuard,
    /// The longest a run waits for ready.
    pub timeout: Duration,
    /// How long the program keeps running after ready before its memory is measured:
    /// a fixed time or until its family's memory is quiet.
    pub settle: Settle,
    /// With [`ReadyMode::Exit`]: keep the time of a run whose program exited with a
    /// failing status (hyperfine's `--ignore-failure`); without it such a run fails,
    /// as in hyperfine.
    pub ignore_failure: bool,
    /// Where each run's transcript goes: `DIR/warmup-N` or `DIR/run-N`.
    pub transcripts: Option<PathBuf>,
    /// Whether this process is a child subreaper
    /// ([`bench_proc::become_subreaper`]), so that detached daemons stay its
    /// descendants: they are then measured with the program and stopped after each run.
    /// Without it only the terminal's session is measured.
    pub subreaper: bool,
}

impl Settings {
    /// The command and its arguments as people read them.
    pub fn command(&self) -> Vec<String> {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|part| part.to_string_lossy().into_owned())
            .collect()
    }

    /// How every run starts the command: as every standalone measurement starts one in
    /// a terminal ([`spawn::terminal_options`]: this process's environment,
    /// `TERM=xterm-256color`), then [`Settings::env`] and the quit keys.
    pub fn spawn_options(&self) -> SpawnOptions {
        let command: Vec<OsString> = std::iter::once(&self.program)
            .chain(&self.args)
            .cloned()
            .collect();
        // Invariant: the only error is an empty command line, and this one has a program.
        let mut options = spawn::terminal_options(&command, self.cols, self.rows)
            .expect("a command line with a program")
            .quit_keys(self.quit_keys.clone());
        for (key, value) in &self.env {
            options = options.env(key, value);
        }
        options
    }
}

/// What a caller sees of [`run`] while it runs, to show progress. Both methods do
/// nothing by default.
pub trait Observer {
    /// Run `index` (from 0, the warm-up runs first) is about to start.
    fn run_started(&mut self, index: usize, warmup: bool) {
        let _ = (index, warmup);
    }

    /// Run `index` ended; [`Run::error`] says why when it failed.
    fn run_finished(&mut self, index: usize, warmup: bool, run: &Run) {
        let _ = (index, warmup, run);
    }
}

/// Observes nothing.
impl Observer for () {}

/// What [`run`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The measured runs and their summaries.
    pub report: Report,
    /// The screen of the first measured run that started, as it was when its memory
    /// was measured (or when it failed).
    pub first_screen: Option<String>,
}

/// Does the warm-up runs, then the measured ones. A run that fails is kept with its
/// [`Run::error`]; the loop goes on.
pub fn run(settings: &Settings, observer: &mut dyn Observer) -> Outcome {
    let options = settings.spawn_options();
    let mut runs = Vec::with_capacity(settings.runs);
    let mut first_screen = None;
    for index in 0..settings.warmup + settings.runs {
        let warmup = index < settings.warmup;
        observer.run_started(index, warmup);
        let mut options = options.clone();
        if let Some(folder) = &settings.transcripts {
            options = options.transcript(folder.join(if warmup {
                format!("warmup-{}", index + 1)
            } else {
                format!("run-{}", index - settings.warmup + 1)
            }));
        }
        let (run, screen) = measure_once(settings, &options);
        observer.run_finished(index, warmup, &run);
        if !warmup {
            if first_screen.is_none() {
                first_screen = screen;
            }
            runs.push(run);
        }
    }
    Outcome {
        report: Report::new(
            settings.command(),
            settings.mode.to_string(),
            (settings.cols, settings.rows),
            runs,
        ),
        first_screen,
    }
}

/// Why a run failed, as its [`Run::error`] says it.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Terminal(#[from] TermError),
    #[error("failed to measure the memory of the program's processes")]
    Measure(#[source] SnapshotError),
    #[error("the program exited while settling: no process left to measure")]
    ExitedWhileSettling,
    #[error("failed to stop the processes the program detached")]
    StopDetached(#[source] StopError),
    #[error("the program exited with a failing status ({0}); --ignore-failure keeps its time")]
    Failed(ExitStatus),
}

/// One run: spawn, ready, settle, measure the family's memory, close. Returns the
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
            run.error = Some(bench_core::error_chain(&error));
            return (run, None);
        }
    };
    let outcome = measure_family(settings, &mut terminal, &mut run);
    let timeline = terminal.timeline();
    run.first_byte_seconds = timeline.first_byte.map(|d| d.as_secs_f64());
    run.first_frame_seconds = timeline.first_frame.map(|d| d.as_secs_f64());
    // A start that ended at a dialog was not ready, whatever the ready mode saw; nor
    // was a program that failed, as hyperfine has no time for it.
    let blocked = matches!(
        outcome,
        Err(RunError::Terminal(TermError::Blocked { .. }) | RunError::Failed(_))
    );
    run.ready_seconds = timeline.ready.filter(|_| !blocked).map(|d| d.as_secs_f64());
    let screen = terminal.screen_text();
    let closed = terminal.close().map_err(RunError::from);
    // Whatever is still a descendant left the terminal's session: a daemon.
    let detached = if settings.subreaper {
        stop(&Selector::Tree(std::process::id()), DAEMON_GRACE)
            .map(|report| run.detached_stopped = Some(report.terminated.len()))
            .map_err(RunError::StopDetached)
    } else {
        Ok(())
    };
    // The first failure is the cause; what failed after it follows from it.
    run.error = outcome
        .and(closed.map(drop))
        .and(detached)
        .err()
        .map(|error| bench_core::error_chain(&error));
    (run, Some(screen))
}

/// Ready, settle, and the memory of the program's processes into `run`.
fn measure_family(
    settings: &Settings,
    terminal: &mut Terminal,
    run: &mut Run,
) -> Result<(), RunError> {
    terminal.ready_guarded(&settings.mode, settings.timeout, &settings.guard)?;
    let own = std::process::id();
    if let ReadyMode::Exit = settings.mode {
        // Ready is the exit: the time is hyperfine's, and no process is left to measure.
        let status = terminal.exit_status();
        run.exit_code = status.and_then(|status| status.code());
        return match status {
            Some(status) if !status.success() && !settings.ignore_failure => {
                Err(RunError::Failed(status))
            }
            _ => Ok(()),
        };
    }
    let (selector, exclude) = if settings.subreaper {
        (Selector::Tree(own), vec![own])
    } else {
        (Selector::Session(terminal.pid()), Vec::new())
    };
    let settled = bench_proc::settle::settle::<TermError>(
        &ProcRoot::live(),
        &selector,
        &exclude,
        &settings.settle,
        &mut |left| {
            let began = Instant::now();
            terminal.settle(left)?;
            // `Terminal::settle` ends early only when the terminal closed.
            Ok(if began.elapsed() < left {
                Waited::Closed
            } else {
                Waited::Full
            })
        },
    )?;
    run.settle = Some(settled);
    let family = if settings.subreaper {
        snapshot(&Selector::Tree(own)).map(|family| family.without(&[own]))
    } else {
        snapshot(&Selector::Session(terminal.pid()))
    }
    .map_err(RunError::Measure)?;
    if family.processes.is_empty() {
        return Err(RunError::ExitedWhileSettling);
    }
    run.rss_bytes = Some(family.total_rss_bytes());
    run.pss_bytes = family.total_pss_bytes();
    run.processes = Some(family.processes.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell that prints a prompt and waits, ready by that prompt.
    fn shell(runs: usize, warmup: usize) -> Settings {
        Settings {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "printf 'prompt> '; exec cat".into()],
            env: vec![("PS1".into(), "$ ".into())],
            cols: 80,
            rows: 24,
            quit_keys: vec![Key::Ctrl('c')],
            runs,
            warmup,
            mode: "pattern:prompt> $".parse().unwrap(),
            guard: ReadyGuard::default(),
            timeout: Duration::from_secs(30),
            settle: Settle::Fixed(Duration::from_millis(10)),
            ignore_failure: false,
            transcripts: None,
            subreaper: false,
        }
    }

    #[test]
    fn runs_start_the_command_with_its_size_quit_keys_and_env_over_term() {
        let mut settings = shell(1, 0);
        settings.env.push(("TERM".into(), "dumb".into()));
        let options = settings.spawn_options();
        assert_eq!(options.program, "/bin/sh");
        assert_eq!(options.args, ["-c", "printf 'prompt> '; exec cat"]);
        assert_eq!((options.cols, options.rows), (80, 24));
        assert_eq!(options.quit_keys, [Key::Ctrl('c')]);
        let var = |key: &str| {
            options
                .env
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, value)| value.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(var("TERM"), ["dumb"], "--env replaces TERM, once");
        assert_eq!(var("PS1"), ["$ "]);
    }

    #[derive(Default)]
    struct Calls(Vec<(&'static str, usize, bool)>);

    impl Observer for Calls {
        fn run_started(&mut self, index: usize, warmup: bool) {
            self.0.push(("started", index, warmup));
        }

        fn run_finished(&mut self, index: usize, warmup: bool, run: &Run) {
            assert_eq!(run.error, None, "run {index}");
            self.0.push(("finished", index, warmup));
        }
    }

    #[test]
    fn warmup_runs_are_observed_but_not_reported() {
        let mut calls = Calls::default();
        let outcome = run(&shell(2, 1), &mut calls);
        assert_eq!(
            calls.0,
            [
                ("started", 0, true),
                ("finished", 0, true),
                ("started", 1, false),
                ("finished", 1, false),
                ("started", 2, false),
                ("finished", 2, false),
            ]
        );
        let report = outcome.report;
        assert_eq!(report.runs.len(), 2);
        assert_eq!(
            report.command,
            ["/bin/sh", "-c", "printf 'prompt> '; exec cat"]
        );
        assert_eq!((report.cols, report.rows), (80, 24));
        for run in &report.runs {
            assert!(run.ready_seconds.is_some(), "{run:?}");
            assert_eq!(run.processes, Some(1), "{run:?}");
            assert!(run.rss_bytes.is_some_and(|bytes| bytes > 0), "{run:?}");
        }
        let screen = outcome.first_screen.expect("the first run's screen");
        assert_eq!(screen.lines().next(), Some("prompt>"), "{screen:?}");
    }

    /// A program that prints and exits with `code`, timed by its exit.
    fn one_shot(code: i32) -> Settings {
        let mut settings = shell(2, 0);
        settings.args = vec!["-c".into(), format!("echo hello; exit {code}").into()];
        settings.mode = ReadyMode::Exit;
        settings
    }

    #[test]
    fn exit_mode_times_a_program_that_prints_and_exits_with_its_status() {
        let outcome = run(&one_shot(0), &mut ());
        for run in &outcome.report.runs {
            assert_eq!(run.error, None, "{run:?}");
            assert_eq!(run.exit_code, Some(0));
            let ready = run.ready_seconds.expect("a time");
            assert!(ready > 0.0);
            // The output and the exit often arrive in the same wake-up, the output read
            // just after the exit was taken: the first byte is known, not before ready.
            assert!(run.first_byte_seconds.is_some(), "{run:?}");
            assert_eq!(run.rss_bytes, None, "nothing is left to measure");
        }
        assert_eq!(outcome.first_screen.as_deref(), Some("hello"));
    }

    #[test]
    fn exit_mode_fails_a_failing_status_unless_told_to_ignore_it() {
        let outcome = run(&one_shot(3), &mut ());
        for run in &outcome.report.runs {
            assert_eq!(run.exit_code, Some(3));
            assert_eq!(
                run.ready_seconds, None,
                "hyperfine keeps no time for a failure"
            );
            let error = run.error.as_deref().expect("a failed run");
            assert!(error.contains("exit status: 3"), "{error}");
        }
        let mut ignoring = one_shot(3);
        ignoring.ignore_failure = true;
        for run in &run(&ignoring, &mut ()).report.runs {
            assert_eq!(run.error, None, "{run:?}");
            assert_eq!(run.exit_code, Some(3));
            assert!(run.ready_seconds.is_some());
        }
    }

    #[test]
    fn a_program_that_cannot_start_fails_every_run_with_the_reason() {
        let mut settings = shell(2, 0);
        settings.program = "/nonexistent/program".into();
        let outcome = run(&settings, &mut ());
        assert_eq!(outcome.report.runs.len(), 2);
        for run in &outcome.report.runs {
            let error = run.error.as_deref().expect("a failed run");
            // The cause follows the failure, as in the JSON export.
            assert!(
                error.starts_with("failed to start /nonexistent/program in a pseudo-terminal: "),
                "{error}"
            );
            assert_eq!(run.ready_seconds, None);
        }
        assert_eq!(outcome.first_screen, None);
    }
}
