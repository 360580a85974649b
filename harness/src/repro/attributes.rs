//! Batched copies, stream identity and launch attributes, as `exec::interpret::attributes`:
//! `memcpy-batch`, `memcpy-3d-batch`, `stream-device`, `stream-id`, `stream-attr`, `set-stream-attr`,
//! `copy-stream-attrs`, `node-attr`, `set-node-attr`. CUDA 13.0 signatures (no `failIdx`).

use super::code::{byte_count, dependencies, Code, Step};
use crate::case::ast::{AttrValue, LaunchAttr, Priority, SrcAccessOrder, StreamRef, SyncDomain};

fn order_name(order: SrcAccessOrder) -> &'static str {
    match order {
        SrcAccessOrder::Stream => "cudaMemcpySrcAccessOrderStream",
        SrcAccessOrder::DuringCall => "cudaMemcpySrcAccessOrderDuringApiCall",
        SrcAccessOrder::Any => "cudaMemcpySrcAccessOrderAny",
        SrcAccessOrder::Invalid => "cudaMemcpySrcAccessOrderInvalid",
    }
}

/// One cudaMemcpyBatchAsync (or cudaMemcpy3DBatchAsync) of every pair, each the smaller buffer's size; every
/// attributes entry has `order`, one per `attrs_at` index (default the single index 0).
pub fn memcpy_batch(
    x: &Step,
    copies: &[(String, String)],
    stream: &StreamRef,
    order: SrcAccessOrder,
    attrs_at: &Option<Vec<u64>>,
    three_d: bool,
) -> Result<Code, String> {
    let mut code = Code::default();
    let n = copies.len();
    code.pre(format!("void* dsts[{n}] = {{}};"));
    code.pre(format!("const void* srcs[{n}] = {{}};"));
    code.pre(format!("size_t sizes[{n}] = {{}};"));
    for (i, (dst, src)) in copies.iter().enumerate() {
        let (d, s) = (x.names.buffer(dst)?, x.names.buffer(src)?);
        code.need(format!("op.need({})", d.var));
        code.need(format!("op.need({})", s.var));
        let bytes = byte_count(&mut code, None, d.bytes.min(s.bytes));
        code.pre(format!("dsts[{i}] = {}.copy; srcs[{i}] = {}.copy; sizes[{i}] = {bytes};", d.var, s.var));
    }
    let st = x.names.stream(stream);
    st.need(&mut code);
    let order = order_name(order);
    if three_d {
        code.pre(format!("cudaMemcpy3DBatchOp ops[{n}] = {{}};"));
        code.pre(format!("for (int i = 0; i < {n}; i++) {{"));
        code.pre("    // Plain pointers, tightly packed (row length and layer height 0), one row of sizes[i] bytes.");
        code.pre("    ops[i].src.type = cudaMemcpyOperandTypePointer;");
        code.pre("    ops[i].src.op.ptr.ptr = (void*)srcs[i];");
        code.pre("    ops[i].dst.type = cudaMemcpyOperandTypePointer;");
        code.pre("    ops[i].dst.op.ptr.ptr = dsts[i];");
        code.pre("    ops[i].extent = make_cudaExtent(sizes[i], 1, 1);");
        code.pre(format!("    ops[i].srcAccessOrder = {order};"));
        code.pre("}");
        code.timed(&format!("cudaMemcpy3DBatchAsync({n}, ops, 0, {})", st.h));
    } else {
        let idxs: Vec<u64> = attrs_at.clone().unwrap_or_else(|| vec![0]);
        let k = idxs.len();
        code.pre(format!("cudaMemcpyAttributes attrs[{}] = {{}};", k.max(1)));
        code.pre(format!("for (int i = 0; i < {k}; i++) attrs[i].srcAccessOrder = {order};"));
        let list: Vec<String> = idxs.iter().map(|i| i.to_string()).collect();
        code.pre(format!("size_t attrs_idxs[{}] = {{{}}};", k.max(1), list.join(", ")));
        code.timed(&format!("cudaMemcpyBatchAsync(dsts, srcs, sizes, {n}, attrs, attrs_idxs, {k}, {})", st.h));
    }
    Ok(code)
}

pub fn stream_device(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("int device = -1;");
    code.call(format!("if (op.call([&] {{ return cudaStreamGetDevice({}, &device); }})) {{", s.h));
    code.call("    op.value = \"{\\\"device\\\":\" + std::to_string(device) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn stream_id(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("unsigned long long id = 0;");
    code.call(format!("if (op.call([&] {{ return cudaStreamGetId({}, &id); }})) {{", s.h));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string(id) + \"}\";");
    code.call("}");
    Ok(code)
}

fn attr_name(attr: LaunchAttr) -> &'static str {
    match attr {
        LaunchAttr::Priority => "cudaLaunchAttributePriority",
        LaunchAttr::MemSyncDomain => "cudaLaunchAttributeMemSyncDomain",
    }
}

/// `cudaLaunchAttributeValue value` set as the case wrote it (a priority resolved against the device's range).
fn set_value(code: &mut Code, value: &AttrValue) {
    code.pre("cudaLaunchAttributeValue value = {};");
    match value {
        AttrValue::Priority(p) => {
            let v = match p {
                Priority::Value(n) => n.to_string(),
                Priority::Greatest => "run.priority_greatest".to_owned(),
                Priority::Least => "run.priority_least".to_owned(),
            };
            code.pre(format!("value.priority = {v};"));
        }
        AttrValue::MemSyncDomain(d) => {
            let d = match d {
                SyncDomain::Default => "cudaLaunchMemSyncDomainDefault",
                SyncDomain::Remote => "cudaLaunchMemSyncDomainRemote",
            };
            code.pre(format!("value.memSyncDomain = {d};"));
        }
    }
}

/// What a read attribute holds, as the record keeps it.
fn read_value(code: &mut Code, attr: LaunchAttr) {
    match attr {
        LaunchAttr::Priority => code.call(
            "    op.value = \"{\\\"stream-priority\\\":{\\\"value\\\":\" + std::to_string(out.priority) + \
             \",\\\"greatest\\\":\" + std::to_string(run.priority_greatest) + \",\\\"least\\\":\" + \
             std::to_string(run.priority_least) + \"}}\";",
        ),
        LaunchAttr::MemSyncDomain => {
            code.call("    op.value = \"{\\\"number\\\":\" + std::to_string((unsigned)out.memSyncDomain) + \"}\";")
        }
    };
}

pub fn stream_attr(x: &Step, stream: &StreamRef, value: &AttrValue) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("cudaLaunchAttributeValue out = {};");
    let attr = value.attr();
    code.call(format!("if (op.call([&] {{ return cudaStreamGetAttribute({}, {}, &out); }})) {{", s.h, attr_name(attr)));
    read_value(&mut code, attr);
    code.call("}");
    Ok(code)
}

pub fn set_stream_attr(x: &Step, stream: &StreamRef, value: &AttrValue) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    set_value(&mut code, value);
    code.timed(&format!("cudaStreamSetAttribute({}, {}, &value)", s.h, attr_name(value.attr())));
    Ok(code)
}

pub fn copy_stream_attrs(x: &Step, dst: &StreamRef, src: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let (d, s) = (x.names.stream(dst), x.names.stream(src));
    d.need(&mut code);
    s.need(&mut code);
    code.timed(&format!("cudaStreamCopyAttributes({}, {})", d.h, s.h));
    Ok(code)
}

pub fn node_attr(x: &Step, node: &str, value: &AttrValue) -> Result<Code, String> {
    let mut code = Code::default();
    let (n, _) = dependencies(x, &mut code, "node", &[node.to_owned()]);
    code.pre("cudaLaunchAttributeValue out = {};");
    let attr = value.attr();
    code.call(format!(
        "if (op.call([&] {{ return cudaGraphKernelNodeGetAttribute({n}[0], {}, &out); }})) {{",
        attr_name(attr)
    ));
    read_value(&mut code, attr);
    code.call("}");
    Ok(code)
}

pub fn set_node_attr(x: &Step, node: &str, value: &AttrValue) -> Result<Code, String> {
    let mut code = Code::default();
    let (n, _) = dependencies(x, &mut code, "node", &[node.to_owned()]);
    set_value(&mut code, value);
    code.timed(&format!("cudaGraphKernelNodeSetAttribute({n}[0], {}, &value)", attr_name(value.attr())));
    Ok(code)
}
