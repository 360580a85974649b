//! Events and synchronization: `record`, `wait`, `query`, `sync`, `device-sync`, `elapsed`.

use super::{Step, Timed};
use crate::case::ast::{StreamRef, Target};
use crate::exec::objects::Objects;
use crate::record::observations::OpValue;
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn record(x: Step, event: &str, stream: &StreamRef, external: bool) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (e, s) = (st.event(event)?, st.stream(stream)?);
    if external {
        // SAFETY: live event and stream handles.
        t.call(|| unsafe { sys::cudaEventRecordWithFlags(e, s, sys::cudaEventRecordExternal) });
    } else {
        // SAFETY: live event and stream handles.
        t.call(|| unsafe { sys::cudaEventRecord(e, s) });
    }
    Ok(())
}

pub(super) fn wait(x: Step, stream: &StreamRef, event: &str, external: bool) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (s, e) = (st.stream(stream)?, st.event(event)?);
    let flags = if external { sys::cudaEventWaitExternal } else { 0 };
    // SAFETY: live stream and event handles.
    t.call(|| unsafe { sys::cudaStreamWaitEvent(s, e, flags) });
    Ok(())
}

pub(super) fn query(x: Step, target: &Target) -> Result<(), String> {
    let Step { st, t, .. } = x;
    match target {
        // SAFETY: a live (or built-in) stream handle.
        Target::Stream(stream) => call_on_stream(st, stream, t, |s| unsafe { sys::cudaStreamQuery(s) })?,
        // SAFETY: a live event handle.
        Target::Event(event) => call_on_event(st, event, t, |e| unsafe { sys::cudaEventQuery(e) })?,
    }
    Ok(())
}

pub(super) fn sync(x: Step, target: &Target) -> Result<(), String> {
    let Step { st, t, .. } = x;
    match target {
        // SAFETY: a live (or built-in) stream handle.
        Target::Stream(stream) => call_on_stream(st, stream, t, |s| unsafe { sys::cudaStreamSynchronize(s) })?,
        // SAFETY: a live event handle.
        Target::Event(event) => call_on_event(st, event, t, |e| unsafe { sys::cudaEventSynchronize(e) })?,
    }
    Ok(())
}

pub(super) fn device_sync(x: Step) -> Result<(), String> {
    let Step { t, .. } = x;
    // SAFETY: no arguments.
    t.call(|| unsafe { sys::cudaDeviceSynchronize() });
    Ok(())
}

pub(super) fn elapsed(x: Step, start: &str, stop: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (a, b) = (st.event(start)?, st.event(stop)?);
    let mut ms = 0f32;
    // SAFETY: live event handles; ms is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaEventElapsedTime(&mut ms, a, b) }) {
        t.value(OpValue::ElapsedMs(f64::from(ms)));
    }
    Ok(())
}

fn call_on_stream(
    st: &Objects,
    stream: &StreamRef,
    t: &mut Timed,
    mut f: impl FnMut(sys::cudaStream_t) -> sys::cudaError_t,
) -> Result<(), String> {
    let s = st.stream(stream)?;
    t.call(|| f(s));
    Ok(())
}

fn call_on_event(
    st: &Objects,
    event: &str,
    t: &mut Timed,
    mut f: impl FnMut(sys::cudaEvent_t) -> sys::cudaError_t,
) -> Result<(), String> {
    let e = st.event(event)?;
    t.call(|| f(e));
    Ok(())
}
