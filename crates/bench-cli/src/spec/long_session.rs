//! `[session] turns = N`: the script unrolled to N prompted turns. The script's turns play
//! in order, again and again; every turn after the first round ends its final text with a
//! mark of its turn, `(turn 7)`.
//!
//! Why unrolled and marked rather than `repeat = true`: the session phase sees a reply's
//! end when its last words occur on the screen more often than before Enter. A repeated
//! reply's words may already be on the screen from the round before and scroll away as
//! the new one is drawn, so the count never rises and the turn would time out; a marked
//! reply's last words are on no earlier line.

use bench_model::Compiled;
use bench_model::script::{CompiledTurn, Reply};

/// `compiled` played until `turns` prompted turns were, the turns without a prompt kept in
/// their places in each round. A script without prompted turns is returned as it is.
pub(crate) fn unroll(compiled: &Compiled, turns: usize) -> Compiled {
    let prompted = compiled.turns.iter().filter(|t| t.prompt.is_some()).count();
    if prompted == 0 {
        return compiled.clone();
    }
    let mut unrolled: Vec<CompiledTurn> = Vec::with_capacity(turns * compiled.turns.len());
    let mut played = 0;
    'rounds: for round in 0.. {
        for turn in &compiled.turns {
            if turn.prompt.is_some() {
                if played == turns {
                    break 'rounds;
                }
                played += 1;
            }
            let mut turn = turn.clone();
            if round > 0 {
                turn.reply = marked(&turn.reply, &format!(" (turn {played})"));
            }
            unrolled.push(turn);
        }
    }
    Compiled {
        turns: unrolled,
        // The unrolled script is the whole session: past its end a request is the
        // agent's own, answered as the endpoint answers any request past a script.
        repeat: false,
        faults: compiled.faults.clone(),
        physics: compiled.physics.clone(),
    }
}

/// `reply` whose final text ends in `mark` (a text of deterministic tokens becomes that
/// text, marked).
fn marked(reply: &Reply, mark: &str) -> Reply {
    match reply {
        Reply::Text(text) => Reply::Text(format!("{text}{mark}")),
        Reply::Tokens(_) => Reply::Text(format!("{}{mark}", reply.final_text())),
        Reply::Tools { calls, then } => Reply::Tools {
            calls: calls.clone(),
            then: Box::new(marked(then, mark)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_model::Script;

    fn script() -> Compiled {
        let text = r#"
[[turns]]
prompt = "list"
shell = "ls"
then = "Those are the files."

[[turns]]
text = "an answer to a request of the agent's own"

[[turns]]
prompt = "story"
tokens = 5
"#;
        Script::from_toml(text, "t").unwrap().compile().unwrap()
    }

    #[test]
    fn prompted_turns_repeat_in_order_and_later_rounds_are_marked() {
        let unrolled = unroll(&script(), 5);
        let prompts: Vec<Option<&str>> =
            unrolled.turns.iter().map(|t| t.prompt.as_deref()).collect();
        assert_eq!(
            prompts,
            [
                Some("list"),
                None,
                Some("story"),
                Some("list"),
                None,
                Some("story"),
                Some("list"),
                // The round's turn without a prompt stays after the last prompted one.
                None,
            ]
        );
        // The first round is the script itself; later ones end with their turn.
        assert_eq!(unrolled.turns[0].reply.final_text(), "Those are the files.");
        assert_eq!(
            unrolled.turns[3].reply.final_text(),
            "Those are the files. (turn 3)"
        );
        assert_eq!(unrolled.turns[3].reply.tool_rounds(), 1);
        assert_eq!(
            unrolled.turns[4].reply.final_text(),
            "an answer to a request of the agent's own (turn 3)"
        );
        let story = unrolled.turns[5].reply.final_text();
        assert_eq!(
            story,
            format!("{} (turn 4)", unrolled.turns[2].reply.final_text())
        );
        assert!(!unrolled.repeat);
    }

    #[test]
    fn fewer_turns_than_the_script_cut_it() {
        let unrolled = unroll(&script(), 1);
        assert_eq!(unrolled.turns.len(), 2);
    }
}
