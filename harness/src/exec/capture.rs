//! Stream capture bookkeeping: which script operation produced which graph node (asked of cudaStreamGetCaptureInfo
//! right after the operation), the topology of a captured graph, and the names of capture statuses, modes and node
//! types. The executor's own queries run [`quietly`], so they never change what `get-last-error` reports.

use crate::case::ast::{CaptureMode, Case, OpKind, StreamRef};
use crate::gpu::error_name;
use crate::observations::{GraphRecord, NodeRecord};
use cuda_sys as sys;
use std::collections::HashMap;
use std::ptr;

const SUCCESS: sys::cudaError_t = sys::cudaError::cudaSuccess;

/// Runs an executor-internal CUDA call without disturbing the thread's last error: a failing call sets it, so it
/// is cleared again if it was clean before. Returns the code, and whether an earlier error of the case may have
/// been replaced (that cannot be undone; the caller notes it).
pub fn quietly(call: impl FnOnce() -> sys::cudaError_t) -> (sys::cudaError_t, bool) {
    // SAFETY: no arguments; reads the calling thread's last error without changing it.
    let before = unsafe { sys::cudaPeekAtLastError() };
    let code = call();
    if code == SUCCESS {
        return (code, false);
    }
    if before == SUCCESS {
        // SAFETY: no arguments; resets the calling thread's last error to cudaSuccess.
        let _ = unsafe { sys::cudaGetLastError() };
        return (code, false);
    }
    (code, true)
}

/// The stream on which operation `kind` may have added a node to a capture graph. Exhaustive on purpose: a new
/// operation must be placed on one side or the other.
pub fn node_stream(kind: &OpKind) -> Option<&StreamRef> {
    match kind {
        OpKind::LaunchGate { stream, .. }
        | OpKind::LaunchSpin { stream, .. }
        | OpKind::LaunchLazySpin { stream, .. }
        | OpKind::LaunchFault { stream, .. }
        | OpKind::LaunchFill { stream, .. }
        | OpKind::LaunchTransform { stream, .. }
        | OpKind::LaunchCompare { stream, .. }
        | OpKind::HostFunc { stream, .. }
        | OpKind::LaunchGraph { stream, .. }
        // Captured stream-ordered allocations become memory-allocation and memory-free nodes.
        | OpKind::MallocAsync { stream, .. }
        | OpKind::FreeAsync { stream, .. } => Some(stream),
        OpKind::Memcpy { stream, .. } | OpKind::Memset { stream, .. } => stream.as_ref(),
        // Only the external forms are nodes; otherwise record/wait just move capture dependencies.
        OpKind::Record { stream, external: true, .. } | OpKind::Wait { stream, external: true, .. } => Some(stream),
        OpKind::Record { external: false, .. }
        | OpKind::Wait { external: false, .. }
        | OpKind::Callback { .. }
        | OpKind::Query { .. }
        | OpKind::Sync { .. }
        | OpKind::DeviceSync
        | OpKind::Elapsed { .. }
        | OpKind::BeginCapture { .. }
        | OpKind::EndCapture { .. }
        | OpKind::CaptureStatus { .. }
        | OpKind::CaptureDeps { .. }
        | OpKind::PointerType { .. }
        | OpKind::ExchangeCaptureMode { .. }
        | OpKind::Instantiate { .. }
        | OpKind::Upload { .. }
        | OpKind::Create { .. }
        | OpKind::Destroy { .. }
        | OpKind::Register { .. }
        | OpKind::Unregister { .. }
        | OpKind::SetDevice
        | OpKind::GetDevice
        | OpKind::SetLimit { .. }
        | OpKind::SetCacheConfig { .. }
        | OpKind::StreamPriority { .. }
        | OpKind::Read { .. }
        | OpKind::PeekLastError
        | OpKind::Malloc { .. }
        | OpKind::GetLastError
        | OpKind::Open { .. }
        | OpKind::Sleep { .. } => None,
    }
}

/// What cudaStreamGetCaptureInfo says about a stream.
pub struct CaptureInfo {
    pub status: sys::cudaStreamCaptureStatus,
    pub id: u64,
    /// The nodes the next captured work will depend on (valid only while the status is active).
    pub dependencies: Vec<sys::cudaGraphNode_t>,
}

/// cudaStreamGetCaptureInfo on `stream` (not quietly: `capture-deps` reports its code).
pub fn capture_info(stream: sys::cudaStream_t) -> (sys::cudaError_t, CaptureInfo) {
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    let mut id = 0u64;
    let mut deps: *const sys::cudaGraphNode_t = ptr::null();
    // Asking for edge data too: without it CUDA may refuse with cudaErrorLossyQuery when edges carry data.
    let mut edge_data: *const sys::compat::cudaGraphEdgeData = ptr::null();
    let mut count = 0usize;
    // SAFETY: every out-pointer is valid; the graph output is optional (null).
    let code = unsafe {
        sys::compat::stream_get_capture_info(
            stream,
            &mut status,
            &mut id,
            ptr::null_mut(),
            &mut deps,
            &mut edge_data,
            &mut count,
        )
    };
    let active = code == SUCCESS && status == sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusActive;
    let dependencies = if active && !deps.is_null() {
        // SAFETY: on success with an active capture, deps points to `count` nodes owned by the capture, valid until
        // the next capture call on this stream; they are copied at once.
        unsafe { std::slice::from_raw_parts(deps, count) }.to_vec()
    } else {
        Vec::new()
    };
    (code, CaptureInfo { status, id, dependencies })
}

/// The capture id of `stream` if it is capturing now, asked quietly.
pub fn active_capture_id(stream: sys::cudaStream_t) -> Option<u64> {
    let mut info = None;
    let _ = quietly(|| {
        let (code, i) = capture_info(stream);
        info = Some(i);
        code
    });
    info.filter(|i| i.status == sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusActive).map(|i| i.id)
}

/// Which operation produced which node, per capture sequence (node handles of a destroyed graph may be reused).
#[derive(Default)]
pub struct NodeMap {
    origins: HashMap<(u64, usize), usize>,
}

impl NodeMap {
    /// Called right after operation `op_index` succeeded on `stream`: if the stream is capturing and now depends on
    /// exactly one node, that node is the one the operation added. Returns a note if the query may have replaced
    /// the thread's last error.
    pub fn learn(&mut self, stream: sys::cudaStream_t, op_index: usize) -> Option<String> {
        let mut info = None;
        let (code, replaced) = quietly(|| {
            let (code, i) = capture_info(stream);
            info = Some(i);
            code
        });
        if let Some(info) = info.filter(|i| i.dependencies.len() == 1) {
            self.origins.insert((info.id, info.dependencies[0] as usize), op_index);
        }
        replaced.then(|| {
            format!("cudaStreamGetCaptureInfo after it returned {}, which replaced the last error", error_name(code))
        })
    }

    fn op_of(&self, capture_id: Option<u64>, node: sys::cudaGraphNode_t) -> Option<usize> {
        self.origins.get(&(capture_id?, node as usize)).copied()
    }
}

/// The record of graph `graph` (from `end-capture` operation `op_index`): nodes with the operations that produced
/// them, and edges. `capture_id` is the id the capture had just before it ended.
pub fn graph_record(
    case: &Case,
    name: &str,
    op_index: usize,
    graph: sys::cudaGraph_t,
    capture_id: Option<u64>,
    nodes: &NodeMap,
) -> GraphRecord {
    let mut record =
        GraphRecord { name: name.to_owned(), end_capture_op: op_index, null: graph.is_null(), ..empty_graph() };
    if graph.is_null() {
        return record;
    }
    match topology(graph) {
        Ok((handles, kinds, edges)) => {
            record.nodes = handles
                .iter()
                .zip(kinds)
                .enumerate()
                .map(|(index, (&node, kind))| {
                    let op_index = nodes.op_of(capture_id, node);
                    let label = op_index.and_then(|i| case.script.get(i)).and_then(|op| op.label.clone());
                    NodeRecord { index, kind, op_index, label }
                })
                .collect();
            record.edges = edges;
        }
        Err(e) => record.error = Some(e),
    }
    record
}

fn empty_graph() -> GraphRecord {
    GraphRecord {
        name: String::new(),
        end_capture_op: 0,
        null: false,
        nodes: Vec::new(),
        edges: Vec::new(),
        error: None,
    }
}

type Topology = (Vec<sys::cudaGraphNode_t>, Vec<String>, Vec<[usize; 2]>);

/// Nodes (handle and kind) and edges (as node indices) of `graph`.
fn topology(graph: sys::cudaGraph_t) -> Result<Topology, String> {
    let failed = |what: &str, code| format!("{what} returned {}", error_name(code));
    let mut count = 0usize;
    // SAFETY: graph is a live graph; a null node array asks for the count only.
    let (code, _) = quietly(|| unsafe { sys::cudaGraphGetNodes(graph, ptr::null_mut(), &mut count) });
    if code != SUCCESS {
        return Err(failed("cudaGraphGetNodes", code));
    }
    let mut nodes = vec![ptr::null_mut(); count];
    // SAFETY: nodes has room for `count` handles.
    let (code, _) = quietly(|| unsafe { sys::cudaGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) });
    if code != SUCCESS {
        return Err(failed("cudaGraphGetNodes", code));
    }
    nodes.truncate(count);
    let mut kinds = Vec::with_capacity(nodes.len());
    for &node in &nodes {
        let mut kind = sys::cudaGraphNodeType(u32::MAX);
        // SAFETY: node belongs to the live graph; kind is a valid out-pointer.
        let (code, _) = quietly(|| unsafe { sys::cudaGraphNodeGetType(node, &mut kind) });
        kinds.push(if code == SUCCESS { node_kind_name(kind) } else { failed("cudaGraphNodeGetType", code) });
    }
    let mut edge_count = 0usize;
    // SAFETY: null arrays ask for the count only.
    let (code, _) = quietly(|| unsafe {
        sys::compat::graph_get_edges(graph, ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), &mut edge_count)
    });
    if code != SUCCESS {
        return Err(failed("cudaGraphGetEdges", code));
    }
    // With no edges, the second call would pass empty (dangling) arrays, which CUDA 13 rejects with
    // cudaErrorInvalidValue (seen on the H100 with single-node graphs).
    if edge_count == 0 {
        return Ok((nodes, kinds, Vec::new()));
    }
    let mut from = vec![ptr::null_mut(); edge_count];
    let mut to = vec![ptr::null_mut(); edge_count];
    let mut data = vec![sys::compat::cudaGraphEdgeData::default(); edge_count];
    // SAFETY: the three arrays have room for `edge_count` entries each.
    let (code, _) = quietly(|| unsafe {
        sys::compat::graph_get_edges(graph, from.as_mut_ptr(), to.as_mut_ptr(), data.as_mut_ptr(), &mut edge_count)
    });
    if code != SUCCESS {
        return Err(failed("cudaGraphGetEdges", code));
    }
    let index: HashMap<usize, usize> = nodes.iter().enumerate().map(|(i, &n)| (n as usize, i)).collect();
    let edges = from
        .iter()
        .zip(&to)
        .take(edge_count)
        .map(|(&a, &b)| match (index.get(&(a as usize)), index.get(&(b as usize))) {
            (Some(&a), Some(&b)) => Ok([a, b]),
            _ => Err("cudaGraphGetEdges named a node that cudaGraphGetNodes did not list".to_owned()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((nodes, kinds, edges))
}

pub fn capture_mode(mode: CaptureMode) -> sys::cudaStreamCaptureMode {
    use sys::cudaStreamCaptureMode as M;
    match mode {
        CaptureMode::Global => M::cudaStreamCaptureModeGlobal,
        CaptureMode::ThreadLocal => M::cudaStreamCaptureModeThreadLocal,
        CaptureMode::Relaxed => M::cudaStreamCaptureModeRelaxed,
    }
}

pub fn capture_mode_name(mode: sys::cudaStreamCaptureMode) -> String {
    use sys::cudaStreamCaptureMode as M;
    match mode {
        M::cudaStreamCaptureModeGlobal => "global".to_owned(),
        M::cudaStreamCaptureModeThreadLocal => "thread-local".to_owned(),
        M::cudaStreamCaptureModeRelaxed => "relaxed".to_owned(),
        other => format!("unknown({})", other.0),
    }
}

/// `none`, `active`, `invalidated`: the words `capture-status` uses.
pub fn capture_status_name(status: sys::cudaStreamCaptureStatus) -> String {
    use sys::cudaStreamCaptureStatus as S;
    match status {
        S::cudaStreamCaptureStatusNone => "none".to_owned(),
        S::cudaStreamCaptureStatusActive => "active".to_owned(),
        S::cudaStreamCaptureStatusInvalidated => "invalidated".to_owned(),
        other => format!("unknown({})", other.0),
    }
}

pub fn node_kind_name(kind: sys::cudaGraphNodeType) -> String {
    use sys::cudaGraphNodeType as T;
    let name = match kind {
        T::cudaGraphNodeTypeKernel => "kernel",
        T::cudaGraphNodeTypeMemcpy => "memcpy",
        T::cudaGraphNodeTypeMemset => "memset",
        T::cudaGraphNodeTypeHost => "host",
        T::cudaGraphNodeTypeGraph => "graph",
        T::cudaGraphNodeTypeEmpty => "empty",
        T::cudaGraphNodeTypeWaitEvent => "wait-event",
        T::cudaGraphNodeTypeEventRecord => "event-record",
        T::cudaGraphNodeTypeExtSemaphoreSignal => "ext-semaphore-signal",
        T::cudaGraphNodeTypeExtSemaphoreWait => "ext-semaphore-wait",
        T::cudaGraphNodeTypeMemAlloc => "mem-alloc",
        T::cudaGraphNodeTypeMemFree => "mem-free",
        sys::compat::cudaGraphNodeTypeConditional => "conditional",
        other => return format!("unknown({})", other.0),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_case_language() {
        use sys::cudaStreamCaptureStatus as S;
        assert_eq!(capture_status_name(S::cudaStreamCaptureStatusInvalidated), "invalidated");
        assert_eq!(capture_status_name(sys::cudaStreamCaptureStatus(9)), "unknown(9)");
        for mode in [CaptureMode::Global, CaptureMode::ThreadLocal, CaptureMode::Relaxed] {
            assert_eq!(capture_mode_name(capture_mode(mode)), crate::case::print::capture_mode(mode));
        }
        assert_eq!(node_kind_name(sys::cudaGraphNodeType::cudaGraphNodeTypeWaitEvent), "wait-event");
        assert_eq!(node_kind_name(sys::cudaGraphNodeType(12)), "unknown(12)");
    }

    #[test]
    fn only_work_and_external_event_operations_make_nodes() {
        let s = StreamRef::Named("s".into());
        let record = |external| OpKind::Record { event: "e".into(), stream: s.clone(), external };
        assert!(node_stream(&record(true)).is_some());
        assert!(node_stream(&record(false)).is_none());
        let copy = |stream| OpKind::Memcpy { dst: "a".into(), src: "b".into(), bytes: None, stream };
        assert!(node_stream(&copy(Some(s.clone()))).is_some());
        assert!(node_stream(&copy(None)).is_none());
        assert!(node_stream(&OpKind::Callback { stream: s }).is_none());
    }
}
