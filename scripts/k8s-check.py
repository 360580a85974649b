#!/usr/bin/env python3
"""Cross-field checks of the Kubernetes manifests in deploy/k8s/ that schema validation cannot make.

`kubernetes-validate --strict` checks each field's name, type and presence against the API's JSON schema. The API
server also enforces rules across fields; a manifest that breaks one validates offline and is still rejected by
`kubectl apply`. This checks those rules for the kinds the kit uses (rule ids in brackets), and the kit's own
consistency between its manifests:

Job (batch/v1)
  [job-restart-policy]      the pod template's restartPolicy is Never or OnFailure
  [indexed-completions]     completionMode: Indexed needs completions
  [per-index-needs-indexed] backoffLimitPerIndex needs completionMode: Indexed
  [max-failed-indexes]      maxFailedIndexes needs backoffLimitPerIndex and is at most completions
  [indexed-limits]          with backoffLimitPerIndex, completions and parallelism are at most 100000
  [pfp-restart-never]       podFailurePolicy needs restartPolicy: Never
  [pfp-fail-index]          a FailIndex action needs backoffLimitPerIndex
  [pfp-rule-shape]          each rule has exactly one of onExitCodes and onPodConditions
  [pfp-container-name]      onExitCodes.containerName names a container or init container of the template
  [pfp-exit-codes]          exit code values: not empty, unique, in ascending order, 0 not with operator In
  [job-selector]            no spec.selector unless manualSelector: true (the API generates it)
  [indexed-name-length]     an Indexed Job's name is at most 63 characters (it becomes a label value)
DaemonSet (apps/v1)
  [selector-matches]        spec.selector is set and selects the template's labels
  [daemonset-restart]       the template's restartPolicy is Always
Every pod template
  [container-names]         container and init container names are unique DNS labels
  [volume-names]            volume names are unique
  [volume-mounts]           every volumeMount names a volume of the pod; mountPaths unique per container
  [extended-resources]      an extended resource (nvidia.com/gpu) is a whole number, set in limits, and equal in
                            requests when there
  [requests-within-limits]  cpu and memory requests are at most their limits
  [host-path-type]          a hostPath's type is one the API knows
  [field-ref]               env fieldRef paths are ones the downward API offers to env
  [labels]                  label keys and values are valid
Least privilege (every container of every pod template; the suite needs no privilege: deploy/README.md)
  [non-root]                runAsNonRoot: true and a non-zero runAsUser (the pod's or the container's)
  [no-privilege-escalation] allowPrivilegeEscalation: false, and not privileged
  [drop-all-capabilities]   capabilities: drop ALL, add none
  [read-only-root]          readOnlyRootFilesystem: true (reports go to the mounted claim)
The kit (deploy/k8s as a whole)
  [kit-merge-matches-run]   the merge Job's --job and --tasks are the Indexed Job's name and completions
  [kit-one-gpu-per-pod]     the Indexed Job's pod requests exactly one nvidia.com/gpu; the DaemonSet requests none
                            (an init container's request stays reserved for the pod's life)
  [kit-report-per-index]    the Indexed Job's report path has $JOB_COMPLETION_INDEX, and exit 2 (could not run)
                            fails its index without a retry
  [kit-one-claim]           every manifest mounts the claim reports-pvc.yaml defines

Usage: k8s-check.py FILE...       check (exit 1 on a broken rule, with file, object and rule)
       k8s-check.py --self-test DIR  the manifests in DIR pass, and a mutation breaking each rule is caught
"""

import copy
import re
import sys
from fractions import Fraction

import yaml

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
HOST_PATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"}
ENV_FIELD_PATHS = {"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
                   "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage"}
SUFFIXES = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
            "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(text):
    """A resource quantity (`500m`, `2Gi`, `1`) as an exact number, or None when it does not parse."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)([A-Za-z]*)", str(text).strip())
    if not m or m.group(2) not in SUFFIXES:
        return None
    return Fraction(m.group(1)) * SUFFIXES[m.group(2)]


def label_key_ok(key):
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(LABEL_NAME.match(name))


def label_value_ok(value):
    return isinstance(value, str) and len(value) <= 63 and bool(LABEL_VALUE.match(value))


def selects(selector, labels):
    """Whether a LabelSelector selects `labels`."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


class Checker:
    def __init__(self):
        self.errors = []  # (rule, where, message)

    def fail(self, rule, where, message):
        self.errors.append((rule, where, message))

    def labels(self, where, labels):
        for k, v in (labels or {}).items():
            if not label_key_ok(k):
                self.fail("labels", where, f"label key {k!r} is not a valid label name")
            if not label_value_ok(v):
                self.fail("labels", where, f"label {k}={v!r}: a value is at most 63 of [A-Za-z0-9-_.], alphanumeric at the ends")

    def pod(self, where, template):
        meta = template.get("metadata") or {}
        spec = template.get("spec") or {}
        self.labels(where + " template", meta.get("labels"))
        containers = (spec.get("initContainers") or []) + (spec.get("containers") or [])
        names = [c.get("name") for c in containers]
        for n in names:
            if not isinstance(n, str) or len(n) > 63 or not DNS_LABEL.match(n):
                self.fail("container-names", where, f"container name {n!r} is not a DNS label")
        for n in {n for n in names if names.count(n) > 1}:
            self.fail("container-names", where, f"two containers are named {n!r}")
        volumes = [v.get("name") for v in spec.get("volumes") or []]
        for n in {n for n in volumes if volumes.count(n) > 1}:
            self.fail("volume-names", where, f"two volumes are named {n!r}")
        for v in spec.get("volumes") or []:
            t = (v.get("hostPath") or {}).get("type")
            if "hostPath" in v and t is not None and t not in HOST_PATH_TYPES:
                self.fail("host-path-type", where, f"volume {v.get('name')}: hostPath type {t!r} is not one of {sorted(HOST_PATH_TYPES)}")
        for c in containers:
            cw = f"{where} container {c.get('name')}"
            paths = [m.get("mountPath") for m in c.get("volumeMounts") or []]
            for m in c.get("volumeMounts") or []:
                if m.get("name") not in volumes:
                    self.fail("volume-mounts", cw, f"volumeMount {m.get('name')!r} names no volume of the pod ({volumes})")
            for p in {p for p in paths if paths.count(p) > 1}:
                self.fail("volume-mounts", cw, f"two volumeMounts at {p}")
            res = c.get("resources") or {}
            requests, limits = res.get("requests") or {}, res.get("limits") or {}
            for name in set(requests) | set(limits):
                standard = name in STANDARD_RESOURCES or name.startswith("hugepages-") or "/" not in name or name.startswith("kubernetes.io/")
                if standard:
                    continue
                for side, table in (("requests", requests), ("limits", limits)):
                    q = quantity(table[name]) if name in table else None
                    if name in table and (q is None or q.denominator != 1):
                        self.fail("extended-resources", cw, f"{side}.{name} must be a whole number, not {table[name]!r}")
                if name not in limits:
                    self.fail("extended-resources", cw, f"{name} is requested but not in limits (an extended resource must be in limits)")
                elif name in requests and quantity(requests[name]) != quantity(limits[name]):
                    self.fail("extended-resources", cw, f"{name}: requests {requests[name]} must equal limits {limits[name]}")
            for name in ("cpu", "memory"):
                if name in requests and name in limits:
                    r, l = quantity(requests[name]), quantity(limits[name])
                    if r is not None and l is not None and r > l:
                        self.fail("requests-within-limits", cw, f"{name} request {requests[name]} exceeds its limit {limits[name]}")
            self.least_privilege(cw, spec.get("securityContext") or {}, c.get("securityContext") or {})
            for e in c.get("env") or []:
                path = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
                if path is None:
                    continue
                labelled = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
                if path not in ENV_FIELD_PATHS and not (labelled and label_key_ok(labelled.group(2))):
                    self.fail("field-ref", cw, f"env {e.get('name')}: fieldPath {path!r} is not offered to env by the downward API")
        return spec, names

    def least_privilege(self, where, pod_context, context):
        def effective(key):
            return context.get(key, pod_context.get(key))

        if effective("runAsNonRoot") is not True or effective("runAsUser") in (None, 0):
            self.fail("non-root", where, "runs as root: set runAsNonRoot: true and a non-zero runAsUser")
        if context.get("allowPrivilegeEscalation") is not False or context.get("privileged"):
            self.fail("no-privilege-escalation", where, "set allowPrivilegeEscalation: false (and privileged not true)")
        caps = context.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []) or caps.get("add"):
            self.fail("drop-all-capabilities", where, f"capabilities {caps}: drop ALL and add none")
        if context.get("readOnlyRootFilesystem") is not True:
            self.fail("read-only-root", where, "set readOnlyRootFilesystem: true (write to a mounted volume)")

    def job(self, where, obj):
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        pod, names = self.pod(where, template)
        restart = pod.get("restartPolicy")
        if restart not in ("Never", "OnFailure"):
            self.fail("job-restart-policy", where, f"restartPolicy {restart!r}: a Job's pods need Never or OnFailure")
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        if indexed and completions is None:
            self.fail("indexed-completions", where, "completionMode: Indexed needs completions")
        per_index = spec.get("backoffLimitPerIndex")
        if per_index is not None and not indexed:
            self.fail("per-index-needs-indexed", where, "backoffLimitPerIndex needs completionMode: Indexed")
        mfi = spec.get("maxFailedIndexes")
        if mfi is not None:
            if per_index is None:
                self.fail("max-failed-indexes", where, "maxFailedIndexes needs backoffLimitPerIndex")
            if completions is not None and mfi > completions:
                self.fail("max-failed-indexes", where, f"maxFailedIndexes {mfi} exceeds completions {completions}")
        if per_index is not None:
            for field in ("completions", "parallelism"):
                if (spec.get(field) or 0) > 100000:
                    self.fail("indexed-limits", where, f"{field} exceeds 100000 with backoffLimitPerIndex")
        if indexed and len((obj.get("metadata") or {}).get("name", "")) > 63:
            self.fail("indexed-name-length", where, "an Indexed Job's name is at most 63 characters")
        if spec.get("selector") is not None and not spec.get("manualSelector"):
            self.fail("job-selector", where, "spec.selector is generated by the API: set it only with manualSelector: true")
        pfp = spec.get("podFailurePolicy")
        if pfp is not None:
            if restart != "Never":
                self.fail("pfp-restart-never", where, f"podFailurePolicy needs restartPolicy: Never, not {restart!r}")
            for i, rule in enumerate(pfp.get("rules") or []):
                rw = f"{where} podFailurePolicy.rules[{i}]"
                if rule.get("action") == "FailIndex" and per_index is None:
                    self.fail("pfp-fail-index", rw, "action FailIndex needs backoffLimitPerIndex")
                codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
                if (codes is None) == (conditions is None):
                    self.fail("pfp-rule-shape", rw, "a rule needs exactly one of onExitCodes and onPodConditions")
                if codes is not None:
                    cn = codes.get("containerName")
                    if cn is not None and cn not in names:
                        self.fail("pfp-container-name", rw, f"containerName {cn!r} is not a container of the template ({names})")
                    values = codes.get("values") or []
                    if not values:
                        self.fail("pfp-exit-codes", rw, "values must not be empty")
                    if len(set(values)) != len(values) or values != sorted(values):
                        self.fail("pfp-exit-codes", rw, f"values {values} must be unique and in ascending order")
                    if codes.get("operator") == "In" and 0 in values:
                        self.fail("pfp-exit-codes", rw, "exit code 0 cannot be used with operator In")

    def daemonset(self, where, obj):
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        pod, _ = self.pod(where, template)
        selector = spec.get("selector")
        labels = (template.get("metadata") or {}).get("labels") or {}
        if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            self.fail("selector-matches", where, "a DaemonSet needs a non-empty spec.selector")
        elif not selects(selector, labels):
            self.fail("selector-matches", where, f"spec.selector {selector} does not select the template's labels {labels}")
        if pod.get("restartPolicy", "Always") != "Always":
            self.fail("daemonset-restart", where, f"restartPolicy {pod.get('restartPolicy')!r}: a DaemonSet's pods need Always")

    def object(self, where, obj):
        self.labels(where, (obj.get("metadata") or {}).get("labels"))
        kind = obj.get("kind")
        if kind == "Job":
            self.job(where, obj)
        elif kind == "DaemonSet":
            self.daemonset(where, obj)

    def kit(self, objects):
        """The kit's own rules over all manifests: `objects` is [(where, obj)]."""
        by_kind = {}
        for where, obj in objects:
            by_kind.setdefault(obj.get("kind"), []).append((where, obj))
        jobs = by_kind.get("Job", [])
        runs = [(w, o) for w, o in jobs if (o.get("spec") or {}).get("completionMode") == "Indexed"]
        merges = [(w, o) for w, o in jobs if (o.get("spec") or {}).get("completionMode") != "Indexed"]

        def containers(obj):
            spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
            return (spec.get("initContainers") or []) + (spec.get("containers") or [])

        def gpus(c):
            res = c.get("resources") or {}
            return (res.get("limits") or {}).get("nvidia.com/gpu", (res.get("requests") or {}).get("nvidia.com/gpu"))

        for w, run in runs:
            name, completions = run["metadata"]["name"], run["spec"].get("completions")
            for mw, merge in merges:
                args = [str(a) for c in containers(merge) for a in (c.get("args") or [])]
                after = {flag: args[i + 1] for i, flag in enumerate(args[:-1]) if flag in ("--job", "--tasks")}
                if after.get("--job") != name or after.get("--tasks") != str(completions):
                    self.fail("kit-merge-matches-run", mw, f"merges --job {after.get('--job')} --tasks {after.get('--tasks')}, but the run is {name} with {completions} completions")
            suite = containers(run)
            if [gpus(c) for c in suite] != [1]:
                self.fail("kit-one-gpu-per-pod", w, f"each pod must request exactly one nvidia.com/gpu (one pod per GPU), not {[gpus(c) for c in suite]}")
            text = " ".join(str(a) for c in suite for a in (c.get("command") or []) + (c.get("args") or []))
            if "$JOB_COMPLETION_INDEX" not in text and "$(JOB_COMPLETION_INDEX)" not in text:
                self.fail("kit-report-per-index", w, "the report path must carry $JOB_COMPLETION_INDEX")
            rules = ((run["spec"].get("podFailurePolicy") or {}).get("rules")) or []
            if not any(r.get("action") == "FailIndex" and 2 in ((r.get("onExitCodes") or {}).get("values") or []) for r in rules):
                self.fail("kit-report-per-index", w, "exit 2 (could not run) must fail its index without a retry (FailIndex)")
        for w, ds in by_kind.get("DaemonSet", []):
            asked = [c.get("name") for c in containers(ds) if gpus(c) is not None]
            if asked:
                self.fail("kit-one-gpu-per-pod", w, f"containers {asked} request nvidia.com/gpu: a DaemonSet on every GPU node must not hold GPUs")
        claims = {o["metadata"]["name"] for _, o in by_kind.get("PersistentVolumeClaim", [])}
        for w, obj in jobs + by_kind.get("DaemonSet", []):
            spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
            for v in spec.get("volumes") or []:
                claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
                if claim is not None and claim not in claims:
                    self.fail("kit-one-claim", w, f"volume {v.get('name')} mounts claim {claim!r}, which no manifest defines ({sorted(claims)})")


def load(paths):
    objects = []
    for path in paths:
        with open(path) as f:
            for i, doc in enumerate(yaml.safe_load_all(f)):
                if doc:
                    name = (doc.get("metadata") or {}).get("name")
                    objects.append((f"{path}: {doc.get('kind')} {name}" + (f" (document {i + 1})" if i else ""), doc))
    return objects


def check(objects):
    c = Checker()
    for where, obj in objects:
        c.object(where, obj)
    c.kit(objects)
    return c.errors


def self_test(directory):
    """The real manifests pass; each mutation below breaks one rule, and the checker must name that rule."""
    import glob

    paths = sorted(glob.glob(f"{directory}/*.yaml"))
    base = load(paths)
    errors = check(base)
    if errors:
        for rule, where, message in errors:
            print(f"{where}: [{rule}] {message}")
        return 1

    def find(kind, indexed=None):
        for k, (_, obj) in enumerate(base):
            if obj.get("kind") == kind and (indexed is None or ((obj.get("spec") or {}).get("completionMode") == "Indexed") == indexed):
                return k
        raise SystemExit(f"self-test: no {kind} in {directory}")

    run, merge, ds = find("Job", True), find("Job", False), find("DaemonSet")

    def pod(o):
        return o["spec"]["template"]["spec"]

    mutations = {
        "job-restart-policy": (merge, lambda o: pod(o).update(restartPolicy="Always")),
        "indexed-completions": (run, lambda o: o["spec"].pop("completions")),
        "per-index-needs-indexed": (merge, lambda o: o["spec"].update(backoffLimitPerIndex=1)),
        "max-failed-indexes": (run, lambda o: o["spec"].update(maxFailedIndexes=o["spec"]["completions"] + 1)),
        "indexed-limits": (run, lambda o: o["spec"].update(parallelism=100001)),
        "pfp-restart-never": (run, lambda o: pod(o).update(restartPolicy="OnFailure")),
        "pfp-fail-index": (run, lambda o: o["spec"].pop("backoffLimitPerIndex")),
        "pfp-rule-shape": (run, lambda o: o["spec"]["podFailurePolicy"]["rules"][1].update(onExitCodes={"operator": "In", "values": [3]})),
        "pfp-container-name": (run, lambda o: o["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"].update(containerName="suit")),
        "pfp-exit-codes": (run, lambda o: o["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"].update(values=[2, 1])),
        "job-selector": (merge, lambda o: o["spec"].update(selector={"matchLabels": {"a": "b"}})),
        "indexed-name-length": (run, lambda o: o["metadata"].update(name="x" * 64)),
        "selector-matches": (ds, lambda o: o["spec"]["selector"]["matchLabels"].update({"app.kubernetes.io/name": "other"})),
        "daemonset-restart": (ds, lambda o: pod(o).update(restartPolicy="Never")),
        "container-names": (ds, lambda o: pod(o)["containers"][0].update(name=pod(o)["initContainers"][0]["name"])),
        "volume-names": (ds, lambda o: pod(o)["volumes"].append(copy.deepcopy(pod(o)["volumes"][0]))),
        "volume-mounts": (merge, lambda o: pod(o)["containers"][0]["volumeMounts"][0].update(name="report")),
        "extended-resources": (run, lambda o: pod(o)["containers"][0]["resources"]["limits"].pop("nvidia.com/gpu")),
        "requests-within-limits": (merge, lambda o: pod(o)["containers"][0]["resources"]["requests"].update(memory="2Gi")),
        "host-path-type": (ds, lambda o: pod(o)["volumes"].append({"name": "hp", "hostPath": {"path": "/x", "type": "Dir"}})),
        "field-ref": (run, lambda o: pod(o)["containers"][0]["env"][0]["valueFrom"]["fieldRef"].update(fieldPath="spec.node")),
        "labels": (run, lambda o: o["metadata"]["labels"].update({"app.kubernetes.io/name": "-bad-"})),
        "non-root": (ds, lambda o: pod(o)["securityContext"].update(runAsUser=0)),
        "no-privilege-escalation": (run, lambda o: pod(o)["containers"][0]["securityContext"].update(allowPrivilegeEscalation=True)),
        "drop-all-capabilities": (merge, lambda o: pod(o)["containers"][0]["securityContext"]["capabilities"].update(add=["SYS_ADMIN"])),
        "read-only-root": (ds, lambda o: pod(o)["initContainers"][0]["securityContext"].pop("readOnlyRootFilesystem")),
        "kit-merge-matches-run": (run, lambda o: o["spec"].update(completions=16, parallelism=16, maxFailedIndexes=16)),
        "kit-one-gpu-per-pod": (ds, lambda o: pod(o)["initContainers"][0]["resources"]["limits"].update({"nvidia.com/gpu": 1})),
        "kit-report-per-index": (run, lambda o: o["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"].update(values=[1])),
        "kit-one-claim": (merge, lambda o: pod(o)["volumes"][0]["persistentVolumeClaim"].update(claimName="reports")),
    }
    failed = 0
    for rule, (k, mutate) in mutations.items():
        objects = copy.deepcopy(base)
        mutate(objects[k][1])
        found = {r for r, _, _ in check(objects)}
        if rule not in found:
            print(f"self-test: a mutation breaking [{rule}] was not caught (found {sorted(found) or 'nothing'})")
            failed += 1
    documented = set(re.findall(r"\[([a-z0-9-]+)\]", __doc__))
    if documented != set(mutations):
        print(f"self-test: rules documented but not tested: {sorted(documented - set(mutations))}; "
              f"tested but not documented: {sorted(set(mutations) - documented)}")
        failed += 1
    print(f"k8s-check self-test: {len(paths)} manifests pass; {len(mutations) - failed} of {len(mutations)} rule mutations caught")
    return 1 if failed else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "--self-test":
        return self_test(argv[1])
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    objects = load(argv)
    errors = check(objects)
    for rule, where, message in errors:
        print(f"{where}: [{rule}] {message}")
    print(f"k8s-check: {len(objects)} objects in {len(argv)} files, {len(errors)} broken rule(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
