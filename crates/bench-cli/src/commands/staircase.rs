//! `clibench staircase`: the marginal memory of one more instance of a command.

use super::request::{StaircaseRequest, staircase_settings};
use crate::exit::input_error;
use anyhow::Context;
use bench_cli::standalone::staircase::{self, STOP_GRACE};
use bench_proc::HostFacts;
use std::ffi::OsString;
use std::process::ExitCode;

/// Flags of `clibench staircase`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  clibench staircase -- node -e 'setInterval(() => {}, 1e9)'
  clibench staircase --count 10 --settle 5s --json -- python3 -m http.server 0
  clibench staircase --tty --count 5 --settle 2s -- node

Each instance runs with stdio on /dev/null in its own process group; with
--tty, in a pseudo-terminal of its own whose output is read (and queries
answered) all along, as a terminal would. The hardware header and the step
table go to stderr; --json prints the result file (the format of `clibench
run`, which `clibench compare` compares) on stdout. `avg` is the family's
growth divided by the instances; `steady`, the median of the steps after the
first, is the cost of one more instance once what the first one brought along
(shared daemons, caches) is paid. A step's USS can fall (a negative delta):
starting one more instance makes pages the earlier ones held alone shared,
which moves them from USS to PSS; RSS and PSS say what the step cost.")]
pub struct Args {
    /// Instances to add, one at a time (at least 1).
    #[arg(long, default_value_t = 5, value_name = "N")]
    count: usize,
    /// Wait after each change before measuring: auto (the default, as `clibench run`:
    /// until RSS and process count stay within 1% for 100ms, at most 5s), auto:MAX,
    /// auto:max=5s,quiet=100ms,tolerance=1%, or a fixed time (2s, 500ms).
    #[arg(long, default_value = "auto", value_name = "SETTLE")]
    settle: String,
    /// Print the result file on stdout.
    #[arg(long)]
    json: bool,
    /// Run each instance in a terminal of its own (for REPLs and TUIs, which quit
    /// at once when stdin is /dev/null).
    #[arg(long)]
    tty: bool,
    /// With --tty: wait until each instance is ready before it settles (probe,
    /// pattern:REGEX, first-frame or stable:DURATION, as `clibench startup --ready`), so
    /// that a slow start is never measured half-way.
    #[arg(long, value_name = "MODE", requires = "tty")]
    ready: Option<String>,
    /// How long an instance may take to become ready.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    ready_timeout: String,
    /// The command that makes one instance.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

impl From<&Args> for StaircaseRequest {
    fn from(args: &Args) -> StaircaseRequest {
        StaircaseRequest {
            count: args.count,
            settle: args.settle.clone(),
            tty: args.tty,
            ready: args.ready.clone(),
            ready_timeout: args.ready_timeout.clone(),
            command: args.command.clone(),
        }
    }
}

/// Runs `clibench staircase`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = staircase_settings(StaircaseRequest::from(&args))
        .map_err(|e| input_error(e.to_string()))?;
    let hardware = HostFacts::read().context("failed to read the host's facts")?;
    say_part!(
        "{}",
        bench_core::export::staircase::header(&staircase::prepared(&settings, &hardware))
    );
    super::interrupt::stop_family_on_signal(STOP_GRACE)?;
    say!("warming up, then adding {} instance(s)...", settings.count);
    let result = staircase::run(&settings, &hardware, &mut |step| {
        say!("{}", staircase::render_step(step));
    })?;
    say_part!("{}", bench_core::export::staircase::steps(&result.side));
    if args.json {
        crate::show::json(result.to_json_string().trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_settles_until_quiet_by_default_as_run_does() {
        let args: Args = crate::commands::test_args::parse("staircase", &["--", "true"]);
        let settings = staircase_settings(StaircaseRequest::from(&args)).unwrap();
        assert_eq!(
            settings.settle,
            bench_proc::Settle::Quiet(Default::default())
        );
    }
}
