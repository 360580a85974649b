#!/usr/bin/env bash
# The closing device calls of the 2026-11-25 afternoon session (results/2026-11-25_executors_h100/), from the
# repository root with the bundle in bundle/ (`BUNDLE_REPRO=sources scripts/bundle.sh`: the reproducers travel as
# sources and are built on the GPU host, whose nvcc is the pinned release). Two phases, one device call each, on
# the same warm machine (gpu-work/ stays between them):
#   a  the Rust executor over the full suite, then again under CUDA_DEVICE_MAX_CONNECTIONS=1, while every case's
#      reproducer compiles with the host's nvcc 13.0 (16 cores); compare of the two runs
#   b  run --executor both over the full suite (the Rust executor's second full run, and every reproducer run
#      once and compared with it); compare of the Rust runs of a and b; graph/update/dependency-count-differs
#      compiled with plain `nvcc -std=c++17 -arch=sm_90 F.cu -o F`, run, and judged by the suite's verdict code
# Logs and reports go to $OUT.
set -u
phase=${1:?usage: verify-session-gpu.sh a|b}
root=$PWD
C=$root/bundle/bin/cuda-conformance
W=$root/gpu-work
mkdir -p "$W"
cd "$root/bundle"
stamp() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
case $phase in
a)
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; sed -n 2p MANIFEST; nproc; } | tee "$OUT/gpu.txt"
    (
        t=$(date +%s.%N); "$C" run --report "$W/run1.json.gz" >"$W/run1.log" 2>&1
        echo "run1 (rust, beside the nvcc builds) rc=$? wall=$(stamp "$t") s" >>"$W/walls.txt"
        t=$(date +%s.%N); CUDA_DEVICE_MAX_CONNECTIONS=1 "$C" run --report "$W/cdmc1.json.gz" >"$W/cdmc1.log" 2>&1
        echo "cdmc1 (rust, CUDA_DEVICE_MAX_CONNECTIONS=1, beside the builds) rc=$? wall=$(stamp "$t") s" >>"$W/walls.txt"
    ) &
    t=$(date +%s.%N)
    NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE="$W/cache" \
        bash build-reproducers.sh "$C" "$W/repro" 90 >"$W/build.log" 2>&1
    echo "build reproducers rc=$? wall=$(stamp "$t") s: $(tail -n 1 "$W/build.log")" >>"$W/walls.txt"
    wait
    "$C" compare "$W/run1.json.gz" "$W/cdmc1.json.gz" >"$OUT/compare-run1-cdmc1.md" 2>&1
    echo "compare run1 cdmc1 rc=$?" >>"$W/walls.txt"
    cp "$W/run1.json.gz" "$W/cdmc1.json.gz" "$W/walls.txt" "$OUT/"
    tar czf "$OUT/logs-a.tgz" -C "$W" run1.log cdmc1.log build.log
    cat "$W/walls.txt"; grep -E "^total|cases on" "$W/run1.log" "$W/cdmc1.log"; head -n 30 "$OUT/compare-run1-cdmc1.md"
    ;;
b)
    t=$(date +%s.%N)
    timeout --kill-after=10 540 "$C" run --executor both --repro-dir "$W/repro/bin" --report "$W/both.json.gz" \
        >"$W/both.log" 2>&1
    echo "both rc=$? wall=$(stamp "$t") s" >>"$W/walls.txt"
    "$C" compare "$W/run1.json.gz" "$W/both.json.gz" >"$OUT/compare-run1-both.md" 2>&1
    echo "compare run1 both rc=$?" >>"$W/walls.txt"
    (
        cd "$W" && mkdir -p dcd && cd dcd
        s=graph__update__dependency-count-differs
        cp "$W/repro/src/$s.cu" "$W/repro/src/cuda_conformance_repro.h" .
        /usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 "$s.cu" -o "$s" && ./"$s" >"$s.json" 2>"$s.err"
        echo "plain nvcc build and run rc=$?"
        "$C" repro graph/update/dependency-count-differs --cases "$root/bundle/cases" --judge .
        tail -n 1 "$s.json"
    ) >"$OUT/dependency-count-differs.txt" 2>&1
    cp "$W/both.json.gz" "$W/both.log" "$W/walls.txt" "$OUT/"
    cat "$W/walls.txt"; grep -E "^total|cases on|^executors" "$W/both.log"; grep -A4 "executors disagree" "$W/both.log" | head -n 60
    head -n 30 "$OUT/compare-run1-both.md"
    ;;
esac
