//! Graphs through the API, as `exec::interpret::graphs` (and the parameters of `exec::graph_api`): `instantiate`,
//! `update`, `add-node`, `add-deps`/`remove-deps`, `clone`, `destroy-node`, `list`, `set-node`/`exec-set-node`,
//! `enable`/`is-enabled`, `condition-create`, `launch-graph`, `upload`.

use super::code::{byte_count, cstr, dependencies, memcpy_kind, Code, Names, Step};
use crate::case::ast::{ConditionalKind, InstantiateFlag, ListWord, NodeKernel, NodeSpec, StreamRef};
use crate::case::words::Word;

pub fn instantiate(
    x: &Step,
    exec: &str,
    graph: &str,
    flags: &[InstantiateFlag],
    upload: &Option<StreamRef>,
    with_params: bool,
) -> Result<Code, String> {
    let mut code = Code::default();
    let (g, e) = (x.names.var(graph), x.names.var(exec));
    code.need(format!("op.need_graph({g})"));
    let mut words: Vec<&str> = flags
        .iter()
        .map(|f| match f {
            InstantiateFlag::AutoFreeOnLaunch => "cudaGraphInstantiateFlagAutoFreeOnLaunch",
            InstantiateFlag::DeviceLaunch => "cudaGraphInstantiateFlagDeviceLaunch",
            InstantiateFlag::UseNodePriority => "cudaGraphInstantiateFlagUseNodePriority",
        })
        .collect();
    let mut upload_stream = "nullptr".to_owned();
    if let Some(u) = upload {
        words.push("cudaGraphInstantiateFlagUpload");
        let s = x.names.stream(u);
        s.need(&mut code);
        upload_stream = s.h;
    }
    let word = if words.is_empty() { "0".to_owned() } else { words.join(" | ") };
    code.pre("cudaGraphExec_t exec = nullptr;");
    if with_params {
        code.pre("cudaGraphInstantiateParams params = {};");
        code.pre(format!("params.flags = {word};"));
        code.pre(format!("params.uploadStream = {upload_stream};"));
        code.pre("params.errNode_out = nullptr;");
        code.pre("params.result_out = (cudaGraphInstantiateResult)UINT32_MAX;  // CUDA sets it");
        code.timed(&format!("cudaGraphInstantiateWithParams(&exec, {g}.handle(), &params)"));
        code.post("op.value = \"{\\\"result\\\":{\\\"result\\\":\" + cc::json(cc::instantiate_result_name(params.result_out)) +");
        code.post("           \",\\\"error_node\\\":\" + run.node_label(params.errNode_out) + \",\\\"error_from\\\":null}}\";");
    } else {
        code.timed(&format!("cudaGraphInstantiateWithFlags(&exec, {g}.handle(), {word})"));
    }
    code.post(format!("{e}.set(exec);"));
    Ok(code)
}

pub fn update(x: &Step, exec: &str, graph: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let (e, g) = (x.names.var(exec), x.names.var(graph));
    code.need(format!("op.need_exec({e})"));
    code.need(format!("op.need_graph({g})"));
    code.pre("cudaGraphExecUpdateResultInfo info = {};");
    code.pre("info.result = (cudaGraphExecUpdateResult)UINT32_MAX;  // CUDA sets it");
    code.timed(&format!("cudaGraphExecUpdate({e}.handle(), {g}.handle(), &info)"));
    code.post("op.value = \"{\\\"result\\\":{\\\"result\\\":\" + cc::json(cc::update_result_name(info.result)) +");
    code.post("           \",\\\"error_node\\\":\" + run.node_label(info.errorNode) +");
    code.post("           \",\\\"error_from\\\":\" + run.node_label(info.errorFromNode) + \"}}\";");
    Ok(code)
}

/// The parameters of a kernel node in `params` (one thread for gate and condition kernels, one data block
/// otherwise; no stamp slot), as `exec::graph_api::kernel_node`.
fn kernel_node(x: &Step, code: &mut Code, kernel: &NodeKernel) -> Result<(), String> {
    let null = ("uint64_t* stamp", "nullptr".to_owned());
    let (func, threads, args): (&str, &str, Vec<(&str, String)>) = match kernel {
        NodeKernel::Gate { gate } => {
            let g = x.names.var(gate);
            code.need(format!("op.need_gate({g})"));
            let args = vec![
                ("const uint32_t* flag", format!("{g}.flag()")),
                ("uint64_t timeout_ns", "cc::GATE_TIMEOUT_NS".to_owned()),
                ("uint32_t* timed_out", format!("{g}.timed_out()")),
                null,
            ];
            ("cc_gate", "1", args)
        }
        NodeKernel::Spin { ns } => ("cc_spin", "1", vec![("uint64_t ns", format!("{ns}ull")), null]),
        NodeKernel::Fill { buf, value } => {
            let (b, n) = x.names.kernel_buffer(buf, code)?;
            let args = vec![
                ("uint32_t* buf", format!("{b}.kernel")),
                ("uint32_t n", n.to_string()),
                ("uint32_t value", format!("{value}u")),
                null,
            ];
            ("cc_fill", "cc::DATA_BLOCK_THREADS", args)
        }
        NodeKernel::Transform { buf, mul, add } => {
            let (b, n) = x.names.kernel_buffer(buf, code)?;
            let args = vec![
                ("uint32_t* buf", format!("{b}.kernel")),
                ("uint32_t n", n.to_string()),
                ("uint32_t mul", format!("{mul}u")),
                ("uint32_t add", format!("{add}u")),
                null,
            ];
            ("cc_transform", "cc::DATA_BLOCK_THREADS", args)
        }
        NodeKernel::SetCondition { condition, buf } => {
            let c = x.names.var(condition);
            let (b, _) = x.names.kernel_buffer(buf, code)?;
            code.need(format!("op.need_condition({c})"));
            let args = vec![
                ("cudaGraphConditionalHandle handle", format!("{c}.h")),
                ("const uint32_t* src", format!("{b}.kernel")),
            ];
            ("cc_set_condition", "1", args)
        }
        NodeKernel::Countdown { condition, buf } => {
            let c = x.names.var(condition);
            let (b, n) = x.names.kernel_buffer(buf, code)?;
            if n < 2 {
                code.skip(&format!("countdown needs two words in {buf}"));
            }
            code.need(format!("op.need_condition({c})"));
            let args = vec![
                ("cudaGraphConditionalHandle handle", format!("{c}.h")),
                ("uint32_t* counter", format!("{b}.kernel")),
            ];
            ("cc_countdown", "1", args)
        }
    };
    for (decl, value) in &args {
        code.pre(format!("{decl} = {value};"));
    }
    let names: Vec<String> = args.iter().map(|(d, _)| format!("&{}", d.rsplit(' ').next().unwrap_or(d))).collect();
    code.pre(format!("void* args[] = {{{}}};", names.join(", ")));
    code.pre("cudaKernelNodeParams params = {};");
    code.pre(format!("params.func = (void*){func};"));
    code.pre("params.gridDim = dim3(1);");
    code.pre(format!("params.blockDim = dim3({threads});"));
    code.pre("params.kernelParams = args;");
    Ok(())
}

/// A memset node's parameters in `params`: BYTES bytes (default: the whole buffer) set to BYTE.
fn memset_node(x: &Step, code: &mut Code, buf: &str, byte: u8, bytes: &Option<u64>) -> Result<(), String> {
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    let n = byte_count(code, *bytes, b.bytes);
    code.pre("cudaMemsetParams params = {};");
    code.pre(format!("params.dst = {}.memset_ptr();", b.var));
    code.pre(format!("params.value = {byte};"));
    code.pre("params.elementSize = 1;");
    code.pre(format!("params.width = {n};"));
    code.pre("params.height = 1;");
    Ok(())
}

/// A 1D copy's operands: destination, source, bytes and kind (from the buffers' kinds).
fn copy_node(x: &Step, code: &mut Code, dst: &str, src: &str, bytes: &Option<u64>) -> Result<String, String> {
    let (d, s) = (x.names.buffer(dst)?, x.names.buffer(src)?);
    code.need(format!("op.need({})", d.var));
    code.need(format!("op.need({})", s.var));
    let n = byte_count(code, *bytes, d.bytes.min(s.bytes));
    Ok(format!("{}.copy, {}.copy, {n}, {}", d.var, s.var, memcpy_kind(d.kind, s.kind)))
}

pub fn add_node(x: &Step, graph: &str, node: &NodeSpec, after: &[String]) -> Result<Code, String> {
    let mut code = Code::default();
    let g = x.names.var(graph);
    code.need(format!("op.need_graph({g})"));
    let (d, n) = dependencies(x, &mut code, "dependencies", after);
    code.pre("cudaGraphNode_t node = nullptr;");
    let at = format!("&node, {g}.handle(), {d}, {n}");
    match node {
        NodeSpec::Kernel(kernel) => {
            kernel_node(x, &mut code, kernel)?;
            code.timed(&format!("cudaGraphAddKernelNode({at}, &params)"));
        }
        NodeSpec::Memcpy { dst, src, bytes } => {
            let operands = copy_node(x, &mut code, dst, src, bytes)?;
            code.timed(&format!("cudaGraphAddMemcpyNode1D({at}, {operands})"));
        }
        NodeSpec::Memset { buf, byte, bytes } => {
            memset_node(x, &mut code, buf, *byte, bytes)?;
            code.timed(&format!("cudaGraphAddMemsetNode({at}, &params)"));
        }
        NodeSpec::Host => {
            code.pre("cudaHostNodeParams params = {};");
            code.pre("params.fn = cc::host_func;");
            code.pre(format!("params.userData = run.host_call({}, false);", x.index));
            code.timed(&format!("cudaGraphAddHostNode({at}, &params)"));
        }
        NodeSpec::Empty => {
            code.timed(&format!("cudaGraphAddEmptyNode({at})"));
        }
        NodeSpec::EventRecord { event } => {
            let e = x.names.var(event);
            code.need(format!("op.need({e})"));
            code.timed(&format!("cudaGraphAddEventRecordNode({at}, {e}.h)"));
        }
        NodeSpec::WaitEvent { event } => {
            let e = x.names.var(event);
            code.need(format!("op.need({e})"));
            code.timed(&format!("cudaGraphAddEventWaitNode({at}, {e}.h)"));
        }
        NodeSpec::Child { graph: child } => {
            let c = x.names.var(child);
            code.need(format!("op.need_graph({c})"));
            code.timed(&format!("cudaGraphAddChildGraphNode({at}, {c}.handle())"));
        }
        NodeSpec::MemAlloc { buf } => {
            let b = x.names.buffer(buf)?;
            let v = &b.var;
            code.pre(format!(
                "if (!{v}.allocatable()) {{ op.skip({}); return; }}",
                cstr(&format!("{buf} exists already"))
            ));
            code.pre("cudaMemAllocNodeParams params = {};");
            code.pre("params.poolProps.allocType = cudaMemAllocationTypePinned;");
            code.pre("params.poolProps.location.type = cudaMemLocationTypeDevice;");
            code.pre("params.poolProps.location.id = run.device(0);");
            code.pre(format!("params.bytesize = {};", b.bytes));
            code.timed(&format!("cudaGraphAddMemAllocNode({at}, &params)"));
            code.post("if (op.ok()) {");
            code.post(format!("    {v}.set_async(params.dptr);"));
            code.post(format!("    {v}.graph_memory = true;"));
            code.post("    op.value = \"{\\\"address\\\":\" + std::to_string((unsigned long long)(uintptr_t)params.dptr) + \"}\";");
            code.post("}");
        }
        NodeSpec::MemFree { buf } => {
            let b = x.names.buffer(buf)?;
            code.need(format!("op.need({})", b.var));
            code.pre(format!(
                "if ({}.storage != cc::DEVICE) {{ op.skip({}); return; }}",
                b.var,
                cstr(&format!("{buf} is not device memory"))
            ));
            code.timed(&format!("cudaGraphAddMemFreeNode({at}, {}.copy)", b.var));
        }
        NodeSpec::Conditional { kind, condition, size, bodies } => {
            let c = x.names.var(condition);
            code.need(format!("op.need_condition({c})"));
            let kind = match kind {
                ConditionalKind::If => "cudaGraphCondTypeIf",
                ConditionalKind::While => "cudaGraphCondTypeWhile",
                ConditionalKind::Switch => "cudaGraphCondTypeSwitch",
            };
            code.pre("cudaGraphNodeParams params = {};");
            code.pre("params.type = cudaGraphNodeTypeConditional;");
            code.pre(format!("params.conditional.handle = {c}.h;"));
            code.pre(format!("params.conditional.type = {kind};"));
            code.pre(format!("params.conditional.size = {size};"));
            code.timed(&format!("cudaGraphAddNode(&node, {g}.handle(), {d}, nullptr, {n}, &params)"));
            code.post("if (op.ok()) {");
            code.post("    // The body graphs the runtime created, owned by the node, fill the graph slots named.");
            for (i, body) in bodies.iter().enumerate() {
                code.post(format!("    {}.body = params.conditional.phGraph_out[{i}];", x.names.var(body)));
            }
            code.post("}");
        }
    }
    code.post(format!("if (op.ok()) run.nodes.added({}, node);", x.index));
    Ok(code)
}

/// The node the operation labelled `label` made, into `var`.
fn one_node(x: &Step, code: &mut Code, var: &str, label: &str) {
    let (_, _) = dependencies(x, code, var, &[label.to_owned()]);
}

pub fn dependency(x: &Step, graph: &str, from: &str, to: &str, remove: bool) -> Result<Code, String> {
    let mut code = Code::default();
    let g = x.names.var(graph);
    code.need(format!("op.need_graph({g})"));
    one_node(x, &mut code, "from", from);
    one_node(x, &mut code, "to", to);
    let call = if remove { "cudaGraphRemoveDependencies" } else { "cudaGraphAddDependencies" };
    code.timed(&format!("{call}({g}.handle(), from, to, nullptr, 1)"));
    Ok(code)
}

pub fn clone_graph(x: &Step, copy: &str, graph: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let (g, c) = (x.names.var(graph), x.names.var(copy));
    code.need(format!("op.need_graph({g})"));
    code.pre("cudaGraph_t graph = nullptr;");
    code.timed(&format!("cudaGraphClone(&graph, {g}.handle())"));
    code.post(format!("{c}.set(graph);"));
    Ok(code)
}

pub fn destroy_node(x: &Step, node: &str) -> Result<Code, String> {
    let mut code = Code::default();
    one_node(x, &mut code, "node", node);
    code.timed("cudaGraphDestroyNode(node[0])");
    if let Some(at) = Names::labelled(x.case, node) {
        code.post(format!("if (op.ok()) run.nodes.forget({at});"));
    }
    Ok(code)
}

pub fn list(x: &Step, what: ListWord, graph: &str, room: &Option<u32>) -> Result<Code, String> {
    let mut code = Code::default();
    let g = x.names.var(graph);
    code.need(format!("op.need_graph({g})"));
    let (first, second) = match what {
        ListWord::Nodes => (
            format!("cudaGraphGetNodes({g}.handle(), nullptr, &count)"),
            format!("cudaGraphGetNodes({g}.handle(), a.data(), &returned)"),
        ),
        ListWord::RootNodes => (
            format!("cudaGraphGetRootNodes({g}.handle(), nullptr, &count)"),
            format!("cudaGraphGetRootNodes({g}.handle(), a.data(), &returned)"),
        ),
        ListWord::Edges => (
            format!("cudaGraphGetEdges({g}.handle(), nullptr, nullptr, nullptr, &count)"),
            format!("cudaGraphGetEdges({g}.handle(), a.data(), b.data(), data.data(), &returned)"),
        ),
    };
    // The count/buffer protocol: the count with null buffers, then the list into a buffer of `room` entries
    // (default: the count), filled with a marker so that entries CUDA sets to NULL can be told apart.
    code.pre("size_t count = 0;");
    code.call(format!("if (!op.call([&] {{ return {first}; }})) return;"));
    let size = room.map_or("count".to_owned(), |r| r.to_string());
    code.call(format!("size_t size = {size};"));
    code.call("const cudaGraphNode_t marker = (cudaGraphNode_t)1;");
    code.call(
        "std::vector<cudaGraphNode_t> a(std::max<size_t>(size, 1), marker), b(std::max<size_t>(size, 1), marker);",
    );
    code.call("std::vector<cudaGraphEdgeData> data(std::max<size_t>(size, 1));");
    code.call("size_t returned = size;");
    code.call(format!("if (!op.call([&] {{ return {second}; }})) return;"));
    let edges = matches!(what, ListWord::Edges);
    code.post("bool null_padded = true;");
    code.post(format!(
        "for (size_t i = std::min(returned, size); i < size; i++) null_padded = null_padded && a[i] == nullptr{};",
        if edges { " && b[i] == nullptr" } else { "" }
    ));
    code.post("op.value = \"{\\\"listed\\\":{\\\"count\\\":\" + std::to_string(returned) + \",\\\"null_padded\\\":\" + (null_padded ? \"true\" : \"false\") + \"}}\";");
    Ok(code)
}

pub fn set_node(x: &Step, exec: &Option<String>, node: &str, spec: &NodeSpec) -> Result<Code, String> {
    let mut code = Code::default();
    let e = exec.as_ref().map(|e| x.names.var(e));
    if let Some(e) = &e {
        code.need(format!("op.need_exec({e})"));
    }
    one_node(x, &mut code, "node", node);
    let n = "node[0]";
    match spec {
        NodeSpec::Kernel(kernel) => {
            kernel_node(x, &mut code, kernel)?;
            match &e {
                Some(e) => code.timed(&format!("cudaGraphExecKernelNodeSetParams({e}.handle(), {n}, &params)")),
                None => code.timed(&format!("cudaGraphKernelNodeSetParams({n}, &params)")),
            };
        }
        NodeSpec::Memcpy { dst, src, bytes } => {
            let operands = copy_node(x, &mut code, dst, src, bytes)?;
            match &e {
                Some(e) => code.timed(&format!("cudaGraphExecMemcpyNodeSetParams1D({e}.handle(), {n}, {operands})")),
                None => code.timed(&format!("cudaGraphMemcpyNodeSetParams1D({n}, {operands})")),
            };
        }
        NodeSpec::Memset { buf, byte, bytes } => {
            memset_node(x, &mut code, buf, *byte, bytes)?;
            match &e {
                Some(e) => code.timed(&format!("cudaGraphExecMemsetNodeSetParams({e}.handle(), {n}, &params)")),
                None => code.timed(&format!("cudaGraphMemsetNodeSetParams({n}, &params)")),
            };
        }
        NodeSpec::Host => {
            code.pre("cudaHostNodeParams params = {};");
            code.pre("params.fn = cc::host_func;");
            code.pre(format!("params.userData = run.host_call({}, false);", x.index));
            match &e {
                Some(e) => code.timed(&format!("cudaGraphExecHostNodeSetParams({e}.handle(), {n}, &params)")),
                None => code.timed(&format!("cudaGraphHostNodeSetParams({n}, &params)")),
            };
        }
        NodeSpec::Empty
        | NodeSpec::EventRecord { .. }
        | NodeSpec::WaitEvent { .. }
        | NodeSpec::Child { .. }
        | NodeSpec::MemAlloc { .. }
        | NodeSpec::MemFree { .. }
        | NodeSpec::Conditional { .. } => {
            code.skip(&format!(
                "the language sets parameters of kernel, memcpy, memset and host nodes, not {}",
                spec.word().word()
            ));
        }
    }
    Ok(code)
}

pub fn set_enabled(x: &Step, exec: &str, node: &str, enabled: bool) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(exec);
    code.need(format!("op.need_exec({e})"));
    one_node(x, &mut code, "node", node);
    code.timed(&format!("cudaGraphNodeSetEnabled({e}.handle(), node[0], {})", u32::from(enabled)));
    Ok(code)
}

pub fn get_enabled(x: &Step, exec: &str, node: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(exec);
    code.need(format!("op.need_exec({e})"));
    one_node(x, &mut code, "node", node);
    code.pre("unsigned int enabled = 0;");
    code.call(format!("if (op.call([&] {{ return cudaGraphNodeGetEnabled({e}.handle(), node[0], &enabled); }})) {{"));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(enabled) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn condition_create(x: &Step, condition: &str, graph: &str, default: &Option<u32>) -> Result<Code, String> {
    let mut code = Code::default();
    let (g, c) = (x.names.var(graph), x.names.var(condition));
    code.need(format!("op.need_graph({g})"));
    let (value, flags) = match default {
        Some(v) => (v.to_string(), "cudaGraphCondAssignDefault"),
        None => ("0".to_owned(), "0"),
    };
    code.pre("cudaGraphConditionalHandle handle = 0;");
    code.call(format!(
        "if (op.call([&] {{ return cudaGraphConditionalHandleCreate(&handle, {g}.handle(), {value}, {flags}); }})) {{"
    ));
    code.call(format!("    {c}.h = handle;"));
    code.call(format!("    {c}.created = true;"));
    code.call("}");
    Ok(code)
}

pub fn launch_graph(x: &Step, exec: &str, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(exec);
    code.need(format!("op.need_exec({e})"));
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.timed(&format!("cudaGraphLaunch({e}.handle(), {})", s.h));
    Ok(code)
}

pub fn upload(x: &Step, exec: &str, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let e = x.names.var(exec);
    code.need(format!("op.need_exec({e})"));
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.timed(&format!("cudaGraphUpload({e}.handle(), {})", s.h));
    Ok(code)
}
