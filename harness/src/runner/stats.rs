//! What a suite run did besides its results ([`SuiteStats`], each device's [`LaneTimes`]), and the one thing
//! that runs on several devices' lanes at once may disturb ([`Disturbance`]). Its own module so that the suite and
//! the device runners both use it without importing each other.

use super::protocol::Ready;
use crate::record::RunPhases;
use std::time::{Duration, Instant};

/// What a suite run did, besides its results.
#[derive(Debug, Clone, Default)]
pub struct SuiteStats {
    /// Child processes started.
    pub processes_started: u64,
    /// Runs beyond one per case.
    pub extra_runs: u64,
    /// Where each device's time went (the benchmark prints it).
    pub lanes: Vec<LaneTimes>,
    /// What the warm processes that were waited for said about their start.
    pub ready: Vec<Ready>,
    /// Those processes' starts, from spawn to ready, on every lane ([`starting_time`]).
    pub starts: Vec<(Instant, Instant)>,
    /// Cases whose device-memory check was skipped because another process of the run could have allocated on
    /// their device meanwhile.
    pub memory_checks_skipped: u64,
}

/// Work of the run that may allocate memory on every device (several-device cases): while it goes on, a worker's
/// device-memory check on any device means nothing.
#[derive(Debug, Default)]
pub struct Disturbance {
    active: std::sync::atomic::AtomicUsize,
    epoch: std::sync::atomic::AtomicU64,
}

impl Disturbance {
    pub(super) fn begin(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.active.fetch_add(1, SeqCst);
        self.epoch.fetch_add(1, SeqCst);
    }

    pub(super) fn end(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.epoch.fetch_add(1, SeqCst);
        self.active.fetch_sub(1, SeqCst);
    }

    /// (active, epoch): two equal snapshots with nothing active mean nothing disturbed the devices in between.
    pub(super) fn snapshot(&self) -> (usize, u64) {
        use std::sync::atomic::Ordering::SeqCst;
        (self.active.load(SeqCst), self.epoch.load(SeqCst))
    }
}

/// One device's timeline in a run, in seconds from its start: where its time went (the benchmark prints it, and
/// names the lane that ended last: the run's critical path).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LaneTimes {
    pub device: i32,
    pub cases: usize,
    /// Cases in processes of their own, and those of the several-device block.
    pub own_cases: usize,
    /// When its last own-process (or several-device) case ended (0 when it ran none).
    pub own_phase_end_s: f64,
    /// Time it waited for processes started ahead to have their contexts, with no other case to run meanwhile.
    pub own_ready_wait_s: f64,
    /// When its first batch case began (its batch worker ready).
    pub batch_start_s: f64,
    pub end_s: f64,
    /// Time in batch cases.
    pub batch_s: f64,
    /// Time in own-process cases (their processes started ahead).
    pub own_s: f64,
    /// Of `own_s`, the cases that fault their context on purpose: mostly the driver's recovery, during which the
    /// lane starts no process ([`super::schedule::Need::poisons`]).
    pub faulting_s: f64,
    /// Time in cases that measure.
    pub measuring_s: f64,
    /// Time in the figures.
    pub figures_s: f64,
    /// Time in the several-device block (its cases, and ending its worker).
    pub several_s: f64,
    /// Time waiting for another lane (a measurement or the several-device block to end) or for the last cases.
    pub other_wait_s: f64,
}

impl SuiteStats {
    /// Where the run's time went, for its report: the critical lane's phases, the starting time, and the time of
    /// the cases the schedule runs beside nothing else, summed over the lanes.
    pub fn phases(&self) -> Option<RunPhases> {
        critical_lane(&self.lanes).map(|l| RunPhases {
            own_phase_end_s: l.own_phase_end_s,
            own_ready_wait_s: l.own_ready_wait_s,
            batch_start_s: l.batch_start_s,
            cases_end_s: l.end_s,
            figures_s: None,
            starting_s: Some(starting_time(&self.starts).as_secs_f64()),
            faulting_s: Some(self.lanes.iter().map(|l| l.faulting_s).sum()),
            measuring_s: Some(self.lanes.iter().map(|l| l.measuring_s).sum()),
        })
    }
}

impl LaneTimes {
    /// Where this lane's time went, in words: `batch 12.1 s (301 cases), own-process 4.2 s, ...`.
    pub fn breakdown(&self) -> String {
        let parts = [
            ("batch", self.batch_s),
            ("own-process", self.own_s),
            ("measuring", self.measuring_s),
            ("figures", self.figures_s),
            ("several-device", self.several_s),
            ("waiting for contexts", self.own_ready_wait_s),
            ("waiting for other lanes", self.other_wait_s),
        ];
        let accounted: f64 = parts.iter().map(|(_, s)| s).sum();
        let mut words: Vec<String> = parts
            .iter()
            .filter(|(_, s)| *s >= 0.005)
            .map(|&(what, s)| match what {
                "own-process" if self.faulting_s >= 0.005 => {
                    format!("{what} {s:.2} s ({:.2} s of it faulting their context)", self.faulting_s)
                }
                _ => format!("{what} {s:.2} s"),
            })
            .collect();
        words.push(format!("start and protocol {:.2} s", (self.end_s - accounted).max(0.0)));
        words.join(", ")
    }
}

/// The lane that ended last (the run's critical path), if any.
pub fn critical_lane(lanes: &[LaneTimes]) -> Option<&LaneTimes> {
    lanes.iter().max_by(|a, b| a.end_s.total_cmp(&b.end_s))
}

/// How long at least one of `starts` (a process's spawn to its ready line) was going on: the union of the intervals.
/// The driver makes one process's context at a time for the whole host, whatever its GPU (probe 12,
/// results/2026-11-28_node-time-4), so a run whose starting time is close to its wall was bound by its process
/// count, not by its schedule or its cases.
pub fn starting_time(starts: &[(Instant, Instant)]) -> Duration {
    let Some(origin) = starts.iter().map(|(begin, _)| *begin).min() else { return Duration::ZERO };
    let seconds = |t: Instant| t.duration_since(origin).as_secs_f64();
    let mut sorted: Vec<(f64, f64)> = starts.iter().map(|&(begin, end)| (seconds(begin), seconds(end))).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    Duration::from_secs_f64(crate::readings::measure::union_length(&sorted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starting_time_is_the_union_of_the_starts() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert_eq!(starting_time(&[]), Duration::ZERO);
        // Overlapping, nested, touching and apart, in any order; an empty interval adds nothing.
        let starts = [
            (at(100), at(300)),
            (at(0), at(150)),
            (at(120), at(130)),
            (at(300), at(400)),
            (at(500), at(550)),
            (at(600), at(600)),
        ];
        assert_eq!(starting_time(&starts), Duration::from_millis(450));
    }
}
