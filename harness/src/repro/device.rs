//! The device and the thread's state, as `exec::interpret::device`: `set-device`, `get-device`, peer access,
//! limits, the cache configuration, stream priorities and flags, and the last error.

use super::code::{Code, Step};
use crate::case::ast::{CacheConfig, Limit, StreamRef};

pub fn set_device(x: &Step, device: u32) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.timed(&format!("cudaSetDevice(run.device({device}))"));
    Ok(code)
}

pub fn peer_access(x: &Step, peer: u32, enable: bool) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.pre(format!("int peer = run.device({peer});"));
    if enable {
        code.timed("cudaDeviceEnablePeerAccess(peer, 0)");
    } else {
        code.timed("cudaDeviceDisablePeerAccess(peer)");
    }
    // Peer access outlives the case in the context: what the script enabled is disabled at the end.
    code.post("int current = -1;");
    code.post("if (op.ok() && cudaGetDevice(&current) == cudaSuccess) {");
    code.post("    run.peers_enabled.erase(std::remove(run.peers_enabled.begin(), run.peers_enabled.end(), std::make_pair(current, peer)), run.peers_enabled.end());");
    if enable {
        code.post("    run.peers_enabled.push_back({current, peer});");
    }
    code.post("}");
    Ok(code)
}

pub fn can_access_peer(x: &Step, device: u32, peer: u32) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.pre("int can = 0;");
    code.call(format!(
        "if (op.call([&] {{ return cudaDeviceCanAccessPeer(&can, run.device({device}), run.device({peer})); }})) {{"
    ));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(can != 0 ? 1 : 0) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn get_device(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.pre("int ordinal = -1;");
    code.call("if (op.call([&] { return cudaGetDevice(&ordinal); })) {");
    code.call("    op.value = \"{\\\"device\\\":\" + std::to_string(ordinal) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn set_limit(x: &Step, limit: Limit, value: u64) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let limit = match limit {
        Limit::StackSize => "cudaLimitStackSize",
        Limit::PrintfFifoSize => "cudaLimitPrintfFifoSize",
        Limit::MallocHeapSize => "cudaLimitMallocHeapSize",
    };
    code.timed(&format!("cudaDeviceSetLimit({limit}, {value})"));
    Ok(code)
}

pub fn set_cache_config(x: &Step, config: CacheConfig) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let config = match config {
        CacheConfig::PreferNone => "cudaFuncCachePreferNone",
        CacheConfig::PreferShared => "cudaFuncCachePreferShared",
        CacheConfig::PreferL1 => "cudaFuncCachePreferL1",
        CacheConfig::PreferEqual => "cudaFuncCachePreferEqual",
    };
    code.timed(&format!("cudaDeviceSetCacheConfig({config})"));
    Ok(code)
}

pub fn stream_priority(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("int value = 0;");
    code.call(format!("if (op.call([&] {{ return cudaStreamGetPriority({}, &value); }})) {{", s.h));
    code.call("    op.value = \"{\\\"stream-priority\\\":{\\\"value\\\":\" + std::to_string(value) + \",\\\"greatest\\\":\" +");
    code.call("               std::to_string(run.priority_greatest) + \",\\\"least\\\":\" + std::to_string(run.priority_least) + \"}}\";");
    code.call("}");
    Ok(code)
}

pub fn stream_flags(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("unsigned int flags = 0;");
    code.call(format!("if (op.call([&] {{ return cudaStreamGetFlags({}, &flags); }})) {{", s.h));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(flags) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn peek_last_error(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.timed("cudaPeekAtLastError()");
    Ok(code)
}

pub fn get_last_error(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.timed("cudaGetLastError()");
    Ok(code)
}
