//! Credentials in URLs never reach what clibench writes or prints: `--repository
//! http://user:TOKEN@host/x.git` is recorded, logged and reported as
//! `http://user:***@host/x.git`. One function, applied where a repository URL enters the
//! result, a log or a message, and to git's own output before it is logged.

/// What replaces a secret.
const HIDDEN: &str = "***";

/// `text` with the credentials of every `scheme://user:password@host` URL in it hidden: the
/// password becomes `***`; for http(s), a user part without a password (a token used as
/// the user name, as `https://TOKEN@github.com`) is hidden too.
pub(crate) fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let (before, after) = rest.split_at(found + 3);
        out.push_str(before);
        let scheme: String = before[..found]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        // The authority ends at the path, query, fragment, or anything that cannot be in
        // a URL (the end of a quoted or logged URL).
        let end = after
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '\'' | '"' | '<' | '>' | '`') || c.is_whitespace()
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                match userinfo.split_once(':') {
                    Some((user, _)) => {
                        out.push_str(user);
                        out.push(':');
                        out.push_str(HIDDEN);
                    }
                    None if scheme.eq_ignore_ascii_case("http")
                        || scheme.eq_ignore_ascii_case("https") =>
                    {
                        out.push_str(HIDDEN)
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_are_hidden_wherever_they_are() {
        assert_eq!(
            redact("http://user:TOKEN@host/x.git"),
            "http://user:***@host/x.git"
        );
        assert_eq!(
            redact("fatal: unable to access 'https://u:p%40ss@127.0.0.1:1/x.git/': refused"),
            "fatal: unable to access 'https://u:***@127.0.0.1:1/x.git/': refused"
        );
        assert_eq!(
            redact("a https://ghp_abc@github.com/o/r and b http://x:y@h"),
            "a https://***@github.com/o/r and b http://x:***@h"
        );
    }

    #[test]
    fn urls_without_credentials_are_unchanged() {
        for text in [
            "file:///tmp/repo",
            "https://github.com/o/r.git",
            "ssh://git@github.com/o/r.git",
            "no url here: just text",
            "mailto:user@host",
            "://",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
