//! Parsing one command's flags in unit tests, as clap parses them on the command line.

/// `A`'s flags parsed from `name extra...`.
pub(crate) fn parse<A: clap::Args>(name: &str, extra: &[&str]) -> A {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrapper<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    let mut argv = vec![name];
    argv.extend_from_slice(extra);
    Wrapper::<A>::try_parse_from(argv)
        .expect("the flags parse")
        .args
}
