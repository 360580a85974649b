//! Whether a case can run on this device: its `requires:` line plus what its declarations and operations imply.
//! Decided before any GPU work; an unmet requirement makes the verdict *not-supported*.

use crate::case::ast::{Case, Decl, Requirement};
use crate::device::gpu::{version_string, DeviceInfo};

/// Why `case` cannot run on `device`, or `None` if it can.
pub fn unmet_requirement(case: &Case, device: &DeviceInfo) -> Option<String> {
    let connections = crate::device::gpu::max_connections(&case.env);
    let serialising = crate::device::serialising::detect();
    unmet_requirement_in(case, device, crate::device::gpu::launch_blocking(), serialising.as_deref(), connections)
}

/// As [`unmet_requirement`], with the CUDA_LAUNCH_BLOCKING setting, the serialising tool seen (see
/// [`crate::device::serialising`]) and CUDA_DEVICE_MAX_CONNECTIONS given (so tests need not set the environment).
pub(crate) fn unmet_requirement_in(
    case: &Case,
    device: &DeviceInfo,
    launch_blocking: bool,
    serialising: Option<&str>,
    connections: u32,
) -> Option<String> {
    let devices = case.devices_required();
    if let Some(reason) = case.requires.iter().find_map(|r| unmet(r, device, connections, devices)) {
        return Some(reason);
    }
    if let Some(gate) = case.decls.iter().find(|d| matches!(d, Decl::Gate { .. })) {
        if !device.can_map_host_memory {
            return Some(format!(
                "gate {} needs mapped host memory; this device has canMapHostMemory = 0",
                gate.name()
            ));
        }
    }
    if launch_blocking && crate::device::serialising::launches_gate(case) {
        return Some(
            "CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous: a gate launch would hold the host until the \
             gate times out, so this case cannot observe anything"
                .to_owned(),
        );
    }
    if let Some(tool) = serialising {
        if tool.starts_with("compute-sanitizer") {
            let named = crate::device::serialising::sanitizer_tool();
            if let Some(why) = crate::device::serialising::tool_limitation(case, named.as_deref()) {
                return Some(format!("not observable under {tool}: {why}"));
            }
        }
        if let Some(why) = crate::device::serialising::needs_asynchrony(case) {
            return Some(format!(
                "{tool} serialises device work (kernels one at a time, calls waiting for it): {why}, which cannot \
                 be observed under it"
            ));
        }
    }
    None
}

/// Why `requirement` is not met on `d`, if it is not, for a case that uses `devices` devices. Exhaustive: a new
/// requirement must say how it is checked.
fn unmet(requirement: &Requirement, d: &DeviceInfo, connections: u32, devices: u32) -> Option<String> {
    match *requirement {
        Requirement::Connections(n) => (connections < n).then(|| {
            format!(
                "requires connections >= {n}: CUDA_DEVICE_MAX_CONNECTIONS is {connections}, so unrelated streams share \
                 hardware queues and work on one can be held behind another's (an environment setting, not a driver \
                 fault)"
            )
        }),
        Requirement::ConcurrentKernels => (!d.concurrent_kernels)
            .then(|| "requires concurrent-kernels; this device has concurrentKernels = 0".to_owned()),
        Requirement::MemoryBelow(bytes) => (d.total_memory >= bytes).then(|| {
            format!(
                "requires memory < {bytes} bytes; this device has totalGlobalMem = {} bytes, so the request can fit",
                d.total_memory
            )
        }),
        Requirement::AsyncEngines(n) => (d.async_engine_count < n).then(|| {
            format!("requires async-engines >= {n}; this device has asyncEngineCount = {}", d.async_engine_count)
        }),
        Requirement::Devices(n) => {
            (d.device_count < n).then(|| format!("requires devices >= {n}; {} visible", d.device_count))
        }
        Requirement::Runtime(v) => (d.runtime_version < v).then(|| {
            format!(
                "requires runtime >= {}; the linked runtime is {}",
                version_string(v),
                version_string(d.runtime_version)
            )
        }),
        Requirement::Driver(v) => (d.driver_version < v).then(|| {
            format!(
                "requires driver >= {}; the driver supports CUDA {}",
                version_string(v),
                version_string(d.driver_version)
            )
        }),
        Requirement::Compute(major, minor) => (d.compute_capability < (major, minor)).then(|| {
            format!(
                "requires compute >= {major}.{minor}; this device is {}.{}",
                d.compute_capability.0, d.compute_capability.1
            )
        }),
        // Not decided where the range was not read (a probe without a context): the worker that runs the case
        // probes fully and decides it there.
        Requirement::StreamPriorities => (d.priorities_read && d.stream_priority_range.0 == d.stream_priority_range.1)
            .then(|| {
                format!("requires stream-priorities; this device has a single priority ({})", d.stream_priority_range.0)
            }),
        Requirement::MappedMemory => {
            (!d.can_map_host_memory).then(|| "requires mapped-memory; this device has canMapHostMemory = 0".to_owned())
        }
        Requirement::MemoryPools => {
            (!d.memory_pools).then(|| "requires memory-pools; this device has memoryPoolsSupported = 0".to_owned())
        }
        Requirement::PeerAccess => peer_access_unmet(d, devices),
        // Managed memory
        Requirement::ConcurrentManagedAccess => (!d.concurrent_managed_access).then(|| {
            "requires concurrent-managed-access; this device has concurrentManagedAccess = 0 (the host may not \
             touch managed memory while kernels run)"
                .to_owned()
        }),
        Requirement::PageableMemoryAccess => (!d.pageable_memory_access).then(|| {
            "requires pageable-memory-access; this device has pageableMemoryAccess = 0 (no HMM or ATS: kernels \
             cannot use pageable host memory)"
                .to_owned()
        }),
        // A probed device means a driver: these cases run on CPU-only hosts (tests/no_driver.rs).
        // A Vulkan instance and device on this GPU, made once per process (`device::vulkan`).
        Requirement::Vulkan => crate::device::vulkan::unavailable(&d.uuid).map(|why| format!("requires vulkan; {why}")),
        Requirement::NoDriver => Some(
            "requires no-driver; this host has an NVIDIA driver (the case runs where none is installed: CI's CPU \
             machine, through tests/no_driver.rs)"
                .to_owned(),
        ),
    }
}

/// Why the case's `devices` devices (counted from `d`) cannot all access each other's memory, if they cannot.
fn peer_access_unmet(d: &DeviceInfo, devices: u32) -> Option<String> {
    let ordinals: Option<Vec<i32>> = (0..devices.max(2)).map(|i| d.case_device(i)).collect();
    let Some(ordinals) = ordinals else {
        return Some(format!("requires peer-access between {} devices; {} visible", devices.max(2), d.device_count));
    };
    for &from in &ordinals {
        for &to in ordinals.iter().filter(|&&to| to != from) {
            match d.link(from, to).and_then(|l| l.can_access_peer) {
                Some(true) => {}
                Some(false) => {
                    return Some(format!("requires peer-access; cudaDeviceCanAccessPeer({from}, {to}) is 0"));
                }
                None => {
                    return Some(format!(
                        "requires peer-access; cudaDeviceCanAccessPeer({from}, {to}) could not be asked"
                    ))
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ast::{KernelCall, Op, OpKind, SourceMap, StreamRef};
    use crate::exec::test_support::h100;

    fn case(requires: Vec<Requirement>, decls: Vec<Decl>, script: Vec<OpKind>) -> Case {
        Case {
            id: "t/x".into(),
            rule: String::new(),
            source: String::new(),
            requires,
            env: vec![],
            own_process: None,
            poisons: vec![],
            timing: None,
            samples: 1,
            decls,
            script: script
                .into_iter()
                .map(|kind| Op { label: None, thread: None, kind, expect: vec![], repeat: 1 })
                .collect(),
            expects: vec![],
            positions: SourceMap::default(),
        }
    }

    fn gate_case() -> Case {
        case(
            vec![],
            vec![Decl::Gate { name: "g".into() }],
            vec![OpKind::Launch { kernel: KernelCall::Gate { gate: "g".into() }, stream: StreamRef::Legacy }],
        )
    }

    #[test]
    fn met_requirements_pass() {
        let all = vec![
            Requirement::ConcurrentKernels,
            Requirement::AsyncEngines(2),
            Requirement::Devices(1),
            Requirement::Runtime(12030),
            Requirement::Driver(13000),
            Requirement::Compute(9, 0),
            Requirement::StreamPriorities,
            Requirement::MappedMemory,
            Requirement::MemoryBelow(128 << 30),
        ];
        assert_eq!(unmet_requirement_in(&case(all, vec![], vec![]), &h100(), false, None, 8), None);
    }

    #[test]
    fn each_unmet_requirement_says_what_the_device_has() {
        let d = h100();
        let check = |r: Requirement, want: &str| {
            let reason = unmet_requirement_in(&case(vec![r.clone()], vec![], vec![]), &d, false, None, 8);
            assert!(reason.as_deref().is_some_and(|s| s.contains(want)), "{r:?}: {reason:?}");
        };
        check(Requirement::AsyncEngines(4), "asyncEngineCount = 3");
        check(Requirement::Devices(2), "1 visible");
        check(Requirement::Runtime(13010), "runtime >= 13.1; the linked runtime is 13.0");
        check(Requirement::Driver(13020), "driver >= 13.2");
        check(Requirement::Compute(10, 0), "this device is 9.0");
        check(Requirement::Compute(9, 1), "compute >= 9.1");
        check(Requirement::MemoryBelow(64 << 30), "totalGlobalMem = 85029158912 bytes, so the request can fit");
        // The test fixture's GPU has a made-up UUID: no Vulkan device has it, or there is no loader or driver here
        // at all (CI's CPU machine). Either way a reason, never a panic, so the case is not-supported.
        check(Requirement::Vulkan, "requires vulkan; ");
    }

    #[test]
    fn device_properties_that_turn_requirements_off() {
        let mut d = h100();
        d.concurrent_kernels = false;
        d.stream_priority_range = (0, 0);
        d.can_map_host_memory = false;
        for r in [Requirement::ConcurrentKernels, Requirement::StreamPriorities, Requirement::MappedMemory] {
            assert!(
                unmet_requirement_in(&case(vec![r.clone()], vec![], vec![]), &d, false, None, 8).is_some(),
                "{r:?}"
            );
        }
        // A probe without a context (a trial's process under cargo-nextest) did not read the range: the requirement
        // is left to the worker, which probes fully, instead of every stream-priority case being skipped.
        d.priorities_read = false;
        let priorities = case(vec![Requirement::StreamPriorities], vec![], vec![]);
        assert_eq!(unmet_requirement_in(&priorities, &d, false, None, 8), None);
    }

    #[test]
    fn a_gate_implies_mapped_memory() {
        let mut d = h100();
        assert_eq!(unmet_requirement_in(&gate_case(), &d, false, None, 8), None);
        d.can_map_host_memory = false;
        let reason = unmet_requirement_in(&gate_case(), &d, false, None, 8).unwrap();
        assert!(reason.contains("gate g needs mapped host memory"), "{reason}");
    }

    #[test]
    fn peer_access_needs_every_pair_of_the_cases_devices() {
        use crate::exec::test_support::h200_pair;
        let needs = |n| case(vec![Requirement::Devices(n), Requirement::PeerAccess], vec![], vec![]);
        for ordinal in [0, 1] {
            assert_eq!(unmet_requirement_in(&needs(2), &h200_pair(ordinal), false, None, 8), None);
        }
        let reason = unmet_requirement_in(&needs(3), &h200_pair(0), false, None, 8).unwrap();
        assert!(reason.contains("requires devices >= 3; 2 visible"), "{reason}");
        let reason =
            unmet_requirement_in(&case(vec![Requirement::PeerAccess], vec![], vec![]), &h100(), false, None, 8);
        assert!(reason.is_some_and(|r| r.contains("requires peer-access between 2 devices; 1 visible")));
        let mut no_link = h200_pair(1);
        no_link.links[0].can_access_peer = Some(false);
        let reason = unmet_requirement_in(&needs(2), &no_link, false, None, 8).unwrap();
        assert!(reason.contains("cudaDeviceCanAccessPeer(0, 1) is 0"), "{reason}");
        no_link.links[0].can_access_peer = None;
        let reason = unmet_requirement_in(&needs(2), &no_link, false, None, 8).unwrap();
        assert!(reason.contains("could not be asked"), "{reason}");
    }

    /// Issue 11: on a host with one GPU every `multi-gpu/` case is not-supported, saying how many devices it needs;
    /// on two H200s joined by NVLink every one of them can run, on either GPU.
    #[test]
    fn every_multi_gpu_case_is_not_supported_on_one_gpu_and_runs_on_two() {
        use crate::exec::test_support::h200_pair;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/multi-gpu.case");
        let text = std::fs::read_to_string(path).unwrap();
        let cases = crate::case::parse_file(path, &text).unwrap_or_else(|e| panic!("{e:?}")).cases;
        assert!(cases.len() >= 20, "{} cases", cases.len());
        for c in &cases {
            let reason = unmet_requirement_in(c, &h100(), false, None, 8);
            assert!(
                reason.as_deref().is_some_and(|r| r.contains("requires devices >= 2; 1 visible")),
                "{}: {reason:?}",
                c.id
            );
            for ordinal in [0, 1] {
                assert_eq!(unmet_requirement_in(c, &h200_pair(ordinal), false, None, 8), None, "{} on {ordinal}", c.id);
            }
        }
    }

    #[test]
    fn launch_blocking_rules_out_gate_launches_only() {
        let reason = unmet_requirement_in(&gate_case(), &h100(), true, None, 8).unwrap();
        assert!(reason.contains("CUDA_LAUNCH_BLOCKING=1"), "{reason}");
        let spin = case(
            vec![],
            vec![],
            vec![OpKind::Launch {
                kernel: KernelCall::Spin { ns: 1000, shape: Default::default() },
                stream: StreamRef::Legacy,
            }],
        );
        assert_eq!(unmet_requirement_in(&spin, &h100(), true, None, 8), None);
    }
}
