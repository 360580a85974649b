#!/usr/bin/env bash
# On a GPU host with nvcc: the Rust executor over the whole suite (observations kept), and every case's reproducer
# compiled with the host's nvcc and run once, so that scripts/compare-repro.py can set the two side by side.
# Run from a bundle folder that holds bin/cuda-conformance, cases/ and repro/ (the output of
# `cuda-conformance repro "" --out repro`). Writes into $OUT: rust.json.gz, rust.log, obs.tgz (one <stem>.json per
# reproducer: its stdout; <stem>.err its stderr; exit.txt; compile errors), check.log.
# A time budget (REPRO_BUDGET_S, default 520 s from the start; on an H100 host compiling took 208 s and the runs
# about 0.45 s each) stops the runs early rather than lose everything to a timeout: call it with a 600 s limit.
set -u
cd "$(dirname "$0")"
out=${OUT:?set OUT}
budget=${REPRO_BUDGET_S:-520}
started=$(date +%s)
log() { printf '[%3ds] %s\n' $(( $(date +%s) - started )) "$*" | tee -a "$out/check.log"; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
log "nvcc: $nvcc ($("$nvcc" --version | tail -1)); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

# 1. The Rust executor, in the background while the reproducers compile (it uses one GPU worker; nvcc the CPUs).
( ./bin/cuda-conformance run --trace all --no-figures --report "$out/rust.json.gz" > "$out/rust.log" 2>&1
  echo "exit $?" >> "$out/rust.log" ) &
rust=$!

# 2. Every reproducer, compiled as a person would: nvcc -std=c++17 -arch=sm_90 F.cu -o F.
mkdir -p build obs
jobs=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))
ls repro/*.cu | xargs -P "$jobs" -I{} bash -c '
  s=$(basename {} .cu)
  "$0" -std=c++17 -arch=sm_90 {} -o build/$s 2> obs/$s.compile.err || echo $s >> obs/compile-failed.txt
  [ -s obs/$s.compile.err ] || rm -f obs/$s.compile.err' "$nvcc"
compiled=$(ls build | wc -l)
log "compiled $compiled of $(ls repro/*.cu | wc -l) reproducers"
wait $rust
log "rust executor: $(tail -1 "$out/rust.log")"

# 3. Each reproducer once, one at a time (as the Rust runner runs one case at a time per GPU). The multi-GPU cases
# are not supported on one GPU; the known finding runs first.
order=$( (ls build | grep -x 'graph__update__dependency-count-differs'; ls build | grep -vx 'graph__update__dependency-count-differs') | grep -v '^multi-gpu__')
ran=0
for s in $order; do
    if (( $(date +%s) - started > budget )); then log "time budget reached: stopped after $ran"; break; fi
    timeout 60 "./build/$s" > "obs/$s.json" 2> "obs/$s.err"
    echo "$s $?" >> obs/exit.txt
    [ -s "obs/$s.err" ] || rm -f "obs/$s.err"
    ran=$((ran + 1))
done
log "ran $ran reproducers; non-zero exits: $(awk '$2 != 0' obs/exit.txt | wc -l)"
tar czf "$out/obs.tgz" obs
log "done"
