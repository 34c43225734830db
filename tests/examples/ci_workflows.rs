//! The CI and cluster examples (`examples/ci/*.yml`, `examples/k8s/*.yaml`) parse as YAML and
//! run what they promise: `clibench ab` of the pull request's base and head, a sticky
//! comment, a failed check on a regression, shards that are merged; and the pull request's
//! code never runs beside a token that can write, nor installs an unpinned clibench.

use std::path::PathBuf;
use yaml_rust2::{Yaml, YamlLoader};

fn load(name: &str) -> Yaml {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut documents = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|error| panic!("{} is not YAML: {error}", path.display()));
    assert_eq!(documents.len(), 1, "{name}: one document");
    documents.remove(0)
}

fn steps(job: &Yaml) -> &[Yaml] {
    job["steps"].as_vec().expect("a job has steps")
}

fn text(value: &Yaml) -> &str {
    value.as_str().unwrap_or("")
}

/// The steps whose `run` script contains `needle`.
fn running<'a>(job: &'a Yaml, needle: &str) -> Vec<&'a Yaml> {
    steps(job)
        .iter()
        .filter(|step| text(&step["run"]).contains(needle))
        .collect()
}

fn uses<'a>(job: &'a Yaml, action: &str) -> Option<&'a Yaml> {
    steps(job)
        .iter()
        .find(|step| text(&step["uses"]).starts_with(action))
}

#[test]
fn the_pull_request_workflow_compares_base_and_head_comments_once_and_fails_on_regression() {
    let workflow = load("ci/github-actions.yml");
    // YAML 1.1 readers take `on` for `true`; GitHub and YAML 1.2 read the key `on`.
    assert!(!workflow["on"]["pull_request"].is_badvalue());
    let job = &workflow["jobs"]["ab"];
    let ab = running(job, "clibench ab \"$SPEC\"");
    assert_eq!(ab.len(), 1);
    let script = text(&ab[0]["run"]);
    for needed in [
        "--base \"source.commit=$BASE_SHA\"",
        "--head \"source.commit=$HEAD_SHA\"",
        "--fail-on-regression",
        "--out \"$OUT\"",
    ] {
        assert!(script.contains(needed), "{needed} in {script}");
    }
    // The shas reach the script through the environment, never spliced into it.
    assert_eq!(
        text(&ab[0]["env"]["BASE_SHA"]),
        "${{ github.event.pull_request.base.sha }}"
    );
    assert!(!script.contains("${{"), "{script}");
    let upload = uses(job, "actions/upload-artifact@").expect("the results are uploaded");
    assert_eq!(text(&upload["with"]["path"]), "${{ env.OUT }}");
    assert_eq!(text(&workflow["env"]["OUT"]), "clibench-out");
    let comment =
        uses(&workflow["jobs"]["comment"], "actions/github-script@").expect("a comment step");
    let js = text(&comment["with"]["script"]);
    assert!(js.contains("<!-- clibench -->") && js.contains("comparison.md"));
    assert!(js.contains("updateComment") && js.contains("createComment"));
    let fail = steps(job)
        .iter()
        .find(|step| text(&step["if"]).contains("steps.ab.outputs.status"))
        .expect("a step fails the check");
    assert!(text(&fail["run"]).contains("exit 1"));
}

/// The GitHub Actions workflows.
const WORKFLOWS: [&str; 2] = ["ci/github-actions.yml", "ci/github-actions-sharded.yml"];

fn jobs(workflow: &Yaml) -> Vec<(&str, &Yaml)> {
    workflow["jobs"]
        .as_hash()
        .expect("a workflow has jobs")
        .iter()
        .map(|(name, job)| (text(name), job))
        .collect()
}

/// A job's `permissions` as (scope, access) pairs; every job must name them.
fn permissions<'a>(workflow: &str, name: &str, job: &'a Yaml) -> Vec<(&'a str, &'a str)> {
    job["permissions"]
        .as_hash()
        .unwrap_or_else(|| panic!("{workflow}: job {name} names its permissions"))
        .iter()
        .map(|(scope, access)| (text(scope), text(access)))
        .collect()
}

#[test]
fn jobs_that_run_pull_request_code_hold_a_read_only_token_that_is_not_kept_on_disk() {
    for workflow_name in WORKFLOWS {
        let workflow = load(workflow_name);
        // That trigger runs the pull request's code with a write token and the secrets.
        assert!(
            workflow["on"]["pull_request_target"].is_badvalue(),
            "{workflow_name}"
        );
        // Nothing by default, so a job added later gets no write token by accident.
        assert_eq!(
            workflow["permissions"].as_hash().map(|all| all.len()),
            Some(0),
            "{workflow_name}: top-level permissions are {{}}"
        );
        for (name, job) in jobs(&workflow) {
            let granted = permissions(workflow_name, name, job);
            let checkout = uses(job, "actions/checkout@");
            if let Some(checkout) = checkout {
                assert_eq!(
                    checkout["with"]["persist-credentials"].as_bool(),
                    Some(false),
                    "{workflow_name}: job {name} leaves the token in .git/config"
                );
            }
            if checkout.is_some() || !running(job, "clibench ab").is_empty() {
                assert_eq!(
                    granted,
                    [("contents", "read")],
                    "{workflow_name}: job {name}"
                );
            }
            // A token that can write is only held where nothing runs but actions that
            // read the artifact as data: no checkout, no shell.
            if granted.iter().any(|(_, access)| *access == "write") {
                assert!(checkout.is_none(), "{workflow_name}: job {name}");
                for step in steps(job) {
                    assert!(
                        step["run"].is_badvalue(),
                        "{workflow_name}: job {name} runs {step:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_comment_is_posted_by_a_job_that_only_reads_the_artifact() {
    let workflow = load("ci/github-actions.yml");
    let job = &workflow["jobs"]["comment"];
    assert_eq!(text(&job["needs"]), "ab");
    assert_eq!(
        permissions("github-actions.yml", "comment", job),
        [("pull-requests", "write")]
    );
    let actions: Vec<&str> = steps(job)
        .iter()
        .map(|step| text(&step["uses"]).split('@').next().unwrap_or(""))
        .collect();
    assert_eq!(
        actions,
        ["actions/download-artifact", "actions/github-script"]
    );
    let upload = uses(&workflow["jobs"]["ab"], "actions/upload-artifact@").unwrap();
    let download = uses(job, "actions/download-artifact@").unwrap();
    assert_eq!(
        text(&download["with"]["name"]),
        text(&upload["with"]["name"])
    );
    // The artifact is read by the script, never spliced into it by an expression.
    let script = text(&uses(job, "actions/github-script@").unwrap()["with"]["script"]);
    assert!(!script.contains("${{"), "{script}");
    assert!(script.contains("readFileSync"), "{script}");
    // The comment is posted only when `ab` wrote a comparison, also when it failed the check.
    assert_eq!(
        text(&workflow["jobs"]["ab"]["outputs"]["compared"]),
        "${{ steps.ab.outputs.compared }}"
    );
    assert!(text(&job["if"]).contains("always()"));
    assert!(text(&job["if"]).contains("needs.ab.outputs.compared == 'true'"));
}

#[test]
fn clibench_is_installed_from_a_pinned_commit() {
    for workflow_name in WORKFLOWS {
        let workflow = load(workflow_name);
        let rev = text(&workflow["env"]["CLIBENCH_REV"]);
        assert!(
            rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()),
            "{workflow_name}: CLIBENCH_REV {rev:?} is a full commit"
        );
        let mut installs = 0;
        for (name, job) in jobs(&workflow) {
            for step in running(job, "cargo install") {
                installs += 1;
                let script = text(&step["run"]);
                assert!(
                    script.contains("--git ") && script.contains("--rev \"$CLIBENCH_REV\""),
                    "{workflow_name}: job {name}: {script}"
                );
            }
        }
        assert!(installs > 0, "{workflow_name}");
    }
}

#[test]
fn the_sharded_workflow_runs_every_shard_and_merges_both_sides() {
    let workflow = load("ci/github-actions-sharded.yml");
    let shard = &workflow["jobs"]["shard"];
    let shards: Vec<i64> = shard["strategy"]["matrix"]["shard"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_i64)
        .collect();
    assert_eq!(
        workflow["env"]["SHARDS"].as_i64(),
        Some(shards.len() as i64)
    );
    assert_eq!(shards, (1..=shards.len() as i64).collect::<Vec<_>>());
    let ab = running(shard, "clibench ab");
    assert!(text(&ab[0]["run"]).contains("--shard \"$SHARD/$SHARDS\""));
    let merge = &workflow["jobs"]["merge"];
    assert_eq!(text(&merge["needs"]), "shard");
    let script = text(&running(merge, "clibench merge")[0]["run"]);
    assert!(script.contains("/base --out merged/base"), "{script}");
    assert!(script.contains("/head --out merged/head"), "{script}");
    assert!(script.contains("--fail-on-regression"), "{script}");
}

#[test]
fn the_kubernetes_job_gives_each_pod_its_shard() {
    let job = load("k8s/clibench-job.yaml");
    assert_eq!(text(&job["kind"]), "Job");
    let spec = &job["spec"];
    assert_eq!(text(&spec["completionMode"]), "Indexed");
    let completions = spec["completions"].as_i64().unwrap();
    assert_eq!(spec["parallelism"].as_i64(), Some(completions));
    let container = &spec["template"]["spec"]["containers"][0];
    let shards = container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|var| text(&var["name"]) == "SHARDS")
        .map(|var| text(&var["value"]).to_owned());
    assert_eq!(shards, Some(completions.to_string()));
    let script = text(&container["args"][0]);
    assert!(script.contains("$((JOB_COMPLETION_INDEX + 1))"), "{script}");
    assert!(script.contains("--shard \"$shard/$SHARDS\""), "{script}");
    assert_eq!(text(&spec["template"]["spec"]["restartPolicy"]), "Never");
}

#[test]
fn the_merged_shards_go_into_a_postgres_history_that_gates_the_check() {
    let workflow = load("ci/github-actions-sharded.yml");
    let merge = &workflow["jobs"]["merge"];
    assert_eq!(text(&merge["services"]["postgres"]["image"]), "postgres:15");
    // The URL and its password come through the environment, never a command line.
    let history = text(&merge["env"]["CLIBENCH_HISTORY"]);
    assert!(history.contains("postgres://"), "{history}");
    let script = text(&running(merge, "clibench history add")[0]["run"]);
    assert!(
        script.contains("history add merged/head/result.json"),
        "{script}"
    );
    assert!(
        script.contains("history check merged/head/result.json")
            && script.contains("--fail-on-regression"),
        "{script}"
    );
    assert!(!script.contains("--store"), "{script}");
}

#[test]
fn the_kubernetes_history_job_reads_its_url_from_a_secret() {
    let job = load("k8s/clibench-history-job.yaml");
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let url = container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|var| text(&var["name"]) == "CLIBENCH_HISTORY")
        .expect("CLIBENCH_HISTORY is set");
    assert_eq!(
        text(&url["valueFrom"]["secretKeyRef"]["name"]),
        "clibench-history"
    );
    let script = text(&container["args"][0]);
    for needed in [
        "clibench merge",
        "clibench history add",
        "--fail-on-regression",
    ] {
        assert!(script.contains(needed), "{needed} in {script}");
    }
    assert!(!script.contains("postgres://"), "{script}");
}

#[test]
fn the_kubernetes_jobs_run_the_image_the_containerfile_builds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let containerfile = std::fs::read_to_string(root.join("Containerfile")).unwrap();
    assert!(
        containerfile.contains("cargo build --locked --release -p bench-cli"),
        "{containerfile}"
    );
    for tool in ["git", "python3", "node:20"] {
        assert!(containerfile.contains(tool), "{tool} in the image");
    }
    for name in ["k8s/clibench-job.yaml", "k8s/clibench-history-job.yaml"] {
        let job = load(name);
        let image = text(&job["spec"]["template"]["spec"]["containers"][0]["image"]);
        assert_eq!(image, "clibench:local", "{name}");
    }
}
