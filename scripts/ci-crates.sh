#!/usr/bin/env bash
# The publishable crates, as crates.io and docs.rs would see them (issue 21). Needs scripts/setup.sh (the 13.0
# toolkit) and network for crates.io's index. Usage: scripts/ci-crates.sh   (works in a temporary folder outside the
# repository, so that neither cargo's workspace search nor the build script's .toolkit search reaches back into it)
#   1. `cargo package` of cuda-conformance-sys and cuda-conformance-harness (each unpacked and built, the harness
#      against the packaged sys crate), every packaged file on an allowlist, and the packaged sizes printed;
#   2. the docs.rs build: the packaged sys crate, unpacked outside the workspace with no toolkit anywhere (no CUDA_*
#      variables, no nvcc on PATH, no /usr/local/cuda): without DOCS_RS it must fail to find a toolkit, with
#      DOCS_RS=1 `cargo doc` must pass and document cudaGraphExecUpdate and cudaMemcpyBatchAsync;
#   3. a fresh crate outside the workspace that depends on the sys crate by path builds, links the static cudart,
#      and runs a call of cudaGetDeviceCount (no GPU here: it prints the error code, which must have a name).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { printf 'ci-crates: %s\n' "$*"; }
fail() { say "FAIL: $*" >&2; exit 1; }
toolkit="$repo/.toolkit/nvidia/cu13"
[ -f "$toolkit/include/cuda_runtime_api.h" ] || fail "no $toolkit: run scripts/setup.sh first"

# 1. Package. The verify step builds the unpacked copies under <target>/package/, outside the reach of the
# workspace's .toolkit, so the toolkit is named. It builds into a target folder of its own that starts empty: the
# harness is verified against the sys crate from cargo's temporary local registry, and cargo takes a registry
# crate's build for immutable (no source fingerprint), so a target/ kept from an older commit verifies the harness
# against that commit's sys crate (seen in CI: "cannot find function `memcpy_batch_async` in module `sys::compat`").
# Files allowed in each package (anything else is a stray file):
allowed_common='^(\.cargo_vcs_info\.json|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|README\.md|LICENSE-APACHE|LICENSE-MIT)$'
allowed_sys='^(build\.rs|wrapper\.h|API-VERSIONS\.md|src/[a-z_]+\.rs|bindings/cudart-[0-9]+\.rs)$'
allowed_harness='^(build\.rs|src/[a-z_/]+\.rs|src/repro/header\.h|kernels/(probes|conditional|device_launch)\.cu)$'
for pair in "cuda-conformance-sys:$allowed_sys" "cuda-conformance-harness:$allowed_harness"; do
    crate=${pair%%:*} allowed=${pair#*:}
    stray=$(cargo package -q -p "$crate" --list | grep -Ev "$allowed_common" | grep -Ev "$allowed" || true)
    [ -z "$stray" ] || fail "$crate would package files outside its allowlist: $stray"
done
packages="$repo/target/ci-crates-package"
rm -rf "$packages"
CUDA_HOME="$toolkit" cargo package --target-dir "$packages" -p cuda-conformance-sys -p cuda-conformance-harness 2>&1 |
    grep -E '^ *(Packaged|Verifying|Finished|error)' | tee "$work/package.log"
for crate in cuda-conformance-sys cuda-conformance-harness; do
    file="$packages/package/$crate-0.1.0.crate"
    [ -f "$file" ] || fail "no $file"
    say "$crate: $(tar -tzf "$file" | wc -l) files, $(du -k "$file" | cut -f1) KiB packaged"
done

# 2. docs.rs: the packaged sys crate with no toolkit visible.
docs="$work/docs-rs"
mkdir -p "$docs" && tar -xzf "$packages/package/cuda-conformance-sys-0.1.0.crate" -C "$docs"
src="$docs/cuda-conformance-sys-0.1.0"
[ ! -e /usr/local/cuda ] || fail "/usr/local/cuda exists: this check needs a machine with no toolkit there"
bare_path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/nvcc" ] || printf '%s:' "$d"; done)
no_toolkit=(env -u CUDA_HOME -u CUDA_PATH -u CUDA_ROOT -u CUDA_TOOLKIT_ROOT_DIR -u DOCS_RS "PATH=$bare_path"
    "CARGO_TARGET_DIR=$repo/target/ci-crates-target")
if "${no_toolkit[@]}" cargo doc -q --no-deps --manifest-path "$src/Cargo.toml" >"$work/no-docs-rs.log" 2>&1; then
    fail "the sys crate built without a toolkit and without DOCS_RS: the check below would prove nothing"
fi
grep -q 'no usable CUDA toolkit found' "$work/no-docs-rs.log" || fail "unexpected failure: $(tail -5 "$work/no-docs-rs.log")"
"${no_toolkit[@]}" DOCS_RS=1 cargo doc -q --no-deps --manifest-path "$src/Cargo.toml" 2>&1 | tee "$work/docs-rs.log" |
    grep -v '^warning' || true
html="$repo/target/ci-crates-target/doc/cuda_conformance_sys"
for f in cudaGraphExecUpdate cudaMemcpyBatchAsync cudaGetDeviceCount; do
    [ -f "$html/fn.$f.html" ] || fail "the DOCS_RS docs have no $f ($html/fn.$f.html)"
done
grep -q 'DOCS_RS, no toolkit' "$html/constant.BUILD_TOOLKIT_FOUND_VIA.html" ||
    fail "the docs were not built from the committed bindings"
say "docs.rs build: $(ls "$html" | grep -c '^fn\.') functions documented with no toolkit"

# 3. A fresh crate outside the workspace, depending on the sys crate by path.
user="$work/fresh-user"
mkdir -p "$user/src"
cat >"$user/Cargo.toml" <<TOML
[package]
name = "fresh-user"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
cuda-conformance-sys = { path = "$repo/cuda-sys" }

[workspace]
TOML
cat >"$user/src/main.rs" <<'RS'
fn main() {
    let mut count = 0;
    // SAFETY: count is a valid out-pointer.
    let code = unsafe { cuda_conformance_sys::cudaGetDeviceCount(&mut count) };
    println!("cudaGetDeviceCount: {code:?}, {count} device(s); cudart {}", cuda_conformance_sys::BUILD_CUDART_VERSION);
}
RS
cp Cargo.lock "$user/Cargo.lock" # the workspace's versions of bindgen & co.; cargo drops the rest
out=$(CARGO_TARGET_DIR="$repo/target/ci-crates-target" cargo run -q --manifest-path "$user/Cargo.toml" 2>/dev/null)
say "fresh crate: $out"
printf '%s\n' "$out" | grep -Eq '^cudaGetDeviceCount: cuda[A-Za-z]+, [0-9]+ device' ||
    fail "the fresh crate's call printed no named cudaError"
