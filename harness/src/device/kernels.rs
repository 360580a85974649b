//! The probe kernels as the harness sees them: opaque handles (the `.cu` file exports one host function per
//! kernel that returns its address) launched through `cudaLaunchKernel`, so every launch exercises the FFI types
//! (`dim3`, the argument array).
//!
//! Kernel signatures (all `extern "C"`, see `kernels/probes.cu`); every `stamp` may be null, otherwise it receives
//! `[entry, exit]` `%globaltimer` nanoseconds, written by thread 0 of the kernel's single block:
//! - `cc_gate(const volatile u32* flag, u64 timeout_ns, u32* timed_out, u64* stamp)`: 1 thread; spins until
//!   `*flag != 0`; if `timeout_ns` passes first it sets `*timed_out = 1` and returns.
//! - `cc_spin(u64 ns, u64* stamp)`: any grid and block; every thread spins on `%globaltimer` for `ns`
//!   nanoseconds; the stamps are the first entry and the last exit of any block (atomics on the zeroed slot).
//! - `cc_lazy_spin(u64 ns, u64* stamp)`: the same, never loaded by the harness before a case's script.
//! - `cc_spin_trigger(u64 ns, u64* stamp)`: as `cc_spin`, after `griddepcontrol.launch_dependents` (9.0+).
//! - `cc_fault(u32 mode, u64* stamp)`: 1 thread; mode 0 stores to an invalid address, mode 1 executes `__trap()`.
//! - `cc_fill(u32* buf, u32 n, u32 value, u64* stamp)`: `buf[i] = value`.
//! - `cc_transform(u32* buf, u32 n, u32 mul, u32 add, u64* stamp)`: `buf[i] = buf[i] * mul + add` (wrapping).
//! - `cc_compare(const u32* a, const u32* b, u32 n, u32* mismatches, u64* stamp)`: `*mismatches = #{i: a[i] != b[i]}`.
//! - `cc_vecadd(const f32* a, const f32* b, f32* c, u32 n, u64* stamp)`: any grid and block; `c[i] = a[i] + b[i]`
//!   for i < n (grid-stride, so any grid is correct).
//! - `cc_sincos(f32* data, u32 n, u32 iterations, u64* stamp)`: any grid and block; `iterations` times
//!   `data[i] = sinf(data[i]) * cosf(data[i])`.
//! - `cc_sleep(i64 cycles, u64* stamp)`: any grid and block; every thread spins until `clock64()` advanced `cycles`.
//! - The three compute kernels stamp the first entry of the first 64 blocks and the last exit of the last 256
//!   (`kernels/probes.cu` says why), sharing a slot across repeated launches as `cc_spin` does.
//! - `cc_set_condition(cudaGraphConditionalHandle h, const u32* src)`: 1 thread, graph kernel nodes only; sets the
//!   condition of `h` to `src[0]`.
//! - `cc_countdown(cudaGraphConditionalHandle h, u32* counter)`: 1 thread, graph kernel nodes only; decrements
//!   `counter[0]` unless it is 0, increments `counter[1]`, sets the condition to `counter[0] != 0`.
//! - `cc_device_launch(cudaGraphExec_t exec, u64 mode, u32 times, u32* codes, u64* stamp)`: 1 thread; calls the
//!   device-side `cudaGraphLaunch(exec, (cudaStream_t)mode)` `times` times, `codes[i]` the i-th code
//!   (`kernels/device_launch.cu`, a module of its own).
//! - `cc_relaunch_self(u32* counter, u32 runs, u32 times, u32* codes, u64* stamp)`: 1 thread; `counter[0] += 1`;
//!   while it is below `runs`, tail-launches `cudaGetCurrentGraphExec()` `times` times, each code to
//!   `codes[(run - 1) * times + i]`.
//! - `cc_current_graph(u32* out, u64* stamp)`: 1 thread; `out[0] = cudaGetCurrentGraphExec() != NULL`.
//! - `cc_bounded32()`: `__launch_bounds__(32)`, no parameters, does nothing (`call` only: `func=bounded32`).
//! - `cc_many_registers()`: no parameters, more than 64 registers per thread (160 values live), so 1024 threads
//!   need more registers than a block may have (`call` only: `func=many-registers`).
//! - `cc_sm80_only()` and `cc_ptx_only()`: no parameters; thread 0 of block 0 stores 7 into `cc_sm80_symbol[0]` /
//!   `cc_ptx_symbol[0]`, the `__device__ uint32_t [1024]` of its module (`kernels/other_images.cu`: an sm_80 cubin
//!   without PTX, and compute_80 PTX without a cubin; `call` only, never preloaded).
//! - `cc_bad_ptx()` and `cc_future_ptx()`: no parameters, PTX the driver refuses (`kernels/bad.ptx`: an instruction
//!   PTX lacks; `kernels/future.ptx`: ISA 99.0), a module each; `call` only, never preloaded.
//!
//! Data kernels run one block of [`DATA_BLOCK_THREADS`] threads with a block-stride loop, so that the exit stamp
//! (taken after `__syncthreads`) is the kernel's true end.

use crate::case::words::{ImageWord, KernelWord, SymbolWord, Word};
use cuda_sys::{cudaError_t, cudaLaunchKernel, cudaStream_t, dim3};
use std::ffi::c_void;

/// Threads of the single block every data kernel runs.
pub const DATA_BLOCK_THREADS: u32 = 256;

/// The fat binaries of `kernels/other_images.cu` as the root build compiled them (an sm_80 cubin only; compute_80
/// PTX only), and of `kernels/bad.ptx` and `kernels/future.ptx` as it packed them. The executor passes them to
/// the library loads (`code=sm80-fatbin`, `fileName=sm80-fatbin`); the reproducers, which cannot build an image
/// without SASS for their own GPU in the one nvcc command that builds them, embed these bytes and register them
/// with cudart as `kernels/register.c` does.
#[derive(Debug, Clone, Copy)]
pub struct OtherImages {
    pub sm80_only: &'static [u8],
    pub ptx_only: &'static [u8],
    pub bad_ptx: &'static [u8],
    pub future_ptx: &'static [u8],
}

impl OtherImages {
    /// No images (the harness's own tests, which have no kernel build): the header then registers neither module,
    /// and the handles of their kernels and variables are addresses cudart does not know.
    pub const NONE: OtherImages = OtherImages { sm80_only: &[], ptx_only: &[], bad_ptx: &[], future_ptx: &[] };
}

/// Addresses of the probe kernels (host-side handles accepted by `cudaLaunchKernel`).
#[derive(Debug, Clone, Copy)]
pub struct KernelTable {
    pub gate: *const c_void,
    pub spin: *const c_void,
    pub lazy_spin: *const c_void,
    pub fault: *const c_void,
    pub fill: *const c_void,
    pub transform: *const c_void,
    pub compare: *const c_void,
    /// `launch spin … trigger`: the spin kernel that lets the next kernel launch early (not a word of its own).
    pub spin_trigger: *const c_void,
    pub vecadd: *const c_void,
    pub sincos: *const c_void,
    pub sleep: *const c_void,
    pub set_condition: *const c_void,
    pub countdown: *const c_void,
    pub device_launch: *const c_void,
    pub relaunch_self: *const c_void,
    pub current_graph: *const c_void,
    pub bounded32: *const c_void,
    pub many_registers: *const c_void,
    pub sm80_only: *const c_void,
    pub ptx_only: *const c_void,
    pub bad_ptx: *const c_void,
    pub future_ptx: *const c_void,
    /// The probes' `__device__ uint32_t cc_symbol[1024]` by its registered host address: what `symbol=cc_symbol`
    /// passes to the symbol calls.
    pub symbol: *const c_void,
    /// `cc_sm80_symbol` of the sm_80-only module, by its registered host address.
    pub sm80_symbol: *const c_void,
    /// `cc_ptx_symbol` of the PTX-only module, by its registered host address.
    pub ptx_symbol: *const c_void,
    /// The registered bytes of the other images, for `code=IMAGE` and `fileName=IMAGE`.
    pub images: OtherImages,
}

impl KernelTable {
    /// The handle of the kernel `launch KERNEL` names. Exhaustive: a new kernel word needs its handle here.
    pub fn get(&self, kernel: KernelWord) -> *const c_void {
        match kernel {
            KernelWord::Gate => self.gate,
            KernelWord::Spin => self.spin,
            KernelWord::LazySpin => self.lazy_spin,
            KernelWord::Fault => self.fault,
            KernelWord::Fill => self.fill,
            KernelWord::Transform => self.transform,
            KernelWord::Compare => self.compare,
            KernelWord::VecAdd => self.vecadd,
            KernelWord::SinCos => self.sincos,
            KernelWord::Sleep => self.sleep,
            KernelWord::SetCondition => self.set_condition,
            KernelWord::Countdown => self.countdown,
            KernelWord::DeviceLaunch => self.device_launch,
            KernelWord::RelaunchSelf => self.relaunch_self,
            KernelWord::CurrentGraph => self.current_graph,
            KernelWord::Bounded32 => self.bounded32,
            KernelWord::ManyRegisters => self.many_registers,
            KernelWord::Sm80Only => self.sm80_only,
            KernelWord::PtxOnly => self.ptx_only,
            KernelWord::BadPtx => self.bad_ptx,
            KernelWord::FuturePtx => self.future_ptx,
        }
    }

    /// The bytes of the image `code=WORD` names.
    pub fn image(&self, image: ImageWord) -> &'static [u8] {
        match image {
            ImageWord::Sm80 => self.images.sm80_only,
            ImageWord::Ptx => self.images.ptx_only,
            ImageWord::BadPtx => self.images.bad_ptx,
            ImageWord::FuturePtx => self.images.future_ptx,
        }
    }

    /// The registered host address of the variable `symbol=WORD` names.
    pub fn symbol(&self, symbol: SymbolWord) -> *const c_void {
        match symbol {
            SymbolWord::Probe => self.symbol,
            SymbolWord::Sm80 => self.sm80_symbol,
            SymbolWord::Ptx => self.ptx_symbol,
        }
    }

    /// Every kernel with its word, in the order of [`KernelWord`].
    pub fn all(&self) -> impl Iterator<Item = (KernelWord, *const c_void)> + '_ {
        KernelWord::ALL.iter().map(|&k| (k, self.get(k)))
    }
}

// SAFETY: the handles are addresses of host stubs registered with cudart for the process's lifetime.
unsafe impl Send for KernelTable {}
unsafe impl Sync for KernelTable {}

/// Launches `func` on `grid` × `block` with the given argument values.
///
/// # Safety
/// `args` must match the kernel's parameter list in number, order and type (each element points to a value of
/// that parameter's type), and every pointer argument must be valid on the device for the kernel's use.
pub unsafe fn launch(
    func: *const c_void,
    grid: u32,
    block: u32,
    args: &mut [*mut c_void],
    stream: cudaStream_t,
) -> cudaError_t {
    launch_shaped(func, grid, block, 0, args, stream)
}

/// As [`launch`], with `shared_bytes` of dynamic shared memory.
///
/// # Safety
/// As for [`launch`].
pub unsafe fn launch_shaped(
    func: *const c_void,
    grid: u32,
    block: u32,
    shared_bytes: usize,
    args: &mut [*mut c_void],
    stream: cudaStream_t,
) -> cudaError_t {
    let grid = dim3 { x: grid, y: 1, z: 1 };
    let block = dim3 { x: block, y: 1, z: 1 };
    cudaLaunchKernel(func, grid, block, args.as_mut_ptr(), shared_bytes, stream)
}

/// As [`launch_shaped`], through `cudaLaunchKernelExC` with `cudaLaunchAttributeProgrammaticStreamSerialization`:
/// the kernel may start before the previous kernel in the stream ends, once that one allows it.
///
/// # Safety
/// As for [`launch`].
pub unsafe fn launch_programmatic(
    func: *const c_void,
    (grid, block, shared_bytes): (u32, u32, usize),
    args: &mut [*mut c_void],
    stream: cudaStream_t,
) -> cudaError_t {
    let mut attr: cuda_sys::cudaLaunchAttribute = std::mem::zeroed();
    attr.id = cuda_sys::cudaLaunchAttributeID::cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    let config = cuda_sys::cudaLaunchConfig_t {
        gridDim: dim3 { x: grid, y: 1, z: 1 },
        blockDim: dim3 { x: block, y: 1, z: 1 },
        dynamicSmemBytes: shared_bytes,
        stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    cuda_sys::cudaLaunchKernelExC(&config, func, args.as_mut_ptr())
}

/// Pointer to a value, as an element of a `cudaLaunchKernel` argument array.
pub fn arg<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

impl KernelTable {
    /// # Safety
    /// `flag` and `timed_out` must be device pointers to mapped host words; `stamp` null or two device-visible u64.
    pub unsafe fn launch_gate(
        &self,
        flag: *const u32,
        timeout_ns: u64,
        timed_out: *mut u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut f, mut t, mut to, mut s) = (flag, timeout_ns, timed_out, stamp);
        launch(self.gate, 1, 1, &mut [arg(&mut f), arg(&mut t), arg(&mut to), arg(&mut s)], stream)
    }

    /// # Safety
    /// `exec` is an executable graph (or any handle the device call may refuse); `codes` holds `times`
    /// device-accessible u32; `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_device_launch(
        &self,
        (exec, mode, times): (cuda_sys::cudaGraphExec_t, u64, u32),
        codes: *mut u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut e, mut m, mut n, mut c, mut s) = (exec, mode, times, codes, stamp);
        launch(self.device_launch, 1, 1, &mut [arg(&mut e), arg(&mut m), arg(&mut n), arg(&mut c), arg(&mut s)], stream)
    }

    /// # Safety
    /// `counter` holds one device-accessible u32, `codes` `(runs - 1) * times`; `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_relaunch_self(
        &self,
        (counter, runs, times): (*mut u32, u32, u32),
        codes: *mut u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut p, mut r, mut n, mut c, mut s) = (counter, runs, times, codes, stamp);
        launch(self.relaunch_self, 1, 1, &mut [arg(&mut p), arg(&mut r), arg(&mut n), arg(&mut c), arg(&mut s)], stream)
    }

    /// # Safety
    /// `out` holds one device-accessible u32; `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_current_graph(&self, out: *mut u32, stamp: *mut u64, stream: cudaStream_t) -> cudaError_t {
        let (mut o, mut s) = (out, stamp);
        launch(self.current_graph, 1, 1, &mut [arg(&mut o), arg(&mut s)], stream)
    }

    /// # Safety
    /// `stamp` is null or points to two device-visible u64.
    pub unsafe fn launch_spin(&self, ns: u64, stamp: *mut u64, stream: cudaStream_t) -> cudaError_t {
        self.launch_spin_shaped(self.spin, ns, stamp, (1, 1, 0), stream)
    }

    /// `func` is [`Self::spin`] or [`Self::lazy_spin`]; `(grid, block, shared_bytes)` may be invalid on purpose.
    ///
    /// # Safety
    /// As for [`Self::launch_spin`].
    pub unsafe fn launch_spin_shaped(
        &self,
        func: *const c_void,
        ns: u64,
        stamp: *mut u64,
        (grid, block, shared_bytes): (u32, u32, usize),
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut n, mut s) = (ns, stamp);
        launch_shaped(func, grid, block, shared_bytes, &mut [arg(&mut n), arg(&mut s)], stream)
    }

    /// # Safety
    /// `stamp` as for [`Self::launch_spin`]. The kernel faults on purpose: the context is unusable afterwards.
    pub unsafe fn launch_fault(&self, mode: u32, stamp: *mut u64, stream: cudaStream_t) -> cudaError_t {
        let (mut m, mut s) = (mode, stamp);
        launch(self.fault, 1, 1, &mut [arg(&mut m), arg(&mut s)], stream)
    }

    /// # Safety
    /// `buf` must be device-accessible and hold `n` u32; `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_fill(
        &self,
        buf: *mut u32,
        n: u32,
        value: u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut b, mut n, mut v, mut s) = (buf, n, value, stamp);
        launch(self.fill, 1, DATA_BLOCK_THREADS, &mut [arg(&mut b), arg(&mut n), arg(&mut v), arg(&mut s)], stream)
    }

    /// # Safety
    /// As for [`Self::launch_fill`].
    pub unsafe fn launch_transform(
        &self,
        buf: *mut u32,
        n: u32,
        mul: u32,
        add: u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut b, mut n, mut m, mut a, mut s) = (buf, n, mul, add, stamp);
        launch(
            self.transform,
            1,
            DATA_BLOCK_THREADS,
            &mut [arg(&mut b), arg(&mut n), arg(&mut m), arg(&mut a), arg(&mut s)],
            stream,
        )
    }

    /// # Safety
    /// `a`, `b` hold `n` device-accessible u32; `mismatches` one device-accessible u32.
    pub unsafe fn launch_compare(
        &self,
        a: *const u32,
        b: *const u32,
        n: u32,
        mismatches: *mut u32,
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut pa, mut pb, mut n, mut m, mut s) = (a, b, n, mismatches, stamp);
        launch(
            self.compare,
            1,
            DATA_BLOCK_THREADS,
            &mut [arg(&mut pa), arg(&mut pb), arg(&mut n), arg(&mut m), arg(&mut s)],
            stream,
        )
    }

    /// # Safety
    /// `a`, `b`, `c` hold `n` device-accessible f32; `stamp` as for [`Self::launch_spin`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_vecadd(
        &self,
        (a, b, c): (*const f32, *const f32, *mut f32),
        n: u32,
        (grid, block): (u32, u32),
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut pa, mut pb, mut pc, mut n, mut s) = (a, b, c, n, stamp);
        let args = &mut [arg(&mut pa), arg(&mut pb), arg(&mut pc), arg(&mut n), arg(&mut s)];
        launch(self.vecadd, grid, block, args, stream)
    }

    /// # Safety
    /// `data` holds `n` device-accessible f32; `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_sincos(
        &self,
        data: *mut f32,
        n: u32,
        iterations: u32,
        (grid, block): (u32, u32),
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut d, mut n, mut i, mut s) = (data, n, iterations, stamp);
        launch(self.sincos, grid, block, &mut [arg(&mut d), arg(&mut n), arg(&mut i), arg(&mut s)], stream)
    }

    /// # Safety
    /// `stamp` as for [`Self::launch_spin`].
    pub unsafe fn launch_sleep(
        &self,
        cycles: i64,
        (grid, block): (u32, u32),
        stamp: *mut u64,
        stream: cudaStream_t,
    ) -> cudaError_t {
        let (mut c, mut s) = (cycles, stamp);
        launch(self.sleep, grid, block, &mut [arg(&mut c), arg(&mut s)], stream)
    }
}
