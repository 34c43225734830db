//! `examples/kernel_roundtrip.rs`: the reference kernel, start to restore.

use crate::example;

#[test]
fn round_trips_the_reference_kernel() {
    let output = example("kernel_roundtrip").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    insta::with_settings!({filters => vec![
        (r"\d+(\.\d+)? (ns|µs|ms|s)\b", "[time]"),
        (r"\d+(\.\d+)? (B|KiB|MiB|GiB)\b", "[size]"),
        (r"python 3\.\d+\.\d+\S*", "python [version]"),
    ]}, {
        insta::assert_snapshot!(stdout);
    });
}

#[test]
fn a_command_that_is_not_a_kernel_is_an_error() {
    let output = example("kernel_roundtrip")
        .args(["python3", "-c", "print('no kernel here')"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no kernel here"), "{stderr}");
}
