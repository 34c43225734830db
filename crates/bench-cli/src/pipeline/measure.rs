//! The measure phase: cold then warm start in a real terminal to ready; after the cold start
//! settles, the memory of all the target's processes (RSS, PSS, the per-process breakdown);
//! then the agent's background sessions are stopped through its own list/stop commands; on
//! trial 0, `disk` = the home's footprint now minus before the install, whether or not the
//! starts succeeded.
//!
//! This file also holds what the ui and staircase phases share with it: the target's
//! terminal, its process family, and its background sessions.

use super::PhaseContext;
use super::error::FileError;
use super::exec::{self, Step};
use super::recording::{Recording, keep_screen};
use super::state::UserRecord;
use crate::spec::{self, Placeholder, Template};
use bench_core::error_chain;
use bench_core::{Metric, Phase, ProcessMemory, Sample, Side, record};
use bench_proc::{Selector, Snapshot};
use bench_term::{SpawnOptions, Terminal};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The measure phase, or the target's terminal, family or sessions that the measure, ui
/// and staircase phases share, failed.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The spec has no section for the phase.
    #[error("the spec has no [{0}] section")]
    NoSection(&'static str),
    /// Install trial 0 failed, so there is nothing to start.
    #[error("the first installation must succeed before interactive measurements")]
    NoInstallation,
    /// The phase's context lacks the user, or a placeholder has no value.
    #[error(transparent)]
    Context(#[from] super::ContextError),
    /// The target's processes could not be stopped.
    #[error("{action}")]
    Stop {
        /// "stopping the target's processes before measuring".
        action: &'static str,
        /// What is left.
        #[source]
        source: exec::StopError,
    },
    /// A file of the phase could not be copied or its folder made.
    #[error(transparent)]
    File(#[from] FileError),
    /// The process breakdown could not be written.
    #[error("writing {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: bench_core::io::WriteError,
    },
    /// The process breakdown could not be turned into JSON.
    #[error("serializing the processes")]
    Serialize(#[source] serde_json::Error),
    /// The target's terminal could not be started.
    #[error("starting `{command}` in a terminal")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// Settling or closing a terminal failed.
    #[error("{action}")]
    Terminal {
        /// "closing the cold start's terminal".
        action: &'static str,
        /// Why.
        #[source]
        source: bench_term::TermError,
    },
    /// The cold start did not settle (its terminal failed meanwhile).
    #[error(transparent)]
    Settle(bench_term::TermError),
    /// The command to start is empty once expanded.
    #[error("the command is empty")]
    EmptyCommand,
    /// `[measure] quit` names a key that does not exist.
    #[error("[measure] quit")]
    Quit(#[source] bench_term::KeyError),
    /// No process of the target was there to measure.
    #[error("no process of the target was found for the memory measurement")]
    NoProcesses,
    /// The target's memory could not be read.
    #[error("reading the memory of {selector}")]
    Snapshot {
        /// The processes, as `Selector`'s debug form.
        selector: String,
        /// Why.
        #[source]
        source: bench_proc::SnapshotError,
    },
    /// Without root, the phase must be a child subreaper to keep the target's daemons.
    #[error("becoming a child subreaper")]
    Subreaper(#[source] bench_proc::SubreaperError),
    /// Install trial 0 did not record the home's size before the install.
    #[error("install trial 0 did not record `{}`", super::install::HOME_BEFORE_KEY)]
    NoHomeBefore,
    /// The recorded size before the install is not a number.
    #[error("parsing the home's size before the install")]
    HomeBefore(#[source] std::num::ParseIntError),
    /// The home's footprint could not be measured.
    #[error("measuring the footprint of {}", home.display())]
    Disk {
        /// The home.
        home: PathBuf,
        /// Why.
        #[source]
        source: bench_proc::DiskError,
    },
    /// The session list is not JSON.
    #[error("the session list is not JSON: {tail:?}")]
    SessionsNotJson {
        /// The end of the output.
        tail: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The session list lacks its array.
    #[error("the session list has no array `{field}`: {listing}")]
    NoSessions {
        /// `sessions_field`.
        field: String,
        /// The list.
        listing: String,
    },
    /// A session's stop command failed and the session is still listed.
    #[error("{0}")]
    SessionLeft(String),
    /// The list or stop command did not finish.
    #[error(transparent)]
    Exec(#[from] exec::ExecError),
}

impl MeasureError {
    fn stop(action: &'static str) -> impl FnOnce(exec::StopError) -> MeasureError {
        move |source| MeasureError::Stop { action, source }
    }
}

/// Runs the measure phase for `ctx.trial`.
pub fn run(ctx: &PhaseContext, side: &mut Side) -> Result<(), MeasureError> {
    let measure = ctx
        .spec
        .measure
        .as_ref()
        .ok_or(MeasureError::NoSection("measure"))?;
    let install_ok = first_install_succeeded(side, ctx.spec.install.command.is_some());
    if !install_ok {
        return Err(MeasureError::NoInstallation);
    }
    let user = ctx.user()?;
    let family = Family::of(user)?;
    exec::stop_user(user).map_err(MeasureError::stop(
        "stopping the target's processes before measuring",
    ))?;
    let outcome = starts(ctx, measure, side, user, &family);
    let kept = keep_start_files(ctx, &["cold", "warm"]);
    let stopped =
        exec::stop_user(user).map_err(MeasureError::stop("stopping the target's processes"));
    // The footprint is the installation's, whether or not the target then started.
    if ctx.trial == 0 {
        let sample = match disk_growth(ctx, side, &user.home) {
            Ok(bytes) => Sample::Value(bytes as f64),
            Err(error) => Sample::Error(error_chain(&error)),
        };
        record(side, Metric::Disk, 0, sample);
    }
    outcome?;
    kept?;
    stopped
}

/// Keeps, for each start `<name>-<trial>` of this trial that saved them, the screen at ready
/// as `OUT/logs/screen-at-ready-<trial>-<name>.txt` and the terminal recording as
/// `OUT/transcripts/<name>-<trial>.cast` (asciicast v2, `asciinema play` replays it).
pub(super) fn keep_start_files(ctx: &PhaseContext, names: &[&str]) -> Result<(), MeasureError> {
    let trial = ctx.trial;
    for name in names {
        let folder = ctx.logs_dir().join(format!("{name}-{trial}"));
        let screen = folder.join(bench_term::READY_SCREEN_FILE);
        if screen.is_file() {
            let kept = ctx.log_path(&format!("screen-at-ready-{trial}-{name}.txt"))?;
            std::fs::copy(&screen, &kept).map_err(FileError::doing(format!(
                "copying {} to {}",
                screen.display(),
                kept.display()
            )))?;
        }
        let cast = folder.join(bench_term::CAST_FILE);
        if cast.is_file() {
            let dir = ctx.out.join("transcripts");
            std::fs::create_dir_all(&dir)
                .map_err(FileError::doing(format!("creating {}", dir.display())))?;
            let kept = dir.join(format!("{name}-{trial}.cast"));
            std::fs::copy(&cast, &kept).map_err(FileError::doing(format!(
                "copying {} to {}",
                cast.display(),
                kept.display()
            )))?;
        }
    }
    Ok(())
}

/// The screen at ready of the first start that saved one (trial 0's cold start when it got
/// that far), as a Markdown section for report.md: where it came from and the screen in a
/// fenced text block. `None` when no start saved a screen at ready.
pub fn ready_screen_section(out: &Path) -> Option<String> {
    let logs = out.join("logs");
    let mut found: Vec<(u32, bool, PathBuf)> = std::fs::read_dir(&logs)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rest = name
                .strip_prefix("screen-at-ready-")?
                .strip_suffix(".txt")?;
            let (trial, start) = rest.split_once('-')?;
            Some((trial.parse().ok()?, start != "cold", entry.path()))
        })
        .collect();
    found.sort();
    let (_, _, path) = found.into_iter().next()?;
    let screen = std::fs::read_to_string(&path).ok()?;
    let fence = if screen.contains("```") {
        "~~~~"
    } else {
        "```"
    };
    Some(format!(
        "## Screen at ready\n\nThe screen when the program was judged ready ({}):\n\n{fence}text\n{}\n{fence}\n",
        path.strip_prefix(out).unwrap_or(&path).display(),
        screen.trim_end()
    ))
}

/// Whether install trial 0 succeeded: it recorded a time, or (for a target with no
/// installer, which records none) it recorded no error.
fn first_install_succeeded(side: &Side, has_installer: bool) -> bool {
    let mut samples = side
        .metrics
        .get(&Metric::Install)
        .into_iter()
        .flatten()
        .filter(|sample| sample.trial == 0);
    if has_installer {
        samples.any(|sample| sample.value.is_some())
    } else {
        samples.all(|sample| sample.error.is_none())
    }
}

/// The cold and warm starts, as the seed's `measure()`: a failed start is recorded as that
/// metric's error and ends the phase; a failure after the cold start was ready is recorded
/// under `rss`. Returns whether the cold start became ready.
fn starts(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    side: &mut Side,
    user: &UserRecord,
    family: &Family,
) -> Result<bool, MeasureError> {
    let trial = ctx.trial;
    let guard = &measure.ready_guard;
    let mut cold_ready = false;
    for (metric, name) in [(Metric::Cold, "cold"), (Metric::Warm, "warm")] {
        let options = spawn_options(
            ctx,
            &measure.command,
            measure.cwd.as_ref(),
            &measure.env,
            measure,
            &ctx.log_path(&format!("{name}-{trial}"))?,
        )?;
        let recording = Recording::start(*family, Phase::Measure, trial, name);
        let mut terminal = Terminal::spawn(&options).map_err(|source| MeasureError::Spawn {
            command: options_line(&options),
            source,
        })?;
        let elapsed = match terminal.ready_guarded(&measure.ready, measure.ready_timeout.0, guard) {
            Ok(elapsed) => elapsed,
            Err(error) => {
                record(side, metric, trial, Sample::Error(error_chain(&error)));
                close_quietly(&mut terminal);
                recording.finish(side, None);
                return Ok(cold_ready);
            }
        };
        keep_screen(side, Phase::Measure, trial, name, terminal.screen_text());
        let settle_started = Instant::now();
        let settled = terminal.settle(measure.settle.0);
        // A program that restores the terminal and then dies can echo a probe on its way
        // out; a start that did not survive its settle time was no start. `settle` ends
        // early only when the program closed its terminal.
        let closed_early = settle_started.elapsed() < measure.settle.0;
        if closed_early || terminal.session_processes().is_empty() {
            recording.finish(side, Some(elapsed));
            let screen = terminal.screen_text();
            let status = match terminal.close().ok().and_then(|report| report.status) {
                Some(status) => format!(" ({status})"),
                None => String::new(),
            };
            let error = format!(
                "`{}` exited{status} {:.3} s after it looked ready; its last screen:\n{}",
                options_line(&options),
                elapsed.as_secs_f64(),
                screen.trim_end()
            );
            record(side, metric, trial, Sample::Error(error));
            return Ok(cold_ready);
        }
        record(side, metric, trial, Sample::Value(elapsed.as_secs_f64()));
        if metric == Metric::Cold {
            cold_ready = true;
            let memory = settled
                .map_err(MeasureError::Settle)
                .and_then(|()| family.snapshot())
                .and_then(|snapshot| record_memory(ctx, side, &snapshot));
            recording.finish(side, Some(elapsed));
            let closed = terminal.close();
            if let Err(error) = memory {
                record(side, Metric::Rss, trial, Sample::Error(error_chain(&error)));
                return Ok(cold_ready);
            }
            closed.map_err(|source| MeasureError::Terminal {
                action: "closing the cold start's terminal",
                source,
            })?;
            // The cold start's background sessions must not make the warm start warmer
            // than a person's second start would be; the seed stops them here too.
            stop_agents(ctx, measure, user)?;
        } else {
            recording.finish(side, Some(elapsed));
            let closed = terminal.close();
            if let Err(error) = settled {
                side.set_error(format!("warm settle: {}", error_chain(&error)));
            }
            closed.map_err(|source| MeasureError::Terminal {
                action: "closing the warm start's terminal",
                source,
            })?;
        }
    }
    Ok(cold_ready)
}

/// Records `rss`, `pss` (when every process's PSS was readable) and the process breakdown,
/// and keeps the breakdown in `OUT/logs/memory-<trial>.json`.
fn record_memory(
    ctx: &PhaseContext,
    side: &mut Side,
    snapshot: &Snapshot,
) -> Result<(), MeasureError> {
    if snapshot.processes.is_empty() {
        return Err(MeasureError::NoProcesses);
    }
    let trial = ctx.trial;
    record(
        side,
        Metric::Rss,
        trial,
        Sample::Value(snapshot.total_rss_bytes() as f64),
    );
    match snapshot.total_pss_bytes() {
        Some(pss) => record(side, Metric::Pss, trial, Sample::Value(pss as f64)),
        None => record(
            side,
            Metric::Pss,
            trial,
            Sample::Error("the PSS of some process was unreadable".to_owned()),
        ),
    }
    // A comparison flags a count that changes between trials: a daemon came or went.
    side.trial_record_mut(Phase::Measure, trial).process_count =
        Some(u32::try_from(snapshot.processes.len()).unwrap_or(u32::MAX));
    let processes = process_memory(snapshot);
    let path = ctx.log_path(&format!("memory-{trial}.json"))?;
    let json = serde_json::to_string_pretty(&processes).map_err(MeasureError::Serialize)?;
    bench_core::io::write_atomic(&path, json.as_bytes()).map_err(|source| MeasureError::Write {
        path: path.clone(),
        source,
    })?;
    side.set_processes(processes);
    Ok(())
}

/// The home's growth since before the install, with the spec's excludes.
fn disk_growth(ctx: &PhaseContext, side: &Side, home: &Path) -> Result<u64, MeasureError> {
    let before: u64 = side
        .runtime
        .get(super::install::HOME_BEFORE_KEY)
        .ok_or(MeasureError::NoHomeBefore)?
        .parse()
        .map_err(MeasureError::HomeBefore)?;
    let excludes: Vec<&str> = ctx.spec.disk.exclude.iter().map(String::as_str).collect();
    let after = bench_proc::disk_usage(home, &excludes).map_err(|source| MeasureError::Disk {
        home: home.to_path_buf(),
        source,
    })?;
    Ok(after.saturating_sub(before))
}

/// Where the target's processes are found for memory measurements.
#[derive(Debug, Clone, Copy)]
pub(super) enum Family {
    /// A dedicated trial user: all its processes, daemons included.
    Uid(u32),
    /// Without root the target runs as us: everything below this phase process, which
    /// is a child subreaper so that daemons the target detaches stay below it.
    OwnTree(u32),
}

impl Family {
    /// The family of `user`'s target processes. Without a dedicated user this makes the
    /// phase process a child subreaper.
    pub(super) fn of(user: &UserRecord) -> Result<Family, MeasureError> {
        if user.dedicated {
            Ok(Family::Uid(user.identity.uid))
        } else {
            bench_proc::become_subreaper().map_err(MeasureError::Subreaper)?;
            Ok(Family::OwnTree(std::process::id()))
        }
    }

    /// The selector and the pids to leave out.
    pub(super) fn selector(self) -> (Selector, Vec<u32>) {
        match self {
            Family::Uid(uid) => (Selector::Uid(uid), Vec::new()),
            Family::OwnTree(pid) => (Selector::Tree(pid), vec![pid]),
        }
    }

    /// Memory of the family now.
    pub(super) fn snapshot(self) -> Result<Snapshot, MeasureError> {
        let (selector, exclude) = self.selector();
        let snapshot =
            bench_proc::snapshot(&selector).map_err(|source| MeasureError::Snapshot {
                selector: format!("{selector:?}"),
                source,
            })?;
        Ok(snapshot.without(&exclude))
    }
}

/// The per-process breakdown in the result's form.
pub(super) fn process_memory(snapshot: &Snapshot) -> Vec<ProcessMemory> {
    snapshot
        .processes
        .iter()
        .map(|process| ProcessMemory {
            pid: process.pid,
            name: process.name.clone(),
            rss: process.rss_bytes,
            pss: process.pss_bytes,
            uss: process.uss_bytes,
            swap: process.swap_bytes,
            cpu_seconds: Some(process.cpu_seconds),
        })
        .collect()
}

/// The terminal options for one of the target's interactive commands: as the trial user,
/// with the clean environment plus the section's, in its working folder, with the measure
/// section's size, and the transcript in `transcript`.
pub(super) fn spawn_options(
    ctx: &PhaseContext,
    command: &[Template],
    cwd: Option<&Template>,
    env: &BTreeMap<String, Template>,
    measure: &spec::Measure,
    transcript: &Path,
) -> Result<SpawnOptions, MeasureError> {
    let user = ctx.user()?;
    let values = ctx.values();
    let argv = ctx.expand_command(command, &values)?;
    let Some((program, args)) = argv.split_first() else {
        return Err(MeasureError::EmptyCommand);
    };
    let mut extra = measure.env.clone();
    extra.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let environment = ctx.environment(&extra, &values)?;
    let cwd = ctx.cwd(
        cwd.or(measure.cwd.as_ref()),
        &ctx.default_target_cwd()?,
        &values,
    )?;
    let quit = bench_term::parse_keys(&measure.quit).map_err(MeasureError::Quit)?;
    let mut options = SpawnOptions::new(resolve_program(program, &environment))
        .args(args)
        .cwd(cwd)
        .size(measure.cols, measure.rows)
        .transcript(transcript)
        .quit_keys(quit, QUIT_INTERVAL);
    for (name, value) in &environment {
        options = options.env(name, value);
    }
    if user.dedicated {
        options = options.user(user.identity.clone());
    }
    Ok(options)
}

/// `program` as found on the target environment's PATH (the target's PATH, not ours, decides
/// what a bare name means); unchanged when it has a slash or is not found.
pub(super) fn resolve_program(program: &str, env: &BTreeMap<String, String>) -> String {
    if program.contains('/') {
        return program.to_owned();
    }
    let path = env.get("PATH").map(String::as_str).unwrap_or_default();
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| PathBuf::from(dir).join(program))
        .find(|candidate| is_executable(candidate))
        .map(|found| found.display().to_string())
        .unwrap_or_else(|| program.to_owned())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn options_line(options: &SpawnOptions) -> String {
    std::iter::once(&options.program)
        .chain(&options.args)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Pause between two quit keys (a second Ctrl-C must not arrive before the first is read).
const QUIT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(150);

/// Closes a terminal whose error is already recorded; a failure to close is not news.
pub(super) fn close_quietly(terminal: &mut Terminal) {
    let _ = terminal.close();
}

/// The ids of the agent's background sessions, from its list command (the seed's
/// `list --json`); empty when the spec has no list command.
pub(super) fn list_sessions(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &UserRecord,
) -> Result<Vec<String>, MeasureError> {
    let Some(command) = &measure.list_sessions else {
        return Ok(Vec::new());
    };
    let finished = run_target_command(ctx, measure, user, command, &ctx.values(), "list sessions")?;
    parse_session_ids(
        &finished.stdout,
        &measure.sessions_field,
        &measure.session_id_field,
    )
}

/// The session ids in a list command's JSON output: `{"<sessions_field>": [{"<id_field>":
/// "..."}]}`; sessions without an id (or with an empty one) are skipped, as in the seed.
pub(super) fn parse_session_ids(
    output: &str,
    sessions_field: &str,
    id_field: &str,
) -> Result<Vec<String>, MeasureError> {
    let listing: serde_json::Value =
        serde_json::from_str(output.trim()).map_err(|source| MeasureError::SessionsNotJson {
            tail: exec::tail(output),
            source,
        })?;
    let sessions = listing
        .get(sessions_field)
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| MeasureError::NoSessions {
            field: sessions_field.to_owned(),
            listing: listing.to_string(),
        })?;
    Ok(sessions
        .iter()
        .filter_map(|session| session.get(id_field))
        .filter_map(|id| match id {
            serde_json::Value::String(id) if !id.is_empty() => Some(id.clone()),
            serde_json::Value::Number(id) => Some(id.to_string()),
            _ => None,
        })
        .collect())
}

/// Stops the agent's background sessions through its own commands, as the seed's
/// `stop_agents()`: every listed session is stopped; a stop that fails is forgiven only
/// when the session is gone from the list afterwards (it ended by itself meanwhile).
pub(super) fn stop_agents(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &UserRecord,
) -> Result<(), MeasureError> {
    let ids = list_sessions(ctx, measure, user)?;
    stop_sessions(ctx, measure, user, &ids)
}

/// Stops the given background sessions (see [`stop_agents`]).
pub(super) fn stop_sessions(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &UserRecord,
    ids: &[String],
) -> Result<(), MeasureError> {
    let Some(stop) = &measure.stop_session else {
        return Ok(());
    };
    for id in ids {
        let values = ctx.values().with(Placeholder::Id, id.clone());
        let what = format!("stop session {id}");
        let finished = run_target_command(ctx, measure, user, stop, &values, &what);
        let failure = match finished {
            Ok(done) if done.status.success() => continue,
            Ok(done) => format!(
                "{what} failed ({}): {}",
                done.status,
                exec::tail(&done.merged())
            ),
            Err(error) => error_chain(&error),
        };
        if list_sessions(ctx, measure, user)?.contains(id) {
            return Err(MeasureError::SessionLeft(failure));
        }
    }
    Ok(())
}

/// Runs one of the target's own commands (list, stop) as the trial user and captures it.
fn run_target_command(
    ctx: &PhaseContext,
    measure: &spec::Measure,
    user: &UserRecord,
    command: &[Template],
    values: &spec::Values,
    what: &str,
) -> Result<exec::Finished, MeasureError> {
    let argv = ctx.expand_command(command, values)?;
    let env = ctx.environment(&measure.env, values)?;
    let mut argv = argv;
    if let Some(program) = argv.first_mut() {
        *program = resolve_program(program, &env);
    }
    let step = Step {
        what: what.to_owned(),
        argv,
        cwd: ctx.cwd(measure.cwd.as_ref(), &ctx.default_target_cwd()?, values)?,
        env,
        user: Some(user),
        home: Some(user.home.clone()),
        timeout: measure.command_timeout.0,
        log: None,
    };
    Ok(exec::run(&step)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_seeds_format() {
        let output = r#"{"sessions":[{"activeSessionId":"a1"},{"activeSessionId":""},{"other":1},{"activeSessionId":7}]}"#;
        assert_eq!(
            parse_session_ids(output, "sessions", "activeSessionId").unwrap(),
            ["a1", "7"]
        );
    }

    #[test]
    fn a_session_list_that_is_not_json_is_an_error_quoting_it() {
        let error = parse_session_ids("Error: no daemon", "sessions", "activeSessionId")
            .unwrap_err()
            .to_string();
        assert!(error.contains("Error: no daemon"), "{error}");
    }

    #[test]
    fn a_session_list_without_the_array_names_the_field() {
        let error = parse_session_ids(r#"{"items":[]}"#, "sessions", "activeSessionId")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`sessions`"), "{error}");
    }

    #[test]
    fn the_report_shows_the_earliest_cold_screen_at_ready() {
        let out = tempfile::tempdir().unwrap();
        let logs = out.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        assert_eq!(ready_screen_section(out.path()), None);
        for (name, text) in [
            ("screen-at-ready-10-cold.txt", "trial ten\n"),
            ("screen-at-ready-2-warm.txt", "trial two, warm\n"),
            ("screen-at-ready-2-cold.txt", "> ```quoted```\n\n"),
            ("cold-2", "not a screen"),
        ] {
            std::fs::write(logs.join(name), text).unwrap();
        }
        insta::assert_snapshot!(ready_screen_section(out.path()).unwrap(), @r"
        ## Screen at ready

        The screen when the program was judged ready (logs/screen-at-ready-2-cold.txt):

        ~~~~text
        > ```quoted```
        ~~~~
        ");
    }

    #[test]
    fn bare_programs_are_found_on_the_targets_path() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let env = BTreeMap::from([(
            "PATH".to_owned(),
            format!("/nonexistent:{}", dir.path().display()),
        )]);
        // Not executable yet: not found.
        assert_eq!(resolve_program("tool", &env), "tool");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(resolve_program("tool", &env), tool.display().to_string());
        assert_eq!(resolve_program("./x", &env), "./x");
    }
}
