#!/bin/bash
# Process-start and disturbance measurements; then the suite with and without the baseline.
cd "$(dirname "$0")"  # results/2026-11-27_node-time (was gpu-work/ctx)
nvcc -O2 -std=c++17 -arch=sm_90 ctxbench.cu -o /tmp/ctxbench || exit 1
B=/tmp/ctxbench
nvidia-smi -q | grep -i -E "persistence|Product Name" | head -4
echo "== serial 6"; $B serial 6
echo "== starts 1 same"; $B starts 1 same
echo "== starts 4 same"; $B starts 4 same
echo "== starts 8 same"; $B starts 8 same
echo "== starts 4 spread"; $B starts 4 spread
echo "== starts 8 spread"; $B starts 8 spread
echo "== starts 4 all-visible"; $B starts 4 all
echo "== trap in a child"; $B child trap
echo "== reset"; $B reset; $B reset
echo "== ops alone"; $B ops 0
echo "== ops beside 1 starter"; $B ops 1
echo "== ops beside 4 starters"; $B ops 4
