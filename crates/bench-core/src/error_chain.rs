//! One line for an error and every cause below it.
//!
//! The workspace's errors name their failure in their message and keep the cause as the
//! [`source`](std::error::Error::source), never both (a message that repeated its source
//! would say the cause twice here). This is how such an error is shown in one line: in a
//! result file's `error`, a phase's log or a command's last line.

/// `error` and each of its sources, joined by `: ` (what anyhow's `{:#}` prints).
///
/// ```
/// let io = std::io::Error::other("disk full");
/// let error = bench_core::io::WriteError {
///     path: "out/result.json".into(),
///     source: io,
/// };
/// assert!(bench_core::error_chain(&error).ends_with(": disk full"));
/// ```
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("installing")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("running install.sh")]
    struct Inner(#[source] std::io::Error);

    #[test]
    fn every_cause_follows_its_error_once() {
        let error = Outer(Inner(std::io::Error::other("timed out")));
        assert_eq!(
            error_chain(&error),
            "installing: running install.sh: timed out"
        );
    }

    #[test]
    fn an_error_without_a_source_is_its_message() {
        assert_eq!(error_chain(&std::io::Error::other("gone")), "gone");
    }
}
