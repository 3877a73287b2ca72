# SPDX-License-Identifier: Apache-2.0
"""cueue-controller scheduling outcomes compared with Kueue's, through the
API: two preemptors of one cohort in one cycle (with Kueue's preemptor and
preemptee paths in the victims' messages), status.resourceRequests on a
pending Workload, kueue_pending_workloads{status="inadmissible"}, and a
new pending reason written promptly (a ClusterQueue released from Hold).
The Workloads are standalone (no job), as in Kueue's own scheduler
integration tests."""
import os
import re

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, run_cases, wait_for)
from cuetest.metrics import metric, scrape

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
CRDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "manifests", "crds")


def cluster_queue(name, cpu, cohort=None, stop=None):
    spec = {"namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": cpu}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    if stop:
        spec["stopPolicy"] = stop
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name}, "spec": spec}


def workload(ns, name, cpu, priority=0):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"queueName": "lq", "priority": priority, "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}]}}}]}}


def setup(s, queues):
    """queues: {namespace: ClusterQueue object}; one LocalQueue `lq` per
    namespace pointing at its ClusterQueue."""
    s.kubectl("apply", "-f", CRDS)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    code, _, body = s.raw("POST", KUEUE + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    eq(code, 201, "ResourceFlavor: %r" % body)
    for ns, cq in queues.items():
        code, _, body = s.raw("POST", KUEUE + "/clusterqueues", cq)
        eq(code, 201, "ClusterQueue: %r" % body)
        s.namespace(ns)
        code, _, body = s.raw(
            "POST", KUEUE + "/namespaces/%s/localqueues" % ns, {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": ns},
                "spec": {"clusterQueue": cq["metadata"]["name"]}})
        eq(code, 201, "LocalQueue: %r" % body)


def create(s, wl):
    code, _, body = s.raw("POST", KUEUE + "/namespaces/%s/workloads" %
                          wl["metadata"]["namespace"], wl)
    eq(code, 201, "create %s: %r" % (wl["metadata"]["name"], body))


def get_wl(s, ns, name):
    return s.get_json(KUEUE + "/namespaces/%s/workloads/%s" % (ns, name))


def cond(wl, t):
    for c in wl.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return None


def reserved(s, ns, name):
    c = cond(get_wl(s, ns, name), "QuotaReserved")
    return c is not None and c["status"] == "True"


@case("two-preemptors-of-one-cohort-in-one-cycle")
def two_preemptors(s):
    """cq-a and cq-b (2 cpu each, cohort co, withinClusterQueue
    LowerPriority) run a-low and b-low (2 cpu each). a-high and b-high
    (2 cpu, priority 100) reach the controller together (created while it
    is down): as Kueue, one cycle preempts for both, each says "Pending
    the preemption of 1 workload(s)", and each victim's message names the
    preemptor and preemptee paths as /co/<queue>. Before, the second was
    left "no longer fits" until the first victim was gone."""
    setup(s, {"team-a": cluster_queue("cq-a", 2, cohort="co"),
              "team-b": cluster_queue("cq-b", 2, cohort="co")})
    ctl = Controller(s, config=CONTROLLER_CONFIG)
    create(s, workload("team-a", "a-low", "2"))
    create(s, workload("team-b", "b-low", "2"))
    wait_for(lambda: reserved(s, "team-a", "a-low") and
             reserved(s, "team-b", "b-low"), 20, what="both low admitted")
    ctl.stop()
    create(s, workload("team-a", "a-high", "2", priority=100))
    create(s, workload("team-b", "b-high", "2", priority=100))
    ctl = Controller(s, config=CONTROLLER_CONFIG)

    def evicted(ns, name):
        c = cond(get_wl(s, ns, name), "Evicted")
        return c is not None and c["status"] == "True" and c
    ea = wait_for(lambda: evicted("team-a", "a-low"), 20,
                  what="a-low preempted")
    eb = wait_for(lambda: evicted("team-b", "b-low"), 20,
                  what="b-low preempted")
    for c, q in ((ea, "cq-a"), (eb, "cq-b")):
        eq(c["reason"], "Preempted")
        check("preemptor path: /co/%s; preemptee path: /co/%s" % (q, q)
              in c["message"], "Kueue's paths: %r" % c["message"])

    with open(ctl.log) as f:
        log = f.read()
    check(re.search(r"cycle: \d+ heads, 0 admitted, 2 preempting", log),
          "one cycle preempted for both")
    # No job stops them: the test ends the evictions, as Kueue's
    # integration tests do for standalone Workloads.
    for ns, name in (("team-a", "a-low"), ("team-b", "b-low")):
        code, _, body = s.raw("DELETE", KUEUE + "/namespaces/%s/workloads/%s"
                              % (ns, name))
        eq(code, 200, "delete %s: %r" % (name, body))
    wait_for(lambda: reserved(s, "team-a", "a-high") and
             reserved(s, "team-b", "b-high"), 20,
             what="both preemptors admitted")
    ctl.stop()


@case("pending-status-requests-metrics-and-prompt-reason")
def pending_status(s):
    """cq (1 cpu) starts on Hold with `first` and `second` (1 cpu each):
    both are counted inadmissible (kueue_pending_workloads), say the
    queue is inactive, and carry status.resourceRequests. Released from
    Hold, one is admitted and the other says WaitingForQuota within a few
    seconds (not 30 s later), still counted inadmissible."""
    setup(s, {"team": cluster_queue("cq", 1, stop="Hold")})
    port = free_port()
    ctl = Controller(s, config=CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % port))
    create(s, workload("team", "first", "1"))
    create(s, workload("team", "second", "1"))

    def says(name, reason):
        c = cond(get_wl(s, "team", name), "QuotaReserved")
        return c is not None and c["status"] == "False" and \
            c["reason"] == reason and c
    for name in ("first", "second"):
        c = wait_for(lambda: says(name, "Suspended"), 20,
                     what="%s says the queue is inactive" % name)
        eq(c["message"], "ClusterQueue cq is inactive")
        eq(get_wl(s, "team", name)["status"].get("resourceRequests"),
           [{"name": "main", "resources": {"cpu": "1"}}],
           "Kueue's status.resourceRequests while pending")
    m = wait_for(lambda: (lambda m: metric(
        m, "kueue_pending_workloads", cluster_queue="cq",
        status="inadmissible") == 2 and m)(scrape(port)), 10,
        what="both counted inadmissible on a held queue")
    eq(metric(m, "kueue_pending_workloads", cluster_queue="cq",
              status="active"), 0.0)
    m = wait_for(lambda: (lambda m: metric(
        m, "kueue_local_queue_pending_workloads", name="lq",
        namespace="team", status="inadmissible") == 2 and m)(scrape(port)),
        10, what="and per LocalQueue")
    eq(metric(m, "kueue_local_queue_pending_workloads", name="lq",
              namespace="team", status="active"), 0.0)

    code, _, body = s.raw(
        "PATCH", KUEUE + "/clusterqueues/cq", {"spec": {"stopPolicy":
                                                         "None"}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "release cq: %r" % body)
    # Same priority, creation times of one-second resolution: which one
    # is admitted is up to the UIDs.
    first = wait_for(lambda: [n for n in ("first", "second")
                              if reserved(s, "team", n)], 10,
                     what="one admitted")[0]
    other = "second" if first == "first" else "first"
    # The reason changed: the 30 s period between pending writes of a
    # Workload holds only repeats of one reason.
    c = wait_for(lambda: says(other, "WaitingForQuota"), 8,
                 what="the other's new reason written promptly")
    check("insufficient unused quota for cpu in flavor default-flavor, "
          "1 more needed" in c["message"], c["message"])
    wait_for(lambda: metric(scrape(port), "kueue_pending_workloads",
                            cluster_queue="cq", status="inadmissible")
             == 1, 10, what="second parked: inadmissible")
    ctl.stop()


run_cases()
