//! The objects a case declared, by name, and what the script did to them: created from the declarations before the
//! script, looked up by the interpreter, released in reverse order of dependence at the end.

use super::buffers::{byte_count, memcpy_kind, Buffer};
use super::capture::NodeMap;
use super::clock::CaseClock;
use super::devices::CaseDevices;
use super::gates::GateSet;
use super::handles::Handles;
use super::host_calls::HostCallContext;
use super::pools;
use super::resources::{Destroy, DeviceMemory, Event, Graph, GraphExec, MemPool, Stream};
use crate::case::ast::{Case, Decl, EventFlags, OpKind, Priority, StreamRef};
use crate::case::words::{DeclWord, Word};
use crate::device::gpu::DeviceInfo;
use crate::record::observations::{DeclRecord, GraphRecord};
use cuda_sys as sys;
use std::collections::BTreeMap;
use std::ptr;

/// A declared name's object.
pub enum Slot<T> {
    Ready(T),
    /// The creation failed with this code.
    NotCreated(String),
    /// The script destroyed it.
    Destroyed,
    /// A graph or exec slot that nothing has filled (operations pass CUDA a null handle).
    Empty,
    /// Declared `later`: the script has not created it (yet).
    Later,
}

/// A capture the script began, and the case thread that began it (`None`: the main thread).
#[derive(Clone, PartialEq)]
pub struct CaptureBegun {
    pub stream: StreamRef,
    pub thread: Option<String>,
}

pub struct Objects {
    // Field order is drop order, the fallback if the executor unwinds: executables, graphs, events, streams, memory.
    pub execs: BTreeMap<String, Slot<GraphExec>>,
    /// Executables and graphs replaced in their slot by a later instantiate/end-capture: still owned.
    pub retired_execs: Vec<GraphExec>,
    pub graphs: BTreeMap<String, Slot<Graph>>,
    pub retired_graphs: Vec<Graph>,
    pub events: BTreeMap<String, Slot<Event>>,
    pub streams: BTreeMap<String, Slot<Stream>>,
    /// `malloc` operations.
    pub allocations: Vec<DeviceMemory>,
    /// Pageable buffers the script registered (cudaHostRegister) and has not unregistered: unregistered at cleanup,
    /// before the memory is freed.
    pub registered: Vec<String>,
    /// Host ranges a generic `call cudaHostRegister` registered and no `call cudaHostUnregister` unregistered
    /// (their base addresses): unregistered at cleanup too (see [`Objects::release`]).
    pub call_registrations: Vec<usize>,
    /// The stream `read` copies device buffers on, created when first needed.
    pub reader: Option<Stream>,
    pub buffers: BTreeMap<String, Slot<Buffer>>,
    /// `userData` of every host-func/callback, alive until no call can come. Boxed because CUDA holds their
    /// addresses, which must not move when the vector grows.
    #[allow(clippy::vec_box)]
    pub host_contexts: Vec<Box<HostCallContext>>,
    pub nodes: NodeMap,
    pub captures: Vec<CaptureBegun>,
    /// Each case thread's capture mode before its first `exchange-capture-mode`, restored at the end.
    pub original_modes: Vec<(Option<String>, sys::cudaStreamCaptureMode)>,
    pub graph_records: Vec<GraphRecord>,
    /// `pool` declarations: created pools (owned) and default pools (the device's, not ours to destroy).
    pub pools: BTreeMap<String, Slot<MemPool>>,
    /// Handles as addresses (raw pointers are not `Send`, and the objects move between case threads).
    pub default_pools: BTreeMap<String, usize>,
    /// `condition-create` handles.
    pub conditions: BTreeMap<String, sys::compat::cudaGraphConditionalHandle>,
    /// Body graphs of conditional nodes: owned by their node, so never destroyed here.
    pub bodies: BTreeMap<String, usize>,
    /// Buffers whose memory a graph's memory-allocation node owns: the graph (or a `free-async`) frees it.
    pub graph_memory: Vec<String>,
    /// Graph-memory buffers a captured `free-async` freed: the address stays resolvable (for `set-node`), and a
    /// later `malloc-async` may allocate the buffer again.
    pub graph_freed: Vec<String>,
    /// The case's devices, and the ordinal each stream, event and buffer was made on when the case has several
    /// (cleanup releases and reads each there).
    pub devices: CaseDevices,
    pub placement: BTreeMap<String, i32>,
    /// Peer access the script enabled, as (current device, peer) ordinals: disabled at cleanup, since it outlives
    /// the case in the context.
    pub peers_enabled: Vec<(i32, i32)>,
    pub notes: Vec<String>,
    // IPC handles, user objects, managed allocations
    pub handles: Handles,
}

/// Creates every declared object, in declaration order, on its device, and the record of each creation.
pub fn create(
    case: &Case,
    device: &DeviceInfo,
    devices: &CaseDevices,
    clock: CaseClock,
) -> (Objects, GateSet, Vec<DeclRecord>) {
    let mut state = Objects {
        execs: BTreeMap::new(),
        retired_execs: Vec::new(),
        graphs: BTreeMap::new(),
        retired_graphs: Vec::new(),
        events: BTreeMap::new(),
        streams: BTreeMap::new(),
        allocations: Vec::new(),
        registered: Vec::new(),
        call_registrations: Vec::new(),
        reader: None,
        buffers: BTreeMap::new(),
        host_contexts: Vec::new(),
        nodes: NodeMap::default(),
        captures: Vec::new(),
        original_modes: Vec::new(),
        graph_records: Vec::new(),
        pools: BTreeMap::new(),
        default_pools: BTreeMap::new(),
        conditions: BTreeMap::new(),
        bodies: BTreeMap::new(),
        graph_memory: Vec::new(),
        graph_freed: Vec::new(),
        devices: devices.clone(),
        placement: BTreeMap::new(),
        peers_enabled: Vec::new(),
        notes: Vec::new(),
        handles: Handles::default(),
    };
    // The stream `read` copies on is created before every declared stream: streams are spread over the hardware
    // queues (CUDA_DEVICE_MAX_CONNECTIONS) in creation order, so it gets a queue of its own in any case with fewer
    // streams than queues, and a read never waits behind a gated stream that happens to share its queue.
    if case.script.iter().any(|op| matches!(op.kind, OpKind::Read { .. })) {
        if let Err(code) = state.reader() {
            state.notes.push(format!("creating the stream `read` copies on returned {}", code));
        }
    }
    let gate_names: Vec<&str> =
        case.decls.iter().filter(|d| matches!(d, Decl::Gate { .. })).map(|d| d.name()).collect();
    let (gates, mut gate_codes) = GateSet::create(&gate_names, clock);
    gate_codes.reverse();
    let mut records = Vec::new();
    for (i, decl) in case.decls.iter().enumerate() {
        let name = decl.name().to_owned();
        let (code, expect) = match decl {
            Decl::Stream { expect, later: true, .. } | Decl::Event { expect, later: true, .. } => {
                state.mark_later(decl);
                (None, expect.as_slice())
            }
            Decl::Buffer { later: true, .. } => {
                state.mark_later(decl);
                (None, &[][..])
            }
            Decl::Stream { expect, .. } | Decl::Event { expect, .. } => {
                (Some(state.create_placed(decl, device, false)), expect.as_slice())
            }
            Decl::Buffer { .. } => (Some(state.create_placed(decl, device, true)), &[][..]),
            Decl::Gate { .. } => (gate_codes.pop(), &[][..]),
            Decl::Thread { .. } | Decl::Process { .. } => (None, &[][..]),
            Decl::Graph { .. } => {
                state.graphs.insert(name.clone(), Slot::Empty);
                (None, &[][..])
            }
            Decl::Exec { .. } => {
                state.execs.insert(name.clone(), Slot::Empty);
                (None, &[][..])
            }
            Decl::Pool { default: true, .. } => match pools::default_pool(device.ordinal) {
                Ok(pool) => {
                    state.default_pools.insert(name.clone(), pool as usize);
                    (Some(sys::cudaError::cudaSuccess), &[][..])
                }
                Err(code) => {
                    state.pools.insert(name.clone(), Slot::NotCreated(code.to_string()));
                    (Some(code), &[][..])
                }
            },
            Decl::Pool { default: false, posix_fd, .. } => {
                (Some(fill(&mut state.pools, &name, pools::create_pool(device.ordinal, *posix_fd))), &[][..])
            }
            Decl::Condition { .. } => (None, &[][..]),
            // A view of memory its buffer (declared above it) already holds: no CUDA call.
            Decl::Slice { of, offset, bytes, .. } => {
                let view = ready(&state.buffers, DeclWord::Buffer.word(), of)
                    .and_then(|parent| Buffer::view(parent, *offset, *bytes));
                let slot = view.map_or_else(Slot::NotCreated, Slot::Ready);
                state.buffers.insert(name.clone(), slot);
                (None, &[][..])
            }
        };
        records.push(DeclRecord {
            name,
            kind: decl_kind(decl).to_owned(),
            line: case.positions.decl_lines.get(i).copied().unwrap_or(0),
            code: code.map(|c| c.to_string()),
            acceptable: crate::case::ast::accepted_codes(expect),
        });
    }
    (state, gates, records)
}

/// `cudaStreamCreateWithPriority`'s priority for a declared priority.
pub fn priority_value(priority: Option<Priority>, device: &DeviceInfo) -> i32 {
    match priority {
        None => 0,
        Some(Priority::Value(p)) => p,
        Some(Priority::Greatest) => device.stream_priority_range.0,
        Some(Priority::Least) => device.stream_priority_range.1,
    }
}

/// Puts the result of a creation into the slot `name`; returns the creation's code.
fn fill<T>(
    slots: &mut BTreeMap<String, Slot<T>>,
    name: &str,
    created: Result<T, sys::cudaError_t>,
) -> sys::cudaError_t {
    let (slot, code) = match created {
        Ok(object) => (Slot::Ready(object), sys::cudaError::cudaSuccess),
        Err(code) => (Slot::NotCreated(code.to_string()), code),
    };
    slots.insert(name.to_owned(), slot);
    code
}

fn event_flags(flags: EventFlags) -> u32 {
    let mut word = 0;
    if flags.disable_timing {
        word |= sys::cudaEventDisableTiming;
    }
    if flags.blocking_sync {
        word |= sys::cudaEventBlockingSync;
    }
    if flags.interprocess {
        word |= sys::cudaEventInterprocess;
    }
    word
}

fn decl_kind(decl: &Decl) -> &'static str {
    decl.word().word()
}

/// The object in slot `name`, or why there is none.
fn ready<'a, T>(slots: &'a BTreeMap<String, Slot<T>>, what: &str, name: &str) -> Result<&'a T, String> {
    match slots.get(name) {
        Some(Slot::Ready(object)) => Ok(object),
        Some(Slot::NotCreated(code)) => Err(format!("{what} {name} was not created ({code})")),
        Some(Slot::Destroyed) => Err(format!("{what} {name} was destroyed earlier in the script")),
        Some(Slot::Empty) => Err(format!("{what} {name} holds nothing")),
        Some(Slot::Later) => Err(format!("{what} {name} is declared `later` and the script has not created it")),
        None => Err(format!("no {what} {name} is declared")),
    }
}

/// The handle in a graph or exec slot: null while it is empty (CUDA judges a null handle itself).
fn handle<T, H>(
    slots: &BTreeMap<String, Slot<T>>,
    what: &str,
    name: &str,
    raw: impl Fn(&T) -> *mut H,
) -> Result<*mut H, String> {
    match slots.get(name) {
        Some(Slot::Empty) => Ok(ptr::null_mut()),
        _ => ready(slots, what, name).map(raw),
    }
}

/// Puts `object` (or nothing) into slot `name`, keeping what it held until cleanup.
fn replace<T>(slots: &mut BTreeMap<String, Slot<T>>, retired: &mut Vec<T>, name: &str, object: Option<T>) {
    let new = object.map_or(Slot::Empty, Slot::Ready);
    if let Some(Slot::Ready(old)) = slots.insert(name.to_owned(), new) {
        retired.push(old);
    }
}

/// Destroys the object in slot `name` through `destroy` (which times the call and says whether it succeeded); on
/// success the slot becomes Destroyed.
fn destroy_in<T: Destroy>(
    slots: &mut BTreeMap<String, Slot<T>>,
    what: &str,
    name: &str,
    destroy: impl FnOnce(&mut dyn FnMut() -> sys::cudaError_t) -> bool,
) -> Result<(), String> {
    ready(slots, what, name)?;
    let Some(Slot::Ready(object)) = slots.get_mut(name) else { return Ok(()) };
    if destroy(&mut || object.destroy()) {
        slots.insert(name.to_owned(), Slot::Destroyed);
    }
    Ok(())
}

impl Objects {
    fn mark_later(&mut self, decl: &Decl) {
        let name = decl.name().to_owned();
        match decl {
            Decl::Stream { .. } => drop(self.streams.insert(name, Slot::Later)),
            Decl::Event { .. } => drop(self.events.insert(name, Slot::Later)),
            Decl::Buffer { .. } => drop(self.buffers.insert(name, Slot::Later)),
            Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Process { .. }
            | Decl::Graph { .. }
            | Decl::Exec { .. }
            | Decl::Pool { .. }
            | Decl::Condition { .. }
            | Decl::Slice { .. } => {}
        }
    }

    /// Creates the stream, event or buffer `decl` declares on the device it names (the case's device if none).
    fn create_placed(&mut self, decl: &Decl, device: &DeviceInfo, initialised: bool) -> sys::cudaError_t {
        let ordinal = self.devices.ordinal(decl.device().unwrap_or(0));
        let devices = self.devices.clone();
        let code = devices.on(ordinal, || self.create_declared(decl, device, initialised));
        self.place(decl.name(), ordinal);
        code
    }

    /// Notes the device `name` was made on, when the case has several.
    pub fn place(&mut self, name: &str, ordinal: i32) {
        if !self.devices.is_single() {
            self.placement.insert(name.to_owned(), ordinal);
        }
    }

    /// The ordinal of the device `name` was made on (the case's device when it has one).
    pub fn device_of(&self, name: &str) -> i32 {
        self.placement.get(name).copied().unwrap_or_else(|| self.devices.ordinal(0))
    }

    /// Creates the stream, event or buffer `decl` declares, into its slot; returns the code of the creation.
    /// `initialised`: buffers made before the script start with the pattern (`INITIAL_BYTE`); `create` in the
    /// script makes only the allocation.
    pub fn create_declared(&mut self, decl: &Decl, device: &DeviceInfo, initialised: bool) -> sys::cudaError_t {
        let name = decl.name();
        match decl {
            Decl::Stream { non_blocking, priority, raw_flags, .. } => {
                let flags = raw_flags.unwrap_or(if *non_blocking { sys::cudaStreamNonBlocking } else { 0 });
                let priority = priority_value(*priority, device);
                fill(&mut self.streams, name, Stream::create(flags, priority))
            }
            Decl::Event { flags, raw_flags, .. } => {
                let flags = raw_flags.unwrap_or_else(|| event_flags(*flags));
                fill(&mut self.events, name, Event::create(flags))
            }
            Decl::Buffer { kind, bytes, .. } => {
                let buffer =
                    if initialised { Buffer::create(*kind, *bytes) } else { Buffer::create_uninit(*kind, *bytes) };
                fill(&mut self.buffers, name, buffer)
            }
            Decl::Gate { .. }
            | Decl::Thread { .. }
            | Decl::Process { .. }
            | Decl::Graph { .. }
            | Decl::Exec { .. }
            | Decl::Pool { .. }
            | Decl::Condition { .. }
            | Decl::Slice { .. } => sys::cudaError::cudaErrorInvalidValue,
        }
    }

    /// Whether slot `name` waits for `create` (declared `later`, not created yet, or destroyed: a second `create`
    /// makes it again).
    pub fn creatable(&self, name: &str) -> bool {
        fn waiting<T>(slot: Option<&Slot<T>>) -> bool {
            matches!(slot, Some(Slot::Later | Slot::Destroyed))
        }
        waiting(self.streams.get(name))
            || waiting(self.events.get(name))
            || waiting(self.buffers.get(name))
            || self.graph_freed.iter().any(|b| b == name)
    }

    /// Puts memory from cudaMallocAsync into buffer slot `name`.
    pub fn set_async_buffer(&mut self, name: &str, raw: *mut std::ffi::c_void, bytes: u64) {
        self.graph_freed.retain(|b| b != name);
        // The slot held nothing, or graph memory a captured free released: never ours to free.
        if let Some(Slot::Ready(old)) =
            self.buffers.insert(name.to_owned(), Slot::Ready(Buffer::from_async(raw, bytes)))
        {
            old.disown();
        }
    }

    /// After a successful cudaFreeAsync of buffer `name`.
    pub fn forget_buffer(&mut self, name: &str) {
        if let Some(Slot::Ready(buffer)) = self.buffers.insert(name.to_owned(), Slot::Destroyed) {
            buffer.disown();
        }
    }

    /// The stream `read` copies device buffers on.
    pub fn reader(&mut self) -> Result<sys::cudaStream_t, sys::cudaError_t> {
        if self.reader.is_none() {
            self.reader = Some(Stream::create(sys::cudaStreamNonBlocking, 0)?);
        }
        Ok(self.reader.as_ref().map_or(ptr::null_mut(), Stream::raw))
    }

    pub fn stream(&self, stream: &StreamRef) -> Result<sys::cudaStream_t, String> {
        match stream {
            StreamRef::Legacy => Ok(sys::cudaStreamLegacy),
            StreamRef::PerThread => Ok(sys::cudaStreamPerThread),
            StreamRef::Null => Ok(ptr::null_mut()),
            StreamRef::Named(name) => ready(&self.streams, DeclWord::Stream.word(), name).map(Stream::raw),
        }
    }

    pub fn event(&self, name: &str) -> Result<sys::cudaEvent_t, String> {
        ready(&self.events, DeclWord::Event.word(), name).map(Event::raw)
    }

    pub fn buffer(&self, name: &str) -> Result<&Buffer, String> {
        ready(&self.buffers, DeclWord::Buffer.word(), name)
    }

    /// Device pointer and word count of a buffer a kernel may use (launches and kernel nodes alike).
    pub fn kernel_buffer(&self, name: &str) -> Result<(*mut u32, u32), String> {
        let buffer = self.buffer(name)?;
        let ptr = buffer.kernel_ptr().ok_or_else(|| format!("kernels cannot use pageable buffer {name}"))?;
        let words = u32::try_from(buffer.words()).map_err(|_| format!("buffer {name} has more than 2^32 words"))?;
        Ok((ptr, words))
    }

    /// Destination, source, byte count and kind of a copy between two buffers (eager copies and memcpy nodes
    /// alike): the kind follows from the buffers' kinds, the count defaults to the smaller buffer.
    pub fn copy_operands(
        &self,
        dst: &str,
        src: &str,
        bytes: Option<u64>,
    ) -> Result<(*mut std::ffi::c_void, *const std::ffi::c_void, usize, sys::cudaMemcpyKind), String> {
        let (d, s) = (self.buffer(dst)?, self.buffer(src)?);
        let n = byte_count(bytes, d.bytes.min(s.bytes))?;
        Ok((d.copy_ptr(), s.copy_ptr().cast_const(), n, memcpy_kind(d.kind, s.kind)))
    }

    /// A graph slot's handle: a conditional node's body (owned by its node) or a graph the case owns.
    pub fn graph(&self, name: &str) -> Result<sys::cudaGraph_t, String> {
        if let Some(&body) = self.bodies.get(name) {
            return Ok(body as sys::cudaGraph_t);
        }
        handle(&self.graphs, DeclWord::Graph.word(), name, Graph::raw)
    }

    /// The slot that owns graph `raw`, if one does.
    pub fn graph_owner(&self, raw: sys::cudaGraph_t) -> Option<String> {
        if raw.is_null() {
            return None;
        }
        if let Some((name, _)) = self.bodies.iter().find(|(_, &b)| b == raw as usize) {
            return Some(name.clone());
        }
        self.graphs.iter().find_map(|(name, slot)| match slot {
            Slot::Ready(g) if g.raw() == raw => Some(name.clone()),
            _ => None,
        })
    }

    pub fn pool(&self, name: &str) -> Result<sys::cudaMemPool_t, String> {
        if let Some(&pool) = self.default_pools.get(name) {
            return Ok(pool as sys::cudaMemPool_t);
        }
        ready(&self.pools, DeclWord::Pool.word(), name).map(MemPool::raw)
    }

    pub fn condition(&self, name: &str) -> Result<sys::compat::cudaGraphConditionalHandle, String> {
        self.conditions.get(name).copied().ok_or_else(|| format!("condition {name} was not created"))
    }

    pub fn exec(&self, name: &str) -> Result<sys::cudaGraphExec_t, String> {
        handle(&self.execs, DeclWord::Exec.word(), name, GraphExec::raw)
    }

    /// Whether `name` is a graph slot (any state: capturing into a destroyed slot fills it again).
    pub fn graph_slot(&self, name: &str) -> Result<(), String> {
        self.graphs.contains_key(name).then_some(()).ok_or_else(|| format!("no graph {name} is declared"))
    }

    /// Whether `name` is an exec slot (any state: instantiating into a destroyed slot fills it again).
    pub fn exec_slot(&self, name: &str) -> Result<(), String> {
        self.execs.contains_key(name).then_some(()).ok_or_else(|| format!("no exec {name} is declared"))
    }

    pub fn set_graph(&mut self, name: &str, graph: Option<Graph>) {
        replace(&mut self.graphs, &mut self.retired_graphs, name, graph);
    }

    pub fn set_exec(&mut self, name: &str, exec: Option<GraphExec>) {
        replace(&mut self.execs, &mut self.retired_execs, name, exec);
    }

    /// `destroy NAME`: `timed` runs the destroy call (and times it). Err when there is nothing to destroy.
    pub fn destroy(
        &mut self,
        name: &str,
        timed: impl FnOnce(&mut dyn FnMut() -> sys::cudaError_t) -> bool,
    ) -> Result<(), String> {
        if self.streams.contains_key(name) {
            destroy_in(&mut self.streams, DeclWord::Stream.word(), name, timed)
        } else if self.events.contains_key(name) {
            destroy_in(&mut self.events, DeclWord::Event.word(), name, timed)
        } else if self.graphs.contains_key(name) {
            destroy_in(&mut self.graphs, DeclWord::Graph.word(), name, timed)
        } else if self.execs.contains_key(name) {
            destroy_in(&mut self.execs, DeclWord::Exec.word(), name, timed)
        } else if self.buffers.contains_key(name) {
            destroy_in(&mut self.buffers, DeclWord::Buffer.word(), name, timed)
        } else {
            Err(format!("{name} is not a stream, event, buffer, graph or exec"))
        }
    }

    /// Releases everything: executables, graphs, events, streams, `malloc` memory, buffers. With
    /// `keep_host_memory` (the final synchronize failed, so a host function might still run), host-visible buffers
    /// and host-call contexts are leaked rather than freed. Returns a note for each release that failed.
    pub fn release(&mut self, keep_host_memory: bool) -> Vec<String> {
        let mut notes = Vec::new();
        let devices = self.devices.clone();
        for (from, to) in std::mem::take(&mut self.peers_enabled) {
            // SAFETY: no pointers.
            let code = devices.on(from, || unsafe { sys::cudaDeviceDisablePeerAccess(to) });
            if code != sys::cudaError::cudaSuccess {
                notes.push(format!("cleanup: disabling the peer access of ordinal {from} to {to} returned {}", code));
            }
        }
        // IPC mappings close before any memory is freed; user-object references go back.
        self.handles.release(&mut notes);
        let placement = std::mem::take(&mut self.placement);
        let on = |name: &str, f: &mut dyn FnMut() -> sys::cudaError_t| {
            devices.on(placement.get(name).copied().unwrap_or_else(|| devices.ordinal(0)), f)
        };
        let mut check = |what: String, code: sys::cudaError_t| {
            if code != sys::cudaError::cudaSuccess {
                notes.push(format!("cleanup: releasing {what} returned {}", code));
            }
        };
        for (name, exec) in take_ready(&mut self.execs) {
            check(format!("exec {name}"), exec.release());
        }
        for exec in self.retired_execs.drain(..) {
            check("a replaced exec".to_owned(), exec.release());
        }
        for (name, graph) in take_ready(&mut self.graphs) {
            check(format!("graph {name}"), graph.release());
        }
        for graph in self.retired_graphs.drain(..) {
            check("a replaced graph".to_owned(), graph.release());
        }
        for (name, event) in take_ready(&mut self.events) {
            let mut event = Some(event);
            check(format!("event {name}"), on(&name, &mut || event.take().map_or(SUCCESS, Event::release)));
        }
        for (name, stream) in take_ready(&mut self.streams) {
            let mut stream = Some(stream);
            check(format!("stream {name}"), on(&name, &mut || stream.take().map_or(SUCCESS, Stream::release)));
        }
        if let Some(reader) = self.reader.take() {
            check("the read stream".to_owned(), reader.release());
        }
        for name in std::mem::take(&mut self.registered) {
            if let Ok(buffer) = ready(&self.buffers, DeclWord::Buffer.word(), &name) {
                // SAFETY: the pageable buffer's host pointer, registered by the script and still alive.
                check(format!("the registration of {name}"), unsafe { sys::cudaHostUnregister(buffer.copy_ptr()) });
            }
        }
        // A registration the script left: the buffer under it is freed next, and in a worker that runs other
        // cases the range would stay registered with the driver, pages the process no longer owns; a later case's
        // allocation at those addresses is then registered memory to the driver (a case's read-back into it
        // returned cudaErrorInvalidValue three runs of three, after a row that registered a pageable buffer during
        // a relaxed capture: results/2026-11-28_node-time-3). Already unregistered (by a word the list does not
        // follow) is no fault of the case's.
        for base in std::mem::take(&mut self.call_registrations) {
            // SAFETY: the base address of a range cudaHostRegister accepted; its memory is still alive here.
            let code = unsafe { sys::cudaHostUnregister(base as *mut std::ffi::c_void) };
            if code != sys::cudaError::cudaErrorHostMemoryNotRegistered {
                check(format!("the registration at {base:#x} (a call's)"), code);
            }
        }
        for memory in self.allocations.drain(..) {
            check("memory from malloc".to_owned(), memory.release());
        }
        for (name, buffer) in take_ready(&mut self.buffers) {
            if self.graph_memory.contains(&name) {
                // A graph's memory-allocation node owns it; freeing a graph address the graph did not allocate
                // yet (or freed already) would be an error of ours, not the runtime's.
                buffer.disown();
                continue;
            }
            if keep_host_memory && buffer.host_words().is_some() {
                buffer.leak();
            } else {
                let mut buffer = Some(buffer);
                check(format!("buffer {name}"), on(&name, &mut || buffer.take().map_or(SUCCESS, Buffer::release)));
            }
        }
        for (name, pool) in take_ready(&mut self.pools) {
            check(format!("pool {name}"), pool.release());
        }
        let contexts = std::mem::take(&mut self.host_contexts);
        if keep_host_memory {
            contexts.into_iter().for_each(std::mem::forget);
        }
        notes
    }
}

const SUCCESS: sys::cudaError_t = sys::cudaError::cudaSuccess;

/// The ready objects of `slots`, taken out (the slots become Destroyed).
fn take_ready<T>(slots: &mut BTreeMap<String, Slot<T>>) -> Vec<(String, T)> {
    let mut out = Vec::new();
    for (name, slot) in slots.iter_mut() {
        if let Slot::Ready(object) = std::mem::replace(slot, Slot::Destroyed) {
            out.push((name.clone(), object));
        }
    }
    out
}
