//! The glossary of every metric: what [`Metric::description`] says, one sentence or
//! two per metric, in declaration order (a unit test checks the order).

use super::Metric;

/// [`Metric::description`]'s glossary, one entry per metric in declaration order.
pub(super) const DESCRIPTIONS: [(Metric, &str); Metric::ALL.len()] = [
    (
        Metric::Bundle,
        "Total size of the release artifacts (the files an install downloads; for npm packages with their platform and other dependencies when the spec collects them); the result's artifacts list each file.",
    ),
    (
        Metric::Install,
        "Wall time of the installer, from a fresh home to an installed program.",
    ),
    (
        Metric::Disk,
        "How much the home folder grew through the installation (trial 0 only).",
    ),
    (
        Metric::Cold,
        "Time from spawning the program in a real terminal until it is ready for input, on the trial's first start.",
    ),
    (
        Metric::Warm,
        "Time until ready on the trial's second start, right after the first, with caches warm.",
    ),
    (
        Metric::ColdCpu,
        "CPU time (user + system, in nanoseconds) the whole process family spent from spawn until ready on the first start; it moves much less than wall time when the machine is busy.",
    ),
    (
        Metric::WarmCpu,
        "CPU time the whole process family spent from spawn until ready on the second start.",
    ),
    (
        Metric::ColdUnqueued,
        "The cold start's time less the time its processes waited in the run queue for a CPU (schedstat): what the start takes with the machine's other work, or a duet partner, out of its way. Waits of processes that exited before ready are not known, so it can only come out high.",
    ),
    (
        Metric::WarmUnqueued,
        "The warm start's time less the time its processes waited in the run queue for a CPU.",
    ),
    (
        Metric::Rss,
        "Resident memory of the whole process family (the program, its children and daemons) once the cold start has settled. Shared pages count once per process.",
    ),
    (
        Metric::Pss,
        "Proportional memory of the process family once the cold start has settled: shared pages are split between the processes sharing them, so the sum is what the family really costs.",
    ),
    (
        Metric::KernelStart,
        "Time until the REPL kernel answers its first request.",
    ),
    (
        Metric::KernelRss,
        "Resident memory of the idle REPL kernel's processes.",
    ),
    (
        Metric::KernelExec,
        "Round trip of one empty cell through the REPL kernel.",
    ),
    (
        Metric::Bash,
        "Round trip of one empty shell command run through the kernel.",
    ),
    (
        Metric::GitStatus,
        "Round trip of one `git status` run through the kernel in the fixture repository.",
    ),
    (
        Metric::Output,
        "Round trip of one shell command that prints a fixed amount of output through the kernel: how fast output streams back.",
    ),
    (
        Metric::Mixed,
        "Time for one batch that mixes cells and shell commands, as an agent's turn would.",
    ),
    (
        Metric::Interrupt,
        "Time from interrupting a busy kernel until it answers again.",
    ),
    (
        Metric::LoadedRss,
        "Resident memory of the kernel with a data frame loaded.",
    ),
    (Metric::Snapshot, "Time to save the kernel's state to disk."),
    (
        Metric::Restore,
        "Time to restore a saved state in a fresh kernel.",
    ),
    (
        Metric::UiSteps,
        "Total wall time of the spec's UI steps (keys typed, until the expected text appears).",
    ),
    (
        Metric::UiCpu,
        "CPU time (user + system) the whole process family spent during the UI steps: work done for the person, or spinning.",
    ),
    (
        Metric::Keystroke,
        "Median time from a key press until the screen shows it.",
    ),
    (
        Metric::UiRss,
        "Resident memory of the process family after the UI steps.",
    ),
    (
        Metric::InstanceRss,
        "Resident memory each extra running instance adds, averaged over the staircase's steps.",
    ),
    (
        Metric::InstancePss,
        "Proportional memory each extra running instance adds: shared libraries and caches split between instances.",
    ),
    (
        Metric::InstanceUss,
        "Unique (private) memory each extra instance adds: what stopping it would give back.",
    ),
    (
        Metric::ReclaimedRss,
        "Resident memory given back once the staircase's instances are stopped; memory not given back has leaked into daemons or caches.",
    ),
    (
        Metric::FirstByte,
        "Time from spawning the program in a real terminal until it wrote its first byte.",
    ),
    (
        Metric::FirstFrame,
        "Time from spawning the program until the screen shows a first line with at least 3 letters or digits.",
    ),
    (
        Metric::Ready,
        "Time from spawning the program in a real terminal until it is ready by the chosen mode, on each measured start (after the warm-up starts).",
    ),
    (
        Metric::UserCpu,
        "User-mode CPU time of one start's processes, from start to stop, as hyperfine's `user`.",
    ),
    (
        Metric::SystemCpu,
        "Kernel-mode CPU time of one start's processes, from start to stop, as hyperfine's `system`.",
    ),
    (
        Metric::Uss,
        "Unique memory of the process family: pages no other process shares, what stopping the family would give back.",
    ),
    (
        Metric::Swap,
        "Memory of the process family that was swapped out.",
    ),
    (
        Metric::PeakRss,
        "The highest resident memory of the process family, sampled while a started command settled.",
    ),
    (
        Metric::PeakPss,
        "The highest proportional memory of the process family, sampled while a started command settled.",
    ),
    (
        Metric::Turn,
        "Time from pressing Enter on a scripted prompt until the turn's last text is on the screen and the prompt takes input again (median over the turns).",
    ),
    (
        Metric::Submit,
        "Time from pressing Enter until the model endpoint received the turn's request: the agent's own work before it asks the model.",
    ),
    (
        Metric::FirstToken,
        "Time from the endpoint writing the first chunk of a reply until its text is first visible on the screen: how soon the agent renders what streams in.",
    ),
    (
        Metric::StreamRender,
        "Time from the endpoint writing the last chunk of a reply until the final text is visible: how far the screen lags behind the stream at its end.",
    ),
    (
        Metric::ToolRoundtrip,
        "Time from the endpoint writing a tool call until the request carrying its result arrived: the agent running the tool and reporting back (turns with a tool call).",
    ),
    (
        Metric::TurnCpu,
        "CPU time (user + system, in nanoseconds) the whole process family spent during one turn (median over the turns); spikes while output streams show here.",
    ),
    (
        Metric::TypingLag,
        "Median time from a key press until its echo is on the screen, for keys typed at a person's pace while a long reply streams.",
    ),
    (
        Metric::SessionRss,
        "Resident memory of the process family after the session's last turn.",
    ),
    (
        Metric::SessionPss,
        "Proportional memory of the process family after the session's last turn.",
    ),
    (
        Metric::SessionGrowth,
        "How much the family's memory grows per turn: the least-squares slope of its PSS (RSS when PSS is unreadable) over the turns; a leak shows as a steady slope. A family that shrinks records 0 (the signed slope stays in the per-turn series).",
    ),
    (
        Metric::IdleCpu,
        "Share of one CPU core the whole process family uses while idle at the prompt after the turns (0.05 is 5% of a core); an idle agent should use almost none.",
    ),
    (
        Metric::StreamBytes,
        "Bytes the agent wrote to its terminal during a turn divided by the tokens its replies streamed (median over the turns): what redrawing costs per streamed token. A TUI that repaints the whole screen on every chunk writes far more than the text.",
    ),
    (
        Metric::IdleOutput,
        "Bytes per second the agent wrote to its terminal while idle at the prompt after the turns: a spinner or a clock redrawn for nobody.",
    ),
    (
        Metric::KeyEcho,
        "Median time from a key press until its echo is on the screen, typed at the idle prompt at the session's last checkpoint: typing lag after the whole session.",
    ),
    (
        Metric::KeyBytes,
        "Bytes the agent wrote to its terminal per key typed at the idle prompt, at the session's last checkpoint: a TUI that redraws its whole transcript on each key writes more as the session grows.",
    ),
    (
        Metric::LagGrowth,
        "How much the idle prompt's keystroke-to-echo latency grows per 100 turns: the least-squares slope over the checkpoints after the warm-up (an O(session) cost per key shows as a steady slope). A latency that shrinks records 0.",
    ),
    (
        Metric::RenderGrowth,
        "How many more bytes per key typing writes per 100 turns: the least-squares slope of the checkpoints' bytes per key after the warm-up. A count that shrinks records 0.",
    ),
    (
        Metric::PasteAccept,
        "Time from the first byte of the largest bracketed paste (`[session] pastes`, 500 KB in `--scenario paste`) into the idle prompt until the agent showed it took it: the paste's last line on the screen, or for an agent that folds a paste into a placeholder, the last change of its screen before a second without one.",
    ),
    (
        Metric::PasteCpu,
        "CPU time the whole process family spent from the largest paste's first byte until it was accepted: a paste that is re-wrapped or highlighted on every byte shows here.",
    ),
    (
        Metric::PasteOutput,
        "Bytes the agent wrote to its terminal from the largest paste's first byte until it was accepted: an input box redrawn as the paste arrives writes far more than the paste.",
    ),
];
