# SPDX-License-Identifier: Apache-2.0
"""Fair sharing (Kueue's KEP-1714) end to end through the API with the Job
simulator: ClusterQueues of a cohort with different weights converge to
their weighted shares under a flood of long Jobs (fair-sharing admission
order and preemption, reason InCohortFairSharing), a weight of 0 keeps
only what nobody else wants, and status.fairSharing.weightedShare of the
ClusterQueues and the Cohort follow, with the weighted-share metrics."""
import os
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, Failure, case, check,
                     eq, free_port, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

FAIR = """integrations:
  frameworks: ["batch/job"]
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
"""


def config(port):
    return CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  enableClusterQueueResources: true' % port) + FAIR


def scrape(port):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read().decode()


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))


def cluster_queue(name, cohort, weight=None):
    spec = {"namespaceSelector": {}, "cohortName": cohort,
            "preemption": {"reclaimWithinCohort": "Any"},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": "0"}]}]}]}
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name}, "spec": spec}


def setup(s, cohort_cpu, queues):
    """A Cohort `co` holding cohort_cpu, and per (namespace, name, weight)
    a ClusterQueue of nominal 0 in it with LocalQueue `lq`."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    post(s, "/apis/kueue.x-k8s.io/v1beta2/cohorts", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
        "metadata": {"name": "co"},
        "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
                                     "flavors": [{"name": "default-flavor",
                                                  "resources": [{
                                                      "name": "cpu",
                                                      "nominalQuota":
                                                      str(cohort_cpu)}]}]}]}})
    for ns, name, weight in queues:
        post(s, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
             cluster_queue(name, "co", weight))
        s.namespace(ns)
        post(s, "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues" % ns,
             {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
              "metadata": {"name": "lq", "namespace": ns},
              "spec": {"clusterQueue": name}})


def job(ns, name):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         "600000"}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "1"}}}],
                         "restartPolicy": "Never"}}}}


def flood(s, ns, n):
    for i in range(n):
        post(s, "/apis/batch/v1/namespaces/%s/jobs" % ns, job(ns, "j%d" % i))


def cq_status(s, name):
    return s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s"
                      % name).get("status", {})


def reserving(s, name):
    return cq_status(s, name).get("reservingWorkloads", 0)


def settled(s, want):
    """want: {cq: reserving workloads}; the counts, once reached."""
    got = {cq: reserving(s, cq) for cq in want}
    return got if got == want else None


def converge(s, want, timeout, what):
    """Wait for settled(s, want); on a timeout, say where it stopped."""
    try:
        return wait_for(lambda: settled(s, want), timeout, what=what)
    except Failure as e:
        raise Failure("%s; reserving %r; pending %r" % (
            e, {cq: reserving(s, cq) for cq in want},
            {cq: cq_status(s, cq).get("pendingWorkloads") for cq in want}))


def preempted_reasons(s, ns):
    out = []
    for w in s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
                        "workloads" % ns)["items"]:
        for c in w.get("status", {}).get("conditions", []):
            if c["type"] == "Preempted" and c["status"] == "True":
                out.append((c["reason"], c["message"]))
    return out


@case("weighted-shares-converge", simulate="jobs")
def weighted_shares_converge(s):
    """Cohort of 6 cpu, ClusterQueues a (weight 1) and b (weight 2) with no
    quota of their own. a floods first and takes everything; b's flood
    then preempts a (InCohortFairSharing) until b holds 4 and a 2: both
    at share 2/6 over weight, 334 rounded up."""
    setup(s, 6, [("team-a", "a", None), ("team-b", "b", "2")])
    port = free_port()
    ctl = Controller(s, config=config(port))
    flood(s, "team-a", 8)
    converge(s, {"a": 6}, 30, what="a takes the cohort")
    flood(s, "team-b", 8)
    converge(s, {"a": 2, "b": 4}, 60,
             what="a:b converge to 2:4 (weights 1:2)")
    reasons = preempted_reasons(s, "team-a")
    check(len(reasons) >= 4, "a lost at least four workloads: %r" % reasons)
    for reason, msg in reasons:
        eq(reason, "InCohortFairSharing")
        check("due to Fair Sharing within the cohort; preemptor path: "
              "/co/b; preemptee path: /co/a" in msg, msg)
    eq(preempted_reasons(s, "team-b"), [], "b is never preempted")

    def shares():
        a = cq_status(s, "a").get("fairSharing", {}).get("weightedShare")
        b = cq_status(s, "b").get("fairSharing", {}).get("weightedShare")
        return (a, b) if (a, b) == (334, 334) else None
    wait_for(shares, 15, what="weightedShare 334 on a and b")
    co = s.get_json("/apis/kueue.x-k8s.io/v1beta2/cohorts/co")
    eq(co.get("status", {}).get("fairSharing"), {"weightedShare": 0},
       "a root Cohort has share 0")
    text = wait_for(lambda: (lambda t: t if
                             "kueue_cohort_weighted_share{" in t and
                             "kueue_cluster_queue_weighted_share{" in t
                             else None)(scrape(port)), 15,
                    what="weighted-share metrics")
    check('kueue_cluster_queue_weighted_share{cluster_queue="b",'
          'cohort="co"' in text, text)
    check('kueue_cohort_weighted_share{cohort="co"' in text, text)
    ctl.stop()


@case("weight-zero-gets-only-idle-quota", simulate="jobs")
def weight_zero(s):
    """Cohort of 4 cpu: z (weight 0) floods and takes the idle cohort;
    y (weight 1) then takes back all it asks for (2), preempting z."""
    setup(s, 4, [("team-z", "z", "0"), ("team-y", "y", None)])
    ctl = Controller(s, config=config(free_port()))
    flood(s, "team-z", 6)
    converge(s, {"z": 4}, 30, what="z takes the idle cohort")
    flood(s, "team-y", 2)
    converge(s, {"z": 2, "y": 2}, 60,
             what="y gets its 2, z keeps the rest")
    reasons = preempted_reasons(s, "team-z")
    eq([r for r, _ in reasons], ["InCohortFairSharing"] * 2)
    st = cq_status(s, "z").get("fairSharing", {})
    eq(st.get("weightedShare"), 9223372036854775807,
       "a borrowing weight-0 ClusterQueue reports the maximum")
    ctl.stop()


def cohort(s, name, parent=None, cpu=None):
    spec = {}
    if parent:
        spec["parentName"] = parent
    if cpu is not None:
        spec["resourceGroups"] = [{"coveredResources": ["cpu"], "flavors": [
            {"name": "default-flavor", "resources": [
                {"name": "cpu", "nominalQuota": str(cpu)}]}]}]
    post(s, "/apis/kueue.x-k8s.io/v1beta2/cohorts", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
        "metadata": {"name": name}, "spec": spec})


@case("hierarchy-reclaims-through-the-least-common-ancestor",
      simulate="jobs")
def hierarchy(s):
    """Cohort `root` (8 cpu) over `team1` {a} and `team2` {b, c}. b takes
    everything, a's flood brings team1 and team2 to 4 each; then c's flood
    reclaims from its sibling b only (their least common ancestor is
    team2, whose share against team1 is already fair): a 4, b 2, c 2."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    cohort(s, "root", cpu=8)
    cohort(s, "team1", parent="root")
    cohort(s, "team2", parent="root")
    for ns, name, parent in (("team-a", "a", "team1"),
                             ("team-b", "b", "team2"),
                             ("team-c", "c", "team2")):
        post(s, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
             cluster_queue(name, parent))
        s.namespace(ns)
        post(s, "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues" % ns,
             {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
              "metadata": {"name": "lq", "namespace": ns},
              "spec": {"clusterQueue": name}})
    ctl = Controller(s, config=config(free_port()))
    flood(s, "team-b", 8)
    converge(s, {"b": 8}, 30, what="b takes the root")
    flood(s, "team-a", 6)
    converge(s, {"a": 4, "b": 4}, 60, what="team1 and team2 at 4 each")
    flood(s, "team-c", 4)
    converge(s, {"a": 4, "b": 2, "c": 2}, 60,
             what="c reclaims from b within team2")
    eq(preempted_reasons(s, "team-a"), [], "a is never preempted")
    eq(preempted_reasons(s, "team-c"), [], "c is never preempted")
    msgs = [m for _, m in preempted_reasons(s, "team-b")]
    check(any("preemptor path: /root/team2/c; preemptee path: "
              "/root/team2/b" in m for m in msgs), msgs)
    check(any("preemptor path: /root/team1/a; preemptee path: "
              "/root/team2/b" in m for m in msgs), msgs)
    co = s.get_json("/apis/kueue.x-k8s.io/v1beta2/cohorts/team2")
    eq(co.get("status", {}).get("fairSharing"), {"weightedShare": 500},
       "team2 borrows 4 of the root's 8")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
