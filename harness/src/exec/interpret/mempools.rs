//! Memory pools and graph memory: `pool-set`, `pool-get`, `pool-trim`, `graph-mem-trim`, `graph-mem-get`.

use super::Step;
use crate::case::ast::{GraphMemAttr, PoolAttr};
use crate::exec::pools;
use crate::record::observations::OpValue;
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn pool_set(x: Step, pool: &str, attr: PoolAttr, value: u64) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let p = st.pool(pool)?;
    t.call(|| pools::set(p, attr, value));
    Ok(())
}

pub(super) fn pool_get(x: Step, pool: &str, attr: PoolAttr) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let p = st.pool(pool)?;
    let mut value = 0;
    if t.call(|| {
        let (code, v) = pools::get(p, attr);
        value = v;
        code
    }) {
        t.value(OpValue::Number(value));
    }
    Ok(())
}

pub(super) fn pool_trim(x: Step, pool: &str, keep: u64) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let p = st.pool(pool)?;
    let keep = usize::try_from(keep).map_err(|e| e.to_string())?;
    // SAFETY: p is a live pool.
    t.call(|| unsafe { sys::cudaMemPoolTrimTo(p, keep) });
    Ok(())
}

pub(super) fn graph_mem_trim(x: Step) -> Result<(), String> {
    let Step { ctx, t, .. } = x;
    let device = ctx.device.ordinal;
    // SAFETY: no pointers.
    t.call(|| unsafe { sys::cudaDeviceGraphMemTrim(device) });
    Ok(())
}

pub(super) fn graph_mem_get(x: Step, attr: GraphMemAttr) -> Result<(), String> {
    let Step { ctx, t, .. } = x;
    let device = ctx.device.ordinal;
    let mut value = 0;
    if t.call(|| {
        let (code, v) = pools::graph_mem_get(device, attr);
        value = v;
        code
    }) {
        t.value(OpValue::Number(value));
    }
    Ok(())
}
