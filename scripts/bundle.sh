#!/usr/bin/env bash
# Builds a self-contained bundle to copy to a GPU host that has a driver but no Rust and no CUDA toolkit:
#   bin/cuda-conformance   the CLI
#   tests/<name>           every [[test]] target of the root package (smoke, ...), release build
#   cases/                 the case files
#   seeds/                 the seeds' programs as written (scripts/build-seeds.sh; not in the fleet bundle)
#   deploy/                the fleet kit: Slurm job scripts (deploy/slurm), Kubernetes manifests (deploy/k8s)
#   repro/src/             every case's standalone C++ reproducer (`cuda-conformance repro`) and its header
#   repro/bin.tar.xz       those programs compiled with the pinned nvcc (scripts/build-reproducers.sh), packed:
#                          ~120 KB each, ~47 MB unpacked, which with the rest would not fit the 64 MiB a bundle
#                          travels in; `tar -xJf repro/bin.tar.xz -C repro` gives repro/bin, which
#                          `bin/cuda-conformance run --executor cxx|both` runs
#   repro/lib/             the pinned libcudart.so.13 the programs load (BUNDLE_REPRO=sources: sources only;
#                          BUNDLE_REPRO=none: no repro/ at all, e.g. for a check that runs only the Rust executor)
#   executors-bench-gpu.sh the full suite with each executor, timed (scripts/executors-bench-gpu.sh)
#   run-tests.sh           runs each test binary from inside the bundle (arguments go to every binary)
#   nextest/               with BUNDLE_NEXTEST=1: cargo-nextest's archive of the root package's test binaries
#                          (suite.tar.zst, release), the cargo-nextest binary (xz; it needs glibc only) and run.sh,
#                          which runs the archive from this folder (`--workspace-remap`) with .config/nextest.toml
#   MANIFEST               commit, build date, architecture, toolchain, runtime, kernels, sizes, checksums, ldd
# Two kinds:
#   scripts/bundle.sh          bundle/: cudart 13.0 (the default toolkit), for drivers R580 and newer;
#   scripts/bundle.sh --fleet  bundle-fleet/: cudart 12.9 (scripts/setup.sh --cuda 12.9, its own target dir
#                              target/fleet), for drivers R525 and newer; kernels for sm_70 … sm_90 unless
#                              CUDA_CONFORMANCE_ARCHS says otherwise.
# Both embed the same kind of kernel image (NVRTC 12.0: PTX ISA 8.0, ELF ABI-7 cubins; see build.rs).
# Cross: BUNDLE_TARGET=aarch64-unknown-linux-gnu (Grace Hopper) with CUDA_HOME naming that target's runtime
# (scripts/setup-aarch64.sh) gives bundle-aarch64/: bin/, cases/, deploy/ and the MANIFEST naming the target; no
# test binaries, seeds or reproducers (those are x86-64 builds or need a toolkit for the target). scripts/ci-aarch64.sh.
# cudart is linked statically, so the binaries need only glibc, libstdc++ and the driver's libcuda.so.1; this
# script fails if any binary of bin/, tests/ or seeds/ links libcudart dynamically. The reproducers are the
# exception, on purpose: statically linked they would take ~270 MB; they load the copy in repro/lib instead.
set -euo pipefail
say() { printf 'bundle: %s\n' "$*"; }
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
fleet=""
case "${1:-}" in
    "") ;;
    --fleet) fleet=1 ;;
    *) printf 'usage: scripts/bundle.sh [--fleet]\n' >&2; exit 2 ;;
esac
out="$repo/bundle"
host=$(rustc -vV | sed -n 's/^host: //p')
target=${BUNDLE_TARGET:-$host}
cross=""
if [ "$target" != "$host" ]; then
    cross=1
    arch=${target%%-*}
    out="$repo/bundle-$arch"
    # Debian's cross binutils for the target (readelf/objdump of a foreign ELF), e.g. aarch64-linux-gnu-.
    tools="$arch-linux-gnu-"
    [ -n "${CUDA_HOME:-}" ] || { say "BUNDLE_TARGET=$target needs CUDA_HOME naming its CUDA runtime (scripts/setup-aarch64.sh)" >&2; exit 1; }
    export "CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$target")_LINKER=${tools}gcc" "CC_$(tr '-' '_' <<<"$target")=${tools}gcc"
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/$target}"
fi
if [ -n "$fleet" ]; then
    out="$repo/bundle-fleet"
    # The fleet's GPUs: V100, T4, A100, A10/A40, L4/L40, H100. The PTX (of the lowest) covers newer ones.
    export CUDA_CONFORMANCE_ARCHS="${CUDA_CONFORMANCE_ARCHS:-70,75,80,86,89,90}"
fi


if [ -n "$fleet" ]; then
    bash scripts/setup.sh --cuda 12.9
    export CUDA_HOME="$repo/.toolkit/cu12.9"
    # Its own target dir: switching toolkits in one would rebuild everything from cuda-sys on, both ways.
    export CARGO_TARGET_DIR="$repo/target/fleet"
else
    bash scripts/setup.sh
fi

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
say "building release binaries for $target (cargo $(cargo --version | cut -d' ' -f2))"
artifacts=$(
    {
        # --target only for another target: given the host triple, cargo would build everything again elsewhere.
        cargo build --release --locked --package cuda-conformance --bin cuda-conformance ${cross:+--target "$target"} \
            --message-format=json
        # --test '*': every integration test target, not the lib/bin unit-test harnesses. Not for another target:
        # the bundle of a cross build carries the CLI only.
        [ -n "$cross" ] ||
            cargo test --release --locked --package cuda-conformance --test '*' --no-run --message-format=json
    } | executables
)
build_s=$(($(date +%s) - started))

rm -rf "$out"
mkdir -p "$out/bin"
[ -n "$cross" ] || mkdir -p "$out/tests"
while read -r kind name path; do
    case "$kind" in
        bin) cp "$path" "$out/bin/$name" ;;
        test) cp "$path" "$out/tests/$name" ;;
    esac
done <<<"$artifacts"
[ -x "$out/bin/cuda-conformance" ] || { say "no cuda-conformance binary among the artifacts" >&2; exit 1; }
[ -n "$cross" ] || compgen -G "$out/tests/*" >/dev/null || { say "no test binaries among the artifacts" >&2; exit 1; }
cp -r cases "$out/cases"
if [ -z "$fleet" ] && [ -z "$cross" ]; then
    # The seeds' programs as written (nvcc 13: drivers R580 and newer, like this bundle), for `bin/cuda-conformance
    # seeds`, which looks for them in seeds/ beside bin/. PyPI has no nvcc 12, so the fleet bundle has none.
    bash scripts/build-seeds.sh "$out/seeds"
fi
# The fleet kit (Slurm job scripts, Kubernetes manifests): they find the binary at bin/ of the bundle.
cp -r deploy "$out/deploy"
if [ -n "$cross" ]; then
    say "$target: no reproducers (their host code is built by nvcc for the host running it)"
elif ! "$out/bin/cuda-conformance" repro --help >/dev/null 2>&1; then
    # Only while the emitter (issue 19, the `repro` subcommand) is not merged: then there is nothing to build.
    say "this cuda-conformance has no repro subcommand: no reproducers (run --executor cxx|both needs them)" >&2
elif [ "${BUNDLE_REPRO:-}" = none ]; then
    say "no reproducers (BUNDLE_REPRO=none): run --executor cxx|both cannot run from this bundle"
elif [ -n "$fleet" ]; then
    # The pinned nvcc is CUDA 13 (drivers R580 and newer); the fleet bundle's drivers start at R525. Sources only.
    mkdir -p "$out/repro"
    "$out/bin/cuda-conformance" repro "" --out "$out/repro/src" >/dev/null
    say "fleet bundle: reproducer sources only (repro/src; no nvcc 12 to build them for R525 drivers)"
elif [ "${BUNDLE_REPRO:-}" = sources ]; then
    # BUNDLE_REPRO=sources: the programs' sources and the pinned cudart, not compiled. Compiling ~540 programs takes
    # ~7 CPU-seconds each (~30 min on a 2-core machine, ~5 min on a 16-core GPU host), so a GPU host that has the
    # same nvcc release can build them there: NVCC=/usr/local/cuda/bin/nvcc scripts/build-reproducers.sh.
    mkdir -p "$out/repro/lib"
    "$out/bin/cuda-conformance" repro "" --out "$out/repro/src" >/dev/null
    cp -L .toolkit/nvidia/cu13/lib/libcudart.so.13 "$out/repro/lib/libcudart.so.13"
    cp scripts/build-reproducers.sh "$out/build-reproducers.sh"
    say "reproducer sources only (BUNDLE_REPRO=sources): build them with build-reproducers.sh where nvcc 13.0 is"
else
    # Their PTX: the lowest architecture the suite's kernels target, as build.rs reads it.
    lowest=$(tr ',' '\n' <<<"${CUDA_CONFORMANCE_ARCHS:-90}" | tr -dc '0-9\n' | sort -n | head -n 1)
    bash scripts/build-reproducers.sh "$out/bin/cuda-conformance" "$out/repro" "${lowest:-90}"
    # xz -9: a dictionary large enough to span many programs, which share the header's code.
    tar -C "$out/repro" -cf - bin | xz -9 >"$out/repro/bin.tar.xz"
    rm -rf "$out/repro/bin"
    say "reproducers packed: repro/bin.tar.xz, $(du -h "$out/repro/bin.tar.xz" | cut -f1) (unpack: tar -xJf repro/bin.tar.xz -C repro)"
fi
[ -n "$cross" ] || cp scripts/executors-bench-gpu.sh "$out/executors-bench-gpu.sh"

if [ -z "$cross" ]; then
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
fi

if [ "${BUNDLE_NEXTEST:-}" = 1 ] && [ -z "$cross" ]; then
    # The suite under cargo-nextest on a GPU host without Rust (docs/running.md#cargo-nextest): the archive of the
    # root package's test binaries, built with the release profile as tests/ is; cargo-nextest itself, which needs
    # only glibc (`ldd`: libc, libm, libgcc_s), packed with xz (23 MB -> 5 MB); the config with the GPU test group.
    nextest=$(command -v cargo-nextest) ||
        { say "BUNDLE_NEXTEST=1: no cargo-nextest on PATH (cargo install cargo-nextest --locked)" >&2; exit 1; }
    mkdir -p "$out/nextest" "$out/.config"
    cargo nextest archive --locked --package cuda-conformance --cargo-profile release \
        --archive-file "$out/nextest/suite.tar.zst"
    xz -T0 -6 -c "$nextest" >"$out/nextest/cargo-nextest.xz"
    cp .config/nextest.toml "$out/.config/nextest.toml"
    # nextest checks that the remapped workspace has its root manifest.
    cp Cargo.toml "$out/Cargo.toml"
    cat >"$out/nextest/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs the suite's nextest archive from this bundle: `nextest/run.sh --profile ci` (arguments go to `nextest run`).
# cargo-nextest is unpacked once into nextest/bin/ (or to $NEXTEST_BIN, when the bundle is read-only).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${NEXTEST_BIN:-$here/nextest/bin/cargo-nextest}
if [ ! -x "$bin" ]; then
    mkdir -p "$(dirname "$bin")"
    xz -dc "$here/nextest/cargo-nextest.xz" >"$bin.tmp" && chmod +x "$bin.tmp" && mv "$bin.tmp" "$bin"
fi
cd "$here"
exec "$bin" nextest run --archive-file "$here/nextest/suite.tar.zst" --workspace-remap "$here" "$@"
EOF
    chmod +x "$out/nextest/run.sh"
    # Issue 33's GPU check of this (scripts/verify-ci-gpu.sh): nextest against cargo test and run, expectation
    # files, root against an unprivileged user.
    cp scripts/verify-ci-gpu.sh scripts/verify-ci-gpu-compare.py "$out/"
    say "nextest: nextest/suite.tar.zst $(du -h "$out/nextest/suite.tar.zst" | cut -f1), cargo-nextest $("$nextest" --version | head -n 1 | cut -d' ' -f2) (nextest/run.sh)"
fi

(
    cd "$out"
    echo "cuda-conformance bundle"
    dirty=$(git -C "$repo" diff --quiet HEAD || echo ' (with uncommitted changes)')
    echo "commit:     $(git -C "$repo" rev-parse HEAD)$dirty"
    echo "built:      $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version | head -n 1)"
    echo "target:     $target$([ -n "$cross" ] && echo " (cross-built on $host; built, not yet run on such a host)")"
    echo "build time: ${build_s} s (cargo, release; incremental if target/ was warm)"
    echo "rustc:      $(rustc --version)"
    echo "toolkit:    ${CUDA_HOME:-default (.toolkit/nvidia/cu13)}, $(grep -m1 -o 'CUDART_VERSION *[0-9]*' "${CUDA_HOME:-$repo/.toolkit/nvidia/cu13}/include/cuda_runtime_api.h" 2>/dev/null || echo 'CUDART_VERSION unknown')"
    echo "drivers:    $([ -n "$fleet" ] && echo 'R525 (CUDA 12.0) and newer' || echo 'R580 (CUDA 13.0) and newer')"
    echo "kernels:    $(bin/cuda-conformance info --kernels 2>/dev/null || echo "CUDA_CONFORMANCE_ARCHS=${CUDA_CONFORMANCE_ARCHS:-90 (default)}")"
    echo
    echo "files (bytes, sha256, needs glibc):"
    for f in bin/* $(compgen -G 'tests/*' || true) $(compgen -G 'seeds/*' || true); do
        glibc=$(${tools:-}objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
        printf '  %-40s %10d  %s  %s\n' "$f" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)" "${glibc#GLIBC_}"
    done
    for f in bin/* $(compgen -G 'tests/*' || true) $(compgen -G 'seeds/*' || true); do
        echo
        if [ -n "$cross" ]; then
            echo "needed by $f (${tools}readelf -d):"
            ${tools}readelf -d "$f" | sed -n 's/.*(NEEDED) *Shared library: \[\(.*\)\]/  \1/p'
        else
            echo "ldd $f:"
            ldd "$f" | sed 's/^/  /'
        fi
    done
    if [ -d repro ]; then
        echo
        echo "reproducers (repro/): $(compgen -G 'repro/src/*.cu' | wc -l) sources in repro/src, $(du -sh repro | cut -f1) in all"
        if [ -f repro/bin.tar.xz ]; then
            echo "  repro/bin.tar.xz $(stat -c %s repro/bin.tar.xz) bytes: $(tar -tJf repro/bin.tar.xz | grep -c '^bin/.') programs, $(xz -l --robot repro/bin.tar.xz | awk '/^totals/ {print $5}') bytes unpacked"
            echo "  linked against cudart shared (rpath \$ORIGIN/../lib), on purpose: see scripts/build-reproducers.sh"
            echo "  repro/lib/libcudart.so.13 $(stat -c %s repro/lib/libcudart.so.13) bytes, sha256 $(sha256sum repro/lib/libcudart.so.13 | cut -c1-16)"
        fi
    fi
) >"$out/MANIFEST"

# Only the reproducers (repro/bin, see above) may load libcudart: every other binary must carry it.
needed() { if [ -n "$cross" ]; then ${tools}readelf -d "$1"; else ldd "$1"; fi; }
for f in "$out"/bin/* $(compgen -G "$out/tests/*" || true) $(compgen -G "$out/seeds/*" || true); do
    if needed "$f" | grep -q libcudart; then
        say "$f links libcudart dynamically; the bundle would need the toolkit at run time" >&2
        exit 1
    fi
done
if [ -n "$cross" ]; then
    say "wrote $out ($(du -sh "$out" | cut -f1)) for $target in ${build_s} s of building; on the GPU host: $(basename "$out")/bin/cuda-conformance run"
else
    say "wrote $out ($(du -sh "$out" | cut -f1)) in ${build_s} s of building; on the GPU host: $(basename "$out")/run-tests.sh"
fi
