//! The device and the thread's state: `set-device`, `get-device`, peer access, limits, the cache configuration,
//! stream priorities, and the last error.

use super::Step;
use crate::case::ast::{CacheConfig, Limit, StreamRef};
use crate::exec::devices;
use crate::exec::sys_words::ToSys;
use crate::record::observations::OpValue;
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn set_device(x: Step, device: u32) -> Result<(), String> {
    let Step { ctx, t, .. } = x;
    let ordinal = ctx.devices.ordinal(device);
    // SAFETY: no pointers.
    t.call(|| unsafe { sys::cudaSetDevice(ordinal) });
    Ok(())
}

pub(super) fn peer_access(x: Step, peer: u32, enable: bool) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let peer = ctx.devices.ordinal(peer);
    let done = if enable {
        // SAFETY: no pointers; flags must be 0.
        t.call(|| unsafe { sys::cudaDeviceEnablePeerAccess(peer, 0) })
    } else {
        // SAFETY: no pointers.
        t.call(|| unsafe { sys::cudaDeviceDisablePeerAccess(peer) })
    };
    if let (true, Ok(current)) = (done, devices::current()) {
        st.peers_enabled.retain(|&pair| pair != (current, peer));
        if enable {
            st.peers_enabled.push((current, peer));
        }
    }
    Ok(())
}

pub(super) fn can_access_peer(x: Step, device: u32, peer: u32) -> Result<(), String> {
    let Step { ctx, t, .. } = x;
    let (d, p) = (ctx.devices.ordinal(device), ctx.devices.ordinal(peer));
    let mut can = 0;
    // SAFETY: can is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaDeviceCanAccessPeer(&mut can, d, p) }) {
        t.value(OpValue::Number(u64::from(can != 0)));
    }
    Ok(())
}

pub(super) fn get_device(x: Step) -> Result<(), String> {
    let Step { t, .. } = x;
    let mut ordinal = -1;
    // SAFETY: ordinal is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaGetDevice(&mut ordinal) }) {
        t.value(OpValue::Device(ordinal));
    }
    Ok(())
}

pub(super) fn set_limit(x: Step, limit: Limit, value: u64) -> Result<(), String> {
    let Step { t, .. } = x;
    let limit = limit.to_sys();
    let value = usize::try_from(value).map_err(|e| e.to_string())?;
    // SAFETY: no pointers.
    t.call(|| unsafe { sys::cudaDeviceSetLimit(limit, value) });
    Ok(())
}

pub(super) fn set_cache_config(x: Step, config: CacheConfig) -> Result<(), String> {
    let Step { t, .. } = x;
    let config = config.to_sys();
    // SAFETY: no pointers.
    t.call(|| unsafe { sys::cudaDeviceSetCacheConfig(config) });
    Ok(())
}

pub(super) fn stream_priority(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut value = 0;
    // SAFETY: a live (or built-in) stream handle; value is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaStreamGetPriority(s, &mut value) }) {
        let (greatest, least) = ctx.device.stream_priority_range;
        t.value(OpValue::StreamPriority { value, greatest, least });
    }
    Ok(())
}

pub(super) fn stream_flags(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut flags = 0;
    // SAFETY: a live (or built-in) stream handle; flags is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaStreamGetFlags(s, &mut flags) }) {
        t.value(OpValue::Number(u64::from(flags)));
    }
    Ok(())
}

pub(super) fn peek_last_error(x: Step) -> Result<(), String> {
    let Step { t, .. } = x;
    // SAFETY: no arguments.
    t.call(|| unsafe { sys::cudaPeekAtLastError() });
    Ok(())
}

pub(super) fn get_last_error(x: Step) -> Result<(), String> {
    let Step { t, .. } = x;
    // SAFETY: no arguments.
    t.call(|| unsafe { sys::cudaGetLastError() });
    Ok(())
}
