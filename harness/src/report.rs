//! The report of a run: provenance (which GPU, driver, runtime, build, environment), a summary by area, and every
//! case's verdict and trace. Written as JSON for machines and summarised as a table for people.

use crate::figures::Figures;
use crate::gpu::{self, DeviceInfo};
use crate::runner::CaseResult;
use crate::verdict::VerdictKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where a report came from: enough to reproduce the run or to compare it with another host's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Provenance {
    pub tool_version: String,
    /// `git rev-parse HEAD` of the tree the binary was built from (with `-dirty` if it had changes).
    pub commit: String,
    pub hostname: String,
    pub gpu_name: String,
    pub gpu_uuid: String,
    pub compute_capability: String,
    pub driver_version: String,
    /// The kernel module's release (e.g. `580.159.04`, from /proc/driver/nvidia/version), as nvidia-smi shows it.
    #[serde(default)]
    pub driver_release: String,
    /// The runtime actually linked (cudaRuntimeGetVersion).
    pub runtime_version: String,
    /// The headers the bindings were generated from.
    pub bindings_cudart_version: String,
    /// `static` (libcudart_static.a) or `dynamic`.
    pub cudart_link: String,
    pub concurrent_kernels: bool,
    pub async_engine_count: u32,
    pub multiprocessors: u32,
    pub device_count: u32,
    pub stream_priority_range: (i32, i32),
    /// Every CUDA_* variable of the run's environment (CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING,
    /// CUDA_DEVICE_MAX_CONNECTIONS, CUDA_VISIBLE_DEVICES change what cases can observe).
    pub cuda_environment: BTreeMap<String, String>,
    /// CUDA_DEVICE_MAX_CONNECTIONS, CUDA_LAUNCH_BLOCKING and CUDA_MODULE_LOADING as in effect, set or not.
    #[serde(default)]
    pub semantic_environment: BTreeMap<String, String>,
    /// UTC, RFC 3339.
    pub started_at: String,
    /// What cudaDriverGetVersion reported when `CUDA_CONFORMANCE_ASSUME_DRIVER` made the run act on the lower
    /// `driver_version` (a test of the fallbacks for old drivers); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version_reported: Option<String>,
    /// The runtime calls whose form depends on the runtime and driver, as this run made them (cuda-sys `compat`).
    #[serde(default)]
    pub call_forms: String,
    /// The probe kernels as registered with cudart (set by the binary that embeds them; empty in older reports).
    #[serde(default)]
    pub kernel_image: KernelImage,
}

/// What the probe kernels were built into: which driver can load them depends on the PTX ISA and the cubins'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelImage {
    /// e.g. `NVRTC 12.0 (nvFatbin 12.4, uncompressed)`.
    pub compiler: String,
    /// The PTX `.version` of the image's PTX, e.g. `8.0` (a driver JIT-compiles PTX up to its own CUDA version).
    pub ptx_isa: String,
    /// Cubins and PTX by architecture, with the cubins' ELF ABI, e.g. `sm_90 (ELF OS/ABI 0x33, ABI 7) + compute_90 PTX`.
    pub architectures: String,
}

impl Provenance {
    pub fn new(device: &DeviceInfo, commit: &str, started_at: String) -> Self {
        Provenance {
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: commit.to_owned(),
            hostname: hostname(),
            gpu_name: device.name.clone(),
            gpu_uuid: device.uuid.clone(),
            compute_capability: format!("{}.{}", device.compute_capability.0, device.compute_capability.1),
            driver_version: gpu::version_string(device.driver_version),
            driver_release: driver_release(),
            runtime_version: gpu::version_string(device.runtime_version),
            bindings_cudart_version: gpu::version_string(cuda_sys::BUILD_CUDART_VERSION),
            cudart_link: cuda_sys::BUILD_LINK_MODE.to_owned(),
            concurrent_kernels: device.concurrent_kernels,
            async_engine_count: device.async_engine_count,
            multiprocessors: device.multiprocessors,
            device_count: device.device_count,
            stream_priority_range: device.stream_priority_range,
            cuda_environment: gpu::cuda_environment().into_iter().collect(),
            semantic_environment: gpu::semantic_environment().into_iter().collect(),
            started_at,
            driver_version_reported: gpu::reported_driver_version().map(gpu::version_string),
            call_forms: cuda_sys::compat::call_forms().to_owned(),
            kernel_image: KernelImage::default(),
        }
    }
}

/// The driver release from /proc/driver/nvidia/version, `unknown` where there is none.
fn driver_release() -> String {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| release_in(text.lines().next()?))
        .unwrap_or_else(|| "unknown".into())
}

/// The first word shaped like a release number (`580.159.04`) in an NVRM line. Its wording varies between the
/// proprietary and the open kernel module, e.g. `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64
/// 580.159.04  Release Build ...`, so only the number's shape is relied on.
fn release_in(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|w| {
            w.split('.').count() >= 2 && w.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #[test]
    fn release_numbers_are_found_in_both_module_wordings() {
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)";
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023";
        assert_eq!(super::release_in(open).as_deref(), Some("580.159.04"));
        assert_eq!(super::release_in(closed).as_deref(), Some("535.54.03"));
        assert_eq!(super::release_in("NVRM version: unknown"), None);
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub provenance: Provenance,
    /// The filter the run was given (empty: all cases).
    pub filter: String,
    /// False while the run is still going (the report is rewritten after each case) or if it was killed.
    #[serde(default)]
    pub complete: bool,
    pub wall_ms: u64,
    /// verdict → count over all cases.
    pub totals: BTreeMap<String, usize>,
    /// area → verdict → count.
    pub by_area: BTreeMap<String, BTreeMap<String, usize>>,
    pub cases: Vec<CaseResult>,
    /// Measurements recorded but never asserted (see [`crate::figures`]); absent when none were taken (`run
    /// --no-figures`, a filter that selects no figure, a report from before figures existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}

impl Report {
    pub fn new(provenance: Provenance, filter: String, wall_ms: u64, cases: Vec<CaseResult>) -> Self {
        let mut totals = BTreeMap::new();
        let mut by_area: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for case in &cases {
            let kind = case.verdict.kind.to_string();
            *totals.entry(kind.clone()).or_insert(0) += 1;
            *by_area.entry(case.area.clone()).or_default().entry(kind).or_insert(0) += 1;
        }
        Report { provenance, filter, complete: false, wall_ms, totals, by_area, cases, figures: None }
    }

    /// True when no case failed, crashed or timed out.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| !c.verdict.kind.is_failure())
    }

    /// The summary table: one row per area, one column per verdict, then the non-pass cases with their reasons.
    pub fn summary_table(&self) -> String {
        let kinds = VerdictKind::ALL;
        let mut out = String::new();
        let _ = write!(out, "{:<16}", "area");
        for k in kinds {
            let _ = write!(out, " {:>15}", k.to_string());
        }
        out.push('\n');
        let mut rows: Vec<(&str, &BTreeMap<String, usize>)> =
            self.by_area.iter().map(|(a, c)| (a.as_str(), c)).collect();
        rows.push(("total", &self.totals));
        for (area, counts) in rows {
            let _ = write!(out, "{area:<16}");
            for k in kinds {
                let _ = write!(out, " {:>15}", counts.get(&k.to_string()).copied().unwrap_or(0));
            }
            out.push('\n');
        }
        if let Some(figures) = &self.figures {
            let _ = write!(out, "\n{}", figures.console());
        }
        for case in self.cases.iter().filter(|c| c.verdict.kind != VerdictKind::Pass) {
            let variant = case.verdict.variant.as_deref().map(|v| format!(" ({v})")).unwrap_or_default();
            let _ = writeln!(out, "\n{} {}{variant}  [{}]", case.verdict.kind, case.id, case.location);
            for m in &case.verdict.messages {
                let _ = writeln!(out, "    {m}");
            }
        }
        let observed: Vec<String> = self
            .cases
            .iter()
            .filter_map(|c| c.verdict.observed.as_deref().map(|o| format!("    {} ({o})", c.id)))
            .collect();
        if !observed.is_empty() {
            let _ =
                writeln!(out, "\nobserved (the docs promise nothing; recorded, not judged):\n{}", observed.join("\n"));
        }
        out
    }

    /// A short Markdown summary for people: provenance, verdicts by area, and every case that did not simply pass
    /// (variants with the behaviour this driver showed, quality warnings, failures, unsupported cases).
    pub fn markdown(&self) -> String {
        let p = &self.provenance;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# {} — driver {} (CUDA {}), runtime {}\n",
            p.gpu_name, p.driver_release, p.driver_version, p.runtime_version
        );
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(
            out,
            "| GPU | {} (`{}`), compute capability {}, {} SMs |",
            p.gpu_name, p.gpu_uuid, p.compute_capability, p.multiprocessors
        );
        let _ = writeln!(
            out,
            "| concurrency | concurrentKernels {}, asyncEngineCount {}, stream priorities {:?} |",
            p.concurrent_kernels, p.async_engine_count, p.stream_priority_range
        );
        let _ = writeln!(
            out,
            "| build | commit `{}`, bindings from CUDA {}, cudart linked {} |",
            p.commit, p.bindings_cudart_version, p.cudart_link
        );
        if !p.kernel_image.compiler.is_empty() {
            let k = &p.kernel_image;
            let _ = writeln!(out, "| kernels | {}, PTX ISA {}, {} |", k.compiler, k.ptx_isa, k.architectures);
        }
        if let Some(reported) = &p.driver_version_reported {
            let _ = writeln!(
                out,
                "| driver assumed | CUDA {} (the driver reports {reported}: CUDA_CONFORMANCE_ASSUME_DRIVER); calls: {} |",
                p.driver_version, p.call_forms
            );
        }
        let env: Vec<String> = p.cuda_environment.iter().map(|(k, v)| format!("`{k}={v}`")).collect();
        let _ = writeln!(
            out,
            "| environment | {} |",
            if env.is_empty() { "(no CUDA_* variables)".to_owned() } else { env.join(", ") }
        );
        let settings: Vec<String> = p.semantic_environment.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        if !settings.is_empty() {
            let _ = writeln!(out, "| in effect | {} |", settings.join("; "));
        }
        let _ = writeln!(
            out,
            "| run | {} on `{}`, {} cases, {:.1} s{} |\n",
            p.started_at,
            p.hostname,
            self.cases.len(),
            self.wall_ms as f64 / 1000.0,
            if self.complete { "" } else { ", INCOMPLETE" }
        );
        let kinds = VerdictKind::ALL;
        let _ = write!(out, "| area |");
        for k in kinds {
            let _ = write!(out, " {k} |");
        }
        let _ = write!(out, "\n|---|");
        for _ in kinds {
            let _ = write!(out, "---|");
        }
        out.push('\n');
        for (area, counts) in self.by_area.iter().chain([(&"**total**".to_owned(), &self.totals)]) {
            let _ = write!(out, "| {area} |");
            for k in kinds {
                let _ = write!(out, " {} |", counts.get(&k.to_string()).copied().unwrap_or(0));
            }
            out.push('\n');
        }
        if let Some(figures) = &self.figures {
            out.push_str(&figures.markdown());
        }
        for kind in kinds.iter().filter(|k| **k != VerdictKind::Pass) {
            let cases: Vec<&CaseResult> = self.cases.iter().filter(|c| c.verdict.kind == *kind).collect();
            if cases.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n## {kind} ({})\n", cases.len());
            for c in cases {
                let variant = c.verdict.variant.as_deref().map(|v| format!(" — **{v}**")).unwrap_or_default();
                let _ = writeln!(out, "- `{}`{variant}: {}", c.id, c.rule);
                for m in &c.verdict.messages {
                    let _ = writeln!(out, "  - {m}");
                }
            }
        }
        let observed: Vec<&CaseResult> = self.cases.iter().filter(|c| c.verdict.observed.is_some()).collect();
        if !observed.is_empty() {
            let _ = writeln!(out, "\n## observed ({}): what the docs leave open, recorded\n", observed.len());
            for c in observed {
                let _ = writeln!(
                    out,
                    "- `{}` — **{}**: {}",
                    c.id,
                    c.verdict.observed.as_deref().unwrap_or_default(),
                    c.rule
                );
            }
        }
        out
    }
}
