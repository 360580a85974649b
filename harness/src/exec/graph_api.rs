//! The graph API's parameters: what `add-node`, `set-node` and `exec-set-node` pass to CUDA, resolved from the
//! case's objects before the call is timed, and the names of what instantiate and update report. The calls
//! themselves are made by the interpreter, each inside its timed region.

use super::buffers::byte_count;
use super::gates::GateSet;
use super::objects::Objects;
use super::sys_words::ToSys;
use crate::case::ast::{Case, ConditionalKind, InstantiateResult, ListWord, NodeKernel, UpdateResult};
use crate::device::kernels::{KernelTable, DATA_BLOCK_THREADS};
use cuda_sys as sys;
use std::ffi::c_void;

/// A kernel node's parameters with the argument values they point to: CUDA copies the values during the call, so
/// they must live until it returns (and not move: each argument sits in its own boxed slot).
pub struct KernelNode {
    params: sys::cudaKernelNodeParams,
    _slots: Box<[u64; 5]>,
    _args: Vec<*mut c_void>,
}

impl KernelNode {
    pub fn params(&self) -> *const sys::cudaKernelNodeParams {
        &self.params
    }
}

/// The argument values of a probe kernel, in parameter order. Each is widened to a u64 slot; a u32 parameter reads
/// the slot's first four bytes, which hold the value on the little-endian hosts CUDA supports.
enum ArgValue {
    U32(u32),
    U64(u64),
    Ptr(*const c_void),
}

/// The parameters of the kernel node `kernel`: one thread for gate and condition kernels, one data block otherwise
/// (the launch shapes of `device/kernels.rs`). Kernel nodes carry no stamp slot (a null stamp pointer).
pub fn kernel_node(
    kernels: &KernelTable,
    gates: &GateSet,
    gate_timeout_ns: u64,
    st: &Objects,
    kernel: &NodeKernel,
) -> Result<KernelNode, String> {
    use ArgValue::*;
    let null = Ptr(std::ptr::null());
    let words = |buf: &str| st.kernel_buffer(buf).map(|(ptr, n)| (ptr.cast_const().cast::<c_void>(), n));
    let (func, threads, args) = match kernel {
        NodeKernel::Gate { gate } => {
            let g = gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
            let (flag, timed_out) = gates.kernel_args(g).ok_or_else(|| format!("gate {gate} was not created"))?;
            (kernels.gate, 1, vec![Ptr(flag.cast()), U64(gate_timeout_ns), Ptr(timed_out.cast_const().cast()), null])
        }
        NodeKernel::Spin { ns } => (kernels.spin, 1, vec![U64(*ns), null]),
        NodeKernel::Fill { buf, value } => {
            let (ptr, n) = words(buf)?;
            (kernels.fill, DATA_BLOCK_THREADS, vec![Ptr(ptr), U32(n), U32(*value), null])
        }
        NodeKernel::Transform { buf, mul, add } => {
            let (ptr, n) = words(buf)?;
            (kernels.transform, DATA_BLOCK_THREADS, vec![Ptr(ptr), U32(n), U32(*mul), U32(*add), null])
        }
        NodeKernel::SetCondition { condition, buf } => {
            (kernels.set_condition, 1, vec![U64(st.condition(condition)?), Ptr(words(buf)?.0)])
        }
        NodeKernel::Countdown { condition, buf } => {
            let (ptr, n) = words(buf)?;
            if n < 2 {
                return Err(format!("countdown needs two words in {buf}"));
            }
            (kernels.countdown, 1, vec![U64(st.condition(condition)?), Ptr(ptr)])
        }
    };
    let mut slots = Box::new([0u64; 5]);
    for (slot, value) in slots.iter_mut().zip(&args) {
        *slot = match *value {
            U32(v) => u64::from(v),
            U64(v) => v,
            Ptr(p) => p as u64,
        };
    }
    let mut arg_ptrs: Vec<*mut c_void> = slots.iter_mut().take(args.len()).map(|s| (s as *mut u64).cast()).collect();
    let params = sys::cudaKernelNodeParams {
        func: func.cast_mut(),
        gridDim: sys::dim3 { x: 1, y: 1, z: 1 },
        blockDim: sys::dim3 { x: threads, y: 1, z: 1 },
        sharedMemBytes: 0,
        kernelParams: arg_ptrs.as_mut_ptr(),
        extra: std::ptr::null_mut(),
    };
    Ok(KernelNode { params, _slots: slots, _args: arg_ptrs })
}

/// The parameters of a memset node: BYTES bytes (default: the whole buffer) set to `byte`.
pub fn memset_params(st: &Objects, buf: &str, byte: u8, bytes: Option<u64>) -> Result<sys::cudaMemsetParams, String> {
    let b = st.buffer(buf)?;
    let n = byte_count(bytes, b.bytes)?;
    Ok(sys::cudaMemsetParams {
        dst: b.memset_ptr(),
        pitch: 0,
        value: u32::from(byte),
        elementSize: 1,
        width: n,
        height: 1,
    })
}

/// `list`: the count/buffer protocol of cudaGraphGetNodes, GetRootNodes and GetEdges. `timed` runs and times the
/// second call (the one with a buffer), after a first, untimed one that asks for the count. Returns the code of the
/// failing or last call, the count returned by the second call, and whether the entries past it were NULL.
pub fn list(
    graph: sys::cudaGraph_t,
    what: ListWord,
    room: Option<u32>,
    mut timed: impl FnMut(&mut dyn FnMut() -> sys::cudaError_t) -> bool,
) -> (bool, Option<u64>, bool) {
    let null = std::ptr::null_mut();
    let mut count = 0usize;
    // SAFETY: graph is live or null; null buffers ask for the count only.
    let first = |count: &mut usize| unsafe {
        match what {
            ListWord::Nodes => sys::cudaGraphGetNodes(graph, null, count),
            ListWord::RootNodes => sys::cudaGraphGetRootNodes(graph, null, count),
            ListWord::Edges => sys::compat::graph_get_edges(graph, null, null, std::ptr::null_mut(), count),
        }
    };
    if !timed(&mut || first(&mut count)) {
        return (false, None, false);
    }
    let size = room.map_or(count, |r| r as usize);
    // Filled with a marker, so entries CUDA leaves alone are told from those it set to NULL.
    let marker = 1usize as sys::cudaGraphNode_t;
    let mut a = vec![marker; size.max(1)];
    let mut b = vec![marker; size.max(1)];
    let mut data = vec![sys::compat::cudaGraphEdgeData::default(); size.max(1)];
    let mut returned = size;
    // SAFETY: each buffer has room for `size` entries (at least one, so the pointers are never dangling).
    let ok = timed(&mut || unsafe {
        match what {
            ListWord::Nodes => sys::cudaGraphGetNodes(graph, a.as_mut_ptr(), &mut returned),
            ListWord::RootNodes => sys::cudaGraphGetRootNodes(graph, a.as_mut_ptr(), &mut returned),
            ListWord::Edges => {
                sys::compat::graph_get_edges(graph, a.as_mut_ptr(), b.as_mut_ptr(), data.as_mut_ptr(), &mut returned)
            }
        }
    });
    if !ok {
        return (false, None, false);
    }
    let tail = returned.min(size)..size;
    let null_padded =
        a[tail.clone()].iter().all(|p| p.is_null()) && (what != ListWord::Edges || b[tail].iter().all(|p| p.is_null()));
    (true, Some(returned as u64), null_padded)
}

/// The node handles of the operations `labels` name, in order.
pub fn dependencies(case: &Case, st: &Objects, labels: &[String]) -> Result<Vec<sys::cudaGraphNode_t>, String> {
    labels
        .iter()
        .map(|label| {
            let index = case
                .script
                .iter()
                .position(|op| op.label.as_deref() == Some(label))
                .ok_or_else(|| format!("no operation is labelled {label}"))?;
            st.nodes.node_of(index).ok_or_else(|| format!("{label} made no node the executor knows"))
        })
        .collect()
}

/// The label of the operation that made `node`; `None` for a null node, `?` for one the executor cannot name.
pub fn node_label(case: &Case, st: &Objects, node: sys::cudaGraphNode_t) -> Option<String> {
    if node.is_null() {
        return None;
    }
    let label = st.nodes.op_of(None, node).and_then(|i| case.script.get(i)).and_then(|op| op.label.clone());
    Some(label.unwrap_or_else(|| "?".to_owned()))
}

impl ToSys for ConditionalKind {
    /// `cudaGraphConditionalNodeType` as its number (the type exists only in 12.3+ headers).
    type Sys = u32;
    fn to_sys(self) -> Self::Sys {
        match self {
            ConditionalKind::If => sys::compat::COND_TYPE_IF,
            ConditionalKind::While => sys::compat::COND_TYPE_WHILE,
            ConditionalKind::Switch => sys::compat::COND_TYPE_SWITCH,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        i64::from(value)
    }
}

impl ToSys for InstantiateResult {
    type Sys = sys::cudaGraphInstantiateResult;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaGraphInstantiateResult as R;
        match self {
            InstantiateResult::Success => R::cudaGraphInstantiateSuccess,
            InstantiateResult::Error => R::cudaGraphInstantiateError,
            InstantiateResult::InvalidStructure => R::cudaGraphInstantiateInvalidStructure,
            InstantiateResult::NodeOperationNotSupported => R::cudaGraphInstantiateNodeOperationNotSupported,
            InstantiateResult::MultipleDevicesNotSupported => R::cudaGraphInstantiateMultipleDevicesNotSupported,
            InstantiateResult::ConditionalHandleUnused => sys::compat::cudaGraphInstantiateConditionalHandleUnused,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}

impl ToSys for UpdateResult {
    type Sys = sys::cudaGraphExecUpdateResult;
    fn to_sys(self) -> Self::Sys {
        use sys::cudaGraphExecUpdateResult as R;
        match self {
            UpdateResult::Success => R::cudaGraphExecUpdateSuccess,
            UpdateResult::Error => R::cudaGraphExecUpdateError,
            UpdateResult::TopologyChanged => R::cudaGraphExecUpdateErrorTopologyChanged,
            UpdateResult::NodeTypeChanged => R::cudaGraphExecUpdateErrorNodeTypeChanged,
            UpdateResult::FunctionChanged => R::cudaGraphExecUpdateErrorFunctionChanged,
            UpdateResult::ParametersChanged => R::cudaGraphExecUpdateErrorParametersChanged,
            UpdateResult::NotSupported => R::cudaGraphExecUpdateErrorNotSupported,
            UpdateResult::UnsupportedFunctionChange => R::cudaGraphExecUpdateErrorUnsupportedFunctionChange,
            UpdateResult::AttributesChanged => R::cudaGraphExecUpdateErrorAttributesChanged,
        }
    }
    fn raw(value: Self::Sys) -> i64 {
        value.0 as i64
    }
}
