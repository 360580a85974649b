//! Host calls: `host-func` and `callback` (functions CUDA calls on the host), and the host-only `open` and `sleep`.

use super::Step;
use crate::case::ast::StreamRef;
use crate::exec::host_calls::{host_func_entry, stream_callback_entry, HostCallContext};
use crate::exec::objects::Objects;
use crate::record::observations::{GateOpener, HostCallKind};
use cuda_sys as sys;
use std::ffi::c_void;
use std::time::{Duration, Instant};

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn host_func(
    x: Step,
    stream: &StreamRef,
    snapshot: &Option<String>,
    hold: &Option<String>,
) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let s = st.stream(stream)?;
    let view = match snapshot {
        None => None,
        Some(name) => Some(
            st.buffer(name)?
                .host_words()
                .ok_or_else(|| format!("a snapshot needs host-visible memory; {name} is device memory"))?,
        ),
    };
    let mut context = HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, view);
    if let Some(gate) = hold {
        let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
        let flag = ctx.gates.host_flag(g).ok_or_else(|| format!("gate {gate} was not created"))?;
        context = context.holding(flag);
    }
    let user_data = keep_context(st, context);
    // SAFETY: see above; the context outlives every call CUDA can make with it.
    t.call(|| unsafe { sys::cudaLaunchHostFunc(s, Some(host_func_entry), user_data) });
    Ok(())
}

pub(super) fn callback(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let s = st.stream(stream)?;
    let user_data = keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::Callback, None));
    // SAFETY: as for host functions; flags must be 0.
    t.call(|| unsafe { sys::cudaStreamAddCallback(s, Some(stream_callback_entry), user_data, 0) });
    Ok(())
}

pub(super) fn open(x: Step, gate: &str, after_ns: &Option<u64>) -> Result<(), String> {
    let Step { ctx, index: _, t, .. } = x;
    let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
    match after_ns {
        None => t.host(|| ctx.gates.open(g, GateOpener::Script)),
        Some(ns) => {
            let delay = Duration::from_nanos(*ns).mul_f64(ctx.opts.gate_delay_scale);
            t.host(|| ctx.keeper.open_at(g, Instant::now() + delay))
        }
    }
    Ok(())
}

pub(super) fn sleep(x: Step, ns: u64) -> Result<(), String> {
    let Step { t, .. } = x;
    t.host(|| std::thread::sleep(Duration::from_nanos(ns)));
    Ok(())
}

/// Keeps a host-call context alive in the state; returns its `userData` pointer.
pub(super) fn keep_context(st: &mut Objects, context: Box<HostCallContext>) -> *mut c_void {
    let user_data = context.user_data();
    st.host_contexts.push(context);
    user_data
}
