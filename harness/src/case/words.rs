//! Every word of the language, written once. A closed set of words is an enum declared with [`words!`]: the variant
//! and its spelling sit on one line, and the parser (`Cursor::word`), the printer (`.word()`), the executor (names
//! of CUDA enum values) and the verdict all go through it. The parser matches on these enums exhaustively, so a new
//! word does not compile until it has a grammar arm, and the keyword list that names may not use is derived from
//! them.
//!
//! Connectives inside an operation (`on`, `into`, `from`, `is`, ...) are grammar, not sets, and stay literal in the
//! parser and the printer. The operation words (`OpWord`) sit beside `OpKind` in `case/ast.rs`, with the table of
//! facts, so that a new operation starts in one file.

use super::ast::OpWord;

/// A closed set of words: `from_word(w.word()) == Some(w)` for every member.
pub trait Word: Copy + Eq + 'static {
    /// What the words name, for messages: "a memory kind".
    const WHAT: &'static str;
    /// Every member, in the order messages list them.
    const ALL: &'static [Self];
    fn word(self) -> &'static str;

    fn from_word(word: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|w| w.word() == word)
    }

    /// A concrete type rather than `impl Iterator`, so it chains with iterators of shorter-lived names.
    fn words() -> std::iter::Map<std::slice::Iter<'static, Self>, fn(&Self) -> &'static str> {
        Self::ALL.iter().map(|w| w.word())
    }
}

/// `words! { /// doc  pub enum Name: "what it names" { Variant = "word", ... } }` declares the enum (Debug, Clone,
/// Copy, PartialEq, Eq, Hash; further derives and docs pass through) and its [`Word`] impl.
macro_rules! words {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $crate::case::words::Word for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$($name::$variant),+];
            fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }
    };
}
pub(crate) use words;

words! {
    /// The words that structure a case file.
    pub enum StructureWord: "a case keyword" {
        Case = "case",
        End = "end",
        Rule = "rule",
        Source = "source",
        Requires = "requires",
        Env = "env",
        OwnProcess = "own-process",
        PoisonsContext = "poisons-context",
        Timing = "timing",
        Samples = "samples",
    }
}

words! {
    /// The words that start a declaration.
    pub enum DeclWord: "a declaration" {
        Stream = "stream",
        Event = "event",
        Buffer = "buffer",
        Gate = "gate",
        Thread = "thread",
        Graph = "graph",
        Exec = "exec",
        Pool = "pool",
        Condition = "condition",
        Slice = "slice",
        // A second process of the case
        Process = "process",
    }
}

words! {
    /// The words that start an expectation (`measure` records a figure; it judges nothing).
    pub enum ExpectWord: "an expectation" {
        Expect = "expect",
        Quality = "quality",
        Variant = "variant",
        Observe = "observe",
        Measure = "measure",
    }
}

words! {
    /// The probe kernels `launch` names (`kernels/probes.cu`).
    pub enum KernelWord: "a kernel" {
        Gate = "gate",
        Spin = "spin",
        LazySpin = "lazy-spin",
        Fault = "fault",
        Fill = "fill",
        Transform = "transform",
        Compare = "compare",
        /// The seeds' compute kernels (`kernels/probes.cu`): `c = a + b` on floats, a sin/cos loop, a clock64 sleep.
        VecAdd = "vecadd",
        SinCos = "sincos",
        Sleep = "sleep",
        /// Graph kernel nodes only: they take a conditional handle.
        SetCondition = "set-condition",
        Countdown = "countdown",
        /// Kernels that launch graphs from the device (`kernels/device_launch.cu`).
        DeviceLaunch = "device-launch",
        RelaunchSelf = "relaunch-self",
        CurrentGraph = "current-graph",
        /// `__launch_bounds__(32)`: at most 32 threads per block. For `call` only (`func=bounded32`).
        Bounded32 = "bounded32",
        /// More than 64 registers per thread: a block of 1024 threads exceeds the register file. For `call` only
        /// (`func=many-registers`).
        ManyRegisters = "many-registers",
        /// Kernels of `kernels/other_images.cu`, each in a module of its own, for `call` only and never preloaded:
        /// an sm_80 cubin without PTX, and compute_80 PTX without a cubin.
        Sm80Only = "sm80-only",
        PtxOnly = "ptx-only",
        /// `kernels/bad.ptx` and `kernels/future.ptx`: PTX that does not compile, and PTX of ISA 99.0.
        BadPtx = "bad-ptx",
        FuturePtx = "future-ptx",
    }
}

impl KernelWord {
    /// Whether the executor and the reproducers load this kernel before a case's script: every kernel but
    /// `lazy-spin` (its first launch must be the one that loads it) and the kernels of other images (the first
    /// call that needs their module is what a case observes: a missing image, or a JIT compilation).
    pub fn preloaded(self) -> bool {
        !matches!(
            self,
            KernelWord::LazySpin
                | KernelWord::Sm80Only
                | KernelWord::PtxOnly
                | KernelWord::BadPtx
                | KernelWord::FuturePtx
        )
    }

    /// Kernels only `call` names (`func=WORD`): they have no `launch` or node syntax.
    pub fn call_only(self) -> bool {
        matches!(
            self,
            KernelWord::Bounded32
                | KernelWord::ManyRegisters
                | KernelWord::Sm80Only
                | KernelWord::PtxOnly
                | KernelWord::BadPtx
                | KernelWord::FuturePtx
        )
    }
}

words! {
    /// The images of the other modules as bytes (`kernels/register.c` registers the same ones): a library's code
    /// (`code=sm80-fatbin`: a pointer to the bytes), or its file (`fileName=sm80-fatbin`: the bytes written to a
    /// file of that name in the case's private directory).
    pub enum ImageWord: "an image (sm80-fatbin, ptx-fatbin, bad-ptx-fatbin, future-ptx-fatbin)" {
        /// `kernels/other_images.cu` as an sm_80 cubin only.
        Sm80 = "sm80-fatbin",
        /// `kernels/other_images.cu` as compute_80 PTX only.
        Ptx = "ptx-fatbin",
        /// `kernels/bad.ptx` packed: PTX that does not compile.
        BadPtx = "bad-ptx-fatbin",
        /// `kernels/future.ptx` packed: PTX of ISA 99.0.
        FuturePtx = "future-ptx-fatbin",
    }
}

words! {
    /// The `__device__` variables a symbol parameter names (`symbol=cc_symbol`), each registered with cudart as nvcc
    /// registers a variable.
    pub enum SymbolWord: "a device variable (cc_symbol, cc_sm80_symbol, cc_ptx_symbol)" {
        /// The probes' `__device__ uint32_t cc_symbol[1024]` (kernels/probes.cu).
        Probe = "cc_symbol",
        /// `cc_sm80_symbol[1024]` of the sm_80-only image (kernels/other_images.cu).
        Sm80 = "cc_sm80_symbol",
        /// `cc_ptx_symbol[1024]` of the PTX-only image (kernels/other_images.cu).
        Ptx = "cc_ptx_symbol",
    }
}

words! {
    /// The probe callbacks a `callback` parameter names (`callbackFunc=log-probe`): each is written once in the
    /// harness (`exec::probe_callbacks`, Rust `extern "C"`) and once in the reproducer's header (`cc::log_probe`, ..., C), and
    /// does the same in both: it adds 1 to the `uint32_t` its user-data pointer points to, when that is not NULL
    /// (pass a host buffer as the call's user data and read it with `BUF[0] == N`), and to a counter of its own.
    pub enum CallbackWord: "a probe callback (log-probe, async-probe, host-probe)" {
        /// A `cudaLogsCallback_t` (cudaLogsRegisterCallback): counts the log messages it receives.
        Log = "log-probe",
        /// A `cudaAsyncCallback` (cudaDeviceRegisterAsyncNotification): counts the notifications it receives.
        Async = "async-probe",
        /// A `cudaHostFn_t` (cudaUserObjectCreate's destroy, a host node's `fn_`, cudaLaunchHostFunc): counts its
        /// runs. It makes no CUDA call and never blocks, so it is a valid destructor and host function.
        Host = "host-probe",
    }
}

impl CallbackWord {
    /// The type of the parameters it fits, as the bindings (and the header) name it.
    pub fn c_type(self) -> &'static str {
        match self {
            CallbackWord::Log => "cudaLogsCallback_t",
            CallbackWord::Async => "cudaAsyncCallback",
            CallbackWord::Host => "cudaHostFn_t",
        }
    }

    /// The reproducer header's C function of the same behaviour.
    pub fn c_function(self) -> &'static str {
        match self {
            CallbackWord::Log => "cc::log_probe",
            CallbackWord::Async => "cc::async_probe",
            CallbackWord::Host => "cc::host_probe",
        }
    }
}

words! {
    /// The device-only launch streams of a device-side `cudaGraphLaunch` (Programming Guide §4.2.6.2, Table 9).
    pub enum DeviceLaunchMode: "a device launch mode (tail, fire-and-forget or sibling)" {
        /// `cudaStreamGraphTailLaunch`
        Tail = "tail",
        /// `cudaStreamGraphFireAndForget`
        FireAndForget = "fire-and-forget",
        /// `cudaStreamGraphFireAndForgetAsSibling`
        Sibling = "sibling",
    }
}

impl DeviceLaunchMode {
    /// The launch stream's handle value (cuda_device_runtime_api.h: `(cudaStream_t)0x0100000000000000` ...).
    pub fn stream_value(self) -> u64 {
        match self {
            DeviceLaunchMode::Tail => 0x0100_0000_0000_0000,
            DeviceLaunchMode::FireAndForget => 0x0200_0000_0000_0000,
            DeviceLaunchMode::Sibling => 0x0300_0000_0000_0000,
        }
    }

    /// The launch stream's name in cuda_device_runtime_api.h.
    pub fn stream_name(self) -> &'static str {
        match self {
            DeviceLaunchMode::Tail => "cudaStreamGraphTailLaunch",
            DeviceLaunchMode::FireAndForget => "cudaStreamGraphFireAndForget",
            DeviceLaunchMode::Sibling => "cudaStreamGraphFireAndForgetAsSibling",
        }
    }
}

words! {
    /// The words of `requires:`. `Requirement::word` maps each requirement to its word.
    pub enum RequirementWord: "a requirement" {
        ConcurrentKernels = "concurrent-kernels",
        AsyncEngines = "async-engines",
        Devices = "devices",
        Runtime = "runtime",
        Driver = "driver",
        Compute = "compute",
        StreamPriorities = "stream-priorities",
        MappedMemory = "mapped-memory",
        Connections = "connections",
        MemoryPools = "memory-pools",
        PeerAccess = "peer-access",
        // Managed memory
        ConcurrentManagedAccess = "concurrent-managed-access",
        PageableMemoryAccess = "pageable-memory-access",
        NoDriver = "no-driver",
        Vulkan = "vulkan",
        Memory = "memory",
    }
}

words! {
    /// The words that start a predicate (the others start with the name of what they are about).
    pub enum PredicateWord: "a predicate" {
        HostOrder = "host-order",
        HostRuns = "host-runs",
        Snapshot = "snapshot",
        Callback = "callback",
        Elapsed = "elapsed",
        Nodes = "nodes",
        Edges = "edges",
        Edge = "edge",
        NoEdge = "no-edge",
        Path = "path",
        NoPath = "no-path",
        NodeKind = "node-kind",
    }
}

words! {
    /// The word after the subject of a predicate: `A before B`, `BUF == V`, `BUF[I] == V`, `GATE timed-out`.
    pub enum Verb: "a predicate word" {
        Before = "before",
        Overlaps = "overlaps",
        WaitedFor = "waited-for",
        NotWaitedFor = "not-waited-for",
        Returned = "returned",
        Equals = "==",
        Index = "[",
        TimedOut = "timed-out",
        Value = "value",
        NullPadded = "null-padded",
        Result = "result",
        ErrorNode = "error-node",
        ErrorFrom = "error-from",
        SameAddress = "same-address",
        OtherAddress = "other-address",
        // Two operations' values compared (stream ids).
        SameValue = "same-value",
        OtherValue = "other-value",
        // Issue 20 item 10: two operations' return codes compared (a last error against the failure that set it).
        SameCode = "same-code",
    }
}

words! {
    /// `elapsed L CMP MS`.
    pub enum Comparison: "a comparison" {
        Above = ">",
        AtLeast = ">=",
        Below = "<",
        AtMost = "<=",
    }
}

words! {
    /// What a `measure` computes (`measure NAME: WORD ...`).
    pub enum MeasureWord: "a measure" {
        /// `elapsed L`: the milliseconds an `elapsed` operation returned.
        Elapsed = "elapsed",
        /// `device A [to B] [per N]`: device milliseconds from A's start to B's end.
        Device = "device",
        /// `bandwidth A [to B]`: GB/s of the copies from A to B over their device interval.
        Bandwidth = "bandwidth",
        /// `host A [to B] [per N]`: host microseconds from A's call to B's return.
        Host = "host",
        /// `busy A to B`: percent of the interval in which a kernel of A..B ran.
        Busy = "busy",
        /// `spread L ...`: (max − min) / median of the operations' device times, in percent.
        Spread = "spread",
        /// `value L`: the number operation L recorded (a count: the depth `queue-depth` measured).
        Value = "value",
    }
}

words! {
    /// The default streams every case has.
    pub enum BuiltinStream: "a built-in stream" {
        /// cudaStreamLegacy (0x1).
        Legacy = "legacy",
        /// cudaStreamPerThread (0x2).
        PerThread = "per-thread",
        /// The handle 0.
        Null = "null",
    }
}

words! {
    /// What may follow `stream NAME`.
    pub enum StreamAttr: "a stream attribute" {
        Blocking = "blocking",
        NonBlocking = "non-blocking",
        Priority = "priority",
        Flags = "flags",
        Later = "later",
        Device = "device",
    }
}

words! {
    /// What may follow `event NAME`.
    pub enum EventAttr: "an event flag" {
        DisableTiming = "disable-timing",
        BlockingSync = "blocking-sync",
        Interprocess = "interprocess",
        Flags = "flags",
        Later = "later",
        Device = "device",
    }
}

words! {
    /// What may follow a `launch spin ... on STREAM`.
    pub enum ShapeWord: "a launch shape" {
        Grid = "grid",
        Block = "block",
        Shared = "shared",
        Trigger = "trigger",
        Programmatic = "programmatic",
    }
}

/// Words a name or label may not be: what starts a line, and the built-in streams.
pub fn reserved(word: &str) -> Option<&'static str> {
    if BuiltinStream::from_word(word).is_some() {
        Some("a built-in stream")
    } else if StructureWord::from_word(word).is_some()
        || DeclWord::from_word(word).is_some()
        || ExpectWord::from_word(word).is_some()
        || OpWord::from_word(word).is_some()
    {
        Some("a keyword")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ast::{CacheConfig, CaptureMode, CaptureStatus, Fault, Limit, MemKind, MemoryType};
    use std::collections::HashSet;

    /// Each set round-trips and has no word twice.
    fn check<W: Word + std::fmt::Debug>() {
        let mut seen = HashSet::new();
        for &w in W::ALL {
            assert!(seen.insert(w.word()), "{} is written twice in {}", w.word(), W::WHAT);
            assert_eq!(W::from_word(w.word()), Some(w));
        }
        assert_eq!(W::from_word("no-such-word"), None);
    }

    #[test]
    fn every_set_round_trips() {
        check::<StructureWord>();
        check::<DeclWord>();
        check::<ExpectWord>();
        check::<OpWord>();
        check::<KernelWord>();
        check::<RequirementWord>();
        check::<PredicateWord>();
        check::<Verb>();
        check::<Comparison>();
        check::<BuiltinStream>();
        check::<StreamAttr>();
        check::<EventAttr>();
        check::<ShapeWord>();
        check::<MeasureWord>();
        check::<crate::case::ast::Timing>();
        check::<MemKind>();
        check::<CaptureMode>();
        check::<CaptureStatus>();
        check::<MemoryType>();
        check::<Fault>();
        check::<Limit>();
        check::<CacheConfig>();
        check::<crate::case::ast::NodeWord>();
        check::<crate::case::ast::PoolAttr>();
        check::<crate::case::ast::GraphMemAttr>();
        check::<crate::case::ast::InstantiateFlag>();
        check::<crate::case::ast::InstantiateResult>();
        check::<crate::case::ast::UpdateResult>();
        check::<crate::case::ast::ValueCmp>();
        check::<SymbolWord>();
        check::<ImageWord>();
        check::<CallbackWord>();
        assert_eq!(SymbolWord::Probe.word(), crate::case::call::PROBE_SYMBOL);
    }

    #[test]
    fn line_starting_words_are_distinct() {
        let mut seen = HashSet::new();
        let all = StructureWord::words().chain(DeclWord::words()).chain(ExpectWord::words()).chain(OpWord::words());
        for w in all {
            assert!(seen.insert(w), "`{w}` starts two kinds of line");
        }
    }

    #[test]
    fn reserved_words() {
        assert_eq!(reserved("legacy"), Some("a built-in stream"));
        assert_eq!(reserved("sync"), Some("a keyword"));
        assert_eq!(reserved("s1"), None);
    }
}
