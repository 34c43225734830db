//! What clibench measures: every [`Metric`], the [`Phase`] that records it, its
//! [`Unit`], its [`Direction`] and its [`Nature`] (how its values vary, which
//! decides how a comparison judges a change).

use crate::units::Unit;
use std::fmt;
use std::str::FromStr;

mod descriptions;

use descriptions::DESCRIPTIONS;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Smaller values are better (time, memory, disk).
    LowerIsBetter,
    /// Larger values are better (memory given back to the system).
    HigherIsBetter,
}

/// How a metric's values vary from one measurement to the next, which decides
/// how a comparison may conclude anything from a change.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Nature {
    /// Repeatable sizes (bytes on disk, bundle bytes): the same build gives the same
    /// number, so every change is reported, and one beyond a size threshold counts.
    Exact,
    /// Wall-clock time: noisy, judged by a test and a practical threshold.
    Timing,
    /// CPU time of the process family, at nanosecond resolution: noisy like timing,
    /// but it moves much less under contention.
    Cpu,
    /// Resident or proportional memory: noisy, judged like timing.
    Memory,
}

impl Nature {
    /// `exact`, `timing`, `cpu` or `memory`.
    pub fn name(self) -> &'static str {
        match self {
            Nature::Exact => "exact",
            Nature::Timing => "timing",
            Nature::Cpu => "cpu",
            Nature::Memory => "memory",
        }
    }

    /// The default practical threshold, as a fraction: a change smaller than this
    /// is never called a regression, however sure the test is. For exact sizes it
    /// is the relative part of the size threshold. The reasons for each number are
    /// in `docs/verdicts.md` (measured on the demo).
    pub fn default_threshold(self) -> f64 {
        match self {
            Nature::Exact => 0.01,
            Nature::Timing | Nature::Cpu => 0.03,
            Nature::Memory => 0.02,
        }
    }

    /// The standard deviation of one run's own offset (on the log scale) when two
    /// sides were not interleaved: a run as a whole is slower or faster than another
    /// by the machine's load while it ran, which more trials of it do not average
    /// away. Measured from 18 A/A `ab` runs of the demo on this project's shared
    /// 2-core VMs (load 5 to 8), one run's base against the next run's head, 10
    /// trials each: the excess of the squared log change over its sampling variance
    /// is 2 × this squared (cold 0.22, warm 0.24, cold_cpu 0.05, warm_cpu 0.06, pss
    /// 0.014 with one jump of 7%, rss 0.0001); see `docs/verdicts.md`. Interleaved
    /// sides showed none. 0 for exact sizes.
    pub fn drift_spread(self) -> f64 {
        match self {
            Nature::Exact => 0.0,
            Nature::Timing => 0.22,
            Nature::Cpu => 0.06,
            Nature::Memory => 0.02,
        }
    }
}

/// CPU time as Linux accounts it in `/proc/PID/stat`: whole clock ticks of 1/100 s
/// (`USER_HZ` is 100 on every architecture Linux exports it for). clibench reads
/// CPU time from `schedstat` in nanoseconds instead; older results were in ticks.
pub const CPU_TICK_SECONDS: f64 = 0.01;

/// A pipeline phase. Phases run as separate processes and merge into one result file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Build the target's release artifacts (`bundle`).
    Prepare,
    /// Install into a fresh home (`install`).
    Install,
    /// Start the program in a real terminal and measure it (`disk`, `cold`, `warm`, `rss`, `pss`).
    Measure,
    /// Drive the REPL kernel (`kernel_*`, `bash`, `git_status`, ... `restore`).
    Runtime,
    /// Drive the UI through the spec's steps (`ui_*`, `keystroke`).
    Ui,
    /// Drive an agent through the scripted model's turns (`turn`, `first_token`, ...,
    /// `session_growth`, `idle_cpu`).
    Session,
    /// Start instances one after another and measure what each adds.
    Staircase,
}

impl Phase {
    /// Every phase, in pipeline order.
    pub const ALL: [Phase; 7] = [
        Phase::Prepare,
        Phase::Install,
        Phase::Measure,
        Phase::Runtime,
        Phase::Ui,
        Phase::Session,
        Phase::Staircase,
    ];

    /// The phase's name as written in files and on the command line (`measure`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Prepare => "prepare",
            Phase::Install => "install",
            Phase::Measure => "measure",
            Phase::Runtime => "runtime",
            Phase::Ui => "ui",
            Phase::Session => "session",
            Phase::Staircase => "staircase",
        }
    }

    /// The metrics this pipeline phase records, in declaration order: the phase's
    /// [standalone](Metric::standalone) metrics are left out, because no pipeline trial
    /// records them and so none can be missing from one, and so are those recorded only
    /// when the spec asks ([`Metric::on_request`]).
    pub fn metrics(self) -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(move |metric| {
            metric.phase() == self && !metric.standalone() && !metric.on_request()
        })
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Phase {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Phase::ALL
            .into_iter()
            .find(|phase| phase.name() == name)
            .ok_or_else(|| UnknownName {
                kind: "phase",
                name: name.to_string(),
            })
    }
}

/// A name that is not a known metric or phase.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{name}`")]
pub struct UnknownName {
    /// `metric` or `phase`.
    pub kind: &'static str,
    /// The name that was given.
    pub name: String,
}

macro_rules! metrics {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $unit:ident, $phase:ident, $direction:ident, $nature:expr; )*) => {
        /// One measured quantity. Values are stored in base units: seconds or bytes.
        ///
        /// The declaration order is the order of reports and of the `metrics` map in
        /// result files.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum Metric {
            $( $(#[$doc])* $variant, )*
        }

        impl Metric {
            /// Every metric, in declaration order.
            pub const ALL: [Metric; [$(Metric::$variant),*].len()] = [$(Metric::$variant),*];

            /// The metric's name as written in result files (`kernel_exec`).
            pub fn name(self) -> &'static str {
                match self { $( Metric::$variant => $name, )* }
            }

            /// The unit the metric's values are stored in.
            pub fn unit(self) -> Unit {
                match self { $( Metric::$variant => Unit::$unit, )* }
            }

            /// The pipeline phase that records the metric.
            pub fn phase(self) -> Phase {
                match self { $( Metric::$variant => Phase::$phase, )* }
            }

            /// Which way the metric improves.
            pub fn direction(self) -> Direction {
                match self { $( Metric::$variant => Direction::$direction, )* }
            }

            /// How the metric's values vary, which decides how changes are judged.
            pub fn nature(self) -> Nature {
                match self { $( Metric::$variant => $nature, )* }
            }
        }
    };
}

metrics! {
    /// Total bytes of the release artifacts.
    Bundle = "bundle", Bytes, Prepare, LowerIsBetter, Nature::Exact;
    /// Seconds the installer took.
    Install = "install", Seconds, Install, LowerIsBetter, Nature::Timing;
    /// Bytes the installation added to the home folder (trial 0 only).
    Disk = "disk", Bytes, Measure, LowerIsBetter, Nature::Exact;
    /// Seconds from spawn until the program is ready in a terminal, first start.
    Cold = "cold", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// Seconds until ready on a second start, with caches warm.
    Warm = "warm", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// CPU seconds the process family spent until ready, first start.
    ColdCpu = "cold_cpu", Seconds, Measure, LowerIsBetter, Nature::Cpu;
    /// CPU seconds the process family spent until ready, second start.
    WarmCpu = "warm_cpu", Seconds, Measure, LowerIsBetter, Nature::Cpu;
    /// Seconds from spawn until ready, first start, less the time the family's threads
    /// waited in a run queue for a CPU: the start without the machine's other work (or a
    /// duet partner) in its way.
    ColdUnqueued = "cold_unqueued", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// As `cold_unqueued`, second start.
    WarmUnqueued = "warm_unqueued", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// Resident bytes of the whole process family after start.
    Rss = "rss", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// Proportional set size of the process family, in bytes.
    Pss = "pss", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// Seconds until the REPL kernel answers its first request.
    KernelStart = "kernel_start", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Resident bytes of the idle kernel's processes.
    KernelRss = "kernel_rss", Bytes, Runtime, LowerIsBetter, Nature::Memory;
    /// Seconds per empty cell execution.
    KernelExec = "kernel_exec", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds per empty shell command through the kernel.
    Bash = "bash", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds per `git status` through the kernel.
    GitStatus = "git_status", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds per shell command that prints a fixed amount of output.
    Output = "output", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds for a mixed batch of cells and shell commands.
    Mixed = "mixed", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds from an interrupt until the kernel is ready again.
    Interrupt = "interrupt", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Resident bytes of the kernel with a data frame loaded.
    LoadedRss = "loaded_rss", Bytes, Runtime, LowerIsBetter, Nature::Memory;
    /// Seconds to snapshot the kernel's state to disk.
    Snapshot = "snapshot", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Seconds to restore a snapshot in a fresh kernel.
    Restore = "restore", Seconds, Runtime, LowerIsBetter, Nature::Timing;
    /// Total wall seconds of the spec's UI steps.
    UiSteps = "ui_steps", Seconds, Ui, LowerIsBetter, Nature::Timing;
    /// CPU seconds the process family spent during the UI steps.
    UiCpu = "ui_cpu", Seconds, Ui, LowerIsBetter, Nature::Cpu;
    /// Median keystroke-to-screen latency, in seconds.
    Keystroke = "keystroke", Seconds, Ui, LowerIsBetter, Nature::Timing;
    /// Resident bytes of the process family after the UI steps.
    UiRss = "ui_rss", Bytes, Ui, LowerIsBetter, Nature::Memory;
    /// Average resident bytes each added instance costs.
    InstanceRss = "instance_rss", Bytes, Staircase, LowerIsBetter, Nature::Memory;
    /// Average proportional bytes each added instance costs.
    InstancePss = "instance_pss", Bytes, Staircase, LowerIsBetter, Nature::Memory;
    /// Average unique bytes each added instance costs.
    InstanceUss = "instance_uss", Bytes, Staircase, LowerIsBetter, Nature::Memory;
    /// Resident bytes given back to the system once the instances are stopped.
    /// More is better: memory that is not given back has leaked.
    ReclaimedRss = "reclaimed_rss", Bytes, Staircase, HigherIsBetter, Nature::Memory;
    /// Seconds from spawn until the program's first byte of output (`clibench startup`).
    FirstByte = "first_byte", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// Seconds from spawn until the first line with at least 3 letters or digits
    /// (`clibench startup`).
    FirstFrame = "first_frame", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// Seconds from spawn until ready by the chosen mode (`clibench startup`).
    Ready = "ready", Seconds, Measure, LowerIsBetter, Nature::Timing;
    /// User-mode CPU seconds of one start's processes (`clibench startup`).
    UserCpu = "user_cpu", Seconds, Measure, LowerIsBetter, Nature::Cpu;
    /// Kernel-mode CPU seconds of one start's processes (`clibench startup`).
    SystemCpu = "system_cpu", Seconds, Measure, LowerIsBetter, Nature::Cpu;
    /// Unique bytes (private clean + private dirty) of the process family (`clibench mem`).
    Uss = "uss", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// Swapped-out bytes of the process family (`clibench mem`).
    Swap = "swap", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// The highest resident bytes of the family while a started command settled (`clibench mem`).
    PeakRss = "peak_rss", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// The highest proportional bytes of the family while a started command settled (`clibench mem`).
    PeakPss = "peak_pss", Bytes, Measure, LowerIsBetter, Nature::Memory;
    /// Median seconds from Enter until a turn's reply is shown and the prompt takes input.
    Turn = "turn", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Median seconds from Enter until the model endpoint received the turn's request.
    Submit = "submit", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Median seconds from the first chunk written until its text is on the screen.
    FirstToken = "first_token", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Median seconds from the last chunk written until the final text is on the screen.
    StreamRender = "stream_render", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Median seconds from a tool call written until the request with its result arrived.
    ToolRoundtrip = "tool_roundtrip", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Median CPU seconds of the process family per turn.
    TurnCpu = "turn_cpu", Seconds, Session, LowerIsBetter, Nature::Cpu;
    /// Median keystroke-to-echo seconds while a reply streams.
    TypingLag = "typing_lag", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Resident bytes of the process family after the last turn.
    SessionRss = "session_rss", Bytes, Session, LowerIsBetter, Nature::Memory;
    /// Proportional bytes of the process family after the last turn.
    SessionPss = "session_pss", Bytes, Session, LowerIsBetter, Nature::Memory;
    /// Bytes per turn the family's memory grows (least-squares slope over the turns).
    SessionGrowth = "session_growth", Bytes, Session, LowerIsBetter, Nature::Memory;
    /// The family's CPU share (fraction of one core) while idle at the prompt.
    IdleCpu = "idle_cpu", Share, Session, LowerIsBetter, Nature::Cpu;
    /// Median bytes the agent wrote to its terminal per streamed token over the turns.
    StreamBytes = "stream_bytes", Bytes, Session, LowerIsBetter, Nature::Timing;
    /// Bytes per second the agent wrote to its terminal while idle at the prompt.
    IdleOutput = "idle_output", Bytes, Session, LowerIsBetter, Nature::Timing;
    /// Median keystroke-to-echo seconds at the idle prompt, at the last checkpoint.
    KeyEcho = "key_echo", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Bytes the agent wrote per key typed at the idle prompt, at the last checkpoint.
    KeyBytes = "key_bytes", Bytes, Session, LowerIsBetter, Nature::Timing;
    /// Seconds per 100 turns the idle prompt's keystroke-to-echo latency grows
    /// (least-squares slope over the checkpoints after the warm-up).
    LagGrowth = "lag_growth", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// Bytes per key per 100 turns that typing at the idle prompt writes more
    /// (least-squares slope over the checkpoints after the warm-up).
    RenderGrowth = "render_growth", Bytes, Session, LowerIsBetter, Nature::Timing;
    /// Seconds from the largest bracketed paste until the agent showed it accepted it
    /// (`[session] pastes`).
    PasteAccept = "paste_accept", Seconds, Session, LowerIsBetter, Nature::Timing;
    /// CPU seconds of the process family over the largest paste (`[session] pastes`).
    PasteCpu = "paste_cpu", Seconds, Session, LowerIsBetter, Nature::Cpu;
    /// Bytes the agent wrote to its terminal over the largest paste (`[session] pastes`).
    PasteOutput = "paste_output", Bytes, Session, LowerIsBetter, Nature::Timing;
}

impl Metric {
    /// Whether only a standalone measurement (`clibench startup` or `mem`) records the
    /// metric; the pipeline's phases never do (see [`Phase::metrics`]).
    pub fn standalone(self) -> bool {
        matches!(
            self,
            Metric::FirstByte
                | Metric::FirstFrame
                | Metric::Ready
                | Metric::UserCpu
                | Metric::SystemCpu
                | Metric::Uss
                | Metric::Swap
                | Metric::PeakRss
                | Metric::PeakPss
        )
    }

    /// Whether the phase records the metric only when the spec asks for what it measures
    /// (`paste_*`: `[session] pastes`) or the target leaves something to read
    /// (`cold_unqueued`, `warm_unqueued`: a program that exits at ready, `ready =
    /// "exit"`, has no threads left whose wait could be read); a trial without it is not
    /// missing it.
    pub fn on_request(self) -> bool {
        matches!(
            self,
            Metric::PasteAccept
                | Metric::PasteCpu
                | Metric::PasteOutput
                | Metric::ColdUnqueued
                | Metric::WarmUnqueued
        )
    }

    /// For a slope over a session's turns (`session_growth`, `lag_growth`,
    /// `render_growth`), its default practical threshold in the metric's own unit; `None`
    /// for every other metric. A slope near zero, or below it, makes a ratio of two slopes
    /// meaningless, so `compare` judges slopes by their difference
    /// ([`SlopeChange`](crate::stats::SlopeChange)) against this: 256 KiB per turn (a leak of a quarter of a
    /// MiB per tool call is 250 MiB over a thousand turns), 5 ms of keystroke latency per
    /// 100 turns (half a second by the thousandth), 1 KiB written per key per 100 turns.
    /// A spec's `[compare] noise` sets another, in the same unit.
    pub fn slope_threshold(self) -> Option<f64> {
        match self {
            Metric::SessionGrowth => Some(256.0 * 1024.0),
            Metric::LagGrowth => Some(0.005),
            Metric::RenderGrowth => Some(1024.0),
            _ => None,
        }
    }

    /// Whether the metric is a slope over a session's turns ([`Metric::slope_threshold`]).
    pub fn is_slope(self) -> bool {
        self.slope_threshold().is_some()
    }

    /// What the metric means, for people: one or two sentences, without unit or
    /// direction (see [`Metric::unit`] and [`Metric::direction`]). This is the one
    /// glossary that report.md's legend, the HTML report's tooltips and
    /// `clibench report --explain` show.
    pub fn description(self) -> &'static str {
        // Invariant: DESCRIPTIONS has one entry per metric, in declaration order (its
        // length is checked by the compiler, its order by a test), so the index exists.
        DESCRIPTIONS[self as usize].1
    }

    /// The metric's unit and direction in words: `seconds, lower is better`.
    pub fn unit_and_direction(self) -> String {
        let unit = match self.unit() {
            Unit::Seconds => "seconds",
            Unit::Bytes => "bytes",
            Unit::Share => "share of a core",
        };
        match self.per() {
            // A rate: "bytes" alone would read as a size.
            Some(per) => format!("{unit} {per}, {}", self.direction_words()),
            None => format!("{unit}, {}", self.direction_words()),
        }
    }

    fn direction_words(self) -> &'static str {
        match self.direction() {
            Direction::LowerIsBetter => "lower is better",
            Direction::HigherIsBetter => "higher is better",
        }
    }

    /// What a rate's value is per, in words (`per turn`), for the metrics whose values
    /// are not plain sizes or times: a slope over the session's turns, a cost per key.
    pub fn per(self) -> Option<&'static str> {
        match self {
            Metric::SessionGrowth => Some("per turn"),
            Metric::StreamBytes => Some("per token"),
            Metric::IdleOutput => Some("per second"),
            Metric::KeyBytes => Some("per key"),
            Metric::LagGrowth => Some("per 100 turns"),
            Metric::RenderGrowth => Some("per key per 100 turns"),
            _ => None,
        }
    }

    /// [`Metric::per`] short, for a table cell: `/turn`, `/key/100 turns`; empty for
    /// plain sizes and times.
    pub fn per_short(self) -> &'static str {
        match self {
            Metric::SessionGrowth => "/turn",
            Metric::StreamBytes => "/token",
            Metric::IdleOutput => "/s",
            Metric::KeyBytes => "/key",
            Metric::LagGrowth => "/100 turns",
            Metric::RenderGrowth => "/key/100 turns",
            _ => "",
        }
    }
}

/// The glossary as plain text: one paragraph per metric, grouped by phase, each
/// `name (unit, direction): meaning`. Only `metrics` are listed, in metric order.
pub fn glossary(metrics: &[Metric]) -> String {
    let mut out = String::new();
    for phase in Phase::ALL {
        let listed: Vec<Metric> = Metric::ALL
            .into_iter()
            .filter(|m| m.phase() == phase && metrics.contains(m))
            .collect();
        if listed.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{phase}\n"));
        for metric in listed {
            out.push_str(&format!(
                "  {metric} ({}): {}\n",
                metric.unit_and_direction(),
                metric.description()
            ));
        }
    }
    out
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|metric| metric.name() == name)
            .ok_or_else(|| UnknownName {
                kind: "metric",
                name: name.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_serde_names() {
        for metric in Metric::ALL {
            let json = serde_json::to_string(&metric).unwrap();
            assert_eq!(json, format!("\"{}\"", metric.name()));
            assert_eq!(metric.name().parse::<Metric>().unwrap(), metric);
        }
        for phase in Phase::ALL {
            let json = serde_json::to_string(&phase).unwrap();
            assert_eq!(json, format!("\"{}\"", phase.name()));
            assert_eq!(phase.name().parse::<Phase>().unwrap(), phase);
        }
    }

    #[test]
    fn the_pipeline_metrics_keep_their_phases() {
        let measure: Vec<_> = Phase::Measure.metrics().map(Metric::name).collect();
        assert_eq!(
            measure,
            ["disk", "cold", "warm", "cold_cpu", "warm_cpu", "rss", "pss"]
        );
        let runtime: Vec<_> = Phase::Runtime.metrics().map(Metric::name).collect();
        assert_eq!(
            runtime,
            [
                "kernel_start",
                "kernel_rss",
                "kernel_exec",
                "bash",
                "git_status",
                "output",
                "mixed",
                "interrupt",
                "loaded_rss",
                "snapshot",
                "restore"
            ]
        );
        assert_eq!(Metric::Bundle.phase(), Phase::Prepare);
        assert_eq!(Metric::Install.phase(), Phase::Install);
        assert_eq!(Phase::Ui.metrics().count(), 4);
        assert_eq!(Phase::Staircase.metrics().count(), 4);
        assert_eq!(Phase::Session.metrics().count(), 17);
        assert_eq!(Metric::ALL.len(), 59);
        assert!(
            Metric::ColdUnqueued.on_request() && Metric::ColdUnqueued.phase() == Phase::Measure
        );
        assert!(Metric::PasteAccept.on_request() && Metric::PasteAccept.phase() == Phase::Session);
        assert!(Metric::Ready.standalone() && Metric::Ready.phase() == Phase::Measure);
        assert!(!Phase::Measure.metrics().any(Metric::standalone));
    }

    #[test]
    fn units_and_directions() {
        assert_eq!(Metric::Cold.unit(), Unit::Seconds);
        assert_eq!(Metric::Pss.unit(), Unit::Bytes);
        assert_eq!(Metric::Keystroke.unit(), Unit::Seconds);
        assert_eq!(Metric::InstanceUss.unit(), Unit::Bytes);
        assert_eq!(Metric::Cold.direction(), Direction::LowerIsBetter);
        assert_eq!(Metric::ReclaimedRss.direction(), Direction::HigherIsBetter);
    }

    #[test]
    fn sizes_are_exact_and_the_rest_is_noisy() {
        assert_eq!(Metric::Bundle.nature(), Nature::Exact);
        assert_eq!(Metric::Disk.nature(), Nature::Exact);
        assert_eq!(Metric::UiCpu.nature(), Nature::Cpu);
        assert_eq!(Metric::ColdCpu.nature(), Nature::Cpu);
        assert_eq!(Metric::Cold.nature(), Nature::Timing);
        assert_eq!(Metric::Install.nature(), Nature::Timing);
        assert_eq!(Metric::InstanceUss.nature(), Nature::Memory);
        // Only sizes on disk are exact: memory moves between runs of the same build.
        for metric in Metric::ALL {
            if metric.nature() == Nature::Exact {
                assert_eq!(metric.unit(), Unit::Bytes, "{metric}");
            }
        }
    }

    #[test]
    fn the_glossary_table_is_in_declaration_order() {
        for (index, metric) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(DESCRIPTIONS[index].0, metric);
        }
    }

    #[test]
    fn every_metric_has_a_description_that_is_a_sentence() {
        for metric in Metric::ALL {
            let text = metric.description();
            assert!(text.ends_with('.'), "{metric}: {text}");
            assert!(text.len() > 20, "{metric}: {text}");
        }
    }

    #[test]
    fn glossary_lists_every_metric_by_phase() {
        insta::assert_snapshot!(glossary(&Metric::ALL));
    }

    #[test]
    fn glossary_lists_only_the_metrics_asked_for() {
        let text = glossary(&[Metric::Mixed, Metric::Cold]);
        assert_eq!(text.lines().filter(|l| l.starts_with("  ")).count(), 2);
        assert!(text.starts_with("measure\n  cold (seconds, lower is better): "));
        assert!(text.contains("\nruntime\n  mixed (seconds, lower is better): "));
        assert!(!text.contains("install"));
    }

    #[test]
    fn unknown_names_are_errors() {
        let error = "colder".parse::<Metric>().unwrap_err();
        assert_eq!(error.to_string(), "unknown metric `colder`");
        assert!("setup".parse::<Phase>().is_err());
    }
}
