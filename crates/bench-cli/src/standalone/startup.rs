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
//! it records the measured runs into a [`ResultFile`] (trial N is measured run N, its
//! metrics `first_byte`, `first_frame`, `ready`, `rss`, `pss`, `user_cpu` and
//! `system_cpu`), which bench-core's exporters render and `clibench compare` compares.

use super::spawn;
use crate::pipeline::program::start::{self, Ready, ReadyWait, Started, spawn_to_ready};
use crate::pipeline::program::terminal::settle_reading;
use bench_core::detail::Screen;
use bench_core::{Metric, Phase, Request, ResultFile, Role, Sample, Side, record};
use bench_proc::{Selector, Settle, SnapshotError, StopError, snapshot, stop};
use bench_term::{Key, ReadyGuard, ReadyMode, SpawnOptions, TermError, Terminal};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

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
    /// a terminal (`spawn::terminal_options`: this process's environment,
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

    /// When every run counts as ready: the same wait as the measure phase's starts.
    fn ready_wait(&self) -> ReadyWait<'_> {
        ReadyWait {
            mode: &self.mode,
            guard: &self.guard,
            timeout: self.timeout,
        }
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

/// What one run measured, as an [`Observer`] hears of it before it is recorded. Every
/// figure is `None` when the run failed before it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// Spawn to the first byte of output, seconds.
    pub first_byte_seconds: Option<f64>,
    /// Spawn to the first line with at least 3 letters or digits, seconds.
    pub first_frame_seconds: Option<f64>,
    /// Spawn to ready by the chosen mode, seconds.
    pub ready_seconds: Option<f64>,
    /// RSS of the program's processes once settled, bytes.
    pub rss_bytes: Option<u64>,
    /// PSS of the program's processes once settled, bytes (`None` when unreadable).
    pub pss_bytes: Option<u64>,
    /// How many processes the family had when memory was measured.
    pub processes: Option<usize>,
    /// How many detached processes (daemons outside the terminal's session) were
    /// still running after close and had to be stopped.
    pub detached_stopped: Option<usize>,
    /// User-mode CPU seconds of the run's processes that clibench reaped (its
    /// children's `cutime` in `/proc/self/stat`, as hyperfine's `user`).
    pub user_seconds: Option<f64>,
    /// Kernel-mode CPU seconds of the same processes (`cstime`, hyperfine's `system`).
    pub system_seconds: Option<f64>,
    /// The program's exit code, when it exited by itself with one (`--ready exit`).
    pub exit_code: Option<i32>,
    /// What the settle before the memory measurement did.
    pub settle: Option<bench_proc::SettleReport>,
    /// Why the run failed.
    pub error: Option<String>,
}

/// The `runtime` fact that counts the detached processes stopped after the runs.
pub(crate) const DETACHED_STOPPED_KEY: &str = "detached_stopped";

/// The session label of the screen kept in the result: the first measured run's, as
/// it was when its memory was measured (or when the run failed).
pub(crate) const SCREEN_SESSION: &str = "settled";

/// The session label of a run's settle in its trial record.
pub(crate) const SETTLE_SESSION: &str = "startup";

/// What [`run`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The measured runs, recorded; the screen of the first measured run that started is
    /// its first [`Side::screens`] entry.
    pub result: ResultFile,
    /// How many measured runs there were.
    pub runs: usize,
    /// How many of them failed.
    pub failed_runs: usize,
}

impl Settings {
    /// The request a result of these settings answers: the command as its build
    /// identifier (as hyperfine names a benchmark by its command), and the settings.
    pub fn request(&self) -> Request {
        let mut request = Request::new(self.command().join(" "), Role::Candidate);
        for (key, value) in [
            ("command", self.command().join(" ")),
            ("ready_mode", self.mode.to_string()),
            ("terminal", format!("{}x{}", self.cols, self.rows)),
            ("runs", self.runs.to_string()),
            ("warmup", self.warmup.to_string()),
            ("settle", self.settle.to_string()),
            ("timeout", format!("{:?}", self.timeout)),
            ("ignore_failure", self.ignore_failure.to_string()),
        ] {
            request.config.insert(key.to_owned(), value);
        }
        request
    }
}

/// Records `run` as `trial` of `side`. A run that failed has its error on the figure it
/// did not reach: `ready` when it never got ready, else `rss`; a run that failed after
/// it was measured (closing it, stopping its daemons) keeps its figures and names its
/// error as the side's error, the first such run's.
pub(crate) fn record_run(side: &mut Side, trial: u32, run: &Run) {
    let mut value = |metric: Metric, value: Option<f64>| {
        if let Some(value) = value {
            record(side, metric, trial, Sample::Value(value));
        }
    };
    value(Metric::FirstByte, run.first_byte_seconds);
    value(Metric::FirstFrame, run.first_frame_seconds);
    value(Metric::Ready, run.ready_seconds);
    value(Metric::Rss, run.rss_bytes.map(|bytes| bytes as f64));
    value(Metric::Pss, run.pss_bytes.map(|bytes| bytes as f64));
    value(Metric::UserCpu, run.user_seconds);
    value(Metric::SystemCpu, run.system_seconds);
    let trial_record = side.trial_record_mut(Phase::Measure, trial);
    if let Some(processes) = run.processes {
        trial_record.process_count = Some(u32::try_from(processes).unwrap_or(u32::MAX));
    }
    trial_record.exit_code = run.exit_code;
    if let Some(settle) = &run.settle {
        trial_record.push_settle(settle.record(SETTLE_SESSION));
    }
    if let Some(error) = &run.error {
        let unreached = if run.ready_seconds.is_none() {
            Some(Metric::Ready)
        } else if run.rss_bytes.is_none() {
            Some(Metric::Rss)
        } else {
            None
        };
        match unreached {
            Some(metric) => record(side, metric, trial, Sample::Error(error.clone())),
            None if side.error.is_none() => side.set_error(format!("run {}: {error}", trial + 1)),
            None => {}
        }
    }
}

/// Does the warm-up runs, then the measured ones. A run that fails is kept with its
/// [`Run::error`]; the loop goes on.
pub fn run(settings: &Settings, observer: &mut dyn Observer) -> Outcome {
    let options = settings.spawn_options();
    let mut result = ResultFile::new(settings.request());
    let mut measured: u32 = 0;
    let mut failed_runs = 0;
    let mut detached_stopped = None;
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
            let side = &mut result.side;
            if side.screens.is_empty()
                && let Some(screen) = screen
            {
                side.screens.push(Screen::new(
                    Phase::Measure,
                    measured,
                    SCREEN_SESSION,
                    screen,
                ));
            }
            record_run(side, measured, &run);
            failed_runs += usize::from(run.error.is_some());
            if let Some(stopped) = run.detached_stopped {
                *detached_stopped.get_or_insert(0) += stopped;
            }
            measured += 1;
        }
    }
    if let Some(stopped) = detached_stopped {
        result
            .side
            .runtime
            .insert(DETACHED_STOPPED_KEY.to_owned(), stopped.to_string());
    }
    Outcome {
        result,
        runs: settings.runs,
        failed_runs,
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
/// `getrusage(RUSAGE_CHILDREN)`; `None` when it fails. Linux adds each reaped child's
/// CPU time there in nanoseconds and reports it in microseconds, where
/// `/proc/self/stat`'s `cutime` counts whole clock ticks (10 ms at the usual 100 Hz),
/// too coarse for a start that takes a few of them.
fn children_cpu_seconds() -> Option<(f64, f64)> {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the call to fill.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return None;
    }
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    Some((seconds(usage.ru_utime), seconds(usage.ru_stime)))
}

/// [`measure_once`] without the CPU accounting.
fn measure_run(settings: &Settings, options: &SpawnOptions) -> (Run, Option<String>) {
    let mut run = Run::default();
    let Started {
        mut terminal,
        ready,
    } = match spawn_to_ready(options, settings.ready_wait()) {
        Ok(started) => started,
        Err(error) => {
            run.error = Some(bench_core::error_chain(&error));
            return (run, None);
        }
    };
    let ready = ready.map_err(RunError::from);
    let ready_at = ready.as_ref().ok().copied();
    let outcome = ready.and_then(|ready| measure_family(settings, &mut terminal, ready, &mut run));
    // Read after the settle: a program may write its first byte only after ready.
    let timeline = start::timeline(&terminal, ready_at.as_ref());
    run.first_byte_seconds = timeline.first_byte.map(|d| d.as_secs_f64());
    run.first_frame_seconds = timeline.first_frame.map(|d| d.as_secs_f64());
    // A program that failed has no time, as hyperfine has none for it.
    let failed = matches!(outcome, Err(RunError::Failed(_)));
    run.ready_seconds = timeline.ready.filter(|_| !failed).map(|d| d.as_secs_f64());
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

/// After a `ready` start: its exit status, or its settle and the memory of the program's
/// processes, into `run`.
fn measure_family(
    settings: &Settings,
    terminal: &mut Terminal,
    ready: Ready,
    run: &mut Run,
) -> Result<(), RunError> {
    if let Ready::Exited { status, .. } = ready {
        // Ready is the exit: the time is hyperfine's, and no process is left to measure.
        run.exit_code = status.and_then(|status| status.code());
        return match status {
            Some(status) if !status.success() && !settings.ignore_failure => {
                Err(RunError::Failed(status))
            }
            _ => Ok(()),
        };
    }
    let own = std::process::id();
    let (selector, exclude) = if settings.subreaper {
        (Selector::Tree(own), vec![own])
    } else {
        (Selector::Session(terminal.pid()), Vec::new())
    };
    run.settle = Some(settle_reading(
        terminal,
        &selector,
        &exclude,
        &settings.settle,
    )?);
    let family = snapshot(&selector)
        .map(|family| family.without(&exclude))
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

    #[test]
    fn a_reaped_childs_cpu_time_is_counted_finer_than_a_clock_tick() {
        let before = children_cpu_seconds().unwrap();
        let status = std::process::Command::new("/bin/true").status().unwrap();
        assert!(status.success());
        let after = children_cpu_seconds().unwrap();
        let spent = (after.0 - before.0) + (after.1 - before.1);
        // Starting a program costs some CPU, well under a 10 ms tick: counted in ticks,
        // it would read 0 (or whole ticks, when other tests' children were reaped too).
        let ticks = spent * 100.0;
        assert!(spent > 0.0, "{spent} s");
        assert!(
            (ticks - ticks.round()).abs() > 1e-9,
            "{spent} s is whole ticks"
        );
    }

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
    fn a_failed_run_names_its_error_on_the_figure_it_did_not_reach() {
        let mut side = Side::new("x");
        let never_ready = Run {
            first_byte_seconds: Some(0.01),
            error: Some("timed out".into()),
            ..Run::default()
        };
        record_run(&mut side, 0, &never_ready);
        let no_memory = Run {
            ready_seconds: Some(0.2),
            error: Some("no process left".into()),
            ..Run::default()
        };
        record_run(&mut side, 1, &no_memory);
        let measured = Run {
            ready_seconds: Some(0.3),
            rss_bytes: Some(4096),
            processes: Some(2),
            error: Some("failed to stop the processes the program detached".into()),
            ..Run::default()
        };
        record_run(&mut side, 2, &measured);
        record_run(&mut side, 3, &measured);
        assert_eq!(
            side.metrics[&Metric::Ready],
            [
                bench_core::Observation::error(0, "timed out"),
                bench_core::Observation::value(1, 0.2),
                bench_core::Observation::value(2, 0.3),
                bench_core::Observation::value(3, 0.3),
            ]
        );
        assert_eq!(
            side.metrics[&Metric::Rss],
            [
                bench_core::Observation::error(1, "no process left"),
                bench_core::Observation::value(2, 4096.0),
                bench_core::Observation::value(3, 4096.0),
            ]
        );
        assert_eq!(
            side.error.as_deref(),
            Some("run 3: failed to stop the processes the program detached")
        );
        assert_eq!(side.trials.len(), 4, "a record per run");
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
        assert_eq!((outcome.runs, outcome.failed_runs), (2, 0));
        let result = outcome.result;
        result.validate().unwrap();
        assert_eq!(result.side.sha, "/bin/sh -c printf 'prompt> '; exec cat");
        assert_eq!(result.request.config["terminal"], "80x24");
        let side = &result.side;
        assert_eq!(side.values(Metric::Ready).len(), 2, "{side:?}");
        let rss = side.values(Metric::Rss);
        assert!(
            rss.len() == 2 && rss.iter().all(|&bytes| bytes > 0.0),
            "{side:?}"
        );
        for run in 0..2 {
            let record = trial(side, run);
            assert_eq!(record.process_count, Some(1), "{side:?}");
            let settles: Vec<_> = record.settles.iter().map(|s| s.session.as_str()).collect();
            assert_eq!(settles, [SETTLE_SESSION], "{side:?}");
            assert_eq!(record.exit_code, None, "clibench stopped it");
        }
        let screen = &side.screens[0];
        assert_eq!((screen.trial, screen.session.as_str()), (0, SCREEN_SESSION));
        assert_eq!(screen.text.lines().next(), Some("prompt>"), "{screen:?}");
    }

    /// A program that prints and exits with `code`, timed by its exit.
    fn one_shot(code: i32) -> Settings {
        let mut settings = shell(2, 0);
        settings.args = vec!["-c".into(), format!("echo hello; exit {code}").into()];
        settings.mode = ReadyMode::Exit;
        settings
    }

    /// The trial record of measured run `trial`.
    fn trial(side: &Side, trial: u32) -> &bench_core::TrialRecord {
        side.trials
            .iter()
            .find(|record| record.phase == Phase::Measure && record.trial == trial)
            .expect("a trial record per run")
    }

    #[test]
    fn exit_mode_times_a_program_that_prints_and_exits_with_its_status() {
        let outcome = run(&one_shot(0), &mut ());
        let side = &outcome.result.side;
        assert_eq!((outcome.runs, outcome.failed_runs), (2, 0), "{side:?}");
        let ready = side.values(Metric::Ready);
        assert!(
            ready.len() == 2 && ready.iter().all(|&t| t > 0.0),
            "{side:?}"
        );
        // The output and the exit often arrive in the same wake-up, the output read
        // just after the exit was taken: the first byte is known, not before ready.
        assert_eq!(side.values(Metric::FirstByte).len(), 2, "{side:?}");
        assert!(
            !side.metrics.contains_key(&Metric::Rss),
            "nothing is left to measure"
        );
        for run in 0..2 {
            assert_eq!(trial(side, run).exit_code, Some(0));
            assert!(trial(side, run).settles.is_empty(), "nothing to settle");
        }
        assert_eq!(side.screens[0].text, "hello");
    }

    #[test]
    fn exit_mode_fails_a_failing_status_unless_told_to_ignore_it() {
        let outcome = run(&one_shot(3), &mut ());
        let side = &outcome.result.side;
        assert_eq!(outcome.failed_runs, 2);
        assert!(
            side.values(Metric::Ready).is_empty(),
            "hyperfine keeps no time for a failure"
        );
        for sample in &side.metrics[&Metric::Ready] {
            let error = sample.error.as_deref().expect("a failed run");
            assert!(error.contains("exit status: 3"), "{error}");
        }
        assert_eq!(trial(side, 1).exit_code, Some(3));
        let mut ignoring = one_shot(3);
        ignoring.ignore_failure = true;
        let outcome = run(&ignoring, &mut ());
        let side = &outcome.result.side;
        assert_eq!(outcome.failed_runs, 0, "{side:?}");
        assert_eq!(side.values(Metric::Ready).len(), 2);
        assert_eq!(trial(side, 0).exit_code, Some(3));
    }

    #[test]
    fn a_program_that_cannot_start_fails_every_run_with_the_reason() {
        let mut settings = shell(2, 0);
        settings.program = "/nonexistent/program".into();
        let outcome = run(&settings, &mut ());
        assert_eq!((outcome.runs, outcome.failed_runs), (2, 2));
        let ready = &outcome.result.side.metrics[&Metric::Ready];
        assert_eq!(ready.len(), 2);
        for sample in ready {
            let error = sample.error.as_deref().expect("a failed run");
            // The cause follows the failure, as in the JSON export.
            assert!(
                error.starts_with("failed to start /nonexistent/program in a pseudo-terminal: "),
                "{error}"
            );
        }
        assert!(outcome.result.side.screens.is_empty());
    }
}
