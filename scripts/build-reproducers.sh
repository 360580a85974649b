#!/usr/bin/env bash
# Writes every case's standalone C++ reproducer and compiles each with the pinned nvcc, for the C++ executor
# (`cuda-conformance run --executor cxx|both`), which looks for them in repro/bin beside the bundle's bin/:
#   OUT/src/<stem>.cu, OUT/src/cuda_conformance_repro.h   `cuda-conformance repro FILTER --out OUT/src`
#   OUT/bin/<stem>                                        each program, linked against cudart shared
#   OUT/lib/libcudart.so.13                               the pinned cudart they load ($ORIGIN/../lib)
# Usage: scripts/build-reproducers.sh CLI OUT [LOWEST_ARCH [FILTER ...]]
#   CLI          the built cuda-conformance binary (it writes the sources)
#   LOWEST_ARCH  the lowest compute capability the bundle's kernels target (default 90): its PTX is embedded too,
#                so a GPU newer than sm_90 JIT-compiles the programs as it does the suite's kernels.
#   FILTER ...   only the cases whose id contains one of them (default: every case; the bundle builds them all)
# Why cudart shared: a statically linked reproducer carries cudart (~700 KB stripped; ~270 MB for the suite's ~385
# cases), and the bundle travels in at most 64 MiB; shared, one copy of libcudart.so.13 (~700 KB) serves all. The
# rpath `$ORIGIN/../lib` makes them find that copy wherever the bundle lies; no toolkit is needed on the host.
# Why -Os, --gc-sections and a compressed fatbin: each program also carries the shared header's host code and probe
# kernels: 204 KB with -O2 (graph/update/dependency-count-differs), 122 KB so (62 KB of host code, 11 KB of
# compressed device code). bundle.sh packs them with xz, which finds what they share.
# Compiled in parallel (one nvcc per core), each program cached under target/repro-cache/ by the hash of its
# source, the header and the flags: a rebuild compiles only the programs whose text changed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { printf 'usage: scripts/build-reproducers.sh CLI OUT [LOWEST_ARCH [FILTER ...]]\n' >&2; exit 2; }
cli=$1
out=$2
lowest=${3:-90}
filters=("${@:4}")
[ ${#filters[@]} -gt 0 ] || filters=("")
toolkit="$repo/.toolkit/nvidia/cu13"
# NVCC: another nvcc of the pinned release (13.0), e.g. a GPU host's toolkit, which has the cores to build them
# all in minutes; the cudart the programs load stays the pinned one (CUDART, default the toolkit's).
nvcc="${NVCC:-$toolkit/bin/nvcc}"
cudart="${CUDART:-$toolkit/lib/libcudart.so.13}"
cache="${REPRO_CACHE:-$repo/target/repro-cache}"
say() { printf 'reproducers: %s\n' "$*"; }

[ -x "$nvcc" ] || { say "no nvcc at $nvcc (scripts/setup.sh installs the pinned one)" >&2; exit 1; }
"$nvcc" --version | grep -q 'release 13\.0' || { say "$nvcc is not CUDA 13.0, the pinned release" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/src" "$out/bin" "$out/lib" "$cache"
for filter in "${filters[@]}"; do
    "$cli" repro "$filter" --out "$out/src" >/dev/null
done
header="$out/src/cuda_conformance_repro.h"
[ -f "$header" ] || { say "$cli repro wrote no $header" >&2; exit 1; }

# The linker wants libcudart.so; toolkits from wheels ship only libcudart.so.13, so a private link names it.
# (-L of the pinned toolkit's lib too: the wheels' nvcc does not know where its libcudadevrt.a lies; another
# toolkit's nvcc finds its own.)
linkdir="$cache/link"
mkdir -p "$linkdir"
ln -sfn "$(readlink -f "$cudart")" "$linkdir/libcudart.so"

# sm_90 code for the H100/H200, and the PTX of the lowest target for any newer GPU.
flags=(-std=c++17 -gencode arch=compute_90,code=sm_90 -gencode "arch=compute_${lowest},code=compute_${lowest}"
    -Xfatbin -compress-all -Xcompiler -Os -Xcompiler -ffunction-sections -Xcompiler -fdata-sections
    -cudart shared "-L$linkdir" "-L$toolkit/lib" -Xlinker -rpath -Xlinker '$ORIGIN/../lib' -Xlinker --strip-all
    -Xlinker --gc-sections)
flag_hash=$(printf '%s\n' "${flags[@]}" "$("$nvcc" --version | tail -n 1)" | sha256sum | cut -c1-16)
header_hash=$(sha256sum "$header" | cut -c1-16)
export nvcc cache out flag_hash header_hash
export flags_text="${flags[*]}"

# One program: from the cache when its source, the header and the flags are unchanged, else compiled into it.
build_one() {
    local source=$1 stem key
    stem=$(basename "$source" .cu)
    key=$(cat "$source" | sha256sum | cut -c1-16)-$header_hash-$flag_hash
    if [ ! -x "$cache/$key" ]; then
        # shellcheck disable=SC2086 # the flags are words
        if ! "$nvcc" $flags_text "$source" -o "$cache/$key.tmp" 2>"$cache/$key.log"; then
            printf 'reproducers: %s does not compile:\n' "$source" >&2
            sed 's/^/  /' "$cache/$key.log" >&2
            return 1
        fi
        mv "$cache/$key.tmp" "$cache/$key"
    fi
    cp "$cache/$key" "$out/bin/$stem"
}
export -f build_one

started=$(date +%s)
count=$(find "$out/src" -name '*.cu' | wc -l)
[ "$count" -gt 0 ] || { say "$cli repro wrote no program" >&2; exit 1; }
cached_before=$(find "$cache" -maxdepth 1 -type f ! -name '*.log' ! -name '*.tmp' | wc -l)
find "$out/src" -name '*.cu' -print0 | xargs -0 -P "$(nproc)" -I{} bash -c 'build_one "$1"' _ {}
cached_after=$(find "$cache" -maxdepth 1 -type f ! -name '*.log' ! -name '*.tmp' | wc -l)
cp -L "$cudart" "$out/lib/libcudart.so.13"

# Every program must load the copy beside it: libcudart.so.13 needed, found through $ORIGIN/../lib.
for program in "$out"/bin/*; do
    dynamic=$(readelf -d "$program")
    grep -q 'NEEDED.*\[libcudart\.so\.13\]' <<<"$dynamic" || { say "$program does not load libcudart.so.13" >&2; exit 1; }
    grep -q 'RUNPATH.*\[\$ORIGIN/\.\./lib\]' <<<"$dynamic" || { say "$program has no \$ORIGIN/../lib rpath" >&2; exit 1; }
done
built=$(find "$out/bin" -type f | wc -l)
[ "$built" -eq "$count" ] || { say "$built programs for $count sources" >&2; exit 1; }
say "$count programs in $out/bin ($((cached_after - cached_before)) compiled, the rest from $cache) in" \
    "$(($(date +%s) - started)) s; $(du -sh "$out" | cut -f1) with sources and libcudart"
