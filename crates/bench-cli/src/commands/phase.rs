//! `clibench phase NAME --spec S --out DIR --trial N [--keep-users]`: runs one phase of
//! the pipeline for one trial, merging into OUT/result.json, as the seed's
//! `python benchmark.py PHASE --trial N`.

use crate::exit::input_error;
use crate::pipeline::{self, PhaseContext};
use crate::spec;
use anyhow::Context;
use bench_core::{Phase, Request, ResultFile, Role};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `clibench phase`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The phase: prepare, install, measure, runtime, ui or staircase.
    #[arg(value_parser = parse_phase)]
    phase: Phase,
    /// The target spec (TOML; see docs/spec.md).
    #[arg(long)]
    spec: PathBuf,
    /// The output folder: result.json, logs, artifacts, homes.
    #[arg(long)]
    out: PathBuf,
    /// The trial number (for install: the install index).
    #[arg(long, default_value_t = 0, value_parser = super::trial_number)]
    trial: u32,
    /// Keep the trial users and homes at cleanup.
    #[arg(long)]
    keep_users: bool,
    /// Fetch the source from this repository instead of the spec's `source.repository`.
    #[arg(long)]
    repository: Option<String>,
    /// Build this commit instead of the spec's `source.commit` (a full 40-character sha).
    #[arg(long)]
    commit: Option<String>,
}

fn parse_phase(name: &str) -> Result<Phase, String> {
    name.parse::<Phase>().map_err(|error| error.to_string())
}

/// The settings of one phase run, free of clap.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The phase.
    pub phase: Phase,
    /// The spec file.
    pub spec: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// The trial.
    pub trial: u32,
    /// Keep users at cleanup.
    pub keep_users: bool,
    /// Overrides `source.repository`.
    pub repository: Option<String>,
    /// Overrides `source.commit`.
    pub commit: Option<String>,
}

/// Runs `clibench phase`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = Settings {
        phase: args.phase,
        spec: args.spec,
        out: args.out,
        trial: args.trial,
        keep_users: args.keep_users,
        repository: args.repository,
        commit: args.commit,
    };
    let errors = run_phase(&settings)?;
    if errors.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "error: {} trial {} failed: {}",
        settings.phase,
        settings.trial,
        errors.join("; ")
    );
    Ok(ExitCode::from(crate::exit::FAILURE))
}

/// The request a spec describes: its commit, or for a source-less target its package
/// and version.
pub fn request_for(spec: &spec::Spec, spec_path: &Path) -> Request {
    let sha = match (&spec.source, &spec.package, &spec.version) {
        (Some(source), _, _) => source.commit.clone(),
        (None, Some(package), Some(version)) => format!("{package}@{version}"),
        (None, Some(package), None) => package.clone(),
        (None, None, Some(version)) => format!("{}@{version}", spec.name),
        (None, None, None) => spec.name.clone(),
    };
    let mut request = Request::new(sha, Role::Candidate);
    request.source_repository = spec.source.as_ref().map(|s| s.repository.clone());
    request
        .config
        .insert("spec".to_owned(), spec_path.display().to_string());
    request
        .config
        .insert("target".to_owned(), spec.name.clone());
    if let Some(description) = &spec.description {
        request
            .config
            .insert("description".to_owned(), description.clone());
    }
    request
}

/// Runs one phase and returns the trial's errors (empty: it succeeded). Errors
/// before the phase could start (a bad spec, an unreadable result file) are returned
/// as `Err`, with bad input marked for exit code 2.
pub fn run_phase(settings: &Settings) -> anyhow::Result<Vec<String>> {
    let mut spec = spec::load(&settings.spec).map_err(|error| input_error(error.to_string()))?;
    override_source(
        &mut spec,
        &settings.spec,
        settings.repository.as_deref(),
        settings.commit.as_deref(),
    )?;
    std::fs::create_dir_all(&settings.out)
        .with_context(|| format!("creating the output folder {}", settings.out.display()))?;
    let path = settings.out.join("result.json");
    let request = request_for(&spec, &settings.spec);
    let mut result = ResultFile::load_or_create(&path, &request)
        .map_err(|error| input_error(format!("{error}")))?;
    if settings.keep_users {
        pipeline::state::State::update(&settings.out, |s| s.keep_users = true)?;
    }
    let started = std::time::Instant::now();
    result.side.error = None;
    let outcome = PhaseContext::new(
        settings.phase,
        spec,
        &settings.spec,
        &settings.out,
        settings.trial,
    )
    .and_then(|ctx| pipeline::run_phase(&ctx, &mut result.side));
    if let Err(error) = &outcome {
        let message = format!("{}: {error:#}", settings.phase);
        // The result keeps 500 characters; the whole message goes to stderr.
        eprintln!("error: {message}");
        result.side.set_error(pipeline::exec::clip(&message, 500));
    }
    result.side.timings.insert(
        format!("phase:{}:{}", settings.phase, settings.trial),
        started.elapsed().as_secs_f64(),
    );
    result
        .save(&path)
        .with_context(|| format!("saving {}", path.display()))?;
    Ok(bench_core::trial_errors(
        &result.side,
        settings.phase,
        settings.trial,
    ))
}

/// Applies `--repository` and `--commit`, as the seed takes both from its request.
/// `clibench run` calls it too, to refuse bad overrides before any phase starts.
pub fn override_source(
    spec: &mut spec::Spec,
    spec_path: &Path,
    repository: Option<&str>,
    commit: Option<&str>,
) -> anyhow::Result<()> {
    if repository.is_none() && commit.is_none() {
        return Ok(());
    }
    let Some(source) = spec.source.as_mut() else {
        return Err(input_error(format!(
            "{}: --repository and --commit need a [source] section in the spec",
            spec_path.display()
        )));
    };
    if let Some(commit) = commit {
        if !spec::is_full_sha(commit) {
            return Err(input_error(format!(
                "--commit must be a full 40-character sha (got \"{commit}\")"
            )));
        }
        source.commit = commit.to_owned();
    }
    if let Some(repository) = repository {
        // A local path on the command line is relative to where clibench runs, not
        // to the spec's folder.
        let path = Path::new(repository);
        source.repository = if path.is_relative() && path.exists() {
            std::path::absolute(path)?.display().to_string()
        } else {
            repository.to_owned()
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_names_parse() {
        assert_eq!(parse_phase("install"), Ok(Phase::Install));
        assert!(parse_phase("instal").is_err());
    }
}
