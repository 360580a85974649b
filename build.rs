//! Compiles the probe kernels (`kernels/probes.cu`) with NVRTC 12.0 into one fat binary and builds
//! `kernels/register.c`, which registers it with cudart the way nvcc's host stubs do.
//!
//! - **One kernel path for every build, NVRTC 12.0.** Every driver from R525 (CUDA 12.0) on must load the kernels
//!   of the fleet bundle, and nvcc 13 cannot write them: its PTX is ISA 9.0 (a CUDA 13 driver's) and its cubins
//!   are ELF ABI 8, with no option to go lower; PyPI has no nvcc 12. NVRTC 12.0 writes PTX ISA 8.0 and ABI-7
//!   cubins, and is on PyPI. The CUDA 13.0 build uses the same image: measured on the H100 it gives the verdicts
//!   nvcc 13's did, and with one image a difference between bundles can only come from the runtime or driver, never
//!   from the kernel compiler. `src/kernel_image.rs` tests the embedded image, so a compiler bump that would lock
//!   out old drivers fails the tests.
//! - The compiler is `.toolkit/kernel-compiler` (`scripts/setup.sh` installs the pinned wheels there), or the
//!   folder named by `CUDA_CONFORMANCE_KERNEL_COMPILER` (the same layout: `nvidia/cuda_nvrtc/lib/libnvrtc.so.12`
//!   and `nvidia/nvfatbin/lib/libnvfatbin.so.12`). Both libraries are loaded with dlopen, so nothing links them.
//! - Targets: `CUDA_CONFORMANCE_ARCHS` (e.g. `80,90`), default `90`: a cubin for each, plus PTX of the lowest (any
//!   GPU at or above it can JIT-compile that PTX, a newer GPU included). nvFatbin packs them uncompressed, so a
//!   driver needs nothing but the ELF and PTX it has always read, and the test can read the image.
//! - Device code is always optimised (NVRTC's default). No `-lineinfo`: with it, NVRTC 12.0 crashes compiling this
//!   file for sm_90 (its built-in ptxas recurses until the stack runs out; measured, sm_80 and PTX are fine).
//! - cudart is linked once, by cuda-sys; `register.c` only calls its registration entry points.

use libloading::{Library, Symbol};
use std::env;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::ptr;

const KERNELS: &str = "kernels/probes.cu";
/// Kernels that call cudaGraphSetConditional: PTX only (see the file's header).
const CONDITIONAL_KERNELS: &str = "kernels/conditional.cu";
/// Kernels that launch graphs from the device: cubins and PTX like the probes, in a module of their own.
const DEVICE_LAUNCH_KERNELS: &str = "kernels/device_launch.cu";
/// Kernels in images the device has no SASS for (issue 30): an sm_80 cubin only, and compute_80 PTX only.
const OTHER_IMAGE_KERNELS: &str = "kernels/other_images.cu";
/// The architecture of both other images: below every GPU the suite runs on (sm_90), and one NVRTC 12.0 targets.
const OTHER_ARCH: &str = "80";
/// PTX the driver refuses: an instruction PTX does not have, and an ISA version no driver knows. Packed as they are.
const BAD_PTX: &str = "kernels/bad.ptx";
const FUTURE_PTX: &str = "kernels/future.ptx";
const REGISTER: &str = "kernels/register.c";
const ARCHS_VAR: &str = "CUDA_CONFORMANCE_ARCHS";
const DEFAULT_ARCHS: &str = "90";
const COMPILER_VAR: &str = "CUDA_CONFORMANCE_KERNEL_COMPILER";
const NVRTC_LIB: &str = "nvidia/cuda_nvrtc/lib/libnvrtc.so.12";
const NVFATBIN_LIB: &str = "nvidia/nvfatbin/lib/libnvfatbin.so.12";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={KERNELS}");
    println!("cargo:rerun-if-changed={CONDITIONAL_KERNELS}");
    println!("cargo:rerun-if-changed={DEVICE_LAUNCH_KERNELS}");
    println!("cargo:rerun-if-changed={OTHER_IMAGE_KERNELS}");
    println!("cargo:rerun-if-changed={BAD_PTX}");
    println!("cargo:rerun-if-changed={FUTURE_PTX}");
    println!("cargo:rerun-if-changed={REGISTER}");
    println!("cargo:rerun-if-env-changed={ARCHS_VAR}");
    println!("cargo:rerun-if-env-changed={COMPILER_VAR}");
    emit_commit();

    let compiler = compiler_dir();
    for lib in [NVRTC_LIB, NVFATBIN_LIB] {
        println!("cargo:rerun-if-changed={}", compiler.join(lib).display());
    }
    let nvrtc = Nvrtc::load(&compiler.join(NVRTC_LIB));
    let archs = archs();
    let ptx_arch = ptx_arch(&archs);
    let read = |file: &str| std::fs::read_to_string(file).unwrap_or_else(|e| fail(&format!("cannot read {file}: {e}")));
    // A cubin for each target and the PTX of the lowest, packed uncompressed.
    let cubins_and_ptx = |source: &str| {
        let mut fatbin = Fatbin::new(&compiler.join(NVFATBIN_LIB));
        for arch in &archs {
            fatbin.add_cubin(&nvrtc.compile(source, &format!("sm_{arch}"), Output::Cubin), arch);
        }
        fatbin.add_ptx(&nvrtc.compile(source, &format!("compute_{ptx_arch}"), Output::Ptx), ptx_arch);
        let version = fatbin.version.clone();
        (fatbin.finish(), version)
    };

    let (image, fatbin_version) = cubins_and_ptx(&read(KERNELS));

    let mut conditional = Fatbin::new(&compiler.join(NVFATBIN_LIB));
    conditional
        .add_ptx(&nvrtc.compile(&read(CONDITIONAL_KERNELS), &format!("compute_{ptx_arch}"), Output::Ptx), ptx_arch);
    let conditional_image = conditional.finish();

    let (device_launch_image, _) = cubins_and_ptx(&read(DEVICE_LAUNCH_KERNELS));

    // The other images: an sm_80 cubin without PTX (no other GPU can use it), and compute_80 PTX without a cubin
    // (every GPU from sm_80 on JIT-compiles it). Each source holds only its own kernel and variable.
    let other = read(OTHER_IMAGE_KERNELS);
    let mut sm80 = Fatbin::new(&compiler.join(NVFATBIN_LIB));
    let sm80_source = format!("#define CC_SM80_ONLY\n{other}");
    sm80.add_cubin(&nvrtc.compile(&sm80_source, &format!("sm_{OTHER_ARCH}"), Output::Cubin), OTHER_ARCH);
    let sm80_image = sm80.finish();
    let mut ptx_only = Fatbin::new(&compiler.join(NVFATBIN_LIB));
    let ptx_source = format!("#define CC_PTX_ONLY\n{other}");
    ptx_only.add_ptx(&nvrtc.compile(&ptx_source, &format!("compute_{OTHER_ARCH}"), Output::Ptx), OTHER_ARCH);
    let ptx_only_image = ptx_only.finish();
    // PTX no compiler wrote, packed without compiling it: the driver meets it at the first launch of its kernel.
    let packed_ptx = |file: &str| {
        let mut fatbin = Fatbin::new(&compiler.join(NVFATBIN_LIB));
        fatbin.add_ptx(read(file).as_bytes(), OTHER_ARCH);
        fatbin.finish()
    };
    let bad_ptx_image = packed_ptx(BAD_PTX);
    let future_ptx_image = packed_ptx(FUTURE_PTX);

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    write_image_header(&image, "cc_probes_image", &out.join("probes_image.h"));
    write_image_header(&conditional_image, "cc_conditional_image", &out.join("conditional_image.h"));
    write_image_header(&device_launch_image, "cc_device_launch_image", &out.join("device_launch_image.h"));
    write_image_header(&sm80_image, "cc_sm80_only_image", &out.join("sm80_only_image.h"));
    write_image_header(&ptx_only_image, "cc_ptx_only_image", &out.join("ptx_only_image.h"));
    write_image_header(&bad_ptx_image, "cc_bad_ptx_image", &out.join("bad_ptx_image.h"));
    write_image_header(&future_ptx_image, "cc_future_ptx_image", &out.join("future_ptx_image.h"));
    cc::Build::new().file(REGISTER).include(&out).opt_level(2).warnings(true).compile("probes");

    // What the kernels were built for and by, for reports and for the message when a GPU has no matching image.
    let targets: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
    println!("cargo:rustc-env=CUDA_CONFORMANCE_KERNEL_TARGETS={} + compute_{ptx_arch} PTX", targets.join(" "));
    println!(
        "cargo:rustc-env=CUDA_CONFORMANCE_KERNEL_COMPILER=NVRTC {} (nvFatbin {}, uncompressed)",
        nvrtc.version, fatbin_version
    );
}

fn compiler_dir() -> PathBuf {
    if let Some(dir) = env::var_os(COMPILER_VAR).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    manifest.join(".toolkit/kernel-compiler")
}

fn load(path: &Path) -> Library {
    if !path.is_file() {
        fail(&format!(
            "no {} : the kernel compiler (NVRTC 12.0, nvFatbin) is missing. Run scripts/setup.sh, or set \
             {COMPILER_VAR} to a folder holding {NVRTC_LIB} and {NVFATBIN_LIB}",
            path.display()
        ));
    }
    // SAFETY: loading a library runs its initialisers; these are NVIDIA's compiler libraries, which have no
    // initialisers with preconditions.
    unsafe { Library::new(path) }.unwrap_or_else(|e| fail(&format!("cannot load {}: {e}", path.display())))
}

fn symbol<'l, T>(lib: &'l Library, name: &str) -> Symbol<'l, T> {
    // SAFETY: each call site names the function's C prototype from nvrtc.h / nvFatbin.h as T.
    unsafe { lib.get(name.as_bytes()) }.unwrap_or_else(|e| fail(&format!("no {name} in the kernel compiler: {e}")))
}

type Program = *mut c_void;
type NvrtcResult = c_int;

#[derive(Clone, Copy, PartialEq)]
enum Output {
    Cubin,
    Ptx,
}

struct Nvrtc {
    lib: Library,
    version: String,
}

impl Nvrtc {
    fn load(path: &Path) -> Self {
        let lib = load(path);
        let (mut major, mut minor) = (0, 0);
        let version: Symbol<unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult> = symbol(&lib, "nvrtcVersion");
        // SAFETY: two valid out-pointers.
        let code = unsafe { version(&mut major, &mut minor) };
        let nvrtc = Nvrtc { lib, version: String::new() };
        nvrtc.check(code, "nvrtcVersion", ptr::null_mut());
        Nvrtc { version: format!("{major}.{minor}"), ..nvrtc }
    }

    fn error(&self, code: NvrtcResult) -> String {
        let text: Symbol<unsafe extern "C" fn(NvrtcResult) -> *const c_char> = symbol(&self.lib, "nvrtcGetErrorString");
        // SAFETY: returns a static string for any code.
        unsafe { CStr::from_ptr(text(code)) }.to_string_lossy().into_owned()
    }

    fn check(&self, code: NvrtcResult, what: &str, program: Program) {
        if code != 0 {
            let log = if program.is_null() { String::new() } else { self.log(program) };
            fail(&format!("{what} failed: {}\n{log}", self.error(code)));
        }
    }

    fn log(&self, program: Program) -> String {
        let size: Symbol<unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult> =
            symbol(&self.lib, "nvrtcGetProgramLogSize");
        let get: Symbol<unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult> =
            symbol(&self.lib, "nvrtcGetProgramLog");
        let mut n = 0usize;
        // SAFETY: program is live; the buffer has the size NVRTC reported.
        unsafe {
            if size(program, &mut n) != 0 || n == 0 {
                return String::new();
            }
            let mut buf = vec![0u8; n];
            if get(program, buf.as_mut_ptr().cast()) != 0 {
                return String::new();
            }
            String::from_utf8_lossy(&buf).trim_end_matches('\0').to_owned()
        }
    }

    /// Compiles `source` for `arch` (`sm_90` for a cubin, `compute_90` for PTX) and returns the output.
    fn compile(&self, source: &str, arch: &str, output: Output) -> Vec<u8> {
        type Create = unsafe extern "C" fn(
            *mut Program,
            *const c_char,
            *const c_char,
            c_int,
            *const *const c_char,
            *const *const c_char,
        ) -> NvrtcResult;
        let create: Symbol<Create> = symbol(&self.lib, "nvrtcCreateProgram");
        let compile: Symbol<unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult> =
            symbol(&self.lib, "nvrtcCompileProgram");
        let (size_name, get_name) = match output {
            Output::Cubin => ("nvrtcGetCUBINSize", "nvrtcGetCUBIN"),
            Output::Ptx => ("nvrtcGetPTXSize", "nvrtcGetPTX"),
        };
        let size: Symbol<unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult> = symbol(&self.lib, size_name);
        let get: Symbol<unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult> = symbol(&self.lib, get_name);
        let destroy: Symbol<unsafe extern "C" fn(*mut Program) -> NvrtcResult> =
            symbol(&self.lib, "nvrtcDestroyProgram");

        let src = CString::new(source).unwrap_or_else(|_| fail(&format!("{KERNELS} contains a NUL byte")));
        let name = CString::new("probes.cu").expect("no NUL");
        let option = CString::new(format!("--gpu-architecture={arch}")).expect("no NUL");
        let option_ptrs = [option.as_ptr()];
        let mut program: Program = ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the program is destroyed below.
        unsafe {
            self.check(
                create(&mut program, src.as_ptr(), name.as_ptr(), 0, ptr::null(), ptr::null()),
                "nvrtcCreateProgram",
                ptr::null_mut(),
            );
            let code = compile(program, option_ptrs.len() as c_int, option_ptrs.as_ptr());
            self.check(code, &format!("compiling {KERNELS} for {arch}"), program);
            let mut n = 0usize;
            self.check(size(program, &mut n), size_name, program);
            let mut buf = vec![0u8; n];
            self.check(get(program, buf.as_mut_ptr().cast()), get_name, program);
            let _ = destroy(&mut program);
            if output == Output::Ptx {
                // The PTX size counts its terminating NUL; nvFatbin takes the text without it.
                while buf.last() == Some(&0) {
                    buf.pop();
                }
            }
            buf
        }
    }
}

type FatbinHandle = *mut c_void;

struct Fatbin {
    lib: Library,
    handle: FatbinHandle,
    version: String,
}

impl Fatbin {
    fn new(path: &Path) -> Self {
        let lib = load(path);
        let (mut major, mut minor) = (0u32, 0u32);
        let version: Symbol<unsafe extern "C" fn(*mut u32, *mut u32) -> c_int> = symbol(&lib, "nvFatbinVersion");
        let create: Symbol<unsafe extern "C" fn(*mut FatbinHandle, *const *const c_char, usize) -> c_int> =
            symbol(&lib, "nvFatbinCreate");
        // 64-bit host code; no compression, so that any driver reads the plain ELF and PTX.
        let options = [c"-64".as_ptr(), c"-compress=false".as_ptr()];
        let mut handle: FatbinHandle = ptr::null_mut();
        // SAFETY: valid out-pointers and an array of `options.len()` C strings.
        let (v, c) = unsafe { (version(&mut major, &mut minor), create(&mut handle, options.as_ptr(), options.len())) };
        let fatbin = Fatbin { lib, handle, version: format!("{major}.{minor}") };
        fatbin.check(v, "nvFatbinVersion");
        fatbin.check(c, "nvFatbinCreate");
        fatbin
    }

    fn check(&self, code: c_int, what: &str) {
        if code != 0 {
            let text: Symbol<unsafe extern "C" fn(c_int) -> *const c_char> =
                symbol(&self.lib, "nvFatbinGetErrorString");
            // SAFETY: returns a static string for any code.
            let why = unsafe { CStr::from_ptr(text(code)) }.to_string_lossy().into_owned();
            fail(&format!("{what} failed: {why}"));
        }
    }

    fn add_cubin(&mut self, cubin: &[u8], arch: &str) {
        type Add = unsafe extern "C" fn(FatbinHandle, *const c_void, usize, *const c_char, *const c_char) -> c_int;
        let add: Symbol<Add> = symbol(&self.lib, "nvFatbinAddCubin");
        let arch_c = CString::new(arch).expect("no NUL");
        // SAFETY: the handle is live and the buffers valid for the call (nvFatbin copies them).
        let code = unsafe { add(self.handle, cubin.as_ptr().cast(), cubin.len(), arch_c.as_ptr(), c"probes".as_ptr()) };
        self.check(code, &format!("nvFatbinAddCubin(sm_{arch})"));
    }

    fn add_ptx(&mut self, ptx: &[u8], arch: &str) {
        type Add = unsafe extern "C" fn(
            FatbinHandle,
            *const c_char,
            usize,
            *const c_char,
            *const c_char,
            *const c_char,
        ) -> c_int;
        let add: Symbol<Add> = symbol(&self.lib, "nvFatbinAddPTX");
        let arch_c = CString::new(arch).expect("no NUL");
        // SAFETY: as for add_cubin; no JIT options.
        let code = unsafe {
            add(self.handle, ptx.as_ptr().cast(), ptx.len(), arch_c.as_ptr(), c"probes".as_ptr(), c"".as_ptr())
        };
        self.check(code, &format!("nvFatbinAddPTX(compute_{arch})"));
    }

    fn finish(self) -> Vec<u8> {
        let size: Symbol<unsafe extern "C" fn(FatbinHandle, *mut usize) -> c_int> = symbol(&self.lib, "nvFatbinSize");
        let get: Symbol<unsafe extern "C" fn(FatbinHandle, *mut c_void) -> c_int> = symbol(&self.lib, "nvFatbinGet");
        let destroy: Symbol<unsafe extern "C" fn(*mut FatbinHandle) -> c_int> = symbol(&self.lib, "nvFatbinDestroy");
        let mut n = 0usize;
        let mut handle = self.handle;
        // SAFETY: the handle is live; the buffer has the size nvFatbin reported.
        unsafe {
            self.check(size(handle, &mut n), "nvFatbinSize");
            let mut buf = vec![0u8; n];
            self.check(get(handle, buf.as_mut_ptr().cast()), "nvFatbinGet");
            let _ = destroy(&mut handle);
            buf
        }
    }
}

/// A C header with the image `name` as 64-bit words (a fat binary must be 8-byte aligned) and its length in bytes
/// (`NAME_BYTES`, upper case).
fn write_image_header(image: &[u8], name: &str, path: &Path) {
    let mut text = String::from("// Generated by build.rs from kernels/: do not edit.\n");
    let _ = writeln!(text, "#define {}_BYTES {}", name.to_uppercase(), image.len());
    let _ = writeln!(text, "static const unsigned long long {name}[] __attribute__((aligned(8))) = {{");
    for (i, chunk) in image.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        let _ = write!(text, "0x{:016x}ull,", u64::from_le_bytes(word));
        text.push(if i % 6 == 5 { '\n' } else { ' ' });
    }
    text.push_str("\n};\n");
    std::fs::write(path, text).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", path.display())));
}

/// The architectures to build for, sorted by number: `90`, `80`, `90a`.
fn archs() -> Vec<String> {
    let spec = env::var(ARCHS_VAR).unwrap_or_else(|_| DEFAULT_ARCHS.to_owned());
    let mut archs: Vec<String> = spec
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| a.trim_start_matches("sm_").to_owned())
        .collect();
    let valid = |a: &str| {
        let digits = a.trim_end_matches(|c: char| c.is_ascii_lowercase());
        !digits.is_empty() && digits.len() >= a.len() - 1 && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if archs.is_empty() || !archs.iter().all(|a| valid(a)) {
        fail(&format!(
            "{ARCHS_VAR}={spec:?}: expected compute capabilities without the dot, separated by commas, \
             e.g. `80,90` or `90a`"
        ));
    }
    archs.sort_by_key(|a| number(a));
    archs.dedup();
    archs
}

/// The lowest architecture without a suffix (`90a` PTX runs only on that one GPU family, never a newer one).
fn ptx_arch(archs: &[String]) -> &str {
    archs.iter().find(|a| a.bytes().all(|b| b.is_ascii_digit())).unwrap_or(&archs[0])
}

fn number(arch: &str) -> u32 {
    arch.trim_end_matches(|c: char| c.is_ascii_lowercase()).parse().unwrap_or(0)
}

fn fail(msg: &str) -> ! {
    panic!("\n\ncuda-conformance build: {msg}\n");
}

/// The commit reports name as the build's (`git describe --always --dirty`). Rerun when HEAD or the index moves,
/// so the stamp follows commits without rebuilding on every edit.
fn emit_commit() {
    // Ask git where they are: in a worktree `.git` is a file and HEAD and the index live in the main repository's
    // `.git/worktrees/NAME/`, so `.git/HEAD` does not exist and the stamp would never move.
    for name in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", name]).filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = git(&["describe", "--always", "--dirty", "--abbrev=40"]).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=CUDA_CONFORMANCE_COMMIT={commit}");
}

/// The trimmed output of `git ARGS`, if it succeeded and said something.
fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}
