//! A case's device work on one clock, as recorded for people to look at: one lane per stream, kernels and copies as
//! bars, gate openings and host functions as marks. Built by [`crate::readings::timeline`], drawn by
//! [`crate::report::timeline`].

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// `events` (cudaEventRecord brackets read against an origin event) or `stamps` (kernels' %globaltimer).
    pub clock: String,
    /// The lanes, top to bottom: one per stream, in the order the script first uses them.
    pub lanes: Vec<String>,
    pub bars: Vec<Bar>,
    pub marks: Vec<Mark>,
    /// Nanoseconds from the earliest start to the latest end; bar and mark times are relative to that start.
    pub span_ns: u64,
    pub notes: Vec<String>,
}

/// One operation's device interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    pub lane: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    pub kind: BarKind,
    /// The operation's label, or `line N` without one.
    pub label: String,
    /// The operation as written.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BarKind {
    Kernel,
    /// A gate kernel: its stream held until the gate opened.
    Gate,
    CopyH2d,
    CopyD2h,
    CopyD2d,
    CopyH2h,
    Memset,
    Graph,
}

impl BarKind {
    /// The word a picture's legend and CSS class use.
    pub fn word(self) -> &'static str {
        match self {
            BarKind::Kernel => "kernel",
            BarKind::Gate => "gate",
            BarKind::CopyH2d => "copy-h2d",
            BarKind::CopyD2h => "copy-d2h",
            BarKind::CopyD2d => "copy-d2d",
            BarKind::CopyH2h => "copy-h2h",
            BarKind::Memset => "memset",
            BarKind::Graph => "graph",
        }
    }

    pub const ALL: [BarKind; 8] = [
        BarKind::Kernel,
        BarKind::Gate,
        BarKind::CopyH2d,
        BarKind::CopyD2h,
        BarKind::CopyD2d,
        BarKind::CopyH2h,
        BarKind::Memset,
        BarKind::Graph,
    ];
}

/// A moment on a lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub lane: usize,
    pub at_ns: u64,
    pub kind: MarkKind,
    pub label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkKind {
    /// The host opened a gate: the end of its gate kernel.
    GateOpen,
    /// A host function or stream callback ran (host clock, aligned through a gate).
    HostCall,
}
