//! Cases back to text, in the canonical layout of `cases/README.md`: `parse_file(print_file(f))` gives `f` back.
//! Also the words of traces and verdict messages, and how a shrunk random program becomes a case to save.

use super::ast::*;
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
    if !case.poisons.is_empty() {
        let _ = writeln!(out, "  poisons-context: {}", case.poisons.join(" | "));
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
    match r {
        Requirement::ConcurrentKernels => "concurrent-kernels".into(),
        Requirement::AsyncEngines(n) => format!("async-engines >= {n}"),
        Requirement::Devices(n) => format!("devices >= {n}"),
        Requirement::Runtime(v) => format!("runtime >= {}", version(*v)),
        Requirement::Driver(v) => format!("driver >= {}", version(*v)),
        Requirement::Compute(major, minor) => format!("compute >= {major}.{minor}"),
        Requirement::StreamPriorities => "stream-priorities".into(),
        Requirement::MappedMemory => "mapped-memory".into(),
        Requirement::Connections(n) => format!("connections >= {n}"),
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

fn decl(d: &Decl) -> String {
    match d {
        Decl::Stream { name, non_blocking, priority, raw_flags, later, expect } => {
            let mut s = format!("stream {name} {}", if *non_blocking { "non-blocking" } else { "blocking" });
            if let Some(p) = priority {
                s += &format!(" priority {}", self::priority(*p));
            }
            if let Some(f) = raw_flags {
                s += &format!(" flags {f:#x}");
            }
            s + later_word(*later) + &codes(expect)
        }
        Decl::Event { name, flags, raw_flags, later, expect } => {
            let mut s = format!("event {name}");
            for (on, word) in [
                (flags.disable_timing, "disable-timing"),
                (flags.blocking_sync, "blocking-sync"),
                (flags.interprocess, "interprocess"),
            ] {
                if on {
                    s += " ";
                    s += word;
                }
            }
            if let Some(f) = raw_flags {
                s += &format!(" flags {f:#x}");
            }
            s + later_word(*later) + &codes(expect)
        }
        Decl::Buffer { name, kind, bytes, later } => {
            format!("buffer {name} {} {}{}", mem_kind(*kind), size(*bytes), later_word(*later))
        }
        Decl::Gate { name } => format!("gate {name}"),
        Decl::Thread { name } => format!("thread {name}"),
        Decl::Graph { name } => format!("graph {name}"),
        Decl::Exec { name } => format!("exec {name}"),
    }
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
    s
}

pub fn fault(f: Fault) -> &'static str {
    match f {
        Fault::IllegalAddress => "illegal-address",
        Fault::Trap => "trap",
    }
}

pub fn limit(l: Limit) -> &'static str {
    match l {
        Limit::StackSize => "stack-size",
        Limit::PrintfFifoSize => "printf-fifo",
        Limit::MallocHeapSize => "malloc-heap",
    }
}

pub fn cache_config(c: CacheConfig) -> &'static str {
    match c {
        CacheConfig::PreferNone => "prefer-none",
        CacheConfig::PreferShared => "prefer-shared",
        CacheConfig::PreferL1 => "prefer-l1",
        CacheConfig::PreferEqual => "prefer-equal",
    }
}

pub fn stream(s: &StreamRef) -> &str {
    match s {
        StreamRef::Legacy => "legacy",
        StreamRef::PerThread => "per-thread",
        StreamRef::Null => "null",
        StreamRef::Named(n) => n,
    }
}

pub fn capture_mode(m: CaptureMode) -> &'static str {
    match m {
        CaptureMode::Global => "global",
        CaptureMode::ThreadLocal => "thread-local",
        CaptureMode::Relaxed => "relaxed",
    }
}

/// One operation without its label, e.g. `@t sync s => cudaErrorNotReady`.
pub fn op(o: &Op) -> String {
    let thread = o.thread.as_ref().map(|t| format!("@{t} ")).unwrap_or_default();
    format!("{thread}{}{}", op_kind(&o.kind), codes(&o.expect))
}

pub fn op_kind(k: &OpKind) -> String {
    let bytes = |b: &Option<u64>| b.map(|b| format!(" {}", size(b))).unwrap_or_default();
    let ext = |e: bool| if e { " external" } else { "" };
    match k {
        OpKind::LaunchGate { gate, stream: s } => format!("launch gate {gate} on {}", stream(s)),
        OpKind::LaunchSpin { ns, stream: s, shape } => {
            format!("launch spin{} on {}{}", spin_time(*ns), stream(s), launch_shape(shape))
        }
        OpKind::LaunchLazySpin { ns, stream: s } => format!("launch lazy-spin{} on {}", spin_time(*ns), stream(s)),
        OpKind::LaunchFault { fault: f, stream: s } => format!("launch fault {} on {}", fault(*f), stream(s)),
        OpKind::LaunchFill { buf, value, stream: s } => format!("launch fill {buf} {value} on {}", stream(s)),
        OpKind::LaunchTransform { buf, mul, add, stream: s } => {
            format!("launch transform {buf} mul {mul} add {add} on {}", stream(s))
        }
        OpKind::LaunchCompare { a, b, into, stream: s } => {
            format!("launch compare {a} {b} into {into} on {}", stream(s))
        }
        OpKind::Memcpy { dst, src, bytes: b, stream: None } => format!("memcpy {dst} {src}{}", bytes(b)),
        OpKind::Memcpy { dst, src, bytes: b, stream: Some(s) } => {
            format!("memcpy-async {dst} {src}{} on {}", bytes(b), stream(s))
        }
        OpKind::Memset { buf, byte, bytes: b, stream: None } => format!("memset {buf} {byte}{}", bytes(b)),
        OpKind::Memset { buf, byte, bytes: b, stream: Some(s) } => {
            format!("memset-async {buf} {byte}{} on {}", bytes(b), stream(s))
        }
        OpKind::Record { event, stream: s, external } => format!("record {event} on {}{}", stream(s), ext(*external)),
        OpKind::Wait { stream: s, event, external } => format!("wait {} for {event}{}", stream(s), ext(*external)),
        OpKind::Query { target } => format!("query {}", target_name(target)),
        OpKind::Sync { target } => format!("sync {}", target_name(target)),
        OpKind::DeviceSync => "device-sync".into(),
        OpKind::Elapsed { start, stop } => format!("elapsed {start} {stop}"),
        OpKind::HostFunc { stream: s, snapshot, hold } => {
            let snapshot = snapshot.as_ref().map(|b| format!(" snapshot {b}")).unwrap_or_default();
            let hold = hold.as_ref().map(|g| format!(" hold {g}")).unwrap_or_default();
            format!("host-func on {}{snapshot}{hold}", stream(s))
        }
        OpKind::Callback { stream: s } => format!("callback on {}", stream(s)),
        OpKind::BeginCapture { stream: s, mode: m } => format!("begin-capture {} {}", stream(s), capture_mode(*m)),
        OpKind::EndCapture { stream: s, graph } => format!("end-capture {} into {graph}", stream(s)),
        OpKind::CaptureStatus { stream: s, status } => {
            format!("capture-status {} is {}", stream(s), capture_status(*status))
        }
        OpKind::CaptureDeps { stream: s, count } => format!("capture-deps {} is {count}", stream(s)),
        OpKind::PointerType { buf, memory } => format!("pointer-type {buf} is {}", memory_type(*memory)),
        OpKind::ExchangeCaptureMode { mode: m } => format!("exchange-capture-mode {}", capture_mode(*m)),
        OpKind::Instantiate { exec, graph } => format!("instantiate {exec} from {graph}"),
        OpKind::LaunchGraph { exec, stream: s } => format!("launch-graph {exec} on {}", stream(s)),
        OpKind::Upload { exec, stream: s } => format!("upload {exec} on {}", stream(s)),
        OpKind::Create { name } => format!("create {name}"),
        OpKind::Destroy { name } => format!("destroy {name}"),
        OpKind::MallocAsync { buf, stream: s } => format!("malloc-async {buf} on {}", stream(s)),
        OpKind::FreeAsync { buf, stream: s } => format!("free-async {buf} on {}", stream(s)),
        OpKind::Register { buf } => format!("register {buf}"),
        OpKind::Unregister { buf } => format!("unregister {buf}"),
        OpKind::SetDevice => "set-device".into(),
        OpKind::GetDevice => "get-device".into(),
        OpKind::SetLimit { limit: l, value } => format!("set-limit {} {}", limit(*l), size(*value)),
        OpKind::SetCacheConfig { config } => format!("set-cache-config {}", cache_config(*config)),
        OpKind::StreamPriority { stream: s, priority: p } => {
            format!("stream-priority {} is {}", stream(s), priority(*p))
        }
        OpKind::Read { buf } => format!("read {buf}"),
        OpKind::PeekLastError => "peek-last-error".into(),
        OpKind::Malloc { bytes } => format!("malloc {}", size(*bytes)),
        OpKind::GetLastError => "get-last-error".into(),
        OpKind::Open { gate, after_ns: None } => format!("open {gate}"),
        OpKind::Open { gate, after_ns: Some(ns) } => format!("open {gate} after {}", duration(*ns)),
        OpKind::Sleep { ns } => format!("sleep {}", duration(*ns)),
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

pub fn capture_status(status: CaptureStatus) -> &'static str {
    match status {
        CaptureStatus::None => "none",
        CaptureStatus::Active => "active",
        CaptureStatus::Invalidated => "invalidated",
    }
}

pub fn memory_type(memory: MemoryType) -> &'static str {
    match memory {
        MemoryType::Unregistered => "unregistered",
        MemoryType::Host => "host",
        MemoryType::Device => "device",
        MemoryType::Managed => "managed",
    }
}

pub fn mem_kind(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Device => "device",
        MemKind::Pinned => "pinned",
        MemKind::Pageable => "pageable",
        MemKind::Mapped => "mapped",
    }
}

fn target_name(t: &Target) -> &str {
    match t {
        Target::Stream(s) => stream(s),
        Target::Event(e) => e,
    }
}

fn expectation(e: &Expectation) -> String {
    match e {
        Expectation::Expect(p) => format!("expect {}", predicate(p)),
        Expectation::Quality(p) => format!("quality {}", predicate(p)),
        Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
            let parts: Vec<String> = alternatives.iter().map(|(n, p)| format!("{n}: {}", predicate(p))).collect();
            let word = if matches!(e, Expectation::Observe(_)) { "observe" } else { "variant" };
            format!("{word} {}", parts.join(" | "))
        }
    }
}

pub fn predicate(p: &Predicate) -> String {
    match p {
        Predicate::Before { first, second } => format!("{first} before {second}"),
        Predicate::Overlaps { a, b } => format!("{a} overlaps {b}"),
        Predicate::WaitedFor { op, gate } => format!("{op} waited-for {gate}"),
        Predicate::NotWaitedFor { op, gate } => format!("{op} not-waited-for {gate}"),
        Predicate::Returned { op, code } => format!("{op} returned {code}"),
        Predicate::BufferEquals { buf, index: None, value } => format!("{buf} == {value}"),
        Predicate::BufferEquals { buf, index: Some(i), value } => format!("{buf}[{i}] == {value}"),
        Predicate::TimedOut { gate } => format!("{gate} timed-out"),
        Predicate::HostOrder { labels } => format!("host-order {}", labels.join(" ")),
        Predicate::SnapshotEquals { label, value } => format!("snapshot {label} == {value}"),
        Predicate::CallbackStatus { label, code } => format!("callback {label} status {code}"),
        Predicate::ElapsedAbove { label, ms, inclusive } => {
            format!("elapsed {label} {} {ms}", if *inclusive { ">=" } else { ">" })
        }
        Predicate::ElapsedBelow { label, ms, inclusive } => {
            format!("elapsed {label} {} {ms}", if *inclusive { "<=" } else { "<" })
        }
        Predicate::HostRuns { label, count } => format!("host-runs {label} == {count}"),
        Predicate::NodeCount { graph, count } => format!("nodes {graph} == {count}"),
        Predicate::EdgeCount { graph, count } => format!("edges {graph} == {count}"),
        Predicate::Edge { graph, from, to } => format!("edge {graph} {from} -> {to}"),
        Predicate::NoEdge { graph, from, to } => format!("no-edge {graph} {from} -> {to}"),
        Predicate::Path { graph, from, to } => format!("path {graph} {from} -> {to}"),
        Predicate::NoPath { graph, from, to } => format!("no-path {graph} {from} -> {to}"),
    }
}
