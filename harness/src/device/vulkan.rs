//! The Vulkan side of the external-resource cases (issue 31, family 10): memory and semaphores a Vulkan device of
//! the same GPU exports as opaque file descriptors (`VK_KHR_external_memory_fd`, `VK_KHR_external_semaphore_fd`),
//! for `cudaImportExternalMemory` and `cudaImportExternalSemaphore`. One job: make, read, write and release those
//! objects; the CUDA side is the generic `call`.
//!
//! The loader is opened at run time (`ash::Entry::load`: `dlopen("libvulkan.so.1")`), so the binary links no
//! Vulkan library and a host without one (CI's CPU machine) still runs everything else; the loader itself honours
//! the standard variables (`VK_DRIVER_FILES`, `VK_ICD_FILENAMES`, `VK_LOADER_DEBUG`), and `LD_LIBRARY_PATH` finds
//! a loader unpacked beside the run. [`unavailable`] says why a case that `requires: vulkan` cannot run here.

use ash::vk;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The Vulkan API version the session asks for: 1.2 has timeline semaphores and `vkGetSemaphoreCounterValue`
/// in core.
const API_VERSION: u32 = vk::API_VERSION_1_2;

/// Why no Vulkan session can be made for the GPU with UUID `uuid` (`GPU-xxxxxxxx-...`), or `None` when one can.
/// Decided once per process and UUID (it creates and destroys an instance and a device).
pub fn unavailable(uuid: &str) -> Option<String> {
    static SEEN: Mutex<BTreeMap<String, Option<String>>> = Mutex::new(BTreeMap::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.entry(uuid.to_owned())
        .or_insert_with(|| match Session::new(uuid) {
            Ok(session) => {
                session.put_back();
                None
            }
            Err(why) => Some(why),
        })
        .clone()
}

/// Sessions no case holds (their objects released), kept for the next case of the process: a case's session is an
/// instance and a device, which the process makes once per GPU instead of once per case. Never dropped: a process
/// ends with them alive, which Vulkan allows (the reproducers, C++, had a static session destroyed after the
/// driver's own exit handlers and died of it; there the session goes with the case).
static IDLE: Mutex<Vec<Session>> = Mutex::new(Vec::new());

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` as its 16 bytes (the form `VkPhysicalDeviceIDProperties` holds).
fn uuid_bytes(uuid: &str) -> Result<[u8; 16], String> {
    let hex: String = uuid.trim_start_matches("GPU-").chars().filter(|c| *c != '-').collect();
    let mut out = [0u8; 16];
    if hex.len() != 32 {
        return Err(format!("the CUDA device's UUID `{uuid}` is not 16 hex bytes"));
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("the CUDA device's UUID `{uuid}` is not hex"))?;
    }
    Ok(out)
}

/// Exportable Vulkan memory, mapped on the host for its whole size.
struct Memory {
    memory: vk::DeviceMemory,
    map: *mut u8,
    size: u64,
}

/// A Vulkan instance and device on the GPU of one CUDA device, and the objects a case made on it. Dropping it
/// releases everything (objects first, then the device and the instance).
pub struct Session {
    /// The CUDA device's UUID it was made for.
    uuid: String,
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    memory_fd: ash::khr::external_memory_fd::Device,
    semaphore_fd: ash::khr::external_semaphore_fd::Device,
    /// A host-visible, host-coherent memory type (device-local too where there is one).
    memory_type: u32,
    memories: BTreeMap<String, Memory>,
    semaphores: BTreeMap<String, vk::Semaphore>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let memories: Vec<&String> = self.memories.keys().collect();
        let semaphores: Vec<&String> = self.semaphores.keys().collect();
        f.debug_struct("vulkan::Session").field("memories", &memories).field("semaphores", &semaphores).finish()
    }
}

// SAFETY: the session's handles are used from one thread at a time (the executor's objects are behind `&mut`); the
// mapping pointer is host memory the driver keeps mapped until the memory is freed in `drop`.
unsafe impl Send for Session {}

impl Session {
    /// A session on the physical device whose `deviceUUID` is the CUDA device's `uuid`: one an earlier case of
    /// the process gave back ([`Session::put_back`]), else a new one.
    pub fn new(uuid: &str) -> Result<Self, String> {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = idle.iter().position(|s| s.uuid == uuid) {
            return Ok(idle.swap_remove(at));
        }
        drop(idle);
        let want = uuid_bytes(uuid)?;
        // SAFETY: loading the loader runs its initialisers; it is the system's Vulkan loader, or none.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| {
            format!("no Vulkan loader: {e} (install libvulkan1, or put libvulkan.so.1 on LD_LIBRARY_PATH)")
        })?;
        let app = vk::ApplicationInfo::default().api_version(API_VERSION);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: a valid create info; the instance is destroyed on every path below or by Drop.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|e| format!("vkCreateInstance: {e} (no Vulkan driver? VK_DRIVER_FILES names the ICD)"))?;
        match Self::on_device(&instance, want, uuid) {
            Ok((physical, memory_type)) => Self::open(uuid, entry, instance, physical, memory_type),
            Err(why) => {
                // SAFETY: nothing was made from the instance.
                unsafe { instance.destroy_instance(None) };
                Err(why)
            }
        }
    }

    /// The physical device of `want`, checked for the extensions and a host-visible memory type.
    fn on_device(instance: &ash::Instance, want: [u8; 16], uuid: &str) -> Result<(vk::PhysicalDevice, u32), String> {
        // SAFETY: a live instance.
        let devices =
            unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
        let physical = devices
            .into_iter()
            .find(|&pd| {
                let mut id = vk::PhysicalDeviceIDProperties::default();
                let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
                // SAFETY: pd is a physical device of the instance; the chain outlives the call.
                unsafe { instance.get_physical_device_properties2(pd, &mut props) };
                id.device_uuid == want
            })
            .ok_or_else(|| format!("no Vulkan physical device has the UUID of CUDA device {uuid}"))?;
        // SAFETY: as above.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        if props.api_version < API_VERSION {
            return Err(format!(
                "the Vulkan device supports API {}.{}; timeline semaphores need 1.2",
                vk::api_version_major(props.api_version),
                vk::api_version_minor(props.api_version)
            ));
        }
        // SAFETY: as above.
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }
            .map_err(|e| format!("vkEnumerateDeviceExtensionProperties: {e}"))?;
        for want in [ash::khr::external_memory_fd::NAME, ash::khr::external_semaphore_fd::NAME] {
            if !extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(want)) {
                return Err(format!("the Vulkan device lacks {}", want.to_string_lossy()));
            }
        }
        // SAFETY: as above.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = &memory.memory_types[..memory.memory_type_count as usize];
        let pick = |flags: vk::MemoryPropertyFlags| types.iter().position(|t| t.property_flags.contains(flags));
        let memory_type = pick(host | vk::MemoryPropertyFlags::DEVICE_LOCAL)
            .or_else(|| pick(host))
            .ok_or("the Vulkan device has no host-visible, host-coherent memory type")?;
        Ok((physical, memory_type as u32))
    }

    fn open(
        uuid: &str,
        entry: ash::Entry,
        instance: ash::Instance,
        physical: vk::PhysicalDevice,
        memory_type: u32,
    ) -> Result<Self, String> {
        let priorities = [1.0f32];
        // One queue of family 0: a device needs one, though no case submits Vulkan work.
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(0).queue_priorities(&priorities)];
        let extensions = [ash::khr::external_memory_fd::NAME.as_ptr(), ash::khr::external_semaphore_fd::NAME.as_ptr()];
        let mut features12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut features12);
        // SAFETY: a physical device of the instance and a valid create info.
        let device = match unsafe { instance.create_device(physical, &info, None) } {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: nothing else was made from the instance.
                unsafe { instance.destroy_instance(None) };
                return Err(format!("vkCreateDevice with the external fd extensions and timeline semaphores: {e}"));
            }
        };
        let memory_fd = ash::khr::external_memory_fd::Device::new(&instance, &device);
        let semaphore_fd = ash::khr::external_semaphore_fd::Device::new(&instance, &device);
        Ok(Session {
            uuid: uuid.to_owned(),
            _entry: entry,
            instance,
            device,
            memory_fd,
            semaphore_fd,
            memory_type,
            memories: BTreeMap::new(),
            semaphores: BTreeMap::new(),
        })
    }

    /// `bytes` of exportable, host-visible memory named `name`, mapped; returns an opaque FD of it (which the
    /// caller owns: `cudaImportExternalMemory` takes it on success).
    pub fn memory(&mut self, name: &str, bytes: u64) -> Result<i32, String> {
        if self.memories.contains_key(name) {
            return Err(format!("Vulkan memory `{name}` exists already"));
        }
        let mut export =
            vk::ExportMemoryAllocateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(bytes)
            .memory_type_index(self.memory_type)
            .push_next(&mut export);
        // SAFETY: a live device and a valid allocate info; freed in drop.
        let memory = unsafe { self.device.allocate_memory(&info, None) }
            .map_err(|e| format!("vkAllocateMemory of {bytes} exportable bytes: {e}"))?;
        // SAFETY: host-visible memory, not mapped yet; the whole range.
        let map = match unsafe { self.device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) } {
            Ok(p) => p.cast::<u8>(),
            Err(e) => {
                // SAFETY: the memory was just allocated and is not in use.
                unsafe { self.device.free_memory(memory, None) };
                return Err(format!("vkMapMemory: {e}"));
            }
        };
        self.memories.insert(name.to_owned(), Memory { memory, map, size: bytes });
        let info =
            vk::MemoryGetFdInfoKHR::default().memory(memory).handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        // SAFETY: memory allocated with the opaque-fd export type.
        unsafe { self.memory_fd.get_memory_fd(&info) }.map_err(|e| format!("vkGetMemoryFdKHR: {e}"))
    }

    /// An exportable semaphore named `name` (timeline with `initial`, binary without); returns an opaque FD of it.
    pub fn semaphore(&mut self, name: &str, timeline: Option<u64>) -> Result<i32, String> {
        if self.semaphores.contains_key(name) {
            return Err(format!("Vulkan semaphore `{name}` exists already"));
        }
        let mut export =
            vk::ExportSemaphoreCreateInfo::default().handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(if timeline.is_some() { vk::SemaphoreType::TIMELINE } else { vk::SemaphoreType::BINARY })
            .initial_value(timeline.unwrap_or(0));
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut export).push_next(&mut kind);
        // SAFETY: a live device and a valid create info; destroyed in drop.
        let semaphore = unsafe { self.device.create_semaphore(&info, None) }
            .map_err(|e| format!("vkCreateSemaphore (exportable): {e}"))?;
        self.semaphores.insert(name.to_owned(), semaphore);
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(semaphore)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: a semaphore created with the opaque-fd export type.
        unsafe { self.semaphore_fd.get_semaphore_fd(&info) }.map_err(|e| format!("vkGetSemaphoreFdKHR: {e}"))
    }

    fn mapped(&self, name: &str) -> Result<&Memory, String> {
        self.memories.get(name).ok_or_else(|| format!("no Vulkan memory `{name}`"))
    }

    /// Every u32 of memory `name`, written through Vulkan's host mapping.
    pub fn write(&mut self, name: &str, value: u32) -> Result<(), String> {
        let m = self.mapped(name)?;
        let words = (m.size / 4) as usize;
        // SAFETY: the mapping covers `size` bytes and stays mapped while the memory lives; coherent memory needs
        // no flush. Volatile: the GPU reads it through CUDA, which the compiler cannot see.
        for i in 0..words {
            unsafe { m.map.cast::<u32>().add(i).write_volatile(value) };
        }
        Ok(())
    }

    /// The bytes `[at, at + bytes)` of memory `name` (to its end without `bytes`), read through Vulkan's host
    /// mapping.
    pub fn read(&self, name: &str, at: u64, bytes: Option<u64>) -> Result<Vec<u8>, String> {
        let m = self.mapped(name)?;
        let end = bytes.map_or(m.size, |b| at.saturating_add(b));
        if at >= end || end > m.size {
            return Err(format!("bytes {at}..{end} are outside Vulkan memory `{name}` of {} bytes", m.size));
        }
        // SAFETY: [at, end) is inside the mapping (checked above), which stays mapped while the memory lives;
        // volatile because CUDA wrote these bytes.
        Ok((at as usize..end as usize).map(|i| unsafe { m.map.add(i).read_volatile() }).collect())
    }

    /// The counter of timeline semaphore `name` (vkGetSemaphoreCounterValue).
    pub fn counter(&self, name: &str) -> Result<u64, String> {
        let s = *self.semaphores.get(name).ok_or_else(|| format!("no Vulkan semaphore `{name}`"))?;
        // SAFETY: a live timeline semaphore of this device.
        unsafe { self.device.get_semaphore_counter_value(s) }.map_err(|e| format!("vkGetSemaphoreCounterValue: {e}"))
    }
}

impl Session {
    /// Releases the case's objects and keeps the instance and device for the next case of the process.
    pub fn put_back(mut self) {
        self.release_objects();
        IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(self);
    }

    /// Destroys the memories and semaphores made on the device.
    fn release_objects(&mut self) {
        // SAFETY: no Vulkan work was submitted, so nothing is in use by Vulkan; CUDA's imports hold references of
        // their own to the exported payloads.
        unsafe {
            for (_, s) in std::mem::take(&mut self.semaphores) {
                self.device.destroy_semaphore(s, None);
            }
            for (_, m) in std::mem::take(&mut self.memories) {
                self.device.unmap_memory(m.memory);
                self.device.free_memory(m.memory, None);
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release_objects();
        // SAFETY: the objects are gone (above); the device goes before the instance.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_read_as_its_bytes() {
        let b = uuid_bytes("GPU-40baef19-0011-2233-4455-66778899aabb").unwrap();
        assert_eq!(b[0], 0x40);
        assert_eq!(b[15], 0xbb);
        assert!(uuid_bytes("GPU-40baef19").is_err());
        assert!(uuid_bytes("GPU-zzbaef19-0011-2233-4455-66778899aabb").is_err());
    }

    #[test]
    fn no_session_is_a_reason_never_a_panic() {
        // On a host without a Vulkan loader or driver (CI) this is a reason; on a host with one, the made-up UUID
        // names no device. Either way a reason, never a panic.
        let why = unavailable("GPU-00000000-0000-0000-0000-000000000000").expect("a made-up UUID has no device");
        assert!(!why.is_empty());
    }
}
