//! The committed bindings (`bindings/cudart-<CUDART_VERSION>.rs`, what a build without a toolkit documents on
//! docs.rs) are exactly what bindgen generates from the pinned headers of their release: this build's own output
//! when its toolkit is one of them. CI builds against 13.0, 12.0 and 13.5, so those files are checked there;
//! `scripts/pregenerate-bindings.sh` rewrites them all.

use std::fs;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// The release list the build script chooses from (`PREGENERATED` in build.rs), read from its source.
fn listed_releases() -> Vec<u32> {
    let build = fs::read_to_string(format!("{MANIFEST}/build.rs")).expect("read build.rs");
    let line = build.lines().find(|l| l.starts_with("const PREGENERATED:")).expect("const PREGENERATED in build.rs");
    let list = line.split_once("= [").and_then(|(_, rest)| rest.split_once(']')).expect("a [..] list").0;
    list.split(',').map(|v| v.trim().parse().expect("a CUDART_VERSION")).collect()
}

#[test]
fn committed_bindings_match_this_build() {
    let version = cuda_conformance_sys::BUILD_CUDART_VERSION;
    let built = fs::read_to_string(concat!(env!("OUT_DIR"), "/bindings.rs")).expect("read OUT_DIR/bindings.rs");
    let path = format!("{MANIFEST}/bindings/cudart-{version}.rs");
    let release = format!("{}.{}", version / 1000, version % 1000 / 10);
    match fs::read_to_string(&path) {
        Ok(committed) => {
            if committed != built {
                let line = committed.lines().zip(built.lines()).position(|(a, b)| a != b);
                panic!(
                    "{path} differs from the bindings generated from {} (first differing line: {}; {} vs {} lines): \
                     the headers or bindgen changed; run scripts/pregenerate-bindings.sh {release}",
                    cuda_conformance_sys::BUILD_TOOLKIT_INCLUDE,
                    line.map_or("none, one is a prefix of the other".into(), |l| (l + 1).to_string()),
                    committed.lines().count(),
                    built.lines().count(),
                );
            }
        }
        // A toolkit of the user's own (e.g. /usr/local/cuda 12.6) has no committed file, and needs none; one that
        // scripts/setup.sh installed is a pinned release and must have its file.
        Err(_) => assert!(
            !cuda_conformance_sys::BUILD_TOOLKIT_ROOT.contains("/.toolkit/"),
            "CUDA {release} is pinned by scripts/setup.sh but has no committed {path}: run \
             scripts/pregenerate-bindings.sh {release} and add {version} to PREGENERATED in build.rs"
        ),
    }
}

#[test]
fn every_listed_release_has_its_file_and_no_file_is_unlisted() {
    let listed = listed_releases();
    assert!(!listed.is_empty());
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(listed, sorted, "PREGENERATED must be oldest first: the last one is the docs.rs default");
    let mut files: Vec<u32> = fs::read_dir(format!("{MANIFEST}/bindings"))
        .expect("read bindings/")
        .map(|e| e.expect("a bindings/ entry").file_name().into_string().expect("a UTF-8 name"))
        .map(|n| {
            n.strip_prefix("cudart-")
                .and_then(|n| n.strip_suffix(".rs"))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("bindings/{n}: not cudart-<CUDART_VERSION>.rs"))
        })
        .collect();
    files.sort_unstable();
    assert_eq!(files, listed, "bindings/ and PREGENERATED in build.rs disagree");
}

/// What docs.rs must show: functions from both ends of the window are in the newest committed bindings.
#[test]
fn the_docs_release_declares_the_graph_and_batch_copy_calls() {
    let newest = *listed_releases().last().expect("a release");
    let text = fs::read_to_string(format!("{MANIFEST}/bindings/cudart-{newest}.rs")).expect("read the bindings");
    for f in ["cudaGraphExecUpdate", "cudaMemcpyBatchAsync", "cudaGetDeviceCount", "cudaStreamBeginCapture"] {
        assert!(text.contains(&format!("pub fn {f}(")), "bindings/cudart-{newest}.rs lacks {f}");
    }
}
