//! What graphs own: user objects, the references graphs hold to them, and whether their
//! destructors have run.

use super::Step;
use crate::exec::handles::UserObject;
use crate::record::observations::OpValue;
use cuda_sys as sys;
use std::time::{Duration, Instant};

/// `L: user-object`: cudaUserObjectCreate with one reference, owned by the case.
pub(super) fn create(x: Step) -> Result<(), String> {
    let label = x.op.label.clone().ok_or("a user object needs a label")?;
    let mut made = None;
    x.t.call(|| match UserObject::create() {
        Ok(object) => {
            made = Some(object);
            sys::cudaError::cudaSuccess
        }
        Err(code) => code,
    });
    if let Some(object) = made {
        x.st.handles.user_objects.insert(label, object);
    }
    Ok(())
}

/// `retain-user-object GRAPH L [count N] [move]`: cudaGraphRetainUserObject.
pub(super) fn retain(x: Step, graph: &str, object: &str, count: u32, take: bool) -> Result<(), String> {
    let g = x.st.graph(graph)?;
    let o = x.st.handles.user_objects.get(object).ok_or_else(|| format!("{object} made no user object"))?.handle();
    let flags = if take { sys::cudaUserObjectRetainFlags::cudaGraphUserObjectMove.0 } else { 0 };
    // SAFETY: a live graph and user object.
    if x.t.call(|| unsafe { sys::cudaGraphRetainUserObject(g, o, count, flags) }) && take {
        if let Some(entry) = x.st.handles.user_objects.get_mut(object) {
            entry.owned = entry.owned.saturating_sub(count);
        }
    }
    Ok(())
}

/// `release-user-object [GRAPH] L [count N]`: cudaGraphReleaseUserObject, or cudaUserObjectRelease of the case's
/// own references.
pub(super) fn release(x: Step, graph: &Option<String>, object: &str, count: u32) -> Result<(), String> {
    let o = x.st.handles.user_objects.get(object).ok_or_else(|| format!("{object} made no user object"))?.handle();
    match graph {
        Some(graph) => {
            let g = x.st.graph(graph)?;
            // SAFETY: a live graph and user object.
            x.t.call(|| unsafe { sys::cudaGraphReleaseUserObject(g, o, count) });
        }
        None => {
            // SAFETY: a live user object; releasing references the case owns (or observing the refusal).
            if x.t.call(|| unsafe { sys::cudaUserObjectRelease(o, count) }) {
                if let Some(entry) = x.st.handles.user_objects.get_mut(object) {
                    entry.owned = entry.owned.saturating_sub(count);
                }
            }
        }
    }
    Ok(())
}

/// `destroyed L [wait]`: 1 if the destructor has run. With `wait`, polls until it has or the case deadline is
/// near: the deadline is a hang guard (the destructor runs on a CUDA thread, when it likes), never the verdict.
pub(super) fn destroyed(x: Step, object: &str, wait: bool) -> Result<(), String> {
    let entry = x.st.handles.user_objects.get(object).ok_or_else(|| format!("{object} made no user object"))?;
    let flag = entry.destroyed;
    let limit = Instant::now() + x.ctx.opts.case_deadline / 2;
    let mut seen = false;
    x.t.host(|| {
        seen = flag.load(std::sync::atomic::Ordering::SeqCst);
        while wait && !seen && Instant::now() < limit {
            std::thread::sleep(Duration::from_micros(200));
            seen = flag.load(std::sync::atomic::Ordering::SeqCst);
        }
    });
    x.t.value(OpValue::Number(u64::from(seen)));
    Ok(())
}
