//! The one host clock of a case: monotonic nanoseconds since the case started. Every host time in the
//! observations (operation start/end, gate opens, host calls) comes from here, so they compare with each other.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct CaseClock {
    start: Instant,
}

impl CaseClock {
    pub fn start() -> Self {
        CaseClock { start: Instant::now() }
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
