//! The program around the script: the comment with the case, the setup the executor does before the script (the
//! device, the kernels, the declared objects in order, the stamps, the timing events, a synchronize), and the end
//! (gates opened, captures ended, the final synchronize, the reads, the release). Mirrors `exec::run_case`,
//! `exec::objects::create` and `exec::teardown`.

use super::code::{cstr, ident, BufferInfo, Names};
use super::ReproError;
use crate::case::ast::{accepted_codes, Case, Decl, EventFlags, Expectation, MemKind, OpKind, Predicate, Priority};
use crate::case::words::{KernelWord, Word};

/// The comment on top: the case as written, and how to build and run the program.
pub fn preamble(case: &Case) -> String {
    let mut out = format!("// Reproducer of the cuda-conformance case {}\n//\n", case.id);
    let text =
        if case.positions.text.is_empty() { crate::case::print::print_case(case) } else { case.positions.text.clone() };
    // The path relative to the repository (`cases/graph.case`), wherever the cases were loaded from.
    let file = std::path::Path::new(&case.positions.file)
        .file_name()
        .map_or(case.positions.file.clone(), |f| format!("cases/{}", f.to_string_lossy()));
    out.push_str(&format!("// The case, as written in {file}:{}:\n//\n", case.positions.case_line));
    for line in text.lines() {
        out.push_str(&format!("//   {}\n", super::code::comment_text(line)));
    }
    let stem = super::file_stem(&case.id);
    out.push_str(&format!(
        "//\n\
         // Written by `cuda-conformance repro {id} --out DIR`: the CUDA runtime calls the suite's executor makes for\n\
         // this case, in its order, one block per line of the script. Build and run:\n\
         //   nvcc -std=c++17 -arch=sm_90 {stem}.cu -o {stem} && ./{stem} [--devices 0,1,...]\n\
         // It prints what it observed as one JSON line (the report's observation schema) at the end of stdout;\n\
         // CUDA_CONFORMANCE_DEADLINE_MS sets the watchdog that opens every gate (default {ms} ms).\n\n\
         #include \"{header}\"\n\n",
        id = case.id,
        ms = crate::exec::ExecOptions::default().case_deadline.as_millis(),
        header = super::HEADER_NAME,
    ));
    out
}

/// The C++ expression of the ordinal of the case's device `index`.
fn device(index: Option<u32>) -> String {
    format!("run.device({})", index.unwrap_or(0))
}

/// Wraps `body` so that it runs with the case's device `index` current (cases on several devices only).
fn placed(multi: bool, index: Option<u32>, body: &str) -> String {
    if multi {
        format!("    run.on({}, [&] {{\n{body}    }});\n", device(index))
    } else {
        body.to_owned()
    }
}

/// The line that sets one of the case's `env:` values. A value that names the case's device (`{uuid}`,
/// `{uuid-prefix}`, as `runner::worker::with_uuid` fills them for a worker) is filled by the header with the UUID
/// the runner gives (`CUDA_CONFORMANCE_UUID`), or that the program asks CUDA for when run by hand: written as it
/// stands, the word would replace the runner's filled value and hide every device.
fn env_line(name: &str, value: &str) -> String {
    if value.contains("{uuid}") || value.contains("{uuid-prefix}") {
        format!("    cc::setenv_with_uuid(argc, argv, {}, {});\n", cstr(name), cstr(value))
    } else {
        format!("    setenv({}, {}, 1);\n", cstr(name), cstr(value))
    }
}

/// Everything before the script.
pub fn setup(case: &Case, names: &Names) -> Result<String, ReproError> {
    let multi = case.device_count() > 1;
    let mut out = String::new();
    if !case.env.is_empty() {
        out.push_str("    // env: the case's environment, set before the first CUDA call (as the runner sets it).\n");
        for (name, value) in &case.env {
            out.push_str(&env_line(name, value));
        }
    }
    let script = "OPS";
    out.push_str(&format!("    cc::Run run(argc, argv, {}, {}, {script});\n\n", cstr(&case.id), case.device_count()));
    out.push_str(
        "    // The case's device current, its last error clear.\n\
         \x20   cudaSetDevice(run.device(0));\n\
         \x20   cudaGetLastError();\n",
    );
    // The probe kernels, loaded now: with lazy module loading the first launch would load each, and a load inside
    // a global-mode capture can fail for reasons that have nothing to do with the rule. Not lazy-spin: its first
    // launch in a case must be the one that loads it.
    let kernels: Vec<String> = KernelWord::ALL
        .iter()
        .filter(|k| k.preloaded())
        .map(|k| format!("(const void*){}", kernel_symbol(*k)))
        .chain(["(const void*)cc_spin_trigger".to_owned()])
        .collect();
    let load = format!(
        "        cudaFuncAttributes attributes;\n\
         \x20       for (const void* kernel : {{{}}}) cudaFuncGetAttributes(&attributes, kernel);\n\
         \x20       cudaGetLastError();\n",
        kernels.join(", ")
    );
    out.push_str(
        "    // Load every probe kernel but lazy-spin now (lazy loading would load each at its first launch, which\n\
         \x20   // inside a global-mode capture can fail for reasons that have nothing to do with the case).\n",
    );
    if multi {
        out.push_str(&format!("    for (int ordinal : run.ordinals) run.on(ordinal, [&] {{\n{load}    }});\n"));
    } else {
        out.push_str(&format!("    {{\n{load}    }}\n"));
    }
    let processes: Vec<String> =
        case.decls.iter().filter(|d| matches!(d, Decl::Process { .. })).map(|d| cstr(d.name())).collect();
    if !processes.is_empty() {
        out.push_str(&format!(
            "    // The case's other processes start now (this program again, `--peer NAME`), before any object exists,\n\
             \x20   // and make their own objects; `@NAME` operations run there.\n\
             \x20   run.start_peers({{{}}});\n",
            processes.join(", ")
        ));
    }
    if needs_device_facts(case) {
        out.push_str(
            "    // What the executor knows from its probe of the device: the SM count (`grid full`) and the\n\
             \x20   // stream priority range (`greatest`, `least`).\n\
             \x20   cudaDeviceGetAttribute(&run.multiprocessors, cudaDevAttrMultiProcessorCount, run.device(0));\n\
             \x20   cudaDeviceGetStreamPriorityRange(&run.priority_least, &run.priority_greatest);\n\
             \x20   cudaGetLastError();\n",
        );
    }
    out.push('\n');
    // The stream `read` copies on, before every declared stream (streams take the hardware queues in creation
    // order, so it gets one of its own).
    if case.script.iter().any(|op| matches!(op.kind, OpKind::Read { .. })) {
        out.push_str(
            "    // The stream `read` copies device buffers on, created before the declared streams.\n\
             \x20   cudaStreamCreateWithPriority(&run.reader, cudaStreamNonBlocking, 0);\n",
        );
    }
    // Gates first, all of them: mapped pinned host memory, closed.
    let gates: Vec<&Decl> = case.decls.iter().filter(|d| matches!(d, Decl::Gate { .. })).collect();
    if !gates.is_empty() {
        out.push_str("    // Gates: a flag and a timed-out word each, in mapped pinned host memory, closed (zero).\n");
    }
    for g in &gates {
        let v = names.var(g.name());
        out.push_str(&format!(
            "    cc::Gate {v}({name});\n\
             \x20   cudaError_t {v}_code = cudaHostAlloc((void**)&{v}.host, 8, cudaHostAllocMapped | cudaHostAllocPortable);\n\
             \x20   if ({v}_code == cudaSuccess) {v}_code = cudaHostGetDevicePointer((void**)&{v}.device, {v}.host, 0);\n\
             \x20   if ({v}_code == cudaSuccess) {{ {v}.host[0] = 0; {v}.host[1] = 0; }} else {{ {v}.host = nullptr; {v}.device = nullptr; }}\n\
             \x20   run.gates.push_back(&{v});\n",
            name = cstr(g.name())
        ));
    }
    out.push('\n');
    for (i, d) in case.decls.iter().enumerate() {
        let line = case.positions.decl_lines.get(i).copied().unwrap_or(0);
        out.push_str(&format!("    // line {line}: {}\n", super::code::comment_text(&crate::case::print::decl(d))));
        out.push_str(&declaration(case, names, d, line, multi).map_err(|why| ReproError {
            case_id: case.id.clone(),
            line,
            operation: crate::case::print::decl(d),
            why,
        })?);
    }
    out.push_str(&stamps_and_timing(case, multi));
    out.push_str(
        "    // Buffers and stamps were written with cudaMemset on the legacy stream: finish that before the script.\n",
    );
    out.push_str(
        "    for (int ordinal : run.ordinals) {\n\
         \x20       cudaError_t e = run.on(ordinal, [] { return cudaDeviceSynchronize(); });\n\
         \x20       if (e != cudaSuccess) run.notes.push_back(\"the cudaDeviceSynchronize before the script returned \" + cc::code_name(e));\n\
         \x20   }\n\
         \x20   cudaSetDevice(run.device(0));\n\
         \x20   cudaGetLastError();\n\n\
         \x20   // The watchdog: at the deadline it opens every gate, whatever the GPU does.\n\
         \x20   run.keeper.gates = run.gates;\n\
         \x20   run.keeper.start(cc::case_start() + std::chrono::milliseconds(run.deadline_ms));\n",
    );
    for d in case.decls.iter().filter(|d| matches!(d, Decl::Thread { .. })) {
        out.push_str(&format!(
            "    {}.run([&] {{ cudaSetDevice(run.device(0)); cudaGetLastError(); }});\n",
            names.var(d.name())
        ));
    }
    if has_processes(case) {
        out.push_str("    // In a peer: its objects exist, the main process may send its operations now.\n    run.peer_ready();\n");
    }
    if case.timing.is_some() {
        out.push_str(
            "    // timing: events: the origin every bracket is measured from, just before the script.\n\
             \x20   if (run.timing_origin != nullptr && cudaEventRecord(run.timing_origin, run.timing_stream) != cudaSuccess) {\n\
             \x20       run.notes.push_back(\"timing: recording the origin event failed; no device times\");\n\
             \x20   }\n",
        );
    }
    Ok(out)
}

/// Whether the case has other processes (`process NAME`).
fn has_processes(case: &Case) -> bool {
    case.decls.iter().any(|d| matches!(d, Decl::Process { .. }))
}

/// Whether the program needs the SM count or the stream priority range.
fn needs_device_facts(case: &Case) -> bool {
    use crate::case::ast::{Grid, KernelCall};
    let decl = case.decls.iter().any(|d| {
        matches!(d, Decl::Stream { priority: Some(Priority::Greatest | Priority::Least), raw_flags: None, .. })
    });
    decl || case.script.iter().any(|op| match &op.kind {
        OpKind::StreamPriority { .. }
        | OpKind::StreamAttr { .. }
        | OpKind::SetStreamAttr { .. }
        | OpKind::NodeAttr { .. }
        | OpKind::SetNodeAttr { .. } => true,
        OpKind::Launch { kernel: KernelCall::Spin { shape, .. }, .. } => shape.grid == Grid::Full,
        OpKind::Launch {
            kernel:
                KernelCall::VecAdd { shape, .. } | KernelCall::SinCos { shape, .. } | KernelCall::Sleep { shape, .. },
            ..
        } => shape.grid == Some(Grid::Full),
        _ => false,
    })
}

/// The C++ symbol of a probe kernel.
pub fn kernel_symbol(k: KernelWord) -> &'static str {
    match k {
        KernelWord::Gate => "cc_gate",
        KernelWord::Spin => "cc_spin",
        KernelWord::LazySpin => "cc_lazy_spin",
        KernelWord::Fault => "cc_fault",
        KernelWord::Fill => "cc_fill",
        KernelWord::Transform => "cc_transform",
        KernelWord::Compare => "cc_compare",
        KernelWord::VecAdd => "cc_vecadd",
        KernelWord::SinCos => "cc_sincos",
        KernelWord::Sleep => "cc_sleep",
        KernelWord::SetCondition => "cc_set_condition",
        KernelWord::Countdown => "cc_countdown",
        KernelWord::DeviceLaunch => "cc_device_launch",
        KernelWord::RelaunchSelf => "cc_relaunch_self",
        KernelWord::CurrentGraph => "cc_current_graph",
        KernelWord::Bounded32 => "cc_bounded32",
        KernelWord::ManyRegisters => "cc_many_registers",
        KernelWord::Sm80Only => "cc_sm80_only",
        KernelWord::PtxOnly => "cc_ptx_only",
        KernelWord::BadPtx => "cc_bad_ptx",
        KernelWord::FuturePtx => "cc_future_ptx",
    }
}

/// `cudaStreamCreateWithPriority`'s priority.
pub fn priority(p: Option<Priority>) -> String {
    match p {
        None => "0".into(),
        Some(Priority::Value(v)) => v.to_string(),
        Some(Priority::Greatest) => "run.priority_greatest".into(),
        Some(Priority::Least) => "run.priority_least".into(),
    }
}

pub fn event_flags(flags: EventFlags) -> String {
    let mut words = Vec::new();
    if flags.disable_timing {
        words.push("cudaEventDisableTiming");
    }
    if flags.blocking_sync {
        words.push("cudaEventBlockingSync");
    }
    if flags.interprocess {
        words.push("cudaEventInterprocess");
    }
    if words.is_empty() {
        "cudaEventDefault".into()
    } else {
        words.join(" | ")
    }
}

/// The C++ storage of a memory kind.
pub fn storage(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Device => "cc::DEVICE",
        MemKind::Pinned => "cc::PINNED",
        MemKind::Pageable => "cc::PAGEABLE",
        MemKind::Mapped => "cc::MAPPED",
        MemKind::Managed => "cc::MANAGED",
    }
}

/// The allocation of buffer `b` (and, with `initialised`, the 0xCD pattern): statements that leave its code in
/// `e` and fill `b.copy` and `b.kernel`. `create BUF` in the script allocates only (no cudaMemset of device memory).
pub fn allocation(b: &BufferInfo, initialised: bool) -> String {
    let (v, n) = (&b.var, b.bytes);
    match b.kind {
        MemKind::Device if initialised => format!(
            "cudaError_t e = cudaMalloc(&{v}.copy, {n});\n\
             if (e == cudaSuccess) {{\n\
             \x20   {v}.kernel = (uint32_t*){v}.copy;\n\
             \x20   e = cudaMemset({v}.copy, cc::INITIAL_BYTE, {n});\n\
             \x20   if (e != cudaSuccess) cudaFree({v}.copy);\n\
             }}\n"
        ),
        MemKind::Device => format!(
            "cudaError_t e = cudaMalloc(&{v}.copy, {n});\n\
             {v}.kernel = (uint32_t*){v}.copy;\n"
        ),
        MemKind::Pinned => format!(
            "cudaError_t e = cudaMallocHost(&{v}.copy, {n});\n\
             if (e == cudaSuccess) {{ memset({v}.copy, cc::INITIAL_BYTE, {n}); {v}.kernel = (uint32_t*){v}.copy; }}\n"
        ),
        MemKind::Mapped => format!(
            "cudaError_t e = cudaHostAlloc(&{v}.copy, {n}, cudaHostAllocMapped | cudaHostAllocPortable);\n\
             if (e == cudaSuccess) e = cudaHostGetDevicePointer((void**)&{v}.kernel, {v}.copy, 0);\n\
             if (e == cudaSuccess) memset({v}.copy, cc::INITIAL_BYTE, {n});\n"
        ),
        // Written on the host (no CUDA call), like the other host-visible kinds, created or declared.
        MemKind::Managed => format!(
            "cudaError_t e = cudaMallocManaged(&{v}.copy, {n}, cudaMemAttachGlobal);\n\
             if (e == cudaSuccess) {{ memset({v}.copy, cc::INITIAL_BYTE, {n}); {v}.kernel = (uint32_t*){v}.copy; }}\n"
        ),
        MemKind::Pageable => format!(
            "{v}.copy = malloc({n});\n\
             memset({v}.copy, cc::INITIAL_BYTE, {n});\n\
             cudaError_t e = cudaSuccess;\n"
        ),
    }
}

/// One declaration, as `exec::objects::create` makes it. Exhaustive over [`Decl`]: a new kind of object needs
/// its C++ here.
fn declaration(case: &Case, names: &Names, d: &Decl, line: u32, multi: bool) -> Result<String, String> {
    let name = cstr(d.name());
    let v = names.var(d.name());
    let record = |code: &str, accepted: &[String]| {
        let list: Vec<String> = accepted_codes(accepted).iter().map(|c| cstr(c)).collect();
        format!("    run.decl({name}, {}, {line}, {code}, {{{}}});\n", cstr(d.word().word()), list.join(", "))
    };
    let indent = |body: &str, by: &str| body.lines().map(|l| format!("{by}{l}\n")).collect::<String>();
    let out = match d {
        Decl::Stream { later: true, expect, .. } => {
            format!("    cc::Stream {v}({name}, cc::LATER);\n    run.streams.push_back(&{v});\n")
                + &record("std::nullopt", expect)
        }
        Decl::Event { later: true, expect, .. } => {
            format!("    cc::Event {v}({name}, cc::LATER);\n") + &record("std::nullopt", expect)
        }
        Decl::Buffer { later: true, kind, bytes, .. } => {
            format!("    cc::Buffer {v}({name}, {}, {bytes}, {}, cc::LATER);\n", cstr(kind.word()), storage(*kind))
                + &record("std::nullopt", &[])
        }
        Decl::Stream { non_blocking, priority: p, raw_flags, device: dev, expect, .. } => {
            let flags = match raw_flags {
                Some(f) => f.to_string(),
                None if *non_blocking => "cudaStreamNonBlocking".into(),
                None => "cudaStreamDefault".into(),
            };
            let create =
                format!("        {v}.created(cudaStreamCreateWithPriority(&{v}.h, {flags}, {}));\n", priority(*p));
            let mut s = format!("    cc::Stream {v}({name});\n    run.streams.push_back(&{v});\n");
            s.push_str(&placed(multi, *dev, &if multi { create } else { create[4..].to_owned() }));
            s + &record(&format!("{v}.error"), expect)
        }
        Decl::Event { flags, raw_flags, device: dev, expect, .. } => {
            let flags = raw_flags.map_or_else(|| event_flags(*flags), |f| f.to_string());
            let create = format!("        {v}.created(cudaEventCreateWithFlags(&{v}.h, {flags}));\n");
            let mut s = format!("    cc::Event {v}({name});\n");
            s.push_str(&placed(multi, *dev, &if multi { create } else { create[4..].to_owned() }));
            s + &record(&format!("{v}.error"), expect)
        }
        Decl::Buffer { kind, bytes, device: dev, .. } => {
            let b = BufferInfo { var: v.clone(), kind: *kind, bytes: *bytes };
            let body = format!(
                "    {{\n{}        {v}.created(e);\n{}    }}\n",
                indent(&allocation(&b, true), "        "),
                if multi { format!("        {v}.device = {};\n", device(*dev)) } else { String::new() }
            );
            let mut s = format!("    cc::Buffer {v}({name}, {}, {bytes}, {});\n", cstr(kind.word()), storage(*kind));
            s.push_str(&placed(multi, *dev, &body));
            s + &record(&format!("{v}.error"), &[])
        }
        Decl::Gate { .. } => record(&format!("{v}_code"), &[]),
        // The process itself was started before the declarations (`run.start_peers`).
        Decl::Process { .. } => record("std::nullopt", &[]),
        Decl::Thread { .. } => {
            format!("    cc::CaseThread {v}({name});\n    run.threads[{name}] = &{v};\n") + &record("std::nullopt", &[])
        }
        Decl::Graph { .. } => {
            format!("    cc::Graph {v}({name});\n    run.graphs.push_back(&{v});\n") + &record("std::nullopt", &[])
        }
        Decl::Exec { .. } => {
            format!("    cc::Exec {v}({name});\n    run.execs.push_back(&{v});\n") + &record("std::nullopt", &[])
        }
        Decl::Pool { default: true, .. } => {
            format!(
                "    cc::Pool {v}({name});\n\
                 \x20   {v}.is_default = true;\n\
                 \x20   {v}.created(cudaDeviceGetDefaultMemPool(&{v}.h, run.device(0)));\n"
            ) + &record(&format!("{v}.error"), &[])
        }
        Decl::Pool { default: false, posix_fd, .. } => {
            let (why, handles) = if *posix_fd {
                ("exportable as a POSIX file descriptor (`posix-fd`)", "cudaMemHandleTypePosixFileDescriptor")
            } else {
                ("no IPC handle: what cudaMallocAsync's default pool is", "cudaMemHandleTypeNone")
            };
            format!(
                "    cc::Pool {v}({name});\n\
                 \x20   {{\n\
                 \x20       // Pinned device memory of the case's device, {why}.\n\
                 \x20       cudaMemPoolProps props = {{}};\n\
                 \x20       props.allocType = cudaMemAllocationTypePinned;\n\
                 \x20       props.handleTypes = {handles};\n\
                 \x20       props.location.type = cudaMemLocationTypeDevice;\n\
                 \x20       props.location.id = run.device(0);\n\
                 \x20       {v}.created(cudaMemPoolCreate(&{v}.h, &props));\n\
                 \x20   }}\n\
                 \x20   run.pools.push_back(&{v});\n"
            ) + &record(&format!("{v}.error"), &[])
        }
        Decl::Condition { .. } => format!("    cc::Condition {v}({name});\n") + &record("std::nullopt", &[]),
        Decl::Slice { of, offset, bytes, .. } => {
            let parent = names.buffer(of)?;
            format!(
                "    cc::Buffer {v}({name}, {}, {bytes}, cc::VIEW);\n    cc::make_slice({v}, {}, {offset});\n",
                cstr(parent.kind.word()),
                parent.var
            ) + &record("std::nullopt", &[])
        }
    };
    let _ = case;
    Ok(out)
}

/// The stamp pool (one `[entry, exit]` pair per kernel launch operation, zeroed) and the `timing: events` events.
fn stamps_and_timing(case: &Case, multi: bool) -> String {
    let owners: Vec<String> = case
        .script
        .iter()
        .enumerate()
        .filter(|(_, op)| op.kind.is_kernel_launch())
        .map(|(i, _)| i.to_string())
        .collect();
    let mut out = String::new();
    if !owners.is_empty() {
        let bytes = owners.len() * 16;
        out.push_str(&format!("\n    // Kernel stamps: one [entry, exit] pair of %globaltimer ns per launch operation, zeroed.\n    run.stamp_owners = {{{}}};\n", owners.join(", ")));
        if multi {
            // Portable mapped host memory: a kernel reaches it whichever device runs it.
            out.push_str(&format!(
                "    if (cudaHostAlloc((void**)&run.stamps_host, {bytes}, cudaHostAllocMapped | cudaHostAllocPortable) == cudaSuccess &&\n\
                 \x20       cudaHostGetDevicePointer((void**)&run.stamps, run.stamps_host, 0) == cudaSuccess) {{\n\
                 \x20       memset(run.stamps_host, 0, {bytes});\n\
                 \x20       run.stamps_mapped = true;\n\
                 \x20   }} else {{\n\
                 \x20       run.stamps = nullptr;\n\
                 \x20       run.notes.push_back(\"no kernel stamps: allocating the stamp pool failed\");\n\
                 \x20   }}\n"
            ));
        } else {
            out.push_str(&format!(
                "    if (cudaMalloc((void**)&run.stamps, {bytes}) != cudaSuccess || cudaMemset(run.stamps, 0, {bytes}) != cudaSuccess) {{\n\
                 \x20       run.stamps = nullptr;\n\
                 \x20       run.notes.push_back(\"no kernel stamps: allocating the stamp pool failed\");\n\
                 \x20   }}\n"
            ));
        }
    }
    if case.timing.is_some() {
        let timed: Vec<String> = (0..case.script.len()).filter(|&i| case.is_timed(i)).map(|i| i.to_string()).collect();
        out.push_str(&format!(
            "\n    // timing: events: an origin on a private stream, and two events around each timed operation.\n\
             \x20   if (cudaStreamCreateWithPriority(&run.timing_stream, cudaStreamNonBlocking, 0) == cudaSuccess &&\n\
             \x20       cudaEventCreateWithFlags(&run.timing_origin, 0) == cudaSuccess) {{\n\
             \x20       for (int index : std::vector<int>{{{}}}) {{\n\
             \x20           cudaEvent_t before = nullptr, after = nullptr;\n\
             \x20           if (cudaEventCreateWithFlags(&before, 0) == cudaSuccess && cudaEventCreateWithFlags(&after, 0) == cudaSuccess) {{\n\
             \x20               run.timing_pairs[index] = {{before, after}};\n\
             \x20           }}\n\
             \x20       }}\n\
             \x20   }} else {{\n\
             \x20       run.timing_origin = nullptr;\n\
             \x20       run.notes.push_back(\"timing: creating the origin event failed; no device times\");\n\
             \x20   }}\n",
            timed.join(", ")
        ));
    }
    out.push('\n');
    out
}

/// Buffers whose final contents the record holds: every declared one, a `later` buffer or a slice only when an
/// expectation reads it (as `exec::teardown::read_buffers`).
fn read_back(case: &Case, names: &Names) -> Vec<(BufferInfo, Vec<u64>)> {
    let named = |buf: &str| {
        case.expects
            .iter()
            .flat_map(Expectation::predicates)
            .any(|p| matches!(p, Predicate::BufferEquals { buf: b, .. } if b == buf))
    };
    let probes = |buf: &str| -> Vec<u64> {
        case.expects
            .iter()
            .flat_map(Expectation::predicates)
            .filter_map(|p| match p {
                Predicate::BufferEquals { buf: b, index: Some(i), .. } if b == buf => Some(*i),
                _ => None,
            })
            .collect()
    };
    case.decls
        .iter()
        .filter(|d| match d {
            Decl::Buffer { name, later: true, .. } => named(name),
            Decl::Buffer { .. } => true,
            Decl::Slice { name, .. } => named(name),
            _ => false,
        })
        .filter_map(|d| Some((names.buffer(d.name()).ok()?, probes(d.name()))))
        .collect()
}

/// Everything after the script, as `exec::run_case` does it.
pub fn teardown(case: &Case, names: &Names) -> String {
    let processes = has_processes(case);
    let mut out = String::from(
        "\n    // After the script: every gate open, the keeper stopped, captures the script left open ended (on the\n\
         \x20   // thread that began each), capture modes restored, the case threads stopped.\n",
    );
    if processes {
        out.push_str("    // In a peer: nothing more until the main process says finish (its gates are open then).\n    run.peer_wait_finish();\n");
    }
    out.push_str("    for (cc::Gate* gate : run.gates) gate->open(cc::CLEANUP);\n");
    if processes {
        out.push_str(
            "    // Before this process frees anything: each peer opens its gates, synchronizes, closes its mappings of\n\
             \x20   // our memory and releases what it made; its notes join ours.\n\
             \x20   run.finish_peers();\n",
        );
    }
    out.push_str(
        "\
         \x20   run.keeper.finish();\n\
         \x20   if (run.keeper.fired) run.notes.push_back(\"the watchdog opened every gate at \" + std::to_string(*run.keeper.fired / 1000000) + \" ms (the case deadline)\");\n\
         \x20   run.end_open_captures();\n\
         \x20   run.restore_capture_modes();\n",
    );
    for d in case.decls.iter().filter(|d| matches!(d, Decl::Thread { .. })) {
        out.push_str(&format!("    {}.stop();\n", names.var(d.name())));
    }
    // A case with an `env:` may run where no device is visible (the no-device sweep): then there is nothing to
    // synchronize, and the executor makes no final synchronize either (exec::run_bare).
    if !case.env.is_empty() {
        out.push_str(
            "\n    // No device visible (the case's env): no final synchronize, as the suite's executor.\n\
             \x20   int visible_devices = 0;\n\
             \x20   if (cudaGetDeviceCount(&visible_devices) != cudaSuccess || visible_devices == 0) {\n\
             \x20       cc::Run::print(run.observations({}));\n\
             \x20       return 0;\n\
             \x20   }\n",
        );
    }
    out.push_str(
        "\n    // The final synchronize (of each device of the case): every gate is open, so it waits only for finite work.\n\
         \x20   cudaError_t sync = cudaSuccess;\n\
         \x20   for (int ordinal : run.ordinals) {\n\
         \x20       cudaError_t e = run.on(ordinal, [] { return cudaDeviceSynchronize(); });\n\
         \x20       if (sync == cudaSuccess) sync = e;\n\
         \x20   }\n\
         \x20   run.final_sync = cc::code_name(sync);\n\
         \x20   if (sync != cudaSuccess) {\n\
         \x20       cudaError_t again = cudaSuccess;\n\
         \x20       for (int ordinal : run.ordinals) {\n\
         \x20           cudaError_t e = run.on(ordinal, [] { return cudaDeviceSynchronize(); });\n\
         \x20           if (again == cudaSuccess) again = e;\n\
         \x20       }\n\
         \x20       run.notes.push_back(\"the final cudaDeviceSynchronize returned \" + cc::code_name(sync) + \", a second one \" + cc::code_name(again));\n",
    );
    if case.script.iter().any(|op| matches!(op.kind, OpKind::Callback { .. })) {
        // The callbacks CUDA still owes after a device error: the failed synchronize did not wait for them.
        out.push_str("        run.wait_for_owed_callbacks();\n");
    }
    out.push_str("    }\n");
    if processes {
        out.push_str(&format!(
            "\n    // What the case made, released in reverse order of dependence (after a failed final synchronize,\n\
             \x20   // nothing: the process ends anyway).\n\
             \x20   auto release_all = [&] {{\n{}    }};\n\
             \x20   // A peer reads nothing back: it releases what it made and says its notes.\n\
             \x20   if (run.is_peer()) {{\n\
             \x20       if (sync == cudaSuccess) release_all();\n\
             \x20       run.peer_finished(sync);\n\
             \x20       return 0;\n\
             \x20   }}\n",
            release_lines(case, names)
        ));
    }
    out.push_str(
        "\n\
         \x20   // The final contents of the buffers.\n\
         \x20   std::vector<std::string> buffers;\n",
    );
    for (b, probes) in read_back(case, names) {
        let v = &b.var;
        let words = b.bytes / 4;
        let probes: Vec<String> = probes.iter().map(|p| p.to_string()).collect();
        let read = if b.kind.host_readable() {
            format!("words = cc::read_host({v}.copy, {words});")
        } else {
            let copy = format!("cudaMemcpy(words.data(), {v}.copy, {}, cudaMemcpyDeviceToHost)", words * 4);
            if case.device_count() > 1 {
                format!("e = run.on({v}.device >= 0 ? {v}.device : run.device(0), [&] {{ return {copy}; }});")
            } else {
                format!("e = {copy};")
            }
        };
        out.push_str(&format!(
            "    {{\n\
             \x20       std::vector<uint32_t> words({words});\n\
             \x20       cudaError_t e = cudaSuccess;\n\
             \x20       if ({v}.ready()) {read}\n\
             \x20       buffers.push_back(cc::buffer_record({v}, {kind}, {bytes}, {{{probes}}}, e, words, {v}.why()));\n\
             \x20   }}\n",
            kind = cstr(b.kind.word()),
            bytes = b.bytes,
            probes = probes.join(", ")
        ));
    }
    out.push_str(
        "\n    // Every graph the case still holds, read again (graphs built through the API have no end-capture record).\n\
         \x20   run.record_live_graphs();\n\n\
         \x20   // What the run observed, read before anything is released (stamps, gates, timing events).\n\
         \x20   std::string observations = run.observations(buffers);\n",
    );
    if processes {
        out.push_str("\n    if (sync == cudaSuccess) release_all();\n");
    } else {
        out.push_str(&release(case, names));
    }
    out.push_str("\n    cc::Run::print(observations);\n");
    if processes {
        // A peer notes what the executor's peer notes: not the watchdog, and its final synchronize once.
        out = out
            .replace("if (run.keeper.fired) run.notes", "if (run.keeper.fired && !run.is_peer()) run.notes")
            .replace("if (sync != cudaSuccess) {\n", "if (sync != cudaSuccess && !run.is_peer()) {\n");
    }
    out
}

/// The release, in reverse order of dependence (its codes are not observations). After a failed final
/// synchronize nothing is freed: a host function might still run, and the process ends anyway.
fn release(case: &Case, names: &Names) -> String {
    let mut out = String::from(
        "\n    // Release everything (after a failed final synchronize, nothing: the process ends anyway).\n\
         \x20   if (sync == cudaSuccess) {\n",
    );
    out.push_str(&release_lines(case, names));
    out.push_str("    }\n");
    out
}

/// The release statements (indented for a block inside `main`).
fn release_lines(case: &Case, names: &Names) -> String {
    let mut out = String::from("        run.release();\n");
    // Vulkan's objects first: the imports of them were released by the script's own calls.
    let vulkan = |op: &crate::case::ast::Op| {
        matches!(
            op.kind,
            OpKind::VkMemory { .. }
                | OpKind::VkSemaphore { .. }
                | OpKind::VkWrite { .. }
                | OpKind::VkRead { .. }
                | OpKind::VkCounter { .. }
        )
    };
    if case.script.iter().any(vulkan) {
        out.push_str("        cc::release_vulkan();\n");
    }
    for d in case.decls.iter().rev() {
        let v = names.var(d.name());
        match d {
            Decl::Event { .. } => out.push_str(&format!("        if ({v}.ready()) cudaEventDestroy({v}.h);\n")),
            Decl::Stream { .. } => out.push_str(&format!("        if ({v}.ready()) cudaStreamDestroy({v}.h);\n")),
            Decl::Buffer { kind, .. } => {
                let free = match kind {
                    MemKind::Device => format!("cudaFree({v}.copy)"),
                    MemKind::Pinned | MemKind::Mapped => format!("cudaFreeHost({v}.copy)"),
                    MemKind::Pageable => format!("free({v}.copy)"),
                    MemKind::Managed => format!("if ({v}.storage == cc::MANAGED) cudaFree({v}.copy)"),
                };
                let unregister = if *kind == MemKind::Pageable {
                    format!("        if ({v}.ready() && {v}.registered) cudaHostUnregister({v}.copy);\n")
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "{unregister}        if ({v}.ready() && !{v}.graph_memory) {{ {}; }}\n",
                    if *kind == MemKind::Device { format!("if ({v}.storage == cc::DEVICE) {free}") } else { free }
                ));
            }
            Decl::Pool { default: false, .. } => {
                out.push_str(&format!("        if ({v}.ready()) cudaMemPoolDestroy({v}.h);\n"))
            }
            Decl::Gate { .. } => out.push_str(&format!("        if ({v}.host != nullptr) cudaFreeHost({v}.host);\n")),
            Decl::Pool { default: true, .. }
            | Decl::Thread { .. }
            | Decl::Graph { .. }
            | Decl::Exec { .. }
            | Decl::Condition { .. }
            | Decl::Process { .. }
            | Decl::Slice { .. } => {}
        }
    }
    let _ = ident;
    out
}
