//! The runtime metrics of a kernel, with the reference harness's defaults and checks.
//!
//! [`run_all`] is the whole sequence of the runtime phase: start, memory, cell latency,
//! shell helper, `git status`, output, mixed cells, interrupt, loaded memory, snapshot,
//! and restore in a fresh kernel. Memory is measured by a caller-supplied closure, so
//! this crate stays independent of how processes are found and measured.

use super::client::{Kernel, KernelOptions, Reply};
use super::error::{KernelError, quote};
use super::protocol::{Event, Request, Snapshot};
use bench_core::{Metric, error_chain};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Cells timed per `pass` batch (`kernel_exec`).
pub const CELL_REPEATS: usize = 50;
/// `pass` cells run before timing.
pub const CELL_WARMUP: usize = 5;
/// Cells timed per shell batch (`bash`, `git_status`, `output`).
pub const SHELL_REPEATS: usize = 5;
/// Shell cells run before timing.
pub const SHELL_WARMUP: usize = 1;
/// Bytes the `output` cell prints.
pub const OUTPUT_BYTES: usize = 32 * 1024;
/// Cells in the `mixed` sequence.
pub const MIXED_CELLS: usize = 35;
/// Rows of the loaded table.
pub const FRAME_ROWS: usize = 10_000;
/// Columns of the loaded table.
pub const FRAME_COLUMNS: usize = 8;
/// What the interrupt cell prints before it blocks.
pub const INTERRUPT_READY: &str = "interrupt-ready";

/// `await bash(':')`, asserting exit code 0 and empty output.
pub const BASH_EMPTY: &str = "\
_clibench_r = await bash(':')
_clibench_code = getattr(_clibench_r, 'exit_code', getattr(_clibench_r, 'returncode', None))
_clibench_out = getattr(_clibench_r, 'output', getattr(_clibench_r, 'stdout', None))
assert _clibench_code == 0 and _clibench_out == '', repr(_clibench_r)";

/// `await bash('git status --porcelain')`, asserting exit code 0.
pub const GIT_STATUS: &str = "\
_clibench_r = await bash('git status --porcelain')
_clibench_code = getattr(_clibench_r, 'exit_code', getattr(_clibench_r, 'returncode', None))
assert _clibench_code == 0, repr(_clibench_r)";

/// Prints exactly [`OUTPUT_BYTES`] bytes produced by a shell `printf`.
pub const BASH_OUTPUT: &str = "\
_clibench_r = await bash(\"printf '%32768s' ''\")
print(getattr(_clibench_r, 'output', getattr(_clibench_r, 'stdout', '')), end='')";

/// Prints [`INTERRUPT_READY`], then waits 60 s in an `await`.
pub const INTERRUPT_AWAIT: &str = "\
import asyncio as _clibench_asyncio
print('interrupt-ready', flush=True)
await _clibench_asyncio.sleep(60)";

/// Prints [`INTERRUPT_READY`], then spins in a synchronous `while True: pass`.
pub const INTERRUPT_BUSY: &str = "\
print('interrupt-ready', flush=True)
while True:
    pass";

/// What builds the loaded-memory fixture, and which kind it built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A pandas DataFrame (pandas was importable in the kernel).
    Pandas,
    /// A list of row lists (pandas was not importable).
    Lists,
}

impl Workload {
    /// `pandas` or `lists`.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Pandas => "pandas",
            Workload::Lists => "lists",
        }
    }
}

/// The cell that builds `frame` (10,000 x 8; column or row `i` holds `0..10_000`) and
/// `payload` (`list(range(10_000))`) and prints which workload it used.
pub fn loaded_workload_cell() -> String {
    format!(
        "\
try:
    import pandas as _clibench_pd
except ImportError:
    _clibench_pd = None
if _clibench_pd is not None:
    frame = _clibench_pd.DataFrame({{str(_i): range({FRAME_ROWS}) for _i in range({FRAME_COLUMNS})}})
    assert frame.shape == ({FRAME_ROWS}, {FRAME_COLUMNS})
else:
    frame = [[_row] * {FRAME_COLUMNS} for _row in range({FRAME_ROWS})]
payload = list(range({FRAME_ROWS}))
print('clibench-workload:', 'lists' if _clibench_pd is None else 'pandas')"
    )
}

/// The cell that checks a restored `frame` (shape and sum) and `payload` (contents).
pub fn verify_workload_cell() -> String {
    let total = FRAME_COLUMNS * FRAME_ROWS * (FRAME_ROWS - 1) / 2;
    format!(
        "\
if hasattr(frame, 'shape'):
    _clibench_shape = tuple(frame.shape)
    _clibench_total = int(frame.sum().sum())
else:
    _clibench_shape = (len(frame), len(frame[0]) if frame else 0)
    assert all(len(_row) == {FRAME_COLUMNS} for _row in frame), 'ragged rows'
    _clibench_total = sum(map(sum, frame))
assert _clibench_shape == ({FRAME_ROWS}, {FRAME_COLUMNS}), _clibench_shape
assert _clibench_total == {total}, _clibench_total
assert payload == list(range({FRAME_ROWS})), 'payload differs'"
    )
}

/// A measurement's check failed, or the kernel failed under it.
///
/// The message names the failure and the cause is the
/// [`source`](std::error::Error::source), as in [`KernelError`]: show it with its causes
/// joined by `: ` (as [`RuntimeReport::first_error`] does).
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The kernel client failed.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A cell ended with a status other than `ok`.
    #[error("cell `{code}` ended with status {status}: {error}")]
    CellFailed {
        /// The cell (shortened).
        code: String,
        /// The `done` status.
        status: String,
        /// The error event, or what else was seen.
        error: String,
    },
    /// A cell printed a different number of bytes than expected.
    #[error("cell `{code}` printed {actual} bytes of stdout, expected {expected}")]
    OutputSize {
        /// The cell (shortened).
        code: String,
        /// Bytes expected.
        expected: usize,
        /// Bytes printed.
        actual: usize,
    },
    /// The interrupt cell never printed its ready marker.
    #[error(
        "interrupt cell ended before printing `{INTERRUPT_READY}`: status {status}, stdout {stdout:?}"
    )]
    InterruptNotReached {
        /// The `done` status.
        status: String,
        /// What it printed.
        stdout: String,
    },
    /// The interrupted cell did not end as an interrupted cell should.
    #[error(
        "interrupted cell ended with status {status} and errors [{errors}], expected status error with KeyboardInterrupt"
    )]
    NotInterrupted {
        /// The `done` status.
        status: String,
        /// The `ename`s of its error events.
        errors: String,
    },
    /// The snapshot did not save every fixture name.
    #[error(
        "snapshot did not save {missing:?} (saved {saved:?}, skipped {skipped:?}; reason: {reason})"
    )]
    SnapshotIncomplete {
        /// Names that should have been saved.
        missing: Vec<String>,
        /// Names it saved.
        saved: Vec<String>,
        /// Names it skipped.
        skipped: Vec<String>,
        /// The kernel's reason, if any.
        reason: String,
    },
    /// The restore did not revive every fixture name.
    #[error(
        "restore did not revive {missing:?} (restored {restored:?}, failed {failed:?}; reason: {reason})"
    )]
    RestoreIncomplete {
        /// Names that should have been restored.
        missing: Vec<String>,
        /// Names it restored.
        restored: Vec<String>,
        /// Names it failed to restore.
        failed: Vec<String>,
        /// The kernel's reason, if any.
        reason: String,
    },
    /// The loaded-workload cell did not say which workload it built.
    #[error("workload cell did not report pandas or lists: {stdout:?}")]
    UnknownWorkload {
        /// What it printed.
        stdout: String,
    },
    /// The caller's memory measurement failed.
    #[error("memory measurement failed")]
    Memory {
        /// What the [`MemoryProbe`] returned.
        #[source]
        source: ProbeError,
    },
}

fn require_ok(code: &str, reply: &Reply) -> Result<(), MeasureError> {
    if reply.is_ok() {
        return Ok(());
    }
    let error = match reply.error() {
        Some(error) => {
            let last = error.traceback.last().cloned().unwrap_or_default();
            format!("{}: {} {}", error.ename, error.evalue, quote(&last))
        }
        None => match reply.done.reason() {
            Some(reason) => reason.to_owned(),
            None => "no error event".to_owned(),
        },
    };
    Err(MeasureError::CellFailed {
        code: quote(code),
        status: reply.done.status.clone(),
        error,
    })
}

/// The measurement helpers as methods, with the reference harness's defaults, for
/// callers that hold a [`Kernel`] (`kernel.batch("pass", 50, None)`).
impl Kernel {
    /// [`batch`]: mean time per cell of `code` run `repeats` times.
    pub fn batch(
        &mut self,
        code: &str,
        repeats: usize,
        expected_output_bytes: Option<usize>,
    ) -> Result<Duration, MeasureError> {
        batch(self, code, repeats, expected_output_bytes)
    }

    /// [`mixed`] with the defaults: total time of [`MIXED_CELLS`] cells, [`GIT_STATUS`]
    /// when the index is divisible by 4 and `pass` otherwise.
    pub fn mixed(&mut self) -> Result<Duration, MeasureError> {
        mixed(self, MIXED_CELLS, GIT_STATUS)
    }

    /// [`interrupt_latency`] of [`INTERRUPT_AWAIT`]: the time from `interrupt` to `done`
    /// of a cell waiting in `await asyncio.sleep(60)`.
    pub fn interrupt_latency(&mut self) -> Result<Duration, MeasureError> {
        interrupt_latency(self, INTERRUPT_AWAIT)
    }
}

/// Runs `code` `repeats` times and returns the mean time per cell (wall time from the
/// first request to the last `done`, divided by `repeats`). Every cell must end `ok`;
/// with `expected_output_bytes`, each cell's joined stdout must be exactly that long.
pub fn batch(
    kernel: &mut Kernel,
    code: &str,
    repeats: usize,
    expected_output_bytes: Option<usize>,
) -> Result<Duration, MeasureError> {
    let repeats = repeats.max(1);
    let started = Instant::now();
    for _ in 0..repeats {
        let reply = kernel.execute(code)?;
        require_ok(code, &reply)?;
        if let Some(expected) = expected_output_bytes {
            let actual = reply.stdout().len();
            if actual != expected {
                return Err(MeasureError::OutputSize {
                    code: quote(code),
                    expected,
                    actual,
                });
            }
        }
    }
    // In f64, as the reference harness divides: no cap on `repeats` as `Duration / u32` has.
    Ok(started.elapsed().div_f64(repeats as f64))
}

/// Runs `cells` cells, `git_status_code` when the index is divisible by 4 and `pass`
/// otherwise, and returns the total time. Every cell must end `ok`.
pub fn mixed(
    kernel: &mut Kernel,
    cells: usize,
    git_status_code: &str,
) -> Result<Duration, MeasureError> {
    let started = Instant::now();
    for index in 0..cells {
        let code = if index % 4 == 0 {
            git_status_code
        } else {
            "pass"
        };
        let reply = kernel.execute(code)?;
        require_ok(code, &reply)?;
    }
    Ok(started.elapsed())
}

/// Runs `code` (which must print [`INTERRUPT_READY`] and then block), sends `interrupt`
/// once the marker is seen, and returns the time until `done`. The cell must end with
/// status `error` and a `KeyboardInterrupt` error event, and a follow-up cell must run.
pub fn interrupt_latency(kernel: &mut Kernel, code: &str) -> Result<Duration, MeasureError> {
    let id = kernel.submit(&Request::execute(code))?;
    let timeout = kernel.options().request_timeout;
    let deadline = Instant::now() + timeout;
    let mut stdout = String::new();
    let mut events = Vec::new();
    let waiting_for = format!("`{INTERRUPT_READY}` from request {id}");
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = kernel.next_event(left, &waiting_for)?;
        match event {
            Event::Stdout(stream) if stream.id.is_none() || stream.id.as_deref() == Some(&id) => {
                stdout.push_str(&stream.text);
                if stdout.contains(INTERRUPT_READY) {
                    break;
                }
            }
            Event::Done(done) if done.id == id => {
                return Err(MeasureError::InterruptNotReached {
                    status: done.status,
                    stdout,
                });
            }
            event => events.push(event),
        }
    }
    let started = Instant::now();
    kernel.interrupt()?;
    let reply = kernel.wait_done(&id, timeout)?;
    let elapsed = started.elapsed();
    events.extend(reply.events.iter().cloned());
    let enames: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::Error(error) if error.id.as_deref() == Some(&id) => Some(error.ename.as_str()),
            _ => None,
        })
        .collect();
    if reply.done.status != "error" || !enames.contains(&"KeyboardInterrupt") {
        return Err(MeasureError::NotInterrupted {
            status: reply.done.status.clone(),
            errors: enames.join(", "),
        });
    }
    let follow_up = "print('interrupt-recovered')";
    let after = kernel.execute(follow_up)?;
    require_ok(follow_up, &after)?;
    if after.stdout() != "interrupt-recovered\n" {
        return Err(MeasureError::CellFailed {
            code: follow_up.to_owned(),
            status: after.done.status.clone(),
            error: format!("printed {:?}", after.stdout()),
        });
    }
    Ok(elapsed)
}

/// Sends `snapshot` (payload at `path`, manifest at `manifest_path`) and returns how
/// long it took; every name in `expected` must be in `saved`.
pub fn snapshot(
    kernel: &mut Kernel,
    path: &Path,
    manifest_path: &Path,
    expected: &[&str],
) -> Result<Duration, MeasureError> {
    let request = Request::Snapshot(Snapshot {
        path: path.to_owned(),
        manifest_path: manifest_path.to_owned(),
        ..Snapshot::default()
    });
    let started = Instant::now();
    let reply = kernel.request(&request)?;
    let elapsed = started.elapsed();
    let saved = reply.done.strings("saved").unwrap_or_default();
    let missing = missing(expected, &saved);
    if !reply.is_ok() || !missing.is_empty() {
        return Err(MeasureError::SnapshotIncomplete {
            missing,
            saved,
            skipped: reply.done.strings("skipped").unwrap_or_default(),
            reason: reason(&reply),
        });
    }
    Ok(elapsed)
}

/// Sends `restore` of `path` and returns how long it took; nothing may fail and every name in
/// `expected` must be restored.
pub fn restore(
    kernel: &mut Kernel,
    path: &Path,
    expected: &[&str],
) -> Result<Duration, MeasureError> {
    let request = Request::Restore {
        path: path.to_owned(),
    };
    let started = Instant::now();
    let reply = kernel.request(&request)?;
    let elapsed = started.elapsed();
    let restored = reply.done.strings("restored").unwrap_or_default();
    let failed = reply.done.strings("failed").unwrap_or_default();
    let missing = missing(expected, &restored);
    if !reply.is_ok() || !failed.is_empty() || !missing.is_empty() {
        return Err(MeasureError::RestoreIncomplete {
            missing,
            restored,
            failed,
            reason: reason(&reply),
        });
    }
    Ok(elapsed)
}

fn missing(expected: &[&str], present: &[String]) -> Vec<String> {
    expected
        .iter()
        .filter(|name| !present.iter().any(|have| have == *name))
        .map(|name| (*name).to_owned())
        .collect()
}

fn reason(reply: &Reply) -> String {
    match (reply.done.reason(), reply.error()) {
        (Some(reason), _) => reason.to_owned(),
        (None, Some(error)) => format!("{}: {}", error.ename, error.evalue),
        (None, None) => "none given".to_owned(),
    }
}

/// Builds the loaded-memory fixture and returns which workload the kernel used.
pub fn load_workload(kernel: &mut Kernel) -> Result<Workload, MeasureError> {
    let code = loaded_workload_cell();
    let reply = kernel.execute(&code)?;
    require_ok(&code, &reply)?;
    let stdout = reply.stdout();
    if stdout.contains("clibench-workload: pandas") {
        Ok(Workload::Pandas)
    } else if stdout.contains("clibench-workload: lists") {
        Ok(Workload::Lists)
    } else {
        Err(MeasureError::UnknownWorkload { stdout })
    }
}

/// How [`run_all`] runs: the kernel, where state and transcripts go, the cells.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// How to start the kernel (both the measured one and the fresh one for `restore`).
    /// Its `transcript` is replaced by `transcript_dir` when that is set.
    pub kernel: KernelOptions,
    /// A folder for the snapshot payload (`state.pkl`) and manifest (`manifest.json`);
    /// the kernel's user must be able to write it.
    pub state_dir: PathBuf,
    /// Where to keep `kernel-<trial>.jsonl` and `restore-<trial>.jsonl`, if anywhere.
    pub transcript_dir: Option<PathBuf>,
    /// The trial number, used in transcript names.
    pub trial: usize,
    /// Run first in the measured kernel, e.g. `from rlm import bash` (`clibench kernel`'s
    /// default, what an agent's kernel imports before its first cell).
    pub prelude: Option<String>,
    /// `pass` cells timed for `kernel_exec`.
    pub cell_repeats: usize,
    /// Cells timed for each shell metric.
    pub shell_repeats: usize,
}

impl RuntimeOptions {
    /// The reference harness's defaults for `kernel`, with state in `state_dir`.
    pub fn new(kernel: KernelOptions, state_dir: impl Into<PathBuf>) -> RuntimeOptions {
        RuntimeOptions {
            kernel,
            state_dir: state_dir.into(),
            transcript_dir: None,
            trial: 0,
            prelude: Some("from rlm import bash".to_owned()),
            cell_repeats: CELL_REPEATS,
            shell_repeats: SHELL_REPEATS,
        }
    }
}

/// What one [`run_all`] measured.
#[derive(Debug, Default)]
pub struct RuntimeReport {
    /// The kernel's Python version, once `ready` said it.
    pub python: Option<String>,
    /// Which loaded workload was built, once it was.
    pub workload: Option<Workload>,
    /// Each metric measured or attempted, in order, in the metric's base unit (seconds or
    /// bytes); the sequence stops at the first failure (as the reference harness does),
    /// so later metrics are absent.
    pub values: Vec<(Metric, Result<f64, MeasureError>)>,
    /// A failure while closing a kernel after the metrics, if any.
    pub close_error: Option<KernelError>,
}

impl RuntimeReport {
    /// The value of `metric`, if it was measured.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        self.values
            .iter()
            .find(|(m, _)| *m == metric)
            .and_then(|(_, value)| value.as_ref().ok().copied())
    }

    /// The first failure, if any, as `metric: message: cause: ...`.
    pub fn first_error(&self) -> Option<String> {
        self.values.iter().find_map(|(metric, value)| {
            value
                .as_ref()
                .err()
                .map(|error| format!("{}: {}", metric.name(), error_chain(error)))
        })
    }
}

/// The memory probe [`run_all`] calls: given the metric and the kernel's pid (which is
/// also its session id), returns the bytes of the kernel's processes.
/// Its error becomes the source of [`MeasureError::Memory`].
pub type MemoryProbe<'a> = dyn FnMut(Metric, u32) -> Result<u64, ProbeError> + 'a;

/// Why a [`MemoryProbe`] failed: the caller's own error type.
pub type ProbeError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Runs the runtime phase's whole measurement sequence (what the reference harness's
/// `runtime()` does) and returns each metric's value or error. The working directory of
/// `options.kernel` should be a git repository (for `git_status`).
pub fn run_all(options: &RuntimeOptions, memory: &mut MemoryProbe<'_>) -> RuntimeReport {
    let mut report = RuntimeReport::default();
    let mut current = Metric::KernelStart;
    let mut kernel: Option<Kernel> = None;
    let result = run_sequence(options, memory, &mut report, &mut current, &mut kernel);
    if let Err(error) = result {
        report.values.push((current, Err(error)));
    }
    if let Some(kernel) = kernel.take()
        && let Err(error) = kernel.close()
    {
        report.close_error.get_or_insert(error);
    }
    report
}

fn kernel_options(options: &RuntimeOptions, name: &str) -> KernelOptions {
    let mut kernel = options.kernel.clone();
    if let Some(folder) = &options.transcript_dir {
        kernel.transcript = Some(folder.join(format!("{name}-{}.jsonl", options.trial)));
    }
    kernel
}

fn run_sequence(
    options: &RuntimeOptions,
    memory: &mut MemoryProbe<'_>,
    report: &mut RuntimeReport,
    current: &mut Metric,
    slot: &mut Option<Kernel>,
) -> Result<(), MeasureError> {
    let kernel = slot.insert(Kernel::spawn(kernel_options(options, "kernel"))?);
    let ready = kernel.ready()?;
    report.python = Some(ready.python.clone());
    report
        .values
        .push((Metric::KernelStart, Ok(ready.elapsed.as_secs_f64())));

    let mut measure_memory = |metric: Metric, pid: u32, report: &mut RuntimeReport| {
        let bytes = memory(metric, pid).map_err(|source| MeasureError::Memory { source })?;
        report.values.push((metric, Ok(bytes as f64)));
        Ok::<(), MeasureError>(())
    };
    *current = Metric::KernelRss;
    measure_memory(Metric::KernelRss, kernel.pid(), report)?;

    *current = Metric::KernelExec;
    if let Some(prelude) = &options.prelude {
        let reply = kernel.execute(prelude)?;
        require_ok(prelude, &reply)?;
    }
    batch(kernel, "pass", CELL_WARMUP, None)?;
    batch(kernel, BASH_EMPTY, SHELL_WARMUP, None)?;
    for (metric, code, repeats, output) in [
        (Metric::KernelExec, "pass", options.cell_repeats, None),
        (Metric::Bash, BASH_EMPTY, options.shell_repeats, None),
        (Metric::GitStatus, GIT_STATUS, options.shell_repeats, None),
        (
            Metric::Output,
            BASH_OUTPUT,
            options.shell_repeats,
            Some(OUTPUT_BYTES),
        ),
    ] {
        *current = metric;
        let mean = batch(kernel, code, repeats, output)?;
        report.values.push((metric, Ok(mean.as_secs_f64())));
    }

    *current = Metric::Mixed;
    let took = mixed(kernel, MIXED_CELLS, GIT_STATUS)?;
    report.values.push((Metric::Mixed, Ok(took.as_secs_f64())));

    *current = Metric::Interrupt;
    let latency = interrupt_latency(kernel, INTERRUPT_AWAIT)?;
    report
        .values
        .push((Metric::Interrupt, Ok(latency.as_secs_f64())));

    *current = Metric::LoadedRss;
    report.workload = Some(load_workload(kernel)?);
    measure_memory(Metric::LoadedRss, kernel.pid(), report)?;

    *current = Metric::Snapshot;
    let state = options.state_dir.join("state.pkl");
    let manifest = options.state_dir.join("manifest.json");
    let took = snapshot(kernel, &state, &manifest, &["frame", "payload"])?;
    if let Some(kernel) = slot.take() {
        kernel.close()?;
    }
    report
        .values
        .push((Metric::Snapshot, Ok(took.as_secs_f64())));

    *current = Metric::Restore;
    let kernel = slot.insert(Kernel::spawn(kernel_options(options, "restore"))?);
    kernel.ready()?;
    let took = restore(kernel, &state, &["frame", "payload"])?;
    let verify = verify_workload_cell();
    let reply = kernel.execute(&verify)?;
    require_ok(&verify, &reply)?;
    report
        .values
        .push((Metric::Restore, Ok(took.as_secs_f64())));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe error in the workspace's style: its message names the step, its cause
    /// is its source.
    #[derive(Debug, thiserror::Error)]
    #[error("reading the kernel's processes")]
    struct Snapshot(#[source] std::io::Error);

    #[test]
    fn a_memory_failure_says_every_cause_of_the_probe_error_once() {
        let error = MeasureError::Memory {
            source: Box::new(Snapshot(std::io::Error::other("permission denied"))),
        };
        assert_eq!(
            error_chain(&error),
            "memory measurement failed: reading the kernel's processes: permission denied"
        );
        let source = std::error::Error::source(&error).expect("the probe's error");
        assert!(source.downcast_ref::<Snapshot>().is_some(), "{source:?}");
    }

    #[test]
    fn the_first_error_names_its_metric() {
        let report = RuntimeReport {
            values: vec![
                (Metric::KernelStart, Ok(0.5)),
                (
                    Metric::KernelRss,
                    Err(MeasureError::UnknownWorkload {
                        stdout: "nothing".to_owned(),
                    }),
                ),
            ],
            ..RuntimeReport::default()
        };
        assert_eq!(report.value(Metric::KernelStart), Some(0.5));
        assert_eq!(report.value(Metric::KernelRss), None);
        assert_eq!(
            report.first_error().unwrap(),
            "kernel_rss: workload cell did not report pandas or lists: \"nothing\""
        );
    }
}
