# SPDX-License-Identifier: Apache-2.0
"""Topology-aware scheduling end to end on cueue-apiserver --simulate
jobs,scheduler with 16 Nodes (2 blocks x 2 racks x 4 hosts, 2 cpu each)
labelled as Kueue's TAS examples expect, and queues and Jobs of the
examples' shape (tests/integration/data/tas-*.yaml):
  - the podset-*-topology annotations become topologyRequests;
  - a required-rack Job's pods all land in one rack, a preferred-block
    one packs into one block, an unconstrained one anywhere; the
    Workloads carry their topologyAssignment; pods are created with the
    kueue.x-k8s.io/topology gate and ungated with their host's
    nodeSelector;
  - a Job too big for any rack's free capacity stays pending with
    Kueue's message, and is admitted once capacity is freed;
  - a pod nominated to a node (status.nominatedNodeName, not bound)
    keeps that node's capacity out of placement until un-nominated
    (Kueue, counting bound pods only, would place on it);
  - a restarted controller keeps the assignments (adopted from the
    status, not placed again) and places around them;
  - failed nodes (deleted, NotReady, tainted) of admitted Workloads are
    replaced within the assigned domain or evict the Workload, as
    Kueue's node failure controller with its default gates; a
    replacement is recorded in the ledger first and survives a restart;
    a Workload owned by a single Pod keeps its assignment
    (SkipReassignmentForPodOwnedWorkloads);
  - a tainted rack is used only by Jobs that tolerate its taint (in
    their pod template or through the flavor's tolerations), and a
    nodeSelector keeps a Job's pods on the hosts that carry the label;
  - TAS preemption: a high-priority required-rack Job that fits the
    ClusterQueue's quota but no rack preempts the low-priority Jobs
    filling one rack (Kueue's Preempted condition and events) and lands
    there; low-priority Jobs in the other racks are untouched.
The ResourceFlavor's topologyName gets no UnsupportedField event."""
import json
import os
import re
import sqlite3

import yaml

import urllib.request

from cuetest import CONTROLLER_CONFIG, Controller, Failure, case, check, \
    eq, free_port, run_cases, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
DATA = os.path.join(HERE, "data")
MANIFESTS = os.path.join(ROOT, "manifests")
NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
SIM = "jobs,scheduler"
BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"

CONFIG = CONTROLLER_CONFIG + (
    "integrations:\n"
    "  frameworks: [\"batch/job\"]\n")


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))
    return body


def fixture(s):
    """Topology "default", its flavor, queues with 32 cpu, and 16 Nodes
    (b{1,2}-r{1,2}-n{1..4}, 1 cpu each) labelled by block/rack/host."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/topologies", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK},
                            {"nodeLabel": HOST}]}})
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "tas-flavor"},
        "spec": {"nodeLabels": {"cloud.provider.com/node-group": "tas"},
                 "topologyName": "default"}})
    post(s, KQ + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "tas-cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu"],
            "flavors": [{"name": "tas-flavor", "resources": [
                {"name": "cpu", "nominalQuota": "32"}]}]}]}})
    s.namespace(NS)
    post(s, KQ + "/namespaces/%s/localqueues" % NS, {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "tas-lq", "namespace": NS},
        "spec": {"clusterQueue": "tas-cq"}})
    for b in (1, 2):
        for r in (1, 2):
            for h in range(1, 5):
                name = "b%d-r%d-n%d" % (b, r, h)
                alloc = {"cpu": "1", "memory": "8Gi", "pods": "110"}
                post(s, "/api/v1/nodes", {
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {
                        BLOCK: "b%d" % b, RACK: "b%d-r%d" % (b, r),
                        HOST: name,
                        "cloud.provider.com/node-group": "tas"}},
                    "spec": {},
                    "status": {"allocatable": alloc, "capacity": alloc}})


def create_job(s, name, pods, annotations):
    tpl = {"metadata": {"annotations": dict(annotations)},
           "spec": {"containers": [{
               "name": "c", "image": "busybox",
               "resources": {"requests": {"cpu": "1"}}}],
               "restartPolicy": "Never"}}
    post(s, JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": "tas-lq"}},
        "spec": {"parallelism": pods, "completions": pods,
                 "suspend": True, "template": tpl}})


def wl_of(s, owner):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == owner:
            return w
    return None


@case("topology-requests-reach-workloads", simulate=SIM)
def requests(s):
    """Each annotation becomes the matching topologyRequest field."""
    fixture(s)
    topo = s.get_json(KQ + "/topologies/default")
    eq([lv["nodeLabel"] for lv in topo["spec"]["levels"]],
       [BLOCK, RACK, HOST], "Topology levels stored")
    Controller(s, config=CONFIG)
    create_job(s, "rack", 4,
               {"kueue.x-k8s.io/podset-required-topology": RACK})
    create_job(s, "pref", 2,
               {"kueue.x-k8s.io/podset-preferred-topology": BLOCK})
    create_job(s, "anywhere", 2,
               {"kueue.x-k8s.io/podset-unconstrained-topology": "true"})
    create_job(s, "plain", 1, {})
    # Kueue's Job pod sets carry their pods' index label, with or
    # without a topology annotation.
    idx = {"podIndexLabel": "batch.kubernetes.io/job-completion-index"}
    want = {"rack": dict(idx, required=RACK),
            "pref": dict(idx, preferred=BLOCK),
            "anywhere": dict(idx, unconstrained=True), "plain": idx}
    for owner, tr in want.items():
        w = wait_for(lambda: wl_of(s, owner), 15,
                     what="%s's Workload" % owner)
        eq(w["spec"]["podSets"][0].get("topologyRequest"), tr,
           "%s topologyRequest" % owner)


# ---- placement, actuation and capacity -------------------------------

DNS = "default"
DJOBS = "/apis/batch/v1/namespaces/%s/jobs" % DNS
DWLS = KQ + "/namespaces/%s/workloads" % DNS
DPODS = "/api/v1/namespaces/%s/pods" % DNS
GATE = "kueue.x-k8s.io/topology"


def cluster(s):
    """CRDs, the example-shaped queues and 16 Nodes of 2 cpu."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", os.path.join(DATA, "tas-queues.yaml"))
    for b in (1, 2):
        for r in (1, 2):
            for h in range(1, 5):
                name = "b%d-r%d-n%d" % (b, r, h)
                alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
                post(s, "/api/v1/nodes", {
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {
                        BLOCK: "b%d" % b, RACK: "b%d-r%d" % (b, r),
                        HOST: name,
                        "cloud.provider.com/node-group": "tas-group"}},
                    "spec": {},
                    "status": {"allocatable": alloc, "capacity": alloc}})


def example_job(s, mode, name, pods, runtime_ms=600000, priority=None):
    with open(os.path.join(DATA, "tas-job-%s.yaml" % mode)) as f:
        job = yaml.safe_load(f)
    job["metadata"]["name"] = name
    if priority:
        job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = \
            priority
    job["metadata"].setdefault("annotations", {})[
        "cueue.dev/sim-runtime-ms"] = str(runtime_ms)
    job["spec"]["parallelism"] = job["spec"]["completions"] = pods
    post(s, DJOBS, job)


def pods_of(s, job):
    return s.get_json(DPODS + "?labelSelector=job-name%%3D%s" %
                      job)["items"]


def placed(s, job, n, timeout=30):
    """Wait until n pods of job are bound; their nodes."""
    def f():
        ps = [p for p in pods_of(s, job) if p["spec"].get("nodeName")]
        return ps if len(ps) >= n else None
    try:
        ps = wait_for(f, timeout, what="%d pods of %s bound" % (n, job))
    except Failure:
        raise Failure("%s: %r" % (job, [
            (p["metadata"]["name"], p["spec"].get("nodeName"),
             p["spec"].get("schedulingGates"),
             p["spec"].get("nodeSelector"),
             [c.get("message") for c in
              p.get("status", {}).get("conditions", [])])
            for p in pods_of(s, job)]))
    for p in ps:
        check(not any(g.get("name") == GATE for g in
                      p["spec"].get("schedulingGates") or []),
              "%s ungated" % p["metadata"]["name"])
        eq(p["spec"].get("nodeSelector", {}).get(HOST),
           p["spec"]["nodeName"], "%s pinned to its host" %
           p["metadata"]["name"])
    return [p["spec"]["nodeName"] for p in ps]


def rack_of(node):
    return node.rsplit("-", 1)[0]


def assignment(s, job):
    """The first podSet's topologyAssignment, or None while the Workload
    is not admitted (read once: it may be evicted between two reads)."""
    w = wl_of_ns(s, job) or {}
    adm = w.get("status", {}).get("admission")
    if not adm:
        return None
    return adm["podSetAssignments"][0].get("topologyAssignment")


def wl_of_ns(s, owner):
    for w in s.get_json(DWLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == owner:
            return w
    return None


def pending_message(s, job):
    w = wl_of_ns(s, job)
    for c in (w or {}).get("status", {}).get("conditions", []):
        if c["type"] == "QuotaReserved" and c["status"] == "False":
            return c.get("message", "")
    return None


def admitted(s, job):
    w = wl_of_ns(s, job)
    return w is not None and w.get("status", {}).get("admission")


@case("required-preferred-unconstrained-and-freed-capacity", simulate=SIM)
def placement(s):
    """Required rack in one rack, preferred block in one block, an
    unconstrained Job anywhere; then a Job too big for any rack's free
    capacity waits with Kueue's message until a Job is deleted."""
    cluster(s)
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % port))
    example_job(s, "required", "rack6", 6)
    nodes = placed(s, "rack6", 6)
    eq(len(set(rack_of(n) for n in nodes)), 1, "rack6 in one rack: %r" %
       nodes)
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port) as r:
        text = r.read().decode()
    want = ('kueue_pod_scheduling_gate_removal_seconds_count{name='
            '"kueue.x-k8s.io/topology",cluster_queue="tas-cluster-queue",'
            'is_group="false"')
    check(any(l.startswith(want) and l.endswith(" 6")
              for l in text.splitlines()),
          "gate removals observed: %r" % [
              l for l in text.splitlines() if "gate_removal" in l])
    ta = assignment(s, "rack6")
    eq(ta["levels"], [HOST], "levels of the assignment")
    check(ta.get("slices"), "slices in the v1beta2 wire form: %r" % ta)
    example_job(s, "preferred", "pref10", 10)
    nodes = placed(s, "pref10", 10)
    eq(len(set(n.split("-")[0] for n in nodes)), 1,
       "pref10 packed in one block: %r" % nodes)
    example_job(s, "unconstrained", "spread12", 12)
    placed(s, "spread12", 12)
    # 4 cpu are left, 2 in each of two racks at most: 8 pods wait.
    example_job(s, "required", "big8", 8)
    msg = wait_for(lambda: pending_message(s, "big8"), 20,
                   what="big8 pending")
    check('topology "default" allows to fit only' in msg and
          "out of 8 pod(s)" in msg, msg)
    check(not admitted(s, "big8"), "big8 not admitted")
    # A level the Topology does not have: Kueue's per-flavor message.
    with open(os.path.join(DATA, "tas-job-required.yaml")) as f:
        job = yaml.safe_load(f)
    job["metadata"]["name"] = "zone1"
    job["spec"]["parallelism"] = job["spec"]["completions"] = 1
    job["spec"]["template"]["metadata"]["annotations"] = {
        "kueue.x-k8s.io/podset-required-topology":
            "cloud.provider.com/topology-zone"}
    post(s, DJOBS, job)
    msg = wait_for(lambda: pending_message(s, "zone1"), 20,
                   what="zone1 pending")
    check('Flavor "tas-flavor" does not contain the requested level' in msg,
          msg)
    code, _, out = s.raw("DELETE", DJOBS + "/spread12",
                         {"propagationPolicy": "Background"})
    check(code in (200, 202), "delete spread12: %d %r" % (code, out))
    # cueue-apiserver has no garbage collector: its pods go as well.
    for p in pods_of(s, "spread12"):
        s.raw("DELETE", DPODS + "/" + p["metadata"]["name"])
    nodes = placed(s, "big8", 8, timeout=40)
    eq(len(set(rack_of(n) for n in nodes)), 1, "big8 in one rack: %r" %
       nodes)
    evs = s.get_json("/api/v1/namespaces/default/events")["items"]
    eq([e["message"] for e in evs if e.get("reason") == "UnsupportedField"
        and e["involvedObject"].get("kind") == "ResourceFlavor"], [],
       "no UnsupportedField for topologyName")
    ctl.stop()


@case("nominated-pods-keep-their-node", simulate=SIM)
def nominated(s):
    """One pod per rack nominated (not bound) to a host: no rack holds 8
    pods until one nomination is cleared, then the Job lands there."""
    cluster(s)
    for b in (1, 2):
        for r in (1, 2):
            name = "nom-b%d-r%d" % (b, r)
            post(s, DPODS, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": DNS},
                "spec": {"schedulerName": "other-scheduler",
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "1"}}}]}})
            code, _, out = s.raw(
                "PATCH", DPODS + "/%s/status" % name,
                {"status": {"nominatedNodeName": "b%d-r%d-n1" % (b, r)}},
                headers={"Content-Type": "application/merge-patch+json"})
            eq(code, 200, "nominate %s: %r" % (name, out))
    ctl = Controller(s, config=CONFIG)
    example_job(s, "required", "rack8", 8)
    msg = wait_for(lambda: pending_message(s, "rack8"), 20,
                   what="rack8 pending")
    check('topology "default" allows to fit only 7 out of 8 pod(s)' in msg,
          msg)
    # Bound-only accounting (Kueue) would see 8 free cpu in every rack.
    eq(len([p for p in s.get_json(DPODS)["items"]
            if p["spec"].get("nodeName")]), 0, "nominated pods unbound")
    code, _, out = s.raw(
        "PATCH", DPODS + "/nom-b2-r2/status",
        {"status": {"nominatedNodeName": None}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "un-nominate: %r" % (out,))
    nodes = placed(s, "rack8", 8, timeout=40)
    eq(sorted(set(rack_of(n) for n in nodes)), ["b2-r2"],
       "rack8 in the rack whose nomination was cleared")
    ctl.stop()


@case("restart-keeps-assignments", simulate=SIM)
def restart(s):
    """A restarted controller adopts the admitted assignment (charged,
    not placed again): the next Job goes around it."""
    cluster(s)
    ledger = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=ledger)
    example_job(s, "required", "first", 6)
    nodes = placed(s, "first", 6)
    before = assignment(s, "first")
    ctl.stop()
    ctl = Controller(s, config=CONFIG, store=ledger)
    example_job(s, "required", "second", 8)
    nodes2 = placed(s, "second", 8)
    eq(len(set(rack_of(n) for n in nodes2)), 1, "second in one rack")
    check(rack_of(nodes[0]) != rack_of(nodes2[0]),
          "second avoids first's rack: %r %r" % (nodes, nodes2))
    eq(assignment(s, "first"), before, "first's assignment kept")
    ctl.stop()


FIXED_DELAY = ("featureGates:\n"
               "  TASReplaceNodeDueToNotReadyOverFixedTime: true\n")


def unhealthy(s, job):
    w = wl_of_ns(s, job) or {}
    return [n["name"] for n in
            w.get("status", {}).get("unhealthyNodes") or []]


@case("node-failures-replaced-or-evicted", simulate=SIM)
def node_failures(s):
    """Kueue's failed node handling (TASFailedNodeReplacement and
    FailFast, on by default): a deleted Node of an admitted required-rack
    Workload is recorded in status.unhealthyNodes and its pods replaced
    within the rack; with TASReplaceNodeDueToNotReadyOverFixedTime (off
    by default, turned on here), a Node NotReady for the (test-shortened)
    NodeFailureDelay under a Workload filling its rack fails while its
    pods still run, and has no replacement: evicted (NodeFailures),
    requeued, admitted elsewhere."""
    cluster(s)
    os.environ["CUEUE_TAS_NODE_FAILURE_DELAY_MS"] = "300"
    try:
        ctl = Controller(s, config=CONFIG + FIXED_DELAY)
    finally:
        del os.environ["CUEUE_TAS_NODE_FAILURE_DELAY_MS"]
    example_job(s, "required", "rack4", 4)
    nodes = placed(s, "rack4", 4)
    rack = rack_of(nodes[0])
    victim = sorted(nodes)[0]
    code, _, out = s.raw("DELETE", "/api/v1/nodes/" + victim)
    check(code in (200, 202), "delete node: %r" % (out,))

    def replaced():
        a = assignment(s, "rack4") or {}
        return a if victim not in repr(a) and not unhealthy(s, "rack4") \
            else None
    a = wait_for(replaced, 20, what="%s replaced" % victim)
    hosts = re.findall(r"b\d-r\d-n\d", repr(a))
    check(hosts and all(rack_of(h) == rack for h in hosts),
          "replacement within %s: %r" % (rack, a))

    example_job(s, "required", "full8", 8)
    full = placed(s, "full8", 8)
    frack = rack_of(full[0])
    sick = sorted(full)[0]
    code, _, out = s.raw(
        "PATCH", "/api/v1/nodes/%s/status" % sick,
        {"status": {"conditions": [{
            "type": "Ready", "status": "False", "reason": "KubeletDown",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "NotReady: %r" % (out,))

    def evicted():
        w = wl_of_ns(s, "full8") or {}
        ev = w.get("status", {}).get("schedulingStats", {}).get(
            "evictions") or []
        return ev if any(e.get("reason") == "NodeFailures" for e in ev) \
            else None
    wait_for(evicted, 20, what="full8 evicted for NodeFailures")

    def elsewhere():
        a = assignment(s, "full8")
        return a if a and sick not in repr(a) and frack not in repr(a) \
            else None
    wait_for(elsewhere, 30, what="full8 admitted again elsewhere")
    nodes = placed(s, "full8", 8, timeout=30)
    eq(len(set(rack_of(n) for n in nodes)), 1, "full8 in one rack")
    check(rack_of(nodes[0]) != frack, "full8 left %s: %r" % (frack, nodes))
    ctl.stop()


PRIORITIES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
"""


def conditions(s, job):
    w = wl_of_ns(s, job) or {}
    return {c["type"]: c for c in w.get("status", {}).get("conditions", [])}


@case("preemption-frees-a-rack", simulate=SIM)
def preemption(s):
    """Four racks of 8 cpu filled by low-priority required-rack Jobs (one
    of 8 pods in each of three racks, two of 4 in the last) with quota to
    spare: a high-priority Job of 8 pods fits the quota but no rack, so
    it preempts the minimal set of lower-priority Workloads whose release
    frees a rack (Kueue's candidate order: the newest first, then fill
    back): the two in the last rack, and is placed there."""
    cluster(s)
    s.kubectl("apply", "-f", s.file("priorities.yaml", PRIORITIES))
    code, _, out = s.raw(
        "PATCH", KQ + "/clusterqueues/tas-cluster-queue",
        {"spec": {"preemption": {"withinClusterQueue": "LowerPriority"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "preemption policy: %r" % (out,))
    ctl = Controller(s, config=CONFIG)
    racks = {}
    for name, pods in (("low1", 8), ("low2", 8), ("low3", 8), ("low4", 4),
                       ("low5", 4)):
        example_job(s, "required", name, pods, priority="low")
        nodes = placed(s, name, pods)
        eq(len(set(rack_of(n) for n in nodes)), 1, "%s in one rack" % name)
        racks[name] = rack_of(nodes[0])
    eq(racks["low4"], racks["low5"], "low4 and low5 share a rack")
    eq(len(set(racks.values())), 4, "every rack full: %r" % racks)
    before = {n: assignment(s, n) for n in ("low1", "low2", "low3")}
    example_job(s, "required", "high", 8, priority="high")
    high = wait_for(lambda: wl_of_ns(s, "high"), 20, what="high Workload")

    def preempted(job):
        c = conditions(s, job)
        return c if c.get("Evicted", {}).get("status") == "True" else None
    for job in ("low4", "low5"):
        c = wait_for(lambda: preempted(job), 20, what="%s preempted" % job)
        eq(c["Evicted"]["reason"], "Preempted", "%s evicted by "
           "preemption" % job)
        eq((c["Preempted"]["status"], c["Preempted"]["reason"]),
           ("True", "InClusterQueue"), "%s Preempted condition" % job)
        check(c["Preempted"]["message"].startswith(
            "Preempted to accommodate a workload (UID: %s" %
            high["metadata"]["uid"]) and "due to prioritization in the "
            "ClusterQueue" in c["Preempted"]["message"],
            c["Preempted"]["message"])
        lname = wl_of_ns(s, job)["metadata"]["name"]

        def events():
            evs = [e for e in s.get_json(
                "/api/v1/namespaces/%s/events" % DNS)["items"]
                if e["involvedObject"]["name"] == lname and
                e["reason"] == "Preempted"]
            return evs or None
        evs = wait_for(events, 20, what="Preempted event on %s" % job)
        eq(len(evs), 1, "one Preempted event on %s" % job)
        check(evs[0]["message"].startswith(c["Preempted"]["message"]),
              evs[0]["message"])
    nodes = placed(s, "high", 8, timeout=40)
    eq(sorted(set(rack_of(n) for n in nodes)), [racks["low4"]],
       "high in the freed rack")
    for job in ("low1", "low2", "low3"):
        check("Evicted" not in conditions(s, job) or
              conditions(s, job)["Evicted"]["status"] != "True",
              "%s not evicted" % job)
        eq(assignment(s, job), before[job], "%s keeps its rack" % job)
    ctl.stop()


def evict_pods_on(s, job, node):
    """Delete job's pods bound to node, as the taint manager or the node
    lifecycle controller would; the Job (simulated) creates them again."""
    n = 0
    for p in pods_of(s, job):
        if p["spec"].get("nodeName") == node:
            code, _, out = s.raw("DELETE", DPODS + "/" +
                                 p["metadata"]["name"])
            check(code in (200, 202), "delete pod: %r" % (out,))
            n += 1
    check(n > 0, "%s has pods on %s" % (job, node))


def barrier(s, name):
    """A later Job admitted and running: the controller has handled
    every event before its creation (the Node change) by now."""
    example_job(s, "required", name, 1)
    placed(s, name, 1)


def replaced_within(s, job, node, rack):
    def f():
        a = assignment(s, job) or {}
        return a if a and node not in repr(a) and not unhealthy(s, job) \
            else None
    a = wait_for(f, 20, what="%s replaced in %s" % (node, job))
    hosts = re.findall(r"b\d-r\d-n\d", repr(a))
    check(hosts and all(rack_of(h) == rack for h in hosts),
          "replacement within %s: %r" % (rack, a))
    nodes = placed(s, job, 4, timeout=30)
    check(node not in nodes and all(rack_of(n) == rack for n in nodes),
          "%s's pods run in %s without %s: %r" % (job, rack, node, nodes))


@case("node-notready-fails-once-its-pods-ended", simulate=SIM)
def notready_pod_termination(s):
    """Kueue's default gates (TASReplaceNodeOnPodTermination on, the
    fixed delay off): a Node NotReady for long under running pods of an
    admitted Workload is not failed while they run; once they are gone
    (deleted, as the node lifecycle controller does) the node has failed
    and the pods are replaced within the rack."""
    cluster(s)
    os.environ["CUEUE_TAS_NODE_FAILURE_DELAY_MS"] = "300"
    try:
        ctl = Controller(s, config=CONFIG)
    finally:
        del os.environ["CUEUE_TAS_NODE_FAILURE_DELAY_MS"]
    example_job(s, "required", "rack4", 4)
    nodes = placed(s, "rack4", 4)
    rack = rack_of(nodes[0])
    sick = sorted(nodes)[0]
    code, _, out = s.raw(
        "PATCH", "/api/v1/nodes/%s/status" % sick,
        {"status": {"conditions": [{
            "type": "Ready", "status": "False", "reason": "KubeletDown",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "NotReady: %r" % (out,))
    # the node lifecycle controller's taint: nothing new is bound there
    code, _, out = s.raw(
        "PATCH", "/api/v1/nodes/%s" % sick,
        {"spec": {"taints": [{"key": "node.kubernetes.io/not-ready",
                              "effect": "NoSchedule"}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "not-ready taint: %r" % (out,))
    barrier(s, "later")
    before = assignment(s, "rack4")
    check(sick in repr(before) and not unhealthy(s, "rack4"),
          "%s not failed while its pods run: %r %r" % (
              sick, before, unhealthy(s, "rack4")))
    evict_pods_on(s, "rack4", sick)
    replaced_within(s, "rack4", sick, rack)
    ctl.stop()


@case("node-tainted-fails-for-untolerating-pods", simulate=SIM)
def tainted(s):
    """TASReplaceNodeOnNodeTaints (on by default): a Ready Node gaining a
    NoExecute taint the Workload's pods do not tolerate has failed once
    they are gone (the taint manager evicts them; deleted here), and the
    pods are replaced within the rack; a Node tainted with one they
    tolerate stays in the assignment."""
    cluster(s)
    ctl = Controller(s, config=CONFIG)
    example_job(s, "required", "rack4", 4)
    nodes = placed(s, "rack4", 4)
    rack = rack_of(nodes[0])
    hosts = sorted(set(nodes))
    sick, other = hosts[0], hosts[-1]
    check(sick != other, "rack4 on two hosts at least: %r" % (nodes,))
    for node, key in ((sick, "maintenance"), (other, "soft")):
        code, _, out = s.raw(
            "PATCH", "/api/v1/nodes/%s" % node,
            {"spec": {"taints": [{"key": key, "value": "x",
                                  "effect": "NoExecute" if key ==
                                  "maintenance" else "PreferNoSchedule"}]}},
            headers={"Content-Type": "application/merge-patch+json"})
        eq(code, 200, "taint %s: %r" % (node, out))
    barrier(s, "later")
    check(sick in repr(assignment(s, "rack4")) and
          not unhealthy(s, "rack4"),
          "%s not failed while the pods run" % sick)
    evict_pods_on(s, "rack4", sick)
    replaced_within(s, "rack4", sick, rack)
    check(other in repr(assignment(s, "rack4")),
          "%s (PreferNoSchedule) kept" % other)
    # pods ungated to the tainted node before its replacement (the Job
    # makes new ones at once) waited there: Kueue marks them Failed, with
    # a condition and an event (their replacements ran: checked above)
    strays = [p for p in pods_of(s, "rack4")
              if p["spec"].get("nodeSelector", {}).get(HOST) == sick and
              not p["spec"].get("nodeName")]
    check(all(
        p["status"].get("phase") == "Failed" and
        any(c["type"] == "TerminatedByKueue" and
            c.get("reason") == "UnschedulableOnAssignedNode"
            for c in p["status"].get("conditions", []))
        for p in strays), "strays failed: %r" % (
            [(p["metadata"]["name"], p["status"]) for p in strays],))

    def event():
        return [e for e in s.get_json(
            "/apis/events.k8s.io/v1/namespaces/%s/events" % DNS)["items"]
            if e.get("reason") == "PodTerminatedByKueue" and
            e.get("type") == "Normal" and
            e.get("reportingController") ==
            "tas-resource-flavor-controller" and
            e.get("regarding", {}).get("kind") == "Pod"] or None
    if strays:
        wait_for(event, 10, what="PodTerminatedByKueue event")
    ctl.stop()


@case("node-failures-off-with-the-gate", simulate=SIM)
def replacement_gate_off(s):
    """TASFailedNodeReplacement: false (featureGates): a deleted Node of
    an admitted Workload is left alone, as Kueue's node controller does
    without the gate."""
    cluster(s)
    ctl = Controller(s, config=CONFIG + "featureGates:\n"
                     "  TASFailedNodeReplacement: false\n")
    example_job(s, "required", "rack4", 4)
    nodes = placed(s, "rack4", 4)
    before = assignment(s, "rack4")
    victim = sorted(nodes)[0]
    code, _, out = s.raw("DELETE", "/api/v1/nodes/" + victim)
    check(code in (200, 202), "delete node: %r" % (out,))
    barrier(s, "later")
    eq(assignment(s, "rack4"), before, "assignment kept")
    eq(unhealthy(s, "rack4"), [], "no unhealthy node recorded")
    ctl.stop()


def node_obj(name):
    """Node b<B>-r<R>-n<H> as cluster() creates it."""
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                BLOCK: name.split("-")[0], RACK: rack_of(name),
                HOST: name, "cloud.provider.com/node-group": "tas-group"}},
            "spec": {}, "status": {"allocatable": alloc, "capacity": alloc}}


def ledger_topology(path, uid):
    """podset.topology of uid's recorded decision (first podSet)."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        row = db.execute("SELECT topology FROM podset WHERE uid = ? AND "
                         "idx = 0", (uid,)).fetchone()
    finally:
        db.close()
    return json.loads(row[0]) if row and row[0] else None


@case("node-replacement-in-ledger-survives-restart", simulate=SIM)
def replacement_restart(s):
    """A failed node's replacement is recorded in the ledger's
    podset.topology before the status write. A crash between the ledger
    commit and the status write (simulated: while the controller is down
    the status is put back to the original assignment with the node in
    unhealthyNodes, and the node comes back) is resumed from the ledger:
    the restarted controller announces the recorded replacement, not
    the original. A healthy node found in unhealthyNodes leaves it."""
    cluster(s)
    ledger = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=ledger)
    example_job(s, "required", "rack4", 4)
    placed(s, "rack4", 4)
    original = assignment(s, "rack4")
    wl = wl_of_ns(s, "rack4")
    uid, name = wl["metadata"]["uid"], wl["metadata"]["name"]
    eq(ledger_topology(ledger, uid), original, "ledger has the admission")
    victim = sorted(re.findall(r"b\d-r\d-n\d", repr(original)))[0]
    code, _, out = s.raw("DELETE", "/api/v1/nodes/" + victim)
    check(code in (200, 202), "delete node: %r" % (out,))

    def replaced():
        a = assignment(s, "rack4") or {}
        return a if victim not in repr(a) and not unhealthy(s, "rack4") \
            else None
    new = wait_for(replaced, 20, what="%s replaced" % victim)
    eq(ledger_topology(ledger, uid), new, "ledger has the replacement")
    ctl.stop()

    post(s, "/api/v1/nodes", node_obj(victim))
    adm = wl_of_ns(s, "rack4")["status"]["admission"]
    adm["podSetAssignments"][0]["topologyAssignment"] = original
    code, _, out = s.raw(
        "PATCH", DWLS + "/%s/status" % name,
        {"status": {"admission": adm, "unhealthyNodes": [
            {"name": victim}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "status as before the lost write: %r" % (out,))
    eq(assignment(s, "rack4"), original, "status shows the original")

    ctl = Controller(s, config=CONFIG, store=ledger)

    def resumed():
        a = assignment(s, "rack4")
        return a if a == new and not unhealthy(s, "rack4") else None
    wait_for(resumed, 20, what="the recorded replacement announced")
    eq(ledger_topology(ledger, uid), new, "ledger unchanged")
    # the controller holds the announced assignment, not the status it
    # started from: the original's node failing again changes nothing
    code, _, out = s.raw("DELETE", "/api/v1/nodes/" + victim)
    check(code in (200, 202), "delete node again: %r" % (out,))
    barrier(s, "later")
    eq(assignment(s, "rack4"), new, "assignment kept")
    eq(unhealthy(s, "rack4"), [], "no unhealthy node")
    ctl.stop()

    # A node listed in unhealthyNodes but healthy (Kueue's
    # handleHealthyNode): it leaves the list, the assignment stays.
    healthy = sorted(re.findall(r"b\d-r\d-n\d", repr(new)))[0]
    code, _, out = s.raw(
        "PATCH", DWLS + "/%s/status" % name,
        {"status": {"unhealthyNodes": [{"name": healthy}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "unhealthyNodes: %r" % (out,))
    ctl = Controller(s, config=CONFIG, store=ledger)
    wait_for(lambda: not unhealthy(s, "rack4"), 20,
             what="%s removed from unhealthyNodes" % healthy)
    eq(assignment(s, "rack4"), new, "assignment kept")
    ctl.stop()


@case("pod-owned-workload-keeps-its-assignment", simulate=SIM)
def pod_owned(s):
    """SkipReassignmentForPodOwnedWorkloads (on by default in Kueue): a
    Workload owned by a single Pod (created as Kueue's test creates it,
    with the Pod as its owner) whose assigned node is deleted keeps its
    topologyAssignment (the Pod cannot move, a replacement would charge
    a node nobody uses); the node is recorded in unhealthyNodes and
    cleared again, once (node-failures-replaced-or-evicted shows a Job's
    Workload getting a replacement)."""
    cluster(s)
    ctl = Controller(s, config=CONFIG)
    pod = post(s, DPODS, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "solo", "namespace": DNS},
        "spec": {"containers": [{"name": "c", "image": "i"}]}})
    post(s, DWLS, {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "solo", "namespace": DNS, "ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": "solo",
            "uid": pod["metadata"]["uid"], "controller": True}]},
        "spec": {"queueName": "tas-user-queue", "podSets": [{
            "name": "main", "count": 1, "topologyRequest": {"required": RACK},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "c", "image": "i",
                "resources": {"requests": {"cpu": "1"}}}]}}}]}})
    original = wait_for(lambda: assignment(s, "solo"), 20,
                        what="solo admitted")
    victim = re.findall(r"b\d-r\d-n\d", repr(original))[0]
    kept = "keeps its assignment on unhealthy node %s" % victim
    code, _, out = s.raw("DELETE", "/api/v1/nodes/" + victim)
    check(code in (200, 202), "delete node: %r" % (out,))
    wait_for(lambda: kept in open(ctl.log).read(), 20,
             what="the failure of %s handled" % victim)
    wait_for(lambda: not unhealthy(s, "solo"), 20,
             what="unhealthyNodes cleared")
    barrier(s, "later")
    eq(assignment(s, "solo"), original, "assignment kept")
    eq(unhealthy(s, "solo"), [], "no unhealthy node")
    eq(open(ctl.log).read().count(kept), 1, "handled once")
    ctl.stop()


# ---- slices and podSet groups ----------------------------------------

JS_CONFIG = CONTROLLER_CONFIG + (
    "integrations:\n"
    "  frameworks: [\"batch/job\", \"jobset.x-k8s.io/jobset\"]\n")
JSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets" % DNS


def nominate(s, name, node, cpu):
    """A pod of another scheduler nominated to node: its cpu is taken."""
    post(s, DPODS, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": DNS},
        "spec": {"schedulerName": "other-scheduler",
                 "containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {
                                     "cpu": cpu}}}]}})
    code, _, out = s.raw(
        "PATCH", DPODS + "/%s/status" % name,
        {"status": {"nominatedNodeName": node}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "nominate %s: %r" % (name, out))


@case("slices-each-inside-one-host", simulate=SIM)
def sliced(s):
    """A Job of 8 half-cpu pods, required rack, in host slices of 4
    (podset-slice-required-topology + podset-slice-size): every host
    holds 4 pods (2 cpu) only where nothing else is; the hosts of three
    racks have half a cpu taken by a nominated pod (room for 3 pods
    each, 12 per rack: the best fit without slices), so both slices go
    to the fourth rack, 4 pods on each of two hosts."""
    cluster(s)
    for rack in ("b1-r1", "b1-r2", "b2-r1"):
        for h in range(1, 5):
            nominate(s, "nom-%s-n%d" % (rack, h), "%s-n%d" % (rack, h),
                     "500m")
    ctl = Controller(s, config=CONFIG)
    with open(os.path.join(DATA, "tas-job-required.yaml")) as f:
        job = yaml.safe_load(f)
    job["metadata"]["name"] = "sliced8"
    job["metadata"]["annotations"] = {"cueue.dev/sim-runtime-ms": "600000"}
    job["spec"]["parallelism"] = job["spec"]["completions"] = 8
    tpl = job["spec"]["template"]
    tpl["metadata"]["annotations"].update({
        "kueue.x-k8s.io/podset-slice-required-topology": HOST,
        "kueue.x-k8s.io/podset-slice-size": "4"})
    tpl["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
    post(s, DJOBS, job)
    w = wait_for(lambda: wl_of_ns(s, "sliced8"), 15, what="Workload")
    eq(w["spec"]["podSets"][0]["topologyRequest"],
       {"required": RACK, "podSetSliceRequiredTopology": HOST,
        "podSetSliceSize": 4,
        "podIndexLabel": "batch.kubernetes.io/job-completion-index"},
       "topologyRequest with slices")
    nodes = placed(s, "sliced8", 8)
    per = {}
    for n in nodes:
        per[n] = per.get(n, 0) + 1
    eq(sorted(per.values()), [4, 4], "two host slices of 4: %r" % per)
    eq(sorted(set(rack_of(n) for n in nodes)), ["b2-r2"],
       "the only rack with whole host slices: %r" % per)
    # A slice size that does not divide the pods: pending, Kueue's
    # placement would drop the remainder.
    job["metadata"]["name"] = "sliced6"
    job["spec"]["parallelism"] = job["spec"]["completions"] = 6
    post(s, DJOBS, job)
    msg = wait_for(lambda: pending_message(s, "sliced6"), 20,
                   what="sliced6 pending")
    check("podset slice size 4 does not divide the pod count 6" in msg, msg)
    ctl.stop()


@case("slice-layers-one-and-two-placed", simulate=SIM)
def slice_layers(s):
    """Kueue's multi-layer slice annotation (TASMultiLayerTopology): the
    Workload carries podsetSliceRequiredTopologyConstraints; one layer is
    placed as podset-slice-required-topology would be (hosts of 4 pods);
    two layers (a rack slice of 8 made of host slices of 4) are placed
    too, in one rack."""
    cluster(s)
    ctl = Controller(s, config=CONFIG)
    with open(os.path.join(DATA, "tas-job-required.yaml")) as f:
        job = yaml.safe_load(f)
    key = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
    for name, layers in (
            ("layer1", [{"topology": HOST, "size": 4}]),
            ("layer2", [{"topology": RACK, "size": 8},
                        {"topology": HOST, "size": 4}])):
        job["metadata"]["name"] = name
        job["metadata"]["annotations"] = {
            "cueue.dev/sim-runtime-ms": "600000"}
        job["spec"]["parallelism"] = job["spec"]["completions"] = 8
        tpl = job["spec"]["template"]
        tpl["metadata"]["annotations"][key] = json.dumps(layers)
        tpl["spec"]["containers"][0]["resources"]["requests"]["cpu"] = \
            "500m"
        post(s, DJOBS, job)
        w = wait_for(lambda: wl_of_ns(s, name), 15, what="Workload")
        eq(w["spec"]["podSets"][0]["topologyRequest"].get(
            "podsetSliceRequiredTopologyConstraints"), layers,
           "%s: the layers reach the Workload" % name)
    nodes = placed(s, "layer1", 8)
    per = {}
    for n in nodes:
        per[n] = per.get(n, 0) + 1
    eq(sorted(per.values()), [4, 4], "two host slices of 4: %r" % per)
    nodes = placed(s, "layer2", 8)
    per = {}
    for n in nodes:
        per[n] = per.get(n, 0) + 1
    eq(sorted(per.values()), [4, 4], "two host slices of 4: %r" % per)
    eq(len(set(rack_of(n) for n in nodes)), 1, "one rack slice: %r" % per)
    ctl.stop()


@case("slice-layers-two-placed-as-kueue", simulate=SIM)
def slice_layers_kueue(s):
    """Kueue's own two-layer example on the 16 hosts: block required,
    rack slices of 4 made of host slices of 2, 8 pods of 500m. Pods of
    another scheduler leave b1 (the best fit block) with room for 1 and
    4 pods on two hosts of b1-r1 and 3 and 4 on two hosts of b1-r2: a
    host's pods count only in whole host slices, so b1-r1's rack slice
    is all on n2 and b1-r2's is one host slice on each host, as Kueue
    assigns it (with one layer n1 of b1-r1 would get a pod)."""
    cluster(s)
    for node, cpu in (("b1-r1-n1", "1500m"), ("b1-r1-n3", "2"),
                      ("b1-r1-n4", "2"), ("b1-r2-n1", "500m"),
                      ("b1-r2-n3", "2"), ("b1-r2-n4", "2")):
        nominate(s, "nom-" + node, node, cpu)
    ctl = Controller(s, config=CONFIG)
    with open(os.path.join(DATA, "tas-job-required.yaml")) as f:
        job = yaml.safe_load(f)
    layers = [{"topology": RACK, "size": 4}, {"topology": HOST, "size": 2}]
    job["metadata"]["name"] = "kueue8"
    job["metadata"]["annotations"] = {"cueue.dev/sim-runtime-ms": "600000"}
    job["spec"]["parallelism"] = job["spec"]["completions"] = 8
    tpl = job["spec"]["template"]
    tpl["metadata"]["annotations"] = {
        "kueue.x-k8s.io/podset-required-topology": BLOCK,
        "kueue.x-k8s.io/podset-slice-required-topology-constraints":
            json.dumps(layers)}
    tpl["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
    post(s, DJOBS, job)
    ta = wait_for(lambda: assignment(s, "kueue8"), 20,
                  what="kueue8 admitted")
    eq(ta.get("levels"), [HOST], "assignment levels: %r" % ta)
    nodes = placed(s, "kueue8", 8)
    per = {}
    for n in nodes:
        per[n] = per.get(n, 0) + 1
    eq(per, {"b1-r1-n2": 4, "b1-r2-n1": 2, "b1-r2-n2": 2},
       "Kueue's assignment: %r" % ta)
    ctl.stop()


def tas_jobset(name, jobs, group=None, replicas=1, extra=None):
    """A JobSet of replicated jobs (name, pods, cpu per pod) of
    `replicas` Jobs, each of one required-rack podSet, all in podSet
    group `group` if given, `extra` annotations on their pods."""
    def rj(rname, n, cpu):
        anns = {"kueue.x-k8s.io/podset-required-topology": RACK}
        anns.update(extra or {})
        if group:
            anns["kueue.x-k8s.io/podset-group-name"] = group
        return {"name": rname, "replicas": replicas, "template": {
            "metadata": {"annotations": {
                "cueue.dev/sim-runtime-ms": "600000"}},
            "spec": {"parallelism": n, "completions": n,
                     "completionMode": "Indexed", "template": {
                         "metadata": {"annotations": anns},
                         "spec": {"restartPolicy": "Never", "containers": [{
                             "name": "c", "image": "busybox",
                             "resources": {"requests": {"cpu": cpu}}}]}}}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": DNS, "labels": {
                "kueue.x-k8s.io/queue-name": "tas-user-queue"}},
            "spec": {"suspend": True, "replicatedJobs": [
                rj(*j) for j in jobs]}}


@case("podset-group-in-one-rack", simulate="jobs,jobsets,scheduler")
def group(s):
    """A JobSet's leader and workers in one podSet group land in one
    rack: every host of b1-r1 has a cpu taken (room for the 4 workers,
    their best fit alone, but not for the 2-cpu leader), so the group
    goes to b1-r2, the leader on a host of its own. Then a JobSet of two
    podSets of 4 pods, not grouped: each in a rack, the second not on
    the capacity the first was just given (b1-r1, both's best fit)."""
    cluster(s)
    for h in range(1, 5):
        nominate(s, "nom-b1-r1-n%d" % h, "b1-r1-n%d" % h, "1")
    ctl = Controller(s, config=JS_CONFIG)
    post(s, JSETS, tas_jobset("grp", [("leader", 1, "2"),
                                      ("workers", 4, "1")], group="g"))
    w = wait_for(lambda: wl_of_ns(s, "grp"), 15, what="Workload")
    # With Kueue's index labels: pods by completion index, the
    # replicated Jobs by job-index, subGroupCount their replicas.
    eq([p["topologyRequest"] for p in w["spec"]["podSets"]],
       [{"required": RACK, "podSetGroupName": "g",
         "podIndexLabel": "batch.kubernetes.io/job-completion-index",
         "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
         "subGroupCount": 1}] * 2,
       "topologyRequests with the group and index labels")
    leader = placed(s, "grp-leader-0", 1)
    workers = placed(s, "grp-workers-0", 4)
    eq(sorted(set(rack_of(n) for n in leader + workers)), ["b1-r2"],
       "group in one rack: %r %r" % (leader, workers))
    check(leader[0] not in workers, "the leader's host is its own: %r %r"
          % (leader, workers))
    post(s, JSETS, tas_jobset("pair", [("a", 4, "1"), ("b", 4, "1")]))
    a = placed(s, "pair-a-0", 4)
    b = placed(s, "pair-b-0", 4)
    eq(sorted(set(rack_of(n) for n in a)), ["b1-r1"], "a: %r" % a)
    eq(len(set(rack_of(n) for n in b)), 1, "b in one rack: %r" % b)
    check(rack_of(b[0]) != "b1-r1", "b not on a's capacity: %r" % b)
    # Two Jobs of 4 half-cpu pods in host slices of 4: each Job's pods
    # take consecutive ranks (job index, then completion index, as
    # Kueue's ungater with the JobSet's subgroups), so each Job is one
    # slice on one host.
    post(s, JSETS, tas_jobset("sl", [("w", 4, "500m")], replicas=2, extra={
        "kueue.x-k8s.io/podset-slice-required-topology": HOST,
        "kueue.x-k8s.io/podset-slice-size": "4"}))
    w0 = placed(s, "sl-w-0", 4)
    w1 = placed(s, "sl-w-1", 4)
    eq((len(set(w0)), len(set(w1))), (1, 1), "a host per Job: %r %r"
       % (w0, w1))
    check(w0[0] != w1[0] and rack_of(w0[0]) == rack_of(w1[0]),
          "two hosts of one rack: %r %r" % (w0, w1))


def filtered_job(s, name, pods, spec_extra, mode="required"):
    """An example Job of `mode` whose pod template spec gets spec_extra
    (tolerations, nodeSelector, affinity)."""
    with open(os.path.join(DATA, "tas-job-%s.yaml" % mode)) as f:
        job = yaml.safe_load(f)
    job["metadata"]["name"] = name
    job["metadata"].setdefault("annotations", {})[
        "cueue.dev/sim-runtime-ms"] = "600000"
    job["spec"]["parallelism"] = job["spec"]["completions"] = pods
    job["spec"]["template"]["spec"].update(spec_extra)
    post(s, DJOBS, job)


def patch_node(s, name, patch):
    code, _, out = s.raw(
        "PATCH", "/api/v1/nodes/" + name, patch,
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "patch node %s: %r" % (name, out))


@case("taints-and-selectors-choose-nodes", simulate=SIM)
def taints_and_selectors(s):
    """Rack b1-r1 is tainted NoSchedule: a required-rack Job without the
    toleration fills another rack (b1-r1 comes first when all are free),
    one with it is placed in b1-r1; a Job whose nodeSelector names a
    label only host b2-r2-n3 has lands there alone, and one pod more
    than that host holds waits with Kueue's message; a required node
    affinity (Gt) picks its host the same way; a rack tainted
    NoExecute is used by a Job without tolerations once the flavor's
    spec.tolerations tolerate it."""
    cluster(s)
    for h in range(1, 5):
        patch_node(s, "b1-r1-n%d" % h, {"spec": {"taints": [{
            "key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}})
    patch_node(s, "b2-r2-n3", {"metadata": {"labels": {
        "example.com/special": "yes"}}})
    patch_node(s, "b2-r2-n2", {"metadata": {"labels": {
        "example.com/gen": "2"}}})
    patch_node(s, "b2-r2-n4", {"metadata": {"labels": {
        "example.com/gen": "5"}}})
    ctl = Controller(s, config=CONFIG)
    filtered_job(s, "plain8", 8, {})
    nodes = placed(s, "plain8", 8)
    eq(sorted(set(rack_of(n) for n in nodes)), ["b1-r2"],
       "plain8 skips the tainted rack")
    filtered_job(s, "tol8", 8, {"tolerations": [{
        "key": "dedicated", "operator": "Equal", "value": "ml",
        "effect": "NoSchedule"}]})
    nodes = placed(s, "tol8", 8)
    eq(sorted(set(rack_of(n) for n in nodes)), ["b1-r1"],
       "tol8 uses the tainted rack")
    filtered_job(s, "sel2", 2, {"nodeSelector": {
        "example.com/special": "yes"}})
    nodes = placed(s, "sel2", 2)
    eq(sorted(set(nodes)), ["b2-r2-n3"], "sel2 on the labelled host")
    filtered_job(s, "sel1", 1, {"nodeSelector": {
        "example.com/special": "yes"}}, mode="unconstrained")
    msg = wait_for(lambda: pending_message(s, "sel1"), 20,
                   what="sel1 pending")
    check('topology "default" doesn\'t allow to fit any of 1 pod(s)' in msg,
          msg)
    # Required node affinity: generation above 3 is b2-r2-n4 alone.
    filtered_job(s, "aff2", 2, {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "example.com/gen", "operator": "Gt",
                "values": ["3"]}]}]}}}})
    nodes = placed(s, "aff2", 2)
    eq(sorted(set(nodes)), ["b2-r2-n4"], "aff2 on the host of gen > 3")
    # Rack b2-r1 tainted NoExecute, tolerated by the flavor only: a Job
    # without tolerations of its own is placed there (the only rack with
    # 8 free cpu) once the flavor tolerates it.
    for h in range(1, 5):
        patch_node(s, "b2-r1-n%d" % h, {"spec": {"taints": [{
            "key": "flavor-only", "effect": "NoExecute"}]}})
    filtered_job(s, "fl8", 8, {})
    msg = wait_for(lambda: pending_message(s, "fl8"), 20,
                   what="fl8 pending")
    check("allows to fit only 4 out of 8 pod(s)" in msg, msg)
    code, _, out = s.raw(
        "PATCH", KQ + "/resourceflavors/tas-flavor",
        {"spec": {"tolerations": [{"key": "flavor-only",
                                   "operator": "Exists"}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "flavor tolerations: %r" % (out,))
    nodes = placed(s, "fl8", 8, timeout=40)
    eq(sorted(set(rack_of(n) for n in nodes)), ["b2-r1"],
       "fl8 in the rack the flavor tolerates")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
