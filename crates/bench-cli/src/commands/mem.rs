//! `clibench mem`: the memory of a process family (RSS, PSS, USS, swap), of a
//! user's processes, or of a command started, settled, measured and stopped.

use super::tty;
use crate::exit::input_error;
use crate::table::{Align, render};
use anyhow::Context;
use bench_core::units::format_bytes;
use bench_proc::{
    ProcessSample, Sampler, SamplerOptions, SamplerReport, Selector, Snapshot, SnapshotError,
    snapshot,
};
use bench_term::ready::parse_duration;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// How often the family's totals are sampled for peaks while a command settles.
const PEAK_INTERVAL: Duration = Duration::from_millis(50);

/// How long stopped processes get between SIGTERM and SIGKILL.
pub(super) const STOP_GRACE: Duration = Duration::from_secs(2);

/// Flags of `clibench mem`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench mem --pid 4242                     a process and all its descendants
  clibench mem --user benchmark1 --json       every process of a user, as JSON on stdout
  clibench mem --settle 5s -- python3 -m http.server
                                              start, settle, measure, stop
  clibench mem --tty -- node                  an interactive program, in a terminal

A started COMMAND runs with stdin, stdout and stderr on /dev/null, in its own process
group; with --tty it runs in a pseudo-terminal (its own session) whose output is read
and whose queries are answered while it settles, as a terminal would. clibench becomes
a child subreaper first, so daemons it double-forks stay in the measured family and
are stopped with it.")]
pub struct Args {
    /// Measure this process and all its descendants.
    #[arg(long, value_name = "PID", conflicts_with = "user")]
    pid: Option<u32>,
    /// Measure every process of this user (a name or a numeric uid).
    #[arg(long, value_name = "USER")]
    user: Option<String>,
    /// After starting COMMAND, wait this long before measuring (e.g. 2s, 500ms).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    settle: String,
    /// Print the measurement as JSON on stdout (the table still goes to stderr).
    #[arg(long)]
    json: bool,
    /// Run COMMAND in a terminal (for REPLs and TUIs, which quit at once when
    /// stdin is /dev/null).
    #[arg(long)]
    tty: bool,
    /// The command to start, measure and stop.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// What to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Pid(u32),
    User { uid: u32, name: String },
    Command(Vec<OsString>),
}

/// `clibench mem`, resolved from the flags.
#[derive(Debug)]
struct Settings {
    target: Target,
    settle: Duration,
    json: bool,
    tty: bool,
}

impl TryFrom<Args> for Settings {
    type Error = anyhow::Error;

    fn try_from(args: Args) -> anyhow::Result<Settings> {
        let settle =
            parse_duration(&args.settle).map_err(|e| input_error(format!("--settle: {e}")))?;
        let given = usize::from(args.pid.is_some())
            + usize::from(args.user.is_some())
            + usize::from(!args.command.is_empty());
        if given != 1 {
            return Err(input_error(
                "give exactly one of --pid PID, --user USER or -- COMMAND",
            ));
        }
        let target = if let Some(pid) = args.pid {
            Target::Pid(pid)
        } else if let Some(user) = args.user {
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
            let uid = resolve_user(&user, &passwd)
                .ok_or_else(|| input_error(format!("--user: no such user: {user}")))?;
            Target::User { uid, name: user }
        } else {
            Target::Command(args.command)
        };
        Ok(Settings {
            target,
            settle,
            json: args.json,
            tty: args.tty,
        })
    }
}

/// Runs `clibench mem`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings::try_from(args)?;
    let mut peaks = None;
    let (title, snap) = match &settings.target {
        Target::Pid(pid) => (
            format!("process {pid} and its descendants"),
            snapshot(&Selector::Tree(*pid)).map_err(|error| match error {
                SnapshotError::NoSuchProcess { pid } => {
                    input_error(format!("--pid: process {pid} does not exist"))
                }
                other => anyhow::Error::new(other),
            })?,
        ),
        Target::User { uid, name } => (
            format!("processes of user {name} (uid {uid})"),
            snapshot(&Selector::Uid(*uid)).context("failed to read the user's processes")?,
        ),
        Target::Command(command) => {
            super::interrupt::stop_family_on_signal(STOP_GRACE)?;
            let (snap, report) = measure_command(command, settings.settle, settings.tty)?;
            peaks = Some(report);
            (
                format!("`{}` and its descendants", display_command(command)),
                snap,
            )
        }
    };
    eprintln!("{title}");
    eprint!("{}", render_table(&snap));
    if let Some(peaks) = &peaks {
        eprintln!(
            "peak while settling: RSS {}, PSS {}, {} processes ({} samples)",
            format_bytes(peaks.peak_rss_bytes as f64),
            bytes(peaks.peak_pss_bytes),
            peaks.peak_process_count,
            peaks.points.len()
        );
    }
    for note in notes(&snap, peaks.as_ref().map(|p| p.peak_process_count)) {
        eprintln!("note: {note}");
    }
    if settings.json {
        let mut json = to_json(&snap);
        if let Some(peaks) = &peaks {
            json["peak_rss_bytes"] = peaks.peak_rss_bytes.into();
            json["peak_pss_bytes"] = peaks.peak_pss_bytes.into();
        }
        println!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the command, lets it settle while a sampler records the family's
/// peaks, measures our whole tree (the command, its children and any daemon
/// re-parented to us), then stops it all.
fn measure_command(
    command: &[OsString],
    settle: Duration,
    tty: bool,
) -> anyhow::Result<(Snapshot, SamplerReport)> {
    bench_proc::become_subreaper()?;
    let me = std::process::id();
    let sampler = Sampler::start(SamplerOptions {
        selector: Selector::Tree(me),
        interval: PEAK_INTERVAL,
        exclude_pids: vec![me],
    });
    let started = if tty {
        tty::spawn(command).map(|terminal| Started::Terminal(Box::new(terminal)))
    } else {
        spawn_quiet(command).map(Started::Quiet)
    };
    let started = match started {
        Ok(started) => started,
        Err(error) => {
            sampler.stop();
            return Err(error);
        }
    };
    match started {
        Started::Quiet(mut child) => {
            let exited_after = settle_watching(&mut child, settle);
            let measured = snapshot(&Selector::Tree(me)).map(|snap| snap.without(&[me]));
            let peaks = sampler.stop();
            let exited = child.try_wait().ok().flatten();
            let stopped = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
            let _ = child.try_wait();
            let snap = measured.context("failed to measure the command's family")?;
            stopped.context("failed to stop the command's family")?;
            if snap.processes.is_empty() {
                anyhow::bail!(tty::exited_without_terminal(command, exited, exited_after));
            }
            Ok((snap, peaks))
        }
        Started::Terminal(mut terminal) => {
            // Reading the terminal while settling keeps the program from blocking on
            // a full terminal and answers its start-up queries.
            let settled = terminal.settle(settle);
            let measured = snapshot(&Selector::Tree(me)).map(|snap| snap.without(&[me]));
            let peaks = sampler.stop();
            let screen = terminal.screen_text();
            let closed = terminal.close();
            // Daemons that left the terminal's session are still our descendants.
            let stopped = bench_proc::stop(&Selector::Tree(me), STOP_GRACE);
            settled.context("failed to read the command's terminal")?;
            let snap = measured.context("failed to measure the command's family")?;
            stopped.context("failed to stop the command's family")?;
            if snap.processes.is_empty() {
                let status = closed.as_ref().ok().and_then(|report| report.status);
                anyhow::bail!(tty::exited_in_terminal(command, status, &screen));
            }
            closed.context("failed to close the command's terminal")?;
            Ok((snap, peaks))
        }
    }
}

/// A started command: quiet (stdio on /dev/null) or in a terminal.
enum Started {
    Quiet(Child),
    Terminal(Box<bench_term::Terminal>),
}

/// Waits `settle`, noting how long after the start the command itself exited
/// (`None` while it runs). Its daemons may live on and are measured anyway.
fn settle_watching(child: &mut Child, settle: Duration) -> Option<Duration> {
    const POLL: Duration = Duration::from_millis(20);
    let started = Instant::now();
    let mut exited_after = None;
    loop {
        let elapsed = started.elapsed();
        if elapsed >= settle {
            return exited_after;
        }
        if exited_after.is_none() && !matches!(child.try_wait(), Ok(None)) {
            exited_after = Some(elapsed);
        }
        std::thread::sleep(POLL.min(settle - elapsed));
    }
}

/// Spawns a command in its own process group with stdio on /dev/null.
pub(super) fn spawn_quiet(command: &[OsString]) -> anyhow::Result<Child> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| input_error("no command given after --"))?;
    Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|error| {
            input_error(format!(
                "failed to start `{}`: {error}",
                display_command(command)
            ))
        })
}

pub(super) fn display_command(command: &[OsString]) -> String {
    command
        .iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the table cannot say by itself: why some values are `?`, and why the peak counted
/// more processes than the table shows.
fn notes(snap: &Snapshot, peak_process_count: Option<u32>) -> Vec<String> {
    let mut notes = Vec::new();
    let unreadable = snap
        .processes
        .iter()
        .filter(|p| p.pss_bytes.is_none())
        .count();
    if unreadable > 0 {
        notes.push(format!(
            "PSS, USS and swap are `?` for {unreadable} process(es) whose /proc/PID/smaps_rollup \
             could not be read: the kernel shows another user's smaps_rollup only to root or a \
             process with CAP_SYS_PTRACE (run clibench as root, or as that user); RSS then comes from \
             /proc/PID/stat, which anyone may read"
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

/// A uid from a numeric string or a name in `/etc/passwd`'s text.
fn resolve_user(user: &str, passwd: &str) -> Option<u32> {
    if let Ok(uid) = user.parse() {
        return Some(uid);
    }
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == user).then_some(())?;
        fields.nth(1)?.parse().ok()
    })
}

fn bytes(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), |v| format_bytes(v as f64))
}

/// The per-process table with a totals row. `?` marks a value the kernel
/// would not show us (another user's process without privilege).
fn render_table(snap: &Snapshot) -> String {
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
        match snap.processes.len() {
            1 => "1 process".to_string(),
            n => format!("{n} processes"),
        },
        snap.processes
            .iter()
            .map(|p| p.threads)
            .sum::<u32>()
            .to_string(),
        format_bytes(snap.total_rss_bytes() as f64),
        bytes(snap.total_pss_bytes()),
        bytes(snap.total_uss_bytes()),
        bytes(snap.total_swap_bytes()),
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
        assert!(notes(&readable, Some(1)).is_empty());
        assert!(notes(&readable, None).is_empty());
        let mixed = Snapshot {
            processes: vec![
                sample(100, "node", 120, Some(96)),
                sample(7, "sshd", 8, None),
            ],
        };
        let said = notes(&mixed, Some(5));
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("PSS, USS and swap are `?` for 1 process(es)"));
        assert!(said[0].contains("CAP_SYS_PTRACE"));
        assert!(said[1].starts_with("the peak counted 5 processes, the table 2:"));
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
