//! Managed memory, as `exec::interpret::managed`: `attach`, `prefetch`, `advise`,
//! `malloc-managed`. CUDA 13.0 signatures: cudaMemPrefetchAsync and cudaMemAdvise take a cudaMemLocation.

use super::code::{Code, Step};
use crate::case::ast::{Advice, AttachMode, MemPlace, StreamRef};

/// Declares `cudaMemLocation location`: the case's device 0, or the host.
fn location(code: &mut Code, place: MemPlace) {
    code.pre("cudaMemLocation location = {};");
    match place {
        MemPlace::Device => {
            code.pre("location.type = cudaMemLocationTypeDevice;");
            code.pre("location.id = run.device(0);");
        }
        MemPlace::Host => {
            code.pre("location.type = cudaMemLocationTypeHost;");
            code.pre("location.id = 0;");
        }
    }
}

/// `attach BUF on STREAM global|host|single [bytes N]`: cudaStreamAttachMemAsync(stream, ptr, N or 0, flag).
pub fn attach(x: &Step, buf: &str, stream: &StreamRef, mode: AttachMode, bytes: Option<u64>) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    let flags = match mode {
        AttachMode::Global => "cudaMemAttachGlobal",
        AttachMode::Host => "cudaMemAttachHost",
        AttachMode::Single => "cudaMemAttachSingle",
    };
    code.timed(&format!("cudaStreamAttachMemAsync({}, {}.copy, {}, {flags})", s.h, b.var, bytes.unwrap_or(0)));
    Ok(code)
}

/// `prefetch BUF to device|host on STREAM`: the whole buffer, flags 0.
pub fn prefetch(x: &Step, buf: &str, to: MemPlace, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    location(&mut code, to);
    code.timed(&format!("cudaMemPrefetchAsync({}.copy, {}, location, 0, {})", b.var, b.bytes, s.h));
    Ok(code)
}

/// `advise BUF ADVICE device|host`: the whole buffer.
pub fn advise(x: &Step, buf: &str, advice: Advice, place: MemPlace) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    location(&mut code, place);
    let advice = match advice {
        Advice::ReadMostly => "cudaMemAdviseSetReadMostly",
        Advice::UnsetReadMostly => "cudaMemAdviseUnsetReadMostly",
        Advice::PreferredLocation => "cudaMemAdviseSetPreferredLocation",
        Advice::UnsetPreferredLocation => "cudaMemAdviseUnsetPreferredLocation",
        Advice::AccessedBy => "cudaMemAdviseSetAccessedBy",
        Advice::UnsetAccessedBy => "cudaMemAdviseUnsetAccessedBy",
    };
    code.timed(&format!("cudaMemAdvise({}.copy, {}, {advice}, location)", b.var, b.bytes));
    Ok(code)
}

/// `malloc-managed BYTES [host]`: cudaMallocManaged; what it returns is freed at cleanup.
pub fn malloc_managed(x: &Step, bytes: u64, host: bool) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let flags = if host { "cudaMemAttachHost" } else { "cudaMemAttachGlobal" };
    code.pre("void* p = nullptr;");
    code.call(format!(
        "if (op.call([&] {{ return cudaMallocManaged(&p, {bytes}ull, {flags}); }}) && p != nullptr) run.managed.push_back(p);"
    ));
    Ok(code)
}
