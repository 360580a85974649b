//! Graphs through the API: `instantiate`, `update`, `add-node`, `add-deps`/`remove-deps`, `clone`, `destroy-node`,
//! `list`, `set-node`/`exec-set-node`, `enable`/`is-enabled`, `condition-create`, `launch-graph`, `upload`.

use super::host::keep_context;
use super::memory::declared_bytes;
use super::Step;
use crate::case::ast::{InstantiateFlag, InstantiateResult, ListWord, NodeSpec, StreamRef, UpdateResult};
use crate::case::words::Word;
use crate::exec::graph_api;
use crate::exec::host_calls::{host_func_entry, HostCallContext};
use crate::exec::resources::{Graph, GraphExec};
use crate::exec::sys_words::ToSys;
use crate::record::observations::{HostCallKind, OpValue};
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn instantiate(
    x: Step,
    exec: &str,
    graph: &str,
    flags: &[InstantiateFlag],
    upload: &Option<StreamRef>,
    with_params: bool,
) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let g = st.graph(graph)?;
    st.exec_slot(exec)?;
    let mut word: u64 = flags.iter().map(|f| instantiate_flag(*f)).fold(0, |a, b| a | b);
    let upload_stream = match upload {
        Some(u) => {
            word |= u64::from(sys::cudaGraphInstantiateFlags::cudaGraphInstantiateFlagUpload.0);
            st.stream(u)?
        }
        None => std::ptr::null_mut(),
    };
    let mut raw = std::ptr::null_mut();
    if with_params {
        let mut params = sys::cudaGraphInstantiateParams {
            flags: word,
            uploadStream: upload_stream,
            errNode_out: std::ptr::null_mut(),
            result_out: sys::cudaGraphInstantiateResult(u32::MAX),
        };
        // SAFETY: g is a live graph or null; raw and params are valid pointers.
        t.call(|| unsafe { sys::cudaGraphInstantiateWithParams(&mut raw, g, &mut params) });
        let error_node = graph_api::node_label(ctx.case, st, params.errNode_out);
        let result = InstantiateResult::name_of(params.result_out);
        t.value(OpValue::Result { result, error_node, error_from: None });
    } else {
        // SAFETY: g is a live graph or null; raw is a valid out-pointer.
        t.call(|| unsafe { sys::cudaGraphInstantiateWithFlags(&mut raw, g, word) });
    }
    st.set_exec(exec, (!raw.is_null()).then(|| GraphExec::from_raw(raw)));
    Ok(())
}

pub(super) fn update(x: Step, exec: &str, graph: &str) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let (e, g) = (st.exec(exec)?, st.graph(graph)?);
    // SAFETY: an all-zero result info is valid; CUDA fills it.
    let mut info: sys::cudaGraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
    info.result = sys::cudaGraphExecUpdateResult(u32::MAX);
    // SAFETY: live (or null) handles; info is a valid out-pointer.
    t.call(|| unsafe { sys::cudaGraphExecUpdate(e, g, &mut info) });
    let error_node = graph_api::node_label(ctx.case, st, info.errorNode);
    let error_from = graph_api::node_label(ctx.case, st, info.errorFromNode);
    t.value(OpValue::Result { result: UpdateResult::name_of(info.result), error_node, error_from });
    Ok(())
}

pub(super) fn add_node(x: Step, graph: &str, node: &NodeSpec, after: &[String]) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let g = st.graph(graph)?;
    let deps = graph_api::dependencies(ctx.case, st, after)?;
    let (d, n) = (deps.as_ptr(), deps.len());
    let mut raw: sys::cudaGraphNode_t = std::ptr::null_mut();
    // Every call below: g is a live graph (or null), d holds n live nodes, raw is a valid out-pointer, and
    // the parameters point to values that live until the call returns.
    let added = match node {
        NodeSpec::Kernel(kernel) => {
            let params = graph_api::kernel_node(ctx.kernels, ctx.gates, ctx.opts.gate_timeout_ns, st, kernel)?;
            // SAFETY: see above.
            t.call(|| unsafe { sys::cudaGraphAddKernelNode(&mut raw, g, d, n, params.params()) })
        }
        NodeSpec::Memcpy { dst, src, bytes } => {
            let (dp, sp, count, kind) = st.copy_operands(dst, src, *bytes)?;
            // SAFETY: see above; both buffers hold at least count bytes.
            t.call(|| unsafe { sys::cudaGraphAddMemcpyNode1D(&mut raw, g, d, n, dp, sp, count, kind) })
        }
        NodeSpec::Memset { buf, byte, bytes } => {
            let params = graph_api::memset_params(st, buf, *byte, *bytes)?;
            // SAFETY: see above.
            t.call(|| unsafe { sys::cudaGraphAddMemsetNode(&mut raw, g, d, n, &params) })
        }
        NodeSpec::Host => {
            let user_data = keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, None));
            let params = sys::cudaHostNodeParams { fn_: Some(host_func_entry), userData: user_data };
            // SAFETY: see above; the context outlives every launch of the graph.
            t.call(|| unsafe { sys::cudaGraphAddHostNode(&mut raw, g, d, n, &params) })
        }
        NodeSpec::Empty => {
            // SAFETY: see above.
            t.call(|| unsafe { sys::cudaGraphAddEmptyNode(&mut raw, g, d, n) })
        }
        NodeSpec::EventRecord { event } => {
            let e = st.event(event)?;
            // SAFETY: see above; e is a live event.
            t.call(|| unsafe { sys::cudaGraphAddEventRecordNode(&mut raw, g, d, n, e) })
        }
        NodeSpec::WaitEvent { event } => {
            let e = st.event(event)?;
            // SAFETY: see above; e is a live event.
            t.call(|| unsafe { sys::cudaGraphAddEventWaitNode(&mut raw, g, d, n, e) })
        }
        NodeSpec::Child { graph: child } => {
            let c = st.graph(child)?;
            // SAFETY: see above; c is a live graph (cloned into the node).
            t.call(|| unsafe { sys::cudaGraphAddChildGraphNode(&mut raw, g, d, n, c) })
        }
        NodeSpec::MemAlloc { buf } => {
            if !st.creatable(buf) {
                return Err(format!("{buf} exists already"));
            }
            let bytes = declared_bytes(ctx.case, buf)?;
            // SAFETY: an all-zero cudaMemAllocNodeParams is valid before the fields below are set.
            let mut params: sys::cudaMemAllocNodeParams = unsafe { std::mem::zeroed() };
            params.poolProps.allocType = sys::cudaMemAllocationType::cudaMemAllocationTypePinned;
            params.poolProps.location =
                sys::compat::mem_location(sys::cudaMemLocationType::cudaMemLocationTypeDevice, ctx.device.ordinal);
            params.bytesize = usize::try_from(bytes).map_err(|e| e.to_string())?;
            // SAFETY: see above; CUDA writes the reserved address into params.dptr.
            let ok = t.call(|| unsafe { sys::cudaGraphAddMemAllocNode(&mut raw, g, d, n, &mut params) });
            if ok {
                st.set_async_buffer(buf, params.dptr, bytes);
                st.graph_memory.push(buf.clone());
                t.value(OpValue::Address(params.dptr as u64));
            }
            ok
        }
        NodeSpec::MemFree { buf } => {
            let ptr = st.buffer(buf)?.device_raw().ok_or_else(|| format!("{buf} is not device memory"))?;
            // SAFETY: see above; ptr is the buffer's device address.
            t.call(|| unsafe { sys::cudaGraphAddMemFreeNode(&mut raw, g, d, n, ptr) })
        }
        NodeSpec::Conditional { kind, condition, size, bodies } => {
            let handle = st.condition(condition)?;
            let mut out: *mut sys::cudaGraph_t = std::ptr::null_mut();
            let kind = kind.to_sys();
            // SAFETY: see above; on success CUDA points `out` at `size` body graphs owned by the node.
            let ok = t.call(|| unsafe {
                sys::compat::graph_add_conditional_node(&mut raw, g, d, n, handle, kind, *size, &mut out)
            });
            if ok {
                for (i, body) in bodies.iter().enumerate() {
                    // SAFETY: i < bodies.len() <= size (checked by the validator).
                    let b = unsafe { *out.add(i) };
                    st.bodies.insert(body.clone(), b as usize);
                }
            }
            ok
        }
    };
    if added {
        st.nodes.added(index, raw);
    }
    Ok(())
}

pub(super) fn dependency(x: Step, graph: &str, from: &str, to: &str, remove: bool) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let g = st.graph(graph)?;
    let a = graph_api::dependencies(ctx.case, st, &[from.to_owned()])?;
    let b = graph_api::dependencies(ctx.case, st, &[to.to_owned()])?;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    if remove {
        // SAFETY: one live node in each array.
        t.call(|| unsafe { sys::compat::graph_remove_dependencies(g, pa, pb, 1) });
    } else {
        // SAFETY: as above.
        t.call(|| unsafe { sys::compat::graph_add_dependencies(g, pa, pb, 1) });
    }
    Ok(())
}

pub(super) fn clone_graph(x: Step, copy: &str, graph: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let g = st.graph(graph)?;
    st.graph_slot(copy)?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: g is a live graph or null; raw is a valid out-pointer.
    t.call(|| unsafe { sys::cudaGraphClone(&mut raw, g) });
    st.set_graph(copy, (!raw.is_null()).then(|| Graph::from_raw(raw)));
    Ok(())
}

pub(super) fn destroy_node(x: Step, node: &str) -> Result<(), String> {
    let Step { ctx, st, op: _, t, .. } = x;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    // SAFETY: n is a node the script made and has not destroyed.
    if t.call(|| unsafe { sys::cudaGraphDestroyNode(n) }) {
        let op = ctx.case.script.iter().position(|o| o.label.as_deref() == Some(node));
        if let Some(i) = op {
            st.nodes.forget(i);
        }
    }
    Ok(())
}

pub(super) fn list(x: Step, what: ListWord, graph: &str, room: &Option<u32>) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let g = st.graph(graph)?;
    let (code, count, null_padded) = graph_api::list(g, what, *room, |f| t.call(f));
    let _ = code;
    if let Some(count) = count {
        t.value(OpValue::Listed { count, null_padded });
    }
    Ok(())
}

pub(super) fn set_node(x: Step, exec: &Option<String>, node: &str, spec: &NodeSpec) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let e = exec.as_ref().map(|e| st.exec(e)).transpose()?;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    // Every call: live exec (or null) and node; parameters that live until the call returns.
    match (spec, e) {
        (NodeSpec::Kernel(kernel), e) => {
            let params = graph_api::kernel_node(ctx.kernels, ctx.gates, ctx.opts.gate_timeout_ns, st, kernel)?;
            match e {
                // SAFETY: see above.
                Some(e) => t.call(|| unsafe { sys::cudaGraphExecKernelNodeSetParams(e, n, params.params()) }),
                // SAFETY: see above.
                None => t.call(|| unsafe { sys::cudaGraphKernelNodeSetParams(n, params.params()) }),
            };
        }
        (NodeSpec::Memcpy { dst, src, bytes }, e) => {
            let (dp, sp, count, kind) = st.copy_operands(dst, src, *bytes)?;
            match e {
                // SAFETY: see above.
                Some(e) => t.call(|| unsafe { sys::cudaGraphExecMemcpyNodeSetParams1D(e, n, dp, sp, count, kind) }),
                // SAFETY: see above.
                None => t.call(|| unsafe { sys::cudaGraphMemcpyNodeSetParams1D(n, dp, sp, count, kind) }),
            };
        }
        (NodeSpec::Memset { buf, byte, bytes }, e) => {
            let params = graph_api::memset_params(st, buf, *byte, *bytes)?;
            match e {
                // SAFETY: see above.
                Some(e) => t.call(|| unsafe { sys::cudaGraphExecMemsetNodeSetParams(e, n, &params) }),
                // SAFETY: see above.
                None => t.call(|| unsafe { sys::cudaGraphMemsetNodeSetParams(n, &params) }),
            };
        }
        (NodeSpec::Host, e) => {
            let user_data = keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, None));
            let params = sys::cudaHostNodeParams { fn_: Some(host_func_entry), userData: user_data };
            match e {
                // SAFETY: see above.
                Some(e) => t.call(|| unsafe { sys::cudaGraphExecHostNodeSetParams(e, n, &params) }),
                // SAFETY: see above.
                None => t.call(|| unsafe { sys::cudaGraphHostNodeSetParams(n, &params) }),
            };
        }
        (other, _) => {
            return Err(format!(
                "the language sets parameters of kernel, memcpy, memset and host nodes, not {}",
                other.word().word()
            ))
        }
    }
    Ok(())
}

pub(super) fn set_enabled(x: Step, exec: &str, node: &str, enabled: bool) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let e = st.exec(exec)?;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    // SAFETY: live exec (or null) and node.
    t.call(|| unsafe { sys::cudaGraphNodeSetEnabled(e, n, u32::from(enabled)) });
    Ok(())
}

pub(super) fn get_enabled(x: Step, exec: &str, node: &str) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let e = st.exec(exec)?;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    let mut enabled = 0u32;
    // SAFETY: live exec (or null) and node; enabled is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaGraphNodeGetEnabled(e, n, &mut enabled) }) {
        t.value(OpValue::Number(u64::from(enabled)));
    }
    Ok(())
}

pub(super) fn condition_create(x: Step, condition: &str, graph: &str, default: &Option<u32>) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let g = st.graph(graph)?;
    let (value, flags) = match default {
        Some(v) => (*v, sys::compat::COND_ASSIGN_DEFAULT),
        None => (0, 0),
    };
    let mut handle: sys::compat::cudaGraphConditionalHandle = 0;
    // SAFETY: g is a live graph or null; handle is a valid out-pointer.
    if t.call(|| unsafe { sys::compat::graph_conditional_handle_create(&mut handle, g, value, flags) }) {
        st.conditions.insert(condition.to_owned(), handle);
    }
    Ok(())
}

pub(super) fn launch_graph(x: Step, exec: &str, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (e, s) = (st.exec(exec)?, st.stream(stream)?);
    // SAFETY: e is a live executable graph or null; s a live stream.
    t.call(|| unsafe { sys::cudaGraphLaunch(e, s) });
    Ok(())
}

pub(super) fn upload(x: Step, exec: &str, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (e, s) = (st.exec(exec)?, st.stream(stream)?);
    // SAFETY: as for cudaGraphLaunch.
    t.call(|| unsafe { sys::cudaGraphUpload(e, s) });
    Ok(())
}

fn instantiate_flag(flag: InstantiateFlag) -> u64 {
    use sys::cudaGraphInstantiateFlags as F;
    u64::from(
        match flag {
            InstantiateFlag::AutoFreeOnLaunch => F::cudaGraphInstantiateFlagAutoFreeOnLaunch,
            InstantiateFlag::DeviceLaunch => F::cudaGraphInstantiateFlagDeviceLaunch,
            InstantiateFlag::UseNodePriority => F::cudaGraphInstantiateFlagUseNodePriority,
        }
        .0,
    )
}
