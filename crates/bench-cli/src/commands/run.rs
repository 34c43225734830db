//! `clibench run`: the whole pipeline, each phase as its own `clibench phase` process (as the
//! seed's harness runs each phase as its own process), with a progress display on stderr,
//! then the Markdown report on stdout and in `OUT/report.md`.
//!
//! Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the running phase and everything under it, run the
//! pipeline's cleanup (users, homes, servers recorded in the state file), and leave
//! `OUT/result.json` as the phases last saved it (they save atomically).

use crate::demo;
use crate::exit::input_error;
use crate::pipeline::exec::STOP_GRACE;
use anyhow::{Context, bail};
use bench_core::Phase;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Flags of `clibench run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The target's spec (TOML). Without it, the built-in demo agent is benchmarked.
    spec: Option<PathBuf>,
    /// Output folder: result.json, report.md, logs, transcripts.
    /// [default: clibench-out/<target>-<unix time>]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Trials of the measure, runtime and ui phases (at most 101: trials are
    /// numbered 0 to 100 in the result file).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = super::trial_count)]
    trials: u32,
    /// Installations (each into a fresh home; as root, a fresh user; at most 101).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::trial_count)]
    installs: u32,
    /// Phases to run, comma-separated, in pipeline order
    /// [default: prepare,install,measure,runtime,ui,staircase].
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
    /// Write the built-in demo (source repository and spec) into DIR and exit.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "spec")]
    write_demo: Option<PathBuf>,
}

/// What `clibench run` does, resolved from the flags.
#[derive(Debug)]
struct Settings {
    spec: SpecSource,
    out: PathBuf,
    trials: u32,
    installs: u32,
    phases: Vec<Phase>,
    /// Whether `--phases` was given: then every phase named must be described by the spec;
    /// otherwise the phases the spec does not describe are skipped.
    phases_asked: bool,
    keep_users: bool,
    repository: Option<String>,
    commit: Option<String>,
}

#[derive(Debug)]
enum SpecSource {
    File(PathBuf),
    Demo,
}

/// One `clibench phase` invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step {
    phase: Phase,
    trial: u32,
}

impl Step {
    fn label(self) -> String {
        format!("{} trial {}", self.phase, self.trial)
    }
}

/// How a step ended.
#[derive(Debug)]
enum Outcome {
    Finished(ExitStatus),
    Interrupted,
}

/// How often the progress display and the interrupt flag are looked at.
const POLL: Duration = Duration::from_millis(50);

/// Runs `clibench run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.write_demo {
        let demo = demo::materialise(dir)?;
        eprintln!(
            "wrote the demo's source to {} (commit {})",
            demo.source.display(),
            demo.sha
        );
        println!("{}", demo.spec.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut settings = settings(args)?;
    if let SpecSource::File(path) = &settings.spec {
        // A spec that does not parse fails here, with its line and column, before any
        // phase runs or any user is made.
        let mut spec = crate::spec::load(path).map_err(|error| input_error(error.to_string()))?;
        super::phase::override_source(
            &mut spec,
            path,
            settings.repository.as_deref(),
            settings.commit.as_deref(),
        )?;
        let (phases, skipped) =
            described_phases(&spec, path, &settings.phases, settings.phases_asked)?;
        if !skipped.is_empty() {
            eprintln!(
                "clibench run: {} describes no {}; skipping {}",
                path.display(),
                skipped
                    .iter()
                    .map(|phase| format!("[{phase}]"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if skipped.len() == 1 {
                    "that phase"
                } else {
                    "those phases"
                }
            );
        }
        settings.phases = phases;
    }
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&interrupted))
            .context("installing the Ctrl-C handler")?;
    }
    // Orphans of a phase (daemons the target double-forked, a phase killed mid-way) re-parent
    // to us, so stopping our own tree at the end reaches them even without a per-user view.
    bench_proc::become_subreaper().context("becoming a child subreaper")?;
    create_out(&settings.out)?;
    let spec = match &settings.spec {
        SpecSource::File(path) => path.clone(),
        SpecSource::Demo => {
            let dir = settings.out.join("demo");
            if dir.exists() {
                // Our own earlier copy: the same files give the same commit, so start afresh.
                fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing the previous demo in {}", dir.display()))?;
            }
            demo::materialise(&dir)?.spec
        }
    };
    let outcome = run_steps(&settings, &spec, &interrupted);
    let cleanup = cleanup(&settings);
    let outcome = outcome?;
    cleanup?;
    if outcome.interrupted {
        eprintln!(
            "clibench run: interrupted; everything was stopped and cleaned up; {} holds the results so far",
            settings.out.join("result.json").display()
        );
        return Ok(ExitCode::from(130));
    }
    let report = write_report(&settings.out)?;
    print!("{report}");
    eprintln!(
        "clibench run: {} in {}; wrote {} and {}",
        if outcome.failed.is_empty() {
            "done".to_owned()
        } else {
            format!("{} phase run(s) failed", outcome.failed.len())
        },
        bench_core::units::format_seconds(outcome.elapsed.as_secs_f64()),
        settings.out.join("result.json").display(),
        settings.out.join("report.md").display(),
    );
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILURE)
    })
}

fn settings(args: Args) -> anyhow::Result<Settings> {
    if args.trials == 0 {
        return Err(input_error("--trials must be at least 1"));
    }
    if args.installs == 0 {
        return Err(input_error("--installs must be at least 1"));
    }
    let phases_asked = args.phases.is_some();
    let phases = match args.phases {
        None => Phase::ALL.to_vec(),
        Some(names) => {
            let mut phases = Vec::new();
            for name in names {
                let phase: Phase = name.trim().parse().map_err(|_| {
                    input_error(format!(
                        "--phases: unknown phase '{name}'; expected some of {}",
                        Phase::ALL.map(Phase::name).join(",")
                    ))
                })?;
                if !phases.contains(&phase) {
                    phases.push(phase);
                }
            }
            phases.sort();
            phases
        }
    };
    let spec = match args.spec {
        Some(path) => {
            if !path.is_file() {
                return Err(input_error(format!(
                    "spec {} does not exist or is not a file",
                    path.display()
                )));
            }
            SpecSource::File(
                path.canonicalize()
                    .with_context(|| format!("resolving {}", path.display()))?,
            )
        }
        None => SpecSource::Demo,
    };
    let out = match args.out {
        Some(out) => out,
        None => {
            let name = match &spec {
                SpecSource::Demo => "demo".to_owned(),
                SpecSource::File(path) => path
                    .file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "target".to_owned()),
            };
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|elapsed| elapsed.as_secs())
                .unwrap_or_default();
            PathBuf::from("clibench-out").join(format!("{name}-{now}"))
        }
    };
    Ok(Settings {
        spec,
        out,
        trials: args.trials,
        installs: args.installs,
        phases,
        phases_asked,
        keep_users: args.keep_users,
        repository: args.repository,
        commit: args.commit,
    })
}

/// Whether the spec has the section `phase` needs (prepare and install need none beyond
/// the required `[install]`).
fn describes(spec: &crate::spec::Spec, phase: Phase) -> bool {
    match phase {
        Phase::Prepare | Phase::Install => true,
        Phase::Measure => spec.measure.is_some(),
        Phase::Runtime => spec.runtime.is_some(),
        Phase::Ui => spec.ui.is_some(),
        Phase::Staircase => spec.staircase.is_some(),
    }
}

/// The phases to run and the ones skipped. By default every phase the spec describes runs
/// (an install-only spec has no kernel to measure); a phase asked for with `--phases` that
/// the spec does not describe is a usage error, reported before anything runs.
fn described_phases(
    spec: &crate::spec::Spec,
    path: &Path,
    phases: &[Phase],
    asked: bool,
) -> anyhow::Result<(Vec<Phase>, Vec<Phase>)> {
    let (run, skipped): (Vec<Phase>, Vec<Phase>) =
        phases.iter().partition(|&&phase| describes(spec, phase));
    if asked && let Some(missing) = skipped.first() {
        return Err(input_error(format!(
            "--phases: {missing} needs a [{missing}] section, which {} does not have",
            path.display()
        )));
    }
    Ok((run, skipped))
}

/// The `clibench phase` runs, in order: prepare once, each install, then each trial of the
/// measure, runtime and ui phases, and the staircase once.
fn steps(settings: &Settings) -> Vec<Step> {
    let mut steps = Vec::new();
    for &phase in &settings.phases {
        let trials = match phase {
            Phase::Prepare | Phase::Staircase => 1,
            Phase::Install => settings.installs,
            Phase::Measure | Phase::Runtime | Phase::Ui => settings.trials,
        };
        steps.extend((0..trials).map(|trial| Step { phase, trial }));
    }
    steps
}

fn create_out(out: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(out.join("logs"))
        .with_context(|| format!("creating the output folder {}", out.display()))?;
    // Trial users read the fetched source and write nothing here, but they must be able to
    // reach what lies below (the installer, the artifacts), so the folders are not private.
    for folder in [out.to_path_buf(), out.join("logs")] {
        let metadata = fs::metadata(&folder)?;
        if metadata.uid() == rustix::process::geteuid().as_raw() {
            fs::set_permissions(&folder, fs::Permissions::from_mode(0o755))
                .with_context(|| format!("making {} readable", folder.display()))?;
        }
    }
    Ok(())
}

#[derive(Debug)]
struct RunOutcome {
    failed: Vec<Step>,
    interrupted: bool,
    elapsed: Duration,
}

fn run_steps(
    settings: &Settings,
    spec: &Path,
    interrupted: &AtomicBool,
) -> anyhow::Result<RunOutcome> {
    let steps = steps(settings);
    let progress = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    progress.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .context("progress template")?
            .tick_chars("-\\|/ "),
    );
    let started = Instant::now();
    let mut outcome = RunOutcome {
        failed: Vec::new(),
        interrupted: false,
        elapsed: Duration::ZERO,
    };
    for (index, &step) in steps.iter().enumerate() {
        if interrupted.load(Ordering::SeqCst) {
            outcome.interrupted = true;
            break;
        }
        let log = settings
            .out
            .join("logs")
            .join(format!("phase-{}-{}.log", step.phase, step.trial));
        let mut child = spawn_phase(settings, spec, step, &log)?;
        let step_started = Instant::now();
        let result = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Outcome::Finished(status),
                Ok(None) => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("waiting for {}", step.label()));
                }
            }
            if interrupted.load(Ordering::SeqCst) {
                break Outcome::Interrupted;
            }
            progress.set_message(format!(
                "[{}/{}] {}  {:.1} s  (total {:.1} s)",
                index + 1,
                steps.len(),
                step.label(),
                step_started.elapsed().as_secs_f64(),
                started.elapsed().as_secs_f64()
            ));
            progress.tick();
            std::thread::sleep(POLL);
        };
        let seconds = step_started.elapsed().as_secs_f64();
        match result {
            Outcome::Interrupted => {
                progress.finish_and_clear();
                stop_everything(&mut child);
                outcome.interrupted = true;
                break;
            }
            Outcome::Finished(status) if status.success() => {
                say(&progress, format!("{}: ok ({seconds:.1} s)", step.label()));
            }
            Outcome::Finished(status) => {
                say(
                    &progress,
                    format!(
                        "{}: failed ({status}, {seconds:.1} s): {}",
                        step.label(),
                        last_error_line(&log)
                    ),
                );
                outcome.failed.push(step);
                if step.phase == Phase::Prepare {
                    say(&progress, "prepare failed; nothing else can run".to_owned());
                    break;
                }
            }
        }
    }
    progress.finish_and_clear();
    outcome.elapsed = started.elapsed();
    Ok(outcome)
}

fn spawn_phase(settings: &Settings, spec: &Path, step: Step, log: &Path) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("finding the clibench executable")?;
    let output = fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let mut command = Command::new(exe);
    command
        .arg("phase")
        .arg(step.phase.name())
        .arg("--spec")
        .arg(spec)
        .arg("--out")
        .arg(&settings.out)
        .arg("--trial")
        .arg(step.trial.to_string());
    if settings.keep_users {
        command.arg("--keep-users");
    }
    if let Some(repository) = &settings.repository {
        command.arg("--repository").arg(repository);
    }
    if let Some(commit) = &settings.commit {
        command.arg("--commit").arg(commit);
    }
    command
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output)
        // Its own process group: a Ctrl-C at the terminal reaches only us, and we stop the
        // phase in order (SIGTERM, grace, SIGKILL) rather than letting it die half-way.
        .process_group(0);
    command
        .spawn()
        .with_context(|| format!("starting clibench phase for {}", step.label()))
}

/// Stops the running phase and everything below us (re-parented daemons included).
fn stop_everything(child: &mut Child) {
    let own = std::process::id();
    if let Err(error) = bench_proc::stop(&bench_proc::Selector::Tree(own), STOP_GRACE) {
        eprintln!("clibench run: stopping the phase: {error}");
    }
    // `stop` reaps what it can; make sure the phase itself is not left a zombie. No
    // kill() here: once reaped, its pid may already belong to another process.
    let _ = child.wait();
}

fn cleanup(settings: &Settings) -> anyhow::Result<()> {
    // Whatever is still below us (a daemon that outlived its phase) is stopped first, so that
    // users can be removed.
    if let Err(error) =
        bench_proc::stop(&bench_proc::Selector::Tree(std::process::id()), STOP_GRACE)
    {
        eprintln!("clibench run: stopping leftover processes: {error}");
    }
    // The state file says whether the run asked to keep its users.
    let report =
        crate::pipeline::cleanup(&settings.out).context("cleaning up users, homes and servers")?;
    if !report.removed_users.is_empty() || !report.kept_users.is_empty() {
        eprintln!(
            "clibench run: removed {} user(s){}",
            report.removed_users.len(),
            if report.kept_users.is_empty() {
                String::new()
            } else {
                format!("; kept {} (--keep-users)", report.kept_users.join(", "))
            }
        );
    }
    Ok(())
}

fn say(progress: &ProgressBar, line: String) {
    if progress.is_hidden() {
        eprintln!("{line}");
    } else {
        progress.println(line);
    }
}

/// The last non-empty line of a phase's log, which holds its error.
fn last_error_line(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let line = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("(empty log)");
    format!("{line} (log: {})", log.display())
}

/// Renders the Markdown report of `OUT/result.json` and writes it to `OUT/report.md`.
fn write_report(out: &Path) -> anyhow::Result<String> {
    let path = out.join("result.json");
    if !path.exists() {
        bail!(
            "no phase recorded a result; the phase logs are in {}",
            out.join("logs").display()
        );
    }
    let result = bench_core::ResultFile::load(&path)
        .with_context(|| format!("reading {}", path.display()))?;
    let report = bench_core::export::markdown::report(&bench_core::report::Report::new(&result));
    let report_path = out.join("report.md");
    bench_core::io::write_atomic(&report_path, report.as_bytes())
        .with_context(|| format!("writing {}", report_path.display()))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_for(phases: &[Phase], trials: u32, installs: u32) -> Settings {
        Settings {
            spec: SpecSource::Demo,
            out: PathBuf::from("out"),
            trials,
            installs,
            phases: phases.to_vec(),
            phases_asked: false,
            keep_users: false,
            repository: None,
            commit: None,
        }
    }

    #[test]
    fn steps_run_prepare_and_staircase_once_and_the_rest_per_trial() {
        let steps = steps(&settings_for(&Phase::ALL, 2, 1));
        let labels: Vec<String> = steps.iter().map(|step| step.label()).collect();
        assert_eq!(
            labels,
            [
                "prepare trial 0",
                "install trial 0",
                "measure trial 0",
                "measure trial 1",
                "runtime trial 0",
                "runtime trial 1",
                "ui trial 0",
                "ui trial 1",
                "staircase trial 0",
            ]
        );
    }

    #[test]
    fn installs_count_separately_from_trials() {
        let steps = steps(&settings_for(&[Phase::Install], 5, 2));
        assert_eq!(steps.len(), 2);
    }

    fn args(extra: &[&str]) -> Args {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: Args,
        }
        let mut argv = vec!["run"];
        argv.extend_from_slice(extra);
        Wrapper::try_parse_from(argv).unwrap().args
    }

    fn pi_spec() -> crate::spec::Spec {
        crate::spec::parse(include_str!("../../../../examples/pi.toml"), "pi.toml").unwrap()
    }

    #[test]
    fn by_default_only_the_phases_the_spec_describes_run() {
        let spec = pi_spec();
        let (run, skipped) =
            described_phases(&spec, Path::new("pi.toml"), &Phase::ALL, false).unwrap();
        assert_eq!(
            run,
            [
                Phase::Prepare,
                Phase::Install,
                Phase::Measure,
                Phase::Staircase
            ]
        );
        assert_eq!(skipped, [Phase::Runtime, Phase::Ui]);
    }

    #[test]
    fn a_phase_asked_for_must_be_described() {
        let spec = pi_spec();
        let path = Path::new("pi.toml");
        let asked = [Phase::Measure, Phase::Runtime];
        let error = described_phases(&spec, path, &asked, true).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--phases: runtime needs a [runtime] section, which pi.toml does not have"
        );
        let (run, _) = described_phases(&spec, path, &[Phase::Measure], true).unwrap();
        assert_eq!(run, [Phase::Measure]);
    }

    #[test]
    fn the_demo_describes_every_phase() {
        let text = crate::demo::spec_text(Path::new("/src"), &"0".repeat(40));
        let spec = crate::spec::parse(&text, "demo.toml").unwrap();
        assert!(Phase::ALL.iter().all(|&phase| describes(&spec, phase)));
    }

    #[test]
    fn phases_are_put_in_pipeline_order_without_duplicates() {
        let settings = settings(args(&["--phases", "ui,measure,ui"])).unwrap();
        assert_eq!(settings.phases, [Phase::Measure, Phase::Ui]);
    }

    #[test]
    fn an_unknown_phase_is_an_input_error_naming_the_choices() {
        let error = settings(args(&["--phases", "measure,mesure"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert_eq!(
            error.to_string(),
            "--phases: unknown phase 'mesure'; expected some of prepare,install,measure,runtime,ui,staircase"
        );
    }

    #[test]
    fn zero_trials_is_an_input_error() {
        let error = settings(args(&["--trials", "0"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
    }

    #[test]
    fn a_missing_spec_is_an_input_error() {
        let error = settings(args(&["/nonexistent/spec.toml"])).unwrap_err();
        assert!(error.is::<crate::exit::InputError>());
        assert!(error.to_string().contains("/nonexistent/spec.toml"));
    }
}
