//! Which cudart function each operation and declaration calls: the call whose return code a case's `=> CODE`
//! (or `expect` on a declaration) asserts. The API coverage table (`report::coverage`, `cuda-conformance coverage`)
//! counts cases per function from this, so it names the call the executor makes (`exec/interpret/`), in the
//! CUDA 13 spelling: on 12.x the `compat` wrappers call the `_v2`/`_v3` entry points of the same function.
//!
//! The matches are exhaustive: a new operation does not compile until it says what it calls.

use super::ast::{Decl, KernelCall, ListWord, MemKind, NodeSpec, OpKind, Target};

impl OpKind {
    /// The cudart functions the operation calls (one for most; none for the harness's own steps). `decls` are the
    /// case's declarations: `create` and `destroy` call what the named object's kind needs.
    pub fn cudart_calls(&self, decls: &[Decl]) -> Vec<&'static str> {
        let one = |f: &'static str| vec![f];
        match self {
            // Launches go through cudaLaunchKernel (kernels/register.c registers the image as nvcc's stubs do); a
            // `programmatic` spin through cudaLaunchKernelExC, with its launch attribute.
            OpKind::Launch { kernel: KernelCall::Spin { shape, .. }, .. } if shape.programmatic => {
                one("cudaLaunchKernelExC")
            }
            OpKind::Launch { .. } => one("cudaLaunchKernel"),
            OpKind::Memcpy { stream, .. } => one(if stream.is_some() { "cudaMemcpyAsync" } else { "cudaMemcpy" }),
            OpKind::MemcpyPeer { stream, .. } => {
                one(if stream.is_some() { "cudaMemcpyPeerAsync" } else { "cudaMemcpyPeer" })
            }
            OpKind::Memset { stream, .. } => one(if stream.is_some() { "cudaMemsetAsync" } else { "cudaMemset" }),
            OpKind::Record { external, .. } => {
                one(if *external { "cudaEventRecordWithFlags" } else { "cudaEventRecord" })
            }
            OpKind::Wait { .. } => one("cudaStreamWaitEvent"),
            OpKind::Query { target: Target::Stream(_) } => one("cudaStreamQuery"),
            OpKind::Query { target: Target::Event(_) } => one("cudaEventQuery"),
            OpKind::Sync { target: Target::Stream(_) } => one("cudaStreamSynchronize"),
            OpKind::Sync { target: Target::Event(_) } => one("cudaEventSynchronize"),
            OpKind::DeviceSync => one("cudaDeviceSynchronize"),
            OpKind::Elapsed { .. } => one("cudaEventElapsedTime"),
            OpKind::HostFunc { .. } => one("cudaLaunchHostFunc"),
            OpKind::Callback { .. } => one("cudaStreamAddCallback"),
            OpKind::BeginCapture { .. } => one("cudaStreamBeginCapture"),
            OpKind::EndCapture { .. } => one("cudaStreamEndCapture"),
            OpKind::CaptureStatus { .. } => one("cudaStreamIsCapturing"),
            OpKind::CaptureDeps { .. } => one("cudaStreamGetCaptureInfo"),
            OpKind::PointerType { .. } => one("cudaPointerGetAttributes"),
            OpKind::ExchangeCaptureMode { .. } => one("cudaThreadExchangeStreamCaptureMode"),
            OpKind::Instantiate { with_params, .. } => {
                one(if *with_params { "cudaGraphInstantiateWithParams" } else { "cudaGraphInstantiateWithFlags" })
            }
            OpKind::Update { .. } => one("cudaGraphExecUpdate"),
            OpKind::AddNode { node, .. } => one(match node {
                NodeSpec::Kernel(_) => "cudaGraphAddKernelNode",
                NodeSpec::Memcpy { .. } => "cudaGraphAddMemcpyNode1D",
                NodeSpec::Memset { .. } => "cudaGraphAddMemsetNode",
                NodeSpec::Host => "cudaGraphAddHostNode",
                NodeSpec::Empty => "cudaGraphAddEmptyNode",
                NodeSpec::EventRecord { .. } => "cudaGraphAddEventRecordNode",
                NodeSpec::WaitEvent { .. } => "cudaGraphAddEventWaitNode",
                NodeSpec::Child { .. } => "cudaGraphAddChildGraphNode",
                NodeSpec::MemAlloc { .. } => "cudaGraphAddMemAllocNode",
                NodeSpec::MemFree { .. } => "cudaGraphAddMemFreeNode",
                // compat::graph_add_conditional_node: cudaGraphAddNode with cudaConditionalNodeParams.
                NodeSpec::Conditional { .. } => "cudaGraphAddNode",
            }),
            OpKind::Dependency { remove, .. } => {
                one(if *remove { "cudaGraphRemoveDependencies" } else { "cudaGraphAddDependencies" })
            }
            OpKind::Clone { .. } => one("cudaGraphClone"),
            OpKind::DestroyNode { .. } => one("cudaGraphDestroyNode"),
            OpKind::List { what, .. } => one(match what {
                ListWord::Nodes => "cudaGraphGetNodes",
                ListWord::RootNodes => "cudaGraphGetRootNodes",
                ListWord::Edges => "cudaGraphGetEdges",
            }),
            OpKind::SetNode { exec, spec, .. } => {
                let exec = exec.is_some();
                one(match spec {
                    NodeSpec::Kernel(_) if exec => "cudaGraphExecKernelNodeSetParams",
                    NodeSpec::Kernel(_) => "cudaGraphKernelNodeSetParams",
                    NodeSpec::Memcpy { .. } if exec => "cudaGraphExecMemcpyNodeSetParams1D",
                    NodeSpec::Memcpy { .. } => "cudaGraphMemcpyNodeSetParams1D",
                    NodeSpec::Memset { .. } if exec => "cudaGraphExecMemsetNodeSetParams",
                    NodeSpec::Memset { .. } => "cudaGraphMemsetNodeSetParams",
                    NodeSpec::Host if exec => "cudaGraphExecHostNodeSetParams",
                    NodeSpec::Host => "cudaGraphHostNodeSetParams",
                    // The validator admits only the four kinds above (`set-node`'s grammar).
                    _ => return Vec::new(),
                })
            }
            OpKind::SetEnabled { .. } => one("cudaGraphNodeSetEnabled"),
            OpKind::GetEnabled { .. } => one("cudaGraphNodeGetEnabled"),
            OpKind::BeginCaptureToGraph { .. } => one("cudaStreamBeginCaptureToGraph"),
            OpKind::UpdateCaptureDeps { .. } => one("cudaStreamUpdateCaptureDependencies"),
            OpKind::ConditionCreate { .. } => one("cudaGraphConditionalHandleCreate"),
            OpKind::PoolSet { .. } => one("cudaMemPoolSetAttribute"),
            OpKind::PoolGet { .. } => one("cudaMemPoolGetAttribute"),
            OpKind::PoolTrim { .. } => one("cudaMemPoolTrimTo"),
            OpKind::GraphMemTrim => one("cudaDeviceGraphMemTrim"),
            OpKind::GraphMemGet { .. } => one("cudaDeviceGetGraphMemAttribute"),
            OpKind::LaunchGraph { .. } => one("cudaGraphLaunch"),
            OpKind::Upload { .. } => one("cudaGraphUpload"),
            OpKind::Create { name } => find(decls, name).map_or_else(Vec::new, Decl::creation_calls),
            OpKind::Destroy { name } => find(decls, name).map_or_else(Vec::new, Decl::destruction_calls),
            OpKind::MallocAsync { pool, .. } => {
                one(if pool.is_some() { "cudaMallocFromPoolAsync" } else { "cudaMallocAsync" })
            }
            OpKind::FreeAsync { .. } => one("cudaFreeAsync"),
            OpKind::Register { .. } => one("cudaHostRegister"),
            OpKind::Unregister { .. } => one("cudaHostUnregister"),
            OpKind::SetDevice { .. } => one("cudaSetDevice"),
            OpKind::GetDevice { .. } => one("cudaGetDevice"),
            OpKind::PeerAccess { enable, .. } => {
                one(if *enable { "cudaDeviceEnablePeerAccess" } else { "cudaDeviceDisablePeerAccess" })
            }
            OpKind::CanAccessPeer { .. } => one("cudaDeviceCanAccessPeer"),
            OpKind::SetLimit { .. } => one("cudaDeviceSetLimit"),
            OpKind::SetCacheConfig { .. } => one("cudaDeviceSetCacheConfig"),
            OpKind::StreamPriority { .. } => one("cudaStreamGetPriority"),
            OpKind::StreamFlags { .. } => one("cudaStreamGetFlags"),
            OpKind::PeekLastError => one("cudaPeekAtLastError"),
            OpKind::GetLastError => one("cudaGetLastError"),
            OpKind::Malloc { .. } => one("cudaMalloc"),
            // The harness's own steps: reading a buffer back for the expectations, opening a gate, sleeping.
            OpKind::Read { .. } | OpKind::Open { .. } | OpKind::Sleep { .. } => Vec::new(),
            // Batched copies, stream identity, stream and kernel-node attributes.
            // compat::memcpy_batch_async / memcpy_3d_batch_async: the 12.8 forms with failIdx, 13.x without.
            OpKind::MemcpyBatch { three_d, .. } => {
                one(if *three_d { "cudaMemcpy3DBatchAsync" } else { "cudaMemcpyBatchAsync" })
            }
            OpKind::StreamDevice { .. } => one("cudaStreamGetDevice"),
            OpKind::StreamId { .. } => one("cudaStreamGetId"),
            OpKind::StreamAttr { .. } => one("cudaStreamGetAttribute"),
            OpKind::SetStreamAttr { .. } => one("cudaStreamSetAttribute"),
            OpKind::CopyStreamAttrs { .. } => one("cudaStreamCopyAttributes"),
            OpKind::NodeAttr { .. } => one("cudaGraphKernelNodeGetAttribute"),
            OpKind::SetNodeAttr { .. } => one("cudaGraphKernelNodeSetAttribute"),
            // Managed memory, IPC, user objects, device facts, the launch queue
            OpKind::Attach { .. } => one("cudaStreamAttachMemAsync"),
            // compat::mem_prefetch_async / mem_advise: the 13.0 cudaMemLocation forms (`_v2` on 12.2 – 12.9).
            OpKind::Prefetch { .. } => one("cudaMemPrefetchAsync"),
            OpKind::Advise { .. } => one("cudaMemAdvise"),
            OpKind::MallocManaged { .. } => one("cudaMallocManaged"),
            OpKind::DeviceAttr { .. } => one("cudaDeviceGetAttribute"),
            OpKind::DeviceCount => one("cudaGetDeviceCount"),
            OpKind::IpcMemHandle { .. } => one("cudaIpcGetMemHandle"),
            OpKind::IpcOpenMem { .. } => one("cudaIpcOpenMemHandle"),
            OpKind::IpcCloseMem { .. } => one("cudaIpcCloseMemHandle"),
            OpKind::IpcEventHandle { .. } => one("cudaIpcGetEventHandle"),
            OpKind::IpcOpenEvent { .. } => one("cudaIpcOpenEventHandle"),
            OpKind::PoolExport { .. } => one("cudaMemPoolExportToShareableHandle"),
            OpKind::UserObject => one("cudaUserObjectCreate"),
            OpKind::RetainUserObject { .. } => one("cudaGraphRetainUserObject"),
            OpKind::ReleaseUserObject { graph: Some(_), .. } => one("cudaGraphReleaseUserObject"),
            OpKind::ReleaseUserObject { graph: None, .. } => one("cudaUserObjectRelease"),
            // Reads the destructor's flag: no CUDA call.
            OpKind::Destroyed { .. } => Vec::new(),
            OpKind::QueueDepth { .. } => one("cudaLaunchKernel"),
            // Vulkan calls (`device::vulkan`), no CUDA call.
            OpKind::VkMemory { .. }
            | OpKind::VkSemaphore { .. }
            | OpKind::VkWrite { .. }
            | OpKind::VkRead { .. }
            | OpKind::VkCounter { .. } => Vec::new(),
            // The table's own name of the function (the parser accepted only names of the table).
            OpKind::Call(call) => {
                crate::api::function(&call.function).map(|f| vec![f.name.as_str()]).unwrap_or_default()
            }
        }
    }
}

fn find<'a>(decls: &'a [Decl], name: &str) -> Option<&'a Decl> {
    decls.iter().find(|d| d.name() == name)
}

impl Decl {
    /// What creating the object calls (at the start of the case, or at `create` for a `later` one).
    pub fn creation_calls(&self) -> Vec<&'static str> {
        match self {
            // resources.rs: every stream is made with a priority (the default one when none is written).
            Decl::Stream { .. } => vec!["cudaStreamCreateWithPriority"],
            Decl::Event { .. } => vec!["cudaEventCreateWithFlags"],
            Decl::Buffer { kind, .. } => match kind {
                MemKind::Device => vec!["cudaMalloc"],
                MemKind::Pinned => vec!["cudaMallocHost"],
                MemKind::Mapped => vec!["cudaHostAlloc", "cudaHostGetDevicePointer"],
                // Plain host memory: no CUDA call.
                MemKind::Pageable => Vec::new(),
                MemKind::Managed => vec!["cudaMallocManaged"],
            },
            Decl::Graph { .. } => vec!["cudaGraphCreate"],
            Decl::Pool { default: true, .. } => vec!["cudaDeviceGetDefaultMemPool"],
            Decl::Pool { default: false, .. } => vec!["cudaMemPoolCreate"],
            // Slots filled by operations, host-side objects, and views of another buffer.
            Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Process { .. }
            | Decl::Exec { .. }
            | Decl::Condition { .. }
            | Decl::Slice { .. } => Vec::new(),
        }
    }

    /// What `destroy NAME` calls for the object.
    pub fn destruction_calls(&self) -> Vec<&'static str> {
        match self {
            Decl::Stream { .. } => vec!["cudaStreamDestroy"],
            Decl::Event { .. } => vec!["cudaEventDestroy"],
            Decl::Buffer { kind: MemKind::Device | MemKind::Managed, .. } => vec!["cudaFree"],
            Decl::Buffer { kind: MemKind::Pinned | MemKind::Mapped, .. } => vec!["cudaFreeHost"],
            Decl::Graph { .. } => vec!["cudaGraphDestroy"],
            Decl::Exec { .. } => vec!["cudaGraphExecDestroy"],
            Decl::Pool { default: false, .. } => vec!["cudaMemPoolDestroy"],
            Decl::Buffer { kind: MemKind::Pageable, .. }
            | Decl::Pool { default: true, .. }
            | Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Process { .. }
            | Decl::Condition { .. }
            | Decl::Slice { .. } => Vec::new(),
        }
    }
}
