//! The Vulkan objects of the external-resource cases (`device::vulkan`): `vk-memory`, `vk-semaphore` (each
//! exporting an opaque FD that a later `call cudaImport...` names as `L.fd`), `vk-write`, `vk-read`,
//! `vk-counter`. No CUDA call: each is timed as host work. The session is taken on the first of them, on the
//! Vulkan device with the case's device 0's UUID: one an earlier case of the process gave back, or a new one. Its
//! objects are released with the case's handles; its instance and device stay for the process's next case.

use super::Step;
use crate::device::vulkan::Session;
use crate::exec::objects::Objects;
use crate::record::observations::{Contents, OpValue};

/// The case's Vulkan session, made on first use.
fn session<'s>(st: &'s mut Objects, uuid: &str) -> Result<&'s mut Session, String> {
    let slot = &mut st.handles.vulkan;
    if slot.is_none() {
        *slot = Some(Session::new(uuid)?);
    }
    slot.as_mut().ok_or_else(|| "no Vulkan session".to_owned())
}

/// What a Vulkan object offers a call, as a call's outputs are kept: `L.fd` (a C `int`) and `L.size`.
fn keep(st: &mut Objects, label: &str, fd: i32, size: Option<u64>) {
    st.handles.offer_fd(label, fd);
    if let Some(size) = size {
        st.handles.call_outputs.insert(format!("{label}.size"), size.to_le_bytes().to_vec());
    }
}

/// `L: vk-memory BYTES`.
pub(super) fn memory(x: Step, bytes: u64) -> Result<(), String> {
    let label = x.op.label.clone().ok_or("vk-memory needs a label")?;
    let mut made = None;
    let Step { ctx, st, t, .. } = x;
    let session = session(st, &ctx.device.uuid)?;
    t.host(|| made = Some(session.memory(&label, bytes)));
    let fd = made.ok_or("vk-memory did not run")??;
    keep(st, &label, fd, Some(bytes));
    Ok(())
}

/// `L: vk-semaphore binary|timeline [initial N]`.
pub(super) fn semaphore(x: Step, timeline: Option<u64>) -> Result<(), String> {
    let label = x.op.label.clone().ok_or("vk-semaphore needs a label")?;
    let mut made = None;
    let Step { ctx, st, t, .. } = x;
    let session = session(st, &ctx.device.uuid)?;
    t.host(|| made = Some(session.semaphore(&label, timeline)));
    let fd = made.ok_or("vk-semaphore did not run")??;
    keep(st, &label, fd, None);
    Ok(())
}

/// `vk-write L VALUE`.
pub(super) fn write(x: Step, memory: &str, value: u32) -> Result<(), String> {
    let mut done = None;
    let Step { ctx, st, t, .. } = x;
    let session = session(st, &ctx.device.uuid)?;
    t.host(|| done = Some(session.write(memory, value)));
    done.ok_or("vk-write did not run")?
}

/// `vk-read L [at OFFSET] [bytes N]`: the snapshot of those words of the memory.
pub(super) fn read(x: Step, memory: &str, at: u64, bytes: Option<u64>) -> Result<(), String> {
    let mut read = None;
    let Step { ctx, st, t, .. } = x;
    let session = session(st, &ctx.device.uuid)?;
    t.host(|| read = Some(session.read(memory, at, bytes)));
    let bytes = read.ok_or("vk-read did not run")??;
    let words: Vec<u32> = bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    t.value(OpValue::Snapshot(Contents::of(&words, &[])));
    Ok(())
}

/// `vk-counter L`: vkGetSemaphoreCounterValue.
pub(super) fn counter(x: Step, semaphore: &str) -> Result<(), String> {
    let mut value = None;
    let Step { ctx, st, t, .. } = x;
    let session = session(st, &ctx.device.uuid)?;
    t.host(|| value = Some(session.counter(semaphore)));
    let value = value.ok_or("vk-counter did not run")??;
    t.value(OpValue::Number(value));
    Ok(())
}
