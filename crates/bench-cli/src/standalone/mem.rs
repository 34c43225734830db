//! The memory of a process family (RSS, PSS, USS, swap), of a user's processes, or of a
//! command started, settled, measured and stopped: what `clibench mem` measures.
//!
//! A started command's family is every descendant of this process: call
//! [`bench_proc::become_subreaper`] first (as [`measure`] does) so that daemons it
//! double-forks stay in it and are stopped with it.
//!
//! The measurement is recorded as trial 0 of a [`ResultFile`] (metrics `rss`, `pss`,
//! `uss`, `swap`, and for a command `peak_rss` and `peak_pss`; the processes; the peaks
//! over time), which [`bench_core::export::processes`] renders.

use super::spawn::{self, SpawnError};
use bench_core::detail::{MemoryPoint, MemorySeries};
use bench_core::export::processes::{AS_ROOT_KEY, PEAK_PROCESS_COUNT_KEY, PEAK_SAMPLES_KEY};
use bench_core::{Metric, Phase, Request, ResultFile, Role, Sample, record};
use bench_proc::settle::Waited;
use bench_proc::{
    ProcRoot, Sampler, SamplerOptions, SamplerReport, Selector, Settle, SettleReport, Snapshot,
    SnapshotError, StopError, SubreaperError, snapshot,
};
use bench_term::TermError;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How often the family's totals are sampled for peaks while a command settles.
const PEAK_INTERVAL: Duration = Duration::from_millis(50);

/// How long stopped processes get between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// What to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A process and all its descendants.
    Pid(u32),
    /// Every process of a user.
    User {
        /// The user's id.
        uid: u32,
        /// The name it was given by (or the number, as text).
        name: String,
    },
    /// A command to start, settle, measure and stop.
    Command(Vec<OsString>),
}

impl Target {
    /// What the measurement is of, as the line above its table says it.
    pub fn title(&self) -> String {
        match self {
            Target::Pid(pid) => format!("process {pid} and its descendants"),
            Target::User { uid, name } => format!("processes of user {name} (uid {uid})"),
            Target::Command(command) => {
                format!("`{}` and its descendants", spawn::display_command(command))
            }
        }
    }

    /// What the result names as its build identifier: `pid 42`, `user NAME` or the
    /// command line.
    pub fn name(&self) -> String {
        match self {
            Target::Pid(pid) => format!("pid {pid}"),
            Target::User { name, .. } => format!("user {name}"),
            Target::Command(command) => spawn::display_command(command),
        }
    }
}

/// What [`measure`] does.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// What to measure.
    pub target: Target,
    /// For a command: how long it runs before it is measured, a fixed time or until
    /// its family's memory is quiet.
    pub settle: Settle,
    /// For a command: run it in a pseudo-terminal rather than with stdio on /dev/null.
    pub tty: bool,
}

/// Why a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The process asked for does not exist.
    #[error("process {pid} does not exist")]
    NoSuchProcess {
        /// The pid asked for.
        pid: u32,
    },
    /// The process tree could not be read.
    #[error(transparent)]
    Tree(SnapshotError),
    /// The user's processes could not be read.
    #[error("failed to read the user's processes")]
    UserProcesses(#[source] SnapshotError),
    /// This process could not become a child subreaper.
    #[error(transparent)]
    Subreaper(#[from] SubreaperError),
    /// The command could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The started command's family could not be measured.
    #[error("failed to measure the command's family")]
    Measure(#[source] SnapshotError),
    /// The started command's family could not be stopped.
    #[error("failed to stop the command's family")]
    Stop(#[source] StopError),
    /// The command's terminal could not be read while it settled.
    #[error("failed to read the command's terminal")]
    Read(#[source] TermError),
    /// The command's terminal could not be closed.
    #[error("failed to close the command's terminal")]
    Close(#[source] TermError),
    /// The command, started with stdin on /dev/null, left no process to measure.
    #[error("{}", spawn::exited_without_terminal(command, *status, *after))]
    ExitedWithoutTerminal {
        /// The command.
        command: Vec<OsString>,
        /// How it exited, when known.
        status: Option<ExitStatus>,
        /// How long after its start it exited, when seen.
        after: Option<Duration>,
    },
    /// The command, started in a terminal, left no process to measure.
    #[error("{}", spawn::exited_in_terminal(command, *status, screen))]
    ExitedInTerminal {
        /// The command.
        command: Vec<OsString>,
        /// How it exited, when known.
        status: Option<ExitStatus>,
        /// Its last screen.
        screen: String,
    },
}

impl Error {
    /// Whether the caller's input caused it (a pid that does not exist, a command that
    /// cannot be started) rather than the command or the machine.
    pub fn is_input(&self) -> bool {
        matches!(self, Error::NoSuchProcess { .. } | Error::Spawn(_))
    }
}

/// A measured family, and for a started command the peaks while it settled.
#[derive(Debug)]
struct Measurement {
    /// Every process of the family when it was measured.
    pub snapshot: Snapshot,
    /// For a command: the family's totals sampled while it settled.
    pub peaks: Option<SamplerReport>,
    /// For a command: what its settle did.
    pub settle: Option<SettleReport>,
}

/// Measures `settings.target` and records it. A command is started, settled, measured
/// and stopped, with everything it left behind.
pub fn measure(settings: &Settings) -> Result<ResultFile, Error> {
    measure_family(settings).map(|measurement| measurement.record(settings))
}

fn measure_family(settings: &Settings) -> Result<Measurement, Error> {
    match &settings.target {
        Target::Pid(pid) => {
            let snapshot = snapshot(&Selector::Tree(*pid)).map_err(|error| match error {
                SnapshotError::NoSuchProcess { pid } => Error::NoSuchProcess { pid },
                other => Error::Tree(other),
            })?;
            Ok(Measurement {
                snapshot,
                peaks: None,
                settle: None,
            })
        }
        Target::User { uid, .. } => Ok(Measurement {
            snapshot: snapshot(&Selector::Uid(*uid)).map_err(Error::UserProcesses)?,
            peaks: None,
            settle: None,
        }),
        Target::Command(command) => {
            let (snapshot, peaks, settle) =
                measure_command(command, &settings.settle, settings.tty)?;
            Ok(Measurement {
                snapshot,
                peaks: Some(peaks),
                settle: Some(settle),
            })
        }
    }
}

/// Starts the command, lets it settle while a sampler records the family's
/// peaks, stops the sampler, measures our whole tree (the command, its children and
/// any daemon re-parented to us), then stops it all. Every peak sample is taken
/// before the table is measured, so a peak counting more processes than the table
/// means some exited while the command settled.
pub(crate) fn measure_command(
    command: &[OsString],
    settle: &Settle,
    tty: bool,
) -> Result<(Snapshot, SamplerReport, SettleReport), Error> {
    bench_proc::become_subreaper()?;
    let me = std::process::id();
    let sampler = Sampler::start(SamplerOptions {
        selector: Selector::Tree(me),
        interval: PEAK_INTERVAL,
        exclude_pids: vec![me],
        // A command measured by `mem` settles in seconds: every sample is kept.
        max_points: None,
    });
    let started = if tty {
        spawn::in_terminal(command).map(|terminal| Started::Terminal(Box::new(terminal)))
    } else {
        spawn_quiet(command).map(Started::Quiet)
    };
    let started = match started {
        Ok(started) => started,
        Err(error) => {
            sampler.stop();
            return Err(error.into());
        }
    };
    match started {
        Started::Quiet(mut child) => {
            let (settled, exited_after) = settle_watching(&mut child, settle);
            // The peaks are of the settling only: a sample taken while (or after) the
            // table is measured could count processes the table does not have, which
            // the note would then call short-lived.
            let peaks = sampler.stop();
            let measured = snapshot(&Selector::Tree(me)).map(|snap| snap.without(&[me]));
            let exited = child.try_wait().ok().flatten();
            let stopped = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
            let _ = child.try_wait();
            let snap = measured.map_err(Error::Measure)?;
            stopped.map_err(Error::Stop)?;
            if snap.processes.is_empty() {
                return Err(Error::ExitedWithoutTerminal {
                    command: command.to_vec(),
                    status: exited,
                    after: exited_after,
                });
            }
            Ok((snap, peaks, settled))
        }
        Started::Terminal(mut terminal) => {
            // Reading the terminal while settling keeps the program from blocking on
            // a full terminal and answers its start-up queries.
            let settled = crate::pipeline::program::terminal::settle_reading(
                &mut terminal,
                &Selector::Tree(me),
                &[me],
                settle,
            );
            // Stopped before the table is measured, as above.
            let peaks = sampler.stop();
            let measured = snapshot(&Selector::Tree(me)).map(|snap| snap.without(&[me]));
            let screen = terminal.screen_text();
            let closed = terminal.close();
            // Daemons that left the terminal's session are still our descendants.
            let stopped = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
            let settled = settled.map_err(Error::Read)?;
            let snap = measured.map_err(Error::Measure)?;
            stopped.map_err(Error::Stop)?;
            if snap.processes.is_empty() {
                let status = closed.as_ref().ok().and_then(|report| report.status);
                return Err(Error::ExitedInTerminal {
                    command: command.to_vec(),
                    status,
                    screen,
                });
            }
            closed.map_err(Error::Close)?;
            Ok((snap, peaks, settled))
        }
    }
}

/// A started command: quiet (stdio on /dev/null) or in a terminal.
enum Started {
    Quiet(Child),
    Terminal(Box<bench_term::Terminal>),
}

/// Settles the family of `child` (every descendant of this process) by `settle`,
/// noting how long after the start the command itself exited (`None` while it runs).
/// Its daemons may live on and are measured anyway.
pub(crate) fn settle_watching(
    child: &mut Child,
    settle: &Settle,
) -> (SettleReport, Option<Duration>) {
    const POLL: Duration = Duration::from_millis(20);
    let me = std::process::id();
    let started = Instant::now();
    let mut exited_after = None;
    let settled: Result<SettleReport, std::convert::Infallible> = bench_proc::settle::settle(
        &ProcRoot::live(),
        &Selector::Tree(me),
        &[me],
        settle,
        &mut |left| {
            let until = Instant::now() + left;
            loop {
                if exited_after.is_none() && !matches!(child.try_wait(), Ok(None)) {
                    exited_after = Some(started.elapsed());
                }
                let now = Instant::now();
                if now >= until {
                    return Ok(Waited::Full);
                }
                std::thread::sleep(POLL.min(until - now));
            }
        },
    );
    let settled = match settled {
        Ok(report) => report,
        Err(never) => match never {},
    };
    (settled, exited_after)
}

/// Starts `command` in its own session (and so its own process group, without a
/// controlling terminal) with stdio on /dev/null and no other descriptor of ours.
pub(crate) fn spawn_quiet(command: &[OsString]) -> Result<Child, SpawnError> {
    let (program, rest) = command.split_first().ok_or(SpawnError::NoCommand)?;
    let mut child = Command::new(program);
    child
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: detach makes raw, async-signal-safe system calls only (setsid,
    // close_range) and allocates nothing.
    unsafe {
        child.pre_exec(bench_proc::detach);
    }
    child.spawn().map_err(|source| SpawnError::Quiet {
        command: spawn::display_command(command),
        source,
    })
}

/// A uid from a numeric string or a name in `/etc/passwd`.
pub fn lookup_user(user: &str) -> Option<u32> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    resolve_user(user, &passwd)
}

/// A uid from a numeric string or a name in `/etc/passwd`'s text.
pub(crate) fn resolve_user(user: &str, passwd: &str) -> Option<u32> {
    if let Ok(uid) = user.parse() {
        return Some(uid);
    }
    crate::pipeline::isolation::users::parse_passwd(passwd)
        .into_iter()
        .find(|entry| entry.name == user)
        .map(|entry| entry.uid)
}

/// The session label of a started command's settle in its trial record.
pub(crate) const SETTLE_SESSION: &str = "settle";

impl Measurement {
    /// The measurement as trial 0 of a result for `settings`.
    fn record(&self, settings: &Settings) -> ResultFile {
        let mut request = Request::new(settings.target.name(), Role::Candidate);
        let kind = match settings.target {
            Target::Pid(_) => "pid",
            Target::User { .. } => "user",
            Target::Command(_) => "command",
        };
        request.config.insert("target".into(), kind.into());
        if let Target::Command(_) = settings.target {
            request
                .config
                .insert("settle".into(), settings.settle.to_string());
            request
                .config
                .insert("tty".into(), settings.tty.to_string());
        }
        let mut result = ResultFile::new(request);
        let side = &mut result.side;
        let snap = &self.snapshot;
        let mut value = |metric: Metric, bytes: Option<u64>| {
            // An unknown total (some process's smaps_rollup unreadable) is no sample:
            // the table says why.
            if let Some(bytes) = bytes {
                record(side, metric, 0, Sample::Value(bytes as f64));
            }
        };
        value(Metric::Rss, Some(snap.total_rss_bytes()));
        value(Metric::Pss, snap.total_pss_bytes());
        value(Metric::Uss, snap.total_uss_bytes());
        value(Metric::Swap, snap.total_swap_bytes());
        if let Some(peaks) = &self.peaks {
            value(Metric::PeakRss, Some(peaks.peak_rss_bytes));
            value(Metric::PeakPss, peaks.peak_pss_bytes);
            side.runtime.insert(
                PEAK_PROCESS_COUNT_KEY.into(),
                peaks.peak_process_count.to_string(),
            );
            side.runtime
                .insert(PEAK_SAMPLES_KEY.into(), peaks.points.len().to_string());
            let points = peaks
                .points
                .iter()
                .map(|point| MemoryPoint {
                    t_ms: u64::try_from(point.elapsed.as_millis()).unwrap_or(u64::MAX),
                    rss_bytes: point.rss_bytes,
                    pss_bytes: point.pss_bytes,
                })
                .collect();
            side.memory_series.push(MemorySeries::from_points(
                Phase::Measure,
                0,
                "settle",
                None,
                points,
            ));
        }
        let trial = side.trial_record_mut(Phase::Measure, 0);
        trial.process_count = Some(u32::try_from(snap.processes.len()).unwrap_or(u32::MAX));
        if let Some(settle) = &self.settle {
            trial.push_settle(settle.record(SETTLE_SESSION));
        }
        // Whom the kernel hid another user's smaps_rollup from decides what the note on
        // `?` values says.
        side.runtime.insert(
            AS_ROOT_KEY.into(),
            rustix::process::geteuid().is_root().to_string(),
        );
        // One conversion for the pipeline and this command; the command knows no program
        // pid to tell children from daemons by, so roles stay unset.
        side.set_processes(crate::pipeline::program::family::process_memory(snap, None));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_proc::ProcessSample;

    fn sample(pid: u32, name: &str, rss_mib: u64, pss_mib: Option<u64>) -> ProcessSample {
        ProcessSample {
            pid,
            ppid: 1,
            session: 1,
            name: name.into(),
            cmdline: name.into(),
            rss_bytes: rss_mib << 20,
            pss_bytes: pss_mib.map(|m| m << 20),
            pss_anon_bytes: None,
            pss_file_bytes: None,
            pss_shmem_bytes: None,
            uss_bytes: pss_mib.map(|m| m << 19),
            swap_bytes: pss_mib.map(|_| 0),
            swap_pss_bytes: None,
            cpu_seconds: 0.5,
            threads: 3,
        }
    }

    #[test]
    fn a_measurement_records_totals_peaks_and_processes() {
        let measurement = Measurement {
            snapshot: Snapshot {
                processes: vec![
                    sample(100, "node", 120, Some(96)),
                    sample(7, "sshd", 8, None),
                ],
            },
            settle: Some(SettleReport {
                settle: "auto:max=3s".parse().unwrap(),
                took: Duration::from_millis(730),
                end: bench_proc::SettleEnd::Quiet,
                samples: 41,
            }),
            peaks: Some(SamplerReport {
                points: Vec::new(),
                peak_rss_bytes: 130 << 20,
                peak_pss_bytes: Some(100 << 20),
                peak_uss_bytes: None,
                peak_process_count: 3,
                failed_samples: 0,
                last_error: None,
            }),
        };
        let settings = Settings {
            target: Target::Command(vec!["node".into()]),
            settle: "auto:max=3s".parse().unwrap(),
            tty: false,
        };
        let result = measurement.record(&settings);
        result.validate().unwrap();
        let side = &result.side;
        assert_eq!(side.sha, "node");
        assert_eq!(side.values(Metric::Rss), [(128u64 << 20) as f64]);
        // One process's PSS was unreadable: the family's total is unknown, not low.
        assert!(side.values(Metric::Pss).is_empty());
        assert_eq!(side.values(Metric::PeakRss), [(130u64 << 20) as f64]);
        assert_eq!(side.runtime[PEAK_PROCESS_COUNT_KEY], "3");
        assert_eq!(side.trials[0].process_count, Some(2));
        assert_eq!(side.processes[0].ppid, Some(1));
        assert_eq!(side.processes[0].threads, Some(3));
        assert_eq!(side.trials[0].settles[0].took_seconds, 0.73);
        assert_eq!(
            result.request.config["settle"],
            "auto:max=3s,quiet=100ms,tolerance=1%"
        );
        let shown = bench_core::export::processes::report(side);
        assert!(
            shown.contains(
                "\nsettled (auto:max=3s,quiet=100ms,tolerance=1%): quiet after 0.730 s\n"
            ),
            "{shown}"
        );
        assert!(
            shown.contains("peak while settling: RSS 130.0 MiB"),
            "{shown}"
        );
    }

    #[test]
    fn a_pid_that_does_not_exist_is_the_callers_mistake() {
        // Pids stop far below u32::MAX (PID_MAX_LIMIT is 2^22).
        let error = measure(&Settings {
            target: Target::Pid(u32::MAX),
            settle: Settle::Fixed(Duration::ZERO),
            tty: false,
        })
        .unwrap_err();
        assert!(
            matches!(error, Error::NoSuchProcess { pid } if pid == u32::MAX),
            "{error:?}"
        );
        assert!(error.is_input());
    }

    #[test]
    fn a_command_that_cannot_start_is_the_callers_mistake() {
        let error = measure(&Settings {
            target: Target::Command(vec!["/nonexistent/clibench-no-such-program".into()]),
            settle: Settle::Fixed(Duration::ZERO),
            tty: false,
        })
        .unwrap_err();
        assert!(error.is_input(), "{error:?}");
        assert_eq!(
            error.to_string(),
            "failed to start `/nonexistent/clibench-no-such-program`"
        );
    }

    #[test]
    fn users_resolve_by_name_or_number() {
        let passwd =
            "root:x:0:0:root:/root:/bin/bash\nbenchmark1:x:2001:2001::/home/benchmark1:/bin/bash\n";
        assert_eq!(resolve_user("benchmark1", passwd), Some(2001));
        assert_eq!(resolve_user("root", passwd), Some(0));
        assert_eq!(resolve_user("1234", passwd), Some(1234));
        assert_eq!(resolve_user("nobody-here", passwd), None);
    }
}
