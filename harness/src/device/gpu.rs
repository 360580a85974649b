//! What GPU (if any) this process can use, and the facts a report needs about it: name, UUID, compute capability,
//! the properties cases require, driver and runtime versions, link mode and the CUDA_* environment.

use crate::record::{PeerLink, VisibleDevice};
use cuda_sys as sys;
use serde::Serialize;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, Ordering};

/// The device a run uses and everything about it that cases require or reports record.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    pub ordinal: i32,
    pub name: String,
    pub uuid: String,
    pub compute_capability: (u32, u32),
    pub multiprocessors: u32,
    pub concurrent_kernels: bool,
    pub async_engine_count: u32,
    pub can_map_host_memory: bool,
    /// cudaDevAttrMemoryPoolsSupported: cudaMallocAsync and memory pools.
    pub memory_pools: bool,
    // Managed memory
    /// cudaDevAttrConcurrentManagedAccess: the host may touch managed memory while kernels run.
    pub concurrent_managed_access: bool,
    /// cudaDevAttrPageableMemoryAccess: kernels may use pageable host memory (HMM or ATS).
    pub pageable_memory_access: bool,
    /// cudaDeviceProp::totalGlobalMem, bytes.
    pub total_memory: u64,
    pub unified_addressing: bool,
    /// `(greatest, least)` from cudaDeviceGetStreamPriorityRange: greatest is numerically lowest. `(0, 0)`, not
    /// read, when [`Self::priorities_read`] is false.
    pub stream_priority_range: (i32, i32),
    /// Whether [`Self::stream_priority_range`] was read: false from [`probe_without_context`], which makes no
    /// context to ask, so what depends on the range (`requires: stream-priorities`) is left to a worker's probe.
    pub priorities_read: bool,
    pub device_count: u32,
    /// cudaDriverGetVersion, e.g. 13000.
    pub driver_version: u32,
    /// cudaRuntimeGetVersion of the linked runtime.
    pub runtime_version: u32,
    /// Every device this process sees, by ordinal (a worker restricted to one GPU sees one).
    pub visible: Vec<VisibleDevice>,
    /// The link between every ordered pair of visible devices.
    pub links: Vec<PeerLink>,
}

impl DeviceInfo {
    /// The ordinal of the case's device `index`: 0 is this device, N the N-th visible device after it, wrapping
    /// (see `case::placement`). `None` when fewer than `index + 1` devices are visible.
    pub fn case_device(&self, index: u32) -> Option<i32> {
        let count = self.device_count.max(1);
        (index < count).then(|| (self.ordinal + index as i32).rem_euclid(count as i32))
    }

    /// The link from device `from` to device `to` (ordinals), if it was probed.
    pub fn link(&self, from: i32, to: i32) -> Option<&PeerLink> {
        self.links.iter().find(|l| l.from == from && l.to == to)
    }
}

/// The visible devices and the links between them, probed once per process: cheap queries that make no context
/// current on any device.
fn topology() -> &'static (Vec<VisibleDevice>, Vec<PeerLink>) {
    static TOPOLOGY: std::sync::OnceLock<(Vec<VisibleDevice>, Vec<PeerLink>)> = std::sync::OnceLock::new();
    TOPOLOGY.get_or_init(|| {
        let mut count = 0;
        // SAFETY: count is a valid out-pointer.
        if unsafe { sys::cudaGetDeviceCount(&mut count) } != sys::cudaError::cudaSuccess {
            return (Vec::new(), Vec::new());
        }
        let devices = (0..count).map(visible_device).collect();
        let mut links = Vec::new();
        for from in 0..count {
            for to in (0..count).filter(|&to| to != from) {
                links.push(peer_link(from, to));
            }
        }
        // A refused query leaves a last error that the first case must not see.
        // SAFETY: no arguments.
        let _ = unsafe { sys::cudaGetLastError() };
        (devices, links)
    })
}

fn visible_device(ordinal: i32) -> VisibleDevice {
    // SAFETY: prop is a valid out-pointer.
    let mut prop: sys::cudaDeviceProp = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let props = unsafe { sys::compat::get_device_properties(&mut prop, ordinal) } == sys::cudaError::cudaSuccess;
    let mut bus = [0 as std::ffi::c_char; 32];
    // SAFETY: bus holds 32 chars, and the length says so.
    let bus_ok = unsafe { sys::cudaDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as i32, ordinal) }
        == sys::cudaError::cudaSuccess;
    VisibleDevice {
        ordinal,
        // SAFETY: cudaGetDeviceProperties NUL-terminates the name.
        name: if props {
            unsafe { CStr::from_ptr(prop.name.as_ptr()) }.to_string_lossy().into_owned()
        } else {
            String::new()
        },
        uuid: if props { format_uuid(&prop.uuid.bytes) } else { String::new() },
        // SAFETY: on success the bus id is NUL-terminated within the buffer.
        pci_bus_id: if bus_ok {
            unsafe { CStr::from_ptr(bus.as_ptr()) }.to_string_lossy().into_owned()
        } else {
            String::new()
        },
    }
}

fn peer_link(from: i32, to: i32) -> PeerLink {
    let p2p = |attr: sys::cudaDeviceP2PAttr| {
        let mut value = 0;
        // SAFETY: value is a valid out-pointer.
        (unsafe { sys::cudaDeviceGetP2PAttribute(&mut value, attr, from, to) } == sys::cudaError::cudaSuccess)
            .then_some(value)
    };
    let mut can = 0;
    // SAFETY: can is a valid out-pointer.
    let can_access_peer = (unsafe { sys::cudaDeviceCanAccessPeer(&mut can, from, to) } == sys::cudaError::cudaSuccess)
        .then_some(can == 1);
    use sys::cudaDeviceP2PAttr as P;
    PeerLink {
        from,
        to,
        can_access_peer,
        access_supported: p2p(P::cudaDevP2PAttrAccessSupported).map(|v| v == 1),
        performance_rank: p2p(P::cudaDevP2PAttrPerformanceRank),
        native_atomics: p2p(P::cudaDevP2PAttrNativeAtomicSupported).map(|v| v == 1),
        cuda_array_access: p2p(P::cudaDevP2PAttrCudaArrayAccessSupported).map(|v| v == 1),
    }
}

/// Why there is no device to run on, e.g. `no CUDA device: cudaErrorInsufficientDriver`.
#[derive(Debug, Clone, Serialize)]
pub struct NoDevice(pub String);

impl std::fmt::Display for NoDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn check(code: sys::cudaError_t, what: &str) -> Result<(), NoDevice> {
    if code == sys::cudaError::cudaSuccess {
        Ok(())
    } else {
        Err(NoDevice(format!("no CUDA device: {what} returned {code}")))
    }
}

fn attribute(attr: sys::cudaDeviceAttr, device: i32) -> Result<i32, NoDevice> {
    let mut value = 0;
    // SAFETY: value is a valid out-pointer.
    check(unsafe { sys::cudaDeviceGetAttribute(&mut value, attr, device) }, "cudaDeviceGetAttribute")?;
    Ok(value)
}

/// How many CUDA devices this process sees, from `cudaGetDeviceCount` alone: it loads the driver but creates no
/// context, so a test binary can ask it while listing its trials (cargo-nextest lists, then starts one process per
/// trial) without paying for a context or touching a device. No driver, or no device, is the reason instead.
pub fn device_count() -> Result<i32, NoDevice> {
    let mut count = 0;
    // SAFETY: count is a valid out-pointer.
    let code = unsafe { sys::cudaGetDeviceCount(&mut count) };
    if code != sys::cudaError::cudaSuccess {
        return Err(NoDevice(format!("no CUDA device: {code}")));
    }
    if count == 0 {
        return Err(NoDevice("no CUDA device: cudaGetDeviceCount found 0".into()));
    }
    Ok(count)
}

/// Probes device `ordinal`, making it current (which creates its primary context). With no driver or no GPU this
/// returns the reason instead.
pub fn probe(ordinal: i32) -> Result<DeviceInfo, NoDevice> {
    probe_with(ordinal, true)
}

/// Probes device `ordinal` without making it current, so without creating a context (about 250 ms on an H100
/// host): for a process that only hands the device's cases to a worker, which probes fully (a test binary's process
/// for one trial under cargo-nextest, or one that lists trials). The stream priority range needs a context: it is
/// not read here ([`DeviceInfo::priorities_read`]), and a report must not be made from this probe.
pub fn probe_without_context(ordinal: i32) -> Result<DeviceInfo, NoDevice> {
    probe_with(ordinal, false)
}

fn probe_with(ordinal: i32, make_current: bool) -> Result<DeviceInfo, NoDevice> {
    let count = device_count()?;
    if count <= ordinal {
        return Err(NoDevice(format!("no CUDA device: device {ordinal} requested, {count} present")));
    }
    // SAFETY: plain calls with valid out-pointers.
    unsafe {
        let mut prop: sys::cudaDeviceProp = std::mem::zeroed();
        check(sys::compat::get_device_properties(&mut prop, ordinal), "cudaGetDeviceProperties")?;
        let name = CStr::from_ptr(prop.name.as_ptr()).to_string_lossy().into_owned();
        let uuid = format_uuid(&prop.uuid.bytes);
        let (mut least, mut greatest) = (0, 0);
        if make_current {
            check(sys::cudaSetDevice(ordinal), "cudaSetDevice")?;
            check(
                sys::cudaDeviceGetStreamPriorityRange(&mut least, &mut greatest),
                "cudaDeviceGetStreamPriorityRange",
            )?;
        }
        let (mut driver, mut runtime) = (0, 0);
        check(sys::cudaDriverGetVersion(&mut driver), "cudaDriverGetVersion")?;
        check(sys::cudaRuntimeGetVersion(&mut runtime), "cudaRuntimeGetVersion")?;
        let driver = driver_to_use(driver as u32)?;
        let (visible, links) = topology().clone();
        use sys::cudaDeviceAttr as A;
        Ok(DeviceInfo {
            ordinal,
            name,
            uuid,
            compute_capability: (prop.major as u32, prop.minor as u32),
            multiprocessors: prop.multiProcessorCount as u32,
            concurrent_kernels: attribute(A::cudaDevAttrConcurrentKernels, ordinal)? == 1,
            async_engine_count: attribute(A::cudaDevAttrAsyncEngineCount, ordinal)? as u32,
            can_map_host_memory: attribute(A::cudaDevAttrCanMapHostMemory, ordinal)? == 1,
            memory_pools: attribute(A::cudaDevAttrMemoryPoolsSupported, ordinal)? == 1,
            concurrent_managed_access: attribute(A::cudaDevAttrConcurrentManagedAccess, ordinal)? == 1,
            pageable_memory_access: attribute(A::cudaDevAttrPageableMemoryAccess, ordinal)? == 1,
            total_memory: prop.totalGlobalMem as u64,
            unified_addressing: attribute(A::cudaDevAttrUnifiedAddressing, ordinal)? == 1,
            stream_priority_range: (greatest, least),
            priorities_read: make_current,
            device_count: count as u32,
            driver_version: driver,
            runtime_version: runtime as u32,
            visible,
            links,
        })
    }
}

/// The CUDA version the installed driver supports (cudaDriverGetVersion), without touching a device: `None` with
/// no driver. For the provenance of a run that could not find a device.
pub fn driver_version() -> Option<u32> {
    let mut v = 0;
    // SAFETY: v is a valid out-pointer; the call needs no device or context.
    let code = unsafe { sys::cudaDriverGetVersion(&mut v) };
    (code == sys::cudaError::cudaSuccess && v > 0).then_some(v as u32)
}

/// The version of the linked runtime (cudaRuntimeGetVersion), without touching a device.
pub fn runtime_version() -> Option<u32> {
    let mut v = 0;
    // SAFETY: v is a valid out-pointer; the call needs no device or context.
    let code = unsafe { sys::cudaRuntimeGetVersion(&mut v) };
    (code == sys::cudaError::cudaSuccess && v > 0).then_some(v as u32)
}

/// Test switch: run as if the driver supported only this CUDA version (`12020` or `12.2`), never more than it
/// reports. Requirements (`driver >= 12.3`) are judged against it and cuda-sys picks the call forms for it (below
/// 12.3: no graph edge data), so the fallbacks for old drivers run on a new one. Reports record it.
pub const ASSUME_DRIVER_VAR: &str = "CUDA_CONFORMANCE_ASSUME_DRIVER";

/// What cudaDriverGetVersion reported when [`ASSUME_DRIVER_VAR`] lowered it (0: not lowered).
static REPORTED_DRIVER: AtomicU32 = AtomicU32::new(0);

/// The driver version this process acts on: `reported`, or lower by [`ASSUME_DRIVER_VAR`]. Tells cuda-sys's
/// compat layer, which chooses call forms by it.
fn driver_to_use(reported: u32) -> Result<u32, NoDevice> {
    let assumed = match std::env::var(ASSUME_DRIVER_VAR) {
        Ok(text) => Some(parse_version(&text).ok_or_else(|| {
            NoDevice(format!("{ASSUME_DRIVER_VAR}={text:?} is not a CUDA version such as 12020 or 12.2"))
        })?),
        Err(_) => None,
    };
    let driver = assumed.map_or(reported, |a| a.min(reported));
    if driver != reported {
        REPORTED_DRIVER.store(reported, Ordering::Relaxed);
    }
    sys::compat::assume_driver_version(driver);
    Ok(driver)
}

/// What the driver itself reported, when [`ASSUME_DRIVER_VAR`] made this process act on a lower version.
pub fn reported_driver_version() -> Option<u32> {
    Some(REPORTED_DRIVER.load(Ordering::Relaxed)).filter(|&v| v != 0)
}

/// `12.2` or `12020` (cudaDriverGetVersion's form) as 12020.
pub fn parse_version(text: &str) -> Option<u32> {
    let text = text.trim();
    match text.split_once('.') {
        Some((major, minor)) => {
            let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
            (major >= 1 && minor < 100).then(|| major.checked_mul(1000)?.checked_add(minor * 10)).flatten()
        }
        None => text.parse().ok().filter(|&v| v >= 1000),
    }
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, the form nvidia-smi prints.
fn format_uuid(bytes: &[std::ffi::c_char; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{:02x}", *b as u8)).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

/// `13000` as `13.0`.
pub fn version_string(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The CUDA_* environment variables of this process (they change semantics: CUDA_LAUNCH_BLOCKING=1 makes every
/// launch synchronous, CUDA_DEVICE_MAX_CONNECTIONS bounds the hardware queues, CUDA_MODULE_LOADING decides
/// whether kernels load lazily).
pub fn cuda_environment() -> Vec<(String, String)> {
    let mut vars: Vec<_> = std::env::vars().filter(|(k, _)| k.starts_with("CUDA_")).collect();
    vars.sort();
    vars
}

/// The three variables that change what cases can observe, with the value in effect (the driver's default when
/// unset), so every report says how it ran even when the environment was empty.
pub fn semantic_environment() -> Vec<(String, String)> {
    crate::record::provenance::SEMANTIC_DEFAULTS
        .iter()
        .map(|(name, default)| {
            let value = std::env::var(name).unwrap_or_else(|_| format!("{default} (unset: the default)"));
            (name.to_string(), value)
        })
        .collect()
}

/// CUDA_DEVICE_MAX_CONNECTIONS of `env` (or of this process when `env` does not set it): how many hardware queues
/// unrelated streams are spread over; 8 when unset (the CUDA Programming Guide's default).
pub fn max_connections(env: &[(String, String)]) -> u32 {
    const NAME: &str = "CUDA_DEVICE_MAX_CONNECTIONS";
    let value = env.iter().find(|(n, _)| n == NAME).map(|(_, v)| v.clone()).or_else(|| std::env::var(NAME).ok());
    value.and_then(|v| v.trim().parse().ok()).unwrap_or(8)
}

/// True when CUDA_LAUNCH_BLOCKING=1: every launch is synchronous, so no asynchrony case can be observed.
pub fn launch_blocking() -> bool {
    std::env::var("CUDA_LAUNCH_BLOCKING").map(|v| v.trim() == "1").unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn driver_versions_parse_in_both_forms() {
        assert_eq!(parse_version("12.2"), Some(12020));
        assert_eq!(parse_version(" 12020 "), Some(12020));
        assert_eq!(parse_version("13.0"), Some(13000));
        for bad in ["", "twelve", "12", "12.", "12.x", "-1.0", "12.100", "99999999999.0"] {
            assert_eq!(parse_version(bad), None, "{bad:?}");
        }
    }
}
