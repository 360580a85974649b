#!/bin/bash
# Session 9, call 4 (one H100): A/B of the poisoning-case rule on one host, interleaved old/new/old/new, phases on
# every run (bundle-old/ = 54248b9, bundle/ = the commit under test).
set -u
root=$PWD; R=/tmp/c4; mkdir -p $R
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
cat $R/times.txt; for f in old-1 new-1 old-2 new-2; do grep -h '^report' $R/$f.log; done
for f in old-1 new-1 old-2 new-2; do echo "== $f"; python3 $root/scripts/phases-summary.py $R/phases-$f.txt --top 4 2>&1 | sed -n '1p;18,22p'; grep -h "trap-is-sticky\|host-func-not-called-after-trap \|callback-gets-error-after-trap\|reset-recovers-from-sticky" $R/phases-$f.txt | awk '{for(i=1;i<=NF;i++) if ($i ~ /^script=/) print "   ", $2, $i}'; done
cd /tmp && tar czf $OUT/c4.tar.gz c4
