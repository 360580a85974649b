//! Every function the bindings declare is exported by the cudart of the same toolkit, static archive and shared
//! library alike (whichever the toolkit ships), so no declared call can fail to link or resolve. A header that
//! declares what its library lacks (cudarc blocklists such functions, e.g. its issue 397) fails here by name.
//! Runs `nm` from binutils; no GPU.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Declared functions: `pub fn cuda…(` inside bindgen's `extern "C"` blocks (the crate's own Rust functions live
/// in src/, not in bindings.rs).
fn declared() -> BTreeSet<String> {
    let text = fs::read_to_string(concat!(env!("OUT_DIR"), "/bindings.rs")).expect("read OUT_DIR/bindings.rs");
    let names: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub fn ")?.split('(').next().map(str::to_owned))
        .filter(|n| n.starts_with("cuda"))
        .collect();
    assert!(names.len() > 250, "only {} functions found in bindings.rs", names.len());
    names
}

/// Global defined text symbols of a library (`nm -D` for a shared object, which may carry version suffixes).
fn exported(lib: &Path, shared: bool) -> BTreeSet<String> {
    let mut cmd = Command::new("nm");
    cmd.args(["-g", "--defined-only"]);
    if shared {
        cmd.arg("-D");
    }
    let out = cmd.arg(lib).output().unwrap_or_else(|e| panic!("run nm (binutils) on {}: {e}", lib.display()));
    assert!(out.status.success(), "nm {}: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (_, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            matches!(kind, "T" | "W" | "i").then(|| name.split('@').next().unwrap_or(name).to_owned())
        })
        .collect()
}

#[test]
fn every_declared_function_is_exported_by_the_static_and_shared_cudart() {
    let dir = Path::new(env!("CUDA_SYS_LIB_DIR"));
    let declared = declared();
    let mut libs: Vec<(std::path::PathBuf, bool)> = Vec::new();
    if dir.join("libcudart_static.a").is_file() {
        libs.push((dir.join("libcudart_static.a"), false));
    }
    let mut shared: Vec<_> = fs::read_dir(dir)
        .expect("read the cudart folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("libcudart.so"))
        .map(|e| e.path())
        .collect();
    shared.sort();
    if let Some(so) = shared.into_iter().next() {
        libs.push((so, true));
    }
    // The library this crate links is always among them (build.rs checked it exists).
    let linked = if cuda_conformance_sys::BUILD_LINK_MODE == "static" { "libcudart_static.a" } else { "libcudart.so" };
    assert!(
        libs.iter().any(|(p, _)| p.file_name().unwrap().to_string_lossy().starts_with(linked)),
        "the linked {linked} is not in {}",
        dir.display()
    );
    for (lib, is_shared) in libs {
        let exported = exported(&lib, is_shared);
        let missing: Vec<&String> = declared.iter().filter(|f| !exported.contains(*f)).collect();
        assert!(
            missing.is_empty(),
            "{} of {} declared functions are not exported by {}: {missing:?}",
            missing.len(),
            declared.len(),
            lib.display()
        );
    }
}
