//! Which turn a request plays: the state of the script between requests.
//!
//! A request with a response schema, or one that asks for a title, is a side request:
//! answered at once without touching the script. A request carrying tool results
//! while a turn waits for them gets that turn's `then`. Any other request is a new
//! user message: the first turn at or after the current one whose `when` matches its
//! last user message (or that has no `when`) is played, and the script moves past it.
//! Faults hit before anything is played, and a faulted request consumes nothing: the
//! agent's retry plays the turn.

use crate::physics::{Fault, Physics};
use crate::request::Asked;
use crate::script::{Compiled, FaultTarget, Reply};

/// Why a request was answered outside the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A title for the session (opencode; claude-code's and codex's come with a schema).
    Title,
    /// A one-sentence summary of an earlier session (gemini-cli at start-up).
    Summary,
    /// Structured output: a value valid for the request's schema (gemini-cli's router).
    Schema,
    /// A token count.
    CountTokens,
    /// A model list.
    Models,
    /// `HEAD /` or `GET /`.
    Root,
    /// codex's websocket upgrade, refused so it uses HTTPS.
    Websocket,
}

impl Side {
    /// The name in the journal.
    pub fn name(self) -> &'static str {
        match self {
            Side::Title => "title",
            Side::Summary => "summary",
            Side::Schema => "schema",
            Side::CountTokens => "count_tokens",
            Side::Models => "models",
            Side::Root => "root",
            Side::Websocket => "websocket",
        }
    }
}

/// Which part of a turn a request played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The turn's first reply (text, or its tool calls).
    Start,
    /// The reply after tool results (1 for the first `then`, 2 for a `then` of a `then`).
    AfterTools(u32),
}

/// What the script says to a model request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Play this turn's reply.
    Turn {
        /// The turn (from 0).
        index: usize,
        /// Which part.
        part: Part,
        /// The reply.
        reply: Reply,
        /// Its physics.
        physics: Physics,
    },
    /// A side request.
    Side(Side),
    /// No turn plays; the endpoint says so in a short text.
    NoTurn(String),
    /// A fault hits this request; `turn` is what it would have played (a cut sends
    /// part of it).
    Fault {
        /// The fault.
        fault: Fault,
        /// The turn (from 0), its reply and physics.
        turn: Option<(usize, Reply, Physics)>,
    },
}

/// The script and where it stands.
#[derive(Debug)]
pub struct Conversation {
    script: Compiled,
    /// The next turn to consider for a new user message.
    next: usize,
    /// A turn whose tool calls were sent: its index, part, and the reply to their results.
    waiting: Option<(usize, u32, Reply)>,
    /// How many requests each fault has hit.
    hits: Vec<u32>,
}

/// A title request: no tools, and its system prompt or message asks for a title.
pub fn is_title(asked: &Asked) -> bool {
    if !asked.tools.is_empty() {
        return false;
    }
    let system = asked.system_text.to_ascii_lowercase();
    let user = asked.last_user_text.to_ascii_lowercase();
    let asks_title = |text: &str| {
        text.contains("title generator")
            || text.contains("generate a title")
            || text.contains("a title for")
            || text.contains("conversation title")
            || text.contains("sentence-case title")
            || text.contains("concise title")
            || (text.contains("title") && text.contains("summar"))
    };
    asks_title(&system) || asks_title(&user)
}

/// A session-summary request: no tools, and it asks for a summary of the conversation
/// in a sentence (gemini-cli sends one at start-up when an earlier session exists); or,
/// tools or not, Copilot's request to summarize a conversation it compacts.
pub fn is_summary(asked: &Asked) -> bool {
    let user = asked.last_user_text.to_ascii_lowercase();
    // Copilot compacts a long conversation with its tools still advertised: taken for a
    // turn, its summary played the next turn's reply, and every turn after it was one
    // turn ahead of its prompt (a long session failed at turn 54).
    if user.contains("summary of the conversation so far") && user.contains("compacted") {
        return true;
    }
    if !asked.tools.is_empty() {
        return false;
    }
    user.contains("summarize the user's primary intent")
        || (user.contains("summar") && user.contains("in one sentence"))
}

impl Conversation {
    /// A conversation at the first turn.
    pub fn new(script: Compiled) -> Conversation {
        let hits = vec![0; script.faults.len()];
        Conversation {
            script,
            next: 0,
            waiting: None,
            hits,
        }
    }

    /// Back at the first turn with no tool results awaited; fault hit counts are kept.
    pub fn rewind(&mut self) {
        self.next = 0;
        self.waiting = None;
    }

    /// The script's physics (for side requests).
    pub fn physics(&self) -> &Physics {
        &self.script.physics
    }

    /// A fault for request `number` (from 1) before it is even read, if one is due.
    pub fn request_fault(&mut self, number: u64) -> Option<Fault> {
        let index = self.script.faults.iter().enumerate().position(|(i, f)| {
            f.target == FaultTarget::Request(number) && self.hits[i] < f.times
        })?;
        self.hits[index] += 1;
        Some(self.script.faults[index].clone())
    }

    /// Decides what request `asked` plays, and moves the script on unless a fault hits.
    pub fn decide(&mut self, asked: &Asked) -> Decision {
        if asked.schema.is_some() || asked.json {
            return Decision::Side(Side::Schema);
        }
        if is_title(asked) {
            return Decision::Side(Side::Title);
        }
        if is_summary(asked) {
            return Decision::Side(Side::Summary);
        }
        if asked.tool_results
            && let Some((index, depth, reply)) = self.waiting.clone()
        {
            let physics = self.script.turns[index].physics.clone();
            self.waiting = match &reply {
                Reply::Tools { then, .. } => Some((index, depth + 1, (**then).clone())),
                _ => None,
            };
            return Decision::Turn {
                index,
                part: Part::AfterTools(depth),
                reply,
                physics,
            };
        }
        let Some(index) = self.pick(&asked.last_user_text) else {
            return Decision::NoTurn(
                if self.next >= self.script.turns.len() && !self.script.repeat {
                    format!(
                        "the script's {} turn(s) were all played",
                        self.script.turns.len()
                    )
                } else {
                    "no turn matches the last user message".to_owned()
                },
            );
        };
        if let Some(fault) = self.turn_fault(index) {
            let turn = &self.script.turns[index];
            return Decision::Fault {
                fault,
                turn: Some((index, turn.reply.clone(), turn.physics.clone())),
            };
        }
        let turn = &self.script.turns[index];
        self.next = index + 1;
        if self.script.repeat && self.next >= self.script.turns.len() {
            self.next = 0;
        }
        self.waiting = match &turn.reply {
            Reply::Tools { then, .. } => Some((index, 1, (**then).clone())),
            _ => None,
        };
        Decision::Turn {
            index,
            part: Part::Start,
            reply: turn.reply.clone(),
            physics: turn.physics.clone(),
        }
    }

    /// Decides as [`Conversation::decide`] but leaves the script where it was (a
    /// request cut by its number consumes nothing: the agent's retry plays the same turn).
    pub fn decide_uncommitted(&mut self, asked: &Asked) -> Decision {
        let saved = (self.next, self.waiting.clone());
        let decision = self.decide(asked);
        (self.next, self.waiting) = saved;
        decision
    }

    /// The first turn from `next` on (wrapping once when the script repeats) that
    /// matches `text`.
    fn pick(&self, text: &str) -> Option<usize> {
        let count = self.script.turns.len();
        let order: Vec<usize> = if self.script.repeat {
            (0..count).map(|i| (self.next + i) % count).collect()
        } else {
            (self.next..count).collect()
        };
        order.into_iter().find(|&index| {
            self.script.turns[index]
                .when
                .as_ref()
                .is_none_or(|when| when.is_match(text))
        })
    }

    fn turn_fault(&mut self, turn: usize) -> Option<Fault> {
        let index = self
            .script
            .faults
            .iter()
            .enumerate()
            .position(|(i, f)| f.target == FaultTarget::Turn(turn) && self.hits[i] < f.times)?;
        self.hits[index] += 1;
        Some(self.script.faults[index].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::FaultKind;
    use crate::script::Script;

    fn conversation(toml: &str) -> Conversation {
        Conversation::new(Script::from_toml(toml, "s").unwrap().compile().unwrap())
    }

    fn user(text: &str) -> Asked {
        Asked {
            last_user_text: text.into(),
            tools: vec![crate::request::Tool {
                name: "Bash".into(),
                parameters: serde_json::Value::Null,
                freeform: false,
            }],
            ..Asked::default()
        }
    }

    fn played(decision: &Decision) -> Option<(usize, Part)> {
        match decision {
            Decision::Turn { index, part, .. } => Some((*index, *part)),
            _ => None,
        }
    }

    #[test]
    fn turns_play_in_order_and_tool_results_get_then() {
        let mut c = conversation(
            "[[turns]]\nshell = \"ls\"\nthen = \"listed\"\n[[turns]]\ntext = \"bye\"\n",
        );
        assert_eq!(played(&c.decide(&user("hi"))), Some((0, Part::Start)));
        let mut results = user("hi");
        results.tool_results = true;
        let decision = c.decide(&results);
        assert_eq!(played(&decision), Some((0, Part::AfterTools(1))));
        let Decision::Turn { reply, .. } = decision else {
            unreachable!()
        };
        assert_eq!(reply, Reply::Text("listed".into()));
        assert_eq!(played(&c.decide(&user("next"))), Some((1, Part::Start)));
        assert!(
            matches!(c.decide(&user("more")), Decision::NoTurn(why) if why.contains("all played"))
        );
    }

    #[test]
    fn a_rewound_conversation_plays_its_first_turn_again() {
        let mut c = conversation("[[turns]]\nshell = \"ls\"\n[[turns]]\ntext = \"bye\"\n");
        assert_eq!(played(&c.decide(&user("hi"))), Some((0, Part::Start)));
        c.rewind();
        let mut results = user("hi");
        results.tool_results = true;
        // No tool results are awaited any more: a request carrying some is a new message.
        assert_eq!(played(&c.decide(&results)), Some((0, Part::Start)));
        c.rewind();
        assert_eq!(played(&c.decide(&user("hi"))), Some((0, Part::Start)));
        assert_eq!(played(&c.decide(&user("next"))), Some((1, Part::Start)));
    }

    #[test]
    fn when_picks_a_turn_and_repeat_wraps() {
        let mut c = conversation(
            "repeat = true\n[[turns]]\nwhen = \"(?i)list\"\nshell = \"ls\"\n[[turns]]\ntext = \"hello\"\n",
        );
        assert_eq!(
            played(&c.decide(&user("hello there"))),
            Some((1, Part::Start))
        );
        assert_eq!(
            played(&c.decide(&user("please LIST it"))),
            Some((0, Part::Start))
        );
        assert_eq!(played(&c.decide(&user("again"))), Some((1, Part::Start)));
    }

    #[test]
    fn side_requests_do_not_consume_turns() {
        let mut c = conversation("[[turns]]\ntext = \"one\"\n[[turns]]\ntext = \"two\"\n");
        let title = Asked {
            system_text: "You are a title generator. Output a title".into(),
            ..Asked::default()
        };
        assert_eq!(c.decide(&title), Decision::Side(Side::Title));
        let schema = Asked {
            schema: Some(serde_json::json!({"type": "object"})),
            ..user("route")
        };
        assert_eq!(c.decide(&schema), Decision::Side(Side::Schema));
        // Copilot's compaction, with its tools advertised.
        let compaction = user(
            "Please create a detailed summary of the conversation so far. The history is \
             being compacted so moving forward, all conversation history will be removed",
        );
        assert_eq!(c.decide(&compaction), Decision::Side(Side::Summary));
        assert_eq!(played(&c.decide(&user("go"))), Some((0, Part::Start)));
    }

    #[test]
    fn a_turn_fault_hits_its_times_then_the_turn_plays() {
        let mut c = conversation(
            "[[turns]]\ntext = \"one\"\n[[faults]]\nturn = 1\nkind = \"rate_limit\"\ntimes = 2\n",
        );
        assert!(
            matches!(c.decide(&user("a")), Decision::Fault { fault, .. } if fault.kind == FaultKind::RateLimit)
        );
        assert!(matches!(c.decide(&user("a")), Decision::Fault { .. }));
        assert_eq!(played(&c.decide(&user("a"))), Some((0, Part::Start)));
    }

    #[test]
    fn a_request_fault_hits_that_request_only() {
        let mut c = conversation("[[faults]]\nrequest = 2\nkind = \"server_error\"\n");
        assert!(c.request_fault(1).is_none());
        assert!(c.request_fault(2).is_some());
        assert!(c.request_fault(2).is_none());
    }
}
