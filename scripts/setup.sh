#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build this workspace, and nothing else:
#   1. libclang (for bindgen in cuda-sys), from apt, if no libclang is found;
#   2. a pinned CUDA toolkit subset from PyPI (headers and cudart for cuda-sys):
#        (default)      CUDA 13.0 into .toolkit/nvidia/cu13, unless a toolkit is already named by CUDA_HOME /
#                       CUDA_PATH / CUDA_ROOT / CUDA_TOOLKIT_ROOT_DIR;
#        --cuda 12.9    CUDA 12.9 (static cudart: the fleet bundle's runtime) into .toolkit/cu12.9;
#        --cuda 12.0    CUDA 12.0 (libcudart.so.12 only: build with --features cuda-sys/dynamic) into .toolkit/cu12.0;
#        --cuda 13.5    CUDA 13.5, the newest 13.x (static cudart) into .toolkit/cu13.5;
#        --cuda 13.1 … 13.4   the 13.x minors in between, likewise (CI checks that each builds);
#        --cuda 12.3    likewise (graph edge data came in 12.3; scripts/api-versions.py reads its headers);
#      each version is pinned with hashes in scripts/cuda-<version>-requirements.txt. cuda-sys finds the default
#      by itself; choose another with CUDA_HOME (e.g. CUDA_HOME=$PWD/.toolkit/cu12.9, best with its own
#      CARGO_TARGET_DIR so the two builds do not rebuild each other);
#   3. the kernel compiler (NVRTC 12.0 and nvFatbin 12.4, pinned in scripts/kernel-compiler-requirements.txt) into
#      .toolkit/kernel-compiler: the root build.rs compiles kernels/probes.cu with it for every toolkit;
#   4. the Vulkan headers (Debian's libvulkan-dev), from apt, if <vulkan/vulkan.h> is missing: the reproducers of the
#      external-resource cases include it (they dlopen the loader at run time, so nothing links libvulkan).
# Idempotent: a second run does nothing. After it, plain `cargo build` / `cargo test` work.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
toolkit_dir="$repo/.toolkit"

say() { printf 'setup: %s\n' "$*"; }

cuda=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cuda) cuda="${2:-}"; shift 2 || { say "--cuda needs a version, e.g. --cuda 12.9" >&2; exit 2; } ;;
        --cuda=*) cuda="${1#--cuda=}"; shift ;;
        -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) say "unknown argument: $1 (usage: scripts/setup.sh [--cuda VERSION])" >&2; exit 2 ;;
    esac
done
if [ -n "$cuda" ] && [ ! -f "$repo/scripts/cuda-$cuda-requirements.txt" ]; then
    known=$(cd "$repo/scripts" && ls cuda-*-requirements.txt | sed 's/^cuda-\(.*\)-requirements.txt$/\1/' | tr '\n' ' ')
    say "no pinned CUDA $cuda: scripts/cuda-$cuda-requirements.txt is missing (pinned: $known)" >&2
    exit 2
fi

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

# The Vulkan headers: only the reproducers of cases/external-resources.case need them (the test that compiles every
# reproducer fails without them); the Rust build does not (ash carries its own bindings and loads the loader at run
# time).
if [ -f /usr/include/vulkan/vulkan.h ]; then
    say "Vulkan headers: found"
elif command -v apt-get >/dev/null; then
    say "Vulkan headers: installing libvulkan-dev with apt"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq --no-install-recommends libvulkan-dev >/dev/null
else
    say "Vulkan headers: not found and no apt-get here; the external-resource reproducers need <vulkan/vulkan.h>" >&2
fi

# --no-deps: the NVIDIA wheels declare unpinned dependencies that would pull other CUDA versions.
pip_install() { # target requirements-file
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
        --target "$1" --upgrade -r "$2"
}

# CUDA 13.0, the default: the wheels' own layout is a toolkit root (nvidia/cu13: include/, lib/, bin/nvcc).
install_13_0() {
    local root="$toolkit_dir/nvidia/cu13"
    if [ -f "$root/lib/libcudart_static.a" ] && [ -f "$root/include/crt/host_config.h" ] &&
        [ -x "$root/bin/nvcc" ] && [ -x "$root/nvvm/bin/cicc" ]; then
        say "CUDA toolkit: found $root"
        return
    fi
    say "CUDA toolkit: installing the pinned CUDA 13.0 wheels into $toolkit_dir"
    pip_install "$toolkit_dir" "$repo/scripts/cuda-13.0-requirements.txt"
    say "CUDA toolkit: $(grep -m1 '#define CUDART_VERSION' "$root/include/cuda_runtime_api.h") in $root"
}

# Every other release is assembled into .toolkit/cu<version> (include/ with crt/, lib/) from its pinned runtime
# wheels, so that it never shadows the default 13.0 in .toolkit/nvidia/cu13; a .complete stamp marks a finished copy.
# The layouts differ: the cu12 wheels spread a toolkit over nvidia/cuda_runtime and nvidia/cuda_nvcc, while the 13.x
# wheels keep the nvidia/cu13 root, so the runtime and crt wheels alone make one.
install_assembled() {
    local version=$1 root="$toolkit_dir/cu$1"
    if [ -f "$root/.complete" ]; then
        say "CUDA toolkit: found $root"
        return
    fi
    say "CUDA toolkit: installing the pinned CUDA $version wheels into $root"
    rm -rf "$root"
    pip_install "$root/wheels" "$repo/scripts/cuda-$version-requirements.txt"
    case "$version" in
        12.*)
            mkdir -p "$root/include" "$root/lib"
            cp -r "$root/wheels/nvidia/cuda_runtime/include/." "$root/wheels/nvidia/cuda_nvcc/include/." "$root/include/"
            cp -r "$root/wheels/nvidia/cuda_runtime/lib/." "$root/lib/"
            ;;
        *) mv "$root/wheels/nvidia/cu13/include" "$root/wheels/nvidia/cu13/lib" "$root/" ;;
    esac
    find "$root/include" "$root/lib" -name '__init__.py' -delete
    rm -rf "$root/wheels" # ptxas and libnvvm of the 12.x wheels: not needed, most of the download
    [ -f "$root/include/crt/host_defines.h" ] || { say "no crt/host_defines.h in $root/include" >&2; exit 1; }
    # 12.0-12.8 have no static cudart on PyPI; every 13.x wheel has one.
    case "$version" in
        13.*) [ -f "$root/lib/libcudart_static.a" ] || { say "no libcudart_static.a in $root/lib" >&2; exit 1; } ;;
    esac
    touch "$root/.complete"
    local link="static (libcudart_static.a)"
    [ -f "$root/lib/libcudart_static.a" ] || link="dynamic only: build with --features cuda-sys/dynamic"
    say "CUDA toolkit: $(grep -m1 '#define CUDART_VERSION' "$root/include/cuda_runtime_api.h") in $root, $link"
    say "CUDA toolkit: build with CUDA_HOME=$root (and e.g. CARGO_TARGET_DIR=target/cu$version)"
}

explicit=""
for var in CUDA_HOME CUDA_PATH CUDA_ROOT CUDA_TOOLKIT_ROOT_DIR; do
    if [ -n "${!var:-}" ]; then explicit="$var=${!var}"; break; fi
done
case "$cuda" in
    "")
        if [ -n "$explicit" ]; then
            say "CUDA toolkit: using $explicit (set by you); not installing the pinned wheels"
        else
            install_13_0
        fi
        ;;
    13.0) install_13_0 ;;
    *) install_assembled "$cuda" ;;
esac

# The kernel compiler, whatever the toolkit: see scripts/kernel-compiler-requirements.txt for why NVRTC 12.0.
compiler="$toolkit_dir/kernel-compiler"
if [ -f "$compiler/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] && [ -f "$compiler/nvidia/nvfatbin/lib/libnvfatbin.so.12" ]; then
    say "kernel compiler: found $compiler"
else
    say "kernel compiler: installing the pinned NVRTC 12.0 and nvFatbin 12.4 wheels into $compiler"
    pip_install "$compiler" "$repo/scripts/kernel-compiler-requirements.txt"
fi
