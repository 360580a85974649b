#!/usr/bin/env bash
# Issue 24 (re-verify on two GPUs) and the H200 half of issue 20, in one device call on a 2-GPU host, from the
# repository root with the bundle in bundle/ (`BUNDLE_REPRO=sources scripts/bundle.sh`: the reproducers of the
# multi-gpu cases are compiled here with the host's nvcc, which is the pinned 13.0 release):
#   1. `run --devices all --baseline BASELINE` twice over the full suite (no figures), and `compare` of the two;
#   2. `run --executor both --devices all` over `multi-gpu/` (every reproducer compiled on this host first);
#   3. PROPTEST_CASES=256 random programs on the GPU (one- and two-device, eager and captured);
#   4. `bench --devices all --modes workers,workers-all-devices` three times (the two-GPU speed-up).
# Each step has a wall-clock limit of its own so that one that hangs leaves the others' results. Logs and reports
# go to $OUT; BASELINE defaults to the committed H200 baseline. Never creates NVLink multicast objects (no case does).
set -u
root=$PWD
C=$root/bundle/bin/cuda-conformance
W=$root/gpu-work
baseline=${BASELINE:-$root/baselines/nvidia-h200_driver-580.159.04.txt}
mkdir -p "$W"
cd "$root/bundle"
stamp() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "$*" | tee -a "$OUT/walls.txt"; }

{ nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader; nvidia-smi topo -m; sed -n 2p MANIFEST; nproc; } >"$OUT/gpus.txt" 2>&1
cat "$OUT/gpus.txt"

# The multi-gpu reproducers, built while the Rust runs go (one nvcc per core).
(
    t=$(date +%s.%N)
    NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE="$W/cache" \
        timeout 400 bash build-reproducers.sh "$C" "$W/repro" 90 multi-gpu/ >"$W/build.log" 2>&1
    echo "build multi-gpu reproducers rc=$? wall=$(stamp "$t") s: $(tail -n 1 "$W/build.log")" >>"$OUT/walls.txt"
) &
builder=$!

for i in 1 2; do
    t=$(date +%s.%N)
    timeout --kill-after=10 170 "$C" run --devices all --no-figures --baseline "$baseline" \
        --report "$OUT/full$i.json.gz" >"$OUT/full$i.log" 2>&1
    log "full$i (run --devices all --no-figures --baseline) rc=$? wall=$(stamp "$t") s"
done
"$C" compare "$OUT/full1.json.gz" "$OUT/full2.json.gz" >"$OUT/compare-1-2.md" 2>&1
log "compare full1 full2 rc=$?"

wait "$builder"
t=$(date +%s.%N)
timeout --kill-after=10 120 "$C" run multi-gpu/ --devices all --no-figures --executor both \
    --repro-dir "$W/repro/bin" --report "$OUT/both-multi-gpu.json.gz" >"$OUT/both-multi-gpu.log" 2>&1
log "both multi-gpu/ rc=$? wall=$(stamp "$t") s"

t=$(date +%s.%N)
CUDA_CONFORMANCE_REQUIRE_GPU=1 CARGO_MANIFEST_DIR=$PWD PROPTEST_CASES=256 timeout --kill-after=10 120 ./tests/random_programs gpu:: >"$OUT/random.log" 2>&1
log "random programs (PROPTEST_CASES=256, gpu::) rc=$? wall=$(stamp "$t") s"

for i in 1 2 3; do
    t=$(date +%s.%N)
    timeout --kill-after=10 120 "$C" bench --devices all --modes workers,workers-all-devices \
        --json "$OUT/bench$i.json" >"$OUT/bench$i.log" 2>&1
    log "bench$i rc=$? wall=$(stamp "$t") s"
done

tar czf "$OUT/build-log.tgz" -C "$W" build.log
echo "== walls"; cat "$OUT/walls.txt"
echo "== full runs"; grep -E "^total|cases on" "$OUT/full1.log" "$OUT/full2.log"
echo "== compare"; head -n 20 "$OUT/compare-1-2.md"
echo "== non-pass (full1)"; grep -E "^(fail|crash|timeout|unexpected|flake)|  (fail|crash|timeout)" "$OUT/full1.log" | head -n 40
echo "== both"; grep -E "^total|cases on|^executors|agree" "$OUT/both-multi-gpu.log" | head; grep -A4 "executors disagree" "$OUT/both-multi-gpu.log" | head -n 40
echo "== random"; grep -E "^test |test result" "$OUT/random.log"
echo "== bench"; for i in 1 2 3; do grep -iE "workers|speed" "$OUT/bench$i.log"; done
