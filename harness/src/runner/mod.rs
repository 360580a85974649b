//! Runs the suite: cases in worker processes (a batch per process, one CUDA context), spread over the devices, with
//! the checks that keep a fast run's verdicts those of a slow one. [`suite::run_suite`] is the loop behind
//! `cuda-conformance run`; the `cargo test` binary hands its case trials to one [`device_runner::DeviceRunner`].
//!
//! How the pieces fit, from the top down:
//!
//! - [`session::run_to_report`]: [`suite::run_suite`], with the report rewritten after every case.
//! - [`suite`]: runs one [`device_runner::DeviceRunner`] per device on a thread (a lane), each asking the
//!   [`schedule::Dispatcher`] what to run next; [`schedule`] holds the rules as pure code, with a simulated clock
//!   that tests them for 1 to 8 GPUs.
//! - [`device_runner`]: one device's processes (its batch worker, the warm processes of the cases that need their
//!   own, the several-device worker) and every run of a case (the first; at the written delays; for variant
//!   stability; reruns) that [`policy`] asks for.
//! - [`policy`]: the rules, as pure functions of a case and its results: which process a case needs, when a result
//!   must be confirmed at the written delays or must reproduce, and what makes a flake.
//! - [`worker`]: a worker process, both sides: the parent's handle ([`worker::Worker`], over `process`) and the
//!   child, which runs each case it is sent through [`one_case`] and checks that the context is clean after it.
//!   [`protocol`] is what they say to each other: a request carries the case's text, so the suite's cases and the
//!   figures' generated points go through the same worker. [`mock`] plays a child without a GPU, for the tests.
//! - [`one_case`]: one case in this process: requirements, execution, verdict.
//! - [`select`] (tiers, shards, devices) and [`bench`](mod@bench) (the same suite run several ways) serve the command line.
//!
//! What a run guarantees, and why:
//!
//! - **Isolation.** A child process runs the cases ([`worker`]); a crash, a hang or a sticky error costs one case and
//!   never the results of the others: the parent records it and starts a fresh child at the next case. A case that
//!   leaves the context dirty ends its worker. A case with `env:` (process-wide runtime settings) or with
//!   `poisons-context:` (a sticky error on purpose) gets a process of its own; the cases of one `env:` that need it
//!   for nothing else share one, one after another ([`policy::shared_process_env`]).
//! - **Gate delays.** A case's `open G after 300ms` is scaled to [`RunOptions::gate_delay`] (other delays in
//!   proportion): the blocking oracle only needs the open to come well after an API call's latency. A short delay
//!   can only make a predicate that compares a return or a kernel start with the open (`waited-for`, `before`) hold
//!   when it should not, never the other way. So a result at a shortened delay that is not plain `pass` — a fail, a
//!   quality warning, or a variant or observation decided by such a predicate — is run again at the written delays,
//!   and that run counts.
//! - **Flakes.** An unexpected result (a failure, or with a baseline anything it does not expect) is run again
//!   [`RunOptions::reruns`] times: if any run differs it is a `flake`, so a fail must reproduce. A `variant` runs
//!   twice and must name the same variant both times, else it is a `flake`.
//! - **Devices.** One worker per device, each seeing only its GPU (also a single device of a host with several:
//!   a process that sees every GPU initialises them all); a lane runs one case at a time (two contexts on one GPU
//!   time-slice: concurrency there buys no time).
//! - **Processes started ahead.** A new process's CUDA context costs about 430 ms, created at a host-wide rate
//!   (measured on 2 x H100: spreading context creations over two GPUs made none quicker). So each lane keeps a pool
//!   of processes started ahead for its next own-process cases ([`schedule::POOL_PER_LANE`]), each creating its
//!   context (and loading the probe kernels) while the lane runs batch cases, and runs an own-process case when its
//!   process is ready: the GPU does not wait for a context while batch work is left. A batch case during which a
//!   process of its lane was still starting has its device-memory check skipped (and counted). Such a case whose
//!   pick a short gate delay could decide starts at the written delays (it would be confirmed there anyway, in one
//!   more process).
//! - **Measurements.** Cases that `measure`, and the figures, run one at a time host-wide with nothing else on their
//!   GPU: on several GPUs the last lane takes them first (starting no process ahead meanwhile) while the others run
//!   cases; on one GPU they come once no process is starting, after the last own-process case. The figures' four
//!   processes (one per series) are started ahead on that lane, which measures once they are ready (on several
//!   GPUs it runs batch cases while they start): no context is made during a measurement, and the figures wait for
//!   no process start.
//! - **Host waits.** Workers block on a primitive while they wait for the device ([`HostWaits::Block`]) instead of
//!   spinning (cudart's default with fewer contexts than cores): on a host whose cores are busy with other work, a
//!   spinning waiter sees the device finish only when the scheduler next runs it. What a call returns, and whether
//!   it waits, is the same either way; how long a synchronous call takes is not (a wake-up per wait), so the cases
//!   that `measure` run in a worker of their own with cudart's default waits, as the seeds' programs they stand
//!   for do.
//! - **Several devices.** Cases that need several devices share one worker of their own that sees every GPU
//!   (with a context on each from the start), on the first lane, as one block that no measurement overlaps.
//! - **Device memory.** A worker reports how much less device memory was free after a case than before; only the
//!   parent knows whether another process of the run could have allocated on that device meanwhile (a
//!   several-device case touching it), so the parent judges: a loss of more than
//!   [`device_runner::MEMORY_SLACK_MIB`] on an undisturbed device ends the worker, like any other dirt (objects,
//!   limits, errors, captures, which the child checks itself); on a disturbed one the check is skipped and counted.

pub mod bench;
pub mod cxx;
pub mod device_runner;
pub mod mock;
pub mod one_case;
pub mod policy;
mod process;
pub mod protocol;
pub mod sanitizer;
pub mod schedule;
pub mod select;
pub mod session;
pub mod stats;
pub mod suite;
pub mod worker;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The delay the cases are written with: `open G after 300ms` is the common gate open.
pub const WRITTEN_GATE_DELAY: Duration = Duration::from_millis(300);
/// The default gate delay of a run: an order of magnitude above an API call's latency, a tenth of the written one.
pub const DEFAULT_GATE_DELAY: Duration = Duration::from_millis(30);

/// How a worker's host threads wait for the device (in `cudaStreamSynchronize`, `cudaMemcpy`, `cudaEventSynchronize`
/// ...). cudart's default (`cudaDeviceScheduleAuto`) spins while the process has fewer contexts than the host has
/// cores, whatever else runs there; on a busy host a spinning thread notices the device's completion only when the
/// scheduler next runs it, a few milliseconds per wait with 4 runnable threads per core, and the suite waits
/// thousands of times. A thread blocked on a primitive is woken when the work completes and runs at once. Neither
/// changes what a call returns or whether it waits, only how the host waits (no case reads the device flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostWaits {
    /// `cudaDeviceScheduleBlockingSync` in every worker, before its context exists.
    #[default]
    Block,
    /// cudart's default heuristic (`cudaDeviceScheduleAuto`): spin with fewer contexts than cores.
    Auto,
}

impl HostWaits {
    pub fn word(self) -> &'static str {
        match self {
            HostWaits::Block => "block",
            HostWaits::Auto => "auto",
        }
    }
}

/// Which devices' lanes take the cases that need a process of their own (`run --own-processes`), when a run uses
/// several GPUs. Such a case pays for a process start and a context creation (about 430 ms on an H100 host), which a
/// lane hides by starting the process ahead, in its pool, while it runs batch cases ([`schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OwnProcessLanes {
    /// Only the first device's lane keeps a pool and runs them (the old default, when they ran before any batch
    /// case: on a 2 x H100 host spreading them was slower then, 24.1-25.0 s against 22.0-22.7 s,
    /// results/2026-11-26_two-gpus_h100x2/README.md).
    FirstDevice,
    /// Every lane keeps a pool (the measuring lane once its measurements are done) and takes the next own-process
    /// cases as its pool empties.
    #[default]
    EveryDevice,
}

impl OwnProcessLanes {
    pub fn word(self) -> &'static str {
        match self {
            OwnProcessLanes::FirstDevice => "first-device",
            OwnProcessLanes::EveryDevice => "every-device",
        }
    }
}

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// A case with no result after this is killed (with its worker) and is a timeout.
    pub case_deadline: Duration,
    /// What a case's `open G after 300ms` stands for; other delays scale in proportion. At most the written delay.
    pub gate_delay: Duration,
    /// How often an unexpected result is run again before it counts.
    pub reruns: u32,
    /// One process per case (the slow, old way; for comparison), instead of worker processes.
    pub process_per_case: bool,
    /// Restrict each worker to its device (`CUDA_VISIBLE_DEVICES=<uuid>`); off for a single device as given.
    pub restrict_visibility: bool,
    /// Play `CUDA_CONFORMANCE_MOCK` behaviours instead of running on a GPU (tests).
    pub mock: Option<String>,
    /// The executable to re-execute as the child (default: the current one).
    pub exe: Option<PathBuf>,
    /// Expectations to judge the results against (the section of this GPU, driver and runtime).
    pub baseline: Option<BTreeMap<String, String>>,
    /// The expectation file's lines (`run --expectations FILE`): cases to skip, known flakes, expected failures.
    pub expectations: Option<crate::report::expectations::Expectations>,
    /// Run every worker under compute-sanitizer with this tool (`run --sanitizer`).
    pub sanitizer: Option<sanitizer::SanitizerSpec>,
    /// Which cases keep their whole trace in the written report (`run --trace all`: every case).
    pub traces: crate::record::Traces,
    /// How the workers' host threads wait for the device.
    pub host_waits: HostWaits,
    /// Which executor runs the cases (`run --executor`).
    pub executors: Executors,
    /// The compiled reproducers the C++ executor runs (`run --repro-dir`; needed unless `executors` is `Rust`).
    pub repro_dir: Option<PathBuf>,
    /// Which devices' runners take the own-process cases of a run over several GPUs.
    pub own_processes: OwnProcessLanes,
}

/// Which executor runs the cases: the Rust one in worker processes, each case's compiled C++ reproducer, or both,
/// every case run by each and the two compared ([`crate::readings::agreement`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Executors {
    #[default]
    Rust,
    Cxx,
    Both,
}

impl Executors {
    pub fn word(self) -> &'static str {
        match self {
            Executors::Rust => "rust",
            Executors::Cxx => "cxx",
            Executors::Both => "both",
        }
    }

    /// True when the Rust executor's worker processes run (alone or beside the reproducers).
    pub fn runs_workers(self) -> bool {
        self != Executors::Cxx
    }
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            case_deadline: Duration::from_secs(60),
            gate_delay: DEFAULT_GATE_DELAY,
            reruns: 2,
            process_per_case: false,
            restrict_visibility: false,
            mock: None,
            exe: None,
            baseline: None,
            expectations: None,
            sanitizer: None,
            traces: crate::record::Traces::NonPass,
            host_waits: HostWaits::default(),
            executors: Executors::Rust,
            repro_dir: None,
            own_processes: OwnProcessLanes::default(),
        }
    }
}

impl RunOptions {
    /// The factor applied to the cases' open delays (1 at the written delays).
    pub fn gate_delay_scale(&self) -> f64 {
        (self.gate_delay.as_secs_f64() / WRITTEN_GATE_DELAY.as_secs_f64()).min(1.0)
    }
}
