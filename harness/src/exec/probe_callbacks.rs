//! The probe callbacks a `callback` argument names (`case::words::CallbackWord`), as Rust `extern "C"` functions.
//! The reproducer's header has the same three in C (`cc::log_probe`, `cc::async_probe`, `cc::host_probe`): each adds 1
//! to the `uint32_t` its user-data pointer points to, when that is not NULL, and to a counter of its own. None makes
//! a CUDA call or blocks, so each is a valid destructor, host function and notification callback.

use crate::case::words::CallbackWord;
use cuda_sys as sys;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// How many times each probe ran in this process: log, async, host.
static RUNS: [AtomicU32; 3] = [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)];

/// Counts a run of probe `which` and, where `user` is not NULL, in the `uint32_t` it points to.
fn count(which: CallbackWord, user: *mut c_void) {
    RUNS[which as usize].fetch_add(1, Ordering::SeqCst);
    if !user.is_null() {
        // SAFETY: the case passed a host buffer of at least 4 bytes, 4-aligned, as the call's user data (an
        // `AtomicU32` has the layout of a `u32`).
        unsafe { &*user.cast::<AtomicU32>() }.fetch_add(1, Ordering::SeqCst);
    }
}

// The signatures are written with the C types' Rust equivalents, not the bindings' names for them: the log and
// async-notification types exist only in the headers of CUDA 12.4 and later (cudaLogsCallback_t:
// `void (*)(void *data, cudaLogLevel logLevel, char *message, size_t length)`, an enum passed as a C int;
// cudaAsyncCallback: `void (*)(cudaAsyncNotificationInfo_t *, void *, cudaAsyncCallbackHandle_t)`, two pointers and
// a handle that is a pointer), and the harness also builds against CUDA 12.0.
extern "C" fn log_probe(data: *mut c_void, _level: std::ffi::c_int, _message: *mut c_char, _length: usize) {
    count(CallbackWord::Log, data);
}

extern "C" fn async_probe(_info: *mut c_void, user_data: *mut c_void, _callback: *mut c_void) {
    count(CallbackWord::Async, user_data);
}

extern "C" fn host_probe(user_data: *mut c_void) {
    count(CallbackWord::Host, user_data);
}

/// The function of probe `c`, as the address a callback argument passes.
pub fn address(c: CallbackWord) -> *const c_void {
    match c {
        CallbackWord::Log => log_probe as *const c_void,
        CallbackWord::Async => async_probe as *const c_void,
        CallbackWord::Host => {
            let f: sys::cudaHostFn_t = Some(host_probe);
            f.map_or(std::ptr::null(), |f| f as *const c_void)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(c: CallbackWord) -> u32 {
        RUNS[c as usize].load(Ordering::SeqCst)
    }

    #[test]
    fn each_probe_counts_in_its_user_data_and_its_own_counter() {
        for c in [CallbackWord::Log, CallbackWord::Async, CallbackWord::Host] {
            let before = runs(c);
            let cell = AtomicU32::new(5);
            let user = (&cell as *const AtomicU32).cast_mut().cast::<c_void>();
            match c {
                CallbackWord::Log => log_probe(user, 0, std::ptr::null_mut(), 0),
                CallbackWord::Async => async_probe(std::ptr::null_mut(), user, std::ptr::null_mut()),
                CallbackWord::Host => host_probe(user),
            }
            host_probe(std::ptr::null_mut()); // NULL user data: only the counter
            assert_eq!(cell.load(Ordering::SeqCst), 6);
            assert!(runs(c) > before);
            assert!(!address(c).is_null());
        }
    }
}
