//! The figures as text: the console lines of `run` and `measure`, and the Markdown section of a report's summary.

use crate::record::figures::{Figures, Point, SeriesFigure, LARGEST, SMALLEST};
use std::fmt::Write as _;

impl Figures {
    /// For the console summary of `run` and for `measure`.
    pub fn console(&self) -> String {
        staging_console(&self.staging)
    }

    /// A Markdown section for the report's summary.
    pub fn markdown(&self) -> String {
        let mut out = String::from("\n## Figures (measured, not asserted)\n");
        out.push_str(&staging_markdown(&self.staging));
        out
    }
}

impl SeriesFigure {
    /// The threshold in words, e.g. `64 KiB (waits at 72 KiB)`.
    pub fn figure(&self) -> String {
        match (self.largest_early_bytes, self.smallest_waiting_bytes) {
            (Some(e), Some(w)) => format!("{} (waits at {})", size_text(e), size_text(w)),
            (Some(e), None) if e >= LARGEST => format!("≥ {} (returned early at every size)", size_text(e)),
            (Some(e), None) => format!("≥ {} (no larger size decided)", size_text(e)),
            (None, Some(w)) if w <= SMALLEST => format!("none (waited at every size from {})", size_text(w)),
            (None, Some(w)) => format!("< {} (no smaller size decided)", size_text(w)),
            (None, None) => "not measured".to_owned(),
        }
    }

    /// The points by size, as runs of equal outcomes: `early 4 KiB … 96 KiB (6), waited 104 KiB … 64 MiB (12)`.
    pub fn points_text(&self) -> String {
        let mut sorted: Vec<&Point> = self.points.iter().collect();
        sorted.sort_by_key(|p| p.bytes);
        let outcome = |p: &Point| match p.returned_early {
            Some(true) => "early",
            Some(false) => "waited",
            None => "undecided",
        };
        let mut runs: Vec<(&str, u64, u64, usize)> = Vec::new();
        for p in sorted {
            match runs.last_mut() {
                Some((o, _, last, n)) if *o == outcome(p) => (*last, *n) = (p.bytes, *n + 1),
                _ => runs.push((outcome(p), p.bytes, p.bytes, 1)),
            }
        }
        let parts: Vec<String> = runs
            .into_iter()
            .map(|(o, first, last, n)| match n {
                1 => format!("{o} {}", size_text(first)),
                _ => format!("{o} {} … {} ({n})", size_text(first), size_text(last)),
            })
            .collect();
        parts.join(", ")
    }

    /// The slowest early return and the earliest gate opening among early points: how much margin the oracle had.
    pub fn margin_text(&self) -> Option<String> {
        let early = || self.points.iter().filter(|p| p.returned_early == Some(true));
        let slowest = early().filter_map(|p| p.call_ns).max()?;
        let gate = early().filter_map(|p| p.gate_open_ns).min()?;
        Some(format!(
            "early calls took at most {:.2} ms; their gates opened at {:.0} ms or later",
            slowest as f64 / 1e6,
            gate as f64 / 1e6
        ))
    }
}

/// The console lines for `run` and `measure staging`.
pub fn staging_console(figures: &[SeriesFigure]) -> String {
    if figures.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "pageable staging threshold: the largest size at which the call returned before earlier gated work on its \
         stream completed (measured, not asserted)\n",
    );
    for f in figures {
        let _ = writeln!(out, "  {:<58} {}", f.call, f.figure());
        let _ = writeln!(out, "  {:<58}   {}", "", f.points_text());
        for note in &f.notes {
            let _ = writeln!(out, "  {:<58}   note: {note}", "");
        }
    }
    out
}

/// The Markdown section for the report's summary.
pub fn staging_markdown(figures: &[SeriesFigure]) -> String {
    if figures.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n### Pageable staging threshold\n\nThe largest size at which the call returned before earlier gated work \
         on its stream completed (decided by the blocking oracle; powers of two from 4 KiB to 64 MiB, bisected to \
         1/8 step where the behaviour changes).\n\n| series | call | threshold | points |\n|---|---|---|---|\n",
    );
    for f in figures {
        let series = f.id.rsplit('/').next().unwrap_or(&f.id);
        let _ = writeln!(out, "| `{series}` | {} | {} | {} |", f.call, f.figure(), f.points_text());
    }
    for f in figures {
        let margin = f.margin_text();
        if f.notes.is_empty() && margin.is_none() {
            continue;
        }
        let _ = writeln!(out, "\n`{}`:", f.id);
        for line in margin.iter().chain(&f.notes) {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}

/// `65536` as `64 KiB`, `67108864` as `64 MiB`; a size that is not a whole number of KiB stays in bytes.
pub fn size_text(bytes: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes % KIB == 0 {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} B")
    }
}
