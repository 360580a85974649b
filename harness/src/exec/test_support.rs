//! Builders shared by the executor's and the verdict's tests.

use crate::case::ast::{Case, Decl, Expectation, Op, OpKind, SourceMap};
use crate::device::gpu::DeviceInfo;

/// The H100 of TOOLCHAIN.md, as `gpu::probe` would describe it.
pub fn h100() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
        compute_capability: (9, 0),
        multiprocessors: 132,
        concurrent_kernels: true,
        async_engine_count: 3,
        can_map_host_memory: true,
        memory_pools: true,
        concurrent_managed_access: true,
        pageable_memory_access: false,
        total_memory: 85_029_158_912,
        unified_addressing: true,
        stream_priority_range: (-5, 0),
        priorities_read: true,
        device_count: 1,
        driver_version: 13000,
        runtime_version: 13000,
        visible: vec![crate::record::VisibleDevice {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
            pci_bus_id: "0000:19:00.0".into(),
        }],
        links: vec![],
    }
}

/// Device `ordinal` of a host with two H200s joined by NVLink (peer access both ways), as `gpu::probe` would
/// describe it.
pub fn h200_pair(ordinal: i32) -> DeviceInfo {
    let device = |o: i32| crate::record::VisibleDevice {
        ordinal: o,
        name: "NVIDIA H200".into(),
        uuid: format!("GPU-00000000-0000-0000-0000-00000000000{o}"),
        pci_bus_id: format!("0000:{:02x}:00.0", 0x19 + o),
    };
    let link = |from: i32, to: i32| crate::record::PeerLink {
        from,
        to,
        can_access_peer: Some(true),
        access_supported: Some(true),
        performance_rank: Some(0),
        native_atomics: Some(true),
        cuda_array_access: Some(true),
    };
    DeviceInfo {
        ordinal,
        name: "NVIDIA H200".into(),
        uuid: device(ordinal).uuid,
        device_count: 2,
        total_memory: 150_754_820_096,
        visible: vec![device(0), device(1)],
        links: vec![link(0, 1), link(1, 0)],
        ..h100()
    }
}

pub fn op(label: Option<&str>, thread: Option<&str>, kind: OpKind) -> Op {
    Op { label: label.map(Into::into), thread: thread.map(Into::into), kind, expect: vec![], repeat: 1 }
}

pub fn case(decls: Vec<Decl>, script: Vec<Op>, expects: Vec<Expectation>) -> Case {
    Case {
        id: "test/case".into(),
        rule: "a rule".into(),
        source: "a source".into(),
        requires: vec![],
        env: vec![],
        own_process: None,
        poisons: vec![],
        timing: None,
        samples: 1,
        positions: SourceMap {
            file: "test.case".into(),
            case_line: 1,
            decl_lines: (2..2 + decls.len() as u32).collect(),
            op_lines: (20..20 + script.len() as u32).collect(),
            expect_lines: (60..60 + expects.len() as u32).collect(),
            ..SourceMap::default()
        },
        decls,
        script,
        expects,
    }
}
