#!/usr/bin/env bash
# The aarch64 cross-build (issue 33): the crates and the bundle for aarch64-unknown-linux-gnu (Grace Hopper), from
# this x86-64 machine, with Debian's cross toolchain and the pinned aarch64 wheels of the CUDA 13.0 runtime
# (scripts/setup-aarch64.sh). One `cargo build --release` of the CLI for the target (the bundle's; no test build: the
# GPU trials could not run here anyway), in its own target dir. Checked: the binary is an AArch64 ELF that needs no
# libcudart (cudart is linked in) and at most glibc 2.34, and the MANIFEST names the target. Not run: no aarch64 host
# or GPU here (qemu could run `check`, but no case).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'ci-aarch64: %s\n' "$*"; }
target=aarch64-unknown-linux-gnu
started=$(date +%s)
bash scripts/setup-aarch64.sh
cuda_home=${CUDA_AARCH64_HOME:-$PWD/.toolkit/cu13.0-aarch64}
setup_s=$(($(date +%s) - started))
BUNDLE_TARGET=$target CUDA_HOME="$cuda_home" CARGO_TARGET_DIR="$PWD/target/$target" bash scripts/bundle.sh
build_s=$(($(date +%s) - started - setup_s))
bin=bundle-aarch64/bin/cuda-conformance
machine=$(aarch64-linux-gnu-readelf -h "$bin" | sed -n 's/^ *Machine: *//p')
[ "$machine" = AArch64 ] || { say "FAILED: $bin is a $machine binary"; exit 1; }
if aarch64-linux-gnu-readelf -d "$bin" | grep -q 'NEEDED.*libcudart'; then
    say "FAILED: $bin needs libcudart"
    exit 1
fi
glibc=$(aarch64-linux-gnu-objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
grep -qx "target:     $target (cross-built on x86_64-unknown-linux-gnu; built, not yet run on such a host)" \
    bundle-aarch64/MANIFEST || { say "FAILED: the MANIFEST does not name the target"; sed -n 1,6p bundle-aarch64/MANIFEST; exit 1; }
[ -d bundle-aarch64/cases ] && [ -d bundle-aarch64/deploy ] || { say "FAILED: no cases/ or deploy/ in the bundle"; exit 1; }
say "bundle-aarch64: $machine, needs $glibc, no libcudart; setup ${setup_s} s, build ${build_s} s"
