//! `examples/family_memory.rs`: measures a shell family and stops it.

use crate::example;

#[test]
fn measures_the_default_family_and_leaves_nothing() {
    let output = example("family_memory").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The python child holds 8 MiB of its own, so the family's PSS is above it.
    let pss_line = stdout.lines().find(|l| l.starts_with("pss:")).unwrap();
    assert!(pss_line.contains("MiB"), "{pss_line}");
    let pss_mib: f64 = pss_line[4..]
        .trim()
        .trim_end_matches(" MiB")
        .parse()
        .unwrap();
    assert!(pss_mib > 8.0, "{stdout}");
    insta::with_settings!({filters => vec![
        (r"\d+(\.\d+)? (B|KiB|MiB|GiB)", "[size]"),
        // How many processes a launcher shows on the way (a pyenv shim runs
        // several) and who reaps whom while stopping depend on the machine.
        (r"\d+ processes \(\d+ samples\)", "[n] processes ([n] samples)"),
        (r"\d+ reaped", "[n] reaped"),
    ]}, {
        insta::assert_snapshot!(stdout);
    });
}

#[test]
fn a_missing_command_is_an_error() {
    let output = example("family_memory")
        .arg("/nonexistent/clibench-command")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("failed to start /nonexistent/clibench-command"),
        "{stderr}"
    );
}
