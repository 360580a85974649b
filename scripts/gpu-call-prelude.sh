# What every device call's script does first (sourced from the repository root on the GPU host, where bundle/ is
# the build under test): `source scripts/gpu-call-prelude.sh NAME` makes the folder /tmp/NAME for the call's logs
# and reports and sets
#   root   the repository root
#   R      /tmp/NAME
#   BL     the baseline of GPU 0's model for driver 580.159.04 (baselines/<model>_driver-580.159.04.txt)
#   C      bundle/bin/cuda-conformance
# and two functions:
#   stamp NAME RC START   appends "NAME rc=RC wall=… s" (START from `date +%s.%N`) to $R/times.txt
#   keep                  packs /tmp/NAME into $OUT/NAME.tar.gz (call it after each step: a call cut off by its
#                         time limit still returns what it finished)
# It unpacks the Vulkan loader that travels in .gl/ (the `device` recipe; external-memory cases need it) and writes
# the GPUs, the driver and the bundles' commits to $R/gpu.txt.
root=$PWD
R=/tmp/$1
mkdir -p "$R"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
C=$root/bundle/bin/cuda-conformance
stamp() { echo "$1 rc=$2 wall=$(awk -v a="$3" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s" | tee -a "$R/times.txt"; }
keep() { (cd /tmp && tar czf "$OUT/$(basename "$R").tar.gz" "$(basename "$R")"); }
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{
    nvidia-smi --query-gpu=index,name,driver_version,uuid --format=csv,noheader
    for b in bundle bundle-old; do [ -f $b/MANIFEST ] && echo "$b $(sed -n 2p $b/MANIFEST)"; done
} | tee "$R/gpu.txt"
