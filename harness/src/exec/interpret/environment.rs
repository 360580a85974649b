//! What the process's environment shows: the devices it sees, their attributes, and how many
//! launches its queue takes before a launch call blocks.

use super::{Step, SUCCESS};
use crate::case::ast::{DeviceAttrWord, StreamRef};
use crate::record::observations::OpValue;
use cuda_sys as sys;
use std::sync::atomic::Ordering;

/// `device-count`: cudaGetDeviceCount.
pub(super) fn device_count(x: Step) -> Result<(), String> {
    let mut count = 0;
    // SAFETY: a valid out-pointer.
    if x.t.call(|| unsafe { sys::cudaGetDeviceCount(&mut count) }) {
        x.t.value(OpValue::Number(u64::try_from(count).unwrap_or(0)));
    }
    Ok(())
}

/// `device-attr ATTR`: cudaDeviceGetAttribute of the case's device 0.
pub(super) fn device_attr(x: Step, attr: DeviceAttrWord) -> Result<(), String> {
    use sys::cudaDeviceAttr as A;
    let attr = match attr {
        DeviceAttrWord::ManagedMemory => A::cudaDevAttrManagedMemory,
        DeviceAttrWord::ConcurrentManagedAccess => A::cudaDevAttrConcurrentManagedAccess,
        DeviceAttrWord::PageableMemoryAccess => A::cudaDevAttrPageableMemoryAccess,
        DeviceAttrWord::PageableMemoryAccessUsesHostPageTables => A::cudaDevAttrPageableMemoryAccessUsesHostPageTables,
        DeviceAttrWord::DirectManagedMemAccessFromHost => A::cudaDevAttrDirectManagedMemAccessFromHost,
        DeviceAttrWord::IpcEventSupport => A::cudaDevAttrIpcEventSupport,
        DeviceAttrWord::HostRegisterSupported => A::cudaDevAttrHostRegisterSupported,
    };
    let device = x.ctx.devices.ordinal(0);
    let mut value = 0;
    // SAFETY: a valid out-pointer.
    if x.t.call(|| unsafe { sys::cudaDeviceGetAttribute(&mut value, attr, device) }) {
        x.t.value(OpValue::Number(u64::try_from(value).unwrap_or(0)));
    }
    Ok(())
}

/// `queue-depth STREAM behind GATE max N`: up to N launches of the spin kernel (0 ns, one thread, no stamp) on
/// STREAM; the value is how many returned while GATE was still closed. The record spans the first call to the last
/// return, so `L waited-for GATE` says the last launch returned only after the gate opened.
pub(super) fn queue_depth(x: Step, stream: &StreamRef, gate: &str, max: u32) -> Result<(), String> {
    let s = x.st.stream(stream)?;
    let g = x.ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
    let flag = x.ctx.gates.host_flag(g).ok_or_else(|| format!("gate {gate} was not created"))?;
    let k = x.ctx.kernels;
    let mut while_closed = 0u64;
    let mut last = SUCCESS;
    x.t.call(|| {
        for _ in 0..max {
            // SAFETY: the spin kernel with a null stamp touches no memory; s is a live (or built-in) stream.
            last = unsafe { k.launch_spin_shaped(k.spin, 0, std::ptr::null_mut(), (1, 1, 0), s) };
            if last != SUCCESS {
                break;
            }
            if flag.load(Ordering::SeqCst) == 0 {
                while_closed += 1;
            }
        }
        last
    });
    x.t.value(OpValue::Number(while_closed));
    Ok(())
}
