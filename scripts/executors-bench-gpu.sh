#!/usr/bin/env bash
# The full suite once with each executor on this GPU, timed, from inside a bundle (bundle.sh copies this script to
# its top): `bash executors-bench-gpu.sh`. Runs, in order:
#   rust          --executor rust (the default: worker processes, gate delays shortened to 30 ms)
#   cxx           --executor cxx: each case's compiled reproducer (repro/bin), one process per case, its gate
#                 delays shortened the same way
#   both          --executor both: each case by each executor, compared
#   rust-written, cxx-written (with EXECUTORS_BENCH_WRITTEN=1): the two at the written delays (--gate-delay 300)
# Writes under $OUT (or ./executors-bench): <name>.json.gz (the report), <name>.log (the console), summary.md
# (wall seconds and exit status of each run, the verdict totals, and the agreement of `both`: cases, agree,
# disagree, not comparable). Figures are skipped (--no-figures): they time the GPU, not the executors.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
out=${OUT:-$here/executors-bench}
mkdir -p "$out"
bin=bin/cuda-conformance
# The bundle carries the compiled reproducers packed (see bundle.sh).
if [ ! -d repro/bin ] && [ -f repro/bin.tar.xz ]; then
    tar -xJf repro/bin.tar.xz -C repro
fi
# Each run is bounded so that one stuck run cannot use the whole GPU call.
limit=${EXECUTORS_BENCH_LIMIT_S:-240}

runs=("rust:--executor rust" "cxx:--executor cxx" "both:--executor both")
if [ "${EXECUTORS_BENCH_WRITTEN:-0}" = 1 ]; then
    runs+=("rust-written:--executor rust --gate-delay 300" "cxx-written:--executor cxx --gate-delay 300")
fi
{
    echo "# Executors benchmark"
    echo
    echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1); $(head -n 2 MANIFEST 2>/dev/null | tail -n 1)"
    echo
    echo "| run | flags | exit | wall s | cases | verdicts |"
    echo "|---|---|---|---|---|---|"
} >"$out/summary.md"
for run in "${runs[@]}"; do
    name=${run%%:*}
    flags=${run#*:}
    started=$(date +%s.%N)
    # shellcheck disable=SC2086 # the flags are words
    timeout --kill-after=10 "$limit" "$bin" run $flags --no-figures --report "$out/$name.json.gz" >"$out/$name.log" 2>&1
    status=$?
    wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    cases=$(grep -m1 -o '^[0-9]* cases on' "$out/$name.log" | cut -d' ' -f1)
    # The console table's header and total row, paired: `pass 332, fail 1, variant 21`.
    totals=$(awk '/^area / && !h { n = split($0, head); h = 1 } /^total / && !t { t = 1
        for (i = 2; i <= NF; i++) printf "%s%s %s", (i > 2 ? ", " : ""), head[i], $i }' "$out/$name.log")
    printf '| %s | `%s` | %s | %s | %s | %s |\n' "$name" "$flags" "$status" "$wall" "${cases:-?}" "${totals:-?}" \
        >>"$out/summary.md"
    printf 'executors-bench: %s: exit %s, %s s\n' "$name" "$status" "$wall"
done
{
    echo
    echo "Agreement (\`both\`): $(grep -m1 '^executors (rust and cxx)' "$out/both.log" || echo 'no agreement line: see both.log')"
    disagreeing=$(grep -A3 'executors disagree:' "$out/both.log" | head -n 40)
    if [ -n "$disagreeing" ]; then
        echo
        echo '```'
        echo "$disagreeing"
        echo '```'
    fi
} >>"$out/summary.md"
cat "$out/summary.md"
