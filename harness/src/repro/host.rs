//! Host calls, as `exec::interpret::host`: `host-func` and `callback` (functions CUDA calls on the host), and the
//! host-only `open` and `sleep`.

use super::code::{cstr, Code, Step};
use crate::case::ast::StreamRef;

pub fn host_func(
    x: &Step,
    stream: &StreamRef,
    snapshot: &Option<String>,
    hold: &Option<String>,
) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let (mut view, mut words) = ("nullptr".to_owned(), 0);
    if let Some(name) = snapshot {
        let b = x.names.buffer(name)?;
        code.need(format!("op.need({})", b.var));
        if !b.kind.host_readable() {
            code.skip(&format!("a snapshot needs host-visible memory; {name} is device memory"));
        }
        view = format!("{}.copy", b.var);
        words = b.bytes / 4;
    }
    let mut flag = "nullptr".to_owned();
    if let Some(gate) = hold {
        let g = x.names.var(gate);
        code.pre(format!(
            "if (!{g}.created()) {{ op.skip({}); return; }}",
            cstr(&format!("gate {gate} was not created"))
        ));
        flag = format!("{g}.host");
    }
    // The function appends its label to the host log when it runs (and copies the snapshot, and with `hold`
    // returns only once the gate opens).
    code.pre(format!("cc::HostCall* call = run.host_call({}, false, {view}, {words}, {flag});", x.index));
    code.timed(&format!("cudaLaunchHostFunc({}, cc::host_func, call)", s.h));
    Ok(code)
}

pub fn callback(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre(format!("cc::HostCall* call = run.host_call({}, true);", x.index));
    code.timed(&format!("cudaStreamAddCallback({}, cc::stream_callback, call, 0)", s.h));
    Ok(code)
}

pub fn open(x: &Step, gate: &str, after_ns: &Option<u64>) -> Result<Code, String> {
    let mut code = Code::default();
    let g = x.names.var(gate);
    match after_ns {
        None => code.call(format!("op.host([&] {{ {g}.open(cc::SCRIPT); }});")),
        // From the keeper thread, that long from now: as written, unless the runner asked for shorter delays
        // (`--gate-delay-scale`, as the Rust executor's `gate_delay_scale`).
        Some(ns) => code.call(format!(
            "op.host([&] {{ run.keeper.open_at({g}, std::chrono::steady_clock::now() + run.gate_delay({ns}ll)); }});"
        )),
    };
    Ok(code)
}

pub fn sleep(x: &Step, ns: u64) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.call(format!("op.host([&] {{ std::this_thread::sleep_for(std::chrono::nanoseconds({ns}ll)); }});"));
    Ok(code)
}
