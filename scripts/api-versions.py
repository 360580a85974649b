#!/usr/bin/env python3
"""Writes cuda-sys/API-VERSIONS.md: which CUDA runtime functions exist, and which changed signature, in each toolkit.

Generated from the headers, never by hand, for writers of bindings against cuda-sys: it preprocesses each toolkit's
cuda_runtime_api.h the way bindgen sees it (C mode, `gcc -E`), reads every `cuda*` prototype (parameter names and
attributes dropped), and compares them version by version. It also lists the header macros that rename a plain
name (`#define cudaGetDeviceProperties cudaGetDeviceProperties_v2`): bindgen sees only the target name.

    scripts/setup.sh --cuda 12.0 && scripts/setup.sh --cuda 12.3 && scripts/setup.sh --cuda 12.9 && scripts/setup.sh &&
        scripts/setup.sh --cuda 13.5
    scripts/api-versions.py                      # the toolkits under .toolkit/, oldest first
    scripts/api-versions.py ROOT ROOT ...        # or these toolkit roots (each with include/cuda_runtime_api.h)
"""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cuda-sys" / "API-VERSIONS.md"
# Words that are part of a type, never a parameter name.
TYPE_WORDS = {"int", "char", "short", "long", "unsigned", "signed", "float", "double", "void", "const", "volatile",
              "struct", "enum", "union", "size_t"}


def version_of(include: Path) -> int:
    text = (include / "cuda_runtime_api.h").read_text(errors="replace")
    m = re.search(r"^#define\s+CUDART_VERSION\s+(\d+)", text, re.M)
    if not m:
        sys.exit(f"api-versions: no CUDART_VERSION in {include}/cuda_runtime_api.h")
    return int(m.group(1))


def preprocess(include: Path, macros: bool = False) -> str:
    cmd = ["gcc", "-E", "-P", "-x", "c", f"-I{include}", str(include / "cuda_runtime_api.h")]
    if macros:
        cmd.insert(2, "-dM")
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as e:
        sys.exit(f"api-versions: gcc failed on {include}:\n{e.stderr[-2000:]}")


def strip_attributes(text: str) -> str:
    """Removes `__attribute__((...))` groups (nested parentheses included) and `__declspec(...)`."""
    out, i = [], 0
    while i < len(text):
        m = re.compile(r"__attribute__\s*\(|__declspec\s*\(").search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        i = j
    return "".join(out)


def split_params(params: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def param_type(param: str) -> str:
    """The type of a parameter declaration, without its name: `const char *name` -> `const char *`."""
    param = re.sub(r"\s+", " ", param).strip()
    if "(" in param:  # a function pointer: drop the name inside `(*name)`
        return re.sub(r"\(\s*\*\s*\w+\s*\)", "(*)", param)
    param = re.sub(r"\[[^\]]*\]", "[]", param)
    m = re.match(r"^(.*?[\s*])(\w+)(\s*\[\])?$", param)
    if m and m.group(2) not in TYPE_WORDS and m.group(1).strip():
        param = m.group(1) + (m.group(3) or "")
    return re.sub(r"\s*\*\s*", " *", param).replace("( ", "(").strip()


def prototypes(include: Path) -> dict:
    text = strip_attributes(preprocess(include))
    text = re.sub(r"\s+", " ", text)
    found = {}
    # `extern <return type> cudaName(<params>);` at file scope (the preprocessed header holds nothing else like it).
    for m in re.finditer(r"extern\s+([\w\s\*]+?)\s*\b(cuda\w+)\s*\(([^;{}]*)\)\s*;", text):
        ret = re.sub(r"\s*\*\s*", " *", m.group(1).strip())
        params = split_params(m.group(3))
        if params == ["void"]:
            params = []
        found[m.group(2)] = f"{ret} ({', '.join(param_type(p) for p in params)})"
    return found


def renames(include: Path) -> dict:
    out = {}
    for line in preprocess(include, macros=True).splitlines():
        m = re.match(r"#define (cuda\w+) (.*)$", line)
        if m:
            target = re.search(r"\b(cuda\w+_v\d+)\b", m.group(2))
            if target and target.group(1) != m.group(1):
                out[m.group(1)] = target.group(1)
    return out


def label(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def main() -> None:
    if len(sys.argv) > 1:
        roots = [Path(a) for a in sys.argv[1:]]
    else:
        roots = sorted(REPO.glob(".toolkit/cu1*")) + [REPO / ".toolkit/nvidia/cu13"]
    kits = []
    for root in roots:
        include = root / "include"
        if (include / "cuda_runtime_api.h").is_file():
            kits.append((version_of(include), include))
    kits.sort()
    if len(kits) < 2:
        sys.exit("api-versions: need at least two toolkits (scripts/setup.sh --cuda 12.0, ...)")
    versions = [label(v) for v, _ in kits]
    protos = [prototypes(inc) for _, inc in kits]
    macros = [renames(inc) for _, inc in kits]
    names = sorted(set().union(*protos))

    stable, rows = 0, []
    for name in names:
        cells, prev = [], None
        for i, p in enumerate(protos):
            sig = p.get(name)
            if sig is None:
                cells.append("removed" if prev is not None else "–")
            elif i == 0:
                cells.append("✓")
            elif prev is None:
                cells.append("added")
            elif sig != prev:
                cells.append("**changed**")
            else:
                cells.append("✓")
            prev = sig
        if all(c == "✓" for c in cells):
            stable += 1
        else:
            rows.append((name, cells))

    lines = [
        "# CUDA runtime API by version",
        "",
        "<!-- Generated by scripts/api-versions.py from the toolkits' headers; do not edit by hand. -->",
        "",
        f"Toolkits read: {', '.join(f'CUDA {v} ({len(p)} functions)' for v, p in zip(versions, protos))}. "
        "What bindgen sees: each `cuda_runtime_api.h` preprocessed as C. Signatures are compared without parameter "
        "names or attributes.",
        "",
        f"**{stable} functions** have the same signature in every version read and are not listed. The "
        f"{len(rows)} below were added, removed or changed. In a cell: ✓ present, the same as in the column "
        "before; **changed**: the signature differs from the column before; `added` / `removed` against the "
        "column before; – absent. cuda-sys wraps the changes the harness depends on in `cuda_sys::compat`; code "
        "that calls another function listed here needs a `cudart_ge_*` cfg or a compat wrapper of its own.",
        "",
        "| function | " + " | ".join(versions) + " |",
        "|---|" + "---|" * len(versions),
    ]
    for name, cells in rows:
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")

    lines += ["", "## Renamed by the headers", "",
              "These plain names are `#define`d to another entry point, so bindgen emits only the target; the "
              "library still exports the plain name with an older ABI. Binding the plain name yourself calls that "
              "old entry point.", "",
              "| name | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    for name in sorted(set().union(*macros)):
        lines.append(f"| `{name}` | " + " | ".join(f"`{m[name]}`" if name in m else "–" for m in macros) + " |")

    lines += ["", "## Changed signatures", ""]
    for name, cells in rows:
        if "**changed**" not in cells:
            continue
        lines.append(f"`{name}`:")
        lines.append("")
        seen = None
        for v, p in zip(versions, protos):
            sig = p.get(name)
            if sig is not None and sig != seen:
                lines.append(f"- {v}: `{sig}`")
                seen = sig
        lines.append("")
    OUT.write_text("\n".join(lines).rstrip() + "\n")
    print(f"api-versions: wrote {OUT.relative_to(REPO)} ({len(rows)} functions differ across {', '.join(versions)})")


if __name__ == "__main__":
    main()
