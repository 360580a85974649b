//! Semantic checks of parsed cases, before any GPU work: every name resolves to a declaration of the right kind,
//! labels are unique and exist where expectations use them, kernels never touch pageable memory, and the script
//! can finish (no host-blocking call that would wait forever for a gate nobody opened).

use super::ast::*;
use super::diagnostic::{did_you_mean, Diagnostic};
use super::placement::current_devices;
use super::words::Word;
use cuda_sys::cudaError;
use std::collections::{HashMap, HashSet};

/// Every problem in `file`, in source order. Empty means valid.
pub fn validate(file: &CaseFile) -> Vec<Diagnostic> {
    let area = std::path::Path::new(&file.path).file_stem().and_then(|s| s.to_str()).unwrap_or("").to_owned();
    let mut out = Vec::new();
    for case in &file.cases {
        Checker::new(case, &file.path, &mut out).run(&area);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stream,
    Event,
    Buffer(MemKind),
    Gate,
    Thread,
    Graph,
    Exec,
    Pool,
    Condition,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Stream => "a stream",
            Kind::Event => "an event",
            Kind::Buffer(_) => "a buffer",
            Kind::Gate => "a gate",
            Kind::Thread => "a thread",
            Kind::Graph => "a graph",
            Kind::Exec => "an exec",
            Kind::Pool => "a pool",
            Kind::Condition => "a condition",
        }
    }

    fn same(self, other: Kind) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

pub(super) struct Checker<'c, 'o> {
    pub(super) case: &'c Case,
    file: &'c str,
    out: &'o mut Vec<Diagnostic>,
    names: HashMap<&'c str, Kind>,
    /// label → index of the op.
    labels: HashMap<&'c str, usize>,
}

impl<'c, 'o> Checker<'c, 'o> {
    fn new(case: &'c Case, file: &'c str, out: &'o mut Vec<Diagnostic>) -> Self {
        Checker { case, file, out, names: HashMap::new(), labels: HashMap::new() }
    }

    pub(super) fn report(&mut self, line: u32, message: String) {
        self.out.push(Diagnostic { file: self.file.to_owned(), line, col: 1, message });
    }

    pub(super) fn op_line(&self, i: usize) -> u32 {
        self.case.positions.op_lines.get(i).copied().unwrap_or(self.case.positions.case_line)
    }

    fn run(mut self, area: &str) {
        let case = self.case;
        if !area.is_empty() && case.area() != area {
            self.report(
                case.positions.case_line,
                format!("case `{}` is in area `{}` but in file `{area}.case`", case.id, case.area()),
            );
        }
        self.declarations();
        self.devices();
        self.codes(case.positions.case_line, &case.poisons);
        self.operations();
        if let Some(from) = case.timing.as_ref().and_then(|t| t.from.as_ref()) {
            self.label(case.positions.case_line, from);
        }
        self.later_objects_created();
        self.expectations();
        self.gates_can_finish();
    }

    fn declarations(&mut self) {
        for (i, decl) in self.case.decls.iter().enumerate() {
            let line = self.case.positions.decl_lines.get(i).copied().unwrap_or(0);
            let kind = match decl {
                Decl::Stream { expect, .. } | Decl::Event { expect, .. } => {
                    self.codes(line, expect);
                    if matches!(decl, Decl::Stream { .. }) {
                        Kind::Stream
                    } else {
                        Kind::Event
                    }
                }
                Decl::Buffer { kind, bytes, later, device, .. } => {
                    if *bytes == 0 || bytes % 4 != 0 {
                        self.report(line, format!("buffer size {bytes} is not a positive multiple of 4 bytes"));
                    }
                    if device.is_some() && *kind != MemKind::Device {
                        self.report(
                            line,
                            format!("`device N` places device memory; a {} buffer is host memory", kind.word()),
                        );
                    }
                    if *later && *kind == MemKind::Pageable {
                        self.report(line, "a pageable buffer cannot be `later`: creating it is no CUDA call".into());
                    }
                    Kind::Buffer(*kind)
                }
                Decl::Gate { .. } => Kind::Gate,
                // A process is where operations run, as a thread is: `@NAME` names either.
                Decl::Thread { .. } | Decl::Process { .. } => Kind::Thread,
                Decl::Graph { .. } => Kind::Graph,
                Decl::Exec { .. } => Kind::Exec,
                Decl::Pool { .. } => Kind::Pool,
                Decl::Condition { .. } => Kind::Condition,
                Decl::Slice { of, offset, bytes, .. } => self.slice(line, of, *offset, *bytes),
            };
            if self.names.insert(decl.name(), kind).is_some() {
                self.report(line, format!("`{}` is declared twice", decl.name()));
            }
        }
    }

    /// `slice NAME of BUF at OFFSET size BYTES`: BUF a buffer declared above it (not `later`: a slice needs memory
    /// from the start), the range whole words inside it. The slice has BUF's kind.
    fn slice(&mut self, line: u32, of: &str, offset: u64, bytes: u64) -> Kind {
        let parent = self.case.decls.iter().find_map(|d| match d {
            Decl::Buffer { name, kind, bytes, later, .. } if name == of => Some((*kind, *bytes, *later)),
            _ => None,
        });
        let Some((kind, size, later)) = parent.filter(|_| matches!(self.names.get(of), Some(Kind::Buffer(_)))) else {
            let hint =
                did_you_mean(of, self.names.iter().filter(|(_, k)| matches!(k, Kind::Buffer(_))).map(|(n, _)| *n));
            self.report(line, format!("a slice needs a buffer declared above it; `{of}` is not one{hint}"));
            return Kind::Buffer(MemKind::Device);
        };
        if later {
            self.report(line, format!("cannot slice `later` buffer `{of}`: a slice needs its memory from the start"));
        }
        if bytes == 0 || bytes % 4 != 0 || offset % 4 != 0 {
            self.report(line, format!("a slice is whole words: offset {offset} and size {bytes} must be multiples of 4, the size positive"));
        } else if offset.checked_add(bytes).is_none_or(|end| end > size) {
            self.report(line, format!("the slice [{offset}, {offset} + {bytes}) is not inside `{of}` ({size} bytes)"));
        }
        Kind::Buffer(kind)
    }

    /// Whether `name` is a slice declaration.
    fn is_slice(&self, name: &str) -> bool {
        self.case.decls.iter().any(|d| matches!(d, Decl::Slice { name: n, .. } if n == name))
    }

    /// Whether some slice is a view of buffer `name`.
    fn has_slices(&self, name: &str) -> bool {
        self.case.decls.iter().any(|d| matches!(d, Decl::Slice { of, .. } if of == name))
    }

    /// A buffer whose memory the operation frees or registers: a whole buffer, not a slice, and not one that slices
    /// still view.
    fn whole_buffer(&mut self, line: u32, name: &str, what: &str) {
        if self.is_slice(name) {
            self.report(line, format!("cannot {what} slice `{name}`: it is part of another buffer"));
        } else if self.has_slices(name) {
            self.report(line, format!("cannot {what} `{name}`: slices of it would be left pointing at freed memory"));
        }
    }

    /// Device indices: each one the case names must be granted by `requires: devices >= N`, `peer-access` needs two
    /// devices, and a `later` object is made on the current device of the thread that runs `create`, so it names
    /// none.
    fn devices(&mut self) {
        let case = self.case;
        let granted = case.devices_required();
        let needs = |d: u32| {
            format!("device {d} needs `requires: devices >= {}` (devices are numbered from the case's own, 0)", d + 1)
        };
        for (i, decl) in case.decls.iter().enumerate() {
            let line = case.positions.decl_lines.get(i).copied().unwrap_or(0);
            match decl.device() {
                Some(_) if decl.is_later() => self.report(
                    line,
                    format!(
                        "`{}` is `later`: `create` makes it on the current device of its thread (use `set-device N` \
                         before it), so the declaration names no device",
                        decl.name()
                    ),
                ),
                Some(d) if d >= granted => self.report(line, needs(d)),
                _ => {}
            }
        }
        for (i, op) in case.script.iter().enumerate() {
            if let Some(d) = op.kind.facts().devices.into_iter().find(|&d| d >= granted) {
                let line = self.op_line(i);
                self.report(line, needs(d));
            }
        }
        if case.requires.contains(&Requirement::PeerAccess) && granted < 2 {
            self.report(case.positions.case_line, "`peer-access` is between devices: add `devices >= 2`".into());
        }
    }

    /// Checks that `name` is declared as `want`; returns its kind if so.
    fn name(&mut self, line: u32, name: &str, want: Kind) -> Option<Kind> {
        match self.names.get(name).copied() {
            Some(k) if k.same(want) => Some(k),
            Some(k) => {
                self.report(line, format!("`{name}` is {}, expected {}", k.noun(), want.noun()));
                None
            }
            None => {
                let same_kind: Vec<&str> = self.names.iter().filter(|(_, k)| k.same(want)).map(|(n, _)| *n).collect();
                let hint = did_you_mean(name, same_kind);
                self.report(line, format!("undeclared {} `{name}`{hint}", &want.noun()[2..].trim_start()));
                None
            }
        }
    }

    fn stream(&mut self, line: u32, s: &StreamRef) {
        if let StreamRef::Named(n) = s {
            self.name(line, n, Kind::Stream);
        }
    }

    /// A buffer a kernel reads or writes: anything but pageable memory.
    fn kernel_buffer(&mut self, line: u32, name: &str) {
        if let Some(Kind::Buffer(MemKind::Pageable)) = self.name(line, name, Kind::Buffer(MemKind::Device)) {
            self.report(line, format!("kernels cannot access pageable buffer `{name}`: use device, pinned or mapped"));
        }
    }

    fn codes(&mut self, line: u32, codes: &[String]) {
        for code in codes {
            self.code(line, code);
        }
    }

    fn code(&mut self, line: u32, code: &str) {
        // A case that requires a newer runtime than this build's header may name that runtime's codes (12.3's
        // cudaErrorLossyQuery in a 12.0 build); it is not-supported where the build's runtime lacks them.
        let newer = crate::api::header_version()
            .is_some_and(|h| self.case.requires.iter().any(|r| matches!(r, Requirement::Runtime(v) if *v > h)));
        // `=> any` (a sweep row's `observe`) accepts every code.
        if cudaError::from_name(code).is_none() && code != "any" && !newer {
            let hint = did_you_mean(code, cudaError::named().map(|(name, _)| name));
            self.report(line, format!("`{code}` is not a cudaError name of this runtime{hint}"));
        }
    }

    fn operations(&mut self) {
        let case = self.case;
        for (i, op) in case.script.iter().enumerate() {
            let line = self.op_line(i);
            if let Some(label) = &op.label {
                if self.names.contains_key(label.as_str()) {
                    self.report(line, format!("label `{label}` is also a declared name"));
                }
                if self.labels.insert(label, i).is_some() {
                    self.report(line, format!("label `{label}` is used twice"));
                }
            }
            if let Some(t) = &op.thread {
                self.name(line, t, Kind::Thread);
            }
            self.codes(line, &op.expect);
            // A user object is named by its operation's label.
            if matches!(op.kind, OpKind::UserObject | OpKind::VkMemory { .. } | OpKind::VkSemaphore { .. })
                && op.label.is_none()
            {
                let word = op.kind.word().word();
                self.report(line, format!("`{word}` needs a label: later operations name the object by it"));
            }
            self.operands(line, &op.kind);
            if let OpKind::Launch { kernel: KernelCall::DeviceLaunch { exec, .. }, .. } = &op.kind {
                // The kernel takes the executable graph's handle as its argument (also when the launch is
                // captured: a kernel node keeps its arguments' values), so the handle must exist by then.
                let instantiated = case.script[..i]
                    .iter()
                    .any(|earlier| matches!(&earlier.kind, OpKind::Instantiate { exec: e, .. } if e == exec));
                if !instantiated {
                    self.report(
                        line,
                        format!(
                            "`device-launch {exec}` passes {exec}'s handle to the kernel: instantiate {exec} earlier in \
                             the script"
                        ),
                    );
                }
            }
            if op.repeat > 1 && !repeatable(&op.kind) {
                self.report(
                    line,
                    "`repeat` runs kernel launches (spin, vecadd, sincos, sleep), copies, memsets, graph launches, \
                     records and waits; this operation's record could not stand for several calls"
                        .into(),
                );
            }
        }
    }

    /// Every name and label the operation uses is of the kind its row of facts says; then the rules of the few
    /// operations with more to check than their names.
    fn operands(&mut self, line: u32, kind: &OpKind) {
        for operand in kind.facts().operands {
            let (name, want) = match operand {
                Operand::Stream(s) => {
                    self.stream(line, s);
                    continue;
                }
                Operand::KernelBuffer(buf) => {
                    self.kernel_buffer(line, buf);
                    continue;
                }
                Operand::Node(label) => {
                    self.node_label(line, label);
                    continue;
                }
                // A handle or user object, named by the operation that made it
                Operand::Made(label, word) => {
                    if let Some(kind) = self.label(line, label) {
                        // A call's `L.param` may also name what another operation offers (`call_output`).
                        let call_of_an_offer = word == OpWord::Call && !offered(kind).is_empty();
                        if kind.word() != word && !call_of_an_offer {
                            self.report(
                                line,
                                format!("`{label}` names a `{}` operation, not `{}`", kind.word().word(), word.word()),
                            );
                        }
                    }
                    continue;
                }
                Operand::Event(name) => (name, Kind::Event),
                Operand::Buffer(name) => (name, Kind::Buffer(MemKind::Device)),
                Operand::Gate(name) => (name, Kind::Gate),
                Operand::Graph(name) => (name, Kind::Graph),
                Operand::Exec(name) => (name, Kind::Exec),
                Operand::Pool(name) => (name, Kind::Pool),
                Operand::Condition(name) => (name, Kind::Condition),
            };
            self.name(line, name, want);
        }
        self.operation_rules(line, kind);
    }

    /// The declared kind of buffer `name`, once its operand check passed.
    fn buffer_kind(&self, name: &str) -> Option<MemKind> {
        match self.names.get(name) {
            Some(Kind::Buffer(kind)) => Some(*kind),
            _ => None,
        }
    }

    /// Rules beyond the kinds of the operands: sizes, memory kinds, what `create` and `destroy` may name. Most
    /// operations have none.
    fn operation_rules(&mut self, line: u32, kind: &OpKind) {
        match kind {
            OpKind::CaptureDeps { count, nodes, .. } if !nodes.is_empty() && nodes.len() != *count as usize => {
                self.report(line, format!("{} nodes named for a count of {count}", nodes.len()));
            }
            OpKind::HostFunc { snapshot: Some(buf), .. } if self.buffer_kind(buf) == Some(MemKind::Device) => {
                self.report(line, format!("a host function cannot read device buffer `{buf}`"));
            }
            OpKind::Memcpy { dst, src, bytes, .. } => self.within(line, bytes, &[dst, src]),
            OpKind::MemcpyPeer { dst, src, bytes, .. } => {
                for buf in [dst, src] {
                    if let Some(kind) = self.buffer_kind(buf).filter(|&k| k != MemKind::Device) {
                        self.report(
                            line,
                            format!("a peer copy is between device buffers; `{buf}` is {} memory", kind.word()),
                        );
                    }
                }
                self.within(line, bytes, &[dst, src]);
            }
            OpKind::Memset { buf, bytes, .. } => self.within(line, bytes, &[buf]),
            OpKind::Call(call) => {
                for (op, param) in call.outputs_used() {
                    self.call_output(line, op, param);
                }
            }
            OpKind::AddNode { node, .. } => self.node_spec(line, node),
            OpKind::List { room, .. } if room.is_some_and(|r| r > 1024) => {
                self.report(line, "a room of more than 1024 entries".into());
            }
            OpKind::SetNode { node, spec, .. } => {
                self.node_spec(line, spec);
                let added = self.labels.get(node.as_str()).map(|&i| &self.case.script[i].kind);
                if let Some(OpKind::AddNode { node: added, .. }) = added {
                    if added.word() != spec.word() {
                        self.report(
                            line,
                            format!("`{node}` is a {} node, not a {} node", added.word().word(), spec.word().word()),
                        );
                    }
                }
            }
            OpKind::Destroy { name } if self.is_slice(name) || self.has_slices(name) => {
                self.whole_buffer(line, name, "destroy")
            }
            OpKind::Destroy { name } => match self.names.get(name.as_str()) {
                Some(Kind::Buffer(MemKind::Pageable)) => {
                    self.report(line, format!("cannot destroy pageable buffer `{name}`: freeing it is no CUDA call"))
                }
                Some(Kind::Stream | Kind::Event | Kind::Graph | Kind::Exec | Kind::Buffer(_)) => {}
                Some(k) => self.report(line, format!("cannot destroy `{name}`: it is {}", k.noun())),
                None => self.report(line, format!("undeclared name `{name}`")),
            },
            OpKind::Create { name } => {
                let later = self.case.decls.iter().any(|d| d.name() == name && d.is_later());
                match self.names.get(name.as_str()) {
                    None => self.report(line, format!("undeclared name `{name}`")),
                    Some(Kind::Graph) => {}
                    Some(_) if !later => self.report(
                        line,
                        format!("`create {name}` needs a graph, or a `later` stream, event or buffer declaration"),
                    ),
                    Some(_) => {}
                }
            }
            OpKind::MallocAsync { buf, .. } | OpKind::FreeAsync { buf, .. } => self.async_buffer(line, kind, buf),
            OpKind::Register { buf } | OpKind::Unregister { buf } => {
                self.whole_buffer(line, buf, "register or unregister");
                if self.buffer_kind(buf).is_some_and(|k| k != MemKind::Pageable) {
                    self.report(line, format!("only pageable buffers are registered; `{buf}` is not"));
                }
            }
            OpKind::SetLimit { value: 0, .. } => self.report(line, "a limit of 0 bytes".into()),
            OpKind::Malloc { bytes: 0 } => self.report(line, "malloc of 0 bytes".into()),
            // An imported event fills a `later` slot
            OpKind::IpcOpenEvent { into, .. } if !self.case.decls.iter().any(|d| d.name() == into && d.is_later()) => {
                self.report(line, format!("`ipc-open-event ... into {into}` needs a `later` event declaration"));
            }
            // Device indices are checked by `devices`, from the `devices` column.
            _ => {}
        }
    }

    /// `malloc-async` / `free-async` of BUF.
    fn async_buffer(&mut self, line: u32, op: &OpKind, buf: &str) {
        if self.buffer_kind(buf).is_some_and(|k| k != MemKind::Device) {
            self.report(line, format!("stream-ordered allocation needs a device buffer; `{buf}` is not"));
        }
        if matches!(op, OpKind::FreeAsync { .. }) {
            self.whole_buffer(line, buf, "free");
        }
        let later = self.case.decls.iter().any(|d| d.name() == buf && d.is_later());
        if matches!(op, OpKind::MallocAsync { .. }) && !later {
            self.report(line, format!("`malloc-async {buf}` needs a `later` buffer declaration"));
        }
    }

    /// A label that names a graph node: an `add-node` operation, or an operation captured into a graph.
    fn node_label(&mut self, line: u32, label: &str) -> Option<&'c OpKind> {
        let kind = self.label(line, label)?;
        if !matches!(kind, OpKind::AddNode { .. }) && kind.capture_stream().is_none() {
            self.report(line, format!("`{label}` names no graph node: label an `add-node` or a captured operation"));
        }
        Some(kind)
    }

    fn node_spec(&mut self, line: u32, spec: &NodeSpec) {
        let buffer = Kind::Buffer(MemKind::Device);
        match spec {
            NodeSpec::Kernel(k) => {
                match k {
                    NodeKernel::Gate { gate } => {
                        self.name(line, gate, Kind::Gate);
                    }
                    NodeKernel::SetCondition { condition, .. } | NodeKernel::Countdown { condition, .. } => {
                        self.name(line, condition, Kind::Condition);
                    }
                    NodeKernel::Spin { .. } | NodeKernel::Fill { .. } | NodeKernel::Transform { .. } => {}
                }
                for buf in k.buffers() {
                    self.kernel_buffer(line, buf);
                }
            }
            NodeSpec::Memcpy { dst, src, bytes } => {
                self.name(line, dst, buffer);
                self.name(line, src, buffer);
                self.within(line, bytes, &[dst, src]);
            }
            NodeSpec::Memset { buf, bytes, .. } => {
                self.name(line, buf, buffer);
                self.within(line, bytes, &[buf]);
            }
            NodeSpec::Host | NodeSpec::Empty => {}
            NodeSpec::EventRecord { event } | NodeSpec::WaitEvent { event } => {
                self.name(line, event, Kind::Event);
            }
            NodeSpec::Child { graph } => {
                self.name(line, graph, Kind::Graph);
            }
            NodeSpec::MemAlloc { buf } | NodeSpec::MemFree { buf } => {
                if let Some(Kind::Buffer(kind)) = self.name(line, buf, buffer) {
                    if kind != MemKind::Device {
                        self.report(
                            line,
                            format!("memory nodes allocate device memory; `{buf}` is not a device buffer"),
                        );
                    }
                }
                if matches!(spec, NodeSpec::MemAlloc { .. })
                    && !self.case.decls.iter().any(|d| d.name() == buf && d.is_later())
                {
                    self.report(line, format!("`mem-alloc {buf}` needs a `later` buffer declaration"));
                }
            }
            NodeSpec::Conditional { condition, size, bodies, .. } => {
                self.name(line, condition, Kind::Condition);
                for body in bodies {
                    self.name(line, body, Kind::Graph);
                }
                if (*size as usize) < bodies.len() {
                    self.report(line, format!("size {size} is smaller than the {} bodies named", bodies.len()));
                }
            }
        }
    }

    /// Every `later` object must be created by the script: an operation on an object that does not exist is not
    /// run, and a case that runs nothing it claims to cannot fail.
    fn later_objects_created(&mut self) {
        let case = self.case;
        for (i, decl) in case.decls.iter().enumerate().filter(|(_, d)| d.is_later()) {
            let name = decl.name();
            let created = case.script.iter().any(|op| match &op.kind {
                OpKind::Create { name: n } | OpKind::MallocAsync { buf: n, .. } => n == name,
                OpKind::AddNode { node: NodeSpec::MemAlloc { buf: n }, .. } => n == name,
                // An imported event fills its slot.
                OpKind::IpcOpenEvent { into: n, .. } | OpKind::IpcOpenMem { into: Some(n), .. } => n == name,
                _ => false,
            });
            if !created {
                let line = case.positions.decl_lines.get(i).copied().unwrap_or(0);
                self.report(line, format!("`{name}` is declared `later` but never created (`create {name}`)"));
            }
        }
    }

    /// An explicit byte count must fit the buffers it touches.
    fn within(&mut self, line: u32, bytes: &Option<u64>, bufs: &[&String]) {
        let Some(bytes) = bytes else { return };
        for buf in bufs {
            if let Some(size) = self.buffer_size(buf) {
                if *bytes > size {
                    self.report(line, format!("{bytes} bytes exceed buffer `{buf}` ({size} bytes)"));
                }
            }
        }
    }

    pub(super) fn is_buffer(&self, name: &str) -> bool {
        self.buffer_size(name).is_some()
    }

    fn buffer_size(&self, name: &str) -> Option<u64> {
        self.case.decls.iter().find_map(|d| match d {
            Decl::Buffer { name: n, bytes, .. } | Decl::Slice { name: n, bytes, .. } if n == name => Some(*bytes),
            _ => None,
        })
    }

    /// The op a label names, if it exists (else reported).
    fn label(&mut self, line: u32, label: &str) -> Option<&'c OpKind> {
        match self.labels.get(label) {
            Some(&i) => Some(&self.case.script[i].kind),
            None => {
                let hint = did_you_mean(label, self.labels.keys().copied());
                self.report(line, format!("no operation is labelled `{label}`{hint}"));
                None
            }
        }
    }

    fn kernel_label(&mut self, line: u32, label: &str) {
        if let Some(k) = self.label(line, label) {
            if !k.is_kernel_launch() {
                self.report(line, format!("`{label}` is not a kernel launch: it has no device stamps"));
            }
        }
    }

    /// Stamps are `%globaltimer` readings of the GPU that ran the kernel: two GPUs' timers are different clocks, so
    /// kernels launched on different devices cannot be ordered by their stamps.
    fn same_clock(&mut self, line: u32, a: &str, b: &str) {
        let (Some(&i), Some(&j)) = (self.labels.get(a), self.labels.get(b)) else { return };
        let devices = current_devices(self.case);
        if devices[i] != devices[j] {
            self.report(
                line,
                format!(
                    "`{a}` runs on device {} and `{b}` on device {}: their stamps come from different GPUs' clocks; \
                     order them by data, gates or queries",
                    devices[i], devices[j]
                ),
            );
        }
    }

    fn filled_graph(&mut self, line: u32, graph: &str) {
        if self.name(line, graph, Kind::Graph).is_none() {
            return;
        }
        let filled = self.case.script.iter().any(|op| match &op.kind {
            OpKind::EndCapture { graph: g, .. } | OpKind::Create { name: g } | OpKind::Clone { copy: g, .. } => {
                g == graph
            }
            OpKind::AddNode { node: NodeSpec::Conditional { bodies, .. }, .. } => bodies.iter().any(|b| b == graph),
            _ => false,
        });
        if !filled {
            self.report(line, format!("graph `{graph}` is never made (`end-capture ... into {graph}`, `create {graph}`, `clone {graph} from ...`)"));
        }
    }

    fn expectations(&mut self) {
        let case = self.case;
        for (i, e) in case.expects.iter().enumerate() {
            let line = case.positions.expect_lines.get(i).copied().unwrap_or(0);
            match e {
                Expectation::Expect(p) | Expectation::Quality(p) => self.predicate(line, p),
                Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
                    let mut seen = HashSet::new();
                    for (name, p) in alternatives {
                        if !seen.insert(name) {
                            self.report(line, format!("variant `{name}` is named twice"));
                        }
                        self.predicate(line, p);
                    }
                }
                Expectation::Measure(m) => {
                    let earlier =
                        case.expects[..i].iter().any(|e| matches!(e, Expectation::Measure(o) if o.name == m.name));
                    if earlier {
                        self.report(line, format!("measure `{}` is named twice", m.name));
                    }
                    self.measure(line, &m.of);
                }
            }
        }
    }

    /// The labels a measure reads exist, come in script order, and have what it needs: device times (every copy,
    /// memset and launch under `timing: events`, otherwise only kernel launches, by their stamps), copies for a
    /// bandwidth, kernels for `busy`.
    fn measure(&mut self, line: u32, of: &MeasureOf) {
        let mut indices = Vec::new();
        for label in of.labels() {
            if self.label(line, label).is_some() {
                indices.push(self.labels[label.as_str()]);
            }
        }
        if indices.len() != of.labels().len() {
            return;
        }
        let timed = self.case.timing.is_some();
        let script = &self.case.script;
        let device_time = |i: usize| script[i].kind.is_kernel_launch() || self.case.is_timed(i);
        let range = |from: usize, to: usize| &script[from..=to.max(from)];
        match of {
            MeasureOf::Elapsed { label } => {
                if !matches!(script[indices[0]].kind, OpKind::Elapsed { .. }) {
                    self.report(line, format!("`{label}` is not an elapsed operation"));
                }
            }
            MeasureOf::Host { .. } => {}
            MeasureOf::Value { label } => {
                if !script[indices[0]].kind.facts().value {
                    self.report(line, format!("`{label}` records no number (see `L value` in cases/README.md)"));
                }
            }
            MeasureOf::Bandwidth { .. } if !timed => {
                self.report(line, "a bandwidth needs `timing: events` (copies have no device stamps)".into());
            }
            MeasureOf::Device { .. } | MeasureOf::Bandwidth { .. } | MeasureOf::Busy { .. } => {
                let (from, to) = (indices[0], *indices.last().unwrap_or(&indices[0]));
                if to < from {
                    self.report(line, "`A to B`: B comes before A in the script".into());
                    return;
                }
                for (i, label) in [(from, of.labels()[0]), (to, *of.labels().last().unwrap_or(&of.labels()[0]))] {
                    if !device_time(i) {
                        let why = if timed {
                            "it does no device work"
                        } else {
                            "without `timing: events` only kernel launches have device times"
                        };
                        self.report(line, format!("`{label}` has no device time: {why}"));
                    }
                }
                if matches!(of, MeasureOf::Bandwidth { .. })
                    && !range(from, to)
                        .iter()
                        .any(|o| matches!(o.kind, OpKind::Memcpy { .. } | OpKind::MemcpyPeer { .. }))
                {
                    self.report(line, "no copy between these operations to measure the bandwidth of".into());
                }
                if matches!(of, MeasureOf::Busy { .. }) && !range(from, to).iter().any(|o| o.kind.is_kernel_launch()) {
                    self.report(line, "no kernel launch between these operations to be busy with".into());
                }
            }
            MeasureOf::Spread { labels } => {
                if labels.len() < 3 {
                    self.report(line, "a spread needs at least 3 operations".into());
                }
                for (&i, label) in indices.iter().zip(labels) {
                    if !device_time(i) {
                        self.report(line, format!("`{label}` has no device time to spread"));
                    }
                }
            }
        }
    }

    /// The operation a value predicate names, which must be of the kinds `fits` accepts.
    fn valued_label(&mut self, line: u32, label: &str, what: &str, fits: fn(&OpKind) -> bool) {
        if let Some(kind) = self.label(line, label) {
            if !fits(kind) {
                self.report(line, format!("`{label}` has no {what}"));
            }
        }
    }

    /// `op.param` (an expectation's value, or a later call's argument) names an output parameter of call `op`.
    fn call_output(&mut self, line: u32, op: &str, param: &str) {
        match self.label(line, op) {
            Some(OpKind::Call(call)) => {
                // A call an older header lacks is not run; what it would write is not known here.
                if call.unresolved.is_some() {
                    return;
                }
                let row = crate::api::function(&call.function);
                let is_out = row.is_some_and(|r| {
                    r.params.iter().any(|p| p.name == param && p.class == crate::api::ParamClass::Out)
                });
                if !is_out {
                    let outs: Vec<&str> = row
                        .map(|r| r.params.iter().filter(|p| p.class == crate::api::ParamClass::Out).map(|p| p.name))
                        .into_iter()
                        .flatten()
                        .collect();
                    self.report(
                        line,
                        format!("`{op}` has no output `{param}` ({}; its outputs: {})", call.function, outs.join(", ")),
                    );
                }
            }
            Some(kind) if offered(kind).contains(&param) => {}
            Some(kind) if !offered(kind).is_empty() => {
                let word = kind.word().word();
                self.report(line, format!("`{op}.{param}`: `{word}` offers {}", offered(kind).join(", ")))
            }
            Some(_) => self.report(line, format!("`{op}.{param}`: `{op}` is not a call")),
            None => {}
        }
    }

    fn predicate(&mut self, line: u32, p: &Predicate) {
        match p {
            Predicate::Value { label, .. } => {
                // Which operations record one is their `value` column in the table of facts; `L.param` is an
                // output of call L.
                match label.split_once('.') {
                    Some((op, param)) => self.call_output(line, op, param),
                    None => self.valued_label(line, label, "value", |k| k.facts().value),
                }
            }
            Predicate::NullPadded { label } => {
                self.valued_label(line, label, "list", |k| matches!(k, OpKind::List { .. }))
            }
            Predicate::Result { label, result } => {
                let Some(kind) = self.label(line, label) else { return };
                let known = match kind {
                    OpKind::Instantiate { with_params: true, .. } => InstantiateResult::from_word(result).is_some(),
                    OpKind::Update { .. } => UpdateResult::from_word(result).is_some(),
                    _ => {
                        self.report(
                            line,
                            format!("`{label}` records no result: use `instantiate ... with-params` or `update`"),
                        );
                        return;
                    }
                };
                if !known {
                    self.report(line, format!("`{result}` is not a result of `{label}`"));
                }
            }
            Predicate::ErrorNode { label, from, node } => {
                let fits: fn(&OpKind) -> bool = if *from {
                    |k| matches!(k, OpKind::Update { .. })
                } else {
                    |k| matches!(k, OpKind::Update { .. } | OpKind::Instantiate { with_params: true, .. })
                };
                self.valued_label(line, label, "result info (update, instantiate ... with-params)", fits);
                if let Some(n) = node {
                    self.node_label(line, n);
                }
            }
            Predicate::SameAddress { a, b, .. } => {
                for l in [a, b] {
                    self.valued_label(line, l, "address (malloc-async, add-node ... mem-alloc, ipc-mem-handle)", |k| {
                        matches!(
                            k,
                            OpKind::MallocAsync { .. }
                                | OpKind::AddNode { node: NodeSpec::MemAlloc { .. }, .. }
                                // Handles by their digest, opened pointers by address
                                | OpKind::IpcMemHandle { .. }
                                | OpKind::IpcOpenMem { .. }
                        )
                    });
                }
            }
            Predicate::SameValue { a, b, .. } => {
                for l in [a, b] {
                    self.valued_label(line, l, "value", |k| k.facts().value)
                }
            }
            Predicate::NodeKind { graph, node, .. } => {
                self.filled_graph(line, graph);
                self.node_label(line, node);
            }
            Predicate::Before { first: a, second: b } | Predicate::Overlaps { a, b } => {
                self.kernel_label(line, a);
                self.kernel_label(line, b);
                self.same_clock(line, a, b);
            }
            Predicate::WaitedFor { op, gate } | Predicate::NotWaitedFor { op, gate } => {
                self.label(line, op);
                self.name(line, gate, Kind::Gate);
                let opened =
                    self.case.script.iter().any(|o| matches!(&o.kind, OpKind::Open { gate: g, .. } if g == gate));
                if !opened {
                    self.report(line, format!("the blocking oracle needs gate `{gate}` to be opened in the script"));
                }
            }
            Predicate::Returned { op, code } => {
                self.label(line, op);
                self.code(line, code);
            }
            Predicate::SameCode { a, b } => {
                self.label(line, a);
                self.label(line, b);
            }
            Predicate::BufferEquals { buf, index, .. } => {
                self.name(line, buf, Kind::Buffer(MemKind::Device));
                if let (Some(index), Some(size)) = (index, self.buffer_size(buf)) {
                    if index * 4 >= size {
                        self.report(line, format!("index {index} is past the end of `{buf}` ({} words)", size / 4));
                    }
                }
            }
            Predicate::TimedOut { gate } => {
                self.name(line, gate, Kind::Gate);
            }
            Predicate::HostRuns { label, .. } => {
                if let Some(k) = self.label(line, label) {
                    if !is_host_call(k) {
                        self.report(line, format!("`{label}` is not a host-func, callback or host node"));
                    }
                }
            }
            Predicate::HostOrder { labels } => {
                for l in labels {
                    if let Some(k) = self.label(line, l) {
                        if !is_host_call(k) {
                            self.report(line, format!("`{l}` is not a host-func, callback or host node"));
                        }
                    }
                }
            }
            Predicate::SnapshotEquals { label, .. } => {
                if let Some(k) = self.label(line, label) {
                    if !matches!(
                        k,
                        OpKind::HostFunc { snapshot: Some(_), .. } | OpKind::Read { .. } | OpKind::VkRead { .. }
                    ) {
                        self.report(
                            line,
                            format!("`{label}` is not a `read`, a `vk-read` or a host-func with a snapshot"),
                        );
                    }
                }
            }
            Predicate::CallbackStatus { label, code } => {
                if let Some(k) = self.label(line, label) {
                    if !matches!(k, OpKind::Callback { .. }) {
                        self.report(line, format!("`{label}` is not a callback"));
                    }
                }
                self.code(line, code);
            }
            Predicate::ElapsedAbove { label, .. } | Predicate::ElapsedBelow { label, .. } => {
                if let Some(k) = self.label(line, label) {
                    if !matches!(k, OpKind::Elapsed { .. }) {
                        self.report(line, format!("`{label}` is not an elapsed operation"));
                    }
                }
            }
            Predicate::NodeCount { graph, .. } | Predicate::EdgeCount { graph, .. } => self.filled_graph(line, graph),
            Predicate::Edge { graph, from, to }
            | Predicate::NoEdge { graph, from, to }
            | Predicate::Path { graph, from, to }
            | Predicate::NoPath { graph, from, to } => {
                self.filled_graph(line, graph);
                self.label(line, from);
                self.label(line, to);
            }
        }
    }
}

/// Operations `repeat` may run several times: one record (and one stamp slot, whose kernels keep the first entry and
/// the last exit) can stand for all the calls.
fn repeatable(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Launch {
            kernel: KernelCall::Spin { .. }
                | KernelCall::VecAdd { .. }
                | KernelCall::SinCos { .. }
                | KernelCall::Sleep { .. },
            ..
        } | OpKind::Memcpy { .. }
            | OpKind::MemcpyPeer { .. }
            | OpKind::Memset { .. }
            | OpKind::LaunchGraph { .. }
            | OpKind::Record { .. }
            | OpKind::Wait { .. }
    )
}

/// Operations whose runs the host log records: host functions, callbacks and graph host nodes.
fn is_host_call(kind: &OpKind) -> bool {
    matches!(kind, OpKind::HostFunc { .. } | OpKind::Callback { .. } | OpKind::AddNode { node: NodeSpec::Host, .. })
}

/// What an operation other than a call offers a later call's arguments as `L.param`: an exported file descriptor
/// (`fd`, a C `int`), and a Vulkan memory's `size`.
fn offered(kind: &OpKind) -> &'static [&'static str] {
    match kind {
        OpKind::VkMemory { .. } => &["fd", "size"],
        OpKind::VkSemaphore { .. } | OpKind::PoolExport { .. } => &["fd"],
        _ => &[],
    }
}
