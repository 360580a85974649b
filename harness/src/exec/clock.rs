//! The one host clock of a case: monotonic nanoseconds since the case started. Every host time in the
//! observations (operation start/end, gate opens, host calls) comes from here, so they compare with each other.
//!
//! The clock is Linux's CLOCK_MONOTONIC (what `Instant` reads there), which every process of the machine shares: a
//! case's second process (`exec::peer`) is given the start as a raw CLOCK_MONOTONIC value and keeps the very same
//! clock, with no offset to estimate. (A ping-measured offset was off by milliseconds when the host's CPUs were
//! busy: a peer's operation then seemed to end before the gate it waited for had opened.)

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct CaseClock {
    start: Instant,
    /// `start` as CLOCK_MONOTONIC nanoseconds, for another process of the case.
    start_monotonic_ns: u64,
}

/// CLOCK_MONOTONIC now, in nanoseconds.
fn monotonic_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

impl CaseClock {
    pub fn start() -> Self {
        let start = Instant::now();
        CaseClock { start, start_monotonic_ns: monotonic_ns() }
    }

    /// The clock of a case that started at `start_monotonic_ns` (CLOCK_MONOTONIC) in another process.
    pub fn started_at(start_monotonic_ns: u64) -> Self {
        let (now, now_ns) = (Instant::now(), monotonic_ns());
        let since = Duration::from_nanos(now_ns.saturating_sub(start_monotonic_ns));
        CaseClock { start: now.checked_sub(since).unwrap_or(now), start_monotonic_ns }
    }

    pub fn start_monotonic_ns(&self) -> u64 {
        self.start_monotonic_ns
    }

    pub fn now_ns(&self) -> u64 {
        self.ns_at(Instant::now())
    }

    pub fn ns_at(&self, instant: Instant) -> u64 {
        u64::try_from(instant.saturating_duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The instant `after` from the case's start.
    pub fn instant_after_start(&self, after: Duration) -> Instant {
        self.start + after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_rebuilt_from_its_monotonic_start_reads_the_same_time() {
        let clock = CaseClock::start();
        std::thread::sleep(Duration::from_millis(5));
        let again = CaseClock::started_at(clock.start_monotonic_ns());
        let (a, b) = (clock.now_ns(), again.now_ns());
        assert!(a >= 5_000_000, "{a}");
        // Read one after the other: within a millisecond of each other, never the 5 ms apart of two fresh clocks.
        assert!(a.abs_diff(b) < 1_000_000, "{a} vs {b}");
    }
}
