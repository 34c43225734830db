//! Settings that do not go together, or values that cannot be used: the command line's
//! usage errors (exit code 2).

use bench_cli::pipeline::SpecPathError;
use bench_cli::spec::SpecError;

/// Why a command's settings cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `--noise FRACTION` twice.
    #[error("--noise FRACTION is given twice; set one metric's floor with METRIC=FRACTION")]
    NoiseTwice,
    /// `--noise METRIC=...` twice for one metric.
    #[error("--noise {metric}=... is given twice")]
    MetricNoiseTwice {
        /// The metric.
        metric: bench_core::Metric,
    },
    /// `--drift` set one kind's spread twice.
    #[error("--drift sets the {kind} spread twice")]
    DriftTwice {
        /// The kind of metric: `timing`, `cpu` or `memory`.
        kind: &'static str,
    },
    /// A phase name that is not one.
    #[error("--phases: unknown phase '{name}'; expected some of {expected}")]
    UnknownPhase {
        /// The name given.
        name: String,
        /// Every phase's name, comma-separated.
        expected: String,
    },
    /// `--budget`, `--max-trials` or `--target-mde` without `--trials auto`.
    #[error("--budget, --max-trials and --target-mde go with --trials auto")]
    AutoOnly,
    /// `--target-mde` outside `0..1`.
    #[error("--target-mde is a fraction in 0..1 (0.05 = ±5%)")]
    TargetMde,
    /// `--seed` with a sequential schedule.
    #[error("--seed orders pairs, which a sequential schedule has none of")]
    SeedWithoutPairs,
    /// `--memory-trials` with a schedule that settles every trial.
    #[error("--memory-trials goes with --schedule tight or duet")]
    MemoryTrialsWithoutPairs,
    /// `--trials` below the rounds every budget runs.
    #[error(
        "a budget runs at least 3 rounds, so that every row can be ranked; --trials {trials} \
         is fewer (with --budget, --trials is the most rounds)"
    )]
    BudgetTrials {
        /// The trials given.
        trials: u32,
    },
    /// The spec could not be read. Its message says where and why.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The spec path cannot be used.
    #[error(transparent)]
    SpecPath(#[from] SpecPathError),
    /// The thresholds a result recorded cannot be read.
    #[error(transparent)]
    Recorded(#[from] bench_core::compare::thresholds::RecordedError),
}

impl SettingsError {
    /// Whether the caller gave a wrong value (rather than the file system failing).
    pub fn is_input(&self) -> bool {
        match self {
            SettingsError::SpecPath(error) => error.is_input(),
            _ => true,
        }
    }
}
