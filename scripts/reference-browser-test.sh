#!/usr/bin/env bash
# The rules reference site (issue 21) in a real browser: `cuda-conformance reference --out` with the committed
# results, every page rendered by headless Chromium, and the rendered pages checked: every case of `list` has its
# section on its area's page (with verdict rows where a report has the case), the index links every area,
# and the known finding (graph/update/dependency-count-differs, a fail on the H100) is marked.
#
#   scripts/reference-browser-test.sh OUT_DIR [REPORT...]   (a REPORT may be gzipped)
#
# Without reports it uses the newest full report of each configuration under results/ (listed below). Needs
# chromium and a built binary ($CUDA_CONFORMANCE_BIN, default target/debug/cuda-conformance).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDA_CONFORMANCE_BIN:-$repo/target/debug/cuda-conformance}
out=${1:?usage: reference-browser-test.sh OUT_DIR [REPORT...]}
shift
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "reference-browser-test: no chromium on PATH (apt-get install chromium)" >&2; exit 1; }

reports=("$@")
if [ ${#reports[@]} -eq 0 ]; then
    # One report per configuration, the newest of each (older ones of the same configuration would merge into the
    # same column and show old verdicts beside new ones).
    reports=(
        "$repo/results/2026-11-25_consolidation_h100/report-83ca549.json.gz"          # H100, R580, cudart 13.0
        "$repo/results/2026-11-25_cudart-13.5_h100/report-13.5.json.gz"               # H100, R580, cudart 13.5
        "$repo/results/2026-11-23_fleet-bundle_h100/with-graphs-and-stream-memory/fleet.json.gz"  # cudart 12.9
        "$repo/results/2026-11-23_fleet-bundle_h100/with-graphs-and-stream-memory/fleet-driver-12.2.json.gz"
        "$repo/results/2026-11-23_multi-gpu_h200x2/final-0bff3b6/full1.json.gz"       # 2 x H200, R580, 13.0
    )
fi
args=()
for i in "${!reports[@]}"; do
    r=${reports[i]}
    if [[ $r == *.gz ]]; then
        gunzip -c "$r" >"$out/report-$i.json"
        r="$out/report-$i.json"
    fi
    args+=(--report "$r")
done
site="$out/site"
"$bin" reference --out "$site" "${args[@]}"
"$bin" list | awk '{print $1}' >"$out/cases.txt"

flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars
    --virtual-time-budget=2000)
mkdir -p "$out/dom"
for page in "$site"/*.html; do
    timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" >"$out/dom/$(basename "$page")" 2>>"$out/chromium.log"
done
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$out/graph.png" "file://$site/graph.html" \
    >>"$out/chromium.log" 2>&1

python3 - "$out/dom" "$out/cases.txt" "${#reports[@]}" <<'PY'
import html.parser, os, sys

dom_dir, cases_file, n_reports = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [l.strip() for l in open(cases_file) if l.strip()]
# The cases some report has: a case added since the committed results ran has its section but no verdicts yet.
import glob, json
ran = set()
for f in glob.glob(os.path.join(os.path.dirname(dom_dir), "report-*.json")):
    ran.update(c["id"] for c in json.load(open(f))["cases"])

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections, self.links, self.findings, self.rows = {}, [], set(), {}
        self.current = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-case" in a:
            self.current = a["data-case"]
            self.sections[self.current] = a.get("class", "")
            self.rows[self.current] = 0
            if "finding" in a.get("class", "").split():
                self.findings.add(self.current)
        elif tag == "tr" and self.current:
            self.rows[self.current] += 1
        elif tag == "a" and "href" in a:
            self.links.append(a["href"])
    def handle_endtag(self, tag):
        if tag == "section":
            self.current = None

pages = {}
for name in os.listdir(dom_dir):
    p = Page()
    p.feed(open(os.path.join(dom_dir, name), encoding="utf-8").read())
    pages[name] = p
problems = []
if not pages.get("index.html"):
    problems.append("no index.html rendered")
for case in cases:
    area = case.split("/")[0]
    page = pages.get(f"{area}.html")
    if page is None or case not in page.sections:
        problems.append(f"{case}: no section on {area}.html")
    elif page.rows[case] < 2 and case in ran:
        problems.append(f"{case}: no verdict row on {area}.html, though a report has it")
areas = sorted({c.split("/")[0] for c in cases})
missing = [a for a in areas if f"{a}.html" not in pages["index.html"].links]
if missing:
    problems.append(f"index.html links no page for: {missing}")
known = "graph/update/dependency-count-differs"
if known in cases and known not in pages["graph.html"].findings:
    problems.append(f"{known} (a fail on the H100) is not marked as a finding")
extra = sum(len(p.sections) for p in pages.values()) - len(cases)
if extra:
    problems.append(f"{extra} section(s) more than cases")
if problems:
    print("reference-browser-test: FAIL", *problems[:20], sep="\n  ")
    sys.exit(1)
print(f"reference-browser-test: {len(cases)} cases in {len(areas)} area pages as Chromium rendered them, "
      f"{sum(len(p.findings) for p in pages.values())} marked as findings, verdicts from {n_reports} report(s)")
PY
