#!/usr/bin/env bash
# CI check of expectation files through `cuda-conformance run --expectations FILE`, in mock child mode (no GPU): a
# file with a skip, a known flake, an expected failure and a skip for another GPU. The run must exit 0; the report
# must say *skipped* with the line's reason for the first (whose mock would crash: it must never run), *flake* with
# the line for the second (which ran, failing every time: a declared flake's failure is tolerated), *expected-fail*
# for the third and *pass* for the fourth (its line is for A100s, the mock GPU is not one). A line naming no case must stop the run (exit 2) naming its line.
# Usage: scripts/ci-expectations.sh [BINARY] [OUT-DIR]
set -euo pipefail
bin=${1:-target/debug/cuda-conformance}
out=${2:-target/ci-expectations}
rm -rf "$out" && mkdir -p "$out"
mapfile -t ids < <("$bin" list events/ | awk '{print $1}' | head -n 4)
[ "${#ids[@]}" = 4 ] || { echo "ci-expectations: fewer than 4 cases under events/" >&2; exit 1; }
cat >"$out/expectations.txt" <<TXT
# ACTION  CASE  [gpu=GLOB] [driver=GLOB] [runtime=GLOB]  REASON
skip  ${ids[0]}  hangs the worker on this driver (bug 1)
flake ${ids[1]}  fails now and then (bug 2)
fail  ${ids[2]}  a known driver bug (bug 3)
skip  ${ids[3]}  gpu=*A100*  only hangs A100s
TXT
status=0
CUDA_CONFORMANCE_MOCK="${ids[0]}=crash;${ids[1]}=fail;${ids[2]}=fail" "$bin" run events/ --no-figures \
    --expectations "$out/expectations.txt" --report "$out/report.json" --junit "$out/junit.xml" \
    >"$out/run.log" 2>&1 || status=$?
[ "$status" = 0 ] || { cat "$out/run.log" >&2; echo "ci-expectations: run exited $status, not 0" >&2; exit 1; }
python3 - "$out/report.json" "$out/junit.xml" "${ids[@]}" <<'PY'
import json, sys
report, junit, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
cases = {c["id"]: c for c in json.load(open(report))["cases"]}
def check(cond, what):
    if not cond:
        sys.exit(f"ci-expectations: {what}")
skip, flake, fail, other = (cases[i] for i in ids)
check(skip["verdict"]["kind"] == "skipped", f"{ids[0]}: {skip['verdict']}")
check(skip["verdict"]["messages"] == [f"skipped by the expectation skip ({sys.argv[1].rsplit('/', 1)[0]}/expectations.txt:2): hangs the worker on this driver (bug 1)"], skip["verdict"]["messages"])
check(skip.get("observations") is None, f"{ids[0]} ran")
check(flake["verdict"]["kind"] == "flake" and flake["expectation"].startswith("flake (") and len(flake.get("attempts", [])) >= 2, f"{ids[1]}: {flake}")
check(fail["verdict"]["kind"] == "expected-fail" and "a known driver bug (bug 3)" in fail["verdict"]["messages"][0], f"{ids[2]}: {fail['verdict']}")
check(other["verdict"]["kind"] == "pass" and "expectation" not in other, f"{ids[3]}: {other['verdict']}")
xml = open(junit).read()
check("hangs the worker on this driver (bug 1)" in xml, "the JUnit does not carry the skip's reason")
print(f"ci-expectations: skip, flake, expected-fail and a skip for another GPU judged as declared ({len(cases)} cases)")
PY
echo "skip nothing/such a stale line" >>"$out/expectations.txt"
status=0
CUDA_CONFORMANCE_MOCK="" "$bin" run events/ --no-figures --expectations "$out/expectations.txt" \
    --report "$out/stale.json" >"$out/stale.log" 2>&1 || status=$?
grep -q "expectations.txt:6: \`nothing/such\` names no case" "$out/stale.log" && [ "$status" = 2 ] ||
    { cat "$out/stale.log" >&2; echo "ci-expectations: a stale line gave exit $status without naming its line" >&2; exit 1; }
echo "ci-expectations: a line naming no case stops the run (exit 2) and names its line"
