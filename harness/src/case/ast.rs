//! The parsed form of a case file: what the parser produces, the validator checks, the executor runs and the
//! printer writes back. Names (streams, events, buffers, gates, threads, graphs, execs) and labels are plain
//! strings; the validator guarantees every reference resolves to a declaration of the right kind.
//!
//! Source positions live in [`SourceMap`], which compares equal to any other, so `parse(print(case)) == case`
//! holds even though the printed text has different line numbers.

use super::words::{words, BuiltinStream, DeclWord, DeviceLaunchMode, KernelWord, RequirementWord, Word};

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
    /// `env: NAME=VALUE ...`: environment variables of the process that runs the case (e.g.
    /// `CUDA_MODULE_LOADING=EAGER`), set by the runner in the case's child process.
    pub env: Vec<(String, String)>,
    /// `own-process: REASON`: the case changes (or must read untouched) state of its process that a later case would
    /// see, such as the device flags, a kernel's attributes or the driver's log, so it runs in a fresh process of its
    /// own. The reason says which state.
    pub own_process: Option<String>,
    /// `poisons-context: CODE | ...`: the case leaves a sticky error on purpose; the device synchronize after the
    /// script must return one of these codes. Empty: it must return cudaSuccess.
    pub poisons: Vec<String>,
    /// `timing: events [from LABEL]`: every copy, memset, kernel launch and graph launch of the script (from the
    /// operation labelled LABEL on) is bracketed by two events on its stream, so the report has each one's device
    /// interval (`measure ... device|bandwidth`, the timeline). `None`: only kernels have device times (their
    /// `%globaltimer` stamps).
    pub timing: Option<TimingSpec>,
    /// `samples: N`: after the run that decides the verdict, the runner runs the script N − 1 more times in the same
    /// process and keeps every run's `measure` values, so that a figure is a distribution (median, min, max), not
    /// one measurement. 1 (the default): one run. Only the first run decides the verdict and gives the timeline.
    pub samples: u32,
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

    /// A case that must not share its process: process-wide `env:` settings, process state it changes or must read
    /// untouched (`own-process:`), or a sticky error on purpose.
    pub fn needs_own_process(&self) -> bool {
        !self.env.is_empty() || self.own_process.is_some() || !self.poisons.is_empty()
    }

    /// Whether `timing:` brackets operation `index` with events: it does device work, at or after the `from` label.
    pub fn is_timed(&self, index: usize) -> bool {
        let Some(timing) = &self.timing else { return false };
        let from = timing.from.as_ref().and_then(|l| self.script.iter().position(|o| o.label.as_ref() == Some(l)));
        index >= from.unwrap_or(0) && self.script.get(index).is_some_and(|o| o.kind.has_device_work())
    }
}

/// `timing: SOURCE [from LABEL]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingSpec {
    pub source: Timing,
    /// The first operation timed (earlier ones, such as a long initialisation, are not: their events would only
    /// stretch the timeline).
    pub from: Option<String>,
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
    /// The case as written, its lines from `case` to `end`: what a worker process is sent, to parse and validate
    /// this case again with the line numbers of its file (see [`crate::case::parse_one`]).
    pub text: String,
}

impl PartialEq for SourceMap {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

words! {
    /// How a case times its device work (`timing: WORD`).
    pub enum Timing: "a timing source" {
        /// cudaEventRecord before and after each operation, read with cudaEventElapsedTime against an origin
        /// event recorded before the script.
        Events = "events",
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
    /// `connections >= N`: CUDA_DEVICE_MAX_CONNECTIONS of the run's environment (8 when unset) is at least N, so
    /// N unrelated streams can have hardware queues of their own instead of being serialised in one.
    Connections(u32),
    /// `memory-pools`: cudaDevAttrMemoryPoolsSupported (cudaMallocAsync and pools).
    MemoryPools,
    /// `peer-access`: cudaDeviceCanAccessPeer is 1 in both directions between every two of the case's devices
    /// (`devices >= N` says how many).
    PeerAccess,
    // Managed memory
    /// `concurrent-managed-access`: cudaDevAttrConcurrentManagedAccess == 1 (the host may touch managed memory
    /// while kernels run, and prefetch/advise act on the device).
    ConcurrentManagedAccess,
    /// `pageable-memory-access`: cudaDevAttrPageableMemoryAccess == 1 (kernels may use pageable host memory: HMM
    /// or ATS).
    PageableMemoryAccess,
    /// `no-driver`: no NVIDIA driver is installed (cudaDriverGetVersion reports 0): the case runs on a CPU-only
    /// host, through `tests/no_driver.rs`, and is *not-supported* wherever a GPU runs it.
    NoDriver,
    /// `memory < SIZE`: the device has less memory than SIZE (cudaDeviceProp::totalGlobalMem): for a request that
    /// must be larger than the device, where the largest request the call accepts is SIZE (a 2D array of the
    /// largest dimensions is 128 GiB, which an H200's 141 GiB holds).
    MemoryBelow(u64),
    /// `vulkan`: a Vulkan loader and driver are present and a Vulkan device with this GPU's UUID exports memory
    /// and semaphores as opaque FDs (`device::vulkan`): the external-resource cases.
    Vulkan,
}

impl Requirement {
    pub fn word(&self) -> RequirementWord {
        match self {
            Requirement::ConcurrentKernels => RequirementWord::ConcurrentKernels,
            Requirement::AsyncEngines(_) => RequirementWord::AsyncEngines,
            Requirement::Devices(_) => RequirementWord::Devices,
            Requirement::Runtime(_) => RequirementWord::Runtime,
            Requirement::Driver(_) => RequirementWord::Driver,
            Requirement::Compute(..) => RequirementWord::Compute,
            Requirement::StreamPriorities => RequirementWord::StreamPriorities,
            Requirement::MappedMemory => RequirementWord::MappedMemory,
            Requirement::Connections(_) => RequirementWord::Connections,
            Requirement::MemoryPools => RequirementWord::MemoryPools,
            Requirement::PeerAccess => RequirementWord::PeerAccess,
            // Managed memory
            Requirement::ConcurrentManagedAccess => RequirementWord::ConcurrentManagedAccess,
            Requirement::PageableMemoryAccess => RequirementWord::PageableMemoryAccess,
            Requirement::NoDriver => RequirementWord::NoDriver,
            Requirement::Vulkan => RequirementWord::Vulkan,
            Requirement::MemoryBelow(_) => RequirementWord::Memory,
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Declarations

/// Every byte of a declared buffer (not `later`) when the script starts: written by the harness at creation (device
/// memory by `cudaMemset`, host memory on the host), so every byte a case reads is defined (initcheck sees a
/// write), yet no check passes on memory the script never wrote by accident: no value a case computes is this
/// one (the lint flags a check that expects it), and a zero check fails on untouched memory.
pub const INITIAL_BYTE: u8 = 0xCD;
/// One u32 word of [`INITIAL_BYTE`]s: what an untouched word of a declared buffer reads as.
pub const INITIAL_WORD: u32 = u32::from_ne_bytes([INITIAL_BYTE; 4]);

#[derive(Debug, Clone, PartialEq)]
pub enum Decl {
    /// `stream NAME [blocking|non-blocking] [priority N|greatest|least] [flags N] [=> CODE | ...]`.
    /// `flags N` passes a raw flags word instead (to check that invalid flags are rejected). `expect` lists the
    /// acceptable codes of the creation (empty: cudaSuccess); a stream whose creation failed cannot be used.
    /// `later` (before `=>`): not created before the script; the operation `create NAME` creates it.
    /// `device N`: created with the case's device N current (see [`Case::device_count`]); absent, device 0.
    Stream {
        name: String,
        non_blocking: bool,
        priority: Option<Priority>,
        raw_flags: Option<u32>,
        later: bool,
        device: Option<u32>,
        expect: Vec<String>,
    },
    /// `event NAME [disable-timing] [blocking-sync] [interprocess] [flags N] [later] [device N] [=> CODE | ...]`,
    /// as for streams.
    Event {
        name: String,
        flags: EventFlags,
        raw_flags: Option<u32>,
        later: bool,
        device: Option<u32>,
        expect: Vec<String>,
    },
    /// `buffer NAME KIND SIZE [device N] [later]`: SIZE in bytes, a multiple of 4 (`4096`, `4KiB`, `1MiB`). Starts
    /// with every byte [`INITIAL_BYTE`], unless `later`: then `create NAME` (or `malloc-async`) allocates it and its contents are undefined
    /// until written. Pageable buffers cannot be `later` (creating them is no CUDA call). `device N` (device memory
    /// only): allocated on the case's device N.
    Buffer { name: String, kind: MemKind, bytes: u64, device: Option<u32>, later: bool },
    /// `gate NAME`: a flag in mapped pinned host memory; closed until the host opens it.
    Gate { name: String },
    /// `thread NAME`: a host thread that runs the operations addressed to it with `@NAME`.
    Thread { name: String },
    /// `graph NAME`: a `cudaGraph_t` slot, filled by `end-capture ... into NAME`.
    Graph { name: String },
    /// `exec NAME`: a `cudaGraphExec_t` slot, filled by `instantiate NAME from GRAPH`.
    Exec { name: String },
    /// `pool NAME [default]`: a memory pool of the case's device, created with cudaMemPoolCreate (pinned device
    /// memory, no IPC handle), or the device's default pool (cudaDeviceGetDefaultMemPool) with `default`.
    Pool {
        name: String,
        default: bool,
        /// `pool NAME posix-fd`: created with handleTypes = cudaMemHandleTypePosixFileDescriptor,
        /// so it can be exported (`pool-export`).
        posix_fd: bool,
    },
    /// `condition NAME`: a `cudaGraphConditionalHandle` slot, filled by `condition-create NAME in GRAPH`.
    Condition { name: String },
    /// `slice NAME of BUF at OFFSET size BYTES`: the bytes [OFFSET, OFFSET + BYTES) of buffer BUF under a name of
    /// their own, usable wherever a buffer is (a copy's operand, a kernel's argument): the `d_A + offset` of a
    /// program that works on chunks of one allocation. It owns nothing: BUF's memory, kind and contents.
    Slice { name: String, of: String, offset: u64, bytes: u64 },
    // A second process of the case
    /// `process NAME`: another process of the case (the same binary, started by the executor before the script),
    /// with every declared object of its own; `@NAME` in front of an operation runs it there. IPC handles the
    /// operations get pass between the processes with each operation (see `exec/peer.rs`).
    Process { name: String },
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
            | Decl::Exec { name }
            | Decl::Pool { name, .. }
            | Decl::Condition { name }
            | Decl::Slice { name, .. }
            | Decl::Process { name } => name,
        }
    }

    pub fn word(&self) -> DeclWord {
        match self {
            Decl::Stream { .. } => DeclWord::Stream,
            Decl::Event { .. } => DeclWord::Event,
            Decl::Buffer { .. } => DeclWord::Buffer,
            Decl::Gate { .. } => DeclWord::Gate,
            Decl::Thread { .. } => DeclWord::Thread,
            Decl::Graph { .. } => DeclWord::Graph,
            Decl::Exec { .. } => DeclWord::Exec,
            Decl::Pool { .. } => DeclWord::Pool,
            Decl::Condition { .. } => DeclWord::Condition,
            Decl::Slice { .. } => DeclWord::Slice,
            Decl::Process { .. } => DeclWord::Process,
        }
    }

    /// The case device a stream, event or device buffer is created on, as written (`None`: not written, so device
    /// 0 for what is created before the script, the thread's current device for what `create` makes).
    pub fn device(&self) -> Option<u32> {
        match self {
            Decl::Stream { device, .. } | Decl::Event { device, .. } | Decl::Buffer { device, .. } => *device,
            Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Graph { .. }
            | Decl::Exec { .. }
            | Decl::Pool { .. }
            | Decl::Condition { .. }
            | Decl::Process { .. } => None,
            // A slice is on its buffer's device.
            Decl::Slice { .. } => None,
        }
    }

    /// Declared `later`: created by the script's `create` (or `malloc-async`), not before the script.
    pub fn is_later(&self) -> bool {
        match self {
            Decl::Stream { later, .. } | Decl::Event { later, .. } | Decl::Buffer { later, .. } => *later,
            Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Graph { .. }
            | Decl::Exec { .. }
            | Decl::Pool { .. }
            | Decl::Condition { .. }
            | Decl::Slice { .. }
            | Decl::Process { .. } => false,
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

words! {
    pub enum MemKind: "a memory kind" {
        /// cudaMalloc.
        Device = "device",
        /// cudaMallocHost (page-locked; device-accessible through unified addressing).
        Pinned = "pinned",
        /// Ordinary host memory (a Rust allocation). Kernels cannot touch it.
        Pageable = "pageable",
        /// cudaHostAlloc(cudaHostAllocMapped); kernels use its cudaHostGetDevicePointer alias.
        Mapped = "mapped",
        // Managed memory
        /// cudaMallocManaged(cudaMemAttachGlobal): one pointer for the host and every device; the host reads and
        /// writes it directly, kernels and copies use the same address.
        Managed = "managed",
    }
}

impl MemKind {
    pub fn is_host(self) -> bool {
        !matches!(self, MemKind::Device | MemKind::Managed)
    }

    /// Whether the host may read the memory through its pointer (host memory, and managed memory).
    pub fn host_readable(self) -> bool {
        self.is_host() || self == MemKind::Managed
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

impl StreamRef {
    /// The word of a built-in stream, or the declared name.
    pub fn name(&self) -> &str {
        match self {
            StreamRef::Legacy => BuiltinStream::Legacy.word(),
            StreamRef::PerThread => BuiltinStream::PerThread.word(),
            StreamRef::Null => BuiltinStream::Null.word(),
            StreamRef::Named(name) => name,
        }
    }
}

impl From<BuiltinStream> for StreamRef {
    fn from(b: BuiltinStream) -> Self {
        match b {
            BuiltinStream::Legacy => StreamRef::Legacy,
            BuiltinStream::PerThread => StreamRef::PerThread,
            BuiltinStream::Null => StreamRef::Null,
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Operations

words! {
    /// The words that start an operation, one per row of the table of facts ([`OpKind::facts`] maps each operation
    /// to its word). Beside [`OpKind`] so that a new operation starts in this file: its word, its variant, its row.
    pub enum OpWord: "an operation" {
        Launch = "launch",
        Memcpy = "memcpy",
        MemcpyAsync = "memcpy-async",
        Memset = "memset",
        MemsetAsync = "memset-async",
        Record = "record",
        Wait = "wait",
        Query = "query",
        Sync = "sync",
        DeviceSync = "device-sync",
        Elapsed = "elapsed",
        HostFunc = "host-func",
        Callback = "callback",
        BeginCapture = "begin-capture",
        EndCapture = "end-capture",
        CaptureStatus = "capture-status",
        CaptureDeps = "capture-deps",
        ExchangeCaptureMode = "exchange-capture-mode",
        PointerType = "pointer-type",
        Instantiate = "instantiate",
        Update = "update",
        AddNode = "add-node",
        AddDeps = "add-deps",
        RemoveDeps = "remove-deps",
        Clone = "clone",
        DestroyNode = "destroy-node",
        List = "list",
        SetNode = "set-node",
        ExecSetNode = "exec-set-node",
        Enable = "enable",
        IsEnabled = "is-enabled",
        BeginCaptureToGraph = "begin-capture-to-graph",
        UpdateCaptureDeps = "update-capture-deps",
        ConditionCreate = "condition-create",
        PoolSet = "pool-set",
        PoolGet = "pool-get",
        PoolTrim = "pool-trim",
        GraphMemTrim = "graph-mem-trim",
        GraphMemGet = "graph-mem-get",
        LaunchGraph = "launch-graph",
        Upload = "upload",
        Create = "create",
        Destroy = "destroy",
        Malloc = "malloc",
        MallocAsync = "malloc-async",
        FreeAsync = "free-async",
        Register = "register",
        Unregister = "unregister",
        SetDevice = "set-device",
        GetDevice = "get-device",
        EnablePeerAccess = "enable-peer-access",
        DisablePeerAccess = "disable-peer-access",
        CanAccessPeer = "can-access-peer",
        MemcpyPeer = "memcpy-peer",
        MemcpyPeerAsync = "memcpy-peer-async",
        SetLimit = "set-limit",
        SetCacheConfig = "set-cache-config",
        StreamPriority = "stream-priority",
        StreamFlags = "stream-flags",
        Read = "read",
        GetLastError = "get-last-error",
        PeekLastError = "peek-last-error",
        Open = "open",
        Sleep = "sleep",
        // Batched copies, stream identity, stream and kernel-node attributes.
        MemcpyBatch = "memcpy-batch",
        Memcpy3dBatch = "memcpy-3d-batch",
        StreamDevice = "stream-device",
        StreamId = "stream-id",
        StreamAttr = "stream-attr",
        SetStreamAttr = "set-stream-attr",
        CopyStreamAttrs = "copy-stream-attrs",
        NodeAttr = "node-attr",
        SetNodeAttr = "set-node-attr",
        // Managed memory, IPC, user objects, device facts, the launch queue
        Attach = "attach",
        Prefetch = "prefetch",
        Advise = "advise",
        MallocManaged = "malloc-managed",
        DeviceAttr = "device-attr",
        DeviceCount = "device-count",
        IpcMemHandle = "ipc-mem-handle",
        IpcOpenMem = "ipc-open-mem",
        IpcCloseMem = "ipc-close-mem",
        IpcEventHandle = "ipc-event-handle",
        IpcOpenEvent = "ipc-open-event",
        PoolExport = "pool-export",
        UserObject = "user-object",
        RetainUserObject = "retain-user-object",
        ReleaseUserObject = "release-user-object",
        Destroyed = "destroyed",
        QueueDepth = "queue-depth",
        // Vulkan objects for the external-resource calls (`device::vulkan`)
        VkMemory = "vk-memory",
        VkSemaphore = "vk-semaphore",
        VkWrite = "vk-write",
        VkRead = "vk-read",
        VkCounter = "vk-counter",
        // Any function of the API table, by name (`case/call.rs`)
        Call = "call",
    }
}

/// The codes an operation or declaration accepts from what it wrote after `=>` (its `expect`): those codes, or
/// `cudaSuccess` where it wrote none. The one statement of that rule: the executor records it, the verdict judges by
/// it, the reproducer prints it and coverage counts it.
pub fn accepted_codes(expect: &[String]) -> Vec<String> {
    if expect.is_empty() {
        vec!["cudaSuccess".to_owned()]
    } else {
        expect.to_vec()
    }
}

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
    /// `repeat N` before the operation: the call is made N times back to back (1: once). The record spans all N
    /// calls (host times from the first call to the last return, device times likewise), so a `measure ... per N`
    /// gives the cost of one.
    pub repeat: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// `launch KERNEL ARGS on STREAM [SHAPE]`: one probe kernel (`kernels/probes.cu`) with its arguments.
    Launch { kernel: KernelCall, stream: StreamRef },
    /// `memcpy DST SRC [BYTES] [default]` (cudaMemcpy) or `memcpy-async DST SRC [BYTES] [default] on STREAM`
    /// (cudaMemcpyAsync). The cudaMemcpyKind follows from the buffers' kinds, or with `default` (`inferred`) is
    /// cudaMemcpyDefault: the runtime infers the direction and the devices from the pointers (unified addressing).
    /// BYTES defaults to the smaller buffer.
    Memcpy { dst: String, src: String, bytes: Option<u64>, inferred: bool, stream: Option<StreamRef> },
    /// `memcpy-peer DST SRC [BYTES]` (cudaMemcpyPeer) or `memcpy-peer-async DST SRC [BYTES] on STREAM`
    /// (cudaMemcpyPeerAsync): a copy between device buffers, with each buffer's device as dstDevice and srcDevice.
    MemcpyPeer { dst: String, src: String, bytes: Option<u64>, stream: Option<StreamRef> },
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
    /// `hold GATE`: the function then blocks on the host until GATE opens (by `open`, or by the watchdog).
    HostFunc { stream: StreamRef, snapshot: Option<String>, hold: Option<String> },
    /// `callback on STREAM` (cudaStreamAddCallback): records its status argument when it runs.
    Callback { stream: StreamRef },
    /// `begin-capture STREAM [global|thread-local|relaxed]` (cudaStreamBeginCapture; default global).
    BeginCapture { stream: StreamRef, mode: CaptureMode },
    /// `end-capture STREAM into GRAPH` (cudaStreamEndCapture).
    EndCapture { stream: StreamRef, graph: String },
    /// `capture-status STREAM is none|active|invalidated` (cudaStreamIsCapturing; the status is asserted).
    CaptureStatus { stream: StreamRef, status: CaptureStatus },
    /// `capture-deps STREAM is N [on L ...]` (cudaStreamGetCaptureInfo: the number of current capture dependencies,
    /// and with `on`, exactly the nodes the labels name, in any order). The edge data is recorded in the trace.
    CaptureDeps { stream: StreamRef, count: u32, nodes: Vec<String> },
    /// `pointer-type BUF is unregistered|host|device|managed` (cudaPointerGetAttributes on BUF's address; the
    /// memory type is asserted).
    PointerType { buf: String, memory: MemoryType },
    /// `exchange-capture-mode MODE` (cudaThreadExchangeStreamCaptureMode for the running thread).
    ExchangeCaptureMode { mode: CaptureMode },
    /// `instantiate EXEC from GRAPH [FLAG ...] [upload STREAM] [with-params]`: cudaGraphInstantiateWithFlags, or
    /// cudaGraphInstantiateWithParams (its result code and error node are recorded) with `with-params`. `upload S`
    /// sets cudaGraphInstantiateFlagUpload with S as the upload stream (only the params form has one).
    Instantiate {
        exec: String,
        graph: String,
        flags: Vec<InstantiateFlag>,
        upload: Option<StreamRef>,
        with_params: bool,
    },
    /// `update EXEC from GRAPH` (cudaGraphExecUpdate): the result info (result, error node, error-from node) is
    /// recorded for `result`, `error-node` and `error-from`.
    Update { exec: String, graph: String },
    /// `add-node GRAPH NODE [after L ...]`: a node added through the graph API (cudaGraphAdd*Node) with the nodes
    /// the labels name as dependencies. The operation's label names the node.
    AddNode { graph: String, node: NodeSpec, after: Vec<String> },
    /// `add-deps GRAPH A -> B` (cudaGraphAddDependencies) / `remove-deps GRAPH A -> B` (cudaGraphRemoveDependencies).
    Dependency { graph: String, from: String, to: String, remove: bool },
    /// `clone COPY from GRAPH` (cudaGraphClone into the graph slot COPY).
    Clone { copy: String, graph: String },
    /// `destroy-node L` (cudaGraphDestroyNode of the node operation L added).
    DestroyNode { node: String },
    /// `list nodes|root-nodes|edges GRAPH [room N]`: the count/buffer protocol of cudaGraphGetNodes,
    /// cudaGraphGetRootNodes and cudaGraphGetEdges. The count is asked with a null buffer, then the list with a
    /// buffer of N entries (default: the count); the count returned is the value (`L value == N`), and `L
    /// null-padded` says whether the entries past it were set to NULL.
    List { what: ListWord, graph: String, room: Option<u32> },
    /// `set-node L NODE` (cudaGraph{Kernel,Memcpy,Memset,Host}NodeSetParams on the template graph) or
    /// `exec-set-node EXEC L NODE` (cudaGraphExec{Kernel,Memcpy,Memset,Host}NodeSetParams): new parameters for the
    /// node operation L added; NODE must be of the same kind.
    SetNode { exec: Option<String>, node: String, spec: NodeSpec },
    /// `enable EXEC L on|off` (cudaGraphNodeSetEnabled).
    SetEnabled { exec: String, node: String, enabled: bool },
    /// `is-enabled EXEC L` (cudaGraphNodeGetEnabled): the value is 1 or 0.
    GetEnabled { exec: String, node: String },
    /// `begin-capture-to-graph STREAM into GRAPH [after L ...] [MODE]` (cudaStreamBeginCaptureToGraph): captured
    /// nodes go into an existing graph, the first depending on the nodes named.
    BeginCaptureToGraph { stream: StreamRef, graph: String, after: Vec<String>, mode: CaptureMode },
    /// `update-capture-deps STREAM add|set L ...` (cudaStreamUpdateCaptureDependencies with
    /// cudaStreamAddCaptureDependencies or cudaStreamSetCaptureDependencies).
    UpdateCaptureDeps { stream: StreamRef, set: bool, nodes: Vec<String> },
    /// `condition-create COND in GRAPH [default N]` (cudaGraphConditionalHandleCreate; `default` sets
    /// cudaGraphCondAssignDefault with N as the value applied at the start of each launch).
    ConditionCreate { condition: String, graph: String, default: Option<u32> },
    /// `pool-set POOL ATTR VALUE` (cudaMemPoolSetAttribute; VALUE a size, a number, or `max`).
    PoolSet { pool: String, attr: PoolAttr, value: u64 },
    /// `pool-get POOL ATTR` (cudaMemPoolGetAttribute): the value, for `L value ...`.
    PoolGet { pool: String, attr: PoolAttr },
    /// `pool-trim POOL BYTES` (cudaMemPoolTrimTo).
    PoolTrim { pool: String, keep: u64 },
    /// `graph-mem-trim` (cudaDeviceGraphMemTrim).
    GraphMemTrim,
    /// `graph-mem-get ATTR` (cudaDeviceGetGraphMemAttribute): the value, for `L value ...`.
    GraphMemGet { attr: GraphMemAttr },
    /// `launch-graph EXEC on STREAM` (cudaGraphLaunch).
    LaunchGraph { exec: String, stream: StreamRef },
    /// `upload EXEC on STREAM` (cudaGraphUpload).
    Upload { exec: String, stream: StreamRef },
    /// `create NAME` of a `later` declaration: cudaStreamCreateWithPriority / cudaEventCreateWithFlags /
    /// cudaMalloc (device) / cudaMallocHost (pinned) / cudaHostAlloc mapped (mapped).
    Create { name: String },
    /// `destroy NAME`: cudaStreamDestroy / cudaEventDestroy / cudaGraphDestroy / cudaGraphExecDestroy / cudaFree
    /// (device buffer) / cudaFreeHost (pinned or mapped buffer).
    Destroy { name: String },
    /// `malloc-async BUF on STREAM [from POOL]` (cudaMallocAsync, or cudaMallocFromPoolAsync, of a `later`
    /// device buffer). The address is recorded, for `same-address` and `other-address`.
    MallocAsync { buf: String, stream: StreamRef, pool: Option<String> },
    /// `free-async BUF on STREAM` (cudaFreeAsync of a device buffer).
    FreeAsync { buf: String, stream: StreamRef },
    /// `register BUF` (cudaHostRegister, flags 0, of a pageable buffer).
    Register { buf: String },
    /// `unregister BUF` (cudaHostUnregister).
    Unregister { buf: String },
    /// `set-device [N]` (cudaSetDevice with the case's device N; absent, 0: the device the case runs on).
    SetDevice { device: u32 },
    /// `get-device [is N]` (cudaGetDevice; with `is`, the current device is asserted to be the case's device N).
    GetDevice { expect: Option<u32> },
    /// `enable-peer-access N` / `disable-peer-access N` (cudaDeviceEnablePeerAccess(N, 0) /
    /// cudaDeviceDisablePeerAccess(N) from the calling thread's current device to the case's device N).
    PeerAccess { peer: u32, enable: bool },
    /// `can-access-peer D P` (cudaDeviceCanAccessPeer of the case's devices D and P): the value is 1 or 0.
    CanAccessPeer { device: u32, peer: u32 },
    /// `set-limit stack-size|printf-fifo|malloc-heap BYTES` (cudaDeviceSetLimit).
    SetLimit { limit: Limit, value: u64 },
    /// `set-cache-config prefer-none|prefer-shared|prefer-l1|prefer-equal` (cudaDeviceSetCacheConfig).
    SetCacheConfig { config: CacheConfig },
    /// `stream-priority STREAM is N|greatest|least` (cudaStreamGetPriority; the value is asserted).
    StreamPriority { stream: StreamRef, priority: Priority },
    /// `stream-flags STREAM` (cudaStreamGetFlags): the flags word, for `L value == N` (cudaStreamNonBlocking is 1).
    StreamFlags { stream: StreamRef },
    /// `read BUF`: the buffer's contents at this moment, for `snapshot L == VALUE`. Host-visible buffers are read
    /// directly; device buffers through a copy on a private non-blocking stream (ordered after no other work).
    Read { buf: String },
    /// `peek-last-error` (cudaPeekAtLastError: returns the thread's last error without clearing it).
    PeekLastError,
    /// `malloc BYTES` (cudaMalloc; freed at cleanup): an allocation at this point of the script.
    Malloc { bytes: u64 },
    /// `get-last-error` (cudaGetLastError: returns and clears the thread's last error; its code is checked).
    GetLastError,
    /// `open GATE` (now) or `open GATE after DURATION` (from a helper thread, DURATION ns from now).
    Open { gate: String, after_ns: Option<u64> },
    /// `sleep DURATION`: the running thread sleeps. Never a correctness device; only lets a scheduled thing happen.
    Sleep { ns: u64 },
    // Batched copies, stream identity, stream and kernel-node attributes.
    /// `memcpy-batch DST SRC [DST SRC ...] on STREAM [order ORDER] [attrs-at I ...]` (cudaMemcpyBatchAsync) or
    /// `memcpy-3d-batch DST SRC [DST SRC ...] on STREAM [order ORDER]` (cudaMemcpy3DBatchAsync, `three_d`): one
    /// copy per pair, each the smaller buffer's size. Every `cudaMemcpyAttributes` entry (one per `attrs-at` index,
    /// default the single index 0) has the source access order ORDER (default `stream`).
    MemcpyBatch {
        copies: Vec<(String, String)>,
        stream: StreamRef,
        order: SrcAccessOrder,
        attrs_at: Option<Vec<u64>>,
        three_d: bool,
    },
    /// `stream-device STREAM is N` (cudaStreamGetDevice; the device is asserted to be the case's device N).
    StreamDevice { stream: StreamRef, device: u32 },
    /// `stream-id STREAM` (cudaStreamGetId): the id, for `L value` and `A same-value B`.
    StreamId { stream: StreamRef },
    /// `stream-attr STREAM ATTR is VALUE` (cudaStreamGetAttribute; the value is asserted).
    StreamAttr { stream: StreamRef, value: AttrValue },
    /// `set-stream-attr STREAM ATTR VALUE` (cudaStreamSetAttribute).
    SetStreamAttr { stream: StreamRef, value: AttrValue },
    /// `copy-stream-attrs DST from SRC` (cudaStreamCopyAttributes).
    CopyStreamAttrs { dst: StreamRef, src: StreamRef },
    /// `node-attr L ATTR is VALUE` (cudaGraphKernelNodeGetAttribute of kernel node L; the value is asserted).
    NodeAttr { node: String, value: AttrValue },
    /// `set-node-attr L ATTR VALUE` (cudaGraphKernelNodeSetAttribute of kernel node L).
    SetNodeAttr { node: String, value: AttrValue },
    // Managed memory, IPC, user objects, device facts, the launch queue
    /// `attach BUF on STREAM global|host|single [bytes N]` (cudaStreamAttachMemAsync(stream, BUF, N or 0, flag)).
    Attach { buf: String, stream: StreamRef, mode: AttachMode, bytes: Option<u64> },
    /// `prefetch BUF to device|host on STREAM` (cudaMemPrefetchAsync of the whole buffer to the case's device 0 or
    /// the host; the 12.x/13.0 signatures through `cuda_sys::compat::mem_prefetch_async`).
    Prefetch { buf: String, to: MemPlace, stream: StreamRef },
    /// `advise BUF ADVICE device|host` (cudaMemAdvise of the whole buffer; `cuda_sys::compat::mem_advise`).
    Advise { buf: String, advice: Advice, place: MemPlace },
    /// `malloc-managed BYTES [host]` (cudaMallocManaged with cudaMemAttachGlobal, or cudaMemAttachHost; freed at
    /// cleanup). BYTES may be 0, to observe the refusal.
    MallocManaged { bytes: u64, host: bool },
    /// `device-attr ATTR` (cudaDeviceGetAttribute of the case's device 0): the value, for `L value`.
    DeviceAttr { attr: DeviceAttrWord },
    /// `device-count` (cudaGetDeviceCount): the count, for `L value`.
    DeviceCount,
    /// `ipc-mem-handle BUF` (cudaIpcGetMemHandle of BUF's pointer). The handle is kept under the operation's
    /// label; its value is a 64-bit digest of the handle's bytes, so `same-address`/`other-address` compare handles.
    IpcMemHandle { buf: String },
    /// `ipc-open-mem L` (cudaIpcOpenMemHandle(&ptr, handle of `ipc-mem-handle` L, cudaIpcMemLazyEnablePeerAccess));
    /// the pointer is the value (an address) and is closed at cleanup unless `ipc-close-mem` closed it.
    /// `as BUF`: the mapping becomes the `later` device buffer BUF of this process (owning nothing: the mapping
    /// is closed, never freed).
    IpcOpenMem { handle: String, into: Option<String> },
    /// `ipc-close-mem L` (cudaIpcCloseMemHandle of the pointer `ipc-open-mem` L returned).
    IpcCloseMem { opened: String },
    /// `ipc-event-handle EVENT` (cudaIpcGetEventHandle), kept under the operation's label.
    IpcEventHandle { event: String },
    /// `ipc-open-event L into EVENT` (cudaIpcOpenEventHandle of the handle `ipc-event-handle` L got, into the
    /// `later` event slot EVENT; destroyed with cudaEventDestroy).
    IpcOpenEvent { handle: String, into: String },
    /// `[L:] pool-export POOL` (cudaMemPoolExportToShareableHandle(&fd, POOL, cudaMemHandleTypePosixFileDescriptor,
    /// 0); with a label the descriptor is `L.fd` for a later call and closed when the case ends, else at once).
    PoolExport { pool: String },
    /// `L: user-object` (cudaUserObjectCreate(&obj, flag, destructor, 1, cudaUserObjectNoDestructorSync)): a user
    /// object named by the operation's label, whose destructor (a host function) sets a flag `destroyed` reads.
    /// The case owns one reference; what it still owns is released at cleanup.
    UserObject,
    /// `retain-user-object GRAPH L [count N] [move]` (cudaGraphRetainUserObject(graph, obj, N, move ?
    /// cudaGraphUserObjectMove : 0)): with `move`, N of the case's references pass to the graph.
    RetainUserObject { graph: String, object: String, count: u32, take: bool },
    /// `release-user-object [GRAPH] L [count N]` (cudaGraphReleaseUserObject(graph, obj, N), or without GRAPH
    /// cudaUserObjectRelease(obj, N) of the case's own references).
    ReleaseUserObject { graph: Option<String>, object: String, count: u32 },
    /// `destroyed L [wait]`: whether user object L's destructor has run (value 1 or 0), read now; with `wait`,
    /// polled until it has run or the case deadline passes (a hang guard, never a verdict: the value says which).
    Destroyed { object: String, wait: bool },
    /// `queue-depth STREAM behind GATE max N`: up to N launches of the spin kernel (0 ns) on STREAM from this
    /// thread; the value is how many returned while GATE was still closed. With GATE holding STREAM and opened
    /// later by `open GATE after D`, a launch that returned after the open had been blocked in the launch call.
    QueueDepth { stream: StreamRef, gate: String, max: u32 },
    /// `L: vk-memory BYTES`: exportable, host-visible Vulkan memory of the case's GPU (vkAllocateMemory with
    /// VkExportMemoryAllocateInfo, opaque FD), mapped; `L.fd` is an opaque FD of it (vkGetMemoryFdKHR) for a call's
    /// `handle={fd=L.fd}` (cudaImportExternalMemory takes it), `L.size` its size in bytes.
    VkMemory { bytes: u64 },
    /// `L: vk-semaphore binary|timeline [initial N]`: an exportable Vulkan semaphore (timeline with initial value
    /// N, default 0); `L.fd` is an opaque FD of it (vkGetSemaphoreFdKHR) for cudaImportExternalSemaphore.
    VkSemaphore { timeline: Option<u64> },
    /// `vk-write L VALUE`: every u32 of Vulkan memory L = VALUE, written on the host through Vulkan's mapping.
    VkWrite { memory: String, value: u32 },
    /// `vk-read L [at OFFSET] [bytes N]`: Vulkan memory L's bytes now (from OFFSET, N of them; default all),
    /// read through Vulkan's mapping (for `snapshot R == V`).
    VkRead { memory: String, at: u64, bytes: Option<u64> },
    /// `vk-counter L`: vkGetSemaphoreCounterValue of timeline semaphore L, for `R value == N`.
    VkCounter { semaphore: String },
    /// `call FUNCTION [PARAM=VALUE ...]`: any function of the API table (`api::table`) by name, each argument
    /// named or taken from its parameter's class (`case/call.rs`); the value is its first output.
    Call(Call),
}

pub use super::call::{ArgValue, Call, CallArg};

// The batched copies' source access order and the launch attributes of streams and nodes.
words! {
    /// `cudaMemcpySrcAccessOrder`: `invalid` is the zero value the docs reject.
    pub enum SrcAccessOrder: "a source access order" {
        Stream = "stream",
        DuringCall = "during-call",
        Any = "any",
        Invalid = "invalid",
    }
}

words! {
    /// The `cudaLaunchAttributeID`s `stream-attr` and `node-attr` name ("Valid for streams, graph nodes, launches").
    pub enum LaunchAttr: "a launch attribute" {
        Priority = "priority",
        MemSyncDomain = "mem-sync-domain",
    }
}

words! {
    /// `cudaLaunchMemSyncDomain`.
    pub enum SyncDomain: "a memory synchronization domain" {
        Default = "default",
        Remote = "remote",
    }
}

/// A launch attribute and its value: `priority N|greatest|least` or `mem-sync-domain default|remote`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttrValue {
    Priority(Priority),
    MemSyncDomain(SyncDomain),
}

impl AttrValue {
    pub fn attr(&self) -> LaunchAttr {
        match self {
            AttrValue::Priority(_) => LaunchAttr::Priority,
            AttrValue::MemSyncDomain(_) => LaunchAttr::MemSyncDomain,
        }
    }
}

/// `launch KERNEL ARGS on STREAM [SHAPE]`: which probe kernel, with its arguments and launch shape.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelCall {
    /// `launch gate GATE on STREAM`: a 1-thread kernel spinning until the gate opens (or its timeout fires).
    Gate { gate: String },
    /// `launch spin [DURATION] on STREAM [grid N|full] [block N] [shared BYTES]`: records %globaltimer at entry
    /// and exit, spinning DURATION ns between; every block spins, the stamps are the first entry and last exit.
    Spin { ns: u64, shape: LaunchShape },
    /// `launch lazy-spin [DURATION] on STREAM`: a one-thread spin kernel the executor does not load before the
    /// script, so its first launch is the one that loads it (lazy module loading).
    LazySpin { ns: u64 },
    /// `launch fault illegal-address|trap on STREAM`: a one-thread kernel that faults.
    Fault { fault: Fault },
    /// `launch fill BUF VALUE on STREAM`: every u32 of BUF becomes VALUE.
    Fill { buf: String, value: u32 },
    /// `launch transform BUF mul A add B on STREAM`: every u32 x of BUF becomes x*A + B (wrapping).
    Transform { buf: String, mul: u32, add: u32 },
    /// `launch compare A B into R on STREAM`: `R[0]` becomes the number of indices where A and B differ.
    Compare { a: String, b: String, into: String },
    /// `launch vecadd A B into C on STREAM [grid N] [block N]`: the seeds' vecAdd, `C[i] = A[i] + B[i]` on floats
    /// for every i of C, one thread per element (grid defaults to cover C, block to 256).
    VecAdd { a: String, b: String, into: String, shape: ComputeShape },
    /// `launch sincos BUF iterations N on STREAM [grid N] [block N]`: seed 002's kernels, N times
    /// `x = sinf(x) * cosf(x)` for every float x of BUF, one thread per element (grid and block as for vecadd).
    SinCos { buf: String, iterations: u32, shape: ComputeShape },
    /// `launch sleep CYCLES on STREAM [grid N] [block N]`: seed 003's SleepKernel, every thread spinning on
    /// `clock64()` for CYCLES SM clock cycles (a duration that follows the SM clock; the stamps say what it was).
    /// Grid defaults to 1 block, block to 256 threads.
    Sleep { cycles: u64, shape: ComputeShape },
    /// `launch device-launch EXEC tail|fire-and-forget|sibling [times N] into BUF on STREAM`: one thread calls the
    /// device-side `cudaGraphLaunch(EXEC, mode)` N times (default 1); `BUF[i]` is the i-th call's code. EXEC's
    /// handle is the kernel's argument, so EXEC must be instantiated before this operation (also when captured).
    DeviceLaunch { exec: String, mode: DeviceLaunchMode, times: u32, into: String },
    /// `launch relaunch-self COUNTER runs N [times M] into BUF on STREAM`: `COUNTER[0]` counts the kernel's runs;
    /// while it is below N the kernel enqueues its own graph (`cudaGetCurrentGraphExec()`) for tail launch M times
    /// (default 1), `BUF[(run - 1) * M + i]` being each code. COUNTER must start at 0 (`launch fill`).
    RelaunchSelf { counter: String, runs: u32, times: u32, into: String },
    /// `launch current-graph into BUF on STREAM`: `BUF[0]` is 1 when `cudaGetCurrentGraphExec()` names a graph
    /// (the kernel runs as a node of a device graph), 0 when it returns NULL.
    CurrentGraph { into: String },
}

impl KernelCall {
    pub fn word(&self) -> KernelWord {
        match self {
            KernelCall::Gate { .. } => KernelWord::Gate,
            KernelCall::Spin { .. } => KernelWord::Spin,
            KernelCall::LazySpin { .. } => KernelWord::LazySpin,
            KernelCall::Fault { .. } => KernelWord::Fault,
            KernelCall::Fill { .. } => KernelWord::Fill,
            KernelCall::Transform { .. } => KernelWord::Transform,
            KernelCall::Compare { .. } => KernelWord::Compare,
            KernelCall::VecAdd { .. } => KernelWord::VecAdd,
            KernelCall::SinCos { .. } => KernelWord::SinCos,
            KernelCall::Sleep { .. } => KernelWord::Sleep,
            KernelCall::DeviceLaunch { .. } => KernelWord::DeviceLaunch,
            KernelCall::RelaunchSelf { .. } => KernelWord::RelaunchSelf,
            KernelCall::CurrentGraph { .. } => KernelWord::CurrentGraph,
        }
    }

    /// Why the kernel cannot run when its `into` buffer holds `words` words: fewer than the codes a graph-launching
    /// kernel writes there. Both executors ask it, so they refuse the same launches with the same words.
    pub fn short_codes_buffer(&self, words: u64) -> Option<String> {
        let (into, needed, what) = match self {
            KernelCall::DeviceLaunch { times, into, .. } => (into, u64::from(*times), "device launches"),
            KernelCall::RelaunchSelf { runs, times, into, .. } => {
                (into, u64::from(runs.saturating_sub(1)) * u64::from(*times), "relaunches")
            }
            _ => return None,
        };
        (words < needed).then(|| format!("{into} holds {words} words, fewer than the {needed} codes of the {what}"))
    }

    /// The declared names the kernel's arguments use.
    fn operands(&self) -> Vec<Operand<'_>> {
        match self {
            KernelCall::Gate { gate } => vec![Operand::Gate(gate)],
            KernelCall::Fill { buf, .. } | KernelCall::Transform { buf, .. } | KernelCall::SinCos { buf, .. } => {
                vec![Operand::KernelBuffer(buf)]
            }
            KernelCall::Compare { a, b, into } | KernelCall::VecAdd { a, b, into, .. } => {
                vec![Operand::KernelBuffer(a), Operand::KernelBuffer(b), Operand::KernelBuffer(into)]
            }
            KernelCall::DeviceLaunch { exec, into, .. } => vec![Operand::Exec(exec), Operand::KernelBuffer(into)],
            KernelCall::RelaunchSelf { counter, into, .. } => {
                vec![Operand::KernelBuffer(counter), Operand::KernelBuffer(into)]
            }
            KernelCall::CurrentGraph { into } => vec![Operand::KernelBuffer(into)],
            KernelCall::Spin { .. }
            | KernelCall::LazySpin { .. }
            | KernelCall::Fault { .. }
            | KernelCall::Sleep { .. } => Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The table of facts: one row per operation

/// What the rest of the suite needs to know about an operation, beyond its syntax (the variant's doc comment) and
/// its behaviour (its parser, printer and interpreter arms). [`OpKind::facts`] is the one exhaustive list of
/// operations outside those arms: the validator, the can-finish check, placement, capture bookkeeping, `timing:`
/// and the timeline read their columns, so a new operation is one row here and nothing in those files.
///
/// A new column is one more field, and the compiler names every row. The reproducer emitter of issue 19 is meant to
/// be one: the CUDA runtime functions the operation calls (what its generated C++ must contain, checked by the
/// emitter's table test), with the emission itself an arm beside the interpreter's, in the same family file of
/// `exec/interpret/`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpFacts<'a> {
    /// The word that starts the operation.
    pub word: OpWord,
    /// The stream on which it may add a node to a capture graph (`None`: it never adds one).
    pub capture: Option<&'a StreamRef>,
    /// The stream its device work runs on (`legacy` for the synchronous copies and memset): `timing: events`
    /// brackets it with events there, and the timeline draws it. `None`: no device work of its own.
    pub work: Option<&'a StreamRef>,
    /// What it may wait for on the host (the can-finish check: a closed gate there would hang the case).
    pub waits: HostWait<'a>,
    /// The case devices it names (placement: `requires: devices >= N` must grant them).
    pub devices: Vec<u32>,
    /// The declared names and labels it uses, each of the kind the validator checks it is.
    pub operands: Vec<Operand<'a>>,
    /// It records a number that `L value CMP N` compares (a count, a flag, an attribute).
    pub value: bool,
}

/// What an operation may wait for on the host before it returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HostWait<'a> {
    /// Nothing: it returns without waiting for device work.
    Nothing,
    /// Any work of any device (cudaDeviceSynchronize, and the calls the docs let synchronize the device).
    Device,
    /// What the legacy stream waits for: every blocking stream (a synchronous copy or memset, issued on it).
    LegacyStream,
    /// This stream's work (the legacy or null stream: as [`HostWait::LegacyStream`]).
    Stream(&'a StreamRef),
    /// The work before this event's last record.
    Event(&'a str),
    /// `destroy NAME`: the device, if NAME is a buffer (cudaFree may synchronize); nothing for other objects.
    Destroy(&'a str),
}

/// A name or label an operation uses, by the kind of declaration (or labelled operation) it must name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand<'a> {
    Stream(&'a StreamRef),
    Event(&'a str),
    /// Any buffer (or slice).
    Buffer(&'a str),
    /// A buffer a kernel reads or writes: not pageable memory.
    KernelBuffer(&'a str),
    Gate(&'a str),
    Graph(&'a str),
    Exec(&'a str),
    Pool(&'a str),
    Condition(&'a str),
    /// The label of a graph node: an `add-node`, or an operation captured into a graph.
    Node(&'a str),
    // Handles and user objects named by the operation that made them
    /// The label of an operation with this word (`ipc-mem-handle`, `user-object`, ...).
    Made(&'a str, OpWord),
}

impl OpKind {
    /// The operation's row of the table of facts. Exhaustive on purpose: a new operation is placed in every
    /// column here, with the CUDA sentence behind a fact as a comment on its row.
    pub fn facts(&self) -> OpFacts<'_> {
        use HostWait as W;
        use Operand as O;
        // row(word, capture stream, work stream, host wait, operands): the columns every row fills; the rare
        // ones (the devices it names, a value it records) are set with `OpFacts { devices, ..row(...) }`.
        let row = |word, capture, work, waits, operands| OpFacts {
            word,
            capture,
            work,
            waits,
            devices: Vec::new(),
            operands,
            value: false,
        };
        fn on(stream: &Option<StreamRef>) -> Vec<Operand<'_>> {
            stream.iter().map(Operand::Stream).collect()
        }
        // Synchronous copies and memsets run on the legacy stream; the async forms add a node to a capture.
        fn sync_or(stream: &Option<StreamRef>) -> (Option<&StreamRef>, Option<&StreamRef>) {
            stream.as_ref().map_or((None, Some(&StreamRef::Legacy)), |s| (Some(s), Some(s)))
        }
        match self {
            OpKind::Launch { kernel, stream } => {
                let mut operands = kernel.operands();
                operands.push(O::Stream(stream));
                row(OpWord::Launch, Some(stream), Some(stream), W::Nothing, operands)
            }
            OpKind::Memcpy { dst, src, stream, .. } => {
                let (capture, work) = sync_or(stream);
                let word = if stream.is_some() { OpWord::MemcpyAsync } else { OpWord::Memcpy };
                let waits = if stream.is_some() { W::Nothing } else { W::LegacyStream };
                row(word, capture, work, waits, [vec![O::Buffer(dst), O::Buffer(src)], on(stream)].concat())
            }
            OpKind::MemcpyPeer { dst, src, stream, .. } => {
                let (capture, work) = sync_or(stream);
                let word = if stream.is_some() { OpWord::MemcpyPeerAsync } else { OpWord::MemcpyPeer };
                // cudaMemcpyPeer is "serialized with respect all pending and future asynchronous work in to the
                // current device, srcDevice, and dstDevice": whatever a gate holds on any device may hold it.
                let waits = if stream.is_some() { W::Nothing } else { W::Device };
                row(word, capture, work, waits, [vec![O::Buffer(dst), O::Buffer(src)], on(stream)].concat())
            }
            OpKind::Memset { buf, stream, .. } => {
                let (capture, work) = sync_or(stream);
                let word = if stream.is_some() { OpWord::MemsetAsync } else { OpWord::Memset };
                let waits = if stream.is_some() { W::Nothing } else { W::LegacyStream };
                row(word, capture, work, waits, [vec![O::Buffer(buf)], on(stream)].concat())
            }
            // Only the external forms are nodes; otherwise record/wait just move capture dependencies.
            OpKind::Record { event, stream, external } => row(
                OpWord::Record,
                external.then_some(stream),
                None,
                W::Nothing,
                vec![O::Event(event), O::Stream(stream)],
            ),
            OpKind::Wait { stream, event, external } => row(
                OpWord::Wait,
                external.then_some(stream),
                None,
                W::Nothing,
                vec![O::Event(event), O::Stream(stream)],
            ),
            OpKind::Query { target } => row(OpWord::Query, None, None, W::Nothing, vec![target.operand()]),
            OpKind::Sync { target: target @ Target::Stream(s) } => {
                row(OpWord::Sync, None, None, W::Stream(s), vec![target.operand()])
            }
            OpKind::Sync { target: target @ Target::Event(e) } => {
                row(OpWord::Sync, None, None, W::Event(e), vec![target.operand()])
            }
            OpKind::DeviceSync => row(OpWord::DeviceSync, None, None, W::Device, vec![]),
            OpKind::Elapsed { start, stop } => {
                row(OpWord::Elapsed, None, None, W::Nothing, vec![O::Event(start), O::Event(stop)])
            }
            OpKind::HostFunc { stream, snapshot, hold } => {
                let mut operands = vec![O::Stream(stream)];
                operands.extend(snapshot.iter().map(|b| O::Buffer(b)));
                operands.extend(hold.iter().map(|g| O::Gate(g)));
                row(OpWord::HostFunc, Some(stream), None, W::Nothing, operands)
            }
            // Only `host-func` is captured (as a host node); a callback adds no node.
            OpKind::Callback { stream } => row(OpWord::Callback, None, None, W::Nothing, vec![O::Stream(stream)]),
            OpKind::BeginCapture { stream, .. } => {
                row(OpWord::BeginCapture, None, None, W::Nothing, vec![O::Stream(stream)])
            }
            OpKind::EndCapture { stream, graph } => {
                row(OpWord::EndCapture, None, None, W::Nothing, vec![O::Stream(stream), O::Graph(graph)])
            }
            OpKind::CaptureStatus { stream, .. } => {
                row(OpWord::CaptureStatus, None, None, W::Nothing, vec![O::Stream(stream)])
            }
            OpKind::CaptureDeps { stream, nodes, .. } => {
                let operands = [vec![O::Stream(stream)], nodes.iter().map(|l| O::Node(l)).collect()].concat();
                row(OpWord::CaptureDeps, None, None, W::Nothing, operands)
            }
            OpKind::PointerType { buf, .. } => row(OpWord::PointerType, None, None, W::Nothing, vec![O::Buffer(buf)]),
            OpKind::ExchangeCaptureMode { .. } => row(OpWord::ExchangeCaptureMode, None, None, W::Nothing, vec![]),
            OpKind::Instantiate { exec, graph, upload, .. } => {
                let operands = [vec![O::Exec(exec), O::Graph(graph)], on(upload)].concat();
                row(OpWord::Instantiate, None, None, W::Nothing, operands)
            }
            // Graph-API operations add no node to a capture and wait for nothing.
            OpKind::Update { exec, graph } => {
                row(OpWord::Update, None, None, W::Nothing, vec![O::Exec(exec), O::Graph(graph)])
            }
            OpKind::AddNode { graph, after, .. } => {
                let operands = [vec![O::Graph(graph)], after.iter().map(|l| O::Node(l)).collect()].concat();
                row(OpWord::AddNode, None, None, W::Nothing, operands)
            }
            OpKind::Dependency { graph, from, to, remove } => {
                let word = if *remove { OpWord::RemoveDeps } else { OpWord::AddDeps };
                row(word, None, None, W::Nothing, vec![O::Graph(graph), O::Node(from), O::Node(to)])
            }
            OpKind::Clone { copy, graph } => {
                row(OpWord::Clone, None, None, W::Nothing, vec![O::Graph(copy), O::Graph(graph)])
            }
            OpKind::DestroyNode { node } => row(OpWord::DestroyNode, None, None, W::Nothing, vec![O::Node(node)]),
            // The count a list returned.
            OpKind::List { graph, .. } => {
                OpFacts { value: true, ..row(OpWord::List, None, None, W::Nothing, vec![O::Graph(graph)]) }
            }
            OpKind::SetNode { exec, node, .. } => {
                let word = if exec.is_some() { OpWord::ExecSetNode } else { OpWord::SetNode };
                let operands = [exec.iter().map(|e| O::Exec(e)).collect(), vec![O::Node(node)]].concat();
                row(word, None, None, W::Nothing, operands)
            }
            OpKind::SetEnabled { exec, node, .. } => {
                row(OpWord::Enable, None, None, W::Nothing, vec![O::Exec(exec), O::Node(node)])
            }
            OpKind::GetEnabled { exec, node } => OpFacts {
                value: true,
                ..row(OpWord::IsEnabled, None, None, W::Nothing, vec![O::Exec(exec), O::Node(node)])
            },
            OpKind::BeginCaptureToGraph { stream, graph, after, .. } => {
                let nodes = after.iter().map(|l| O::Node(l)).collect();
                let operands = [vec![O::Stream(stream), O::Graph(graph)], nodes].concat();
                row(OpWord::BeginCaptureToGraph, None, None, W::Nothing, operands)
            }
            OpKind::UpdateCaptureDeps { stream, nodes, .. } => {
                let operands = [vec![O::Stream(stream)], nodes.iter().map(|l| O::Node(l)).collect()].concat();
                row(OpWord::UpdateCaptureDeps, None, None, W::Nothing, operands)
            }
            OpKind::ConditionCreate { condition, graph, .. } => {
                row(OpWord::ConditionCreate, None, None, W::Nothing, vec![O::Condition(condition), O::Graph(graph)])
            }
            OpKind::PoolSet { pool, .. } => row(OpWord::PoolSet, None, None, W::Nothing, vec![O::Pool(pool)]),
            OpKind::PoolGet { pool, .. } => {
                OpFacts { value: true, ..row(OpWord::PoolGet, None, None, W::Nothing, vec![O::Pool(pool)]) }
            }
            // cudaMemPoolTrimTo releases what no outstanding allocation holds; nothing says it waits.
            OpKind::PoolTrim { pool, .. } => row(OpWord::PoolTrim, None, None, W::Nothing, vec![O::Pool(pool)]),
            OpKind::GraphMemTrim => row(OpWord::GraphMemTrim, None, None, W::Device, vec![]),
            OpKind::GraphMemGet { .. } => {
                OpFacts { value: true, ..row(OpWord::GraphMemGet, None, None, W::Nothing, vec![]) }
            }
            OpKind::LaunchGraph { exec, stream } => {
                row(OpWord::LaunchGraph, Some(stream), Some(stream), W::Nothing, vec![O::Exec(exec), O::Stream(stream)])
            }
            OpKind::Upload { exec, stream } => {
                row(OpWord::Upload, None, None, W::Nothing, vec![O::Exec(exec), O::Stream(stream)])
            }
            // `create` and `destroy` name an object of any kind: the validator checks which kinds they take.
            // The docs let cudaMalloc, cudaFree and cudaHostRegister synchronize the device.
            OpKind::Create { .. } => row(OpWord::Create, None, None, W::Device, vec![]),
            OpKind::Destroy { name } => row(OpWord::Destroy, None, None, W::Destroy(name), vec![]),
            // Captured stream-ordered allocations become memory-allocation and memory-free nodes.
            OpKind::MallocAsync { buf, stream, pool } => {
                let operands = [pool.iter().map(|p| O::Pool(p)).collect(), vec![O::Buffer(buf), O::Stream(stream)]];
                row(OpWord::MallocAsync, Some(stream), None, W::Nothing, operands.concat())
            }
            OpKind::FreeAsync { buf, stream } => {
                row(OpWord::FreeAsync, Some(stream), None, W::Nothing, vec![O::Buffer(buf), O::Stream(stream)])
            }
            OpKind::Register { buf } => row(OpWord::Register, None, None, W::Device, vec![O::Buffer(buf)]),
            OpKind::Unregister { buf } => row(OpWord::Unregister, None, None, W::Device, vec![O::Buffer(buf)]),
            // cudaSetDevice "will do no synchronization with the previous or new device".
            OpKind::SetDevice { device } => {
                OpFacts { devices: vec![*device], ..row(OpWord::SetDevice, None, None, W::Nothing, vec![]) }
            }
            OpKind::GetDevice { expect } => OpFacts {
                devices: expect.iter().copied().collect(),
                ..row(OpWord::GetDevice, None, None, W::Nothing, vec![])
            },
            // No page says whether enabling peer access waits for the devices' work.
            OpKind::PeerAccess { peer, enable } => {
                let word = if *enable { OpWord::EnablePeerAccess } else { OpWord::DisablePeerAccess };
                OpFacts { devices: vec![*peer], ..row(word, None, None, W::Device, vec![]) }
            }
            OpKind::CanAccessPeer { device, peer } => {
                let row = row(OpWord::CanAccessPeer, None, None, W::Nothing, vec![]);
                OpFacts { devices: vec![*device, *peer], value: true, ..row }
            }
            OpKind::SetLimit { .. } => row(OpWord::SetLimit, None, None, W::Device, vec![]),
            OpKind::SetCacheConfig { .. } => row(OpWord::SetCacheConfig, None, None, W::Device, vec![]),
            OpKind::StreamPriority { stream, .. } => {
                row(OpWord::StreamPriority, None, None, W::Nothing, vec![O::Stream(stream)])
            }
            OpKind::StreamFlags { stream } => {
                OpFacts { value: true, ..row(OpWord::StreamFlags, None, None, W::Nothing, vec![O::Stream(stream)]) }
            }
            OpKind::Read { buf } => row(OpWord::Read, None, None, W::Nothing, vec![O::Buffer(buf)]),
            OpKind::PeekLastError => row(OpWord::PeekLastError, None, None, W::Nothing, vec![]),
            OpKind::Malloc { .. } => row(OpWord::Malloc, None, None, W::Device, vec![]),
            OpKind::GetLastError => row(OpWord::GetLastError, None, None, W::Nothing, vec![]),
            OpKind::Open { gate, .. } => row(OpWord::Open, None, None, W::Nothing, vec![O::Gate(gate)]),
            OpKind::Sleep { .. } => row(OpWord::Sleep, None, None, W::Nothing, vec![]),
            // Batched copies, stream identity, stream and kernel-node attributes.
            // A batch "executes in stream order" on its stream; with `during-call`, "all accesses must be complete
            // before the API call returns", so the call may wait for what the stream holds.
            OpKind::MemcpyBatch { copies, stream, order, three_d, .. } => {
                let word = if *three_d { OpWord::Memcpy3dBatch } else { OpWord::MemcpyBatch };
                let waits = if *order == SrcAccessOrder::DuringCall { W::Stream(stream) } else { W::Nothing };
                let mut operands: Vec<Operand> =
                    copies.iter().flat_map(|(d, s)| [O::Buffer(d), O::Buffer(s)]).collect();
                operands.push(O::Stream(stream));
                row(word, Some(stream), Some(stream), waits, operands)
            }
            OpKind::StreamDevice { stream, device } => OpFacts {
                devices: vec![*device],
                ..row(OpWord::StreamDevice, None, None, W::Nothing, vec![O::Stream(stream)])
            },
            OpKind::StreamId { stream } => {
                OpFacts { value: true, ..row(OpWord::StreamId, None, None, W::Nothing, vec![O::Stream(stream)]) }
            }
            OpKind::StreamAttr { stream, .. } => {
                row(OpWord::StreamAttr, None, None, W::Nothing, vec![O::Stream(stream)])
            }
            // "The updated attribute will be applied to subsequent work": nothing says the call waits.
            OpKind::SetStreamAttr { stream, .. } => {
                row(OpWord::SetStreamAttr, None, None, W::Nothing, vec![O::Stream(stream)])
            }
            OpKind::CopyStreamAttrs { dst, src } => {
                row(OpWord::CopyStreamAttrs, None, None, W::Nothing, vec![O::Stream(dst), O::Stream(src)])
            }
            OpKind::NodeAttr { node, .. } => row(OpWord::NodeAttr, None, None, W::Nothing, vec![O::Node(node)]),
            OpKind::SetNodeAttr { node, .. } => row(OpWord::SetNodeAttr, None, None, W::Nothing, vec![O::Node(node)]),
            // Managed memory, IPC, user objects, device facts, the launch queue
            // "a stream-ordered operation": captured into a graph like other stream work is not documented, so
            // no capture column; it has no device work of its own to time.
            OpKind::Attach { buf, stream, .. } => {
                row(OpWord::Attach, None, None, W::Nothing, vec![O::Buffer(buf), O::Stream(stream)])
            }
            // "asynchronous with respect to the host and all work on other devices".
            OpKind::Prefetch { buf, stream, .. } => {
                row(OpWord::Prefetch, None, None, W::Nothing, vec![O::Buffer(buf), O::Stream(stream)])
            }
            OpKind::Advise { buf, .. } => row(OpWord::Advise, None, None, W::Nothing, vec![O::Buffer(buf)]),
            // An allocation: the docs let allocation calls synchronize the device.
            OpKind::MallocManaged { .. } => row(OpWord::MallocManaged, None, None, W::Device, vec![]),
            OpKind::DeviceAttr { .. } => {
                OpFacts { value: true, ..row(OpWord::DeviceAttr, None, None, W::Nothing, vec![]) }
            }
            OpKind::DeviceCount => OpFacts { value: true, ..row(OpWord::DeviceCount, None, None, W::Nothing, vec![]) },
            OpKind::IpcMemHandle { buf } => row(OpWord::IpcMemHandle, None, None, W::Nothing, vec![O::Buffer(buf)]),
            OpKind::IpcOpenMem { handle, into } => {
                let operands =
                    [vec![O::Made(handle, OpWord::IpcMemHandle)], into.iter().map(|b| O::Buffer(b)).collect()];
                row(OpWord::IpcOpenMem, None, None, W::Nothing, operands.concat())
            }
            OpKind::IpcCloseMem { opened } => {
                row(OpWord::IpcCloseMem, None, None, W::Nothing, vec![O::Made(opened, OpWord::IpcOpenMem)])
            }
            OpKind::IpcEventHandle { event } => {
                row(OpWord::IpcEventHandle, None, None, W::Nothing, vec![O::Event(event)])
            }
            OpKind::IpcOpenEvent { handle, into } => {
                let operands = vec![O::Made(handle, OpWord::IpcEventHandle), O::Event(into)];
                row(OpWord::IpcOpenEvent, None, None, W::Nothing, operands)
            }
            OpKind::PoolExport { pool } => row(OpWord::PoolExport, None, None, W::Nothing, vec![O::Pool(pool)]),
            OpKind::UserObject => row(OpWord::UserObject, None, None, W::Nothing, vec![]),
            OpKind::RetainUserObject { graph, object, .. } => {
                let operands = vec![O::Graph(graph), O::Made(object, OpWord::UserObject)];
                row(OpWord::RetainUserObject, None, None, W::Nothing, operands)
            }
            // "There is not currently a mechanism to wait on user object destructors": a release never waits.
            OpKind::ReleaseUserObject { graph, object, .. } => {
                let operands = [graph.iter().map(|g| O::Graph(g)).collect(), vec![O::Made(object, OpWord::UserObject)]];
                row(OpWord::ReleaseUserObject, None, None, W::Nothing, operands.concat())
            }
            OpKind::Destroyed { object, .. } => OpFacts {
                value: true,
                ..row(OpWord::Destroyed, None, None, W::Nothing, vec![O::Made(object, OpWord::UserObject)])
            },
            // Its launches may block until the stream's queue drains: what the gated stream waits for.
            OpKind::QueueDepth { stream, gate, .. } => OpFacts {
                value: true,
                ..row(OpWord::QueueDepth, None, None, W::Stream(stream), vec![O::Stream(stream), O::Gate(gate)])
            },
            // Vulkan's own objects: no CUDA call, nothing on a stream, nothing to wait for.
            OpKind::VkMemory { .. } => row(OpWord::VkMemory, None, None, W::Nothing, vec![]),
            OpKind::VkSemaphore { .. } => row(OpWord::VkSemaphore, None, None, W::Nothing, vec![]),
            OpKind::VkWrite { memory, .. } => {
                row(OpWord::VkWrite, None, None, W::Nothing, vec![O::Made(memory, OpWord::VkMemory)])
            }
            OpKind::VkRead { memory, .. } => {
                row(OpWord::VkRead, None, None, W::Nothing, vec![O::Made(memory, OpWord::VkMemory)])
            }
            OpKind::VkCounter { semaphore } => OpFacts {
                value: true,
                ..row(OpWord::VkCounter, None, None, W::Nothing, vec![O::Made(semaphore, OpWord::VkSemaphore)])
            },
            // Its stream argument is where an `...Async` call adds a node and runs; what a synchronous function
            // may wait for is not in the table, so it may wait for the whole device (the can-finish check).
            OpKind::Call(call) => {
                let stream = call.stream();
                let asynchronous = call.function.ends_with("Async");
                let waits = if crate::api::may_wait_on_host(&call.function) { W::Device } else { W::Nothing };
                let work = stream.filter(|_| asynchronous);
                OpFacts {
                    value: true,
                    devices: call.devices(),
                    ..row(OpWord::Call, stream, work, waits, call.operands())
                }
            }
        }
    }

    /// The word that starts this operation.
    pub fn word(&self) -> OpWord {
        self.facts().word
    }

    /// The stream on which this operation may have added a node to a capture graph.
    pub fn capture_stream(&self) -> Option<&StreamRef> {
        self.facts().capture
    }

    /// A kernel launch: it gets a stamp slot, and `before`/`overlaps` may name it.
    pub fn is_kernel_launch(&self) -> bool {
        matches!(self, OpKind::Launch { .. })
    }

    /// Work on a stream that `timing: events` brackets with events: kernel launches, copies, memsets (the
    /// synchronous ones on the legacy stream) and graph launches.
    pub fn has_device_work(&self) -> bool {
        self.facts().work.is_some()
    }

    /// The stream its device work runs on (`legacy` for the synchronous copy and memset), for timelines.
    pub fn work_stream(&self) -> Option<&StreamRef> {
        self.facts().work
    }
}

impl Target {
    fn operand(&self) -> Operand<'_> {
        match self {
            Target::Stream(s) => Operand::Stream(s),
            Target::Event(e) => Operand::Event(e),
        }
    }
}

/// A graph node's kind and parameters, as `add-node`, `set-node` and `exec-set-node` write them.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeSpec {
    /// `kernel gate GATE`, `kernel spin [DURATION]`, `kernel fill BUF V`, `kernel transform BUF mul A add B`,
    /// `kernel set-condition COND from BUF` (the condition becomes `BUF[0]`), `kernel countdown COND BUF` (`BUF[0]`
    /// decreases by one if not zero, `BUF[1]` increases by one, and the condition becomes `BUF[0] != 0`).
    Kernel(NodeKernel),
    /// `memcpy DST SRC [BYTES]`: cudaMemcpyDefault between any two buffers.
    Memcpy {
        dst: String,
        src: String,
        bytes: Option<u64>,
    },
    /// `memset BUF BYTE [BYTES]`.
    Memset {
        buf: String,
        byte: u8,
        bytes: Option<u64>,
    },
    /// `host`: appends the operation's label to the host log each time it runs (like `host-func`).
    Host,
    /// `empty`.
    Empty,
    /// `event-record EVENT` / `wait-event EVENT`.
    EventRecord {
        event: String,
    },
    WaitEvent {
        event: String,
    },
    /// `graph CHILD`: a child-graph node (the child is cloned into it).
    Child {
        graph: String,
    },
    /// `mem-alloc BUF`: a memory-allocation node for the `later` device buffer BUF (its size); the address is
    /// fixed when the node is added and valid while a launch is between the allocation and its free.
    MemAlloc {
        buf: String,
    },
    /// `mem-free BUF`.
    MemFree {
        buf: String,
    },
    /// `conditional if|while|switch COND [size N] bodies G ...`: the body graphs the runtime creates fill the graph
    /// slots named (N of them; size defaults to their count).
    Conditional {
        kind: ConditionalKind,
        condition: String,
        size: u32,
        bodies: Vec<String>,
    },
}

impl NodeSpec {
    pub fn word(&self) -> NodeWord {
        match self {
            NodeSpec::Kernel(_) => NodeWord::Kernel,
            NodeSpec::Memcpy { .. } => NodeWord::Memcpy,
            NodeSpec::Memset { .. } => NodeWord::Memset,
            NodeSpec::Host => NodeWord::Host,
            NodeSpec::Empty => NodeWord::Empty,
            NodeSpec::EventRecord { .. } => NodeWord::EventRecord,
            NodeSpec::WaitEvent { .. } => NodeWord::WaitEvent,
            NodeSpec::Child { .. } => NodeWord::Graph,
            NodeSpec::MemAlloc { .. } => NodeWord::MemAlloc,
            NodeSpec::MemFree { .. } => NodeWord::MemFree,
            NodeSpec::Conditional { .. } => NodeWord::Conditional,
        }
    }
}

/// The kernel of a kernel node.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKernel {
    Gate { gate: String },
    Spin { ns: u64 },
    Fill { buf: String, value: u32 },
    Transform { buf: String, mul: u32, add: u32 },
    SetCondition { condition: String, buf: String },
    Countdown { condition: String, buf: String },
}

impl NodeKernel {
    pub fn word(&self) -> KernelWord {
        match self {
            NodeKernel::Gate { .. } => KernelWord::Gate,
            NodeKernel::Spin { .. } => KernelWord::Spin,
            NodeKernel::Fill { .. } => KernelWord::Fill,
            NodeKernel::Transform { .. } => KernelWord::Transform,
            NodeKernel::SetCondition { .. } => KernelWord::SetCondition,
            NodeKernel::Countdown { .. } => KernelWord::Countdown,
        }
    }

    /// The buffers the kernel writes or reads.
    pub fn buffers(&self) -> Vec<&String> {
        match self {
            NodeKernel::Gate { .. } | NodeKernel::Spin { .. } => Vec::new(),
            NodeKernel::Fill { buf, .. }
            | NodeKernel::Transform { buf, .. }
            | NodeKernel::SetCondition { buf, .. }
            | NodeKernel::Countdown { buf, .. } => vec![buf],
        }
    }
}

// Operands of the managed-memory and device-fact operations
words! {
    /// `cudaStreamAttachMemAsync` flags.
    pub enum AttachMode: "global, host or single" {
        Global = "global",
        Host = "host",
        Single = "single",
    }
}

words! {
    /// Where `prefetch` moves memory and what `advise` names: the case's device 0 or the host (cudaCpuDeviceId).
    pub enum MemPlace: "device or host" {
        Device = "device",
        Host = "host",
    }
}

words! {
    /// `cudaMemoryAdvise`.
    pub enum Advice: "a memory advice" {
        ReadMostly = "read-mostly",
        UnsetReadMostly = "unset-read-mostly",
        PreferredLocation = "preferred-location",
        UnsetPreferredLocation = "unset-preferred-location",
        AccessedBy = "accessed-by",
        UnsetAccessedBy = "unset-accessed-by",
    }
}

words! {
    /// The `cudaDeviceAttr`s `device-attr` reads.
    pub enum DeviceAttrWord: "a device attribute" {
        ManagedMemory = "managed-memory",
        ConcurrentManagedAccess = "concurrent-managed-access",
        PageableMemoryAccess = "pageable-memory-access",
        PageableMemoryAccessUsesHostPageTables = "pageable-uses-host-page-tables",
        DirectManagedMemAccessFromHost = "direct-managed-access-from-host",
        IpcEventSupport = "ipc-event-support",
        HostRegisterSupported = "host-register-supported",
    }
}

words! {
    /// `cudaGraphConditionalNodeType`.
    pub enum ConditionalKind: "a conditional kind" {
        If = "if",
        While = "while",
        Switch = "switch",
    }
}

words! {
    /// `cudaGraphInstantiateFlags` an `instantiate` may set (besides `upload STREAM`).
    pub enum InstantiateFlag: "an instantiate flag" {
        AutoFreeOnLaunch = "auto-free-on-launch",
        DeviceLaunch = "device-launch",
        UseNodePriority = "use-node-priority",
    }
}

words! {
    /// What `list` reads back.
    pub enum ListWord: "nodes, root-nodes or edges" {
        Nodes = "nodes",
        RootNodes = "root-nodes",
        Edges = "edges",
    }
}

words! {
    /// `cudaMemPoolAttr`.
    pub enum PoolAttr: "a pool attribute" {
        ReleaseThreshold = "release-threshold",
        ReuseFollowEventDependencies = "reuse-follow-event-dependencies",
        ReuseAllowOpportunistic = "reuse-allow-opportunistic",
        ReuseAllowInternalDependencies = "reuse-allow-internal-dependencies",
        ReservedMemCurrent = "reserved-mem-current",
        ReservedMemHigh = "reserved-mem-high",
        UsedMemCurrent = "used-mem-current",
        UsedMemHigh = "used-mem-high",
    }
}

words! {
    /// `cudaGraphMemAttributeType`.
    pub enum GraphMemAttr: "a graph memory attribute" {
        UsedMemCurrent = "used-mem-current",
        UsedMemHigh = "used-mem-high",
        ReservedMemCurrent = "reserved-mem-current",
        ReservedMemHigh = "reserved-mem-high",
    }
}

words! {
    /// `cudaGraphNodeType`, in the words `add-node` and `node-kind` use.
    pub enum NodeWord: "a node kind" {
        Kernel = "kernel",
        Memcpy = "memcpy",
        Memset = "memset",
        Host = "host",
        Graph = "graph",
        Empty = "empty",
        WaitEvent = "wait-event",
        EventRecord = "event-record",
        ExtSemaphoreSignal = "ext-semaphore-signal",
        ExtSemaphoreWait = "ext-semaphore-wait",
        MemAlloc = "mem-alloc",
        MemFree = "mem-free",
        Conditional = "conditional",
    }
}

words! {
    /// `cudaGraphInstantiateResult`.
    pub enum InstantiateResult: "an instantiate result" {
        Success = "success",
        Error = "error",
        InvalidStructure = "invalid-structure",
        NodeOperationNotSupported = "node-operation-not-supported",
        MultipleDevicesNotSupported = "multiple-devices-not-supported",
        ConditionalHandleUnused = "conditional-handle-unused",
    }
}

words! {
    /// `cudaGraphExecUpdateResult`.
    pub enum UpdateResult: "an update result" {
        Success = "success",
        Error = "error",
        TopologyChanged = "topology-changed",
        NodeTypeChanged = "node-type-changed",
        FunctionChanged = "function-changed",
        ParametersChanged = "parameters-changed",
        NotSupported = "not-supported",
        UnsupportedFunctionChange = "unsupported-function-change",
        AttributesChanged = "attributes-changed",
    }
}

/// The grid, block and dynamic shared memory of a launch (`grid N|full`, `block N`, `shared BYTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    pub grid: Grid,
    pub block: u32,
    pub shared_bytes: u64,
    /// `trigger`: the kernel lets the next kernel in its stream launch at once (griddepcontrol.launch_dependents).
    pub trigger: bool,
    /// `programmatic`: launched with programmatic stream serialization (cudaLaunchKernelEx), so it may overlap the
    /// previous kernel in its stream once that one triggers.
    pub programmatic: bool,
}

impl Default for LaunchShape {
    fn default() -> Self {
        LaunchShape { grid: Grid::Blocks(1), block: 1, shared_bytes: 0, trigger: false, programmatic: false }
    }
}

/// The grid and block of a compute kernel (`launch vecadd|sincos|sleep ... [grid N|full] [block N]`), as written:
/// `None` takes the kernel's default (see each launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ComputeShape {
    pub grid: Option<Grid>,
    pub block: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grid {
    Blocks(u32),
    /// `full`: as many blocks as the device keeps resident at once (SM count × resident blocks per SM for this
    /// block size and shared memory), so the launch occupies every SM.
    Full,
}

words! {
    /// How `launch fault` faults.
    pub enum Fault: "a fault" {
        /// A store to an address no allocation covers.
        IllegalAddress = "illegal-address",
        /// `__trap()`.
        Trap = "trap",
    }
}

words! {
    /// `cudaLimit` values `set-limit` may set.
    pub enum Limit: "a limit" {
        StackSize = "stack-size",
        PrintfFifoSize = "printf-fifo",
        MallocHeapSize = "malloc-heap",
    }
}

words! {
    /// `cudaFuncCache` values of `set-cache-config`.
    pub enum CacheConfig: "a cache configuration" {
        PreferNone = "prefer-none",
        PreferShared = "prefer-shared",
        PreferL1 = "prefer-l1",
        PreferEqual = "prefer-equal",
    }
}

/// The operand of `query` and `sync`: resolved by the validator to a stream or an event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Stream(StreamRef),
    Event(String),
}

words! {
    /// `cudaStreamCaptureMode`.
    pub enum CaptureMode: "a capture mode" {
        Global = "global",
        ThreadLocal = "thread-local",
        Relaxed = "relaxed",
    }
}

words! {
    /// What cudaPointerGetAttributes says an address is (`cudaMemoryType`).
    pub enum MemoryType: "a memory type" {
        /// Memory CUDA knows nothing about (ordinary pageable host memory).
        Unregistered = "unregistered",
        /// Page-locked host memory (cudaMallocHost, cudaHostAlloc, cudaHostRegister).
        Host = "host",
        Device = "device",
        Managed = "managed",
    }
}

words! {
    /// `cudaStreamCaptureStatus`.
    pub enum CaptureStatus: "a capture status" {
        None = "none",
        Active = "active",
        Invalidated = "invalidated",
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations

words! {
    /// The comparisons of `L value CMP N`.
    pub enum ValueCmp: "a comparison" {
        Eq = "==",
        Ne = "!=",
        Lt = "<",
        Le = "<=",
        Gt = ">",
        Ge = ">=",
    }
}

impl ValueCmp {
    pub fn holds(self, seen: u64, value: u64) -> bool {
        match self {
            ValueCmp::Eq => seen == value,
            ValueCmp::Ne => seen != value,
            ValueCmp::Lt => seen < value,
            ValueCmp::Le => seen <= value,
            ValueCmp::Gt => seen > value,
            ValueCmp::Ge => seen >= value,
        }
    }
}

/// `expect PREDICATE` (fail if false), `quality PREDICATE` (quality-warning if false; for behaviour the docs do
/// not promise, such as overlap), or `variant NAME: PREDICATE | NAME: PREDICATE ...` (the docs allow each;
/// the verdict is `variant` naming the first that held, and fail if none held).
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    Expect(Predicate),
    Quality(Predicate),
    Variant(Vec<(String, Predicate)>),
    /// `observe NAME: PREDICATE | ...`: the docs promise nothing here, so the case records which alternative held
    /// (it never judges: the verdict is unchanged, and it fails only if none held, e.g. the operation did not run).
    /// Alternatives may cover every outcome (`waited-for` / `not-waited-for`); a `variant` may not.
    Observe(Vec<(String, Predicate)>),
    /// `measure NAME: ...`: a figure computed from the observations and recorded in the report. It never changes
    /// the verdict (timing never decides pass or fail).
    Measure(Measure),
}

impl Expectation {
    /// Every predicate of this expectation.
    pub fn predicates(&self) -> Vec<&Predicate> {
        match self {
            Expectation::Expect(p) | Expectation::Quality(p) => vec![p],
            Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
                alternatives.iter().map(|(_, p)| p).collect()
            }
            Expectation::Measure(_) => Vec::new(),
        }
    }
}

/// `measure NAME: WHAT`: a named figure of the case.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    pub name: String,
    pub of: MeasureOf,
}

/// What a measure computes. Labels name script operations; `A to B` spans the operations from A to B in script
/// order (their device or host interval runs from the earliest start to the latest end).
#[derive(Debug, Clone, PartialEq)]
pub enum MeasureOf {
    /// `elapsed L`: milliseconds, the value of `elapsed` operation L.
    Elapsed { label: String },
    /// `device A [to B] [per N]`: milliseconds of device time (events under `timing: events`, else kernel stamps),
    /// divided by N.
    Device { from: String, to: Option<String>, per: Option<u32> },
    /// `bandwidth A [to B]`: GB/s (10^9 bytes per second) of every copy from A to B (repeats counted) over their
    /// device interval.
    Bandwidth { from: String, to: Option<String> },
    /// `host A [to B] [per N]`: microseconds of host time from A's first call to B's last return, divided by N.
    Host { from: String, to: Option<String>, per: Option<u32> },
    /// `busy A to B`: percent of the device interval of A..B during which at least one of its kernels ran.
    Busy { from: String, to: String },
    /// `spread L ...`: (max − min) / median of the device times of the operations named, in percent.
    Spread { labels: Vec<String> },
    /// `value L`: the number operation L recorded (`queue-depth`, `device-attr`, `pool-get`, ...), as a figure.
    Value { label: String },
}

impl MeasureOf {
    pub fn word(&self) -> super::words::MeasureWord {
        use super::words::MeasureWord as W;
        match self {
            MeasureOf::Elapsed { .. } => W::Elapsed,
            MeasureOf::Device { .. } => W::Device,
            MeasureOf::Bandwidth { .. } => W::Bandwidth,
            MeasureOf::Host { .. } => W::Host,
            MeasureOf::Busy { .. } => W::Busy,
            MeasureOf::Spread { .. } => W::Spread,
            MeasureOf::Value { .. } => W::Value,
        }
    }

    /// The labels it reads, in the order written.
    pub fn labels(&self) -> Vec<&String> {
        match self {
            MeasureOf::Elapsed { label } | MeasureOf::Value { label } => vec![label],
            MeasureOf::Device { from, to, .. }
            | MeasureOf::Bandwidth { from, to }
            | MeasureOf::Host { from, to, .. } => std::iter::once(from).chain(to.as_ref()).collect(),
            MeasureOf::Busy { from, to } => vec![from, to],
            MeasureOf::Spread { labels } => labels.iter().collect(),
        }
    }

    /// The unit of its value.
    pub fn unit(&self) -> &'static str {
        match self {
            MeasureOf::Elapsed { .. } | MeasureOf::Device { .. } => "ms",
            MeasureOf::Bandwidth { .. } => "GB/s",
            MeasureOf::Host { .. } => "us",
            MeasureOf::Busy { .. } | MeasureOf::Spread { .. } => "%",
            MeasureOf::Value { .. } => "count",
        }
    }
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
    /// `snapshot L == VALUE`: host function L (its first run) or `read` operation L saw every u32 of its snapshot
    /// equal to VALUE.
    SnapshotEquals { label: String, value: u32 },
    /// `callback L status CODE`: the callback's status argument.
    CallbackStatus { label: String, code: String },
    /// `elapsed L > MS` / `elapsed L >= MS` (milliseconds, may be fractional): the value `elapsed` returned.
    ElapsedAbove { label: String, ms: f64, inclusive: bool },
    /// `elapsed L < MS` / `elapsed L <= MS`: reversed events give a negative time.
    ElapsedBelow { label: String, ms: f64, inclusive: bool },
    /// `host-runs L == N`: host function or callback L ran exactly N times (once per graph launch, say).
    HostRuns { label: String, count: u32 },
    /// `L value == N` (also `!=`, `<`, `<=`, `>`, `>=`; N a number, a size or `max`): the number operation L
    /// returned (`list`, `is-enabled`, `pool-get`, `graph-mem-get`).
    Value { label: String, cmp: ValueCmp, value: u64 },
    /// `L null-padded`: `list` L's entries past the count were NULL.
    NullPadded { label: String },
    /// `L result is WORD`: the result code `instantiate ... with-params` or `update` recorded.
    Result { label: String, result: String },
    /// `L error-node is NODE|none` / `L error-from is NODE|none`: the node the result info names, as the label of
    /// the operation that added (or captured) it.
    ErrorNode { label: String, from: bool, node: Option<String> },
    /// `A same-address B` / `A other-address B`: the two `malloc-async` operations returned the same address.
    SameAddress { a: String, b: String, same: bool },
    /// `node-kind GRAPH L is KIND`: the node L produced in GRAPH has this type.
    NodeKind { graph: String, node: String, kind: NodeWord },
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
    // Two operations' values compared.
    /// `A same-value B` / `A other-value B`: the numbers operations A and B recorded (`stream-id`) are equal / differ.
    SameValue { a: String, b: String, same: bool },
    /// `A same-code B`: operations A and B returned the same code, whichever it was (where the docs name no code
    /// but promise that a later call reports the earlier one's: `cudaPeekAtLastError` after a failed launch).
    SameCode { a: String, b: String },
}
