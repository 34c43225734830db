//! Usage errors that say how to fix them: a command given to `mem`, `startup`, `staircase`
//! or `kernel` without the `--` in front of it ("did you mean: clibench mem -- python3 -m
//! http.server").

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

/// Parses the command line as [`super::Cli::parse`] does, adding the `--` hint to an
/// unexpected argument; prints the error and exits on failure.
pub fn parse() -> super::Cli {
    let argv: Vec<OsString> = std::env::args_os().collect();
    match super::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(error) => {
            let Some(hint) = missing_separator_hint(&error, &argv) else {
                error.exit()
            };
            let text = error.render().to_string();
            let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
            say_part!("{first}\n\n  tip: did you mean: {hint}\n{rest}");
            std::process::exit(error.exit_code())
        }
    }
}

/// "clibench mem -- python3 -m http.server" when `error` is an unexpected argument that is
/// the first word of a command given to a subcommand that takes one after `--`.
fn missing_separator_hint(error: &clap::Error, argv: &[OsString]) -> Option<String> {
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(unexpected)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let words: Vec<String> = argv
        .iter()
        .map(|word| word.to_string_lossy().into_owned())
        .collect();
    crate::settings::separator_hint(&words, unexpected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(args: &[&str]) -> Option<String> {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let error = super::super::Cli::try_parse_from(&argv).unwrap_err();
        missing_separator_hint(&error, &argv)
    }

    #[test]
    fn a_command_without_the_separator_gets_the_fixed_command_line() {
        assert_eq!(
            hint(&["clibench", "mem", "python3", "-m", "http.server"]).as_deref(),
            Some("clibench mem -- python3 -m http.server")
        );
        assert_eq!(
            hint(&[
                "clibench", "startup", "--runs", "3", "python3", "-c", "print(1)"
            ])
            .as_deref(),
            Some("clibench startup --runs 3 -- python3 -c 'print(1)'")
        );
    }

    #[test]
    fn other_usage_errors_get_no_separator_hint() {
        assert_eq!(hint(&["clibench", "mem", "--frobnicate"]), None);
        assert_eq!(hint(&["clibench", "report", "a.json", "b.json"]), None);
    }
}
