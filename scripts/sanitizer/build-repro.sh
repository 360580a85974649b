#!/usr/bin/env bash
# Builds scripts/sanitizer/suite_image (issue 23) into DIR (default target/sanitizer-repro): kernels/register.c with
# the kernel image headers that build.rs generated (found in target/*/build/cuda-conformance-*/out; run a cargo
# build first), linked with suite_image.cu by nvcc (the toolkit's, .toolkit/nvidia/cu13, or NVCC). Two binaries:
# suite_image (nvcc kernels as sm_90 cubins) and suite_image_ptx (nvcc kernels as compute_90 PTX, JIT-compiled by
# the driver like the suite's conditional module), so a failure can be put on the image, the JIT or the tool.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/target/sanitizer-repro}
nvcc=${NVCC:-$root/.toolkit/nvidia/cu13/bin/nvcc}
lib=$(dirname "$(dirname "$nvcc")")/lib   # cudart_static and cudadevrt of the same toolkit
headers=$(ls -td "$root"/target/*/build/cuda-conformance-*/out 2>/dev/null | while read -r d; do
    [ -f "$d/conditional_image.h" ] && [ -f "$d/probes_image.h" ] && echo "$d" && break; done)
[ -n "$headers" ] || { echo "no generated kernel image headers under target/: run cargo build first" >&2; exit 2; }
mkdir -p "$out"
gcc -O2 -c "$root/kernels/register.c" -I "$headers" -o "$out/register.o"
"$nvcc" -O2 -gencode arch=compute_90,code=sm_90 "$root/scripts/sanitizer/suite_image.cu" "$out/register.o" -L "$lib" \
    -o "$out/suite_image"
"$nvcc" -O2 -gencode arch=compute_90,code=compute_90 "$root/scripts/sanitizer/suite_image.cu" "$out/register.o" -L "$lib" \
    -o "$out/suite_image_ptx"
echo "$out/suite_image $out/suite_image_ptx (kernel image headers from $headers)"
