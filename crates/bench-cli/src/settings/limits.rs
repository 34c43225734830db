//! Trial counts and numbers checked against the limits of the result format, so a run
//! that could only fail at its end is refused before it starts (exit 2).

use super::FlagValueError;
use bench_core::MAX_TRIAL;

/// A number of trials or installs: at most `MAX_TRIAL + 1`, since trials are
/// numbered from 0 and the result file holds trial numbers up to `MAX_TRIAL`.
/// Zero is left to the command, which says why it needs at least one.
/// A number of trials or installs: at most one more than the largest trial number.
pub fn trial_count(text: &str) -> Result<u32, FlagValueError> {
    let count: u32 = text
        .parse()
        .map_err(|_| FlagValueError::new(format!("`{text}` is not a whole number")))?;
    let max = MAX_TRIAL + 1;
    if count > max {
        return Err(FlagValueError::new(format!(
            "{count} is above {max} (the result file numbers trials 0 to {MAX_TRIAL})"
        )));
    }
    Ok(count)
}

/// The most pairs a bisect comparison may grow to: pairs add up over runs, so past one
/// result's 101 trials; bounded so that a typo cannot ask for days of measuring.
pub fn pair_count(text: &str) -> Result<u32, FlagValueError> {
    const MOST: u32 = 1000;
    let count: u32 = text
        .parse()
        .map_err(|_| FlagValueError::new(format!("`{text}` is not a whole number")))?;
    if count > MOST {
        return Err(FlagValueError::new(format!("{count} is above {MOST}")));
    }
    Ok(count)
}

/// A duration flag's value (`30m`, `2h`, `90s`).
pub fn duration(text: &str) -> Result<std::time::Duration, FlagValueError> {
    bench_core::units::parse_duration(text).map_err(|error| FlagValueError::new(error.to_string()))
}

/// The shortest `--budget` that can decide anything: a pair of trials of the quickest
/// target (the demo agent's measure phase) takes about a second on a quiet machine, and
/// the first look at the comparison needs a few pairs; a shorter budget would stop after
/// one pair and decide nothing.
pub(crate) const MIN_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// A `--budget` flag's value: a duration of at least `MIN_BUDGET`.
pub fn budget(text: &str) -> Result<std::time::Duration, FlagValueError> {
    let budget = duration(text)?;
    if budget < MIN_BUDGET {
        return Err(FlagValueError::new(format!(
            "a budget of {text} is shorter than the few pairs of trials the first look needs; \
             the shortest useful budget is {}s",
            MIN_BUDGET.as_secs()
        )));
    }
    Ok(budget)
}

/// A history store flag's value (`--store`, `--history`, `history import`'s stores): a
/// file or a `postgres://` URL as given, or, for `-`, the URL (password and all) on the
/// first line of standard input. A password in the flag itself is refused where the store
/// is opened (`bench_cli::history::location::check_flag`), whose message, unlike a flag
/// parser's, does not repeat the value.
pub fn store(text: &str) -> Result<std::path::PathBuf, FlagValueError> {
    if text != "-" {
        return Ok(std::path::PathBuf::from(text));
    }
    bench_cli::history::location::store_from_stdin(std::io::stdin().lock())
        .map_err(|error| FlagValueError::new(error.to_string()))
}

/// A metric flag's value; an unknown name says where the names are listed.
pub fn metric(name: &str) -> Result<bench_core::Metric, FlagValueError> {
    name.parse().map_err(|_| {
        FlagValueError::new(format!(
            "unknown metric '{name}'; `clibench report --explain` lists them"
        ))
    })
}

/// A trial number: 0 to `MAX_TRIAL`.
/// A trial's number: at most the largest a result file holds.
pub fn trial_number(text: &str) -> Result<u32, FlagValueError> {
    let trial: u32 = text
        .parse()
        .map_err(|_| FlagValueError::new(format!("`{text}` is not a whole number")))?;
    if trial > MAX_TRIAL {
        return Err(FlagValueError::new(format!(
            "{trial} is above {MAX_TRIAL}, the largest trial a result file holds"
        )));
    }
    Ok(trial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_shorter_than_a_few_pairs_is_refused_naming_the_shortest() {
        for short in ["0s", "9s", "500ms"] {
            let error = budget(short).unwrap_err().to_string();
            assert!(
                error.contains("the shortest useful budget is 10s"),
                "{short}: {error}"
            );
        }
        assert_eq!(budget("10s").unwrap(), MIN_BUDGET);
        assert_eq!(budget("2m").unwrap(), std::time::Duration::from_secs(120));
        assert!(budget("0").is_err());
    }

    #[test]
    fn trial_counts_stop_where_the_result_format_does() {
        assert_eq!(trial_count("1").unwrap(), 1);
        assert_eq!(
            trial_count(&(MAX_TRIAL + 1).to_string()).unwrap(),
            MAX_TRIAL + 1
        );
        assert!(trial_count(&(MAX_TRIAL + 2).to_string()).is_err());
        assert!(trial_count("99999999999999").is_err());
        assert_eq!(trial_number(&MAX_TRIAL.to_string()).unwrap(), MAX_TRIAL);
        assert!(trial_number(&(MAX_TRIAL + 1).to_string()).is_err());
    }
}
