//! The probe kernels' fat binary as registered with cudart (built by `build.rs`, registered by
//! `kernels/register.c`), read back: what it holds decides which drivers can load it, so reports record it and the
//! tests hold it to what the oldest supported driver (R525, CUDA 12.0) reads.
//!
//! A fat binary is a 16-byte header (magic `0xBA55ED50`, version, header size, size of the entries) followed by
//! entries, each a header (kind 1 = PTX, 2 = ELF cubin; its own size; the payload size; the architecture at byte
//! 28; flags at byte 40, where `0x2000` marks a compressed payload) and the payload. The layout is NVIDIA's and
//! undocumented; it is read here only as far as the checks need, and anything unexpected is an error, not a guess.

use std::fmt::Write as _;

/// The oldest PTX ISA the supported drivers JIT-compile: 8.0 is CUDA 12.0's (R525).
pub const MAX_PTX_ISA: (u32, u32) = (8, 0);
/// ELF OS/ABI byte of cubins from every CUDA 12.x toolchain; CUDA 13's ptxas writes 0x41, which 12.x drivers
/// cannot be expected to read.
pub const CUBIN_OS_ABI: u8 = 0x33;
/// ELF ABI version of 12.x cubins (13.x writes 8, with the SM number moved within `e_flags`).
pub const CUBIN_ABI_VERSION: u8 = 7;
const EM_CUDA: u16 = 190;

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const COMPRESSED: u64 = 0x2000;

/// The image registered with cudart, byte for byte.
pub fn embedded() -> &'static [u8] {
    extern "C" {
        fn cc_probes_image_bytes(len: *mut usize) -> *const u8;
    }
    registered(cc_probes_image_bytes)
}

/// The image of the kernels that launch graphs from the device (`kernels/device_launch.cu`, a module of its own),
/// byte for byte.
pub fn embedded_device_launch() -> &'static [u8] {
    extern "C" {
        fn cc_device_launch_image_bytes(len: *mut usize) -> *const u8;
    }
    registered(cc_device_launch_image_bytes)
}

/// The images of `kernels/other_images.cu` (an sm_80 cubin only; compute_80 PTX only) and of `kernels/bad.ptx` and
/// `kernels/future.ptx`, byte for byte: the
/// reproducers embed and register the same bytes.
pub fn embedded_other_images() -> harness::device::kernels::OtherImages {
    extern "C" {
        fn cc_sm80_only_image_bytes(len: *mut usize) -> *const u8;
        fn cc_ptx_only_image_bytes(len: *mut usize) -> *const u8;
        fn cc_bad_ptx_image_bytes(len: *mut usize) -> *const u8;
        fn cc_future_ptx_image_bytes(len: *mut usize) -> *const u8;
    }
    harness::device::kernels::OtherImages {
        sm80_only: registered(cc_sm80_only_image_bytes),
        ptx_only: registered(cc_ptx_only_image_bytes),
        bad_ptx: registered(cc_bad_ptx_image_bytes),
        future_ptx: registered(cc_future_ptx_image_bytes),
    }
}

/// The bytes one of `kernels/register.c`'s image accessors returns.
fn registered(image_bytes: unsafe extern "C" fn(*mut usize) -> *const u8) -> &'static [u8] {
    let mut len = 0usize;
    // SAFETY: the accessor returns the address and length of a static array (kernels/register.c); no CUDA call.
    unsafe {
        let data = image_bytes(&mut len);
        std::slice::from_raw_parts(data, len)
    }
}

/// One entry of a fat binary.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry<'a> {
    Ptx { arch: u32, text: &'a [u8] },
    Cubin { arch: u32, elf: &'a [u8] },
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The entries of fat binary `image`, or why it cannot be read (truncated, compressed, an unknown kind).
pub fn entries(image: &[u8]) -> Result<Vec<Entry<'_>>, String> {
    let truncated = |what: &str| format!("the fat binary is truncated ({what})");
    if u32_at(image, 0) != Some(FATBIN_MAGIC) {
        return Err("not a fat binary (no 0xBA55ED50 magic)".into());
    }
    let header = usize::from(u16_at(image, 6).ok_or_else(|| truncated("header"))?);
    let size = usize::try_from(u64_at(image, 8).ok_or_else(|| truncated("header"))?).map_err(|e| e.to_string())?;
    let end = header.checked_add(size).filter(|&e| e <= image.len()).ok_or_else(|| truncated("entries"))?;
    let mut entries = Vec::new();
    let mut at = header;
    while at < end {
        let kind = u16_at(image, at).ok_or_else(|| truncated("entry"))?;
        let entry_header = u32_at(image, at + 4).ok_or_else(|| truncated("entry"))? as usize;
        let payload =
            usize::try_from(u64_at(image, at + 8).ok_or_else(|| truncated("entry"))?).map_err(|e| e.to_string())?;
        let arch = u32_at(image, at + 28).ok_or_else(|| truncated("entry"))?;
        let flags = u64_at(image, at + 40).ok_or_else(|| truncated("entry"))?;
        let start = at.checked_add(entry_header).ok_or_else(|| truncated("entry"))?;
        let stop = start.checked_add(payload).filter(|&s| s <= end).ok_or_else(|| truncated("payload"))?;
        if entry_header < 48 {
            return Err(format!("entry at byte {at}: a header of {entry_header} bytes is too short"));
        }
        if flags & COMPRESSED != 0 {
            return Err(format!("entry at byte {at} is compressed: the build asks nvFatbin for plain entries"));
        }
        let bytes = &image[start..stop];
        entries.push(match kind {
            1 => Entry::Ptx { arch, text: bytes },
            2 => Entry::Cubin { arch, elf: bytes },
            other => return Err(format!("entry at byte {at} has kind {other}, neither PTX (1) nor ELF (2)")),
        });
        at = stop;
    }
    Ok(entries)
}

/// What a cubin's ELF header says about who can load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubinHeader {
    pub os_abi: u8,
    pub abi_version: u8,
    /// The SM number of an ABI-7 cubin (`e_flags & 0xff`); other ABIs encode it elsewhere.
    pub sm: Option<u32>,
}

/// The ELF header of a cubin, or why it is not a 64-bit little-endian CUDA ELF.
pub fn cubin_header(elf: &[u8]) -> Result<CubinHeader, String> {
    if elf.get(..4) != Some(b"\x7fELF") {
        return Err("the cubin does not start with the ELF magic".into());
    }
    if elf.get(4..6) != Some(&[2, 1]) {
        return Err("the cubin is not a 64-bit little-endian ELF".into());
    }
    if u16_at(elf, 18) != Some(EM_CUDA) {
        return Err(format!("the cubin's e_machine is {:?}, not EM_CUDA (190)", u16_at(elf, 18)));
    }
    let (os_abi, abi_version) = (elf[7], elf[8]);
    let flags = u32_at(elf, 48).ok_or("the cubin's ELF header is truncated")?;
    let sm = (abi_version == CUBIN_ABI_VERSION).then_some(flags & 0xff);
    Ok(CubinHeader { os_abi, abi_version, sm })
}

/// The `.version` of a PTX text, e.g. `(8, 0)`.
pub fn ptx_version(text: &[u8]) -> Result<(u32, u32), String> {
    let text = String::from_utf8_lossy(text);
    let line = text.lines().map(str::trim).find_map(|l| l.strip_prefix(".version")).ok_or("the PTX has no .version")?;
    let (major, minor) = line.trim().split_once('.').ok_or("the PTX .version is not MAJOR.MINOR")?;
    let parse = |s: &str| s.trim().parse::<u32>().map_err(|_| format!("the PTX .version {line:?} is not numeric"));
    Ok((parse(major)?, parse(minor)?))
}

/// Every reason the oldest supported driver (R525, CUDA 12.0) could refuse `image`; empty when it can load it.
pub fn old_driver_problems(image: &[u8]) -> Vec<String> {
    let entries = match entries(image) {
        Ok(e) => e,
        Err(why) => return vec![why],
    };
    let mut problems = Vec::new();
    if !entries.iter().any(|e| matches!(e, Entry::Cubin { .. })) {
        problems.push("no cubin: every GPU would have to JIT-compile the PTX".to_owned());
    }
    for entry in &entries {
        match *entry {
            Entry::Cubin { arch, elf } => match cubin_header(elf) {
                Ok(h) if h.os_abi != CUBIN_OS_ABI || h.abi_version != CUBIN_ABI_VERSION => problems.push(format!(
                    "the sm_{arch} cubin is ELF OS/ABI {:#x}, ABI version {} (12.x drivers read {CUBIN_OS_ABI:#x}, {})",
                    h.os_abi, h.abi_version, CUBIN_ABI_VERSION
                )),
                Ok(h) if h.sm != Some(arch) => {
                    problems.push(format!("the cubin filed as sm_{arch} says sm_{:?} in its ELF flags", h.sm))
                }
                Ok(_) => {}
                Err(why) => problems.push(format!("sm_{arch}: {why}")),
            },
            Entry::Ptx { arch, text } => match ptx_version(text) {
                Ok(v) if v > MAX_PTX_ISA => problems.push(format!(
                    "the compute_{arch} PTX is ISA {}.{}, newer than {}.{} (CUDA 12.0 drivers)",
                    v.0, v.1, MAX_PTX_ISA.0, MAX_PTX_ISA.1
                )),
                Ok(_) => {}
                Err(why) => problems.push(format!("compute_{arch}: {why}")),
            },
        }
    }
    problems
}

/// The image as a report records it: compiler, PTX ISA, architectures.
pub fn describe(image: &[u8], compiler: &str) -> harness::record::KernelImage {
    let mut ptx_isa = Vec::new();
    let mut architectures = String::new();
    match entries(image) {
        Ok(entries) => {
            for entry in entries {
                if !architectures.is_empty() {
                    architectures.push_str(" + ");
                }
                match entry {
                    Entry::Cubin { arch, elf } => {
                        let abi = cubin_header(elf).map_or("not an ELF".to_owned(), |h| {
                            format!("ELF OS/ABI {:#x}, ABI {}", h.os_abi, h.abi_version)
                        });
                        let _ = write!(architectures, "sm_{arch} ({abi})");
                    }
                    Entry::Ptx { arch, text } => {
                        let _ = write!(architectures, "compute_{arch} PTX");
                        if let Ok((major, minor)) = ptx_version(text) {
                            ptx_isa.push(format!("{major}.{minor}"));
                        }
                    }
                }
            }
        }
        Err(why) => architectures = format!("unreadable: {why}"),
    }
    ptx_isa.dedup();
    harness::record::KernelImage {
        compiler: compiler.to_owned(),
        ptx_isa: if ptx_isa.is_empty() { "none".into() } else { ptx_isa.join(", ") },
        architectures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fat binary of `entries` (kind, arch, flags, payload), laid out as nvFatbin writes one.
    fn fatbin(entries: &[(u16, u32, u64, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, arch, flags, payload) in entries {
            let mut header = vec![0u8; 72];
            header[0..2].copy_from_slice(&kind.to_le_bytes());
            header[4..8].copy_from_slice(&72u32.to_le_bytes());
            header[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            header[28..32].copy_from_slice(&arch.to_le_bytes());
            header[40..48].copy_from_slice(&flags.to_le_bytes());
            body.extend_from_slice(&header);
            body.extend_from_slice(payload);
        }
        let mut image = Vec::new();
        image.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        image.extend_from_slice(&1u16.to_le_bytes());
        image.extend_from_slice(&16u16.to_le_bytes());
        image.extend_from_slice(&(body.len() as u64).to_le_bytes());
        image.extend_from_slice(&body);
        image
    }

    fn elf(os_abi: u8, abi_version: u8, flags: u32) -> Vec<u8> {
        let mut e = vec![0u8; 64];
        e[..4].copy_from_slice(b"\x7fELF");
        e[4] = 2;
        e[5] = 1;
        e[7] = os_abi;
        e[8] = abi_version;
        e[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        e[48..52].copy_from_slice(&flags.to_le_bytes());
        e
    }

    /// The image this binary registers must load on every driver from R525 on: plain entries, ABI-7 cubins for
    /// the architectures the build was asked for, PTX no newer than ISA 8.0. This is what a toolchain bump (a
    /// newer NVRTC, nvcc 13 output, compression) would break first, long before anyone runs an old driver.
    #[test]
    fn the_embedded_image_loads_on_cuda_12_0_drivers() {
        let image = embedded();
        assert_eq!(old_driver_problems(image), Vec::<String>::new());
        let entries = entries(image).expect("readable");
        let cubins: Vec<String> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Cubin { arch, .. } => Some(format!("sm_{arch}")),
                Entry::Ptx { .. } => None,
            })
            .collect();
        let wanted = crate::KERNEL_TARGETS.split(" + ").next().unwrap_or_default();
        assert_eq!(cubins.join(" "), wanted, "a cubin for each CUDA_CONFORMANCE_ARCHS entry");
        let ptx = entries.iter().filter(|e| matches!(e, Entry::Ptx { .. })).count();
        assert_eq!(ptx, 1, "one PTX, for GPUs newer than every cubin");
        let described = describe(image, crate::KERNEL_COMPILER);
        assert_eq!(described.ptx_isa, "8.0");
        assert!(described.compiler.starts_with("NVRTC 12.0"), "{described:?}");
    }

    /// The device-launch kernels are built the same way, so an R525 driver is given what it reads there too.
    /// `symbol=cc_symbol` (the symbol calls' cases) needs the variable in every entry the driver may load: the PTX
    /// declares it and each cubin names it (a compiler may drop a variable no kernel touches).
    #[test]
    fn the_probes_device_variable_is_in_every_entry() {
        let has = |bytes: &[u8], needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        for entry in entries(embedded()).expect("readable") {
            match entry {
                Entry::Ptx { arch, text } => {
                    assert!(has(text, b".global .align 4 .b8 cc_symbol[4096];"), "compute_{arch} PTX lacks it")
                }
                Entry::Cubin { arch, elf } => assert!(has(elf, b"cc_symbol"), "the sm_{arch} cubin lacks it"),
            }
        }
    }

    #[test]
    fn the_device_launch_image_loads_on_cuda_12_0_drivers() {
        let image = embedded_device_launch();
        assert_eq!(old_driver_problems(image), Vec::<String>::new());
        assert_eq!(describe(image, crate::KERNEL_COMPILER).ptx_isa, "8.0");
    }

    #[test]
    fn cuda_13_cubins_and_ptx_are_refused() {
        let ptx80: &[u8] = b"//\n.version 8.0\n.target sm_90\n";
        let good = fatbin(&[(2, 90, 0x11, &elf(0x33, 7, 0x5a055a)), (1, 90, 0x11, ptx80)]);
        assert_eq!(old_driver_problems(&good), Vec::<String>::new());
        let abi8 = fatbin(&[(2, 90, 0x11, &elf(0x41, 8, 0x0a005a04)), (1, 90, 0x11, ptx80)]);
        assert!(
            old_driver_problems(&abi8)[0].contains("OS/ABI 0x41, ABI version 8"),
            "{:?}",
            old_driver_problems(&abi8)
        );
        let ptx90 = fatbin(&[(2, 90, 0x11, &elf(0x33, 7, 0x5a055a)), (1, 90, 0x11, b".version 9.0\n")]);
        assert!(old_driver_problems(&ptx90)[0].contains("ISA 9.0"), "{:?}", old_driver_problems(&ptx90));
        let wrong_sm = fatbin(&[(2, 80, 0x11, &elf(0x33, 7, 0x5a055a))]);
        assert!(old_driver_problems(&wrong_sm)[0].contains("filed as sm_80"));
        let compressed = fatbin(&[(2, 90, 0x11 | COMPRESSED, &elf(0x33, 7, 0x5a055a))]);
        assert!(old_driver_problems(&compressed)[0].contains("compressed"));
        let ptx_only = fatbin(&[(1, 90, 0x11, ptx80)]);
        assert!(old_driver_problems(&ptx_only)[0].contains("no cubin"));
    }

    #[test]
    fn malformed_images_are_errors_not_panics() {
        let good = fatbin(&[(2, 90, 0x11, &elf(0x33, 7, 0x5a055a))]);
        for cut in 0..good.len() {
            let _ = old_driver_problems(&good[..cut]);
            let _ = describe(&good[..cut], "x");
        }
        assert!(entries(&good[..good.len() - 1]).unwrap_err().contains("truncated"));
        assert!(entries(b"not a fatbin").unwrap_err().contains("magic"));
        let mut bad_kind = good.clone();
        bad_kind[16] = 7;
        assert!(entries(&bad_kind).unwrap_err().contains("kind 7"));
        assert!(cubin_header(b"\x7fELF").is_err());
        assert_eq!(ptx_version(b".version 8.0"), Ok((8, 0)));
        assert!(ptx_version(b".target sm_90").is_err());
        assert!(ptx_version(b".version eight").is_err());
    }
}
