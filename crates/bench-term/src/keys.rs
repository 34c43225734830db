//! Keys as a terminal sends them, legacy or kitty-encoded.
//!
//! A program that turned on the kitty keyboard protocol (`CSI > flags u`) expects
//! some keys as `CSI code ; modifiers u` rather than as control bytes: with the
//! "disambiguate" flag (1) Ctrl-C arrives as `CSI 99;5u`, with "report all keys"
//! (8) even letters and Backspace do. [`encode`] follows the active flags, so a
//! quit key reaches such a program as the program expects it.

/// Kitty flag 1: disambiguate escape codes.
pub const KITTY_DISAMBIGUATE: u32 = 1;
/// Kitty flag 8: report all keys as escape codes.
pub const KITTY_ALL_KEYS: u32 = 8;
/// Kitty flag 16: report associated text.
pub const KITTY_TEXT: u32 = 16;

/// One key press.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Enter (carriage return).
    Enter,
    /// Backspace, sent as DEL (0x7f) in legacy mode.
    Backspace,
    /// Tab.
    Tab,
    /// Escape.
    Escape,
    /// Ctrl plus an ASCII letter, e.g. `Ctrl('c')`.
    Ctrl(char),
}

/// The bytes a terminal sends for `key` when the kitty keyboard flags are `flags`.
pub fn encode(key: Key, flags: u32, out: &mut Vec<u8>) {
    let all_keys = flags & KITTY_ALL_KEYS != 0;
    let disambiguate = all_keys || flags & KITTY_DISAMBIGUATE != 0;
    let csi_u = |out: &mut Vec<u8>, code: u32, modifiers: u32, text: Option<char>| {
        let mut sequence = format!("\x1b[{code}");
        if modifiers > 1 || text.is_some() {
            sequence.push_str(&format!(";{modifiers}"));
        }
        if let Some(text) = text {
            sequence.push_str(&format!(";{}", u32::from(text)));
        }
        sequence.push('u');
        out.extend_from_slice(sequence.as_bytes());
    };
    match key {
        Key::Char(c) if all_keys => {
            // The key code is the unshifted key; Shift is modifier bit 1 (value 2).
            let (code, modifiers) = if c.is_ascii_uppercase() {
                (u32::from(c.to_ascii_lowercase()), 2)
            } else {
                (u32::from(c), 1)
            };
            let text = (flags & KITTY_TEXT != 0).then_some(c);
            csi_u(out, code, modifiers, text);
        }
        Key::Char(c) => {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
        }
        Key::Enter if all_keys => csi_u(out, 13, 1, None),
        Key::Enter => out.push(b'\r'),
        Key::Backspace if all_keys => csi_u(out, 127, 1, None),
        Key::Backspace => out.push(0x7f),
        Key::Tab if all_keys => csi_u(out, 9, 1, None),
        Key::Tab => out.push(b'\t'),
        Key::Escape if disambiguate => csi_u(out, 27, 1, None),
        Key::Escape => out.push(0x1b),
        Key::Ctrl(c) if disambiguate => csi_u(out, u32::from(c.to_ascii_lowercase()), 5, None),
        Key::Ctrl(c) => out.push((c.to_ascii_lowercase() as u8) & 0x1f),
    }
}

/// The bytes for typing `text`, one [`Key::Char`] per character (`\r` and `\n` as Enter,
/// `\t` as Tab, DEL as Backspace).
pub fn encode_text(text: &str, flags: u32, out: &mut Vec<u8>) {
    for c in text.chars() {
        let key = match c {
            '\r' | '\n' => Key::Enter,
            '\t' => Key::Tab,
            '\x7f' => Key::Backspace,
            '\x1b' => Key::Escape,
            c => Key::Char(c),
        };
        encode(key, flags, out);
    }
}

/// A key name that [`parse_keys`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown key {0:?} (expected C-<letter>, Enter, Tab, Esc, Backspace, Space, Comma, a single \
     character, or text to type)"
)]
pub struct KeyError(pub String);

/// Keys written the way specs and flags write them: a list of names, each
/// `C-<letter>` (or `Ctrl-<letter>`), `Enter`, `Tab`, `Esc`/`Escape`, `Backspace`,
/// `Space`, `Comma`, a single character, or any other text, typed one character at
/// a time (`"/quit"`). Names are matched case-insensitively.
pub fn parse_keys<S: AsRef<str>>(names: &[S]) -> Result<Vec<Key>, KeyError> {
    let mut keys = Vec::new();
    for name in names {
        let name = name.as_ref();
        let lower = name.to_ascii_lowercase();
        let ctrl = lower
            .strip_prefix("c-")
            .or_else(|| lower.strip_prefix("ctrl-"))
            .or_else(|| lower.strip_prefix("ctrl+"));
        let named = match (lower.as_str(), ctrl) {
            (_, Some(letter)) => match letter.as_bytes() {
                [c] if c.is_ascii_alphabetic() || b"[\\]^_@".contains(c) => {
                    Some(Key::Ctrl(char::from(*c)))
                }
                _ => return Err(KeyError(name.to_owned())),
            },
            ("enter" | "return" | "cr", _) => Some(Key::Enter),
            ("tab", _) => Some(Key::Tab),
            ("esc" | "escape", _) => Some(Key::Escape),
            ("backspace" | "bs", _) => Some(Key::Backspace),
            ("space", _) => Some(Key::Char(' ')),
            ("comma", _) => Some(Key::Char(',')),
            _ => None,
        };
        match named {
            Some(key) => keys.push(key),
            None if name.is_empty() => return Err(KeyError(String::new())),
            None => keys.extend(name.chars().map(Key::Char)),
        }
    }
    Ok(keys)
}

/// Keys from one flag value: names separated by commas or spaces (`"C-c,C-c"`,
/// `"/quit Enter"`); see [`parse_keys`].
pub fn parse_key_list(text: &str) -> Result<Vec<Key>, KeyError> {
    let names: Vec<&str> = text
        .split([',', ' '])
        .filter(|name| !name.is_empty())
        .collect();
    if names.is_empty() {
        return Err(KeyError(text.to_owned()));
    }
    parse_keys(&names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(key: Key, flags: u32) -> String {
        let mut out = Vec::new();
        encode(key, flags, &mut out);
        String::from_utf8(out).unwrap().replace('\x1b', "^[")
    }

    #[test]
    fn legacy_keys_are_control_bytes() {
        assert_eq!(bytes(Key::Ctrl('c'), 0), "\x03");
        assert_eq!(bytes(Key::Ctrl('C'), 0), "\x03");
        assert_eq!(bytes(Key::Backspace, 0), "\x7f");
        assert_eq!(bytes(Key::Enter, 0), "\r");
        assert_eq!(bytes(Key::Char('é'), 0), "é");
    }

    #[test]
    fn disambiguate_encodes_ctrl_and_escape_only() {
        assert_eq!(bytes(Key::Ctrl('c'), 1), "^[[99;5u");
        assert_eq!(bytes(Key::Escape, 1), "^[[27u");
        assert_eq!(bytes(Key::Backspace, 1), "\x7f");
        assert_eq!(bytes(Key::Char('a'), 1), "a");
        assert_eq!(bytes(Key::Enter, 1 | 2 | 4), "\r");
    }

    #[test]
    fn all_keys_encodes_text_too() {
        assert_eq!(bytes(Key::Char('a'), 8), "^[[97u");
        assert_eq!(bytes(Key::Char('A'), 8), "^[[97;2u");
        assert_eq!(bytes(Key::Char('A'), 8 | 16), "^[[97;2;65u");
        assert_eq!(bytes(Key::Backspace, 8), "^[[127u");
        assert_eq!(bytes(Key::Enter, 8), "^[[13u");
    }

    #[test]
    fn text_maps_newlines_to_enter() {
        let mut out = Vec::new();
        encode_text("ok\n", 0, &mut out);
        assert_eq!(out, b"ok\r");
    }

    #[test]
    fn key_names_parse_as_specs_write_them() {
        assert_eq!(
            parse_keys(&["C-c", "ctrl-D", "Enter", "esc", "q", "Space"]).unwrap(),
            [
                Key::Ctrl('c'),
                Key::Ctrl('d'),
                Key::Enter,
                Key::Escape,
                Key::Char('q'),
                Key::Char(' ')
            ]
        );
        assert_eq!(
            parse_keys(&["/q", "Enter"]).unwrap(),
            [Key::Char('/'), Key::Char('q'), Key::Enter]
        );
        assert_eq!(
            parse_key_list("C-c,C-c").unwrap(),
            [Key::Ctrl('c'), Key::Ctrl('c')]
        );
        assert_eq!(
            parse_key_list(":q Enter").unwrap(),
            [Key::Char(':'), Key::Char('q'), Key::Enter]
        );
        assert_eq!(
            parse_keys(&["C-12"]).unwrap_err().to_string(),
            "unknown key \"C-12\" (expected C-<letter>, Enter, Tab, Esc, Backspace, Space, Comma, \
             a single character, or text to type)"
        );
        assert!(parse_key_list(" , ").is_err());
        assert!(parse_keys(&[""]).is_err());
    }
}
