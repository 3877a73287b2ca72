# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: Kueue behaviours of the job and Workload reconcilers
that are easy to miss, end to end with the Job simulator:

  - integrations.labelKeysToCopy: those labels of a Job are copied to the
    Workload it gets (and no others);
  - a start that can never work (the Job's pod template already carries a
    label Kueue sets at start, with another value) finishes the Workload
    with reason FailedToStart, so its quota is given back;
  - changing a pending Job's queue-name label moves its Workload to that
    LocalQueue; changing its priority-class label updates the Workload's
    priority, also while it runs (and preemption sees the new one);
  - ClusterQueues and ResourceFlavors carry the
    kueue.x-k8s.io/resource-in-use finalizer, which goes once nothing uses
    them (a ClusterQueue held by it is Terminating and admits nothing);
  - a Workload deactivated while pending is marked Evicted (Deactivated);
  - status.reclaimablePods: succeeded pods of a Job that can no longer
    need them give their quota back."""
import os

from cuetest import CONTROLLER_CONFIG, Controller, case, check, eq, \
    run_cases, wait_for
from cuetest.kobj import cond, is_true

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
MERGE = {"Content-Type": "application/merge-patch+json"}

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def post(s, path, obj):
    obj.setdefault("apiVersion", "kueue.x-k8s.io/v1beta2")
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "POST %s: %r" % (path, body))


def setup(s, cpu=2, queues=("lq",), cqs=("cq",)):
    """CRDs, ResourceFlavor default-flavor, ClusterQueues cqs with cpu
    each, namespace team-a, LocalQueue queues[i] -> cqs[min(i, last)]."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/resourceflavors", {
        "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}})
    for cq in cqs:
        post(s, KQ + "/clusterqueues", cq_obj(cq, cpu))
    s.namespace(NS)
    for i, lq in enumerate(queues):
        post(s, KQ + "/namespaces/%s/localqueues" % NS, {
            "kind": "LocalQueue", "metadata": {"name": lq, "namespace": NS},
            "spec": {"clusterQueue": cqs[min(i, len(cqs) - 1)]}})


def cq_obj(name, cpu, flavor="default-flavor"):
    return {"kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {},
                     "resourceGroups": [{
                         "coveredResources": ["cpu"],
                         "flavors": [{"name": flavor, "resources": [{
                             "name": "cpu", "nominalQuota": cpu}]}]}]}}


def job_obj(name, queue="lq", labels=None, runtime_ms=600000, cpu="1",
            parallelism=1, completions=None, pod_labels=None):
    lab = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    lab.update(labels or {})
    spec = {"parallelism": parallelism, "suspend": True,
            "template": {"metadata": {"labels": pod_labels or {}},
                         "spec": {
                             "containers": [{
                                 "name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu}}}],
                             "restartPolicy": "Never"}}}
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "labels": lab,
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": spec}


def create_job(s, name, **kw):
    code, _, body = s.raw("POST", JOBS, job_obj(name, **kw))
    eq(code, 201, "create %s: %r" % (name, body))


def wl_of(s, job):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == job:
            return w
    return None


def wait_wl(s, job, pred, what, timeout=20):
    return wait_for(lambda: (lambda w: w if w is not None and pred(w)
                             else None)(wl_of(s, job)), timeout, what=what)


def patch(s, path, body):
    code, _, resp = s.raw("PATCH", path, body, headers=MERGE)
    eq(code, 200, "PATCH %s: %r" % (path, resp))


def job_running(s, name):
    j = s.get_json(JOBS + "/" + name)
    return j["spec"].get("suspend") is False and \
        j.get("status", {}).get("active", 0) > 0


@case("label-keys-to-copy", simulate="jobs")
def label_keys_to_copy(s):
    """integrations.labelKeysToCopy [team, missing]: the Job's team label
    is on its Workload, its tier label is not."""
    setup(s)
    ctl = Controller(s, config=CONFIG + "  labelKeysToCopy: [team, missing]\n")
    create_job(s, "a", labels={"team": "blue", "tier": "gold"})
    w = wait_wl(s, "a", lambda w: True, "Workload of a")
    labels = w["metadata"].get("labels") or {}
    eq(labels.get("team"), "blue", "copied label: %r" % labels)
    check("tier" not in labels and "missing" not in labels,
          "only the keys named are copied: %r" % labels)
    ctl.stop()


@case("failed-to-start", simulate="jobs")
def failed_to_start(s):
    """Job a's pod template carries kueue.x-k8s.io/podset=other, which the
    start would have to set to "main": admitted, it can never start, so
    its Workload finishes (FailedToStart, the conflict as message) and
    its cpu goes to b on the 1-cpu ClusterQueue."""
    setup(s, cpu=1)
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a", pod_labels={"kueue.x-k8s.io/podset": "other"})
    w = wait_wl(s, "a", lambda w: is_true(w, "Finished"), "a finished")
    c = cond(w, "Finished")
    eq(c.get("reason"), "FailedToStart", "Finished reason")
    check("conflict for labels" in c.get("message", ""),
          "Finished message: %r" % c)
    check(s.get_json(JOBS + "/a")["spec"].get("suspend") is True,
          "a never started")
    create_job(s, "b")
    wait_for(lambda: job_running(s, "b"), 20, what="b running")
    ctl.stop()


@case("pending-job-label-changes", simulate="jobs")
def label_changes(s):
    """Job a waits in LocalQueue lq (ClusterQueue cq, no quota). Its
    priority-class label set to high (a WorkloadPriorityClass of value
    100) gives its Workload that class and priority; its queue-name label
    changed to lq2 (ClusterQueue cq2 with quota) moves the Workload
    there, and it runs."""
    setup(s, cpu=0, queues=("lq", "lq2"), cqs=("cq", "cq2"))
    patch(s, KQ + "/clusterqueues/cq2", {"spec": {"resourceGroups": [{
        "coveredResources": ["cpu"], "flavors": [{
            "name": "default-flavor", "resources": [{
                "name": "cpu", "nominalQuota": 2}]}]}]}})
    post(s, KQ + "/workloadpriorityclasses", {
        "kind": "WorkloadPriorityClass", "metadata": {"name": "high"},
        "value": 100})
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a")
    wait_wl(s, "a", lambda w: (cond(w, "QuotaReserved") or {}).get(
        "status") == "False", "a pending")
    patch(s, JOBS + "/a", {"metadata": {"labels": {
        "kueue.x-k8s.io/priority-class": "high"}}})
    w = wait_wl(s, "a", lambda w: w["spec"].get("priority") == 100,
                "a's Workload at priority 100")
    eq(w["spec"].get("priorityClassRef"),
       {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
        "name": "high"}, "priorityClassRef")
    eq(w["spec"].get("queueName"), "lq", "queue unchanged so far")
    patch(s, JOBS + "/a", {"metadata": {"labels": {
        "kueue.x-k8s.io/queue-name": "lq2"}}})
    w = wait_wl(s, "a", lambda w: w["spec"].get("queueName") == "lq2",
                "a's Workload in lq2")
    wait_for(lambda: job_running(s, "a"), 20, what="a running in cq2")
    w = wl_of(s, "a")
    eq(w["status"]["admission"]["clusterQueue"], "cq2", "admitted to")
    ctl.stop()


@case("admitted-job-priority-label-change", simulate="jobs")
def admitted_priority_change(s):
    """Job a (class low, 1) runs on a 1-cpu ClusterQueue that preempts
    lower priorities. Its priority-class label set to high (100): its
    Workload's priority follows while it runs, and b (class medium, 50)
    then waits instead of preempting it."""
    setup(s, cpu=1)
    patch(s, KQ + "/clusterqueues/cq", {"spec": {"preemption": {
        "withinClusterQueue": "LowerPriority"}}})
    for name, value in (("low", 1), ("medium", 50), ("high", 100)):
        post(s, KQ + "/workloadpriorityclasses", {
            "kind": "WorkloadPriorityClass", "metadata": {"name": name},
            "value": value})
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a", labels={"kueue.x-k8s.io/priority-class": "low"})
    wait_for(lambda: job_running(s, "a"), 20, what="a running")
    patch(s, JOBS + "/a", {"metadata": {"labels": {
        "kueue.x-k8s.io/priority-class": "high"}}})
    w = wait_wl(s, "a", lambda w: w["spec"].get("priority") == 100,
                "a's Workload at priority 100")
    eq(w["spec"]["priorityClassRef"]["name"], "high", "priorityClassRef")
    create_job(s, "b", labels={"kueue.x-k8s.io/priority-class": "medium"})
    w = wait_wl(s, "b", lambda w: (cond(w, "QuotaReserved") or {}).get(
        "status") == "False", "b pending")
    check("preemption" not in cond(w, "QuotaReserved").get("message", ""),
          "b does not preempt: %r" % cond(w, "QuotaReserved"))
    check(not is_true(wl_of(s, "a"), "Evicted"),
          "a (now 100) is not preempted by b (50)")
    check(job_running(s, "a"), "a still running")
    ctl.stop()


@case("deactivate-pending", simulate="jobs")
def deactivate_pending(s):
    """Job a waits (ClusterQueue cq has no quota). Its Workload
    deactivated is marked Evicted (Deactivated, "The workload is
    deactivated") though it never held quota, and the eviction is
    counted; reactivated, with quota given to cq, it is admitted (Evicted
    reset) and runs."""
    setup(s, cpu=0)
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a")
    w = wait_wl(s, "a", lambda w: (cond(w, "QuotaReserved") or {}).get(
        "status") == "False", "a pending")
    patch(s, WLS + "/" + w["metadata"]["name"], {"spec": {"active": False}})
    w = wait_wl(s, "a", lambda w: is_true(w, "Evicted"), "a evicted")
    c = cond(w, "Evicted")
    eq((c.get("reason"), c.get("message")),
       ("Deactivated", "The workload is deactivated"), "Evicted")
    ev = w["status"].get("schedulingStats", {}).get("evictions", [])
    check({"reason": "Deactivated", "underlyingCause": "", "count": 1}
          in ev, "eviction counted: %r" % ev)
    check(not w["status"].get("admission"), "no admission")
    patch(s, KQ + "/clusterqueues/cq", {"spec": {"resourceGroups": [{
        "coveredResources": ["cpu"], "flavors": [{
            "name": "default-flavor", "resources": [{
                "name": "cpu", "nominalQuota": 2}]}]}]}})
    check(not is_true(wl_of(s, "a"), "QuotaReserved"),
          "an inactive Workload is not admitted")
    patch(s, WLS + "/" + w["metadata"]["name"], {"spec": {"active": True}})
    wait_for(lambda: job_running(s, "a"), 20, what="a running")
    eq((cond(wl_of(s, "a"), "Evicted") or {}).get("status"), "False",
       "Evicted reset by the admission")
    ctl.stop()


@case("reclaimable-pods", simulate="jobs")
def reclaimable_pods(s):
    """Job a (parallelism 2, completions 2, 1 cpu a pod) runs on a 3-cpu
    ClusterQueue; b (2 cpu) waits. One of a's pods succeeds: its Workload
    says reclaimablePods main=1, a holds 1 cpu, and b is admitted."""
    setup(s, cpu=3)
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a", parallelism=2, completions=2)
    wait_for(lambda: job_running(s, "a"), 20, what="a running")
    create_job(s, "b", cpu="2")
    wait_wl(s, "b", lambda w: (cond(w, "QuotaReserved") or {}).get(
        "status") == "False", "b pending")
    code, _, body = s.raw("PATCH", JOBS + "/a/status",
                          {"status": {"succeeded": 1}}, headers=MERGE)
    eq(code, 200, "a's status: %r" % body)
    w = wait_wl(s, "a", lambda w: w["status"].get("reclaimablePods"),
                "a's reclaimablePods")
    eq(w["status"]["reclaimablePods"], [{"name": "main", "count": 1}],
       "reclaimablePods")
    wait_for(lambda: job_running(s, "b"), 20, what="b running")
    check(job_running(s, "a"), "a still running")
    ctl.stop()


FIN = "kueue.x-k8s.io/resource-in-use"


def finalizers(s, path):
    code, _, body = s.raw("GET", path)
    if code == 404:
        return None
    eq(code, 200, "GET %s: %r" % (path, body))
    return body["metadata"].get("finalizers") or []


@case("resource-in-use-finalizers", simulate="jobs")
def in_use_finalizers(s):
    """ClusterQueue cq and ResourceFlavor default-flavor get the
    resource-in-use finalizer. Deleted while job a runs in cq, cq stays
    (terminating: b, created then, is not admitted) and so does the
    flavor cq names; once a is gone, cq goes, then the flavor."""
    setup(s, cpu=2)
    cq = KQ + "/clusterqueues/cq"
    rf = KQ + "/resourceflavors/default-flavor"
    ctl = Controller(s, config=CONFIG)
    for path in (cq, rf):
        wait_for(lambda path=path: FIN in finalizers(s, path), 15,
                 what="finalizer on %s" % path)
    create_job(s, "a")
    wait_for(lambda: job_running(s, "a"), 20, what="a running")
    code, _, body = s.raw("DELETE", cq)
    check(code in (200, 202), "DELETE cq: %r" % body)
    code, _, body = s.raw("DELETE", rf)
    check(code in (200, 202), "DELETE flavor: %r" % body)
    create_job(s, "b")
    w = wait_wl(s, "b", lambda w: (cond(w, "QuotaReserved") or {}).get(
        "status") == "False", "b pending: cq admits nothing new")
    qr = cond(w, "QuotaReserved")
    eq((qr["reason"], qr["message"]), ("Suspended",
       "ClusterQueue cq is inactive"), "Kueue's words for a terminating cq")
    # A finalizer pass after the deletions: a new ClusterQueue gets its
    # finalizer; cq and the flavor still have theirs.
    post(s, KQ + "/clusterqueues", cq_obj("later", 1, flavor="nope"))
    wait_for(lambda: FIN in finalizers(s, KQ + "/clusterqueues/later"), 15,
             what="finalizer on a later ClusterQueue")
    c = wait_for(lambda: (lambda c: c if c and c.get("reason") ==
                          "FlavorNotFound" else None)(cond(s.get_json(
        KQ + "/clusterqueues/later"), "Active")), 15,
        what="later inactive: its flavor is missing")
    eq(c["message"], "Can't admit new workloads: references missing "
       "ResourceFlavor(s): nope.", "Kueue's message")
    check(FIN in (finalizers(s, cq) or []),
          "cq kept while a holds quota in it")
    wait_for(lambda: (cond(s.get_json(cq), "Active") or {}).get("reason")
             == "Terminating", 15, what="cq Active=False (Terminating)")
    check(FIN in (finalizers(s, rf) or []),
          "the flavor kept while ClusterQueues name it")
    code, _, body = s.raw("DELETE", KQ + "/clusterqueues/later")
    check(code in (200, 202), "DELETE later: %r" % body)
    code, _, body = s.raw("DELETE", JOBS + "/a?propagationPolicy=Background")
    eq(code, 200, "delete a: %r" % body)
    wait_for(lambda: finalizers(s, cq) is None, 20, what="cq gone")
    wait_for(lambda: finalizers(s, rf) is None, 20, what="flavor gone")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
