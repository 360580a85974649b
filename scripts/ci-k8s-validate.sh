#!/usr/bin/env bash
# The Kubernetes manifests (deploy/k8s/*.yaml), validated offline — no cluster can run here (shared/FLEET.md):
#   1. strict schema validation with the pinned kubernetes-validate (deploy/k8s/requirements.txt, installed from
#      PyPI into target/k8s-validate when missing) against the oldest Kubernetes the manifests need (1.33: per-index
#      backoff and FailIndex are GA there) and the newest it knows; it must also reject a misspelt field, or the
#      strictness this relies on is gone;
#   2. the cross-field rules the API server enforces and the kit's own consistency (scripts/k8s-check.py), and its
#      self-test: a mutation breaking each rule must be caught.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'ci-k8s-validate: %s\n' "$*"; }
site=target/k8s-validate
stamp="$site/.requirements.txt"
if ! cmp -s deploy/k8s/requirements.txt "$stamp"; then
    say "installing deploy/k8s/requirements.txt into $site"
    rm -rf "$site"
    timeout 300 python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$site" \
        -r deploy/k8s/requirements.txt
    cp deploy/k8s/requirements.txt "$stamp"
fi
export PYTHONPATH="$PWD/$site${PYTHONPATH:+:$PYTHONPATH}"
validate() { python3 -m kubernetes_validate --quiet --strict "$@"; }
for version in 1.33.0 1.37.0; do
    validate -k "$version" deploy/k8s/*.yaml
    say "deploy/k8s/*.yaml valid against Kubernetes $version (strict)"
done
bad=$(mktemp --suffix=.yaml)
trap 'rm -f "$bad"' EXIT
sed 's/^\(  *\)restartPolicy: Never/\1restartPolicey: Never/' deploy/k8s/merge-job.yaml >"$bad"
if validate -k 1.33.0 "$bad" >/dev/null 2>&1; then
    say "FAILED: a misspelt field (restartPolicey) passed kubernetes-validate --strict"
    exit 1
fi
python3 scripts/k8s-check.py deploy/k8s/*.yaml
python3 scripts/k8s-check.py --self-test deploy/k8s
