//! The second process of a case: `process NAME` declares it, `@NAME OP` runs OP there.
//!
//! The executor starts the process before the script: this binary again, with [`PEER_ENV`] set, so that `main` hands it
//! to [`serve_peer_request`] (through the worker's entry point) before anything else. Over its stdin and stdout (one
//! JSON line each way) the peer is sent the case's text, parses and validates it as a worker does, creates every
//! declared object of its own (streams, events, buffers, gates: the same names, its own CUDA objects) and says it is
//! ready. For each `@NAME` operation the executor sends the operation's index and every IPC handle its process holds
//! (memory and event handles, by the label of the operation that got them); the peer installs them, runs the operation
//! with the same interpreter, and answers its record and the handles it holds then, which the executor adds to its own.
//! So a handle crosses processes as its 64 bytes, the way CUDA intends (`cudaIpcGetMemHandle` in one,
//! `cudaIpcOpenMemHandle` in the other). After the script (every gate of the main process open), the executor tells the
//! peer to finish: it opens its gates, synchronizes its device, closes what it opened and releases its objects, and
//! its notes join the case's. A peer whose final synchronize succeeded then waits for another case, and the executor
//! keeps it for the next case with peers of its process ([`keep_spare`]), as a worker serves case after case: the
//! cases with peers share one process (`runner::suite::units_of`), and one peer serves them all instead of a process
//! each. A peer that failed, or whose context a case left unhealthy, is ended.
//!
//! Times: the peer is sent the case clock's start as a CLOCK_MONOTONIC value, which all processes of the machine
//! share ([`CaseClock::started_at`]), so its operation times are on the case's clock as they are taken and the
//! blocking oracle compares them with the main process's gates. (A ping-measured offset was tried first: with the
//! host's CPUs busy it was milliseconds off, and a peer's `sync` seemed to return before its gate opened.)
//! Host-function logs and stamps of the peer stay in the peer (its kernels' stamps are not read back).
//!
//! Started ahead: a worker started ahead for cases with peers ([`PEER_SPARES_ENV`]) starts them as *spares* while
//! it makes its own context, and says it is ready once they are ([`start_spares`], [`await_spares`]). A spare makes
//! its context and loads the probe kernels before it is sent its case ([`PEER_WARM_ENV`]), and the case takes it
//! instead of starting a peer on its path. A peer's start was most of an IPC case's time (the 7 peer cases' `peers`
//! stretch: 4.0 s of a one-H100 run; results/2026-11-28_node-time-2).

use super::clock::CaseClock;
use super::devices::CaseDevices;
use super::gates::{self, GateSet};
use super::handles::{bytes_of, Handles};
use super::host_calls::HostLog;
use super::interpret::{self, Ctx};
use super::objects;
use super::stamps::StampPool;
use super::threads::CaseThreads;
use super::{load_kernels, prepare_host_thread, teardown, timing, ExecOptions, Resources, StopKeeper};
use crate::case::ast::{Case, Decl};
use crate::device::gpu::{self, DeviceInfo};
use crate::device::kernels::KernelTable;
use crate::record::observations::{GateOpener, OpRecord};
use crate::record::VisibleDevice;
use cuda_sys as sys;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Set in a peer's environment: the binary serves cases' operations, one case after another, and exits.
pub const PEER_ENV: &str = "CUDA_CONFORMANCE_PEER";
/// Set in a worker's environment by the runner when it starts the worker ahead for a case with peers: how many
/// to start ahead as spares.
pub const PEER_SPARES_ENV: &str = "CUDA_CONFORMANCE_PEER_SPARES";
/// Set in a spare peer's environment: the device ordinal it makes its context on before it reads its case; it then
/// says [`Reply::Warm`].
pub const PEER_WARM_ENV: &str = "CUDA_CONFORMANCE_PEER_WARM";

/// The first line a peer is sent: the case as written, and how to run it.
#[derive(Debug, Serialize, Deserialize)]
struct Start {
    file: String,
    first_line: u32,
    text: String,
    ordinal: i32,
    gate_timeout_ns: u64,
    case_deadline_ms: u64,
    /// The case clock's start, CLOCK_MONOTONIC nanoseconds.
    clock_start_ns: u64,
}

#[derive(Debug, Serialize, Deserialize)]
enum Request {
    Op { index: usize, handles: Wire },
    Finish,
}

#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    /// A spare has its context and the probe kernels, and waits for its case.
    Warm,
    Ready,
    Op {
        record: Box<OpRecord>,
        handles: Wire,
    },
    Finished {
        notes: Vec<String>,
        /// Whether the peer may serve another case (its context is healthy and the case's objects released).
        reusable: bool,
    },
    Failed {
        why: String,
    },
}

/// IPC handles as they cross: their bytes, by the label of the operation that got them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Wire {
    mem: BTreeMap<String, Vec<u8>>,
    events: BTreeMap<String, Vec<u8>>,
}

impl Handles {
    /// The IPC handles this process holds, to send.
    pub fn to_wire(&self) -> Wire {
        Wire {
            mem: self.mem.iter().map(|(l, h)| (l.clone(), bytes_of(h).to_vec())).collect(),
            events: self.events.iter().map(|(l, h)| (l.clone(), bytes_of(h).to_vec())).collect(),
        }
    }

    /// Adds the handles another process holds (its own labels; a label names one operation of the case).
    pub fn merge_wire(&mut self, wire: Wire) {
        for (label, bytes) in wire.mem {
            let mut handle = sys::cudaIpcMemHandle_t::default();
            copy_into(&mut handle.reserved, &bytes);
            self.mem.entry(label).or_insert(handle);
        }
        for (label, bytes) in wire.events {
            let mut handle = sys::cudaIpcEventHandle_t::default();
            copy_into(&mut handle.reserved, &bytes);
            self.events.entry(label).or_insert(handle);
        }
    }
}

fn copy_into(reserved: &mut [std::ffi::c_char], bytes: &[u8]) {
    for (to, from) in reserved.iter_mut().zip(bytes) {
        *to = *from as std::ffi::c_char;
    }
}

/// If this process was started as a case's peer, serves it and exits; otherwise returns at once.
/// [`crate::runner::worker::serve_child_request`] calls it before the worker's own check (a peer inherits its
/// worker's environment), so that every binary that runs cases serves peers too.
pub fn serve_peer_request(kernels: impl FnOnce() -> KernelTable) {
    if std::env::var_os(PEER_ENV).is_none() {
        return;
    }
    let code = match serve(kernels) {
        Ok(()) => 0,
        Err(why) => {
            let _ = say(&mut std::io::stdout().lock(), &Reply::Failed { why: why.clone() });
            eprintln!("peer: {why}");
            3
        }
    };
    std::process::exit(code);
}

fn say(out: &mut impl Write, reply: &Reply) -> Result<(), String> {
    let json = serde_json::to_string(reply).map_err(|e| e.to_string())?;
    writeln!(out, "{json}").and_then(|()| out.flush()).map_err(|e| format!("cannot answer: {e}"))
}

fn serve(kernels: impl FnOnce() -> KernelTable) -> Result<(), String> {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    // The probe kernels' table: made before the first case by a spare, else once that case has come.
    let mut make_kernels = Some(kernels);
    let mut table = None;
    if let Some(ordinal) = std::env::var(PEER_WARM_ENV).ok().and_then(|o| o.parse::<i32>().ok()) {
        // A spare: its context and the probe kernels now, while its worker's lane runs other cases. The same calls
        // as below, which find them made.
        let _ = prepare_host_thread(ordinal);
        // SAFETY: cudaFree(NULL) creates the primary context and frees nothing.
        let _ = unsafe { sys::cudaFree(std::ptr::null_mut()) };
        let made = make_kernels.take().map(|k| k()).ok_or("no kernels")?;
        let _ = load_kernels(&made);
        table = Some(made);
        say(&mut std::io::stdout().lock(), &Reply::Warm)?;
    }
    // One case after another, until the executor closes stdin (a spare no case took, or one its worker kept after
    // a case: the worker ended) or a case leaves this process unfit for another.
    while let Some(first) = lines.next() {
        let first = first.map_err(|e| e.to_string())?;
        let kernels = match table.take() {
            Some(made) => made,
            None => make_kernels.take().map(|k| k()).ok_or("no kernels")?,
        };
        let reusable = serve_case(&first, &kernels, &mut lines)?;
        table = Some(kernels);
        if !reusable {
            break;
        }
    }
    Ok(())
}

/// Serves the case whose [`Start`] line is `first`, reading its requests from `lines` until [`Request::Finish`],
/// and answers [`Reply::Finished`]. Returns whether the process may serve another case: its final synchronize
/// succeeded, so its context is healthy, and every object of the case is released, as in a batch worker.
fn serve_case(
    first: &str,
    kernels: &KernelTable,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
) -> Result<bool, String> {
    let start: Start = serde_json::from_str(first).map_err(|e| format!("unreadable start {first:?}: {e}"))?;
    let case = crate::case::parse_one(&start.file, start.first_line, &start.text)
        .map_err(|d| d.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))?;
    let device = gpu::probe(start.ordinal).map_err(|e| e.to_string())?;
    let opts = ExecOptions {
        gate_timeout_ns: start.gate_timeout_ns,
        case_deadline: Duration::from_millis(start.case_deadline_ms),
        gate_delay_scale: 1.0,
    };
    let clock = CaseClock::started_at(start.clock_start_ns);
    let (devices, _) = CaseDevices::of(&case, &device);
    let _ = prepare_host_thread(device.ordinal);
    for &ordinal in devices.ordinals() {
        let _ = devices.on(ordinal, || load_kernels(kernels));
    }
    let (state, gate_set, _) = objects::create(&case, &device, &devices, clock);
    let (stamps, _) = StampPool::create(&case, !devices.is_single());
    let (timing, _) = timing::EventTiming::create(&case);
    let _ = devices.synchronize_all();
    let _ = prepare_host_thread(device.ordinal);
    let resources = Resources { state: Mutex::new(state), stamps, gates: gate_set };
    let log = HostLog::new(clock);
    let (keeper, keeper_thread) = gates::gate_keeper();
    let ctx = Ctx {
        case: &case,
        kernels,
        device: &device,
        devices: &devices,
        opts: &opts,
        clock,
        gates: &resources.gates,
        stamps: &resources.stamps,
        log: &log,
        state: &resources.state,
        keeper: &keeper,
        timing: &timing,
    };
    let deadline = clock.instant_after_start(opts.case_deadline);
    let mut out = std::io::stdout().lock();
    let mut notes = std::thread::scope(|scope| -> Result<Vec<String>, String> {
        let _stop_keeper = StopKeeper(&keeper);
        let gates: &GateSet = ctx.gates;
        let keeper_handle = scope.spawn(move || keeper_thread.run(gates, deadline));
        let threads = CaseThreads::start(scope, &[]);
        say(&mut out, &Reply::Ready)?;
        for line in lines.by_ref() {
            let line = line.map_err(|e| e.to_string())?;
            let request: Request = serde_json::from_str(&line).map_err(|e| format!("unreadable request: {e}"))?;
            match request {
                Request::Op { index, handles } => {
                    ctx.state.lock().unwrap_or_else(PoisonError::into_inner).handles.merge_wire(handles);
                    let record = interpret::run_op(&ctx, index);
                    let handles = ctx.state.lock().unwrap_or_else(PoisonError::into_inner).handles.to_wire();
                    say(&mut out, &Reply::Op { record: Box::new(record), handles })?;
                }
                Request::Finish => break,
            }
        }
        ctx.gates.open_all(GateOpener::Cleanup);
        keeper.finish();
        let _ = keeper_handle.join();
        let mut notes = teardown::end_open_captures(&ctx, &threads);
        notes.extend(threads.stop());
        Ok(notes)
    })?;
    let (sync, more) = devices.synchronize_all();
    notes.extend(more);
    if sync != sys::cudaError::cudaSuccess {
        notes.push(format!("the peer's final cudaDeviceSynchronize returned {sync}"));
    }
    let reusable = sync == sys::cudaError::cudaSuccess;
    let _ = timing.release();
    {
        let mut st = resources.state.lock().unwrap_or_else(PoisonError::into_inner);
        notes.append(&mut st.notes);
        notes.extend(st.release(sync != sys::cudaError::cudaSuccess));
    }
    let mut resources = resources;
    let _ = resources.stamps.release(reusable);
    let _ = resources.gates.release(reusable);
    // The next case must not see this one's last error, as in a batch worker.
    // SAFETY: no arguments.
    let _ = unsafe { sys::cudaGetLastError() };
    let notes = notes.into_iter().map(|n| format!("peer: {n}")).collect();
    say(&mut out, &Reply::Finished { notes, reusable })?;
    Ok(reusable)
}

/// What a case's peer process sees: `CUDA_VISIBLE_DEVICES` naming exactly the case's devices by UUID, in the case's
/// order (so the case's device index i is the peer's ordinal i, as [`CaseDevices::of`] counts them there from
/// ordinal 0), or, when a UUID is unknown or the case names a device twice, what its worker sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerSight {
    /// `CUDA_VISIBLE_DEVICES` for the peer (none: inherited from the worker).
    pub visible: Option<String>,
    /// The ordinal of the case's device in the peer.
    pub ordinal: i32,
}

impl PeerSight {
    /// The sight of a peer of a case on `devices` (ordinals in this process, index 0 the case's device `home`),
    /// from this process's visible devices.
    pub fn of(devices: &[i32], visible: &[VisibleDevice], home: i32) -> PeerSight {
        let inherited = PeerSight { visible: None, ordinal: home };
        let uuids: Option<Vec<&str>> = devices
            .iter()
            .map(|&o| visible.iter().find(|v| v.ordinal == o).map(|v| v.uuid.as_str()).filter(|u| !u.is_empty()))
            .collect();
        let Some(uuids) = uuids else { return inherited };
        let distinct: std::collections::BTreeSet<&str> = uuids.iter().copied().collect();
        if uuids.is_empty() || distinct.len() != uuids.len() {
            return inherited;
        }
        PeerSight { visible: Some(uuids.join(",")), ordinal: 0 }
    }
}

/// One running peer, as the executor sees it.
struct Peer {
    /// What it sees: a peer kept after its case serves only a later case with the same sight.
    sight: PeerSight,
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    /// Why the peer cannot be used any more.
    broken: Option<String>,
}

/// The case's peers, by process name.
#[derive(Default)]
pub struct Peers {
    peers: BTreeMap<String, Peer>,
    wait: Duration,
}

impl Peers {
    /// Starts one peer per `process` declaration and waits until each is ready (its objects exist). Failures are
    /// notes; the operations sent to a peer that did not start are then recorded as not run, with the reason.
    /// A peer sees only the case's devices (`devices`, ordinals of this process's `device.visible`): with every
    /// GPU of a host visible, each peer's driver initialisation took seven times longer (the `ipc/` cases 14.6 s on
    /// a 4 × H100 host against 2.1 s with one GPU visible).
    pub fn start(
        case: &Case,
        device: &DeviceInfo,
        devices: &[i32],
        opts: &ExecOptions,
        clock: CaseClock,
    ) -> (Peers, Vec<String>) {
        let mut peers = Peers { peers: BTreeMap::new(), wait: opts.case_deadline };
        let mut notes = Vec::new();
        let sight = PeerSight::of(devices, &device.visible, device.ordinal);
        for name in case.decls.iter().filter(|d| matches!(d, Decl::Process { .. })).map(Decl::name) {
            // A spare that fails its start is replaced by a peer started now, as the case had before spares.
            let started = match take_spare(&sight).map(|spare| spare.start(case, &sight, opts, clock, peers.wait)) {
                Some(Ok(peer)) => Ok(peer),
                _ => Peer::spawn(case, &sight, opts, clock, peers.wait),
            };
            match started {
                Ok(peer) => {
                    peers.peers.insert(name.to_owned(), peer);
                }
                Err(why) => notes.push(format!("process {name} did not start: {why}")),
            }
        }
        (peers, notes)
    }

    /// Whether `name` is a process of the case (else it is a thread, or the main one).
    pub fn is_process(case: &Case, name: &str) -> bool {
        case.decls.iter().any(|d| matches!(d, Decl::Process { .. }) && d.name() == name)
    }

    /// Runs operation `index` in process `name` with the handles `wire`; its record (times on the case's clock)
    /// and the handles the peer holds after it.
    pub fn run(&mut self, name: &str, index: usize, wire: Wire) -> Result<(OpRecord, Wire), String> {
        let wait = self.wait;
        let peer = self.peers.get_mut(name).ok_or_else(|| format!("process {name} is not running"))?;
        if let Some(why) = &peer.broken {
            return Err(why.clone());
        }
        match peer.ask(&Request::Op { index, handles: wire }, wait) {
            Ok(Reply::Op { record, handles }) => Ok((*record, handles)),
            Ok(other) => Err(peer.fail(format!("process {name} answered {other:?}"))),
            Err(why) => Err(peer.fail(why)),
        }
    }

    /// Tells every peer to finish (open its gates, synchronize, release its objects) and collects its notes.
    pub fn finish(&mut self) -> Vec<String> {
        let wait = self.wait;
        let mut notes = Vec::new();
        for (name, mut peer) in std::mem::take(&mut self.peers) {
            if peer.broken.is_none() {
                match peer.ask(&Request::Finish, wait) {
                    Ok(Reply::Finished { notes: more, reusable }) => {
                        notes.extend(more);
                        if reusable {
                            // Kept for this process's next case with peers, as a spare (`serve`).
                            keep_spare(peer);
                            continue;
                        }
                    }
                    Ok(other) => notes.push(format!("process {name} answered {other:?} to finish")),
                    Err(why) => notes.push(format!("process {name}: {why}")),
                }
            } else {
                let _ = peer.child.kill();
            }
            drop(peer.stdin);
            let _ = peer.child.wait();
        }
        notes
    }
}

impl Drop for Peers {
    fn drop(&mut self) {
        for peer in self.peers.values_mut() {
            let _ = peer.child.kill();
            let _ = peer.child.wait();
        }
    }
}

/// Peers started ahead by this process ([`start_spares`]), each with the sight it was started with.
static SPARES: Mutex<Vec<(PeerSight, Peer)>> = Mutex::new(Vec::new());

/// Starts `count` spare peers with the sight of a case on this process's device `device` alone (the IPC cases'
/// single device), which make their contexts now; [`await_spares`] waits for them.
pub fn start_spares(count: usize, device: &DeviceInfo) {
    let sight = PeerSight::of(&[device.ordinal], &device.visible, device.ordinal);
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    for _ in 0..count {
        match Peer::launch(&sight, true) {
            Ok(peer) => spares.push((sight.clone(), peer)),
            Err(why) => eprintln!("warning: a peer started ahead did not start: {why}"),
        }
    }
}

/// Waits up to `wait` for every spare to have its context; a spare that fails or takes longer is dropped (a case
/// then starts its peer itself).
pub fn await_spares(wait: Duration) {
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    let deadline = std::time::Instant::now() + wait;
    spares.retain_mut(|(_, peer)| {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match peer.receive(left) {
            Ok(Reply::Warm) => true,
            Ok(other) => {
                eprintln!("warning: a peer started ahead answered {other:?}");
                peer.end();
                false
            }
            Err(why) => {
                eprintln!("warning: a peer started ahead: {why}");
                peer.end();
                false
            }
        }
    });
}

/// Keeps `peer`, which finished its case healthy, for this process's next case with peers of its sight: one
/// process serves the cases one after another, as the worker does (a process start is what a node is short of:
/// results/2026-11-28_node-time-4). When this process ends, the peer reads the end of its input and exits.
fn keep_spare(peer: Peer) {
    SPARES.lock().unwrap_or_else(PoisonError::into_inner).push((peer.sight.clone(), peer));
}

/// A spare started with `sight` (or kept after a case), if this process holds one.
fn take_spare(sight: &PeerSight) -> Option<Peer> {
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    let at = spares.iter().position(|(s, _)| s == sight)?;
    Some(spares.remove(at).1)
}

impl Peer {
    fn spawn(
        case: &Case,
        sight: &PeerSight,
        opts: &ExecOptions,
        clock: CaseClock,
        wait: Duration,
    ) -> Result<Peer, String> {
        Peer::launch(sight, false)?.start(case, sight, opts, clock, wait)
    }

    /// Starts the process; `warm`: as a spare, which makes its context before it reads its case.
    fn launch(sight: &PeerSight, warm: bool) -> Result<Peer, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(exe);
        if let Some(visible) = &sight.visible {
            command.env("CUDA_VISIBLE_DEVICES", visible);
        }
        if warm {
            command.env(PEER_WARM_ENV, sight.ordinal.to_string());
        }
        // A peer's own peers are never started ahead.
        command.env(PEER_ENV, "1").env_remove(PEER_SPARES_ENV);
        Peer::run(sight, &mut command)
    }

    /// Starts `command` as a peer with `sight`, its stdin and stdout piped, its answers read on a thread.
    fn run(sight: &PeerSight, command: &mut Command) -> Result<Peer, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start: {e}"))?;
        super::phases::event(&format!("peer started by pid {}", std::process::id()));
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Peer { sight: sight.clone(), child, stdin, replies, broken: None })
    }

    /// Sends the started process its case and waits until it is ready.
    fn start(
        self,
        case: &Case,
        sight: &PeerSight,
        opts: &ExecOptions,
        clock: CaseClock,
        wait: Duration,
    ) -> Result<Peer, String> {
        let mut peer = self;
        let start = Start {
            file: case.positions.file.clone(),
            first_line: case.positions.case_line,
            text: case.positions.text.clone(),
            ordinal: sight.ordinal,
            gate_timeout_ns: opts.gate_timeout_ns,
            case_deadline_ms: u64::try_from(opts.case_deadline.as_millis()).unwrap_or(u64::MAX),
            clock_start_ns: clock.start_monotonic_ns(),
        };
        let line = serde_json::to_string(&start).map_err(|e| e.to_string())?;
        let ready = peer.send_line(&line).and_then(|()| peer.receive(wait));
        match ready {
            Ok(Reply::Ready) => Ok(peer),
            Ok(Reply::Failed { why }) => Err(peer.fail(why)),
            Ok(other) => Err(peer.fail(format!("answered {other:?}"))),
            Err(why) => Err(peer.fail(why)),
        }
    }

    fn send_line(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush()).map_err(|e| format!("cannot send: {e}"))
    }

    fn receive(&mut self, wait: Duration) -> Result<Reply, String> {
        let line = match self.replies.recv_timeout(wait) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => return Err(format!("no answer within {} ms", wait.as_millis())),
            Err(RecvTimeoutError::Disconnected) => return Err("the process ended".to_owned()),
        };
        serde_json::from_str(&line).map_err(|e| format!("unreadable answer {line:?}: {e}"))
    }

    fn ask(&mut self, request: &Request, wait: Duration) -> Result<Reply, String> {
        let line = serde_json::to_string(request).map_err(|e| e.to_string())?;
        self.send_line(&line)?;
        self.receive(wait)
    }

    /// Kills a spare no case will take, and reaps it.
    fn end(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Marks the peer unusable (and stops it): every later operation sent to it is not run, with this reason.
    fn fail(&mut self, why: String) -> String {
        let _ = self.child.kill();
        self.broken = Some(why.clone());
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(ordinal: i32, uuid: &str) -> VisibleDevice {
        VisibleDevice { ordinal, name: "NVIDIA H100 80GB HBM3".into(), uuid: uuid.into(), pci_bus_id: String::new() }
    }

    #[test]
    fn a_peer_sees_only_its_cases_devices_in_the_cases_order() {
        let host = [seen(0, "GPU-a"), seen(1, "GPU-b"), seen(2, "GPU-c"), seen(3, "GPU-d")];
        // A one-device case on device 2 of a worker that sees the whole host: the peer sees that GPU, as ordinal 0.
        assert_eq!(PeerSight::of(&[2], &host, 2), PeerSight { visible: Some("GPU-c".into()), ordinal: 0 });
        // A two-device case counted from device 3 (its second device wraps to 0): index i is the peer's ordinal i.
        assert_eq!(PeerSight::of(&[3, 0], &host, 3), PeerSight { visible: Some("GPU-d,GPU-a".into()), ordinal: 0 });
        // A worker restricted to one GPU: the same UUID again.
        assert_eq!(
            PeerSight::of(&[0], &[seen(0, "GPU-c")], 0),
            PeerSight { visible: Some("GPU-c".into()), ordinal: 0 }
        );
    }

    /// A stand-in for a peer process: a shell that answers every line it reads with `answer` (a [`Reply`] as JSON).
    fn fake_peer(sight: &PeerSight, answer: &str) -> Peer {
        let script = format!("while read -r line; do echo '{answer}'; done");
        Peer::run(sight, Command::new("sh").args(["-c", &script])).expect("sh starts")
    }

    /// The executor's side of one peer serving case after case: a peer that finished its case healthy is kept as a
    /// spare of this process, which the next case with peers of the same sight takes (and no case of another
    /// sight); one that finished unhealthy is ended. The peer's side (`serve`) needs a GPU.
    #[test]
    fn a_peer_that_finished_healthy_is_kept_for_the_next_case_of_its_sight() {
        // A sight no other test uses, since the spares are the process's.
        let sight = PeerSight { visible: Some("GPU-kept-test".into()), ordinal: 0 };
        let other = PeerSight { visible: Some("GPU-other-test".into()), ordinal: 0 };
        let healthy = fake_peer(&sight, r#"{"Finished":{"notes":["n"],"reusable":true}}"#);
        let pid = healthy.child.id();
        let mut peers = Peers { peers: BTreeMap::from([("p".to_owned(), healthy)]), wait: Duration::from_secs(10) };
        assert_eq!(peers.finish(), ["n"]);
        assert!(take_spare(&other).is_none(), "kept for its own sight only");
        let mut kept = take_spare(&sight).expect("kept as a spare");
        assert_eq!(kept.child.id(), pid, "the same process");
        assert!(take_spare(&sight).is_none(), "taken once");
        kept.end();
        let unhealthy = fake_peer(&sight, r#"{"Finished":{"notes":[],"reusable":false}}"#);
        let mut peers = Peers { peers: BTreeMap::from([("p".to_owned(), unhealthy)]), wait: Duration::from_secs(10) };
        assert!(peers.finish().is_empty());
        assert!(take_spare(&sight).is_none(), "an unhealthy peer is not kept");
    }

    #[test]
    fn a_peer_inherits_its_workers_sight_when_the_devices_cannot_be_named() {
        let host = [seen(0, "GPU-a"), seen(1, "")];
        let inherited = |home| PeerSight { visible: None, ordinal: home };
        assert_eq!(PeerSight::of(&[1], &host, 1), inherited(1), "a UUID unknown");
        assert_eq!(PeerSight::of(&[5], &host, 5), inherited(5), "an ordinal not probed");
        assert_eq!(PeerSight::of(&[0, 0], &host, 0), inherited(0), "a device named twice");
        assert_eq!(PeerSight::of(&[], &host, 0), inherited(0));
    }
}
