#!/bin/bash
# Session 10, call 1 (one H100): probe10 (a trap beside batch work on the same GPU; cudaDeviceReset to reuse a
# process after a trap; a process start's stretches), then the full suite twice at HEAD for the reference wall.
set -u
root=$PWD; R=$OUT/c1; mkdir -p $R
cd results/2026-11-28_node-time-2
nvcc -O2 -std=c++17 -arch=sm_90 probe10.cu -o /tmp/p10 || exit 1
P=/tmp/p10
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "== busy alone"; $P busy 2000
echo "== trap alone x3"; for i in 1 2 3; do $P trap; done
echo "== reuse 5"; $P reuse 5
echo "== busy 5 s beside 5 traps (one after another, each its own process)"
$P busy 5000 > $R/busy-beside-traps.txt & sleep 0.7
for i in 1 2 3 4 5; do $P trap; done; wait; cat $R/busy-beside-traps.txt
echo "== busy 4 s beside reuse 6"
$P busy 4000 > $R/busy-beside-reuse.txt & sleep 0.7; $P reuse 6; wait; cat $R/busy-beside-reuse.txt
echo "== two busy at once"
$P busy 3000 > $R/b1.txt & $P busy 3000 > $R/b2.txt & wait; cat $R/b1.txt $R/b2.txt
echo "== start x4, one after another"
for i in 1 2 3 4; do $P start $(python3 -c 'import time;print(time.monotonic_ns())'); done
echo "== start x4 at once"
for i in 1 2 3 4; do $P start $(python3 -c 'import time;print(time.monotonic_ns())') & done; wait
} 2>&1 | tee $R/probe10.log
