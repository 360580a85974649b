# Busy loops for the load benchmarks (sourced by scripts/load-*-gpu.sh): `spin N` starts N shell loops that never
# sleep, children of the caller, and gives the scheduler a second to spread them over the cores; `unspin` stops
# them by PID (never by name: the GPU machine may run other shells).
PIDS=""
spin() { for _ in $(seq "$1"); do ( while :; do :; done ) & PIDS="$PIDS $!"; done; sleep 1; }
unspin() { for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; PIDS=""; }
