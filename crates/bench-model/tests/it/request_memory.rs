//! What a long session costs the endpoint in memory: the conversation an agent sends
//! grows with its session (a megabyte after a thousand turns of a soak) and is read on
//! every request, and the script's turns are played as a thousand copies. The
//! allocations of the testing thread are counted by this test binary's allocator.

use bench_model::request::{self, Dialect, GeminiPath};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the live and the highest bytes of each thread.
struct Counting;

thread_local! {
    // Const-initialised cells: reading them allocates nothing, inside the allocator.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters are
// thread-local cells that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: allocated by `System` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count(bytes: isize) {
    // `try_with`: a thread being torn down has no cells left, and is not measured.
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + bytes);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The most bytes this thread held at once above what it held before `work`.
fn peak_during<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let result = work();
    let peak = PEAK.with(Cell::get);
    (result, (peak - before).max(0) as usize)
}

/// A conversation of `turns` tool calls, as an agent resends it: each turn a prompt, a
/// tool call, its result of 20 short lines and a reply, in `dialect`'s shape.
fn long_conversation(dialect: Dialect, turns: usize) -> Vec<u8> {
    let output: String = (1..=20).map(|n| format!("{n}\\n")).collect();
    let mut items = Vec::new();
    for turn in 0..turns {
        let prompt = format!("step {turn}: run the command and sum up what it printed");
        let reply = "The command printed twenty lines of numbers, counting up from one.";
        match dialect {
            Dialect::Anthropic => {
                items.push(format!(
                    r#"{{"role":"user","content":[{{"type":"text","text":"{prompt}"}}]}}"#
                ));
                items.push(format!(r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{turn}","name":"bash","input":{{"command":"seq 1 20"}}}}]}}"#));
                items.push(format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{turn}","content":"{output}"}}]}}"#));
                items.push(format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"{reply}"}}]}}"#
                ));
            }
            Dialect::OpenaiChat => {
                items.push(format!(r#"{{"role":"user","content":"{prompt}"}}"#));
                items.push(format!(r#"{{"role":"assistant","tool_calls":[{{"id":"t{turn}","type":"function","function":{{"name":"bash","arguments":"{{}}"}}}}]}}"#));
                items.push(format!(
                    r#"{{"role":"tool","tool_call_id":"t{turn}","content":"{output}"}}"#
                ));
                items.push(format!(r#"{{"role":"assistant","content":"{reply}"}}"#));
            }
            Dialect::OpenaiResponses => {
                items.push(format!(r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{prompt}"}}]}}"#));
                items.push(format!(r#"{{"type":"function_call","call_id":"t{turn}","name":"bash","arguments":"{{}}"}}"#));
                items.push(format!(
                    r#"{{"type":"function_call_output","call_id":"t{turn}","output":"{output}"}}"#
                ));
                items.push(format!(r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{reply}"}}]}}"#));
            }
            Dialect::Gemini => {
                items.push(format!(
                    r#"{{"role":"user","parts":[{{"text":"{prompt}"}}]}}"#
                ));
                items.push(
                    r#"{"role":"model","parts":[{"functionCall":{"name":"bash","args":{}}}]}"#
                        .to_owned(),
                );
                items.push(format!(r#"{{"role":"user","parts":[{{"functionResponse":{{"name":"bash","response":{{"output":"{output}"}}}}}}]}}"#));
                items.push(format!(
                    r#"{{"role":"model","parts":[{{"text":"{reply}"}}]}}"#
                ));
            }
        }
    }
    let key = match dialect {
        Dialect::Anthropic | Dialect::OpenaiChat => "messages",
        Dialect::OpenaiResponses => "input",
        Dialect::Gemini => "contents",
    };
    format!(
        r#"{{"model":"m","stream":true,"max_tokens":100,"tools":[],"{key}": [{}]}}"#,
        items.join(",")
    )
    .into_bytes()
}

#[test]
fn reading_a_long_conversation_takes_little_more_than_its_size() {
    let gemini = GeminiPath {
        model: "g".to_owned(),
        stream: true,
        sse: true,
    };
    for dialect in [
        Dialect::Anthropic,
        Dialect::OpenaiChat,
        Dialect::OpenaiResponses,
        Dialect::Gemini,
    ] {
        // About a megabyte: a 1,000-turn soak's last requests.
        let body = long_conversation(dialect, 2_500);
        let (asked, peak) = peak_during(|| request::read(dialect, Some(&gemini), &body));
        let asked = asked.unwrap_or_else(|error| panic!("{dialect:?}: {error}"));
        assert_eq!(
            asked.last_user_text, "step 2499: run the command and sum up what it printed",
            "{dialect:?}"
        );
        assert!(asked.stream && asked.tool_results.eq(&false), "{dialect:?}");
        // Built into values, this conversation took about six times its size (10,000
        // objects with their maps and strings); its items kept as slices of the body
        // take 16 bytes each.
        assert!(
            peak < body.len() / 2,
            "{dialect:?}: reading {} bytes took {peak} bytes at once",
            body.len()
        );
    }
}

#[test]
fn the_copies_of_a_turn_share_its_when_regex_and_its_search_cache() {
    let script = bench_model::Script::from_toml(
        "[[turns]]\nwhen = \"(?i)\\\\bstep \\\\d+: (run|list|show)\\\\b\"\ntext = \"done\"\n",
        "test",
    )
    .unwrap()
    .compile()
    .unwrap();
    // A long session plays copies of the script's turns (`[session] turns`), each
    // matched once against its prompt.
    let copies: Vec<_> = (0..500).map(|_| script.turns[0].clone()).collect();
    let prompt = |n: usize| format!("step {n}: run the command and sum up what it printed");
    // Matched as the endpoint matches a turn: through the turn's own field.
    let matches = |turn: &bench_model::script::CompiledTurn, text: &str| {
        turn.when.as_ref().is_some_and(|when| when.is_match(text))
    };
    assert!(matches(&copies[0], &prompt(0)));
    let ((), grown) = peak_during(|| {
        for (n, turn) in copies.iter().enumerate() {
            assert!(matches(turn, &prompt(n)));
        }
    });
    // A clone of a `Regex` builds a search cache of its own on its first match and
    // keeps it (7.8 MB for these 500 copies, 16 KB each); one shared regex builds one,
    // so the 500 matches add next to nothing.
    assert!(
        grown < 64 * 1024,
        "500 copies of a turn took {grown} bytes to match once each"
    );
}
