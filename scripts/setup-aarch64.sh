#!/usr/bin/env bash
# What an x86-64 Debian/Ubuntu machine needs to cross-build the crates and the bundle for aarch64-unknown-linux-gnu
# (Grace Hopper), on top of scripts/setup.sh (libclang, the kernel compiler, which run on the build host):
#   1. Debian's cross toolchain: gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (apt, when missing);
#   2. the Rust target (rustup target add, when missing);
#   3. the CUDA 13.0 runtime for aarch64 (scripts/cuda-13.0-aarch64-requirements.txt, pinned with hashes, from PyPI's
#      manylinux2014_aarch64 wheels) assembled into .toolkit/cu13.0-aarch64 (include/, lib/; or $CUDA_AARCH64_HOME).
# A second run does nothing. Then build with the variables it prints (scripts/ci-aarch64.sh does).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
target=aarch64-unknown-linux-gnu
root=${CUDA_AARCH64_HOME:-$repo/.toolkit/cu13.0-aarch64}
say() { printf 'setup-aarch64: %s\n' "$*"; }

if ! command -v aarch64-linux-gnu-gcc >/dev/null || [ ! -f /usr/aarch64-linux-gnu/include/stdio.h ]; then
    say "installing gcc-aarch64-linux-gnu libc6-dev-arm64-cross with apt"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null
fi
say "cross compiler: $(aarch64-linux-gnu-gcc --version | head -n 1)"
if ! rustup target list --installed | grep -qx "$target"; then
    say "rustup target add $target"
    rustup target add "$target"
fi
if [ ! -f "$root/.complete" ]; then
    say "CUDA runtime for aarch64: installing the pinned wheels into $root"
    rm -rf "$root"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --require-hashes --only-binary=:all: \
        --platform manylinux2014_aarch64 --target "$root/wheels" -r "$repo/scripts/cuda-13.0-aarch64-requirements.txt"
    mv "$root/wheels/nvidia/cu13/include" "$root/wheels/nvidia/cu13/lib" "$root/"
    find "$root/include" "$root/lib" -name '__init__.py' -delete
    rm -rf "$root/wheels"
    [ -f "$root/lib/libcudart_static.a" ] && [ -f "$root/include/crt/host_defines.h" ] ||
        { say "no libcudart_static.a or crt/host_defines.h in $root" >&2; exit 1; }
    touch "$root/.complete"
fi
say "CUDA runtime for aarch64: $(grep -m1 '#define CUDART_VERSION' "$root/include/cuda_runtime_api.h") in $root"
say "build with: CUDA_HOME=$root CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc" \
    "CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc cargo build --target $target"
