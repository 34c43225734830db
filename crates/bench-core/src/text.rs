//! Text that came from a target or a file, made inert before it reaches a terminal.
//!
//! A target's output, a process name set with `prctl`, an error or a sha read from a
//! result file: any of them may hold escape sequences that drive the terminal they are
//! printed on (`ESC ] 52` writes the clipboard, `ESC [ 2 J` clears the screen, a
//! right-to-left override reorders what the operator reads). [`inert`] is the one
//! function every printer puts such text through: it shows those characters escaped
//! and leaves everything else as it is.
//!
//! ```
//! use bench_core::text::inert;
//!
//! assert_eq!(inert("ok\tdone\n"), "ok\tdone\n");
//! assert_eq!(inert("\x1b]0;OWNED\x07"), "\\x1b]0;OWNED\\x07");
//! assert_eq!(inert("abc\u{202e}fed"), "abc\\u{202e}fed");
//! ```

use std::borrow::Cow;
use std::fmt;

/// Whether `c` could drive a terminal or reorder what it shows: a C0 control other
/// than newline and tab, DEL, a C1 control (U+0080..U+009F, which some terminals
/// read as `ESC` + a letter), or a bidirectional embedding, override or isolate
/// (U+202A..U+202E, U+2066..U+2069).
pub fn is_active(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [active](is_active) character shown escaped: C0 controls and DEL
/// as `\x1b`, the others as `\u{9b}`, `\u{202e}`. Borrowed when nothing needed it.
///
/// Backslashes are kept as they are, so making text inert twice changes nothing
/// more than making it inert once: a printer may apply it to a whole line that
/// already holds inert parts.
pub fn inert(text: &str) -> Cow<'_, str> {
    escape(text, |c, out| {
        use fmt::Write;
        // Writing to a String cannot fail.
        let _ = if (c as u32) < 0x80 {
            write!(out, "\\x{:02x}", c as u32)
        } else {
            write!(out, "\\u{{{:x}}}", c as u32)
        };
    })
}

/// JSON text (as `serde_json` writes it) with every [active](is_active) character
/// written as a `\u00XX` escape instead: the same JSON value, nothing left that
/// drives a terminal. `serde_json` already escapes C0 controls; DEL, C1 and the
/// bidirectional controls it writes raw, and they can only occur inside strings,
/// where `\uXXXX` means the same character.
pub fn inert_json(json: &str) -> Cow<'_, str> {
    escape(json, |c, out| {
        use fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(out, "\\u{:04x}", c as u32);
    })
}

fn escape(text: &str, write: impl Fn(char, &mut String)) -> Cow<'_, str> {
    if !text.chars().any(is_active) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_active(c) {
            write(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text that has been made [inert]: the only kind the `clibench` binary prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inert<'a>(Cow<'a, str>);

impl<'a> Inert<'a> {
    /// `text` made inert.
    pub fn new(text: &'a str) -> Inert<'a> {
        Inert(inert(text))
    }

    /// An owned `text` made inert.
    pub fn from_string(text: String) -> Inert<'static> {
        match inert(&text) {
            Cow::Borrowed(_) => Inert(Cow::Owned(text)),
            Cow::Owned(escaped) => Inert(Cow::Owned(escaped)),
        }
    }

    /// JSON text made inert with [`inert_json`], so that it stays the same JSON value.
    pub fn json(json: &'a str) -> Inert<'a> {
        Inert(inert_json(json))
    }

    /// The inert text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Inert<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_osc_title_a_clear_and_a_clipboard_write_are_shown_escaped() {
        let hostile = "\x1b]0;OWNED\x07\x1b[2J\x1b]52;c;aWQgPiAvdG1wL3B3bmVk\x07";
        let shown = inert(hostile);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown}"
        );
        assert_eq!(
            shown,
            "\\x1b]0;OWNED\\x07\\x1b[2J\\x1b]52;c;aWQgPiAvdG1wL3B3bmVk\\x07"
        );
    }

    #[test]
    fn newline_and_tab_stay_and_other_c0_del_c1_and_bidi_are_escaped() {
        assert_eq!(inert("a\nb\tc"), "a\nb\tc");
        assert_eq!(inert("\r\0\x7f"), "\\x0d\\x00\\x7f");
        assert_eq!(inert("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        for c in ['\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}'] {
            assert_eq!(inert(&c.to_string()), format!("\\u{{{:x}}}", c as u32));
        }
        // Neighbours of the escaped ranges are ordinary text.
        assert_eq!(
            inert("\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}µ→"),
            "\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}µ→"
        );
    }

    #[test]
    fn clean_text_is_borrowed_and_inert_twice_is_inert_once() {
        assert!(matches!(inert("plain text"), Cow::Borrowed(_)));
        let once = inert("x\x1by\u{202e}").into_owned();
        assert_eq!(inert(&once), once);
    }

    #[test]
    fn inert_json_keeps_the_value() {
        let value = serde_json::json!({ "name": "a\u{7f}b\u{9b}c\u{202e}d\x1be" });
        let json = serde_json::to_string(&value).unwrap();
        let shown = inert_json(&json);
        assert!(!shown.chars().any(is_active), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn the_wrapper_holds_inert_text() {
        assert_eq!(Inert::new("\x1b[2J").to_string(), "\\x1b[2J");
        assert_eq!(Inert::from_string("ok".into()).as_str(), "ok");
        assert_eq!(Inert::json("\"\u{85}\"").as_str(), "\"\\u0085\"");
    }
}
