//! What a suite run did besides its results ([`SuiteStats`], each device's [`LaneTimes`]), and the one thing
//! that runs on several devices' lanes at once may disturb ([`Disturbance`]). Its own module so that the suite and
//! the device runners both use it without importing each other.

use super::protocol::Ready;

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

/// One device's timeline in a run, in seconds from its start: when its own-process cases were done, when its batch
/// worker was ready, and when its last case ended.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LaneTimes {
    pub device: i32,
    pub cases: usize,
    pub own_cases: usize,
    pub own_phase_end_s: f64,
    /// Time the own-process cases waited for their processes' contexts (not hidden by the warm pipeline).
    pub own_ready_wait_s: f64,
    pub batch_start_s: f64,
    pub end_s: f64,
}
