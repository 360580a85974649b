//! The intermediate form of a random multi-stream program, before it is lowered into a case.
//!
//! A program is the *body* that both executions share: ops issued in order onto created streams. The wrapper each
//! execution needs (the fork from and join back to the origin stream, the capture, graph launches, repetitions)
//! is added by `lower.rs`, so the IR stays what proptest shrinks and what the model and interpreter read.
//!
//! Indices name everything: stream `i` is `s{i}` (stream 0 is the origin), event `i` is `e{i}`, buffer `i` is
//! `b{i}`, and the work op at index `i` of `ops` carries the label `w{i}`, so stamps and graph nodes map back here.
//!
//! Two extensions of the body: stream-ordered allocations ([`BufKind::Async`] buffers, allocated and freed by
//! [`Op::Alloc`] and [`Op::Free`] inside the body, so every run and every graph launch allocates afresh), and an
//! [`Update`] of the instantiated graph between its first launch and the others (see `model::after_update`).
//!
//! Programs over two devices ([`Placement`]) put each stream, event and device buffer on device 0 or 1: the same
//! happens-before model (streams and events know no devices), cross-device waits, copies between the devices'
//! memory (`memcpy-async`, and [`Op::PeerCopy`]: `memcpy-peer-async`). They keep to what the Programming Guide's
//! "Multi-Device System" allows: a kernel or memset runs on its stream's device and touches that device's memory
//! or pinned memory; an event is recorded only on a stream of its device ("cudaEventRecord() will fail if the
//! input event and input stream are associated to different devices"); a wait may cross devices ("cudaStreamWaitEvent()
//! will succeed even if the input stream and input event are associated to different devices"). They carry no
//! stream-ordered allocation and no update: those are checked on one device, and their cross-device rules are a
//! subject of their own.

use crate::model::{HappensBefore, ModelMode};
use harness::case::call::PROBE_SYMBOL;
use std::fmt;

/// A program body over created streams (never a default stream: the legacy stream's implicit synchronisation
/// would add edges that neither the capture nor the model has).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// `true` for a stream created with `cudaStreamNonBlocking`. Stream 0 is the origin. Created streams never
    /// synchronise with each other, whatever their flags, so the flags only vary what the driver sees.
    pub streams: Vec<bool>,
    /// Number of events `e0..`.
    pub events: usize,
    /// Memory kind of each buffer `b0..`; all start zeroed.
    pub buffers: Vec<BufKind>,
    /// Bytes of every buffer (all equal, a multiple of 4).
    pub buffer_bytes: u64,
    pub ops: Vec<Op>,
    /// Parameter changes made to the instantiated graph after its first launch (captured runs), or to the body
    /// after its first repetition (eager runs).
    pub update: Option<Update>,
    /// The device of each stream, event and buffer; empty for a program on one device.
    pub placement: Placement,
}

/// The device (0 or 1) of each stream, event and buffer of a program over two devices. An empty list puts all of
/// its kind on device 0, so a one-device program has an empty placement. A pinned buffer's entry means nothing:
/// pinned memory is host memory, which kernels of both devices reach through unified addressing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    pub streams: Vec<u32>,
    pub events: Vec<u32>,
    pub buffers: Vec<u32>,
}

impl Placement {
    pub fn stream(&self, i: usize) -> u32 {
        self.streams.get(i).copied().unwrap_or(0)
    }
    pub fn event(&self, i: usize) -> u32 {
        self.events.get(i).copied().unwrap_or(0)
    }
    pub fn buffer(&self, i: usize) -> u32 {
        self.buffers.get(i).copied().unwrap_or(0)
    }
    /// How many devices it uses (1 for an empty placement).
    pub fn devices(&self) -> u32 {
        self.streams.iter().chain(&self.events).chain(&self.buffers).max().map_or(1, |d| d + 1)
    }
}

/// What happens between the first launch of the instantiated graph and the others.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Update {
    /// New kernel parameters, in script order.
    pub edits: Vec<Edit>,
    /// `update gx from g` (cudaGraphExecUpdate) runs before edit `whole` (`edits.len()`: after them all); `None`:
    /// no whole-graph update.
    pub whole: Option<usize>,
    /// The whole-graph update is made from a clone of the template with one more node: a topology change the
    /// rules forbid, so it must fail with `topology-changed` and leave the executable graph as it was.
    pub add_node: bool,
}

/// New parameters for kernel node `op` (a fill or transform): `to` is a fill or transform on the same stream,
/// possibly of another buffer of the same size, possibly the other kernel (a function change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edit {
    pub op: usize,
    pub to: Op,
    /// `exec-set-node gx wI ...` (cudaGraphExecKernelNodeSetParams) when true; `set-node wI ...` on the template
    /// graph (cudaGraphKernelNodeSetParams), which reaches the executable graph only through a whole update.
    pub exec: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufKind {
    /// `cudaMalloc`.
    Device,
    /// `cudaMallocHost`: host memory the device reaches through unified addressing.
    Pinned,
    /// A `later` device buffer that the body allocates with `malloc-async` and frees with `free-async`: it exists
    /// only between the two, starts with undefined contents, and is not read back after the script.
    Async,
    /// The probe kernels' `__device__` variable `cc_symbol` (4 KiB; `symbol=cc_symbol` in a call), reached only by
    /// [`Op::ToSymbol`] and [`Op::FromSymbol`]. It is one variable per device for the whole process, so it holds
    /// what an earlier program left: written whole before it is read, and not read back (no declaration; the last
    /// buffer of a program that has it, which runs on one device).
    Symbol,
}

/// Bytes of `cc_symbol` (kernels/probes.cu: 1024 u32): a program with the symbol has buffers no larger.
pub const SYMBOL_BYTES: u64 = 4096;

impl BufKind {
    /// Allocated before the script and read back after it.
    pub fn is_permanent(self) -> bool {
        matches!(self, BufKind::Device | BufKind::Pinned)
    }
}

/// Which constructs a program may use; see `generate.rs` for why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Runs both eagerly and under capture: every wait follows a record of its event in the same body.
    Capturable,
    /// Runs eagerly only: may also wait on an event before (or without) any record of it, a no-op.
    EagerOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `launch fill b VALUE on s`.
    Fill { stream: usize, buf: usize, value: u32 },
    /// `launch transform b mul MUL add ADD on s`: x = x*MUL + ADD, wrapping; odd MUL keeps it a bijection, so
    /// two transforms in the wrong order leave a different value.
    Transform { stream: usize, buf: usize, mul: u32, add: u32 },
    /// `launch compare a b into r on s`: r[0] = number of indices where a and b differ.
    Compare { stream: usize, a: usize, b: usize, into: usize },
    /// `memcpy-async dst src on s` (whole buffers; device↔device or device↔pinned).
    Copy { stream: usize, dst: usize, src: usize },
    /// `memcpy-peer-async dst src on s` (whole device buffers, each on its device: programs over two devices).
    PeerCopy { stream: usize, dst: usize, src: usize },
    /// `memset-async b BYTE on s`.
    Memset { stream: usize, buf: usize, byte: u8 },
    /// `host-func on s [snapshot b]` (the snapshot buffer is pinned).
    HostFunc { stream: usize, snapshot: Option<usize> },
    /// `record e on s`.
    Record { stream: usize, event: usize },
    /// `wait s for e`.
    Wait { stream: usize, event: usize },
    /// `malloc-async b on s` of an [`BufKind::Async`] buffer: a memory-allocation node when captured.
    Alloc { stream: usize, buf: usize },
    /// `free-async b on s`: a memory-free node when captured.
    Free { stream: usize, buf: usize },
    // Batched copies.
    /// `memcpy-batch dst src on s` (cudaMemcpyBatchAsync of one whole-buffer copy, source read in stream order):
    /// in the model exactly a `memcpy-async`; the batch API is what differs. Eager-only programs: a capture
    /// refuses it (cudaErrorStreamCaptureUnsupported on the H100, driver 580.159.04).
    BatchCopy { stream: usize, dst: usize, src: usize },
    // 2D copies.
    /// `call cudaMemcpy2DAsync` of a whole buffer as `rows` rows of [`ROW_BYTES`] (both pitches the row), kind
    /// `cudaMemcpyDefault`: in the model exactly a `memcpy-async`; the 2D API and its row geometry are what differ.
    Copy2D { stream: usize, dst: usize, src: usize, rows: u64 },
    // Symbol copies.
    /// `call cudaMemcpyToSymbolAsync` of a whole buffer into the [`BufKind::Symbol`] buffer `sym` at offset 0, kind
    /// `cudaMemcpyDefault`: in the model a `memcpy-async` into `sym`.
    ToSymbol { stream: usize, sym: usize, src: usize, bytes: u64 },
    /// `call cudaMemcpyFromSymbolAsync` of the first `bytes` of the symbol `sym` into a whole buffer: a
    /// `memcpy-async` out of `sym`.
    FromSymbol { stream: usize, dst: usize, sym: usize, bytes: u64 },
}

/// The row of a [`Op::Copy2D`]: every buffer size the generator picks is a multiple of it.
pub const ROW_BYTES: u64 = 64;

/// How an op touches a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub buf: usize,
    pub write: bool,
}

impl Op {
    pub fn stream(&self) -> usize {
        match *self {
            Op::Fill { stream, .. }
            | Op::Transform { stream, .. }
            | Op::Compare { stream, .. }
            | Op::Copy { stream, .. }
            | Op::PeerCopy { stream, .. }
            | Op::Memset { stream, .. }
            | Op::HostFunc { stream, .. }
            | Op::Record { stream, .. }
            | Op::Wait { stream, .. }
            | Op::Alloc { stream, .. }
            | Op::Free { stream, .. }
            | Op::BatchCopy { stream, .. }
            | Op::Copy2D { stream, .. }
            | Op::ToSymbol { stream, .. }
            | Op::FromSymbol { stream, .. } => stream,
        }
    }

    /// Work ops become graph nodes and nodes of the happens-before model; record and wait only order them.
    pub fn is_work(&self) -> bool {
        !matches!(self, Op::Record { .. } | Op::Wait { .. })
    }

    /// Kernels are the ops with device stamps.
    pub fn is_kernel(&self) -> bool {
        matches!(self, Op::Fill { .. } | Op::Transform { .. } | Op::Compare { .. })
    }

    /// Kernels whose parameters an [`Edit`] may change (the kernel nodes the language can set).
    pub fn is_settable(&self) -> bool {
        matches!(self, Op::Fill { .. } | Op::Transform { .. })
    }

    /// Writes every word of `buf` without reading it first: what may follow an allocation.
    pub fn writes_whole(&self, buf: usize) -> bool {
        match *self {
            Op::Fill { buf: b, .. } | Op::Memset { buf: b, .. } => b == buf,
            Op::Copy { dst, src, .. }
            | Op::PeerCopy { dst, src, .. }
            | Op::BatchCopy { dst, src, .. }
            | Op::Copy2D { dst, src, .. }
            | Op::ToSymbol { sym: dst, src, .. }
            | Op::FromSymbol { dst, sym: src, .. } => dst == buf && src != buf,
            _ => false,
        }
    }

    /// The buffers this op reads and writes. A transform reads and writes its buffer, which counts as a write;
    /// an allocation and a free count as writes, so every use of the buffer is ordered between them.
    pub fn accesses(&self) -> Vec<Access> {
        let r = |buf| Access { buf, write: false };
        let w = |buf| Access { buf, write: true };
        match *self {
            Op::Fill { buf, .. }
            | Op::Transform { buf, .. }
            | Op::Memset { buf, .. }
            | Op::Alloc { buf, .. }
            | Op::Free { buf, .. } => vec![w(buf)],
            Op::Compare { a, b, into, .. } => vec![r(a), r(b), w(into)],
            Op::Copy { dst, src, .. }
            | Op::PeerCopy { dst, src, .. }
            | Op::BatchCopy { dst, src, .. }
            | Op::Copy2D { dst, src, .. }
            | Op::ToSymbol { sym: dst, src, .. }
            | Op::FromSymbol { dst, sym: src, .. } => vec![r(src), w(dst)],
            Op::HostFunc { snapshot, .. } => snapshot.into_iter().map(r).collect(),
            Op::Record { .. } | Op::Wait { .. } => Vec::new(),
        }
    }
}

pub fn stream_name(i: usize) -> String {
    format!("s{i}")
}
pub fn event_name(i: usize) -> String {
    format!("e{i}")
}
pub fn buffer_name(i: usize) -> String {
    format!("b{i}")
}
/// Label of the work op at index `i` of `Program::ops`.
pub fn label(i: usize) -> String {
    format!("w{i}")
}
/// The op index a label names, for labels made by [`label`].
pub fn label_index(label: &str) -> Option<usize> {
    label.strip_prefix('w')?.parse().ok()
}

impl Program {
    pub fn words(&self) -> usize {
        (self.buffer_bytes / 4) as usize
    }

    /// How many devices the program runs on.
    pub fn devices(&self) -> u32 {
        self.placement.devices()
    }

    /// Indices (into `ops`) of the work ops, in issue order.
    pub fn work_ops(&self) -> impl Iterator<Item = usize> + '_ {
        self.ops.iter().enumerate().filter(|(_, op)| op.is_work()).map(|(i, _)| i)
    }

    /// Every rule a generated program must keep, checked after the fact (the generator constructs programs this
    /// way; this is the independent check of that claim).
    pub fn check_well_formed(&self, flavor: Flavor) -> Result<(), String> {
        if !(2..=6).contains(&self.streams.len()) {
            return Err(format!("{} streams, expected 2 to 6", self.streams.len()));
        }
        if self.buffers.is_empty() || self.events == 0 {
            return Err("no buffer or no event declared".into());
        }
        if self.work_ops().next().is_none() {
            return Err("no work op".into());
        }
        if self.buffer_bytes == 0 || self.buffer_bytes % 4 != 0 {
            return Err(format!("buffer size {} is not a positive multiple of 4", self.buffer_bytes));
        }
        let mut recorded = vec![false; self.events];
        for (i, op) in self.ops.iter().enumerate() {
            self.check_op(op, flavor, &recorded).map_err(|e| format!("op {i} ({op}): {e}"))?;
            if let Op::Record { event, .. } = *op {
                recorded[event] = true;
            }
        }
        self.check_symbol()?;
        self.check_allocations()?;
        self.check_update()?;
        self.check_placement()?;
        self.check_race_free()
    }

    /// A program over two devices: a placement for every stream, event and buffer; stream 0 on device 0; no
    /// stream-ordered allocation and no update (see the module docs); kernels and memsets on their stream's
    /// device's memory (or pinned memory), records on a stream of their event's device, peer copies between device
    /// buffers.
    fn check_placement(&self) -> Result<(), String> {
        let pl = &self.placement;
        if *pl == Placement::default() {
            return Ok(());
        }
        if pl.streams.len() != self.streams.len()
            || pl.events.len() != self.events
            || pl.buffers.len() != self.buffers.len()
        {
            return Err("the placement does not cover every stream, event and buffer".into());
        }
        if self.devices() != 2 || pl.stream(0) != 0 {
            return Err("a placement puts the origin stream on device 0 and uses exactly two devices".into());
        }
        if self.update.is_some() || self.buffers.contains(&BufKind::Async) {
            return Err("a program over two devices has no update and no stream-ordered allocation".into());
        }
        if let Some(b) = (0..self.buffers.len()).find(|&b| self.buffers[b] == BufKind::Pinned && pl.buffer(b) != 0) {
            return Err(format!(
                "pinned buffer {} is placed on device {}: host memory is on none",
                buffer_name(b),
                pl.buffer(b)
            ));
        }
        for (i, op) in self.ops.iter().enumerate() {
            let device = pl.stream(op.stream());
            let reachable = |b: usize| self.buffers[b] == BufKind::Pinned || pl.buffer(b) == device;
            let fail = |why: String| Err(format!("op {i} ({op}): {why}"));
            match *op {
                Op::Record { event, .. } if pl.event(event) != device => {
                    return fail(format!(
                        "records an event of device {} on a stream of device {device}",
                        pl.event(event)
                    ))
                }
                Op::PeerCopy { dst, src, .. }
                    if self.buffers[dst] != BufKind::Device || self.buffers[src] != BufKind::Device =>
                {
                    return fail("a peer copy of host memory".into())
                }
                Op::Fill { .. }
                | Op::Transform { .. }
                | Op::Compare { .. }
                | Op::Memset { .. }
                | Op::BatchCopy { .. }
                | Op::Copy2D { .. } => {
                    if let Some(a) = op.accesses().iter().find(|a| !reachable(a.buf)) {
                        return fail(format!(
                            "touches {} of device {} from device {device}",
                            buffer_name(a.buf),
                            pl.buffer(a.buf)
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The symbol ([`BufKind::Symbol`]): at most one, the last buffer, in a program on one device whose buffers fit
    /// in it.
    fn check_symbol(&self) -> Result<(), String> {
        let Some(at) = self.buffers.iter().position(|&k| k == BufKind::Symbol) else { return Ok(()) };
        if at + 1 != self.buffers.len() {
            return Err(format!("the symbol is {}, not the last buffer", buffer_name(at)));
        }
        if self.placement != Placement::default() {
            return Err("a symbol in a program over two devices (the variable is one per device)".into());
        }
        if self.buffer_bytes > SYMBOL_BYTES {
            return Err(format!("buffers of {} bytes do not fit in the symbol ({SYMBOL_BYTES})", self.buffer_bytes));
        }
        Ok(())
    }

    /// Each async buffer: used only between its `malloc-async` and its `free-async`, written whole before it is
    /// read, and freed before the body ends; permanent buffers are never allocated or freed.
    fn check_allocations(&self) -> Result<(), String> {
        #[derive(PartialEq)]
        enum State {
            Free,
            Unwritten,
            Live,
        }
        // The symbol exists from the start with what an earlier program left: like an allocation not yet written.
        let mut state: Vec<State> =
            self.buffers.iter().map(|&k| if k == BufKind::Symbol { State::Unwritten } else { State::Free }).collect();
        for (i, op) in self.ops.iter().enumerate() {
            let fail = |why: &str| Err(format!("op {i} ({op}): {why}"));
            match *op {
                Op::Alloc { buf, .. } | Op::Free { buf, .. } if self.buffers[buf] != BufKind::Async => {
                    return fail("allocates or frees a buffer that is not async")
                }
                Op::Alloc { buf, .. } if state[buf] != State::Free => return fail("allocates a live buffer"),
                Op::Alloc { buf, .. } => state[buf] = State::Unwritten,
                Op::Free { buf, .. } if state[buf] == State::Free => return fail("frees a buffer not allocated"),
                Op::Free { buf, .. } => state[buf] = State::Free,
                _ => {
                    for a in op.accesses().iter().filter(|a| !self.buffers[a.buf].is_permanent()) {
                        match state[a.buf] {
                            State::Free => return fail("uses an async buffer outside its allocation"),
                            State::Unwritten if !op.writes_whole(a.buf) => {
                                return fail("reads an async buffer before it is written whole")
                            }
                            _ => state[a.buf] = State::Live,
                        }
                    }
                }
            }
        }
        let allocations = (0..self.buffers.len()).filter(|&b| self.buffers[b] == BufKind::Async);
        match allocations.into_iter().find(|&b| state[b] != State::Free) {
            Some(b) => Err(format!("{} is not freed by the end of the body", buffer_name(b))),
            None => Ok(()),
        }
    }

    /// Edits name fill and transform ops and keep their stream; buffer changes stay among permanent buffers; the
    /// whole update comes at most once, and not for graphs with memory nodes (their update is not generated:
    /// `cudaGraphExecUpdate` of allocation and free nodes is not what these programs check).
    fn check_update(&self) -> Result<(), String> {
        let Some(u) = &self.update else { return Ok(()) };
        if u.edits.is_empty() && u.whole.is_none() {
            return Err("an update that changes nothing".into());
        }
        for e in &u.edits {
            let old = self.ops.get(e.op).ok_or_else(|| format!("edit of op {} past the end", e.op))?;
            if !old.is_settable() || !e.to.is_settable() || old.stream() != e.to.stream() {
                return Err(format!("edit of {} ({old}) to {}: not a kernel node change", label(e.op), e.to));
            }
            let (ob, nb) = (old.accesses()[0].buf, e.to.accesses()[0].buf);
            if nb >= self.buffers.len() {
                return Err(format!("edit of {}: undeclared buffer", label(e.op)));
            }
            if (ob != nb || old.word() != e.to.word())
                && !(self.buffers[ob].is_permanent() && self.buffers[nb].is_permanent())
            {
                return Err(format!("edit of {} changes the buffer or kernel of an async buffer", label(e.op)));
            }
            if let Op::Transform { mul, .. } = e.to {
                if mul % 2 == 0 {
                    return Err(format!("edit of {}: even multiplier", label(e.op)));
                }
            }
        }
        match u.whole {
            Some(w) if w > u.edits.len() => Err("the whole update is placed past the edits".into()),
            Some(_) if self.ops.iter().any(|o| matches!(o, Op::Alloc { .. })) => {
                Err("a whole-graph update of a graph with memory nodes".into())
            }
            None if u.add_node => Err("a node added with no whole update to reject it".into()),
            _ => Ok(()),
        }
    }

    /// For each op index, the ops it may stand for in some run: itself and every edit of it.
    pub fn candidates(&self, op: usize) -> Vec<Op> {
        let mut out = vec![self.ops[op]];
        if let Some(u) = &self.update {
            out.extend(u.edits.iter().filter(|e| e.op == op).map(|e| e.to));
        }
        out
    }

    fn check_op(&self, op: &Op, flavor: Flavor, recorded: &[bool]) -> Result<(), String> {
        let buf_ok = |b: usize| b < self.buffers.len();
        if op.stream() >= self.streams.len() {
            return Err("undeclared stream".into());
        }
        if op.accesses().iter().any(|a| !buf_ok(a.buf)) {
            return Err("undeclared buffer".into());
        }
        // The symbol is reached by the symbol copies alone, and they copy between it and another buffer.
        let symbol = |b: usize| self.buffers[b] == BufKind::Symbol;
        let symbols_touched = op.accesses().iter().filter(|a| symbol(a.buf)).count();
        let symbol_copy = matches!(op, Op::ToSymbol { .. } | Op::FromSymbol { .. });
        if symbols_touched != usize::from(symbol_copy) {
            return Err("the symbol is touched by a symbol copy alone, and a symbol copy touches it once".into());
        }
        match *op {
            Op::ToSymbol { bytes, .. } | Op::FromSymbol { bytes, .. } if bytes != self.buffer_bytes => {
                Err("a symbol copy that is not the whole buffer".into())
            }
            Op::Record { event, .. } | Op::Wait { event, .. } if event >= self.events => Err("undeclared event".into()),
            Op::Wait { event, .. } if flavor == Flavor::Capturable && !recorded[event] => {
                Err("waits on an event not yet recorded in this body (illegal inside a capture)".into())
            }
            Op::Transform { mul, .. } if mul % 2 == 0 => Err("even multiplier (not order-sensitive)".into()),
            Op::PeerCopy { .. } if flavor == Flavor::Capturable => {
                Err("a peer copy in a capturable program (a capture refuses cudaMemcpyPeerAsync)".into())
            }
            Op::BatchCopy { .. } if flavor == Flavor::Capturable => {
                Err("a batched copy in a capturable program (a capture refuses cudaMemcpyBatchAsync)".into())
            }
            Op::Compare { a, b, into, .. } if into == a || into == b => Err("compare writes an input".into()),
            Op::Copy { dst, src, .. }
            | Op::PeerCopy { dst, src, .. }
            | Op::BatchCopy { dst, src, .. }
            | Op::Copy2D { dst, src, .. }
                if dst == src =>
            {
                Err("copy onto itself".into())
            }
            Op::Copy2D { rows, .. } if rows * ROW_BYTES != self.buffer_bytes => {
                Err("a 2D copy that is not the whole buffer".into())
            }
            Op::Copy { dst, src, .. } | Op::Copy2D { dst, src, .. }
                if self.buffers[dst] == BufKind::Pinned && self.buffers[src] == BufKind::Pinned =>
            {
                Err("pinned-to-pinned copy (host-synchronous)".into())
            }
            Op::HostFunc { snapshot: Some(b), .. } if self.buffers[b] != BufKind::Pinned => {
                Err("snapshot of a buffer the host cannot read".into())
            }
            _ => Ok(()),
        }
    }

    /// Any two work ops touching the same buffer, at least one writing, must be ordered by the faithful model:
    /// otherwise the program races and no single expected result exists.
    pub fn check_race_free(&self) -> Result<(), String> {
        let hb = HappensBefore::build(self, ModelMode::Faithful);
        let work: Vec<usize> = self.work_ops().collect();
        for (x, &i) in work.iter().enumerate() {
            for &j in &work[x + 1..] {
                let conflicts = self.candidates(i).iter().any(|a| self.candidates(j).iter().any(|b| conflict(a, b)));
                if conflicts && !hb.before(i, j) {
                    return Err(format!(
                        "race: {} ({}) and {} ({}) are unordered",
                        label(i),
                        self.ops[i],
                        label(j),
                        self.ops[j]
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Op {
    /// The kernel's word, for telling a function change from a parameter change.
    pub fn word(&self) -> &'static str {
        match self {
            Op::Fill { .. } => "fill",
            Op::Transform { .. } => "transform",
            _ => "other",
        }
    }
}

/// Two ops conflict when they touch a common buffer and at least one of them writes it.
pub fn conflict(a: &Op, b: &Op) -> bool {
    a.accesses().iter().any(|x| b.accesses().iter().any(|y| x.buf == y.buf && (x.write || y.write)))
}

impl fmt::Display for Op {
    /// The op in the case language's words, without the label.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, b, e) = (stream_name, buffer_name, event_name);
        match *self {
            Op::Fill { stream, buf, value } => write!(f, "launch fill {} {value} on {}", b(buf), s(stream)),
            Op::Transform { stream, buf, mul, add } => {
                write!(f, "launch transform {} mul {mul} add {add} on {}", b(buf), s(stream))
            }
            Op::Compare { stream, a, b: bb, into } => {
                write!(f, "launch compare {} {} into {} on {}", b(a), b(bb), b(into), s(stream))
            }
            Op::Copy { stream, dst, src } => write!(f, "memcpy-async {} {} on {}", b(dst), b(src), s(stream)),
            Op::PeerCopy { stream, dst, src } => {
                write!(f, "memcpy-peer-async {} {} on {}", b(dst), b(src), s(stream))
            }
            Op::Memset { stream, buf, byte } => write!(f, "memset-async {} {byte} on {}", b(buf), s(stream)),
            Op::HostFunc { stream, snapshot: None } => write!(f, "host-func on {}", s(stream)),
            Op::HostFunc { stream, snapshot: Some(buf) } => {
                write!(f, "host-func on {} snapshot {}", s(stream), b(buf))
            }
            Op::Record { stream, event } => write!(f, "record {} on {}", e(event), s(stream)),
            Op::Wait { stream, event } => write!(f, "wait {} for {}", s(stream), e(event)),
            Op::Alloc { stream, buf } => write!(f, "malloc-async {} on {}", b(buf), s(stream)),
            Op::Free { stream, buf } => write!(f, "free-async {} on {}", b(buf), s(stream)),
            Op::BatchCopy { stream, dst, src } => write!(f, "memcpy-batch {} {} on {}", b(dst), b(src), s(stream)),
            Op::Copy2D { stream, dst, src, rows } => write!(
                f,
                "call cudaMemcpy2DAsync dst={} dpitch={ROW_BYTES} src={} spitch={ROW_BYTES} width={ROW_BYTES} \
                 height={rows} kind=cudaMemcpyDefault stream={}",
                b(dst),
                b(src),
                s(stream)
            ),
            Op::ToSymbol { stream, src, bytes, .. } => write!(
                f,
                "call cudaMemcpyToSymbolAsync symbol={PROBE_SYMBOL} src={} count={bytes} offset=0 kind=cudaMemcpyDefault \
                 stream={}",
                b(src),
                s(stream)
            ),
            Op::FromSymbol { stream, dst, bytes, .. } => write!(
                f,
                "call cudaMemcpyFromSymbolAsync dst={} symbol={PROBE_SYMBOL} count={bytes} offset=0 \
                 kind=cudaMemcpyDefault stream={}",
                b(dst),
                s(stream)
            ),
        }
    }
}
