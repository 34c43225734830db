//! The marginal memory of one more instance of a command: what `clibench staircase`
//! measures.
//!
//! One warm-up instance is started and stopped first, then instances are added
//! one at a time and the whole family (every descendant of this process, which
//! [`run`] makes a child subreaper so daemons stay in it) is measured after each
//! settles.
//!
//! The staircase is recorded as trial 0 of a [`ResultFile`] (metrics `instance_rss`,
//! `instance_pss`, `instance_uss` and `reclaimed_rss`, the steps, the machine) by the
//! engine's [`record_report`], as the pipeline's staircase phase records its trials;
//! [`bench_core::export::staircase`] renders it and `clibench compare` compares it.

use super::spawn::{self, SpawnError};
use bench_core::detail::StaircaseInstance;
use bench_core::export::staircase::signed;
use bench_core::{Request, ResultFile, Role};
use bench_proc::staircase::{
    self, Instances, StaircaseError, StaircaseOptions, Step, record_report,
};
use bench_proc::{HostFacts, Selector, StopError, SubreaperError};
use bench_term::{Drained, ReadyMode, TermError};
use std::ffi::OsString;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How long stopped processes get between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = super::mem::STOP_GRACE;

/// What [`run`] does.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Instances to add, one at a time (at least 1).
    pub count: usize,
    /// Wait after each change before measuring: a fixed time or until the family's
    /// memory is quiet.
    pub settle: bench_proc::Settle,
    /// Run each instance in a pseudo-terminal of its own rather than with stdio on
    /// /dev/null.
    pub tty: bool,
    /// With `tty`: wait until each instance is ready before it settles.
    pub ready: Option<Ready>,
    /// The command that makes one instance.
    pub command: Vec<OsString>,
}

/// When an instance in a terminal is ready, and how long it may take.
#[derive(Debug, Clone)]
pub struct Ready {
    /// What "ready" means.
    pub mode: ReadyMode,
    /// How long an instance may take to become ready.
    pub timeout: Duration,
}

/// Why the staircase failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// This process could not become a child subreaper.
    #[error(transparent)]
    Subreaper(#[from] SubreaperError),
    /// An instance or a measurement failed; the instances were stopped.
    #[error("the staircase failed")]
    Staircase(#[source] Box<StaircaseError<InstanceError>>),
    /// What the instances left behind could not be stopped.
    #[error("failed to stop what the instances left behind")]
    Cleanup(#[source] StopError),
}

/// Why an instance failed.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// It could not be started.
    #[error("failed to start `{command}`")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: SpawnError,
    },
    /// It did not become ready in its terminal.
    // The terminal's error is part of the message, as the command line has always shown it.
    #[error("instance {pid}: never became ready: {error}")]
    NeverReady {
        /// The instance's pid.
        pid: u32,
        /// What the terminal saw.
        error: TermError,
    },
    /// It exited, with stdio on /dev/null, before it was measured.
    #[error(
        "instance {pid}: exited ({status}) within {:.1} s of its start, before it was \
         measured; if it is interactive, it needs a terminal: try --tty",
        after.as_secs_f64()
    )]
    ExitedWithoutTerminal {
        /// The instance's pid.
        pid: u32,
        /// How it exited.
        status: ExitStatus,
        /// How long after its start it was seen gone.
        after: Duration,
    },
    /// It exited in its terminal before it was measured.
    #[error("instance {pid}: {}", spawn::exited_in_terminal(command, *status, screen))]
    ExitedInTerminal {
        /// The instance's pid.
        pid: u32,
        /// The command.
        command: Vec<OsString>,
        /// How it exited, when known.
        status: Option<ExitStatus>,
        /// Its last screen.
        screen: String,
    },
    /// It could not be stopped.
    #[error("failed to stop instance {pid}")]
    Stop {
        /// The instance's pid.
        pid: u32,
        /// Why.
        #[source]
        source: StopError,
    },
    /// Its terminal failed while it was read or closed.
    #[error("failed to read or close the terminal of instance {pid}")]
    Close {
        /// The instance's pid.
        pid: u32,
        /// Why.
        #[source]
        source: TermError,
    },
}

/// Instances that are processes of one command.
struct Commands<'a> {
    command: &'a [OsString],
    tty: bool,
    ready: Option<&'a Ready>,
    on_step: &'a mut dyn FnMut(&Step),
}

/// One started instance.
enum Instance {
    /// Stdio on /dev/null, and when it started.
    Quiet { child: Child, started: Instant },
    /// In a terminal read on a thread of its own.
    Terminal(Drained),
}

impl Instances for Commands<'_> {
    type Instance = Instance;
    type Error = InstanceError;

    fn create(&mut self) -> Result<Instance, InstanceError> {
        let spawn_error = |source: SpawnError| InstanceError::Spawn {
            command: spawn::display_command(self.command),
            source,
        };
        if self.tty {
            let mut terminal = spawn::in_terminal(self.command).map_err(spawn_error)?;
            if let Some(ready) = self.ready {
                let pid = terminal.pid();
                terminal
                    .ready(&ready.mode, ready.timeout)
                    .map_err(|error| InstanceError::NeverReady { pid, error })?;
            }
            return Ok(Instance::Terminal(Drained::start(terminal)));
        }
        let child = super::mem::spawn_quiet(self.command).map_err(spawn_error)?;
        Ok(Instance::Quiet {
            child,
            started: Instant::now(),
        })
    }

    fn start(&mut self, _: &mut Instance) -> Result<(), InstanceError> {
        // A process is started by create; the settle time is its start-up.
        Ok(())
    }

    fn verify(&mut self, instance: &mut Instance) -> Result<(), InstanceError> {
        match instance {
            Instance::Quiet { child, started } => match child.try_wait() {
                Ok(Some(status)) => Err(InstanceError::ExitedWithoutTerminal {
                    pid: child.id(),
                    status,
                    after: started.elapsed(),
                }),
                _ => Ok(()),
            },
            Instance::Terminal(drained) if drained.closed() => {
                let (status, screen) = drained.with(|terminal| {
                    let status = terminal.close().ok().and_then(|report| report.status);
                    (status, terminal.screen_text())
                });
                Err(InstanceError::ExitedInTerminal {
                    pid: drained.pid(),
                    command: self.command.to_vec(),
                    status,
                    screen,
                })
            }
            Instance::Terminal(_) => Ok(()),
        }
    }

    fn measured(&mut self, step: &Step) {
        (self.on_step)(step);
    }

    fn stop(&mut self, instance: Instance) -> Result<(), InstanceError> {
        match instance {
            Instance::Quiet { mut child, .. } => {
                let pid = child.id();
                let stopped = bench_proc::stop(&Selector::Tree(pid), STOP_GRACE);
                // stop() reaps our children itself; ECHILD here is expected.
                let _ = child.try_wait();
                stopped
                    .map(|_| ())
                    .map_err(|source| InstanceError::Stop { pid, source })
            }
            Instance::Terminal(drained) => {
                let pid = drained.pid();
                let (mut terminal, read) = drained.finish();
                // Closing kills the terminal's session; what left it is stopped
                // with the rest of the family at the end. A failed read (the
                // instance may have blocked on its output) is reported after it.
                let closed = terminal.close().map(drop);
                closed
                    .and(read)
                    .map_err(|source| InstanceError::Close { pid, source })
            }
        }
    }
}

impl Settings {
    /// The request a result of these settings answers: the command as its build
    /// identifier, and the settings.
    pub fn request(&self) -> Request {
        let command = spawn::display_command(&self.command);
        let mut request = Request::new(command.clone(), Role::Candidate);
        for (key, value) in [
            ("command", command),
            ("count", self.count.to_string()),
            ("settle", self.settle.to_string()),
            ("tty", self.tty.to_string()),
        ] {
            request.config.insert(key.to_owned(), value);
        }
        if let Some(ready) = &self.ready {
            request
                .config
                .insert("ready_mode".to_owned(), ready.mode.to_string());
        }
        request
    }
}

/// A result for `settings` with the machine's facts and nothing measured yet: what
/// [`bench_core::export::staircase::header`] shows before the steps.
pub fn prepared(settings: &Settings, hardware: &HostFacts) -> ResultFile {
    let mut result = ResultFile::new(settings.request());
    // The keys the pipeline's prepare phase records the same facts under.
    for (key, value) in [
        ("kernel", hardware.kernel_release.clone()),
        ("machine", hardware.arch.clone()),
        ("cpu", hardware.cpu_model.clone()),
        ("cores", hardware.cores.to_string()),
        ("memory_bytes", hardware.memory_bytes.to_string()),
    ] {
        result.side.runtime.insert(key.to_owned(), value);
    }
    result
}

/// Runs the staircase: a warm-up instance, then `settings.count` instances added one at a
/// time, the family measured after each settles; `on_step` hears of each step as it is
/// measured. Everything the instances started is stopped before it returns. The result
/// is [`prepared`] with the staircase recorded as trial 0.
pub fn run(
    settings: &Settings,
    hardware: &HostFacts,
    on_step: &mut dyn FnMut(&Step),
) -> Result<ResultFile, Error> {
    bench_proc::become_subreaper()?;
    let me = std::process::id();
    let options = StaircaseOptions {
        count: settings.count,
        settle: settings.settle,
        family: Selector::Tree(me),
        exclude_pids: vec![me],
        warmup: true,
    };
    let outcome = staircase::run(
        &mut Commands {
            command: &settings.command,
            tty: settings.tty,
            ready: settings.ready.as_ref(),
            on_step,
        },
        &options,
    );
    // Daemons an instance double-forked re-parented to us and are not in any
    // instance's tree: stop whatever is left of the family.
    let cleanup = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
    let report = outcome.map_err(|error| Error::Staircase(Box::new(error)))?;
    cleanup.map_err(Error::Cleanup)?;
    let mut result = prepared(settings, hardware);
    record_report(&mut result.side, 0, &report, StaircaseInstance::Idle);
    Ok(result)
}

/// One step as it is measured: `  step 1: RSS +64.0 MiB PSS +62.1 MiB USS +61.9 MiB`.
pub fn render_step(step: &Step) -> String {
    format!(
        "  step {}: RSS {} PSS {} USS {}",
        step.index,
        signed(Some(step.rss_delta_bytes)),
        signed(step.pss_delta_bytes),
        signed(step.uss_delta_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_proc::staircase::FamilyTotals;

    #[test]
    fn a_step_line_signs_growth_and_marks_unknowns() {
        let step = Step {
            index: 3,
            rss_delta_bytes: 64 << 20,
            pss_delta_bytes: None,
            uss_delta_bytes: Some(-(1 << 20)),
            totals: FamilyTotals {
                process_count: 4,
                rss_bytes: 256 << 20,
                pss_bytes: None,
                uss_bytes: None,
            },
        };
        assert_eq!(
            render_step(&step),
            "  step 3: RSS +64.0 MiB PSS ? USS -1.0 MiB"
        );
    }

    #[test]
    fn an_instance_that_quits_without_a_terminal_is_told_to_try_one() {
        use std::os::unix::process::ExitStatusExt;
        let error = InstanceError::ExitedWithoutTerminal {
            pid: 42,
            status: ExitStatus::from_raw(0),
            after: Duration::from_millis(250),
        };
        assert_eq!(
            error.to_string(),
            "instance 42: exited (exit status: 0) within 0.2 s of its start, before it was \
             measured; if it is interactive, it needs a terminal: try --tty"
        );
    }

    #[test]
    fn the_header_names_the_hardware_and_the_settings() {
        let hardware = HostFacts {
            cpu_model: "AMD EPYC".into(),
            cores: 2,
            memory_bytes: 24 << 30,
            kernel_release: "6.18.44".into(),
            arch: "x86_64".into(),
            page_size_bytes: 4096,
        };
        let settings = Settings {
            count: 5,
            settle: bench_proc::Settle::Fixed(Duration::from_secs(2)),
            tty: false,
            ready: None,
            command: vec!["node".into(), "-e".into(), "1".into()],
        };
        assert_eq!(
            bench_core::export::staircase::header(&prepared(&settings, &hardware)),
            "=== Staircase: marginal memory of one more instance ===\n\
             command: node -e 1\n\
             CPU: AMD EPYC (2 cores) | RAM: 24.0 GiB | kernel: 6.18.44 (x86_64)\n\
             count: 5 | settle: 2s\n"
        );
    }
}
