use super::*;
use crate::case::ast::{OpWord, INITIAL_BYTE};
use crate::case::parse_file;
use crate::case::words::Word;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn one_case(text: &str) -> Case {
    parse_file("t.case", text).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0)
}

fn suite() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The block a program has for the script line `line`: from its comment to the end of its `run.step`.
fn block_of(source: &str, line: u32) -> &str {
    let start = source.find(&format!("    // line {line}: ")).unwrap_or_else(|| panic!("no block for line {line}"));
    let rest = &source[start..];
    let end = rest.find("\n    });\n").map_or(rest.len(), |e| e + 9);
    &rest[..end]
}

/// The CUDA runtime functions each operation's C++ must call (the `exec/interpret/` functions call the same).
/// Exhaustive over the operation words: a new word needs its row.
fn calls(word: OpWord) -> &'static [&'static str] {
    match word {
        OpWord::Launch => &["cudaLaunchKernel"],
        OpWord::Memcpy => &["cudaMemcpy("],
        OpWord::MemcpyAsync => &["cudaMemcpyAsync("],
        OpWord::Memset => &["cudaMemset("],
        OpWord::MemsetAsync => &["cudaMemsetAsync("],
        OpWord::Record => &["cudaEventRecord"],
        OpWord::Wait => &["cudaStreamWaitEvent("],
        OpWord::Query => &["Query("],
        OpWord::Sync => &["Synchronize("],
        OpWord::DeviceSync => &["cudaDeviceSynchronize()"],
        OpWord::Elapsed => &["cudaEventElapsedTime("],
        OpWord::HostFunc => &["cudaLaunchHostFunc("],
        OpWord::Callback => &["cudaStreamAddCallback("],
        OpWord::BeginCapture => &["cudaStreamBeginCapture("],
        OpWord::EndCapture => &["cudaStreamEndCapture("],
        OpWord::CaptureStatus => &["cudaStreamIsCapturing("],
        OpWord::CaptureDeps => &["cudaStreamGetCaptureInfo("],
        OpWord::ExchangeCaptureMode => &["cudaThreadExchangeStreamCaptureMode("],
        OpWord::PointerType => &["cudaPointerGetAttributes("],
        OpWord::Instantiate => &["cudaGraphInstantiateWith"],
        OpWord::Update => &["cudaGraphExecUpdate("],
        OpWord::AddNode => &["cudaGraphAdd"],
        OpWord::AddDeps => &["cudaGraphAddDependencies("],
        OpWord::RemoveDeps => &["cudaGraphRemoveDependencies("],
        OpWord::Clone => &["cudaGraphClone("],
        OpWord::DestroyNode => &["cudaGraphDestroyNode("],
        OpWord::List => &["cudaGraphGet"],
        OpWord::SetNode => &["NodeSetParams"],
        OpWord::ExecSetNode => &["cudaGraphExec"],
        OpWord::Enable => &["cudaGraphNodeSetEnabled("],
        OpWord::IsEnabled => &["cudaGraphNodeGetEnabled("],
        OpWord::BeginCaptureToGraph => &["cudaStreamBeginCaptureToGraph("],
        OpWord::UpdateCaptureDeps => &["cudaStreamUpdateCaptureDependencies("],
        OpWord::ConditionCreate => &["cudaGraphConditionalHandleCreate("],
        OpWord::PoolSet => &["cudaMemPoolSetAttribute("],
        OpWord::PoolGet => &["cudaMemPoolGetAttribute("],
        OpWord::PoolTrim => &["cudaMemPoolTrimTo("],
        OpWord::GraphMemTrim => &["cudaDeviceGraphMemTrim("],
        OpWord::GraphMemGet => &["cudaDeviceGetGraphMemAttribute("],
        OpWord::LaunchGraph => &["cudaGraphLaunch("],
        OpWord::Upload => &["cudaGraphUpload("],
        OpWord::Create => &["op.call("],
        OpWord::Destroy => &["op.call("],
        OpWord::Malloc => &["cudaMalloc("],
        OpWord::MallocAsync => &["cudaMalloc"],
        OpWord::FreeAsync => &["cudaFreeAsync("],
        OpWord::Register => &["cudaHostRegister("],
        OpWord::Unregister => &["cudaHostUnregister("],
        OpWord::SetDevice => &["cudaSetDevice("],
        OpWord::GetDevice => &["cudaGetDevice("],
        OpWord::EnablePeerAccess => &["cudaDeviceEnablePeerAccess("],
        OpWord::DisablePeerAccess => &["cudaDeviceDisablePeerAccess("],
        OpWord::CanAccessPeer => &["cudaDeviceCanAccessPeer("],
        OpWord::MemcpyPeer => &["cudaMemcpyPeer("],
        OpWord::MemcpyPeerAsync => &["cudaMemcpyPeerAsync("],
        OpWord::SetLimit => &["cudaDeviceSetLimit("],
        OpWord::SetCacheConfig => &["cudaDeviceSetCacheConfig("],
        OpWord::StreamPriority => &["cudaStreamGetPriority("],
        OpWord::StreamFlags => &["cudaStreamGetFlags("],
        OpWord::Read => &["op."],
        OpWord::GetLastError => &["cudaGetLastError()"],
        OpWord::PeekLastError => &["cudaPeekAtLastError()"],
        OpWord::Open => &[".open"],
        OpWord::Sleep => &["sleep_for("],
        OpWord::MemcpyBatch => &["cudaMemcpyBatchAsync("],
        OpWord::Memcpy3dBatch => &["cudaMemcpy3DBatchAsync("],
        OpWord::StreamDevice => &["cudaStreamGetDevice("],
        OpWord::StreamId => &["cudaStreamGetId("],
        OpWord::StreamAttr => &["cudaStreamGetAttribute("],
        OpWord::SetStreamAttr => &["cudaStreamSetAttribute("],
        OpWord::CopyStreamAttrs => &["cudaStreamCopyAttributes("],
        OpWord::NodeAttr => &["cudaGraphKernelNodeGetAttribute("],
        OpWord::SetNodeAttr => &["cudaGraphKernelNodeSetAttribute("],
        OpWord::Attach => &["cudaStreamAttachMemAsync("],
        OpWord::Prefetch => &["cudaMemPrefetchAsync("],
        OpWord::Advise => &["cudaMemAdvise("],
        OpWord::MallocManaged => &["cudaMallocManaged("],
        OpWord::DeviceAttr => &["cudaDeviceGetAttribute("],
        OpWord::DeviceCount => &["cudaGetDeviceCount("],
        OpWord::IpcMemHandle => &["cudaIpcGetMemHandle("],
        OpWord::IpcOpenMem => &["cudaIpcOpenMemHandle("],
        OpWord::IpcCloseMem => &["cudaIpcCloseMemHandle("],
        OpWord::IpcEventHandle => &["cudaIpcGetEventHandle("],
        OpWord::IpcOpenEvent => &["cudaIpcOpenEventHandle("],
        OpWord::PoolExport => &["cudaMemPoolExportToShareableHandle("],
        OpWord::UserObject => &["cudaUserObjectCreate("],
        OpWord::RetainUserObject => &["cudaGraphRetainUserObject("],
        // cudaGraphReleaseUserObject( with a graph, cudaUserObjectRelease( of the case's own references.
        OpWord::ReleaseUserObject => &["UserObject", "Release"],
        // Reads the destructor's flag on the host: no CUDA call.
        OpWord::Destroyed => &["op.host("],
        OpWord::QueueDepth => &["cudaLaunchKernel("],
        // Vulkan through the header's session (dlopen'd loader), timed as host work.
        OpWord::VkMemory => &["vk.memory("],
        OpWord::VkSemaphore => &["vk.semaphore("],
        OpWord::VkWrite => &["vk.write("],
        OpWord::VkRead => &["vk.read("],
        OpWord::VkCounter => &["vk.counter("],
        // Any function by name: the witness calls its row's function through a timed lambda.
        OpWord::Call => &["op.call([&] { return cuda"],
    }
}

/// For each operation word, the first case of the suite that uses it (its reproducer is the word's witness).
fn witnesses(cases: &[Case]) -> BTreeMap<&'static str, &Case> {
    let mut found = BTreeMap::new();
    for case in cases {
        for op in &case.script {
            found.entry(op.kind.word().word()).or_insert(case);
        }
    }
    found
}

#[test]
fn every_operation_word_is_written_with_its_cuda_calls_in_a_program_of_the_suite() {
    let cases = suite();
    let witnesses = witnesses(&cases);
    let missing: Vec<&str> = OpWord::ALL.iter().map(|w| w.word()).filter(|w| !witnesses.contains_key(w)).collect();
    assert!(missing.is_empty(), "no case in cases/ uses {missing:?}, so no reproducer shows their C++");
    // Every line of every case: its block calls what the operation calls, unless the executor would not run it.
    for case in &cases {
        let source = program(case).unwrap_or_else(|e| panic!("{e}")).source;
        for (index, op) in case.script.iter().enumerate() {
            let block = block_of(&source, case.positions.op_lines[index]);
            if block.contains("op.skip(\"") {
                continue;
            }
            for call in calls(op.kind.word()) {
                assert!(block.contains(call), "{} line {}: no {call} in\n{block}", case.id, op.kind.word().word());
            }
        }
    }
}

#[test]
fn no_case_of_the_suite_fails_to_be_written() {
    let failed: Vec<String> = suite().iter().filter_map(|c| program(c).err()).map(|e| e.to_string()).collect();
    assert!(failed.is_empty(), "{} case(s) cannot be written as C++:\n{}", failed.len(), failed.join("\n"));
}

#[test]
fn file_stems_replace_slashes() {
    assert_eq!(file_stem("graph/update/dependency-count-differs"), "graph__update__dependency-count-differs");
}

#[test]
fn the_header_carries_the_kernels_verbatim_and_the_executors_defaults() {
    let h = header();
    assert!(h.contains(include_str!("../../kernels/probes.cu").trim_end()));
    assert!(h.contains(include_str!("../../kernels/conditional.cu").trim_end()));
    assert!(!h.contains("@@"), "a placeholder was left");
    assert!(h.contains("DEFAULT_DEADLINE_MS = 20000;"));
    assert!(h.contains(&format!("INITIAL_BYTE = {:#X};", INITIAL_BYTE).replace("0X", "0x")));
}

const SMALL: &str = "case t/small
  rule: r
  source: s

  stream s non-blocking
  buffer d device 4KiB
  buffer h pinned 4KiB
  gate g
  thread t
  graph gr

  k:    launch gate g on s
  c:    memcpy-async h d on s
        @t begin-capture s
        open g after 1ms
        sync s => cudaErrorStreamCaptureUnsupported
        @t end-capture s into gr

  expect c returned cudaSuccess
end
";

#[test]
fn a_small_case_reads_as_the_executor_runs_it() {
    let case = one_case(SMALL);
    let p = program(&case).unwrap();
    let s = &p.source;
    assert_eq!(p.file_stem, "t__small");
    // The case on top, then the header.
    assert!(s.starts_with("// Reproducer of the cuda-conformance case t/small\n"));
    assert!(s.contains("//     rule: r\n"));
    assert!(s.contains("#include \"cuda_conformance_repro.h\""));
    // The op table: line, label, thread, text, acceptable codes, repeat.
    assert!(s.contains("{12, \"k\", nullptr, \"launch gate g on s\", {\"cudaSuccess\"}, 1},"));
    assert!(s.contains("{14, nullptr, \"t\", \"begin-capture s global\", {\"cudaSuccess\"}, 1},"), "{s}");
    assert!(s.contains("\"sync s\", {\"cudaErrorStreamCaptureUnsupported\"}, 1}"));
    // Declarations in order: the stream with its flags, the buffers with the 0xCD pattern, the gate mapped.
    assert!(s.contains("cudaStreamCreateWithPriority(&stream_s.h, cudaStreamNonBlocking, 0)"));
    assert!(s.contains("cudaMemset(buf_d.copy, cc::INITIAL_BYTE, 4096)"));
    assert!(s.contains("cudaMallocHost(&buf_h.copy, 4096)"));
    assert!(s.contains("cudaHostAlloc((void**)&gate_g.host, 8, cudaHostAllocMapped | cudaHostAllocPortable)"));
    // One block per line, the CUDA call visible, on its thread for `@t` (the thread comes from the table).
    let launch = block_of(s, 12);
    assert!(launch.contains("cudaLaunchKernel((const void*)cc_gate, dim3(1), dim3(1), args, 0, stream_s.h)"));
    assert!(launch.contains("if (!op.need(stream_s)) return;"));
    assert!(launch.contains("run.learn(op, stream_s.h);"), "a launch may add a node to a capture");
    let copy = block_of(s, 13);
    assert!(copy.contains("cudaMemcpyAsync(buf_h.copy, buf_d.copy, 4096, cudaMemcpyDeviceToHost, stream_s.h)"));
    assert!(block_of(s, 14).contains("cudaStreamBeginCapture(stream_s.h, cudaStreamCaptureModeGlobal)"));
    assert!(block_of(s, 14).contains("run.begun(&stream_s, nullptr, \"t\")"));
    assert!(block_of(s, 15).contains("run.keeper.open_at(gate_g"));
    assert!(block_of(s, 16).contains("cudaStreamSynchronize(stream_s.h)"));
    assert!(block_of(s, 17).contains("run.record_graph(\"gr\", 5, graph, capture);"));
    // The end: the final synchronize, the buffers read back, the observations printed.
    assert!(s.contains("run.final_sync = cc::code_name(sync);"));
    assert!(s.contains("cudaMemcpy(words.data(), buf_d.copy, 4096, cudaMemcpyDeviceToHost)"));
    assert!(s.contains("words = cc::read_host(buf_h.copy, 1024);"));
    // Observed before the release (the stamps and the gates' words are read from memory the release frees).
    let observed = s.find("std::string observations = run.observations(buffers);").expect("observations");
    assert!(observed < s.find("run.release();").unwrap() && s.contains("cc::Run::print(observations);"));
}

#[test]
fn env_values_that_name_the_device_are_filled_with_its_uuid_not_written_as_they_stand() {
    // `{uuid}` written as it stands would replace the runner's filled CUDA_VISIBLE_DEVICES and hide every device
    // (cudaErrorNoDevice from the first call): the header fills it from the runner's UUID, or asks CUDA by hand.
    let case = one_case(
        "case t/uuid\n rule: r\n source: s\n env: CUDA_VISIBLE_DEVICES={uuid},-1,0 CUDA_MODULE_LOADING=EAGER\n \
         n: device-count\n expect n value == 1\nend\n",
    );
    let s = program(&case).unwrap().source;
    assert!(s.contains("    cc::setenv_with_uuid(argc, argv, \"CUDA_VISIBLE_DEVICES\", \"{uuid},-1,0\");\n"), "{s}");
    assert!(s.contains("    setenv(\"CUDA_MODULE_LOADING\", \"EAGER\", 1);\n"), "{s}");
    assert!(!s.contains("setenv(\"CUDA_VISIBLE_DEVICES\""), "{s}");
    // Before the first CUDA call (the Run's constructor makes none; the program's first is cudaSetDevice).
    assert!(s.find("cc::setenv_with_uuid").unwrap() < s.find("cudaSetDevice(").unwrap());
    for id in ["launch-queue/visible-devices-by-uuid-prefix", "launch-queue/visible-devices-uuid-then-invalid"] {
        let case = suite().into_iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no case {id}"));
        let s = program(&case).unwrap().source;
        assert!(s.contains("cc::setenv_with_uuid(argc, argv, \"CUDA_VISIBLE_DEVICES\", \"{uuid"), "{id}: {s}");
    }
    // The header reads the variable the runner sets, and fills both words as the worker does.
    let h = header();
    assert!(h.contains(&format!("UUID_ENV = \"{}\";", crate::runner::cxx::UUID_ENV)));
    assert!(h.contains("fill(\"{uuid-prefix}\", uuid.substr(0, 12));"));
}

#[test]
fn the_runner_can_make_a_reproducers_host_waits_block_as_its_workers_do() {
    let h = header();
    assert!(h.contains(&format!("BLOCKING_WAITS_ENV = \"{}\";", crate::runner::cxx::BLOCKING_WAITS_ENV)));
    // In the Run's constructor (before the program's first cudaSetDevice), on each device of the case, as
    // runner::worker::block_host_waits does.
    let constructor = &h[h.find("    Run(int argc, char** argv").unwrap()..];
    let constructor = &constructor[..constructor.find("\n    }\n").unwrap()];
    assert!(constructor.contains("if (block != nullptr && strcmp(block, \"1\") == 0) block_host_waits();"));
    assert!(h.contains("if (e == cudaSuccess) e = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);"));
}

#[test]
fn an_operation_the_executor_would_not_run_is_recorded_as_not_run() {
    let case =
        one_case("case t/x\n rule: r\n source: s\n buffer a device 64\n buffer b device 128\n  memcpy a b 128\nend\n");
    let s = program(&case).unwrap().source;
    assert!(block_of(&s, 6).contains("op.skip(\"128 bytes do not fit (64 bytes available)\");"), "{s}");
}

#[test]
fn errors_name_the_case_the_line_and_the_operation() {
    let e = ReproError {
        case_id: "a/b".into(),
        line: 7,
        operation: "launch fill p 1 on s".into(),
        why: "no buffer p is declared".into(),
    };
    assert_eq!(
        e.to_string(),
        "case a/b line 7: launch fill p 1 on s cannot be written as C++: no buffer p is declared"
    );
}

/// The pinned nvcc (`scripts/setup.sh` installs CUDA 13.0's under `.toolkit/nvidia/cu13`), else
/// `$CUDA_CONFORMANCE_NVCC`, `$CUDA_HOME/bin/nvcc`, `/usr/local/cuda/bin/nvcc`.
fn nvcc() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        std::env::var_os("CUDA_CONFORMANCE_NVCC").map(PathBuf::from),
        Some(root.join(".toolkit/nvidia/cu13/bin/nvcc")),
        std::env::var_os("CUDA_HOME").map(|h| PathBuf::from(h).join("bin/nvcc")),
        Some(PathBuf::from("/usr/local/cuda/bin/nvcc")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_file())
}

/// Program `source` (file `stem.cu`) as a part of a translation unit of many programs: its text unchanged but for
/// the include (the unit includes the header once) and `main` (renamed), in a namespace of its own, with `#line`
/// so that an error names the program's file and line.
fn wrapped(source: &str, stem: &str, n: usize) -> String {
    let include = format!("#include \"{HEADER_NAME}\"");
    let main = "int main(int argc, char** argv) {";
    assert_eq!(source.matches(&include).count(), 1, "{stem}: one include");
    assert_eq!(source.matches(main).count(), 1, "{stem}: one main");
    let text = source.replacen(&include, "", 1).replacen(main, "int main_(int argc, char** argv) {", 1);
    format!("namespace program{n} {{\n#line 1 \"{stem}.cu\"\n{text}}}\n")
}

/// Every case of the suite generated and compiled with the pinned nvcc (`-std=c++17 -arch=sm_90 -c`). One program
/// per translation unit costs ~1.3 s on a free core and ~6 s on the shared 2-core machine, mostly the header (the
/// CUDA and C++ headers, the kernels' device code), so the programs are compiled in units of many (each program's
/// text unchanged, in a namespace: `wrapped`), one unit per thread; and the known finding's program as it is, to
/// an executable. Locally a missing nvcc skips the test (saying why); in CI (`CI=true`) it is a failure. A build
/// against another header than the pinned nvcc's (CUDA 12.x) writes calls of that header's signatures, which the
/// pinned 13.0 headers do not declare: there the test says so and compiles nothing.
#[test]
fn every_case_of_the_suite_compiles_with_the_pinned_nvcc() {
    if let Some(v) = crate::api::header_version().filter(|&v| v / 1000 != 13) {
        eprintln!("skipped: built against CUDA {}.{}'s header, not the pinned nvcc's 13.x", v / 1000, v % 1000 / 10);
        return;
    }
    let Some(nvcc) = nvcc() else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI: no nvcc (run scripts/setup.sh)");
        eprintln!("skipped: no nvcc (scripts/setup.sh installs the pinned one under .toolkit/nvidia/cu13)");
        return;
    };
    let cases = suite();
    let dir = std::env::temp_dir().join(format!("cuda-conformance-repro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(HEADER_NAME), header()).unwrap();
    let programs: Vec<Program> = cases.iter().map(|c| program(c).unwrap_or_else(|e| panic!("{e}"))).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    let mut units = vec![format!("#include \"{HEADER_NAME}\"\n"); threads];
    for (n, p) in programs.iter().enumerate() {
        units[n % threads].push_str(&wrapped(&p.source, &p.file_stem, n));
    }
    let finding = programs.iter().find(|p| p.file_stem == "graph__update__dependency-count-differs").unwrap();
    std::fs::write(dir.join(format!("{}.cu", finding.file_stem)), &finding.source).unwrap();
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.toolkit/nvidia/cu13/lib");
    let started = std::time::Instant::now();
    let compile = |args: Vec<std::ffi::OsString>| {
        let out = std::process::Command::new(&nvcc).args(["-std=c++17", "-arch=sm_90"]).args(&args).output();
        match out {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(String::from_utf8_lossy(&o.stderr).into_owned()),
            Err(e) => Some(format!("cannot run {}: {e}", nvcc.display())),
        }
    };
    let failures: Vec<String> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (i, unit) in units.iter().enumerate() {
            let path = dir.join(format!("unit{i}.cu"));
            std::fs::write(&path, unit).unwrap();
            let object = path.with_extension("o");
            handles.push(scope.spawn(move || compile(vec!["-c".into(), "-o".into(), object.into(), path.into()])));
        }
        // One program as a person compiles it: the file as written, to an executable.
        let source = dir.join(format!("{}.cu", finding.file_stem));
        let exe = dir.join(&finding.file_stem);
        let mut args: Vec<std::ffi::OsString> = vec![source.into(), "-o".into(), exe.into()];
        if lib.is_dir() {
            args.push(format!("-L{}", lib.display()).into());
        }
        handles.push(scope.spawn(move || compile(args)));
        handles.into_iter().filter_map(|h| h.join().unwrap()).collect()
    });
    eprintln!(
        "compiled {} reproducers in {} units and one executable with {} in {:.0} s on {threads} threads",
        programs.len(),
        units.len(),
        nvcc.display(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "reproducers that do not compile:\n{}", failures.join("\n"));
    // Every operation word's witness program is among those that compiled.
    assert_eq!(witnesses(&cases).len(), OpWord::ALL.len());
}
