//! The kernel client against the reference kernel and against misbehaving kernels.

use bench_core::{Metric, Phase, error_chain};
use bench_term::Ending;
use bench_term::kernel::measure::{self, RuntimeOptions, Workload};
use bench_term::kernel::{
    Event, Kernel, KernelError, KernelExit, KernelOptions, MeasureError, REFERENCE_KERNEL, Request,
    Snapshot,
};
use serde_json::{Map, Value, json};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

const TEST_KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kernel/test_kernels");

fn environment(home: &Path) -> Vec<(String, String)> {
    vec![
        (
            "PATH".to_owned(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ),
        ("HOME".to_owned(), home.display().to_string()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ]
}

/// A temporary folder holding the reference kernel; the kernel runs there.
struct Fixture {
    folder: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("kernel.py"), REFERENCE_KERNEL).unwrap();
        Fixture { folder }
    }

    fn path(&self) -> &Path {
        self.folder.path()
    }

    fn options(&self) -> KernelOptions {
        let mut options = KernelOptions::new(
            "python3",
            [self.path().join("kernel.py")],
            self.path(),
            environment(self.path()),
        );
        options.request_timeout = Duration::from_secs(20);
        options
    }

    fn start(&self) -> Kernel {
        let mut kernel = Kernel::spawn(self.options()).unwrap();
        kernel.ready().unwrap();
        kernel
    }
}

fn test_kernel(name: &str, args: &[&str], home: &Path) -> KernelOptions {
    let mut all = vec![format!("{TEST_KERNELS}/{name}")];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    let mut options = KernelOptions::new("python3", all, TEST_KERNELS, environment(home));
    options.ready_timeout = Duration::from_secs(10);
    options.request_timeout = Duration::from_secs(10);
    options.close_grace = Duration::from_millis(300);
    options
}

/// True while `/proc/PID` exists, zombies included: for the kernel itself, which the
/// client must reap.
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// True while PID runs (not a zombie): for grandchildren, which are reaped by whoever
/// adopts them. Waits up to 5 s for a dying process to finish dying.
fn still_running(pid: u32) -> bool {
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while running() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    running()
}

// The reference kernel --------------------------------------------------------

#[test]
fn ready_reports_protocol_python_version() {
    let fixture = Fixture::new();
    let mut kernel = Kernel::spawn(fixture.options()).unwrap();
    let ready = kernel.ready().unwrap();
    let version = ready.python.split('.').collect::<Vec<_>>();
    assert_eq!(version.len(), 3, "python version {:?}", ready.python);
    assert_eq!(version[0], "3");
    // Asking again answers the same, without waiting for a second handshake.
    assert_eq!(kernel.ready().unwrap(), ready);
    let pid = kernel.pid();
    let report = kernel.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert!(report.quit_when_asked());
    assert_eq!(report.status.and_then(|status| status.code()), Some(0));
    assert_eq!(report.to_string(), "exit status 0 (quit when asked)");
    assert!(!process_exists(pid));
}

#[test]
fn execute_streams_output_result_and_keeps_the_namespace() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let reply = kernel.execute("x = 40\nprint('hello')\nx + 2").unwrap();
    assert!(reply.is_ok());
    assert_eq!(reply.stdout(), "hello\n");
    assert_eq!(reply.result(), Some("42"));
    let reply = kernel
        .execute("import sys\nprint('oops', file=sys.stderr)\nx")
        .unwrap();
    assert_eq!(reply.stderr(), "oops\n");
    assert_eq!(reply.result(), Some("40"));
    kernel.close().unwrap();
}

#[test]
fn raw_descriptor_writes_arrive_without_an_id_before_done() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let reply = kernel
        .execute("import os, subprocess\nos.write(1, b'raw\\n')\nsubprocess.run(['echo', 'child'])\nNone")
        .unwrap();
    assert!(reply.is_ok(), "{reply:?}");
    let raw: String = reply
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Stdout(stream) if stream.id.is_none() => Some(stream.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(raw, "raw\nchild\n");
    kernel.close().unwrap();
}

#[test]
fn cell_exception_is_an_error_event_and_the_kernel_keeps_serving() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let reply = kernel.execute("def f():\n    return 1 / 0\nf()").unwrap();
    assert_eq!(reply.done.status, "error");
    let error = reply.error().unwrap();
    assert_eq!(error.ename, "ZeroDivisionError");
    assert_eq!(error.evalue, "division by zero");
    assert!(
        error
            .traceback
            .iter()
            .any(|line| line.contains("return 1 / 0"))
    );
    assert!(
        !error
            .traceback
            .iter()
            .any(|line| line.contains("kernel.py"))
    );
    let reply = kernel.execute("1 +").unwrap();
    assert_eq!(reply.error().unwrap().ename, "SyntaxError");
    assert!(kernel.execute("pass").unwrap().is_ok());
    kernel.close().unwrap();
}

#[test]
fn top_level_await_and_the_bash_helper() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let reply = kernel
        .execute("import asyncio\nawait asyncio.sleep(0.01)\nr = await bash('echo out; echo err >&2; exit 7')\n(r.exit_code, r.output)")
        .unwrap();
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(reply.result(), Some("(7, 'out\\nerr\\n')"));
    let reply = kernel
        .execute("from rlm import bash as b\nb is bash")
        .unwrap();
    assert_eq!(reply.result(), Some("True"));
    kernel.close().unwrap();
}

#[test]
fn list_names_skips_private_names_and_helpers() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    kernel
        .execute("alpha = 1\n_hidden = 2\nimport json")
        .unwrap();
    let reply = kernel.request(&Request::ListNames).unwrap();
    assert!(reply.is_ok());
    assert_eq!(
        reply.done.strings("names"),
        Some(vec!["alpha".to_owned(), "json".to_owned()])
    );
    kernel.close().unwrap();
}

#[test]
fn snapshot_and_restore_round_trip_values_into_a_fresh_kernel() {
    let fixture = Fixture::new();
    let state = fixture.path().join("state.pkl");
    let manifest = fixture.path().join("manifest.json");
    let mut kernel = fixture.start();
    kernel
        .execute("import math\ntable = {'a': [1, 2, 3], 'b': 'text'}\ncount = 12\nsquare = lambda v: v * v\n_private = 5")
        .unwrap();
    let reply = kernel
        .request(&Request::Snapshot(Snapshot {
            path: state.clone(),
            manifest_path: manifest.clone(),
            ..Snapshot::default()
        }))
        .unwrap();
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(
        reply.done.strings("saved"),
        Some(vec![
            "count".to_owned(),
            "math".to_owned(),
            "table".to_owned()
        ])
    );
    // A lambda does not pickle with the standard library; it is skipped, with a reason.
    assert_eq!(
        reply.done.strings("skipped"),
        Some(vec!["square".to_owned()])
    );
    let bytes = reply.done.fields["bytes"].as_u64().unwrap();
    assert_eq!(bytes, std::fs::metadata(&state).unwrap().len());
    let written: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(written["saved"], json!(["count", "math", "table"]));
    kernel.close().unwrap();

    let mut fresh = fixture.start();
    let reply = fresh
        .request(&Request::Restore {
            path: state.clone(),
        })
        .unwrap();
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(
        reply.done.strings("restored"),
        Some(vec![
            "count".to_owned(),
            "math".to_owned(),
            "table".to_owned()
        ])
    );
    assert_eq!(reply.done.strings("failed"), Some(vec![]));
    let check = fresh.execute("(table, count, math.sqrt(16))").unwrap();
    assert_eq!(
        check.result(),
        Some("({'a': [1, 2, 3], 'b': 'text'}, 12, 4.0)")
    );
    fresh.close().unwrap();
}

#[test]
fn snapshot_uses_dill_when_it_is_importable() {
    // A stand-in dill (pickle's dumps and loads) on PYTHONPATH takes the dill branch of
    // snapshot and restore on machines without dill.
    let fixture = Fixture::new();
    let mut options = fixture.options();
    options.env.push((
        "PYTHONPATH".into(),
        format!("{TEST_KERNELS}/fake_dill").into(),
    ));
    let state = fixture.path().join("state.pkl");
    let manifest = fixture.path().join("manifest.json");
    let mut kernel = Kernel::spawn(options.clone()).unwrap();
    kernel.execute("values = [1, 2, 3]").unwrap();
    let reply = kernel
        .request(&Request::Snapshot(Snapshot {
            path: state.clone(),
            manifest_path: manifest.clone(),
            ..Snapshot::default()
        }))
        .unwrap();
    assert_eq!(reply.done.strings("saved"), Some(vec!["values".to_owned()]));
    let written: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(written["serializer"], "dill");
    kernel.close().unwrap();
    let mut fresh = Kernel::spawn(options).unwrap();
    let reply = fresh
        .request(&Request::Restore {
            path: state.clone(),
        })
        .unwrap();
    assert_eq!(
        reply.done.strings("restored"),
        Some(vec!["values".to_owned()])
    );
    assert_eq!(fresh.execute("values").unwrap().result(), Some("[1, 2, 3]"));
    fresh.close().unwrap();
}

#[test]
fn restoring_a_missing_file_is_ok_with_a_reason() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let missing = fixture.path().join("nothing.pkl");
    let reply = kernel
        .request(&Request::Restore {
            path: missing.clone(),
        })
        .unwrap();
    assert!(reply.is_ok());
    assert_eq!(reply.done.strings("restored"), Some(vec![]));
    assert!(reply.done.reason().unwrap().contains("nothing.pkl"));
    kernel.close().unwrap();
}

#[test]
fn snapshot_limits_prune_or_skip_oversized_values() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    kernel.execute("big = 'x' * 100000\nsmall = 1").unwrap();
    let path = fixture.path().join("limited.pkl");
    let manifest = fixture.path().join("limited.json");
    let request = |prune: bool| {
        Request::Snapshot(Snapshot {
            path: path.clone(),
            manifest_path: manifest.clone(),
            max_variable_bytes: Some(1000),
            prune_oversized: prune,
            ..Snapshot::default()
        })
    };
    let pruned = kernel.request(&request(true)).unwrap();
    assert_eq!(pruned.done.strings("saved"), Some(vec!["small".to_owned()]));
    assert_eq!(pruned.done.strings("pruned"), Some(vec!["big".to_owned()]));
    let skipped = kernel.request(&request(false)).unwrap();
    assert_eq!(
        skipped.done.strings("skipped"),
        Some(vec!["big".to_owned()])
    );
    kernel.close().unwrap();
}

#[test]
fn malformed_request_lines_get_protocol_errors_and_the_kernel_keeps_serving() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    kernel.send_raw("this is not json").unwrap();
    let event = kernel
        .next_event(Duration::from_secs(10), "a ProtocolError")
        .unwrap();
    let Event::Error(error) = event else {
        panic!("expected an error event, got {event:?}")
    };
    assert_eq!(error.ename, "ProtocolError");
    assert_eq!(error.id, None);
    kernel.send_raw(r#"{"type":"execute","code":"1"}"#).unwrap();
    let event = kernel
        .next_event(Duration::from_secs(10), "a ProtocolError")
        .unwrap();
    assert!(
        matches!(&event, Event::Error(error) if error.ename == "ProtocolError"),
        "{event:?}"
    );
    let reply = kernel
        .request(&Request::Custom {
            kind: "no_such_request".to_owned(),
            fields: Map::new(),
        })
        .unwrap();
    assert_eq!(reply.done.status, "error");
    assert_eq!(reply.error().unwrap().ename, "ProtocolError");
    assert!(kernel.execute("pass").unwrap().is_ok());
    kernel.close().unwrap();
}

#[test]
fn host_request_is_answered_with_host_reply() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let id = kernel
        .submit(&Request::execute(
            "answer = await host({'question': 6})\nanswer['value'] * 7",
        ))
        .unwrap();
    let event = kernel
        .next_event(Duration::from_secs(10), "host_request")
        .unwrap();
    let Event::HostRequest { id: host_id, data } = event else {
        panic!("expected host_request, got {event:?}")
    };
    assert_eq!(data, json!({"question": 6}));
    kernel.host_reply(&host_id, json!({"value": 6})).unwrap();
    let reply = kernel.wait_done(&id, Duration::from_secs(10)).unwrap();
    assert_eq!(reply.result(), Some("42"));
    kernel.close().unwrap();
}

#[test]
fn interrupt_stops_a_cell_suspended_in_await() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let latency = measure::interrupt_latency(&mut kernel, measure::INTERRUPT_AWAIT).unwrap();
    assert!(latency < Duration::from_secs(60), "{latency:?}");
    kernel.close().unwrap();
}

#[test]
fn measurement_methods_use_the_harness_defaults() {
    let fixture = Fixture::new();
    std::process::Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(fixture.path())
        .status()
        .unwrap();
    let transcript = fixture.path().join("defaults.jsonl");
    let mut options = fixture.options();
    options.transcript = Some(transcript.clone());
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    let batch = kernel.batch("pass", 3, None).unwrap();
    let mixed = kernel.mixed().unwrap();
    let interrupt = kernel.interrupt_latency().unwrap();
    kernel.close().unwrap();
    // What was sent, in order: the methods are the harness's sequences, not just "fast".
    let codes: Vec<String> = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["dir"] == "send" && line["frame"]["type"] == "execute")
        .map(|line| line["frame"]["code"].as_str().unwrap().to_owned())
        .collect();
    let mut expected = vec!["pass".to_owned(); 3];
    expected.extend((0..measure::MIXED_CELLS).map(|index| {
        if index % 4 == 0 {
            measure::GIT_STATUS.to_owned()
        } else {
            "pass".to_owned()
        }
    }));
    expected.push(measure::INTERRUPT_AWAIT.to_owned());
    // interrupt_latency's follow-up cell, which must still run.
    assert_eq!(codes[..expected.len()], expected[..]);
    assert_eq!(codes.len(), expected.len() + 1, "{codes:?}");
    // The interrupted cell sleeps 60 s: an interrupt that did not stop it would show.
    assert!(interrupt < Duration::from_secs(30), "{interrupt:?}");
    // Mixed is a total of 35 cells, batch a mean per cell: the total is the larger.
    assert!(mixed > batch, "{mixed:?} {batch:?}");
}

#[test]
fn interrupt_stops_a_busy_synchronous_loop() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let latency = measure::interrupt_latency(&mut kernel, measure::INTERRUPT_BUSY).unwrap();
    assert!(latency < Duration::from_secs(60), "{latency:?}");
    kernel.close().unwrap();
}

#[test]
fn interrupt_kills_the_shell_command_being_awaited() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    // The shell itself prints the marker (through the kernel's stdout descriptor, so it
    // arrives as raw output) after writing its pid, so the interrupt always finds the
    // cell suspended in `await bash(...)`. A marker printed by the cell could be
    // interrupted while the cell still runs its own code, before the await.
    let code = "import os\n\
        await bash(f'echo $$ > child.pid; echo interrupt-ready > /proc/{os.getpid()}/fd/1; exec sleep 60')";
    let latency = measure::interrupt_latency(&mut kernel, code).unwrap();
    assert!(latency < Duration::from_secs(60), "{latency:?}");
    let pid: u32 = std::fs::read_to_string(fixture.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!still_running(pid), "sleep {pid} survived the interrupt");
    kernel.close().unwrap();
}

#[test]
fn shutdown_kills_children_that_left_the_process_group() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let reply = kernel
        .execute("import subprocess\nchild = subprocess.Popen(['sleep', '300'], start_new_session=True)\nchild.pid")
        .unwrap();
    let pid: u32 = reply.result().unwrap().parse().unwrap();
    assert!(process_exists(pid));
    let report = kernel.close().unwrap();
    assert_eq!(report.ending, Ending::Quit, "{report:?}");
    assert!(!still_running(pid), "child {pid} outlived the kernel");
}

#[test]
fn batch_checks_output_size() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    let mean = measure::batch(
        &mut kernel,
        measure::BASH_OUTPUT,
        2,
        Some(measure::OUTPUT_BYTES),
    )
    .unwrap();
    assert!(mean > Duration::ZERO, "{mean:?}");
    let error = measure::batch(&mut kernel, "print('abc', end='')", 1, Some(4)).unwrap_err();
    assert!(
        matches!(
            error,
            MeasureError::OutputSize {
                expected: 4,
                actual: 3,
                ..
            }
        ),
        "{error}"
    );
    let error = measure::batch(&mut kernel, "raise ValueError('no')", 1, None).unwrap_err();
    assert!(error.to_string().contains("ValueError: no"), "{error}");
    kernel.close().unwrap();
}

#[test]
fn transcript_records_every_frame_in_both_directions() {
    let fixture = Fixture::new();
    let path = fixture.path().join("transcript.jsonl");
    let mut options = fixture.options();
    options.transcript = Some(path.clone());
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    kernel.execute("print('traced')").unwrap();
    kernel.close().unwrap();
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let frames: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            let frame = &line["frame"];
            let kind = frame["event"].as_str().or(frame["type"].as_str()).unwrap();
            (line["dir"].as_str().unwrap().to_owned(), kind.to_owned())
        })
        .collect();
    let expected = [
        ("recv", "ready"),
        ("send", "execute"),
        ("recv", "stdout"),
        ("recv", "done"),
        ("send", "shutdown"),
        ("recv", "done"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(dir, kind)| ((*dir).to_owned(), (*kind).to_owned()))
        .collect();
    assert_eq!(frames, expected);
    assert!(lines.iter().all(|line| line["t"].as_f64().unwrap() >= 0.0));
}

/// Runs the whole runtime sequence against the reference kernel in a fresh git
/// workspace, with `extra_env` added to the kernel's environment.
fn run_all_in_a_git_workspace(
    fixture: &Fixture,
    extra_env: &[(&str, &str)],
) -> (measure::RuntimeReport, Vec<Metric>) {
    let workspace = fixture.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&workspace)
            .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    std::fs::write(workspace.join("README.md"), "# fixture\n").unwrap();
    git(&["init", "--quiet"]);
    git(&["add", "README.md"]);
    git(&[
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@example.invalid",
        "commit",
        "--quiet",
        "-m",
        "init",
    ]);
    let mut kernel = fixture.options();
    kernel.cwd = workspace.clone();
    for (key, value) in extra_env {
        kernel.env.push(((*key).into(), (*value).into()));
    }
    let state = fixture.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let mut options = RuntimeOptions::new(kernel, &state);
    options.cell_repeats = 5;
    options.shell_repeats = 2;
    options.transcript_dir = Some(fixture.path().to_path_buf());
    let mut probes = Vec::new();
    let report = measure::run_all(&options, &mut |metric, pid| {
        probes.push(metric);
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .ok_or("no VmRSS")?;
        Ok(kib * 1024)
    });
    if report.first_error().is_none() {
        assert!(state.join("state.pkl").is_file());
        assert!(state.join("manifest.json").is_file());
    }
    (report, probes)
}

#[test]
fn run_all_measures_every_runtime_metric_against_the_reference_kernel() {
    let fixture = Fixture::new();
    let (report, probes) = run_all_in_a_git_workspace(&fixture, &[]);
    assert_eq!(report.first_error(), None, "{report:?}");
    assert!(report.close_error.is_none(), "{report:?}");
    let measured: Vec<Metric> = report.values.iter().map(|(metric, _)| *metric).collect();
    assert_eq!(measured, Phase::Runtime.metrics().collect::<Vec<_>>());
    let expected = if pandas() {
        Workload::Pandas
    } else {
        Workload::Lists
    };
    assert_eq!(report.workload, Some(expected));
    assert_eq!(probes, vec![Metric::KernelRss, Metric::LoadedRss]);
    // The table and list hold well over a megabyte of Python objects.
    let before = report.value(Metric::KernelRss).unwrap();
    let loaded = report.value(Metric::LoadedRss).unwrap();
    assert!(loaded > before + 1_000_000.0, "{before} -> {loaded}");
    assert!(fixture.path().join("kernel-0.jsonl").is_file());
    assert!(fixture.path().join("restore-0.jsonl").is_file());
}

#[test]
fn a_failed_memory_probe_ends_the_sequence_with_its_typed_cause() {
    #[derive(Debug, thiserror::Error)]
    #[error("no process in session {0}")]
    struct NoProcess(u32);

    let fixture = Fixture::new();
    let state = fixture.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let mut options = RuntimeOptions::new(fixture.options(), &state);
    options.prelude = None;
    let report = measure::run_all(&options, &mut |_, pid| Err(NoProcess(pid).into()));
    let metrics: Vec<Metric> = report.values.iter().map(|(metric, _)| *metric).collect();
    assert_eq!(metrics, [Metric::KernelStart, Metric::KernelRss]);
    let Some((_, Err(MeasureError::Memory { source }))) = report.values.last() else {
        panic!("expected a memory error: {report:?}");
    };
    let pid = source
        .downcast_ref::<NoProcess>()
        .expect("the probe's own error")
        .0;
    assert_eq!(
        report.first_error().unwrap(),
        format!("kernel_rss: memory measurement failed: no process in session {pid}")
    );
    assert!(report.close_error.is_none(), "{report:?}");
}

#[test]
fn run_all_builds_and_verifies_a_data_frame_when_pandas_is_importable() {
    // A stand-in pandas (DataFrame with shape and sum) takes the pandas branch of the
    // workload cell, the snapshot and the restore check on machines without pandas.
    let fixture = Fixture::new();
    let fake = format!("{TEST_KERNELS}/fake_pandas");
    let (report, _) = run_all_in_a_git_workspace(&fixture, &[("PYTHONPATH", &fake)]);
    assert_eq!(report.first_error(), None, "{report:?}");
    assert_eq!(report.workload, Some(Workload::Pandas));
    assert!(report.value(Metric::Restore).is_some());
}

#[test]
fn a_restore_that_loses_values_fails_the_check() {
    let fixture = Fixture::new();
    let state = fixture.path().join("state.pkl");
    let mut kernel = fixture.start();
    measure::load_workload(&mut kernel).unwrap();
    kernel.execute("payload = payload[:-1]").unwrap();
    measure::snapshot(
        &mut kernel,
        &state,
        &fixture.path().join("manifest.json"),
        &["frame", "payload"],
    )
    .unwrap();
    kernel.close().unwrap();
    let mut fresh = fixture.start();
    measure::restore(&mut fresh, &state, &["frame", "payload"]).unwrap();
    let verify = measure::verify_workload_cell();
    let reply = fresh.execute(&verify).unwrap();
    assert_eq!(reply.done.status, "error");
    assert_eq!(reply.error().unwrap().evalue, "payload differs");
    let error =
        measure::restore(&mut fresh, &fixture.path().join("missing.pkl"), &["frame"]).unwrap_err();
    assert!(
        matches!(&error, MeasureError::RestoreIncomplete { missing, .. } if missing == &["frame"]),
        "{error}"
    );
    fresh.close().unwrap();
}

fn pandas() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import pandas"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

// Misbehaving kernels -----------------------------------------------------------

fn run_one_cell(name: &str) -> (KernelError, u32) {
    let home = tempfile::tempdir().unwrap();
    let mut kernel = Kernel::spawn(test_kernel(name, &[], home.path())).unwrap();
    kernel.ready().unwrap();
    let pid = kernel.pid();
    let error = kernel.execute("pass").unwrap_err();
    // The kernel stays broken afterwards, and closing still cleans up.
    assert!(matches!(
        kernel.execute("pass"),
        Err(KernelError::Unusable { .. })
    ));
    kernel.close().unwrap();
    assert!(!process_exists(pid), "kernel {pid} left behind");
    (error, pid)
}

#[test]
fn non_json_line_is_a_frame_error_quoting_it() {
    let (error, _) = run_one_cell("not_json.py");
    assert!(
        matches!(&error, KernelError::Frame { source: bench_term::kernel::FrameError::NotJson { line, .. }, .. } if line.contains("Traceback (most recent call last): oops")),
        "{error}"
    );
    let message = error_chain(&error);
    assert!(
        message.starts_with("protocol error while waiting for `done` of execute request 1: kernel sent a line that is not JSON"),
        "{message}"
    );
    assert!(
        message.contains("Traceback (most recent call last): oops"),
        "{message}"
    );
}

#[test]
fn event_without_event_field_is_a_frame_error() {
    let (error, _) = run_one_cell("no_event.py");
    assert!(
        matches!(
            &error,
            KernelError::Frame {
                source: bench_term::kernel::FrameError::MissingEvent { .. },
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error_chain(&error).contains(r#""text": "hello""#),
        "{error}"
    );
}

#[test]
fn done_for_an_unknown_id_is_an_error() {
    let (error, _) = run_one_cell("unknown_done.py");
    assert!(
        matches!(&error, KernelError::UnknownDone { id, .. } if id == "999"),
        "{error}"
    );
}

#[test]
fn kernel_dying_mid_cell_reports_status_and_stderr() {
    let (error, _) = run_one_cell("dies_mid_cell.py");
    let KernelError::Exited {
        status,
        stderr,
        seen,
        ..
    } = &error
    else {
        panic!("expected Exited, got {error}")
    };
    assert!(
        matches!(status, KernelExit::Status(status) if status.code() == Some(3)),
        "{status}"
    );
    assert!(error.to_string().contains("(exit status 3)"), "{error}");
    assert!(stderr.contains("fatal: kernel fell over"), "{stderr}");
    assert!(seen.contains("starting"), "{seen}");
}

#[test]
fn kernel_that_never_answers_times_out_quoting_what_it_saw() {
    let home = tempfile::tempdir().unwrap();
    let mut options = test_kernel("hangs.py", &[], home.path());
    options.request_timeout = Duration::from_millis(500);
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    let pid = kernel.pid();
    let error = kernel.execute("pass").unwrap_err();
    let KernelError::Timeout {
        waiting_for, seen, ..
    } = &error
    else {
        panic!("expected Timeout, got {error}")
    };
    assert!(waiting_for.contains("execute request 1"), "{waiting_for}");
    assert!(seen.contains("\"ready\""), "{seen}");
    kernel.close().unwrap();
    assert!(!process_exists(pid));
}

#[test]
fn kernel_streaming_without_newlines_still_times_out() {
    let home = tempfile::tempdir().unwrap();
    let mut options = test_kernel("streams_without_newlines.py", &[], home.path());
    options.ready_timeout = Duration::from_millis(200);
    let mut kernel = Kernel::spawn(options).unwrap();
    let pid = kernel.pid();
    let error = kernel.ready().unwrap_err();
    // It streams for 20 s: the deadlines of the handshake and of closing,
    // not the end of its output, must end both waits.
    let _ = kernel.close();
    let stream_ended = home.path().join("stream-ended").exists();
    assert!(
        !stream_ended,
        "ready() or close() waited for the stream to end"
    );
    assert!(matches!(&error, KernelError::Timeout { .. }), "{error}");
    assert!(!process_exists(pid));
}

#[test]
fn kernel_that_never_sends_ready_times_out_and_is_killed() {
    let home = tempfile::tempdir().unwrap();
    let mut options = test_kernel("never_ready.py", &[], home.path());
    options.ready_timeout = Duration::from_millis(500);
    let mut kernel = Kernel::spawn(options).unwrap();
    let pid = kernel.pid();
    let error = kernel.ready().unwrap_err();
    assert!(
        matches!(&error, KernelError::Timeout { seen, .. } if seen == "nothing"),
        "{error}"
    );
    assert!(error.to_string().contains("the `ready` event"));
    let report = kernel.close().unwrap();
    assert_eq!(report.ending, Ending::Killed, "{report:?}");
    assert!(!process_exists(pid));
}

#[test]
fn output_before_ready_is_not_ready() {
    let home = tempfile::tempdir().unwrap();
    let mut kernel = Kernel::spawn(test_kernel("wrong_first.py", &[], home.path())).unwrap();
    let error = kernel.ready().unwrap_err();
    assert!(
        matches!(&error, KernelError::NotReady { line } if line.contains("banner")),
        "{error}"
    );
    kernel.close().unwrap();
}

#[test]
fn other_protocol_versions_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let mut kernel = Kernel::spawn(test_kernel("old_protocol.py", &[], home.path())).unwrap();
    let error = kernel.ready().unwrap_err();
    assert!(
        matches!(&error, KernelError::UnsupportedProtocol { protocol, .. } if protocol == "2"),
        "{error}"
    );
    kernel.close().unwrap();
}

#[test]
fn close_kills_the_process_group_of_a_kernel_that_ignores_shutdown() {
    let home = tempfile::tempdir().unwrap();
    let pid_file = home.path().join("child.pid");
    let mut kernel = Kernel::spawn(test_kernel(
        "stubborn.py",
        &[pid_file.to_str().unwrap()],
        home.path(),
    ))
    .unwrap();
    kernel.ready().unwrap();
    let pid = kernel.pid();
    let child: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_exists(child));
    let report = kernel.close().unwrap();
    assert_eq!(report.ending, Ending::Killed, "{report:?}");
    assert_eq!(report.status.and_then(|status| status.signal()), Some(9));
    assert_eq!(report.to_string(), "killed by signal 9 (killed by close)");
    assert!(!process_exists(pid));
    assert!(
        !still_running(child),
        "child {child} survived the group kill"
    );
}

#[test]
fn spawning_a_missing_program_is_a_spawn_error() {
    let home = tempfile::tempdir().unwrap();
    let options = KernelOptions::new(
        "/nonexistent/python",
        Vec::<String>::new(),
        home.path(),
        environment(home.path()),
    );
    let error = Kernel::spawn(options).unwrap_err();
    assert!(
        matches!(&error, KernelError::Spawn { program, .. } if program == "/nonexistent/python")
    );
}

#[test]
fn a_protocol_error_without_an_id_fails_the_pending_request_at_once() {
    let home = tempfile::tempdir().unwrap();
    let mut options = test_kernel("rejects.py", &[], home.path());
    // Far longer than the answer takes: waiting it out would fail the match below.
    options.request_timeout = Duration::from_secs(60);
    let mut kernel = Kernel::spawn(options).unwrap();
    let error = kernel.execute("pass").unwrap_err();
    assert!(
        matches!(&error, KernelError::Rejected { evalue, .. } if evalue == "cannot read the request"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "kernel rejected the `done` of execute request 1: ProtocolError: cannot read the request"
    );
    // The kernel still serves: the next request is rejected the same way, not mixed up.
    assert!(matches!(
        kernel.execute("pass"),
        Err(KernelError::Rejected { .. })
    ));
    let _ = kernel.close();
}

#[test]
fn events_after_a_finished_requests_done_are_dropped() {
    let home = tempfile::tempdir().unwrap();
    let mut kernel = Kernel::spawn(test_kernel("late_events.py", &[], home.path())).unwrap();
    let first = kernel.execute("pass").unwrap();
    // The first request's late event arrives while the second is waited for.
    let second = kernel.execute("pass").unwrap();
    assert!(first.events.is_empty() && second.events.is_empty());
    let id = kernel.submit(&Request::execute("pass")).unwrap();
    // Nothing of the first request was kept for later: the next event comes from the pipe.
    let event = kernel
        .next_event(Duration::from_secs(10), "the next event")
        .unwrap();
    assert_ne!(event.id(), Some(first.id.as_str()), "{event:?}");
    assert!(
        [Some(second.id.as_str()), Some(id.as_str())].contains(&event.id()),
        "{event:?}"
    );
    let _ = kernel.close();
}

#[test]
fn an_interrupt_right_behind_an_execute_still_stops_that_cell() {
    let fixture = Fixture::new();
    let mut kernel = fixture.start();
    // Repeated, because the interrupt can land before the cell started or just after.
    for round in 0..10 {
        let id = kernel
            .submit(&Request::execute("import asyncio\nawait asyncio.sleep(60)"))
            .unwrap();
        kernel.interrupt().unwrap();
        // Within the 20 s request timeout, far below the cell's 60 s.
        let reply = kernel.wait_done(&id, Duration::from_secs(20)).unwrap();
        assert_eq!(reply.done.status, "error", "round {round}: {reply:?}");
        assert_eq!(
            reply.error().map(|e| e.ename.as_str()),
            Some("KeyboardInterrupt"),
            "round {round}: {reply:?}"
        );
        assert!(kernel.execute("pass").unwrap().is_ok());
    }
    kernel.close().unwrap();
}

#[test]
fn the_snapshot_serializer_is_loaded_when_first_needed() {
    let fixture = Fixture::new();
    let mut options = fixture.options();
    options.env.push((
        "PYTHONPATH".into(),
        format!("{TEST_KERNELS}/fake_dill").into(),
    ));
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    let loaded = |kernel: &mut Kernel| {
        kernel
            .execute("import sys\n'dill' in sys.modules")
            .unwrap()
            .result()
            .map(str::to_owned)
    };
    assert_eq!(loaded(&mut kernel).as_deref(), Some("False"));
    let state = fixture.path().join("state.pkl");
    let manifest = fixture.path().join("manifest.json");
    kernel
        .request(&Request::Snapshot(Snapshot {
            path: state.clone(),
            manifest_path: manifest.clone(),
            ..Snapshot::default()
        }))
        .unwrap();
    assert_eq!(loaded(&mut kernel).as_deref(), Some("True"));
    kernel.close().unwrap();
}

#[test]
fn the_kernel_runs_as_the_given_identity_groups_included() {
    if !rustix::process::geteuid().is_root() {
        bench_core::skip_test!("changing user needs root");
    }
    let fixture = Fixture::new();
    // The kernel, as nobody, must be able to read its script and enter its folder.
    std::fs::set_permissions(
        fixture.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut options = fixture.options();
    options.user = Some(bench_proc::Identity::new(65534, 65534).with_groups([4242]));
    let mut kernel = Kernel::spawn(options).unwrap();
    kernel.ready().unwrap();
    let reply = kernel
        .execute("import os; print(os.getresuid(), os.getresgid(), os.getgroups())")
        .unwrap();
    assert_eq!(
        reply.stdout(),
        "(65534, 65534, 65534) (65534, 65534, 65534) [4242]\n"
    );
    kernel.close().unwrap();
}
