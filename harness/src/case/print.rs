//! Cases back to text, in the canonical layout of `cases/README.md`: `parse_file(print_file(f))` gives `f` back.
//! Also the words of traces and verdict messages, and how a shrunk random program becomes a case to save.

use super::ast::*;
use super::words::{Comparison, EventAttr, ExpectWord, PredicateWord, Verb, Word};
use std::fmt::Write as _;

pub fn print_file(file: &CaseFile) -> String {
    let cases: Vec<String> = file.cases.iter().map(print_case).collect();
    cases.join("\n")
}

pub fn print_case(case: &Case) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "case {}", case.id);
    let _ = writeln!(out, "  rule: {}", case.rule);
    let _ = writeln!(out, "  source: {}", case.source);
    if !case.requires.is_empty() {
        let reqs: Vec<String> = case.requires.iter().map(requirement).collect();
        let _ = writeln!(out, "  requires: {}", reqs.join(", "));
    }
    if !case.env.is_empty() {
        let pairs: Vec<String> = case.env.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let _ = writeln!(out, "  env: {}", pairs.join(" "));
    }
    if let Some(reason) = &case.own_process {
        let _ = writeln!(out, "  own-process: {reason}");
    }
    if !case.poisons.is_empty() {
        let _ = writeln!(out, "  poisons-context: {}", case.poisons.join(" | "));
    }
    if let Some(timing) = &case.timing {
        let from = timing.from.as_ref().map(|l| format!(" from {l}")).unwrap_or_default();
        let _ = writeln!(out, "  timing: {}{from}", timing.source.word());
    }
    if case.samples > 1 {
        let _ = writeln!(out, "  samples: {}", case.samples);
    }
    if !case.decls.is_empty() {
        out.push('\n');
    }
    for d in &case.decls {
        let _ = writeln!(out, "  {}", decl(d));
    }
    if !case.script.is_empty() {
        out.push('\n');
    }
    for o in &case.script {
        let label = o.label.as_ref().map(|l| format!("{l}:")).unwrap_or_default();
        let _ = writeln!(out, "  {label:<6}{}", op(o).trim_end());
    }
    if !case.expects.is_empty() {
        out.push('\n');
    }
    for e in &case.expects {
        let _ = writeln!(out, "  {}", expectation(e));
    }
    out.push_str("end\n");
    out
}

fn requirement(r: &Requirement) -> String {
    let version = |v: u32| format!("{}.{}", v / 1000, (v % 1000) / 10);
    let w = r.word().word();
    match r {
        Requirement::ConcurrentKernels
        | Requirement::StreamPriorities
        | Requirement::MappedMemory
        | Requirement::MemoryPools
        | Requirement::PeerAccess
        | Requirement::ConcurrentManagedAccess
        | Requirement::PageableMemoryAccess
        | Requirement::NoDriver
        | Requirement::Vulkan => w.into(),
        Requirement::AsyncEngines(n) | Requirement::Devices(n) | Requirement::Connections(n) => format!("{w} >= {n}"),
        Requirement::Runtime(v) | Requirement::Driver(v) => format!("{w} >= {}", version(*v)),
        Requirement::Compute(major, minor) => format!("{w} >= {major}.{minor}"),
        Requirement::MemoryBelow(bytes) => format!("{w} < {}", size(*bytes)),
    }
}

fn codes(list: &[String]) -> String {
    if list.is_empty() {
        String::new()
    } else {
        format!(" => {}", list.join(" | "))
    }
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{}MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{}KiB", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

fn duration(ns: u64) -> String {
    if ns >= 1_000_000_000 && ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns >= 1_000_000 && ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns >= 1_000 && ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

pub fn decl(d: &Decl) -> String {
    let w = d.word().word();
    match d {
        Decl::Stream { name, non_blocking, priority, raw_flags, later, device, expect } => {
            let mut s = format!("{w} {name} {}", if *non_blocking { "non-blocking" } else { "blocking" });
            if let Some(p) = priority {
                s += &format!(" priority {}", self::priority(*p));
            }
            if let Some(f) = raw_flags {
                s += &format!(" flags {f:#x}");
            }
            s + later_word(*later) + &device_word(*device) + &codes(expect)
        }
        Decl::Event { name, flags, raw_flags, later, device, expect } => {
            let mut s = format!("{w} {name}");
            for (on, attr) in [
                (flags.disable_timing, EventAttr::DisableTiming),
                (flags.blocking_sync, EventAttr::BlockingSync),
                (flags.interprocess, EventAttr::Interprocess),
            ] {
                if on {
                    s += " ";
                    s += attr.word();
                }
            }
            if let Some(f) = raw_flags {
                s += &format!(" flags {f:#x}");
            }
            s + later_word(*later) + &device_word(*device) + &codes(expect)
        }
        Decl::Buffer { name, kind, bytes, device, later } => {
            format!("{w} {name} {} {}{}{}", kind.word(), size(*bytes), device_word(*device), later_word(*later))
        }
        Decl::Gate { name }
        | Decl::Thread { name }
        | Decl::Graph { name }
        | Decl::Exec { name }
        | Decl::Process { name } => {
            format!("{w} {name}")
        }
        Decl::Pool { name, default, posix_fd } => {
            format!("{w} {name}{}{}", if *default { " default" } else { "" }, if *posix_fd { " posix-fd" } else { "" })
        }
        Decl::Condition { name } => format!("{w} {name}"),
        Decl::Slice { name, of, offset, bytes } => {
            format!("{w} {name} of {of} at {} size {}", size(*offset), size(*bytes))
        }
    }
}

/// ` device N` when a declaration names its device.
fn device_word(device: Option<u32>) -> String {
    device.map(|d| format!(" device {d}")).unwrap_or_default()
}

fn later_word(later: bool) -> &'static str {
    if later {
        " later"
    } else {
        ""
    }
}

fn priority(p: Priority) -> String {
    match p {
        Priority::Value(v) => v.to_string(),
        Priority::Greatest => "greatest".into(),
        Priority::Least => "least".into(),
    }
}

fn compute_shape(shape: &ComputeShape) -> String {
    let mut s = String::new();
    match shape.grid {
        None => {}
        Some(Grid::Blocks(n)) => s += &format!(" grid {n}"),
        Some(Grid::Full) => s += " grid full",
    }
    if let Some(block) = shape.block {
        s += &format!(" block {block}");
    }
    s
}

fn launch_shape(shape: &LaunchShape) -> String {
    let mut s = String::new();
    match shape.grid {
        Grid::Blocks(1) => {}
        Grid::Blocks(n) => s += &format!(" grid {n}"),
        Grid::Full => s += " grid full",
    }
    if shape.block != 1 {
        s += &format!(" block {}", shape.block);
    }
    if shape.shared_bytes != 0 {
        s += &format!(" shared {}", size(shape.shared_bytes));
    }
    if shape.trigger {
        s += " trigger";
    }
    if shape.programmatic {
        s += " programmatic";
    }
    s
}

/// One operation without its label, e.g. `@t sync s => cudaErrorNotReady`.
pub fn op(o: &Op) -> String {
    let thread = o.thread.as_ref().map(|t| format!("@{t} ")).unwrap_or_default();
    let repeat = if o.repeat == 1 { String::new() } else { format!("repeat {} ", o.repeat) };
    format!("{thread}{repeat}{}{}", op_kind(&o.kind), codes(&o.expect))
}

/// ` times N` of a kernel that launches graphs, omitted at its default of 1.
fn times_word(times: u32) -> String {
    if times == 1 {
        String::new()
    } else {
        format!(" times {times}")
    }
}

pub fn op_kind(k: &OpKind) -> String {
    let bytes = |b: &Option<u64>| b.map(|b| format!(" {}", size(b))).unwrap_or_default();
    let ext = |e: bool| if e { " external" } else { "" };
    let w = k.word().word();
    match k {
        OpKind::Launch { kernel, stream: s } => {
            let (args, shape) = match kernel {
                KernelCall::Gate { gate } => (format!(" {gate}"), String::new()),
                KernelCall::Spin { ns, shape } => (spin_time(*ns), launch_shape(shape)),
                KernelCall::LazySpin { ns } => (spin_time(*ns), String::new()),
                KernelCall::Fault { fault } => (format!(" {}", fault.word()), String::new()),
                KernelCall::Fill { buf, value } => (format!(" {buf} {value}"), String::new()),
                KernelCall::Transform { buf, mul, add } => (format!(" {buf} mul {mul} add {add}"), String::new()),
                KernelCall::Compare { a, b, into } => (format!(" {a} {b} into {into}"), String::new()),
                KernelCall::VecAdd { a, b, into, shape } => (format!(" {a} {b} into {into}"), compute_shape(shape)),
                KernelCall::SinCos { buf, iterations, shape } => {
                    (format!(" {buf} iterations {iterations}"), compute_shape(shape))
                }
                KernelCall::Sleep { cycles, shape } => (format!(" {cycles}"), compute_shape(shape)),
                KernelCall::DeviceLaunch { exec, mode, times, into } => {
                    (format!(" {exec} {}{} into {into}", mode.word(), times_word(*times)), String::new())
                }
                KernelCall::RelaunchSelf { counter, runs, times, into } => {
                    (format!(" {counter} runs {runs}{} into {into}", times_word(*times)), String::new())
                }
                KernelCall::CurrentGraph { into } => (format!(" into {into}"), String::new()),
            };
            format!("{w} {}{args} on {}{shape}", kernel.word().word(), s.name())
        }
        OpKind::Memcpy { dst, src, bytes: b, inferred, stream: None } => {
            format!("{w} {dst} {src}{}{}", bytes(b), inferred_word(*inferred))
        }
        OpKind::Memcpy { dst, src, bytes: b, inferred, stream: Some(s) } => {
            format!("{w} {dst} {src}{}{} on {}", bytes(b), inferred_word(*inferred), s.name())
        }
        OpKind::MemcpyPeer { dst, src, bytes: b, stream: None } => format!("{w} {dst} {src}{}", bytes(b)),
        OpKind::MemcpyPeer { dst, src, bytes: b, stream: Some(s) } => {
            format!("{w} {dst} {src}{} on {}", bytes(b), s.name())
        }
        OpKind::Memset { buf, byte, bytes: b, stream: None } => format!("{w} {buf} {byte}{}", bytes(b)),
        OpKind::Memset { buf, byte, bytes: b, stream: Some(s) } => {
            format!("{w} {buf} {byte}{} on {}", bytes(b), s.name())
        }
        OpKind::Record { event, stream: s, external } => format!("{w} {event} on {}{}", s.name(), ext(*external)),
        OpKind::Wait { stream: s, event, external } => format!("{w} {} for {event}{}", s.name(), ext(*external)),
        OpKind::Query { target } => format!("{w} {}", target_name(target)),
        OpKind::Sync { target } => format!("{w} {}", target_name(target)),
        OpKind::DeviceSync => w.into(),
        OpKind::Elapsed { start, stop } => format!("{w} {start} {stop}"),
        OpKind::HostFunc { stream: s, snapshot, hold } => {
            let snapshot = snapshot.as_ref().map(|b| format!(" snapshot {b}")).unwrap_or_default();
            let hold = hold.as_ref().map(|g| format!(" hold {g}")).unwrap_or_default();
            format!("{w} on {}{snapshot}{hold}", s.name())
        }
        OpKind::Callback { stream: s } => format!("{w} on {}", s.name()),
        OpKind::BeginCapture { stream: s, mode: m } => format!("{w} {} {}", s.name(), m.word()),
        OpKind::EndCapture { stream: s, graph } => format!("{w} {} into {graph}", s.name()),
        OpKind::CaptureStatus { stream: s, status } => {
            format!("{w} {} is {}", s.name(), status.word())
        }
        OpKind::CaptureDeps { stream: s, count, nodes } => {
            let on = if nodes.is_empty() { String::new() } else { format!(" on {}", nodes.join(" ")) };
            format!("{w} {} is {count}{on}", s.name())
        }
        OpKind::PointerType { buf, memory } => format!("{w} {buf} is {}", memory.word()),
        OpKind::ExchangeCaptureMode { mode: m } => format!("{w} {}", m.word()),
        OpKind::Instantiate { exec, graph, flags, upload, with_params } => {
            let mut s = format!("{w} {exec} from {graph}");
            for f in flags {
                s += " ";
                s += f.word();
            }
            if let Some(u) = upload {
                s += &format!(" upload {}", u.name());
            }
            if *with_params {
                s += " with-params";
            }
            s
        }
        OpKind::Update { exec, graph } => format!("{w} {exec} from {graph}"),
        OpKind::AddNode { graph, node, after: deps } => format!("{w} {graph} {}{}", node_spec(node), after(deps)),
        OpKind::Dependency { graph, from, to, .. } => format!("{w} {graph} {from} -> {to}"),
        OpKind::Clone { copy, graph } => format!("{w} {copy} from {graph}"),
        OpKind::DestroyNode { node } => format!("{w} {node}"),
        OpKind::List { what, graph, room } => {
            format!("{w} {} {graph}{}", what.word(), room.map(|r| format!(" room {r}")).unwrap_or_default())
        }
        OpKind::SetNode { exec: None, node, spec } => format!("{w} {node} {}", node_spec(spec)),
        OpKind::SetNode { exec: Some(e), node, spec } => format!("{w} {e} {node} {}", node_spec(spec)),
        OpKind::SetEnabled { exec, node, enabled } => {
            format!("{w} {exec} {node} {}", if *enabled { "on" } else { "off" })
        }
        OpKind::GetEnabled { exec, node } => format!("{w} {exec} {node}"),
        OpKind::BeginCaptureToGraph { stream: s, graph, after: deps, mode } => {
            format!("{w} {} into {graph}{} {}", s.name(), after(deps), mode.word())
        }
        OpKind::UpdateCaptureDeps { stream: s, set, nodes } => {
            format!("{w} {} {} {}", s.name(), if *set { "set" } else { "add" }, nodes.join(" "))
        }
        OpKind::ConditionCreate { condition, graph, default } => {
            format!("{w} {condition} in {graph}{}", default.map(|d| format!(" default {d}")).unwrap_or_default())
        }
        OpKind::PoolSet { pool, attr, value } => format!("{w} {pool} {} {}", attr.word(), amount(*value)),
        OpKind::PoolGet { pool, attr } => format!("{w} {pool} {}", attr.word()),
        OpKind::PoolTrim { pool, keep } => format!("{w} {pool} {}", size(*keep)),
        OpKind::GraphMemTrim => w.into(),
        OpKind::GraphMemGet { attr } => format!("{w} {}", attr.word()),
        OpKind::LaunchGraph { exec, stream: s } => format!("{w} {exec} on {}", s.name()),
        OpKind::Upload { exec, stream: s } => format!("{w} {exec} on {}", s.name()),
        OpKind::Create { name } => format!("{w} {name}"),
        OpKind::Destroy { name } => format!("{w} {name}"),
        OpKind::MallocAsync { buf, stream: s, pool } => {
            format!("{w} {buf} on {}{}", s.name(), pool.as_ref().map(|p| format!(" from {p}")).unwrap_or_default())
        }
        OpKind::FreeAsync { buf, stream: s } => format!("{w} {buf} on {}", s.name()),
        OpKind::Register { buf } => format!("{w} {buf}"),
        OpKind::Unregister { buf } => format!("{w} {buf}"),
        OpKind::SetDevice { device: 0 } => w.into(),
        OpKind::SetDevice { device } => format!("{w} {device}"),
        OpKind::GetDevice { expect: None } => w.into(),
        OpKind::GetDevice { expect: Some(d) } => format!("{w} is {d}"),
        OpKind::PeerAccess { peer, .. } => format!("{w} {peer}"),
        OpKind::CanAccessPeer { device, peer } => format!("{w} {device} {peer}"),
        OpKind::SetLimit { limit: l, value } => format!("{w} {} {}", l.word(), size(*value)),
        OpKind::SetCacheConfig { config } => format!("{w} {}", config.word()),
        OpKind::StreamPriority { stream: s, priority: p } => {
            format!("{w} {} is {}", s.name(), priority(*p))
        }
        OpKind::StreamFlags { stream: s } => format!("{w} {}", s.name()),
        OpKind::Read { buf } => format!("{w} {buf}"),
        OpKind::PeekLastError => w.into(),
        OpKind::Malloc { bytes } | OpKind::VkMemory { bytes } => format!("{w} {}", size(*bytes)),
        OpKind::VkSemaphore { timeline: None } => format!("{w} binary"),
        OpKind::VkSemaphore { timeline: Some(0) } => format!("{w} timeline"),
        OpKind::VkSemaphore { timeline: Some(n) } => format!("{w} timeline initial {n}"),
        OpKind::VkWrite { memory, value } => format!("{w} {memory} {value}"),
        OpKind::VkRead { memory, at, bytes } => {
            let at = if *at > 0 { format!(" at {}", size(*at)) } else { String::new() };
            let bytes = bytes.map_or(String::new(), |b| format!(" bytes {}", size(b)));
            format!("{w} {memory}{at}{bytes}")
        }
        OpKind::VkCounter { semaphore } => format!("{w} {semaphore}"),
        OpKind::GetLastError => w.into(),
        OpKind::Open { gate, after_ns: None } => format!("{w} {gate}"),
        OpKind::Open { gate, after_ns: Some(ns) } => format!("{w} {gate} after {}", duration(*ns)),
        OpKind::Sleep { ns } => format!("{w} {}", duration(*ns)),
        // Batched copies, stream identity, stream and kernel-node attributes.
        OpKind::MemcpyBatch { copies, stream: s, order, attrs_at, .. } => {
            let pairs: Vec<String> = copies.iter().map(|(d, src)| format!("{d} {src}")).collect();
            let order =
                if *order == SrcAccessOrder::Stream { String::new() } else { format!(" order {}", order.word()) };
            let at = attrs_at
                .as_ref()
                .map(|at| format!(" attrs-at {}", at.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")));
            format!("{w} {} on {}{order}{}", pairs.join(" "), s.name(), at.unwrap_or_default())
        }
        OpKind::StreamDevice { stream: s, device } => format!("{w} {} is {device}", s.name()),
        OpKind::StreamId { stream: s } => format!("{w} {}", s.name()),
        OpKind::StreamAttr { stream: s, value } => format!("{w} {} {}", s.name(), attr_value(value, " is")),
        OpKind::SetStreamAttr { stream: s, value } => format!("{w} {} {}", s.name(), attr_value(value, "")),
        OpKind::CopyStreamAttrs { dst, src } => format!("{w} {} from {}", dst.name(), src.name()),
        OpKind::NodeAttr { node, value } => format!("{w} {node} {}", attr_value(value, " is")),
        OpKind::SetNodeAttr { node, value } => format!("{w} {node} {}", attr_value(value, "")),
        // Managed memory, IPC, user objects, device facts, the launch queue
        OpKind::Attach { buf, stream, mode, bytes } => {
            let bytes = bytes.map(|b| format!(" bytes {}", size(b))).unwrap_or_default();
            format!("{w} {buf} on {} {}{bytes}", stream.name(), mode.word())
        }
        OpKind::Prefetch { buf, to, stream } => format!("{w} {buf} to {} on {}", to.word(), stream.name()),
        OpKind::Advise { buf, advice, place } => format!("{w} {buf} {} {}", advice.word(), place.word()),
        OpKind::MallocManaged { bytes, host } => format!("{w} {}{}", size(*bytes), if *host { " host" } else { "" }),
        OpKind::DeviceAttr { attr } => format!("{w} {}", attr.word()),
        OpKind::DeviceCount | OpKind::UserObject => w.into(),
        OpKind::IpcMemHandle { buf } => format!("{w} {buf}"),
        OpKind::IpcOpenMem { handle, into } => match into {
            Some(buf) => format!("{w} {handle} as {buf}"),
            None => format!("{w} {handle}"),
        },
        OpKind::IpcCloseMem { opened } => format!("{w} {opened}"),
        OpKind::IpcEventHandle { event } => format!("{w} {event}"),
        OpKind::IpcOpenEvent { handle, into } => format!("{w} {handle} into {into}"),
        OpKind::PoolExport { pool } => format!("{w} {pool}"),
        OpKind::RetainUserObject { graph, object, count, take } => {
            format!("{w} {graph} {object} count {count}{}", if *take { " move" } else { "" })
        }
        OpKind::ReleaseUserObject { graph, object, count } => match graph {
            Some(g) => format!("{w} {g} {object} count {count}"),
            None => format!("{w} {object} count {count}"),
        },
        OpKind::Destroyed { object, wait } => format!("{w} {object}{}", if *wait { " wait" } else { "" }),
        OpKind::QueueDepth { stream, gate, max } => format!("{w} {} behind {gate} max {max}", stream.name()),
        OpKind::Call(call) => format!("{w} {}", call.text()),
    }
}

// `priority N`, `mem-sync-domain remote`, with `is` between for the reads.
fn attr_value(value: &AttrValue, is: &str) -> String {
    let v = match value {
        AttrValue::Priority(p) => priority(*p),
        AttrValue::MemSyncDomain(d) => d.word().to_owned(),
    };
    format!("{}{is} {v}", value.attr().word())
}

/// ` default` for a copy of kind cudaMemcpyDefault.
fn inferred_word(inferred: bool) -> &'static str {
    if inferred {
        " default"
    } else {
        ""
    }
}

/// A size, a number or `max`.
fn amount(value: u64) -> String {
    if value == u64::MAX {
        "max".into()
    } else {
        size(value)
    }
}

/// ` after L ...`, nothing without dependencies.
fn after(labels: &[String]) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!(" after {}", labels.join(" "))
    }
}

fn node_spec(spec: &NodeSpec) -> String {
    let w = spec.word().word();
    let bytes = |b: &Option<u64>| b.map(|b| format!(" {}", size(b))).unwrap_or_default();
    match spec {
        NodeSpec::Kernel(k) => {
            let kw = k.word().word();
            match k {
                NodeKernel::Gate { gate } => format!("{w} {kw} {gate}"),
                NodeKernel::Spin { ns } => format!("{w} {kw}{}", spin_time(*ns)),
                NodeKernel::Fill { buf, value } => format!("{w} {kw} {buf} {value}"),
                NodeKernel::Transform { buf, mul, add } => format!("{w} {kw} {buf} mul {mul} add {add}"),
                NodeKernel::SetCondition { condition, buf } => format!("{w} {kw} {condition} from {buf}"),
                NodeKernel::Countdown { condition, buf } => format!("{w} {kw} {condition} {buf}"),
            }
        }
        NodeSpec::Memcpy { dst, src, bytes: b } => format!("{w} {dst} {src}{}", bytes(b)),
        NodeSpec::Memset { buf, byte, bytes: b } => format!("{w} {buf} {byte}{}", bytes(b)),
        NodeSpec::Host | NodeSpec::Empty => w.into(),
        NodeSpec::EventRecord { event } | NodeSpec::WaitEvent { event } => format!("{w} {event}"),
        NodeSpec::Child { graph } => format!("{w} {graph}"),
        NodeSpec::MemAlloc { buf } | NodeSpec::MemFree { buf } => format!("{w} {buf}"),
        NodeSpec::Conditional { kind, condition, size, bodies } => {
            let size = if *size as usize == bodies.len() { String::new() } else { format!(" size {size}") };
            format!("{w} {} {condition}{size} bodies {}", kind.word(), bodies.join(" "))
        }
    }
}

/// ` DURATION` of a spin, nothing for 0 (the parser's default).
fn spin_time(ns: u64) -> String {
    if ns == 0 {
        String::new()
    } else {
        format!(" {}", duration(ns))
    }
}

fn target_name(t: &Target) -> &str {
    match t {
        Target::Stream(s) => s.name(),
        Target::Event(e) => e,
    }
}

fn expectation(e: &Expectation) -> String {
    match e {
        Expectation::Expect(p) => format!("{} {}", ExpectWord::Expect.word(), predicate(p)),
        Expectation::Quality(p) => format!("{} {}", ExpectWord::Quality.word(), predicate(p)),
        Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
            let parts: Vec<String> = alternatives.iter().map(|(n, p)| format!("{n}: {}", predicate(p))).collect();
            let word = if matches!(e, Expectation::Observe(_)) { ExpectWord::Observe } else { ExpectWord::Variant };
            format!("{} {}", word.word(), parts.join(" | "))
        }
        Expectation::Measure(m) => format!("{} {}: {}", ExpectWord::Measure.word(), m.name, measure_of(&m.of)),
    }
}

/// What a measure computes, as written after `measure NAME:`.
pub fn measure_of(of: &MeasureOf) -> String {
    let w = of.word().word();
    let to = |to: &Option<String>| to.as_ref().map(|t| format!(" to {t}")).unwrap_or_default();
    let per = |per: &Option<u32>| per.map(|n| format!(" per {n}")).unwrap_or_default();
    match of {
        MeasureOf::Elapsed { label } | MeasureOf::Value { label } => format!("{w} {label}"),
        MeasureOf::Device { from, to: t, per: p } | MeasureOf::Host { from, to: t, per: p } => {
            format!("{w} {from}{}{}", to(t), per(p))
        }
        MeasureOf::Bandwidth { from, to: t } => format!("{w} {from}{}", to(t)),
        MeasureOf::Busy { from, to } => format!("{w} {from} to {to}"),
        MeasureOf::Spread { labels } => format!("{w} {}", labels.join(" ")),
    }
}

pub fn predicate(p: &Predicate) -> String {
    match p {
        Predicate::Before { first, second } => format!("{first} {} {second}", Verb::Before.word()),
        Predicate::Overlaps { a, b } => format!("{a} {} {b}", Verb::Overlaps.word()),
        Predicate::WaitedFor { op, gate } => format!("{op} {} {gate}", Verb::WaitedFor.word()),
        Predicate::NotWaitedFor { op, gate } => format!("{op} {} {gate}", Verb::NotWaitedFor.word()),
        Predicate::Returned { op, code } => format!("{op} {} {code}", Verb::Returned.word()),
        Predicate::BufferEquals { buf, index: None, value } => format!("{buf} {} {value}", Verb::Equals.word()),
        Predicate::BufferEquals { buf, index: Some(i), value } => format!("{buf}[{i}] == {value}"),
        Predicate::TimedOut { gate } => format!("{gate} {}", Verb::TimedOut.word()),
        Predicate::HostOrder { labels } => format!("{} {}", PredicateWord::HostOrder.word(), labels.join(" ")),
        Predicate::SnapshotEquals { label, value } => format!("{} {label} == {value}", PredicateWord::Snapshot.word()),
        Predicate::CallbackStatus { label, code } => {
            format!("{} {label} status {code}", PredicateWord::Callback.word())
        }
        Predicate::ElapsedAbove { label, ms, inclusive } => {
            let cmp = if *inclusive { Comparison::AtLeast } else { Comparison::Above };
            format!("{} {label} {} {ms}", PredicateWord::Elapsed.word(), cmp.word())
        }
        Predicate::ElapsedBelow { label, ms, inclusive } => {
            let cmp = if *inclusive { Comparison::AtMost } else { Comparison::Below };
            format!("{} {label} {} {ms}", PredicateWord::Elapsed.word(), cmp.word())
        }
        Predicate::HostRuns { label, count } => format!("{} {label} == {count}", PredicateWord::HostRuns.word()),
        Predicate::Value { label, cmp, value } => {
            format!("{label} {} {} {}", Verb::Value.word(), cmp.word(), amount(*value))
        }
        Predicate::NullPadded { label } => format!("{label} {}", Verb::NullPadded.word()),
        Predicate::Result { label, result } => format!("{label} {} is {result}", Verb::Result.word()),
        Predicate::ErrorNode { label, from, node } => {
            let verb = if *from { Verb::ErrorFrom } else { Verb::ErrorNode };
            format!("{label} {} is {}", verb.word(), node.as_deref().unwrap_or("none"))
        }
        Predicate::SameAddress { a, b, same } => {
            format!("{a} {} {b}", if *same { Verb::SameAddress } else { Verb::OtherAddress }.word())
        }
        Predicate::NodeKind { graph, node, kind } => {
            format!("{} {graph} {node} is {}", PredicateWord::NodeKind.word(), kind.word())
        }
        Predicate::NodeCount { graph, count } => format!("{} {graph} == {count}", PredicateWord::Nodes.word()),
        Predicate::EdgeCount { graph, count } => format!("{} {graph} == {count}", PredicateWord::Edges.word()),
        Predicate::Edge { graph, from, to } => format!("{} {graph} {from} -> {to}", PredicateWord::Edge.word()),
        Predicate::NoEdge { graph, from, to } => format!("{} {graph} {from} -> {to}", PredicateWord::NoEdge.word()),
        Predicate::Path { graph, from, to } => format!("{} {graph} {from} -> {to}", PredicateWord::Path.word()),
        Predicate::NoPath { graph, from, to } => format!("{} {graph} {from} -> {to}", PredicateWord::NoPath.word()),
        Predicate::SameValue { a, b, same } => {
            format!("{a} {} {b}", if *same { Verb::SameValue } else { Verb::OtherValue }.word())
        }
        Predicate::SameCode { a, b } => format!("{a} {} {b}", Verb::SameCode.word()),
    }
}
