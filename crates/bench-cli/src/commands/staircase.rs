//! `clibench staircase`: the marginal memory of one more instance of a command.
//!
//! One warm-up instance is started and stopped first, then instances are added
//! one at a time and the whole family (every descendant of clibench, which is a
//! child subreaper so daemons stay in it) is measured after each settles.

use super::mem::{STOP_GRACE, display_command, spawn_quiet};
use super::tty;
use crate::exit::input_error;
use crate::table::{Align, render};
use anyhow::Context;
use bench_core::units::format_bytes;
use bench_proc::staircase::{self, Instances, StaircaseOptions, StaircaseReport, Step};
use bench_proc::{HostFacts, Selector};
use bench_term::ready::parse_duration;
use bench_term::{Drained, ReadyMode};
use std::ffi::OsString;
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

/// Flags of `clibench staircase`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench staircase -- node -e 'setInterval(() => {}, 1e9)'
  clibench staircase --count 10 --settle 5s --json -- python3 -m http.server 0
  clibench staircase --tty --count 5 --settle 2s -- node

Each instance runs with stdio on /dev/null in its own process group; with --tty, in a
pseudo-terminal of its own whose output is read (and queries answered) all along, as a
terminal would. The hardware header and the step table go to stderr; --json prints the
result on stdout. `avg` is the family's growth divided by the instances; `steady`, the
median of the steps after the first, is the cost of one more instance once what the
first one brought along (shared daemons, caches) is paid.")]
pub struct Args {
    /// Instances to add, one at a time (at least 1).
    #[arg(long, default_value_t = 5, value_name = "N")]
    count: usize,
    /// Wait after each change before measuring (e.g. 2s, 500ms).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    settle: String,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Run each instance in a terminal of its own (for REPLs and TUIs, which quit
    /// at once when stdin is /dev/null).
    #[arg(long)]
    tty: bool,
    /// With --tty: wait until each instance is ready before it settles (probe,
    /// pattern:REGEX, first-frame or stable:DURATION, as `clibench startup --ready`), so
    /// that a slow start is never measured half-way.
    #[arg(long, value_name = "MODE", requires = "tty")]
    ready: Option<String>,
    /// How long an instance may take to become ready.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    ready_timeout: String,
    /// The command that makes one instance.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// `clibench staircase`, resolved from the flags.
#[derive(Debug)]
struct Settings {
    count: usize,
    settle: Duration,
    json: bool,
    tty: bool,
    ready: Option<(ReadyMode, Duration)>,
    command: Vec<OsString>,
}

impl TryFrom<Args> for Settings {
    type Error = anyhow::Error;

    fn try_from(args: Args) -> anyhow::Result<Settings> {
        if args.count == 0 {
            return Err(input_error("--count must be at least 1"));
        }
        let settle =
            parse_duration(&args.settle).map_err(|e| input_error(format!("--settle: {e}")))?;
        let ready = match &args.ready {
            None => None,
            Some(mode) => {
                let mode: ReadyMode = mode
                    .parse()
                    .map_err(|e| input_error(format!("--ready: {e}")))?;
                let timeout = parse_duration(&args.ready_timeout)
                    .map_err(|e| input_error(format!("--ready-timeout: {e}")))?;
                Some((mode, timeout))
            }
        };
        Ok(Settings {
            count: args.count,
            settle,
            json: args.json,
            tty: args.tty,
            ready,
            command: args.command,
        })
    }
}

/// Instances that are processes of one command.
struct Commands<'a> {
    command: &'a [OsString],
    tty: bool,
    ready: Option<(ReadyMode, Duration)>,
}

/// One started instance.
enum Instance {
    /// Stdio on /dev/null, and when it started.
    Quiet { child: Child, started: Instant },
    /// In a terminal read on a thread of its own.
    Terminal(Drained),
}

/// Why an instance failed.
#[derive(Debug, thiserror::Error)]
enum InstanceError {
    #[error("failed to start `{command}`: {message}")]
    Spawn { command: String, message: String },
    #[error("instance {pid}: {message}")]
    Exited { pid: u32, message: String },
    #[error("failed to stop instance {pid}")]
    Stop {
        pid: u32,
        #[source]
        source: bench_proc::StopError,
    },
    #[error("failed to read or close the terminal of instance {pid}")]
    Close {
        pid: u32,
        #[source]
        source: bench_term::TermError,
    },
}

impl Instances for Commands<'_> {
    type Instance = Instance;
    type Error = InstanceError;

    fn create(&mut self) -> Result<Instance, InstanceError> {
        let spawn_error = |error: anyhow::Error| InstanceError::Spawn {
            command: display_command(self.command),
            message: format!("{error:#}"),
        };
        if self.tty {
            let mut terminal = tty::spawn(self.command).map_err(spawn_error)?;
            if let Some((mode, timeout)) = &self.ready {
                let pid = terminal.pid();
                terminal
                    .ready(mode, *timeout)
                    .map_err(|error| InstanceError::Exited {
                        pid,
                        message: format!("never became ready: {error}"),
                    })?;
            }
            return Ok(Instance::Terminal(Drained::start(terminal)));
        }
        let child = spawn_quiet(self.command).map_err(spawn_error)?;
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
                Ok(Some(status)) => Err(InstanceError::Exited {
                    pid: child.id(),
                    message: format!(
                        "exited ({status}) within {:.1} s of its start, before it was \
                         measured; if it is interactive, it needs a terminal: try --tty",
                        started.elapsed().as_secs_f64()
                    ),
                }),
                _ => Ok(()),
            },
            Instance::Terminal(drained) if drained.closed() => {
                let (status, screen) = drained.with(|terminal| {
                    let status = terminal.close().ok().and_then(|report| report.status);
                    (status, terminal.screen_text())
                });
                Err(InstanceError::Exited {
                    pid: drained.pid(),
                    message: tty::exited_in_terminal(self.command, status, &screen),
                })
            }
            Instance::Terminal(_) => Ok(()),
        }
    }

    fn measured(&mut self, step: &Step) {
        eprintln!(
            "  step {}: RSS {} PSS {} USS {}",
            step.index,
            signed(Some(step.rss_delta_bytes)),
            signed(step.pss_delta_bytes),
            signed(step.uss_delta_bytes)
        );
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

/// Runs `clibench staircase`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings::try_from(args)?;
    let hardware = HostFacts::read().context("failed to read the host's facts")?;
    eprint!("{}", render_header(&hardware, &settings));
    super::interrupt::stop_family_on_signal(STOP_GRACE)?;
    let me = std::process::id();
    let options = StaircaseOptions {
        count: settings.count,
        settle: settings.settle,
        family: Selector::Tree(me),
        exclude_pids: vec![me],
        warmup: true,
    };
    eprintln!("warming up, then adding {} instance(s)...", settings.count);
    let outcome = staircase::run(
        &mut Commands {
            command: &settings.command,
            tty: settings.tty,
            ready: settings.ready.clone(),
        },
        &options,
    );
    // Daemons an instance double-forked re-parented to us and are not in any
    // instance's tree: stop whatever is left of the family.
    let cleanup = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
    let report = outcome.context("the staircase failed")?;
    cleanup.context("failed to stop what the instances left behind")?;
    eprint!("{}", render_steps(&report));
    if settings.json {
        let json = to_json(&report, &hardware, &settings);
        println!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(ExitCode::SUCCESS)
}

fn render_header(hardware: &HostFacts, settings: &Settings) -> String {
    format!(
        "=== Staircase: marginal memory of one more instance ===\n\
         command: {}\n\
         CPU: {} ({} cores) | RAM: {} | kernel: {} ({})\n\
         count: {} | settle: {:?}\n",
        display_command(&settings.command),
        hardware.cpu_model,
        hardware.cores,
        format_bytes(hardware.memory_bytes as f64),
        hardware.kernel_release,
        hardware.arch,
        settings.count,
        settings.settle,
    )
}

fn signed(bytes: Option<i64>) -> String {
    match bytes {
        None => "?".into(),
        Some(b) if b > 0 => format!("+{}", format_bytes(b as f64)),
        Some(b) => format_bytes(b as f64),
    }
}

fn render_steps(report: &StaircaseReport) -> String {
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
    out.push_str(&format!(
        "reclaimed after stopping all: RSS {}, PSS {}\n",
        format_bytes(report.reclaimed_rss_bytes as f64),
        report
            .reclaimed_pss_bytes
            .map_or_else(|| "?".into(), |b| format_bytes(b as f64)),
    ));
    out
}

fn to_json(
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
        fields.insert(
            "settle_seconds".into(),
            settings.settle.as_secs_f64().into(),
        );
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
            after_teardown: totals(0, 0),
            reclaimed_rss_bytes: 131 << 20,
            reclaimed_pss_bytes: None,
        };
        insta::assert_snapshot!(render_steps(&report));
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
            settle: Duration::from_secs(2),
            json: false,
            tty: false,
            ready: None,
            command: vec!["node".into(), "-e".into(), "1".into()],
        };
        insta::assert_snapshot!(render_header(&hardware, &settings));
    }
}
