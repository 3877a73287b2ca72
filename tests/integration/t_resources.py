# SPDX-License-Identifier: Apache-2.0
"""The Configuration's `resources` section acting as in Kueue:
transformations (Kueue's shared-quota example: cpu also costs cpu_credits,
a 14-credit cap admits four 3-cpu Jobs, not five; the fifth waits with
Kueue's reason and message and shows the transformed
status.resourceRequests), excludeResourcePrefixes (excluded requests are
never counted) and quotaCheckStrategy (BlockUndeclared: an uncovered
resource is NoMatchingFlavor; IgnoreUndeclared: it is skipped)."""
import os

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, wait_for)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(HERE, "data")

TRANSFORM = """resources:
  transformations:
  - input: cpu
    strategy: Retain
    outputs:
      cpu_credits: 1
"""


def crds(s):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")


def workloads(s, ns="default"):
    return s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"
                      % ns)["items"]


def cond(w, t):
    for c in w.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return None


def reserved(w):
    c = cond(w, "QuotaReserved")
    return c is not None and c["status"] == "True"


@case("shared-quota-credits-cap", simulate="jobs")
def shared_quota(s):
    """Kueue's shared-quota task: five 3-cpu Jobs; 9 on-demand cpu, 9 spot,
    14 cpu_credits. Jobs 1-3 take on-demand, job 4 spot (12 credits), job
    5 would fit in spot but needs credits 15 > 14: it waits, reason
    WaitingForQuota, 1 credit more needed."""
    crds(s)
    s.kubectl("apply", "-f", os.path.join(DATA, "shared-quota-setup.yaml"))
    ctl = Controller(s, config=CONTROLLER_CONFIG + TRANSFORM)
    for _ in range(5):
        s.kubectl("create", "-f", os.path.join(DATA, "shared-quota-job.yaml"))

    def settled():
        ws = workloads(s)
        if len(ws) != 5:
            return None
        pending = [w for w in ws if not reserved(w)]
        c = cond(pending[0], "QuotaReserved") if len(pending) == 1 else None
        return (ws, pending[0]) if c is not None else None
    ws, left = wait_for(settled, 45, what="four admitted, one pending")
    admitted = [w for w in ws if reserved(w)]
    eq(len(admitted), 4, "admitted Workloads")
    flavors = sorted(
        w["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"]
        for w in admitted)
    eq(flavors, ["on-demand"] * 3 + ["spot"], "cpu flavors")
    for w in admitted:
        psa = w["status"]["admission"]["podSetAssignments"][0]
        eq(psa["flavors"].get("cpu_credits"), "credits", "credit flavor")
        eq(psa["resourceUsage"], {"cpu": "3", "cpu_credits": "3"},
           "resourceUsage")
    c = cond(left, "QuotaReserved")
    eq(c["status"], "False")
    eq(c["reason"], "WaitingForQuota")
    eq(c["message"], "couldn't assign flavors to pod set main: "
       "insufficient unused quota for cpu_credits in flavor credits, "
       "1 more needed")
    eq(left["status"].get("resourceRequests"),
       [{"name": "main", "resources": {"cpu": "3", "cpu_credits": "3"}}],
       "status.resourceRequests")
    cq = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/"
                    "team-cluster-queue")
    usage = {(f["name"], r["name"]): r["total"]
             for f in cq["status"]["flavorsReservation"]
             for r in f["resources"]}
    eq(usage.get(("credits", "cpu_credits")), "12", "credits reserved")
    ctl.stop()


def undeclared_setup(s):
    crds(s)
    s.kubectl("apply", "-f", "-", input=flavor_and_queue(4) + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
""")


def job(name, extra):
    req = {"cpu": "1"}
    req.update(extra)
    return """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {cueue.dev/sim-runtime-ms: "600000"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources:
          requests: {%s}
          limits: {%s}
""" % (name, ", ".join('"%s": "%s"' % kv for kv in req.items()),
       ", ".join('"%s": "%s"' % kv for kv in extra.items()))


def by_job(s, name):
    for w in workloads(s):
        for o in w["metadata"].get("ownerReferences", []):
            if o["name"] == name:
                return w
    return None


def state(s, name):
    w = by_job(s, name)
    c = cond(w, "QuotaReserved") if w else None
    return (w, c) if c is not None else None


@case("exclude-prefixes-and-block-undeclared", simulate="jobs")
def exclude_and_block(s):
    """excludeResourcePrefixes [example.com/]: a Job asking for
    example.com/nic is admitted and charged cpu only; one asking for an
    uncovered other.io/fpga waits with NoMatchingFlavor (BlockUndeclared,
    Kueue's default)."""
    undeclared_setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + """resources:
  excludeResourcePrefixes: ["example.com/"]
""")
    s.kubectl("apply", "-f", "-", input=job("nic", {"example.com/nic": "1"}))
    s.kubectl("apply", "-f", "-", input=job("fpga", {"other.io/fpga": "1"}))
    w, c = wait_for(lambda: state(s, "nic"), 30, what="nic decided")
    eq(c["status"], "True", "nic admitted: %r" % c)
    psa = w["status"]["admission"]["podSetAssignments"][0]
    eq(psa["resourceUsage"], {"cpu": "1"}, "excluded resource not charged")
    w, c = wait_for(lambda: (lambda r: r if r and r[1]["status"] == "False"
                             else None)(state(s, "fpga")), 30,
                    what="fpga pending")
    eq(c["reason"], "NoMatchingFlavor")
    check("resource other.io/fpga unavailable in ClusterQueue"
          in c["message"], c["message"])
    ctl.stop()


@case("ignore-undeclared", simulate="jobs")
def ignore_undeclared(s):
    """quotaCheckStrategy IgnoreUndeclared: the uncovered other.io/fpga
    is skipped: admitted, charged cpu only, and the ClusterQueue's usage
    stays within its quota."""
    undeclared_setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + """resources:
  quotaCheckStrategy: IgnoreUndeclared
""")
    s.kubectl("apply", "-f", "-", input=job("fpga", {"other.io/fpga": "1"}))
    w, c = wait_for(lambda: state(s, "fpga"), 30, what="fpga decided")
    eq(c["status"], "True", "fpga admitted: %r" % c)
    psa = w["status"]["admission"]["podSetAssignments"][0]
    eq(psa["resourceUsage"], {"cpu": "1"}, "undeclared resource skipped")
    eq(psa["flavors"], {"cpu": "default-flavor"}, "flavors")
    ctl.stop()


TAS_SETUP = """apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: hosts}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec:
  nodeLabels: {pool: tas}
  topologyName: hosts
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu_credits]
    flavors:
    - name: tas
      resources:
      - {name: cpu_credits, nominalQuota: 100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""


def tas_job(name, pods, memory):
    return """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  suspend: true
  parallelism: %d
  completions: %d
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources:
          requests: {cpu: "1", memory: "%s"}
""" % (name, pods, pods, memory)


@case("topology-places-by-pod-requests", simulate="jobs")
def topology_pod_requests(s):
    """Kueue's topology-aware placement reads the pods' own requests,
    not what quota counts after the Configuration's resources: with cpu
    replaced by cpu_credits and memory excluded, a 2-pod Job of 1 cpu
    fits a 2-cpu host and is admitted (no node offers cpu_credits), and
    a pod of 4Gi memory fits no 1Gi host and stays pending although
    quota does not count memory."""
    crds(s)
    s.kubectl("apply", "-f", "-", input=TAS_SETUP)
    for h in ("h1", "h2"):
        alloc = {"cpu": "2", "memory": "1Gi", "pods": "110"}
        code, _, body = s.raw("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": h, "labels": {
                "kubernetes.io/hostname": h, "pool": "tas"}},
            "spec": {}, "status": {"allocatable": alloc, "capacity": alloc}})
        eq(code, 201, "node %s: %r" % (h, body))
    ctl = Controller(s, config=CONTROLLER_CONFIG + """resources:
  excludeResourcePrefixes: ["memory"]
  transformations:
  - input: cpu
    strategy: Replace
    outputs:
      cpu_credits: 1
""")
    s.kubectl("apply", "-f", "-", input=tas_job("fits", 2, "256Mi"))
    w, c = wait_for(lambda: state(s, "fits"), 30, what="fits decided")
    eq(c["status"], "True", "fits admitted: %r" % c)
    psa = w["status"]["admission"]["podSetAssignments"][0]
    eq(psa["resourceUsage"], {"cpu_credits": "2"}, "quota charged")
    doms = psa["topologyAssignment"]
    check(doms, "topologyAssignment written: %r" % psa)
    s.kubectl("apply", "-f", "-", input=tas_job("toobig", 1, "4Gi"))
    w, c = wait_for(lambda: state(s, "toobig"), 30, what="toobig decided")
    eq(c["status"], "False", "toobig pending: %r" % c)
    check("memory" in c["message"] or "topology" in c["message"].lower(),
          c["message"])
    ctl.stop()


if __name__ == "__main__":
    from cuetest import run_cases
    run_cases()
