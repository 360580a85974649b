//! Gates: one flag word and one timed-out word per gate in mapped pinned host memory, opened by the host; and the
//! gate keeper, a timer thread that performs `open G after D` and, at the case deadline, opens every gate (the
//! watchdog). Nothing here calls CUDA after the allocation or waits for the GPU: opening a gate must never depend
//! on GPU progress.

use super::clock::CaseClock;
use super::harness_memory;
use super::resources::HostMemory;
use crate::record::observations::{GateOpener, GateRecord};
use cuda_sys as sys;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Instant;

/// Word 0: the flag the gate kernel polls (non-zero: open). Word 1: set to 1 by the kernel when its timeout fired.
const FLAG: usize = 0;
const TIMED_OUT: usize = 1;
const WORDS: usize = 2;

const NEVER: u64 = u64::MAX;

struct GateMemory {
    host: HostMemory,
    device: *mut u32,
}

pub struct Gate {
    name: String,
    /// `None` when the allocation failed (the declaration records the code; launches on it are not run).
    memory: Option<GateMemory>,
    opened_ns: AtomicU64,
    opened_by: AtomicU8,
}

impl Gate {
    fn word(&self, index: usize) -> Option<&AtomicU32> {
        let memory = self.memory.as_ref()?;
        // SAFETY: the allocation holds WORDS u32s, is page-aligned and lives as long as self. The host touches it
        // only through atomics (several host threads may open a gate); the GPU through volatile accesses.
        Some(unsafe { &*memory.host.raw().cast::<AtomicU32>().add(index) })
    }
}

/// The gates of one case, indexed in declaration order.
pub struct GateSet {
    gates: Vec<Gate>,
    clock: CaseClock,
}

// SAFETY: the only shared mutable state is atomics (`opened_*`, the mapped words); the raw device pointers are
// addresses handed to kernels, never dereferenced on the host.
unsafe impl Sync for GateSet {}
unsafe impl Send for GateSet {}

impl GateSet {
    /// Allocates each gate (closed, not timed out); returns the creation code of each, in order.
    pub fn create(names: &[&str], clock: CaseClock) -> (GateSet, Vec<sys::cudaError_t>) {
        let mut codes = Vec::new();
        let gates = names
            .iter()
            .map(|name| {
                let memory = match harness_memory::mapped(WORDS * 4) {
                    Ok((host, device)) => {
                        codes.push(sys::cudaError::cudaSuccess);
                        Some(GateMemory { host, device: device.cast() })
                    }
                    Err(code) => {
                        codes.push(code);
                        None
                    }
                };
                let gate = Gate {
                    name: name.to_string(),
                    memory,
                    opened_ns: AtomicU64::new(NEVER),
                    opened_by: AtomicU8::new(0),
                };
                for w in [FLAG, TIMED_OUT] {
                    if let Some(word) = gate.word(w) {
                        word.store(0, Ordering::SeqCst);
                    }
                }
                gate
            })
            .collect();
        (GateSet { gates, clock }, codes)
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.gates.iter().position(|g| g.name == name)
    }

    /// Device addresses of the flag and timed-out words, for the gate kernel; `None` if the gate has no memory.
    pub fn kernel_args(&self, index: usize) -> Option<(*const u32, *mut u32)> {
        let memory = self.gates.get(index)?.memory.as_ref()?;
        // SAFETY: both addresses lie inside the WORDS-word allocation (no dereference here).
        Some((memory.device.cast_const(), unsafe { memory.device.add(TIMED_OUT) }))
    }

    /// Opens gate `index`. Only the first open is recorded; its time is taken before the store, so an operation
    /// that returned after the recorded time may have waited for it, and one that returned before cannot have.
    pub fn open(&self, index: usize, by: GateOpener) {
        let Some(gate) = self.gates.get(index) else { return };
        let t = self.clock.now_ns();
        if gate.opened_ns.compare_exchange(NEVER, t, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            gate.opened_by.store(opener_code(by), Ordering::SeqCst);
        }
        // A sequentially consistent store is a full fence on the host: the flag reaches memory the GPU polls.
        if let Some(flag) = gate.word(FLAG) {
            flag.store(1, Ordering::SeqCst);
        }
    }

    /// The host side of gate `index`'s flag (non-zero: open), for a host function that holds its stream until the
    /// gate opens. `None` when the gate was not created.
    pub fn host_flag(&self, index: usize) -> Option<&AtomicU32> {
        self.gates.get(index)?.word(FLAG)
    }

    pub fn open_all(&self, by: GateOpener) {
        for index in 0..self.gates.len() {
            self.open(index, by);
        }
    }

    /// What happened to every gate. Read after the final device synchronize, when no kernel writes any more.
    pub fn records(&self) -> Vec<GateRecord> {
        self.gates
            .iter()
            .map(|g| {
                let opened = g.opened_ns.load(Ordering::SeqCst);
                GateRecord {
                    name: g.name.clone(),
                    opened_ns: (opened != NEVER).then_some(opened),
                    opened_by: (opened != NEVER).then(|| opener_of(g.opened_by.load(Ordering::SeqCst))),
                    timed_out: g.word(TIMED_OUT).is_some_and(|w| w.load(Ordering::SeqCst) != 0),
                }
            })
            .collect()
    }

    /// Frees every gate's memory, or with `keep` (after a healthy case: no kernel polls it any more) keeps it for a
    /// later case's gates ([`harness_memory`]); the gates whose release failed, with the code.
    pub fn release(&mut self, keep: bool) -> Vec<(String, sys::cudaError_t)> {
        let mut failed = Vec::new();
        for gate in &mut self.gates {
            if let Some(memory) = gate.memory.take() {
                let code = if keep {
                    harness_memory::keep_mapped(memory.host, memory.device.cast(), WORDS * 4)
                } else {
                    memory.host.release()
                };
                if code != sys::cudaError::cudaSuccess {
                    failed.push((gate.name.clone(), code));
                }
            }
        }
        failed
    }
}

fn opener_code(by: GateOpener) -> u8 {
    match by {
        GateOpener::Script => 0,
        GateOpener::Scheduled => 1,
        GateOpener::Watchdog => 2,
        GateOpener::Cleanup => 3,
    }
}

fn opener_of(code: u8) -> GateOpener {
    match code {
        0 => GateOpener::Script,
        1 => GateOpener::Scheduled,
        2 => GateOpener::Watchdog,
        _ => GateOpener::Cleanup,
    }
}

enum KeeperRequest {
    OpenAt(usize, Instant),
    Finish,
}

/// The script's handle on the gate keeper thread.
pub struct GateKeeper {
    requests: Sender<KeeperRequest>,
}

/// The keeper thread's end of the channel; run it with [`KeeperThread::run`].
pub struct KeeperThread {
    requests: Receiver<KeeperRequest>,
}

pub fn gate_keeper() -> (GateKeeper, KeeperThread) {
    let (tx, rx) = mpsc::channel();
    (GateKeeper { requests: tx }, KeeperThread { requests: rx })
}

impl GateKeeper {
    /// Opens gate `index` at `at` (the `open G after D` operation).
    pub fn open_at(&self, index: usize, at: Instant) {
        let _ = self.requests.send(KeeperRequest::OpenAt(index, at));
    }

    /// Stops the keeper: scheduled opens not yet due are dropped (the executor opens every gate itself).
    pub fn finish(&self) {
        let _ = self.requests.send(KeeperRequest::Finish);
    }
}

impl KeeperThread {
    /// Serves scheduled opens until [`GateKeeper::finish`]; at `deadline` opens every gate. Returns the case time
    /// at which the watchdog fired, if it did.
    pub fn run(self, gates: &GateSet, deadline: Instant) -> Option<u64> {
        let mut due: Vec<(Instant, usize)> = Vec::new();
        let mut fired = None;
        loop {
            let now = Instant::now();
            due.retain(|&(at, index)| {
                if at <= now {
                    gates.open(index, GateOpener::Scheduled);
                }
                at > now
            });
            if fired.is_none() && now >= deadline {
                fired = Some(gates.clock.now_ns());
                gates.open_all(GateOpener::Watchdog);
            }
            let next = due.iter().map(|&(at, _)| at).min();
            let wake = if fired.is_none() { Some(next.map_or(deadline, |n| n.min(deadline))) } else { next };
            let request = match wake {
                Some(at) => self.requests.recv_timeout(at.saturating_duration_since(now)),
                None => self.requests.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match request {
                Ok(KeeperRequest::OpenAt(index, at)) => due.push((at, index)),
                Err(RecvTimeoutError::Timeout) => {}
                Ok(KeeperRequest::Finish) | Err(RecvTimeoutError::Disconnected) => return fired,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Gates without memory: opening records the time and the opener, and nothing else needs a GPU.
    fn gates(names: &[&str], clock: CaseClock) -> GateSet {
        let gates = names
            .iter()
            .map(|n| Gate {
                name: n.to_string(),
                memory: None,
                opened_ns: AtomicU64::new(NEVER),
                opened_by: AtomicU8::new(0),
            })
            .collect();
        GateSet { gates, clock }
    }

    #[test]
    fn only_the_first_open_is_recorded() {
        let set = gates(&["a", "b"], CaseClock::start());
        set.open(0, GateOpener::Script);
        let first = set.records()[0].opened_ns;
        set.open(0, GateOpener::Cleanup);
        let r = set.records();
        assert_eq!((r[0].opened_ns, r[0].opened_by), (first, Some(GateOpener::Script)));
        assert_eq!((r[1].opened_ns, r[1].opened_by, r[1].timed_out), (None, None, false));
    }

    #[test]
    fn the_keeper_opens_on_schedule_and_the_watchdog_opens_the_rest() {
        let clock = CaseClock::start();
        let set = gates(&["soon", "never"], clock);
        let (keeper, thread) = gate_keeper();
        let deadline = Instant::now() + Duration::from_millis(300);
        let fired = std::thread::scope(|scope| {
            let handle = scope.spawn(|| thread.run(&set, deadline));
            keeper.open_at(0, Instant::now() + Duration::from_millis(20));
            std::thread::sleep(Duration::from_millis(400));
            keeper.finish();
            handle.join().unwrap()
        });
        let r = set.records();
        assert_eq!(r[0].opened_by, Some(GateOpener::Scheduled));
        assert!(r[0].opened_ns.unwrap() >= 20_000_000, "{r:?}");
        assert_eq!(r[1].opened_by, Some(GateOpener::Watchdog));
        assert!(fired.unwrap() >= 300_000_000, "{fired:?}");
    }

    #[test]
    fn finishing_drops_opens_not_yet_due() {
        let set = gates(&["late"], CaseClock::start());
        let (keeper, thread) = gate_keeper();
        let deadline = Instant::now() + Duration::from_secs(60);
        let fired = std::thread::scope(|scope| {
            let handle = scope.spawn(|| thread.run(&set, deadline));
            keeper.open_at(0, Instant::now() + Duration::from_secs(30));
            keeper.finish();
            handle.join().unwrap()
        });
        assert_eq!((fired, set.records()[0].opened_ns), (None, None));
    }
}
