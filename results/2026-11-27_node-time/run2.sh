#!/bin/bash
# Per-case calls of the worker (cudaMemGetInfo, limits, synchronize, ...) alone, beside process starts, and with
# every GPU of the host running the same loop at once.
cd "$(dirname "$0")"
nvcc -O2 -std=c++17 -arch=sm_90 ctxbench.cu -o /tmp/ctxbench || exit 1
B=/tmp/ctxbench
echo "== ops alone"; $B ops 0
echo "== ops beside 4 starters"; $B ops 4
echo "== ops on 4 GPUs at once"; $B opsall 4 2>&1 | sort -k3,3 -k1,1
echo "== ops on 1 GPU, 4 processes at once"; CUDA_VISIBLE_DEVICES=0 $B opsall 4 2>&1 | sort -k3,3 -k1,1
