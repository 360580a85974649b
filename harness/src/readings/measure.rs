//! A case's `measure` figures, computed from what its run recorded: device times (events under `timing: events`,
//! kernel stamps otherwise), host times of calls, `elapsed` values and the sizes of copies. Pure (no CUDA), so a
//! figure can be recomputed from a saved report's observations. A figure is recorded, never judged: nothing here
//! feeds a verdict.

use crate::case::ast::{Case, Decl, Expectation, MeasureOf, MemKind, Op, OpKind};
use crate::case::print::measure_of;
use crate::record::observations::{MeasureRecord, Observations, OpValue};

/// Every `measure` of `case`, in the order written.
pub fn compute(case: &Case, obs: &Observations) -> Vec<MeasureRecord> {
    case.expects
        .iter()
        .filter_map(|e| match e {
            Expectation::Measure(m) => Some(m),
            _ => None,
        })
        .map(|m| {
            let (value, why) = match (Figures { case, obs }).value(&m.of) {
                Ok(v) => (Some(v), None),
                Err(why) => (None, Some(why)),
            };
            MeasureRecord {
                name: m.name.clone(),
                of: measure_of(&m.of),
                value,
                unit: m.of.unit().to_owned(),
                why,
                samples: Vec::new(),
            }
        })
        .collect()
}

/// The device interval, in milliseconds on one clock, of operations of a run.
pub fn device_interval(case: &Case, obs: &Observations, index: usize) -> Option<(f64, f64)> {
    if case.timing.is_some() {
        return obs.timed_op(index).map(|t| (t.start_ms, t.end_ms));
    }
    let k = obs.kernels.iter().find(|k| k.op_index == index)?;
    Some((k.entry_ns? as f64 / 1e6, k.exit_ns? as f64 / 1e6))
}

/// The bytes one run of a copy moves: as written, or the smaller operand, as the executor copies it.
pub fn copy_bytes(case: &Case, op: &Op) -> Option<u64> {
    let (OpKind::Memcpy { dst, src, bytes, .. } | OpKind::MemcpyPeer { dst, src, bytes, .. }) = &op.kind else {
        return None;
    };
    let size = |name: &str| {
        case.decls.iter().find_map(|d| match d {
            Decl::Buffer { name: n, bytes, .. } | Decl::Slice { name: n, bytes, .. } if n == name => Some(*bytes),
            _ => None,
        })
    };
    let once = bytes.or_else(|| Some(size(dst)?.min(size(src)?)))?;
    Some(once * u64::from(op.repeat.max(1)))
}

/// The memory kind of buffer or slice `name` (a slice has its buffer's).
pub fn memory_kind(case: &Case, name: &str) -> Option<MemKind> {
    case.decls.iter().find_map(|d| match d {
        Decl::Buffer { name: n, kind, .. } if n == name => Some(*kind),
        Decl::Slice { name: n, of, .. } if n == name => memory_kind(case, of),
        _ => None,
    })
}

/// Adds one more run's measures (`more`, computed as [`compute`] does) to `records` as samples: the first time, each
/// record's own value becomes its first sample. A run without a value for a measure adds nothing to it.
pub fn add_samples(records: &mut [MeasureRecord], more: &[MeasureRecord]) {
    for r in records.iter_mut() {
        if r.samples.is_empty() {
            r.samples.extend(r.value);
        }
        if let Some(v) = more.iter().find(|m| m.name == r.name).and_then(|m| m.value) {
            r.samples.push(v);
        }
    }
}

struct Figures<'a> {
    case: &'a Case,
    obs: &'a Observations,
}

impl Figures<'_> {
    fn index(&self, label: &str) -> Result<usize, String> {
        self.case
            .script
            .iter()
            .position(|op| op.label.as_deref() == Some(label))
            .ok_or_else(|| format!("no operation is labelled `{label}`"))
    }

    /// Script indices from `from` to `to` (or `from` alone).
    fn range(&self, from: &str, to: Option<&String>) -> Result<std::ops::RangeInclusive<usize>, String> {
        let a = self.index(from)?;
        let b = to.map(|t| self.index(t)).transpose()?.unwrap_or(a);
        if b < a {
            return Err(format!("`{}` comes before `{from}`", to.map_or("", String::as_str)));
        }
        Ok(a..=b)
    }

    fn ran(&self, index: usize) -> bool {
        self.obs.ops.get(index).and_then(|o| o.code.as_deref()) == Some("cudaSuccess")
    }

    fn interval(&self, index: usize) -> Option<(f64, f64)> {
        device_interval(self.case, self.obs, index)
    }

    /// From the earliest start to the latest end of the operations of `range` that have device times; the end
    /// operations must have one.
    fn hull(&self, range: &std::ops::RangeInclusive<usize>) -> Result<(f64, f64), String> {
        for end in [*range.start(), *range.end()] {
            if self.interval(end).is_none() {
                let what =
                    self.case.script.get(end).map(|op| crate::case::print::op_kind(&op.kind)).unwrap_or_default();
                return Err(format!("`{what}` has no device time (not run, captured, or its stamps were not read)"));
            }
        }
        let spans: Vec<(f64, f64)> = range.clone().filter_map(|i| self.interval(i)).collect();
        let start = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        let end = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
        Ok((start, end))
    }

    fn value(&self, of: &MeasureOf) -> Result<f64, String> {
        match of {
            MeasureOf::Elapsed { label } => match &self.obs.ops.get(self.index(label)?).and_then(|o| o.value.clone()) {
                Some(OpValue::ElapsedMs(ms)) => Ok(*ms),
                _ => Err(format!("`{label}` returned no elapsed time")),
            },
            // A count an operation recorded.
            MeasureOf::Value { label } => match &self.obs.ops.get(self.index(label)?).and_then(|o| o.value.clone()) {
                Some(OpValue::Number(n)) => Ok(*n as f64),
                _ => Err(format!("`{label}` recorded no number")),
            },
            MeasureOf::Device { from, to, per } => {
                let (start, end) = self.hull(&self.range(from, to.as_ref())?)?;
                Ok((end - start) / f64::from(per.unwrap_or(1)))
            }
            MeasureOf::Bandwidth { from, to } => {
                let range = self.range(from, to.as_ref())?;
                let (start, end) = self.hull(&range)?;
                let bytes: u64 = range
                    .filter(|&i| self.ran(i) && self.interval(i).is_some())
                    .filter_map(|i| copy_bytes(self.case, &self.case.script[i]))
                    .sum();
                if bytes == 0 {
                    return Err("no copy in the range ran".into());
                }
                positive(end - start).map(|ms| bytes as f64 / (ms / 1e3) / 1e9)
            }
            MeasureOf::Host { from, to, per } => {
                let range = self.range(from, to.as_ref())?;
                let (a, b) = (&self.obs.ops[*range.start()], &self.obs.ops[*range.end()]);
                if a.code.is_none() || b.code.is_none() {
                    return Err("an end of the range was not run".into());
                }
                let ns = b.end_ns.saturating_sub(a.start_ns) as f64;
                Ok(ns / 1e3 / f64::from(per.unwrap_or(1)))
            }
            MeasureOf::Busy { from, to } => {
                let range = self.range(from, Some(to))?;
                let (start, end) = self.hull(&range)?;
                let mut kernels: Vec<(f64, f64)> = range
                    .filter(|&i| self.case.script[i].kind.is_kernel_launch())
                    .filter_map(|i| self.interval(i))
                    .collect();
                kernels.sort_by(|a, b| a.0.total_cmp(&b.0));
                positive(end - start).map(|span| union_length(&kernels) / span * 100.0)
            }
            MeasureOf::Spread { labels } => {
                let mut times = Vec::new();
                for label in labels {
                    let (start, end) = self.hull(&self.range(label, None)?)?;
                    times.push(end - start);
                }
                times.sort_by(f64::total_cmp);
                let median = times[times.len() / 2];
                let (min, max) = (times[0], times[times.len() - 1]);
                positive(median).map(|m| (max - min) / m * 100.0)
            }
        }
    }
}

fn positive(ms: f64) -> Result<f64, String> {
    if ms > 0.0 {
        Ok(ms)
    } else {
        Err(format!("a device interval of {ms} ms"))
    }
}

/// The total length covered by intervals sorted by start (also the runner's starting time:
/// `runner::stats::starting_time`).
pub(crate) fn union_length(sorted: &[(f64, f64)]) -> f64 {
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for &(s, e) in sorted {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + current.map_or(0.0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::observations::{KernelRecord, OpRecord, TimedOp};

    const CASE: &str = "\
case perf/one
  rule: r
  source: s
  timing: events

  stream s
  buffer h pinned 1MiB
  buffer d device 4MiB
  slice d0 of d at 0 size 1MiB
  event a
  event b

        record a on s
  up:   repeat 4 memcpy-async d0 h on s
  k1:   launch spin on s
  k2:   launch spin on s
  down: memcpy-async h d0 512KiB on s
        record b on s
  t:    elapsed a b

  expect d == 0
  measure up-bw: bandwidth up
  measure all-bw: bandwidth up to down
  measure gpu: device up to down
  measure per-copy: device up per 4
  measure submit: host up to down
  measure busy: busy up to down
  measure spread: spread up k1 k2
  measure seed: elapsed t
end
";

    fn case() -> Case {
        let file = crate::case::parse_file("perf.case", CASE).unwrap();
        assert_eq!(crate::case::validate(&file), vec![]);
        file.cases.into_iter().next().unwrap()
    }

    fn record(case: &Case, index: usize, host: (u64, u64)) -> OpRecord {
        OpRecord {
            index,
            line: 0,
            label: case.script[index].label.clone(),
            thread: None,
            text: String::new(),
            code: Some("cudaSuccess".into()),
            acceptable: vec![],
            start_ns: host.0,
            end_ns: host.1,
            value: None,
            not_run: None,
        }
    }

    fn obs(case: &Case) -> Observations {
        let mut ops: Vec<OpRecord> =
            (0..case.script.len()).map(|i| record(case, i, (i as u64 * 1000, i as u64 * 1000 + 500))).collect();
        ops[6].value = Some(OpValue::ElapsedMs(2.5));
        let timed = |op_index: usize, start_ms: f64, end_ms: f64| TimedOp { op_index, label: None, start_ms, end_ms };
        Observations {
            ops,
            // 4 MiB in 1 ms; two kernels of 0.5 ms overlapping by 0.25 ms; 512 KiB in 0.5 ms.
            timed: vec![timed(1, 1.0, 2.0), timed(2, 2.0, 2.5), timed(3, 2.25, 2.75), timed(4, 3.0, 3.5)],
            ..Observations::default()
        }
    }

    fn value(records: &[MeasureRecord], name: &str) -> f64 {
        let r = records.iter().find(|r| r.name == name).unwrap();
        r.value.unwrap_or_else(|| panic!("{name}: {:?}", r.why))
    }

    #[test]
    fn figures_from_events_host_times_and_elapsed() {
        let case = case();
        let m = compute(&case, &obs(&case));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(value(&m, "up-bw"), 4.0 * 1048576.0 / 1e-3 / 1e9), "{m:?}");
        assert!(close(value(&m, "all-bw"), 4.5 * 1048576.0 / 2.5e-3 / 1e9));
        assert!(close(value(&m, "gpu"), 2.5));
        assert!(close(value(&m, "per-copy"), 0.25));
        // From the first call (index 1 at 1000 ns) to the last return (index 4 at 4500 ns): 3.5 us.
        assert!(close(value(&m, "submit"), 3.5));
        // Kernels cover [2.0, 2.75] of [1.0, 3.5].
        assert!(close(value(&m, "busy"), 0.75 / 2.5 * 100.0));
        // Times 1.0, 0.5, 0.5: (1.0 - 0.5) / 0.5.
        assert!(close(value(&m, "spread"), 100.0));
        assert!(close(value(&m, "seed"), 2.5));
        assert_eq!(m.iter().find(|r| r.name == "up-bw").unwrap().of, "bandwidth up");
        assert_eq!(m.iter().find(|r| r.name == "up-bw").unwrap().unit, "GB/s");
    }

    #[test]
    fn a_figure_without_its_data_says_why() {
        let case = case();
        let mut o = obs(&case);
        o.timed.retain(|t| t.op_index != 4);
        o.ops[6].value = None;
        let m = compute(&case, &o);
        let gpu = m.iter().find(|r| r.name == "gpu").unwrap();
        assert_eq!(gpu.value, None);
        assert!(gpu.why.as_deref().unwrap().contains("no device time"), "{gpu:?}");
        assert!(m.iter().find(|r| r.name == "seed").unwrap().why.as_deref().unwrap().contains("no elapsed"));
        assert!(value(&m, "up-bw") > 0.0, "figures that have their data are still computed");
    }

    #[test]
    fn without_timing_kernels_are_timed_by_their_stamps() {
        let mut case = case();
        case.timing = None;
        assert!(!case.is_timed(1));
        let mut o = obs(&case);
        o.timed.clear();
        let stamp = |op_index: usize, a: u64, b: u64| KernelRecord {
            op_index,
            label: None,
            entry_ns: Some(a),
            exit_ns: Some(b),
        };
        o.kernels = vec![stamp(2, 0, 400_000), stamp(3, 600_000, 1_000_000)];
        assert_eq!(device_interval(&case, &o, 3), Some((0.6, 1.0)));
        assert_eq!(device_interval(&case, &o, 1), None, "a copy has no stamps");
    }

    #[test]
    fn samples_gather_every_run_that_has_a_value() {
        let case = case();
        let mut first = compute(&case, &obs(&case));
        let mut o = obs(&case);
        o.ops[6].value = Some(OpValue::ElapsedMs(3.0));
        add_samples(&mut first, &compute(&case, &o));
        o.ops[6].value = None;
        add_samples(&mut first, &compute(&case, &o));
        let seed = first.iter().find(|r| r.name == "seed").unwrap();
        assert_eq!(seed.value, Some(2.5), "the first run's value stays the value");
        assert_eq!(seed.samples, vec![2.5, 3.0], "a run without the figure adds no sample");
        assert_eq!(first.iter().find(|r| r.name == "gpu").unwrap().samples.len(), 3);
    }

    #[test]
    fn union_of_overlapping_intervals() {
        assert_eq!(union_length(&[(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]), 4.0);
        assert_eq!(union_length(&[]), 0.0);
    }
}
