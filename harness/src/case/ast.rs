//! The parsed form of a case file: what the parser produces, the validator checks, the executor runs and the
//! printer writes back. Names (streams, events, buffers, gates, threads, graphs, execs) and labels are plain
//! strings; the validator guarantees every reference resolves to a declaration of the right kind.
//!
//! Source positions live in [`SourceMap`], which compares equal to any other, so `parse(print(case)) == case`
//! holds even though the printed text has different line numbers.

/// One file under `cases/`: several cases.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseFile {
    pub path: String,
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Stable hierarchical id, e.g. `default-stream/legacy-waits-for-blocking`. Its first segment is the area.
    pub id: String,
    /// One sentence: the rule this case checks.
    pub rule: String,
    /// Where the rule is written: doc page and section, a public test, or a seed document.
    pub source: String,
    pub requires: Vec<Requirement>,
    pub decls: Vec<Decl>,
    pub script: Vec<Op>,
    pub expects: Vec<Expectation>,
    pub positions: SourceMap,
}

impl Case {
    /// The area is the first segment of the id (`capture/...` is in area `capture`).
    pub fn area(&self) -> &str {
        self.id.split('/').next().unwrap_or(&self.id)
    }
}

/// Line/column of each part of a case, for error messages. Ignored by `==`.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    pub file: String,
    /// Line of the `case` keyword.
    pub case_line: u32,
    /// Line of each declaration, in `decls` order.
    pub decl_lines: Vec<u32>,
    /// Line of each operation, in `script` order.
    pub op_lines: Vec<u32>,
    /// Line of each expectation, in `expects` order.
    pub expect_lines: Vec<u32>,
}

impl PartialEq for SourceMap {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Requirements

#[derive(Debug, Clone, PartialEq)]
pub enum Requirement {
    /// `concurrent-kernels`: cudaDevAttrConcurrentKernels == 1.
    ConcurrentKernels,
    /// `async-engines >= N`: cudaDevAttrAsyncEngineCount.
    AsyncEngines(u32),
    /// `devices >= N`.
    Devices(u32),
    /// `runtime >= MAJOR.MINOR`: cudaRuntimeGetVersion (e.g. 12.3 is 12030).
    Runtime(u32),
    /// `driver >= MAJOR.MINOR`: cudaDriverGetVersion.
    Driver(u32),
    /// `compute >= MAJOR.MINOR`: compute capability.
    Compute(u32, u32),
    /// `stream-priorities`: the device has more than one stream priority.
    StreamPriorities,
    /// `mapped-memory`: cudaDevAttrCanMapHostMemory (every gate needs it; implied by any `gate` declaration).
    MappedMemory,
}

// ---------------------------------------------------------------------------------------------------------------
// Declarations

#[derive(Debug, Clone, PartialEq)]
pub enum Decl {
    /// `stream NAME [blocking|non-blocking] [priority N|greatest|least] [flags N] [=> CODE | ...]`.
    /// `flags N` passes a raw flags word instead (to check that invalid flags are rejected). `expect` lists the
    /// acceptable codes of the creation (empty: cudaSuccess); a stream whose creation failed cannot be used.
    Stream { name: String, non_blocking: bool, priority: Option<Priority>, raw_flags: Option<u32>, expect: Vec<String> },
    /// `event NAME [disable-timing] [blocking-sync] [interprocess] [flags N] [=> CODE | ...]`, as for streams.
    Event { name: String, flags: EventFlags, raw_flags: Option<u32>, expect: Vec<String> },
    /// `buffer NAME KIND SIZE`: SIZE in bytes, a multiple of 4 (`4096`, `4KiB`, `1MiB`). Starts zeroed.
    Buffer { name: String, kind: MemKind, bytes: u64 },
    /// `gate NAME`: a flag in mapped pinned host memory; closed until the host opens it.
    Gate { name: String },
    /// `thread NAME`: a host thread that runs the operations addressed to it with `@NAME`.
    Thread { name: String },
    /// `graph NAME`: a `cudaGraph_t` slot, filled by `end-capture ... into NAME`.
    Graph { name: String },
    /// `exec NAME`: a `cudaGraphExec_t` slot, filled by `instantiate NAME from GRAPH`.
    Exec { name: String },
}

impl Decl {
    pub fn name(&self) -> &str {
        match self {
            Decl::Stream { name, .. }
            | Decl::Event { name, .. }
            | Decl::Buffer { name, .. }
            | Decl::Gate { name }
            | Decl::Thread { name }
            | Decl::Graph { name }
            | Decl::Exec { name } => name,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Priority {
    Value(i32),
    /// The numerically lowest value of cudaDeviceGetStreamPriorityRange (highest priority).
    Greatest,
    /// The numerically highest value (lowest priority, the default).
    Least,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EventFlags {
    pub disable_timing: bool,
    pub blocking_sync: bool,
    pub interprocess: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// `device`: cudaMalloc.
    Device,
    /// `pinned`: cudaMallocHost (page-locked; device-accessible through unified addressing).
    Pinned,
    /// `pageable`: ordinary host memory (a Rust allocation). Kernels cannot touch it.
    Pageable,
    /// `mapped`: cudaHostAlloc(cudaHostAllocMapped); kernels use its cudaHostGetDevicePointer alias.
    Mapped,
}

impl MemKind {
    pub fn is_host(self) -> bool {
        !matches!(self, MemKind::Device)
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Streams as operands

/// A stream operand: a declared stream or one of the built-in default streams.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StreamRef {
    /// `legacy`: cudaStreamLegacy (0x1).
    Legacy,
    /// `per-thread`: cudaStreamPerThread (0x2), the per-thread default stream of the thread running the op.
    PerThread,
    /// `null`: the handle 0, which the runtime entry points we call treat as the legacy stream.
    Null,
    Named(String),
}

// ---------------------------------------------------------------------------------------------------------------
// Operations

/// One line of the script: `[LABEL:] [@THREAD] OPERATION [=> CODE | CODE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// Names this operation for expectations (stamps, blocking oracle, graph nodes, host-function order).
    pub label: Option<String>,
    /// Host thread that runs it; `None` is the case's main thread.
    pub thread: Option<String>,
    pub kind: OpKind,
    /// Acceptable return codes (cudaError names such as `cudaSuccess`). Empty means `cudaSuccess` only.
    pub expect: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// `launch gate GATE on STREAM`: a 1-thread kernel spinning until the gate opens (or its timeout fires).
    LaunchGate { gate: String, stream: StreamRef },
    /// `launch spin [DURATION] on STREAM`: records %globaltimer at entry and exit, spinning DURATION ns between.
    LaunchSpin { ns: u64, stream: StreamRef },
    /// `launch fill BUF VALUE on STREAM`: every u32 of BUF becomes VALUE.
    LaunchFill { buf: String, value: u32, stream: StreamRef },
    /// `launch transform BUF mul A add B on STREAM`: every u32 x of BUF becomes x*A + B (wrapping).
    LaunchTransform { buf: String, mul: u32, add: u32, stream: StreamRef },
    /// `launch compare A B into R on STREAM`: R[0] becomes the number of indices where A and B differ.
    LaunchCompare { a: String, b: String, into: String, stream: StreamRef },
    /// `memcpy DST SRC [BYTES]` (cudaMemcpy) or `memcpy-async DST SRC [BYTES] on STREAM` (cudaMemcpyAsync).
    /// The cudaMemcpyKind follows from the buffers' kinds. BYTES defaults to the smaller buffer.
    Memcpy { dst: String, src: String, bytes: Option<u64>, stream: Option<StreamRef> },
    /// `memset BUF BYTE [BYTES]` (cudaMemset) or `memset-async BUF BYTE [BYTES] on STREAM`.
    Memset { buf: String, byte: u8, bytes: Option<u64>, stream: Option<StreamRef> },
    /// `record EVENT on STREAM [external]` (cudaEventRecord, or cudaEventRecordWithFlags(cudaEventRecordExternal)).
    Record { event: String, stream: StreamRef, external: bool },
    /// `wait STREAM for EVENT [external]` (cudaStreamWaitEvent, flags cudaEventWaitExternal if `external`).
    Wait { stream: StreamRef, event: String, external: bool },
    /// `query STREAM|EVENT` (cudaStreamQuery / cudaEventQuery).
    Query { target: Target },
    /// `sync STREAM|EVENT` (cudaStreamSynchronize / cudaEventSynchronize).
    Sync { target: Target },
    /// `device-sync` (cudaDeviceSynchronize).
    DeviceSync,
    /// `elapsed START STOP` (cudaEventElapsedTime); the value is recorded in the trace.
    Elapsed { start: String, stop: String },
    /// `host-func on STREAM [snapshot BUF]` (cudaLaunchHostFunc): appends its label to the host log when it runs,
    /// and copies BUF (a host-visible buffer) at that moment if asked.
    HostFunc { stream: StreamRef, snapshot: Option<String> },
    /// `callback on STREAM` (cudaStreamAddCallback): records its status argument when it runs.
    Callback { stream: StreamRef },
    /// `begin-capture STREAM [global|thread-local|relaxed]` (cudaStreamBeginCapture; default global).
    BeginCapture { stream: StreamRef, mode: CaptureMode },
    /// `end-capture STREAM into GRAPH` (cudaStreamEndCapture).
    EndCapture { stream: StreamRef, graph: String },
    /// `capture-status STREAM is none|active|invalidated` (cudaStreamIsCapturing; the status is asserted).
    CaptureStatus { stream: StreamRef, status: CaptureStatus },
    /// `capture-deps STREAM is N` (cudaStreamGetCaptureInfo: the number of current capture dependencies).
    CaptureDeps { stream: StreamRef, count: u32 },
    /// `pointer-type BUF is unregistered|host|device|managed` (cudaPointerGetAttributes on BUF's address; the
    /// memory type is asserted).
    PointerType { buf: String, memory: MemoryType },
    /// `exchange-capture-mode MODE` (cudaThreadExchangeStreamCaptureMode for the running thread).
    ExchangeCaptureMode { mode: CaptureMode },
    /// `instantiate EXEC from GRAPH` (cudaGraphInstantiate, flags 0).
    Instantiate { exec: String, graph: String },
    /// `launch-graph EXEC on STREAM` (cudaGraphLaunch).
    LaunchGraph { exec: String, stream: StreamRef },
    /// `upload EXEC on STREAM` (cudaGraphUpload).
    Upload { exec: String, stream: StreamRef },
    /// `destroy NAME`: cudaStreamDestroy / cudaEventDestroy / cudaGraphDestroy / cudaGraphExecDestroy.
    Destroy { name: String },
    /// `malloc BYTES` (cudaMalloc; freed at cleanup): an allocation at this point of the script.
    Malloc { bytes: u64 },
    /// `get-last-error` (cudaGetLastError: returns and clears the thread's last error; its code is checked).
    GetLastError,
    /// `open GATE` (now) or `open GATE after DURATION` (from a helper thread, DURATION ns from now).
    Open { gate: String, after_ns: Option<u64> },
    /// `sleep DURATION`: the running thread sleeps. Never a correctness device; only lets a scheduled thing happen.
    Sleep { ns: u64 },
}

/// The operand of `query` and `sync`: resolved by the validator to a stream or an event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Stream(StreamRef),
    Event(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    Global,
    ThreadLocal,
    Relaxed,
}

/// What cudaPointerGetAttributes says an address is (`cudaMemoryType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// Memory CUDA knows nothing about (ordinary pageable host memory).
    Unregistered,
    /// Page-locked host memory (cudaMallocHost, cudaHostAlloc, cudaHostRegister).
    Host,
    Device,
    Managed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureStatus {
    None,
    Active,
    Invalidated,
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations

/// `expect PREDICATE` (fail if false), `quality PREDICATE` (quality-warning if false; for behaviour the docs do
/// not promise, such as overlap), or `variant NAME: PREDICATE | NAME: PREDICATE ...` (the docs allow each;
/// the verdict is `variant` naming the first that held, and fail if none held).
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    Expect(Predicate),
    Quality(Predicate),
    Variant(Vec<(String, Predicate)>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// `A before B`: stamps of kernel launches A and B; B started at or after A ended.
    Before { first: String, second: String },
    /// `A overlaps B`: the two kernels' stamp intervals intersect.
    Overlaps { a: String, b: String },
    /// `OP waited-for GATE`: operation OP returned after GATE was opened (the blocking oracle).
    WaitedFor { op: String, gate: String },
    /// `OP not-waited-for GATE`: OP returned before GATE was opened.
    NotWaitedFor { op: String, gate: String },
    /// `OP returned CODE`: OP's return code was CODE (with `=>` allowing several, this picks one).
    Returned { op: String, code: String },
    /// `BUF == VALUE` (every u32) or `BUF[INDEX] == VALUE`, read after the script and a device synchronize.
    BufferEquals { buf: String, index: Option<u64>, value: u32 },
    /// `GATE timed-out`: the gate's in-kernel timeout fired (an unexpected timeout always fails the case).
    TimedOut { gate: String },
    /// `host-order L1 L2 ...`: these host functions/callbacks ran, in this order.
    HostOrder { labels: Vec<String> },
    /// `snapshot L == VALUE`: host function L saw every u32 of its snapshot buffer equal to VALUE.
    SnapshotEquals { label: String, value: u32 },
    /// `callback L status CODE`: the callback's status argument.
    CallbackStatus { label: String, code: String },
    /// `elapsed L > MS` / `elapsed L >= MS` (milliseconds, may be fractional): the value `elapsed` returned.
    ElapsedAbove { label: String, ms: f64, inclusive: bool },
    /// `nodes GRAPH == N`.
    NodeCount { graph: String, count: u32 },
    /// `edges GRAPH == N`.
    EdgeCount { graph: String, count: u32 },
    /// `edge GRAPH A -> B`: a direct edge between the nodes captured from ops A and B.
    Edge { graph: String, from: String, to: String },
    /// `no-edge GRAPH A -> B`: no direct edge.
    NoEdge { graph: String, from: String, to: String },
    /// `path GRAPH A -> B`: B is reachable from A (transitively).
    Path { graph: String, from: String, to: String },
    /// `no-path GRAPH A -> B`.
    NoPath { graph: String, from: String, to: String },
}
