# SPDX-License-Identifier: Apache-2.0
"""The job-level Kueue contract (jobframework's ensureOneWorkload and the
job annotations Kueue documents), cueue-controller against
cueue-apiserver simulating the Job controller.

  parallelism-patch-replaces-workload  a running Job's parallelism raised
      beyond its admission: the Job is suspended (templates restored from
      the old Workload) before any other Workload is admitted, the old
      Workload is replaced by one for the new count, and at no observed
      resourceVersion does a running Job exceed what its Workload admitted
      or the Workloads hold more than the quota
  prebuilt-workload-adopted   a Job naming a prebuilt Workload
      (kueue.x-k8s.io/prebuilt-workload-name) adopts it (controller owner,
      job-uid label) and runs on it: one Workload, 1 cpu reserved; a Job
      whose prebuilt Workload does not exist stays suspended, no Workload
      created
  admission-gated-by          a Job created with
      kueue.x-k8s.io/admission-gated-by: its Workload carries the gates,
      is never admitted while they are there (QuotaReserved=False
      AdmissionGated, "Admission is gated by: ..."; a later Job runs),
      follows the removal of one gate, and is admitted once the
      annotation is gone (AdmissionGateCleared; the job's
      UpdatedWorkload events)
  elastic-scale-down          Kueue's sample-scalable-job shape
      (kueue.x-k8s.io/elastic-job: "true", parallelism 3, completions
      100) running; scaled down to 1 it keeps running on the same
      Workload (first slice annotations, counts 1, admission kept) and
      the freed quota admits a waiting Job at once; scaled up again
      beyond the free quota its replacement slice waits while it keeps
      running on the old one, and the Workloads never hold more than
      the quota
  elastic-scale-up            sample-scalable-job scaled 3 -> 5 on a
      5-cpu queue: a new slice (named with the job's generation,
      replacement-for the old one) is admitted with the old slice's
      usage replaced, the old slice is finished WorkloadSliceReplaced
      with Kueue's message, one active Workload of 5, the Job never
      suspended; neither the Workloads (a replaced slice counting
      nothing once its replacement holds quota) nor the ClusterQueue's
      reservation ever exceed 5 cpu
  elastic-scale-up-waits      the same on 4 cpu: the new slice of 5
      waits, the job keeps running on its slice of 3; with a fifth cpu
      the swap completes
  elastic-scale-up-gated      with the webhook and the scheduler stand-in
      (8 cpu of Nodes): an elastic Job gets the elastic-job scheduling
      gate on its pod template, runs 2 pods on a 3-cpu queue, is scaled to
      5: the 3 new pods stay gated while the new slice waits, so at no
      observed instant do more than 3 pods run; with 5 cpu of quota the
      slice is admitted and every pod is ungated and runs
  refused-workload-reported-once  a Workload the API server refuses
      (job-min-parallelism above the count, no webhook): one Warning
      ErrWorkloadCompose on the Job with the API's message, no
      CreatedWorkload, the create retried with back-off (at most 4
      attempts in ~8 s)
  requeue-order-after-preemption  low-a, low-b running, low-c, low-d
      waiting; a high-priority Job preempts low-a and low-b and
      finishes: low-a and low-b run again before low-c and low-d (Kueue
      queues a preempted Workload by its creation time, not by its
      eviction's)

Every case follows Jobs and Workloads with cuetest.observe.Observer and
checks the merged history in resourceVersion order (History)."""
import os
import threading
import time

from cuetest import (CONTROLLER_CONFIG, Controller, Failure, case, check,
                     eq, flavor_and_queue, run_cases, wait_for)
from cuetest.kobj import cond, is_true, milli
from cuetest.frameworks import PodWatch, webhooks
from cuetest.observe import Observer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

CONFIG = CONTROLLER_CONFIG + """manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
"""

NS = "team"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads" % NS
EVENTS = "/api/v1/namespaces/%s/events" % NS
MERGE = {"Content-Type": "application/merge-patch+json"}


def job(name, cpu="1", parallelism=1, runtime_ms=600000, annotations=None,
        labels=None):
    """A suspended Job (no mutating webhook here) of `parallelism` pods
    asking `cpu` each, running runtime_ms once started."""
    ann = {"cueue.dev/sim-runtime-ms": str(runtime_ms)}
    ann.update(annotations or {})
    lab = {"kueue.x-k8s.io/queue-name": "default"}
    lab.update(labels or {})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "labels": lab,
                         "annotations": ann},
            "spec": {"parallelism": parallelism, "suspend": True,
                     "template": {"spec": {
                         "containers": [{
                             "name": "c", "image": "busybox",
                             "resources": {"requests": {"cpu": cpu}}}],
                         "restartPolicy": "Never"}}}}


def setup(s, cpu):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", flavor_and_queue(cpu)))
    s.namespace(NS)
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues"
        % NS, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"name": "default", "namespace": NS},
               "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)


def create(s, obj, path=JOBS):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "create %s: %r" % (obj["metadata"]["name"], body))
    return body


def owner(wl):
    for r in wl["metadata"].get("ownerReferences") or []:
        if r.get("controller"):
            return r.get("name")
    return None


def wl_usage(wl):
    """Milli-cpu a Workload holds: QuotaReserved and not Finished; an
    assignment counts for at most the pod set's spec count, as Kueue's
    totalRequestsFromAdmission scales it (an elastic Workload scaled down
    keeps its admission)."""
    if not is_true(wl, "QuotaReserved") or is_true(wl, "Finished"):
        return 0
    adm = (wl.get("status") or {}).get("admission") or {}
    spec = {p.get("name", "main"): p.get("count", 1)
            for p in wl["spec"].get("podSets", [])}
    total = 0
    for a in adm.get("podSetAssignments", []):
        use = milli(a.get("resourceUsage", {}).get("cpu", "0"))
        n = a.get("count", spec.get(a["name"], 1))
        now = min(n, spec.get(a["name"], n))
        total += use * now // n if n else 0
    return total


def replaced_slices(wls):
    """Names of the Workload slices whose replacement slice holds quota:
    Kueue admits the replacement with the old slice's usage replaced
    (not added), and the old one is finished right after; until then
    it holds nothing more."""
    out = set()
    for w in wls.values():
        ann = w["metadata"].get("annotations") or {}
        r = ann.get("kueue.x-k8s.io/workload-slice-replacement-for", "")
        if r.startswith(NS + "/") and wl_usage(w) > 0:
            out.add(r[len(NS) + 1:])
    return out


def wl_admitted_count(wl):
    """Pods the Workload's admission allows (0 without quota)."""
    if not is_true(wl, "QuotaReserved") or is_true(wl, "Finished"):
        return 0
    adm = (wl.get("status") or {}).get("admission") or {}
    return sum(a.get("count", 0) for a in adm.get("podSetAssignments", []))


def job_pods(j):
    """Pods an unsuspended, unfinished Job may run (its parallelism)."""
    if j is None or j["spec"].get("suspend") or is_true(j, "Complete") or \
            is_true(j, "Failed"):
        return 0
    return j["spec"].get("parallelism", 1)


class History:
    """Jobs and Workloads of NS as observed, every change recorded with
    its resourceVersion; check() replays them in resourceVersion order
    (one counter for every kind on cueue-apiserver)."""

    def __init__(self, s):
        self.lock = threading.Lock()
        self.log = []  # (rv, kind, name, new object or None)
        self.jobs = Observer(s, JOBS, self._rec("job"))
        self.wls = Observer(s, WLS, self._rec("wl"))

    def _rec(self, kind):
        def f(name, old, new, rv, relisting):
            o = new or old
            r = int((o or {}).get("metadata", {}).get("resourceVersion") or
                    rv or 0)
            if new is None and rv:
                r = int(rv)
            with self.lock:
                self.log.append((r, kind, name, new))
        return f

    def stop(self):
        self.jobs.stop()
        self.wls.stop()

    def replay(self):
        """[(rv, jobs, wls)] states after each change, in rv order."""
        with self.lock:
            log = sorted(self.log, key=lambda e: e[0])
        jobs, wls, out = {}, {}, []
        for rv, kind, name, obj in log:
            d = jobs if kind == "job" else wls
            if obj is None:
                d.pop(name, None)
            else:
                d[name] = obj
            out.append((rv, dict(jobs), dict(wls)))
        return out

    def check(self, quota_milli, patched=()):
        """At no state do the Workloads hold more than quota_milli; at the
        state where any Workload gets QuotaReserved=True, no running Job
        runs more pods than its Workload admitted (`patched`: Jobs whose
        spec the test changed; a running Job that was never changed is
        checked always)."""
        prev_reserved = set()
        for rv, jobs, wls in self.replay():
            gone = replaced_slices(wls)
            used = sum(wl_usage(w) for n, w in wls.items() if n not in gone)
            check(used <= quota_milli, "rv %d: Workloads hold %dm > %dm" %
                  (rv, used, quota_milli))
            reserved = {n for n, w in wls.items() if wl_usage(w) > 0}
            newly = reserved - prev_reserved
            prev_reserved = reserved
            by_job = {}
            for n, w in wls.items():
                if n in gone:
                    continue
                by_job[owner(w)] = by_job.get(owner(w), 0) + \
                    wl_admitted_count(w)
            for n, j in jobs.items():
                pods = job_pods(j)
                if pods == 0 or (n in patched and not newly):
                    continue
                check(pods <= by_job.get(n, 0),
                      "rv %d: job %s runs %d pods, its Workloads admit %d"
                      " (admitted now: %s)" % (rv, n, pods,
                                               by_job.get(n, 0),
                                               sorted(newly)))


def events_about(s, name, reason=None):
    return [e for e in s.get_json(EVENTS)["items"]
            if e["involvedObject"]["name"] == name and
            (reason is None or e["reason"] == reason)]


def settled(f, want, what):
    """f() once it equals want, or its last value after 10 s: events are
    posted after the write they tell of is answered, so a status seen
    first does not mean its event is in yet."""
    got = [None]

    def done():
        got[0] = f()
        return got[0] == want
    try:
        wait_for(done, 10, what=what)
    except Failure:
        pass
    return got[0]


def event_messages(s, name, reason, want):
    return settled(lambda: [e["message"]
                            for e in events_about(s, name, reason)],
                   want, "%s events about %s" % (reason, name))


def wls_of(s, job_name):
    return [w for w in s.get_json(WLS)["items"] if owner(w) == job_name]


def get_job(s, name):
    return s.get_json(JOBS + "/" + name)


def running(s, name):
    j = get_job(s, name)
    return not j["spec"].get("suspend") and \
        j.get("status", {}).get("active", 0) > 0


@case("parallelism-patch-replaces-workload", simulate="jobs")
def parallelism_patch(s):
    setup(s, 4)
    h = History(s)
    ctl = Controller(s, config=CONFIG)
    create(s, job("par-1", parallelism=2))
    wait_for(lambda: running(s, "par-1"), 20, what="par-1 running")
    old = wls_of(s, "par-1")
    eq(len(old), 1, "one Workload for par-1")
    old_uid = old[0]["metadata"]["uid"]
    # The user raises parallelism on the running Job (6 cpu > 4).
    code, _, body = s.raw("PATCH", JOBS + "/par-1",
                          {"spec": {"parallelism": 6}}, MERGE)
    eq(code, 200, "patch parallelism: %r" % body)
    create(s, job("par-2", parallelism=2))
    # par-1 is suspended; its Workload is replaced by one for 6 pods,
    # which cannot fit and stays pending; par-2 runs in the freed quota.
    wait_for(lambda: get_job(s, "par-1")["spec"].get("suspend"), 20,
             what="par-1 suspended")

    def replaced():
        w = wls_of(s, "par-1")
        return len(w) == 1 and w[0]["metadata"]["uid"] != old_uid and \
            w[0]["spec"]["podSets"][0]["count"] == 6 and w[0]

    new = wait_for(replaced, 20, what="par-1's Workload replaced (6 pods)")
    wait_for(lambda: running(s, "par-2"), 20, what="par-2 running")
    c = wait_for(lambda: cond(wls_of(s, "par-1")[0], "QuotaReserved"), 20,
                 what="par-1's new Workload pending")
    eq(c["status"], "False", "par-1's new Workload holds no quota")
    check(not is_true(new, "QuotaReserved"), "new Workload not admitted")
    # Kueue's events on the job.
    st = [e for e in events_about(s, "par-1", "Stopped")
          if "No matching Workload" in e["message"]]
    eq(len(st), 1, "one Stopped (NoMatchingWorkload) event: %r" %
       [e["message"] for e in events_about(s, "par-1", "Stopped")])
    eq(st[0]["message"], "No matching Workload; restoring pod templates "
       "according to existent Workload")
    dl = events_about(s, "par-1", "DeletedWorkload")
    eq([e["message"] for e in dl], ["Deleted not matching Workload: %s/%s"
                                    % (NS, old[0]["metadata"]["name"])])
    # The replacement has the same name: one Event, counted twice.
    eq([(e.get("series") or {}).get("count", 1)
        for e in events_about(s, "par-1", "CreatedWorkload")], [2],
       "CreatedWorkload twice (first and replacement)")
    h.stop()
    h.check(4000, patched=("par-1",))
    ctl.stop()


def cq_reserved(s):
    """Milli-cpu ClusterQueue cq reports reserved."""
    st = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq").get(
        "status", {})
    return sum(milli(r.get("total", "0"))
               for f in st.get("flavorsReservation", [])
               for r in f.get("resources", []) if r["name"] == "cpu")


def prebuilt_workload(name, cpu="1", count=1):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"queueName": "default", "podSets": [{
                "name": "main", "count": count, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}],
                    "restartPolicy": "Never"}}}]}}


@case("prebuilt-workload-adopted", simulate="jobs")
def prebuilt(s):
    setup(s, 4)
    h = History(s)
    ctl = Controller(s, config=CONFIG)
    create(s, prebuilt_workload("pre-1"), WLS)
    pre = {"kueue.x-k8s.io/prebuilt-workload-name": "pre-1"}
    j = create(s, job("pb-1", annotations=pre))
    wait_for(lambda: running(s, "pb-1"), 20, what="pb-1 running")
    wls = s.get_json(WLS)["items"]
    eq([w["metadata"]["name"] for w in wls], ["pre-1"], "one Workload")
    refs = wls[0]["metadata"].get("ownerReferences") or []
    eq([(r["kind"], r["name"], r["uid"], r.get("controller"))
        for r in refs], [("Job", "pb-1", j["metadata"]["uid"], True)],
       "pre-1 adopted by pb-1")
    eq(wls[0]["metadata"]["labels"].get("kueue.x-k8s.io/job-uid"),
       j["metadata"]["uid"], "job-uid label")
    wait_for(lambda: cq_reserved(s) == 1000, 10, what="cq reserves 1 cpu")
    # A Job whose prebuilt Workload is missing waits, suspended.
    create(s, job("pb-2", annotations={
        "kueue.x-k8s.io/prebuilt-workload-name": "missing"}))
    create(s, job("marker"))
    wait_for(lambda: running(s, "marker"), 20, what="a later job runs")
    eq(sorted(w["metadata"]["name"] for w in s.get_json(WLS)["items"]
              if owner(w) != "marker"), ["pre-1"], "no Workload for pb-2")
    check(get_job(s, "pb-2")["spec"].get("suspend"), "pb-2 suspended")
    h.stop()
    h.check(4000)
    ctl.stop()


GATE = "kueue.x-k8s.io/admission-gated-by"


@case("admission-gated-by", simulate="jobs")
def admission_gated_by(s):
    setup(s, 4)
    h = History(s)
    ctl = Controller(s, config=CONFIG)
    create(s, job("g-1", annotations={GATE: "a.example.com/one,"
                                            "b.example.com/two"}))
    create(s, job("marker"))
    wait_for(lambda: running(s, "marker"), 20, what="a later job runs")

    def gated(msg):
        def f():
            w = wls_of(s, "g-1")
            c = w and cond(w[0], "QuotaReserved")
            return c and c["reason"] == "AdmissionGated" and \
                c["message"] == msg and w[0]
        return f

    w = wait_for(gated("Admission is gated by: a.example.com/one,"
                       "b.example.com/two"), 20, what="g-1 gated")
    eq(w["metadata"]["annotations"].get(GATE),
       "a.example.com/one,b.example.com/two", "the Workload's gates")
    wname = w["metadata"]["name"]
    want = ["Workload admission is gated by: a.example.com/one,"
            "b.example.com/two"]
    eq(event_messages(s, wname, "AdmissionGated", want), want,
       "AdmissionGated event")
    check(get_job(s, "g-1")["spec"].get("suspend"), "g-1 suspended")
    # One gate removed: the Workload follows, still gated.
    code, _, body = s.raw("PATCH", JOBS + "/g-1", {"metadata": {
        "annotations": {GATE: "b.example.com/two"}}}, MERGE)
    eq(code, 200, "remove one gate: %r" % body)
    w = wait_for(gated("Admission is gated by: b.example.com/two"), 20,
                 what="g-1 gated by b only")
    eq(w["metadata"]["annotations"].get(GATE), "b.example.com/two")
    check(get_job(s, "g-1")["spec"].get("suspend"), "g-1 still suspended")
    # Every gate removed: admitted and running.
    code, _, body = s.raw("PATCH", JOBS + "/g-1", {"metadata": {
        "annotations": {GATE: None}}}, MERGE)
    eq(code, 200, "remove the annotation: %r" % body)
    opened = int(body["metadata"]["resourceVersion"])
    wait_for(lambda: running(s, "g-1"), 20, what="g-1 running")
    w = wls_of(s, "g-1")[0]
    check(GATE not in (w["metadata"].get("annotations") or {}),
          "the Workload's annotation is gone")
    want = ["Admission gate cleared, workload is now admissible"]
    eq(event_messages(s, wname, "AdmissionGateCleared", want), want,
       "AdmissionGateCleared event")
    # Two updates of the Workload's gates: one event series, as Kueue's
    # recorder keys a series without the message (the first one kept).
    want = [('Updated workload AdmissionGatedBy to "b.example.com/two"', 2)]
    eq(settled(lambda: [(e["message"], (e.get("series") or {}).get("count")
                         or e.get("count"))
                        for e in events_about(s, "g-1", "UpdatedWorkload")],
               want, "UpdatedWorkload series"), want)
    h.stop()
    for rv, jobs, wls in h.replay():
        for n, wl in wls.items():
            if owner(wl) == "g-1" and is_true(wl, "QuotaReserved"):
                check(rv > opened, "rv %d: g-1's Workload reserved quota "
                      "before its gates were removed (rv %d)" % (rv, opened))
    h.check(4000)
    ctl.stop()


def elastic_job(name, parallelism):
    j = job(name, parallelism=parallelism,
            annotations={"kueue.x-k8s.io/elastic-job": "true"})
    j["spec"]["completions"] = 100
    return j


@case("elastic-scale-down", simulate="jobs")
def elastic_scale_down(s):
    setup(s, 4)
    h = History(s)
    ctl = Controller(s, config=CONFIG)
    create(s, elastic_job("el-1", 3))
    wait_for(lambda: running(s, "el-1"), 20, what="el-1 running")
    w = wls_of(s, "el-1")
    eq(len(w), 1, "one Workload")
    uid, wname = w[0]["metadata"]["uid"], w[0]["metadata"]["name"]
    ann = w[0]["metadata"].get("annotations") or {}
    eq((ann.get("kueue.x-k8s.io/elastic-job"),
        ann.get("kueue.x-k8s.io/workload-slice-name")), ("true", wname),
       "first slice annotations")
    create(s, job("other", parallelism=2))
    wait_for(lambda: wls_of(s, "other") and
             cond(wls_of(s, "other")[0], "QuotaReserved"), 20,
             what="other's Workload pending")
    check(not running(s, "other"), "other waits (3 + 2 > 4)")
    code, _, body = s.raw("PATCH", JOBS + "/el-1",
                          {"spec": {"parallelism": 1}}, MERGE)
    eq(code, 200, "scale down: %r" % body)
    wait_for(lambda: running(s, "other"), 20, what="other admitted")
    w = wls_of(s, "el-1")
    eq([(x["metadata"]["uid"], x["spec"]["podSets"][0]["count"])
        for x in w], [(uid, 1)], "same Workload, count 1")
    check(is_true(w[0], "QuotaReserved"), "el-1 keeps its admission")
    check(running(s, "el-1"), "el-1 never stopped")
    check(not [e for e in events_about(s, "el-1", "Stopped")],
          "no Stopped event on el-1")
    wait_for(lambda: cq_reserved(s) == 3000, 10, what="cq reserves 1 + 2")
    # Scaled up beyond the free quota: a replacement slice for 3 waits
    # (3 replacing 1 next to other's 2 is 5 > 4) and el-1 keeps running
    # on its old slice, never beyond what is held.
    code, _, body = s.raw("PATCH", JOBS + "/el-1",
                          {"spec": {"parallelism": 3}}, MERGE)
    eq(code, 200, "scale up: %r" % body)
    new = wait_for(lambda: [x for x in wls_of(s, "el-1")
                            if x["metadata"]["uid"] != uid and
                            cond(x, "QuotaReserved")], 20,
                   what="el-1's replacement slice pending")[0]
    eq((new["spec"]["podSets"][0]["count"],
        is_true(new, "QuotaReserved")), (3, False), "the new slice waits")
    check(running(s, "el-1"), "el-1 keeps running on its old slice")
    check(is_true([x for x in wls_of(s, "el-1")
                   if x["metadata"]["uid"] == uid][0], "QuotaReserved"),
          "the old slice keeps its quota")
    h.stop()
    h.check(4000, patched=("el-1",))
    ctl.stop()


def cq_observer(s, seen):
    """Observe ClusterQueue cq's status.flavorsReservation cpu into seen
    (one entry per observed change)."""
    def f(name, old, new, rv, relisting):
        if new is not None and name == "cq":
            seen.append(sum(
                milli(r.get("total", "0"))
                for fl in (new.get("status") or {}).get(
                    "flavorsReservation", [])
                for r in fl.get("resources", []) if r["name"] == "cpu"))
    return Observer(s, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", f)


def scale_up_to_5(s, name):
    """Kueue's sample-scalable-job (elastic, parallelism 3) running, then
    scaled to 5; its first slice."""
    create(s, elastic_job(name, 3))
    wait_for(lambda: running(s, name), 20, what="%s running" % name)
    w = wls_of(s, name)
    eq(len(w), 1, "one Workload")
    code, _, body = s.raw("PATCH", JOBS + "/" + name,
                          {"spec": {"parallelism": 5}}, MERGE)
    eq(code, 200, "scale up: %r" % body)
    return w[0]


def active(s, name):
    return [x for x in wls_of(s, name) if not is_true(x, "Finished")]


@case("elastic-scale-up", simulate="jobs")
def elastic_scale_up(s):
    setup(s, 5)
    h = History(s)
    reserved = []
    cqo = cq_observer(s, reserved)
    ctl = Controller(s, config=CONFIG)
    old = scale_up_to_5(s, "up-1")
    oname = old["metadata"]["name"]
    # 5 replacing 3 fits the 5 cpu (3 + 5 would not): one active
    # Workload of count 5, the old slice finished as replaced.
    new = wait_for(lambda: [x for x in active(s, "up-1")
                            if is_true(x, "QuotaReserved") and
                            x["spec"]["podSets"][0]["count"] == 5 and
                            len(active(s, "up-1")) == 1], 30,
                   what="up-1 on one slice of 5")[0]
    check(new["metadata"]["name"] != oname and
          new["metadata"]["name"].startswith("job-up-1-"),
          "a new slice, named with the job's generation: %s"
          % new["metadata"]["name"])
    ann = new["metadata"].get("annotations") or {}
    eq((ann.get("kueue.x-k8s.io/workload-slice-replacement-for"),
        ann.get("kueue.x-k8s.io/workload-slice-name"),
        ann.get("kueue.x-k8s.io/elastic-job")),
       (NS + "/" + oname, oname, "true"), "replacement slice annotations")
    o = [x for x in wls_of(s, "up-1") if x["metadata"]["name"] == oname]
    fin = cond(o[0], "Finished") if o else None
    check(fin is not None, "old slice kept, finished")
    eq((fin["status"], fin["reason"]), ("True", "WorkloadSliceReplaced"),
       "old slice finished as replaced")
    eq(fin["message"], "Replaced to accommodate a workload (UID: %s, "
       "JobUID: %s) due to workload slice aggregation"
       % (new["metadata"]["uid"], get_job(s, "up-1")["metadata"]["uid"]),
       "Kueue's message")
    j = get_job(s, "up-1")
    eq((j["spec"].get("suspend"), j["spec"]["parallelism"]), (False, 5),
       "up-1 runs at 5")
    wait_for(lambda: cq_reserved(s) == 5000, 10, what="cq reserves 5")
    h.stop()
    cqo.stop()
    for rv, jobs, wls in h.replay():
        jb = jobs.get("up-1")
        if jb is not None and jb.get("status", {}).get("startTime"):
            check(not jb["spec"].get("suspend"),
                  "rv %d: up-1 suspended during the swap" % rv)
        check(len([w for w in wls.values() if owner(w) == "up-1"]) <= 2,
              "rv %d: at most two slices" % rv)
    check(reserved and max(reserved) <= 5000,
          "cq never reserves beyond 5 cpu: %r" % reserved)
    h.check(5000, patched=("up-1",))
    ctl.stop()


@case("elastic-scale-up-waits", simulate="jobs")
def elastic_scale_up_waits(s):
    setup(s, 4)
    h = History(s)
    reserved = []
    cqo = cq_observer(s, reserved)
    ctl = Controller(s, config=CONFIG)
    old = scale_up_to_5(s, "up-2")
    # 5 > 4: the new slice waits, the job keeps running at 3 on the old
    # slice (Kueue gates the new pods; never suspended).
    new = wait_for(lambda: [x for x in active(s, "up-2")
                            if x["metadata"]["uid"] != old["metadata"][
                                "uid"] and cond(x, "QuotaReserved")], 20,
                   what="up-2's new slice pending")[0]
    eq((new["spec"]["podSets"][0]["count"],
        cond(new, "QuotaReserved")["status"]), (5, "False"),
       "new slice of 5 pending")
    time.sleep(2)
    eq(sorted((x["spec"]["podSets"][0]["count"],
               is_true(x, "QuotaReserved")) for x in active(s, "up-2")),
       [(3, True), (5, False)], "two slices: old admitted, new waiting")
    check(running(s, "up-2"), "up-2 keeps running on its old slice")
    check(not events_about(s, "up-2", "Stopped"), "never stopped")
    # More quota: the new slice is admitted, the old one retired.
    set_quota(s, 5)
    wait_for(lambda: [x["spec"]["podSets"][0]["count"]
                      for x in active(s, "up-2")
                      if is_true(x, "QuotaReserved")] == [5] and
             len(active(s, "up-2")) == 1, 30, what="up-2 on one slice of 5")
    h.stop()
    cqo.stop()
    check(reserved and max(reserved) <= 5000,
          "cq never reserves beyond its quota: %r" % reserved)
    h.check(5000, patched=("up-2",))
    ctl.stop()


def pods_of(s, name):
    code, _, body = s.raw("GET", "/api/v1/namespaces/%s/pods?labelSelector="
                          "batch.kubernetes.io/job-name%%3D%s" % (NS, name))
    eq(code, 200, "pods: %r" % body)
    return [p for p in body["items"]
            if not p["metadata"].get("deletionTimestamp") and
            p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]


def gated(p):
    return [g["name"] for g in p["spec"].get("schedulingGates") or []]


def set_quota(s, cpu):
    code, _, body = s.raw(
        "PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq",
        {"spec": {"resourceGroups": [{
            "coveredResources": ["cpu"], "flavors": [{
                "name": "default-flavor", "resources": [{
                    "name": "cpu", "nominalQuota": cpu}]}]}]}}, MERGE)
    eq(code, 200, "quota %s: %r" % (cpu, body))


@case("elastic-scale-up-gated", simulate="jobs,scheduler")
def elastic_scale_up_gated(s):
    setup(s, 3)
    alloc = {"cpu": "8", "memory": "64Gi", "pods": "110"}
    code, _, body = s.raw("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "spec": {}, "status": {"allocatable": alloc, "capacity": alloc}})
    eq(code, 201, "Node: %r" % body)
    pw = PodWatch(s, NS)
    ctl = Controller(s, config=CONFIG + webhooks(s))
    wait_for(lambda: "informers synced" in open(ctl.log).read(), 30,
             what="the controller's informers synced")
    for _ in range(50):  # the webhook server may still be starting
        code, _, body = s.raw("POST", JOBS, elastic_job("eg-1", 2))
        if code == 201:
            break
        time.sleep(0.2)
    eq(code, 201, "create eg-1: %r" % body)
    eq(gated(body["spec"]["template"]), ["kueue.x-k8s.io/elastic-job"],
       "the webhook gates an elastic Job's pods")
    wait_for(lambda: len([p for p in pods_of(s, "eg-1")
                          if p["status"].get("phase") == "Running"]) == 2,
             30, what="eg-1's 2 pods running")
    code, _, body = s.raw("PATCH", JOBS + "/eg-1",
                          {"spec": {"parallelism": 5}}, MERGE)
    eq(code, 200, "scale up: %r" % body)
    wait_for(lambda: [x for x in active(s, "eg-1")
                      if cond(x, "QuotaReserved") and
                      not is_true(x, "QuotaReserved")], 20,
             what="eg-1's new slice pending")
    wait_for(lambda: len(pods_of(s, "eg-1")) == 5, 20,
             what="eg-1's 5 pods created")
    time.sleep(2)
    pods = pods_of(s, "eg-1")
    eq(sorted(len(gated(p)) for p in pods), [0, 0, 1, 1, 1],
       "3 new pods gated while the new slice waits: %r"
       % [(p["metadata"]["name"], gated(p)) for p in pods])
    check(pw.peak <= 3000, "at most 3 pods ever ran: peak %d m" % pw.peak)
    # More quota: the new slice is admitted, every pod runs.
    set_quota(s, 5)
    wait_for(lambda: len([p for p in pods_of(s, "eg-1")
                          if p["status"].get("phase") == "Running" and
                          not gated(p)]) == 5, 30,
             what="eg-1's 5 pods ungated and running")
    eq([x["spec"]["podSets"][0]["count"] for x in active(s, "eg-1")],
       [5], "one active slice of 5")
    check(pw.done() <= 5000, "never beyond 5 pods")
    ctl.stop()


@case("refused-workload-reported-once", simulate="jobs")
def refused_workload(s):
    setup(s, 4)
    ctl = Controller(s, config=CONFIG)
    mark = s.log_mark()
    # No webhook here: a job-min-parallelism the webhook would deny makes
    # a Workload the API server refuses (minCount above count).
    create(s, job("bad-1", parallelism=5,
                  annotations={"kueue.x-k8s.io/job-min-parallelism": "50"}))
    ev = wait_for(lambda: events_about(s, "bad-1", "ErrWorkloadCompose"), 20,
                  what="the refusal reported on bad-1")
    time.sleep(7)
    ev = events_about(s, "bad-1", "ErrWorkloadCompose")
    eq([(e["type"], (e.get("series") or {}).get("count") or
         e.get("count") or 1) for e in ev], [("Warning", 1)],
       "one Warning, once")
    check("minCount" in ev[0]["message"] or "Invalid" in ev[0]["message"],
          "the API's message: %r" % ev[0]["message"])
    eq(events_about(s, "bad-1", "CreatedWorkload"), [],
       "no CreatedWorkload for a Workload never created")
    eq(wls_of(s, "bad-1"), [], "no Workload")
    posts = s.requests(mark, verb="POST", prefix=WLS)
    # Back-off: 2 s, 4 s, 8 s ... between attempts, not a hot loop.
    check(1 <= len(posts) <= 4, "%d creates in ~8 s" % len(posts))
    check(get_job(s, "bad-1")["spec"].get("suspend"), "bad-1 suspended")
    ctl.stop()


PREEMPTING_CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
"""


@case("requeue-order-after-preemption", simulate="jobs")
def requeue_order(s):
    setup(s, 2)
    s.kubectl("apply", "-f", s.file("preempting.yaml", PREEMPTING_CQ))
    h = History(s)
    ctl = Controller(s, config=CONFIG)
    low = {"kueue.x-k8s.io/priority-class": "low"}
    # creationTimestamp has one-second resolution: one second apart, so
    # that the creation order is the queue order.
    for n in ("low-a", "low-b"):
        create(s, job(n, labels=low))
        wait_for(lambda: running(s, n), 20, what="%s running" % n)
        time.sleep(1.1)
    for n in ("low-c", "low-d"):
        create(s, job(n, labels=low))
        wait_for(lambda: wls_of(s, n), 20, what="%s's Workload" % n)
        time.sleep(1.1)
    create(s, job("high", cpu="2", runtime_ms=3000,
                  labels={"kueue.x-k8s.io/priority-class": "high"}))
    wait_for(lambda: running(s, "high"), 30, what="high running")
    wait_for(lambda: is_true(get_job(s, "high"), "Complete"), 30,
             what="high complete")

    def two_running():
        r = sorted(n for n in ("low-a", "low-b", "low-c", "low-d")
                   if running(s, n))
        return len(r) == 2 and r
    eq(wait_for(two_running, 30, what="two low jobs running again"),
       ["low-a", "low-b"], "the preempted (older) Workloads first")
    h.stop()
    h.check(2000)
    ctl.stop()


run_cases()
