//! What operations hand from one call to a later one: IPC handles and the pointers
//! they opened, user objects and their destructors' flags, and managed allocations made by the script. Named by
//! the label of the operation that made each, and released at cleanup.

use super::resources::DeviceMemory;
use cuda_sys as sys;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::os::unix::ffi::OsStringExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// A user object the case created: its handle (as an address: raw pointers are not `Send`), the references the
/// case still owns, and the flag its destructor sets.
#[derive(Debug)]
pub struct UserObject {
    pub raw: usize,
    pub owned: u32,
    pub destroyed: &'static AtomicBool,
}

/// The destructor of every user object: sets the flag it was given. CUDA calls it from an internal thread once
/// the last reference is gone ("There is not currently a mechanism to wait on user object destructors").
extern "C" fn set_destroyed(flag: *mut c_void) {
    // SAFETY: flag is the leaked `AtomicBool` `UserObject::create` passed, which lives for the whole process.
    unsafe { &*flag.cast::<AtomicBool>() }.store(true, Ordering::SeqCst);
}

impl UserObject {
    /// cudaUserObjectCreate(&obj, flag, destructor, 1, cudaUserObjectNoDestructorSync). The flag is leaked on
    /// purpose: the destructor may run after the case has ended (a graph the runtime still holds), and it must
    /// always find live memory (one byte per user object).
    pub fn create() -> Result<UserObject, sys::cudaError_t> {
        let destroyed: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let mut raw: sys::cudaUserObject_t = std::ptr::null_mut();
        let flag = (destroyed as *const AtomicBool).cast_mut().cast::<c_void>();
        let no_sync = sys::cudaUserObjectFlags::cudaUserObjectNoDestructorSync.0;
        // SAFETY: raw is a valid out-pointer; flag lives for the process; set_destroyed has the cudaHostFn_t ABI.
        let code = unsafe { sys::cudaUserObjectCreate(&mut raw, flag, Some(set_destroyed), 1, no_sync) };
        if code != sys::cudaError::cudaSuccess {
            return Err(code);
        }
        Ok(UserObject { raw: raw as usize, owned: 1, destroyed })
    }

    pub fn handle(&self) -> sys::cudaUserObject_t {
        self.raw as sys::cudaUserObject_t
    }
}

/// Everything issue 20's operations keep between calls.
#[derive(Debug, Default)]
pub struct Handles {
    /// `ipc-mem-handle` L: the handle.
    pub mem: BTreeMap<String, sys::cudaIpcMemHandle_t>,
    /// `ipc-event-handle` L: the handle.
    pub events: BTreeMap<String, sys::cudaIpcEventHandle_t>,
    /// `ipc-open-mem` L: the pointer, until `ipc-close-mem` or cleanup closes it (as an address).
    pub opened: BTreeMap<String, usize>,
    /// `user-object` L.
    pub user_objects: BTreeMap<String, UserObject>,
    /// `malloc-managed`: freed at cleanup.
    pub managed: Vec<DeviceMemory>,
    /// `L: call ...`: what the call wrote into each output parameter, by `L.param` (what later calls may pass).
    pub call_outputs: BTreeMap<String, Vec<u8>>,
    /// The directory `{tmp}` in a call's text argument names: made on first use, removed with its files at cleanup.
    pub private_dir: Option<PrivateDir>,
    /// The Vulkan instance and device of `vk-memory` and `vk-semaphore`, and their objects: made on the first
    /// such operation, released at cleanup (after the script's own `cudaDestroyExternal*` calls).
    pub vulkan: Option<crate::device::vulkan::Session>,
    /// `L: pool-export`: the descriptor, closed at cleanup (a later call may have imported it meanwhile).
    pub exported_fds: Vec<std::os::fd::OwnedFd>,
}

/// A directory of this case alone (`mkdtemp`, mode 0700, under `$TMPDIR` or `/tmp`): a path a case writes to (a DOT
/// file, a log dump) can collide neither with another run's nor with another user's files.
#[derive(Debug)]
pub struct PrivateDir(std::path::PathBuf);

impl PrivateDir {
    pub fn new() -> Result<Self, String> {
        let template = std::env::temp_dir().join("cuda-conformance-XXXXXX");
        let mut bytes = std::ffi::CString::new(template.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{}: holds a NUL byte", template.display()))?
            .into_bytes_with_nul();
        // SAFETY: a NUL-terminated template ending in XXXXXX, which mkdtemp overwrites in place.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(format!("mkdtemp {}: {}", template.display(), std::io::Error::last_os_error()));
        }
        bytes.pop();
        Ok(PrivateDir(std::path::PathBuf::from(std::ffi::OsString::from_vec(bytes))))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A 64-bit digest (FNV-1a) of a handle's bytes: what `same-address` and `other-address` compare for handles.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The bytes of a value of plain-data type `T` (an IPC handle).
pub fn bytes_of<T>(value: &T) -> &[u8] {
    // SAFETY: T is a plain C struct of bytes (cudaIpc*Handle_t: `char reserved[64]`); reading it as bytes is valid.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

impl Handles {
    /// Offers descriptor `fd` to later calls as `L.fd` (a C `int`, kept as a call's outputs are).
    pub fn offer_fd(&mut self, label: &str, fd: i32) {
        self.call_outputs.insert(format!("{label}.fd"), fd.to_le_bytes().to_vec());
    }

    /// Closes what the script opened and did not close, and gives back the case's references to its user
    /// objects; each failure is a note.
    pub fn release(&mut self, notes: &mut Vec<String>) {
        let mut check = |what: String, code: sys::cudaError_t| {
            if code != sys::cudaError::cudaSuccess {
                notes.push(format!("cleanup: releasing {what} returned {code}"));
            }
        };
        for (label, ptr) in std::mem::take(&mut self.opened) {
            // SAFETY: a pointer cudaIpcOpenMemHandle returned and nothing closed yet.
            check(format!("the IPC mapping {label} opened"), unsafe { sys::cudaIpcCloseMemHandle(ptr as *mut c_void) });
        }
        for (label, object) in std::mem::take(&mut self.user_objects) {
            if object.owned > 0 {
                // SAFETY: a live user object of which the case owns `owned` references.
                check(format!("user object {label}"), unsafe {
                    sys::cudaUserObjectRelease(object.handle(), object.owned)
                });
            }
        }
        for memory in self.managed.drain(..) {
            check("memory from malloc-managed".to_owned(), memory.release());
        }
        self.mem.clear();
        self.events.clear();
        self.private_dir = None;
        self.exported_fds.clear();
        // The instance and device stay for the next case of the process; the case's objects go.
        if let Some(session) = self.vulkan.take() {
            session.put_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_dir_is_made_for_this_user_alone_and_removed_with_its_files() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (PrivateDir::new().unwrap(), PrivateDir::new().unwrap());
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        std::fs::write(a.path().join("g.dot"), "digraph {}").unwrap();
        let path = a.path().to_owned();
        drop(a);
        assert!(!path.exists());
    }
}
