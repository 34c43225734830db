//! Specs written for earlier releases of the grammar (`tests/fixtures/specs`) still mean
//! what they meant: a spec without `spec_version` writes the files its release wrote.

use bench_cli::spec::{self, Placeholder, Spec, Values};
use std::path::PathBuf;

fn fixture(name: &str) -> Spec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/specs")
        .join(name);
    spec::load(&path).unwrap_or_else(|error| panic!("{error}"))
}

fn values() -> Values {
    let mut values = Values::default();
    values
        .set(Placeholder::Home, "/home/u")
        .set(Placeholder::Workspace, "/home/u/workspace")
        .set(Placeholder::Version, "2.1.197");
    values
}

#[test]
fn a_release_1_spec_writes_the_json_its_doubled_braces_meant() {
    let spec = fixture("release-1-claude-code.toml");
    assert_eq!(spec.spec_version, None);
    let text = spec.install.write[0].content.expand(&values()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}\n{text}"));
    assert_eq!(json["hasCompletedOnboarding"], true, "{text}");
    assert_eq!(json["lastOnboardingVersion"], "2.1.197", "{text}");
    assert_eq!(
        json["projects"]["/home/u/workspace"]["hasTrustDialogAccepted"], true,
        "{text}"
    );
}

#[test]
fn a_release_2_spec_writes_doubled_braces_as_they_are() {
    let spec = fixture("release-2-literal-braces.toml");
    assert_eq!(spec.spec_version, Some(2));
    let text = spec.install.write[0].content.expand(&values()).unwrap();
    assert_eq!(text, "Hello {{ .Name }} from /home/u\n");
}

#[test]
fn an_unversioned_spec_with_single_brace_json_keeps_it() {
    let text = "name = \"x\"\n[[install.write]]\npath = \"a.json\"\n\
                content = '{\"a\": {\"b\": \"{json:home}\"}}'\n";
    let spec = spec::parse(text, "x.toml").unwrap();
    let written = spec.install.write[0].content.expand(&values()).unwrap();
    assert_eq!(written, "{\"a\": {\"b\": \"/home/u\"}}");
}

#[test]
fn a_spec_version_from_the_future_is_refused_naming_the_key() {
    let error = spec::parse("spec_version = 3\nname = \"x\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("x.toml:1:1: spec_version 3"), "{error}");
}
