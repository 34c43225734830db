//! What a run will do: the spec, the output folder, the phases and their trials, in order.

use crate::pipeline::Error;
use crate::pipeline::orchestration::phase_run::load_spec;
use crate::spec::{Override, Spec};
use bench_core::Phase;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where a run's spec comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecSource {
    /// A spec file.
    File(PathBuf),
    /// The built-in demo agent, written into `OUT/demo` when the run starts.
    Demo,
}

/// A spec path that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SpecPathError {
    /// Nothing, or something other than a file, is at the path.
    #[error("spec {} does not exist or is not a file", path.display())]
    NotAFile {
        /// The path given.
        path: PathBuf,
    },
    /// The path could not be made absolute.
    #[error("resolving {}", path.display())]
    Resolve {
        /// The path given.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl SpecPathError {
    /// Whether the caller gave a wrong path (rather than the file system failing).
    pub fn is_input(&self) -> bool {
        matches!(self, SpecPathError::NotAFile { .. })
    }
}

impl SpecSource {
    /// The spec file at `path`, made absolute (phases run in other folders), or the demo
    /// when there is no path.
    pub fn resolve(path: Option<&Path>) -> Result<SpecSource, SpecPathError> {
        let Some(path) = path else {
            return Ok(SpecSource::Demo);
        };
        if !path.is_file() {
            return Err(SpecPathError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        // The demo's spec as shipped (`examples/demo-agent/demo.toml`, which docs/spec.md
        // shows as an example) is the demo: its source and commit are placeholders that only
        // the demo's own materialising fills in. An unreadable file is left to the loader,
        // which says why with the path.
        if std::fs::read_to_string(path).is_ok_and(|text| text == crate::demo::SPEC) {
            return Ok(SpecSource::Demo);
        }
        path.canonicalize()
            .map(SpecSource::File)
            .map_err(|source| SpecPathError::Resolve {
                path: path.to_path_buf(),
                source,
            })
    }

    /// The output folder of a run when none is given: `clibench-out/<target>-<unix time>`,
    /// the target being the spec file's stem or `demo`.
    pub fn default_out(&self) -> PathBuf {
        self.out_named("")
    }

    /// The output folder of an A/B run when none is given:
    /// `clibench-out/ab-<target>-<unix time>`.
    pub fn default_ab_out(&self) -> PathBuf {
        self.out_named("ab-")
    }

    fn out_named(&self, prefix: &str) -> PathBuf {
        let name = match self {
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
        PathBuf::from("clibench-out").join(format!("{prefix}{name}-{now}"))
    }
}

/// How many trials and which phases, before a spec is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanSettings {
    /// Trials of the measure, runtime and ui phases.
    pub trials: u32,
    /// Measure trials run before the [`trials`](Self::trials) ones: `ab`'s memory trials
    /// under a paired schedule, which settle and read memory and would otherwise take the
    /// place of timed pairs (`--trials 5` gave 2 of them).
    pub extra_measure_trials: u32,
    /// Installations, each into a fresh home (as root, a fresh user).
    pub installs: u32,
    /// The phases asked for; `None` runs every phase the spec describes. A phase asked for
    /// that the spec does not describe is an error.
    pub phases: Option<Vec<Phase>>,
    /// Keep the trial users and homes after the run.
    pub keep_users: bool,
    /// Fetch the source from here instead of the spec's `source.repository`.
    pub repository: Option<String>,
    /// Build this commit instead of the spec's `source.commit`.
    pub commit: Option<String>,
    /// `--set KEY=VALUE` overrides of the spec's keys.
    pub overrides: Vec<Override>,
    /// Run only this shard's slice of the trials (prepare and install run on every shard).
    pub shard: Option<Shard>,
    /// Run every trial even when trial 0 of its phase failed (by default the later trials
    /// and, after measure, the staircase are skipped as "same failure as trial 0").
    pub keep_going: bool,
    /// Drop the kernel's page cache (`sync`, then 3 into `/proc/sys/vm/drop_caches`) before
    /// each measure trial, so that its cold start reads the target's files from disk. Root
    /// only; it affects the whole machine.
    pub drop_caches: bool,
}

/// `--shard K/N`: shard K (from 1) of N runs the trials `i` with `i % N == K - 1`, so N
/// machines together run every trial once; the staircase (trial 0) runs on shard 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Shard {
    /// K, from 1 to `count`.
    pub index: u32,
    /// N, at least 1.
    pub count: u32,
}

impl Shard {
    /// Whether trial `trial` is this shard's.
    pub fn has(self, trial: u32) -> bool {
        trial % self.count == self.index - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Text that is not a shard `K/N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a shard; expected K/N with 1 <= K <= N, e.g. 2/4")]
pub struct ShardError {
    /// The text given.
    pub text: String,
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let parsed = text.split_once('/').and_then(|(k, n)| {
            Some((k.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?))
        });
        match parsed {
            Some((index, count)) if count >= 1 && (1..=count).contains(&index) => {
                Ok(Shard { index, count })
            }
            _ => Err(ShardError {
                text: text.to_owned(),
            }),
        }
    }
}

impl Default for PlanSettings {
    fn default() -> PlanSettings {
        PlanSettings {
            trials: 3,
            extra_measure_trials: 0,
            installs: 1,
            phases: None,
            keep_users: false,
            repository: None,
            commit: None,
            overrides: Vec::new(),
            shard: None,
            keep_going: false,
            drop_caches: false,
        }
    }
}

/// One phase of one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Step {
    /// Which phase runs.
    pub phase: Phase,
    /// The trial (for install, the install index).
    pub trial: u32,
}

impl Step {
    /// "measure trial 1".
    pub fn label(self) -> String {
        format!("{} trial {}", self.phase, self.trial)
    }
}

/// A checked plan: its spec parses, its overrides apply, and every phase it will run is
/// described by the spec.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where the spec comes from.
    pub spec: SpecSource,
    /// The output folder.
    pub out: PathBuf,
    /// The settings it was made with.
    pub settings: PlanSettings,
    /// The phases that will run, in pipeline order.
    pub phases: Vec<Phase>,
    /// The phases skipped because the spec does not describe them (only when no phases
    /// were asked for).
    pub skipped: Vec<Phase>,
}

impl Plan {
    /// Checks `settings` against the spec: a spec that does not parse fails here, with its
    /// line and column, before any phase runs or any user is made.
    pub fn new(spec: SpecSource, out: &Path, settings: PlanSettings) -> Result<Plan, Error> {
        if settings.trials == 0 {
            return Err(Error::ZeroCount { what: "trials" });
        }
        if settings.installs == 0 {
            return Err(Error::ZeroCount { what: "installs" });
        }
        if settings.drop_caches {
            crate::pipeline::orchestration::caches_linux::check_can_drop(Some(Path::new(
                crate::pipeline::DROP_CACHES,
            )))?;
        }
        let asked = settings.phases.is_some();
        let mut phases = settings
            .phases
            .clone()
            .unwrap_or_else(|| Phase::ALL.to_vec());
        phases.sort();
        phases.dedup();
        let (phases, skipped, builds) = match &spec {
            SpecSource::File(path) => {
                let loaded = load_spec(
                    path,
                    &settings.overrides,
                    settings.repository.as_deref(),
                    settings.commit.as_deref(),
                )?;
                let builds = loaded.source.is_some() || !loaded.artifacts.is_empty();
                let (run, skipped) = described_phases(&loaded, path, &phases, asked)?;
                (run, skipped, builds)
            }
            // The demo describes every phase (a test holds it to that); its overrides are
            // checked against its spec as it will be written.
            SpecSource::Demo => {
                let text = crate::demo::spec_text(Path::new("/demo/source"), &"0".repeat(40));
                crate::spec::parse_with(&text, "the demo's spec", &settings.overrides)?;
                (phases, Vec::new(), true)
            }
        };
        if asked {
            needs_install(&phases, builds)?;
        }
        Ok(Plan {
            spec,
            out: out.to_path_buf(),
            settings,
            phases,
            skipped,
        })
    }

    /// A plan of every phase `spec` describes, with the default settings.
    pub fn for_spec_file(spec: &Path, out: &Path) -> Result<Plan, Error> {
        Plan::new(
            SpecSource::File(spec.to_path_buf()),
            out,
            PlanSettings::default(),
        )
    }

    /// The steps, in order: prepare once, each install, then each trial of the measure,
    /// runtime and ui phases, and the staircase once. With a shard, only its trials of the
    /// measure, runtime, ui and staircase phases.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        for &phase in &self.phases {
            let (trials, sharded) = match phase {
                Phase::Prepare => (1, false),
                Phase::Staircase => (1, true),
                Phase::Install => (self.settings.installs, false),
                Phase::Measure => (
                    (self.settings.trials + self.settings.extra_measure_trials)
                        .min(bench_core::MAX_TRIAL + 1),
                    true,
                ),
                Phase::Runtime | Phase::Ui | Phase::Session => (self.settings.trials, true),
            };
            steps.extend(
                (0..trials)
                    .filter(|&trial| match self.settings.shard {
                        Some(shard) if sharded => shard.has(trial),
                        _ => true,
                    })
                    .map(|trial| Step { phase, trial }),
            );
        }
        steps
    }
}

/// A run's phases after install need the trial user install makes, and an install of a
/// built target needs prepare's artifacts; a run starts in a fresh folder, so asking for
/// `--phases measure` alone can only fail, once per trial. Said once, before anything runs.
fn needs_install(phases: &[Phase], builds: bool) -> Result<(), Error> {
    let Some(&phase) = phases.iter().find(|&&phase| phase > Phase::Install) else {
        return Ok(());
    };
    let lacks_install = !phases.contains(&Phase::Install);
    let lacks_prepare = builds && !phases.contains(&Phase::Prepare);
    if !lacks_install && !lacks_prepare {
        return Ok(());
    }
    let join = |phases: &[Phase]| {
        phases
            .iter()
            .map(Phase::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut suggested = phases.to_vec();
    suggested.push(Phase::Install);
    if builds {
        suggested.push(Phase::Prepare);
    }
    suggested.sort();
    suggested.dedup();
    let (phase, needs) = match (lacks_install, lacks_prepare) {
        (true, true) => (phase, "prepare and install (install makes its trial user)"),
        (true, false) => (phase, "install, which makes its trial user"),
        _ => (Phase::Install, "prepare's artifacts"),
    };
    Err(Error::PhasesNeedInstall {
        asked: join(phases),
        phase,
        needs,
        suggested: join(&suggested),
    })
}

/// Whether the spec has the section `phase` needs (prepare and install need none beyond
/// the required `[install]`).
pub(crate) fn describes(spec: &Spec, phase: Phase) -> bool {
    match phase {
        Phase::Prepare | Phase::Install => true,
        Phase::Measure => spec.measure.is_some(),
        Phase::Runtime => spec.runtime.is_some(),
        Phase::Ui => spec.ui.is_some(),
        Phase::Session => spec.session.is_some(),
        Phase::Staircase => spec.staircase.is_some(),
    }
}

/// The phases to run and the ones skipped. By default every phase the spec describes runs
/// (an install-only spec has no kernel to measure); a phase asked for that the spec does
/// not describe is an error.
fn described_phases(
    spec: &Spec,
    path: &Path,
    phases: &[Phase],
    asked: bool,
) -> Result<(Vec<Phase>, Vec<Phase>), Error> {
    let (run, skipped): (Vec<Phase>, Vec<Phase>) =
        phases.iter().partition(|&&phase| describes(spec, phase));
    if asked && let Some(&missing) = skipped.first() {
        return Err(Error::PhaseNotDescribed {
            phase: missing,
            spec: path.to_path_buf(),
        });
    }
    Ok((run, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(phases: &[Phase], trials: u32, installs: u32) -> Plan {
        let settings = PlanSettings {
            trials,
            installs,
            phases: Some(phases.to_vec()),
            ..PlanSettings::default()
        };
        Plan::new(SpecSource::Demo, Path::new("out"), settings).unwrap()
    }

    #[test]
    fn steps_run_prepare_and_staircase_once_and_the_rest_per_trial() {
        let labels: Vec<String> = plan(&Phase::ALL, 2, 1)
            .steps()
            .iter()
            .map(|step| step.label())
            .collect();
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
                "session trial 0",
                "session trial 1",
                "staircase trial 0",
            ]
        );
    }

    #[test]
    fn shards_split_the_trials_and_all_prepare_and_install() {
        let mut all = Vec::new();
        for index in 1..=3 {
            let mut plan = plan(&Phase::ALL, 7, 1);
            plan.settings.shard = Some(Shard { index, count: 3 });
            let steps = plan.steps();
            assert_eq!(steps[0].phase, Phase::Prepare);
            assert_eq!(steps[1].phase, Phase::Install);
            all.extend(
                steps
                    .into_iter()
                    .filter(|step| step.phase == Phase::Measure),
            );
            if index == 2 {
                let measure: Vec<u32> = plan
                    .steps()
                    .iter()
                    .filter(|step| step.phase == Phase::Measure)
                    .map(|step| step.trial)
                    .collect();
                assert_eq!(measure, [1, 4]);
                assert!(plan.steps().iter().all(|s| s.phase != Phase::Staircase));
            }
        }
        let mut trials: Vec<u32> = all.iter().map(|step| step.trial).collect();
        trials.sort();
        assert_eq!(trials, (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn shards_parse_as_k_of_n() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/2/3"] {
            let error = bad.parse::<Shard>().unwrap_err();
            assert_eq!(error.text, bad);
            assert!(error.to_string().contains("expected K/N"), "{bad}: {error}");
        }
    }

    #[test]
    fn installs_count_separately_from_trials() {
        assert_eq!(plan(&[Phase::Install], 5, 2).steps().len(), 2);
    }

    #[test]
    fn later_phases_without_prepare_and_install_are_refused_once() {
        let error = needs_install(&[Phase::Measure], true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--phases measure: measure needs prepare and install (install makes its trial \
             user), and a run starts in a fresh folder; use `--phases prepare,install,measure`, \
             or run single phases into one folder with `clibench phase`"
        );
        let error = needs_install(&[Phase::Install, Phase::Ui], true).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("install needs prepare's artifacts"),
            "{error}"
        );
        let error = needs_install(&[Phase::Measure], false).unwrap_err();
        assert!(
            error.to_string().contains("`--phases install,measure`"),
            "{error}"
        );
        assert!(needs_install(&[Phase::Install, Phase::Measure], false).is_ok());
        assert!(needs_install(&[Phase::Prepare], true).is_ok());
        assert!(needs_install(&Phase::ALL, true).is_ok());
    }

    #[test]
    fn phases_are_put_in_pipeline_order_without_duplicates() {
        let plan = plan(
            &[
                Phase::Ui,
                Phase::Install,
                Phase::Measure,
                Phase::Prepare,
                Phase::Ui,
            ],
            1,
            1,
        );
        assert_eq!(
            plan.phases,
            [Phase::Prepare, Phase::Install, Phase::Measure, Phase::Ui]
        );
    }

    #[test]
    fn zero_trials_is_an_input_error() {
        let settings = PlanSettings {
            trials: 0,
            ..PlanSettings::default()
        };
        let error = Plan::new(SpecSource::Demo, Path::new("out"), settings).unwrap_err();
        assert!(error.is_input());
        assert_eq!(error.to_string(), "--trials must be at least 1");
    }

    fn pi_spec() -> Spec {
        // Loaded from its place: its [model] script is a file beside it.
        crate::spec::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agents/pi.toml"),
        )
        .unwrap()
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
                Phase::Session,
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
        assert!(error.is_input());
        assert_eq!(
            error.to_string(),
            "--phases: runtime needs a [runtime] section, which pi.toml does not have"
        );
        let (run, _) = described_phases(&spec, path, &[Phase::Measure], true).unwrap();
        assert_eq!(run, [Phase::Measure]);
    }

    #[test]
    fn a_missing_spec_is_an_input_error_naming_it() {
        let spec = SpecSource::File(PathBuf::from("/nonexistent/spec.toml"));
        let error = Plan::new(spec, Path::new("out"), PlanSettings::default()).unwrap_err();
        assert!(error.is_input());
        assert!(error.to_string().contains("/nonexistent/spec.toml"));
    }

    #[test]
    fn no_spec_path_is_the_demo_and_a_spec_path_is_made_absolute() {
        assert_eq!(SpecSource::resolve(None).unwrap(), SpecSource::Demo);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pi.toml"), "name = \"pi\"\n").unwrap();
        // A relative path through `..` resolves to the file itself.
        let relative = dir.path().join("sub/../pi.toml");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let resolved = SpecSource::resolve(Some(&relative)).unwrap();
        assert_eq!(
            resolved,
            SpecSource::File(dir.path().canonicalize().unwrap().join("pi.toml"))
        );
    }

    #[test]
    fn a_spec_path_that_is_not_a_file_is_the_callers_mistake() {
        let dir = tempfile::tempdir().unwrap();
        for path in [dir.path().to_path_buf(), dir.path().join("missing.toml")] {
            let error = SpecSource::resolve(Some(&path)).unwrap_err();
            assert!(error.is_input());
            assert_eq!(
                error.to_string(),
                format!("spec {} does not exist or is not a file", path.display())
            );
        }
    }

    #[test]
    fn the_default_output_folder_names_the_target() {
        let name = |out: PathBuf| {
            assert_eq!(out.parent(), Some(Path::new("clibench-out")));
            out.file_name().unwrap().to_string_lossy().into_owned()
        };
        let pi = SpecSource::File(PathBuf::from("/specs/pi.toml"));
        let single = name(pi.default_out());
        let (target, time) = single.rsplit_once('-').unwrap();
        assert_eq!(target, "pi");
        assert!(time.parse::<u64>().unwrap() > 0, "{single}");
        assert!(name(pi.default_ab_out()).starts_with("ab-pi-"));
        assert!(name(SpecSource::Demo.default_out()).starts_with("demo-"));
        assert!(name(SpecSource::Demo.default_ab_out()).starts_with("ab-demo-"));
    }

    #[test]
    fn the_demo_describes_every_phase() {
        let text = crate::demo::spec_text(Path::new("/src"), &"0".repeat(40));
        let spec = crate::spec::parse(&text, "demo.toml").unwrap();
        assert!(Phase::ALL.iter().all(|&phase| describes(&spec, phase)));
    }
}
