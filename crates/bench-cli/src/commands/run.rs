//! `clibench run`: the whole pipeline, each phase as its own `clibench phase` process (a
//! phase that hangs or crashes cannot take the run down), with a progress display on stderr,
//! then the Markdown report on stdout and in `OUT/report.md`. Ctrl-C leaves `OUT/result.json`
//! as the phases last saved it (see [`super::drive`]).

use super::drive::{drive, spec_source};
use crate::demo;
use crate::exit::settings_error;
use crate::pipeline::out::history_add;
use crate::pipeline::{Plan, PlanSettings, Runner, Shard};
use crate::settings::{parse_phases, scenario_tool, with_scenario};
use crate::spec::{Override, Scenario};
use crate::text::summary;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `clibench run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The target's spec (TOML). Without it, the built-in demo agent is benchmarked.
    spec: Option<PathBuf>,
    /// Output folder: result.json, report.md, logs, transcripts.
    /// [default: clibench-out/<target>-<unix time>]
    #[arg(long, value_name = "DIR")]
    // The angle brackets are for --help, which shows this text as written.
    #[allow(rustdoc::invalid_html_tags)]
    out: Option<PathBuf>,
    /// Trials of the measure, runtime and ui phases (at most 101: trials are
    /// numbered 0 to 100 in the result file).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = super::trial_count)]
    trials: u32,
    /// Installations (each into a fresh home; as root, a fresh user; at most 101). The
    /// trials of the later phases take them in turn: trial k runs in install k mod N's home.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::trial_count)]
    installs: u32,
    /// Phases to run, comma-separated, in pipeline order
    /// [default: those of prepare, install, measure, runtime, ui, session and staircase
    /// that the spec describes].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    phases: Option<Vec<String>>,
    /// Keep the trial users and homes after the run (for inspection).
    #[arg(long)]
    keep_users: bool,
    /// Fetch the source from this repository instead of the spec's `source.repository`.
    #[arg(long, value_name = "URL|PATH", requires = "spec")]
    repository: Option<String>,
    /// Build this commit (a full 40-character sha) instead of the spec's `source.commit`.
    #[arg(long, value_name = "SHA", requires = "spec")]
    commit: Option<String>,
    /// Override a spec key: a dotted path and a TOML value or text, e.g.
    /// `version=0.63.1`, `source.commit=SHA`, `measure.env.FOO=1`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<Override>,
    /// A workload shipped with clibench, for a spec with [model]: `long-session` (100
    /// turns, a tool call in each, a checkpoint every 10), `big-output` (tool results of
    /// 100 KB, 1 MB and one 100 KB line), `paste` (bracketed pastes of 10, 100 and 500 KB)
    /// or `idle` (30 s idle after three turns); see docs/spec.md. Its settings are
    /// overrides put before --set's.
    #[arg(long, value_name = "NAME")]
    scenario: Option<Scenario>,
    /// Run only shard K of N: the trials i with i % N == K-1 (prepare and install run on
    /// every shard). Merge the shards' results with `clibench merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Run every trial even when trial 0 of its phase failed (by default the later trials,
    /// and after measure the staircase, are skipped as "same failure as trial 0").
    #[arg(long)]
    keep_going: bool,
    /// Drop the kernel's page cache before each measure trial, so that "cold" is a start
    /// from disk (root only; it affects the whole machine).
    #[arg(long)]
    drop_caches: bool,
    /// Also print the Markdown report on stdout (it always goes to OUT/report.md; it is
    /// printed on stdout by default only when stdout is not a terminal).
    #[arg(long, value_enum, default_value_t = RunFormat::Table)]
    format: RunFormat,
    /// Also add the result to this history store (an SQLite file, created when missing,
    /// or a `postgres://` URL; see `clibench history`).
    #[arg(long, value_name = "PATH|URL", value_parser = crate::settings::store)]
    history: Option<PathBuf>,
    /// After the summary, print the screen each failed session turn stopped on
    /// (`OUT/logs/screen-at-failure-N-session.txt`).
    #[arg(long)]
    show_screen: bool,
    /// Write the built-in demo (source repository and spec) into DIR and exit.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "spec")]
    write_demo: Option<PathBuf>,
}

/// What `clibench run` prints when it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// The summary table on stderr (and the Markdown on stdout when it is not a terminal).
    Table,
    /// The summary table on stderr and the Markdown report on stdout.
    Markdown,
}

/// Runs `clibench run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.write_demo {
        let demo = demo::materialise(dir)?;
        say!(
            "wrote the demo's source to {} (commit {})",
            demo.source.display(),
            demo.sha
        );
        outln!("{}", demo.spec.display());
        return Ok(ExitCode::SUCCESS);
    }
    let format = args.format;
    let show_screen = args.show_screen;
    let spec_arg = args.spec.clone();
    let history = args.history.clone();
    let plan = plan(args)?;
    if let Some(line) = summary::skipped_phases_line(&plan) {
        say!("{line}");
    }
    let out = plan.out.clone();
    let Some(outcome) = drive(
        "run",
        |execution| Ok(Runner::new(plan, execution)),
        &out.join("result.json"),
    )?
    else {
        return Ok(ExitCode::from(130));
    };
    let written = crate::pipeline::write_report(&out, &[])?;
    if let Some(store) = &history {
        let results = [out.join("result.json")];
        super::drive::say_added(history_add::add_after_run(store, &results))?;
    }
    if format == RunFormat::Markdown || !std::io::stdout().is_terminal() {
        out!("{}", written.markdown);
    }
    // The summary leads with what made later steps skip: one cause, told once.
    for line in summary::root_cause_lines(&outcome) {
        say!("{line}");
    }
    say!();
    say_part!(
        "{}",
        bench_core::export::text::report_fit(
            &bench_core::Report::new(&written.result),
            crate::show::stderr_columns()
        )
    );
    if show_screen {
        for (path, screen) in summary::failure_screens(&out) {
            say!();
            say!("{}:", path.display());
            for line in screen.lines() {
                say!("  | {line}");
            }
        }
    }
    let clibench = bench_cli::invoked::invoked_as();
    say!(
        "{}",
        summary::closing(&outcome, &out, &clibench, spec_arg.as_deref())
    );
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILURE)
    })
}

fn plan(args: Args) -> anyhow::Result<Plan> {
    let phases = args
        .phases
        .as_deref()
        .map(parse_phases)
        .transpose()
        .map_err(settings_error)?;
    let spec = spec_source(args.spec.as_deref())?;
    let out = args.out.unwrap_or_else(|| spec.default_out());
    let tool = args
        .scenario
        .and_then(|_| scenario_tool(&spec, &args.overrides));
    if let Some(scenario) = args.scenario
        && let Some(calls) = scenario.own_calls(tool.as_deref())
    {
        say!(
            "clibench run: --scenario {scenario} asks the agent to run {calls}; an agent that \
             asks before a command stops there unless its approvals let it work \
             (docs/writing-a-spec.md, \"Letting the agent work\"; [session] scenario_tool \
             names a command it runs without asking)"
        );
    }
    let settings = PlanSettings {
        trials: args.trials,
        extra_measure_trials: 0,
        installs: args.installs,
        phases,
        keep_users: args.keep_users,
        repository: args.repository,
        commit: args.commit,
        overrides: with_scenario(args.scenario, tool.as_deref(), args.overrides),
        shard: args.shard,
        keep_going: args.keep_going,
        drop_caches: args.drop_caches,
    };
    Ok(Plan::new(spec, &out, settings)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Args {
        crate::commands::test_args::parse("run", extra)
    }

    #[test]
    fn an_unknown_phase_is_an_input_error_naming_the_choices() {
        let error = plan(args(&["--phases", "measure,mesure"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert_eq!(
            error.to_string(),
            "--phases: unknown phase 'mesure'; expected some of prepare,install,measure,runtime,ui,session,staircase"
        );
    }

    #[test]
    fn zero_trials_is_an_input_error() {
        let error = plan(args(&["--trials", "0"])).unwrap_err();
        let error = error.downcast::<crate::pipeline::Error>().unwrap();
        assert!(error.is_input());
    }

    #[test]
    fn a_bad_override_fails_before_anything_runs_naming_the_key() {
        let error = plan(args(&["--set", "measure.ready_timeout=soon"])).unwrap_err();
        let error = error.downcast::<crate::pipeline::Error>().unwrap();
        assert!(error.is_input());
        assert!(
            error.to_string().contains("key 'measure.ready_timeout'"),
            "{error}"
        );
    }

    #[test]
    fn overrides_reach_the_plan_in_order() {
        let plan = plan(args(&["--set", "version=2", "--set", "measure.env.A=1"])).unwrap();
        let sets: Vec<String> = plan
            .settings
            .overrides
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(sets, ["version=2", "measure.env.A=1"]);
    }

    #[test]
    fn a_missing_spec_is_an_input_error() {
        let error = plan(args(&["/nonexistent/spec.toml"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert!(error.to_string().contains("/nonexistent/spec.toml"));
    }
}
