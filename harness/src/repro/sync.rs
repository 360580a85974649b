//! Events and synchronization, as `exec::interpret::sync`: `record`, `wait`, `query`, `sync`, `device-sync`,
//! `elapsed`.

use super::code::{Code, Step};
use crate::case::ast::{StreamRef, Target};

pub fn record(x: &Step, event: &str, stream: &StreamRef, external: bool) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(event);
    code.need(format!("op.need({e})"));
    let s = x.names.stream(stream);
    s.need(&mut code);
    if external {
        code.timed(&format!("cudaEventRecordWithFlags({e}.h, {}, cudaEventRecordExternal)", s.h));
    } else {
        code.timed(&format!("cudaEventRecord({e}.h, {})", s.h));
    }
    Ok(code)
}

pub fn wait(x: &Step, stream: &StreamRef, event: &str, external: bool) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let e = x.names.var(event);
    code.need(format!("op.need({e})"));
    let flags = if external { "cudaEventWaitExternal" } else { "cudaEventWaitDefault" };
    code.timed(&format!("cudaStreamWaitEvent({}, {e}.h, {flags})", s.h));
    Ok(code)
}

/// `query` and `sync`: the stream or event call.
fn on_target(x: &Step, target: &Target, stream_call: &str, event_call: &str) -> Code {
    let mut code = Code::default();
    match target {
        Target::Stream(stream) => {
            let s = x.names.stream(stream);
            s.need(&mut code);
            code.timed(&format!("{stream_call}({})", s.h));
        }
        Target::Event(event) => {
            let e = x.names.var(event);
            code.need(format!("op.need({e})"));
            code.timed(&format!("{event_call}({e}.h)"));
        }
    }
    code
}

pub fn query(x: &Step, target: &Target) -> Result<Code, String> {
    Ok(on_target(x, target, "cudaStreamQuery", "cudaEventQuery"))
}

pub fn sync(x: &Step, target: &Target) -> Result<Code, String> {
    Ok(on_target(x, target, "cudaStreamSynchronize", "cudaEventSynchronize"))
}

pub fn device_sync(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.timed("cudaDeviceSynchronize()");
    Ok(code)
}

pub fn elapsed(x: &Step, start: &str, stop: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let (a, b) = (x.names.var(start), x.names.var(stop));
    code.need(format!("op.need({a})"));
    code.need(format!("op.need({b})"));
    code.pre("float ms = 0;");
    code.call(format!("if (op.call([&] {{ return cudaEventElapsedTime(&ms, {a}.h, {b}.h); }})) {{"));
    code.call("    op.value = \"{\\\"elapsed-ms\\\":\" + cc::json_f64(ms) + \"}\";");
    code.call("}");
    Ok(code)
}
