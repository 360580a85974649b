#!/bin/bash
# Session 10, call 4 (4 x H100): how far the host lets a node scale. The full suite at the commit under test:
# --devices 0, 0,1 and all, two rounds interleaved; then independent full suites at once, one per GPU (two, then
# four: separate parents, nothing shared but the host and its driver), against one alone. Phases on every run.
set -u
root=$PWD; R=/tmp/c4; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
n=$(nvidia-smi -L | wc -l)
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader; nvidia-smi topo -m | head -6; sed -n 2p bundle/MANIFEST; nproc; } | tee $R/gpu.txt
cd $root/bundle
one() { # name devices
  t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases-$1.txt timeout 240 bin/cuda-conformance run --devices $2 --baseline $BL --report $R/$1.json.gz > $R/$1.log 2>&1; stamp $1 $? $t; }
for round in 1 2; do
  one d0-r$round 0; one d01-r$round 0,1; [ $n -ge 4 ] && one dall-r$round all
done
# Independent suites at once, one per GPU.
t=$(date +%s.%N); for i in 0 1; do one c2-g$i $i & done; wait; stamp c2-both 0 $t
if [ $n -ge 4 ]; then t=$(date +%s.%N); for i in 0 1 2 3; do one c4-g$i $i & done; wait; stamp c4-all 0 $t; fi
C=bin/cuda-conformance
for f in $R/*.json.gz; do b=$(basename $f .json.gz); [ $b = d0-r1 ] && continue; echo "compare d0-r1 $b: $($C compare $R/d0-r1.json.gz $f 2>&1 | tail -n 1)" >> $R/compare.txt; done
cat $R/times.txt $R/compare.txt
python3 - $R <<'PY'
import gzip,json,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/*.json.gz')):
    r=json.load(gzip.open(f)); p=r['run'].get('phases') or {}
    cs=r['cases']; s=sum(c['wall_ms'] for c in cs)
    print(f"{os.path.basename(f):14s} wall {r['wall_ms']/1000:5.1f} s  processes {r['run']['processes_started']:4d}  case time {s/1000:5.1f} s  own_end {p.get('own_phase_end_s',0):5.1f}  figures {p.get('figures_s') or 0:4.1f}")
PY
for f in d0-r1 c2-g0 c4-g0 dall-r1 d01-r1; do [ -f $R/phases-$f.txt ] && { echo "== $f"; python3 $root/scripts/phases-summary.py $R/phases-$f.txt --top 3 2>&1 | sed -n '1,17p'; }; done
cd /tmp && tar czf $OUT/c4.tar.gz c4
