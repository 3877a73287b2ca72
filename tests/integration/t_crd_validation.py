# SPDX-License-Identifier: Apache-2.0
"""CRD validation as kube-apiserver enforces it from the structural schema
(docs/apiserver.md §4.8): `kubectl apply` of invalid Kueue objects (a
Workload with count -1, 100 podSets, minCount above count, a repeated
podSet name; a ClusterQueue whose flavors do not cover its resources; a
ResourceFlavor toleration without key that is not Exists; a
WorkloadPriorityClass value outside int32)
and of a test CRD with one of each keyword and CEL rules gets kube's
error text, every error of an object listed; a transition rule is
checked on update only. With the real kubectl."""
import json
import os

from cuetest import case, check, data, eq, run_cases

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CRDS = os.path.join(ROOT, "manifests", "crds")


def podset(name, count, **extra):
    ps = {"name": name, "count": count, "template": {"spec": {
        "containers": [{"name": "c", "image": "busybox"}]}}}
    ps.update(extra)
    return ps


def workload(name, podsets):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "user-queue", "podSets": podsets}}


def apply(s, obj, ok=False):
    """kubectl apply of one object; its combined output."""
    p = s.kubectl("apply", "-f", "-", input=json.dumps(obj), check=False)
    out = p.stdout + p.stderr
    eq(p.returncode == 0, ok, "kubectl apply exit status: %s" % out)
    return out


def has(out, *texts):
    for t in texts:
        check(t in out, "missing %r in:\n%s" % (t, out))


@case("CRDV-1")
def kueue_objects(s):
    s.kubectl("apply", "-f", CRDS)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    apply(s, workload("wl-ok", [podset("main", 2, minCount=1)]), ok=True)
    out = apply(s, workload("wl-neg", [podset("main", -1)]))
    has(out, 'The Workload "wl-neg" is invalid',
        "spec.podSets[0].count: Invalid value: -1: spec.podSets[0].count "
        "in body should be greater than or equal to 0")
    # An int32 field refuses what does not fit (the value never wraps).
    out = apply(s, {"apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "WorkloadPriorityClass",
                    "metadata": {"name": "huge"}, "value": 2147483648})
    has(out, 'The WorkloadPriorityClass "huge" is invalid',
        "value: Invalid value: 2147483648")
    apply(s, {"apiVersion": "kueue.x-k8s.io/v1beta2",
              "kind": "WorkloadPriorityClass", "metadata": {"name": "max"},
              "value": 2147483647}, ok=True)
    out = apply(s, workload("wl-many", [podset("p%d" % i, 1)
                                        for i in range(100)]))
    has(out, "spec.podSets: Too many: 100: must have at most 18 items")
    # every error of the object, not only the first
    out = apply(s, workload("wl-two", [podset("main", -1),
                                       podset("x" * 70, 1)]))
    has(out, "spec.podSets[0].count: Invalid value: -1",
        "spec.podSets[1].name: Too long: may not be more than 63 bytes")
    out = apply(s, workload("wl-dup", [podset("main", 1),
                                       podset("main", 1)]))
    has(out, 'spec.podSets[1]: Duplicate value: map[string]interface {}'
        '{"name":"main"}')
    out = apply(s, workload("wl-min", [podset("main", 2, minCount=3)]))
    has(out, 'spec.podSets[0]: Invalid value: "object": minCount should '
        "be positive and less or equal to count")
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
          "metadata": {"name": "cq"},
          "spec": {"resourceGroups": [{
              "coveredResources": ["cpu", "memory"],
              "flavors": [{"name": "default", "resources": [
                  {"name": "cpu", "nominalQuota": "1"}]}]}]}}
    out = apply(s, cq)
    has(out, 'spec.resourceGroups[0]: Invalid value: "object": flavors '
        "must have the same number of resources as the coveredResources")
    rf = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
          "metadata": {"name": "rf"},
          "spec": {"tolerations": [{"operator": "Equal", "value": "v"}]}}
    out = apply(s, rf)
    has(out, 'spec.tolerations: Invalid value: "array": operator must be '
        "Exists when 'key' is empty, which means 'match all values and "
        "all keys'")
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads",
        workload("wl-raw", [podset("main", -1), podset("w", -2)]))
    eq(code, 422, "raw create: %r" % body)
    causes = body["details"]["causes"]
    eq([(c["reason"], c["field"]) for c in causes],
       [("FieldValueInvalid", "spec.podSets[0].count"),
        ("FieldValueInvalid", "spec.podSets[1].count")], "causes")
    check(body["message"].count("should be greater than or equal to 0")
          == 2, "message joins the causes: %s" % body["message"])


@case("CRDV-2")
def keywords_and_rules(s):
    s.kubectl("apply", "-f", data("crd-gadgets.yaml"))
    s.kubectl("wait", "--for=condition=Established",
              "crd/gadgets.example.com", "--timeout=30s")

    def gadget(**spec):
        return {"apiVersion": "example.com/v1", "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": spec}

    out = apply(s, gadget(size=0, step=0.7, name="A_b", color="blue",
                          since="yesterday", tags=["t-a", "t-a"],
                          labels={"a": "1", "b": "2", "c": "3"}))
    has(out,
        "spec.size: Invalid value: 0: spec.size in body should be greater "
        "than or equal to 1",
        "spec.step: Invalid value: 0.7: spec.step in body should be a "
        "multiple of 0.5",
        "spec.name: Invalid value: \"A_b\": spec.name in body should "
        "match '^[a-z][a-z0-9\\-]*$'",
        'spec.color: Unsupported value: "blue": supported values: "red", '
        '"green"',
        'spec.since: Invalid value: "yesterday": spec.since in body must '
        'be of type date-time: "yesterday"',
        "spec.labels: Too many: 3: must have at most 2 items",
        'spec.tags[1]: Duplicate value: "t-a"',
        "some validation rules were not checked because the object was "
        "invalid")
    out = apply(s, gadget(size=11, name="abcdefghi", id="nope", tags=[
        "a", "b", "c", "d"]))
    has(out, "spec.size: Invalid value: 11: spec.size in body should be "
        "less than or equal to 10",
        "spec.name: Too long: may not be more than 8 bytes",
        "spec.tags: Too many: 4: must have at most 3 items")
    out = apply(s, gadget(tags=["x"]))
    has(out, 'spec: Invalid value: "object": tags must start with t-, '
        "got 1", "spec.size: Required value: size or name is required")
    apply(s, gadget(size=2, name="ok", owner="ann",
                    since="2026-01-02T03:04:05Z",
                    id="123e4567-e89b-12d3-a456-426614174000"), ok=True)
    out = apply(s, gadget(size=2, name="ok", owner="bob"))
    has(out, 'spec.owner: Invalid value: "string": owner is immutable')
    apply(s, gadget(size=3, name="ok", owner="ann"), ok=True)


if __name__ == "__main__":
    run_cases()
