//! The marginal memory of one more instance of a command: what `clibench staircase`
//! measures.
//!
//! One warm-up instance is started and stopped first, then instances are added
//! one at a time and the whole family (every descendant of this process, which
//! [`run`] makes a child subreaper so daemons stay in it) is measured after each
//! settles.

use super::spawn::{self, SpawnError};
use bench_core::export::text::{Align, render};
use bench_core::units::format_bytes;
use bench_proc::staircase::{
    self, Instances, StaircaseError, StaircaseOptions, StaircaseReport, Step,
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

/// Runs the staircase: a warm-up instance, then `settings.count` instances added one at a
/// time, the family measured after each settles; `on_step` hears of each step as it is
/// measured. Everything the instances started is stopped before it returns.
pub fn run(settings: &Settings, on_step: &mut dyn FnMut(&Step)) -> Result<StaircaseReport, Error> {
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
    Ok(report)
}

/// What is measured, and on what machine: the lines above the steps.
pub fn render_header(hardware: &HostFacts, settings: &Settings) -> String {
    format!(
        "=== Staircase: marginal memory of one more instance ===\n\
         command: {}\n\
         CPU: {} ({} cores) | RAM: {} | kernel: {} ({})\n\
         count: {} | settle: {}\n",
        spawn::display_command(&settings.command),
        hardware.cpu_model,
        hardware.cores,
        format_bytes(hardware.memory_bytes as f64),
        hardware.kernel_release,
        hardware.arch,
        settings.count,
        settings.settle,
    )
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

fn signed(bytes: Option<i64>) -> String {
    match bytes {
        None => "?".into(),
        Some(b) if b > 0 => format!("+{}", format_bytes(b as f64)),
        Some(b) => format_bytes(b as f64),
    }
}

/// The step table with the average and steady rows, and what stopping all reclaimed.
pub fn render_steps(report: &StaircaseReport) -> String {
    let mut rows: Vec<Vec<String>> = report
        .steps
        .iter()
        .map(|step| {
            vec![
                step.index.to_string(),
                step.totals.process_count.to_string(),
                signed(Some(step.rss_delta_bytes)),
                signed(step.pss_delta_bytes),
                signed(step.uss_delta_bytes),
                format_bytes(step.totals.rss_bytes as f64),
            ]
        })
        .collect();
    rows.push(vec![
        "avg".into(),
        String::new(),
        signed(Some(report.avg_per_instance_rss_bytes)),
        signed(report.avg_per_instance_pss_bytes),
        signed(report.avg_per_instance_uss_bytes),
        String::new(),
    ]);
    // With one step there are no later steps: no steady row rather than a blank one.
    if report.steady_per_instance_rss_bytes.is_some() {
        rows.push(vec![
            "steady".into(),
            String::new(),
            signed(report.steady_per_instance_rss_bytes),
            signed(report.steady_per_instance_pss_bytes),
            signed(report.steady_per_instance_uss_bytes),
            String::new(),
        ]);
    }
    use Align::{Left, Right};
    let mut out = render(
        &[
            "step",
            "processes",
            "RSS delta",
            "PSS delta",
            "USS delta",
            "family RSS",
        ],
        &[Left, Right, Right, Right, Right, Right],
        &rows,
    );
    if report
        .steps
        .iter()
        .any(|step| step.uss_delta_bytes.is_some_and(|b| b < 0))
    {
        // A falling USS looks like a measuring error; it is how USS is defined.
        out.push_str(&bench_core::export::text::wrap(
            "note: a negative USS delta is not memory given back: USS counts the pages one \
             process alone maps, and the new instance mapped pages an earlier instance held \
             alone (the same binary, libraries, caches), which are shared from then on and \
             leave that instance's USS; RSS and PSS count them\n",
            80,
        ));
    }
    out.push_str(&format!(
        "reclaimed after stopping all: RSS {}, PSS {}\n",
        format_bytes(report.reclaimed_rss_bytes as f64),
        report
            .reclaimed_pss_bytes
            .map_or_else(|| "?".into(), |b| format_bytes(b as f64)),
    ));
    out
}

/// The report's own fields, plus the command, the settle time and the machine.
pub fn to_json(
    report: &StaircaseReport,
    hardware: &HostFacts,
    settings: &Settings,
) -> serde_json::Value {
    // The report's own fields, plus what was asked and where it ran.
    let mut json = serde_json::json!(report);
    if let Some(fields) = json.as_object_mut() {
        let command: Vec<_> = settings
            .command
            .iter()
            .map(|p| p.to_string_lossy())
            .collect();
        fields.insert("command".into(), serde_json::json!(command));
        // The fixed time, or a quiet settle's maximum; `settle` says which.
        fields.insert(
            "settle_seconds".into(),
            settings.settle.max().as_secs_f64().into(),
        );
        fields.insert("settle".into(), settings.settle.to_string().into());
        fields.insert("hardware".into(), serde_json::json!(hardware));
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_proc::staircase::FamilyTotals;

    fn totals(processes: u32, rss_mib: u64) -> FamilyTotals {
        FamilyTotals {
            process_count: processes,
            rss_bytes: rss_mib << 20,
            pss_bytes: Some(rss_mib << 19),
            uss_bytes: Some(rss_mib << 18),
        }
    }

    #[test]
    fn step_table_shows_deltas_average_and_reclaim() {
        let report = StaircaseReport {
            count: 2,
            baseline: totals(0, 0),
            steps: vec![
                Step {
                    index: 0,
                    rss_delta_bytes: 66 << 20,
                    pss_delta_bytes: Some(64 << 20),
                    uss_delta_bytes: Some(63 << 20),
                    totals: totals(1, 66),
                },
                Step {
                    index: 1,
                    rss_delta_bytes: 65 << 20,
                    pss_delta_bytes: None,
                    uss_delta_bytes: Some(-(1 << 20)),
                    totals: totals(2, 131),
                },
            ],
            avg_per_instance_rss_bytes: 131 << 19,
            avg_per_instance_pss_bytes: None,
            avg_per_instance_uss_bytes: Some(31 << 20),
            steady_per_instance_rss_bytes: Some(65 << 20),
            steady_per_instance_pss_bytes: None,
            steady_per_instance_uss_bytes: Some(-(1 << 20)),
            settles: Vec::new(),
            after_teardown: totals(0, 0),
            reclaimed_rss_bytes: 131 << 20,
            reclaimed_pss_bytes: None,
        };
        insta::assert_snapshot!(render_steps(&report));
    }

    #[test]
    fn a_step_line_signs_growth_and_marks_unknowns() {
        let step = Step {
            index: 3,
            rss_delta_bytes: 64 << 20,
            pss_delta_bytes: None,
            uss_delta_bytes: Some(-(1 << 20)),
            totals: totals(4, 256),
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
    fn header_names_the_hardware() {
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
        insta::assert_snapshot!(render_header(&hardware, &settings));
    }
}
