//! Typing into the program: text, keys, and keystroke-to-screen latency.

use super::pump::Pumped;
use super::spawn::{Terminal, monotonic_now};
use crate::error::{Stage, TermError};
use crate::keys::{Key, encode, encode_text};
use crate::screen::squashed_text;
use std::time::{Duration, Instant};

/// How long one keystroke sample may take to appear.
const KEYSTROKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The most [`Terminal::press_keys`] waits for the program to answer a key before it
/// presses the next anyway: a key that changes nothing on the screen (Backspace at an
/// empty prompt) gets no answer.
const KEY_ANSWER_WAIT: Duration = Duration::from_millis(500);

/// How far apart the keystroke samples' Backspaces are pressed.
const ERASE_GAP: Duration = Duration::from_millis(20);

/// Letters of the keystroke samples: lowercase, so that no key needs Shift.
const SAMPLE_LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// A random word of `length` letters from `letters`.
pub(super) fn random_word(length: usize, letters: &[u8]) -> String {
    let mut bytes = vec![0u8; length];
    if rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()).is_err() {
        // getrandom only fails before the kernel's pool is ready; time still differs per call.
        let seed = monotonic_now().subsec_nanos().to_le_bytes();
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = seed[index % 4]
                .wrapping_mul(31)
                .wrapping_add(index as u8 * 17);
        }
    }
    bytes
        .iter()
        .map(|b| char::from(letters[usize::from(*b) % letters.len()]))
        .collect()
}

/// A random word of `length` sample letters whose first `lead` letters are nowhere on
/// `screen`. Every wait of the keystroke probe looks for the word's prefix anywhere on the
/// screen: a lead already shown (in "sum of squares", a welcome line, a session id) made
/// the wait for the erased word never end, and the probe failed after its timeout with
/// the program idle at its prompt.
fn fresh_word(screen: &str, length: usize, lead: usize) -> String {
    // 26^3 leads against a screen of a few thousand characters: a lead that is not shown
    // comes within a few tries; the bound only keeps a screen of every lead from looping.
    let mut word = random_word(length, SAMPLE_LETTERS);
    for _ in 0..256 {
        if !screen.contains(&word[..lead]) {
            return word;
        }
        word = random_word(length, SAMPLE_LETTERS);
    }
    // A screen showing nearly every lead: 256 random tries missed the few it does not
    // show about once in 200 runs of the test, so look for one in order.
    match unshown_lead(screen, lead) {
        Some(unshown) => unshown + &word[lead..],
        None => word,
    }
}

/// The first lead of `lead` sample letters (at most 3: 17,576 of them) that `screen`
/// does not show.
fn unshown_lead(screen: &str, lead: usize) -> Option<String> {
    if lead > 3 {
        return None;
    }
    let letters = SAMPLE_LETTERS.len();
    (0..letters.pow(lead as u32))
        .map(|mut n| {
            let mut text = vec![0u8; lead];
            for byte in text.iter_mut().rev() {
                *byte = SAMPLE_LETTERS[n % letters];
                n /= letters;
            }
            String::from_utf8_lossy(&text).into_owned()
        })
        .find(|candidate| !screen.contains(candidate.as_str()))
}

impl Terminal {
    /// A random lowercase word of `length` letters whose first `lead` letters are nowhere
    /// on the screen now, whitespace squashed out as [`Terminal::wait_for_squashed`] sees
    /// it: typed, its echo cannot be confused with the program's own text. (Looked for in
    /// the screen's plain text, a lead the screen showed only across a space or a line's
    /// end, `ab cd` for `abcd`, was taken, and a wait for the word to leave the squashed
    /// screen after it was erased timed out: one session test in ten.)
    pub fn fresh_word(&self, length: usize, lead: usize) -> String {
        fresh_word(&self.squashed_text(), length, lead.min(length))
    }

    /// Types `text` (`\n` as Enter), encoded for the keyboard protocol the program chose.
    pub fn type_text(&mut self, text: &str) -> Result<(), TermError> {
        let mut bytes = Vec::with_capacity(text.len());
        encode_text(text, self.screen.kitty_flags(), &mut bytes);
        self.write_input(&bytes)
    }

    /// Presses `keys` as a person does: each one its own write, the next once the
    /// program wrote something after it and `gap` passed (or, with no answer,
    /// `gap` and half a second), reading its output meanwhile and calling `watch` with
    /// the screen's squashed text ([`Terminal::squashed_text`]) at every frame. Returns
    /// once the program answered the last key in the same way. Keys written at once reach the program in one read,
    /// and a TUI that takes a read of several bytes for a paste inserts them as text:
    /// Continue's `cn` put four DELs into its input box instead of erasing four letters.
    pub fn press_keys(
        &mut self,
        keys: &[Key],
        gap: Duration,
        watch: &mut dyn FnMut(&str),
    ) -> Result<(), TermError> {
        let mut text = String::new();
        for &key in keys {
            let pressed = Instant::now();
            self.send_keys(&[key])?;
            let (earliest, latest) = (pressed + gap, pressed + gap + KEY_ANSWER_WAIT);
            loop {
                let now = Instant::now();
                let answered = self.last_output_at.is_some_and(|at| at > pressed);
                let until = if answered { earliest } else { latest };
                if now >= until {
                    break;
                }
                let pumped = self.pump(until - now, &mut |s| {
                    squashed_text(s, &mut text);
                    watch(&text);
                    false
                })?;
                if let Pumped::Eof = pumped {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// [`Terminal::press_keys`] for the characters of `text`.
    pub fn type_paced(
        &mut self,
        text: &str,
        gap: Duration,
        watch: &mut dyn FnMut(&str),
    ) -> Result<(), TermError> {
        let keys: Vec<Key> = text.chars().map(Key::Char).collect();
        self.press_keys(&keys, gap, watch)
    }

    /// Presses `keys` in order in one write, encoded for the keyboard protocol the
    /// program chose: the program may read them at once, so this is for one key, or
    /// keys whose meaning does not depend on being read apart (see
    /// [`Terminal::press_keys`]).
    pub fn send_keys(&mut self, keys: &[Key]) -> Result<(), TermError> {
        let mut bytes = Vec::new();
        for &key in keys {
            encode(key, self.screen.kitty_flags(), &mut bytes);
        }
        self.write_input(&bytes)
    }

    /// Keystroke-to-screen latency: `samples` times, types one letter and measures
    /// until the screen shows it. Letters form random words typed after a 3-letter
    /// lead-in (so a single letter elsewhere on the screen cannot match), and each
    /// word is erased with Backspace afterwards. Needs a program that echoes input.
    pub fn keystroke_latency(&mut self, samples: usize) -> Result<Vec<Duration>, TermError> {
        const LEAD: usize = 3;
        const WORD: usize = 10;
        let mut latencies = Vec::with_capacity(samples);
        while latencies.len() < samples {
            let word = fresh_word(&self.screen.vt().contents(), WORD, LEAD);
            self.type_text(&word[..LEAD])?;
            self.wait_until(
                Stage::Keystroke,
                Instant::now() + KEYSTROKE_TIMEOUT,
                &mut |s| s.contents().contains(&word[..LEAD]),
            )?;
            let mut typed = LEAD;
            while typed < WORD && latencies.len() < samples {
                let started = Instant::now();
                self.type_text(&word[typed..=typed])?;
                let shown = &word[..=typed];
                let hit =
                    self.wait_until(Stage::Keystroke, started + KEYSTROKE_TIMEOUT, &mut |s| {
                        s.contents().contains(shown)
                    })?;
                latencies.push(hit.read_at.saturating_duration_since(started));
                typed += 1;
            }
            self.press_keys(&vec![Key::Backspace; typed], ERASE_GAP, &mut |_| {})?;
            self.wait_until(
                Stage::Keystroke,
                Instant::now() + KEYSTROKE_TIMEOUT,
                &mut |s| !s.contents().contains(&word[..LEAD]),
            )?;
        }
        Ok(latencies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_word_never_starts_with_text_already_on_the_screen() {
        // Every two-letter lead but those of "zz": most three-letter leads are shown.
        let mut screen = String::new();
        for a in b'a'..=b'y' {
            for b in b'a'..=b'z' {
                for c in b'a'..=b'z' {
                    screen.extend([a as char, b as char, c as char, ' ']);
                }
            }
        }
        for _ in 0..50 {
            let word = fresh_word(&screen, 10, 3);
            assert!(word.starts_with('z'), "{word}");
            assert!(!screen.contains(&word[..3]), "{word}");
        }
    }

    #[test]
    fn random_words_use_the_given_letters() {
        let word = random_word(32, SAMPLE_LETTERS);
        assert_eq!(word.len(), 32);
        assert!(word.bytes().all(|b| b.is_ascii_lowercase()));
        assert_ne!(word, random_word(32, SAMPLE_LETTERS));
        assert!(random_word(32, b"bfz").bytes().all(|b| b"bfz".contains(&b)));
    }
}
