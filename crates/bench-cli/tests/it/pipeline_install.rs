//! `clibench phase install`: isolation, the origin, checks, timeouts, safe writes.

use crate::target::{INSTALLER, Target, is_root, leftovers, user_exists};

/// Prepares the standard target with `installer` and the given `[install]` extras.
fn prepared(installer: &str, install_extra: &str) -> Target {
    let target = Target::new(installer);
    let commit = target.first_commit();
    target.spec(&commit, install_extra, "");
    let out = target.phase("prepare", 0, &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    target
}

#[test]
fn installer_gets_the_clean_environment_and_the_home_is_set_up() {
    let target = prepared(INSTALLER, "inventory = [\"ls\", \"{home}/.local/bin\"]");
    let out = target.phase(
        "install",
        0,
        &[
            ("CLIBENCH_TEST_SECRET_TOKEN", "hunter2"),
            ("GITHUB_TOKEN", "ghp_secret"),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let home = target.home();
    let state = target.state();
    let user = state["users"][0]["name"].as_str().unwrap().to_owned();

    let env = std::fs::read_to_string(home.join("installer-env.txt")).unwrap();
    assert!(
        !env.contains("hunter2") && !env.contains("ghp_secret"),
        "{env}"
    );
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| !["PWD", "SHLVL", "OLDPWD", "_"].contains(k))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "COLORTERM",
            "HOME",
            "LANG",
            "LOGNAME",
            "NPM_CONFIG_CACHE",
            "NPM_CONFIG_PREFIX",
            "PATH",
            "SHELL",
            "TERM",
            "TOOL_BASE_URL",
            "USER",
            "UV_CACHE_DIR",
            "UV_LINK_MODE"
        ]
    );
    assert!(env.contains(&format!("HOME={}\n", home.display())), "{env}");
    assert!(env.contains(&format!("USER={user}\n")), "{env}");
    assert!(env.contains("TOOL_BASE_URL=http://127.0.0.1:"), "{env}");

    let settings = std::fs::read_to_string(home.join(".tool/settings.json")).unwrap();
    assert_eq!(settings, "{\"onboardingShown\": true}");
    let log = std::process::Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "log",
            "--format=%ad %cd %s",
            // Seconds since the epoch: git versions print UTC in iso-strict as "Z" or
            // "+00:00".
            "--date=unix",
        ])
        .current_dir(home.join("workspace"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout),
        "946684800 946684800 chore: initialize benchmark fixture\n"
    );
    let inventory = std::fs::read_to_string(target.out.join("installed-dependencies.txt")).unwrap();
    assert_eq!(inventory, "tool\n");

    let result = target.result();
    let side = &result["side"];
    assert!(side["metrics"]["install"][0]["value"].as_f64().unwrap() > 0.0);
    assert_eq!(side["runtime"]["installed"], "tool 1.0");
    assert_eq!(side["runtime"]["installation_format"], "script");
    assert!(
        side["runtime"]["home_before_install_bytes"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    if is_root() {
        assert!(user_exists(&user));
        let meta = std::fs::metadata(home.join(".tool/settings.json")).unwrap();
        let uid = u64::from(target.uid());
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta) as u64, uid);
    }
    assert_eq!(state["servers"], serde_json::json!([]));

    target.cleanup();
    assert!(!home.exists(), "{} is still there", home.display());
    if is_root() {
        assert!(!user_exists(&user), "{user} is still there");
    }
    assert!(!target.out.join("state.json").exists());
}

#[test]
fn hanging_installer_times_out_and_nothing_is_left() {
    let installer = "#!/bin/sh\n\
        setsid sh -c 'exec sleep 1000' < /dev/null > /dev/null 2>&1 &\n\
        sleep 1000 &\n\
        echo waiting forever\n\
        wait\n";
    let target = prepared(installer, "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace("timeout = \"30s\"\nenv", "timeout = \"1s\"\nenv"),
    )
    .unwrap();
    let out = target.phase("install", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("timed out after 1.0 s; its processes were stopped"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("waiting forever"), "{}", out.stderr);
    let error = target.result()["side"]["metrics"]["install"][0]["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("timed out"), "{error}");

    let home = target.home();
    let uid = is_root().then(|| target.uid());
    assert_eq!(
        leftovers(&home, uid),
        Vec::<u32>::new(),
        "processes were left behind"
    );
    target.cleanup();
    assert!(!home.exists());
}

#[test]
fn artifacts_that_do_not_match_sha256sums_are_refused_before_installing() {
    let target = prepared(INSTALLER, "");
    std::fs::write(
        target.stage().join("artifacts/tool-1.0.tar.gz"),
        b"tampered",
    )
    .unwrap();
    let out = target.phase("install", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("artifact tool-1.0.tar.gz does not match SHA256SUMS"),
        "{}",
        out.stderr
    );
    // Nothing was created for a trial whose artifacts are bad.
    let users = target.state()["users"].clone();
    assert_eq!(users, serde_json::json!([]), "a trial user was created");
    assert!(!target.out.join("homes").exists());
}

#[test]
fn symlink_planted_in_the_home_is_not_followed() {
    let installer = format!(
        "{INSTALLER}mkdir -p \"$HOME/.tool\"\nln -s \"$VICTIM\" \"$HOME/.tool/settings.json\"\n"
    );
    let target = prepared(&installer, "");
    let victim = target.dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace(
            "env = { TOOL_BASE_URL",
            &format!("env = {{ VICTIM = \"{}\", TOOL_BASE_URL", victim.display()),
        ),
    )
    .unwrap();
    let out = target.phase("install", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("is a symlink or not a plain file"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    target.cleanup();
}

#[test]
fn wrong_version_is_an_install_error() {
    let target = prepared(INSTALLER, "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace(
            "version_contains = \"tool {version}\"",
            "version_contains = \"tool 2.0\"",
        ),
    )
    .unwrap();
    let out = target.phase("install", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("expected it to contain \"tool 2.0\", got \"tool 1.0\""),
        "{}",
        out.stderr
    );
    assert!(target.result()["side"]["metrics"]["install"][0]["value"].is_null());
    target.cleanup();
}

#[test]
fn measure_before_install_says_what_is_missing() {
    let target = prepared(INSTALLER, "");
    let out = target.phase("measure", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("install 0 has not run"),
        "{}",
        out.stderr
    );
}

/// A Unix user that exists for one test (as root), removed on drop.
struct TemporaryUser(String);

impl Drop for TemporaryUser {
    fn drop(&mut self) {
        let _ = crate::system_tool("userdel")
            .args(["--remove", &self.0])
            .output();
    }
}

#[test]
fn without_root_the_home_is_a_fresh_folder_under_out_and_nothing_is_left() {
    let target = Target::new(INSTALLER);
    let commit = target.first_commit();
    target.spec(&commit, "", "");
    // As root, run clibench as a throwaway user; otherwise as ourselves.
    let user = is_root().then(|| {
        let name = format!("cbspec{}", std::process::id());
        let status = crate::system_tool("useradd")
            .args(["--create-home", "--user-group", &name])
            .status()
            .unwrap();
        assert!(status.success());
        let status = std::process::Command::new("chown")
            .args(["-R", &format!("{name}:{name}")])
            .arg(target.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        TemporaryUser(name)
    });
    let phase = |args: &[&str]| {
        let mut command = match &user {
            Some(user) => {
                let mut command = crate::system_tool("runuser");
                command
                    .args(["-u", &user.0, "--"])
                    .arg(env!("CARGO_BIN_EXE_clibench"));
                command
            }
            None => crate::clibench(),
        };
        command
            .args(args)
            .current_dir(target.dir.path())
            .env("CLIBENCH_TEST_SECRET_TOKEN", "hunter2");
        crate::run(&mut command)
    };
    let spec = ["--spec", "spec.toml", "--out", "out"];
    let out = phase(&[&["phase", "prepare"][..], &spec].concat());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = phase(&[&["phase", "install"][..], &spec].concat());
    assert_eq!(out.code, Some(0), "{}", out.stderr);

    let state = target.state();
    assert_eq!(state["users"][0]["dedicated"], false);
    let home = target.home();
    assert_eq!(home, target.out.join("homes/install-0"));
    let env = std::fs::read_to_string(home.join("installer-env.txt")).unwrap();
    assert!(env.contains(&format!("HOME={}\n", home.display())), "{env}");
    assert!(!env.contains("hunter2"), "{env}");
    assert_eq!(leftovers(&home, None), Vec::<u32>::new());

    let out = phase(&["cleanup", "--out", "out"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!home.exists());
    assert!(!target.out.join("state.json").exists());
}

#[test]
fn a_file_the_install_must_create_is_checked() {
    let target = prepared(INSTALLER, "");
    let spec = std::fs::read_to_string(target.dir.path().join("spec.toml")).unwrap();
    std::fs::write(
        target.dir.path().join("spec.toml"),
        spec.replace(
            "files = [\"{home}/.local/bin/tool\"]",
            "files = [\"{home}/.local/bin/tool\", \"{home}/.tool/kernel-venv/bin/python\"]",
        ),
    )
    .unwrap();
    let out = target.phase("install", 0, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let expected = format!(
        "the install did not create {}",
        target.home().join(".tool/kernel-venv/bin/python").display()
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    target.cleanup();
}

#[test]
fn a_connection_left_trickling_into_the_origin_is_closed_when_the_install_ends() {
    // A detached client that sends a request head one byte every 100 ms (for up
    // to 30 s), ignores SIGTERM, and records whether the server cut it off
    // ("cut") or read all it sent ("done"). A per-read timeout never fires on
    // it, and stopping the origin used to wait for its connection to end.
    let trickler = r#"
import os, signal, socket, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
host, port = os.environ["TOOL_BASE_URL"][len("http://"):].split("/")[0].split(":")
s = socket.create_connection((host, int(port)))
home = os.environ["HOME"]
open(os.path.join(home, "trickle-connected"), "w").close()
result = "done"
for _ in range(300):
    try:
        s.send(b"G")
    except OSError:
        result = "cut"
        break
    time.sleep(0.1)
with open(os.path.join(home, "trickle-result"), "w") as f:
    f.write(result)
"#;
    let installer = format!(
        "#!/bin/sh\n\
         setsid python3 -c '{trickler}' < /dev/null > \"$HOME/trickle.log\" 2>&1 &\n\
         while [ ! -e \"$HOME/trickle-connected\" ]; do sleep 0.05; done\n\
         {}",
        INSTALLER.trim_start_matches("#!/bin/sh\n")
    );
    let target = prepared(&installer, "");
    let out = target.phase("install", 0, &[]);
    let log = std::fs::read_to_string(target.home().join("trickle.log")).unwrap_or_default();
    assert_eq!(out.code, Some(0), "{}\ntrickler: {log}", out.stderr);
    let result = std::fs::read_to_string(target.home().join("trickle-result"))
        .unwrap_or_else(|error| format!("no result ({error})"));
    assert_eq!(result, "cut", "the origin kept reading the trickle");
    target.cleanup();
}
