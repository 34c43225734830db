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
//! is listed under the table (`differences`).
//!
//! The output folder holds `board-schedule.json` (the targets and the order, written before
//! anything runs), one folder per target as `clibench run` writes it (`OUT/<name>/`, with
//! its `result.json`), and `board.json`, `board.md` and `board.html`.

use crate::pipeline::Error;
use crate::pipeline::orchestration::board_rounds::{RoundGate, Rounds};
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
    /// The shared model script cannot be read or is not a script.
    #[error("the model script {} cannot be used", path.display())]
    ModelScript {
        /// The script.
        path: PathBuf,
        /// Why.
        #[source]
        source: bench_model::ScriptError,
    },
    /// The shared model script has no turn with a prompt: nothing to type.
    #[error(
        "the model script {} has no turn with a `prompt` (turns[N].prompt: what a person \
         types), so no session has anything to type",
        path.display()
    )]
    ScriptWithoutPrompts {
        /// The script.
        path: PathBuf,
    },
    /// A scenario and a shared script would both set `[model] script`.
    #[error("--scenario and a shared model script both set each spec's [model] script; give one")]
    ScenarioAndScript,
    /// What the pipeline said.
    #[error(transparent)]
    Pipeline(#[from] Error),
}

impl BoardError {
    /// Whether the error is the user's input (exit code 2) rather than a failure.
    pub fn is_input(&self) -> bool {
        match self {
            BoardError::TooFew { .. } | BoardError::SameName { .. } => true,
            BoardError::ModelScript { .. } | BoardError::ScriptWithoutPrompts { .. } => true,
            BoardError::ScenarioAndScript => true,
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
    /// With a budget, `trials` is the most rounds.
    pub plan: PlanSettings,
    /// Run rounds until this much time has passed since the first trial started (at
    /// least `MIN_BUDGET_ROUNDS`, at most
    /// `plan.trials`).
    pub budget: Option<std::time::Duration>,
    /// One model script every target plays, in place of each spec's own.
    pub model_script: Option<PathBuf>,
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
    /// Decides which rounds run, and says afterwards how many did.
    pub gate: RoundGate,
    /// The targets the shared model script does not apply to (no `[model]` and
    /// `[session]`), by index.
    pub script_not_applied: Vec<usize>,
}

/// `OUT/board-schedule.json`: how the board was made.
#[derive(Debug, serde::Serialize)]
struct Schedule<'a> {
    targets: Vec<ScheduledTarget<'a>>,
    trials: u32,
    budget_seconds: Option<f64>,
    model_script: Option<String>,
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
        let script = settings
            .model_script
            .as_deref()
            .map(|path| shared_script(path, &settings.plan.overrides))
            .transpose()?;
        let mut plans = Vec::new();
        let mut script_not_applied = Vec::new();
        for (index, (spec, name)) in settings.specs.iter().zip(&names).enumerate() {
            let source = SpecSource::File(spec.clone());
            let out = settings.out.join(name);
            let mut plan_settings = settings.plan.clone();
            if let Some(script) = &script {
                if talks_to_a_model(spec, &settings.plan.overrides)? {
                    // Before the command line's own, which win.
                    let own = std::mem::replace(&mut plan_settings.overrides, script.clone());
                    plan_settings.overrides.extend(own);
                } else {
                    script_not_applied.push(index);
                }
            }
            let plan = Plan::new(source.clone(), &out, plan_settings.clone())?;
            // The terminal size is the board's, on every target alike; a plan without
            // measure has no section to set it in.
            let plan = if plan.phases.contains(&Phase::Measure) {
                plan_settings.overrides.extend(terminal_overrides());
                Plan::new(source, &out, plan_settings)?
            } else {
                plan
            };
            plans.push(plan);
        }
        let steps: Vec<Vec<Step>> = plans.iter().map(Plan::steps).collect();
        let order = match settings.budget {
            Some(_) => round_major(&steps),
            None => round_robin(&steps),
        };
        let gate = RoundGate::new(settings.rounds());
        Ok(BoardRun {
            settings,
            names,
            plans,
            order,
            gate,
            script_not_applied,
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
            budget_seconds: self.settings.budget.map(|budget| budget.as_secs_f64()),
            model_script: self
                .settings
                .model_script
                .as_ref()
                .map(|path| path.display().to_string()),
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
        let gate = self.gate.clone();
        Ok(Runner::interleaved(plans, self.order.clone(), execution)
            .gate(Box::new(move |_, step, _| gate.allow(step))))
    }

    /// The rounds that ran and why no more did, and the shared script and whom it did
    /// not apply to.
    pub fn sampling(&self) -> bench_core::board::Sampling {
        bench_core::board::Sampling {
            model_script: self
                .settings
                .model_script
                .as_ref()
                .map(|path| path.display().to_string()),
            script_not_applied: self
                .script_not_applied
                .iter()
                .map(|&index| self.names[index].clone())
                .collect(),
            ..self.gate.sampling()
        }
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
        let board =
            Board::new(&entries, differences(&self.settings.specs)?).with_sampling(self.sampling());
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
    /// The board as `board.json` holds it.
    pub board: Board,
    /// `board.md`'s text.
    pub markdown: String,
}

impl BoardSettings {
    /// How many rounds the board may run: `plan.trials`, within the budget if one is set.
    pub fn rounds(&self) -> Rounds {
        Rounds {
            max: self.plan.trials,
            budget: self.budget,
        }
    }
}

/// The overrides that make a spec play the script at `path`: `[model] script` (absolute,
/// as a spec's own is read relative to its folder) and `[session] turns`, each prompted
/// turn once, so that every target plays the same turns whatever its spec says. Refused
/// beside a scenario, which sets the script too.
fn shared_script(path: &Path, overrides: &[Override]) -> Result<Vec<Override>, BoardError> {
    if overrides.iter().any(|o| o.key() == "model.script") {
        return Err(BoardError::ScenarioAndScript);
    }
    let script_error = |source| BoardError::ModelScript {
        path: path.to_path_buf(),
        source,
    };
    let script = bench_model::Script::load(path).map_err(script_error)?;
    script.compile().map_err(script_error)?;
    let prompted = script
        .turns
        .iter()
        .filter(|turn| turn.prompt.is_some())
        .count();
    if prompted == 0 {
        return Err(BoardError::ScriptWithoutPrompts {
            path: path.to_path_buf(),
        });
    }
    let absolute = std::path::absolute(path).map_err(|source| {
        script_error(bench_model::ScriptError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    let quoted = toml::Value::String(absolute.display().to_string()).to_string();
    Ok(vec![
        Override::table_key("model", "script", quoted),
        Override::table_key("session", "turns", prompted.to_string()),
    ])
}

/// Whether the spec at `path` (with `overrides`) has the `[model]` and `[session]` of an
/// agent at work, which a shared model script replaces the script of.
fn talks_to_a_model(path: &Path, overrides: &[Override]) -> Result<bool, BoardError> {
    let spec = crate::spec::load_with(path, overrides).map_err(Error::from)?;
    Ok(spec.model.is_some() && spec.session.is_some())
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
pub(crate) fn round_robin(targets: &[Vec<Step>]) -> Vec<(usize, Step)> {
    rotated(targets, &TRIAL_PHASES.map(|phase| vec![phase]))
}

/// The order of a board with a budget: as [`round_robin`], but round k holds trial k of
/// every trial phase (measure, then runtime, ui, session) of every target, so that a board
/// stopped between two rounds has run every phase alike, and the budget bounds the whole.
/// A target's measure trial k then starts in the home its session trial k-1 left.
pub(crate) fn round_major(targets: &[Vec<Step>]) -> Vec<(usize, Step)> {
    rotated(targets, &[TRIAL_PHASES.to_vec()])
}

const TRIAL_PHASES: [Phase; 4] = [Phase::Measure, Phase::Runtime, Phase::Ui, Phase::Session];

/// Prepare and install of every target, then for each block of trial phases its rounds
/// (round k: for each phase of the block, trial k of every target, rotated by k), then
/// every staircase.
fn rotated(targets: &[Vec<Step>], blocks: &[Vec<Phase>]) -> Vec<(usize, Step)> {
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
    for block in blocks {
        let longest = targets
            .iter()
            .flat_map(|steps| steps.iter().filter(|step| block.contains(&step.phase)))
            .map(|step| step.trial + 1)
            .max()
            .unwrap_or(0);
        for round in 0..longest {
            for &phase in block {
                for offset in 0..count {
                    let target = (round as usize + offset) % count;
                    let step = Step {
                        phase,
                        trial: round,
                    };
                    if targets[target].contains(&step) {
                        out.push((target, step));
                    }
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
pub(crate) fn differences(specs: &[PathBuf]) -> Result<Vec<Difference>, BoardError> {
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
pub(super) mod tests {
    use super::*;

    /// A target's steps: prepare, install, `trials` of measure and of session, and the
    /// staircase (board_estimate's tests use it too).
    pub(in crate::pipeline::orchestration) fn steps(trials: u32) -> Vec<Step> {
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
    fn with_a_budget_a_round_holds_every_phase_and_stops_whole() {
        let order = round_major(&[steps(3), steps(3)]);
        let trials: Vec<(usize, Phase, u32)> = order
            .iter()
            .filter(|(_, step)| matches!(step.phase, Phase::Measure | Phase::Session))
            .map(|&(target, step)| (target, step.phase, step.trial))
            .collect();
        assert_eq!(
            &trials[..8],
            [
                (0, Phase::Measure, 0),
                (1, Phase::Measure, 0),
                (0, Phase::Session, 0),
                (1, Phase::Session, 0),
                (1, Phase::Measure, 1),
                (0, Phase::Measure, 1),
                (1, Phase::Session, 1),
                (0, Phase::Session, 1),
            ]
        );
        assert_eq!(trials.len(), 12);
        assert_eq!(
            order.len(),
            2 * 2 + 12 + 2,
            "prepare, install, trials, staircases"
        );
    }

    /// The demo's spec (an agent at work) as `agent.toml` and a spec without `[model]`
    /// and `[session]` as `plain.toml`, in `dir`.
    fn agent_and_plain(dir: &Path) -> [PathBuf; 2] {
        let agent = dir.join("agent.toml");
        let text = crate::demo::spec_text(Path::new("/src"), &"0".repeat(40));
        std::fs::write(&agent, text).unwrap();
        let plain = dir.join("plain.toml");
        std::fs::write(
            &plain,
            "name = \"plain\"\n[measure]\ncommand = [\"sh\"]\nready = \"first-frame\"\n",
        )
        .unwrap();
        [agent, plain]
    }

    #[test]
    fn a_shared_script_replaces_an_agents_and_says_it_does_not_apply_to_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.toml");
        std::fs::write(
            &script,
            "[[turns]]\nprompt = \"one\"\ntext = \"a\"\n[[turns]]\nprompt = \"two\"\n\
             text = \"b\"\n[[turns]]\nprompt = \"three\"\ntext = \"c\"\n",
        )
        .unwrap();
        let settings = BoardSettings {
            specs: agent_and_plain(dir.path()).to_vec(),
            out: dir.path().join("out"),
            plan: PlanSettings {
                phases: Some(vec![Phase::Prepare, Phase::Install, Phase::Measure]),
                ..PlanSettings::default()
            },
            budget: None,
            model_script: Some(script.clone()),
        };
        let board = BoardRun::new(settings).unwrap();
        assert_eq!(board.script_not_applied, [1]);
        let agent: Vec<String> = board.plans[0]
            .settings
            .overrides
            .iter()
            .map(ToString::to_string)
            .collect();
        let absolute = std::path::absolute(&script).unwrap();
        assert_eq!(
            agent[..2],
            [
                format!("model.script=\"{}\"", absolute.display()),
                "session.turns=3".to_owned()
            ]
        );
        assert!(
            board.plans[1]
                .settings
                .overrides
                .iter()
                .all(|o| !o.key().starts_with("model")),
            "the plain spec keeps no [model] it never had"
        );
        let sampling = board.sampling();
        assert_eq!(sampling.script_not_applied, ["plain"]);
        assert_eq!(
            sampling.model_script.as_deref(),
            Some(script.display().to_string().as_str())
        );
    }

    #[test]
    fn a_script_without_prompts_or_beside_a_scenario_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.toml");
        std::fs::write(&script, "[[turns]]\ntext = \"a\"\n").unwrap();
        let settings = |overrides| BoardSettings {
            specs: agent_and_plain(dir.path()).to_vec(),
            out: dir.path().join("out"),
            plan: PlanSettings {
                overrides,
                ..PlanSettings::default()
            },
            budget: None,
            model_script: Some(script.clone()),
        };
        let error = BoardRun::new(settings(Vec::new())).unwrap_err();
        assert!(error.is_input());
        assert!(
            error.to_string().contains("has no turn with a `prompt`"),
            "{error}"
        );
        let scenario = crate::spec::Scenario::Idle.overrides();
        let error = BoardRun::new(settings(scenario)).unwrap_err();
        assert!(matches!(error, BoardError::ScenarioAndScript), "{error}");
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
