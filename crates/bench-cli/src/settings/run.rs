//! What `run`, `ab` and `bisect` share: the phases asked for and a scenario's overrides.

use super::SettingsError;
use crate::spec::{Override, Scenario};
use bench_core::Phase;

/// `--phases a,b`: each name a phase.
pub fn parse_phases(names: &[String]) -> Result<Vec<Phase>, SettingsError> {
    names
        .iter()
        .map(|name| {
            name.trim()
                .parse::<Phase>()
                .map_err(|_| SettingsError::UnknownPhase {
                    name: name.clone(),
                    expected: Phase::ALL.map(Phase::name).join(","),
                })
        })
        .collect()
}

/// `--scenario`'s overrides, then `overrides` (the command line's, which win).
pub fn with_scenario(scenario: Option<Scenario>, overrides: Vec<Override>) -> Vec<Override> {
    let mut all = scenario.map(Scenario::overrides).unwrap_or_default();
    all.extend(overrides);
    all
}
