//! Short text of an operation, in the case language's own words, for traces and verdict messages.

use crate::case::ast::{CaptureMode, CaptureStatus, MemKind, OpKind, StreamRef, Target};

pub fn op_text(kind: &OpKind) -> String {
    match kind {
        OpKind::LaunchGate { gate, stream } => format!("launch gate {gate} on {}", stream_text(stream)),
        OpKind::LaunchSpin { ns, stream } => format!("launch spin {} on {}", duration_text(*ns), stream_text(stream)),
        OpKind::LaunchFill { buf, value, stream } => format!("launch fill {buf} {value} on {}", stream_text(stream)),
        OpKind::LaunchTransform { buf, mul, add, stream } => {
            format!("launch transform {buf} mul {mul} add {add} on {}", stream_text(stream))
        }
        OpKind::LaunchCompare { a, b, into, stream } => {
            format!("launch compare {a} {b} into {into} on {}", stream_text(stream))
        }
        OpKind::Memcpy { dst, src, bytes, stream } => match stream {
            None => format!("memcpy {dst} {src}{}", bytes_text(*bytes)),
            Some(s) => format!("memcpy-async {dst} {src}{} on {}", bytes_text(*bytes), stream_text(s)),
        },
        OpKind::Memset { buf, byte, bytes, stream } => match stream {
            None => format!("memset {buf} {byte}{}", bytes_text(*bytes)),
            Some(s) => format!("memset-async {buf} {byte}{} on {}", bytes_text(*bytes), stream_text(s)),
        },
        OpKind::Record { event, stream, external } => {
            format!("record {event} on {}{}", stream_text(stream), if *external { " external" } else { "" })
        }
        OpKind::Wait { stream, event, external } => {
            format!("wait {} for {event}{}", stream_text(stream), if *external { " external" } else { "" })
        }
        OpKind::Query { target } => format!("query {}", target_text(target)),
        OpKind::Sync { target } => format!("sync {}", target_text(target)),
        OpKind::DeviceSync => "device-sync".to_owned(),
        OpKind::Elapsed { start, stop } => format!("elapsed {start} {stop}"),
        OpKind::HostFunc { stream, snapshot } => match snapshot {
            None => format!("host-func on {}", stream_text(stream)),
            Some(b) => format!("host-func on {} snapshot {b}", stream_text(stream)),
        },
        OpKind::Callback { stream } => format!("callback on {}", stream_text(stream)),
        OpKind::BeginCapture { stream, mode } => {
            format!("begin-capture {} {}", stream_text(stream), capture_mode_text(*mode))
        }
        OpKind::EndCapture { stream, graph } => format!("end-capture {} into {graph}", stream_text(stream)),
        OpKind::CaptureStatus { stream, status } => {
            format!("capture-status {} is {}", stream_text(stream), capture_status_text(*status))
        }
        OpKind::CaptureDeps { stream, count } => format!("capture-deps {} is {count}", stream_text(stream)),
        OpKind::ExchangeCaptureMode { mode } => format!("exchange-capture-mode {}", capture_mode_text(*mode)),
        OpKind::Instantiate { exec, graph } => format!("instantiate {exec} from {graph}"),
        OpKind::LaunchGraph { exec, stream } => format!("launch-graph {exec} on {}", stream_text(stream)),
        OpKind::Upload { exec, stream } => format!("upload {exec} on {}", stream_text(stream)),
        OpKind::Destroy { name } => format!("destroy {name}"),
        OpKind::Malloc { bytes } => format!("malloc {bytes}"),
        OpKind::GetLastError => "get-last-error".to_owned(),
        OpKind::Open { gate, after_ns: None } => format!("open {gate}"),
        OpKind::Open { gate, after_ns: Some(ns) } => format!("open {gate} after {}", duration_text(*ns)),
        OpKind::Sleep { ns } => format!("sleep {}", duration_text(*ns)),
    }
}

pub fn stream_text(stream: &StreamRef) -> &str {
    match stream {
        StreamRef::Legacy => "legacy",
        StreamRef::PerThread => "per-thread",
        StreamRef::Null => "null",
        StreamRef::Named(name) => name,
    }
}

fn target_text(target: &Target) -> &str {
    match target {
        Target::Stream(s) => stream_text(s),
        Target::Event(e) => e,
    }
}

fn bytes_text(bytes: Option<u64>) -> String {
    bytes.map(|b| format!(" {b}")).unwrap_or_default()
}

pub fn capture_mode_text(mode: CaptureMode) -> &'static str {
    match mode {
        CaptureMode::Global => "global",
        CaptureMode::ThreadLocal => "thread-local",
        CaptureMode::Relaxed => "relaxed",
    }
}

pub fn capture_status_text(status: CaptureStatus) -> &'static str {
    match status {
        CaptureStatus::None => "none",
        CaptureStatus::Active => "active",
        CaptureStatus::Invalidated => "invalidated",
    }
}

pub fn mem_kind_text(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Device => "device",
        MemKind::Pinned => "pinned",
        MemKind::Pageable => "pageable",
        MemKind::Mapped => "mapped",
    }
}

/// `1500000` as `1500us`: the largest unit that divides the value exactly, as the case language writes it.
pub fn duration_text(ns: u64) -> String {
    for (unit, per) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= per && ns % per == 0 {
            return format!("{}{unit}", ns / per);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_use_the_largest_exact_unit() {
        assert_eq!(duration_text(2_000_000), "2ms");
        assert_eq!(duration_text(1_500_000), "1500us");
        assert_eq!(duration_text(1_000_000_000), "1s");
        assert_eq!(duration_text(500), "500ns");
        assert_eq!(duration_text(0), "0ns");
    }

    #[test]
    fn ops_read_like_the_case_language() {
        let op = OpKind::Memcpy { dst: "d".into(), src: "h".into(), bytes: Some(64), stream: Some(StreamRef::Legacy) };
        assert_eq!(op_text(&op), "memcpy-async d h 64 on legacy");
        let op = OpKind::Open { gate: "g".into(), after_ns: Some(50_000_000) };
        assert_eq!(op_text(&op), "open g after 50ms");
        let op = OpKind::Wait { stream: StreamRef::Named("s".into()), event: "e".into(), external: true };
        assert_eq!(op_text(&op), "wait s for e external");
    }
}
