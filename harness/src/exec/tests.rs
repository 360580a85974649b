//! The whole executor on a machine without a GPU (as in CI): every CUDA call fails, and the run must still end
//! quickly with a complete record of every declaration and operation, never a panic or a hang. On a machine with
//! a GPU the same case runs for real (with null kernel handles, so every launch fails harmlessly).

use super::test_support::{case, h100, op};
use super::*;
use crate::case::ast::{Advice, AttachMode, DeviceAttrWord, MemPlace};
use crate::case::ast::{
    AttrValue, CacheConfig, CaptureMode, CaptureStatus, ComputeShape, ConditionalKind, EventFlags, Fault, GraphMemAttr,
    Grid, InstantiateFlag, KernelCall, LaunchShape, Limit, ListWord, MemKind, MemoryType, NodeKernel, NodeSpec, Op,
    OpKind, OpWord, PoolAttr, Priority, SrcAccessOrder, StreamRef, SyncDomain, Target, Timing, TimingSpec,
};
use crate::case::call::{ArgValue, ArgWord, Call, CallArg, ObjectKind};
use crate::case::words::Word;
use std::time::Instant;

fn every_operation() -> Case {
    let s = || StreamRef::Named("s".into());
    let t = || StreamRef::Named("t".into());
    let name = |n: &str| n.to_owned();
    let decls = vec![
        Decl::Stream {
            name: name("s"),
            non_blocking: true,
            priority: Some(Priority::Greatest),
            raw_flags: None,
            later: false,
            device: None,
            expect: vec![],
        },
        Decl::Stream {
            name: name("t"),
            non_blocking: false,
            priority: None,
            raw_flags: None,
            later: false,
            device: None,
            expect: vec![],
        },
        Decl::Event {
            name: name("e"),
            flags: EventFlags::default(),
            raw_flags: None,
            later: false,
            device: None,
            expect: vec![],
        },
        Decl::Event {
            name: name("e2"),
            flags: EventFlags { disable_timing: true, ..EventFlags::default() },
            raw_flags: None,
            later: false,
            device: None,
            expect: vec![],
        },
        Decl::Buffer { name: name("d"), kind: MemKind::Device, bytes: 4096, device: None, later: false },
        Decl::Buffer { name: name("h"), kind: MemKind::Pinned, bytes: 4096, device: None, later: false },
        Decl::Buffer { name: name("p"), kind: MemKind::Pageable, bytes: 4096, device: None, later: false },
        Decl::Buffer { name: name("m"), kind: MemKind::Mapped, bytes: 4096, device: None, later: false },
        Decl::Buffer { name: name("late"), kind: MemKind::Device, bytes: 4096, device: None, later: true },
        Decl::Buffer { name: name("late_pinned"), kind: MemKind::Pinned, bytes: 4096, device: None, later: true },
        Decl::Buffer { name: name("pool"), kind: MemKind::Device, bytes: 4096, device: None, later: true },
        Decl::Stream {
            name: name("u"),
            non_blocking: true,
            priority: None,
            raw_flags: None,
            later: true,
            device: None,
            expect: vec![],
        },
        Decl::Event {
            name: name("e3"),
            flags: EventFlags::default(),
            raw_flags: None,
            later: true,
            device: None,
            expect: vec![],
        },
        Decl::Gate { name: name("g") },
        Decl::Thread { name: name("w") },
        Decl::Graph { name: name("G") },
        Decl::Exec { name: name("E") },
        Decl::Graph { name: name("A") },
        Decl::Graph { name: name("body") },
        Decl::Exec { name: name("EA") },
        Decl::Pool { name: name("mp"), default: false, posix_fd: false },
        Decl::Pool { name: name("dp"), default: true, posix_fd: false },
        Decl::Pool { name: name("xp"), default: false, posix_fd: true },
        Decl::Buffer { name: name("mm"), kind: MemKind::Managed, bytes: 4096, device: None, later: false },
        Decl::Event {
            name: name("ie"),
            flags: EventFlags { disable_timing: true, interprocess: true, ..EventFlags::default() },
            raw_flags: None,
            later: false,
            device: None,
            expect: vec![],
        },
        Decl::Event {
            name: name("ie2"),
            flags: EventFlags::default(),
            raw_flags: None,
            later: true,
            device: None,
            expect: vec![],
        },
        Decl::Condition { name: name("c") },
        Decl::Buffer { name: name("ga"), kind: MemKind::Device, bytes: 4096, device: None, later: true },
    ];
    let pt = || StreamRef::PerThread;
    let script = vec![
        op(Some("held"), None, OpKind::Launch { kernel: KernelCall::Gate { gate: name("g") }, stream: s() }),
        op(
            Some("k"),
            None,
            OpKind::Launch { kernel: KernelCall::Spin { ns: 1000, shape: LaunchShape::default() }, stream: t() },
        ),
        op(
            None,
            None,
            OpKind::Launch {
                kernel: KernelCall::Spin {
                    ns: 0,
                    shape: LaunchShape {
                        grid: Grid::Full,
                        block: 32,
                        trigger: true,
                        programmatic: true,
                        ..LaunchShape::default()
                    },
                },
                stream: StreamRef::Legacy,
            },
        ),
        op(None, None, OpKind::Launch { kernel: KernelCall::Fill { buf: name("d"), value: 1 }, stream: s() }),
        op(
            None,
            None,
            OpKind::Launch { kernel: KernelCall::Transform { buf: name("d"), mul: 2, add: 1 }, stream: s() },
        ),
        op(
            None,
            None,
            OpKind::Launch { kernel: KernelCall::Compare { a: name("d"), b: name("h"), into: name("m") }, stream: s() },
        ),
        op(
            None,
            None,
            OpKind::Memcpy { dst: name("h"), src: name("d"), bytes: None, inferred: false, stream: Some(s()) },
        ),
        op(
            None,
            None,
            OpKind::Memcpy { dst: name("p"), src: name("p"), bytes: Some(64), inferred: true, stream: None },
        ),
        op(None, None, OpKind::Memset { buf: name("d"), byte: 0, bytes: None, stream: None }),
        op(None, None, OpKind::Memset { buf: name("h"), byte: 1, bytes: Some(16), stream: Some(s()) }),
        op(None, None, OpKind::Record { event: name("e"), stream: s(), external: false }),
        op(None, None, OpKind::Wait { stream: t(), event: name("e"), external: false }),
        op(None, None, OpKind::Record { event: name("e2"), stream: StreamRef::Legacy, external: true }),
        op(Some("q"), None, OpKind::Query { target: Target::Stream(StreamRef::Legacy) }),
        op(None, None, OpKind::Query { target: Target::Event(name("e")) }),
        op(None, None, OpKind::Open { gate: name("g"), after_ns: Some(10_000_000) }),
        op(Some("sy"), None, OpKind::Sync { target: Target::Stream(s()) }),
        op(None, None, OpKind::Sync { target: Target::Event(name("e")) }),
        op(None, None, OpKind::DeviceSync),
        op(Some("el"), None, OpKind::Elapsed { start: name("e"), stop: name("e2") }),
        op(
            Some("h1"),
            None,
            OpKind::HostFunc { stream: StreamRef::Legacy, snapshot: Some(name("p")), hold: Some(name("g")) },
        ),
        op(Some("h2"), None, OpKind::HostFunc { stream: StreamRef::Legacy, snapshot: Some(name("d")), hold: None }),
        op(Some("cb"), None, OpKind::Callback { stream: StreamRef::Legacy }),
        op(None, Some("w"), OpKind::BeginCapture { stream: pt(), mode: CaptureMode::ThreadLocal }),
        op(
            None,
            Some("w"),
            OpKind::Launch { kernel: KernelCall::Spin { ns: 0, shape: LaunchShape::default() }, stream: pt() },
        ),
        op(None, Some("w"), OpKind::CaptureStatus { stream: pt(), status: CaptureStatus::Active }),
        op(None, Some("w"), OpKind::CaptureDeps { stream: pt(), count: 1, nodes: vec![] }),
        op(None, Some("w"), OpKind::ExchangeCaptureMode { mode: CaptureMode::Relaxed }),
        op(None, None, OpKind::EndCapture { stream: s(), graph: name("G") }),
        op(
            None,
            None,
            OpKind::Instantiate {
                exec: name("E"),
                graph: name("G"),
                flags: vec![InstantiateFlag::AutoFreeOnLaunch],
                upload: Some(s()),
                with_params: true,
            },
        ),
        op(None, None, OpKind::Create { name: name("A") }),
        op(
            Some("n1"),
            None,
            OpKind::AddNode {
                graph: name("A"),
                node: NodeSpec::Kernel(NodeKernel::Fill { buf: name("d"), value: 1 }),
                after: vec![],
            },
        ),
        op(
            Some("n2"),
            None,
            OpKind::AddNode {
                graph: name("A"),
                node: NodeSpec::Memset { buf: name("d"), byte: 0, bytes: None },
                after: vec![name("n1")],
            },
        ),
        op(Some("n3"), None, OpKind::AddNode { graph: name("A"), node: NodeSpec::Host, after: vec![name("n2")] }),
        op(
            Some("n4"),
            None,
            OpKind::AddNode { graph: name("A"), node: NodeSpec::MemAlloc { buf: name("ga") }, after: vec![] },
        ),
        op(
            Some("n5"),
            None,
            OpKind::AddNode { graph: name("A"), node: NodeSpec::MemFree { buf: name("ga") }, after: vec![name("n4")] },
        ),
        op(None, None, OpKind::ConditionCreate { condition: name("c"), graph: name("A"), default: Some(1) }),
        op(
            Some("n6"),
            None,
            OpKind::AddNode {
                graph: name("A"),
                node: NodeSpec::Conditional {
                    kind: ConditionalKind::While,
                    condition: name("c"),
                    size: 1,
                    bodies: vec![name("body")],
                },
                after: vec![],
            },
        ),
        op(None, None, OpKind::Dependency { graph: name("A"), from: name("n1"), to: name("n3"), remove: false }),
        op(None, None, OpKind::Dependency { graph: name("A"), from: name("n1"), to: name("n3"), remove: true }),
        op(Some("ls"), None, OpKind::List { what: ListWord::Edges, graph: name("A"), room: Some(9) }),
        op(None, None, OpKind::Clone { copy: name("G"), graph: name("A") }),
        op(
            None,
            None,
            OpKind::SetNode {
                exec: None,
                node: name("n1"),
                spec: NodeSpec::Kernel(NodeKernel::Fill { buf: name("d"), value: 2 }),
            },
        ),
        op(
            None,
            None,
            OpKind::Instantiate { exec: name("EA"), graph: name("A"), flags: vec![], upload: None, with_params: false },
        ),
        op(None, None, OpKind::Update { exec: name("EA"), graph: name("A") }),
        op(
            None,
            None,
            OpKind::SetNode {
                exec: Some(name("EA")),
                node: name("n2"),
                spec: NodeSpec::Memset { buf: name("d"), byte: 1, bytes: None },
            },
        ),
        op(None, None, OpKind::SetEnabled { exec: name("EA"), node: name("n1"), enabled: false }),
        op(None, None, OpKind::GetEnabled { exec: name("EA"), node: name("n1") }),
        op(None, None, OpKind::DestroyNode { node: name("n3") }),
        op(
            None,
            None,
            OpKind::BeginCaptureToGraph {
                stream: s(),
                graph: name("A"),
                after: vec![name("n1")],
                mode: CaptureMode::Global,
            },
        ),
        op(None, None, OpKind::UpdateCaptureDeps { stream: s(), set: true, nodes: vec![name("n2")] }),
        op(None, None, OpKind::PoolSet { pool: name("mp"), attr: PoolAttr::ReleaseThreshold, value: u64::MAX }),
        op(None, None, OpKind::PoolGet { pool: name("dp"), attr: PoolAttr::ReuseAllowOpportunistic }),
        op(None, None, OpKind::PoolTrim { pool: name("mp"), keep: 0 }),
        op(None, None, OpKind::GraphMemTrim),
        op(None, None, OpKind::GraphMemGet { attr: GraphMemAttr::UsedMemCurrent }),
        op(None, None, OpKind::LaunchGraph { exec: name("E"), stream: s() }),
        op(None, None, OpKind::Upload { exec: name("E"), stream: s() }),
        op(None, None, OpKind::Destroy { name: name("e") }),
        op(None, None, OpKind::Malloc { bytes: 4096 }),
        op(None, None, OpKind::Launch { kernel: KernelCall::LazySpin { ns: 1000 }, stream: s() }),
        op(None, None, OpKind::Launch { kernel: KernelCall::Fault { fault: Fault::IllegalAddress }, stream: s() }),
        op(None, None, OpKind::Create { name: name("late") }),
        op(None, None, OpKind::Create { name: name("late_pinned") }),
        op(None, None, OpKind::Create { name: name("u") }),
        op(None, None, OpKind::Create { name: name("e3") }),
        op(Some("rd"), None, OpKind::Read { buf: name("late") }),
        op(None, None, OpKind::Read { buf: name("h") }),
        op(None, None, OpKind::Destroy { name: name("late") }),
        op(None, None, OpKind::Destroy { name: name("late_pinned") }),
        op(None, None, OpKind::Destroy { name: name("u") }),
        op(None, None, OpKind::MallocAsync { buf: name("pool"), stream: s(), pool: Some(name("mp")) }),
        op(None, None, OpKind::FreeAsync { buf: name("pool"), stream: s() }),
        op(None, None, OpKind::Register { buf: name("p") }),
        op(None, None, OpKind::Unregister { buf: name("p") }),
        op(None, None, OpKind::Register { buf: name("p") }),
        op(None, None, OpKind::SetDevice { device: 0 }),
        op(None, None, OpKind::GetDevice { expect: Some(0) }),
        op(None, None, OpKind::MemcpyPeer { dst: name("d"), src: name("d"), bytes: Some(64), stream: None }),
        op(None, None, OpKind::MemcpyPeer { dst: name("d"), src: name("d"), bytes: None, stream: Some(s()) }),
        op(None, None, OpKind::CanAccessPeer { device: 0, peer: 0 }),
        op(None, None, OpKind::PeerAccess { peer: 0, enable: true }),
        op(None, None, OpKind::PeerAccess { peer: 0, enable: false }),
        op(None, None, OpKind::SetLimit { limit: Limit::StackSize, value: 4096 }),
        op(None, None, OpKind::SetCacheConfig { config: CacheConfig::PreferShared }),
        op(None, None, OpKind::StreamPriority { stream: s(), priority: Priority::Greatest }),
        op(None, None, OpKind::StreamFlags { stream: StreamRef::PerThread }),
        op(None, None, OpKind::PeekLastError),
        op(Some("gle"), Some("w"), OpKind::GetLastError),
        // Batched copies, stream identity, stream and kernel-node attributes.
        op(
            None,
            None,
            OpKind::MemcpyBatch {
                copies: vec![(name("d"), name("h"))],
                stream: s(),
                order: SrcAccessOrder::DuringCall,
                attrs_at: Some(vec![0]),
                three_d: false,
            },
        ),
        op(
            None,
            None,
            OpKind::MemcpyBatch {
                copies: vec![(name("h"), name("d"))],
                stream: s(),
                order: SrcAccessOrder::Any,
                attrs_at: None,
                three_d: true,
            },
        ),
        op(None, None, OpKind::StreamDevice { stream: StreamRef::Legacy, device: 0 }),
        op(None, None, OpKind::StreamId { stream: StreamRef::PerThread }),
        op(None, None, OpKind::StreamAttr { stream: s(), value: AttrValue::Priority(Priority::Least) }),
        op(None, None, OpKind::SetStreamAttr { stream: s(), value: AttrValue::MemSyncDomain(SyncDomain::Remote) }),
        op(None, None, OpKind::CopyStreamAttrs { dst: s(), src: StreamRef::PerThread }),
        op(None, None, OpKind::NodeAttr { node: name("n1"), value: AttrValue::Priority(Priority::Greatest) }),
        op(None, None, OpKind::SetNodeAttr { node: name("n1"), value: AttrValue::Priority(Priority::Value(-3)) }),
        op(None, None, OpKind::Open { gate: name("g"), after_ns: None }),
        op(None, None, OpKind::Sleep { ns: 1_000_000 }),
        op(None, None, OpKind::Attach { buf: name("mm"), stream: s(), mode: AttachMode::Single, bytes: None }),
        op(None, None, OpKind::Prefetch { buf: name("mm"), to: MemPlace::Device, stream: s() }),
        op(None, None, OpKind::Advise { buf: name("mm"), advice: Advice::ReadMostly, place: MemPlace::Host }),
        op(None, None, OpKind::MallocManaged { bytes: 4096, host: false }),
        op(Some("da"), None, OpKind::DeviceAttr { attr: DeviceAttrWord::IpcEventSupport }),
        op(Some("dc"), None, OpKind::DeviceCount),
        op(Some("ih"), None, OpKind::IpcMemHandle { buf: name("d") }),
        op(Some("io"), None, OpKind::IpcOpenMem { handle: name("ih"), into: Some(name("late")) }),
        op(None, None, OpKind::IpcCloseMem { opened: name("io") }),
        op(Some("ieh"), None, OpKind::IpcEventHandle { event: name("ie") }),
        op(None, None, OpKind::IpcOpenEvent { handle: name("ieh"), into: name("ie2") }),
        op(None, None, OpKind::PoolExport { pool: name("xp") }),
        op(Some("uo"), None, OpKind::UserObject),
        op(None, None, OpKind::RetainUserObject { graph: name("G"), object: name("uo"), count: 1, take: true }),
        op(None, None, OpKind::ReleaseUserObject { graph: Some(name("G")), object: name("uo"), count: 1 }),
        op(None, None, OpKind::ReleaseUserObject { graph: None, object: name("uo"), count: 1 }),
        op(None, None, OpKind::Destroyed { object: name("uo"), wait: false }),
        op(None, None, OpKind::QueueDepth { stream: s(), gate: name("g"), max: 4 }),
        op(Some("vm"), None, OpKind::VkMemory { bytes: 4096 }),
        op(Some("vs"), None, OpKind::VkSemaphore { timeline: Some(1) }),
        op(None, None, OpKind::VkWrite { memory: name("vm"), value: 7 }),
        op(None, None, OpKind::VkRead { memory: name("vm"), at: 0, bytes: None }),
        op(None, None, OpKind::VkCounter { semaphore: name("vs") }),
        op(
            Some("mi"),
            None,
            OpKind::Call(Call {
                function: name("cudaMemGetInfo"),
                args: vec![CallArg { name: name("total"), value: ArgValue::Word(ArgWord::Null) }],
                unresolved: None,
            }),
        ),
        op(
            None,
            None,
            OpKind::Call(Call {
                function: name("cudaMemcpyAsync"),
                args: vec![
                    CallArg { name: name("dst"), value: ArgValue::Object(name("d"), ObjectKind::Buffer) },
                    CallArg { name: name("src"), value: ArgValue::Output { label: name("mi"), param: name("free") } },
                    CallArg { name: name("stream"), value: ArgValue::Stream(s()) },
                ],
                unresolved: None,
            }),
        ),
        op(
            Some("pageable-kernel"),
            None,
            OpKind::Launch { kernel: KernelCall::Fill { buf: name("p"), value: 3 }, stream: StreamRef::Legacy },
        ),
        op(
            Some("too-big"),
            None,
            OpKind::Memcpy { dst: name("p"), src: name("p"), bytes: Some(8192), inferred: false, stream: None },
        ),
        op(
            None,
            None,
            OpKind::Memcpy { dst: name("part"), src: name("h"), bytes: None, inferred: false, stream: Some(s()) },
        ),
        op(
            Some("vecadd"),
            None,
            OpKind::Launch {
                kernel: KernelCall::VecAdd {
                    a: name("d"),
                    b: name("part"),
                    into: name("d"),
                    shape: ComputeShape::default(),
                },
                stream: s(),
            },
        ),
        op(
            None,
            None,
            OpKind::Launch {
                kernel: KernelCall::SinCos {
                    buf: name("part"),
                    iterations: 10,
                    shape: ComputeShape { grid: Some(Grid::Full), block: Some(64) },
                },
                stream: t(),
            },
        ),
        op(
            None,
            None,
            OpKind::Launch { kernel: KernelCall::Sleep { cycles: 1000, shape: ComputeShape::default() }, stream: s() },
        ),
        Op {
            repeat: 3,
            ..op(
                Some("thrice"),
                None,
                OpKind::Launch { kernel: KernelCall::Spin { ns: 0, shape: LaunchShape::default() }, stream: s() },
            )
        },
        op(None, None, OpKind::PointerType { buf: name("d"), memory: MemoryType::Device }),
    ];
    let mut decls = decls;
    decls.push(Decl::Slice { name: name("part"), of: name("d"), offset: 1024, bytes: 1024 });
    case(decls, script, vec![])
}

fn null_kernels() -> KernelTable {
    let null = std::ptr::null();
    KernelTable {
        gate: null,
        spin: null,
        lazy_spin: null,
        fault: null,
        fill: null,
        transform: null,
        compare: null,
        spin_trigger: null,
        vecadd: null,
        sincos: null,
        sleep: null,
        set_condition: null,
        countdown: null,
        device_launch: null,
        relaunch_self: null,
        current_graph: null,
        bounded32: null,
        many_registers: null,
        sm80_only: null,
        ptx_only: null,
        bad_ptx: null,
        future_ptx: null,
        symbol: null,
        sm80_symbol: null,
        ptx_symbol: null,
        images: crate::device::kernels::OtherImages::NONE,
    }
}

/// The same, with every operation's device work bracketed by events: without a GPU nothing is timed, and nothing
/// panics or hangs either; with one, every operation with device work that ran before the first capture began has
/// its interval (later ones may be on a capturing stream, which records no timestamps, so they may have none).
#[test]
fn a_timed_case_runs_without_panic_or_hang() {
    let mut case = every_operation();
    case.timing = Some(TimingSpec { source: Timing::Events, from: None });
    let opts =
        ExecOptions { gate_timeout_ns: 1_000_000_000, case_deadline: Duration::from_secs(5), ..ExecOptions::default() };
    let obs = run_case(&case, &null_kernels(), &h100(), &opts);
    assert_eq!(obs.ops.len(), case.script.len());
    for t in &obs.timed {
        assert!(case.script[t.op_index].kind.has_device_work(), "{t:?}");
        assert!(t.start_ms <= t.end_ms, "{t:?}");
    }
    if crate::device::gpu::probe(0).is_err() {
        assert!(obs.timed.is_empty());
        assert!(obs.notes.iter().any(|n| n.starts_with("timing:")), "{:?}", obs.notes);
        return;
    }
    let first_capture = case
        .script
        .iter()
        .position(|o| matches!(o.kind, OpKind::BeginCapture { .. } | OpKind::BeginCaptureToGraph { .. }))
        .expect("every_operation begins a capture");
    let ran_with_device_work: Vec<usize> =
        (0..first_capture).filter(|&i| case.is_timed(i) && obs.ops[i].not_run.is_none()).collect();
    // Launches (failing harmlessly with null kernels), copies and memsets: a floor against an empty set.
    assert!(ran_with_device_work.len() >= 10, "{ran_with_device_work:?}");
    for i in ran_with_device_work {
        assert!(obs.timed.iter().any(|t| t.op_index == i), "operation #{i} ran with device work and has no interval");
    }
}

/// The three places a new operation must reach that no compiler error names: its row in `cases/README.md`, the
/// parser's round-trip fixture (`VALID`) and `every_operation` above.
#[test]
fn every_operation_word_is_documented_parsed_and_run() {
    let readme = include_str!("../../../cases/README.md");
    let script_section = &readme[readme.find("## The script").unwrap()..readme.find("## Expectations").unwrap()];
    // The syntax forms of the operation table: the first cell of each row, its forms separated by ` / `.
    let forms: Vec<&str> = script_section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|row| row.split(" | ").next())
        .flat_map(|cell| cell.split(" / `"))
        .collect();
    let valid = crate::case::parse_file("valid.case", crate::case::tests::VALID).unwrap();
    let parsed: Vec<OpWord> = valid.cases.iter().flat_map(|c| &c.script).map(|o| o.kind.word()).collect();
    let run: Vec<OpWord> = every_operation().script.iter().map(|o| o.kind.word()).collect();
    let mut missing = Vec::new();
    for &word in OpWord::ALL {
        let w = word.word();
        // A syntax form starts with the word: `memcpy DST ...`, or `device-sync` alone.
        if !forms.iter().any(|f| f.strip_prefix(w).is_some_and(|rest| rest.starts_with([' ', '`']))) {
            missing.push(format!("`{w}` has no row in cases/README.md (## The script)"));
        }
        if !parsed.contains(&word) {
            missing.push(format!("`{w}` is not in VALID (case/tests.rs)"));
        }
        if !run.contains(&word) {
            missing.push(format!("`{w}` is not in every_operation (exec/tests.rs)"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_operation_is_recorded_without_panic_or_hang() {
    let case = every_operation();
    let opts =
        ExecOptions { gate_timeout_ns: 1_000_000_000, case_deadline: Duration::from_secs(5), ..ExecOptions::default() };
    let started = Instant::now();
    let obs = run_case(&case, &null_kernels(), &h100(), &opts);
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());

    assert_eq!(obs.decls.len(), case.decls.len());
    assert_eq!(obs.ops.len(), case.script.len());
    for (i, rec) in obs.ops.iter().enumerate() {
        assert_eq!((rec.index, rec.line), (i, 20 + i as u32));
        assert!(rec.code.is_some() != rec.not_run.is_some(), "op {i} ran and did not run: {rec:?}");
        assert!(rec.start_ns <= rec.end_ns, "{rec:?}");
    }
    let by_label = |l: &str| obs.op(l).unwrap();
    let h2_not_run = by_label("h2").not_run.clone().unwrap();
    assert!(by_label("pageable-kernel").not_run.as_deref().unwrap().contains("pageable buffer p"));
    assert!(by_label("too-big").not_run.as_deref().unwrap().contains("8192 bytes do not fit"));
    let launches = case.script.iter().filter(|o| o.kind.is_kernel_launch()).count();
    assert_eq!((obs.kernels.len(), launches), (14, 14), "one stamp record per kernel launch operation");
    assert_eq!(obs.gates.len(), 1);
    assert!(obs.gates[0].opened_ns.is_some());
    // Every declared buffer is read back but the `later` ones no expectation names (their contents are undefined
    // until written: see teardown::read_buffers).
    let later_unread = case
        .decls
        .iter()
        .filter(|d| matches!(d, crate::case::ast::Decl::Buffer { later: true, .. }))
        .filter(|d| !obs.buffers.iter().any(|b| b.name == d.name()))
        .count();
    assert_eq!((obs.buffers.len(), later_unread), (5, 4));
    assert!(obs.final_sync.is_some());
    assert!(obs.watchdog_fired_ns.is_none(), "{:?}", obs.notes);

    let verdict = crate::readings::verdict::judge(&case, &obs);
    let json = serde_json::to_string(&obs).unwrap();
    assert_eq!(serde_json::from_str::<Observations>(&json).unwrap(), obs);

    if crate::device::gpu::probe(0).is_ok() {
        assert!(h2_not_run.contains("a snapshot needs host-visible memory; d is device memory"), "{h2_not_run}");
    } else {
        // No driver: nothing could be created, every call failed with cudaErrorInsufficientDriver, and the verdict
        // says the case cannot run here (the first operation that returned it, not accepted by the case).
        assert_eq!(h2_not_run, "buffer d was not created (cudaErrorInsufficientDriver)");
        assert_eq!(verdict.kind, crate::record::verdict::VerdictKind::NotSupported, "{:?}", verdict.messages);
        assert!(verdict.messages[0].contains("cudaErrorInsufficientDriver"), "{:?}", verdict.messages);
        let stream_s = &obs.decls[0];
        assert_ne!(stream_s.code.as_deref(), Some("cudaSuccess"));
        assert!(by_label("sy").not_run.as_deref().unwrap().contains("stream s was not created"));
        assert_ne!(by_label("q").code.as_deref(), Some("cudaSuccess"));
        assert_ne!(obs.final_sync.as_deref(), Some("cudaSuccess"));
        let p = obs.buffer("p").unwrap();
        let initial = Some(crate::case::ast::INITIAL_WORD);
        assert_eq!(p.contents.as_ref().and_then(|c| c.uniform), initial, "pageable memory needs no driver");
        assert!(obs.buffer("d").unwrap().read_error.is_some());
    }
}

/// A case on two devices, run where fewer are visible (or none, as in CI): the executor says so in a note, stands
/// the case's own device in for the missing one, and records every declaration and operation.
#[test]
fn a_two_device_case_runs_to_its_end_where_one_device_is_visible() {
    let text = "case t/two\n rule: r\n source: s\n requires: devices >= 2, peer-access\n stream s1 device 1\n \
                event e1 device 1\n buffer a device 4KiB\n buffer b device 4KiB device 1\n set-device 1\n launch \
                fill b 7 on s1\n record e1 on s1\n set-device\n get-device is 0\n wait legacy for e1\n \
                memcpy-peer-async a b on legacy\n memcpy a b default\n enable-peer-access 1\n can-access-peer 0 1\n \
                sync legacy\nend\n";
    let case = crate::case::parse_file("t.case", text).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0);
    assert!(crate::case::validate(&crate::case::ast::CaseFile { path: "t.case".into(), cases: vec![case.clone()] })
        .is_empty());
    let opts =
        ExecOptions { gate_timeout_ns: 1_000_000_000, case_deadline: Duration::from_secs(5), ..ExecOptions::default() };
    let obs = run_case(&case, &null_kernels(), &h100(), &opts);
    assert_eq!(obs.devices, vec![0, 0]);
    assert!(obs.notes.iter().any(|n| n.contains("names 2 devices and 1 are visible")), "{:?}", obs.notes);
    assert_eq!((obs.decls.len(), obs.ops.len()), (case.decls.len(), case.script.len()));
    assert!(obs.ops.iter().all(|r| r.code.is_some() != r.not_run.is_some()), "{:?}", obs.ops);
    assert!(obs.final_sync.is_some());
}

/// A case whose every run must start from the initial contents: each buffer made before the script is copied
/// elsewhere first and overwritten after, so a sample that started from the previous run's contents would copy
/// 0x01 words and fail an `expect`. `l` is made and freed by the script (`later`) each run.
const SAMPLED: &str = "case t/samples\n rule: r\n source: s\n samples: 3\n stream s\n event a\n event b\n \
                       buffer d device 4KiB\n buffer h pinned 4KiB\n buffer m mapped 4KiB\n buffer p pageable 4KiB\n \
                       buffer w device 4KiB\n buffer x device 4KiB\n buffer y device 4KiB\n buffer z device 4KiB\n \
                       buffer v device 4KiB\n buffer l device 4KiB later\n \
                       record a on s\n memcpy w d\n memcpy x h\n memcpy y m\n memcpy z p\n memset d 1\n \
                       memcpy h d\n memcpy m d\n memcpy p d\n create l\n memset l 5\n memcpy v l\n destroy l\n \
                       record b on s\n sync b\n t: elapsed a b\n \
                       expect w == 3452816845\n expect x == 3452816845\n expect y == 3452816845\n \
                       expect z == 3452816845\n expect h == 16843009\n expect p == 16843009\n expect v == 84215045\n \
                       measure t: elapsed t\nend\n";

/// `samples: N` on the first run's objects ([`Kept`]). Without a GPU the first run cannot end well, so nothing is
/// kept and its observations are a lone run's. With one, the first run observes what a lone run does, every sample
/// on the kept objects passes (each started from the initial contents: see [`SAMPLED`]) and reads back only the
/// buffers an expectation names, and the release goes to the first run's observations.
#[test]
fn samples_run_on_the_first_runs_objects_from_the_initial_contents() {
    let case = crate::case::parse_file("t.case", SAMPLED).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0);
    assert!(crate::case::validate(&crate::case::ast::CaseFile { path: "t.case".into(), cases: vec![case.clone()] })
        .is_empty());
    assert_eq!(samples::why_not_shared(&case), None);
    let opts =
        ExecOptions { gate_timeout_ns: 1_000_000_000, case_deadline: Duration::from_secs(5), ..ExecOptions::default() };
    let (kernels, device) = (null_kernels(), h100());
    let named = ["h", "p", "w", "x", "y", "z", "v"];
    let (mut first, kept) = run_case_keeping(&case, &kernels, &device, &opts);
    let lone = run_case(&case, &kernels, &device, &opts);
    let judge = |obs: &Observations| crate::readings::verdict::judge(&case, obs);
    let names = |obs: &Observations| obs.buffers.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&first), names(&lone), "the first run reads back every buffer, as a lone run does");
    assert_eq!(first.ops.len(), case.script.len());
    let Some(mut kept) = kept else {
        assert!(crate::device::gpu::probe(0).is_err(), "a device, and the first run kept nothing: {first:?}");
        assert_ne!(first.final_sync.as_deref(), Some("cudaSuccess"));
        assert_eq!(judge(&first).kind, judge(&lone).kind);
        // A sample run from scratch reads back only the buffers an expectation names.
        let sample = run_sample(&case, &kernels, &device, &opts);
        assert_eq!(names(&sample), named);
        return;
    };
    assert_eq!(judge(&first), judge(&lone), "{first:?}");
    assert_eq!(judge(&first).kind, crate::record::verdict::VerdictKind::Pass, "{first:?}");
    assert_eq!(first.buffers, lone.buffers);
    for _ in 1..case.samples {
        let sample = kept.sample(&case, &kernels, &device, &opts);
        assert_eq!(judge(&sample).kind, crate::record::verdict::VerdictKind::Pass, "{sample:?}");
        assert_eq!(names(&sample), named);
        assert_eq!(sample.decls, first.decls);
        assert!(sample.ops.iter().all(|r| r.code.as_deref() == Some("cudaSuccess")), "{:?}", sample.ops);
    }
    let notes = first.notes.clone();
    kept.release(&mut first);
    assert_eq!(first.notes, notes, "nothing failed to release");
    assert!(first.wall_ns > 0);
}

/// A case's graph memory is gone when the next case in the same process starts, as in a process of its own: a
/// worker runs many cases, and stream-memory/graph/captured-alloc-owned-by-graph read 64 MiB in use for its 32 MiB
/// allocation after an earlier case's 64 MiB had stayed reserved on the device (its reproducer read 32 MiB). Without
/// a GPU both cases fail harmlessly and nothing is reset (the final synchronize fails).
#[test]
fn graph_memory_of_a_case_is_not_left_to_the_next() {
    let text = "case t/reserves\n rule: r\n source: s\n stream s blocking\n graph gr\n exec ex\n \
                buffer t device 64MiB later\n begin-capture s\n malloc-async t on s\n end-capture s into gr\n \
                instantiate ex from gr\n launch-graph ex on s\n sync s\n free-async t on s\n sync s\n \
                u: graph-mem-get reserved-mem-current\nend\n\
                case t/reads\n rule: r\n source: s\n r: graph-mem-get reserved-mem-current\n \
                h: graph-mem-get used-mem-high\nend\n";
    let cases = crate::case::parse_file("t.case", text).unwrap_or_else(|d| panic!("{d:?}")).cases;
    let opts =
        ExecOptions { gate_timeout_ns: 1_000_000_000, case_deadline: Duration::from_secs(5), ..ExecOptions::default() };
    let first = run_case(&cases[0], &null_kernels(), &h100(), &opts);
    let second = run_case(&cases[1], &null_kernels(), &h100(), &opts);
    let number = |obs: &Observations, label: &str| {
        let op = obs.ops.iter().find(|o| o.label.as_deref() == Some(label)).unwrap_or_else(|| panic!("no {label}"));
        match &op.value {
            Some(crate::record::observations::OpValue::Number(n)) => Some(*n),
            _ => None,
        }
    };
    if first.final_sync.as_deref() != Some("cudaSuccess") {
        assert!(!first.notes.iter().any(|n| n.contains("GraphMem")), "{:?}", first.notes);
        return;
    }
    const MIB64: u64 = 64 << 20;
    assert!(number(&first, "u").is_some(), "{:?}", first.ops);
    if number(&first, "u").is_some_and(|u| u < MIB64) {
        return; // the driver gave the freed allocation back itself: nothing was left to the next case
    }
    // Below 64 MiB rather than 0: other tests of this binary may use graph memory on the device meanwhile.
    assert!(number(&second, "r").is_some_and(|r| r < MIB64), "{:?} {:?}", second.ops, first.notes);
    assert!(number(&second, "h").is_some_and(|h| h < MIB64), "{:?} {:?}", second.ops, first.notes);
}
