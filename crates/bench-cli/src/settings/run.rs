//! What `run`, `ab` and `bisect` share: the phases asked for and a scenario's overrides.

use super::SettingsError;
use bench_cli::pipeline::SpecSource;
use bench_cli::spec::{Override, Scenario};
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

/// `--scenario`'s overrides, its tool calls running `tool` (the spec's, see
/// [`scenario_tool`]), then `overrides` (the command line's, which win).
pub fn with_scenario(
    scenario: Option<Scenario>,
    tool: Option<&str>,
    overrides: Vec<Override>,
) -> Vec<Override> {
    let mut all = scenario
        .map(|scenario| scenario.overrides_with(tool))
        .unwrap_or_default();
    all.extend(overrides);
    all
}

/// The tool a scenario's calls run for the spec at `source` with `overrides`
/// (`bench_cli::spec::tool_of`); `None` for the demo (it runs any command) and for a spec
/// that cannot be read (the run reports that).
pub fn scenario_tool(source: &SpecSource, overrides: &[Override]) -> Option<String> {
    match source {
        SpecSource::File(path) => bench_cli::spec::load_with(path, overrides)
            .ok()
            .and_then(|spec| bench_cli::spec::tool_of(&spec)),
        SpecSource::Demo => None,
    }
}
