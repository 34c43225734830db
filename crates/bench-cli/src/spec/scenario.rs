//! `--scenario NAME`: workloads shipped with clibench, runnable on any spec with `[model]`.
//! A scenario is a list of overrides put before the command line's own (`--set`, `ab
//! --base`/`--head`), so they are checked, recorded and compared like any override, and a
//! `--set` still wins over the scenario.
//!
//! - `long-session`: 100 turns, a tool call in every one, with deterministic variety (ten
//!   turns of different reply lengths and tool output sizes, played in rounds); a
//!   checkpoint every 10 turns, the first turn a warm-up. Its slopes are `session_growth`,
//!   `lag_growth` and `render_growth`.

use super::overrides::Override;
use std::fmt;
use std::str::FromStr;

/// A workload shipped with clibench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// 100 turns with a tool call each, checkpoints every 10.
    LongSession,
}

/// Turns of the long session.
const LONG_SESSION_TURNS: u32 = 100;
/// Distinct turns its script plays in rounds.
const LONG_SESSION_VARIETY: u32 = 10;

/// A scenario name clibench does not ship.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario `{0}`; expected one of: long-session")]
pub struct UnknownScenario(String);

impl FromStr for Scenario {
    type Err = UnknownScenario;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "long-session" => Ok(Scenario::LongSession),
            other => Err(UnknownScenario(other.to_owned())),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scenario::LongSession => "long-session",
        })
    }
}

impl Scenario {
    /// The scenario's overrides, in order.
    pub fn overrides(self) -> Vec<Override> {
        let pairs = match self {
            Scenario::LongSession => vec![
                ("model.script".to_owned(), long_session_script()),
                ("session.turns".to_owned(), LONG_SESSION_TURNS.to_string()),
                ("session.warmup_turns".to_owned(), "1".to_owned()),
                ("session.checkpoint_every".to_owned(), "10".to_owned()),
            ],
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

/// The long session's script as an inline TOML table: ten turns, each a shell tool call
/// whose output is 50 to 500 lines of numbers and a reply of about 30 to 165 words after it.
/// The physics is the demo's (the spec's `[model] physics` still applies on top).
fn long_session_script() -> String {
    let turns: Vec<String> = (1..=LONG_SESSION_VARIETY)
        .map(|k| {
            let lines = 50 * (1 + (k * 7) % LONG_SESSION_VARIETY);
            let words = 30 + (k * 37) % 136;
            format!(
                "{{ prompt = \"step {k}: run the command and sum up what it printed\", \
                 shell = \"seq 1 {lines}\", then = {{ text = \"{}\" }} }}",
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
fn reply(k: u32, lines: u32, words: u32) -> String {
    let sentence = format!(
        "The command printed {lines} lines of numbers, one per line, counting up from one."
    );
    let per = sentence.split_whitespace().count() as u32;
    let mut text = vec![sentence; (words / per).max(1) as usize].join(" ");
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
}
