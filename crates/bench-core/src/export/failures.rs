//! The failures of one or two sides, in the order every exporter lists them: each side's
//! run error, then its failed samples. The exporters only differ in how a line looks.

use crate::compare::FailedSample;

/// One side's failures: its label ("" for a lone result, "base"/"candidate" in a
/// comparison), its run error and its failed samples.
pub(crate) type SideFailures<'a> = (&'a str, &'a Option<String>, &'a Vec<FailedSample>);

/// One failure to list.
pub(crate) enum Failure<'a> {
    /// The side's own error, when its last phase failed.
    Run(&'a str),
    /// A sample that failed.
    Sample(&'a FailedSample),
}

/// Every failure with the prefix its line starts with ("" or "base "); empty when
/// nothing failed, so an exporter writes no section at all.
pub(crate) fn failures<'a>(sides: &[SideFailures<'a>]) -> Vec<(String, Failure<'a>)> {
    let mut lines = Vec::new();
    for &(name, error, failed) in sides {
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("{name} ")
        };
        if let Some(error) = error {
            lines.push((prefix.clone(), Failure::Run(error)));
        }
        lines.extend(
            failed
                .iter()
                .map(|sample| (prefix.clone(), Failure::Sample(sample))),
        );
    }
    lines
}
