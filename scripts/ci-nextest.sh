#!/usr/bin/env bash
# CI under cargo-nextest (issue 33), on a machine without a GPU:
#   1. `cargo nextest run --workspace --profile ci` passes, and every GPU trial is reported *skipped*: 0 GPU trials
#      passed (the case trials `[area] …`, the smoke trials `[gpu] …`, the random programs' `gpu::…`), and as many
#      case trials skipped as `cuda-conformance list` has cases; the JUnit file of the ci profile is written.
#   2. CUDA_CONFORMANCE_REPORT is written neither by `--list` nor under nextest (each process would clobber it).
#   3. Build here, run there: `cargo nextest archive` of the root package (the suite's test binaries), run from
#      another folder holding only cases/, .config/ and Cargo.toml (`--workspace-remap`), with cargo-nextest alone (no cargo,
#      no rustc on PATH); GPU trials skipped there too.
# Usage: scripts/ci-nextest.sh [OUT-DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/ci-nextest}
rm -rf "$out" && mkdir -p "$out"
say() { printf 'ci-nextest: %s\n' "$*"; }
nextest=$(command -v cargo-nextest)
cases=$(target/debug/cuda-conformance list | wc -l)

# The GPU trials of a nextest log (`--status-level all`): lines `  PASS [ 0.05s] crate::binary [area] area/case`.
gpu_trials() { grep -E "^ *$1 .*(::conformance \[|::smoke \[gpu\] |::random_programs gpu::)" "$2" || true; }
check_gpu_skipped() {
    local log=$1 passed skipped_cases
    passed=$(gpu_trials 'PASS' "$log" | wc -l)
    skipped_cases=$(grep -cE '^ *SKIP .*::conformance \[' "$log" || true)
    if [ "$passed" != 0 ]; then
        gpu_trials 'PASS' "$log" | head -n 5 >&2
        say "FAILED: $passed GPU trial(s) reported passed on a machine without a GPU ($log)"
        exit 1
    fi
    if [ "$skipped_cases" != "$cases" ]; then
        say "FAILED: $skipped_cases case trials reported skipped, the suite has $cases ($log)"
        exit 1
    fi
    say "$(grep -E '^ *Summary' "$log" | sed 's/^ *//') — 0 GPU trials passed, $skipped_cases case trials skipped"
}

# 1. The workspace under nextest with the shipped ci profile.
started=$(date +%s)
# Less one trial: the harness's compile of every case's reproducer with nvcc (CPU only, minutes on 2 cores), which
# `cargo test --workspace` ran moments before in the same CI.
cargo nextest run --workspace --profile ci --status-level all --final-status-level none --no-input-handler \
    -E 'not test(=repro::tests::every_case_of_the_suite_compiles_with_the_pinned_nvcc)' >"$out/workspace.log" 2>&1 || { tail -n 40 "$out/workspace.log" >&2; say "FAILED: cargo nextest run --workspace"; exit 1; }
check_gpu_skipped "$out/workspace.log"
[ -s target/nextest/ci/junit.xml ] || { say "FAILED: no JUnit at target/nextest/ci/junit.xml"; exit 1; }
say "workspace run: $(($(date +%s) - started)) s; JUnit at target/nextest/ci/junit.xml"

# 2. No report file from listing, none from nextest's processes.
binary=$(cargo nextest list --package cuda-conformance --test conformance --message-format json 2>/dev/null |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["rust-suites"]; print(next(v["binary-path"] for v in s.values() if v["binary-name"]=="conformance"))')
report="$PWD/$out/never.json"
CUDA_CONFORMANCE_REPORT="$report" "$binary" --list --format terse >/dev/null 2>&1
CUDA_CONFORMANCE_REPORT="$report" cargo nextest run --package cuda-conformance --test conformance --run-ignored all \
    --no-input-handler -E 'test(/^\[events\] /)' >"$out/report-var.log" 2>&1 ||
    { tail -n 20 "$out/report-var.log" >&2; say "FAILED: the events trials under nextest"; exit 1; }
[ ! -e "$report" ] || { say "FAILED: CUDA_CONFORMANCE_REPORT was written by --list or under nextest"; exit 1; }
say "CUDA_CONFORMANCE_REPORT: written neither by --list nor under nextest"

# 3. Build here, run there: the archive, run from a folder without the sources, by cargo-nextest alone.
started=$(date +%s)
cargo nextest archive --package cuda-conformance --archive-file "$out/suite.tar.zst" >"$out/archive.log" 2>&1 ||
    { tail -n 20 "$out/archive.log" >&2; say "FAILED: cargo nextest archive"; exit 1; }
there=$(mktemp -d)
trap 'rm -rf "$there"' EXIT
# What a remapped workspace needs: the cases, the nextest config, and the root manifest (nextest checks it exists).
cp -r cases .config Cargo.toml "$there/"
(
    cd "$there"
    env -i PATH=/usr/bin:/bin HOME="$HOME" "$nextest" nextest run --archive-file "$OLDPWD/$out/suite.tar.zst" \
        --workspace-remap "$there" --profile ci --status-level all --final-status-level none --no-input-handler
) >"$out/archive-run.log" 2>&1 || { tail -n 40 "$out/archive-run.log" >&2; say "FAILED: the archive's run from $there"; exit 1; }
check_gpu_skipped "$out/archive-run.log"
say "archive $(du -h "$out/suite.tar.zst" | cut -f1), built and run from another folder in $(($(date +%s) - started)) s"
