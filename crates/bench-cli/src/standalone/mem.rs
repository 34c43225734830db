//! The memory of a process family (RSS, PSS, USS, swap), of a user's processes, or of a
//! command started, settled, measured and stopped: what `clibench mem` measures.
//!
//! A started command's family is every descendant of this process: call
//! [`bench_proc::become_subreaper`] first (as [`measure`] does) so that daemons it
//! double-forks stay in it and are stopped with it.

use super::spawn::{self, SpawnError};
use bench_core::export::text::{Align, render};
use bench_core::units::format_bytes;
use bench_proc::settle::Waited;
use bench_proc::{
    ProcRoot, ProcessSample, Sampler, SamplerOptions, SamplerReport, Selector, Settle,
    SettleReport, Snapshot, SnapshotError, StopError, SubreaperError, snapshot,
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
pub struct Measurement {
    /// Every process of the family when it was measured.
    pub snapshot: Snapshot,
    /// For a command: the family's totals sampled while it settled.
    pub peaks: Option<SamplerReport>,
    /// For a command: what its settle did.
    pub settle: Option<SettleReport>,
}

/// Measures `settings.target`. A command is started, settled, measured and stopped, with
/// everything it left behind.
pub fn measure(settings: &Settings) -> Result<Measurement, Error> {
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
pub fn measure_command(
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
            let settled = bench_proc::settle::settle(
                &ProcRoot::live(),
                &Selector::Tree(me),
                &[me],
                settle,
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
pub fn settle_watching(child: &mut Child, settle: &Settle) -> (SettleReport, Option<Duration>) {
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
pub fn spawn_quiet(command: &[OsString]) -> Result<Child, SpawnError> {
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
pub fn resolve_user(user: &str, passwd: &str) -> Option<u32> {
    if let Ok(uid) = user.parse() {
        return Some(uid);
    }
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == user).then_some(())?;
        fields.nth(1)?.parse().ok()
    })
}

impl Measurement {
    /// What the table cannot say by itself (see [`Measurement::render`]).
    pub fn notes(&self) -> Vec<String> {
        notes(
            &self.snapshot,
            self.peaks.as_ref().map(|p| p.peak_process_count),
            rustix::process::geteuid().is_root(),
        )
    }

    /// The per-process table with a totals row, the peaks while settling and the notes,
    /// one `note: ` line each.
    pub fn render(&self) -> String {
        let mut out = render_table(&self.snapshot);
        if let Some(settle) = &self.settle {
            out.push_str(&format!(
                "settled ({}): {} after {:.3} s\n",
                settle.settle,
                settle.end.name(),
                settle.took.as_secs_f64()
            ));
        }
        if let Some(peaks) = &self.peaks {
            out.push_str(&format!(
                "peak while settling: RSS {}, PSS {}, {} ({})\n",
                format_bytes(peaks.peak_rss_bytes as f64),
                bytes(peaks.peak_pss_bytes),
                count(peaks.peak_process_count as usize, "process", "processes"),
                count(peaks.points.len(), "sample", "samples")
            ));
        }
        for note in self.notes() {
            out.push_str(&format!("note: {note}\n"));
        }
        out
    }

    /// The totals, the processes and, for a command, the peaks while settling.
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = to_json(&self.snapshot);
        if let Some(peaks) = &self.peaks {
            json["peak_rss_bytes"] = peaks.peak_rss_bytes.into();
            json["peak_pss_bytes"] = peaks.peak_pss_bytes.into();
        }
        if let Some(settle) = &self.settle {
            json["settle"] = serde_json::json!(settle);
        }
        json
    }
}

/// What the table cannot say by itself: why some values are `?`, and why the peak counted
/// more processes than the table shows.
/// `as_root`: whether clibench runs as root, for whom another user's files are no excuse.
fn notes(snap: &Snapshot, peak_process_count: Option<u32>, as_root: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let unreadable = snap
        .processes
        .iter()
        .filter(|p| p.pss_bytes.is_none())
        .count();
    if unreadable > 0 {
        let whose = if unreadable == 1 {
            "1 process whose /proc/PID/smaps_rollup".to_owned()
        } else {
            format!("{unreadable} processes whose /proc/PID/smaps_rollup")
        };
        // Root can read every smaps_rollup of its own namespace; what stays unreadable is a
        // process the kernel's ptrace check refuses even to root (one of another PID or user
        // namespace, a Yama or LSM policy), or one that was exiting.
        let why = if as_root {
            "even to root, the kernel refuses it for a process that ptrace may not inspect \
             (another namespace's, one an LSM or Yama policy protects) or one that was exiting"
        } else {
            "the kernel shows another user's smaps_rollup only to root or a process with \
             CAP_SYS_PTRACE (run clibench as root, or as that user)"
        };
        notes.push(format!(
            "PSS, USS and swap are `?` for {whose} could not be read: {why}; RSS then comes \
             from /proc/PID/stat, which anyone may read; a total marked `+?` is the sum of the \
             readable processes, to which the others add an unknown amount"
        ));
    }
    if let Some(peak) = peak_process_count
        && peak as usize > snap.processes.len()
    {
        notes.push(format!(
            "the peak counted {peak} processes, the table {}: the others were short-lived (helpers \
             such as version-manager shims or wrapper scripts that start the real program and \
             exit); their memory is in the peak, not in the table",
            snap.processes.len()
        ));
    }
    notes
}

fn bytes(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), |v| format_bytes(v as f64))
}

/// The sum of the known values; `+?` after it when some are unknown, `?` when all are.
fn partial_total(values: impl Iterator<Item = Option<u64>>) -> String {
    let (mut sum, mut known, mut unknown) = (0u64, 0usize, 0usize);
    for value in values {
        match value {
            Some(bytes) => {
                sum = sum.saturating_add(bytes);
                known += 1;
            }
            None => unknown += 1,
        }
    }
    match (known, unknown) {
        (0, 1..) => "?".to_owned(),
        (_, 0) => format_bytes(sum as f64),
        _ => format!("{}+?", format_bytes(sum as f64)),
    }
}

/// `1 process`, `2 processes`: the count with the word it takes.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The per-process table with a totals row. `?` marks a value the kernel
/// would not show us (another user's process without privilege).
pub fn render_table(snap: &Snapshot) -> String {
    let row = |p: &ProcessSample| {
        vec![
            p.pid.to_string(),
            p.ppid.to_string(),
            p.name.clone(),
            p.threads.to_string(),
            format_bytes(p.rss_bytes as f64),
            bytes(p.pss_bytes),
            bytes(p.uss_bytes),
            bytes(p.swap_bytes),
        ]
    };
    let mut rows: Vec<Vec<String>> = snap.processes.iter().map(row).collect();
    rows.push(vec![
        "total".into(),
        String::new(),
        count(snap.processes.len(), "process", "processes"),
        snap.processes
            .iter()
            .map(|p| p.threads)
            .sum::<u32>()
            .to_string(),
        format_bytes(snap.total_rss_bytes() as f64),
        partial_total(snap.processes.iter().map(|p| p.pss_bytes)),
        partial_total(snap.processes.iter().map(|p| p.uss_bytes)),
        partial_total(snap.processes.iter().map(|p| p.swap_bytes)),
    ]);
    use Align::{Left, Right};
    render(
        &[
            "pid", "ppid", "name", "threads", "RSS", "PSS", "USS", "swap",
        ],
        &[Right, Right, Left, Right, Right, Right, Right, Right],
        &rows,
    )
}

fn to_json(snap: &Snapshot) -> serde_json::Value {
    serde_json::json!({
        "total_rss_bytes": snap.total_rss_bytes(),
        "total_pss_bytes": snap.total_pss_bytes(),
        "total_uss_bytes": snap.total_uss_bytes(),
        "total_swap_bytes": snap.total_swap_bytes(),
        "process_count": snap.processes.len(),
        "processes": snap.processes,
    })
}
#[cfg(test)]
mod tests {
    use super::*;

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
    fn table_has_a_row_per_process_and_totals() {
        let snap = Snapshot {
            processes: vec![
                sample(100, "node", 120, Some(96)),
                sample(101, "python3", 30, Some(12)),
            ],
        };
        insta::assert_snapshot!(render_table(&snap));
    }

    #[test]
    fn unknown_pss_shows_as_question_mark_and_unknown_total() {
        let snap = Snapshot {
            processes: vec![
                sample(100, "node", 120, Some(96)),
                sample(7, "sshd", 8, None),
            ],
        };
        let table = render_table(&snap);
        insta::assert_snapshot!(table);
        let json = to_json(&snap);
        assert!(json["total_pss_bytes"].is_null());
        assert_eq!(json["total_rss_bytes"], 128u64 << 20);
    }

    #[test]
    fn notes_explain_question_marks_and_a_higher_peak_count() {
        let readable = Snapshot {
            processes: vec![sample(100, "node", 120, Some(96))],
        };
        assert!(notes(&readable, Some(1), false).is_empty());
        assert!(notes(&readable, None, false).is_empty());
        let mixed = Snapshot {
            processes: vec![
                sample(100, "node", 120, Some(96)),
                sample(7, "sshd", 8, None),
            ],
        };
        let said = notes(&mixed, Some(5), false);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("PSS, USS and swap are `?` for 1 process whose"));
        assert!(said[0].contains("CAP_SYS_PTRACE"));
        assert!(said[1].starts_with("the peak counted 5 processes, the table 2:"));
        // Root is not told to run as root.
        let as_root = notes(&mixed, None, true);
        assert!(!as_root[0].contains("run clibench as root"), "{as_root:?}");
        assert!(as_root[0].contains("even to root"), "{as_root:?}");
    }

    #[test]
    fn a_total_over_some_unknown_values_is_the_known_sum_marked() {
        assert_eq!(
            partial_total([Some(1 << 20), None].into_iter()),
            "1.0 MiB+?"
        );
        assert_eq!(partial_total([None, None].into_iter()), "?");
        assert_eq!(
            partial_total([Some(1 << 20), Some(1 << 20)].into_iter()),
            "2.0 MiB"
        );
    }

    #[test]
    fn a_measurement_shows_its_peaks_and_notes_under_the_table() {
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
        let text = measurement.render();
        assert!(
            text.starts_with(&render_table(&measurement.snapshot)),
            "{text}"
        );
        assert!(
            text.contains(
                "\nsettled (auto:max=3s,quiet=100ms,tolerance=1%): quiet after 0.730 s\n"
            ),
            "{text}"
        );
        let below: Vec<&str> = text.lines().rev().take(3).collect();
        assert!(
            below[2].starts_with("peak while settling: RSS 130"),
            "{text}"
        );
        assert!(below[2].ends_with(", 3 processes (0 samples)"), "{text}");
        assert!(
            below[1].starts_with("note: PSS, USS and swap are `?`"),
            "{text}"
        );
        assert!(
            below[0].starts_with("note: the peak counted 3 processes"),
            "{text}"
        );
        let json = measurement.to_json();
        assert_eq!(json["peak_rss_bytes"], 130u64 << 20);
        assert_eq!(json["peak_pss_bytes"], 100u64 << 20);
        assert_eq!(json["process_count"], 2);
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
