//! What the process's environment shows, as `exec::interpret::environment`: `device-count`,
//! `device-attr`, and `queue-depth` (how many launches queue before a launch call blocks).

use super::code::{Code, Step};
use crate::case::ast::{DeviceAttrWord, StreamRef};

pub fn device_count(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.pre("int count = 0;");
    code.call("if (op.call([&] { return cudaGetDeviceCount(&count); })) {");
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(std::max(count, 0)) + \"}\";");
    code.call("}");
    Ok(code)
}

/// `device-attr ATTR`: cudaDeviceGetAttribute of the case's device 0.
pub fn device_attr(x: &Step, attr: DeviceAttrWord) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let attr = match attr {
        DeviceAttrWord::ManagedMemory => "cudaDevAttrManagedMemory",
        DeviceAttrWord::ConcurrentManagedAccess => "cudaDevAttrConcurrentManagedAccess",
        DeviceAttrWord::PageableMemoryAccess => "cudaDevAttrPageableMemoryAccess",
        DeviceAttrWord::PageableMemoryAccessUsesHostPageTables => "cudaDevAttrPageableMemoryAccessUsesHostPageTables",
        DeviceAttrWord::DirectManagedMemAccessFromHost => "cudaDevAttrDirectManagedMemAccessFromHost",
        DeviceAttrWord::IpcEventSupport => "cudaDevAttrIpcEventSupport",
        DeviceAttrWord::HostRegisterSupported => "cudaDevAttrHostRegisterSupported",
    };
    code.pre("int value = 0;");
    code.call(format!("if (op.call([&] {{ return cudaDeviceGetAttribute(&value, {attr}, run.device(0)); }})) {{"));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(std::max(value, 0)) + \"}\";");
    code.call("}");
    Ok(code)
}

/// `queue-depth STREAM behind GATE max N`: up to N launches of the spin kernel (0 ns, one thread, no stamp) on
/// STREAM; the value is how many returned while GATE was still closed. One timed call spans them all.
pub fn queue_depth(x: &Step, stream: &StreamRef, gate: &str, max: u32) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let g = x.names.var(gate);
    if !matches!(x.names.decl(gate), Some(crate::case::ast::Decl::Gate { .. })) {
        code.skip(&format!("no gate {gate} is declared"));
        return Ok(code);
    }
    code.pre(format!(
        "if (!{g}.created()) {{ op.skip({}); return; }}",
        super::code::cstr(&format!("gate {gate} was not created"))
    ));
    code.pre("uint64_t ns = 0;");
    code.pre("uint64_t* stamp = nullptr;");
    code.pre("void* args[] = {&ns, &stamp};");
    code.pre("unsigned long long while_closed = 0;");
    code.call("op.call([&] {");
    code.call("    cudaError_t last = cudaSuccess;");
    code.call(format!("    for (unsigned i = 0; i < {max}u; i++) {{"));
    code.call(format!("        last = cudaLaunchKernel((const void*)cc_spin, dim3(1), dim3(1), args, 0, {});", s.h));
    code.call("        if (last != cudaSuccess) break;");
    code.call(format!("        if (__atomic_load_n(&{g}.host[0], __ATOMIC_SEQ_CST) == 0) while_closed++;"));
    code.call("    }");
    code.call("    return last;");
    code.call("});");
    code.post("op.value = \"{\\\"number\\\":\" + std::to_string(while_closed) + \"}\";");
    Ok(code)
}
