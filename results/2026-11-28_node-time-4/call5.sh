#!/bin/bash
# Session 12, call 5 (2 GPUs): probe 12's trap mode: how long the driver's recovery from a kernel fault takes
# alone, beside starts on the other GPU, beside a trap on the other GPU, and how long a start takes beside a trap.
set -u
source scripts/gpu-call-prelude.sh n5
P=$root/results/2026-11-28_node-time-4
nvcc -O2 -o $R/probe12 $P/probe12.cu -lcuda > $R/nvcc.log 2>&1 || { echo "nvcc failed"; cat $R/nvcc.log; }
uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i $1; }
p12() { local g=$1; shift; CUDA_VISIBLE_DEVICES=$(uuid $g) $R/probe12 "$@"; }
{
  for i in 1 2 3; do echo "trap alone GPU 0: $(p12 0 trap)"; done
  for i in 1 2 3; do
    ( p12 1 trap | sed 's/^/  beside: GPU 1 /' ) & echo "trap GPU 0 beside a trap on GPU 1: $(p12 0 trap)"; wait
  done
  for i in 1 2 3; do
    touch $R/starting
    ( k=0; while [ -f $R/starting ]; do p12 1 driver >/dev/null; k=$((k+1)); done; echo "  starts beside: $k" ) &
    sleep 0.3; echo "trap GPU 0 beside starts on GPU 1: $(p12 0 trap)"; rm -f $R/starting; wait
  done
  for i in 1 2 3; do
    ( p12 0 trap | sed 's/^/  beside: GPU 0 /' ) & sleep 0.25; echo "start on GPU 1 beside a trap on GPU 0: $(p12 1 driver)"; wait
  done
  for i in 1 2 3; do echo "start alone GPU 1: $(p12 1 driver)"; done
} 2>&1 | tee $R/trap.txt
keep
