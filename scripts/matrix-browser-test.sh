#!/usr/bin/env bash
# The semantics matrix in a real browser: renders `cuda-conformance matrix --html` in headless Chromium and checks
# that the page's script ran and that the page shows every cell of the matrix's JSON, row by row, with the rows
# where the columns disagree first; then takes a screenshot.
#
#   scripts/matrix-browser-test.sh OUT_DIR [REPORT...]  (a REPORT may be gzipped)
#
# Without reports it makes two in mock child mode (no GPU): the same cases on two pretend configurations that
# disagree on a few of them. Writes OUT_DIR/matrix.{html,json,md}, OUT_DIR/dom.html (the page as rendered) and
# OUT_DIR/matrix.png. Needs chromium (Debian's package) and a built binary ($CUDA_CONFORMANCE_BIN, default
# target/debug/cuda-conformance).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDA_CONFORMANCE_BIN:-$repo/target/debug/cuda-conformance}
out=${1:?usage: matrix-browser-test.sh OUT_DIR [REPORT...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "matrix-browser-test: no chromium on PATH (apt-get install chromium)" >&2; exit 1; }

# The binary reads gzipped reports (as committed under results/) as they are.
reports=("$@")
if [ ${#reports[@]} -eq 0 ]; then
    # Two pretend configurations, in mock child mode: B fails one case and flips another's variant.
    ids=$("$bin" list | awk 'NR <= 12 {print $1}')
    a=$(echo "$ids" | sed -n 3p)
    b=$(echo "$ids" | sed -n 7p)
    CUDA_CONFORMANCE_MOCK="$b=variant-flip" "$bin" run --no-figures --reruns 0 --report "$out/a.json" >/dev/null 2>&1 || true
    CUDA_CONFORMANCE_MOCK="$a=fail" "$bin" run --no-figures --reruns 0 --report "$out/b.json" >/dev/null 2>&1 || true
    python3 - "$out/b.json" <<'PY'
import json, sys
p = sys.argv[1]
r = json.load(open(p))
r["provenance"]["gpu_name"] = "mock GPU B"
r["provenance"]["hostname"] = "host-b"
json.dump(r, open(p, "w"))
PY
    reports=("$out/a.json" "$out/b.json")
fi

"$bin" matrix "${reports[@]}" --html "$out/matrix.html" --json "$out/matrix.json" --markdown "$out/matrix.md"
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars
    --virtual-time-budget=5000)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$out/matrix.html" >"$out/dom.html" 2>"$out/chromium.log"
timeout 120 "$browser" "${flags[@]}" --window-size=1400,900 --screenshot="$out/matrix.png" "file://$out/matrix.html" \
    >>"$out/chromium.log" 2>&1

python3 - "$out/matrix.json" "$out/dom.html" "$out/matrix.png" <<'PY'
import html.parser, json, os, sys

matrix = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8").read()

class Rows(html.parser.HTMLParser):
    """The rendered table: per <tr data-case>, the text of its cells; and whether the script marked the body."""
    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.rendered = [], None, None, False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and a.get("data-rendered") == "true":
            self.rendered = True
        if tag == "tr" and "data-case" in a:
            self.row = (a["data-case"], "disagree" in (a.get("class") or ""), [])
        elif tag == "td" and self.row is not None:
            self.cell = []
    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row[2].append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

p = Rows()
p.feed(dom)
problems = []
if not p.rendered:
    problems.append("the page's script did not run (no data-rendered on <body>)")
if len(p.rows) != len(matrix["rows"]):
    problems.append(f"{len(p.rows)} rows rendered, the matrix has {len(matrix['rows'])}")
for want, got in zip(matrix["rows"], p.rows):
    cells = [c if c is not None else "\u2014" for c in want["cells"]]
    if (want["id"], want["disagree"], [want["id"]] + cells) != got:
        problems.append(f"row {want['id']}: expected {[want['id']] + cells} (disagree={want['disagree']}), shown {got}")
seen_agree = False
for case, disagree, _ in p.rows:
    if disagree and seen_agree:
        problems.append(f"{case} disagrees but comes after a row that agrees")
    seen_agree |= not disagree
if not os.path.getsize(sys.argv[3]) > 1000:
    problems.append("no screenshot")
if problems:
    print("matrix-browser-test: FAILED\n  " + "\n  ".join(problems[:20]))
    sys.exit(1)
disagreeing = sum(1 for r in matrix["rows"] if r["disagree"])
print(f"matrix-browser-test: ok: {len(p.rows)} rows x {len(matrix['columns'])} columns rendered as in the JSON, "
      f"{disagreeing} disagreeing row(s) first; screenshot {sys.argv[3]}")
PY
