//! `clibench run` end to end on the built-in demo agent (as root and as a normal user), and
//! the faults the pipeline must survive: a TUI that never becomes ready, one that crashes, a
//! daemon that ignores SIGTERM, a kernel that never answers, and Ctrl-C mid-phase. After
//! each, nothing of the run may be left: no process, no user, no home, no state file.

pub(crate) use crate::is_root;
use crate::{clibench, run, shadow_tool, system_tool};
use bench_core::{Metric, ResultFile};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh folder with the demo written into it (`--write-demo`); returns the folder and
/// the demo's spec.
pub(crate) fn demo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let result = run(clibench()
        .args(["run", "--write-demo"])
        .arg(dir.path().join("demo")));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let spec = PathBuf::from(result.stdout.trim());
    assert!(spec.is_file(), "{spec:?}");
    (dir, spec)
}

/// Replaces `from` (which must occur exactly once) by `to` in the spec.
pub(crate) fn edit(spec: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(spec).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from:?} in:\n{text}");
    fs::write(spec, text.replace(from, to)).unwrap();
}

/// `clibench run SPEC --out OUT --trials 1 [--phases PHASES]`.
fn run_demo(spec: &Path, out: &Path, phases: Option<&str>) -> crate::Run {
    let mut flags = vec!["--trials", "1"];
    if let Some(phases) = phases {
        flags.extend(["--phases", phases]);
    }
    run_spec(spec, out, &flags)
}

/// `clibench run SPEC --out OUT FLAGS...`.
fn run_spec(spec: &Path, out: &Path, flags: &[&str]) -> crate::Run {
    run(clibench()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args(flags))
}

/// Every phase's log, for a failure message that explains itself.
pub(crate) fn phase_logs(out: &Path) -> String {
    let mut logs: Vec<PathBuf> = fs::read_dir(out.join("logs"))
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    logs.retain(|path| {
        path.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("phase-"))
    });
    logs.sort();
    logs.iter()
        .map(|path| {
            let text = fs::read_to_string(path).unwrap_or_default();
            format!("--- {}\n{text}", path.display())
        })
        .collect()
}

pub(crate) fn load(out: &Path) -> ResultFile {
    ResultFile::load(&out.join("result.json")).expect("result.json is intact and valid")
}

/// The error recorded for `metric` on trial 0, or the side's error.
fn error_of(result: &ResultFile, metric: Metric) -> String {
    result
        .side
        .metrics
        .get(&metric)
        .into_iter()
        .flatten()
        .find(|sample| sample.trial == 0)
        .and_then(|sample| sample.error.clone())
        .unwrap_or_else(|| panic!("no error recorded for {metric}: {:#?}", result.side))
}

/// The trial users a root run created, as its install logs name their homes.
fn run_users(out: &Path) -> Vec<String> {
    let pattern = regex::Regex::new(r"/home/(clibench-[0-9a-z]+-[0-9]+)").unwrap();
    let mut users = Vec::new();
    for entry in fs::read_dir(out.join("logs")).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap_or_default();
        for found in pattern.captures_iter(&text) {
            if !users.contains(&found[1].to_owned()) {
                users.push(found[1].to_owned());
            }
        }
    }
    users
}

/// Every live process whose command line or environment mentions one of `needles`.
fn processes_mentioning(needles: &[String]) -> Vec<String> {
    let own = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == own {
            continue;
        }
        let read = |file: &str| {
            fs::read(format!("/proc/{name}/{file}"))
                .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
                .unwrap_or_default()
        };
        let (cmdline, environ) = (read("cmdline"), read("environ"));
        if needles
            .iter()
            .any(|needle| cmdline.contains(needle.as_str()) || environ.contains(needle.as_str()))
        {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

/// Nothing of the run in `out` is left: the state file is gone (cleanup removed every user,
/// folder and server it listed), no user or home of the run exists, and no process mentions
/// the output folder or a trial home. `dedicated_users`: the run was root and made users.
pub(crate) fn assert_nothing_left(out: &Path, dedicated_users: bool) {
    assert!(
        !out.join("state.json").exists(),
        "cleanup left {}: {}",
        out.join("state.json").display(),
        fs::read_to_string(out.join("state.json")).unwrap_or_default()
    );
    let mut needles = vec![out.display().to_string()];
    if dedicated_users {
        let users = run_users(out);
        assert!(
            !users.is_empty(),
            "no trial user found in the logs of {}",
            out.display()
        );
        let passwd = fs::read_to_string("/etc/passwd").unwrap();
        for user in &users {
            assert!(
                !passwd
                    .lines()
                    .any(|line| line.starts_with(&format!("{user}:"))),
                "user {user} was not removed"
            );
            let home = Path::new("/home").join(user);
            assert!(!home.exists(), "{} was not removed", home.display());
            needles.push(home.display().to_string());
        }
    }
    let left = processes_mentioning(&needles);
    assert!(left.is_empty(), "processes left behind: {left:#?}");
}

/// Whether a default run of the demo records `metric`: every metric a pipeline phase
/// records, but not the standalone commands' ones, nor a paste (`--scenario paste` asks for
/// one; tests/it/scenarios.rs), nor a slope, which its three turns are too few for
/// (docs/spec.md, `[session]`).
fn the_demo_records(metric: &Metric) -> bool {
    !metric.standalone()
        && !metric.on_request()
        && !matches!(
            metric,
            Metric::SessionGrowth | Metric::LagGrowth | Metric::RenderGrowth
        )
}

#[test]
fn demo_run_fills_every_metric_and_leaves_nothing() {
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, None);
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let saved = load(&out);
    for metric in Metric::ALL.into_iter().filter(the_demo_records) {
        let value = saved
            .side
            .metrics
            .get(&metric)
            .into_iter()
            .flatten()
            .find(|sample| sample.trial == 0)
            .and_then(|sample| sample.value);
        assert!(
            // An idle agent may well use no CPU and write nothing at all.
            value.is_some_and(|value| {
                value > 0.0
                    || matches!(metric, Metric::UiCpu | Metric::IdleCpu | Metric::IdleOutput)
            }),
            "{metric} has no value: {:?}",
            saved.side.metrics.get(&metric)
        );
    }
    assert!(!saved.side.processes.is_empty());
    // A start less its wait for a CPU: recorded for both starts, never above the start.
    for (start, unqueued) in [
        (Metric::Cold, Metric::ColdUnqueued),
        (Metric::Warm, Metric::WarmUnqueued),
    ] {
        let value = |metric| saved.side.values(metric)[0];
        assert!(
            value(unqueued) > 0.0 && value(unqueued) <= value(start),
            "{unqueued} {} against {start} {}",
            value(unqueued),
            value(start)
        );
    }
    // The keystroke distribution behind the median: as many samples as the spec asks.
    let keystrokes: Vec<f64> =
        serde_json::from_str(&fs::read_to_string(out.join("logs/keystrokes-0.json")).unwrap())
            .unwrap();
    assert_eq!(keystrokes.len(), 10);
    // The report on stdout is the one written to report.md, and it names every metric.
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert_eq!(report, result.stdout);
    for metric in Metric::ALL.into_iter().filter(the_demo_records) {
        assert!(
            report.contains(&format!("`{metric}`")),
            "{metric}:\n{report}"
        );
    }
    // Every start kept its screen at ready and a recording; the report shows the first screen.
    let cold_screen = fs::read_to_string(out.join("logs/screen-at-ready-0-cold.txt")).unwrap();
    assert!(out.join("logs/screen-at-ready-0-warm.txt").is_file());
    assert!(
        report.contains(&format!(
            "## Screen at ready\n\nThe screen when the program was judged ready \
             (logs/screen-at-ready-0-cold.txt):\n\n```text\n{}\n```\n",
            cold_screen.trim_end()
        )),
        "{report}"
    );
    for start in ["cold-0", "warm-0", "ui-0"] {
        let cast = fs::read_to_string(out.join(format!("transcripts/{start}.cast"))).unwrap();
        let recording = bench_term::asciicast::Recording::parse(&cast).unwrap();
        assert!(recording.marker("ready").is_some(), "{start}");
        assert!(
            recording.events.windows(2).all(|w| w[0].at <= w[1].at),
            "{start}"
        );
    }
    for phase in [
        "prepare",
        "install",
        "measure",
        "runtime",
        "ui",
        "staircase",
    ] {
        assert!(
            result.stderr.contains(&format!("{phase} trial 0: ok")),
            "{phase}: {}",
            result.stderr
        );
    }
    assert_nothing_left(&out, is_root());
}

#[test]
fn later_trials_take_the_installs_in_turn() {
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let flags = [
        "--installs",
        "2",
        "--trials",
        "3",
        "--keep-users",
        "--phases",
        "prepare,install,measure",
    ];
    let result = run_spec(&spec, &out, &flags);
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let saved = load(&out);
    let installs: Vec<Option<u32>> = (0..3)
        .map(|trial| {
            let record =
                saved.side.trials.iter().find(|record| {
                    record.phase == bench_core::Phase::Measure && record.trial == trial
                });
            record.and_then(|record| record.install)
        })
        .collect();
    assert_eq!(installs, [Some(0), Some(1), Some(0)]);
    assert_eq!(saved.side.values(Metric::Cold).len(), 3);
    // A start makes the agent's sessions folder in the home it runs in: install 1's home
    // has one only if trial 1 ran there (its install writes just the settings file).
    let state: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("state.json")).unwrap()).unwrap();
    for user in state["users"].as_array().unwrap() {
        let home = Path::new(user["home"].as_str().unwrap());
        assert!(
            home.join(".demo-agent/sessions").is_dir(),
            "install {} was never started in: {}",
            user["install"],
            home.display()
        );
    }
    let cleanup = run_cleanup(&out);
    assert_eq!(cleanup.code, Some(0), "stderr: {}", cleanup.stderr);
    assert_nothing_left(&out, is_root());
}

#[test]
fn the_target_never_sees_clibenchs_own_environment() {
    let (dir, spec) = demo();
    // The TUI shows its own environment: the secret must not be there, HOME must be the
    // trial home.
    let steps = r#"[[ui.steps]]
name = "help""#;
    edit(
        &spec,
        steps,
        &format!(
            r#"[[ui.steps]]
name = "secret"
keys = "env CLIBENCH_TEST_SECRET_TOKEN\r"
expect = "CLIBENCH_TEST_SECRET_TOKEN is not set"
timeout = "5s"

[[ui.steps]]
name = "home"
keys = "env HOME\r"
expect = "HOME=/"

{steps}"#
        ),
    );
    let out = dir.path().join("out");
    let secret = "hunter2-do-not-leak";
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1", "--phases", "prepare,install,ui"])
        .env("CLIBENCH_TEST_SECRET_TOKEN", secret));
    assert_eq!(
        result.code,
        Some(0),
        "stderr: {}\n{}",
        result.stderr,
        phase_logs(&out)
    );
    let saved = load(&out);
    assert!(
        saved.side.timings.contains_key("ui:secret"),
        "{:?}",
        saved.side.timings
    );
    // Nothing the target or its installer wrote (logs, transcripts) holds the secret.
    let mut stack = vec![out.clone()];
    while let Some(folder) = stack.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = fs::read(&path).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(secret),
                    "{} holds the secret",
                    path.display()
                );
            }
        }
    }
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_malformed_spec_fails_before_anything_runs() {
    let (dir, spec) = demo();
    edit(&spec, "[measure]\ncommand =", "[measure]\ncomand =");
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, None);
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(result.stderr.contains("comand"), "{}", result.stderr);
    assert!(result.stderr.contains("demo.toml:"), "{}", result.stderr);
    assert!(
        !out.exists(),
        "nothing may be created for a spec that does not parse"
    );
}

#[test]
fn repository_and_commit_flags_pick_the_build() {
    let (dir, spec) = demo();
    let source = dir.path().join("demo").join("source");
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(&source)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    git(&["commit", "--quiet", "--allow-empty", "-m", "a newer build"]);
    let newer = git(&["rev-parse", "HEAD"]);
    let out = dir.path().join("out");
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--phases", "prepare", "--commit", &newer, "--repository"])
        .arg(&source));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    assert_eq!(load(&out).side.sha, newer);

    let bad = dir.path().join("bad");
    let result = run(clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&bad)
        .args(["--commit", "abc123"]));
    assert_eq!(result.code, Some(2), "stderr: {}", result.stderr);
    assert!(result.stderr.contains("40-character"), "{}", result.stderr);
    assert!(!bad.exists(), "nothing may be created for a bad --commit");
}

/// A Unix user made for one test, removed when dropped (the test checks that none of its
/// processes is left).
struct TempUser {
    name: String,
}

impl TempUser {
    fn create(home: &Path) -> TempUser {
        let name = format!("cbt{}", std::process::id());
        let output = shadow_tool(
            system_tool("useradd")
                .args(["--no-create-home", "--shell", "/bin/sh", "--home-dir"])
                .arg(home)
                .arg(&name),
        );
        assert!(
            output.status.success(),
            "useradd {name} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        TempUser { name }
    }
}

impl Drop for TempUser {
    fn drop(&mut self) {
        shadow_tool(system_tool("userdel").arg(&self.name));
    }
}

/// A new normal user owning `dir` (the demo's spec and output) and a home in it, and a
/// command that runs clibench as that user from the home, in a clean environment.
fn as_normal_user(dir: &Path, spec: &Path) -> (TempUser, Command) {
    let home = dir.join("home");
    fs::create_dir(&home).unwrap();
    let user = TempUser::create(&home);
    for path in [dir, home.as_path(), spec.parent().unwrap()] {
        let status = Command::new("chown")
            .args(["-R", &format!("{}:", user.name)])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let mut command = Command::new("/usr/sbin/runuser");
    command
        .args(["-u", &user.name, "--"])
        .arg(env!("CARGO_BIN_EXE_clibench"))
        .current_dir(&home)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8");
    (user, command)
}

#[test]
fn demo_runs_as_a_normal_user() {
    if !is_root() {
        bench_core::skip_test!(
            "needs root to become a normal user; as one already, the end-to-end test above covers this case"
        );
    }
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let (user, mut command) = as_normal_user(dir.path(), &spec);
    let result = run(command
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1"]));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let saved = load(&out);
    for metric in Metric::ALL.into_iter().filter(the_demo_records) {
        assert!(
            !saved.side.values(metric).is_empty(),
            "{metric} has no value: {:?}",
            saved.side.metrics.get(&metric)
        );
    }
    // Without root the target ran as the user itself, in a home under OUT.
    assert!(
        !result.stderr.contains("useradd"),
        "a normal user cannot create users: {}",
        result.stderr
    );
    assert_nothing_left(&out, false);
    let left = Command::new("pgrep")
        .args(["-u", &user.name])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "processes of {} left: {}",
        user.name,
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn a_duet_as_a_normal_user_runs_the_sides_apart() {
    if !is_root() {
        bench_core::skip_test!("needs root to become a normal user");
    }
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    let (_user, mut command) = as_normal_user(dir.path(), &spec);
    let result = run(command
        .arg("ab")
        .arg(&spec)
        .args([
            "--schedule",
            "duet",
            "--trials",
            "2",
            "--memory-trials",
            "1",
        ])
        .args(["--phases", "prepare,install,measure,runtime"])
        .arg("--out")
        .arg(&out));
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    // Both sides run as the user itself, so each side's family (clibench's own tree)
    // would hold the other's programs: nothing ran together, nothing says it did.
    for side in ["base", "head"] {
        let saved = bench_core::ResultFile::load(&out.join(side).join("result.json")).unwrap();
        for record in &saved.side.trials {
            assert_eq!(record.shared_cpu, None, "{side}: {record:?}");
            assert!(
                record.starts.iter().all(|start| start.shared_cpu.is_none()),
                "{side}: {record:?}"
            );
        }
        assert_eq!(saved.side.values(Metric::KernelExec).len(), 2, "{side}");
        // The memory trial, then the two pairs `--trials 2` asks for.
        assert_eq!(saved.side.values(Metric::Cold).len(), 3, "{side}");
    }
    assert!(!result.stdout.contains("same moment"), "{}", result.stdout);
}

#[test]
fn a_tui_that_never_becomes_ready_fails_cold_with_the_screen_and_skips_ui_and_session() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--never-ready"]"#,
    );
    edit(&spec, r#"ready_timeout = "20s""#, r#"ready_timeout = "2s""#);
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, Some("prepare,install,measure,ui,session"));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    assert!(
        result.stderr.contains("measure trial 0: failed"),
        "{}",
        result.stderr
    );
    let error = error_of(&load(&out), Metric::Cold);
    // The timeout names what it waited for and shows the screen the TUI left.
    assert!(error.contains("loading the model"), "{error}");
    // One wait of ready_timeout, not one per phase: ui and session name measure's cause.
    for phase in ["ui", "session"] {
        let skipped = format!("{phase}: skipped: ");
        let line = result
            .stderr
            .lines()
            .find(|line| line.contains(&skipped))
            .unwrap_or_else(|| panic!("no '{skipped}' in:\n{}", result.stderr));
        assert!(line.contains("same failure as measure trial 0"), "{line}");
        assert!(line.contains("timed out after"), "{line}");
    }
    assert!(!out.join("logs/phase-ui-0.log").exists());
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_screen_at_ready_without_the_required_prompt_fails_cold_with_the_screen() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"ready = "probe""#,
        "ready = \"probe\"\nready_require = \"^no such prompt$\"\nquit = [\"C-c\"]",
    );
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, Some("prepare,install,measure"));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let error = error_of(&load(&out), Metric::Cold);
    assert!(
        error.starts_with(
            "the screen at ready does not match the required ^no such prompt$; the screen at ready:\n  | "
        ),
        "{error}"
    );
    // The blocked start's screen is kept like any other.
    let screen = fs::read_to_string(out.join("logs/screen-at-ready-0-cold.txt")).unwrap();
    assert!(
        error.contains(screen.lines().next().unwrap()),
        "{error}\n{screen}"
    );
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_program_folder_the_trial_user_cannot_enter_fails_before_the_start_naming_it() {
    if !is_root() {
        bench_core::skip_test!("needs root: only a dedicated trial user has its own uid to check");
    }
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    // A folder only root may enter, holding the program: as on a machine whose folders
    // lost their x bit.
    let closed = dir.path().join("closed");
    fs::create_dir_all(closed.join("bin")).unwrap();
    let program = closed.join("bin/prog");
    fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
    let spec = dir.path().join("spec.toml");
    fs::write(
        &spec,
        format!(
            "name = \"closed\"\n[measure]\ncommand = [\"{}\"]\nready = \"exit\"\n",
            program.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &["--trials", "1"]);
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let expected = format!(
        "cannot enter the program's folder {}: {} has mode 0700 (owner uid 0, group 0) without \
         the x bit for it",
        closed.join("bin").display(),
        closed.display()
    );
    let said = format!("{}{}", result.stderr, phase_logs(&out));
    assert!(
        said.contains("preflight: the trial user clibench-"),
        "{said}"
    );
    assert!(said.contains(&expected), "{said}");
    // No install ran to name the user in a log: the message names it, and it is gone.
    let (_, after) = said.split_once("preflight: the trial user ").unwrap();
    let (user, _) = after.split_once(' ').unwrap();
    let passwd = fs::read_to_string("/etc/passwd").unwrap();
    assert!(
        !passwd
            .lines()
            .any(|line| line.starts_with(&format!("{user}:")))
    );
    assert_nothing_left(&out, false);
}

#[test]
fn a_tui_that_crashes_fails_cold_with_its_exit() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--crash-after", "0.2"]"#,
    );
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, Some("prepare,install,measure"));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let error = error_of(&load(&out), Metric::Cold);
    assert!(error.contains("exit status: 3"), "{error}");
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_daemon_that_ignores_sigterm_fails_measure_and_is_killed() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--daemon-ignore-sigterm"]"#,
    );
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, Some("prepare,install,measure"));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let saved = load(&out);
    // The start itself was measured; stopping the background session is what failed.
    assert_eq!(saved.side.values(Metric::Cold).len(), 1);
    let error = saved.side.error.clone().unwrap_or_default();
    assert!(error.contains("did not stop"), "{error}");
    assert_nothing_left(&out, is_root());
}

#[test]
fn a_kernel_that_never_answers_fails_kernel_start() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent", "kernel"]"#,
        r#"command = ["python3", "-c", "import time; time.sleep(600)"]"#,
    );
    edit(&spec, r#"timeout = "30s""#, r#"timeout = "2s""#);
    let out = dir.path().join("out");
    let result = run_demo(&spec, &out, Some("prepare,install,runtime"));
    assert_eq!(result.code, Some(1), "stderr: {}", result.stderr);
    let error = error_of(&load(&out), Metric::KernelStart);
    assert!(error.contains("ready"), "{error}");
    assert_nothing_left(&out, is_root());
}

/// A `clibench run` that is interrupted (SIGINT) and waited for if the test fails before
/// it does so itself, so that a failing test still leaves nothing behind.
struct Interrupted(Option<std::process::Child>);

impl Interrupted {
    fn get(&mut self) -> &mut std::process::Child {
        self.0.as_mut().expect("the run is still held")
    }

    fn take(&mut self) -> std::process::Child {
        self.0.take().expect("the run is still held")
    }
}

impl Drop for Interrupted {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }
}

#[test]
fn ctrl_c_mid_phase_stops_everything_and_keeps_the_result_valid() {
    let (dir, spec) = demo();
    // A start that never becomes ready keeps measure busy until we interrupt it.
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--never-ready"]"#,
    );
    edit(
        &spec,
        r#"ready_timeout = "20s""#,
        r#"ready_timeout = "100s""#,
    );
    let out = dir.path().join("out");
    let mut child = Interrupted(Some(
        clibench()
            .arg("run")
            .arg(&spec)
            .arg("--out")
            .arg(&out)
            .args(["--trials", "1", "--phases", "prepare,install,measure"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    // Wait until the measure phase runs, then give its TUI time to start: the interrupt
    // must find it mid-way (when it comes earlier, everything must still be stopped).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join("logs/phase-measure-0.log").exists() {
        assert!(Instant::now() < deadline, "measure never started");
        assert!(
            child.get().try_wait().unwrap().is_none(),
            "clibench run ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let status = Command::new("kill")
        .args(["-INT", &child.get().id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.take().wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "stderr: {stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // What the finished phases recorded is still there.
    let saved = load(&out);
    assert_eq!(saved.side.values(Metric::Install).len(), 1);
    assert_nothing_left(&out, is_root());
}

/// The live (not zombie) children of `pid`, with their command lines (NUL-separated).
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap() {
        let Ok(child) = entry.unwrap().file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // After the name in parentheses: state, then ppid.
        let mut fields = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace();
        let (state, ppid) = (fields.next(), fields.next());
        if state != Some("Z") && ppid == Some(pid.to_string().as_str()) {
            let cmdline = fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            found.push((child, String::from_utf8_lossy(&cmdline).into_owned()));
        }
    }
    found
}

/// Whether `pid` runs (exists and is not a zombie).
fn is_running(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn a_phase_dies_with_a_run_killed_by_sigkill() {
    let (dir, spec) = demo();
    let out = dir.path().join("out");
    // An agent that never becomes ready (it reads its input and shows none) keeps measure
    // waiting for an hour, until it is stopped.
    let mut child = clibench()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1", "--phases", "prepare,install,measure"])
        .args([
            "--set",
            r#"measure.command=["demo-agent", "--never-ready"]"#,
        ])
        .args(["--set", "measure.ready_timeout=3600s"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_pid = child.id();
    // The measure phase, and the agent's TUI it started below it (not one of the agent's
    // `list` or `stop` commands). The bound is for a loaded
    // machine, not a speed expectation.
    let deadline = Instant::now() + Duration::from_secs(180);
    let (phase, agent) = loop {
        let phase = children_of(run_pid)
            .into_iter()
            .find(|(_, cmdline)| cmdline.contains("\0__clibench-phase-child\0measure\0"));
        if let Some((phase, _)) = phase
            && let Some((agent, _)) = children_of(phase)
                .into_iter()
                .find(|(_, cmdline)| cmdline.ends_with("/demo-agent\0--never-ready\0"))
        {
            break (phase, agent);
        }
        if Instant::now() >= deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = run_cleanup(&out);
            panic!("measure never started its agent:\n{}", phase_logs(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    // Without the death signal the phase would measure on for an hour.
    let deadline = Instant::now() + Duration::from_secs(60);
    while (is_running(phase) || is_running(agent)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let phase_left = is_running(phase);
    let agent_left = is_running(agent);
    if phase_left {
        // Do not leave a failed test's phase measuring for an hour.
        let cmdline = fs::read(format!("/proc/{phase}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("\0__clibench-phase-child\0measure\0") {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(phase as i32).unwrap(),
                rustix::process::Signal::KILL,
            );
        }
    }
    let cleanup = run_cleanup(&out);
    assert!(!phase_left, "the phase {phase} outlived the killed run");
    assert!(!agent_left, "the agent {agent} outlived its phase");
    assert_eq!(cleanup.code, Some(0), "stderr: {}", cleanup.stderr);
    assert_nothing_left(&out, is_root());
}

/// `clibench cleanup --out OUT`.
fn run_cleanup(out: &Path) -> crate::Run {
    run(clibench().arg("cleanup").arg("--out").arg(out))
}

#[test]
fn a_program_that_exits_at_ready_has_its_cpu_time_to_the_microsecond() {
    // A start that exits: 25 ms of CPU in a thread that is gone by the exit, some in
    // the main thread and a child it waits for, then its own account (getrusage of
    // itself and its children, microseconds) on the screen just before `_exit`. Its
    // zombie's /proc has the thread's time only in 10 ms ticks.
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let script = dir.path().join("burn.py");
    fs::write(
        &script,
        "import os, resource, sys, threading, time\n\
         def burn(seconds):\n    until = time.thread_time() + seconds\n    \
         while time.thread_time() < until:\n        pass\n\
         worker = threading.Thread(target=burn, args=(0.025,))\n\
         worker.start()\nworker.join()\nburn(0.005)\n\
         os.system(\"sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'\")\n\
         own = resource.getrusage(resource.RUSAGE_SELF)\n\
         waited = resource.getrusage(resource.RUSAGE_CHILDREN)\n\
         total = own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime\n\
         sys.stdout.write('CPU=%.6f\\n' % total)\nsys.stdout.flush()\nos._exit(0)\n",
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).unwrap();
    let spec = dir.path().join("spec.toml");
    fs::write(
        &spec,
        format!(
            "name = \"burn\"\n[measure]\ncommand = [\"python3\", \"{}\"]\nready = \"exit\"\n",
            script.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let result = run_spec(&spec, &out, &["--trials", "3"]);
    assert_eq!(result.code, Some(0), "stderr: {}", result.stderr);
    let file = load(&out);
    for (session, metric) in [("cold", Metric::ColdCpu), ("warm", Metric::WarmCpu)] {
        for trial in 0..3u32 {
            let screen =
                fs::read_to_string(out.join(format!("logs/screen-at-ready-{trial}-{session}.txt")))
                    .unwrap();
            let own: f64 = screen
                .lines()
                .find_map(|line| line.trim().strip_prefix("CPU="))
                .unwrap_or_else(|| panic!("no CPU= line on the screen: {screen}"))
                .parse()
                .unwrap();
            let measured = file.side.metrics[&metric]
                .iter()
                .find(|sample| sample.trial == trial)
                .and_then(|sample| sample.value)
                .unwrap_or_else(|| panic!("{metric} of trial {trial} missing"));
            // What the program did after its account (a write and `_exit`) is tens of
            // microseconds; the ticks' error is up to 10 ms.
            assert!(
                measured >= own - 1e-6 && measured <= own + 0.002,
                "{metric} trial {trial}: measured {measured:.6} s, the program's own {own:.6} s"
            );
        }
    }
    // No install: no log names the trial user (the closed-folder test above does the same).
    assert_nothing_left(&out, false);
}
