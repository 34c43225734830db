//! The one way a test of this workspace says it did not run.

/// Ends the calling test early when it cannot run here (it needs root, or a tool that
/// is not installed): prints `SKIPPED: <reason>` on stderr, so that a skip never reads
/// as a pass, and returns. The reason takes `format!` arguments.
///
/// Under `CI=true` it fails the test instead: CI installs every tool the tests need and
/// runs them as root, so a skip there is a test that silently stopped testing.
///
/// For tests: it prints from the test that expands it, never from library code.
///
/// ```
/// fn needs_a_tool(installed: bool) {
///     if !installed {
///         bench_core::skip_test!("{} is not installed", "chromium");
///     }
///     unreachable!("only a machine with the tool gets here");
/// }
/// # if std::env::var_os("CI").is_none() {
/// needs_a_tool(false);
/// # }
/// ```
#[macro_export]
macro_rules! skip_test {
    ($($reason:tt)+) => {{
        if ::std::env::var("CI").is_ok_and(|ci| ci == "true") {
            ::std::panic!(
                "not run on CI, where every test must run: {}",
                ::std::format_args!($($reason)+)
            );
        }
        ::std::eprintln!("SKIPPED: {}", ::std::format_args!($($reason)+));
        return;
    }};
}
