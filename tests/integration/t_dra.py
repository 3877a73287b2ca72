# SPDX-License-Identifier: Apache-2.0
"""Dynamic resource allocation counted against quota, as Kueue's
KueueDRAIntegration: the local cluster serves resource.k8s.io/v1
DeviceClasses and ResourceClaimTemplates; Jobs whose pods claim a GPU
through a template are charged example.com/gpu through
resources.deviceClassMappings, so 8 GPUs of quota admit 8 of 10 such Jobs
(never more devices than quota) and the others wait for quota; a class
with no mapping, a direct ResourceClaim and a missing template are
refused with Kueue's messages (QuotaReserved=False, Misconfigured), the
last one admitted once its template appears; an extended resource a
DeviceClass backs is charged to the class's mapping; a class mapped with a
counter source (KueueDRAIntegrationPartitionableDevices) charges the
counter its ResourceSlice partitions consume, matched by CEL selectors;
every request's CEL selectors are checked against the ResourceSlice
devices, as Kueue (too few matching devices: refused)."""
import os

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     wait_for)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(HERE, "data")

MAPPED = """resources:
  deviceClassMappings:
  - name: example.com/gpu
    deviceClassNames: [gpu.example.com]
"""


def setup(s):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", os.path.join(DATA, "dra-queues.yaml"))


def sample():
    with open(os.path.join(DATA, "dra-rct-job.yaml")) as f:
        template, job = f.read().split("\n---\n")
    return template, job


def workloads(s):
    return s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/"
                      "workloads")["items"]


def cond(w, t):
    for c in w.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return None


def decided(w):
    return cond(w, "QuotaReserved") is not None


@case("claim-templates-charged-to-mapped-quota", simulate="jobs")
def charged(s):
    """10 Jobs of one GPU each through the template, 8 GPUs of quota: 8
    admitted with example.com/gpu 1 in resourceUsage, 2 WaitingForQuota
    with Kueue's message; the ClusterQueue reserves 8."""
    setup(s)
    template, job = sample()
    s.kubectl("apply", "-f", "-", input=template)
    ctl = Controller(s, config=CONTROLLER_CONFIG + MAPPED)
    for _ in range(10):
        s.kubectl("create", "-f", "-", input=job)

    def settled():
        ws = workloads(s)
        return ws if len(ws) == 10 and all(decided(w) for w in ws) else None
    ws = wait_for(settled, 45, what="ten Workloads decided")
    admitted = [w for w in ws if cond(w, "QuotaReserved")["status"] ==
                "True"]
    eq(len(admitted), 8, "admitted")
    for w in admitted:
        psa = w["status"]["admission"]["podSetAssignments"][0]
        eq(psa["resourceUsage"], {"cpu": "1", "memory": "200Mi",
                                  "example.com/gpu": "1"}, "resourceUsage")
        eq(psa["flavors"]["example.com/gpu"], "default-flavor")
    for w in ws:
        c = cond(w, "QuotaReserved")
        if c["status"] == "True":
            continue
        eq(c["reason"], "WaitingForQuota")
        eq(c["message"], "couldn't assign flavors to pod set main: "
           "insufficient unused quota for example.com/gpu in flavor "
           "default-flavor, 1 more needed")
    cq = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/"
                    "cluster-queue")
    used = {r["name"]: r["total"]
            for f in cq["status"]["flavorsReservation"]
            for r in f["resources"]}
    eq(used.get("example.com/gpu"), "8", "GPUs reserved")
    ctl.stop()


def job_with(name, claims, requests=None):
    req = {"cpu": "1"}
    req.update(requests or {})
    lim = dict(requests or {})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name":
                                    "user-queue"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         "600000"}},
            "spec": {"suspend": True, "template": {"spec": {
                "restartPolicy": "Never",
                "resourceClaims": claims,
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": req,
                                              "limits": lim}}]}}}}


def by_job(s, name):
    for w in workloads(s):
        for o in w["metadata"].get("ownerReferences", []):
            if o["name"] == name:
                return w
    return None


def condition_of(s, name, status=None):
    w = by_job(s, name)
    c = cond(w, "QuotaReserved") if w else None
    if c is None or (status is not None and c["status"] != status):
        return None
    return c


def post_job(s, obj):
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/default/jobs",
                          obj)
    eq(code, 201, "create job: %r" % body)


@case("refusals-and-retries", simulate="jobs")
def refusals(s):
    """A class no mapping names, a direct ResourceClaim and a missing
    template are Misconfigured with Kueue's messages; the Workload of the
    missing template is admitted once the template is created."""
    setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + MAPPED)
    s.kubectl("apply", "-f", "-", input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: default, name: other-class}
spec:
  spec:
    devices:
      requests:
      - name: fpga
        exactly: {deviceClassName: fpga.example.com, count: 2}
""")
    post_job(s, job_with("unmapped", [
        {"name": "x", "resourceClaimTemplateName": "other-class"}]))
    post_job(s, job_with("direct", [
        {"name": "x", "resourceClaimName": "shared-gpu"}]))
    post_job(s, job_with("later", [
        {"name": "x", "resourceClaimTemplateName": "single-gpu"}]))
    c = wait_for(lambda: condition_of(s, "unmapped"), 30, what="unmapped")
    eq((c["status"], c["reason"]), ("False", "Misconfigured"))
    eq(c["message"], 'spec.podSets[0].template.spec.resourceClaims[0].'
       'resourceClaimTemplateName: Not found: "DeviceClass fpga.example.com '
       'is not mapped in DRA configuration for podset main"')
    c = wait_for(lambda: condition_of(s, "direct"), 30, what="direct")
    eq((c["status"], c["reason"], c["message"]),
       ("False", "Misconfigured", "KueueDRAIntegration feature does not "
        "support use of resource claims"))
    c = wait_for(lambda: condition_of(s, "later"), 30, what="later")
    eq((c["status"], c["reason"]), ("False", "Misconfigured"))
    check("ResourceClaimTemplate single-gpu" in c["message"], c["message"])
    template, _ = sample()
    s.kubectl("apply", "-f", "-", input=template)
    wait_for(lambda: condition_of(s, "later", "True"), 30,
             what="admitted once its template exists")
    eq(condition_of(s, "unmapped")["status"], "False", "still refused")
    ctl.stop()


@case("extended-resource-charged-to-mapping", simulate="jobs")
def extended(s):
    """A DeviceClass declaring extendedResourceName example.com/accel,
    mapped to example.com/gpu: a Job asking for 3 example.com/accel is
    charged 3 example.com/gpu (the raw name is not charged)."""
    setup(s)
    s.kubectl("apply", "-f", "-", input="""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: accel.example.com}
spec: {extendedResourceName: example.com/accel}
""")
    ctl = Controller(s, config=CONTROLLER_CONFIG + """resources:
  deviceClassMappings:
  - name: example.com/gpu
    deviceClassNames: [gpu.example.com, accel.example.com]
""")
    post_job(s, job_with("accel", [], {"example.com/accel": "3"}))
    c = wait_for(lambda: condition_of(s, "accel"), 30, what="accel")
    eq(c["status"], "True", "admitted: %r" % c)
    psa = by_job(s, "accel")["status"]["admission"]["podSetAssignments"][0]
    eq(psa["resourceUsage"], {"cpu": "1", "example.com/gpu": "3"},
       "resourceUsage")
    ctl.stop()


MIG_CONFIG = """resources:
  deviceClassMappings:
  - name: example.com/gpu-memory
    deviceClassNames: [mig.example.com]
    sources:
    - counter:
        name: memory
        driver: gpu.example.com
        deviceSelector:
          cel:
            expression: device.attributes['gpu.example.com'].productName == 'GPU-80'
"""

MIG_OBJECTS = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: mig-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "example.com/gpu-memory"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 40}
      - {name: example.com/gpu-memory, nominalQuota: 40Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: mig-user-queue}
spec: {clusterQueue: mig-queue}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig.example.com}
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.example.com'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: default, name: mig-1g}
spec:
  spec:
    devices:
      requests:
      - name: part
        exactly:
          deviceClassName: mig.example.com
          selectors:
          - cel:
              expression: device.attributes['gpu.example.com'].profile == '1g.10gb'
"""


def mig_slices():
    """One GPU of 80Gi as a pool of two slices: the shared counter set,
    and the devices that consume it (the whole GPU and seven 1g.10gb
    partitions); a second pool of one slice out of two (incomplete) whose
    partition consumes 99Gi and must not be looked at."""
    def dev(name, profile, mem):
        return {"name": name,
                "attributes": {"productName": {"string": "GPU-80"},
                               "profile": {"string": profile}},
                "capacity": {"memory": {"value": mem}},
                "consumesCounters": [{"counterSet": "gpu-0-counters",
                                      "counters": {"memory":
                                                   {"value": mem}}}]}

    def rs(name, pool, count, node, **spec):
        spec.update({"driver": "gpu.example.com", "nodeName": node,
                     "pool": {"name": pool, "generation": 1,
                              "resourceSliceCount": count}})
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": name}, "spec": spec}
    parts = [dev("gpu-0", "full", "80Gi")] + [
        dev("gpu-0-1g-%d" % i, "1g.10gb", "10Gi") for i in range(7)]
    return [rs("node-a-counters", "node-a", 2, "node-a", sharedCounters=[
                {"name": "gpu-0-counters",
                 "counters": {"memory": {"value": "80Gi"}}}]),
            rs("node-a-devices", "node-a", 2, "node-a", devices=parts),
            rs("node-b-devices", "node-b", 2, "node-b",
               devices=[dev("b-1g", "1g.10gb", "99Gi")])]


def post_slices(s):
    for obj in mig_slices():
        code, _, body = s.raw("POST", "/apis/resource.k8s.io/v1/"
                              "resourceslices", obj)
        eq(code, 201, "create ResourceSlice: %r" % body)


@case("counter-sources-charge-partitions", simulate="jobs")
def counters(s):
    """Five Jobs of one 1g.10gb partition each, 40Gi of
    example.com/gpu-memory quota: each is charged the 10Gi of GPU memory
    its partition consumes from the counter set, four are admitted and the
    fifth waits for quota; the ClusterQueue reserves 40Gi (printed in
    binary suffixes, as Kueue prints a counter mapping's resource). Before the
    ResourceSlices exist the Workloads are Misconfigured (too few matching
    devices) and are counted once they appear."""
    setup(s)
    s.kubectl("apply", "-f", "-", input=MIG_OBJECTS)
    ctl = Controller(s, config=CONTROLLER_CONFIG + MIG_CONFIG)
    for i in range(5):
        job = job_with("mig-%d" % i, [{"name": "part",
                                       "resourceClaimTemplateName":
                                       "mig-1g"}])
        job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = \
            "mig-user-queue"
        post_job(s, job)
    c = wait_for(lambda: condition_of(s, "mig-0"), 30, what="mig-0")
    eq((c["status"], c["reason"]), ("False", "Misconfigured"))
    check("insufficient matching devices for CEL selector in DeviceClass "
          "mig.example.com: 0 device(s) match in the cluster but 1 "
          "requested" in c["message"], c["message"])
    post_slices(s)

    def settled():
        cs = [condition_of(s, "mig-%d" % i) for i in range(5)]
        if any(c is None or c["reason"] == "Misconfigured" for c in cs):
            return None
        return cs
    cs = wait_for(settled, 45, what="five Workloads counted")
    admitted = [i for i in range(5) if cs[i]["status"] == "True"]
    eq(len(admitted), 4, "admitted: %r" % cs)
    for i in admitted:
        psa = by_job(s, "mig-%d" % i)["status"]["admission"][
            "podSetAssignments"][0]
        use = psa["resourceUsage"]
        eq(sorted(use), ["cpu", "example.com/gpu-memory"], "resources")
        eq(use["example.com/gpu-memory"], "10Gi", "charged")
    pending = [cs[i] for i in range(5) if i not in admitted]
    eq(pending[0]["reason"], "WaitingForQuota")
    eq(pending[0]["message"], "couldn't assign flavors to pod set main: "
       "insufficient unused quota for example.com/gpu-memory in flavor "
       "default-flavor, 10Gi more needed")
    cq = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/mig-queue")
    used = {r["name"]: r["total"]
            for f in cq["status"]["flavorsReservation"]
            for r in f["resources"]}
    eq(used.get("example.com/gpu-memory"), "40Gi", "reserved")
    ctl.stop()



@case("cel-selectors-checked-against-devices", simulate="jobs")
def cel_selectors(s):
    """A class mapped by device count (no sources): the request's CEL
    selector is checked against the cluster's ResourceSlice devices, as
    Kueue. Two whole GPUs asked where one exists: Misconfigured with
    Kueue's message, never admitted; one asked: admitted and charged."""
    setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + MAPPED)
    post_slices(s)
    for name, count in (("two-full", 2), ("one-full", 1)):
        s.kubectl("apply", "-f", "-", input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: default, name: %s}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          count: %d
          selectors:
          - cel:
              expression: device.attributes['gpu.example.com'].profile == 'full'
""" % (name, count))
        post_job(s, job_with(name, [{"name": "gpu",
                                     "resourceClaimTemplateName": name}]))
    c = wait_for(lambda: condition_of(s, "one-full", "True"), 30,
                 what="one-full admitted")
    psa = by_job(s, "one-full")["status"]["admission"]["podSetAssignments"][0]
    eq(psa["resourceUsage"], {"cpu": "1", "example.com/gpu": "1"},
       "resourceUsage")
    c = wait_for(lambda: condition_of(s, "two-full"), 30, what="two-full")
    eq((c["status"], c["reason"]), ("False", "Misconfigured"))
    eq(c["message"], "spec.podSets[0].template.spec.resourceClaims[0]."
       "devices.requests[0].exactly.selectors: Internal error: "
       "ResourceClaimTemplate two-full: insufficient matching devices for "
       "CEL selector in DeviceClass gpu.example.com: 1 device(s) match in "
       "the cluster but 2 requested")
    check("admission" not in by_job(s, "two-full").get("status", {}),
          "two-full not admitted")
    ctl.stop()


if __name__ == "__main__":
    from cuetest import run_cases
    run_cases()
