//! Every limit of the format checked, the first broken one named by its JSON path.

use super::*;
use crate::detail::{
    MAX_CHECKPOINT_KEYS, MAX_CHECKPOINTS, MAX_LABEL_CHARS, MAX_POINTS, MAX_SCREEN_CHARS,
    MAX_SCREENS, MAX_SERIES, MAX_STEPS, MAX_TURNS,
};

impl ResultFile {
    /// Checks every limit of the format, returning the first broken one with its JSON path.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.schema_version != SCHEMA_VERSION {
            return invalid(
                "schema_version".into(),
                format!("schema_version must be {SCHEMA_VERSION}"),
            );
        }
        let side = &self.side;
        validate_metrics(side)?;
        validate_processes(side)?;
        for (name, seconds) in &side.timings {
            if !seconds.is_finite() || *seconds < 0.0 {
                return invalid(
                    format!("side.timings.{name}"),
                    format!("timing {seconds} is not finite and non-negative"),
                );
            }
        }
        if let Some(error) = &side.error {
            check_length("side.error", error, MAX_ERROR_CHARS)?;
        }
        validate_trials(side)?;
        validate_details(side)
    }
}

/// The first broken limit, at `path` (a JSON path), as the error of any check.
fn invalid<T>(path: String, problem: String) -> Result<T, ValidationError> {
    Err(ValidationError { path, problem })
}

/// Each metric's samples: a trial each at most once, exactly one of a value (one its unit
/// can measure: [`crate::units::Unit::unmeasurable`]) or an error.
fn validate_metrics(side: &Side) -> Result<(), ValidationError> {
    for (metric, samples) in &side.metrics {
        let mut seen = std::collections::BTreeSet::new();
        for (index, sample) in samples.iter().enumerate() {
            let at = format!("side.metrics.{metric}[{index}]");
            check_trial(&format!("{at}.trial"), sample.trial)?;
            if !seen.insert(sample.trial) {
                return invalid(
                    format!("{at}.trial"),
                    format!("trial {} appears twice", sample.trial),
                );
            }
            match (&sample.value, &sample.error) {
                (Some(value), None) => {
                    if let Some(problem) = metric.unit().unmeasurable(*value) {
                        return invalid(format!("{at}.value"), format!("value {problem}"));
                    }
                }
                (None, Some(error)) => {
                    check_length(&format!("{at}.error"), error, MAX_ERROR_CHARS)?
                }
                _ => {
                    return invalid(
                        at,
                        "an observation needs exactly one of value or error".into(),
                    );
                }
            }
        }
    }
    Ok(())
}

/// The process table: its length, each name and command line, each CPU time.
fn validate_processes(side: &Side) -> Result<(), ValidationError> {
    if side.processes.len() > MAX_PROCESSES {
        return invalid(
            "side.processes".into(),
            format!(
                "{} processes are more than {MAX_PROCESSES}",
                side.processes.len()
            ),
        );
    }
    for (index, process) in side.processes.iter().enumerate() {
        let at = format!("side.processes[{index}]");
        check_length(&format!("{at}.name"), &process.name, MAX_NAME_CHARS)?;
        if let Some(cmdline) = &process.cmdline {
            check_length(&format!("{at}.cmdline"), cmdline, MAX_CMDLINE_CHARS)?;
        }
        if let Some(cpu) = process.cpu_seconds
            && (!cpu.is_finite() || cpu < 0.0)
        {
            return invalid(
                format!("{at}.cpu_seconds"),
                format!("cpu_seconds {cpu} is not finite and non-negative"),
            );
        }
    }
    Ok(())
}

/// The trial records: how many, each (phase, trial) once, and each record's fields.
fn validate_trials(side: &Side) -> Result<(), ValidationError> {
    if side.trials.len() > MAX_TRIAL_RECORDS {
        return invalid(
            "side.trials".into(),
            format!(
                "{} trial records are more than {MAX_TRIAL_RECORDS}",
                side.trials.len()
            ),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for (index, record) in side.trials.iter().enumerate() {
        let at = format!("side.trials[{index}]");
        check_trial(&format!("{at}.trial"), record.trial)?;
        if !seen.insert((record.phase, record.trial)) {
            return invalid(
                at,
                format!("{} trial {} is recorded twice", record.phase, record.trial),
            );
        }
        validate_trial_record(&at, record)?;
    }
    Ok(())
}

/// One trial record at `at`: its load average, host, speed probe, starts and settles.
fn validate_trial_record(at: &str, record: &TrialRecord) -> Result<(), ValidationError> {
    if let Some(load) = record.load_average
        && load.iter().any(|value| !value.is_finite() || *value < 0.0)
    {
        return invalid(
            format!("{at}.load_average"),
            format!("load average {load:?} is not finite and non-negative"),
        );
    }
    if let Some(host) = &record.host {
        check_length(&format!("{at}.host"), host, MAX_HOST_CHARS)?;
    }
    if let Some(seconds) = record.speed_probe_seconds
        && !(seconds.is_finite() && seconds > 0.0)
    {
        return invalid(
            format!("{at}.speed_probe_seconds"),
            format!("speed probe {seconds} s is not finite and positive"),
        );
    }
    if record.settles.len() > MAX_SETTLES {
        return invalid(
            format!("{at}.settles"),
            format!(
                "{} settles are more than {MAX_SETTLES}",
                record.settles.len()
            ),
        );
    }
    if record.starts.len() > MAX_STARTS {
        return invalid(
            format!("{at}.starts"),
            format!("{} starts are more than {MAX_STARTS}", record.starts.len()),
        );
    }
    for (index, start) in record.starts.iter().enumerate() {
        let at = format!("{at}.starts[{index}].session");
        check_length(&at, &start.session, MAX_LABEL_CHARS)?;
    }
    for (index, settle) in record.settles.iter().enumerate() {
        validate_settle(&format!("{at}.settles[{index}]"), settle)?;
    }
    validate_terminal_windows(at, record)
}

/// A trial's terminal windows: at most [`MAX_TERMINAL_WINDOWS`], each label bounded and
/// its time finite and non-negative.
fn validate_terminal_windows(at: &str, record: &TrialRecord) -> Result<(), ValidationError> {
    if record.terminal.len() > MAX_TERMINAL_WINDOWS {
        return invalid(
            format!("{at}.terminal"),
            format!(
                "{} terminal windows are more than {MAX_TERMINAL_WINDOWS}",
                record.terminal.len()
            ),
        );
    }
    for (index, window) in record.terminal.iter().enumerate() {
        let at = format!("{at}.terminal[{index}]");
        check_length(&format!("{at}.window"), &window.window, MAX_LABEL_CHARS)?;
        if !window.seconds.is_finite() || window.seconds < 0.0 {
            return invalid(
                format!("{at}.seconds"),
                format!("{} is not finite and non-negative", window.seconds),
            );
        }
    }
    Ok(())
}

/// One settle at `at`: its session label, its times (finite, non-negative) and its
/// tolerance (a fraction).
fn validate_settle(at: &str, settle: &SettleRecord) -> Result<(), ValidationError> {
    check_length(&format!("{at}.session"), &settle.session, MAX_LABEL_CHARS)?;
    let seconds = [
        ("max_seconds", Some(settle.max_seconds)),
        ("quiet_seconds", settle.quiet_seconds),
        ("took_seconds", Some(settle.took_seconds)),
    ];
    for (field, value) in seconds {
        if let Some(value) = value
            && (!value.is_finite() || value < 0.0)
        {
            return invalid(
                format!("{at}.{field}"),
                format!("{value} is not finite and non-negative"),
            );
        }
    }
    if let Some(tolerance) = settle.tolerance
        && !(0.0..=1.0).contains(&tolerance)
    {
        return invalid(
            format!("{at}.tolerance"),
            format!("tolerance {tolerance} is not a fraction from 0 to 1"),
        );
    }
    Ok(())
}

/// The limits of the optional parts the HTML report draws.
fn validate_details(side: &Side) -> Result<(), ValidationError> {
    let invalid = |path: String, problem: String| Err(ValidationError { path, problem });
    let too_many = |path: &str, found: usize, max: usize| {
        invalid(
            path.to_string(),
            format!("{found} entries are more than {max}"),
        )
    };
    if side.memory_series.len() > MAX_SERIES {
        return too_many("side.memory_series", side.memory_series.len(), MAX_SERIES);
    }
    for (index, series) in side.memory_series.iter().enumerate() {
        let at = format!("side.memory_series[{index}]");
        check_trial(&format!("{at}.trial"), series.trial)?;
        check_length(&format!("{at}.session"), &series.session, MAX_LABEL_CHARS)?;
        if series.points.len() > MAX_POINTS {
            return too_many(&format!("{at}.points"), series.points.len(), MAX_POINTS);
        }
    }
    if side.screens.len() > MAX_SCREENS {
        return too_many("side.screens", side.screens.len(), MAX_SCREENS);
    }
    for (index, screen) in side.screens.iter().enumerate() {
        let at = format!("side.screens[{index}]");
        check_trial(&format!("{at}.trial"), screen.trial)?;
        check_length(&format!("{at}.session"), &screen.session, MAX_LABEL_CHARS)?;
        check_length(&format!("{at}.text"), &screen.text, MAX_SCREEN_CHARS)?;
    }
    if side.staircases.len() > MAX_TRIAL as usize + 1 {
        return too_many(
            "side.staircases",
            side.staircases.len(),
            MAX_TRIAL as usize + 1,
        );
    }
    for (index, run) in side.staircases.iter().enumerate() {
        let at = format!("side.staircases[{index}]");
        check_trial(&format!("{at}.trial"), run.trial)?;
        if run.steps.len() > MAX_STEPS {
            return too_many(&format!("{at}.steps"), run.steps.len(), MAX_STEPS);
        }
    }
    if side.sessions.len() > MAX_TRIAL as usize + 1 {
        return too_many("side.sessions", side.sessions.len(), MAX_TRIAL as usize + 1);
    }
    for (index, run) in side.sessions.iter().enumerate() {
        let at = format!("side.sessions[{index}]");
        check_trial(&format!("{at}.trial"), run.trial)?;
        check_length(&format!("{at}.dialect"), &run.dialect, MAX_LABEL_CHARS)?;
        if run.turns.len() > MAX_TURNS {
            return too_many(&format!("{at}.turns"), run.turns.len(), MAX_TURNS);
        }
        for (turn, measured) in run.turns.iter().enumerate() {
            if measured.typing_lag_seconds.len() > 100 {
                return too_many(
                    &format!("{at}.turns[{turn}].typing_lag_seconds"),
                    measured.typing_lag_seconds.len(),
                    100,
                );
            }
        }
        if run.checkpoints.len() > MAX_CHECKPOINTS {
            return too_many(
                &format!("{at}.checkpoints"),
                run.checkpoints.len(),
                MAX_CHECKPOINTS,
            );
        }
        if run.pastes.len() > crate::detail::MAX_PASTES {
            return too_many(
                &format!("{at}.pastes"),
                run.pastes.len(),
                crate::detail::MAX_PASTES,
            );
        }
        for (index, checkpoint) in run.checkpoints.iter().enumerate() {
            if checkpoint.key_echo_seconds.len() > MAX_CHECKPOINT_KEYS {
                return too_many(
                    &format!("{at}.checkpoints[{index}].key_echo_seconds"),
                    checkpoint.key_echo_seconds.len(),
                    MAX_CHECKPOINT_KEYS,
                );
            }
        }
    }
    Ok(())
}

fn check_trial(path: &str, trial: u32) -> Result<(), ValidationError> {
    if trial > MAX_TRIAL {
        return Err(ValidationError {
            path: path.to_string(),
            problem: format!("trial {trial} is above {MAX_TRIAL}"),
        });
    }
    Ok(())
}

fn check_length(path: &str, text: &str, max: usize) -> Result<(), ValidationError> {
    let chars = text.chars().count();
    if chars > max {
        return Err(ValidationError {
            path: path.to_string(),
            problem: format!("{chars} characters are more than {max}"),
        });
    }
    Ok(())
}
