//! The mock child mode (like deqp-runner's `mock_deqp`): with `CUDA_CONFORMANCE_MOCK` set, a worker touches no GPU
//! and plays a behaviour per case, so that the runner's crash, timeout, dirty-context, flake and delay paths are
//! tested on any machine. The variable lists `CASE-ID=BEHAVIOUR` pairs separated by `;`; unlisted cases pass:
//!
//! | behaviour | the worker … |
//! |---|---|
//! | `pass` | answers pass |
//! | `fail` | answers fail, every time |
//! | `crash` | dies (abort) without answering |
//! | `hang` | never answers (the parent's deadline kills it) |
//! | `garbage` | prints an unreadable result line |
//! | `dirty` | answers pass, reports the context dirty, and exits |
//! | `flake` | answers fail the first time it runs the case, pass afterwards |
//! | `variant-flip` | answers variant `a`, then `b`, then `a` ... |
//! | `slow-gates` | fails at a shortened gate delay, passes at the written delays |
//! | `slow` | answers pass after 100 ms (as long as a real case with gates) |
//! | `leak` | answers pass with 100 MiB less device memory free after the case than before |
//!
//! Every answer's first message names the worker's process id, and says `warm` when the process was started ahead
//! of its first case, so tests can tell which process ran a case and how it was started.

use super::protocol::{started_warm, MemoryLoss, Reply, RESULT_PREFIX};
use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::CaseResult;
use std::collections::HashMap;
use std::time::Duration;

pub const MOCK_ENV: &str = "CUDA_CONFORMANCE_MOCK";
/// How many GPUs the command line's mock mode pretends to have (default 2).
pub const MOCK_DEVICES_ENV: &str = "CUDA_CONFORMANCE_MOCK_DEVICES";

pub struct Mock {
    behaviours: HashMap<String, String>,
    /// How often this process ran each case.
    runs: HashMap<String, u32>,
}

/// The mock of this process's environment, if any.
pub fn from_env() -> Option<Mock> {
    let spec = std::env::var(MOCK_ENV).ok()?;
    let behaviours = spec
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .map(|(id, b)| (id.trim().to_owned(), b.trim().to_owned()))
        .collect();
    Some(Mock { behaviours, runs: HashMap::new() })
}

impl Mock {
    /// Answers `case` as its behaviour says, at gate delay `scale`; a loss of device memory only with `memory`.
    pub(super) fn run(&mut self, case: &Case, scale: f64, memory: bool) -> Reply {
        let runs = self.runs.entry(case.id.clone()).or_insert(0);
        *runs += 1;
        let n = *runs;
        let behaviour = self.behaviours.get(&case.id).map(String::as_str).unwrap_or("pass");
        let pid = std::process::id();
        let warm = if started_warm() { ", warm" } else { "" };
        let answer = |kind: VerdictKind, variant: Option<&str>| {
            let verdict = Verdict {
                kind,
                variant: variant.map(str::to_owned),
                observed: None,
                messages: vec![format!("mock run {n} in process {pid} ({behaviour}{warm})")],
            };
            CaseResult::new(case, verdict, None, Duration::ZERO)
        };
        // The device memory is read only when the parent asked for it, as a worker on a GPU reads it.
        let memory = match behaviour {
            "leak" if memory => MemoryLoss { own_device_mib: 100, other_devices_mib: 0 },
            _ => MemoryLoss::default(),
        };
        let (result, dirty) = match behaviour {
            "fail" => (answer(VerdictKind::Fail, None), None),
            "crash" => std::process::abort(),
            "hang" => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            "garbage" => {
                println!("{RESULT_PREFIX}{{not json");
                std::process::exit(0);
            }
            "dirty" => (answer(VerdictKind::Pass, None), Some("mock: the case left the context dirty".to_owned())),
            "flake" if n == 1 => (answer(VerdictKind::Fail, None), None),
            "variant-flip" => (answer(VerdictKind::Variant, Some(if n % 2 == 1 { "a" } else { "b" })), None),
            "slow-gates" if scale < 1.0 => (answer(VerdictKind::Fail, None), None),
            "slow" => {
                std::thread::sleep(Duration::from_millis(100));
                (answer(VerdictKind::Pass, None), None)
            }
            _ => (answer(VerdictKind::Pass, None), None),
        };
        Reply { result, dirty, memory }
    }
}

/// The device a mock run reports (no GPU is touched).
pub fn mock_device() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "mock".into(),
        uuid: "GPU-mock".into(),
        compute_capability: (9, 0),
        multiprocessors: 1,
        concurrent_kernels: true,
        async_engine_count: 2,
        can_map_host_memory: true,
        memory_pools: true,
        concurrent_managed_access: true,
        pageable_memory_access: false,
        total_memory: 80 << 30,
        unified_addressing: true,
        stream_priority_range: (-1, 0),
        priorities_read: true,
        device_count: 1,
        driver_version: 13000,
        runtime_version: 13000,
        visible: Vec::new(),
        links: Vec::new(),
    }
}
