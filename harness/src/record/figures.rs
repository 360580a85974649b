//! Figures as recorded: what a driver does where the documentation promises nothing, measured by
//! [`crate::figures`] and never asserted.

use serde::{Deserialize, Serialize};

/// Every figure of a run. Serialised into the report as `figures`; a report without it (an older one, or a run with
/// `--no-figures`) simply has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The pageable staging threshold: one entry per kind of copy measured.
    #[serde(default)]
    pub staging: Vec<SeriesFigure>,
}

/// The smallest and largest sizes of the staging sweep's powers of two: a figure's text tells "at every size" by
/// them.
pub const SMALLEST: u64 = 4 << 10;
pub const LARGEST: u64 = 64 << 20;

/// One measured size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub bytes: u64,
    /// True: the call returned before the gate opened; false: after. `None`: undecided (`problem` says why).
    pub returned_early: Option<bool>,
    /// The copy's return code; `None` when it did not run.
    pub code: Option<String>,
    /// How long the call took (host ns).
    pub call_ns: Option<u64>,
    /// When the gate opened, host ns after the call started: the margin an early return had.
    pub gate_open_ns: Option<i64>,
    /// Why the point is undecided: the verdict and its messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl Point {
    /// A point that was not measured, or whose case could not run.
    pub fn undecided(bytes: u64, problem: String) -> Self {
        Point { bytes, returned_early: None, code: None, call_ns: None, gate_open_ns: None, problem: Some(problem) }
    }
}

/// The figure of one series: the threshold and the points it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesFigure {
    /// `figures/staging/h2d-async`.
    pub id: String,
    /// The call measured, in words.
    pub call: String,
    /// The largest size at which the call returned before the gate opened.
    pub largest_early_bytes: Option<u64>,
    /// The smallest size above that (or at all, when none returned early) at which the call waited for the gate.
    pub smallest_waiting_bytes: Option<u64>,
    /// Every point, in the order measured (the powers of two, then the bisection).
    pub points: Vec<Point>,
    /// What a reader should know: a series not measured and why, undecided points, sizes that break monotonicity.
    #[serde(default)]
    pub notes: Vec<String>,
}
