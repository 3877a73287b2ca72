# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with Jobs and JobSets (cueue-apiserver simulating the
Job and JobSet controllers).

seed-001 (Kueue #7649): with manageJobsWithoutQueueName: true and a
managedJobsNamespaceSelector excluding namespace `test`, a JobSet there runs
to completion and the controller writes NOTHING in `test` while it works
elsewhere; the same JobSet in a managed namespace gets exactly one Workload,
is admitted, and each child Job is suspended at most once and resumed at
most once."""
import json
import os
import threading
import time
import urllib.error
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port,
                     run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

SEED001_CONFIG = CONTROLLER_CONFIG + """manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [kube-system, kueue-system, test]
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
"""

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 4Gi}
"""


def local_queue(ns):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": ns},
            "spec": {"clusterQueue": "cq"}}


def jobset(ns, name, runtime_ms=1500):
    """The JobSet of the seed-001 report (two replicatedJobs), suspend
    false, with the simulator's runtime annotation."""
    def rj(rname, cpu):
        return {"name": rname, "replicas": 1, "template": {"spec": {
            "template": {"metadata": {"annotations": {
                "cueue.dev/sim-runtime-ms": str(runtime_ms)}}, "spec": {
                "containers": [{"name": "sleep", "image": "busybox",
                                "command": ["sleep", "10s"],
                                "resources": {"requests": {
                                    "cpu": cpu, "memory": "200Mi"}}}],
                "restartPolicy": "Never"}}}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"suspend": False, "replicatedJobs": [
                rj("workers", "1"), rj("driver", "2")]}}


def job(ns, name, cpu, runtime_ms=800, suspend=False):
    """A Job asking `cpu`. Without the mutating webhook (issue 6) a Job
    created unsuspended starts before the controller suspends it, as with
    Kueue minus its webhook; quota tests create them suspended."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": "default"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": suspend,
                     "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {"cpu": cpu}}}],
                "restartPolicy": "Never"}}}}


def setup(s, namespaces=("team",)):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))
    for ns in namespaces:
        s.namespace(ns)
        code, _, body = s.raw(
            "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
            "localqueues" % ns, local_queue(ns))
        eq(code, 201, "LocalQueue in %s: %r" % (ns, body))


def jobset_state(s, ns, name):
    return s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/"
                      "jobsets/%s" % (ns, name)).get("status", {})


def controller_requests(s, since, ns=None):
    out = []
    for e in s.access_log(since):
        if not e["userAgent"].startswith("cueue-controller/"):
            continue
        if e["verb"] not in ("POST", "PUT", "PATCH", "DELETE"):
            continue
        if ns is None or "/namespaces/%s/" % ns in e["path"]:
            out.append(e)
    return out


class SuspendWatch:
    """Record every spec.suspend transition of the Jobs in a namespace,
    from a raw watch (what the simulators and the controller wrote)."""

    def __init__(self, s, ns):
        self.st = s.stream("/apis/batch/v1/namespaces/%s/jobs?watch=1&"
                           "timeoutSeconds=300" % ns)

    def transitions(self):
        last, out = {}, {}
        for ev in self.st.events():
            name = ev["object"]["metadata"]["name"]
            susp = bool(ev["object"]["spec"].get("suspend"))
            if name in last and last[name] != susp:
                out.setdefault(name, []).append(
                    "suspend" if susp else "resume")
            last[name] = susp
        return out

    def close(self):
        self.st.close()


@case("seed-001-unmanaged-namespace-untouched", simulate="jobs,jobsets")
def seed001(s):
    setup(s, namespaces=("team",))
    s.namespace("test")
    ctl = Controller(s, config=SEED001_CONFIG)
    mark = s.log_mark()
    code, _, body = s.raw(
        "POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/test/jobsets",
        jobset("test", "sleep-job-x5ffx"))
    eq(code, 201, "create JobSet in test: %r" % body)
    # Activity elsewhere for at least 30 s: Jobs flow through `team`.
    start = time.time()
    i = 0
    while time.time() - start < 31:
        code, _, body = s.raw(
            "POST", "/apis/batch/v1/namespaces/team/jobs",
            job("team", "busy-%d" % i, "1"))
        eq(code, 201, "create job in team: %r" % body)
        i += 1
        time.sleep(1.5)
    st = wait_for(lambda: jobset_state(s, "test", "sleep-job-x5ffx")
                  .get("terminalState"), 20, what="JobSet in test done")
    eq(st, "Completed", "JobSet in test ran to completion")
    writes_in_test = controller_requests(s, mark, "test")
    eq([(w["verb"], w["path"]) for w in writes_in_test], [],
       "controller writes in namespace test")
    eq(s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/test/"
                  "workloads")["items"], [], "no Workload in test")
    # ... while it did work elsewhere.
    check(len(controller_requests(s, mark, "team")) > 0,
          "the controller was active in team")
    ctl.stop()


@case("seed-001-managed-namespace-one-workload", simulate="jobs,jobsets")
def seed001_managed(s):
    setup(s, namespaces=("team",))
    ctl = Controller(s, config=SEED001_CONFIG)
    watch = SuspendWatch(s, "team")
    # No webhook suspends it here: the JobSet must arrive once the
    # controller watches, or it may run to completion before it is seen
    # (its start-up grew with the provisioning and TAS informers).
    wait_for(lambda: "informers synced" in open(ctl.log).read(), 30,
             what="the controller's informers synced")
    code, _, body = s.raw(
        "POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team/jobsets",
        jobset("team", "sleep-job-x5ffx"))
    eq(code, 201, "create JobSet in team: %r" % body)
    st = wait_for(lambda: jobset_state(s, "team", "sleep-job-x5ffx")
                  .get("terminalState"), 30, what="JobSet in team done")
    eq(st, "Completed")
    # The controller marks the Workload Finished once it sees the
    # JobSet's terminal state: a watch event later than the test's read
    # of that state, so wait for it (CI read it a moment too early).

    def finished_wls():
        items = s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/team/"
                           "workloads")["items"]
        done = [w for w in items
                if any(c["type"] == "Finished" and c["status"] == "True"
                       for c in w.get("status", {}).get("conditions", []))]
        return items if done else None
    wls = wait_for(finished_wls, 30, what="the Workload Finished")
    eq(len(wls), 1, "exactly one Workload")
    wl = wls[0]
    eq([p["name"] for p in wl["spec"]["podSets"]], ["workers", "driver"])
    eq(wl["spec"]["queueName"], "default", "default LocalQueue")
    conds = {c["type"]: c["status"] for c in wl["status"]["conditions"]}
    eq(conds.get("Admitted"), "True")
    eq(conds.get("Finished"), "True")
    time.sleep(0.5)
    trans = watch.transitions()
    watch.close()
    check(set(trans) <= {"sleep-job-x5ffx-workers-0",
                         "sleep-job-x5ffx-driver-0"}, trans)
    for child, seq in trans.items():
        check(seq.count("suspend") <= 1 and seq.count("resume") <= 1,
              "%s flapped: %r" % (child, seq))
    ctl.stop()


@case("jobs-queue-beyond-quota", simulate="jobs")
def jobs_quota(s):
    setup(s, namespaces=("team",))
    ctl = Controller(s, config=SEED001_CONFIG.replace(
        "manageJobsWithoutQueueName: true", "manageJobsWithoutQueueName: "
        "false"))
    running_max = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            jobs = s.get_json("/apis/batch/v1/namespaces/team/jobs")["items"]
            running_max[0] = max(running_max[0], sum(
                1 for j in jobs if j.get("status", {}).get("active")))
            time.sleep(0.05)
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    for i in range(4):
        code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                              job("team", "j%d" % i, "4", runtime_ms=1200,
                                  suspend=True))
        eq(code, 201, "create j%d: %r" % (i, body))

    def done():
        jobs = s.get_json("/apis/batch/v1/namespaces/team/jobs")["items"]
        return len(jobs) == 4 and all(
            j.get("status", {}).get("succeeded") == 1 for j in jobs)
    wait_for(done, 40, what="all jobs complete")
    stop.set()
    t.join()
    check(running_max[0] <= 2, "at most 2 x 4 cpu within 9 cpu, saw %d"
          % running_max[0])
    check(running_max[0] >= 1, "jobs ran")
    # Finished Workloads keep no finalizer; deleting a job keeps its
    # finished Workload.
    wlpath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"

    def finished():
        wls = s.get_json(wlpath)["items"]
        return len(wls) == 4 and all(
            not w["metadata"].get("finalizers") and any(
                c["type"] == "Finished" and c["status"] == "True"
                for c in w["status"].get("conditions", []))
            for w in wls) and wls
    wls = wait_for(finished, 10, what="Workloads finished without finalizer")
    before = {w["metadata"]["name"]: w["metadata"]["resourceVersion"]
              for w in wls}
    code, _, body = s.raw("DELETE", "/apis/batch/v1/namespaces/team/jobs/j0")
    check(code in (200, 202), "delete j0: %r" % body)
    # FinishOrphanedWorkloads: a finished Workload whose job is gone is
    # kept as it is (objectRetentionPolicies would delete it).
    time.sleep(2)
    after = {w["metadata"]["name"]: w["metadata"]["resourceVersion"]
             for w in s.get_json(wlpath)["items"]}
    eq(after, before, "j0's finished Workload kept, untouched")
    ctl.stop()


@case("events-once-per-transition", simulate="jobs")
def events(s):
    setup(s, namespaces=("team",))
    ctl = Controller(s, config=SEED001_CONFIG)
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "ev", "1", runtime_ms=800,
                              suspend=True))
    eq(code, 201, "create job: %r" % body)

    def succeeded():
        j = s.get_json("/apis/batch/v1/namespaces/team/jobs/ev")
        return j.get("status", {}).get("succeeded") == 1
    wait_for(succeeded, 20, what="job done")
    time.sleep(1.5)
    evs = s.get_json("/api/v1/namespaces/team/events")["items"]
    by = {}
    for e in evs:
        k = (e["involvedObject"]["kind"], e["reason"])
        by[k] = by.get(k, 0) + ((e.get("series") or {}).get("count") or
                                e.get("count") or 1)
        # events.k8s.io events, as Kueue's controllers report them.
        eq(e["reportingComponent"], {
            "Job": "batch/job-kueue-controller"}.get(
                e["involvedObject"]["kind"], "kueue-admission"), str(e))
    eq(by.get(("Job", "CreatedWorkload")), 1, "CreatedWorkload: %r" % by)
    eq(by.get(("Job", "Started")), 1, "Started: %r" % by)
    eq(by.get(("Workload", "QuotaReserved")), 1, "QuotaReserved: %r" % by)
    eq(by.get(("Workload", "Admitted")), 1, "Admitted: %r" % by)
    check(("Job", "Stopped") not in by, "a suspended job is not "
          "'stopped' again: %r" % by)
    # kubectl describe finds them through involvedObject field selectors.
    p = s.kubectl("describe", "job", "ev", "-n", "team")
    check("CreatedWorkload" in p.stdout and "Started" in p.stdout,
          p.stdout[-800:])
    ctl.stop()


PREEMPT_QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {pool: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: spot
      resources:
      - {name: cpu, nominalQuota: 4}
---
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


def preemption_setup(s):
    """PREEMPT_QUEUES with team's LocalQueue, a controller and a 600 s
    low-priority Job (3 of 4 cpu) created: (controller, running(name)),
    running returning the Job once it runs."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", PREEMPT_QUEUES))
    s.namespace("team")
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues",
        local_queue("team"))
    eq(code, 201, "LocalQueue: %r" % body)
    ctl = Controller(s, config=SEED001_CONFIG.replace(
        "manageJobsWithoutQueueName: true", "manageJobsWithoutQueueName: "
        "false"))
    low = job("team", "low", "3", runtime_ms=600000, suspend=True)
    low["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "low"
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs", low)
    eq(code, 201, "create low: %r" % body)
    path = "/apis/batch/v1/namespaces/team/jobs/"

    def running(name):
        j = s.get_json(path + name)
        return (j["spec"].get("suspend") is False
                and j.get("status", {}).get("active") == 1) and j
    return ctl, running


@case("jobs-preemption-restores-template", simulate="jobs")
def jobs_preemption(s):
    """A high-priority Job preempts a running low-priority one: the low Job
    is suspended with its template restored (no flavor nodeSelector left
    behind), its quota is released, and the high Job starts on the
    flavor's node labels."""
    ctl, running = preemption_setup(s)
    lj = wait_for(lambda: running("low"), 20, what="low job running")
    eq(lj["spec"]["template"]["spec"].get("nodeSelector"), {"pool": "spot"},
       "flavor node labels injected")
    lqpath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues/" \
        "default"

    def lq_reserving():
        st = s.get_json(lqpath).get("status", {})
        return st.get("reservingWorkloads") == 1 and st
    st = wait_for(lq_reserving, 5, what="LocalQueue status")
    eq(st["pendingWorkloads"], 0)
    eq(st["flavorsReservation"], [{"name": "spot", "resources": [
        {"name": "cpu", "total": "3"}]}], "LocalQueue reservation")
    active = [c for c in st["conditions"] if c["type"] == "Active"]
    eq([(c["status"], c["reason"]) for c in active], [("True", "Ready")])
    orphan = local_queue("team")
    orphan["metadata"]["name"] = "orphan"
    orphan["spec"]["clusterQueue"] = "missing"
    code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/"
                          "team/localqueues", orphan)
    eq(code, 201, "orphan LocalQueue: %r" % body)

    def orphan_inactive():
        st = s.get_json(lqpath.replace("default", "orphan")).get("status")
        return [(c["status"], c["reason"]) for c in (st or {}).get(
            "conditions", []) if c["type"] == "Active"]
    eq(wait_for(orphan_inactive, 5, what="orphan LocalQueue status"),
       [("False", "ClusterQueueDoesNotExist")])

    high = job("team", "high", "2", runtime_ms=800, suspend=True)
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          high)
    eq(code, 201, "create high: %r" % body)

    # A batch Job stops in three writes (suspend, clear startTime,
    # restore the template: Kueue's order, the API server refuses a
    # template change on a Job that still has a startTime), so the first
    # suspended state seen may still carry the admitted nodeSelector;
    # what must hold is that the stop ends restored.
    def preempted():
        j = s.get_json("/apis/batch/v1/namespaces/team/jobs/low")
        return (j["spec"].get("suspend") is True and
                "nodeSelector" not in j["spec"]["template"]["spec"] and j)
    lj = wait_for(preempted, 20, what="low job suspended and restored")
    check("startTime" not in lj.get("status", {}),
          "restored job has no startTime: %r" % lj.get("status"))
    hj = wait_for(lambda: running("high"), 20, what="high job running")
    eq(hj["spec"]["template"]["spec"].get("nodeSelector"), {"pool": "spot"})
    wls = s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/team/"
                     "workloads")["items"]
    by = {w["metadata"]["ownerReferences"][0]["name"]: w for w in wls}
    eq(by["high"]["spec"].get("priority"), 1000, "priority resolved")
    eq(by["low"]["spec"].get("priority"), 10)
    conds = {c["type"]: c for c in by["low"]["status"]["conditions"]}
    eq(conds["Evicted"]["status"], "True", "low Workload evicted")
    eq(conds["Evicted"]["reason"], "Preempted")
    eq(conds["QuotaReserved"]["status"], "False", "quota released")

    # Once the high Job finishes, the low one is admitted again.
    wait_for(lambda: running("low"), 30, what="low job re-admitted")
    ctl.stop()


@case("preemption-survives-a-failed-eviction-write", simulate="jobs")
def preemption_eviction_fails(s):
    """The victim's eviction PATCH fails (409): the preemption is not lost.
    The victim must not stay "being evicted" inside the controller, holding
    its quota with no eviction in the API while the preemptor waits for a
    job that runs for minutes; the preemption is decided again and written,
    and the Preempted event is sent once, for the eviction that happened."""
    ctl, running = preemption_setup(s)
    wlpath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"
    wait_for(lambda: running("low"), 20, what="low job running")
    lowwl = [w["metadata"]["name"] for w in s.get_json(wlpath)["items"]
             if w["metadata"]["ownerReferences"][0]["name"] == "low"][0]
    s.faults([{"method": "PATCH", "pathPrefix": "%s/%s/status" % (
        wlpath, lowwl), "code": 409, "count": 1}])
    high = job("team", "high", "2", runtime_ms=800, suspend=True)
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          high)
    eq(code, 201, "create high: %r" % body)
    try:
        wait_for(lambda: running("high"), 20,
                 what="high job running after a failed eviction write")
    finally:
        s.faults([])
    wl = s.get_json("%s/%s" % (wlpath, lowwl))
    conds = {c["type"]: c for c in wl["status"]["conditions"]}
    eq((conds["Evicted"]["status"], conds["Evicted"]["reason"]),
       ("True", "Preempted"), "low Workload evicted")
    evs = [e for e in s.get_json("/api/v1/namespaces/team/events")["items"]
           if e["involvedObject"]["name"] == lowwl and
           e["reason"] == "Preempted"]
    eq([(e.get("series") or {}).get("count", 1) for e in evs], [1],
       "one Preempted event, for the eviction written")
    check("preemption decided again" in open(ctl.log).read(),
          "the failed eviction was noticed")
    ctl.stop()


@case("namespace-label-change-regates", simulate="jobs")
def namespace_relabel(s):
    """A job in a namespace outside managedJobsNamespaceSelector is left
    alone; labelling the namespace into the selector makes the controller
    take the job on without any change to the job itself."""
    setup(s, namespaces=("team",))
    cfg = SEED001_CONFIG.replace(
        "manageJobsWithoutQueueName: true", "manageJobsWithoutQueueName: "
        "false").replace("""  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [kube-system, kueue-system, test]""", """  matchLabels:
    cueue: managed""")
    ctl = Controller(s, config=cfg)
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "late", "1", runtime_ms=300,
                              suspend=True))
    eq(code, 201, "create job: %r" % body)
    wlpath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"
    time.sleep(1.5)
    eq(s.get_json(wlpath)["items"], [], "unmanaged namespace: no Workload")
    code, _, body = s.raw("PATCH", "/api/v1/namespaces/team",
                          {"metadata": {"labels": {"cueue": "managed"}}},
                          headers={"Content-Type":
                                   "application/merge-patch+json"})
    eq(code, 200, "label namespace: %r" % body)

    def succeeded():
        j = s.get_json("/apis/batch/v1/namespaces/team/jobs/late")
        return j.get("status", {}).get("succeeded") == 1
    wait_for(succeeded, 20, what="job admitted after relabel")
    eq(len(s.get_json(wlpath)["items"]), 1, "one Workload")
    ctl.stop()


@case("workload-deleted-stops-and-requeues-job", simulate="jobs")
def workload_deleted(s):
    """Deleting a running job's Workload stops the job (its template
    restored), lets the Workload go, and queues the job again under a new
    Workload that is admitted."""
    setup(s, namespaces=("team",))
    ctl = Controller(s, config=SEED001_CONFIG)
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "victim", "1", runtime_ms=600000,
                              suspend=True))
    eq(code, 201, "create job: %r" % body)
    jpath = "/apis/batch/v1/namespaces/team/jobs/victim"
    wlpath = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"

    def running():
        j = s.get_json(jpath)
        return j["spec"].get("suspend") is False and j
    wait_for(running, 15, what="job running")
    wl = s.get_json(wlpath)["items"][0]
    old_uid = wl["metadata"]["uid"]
    code, _, body = s.raw("DELETE", wlpath + "/" + wl["metadata"]["name"])
    check(code in (200, 202), "delete Workload: %r" % body)

    def requeued():
        items = s.get_json(wlpath)["items"]
        return len(items) == 1 and items[0]["metadata"]["uid"] != old_uid \
            and items[0]
    wait_for(requeued, 15, what="a new Workload for the job")
    wait_for(lambda: (running() or {}).get("status", {}).get("active") == 1,
             15, what="job admitted and running again")
    evs = s.get_json("/api/v1/namespaces/team/events")["items"]
    check(any(e["reason"] == "Stopped" and
              e["message"] == "The workload is deleted" for e in evs),
          "Stopped event: %r" % [(e["reason"], e["message"]) for e in evs])
    ctl.stop()


def readyz(port):
    """(status, body) of the controller's /readyz?verbose."""
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler(
                {})).open("http://127.0.0.1:%d/readyz?verbose" % port,
                          timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:  # not listening yet
        return 0, str(e)


@case("jobset-api-absent-waits-for-it", simulate="jobs")
def jobset_api_absent(s):
    """The JobSet integration is enabled but the cluster does not serve
    jobset.x-k8s.io: as Kueue, the controller becomes ready and manages
    Jobs, says once that it waits for the API, and manages JobSets as
    soon as the CRD is installed."""
    for f in sorted(os.listdir(os.path.join(MANIFESTS, "crds"))):
        if f.startswith("kueue."):
            s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds", f))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))
    s.namespace("team")
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues",
        local_queue("team"))
    eq(code, 201, "LocalQueue: %r" % (body,))
    port = free_port()
    ctl = Controller(s, config=SEED001_CONFIG.replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"' % port))
    wait_for(lambda: readyz(port)[0] == 200, 20,
             what="ready without the JobSet API: %r" % (readyz(port),))
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "j1", "1", suspend=True))
    eq(code, 201, "create j1: %r" % (body,))
    wl = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"

    def admitted(prefix):
        return any(w["metadata"]["name"].startswith(prefix) and any(
            c["type"] == "QuotaReserved" and c["status"] == "True"
            for c in w.get("status", {}).get("conditions", []))
            for w in s.get_json(wl)["items"])
    wait_for(lambda: admitted("job-j1-"), 20, what="j1 admitted")
    eq(open(ctl.log).read().count("jobsets.jobset.x-k8s.io is not served"), 1,
       "one line saying the JobSet integration waits")
    s.apply_crd(os.path.join(MANIFESTS, "crds",
                             "jobset.x-k8s.io_jobsets.yaml"),
                "jobsets.jobset.x-k8s.io")
    code, _, body = s.raw(
        "POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team/jobsets",
        jobset("team", "js1"))
    eq(code, 201, "create js1: %r" % (body,))
    wait_for(lambda: admitted("jobset-js1-"), 60,
             what="js1 admitted once its API is served")
    eq(readyz(port)[0], 200, "still ready")
    ctl.stop()


run_cases()
