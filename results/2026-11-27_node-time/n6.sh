#!/usr/bin/env bash
# Session 6, call N6: the 19 cases that now say `own-process:` (were `env: CUDA_MODULE_LOADING=LAZY`), and the
# external-resource cases with the worker's Vulkan instance kept between cases (twice), against N5.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n6; mkdir -p $R
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
sed -n 2p $B/MANIFEST | tee $R/times.txt
cd $B
t0=$(date +%s)
timeout 120 $C run --no-figures --baseline $BL --report $R/own.json.gz device-management/ execution/ pools/ versions-and-logs/ api/open-conditions/library-after-reset > $R/own.log 2>&1
echo "own-process areas: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
for i in 1 2; do
  t0=$(date +%s)
  timeout 60 $C run --no-figures --baseline $BL --report $R/vk$i.json.gz external-resources/ > $R/vk$i.log 2>&1
  echo "external-resources run $i: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
python3 - $root/gpu-work/n5-full.json.gz $R/own.json.gz $R/vk1.json.gz $R/vk2.json.gz <<'PY' | tee -a $R/times.txt
import gzip, json, sys
old = {c['id']: c for c in json.load(gzip.open(sys.argv[1]))['cases']}
for p in sys.argv[2:]:
    new = {c['id']: c for c in json.load(gzip.open(p))['cases']}
    key = lambda c: (c['verdict']['kind'], c['verdict'].get('observed'))
    diff = [(i, key(old[i]), key(c)) for i, c in new.items() if i in old and key(old[i]) != key(c)]
    ms_new = sum(c['wall_ms'] for c in new.values()); ms_old = sum(old[i]['wall_ms'] for i in new if i in old)
    print(p.split('/')[-1], len(new), 'cases;', len(diff), 'differ from N5 in verdict or observation; case time', ms_new, 'ms (N5:', ms_old, 'ms)')
    for d in diff: print('  ', d)
PY
grep -i "crash\|signal" $R/vk*.log | head -5
cd /tmp && tar czf $OUT/n6.tar.gz n6
