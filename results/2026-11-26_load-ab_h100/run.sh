set -u
cd /tmp && nvcc -O2 -arch=sm_90 -o hostmem "$1/hostmem.cu" || exit 1
echo idle; ./hostmem
N=$(nproc); PIDS=""
for i in $(seq $((4*N))); do ( while :; do :; done ) & PIDS="$PIDS $!"; done; sleep 1
echo 4x; ./hostmem
for p in $PIDS; do kill $p; done
