//! Kernel launches: `launch KERNEL ... on STREAM`, one probe kernel with its arguments and launch shape.

use super::{Ctx, Step, Timed, SUCCESS};
use crate::case::ast::{ComputeShape, Fault, Grid, KernelCall, StreamRef};
use crate::record::observations::OpValue;
use cuda_sys as sys;
use std::ffi::c_void;

/// `launch KERNEL ... on STREAM`: one probe kernel, its arguments resolved before the clock starts.
pub(super) fn launch(x: Step, kernel: &KernelCall, stream: &StreamRef) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let k = ctx.kernels;
    let stamp = ctx.stamps.slot(index);
    let s = st.stream(stream)?;
    // Every `unsafe` below is one kernel launch whose pointers were just resolved from live objects of this case
    // (buffers, gates, stamp slots), all kept alive until after the final synchronize.
    match kernel {
        KernelCall::Gate { gate } => {
            let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
            let (flag, timed_out) = ctx.gates.kernel_args(g).ok_or_else(|| format!("gate {gate} was not created"))?;
            let timeout = ctx.opts.gate_timeout_ns;
            // SAFETY: see above; the gate kernel reads `flag` and may write `timed_out` and `stamp`.
            t.call(|| unsafe { k.launch_gate(flag, timeout, timed_out, stamp, s) });
            Ok(())
        }
        KernelCall::Spin { ns, shape } => {
            let blocks = match shape.grid {
                Grid::Blocks(n) => n,
                Grid::Full => {
                    let per_sm = resident_blocks_per_sm(k.spin, shape.block, shape.shared_bytes);
                    let blocks = per_sm.saturating_mul(ctx.device.multiprocessors.max(1));
                    t.value(OpValue::GridBlocks(blocks));
                    blocks
                }
            };
            let func = if shape.trigger { k.spin_trigger } else { k.spin };
            let programmatic = shape.programmatic;
            let shape = (blocks, shape.block, usize::try_from(shape.shared_bytes).map_err(|e| e.to_string())?);
            if programmatic {
                let (mut n, mut p) = (*ns, stamp);
                // SAFETY: see above; the arguments match cc_spin's (u64, u64*).
                t.call(|| unsafe {
                    crate::device::kernels::launch_programmatic(
                        func,
                        shape,
                        &mut [crate::device::kernels::arg(&mut n), crate::device::kernels::arg(&mut p)],
                        s,
                    )
                });
            } else {
                // SAFETY: see above.
                t.call(|| unsafe { k.launch_spin_shaped(func, *ns, stamp, shape, s) });
            }
            Ok(())
        }
        KernelCall::LazySpin { ns } => {
            // SAFETY: see above.
            t.call(|| unsafe { k.launch_spin_shaped(k.lazy_spin, *ns, stamp, (1, 1, 0), s) });
            Ok(())
        }
        KernelCall::Fault { fault } => {
            let mode = match fault {
                Fault::IllegalAddress => 0,
                Fault::Trap => 1,
            };
            // SAFETY: see above; the kernel faults on purpose, which only poisons this process's context.
            t.call(|| unsafe { k.launch_fault(mode, stamp, s) });
            Ok(())
        }
        KernelCall::Fill { buf, value } => {
            let (ptr, n) = st.kernel_buffer(buf)?;
            // SAFETY: see above; ptr holds n words.
            t.call(|| unsafe { k.launch_fill(ptr, n, *value, stamp, s) });
            Ok(())
        }
        KernelCall::Transform { buf, mul, add } => {
            let (ptr, n) = st.kernel_buffer(buf)?;
            // SAFETY: see above; ptr holds n words.
            t.call(|| unsafe { k.launch_transform(ptr, n, *mul, *add, stamp, s) });
            Ok(())
        }
        KernelCall::Compare { a, b, into } => {
            let (pa, na) = st.kernel_buffer(a)?;
            let (pb, nb) = st.kernel_buffer(b)?;
            let (pr, _) = st.kernel_buffer(into)?;
            // SAFETY: see above; both inputs hold at least min(na, nb) words, the result at least one.
            t.call(|| unsafe { k.launch_compare(pa, pb, na.min(nb), pr, stamp, s) });
            Ok(())
        }
        KernelCall::VecAdd { a, b, into, shape } => {
            let (pa, na) = st.kernel_buffer(a)?;
            let (pb, nb) = st.kernel_buffer(b)?;
            let (pc, nc) = st.kernel_buffer(into)?;
            let n = nc.min(na).min(nb);
            let (grid, block) = compute_shape(ctx, t, k.vecadd, shape, Some(n));
            let buffers = (pa.cast_const().cast::<f32>(), pb.cast_const().cast::<f32>(), pc.cast::<f32>());
            // SAFETY: see above; each buffer holds at least n words (floats).
            t.call(|| unsafe { k.launch_vecadd(buffers, n, (grid, block), stamp, s) });
            Ok(())
        }
        KernelCall::SinCos { buf, iterations, shape } => {
            let (ptr, n) = st.kernel_buffer(buf)?;
            let (grid, block) = compute_shape(ctx, t, k.sincos, shape, Some(n));
            // SAFETY: see above; ptr holds n words (floats).
            t.call(|| unsafe { k.launch_sincos(ptr.cast(), n, *iterations, (grid, block), stamp, s) });
            Ok(())
        }
        KernelCall::Sleep { cycles, shape } => {
            let cycles = i64::try_from(*cycles).map_err(|_| format!("{cycles} cycles do not fit a long long"))?;
            let (grid, block) = compute_shape(ctx, t, k.sleep, shape, None);
            // SAFETY: see above; the kernel touches only its stamp slot.
            t.call(|| unsafe { k.launch_sleep(cycles, (grid, block), stamp, s) });
            Ok(())
        }
        KernelCall::DeviceLaunch { exec, mode, times, into } => {
            let e = st.exec(exec)?;
            let (codes, n) = st.kernel_buffer(into)?;
            if let Some(why) = kernel.short_codes_buffer(u64::from(n)) {
                return Err(why);
            }
            // SAFETY: see above; codes holds `times` words. The device call may refuse the handle; it never
            // dereferences it on the host.
            t.call(|| unsafe { k.launch_device_launch((e, mode.stream_value(), *times), codes, stamp, s) });
            Ok(())
        }
        KernelCall::RelaunchSelf { counter, runs, times, into } => {
            let (count, _) = st.kernel_buffer(counter)?;
            let (codes, n) = st.kernel_buffer(into)?;
            if let Some(why) = kernel.short_codes_buffer(u64::from(n)) {
                return Err(why);
            }
            // SAFETY: see above; counter holds a word, codes the codes of every relaunch.
            t.call(|| unsafe { k.launch_relaunch_self((count, *runs, *times), codes, stamp, s) });
            Ok(())
        }
        KernelCall::CurrentGraph { into } => {
            let (out, _) = st.kernel_buffer(into)?;
            // SAFETY: see above; out holds at least a word.
            t.call(|| unsafe { k.launch_current_graph(out, stamp, s) });
            Ok(())
        }
    }
}

/// The threads per block of a compute kernel when the case gives none: every seed launches 256.
const COMPUTE_BLOCK: u32 = 256;

/// The grid and block of a compute kernel: as written, else the block of [`COMPUTE_BLOCK`] threads and a grid of
/// one thread per element (`elements`; one block for a kernel without elements), as the seeds compute it. A
/// `grid full` is recorded as the number of blocks it was.
fn compute_shape(
    ctx: &Ctx,
    t: &mut Timed,
    func: *const c_void,
    shape: &ComputeShape,
    elements: Option<u32>,
) -> (u32, u32) {
    let block = shape.block.unwrap_or(COMPUTE_BLOCK);
    let grid = match shape.grid {
        Some(Grid::Blocks(n)) => n,
        Some(Grid::Full) => {
            let blocks = resident_blocks_per_sm(func, block, 0).saturating_mul(ctx.device.multiprocessors.max(1));
            t.value(OpValue::GridBlocks(blocks));
            blocks
        }
        None => elements.map_or(1, |n| n.div_ceil(block.max(1)).max(1)),
    };
    (grid, block)
}

/// For `grid full`: how many blocks of `block` threads and `shared` bytes one SM keeps resident
/// (cudaOccupancyMaxActiveBlocksPerMultiprocessor, at least 1), to be multiplied by the SM count.
fn resident_blocks_per_sm(func: *const c_void, block: u32, shared: u64) -> u32 {
    let mut per_sm = 0;
    let block = i32::try_from(block).unwrap_or(i32::MAX);
    let shared = usize::try_from(shared).unwrap_or(usize::MAX);
    // SAFETY: per_sm is a valid out-pointer; func is a kernel handle.
    let code = unsafe { sys::cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, func, block, shared) };
    if code == SUCCESS {
        u32::try_from(per_sm).unwrap_or(1).max(1)
    } else {
        // A shape the device cannot run: one block per SM, and the launch itself reports the error.
        // SAFETY: no arguments; the failed query must not leave a last error the script would see.
        let _ = unsafe { sys::cudaGetLastError() };
        1
    }
}
