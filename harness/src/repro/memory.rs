//! Copies, memsets and memory, as `exec::interpret::memory`: `memcpy`, `memcpy-peer`, `memset` (and their async
//! forms), `read`, `pointer-type`, `malloc`, `malloc-async`, `free-async`, `register`, `unregister`, and
//! `create`/`destroy` of declared objects.

use super::code::{byte_count, cstr, memcpy_kind, Code, Step};
use super::decls::{allocation, event_flags, priority};
use crate::case::ast::{Decl, MemKind, StreamRef};

fn copy_operands(
    x: &Step,
    code: &mut Code,
    dst: &str,
    src: &str,
    bytes: &Option<u64>,
) -> Result<(String, String, u64, &'static str), String> {
    let (d, s) = (x.names.buffer(dst)?, x.names.buffer(src)?);
    code.need(format!("op.need({})", d.var));
    code.need(format!("op.need({})", s.var));
    let n = byte_count(code, *bytes, d.bytes.min(s.bytes));
    Ok((d.var, s.var, n, memcpy_kind(d.kind, s.kind)))
}

pub fn memcpy(
    x: &Step,
    dst: &str,
    src: &str,
    bytes: &Option<u64>,
    inferred: bool,
    stream: &Option<StreamRef>,
) -> Result<Code, String> {
    let mut code = Code::default();
    let (d, s, n, kind) = copy_operands(x, &mut code, dst, src, bytes)?;
    let kind = if inferred { "cudaMemcpyDefault" } else { kind };
    match stream {
        None => code.timed(&format!("cudaMemcpy({d}.copy, {s}.copy, {n}, {kind})")),
        Some(stream) => {
            let st = x.names.stream(stream);
            st.need(&mut code);
            code.timed(&format!("cudaMemcpyAsync({d}.copy, {s}.copy, {n}, {kind}, {})", st.h))
        }
    };
    Ok(code)
}

/// The ordinal of the device a buffer was made on.
fn device_of(x: &Step, var: &str) -> String {
    if x.case.device_count() > 1 {
        format!("({var}.device >= 0 ? {var}.device : run.device(0))")
    } else {
        "run.device(0)".to_owned()
    }
}

pub fn memcpy_peer(
    x: &Step,
    dst: &str,
    src: &str,
    bytes: &Option<u64>,
    stream: &Option<StreamRef>,
) -> Result<Code, String> {
    let mut code = Code::default();
    let (d, s, n, _) = copy_operands(x, &mut code, dst, src, bytes)?;
    let (dd, sd) = (device_of(x, &d), device_of(x, &s));
    match stream {
        None => code.timed(&format!("cudaMemcpyPeer({d}.copy, {dd}, {s}.copy, {sd}, {n})")),
        Some(stream) => {
            let st = x.names.stream(stream);
            st.need(&mut code);
            code.timed(&format!("cudaMemcpyPeerAsync({d}.copy, {dd}, {s}.copy, {sd}, {n}, {})", st.h))
        }
    };
    Ok(code)
}

pub fn memset(x: &Step, buf: &str, byte: u8, bytes: &Option<u64>, stream: &Option<StreamRef>) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    let n = byte_count(&mut code, *bytes, b.bytes);
    match stream {
        None => code.timed(&format!("cudaMemset({}.memset_ptr(), {byte}, {n})", b.var)),
        Some(stream) => {
            let st = x.names.stream(stream);
            st.need(&mut code);
            code.timed(&format!("cudaMemsetAsync({}.memset_ptr(), {byte}, {n}, {})", b.var, st.h))
        }
    };
    Ok(code)
}

pub fn pointer_type(x: &Step, buf: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    code.pre("cudaPointerAttributes attributes = {};");
    code.call(format!("if (op.call([&] {{ return cudaPointerGetAttributes(&attributes, {}.copy); }})) {{", b.var));
    code.call("    op.value = \"{\\\"pointer-type\\\":\" + cc::json(cc::memory_type_name(attributes.type)) + \"}\";");
    code.call("}");
    Ok(code)
}

pub fn destroy(x: &Step, name: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let v = x.names.var(name);
    let free = match x.names.decl(name) {
        Some(Decl::Stream { .. }) => format!("cudaStreamDestroy({v}.h)"),
        Some(Decl::Event { .. }) => format!("cudaEventDestroy({v}.h)"),
        Some(Decl::Graph { .. }) => format!("cudaGraphDestroy({v}.h)"),
        Some(Decl::Exec { .. }) => format!("cudaGraphExecDestroy({v}.h)"),
        Some(Decl::Buffer { kind, .. }) => match kind {
            MemKind::Device => format!("cudaFree({v}.copy)"),
            MemKind::Pinned | MemKind::Mapped => format!("cudaFreeHost({v}.copy)"),
            // Ordinary host memory: no CUDA call (the executor frees it at the end).
            MemKind::Pageable => "cudaSuccess".to_owned(),
            MemKind::Managed => format!("cudaFree({v}.copy)"),
        },
        // The validator refuses `destroy SLICE`: a view has nothing of its own to free.
        Some(Decl::Slice { .. }) => "cudaErrorInvalidValue".to_owned(),
        _ => {
            code.skip(&format!("{name} is not a stream, event, buffer, graph or exec"));
            return Ok(code);
        }
    };
    code.need(format!("op.need({v})"));
    code.call(format!("if (op.call([&] {{ return {free}; }})) {{"));
    code.call(format!("    {v}.state = cc::DESTROYED;"));
    if matches!(x.names.decl(name), Some(Decl::Buffer { .. })) {
        code.call(format!("    {v}.registered = false;"));
    }
    code.call("}");
    Ok(code)
}

pub fn create(x: &Step, name: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let v = x.names.var(name);
    let multi = x.case.device_count() > 1;
    let decl = x.names.decl(name).ok_or_else(|| format!("no {name} is declared"))?;
    if let Decl::Graph { .. } = decl {
        // A graph slot: an empty graph replaces whatever it held.
        code.pre("cudaGraph_t graph = nullptr;");
        code.timed("cudaGraphCreate(&graph, 0)");
        code.post(format!("{v}.set(graph);"));
        return Ok(code);
    }
    // Declared `later` or destroyed (or graph memory a captured free released): the executor's `creatable`.
    let creatable = if matches!(decl, Decl::Buffer { .. }) { "allocatable" } else { "creatable" };
    code.pre(format!("if (!{v}.{creatable}()) {{ op.skip({}); return; }}", cstr(&format!("{name} exists already"))));
    let placed = |code: &mut Code| {
        if multi {
            code.post(format!("if (op.ok()) {{ int d = -1; if (cudaGetDevice(&d) == cudaSuccess) {v}.device = d; }}"));
        }
    };
    match decl {
        Decl::Stream { non_blocking, priority: p, raw_flags, .. } => {
            let flags = raw_flags.map_or_else(
                || if *non_blocking { "cudaStreamNonBlocking".to_owned() } else { "cudaStreamDefault".to_owned() },
                |f| f.to_string(),
            );
            code.call(format!(
                "op.call([&] {{ return cudaStreamCreateWithPriority(&{v}.h, {flags}, {}); }});",
                priority(*p)
            ));
            code.post(format!("{v}.state = op.ok() ? cc::READY : cc::NOT_CREATED;  // as the executor fills the slot"));
            code.post(format!("{v}.code = *op.code;"));
        }
        Decl::Event { flags, raw_flags, .. } => {
            let flags = raw_flags.map_or_else(|| event_flags(*flags), |f| f.to_string());
            code.call(format!("op.call([&] {{ return cudaEventCreateWithFlags(&{v}.h, {flags}); }});"));
            code.post(format!("{v}.state = op.ok() ? cc::READY : cc::NOT_CREATED;  // as the executor fills the slot"));
            code.post(format!("{v}.code = *op.code;"));
        }
        Decl::Buffer { .. } => {
            // The allocation alone (host memory still gets the pattern, on the host): the call is under test.
            let b = x.names.buffer(name)?;
            let body = allocation(&b, false).replace('\n', " ");
            code.call(format!("op.call([&] {{ {body}return e; }});"));
            code.post(format!("{v}.state = op.ok() ? cc::READY : cc::NOT_CREATED;  // as the executor fills the slot"));
            code.post(format!("{v}.code = *op.code;"));
            code.post(format!("{v}.storage = {};", super::decls::storage(b.kind)));
            placed(&mut code);
        }
        Decl::Gate { .. }
        | Decl::Thread { .. }
        | Decl::Graph { .. }
        | Decl::Exec { .. }
        | Decl::Pool { .. }
        | Decl::Condition { .. }
        | Decl::Process { .. }
        | Decl::Slice { .. } => {
            code.call("op.call([&] { return cudaErrorInvalidValue; });");
        }
    }
    Ok(code)
}

pub fn malloc_async(x: &Step, buf: &str, stream: &StreamRef, pool: &Option<String>) -> Result<Code, String> {
    let mut code = Code::default();
    let st = x.names.stream(stream);
    st.need(&mut code);
    if let Some(p) = pool {
        code.need(format!("op.need({})", x.names.var(p)));
    }
    let b = x.names.buffer(buf)?;
    let v = &b.var;
    code.pre(format!("if (!{v}.allocatable()) {{ op.skip({}); return; }}", cstr(&format!("{buf} exists already"))));
    code.pre("void* p = nullptr;");
    match pool {
        Some(p) => code.timed(&format!("cudaMallocFromPoolAsync(&p, {}, {}.h, {})", b.bytes, x.names.var(p), st.h)),
        None => code.timed(&format!("cudaMallocAsync(&p, {}, {})", b.bytes, st.h)),
    };
    code.post("if (op.ok()) {");
    code.post(format!("    {v}.set_async(p);"));
    code.post("    op.value = \"{\\\"address\\\":\" + std::to_string((unsigned long long)(uintptr_t)p) + \"}\";");
    code.post("    // Captured, it is a memory-allocation node: the graph owns the address.");
    code.post(format!("    {v}.graph_memory = cc::capture_id({}).has_value();", st.h));
    code.post("}");
    Ok(code)
}

pub fn free_async(x: &Step, buf: &str, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let st = x.names.stream(stream);
    st.need(&mut code);
    let b = x.names.buffer(buf)?;
    let v = &b.var;
    code.need(format!("op.need({v})"));
    code.pre(format!(
        "if ({v}.storage != cc::DEVICE) {{ op.skip({}); return; }}",
        cstr(&format!("{buf} is not device memory"))
    ));
    code.pre(format!("bool capturing = cc::capture_id({}).has_value();", st.h));
    code.timed(&format!("cudaFreeAsync({v}.copy, {})", st.h));
    code.post("if (op.ok()) {");
    code.post("    if (capturing) {");
    code.post("        // A memory-free node: the address stays the graph's, and nodes may still name the buffer.");
    code.post(format!("        {v}.graph_memory = true;"));
    code.post(format!("        {v}.graph_freed = true;"));
    code.post("    } else {");
    code.post(format!("        {v}.state = cc::DESTROYED;"));
    code.post("    }");
    code.post("}");
    Ok(code)
}

pub fn register(x: &Step, buf: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    code.call(format!(
        "if (op.call([&] {{ return cudaHostRegister({v}.copy, {}, 0); }})) {v}.registered = true;",
        b.bytes,
        v = b.var
    ));
    Ok(code)
}

pub fn unregister(x: &Step, buf: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    code.need(format!("op.need({})", b.var));
    code.call(format!(
        "if (op.call([&] {{ return cudaHostUnregister({v}.copy); }})) {v}.registered = false;",
        v = b.var
    ));
    Ok(code)
}

pub fn read(x: &Step, buf: &str) -> Result<Code, String> {
    let mut code = Code::default();
    let b = x.names.buffer(buf)?;
    let v = &b.var;
    code.need(format!("op.need({v})"));
    let words = b.bytes / 4;
    code.pre(format!("std::vector<uint32_t> words({words});"));
    if b.kind.host_readable() {
        // Host-visible memory (managed memory too) is read on the host, while the GPU may be writing it.
        code.call(format!("op.host([&] {{ words = cc::read_host({v}.copy, {words}); }});"));
    } else {
        // Device memory: a copy on the private non-blocking reader stream, ordered after no other work.
        code.pre("if (run.reader == nullptr) { op.skip(\"creating the read stream failed\"); return; }");
        code.call("op.call([&] {");
        code.call(format!(
            "    cudaError_t e = cudaMemcpyAsync(words.data(), {v}.copy, {}, cudaMemcpyDeviceToHost, run.reader);",
            words * 4
        ));
        code.call("    return e == cudaSuccess ? cudaStreamSynchronize(run.reader) : e;");
        code.call("});");
    }
    code.post("if (op.ok()) op.value = \"{\\\"snapshot\\\":\" + cc::contents(words) + \"}\";");
    Ok(code)
}

pub fn malloc(x: &Step, bytes: u64) -> Result<Code, String> {
    let mut code = Code::default();
    let _ = x;
    code.pre("void* p = nullptr;");
    code.timed(&format!("cudaMalloc(&p, {bytes})"));
    code.post("if (p != nullptr) run.allocations.push_back(p);");
    Ok(code)
}
