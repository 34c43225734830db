//! `clibench board`'s settings: the specs, rounds, phases and shared model script, from
//! the command line over a board file (`--board FILE`, see [`BoardFile`]).
//!
//! A board file names a set of agents once, so that the same board is run again as it was:
//!
//! ```toml
//! specs = ["pi.toml", "claude-code.toml", "codex.toml"]  # relative to this file
//! model_script = "scripts/at-work.toml"                  # optional, relative too
//! phases = ["prepare", "install", "measure", "session"]  # optional
//! trials = 3                                             # optional
//! budget = "20m"                                         # optional
//! ```

use super::SettingsError;
use super::limits::{budget, trial_count};
use super::run::{parse_phases, with_scenario};
use bench_cli::pipeline::PlanSettings;
use bench_cli::pipeline::orchestration::board::BoardSettings;
use bench_cli::pipeline::orchestration::board_rounds::{BUDGET_MAX_ROUNDS, MIN_BUDGET_ROUNDS};
use bench_cli::spec::{Override, Scenario};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `clibench board` was asked for on its command line, as plain values; `None` (or
/// empty) where a flag was not given, so that a board file's value stands.
#[derive(Debug, Clone, Default)]
pub struct BoardRequest {
    /// The specs given as arguments.
    pub specs: Vec<PathBuf>,
    /// `--board FILE`.
    pub board_file: Option<PathBuf>,
    /// `--out`.
    pub out: PathBuf,
    /// `--trials`: the trials a target, or with a budget the most rounds.
    pub trials: Option<u32>,
    /// `--budget`.
    pub budget: Option<Duration>,
    /// `--phases`, by name.
    pub phases: Option<Vec<String>>,
    /// `--model-script`.
    pub model_script: Option<PathBuf>,
    /// `--scenario`.
    pub scenario: Option<Scenario>,
    /// `--set`, on every target.
    pub overrides: Vec<Override>,
    /// `--keep-users`.
    pub keep_users: bool,
}

/// The trials a target when neither `--trials` nor `--budget` is given.
pub(crate) const DEFAULT_BOARD_TRIALS: u32 = 3;

/// A board file's keys, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardFileText {
    specs: Vec<String>,
    #[serde(default)]
    model_script: Option<String>,
    #[serde(default)]
    phases: Option<Vec<String>>,
    #[serde(default)]
    trials: Option<u32>,
    #[serde(default)]
    budget: Option<String>,
}

/// A board file read and checked: its paths relative to the file's folder resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardFile {
    /// The targets' specs.
    pub specs: Vec<PathBuf>,
    /// The model script every target plays.
    pub model_script: Option<PathBuf>,
    /// The phases, by name (checked).
    pub phases: Option<Vec<String>>,
    /// The trials a target, or with a budget the most rounds.
    pub trials: Option<u32>,
    /// The time budget.
    pub budget: Option<Duration>,
}

/// What is wrong with a board file; each names the file, and the key where one is wrong.
#[derive(Debug, thiserror::Error)]
pub enum BoardFileError {
    /// The file cannot be read.
    #[error("failed to read the board file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, an unknown key, a missing `specs` or a value of the wrong type.
    #[error("{}: {message}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The TOML reader's words, which name the key and line.
        message: String,
    },
    /// A key's value cannot be used.
    #[error("{}: '{key}': {message}", path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// The key (`specs[2]`, `budget`).
        key: String,
        /// Why.
        message: String,
    },
}

/// Why `clibench board`'s settings cannot be resolved. Its own type rather than a
/// [`SettingsError`] variant, which the board file's errors would tie in a cycle with the
/// flag parsers this module uses.
#[derive(Debug, thiserror::Error)]
pub enum BoardSettingsError {
    /// The board file.
    #[error(transparent)]
    File(#[from] BoardFileError),
    /// The flags, or the file's values with them.
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

impl BoardSettingsError {
    /// Whether the caller gave a wrong value (a file they named counts, even unreadable).
    pub fn is_input(&self) -> bool {
        match self {
            BoardSettingsError::File(_) => true,
            BoardSettingsError::Settings(error) => error.is_input(),
        }
    }
}

/// The most bytes a board file may have: a list of names, never more.
const MAX_BOARD_FILE_BYTES: u64 = 64 * 1024;

impl BoardFile {
    /// Reads and checks the board file at `path`.
    pub fn load(path: &Path) -> Result<BoardFile, BoardFileError> {
        let text =
            bench_core::io::read_input_file(path, MAX_BOARD_FILE_BYTES).map_err(|source| {
                BoardFileError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        BoardFile::parse(&text, path)
    }

    /// Checks `text`, the board file at `path` (whose folder its paths are relative to).
    pub fn parse(text: &str, path: &Path) -> Result<BoardFile, BoardFileError> {
        let written: BoardFileText = toml::from_str(text).map_err(|error: toml::de::Error| {
            let message = error.message().trim().to_owned();
            BoardFileError::Toml {
                path: path.to_path_buf(),
                message: match error.span() {
                    Some(span) => {
                        let before = text.get(..span.start).unwrap_or(text);
                        let line = before.matches('\n').count();
                        format!("line {}: {message}", line + 1)
                    }
                    None => message,
                },
            }
        })?;
        let key_error = |key: String, message: String| BoardFileError::Key {
            path: path.to_path_buf(),
            key,
            message,
        };
        let folder = path.parent().unwrap_or(Path::new(""));
        let existing = |key: String, name: &str| {
            let resolved = folder.join(name);
            if resolved.is_file() {
                Ok(resolved)
            } else {
                Err(key_error(
                    key,
                    format!("{} is not a file", resolved.display()),
                ))
            }
        };
        if written.specs.len() < 2 {
            return Err(key_error(
                "specs".to_owned(),
                format!(
                    "a board needs at least two specs (got {})",
                    written.specs.len()
                ),
            ));
        }
        let specs = (written.specs.iter().enumerate())
            .map(|(index, name)| existing(format!("specs[{index}]"), name))
            .collect::<Result<Vec<_>, _>>()?;
        let model_script = (written.model_script.as_deref())
            .map(|name| existing("model_script".to_owned(), name))
            .transpose()?;
        if let Some(phases) = &written.phases {
            parse_phases(phases).map_err(|error| {
                key_error(
                    "phases".to_owned(),
                    error.to_string().replace("--phases: ", ""),
                )
            })?;
        }
        let trials = (written.trials)
            .map(|trials| trial_count(&trials.to_string()))
            .transpose()
            .map_err(|error| key_error("trials".to_owned(), error.to_string()))?;
        let budget = (written.budget.as_deref())
            .map(budget)
            .transpose()
            .map_err(|error| key_error("budget".to_owned(), error.to_string()))?;
        Ok(BoardFile {
            specs,
            model_script,
            phases: written.phases,
            trials,
            budget,
        })
    }
}

/// The board's settings: each of the command line's flags, else the board file's key,
/// else the default. Without `--trials`, a budget runs at most `BUDGET_MAX_ROUNDS`
/// rounds; with it, `--trials` is the most, and must allow the
/// `MIN_BUDGET_ROUNDS` every budget runs.
pub fn board_settings(request: BoardRequest) -> Result<BoardSettings, BoardSettingsError> {
    let file = request
        .board_file
        .as_deref()
        .map(BoardFile::load)
        .transpose()?;
    let file = file.as_ref();
    let specs = if request.specs.is_empty() {
        file.map(|file| file.specs.clone()).unwrap_or_default()
    } else {
        request.specs
    };
    let phases = request
        .phases
        .or_else(|| file.and_then(|file| file.phases.clone()));
    let phases = phases.as_deref().map(parse_phases).transpose()?;
    let budget = request.budget.or_else(|| file.and_then(|file| file.budget));
    let trials = request.trials.or_else(|| file.and_then(|file| file.trials));
    let trials = match (trials, budget) {
        (Some(trials), Some(_)) if trials < MIN_BUDGET_ROUNDS => {
            return Err(SettingsError::BudgetTrials { trials }.into());
        }
        (Some(trials), _) => trials,
        (None, Some(_)) => BUDGET_MAX_ROUNDS,
        (None, None) => DEFAULT_BOARD_TRIALS,
    };
    let model_script = request
        .model_script
        .or_else(|| file.and_then(|file| file.model_script.clone()));
    Ok(BoardSettings {
        specs,
        out: request.out,
        budget,
        model_script,
        plan: PlanSettings {
            trials,
            phases,
            keep_users: request.keep_users,
            // The scenario's own tool calls for every target, whatever each spec's
            // script runs: the same work for all is what makes the board fair.
            overrides: with_scenario(request.scenario, None, request.overrides),
            ..PlanSettings::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder with `a.toml`, `b.toml` and `script.toml` (empty files: the board file
    /// only checks that they are files) and the board file `text` as `board.toml`.
    fn folder_with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        for name in ["a.toml", "b.toml", "script.toml"] {
            std::fs::write(folder.path().join(name), "").unwrap();
        }
        let board = folder.path().join("board.toml");
        std::fs::write(&board, text).unwrap();
        (folder, board)
    }

    fn error_of(text: &str) -> String {
        let (_folder, board) = folder_with(text);
        let error = BoardFile::load(&board).unwrap_err().to_string();
        assert!(error.contains("board.toml"), "names the file: {error}");
        error
    }

    #[test]
    fn a_board_file_resolves_its_paths_beside_itself() {
        let (folder, board) = folder_with(
            "specs = [\"a.toml\", \"b.toml\"]\nmodel_script = \"script.toml\"\n\
             phases = [\"prepare\", \"install\", \"session\"]\ntrials = 5\nbudget = \"10m\"\n",
        );
        let file = BoardFile::load(&board).unwrap();
        assert_eq!(
            file,
            BoardFile {
                specs: vec![folder.path().join("a.toml"), folder.path().join("b.toml")],
                model_script: Some(folder.path().join("script.toml")),
                phases: Some(vec!["prepare".into(), "install".into(), "session".into()]),
                trials: Some(5),
                budget: Some(Duration::from_secs(600)),
            }
        );
    }

    #[test]
    fn a_bad_board_file_is_refused_naming_the_file_and_the_key() {
        let unknown = error_of("specs = [\"a.toml\", \"b.toml\"]\ntrails = 3\n");
        assert!(
            unknown.contains("board.toml: line 2: unknown field `trails`, expected one of"),
            "{unknown}"
        );
        let missing = error_of("trials = 3\n");
        assert!(missing.contains("missing field `specs`"), "{missing}");
        let absent = error_of("specs = [\"a.toml\", \"nope.toml\"]\n");
        assert!(
            absent.contains("'specs[1]'") && absent.contains("nope.toml is not a file"),
            "{absent}"
        );
        let one = error_of("specs = [\"a.toml\"]\n");
        assert!(one.contains("'specs': a board needs at least two"), "{one}");
        let script = error_of("specs = [\"a.toml\", \"b.toml\"]\nmodel_script = \"x.toml\"\n");
        assert!(script.contains("'model_script'"), "{script}");
        let budget = error_of("specs = [\"a.toml\", \"b.toml\"]\nbudget = \"2s\"\n");
        assert!(budget.contains("'budget'"), "{budget}");
        let phase = error_of("specs = [\"a.toml\", \"b.toml\"]\nphases = [\"mesure\"]\n");
        assert!(
            phase.contains("'phases': unknown phase 'mesure'"),
            "{phase}"
        );
        let trials = error_of("specs = [\"a.toml\", \"b.toml\"]\ntrials = 500\n");
        assert!(trials.contains("'trials': 500 is above"), "{trials}");
    }

    #[test]
    fn the_command_line_overrides_the_board_file() {
        let (folder, board) =
            folder_with("specs = [\"a.toml\", \"b.toml\"]\nphases = [\"measure\"]\ntrials = 5\n");
        let request = |extra: BoardRequest| BoardRequest {
            board_file: Some(board.clone()),
            ..extra
        };
        let from_file = board_settings(request(BoardRequest::default())).unwrap();
        assert_eq!(from_file.specs[0], folder.path().join("a.toml"));
        assert_eq!(from_file.plan.trials, 5);
        assert_eq!(
            from_file.plan.phases,
            Some(vec![bench_core::Phase::Measure])
        );
        let flags = board_settings(request(BoardRequest {
            trials: Some(4),
            phases: Some(vec!["session".into()]),
            budget: Some(Duration::from_secs(60)),
            ..BoardRequest::default()
        }))
        .unwrap();
        assert_eq!(flags.plan.trials, 4);
        assert_eq!(flags.plan.phases, Some(vec![bench_core::Phase::Session]));
        assert_eq!(flags.budget, Some(Duration::from_secs(60)));
    }

    #[test]
    fn a_budget_runs_at_most_twenty_rounds_and_at_least_three() {
        let budgeted = |trials| BoardRequest {
            specs: vec!["a.toml".into(), "b.toml".into()],
            trials,
            budget: Some(Duration::from_secs(60)),
            ..BoardRequest::default()
        };
        assert_eq!(board_settings(budgeted(None)).unwrap().plan.trials, 20);
        assert_eq!(board_settings(budgeted(Some(7))).unwrap().plan.trials, 7);
        let error = board_settings(budgeted(Some(2))).unwrap_err();
        assert!(error.to_string().contains("at least 3"), "{error}");
        let plain = BoardRequest {
            budget: None,
            ..budgeted(None)
        };
        assert_eq!(board_settings(plain).unwrap().plan.trials, 3);
    }

    #[test]
    fn the_shipped_board_file_names_every_agent_spec_and_their_shared_script() {
        let agents =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/agents");
        let file = BoardFile::load(&agents.join("board.toml")).unwrap();
        let mut named: Vec<String> = file
            .specs
            .iter()
            .map(|spec| spec.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        named.sort();
        let mut specs: Vec<String> = std::fs::read_dir(&agents)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".toml") && name != "board.toml")
            .collect();
        specs.sort();
        assert_eq!(named, specs);
        assert_eq!(
            file.model_script,
            Some(agents.join("scripts/at-work.toml")),
            "the script every agent spec names in its [model]"
        );
    }
}
