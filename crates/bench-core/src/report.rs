//! What a single result file adds up to: every metric's statistics, the failed
//! samples and the side's facts, ready for the exporters.

use crate::compare::{FailedSample, failed_samples};
use crate::result::{ProcessMemory, Request, ResultFile};
use crate::stats::{MetricStats, side_stats};
use std::collections::BTreeMap;

/// A summary of one result file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// What was asked for.
    pub request: Request,
    /// The measured sha.
    pub sha: String,
    /// Every metric with samples, in metric order.
    pub metrics: Vec<MetricStats>,
    /// Every failed sample, in metric then trial order.
    pub failures: Vec<FailedSample>,
    /// The side's own error, when its last phase failed.
    pub error: Option<String>,
    /// Release artifacts: file name -> bytes.
    pub artifacts: BTreeMap<String, u64>,
    /// Named durations, seconds.
    pub timings: BTreeMap<String, f64>,
    /// Facts about the run.
    pub runtime: BTreeMap<String, String>,
    /// The process breakdown of the last memory measurement, largest RSS first.
    pub processes: Vec<ProcessMemory>,
    /// Steps that were not run: `<phase>:<trial>` -> why.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, String>,
}

impl Report {
    /// Summarizes `result`.
    pub fn new(result: &ResultFile) -> Report {
        let side = &result.side;
        let mut processes = side.processes.clone();
        processes.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.pid.cmp(&b.pid)));
        Report {
            request: result.request.clone(),
            sha: side.sha.clone(),
            metrics: side_stats(side),
            failures: failed_samples(side),
            error: side.error.clone(),
            artifacts: side.artifacts.clone(),
            timings: side.timings.clone(),
            runtime: side.runtime.clone(),
            processes,
            skipped: side.skipped.clone(),
        }
    }
}
