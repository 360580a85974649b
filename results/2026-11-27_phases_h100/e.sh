#!/usr/bin/env bash
# Session 8, call E: the suite at a07e8ce (the session's start) and at the session's last code commit on one host,
# interleaved twice, full runs against each commit's own H100 baseline.
set -u
root=$PWD; R=/tmp/e; mkdir -p $R
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; grep commit bundle-old/MANIFEST bundle/MANIFEST; } | tee $R/gpu.txt
for round in 1 2; do
  for which in old new; do
    B=$root/bundle; [ $which = old ] && B=$root/bundle-old
    cd $B; t=$(date +%s.%N)
    timeout 200 bin/cuda-conformance run --devices 0 --baseline baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt --report $R/$which-$round.json.gz > $R/$which-$round.log 2>&1
    stamp "$which round $round" $? $t
  done
done
cd $root/bundle
bin/cuda-conformance compare $R/new-1.json.gz $R/new-2.json.gz > $R/compare-new.md 2>&1
bin/cuda-conformance compare $R/old-1.json.gz $R/new-1.json.gz > $R/compare-old-new.md 2>&1
cat $R/times.txt; grep -h '^report' $R/*.log; tail -n 1 $R/compare-*.md
cd /tmp && tar czf $OUT/e.tar.gz e
