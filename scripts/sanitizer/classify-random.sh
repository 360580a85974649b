#!/usr/bin/env bash
# Attributes every error in a compute-sanitizer log of the random programs (tests/random_programs, run with
# --test-threads 1 so each error falls under the test that was running) and judges it (issue 23). The only error
# the programs provoke on purpose is cudaErrorGraphExecUpdateFailure: the forbidden topology change that
# lower.rs expects `update` to reject. compute-sanitizer reports it on cudaGraphExecUpdate and again on every
# cudaPeekAtLastError / cudaGetLastError that still finds it as the thread's last error (the executor peeks
# before its own internal calls, and a case's last error is only cleared by the script), so those re-reports are
# the same intended error. Anything else (another code, a device error) is unintended. Exit 0 only when every
# error is intended, the attributed count equals the tool's ERROR SUMMARY and the test binary printed its result.
set -euo pipefail
log=${1:?usage: classify-random.sh LOG}
awk '
  /^test [^ ]+ +\.\.\./ { test = $2 }
  /Program hit / {
    code = $0; sub(/.*Program hit /, "", code); sub(/ .*/, "", code)
    call = $0; sub(/.*on CUDA API call to /, "", call); sub(/\.$/, "", call)
    what = code " on " call
    if (code == "cudaErrorGraphExecUpdateFailure") intended[test ": " what]++; else unintended[test ": " what]++
    n++
  }
  /^========= Invalid / { line = $0; sub(/^========= /, "", line); unintended[test ": " line]++; n++ }
  /ERROR SUMMARY: [0-9]+ error/ { s = $0; sub(/.*ERROR SUMMARY: /, "", s); sub(/ .*/, "", s); summary = s + 0 }
  /^test result: / { result = $0 }
  END {
    for (k in intended) printf "intended   %4d  %s\n", intended[k], k
    bad = 0
    for (k in unintended) { printf "UNINTENDED %4d  %s\n", unintended[k], k; bad += unintended[k] }
    printf "%d errors attributed, %d unintended; the tool counted %d; %s\n", n, bad, summary, (result == "" ? "NO test result line" : result)
    exit (bad == 0 && n == summary && result != "") ? 0 : 1
  }' "$log"
