#!/bin/bash
# Session 10, call 3 (one H100): A/B of the IPC cases run in processes started ahead with their peers,
# interleaved old/new/old/new on one host, phases on every run (bundle-old/ = 31aa8db, bundle/ = the commit under test).
set -u
root=$PWD; R=/tmp/c3; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 2p bundle-old/MANIFEST; sed -n 2p bundle/MANIFEST; } | tee $R/gpu.txt
for round in 1 2; do for b in old new; do
  d=$root/bundle; [ $b = old ] && d=$root/bundle-old
  t=$(date +%s.%N); ( cd $d && CUDA_CONFORMANCE_PHASES=$R/phases-$b-$round.txt timeout 200 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/$b-$round.json.gz > $R/$b-$round.log 2>&1 ); stamp $b-$round $? $t
done; done
C=$root/bundle/bin/cuda-conformance
for f in old-2 new-1 new-2; do $C compare $R/old-1.json.gz $R/$f.json.gz > $R/compare-old-1-$f.md 2>&1; echo "compare old-1 $f rc=$? $(tail -n 1 $R/compare-old-1-$f.md)" >> $R/times.txt; done
cat $R/times.txt; for f in old-1 new-1 old-2 new-2; do grep -h '^report\|^summary\|pass,' $R/$f.log | tail -2; done
for f in old-1 new-1; do echo "== $f"; python3 $root/scripts/phases-summary.py $R/phases-$f.txt --top 4 2>&1 | sed -n '1,20p'; done
python3 - $R <<'PY'
import gzip,json,sys
for f in ('old-1','new-1','old-2','new-2'):
    r=json.load(gzip.open(f'{sys.argv[1]}/{f}.json.gz'))
    print(f, r['wall_ms'], r['run']['processes_started'], r['run'].get('phases'))
PY
cd /tmp && tar czf $OUT/c3.tar.gz c3
# A worker's start, alone and four at once: the READY line's init_ms and context_ms (context, probe kernels, API table).
cd $root/bundle
for i in 1 2 3; do t=$(date +%s%N); CUDA_VISIBLE_DEVICES=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0) CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1 bin/cuda-conformance </dev/null | head -1 | tr '\n' ' '; echo " total $(( ($(date +%s%N)-t)/1000000 )) ms"; done
for i in 1 2 3 4; do ( t=$(date +%s%N); CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1 bin/cuda-conformance </dev/null | head -1 | tr '\n' ' '; echo " total $(( ($(date +%s%N)-t)/1000000 )) ms (4 at once)" ) & done; wait
grep -h "ipc/peer" /tmp/c3/phases-new-1.txt | awk '{print $2, $6, $9}' | head -8
