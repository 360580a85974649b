#!/usr/bin/env bash
# Builds the seeds' programs (seeds/*.cu: the tutorials' programs as written, completed where they elide code, and
# the nvbandwidth-style copy program) with nvcc into one executable each, for `cuda-conformance seeds`.
#
#   scripts/build-seeds.sh [OUT_DIR]      default target/seeds
#
# nvcc is the CUDA 13.0 toolkit's from PyPI (scripts/setup.sh installs it into .toolkit/nvidia/cu13), or
# $CUDA_HOME/bin/nvcc when that exists. cudart is linked statically, so the programs need only the driver (R580,
# CUDA 13.0, or newer: nvcc 13 writes PTX ISA 9.0 and ABI-8 cubins, which older drivers cannot load). Targets:
# CUDA_CONFORMANCE_ARCHS (e.g. `80,90`), default 90, plus PTX of the lowest, as for the probe kernels.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/target/seeds}
toolkit=${CUDA_HOME:-}
if [ -z "$toolkit" ] || [ ! -x "$toolkit/bin/nvcc" ]; then
    toolkit="$repo/.toolkit/nvidia/cu13"
fi
nvcc="$toolkit/bin/nvcc"
[ -x "$nvcc" ] || { echo "build-seeds: no nvcc at $nvcc: run scripts/setup.sh first" >&2; exit 1; }
archs=${CUDA_CONFORMANCE_ARCHS:-90}
gencode=()
lowest=""
for arch in ${archs//,/ }; do
    gencode+=(-gencode "arch=compute_$arch,code=sm_$arch")
    if [ -z "$lowest" ] || [ "$arch" -lt "$lowest" ]; then lowest=$arch; fi
done
gencode+=(-gencode "arch=compute_$lowest,code=compute_$lowest")
mkdir -p "$out"
for source in "$repo"/seeds/*.cu; do
    name=$(basename "$source" .cu)
    # -O2 for the host code, -std=c++17 for the lambdas; cudart static from the toolkit's lib/ (the wheel layout).
    "$nvcc" -O2 -std=c++17 "${gencode[@]}" -cudart static -L"$toolkit/lib" -o "$out/$name" "$source"
done
printf 'build-seeds: %s programs in %s (%s, sm_%s + compute_%s PTX)\n' "$(ls "$repo"/seeds/*.cu | wc -l)" "$out" \
    "$("$nvcc" --version | grep -o 'release [0-9.]*')" "${archs//,/, sm_}" "$lowest"
