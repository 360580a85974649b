//! A series' figure from its points: the threshold they bracket, and notes on what does not fit.

use crate::record::figures::{Point, SeriesFigure};
use crate::report::figures::size_text;

use super::staging::Series;

/// The largest size that returned early and the smallest larger size that waited, when both exist.
pub(super) fn bracket(points: &[Point]) -> Option<(u64, u64)> {
    let early = largest_early(points)?;
    Some((early, smallest_waiting(points, Some(early))?))
}

fn largest_early(points: &[Point]) -> Option<u64> {
    points.iter().filter(|p| p.returned_early == Some(true)).map(|p| p.bytes).max()
}

/// The smallest size that waited, above `above` if given.
fn smallest_waiting(points: &[Point], above: Option<u64>) -> Option<u64> {
    points
        .iter()
        .filter(|p| p.returned_early == Some(false) && above.is_none_or(|a| p.bytes > a))
        .map(|p| p.bytes)
        .min()
}

// The constructor lives with the computation it runs, apart from the plain record in `record/figures.rs`.
impl SeriesFigure {
    pub fn new(series: Series, points: Vec<Point>, mut notes: Vec<String>) -> Self {
        let largest_early = largest_early(&points);
        let smallest_waiting = smallest_waiting(&points, largest_early);
        if let Some(early) = largest_early {
            let mut below: Vec<u64> =
                points.iter().filter(|p| p.returned_early == Some(false) && p.bytes < early).map(|p| p.bytes).collect();
            below.sort_unstable();
            if !below.is_empty() {
                let sizes: Vec<String> = below.into_iter().map(size_text).collect();
                notes.push(format!(
                    "not monotone in size: waited at {} although {} returned early",
                    sizes.join(", "),
                    size_text(early)
                ));
            }
        }
        for p in points.iter().filter(|p| p.returned_early.is_none()) {
            // One line per note (a crash message carries the worker's stderr), so that summaries stay readable.
            let problem = p.problem.as_deref().unwrap_or("?").lines().collect::<Vec<_>>().join(" / ");
            notes.push(format!("undecided at {}: {problem}", size_text(p.bytes)));
        }
        SeriesFigure {
            id: series.id(),
            call: series.call().to_owned(),
            largest_early_bytes: largest_early,
            smallest_waiting_bytes: smallest_waiting,
            points,
            notes,
        }
    }
}
