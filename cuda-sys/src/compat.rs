//! One Rust signature for the runtime calls whose C signature differs between CUDA 12.0 and 13.x, so that
//! dependents build against any supported toolkit without version `cfg`s of their own.
//!
//! | here | CUDA 13.x | 12.3 – 12.9 | 12.0 – 12.2 |
//! |---|---|---|---|
//! | [`stream_get_capture_info`] | `cudaStreamGetCaptureInfo` (7 args) | `cudaStreamGetCaptureInfo_v3`, or `_v2` on a driver below 12.3 | `cudaStreamGetCaptureInfo_v2` (no edge data) |
//! | [`graph_get_edges`] | `cudaGraphGetEdges` (5 args) | `cudaGraphGetEdges_v2`, or the 4-argument call on a driver below 12.3 | `cudaGraphGetEdges` (4 args) |
//! | [`get_device_properties`] | `cudaGetDeviceProperties` | `cudaGetDeviceProperties_v2` | `cudaGetDeviceProperties_v2` |
//! | [`cudaGraphEdgeData`] | the header's | the header's | a stand-in with the same layout |
//! | [`cudaGraphNodeTypeConditional`] | the header's | the header's | the value 13, which 12.0 – 12.2 never return |
//! | [`graph_add_dependencies`], [`graph_remove_dependencies`] | 5 args (edge data) | `_v2`, or 4 args on a driver below 12.3 | 4 args |
//! | [`stream_update_capture_dependencies`] | 5 args (edge data) | `_v2`, or 4 args on a driver below 12.3 | 4 args |
//! | [`stream_begin_capture_to_graph`] | the header's | the header's (12.3+) | `cudaErrorNotSupported` |
//! | [`graph_add_conditional_node`] | `cudaGraphAddNode` (6 args) | `cudaGraphAddNode` (5 args), `_v2` with edge data | `cudaErrorNotSupported` |
//! | [`graph_conditional_handle_create`] | the header's | the header's (12.3+) | `cudaErrorNotSupported` |
//! | [`cudaGraphInstantiateConditionalHandleUnused`] | the header's | the header's (12.4+) | the value 5 |
//! | [`mem_location`] | 13.5: `id` in an anonymous union; 13.0: a plain field | a plain field | a plain field |
//! | [`memcpy_batch_async`], [`memcpy_3d_batch_async`] | no `failIdx` (8 / 4 args) | 12.8 – 12.9: `failIdx` before the stream (9 / 5 args) | `cudaErrorNotSupported` |
//! | [`stream_get_device`] | the header's | the header's (12.8+) | `cudaErrorNotSupported` |
//! | [`mem_prefetch_async`] | `cudaMemPrefetchAsync` (location, flags) | `cudaMemPrefetchAsync_v2` (12.3+ builds) | `cudaMemPrefetchAsync` (`int` device) |
//! | [`mem_advise`] | `cudaMemAdvise` (location) | `cudaMemAdvise_v2` (12.3+ builds) | `cudaMemAdvise` (`int` device) |
//!
//! Where the linked runtime lacks a call altogether, the wrapper returns `cudaErrorNotSupported` without calling
//! anything: the suite reports that as *not-supported* with the reason, as it does for an old driver.
//!
//! Why the 12.x names differ: the 12.x headers `#define` the plain names to `_v2`/`_v3`, so bindgen sees only
//! those; libcudart 12 still exports the plain names, with older ABIs. Binding a plain name on 12.x would call
//! the old entry point with the new arguments. The full picture, per function and version, is in
//! `cuda-sys/API-VERSIONS.md` (generated from the headers by `scripts/api-versions.py`).
//!
//! **The driver decides too.** A 12.x runtime runs on any driver from R525 (CUDA 12.0) on, but the 12.3 forms
//! need a 12.3 driver (older ones may answer `cudaErrorCallRequiresNewerDriver`). The forms are chosen by
//! [`driver_version`]: the version set with [`assume_driver_version`] (the harness sets the one it runs on, or a
//! lower one to exercise these fallbacks), else what `cudaDriverGetVersion` says. Below 12.3 no edge carries data,
//! so the older forms lose nothing: the edge-data outputs are filled with the default (all zero) edge.

use crate::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// `cudaGraphEdgeData` (CUDA 12.3+). Before 12.3 the headers have no such type; this stand-in has its layout
/// (8 bytes: from_port, to_port, type, reserved[5]), and all zero is the default edge, as in 12.3+.
#[cfg(cudart_ge_12_3)]
pub use crate::cudaGraphEdgeData;
#[cfg(not(cudart_ge_12_3))]
#[repr(C)]
#[derive(Debug, Default, Copy, Clone, PartialEq, Eq)]
pub struct cudaGraphEdgeData {
    pub from_port: u8,
    pub to_port: u8,
    pub type_: u8,
    pub reserved: [u8; 5],
}

/// `cudaGraphNodeTypeConditional` (CUDA 12.3+): a node type older headers do not name.
#[cfg(cudart_ge_12_3)]
pub const cudaGraphNodeTypeConditional: cudaGraphNodeType = cudaGraphNodeType::cudaGraphNodeTypeConditional;
#[cfg(not(cudart_ge_12_3))]
pub const cudaGraphNodeTypeConditional: cudaGraphNodeType = cudaGraphNodeType(13);

/// `cudaGraphInstantiateConditionalHandleUnused`: not in 12.3's `driver_types.h` (the build against it failed,
/// issue 21), in 12.9's; 12.4 is the first release after 12.3.
#[cfg(cudart_ge_12_4)]
pub const cudaGraphInstantiateConditionalHandleUnused: cudaGraphInstantiateResult =
    cudaGraphInstantiateResult::cudaGraphInstantiateConditionalHandleUnused;
#[cfg(not(cudart_ge_12_4))]
pub const cudaGraphInstantiateConditionalHandleUnused: cudaGraphInstantiateResult = cudaGraphInstantiateResult(5);

/// `cudaMemLocationTypeHost`: not in 12.0's `driver_types.h` (only Invalid and Device; the host forms came with
/// the NUMA-aware memory locations in 12.2), in 12.3's; the value is 2 in every header that has it, and a driver
/// older than those headers refuses it as an invalid location.
#[cfg(cudart_ge_12_3)]
pub const cudaMemLocationTypeHost: cudaMemLocationType = cudaMemLocationType::cudaMemLocationTypeHost;
#[cfg(not(cudart_ge_12_3))]
pub const cudaMemLocationTypeHost: cudaMemLocationType = cudaMemLocationType(2);

/// A `cudaMemLocation` of `type_` and `id`. 13.5's header moved `id` into an anonymous union beside
/// `localized` (device locality domains); the layout is the same, only the Rust spelling differs
/// (`cuda_sys_mem_location_union`, set by the build script from the bindings).
pub fn mem_location(type_: cudaMemLocationType, id: i32) -> cudaMemLocation {
    #[cfg(cuda_sys_mem_location_union)]
    {
        cudaMemLocation { type_, __bindgen_anon_1: cudaMemLocation__bindgen_ty_1 { id } }
    }
    #[cfg(not(cuda_sys_mem_location_union))]
    {
        cudaMemLocation { type_, id }
    }
}

/// `cudaGraphConditionalHandle` (CUDA 12.3+): an unsigned long long.
pub type cudaGraphConditionalHandle = u64;

/// `cudaGraphConditionalNodeType` values (CUDA 12.3+: if; 12.4: while; 12.8: switch).
pub const COND_TYPE_IF: u32 = 0;
pub const COND_TYPE_WHILE: u32 = 1;
pub const COND_TYPE_SWITCH: u32 = 2;
/// `cudaGraphCondAssignDefault`.
pub const COND_ASSIGN_DEFAULT: u32 = 1;

/// The driver version the call forms are chosen for (`cudaDriverGetVersion` form, e.g. 12020); 0 until known.
static DRIVER_VERSION: AtomicU32 = AtomicU32::new(0);

/// The first driver version with graph edge data and the `_v3`/`_v2` call forms that carry it.
pub const EDGE_DATA_DRIVER: u32 = 12030;

/// Chooses the call forms for a driver of version `version` (e.g. 12020 for CUDA 12.2). Set it to the driver's
/// own version, or lower to exercise the fallbacks on a newer driver; never higher (a form the driver lacks fails).
pub fn assume_driver_version(version: u32) {
    DRIVER_VERSION.store(version, Ordering::Relaxed);
}

/// The driver version the call forms are chosen for: the one [`assume_driver_version`] set, else
/// `cudaDriverGetVersion` (asked once), else, when that fails, [`crate::BUILD_CUDART_VERSION`] (the calls will
/// then fail on their own).
pub fn driver_version() -> u32 {
    let known = DRIVER_VERSION.load(Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    let code = unsafe { cudaDriverGetVersion(&mut version) };
    let version =
        if code == cudaError::cudaSuccess && version > 0 { version as u32 } else { crate::BUILD_CUDART_VERSION };
    // A concurrent assume_driver_version wins over this guess.
    let _ = DRIVER_VERSION.compare_exchange(0, version, Ordering::Relaxed, Ordering::Relaxed);
    DRIVER_VERSION.load(Ordering::Relaxed)
}

/// Whether the calls below carry graph edge data: a 12.3+ runtime on a 12.3+ driver. (A 13.x runtime needs a
/// 13.0 driver, so it always does.)
pub fn edge_data_forms() -> bool {
    cfg!(cudart_ge_13_0) || (cfg!(cudart_ge_12_3) && driver_version() >= EDGE_DATA_DRIVER)
}

/// The C functions [`stream_get_capture_info`] and [`graph_get_edges`] call in this build on this driver, for
/// reports.
pub fn call_forms() -> &'static str {
    if cfg!(cudart_ge_13_0) {
        "cudaStreamGetCaptureInfo, cudaGraphGetEdges (13.x, with edge data)"
    } else if edge_data_forms() {
        "cudaStreamGetCaptureInfo_v3, cudaGraphGetEdges_v2 (12.3+, with edge data)"
    } else {
        "cudaStreamGetCaptureInfo_v2, 4-argument cudaGraphGetEdges (before 12.3, no edge data)"
    }
}

/// `cudaStreamGetCaptureInfo` in its 13.x form: status, capture id, graph, current dependencies and their edge
/// data. Every output may be null. With the pre-12.3 forms, `*edge_data_out` is set to null, which means "every
/// edge is the default edge" (as in 12.3+ when no edge carries data).
///
/// # Safety
/// As for the C function: each non-null pointer must be valid for writes; the returned arrays belong to the
/// capture and stay valid only until the next capture call on `stream`.
pub unsafe fn stream_get_capture_info(
    stream: cudaStream_t,
    status_out: *mut cudaStreamCaptureStatus,
    id_out: *mut u64,
    graph_out: *mut cudaGraph_t,
    dependencies_out: *mut *const cudaGraphNode_t,
    edge_data_out: *mut *const cudaGraphEdgeData,
    count_out: *mut usize,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaStreamGetCaptureInfo(stream, status_out, id_out, graph_out, dependencies_out, edge_data_out, count_out)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        #[cfg(cudart_ge_12_3)]
        if edge_data_forms() {
            return cudaStreamGetCaptureInfo_v3(
                stream,
                status_out,
                id_out,
                graph_out,
                dependencies_out,
                edge_data_out,
                count_out,
            );
        }
        if !edge_data_out.is_null() {
            *edge_data_out = std::ptr::null();
        }
        cudaStreamGetCaptureInfo_v2(stream, status_out, id_out, graph_out, dependencies_out, count_out)
    }
}

/// `cudaGraphGetEdges` in its 13.x form: with `from`, `to` and `edge_data` null, `*count` receives the number of
/// edges; otherwise up to `*count` edges are written (and `*count` is set to the number written). `edge_data`
/// may be null. With the pre-12.3 forms, the edges written get the default (all zero) edge data.
///
/// # Safety
/// As for the C function: non-null arrays must have room for `*count` entries; `count` must be valid.
pub unsafe fn graph_get_edges(
    graph: cudaGraph_t,
    from: *mut cudaGraphNode_t,
    to: *mut cudaGraphNode_t,
    edge_data: *mut cudaGraphEdgeData,
    count: *mut usize,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaGraphGetEdges(graph, from, to, edge_data, count)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        #[cfg(cudart_ge_12_3)]
        if edge_data_forms() {
            return cudaGraphGetEdges_v2(graph, from, to, edge_data, count);
        }
        let room = *count;
        let code = cudaGraphGetEdges(graph, from, to, count);
        if code == cudaError::cudaSuccess && !edge_data.is_null() && !from.is_null() {
            for i in 0..room.min(*count) {
                edge_data.add(i).write(cudaGraphEdgeData::default());
            }
        }
        code
    }
}

/// `cudaGraphAddDependencies` without edge data (every edge the default edge).
///
/// # Safety
/// `from` and `to` must hold `count` live nodes of `graph`.
pub unsafe fn graph_add_dependencies(
    graph: cudaGraph_t,
    from: *const cudaGraphNode_t,
    to: *const cudaGraphNode_t,
    count: usize,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaGraphAddDependencies(graph, from, to, std::ptr::null(), count)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        cudaGraphAddDependencies(graph, from, to, count)
    }
}

/// `cudaGraphRemoveDependencies` without edge data.
///
/// # Safety
/// As for [`graph_add_dependencies`].
pub unsafe fn graph_remove_dependencies(
    graph: cudaGraph_t,
    from: *const cudaGraphNode_t,
    to: *const cudaGraphNode_t,
    count: usize,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaGraphRemoveDependencies(graph, from, to, std::ptr::null(), count)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        cudaGraphRemoveDependencies(graph, from, to, count)
    }
}

/// `cudaStreamUpdateCaptureDependencies` without edge data; `flags` is cudaStreamAddCaptureDependencies (0) or
/// cudaStreamSetCaptureDependencies (1).
///
/// # Safety
/// `dependencies` must hold `count` live nodes of the capture graph (or be null with `count` 0).
pub unsafe fn stream_update_capture_dependencies(
    stream: cudaStream_t,
    dependencies: *mut cudaGraphNode_t,
    count: usize,
    flags: u32,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaStreamUpdateCaptureDependencies(stream, dependencies, std::ptr::null(), count, flags)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        cudaStreamUpdateCaptureDependencies(stream, dependencies, count, flags)
    }
}

/// `cudaStreamBeginCaptureToGraph` (CUDA 12.3+) without edge data.
///
/// # Safety
/// `dependencies` must hold `count` live nodes of `graph` (or be null with `count` 0).
pub unsafe fn stream_begin_capture_to_graph(
    stream: cudaStream_t,
    graph: cudaGraph_t,
    dependencies: *const cudaGraphNode_t,
    count: usize,
    mode: cudaStreamCaptureMode,
) -> cudaError_t {
    #[cfg(cudart_ge_12_3)]
    {
        cudaStreamBeginCaptureToGraph(stream, graph, dependencies, std::ptr::null(), count, mode)
    }
    #[cfg(not(cudart_ge_12_3))]
    {
        let _ = (stream, graph, dependencies, count, mode);
        cudaError::cudaErrorNotSupported
    }
}

/// `cudaGraphConditionalHandleCreate` (CUDA 12.3+).
///
/// # Safety
/// `handle_out` must be valid for writes.
pub unsafe fn graph_conditional_handle_create(
    handle_out: *mut cudaGraphConditionalHandle,
    graph: cudaGraph_t,
    default_value: u32,
    flags: u32,
) -> cudaError_t {
    #[cfg(cudart_ge_12_3)]
    {
        cudaGraphConditionalHandleCreate(handle_out, graph, default_value, flags)
    }
    #[cfg(not(cudart_ge_12_3))]
    {
        let _ = (handle_out, graph, default_value, flags);
        cudaError::cudaErrorNotSupported
    }
}

/// A conditional node (`cudaGraphAddNode` with `cudaConditionalNodeParams`, CUDA 12.3+): `kind` is one of the
/// `COND_TYPE_*` values; on success `*bodies_out` points to `size` body graphs owned by the node.
///
/// # Safety
/// `node_out` and `bodies_out` must be valid for writes; `dependencies` must hold `count` live nodes of `graph`.
pub unsafe fn graph_add_conditional_node(
    node_out: *mut cudaGraphNode_t,
    graph: cudaGraph_t,
    dependencies: *const cudaGraphNode_t,
    count: usize,
    handle: cudaGraphConditionalHandle,
    kind: u32,
    size: u32,
    bodies_out: *mut *mut cudaGraph_t,
) -> cudaError_t {
    #[cfg(cudart_ge_12_3)]
    {
        // SAFETY: an all-zero cudaGraphNodeParams is valid before the fields below are set.
        let mut params: cudaGraphNodeParams = std::mem::zeroed();
        params.type_ = cudaGraphNodeTypeConditional;
        // Field by field, not a struct literal: later 13.x headers append fields (13.5 has `ctx`, an execution
        // context, where NULL keeps the graph's own), which stay zero here on every version.
        let conditional = &mut params.__bindgen_anon_1.conditional;
        conditional.handle = handle;
        conditional.type_ = cudaGraphConditionalNodeType(kind);
        conditional.size = size;
        conditional.phGraph_out = std::ptr::null_mut();
        #[cfg(cudart_ge_13_0)]
        let code = cudaGraphAddNode(node_out, graph, dependencies, std::ptr::null(), count, &mut params);
        #[cfg(not(cudart_ge_13_0))]
        let code = cudaGraphAddNode(node_out, graph, dependencies, count, &mut params);
        if code == cudaError::cudaSuccess {
            *bodies_out = params.__bindgen_anon_1.conditional.phGraph_out;
        }
        code
    }
    #[cfg(not(cudart_ge_12_3))]
    {
        let _ = (node_out, graph, dependencies, count, handle, kind, size, bodies_out);
        cudaError::cudaErrorNotSupported
    }
}

/// `cudaGetDeviceProperties` with the `cudaDeviceProp` of the headers the bindings came from.
///
/// # Safety
/// `prop` must be valid for writes.
pub unsafe fn get_device_properties(prop: *mut cudaDeviceProp, device: i32) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaGetDeviceProperties(prop, device)
    }
    #[cfg(not(cudart_ge_13_0))]
    {
        cudaGetDeviceProperties_v2(prop, device)
    }
}

// Batched copies (12.8+, `failIdx` removed in 13.0) and the stream's device (12.8+).

/// `cudaMemcpySrcAccessOrder` values (CUDA 12.8+; older headers have no such type), for the batched copies.
pub const SRC_ACCESS_ORDER_INVALID: u32 = 0;
pub const SRC_ACCESS_ORDER_STREAM: u32 = 1;
pub const SRC_ACCESS_ORDER_DURING_API_CALL: u32 = 2;
pub const SRC_ACCESS_ORDER_ANY: u32 = 3;

/// `cudaMemcpyBatchAsync` (CUDA 12.8+) with one `cudaMemcpyAttributes` per entry of `src_access_orders` (that
/// order, no location hints, no flags) and `attrs_idxs` as given: both `num_attrs` long. 12.8 – 12.9 take a
/// `failIdx` out-parameter before the stream, which 13.0 removed (the 9 → 8 argument change that broke callers who
/// bound one form and ran the other, sglang#21869): here `fail_idx` is filled on 12.x and set to `usize::MAX`
/// ("the error doesn't pertain to any specific copy", the 12.x value for that) on 13.x, which reports none.
///
/// # Safety
/// `dsts`, `srcs` and `sizes` must hold `count` entries (the pointers valid for their sizes); `src_access_orders`
/// and `attrs_idxs` `num_attrs`; `fail_idx` valid for writes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memcpy_batch_async(
    dsts: *const *mut std::ffi::c_void,
    srcs: *const *const std::ffi::c_void,
    sizes: *const usize,
    count: usize,
    src_access_orders: *const u32,
    attrs_idxs: *const usize,
    num_attrs: usize,
    fail_idx: *mut usize,
    stream: cudaStream_t,
) -> cudaError_t {
    #[cfg(cudart_ge_12_8)]
    {
        let mut attrs: Vec<cudaMemcpyAttributes> = (0..num_attrs)
            .map(|i| {
                // SAFETY: all zero is a valid cudaMemcpyAttributes (no hints, no flags) before the order is set.
                let mut a: cudaMemcpyAttributes = std::mem::zeroed();
                a.srcAccessOrder = cudaMemcpySrcAccessOrder(*src_access_orders.add(i));
                a
            })
            .collect();
        let mut idxs: Vec<usize> = (0..num_attrs).map(|i| *attrs_idxs.add(i)).collect();
        #[cfg(cudart_ge_13_0)]
        {
            *fail_idx = usize::MAX;
            cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs.as_mut_ptr(), idxs.as_mut_ptr(), num_attrs, stream)
        }
        #[cfg(not(cudart_ge_13_0))]
        {
            cudaMemcpyBatchAsync(
                dsts.cast_mut(),
                srcs.cast_mut().cast(),
                sizes.cast_mut(),
                count,
                attrs.as_mut_ptr(),
                idxs.as_mut_ptr(),
                num_attrs,
                fail_idx,
                stream,
            )
        }
    }
    #[cfg(not(cudart_ge_12_8))]
    {
        let _ = (dsts, srcs, sizes, count, src_access_orders, attrs_idxs, num_attrs, fail_idx, stream);
        cudaError::cudaErrorNotSupported
    }
}

/// `cudaMemcpy3DBatchAsync` (CUDA 12.8+) of `count` pointer-to-pointer copies, each `sizes[i]` bytes wide, one row
/// and one layer deep (the element size of pointer copies is 1), all with `src_access_order`, flags 0. 12.8 – 12.9
/// take `failIdx` before the flags; 13.0 removed it (see [`memcpy_batch_async`] for what `fail_idx` holds).
///
/// # Safety
/// `dsts`, `srcs` and `sizes` must hold `count` entries (the pointers valid for their sizes); `fail_idx` valid for
/// writes.
pub unsafe fn memcpy_3d_batch_async(
    dsts: *const *mut std::ffi::c_void,
    srcs: *const *const std::ffi::c_void,
    sizes: *const usize,
    count: usize,
    src_access_order: u32,
    fail_idx: *mut usize,
    stream: cudaStream_t,
) -> cudaError_t {
    #[cfg(cudart_ge_12_8)]
    {
        let operand = |ptr: *mut std::ffi::c_void| {
            // SAFETY: all zero is a valid operand (row length and layer height 0: tightly packed, no hint).
            let mut o: cudaMemcpy3DOperand = std::mem::zeroed();
            o.type_ = cudaMemcpy3DOperandType::cudaMemcpyOperandTypePointer;
            o.op.ptr.ptr = ptr;
            o
        };
        let mut ops: Vec<cudaMemcpy3DBatchOp> = (0..count)
            .map(|i| {
                // SAFETY: all zero is a valid batch op before its fields are set (later headers may add fields).
                let mut op: cudaMemcpy3DBatchOp = std::mem::zeroed();
                op.src = operand((*srcs.add(i)).cast_mut());
                op.dst = operand(*dsts.add(i));
                op.extent = cudaExtent { width: *sizes.add(i), height: 1, depth: 1 };
                op.srcAccessOrder = cudaMemcpySrcAccessOrder(src_access_order);
                op
            })
            .collect();
        #[cfg(cudart_ge_13_0)]
        {
            *fail_idx = usize::MAX;
            cudaMemcpy3DBatchAsync(count, ops.as_mut_ptr(), 0, stream)
        }
        #[cfg(not(cudart_ge_13_0))]
        {
            cudaMemcpy3DBatchAsync(count, ops.as_mut_ptr(), fail_idx, 0, stream)
        }
    }
    #[cfg(not(cudart_ge_12_8))]
    {
        let _ = (dsts, srcs, sizes, count, src_access_order, fail_idx, stream);
        cudaError::cudaErrorNotSupported
    }
}

/// `cudaStreamGetDevice` (CUDA 12.8+).
///
/// # Safety
/// `device` must be valid for writes.
pub unsafe fn stream_get_device(stream: cudaStream_t, device: *mut i32) -> cudaError_t {
    #[cfg(cudart_ge_12_8)]
    {
        cudaStreamGetDevice(stream, device)
    }
    #[cfg(not(cudart_ge_12_8))]
    {
        let _ = (stream, device);
        cudaError::cudaErrorNotSupported
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edge_data_stand_in_has_the_c_layout() {
        // The layout test checks the header's type where there is one; the stand-in must match it byte for byte.
        assert_eq!(std::mem::size_of::<cudaGraphEdgeData>(), 8);
        assert_eq!(std::mem::align_of::<cudaGraphEdgeData>(), 1);
        assert_eq!(std::mem::offset_of!(cudaGraphEdgeData, type_), 2);
        assert_eq!(std::mem::offset_of!(cudaGraphEdgeData, reserved), 3);
    }

    #[test]
    fn the_forms_follow_the_assumed_driver() {
        // One test owns the process-wide setting (tests in one binary share it).
        assume_driver_version(12020);
        assert_eq!(driver_version(), 12020);
        assert_eq!(edge_data_forms(), cfg!(cudart_ge_13_0));
        assume_driver_version(13000);
        assert_eq!(edge_data_forms(), cfg!(cudart_ge_12_3));
        assert!(call_forms().contains(if cfg!(cudart_ge_12_3) { "with edge data" } else { "no edge data" }));
    }
}

// Managed memory. 13.0 replaced the `int device` of cudaMemPrefetchAsync and cudaMemAdvise by a
// `cudaMemLocation` (prefetch also gained `flags`); 12.2 – 12.9 have that form as `_v2`; 12.0 – 12.1 only the
// `int` one, where the host is `cudaCpuDeviceId` (-1).

/// The `int` device of the pre-12.2 forms for a location: a device's ordinal, or `cudaCpuDeviceId` (-1) for the
/// host.
#[cfg(not(cudart_ge_13_0))]
#[allow(dead_code)]
fn location_device(location: cudaMemLocation) -> i32 {
    if location.type_ == cudaMemLocationType::cudaMemLocationTypeDevice {
        mem_location_id(location)
    } else {
        -1
    }
}

/// The `id` of a location, however the header spells it (see [`mem_location`]).
pub fn mem_location_id(location: cudaMemLocation) -> i32 {
    #[cfg(cuda_sys_mem_location_union)]
    {
        // SAFETY: every variant of the union is an i32-sized plain value; `id` is the one [`mem_location`] sets.
        unsafe { location.__bindgen_anon_1.id }
    }
    #[cfg(not(cuda_sys_mem_location_union))]
    {
        location.id
    }
}

/// `cudaMemPrefetchAsync` in its 13.0 form (location and flags): `cudaMemPrefetchAsync_v2` on 12.3 – 12.9, the
/// `int` form on 12.0 – 12.2 (where `flags` must be 0 and a host location is `cudaCpuDeviceId`).
///
/// # Safety
/// As for the C function: `dev_ptr` is managed memory of at least `count` bytes (or the call fails); `stream` is
/// a live stream or a built-in handle.
pub unsafe fn mem_prefetch_async(
    dev_ptr: *const std::ffi::c_void,
    count: usize,
    location: cudaMemLocation,
    flags: u32,
    stream: cudaStream_t,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaMemPrefetchAsync(dev_ptr, count, location, flags, stream)
    }
    #[cfg(all(cudart_ge_12_3, not(cudart_ge_13_0)))]
    {
        cudaMemPrefetchAsync_v2(dev_ptr, count, location, flags, stream)
    }
    #[cfg(not(cudart_ge_12_3))]
    {
        if flags != 0 {
            return cudaError::cudaErrorInvalidValue;
        }
        cudaMemPrefetchAsync(dev_ptr, count, location_device(location), stream)
    }
}

/// `cudaMemAdvise` in its 13.0 form (a location): `cudaMemAdvise_v2` on 12.3 – 12.9, the `int` form on 12.0 – 12.2.
///
/// # Safety
/// As for the C function: `dev_ptr` is managed (or, with pageable memory access, host) memory of `count` bytes.
pub unsafe fn mem_advise(
    dev_ptr: *const std::ffi::c_void,
    count: usize,
    advice: cudaMemoryAdvise,
    location: cudaMemLocation,
) -> cudaError_t {
    #[cfg(cudart_ge_13_0)]
    {
        cudaMemAdvise(dev_ptr, count, advice, location)
    }
    #[cfg(all(cudart_ge_12_3, not(cudart_ge_13_0)))]
    {
        cudaMemAdvise_v2(dev_ptr, count, advice, location)
    }
    #[cfg(not(cudart_ge_12_3))]
    {
        cudaMemAdvise(dev_ptr, count, advice, location_device(location))
    }
}
