#!/usr/bin/env bash
# Regenerates cuda-sys/bindings/cudart-<CUDART_VERSION>.rs, the bindings a build with no toolkit documents on docs.rs
# (cuda-sys/build.rs, DOCS_RS), from the pinned headers of every release scripts/setup.sh installs: each one is the
# build script's own bindgen output for that toolkit, copied unchanged. The test cuda-sys/tests/pregenerated.rs
# fails when a build's bindings differ from the committed file of its release, so run this after a bindgen or
# header change. Usage: scripts/pregenerate-bindings.sh [VERSION...]   (default: 12.0 12.3 12.9 13.0 13.1 13.2 13.3 13.4 13.5)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(12.0 12.3 12.9 13.0 13.1 13.2 13.3 13.4 13.5)
for v in "${versions[@]}"; do
    bash scripts/setup.sh --cuda "$v" >/dev/null
    root="$PWD/.toolkit/cu$v"
    [ "$v" = 13.0 ] && root="$PWD/.toolkit/nvidia/cu13"
    features=()
    [ -f "$root/lib/libcudart_static.a" ] || features=(--features dynamic)
    # A target dir of its own, so that switching toolkits here never invalidates the workspace build.
    out=$(CUDA_HOME="$root" CARGO_TARGET_DIR=target/bindings cargo build -q -p cuda-conformance-sys \
        "${features[@]}" --message-format=json |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "build-script-executed" and m["package_id"].find("cuda-sys") >= 0:
        print(m["out_dir"])')
    version=$(grep -m1 '#define CUDART_VERSION' "$root/include/cuda_runtime_api.h" | awk '{print $3}')
    cp "$out/bindings.rs" "cuda-sys/bindings/cudart-$version.rs"
    echo "pregenerate-bindings: CUDA $v -> cuda-sys/bindings/cudart-$version.rs ($(wc -c <"$out/bindings.rs") bytes)"
done
