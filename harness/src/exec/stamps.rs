//! Kernel stamps: one `[entry, exit]` pair of `%globaltimer` nanoseconds per kernel launch operation (labelled or
//! not, so traces show every kernel), zeroed before the script and read back after the final device synchronize. A
//! pair still zero means the kernel never ran. A case on one device keeps them in device memory, so cases without
//! gates stay independent of canMapHostMemory. A case on several devices keeps them in portable mapped host memory,
//! which a kernel reaches whichever device runs it: which one does is what some of those cases are about (a launch
//! into a stream of another device than the current one), and a stamp must never be the access that faults.

use super::harness_memory;
use super::resources::{check, DeviceMemory, HostMemory};
use crate::case::ast::Case;
use crate::record::observations::KernelRecord;
use cuda_sys as sys;

enum Memory {
    /// The allocation and the ordinal of its device.
    Device(DeviceMemory, i32),
    /// The host allocation and its device alias (the same address under unified addressing).
    Mapped(HostMemory, *mut u64),
}

pub struct StampPool {
    /// `None` when the case launches nothing or the allocation failed.
    memory: Option<Memory>,
    /// Script index of the launch operation that owns each slot.
    owners: Vec<usize>,
}

// SAFETY: after creation the pool is read-only: the pointers are only handed to kernels and read after the final
// synchronize.
unsafe impl Sync for StampPool {}

impl StampPool {
    /// One zeroed slot per launch operation of `case`, in device memory, or with `several_devices` in portable
    /// mapped host memory. On failure launches get no stamp pointer (the kernels accept null) and the note says why.
    pub fn create(case: &Case, several_devices: bool) -> (StampPool, Option<String>) {
        let owners: Vec<usize> =
            case.script.iter().enumerate().filter(|(_, op)| op.kind.is_kernel_launch()).map(|(i, _)| i).collect();
        if owners.is_empty() {
            return (StampPool { memory: None, owners }, None);
        }
        let bytes = allocation_bytes(owners.len());
        let memory = if several_devices {
            harness_memory::mapped(bytes).map(|(host, device)| {
                // SAFETY: host is a live allocation of `bytes` bytes that no kernel uses yet.
                unsafe { std::ptr::write_bytes(host.raw().cast::<u8>(), 0, bytes) };
                Memory::Mapped(host, device.cast())
            })
        } else {
            let mut ordinal = 0;
            // SAFETY: ordinal is a valid out-pointer.
            check(unsafe { sys::cudaGetDevice(&mut ordinal) })
                .and_then(|()| harness_memory::device(bytes, ordinal))
                .and_then(|m| {
                    // SAFETY: m is a live device allocation of `bytes` bytes.
                    check(unsafe { sys::cudaMemset(m.raw(), 0, bytes) }).map(|()| Memory::Device(m, ordinal))
                })
        };
        match memory {
            Ok(m) => (StampPool { memory: Some(m), owners }, None),
            Err(code) => {
                let note = format!("no kernel stamps: allocating the stamp pool returned {}", code);
                (StampPool { memory: None, owners }, Some(note))
            }
        }
    }

    /// The `[entry, exit]` pair of launch operation `op_index`, or null.
    pub fn slot(&self, op_index: usize) -> *mut u64 {
        let base = match &self.memory {
            Some(Memory::Device(m, _)) => m.raw().cast::<u64>(),
            Some(Memory::Mapped(_, device)) => *device,
            None => return std::ptr::null_mut(),
        };
        match self.owners.iter().position(|&o| o == op_index) {
            // SAFETY: slot < owners.len(), and the pool holds two u64 per owner (no dereference here).
            Some(slot) => unsafe { base.add(2 * slot) },
            None => std::ptr::null_mut(),
        }
    }

    /// The stamps of every launch operation and the origin they are relative to. Call after the final device
    /// synchronize. The error says why no stamps could be read.
    pub fn read(&self, case: &Case) -> (Vec<KernelRecord>, Option<u64>, Option<String>) {
        let mut raw = vec![[0u64; 2]; self.owners.len()];
        let mut error = None;
        match &self.memory {
            Some(Memory::Device(m, _)) => {
                let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
                // SAFETY: raw has owners.len() * 16 bytes, as does the pool.
                let code = unsafe { sys::cudaMemcpy(raw.as_mut_ptr().cast(), m.raw(), raw.len() * 16, kind) };
                if code != sys::cudaError::cudaSuccess {
                    error = Some(format!("reading the kernel stamps returned {}", code));
                    raw.iter_mut().for_each(|pair| *pair = [0, 0]);
                }
            }
            Some(Memory::Mapped(host, _)) => {
                let words = host.raw().cast::<u64>();
                for (i, pair) in raw.iter_mut().enumerate() {
                    // SAFETY: the allocation holds two u64 per owner; volatile, since a kernel of a poisoned
                    // context may never have been waited for.
                    *pair = unsafe { [words.add(2 * i).read_volatile(), words.add(2 * i + 1).read_volatile()] };
                }
            }
            None => {}
        }
        let labels: Vec<(usize, Option<String>)> =
            self.owners.iter().map(|&i| (i, case.script.get(i).and_then(|op| op.label.clone()))).collect();
        let (records, origin) = relative_stamps(&raw, &labels);
        (records, origin, error)
    }

    /// Zeroes every slot again, as [`StampPool::create`] left them, for one more run of the script on the same pool
    /// (`samples: N`): device memory with cudaMemset on the legacy stream (the executor synchronizes the device
    /// before the script), mapped memory on the host. The note says why it could not.
    pub fn clear(&self) -> Option<String> {
        let bytes = self.owners.len() * 16;
        match &self.memory {
            Some(Memory::Device(m, _)) => {
                // SAFETY: m is a live device allocation of at least `bytes` bytes.
                let code = unsafe { sys::cudaMemset(m.raw(), 0, bytes) };
                (code != sys::cudaError::cudaSuccess).then(|| format!("zeroing the kernel stamps returned {}", code))
            }
            Some(Memory::Mapped(host, _)) => {
                // SAFETY: a live host allocation of `bytes` bytes that no kernel uses (the device is idle).
                unsafe { std::ptr::write_bytes(host.raw().cast::<u8>(), 0, bytes) };
                None
            }
            None => None,
        }
    }

    /// Frees the pool's memory, or with `keep` (after a healthy case: no kernel writes it any more) keeps it for a
    /// later case's stamps ([`harness_memory`]); the code when freeing failed.
    pub fn release(&mut self, keep: bool) -> Option<sys::cudaError_t> {
        let bytes = allocation_bytes(self.owners.len());
        let code = match self.memory.take()? {
            Memory::Device(m, ordinal) if keep => harness_memory::keep_device(m, bytes, ordinal),
            Memory::Device(m, _) => m.release(),
            Memory::Mapped(host, device) if keep => harness_memory::keep_mapped(host, device.cast(), bytes),
            Memory::Mapped(host, _) => host.release(),
        };
        (code != sys::cudaError::cudaSuccess).then_some(code)
    }
}

/// The bytes a pool of `slots` stamp pairs allocates: 16 a pair, rounded up to 4 KiB, so that pools of most cases
/// are of one size and a kept one serves the next case ([`harness_memory`]).
fn allocation_bytes(slots: usize) -> usize {
    (slots * 16).div_ceil(4096) * 4096
}

/// Stamps relative to the earliest non-zero one (order is kept; zero means never written).
fn relative_stamps(raw: &[[u64; 2]], owners: &[(usize, Option<String>)]) -> (Vec<KernelRecord>, Option<u64>) {
    let origin = raw.iter().flatten().copied().filter(|&t| t != 0).min();
    let relative = |t: u64| (t != 0).then(|| t - origin.unwrap_or(0));
    let records = raw
        .iter()
        .zip(owners)
        .map(|(&[entry, exit], (op_index, label))| KernelRecord {
            op_index: *op_index,
            label: label.clone(),
            entry_ns: relative(entry),
            exit_ns: relative(exit),
        })
        .collect();
    (records, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_relative_to_the_earliest_and_zero_is_never() {
        let raw = [[5_000, 5_900], [0, 0], [4_000, 7_000]];
        let owners = [(1, Some("a".to_owned())), (2, None), (4, Some("c".to_owned()))];
        let (records, origin) = relative_stamps(&raw, &owners);
        assert_eq!(origin, Some(4_000));
        let pairs: Vec<_> = records.iter().map(|r| (r.op_index, r.entry_ns, r.exit_ns)).collect();
        assert_eq!(pairs, [(1, Some(1_000), Some(1_900)), (2, None, None), (4, Some(0), Some(3_000))]);
        assert_eq!(records[2].label.as_deref(), Some("c"));
    }
}
