//! Malformed specs: every error form, as `clibench phase` prints it (exit code 2,
//! `spec.toml:LINE:COLUMN: message` naming the key), and nothing is created.

use crate::{clibench, run};

const INSTALL: &str = "[install]\ncommand = [\"sh\", \"install.sh\"]\n";

/// (case, spec text)
fn cases() -> Vec<(&'static str, String)> {
    let sha = "0123456789abcdef0123456789abcdef01234567";
    vec![
        (
            "unknown key with a suggestion",
            format!("name = \"x\"\n{INSTALL}\n[measure]\ncomand = [\"x\"]\n"),
        ),
        ("unknown top-level key", format!("nmae = \"x\"\n{INSTALL}")),
        (
            "unknown key without a close match",
            format!("name = \"x\"\n{INSTALL}banana = 1\n"),
        ),
        (
            "unknown key in an array of tables",
            format!(
                "name = \"x\"\n{INSTALL}\n[[build]]\ncommand = [\"make\"]\n\n[[build]]\ncommand = [\"make\"]\ntimout = \"1s\"\n"
            ),
        ),
        (
            "wrong type",
            "name = \"x\"\n[install]\ncommand = \"sh install.sh\"\n".to_owned(),
        ),
        (
            "wrong type of a number",
            format!("name = \"x\"\n{INSTALL}\n[staircase]\ncommand = [\"x\"]\ncount = \"five\"\n"),
        ),
        ("missing name", INSTALL.to_owned()),
        (
            "missing required key",
            "name = \"x\"\n[source]\nrepository = \"repo\"\n".to_owned(),
        ),
        (
            "missing key in an array of tables",
            format!("name = \"x\"\n{INSTALL}\n[[install.write]]\npath = \"a.json\"\n"),
        ),
        (
            "invalid duration",
            "name = \"x\"\n[install]\ncommand = [\"sh\"]\ntimeout = \"30\"\n".to_owned(),
        ),
        (
            "zero timeout",
            "name = \"x\"\n[install]\ncommand = [\"sh\"]\ntimeout = \"0s\"\n".to_owned(),
        ),
        (
            "invalid regex",
            format!(
                "name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nready = \"pattern\"\nready_pattern = \"(unclosed\"\n"
            ),
        ),
        (
            "pattern mode without a pattern",
            format!("name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nready = \"pattern\"\n"),
        ),
        (
            "unknown ready mode",
            format!(
                "name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nready = \"sometimes\"\n"
            ),
        ),
        (
            "invalid regex in ready_reject",
            format!(
                "name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nready_reject = [\"ok\", \"(\"]\n"
            ),
        ),
        (
            "unknown quit key",
            format!("name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nquit = [\"C-\"]\n"),
        ),
        (
            "invalid regex in a ui step",
            format!(
                "name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\n\n[ui]\n[[ui.steps]]\nname = \"a\"\nkeys = \"a\"\nexpect = \"[\"\n"
            ),
        ),
        (
            "unknown placeholder",
            "name = \"x\"\n[install]\ncommand = [\"sh\", \"{hoem}/install.sh\"]\n".to_owned(),
        ),
        (
            "placeholder with no value in prepare",
            format!(
                "name = \"x\"\n{INSTALL}\n[[build]]\ncommand = [\"make\", \"PREFIX={{home}}\"]\n"
            ),
        ),
        (
            "origin outside the installer",
            format!("name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\", \"{{origin}}\"]\n"),
        ),
        (
            "source placeholder without a source",
            "name = \"x\"\n[install]\ncommand = [\"sh\", \"{source}/install.sh\"]\n".to_owned(),
        ),
        (
            "stop command without the id",
            format!(
                "name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\nlist_sessions = [\"x\", \"list\"]\nstop_session = [\"x\", \"stop\"]\n"
            ),
        ),
        (
            "short commit",
            format!(
                "name = \"x\"\n\n[source]\nrepository = \"repo\"\ncommit = \"abc123\"\n\n{INSTALL}"
            ),
        ),
        (
            "home file outside the home",
            format!(
                "name = \"x\"\n{INSTALL}\n[[install.write]]\npath = \"../.bashrc\"\ncontent = \"\"\n"
            ),
        ),
        (
            "unknown placeholder in a home file's content",
            format!(
                "name = \"x\"\n{INSTALL}\n[[install.write]]\npath = \"a.json\"\ncontent = '{{\"dir\": \"{{json:worksapce}}\"}}'\n"
            ),
        ),
        (
            "version in a home file's content without a version",
            "name = \"x\"\n\n[[install.write]]\npath = \"a.txt\"\ncontent = \"v{version}\"\n"
                .to_owned(),
        ),
        (
            "toml syntax error",
            format!("name = \"x\"\n[source]\nrepository = \"repo\"\ncommit = \"{sha}\n{INSTALL}"),
        ),
        (
            "a session whose script has no prompt",
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\n[model]\ndialect = \"anthropic\"\n\
             [model.script]\n[[model.script.turns]]\ntext = \"hi\"\n[session]\n"
                .to_owned(),
        ),
        (
            "a session staircase without a model",
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\n[staircase]\nsession = true\n".to_owned(),
        ),
        (
            "a session staircase whose script has no prompt",
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\n[model]\ndialect = \"anthropic\"\n\
             [model.script]\n[[model.script.turns]]\ntext = \"hi\"\n[staircase]\nsession = true\n"
                .to_owned(),
        ),
        (
            "a typo in an inline script's turn",
            "name = \"x\"\n[model]\ndialect = \"anthropic\"\n[model.script]\n\
             [[model.script.turns]]\nprompt = \"a\"\ntxet = \"hi\"\n"
                .to_owned(),
        ),
        (
            "model_url without a model",
            "name = \"x\"\n[env]\nBASE = \"{model_url}\"\n".to_owned(),
        ),
        (
            "an unknown dialect",
            "name = \"x\"\n[model]\ndialect = \"klingon\"\nscript = \"s.toml\"\n".to_owned(),
        ),
        (
            "duplicate table",
            format!("name = \"x\"\n{INSTALL}\n[measure]\ncommand = [\"x\"]\n[measure]\n"),
        ),
    ]
}

#[test]
fn malformed_specs_are_input_errors_naming_the_key() {
    let mut report = String::new();
    for (case, text) in cases() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.toml"), &text).unwrap();
        let out = run(clibench()
            .args(["phase", "prepare", "--spec", "spec.toml", "--out", "out"])
            .current_dir(dir.path()));
        assert_eq!(out.code, Some(2), "{case}: {}", out.stderr);
        assert!(
            out.stderr.starts_with("error: spec.toml:"),
            "{case}: {}",
            out.stderr
        );
        assert!(
            !dir.path().join("out").exists(),
            "{case}: the output folder was created"
        );
        report.push_str(&format!("{case}:\n  {}", out.stderr));
    }
    insta::assert_snapshot!(report);
}

#[test]
fn missing_spec_file_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(clibench()
        .args(["phase", "prepare", "--spec", "nope.toml", "--out", "out"])
        .current_dir(dir.path()));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: nope.toml: cannot read the spec: "),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_phase_is_a_usage_error() {
    let out = run(clibench().args(["phase", "instal", "--spec", "s.toml", "--out", "o"]));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown phase 'instal'") || out.stderr.contains("instal"),
        "{}",
        out.stderr
    );
}
