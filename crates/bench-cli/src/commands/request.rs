//! What `clibench startup`, `kernel`, `mem` and `staircase` are asked for, as plain
//! values, checked and turned into their settings: run counts within the result format,
//! durations, patterns, quit keys, `KEY=VALUE` environment pairs, a program that exists,
//! and what to measure. A bad
//! value is the caller's ([`RequestError`]), said once before anything starts.

use bench_cli::standalone::kernel::{self, Kernel};
use bench_cli::standalone::mem::{self, Target};
use bench_cli::standalone::program::{self, NotFound};
use bench_cli::standalone::staircase::{self, Ready};
use bench_cli::standalone::startup;
use bench_term::{ReadyGuard, ReadyMode};
use std::ffi::OsString;
use std::path::PathBuf;

/// A value that cannot be used; every one is the caller's mistake.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// No run to measure.
    #[error("--runs must be at least 1")]
    NoRuns,
    /// More runs than a result file numbers.
    #[error("--runs must be at most {most}")]
    TooManyRuns {
        /// The most a result holds.
        most: usize,
    },
    /// A terminal too small to show anything.
    #[error("the terminal must be at least 10 columns by 2 rows")]
    TinyTerminal,
    /// A flag's value that does not parse; the text says why.
    #[error("{flag}: {why}")]
    Value {
        /// The flag.
        flag: &'static str,
        /// Why its value does not parse.
        why: String,
    },
    /// An environment pair without `=` or with an empty key.
    #[error("--env {pair:?}: expected KEY=VALUE")]
    EnvPair {
        /// The pair as given.
        pair: String,
    },
    /// Nothing after `--`.
    #[error("no command given after --")]
    NoCommand,
    /// The program cannot be started.
    #[error(transparent)]
    Program(#[from] NotFound),
    /// `mem` measures one thing: a process, a user's processes or a command.
    #[error("give exactly one of --pid PID, --user USER or -- COMMAND")]
    MemTarget,
    /// A staircase of no instance.
    #[error("--count must be at least 1")]
    NoCount,
}

fn value(flag: &'static str) -> impl Fn(&dyn std::fmt::Display) -> RequestError {
    move |why| RequestError::Value {
        flag,
        why: why.to_string(),
    }
}

/// `runs` within 1 and what a result file numbers (trials 0 to `MAX_TRIAL`).
fn runs(runs: usize) -> Result<usize, RequestError> {
    if runs == 0 {
        return Err(RequestError::NoRuns);
    }
    let most = bench_core::MAX_TRIAL as usize + 1;
    if runs > most {
        return Err(RequestError::TooManyRuns { most });
    }
    Ok(runs)
}

/// Each `--env KEY=VALUE`, split.
fn env_pairs(pairs: &[String]) -> Result<Vec<(OsString, OsString)>, RequestError> {
    pairs
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .filter(|(key, _)| !key.is_empty())
                .map(|(key, value)| (key.into(), value.into()))
                .ok_or_else(|| RequestError::EnvPair { pair: pair.clone() })
        })
        .collect()
}

/// What `clibench startup` was asked for.
#[derive(Debug, Clone)]
pub struct StartupRequest {
    /// Measured runs.
    pub runs: usize,
    /// Runs before them.
    pub warmup: usize,
    /// Terminal columns and rows.
    pub size: (u16, u16),
    /// The ready mode, as `--ready` writes it.
    pub ready: String,
    /// The longest wait for ready, as `--timeout` writes it.
    pub timeout: String,
    /// The settle, as `--settle` writes it.
    pub settle: String,
    /// Keep the time of a run that exited failing.
    pub ignore_failure: bool,
    /// `--env` pairs.
    pub env: Vec<String>,
    /// `--ready-require`.
    pub ready_require: Option<String>,
    /// `--ready-reject`, each.
    pub ready_reject: Vec<String>,
    /// Accept a blocking dialog at ready.
    pub allow_dialog: bool,
    /// The quit keys, as `--quit` writes them.
    pub quit: String,
    /// Where each run's transcript goes.
    pub transcripts: Option<PathBuf>,
    /// The command and its arguments.
    pub command: Vec<OsString>,
}

/// `clibench startup`'s settings (not yet a subreaper: that is the caller's to become).
pub fn startup_settings(request: StartupRequest) -> Result<startup::Settings, RequestError> {
    let runs = runs(request.runs)?;
    let (cols, rows) = request.size;
    if cols < 10 || rows < 2 {
        return Err(RequestError::TinyTerminal);
    }
    let mode = request.ready.parse().map_err(|e| value("--ready")(&e))?;
    let timeout =
        bench_core::units::parse_duration(&request.timeout).map_err(|e| value("--timeout")(&e))?;
    let settle: bench_proc::Settle = request
        .settle
        .parse()
        .map_err(|e| value("--settle")(&bench_core::error_chain(&e)))?;
    let regex = |flag: &'static str, pattern: &str| {
        bench_term::ready_regex(pattern).map_err(|e| value(flag)(&e))
    };
    let guard = ReadyGuard {
        require: request
            .ready_require
            .as_deref()
            .map(|p| regex("--ready-require", p))
            .transpose()?,
        reject: request
            .ready_reject
            .iter()
            .map(|p| regex("--ready-reject", p))
            .collect::<Result<_, _>>()?,
        allow_dialog: request.allow_dialog,
        expected: Vec::new(),
    };
    let quit_keys = bench_term::parse_key_list(&request.quit).map_err(|e| value("--quit")(&e))?;
    let (program, rest) = request
        .command
        .split_first()
        .ok_or(RequestError::NoCommand)?;
    let env = env_pairs(&request.env)?;
    let path = env
        .iter()
        .rev()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var_os("PATH"));
    // Said once here rather than as the same spawn error for every run.
    program::find(program, path.as_deref())?;
    Ok(startup::Settings {
        program: program.clone(),
        args: rest.to_vec(),
        env,
        cols,
        rows,
        quit_keys,
        runs,
        warmup: request.warmup,
        mode,
        guard,
        timeout,
        settle,
        ignore_failure: request.ignore_failure,
        transcripts: request.transcripts,
        subreaper: false,
    })
}

/// What `clibench kernel` was asked for.
#[derive(Debug, Clone)]
pub struct KernelRequest {
    /// Measured runs.
    pub runs: usize,
    /// The Python that runs the reference kernel.
    pub python: OsString,
    /// Code run first in the kernel; blank for none.
    pub prelude: String,
    /// The longest wait, as `--timeout` writes it.
    pub timeout: String,
    /// `--env` pairs.
    pub env: Vec<String>,
    /// Where the transcripts go.
    pub transcripts: Option<PathBuf>,
    /// The kernel command; empty for the reference kernel.
    pub command: Vec<OsString>,
}

/// `clibench kernel`'s settings.
pub fn kernel_settings(request: KernelRequest) -> Result<kernel::Settings, RequestError> {
    let runs = runs(request.runs)?;
    let timeout =
        bench_core::units::parse_duration(&request.timeout).map_err(|e| value("--timeout")(&e))?;
    let env = kernel::environment(env_pairs(&request.env)?);
    // Said once here rather than as the same spawn error for every run.
    let program = request.command.first().unwrap_or(&request.python);
    let path = env.iter().find(|(key, _)| key == "PATH").map(|(_, v)| v);
    program::find(program, path.map(OsString::as_os_str))?;
    let kernel = match request.command.split_first() {
        Some((program, rest)) => Kernel::Command {
            program: program.clone(),
            args: rest.to_vec(),
        },
        None => Kernel::Reference {
            python: request.python,
        },
    };
    Ok(kernel::Settings {
        runs,
        kernel,
        prelude: (!request.prelude.trim().is_empty()).then_some(request.prelude),
        timeout,
        env,
        transcripts: request.transcripts,
    })
}

/// `--settle`, as `run` settles: `auto`, `auto:MAX`, its full form, or a fixed time.
fn settle(text: &str) -> Result<bench_proc::Settle, RequestError> {
    text.parse()
        .map_err(|e| value("--settle")(&bench_core::error_chain(&e)))
}

/// What `clibench mem` was asked for.
#[derive(Debug, Clone, Default)]
pub struct MemRequest {
    /// `--pid`: a process and its descendants.
    pub pid: Option<u32>,
    /// `--user`: a user's processes, by name.
    pub user: Option<String>,
    /// A command to start, settle, measure and stop.
    pub command: Vec<OsString>,
    /// `--settle`, as written.
    pub settle: String,
    /// Start the command in a terminal.
    pub tty: bool,
}

/// `clibench mem`'s settings: exactly one target, a user that exists.
pub fn mem_settings(request: MemRequest) -> Result<mem::Settings, RequestError> {
    let settle = settle(&request.settle)?;
    let given = usize::from(request.pid.is_some())
        + usize::from(request.user.is_some())
        + usize::from(!request.command.is_empty());
    if given != 1 {
        return Err(RequestError::MemTarget);
    }
    let target = if let Some(pid) = request.pid {
        Target::Pid(pid)
    } else if let Some(user) = request.user {
        let uid = mem::lookup_user(&user)
            .ok_or_else(|| value("--user")(&format!("no such user: {user}")))?;
        Target::User { uid, name: user }
    } else {
        Target::Command(request.command)
    };
    Ok(mem::Settings {
        target,
        settle,
        tty: request.tty,
    })
}

/// What `clibench staircase` was asked for.
#[derive(Debug, Clone, Default)]
pub struct StaircaseRequest {
    /// Instances to add after the warm-up one.
    pub count: usize,
    /// `--settle`, as written.
    pub settle: String,
    /// Each instance in a terminal of its own.
    pub tty: bool,
    /// `--ready`, as written: wait for each instance to be ready (with `tty`).
    pub ready: Option<String>,
    /// `--ready-timeout`, as written.
    pub ready_timeout: String,
    /// The program and its arguments, after `--`.
    pub command: Vec<OsString>,
}

/// `clibench staircase`'s settings: at least one instance, and a ready mode an instance
/// that stays running can meet.
pub fn staircase_settings(request: StaircaseRequest) -> Result<staircase::Settings, RequestError> {
    if request.count == 0 {
        return Err(RequestError::NoCount);
    }
    let settle = settle(&request.settle)?;
    let ready = match &request.ready {
        None => None,
        Some(mode) => {
            let mode: ReadyMode = mode.parse().map_err(|e| value("--ready")(&e))?;
            if let ReadyMode::Exit = mode {
                return Err(value("--ready")(
                    &"exit times a program that exits; staircase instances must stay running",
                ));
            }
            let timeout = bench_core::units::parse_duration(&request.ready_timeout)
                .map_err(|e| value("--ready-timeout")(&e))?;
            Some(Ready { mode, timeout })
        }
    };
    Ok(staircase::Settings {
        count: request.count,
        settle,
        tty: request.tty,
        ready,
        command: request.command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_measures_exactly_one_thing() {
        let both = MemRequest {
            pid: Some(1),
            command: vec!["true".into()],
            settle: "auto".into(),
            ..MemRequest::default()
        };
        assert!(matches!(mem_settings(both), Err(RequestError::MemTarget)));
        let none = MemRequest {
            settle: "auto".into(),
            ..MemRequest::default()
        };
        assert!(matches!(mem_settings(none), Err(RequestError::MemTarget)));
    }

    #[test]
    fn a_staircase_refuses_exit_as_its_ready_mode() {
        let request = StaircaseRequest {
            count: 2,
            settle: "auto".into(),
            tty: true,
            ready: Some("exit".into()),
            ready_timeout: "60s".into(),
            command: vec!["true".into()],
        };
        let error = staircase_settings(request).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--ready: exit times a program that exits; staircase instances must stay running"
        );
    }

    fn startup(command: &[&str]) -> StartupRequest {
        StartupRequest {
            runs: 10,
            warmup: 0,
            size: (120, 40),
            ready: "probe".into(),
            timeout: "30s".into(),
            settle: "auto".into(),
            ignore_failure: false,
            env: Vec::new(),
            ready_require: None,
            ready_reject: Vec::new(),
            allow_dialog: false,
            quit: "C-c,C-c,C-d".into(),
            transcripts: None,
            command: command.iter().map(OsString::from).collect(),
        }
    }

    #[test]
    fn memory_is_read_once_quiet_by_default_as_run_does() {
        let settings = startup_settings(startup(&["true"])).unwrap();
        assert_eq!(
            settings.settle,
            bench_proc::Settle::Quiet(Default::default())
        );
    }

    #[test]
    fn bad_values_name_their_flag_before_anything_starts() {
        let error = |request: StartupRequest| startup_settings(request).unwrap_err().to_string();
        assert_eq!(
            error(StartupRequest {
                runs: 0,
                ..startup(&["true"])
            }),
            "--runs must be at least 1"
        );
        assert_eq!(
            error(StartupRequest {
                runs: 102,
                ..startup(&["true"])
            }),
            "--runs must be at most 101"
        );
        assert!(
            error(StartupRequest {
                timeout: "soon".into(),
                ..startup(&["true"])
            })
            .starts_with("--timeout: ")
        );
        assert_eq!(
            error(StartupRequest {
                env: vec!["=x".into()],
                ..startup(&["true"])
            }),
            "--env \"=x\": expected KEY=VALUE"
        );
        assert_eq!(error(startup(&[])), "no command given after --");
        assert!(error(startup(&["no-such-program-anywhere"])).contains("was not found on PATH"));
    }
}
