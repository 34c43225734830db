//! `--scenario NAME`: workloads shipped with clibench, runnable on any spec with `[model]`.
//! A scenario is a list of overrides put before the command line's own (`--set`, `ab
//! --base`/`--head`), so they are checked, recorded and compared like any override, and a
//! `--set` still wins over the scenario.
//!
//! - `long-session`: 100 turns, a tool call in every one, with deterministic variety (ten
//!   turns of different reply lengths and tool output sizes, played in rounds); a
//!   checkpoint every 10 turns, the first turn a warm-up. Its slopes are `session_growth`,
//!   `lag_growth` and `render_growth`.
//! - `big-output`: tool results of 100 KB and 1 MB of log lines and one 100 KB line of
//!   JSON, after a warm-up tool call: each turn's time, CPU, terminal output and memory.
//! - `paste`: three turns, then bracketed pastes of 10, 100 and 500 KB into the idle
//!   prompt (`paste_accept`, `paste_cpu`, `paste_output`).
//! - `idle`: three turns, then 30 s idle at the prompt (`idle_cpu`, `idle_output`).
//!
//! The three short ones type their keys for `typing_lag` during the first turn (a
//! scenario's turns are not the spec's, whose `typing_turn` may name one they lack) and
//! measure one checkpoint, after the last turn.
//!
//! A scenario's tool calls run the spec's own tool ([`tool_of`]: `[session]
//! scenario_tool`, else the first shell command of its script), so that a spec whose turns
//! work, its agent running that command without asking, works for the scenarios too:
//! qwen-code and Copilot, asked to run `seq` where their specs' turns ran `ls`, stopped
//! every long session at turn 1 to ask. Only `big-output`'s three big results need
//! commands of their own; [`Scenario::own_calls`] says which before a run starts.

use super::overrides::Override;
use std::fmt;
use std::str::FromStr;

/// A workload shipped with clibench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// 100 turns with a tool call each, checkpoints every 10.
    LongSession,
    /// Tool results of 100 KB, 1 MB and one 100 KB line.
    BigOutput,
    /// Bracketed pastes of 10, 100 and 500 KB.
    Paste,
    /// A 30 s idle window after three turns.
    Idle,
}

/// Every scenario, in the order the help lists them.
pub const SCENARIOS: [Scenario; 4] = [
    Scenario::LongSession,
    Scenario::BigOutput,
    Scenario::Paste,
    Scenario::Idle,
];

/// Turns of the long session.
const LONG_SESSION_TURNS: u32 = 100;
/// Distinct turns its script plays in rounds.
const LONG_SESSION_VARIETY: u32 = 10;

/// A scenario name clibench does not ship.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario `{0}`; expected one of: long-session, big-output, paste, idle")]
pub struct UnknownScenario(String);

impl FromStr for Scenario {
    type Err = UnknownScenario;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SCENARIOS
            .into_iter()
            .find(|scenario| scenario.to_string() == name)
            .ok_or_else(|| UnknownScenario(name.to_owned()))
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scenario::LongSession => "long-session",
            Scenario::BigOutput => "big-output",
            Scenario::Paste => "paste",
            Scenario::Idle => "idle",
        })
    }
}

/// The shell command a scenario's tool calls run for `spec`: `[session] scenario_tool`,
/// else the first shell command of the spec's own script (`None`: the scenarios' own).
pub fn tool_of(spec: &super::Spec) -> Option<String> {
    if let Some(tool) = spec.session.as_ref().and_then(|s| s.scenario_tool.clone()) {
        return Some(tool);
    }
    let compiled = spec.model.as_ref()?.compiled.as_ref()?;
    compiled
        .turns
        .iter()
        .find_map(|turn| first_shell(&turn.reply))
}

/// The command a call of the scenario's own `own` runs given the spec's `tool`: `own`
/// when the tool is the same program (`scenario_tool = "seq"` lets the long session
/// keep its `seq 1 N` and the variety of its outputs), else the tool as written.
fn command_for(own: &str, tool: Option<&str>) -> String {
    let program = |command: &str| command.split_whitespace().next().map(str::to_owned);
    match tool {
        Some(tool) if program(tool) != program(own) => tool.to_owned(),
        _ => own.to_owned(),
    }
}

fn first_shell(reply: &bench_model::script::Reply) -> Option<String> {
    use bench_model::script::{Reply, ToolCall};
    match reply {
        Reply::Tools { calls, then } => calls
            .iter()
            .find_map(|call| match call {
                ToolCall::Shell(command) => Some(command.clone()),
                _ => None,
            })
            .or_else(|| first_shell(then)),
        _ => None,
    }
}

impl Scenario {
    /// The scenario's overrides with its own tool calls, in order.
    pub fn overrides(self) -> Vec<Override> {
        self.overrides_with(None)
    }

    /// What the scenario asks the agent to run that is not `tool` (the spec's, see
    /// `tool_of`), for a line before the run: an agent with approvals on stops there.
    pub fn own_calls(self, tool: Option<&str>) -> Option<String> {
        match (self, tool) {
            (Scenario::LongSession, None) => Some("`seq 1 N` (50 to 500 lines)".to_owned()),
            (Scenario::Paste | Scenario::Idle, None) => Some("`ls`".to_owned()),
            (Scenario::BigOutput, _) => {
                let [hundred_kb, _, long_line] = big_output_commands();
                Some(format!(
                    "`{hundred_kb}`, the same with `head -c {}` and `{long_line}`",
                    1024 * 1024
                ))
            }
            _ => None,
        }
    }

    /// The scenario's overrides, in order, its tool calls running `tool` where given.
    pub fn overrides_with(self, tool: Option<&str>) -> Vec<Override> {
        let pairs = match self {
            Scenario::LongSession => vec![
                ("model.script".to_owned(), long_session_script(tool)),
                ("session.turns".to_owned(), LONG_SESSION_TURNS.to_string()),
                ("session.warmup_turns".to_owned(), "1".to_owned()),
                ("session.checkpoint_every".to_owned(), "10".to_owned()),
            ],
            Scenario::BigOutput => short(&big_output_turns(tool)),
            Scenario::Paste => {
                let mut pairs = short(&paste_turns(tool));
                pairs.push((
                    "session.pastes".to_owned(),
                    format!("{PASTE_BYTES:?}").replace(' ', ""),
                ));
                pairs
            }
            Scenario::Idle => {
                let mut pairs = short(&idle_turns(tool));
                pairs.push(("session.idle".to_owned(), "\"30s\"".to_owned()));
                pairs
            }
        };
        pairs
            .into_iter()
            .map(|(key, value)| {
                // Invariant: the keys above are dotted names and the values TOML the
                // override parser reads; a test parses every scenario.
                format!("{key}={value}")
                    .parse()
                    .unwrap_or_else(|error| unreachable!("scenario {self}: {error}"))
            })
            .collect()
    }
}

/// The paste scenario's sizes: 10, 100 and 500 KB.
const PASTE_BYTES: [u64; 3] = [10 * 1024, 100 * 1024, 500 * 1024];
/// A log line of the big-output scenario's tool results (80 bytes with its newline).
const LOG_LINE: &str =
    "INFO 2026-01-01T00:00:00Z worker-7 handled request id=4242 status=200 in 3 ms ok";
/// A record of its single long line, as minified JSON (30 bytes).
const JSON_RECORD: &str = "{\"id\":4242,\"status\":\"ok\",\"ms\":3},";

/// The overrides of a short scenario of `turns`: its script, one turn each, keys typed
/// during the first, one checkpoint after the last.
fn short(turns: &[String]) -> Vec<(String, String)> {
    vec![
        ("model.script".to_owned(), script(turns)),
        ("session.turns".to_owned(), turns.len().to_string()),
        ("session.warmup_turns".to_owned(), "1".to_owned()),
        ("session.checkpoint_every".to_owned(), "0".to_owned()),
        ("session.typing_turn".to_owned(), "1".to_owned()),
        ("session.typing_keys".to_owned(), "3".to_owned()),
    ]
}

/// A script of `turns` (inline TOML tables) with the demo's physics.
fn script(turns: &[String]) -> String {
    format!(
        "{{ physics = {{ first_token = \"100ms\", tokens_per_second = 200, chunk_tokens = 2, seed = 7 }}, turns = [{}] }}",
        turns.join(", ")
    )
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A turn whose prompt is `prompt`, with a shell tool call of `shell` (when given) and a
/// reply that ends in `End of step {k}.`.
fn turn(k: usize, prompt: &str, shell: Option<&str>, reply: &str) -> String {
    let reply = toml_string(&format!("{reply} End of step {k}."));
    let prompt = toml_string(&format!("step {k}: {prompt}"));
    match shell {
        Some(command) => format!(
            "{{ prompt = {prompt}, shell = {}, then = {{ text = {reply} }} }}",
            toml_string(command)
        ),
        None => format!("{{ prompt = {prompt}, text = {reply} }}"),
    }
}

/// The three big outputs' commands: 100 KB and 1 MB of log lines, one 100 KB line of
/// JSON records. Each is the agent's own tool run of a pipeline of coreutils (`yes`,
/// `head -c`, `tr`), as a build log or a `cat` of a large file reaches an agent, with no
/// file to write into the workspace first.
fn big_output_commands() -> [String; 3] {
    let lines = |bytes: usize| format!("yes '{LOG_LINE}' | head -c {bytes}");
    [
        lines(100 * 1024),
        lines(1024 * 1024),
        format!("yes '{JSON_RECORD}' | tr -d '\\n' | head -c {}", 100 * 1024),
    ]
}

/// The warm-up tool call (`tool`, else `ls`), then the three big outputs.
fn big_output_turns(tool: Option<&str>) -> Vec<String> {
    let [hundred_kb, one_mb, long_line] = big_output_commands();
    vec![
        turn(
            1,
            "list the files",
            Some(&command_for("ls", tool)),
            "Those are the files.",
        ),
        turn(
            2,
            "show the last 100 KB of the log",
            Some(&hundred_kb),
            "The log shows requests handled with status 200.",
        ),
        turn(
            3,
            "show the last 1 MB of the log",
            Some(&one_mb),
            "The longer log shows the same requests, all of them fine.",
        ),
        turn(
            4,
            "print the minified JSON response",
            Some(&long_line),
            "The response is one line of records with status ok.",
        ),
    ]
}

/// A short conversation with a tool call before the pastes: three turns, so that
/// `session_growth` has the two after the warm-up it needs.
fn paste_turns(tool: Option<&str>) -> Vec<String> {
    vec![
        turn(1, "say hello", None, "Hello! What shall we look at?"),
        turn(
            2,
            "list the files",
            Some(&command_for("ls", tool)),
            "Those are the files.",
        ),
        turn(
            3,
            "wait for my paste",
            None,
            "Paste what you want me to read.",
        ),
    ]
}

/// Three turns before the idle window: a greeting, a tool call and a longer reply.
fn idle_turns(tool: Option<&str>) -> Vec<String> {
    let story =
        "The agent read the files, ran the tests and summed up what it found in them. ".repeat(4);
    vec![
        turn(1, "say hello", None, "Hello! What shall we do today?"),
        turn(
            2,
            "list the files",
            Some(&command_for("ls", tool)),
            "Those are the files.",
        ),
        turn(3, "tell me what you did", None, story.trim_end()),
    ]
}

/// The long session's script as an inline TOML table: ten turns, each a shell tool call
/// whose output is 50 to 500 lines of numbers and a reply of about 30 to 165 words after it.
/// The physics is the demo's (the spec's `[model] physics` still applies on top). With
/// a `tool` of another program, every call runs it instead (its output's size is then the
/// tool's).
fn long_session_script(tool: Option<&str>) -> String {
    let turns: Vec<String> = (1..=LONG_SESSION_VARIETY)
        .map(|k| {
            let lines = 50 * (1 + (k * 7) % LONG_SESSION_VARIETY);
            let words = 30 + (k * 37) % 136;
            let command = command_for(&format!("seq 1 {lines}"), tool);
            format!(
                "{{ prompt = \"step {k}: run the command and sum up what it printed\", \
                 shell = {}, then = {{ text = \"{}\" }} }}",
                toml_string(&command),
                reply(k, lines, words)
            )
        })
        .collect();
    format!(
        "{{ physics = {{ first_token = \"100ms\", tokens_per_second = 200, chunk_tokens = 2, seed = 7 }}, turns = [{}] }}",
        turns.join(", ")
    )
}

/// About `words` words on what step `k` printed, ending in `End of step k.`: a text
/// whose last words are on no other turn's screen (replies of `tokens = N` share their
/// words, and an earlier reply's end still on the screen hid a later one's).
///
/// No stretch of it repeats: after the first sentence each names rows of the output
/// and what they hold, the numbers rising, so every 50 characters hold one not seen
/// before. gemini-cli stops a reply in which a 50-character chunk recurs ten times (its
/// loop detection) and asks again with "Potential loop detected"; a reply made of one
/// sentence said ten times ended its third turn that way.
fn reply(k: u32, lines: u32, words: u32) -> String {
    let mut text = format!("The command printed {lines} lines of numbers, one per line.");
    // Each sentence is 12 words and names three rows; the first has 10, the end 4.
    let sentences = (words.saturating_sub(14) / 12).max(1);
    for sentence in 0..sentences {
        let row = 3 * sentence + k;
        text.push_str(&format!(
            " Row {row} holds {row}, row {} holds {}, row {} holds {}.",
            row + 1,
            row + 1,
            row + 2,
            row + 2
        ));
    }
    text.push_str(&format!(" End of step {k}."));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_say_what_exists() {
        assert_eq!("long-session".parse(), Ok(Scenario::LongSession));
        assert_eq!(Scenario::LongSession.to_string(), "long-session");
        let error = "longer".parse::<Scenario>().unwrap_err().to_string();
        assert!(error.contains("expected one of: long-session"), "{error}");
        for scenario in SCENARIOS {
            assert_eq!(scenario.to_string().parse(), Ok(scenario));
        }
    }

    fn with(scenario: Scenario) -> super::super::Spec {
        let text = "name = \"x\"\n[measure]\ncommand = [\"agent\"]\n\
                    [model]\ndialect = \"anthropic\"\nscript = \"missing-file.toml\"\n\
                    [session]\ntyping_turn = 7\n";
        super::super::parse_with(text, "x.toml", &scenario.overrides())
            .unwrap_or_else(|error| panic!("{scenario}: {error}"))
    }

    #[test]
    fn big_output_runs_three_big_tool_results_after_a_warm_up() {
        let spec = with(Scenario::BigOutput);
        let session = spec.session.as_ref().unwrap();
        // The spec's typing turn is past the scenario's four: the scenario's own wins.
        assert_eq!((session.typing_turn, session.warmup_turns), (Some(1), 1));
        let compiled = spec.model.unwrap().compiled.unwrap();
        assert_eq!(compiled.turns.len(), 4);
        assert!(compiled.turns.iter().all(|t| t.reply.tool_rounds() == 1));
        // The commands reach the script through TOML intact.
        let text = format!("{:?}", compiled.turns[3].reply);
        assert!(text.contains("| tr -d '\\\\n' |"), "{text}");
    }

    #[test]
    fn the_big_outputs_have_their_sizes_when_run() {
        // The pipelines as a shell runs them: 100 KB of lines, 1 MB, one 100 KB line.
        let commands = big_output_commands();
        let sizes: Vec<(usize, usize)> = commands
            .iter()
            .map(|command| {
                let out = std::process::Command::new("sh")
                    .args(["-c", command])
                    .output()
                    .unwrap();
                let lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
                (out.stdout.len(), lines)
            })
            .collect();
        assert_eq!(sizes[0].0, 100 * 1024, "{commands:?}");
        assert_eq!(sizes[1].0, 1024 * 1024);
        assert!(sizes[0].1 > 1000 && sizes[1].1 > 10_000, "{sizes:?}");
        assert_eq!(sizes[2], (100 * 1024, 0));
    }

    /// The commands of the shell calls of the script `with(scenario)` reads for `spec`.
    fn calls(spec_text: &str, scenario: Scenario) -> Vec<String> {
        let own = super::super::parse_with(spec_text, "x.toml", &[]).unwrap();
        let tool = tool_of(&own);
        let spec = super::super::parse_with(
            spec_text,
            "x.toml",
            &scenario.overrides_with(tool.as_deref()),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        let compiled = spec.model.unwrap().compiled.unwrap();
        compiled
            .turns
            .iter()
            .filter_map(|turn| first_shell(&turn.reply))
            .collect()
    }

    #[test]
    fn a_scenario_calls_the_tool_the_specs_own_script_calls() {
        let with_ls = "name = \"x\"\n[measure]\ncommand = [\"agent\"]\n[model]\n\
                       dialect = \"anthropic\"\n[[model.script.turns]]\nprompt = \"list\"\n\
                       shell = \"ls -1\"\nthen = \"Listed.\"\n";
        let long = calls(with_ls, Scenario::LongSession);
        assert_eq!(long.len(), 100);
        assert!(long.iter().all(|command| command == "ls -1"), "{long:?}");
        // The same program as the scenario's own `ls`: its own arguments.
        assert_eq!(calls(with_ls, Scenario::Paste), ["ls"]);
        assert_eq!(calls(with_ls, Scenario::Idle), ["ls"]);
        // big-output's big results are its own; its warm-up is the spec's program.
        let big = calls(with_ls, Scenario::BigOutput);
        assert_eq!(big[0], "ls");
        assert!(big[1].starts_with("yes "), "{big:?}");
        assert_eq!(
            Scenario::BigOutput
                .own_calls(Some("ls -1"))
                .map(|c| c.contains("yes ")),
            Some(true)
        );
        assert_eq!(Scenario::LongSession.own_calls(Some("ls -1")), None);
        // A [session] key naming the scenario's own program keeps its arguments.
        let seq = format!("{with_ls}[session]\nscenario_tool = \"seq\"\n");
        let long = calls(&seq, Scenario::LongSession);
        assert!(long.iter().all(|c| c.starts_with("seq 1 ")), "{long:?}");
        assert_eq!(calls(&seq, Scenario::Paste), ["seq"]);
        // A spec without a tool turn: the scenario's own calls, said before it starts.
        let text = "name = \"x\"\n[measure]\ncommand = [\"agent\"]\n[model]\n\
                    dialect = \"anthropic\"\n[[model.script.turns]]\nprompt = \"hi\"\n\
                    text = \"Hello.\"\n";
        assert!(calls(text, Scenario::LongSession)[0].starts_with("seq 1 "));
        assert_eq!(
            Scenario::LongSession.own_calls(None).as_deref(),
            Some("`seq 1 N` (50 to 500 lines)")
        );
    }

    #[test]
    fn paste_and_idle_set_their_windows() {
        let spec = with(Scenario::Paste);
        let session = spec.session.as_ref().unwrap();
        assert_eq!(session.pastes, [10240, 102400, 512000]);
        assert_eq!(spec.session_turns(), Some(3));
        let spec = with(Scenario::Idle);
        let session = spec.session.as_ref().unwrap();
        assert_eq!(session.idle.0, std::time::Duration::from_secs(30));
        assert!(session.pastes.is_empty());
        assert_eq!(spec.session_turns(), Some(3));
    }

    #[test]
    fn the_long_session_turns_a_spec_with_a_model_into_100_tool_turns() {
        let text = "name = \"x\"\n[measure]\ncommand = [\"agent\"]\n\
                    [model]\ndialect = \"anthropic\"\nscript = \"missing-file.toml\"\n";
        let spec = super::super::parse_with(text, "x.toml", &Scenario::LongSession.overrides())
            .unwrap_or_else(|error| panic!("{error}"));
        let session = spec.session.as_ref().unwrap();
        assert_eq!(session.turns, Some(100));
        assert_eq!(session.checkpoint_every, 10);
        assert_eq!(spec.session_turns(), Some(100));
        let compiled = spec.model.unwrap().compiled.unwrap();
        assert!(compiled.turns.iter().all(|t| t.reply.tool_rounds() == 1));
        // Deterministic variety: the ten turns' replies differ in length, and no reply's
        // last words are in another's text.
        let texts: Vec<String> = compiled.turns[..10]
            .iter()
            .map(|t| t.reply.final_text())
            .collect();
        let lengths: std::collections::BTreeSet<usize> = texts.iter().map(String::len).collect();
        assert!(lengths.len() >= 5, "{lengths:?}");
        for (k, text) in texts.iter().enumerate() {
            let end = format!("End of step {}.", k + 1);
            assert!(text.ends_with(&end), "{text}");
            assert_eq!(
                texts.iter().filter(|t| t.contains(&end)).count(),
                1,
                "{end}"
            );
        }
    }

    #[test]
    fn no_50_characters_of_a_long_session_reply_repeat_within_it() {
        // gemini-cli's loop detection stops a reply in which a 50-character chunk recurs
        // ten times; the replies said one sentence over and over and tripped it.
        for k in 1..=LONG_SESSION_VARIETY {
            let lines = 50 * (1 + (k * 7) % LONG_SESSION_VARIETY);
            let words = 30 + (k * 37) % 136;
            let text = reply(k, lines, words);
            let count = text.split_whitespace().count() as u32;
            assert!(
                count + 12 >= words && count <= words + 12,
                "{count} words: {text}"
            );
            let bytes = text.as_bytes();
            let mut seen = std::collections::HashSet::new();
            for chunk in bytes.windows(50) {
                assert!(
                    seen.insert(chunk),
                    "repeats {:?} in {text}",
                    String::from_utf8_lossy(chunk)
                );
            }
            // Every row it names is a row of the output (`seq 1 LINES`).
            let lower = text.to_lowercase();
            let rows = lower
                .split("row ")
                .skip(1)
                .filter_map(|rest| rest.split_whitespace().next()?.parse::<u32>().ok());
            assert!(rows.into_iter().all(|row| row <= lines), "{text}");
        }
    }
}
