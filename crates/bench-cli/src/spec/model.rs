//! The spec's sections as Rust types. Every key, its type, default and meaning is
//! documented in `docs/spec.md`; keep the two in step.
//!
//! One file of about 900 lines on purpose: it is one table, a type per `[section]` with
//! each key's default beside it, read against `docs/spec.md` section by section; the
//! sections share no code a split would separate.

use super::template::Template;
use bench_core::duration::Duration;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A whole target spec: what to fetch, build, install and measure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The grammar the file is written in (`spec/version.rs`); absent: 1, the last
    /// release's, where file contents doubled their literal braces.
    #[serde(default)]
    pub spec_version: Option<u32>,
    /// Short name of the target, used in reports and user names.
    pub name: String,
    /// One line about the target.
    #[serde(default)]
    pub description: Option<String>,
    /// The release version the build stamps into its artifacts: `{version}`.
    #[serde(default)]
    pub version: Option<String>,
    /// A registry package the target is installed from (recorded, not fetched).
    #[serde(default)]
    pub package: Option<String>,
    /// Machine architectures (`uname -m`) the target supports; empty: any.
    #[serde(default)]
    pub architectures: Vec<String>,
    /// The git source; absent for install-only targets.
    #[serde(default)]
    pub source: Option<Source>,
    /// Variables added to the clean environment of every command run for the target.
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// Names of variables passed through from clibench's own environment (when set) to
    /// every command run for the target, builds included: the only way anything of
    /// clibench's environment reaches the target. For CA bundles and the like; never
    /// list a secret.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Tool versions recorded by prepare: name -> command whose output is the version.
    #[serde(default)]
    pub versions: BTreeMap<String, Vec<Template>>,
    /// Build steps, in order.
    #[serde(default)]
    pub build: Vec<BuildStep>,
    /// The release artifacts the build produces.
    #[serde(default)]
    pub artifacts: Vec<ArtifactSet>,
    /// The loopback HTTP server that serves the artifacts during install.
    #[serde(default)]
    pub origin: Origin,
    /// How to install the target into a fresh home; absent for a target that is already
    /// installed (the home is still created, no install time is recorded).
    #[serde(default)]
    pub install: Install,
    /// The fixture workspace created in every home.
    #[serde(default)]
    pub workspace: Workspace,
    /// Cold and warm start, memory, background sessions.
    #[serde(default)]
    pub measure: Option<Measure>,
    /// The REPL kernel (protocol 3).
    #[serde(default)]
    pub runtime: Option<Runtime>,
    /// Timed interactive steps.
    #[serde(default)]
    pub ui: Option<Ui>,
    /// Marginal memory of one more instance.
    #[serde(default)]
    pub staircase: Option<Staircase>,
    /// The scripted model endpoint started for every measure, ui, session and staircase
    /// trial.
    #[serde(default)]
    pub model: Option<Model>,
    /// The session phase: scripted turns typed into the agent.
    #[serde(default)]
    pub session: Option<Session>,
    /// The disk footprint.
    #[serde(default)]
    pub disk: Disk,
    /// How `clibench ab` judges this target's changes.
    #[serde(default)]
    pub compare: Compare,
}

/// `[model]`: the scripted model endpoint of every trial.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The script: a file (TOML, or JSON by its name) relative to the spec's folder, or
    /// an inline table with the script's own fields.
    pub script: ScriptSource,
    /// What the agent speaks (recorded and shown; the endpoint serves all four at once).
    pub dialect: ModelDialect,
    /// Overrides of the script's `[physics]`.
    #[serde(default)]
    pub physics: Option<bench_model::physics::PhysicsOverride>,
    /// Serve under a secret path prefix (`{model_url}` ends in `/m/<token>`); `false`
    /// serves the bare root, for an agent that cannot take a base URL with a path.
    #[serde(default = "yes")]
    pub token: bool,
    /// The script read, patched with `physics` and checked, when the spec is read
    /// ([`super::parse()`]).
    #[serde(skip)]
    pub compiled: Option<bench_model::Compiled>,
}

/// Where `[model] script` is.
#[derive(Debug, Clone)]
pub enum ScriptSource {
    /// `script = "file.toml"`: relative to the spec's folder.
    File(String),
    /// `[model.script]`: the script's fields inline.
    Inline(bench_model::Script),
}

impl<'de> Deserialize<'de> for ScriptSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ScriptSource;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a script file's path or a table with the script's fields")
            }
            fn visit_str<E: serde::de::Error>(self, path: &str) -> Result<ScriptSource, E> {
                Ok(ScriptSource::File(path.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ScriptSource, A::Error> {
                bench_model::Script::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ScriptSource::Inline)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `[model] dialect`: the API the agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelDialect {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses.
    OpenaiResponses,
    /// OpenAI Chat Completions.
    OpenaiChat,
    /// Gemini.
    Gemini,
}

impl ModelDialect {
    /// The name as written in the spec (`openai-responses`).
    pub fn name(self) -> &'static str {
        match self {
            ModelDialect::Anthropic => "anthropic",
            ModelDialect::OpenaiResponses => "openai-responses",
            ModelDialect::OpenaiChat => "openai-chat",
            ModelDialect::Gemini => "gemini",
        }
    }
}

/// `[session]`: the session phase.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The program; default `[measure] command`.
    #[serde(default)]
    pub command: Option<Vec<Template>>,
    /// Working folder; default `[measure] cwd`.
    #[serde(default)]
    pub cwd: Option<Template>,
    /// Extra environment variables (added to `[measure] env`).
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// The idle window at the prompt after the last turn, for `idle_cpu`.
    #[serde(default = "default_idle")]
    pub idle: Duration,
    /// How long one turn may take.
    #[serde(default = "default_turn_timeout")]
    pub turn_timeout: Duration,
    /// The turn (from 1) during whose streamed reply keys are typed; default: the
    /// scripted turn whose final text has the most tokens.
    #[serde(default)]
    pub typing_turn: Option<u32>,
    /// How many keys are typed during it.
    #[serde(default = "default_typing_keys")]
    pub typing_keys: u32,
    /// A regex for the agent's own "turn over" mark (demo-agent's `[done in 1.2s]`,
    /// claude-code's `for 3s`): when set, a turn is over only once a screen line below the
    /// reply's last word matches it, before the prompt-echo check. Agents that echo keys
    /// while still busy need it, or a turn ends as soon as its text shows.
    #[serde(default)]
    pub turn_done: Option<String>,
    /// The shell command the scenarios' tool calls run (`--scenario long-session`,
    /// `paste`, `idle`, and `big-output`'s first turn): one the agent runs without asking.
    /// Default: the first shell command of the spec's own script, else each scenario's own
    /// (`seq 1 N`, `ls`), said before the run starts.
    #[serde(default)]
    pub scenario_tool: Option<String>,
    /// Turns played: the script's prompted turns in order, again and again (the script is
    /// unrolled so when the spec is read); default: each prompted turn once. At most 1000.
    #[serde(default)]
    pub turns: Option<u32>,
    /// The first turns left out of every slope: a first tool call that loads modules
    /// is not a leak.
    #[serde(default = "default_warmup_turns")]
    pub warmup_turns: u32,
    /// A checkpoint (the idle prompt measured) after every this many turns, and after
    /// the last; 0 for the last only.
    #[serde(default = "default_checkpoint_every")]
    pub checkpoint_every: u32,
    /// Letters typed at each checkpoint (at most 20).
    #[serde(default = "default_checkpoint_keys")]
    pub checkpoint_keys: u32,
    /// Each checkpoint's idle window, before typing.
    #[serde(default = "default_checkpoint_idle")]
    pub checkpoint_idle: Duration,
    /// How long the terminal must receive nothing before a checkpoint measures, and after
    /// its word is erased (at most 4 s are waited for it: a spinner is never quiet). One
    /// second by default, longer than the slowest echo users report of a long session; an
    /// agent that echoes at once needs less.
    #[serde(default = "default_checkpoint_quiet")]
    pub checkpoint_quiet: Duration,
    /// Bracketed pastes into the idle prompt after the last turn, their sizes in bytes,
    /// in order (at most 10, each at most 4 MiB); none by default.
    #[serde(default)]
    pub pastes: Vec<u64>,
    /// Keys that empty the input after each paste; default Ctrl-C, which clears the
    /// input of every agent CLI the project knows.
    #[serde(default = "default_paste_clear")]
    pub paste_clear: String,
}

impl Session {
    /// Whether a checkpoint follows turn `turn` (from 1) of a session of `total` turns:
    /// every `checkpoint_every` turns, and after the last.
    pub fn checkpoint_after(&self, turn: usize, total: usize) -> bool {
        let every = self.checkpoint_every as usize;
        turn == total || (every > 0 && turn.is_multiple_of(every))
    }

    /// Whether a session of `total` turns has the checkpoints after the warm-up that
    /// `lag_growth` and `render_growth` are metrics through
    /// ([`bench_core::stats::MIN_SLOPE_POINTS`]).
    pub fn has_checkpoint_slopes(&self, total: usize) -> bool {
        let after_warmup = (self.warmup_turns as usize + 1..=total)
            .filter(|&turn| self.checkpoint_after(turn, total))
            .count();
        after_warmup >= bench_core::stats::MIN_SLOPE_POINTS as usize
    }

    /// Whether a session of `total` turns has the turns after the warm-up that
    /// `session_growth` is a metric through: its memory is read after every turn (PSS on
    /// about 100 of them in a longer session).
    pub fn has_growth_slope(&self, total: usize) -> bool {
        total.saturating_sub(self.warmup_turns as usize)
            >= bench_core::stats::MIN_SLOPE_POINTS as usize
    }
}

impl Spec {
    /// The turns the session phase plays: `[session] turns`, else each prompted turn of
    /// the script once; `None` without `[session]` or a compiled script.
    pub fn session_turns(&self) -> Option<usize> {
        let session = self.session.as_ref()?;
        let compiled = self.model.as_ref()?.compiled.as_ref()?;
        let prompted = compiled.turns.iter().filter(|t| t.prompt.is_some()).count();
        Some(session.turns.map_or(prompted, |turns| turns as usize))
    }
}

fn default_warmup_turns() -> u32 {
    1
}

fn default_checkpoint_every() -> u32 {
    10
}

fn default_checkpoint_keys() -> u32 {
    5
}

fn default_paste_clear() -> String {
    "\u{3}".to_owned()
}

fn default_checkpoint_idle() -> Duration {
    Duration::from_millis(500)
}

/// Keys of a turn's end (the prompt's probe and its erasure) that a slow agent is still
/// echoing are done after this much silence. Longer than the slowest echo users report of
/// a long session (200 to 500 ms a key): with 250 ms, an agent at 270 ms a key looked
/// quiet between two queued Backspaces.
fn default_checkpoint_quiet() -> Duration {
    Duration::from_secs(1)
}

fn default_idle() -> Duration {
    Duration::from_secs(3)
}

/// `[session] turn_timeout` when not given (also the staircase's bound for one turn).
pub(crate) fn default_turn_timeout() -> Duration {
    Duration::from_secs(60)
}

fn default_typing_keys() -> u32 {
    10
}

/// `[compare]`: how changes of this target are judged by `clibench ab` and, through
/// the thresholds its results record, `clibench compare`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    /// Practical thresholds per metric as fractions (`cold = 0.05` is ±5%): a timing,
    /// CPU or memory change smaller than this gets no verdict, however sure the test is.
    /// Metrics not named keep their kind's default (timing and CPU 3%, memory 2%, sizes
    /// 1%); `--noise METRIC=FRACTION` overrides these. Every result of the spec records
    /// them (`request.config.compare_noise`), so `clibench compare` uses them too.
    #[serde(default)]
    pub noise: BTreeMap<String, f64>,
    /// The metrics `clibench ab --trials auto` waits for (default: cold, warm, their
    /// unqueued times, their CPU times, rss, pss).
    #[serde(default)]
    pub watch: Option<Vec<String>>,
    /// The detectable change (fraction) at which `--trials auto` stops waiting for a
    /// watched metric without a verdict (default: twice the metric's threshold).
    #[serde(default)]
    pub target_mde: Option<f64>,
}

impl Compare {
    /// [`noise`](Self::noise) by metric; names that are not metrics are left out (the
    /// spec check refuses them before anything runs).
    pub fn floors(&self) -> BTreeMap<bench_core::Metric, f64> {
        self.noise
            .iter()
            .filter_map(|(name, &fraction)| Some((name.parse().ok()?, fraction)))
            .collect()
    }
}

/// `[source]`: a git repository and an exact commit.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// A URL git can fetch from, or a local path (relative to the spec file).
    pub repository: String,
    /// The full 40-character commit sha to check out.
    pub commit: String,
}

/// `[[build]]`: one build step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildStep {
    /// A name for logs and errors; defaults to the command line.
    #[serde(default)]
    pub name: Option<String>,
    /// The program and its arguments (no shell).
    pub command: Vec<Template>,
    /// Working folder; relative paths are relative to `{source}` (or `{out}/build`).
    #[serde(default)]
    pub cwd: Option<Template>,
    /// How long the step may take.
    #[serde(default = "default_build_timeout")]
    pub timeout: Duration,
    /// Extra environment variables for this step.
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// Run the step only when all these paths exist; when only some exist it is an error.
    #[serde(default)]
    pub when_exists: Vec<Template>,
}

fn default_build_timeout() -> Duration {
    Duration::from_secs(600)
}

/// `[[artifacts]]`: files the build produced, matched by a file-name pattern.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSet {
    /// The folder to look in.
    pub folder: Template,
    /// A file-name pattern with `*` and `?`.
    pub glob: String,
    /// The exact number of files that must match.
    #[serde(default)]
    pub count: Option<u32>,
    /// Whether at least one file must match (when `count` is not given).
    #[serde(default = "yes")]
    pub required: bool,
    /// The set's files are npm package tarballs: prepare has npm install them into a
    /// scratch folder on this machine (npm picks the platform's optional dependencies, as
    /// a user's install does) and collects the registry tarball of every package it added,
    /// so `bundle` counts what an install of the release downloads, not only a wrapper.
    #[serde(default)]
    pub npm_dependencies: bool,
}

fn yes() -> bool {
    true
}

/// `[origin]`: the loopback HTTP server for the installer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// Serve the artifacts during install (when there are any).
    #[serde(default = "yes")]
    pub serve: bool,
    /// The URL path under which the artifacts are served.
    #[serde(default = "default_origin_path")]
    pub path: Template,
    /// A fixed loopback port; then `{origin}` is known from prepare on (for builds
    /// that bake the download URL into the release). Default: an ephemeral port.
    #[serde(default)]
    pub port: Option<u16>,
}

fn default_origin_path() -> Template {
    Template::literal("/")
}

impl Default for Origin {
    fn default() -> Self {
        Origin {
            serve: true,
            path: default_origin_path(),
            port: None,
        }
    }
}

/// `[install]`: the installer and the checks after it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// The installer's program and arguments (no shell); `None`: nothing to install (the
    /// target is already on the machine), so no install time is recorded.
    #[serde(default)]
    pub command: Option<Vec<Template>>,
    /// Working folder; default `{home}`.
    #[serde(default)]
    pub cwd: Option<Template>,
    /// How long the installer may take.
    #[serde(default = "default_install_timeout")]
    pub timeout: Duration,
    /// Extra environment variables for the installer.
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// A command that prints the installed version.
    #[serde(default)]
    pub version_command: Option<Vec<Template>>,
    /// Text the version command's output must contain.
    #[serde(default)]
    pub version_contains: Option<Template>,
    /// Paths that must exist after the install.
    #[serde(default)]
    pub files: Vec<Template>,
    /// The installed entry point; its first bytes tell a compiled install (ELF) from a script.
    #[serde(default)]
    pub executable: Option<Template>,
    /// When an artifact matching this file-name pattern was built, the install must be compiled.
    #[serde(default)]
    pub compiled_if_artifact: Option<String>,
    /// A command that lists the installed dependencies; its output is saved under OUT/.
    #[serde(default)]
    pub inventory: Option<Vec<Template>>,
    /// The file name under OUT/ for the inventory.
    #[serde(default = "default_inventory_file")]
    pub inventory_file: String,
    /// Files written into the home after the install.
    #[serde(default)]
    pub write: Vec<HomeFile>,
}

fn default_install_timeout() -> Duration {
    Duration::from_secs(300)
}

impl Default for Install {
    /// No `[install]`: nothing to install, no checks, no files.
    fn default() -> Install {
        Install {
            command: None,
            cwd: None,
            timeout: default_install_timeout(),
            env: BTreeMap::new(),
            version_command: None,
            version_contains: None,
            files: Vec::new(),
            executable: None,
            compiled_if_artifact: None,
            inventory: None,
            inventory_file: default_inventory_file(),
            write: Vec::new(),
        }
    }
}

fn default_inventory_file() -> String {
    "installed-dependencies.txt".to_owned()
}

/// `[[install.write]]`: one file written into the home.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeFile {
    /// Path relative to the home (no `..`, not absolute).
    pub path: String,
    /// The file's content; `{name}` and `{json:name}` are placeholders, every other
    /// brace is literal ([`Template::parse_content`]); in a spec without `spec_version`,
    /// a content in the old template grammar is read in that grammar (`{{` is `{`).
    #[serde(deserialize_with = "super::template::deserialize_content")]
    pub content: Template,
    /// Make the file executable by the trial user (mode 0700 instead of 0600).
    #[serde(default)]
    pub executable: bool,
    /// The file's permission bits, an octal string such as `"0644"` (no setuid,
    /// setgid or sticky bit); overrides `executable`. `None`: private to the trial
    /// user, see [`HomeFile::file_mode`].
    #[serde(default, deserialize_with = "deserialize_mode")]
    pub mode: Option<u32>,
}

impl HomeFile {
    /// The mode the file is written with: `mode`, else 0700 when `executable`, else
    /// 0600, so that no other user reads what a spec writes (tokens, settings).
    pub fn file_mode(&self) -> u32 {
        match (self.mode, self.executable) {
            (Some(mode), _) => mode,
            (None, true) => 0o700,
            (None, false) => 0o600,
        }
    }
}

/// Parses a mode such as `"0644"` or `"755"`: octal digits, permission bits only.
pub fn parse_mode(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|mode| *mode <= 0o777)
}

fn deserialize_mode<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_mode(&text).map(Some).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "mode \"{text}\" is not an octal string of permission bits such as \"0644\" (no setuid, setgid or sticky bit)"
        ))
    })
}

/// `[workspace]`: the fixture git repository the target starts in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    /// Create the workspace at all.
    #[serde(default = "yes")]
    pub create: bool,
    /// Folder relative to the home: `{workspace}`.
    #[serde(default = "default_workspace_path")]
    pub path: String,
    /// Author and committer date of the single commit.
    #[serde(default = "default_workspace_date")]
    pub date: String,
    /// The commit message.
    #[serde(default = "default_workspace_message")]
    pub message: String,
    /// File name -> content (no placeholders).
    #[serde(default = "default_workspace_files")]
    pub files: BTreeMap<String, String>,
}

fn default_workspace_path() -> String {
    "workspace".to_owned()
}

fn default_workspace_date() -> String {
    "2000-01-01T00:00:00Z".to_owned()
}

fn default_workspace_message() -> String {
    "chore: initialize benchmark fixture".to_owned()
}

fn default_workspace_files() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "README.md".to_owned(),
            "# Benchmark fixture\n\nA small repository for CLI benchmarks.\n".to_owned(),
        ),
        (
            "example.py".to_owned(),
            "def add(left, right):\n    return left + right\n".to_owned(),
        ),
    ])
}

impl Workspace {
    /// The git commands that turn the written files into the fixture repository: init,
    /// add, and one commit by a fixed identity. Run them with `GIT_AUTHOR_DATE` and
    /// `GIT_COMMITTER_DATE` set to [`Workspace::date`] so the commit is always the same.
    pub fn git_commands(&self) -> [Vec<String>; 3] {
        let mut add = vec!["git".to_owned(), "add".to_owned(), "--".to_owned()];
        add.extend(self.files.keys().cloned());
        [
            ["git", "init", "--quiet", "--initial-branch=main"]
                .map(str::to_owned)
                .to_vec(),
            add,
            [
                "git",
                "-c",
                "user.name=Benchmark",
                "-c",
                "user.email=benchmark@example.invalid",
                // A commit starts `git maintenance run --auto --detach`, a process of the
                // trial user that outlived install and had to be stopped (SIGTERM) with it.
                "-c",
                "maintenance.auto=false",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                &self.message,
            ]
            .map(str::to_owned)
            .to_vec(),
        ]
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace {
            create: true,
            path: default_workspace_path(),
            date: default_workspace_date(),
            message: default_workspace_message(),
            files: default_workspace_files(),
        }
    }
}

/// `[measure]`: the interactive command and its background sessions.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// The interactive program and arguments.
    pub command: Vec<Template>,
    /// Working folder; default `{workspace}` (or `{home}` without a workspace).
    #[serde(default)]
    pub cwd: Option<Template>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// How readiness is detected: the keys `ready`, `ready_pattern` (its regex compiled
    /// once) and `ready_quiet`, resolved when the spec is read ([`super::parse()`]).
    #[serde(skip, default = "default_ready")]
    pub ready: bench_term::ReadyMode,
    /// The `ready` key, which `ready` is made from: the `--ready` flag's grammar
    /// (`probe`, `pattern:REGEX`, ...), or `pattern` / `stable` with the keys beside it.
    #[serde(rename = "ready", default = "default_ready_key")]
    pub(super) ready_key: String,
    /// The regex for `ready = "pattern"`.
    #[serde(default)]
    pub(super) ready_pattern: Option<String>,
    /// The quiet period for `ready = "stable"`.
    #[serde(default = "default_ready_quiet")]
    pub(super) ready_quiet: Duration,
    /// What the screen at ready must and must not show: the keys `ready_require`,
    /// `ready_reject` (their regexes compiled once) and `ready_allow_dialog`, resolved when
    /// the spec is read ([`super::parse()`]).
    #[serde(skip)]
    pub ready_guard: bench_term::ReadyGuard,
    /// A regex the screen at ready must match (the real prompt), else the start fails.
    #[serde(default)]
    pub(super) ready_require: Option<String>,
    /// Regexes that fail the start ("blocked by: ...") when they match the screen at ready.
    #[serde(default)]
    pub(super) ready_reject: Vec<String>,
    /// Whether a blocking dialog on the screen at ready is expected (see bench-term's
    /// `dialog` list); without it such a start fails "blocked by a dialog".
    #[serde(default)]
    pub(super) ready_allow_dialog: bool,
    /// Keys that ask the program to quit (default `["C-c", "C-c", "C-d"]`; `["/quit",
    /// "Enter"]`), each once the program reacted to the one before; a program still
    /// alive and silent 200 ms after the last is hung up.
    #[serde(default = "default_quit")]
    pub quit: Vec<String>,
    /// How long to wait for ready.
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout: Duration,
    /// How long to let the program settle after ready before memory is read: a fixed
    /// time (`"1s"`, the default) or until its memory is quiet (`"auto"`, a table).
    #[serde(default = "default_settle")]
    pub settle: super::Settle,
    /// How many measure trials (the first ones) settle and read memory; `None`: all. A
    /// trial past them closes each start at ready, so that its timed starts sit close in
    /// time to the other side's in an `ab --schedule tight` pair.
    #[serde(default)]
    pub memory_trials: Option<u32>,
    /// Terminal width in columns.
    #[serde(default = "default_cols")]
    pub cols: u16,
    /// Terminal height in rows.
    #[serde(default = "default_rows")]
    pub rows: u16,
    /// A command that lists the background sessions as JSON.
    #[serde(default)]
    pub list_sessions: Option<Vec<Template>>,
    /// A command that stops one session; `{id}` is its id.
    #[serde(default)]
    pub stop_session: Option<Vec<Template>>,
    /// The array of sessions in the list output.
    #[serde(default = "default_sessions_field")]
    pub sessions_field: String,
    /// The id field of one session (sessions without it are skipped).
    #[serde(default = "default_session_id_field")]
    pub session_id_field: String,
    /// How long each list/stop command may take.
    #[serde(default = "default_command_timeout")]
    pub command_timeout: Duration,
}

fn default_ready() -> bench_term::ReadyMode {
    bench_term::ReadyMode::Probe
}

fn default_ready_key() -> String {
    "probe".to_owned()
}

fn default_quit() -> Vec<String> {
    // bench-term's DEFAULT_QUIT_KEYS: double Ctrl-C for agent CLIs and TUIs, Ctrl-D
    // for line REPLs that answer Ctrl-C with a new prompt.
    vec!["C-c".to_owned(), "C-c".to_owned(), "C-d".to_owned()]
}

fn default_ready_quiet() -> Duration {
    Duration::from_millis(500)
}

fn default_ready_timeout() -> Duration {
    Duration::from_secs(60)
}

fn default_settle() -> super::Settle {
    super::Settle::from_secs(1)
}

fn default_cols() -> u16 {
    120
}

fn default_rows() -> u16 {
    40
}

fn default_sessions_field() -> String {
    "sessions".to_owned()
}

fn default_session_id_field() -> String {
    "activeSessionId".to_owned()
}

fn default_command_timeout() -> Duration {
    Duration::from_secs(60)
}

/// `[runtime]`: the REPL kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runtime {
    /// The kernel program and arguments (protocol 3 on stdin/stdout).
    pub command: Vec<Template>,
    /// Working folder; default `{workspace}`.
    #[serde(default)]
    pub cwd: Option<Template>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// How long any single wait on the kernel may take.
    #[serde(default = "default_command_timeout")]
    pub timeout: Duration,
    /// Cells executed once before measuring (for example imports).
    #[serde(default)]
    pub setup: Vec<String>,
}

/// `[ui]`: named interactive steps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ui {
    /// The program; default `[measure] command`.
    #[serde(default)]
    pub command: Option<Vec<Template>>,
    /// Working folder; default `[measure] cwd`.
    #[serde(default)]
    pub cwd: Option<Template>,
    /// Extra environment variables (added to `[measure] env`).
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// How many keystrokes to time for the latency distribution.
    #[serde(default = "default_keystrokes")]
    pub keystrokes: u32,
    /// The steps, in order.
    #[serde(default)]
    pub steps: Vec<UiStep>,
}

fn default_keystrokes() -> u32 {
    20
}

/// `[[ui.steps]]`: keys to type and what the screen shows when done.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiStep {
    /// The step's name (`ui:<name>` in the timings).
    pub name: String,
    /// Text to type; TOML escapes such as `\r` and `\u001b` give control keys.
    pub keys: String,
    /// A regex the screen must match when the step is done.
    pub expect: String,
    /// How long the step may take.
    #[serde(default = "default_step_timeout")]
    pub timeout: Duration,
}

fn default_step_timeout() -> Duration {
    Duration::from_secs(30)
}

/// `[staircase]`: marginal memory per instance.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Staircase {
    /// The instance program; default `[measure] command`.
    #[serde(default)]
    pub command: Option<Vec<Template>>,
    /// Working folder; default `[measure] cwd`.
    #[serde(default)]
    pub cwd: Option<Template>,
    /// Extra environment variables (added to `[measure] env`).
    #[serde(default)]
    pub env: BTreeMap<String, Template>,
    /// How many instances to add after the warm-up instance.
    #[serde(default = "default_count")]
    pub count: u32,
    /// How long to let each instance settle before memory is read: fixed or quiet, as
    /// `[measure] settle`.
    #[serde(default = "default_settle")]
    pub settle: super::Settle,
    /// Each instance, once ready, completes the script's first turn with a prompt (typed
    /// and awaited as the session phase does) before its step is measured; needs
    /// `[model]`. The endpoint's script is rewound before each instance starts, so every
    /// instance plays the same turn.
    #[serde(default)]
    pub session: bool,
}

fn default_count() -> u32 {
    5
}

/// `[disk]`: the footprint of the home.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    /// Entry names (with `*` and `?`) left out of the footprint, as `du --exclude`.
    #[serde(default = "default_excludes")]
    pub exclude: Vec<String>,
}

fn default_excludes() -> Vec<String> {
    bench_proc::DEFAULT_EXCLUDES
        .iter()
        .map(|&pattern| pattern.to_owned())
        .collect()
}

impl Default for Disk {
    fn default() -> Self {
        Disk {
            exclude: default_excludes(),
        }
    }
}
