//! Cutting a command's output down to what an error message can hold, keeping the lines
//! that name the cause.
//!
//! A failed command's cause is rarely its last line: npm ends with notices and the path of
//! its log, after `npm error code ENOTFOUND`. So a cut keeps, besides the end, the lines
//! that name an error ([`names_error`]), and cuts only between lines.

/// How many characters of a command's output's end go into an error.
pub(crate) const TAIL_CHARS: usize = 1500;

/// How many lines naming an error a cut keeps from the part it drops.
const MAX_CAUSE_LINES: usize = 6;

/// How many characters of one kept line naming an error a cut keeps.
const MAX_CAUSE_LINE_CHARS: usize = 300;

/// The omission mark between kept lines.
const GAP: &str = "...";

/// Whether a line of output names an error: npm's `npm error` and `npm ERR!`, and the
/// `Error:`, `error:` and `fatal:` of node, rustc, cargo, git and most tools.
pub fn names_error(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("npm error")
        || line.starts_with("npm ERR!")
        || line.starts_with("fatal:")
        || line.starts_with("error:")
        || line.starts_with("error[")
        || line.contains("Error:")
}

/// The last `TAIL_CHARS` characters of a text, starting at a line; the lines naming an
/// error in the part left out (a few, each cut to a line's worth) come first, then `...`.
pub(crate) fn tail(text: &str) -> String {
    let count = text.chars().count();
    if count <= TAIL_CHARS {
        return text.trim_end().to_owned();
    }
    let split = text
        .char_indices()
        .nth(count - TAIL_CHARS)
        .map_or(0, |(at, _)| at);
    let (dropped, cut) = text.split_at(split);
    let start = cut.find('\n').map_or(0, |i| i + 1);
    let causes: Vec<String> = dropped
        .lines()
        .filter(|line| names_error(line))
        .take(MAX_CAUSE_LINES)
        .map(|line| cut_chars(line.trim_end(), MAX_CAUSE_LINE_CHARS))
        .collect();
    let mut out = String::new();
    for cause in causes {
        out.push_str(&cause);
        out.push('\n');
    }
    out.push_str(GAP);
    out.push_str(cut[start..].trim_end());
    out
}

/// Cuts a message to `max` characters, between lines: its first line (what failed), the
/// lines that name an error, then as many of its last lines as fit, with `...` where lines
/// were left out. For the result file's 500-character errors. A first line longer than
/// `max` is cut in the middle, keeping its start and its end.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    // Every kept line may be preceded by a gap line: its cost counts one.
    let cost = |line: &str| line.chars().count() + 1 + GAP.len() + 1;
    let mut used = 0;
    let mut keep = vec![false; lines.len()];
    let mut take = |index: usize, keep: &mut Vec<bool>| {
        let line_cost = cost(lines[index]);
        if keep[index] || used + line_cost > max {
            return false;
        }
        keep[index] = true;
        used += line_cost;
        true
    };
    if lines.is_empty() || !take(0, &mut keep) {
        return cut_chars(text, max);
    }
    for (index, line) in lines.iter().enumerate().skip(1) {
        if names_error(line) {
            take(index, &mut keep);
        }
    }
    for index in (1..lines.len()).rev() {
        if !keep[index] && !take(index, &mut keep) {
            break;
        }
    }
    let mut out: Vec<&str> = Vec::new();
    let mut in_gap = false;
    for (line, kept) in lines.iter().zip(&keep) {
        if *kept {
            out.push(line);
            in_gap = false;
        } else if !in_gap {
            out.push(GAP);
            in_gap = true;
        }
    }
    out.join("\n")
}

/// `text` cut to `max` characters in the middle: its start and its end around ` ... `.
fn cut_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head_chars = max / 3;
    let tail_chars = max.saturating_sub(head_chars + 5);
    let head: String = text.chars().take(head_chars).collect();
    let end: String = text.chars().skip(count - tail_chars).collect();
    format!("{head} ... {end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// npm's output when the registry cannot be reached: the cause in the middle, notices
    /// and the log's path at the end.
    fn npm_failure() -> String {
        let mut text = String::from("install failed (exit status: 1); output ends with:\n");
        for n in 0..40 {
            text.push_str(&format!(
                "npm http fetch GET 200 https://registry/pkg-{n} 12ms\n"
            ));
        }
        text.push_str("npm error code ENOTFOUND\n");
        text.push_str("npm error Error: getaddrinfo ENOTFOUND github.com\n");
        for n in 0..30 {
            text.push_str(&format!(
                "npm notice New minor version of npm available {n}\n"
            ));
        }
        text.push_str("npm error A complete log of this run can be found in: /home/u/.npm/x.log\n");
        text
    }

    #[test]
    fn a_clipped_install_failure_keeps_the_lines_that_name_the_cause() {
        let clipped = clip(&npm_failure(), 500);
        assert!(clipped.chars().count() <= 500, "{clipped}");
        assert!(
            clipped.starts_with("install failed (exit status: 1)"),
            "{clipped}"
        );
        assert!(
            clipped.contains("npm error Error: getaddrinfo ENOTFOUND github.com"),
            "{clipped}"
        );
        assert!(clipped.contains("npm error code ENOTFOUND"), "{clipped}");
        // Cut between lines only: every line is whole or the gap mark.
        let original = npm_failure();
        for line in clipped.lines() {
            assert!(line == GAP || original.lines().any(|o| o == line), "{line}");
        }
    }

    #[test]
    fn a_tail_brings_the_error_lines_it_would_leave_out() {
        let mut text = String::from("npm error code E404\nnpm ERR! 404 Not Found\nfatal: no\n");
        for n in 0..1000 {
            text.push_str(&format!("notice {n}\n"));
        }
        let end = tail(&text);
        assert!(
            end.starts_with("npm error code E404\nnpm ERR! 404 Not Found\nfatal: no\n...notice "),
            "{end}"
        );
        assert!(end.ends_with("notice 999"));
        assert_eq!(tail("short\n"), "short");
    }

    #[test]
    fn tail_keeps_the_end_from_a_line_start() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let end = tail(&text);
        assert!(end.starts_with("...line "), "{end}");
        assert!(end.ends_with("line 999"));
        assert!(end.chars().count() <= TAIL_CHARS + 3);
    }

    #[test]
    fn clip_keeps_start_and_end() {
        let text = format!("build step 1 failed; {} the real error", "x".repeat(2000));
        let clipped = clip(&text, 500);
        assert_eq!(clipped.chars().count(), 500);
        assert!(clipped.starts_with("build step 1 failed"));
        assert!(clipped.ends_with("the real error"));
        assert_eq!(clip("short", 500), "short");
        let lines = format!("first\n{}\nlast", "x".repeat(2000));
        assert_eq!(clip(&lines, 500), "first\n...\nlast");
    }

    #[test]
    fn error_lines_are_recognised() {
        for line in [
            "npm error code ENOTFOUND",
            "npm ERR! code E404",
            "Error: Cannot find module 'x'",
            "TypeError: x is not a function",
            "error: could not compile `x`",
            "fatal: repository not found",
        ] {
            assert!(names_error(line), "{line}");
        }
        for line in [
            "npm notice New version",
            "added 12 packages",
            "0 errors found",
        ] {
            assert!(!names_error(line), "{line}");
        }
    }
}
