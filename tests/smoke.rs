//! Smoke trials of the probe kernels: each kernel does its documented job, stamps measure GPU time, and a gate
//! holds its stream until opened or until its own timeout. Everything the harness builds on, checked alone.
//!
//! GPU trials (kind `gpu`) run one at a time whatever `--test-threads` says. Without a usable device they are
//! ignored with the reason, e.g. `ignored (no CUDA device: cudaErrorInsufficientDriver)`; set
//! `CUDA_CONFORMANCE_REQUIRE_GPU=1` (as `bundle/run-tests.sh` does) to make a missing device a failure instead.

use cuda_conformance::{kernel_table, KERNEL_TARGETS};
use cuda_sys as sys;
use harness::device::gpu;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

type Outcome = Result<(), Failed>;
type Body = fn() -> Outcome;

/// Opens a trial's gates if the trial itself has not by then; a bug in a trial cannot hang the run.
const WATCHDOG: Duration = Duration::from_secs(5);
/// In-kernel timeout of gates the host means to open: longer than [`WATCHDOG`], the second line of defence.
const GATE_TIMEOUT_NS: u64 = 10_000_000_000;
const MS: u64 = 1_000_000;

/// `[(name, body)]`, each trial named after its function.
macro_rules! named {
    ($($f:ident),* $(,)?) => { [$((stringify!($f), $f as Body)),*] };
}

/// Fails the trial with a formatted message.
macro_rules! bail {
    ($($fmt:tt)*) => { return Err(format!($($fmt)*).into()) };
}

/// GPU trials share the device's context (the legacy stream is context-wide state): one at a time.
static GPU: Mutex<()> = Mutex::new(());

fn main() {
    let args = Arguments::from_args();
    let gpu = GpuState::probe();
    let mut trials = vec![Trial::test(
        "kernel_table_handles_are_non_null_and_distinct",
        kernel_table_handles_are_non_null_and_distinct,
    )];
    for (name, body) in named![
        data_kernels_compute_in_stream_order,
        spin_writes_ordered_stamps,
        spin_2ms_measures_2ms_on_device,
        gate_open_before_launch_passes_through,
        gate_timeout_fires_without_open,
    ] {
        trials.push(gpu.trial(name, body, None));
    }
    // With CUDA_LAUNCH_BLOCKING=1 the launch itself waits for the gate: nothing asynchronous can be observed.
    let blocking = gpu::launch_blocking().then(|| "CUDA_LAUNCH_BLOCKING=1 makes launches synchronous".to_owned());
    let [(name, body)] = named![gate_closed_holds_stream_until_opened];
    trials.push(gpu.trial(name, body, blocking));
    libtest_mimic::run(&args, trials).exit();
}

/// Whether GPU trials can run here, decided once.
enum GpuState {
    Ready,
    /// No usable device: GPU trials are ignored with this reason.
    Skip(String),
    /// No usable device, but `CUDA_CONFORMANCE_REQUIRE_GPU=1`: GPU trials fail with this reason.
    Missing(String),
}

impl GpuState {
    fn probe() -> Self {
        // cudaGetDeviceCount first: without a driver or a device that is the whole answer, and no context is made.
        let reason = match gpu::device_count().and_then(|_| gpu::probe(0)) {
            Ok(d) if !d.can_map_host_memory => {
                format!("{} cannot map host memory (gates need it)", d.name)
            }
            Ok(d) => {
                eprintln!(
                    "GPU trials on device 0: {} (sm_{}{}, driver {}, runtime {}); kernels built for {KERNEL_TARGETS}",
                    d.name,
                    d.compute_capability.0,
                    d.compute_capability.1,
                    gpu::version_string(d.driver_version),
                    gpu::version_string(d.runtime_version),
                );
                return GpuState::Ready;
            }
            Err(no_device) => no_device.to_string(),
        };
        if std::env::var("CUDA_CONFORMANCE_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            eprintln!("GPU trials fail (CUDA_CONFORMANCE_REQUIRE_GPU=1): {reason}");
            GpuState::Missing(reason)
        } else {
            eprintln!("GPU trials ignored: {reason}");
            GpuState::Skip(reason)
        }
    }

    /// A trial of kind `gpu`. `skip` ignores it even with a device (a requirement this environment lacks). Without
    /// a usable device it is ignored at list time too, so `--list --ignored` names it and cargo-nextest reports it
    /// skipped (a trial that ignores itself only when run counts there as passed).
    fn trial(&self, name: &str, body: Body, skip: Option<String>) -> Trial {
        let listed_ignored = matches!(self, GpuState::Skip(_)) || skip.is_some();
        let state = match self {
            GpuState::Ready => skip.map(Ok),
            GpuState::Skip(reason) => Some(Ok(reason.clone())),
            GpuState::Missing(reason) => Some(Err(reason.clone())),
        };
        Trial::ignorable_test(name, move || match state {
            Some(Ok(reason)) => Ok(Completion::ignored_with(reason)),
            Some(Err(reason)) => Err(format!("CUDA_CONFORMANCE_REQUIRE_GPU=1 but {reason}").into()),
            None => {
                let _one_at_a_time = GPU.lock().unwrap_or_else(PoisonError::into_inner);
                // Trials run on libtest-mimic's worker threads; each names the device it uses.
                check(unsafe { sys::cudaSetDevice(0) }, "cudaSetDevice(0)")?;
                body().map(|()| Completion::Completed)
            }
        })
        .with_kind("gpu")
        .with_ignored_flag(listed_ignored)
    }
}

// ---- trials ----

fn kernel_table_handles_are_non_null_and_distinct() -> Outcome {
    let k = kernel_table();
    let handles: Vec<_> = k.all().map(|(_, handle)| handle).collect();
    if handles.iter().any(|h| h.is_null()) {
        bail!("null kernel handle in {k:?}");
    }
    for (i, a) in handles.iter().enumerate() {
        if handles[i + 1..].contains(a) {
            bail!("duplicate kernel handles in {k:?}");
        }
    }
    Ok(())
}

/// fill, transform twice, compare: values prove each kernel's job and the stream's order (x*3+5 then x*2+1 is
/// not x*2+1 then x*3+5); stamps must follow the same order. N is not a multiple of the block: the tail counts.
fn data_kernels_compute_in_stream_order() -> Outcome {
    const N: u32 = 4099;
    const START: u32 = 0x8000_0003; // large, so that the transforms wrap
    let expected = START.wrapping_mul(3).wrapping_add(5).wrapping_mul(2).wrapping_add(1);
    let k = kernel_table();
    let s = Stream::new()?;
    let a = DeviceBuf::new(N)?;
    let b = DeviceBuf::new(N)?;
    let stamps = Mapped::<AtomicU64>::new(2 * 5)?;
    let counts = Mapped::<AtomicU32>::new(2)?;
    counts.set(0, u32::MAX); // the kernel must set, not add
    counts.set(1, u32::MAX);
    let st = |k: usize| stamps.stamps(k);
    unsafe {
        launched(k.launch_fill(a.ptr, N, START, st(0), s.0), "cc_fill")?;
        launched(k.launch_transform(a.ptr, N, 3, 5, st(1), s.0), "cc_transform")?;
        launched(k.launch_transform(a.ptr, N, 2, 1, st(2), s.0), "cc_transform")?;
        launched(k.launch_fill(b.ptr, N, expected, st(3), s.0), "cc_fill")?;
        // b[10..13] += 1, with no stamp: three mismatches, and the null-stamp path.
        launched(k.launch_transform(b.ptr.add(10), 3, 1, 1, ptr::null_mut(), s.0), "cc_transform")?;
        launched(k.launch_compare(a.ptr, b.ptr, N, counts.dev_at(0), st(4), s.0), "cc_compare")?;
        launched(k.launch_compare(a.ptr, a.ptr, N, counts.dev_at(1), ptr::null_mut(), s.0), "cc_compare")?;
    }
    s.sync()?;

    let (a, b) = (a.to_host()?, b.to_host()?);
    if let Some(i) = a.iter().position(|&x| x != expected) {
        bail!("a[{i}] = {:#x}, expected {expected:#x} (fill, *3+5, *2+1)", a[i]);
    }
    for (i, &x) in b.iter().enumerate() {
        let want = if (10..13).contains(&i) { expected.wrapping_add(1) } else { expected };
        if x != want {
            bail!("b[{i}] = {x:#x}, expected {want:#x}");
        }
    }
    let (m, same) = (counts.get(0), counts.get(1));
    if (m, same) != (3, 0) {
        bail!("cc_compare counted {m} and {same} mismatches, expected 3 and 0");
    }
    let spans: Vec<(u64, u64)> = (0..5).map(|k| stamps.span(k)).collect();
    check_spans(&spans)
}

/// Entry and exit stamps: entry > 0, exit >= entry, and each kernel starts after the previous one ended.
fn check_spans(spans: &[(u64, u64)]) -> Outcome {
    for (i, &(entry, exit)) in spans.iter().enumerate() {
        if entry == 0 || exit < entry {
            bail!("kernel {i}: stamps [{entry}, {exit}] (want 0 < entry <= exit); all: {spans:?}");
        }
        if i > 0 && entry < spans[i - 1].1 {
            bail!("kernel {i} started before kernel {} ended in one stream: {spans:?}", i - 1);
        }
    }
    Ok(())
}

fn spin_writes_ordered_stamps() -> Outcome {
    let k = kernel_table();
    let s = Stream::new()?;
    let stamps = Mapped::<AtomicU64>::new(4)?;
    unsafe {
        launched(k.launch_spin(0, stamps.stamps(0), s.0), "cc_spin")?;
        launched(k.launch_spin(100_000, ptr::null_mut(), s.0), "cc_spin")?;
        launched(k.launch_spin(100_000, stamps.stamps(1), s.0), "cc_spin")?;
    }
    s.sync()?;
    let spans = [stamps.span(0), stamps.span(1)];
    check_spans(&spans)?;
    let d = spans[1].1 - spans[1].0;
    if d < 100_000 {
        bail!("a 100 us spin lasted {d} ns between its stamps");
    }
    Ok(())
}

/// The stamps read %globaltimer: a 2 ms spin must measure 2 ms (± 0.5 ms) on the device, however the host ran.
fn spin_2ms_measures_2ms_on_device() -> Outcome {
    let k = kernel_table();
    let s = Stream::new()?;
    let stamps = Mapped::<AtomicU64>::new(2)?;
    unsafe {
        // Warm-up: the first launch may load the module (lazy loading); not part of what is measured anyway.
        launched(k.launch_spin(0, ptr::null_mut(), s.0), "cc_spin")?;
        launched(k.launch_spin(2 * MS, stamps.stamps(0), s.0), "cc_spin")?;
    }
    s.sync()?;
    let (entry, exit) = stamps.span(0);
    let d = exit.saturating_sub(entry);
    if !(3 * MS / 2..=5 * MS / 2).contains(&d) {
        bail!("a 2 ms spin measured {:.3} ms on the device", d as f64 / MS as f64);
    }
    eprintln!("a 2 ms spin measured {:.4} ms on the device (%globaltimer stamps)", d as f64 / MS as f64);
    Ok(())
}

fn gate_open_before_launch_passes_through() -> Outcome {
    let k = kernel_table();
    let s = Stream::new()?;
    let stamps = Mapped::<AtomicU64>::new(2)?;
    let mut gate = Gate::new()?;
    gate.open();
    unsafe {
        launched(k.launch_gate(gate.flag(), GATE_TIMEOUT_NS, gate.timed_out_ptr(), stamps.stamps(0), s.0), "cc_gate")?;
    }
    s.sync()?;
    gate.disarm();
    if gate.timed_out() != 0 {
        bail!("an open gate reported a timeout");
    }
    check_spans(&[stamps.span(0)])
}

/// The gate is seen running (its entry stamp reaches the host), its stream stays cudaErrorNotReady across host
/// sleeps, and it completes once the host opens it, without a timeout.
fn gate_closed_holds_stream_until_opened() -> Outcome {
    let k = kernel_table();
    let s = Stream::new()?;
    let stamps = Mapped::<AtomicU64>::new(2)?;
    let mut gate = Gate::new()?;
    unsafe {
        launched(k.launch_gate(gate.flag(), GATE_TIMEOUT_NS, gate.timed_out_ptr(), stamps.stamps(0), s.0), "cc_gate")?;
    }
    let started = Instant::now();
    while stamps.span(0).0 == 0 {
        if started.elapsed() > WATCHDOG / 2 {
            bail!("the gate's entry stamp did not reach the host within {:?}", WATCHDOG / 2);
        }
        thread::sleep(Duration::from_millis(1));
    }
    for i in 0..3 {
        thread::sleep(Duration::from_millis(50));
        let q = s.query();
        if q != sys::cudaError::cudaErrorNotReady {
            bail!("query {i} of a stream behind a closed gate returned {}", q);
        }
    }
    gate.open();
    s.sync()?;
    if gate.disarm() {
        bail!("the stream completed only after the watchdog fired ({WATCHDOG:?})");
    }
    if gate.timed_out() != 0 {
        bail!("the gate timed out although the host opened it");
    }
    check_spans(&[stamps.span(0)])
}

/// A gate nobody opens ends by its in-kernel timeout (not the watchdog), reports it, and held for that long.
fn gate_timeout_fires_without_open() -> Outcome {
    const TIMEOUT: u64 = 50 * MS;
    let k = kernel_table();
    let s = Stream::new()?;
    let stamps = Mapped::<AtomicU64>::new(2)?;
    let mut gate = Gate::new()?;
    unsafe {
        launched(k.launch_gate(gate.flag(), TIMEOUT, gate.timed_out_ptr(), stamps.stamps(0), s.0), "cc_gate")?;
    }
    s.sync()?;
    if gate.disarm() {
        bail!("a 50 ms gate timeout did not fire within {WATCHDOG:?}; the watchdog opened it");
    }
    if gate.timed_out() != 1 {
        bail!("timed_out = {} after the timeout, expected 1", gate.timed_out());
    }
    let (entry, exit) = stamps.span(0);
    check_spans(&[(entry, exit)])?;
    if exit - entry < TIMEOUT {
        bail!("the gate held {} ns, less than its {TIMEOUT} ns timeout", exit - entry);
    }
    Ok(())
}

// ---- CUDA helpers: every resource is an RAII guard, so that failure paths free it too ----

fn check(code: sys::cudaError_t, what: &str) -> Outcome {
    if code == sys::cudaError::cudaSuccess {
        Ok(())
    } else {
        Err(format!("{what} returned {}", code).into())
    }
}

fn launched(code: sys::cudaError_t, kernel: &str) -> Outcome {
    check(code, &format!("cudaLaunchKernel({kernel}) [kernels built for {KERNEL_TARGETS}]"))
}

/// Drop paths cannot fail a trial; they say what went wrong instead.
fn warn(code: sys::cudaError_t, what: &str) {
    if code != sys::cudaError::cudaSuccess {
        eprintln!("warning: {what} returned {}", code);
    }
}

/// A non-blocking stream: independent of the legacy stream, so nothing else in the process serialises with it.
struct Stream(sys::cudaStream_t);

impl Stream {
    fn new() -> Result<Self, Failed> {
        let mut s = ptr::null_mut();
        check(
            unsafe { sys::cudaStreamCreateWithFlags(&mut s, sys::cudaStreamNonBlocking) },
            "cudaStreamCreateWithFlags",
        )?;
        Ok(Stream(s))
    }

    fn query(&self) -> sys::cudaError_t {
        unsafe { sys::cudaStreamQuery(self.0) }
    }

    fn sync(&self) -> Outcome {
        check(unsafe { sys::cudaStreamSynchronize(self.0) }, "cudaStreamSynchronize")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        warn(unsafe { sys::cudaStreamDestroy(self.0) }, "cudaStreamDestroy");
    }
}

/// `len` u32 of device memory.
struct DeviceBuf {
    ptr: *mut u32,
    len: u32,
}

impl DeviceBuf {
    fn new(len: u32) -> Result<Self, Failed> {
        let mut p: *mut c_void = ptr::null_mut();
        check(unsafe { sys::cudaMalloc(&mut p, len as usize * 4) }, "cudaMalloc")?;
        Ok(DeviceBuf { ptr: p.cast(), len })
    }

    /// Copies to the host. cudaMemcpy runs on the legacy stream, which does not wait for non-blocking streams:
    /// synchronise the stream that wrote the buffer first.
    fn to_host(&self) -> Result<Vec<u32>, Failed> {
        let mut v = vec![0u32; self.len as usize];
        let code = unsafe {
            sys::cudaMemcpy(
                v.as_mut_ptr().cast(),
                self.ptr.cast(),
                self.len as usize * 4,
                sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
            )
        };
        check(code, "cudaMemcpy(DeviceToHost)")?;
        Ok(v)
    }
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        warn(unsafe { sys::cudaFree(self.ptr.cast()) }, "cudaFree");
    }
}

/// `len` zeroed words of pinned host memory mapped into the device's address space, seen by the host as atomics
/// (`AtomicU32`/`AtomicU64`: the device and the gate watchdog change them behind the compiler's back).
struct Mapped<A> {
    host: *mut A,
    dev: *mut c_void,
    len: usize,
}

impl<A> Mapped<A> {
    fn new(len: usize) -> Result<Self, Failed> {
        let bytes = len * std::mem::size_of::<A>();
        let mut host: *mut c_void = ptr::null_mut();
        check(unsafe { sys::cudaHostAlloc(&mut host, bytes, sys::cudaHostAllocMapped) }, "cudaHostAlloc(Mapped)")?;
        // From here on, Drop frees the allocation. Zero bytes are a valid atomic integer.
        let mut mapped = Mapped { host: host.cast::<A>(), dev: ptr::null_mut(), len };
        unsafe { ptr::write_bytes(host.cast::<u8>(), 0, bytes) };
        check(unsafe { sys::cudaHostGetDevicePointer(&mut mapped.dev, host, 0) }, "cudaHostGetDevicePointer")?;
        Ok(mapped)
    }

    fn at(&self, i: usize) -> &A {
        assert!(i < self.len);
        // SAFETY: in bounds of a live, initialised allocation; atomics are shared through & by design.
        unsafe { &*self.host.add(i) }
    }

    /// Device address of word `i`, for kernel arguments.
    fn dev_at<T>(&self, i: usize) -> *mut T {
        assert!(i < self.len && std::mem::size_of::<T>() == std::mem::size_of::<A>());
        unsafe { self.dev.cast::<T>().add(i) }
    }
}

impl Mapped<AtomicU32> {
    fn get(&self, i: usize) -> u32 {
        self.at(i).load(Ordering::SeqCst)
    }

    fn set(&self, i: usize, v: u32) {
        self.at(i).store(v, Ordering::SeqCst)
    }
}

/// Stamp pairs: `[entry, exit]` of kernel `k` at words `2k`, `2k + 1`.
impl Mapped<AtomicU64> {
    fn stamps(&self, k: usize) -> *mut u64 {
        self.dev_at(2 * k)
    }

    fn span(&self, k: usize) -> (u64, u64) {
        (self.at(2 * k).load(Ordering::SeqCst), self.at(2 * k + 1).load(Ordering::SeqCst))
    }
}

impl<A> Drop for Mapped<A> {
    fn drop(&mut self) {
        // cudaFreeHost waits for the device to be idle, so gates must be open by now (Gate opens on drop, and
        // trials declare their gate last so that it drops first).
        warn(unsafe { sys::cudaFreeHost(self.host.cast()) }, "cudaFreeHost");
    }
}

/// A gate's flag and timed-out word, with a watchdog thread that opens the flag after [`WATCHDOG`] unless
/// disarmed. Opening never depends on GPU progress; dropping opens the gate first, so cleanup cannot block on it.
struct Gate {
    words: Mapped<AtomicU32>, // [flag, timed_out]
    stop: Option<mpsc::Sender<()>>,
    watchdog: Option<thread::JoinHandle<bool>>,
}

/// The flag's host address, moved to the watchdog thread; the Gate joins that thread before freeing the memory.
struct FlagPtr(*const AtomicU32);
unsafe impl Send for FlagPtr {}

impl Gate {
    fn new() -> Result<Self, Failed> {
        let words = Mapped::<AtomicU32>::new(2)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let flag = FlagPtr(words.at(0));
        let watchdog = thread::Builder::new()
            .name("gate-watchdog".into())
            .spawn(move || {
                let flag = flag; // the whole struct, not its raw-pointer field
                match stopped.recv_timeout(WATCHDOG) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        // SAFETY: the Gate joins this thread (disarm) before its memory is freed.
                        unsafe { &*flag.0 }.store(1, Ordering::SeqCst);
                        true
                    }
                    _ => false,
                }
            })
            .map_err(|e| format!("cannot start the gate watchdog: {e}"))?;
        Ok(Gate { words, stop: Some(stop), watchdog: Some(watchdog) })
    }

    fn flag(&self) -> *const u32 {
        self.words.dev_at(0)
    }

    fn timed_out_ptr(&self) -> *mut u32 {
        self.words.dev_at(1)
    }

    fn open(&self) {
        self.words.set(0, 1);
    }

    fn timed_out(&self) -> u32 {
        self.words.get(1)
    }

    /// Stops the watchdog; true if it had fired (opened the gate) first.
    fn disarm(&mut self) -> bool {
        drop(self.stop.take());
        self.watchdog.take().is_some_and(|h| h.join().unwrap_or(true))
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        self.disarm();
    }
}
