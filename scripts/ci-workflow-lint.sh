#!/usr/bin/env bash
# The GitHub Actions recipe (deploy/github/*.yml), linted offline with the pinned zizmor (deploy/github/
# requirements.txt, installed from PyPI into target/zizmor when missing): the workflow schema (--strict-collection:
# a misspelt key fails) and every audit of the pedantic persona must pass. Then two mutations must fail, or the
# linter checks nothing: a misspelt `runs-on`, and a commit message expanded into a shell step (template injection).
# (The auditor persona's one finding, `self-hosted-runner`, is the recipe's purpose: deploy/README.md says why the
# workflow has no pull_request trigger.)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'ci-workflow-lint: %s\n' "$*"; }
site=target/zizmor
stamp="$site/.requirements.txt"
if ! cmp -s deploy/github/requirements.txt "$stamp"; then
    say "installing deploy/github/requirements.txt into $site"
    rm -rf "$site"
    timeout 300 python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
        --only-binary=:all: --require-hashes --target "$site" -r deploy/github/requirements.txt
    cp deploy/github/requirements.txt "$stamp"
fi
zizmor() { "$site/bin/zizmor" --offline --strict-collection --persona pedantic --no-progress "$@"; }
zizmor deploy/github/*.yml
say "deploy/github/*.yml: schema and audits clean ($("$site/bin/zizmor" --version))"
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
sed 's/runs-on: ubuntu-24.04/runs-onn: ubuntu-24.04/' deploy/github/gpu-conformance.yml >"$bad/misspelt.yml"
sed 's/echo "JUDGE=/echo "${{ github.event.head_commit.message }} JUDGE=/' deploy/github/gpu-conformance.yml \
    >"$bad/injection.yml"
for f in "$bad"/*.yml; do
    cmp -s "$f" deploy/github/gpu-conformance.yml && { say "FAILED: the mutation $(basename "$f") changed nothing"; exit 1; }
    if zizmor "$f" >/dev/null 2>&1; then
        say "FAILED: zizmor passed $(basename "$f")"
        exit 1
    fi
done
say "a misspelt key and a template injection are caught"
