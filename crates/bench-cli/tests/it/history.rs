//! `clibench history`: add, show, report, check and import, on stores the tests make.

use crate::{clibench, run};
use bench_core::{Metric, Observation, Phase, Request, ResultFile, Role};
use std::path::{Path, PathBuf};

/// A result of the demo target at `sha`, started at `started` ms, with `cold` values.
fn result(dir: &Path, sha: &str, started: u64, cold: &[f64]) -> PathBuf {
    let mut result = ResultFile::new(Request::new(sha, Role::Candidate));
    result
        .request
        .config
        .insert("target".into(), "demo-agent".into());
    for (key, value) in [
        ("cpu", "Test CPU"),
        ("cores", "2"),
        ("memory_bytes", "25769803776"),
        ("kernel", "6.1.0-test"),
    ] {
        result.side.runtime.insert(key.into(), value.into());
    }
    result.side.metrics.insert(
        Metric::Cold,
        cold.iter()
            .enumerate()
            .map(|(trial, &value)| Observation::value(trial as u32, value))
            .collect(),
    );
    let record = result.side.trial_record_mut(Phase::Measure, 0);
    record.started_unix_ms = Some(started);
    record.load_average = Some([0.5, 0.5, 0.5]);
    let path = dir.join(format!("{sha}.json"));
    result.save(&path).unwrap();
    path
}

/// Twelve results near 400 ms, then eight near 520 ms (+30%), with a fixed wobble.
fn stepped_series(dir: &Path) -> Vec<PathBuf> {
    let wobble = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02];
    (0..20)
        .map(|i| {
            let level = if i < 12 { 0.4 } else { 0.52 };
            let w = wobble[i % wobble.len()];
            let values = [level * w, level * w * 1.01, level * w * 0.99];
            result(dir, &format!("rev{i:02}"), 1000 + i as u64, &values)
        })
        .collect()
}

/// A store in `dir` holding [`stepped_series`].
fn stepped_store(dir: &Path) -> PathBuf {
    let store = dir.join("h.sqlite");
    let mut add = clibench();
    add.args(["history", "add"])
        .args(stepped_series(dir))
        .arg("--store")
        .arg(&store);
    assert_eq!(run(&mut add).code, Some(0));
    store
}

fn history(store: &Path, args: &[&str]) -> crate::Run {
    run(clibench()
        .arg("history")
        .args(args)
        .arg("--store")
        .arg(store))
}

#[test]
fn adding_twice_keeps_one_and_show_finds_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let files = stepped_series(dir.path());
    let mut add = clibench();
    add.args(["history", "add"])
        .args(&files)
        .arg("--store")
        .arg(&store);
    let first = run(&mut add);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert!(
        first.stderr.contains("20 result(s) added, 0 already there"),
        "{}",
        first.stderr
    );
    let again = run(&mut add);
    assert!(
        again.stderr.contains("0 result(s) added, 20 already there"),
        "{}",
        again.stderr
    );

    let show = history(&store, &["show", "cold", "--rows", "4"]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    insta::assert_snapshot!(show.stdout);
}

#[test]
fn check_fails_on_a_regression_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let files: Vec<PathBuf> = stepped_series(dir.path()).into_iter().take(12).collect();
    let mut add = clibench();
    add.args(["history", "add"])
        .args(&files)
        .arg("--store")
        .arg(&store);
    assert_eq!(run(&mut add).code, Some(0));
    let slow = result(dir.path(), "slow", 5000, &[0.52, 0.53, 0.51]);
    let slow = slow.to_str().unwrap();
    let told = history(&store, &["check", slow]);
    assert_eq!(told.code, Some(0), "{}", told.stderr);
    assert!(
        told.stdout.starts_with("cold             regressed"),
        "{}",
        told.stdout
    );
    let failed = history(&store, &["check", slow, "--fail-on-regression"]);
    assert_eq!(failed.code, Some(1), "{}", failed.stderr);
    assert!(
        failed
            .stderr
            .contains("regressed against the history: cold (+"),
        "{}",
        failed.stderr
    );
    let usual = result(dir.path(), "usual", 5000, &[0.40, 0.41, 0.39]);
    let usual = history(
        &store,
        &["check", usual.to_str().unwrap(), "--fail-on-regression"],
    );
    assert_eq!(usual.code, Some(0), "{}", usual.stdout);
    assert!(usual.stdout.contains("unchanged"), "{}", usual.stdout);
}

#[test]
fn report_writes_one_chart_per_series_and_bmf_for_every_result() {
    let dir = tempfile::tempdir().unwrap();
    let store = stepped_store(dir.path());
    let page = dir.path().join("history.html");
    let bmf = dir.path().join("bmf.json");
    let out = history(
        &store,
        &[
            "report",
            "--out",
            page.to_str().unwrap(),
            "--export-bmf",
            bmf.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 1);
    assert!(
        html.contains("change at point 13 (rev11 -&gt; rev12)"),
        "{html}"
    );
    let bmf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bmf).unwrap()).unwrap();
    assert_eq!(bmf.as_array().unwrap().len(), 20);
}

#[test]
fn import_merges_another_store_and_a_newer_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one.sqlite"), dir.path().join("two.sqlite"));
    let files = stepped_series(dir.path());
    for (store, part) in [(&one, &files[..12]), (&two, &files[8..])] {
        let mut add = clibench();
        add.args(["history", "add"])
            .args(part)
            .arg("--store")
            .arg(store);
        assert_eq!(run(&mut add).code, Some(0));
    }
    let merged = history(&one, &["import", two.to_str().unwrap()]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert!(
        merged.stderr.contains("8 result(s) added, 4 already there"),
        "{}",
        merged.stderr
    );

    rusqlite::Connection::open(&two)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    let refused = history(&two, &["show", "cold"]);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("layout version 99, written by a newer clibench"),
        "{}",
        refused.stderr
    );
}

#[test]
fn an_older_store_is_upgraded_once_and_still_read() {
    let older = [
        // Before runs were recorded.
        (
            "ALTER TABLE results DROP COLUMN run; ALTER TABLE results DROP COLUMN duet_phases;",
            1,
            "upgraded from layout 1 to 3: its 20 earlier result(s) were stored before runs \
             were recorded (run unknown), so bisect compares them with no other build, and \
             without their schedule",
        ),
        // Before schedules were recorded.
        (
            "ALTER TABLE results DROP COLUMN duet_phases;",
            2,
            "upgraded from layout 2 to 3: its 20 earlier result(s) were stored without their \
             schedule: series take them as measured alone",
        ),
    ];
    for (drop, layout, said) in older {
        let dir = tempfile::tempdir().unwrap();
        let store = stepped_store(dir.path());
        let current = history(&store, &["show", "cold"]);
        rusqlite::Connection::open(&store)
            .unwrap()
            .execute_batch(&format!("{drop} PRAGMA user_version = {layout};"))
            .unwrap();
        let first = history(&store, &["show", "cold"]);
        assert_eq!(first.code, Some(0), "{}", first.stderr);
        assert!(first.stderr.contains(said), "{}", first.stderr);
        // Runs measured alone: the same series as before.
        assert_eq!(first.stdout, current.stdout);
        assert!(first.stdout.contains("20 point(s)"), "{}", first.stdout);
        let again = history(&store, &["show", "cold"]);
        assert_eq!(again.code, Some(0), "{}", again.stderr);
        assert!(!again.stderr.contains("upgraded"), "{}", again.stderr);
        assert_eq!(again.stdout, first.stdout);
    }
}

#[test]
fn an_unknown_metric_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let mut add = clibench();
    add.args(["history", "add"])
        .arg(result(dir.path(), "a", 1, &[0.4]))
        .arg("--store")
        .arg(&store);
    assert_eq!(run(&mut add).code, Some(0));
    let out = history(&store, &["show", "colt"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown metric 'colt'"),
        "{}",
        out.stderr
    );
}

#[test]
fn run_and_ab_add_what_they_measured_to_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let ran = run(clibench()
        .args([
            "run",
            "--trials",
            "1",
            "--phases",
            "prepare,install,measure",
        ])
        .arg("--out")
        .arg(dir.path().join("run"))
        .arg("--history")
        .arg(&store));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stderr.contains("1 result(s) added"), "{}", ran.stderr);
    let ab = run(clibench()
        .args(["ab", "--trials", "1", "--phases", "prepare,install,measure"])
        .args(["--head", "measure.env.DEMO_AGENT_STARTUP_DELAY_MS=500"])
        .arg("--out")
        .arg(dir.path().join("ab"))
        .arg("--history")
        .arg(&store));
    assert_eq!(ab.code, Some(0), "{}", ab.stderr);
    assert!(ab.stderr.contains("2 result(s) added"), "{}", ab.stderr);
    // Base is the build `run` measured: ab says what the history holds of it (its values
    // stay out of the paired test). Head's knob makes it another build of the same
    // commit, new to the history, never pooled with base.
    assert!(
        ab.stderr
            .contains("1 earlier result(s) of this build on this testbed"),
        "{}",
        ab.stderr
    );
    assert!(
        ab.stderr
            .contains("[measure.env.DEMO_AGENT_STARTUP_DELAY_MS=500]): new to the history"),
        "{}",
        ab.stderr
    );
    let page = std::fs::read_to_string(dir.path().join("ab").join("history.md")).unwrap();
    // Base's memory, read in trials alone as `run` reads it, meets its history; its
    // start times of the duet's pairs shared a CPU, so they never meet `run`'s alone.
    assert!(page.contains("| rss |"), "{page}");
    assert!(!page.contains("| cold |"), "{page}");
    // Memory is read alone in both commands: one point from `run`, one from each side.
    let show = history(&store, &["show", "pss", "--rows", "0"]);
    assert!(show.stdout.contains("3 point(s)"), "{}", show.stdout);
    assert!(
        show.stdout
            .contains("[measure.env.DEMO_AGENT_STARTUP_DELAY_MS=500]"),
        "{}",
        show.stdout
    );
}

/// The CI recipe for main (docs/history.md): each commit measured with `run --history`,
/// then `history check --fail-on-regression` against the series so far. Commit 6 of the
/// demo makes its release archive about 100 KiB bigger. The verdicts are judged on that
/// size (`bundle`), which is the same on every run of a build: a start time judged live
/// depends on how busy the machine is while each commit runs (a quiet series then a
/// busy point reads as a regression, a busy series hides one), so no planted delay
/// keeps such a test from failing by chance; `scripts/history-ci-demo.sh` gives the
/// numbers for start times.
#[test]
fn history_check_on_main_fails_on_the_commit_that_made_the_release_bigger() {
    let (dir, spec) = crate::pipeline_run::demo();
    let source = spec.parent().unwrap().join("source");
    for step in 1..=6 {
        let (file, text) = if step == 6 {
            // 200 KB of hex (about 100 KB once gzipped): far beyond 64 KiB and 1%.
            let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
            let mut hex = String::from("\n# ");
            for index in 0..25_000 {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                hex.push_str(&format!("{:08x}", seed >> 32));
                if index % 16 == 15 {
                    hex.push_str("\n# ");
                }
            }
            ("demo_agent.py", hex + "\n")
        } else {
            ("README.md", format!("\nnote {step}\n"))
        };
        let path = source.join(file);
        let mut content = std::fs::read_to_string(&path).unwrap();
        content.push_str(&text);
        std::fs::write(&path, content).unwrap();
        crate::bisect::git(&source, &["commit", "-q", "-am", &format!("step {step}")]);
    }
    let store = dir.path().join("history.sqlite");
    let commits = crate::bisect::git(&source, &["rev-list", "--reverse", "HEAD"]);
    let mut codes = Vec::new();
    for (index, sha) in commits.lines().enumerate() {
        let out = dir.path().join(format!("run-{index}"));
        let ran = run(clibench()
            .arg("run")
            .arg(&spec)
            .args(["--commit", sha, "--phases", "prepare"])
            .arg("--out")
            .arg(&out)
            .arg("--history")
            .arg(&store));
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        let checked = history(
            &store,
            &[
                "check",
                out.join("result.json").to_str().unwrap(),
                "--metric",
                "bundle",
                "--fail-on-regression",
            ],
        );
        codes.push(checked.code);
        let word = if index < 5 {
            "too few points"
        } else if index == 6 {
            "regressed"
        } else {
            "unchanged"
        };
        assert!(
            checked.stdout.contains(word),
            "commit {index}: {}\n{}",
            checked.stdout,
            checked.stderr
        );
    }
    // Five points before any judgement, the sixth unchanged, the seventh regressed.
    assert_eq!(
        codes,
        [
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(1)
        ]
    );
}

/// A throwaway PostgreSQL server for this test, or `None` where none is installed (a
/// skip, which fails on CI: CI installs one).
fn postgres() -> Option<bench_cli::history::throwaway::Throwaway> {
    use bench_cli::history::throwaway;
    throwaway::installed().then(|| throwaway::Throwaway::start().unwrap())
}

#[test]
fn a_postgres_store_gives_the_answers_a_file_store_gives() {
    let Some(server) = postgres() else {
        bench_core::skip_test!("no PostgreSQL server (apt-get install postgresql)");
    };
    let dir = tempfile::tempdir().unwrap();
    let file = stepped_store(dir.path());
    let url = server.create_database().unwrap();
    let on_postgres = PathBuf::from(&url);
    let mut add = clibench();
    add.args(["history", "add"])
        .args(stepped_series(dir.path()))
        .arg("--store")
        .arg(&url);
    let added = run(&mut add);
    assert_eq!(added.code, Some(0), "{}", added.stderr);
    assert!(
        added.stderr.contains("20 result(s) added"),
        "{}",
        added.stderr
    );
    // The same answers, word for word, but for the store's name.
    for args in [&["show", "cold"][..], &["check", "--metric", "cold"][..]] {
        let mut args = args.to_vec();
        let last = stepped_series(dir.path()).pop().unwrap();
        if args[0] == "check" {
            args.insert(1, last.to_str().unwrap());
        }
        let from_file = history(&file, &args);
        let from_postgres = history(&on_postgres, &args);
        assert_eq!(
            from_file.code, from_postgres.code,
            "{}",
            from_postgres.stderr
        );
        assert_eq!(from_file.stdout, from_postgres.stdout);
        assert_eq!(
            from_file.stderr.replace(file.to_str().unwrap(), "STORE"),
            from_postgres.stderr.replace(&url, "STORE"),
        );
    }
    // Moved whole, both ways: nothing new either way.
    let into_postgres = history(&on_postgres, &["import", file.to_str().unwrap()]);
    assert!(
        into_postgres
            .stderr
            .contains("0 result(s) added, 20 already there"),
        "{}",
        into_postgres.stderr
    );
    let back = dir.path().join("back.sqlite");
    let into_file = history(&back, &["import", &url]);
    assert!(
        into_file
            .stderr
            .contains("20 result(s) added, 0 already there"),
        "{}",
        into_file.stderr
    );
}

#[test]
fn a_password_is_taken_from_stdin_or_the_environment_never_from_a_flag() {
    let Some(server) = postgres() else {
        bench_core::skip_test!("no PostgreSQL server (apt-get install postgresql)");
    };
    let url = server.create_database().unwrap();
    // The throwaway server trusts its socket, so any password gets in: what is tested
    // is where clibench takes it from and that it never shows it.
    let with_password = url.replacen("clibench@", "clibench:hunter2@", 1);
    let dir = tempfile::tempdir().unwrap();
    let one = result(dir.path(), "abc", 1, &[0.4]);
    let mut flag = clibench();
    flag.args(["history", "add"])
        .arg(&one)
        .args(["--store", &with_password]);
    let refused = run(&mut flag);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("process list"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("hunter2"), "{}", refused.stderr);
    let mut stdin = clibench();
    stdin
        .args(["history", "add"])
        .arg(&one)
        .args(["--store", "-"])
        .stdin(std::process::Stdio::piped());
    let mut child = stdin
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    writeln!(child.stdin.take().unwrap(), "{with_password}").unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1 result(s) added"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let mut env = clibench();
    env.args(["history", "show", "cold"])
        .env("CLIBENCH_HISTORY", &with_password);
    let shown = run(&mut env);
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    assert!(!shown.stdout.contains("hunter2") && !shown.stderr.contains("hunter2"));
    assert!(shown.stdout.contains("abc"), "{}", shown.stdout);
}

/// A test CA and a server certificate it signed for localhost and 127.0.0.1, made by
/// `openssl` in `dir` under `name`: (the CA's certificate, the server's certificate, its
/// key); `None` where openssl is missing.
fn certificates(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let file = |suffix: &str| format!("{name}-{suffix}");
    let openssl = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|made| made.status.success())
    };
    let (ca_key, ca, csr) = (file("ca.key"), file("ca.crt"), file("server.csr"));
    let (key, certificate, ext) = (file("server.key"), file("server.crt"), file("ext"));
    std::fs::write(
        dir.join(&ext),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .ok()?;
    let ec = "ec_paramgen_curve:P-256";
    let made = openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        ec,
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=clibench test CA",
        "-keyout",
        &ca_key,
        "-out",
        &ca,
    ]) && openssl(&[
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        ec,
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &key,
        "-out",
        &csr,
    ]) && openssl(&[
        "x509",
        "-req",
        "-days",
        "2",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-extfile",
        &ext,
        "-out",
        &certificate,
    ]);
    made.then(|| (dir.join(ca), dir.join(certificate), dir.join(key)))
}

#[test]
fn a_store_over_tls_takes_its_password_from_the_environment_or_pgpass() {
    use bench_cli::history::throwaway::{OverTcp, Throwaway, installed};
    let dir = tempfile::tempdir().unwrap();
    let (Some((ca, certificate, key)), Some((other, _, _))) = (
        certificates(dir.path(), "server"),
        certificates(dir.path(), "other"),
    ) else {
        bench_core::skip_test!("no openssl to make a certificate");
    };
    if !installed() {
        bench_core::skip_test!("no PostgreSQL server (apt-get install postgresql)");
    }
    let tcp = OverTcp {
        certificate,
        key,
        password: "s3cret-pw".into(),
    };
    let server = Throwaway::start_with(Some(&tcp)).unwrap();
    let port = server.port().unwrap();
    let url = |root: &Path| {
        format!(
            "postgres://clibench@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={}",
            root.display()
        )
    };
    let one = result(dir.path(), "abc", 1, &[0.4]);
    let add = |store: &str, env: &[(&str, &str)]| {
        let mut add = clibench();
        add.args(["history", "add"])
            .arg(&one)
            .args(["--store", store]);
        add.env_remove("PGPASSWORD")
            .env("PGPASSFILE", dir.path().join("none"));
        for (key, value) in env {
            add.env(key, value);
        }
        run(&mut add)
    };
    // No password: the server says no, and nothing shows a password.
    let refused = add(&url(&ca), &[]);
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert!(refused.stderr.contains("password"), "{}", refused.stderr);
    // From PGPASSWORD, over TLS verified against the URL's sslrootcert.
    let added = add(&url(&ca), &[("PGPASSWORD", "s3cret-pw")]);
    assert_eq!(added.code, Some(0), "{}", added.stderr);
    assert!(
        added.stderr.contains("1 result(s) added"),
        "{}",
        added.stderr
    );
    assert!(!added.stderr.contains("s3cret"), "{}", added.stderr);
    // From a pgpass file closed to others.
    let pgpass = dir.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!("localhost:{port}:postgres:clibench:s3cret-pw\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let again = add(&url(&ca), &[("PGPASSFILE", pgpass.to_str().unwrap())]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(
        again.stderr.contains("0 result(s) added, 1 already there"),
        "{}",
        again.stderr
    );
    // A server whose certificate the URL's roots do not vouch for is refused.
    let untrusted = add(&url(&other), &[("PGPASSWORD", "s3cret-pw")]);
    assert_eq!(untrusted.code, Some(1), "{}", untrusted.stderr);
    assert!(
        untrusted.stderr.to_lowercase().contains("certificate"),
        "{}",
        untrusted.stderr
    );
}
