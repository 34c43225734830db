//! README.md, docs/ and `clibench --help` work as written: every `clibench` command in
//! the ```sh blocks of README.md and docs/*.md and in the help's examples is either run
//! here (with small counts where it would be long) or skipped for a reason stated below.
//! A command added to any of them without a line here fails the test, so nothing is left
//! untried.

use crate::{clibench, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the test does with one documented command.
enum Case {
    /// Runs this shell command (the documented one, with smaller counts where it
    /// is long or placeholders filled in) and expects this exit code.
    Run { as_run: &'static str, code: i32 },
    /// Does not run it, for this reason.
    Skip(&'static str),
    /// Runs this shell command with `$PG` the URL of a new database on a throwaway
    /// PostgreSQL server (for the team store's URLs), and expects it to succeed.
    OnPostgres(&'static str),
}

use Case::{OnPostgres, Run, Skip};

const NETWORK: &str = "needs the npm registry (network)";
const PLACEHOLDER: &str = "names the reader's own spec, commit and folders";
const BOARD_FILE: &str = "needs the npm registry (network); \
    board::the_shipped_board_file_names_every_agent_spec_and_their_shared_script reads the \
    file, and board::a_board_file_shares_one_model_script_whose_turns_every_target_plays runs \
    a board file on two copies of the demo";
const PHASE_SEQUENCE: &str = "docs/spec.md's phase sequence, which \
    readme::the_phase_sequence_of_docs_spec_md_runs_as_written runs in order on the demo";

/// Every documented command, exactly as written (without its trailing comment),
/// and what the test does with it.
fn cases() -> Vec<(&'static str, Case)> {
    vec![
        (
            "clibench calibrate -- python3 -c pass",
            Run {
                as_run: "clibench calibrate --duration 1s -- python3 -c pass",
                code: 0,
            },
        ),
        (
            "clibench calibrate --duration 20s -- python3 -c 'import json'",
            Run {
                as_run: "clibench calibrate --duration 1s -- python3 -c 'import json'",
                code: 0,
            },
        ),
        (
            "clibench cleanup --out DIR",
            Run {
                as_run: "mkdir -m 0700 d && clibench cleanup --out d",
                code: 0,
            },
        ),
        (
            "clibench report out/result.json --explain",
            Run {
                as_run: "clibench report examples/results/base.json --explain",
                code: 0,
            },
        ),
        (
            "clibench compare base.json candidate.json --noise cold=0.05 --noise warm=0.1",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json --noise cold=0.05 --noise warm=0.1",
                code: 0,
            },
        ),
        (
            "clibench compare base.json candidate.json --export-html comparison.html",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json --export-html comparison.html \
                         && test -s comparison.html",
                code: 0,
            },
        ),
        (
            "clibench bisect spec.toml --good v1.2.0 --bad main --metric cold --history history.sqlite",
            Skip(
                "names the reader's own spec and refs, and builds and measures several commits \
                 (minutes); bisect::bisect_names_the_commit_that_made_starts_slower runs it on \
                 a repository of the demo",
            ),
        ),
        (
            "clibench bisect examples/agents/pi.toml --good 0.63.1 --bad 0.73.1 --metric warm",
            Skip(
                "needs the npm registry (network) and installs and measures pi releases for \
                 tens of minutes; history::bisect (versions.rs) tests the listing with a fake npm and \
                 the refusals, history::pooled the search from the store",
            ),
        ),
        (
            "clibench run --history history.sqlite",
            Skip(
                "a whole demo pipeline (a minute); it adds result.json as `history add` does, \
                 which history::adding_twice_keeps_one_and_show_finds_the_step runs",
            ),
        ),
        (
            "clibench history add out/result.json --branch main --store history.sqlite",
            Run {
                as_run: "clibench history add examples/results/base.json --target demo \
                         --branch main --store h1.sqlite",
                code: 0,
            },
        ),
        (
            "clibench history show cold --store postgres://ci@db.internal:5432/bench",
            OnPostgres(
                "clibench history add examples/results/base.json --target demo --store \"$PG\" \
                 && clibench history show cold --store \"$PG\"",
            ),
        ),
        (
            "clibench run spec.toml --history postgres://ci@db.internal:5432/bench",
            OnPostgres(
                "clibench run --phases prepare,install --out pg-run --history \"$PG\" \
                 && clibench history show install --store \"$PG\"",
            ),
        ),
        (
            "clibench history import history.sqlite --store postgres://ci@db.internal/bench",
            OnPostgres(
                "clibench history add examples/results/base.json --target demo \
                 --store pg-move.sqlite && clibench history import pg-move.sqlite --store \"$PG\"",
            ),
        ),
        (
            "clibench history import postgres://ci@db.internal/bench --store copy.sqlite",
            OnPostgres(
                "clibench history add examples/results/base.json --target demo --store \"$PG\" \
                 && clibench history import \"$PG\" --store pg-copy.sqlite \
                 && clibench history show cold --store pg-copy.sqlite",
            ),
        ),
        (
            "clibench history show cold --store history.sqlite",
            Run {
                as_run: "clibench history add examples/results/base.json \
                         examples/results/candidate.json --target demo --store h2.sqlite \
                         && clibench history show cold --store h2.sqlite",
                code: 0,
            },
        ),
        (
            "clibench history report --store history.sqlite --out history.html",
            Run {
                as_run: "clibench history add examples/results/base.json --target demo \
                         --store h3.sqlite && clibench history report --store h3.sqlite \
                         --out history.html && test -s history.html",
                code: 0,
            },
        ),
        (
            "clibench history check out/result.json --store history.sqlite --fail-on-regression",
            Run {
                as_run: "clibench history add examples/results/base.json --target demo \
                         --store h4.sqlite && clibench history check \
                         examples/results/candidate.json --target demo --store h4.sqlite \
                         --fail-on-regression",
                code: 0,
            },
        ),
        (
            "clibench history import ci-shard-1.sqlite --store history.sqlite",
            Run {
                as_run: "clibench history add examples/results/base.json --target demo \
                         --store shard5.sqlite && clibench history import shard5.sqlite \
                         --store h5.sqlite",
                code: 0,
            },
        ),
        (
            "clibench history show cold",
            Run {
                as_run: "export CLIBENCH_HISTORY=\"$PWD/h6.sqlite\" && clibench history add \
                         examples/results/base.json --target demo && clibench history show cold",
                code: 0,
            },
        ),
        (
            "clibench ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300",
            Skip(
                "two demo pipelines take minutes; \
                 ab::ab_interleaves_the_sides_and_writes_both_results_and_the_comparison \
                 runs it with 2 trials",
            ),
        ),
        (
            "clibench ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300 --fail-on-regression",
            Skip(
                "two demo pipelines for about a minute; \
                 ab::the_documented_ab_example_catches_its_planted_delay runs this exact line \
                 and checks its verdicts and exit code",
            ),
        ),
        (
            "clibench ab --scenario long-session --trials 1 --phases prepare,install,session \
             --head measure.env.DEMO_AGENT_LEAK_BYTES_PER_TURN=1048576 \
             --head measure.env.DEMO_AGENT_KEY_COST_US_PER_TURN=500",
            Skip(
                "two demo pipelines with 100-turn sessions take minutes; \
                 ab::ab_of_a_long_session_calls_a_planted_leak_per_turn_regressed_and_a_a_within_noise \
                 runs one with a planted leak",
            ),
        ),
        (
            "clibench cleanup --out out",
            Run {
                as_run: "mkdir -m 0700 out && clibench cleanup --out out",
                code: 0,
            },
        ),
        (
            "clibench history check clibench-out/result.json --store history.sqlite \
             --metric cold --metric warm --fail-on-regression",
            Run {
                as_run: "clibench history add examples/results/base.json --target demo \
                         --store h7.sqlite && clibench history check \
                         examples/results/candidate.json --target demo --store h7.sqlite \
                         --metric cold --metric warm --fail-on-regression",
                code: 0,
            },
        ),
        (
            "clibench model serve --script turns.toml --port 8484 --journal journal.jsonl",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench phase prepare --spec examples/prime-agent.toml --out out --repository URL \
             --commit SHA",
            Skip(PHASE_SEQUENCE),
        ),
        (
            "clibench phase install --spec examples/prime-agent.toml --out out --trial 0 \
             [--keep-users]",
            Skip(PHASE_SEQUENCE),
        ),
        (
            "clibench phase measure --spec examples/prime-agent.toml --out out --trial 0",
            Skip(PHASE_SEQUENCE),
        ),
        (
            "clibench run bench/agent.toml --commit \"$GITHUB_SHA\" --out clibench-out \
             --history history.sqlite",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench run examples/agents/gemini-cli.toml --trials 3 --out /tmp/agents/gemini-cli",
            Skip(NETWORK),
        ),
        (
            "clibench ab examples/agents/pi.toml --base version=0.63.1 --head version=0.73.1 --trials 10",
            Skip(NETWORK),
        ),
        (
            "clibench board examples/agents/pi.toml examples/agents/claude-code.toml examples/agents/codex.toml --phases prepare,install,measure,session --trials 3",
            Skip(NETWORK),
        ),
        (
            "clibench board --board examples/agents/board.toml",
            Skip(BOARD_FILE),
        ),
        (
            "clibench board --board examples/agents/board.toml --budget 30m",
            Skip(
                "needs the npm registry (network); \
                 board::a_budget_stops_between_rounds_after_at_least_three_and_says_how_long_first \
                 runs a budget on two copies of the demo",
            ),
        ),
        (
            "clibench board --board examples/agents/board.toml --model-script my-turns.toml",
            Skip(
                "names the reader's own script and needs the npm registry; \
                 board::a_board_file_shares_one_model_script_whose_turns_every_target_plays \
                 runs a shared script on two copies of the demo",
            ),
        ),
        (
            "clibench ab spec.toml --base source.commit=BASE_SHA --head source.commit=HEAD_SHA --fail-on-regression",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench run spec.toml --set measure.env.DEBUG=1 --set measure.ready_timeout=90s",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench run",
            Skip(
                "the whole demo pipeline takes minutes; \
                 pipeline_run::demo_run_fills_every_metric_and_leaves_nothing runs it",
            ),
        ),
        (
            "clibench run examples/agents/pi.toml --trials 5",
            Skip(NETWORK),
        ),
        (
            "clibench run examples/agents/pi.toml --trials 3",
            Skip(NETWORK),
        ),
        (
            "clibench run spec.toml --commit $SHA --out base/",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench run spec.toml --commit $HEAD --out head/",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench compare base/result.json head/result.json --fail-on-regression",
            // The shipped results differ by a regression: exit 1 is what the flag is for.
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json --fail-on-regression",
                code: 1,
            },
        ),
        (
            "clibench phase measure --spec spec.toml --out out/ --trial 2",
            Skip(PLACEHOLDER),
        ),
        (
            "clibench startup --runs 10 --warmup 1 -- python3",
            Run {
                as_run: "clibench startup --runs 1 --warmup 1 -- python3",
                code: 0,
            },
        ),
        (
            "clibench startup --ready 'pattern:>>> $' --export-json startup.json -- python3",
            Run {
                as_run: "clibench startup --runs 1 --warmup 0 --ready 'pattern:>>> $' \
                         --export-json startup.json -- python3 && test -s startup.json",
                code: 0,
            },
        ),
        (
            "clibench startup --runs 10 -- python3",
            Run {
                as_run: "clibench startup --runs 1 --warmup 0 -- python3",
                code: 0,
            },
        ),
        (
            "clibench mem -- python3 -m http.server",
            // Port 0: a fixed port may be taken on a shared machine.
            Run {
                as_run: "clibench mem --settle 1s -- python3 -m http.server 0",
                code: 0,
            },
        ),
        (
            "clibench mem --pid 4242 --json",
            Run {
                as_run: "sleep 30 & clibench mem --pid $! --json; status=$?; kill $!; exit $status",
                code: 0,
            },
        ),
        (
            "clibench mem --user benchmark1",
            Run {
                as_run: "clibench mem --user $(id -u)",
                code: 0,
            },
        ),
        (
            "clibench mem --tty -- node",
            Run {
                as_run: "clibench mem --tty --settle 1s -- node",
                code: 0,
            },
        ),
        (
            "clibench staircase --tty --count 5 --settle 2s -- node",
            Run {
                as_run: "clibench staircase --tty --count 2 --settle 1s -- node",
                code: 0,
            },
        ),
        (
            "clibench staircase --tty --count 5 -- node",
            Run {
                as_run: "clibench staircase --tty --count 2 --settle 1s -- node",
                code: 0,
            },
        ),
        (
            "clibench kernel --runs 5",
            Run {
                as_run: "clibench kernel --runs 1",
                code: 0,
            },
        ),
        (
            "clibench kernel",
            Run {
                as_run: "clibench kernel --runs 1",
                code: 0,
            },
        ),
        (
            "clibench kernel -- python3 \"$PWD/crates/bench-term/kernel/reference_kernel.py\"",
            Run {
                as_run: "clibench kernel --runs 1 -- python3 \
                         \"$PWD/crates/bench-term/kernel/reference_kernel.py\"",
                code: 0,
            },
        ),
        (
            "clibench model serve --script examples/model/list-then-hello.toml --journal journal.jsonl",
            // It serves until stopped: --stop-after ends it (the signal is tested in
            // model::model_serve_prints_its_url_and_journal_and_stops_on_sigint).
            Run {
                as_run: "clibench model serve --script examples/model/list-then-hello.toml \
                         --journal journal.jsonl --stop-after 1s > url.txt \
                         && grep -q '^http://127.0.0.1:' url.txt \
                         && grep -q '\"event\":\"start\"' journal.jsonl",
                code: 0,
            },
        ),
        (
            "clibench model serve",
            Run {
                as_run: "clibench model serve --stop-after 1s",
                code: 0,
            },
        ),
        (
            "clibench report out/result.json",
            Run {
                as_run: "clibench report examples/results/base.json",
                code: 0,
            },
        ),
        (
            "clibench report out/result.json --format csv > result.csv",
            Run {
                as_run: "clibench report examples/results/base.json --format csv > result.csv \
                         && test -s result.csv",
                code: 0,
            },
        ),
        (
            "clibench compare base/result.json candidate/result.json",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json",
                code: 0,
            },
        ),
        (
            "clibench compare base.json candidate.json --noise 0.1 --export-markdown comment.md --fail-on-regression",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json --noise 0.1 \
                         --export-markdown comment.md --fail-on-regression; \
                         status=$?; test -s comment.md && exit $status",
                code: 1,
            },
        ),
        (
            "clibench compare examples/results/base.json examples/results/candidate.json",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json",
                code: 0,
            },
        ),
        (
            "clibench compare base.json candidate.json",
            Run {
                as_run: "clibench compare examples/results/base.json \
                         examples/results/candidate.json",
                code: 0,
            },
        ),
    ]
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `clibench` commands of README's ```sh blocks, without trailing comments;
/// `cargo run --release -- ARGS` is `clibench ARGS`.
fn readme_commands(readme: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    // A command continued with a trailing backslash is one command.
    let mut joined = Vec::new();
    let mut pending = String::new();
    for line in readme.lines() {
        let trimmed = line.trim();
        match trimmed.strip_suffix('\\') {
            Some(start) if !trimmed.starts_with("```") => {
                pending.push_str(start.trim_end());
                pending.push(' ');
            }
            _ => {
                pending.push_str(trimmed);
                joined.push(std::mem::take(&mut pending));
            }
        }
    }
    for trimmed in joined.iter().map(String::as_str) {
        if trimmed.starts_with("```") {
            in_sh = trimmed == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let command = trimmed
            .strip_prefix("cargo run --release -- ")
            .map(|rest| format!("clibench {rest}"))
            .unwrap_or_else(|| trimmed.to_owned());
        if command == "clibench" || command.starts_with("clibench ") {
            commands.push(strip_comment(&command).to_owned());
        }
    }
    commands
}

/// A command without its `  # comment` (a `#` after two spaces; `$#` and the like in
/// quotes never follow two spaces in these commands).
fn strip_comment(command: &str) -> &str {
    command.split("  #").next().unwrap_or(command).trim_end()
}

/// The example commands of `clibench --help`: the lines of its `Examples:` block.
fn help_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Examples:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim_start)
        .filter(|line| *line == "clibench" || line.starts_with("clibench "))
        // Each example is followed by its description after a run of spaces.
        .map(|line| {
            line.split("   ")
                .next()
                .unwrap_or(line)
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// A scratch folder in which `examples` and `crates` lead to the repository's, so
/// the documented relative paths work and written files land in the scratch.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["examples", "crates"] {
        std::os::unix::fs::symlink(repository().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

fn run_case(documented: &str, as_run: &str, code: i32, cwd: &Path, env: &[(&str, &str)]) {
    let binary = env!("CARGO_BIN_EXE_clibench");
    // Every `clibench` word that starts a command is the built binary.
    let script = format!("clibench() {{ \"{binary}\" \"$@\"; }}\n{as_run}");
    let mut command = Command::new("sh");
    command.args(["-c", &script]).current_dir(cwd);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = run(&mut command);
    assert_eq!(
        out.code,
        Some(code),
        "`{documented}` (run as `{as_run}`)\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
}

/// Runs the commands that name a team's PostgreSQL store, each on a new database of one
/// throwaway server (a skip where none is installed, which fails on CI).
fn run_on_postgres(cases: &[(&str, Case)], cwd: &Path) {
    use bench_cli::history::throwaway::{Throwaway, installed};
    let on_postgres: Vec<(&str, &str)> = cases
        .iter()
        .filter_map(|(documented, case)| match case {
            OnPostgres(as_run) => Some((*documented, *as_run)),
            _ => None,
        })
        .collect();
    if !installed() {
        assert!(
            std::env::var("CI").map_or(true, |ci| ci != "true"),
            "CI installs PostgreSQL, so the store's documented commands must run there"
        );
        eprintln!("SKIPPED: the documented PostgreSQL commands (apt-get install postgresql)");
        return;
    }
    let server = Throwaway::start().unwrap();
    for (documented, as_run) in on_postgres {
        let url = server.create_database().unwrap();
        run_case(documented, as_run, 0, cwd, &[("PG", &url)]);
    }
}

/// README.md and every page of docs/, the places a reader copies commands from.
fn documented_pages() -> Vec<String> {
    let mut pages = vec![repository().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
        .iter()
        .map(|page| std::fs::read_to_string(page).unwrap())
        .collect()
}

#[test]
fn every_documented_command_runs_or_says_why_not() {
    let help = run(clibench().arg("--help"));
    assert_eq!(help.code, Some(0));
    let mut documented: Vec<String> = documented_pages()
        .iter()
        .flat_map(|page| readme_commands(page))
        .collect();
    documented.extend(help_commands(&help.stdout));
    documented.sort();
    documented.dedup();
    let cases = cases();
    let unclassified: Vec<&String> = documented
        .iter()
        .filter(|command| !cases.iter().any(|(known, _)| known == command))
        .collect();
    assert!(
        unclassified.is_empty(),
        "documented commands this test neither runs nor skips: {unclassified:#?}"
    );
    let stale: Vec<&str> = cases
        .iter()
        .map(|(known, _)| *known)
        .filter(|known| !documented.iter().any(|command| command == known))
        .collect();
    assert!(
        stale.is_empty(),
        "commands in this test that are documented nowhere: {stale:#?}"
    );

    let dir = scratch();
    let mut to_run: Vec<(&str, &str, i32)> = Vec::new();
    for (documented, case) in &cases {
        match case {
            Run { as_run, code } => {
                if !to_run.iter().any(|(_, known, _)| known == as_run) {
                    to_run.push((documented, as_run, *code));
                }
            }
            Skip(reason) => {
                assert!(
                    !reason.is_empty(),
                    "`{documented}` is skipped without a reason"
                );
            }
            OnPostgres(_) => {}
        }
    }
    run_on_postgres(&cases, dir.path());
    // A few at a time: most of each command is waiting (settle times, quit graces),
    // and the suite stays fast without crowding a small machine.
    let queue = std::sync::Mutex::new(to_run.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().next();
                    let Some((documented, as_run, code)) = next else {
                        break;
                    };
                    run_case(documented, as_run, code, dir.path(), &[]);
                }
            });
        }
    });
}

/// Commands run at once.
const WORKERS: usize = 3;

#[test]
fn readme_commands_are_found_with_comments_stripped() {
    let readme = "text\n```sh\n# a comment\nclibench mem --pid 1   # a process\n\
                  cargo run --release -- run\nclibench ab --trials 3 \\\n    --seed 1\n```\n\
                  ```text\nclibench not-a-command\n```\n";
    assert_eq!(
        readme_commands(readme),
        [
            "clibench mem --pid 1",
            "clibench run",
            "clibench ab --trials 3 --seed 1"
        ]
    );
    let help = "clibench: does things\n\nExamples:\n  clibench run                      the demo\n  \
                clibench mem -- python3 -m http.server   memory\n\nclibench is free\n";
    assert_eq!(
        help_commands(help),
        ["clibench run", "clibench mem -- python3 -m http.server"]
    );
}

/// The subcommands `clibench --help` lists (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        // A command's name starts at column 2; its description's continuation lines
        // are indented further.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn help_at(width: u16, args: &[&str]) -> String {
    let out = run(clibench().args(args).env("COLUMNS", width.to_string()));
    assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
    out.stdout
}

/// The text after the options: the examples and notes, written to fit 80 columns.
fn after_options(help: &str) -> &str {
    help.find("\nExamples:").map_or("", |start| &help[start..])
}

#[test]
fn help_fits_80_columns_and_examples_are_never_rewrapped() {
    let top = help_at(200, &["--help"]);
    let commands = subcommands(&top);
    assert!(commands.len() >= 10, "{commands:?} from\n{top}");
    let mut all: Vec<Vec<&str>> = vec![vec!["--help"]];
    all.extend(
        commands
            .iter()
            .map(|command| vec![command.as_str(), "--help"]),
    );
    all.extend(commands.iter().map(|command| vec![command.as_str(), "-h"]));
    for args in all {
        let narrow = help_at(80, &args);
        let long: Vec<&str> = narrow
            .lines()
            .filter(|line| line.chars().count() > 80)
            .collect();
        assert!(
            long.is_empty(),
            "`clibench {}` at 80 columns: {long:#?}",
            args.join(" ")
        );
        // Wrapped at 80 or not at all, the examples and notes read the same: their
        // lines were written to fit, so clap never breaks one mid-phrase.
        let wide = help_at(200, &args);
        assert_eq!(
            after_options(&narrow),
            after_options(&wide),
            "`clibench {}` rewraps its examples at 80 columns",
            args.join(" ")
        );
    }
}

/// The `cargo install` lines of README's ```sh blocks.
fn install_lines(readme: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh = trimmed == "```sh";
        } else if in_sh && trimmed.starts_with("cargo install ") && trimmed.contains("--path") {
            lines.push(trimmed);
        }
    }
    lines
}

#[test]
fn the_readme_install_line_installs_a_working_clibench() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let lines = install_lines(&readme);
    assert_eq!(
        lines.len(),
        1,
        "README should say once how to install: {lines:?}"
    );
    let words: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(&words[..2], ["cargo", "install"], "{}", lines[0]);
    // The documented line as written, with a scratch root instead of ~/.cargo, a debug
    // build (the documented release build takes long) and no network. Its own target
    // folder, kept between runs, so that the binary the other tests run is never
    // rebuilt under them and the second run is quick.
    let root = tempfile::tempdir().unwrap();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_clibench"));
    let target = binary
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in target/<profile>/")
        .join("readme-install");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = run(Command::new(cargo)
        .args(&words[1..])
        .arg("--root")
        .arg(root.path())
        .args(["--debug", "--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(repository()));
    assert_eq!(out.code, Some(0), "`{}` failed:\n{}", lines[0], out.stderr);
    let installed = run(Command::new(root.path().join("bin/clibench")).arg("--version"));
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);
    assert!(
        installed.stdout.starts_with("clibench "),
        "{}",
        installed.stdout
    );
}

/// The `clibench phase` and `clibench cleanup` lines of docs/spec.md's first ```sh block.
fn spec_doc_sequence(doc: &str) -> Vec<&str> {
    doc.lines()
        .skip_while(|line| line.trim() != "```sh")
        .skip(1)
        .take_while(|line| !line.trim().starts_with("```"))
        .map(str::trim)
        .filter(|line| line.starts_with("clibench phase ") || line.starts_with("clibench cleanup "))
        .collect()
}

#[test]
fn the_phase_sequence_of_docs_spec_md_runs_as_written() {
    let doc = std::fs::read_to_string(repository().join("docs/spec.md")).unwrap();
    let sequence = spec_doc_sequence(&doc);
    assert!(
        sequence.len() >= 3
            && sequence[0].starts_with("clibench phase prepare ")
            && sequence[1].starts_with("clibench phase install "),
        "{sequence:#?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let written = run(clibench()
        .args(["run", "--write-demo", "demo"])
        .current_dir(dir.path()));
    assert_eq!(written.code, Some(0), "{}", written.stderr);
    // A commit other than the spec's, as a pull request's head is: the later phases,
    // given no --commit, must measure what prepare built.
    let source = dir.path().join("demo/source");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&source)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["commit", "--quiet", "--allow-empty", "-m", "head"]);
    let head = git(&["rev-parse", "HEAD"]);
    for line in sequence {
        let as_run = line
            .replace("examples/prime-agent.toml", "demo/demo.toml")
            .replace(" URL ", " demo/source ")
            .replace(" SHA", &format!(" {head}"))
            .replace(" [--keep-users]", "");
        run_case(line, &as_run, 0, dir.path(), &[]);
        if line.starts_with("clibench phase measure ") {
            let result: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.path().join("out/result.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(result["request"]["sha"], head.as_str(), "{result}");
            assert!(
                result["side"]["metrics"]["cold"][0]["value"].is_number(),
                "{result}"
            );
        }
    }
}

#[test]
fn the_demo_spec_docs_spec_md_shows_runs_as_the_demo() {
    let dir = scratch();
    let out = run(clibench()
        .args([
            "run",
            "examples/demo-agent/demo.toml",
            "--phases",
            "prepare",
            "--out",
            "d",
        ])
        .current_dir(dir.path()));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("d/result.json")).unwrap())
            .unwrap();
    assert!(
        result["side"]["metrics"]["bundle"][0]["value"].is_number(),
        "{result}"
    );
    // A copy with its placeholders but edited is not the demo: the error says what they are.
    let copy = dir.path().join("copy.toml");
    let text = std::fs::read_to_string(repository().join("examples/demo-agent/demo.toml")).unwrap();
    std::fs::write(
        &copy,
        text.replace("ready_timeout = \"20s\"", "ready_timeout = \"30s\""),
    )
    .unwrap();
    let out = run(clibench().arg("run").arg(&copy).current_dir(dir.path()));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is the built-in demo's placeholder \"@DEMO_COMMIT@\""),
        "{}",
        out.stderr
    );
}

/// The ```text block right after the ```sh block holding `command`, up to its `...`.
fn sample_after<'a>(readme: &'a str, command: &str) -> Vec<&'a str> {
    let at = readme.find(command).expect("README shows the command");
    readme[at..]
        .lines()
        .skip_while(|line| *line != "```text")
        .skip(1)
        .take_while(|line| *line != "..." && *line != "```")
        .collect()
}

#[test]
fn the_readme_sample_of_compare_is_what_compare_prints() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let sample = sample_after(
        &readme,
        "cargo run --release -- compare examples/results/base.json examples/results/candidate.json",
    );
    assert!(sample.len() > 4, "{sample:#?}");
    let dir = scratch();
    // The sample is the 80-column form, as a newcomer's terminal shows it.
    let out = run(clibench()
        .env("COLUMNS", "80")
        .args([
            "compare",
            "examples/results/base.json",
            "examples/results/candidate.json",
        ])
        .current_dir(dir.path()));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let printed: Vec<&str> = out.stderr.lines().take(sample.len()).collect();
    assert_eq!(
        printed, sample,
        "README's sample is not what compare prints now"
    );
}

#[test]
fn the_readme_names_every_agent_spec_in_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lead = "has specs for the agents people run (";
    let start = readme.find(lead).expect("the README lists the agent specs") + lead.len();
    let listed: Vec<String> = readme[start..start + readme[start..].find(')').unwrap()]
        .split(',')
        .map(|name| name.trim().to_owned())
        .collect();
    let mut specs: Vec<String> = std::fs::read_dir(root.join("examples/agents"))
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".toml").map(str::to_owned)
        })
        // The board file that names the specs is not one.
        .filter(|name| name != "board")
        .collect();
    specs.sort();
    assert_eq!(listed, specs);
}
