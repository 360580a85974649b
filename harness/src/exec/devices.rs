//! The GPUs of one case: which ordinal each of the case's device indices stands for (`case::placement`), running
//! a call with one of them current, and what the executor must do on each of them (load the kernels, synchronize).
//! A case that names one device never changes the current device here, so it runs exactly as it did before cases
//! could name several.

use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use cuda_sys as sys;

/// The ordinal of each device index of a case: index 0 is the case's own device.
#[derive(Debug, Clone)]
pub struct CaseDevices {
    ordinals: Vec<i32>,
}

impl CaseDevices {
    /// The devices `case` names, counted from `device`. When fewer are visible (the requirement was not checked:
    /// a test harness running the case directly), the missing ones stand for the case's device and the note says so.
    pub fn of(case: &Case, device: &DeviceInfo) -> (CaseDevices, Option<String>) {
        let wanted = case.device_count();
        let ordinals: Vec<i32> = (0..wanted).map(|i| device.case_device(i).unwrap_or(device.ordinal)).collect();
        let note = (wanted > device.device_count.max(1)).then(|| {
            format!(
                "the case names {wanted} devices and {} are visible: the missing ones are device {} itself",
                device.device_count, device.ordinal
            )
        });
        (CaseDevices { ordinals }, note)
    }

    /// The ordinal of device `index` of the case.
    pub fn ordinal(&self, index: u32) -> i32 {
        self.ordinals.get(index as usize).or(self.ordinals.first()).copied().unwrap_or(0)
    }

    /// Every device of the case, index 0 first.
    pub fn ordinals(&self) -> &[i32] {
        &self.ordinals
    }

    pub fn is_single(&self) -> bool {
        self.ordinals.len() <= 1
    }

    /// Runs `f` with device `ordinal` current on this thread, then makes the previous device current again. For a
    /// single-device case it only runs `f`: the current device is already the case's.
    pub fn on<T>(&self, ordinal: i32, f: impl FnOnce() -> T) -> T {
        if self.is_single() {
            return f();
        }
        let previous = current().ok();
        if previous != Some(ordinal) {
            // SAFETY: no pointers.
            let _ = unsafe { sys::cudaSetDevice(ordinal) };
        }
        let out = f();
        if let Some(p) = previous.filter(|&p| p != ordinal) {
            // SAFETY: no pointers.
            let _ = unsafe { sys::cudaSetDevice(p) };
        }
        out
    }

    /// `cudaDeviceSynchronize` on every device of the case, index 0 first: the first code that is not cudaSuccess
    /// (cudaSuccess if none), and a note naming the device of each failure.
    pub fn synchronize_all(&self) -> (sys::cudaError_t, Vec<String>) {
        let mut first = sys::cudaError::cudaSuccess;
        let mut notes = Vec::new();
        for (index, &ordinal) in self.ordinals.iter().enumerate() {
            // SAFETY: no arguments.
            let code = self.on(ordinal, || unsafe { sys::cudaDeviceSynchronize() });
            if code != sys::cudaError::cudaSuccess {
                if first == sys::cudaError::cudaSuccess {
                    first = code;
                }
                if !self.is_single() {
                    notes.push(format!(
                        "the cudaDeviceSynchronize of device {index} (ordinal {ordinal}) returned {}",
                        code
                    ));
                }
            }
        }
        (first, notes)
    }
}

/// The calling thread's current device (cudaGetDevice).
pub fn current() -> Result<i32, sys::cudaError_t> {
    let mut ordinal = -1;
    // SAFETY: ordinal is a valid out-pointer.
    let code = unsafe { sys::cudaGetDevice(&mut ordinal) };
    if code == sys::cudaError::cudaSuccess {
        Ok(ordinal)
    } else {
        Err(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse_file;
    use crate::exec::test_support::{h100, h200_pair};

    fn two_device_case() -> Case {
        let text = "case t/a\n rule: r\n source: s\n requires: devices >= 2\n stream s device 1\nend\n";
        parse_file("t.case", text).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0)
    }

    #[test]
    fn indices_count_from_the_case_device_and_wrap() {
        let case = two_device_case();
        let (on0, note) = CaseDevices::of(&case, &h200_pair(0));
        assert_eq!((on0.ordinals(), note), (&[0, 1][..], None));
        let (on1, _) = CaseDevices::of(&case, &h200_pair(1));
        assert_eq!(on1.ordinals(), &[1, 0]);
        assert_eq!(on1.ordinal(1), 0);
        assert!(!on1.is_single());
    }

    #[test]
    fn too_few_devices_are_noted_not_a_panic() {
        let (devices, note) = CaseDevices::of(&two_device_case(), &h100());
        assert_eq!(devices.ordinals(), &[0, 0]);
        assert!(note.is_some_and(|n| n.contains("names 2 devices and 1 are visible")));
    }
}
