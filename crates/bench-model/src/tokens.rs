//! Text as a model streams it: split into tokens, filler tokens of a given count, and
//! tool arguments in pieces. Apart from [`crate::answer`] so that a script counts its
//! replies' tokens the way answers are made without depending on answers.

/// Text split into tokens: each token is a run of non-space characters with the
/// whitespace before it, so the tokens concatenated are the text.
pub fn tokens_of(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut seen_word = false;
    for c in text.chars() {
        if c.is_whitespace() && seen_word {
            tokens.push(std::mem::take(&mut current));
            seen_word = false;
        }
        if !c.is_whitespace() {
            seen_word = true;
        }
        current.push(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// The arguments' JSON split into pieces of 4 characters: what a model streams.
pub fn arguments_tokens(json: &str) -> Vec<String> {
    let chars: Vec<char> = json.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

const WORDS: &[&str] = &[
    "the",
    "endpoint",
    "streams",
    "this",
    "scripted",
    "answer",
    "so",
    "that",
    "clibench",
    "can",
    "time",
    "each",
    "chunk",
    "from",
    "wire",
    "to",
    "screen",
    "while",
    "agent",
    "renders",
    "a",
    "deterministic",
    "text",
    "of",
    "known",
    "length",
    "and",
    "nothing",
    "else",
    "matters",
    "here",
];

/// `count` tokens of deterministic filler: sentences of words from a fixed list.
pub fn filler(count: u32) -> Vec<String> {
    let mut tokens = Vec::with_capacity(count as usize);
    for index in 0..count as usize {
        // A stride coprime with the list's length walks every word before repeating.
        let word = WORDS[(index * 7) % WORDS.len()];
        let sentence_start = index % 12 == 0;
        let sentence_end = index % 12 == 11 || index + 1 == count as usize;
        let mut token = String::new();
        if index > 0 {
            token.push(' ');
        }
        if sentence_start {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                token.extend(first.to_uppercase());
                token.push_str(chars.as_str());
            }
        } else {
            token.push_str(word);
        }
        if sentence_end {
            token.push('.');
        }
        tokens.push(token);
    }
    tokens
}
