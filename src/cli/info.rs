//! `info`: the device and build this binary would report.

use super::now_rfc3339;
use super::output::emit;
use super::status::Outcome;
use cuda_conformance::BUILD_COMMIT;
use harness::device::gpu;
use harness::record::Provenance;

#[derive(clap::Args)]
pub struct InfoCmd {
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Print only the kernel image (compiler, PTX ISA, architectures); needs no GPU.
    #[arg(long)]
    kernels: bool,
}

impl InfoCmd {
    pub fn exec(self) -> Outcome {
        if self.kernels {
            let k = cuda_conformance::kernel_image();
            return Ok(emit(&format!("{}, PTX ISA {}, {}\n", k.compiler, k.ptx_isa, k.architectures)));
        }
        let info = gpu::probe(self.device).map_err(|e| e.to_string())?;
        let mut provenance = Provenance::new(&info, BUILD_COMMIT, now_rfc3339());
        provenance.kernel_image = cuda_conformance::kernel_image();
        Ok(emit(&format!("{}\n", serde_json::to_string_pretty(&provenance).unwrap_or_default())))
    }
}
