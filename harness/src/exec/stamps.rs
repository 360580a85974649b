//! Kernel stamps: one `[entry, exit]` pair of `%globaltimer` nanoseconds in device memory per kernel launch
//! operation (labelled or not, so traces show every kernel), zeroed before the script and copied back after the
//! final device synchronize. A pair still zero means the kernel never ran. Device memory rather than mapped memory
//! keeps cases without gates independent of canMapHostMemory. A case on several devices gets a pool on each (a
//! kernel writes the pool of the device it runs on: another device's memory may not be mapped there), and a
//! launch gets the slot in the pool of the device current when it is launched (or captured).

use super::devices::{self, CaseDevices};
use super::resources::{check, DeviceMemory};
use crate::case::ast::Case;
use crate::gpu::error_name;
use crate::observations::KernelRecord;
use cuda_sys as sys;

pub struct StampPool {
    /// One pool per device of the case, with its ordinal (none when the case launches nothing or the allocation
    /// failed).
    memory: Vec<(i32, DeviceMemory)>,
    /// Script index of the launch operation that owns each slot.
    owners: Vec<usize>,
    devices: CaseDevices,
}

// SAFETY: after creation the pool is read-only: the device pointer is only handed to kernels and to the final copy.
unsafe impl Sync for StampPool {}

impl StampPool {
    /// One zeroed slot per launch operation of `case`, on each of its devices. On failure launches get no stamp
    /// pointer (the kernels accept null) and the note says why.
    pub fn create(case: &Case, devices: &CaseDevices) -> (StampPool, Option<String>) {
        let owners: Vec<usize> =
            case.script.iter().enumerate().filter(|(_, op)| op.kind.is_kernel_launch()).map(|(i, _)| i).collect();
        let mut pool = StampPool { memory: Vec::new(), owners, devices: devices.clone() };
        if pool.owners.is_empty() {
            return (pool, None);
        }
        let bytes = pool.owners.len() * 16;
        for &ordinal in devices.ordinals() {
            let memory = devices.on(ordinal, || {
                DeviceMemory::alloc(bytes).and_then(|m| {
                    // SAFETY: m is a live device allocation of `bytes` bytes.
                    check(unsafe { sys::cudaMemset(m.raw(), 0, bytes) }).map(|()| m)
                })
            });
            match memory {
                Ok(m) => pool.memory.push((ordinal, m)),
                Err(code) => {
                    let note = format!("no kernel stamps: allocating the stamp pool returned {}", error_name(code));
                    pool.memory.clear();
                    return (pool, Some(note));
                }
            }
        }
        (pool, None)
    }

    /// The `[entry, exit]` pair of launch operation `op_index` on the device current now, or null.
    pub fn slot(&self, op_index: usize) -> *mut u64 {
        let Some(slot) = self.owners.iter().position(|&o| o == op_index) else { return std::ptr::null_mut() };
        let memory = match self.memory.as_slice() {
            [(_, only)] => Some(only),
            several => {
                let current = devices::current().ok();
                several.iter().find(|(o, _)| Some(*o) == current).map(|(_, m)| m)
            }
        };
        match memory {
            // SAFETY: slot < owners.len(), and the pool holds two u64 per owner (no dereference here).
            Some(m) => unsafe { m.raw().cast::<u64>().add(2 * slot) },
            None => std::ptr::null_mut(),
        }
    }

    /// The stamps of every launch operation and the origin they are relative to. Call after the final device
    /// synchronize. The error says why no stamps could be read. A launch writes the pool of one device, so each
    /// slot takes the pair that is not zero.
    pub fn read(&self, case: &Case) -> (Vec<KernelRecord>, Option<u64>, Option<String>) {
        let mut raw = vec![[0u64; 2]; self.owners.len()];
        let mut error = None;
        for (ordinal, m) in &self.memory {
            let mut pool = vec![[0u64; 2]; self.owners.len()];
            let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
            // SAFETY: pool has owners.len() * 16 bytes, as does the device's pool.
            let code = self
                .devices
                .on(*ordinal, || unsafe { sys::cudaMemcpy(pool.as_mut_ptr().cast(), m.raw(), pool.len() * 16, kind) });
            if code != sys::cudaError::cudaSuccess {
                error = Some(format!("reading the kernel stamps returned {}", error_name(code)));
                raw.iter_mut().for_each(|pair| *pair = [0, 0]);
                break;
            }
            for (slot, pair) in raw.iter_mut().zip(pool) {
                if pair != [0, 0] {
                    *slot = pair;
                }
            }
        }
        let labels: Vec<(usize, Option<String>)> =
            self.owners.iter().map(|&i| (i, case.script.get(i).and_then(|op| op.label.clone()))).collect();
        let (records, origin) = relative_stamps(&raw, &labels);
        (records, origin, error)
    }

    pub fn release(&mut self) -> Option<sys::cudaError_t> {
        let devices = self.devices.clone();
        let mut failed = None;
        for (ordinal, m) in self.memory.drain(..) {
            let code = devices.on(ordinal, || m.release());
            if code != sys::cudaError::cudaSuccess {
                failed.get_or_insert(code);
            }
        }
        failed
    }
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
