//! `clibench kernel`: the REPL kernel metrics (`kernel_start` ... `restore`) of a
//! protocol-3 kernel command, or of the built-in reference kernel, each run in a fresh
//! temporary git workspace with an exact environment (`environment`) and a fresh
//! empty home.
//!
//! [`run`] does the runs and tells an [`Observer`] about each; it records them into a
//! [`ResultFile`] (trial N is run N, the runtime phase's metrics), which bench-core's
//! exporters render and `clibench compare` compares.

use bench_core::{Phase, Request, ResultFile, Role, Sample, Side, error_chain, record};
use bench_proc::{Selector, snapshot};
use bench_term::kernel::measure::{RuntimeOptions, run_all};
use bench_term::kernel::{KernelOptions, REFERENCE_KERNEL, REFERENCE_KERNEL_FILE_NAME};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Environment variables passed through to the kernel from this process, where set;
/// everything else is left out.
pub(crate) const PASSED_THROUGH: [&str; 6] = [
    "PATH",
    "USER",
    "LOGNAME",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "TMPDIR",
];

/// Which kernel is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kernel {
    /// clibench's built-in reference kernel, written to each run's folder and run by
    /// this Python.
    Reference {
        /// The Python program (`python3`).
        python: OsString,
    },
    /// A protocol-3 kernel command.
    Command {
        /// The program.
        program: OsString,
        /// Its arguments.
        args: Vec<OsString>,
    },
}

impl Kernel {
    /// The kernel command as people read it (`python3 <reference kernel file name>` for
    /// the reference kernel).
    pub fn shown(&self) -> Vec<String> {
        match self {
            Kernel::Reference { python } => vec![
                python.to_string_lossy().into_owned(),
                REFERENCE_KERNEL_FILE_NAME.to_owned(),
            ],
            Kernel::Command { program, args } => std::iter::once(program)
                .chain(args)
                .map(|part| part.to_string_lossy().into_owned())
                .collect(),
        }
    }
}

/// What one `clibench kernel` measures and how.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Measured runs (each a fresh kernel, workspace and snapshot).
    pub runs: usize,
    /// Which kernel to start, and how.
    pub kernel: Kernel,
    /// Code run first in the measured kernel.
    pub prelude: Option<String>,
    /// How long to wait for `ready`, and for each request.
    pub timeout: Duration,
    /// The kernel's whole environment (see `environment`); a fresh empty `HOME` is
    /// added unless it sets one.
    pub env: Vec<(OsString, OsString)>,
    /// Where the `.jsonl` transcripts of every kernel session are kept.
    pub transcripts: Option<PathBuf>,
}

/// The kernel's environment: `PASSED_THROUGH` from this process where set,
/// `LANG=C.UTF-8`, then `extra` in order, each replacing an earlier value of its key.
pub fn environment(
    extra: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = PASSED_THROUGH
        .iter()
        .filter_map(|key| std::env::var_os(key).map(|value| (OsString::from(key), value)))
        .collect();
    env.push(("LANG".into(), "C.UTF-8".into()));
    for (key, value) in extra {
        env.retain(|(existing, _)| *existing != key);
        env.push((key, value));
    }
    env
}

/// What a caller sees of [`run`] while it runs, to show progress. Both methods do
/// nothing by default.
pub trait Observer {
    /// Run `index` (from 0) of `runs` is about to start.
    fn run_started(&mut self, index: usize, runs: usize) {
        let _ = (index, runs);
    }

    /// Run `index` ended and is recorded in `side` as trial `index`.
    fn run_finished(&mut self, index: usize, side: &Side) {
        let _ = (index, side);
    }
}

/// Observes nothing.
impl Observer for () {}

/// Why `clibench kernel` could not prepare or clean up a run. A metric that fails is
/// no error here: it is recorded as that trial's error sample.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The transcript folder could not be created.
    #[error("creating the transcript folder {}", path.display())]
    TranscriptFolder {
        /// The folder.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// A run's temporary folder could not be created.
    #[error("creating a temporary folder for the kernel")]
    TemporaryFolder(#[source] io::Error),
    /// A run's temporary folder could not be removed.
    #[error("removing the kernel's temporary folder")]
    RemoveTemporaryFolder(#[source] io::Error),
    /// The workspace, state or home folder of a run could not be created.
    #[error("creating the kernel's {folder}")]
    Folder {
        /// `workspace`, `state folder` or `home`.
        folder: &'static str,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// A file of the workspace could not be written.
    #[error("writing {name} in the kernel's workspace")]
    WorkspaceFile {
        /// The file's name.
        name: String,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// git could not be started.
    #[error("running git to create the kernel's workspace (is git installed?)")]
    GitSpawn(#[source] io::Error),
    /// A git command that creates the workspace failed.
    #[error("{command} failed in the kernel's workspace: {stderr}")]
    Git {
        /// The command and its arguments.
        command: String,
        /// What it said on stderr, trimmed.
        stderr: String,
    },
    /// The reference kernel could not be written.
    #[error("writing the reference kernel to {}", path.display())]
    ReferenceKernel {
        /// Where it was written.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
}

/// Does the runs, one after the other. A run stops at its first failing metric and
/// the next run starts; only a run that cannot be prepared or cleaned up is an error.
pub fn run(settings: &Settings, observer: &mut dyn Observer) -> Result<ResultFile, Error> {
    if let Some(folder) = &settings.transcripts {
        std::fs::create_dir_all(folder).map_err(|source| Error::TranscriptFolder {
            path: folder.clone(),
            source,
        })?;
    }
    let mut result = ResultFile::new(settings.request());
    for index in 0..settings.runs {
        observer.run_started(index, settings.runs);
        measure_once(settings, index, &mut result.side)?;
        observer.run_finished(index, &result.side);
    }
    Ok(result)
}

/// The `runtime` fact holding the Python version the kernel reported.
pub(crate) const PYTHON_KEY: &str = "python";
/// The `runtime` fact holding what built the loaded-memory table: `pandas` when
/// importable, else `lists`.
pub(crate) const WORKLOAD_KEY: &str = "workload";

impl Settings {
    /// The request a result of these settings answers: the kernel command as its build
    /// identifier, and the settings.
    pub fn request(&self) -> Request {
        let command = self.kernel.shown().join(" ");
        let mut request = Request::new(command.clone(), Role::Candidate);
        let reference = matches!(self.kernel, Kernel::Reference { .. });
        for (key, value) in [
            ("command", command),
            ("reference_kernel", reference.to_string()),
            ("runs", self.runs.to_string()),
            ("timeout", format!("{:?}", self.timeout)),
        ] {
            request.config.insert(key.to_owned(), value);
        }
        request
    }
}

/// How many of the first `runs` trials measured every runtime metric.
pub fn complete_runs(side: &Side, runs: usize) -> usize {
    (0..runs)
        .filter(|&trial| {
            Phase::Runtime.metrics().all(|metric| {
                side.metrics.get(&metric).is_some_and(|samples| {
                    samples
                        .iter()
                        .any(|sample| sample.trial as usize == trial && sample.value.is_some())
                })
            })
        })
        .count()
}

/// The lines of run `index`'s failed metrics ("run 2: kernel_exec failed: timed out"),
/// as `clibench kernel` shows them when the run ends.
pub fn failed_lines(index: usize, side: &Side) -> Vec<String> {
    let mut lines = Vec::new();
    for (metric, samples) in &side.metrics {
        for sample in samples.iter().filter(|s| s.trial as usize == index) {
            if let Some(error) = &sample.error {
                lines.push(format!("run {}: {metric} failed: {error}", index + 1));
            }
        }
    }
    lines
}

/// The line under the table: the Python, the loaded workload and how many of `runs`
/// runs measured every metric.
pub fn summary_line(side: &Side, runs: usize) -> String {
    let fact = |key: &str| side.runtime.get(key).map(String::as_str);
    format!(
        "(python {}, loaded workload: {}, {} of {runs} runs complete)",
        fact(PYTHON_KEY).unwrap_or("unknown"),
        fact(WORKLOAD_KEY).unwrap_or("not built"),
        complete_runs(side, runs),
    )
}

/// One run in a fresh temporary folder: workspace, state, home and (for the reference
/// kernel) the kernel's source.
fn measure_once(settings: &Settings, trial: usize, side: &mut Side) -> Result<(), Error> {
    let folder = tempfile::Builder::new()
        .prefix("clibench-kernel-")
        .tempdir()
        .map_err(Error::TemporaryFolder)?;
    let create = |name: &str, what: &'static str| {
        let path = folder.path().join(name);
        std::fs::create_dir(&path)
            .map(|()| path)
            .map_err(|source| Error::Folder {
                folder: what,
                source,
            })
    };
    let workspace = create("workspace", "workspace")?;
    create_workspace(&workspace)?;
    let state = create("state", "state folder")?;
    let (program, args) = match &settings.kernel {
        Kernel::Command { program, args } => (program.clone(), args.clone()),
        Kernel::Reference { python } => {
            let script = folder.path().join(REFERENCE_KERNEL_FILE_NAME);
            std::fs::write(&script, REFERENCE_KERNEL).map_err(|source| Error::ReferenceKernel {
                path: script.clone(),
                source,
            })?;
            (python.clone(), vec![script.into_os_string()])
        }
    };
    // A fresh home, as the pipeline's trial users have: the caller's dotfiles (a ~/.bashrc
    // sourced by every shell cell) would be measured with the kernel.
    let mut env = settings.env.clone();
    if !env.iter().any(|(key, _)| key == "HOME") {
        let home = create("home", "home")?;
        env.push(("HOME".into(), home.into_os_string()));
    }
    let mut kernel = KernelOptions::new(program, args, &workspace, env);
    kernel.ready_timeout = settings.timeout;
    kernel.request_timeout = settings.timeout;
    let mut options = RuntimeOptions::new(kernel, &state);
    options.trial = trial;
    options.prelude = settings.prelude.clone();
    options.transcript_dir = settings.transcripts.clone();
    let report = run_all(&options, &mut |_, pid| {
        let family = snapshot(&Selector::Session(pid))?;
        if family.processes.is_empty() {
            return Err(EmptySession(pid).into());
        }
        Ok(family.total_rss_bytes())
    });
    // Invariant: the command line caps runs at MAX_TRIAL + 1, so the trial fits; a
    // larger one is recorded as u32::MAX and saving the result names it.
    let trial = u32::try_from(trial).unwrap_or(u32::MAX);
    for (metric, value) in &report.values {
        let sample = match value {
            Ok(value) => Sample::Value(*value),
            Err(error) => Sample::Error(error_chain(error)),
        };
        record(side, *metric, trial, sample);
    }
    // The first run that said is the one the result names.
    for (key, value) in [
        (PYTHON_KEY, report.python.clone()),
        (WORKLOAD_KEY, report.workload.map(|w| w.name().to_owned())),
    ] {
        if let Some(value) = value {
            side.runtime.entry(key.to_owned()).or_insert(value);
        }
    }
    // A failure while closing the kernel after its metrics leaves the metrics standing;
    // the first one is the side's error.
    if let Some(error) = &report.close_error
        && side.error.is_none()
    {
        side.set_error(format!(
            "run {}: closing the kernel failed: {}",
            trial + 1,
            error_chain(error)
        ));
    }
    folder.close().map_err(Error::RemoveTemporaryFolder)?;
    Ok(())
}

/// The memory probe found no process in the kernel's session.
#[derive(Debug, thiserror::Error)]
#[error("no process found in the kernel's session {0}")]
struct EmptySession(u32);

/// A small git repository with one commit at fixed author and committer dates, so
/// `git status --porcelain` has a real (clean) tree to look at.
fn create_workspace(workspace: &Path) -> Result<(), Error> {
    // The same fixture repository the pipeline's install phase creates by default.
    let fixture = crate::spec::Workspace::default();
    for (name, content) in &fixture.files {
        std::fs::write(workspace.join(name), content).map_err(|source| Error::WorkspaceFile {
            name: name.clone(),
            source,
        })?;
    }
    for argv in fixture.git_commands() {
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(workspace)
            .env("GIT_AUTHOR_DATE", &fixture.date)
            .env("GIT_COMMITTER_DATE", &fixture.date)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null())
            .output()
            .map_err(Error::GitSpawn)?;
        if !output.status.success() {
            return Err(Error::Git {
                command: argv.join(" "),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_kernel_facts_says_unknown_and_counts_no_complete_run() {
        let mut side = Side::default();
        side.metrics.insert(
            bench_core::Metric::KernelExec,
            vec![bench_core::Observation::error(0, "timed out")],
        );
        assert_eq!(
            failed_lines(0, &side),
            ["run 1: kernel_exec failed: timed out"]
        );
        assert_eq!(
            summary_line(&side, 1),
            "(python unknown, loaded workload: not built, 0 of 1 runs complete)"
        );
    }

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(key, value)| (key.into(), value.into()))
            .collect()
    }

    #[test]
    fn extra_variables_replace_passed_through_ones_and_lang() {
        let env = environment(os(&[("LANG", "en_US.UTF-8"), ("EXTRA", "1")]));
        let keys: Vec<_> = env.iter().map(|(key, _)| key.to_str().unwrap()).collect();
        assert!(
            keys.iter()
                .all(|key| PASSED_THROUGH.contains(key) || ["LANG", "EXTRA"].contains(key)),
            "{keys:?}"
        );
        assert_eq!(
            env.iter().filter(|(key, _)| key == "LANG").count(),
            1,
            "{env:?}"
        );
        assert_eq!(
            env[env.len() - 2..],
            os(&[("LANG", "en_US.UTF-8"), ("EXTRA", "1")])
        );
    }

    #[test]
    fn the_reference_kernel_is_shown_by_its_python_and_file_name() {
        let reference = Kernel::Reference {
            python: "python3".into(),
        };
        assert_eq!(reference.shown(), ["python3", REFERENCE_KERNEL_FILE_NAME]);
        let command = Kernel::Command {
            program: "python".into(),
            args: vec!["-m".into(), "rlm.repl".into()],
        };
        assert_eq!(command.shown(), ["python", "-m", "rlm.repl"]);
    }

    #[test]
    fn the_workspace_is_a_clean_git_repository() {
        let folder = tempfile::tempdir().unwrap();
        create_workspace(folder.path()).unwrap();
        let status = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(folder.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        assert_eq!(String::from_utf8_lossy(&status.stdout), "");
        for name in crate::spec::Workspace::default().files.keys() {
            assert!(folder.path().join(name).is_file(), "{name}");
        }
    }

    #[derive(Default)]
    struct Calls(Vec<String>);

    impl Observer for Calls {
        fn run_started(&mut self, index: usize, runs: usize) {
            self.0.push(format!("started {index} of {runs}"));
        }

        fn run_finished(&mut self, index: usize, side: &Side) {
            let failed: Vec<&str> = side
                .metrics
                .iter()
                .filter(|(_, samples)| {
                    samples
                        .iter()
                        .any(|s| s.trial as usize == index && s.error.is_some())
                })
                .map(|(metric, _)| metric.name())
                .collect();
            self.0.push(format!("finished {index}, failed {failed:?}"));
        }
    }

    #[test]
    fn a_program_that_is_not_a_kernel_fails_each_run_at_kernel_start() {
        let settings = Settings {
            runs: 2,
            kernel: Kernel::Command {
                program: "/bin/sh".into(),
                args: vec!["-c".into(), "echo hello, not a kernel".into()],
            },
            prelude: None,
            timeout: Duration::from_secs(10),
            env: environment([]),
            transcripts: None,
        };
        let mut calls = Calls::default();
        let result = run(&settings, &mut calls).unwrap();
        assert_eq!(
            calls.0,
            [
                "started 0 of 2",
                "finished 0, failed [\"kernel_start\"]",
                "started 1 of 2",
                "finished 1, failed [\"kernel_start\"]",
            ]
        );
        assert_eq!(result.side.sha, "/bin/sh -c echo hello, not a kernel");
        assert_eq!(result.request.config["reference_kernel"], "false");
        assert_eq!(complete_runs(&result.side, 2), 0);
        let samples = &result.side.metrics[&bench_core::Metric::KernelStart];
        assert_eq!(samples.len(), 2);
        for sample in samples {
            let error = sample.error.as_deref().unwrap_or_default();
            assert!(error.contains("hello, not a kernel"), "{sample:?}");
        }
    }
}
