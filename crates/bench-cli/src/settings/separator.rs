//! The fix for a command given to `mem`, `startup`, `staircase` or `kernel` without the
//! `--` in front of it: "did you mean: clibench mem -- python3 -m http.server".

/// The subcommands whose trailing arguments are a command to run.
const TAKES_A_COMMAND: &[&str] = &["mem", "startup", "staircase", "kernel"];

/// The command line with `--` put before `unexpected`, the first word the parser did not
/// know, when that word follows a subcommand that takes a command and no `--` was given;
/// `None` otherwise. `words` is the whole command line, the program's name first.
pub fn separator_hint(words: &[String], unexpected: &str) -> Option<String> {
    if unexpected.starts_with('-') {
        // clap already says "to pass '-m' as a value, use '-- -m'".
        return None;
    }
    let subcommand = words
        .iter()
        .skip(1)
        .position(|word| TAKES_A_COMMAND.contains(&word.as_str()))?
        + 1;
    if words.iter().any(|word| word == "--") {
        return None;
    }
    let at = subcommand
        + 1
        + words[subcommand + 1..]
            .iter()
            .position(|w| w == unexpected)?;
    let mut fixed = vec!["clibench".to_owned()];
    fixed.extend(words[1..at].iter().cloned());
    fixed.push("--".to_owned());
    fixed.extend(words[at..].iter().map(|word| quote(word)));
    Some(fixed.join(" "))
}

/// A word as a shell reads it back: bare when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn a_command_without_the_separator_gets_the_fixed_command_line() {
        assert_eq!(
            separator_hint(
                &words(&["clibench", "mem", "python3", "-m", "x"]),
                "python3"
            )
            .as_deref(),
            Some("clibench mem -- python3 -m x")
        );
        let line = words(&[
            "clibench", "startup", "--runs", "3", "python3", "-c", "print(1)",
        ]);
        assert_eq!(
            separator_hint(&line, "python3").as_deref(),
            Some("clibench startup --runs 3 -- python3 -c 'print(1)'")
        );
    }

    #[test]
    fn a_flag_another_subcommand_or_a_separator_gets_no_hint() {
        assert_eq!(
            separator_hint(&words(&["clibench", "mem", "--x"]), "--x"),
            None
        );
        assert_eq!(
            separator_hint(&words(&["clibench", "report", "a", "b"]), "b"),
            None
        );
        assert_eq!(
            separator_hint(&words(&["clibench", "mem", "--", "a", "b"]), "b"),
            None
        );
    }
}
