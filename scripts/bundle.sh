#!/usr/bin/env bash
# Builds a self-contained bundle/ to copy to a GPU host that has a driver but no Rust and no CUDA toolkit:
#   bundle/bin/cuda-conformance   the CLI
#   bundle/tests/<name>           every [[test]] target of the root package (smoke, ...), release build
#   bundle/cases/                 the case files
#   bundle/run-tests.sh           runs each test binary from inside bundle/ (arguments go to every binary)
#   bundle/MANIFEST               commit, build date, toolchain, sizes, checksums, ldd output
# cudart is linked statically, so the binaries need only glibc, libstdc++ and the driver's libcuda.so.1; this
# script fails if any binary links libcudart dynamically.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out="$repo/bundle"

say() { printf 'bundle: %s\n' "$*"; }

bash scripts/setup.sh

# Executables of the compiler-artifact messages of `cargo --message-format=json` on stdin, as "kind name path".
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line) if line.startswith("{") else {}
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["kind"][0], m["target"]["name"], m["executable"])
'
}

started=$(date +%s)
say "building release binaries (cargo $(cargo --version | cut -d' ' -f2))"
artifacts=$(
    {
        cargo build --release --locked --package cuda-conformance --bin cuda-conformance --message-format=json
        # --test '*': every integration test target, not the lib/bin unit-test harnesses.
        cargo test --release --locked --package cuda-conformance --test '*' --no-run --message-format=json
    } | executables
)
build_s=$(($(date +%s) - started))

rm -rf "$out"
mkdir -p "$out/bin" "$out/tests"
while read -r kind name path; do
    case "$kind" in
        bin) cp "$path" "$out/bin/$name" ;;
        test) cp "$path" "$out/tests/$name" ;;
    esac
done <<<"$artifacts"
[ -x "$out/bin/cuda-conformance" ] || { say "no cuda-conformance binary among the artifacts" >&2; exit 1; }
compgen -G "$out/tests/*" >/dev/null || { say "no test binaries among the artifacts" >&2; exit 1; }
cp -r cases "$out/cases"

cat >"$out/run-tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs every test binary of this bundle, from this folder, as `cargo test` would from the package root.
# Arguments go to each binary (libtest flags: a name filter, --test-threads N, --list, --format terse ...).
# A missing or unusable GPU fails the GPU trials here; CUDA_CONFORMANCE_REQUIRE_GPU=0 ignores them instead.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export CUDA_CONFORMANCE_REQUIRE_GPU="${CUDA_CONFORMANCE_REQUIRE_GPU:-1}"
export CARGO_MANIFEST_DIR="$here"
status=0
for t in tests/*; do
    printf '\n===== %s\n' "$t"
    "./$t" "$@" || status=1
done
exit "$status"
EOF
chmod +x "$out/run-tests.sh"

nvcc="$(ls -d "$repo"/.toolkit/nvidia/cu13/bin/nvcc 2>/dev/null || command -v nvcc || true)"
(
    cd "$out"
    echo "cuda-conformance bundle"
    dirty=$(git -C "$repo" diff --quiet HEAD || echo ' (with uncommitted changes)')
    echo "commit:     $(git -C "$repo" rev-parse HEAD)$dirty"
    echo "built:      $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version | head -n 1)"
    echo "build time: ${build_s} s (cargo, release; incremental if target/ was warm)"
    echo "rustc:      $(rustc --version)"
    echo "nvcc:       $([ -n "$nvcc" ] && "$nvcc" --version | grep -o 'release [0-9.]*, V[0-9.]*' || echo unknown)"
    echo "kernels:    CUDA_CONFORMANCE_ARCHS=${CUDA_CONFORMANCE_ARCHS:-90 (default)}"
    echo
    echo "files (bytes, sha256, needs glibc):"
    for f in bin/* tests/*; do
        glibc=$(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
        printf '  %-40s %10d  %s  %s\n' "$f" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)" "${glibc#GLIBC_}"
    done
    for f in bin/* tests/*; do
        echo
        echo "ldd $f:"
        ldd "$f" | sed 's/^/  /'
    done
) >"$out/MANIFEST"

if grep -q '^ .*libcudart' "$out/MANIFEST"; then
    say "a binary links libcudart dynamically; the bundle would need the toolkit at run time" >&2
    exit 1
fi
say "wrote $out ($(du -sh "$out" | cut -f1)) in ${build_s} s of building; on the GPU host: bundle/run-tests.sh"
