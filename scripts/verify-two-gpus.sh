#!/usr/bin/env bash
# Issue 24's checks (re-verify on two GPUs) in one device call on a 2-GPU host, from the repository root with the
# bundle in bundle/ (`BUNDLE_REPRO=sources scripts/bundle.sh`: the reproducers of the areas below are compiled here
# with the host's nvcc, which must be the pinned 13.0 release):
#   1. `run --devices all --no-figures --baseline B` twice over the full suite, and `compare` of the two; B is the
#      committed baseline of this GPU and driver (baselines/<gpu name>_driver-<driver>.txt), or $BASELINE;
#   2. `run --executor both --devices all` over each of $BOTH_AREAS (default `multi-gpu/`);
#   3. PROPTEST_CASES=256 random programs on the GPU (one- and two-device, eager and captured);
#   4. `bench --devices all`: `workers` once, then `workers-all-devices` $BENCH_REPEATS times (default 3) with each
#      `--own-processes` choice (first-device, the default, and every-device): the two-GPU speed-up both ways.
# Each step has a wall-clock limit of its own so that one that hangs leaves the others' results. Everything goes
# into $OUT/two-gpus.tar.gz (the device returns few files a call) and the summary into $OUT/summary.txt. Never
# creates NVLink multicast objects (no case does).
set -u
root=$PWD
C=$root/bundle/bin/cuda-conformance
W=$root/gpu-work
R=$W/out
mkdir -p "$W" "$R"
cd "$root/bundle"
stamp() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "$*" | tee -a "$R/walls.txt"; }
finish() {
    tar czf "$OUT/two-gpus.tar.gz" -C "$W" out build.log 2>/dev/null
    {
        echo "== walls"; cat "$R/walls.txt"
        echo "== full runs"; grep -hE "^total|cases on" "$R"/full*.log
        echo "== compare full1 full2"; tail -n 3 "$R/compare-1-2.md"
        echo "== both"; grep -hE "^executors" "$R"/both-*.log
        echo "== random"; grep -E "^test |test result" "$R/random.log"
        echo "== bench"; grep -h "^| workers" "$R"/bench-*.log
    } >"$OUT/summary.txt" 2>&1
    cat "$OUT/summary.txt"
}

{ nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader; nvidia-smi topo -m; sed -n 2p MANIFEST; nproc; } >"$R/gpus.txt" 2>&1
cat "$R/gpus.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0)
baseline=${BASELINE:-$root/baselines/${gpu}_driver-$driver.txt}
log "baseline: $baseline"

areas=${BOTH_AREAS:-multi-gpu/}
(
    t=$(date +%s.%N)
    # shellcheck disable=SC2086 # one filter per area
    NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE="$W/cache" \
        timeout 600 bash build-reproducers.sh "$C" "$W/repro" 90 $areas >>"$W/build.log" 2>&1 || echo "build $areas failed" >>"$W/build.log"
    echo "build reproducers of $areas: $(stamp "$t") s, $(ls "$W/repro/bin" | wc -l) programs" >>"$R/walls.txt"
) &
builder=$!

for i in 1 2; do
    t=$(date +%s.%N)
    timeout --kill-after=10 170 "$C" run --devices all --no-figures --baseline "$baseline" \
        --report "$R/full$i.json.gz" >"$R/full$i.log" 2>&1
    log "full$i (run --devices all --no-figures --baseline) rc=$? wall=$(stamp "$t") s"
done
"$C" compare "$R/full1.json.gz" "$R/full2.json.gz" >"$R/compare-1-2.md" 2>&1
log "compare full1 full2 rc=$?"

wait "$builder"
for a in $areas; do
    t=$(date +%s.%N)
    n=$(echo "$a" | tr '/' '_')
    timeout --kill-after=10 150 "$C" run "$a" --devices all --no-figures --executor both \
        --repro-dir "$W/repro/bin" --report "$R/both-$n.json.gz" >"$R/both-$n.log" 2>&1
    log "both $a rc=$? wall=$(stamp "$t") s"
done

t=$(date +%s.%N)
CUDA_CONFORMANCE_REQUIRE_GPU=1 CARGO_MANIFEST_DIR=$PWD PROPTEST_CASES=256 \
    timeout --kill-after=10 120 ./tests/random_programs gpu:: >"$R/random.log" 2>&1
log "random programs (PROPTEST_CASES=256, gpu::) rc=$? wall=$(stamp "$t") s"

t=$(date +%s.%N)
timeout --kill-after=10 100 "$C" bench --devices all --modes workers --json "$R/bench-workers.json" >"$R/bench-workers.log" 2>&1
log "bench workers rc=$? wall=$(stamp "$t") s"
for i in $(seq "${BENCH_REPEATS:-3}"); do
    for own in first-device every-device; do
        t=$(date +%s.%N)
        timeout --kill-after=10 100 "$C" bench --devices all --modes workers-all-devices --own-processes "$own" \
            --json "$R/bench-$own-$i.json" >"$R/bench-$own-$i.log" 2>&1
        log "bench workers-all-devices --own-processes $own ($i) rc=$? wall=$(stamp "$t") s"
    done
done
finish
