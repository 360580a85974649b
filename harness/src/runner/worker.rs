//! Worker processes: the parent re-executes its own binary as a child that runs case after case in one CUDA
//! context, answering each with one result line, deqp-runner style. The suite's cases and the figures' generated
//! points go through the same worker, each sent as its text ([`super::protocol`] has the protocol).
//!
//! This file has both sides: [`serve_child_request`] (the child, which checks after each case that the context is as
//! it found it) and [`Worker`] (the parent's handle, which starts, asks, replaces and retires the processes).
//!
//! With `CUDA_CONFORMANCE_MOCK` set the child touches no GPU: it plays the behaviours of [`super::mock`].

use super::mock::{self, Mock};
use super::one_case::{run_in_process_with, verdict_of};
use super::process::Process;
use super::protocol::{
    MemoryLoss, Ready, Reply, Request, CHILD_ALL_DEVICES, CHILD_BLOCKING_WAITS, CHILD_DEVICE, CHILD_WARM, READY_PREFIX,
    RESULT_PREFIX,
};
use super::sanitizer::{self, SanitizerSpec};
use super::HostWaits;
use crate::case::ast::Case;
use crate::device::gpu::{self, DeviceInfo};
use crate::device::kernels::KernelTable;
use crate::exec::{self, ExecOptions};
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use cuda_sys as sys;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc::RecvTimeoutError;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// If this process was started as a worker, serves requests from stdin until it closes (or until a case leaves
/// the context dirty), then exits; if it was started as a case's second process (`process NAME`), serves that
/// case ([`crate::exec::peer::serve_peer_request`]: checked first, since a peer inherits its worker's
/// environment) and exits. Otherwise returns at once. Call it first thing in the `main` of every binary that runs
/// cases: the CLI and the `cargo test` binaries alike (a test binary without the peer's check once failed every
/// IPC case: its peers exited at once).
pub fn serve_child_request(kernels: impl Fn() -> KernelTable) {
    crate::exec::peer::serve_peer_request(&kernels);
    let Some(device) = std::env::var_os(CHILD_DEVICE) else {
        return;
    };
    let ordinal: i32 = device.to_string_lossy().parse().unwrap_or(0);
    let code = match serve(ordinal, kernels, mock::from_env()) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("{why}");
            3
        }
    };
    std::process::exit(code);
}

fn serve(ordinal: i32, kernels: impl FnOnce() -> KernelTable, mock: Option<Mock>) -> Result<(), String> {
    let started = Instant::now();
    if mock.is_none() {
        // The driver's initialisation (cuInit) happens in the first runtime call; timed apart from the context.
        let mut count = 0;
        // SAFETY: a valid out-pointer.
        let _ = unsafe { sys::cudaGetDeviceCount(&mut count) };
    }
    let initialised = started.elapsed();
    // A case whose `env:` hides every device (CUDA_VISIBLE_DEVICES=-1: the no-device sweep) has no device to
    // probe: its calls run bare (`exec::run_bare`), and so does every case this process is asked for.
    let hides_every_device = std::env::var("CUDA_VISIBLE_DEVICES").is_ok_and(|v| v.trim().starts_with('-'));
    // The probe kernels' handles: their registration ran before main and made no driver call, so a process with no
    // visible device has them too (the no-device sweep passes them to calls, as its reproducer does).
    let kernels = kernels();
    let mut gpu = match &mock {
        Some(_) => None,
        None => match gpu::probe(ordinal) {
            Ok(device) => Some(device),
            Err(_) if hides_every_device => None,
            Err(e) => return Err(e.to_string()),
        },
    };
    let bare = mock.is_none() && gpu.is_none();
    if gpu.is_some() && std::env::var_os(CHILD_BLOCKING_WAITS).is_some() {
        // Not fatal: the cases run as well with spinning waits, only slower on a busy host.
        if let Err(why) = block_host_waits(ordinal, std::env::var_os(CHILD_ALL_DEVICES).is_some()) {
            eprintln!("warning: {why}; host threads spin while they wait");
        }
    }
    if gpu.is_some() && std::env::var_os(CHILD_ALL_DEVICES).is_some() {
        create_every_context(ordinal)?;
    }
    // A process started ahead for a case with peers starts them too, while it makes its own context.
    let spares = std::env::var(crate::exec::peer::PEER_SPARES_ENV).ok().and_then(|n| n.parse::<usize>().ok());
    if let (Some(count), Some(device), true) = (spares, &gpu, super::protocol::started_warm()) {
        crate::exec::peer::start_spares(count, device);
    }
    if super::protocol::started_warm() {
        if gpu.is_some() {
            // cudaFree(NULL) is the documented way to create the primary context without doing anything else.
            // SAFETY: freeing a null pointer is a no-op.
            let code = unsafe { sys::cudaFree(std::ptr::null_mut()) };
            if code != sys::cudaError::cudaSuccess {
                return Err(format!("cannot create the CUDA context: cudaFree(NULL) returned {code}"));
            }
            // The probe kernels' module too: the executor loads it before every case's script anyway (so a case
            // sees the same state), and a process started ahead pays for it while other cases run. A failure here
            // is the case's to report, when its own load fails the same way.
            let _ = exec::preload_kernels(&kernels);
        }
        // The API table (the header parsed: about 20 ms in a release build, 130 ms in a debug one) is built by the
        // first request whose case has a `call`, when it is validated; a process started ahead builds it now,
        // while the lane runs other cases, instead of on the lane's path.
        let _ = crate::api::table();
        if spares.is_some() {
            // Ready means ready for the case: its peers too.
            crate::exec::peer::await_spares(Duration::from_secs(60));
        }
        let ready = Ready { init_ms: ms(initialised), context_ms: ms(started.elapsed() - initialised) };
        exec::phases::event(&format!("process ready pid {}", std::process::id()));
        let json = serde_json::to_string(&ready).unwrap_or_default();
        let mut out = std::io::stdout().lock();
        writeln!(out, "{READY_PREFIX} {json}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot say ready: {e}"))?;
    }
    let mut mock = mock;
    let all_devices = std::env::var_os(CHILD_ALL_DEVICES).is_some();
    // The objects of the sweep row run last, while the parent sends rows that share its prelude.
    let mut shared: Option<exec::SharedRows> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("cannot read a request: {e}"))?;
        exec::phases::begin();
        let request: Request = serde_json::from_str(&line).map_err(|e| format!("unreadable request {line:?}: {e}"))?;
        // The parent parsed and validated this text already: a failure here is a bug, which ends the child and so
        // costs the case a crash verdict that carries this message.
        let case = request.case()?;
        exec::phases::mark("parse");
        if !request.shares_prelude {
            if let Some(kept) = shared.take() {
                release_shared(kept);
            }
        }
        let reply = match (&mut mock, &mut gpu) {
            (Some(mock), _) => mock.run(&case, request.gate_delay_scale, !request.skip_memory_check),
            (None, Some(device)) if request.shares_prelude => {
                run_sharing(&case, &kernels, device, request.gate_delay_scale, &mut shared)
            }
            (None, Some(device)) => {
                let memory = !request.skip_memory_check;
                run_watched(&case, &kernels, device, request.gate_delay_scale, all_devices, memory)
            }
            (None, None) if bare => {
                let start = Instant::now();
                let result = super::one_case::read(&case, exec::run_bare(&case, &kernels), || None, start);
                Reply { result, dirty: None, memory: Default::default() }
            }
            (None, None) => return Err("no device and no mock".into()),
        };
        let json = serde_json::to_string(&reply).map_err(|e| format!("cannot serialise the result: {e}"))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{RESULT_PREFIX}{json}").and_then(|()| out.flush()).map_err(|e| format!("cannot reply: {e}"))?;
        exec::phases::mark("reply");
        exec::phases::end(&case.id);
        // A row that shares its prelude leaves the sticky error the next row is about: the parent ends this child.
        if reply.dirty.is_some() && !request.shares_prelude {
            break;
        }
    }
    if let Some(kept) = shared.take() {
        release_shared(kept);
    }
    Ok(())
}

/// Runs the sweep row `case` on the objects of the previous row of the same prelude (`shared`), or from nothing
/// when there is none, keeping its objects for the next row (see [`exec::SharedRows`]). The child's context is not
/// checked against the state before the row: the kept objects are still live, and a row of a sweep that poisons
/// the context leaves it unusable by design. The parent runs such a group of rows in a process of its own and ends
/// it after the last row.
fn run_sharing(
    case: &Case,
    kernels: &KernelTable,
    device: &DeviceInfo,
    scale: f64,
    shared: &mut Option<exec::SharedRows>,
) -> Reply {
    let start = Instant::now();
    let opts = ExecOptions { gate_delay_scale: scale, ..ExecOptions::default() };
    if let Some(reason) = crate::device::requirements::unmet_requirement(case, device) {
        let result = CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
        return Reply { result, dirty: None, memory: Default::default() };
    }
    let observations = match shared.as_mut().filter(|kept| kept.fits(case)) {
        Some(kept) => kept.run_row(case, kernels, device, &opts),
        None => {
            if let Some(kept) = shared.take() {
                release_shared(kept);
            }
            let (observations, kept) = exec::SharedRows::first(case, kernels, device, &opts);
            *shared = kept;
            observations
        }
    };
    let result = super::one_case::read(case, observations, || None, start);
    let dirty = result
        .observations
        .as_ref()
        .and_then(|o| o.final_sync.clone())
        .filter(|code| code != "cudaSuccess")
        .map(|code| format!("a sticky error: the device synchronize after the script returned {code}"));
    Reply { result, dirty, memory: Default::default() }
}

/// Releases the objects of a group of rows. What failed has no result left to carry it, and after a sticky error
/// every release fails by design; the process ends after the group anyway, which frees whatever is left.
fn release_shared(kept: exec::SharedRows) {
    let _ = kept.release();
}

/// Makes the host threads block while they wait for device `home` (and with `every`, for every device this process
/// sees): `cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync)`, before a case runs (see [`HostWaits`]).
fn block_host_waits(home: i32, every: bool) -> Result<(), String> {
    let mut count = 0;
    // SAFETY: a valid out-pointer; then plain calls without pointers.
    unsafe {
        let code = sys::cudaGetDeviceCount(&mut count);
        if code != sys::cudaError::cudaSuccess {
            return Err(format!("cannot count the devices: {code}"));
        }
        let devices: Vec<i32> = if every { (0..count).collect() } else { vec![home] };
        for d in devices {
            let code = sys::cudaSetDevice(d);
            let flags = sys::cudaDeviceScheduleBlockingSync;
            let code = if code == sys::cudaError::cudaSuccess { sys::cudaSetDeviceFlags(flags) } else { code };
            if code != sys::cudaError::cudaSuccess {
                return Err(format!("cannot make device {d}'s waits block (cudaSetDeviceFlags): {code}"));
            }
        }
        match sys::cudaSetDevice(home) {
            sys::cudaError::cudaSuccess => Ok(()),
            code => Err(format!("cannot make device {home} current again: {code}")),
        }
    }
}

/// Creates the primary context of every device this process sees, and makes `home` current again.
fn create_every_context(home: i32) -> Result<(), String> {
    let mut count = 0;
    // SAFETY: a valid out-pointer; then plain calls (cudaSetDevice creates the primary context, cudaFree(NULL)
    // makes sure of it).
    unsafe {
        let code = sys::cudaGetDeviceCount(&mut count);
        if code != sys::cudaError::cudaSuccess {
            return Err(format!("cannot count the devices: {code}"));
        }
        for d in 0..count {
            let code = sys::cudaSetDevice(d);
            let code = if code == sys::cudaError::cudaSuccess { sys::cudaFree(std::ptr::null_mut()) } else { code };
            if code != sys::cudaError::cudaSuccess {
                return Err(format!("cannot create the context of device {d}: {code}"));
            }
        }
        match sys::cudaSetDevice(home) {
            sys::cudaError::cudaSuccess => Ok(()),
            code => Err(format!("cannot make device {home} current again: {code}")),
        }
    }
}

/// Runs `case` and checks that it left the context as it found it (the device memory only with `memory`).
fn run_watched(
    case: &Case,
    kernels: &KernelTable,
    device: &DeviceInfo,
    scale: f64,
    all_devices: bool,
    memory: bool,
) -> Reply {
    let before = ContextState::now(device.ordinal, all_devices, memory);
    exec::phases::mark("state-before");
    let opts = ExecOptions { gate_delay_scale: scale, ..ExecOptions::default() };
    let result = run_in_process_with(case, kernels, device, &opts);
    let sticky = result
        .observations
        .as_ref()
        .and_then(|o| o.final_sync.clone())
        .filter(|code| code != "cudaSuccess")
        .map(|code| format!("a sticky error: the device synchronize after the script returned {code}"));
    let after = ContextState::now(device.ordinal, all_devices, memory);
    let dirty = sticky.or_else(|| after.dirtier_than(&before));
    exec::phases::mark("state-after");
    Reply { result, dirty, memory: after.memory_loss(&before) }
}

/// Sets device limit `limit` back to `was` and reads it again: `None` when it reads `was` and no error is left
/// pending, else why the context keeps the change.
fn restore_limit(limit: sys::cudaLimit, was: usize) -> Option<String> {
    let mut value = 0usize;
    // SAFETY: plain calls; a valid out-pointer.
    let (set, get, last) = unsafe {
        let set = sys::cudaDeviceSetLimit(limit, was);
        let get = sys::cudaDeviceGetLimit(&mut value, limit);
        (set, get, sys::cudaGetLastError())
    };
    let ok = sys::cudaError::cudaSuccess;
    if set == ok && get == ok && last == ok && value == was {
        None
    } else {
        Some(format!("setting it back returned {set}, reading it {get} ({value} bytes), the last error {last}"))
    }
}

/// The device limits a case may change with `set-limit` (cudaDeviceSetLimit), which later cases would inherit.
const LIMITS: [(&str, sys::cudaLimit); 3] = [
    ("stack-size", sys::cudaLimit::cudaLimitStackSize),
    ("printf-fifo", sys::cudaLimit::cudaLimitPrintfFifoSize),
    ("malloc-heap", sys::cudaLimit::cudaLimitMallocHeapSize),
];

/// What a case must give back: device memory, CUDA objects, device limits, capture state, and a usable context.
struct ContextState {
    /// Free memory per device (the child's own first).
    free_memory: Vec<Option<u64>>,
    live_objects: usize,
    limits: Vec<usize>,
}

impl ContextState {
    /// The state of the home device (and of every device, with `all_devices`), leaving `home` current: a case
    /// that switched devices does not leave the next one on another. Without `memory`, no free memory is read.
    fn now(home: i32, all_devices: bool, memory: bool) -> ContextState {
        let mut count = 1;
        if all_devices {
            // SAFETY: a valid out-pointer. On failure only the home device is measured.
            if unsafe { sys::cudaGetDeviceCount(&mut count) } != sys::cudaError::cudaSuccess {
                count = 1;
            }
        }
        let devices = std::iter::once(home).chain((0..count).filter(|&d| all_devices && d != home));
        let free_memory = devices
            .filter(|_| memory)
            .map(|d| {
                let (mut free, mut total) = (0usize, 0usize);
                // SAFETY: plain calls with valid out-pointers.
                let code = unsafe {
                    match sys::cudaSetDevice(d) {
                        sys::cudaError::cudaSuccess => sys::cudaMemGetInfo(&mut free, &mut total),
                        code => code,
                    }
                };
                (code == sys::cudaError::cudaSuccess).then_some(free as u64)
            })
            .collect();
        // SAFETY: a plain call. Should it fail, the next case's own calls report the broken context.
        let _ = unsafe { sys::cudaSetDevice(home) };
        let limits = LIMITS
            .iter()
            .map(|(_, limit)| {
                let mut value = 0usize;
                // SAFETY: a valid out-pointer. A limit that cannot be read counts as 0 before and after.
                let code = unsafe { sys::cudaDeviceGetLimit(&mut value, *limit) };
                if code == sys::cudaError::cudaSuccess {
                    value
                } else {
                    0
                }
            })
            .collect();
        ContextState { free_memory, live_objects: exec::live_objects(), limits }
    }

    /// Why the context is no longer fit for the next case, if it is not (device memory aside: see
    /// [`ContextState::memory_loss`]).
    fn dirtier_than(&self, before: &ContextState) -> Option<String> {
        // SAFETY: no arguments.
        let sync = unsafe { sys::cudaDeviceSynchronize() };
        // SAFETY: no arguments.
        let last = unsafe { sys::cudaGetLastError() };
        if sync != sys::cudaError::cudaSuccess {
            return Some(format!("a sticky error: cudaDeviceSynchronize after the case returned {sync}"));
        }
        if last != sys::cudaError::cudaSuccess {
            return Some(format!("an error left pending: cudaGetLastError after the case returned {last}"));
        }
        for (name, stream) in [("legacy", sys::cudaStreamLegacy), ("per-thread", sys::cudaStreamPerThread)] {
            let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
            // SAFETY: a built-in stream handle and a valid out-pointer.
            let code = unsafe { sys::cudaStreamIsCapturing(stream, &mut status) };
            if code != sys::cudaError::cudaSuccess
                || status != sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone
            {
                return Some(format!("a capture left open on the {name} stream ({code}, status {})", status.0));
            }
        }
        if self.live_objects != before.live_objects {
            return Some(format!(
                "CUDA objects not released: {} live after the case, {} before",
                self.live_objects, before.live_objects
            ));
        }
        for (((name, limit), now), was) in LIMITS.iter().zip(&self.limits).zip(&before.limits) {
            if now != was {
                // Set back, the context is as the case found it, as far as its limits go, and the worker goes on:
                // ending it cost the next case a process start (three a run: results/2026-11-28_node-time-2).
                // What the change cost in device memory the memory check still sees.
                if let Some(why) = restore_limit(*limit, *was) {
                    return Some(format!("a device limit changed: {name} is {now} bytes, was {was}; {why}"));
                }
            }
        }
        None
    }

    /// How much less memory was free than `before`, on the home device and the most on any other.
    fn memory_loss(&self, before: &ContextState) -> MemoryLoss {
        let loss: Vec<u64> = self
            .free_memory
            .iter()
            .zip(&before.free_memory)
            .map(|(now, was)| match (now, was) {
                (Some(now), Some(was)) => was.saturating_sub(*now) >> 20,
                _ => 0,
            })
            .collect();
        MemoryLoss {
            own_device_mib: loss.first().copied().unwrap_or(0),
            other_devices_mib: loss.iter().skip(1).copied().max().unwrap_or(0),
        }
    }
}

/// Whether a case's `env:` sets CUDA_VISIBLE_DEVICES: then it wins over the runner's, and the case's device is the
/// first one it leaves visible (ordinal 0, the list renumbers from there), for a worker and a reproducer alike.
pub(super) fn sets_visible_devices(env: &[(String, String)]) -> bool {
    env.iter().any(|(k, _)| k == "CUDA_VISIBLE_DEVICES")
}

/// A case's `env:` value with `{uuid}` as the device's UUID and `{uuid-prefix}` as its first 12 characters
/// (`GPU-` and 8 hex digits: the abbreviated form CUDA_VISIBLE_DEVICES accepts).
pub(super) fn with_uuid(value: &str, uuid: &str) -> String {
    let prefix: String = uuid.chars().take(12).collect();
    value.replace("{uuid-prefix}", &prefix).replace("{uuid}", uuid)
}

/// How the parent starts a child: the executable, and the environment that picks its device.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub exe: PathBuf,
    /// The ordinal the child uses.
    pub ordinal: i32,
    /// `CUDA_VISIBLE_DEVICES` for the child (the GPU's UUID with `--devices`), or none to leave it as it is.
    pub visible: Option<String>,
    /// `CUDA_CONFORMANCE_MOCK` for the child.
    pub mock: Option<String>,
    /// The child runs cases that need several devices: it sees them all and creates every context at start.
    pub all_devices: bool,
    /// Run the child under compute-sanitizer (`run --sanitizer`).
    pub sanitizer: Option<SanitizerSpec>,
    /// How the child's host threads wait for the device.
    pub host_waits: HostWaits,
    /// The device's UUID (`GPU-…`; empty when unknown): what `{uuid}` in a case's `env:` value becomes.
    pub uuid: String,
}

/// The parent's handle on a worker: started on the first case, replaced after one that killed or dirtied it.
pub struct Worker {
    spec: ChildSpec,
    running: Option<Process>,
    /// Processes ending in the background (after a dirty case): joined by [`Worker::retire`].
    exiting: Vec<JoinHandle<()>>,
    /// Processes started so far.
    pub started: u64,
    /// What each warm process said when it was ready.
    pub ready: Vec<Ready>,
    /// Each warm process's start, from its spawn to the arrival of its ready line ([`super::stats::starting_time`]).
    pub starts: Vec<(Instant, Instant)>,
    /// The memory the last case's process had less free after it than before (see the protocol).
    pub last_memory_loss: MemoryLoss,
    /// Under `--sanitizer`: the running process's log file, and how much of it earlier cases accounted for.
    log: Option<(PathBuf, u64)>,
    /// When the running process was started warm and has not said it is ready yet.
    starting_since: Option<Instant>,
}

impl Worker {
    pub fn new(spec: ChildSpec) -> Worker {
        Worker {
            spec,
            running: None,
            exiting: Vec::new(),
            started: 0,
            ready: Vec::new(),
            starts: Vec::new(),
            last_memory_loss: MemoryLoss::default(),
            log: None,
            starting_since: None,
        }
    }

    /// Runs `case` in this worker (starting one if needed) with the case's `env:` applied to a fresh process; the
    /// worker is kept for the next case only if the case left it clean.
    pub fn run(&mut self, case: &Case, scale: f64, deadline: Duration) -> CaseResult {
        self.run_request(case, Request::new(case, scale), deadline)
    }

    /// [`Worker::run`] for a case whose device memory the parent will not judge (see
    /// [`Request::skip_memory_check`]): the child does not read it.
    pub fn run_without_memory_check(&mut self, case: &Case, scale: f64, deadline: Duration) -> CaseResult {
        self.run_request(case, Request { skip_memory_check: true, ..Request::new(case, scale) }, deadline)
    }

    /// Runs `rows` (each with its gate delay scale), cases of one unit that share a process (`suite::units_of`),
    /// one after another in this worker's process (started with their `env:`), each answered as [`Worker::run`]
    /// answers a case. With `share_prelude` (rows of one sweep that poison the context) the rows after the first
    /// run on the first's objects, in the same process, though each leaves a sticky error
    /// ([`crate::exec::SharedRows`]); without, a row that leaves its process dirty ends it and the next row gets a
    /// fresh one, as any case would. A row that crashes its process or outlives its deadline costs that row alone:
    /// the next one starts a fresh process, from the prelude. The caller ends the process after the last row.
    pub fn run_group(&mut self, rows: &[(&Case, f64)], deadline: Duration, share_prelude: bool) -> Vec<CaseResult> {
        rows.iter()
            .map(|&(row, scale)| {
                let request = Request { shares_prelude: share_prelude, ..Request::new(row, scale) };
                self.run_request(row, request, deadline)
            })
            .collect()
    }

    /// Sends `request`, which carries `case`, and reads the answer (with the sanitizer's report, under one).
    fn run_request(&mut self, case: &Case, request: Request, deadline: Duration) -> CaseResult {
        let mut result = self.run_unsanitized(case, request, deadline);
        if let Some(spec) = self.spec.sanitizer.clone() {
            let errors = sanitizer::judge(case, &spec.tool, sanitizer::parse(&self.new_log_text()));
            sanitizer::apply(&mut result, &spec.tool, errors);
        }
        result
    }

    /// What the tool wrote to the running (or just ended) process's log since the last case: this case's reports.
    /// The front end may print a report a moment after the call that caused it returned, so the log is read again
    /// after a short grace (the worker is idle then: nothing else can be written meanwhile).
    fn new_log_text(&mut self) -> String {
        let Some((path, offset)) = self.log.as_mut() else { return String::new() };
        let mut text = String::new();
        for grace in [Duration::ZERO, Duration::from_millis(20)] {
            std::thread::sleep(grace);
            if let Ok(bytes) = std::fs::read(&*path) {
                let start = (*offset as usize).min(bytes.len());
                text.push_str(&String::from_utf8_lossy(&bytes[start..]));
                *offset = bytes.len() as u64;
            }
        }
        text
    }

    fn run_unsanitized(&mut self, case: &Case, request: Request, deadline: Duration) -> CaseResult {
        let started = Instant::now();
        self.last_memory_loss = MemoryLoss::default();
        // A process that had not said it was ready is asked all the same: its answer comes after its context.
        self.starting_since = None;
        let running = match self.running.take().map_or_else(|| self.spawn(&case.env), Ok) {
            Ok(running) => running,
            Err(why) => return failed(case, VerdictKind::Crash, why, started),
        };
        let share_prelude = request.shares_prelude;
        let request = serde_json::to_string(&request).unwrap_or_default();
        let (running, json) = match running.ask(&request, RESULT_PREFIX, started, deadline) {
            Ok(answer) => answer,
            Err((kind, why)) => return failed(case, kind, why, started),
        };
        match serde_json::from_str::<Reply>(&json) {
            Ok(Reply { mut result, dirty, memory }) => {
                result.wall_ms = started.elapsed().as_millis() as u64;
                self.last_memory_loss = memory;
                if let Some(why) = dirty {
                    if share_prelude {
                        // The child stays for the group's next row (the caller ends it after the last).
                        self.running = Some(running);
                    } else {
                        // The child exits on its own after a dirty case; the next case need not wait.
                        self.exiting.push(std::thread::spawn(move || running.finish()));
                    }
                    result.dirty = Some(why);
                } else {
                    self.running = Some(running);
                }
                result
            }
            Err(e) => {
                running.stop();
                failed(case, VerdictKind::Crash, format!("unreadable result from the worker: {e}"), started)
            }
        }
    }

    /// How this worker starts its processes.
    pub fn spec(&self) -> &ChildSpec {
        &self.spec
    }

    /// Starts a process for the next case now (with that case's `env:`), which creates its CUDA context at once
    /// instead of in the first case; [`Worker::await_ready`] waits for it. A process that cannot start is left
    /// for [`Worker::run`] to start (and report) again.
    pub fn start_warm(&mut self, env: &[(String, String)]) {
        if self.running.is_none() {
            self.running = self.spawn_with(env, true).ok();
            self.starting_since = self.running.is_some().then(Instant::now);
        }
    }

    /// Waits until a warm process has its context (true), or ends it if it dies or takes longer than `deadline`.
    pub fn await_ready(&mut self, deadline: Duration) -> bool {
        self.poll_ready(deadline, deadline) && self.running.is_some()
    }

    /// Waits up to `wait` for a process started warm to say it has its context: true when nothing is being
    /// started any more (it said so, it died, no process runs, or it was not started warm). A process still not
    /// ready `deadline` after its start is killed (the case that needed it starts a fresh one).
    pub fn poll_ready(&mut self, wait: Duration, deadline: Duration) -> bool {
        let (Some(since), Some(running)) = (self.starting_since, self.running.as_ref()) else {
            self.starting_since = None;
            return true;
        };
        match running.line_arriving_with(READY_PREFIX, Instant::now() + wait) {
            Ok((arrived, said)) => {
                self.ready.push(serde_json::from_str(said.trim()).unwrap_or_default());
                self.starts.push((since, arrived));
                self.starting_since = None;
                true
            }
            Err(RecvTimeoutError::Timeout) if since.elapsed() < deadline => false,
            Err(_) => {
                self.starting_since = None;
                if let Some(r) = self.running.take() {
                    r.stop();
                }
                true
            }
        }
    }

    /// True unless a process started warm has not said it is ready yet (as far as the last look saw).
    pub fn said_ready(&self) -> bool {
        self.starting_since.is_none() || self.running.is_none()
    }

    /// True while a process is up (started, and not ended by its last case).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Ends the current process (if any) so that the next case starts a fresh one, and waits for every process
    /// of this worker to have exited.
    pub fn retire(&mut self) {
        if let Some(running) = self.running.take() {
            running.finish();
        }
        for handle in self.exiting.drain(..) {
            let _ = handle.join();
        }
    }

    /// [`Worker::retire`] off the caller's path: a process that ends takes its CUDA context down, which can take
    /// tens of milliseconds the next case need not wait for (the memory it frees cannot make a case look dirty).
    /// The handles end when the processes have exited.
    pub fn retire_in_background(&mut self) -> Vec<JoinHandle<()>> {
        if let Some(running) = self.running.take() {
            self.exiting.push(std::thread::spawn(move || running.finish()));
        }
        std::mem::take(&mut self.exiting)
    }

    /// Kills the current process (if any) at once, in the background: for a warm process no case will use, which
    /// may still be creating its context and must not go on allocating device memory while cases run.
    pub fn kill_in_background(&mut self) -> Vec<JoinHandle<()>> {
        if let Some(running) = self.running.take() {
            self.exiting.push(std::thread::spawn(move || {
                running.stop();
            }));
        }
        std::mem::take(&mut self.exiting)
    }

    fn spawn(&mut self, env: &[(String, String)]) -> Result<Process, String> {
        self.spawn_with(env, false)
    }

    fn spawn_with(&mut self, env: &[(String, String)], warm: bool) -> Result<Process, String> {
        let spec = &self.spec;
        if let Some((old, _)) = self.log.take() {
            let _ = std::fs::remove_file(old);
        }
        let mut command = match &spec.sanitizer {
            Some(sanitizer) => {
                let log = sanitizer::log_path();
                let command = sanitizer.command(&spec.exe, &log);
                self.log = Some((log, 0));
                command
            }
            None => Command::new(&spec.exe),
        };
        if let Some(visible) = &spec.visible {
            command.env("CUDA_VISIBLE_DEVICES", visible);
        }
        // The case's own CUDA_VISIBLE_DEVICES wins over the runner's, `{uuid}` names the case's
        // device, and the child then uses the first device it sees (the list renumbers from 0).
        let ordinal = if sets_visible_devices(env) { 0 } else { spec.ordinal };
        command
            .envs(env.iter().map(|(k, v)| (k.clone(), with_uuid(v, &spec.uuid))))
            .env(CHILD_DEVICE, ordinal.to_string());
        if warm {
            command.env(CHILD_WARM, "1");
        } else {
            command.env_remove(CHILD_WARM);
        }
        match spec.host_waits {
            HostWaits::Block => command.env(CHILD_BLOCKING_WAITS, "1"),
            HostWaits::Auto => command.env_remove(CHILD_BLOCKING_WAITS),
        };
        if spec.all_devices {
            command.env(CHILD_ALL_DEVICES, "1");
        } else {
            command.env_remove(CHILD_ALL_DEVICES);
        }
        match &spec.mock {
            Some(m) => command.env(mock::MOCK_ENV, m),
            None => command.env_remove(mock::MOCK_ENV),
        };
        let running =
            if spec.sanitizer.is_some() { Process::start_group(&mut command)? } else { Process::start(&mut command)? };
        // With the child's `process ready` line of the same pid, the stretch during which it made its context.
        let (pid, ordinal) = (running.id(), spec.ordinal);
        exec::phases::event(&format!("process start pid {pid} on device {ordinal} (warm: {warm}, env: {env:?})"));
        self.started += 1;
        Ok(running)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.retire();
        if let Some((log, _)) = self.log.take() {
            let _ = std::fs::remove_file(log);
        }
    }
}

fn failed(case: &Case, kind: VerdictKind, message: String, started: Instant) -> CaseResult {
    CaseResult::new(case, verdict_of(kind, message), None, started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_name_the_device_by_uuid() {
        let uuid = "GPU-8f14ee7b-516e-1faf-3a23-bd46288033b5";
        assert_eq!(with_uuid("{uuid},-1,0", uuid), format!("{uuid},-1,0"));
        assert_eq!(with_uuid("{uuid-prefix}", uuid), "GPU-8f14ee7b");
        assert_eq!(with_uuid("0,1", uuid), "0,1");
    }

    #[test]
    fn a_worker_that_cannot_start_is_a_crash() {
        let text = "case area/one\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  \
                    expect k returned cudaSuccess\nend\n";
        let file = crate::case::parse_file("area.case", text).unwrap_or_else(|d| panic!("{d:?}"));
        let exe = PathBuf::from("/nonexistent/cuda-conformance-worker");
        let mut worker = Worker::new(ChildSpec {
            exe,
            ordinal: 0,
            visible: None,
            mock: None,
            all_devices: false,
            sanitizer: None,
            host_waits: HostWaits::default(),
            uuid: String::new(),
        });
        let result = worker.run(&file.cases[0], 1.0, Duration::from_secs(1));
        assert_eq!(result.verdict.kind, VerdictKind::Crash);
        assert!(result.verdict.messages[0].contains("cannot start the worker"), "{:?}", result.verdict);
        assert_eq!(worker.started, 0);
    }
}
