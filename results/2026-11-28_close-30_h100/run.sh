#!/bin/bash
# Session 9, probe call: the two open pairs' conditions (unified function, pool import), and a trap beside context starts.
cd "$(dirname "$0")"
nvcc -O2 -std=c++17 -arch=sm_90 probe9.cu -o /tmp/probe9 || exit 1
for f in cubin fatbin ptx; do nvcc -arch=sm_90 -rdc=true -$f ulib.cu -o /tmp/ulib.$f 2>&1 | tail -2; done
nvcc -arch=sm_90 -cubin ulib.cu -o /tmp/ulib-nordc.cubin
cuobjdump -symbols /tmp/ulib.cubin 2>&1 | head -20
/tmp/probe9 attr
for f in /tmp/ulib.cubin /tmp/ulib.fatbin /tmp/ulib.ptx /tmp/ulib-nordc.cubin; do /tmp/probe9 unified $f ufn ufn2 ufp ukernel hd nope; done
echo "== pool-same"; /tmp/probe9 pool-same
echo "== pool-fork"; /tmp/probe9 pool-fork
echo "== trap alone"; /tmp/probe9 trap-alone 4
echo "== trap beside 2 starters"; /tmp/probe9 trap-beside 4 2
echo "== trap beside 4 starters"; /tmp/probe9 trap-beside 3 4
