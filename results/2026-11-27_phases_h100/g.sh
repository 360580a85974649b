#!/usr/bin/env bash
# Session 8, call G: racecheck and initcheck over the whole suite at the session's last code commit.
set -u
root=$PWD; R=/tmp/g; mkdir -p $R
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; grep commit bundle/MANIFEST; } | tee $R/gpu.txt
SANITIZER_TIMEOUT=230 bash scripts/sanitizer/suite-gpu.sh bundle $R/san baselines racecheck:4 initcheck:4 > $R/san.log 2>&1; echo "rc=$?" >> $R/san.log
grep -v 'known finding' $R/san.log | head -30
cd /tmp && tar czf $OUT/g.tar.gz --exclude='g/san/report-*' g
