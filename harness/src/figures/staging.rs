//! The pageable staging threshold (issue 7 item 6): for each kind of copy between pageable host memory and the
//! device, the largest size at which the call returns before earlier gated work on its stream has completed. The
//! docs say such copies "might be synchronous" and name no size, so the figure is recorded, never asserted.
//!
//! Each point is one generated case (see [`case_text`]): a gate holds the copy's stream, its opening is scheduled
//! just before the copy, and `observe returns-early: cp not-waited-for g | waits: cp waited-for g` lets the ordinary
//! verdict record, by the blocking oracle, whether the call returned before the gate opened. No point is decided by
//! how long anything took. The case also asserts what the docs do promise, that the copy stays in stream order, so
//! a point whose copy misbehaves fails instead of being counted.
//!
//! The sweep ([`sweep`]) measures the powers of two from [`SMALLEST`] to [`LARGEST`], then bisects between the
//! largest size that returned early and the smallest larger size that waited, down to 1/8 of that power-of-two
//! step: more points where the behaviour changes.

use super::parse_case_text;
use super::summary::bracket;
use crate::device::gpu::DeviceInfo;
use crate::device::requirements::unmet_requirement;
use crate::record::figures::{Point, SeriesFigure, LARGEST, SMALLEST};
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use crate::runner::worker::{ChildSpec, Worker};
use crate::runner::HostWaits;
use std::time::Duration;

/// Bisection stops once the bracket is at most 1/8 of the early size (the power-of-two step it started from)...
const RESOLUTION_DIVISOR: u64 = 8;
/// ...or after this many points. Three halvings reach 1/8 of a doubling; the cap matters only when the bracket is
/// wider because a power of two in it was undecided.
const MAX_BISECTION_POINTS: usize = 5;

/// The gate opens this long after it is scheduled (just before the copy), plus [`GATE_DELAY_MS_PER_MIB`]. A call
/// that waits returns after the opening whatever the delay, so the delay only has to come well after the latency of
/// a call that does not wait: such a call at most copies SIZE bytes into a host staging buffer or pins its pages,
/// well under a millisecond per MiB on any host. A short delay keeps the whole sweep to seconds; each point records
/// how long the call took and when the gate opened, so the margin can be read in the report. On an H100 the slowest
/// call that returned early took 0.37 ms (2 MiB, host → device; results/2026-11-27_phases_h100), 27 times less than
/// 10 ms; at 50 ms the gates were 3.7 s of the run's 6 s of figures, on the one-GPU run's critical path.
const GATE_DELAY_BASE_MS: u64 = 10;
/// Keeps the margin at the largest sizes on a slow host (a host copy of at least 1 GiB/s).
const GATE_DELAY_MS_PER_MIB: u64 = 1;

/// Labels and names in the generated case that [`point_of`] reads back.
const COPY_LABEL: &str = "cp";
const GATE: &str = "g";
const RETURNS_EARLY: &str = "returns-early";
const WAITS: &str = "waits";

/// After this many crashes or timeouts in a row the rest of a series is skipped: the device is likely gone, and
/// each further point could cost a whole deadline.
const MAX_CONSECUTIVE_FAILURES: usize = 2;

/// One kind of pageable copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// `cudaMemcpyAsync`, pageable host → device, on a blocking stream.
    H2dAsync,
    /// `cudaMemcpyAsync`, device → pageable host, on a blocking stream.
    D2hAsync,
    /// `cudaMemcpy`, pageable host → device (issued through the legacy stream).
    H2dSync,
    /// `cudaMemcpy`, device → pageable host (issued through the legacy stream).
    D2hSync,
}

impl Series {
    pub const ALL: [Series; 4] = [Series::H2dAsync, Series::D2hAsync, Series::H2dSync, Series::D2hSync];

    pub fn name(self) -> &'static str {
        match self {
            Series::H2dAsync => "h2d-async",
            Series::D2hAsync => "d2h-async",
            Series::H2dSync => "h2d-sync",
            Series::D2hSync => "d2h-sync",
        }
    }

    /// `figures/staging/h2d-async`: what `run FILTER` matches, and the prefix of the generated cases' ids.
    pub fn id(self) -> String {
        format!("figures/staging/{}", self.name())
    }

    /// The call measured, in words.
    pub fn call(self) -> &'static str {
        match self {
            Series::H2dAsync => "cudaMemcpyAsync pageable host → device, blocking stream",
            Series::D2hAsync => "cudaMemcpyAsync device → pageable host, blocking stream",
            Series::H2dSync => "cudaMemcpy pageable host → device (legacy stream)",
            Series::D2hSync => "cudaMemcpy device → pageable host (legacy stream)",
        }
    }

    fn is_async(self) -> bool {
        matches!(self, Series::H2dAsync | Series::D2hAsync)
    }

    fn is_h2d(self) -> bool {
        matches!(self, Series::H2dAsync | Series::H2dSync)
    }
}

/// The series whose id contains `filter` (all without one).
pub fn select(filter: Option<&str>) -> Vec<Series> {
    Series::ALL.into_iter().filter(|s| filter.is_none_or(|f| s.id().contains(f))).collect()
}

/// The gate delay for a copy of `bytes`, in milliseconds.
fn gate_delay_ms(bytes: u64) -> u64 {
    GATE_DELAY_BASE_MS + GATE_DELAY_MS_PER_MIB * bytes.div_ceil(1 << 20)
}

/// The case that measures one point: whether the copy of `bytes` returns before the gate holding its stream opens.
/// The synchronous forms issue their copies through the legacy stream, so their gate is there, as in
/// `cases/async-copy.case`. A fill of the device buffer behind the gate makes the data order-sensitive: a
/// host→device copy of the pageable buffer (9s, written through a device buffer before the gate: buffers start as a
/// pattern, never a value a check expects) must overwrite the 4s, a device→host copy must carry the 7s.
/// `bytes` must be a multiple of 4 (the validator refuses anything else).
pub fn case_text(series: Series, bytes: u64) -> String {
    let (stream, stream_decl, call) = if series.is_async() {
        ("s", "  stream s blocking\n", "cudaMemcpyAsync")
    } else {
        ("legacy", "", "cudaMemcpy")
    };
    let (dst, src, direction, fill, data) = if series.is_h2d() {
        ("d", "h", "from pageable host memory to the device", "4", "d == 9")
    } else {
        ("h", "d", "from the device to pageable host memory", "7", "h == 7")
    };
    let (source_decl, source_ops) = if series.is_h2d() {
        (
            format!("  buffer v device {bytes}\n"),
            "        launch fill v 9 on legacy\n        memcpy h v                    # h = 9s, before the gate\n",
        )
    } else {
        (String::new(), "")
    };
    let copy = if series.is_async() { format!("memcpy-async {dst} {src} on s") } else { format!("memcpy {dst} {src}") };
    let (id, delay) = (series.id(), gate_delay_ms(bytes));
    format!(
        "case {id}/{bytes}
  rule: Recorded, not asserted: whether a {call} of {bytes} bytes {direction} returns before earlier gated work on its stream completes; either way the copy stays in stream order.
  source: CUDA Runtime API 13.0, \"API synchronization behavior\" (pageable copies \"might be synchronous\"; no size is documented); issue 7 item 6
{stream_decl}  buffer h pageable {bytes}
  buffer d device {bytes}
{source_decl}  gate {GATE}

{source_ops}  held: launch gate {GATE} on {stream}
        launch fill d {fill} on {stream}      # behind the gate, before the copy in stream order
        open {GATE} after {delay}ms
  {COPY_LABEL}:   {copy}
        sync {stream}

  observe {RETURNS_EARLY}: {COPY_LABEL} not-waited-for {GATE} | {WAITS}: {COPY_LABEL} waited-for {GATE}
  expect {data}
end
"
    )
}

/// The point a generated case's result shows. Only the verdict decides: a *pass* that observed `returns-early` or
/// `waits`. Anything else (a failed code, data out of order, a gate timeout, a timeout, a crash) leaves the point
/// undecided, since the oracle's answer means nothing for a copy that failed or misbehaved.
pub fn point_of(bytes: u64, result: &CaseResult) -> Point {
    let verdict = &result.verdict;
    let returned_early = match (verdict.kind, verdict.observed.as_deref()) {
        (VerdictKind::Pass, Some(RETURNS_EARLY)) => Some(true),
        (VerdictKind::Pass, Some(WAITS)) => Some(false),
        _ => None,
    };
    let obs = result.observations.as_ref();
    let copy = obs.and_then(|o| o.op(COPY_LABEL)).filter(|r| r.code.is_some());
    let opened = obs.and_then(|o| o.gate(GATE)).and_then(|g| g.opened_ns);
    Point {
        bytes,
        returned_early,
        code: copy.and_then(|r| r.code.clone()),
        call_ns: copy.map(|r| r.end_ns.saturating_sub(r.start_ns)),
        gate_open_ns: copy.zip(opened).map(|(r, t)| t as i64 - r.start_ns as i64),
        problem: returned_early.is_none().then(|| format!("{}: {}", verdict.kind, verdict.messages.join("; "))),
    }
}

/// The sizes of the power-of-two sweep: 4 KiB, 8 KiB, ..., 64 MiB.
pub fn coarse_sizes() -> impl Iterator<Item = u64> {
    std::iter::successors(Some(SMALLEST), |s| Some(s * 2)).take_while(|s| *s <= LARGEST)
}

/// Measures every power of two, then bisects between the largest size that returned early and the smallest larger
/// size that waited. `measure` is the oracle (a generated case on the GPU, or a closure in tests). Points come back
/// in the order they were measured.
pub fn sweep(mut measure: impl FnMut(u64) -> Point) -> Vec<Point> {
    let mut points: Vec<Point> = coarse_sizes().map(&mut measure).collect();
    let Some((mut early, mut waited)) = bracket(&points) else {
        return points;
    };
    let resolution = early / RESOLUTION_DIVISOR;
    for _ in 0..MAX_BISECTION_POINTS {
        // Sizes stay multiples of 4, as the case language requires.
        let mid = (early + (waited - early) / 2) / 4 * 4;
        if waited - early <= resolution || mid <= early {
            break;
        }
        let point = measure(mid);
        let outcome = point.returned_early;
        points.push(point);
        match outcome {
            Some(true) => early = mid,
            Some(false) => waited = mid,
            None => break,
        }
    }
    points
}

/// Measures `series` on `device`, each in its own worker process (so one series' crash or driver state cannot
/// touch the next), each point's case given at most `deadline`. `progress` hears the id of each point before it
/// runs. The processes start as each series begins; [`measure_with`] takes them started ahead.
///
/// Why not one worker for all four: the threshold is the driver's own staging of pageable copies, per context,
/// which the series before would have grown or warmed, so a shared context would measure something else.
pub fn measure(
    series: &[Series],
    device: &DeviceInfo,
    deadline: Duration,
    progress: &mut dyn FnMut(&str),
) -> Vec<SeriesFigure> {
    measure_with(series, device, deadline, progress, Vec::new())
}

/// The process of each series of `series` that can be measured on `device`, started now (each makes its context
/// and loads the probe kernels; [`Worker::poll_ready`] says when it has), in the order of `series`; `None` for one
/// that cannot be (its requirement unmet, no executable), which [`measure_with`] reports. The suite starts them
/// ahead on its measuring lane and begins the figures once every one is ready: then no context is made on the GPU
/// while a point runs (a point's worker would read that as device memory its case kept), and the figures do not
/// wait for four process starts in the host's one queue (on 4 × H200 their 63 points took 9.6 s of a 19.5 s
/// stretch beside three busy lanes: results/2026-11-28_node-time-3).
pub fn start_workers(series: &[Series], device: &DeviceInfo) -> Vec<Option<Worker>> {
    series
        .iter()
        .map(|s| {
            let mut worker = Worker::new(series_spec(*s, device).ok()?);
            worker.start_warm(&[]);
            Some(worker)
        })
        .collect()
}

/// [`measure`], with `workers` from [`start_workers`] for the same `series` (where one is missing, or the list is
/// empty, the series starts its process when it begins, as [`measure`] does).
pub fn measure_with(
    series: &[Series],
    device: &DeviceInfo,
    deadline: Duration,
    progress: &mut dyn FnMut(&str),
    workers: Vec<Option<Worker>>,
) -> Vec<SeriesFigure> {
    let mut workers = workers.into_iter();
    series.iter().map(|s| measure_series(*s, device, deadline, progress, workers.next().flatten())).collect()
}

/// The process a series' points run in: the suite's worker, seeing only its GPU where the host has more (a
/// process that sees every GPU initialises them all). `Err` says why the series cannot be measured on `device`.
fn series_spec(series: Series, device: &DeviceInfo) -> Result<ChildSpec, String> {
    // Every point of a series has the same declarations and operations, so one case decides whether any can run.
    let unmet = match parse_case_text(&case_text(series, SMALLEST)) {
        Ok(case) => unmet_requirement(&case, device),
        Err(diagnostics) => Some(format!("the generated case is invalid: {diagnostics}")),
    };
    if let Some(reason) = unmet {
        return Err(format!("not measured: {reason}"));
    }
    let exe = std::env::current_exe().map_err(|e| format!("not measured: cannot find the current executable: {e}"))?;
    let visible = (device.device_count > 1 && !device.uuid.is_empty()).then(|| device.uuid.clone());
    Ok(ChildSpec {
        exe,
        ordinal: if visible.is_some() { 0 } else { device.ordinal },
        visible,
        mock: None,
        all_devices: false,
        sanitizer: None,
        host_waits: HostWaits::default(),
        uuid: device.uuid.clone(),
    })
}

fn measure_series(
    series: Series,
    device: &DeviceInfo,
    deadline: Duration,
    progress: &mut dyn FnMut(&str),
    started: Option<Worker>,
) -> SeriesFigure {
    // A worker started ahead had its spec made already (`start_workers` starts none it cannot make).
    let mut worker = match started.map_or_else(|| series_spec(series, device).map(Worker::new), Ok) {
        Ok(worker) => worker,
        Err(why) => return SeriesFigure::new(series, Vec::new(), vec![why]),
    };
    // The suite's worker, at the written delays: a point is a case like any other, sent as its text.
    let mut failures_in_a_row = 0;
    let points = sweep(|bytes| {
        let text = case_text(series, bytes);
        if failures_in_a_row >= MAX_CONSECUTIVE_FAILURES {
            return Point::undecided(bytes, "skipped: the points before it crashed or timed out".to_owned());
        }
        let case = match parse_case_text(&text) {
            Ok(case) => case,
            Err(diagnostics) => {
                return Point::undecided(bytes, format!("the generated case is invalid: {diagnostics}"))
            }
        };
        progress(&case.id);
        let result = worker.run(&case, 1.0, deadline);
        if matches!(result.verdict.kind, VerdictKind::Crash | VerdictKind::Timeout) {
            failures_in_a_row += 1;
        } else {
            failures_in_a_row = 0;
        }
        point_of(bytes, &result)
    });
    SeriesFigure::new(series, points, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ast::Expectation;
    use crate::record::observations::{GateRecord, Observations, OpRecord};
    use crate::record::verdict::Verdict;
    use crate::report::figures::{staging_console as console, staging_markdown as markdown};

    /// An oracle for a driver that returns early up to `threshold` bytes.
    fn threshold_oracle(threshold: u64) -> impl FnMut(u64) -> Point {
        move |bytes| Point { returned_early: Some(bytes <= threshold), ..Point::undecided(bytes, String::new()) }
    }

    fn sizes(points: &[Point]) -> Vec<u64> {
        points.iter().map(|p| p.bytes).collect()
    }

    #[test]
    fn every_generated_case_parses_and_validates() {
        for series in Series::ALL {
            for bytes in coarse_sizes().chain([4608, 73728, 100 << 10]) {
                let text = case_text(series, bytes);
                let case = parse_case_text(&text).unwrap_or_else(|e| panic!("{text}\n{e}"));
                assert_eq!(case.id, format!("{}/{bytes}", series.id()));
                let copy = case.script.iter().find(|op| op.label.as_deref() == Some(COPY_LABEL)).expect("cp");
                let (dst, src) = if series.is_h2d() { ("d", "h") } else { ("h", "d") };
                let expected = if series.is_async() {
                    format!("memcpy-async {dst} {src} on s")
                } else {
                    format!("memcpy {dst} {src}")
                };
                assert_eq!(crate::case::print_op(copy), expected);
                assert!(
                    matches!(case.expects.first(), Some(Expectation::Observe(alternatives)) if alternatives.len() == 2)
                );
                // Not a weak case: it asserts the stream order the docs promise, besides what it observes.
                let warnings = crate::case::lint(&case);
                assert!(warnings.is_empty(), "{text}\n{warnings:?}");
                assert!(text.contains(&format!("buffer h pageable {bytes}\n")));
            }
        }
    }

    #[test]
    fn the_gate_delay_grows_with_the_size() {
        assert_eq!(gate_delay_ms(4096), 11);
        assert_eq!(gate_delay_ms(64 << 20), 74);
        assert!(case_text(Series::D2hSync, 64 << 20).contains("open g after 74ms"));
    }

    #[test]
    fn the_coarse_sweep_is_the_powers_of_two_from_4_kib_to_64_mib() {
        let all: Vec<u64> = coarse_sizes().collect();
        assert_eq!(all.len(), 15);
        assert_eq!((all[0], all[14]), (4096, 64 << 20));
    }

    #[test]
    fn bisection_refines_the_change_to_an_eighth_of_its_step() {
        let points = sweep(threshold_oracle(100 << 10));
        // 64 KiB early, 128 KiB waited; then 96 (early), 112 (waited), 104 (waited): 8 KiB apart, 1/8 of 64 KiB.
        assert_eq!(sizes(&points)[15..], [96 << 10, 112 << 10, 104 << 10]);
        let figure = SeriesFigure::new(Series::H2dAsync, points, Vec::new());
        assert_eq!((figure.largest_early_bytes, figure.smallest_waiting_bytes), (Some(96 << 10), Some(104 << 10)));
        assert_eq!(figure.figure(), "96 KiB (waits at 104 KiB)");
        assert!(figure.notes.is_empty(), "{:?}", figure.notes);
        assert_eq!(figure.points_text(), "early 4 KiB … 96 KiB (6), waited 104 KiB … 64 MiB (12)");
    }

    #[test]
    fn a_threshold_at_a_power_of_two_needs_three_extra_points() {
        let points = sweep(threshold_oracle(64 << 10));
        assert_eq!(sizes(&points)[15..], [96 << 10, 80 << 10, 72 << 10]);
        let figure = SeriesFigure::new(Series::H2dSync, points, Vec::new());
        assert_eq!(figure.figure(), "64 KiB (waits at 72 KiB)");
    }

    #[test]
    fn small_steps_stay_multiples_of_four() {
        let points = sweep(threshold_oracle(4096 + 100));
        assert!(points.iter().all(|p| p.bytes % 4 == 0));
        assert_eq!(sizes(&points)[15..], [6144, 5120, 4608]);
    }

    #[test]
    fn uniform_behaviour_is_said_so() {
        let all_early = SeriesFigure::new(Series::H2dAsync, sweep(threshold_oracle(u64::MAX)), Vec::new());
        assert_eq!(all_early.points.len(), 15);
        assert_eq!(all_early.figure(), "≥ 64 MiB (returned early at every size)");
        let all_wait = SeriesFigure::new(Series::D2hSync, sweep(threshold_oracle(0)), Vec::new());
        assert_eq!(all_wait.points.len(), 15);
        assert_eq!(all_wait.figure(), "none (waited at every size from 4 KiB)");
        assert_eq!(all_wait.points_text(), "waited 4 KiB … 64 MiB (15)");
    }

    #[test]
    fn undecided_points_are_skipped_and_noted() {
        // 128 KiB cannot be decided: the bracket is 64 KiB .. 256 KiB, five halvings narrow it to 6 KiB, and the
        // note says why 128 KiB is missing.
        let mut oracle = threshold_oracle(100 << 10);
        let points = sweep(|bytes| {
            if bytes == 128 << 10 {
                Point::undecided(bytes, "crash: the worker died; stderr:\nline 1\nline 2".into())
            } else {
                oracle(bytes)
            }
        });
        assert_eq!(sizes(&points)[15..], [160 << 10, 112 << 10, 88 << 10, 100 << 10, 106 << 10]);
        let figure = SeriesFigure::new(Series::D2hAsync, points, Vec::new());
        assert_eq!(figure.figure(), "100 KiB (waits at 106 KiB)");
        assert_eq!(figure.notes, ["undecided at 128 KiB: crash: the worker died; stderr: / line 1 / line 2"]);
    }

    #[test]
    fn an_undecided_bisection_point_ends_the_bisection() {
        let points = sweep(|bytes| match bytes {
            b if b == 96 << 10 => Point::undecided(b, "fail".into()),
            b => threshold_oracle(100 << 10)(b),
        });
        assert_eq!(sizes(&points)[15..], [96 << 10]);
        let figure = SeriesFigure::new(Series::H2dAsync, points, Vec::new());
        assert_eq!(figure.figure(), "64 KiB (waits at 128 KiB)");
    }

    #[test]
    fn non_monotone_behaviour_is_noted() {
        // Waits at 8 KiB only; the threshold is still the largest early size.
        let points = sweep(|bytes| Point {
            returned_early: Some(bytes != 8192 && bytes <= 64 << 10),
            ..Point::undecided(bytes, String::new())
        });
        let figure = SeriesFigure::new(Series::H2dAsync, points, Vec::new());
        assert_eq!(figure.largest_early_bytes, Some(64 << 10));
        assert_eq!(figure.notes, ["not monotone in size: waited at 8 KiB although 64 KiB returned early"]);
    }

    #[test]
    fn nothing_decided_is_not_measured() {
        let figure = SeriesFigure::new(Series::H2dAsync, sweep(|b| Point::undecided(b, "crash".into())), Vec::new());
        assert_eq!(figure.figure(), "not measured");
        assert_eq!(figure.notes.len(), 15);
    }

    #[test]
    fn a_device_without_mapped_memory_measures_nothing() {
        let device = DeviceInfo { can_map_host_memory: false, ..super::super::tests::device() };
        let mut heard = Vec::new();
        let figures = measure(&Series::ALL, &device, Duration::from_secs(1), &mut |id| heard.push(id.to_owned()));
        assert!(heard.is_empty(), "no point may run: {heard:?}");
        assert_eq!(figures.len(), 4);
        for f in figures {
            assert_eq!(f.figure(), "not measured");
            assert!(f.notes[0].starts_with("not measured: gate g needs mapped host memory"), "{:?}", f.notes);
        }
    }

    #[test]
    fn filters_select_series_by_id() {
        assert_eq!(select(None).len(), 4);
        assert_eq!(select(Some("figures/")).len(), 4);
        assert_eq!(select(Some("staging/h2d")), [Series::H2dAsync, Series::H2dSync]);
        assert!(select(Some("capture/")).is_empty());
    }

    /// A result as the worker would return it for the generated case of `bytes`.
    fn result(kind: VerdictKind, observed: Option<&str>, copy_ns: (u64, u64), opened_ns: u64) -> CaseResult {
        let copy = OpRecord {
            index: 2,
            line: 10,
            label: Some(COPY_LABEL.into()),
            thread: None,
            text: "memcpy-async d h on s".into(),
            code: Some("cudaSuccess".into()),
            acceptable: vec!["cudaSuccess".into()],
            start_ns: copy_ns.0,
            end_ns: copy_ns.1,
            value: None,
            not_run: None,
        };
        let gate = GateRecord { name: GATE.into(), opened_ns: Some(opened_ns), opened_by: None, timed_out: false };
        let observations = Observations { ops: vec![copy], gates: vec![gate], ..Observations::default() };
        CaseResult {
            id: "figures/staging/h2d-async/4096".into(),
            area: "figures".into(),
            rule: String::new(),
            source: String::new(),
            location: String::new(),
            verdict: Verdict { kind, variant: None, observed: observed.map(Into::into), messages: vec!["why".into()] },
            observations: Some(observations),
            measures: Vec::new(),
            timeline: None,
            wall_ms: 0,
            device: None,
            attempts: Vec::new(),
            dirty: None,
            baseline: None,
            expectation: None,
            sanitizer: Vec::new(),
            executor: None,
            second: None,
        }
    }

    #[test]
    fn points_are_read_from_the_verdict_with_their_margin() {
        let early = point_of(4096, &result(VerdictKind::Pass, Some(RETURNS_EARLY), (1_000, 21_000), 51_000_000));
        assert_eq!(early.returned_early, Some(true));
        assert_eq!(early.code.as_deref(), Some("cudaSuccess"));
        assert_eq!((early.call_ns, early.gate_open_ns), (Some(20_000), Some(50_999_000)));
        assert_eq!(early.problem, None);

        let waited = point_of(4096, &result(VerdictKind::Pass, Some(WAITS), (1_000, 52_000_000), 51_000_000));
        assert_eq!(waited.returned_early, Some(false));

        // Only a passing verdict decides: a failed case (a copy that returned an error, data out of order) is
        // undecided even though the oracle saw an early return.
        let failed = point_of(4096, &result(VerdictKind::Fail, Some(RETURNS_EARLY), (1_000, 21_000), 51_000_000));
        assert_eq!(failed.returned_early, None);
        assert_eq!(failed.problem.as_deref(), Some("fail: why"));
    }

    #[test]
    fn the_summaries_show_the_figure_and_the_points() {
        let figure = SeriesFigure::new(Series::H2dAsync, sweep(threshold_oracle(64 << 10)), Vec::new());
        let console = console(std::slice::from_ref(&figure));
        assert!(console.contains("64 KiB (waits at 72 KiB)"), "{console}");
        let markdown = markdown(&[figure]);
        let row =
            "| `h2d-async` | cudaMemcpyAsync pageable host → device, blocking stream | 64 KiB (waits at 72 KiB) |";
        assert!(markdown.contains(row), "{markdown}");
        assert_eq!(crate::report::figures::staging_console(&[]), "");
    }
}
