//! Peak tracking: a background thread that records a family's totals every N ms.
//!
//! A sampler may be told to keep at most so many points ([`SamplerOptions::max_points`]):
//! when the series reaches that many it keeps the larger-RSS point of each pair and
//! samples half as often from then on. A soak of an hour then costs what its first
//! minutes cost, in memory (the series stays bounded) and in CPU (each sample walks
//! `/proc` and reads every family process's `smaps_rollup`, which the kernel answers
//! by walking the process's page tables), while the peaks stay exact: they are taken
//! from every sample, before any is thinned out.
//!
//! A caller that walks the same family itself (a session reads its memory after every
//! turn) hands that snapshot to the sampler ([`Sampler::offer`]): it becomes a point of
//! the series, and the sampler's own next walk waits a whole interval from it, so a walk
//! is never made twice for one moment.

use crate::snapshot_linux::{ProcRoot, Selector, Snapshot, SnapshotError};
use serde::Serialize;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What to sample and how often.
#[derive(Debug, Clone)]
pub struct SamplerOptions {
    /// The family.
    pub selector: Selector,
    /// Time between the starts of two samples. A snapshot that takes longer
    /// than this delays the next one; nothing queues up.
    pub interval: Duration,
    /// Pids left out of every total (for example the measuring process itself).
    pub exclude_pids: Vec<u32>,
    /// The most points the series keeps (at least 2); `None`: every sample, however
    /// long the sampler runs. Reaching it halves the series and doubles the interval.
    pub max_points: Option<usize>,
}

impl SamplerOptions {
    /// Samples `selector` every `interval`, excluding nothing.
    pub fn new(selector: Selector, interval: Duration) -> SamplerOptions {
        SamplerOptions {
            selector,
            interval,
            exclude_pids: Vec::new(),
            max_points: None,
        }
    }
}

/// The family's totals at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SamplePoint {
    /// Since the sampler started.
    pub elapsed: Duration,
    /// Live processes in the family.
    pub process_count: u32,
    /// Sum of RSS in bytes.
    pub rss_bytes: u64,
    /// Sum of PSS in bytes, `None` if any was unreadable.
    pub pss_bytes: Option<u64>,
    /// Sum of USS in bytes, `None` if any was unreadable.
    pub uss_bytes: Option<u64>,
    /// Sum of swap in bytes, `None` if any was unreadable.
    pub swap_bytes: Option<u64>,
    /// Sum of CPU seconds of the processes alive at this moment.
    pub cpu_seconds: f64,
}

impl SamplePoint {
    /// The totals of `snapshot`, taken `elapsed` after the sampler started.
    fn of(snapshot: &Snapshot, elapsed: Duration) -> SamplePoint {
        SamplePoint {
            elapsed,
            process_count: u32::try_from(snapshot.processes.len()).unwrap_or(u32::MAX),
            rss_bytes: snapshot.total_rss_bytes(),
            pss_bytes: snapshot.total_pss_bytes(),
            uss_bytes: snapshot.total_uss_bytes(),
            swap_bytes: snapshot.total_swap_bytes(),
            cpu_seconds: snapshot.total_cpu_seconds(),
        }
    }
}

/// The time series and its peaks.
#[derive(Debug, Serialize)]
pub struct SamplerReport {
    /// Every successful sample, oldest first.
    pub points: Vec<SamplePoint>,
    /// Highest RSS total seen, 0 if no sample succeeded.
    pub peak_rss_bytes: u64,
    /// Highest PSS total among samples where PSS was known.
    pub peak_pss_bytes: Option<u64>,
    /// Highest USS total among samples where USS was known.
    pub peak_uss_bytes: Option<u64>,
    /// Most processes alive at once.
    pub peak_process_count: u32,
    /// Samples that failed (the root gone, `/proc` unreadable).
    pub failed_samples: u32,
    /// The last failure, if any.
    #[serde(skip)]
    pub last_error: Option<SnapshotError>,
}

impl SamplerReport {
    fn new() -> SamplerReport {
        SamplerReport {
            points: Vec::new(),
            peak_rss_bytes: 0,
            peak_pss_bytes: None,
            peak_uss_bytes: None,
            peak_process_count: 0,
            failed_samples: 0,
            last_error: None,
        }
    }

    fn push(&mut self, point: SamplePoint) {
        self.peak_rss_bytes = self.peak_rss_bytes.max(point.rss_bytes);
        self.peak_pss_bytes = self.peak_pss_bytes.max(point.pss_bytes);
        self.peak_uss_bytes = self.peak_uss_bytes.max(point.uss_bytes);
        self.peak_process_count = self.peak_process_count.max(point.process_count);
        // An offered point timed just before a walk of the sampler's own that was kept
        // first goes before it: the series stays in time order.
        let at = self
            .points
            .iter()
            .rposition(|kept| kept.elapsed <= point.elapsed)
            .map_or(0, |before| before + 1);
        self.points.insert(at, point);
    }

    /// Keeps the larger-RSS point of each pair of the series (the first and the last
    /// point always), halving it: a memory spike drawn from the series survives.
    fn thin(&mut self) {
        let Some(last) = self.points.pop() else {
            return;
        };
        let first = self.points.first().cloned();
        let mut kept: Vec<SamplePoint> = Vec::with_capacity(self.points.len() / 2 + 2);
        kept.extend(first);
        for pair in self.points.get(1..).unwrap_or_default().chunks(2) {
            if let Some(larger) = pair.iter().max_by_key(|point| point.rss_bytes) {
                kept.push(larger.clone());
            }
        }
        kept.push(last);
        self.points = kept;
    }
}

/// What a sampler's thread is told.
enum Command {
    /// Take a last sample and end.
    Stop,
    /// A point the caller measured: keep it as a sample.
    Point(SamplePoint),
}

/// A running sampler; [`Sampler::stop`] ends it and returns what it saw.
#[derive(Debug)]
pub struct Sampler {
    commands: mpsc::Sender<Command>,
    started: Instant,
    handle: JoinHandle<SamplerReport>,
}

impl Sampler {
    /// Starts sampling on a background thread; the first sample is taken at once.
    pub fn start(options: SamplerOptions) -> Sampler {
        // One thread: a background sample has no moment to meet, and reading on worker
        // threads spawns them for every sample (measured: 2.9 ms of CPU a sample of a
        // trial user's family on one thread, 3.3 ms on two, on the 2-core VM). The uid
        // cache spares every sample a `status` read of every process on the host: without
        // it the sampler was a fifth of a session phase's CPU in `perf`.
        Sampler::start_in(ProcRoot::live().with_threads(1).with_uid_cache(), options)
    }

    /// Starts sampling a given proc root (a fixture tree in tests).
    pub fn start_in(root: ProcRoot, options: SamplerOptions) -> Sampler {
        let (commands, received) = mpsc::channel::<Command>();
        let started = Instant::now();
        let handle = std::thread::spawn(move || {
            let mut report = SamplerReport::new();
            let mut interval = options.interval;
            let max_points = options.max_points.map(|most| most.max(2));
            let mut sampled = Instant::now();
            take(&root, &options, started, &mut report);
            loop {
                if max_points.is_some_and(|most| report.points.len() >= most) {
                    report.thin();
                    interval = interval.saturating_mul(2);
                }
                let wait = interval.saturating_sub(sampled.elapsed());
                match received.recv_timeout(wait) {
                    Err(RecvTimeoutError::Timeout) => {
                        sampled = Instant::now();
                        take(&root, &options, started, &mut report);
                    }
                    // The caller's walk stands for this one: the next is an interval on.
                    Ok(Command::Point(point)) => {
                        sampled = Instant::now();
                        report.push(point);
                    }
                    // Stopped (or the handle dropped): one last sample, so a
                    // short phase still has its end state.
                    Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => {
                        take(&root, &options, started, &mut report);
                        return report;
                    }
                }
            }
        });
        Sampler {
            commands,
            started,
            handle,
        }
    }

    /// Keeps `snapshot`, a walk of the sampled family (its excluded pids left out) that
    /// the caller just made, as a sample taken now; the sampler's own next walk is then
    /// an interval later.
    pub fn offer(&self, snapshot: &Snapshot) {
        let point = SamplePoint::of(snapshot, self.started.elapsed());
        // A sampler whose thread ended has nothing to keep it in.
        let _ = self.commands.send(Command::Point(point));
    }

    /// Stops the sampler after one final sample and returns the series and peaks.
    pub fn stop(self) -> SamplerReport {
        let _ = self.commands.send(Command::Stop);
        match self.handle.join() {
            Ok(report) => report,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

fn take(root: &ProcRoot, options: &SamplerOptions, started: Instant, report: &mut SamplerReport) {
    let elapsed = started.elapsed();
    match root.snapshot(&options.selector) {
        Ok(snapshot) => {
            let snapshot = snapshot.without(&options.exclude_pids);
            report.push(SamplePoint::of(&snapshot, elapsed));
        }
        Err(error) => {
            report.failed_samples += 1;
            report.last_error = Some(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot_linux::ProcessSample;

    #[test]
    fn peaks_are_the_maxima_of_the_series() {
        let mut report = SamplerReport::new();
        let point = |rss: u64, pss: Option<u64>, count: u32| SamplePoint {
            elapsed: Duration::ZERO,
            process_count: count,
            rss_bytes: rss,
            pss_bytes: pss,
            uss_bytes: pss,
            swap_bytes: Some(0),
            cpu_seconds: 0.0,
        };
        report.push(point(100, Some(50), 1));
        report.push(point(300, None, 3));
        report.push(point(200, Some(80), 2));
        assert_eq!(report.peak_rss_bytes, 300);
        assert_eq!(report.peak_pss_bytes, Some(80));
        assert_eq!(report.peak_process_count, 3);
        assert_eq!(report.points.len(), 3);
    }

    #[test]
    fn thinning_halves_the_series_and_keeps_its_ends_and_spikes() {
        let mut report = SamplerReport::new();
        let rss = [10, 11, 12, 90, 13, 14, 15, 16, 17, 20];
        for (at, &bytes) in rss.iter().enumerate() {
            report.push(SamplePoint {
                elapsed: Duration::from_millis(at as u64),
                process_count: 1,
                rss_bytes: bytes,
                pss_bytes: None,
                uss_bytes: None,
                swap_bytes: None,
                cpu_seconds: 0.0,
            });
        }
        report.thin();
        let kept: Vec<u64> = report.points.iter().map(|p| p.rss_bytes).collect();
        // First, the larger of (11, 12), (90, 13), (14, 15), (16, 17), last.
        assert_eq!(kept, [10, 12, 90, 15, 17, 20]);
        assert_eq!(report.peak_rss_bytes, 90);
    }

    #[test]
    fn a_bounded_sampler_keeps_at_most_its_points() {
        let sampler = Sampler::start(SamplerOptions {
            max_points: Some(4),
            ..SamplerOptions::new(Selector::Tree(std::process::id()), Duration::from_millis(2))
        });
        std::thread::sleep(Duration::from_millis(100));
        let report = sampler.stop();
        // Unbounded, 100 ms at 2 ms would be about 50 samples; bounded, the series is
        // thinned below 4 every time it reaches 4 (the final sample may make it 4).
        assert!(report.points.len() <= 4, "{} points", report.points.len());
        assert!(report.points.len() >= 2, "{} points", report.points.len());
        assert!(report.peak_rss_bytes > 0);
    }

    #[test]
    fn an_offered_walk_is_a_sample_and_postpones_the_next_own_walk() {
        let interval = Duration::from_millis(250);
        let sampler = Sampler::start(SamplerOptions::new(
            Selector::Tree(std::process::id()),
            interval,
        ));
        let offered = Snapshot {
            processes: vec![ProcessSample {
                pid: 1,
                ppid: 0,
                session: 1,
                name: "offered".into(),
                cmdline: String::new(),
                rss_bytes: 7,
                pss_bytes: Some(5),
                pss_anon_bytes: None,
                pss_file_bytes: None,
                pss_shmem_bytes: None,
                uss_bytes: Some(3),
                swap_bytes: Some(0),
                swap_pss_bytes: None,
                cpu_seconds: 0.5,
                threads: 1,
            }],
        };
        // An offer every 20 ms for 300 ms: each comes before the interval since the last
        // sample is over, so the sampler walks only at its start and at its stop.
        let until = Instant::now() + Duration::from_millis(300);
        let mut offers = 0;
        while Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
            sampler.offer(&offered);
            offers += 1;
        }
        let report = sampler.stop();
        let own = report.points.iter().filter(|p| p.rss_bytes != 7).count();
        let kept = report.points.iter().filter(|p| p.rss_bytes == 7).count();
        assert_eq!(kept, offers, "{:?}", report.points);
        assert_eq!(own, 2, "{:?}", report.points);
        assert!(
            report
                .points
                .windows(2)
                .all(|w| w[0].elapsed <= w[1].elapsed)
        );
        let point = report.points.iter().find(|p| p.rss_bytes == 7).unwrap();
        assert_eq!((point.pss_bytes, point.process_count), (Some(5), 1));
    }

    #[test]
    fn sampler_sees_its_own_process() {
        let sampler = Sampler::start(SamplerOptions::new(
            Selector::Tree(std::process::id()),
            Duration::from_millis(5),
        ));
        std::thread::sleep(Duration::from_millis(30));
        let report = sampler.stop();
        assert!(report.points.len() >= 2, "{} points", report.points.len());
        assert_eq!(report.failed_samples, 0);
        assert!(report.peak_rss_bytes > 0);
        assert!(
            report
                .points
                .windows(2)
                .all(|w| w[0].elapsed <= w[1].elapsed)
        );
    }

    #[test]
    fn missing_family_counts_failures() {
        let root = tempfile::tempdir().unwrap();
        let sampler = Sampler::start_in(
            ProcRoot::new(root.path()),
            SamplerOptions::new(Selector::Tree(4242), Duration::from_millis(1)),
        );
        let report = sampler.stop();
        assert!(report.points.is_empty());
        assert!(report.failed_samples >= 2);
        assert!(matches!(
            report.last_error,
            Some(SnapshotError::NoSuchProcess { pid: 4242 })
        ));
    }
}
