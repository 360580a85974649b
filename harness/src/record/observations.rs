//! What one run of a case observed: the executor's only output and, with the case itself, the verdict's only input.
//! Plain data (no CUDA types), so verdicts can be tested and reports re-read on a machine without a GPU.
//!
//! Host times (`*_ns` of ops, gates, host calls) are nanoseconds since the case started, from one monotonic host
//! clock. Kernel stamps are `%globaltimer` nanoseconds relative to the earliest stamp of the case: a different
//! clock, so host and device times are never compared with each other (nor the stamps of kernels of two devices:
//! each GPU has its own timer, and the validator refuses `before`/`overlaps` across devices).

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Every observation of one run of one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observations {
    pub case_id: String,
    /// One per declaration, in declaration order.
    pub decls: Vec<DeclRecord>,
    /// One per script operation, in script order (those that were not run included).
    pub ops: Vec<OpRecord>,
    /// One per kernel launch operation, in script order.
    pub kernels: Vec<KernelRecord>,
    /// The raw `%globaltimer` value that the kernel stamps are relative to (the earliest stamp of the case).
    pub stamp_origin_ns: Option<u64>,
    pub gates: Vec<GateRecord>,
    /// Host functions and stream callbacks, in the order they ran.
    pub host_calls: Vec<HostCallRecord>,
    /// Final contents of every buffer, read after the script and a device synchronize.
    pub buffers: Vec<BufferRecord>,
    /// Topology of every graph captured by `end-capture` (the latest capture into each graph slot).
    pub graphs: Vec<GraphRecord>,
    /// Code of the `cudaDeviceSynchronize` after the script (of each device of the case: the first that failed);
    /// `None` if it was not reached.
    pub final_sync: Option<String>,
    /// The ordinal of each device of the case, index 0 (the case's own) first. Empty in older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<i32>,
    /// Host time at which the watchdog opened every gate because the case ran past its deadline.
    pub watchdog_fired_ns: Option<u64>,
    /// What a reader should know that has no field: cleanup errors, a capture ended by the executor, a sticky
    /// error, a thread that could not start.
    pub notes: Vec<String>,
    /// Host time from the case's start to the end of its cleanup.
    pub wall_ns: u64,
    /// Under `timing: events`: the device interval of every copy, memset, kernel launch and graph launch, in script
    /// order (those not bracketed, e.g. captured ones, are absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timed: Vec<TimedOp>,
    /// Reports written while the executor derived the measures kept them here; [`crate::record::Report::read`]
    /// moves them to the case. Read, never written.
    #[serde(default, rename = "measures", skip_serializing)]
    pub older_measures: Option<Vec<MeasureRecord>>,
    /// As `older_measures`, for the timeline.
    #[serde(default, rename = "timeline", skip_serializing)]
    pub older_timeline: Option<super::timeline::Timeline>,
}

/// The device interval of one operation under `timing: events`: milliseconds from the origin event recorded just
/// before the script to the events recorded before and after the operation on its stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedOp {
    pub op_index: usize,
    pub label: Option<String>,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// One `measure` of a case: a figure, never a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureRecord {
    pub name: String,
    /// What it computes, as written: `bandwidth c`, `host eager per 100`.
    pub of: String,
    /// `None` when the observations did not have what it needs (`why` says what was missing).
    pub value: Option<f64>,
    /// `ms`, `us`, `GB/s` or `%`.
    pub unit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Under `samples: N`: the value of every run that produced one, the first (`value`) included, in run order.
    /// Empty for a case measured once. The claims judge the distribution, not the first value alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

/// The creation of one declared object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclRecord {
    pub name: String,
    /// `stream`, `event`, `buffer`, `gate`, `thread`, `graph` or `exec`.
    pub kind: String,
    pub line: u32,
    /// Return code of the creation; `None` for declarations that create nothing (threads, graph/exec slots).
    pub code: Option<String>,
    /// Codes the case accepts for the creation.
    pub acceptable: Vec<String>,
}

/// One script operation as it ran (or why it did not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    pub index: usize,
    pub line: u32,
    pub label: Option<String>,
    /// The case thread that ran it; `None` is the main thread.
    pub thread: Option<String>,
    /// The operation as the case wrote it, e.g. `memcpy-async d h on s`.
    pub text: String,
    /// Name of the return code; `None` when the operation was not run.
    pub code: Option<String>,
    /// Codes the case accepts (`cudaSuccess` when it wrote none).
    pub acceptable: Vec<String>,
    /// Host time just before the CUDA call and just after it returned (the blocking oracle).
    pub start_ns: u64,
    pub end_ns: u64,
    pub value: Option<OpValue>,
    /// Why the operation was not run, e.g. `stream s was not created`.
    pub not_run: Option<String>,
}

/// A value an operation returned besides its code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpValue {
    /// `elapsed`: milliseconds from cudaEventElapsedTime.
    ElapsedMs(f64),
    /// `capture-status`: `none`, `active` or `invalidated` (or `unknown(N)`).
    CaptureStatus(String),
    /// `capture-deps`: the capture status and the number of dependencies (0 unless the status is `active`,
    /// since CUDA returns valid data only then).
    CaptureDeps {
        status: String,
        count: u64,
        /// The dependencies as the labels of the operations that made them (`?` for a node the executor cannot
        /// name), and the type of each one's edge data (`default`, `programmatic`, ...; empty before CUDA 12.3).
        #[serde(default)]
        nodes: Vec<String>,
        #[serde(default)]
        edge_types: Vec<String>,
    },
    /// `pointer-type`: the memory type cudaPointerGetAttributes reported (`unregistered`, `host`, `device`,
    /// `managed`, or `unknown(N)`).
    PointerType(String),
    /// `exchange-capture-mode`: the mode the thread had before.
    PreviousCaptureMode(String),
    /// `stream-priority`: what cudaStreamGetPriority said, with the device's range to judge `greatest`/`least`.
    StreamPriority { value: i32, greatest: i32, least: i32 },
    /// `read`: the buffer's contents when the operation ran.
    Snapshot(Contents),
    /// `get-device`: the current device.
    Device(i32),
    /// `launch spin ... grid full`: the number of blocks that filled the device.
    GridBlocks(u32),
    /// `is-enabled`, `pool-get`, `graph-mem-get`: the number CUDA returned.
    Number(u64),
    /// `list`: the count CUDA returned, and whether the entries of the buffer past it were set to NULL.
    Listed { count: u64, null_padded: bool },
    /// `malloc-async`: the address returned.
    Address(u64),
    /// `instantiate ... with-params` and `update`: the result (in the language's words, or `unknown(N)`), and the
    /// nodes the result info names, as the labels of the operations that made them (`?` for a node the executor
    /// cannot name).
    Result { result: String, error_node: Option<String>, error_from: Option<String> },
    /// `call`: what the call wrote into each output parameter, in the parameters' order (`L value` is the first,
    /// `L.param value` any).
    Outputs(Vec<CallOutput>),
}

/// One output of a `call`: its first (up to) 8 bytes as a little-endian number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallOutput {
    pub param: String,
    pub value: u64,
    /// Two runs never share it: an address or a handle (a pointer, a stream, an array), or a reading of the
    /// moment (free memory, an elapsed time, an id). The executors' agreement does not compare it.
    pub varies: bool,
}

/// Device stamps of one kernel launch operation, relative to [`Observations::stamp_origin_ns`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    pub op_index: usize,
    pub label: Option<String>,
    /// `None`: the kernel never ran (launch failed, only captured, or its stamps could not be read).
    pub entry_ns: Option<u64>,
    pub exit_ns: Option<u64>,
}

/// Who opened a gate first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateOpener {
    /// An `open G` operation.
    Script,
    /// An `open G after D` operation, from the executor's timer thread.
    Scheduled,
    /// The watchdog at the case deadline.
    Watchdog,
    /// The executor after the script, before it synchronizes and frees anything.
    Cleanup,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    pub name: String,
    /// Host time just before the flag was stored (so "returned after the open" is never claimed too early).
    pub opened_ns: Option<u64>,
    pub opened_by: Option<GateOpener>,
    /// The gate kernel's in-kernel timeout fired.
    pub timed_out: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostCallKind {
    /// `host-func` (cudaLaunchHostFunc).
    HostFunc,
    /// `callback` (cudaStreamAddCallback).
    Callback,
}

/// One run of a host function or stream callback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostCallRecord {
    pub op_index: usize,
    pub label: Option<String>,
    pub kind: HostCallKind,
    /// Host time when it started running.
    pub at_ns: u64,
    /// The status argument of a callback.
    pub status: Option<String>,
    /// What a `host-func ... snapshot BUF` saw in BUF.
    pub snapshot: Option<Contents>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferRecord {
    pub name: String,
    /// `device`, `pinned`, `pageable` or `mapped`.
    pub kind: String,
    pub bytes: u64,
    /// `None` when the buffer was not created or could not be read back (`read_error` says why).
    pub contents: Option<Contents>,
    pub read_error: Option<String>,
}

/// The u32 words of a buffer, summarised: whole-buffer facts are computed over every word; only the first
/// [`Contents::KEPT_WORDS`] words and the indices the case's expectations name are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Contents {
    pub words: u64,
    /// `Some(v)` when every word is `v`.
    pub uniform: Option<u32>,
    pub first_words: Vec<u32>,
    /// Words at the indices named by `BUF[I] == V` expectations, wherever they are.
    pub probes: Vec<WordAt>,
    /// Runs of equal words, e.g. `4096 words: [0..1024) = 7, [1024..4096) = 0`.
    pub summary: String,
    /// The whole buffer as runs `[start, end, value]`, when it has at most [`Contents::KEPT_RUNS`] of them (a
    /// buffer written by whole-buffer kernels and copies has few): enough to rebuild every word exactly.
    #[serde(default)]
    pub runs: Option<Vec<[u64; 3]>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordAt {
    pub index: u64,
    pub value: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphRecord {
    pub name: String,
    /// Index of the `end-capture` operation that produced it.
    pub end_capture_op: usize,
    /// `end-capture` returned a NULL graph (the capture was invalidated or failed).
    pub null: bool,
    pub nodes: Vec<NodeRecord>,
    /// Directed edges `[from, to]`, as indices into `nodes`.
    pub edges: Vec<[usize; 2]>,
    /// Why the topology could not be read, if it could not.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub index: usize,
    /// `kernel`, `memcpy`, `memset`, `host`, `graph`, `empty`, `wait-event`, `event-record`, ...
    pub kind: String,
    /// The operation whose capture produced this node, when the executor saw it.
    pub op_index: Option<usize>,
    pub label: Option<String>,
}

impl Contents {
    /// How many leading words are stored.
    pub const KEPT_WORDS: usize = 64;
    /// How many runs of equal words are kept for an exact copy of the buffer.
    pub const KEPT_RUNS: usize = 64;

    /// Summarises `words`, keeping the words at `probe_indices` (those out of range are left out).
    pub fn of(words: &[u32], probe_indices: &[u64]) -> Contents {
        let mut scan = ContentsScan::new(probe_indices);
        scan.push(words);
        scan.finish()
    }

    /// Every word of the buffer, when the runs were kept.
    pub fn all_words(&self) -> Option<Vec<u32>> {
        let runs = self.runs.as_ref()?;
        let mut words = Vec::with_capacity(self.words as usize);
        for &[start, end, value] in runs {
            words.extend(std::iter::repeat_n(value as u32, (end - start) as usize));
        }
        Some(words)
    }

    /// The word at `index`, if it was kept.
    pub fn word(&self, index: u64) -> Option<u32> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.first_words.get(i).copied())
            .or_else(|| self.probes.iter().find(|p| p.index == index).map(|p| p.value))
    }
}

/// How many runs of equal words a summary spells out.
const SUMMARY_RUNS: usize = 8;

/// [`Contents`] built from a buffer's words in order, a chunk at a time, in one pass and without holding the
/// buffer: a device buffer of 256 MiB is read back through a small host chunk, and host memory is scanned where it
/// lies (copying it whole first cost more host time than the cases' own work, and far more on a busy host).
#[derive(Debug)]
pub struct ContentsScan {
    words: u64,
    first_words: Vec<u32>,
    /// The indices asked for (sorted, without repeats), and the words found at them so far.
    wanted: Vec<u64>,
    probes: Vec<WordAt>,
    /// The first runs of equal words, closed (enough for the summary and for an exact copy), and how many in all.
    runs: Vec<[u64; 3]>,
    run_count: u64,
    /// The run still open: where it started and its word.
    open: Option<(u64, u32)>,
}

impl ContentsScan {
    pub fn new(probe_indices: &[u64]) -> ContentsScan {
        let mut wanted = probe_indices.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        ContentsScan {
            words: 0,
            first_words: Vec::new(),
            wanted,
            probes: Vec::new(),
            runs: Vec::new(),
            run_count: 0,
            open: None,
        }
    }

    /// The next words of the buffer.
    pub fn push(&mut self, chunk: &[u32]) {
        let base = self.words;
        let end = base + chunk.len() as u64;
        if self.first_words.len() < Contents::KEPT_WORDS {
            let more = (Contents::KEPT_WORDS - self.first_words.len()).min(chunk.len());
            self.first_words.extend_from_slice(&chunk[..more]);
        }
        for &index in self.wanted.iter().filter(|&&i| i >= base && i < end) {
            self.probes.push(WordAt { index, value: chunk[(index - base) as usize] });
        }
        let mut at = 0usize;
        while at < chunk.len() {
            let (start, value) = *self.open.get_or_insert((base + at as u64, chunk[at]));
            // The end of the run of `value` inside this chunk (a plain comparison loop, which the compiler
            // vectorises: a buffer of one run is scanned at memory speed).
            let len = chunk[at..].iter().position(|&w| w != value).unwrap_or(chunk.len() - at);
            at += len;
            if at < chunk.len() {
                self.close(start, base + at as u64, value);
                self.open = None;
            }
        }
        self.words = end;
    }

    fn close(&mut self, start: u64, end: u64, value: u32) {
        self.run_count += 1;
        if self.runs.len() <= Contents::KEPT_RUNS {
            self.runs.push([start, end, u64::from(value)]);
        }
    }

    pub fn finish(mut self) -> Contents {
        if let Some((start, value)) = self.open.take() {
            self.close(start, self.words, value);
        }
        let uniform = match self.runs.as_slice() {
            [[_, _, v]] if self.run_count == 1 => Some(*v as u32),
            _ => None,
        };
        let summary = summary(self.words, &self.runs, self.run_count);
        let runs = (self.run_count as usize <= Contents::KEPT_RUNS).then_some(self.runs);
        Contents { words: self.words, uniform, first_words: self.first_words, probes: self.probes, summary, runs }
    }
}

/// `4096 words: [0..1024) = 7, [1024..4096) = 0` from the first runs (at least [`SUMMARY_RUNS`] of them, or all)
/// and how many runs there are.
fn summary(words: u64, runs: &[[u64; 3]], run_count: u64) -> String {
    let mut text = format!("{words} words");
    match runs {
        [] => {}
        [[_, _, v]] if run_count == 1 => {
            let _ = write!(text, ", all {v} ({v:#x})");
        }
        _ => {
            let _ = write!(text, " in {run_count} runs:");
            for [start, end, v] in runs.iter().take(SUMMARY_RUNS) {
                let _ = write!(text, " [{start}..{end}) = {v},");
            }
            text.pop();
            if run_count > SUMMARY_RUNS as u64 {
                let _ = write!(text, " (+{} more runs)", run_count - SUMMARY_RUNS as u64);
            }
        }
    }
    text
}

impl Observations {
    /// The operation labelled `label`.
    pub fn op(&self, label: &str) -> Option<&OpRecord> {
        self.ops.iter().find(|o| o.label.as_deref() == Some(label))
    }

    /// Stamps of the kernel launch labelled `label`.
    pub fn kernel(&self, label: &str) -> Option<&KernelRecord> {
        self.kernels.iter().find(|k| k.label.as_deref() == Some(label))
    }

    pub fn gate(&self, name: &str) -> Option<&GateRecord> {
        self.gates.iter().find(|g| g.name == name)
    }

    pub fn buffer(&self, name: &str) -> Option<&BufferRecord> {
        self.buffers.iter().find(|b| b.name == name)
    }

    pub fn graph(&self, name: &str) -> Option<&GraphRecord> {
        self.graphs.iter().find(|g| g.name == name)
    }

    /// The device interval of operation `op_index` under `timing: events`.
    pub fn timed_op(&self, op_index: usize) -> Option<&TimedOp> {
        self.timed.iter().find(|t| t.op_index == op_index)
    }

    /// Host calls of the operation labelled `label`, in the order they ran.
    pub fn host_calls_of<'a>(&'a self, label: &'a str) -> impl Iterator<Item = &'a HostCallRecord> + 'a {
        self.host_calls.iter().filter(move |c| c.label.as_deref() == Some(label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_of_uniform_words() {
        let c = Contents::of(&[7; 100], &[]);
        assert_eq!(c.uniform, Some(7));
        assert_eq!(c.first_words.len(), Contents::KEPT_WORDS);
        assert_eq!(c.summary, "100 words, all 7 (0x7)");
    }

    #[test]
    fn contents_keeps_probed_words_beyond_the_first() {
        let mut words = vec![0u32; 1000];
        words[999] = 5;
        words[10] = 1;
        let c = Contents::of(&words, &[999, 5000]);
        assert_eq!(c.uniform, None);
        assert_eq!(c.word(10), Some(1));
        assert_eq!(c.word(999), Some(5));
        assert_eq!(c.word(500), None, "neither kept nor probed");
        assert_eq!(c.word(5000), None, "out of range");
        assert_eq!(c.summary, "1000 words in 4 runs: [0..10) = 0, [10..11) = 1, [11..999) = 0, [999..1000) = 5");
    }

    #[test]
    fn summary_limits_runs() {
        let words: Vec<u32> = (0..20).collect();
        assert!(Contents::of(&words, &[]).summary.ends_with("(+12 more runs)"));
        assert_eq!(Contents::of(&[], &[]).summary, "0 words");
        assert_eq!(Contents::of(&[], &[]).uniform, None);
    }

    /// What `Contents::of` computed before the scan (every word copied, its runs listed twice), as the reference:
    /// the scan must give the same record for every buffer, however it is cut into chunks.
    fn reference(words: &[u32], probe_indices: &[u64]) -> Contents {
        let mut runs: Vec<[u64; 3]> = Vec::new();
        for (i, &w) in words.iter().enumerate() {
            match runs.last_mut() {
                Some([_, end, value]) if *value == w as u64 => *end = i as u64 + 1,
                _ => runs.push([i as u64, i as u64 + 1, w as u64]),
            }
        }
        let uniform = match words.split_first() {
            Some((&first, rest)) if rest.iter().all(|&w| w == first) => Some(first),
            _ => None,
        };
        let mut probes: Vec<WordAt> = probe_indices
            .iter()
            .filter_map(|&index| Some(WordAt { index, value: *words.get(usize::try_from(index).ok()?)? }))
            .collect();
        probes.sort_by_key(|p| p.index);
        probes.dedup();
        Contents {
            words: words.len() as u64,
            uniform,
            first_words: words.iter().take(Contents::KEPT_WORDS).copied().collect(),
            probes,
            summary: summary(words.len() as u64, &runs, runs.len() as u64),
            runs: Some(runs).filter(|r| r.len() <= Contents::KEPT_RUNS),
        }
    }

    #[test]
    fn the_scan_in_chunks_gives_what_the_whole_buffer_gives() {
        // A small deterministic generator: buffers of one run, of a few runs, of 64 and 65 runs (the limit of an
        // exact copy) and of noise, cut at every kind of place.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut buffers: Vec<Vec<u32>> = vec![vec![], vec![7], vec![7; 1000], (0..20).collect()];
        for runs in [2usize, 8, 9, 64, 65, 300] {
            let mut words = Vec::new();
            for r in 0..runs {
                words.extend(std::iter::repeat_n(r as u32 % 3, 1 + (next() % 40) as usize));
            }
            buffers.push(words);
        }
        buffers.push((0..5000).map(|_| (next() % 4) as u32).collect());
        for words in &buffers {
            let probes = [0, 3, words.len() as u64 / 2, words.len() as u64 + 5, 3];
            let whole = reference(words, &probes);
            for chunk in [1usize, 2, 3, 7, 64, 1000, usize::MAX] {
                let mut scan = ContentsScan::new(&probes);
                for part in words.chunks(chunk.min(words.len().max(1))) {
                    scan.push(part);
                }
                assert_eq!(scan.finish(), whole, "{} words in chunks of {chunk}", words.len());
            }
            assert_eq!(Contents::of(words, &probes), whole);
        }
    }
}
