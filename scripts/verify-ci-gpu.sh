#!/usr/bin/env bash
# Issue 33's check on one GPU host, from the folder above the bundle (the repository root on the device machine),
# with a bundle made by `BUNDLE_NEXTEST=1 BUNDLE_REPRO=none scripts/bundle.sh`, which copies this script and
# verify-ci-gpu-compare.py into it: `bash bundle/verify-ci-gpu.sh` (or BUNDLE=folder scripts/verify-ci-gpu.sh):
#   tests     the conformance, smoke and random-program trials by `run-tests.sh` (what `cargo test` runs), then
#             `cuda-conformance run` once: each one's wall time.
#   nextest   one run of the same by cargo-nextest from the bundle's archive with the shipped `ci` profile (run it
#             twice: each run is numbered). After any phase, every trial's outcome of every run so far is compared
#             (scripts/verify-ci-gpu-compare.py: cargo test against each nextest run, and the case trials against
#             the verdicts of `run`).
#   expect    an expectation file with a skip (a passing case), a flake (a case that fails on an H100) and an
#             expected fail (the graph-update finding): `run --expectations` over the suite against a plain `run`
#             (only those three may differ, as declared); the test binary with CUDA_CONFORMANCE_EXPECTATIONS, one
#             trial each; nextest's list and run of the three.
#   nonroot   the full suite as root and as an unprivileged user (created here), from a copy of the bundle that user
#             can read, umask 027; `compare` of the two reports.
# PHASES="tests nextest nextest expect nonroot" (the default; one device command of at most 10 minutes each for
# `tests`, each `nextest`, `expect` and `nonroot` is the safe split). Logs and reports accumulate in /tmp/verify-ci
# (kept while the machine stays warm) and are packed into $OUT/verify-ci.tar.gz after every invocation.
set -u
root=$(pwd)
here=$(cd "$(dirname "$0")" && pwd)
# The bundle: $BUNDLE under this folder; else the folder of this script when it is a bundle (bundle.sh copies the
# script there); else bundle/.
if [ -n "${BUNDLE:-}" ]; then bundle=$root/$BUNDLE; elif [ -x "$here/bin/cuda-conformance" ]; then bundle=$here; else bundle=$root/bundle; fi
C=$bundle/bin/cuda-conformance
R=/tmp/verify-ci
mkdir -p "$R"
phases=${PHASES:-tests nextest nextest expect nonroot}
compare_py=$here/verify-ci-gpu-compare.py
[ -f "$compare_py" ] || compare_py=$root/scripts/verify-ci-gpu-compare.py
{ nvidia-smi -L; sed -n 2,4p "$bundle/MANIFEST"; nproc; id; ls -l /dev/nvidia* 2>&1 | head -n 8; } | tee "$R/host.txt"
secs() { echo $(( $(date +%s) - $1 )); }

for phase in $phases; do
    case "$phase" in
        tests)
            cd "$bundle"
            t0=$(date +%s)
            timeout 400 bash run-tests.sh >"$R/cargo-test.log" 2>&1
            echo "cargo test (run-tests.sh): rc=$? $(secs "$t0") s" | tee -a "$R/times.txt"
            grep -a "test result" "$R/cargo-test.log"
            t0=$(date +%s)
            timeout 180 "$C" run --report "$R/run.json.gz" >"$R/run.log" 2>&1
            echo "cuda-conformance run: rc=$? $(secs "$t0") s" | tee -a "$R/times.txt"
            cd "$root"
            ;;
        nextest)
            cd "$bundle"
            n=1
            while [ -f "$R/nextest-$n.log" ]; do n=$((n + 1)); done
            t0=$(date +%s)
            CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout 570 nextest/run.sh --profile ci --status-level all \
                --final-status-level none --no-input-handler >"$R/nextest-$n.log" 2>&1
            echo "nextest --profile ci run $n: rc=$? $(secs "$t0") s" | tee -a "$R/times.txt"
            grep -a -E '^ *Summary' "$R/nextest-$n.log"
            junit=$(find "$bundle/target/nextest/ci" -name junit.xml 2>/dev/null | head -n 1)
            [ -n "$junit" ] && cp "$junit" "$R/nextest-$n-junit.xml"
            cd "$root"
            ;;
    esac
done
if [ -f "$R/cargo-test.log" ] && compgen -G "$R/nextest-*.log" >/dev/null; then
    args=(--libtest "$R/cargo-test.log")
    for f in "$R"/nextest-[0-9].log; do args+=(--nextest "$f"); done
    [ -f "$R/run.json.gz" ] && args+=(--report "$R/run.json.gz")
    python3 "$compare_py" "${args[@]}" | tee "$R/compare.txt"
fi

if [[ " $phases " == *" expect "* ]]; then
    cd "$bundle"
    skip=$("$C" list events/ | awk 'NR == 1 {print $1}')
    flake=managed-memory/zero-size-refused
    fail=graph/update/dependency-count-differs
    cat >"$R/expectations.txt" <<EOF
# issue 33's check on an H100: one line of each kind
skip  $skip  the H100 check's skip (a case that passes there)
flake $flake  fails on every H100 run (results/findings): declared a flake to see it tolerated and tracked
fail  $fail  the graph-update finding (results/findings): an expected failure
EOF
    t0=$(date +%s)
    timeout 240 "$C" run --no-figures --report "$R/plain.json.gz" >"$R/plain.log" 2>&1
    echo "plain run: rc=$? $(secs "$t0") s" | tee -a "$R/times.txt"
    t0=$(date +%s)
    timeout 240 "$C" run --no-figures --expectations "$R/expectations.txt" --report "$R/expect.json.gz" \
        >"$R/expect.log" 2>&1
    echo "run --expectations: rc=$? $(secs "$t0") s (0 expected: the declared failure and flake do not fail it)" |
        tee -a "$R/times.txt"
    python3 "$compare_py" --expectations "$R/plain.json.gz" "$R/expect.json.gz" "$skip" "$flake" "$fail" |
        tee "$R/expect-compare.txt"
    export CARGO_MANIFEST_DIR=$bundle
    for id in "$skip" "$flake" "$fail"; do
        area=${id%%/*}
        for with in without with; do
            if [ "$with" = with ]; then export CUDA_CONFORMANCE_EXPECTATIONS=$R/expectations.txt; else unset CUDA_CONFORMANCE_EXPECTATIONS; fi
            line=$(timeout 120 tests/conformance --exact "[$area] $id" 2>"$R/trial-$with-${id//\//_}.err" | grep -a "^test \[")
            echo "test binary $with expectations: $line" | tee -a "$R/expect-trials.txt"
        done
    done
    unset CARGO_MANIFEST_DIR
    export CUDA_CONFORMANCE_EXPECTATIONS=$R/expectations.txt
    filter="test(=[${skip%%/*}] $skip) | test(=[${flake%%/*}] $flake) | test(=[${fail%%/*}] $fail)"
    timeout 200 nextest/run.sh --profile ci -E "$filter" --status-level all --final-status-level none \
        --no-input-handler >"$R/expect-nextest.log" 2>&1
    echo "nextest with the expectations: rc=$?" | tee -a "$R/expect-trials.txt"
    grep -a -E '^ *(PASS|FAIL|SKIP|FLAKY)' "$R/expect-nextest.log" | tee -a "$R/expect-trials.txt"
    unset CUDA_CONFORMANCE_EXPECTATIONS
    cd "$root"
fi

if [[ " $phases " == *" nonroot "* ]]; then
    user=ccverify
    if [ "$(id -u)" != 0 ]; then
        echo "nonroot: not root here ($(id -un)): cannot create the unprivileged user" | tee "$R/nonroot.txt"
    else
        id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user" || echo "useradd failed"
        copy=/tmp/cc-nonroot-bundle
        rm -rf "$copy" && cp -r "$bundle" "$copy" && chmod -R a+rX "$copy"
        out=/tmp/cc-nonroot-out && rm -rf "$out" && mkdir -p "$out" && chown "$user" "$out"
        t0=$(date +%s)
        timeout 240 "$C" run --report "$R/root.json.gz" >"$R/root.log" 2>&1
        echo "as root: rc=$? $(secs "$t0") s" | tee -a "$R/nonroot.txt"
        t0=$(date +%s)
        timeout 240 su -s /bin/bash "$user" -c "umask 027; cd $copy && bin/cuda-conformance run --report $out/nonroot.json.gz" \
            >"$R/nonroot.log" 2>&1
        echo "as $user ($(id "$user")): rc=$? $(secs "$t0") s" | tee -a "$R/nonroot.txt"
        ls -l "$out" | tee -a "$R/nonroot.txt"
        cp "$out/nonroot.json.gz" "$R/" 2>/dev/null
        "$C" compare "$R/root.json.gz" "$R/nonroot.json.gz" >"$R/nonroot-compare.txt" 2>&1
        echo "compare root nonroot: rc=$? (0: no regression)" | tee -a "$R/nonroot.txt"
        head -n 30 "$R/nonroot-compare.txt"
        grep -a -m1 "cases on" "$R/root.log" "$R/nonroot.log"
    fi
fi
cat "$R/times.txt" 2>/dev/null
tar czf "${OUT:-/tmp}/verify-ci.tar.gz" -C "$(dirname "$R")" "$(basename "$R")"
