//! A board: N different targets (agent CLIs) on one machine, each prepared and installed,
//! then their trials round-robin, then each staircase, and the table that puts them side
//! by side. What `clibench board` does.
//!
//! Round-robin: trial k of every target runs before trial k+1 of any, and the order of
//! the targets within a round rotates by one each round (A B C, B C A, C A B), so that
//! whatever the machine does meanwhile (a build next door, a CPU getting hot) lands on all
//! of them alike, and none always goes first after another's trial.
//!
//! Fair by construction: every target runs the same phases and trials with the same
//! terminal size ([`COLS`] × [`ROWS`], set on each spec's `[measure]`), each in its own
//! clean home (its own install, its own trial user as root), cold defined alike (the first
//! start after its install's settle). What is not alike, the spec keys whose values differ,
//! is listed under the table ([`differences`]).
//!
//! The output folder holds `board-schedule.json` (the targets and the order, written before
//! anything runs), one folder per target as `clibench run` writes it (`OUT/<name>/`, with
//! its `result.json`), and `board.json`, `board.md` and `board.html`.

use crate::pipeline::Error;
use crate::pipeline::orchestration::plan::{Plan, PlanSettings, SpecSource, Step};
use crate::pipeline::orchestration::runner::{Execution, Runner};
use crate::spec::Override;
use bench_core::board::{Board, Difference, Entry};
use bench_core::{Phase, ResultFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The terminal width every target of a board runs in.
pub const COLS: u16 = 120;
/// The terminal height every target of a board runs in.
pub const ROWS: u16 = 40;

/// What is wrong with a board before it runs, or with its results after.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// Fewer than two targets.
    #[error("a board needs at least two specs (got {count})")]
    TooFew {
        /// How many were given.
        count: usize,
    },
    /// Two specs would share an output folder.
    #[error("two specs are named `{name}` (by their file names); copy one under another name")]
    SameName {
        /// The name.
        name: String,
    },
    /// A spec file could not be read as TOML for the list of differences.
    #[error("failed to read {} to list what differs between the specs", path.display())]
    SpecText {
        /// The spec.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A spec file is not TOML (its plan would have said so first; kept for the race).
    #[error("{} is not TOML", path.display())]
    SpecToml {
        /// The spec.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// What the pipeline said.
    #[error(transparent)]
    Pipeline(#[from] Error),
}

impl BoardError {
    /// Whether the error is the user's input (exit code 2) rather than a failure.
    pub fn is_input(&self) -> bool {
        match self {
            BoardError::TooFew { .. } | BoardError::SameName { .. } => true,
            BoardError::SpecText { .. } | BoardError::SpecToml { .. } => true,
            BoardError::Pipeline(error) => error.is_input(),
        }
    }
}

/// What a board does.
#[derive(Debug, Clone)]
pub struct BoardSettings {
    /// The targets' specs, in column order.
    pub specs: Vec<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// Trials, phases, overrides (a scenario's, applied to every target), shared by all.
    pub plan: PlanSettings,
}

/// A checked board: each target's name and plan, and the order of their steps.
#[derive(Debug, Clone)]
pub struct BoardRun {
    /// The settings it was made with.
    pub settings: BoardSettings,
    /// Each target's name (its spec's file name without `.toml`), in column order.
    pub names: Vec<String>,
    /// Each target's plan, its output folder `OUT/<name>`.
    pub plans: Vec<Plan>,
    /// The order of the steps: `(target index, step)`.
    pub order: Vec<(usize, Step)>,
}

/// `OUT/board-schedule.json`: how the board was made.
#[derive(Debug, serde::Serialize)]
struct Schedule<'a> {
    targets: Vec<ScheduledTarget<'a>>,
    trials: u32,
    cols: u16,
    rows: u16,
    overrides: Vec<String>,
    steps: Vec<ScheduledStep<'a>>,
}

#[derive(Debug, serde::Serialize)]
struct ScheduledTarget<'a> {
    name: &'a str,
    spec: String,
}

#[derive(Debug, serde::Serialize)]
struct ScheduledStep<'a> {
    target: &'a str,
    phase: Phase,
    trial: u32,
}

impl BoardRun {
    /// Checks every spec with the shared settings; a bad spec or override fails here,
    /// before anything runs.
    pub fn new(settings: BoardSettings) -> Result<BoardRun, BoardError> {
        if settings.specs.len() < 2 {
            return Err(BoardError::TooFew {
                count: settings.specs.len(),
            });
        }
        let names = names(&settings.specs)?;
        let mut plans = Vec::new();
        for (spec, name) in settings.specs.iter().zip(&names) {
            let source = SpecSource::File(spec.clone());
            let out = settings.out.join(name);
            let plan = Plan::new(source.clone(), &out, settings.plan.clone())?;
            // The terminal size is the board's, on every target alike; a plan without
            // measure has no section to set it in.
            let plan = if plan.phases.contains(&Phase::Measure) {
                let mut plan_settings = settings.plan.clone();
                plan_settings.overrides.extend(terminal_overrides());
                Plan::new(source, &out, plan_settings)?
            } else {
                plan
            };
            plans.push(plan);
        }
        let order = round_robin(&plans.iter().map(Plan::steps).collect::<Vec<_>>());
        Ok(BoardRun {
            settings,
            names,
            plans,
            order,
        })
    }

    /// The output folder.
    pub fn out(&self) -> &Path {
        &self.settings.out
    }

    /// How many steps each phase has over the whole board, in pipeline order.
    pub fn steps_by_phase(&self) -> Vec<(Phase, usize)> {
        let mut counts: BTreeMap<Phase, usize> = BTreeMap::new();
        for (_, step) in &self.order {
            *counts.entry(step.phase).or_default() += 1;
        }
        counts.into_iter().collect()
    }

    /// Writes `OUT/board-schedule.json` and returns the runner of every target's steps
    /// in the round-robin order, each labelled with its target's name.
    pub fn runner(&self, execution: Execution) -> Result<Runner, Error> {
        std::fs::create_dir_all(self.out()).map_err(|source| Error::Io {
            action: "create the output folder",
            path: self.out().to_path_buf(),
            source,
        })?;
        let schedule = Schedule {
            targets: self
                .names
                .iter()
                .zip(&self.settings.specs)
                .map(|(name, spec)| ScheduledTarget {
                    name,
                    spec: spec.display().to_string(),
                })
                .collect(),
            trials: self.settings.plan.trials,
            cols: COLS,
            rows: ROWS,
            overrides: self
                .settings
                .plan
                .overrides
                .iter()
                .map(ToString::to_string)
                .collect(),
            steps: self
                .order
                .iter()
                .map(|&(target, step)| ScheduledStep {
                    target: &self.names[target],
                    phase: step.phase,
                    trial: step.trial,
                })
                .collect(),
        };
        // Invariant: the schedule holds only strings, numbers and derived Serialize types.
        let mut text = serde_json::to_string_pretty(&schedule).unwrap_or_default();
        text.push('\n');
        bench_core::io::write_atomic(&self.out().join("board-schedule.json"), text.as_bytes())?;
        let plans = self
            .names
            .iter()
            .cloned()
            .zip(self.plans.iter().cloned())
            .collect();
        Ok(Runner::interleaved(plans, self.order.clone(), execution))
    }

    /// The result files of the targets, in column order.
    pub fn results(&self) -> Vec<PathBuf> {
        self.plans
            .iter()
            .map(|plan| plan.out.join("result.json"))
            .collect()
    }

    /// Reads every target's result, makes the board and writes `OUT/board.json`,
    /// `OUT/board.md` and `OUT/board.html`. A target without a result (its prepare
    /// failed) is a column without values.
    pub fn write_board(&self) -> Result<WrittenBoard, BoardError> {
        let mut results = Vec::new();
        for path in self.results() {
            results.push(if path.exists() {
                ResultFile::load(&path).map_err(Error::ResultUnreadable)?
            } else {
                ResultFile::new(bench_core::Request::new(
                    "0".repeat(40),
                    bench_core::Role::Base,
                ))
            });
        }
        let entries: Vec<Entry<'_>> = self
            .names
            .iter()
            .zip(&results)
            .map(|(name, result)| Entry::new(name, &result.side))
            .collect();
        let board = Board::new(&entries, differences(&self.settings.specs)?);
        let markdown = bench_core::export::board::markdown(&board);
        let sides: Vec<&bench_core::Side> = results.iter().map(|result| &result.side).collect();
        let html = bench_core::export::html::board(&board, &sides);
        let json = bench_core::export::board::json(&board);
        for (file, text) in [
            ("board.md", &markdown),
            ("board.html", &html),
            ("board.json", &json),
        ] {
            bench_core::io::write_atomic(&self.out().join(file), text.as_bytes())
                .map_err(Error::from)?;
        }
        Ok(WrittenBoard { board, markdown })
    }
}

/// What [`BoardRun::write_board`] made.
#[derive(Debug)]
pub struct WrittenBoard {
    /// The board.
    pub board: Board,
    /// `board.md`'s text.
    pub markdown: String,
}

/// `[measure] cols` and `rows`: the board's terminal size.
fn terminal_overrides() -> [Override; 2] {
    [
        Override::table_key("measure", "cols", COLS.to_string()),
        Override::table_key("measure", "rows", ROWS.to_string()),
    ]
}

/// Each spec's name on the board: its file name without `.toml`; two alike are an error.
fn names(specs: &[PathBuf]) -> Result<Vec<String>, BoardError> {
    let mut seen = BTreeSet::new();
    specs
        .iter()
        .map(|spec| {
            let name = spec
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_else(|| spec.display().to_string());
            if seen.insert(name.clone()) {
                Ok(name)
            } else {
                Err(BoardError::SameName { name })
            }
        })
        .collect()
}

/// The order of N targets' steps: every target's prepare and install steps first (in
/// target order), then each trial phase in pipeline order, its trial k of every target
/// before trial k+1 of any, the targets of round k rotated by k; then every staircase.
pub fn round_robin(targets: &[Vec<Step>]) -> Vec<(usize, Step)> {
    let count = targets.len();
    let mut out: Vec<(usize, Step)> = Vec::new();
    let of_phase = |target: usize, keep: &dyn Fn(Phase) -> bool| -> Vec<(usize, Step)> {
        targets[target]
            .iter()
            .filter(|step| keep(step.phase))
            .map(|&step| (target, step))
            .collect()
    };
    for phase in [Phase::Prepare, Phase::Install] {
        for target in 0..count {
            out.extend(of_phase(target, &|p| p == phase));
        }
    }
    for phase in [Phase::Measure, Phase::Runtime, Phase::Ui, Phase::Session] {
        let rounds: Vec<Vec<(usize, Step)>> =
            (0..count).map(|t| of_phase(t, &|p| p == phase)).collect();
        let longest = rounds.iter().map(Vec::len).max().unwrap_or(0);
        for round in 0..longest {
            for offset in 0..count {
                let target = (round + offset) % count;
                if let Some(&step) = rounds[target].get(round) {
                    out.push(step);
                }
            }
        }
    }
    for target in 0..count {
        out.extend(of_phase(target, &|p| p == Phase::Staircase));
    }
    out
}

/// The top-level keys and tables that say how a target is obtained and named rather than
/// how it runs; they differ between any two agents and say nothing about fairness.
const IDENTITY: [&str; 8] = [
    "name",
    "description",
    "package",
    "version",
    "versions",
    "build",
    "artifacts",
    "origin",
];

/// The `[install]` keys that name the package, its program and its checks: they differ
/// between any two agents as their names do.
const INSTALL_IDENTITY: [&str; 7] = [
    "install.command",
    "install.executable",
    "install.files",
    "install.version_command",
    "install.version_contains",
    "install.inventory",
    "install.inventory_file",
];

/// The spec keys (dotted, arrays as one value) whose values differ between the specs,
/// less [`IDENTITY`]'s and [`INSTALL_IDENTITY`]'s, each with every spec's value as TOML.
pub fn differences(specs: &[PathBuf]) -> Result<Vec<Difference>, BoardError> {
    let mut flat: Vec<BTreeMap<String, String>> = Vec::new();
    for spec in specs {
        let text = std::fs::read_to_string(spec).map_err(|source| BoardError::SpecText {
            path: spec.clone(),
            source,
        })?;
        let table: toml::Table = text.parse().map_err(|source| BoardError::SpecToml {
            path: spec.clone(),
            source: Box::new(source),
        })?;
        let mut keys = BTreeMap::new();
        for (key, value) in &table {
            if !IDENTITY.contains(&key.as_str()) {
                flatten(key, value, &mut keys);
            }
        }
        keys.retain(|key, _| !INSTALL_IDENTITY.contains(&key.as_str()));
        flat.push(keys);
    }
    let every_key: BTreeSet<&String> = flat.iter().flat_map(BTreeMap::keys).collect();
    Ok(every_key
        .into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> =
                flat.iter().map(|keys| keys.get(key).cloned()).collect();
            let first = &values[0];
            values
                .iter()
                .any(|value| value != first)
                .then(|| Difference {
                    key: key.clone(),
                    values,
                })
        })
        .collect())
}

/// `value` under `key` as dotted keys: tables opened, anything else as its TOML text.
fn flatten(key: &str, value: &toml::Value, out: &mut BTreeMap<String, String>) {
    match value {
        toml::Value::Table(table) => {
            for (inner, value) in table {
                flatten(&format!("{key}.{inner}"), value, out);
            }
        }
        other => {
            out.insert(key.to_owned(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(trials: u32) -> Vec<Step> {
        let mut steps = vec![
            Step {
                phase: Phase::Prepare,
                trial: 0,
            },
            Step {
                phase: Phase::Install,
                trial: 0,
            },
        ];
        for phase in [Phase::Measure, Phase::Session] {
            steps.extend((0..trials).map(|trial| Step { phase, trial }));
        }
        steps.push(Step {
            phase: Phase::Staircase,
            trial: 0,
        });
        steps
    }

    #[test]
    fn round_robin_runs_trial_k_of_every_target_before_trial_k_plus_one_rotating() {
        let order = round_robin(&[steps(3), steps(3), steps(3)]);
        let measure: Vec<(usize, u32)> = order
            .iter()
            .filter(|(_, step)| step.phase == Phase::Measure)
            .map(|&(target, step)| (target, step.trial))
            .collect();
        assert_eq!(
            measure,
            [
                (0, 0),
                (1, 0),
                (2, 0),
                (1, 1),
                (2, 1),
                (0, 1),
                (2, 2),
                (0, 2),
                (1, 2)
            ]
        );
        // Every install before any trial, every staircase after the last one.
        let first_trial = order
            .iter()
            .position(|(_, step)| step.phase == Phase::Measure)
            .unwrap();
        assert!(
            order[..first_trial]
                .iter()
                .all(|(_, step)| matches!(step.phase, Phase::Prepare | Phase::Install))
        );
        assert_eq!(order[first_trial..].len(), 3 * 3 * 2 + 3);
        assert!(
            order[order.len() - 3..]
                .iter()
                .all(|(_, step)| step.phase == Phase::Staircase)
        );
    }

    #[test]
    fn each_targets_own_steps_keep_their_order() {
        let order = round_robin(&[steps(4), steps(2)]);
        for target in 0..2 {
            let own: Vec<Step> = order
                .iter()
                .filter(|(t, _)| *t == target)
                .map(|&(_, step)| step)
                .collect();
            assert_eq!(own, steps(if target == 0 { 4 } else { 2 }));
        }
    }

    #[test]
    fn two_specs_of_one_name_are_refused_before_anything_runs() {
        let error = names(&[PathBuf::from("a/pi.toml"), PathBuf::from("b/pi.toml")]).unwrap_err();
        assert!(error.is_input());
        assert!(error.to_string().contains("`pi`"), "{error}");
    }

    #[test]
    fn differences_list_the_keys_whose_values_differ_but_not_identity() {
        let folder = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = folder.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let a = write(
            "a.toml",
            "name = \"a\"\nversion = \"1\"\n[session.env]\nTELEMETRY = \"0\"\nSAME = \"x\"\n",
        );
        let b = write(
            "b.toml",
            "name = \"b\"\nversion = \"2\"\n[session.env]\nSAME = \"x\"\n",
        );
        let found = differences(&[a, b]).unwrap();
        assert_eq!(
            found,
            [Difference {
                key: "session.env.TELEMETRY".into(),
                values: vec![Some("\"0\"".into()), None],
            }]
        );
    }
}
