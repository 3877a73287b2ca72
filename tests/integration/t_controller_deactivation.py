# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: Workloads that stop running without finishing, end to
end with the Job simulator - deactivation (spec.active=false), a
ClusterQueue's or LocalQueue's stopPolicy (Hold, HoldAndDrain) and
spec.maximumExecutionTimeSeconds.

Kueue evicts such a Workload (Evicted=True with its reason), stops its
job, and gives its quota back only once the job is no longer active: the
quota check is made from the watch history of the Jobs (every observed
state, not only the end), counting a job as running while it is
unsuspended or still has active pods."""
import threading
import urllib.request

from cuetest import CONTROLLER_CONFIG, Controller, case, check, eq, \
    free_port, queues_setup, run_cases, wait_for
from cuetest.kobj import cond, is_true
from cuetest.observe import Observer

NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
MERGE = {"Content-Type": "application/merge-patch+json"}

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def setup(s, cpu=2):
    queues_setup(s, cpu, ns=NS)


def create_job(s, name, runtime_ms=600000, labels=None):
    lab = {"kueue.x-k8s.io/queue-name": "lq"}
    lab.update(labels or {})
    code, _, body = s.raw("POST", JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "labels": lab,
                     "annotations": {"cueue.dev/sim-runtime-ms":
                                     str(runtime_ms)}},
        "spec": {"parallelism": 1, "suspend": True,
                 "template": {"spec": {
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {
                                         "cpu": "1"}}}],
                     "restartPolicy": "Never"}}}})
    eq(code, 201, "create %s: %r" % (name, body))


def running(job):
    """Unsuspended, or its pods not gone yet; and not finished."""
    if job is None:
        return False
    if is_true(job, "Complete") or is_true(job, "Failed"):
        return False
    return not job["spec"].get("suspend") or \
        job.get("status", {}).get("active", 0) > 0


class Jobs:
    """The Jobs' watch history: every observed state is checked against
    the quota (1 cpu per job)."""

    def __init__(self, s, quota):
        self.quota = quota
        self.running = set()
        self.max_running = 0
        self.over = []
        self.starts = {}  # name -> times seen going suspended -> running
        self.seq = []  # (event, name) in watch order
        self.lock = threading.Lock()
        self.obs = Observer(s, JOBS, self._job)

    def _job(self, name, old, new, rv, relisting):
        if old is not None and new is not None and \
                old["spec"].get("suspend") and \
                not new["spec"].get("suspend"):
            self.starts[name] = self.starts.get(name, 0) + 1
            self.seq.append(("start", name))
        if old is not None and new is not None and \
                not old["spec"].get("suspend") and \
                new["spec"].get("suspend"):
            self.seq.append(("stop", name))
        if running(new):
            self.running.add(name)
        else:
            self.running.discard(name)
        self.max_running = max(self.max_running, len(self.running))
        if len(self.running) > self.quota:
            self.over.append((rv, sorted(self.running)))

    def get(self, name):
        return self.obs.snapshot().get(name)

    def stop(self):
        self.obs.stop()
        check(not self.over, "running jobs over the quota of %d cpu: %r"
              % (self.quota, self.over))


def wl_of(s, job):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == job:
            return w
    return None


def wl_name(s, job):
    w = wait_for(lambda: wl_of(s, job), 15, what="Workload of %s" % job)
    return w["metadata"]["name"]


def patch(s, path, body):
    code, _, resp = s.raw("PATCH", path, body, headers=MERGE)
    eq(code, 200, "PATCH %s: %r" % (path, resp))


def evicted(s, job, reason, message=None):
    """The job's Workload is Evicted with reason (and message), its quota
    released, and the job suspended with no active pods."""
    def done():
        w = wl_of(s, job)
        c = cond(w, "Evicted") or {}
        j = s.get_json(JOBS + "/" + job)
        if c.get("status") != "True" or c.get("reason") != reason:
            return None
        if is_true(w, "QuotaReserved") or w["status"].get("admission"):
            return None
        if not j["spec"].get("suspend") or \
                j.get("status", {}).get("active", 0) > 0:
            return None
        return w
    w = wait_for(done, 20, what="%s evicted (%s), its job stopped"
                 % (job, reason))
    if message is not None:
        eq(cond(w, "Evicted").get("message"), message, "Evicted message")
    req = cond(w, "Requeued") or {}
    eq((req.get("status"), req.get("reason")), ("False", reason),
       "Requeued after the eviction")
    return w


def job_running(s, name):
    j = s.get_json(JOBS + "/" + name)
    return j["spec"].get("suspend") is False and \
        j.get("status", {}).get("active", 0) > 0


@case("deactivate-admitted-never-over-quota", simulate="jobs")
def deactivate(s):
    """Three 1-cpu Jobs on a 2-cpu ClusterQueue: a and b run, c waits.
    Deactivating a's Workload evicts it (Deactivated) and stops a; c is
    admitted only after a's pods are gone; at no observed state do more
    than 2 jobs run. Reactivation requeues a (Requeued=True,
    Reactivated); it runs once b is gone."""
    setup(s)
    ctl = Controller(s, config=CONFIG)
    jobs = Jobs(s, 2)
    for n in ("a", "b"):
        create_job(s, n)
    wait_for(lambda: job_running(s, "a") and job_running(s, "b"), 20,
             what="a and b running")
    create_job(s, "c")
    wait_for(lambda: (cond(wl_of(s, "c"), "QuotaReserved") or {}).get(
        "status") == "False", 15, what="c pending")
    wa = wl_name(s, "a")
    patch(s, WLS + "/" + wa, {"spec": {"active": False}})
    wait_for(lambda: job_running(s, "c"), 20, what="c running after a")
    check(not jobs.over, "running jobs over the quota of 2 cpu: %r"
          % jobs.over)
    w = evicted(s, "a", "Deactivated", "The workload is deactivated")
    eq(w["spec"].get("active"), False, "a stays inactive")
    seq = jobs.seq
    check(("stop", "a") in seq and ("start", "c") in seq and
          seq.index(("stop", "a")) < seq.index(("start", "c")),
          "c starts only after a is stopped: %r" % seq)
    check(not is_true(wl_of(s, "a"), "QuotaReserved"),
          "an inactive Workload is not admitted again")
    # Reactivation: requeued, pending while b and c use the quota.
    patch(s, WLS + "/" + wa, {"spec": {"active": True}})
    w = wait_for(lambda: (lambda w: w if is_true(w, "Requeued") else None)(
        wl_of(s, "a")), 15, what="a requeued")
    eq(cond(w, "Requeued").get("reason"), "Reactivated", "Requeued reason")
    code, _, body = s.raw("DELETE", JOBS + "/b?propagationPolicy=Background")
    eq(code, 200, "delete b: %r" % body)
    wait_for(lambda: job_running(s, "a"), 20, what="a running again")
    jobs.stop()
    ctl.stop()


def set_stop(s, path, policy):
    patch(s, path, {"spec": {"stopPolicy": policy}})


def queue_stopped(s, path):
    c = cond(s.get_json(path), "Active") or {}
    return c.get("status") == "False" and c.get("reason") == "Stopped"


def drain_case(s, qpath, reason, message, restarted):
    """Hold keeps a and b running (c, created meanwhile, waits);
    HoldAndDrain evicts a and b (reason) and suspends them; releasing
    the stop requeues them (Requeued=True, restarted) and they run."""
    setup(s)
    ctl = Controller(s, config=CONFIG)
    jobs = Jobs(s, 2)
    for n in ("a", "b"):
        create_job(s, n)
    wait_for(lambda: job_running(s, "a") and job_running(s, "b"), 20,
             what="a and b running")
    set_stop(s, qpath, "Hold")
    wait_for(lambda: queue_stopped(s, qpath), 15, what="queue held")
    eq(cond(s.get_json(qpath), "Active").get("message"),
       "Can't admit new workloads: is stopped." if "/clusterqueues/" in
       qpath else "LocalQueue is stopped", "Kueue's message")
    create_job(s, "c")
    wait_for(lambda: "inactive" in (cond(wl_of(s, "c"), "QuotaReserved")
                                    or {}).get("message", ""), 15,
             what="c pending on the held queue")
    for n in ("a", "b"):
        w = wl_of(s, n)
        check(is_true(w, "QuotaReserved") and not is_true(w, "Evicted"),
              "Hold does not evict %s: %r" % (n, w["status"]))
        check(job_running(s, n), "Hold keeps %s running" % n)
    code, _, body = s.raw("DELETE", JOBS + "/c?propagationPolicy=Background")
    eq(code, 200, "delete c: %r" % body)
    set_stop(s, qpath, "HoldAndDrain")
    for n in ("a", "b"):
        evicted(s, n, reason, message)
    set_stop(s, qpath, "None")
    for n in ("a", "b"):
        w = wait_for(lambda n=n: (lambda w: w if is_true(w, "Requeued")
                                  else None)(wl_of(s, n)), 15,
                     what="%s requeued" % n)
        eq(cond(w, "Requeued").get("reason"), restarted, "Requeued reason")
    wait_for(lambda: job_running(s, "a") and job_running(s, "b"), 20,
             what="a and b running again")
    jobs.stop()
    ctl.stop()


@case("cluster-queue-hold-and-drain", simulate="jobs")
def cq_drain(s):
    drain_case(s, KQ + "/clusterqueues/cq", "ClusterQueueStopped",
               "The ClusterQueue is stopped", "ClusterQueueRestarted")


@case("local-queue-hold-and-drain", simulate="jobs")
def lq_drain(s):
    drain_case(s, KQ + "/namespaces/%s/localqueues/lq" % NS,
               "LocalQueueStopped", "The LocalQueue is stopped",
               "LocalQueueRestarted")


def evictions_metric(port):
    """{(reason, underlying_cause): value} of kueue_evicted_workloads_total
    for ClusterQueue cq."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if not line.startswith("kueue_evicted_workloads_total{"):
            continue
        head, value = line.rsplit(" ", 1)
        labels = dict(kv.split("=", 1) for kv in
                      head.split("{", 1)[1].rstrip("}").split(","))
        labels = {k: v.strip('"') for k, v in labels.items()}
        if labels.get("cluster_queue") == "cq":
            out[(labels["reason"], labels["underlying_cause"])] = \
                float(value)
    return out


@case("maximum-execution-time", simulate="jobs")
def max_exec(s):
    """A Job labelled kueue.x-k8s.io/max-exec-time-seconds=2 is
    deactivated once admitted for 2 s: Evicted (Kueue's reason
    DeactivatedDueToMaximumExecutionTimeExceeded, "... due to
    exceeding the maximum execution time", underlying cause
    MaximumExecutionTimeExceeded), spec.active false, the job stopped;
    the DeactivationTarget condition is consumed."""
    setup(s)
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % port))
    create_job(s, "x", labels={"kueue.x-k8s.io/max-exec-time-seconds": "2"})
    wait_for(lambda: job_running(s, "x"), 20, what="x running")
    w = evicted(s, "x", "DeactivatedDueToMaximumExecutionTimeExceeded",
                "The workload is deactivated due to exceeding the maximum "
                "execution time")
    eq(w["spec"].get("active"), False, "spec.active")
    eq(w["spec"].get("maximumExecutionTimeSeconds"), 2,
       "maximumExecutionTimeSeconds")
    check(not cond(w, "DeactivationTarget"),
          "DeactivationTarget consumed: %r" % w["status"]["conditions"])
    ev = w["status"].get("schedulingStats", {}).get("evictions", [])
    check({"reason": "Deactivated",
           "underlyingCause": "MaximumExecutionTimeExceeded",
           "count": 1} in ev, "eviction counted: %r" % ev)
    m = evictions_metric(port)
    eq(m.get(("Deactivated", "MaximumExecutionTimeExceeded")), 1.0,
       "kueue_evicted_workloads_total: %r" % m)
    ctl.stop()


if __name__ == "__main__":
    run_cases()
