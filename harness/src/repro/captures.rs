//! Stream capture, as `exec::interpret::captures`: `begin-capture`, `begin-capture-to-graph`, `end-capture`,
//! `capture-status`, `capture-deps`, `update-capture-deps`, `exchange-capture-mode`.

use super::code::{cstr, dependencies, Code, Step, StreamExpr};
use crate::case::ast::{CaptureMode, StreamRef};

fn mode_word(mode: CaptureMode) -> &'static str {
    match mode {
        CaptureMode::Global => "cudaStreamCaptureModeGlobal",
        CaptureMode::ThreadLocal => "cudaStreamCaptureModeThreadLocal",
        CaptureMode::Relaxed => "cudaStreamCaptureModeRelaxed",
    }
}

fn thread(x: &Step) -> String {
    x.op.thread.as_deref().map_or("nullptr".to_owned(), cstr)
}

/// Remembers a begun capture (the end of the run ends it if the script did not).
fn begun(x: &Step, s: &StreamExpr) -> String {
    match &s.var {
        Some(v) => format!("if (op.ok()) run.begun(&{v}, nullptr, {});", thread(x)),
        None => format!("if (op.ok()) run.begun(nullptr, {}, {});", s.h, thread(x)),
    }
}

pub fn begin_capture(x: &Step, stream: &StreamRef, mode: CaptureMode) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.timed(&format!("cudaStreamBeginCapture({}, {})", s.h, mode_word(mode)));
    code.post(begun(x, &s));
    Ok(code)
}

pub fn end_capture(x: &Step, stream: &StreamRef, graph: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let g = x.names.var(graph);
    // The capture id names this capture's nodes; once ended, the stream cannot tell it.
    code.pre(format!("std::optional<unsigned long long> capture = cc::capture_id({});", s.h));
    code.pre("cudaGraph_t graph = nullptr;");
    code.timed(&format!("cudaStreamEndCapture({}, &graph)", s.h));
    code.post(format!("run.record_graph({}, {}, graph, capture);", cstr(graph), x.index));
    // A capture begun with begin-capture-to-graph returns the graph it captured into, which a slot owns already.
    code.post("cc::Graph* owner = run.graph_owner(graph);");
    code.post(format!("if (owner == nullptr) {g}.set(graph);"));
    code.post(format!(
        "else if (owner != &{g}) run.notes.push_back(\"end-capture returned graph \" + owner->name + \"; slot {graph} is unchanged\");"
    ));
    Ok(code)
}

pub fn capture_status(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;");
    code.call(format!("if (op.call([&] {{ return cudaStreamIsCapturing({}, &status); }})) {{", s.h));
    code.call("    op.value = \"{\\\"capture-status\\\":\" + cc::json(cc::capture_status_name(status)) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn capture_deps(x: &Step, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    code.pre("cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;");
    code.pre("unsigned long long id = 0;");
    code.pre("const cudaGraphNode_t* deps = nullptr;");
    code.pre("const cudaGraphEdgeData* edges = nullptr;");
    code.pre("size_t count = 0;");
    code.call(format!(
        "if (op.call([&] {{ return cudaStreamGetCaptureInfo({}, &status, &id, nullptr, &deps, &edges, &count); }})) {{",
        s.h
    ));
    code.call("    // Valid only while the capture is active.");
    code.call("    bool active = status == cudaStreamCaptureStatusActive;");
    code.call("    std::vector<std::string> nodes, types;");
    code.call("    for (size_t i = 0; active && deps != nullptr && i < count; i++) {");
    code.call("        std::string label = run.node_label(deps[i]);");
    code.call("        nodes.push_back(label == \"null\" ? \"\\\"\\\"\" : label);");
    code.call("    }");
    code.call("    for (size_t i = 0; active && edges != nullptr && i < count; i++) {");
    code.call("        types.push_back(cc::json(edges[i].type == 0 ? std::string(\"default\") : edges[i].type == 1 ? std::string(\"programmatic\") : cc::unknown(edges[i].type)));");
    code.call("    }");
    code.call(
        "    op.value = \"{\\\"capture-deps\\\":{\\\"status\\\":\" + cc::json(cc::capture_status_name(status)) +",
    );
    code.call("               \",\\\"count\\\":\" + std::to_string(nodes.size()) + \",\\\"nodes\\\":\" + cc::json_list(nodes) +");
    code.call("               \",\\\"edge_types\\\":\" + cc::json_list(types) + \"}}\";");
    code.call("}");
    Ok(code)
}

pub fn exchange_capture_mode(x: &Step, mode: CaptureMode) -> Result<Code, String> {
    let mut code = Code::default();
    code.pre(format!("cudaStreamCaptureMode mode = {};", mode_word(mode)));
    code.call("if (op.call([&] { return cudaThreadExchangeStreamCaptureMode(&mode); })) {");
    code.call("    op.value = \"{\\\"previous-capture-mode\\\":\" + cc::json(cc::capture_mode_name(mode)) + \"}\";");
    code.call(format!("    run.exchanged({}, mode);", thread(x)));
    code.call("}");
    Ok(code)
}

pub fn begin_capture_to_graph(
    x: &Step,
    stream: &StreamRef,
    graph: &str,
    after: &[String],
    mode: CaptureMode,
) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let g = x.names.var(graph);
    code.need(format!("op.need_graph({g})"));
    let (d, n) = dependencies(x, &mut code, "dependencies", after);
    code.timed(&format!(
        "cudaStreamBeginCaptureToGraph({}, {g}.handle(), {d}, nullptr, {n}, {})",
        s.h,
        mode_word(mode)
    ));
    code.post(begun(x, &s));
    Ok(code)
}

pub fn update_capture_deps(x: &Step, stream: &StreamRef, set: bool, nodes: &[String]) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let (d, n) = dependencies(x, &mut code, "dependencies", nodes);
    let flags = if set { "cudaStreamSetCaptureDependencies" } else { "cudaStreamAddCaptureDependencies" };
    code.timed(&format!("cudaStreamUpdateCaptureDependencies({}, {d}, nullptr, {n}, {flags})", s.h));
    Ok(code)
}
