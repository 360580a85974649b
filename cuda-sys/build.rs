//! Finds a CUDA toolkit, generates the runtime-API bindings from its headers with bindgen, and links cudart.
//!
//! Discovery order (the first candidate that holds both the headers and the cudart library wins):
//! `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT`, `CUDA_TOOLKIT_ROOT_DIR`, the workspace's `.toolkit/nvidia/cu13`
//! (installed by `scripts/setup.sh`), the folder above `nvcc` on `PATH`, `/usr/local/cuda`.
//!
//! Emits `links = "cuda_conformance_cudart"` metadata for dependents: `DEP_CUDA_CONFORMANCE_CUDART_ROOT`, `DEP_CUDA_CONFORMANCE_CUDART_INCLUDE`,
//! `DEP_CUDA_CONFORMANCE_CUDART_LIB_DIR`, `DEP_CUDA_CONFORMANCE_CUDART_VERSION` (e.g. `13000`) and `DEP_CUDA_CONFORMANCE_CUDART_LINK` (`static`/`dynamic`).

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const ROOT_VARS: [&str; 4] = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"];
const LIB_SUBDIRS: [&str; 3] = ["lib64", "lib", "targets/x86_64-linux/lib"];

struct Toolkit {
    root: PathBuf,
    include: PathBuf,
    lib_dir: PathBuf,
    found_via: String,
}

fn main() {
    for var in ROOT_VARS.iter().chain(&["PATH"]) {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=wrapper.h");

    println!("cargo:rerun-if-env-changed={DOCS_RS}");
    println!("cargo:rerun-if-env-changed={PREGENERATED_VAR}");
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC").is_some();
    let toolkit = match find_toolkit(dynamic) {
        Ok(toolkit) => toolkit,
        // docs.rs has no CUDA toolkit: document the committed bindings. Only there (or where DOCS_RS is set by
        // hand): anywhere else a missing toolkit is an error, since bindings not from the linked library's own
        // headers are how an ABI mismatch slips in.
        Err(_) if env::var_os(DOCS_RS).is_some() => return use_pregenerated(),
        Err(tried) => fail(&tried),
    };
    let header = toolkit.include.join("cuda_runtime_api.h");
    println!("cargo:rerun-if-changed={}", header.display());
    println!("cargo:rerun-if-changed={}", toolkit.include.join("driver_types.h").display());
    let version = read_cudart_version(&header);
    emit_version_cfgs(version);

    link_cudart(&toolkit, dynamic);
    generate_bindings(&toolkit);

    // `links` metadata: dependents read these as DEP_CUDA_CONFORMANCE_CUDART_*.
    println!("cargo:root={}", toolkit.root.display());
    println!("cargo:include={}", toolkit.include.display());
    println!("cargo:lib_dir={}", toolkit.lib_dir.display());
    println!("cargo:version={version}");
    println!("cargo:link={}", if dynamic { "dynamic" } else { "static" });
    // The generated bindings themselves: the harness's API table (harness/build.rs) is generated from them.
    println!(
        "cargo:bindings={}",
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("bindings.rs").display()
    );
    // The same facts, compiled into the crate (see `BUILD_*` constants in lib.rs).
    println!("cargo:rustc-env=CUDA_SYS_ROOT={}", toolkit.root.display());
    println!("cargo:rustc-env=CUDA_SYS_INCLUDE={}", toolkit.include.display());
    // For the symbol test (tests/symbols.rs): the folder of the cudart that is linked.
    println!("cargo:rustc-env=CUDA_SYS_LIB_DIR={}", toolkit.lib_dir.display());
    println!("cargo:rustc-env=CUDA_SYS_FOUND_VIA={}", toolkit.found_via);
    println!("cargo:rustc-env=CUDA_SYS_CUDART_VERSION={version}");
    println!("cargo:rustc-env=CUDA_SYS_LINK={}", if dynamic { "dynamic" } else { "static" });
}

const DOCS_RS: &str = "DOCS_RS";
/// Which committed release a no-toolkit docs build documents (e.g. `12.9`); the newest by default.
const PREGENERATED_VAR: &str = "CUDA_CONFORMANCE_SYS_DOCS_CUDA";
/// The committed bindings, `bindings/cudart-<CUDART_VERSION>.rs`, oldest first: one per release that
/// `scripts/setup.sh` pins (the test `pregenerated` regenerates the build's own and fails on any drift).
const PREGENERATED: [u32; 9] = [12000, 12030, 12090, 13000, 13010, 13020, 13030, 13040, 13050];

/// The no-toolkit docs build: the committed bindings of one release, its cfgs, and nothing to link (rustdoc
/// links nothing). `BUILD_TOOLKIT_*` say where the bindings came from.
fn use_pregenerated() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let version = match env::var(PREGENERATED_VAR) {
        Ok(v) => {
            let wanted = v
                .trim()
                .split_once('.')
                .and_then(|(major, minor)| Some(major.parse::<u32>().ok()? * 1000 + minor.parse::<u32>().ok()? * 10));
            match wanted.filter(|w| PREGENERATED.contains(w)) {
                Some(w) => w,
                None => {
                    let known: Vec<String> =
                        PREGENERATED.iter().map(|r| format!("{}.{}", r / 1000, r % 1000 / 10)).collect();
                    eprintln!(
                        "\n\ncuda-sys: {PREGENERATED_VAR}={v}: no committed bindings for that release (committed: {})\n",
                        known.join(", ")
                    );
                    std::process::exit(1);
                }
            }
        }
        Err(_) => PREGENERATED[PREGENERATED.len() - 1],
    };
    let file = manifest.join(format!("bindings/cudart-{version}.rs"));
    println!("cargo:rerun-if-changed={}", file.display());
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy(&file, out.join("bindings.rs"))
        .unwrap_or_else(|e| panic!("cuda-sys: cannot copy the committed {}: {e}", file.display()));
    emit_shape_cfgs(&fs::read_to_string(&file).expect("read the committed bindings"));
    // The layout test's inputs: empty, since there is no C++ compiler's view to compare with here.
    fs::write(out.join("layout_table.rs"), "pub const LAYOUTS: &[(&str, usize, usize, &[(&str, usize)])] = &[];\n")
        .expect("write layout_table.rs");
    fs::write(out.join("layout_probe.cpp"), "int main() { return 0; }\n").expect("write layout_probe.cpp");
    emit_version_cfgs(version);
    println!("cargo:version={version}");
    println!("cargo:link=none");
    println!("cargo:bindings={}", out.join("bindings.rs").display());
    println!("cargo:rustc-env=CUDA_SYS_ROOT=");
    println!("cargo:rustc-env=CUDA_SYS_INCLUDE=");
    println!("cargo:rustc-env=CUDA_SYS_LIB_DIR=");
    println!(
        "cargo:rustc-env=CUDA_SYS_FOUND_VIA=the committed bindings/{} (DOCS_RS, no toolkit)",
        file.file_name().unwrap().to_string_lossy()
    );
    println!("cargo:rustc-env=CUDA_SYS_CUDART_VERSION={version}");
    println!("cargo:rustc-env=CUDA_SYS_LINK=none");
}

/// Returns the first usable toolkit, or the list of (candidate, why it was rejected).
fn find_toolkit(dynamic: bool) -> Result<Toolkit, Vec<String>> {
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    for var in ROOT_VARS {
        if let Some(v) = env::var_os(var).filter(|v| !v.is_empty()) {
            candidates.push((format!("${var}"), PathBuf::from(v)));
        }
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    if let Some(workspace) = manifest.parent() {
        let local = workspace.join(".toolkit/nvidia/cu13");
        println!("cargo:rerun-if-changed={}", local.join("include/cuda_runtime_api.h").display());
        candidates.push(("the workspace's .toolkit (scripts/setup.sh)".into(), local));
    }
    if let Some(nvcc) = find_on_path("nvcc") {
        if let Some(root) = nvcc.parent().and_then(Path::parent) {
            candidates.push((format!("nvcc on PATH ({})", nvcc.display()), root.to_path_buf()));
        }
    }
    candidates.push(("the default location".into(), PathBuf::from("/usr/local/cuda")));

    let lib_name = if dynamic { "libcudart.so" } else { "libcudart_static.a" };
    let mut tried = Vec::new();
    for (found_via, root) in candidates {
        let include = root.join("include");
        if !include.join("cuda_runtime_api.h").is_file() {
            tried.push(format!("{} ({found_via}): no include/cuda_runtime_api.h", root.display()));
            continue;
        }
        let lib_dir = LIB_SUBDIRS.iter().map(|d| root.join(d)).find(|d| has_cudart(d, lib_name));
        match lib_dir {
            Some(lib_dir) => return Ok(Toolkit { root, include, lib_dir, found_via }),
            None => {
                tried.push(format!("{} ({found_via}): no {lib_name} in {}", root.display(), LIB_SUBDIRS.join(", ")))
            }
        }
    }
    Err(tried)
}

/// The wheel layout ships only `libcudart.so.13` (no unversioned symlink), so accept any `libcudart.so*`.
fn has_cudart(dir: &Path, lib_name: &str) -> bool {
    if dir.join(lib_name).is_file() {
        return true;
    }
    lib_name == "libcudart.so" && versioned_cudart(dir).is_some()
}

fn versioned_cudart(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("libcudart.so."))
        .collect();
    names.sort();
    names.into_iter().next()
}

fn find_on_path(exe: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?).map(|d| d.join(exe)).find(|p| p.is_file())
}

fn fail(tried: &[String]) -> ! {
    let mut msg = String::from("\n\ncuda-sys: no usable CUDA toolkit found. Tried, in order:\n");
    for t in tried {
        let _ = writeln!(msg, "  - {t}");
    }
    msg.push_str(
        "\nFix: run `scripts/setup.sh` from the repository root (installs the pinned CUDA 13.0 subset into .toolkit/),\n\
         or set CUDA_HOME to a toolkit that has include/cuda_runtime_api.h and lib64/libcudart_static.a.\n",
    );
    // Exit rather than panic: cargo shows the script's stderr, without a backtrace burying the fix.
    eprintln!("{msg}");
    std::process::exit(1);
}

fn read_cudart_version(header: &Path) -> u32 {
    let text = fs::read_to_string(header).unwrap_or_else(|e| panic!("cuda-sys: cannot read {}: {e}", header.display()));
    text.lines()
        .find_map(|l| l.trim().strip_prefix("#define CUDART_VERSION")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("cuda-sys: no `#define CUDART_VERSION` in {}", header.display()))
}

/// The CUDA releases whose API this crate knows: `cudart_ge_<major>_<minor>` is set for each one at or below the
/// toolkit's `CUDART_VERSION` (12.7 never shipped). `compat.rs` uses them; dependents should use `compat` instead.
const RELEASES: [u32; 15] =
    [12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, 13000, 13010, 13020, 13030, 13040, 13050];
const OLDEST: u32 = RELEASES[0];

fn cfg_name(release: u32) -> String {
    format!("cudart_ge_{}_{}", release / 1000, release % 1000 / 10)
}

fn emit_version_cfgs(version: u32) {
    let names: Vec<String> = RELEASES.iter().map(|&r| cfg_name(r)).collect();
    println!("cargo:rustc-check-cfg=cfg({})", names.join(", "));
    if version < OLDEST {
        eprintln!(
            "\n\ncuda-sys: the toolkit's CUDART_VERSION is {version}; this crate supports CUDA 12.0 and newer (its \
             compat module has no forms for older signatures). Run `scripts/setup.sh --cuda 12.0` for the oldest.\n"
        );
        std::process::exit(1);
    }
    for release in RELEASES.iter().filter(|&&r| r <= version) {
        println!("cargo:rustc-cfg={}", cfg_name(*release));
    }
    if version / 1000 > RELEASES[RELEASES.len() - 1] / 1000 {
        println!(
            "cargo:warning=cuda-sys: CUDA {}.{} is a major release newer than any this crate knows; signatures may \
             have changed (see cuda-sys/API-VERSIONS.md)",
            version / 1000,
            version % 1000 / 10
        );
    }
}

fn link_cudart(toolkit: &Toolkit, dynamic: bool) {
    if dynamic {
        // The rpath below reaches only this crate's own tests: a build script's link args never apply to
        // dependents. Cargo does put a dependency's search paths inside target/ on LD_LIBRARY_PATH for `cargo
        // test` and `cargo run` of every package, so a copy of the library in OUT_DIR lets those find it.
        let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("cudart");
        fs::create_dir_all(&out).expect("create OUT_DIR/cudart");
        for entry in fs::read_dir(&toolkit.lib_dir).expect("read the cudart folder").flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("libcudart.so") {
                // fs::copy follows symlinks: each name becomes a plain copy of the library.
                fs::copy(entry.path(), out.join(&name)).expect("copy libcudart into OUT_DIR");
            }
        }
        println!("cargo:rustc-link-search=native={}", out.display());
    }
    println!("cargo:rustc-link-search=native={}", toolkit.lib_dir.display());
    if dynamic {
        if toolkit.lib_dir.join("libcudart.so").is_file() {
            println!("cargo:rustc-link-lib=dylib=cudart");
        } else {
            let name = versioned_cudart(&toolkit.lib_dir).expect("checked by find_toolkit");
            println!("cargo:rustc-link-lib=dylib:+verbatim={name}");
        }
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", toolkit.lib_dir.display());
    } else {
        // cudart_static dlopens the driver's libcuda.so.1 at run time and needs these system libraries.
        println!("cargo:rustc-link-lib=static=cudart_static");
        for lib in ["dl", "rt", "pthread"] {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
}

/// Cfgs for struct shapes that changed within a major release, read from the generated bindings themselves, so
/// every minor release in between (13.1 to 13.4 included, whose headers this crate has not pinned) gets the form
/// its own header has: `cuda_sys_mem_location_union` where `cudaMemLocation`'s `id` sits in an anonymous union
/// (13.5's header; 13.0 has a plain `int id`).
fn emit_shape_cfgs(bindings: &str) {
    println!("cargo:rustc-check-cfg=cfg(cuda_sys_mem_location_union)");
    if bindings.contains("pub union cudaMemLocation__bindgen_ty_1") {
        println!("cargo:rustc-cfg=cuda_sys_mem_location_union");
    }
}

/// Struct and field names bindgen generated, collected through its callbacks so that the layout test covers
/// every struct without a hand-kept list.
#[derive(Debug, Default)]
struct Layouts {
    structs: BTreeMap<String, Vec<String>>,
}

#[derive(Debug)]
struct Callbacks {
    layouts: Arc<Mutex<Layouts>>,
}

impl bindgen::callbacks::ParseCallbacks for Callbacks {
    fn process_comment(&self, comment: &str) -> Option<String> {
        // Doxygen (\brief, \param, \return, \sa ...) to rustdoc Markdown; keep the raw text if that fails.
        Some(doxygen_bindgen::transform(comment).unwrap_or_else(|_| comment.to_owned()))
    }

    fn add_derives(&self, info: &bindgen::callbacks::DeriveInfo<'_>) -> Vec<String> {
        if info.kind == bindgen::callbacks::TypeKind::Struct {
            let mut l = self.layouts.lock().unwrap();
            l.structs.entry(info.name.to_owned()).or_default();
        }
        vec![]
    }

    fn field_visibility(&self, info: bindgen::callbacks::FieldInfo<'_>) -> Option<bindgen::FieldVisibilityKind> {
        let mut l = self.layouts.lock().unwrap();
        l.structs.entry(info.type_name.to_owned()).or_default().push(info.field_name.to_owned());
        None
    }
}

fn generate_bindings(toolkit: &Toolkit) {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let layouts = Arc::new(Mutex::new(Layouts::default()));
    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_arg(format!("-I{}", toolkit.include.display()))
        // The whole runtime API: every cuda* function, type and constant (graphs and capture included).
        .allowlist_function("cuda.*")
        .allowlist_type("cuda.*|CUDA.*|dim3|CU.*")
        .allowlist_var("cuda.*|CUDA.*|CUDART.*")
        // Enums as newtypes: a value the bindings do not know (a newer driver's error code, OR-ed flags) is
        // representable instead of undefined behaviour, as a Rust enum would make it.
        .default_enum_style(bindgen::EnumVariation::NewType { is_bitfield: false, is_global: false })
        .must_use_type("cudaError")
        // Debug and Display print the name (error_name.rs), not `cudaError(35)`.
        .no_debug("cudaError")
        .derive_default(true)
        .generate_comments(true)
        .clang_arg("-fparse-all-comments")
        .layout_tests(true)
        .parse_callbacks(Box::new(Callbacks { layouts: Arc::clone(&layouts) }))
        .generate()
        .unwrap_or_else(|e| panic!("cuda-sys: bindgen failed on {}: {e}", toolkit.include.display()));
    bindings.write_to_file(out.join("bindings.rs")).expect("write bindings.rs");
    emit_shape_cfgs(&fs::read_to_string(out.join("bindings.rs")).expect("read bindings.rs"));

    let layouts = layouts.lock().unwrap();
    write_layout_probe(&layouts, &out);
}

/// Writes two views of the same list: `layout_probe.cpp` (the C++ compiler's sizeof/alignof/offsetof, compiled and
/// run by the layout test) and `layout_table.rs` (the same numbers as Rust sees them).
fn write_layout_probe(layouts: &Layouts, out: &Path) {
    let mut cpp =
        String::from("#include <cstdio>\n#include <cstddef>\n#include \"cuda_runtime_api.h\"\nint main() {\n");
    let mut rs = String::from("/// (C name, size, align, [(field, offset)]) for every struct bindgen generated.\n");
    rs.push_str("pub const LAYOUTS: &[(&str, usize, usize, &[(&str, usize)])] = &[\n");
    for (name, fields) in &layouts.structs {
        // Anonymous types and bitfield units have no C spelling.
        if name.contains("bindgen") || name.starts_with('_') {
            continue;
        }
        // Opaque handles (`struct CUstream_st;`) are incomplete types in C: bindgen gives them only `_unused`.
        let named: Vec<&String> = fields.iter().filter(|f| !f.starts_with('_')).collect();
        if named.is_empty() {
            continue;
        }
        let _ = writeln!(cpp, "  std::printf(\"{name} %zu %zu\\n\", sizeof({name}), alignof({name}));");
        let _ = write!(rs, "  (\"{name}\", ::core::mem::size_of::<{name}>(), ::core::mem::align_of::<{name}>(), &[");
        for f in named {
            let _ = writeln!(cpp, "  std::printf(\"{name}.{f} %zu\\n\", offsetof({name}, {}));", c_field_name(f));
            let _ = write!(rs, "(\"{f}\", ::core::mem::offset_of!({name}, {f})), ");
        }
        rs.push_str("]),\n");
    }
    cpp.push_str("  return 0;\n}\n");
    rs.push_str("];\n");
    fs::write(out.join("layout_probe.cpp"), cpp).expect("write layout_probe.cpp");
    fs::write(out.join("layout_table.rs"), rs).expect("write layout_table.rs");
}

/// bindgen appends `_` to C field names that are Rust keywords (`type` becomes `type_`); undo that for C.
fn c_field_name(rust_name: &str) -> &str {
    const KEYWORDS: [&str; 12] =
        ["type", "fn", "ref", "mod", "move", "loop", "match", "impl", "self", "use", "in", "box"];
    match rust_name.strip_suffix('_') {
        Some(stem) if KEYWORDS.contains(&stem) => stem,
        _ => rust_name,
    }
}
