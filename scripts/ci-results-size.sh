#!/usr/bin/env bash
# results/ stays small (issue 33): the committed files under results/ must add up to less than 10 MB (10,000,000
# bytes). A new measurement keeps its write-up and its reports gzipped; raw logs, derived summaries and the reports of
# runs a later one supersedes leave the tree (git keeps them; the write-up names the commit: results/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=10000000
total=0
while IFS= read -r -d '' f; do
    [ -f "$f" ] && total=$((total + $(stat -c %s "$f")))
done < <(git ls-files -z results)
if [ "$total" -ge "$limit" ]; then
    echo "ci-results-size: results/ holds $total bytes, the limit is $limit; the largest files:" >&2
    git ls-files -z results | xargs -0 stat -c '%s %n' | sort -rn | head -n 10 >&2
    exit 1
fi
echo "ci-results-size: results/ holds $total bytes (limit $limit)"
