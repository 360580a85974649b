//! Compiles the probe kernels (`kernels/probes.cu`) with nvcc through the `cc` crate.
//!
//! - nvcc comes from the toolkit cuda-sys found (`DEP_CUDART_ROOT`, its `links` metadata), so the kernels, the
//!   bindings and the linked cudart are always one CUDA version: PTX from a newer nvcc cannot be loaded by an
//!   older driver. Choose another toolkit with `CUDA_HOME` (cuda-sys reads it), not here.
//! - Device code is always optimised, even in the dev profile: cc adds `-G` (device debug, no optimisation) to
//!   debug builds, which makes kernels many times slower and changes what timing-sensitive cases observe, so
//!   debug info is off; `-lineinfo` keeps source lines for profilers. (ptxas optimises at -O3 by default; the
//!   `-O3` cc passes goes to the host stubs.)
//! - cudart is linked once, by cuda-sys (`.cudart("none")`); cc's own guess at its location does not fit the
//!   wheel layout. cc links libstdc++, which nvcc's host stubs need.
//! - Targets: `CUDA_CONFORMANCE_ARCHS` (e.g. `80,90`), default `90`: SASS for each, plus PTX of the highest so
//!   that a newer GPU can JIT-compile the kernels.

use std::env;
use std::path::PathBuf;

const KERNELS: &str = "kernels/probes.cu";
const ARCHS_VAR: &str = "CUDA_CONFORMANCE_ARCHS";
const DEFAULT_ARCHS: &str = "90";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={KERNELS}");
    println!("cargo:rerun-if-env-changed={ARCHS_VAR}");
    emit_commit();

    let root = PathBuf::from(
        env::var_os("DEP_CUDART_ROOT")
            .unwrap_or_else(|| fail("DEP_CUDART_ROOT is not set: cuda-sys (links = \"cudart\") must be a dependency")),
    );
    let nvcc = root.join("bin/nvcc");
    if !nvcc.is_file() {
        fail(&format!(
            "no nvcc at {}: the toolkit cuda-sys found has the runtime but not the compiler. Run \
             scripts/setup.sh, or set CUDA_HOME to a full toolkit",
            nvcc.display()
        ));
    }
    // cc takes nvcc only from the environment (`NVCC`); a build script runs single-threaded, so setting it is safe.
    env::set_var("NVCC", &nvcc);

    let archs = archs();
    let mut build = cc::Build::new();
    build.cuda(true).cudart("none").debug(false).opt_level(3).flag("-lineinfo").file(KERNELS);
    for gencode in gencode_flags(&archs) {
        build.flag("-gencode").flag(gencode);
    }
    build.compile("probes");

    // What the kernels were built for, for reports and for the message when a GPU has no matching image.
    let targets: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
    let ptx = archs.last().expect("archs() is never empty");
    println!("cargo:rustc-env=CUDA_CONFORMANCE_KERNEL_TARGETS={} + compute_{ptx} PTX", targets.join(" "));
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

fn number(arch: &str) -> u32 {
    arch.trim_end_matches(|c: char| c.is_ascii_lowercase()).parse().unwrap_or(0)
}

/// `arch=compute_XX,code=sm_XX` for each, then `arch=compute_H,code=compute_H` (PTX) for the highest.
fn gencode_flags(archs: &[String]) -> Vec<String> {
    let mut flags: Vec<String> = archs.iter().map(|a| format!("arch=compute_{a},code=sm_{a}")).collect();
    if let Some(h) = archs.last() {
        flags.push(format!("arch=compute_{h},code=compute_{h}"));
    }
    flags
}

fn fail(msg: &str) -> ! {
    panic!("\n\ncuda-conformance build: {msg}\n");
}

/// The commit reports name as the build's (`git describe --always --dirty`). Rerun when HEAD or the index moves,
/// so the stamp follows commits without rebuilding on every edit.
fn emit_commit() {
    for path in [".git/HEAD", ".git/index"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=40"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=CUDA_CONFORMANCE_COMMIT={commit}");
}
