//! The root package's library: the probe kernels compiled by `build.rs`, as the [`harness::device::kernels::KernelTable`] the
//! harness launches them through. The harness never learns how kernels were built; this is the only link.

use std::ffi::c_void;

pub mod kernel_image;

// Functions from kernels/register.c returning the host handles the kernels are registered under with cudart (what
// cudaLaunchKernel takes). They make no CUDA calls, so they are safe to call without a GPU.
extern "C" {
    fn cc_kernel_gate() -> *const c_void;
    fn cc_kernel_spin() -> *const c_void;
    fn cc_kernel_lazy_spin() -> *const c_void;
    fn cc_kernel_fault() -> *const c_void;
    fn cc_kernel_fill() -> *const c_void;
    fn cc_kernel_transform() -> *const c_void;
    fn cc_kernel_compare() -> *const c_void;
    fn cc_kernel_spin_trigger() -> *const c_void;
    fn cc_kernel_vecadd() -> *const c_void;
    fn cc_kernel_sincos() -> *const c_void;
    fn cc_kernel_sleep() -> *const c_void;
    fn cc_kernel_bounded32() -> *const c_void;
    fn cc_kernel_many_registers() -> *const c_void;
    fn cc_kernel_sm80_only() -> *const c_void;
    fn cc_kernel_ptx_only() -> *const c_void;
    fn cc_kernel_bad_ptx() -> *const c_void;
    fn cc_kernel_future_ptx() -> *const c_void;
    fn cc_kernel_set_condition() -> *const c_void;
    fn cc_kernel_countdown() -> *const c_void;
    fn cc_kernel_device_launch() -> *const c_void;
    fn cc_kernel_relaunch_self() -> *const c_void;
    fn cc_kernel_current_graph() -> *const c_void;
    fn cc_symbol_host() -> *const c_void;
    fn cc_sm80_symbol_host() -> *const c_void;
    fn cc_ptx_symbol_host() -> *const c_void;
}

/// The GPU code the kernels were compiled to, e.g. `sm_90 + compute_90 PTX` (set with `CUDA_CONFORMANCE_ARCHS`
/// at build time). A GPU matching none of them fails launches with `cudaErrorNoKernelImageForDevice`.
pub const KERNEL_TARGETS: &str = env!("CUDA_CONFORMANCE_KERNEL_TARGETS");

/// What compiled the kernels, e.g. `NVRTC 12.0 (nvFatbin 12.4, uncompressed)`.
pub const KERNEL_COMPILER: &str = env!("CUDA_CONFORMANCE_KERNEL_COMPILER");

/// The registered kernel image as reports record it (compiler, PTX ISA, architectures), read from the image itself.
pub fn kernel_image() -> harness::record::KernelImage {
    kernel_image::describe(kernel_image::embedded(), KERNEL_COMPILER)
}

/// Handles of the probe kernels, with the ABI documented in [`harness::device::kernels`].
pub fn kernel_table() -> harness::device::kernels::KernelTable {
    // SAFETY: the functions take nothing, touch no state and return static addresses.
    unsafe {
        harness::device::kernels::KernelTable {
            gate: cc_kernel_gate(),
            spin: cc_kernel_spin(),
            lazy_spin: cc_kernel_lazy_spin(),
            fault: cc_kernel_fault(),
            fill: cc_kernel_fill(),
            transform: cc_kernel_transform(),
            compare: cc_kernel_compare(),
            spin_trigger: cc_kernel_spin_trigger(),
            vecadd: cc_kernel_vecadd(),
            sincos: cc_kernel_sincos(),
            sleep: cc_kernel_sleep(),
            bounded32: cc_kernel_bounded32(),
            many_registers: cc_kernel_many_registers(),
            set_condition: cc_kernel_set_condition(),
            countdown: cc_kernel_countdown(),
            device_launch: cc_kernel_device_launch(),
            relaunch_self: cc_kernel_relaunch_self(),
            current_graph: cc_kernel_current_graph(),
            sm80_only: cc_kernel_sm80_only(),
            ptx_only: cc_kernel_ptx_only(),
            bad_ptx: cc_kernel_bad_ptx(),
            future_ptx: cc_kernel_future_ptx(),
            symbol: cc_symbol_host(),
            sm80_symbol: cc_sm80_symbol_host(),
            ptx_symbol: cc_ptx_symbol_host(),
            images: kernel_image::embedded_other_images(),
        }
    }
}

/// The commit this binary was built from (`git describe --always --dirty` at build time; `unknown` outside git).
pub const BUILD_COMMIT: &str = env!("CUDA_CONFORMANCE_COMMIT");

/// The `cases/` folder to run: `$CUDA_CONFORMANCE_CASES`, else `cases/` under `$CARGO_MANIFEST_DIR` (set by
/// `cargo test` and by the bundle's run-tests.sh), else `../cases` beside the executable (the bundle's layout:
/// `bundle/bin/cuda-conformance`, `bundle/cases/`), else the source tree this binary was built from.
pub fn cases_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Some(dir) = std::env::var_os("CUDA_CONFORMANCE_CASES") {
        return PathBuf::from(dir);
    }
    let candidates = [
        std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("cases")),
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.parent()?.join("cases"))),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"))
}

/// The folder of the seeds' programs (`scripts/build-seeds.sh` builds them): `$CUDA_CONFORMANCE_SEED_PROGRAMS`, else
/// `../seeds` beside the executable (the bundle's `bin/` and `seeds/`; for a build in the source tree,
/// `target/debug/..` is `target/`, where the script writes `target/seeds/`), else `target/seeds` of the source tree.
pub fn seed_programs_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Some(dir) = std::env::var_os("CUDA_CONFORMANCE_SEED_PROGRAMS") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("seeds")))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/seeds"))
}
