//! Host functions (cudaLaunchHostFunc) and stream callbacks (cudaStreamAddCallback): the `extern "C"` entry points
//! CUDA calls, the per-operation context they receive, and the log they append to. They run on a CUDA-owned
//! thread and must not call CUDA (it can deadlock), so they only read the clock, copy host memory and push to a
//! mutex-protected log that no CUDA-calling code ever holds.

use super::clock::CaseClock;
use crate::case::ast::Case;
use crate::record::observations::{Contents, HostCallKind, HostCallRecord};
use cuda_sys as sys;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

struct RawCall {
    op_index: usize,
    kind: HostCallKind,
    at_ns: u64,
    /// A callback's status, as the raw code (its name is looked up later: that is a CUDA call).
    status: Option<u32>,
    snapshot: Option<Vec<u32>>,
}

/// Every host call of a case, in the order they ran.
pub struct HostLog {
    clock: CaseClock,
    calls: Mutex<Vec<RawCall>>,
    /// Notified after every call is logged.
    logged: Condvar,
}

impl HostLog {
    pub fn new(clock: CaseClock) -> Arc<HostLog> {
        Arc::new(HostLog { clock, calls: Mutex::new(Vec::new()), logged: Condvar::new() })
    }

    /// Waits until the operations `owed` (script indices) have each been called, or until `deadline` (the case
    /// deadline); a note for those that were not. For callbacks CUDA still owes after a device error: the device
    /// synchronize that reports the error returns without waiting for them (it does wait for them when the work
    /// succeeded), and CUDA's thread calls them when the scheduler next runs it, which on a busy host may be after
    /// the log is read. (One rerun of `host-functions/callback-on-waiting-stream-gets-error` with four busy loops
    /// per core failed where every other run passed; its record was not kept, and this race is the one way we
    /// found for it.)
    pub fn wait_for(&self, owed: &[usize], deadline: Instant) -> Option<String> {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let missing: Vec<usize> =
                owed.iter().copied().filter(|i| !calls.iter().any(|c| c.op_index == *i)).collect();
            let now = Instant::now();
            if missing.is_empty() {
                return None;
            }
            if now >= deadline {
                let ops = missing.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ");
                return Some(format!(
                    "after the device error, the callbacks of operations {ops} had not run by the case deadline"
                ));
            }
            calls = self.logged.wait_timeout(calls, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// The calls so far, with labels from `case`.
    pub fn records(&self, case: &Case) -> Vec<HostCallRecord> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls
            .iter()
            .map(|c| HostCallRecord {
                op_index: c.op_index,
                label: case.script.get(c.op_index).and_then(|op| op.label.clone()),
                kind: c.kind,
                at_ns: c.at_ns,
                status: c.status.map(|s| sys::cudaError(s).to_string()),
                snapshot: c.snapshot.as_deref().map(|words| Contents::of(words, &[])),
            })
            .collect()
    }
}

/// What one `host-func`/`callback` operation hands CUDA as `userData`. Boxed and kept alive by the executor until
/// no call can come any more (after the final device synchronize, or forever if that failed).
pub struct HostCallContext {
    log: Arc<HostLog>,
    op_index: usize,
    kind: HostCallKind,
    /// Host-visible words to copy when the call runs (`snapshot BUF`).
    snapshot: Option<(*const u32, usize)>,
    /// A gate's host flag: the call returns only once it is non-zero (`hold GATE`). The gate memory outlives every
    /// call, and the watchdog opens every gate at the case deadline, so the wait is bounded.
    hold: Option<*const AtomicU32>,
}

// SAFETY: the snapshot pointer is host memory that outlives the context (see above); it is only read.
unsafe impl Send for HostCallContext {}
unsafe impl Sync for HostCallContext {}

impl HostCallContext {
    pub fn new(
        log: &Arc<HostLog>,
        op_index: usize,
        kind: HostCallKind,
        snapshot: Option<(*const u32, usize)>,
    ) -> Box<Self> {
        Box::new(HostCallContext { log: Arc::clone(log), op_index, kind, snapshot, hold: None })
    }

    /// Makes the call block until `flag` (a gate's host flag) is non-zero.
    pub fn holding(mut self: Box<Self>, flag: &AtomicU32) -> Box<Self> {
        self.hold = Some(flag);
        self
    }

    fn wait_for_hold(&self) {
        let Some(flag) = self.hold else { return };
        // SAFETY: the gate memory outlives every host call (see the field).
        let flag = unsafe { &*flag };
        while flag.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// The `userData` pointer for CUDA.
    pub fn user_data(&self) -> *mut c_void {
        (self as *const HostCallContext).cast_mut().cast()
    }

    fn record(&self, status: Option<sys::cudaError_t>) {
        let at_ns = self.log.clock.now_ns();
        let snapshot = self.snapshot.map(|(ptr, words)| {
            // Volatile: the GPU may still be writing this memory; the snapshot is what the host saw at this moment.
            // SAFETY: ptr holds `words` u32 of live host memory (see the struct's safety note).
            (0..words).map(|i| unsafe { ptr.add(i).read_volatile() }).collect()
        });
        let call = RawCall { op_index: self.op_index, kind: self.kind, at_ns, status: status.map(|s| s.0), snapshot };
        self.log.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        self.log.logged.notify_all();
    }
}

/// The `cudaHostFn_t` of every `host-func` operation.
pub unsafe extern "C" fn host_func_entry(user_data: *mut c_void) {
    // SAFETY: user_data is the HostCallContext registered with this call, alive until no call can come.
    let context = unsafe { &*user_data.cast::<HostCallContext>() };
    // A panic must not unwind into CUDA's thread; a lost record shows up as a host call that never ran.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        context.record(None);
        context.wait_for_hold();
    }));
}

/// The `cudaStreamCallback_t` of every `callback` operation.
pub unsafe extern "C" fn stream_callback_entry(
    _stream: sys::cudaStream_t,
    status: sys::cudaError_t,
    user_data: *mut c_void,
) {
    // SAFETY: as in host_func_entry.
    let context = unsafe { &*user_data.cast::<HostCallContext>() };
    let _ = catch_unwind(AssertUnwindSafe(|| context.record(Some(status))));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ast::{Op, OpKind, SourceMap, StreamRef};

    #[test]
    fn entries_log_label_order_status_and_snapshot() {
        let case = Case {
            id: "t/x".into(),
            rule: String::new(),
            source: String::new(),
            requires: vec![],
            env: vec![],
            own_process: None,
            poisons: vec![],
            timing: None,
            samples: 1,
            decls: vec![],
            script: vec![Op {
                label: Some("h".into()),
                thread: None,
                kind: OpKind::HostFunc { stream: StreamRef::Legacy, snapshot: None, hold: None },
                expect: vec![],
                repeat: 1,
            }],
            expects: vec![],
            positions: SourceMap::default(),
        };
        let log = HostLog::new(CaseClock::start());
        let words = [4u32; 8];
        let snap = HostCallContext::new(&log, 0, HostCallKind::HostFunc, Some((words.as_ptr(), words.len())));
        let callback = HostCallContext::new(&log, 1, HostCallKind::Callback, None);
        // SAFETY: the contexts are alive; this is what CUDA would do.
        unsafe {
            host_func_entry(snap.user_data());
            stream_callback_entry(std::ptr::null_mut(), sys::cudaError::cudaSuccess, callback.user_data());
        }
        // cudaGetErrorName needs no GPU.
        let records = log.records(&case);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].label.as_deref(), Some("h"));
        assert_eq!(records[0].snapshot.as_ref().and_then(|c| c.uniform), Some(4));
        assert_eq!((records[1].label.as_deref(), records[1].kind), (None, HostCallKind::Callback));
        assert_eq!(records[1].status.as_deref(), Some("cudaSuccess"));
        assert!(records[0].at_ns <= records[1].at_ns);
    }

    /// A callback that CUDA's thread calls late is waited for; one that never comes is noted at the deadline.
    #[test]
    fn waits_for_owed_callbacks_until_the_deadline() {
        let log = HostLog::new(CaseClock::start());
        let late = HostCallContext::new(&log, 3, HostCallKind::Callback, None);
        let address = late.user_data() as usize;
        let far = Instant::now() + Duration::from_secs(20);
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                let status = sys::cudaError::cudaErrorIllegalAddress;
                // SAFETY: the context outlives the scope; this is what CUDA's thread would do.
                unsafe { stream_callback_entry(std::ptr::null_mut(), status, address as *mut c_void) };
            });
            assert_eq!(log.wait_for(&[3], far), None, "woken by the call");
        });
        assert_eq!(log.wait_for(&[], far), None);
        let note = log.wait_for(&[3, 5], Instant::now()).expect("operation 5 never ran");
        assert!(note.contains("#5") && !note.contains("#3"), "{note}");
    }
}
