//! `clibench run` as a person runs it: in a real terminal (expectrl's pseudo-terminal),
//! showing its progress line, stopped by a typed Ctrl-C. The terminal's line discipline
//! (cooked mode, ISIG) turns the typed `^C` into SIGINT to the whole foreground process
//! group, clibench and the phase child it started alike, as it does at a keyboard; a
//! `kill -INT` reaches clibench alone.
//!
//! expectrl drives clibench here and nothing else: the measured program runs in the
//! pseudo-terminal bench-term opens for it, so expectrl never touches a measurement.

use crate::clibench;
use crate::pipeline_run::{assert_nothing_left, demo, edit, is_root, load};
use bench_core::Metric;
use expectrl::process::unix::WaitStatus;
use expectrl::{ControlCode, Eof, Expect, Regex};
use std::time::Duration;

/// A run of the demo whose measure phase waits (its agent never becomes ready) until the
/// person at the terminal types Ctrl-C.
#[test]
fn ctrl_c_typed_in_the_terminal_stops_the_run_with_130_and_a_valid_result() {
    let (dir, spec) = demo();
    edit(
        &spec,
        r#"command = ["demo-agent"]"#,
        r#"command = ["demo-agent", "--never-ready"]"#,
    );
    edit(
        &spec,
        r#"ready_timeout = "20s""#,
        r#"ready_timeout = "300s""#,
    );
    let out = dir.path().join("out");
    let mut command = clibench();
    command.arg("run").arg(&spec).arg("--out").arg(&out).args([
        "--trials",
        "1",
        "--phases",
        "prepare,install,measure",
    ]);
    // A person's terminal says what it is; without TERM (CI's environment may have
    // none) clibench prints plain progress lines instead of the progress bar.
    command.env("TERM", "xterm-256color");
    let mut session = expectrl::Session::spawn(command).expect("clibench starts in a terminal");
    // Generous bounds for a loaded 2-core machine; each wait ends as soon as the text
    // shows, so none of them is a speed expectation.
    session.set_expect_timeout(Some(Duration::from_secs(240)));
    // The progress line names the measure step and counts its seconds: once it shows a
    // whole second, measure is under way and its agent started (or starting), so the
    // Ctrl-C finds the run mid-phase.
    session
        .expect(Regex(r"\[3/3\] measure trial 0  [1-9][0-9]*\.[0-9] s"))
        .unwrap_or_else(|error| panic!("no progress line for measure: {error}"));
    let master = session.get_process().get_raw_handle().unwrap();
    let termios =
        rustix::termios::tcgetattr(&master).expect("the terminal's settings are readable");
    assert!(
        termios
            .local_modes
            .contains(rustix::termios::LocalModes::ISIG | rustix::termios::LocalModes::ICANON),
        "the terminal must be in cooked mode with ISIG for a typed Ctrl-C to be SIGINT: {:?}",
        termios.local_modes
    );
    session.send(ControlCode::EndOfText).unwrap();
    // Everything clibench says until it closes the terminal, then how it ended.
    let said = session
        .expect(Eof)
        .unwrap_or_else(|error| panic!("clibench did not end after Ctrl-C: {error}"));
    let said = String::from_utf8_lossy(said.as_bytes()).into_owned();
    let status = session.get_process().wait().unwrap();
    assert!(
        matches!(status, WaitStatus::Exited(_, 130)),
        "{status:?}; clibench said:\n{said}"
    );
    assert!(said.contains("interrupted"), "{said}");
    // The finished phases' samples are kept in a result that loads.
    let saved = load(&out);
    assert_eq!(saved.side.values(Metric::Install).len(), 1, "{said}");
    // No trial user (as root) and no process of the run is left.
    assert_nothing_left(&out, is_root());
}
