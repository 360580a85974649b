//! Stream capture bookkeeping: which script operation produced which graph node (asked of cudaStreamGetCaptureInfo
//! right after the operation), the topology of a captured graph, and the names of capture statuses, modes and node
//! types. The executor's own queries run [`quietly`], so they never change what `get-last-error` reports.

use super::sys_words::ToSys;
use crate::case::ast::{Case, NodeWord};
#[cfg(test)]
use crate::case::ast::{OpKind, StreamRef};
use crate::record::observations::{GraphRecord, NodeRecord};
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

/// What cudaStreamGetCaptureInfo says about a stream.
pub struct CaptureInfo {
    pub status: sys::cudaStreamCaptureStatus,
    pub id: u64,
    /// The nodes the next captured work will depend on (valid only while the status is active).
    pub dependencies: Vec<sys::cudaGraphNode_t>,
    /// The type of each dependency's edge data (`cudaGraphDependencyType`; empty when CUDA gave none).
    pub edge_types: Vec<u8>,
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
    let edge_types = if active && !edge_data.is_null() {
        // SAFETY: as for deps: `count` entries owned by the capture, copied at once.
        unsafe { std::slice::from_raw_parts(edge_data, count) }.iter().map(|e| e.type_).collect()
    } else {
        Vec::new()
    };
    (code, CaptureInfo { status, id, dependencies, edge_types })
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
    /// The node each operation made (captured or added through the graph API), for operations that name nodes.
    by_op: HashMap<usize, usize>,
    /// The operation that made each live node handle, latest first (graphs read at the end of the script).
    by_handle: HashMap<usize, usize>,
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
            let node = info.dependencies[0] as usize;
            self.origins.insert((info.id, node), op_index);
            self.by_op.insert(op_index, node);
            self.by_handle.insert(node, op_index);
        }
        replaced.then(|| format!("cudaStreamGetCaptureInfo after it returned {}, which replaced the last error", code))
    }

    /// Operation `op_index` added `node` through the graph API.
    pub fn added(&mut self, op_index: usize, node: sys::cudaGraphNode_t) {
        self.by_op.insert(op_index, node as usize);
        self.by_handle.insert(node as usize, op_index);
    }

    /// The node operation `op_index` made, if the executor knows it.
    pub fn node_of(&self, op_index: usize) -> Option<sys::cudaGraphNode_t> {
        self.by_op.get(&op_index).map(|&n| n as sys::cudaGraphNode_t)
    }

    /// `destroy-node`: the handle may be reused.
    pub fn forget(&mut self, op_index: usize) {
        if let Some(node) = self.by_op.remove(&op_index) {
            self.by_handle.remove(&node);
        }
    }

    /// The operation that made `node`: within capture `capture_id` if given, else by the handle alone.
    pub fn op_of(&self, capture_id: Option<u64>, node: sys::cudaGraphNode_t) -> Option<usize> {
        match capture_id {
            Some(id) => self.origins.get(&(id, node as usize)).copied(),
            None => self.by_handle.get(&(node as usize)).copied(),
        }
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
    let failed = |what: &str, code| format!("{what} returned {}", code);
    let mut count = 0usize;
    // SAFETY: graph is a live graph; a null node array asks for the count only.
    let (code, _) = quietly(|| unsafe { sys::cudaGraphGetNodes(graph, ptr::null_mut(), &mut count) });
    if code != SUCCESS {
        return Err(failed("cudaGraphGetNodes", code));
    }
    // An empty graph: a second call would pass an empty (dangling) array, which CUDA 13 rejects with
    // cudaErrorInvalidValue (seen on the H100), as for edges below.
    if count == 0 {
        return Ok((Vec::new(), Vec::new(), Vec::new()));
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
        kinds.push(if code == SUCCESS { NodeWord::name_of(kind) } else { failed("cudaGraphNodeGetType", code) });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_work_and_external_event_operations_make_nodes() {
        let s = StreamRef::Named("s".into());
        let record = |external| OpKind::Record { event: "e".into(), stream: s.clone(), external };
        assert!(record(true).capture_stream().is_some());
        assert!(record(false).capture_stream().is_none());
        let copy = |stream| OpKind::Memcpy { dst: "a".into(), src: "b".into(), bytes: None, inferred: false, stream };
        assert!(copy(Some(s.clone())).capture_stream().is_some());
        assert!(copy(None).capture_stream().is_none());
        assert!(OpKind::Callback { stream: s }.capture_stream().is_none());
    }
}
