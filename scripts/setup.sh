#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build this workspace, and nothing else:
#   1. libclang (for bindgen in cuda-sys), from apt, if no libclang is found;
#   2. the pinned CUDA 13.0 toolkit subset from PyPI into .toolkit/ (git-ignored), unless a toolkit is
#      already named by CUDA_HOME / CUDA_PATH / CUDA_ROOT / CUDA_TOOLKIT_ROOT_DIR or .toolkit/ is complete.
# Idempotent: a second run does nothing. After it, plain `cargo build` / `cargo test` work.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
toolkit_dir="$repo/.toolkit"
toolkit_root="$toolkit_dir/nvidia/cu13"

say() { printf 'setup: %s\n' "$*"; }

have_libclang() {
    # bindgen needs libclang.so and clang's own headers (stddef.h, limits.h).
    ldconfig -p 2>/dev/null | grep -q 'libclang[-0-9.]*\.so' &&
        compgen -G '/usr/lib/llvm-*/lib/clang/*/include/stddef.h' >/dev/null
}

if have_libclang; then
    say "libclang: found"
elif command -v apt-get >/dev/null; then
    say "libclang: installing libclang1-14 libclang-common-14-dev with apt"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq --no-install-recommends libclang1-14 libclang-common-14-dev >/dev/null
else
    say "libclang: not found and no apt-get here; install libclang (>= 9) and its headers yourself" >&2
    exit 1
fi

explicit=""
for var in CUDA_HOME CUDA_PATH CUDA_ROOT CUDA_TOOLKIT_ROOT_DIR; do
    if [ -n "${!var:-}" ]; then explicit="$var=${!var}"; break; fi
done
if [ -n "$explicit" ]; then
    say "CUDA toolkit: using $explicit (set by you); not installing the pinned wheels"
elif [ -x "$toolkit_root/bin/nvcc" ] && [ -f "$toolkit_root/lib/libcudart_static.a" ] &&
    [ -x "$toolkit_root/nvvm/bin/cicc" ] && [ -f "$toolkit_root/include/crt/host_config.h" ]; then
    say "CUDA toolkit: found $toolkit_root"
else
    say "CUDA toolkit: installing the pinned CUDA 13.0 wheels into $toolkit_dir"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
        --target "$toolkit_dir" --upgrade -r "$repo/scripts/cuda-13.0-requirements.txt"
    say "CUDA toolkit: $("$toolkit_root/bin/nvcc" --version | tail -n 2 | head -n 1)"
fi
