//! The target's interactive commands started in a terminal: as the trial user, with the
//! clean environment, the program found on the target's PATH, and closed quietly when
//! its error is already recorded.

use crate::pipeline::PhaseContext;
use crate::pipeline::program::TargetError;
use crate::pipeline::program::family::Family;
use crate::spec::{self, Template};
use bench_term::{SpawnOptions, Terminal};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The terminal options for one of the target's interactive commands: as the trial user,
/// with the clean environment plus the section's, in its working folder, with the measure
/// section's size, and the transcript in `transcript`.
pub(crate) fn spawn_options(
    ctx: &PhaseContext,
    command: &[Template],
    cwd: Option<&Template>,
    env: &BTreeMap<String, Template>,
    measure: &spec::Measure,
    transcript: &Path,
) -> Result<SpawnOptions, TargetError> {
    let user = ctx.user()?;
    let values = ctx.values();
    let argv = ctx.expand_command(command, &values)?;
    let Some((program, args)) = argv.split_first() else {
        return Err(TargetError::EmptyCommand);
    };
    let mut extra = measure.env.clone();
    extra.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let environment = ctx.environment(&extra, &values)?;
    let cwd = ctx.cwd(
        cwd.or(measure.cwd.as_ref()),
        &ctx.default_target_cwd()?,
        &values,
    )?;
    let quit = bench_term::parse_keys(&measure.quit).map_err(TargetError::Quit)?;
    let program = resolve_program(program, &environment);
    if user.dedicated {
        // Said in one line before the start, not as the agent's own errors deep inside it.
        let program_folder = Path::new(&program)
            .parent()
            .filter(|_| program.contains('/'));
        let mut folders = vec![
            ("its home", user.home.as_path()),
            ("the working folder", cwd.as_path()),
        ];
        folders.extend(program_folder.map(|folder| ("the program's folder", folder)));
        super::preflight::check(&user.name, &user.identity, &folders)?;
    }
    let mut options = SpawnOptions::new(program)
        .args(args)
        .cwd(cwd)
        .size(measure.cols, measure.rows)
        .transcript(transcript)
        .quit_keys(quit);
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
pub(crate) fn resolve_program(program: &str, env: &BTreeMap<String, String>) -> String {
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

pub(crate) fn options_line(options: &SpawnOptions) -> String {
    std::iter::once(&options.program)
        .chain(&options.args)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Closes a terminal whose error is already recorded; a failure to close is not news.
pub(crate) fn close_quietly(terminal: &mut Terminal) {
    let _ = terminal.close();
}

/// Settles the family of a program in `terminal` by `settle`, reading (and answering)
/// the terminal meanwhile. A settle that ends as [`SettleEnd::Closed`] saw the program
/// close its terminal. What measure, ui, session and the staircase settle with.
///
/// [`SettleEnd::Closed`]: bench_proc::SettleEnd::Closed
pub(crate) fn settle_terminal(
    terminal: &mut Terminal,
    family: Family,
    settle: &bench_proc::Settle,
) -> Result<bench_proc::SettleReport, bench_term::TermError> {
    let (selector, exclude) = family.selector();
    settle_reading(terminal, &selector, &exclude, settle)
}

/// Settles the processes `selector` finds (less `exclude`) by `settle` while reading
/// `terminal`, so that the program never blocks on a full terminal and its start-up
/// queries are answered. `clibench mem` settles its own child's tree this way.
pub(crate) fn settle_reading(
    terminal: &mut Terminal,
    selector: &bench_proc::Selector,
    exclude: &[u32],
    settle: &bench_proc::Settle,
) -> Result<bench_proc::SettleReport, bench_term::TermError> {
    bench_proc::settle::settle(
        &bench_proc::ProcRoot::live(),
        selector,
        exclude,
        settle,
        &mut |left| {
            let began = std::time::Instant::now();
            // `Terminal::settle` returns before its time only when the program closed
            // its terminal.
            terminal.settle(left)?;
            Ok(if began.elapsed() < left {
                bench_proc::settle::Waited::Closed
            } else {
                bench_proc::settle::Waited::Full
            })
        },
    )
}

/// The terminal counts of a window as the result keeps them.
pub(crate) fn terminal_output(
    counts: &bench_term::OutputCounts,
) -> bench_core::detail::TerminalOutput {
    bench_core::detail::TerminalOutput {
        bytes: counts.bytes,
        frames: counts.frames(),
        full_clears: counts.full_clears,
        alt_screen_switches: counts.alt_screen_switches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
