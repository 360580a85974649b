//! Parser, validator and printer against each other and against mistakes users make.

use super::ast::*;
use super::{parse_file, print_file, validate, Diagnostic};

pub(crate) const VALID: &str = "\
# a comment
case area/one
  rule: Work on the legacy stream waits for a blocking stream # the hash is text here
  source: somewhere
  requires: concurrent-kernels, async-engines >= 2, runtime >= 12.3, compute >= 9.0, connections >= 2, devices >= 2, peer-access, vulkan, memory < 128GiB
  env: CUDA_MODULE_LOADING=EAGER CUDA_DEVICE_MAX_CONNECTIONS=4
  poisons-context: cudaErrorIllegalAddress | cudaErrorLaunchFailure

  stream s blocking priority greatest
  stream nb non-blocking flags 0x1 => cudaSuccess | cudaErrorInvalidValue
  event e disable-timing blocking-sync
  event ip interprocess => cudaErrorInvalidValue
  buffer d device 4KiB
  buffer h pinned 4096
  buffer p pageable 1MiB
  buffer m mapped 64KiB
  gate g
  thread t
  graph gr
  exec x
  stream later_s non-blocking priority -100 later
  event later_e disable-timing later
  buffer later_d device 4KiB later
  buffer pooled device 4KiB later
  buffer ga device 4KiB later
  pool mp
  pool dp default
  condition c
  graph body
  stream s1 non-blocking device 1
  event e1 disable-timing device 1
  buffer d1 device 4KiB device 1
  buffer mm managed 4KiB
  pool xp posix-fd
  event ie disable-timing interprocess
  event ie2 later
  process pp

  held: launch gate g on s
  k:    launch spin 2ms on legacy
        launch fill d 7 on s
        launch transform d mul 3 add 0x10 on per-thread
        launch compare d h into m on null
  q:    query legacy => cudaErrorNotReady
        open g after 300ms
  c:    memcpy p d 4KiB
        memcpy-async h d on nb
        memset d 255
        memset-async h 1 16 on s
        record e on s external
        wait nb for e
        query e
        sync e
        sync s
        device-sync
  el:   elapsed e e => cudaErrorInvalidResourceHandle
  hf:   host-func on s snapshot h
  cb:   @t callback on s
        begin-capture s relaxed
        capture-status s is active
        capture-deps s is 1
        exchange-capture-mode thread-local
        end-capture s into gr
        instantiate x from gr
        upload x on s
        launch-graph x on s
        destroy x
        malloc 1MiB
        get-last-error
        pointer-type p is unregistered
        open g
        sleep 1ms
        launch spin 1ms on s grid full block 32 shared 1KiB
        launch spin on s grid 0
        launch lazy-spin 1ms on s
        launch spin 1ms on s trigger
        launch spin on s block 32 programmatic
        launch fault illegal-address on s
        launch fault trap on s
        create later_s
        create later_e
        create later_d
        stream-priority later_s is greatest
  rd:   read later_d
        destroy later_d
        malloc-async pooled on s from mp
        free-async pooled on s
        create gr
        n1: add-node gr kernel fill d 1
        n2: add-node gr memset d 0 after n1
        n3: add-node gr host after n1 n2
        n4: add-node gr mem-alloc ga
        n5: add-node gr mem-free ga after n4
        condition-create c in gr default 1
        n6: add-node gr conditional while c bodies body
        add-node body kernel countdown c d
        add-node body kernel spin 1us
        add-deps gr n1 -> n3
        remove-deps gr n1 -> n3
        ls: list edges gr room 9
        clone gr from gr => cudaErrorNotSupported | cudaSuccess
        set-node n1 kernel fill d 2
        instantiate x from gr auto-free-on-launch upload s with-params
        up: update x from gr
        exec-set-node x n2 memset d 1 4KiB
        enable x n1 off
        en: is-enabled x n1
        destroy-node n3
        begin-capture-to-graph s into gr after n1 relaxed
        update-capture-deps s set n2
        pool-set mp release-threshold max
        pg: pool-get dp reuse-allow-opportunistic
        pool-trim mp 0
        graph-mem-trim
        gm: graph-mem-get used-mem-current
        register p
        unregister p
        set-device
        get-device
        set-limit stack-size 4KiB
        set-cache-config prefer-shared
        peek-last-error
        set-device 1
        get-device is 1
        enable-peer-access 0
        disable-peer-access 0 => cudaErrorPeerAccessNotEnabled
  cap:  can-access-peer 0 1
        memcpy-peer d1 d 64
        memcpy-peer-async d d1 on s1
        memcpy d1 d default
        memcpy-async h d1 64 default on s1
  hh:   host-func on s snapshot h hold g
  sf:   stream-flags s
        memcpy-batch d h d1 h on s order during-call attrs-at 0 1
        memcpy-3d-batch h d on s1 order any
        memcpy-batch d h on per-thread
        stream-device legacy is 0
  i1:   stream-id s
  i2:   stream-id per-thread
        stream-attr s priority is greatest
        set-stream-attr s mem-sync-domain remote
        set-stream-attr s priority -2
        copy-stream-attrs s1 from s
        node-attr n1 priority is -2
        set-node-attr n1 mem-sync-domain default
        stream-attr s mem-sync-domain is remote
        attach mm on s single bytes 4KiB
        prefetch mm to device on s
        advise mm preferred-location host
        malloc-managed 0 host => cudaErrorInvalidValue
  da:   device-attr concurrent-managed-access
  dc:   device-count
  ih:   ipc-mem-handle d
  io:   ipc-open-mem ih => cudaErrorDeviceUninitialized
        ipc-close-mem io
  ieh:  ipc-event-handle ie
        ipc-open-event ieh into ie2
        pool-export xp
  uo:   user-object
        retain-user-object gr uo count 2 move
        release-user-object gr uo count 1
        release-user-object uo count 1
  ud:   destroyed uo wait
  qd:   queue-depth s behind g max 100
  mi:   call cudaMemGetInfo total=null
        call cudaMemcpyAsync dst=d src=d count=4096 kind=cudaMemcpyDeviceToDevice stream=s
        call cudaMemset3D pitchedDevPtr={ptr=d pitch=64 xsize=64 ysize=1} value=0 extent={width=64 height=1 depth=1}
        call cudaGetDeviceProperties prop=out device=count => cudaErrorInvalidDevice
        call cudaStreamGetPriority hStream=legacy priority=out
  ar:   call cudaMallocArray desc={x=32 f=cudaChannelFormatKindUnsigned} width=16 height=0 flags=0
        call cudaFreeArray array=ar.array
  pc:   @pp device-count
  vm:   vk-memory 64KiB
  vs:   vk-semaphore binary
  vt:   vk-semaphore timeline initial 3
        vk-write vm 7
  vr:   vk-read vm at 4KiB bytes 4KiB
  vc:   vk-counter vt
        call cudaImportExternalMemory memHandleDesc={type_=cudaExternalMemoryHandleTypeOpaqueFd handle={fd=vm.fd} size=vm.size}

  expect held before k
  expect ls value == 3
  expect en value <= 1
  expect gm value >= 1MiB
  expect pg value != max
  expect ls null-padded
  expect up result is topology-changed
  expect up error-node is n1
  expect up error-from is none
  expect n4 same-address n4
  expect n4 other-address n4
  expect node-kind gr n6 is conditional
  quality held overlaps k
  expect q returned cudaErrorNotReady
  expect c waited-for g
  expect c not-waited-for g
  expect d == 7
  expect d[3] == 0x7
  expect g timed-out
  expect host-order hf cb
  expect snapshot hf == 1
  expect snapshot vr == 7
  expect vc value == 3
  expect callback cb status cudaSuccess
  expect elapsed el >= 0.5
  expect elapsed el > 0
  expect nodes gr == 2
  expect edges gr == 1
  expect edge gr k -> held
  expect no-edge gr k -> held
  expect path gr k -> held
  expect no-path gr k -> held
  variant sync: c waited-for g | async: c not-waited-for g
  expect host-runs hh == 2
  expect elapsed el < 0
  expect elapsed el <= -0.5
  expect snapshot rd == 3
  expect sf value == 0
  expect i1 other-value i2
  expect i1 same-value i1
  expect ud value == 1
  expect ih other-address io
  measure depth: value qd
end

case area/two
  rule: Chunks of one buffer, timed by events.
  source: somewhere
  timing: events from up

  stream s
  event a
  event b
  buffer h pinned 1MiB
  buffer d device 1MiB
  buffer o device 1MiB
  slice h1 of h at 512KiB size 512KiB
  slice d1 of d at 512KiB size 512KiB

        record a on s
  up:   repeat 4 memcpy-async d1 h1 on s
  v:    launch vecadd d d into o on s
  v2:   launch vecadd d1 d1 into d1 on s grid full block 128
  sc:   launch sincos d iterations 100 on s grid 1024
  sl:   launch sleep 100000 on s block 256
  many: repeat 100 launch spin on s
        memcpy-async h1 d1 on s
        record b on s
  t:    elapsed a b

  expect o == 0
  measure seed: elapsed t
  measure gpu: device up to sl per 2
  measure bw: bandwidth up
  measure both: bandwidth up to v
  measure submit: host many per 100
  measure cpu: host up to sl
  measure busy: busy up to sl
  measure jitter: spread v v2 sc
end
";

fn parse(text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
    parse_file("cases/area.case", text)
}

fn first_error(text: &str) -> Diagnostic {
    match parse(text) {
        Ok(file) => validate(&file).into_iter().next().expect("expected a diagnostic"),
        Err(errors) => errors[0].clone(),
    }
}

fn case_with(decls: &str, script: &str, expects: &str) -> String {
    format!("case area/x\n  rule: r\n  source: s\n{decls}\n{script}\n{expects}\nend\n")
}

#[test]
fn parses_every_construct() {
    let file = parse(VALID).unwrap_or_else(|e| panic!("{e:?}"));
    let case = &file.cases[0];
    assert_eq!(case.id, "area/one");
    assert_eq!(case.rule, "Work on the legacy stream waits for a blocking stream # the hash is text here");
    assert_eq!(case.requires.len(), 9);
    assert_eq!(case.requires[8], Requirement::MemoryBelow(128 << 30));
    assert_eq!(case.requires[7], Requirement::Vulkan);
    assert_eq!(case.requires[5..7], [Requirement::Devices(2), Requirement::PeerAccess]);
    assert_eq!(case.requires[4], Requirement::Connections(2));
    assert_eq!(case.env[0], ("CUDA_MODULE_LOADING".to_owned(), "EAGER".to_owned()));
    assert_eq!(case.poisons.len(), 2);
    assert_eq!(case.requires[2], Requirement::Runtime(12030));
    assert_eq!(case.decls.len(), 29);
    assert_eq!(case.decls[21].device(), Some(1));
    assert_eq!(
        case.decls[23],
        Decl::Buffer { name: "d1".into(), kind: MemKind::Device, bytes: 4096, device: Some(1), later: false }
    );
    assert_eq!(case.script.len(), 141);
    // Vulkan objects named by their labels; a call passes a memory's exported FD and size as `L.fd`, `L.size`.
    assert_eq!(case.script[136].kind, OpKind::VkSemaphore { timeline: Some(3) });
    assert_eq!(case.script[138].kind, OpKind::VkRead { memory: "vm".into(), at: 4096, bytes: Some(4096) });
    // A user object named by its label, and a release with and without a graph.
    assert_eq!(
        case.script[121].kind,
        OpKind::RetainUserObject { graph: "gr".into(), object: "uo".into(), count: 2, take: true }
    );
    assert_eq!(case.script[123].kind, OpKind::ReleaseUserObject { graph: None, object: "uo".into(), count: 1 });
    // An operation of the case's second process.
    assert_eq!(
        (case.decls[28].clone(), case.script[133].thread.as_deref()),
        (Decl::Process { name: "pp".into() }, Some("pp"))
    );
    assert_eq!(case.script[84].kind, OpKind::SetDevice { device: 1 });
    assert_eq!(case.script[85].kind, OpKind::GetDevice { expect: Some(1) });
    assert_eq!(case.script[88].kind, OpKind::CanAccessPeer { device: 0, peer: 1 });
    assert_eq!(
        case.script[89].kind,
        OpKind::MemcpyPeer { dst: "d1".into(), src: "d".into(), bytes: Some(64), stream: None }
    );
    let s1 = Some(StreamRef::Named("s1".into()));
    assert_eq!(
        case.script[92].kind,
        OpKind::Memcpy { dst: "h".into(), src: "d1".into(), bytes: Some(64), inferred: true, stream: s1 }
    );
    assert_eq!(case.expects.len(), 43);
    let shape = LaunchShape::default();
    assert_eq!(
        case.script[1].kind,
        OpKind::Launch { kernel: KernelCall::Spin { ns: 2_000_000, shape }, stream: StreamRef::Legacy }
    );
    let full = LaunchShape { grid: Grid::Full, block: 32, shared_bytes: 1024, ..LaunchShape::default() };
    assert_eq!(
        case.script[34].kind,
        OpKind::Launch {
            kernel: KernelCall::Spin { ns: 1_000_000, shape: full },
            stream: StreamRef::Named("s".into())
        }
    );
    assert_eq!(case.script[5].expect, vec!["cudaErrorNotReady".to_owned()]);
    assert_eq!(case.script[13].kind, OpKind::Query { target: Target::Event("e".into()) });
    assert_eq!(case.script[16].kind, OpKind::DeviceSync);
    assert_eq!(case.script[19].thread.as_deref(), Some("t"));
    assert_eq!(case.positions.op_lines[0], 39);
}

#[test]
fn parses_slices_repeats_timing_and_measures() {
    let file = parse(VALID).unwrap_or_else(|e| panic!("{e:?}"));
    let case = &file.cases[1];
    assert_eq!(validate(&CaseFile { path: file.path.clone(), cases: vec![case.clone()] }), vec![]);
    assert_eq!(case.timing, Some(TimingSpec { source: Timing::Events, from: Some("up".into()) }));
    assert_eq!(file.cases[0].timing, None);
    assert_eq!(case.decls[7], Decl::Slice { name: "d1".into(), of: "d".into(), offset: 512 << 10, bytes: 512 << 10 });
    assert_eq!(case.script[1].repeat, 4);
    assert_eq!(case.script[0].repeat, 1);
    let s = StreamRef::Named("s".into());
    assert_eq!(
        case.script[3].kind,
        OpKind::Launch {
            kernel: KernelCall::VecAdd {
                a: "d1".into(),
                b: "d1".into(),
                into: "d1".into(),
                shape: ComputeShape { grid: Some(Grid::Full), block: Some(128) }
            },
            stream: s.clone()
        }
    );
    assert_eq!(
        case.script[5].kind,
        OpKind::Launch {
            kernel: KernelCall::Sleep { cycles: 100_000, shape: ComputeShape { grid: None, block: Some(256) } },
            stream: s
        }
    );
    let Expectation::Measure(m) = &case.expects[2] else { panic!("{:?}", case.expects[2]) };
    assert_eq!(m.of, MeasureOf::Device { from: "up".into(), to: Some("sl".into()), per: Some(2) });
    assert_eq!(m.of.unit(), "ms");
    assert_eq!(case.expects.len(), 9);
}

#[test]
fn printing_then_parsing_gives_the_case_back() {
    let file = parse(VALID).unwrap();
    let printed = print_file(&file);
    let again = parse(&printed).unwrap_or_else(|e| panic!("{e:?}\n{printed}"));
    assert_eq!(file.cases, again.cases);
}

#[test]
fn every_shipped_case_file_round_trips() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "case") {
            let name = path.display().to_string();
            let file = parse_file(&name, &std::fs::read_to_string(&path).unwrap()).unwrap();
            let again = parse_file(&name, &print_file(&file)).unwrap();
            assert_eq!(file.cases, again.cases, "{name}");
            seen += file.cases.len();
        }
    }
    assert!(seen >= 40, "only {seen} cases under {}", dir.display());
}

#[test]
fn unknown_words_point_at_the_token_and_suggest() {
    let d = first_error(&case_with("  strem s blocking", "", ""));
    assert_eq!((d.line, d.col), (4, 3));
    assert!(d.message.contains("did you mean `stream`?"), "{d}");

    let d = first_error(&case_with("  stream s", "  launch spni on s", ""));
    assert_eq!((d.line, d.col), (5, 10));
    assert!(d.message.contains("did you mean `spin`?"), "{d}");

    let d = first_error(&case_with("  stream s", "  sync ss", ""));
    assert_eq!((d.line, d.col), (5, 8));
    assert!(d.message.contains("did you mean `s`?"), "{d}");
    assert_eq!(d.to_string(), format!("cases/area.case:5:8: {}", d.message));
}

#[test]
fn names_of_the_wrong_kind_and_undefined_labels_are_rejected() {
    let d = first_error(&case_with("  stream s\n  buffer b device 4KiB", "  launch fill s 1 on s", ""));
    assert!(d.message.contains("`s` is a stream, expected a buffer"), "{d}");
    let d = first_error(&case_with("  stream s", "  k: launch spin on s", "  expect k before j"));
    assert!(d.message.contains("no operation is labelled `j`"), "{d}");
    let d = first_error(&case_with("  stream s", "  k: sync s", "  expect k before k"));
    assert!(d.message.contains("not a kernel launch"), "{d}");
}

#[test]
fn kernels_never_touch_pageable_memory() {
    let d = first_error(&case_with("  buffer p pageable 4KiB", "  launch fill p 1 on legacy", ""));
    assert!(d.message.contains("pageable"), "{d}");
    let d = first_error(&case_with("  buffer p device 6", "", ""));
    assert!(d.message.contains("multiple of 4"), "{d}");
}

#[test]
fn scripts_that_can_never_finish_are_rejected() {
    let d = first_error(&case_with("  stream s\n  gate g", "  launch gate g on s", ""));
    assert!(d.message.contains("never opened"), "{d}");
    let d = first_error(&case_with("  stream s\n  gate g", "  launch gate g on s\n  sync s\n  open g", ""));
    assert!(d.message.contains("wait forever for gate `g`"), "{d}");
    assert_eq!(d.line, 7);
    let d = first_error(&case_with("  gate g", "  launch gate g on legacy\n  device-sync\n  open g", ""));
    assert!(d.message.contains("wait forever"), "{d}");
    // Scheduling the open first makes the same script valid, and so does a non-blocking stream for a legacy sync.
    let ok = case_with("  stream s\n  gate g", "  launch gate g on s\n  open g after 100ms\n  sync s", "");
    assert!(validate(&parse(&ok).unwrap()).is_empty());
    let ok = case_with("  stream s non-blocking\n  gate g", "  launch gate g on s\n  sync legacy\n  open g", "");
    assert!(validate(&parse(&ok).unwrap()).is_empty());
    // A gate expected to time out needs no open.
    let ok = case_with("  stream s\n  gate g", "  launch gate g on s", "  expect g timed-out");
    assert!(validate(&parse(&ok).unwrap()).is_empty());
    // A gate held by a graph kernel node: closed from the graph's launch until opened.
    let decls = "  stream s\n  gate g\n  graph gr\n  exec x";
    let graph = "  create gr\n  add-node gr kernel gate g\n  instantiate x from gr\n  launch-graph x on s";
    let d = first_error(&case_with(decls, graph, ""));
    assert!(d.message.contains("held by a graph node but never opened"), "{d}");
    let d = first_error(&case_with(decls, &format!("{graph}\n  sync s\n  open g"), ""));
    assert!(d.message.contains("wait forever for gate `g`"), "{d}");
    let ok = case_with(decls, &format!("{graph}\n  open g after 100ms\n  sync s"), "");
    assert!(validate(&parse(&ok).unwrap()).is_empty());
    let ok = case_with(decls, &format!("  open g\n{graph}\n  sync s"), "");
    assert!(validate(&parse(&ok).unwrap()).is_empty());
}

#[test]
fn slices_repeats_and_measures_are_checked() {
    let buffers = "  stream s\n  buffer d device 4KiB\n  buffer h pinned 4KiB";
    let d = first_error(&case_with(&format!("{buffers}\n  slice x of d at 2KiB size 4KiB"), "", ""));
    assert!(d.message.contains("is not inside `d`"), "{d}");
    let d = first_error(&case_with(&format!("{buffers}\n  slice x of d at 2 size 4"), "", ""));
    assert!(d.message.contains("multiples of 4"), "{d}");
    let d = first_error(&case_with(&format!("{buffers}\n  slice x of s at 0 size 4"), "", ""));
    assert!(d.message.contains("needs a buffer declared above it"), "{d}");
    let d = first_error(&case_with("  buffer d device 4KiB later\n  slice x of d at 0 size 4", "  create d", ""));
    assert!(d.message.contains("cannot slice `later` buffer"), "{d}");
    let sliced = format!("{buffers}\n  slice x of d at 0 size 1KiB");
    let d = first_error(&case_with(&sliced, "  destroy d", ""));
    assert!(d.message.contains("slices of it would be left pointing at freed memory"), "{d}");
    let d = first_error(&case_with(&sliced, "  destroy x", ""));
    assert!(d.message.contains("it is part of another buffer"), "{d}");
    // A slice has its buffer's kind, and copies into it are bounded by its own size.
    let d = first_error(&case_with(&sliced, "  memcpy-async x h 2KiB on s", ""));
    assert!(d.message.contains("exceed buffer `x`"), "{d}");
    let ok = case_with(&sliced, "  memcpy-async x h on s\n  launch vecadd x x into x on s", "");
    assert!(validate(&parse(&ok).unwrap()).is_empty());

    let d = first_error(&case_with(buffers, "  repeat 0 launch spin on s", ""));
    assert!(d.message.contains("repeat count of at least 1"), "{d}");
    let d = first_error(&case_with(buffers, "  repeat 2 sync s", ""));
    assert!(d.message.contains("`repeat` runs kernel launches"), "{d}");
    let d = first_error(&case_with(buffers, "  launch vecadd d d into d on s shared 1KiB", ""));
    assert!(d.message.contains("is for `launch spin`"), "{d}");
    let d = first_error(&case_with(buffers, "  launch sincos d 100 on s", ""));
    assert!(d.message.contains("expected `iterations`"), "{d}");

    let d = first_error(&case_with(buffers, "  c: memcpy-async d h on s", "  measure bw: bandwidth c"));
    assert!(d.message.contains("needs `timing: events`"), "{d}");
    let d = first_error(&case_with(buffers, "  c: memcpy-async d h on s", "  measure t: device c"));
    assert!(d.message.contains("only kernel launches have device times"), "{d}");
    let d = first_error(&case_with(buffers, "  k: launch spin on s", "  measure t: device k\n  measure t: host k"));
    assert!(d.message.contains("measure `t` is named twice"), "{d}");
    let d =
        first_error(&case_with(buffers, "  k: launch spin on s\n  j: launch spin on s", "  measure t: device j to k"));
    assert!(d.message.contains("B comes before A"), "{d}");
    let d = first_error(&case_with(buffers, "  k: launch spin on s", "  measure t: elapsed k"));
    assert!(d.message.contains("not an elapsed operation"), "{d}");
    let d = first_error(&case_with(buffers, "  k: launch spin on s", "  measure t: spread k k"));
    assert!(d.message.contains("at least 3"), "{d}");
    let d = first_error(&case_with(buffers, "  k: launch spin on s", "  measure t: host k per 0"));
    assert!(d.message.contains("divisor of at least 1"), "{d}");
    let d = first_error("case area/x\n  rule: r\n  source: s\n  timing: cupti\nend\n");
    assert!(d.message.contains("expected a timing source (events)"), "{d}");
    let d = first_error("case area/x\n  rule: r\n  source: s\n  timing: events\n  timing: events\nend\n");
    assert!(d.message.contains("second `timing:`"), "{d}");
    let d = first_error("case area/x\n  rule: r\n  source: s\n  timing: events from nowhere\nend\n");
    assert!(d.message.contains("no operation is labelled `nowhere`"), "{d}");
    // Before `from`, a copy has no device time.
    let timed_from = "case area/x\n  rule: r\n  source: s\n  timing: events from k\n  buffer d device 4KiB\n  \
                      buffer h pinned 4KiB\n\n  c: memcpy d h\n  k: launch spin on legacy\n\n  expect d == 0\n  \
                      measure t: device c\nend\n";
    assert!(first_error(timed_from).message.contains("`c` has no device time"));
}

#[test]
fn device_indices_are_checked() {
    let two = "  requires: devices >= 2\n";
    let d = first_error(&case_with("  stream s device 1", "", ""));
    assert!(d.message.contains("device 1 needs `requires: devices >= 2`"), "{d}");
    let d = first_error(&case_with(two, "  set-device 2", ""));
    assert!(d.message.contains("device 2 needs `requires: devices >= 3`"), "{d}");
    let d = first_error(&case_with(&format!("{two}  buffer h pinned 4KiB device 1"), "", ""));
    assert!(d.message.contains("a pinned buffer is host memory"), "{d}");
    let d = first_error(&case_with(&format!("{two}  stream s later device 1"), "  create s", ""));
    assert!(d.message.contains("`s` is `later`: `create` makes it on the current device of its thread"), "{d}");
    let d = first_error(&case_with("  requires: peer-access", "", ""));
    assert!(d.message.contains("`peer-access` is between devices: add `devices >= 2`"), "{d}");
    let d = first_error(&case_with(
        &format!("{two}  buffer h pinned 4KiB\n  buffer d device 4KiB"),
        "  memcpy-peer d h",
        "",
    ));
    assert!(d.message.contains("a peer copy is between device buffers; `h` is pinned memory"), "{d}");
    let d = first_error(&case_with("  stream s", "  set-device x", ""));
    assert!(d.message.contains("expected a device index"), "{d}");
    // Stamps of two GPUs are two clocks.
    let decls = format!("{two}  stream s\n  stream s1 device 1");
    let script = "  a: launch spin on s\n  set-device 1\n  b: launch spin on s1";
    let d = first_error(&case_with(&decls, script, "  expect a before b"));
    assert!(d.message.contains("`a` runs on device 0 and `b` on device 1"), "{d}");
    let same = case_with(&decls, &format!("{script}\n  c: launch spin on s1"), "  expect b before c");
    assert!(validate(&parse(&same).unwrap()).is_empty());
}

#[test]
fn structure_errors_are_reported() {
    assert!(first_error("case area/x\n  rule: r\n").message.contains("no `end`"));
    assert!(first_error("case area/x\n  rule: r\nend\n").message.contains("no `source:`"));
    assert!(first_error("stream s\n").message.contains("expected `case ID`"));
    let d = first_error(&case_with("", "  sync legacy", "  expect x == 1\n  stream s"));
    assert!(d.message.contains("out of order"), "{d}");
    let d = first_error(&case_with("  stream s", "  sync s => cudaErrorNotRedy", ""));
    assert!(d.message.contains("did you mean `cudaErrorNotReady`?"), "{d}");
    let d = first_error("case Area/X\n  rule: r\n  source: s\nend\n");
    assert!(d.message.contains("case id"), "{d}");
    let d = first_error("case other/x\n  rule: r\n  source: s\nend\n");
    assert!(d.message.contains("area `other`"), "{d}");
}

#[test]
fn no_input_makes_the_parser_panic() {
    // Every prefix of a valid file, each line cut at every character, and noise.
    for end in 0..VALID.len() {
        if VALID.is_char_boundary(end) {
            let _ = parse(&VALID[..end]).map(|f| validate(&f));
        }
    }
    for line in VALID.lines() {
        for cut in 0..line.len() {
            let text = case_with("  stream s\n  gate g\n  buffer d device 4KiB", &line[..cut], "");
            let _ = parse(&text).map(|f| validate(&f));
        }
    }
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let alphabet: Vec<char> = "case end stream=>|:@[]->#\n 0x9ms-/é".chars().collect();
    for _ in 0..2000 {
        let text: String = (0..60)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            })
            .collect();
        let _ = parse(&text).map(|f| validate(&f));
    }
}

#[test]
fn samples_is_a_header_line_from_2_to_the_limit() {
    let text = "case area/x\n  rule: r\n  source: s\n  samples: 5\n\n  stream s\n\n  sync s\nend\n";
    let file = parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(file.cases[0].samples, 5);
    let printed = crate::case::print::print_case(&file.cases[0]);
    assert!(printed.contains("  samples: 5\n"), "{printed}");
    assert_eq!(parse(&printed).unwrap().cases[0].samples, 5);
    assert_eq!(parse(&case_with("", "", "")).unwrap().cases[0].samples, 1, "one run unless asked");
    for bad in ["1", "0", "21"] {
        let d = first_error(&format!("case area/x\n  rule: r\n  source: s\n  samples: {bad}\nend\n"));
        assert!(d.message.contains("from 2 to 20"), "{bad}: {d}");
    }
    let d = first_error("case area/x\n  rule: r\n  source: s\n  samples: 2\n  samples: 3\nend\n");
    assert!(d.message.contains("second `samples:`"), "{d}");
    let d = first_error("case area/x\n  rule: r\n  source: s\n\n  stream s\n  samples: 2\nend\n");
    assert!(d.message.contains("belongs in the header"), "{d}");
}

#[test]
fn device_launch_kernels_need_an_instantiated_exec_and_a_capture() {
    let decls = "  stream s\n  graph g\n  graph gp\n  exec e\n  buffer code device 8";
    let good = "        create g\n        add-node g kernel fill code 1\n        instantiate e from g device-launch\n\
                \x20       begin-capture s\n        launch device-launch e fire-and-forget times 2 into code on s\n\
                \x20       end-capture s into gp\n        sync s";
    let file = parse(&case_with(decls, good, "  expect code[0] == 0")).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(validate(&file).is_empty(), "{:?}", validate(&file));
    let OpKind::Launch { kernel, .. } = &file.cases[0].script[4].kind else { panic!("not a launch") };
    assert_eq!(
        kernel,
        &KernelCall::DeviceLaunch {
            exec: "e".into(),
            mode: super::words::DeviceLaunchMode::FireAndForget,
            times: 2,
            into: "code".into()
        }
    );

    // The kernel's argument is the exec's handle: an exec instantiated only later is an error.
    let late = "        create g\n        add-node g kernel fill code 1\n        begin-capture s\n\
                \x20       launch device-launch e tail into code on s\n        end-capture s into gp\n\
                \x20       instantiate e from g device-launch";
    let d = first_error(&case_with(decls, late, "  expect code == 0"));
    assert!(d.message.contains("instantiate e earlier in the script"), "{}", d.message);

    let zero = "        launch relaunch-self code runs 3 times 0 into code on s";
    let d = first_error(&case_with(decls, zero, "  expect code == 0"));
    assert!(d.message.contains("at least 1, found `0`"), "{}", d.message);

    let mode = "        launch device-launch e sideways into code on s";
    let d = first_error(&case_with(decls, mode, "  expect code == 0"));
    assert!(d.message.contains("device launch mode"), "{}", d.message);

    let node = "        create g\n        add-node g kernel current-graph into code";
    let d = first_error(&case_with(decls, node, "  expect code == 0"));
    assert!(d.message.contains("capture `launch current-graph ...`"), "{}", d.message);
}

#[test]
fn graph_launching_kernels_need_a_word_per_code() {
    let launch = KernelCall::DeviceLaunch {
        exec: "e".into(),
        mode: super::words::DeviceLaunchMode::Tail,
        times: 2,
        into: "c".into(),
    };
    assert_eq!(launch.short_codes_buffer(2), None);
    assert_eq!(
        launch.short_codes_buffer(1).as_deref(),
        Some("c holds 1 words, fewer than the 2 codes of the device launches")
    );
    let relaunch = KernelCall::RelaunchSelf { counter: "n".into(), runs: 4, times: 2, into: "c".into() };
    assert_eq!(relaunch.short_codes_buffer(6), None);
    assert_eq!(
        relaunch.short_codes_buffer(5).as_deref(),
        Some("c holds 5 words, fewer than the 6 codes of the relaunches")
    );
    assert_eq!(KernelCall::CurrentGraph { into: "c".into() }.short_codes_buffer(0), None);
}

#[test]
fn a_sweep_is_a_case_per_row_and_value_with_the_row_line() {
    let text = "\
sweep api/t
  rule: r
  source: s
  buffer h pinned 4096
  mutate: device=-1 | count
  each => cudaErrorInvalidDevice where documented
  row cudaSetDevice
  row cudaDeviceGetAttribute attr=cudaDevAttrWarpSize => cudaErrorInvalidDevice | cudaErrorInvalidValue
  row cudaMemcpyPeer srcDevice dst=h src=h dstDevice=0 count=4 observe
end
";
    let file = super::parse::parse_file("t.case", text).unwrap_or_else(|d| panic!("{d:?}"));
    let ids: Vec<&str> = file.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "api/t/cudaSetDevice/1-negative",
            "api/t/cudaSetDevice/count",
            "api/t/cudaDeviceGetAttribute/1-negative",
            "api/t/cudaDeviceGetAttribute/count",
            "api/t/cudaMemcpyPeer/src-device/1-negative",
            "api/t/cudaMemcpyPeer/src-device/count",
        ]
    );
    // The row's call has the row's line, the mutation, and the codes (each's, the row's, or any).
    let row = |i: usize| (&file.cases[i].script.last().unwrap().kind, file.cases[i].positions.op_lines.last().copied());
    let (OpKind::Call(call), Some(7)) = row(0) else { panic!("{:?}", row(0)) };
    assert_eq!(call.text(), "cudaSetDevice device=-1");
    assert_eq!(file.cases[0].script.last().unwrap().expect, ["cudaErrorInvalidDevice"]);
    assert_eq!(file.cases[2].script.last().unwrap().expect, ["cudaErrorInvalidDevice", "cudaErrorInvalidValue"]);
    assert_eq!(file.cases[5].script.last().unwrap().expect, ["any"]);
    let (OpKind::Call(call), _) = row(5) else { panic!() };
    assert_eq!(call.text(), "cudaMemcpyPeer dst=h src=h dstDevice=0 count=4 srcDevice=count");
}

#[test]
fn a_sweep_row_makes_only_the_declarations_its_lines_name_unless_it_has_a_process_of_its_own() {
    let sweep = |header: &str| {
        format!(
            "\
sweep api/t
  rule: r names d in its prose
  source: s
{header}  stream s
  event e
  buffer d device 64KiB
  slice dm of d at 0 size 4096
  buffer h pinned 4096
  each observe
  then  expect h[0] == 0x0a0a0a0a
  row cudaStreamQuery stream=s
  row cudaMemset devPtr=dm value=0 count=4
  row cudaGetDeviceCount
end
"
        )
    };
    let names = |c: &Case| c.decls.iter().map(|d| d.name().to_owned()).collect::<Vec<_>>();
    let file = super::parse::parse_file("api.case", &sweep("")).unwrap_or_else(|d| panic!("{d:?}"));
    // Each row keeps what its lines name (the `then` expectation names h), a kept slice the buffer it is part of;
    // the prose of `rule:` names nothing.
    assert_eq!(names(&file.cases[0]), ["s", "h"]);
    assert_eq!(names(&file.cases[1]), ["d", "dm", "h"]);
    assert_eq!(names(&file.cases[2]), ["h"]);
    // A declaration left out keeps its line, as a comment, so the row's call keeps its line number (13).
    assert_eq!(file.cases[2].positions.op_lines.last(), Some(&13));
    assert!(file.cases[2].positions.text.contains("# not made for this row, which names it nowhere: stream s"));
    // The text a worker parses again gives the same case.
    let again = super::parse_one("api.case", file.cases[1].positions.case_line, &file.cases[1].positions.text)
        .unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(again, file.cases[1]);
    // Rows in a process of their own share it only with rows declared alike: they keep every declaration.
    let own =
        super::parse::parse_file("api.case", &sweep("  own-process: it must\n")).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(own.cases.iter().all(|c| names(c) == ["s", "e", "d", "dm", "h"]));
}

#[test]
fn a_sweep_row_naming_a_parameter_the_sweep_mutates_or_no_function_is_an_error_at_its_line() {
    let text = "sweep api/t\n  rule: r\n  source: s\n  mutate: out=null\n  each observe\n  row cudaGetDevic\nend\n";
    let (line, message) = call_error(super::parse::parse_file("t.case", text));
    assert_eq!((line, message.contains("did you mean `cudaGetDevice`")), (6, true), "{message}");
    let text = "sweep api/t\n  rule: r\n  source: s\n  mutate: out=null\n  each observe\n  row cudaGetDevice device=out\nend\n";
    let errors = super::parse::parse_file("t.case", text).unwrap_err();
    assert!(errors[0].message.contains("which the sweep mutates"), "{errors:?}");
}

#[test]
fn a_call_names_parameters_fields_and_constants_of_the_table_and_says_where_it_is_wrong() {
    let case = |script: &str| {
        let text = format!("case t/a\n  rule: r\n  source: s\n  buffer d device 4096\n{script}\nend\n");
        super::parse::parse_file("t.case", &text)
    };
    let ok = case("  c: call cudaMemset3D pitchedDevPtr={ptr=d pitch=64} value=0 extent={width=64 height=1 depth=1}\n  expect c returned cudaSuccess").unwrap();
    let OpKind::Call(call) = &ok.cases[0].script[0].kind else { panic!() };
    assert_eq!(call.text(), "cudaMemset3D pitchedDevPtr={ptr=d pitch=64} value=0 extent={width=64 height=1 depth=1}");
    for (script, message) in [
        ("  call cudaMemsett devPtr=d", "did you mean `cudaMemset`"),
        ("  call cudaMemset ptr=d", "has no parameter `ptr` (its parameters: devPtr, value, count)"),
        ("  call cudaMemset3D extent={w=1}", "`cudaExtent` has no field `w`"),
        ("  call cudaMemcpy kind=cudaMemcpyHostToDevicee", "expected a value for a copy-kind parameter"),
        ("  call cudaMemset devPtr=d devPtr=d", "named twice"),
    ] {
        let (line, error) = call_error(case(script));
        assert!(error.contains(message), "{script}: {error}");
        assert_eq!(line, 5, "{script}");
    }
}

/// The line and message of a call that does not resolve. With the suite's header (13.0 and later) that is an error
/// of the file; built against an older header, where the name may be one that header lacks, the case is made and its
/// call is unresolved with the same message (`parse.rs`, `call`), and the line is the operation's.
fn call_error(parsed: Result<CaseFile, Vec<Diagnostic>>) -> (u32, String) {
    if crate::api::header_version().is_none_or(|v| v >= 13000) {
        let errors = parsed.unwrap_err();
        return (errors[0].line, errors[0].message.clone());
    }
    let file = parsed.expect("an older header makes the case with its call unresolved");
    let case = &file.cases[0];
    let (i, call) = case
        .script
        .iter()
        .enumerate()
        .find_map(|(i, op)| match &op.kind {
            OpKind::Call(c) if c.unresolved.is_some() => Some((i, c)),
            _ => None,
        })
        .expect("an unresolved call");
    (case.positions.op_lines[i], call.unresolved.clone().unwrap().0)
}

/// The value of argument `name` of the second operation (a `call`) of the one case in `text`.
fn second_call_arg(text: &str, name: &str) -> crate::case::call::ArgValue {
    let file = super::parse::parse_file("t.case", text).unwrap();
    let OpKind::Call(call) = &file.cases[0].script[1].kind else { panic!("{:?}", file.cases[0].script[1]) };
    call.args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no argument {name}")).value.clone()
}

#[test]
fn tmp_and_what_follows_it_without_a_space_is_one_text_argument() {
    let text = "case t/a\n  rule: r\n  source: s\n  graph g\n  create g\n  ok: call cudaGraphDebugDotPrint graph=g path={tmp}/a.dot flags=0\nend\n";
    assert_eq!(second_call_arg(text, "path"), crate::case::call::ArgValue::Text("{tmp}/a.dot".into()));
    // With a space after the braces it is not one path: `{` would start a struct, which a text parameter has not.
    let spaced = text.replace("{tmp}/a.dot", "{tmp} /a.dot");
    let (line, message) = call_error(super::parse::parse_file("t.case", &spaced));
    assert_eq!(line, 6, "{message}");
}

#[test]
fn an_output_parameter_may_name_a_declared_buffer() {
    let text = "case t/a\n  rule: r\n  source: s\n  graph g\n  buffer n pinned 16\n  create g\n  e: call cudaGraphGetEdges graph=g numEdges=n\nend\n";
    let buffer = crate::case::call::ArgValue::Object("n".into(), crate::case::call::ObjectKind::Buffer);
    assert_eq!(second_call_arg(text, "numEdges"), buffer);
    // A name nothing declares is not a value of an output.
    let (line, message) = call_error(super::parse::parse_file("t.case", &text.replace("numEdges=n", "numEdges=m")));
    assert!(message.contains("`m`"), "line {line}: {message}");
}

/// The value of argument `name` of the only operation (a `call`) of `script` in a case, or the parse error.
fn first_call_arg(script: &str, name: &str) -> Result<crate::case::call::ArgValue, (u32, String)> {
    let text = format!("case t/a\n  rule: r\n  source: s\n  buffer h pinned 16\n{script}\nend\n");
    let file = super::parse::parse_file("t.case", &text).map_err(|e| (e[0].line, e[0].message.clone()))?;
    let OpKind::Call(call) = &file.cases[0].script[0].kind else { panic!("{:?}", file.cases[0].script[0]) };
    Ok(call.args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no argument {name}")).value.clone())
}

#[test]
fn words_joined_by_colons_without_spaces_are_one_text_argument() {
    // The bindings of an older header (the CI build against CUDA 12.0) leave a call they cannot resolve unparsed.
    if crate::api::header_version().is_some_and(|v| v < 13000) {
        return;
    }
    use crate::case::call::ArgValue;
    let bus = |value: &str| first_call_arg(&format!("  d: call cudaDeviceGetByPCIBusId pciBusId={value}"), "pciBusId");
    assert_eq!(bus("0000:ff:1f.7"), Ok(ArgValue::Text("0000:ff:1f.7".into())));
    assert_eq!(bus("ff:1f.7"), Ok(ArgValue::Text("ff:1f.7".into())));
    // Without a colon a text stays one word, and `L.param` an earlier call's output.
    assert_eq!(bus("zz"), Ok(ArgValue::Text("zz".into())));
    assert_eq!(bus("b.pciBusId"), Ok(ArgValue::Output { label: "b".into(), param: "pciBusId".into() }));
    // A label before the call is still a label; the printed call reads back the same.
    let file = super::parse::parse_file(
        "t.case",
        "case t/a\n  rule: r\n  source: s\n  d: call cudaDeviceGetByPCIBusId pciBusId=0000:ff:1f.7 => any\nend\n",
    )
    .unwrap();
    let op = &file.cases[0].script[0];
    assert_eq!(op.label.as_deref(), Some("d"));
    let OpKind::Call(call) = &op.kind else { panic!() };
    assert_eq!(call.text(), "cudaDeviceGetByPCIBusId pciBusId=0000:ff:1f.7");
    // A colon that ends the text (a space after it), or starts it, is an error that says so.
    let (line, message) = bus("0000:ff: 1f.7").unwrap_err();
    assert_eq!(line, 5);
    assert!(message.contains("ends with `:`"), "{message}");
    let (_, message) = bus(":ff").unwrap_err();
    assert!(message.contains("expected a text"), "{message}");
    // Elsewhere than a text a colon joins nothing: a number stays a number.
    let (_, message) = first_call_arg("  call cudaSetDevice device=0:1", "device").unwrap_err();
    assert!(!message.is_empty());
}

#[test]
fn a_callback_parameter_takes_a_probe_callback_of_its_type() {
    // The bindings of an older header (the CI build against CUDA 12.0) leave a call they cannot resolve unparsed.
    if crate::api::header_version().is_some_and(|v| v < 13000) {
        return;
    }
    use crate::case::call::ArgValue;
    use crate::case::words::CallbackWord;
    let log = first_call_arg("  call cudaLogsRegisterCallback callbackFunc=log-probe userData=h", "callbackFunc");
    assert_eq!(log, Ok(ArgValue::Callback(CallbackWord::Log)));
    let destroy = first_call_arg(
        "  call cudaUserObjectCreate ptr=h destroy=host-probe initialRefcount=1 flags=cudaUserObjectNoDestructorSync",
        "destroy",
    );
    assert_eq!(destroy, Ok(ArgValue::Callback(CallbackWord::Host)));
    let (line, message) =
        first_call_arg("  call cudaLogsRegisterCallback callbackFunc=host-probe", "callbackFunc").unwrap_err();
    assert_eq!(line, 5);
    assert!(message.contains("`host-probe` is a cudaHostFn_t; this parameter is a cudaLogsCallback_t"), "{message}");
    let (_, message) =
        first_call_arg("  call cudaLogsRegisterCallback callbackFunc=log-prob", "callbackFunc").unwrap_err();
    assert!(message.contains("did you mean `log-probe`"), "{message}");
}

#[test]
fn a_symbol_parameter_takes_a_probe_kernel_as_its_host_stub() {
    // The bindings of an older header (the CI build against CUDA 12.0) leave a call they cannot resolve unparsed.
    if crate::api::header_version().is_some_and(|v| v < 13000) {
        return;
    }
    use crate::case::call::ArgValue;
    use crate::case::words::KernelWord;
    let f = first_call_arg("  call cudaGetFuncBySymbol symbolPtr=spin", "symbolPtr");
    assert_eq!(f, Ok(ArgValue::Kernel(KernelWord::Spin)));
    let v = first_call_arg("  call cudaGetFuncBySymbol symbolPtr=cc_symbol", "symbolPtr");
    assert_eq!(v, Ok(ArgValue::Symbol(crate::case::words::SymbolWord::Probe)));
}

/// `own-process: REASON` asks for a fresh process of the case's own, with the state it is for; the reason is
/// required, the line belongs in the header once, and the printed case reads back the same.
#[test]
fn own_process_takes_a_reason_once_in_the_header() {
    let text = "case area/x\n  rule: r\n  source: s\n  own-process: it changes the device flags # why\n  \
                k: call cudaGetDeviceFlags\nend\n";
    let case = &parse(text).unwrap_or_else(|e| panic!("{e:?}")).cases[0];
    assert_eq!(case.own_process.as_deref(), Some("it changes the device flags"));
    assert!(case.needs_own_process());
    let again = parse(&crate::case::print::print_case(case)).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(again.cases[0].own_process, case.own_process);
    let empty = first_error("case area/x\n  rule: r\n  source: s\n  own-process:\nend\n");
    assert!(empty.message.contains("expected the reason"), "{empty:?}");
    let twice = first_error("case area/x\n  rule: r\n  source: s\n  own-process: a\n  own-process: b\nend\n");
    assert!(twice.message.contains("second `own-process:`"), "{twice:?}");
    let late = first_error("case area/x\n  rule: r\n  source: s\n  stream s\n  own-process: a\nend\n");
    assert!(late.message.contains("out of order"), "{late:?}");
    let colon = first_error("case area/x\n  rule: r\n  source: s\n  own-process a\nend\n");
    assert!(colon.message.contains("with a colon"), "{colon:?}");
}

#[test]
fn a_labelled_pool_export_offers_its_descriptor_to_a_later_call_and_nothing_else() {
    let text = |param: &str| {
        case_with(
            "  pool p posix-fd",
            &format!(
                "  x:    pool-export p\n  \
                 i:    call cudaMemPoolImportFromShareableHandle shareableHandle=x.{param} \
                 handleType=cudaMemHandleTypePosixFileDescriptor flags=0"
            ),
            "",
        )
    };
    let file = parse(&text("fd")).unwrap();
    assert!(validate(&file).is_empty(), "{:?}", validate(&file));
    let error = first_error(&text("size"));
    assert!(error.message.contains("`x.size`: `pool-export` offers fd"), "{}", error.message);
}

use super::call::ArgValue as Arg;

/// A device location's `id` names the case's device N for the devices the case requires (a several-device case
/// counts them from the GPU it was given); any other number is written as it is.
#[test]
fn a_device_locations_id_is_the_cases_device_within_its_required_devices() {
    let ids = |requires: &str, id: &str| -> Vec<Arg> {
        let text = format!(
            "case a/b\n  rule: r\n  source: s\n{requires}  pool p\n\n  acc:  call cudaMemPoolSetAccess memPool=p \
             descList={{location={{type_=cudaMemLocationTypeDevice id={id}}} flags=cudaMemAccessFlagsProtReadWrite}} \
             count=1 => any\n\n  expect acc returned cudaSuccess\nend\n"
        );
        let file = parse(&text).unwrap_or_else(|d| panic!("{d:?}"));
        let mut found = Vec::new();
        for op in &file.cases[0].script {
            if let OpKind::Call(call) = &op.kind {
                crate::case::call::all_values(&call.args).for_each(|v| {
                    if matches!(v, Arg::Device(_) | Arg::Int(_)) {
                        found.push(v.clone());
                    }
                });
            }
        }
        found
    };
    let two = "  requires: devices >= 2\n";
    assert!(ids(two, "1").contains(&Arg::Device(1)));
    assert!(ids("", "0").contains(&Arg::Device(0)));
    assert!(ids("", "1").contains(&Arg::Int(1)), "a device the case does not require: as written");
    assert!(ids(two, "4096").contains(&Arg::Int(4096)));
}
