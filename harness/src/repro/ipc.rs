//! Inter-process handles, as `exec::interpret::ipc`: memory and event handles, and exporting a
//! pool. Handles are kept under the label of the operation that got them (`run.ipc_mem`, `run.ipc_events`), and
//! cross to the case's other process with each of its operations (see the header's PeerProcess).

use super::code::{cstr, keep_value, Code, Step};
use crate::case::ast::Decl;

/// The key an operation's handle or mapping is kept under: its label, or `#INDEX` for an unlabelled one.
fn key(x: &Step) -> String {
    x.op.label.clone().unwrap_or_else(|| format!("#{}", x.index))
}

/// `ipc-mem-handle BUF`: cudaIpcGetMemHandle; the value is a digest of the handle.
pub fn mem_handle(x: &Step, buf: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    code.pre("cudaIpcMemHandle_t handle = {};");
    code.call(format!("if (op.call([&] {{ return cudaIpcGetMemHandle(&handle, {}.copy); }})) {{", b.var));
    code.call("    op.value = \"{\\\"address\\\":\" + std::to_string(cc::digest(&handle, sizeof handle)) + \"}\";");
    if let Some(label) = &x.op.label {
        code.call(format!("    run.ipc_mem[{}] = handle;", cstr(label)));
    }
    code.call("}");
    Ok(code)
}

/// `ipc-open-mem L [as BUF]`: cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess); the value is the
/// pointer. With `as BUF`, the mapping becomes the `later` buffer BUF (a view: the mapping is closed, not freed).
pub fn open_mem(x: &Step, handle: &str, into: &Option<String>) -> Result<Code, String> {
    let mut code = Code::default();
    let h = cstr(handle);
    code.pre(format!(
        "if (run.ipc_mem.count({h}) == 0) {{ op.skip({}); return; }}",
        cstr(&format!("{handle} got no memory handle"))
    ));
    code.pre(format!("cudaIpcMemHandle_t handle = run.ipc_mem[{h}];"));
    code.pre("void* ptr = nullptr;");
    code.call("if (op.call([&] { return cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess); })) {");
    code.call("    op.value = \"{\\\"address\\\":\" + std::to_string((unsigned long long)(uintptr_t)ptr) + \"}\";");
    code.call(format!("    run.ipc_opened[{}] = ptr;", cstr(&key(x))));
    if let Some(buf) = into {
        if let Some(Decl::Buffer { .. }) = x.names.decl(buf) {
            let v = x.names.var(buf);
            code.call(format!("    {v}.state = cc::READY;"));
            code.call(format!("    {v}.storage = cc::VIEW;"));
            code.call(format!("    {v}.copy = ptr;"));
            code.call(format!("    {v}.kernel = (uint32_t*)ptr;"));
        }
    }
    code.call("}");
    Ok(code)
}

/// `ipc-close-mem L`: cudaIpcCloseMemHandle of the pointer `ipc-open-mem` L returned.
pub fn close_mem(x: &Step, opened: &str) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let o = cstr(opened);
    code.pre(format!(
        "if (run.ipc_opened.count({o}) == 0) {{ op.skip({}); return; }}",
        cstr(&format!("{opened} opened no mapping"))
    ));
    code.pre(format!("void* ptr = run.ipc_opened[{o}];"));
    code.call(format!("if (op.call([&] {{ return cudaIpcCloseMemHandle(ptr); }})) run.ipc_opened.erase({o});"));
    Ok(code)
}

/// `ipc-event-handle EVENT`: cudaIpcGetEventHandle.
pub fn event_handle(x: &Step, event: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(event);
    code.need(format!("op.need({e})"));
    code.pre("cudaIpcEventHandle_t handle = {};");
    let keep = x.op.label.as_ref().map_or(String::new(), |l| format!(" run.ipc_events[{}] = handle;", cstr(l)));
    code.call(format!("if (op.call([&] {{ return cudaIpcGetEventHandle(&handle, {e}.h); }})) {{{keep} }}"));
    Ok(code)
}

/// `ipc-open-event L into EVENT`: cudaIpcOpenEventHandle into the `later` event slot.
pub fn open_event(x: &Step, handle: &str, into: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let h = cstr(handle);
    let e = x.names.var(into);
    code.pre(format!(
        "if (run.ipc_events.count({h}) == 0) {{ op.skip({}); return; }}",
        cstr(&format!("{handle} got no event handle"))
    ));
    code.pre(format!("cudaIpcEventHandle_t handle = run.ipc_events[{h}];"));
    code.pre("cudaEvent_t event = nullptr;");
    code.call("if (op.call([&] { return cudaIpcOpenEventHandle(&event, handle); })) {");
    code.call(format!("    {e}.h = event;"));
    code.call(format!("    {e}.state = cc::READY;"));
    code.call("}");
    Ok(code)
}

/// `[L:] pool-export POOL`: cudaMemPoolExportToShareableHandle as a POSIX file descriptor. With a label it is kept
/// as `L.fd` in `run.call_outputs`, where a later call's `L.fd` argument reads it, and closed when the program
/// exits (its one case has ended then); without one it is closed at once, as the executor does.
pub fn pool_export(x: &Step, pool: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let p = x.names.var(pool);
    code.need(format!("op.need({p})"));
    code.pre("int fd = -1;");
    code.call(format!(
        "bool exported = op.call([&] {{ return cudaMemPoolExportToShareableHandle(&fd, {p}.h, cudaMemHandleTypePosixFileDescriptor, 0); }}) && fd >= 0;"
    ));
    match &x.op.label {
        Some(label) => code.call(format!("if (exported) {}", keep_value(&format!("{label}.fd"), "fd"))),
        None => code.call("if (exported) close(fd);"),
    };
    Ok(code)
}
