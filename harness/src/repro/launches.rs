//! Kernel launches: `launch KERNEL ... on STREAM`, as `exec::interpret::launches`. Each is a cudaLaunchKernel
//! (cudaLaunchKernelEx for a programmatic launch) with its argument array: the case checks the launch's return
//! code, which `kernel<<<...>>>()` would drop.

use super::code::{u64_lit, Code, Step};
use super::decls::kernel_symbol;
use crate::case::ast::{ComputeShape, Fault, Grid, KernelCall, StreamRef};
use crate::case::words::KernelWord;

/// The launch: `args` are C++ declarations of the argument values, in parameter order (the stamp last).
fn call(code: &mut Code, func: &str, grid: &str, block: &str, shared: u64, args: &[(&str, String)], s: &str) {
    for (decl, value) in args {
        code.pre(format!("{decl} = {value};"));
    }
    let names: Vec<String> = args.iter().map(|(d, _)| format!("&{}", d.rsplit(' ').next().unwrap_or(d))).collect();
    code.pre(format!("void* args[] = {{{}}};", names.join(", ")));
    code.timed(&format!("cudaLaunchKernel((const void*){func}, dim3({grid}), dim3({block}), args, {shared}, {s})"));
}

/// `grid full`: the blocks one SM keeps resident (cudaOccupancyMaxActiveBlocksPerMultiprocessor, at least 1) times
/// the SM count, recorded as the operation's value.
fn full_grid(code: &mut Code, func: &str, block: u32, shared: u64) {
    code.pre("int per_sm = 0;");
    code.pre(format!(
        "if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void*){func}, {block}, {shared}) != cudaSuccess) {{"
    ));
    code.pre("    per_sm = 1;");
    code.pre("    cudaGetLastError();  // the failed query must not leave a last error the script would see");
    code.pre("}");
    code.pre("unsigned blocks = (unsigned)std::max(per_sm, 1) * (unsigned)std::max(run.multiprocessors, 1);");
    code.pre("op.value = \"{\\\"grid-blocks\\\":\" + std::to_string(blocks) + \"}\";");
}

pub fn launch(x: &Step, kernel: &KernelCall, stream: &StreamRef) -> Result<Code, String> {
    let mut code = Code::default();
    let s = x.names.stream(stream);
    s.need(&mut code);
    let stamp = ("uint64_t* stamp", format!("run.stamp({})", x.index));
    match kernel {
        KernelCall::Gate { gate } => {
            let g = x.names.var(gate);
            code.need(format!("op.need_gate({g})"));
            let args = [
                ("const uint32_t* flag", format!("{g}.flag()")),
                ("uint64_t timeout_ns", "cc::GATE_TIMEOUT_NS".to_owned()),
                ("uint32_t* timed_out", format!("{g}.timed_out()")),
                stamp,
            ];
            call(&mut code, "cc_gate", "1", "1", 0, &args, &s.h);
        }
        KernelCall::Spin { ns, shape } => {
            let func = if shape.trigger { "cc_spin_trigger" } else { "cc_spin" };
            let grid = match shape.grid {
                Grid::Blocks(n) => n.to_string(),
                Grid::Full => {
                    // The occupancy of the plain spin kernel, as the executor asks it (also for the trigger one).
                    full_grid(&mut code, "cc_spin", shape.block, shape.shared_bytes);
                    "blocks".to_owned()
                }
            };
            if shape.programmatic {
                // Programmatic stream serialization: the kernel may start once the previous one in the stream
                // triggers (cudaLaunchKernelEx with the attribute).
                code.pre(format!("uint64_t ns = {};", u64_lit(*ns)));
                code.pre(format!("uint64_t* stamp = run.stamp({});", x.index));
                code.pre("cudaLaunchAttribute attribute = {};");
                code.pre("attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;");
                code.pre("attribute.val.programmaticStreamSerializationAllowed = 1;");
                code.pre("cudaLaunchConfig_t config = {};");
                code.pre(format!("config.gridDim = dim3({grid});"));
                code.pre(format!("config.blockDim = dim3({});", shape.block));
                code.pre(format!("config.dynamicSmemBytes = {};", shape.shared_bytes));
                code.pre(format!("config.stream = {};", s.h));
                code.pre("config.attrs = &attribute;");
                code.pre("config.numAttrs = 1;");
                code.timed(&format!("cudaLaunchKernelEx(&config, {func}, ns, stamp)"));
            } else {
                let args = [("uint64_t ns", u64_lit(*ns)), stamp];
                call(&mut code, func, &grid, &shape.block.to_string(), shape.shared_bytes, &args, &s.h);
            }
        }
        KernelCall::LazySpin { ns } => {
            call(&mut code, "cc_lazy_spin", "1", "1", 0, &[("uint64_t ns", u64_lit(*ns)), stamp], &s.h);
        }
        KernelCall::Fault { fault } => {
            let mode = match fault {
                Fault::IllegalAddress => "0u  /* a store to an address no allocation covers */",
                Fault::Trap => "1u  /* __trap() */",
            };
            call(&mut code, "cc_fault", "1", "1", 0, &[("uint32_t mode", mode.to_owned()), stamp], &s.h);
        }
        KernelCall::Fill { buf, value } => {
            let (b, n) = x.names.kernel_buffer(buf, &mut code)?;
            let args = [
                ("uint32_t* buf", format!("{b}.kernel")),
                ("uint32_t n", n.to_string()),
                ("uint32_t value", format!("{value}u")),
                stamp,
            ];
            call(&mut code, "cc_fill", "1", "cc::DATA_BLOCK_THREADS", 0, &args, &s.h);
        }
        KernelCall::Transform { buf, mul, add } => {
            let (b, n) = x.names.kernel_buffer(buf, &mut code)?;
            let args = [
                ("uint32_t* buf", format!("{b}.kernel")),
                ("uint32_t n", n.to_string()),
                ("uint32_t mul", format!("{mul}u")),
                ("uint32_t add", format!("{add}u")),
                stamp,
            ];
            call(&mut code, "cc_transform", "1", "cc::DATA_BLOCK_THREADS", 0, &args, &s.h);
        }
        KernelCall::Compare { a, b, into } => {
            let (pa, na) = x.names.kernel_buffer(a, &mut code)?;
            let (pb, nb) = x.names.kernel_buffer(b, &mut code)?;
            let (pr, _) = x.names.kernel_buffer(into, &mut code)?;
            let args = [
                ("const uint32_t* a", format!("{pa}.kernel")),
                ("const uint32_t* b", format!("{pb}.kernel")),
                ("uint32_t n", na.min(nb).to_string()),
                ("uint32_t* mismatches", format!("{pr}.kernel")),
                stamp,
            ];
            call(&mut code, "cc_compare", "1", "cc::DATA_BLOCK_THREADS", 0, &args, &s.h);
        }
        KernelCall::VecAdd { a, b, into, shape } => {
            let (pa, na) = x.names.kernel_buffer(a, &mut code)?;
            let (pb, nb) = x.names.kernel_buffer(b, &mut code)?;
            let (pc, nc) = x.names.kernel_buffer(into, &mut code)?;
            let n = nc.min(na).min(nb);
            let (grid, block) = compute_shape(&mut code, KernelWord::VecAdd, shape, Some(n));
            let args = [
                ("const float* a", format!("(const float*){pa}.kernel")),
                ("const float* b", format!("(const float*){pb}.kernel")),
                ("float* c", format!("(float*){pc}.kernel")),
                ("uint32_t n", n.to_string()),
                stamp,
            ];
            call(&mut code, "cc_vecadd", &grid, &block, 0, &args, &s.h);
        }
        KernelCall::SinCos { buf, iterations, shape } => {
            let (p, n) = x.names.kernel_buffer(buf, &mut code)?;
            let (grid, block) = compute_shape(&mut code, KernelWord::SinCos, shape, Some(n));
            let args = [
                ("float* data", format!("(float*){p}.kernel")),
                ("uint32_t n", n.to_string()),
                ("uint32_t iterations", format!("{iterations}u")),
                stamp,
            ];
            call(&mut code, "cc_sincos", &grid, &block, 0, &args, &s.h);
        }
        KernelCall::Sleep { cycles, shape } => {
            if i64::try_from(*cycles).is_err() {
                code.skip(&format!("{cycles} cycles do not fit a long long"));
            }
            let (grid, block) = compute_shape(&mut code, KernelWord::Sleep, shape, None);
            let args = [("long long cycles", format!("{cycles}ll")), stamp];
            call(&mut code, "cc_sleep", &grid, &block, 0, &args, &s.h);
        }
        KernelCall::DeviceLaunch { exec, mode, times, into } => {
            let e = x.names.var(exec);
            code.need(format!("op.need_exec({e})"));
            let (c, n) = x.names.kernel_buffer(into, &mut code)?;
            if let Some(why) = kernel.short_codes_buffer(n) {
                code.skip(&why);
            }
            let args = [
                ("cudaGraphExec_t exec", format!("{e}.handle()")),
                ("uint64_t mode", format!("(uint64_t){}", mode.stream_name())),
                ("uint32_t times", format!("{times}u")),
                ("uint32_t* codes", format!("{c}.kernel")),
                stamp,
            ];
            call(&mut code, "cc_device_launch", "1", "1", 0, &args, &s.h);
        }
        KernelCall::RelaunchSelf { counter, runs, times, into } => {
            let (p, _) = x.names.kernel_buffer(counter, &mut code)?;
            let (c, n) = x.names.kernel_buffer(into, &mut code)?;
            if let Some(why) = kernel.short_codes_buffer(n) {
                code.skip(&why);
            }
            let args = [
                ("uint32_t* counter", format!("{p}.kernel")),
                ("uint32_t runs", format!("{runs}u")),
                ("uint32_t times", format!("{times}u")),
                ("uint32_t* codes", format!("{c}.kernel")),
                stamp,
            ];
            call(&mut code, "cc_relaunch_self", "1", "1", 0, &args, &s.h);
        }
        KernelCall::CurrentGraph { into } => {
            let (o, _) = x.names.kernel_buffer(into, &mut code)?;
            let args = [("uint32_t* out", format!("{o}.kernel")), stamp];
            call(&mut code, "cc_current_graph", "1", "1", 0, &args, &s.h);
        }
    }
    Ok(code)
}

/// The threads per block of a compute kernel when the case gives none: every seed launches 256.
const COMPUTE_BLOCK: u32 = 256;

/// The grid and block of a compute kernel, as `exec::interpret::launches::compute_shape`.
fn compute_shape(code: &mut Code, k: KernelWord, shape: &ComputeShape, elements: Option<u64>) -> (String, String) {
    let block = shape.block.unwrap_or(COMPUTE_BLOCK);
    let grid = match shape.grid {
        Some(Grid::Blocks(n)) => n.to_string(),
        Some(Grid::Full) => {
            full_grid(code, kernel_symbol(k), block, 0);
            "blocks".to_owned()
        }
        None => elements.map_or(1, |n| n.div_ceil(u64::from(block.max(1))).max(1)).to_string(),
    };
    (grid, block.to_string())
}
