# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: waitForPodsReady end to end, with cueue-apiserver's
Job, JobSet and scheduler stand-ins (--simulate jobs,jobsets,scheduler)
and Nodes created by the test, so that quota admits what the nodes cannot
run.

A Workload whose pods are not all ready within the timeout is evicted
(PodsReadyTimeout; the message names the scheduler's reason, taken from
the pods), its job stopped, its quota released (another Workload is
admitted meanwhile) and requeued after requeuingStrategy's backoff
(base * 2^(count-1), capped), then deactivated once backoffLimitCount is
exceeded. blockAdmission admits one Workload at a time until its pods
are ready; a job whose pods become ready in time keeps running; a
restart during the wait resumes the timer from the Workload's
conditions. Times are observed from the Workloads' watch history (every
state seen, with the test's clock), checked with the loop's one-second
resolution and the conditions' one-second timestamps."""
import os
import signal
import threading
import time

from cuetest import CONTROLLER_CONFIG, Controller, case, check, eq, \
    free_port, queues_setup, run_cases, wait_for
from cuetest.kobj import cond, is_true
from cuetest.metrics import metric_total
from cuetest.observe import Observer

NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
SIM = "jobs,jobsets,scheduler"


def config(timeout="2s", base=2, maxs=4, limit=None, block=False,
           metrics_port=None, timestamp="Eviction"):
    rq = ("    timestamp: %s\n    backoffBaseSeconds: %d\n"
          "    backoffMaxSeconds: %d\n" % (timestamp, base, maxs))
    if limit is not None:
        rq += "    backoffLimitCount: %d\n" % limit
    text = CONTROLLER_CONFIG + (
        "integrations:\n"
        "  frameworks: [\"batch/job\", \"jobset.x-k8s.io/jobset\"]\n"
        "waitForPodsReady:\n"
        "  timeout: %s\n"
        "  blockAdmission: %s\n"
        "  requeuingStrategy:\n%s" % (timeout, "true" if block else "false",
                                      rq))
    if metrics_port:
        text = text.replace('bindAddress: "0"',
                            'bindAddress: "127.0.0.1:%d"' % metrics_port)
    return text


def setup(s, cpu, nodes):
    """Queues with `cpu` of quota, and Nodes {name: cpu}."""
    queues_setup(s, cpu, ns=NS)
    for name, ncpu in nodes.items():
        alloc = {"cpu": str(ncpu), "memory": "64Gi", "pods": "110"}
        code, _, body = s.raw("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name}, "spec": {},
            "status": {"allocatable": alloc, "capacity": alloc}})
        eq(code, 201, "Node %s: %r" % (name, body))


def pod_template(cpu, ready_ms=0, runtime_ms=600000):
    return {"metadata": {"annotations": {
        "cueue.dev/sim-runtime-ms": str(runtime_ms),
        "cueue.dev/sim-ready-ms": str(ready_ms)}},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu}}}],
                 "restartPolicy": "Never"}}


def create_job(s, name, pods, cpu="1", ready_ms=0, runtime_ms=600000):
    tpl = pod_template(cpu, ready_ms, runtime_ms)
    code, _, body = s.raw("POST", JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                     "annotations": tpl["metadata"]["annotations"]},
        "spec": {"parallelism": pods, "completions": pods,
                 "suspend": True, "template": tpl}})
    eq(code, 201, "create %s: %r" % (name, body))


class History:
    """Every state of the namespace's Workloads, with the time it was
    seen: transitions of their conditions, by Workload owner name."""

    def __init__(self, s):
        self.lock = threading.Lock()
        self.events = []  # (t, owner, type, status, reason, message)
        self.last = {}
        self.obs = Observer(s, WLS, self._wl)

    def _wl(self, name, old, new, rv, relisting):
        if new is None:
            return
        refs = new["metadata"].get("ownerReferences") or [{}]
        owner = refs[0].get("name", name)
        now = time.time()
        for c in new.get("status", {}).get("conditions", []):
            key = (owner, c["type"])
            val = (c["status"], c.get("reason"), c.get("message"))
            if self.last.get(key) != val:
                self.last[key] = val
                self.events.append((now, owner, c["type"]) + val)

    def times(self, owner, ctype, status, reason=None):
        """When owner's condition became status (with reason)."""
        with self.obs.lock:
            return [e[0] for e in self.events
                    if e[1] == owner and e[2] == ctype and e[3] == status
                    and (reason is None or e[4] == reason)]

    def messages(self, owner, ctype, status):
        with self.obs.lock:
            return [e[5] for e in self.events
                    if e[1] == owner and e[2] == ctype and e[3] == status]

    def stop(self):
        self.obs.stop()


def wl_of(s, owner):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == owner:
            return w
    return None


@case("job-not-placed-evicted-requeued-deactivated", simulate=SIM)
def job_not_placed(s):
    """A 4-pod Job on one 2-cpu Node (quota 4 cpu): 2 pods never fit.
    After the 2 s timeout it is evicted (PodsReadyTimeout, the message
    naming "2 of 4 pods not ready" and the scheduler's Insufficient cpu),
    its quota released: a 1-cpu Job queued behind it is admitted and runs
    while it backs off. Requeued after 2 s, then 4 s (the cap), each
    admission no earlier than its requeueAt; the third timeout exceeds
    backoffLimitCount 2: deactivated (RequeuingLimitExceeded)."""
    setup(s, 4, {"n1": 2})
    port = free_port()
    ctl = Controller(s, config=config(limit=2, metrics_port=port))
    hist = History(s)
    create_job(s, "big", 4)
    wait_for(lambda: wl_of(s, "big"), 15, what="big's Workload")
    create_job(s, "small", 1, runtime_ms=1500)
    # The cause is named while it waits, from the pods themselves.
    wait_for(lambda: any("Insufficient cpu" in (m or "") for m in
                         hist.messages("big", "PodsReady", "False")), 15,
             what="PodsReady=False naming the scheduler's reason")
    msgs = [m for m in hist.messages("big", "PodsReady", "False")
            if "Insufficient cpu" in (m or "")]
    check(msgs[0].startswith("2 of 4 pods not ready: 0/1 nodes are "
                             "available: 1 Insufficient cpu"), msgs[0])
    w = wait_for(lambda: (lambda w: w if w and (cond(w, "Evicted") or {})
                          .get("reason") == "PodsReadyTimeout" else None)(
        wl_of(s, "big")), 15, what="big evicted")
    ev = cond(w, "Evicted")
    check(ev["message"].startswith(
        "Exceeded the PodsReady timeout %s/%s: 2 of 4 pods not ready: "
        % (NS, w["metadata"]["name"])) and "Insufficient cpu" in
        ev["message"], ev["message"])
    eq(w["status"].get("requeueState", {}).get("count"), 1, "requeue count")
    # Its quota goes to small meanwhile, which runs to the end.
    wait_for(lambda: is_true(wl_of(s, "small"), "Finished"), 20,
             what="small admitted and finished while big backs off")
    # Deactivated after the third timeout.
    w = wait_for(lambda: (lambda w: w if w and w["spec"].get("active") is
                          False and not w["status"].get("admission")
                          else None)(wl_of(s, "big")), 40,
                 what="big deactivated")
    ev = cond(w, "Evicted")
    eq((ev["reason"], ev["message"]), (
        "DeactivatedDueToRequeuingLimitExceeded", "The workload is "
        "deactivated due to exceeding the maximum number of re-queuing "
        "retries"), "deactivation")
    check(w["status"].get("requeueState") is None,
          "requeueState cleared: %r" % w["status"].get("requeueState"))
    stats = w["status"].get("schedulingStats", {}).get("evictions", [])
    check({"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart",
           "count": 2} in stats, "two timeouts counted: %r" % stats)
    check({"reason": "Deactivated",
           "underlyingCause": "RequeuingLimitExceeded",
           "count": 1} in stats, "the deactivation counted: %r" % stats)
    wait_for(lambda: hist.times("big", "Evicted", "True",
                                "DeactivatedDueToRequeuingLimitExceeded"),
             10, what="the deactivation in the watch history")
    # Backoff honoured: each readmission at least base*2^(n-1) after its
    # eviction (less one second: requeueAt has whole seconds; and the
    # watch's delays).
    evs = hist.times("big", "Evicted", "True", "PodsReadyTimeout")
    adm = hist.times("big", "QuotaReserved", "True")
    eq(len(evs), 2, "two PodsReadyTimeout evictions")
    eq(len(adm), 3, "three admissions")
    small_adm = hist.times("small", "QuotaReserved", "True")
    check(small_adm and evs[0] < small_adm[0] < adm[1],
          "small admitted while big backed off: %r %r %r"
          % (evs, small_adm, adm))
    for n, (e, a) in enumerate(zip(evs, adm[1:]), 1):
        want = min(2 * 2 ** (n - 1), 4)
        check(a - e >= want - 1.25, "requeue %d after %.2fs, backoff %ds"
              % (n, a - e, want))
    # Each timeout 2 s after its admission (conditions have whole
    # seconds; the loop's resolution).
    for a, e in zip(adm, evs):
        check(0.75 <= e - a <= 4.0, "timeout after %.2fs" % (e - a))
    eq(metric_total(port, "kueue_evicted_workloads_total",
              reason="PodsReadyTimeout", underlying_cause="WaitForStart"),
       2.0, "kueue_evicted_workloads_total")
    hist.stop()
    ctl.stop()


@case("jobset-leader-fits-workers-do-not", simulate=SIM)
def jobset_case(s):
    """A JobSet whose leader (1 cpu) fits on the only Node (1 cpu) and
    whose two workers do not: evicted after the timeout with the
    scheduler's reason, requeued with the backoff's requeueState."""
    setup(s, 3, {"n1": 1})
    ctl = Controller(s, config=config())

    def rj(name, replicas):
        return {"name": name, "replicas": replicas, "template": {"spec": {
            "parallelism": 1, "completions": 1,
            "template": pod_template("1")}}}
    code, _, body = s.raw("POST", JOBSETS, {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "train", "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": True, "replicatedJobs": [
            rj("leader", 1), rj("workers", 2)]}})
    eq(code, 201, "create JobSet: %r" % body)
    w = wait_for(lambda: (lambda w: w if w and (cond(w, "Evicted") or {})
                          .get("reason") == "PodsReadyTimeout" else None)(
        wl_of(s, "train")), 30, what="train evicted")
    ev = cond(w, "Evicted")
    check("2 of 3 pods not ready: 0/1 nodes are available: 1 Insufficient "
          "cpu" in ev["message"], ev["message"])
    eq(w["status"].get("requeueState", {}).get("count"), 1, "requeue count")
    wait_for(lambda: (cond(wl_of(s, "train"), "Requeued") or {}).get(
        "reason") in ("PodsReadyTimeout", "BackoffFinished"), 15,
        what="train released and requeued")
    ctl.stop()


@case("block-admission-serialises-and-ready-keeps-running", simulate=SIM)
def block_admission(s):
    """blockAdmission: true. Two 1-cpu Jobs whose pods become ready after
    2.5 s: b is not admitted until a's pods are ready (QuotaReserved=False
    WaitingForPodsReady meanwhile: pending reasons are written once a
    Workload has waited a second); a, ready within the 6 s timeout, keeps
    running to the end (PodsReady=True Started, never evicted)."""
    setup(s, 4, {"n1": 4})
    port = free_port()
    ctl = Controller(s, config=config(timeout="6s", block=True,
                                      metrics_port=port))
    hist = History(s)
    create_job(s, "a", 1, ready_ms=2500, runtime_ms=1500)
    wait_for(lambda: is_true(wl_of(s, "a"), "QuotaReserved"), 15,
             what="a admitted")
    create_job(s, "b", 1, ready_ms=2500, runtime_ms=1500)
    wait_for(lambda: is_true(wl_of(s, "a"), "Finished") and
             is_true(wl_of(s, "b"), "Finished"), 30, what="a and b done")
    a_ready = hist.times("a", "PodsReady", "True", "Started")
    b_adm = hist.times("b", "QuotaReserved", "True")
    check(a_ready and b_adm and b_adm[0] >= a_ready[0],
          "b admitted after a's pods were ready: %r %r" % (a_ready, b_adm))
    check(hist.times("b", "QuotaReserved", "False", "WaitingForPodsReady"),
          "b said it waits for pods: %r"
          % hist.messages("b", "QuotaReserved", "False"))
    for job in ("a", "b"):
        eq(hist.times(job, "Evicted", "True"), [], "%s never evicted" % job)
    check((metric_total(port, "kueue_ready_wait_time_seconds_count",
                  cluster_queue="cq") or 0) >= 2, "ready wait time")
    check((metric_total(port, "kueue_admitted_until_ready_wait_time_seconds_count",
                  cluster_queue="cq") or 0) >= 2, "admitted until ready")
    hist.stop()
    ctl.stop()


@case("recovery-timeout-after-pods-stop-being-ready", simulate=SIM)
def recovery(s):
    """A 1-pod Job runs (PodsReady=True); its Node is cordoned and its pod
    deleted: the replacement cannot be placed, PodsReady turns False
    (WaitForRecovery) naming the scheduler's reason, and after the 2 s
    recoveryTimeout it is evicted (PodsReadyTimeout, underlying cause
    WaitForRecovery)."""
    setup(s, 4, {"n1": 2})
    ctl = Controller(s, config=config().replace(
        "  blockAdmission:", "  recoveryTimeout: 2s\n  blockAdmission:"))
    hist = History(s)
    create_job(s, "r", 1)
    wait_for(lambda: hist.times("r", "PodsReady", "True", "Started"), 15,
             what="r's pods ready")
    code, _, body = s.raw("PATCH", "/api/v1/nodes/n1",
                          {"spec": {"unschedulable": True}},
                          headers={"Content-Type":
                                   "application/merge-patch+json"})
    eq(code, 200, "cordon n1: %r" % body)
    pods = s.get_json("/api/v1/namespaces/%s/pods" % NS)["items"]
    eq(len(pods), 1, "one pod")
    code, _, body = s.raw("DELETE", "/api/v1/namespaces/%s/pods/%s"
                          % (NS, pods[0]["metadata"]["name"]))
    check(code in (200, 202), "delete the pod: %r" % body)
    wait_for(lambda: hist.times("r", "Evicted", "True", "PodsReadyTimeout"),
             20, what="r evicted")
    msgs = hist.messages("r", "PodsReady", "False")
    check(any("1 node(s) were unschedulable" in (m or "") for m in msgs),
          "PodsReady=False names the reason: %r" % msgs)
    check(hist.times("r", "PodsReady", "False", "WaitForRecovery"),
          "WaitForRecovery: %r" % msgs)
    w = wl_of(s, "r")
    stats = w["status"].get("schedulingStats", {}).get("evictions", [])
    check({"reason": "PodsReadyTimeout",
           "underlyingCause": "WaitForRecovery", "count": 1} in stats,
          "eviction counted: %r" % stats)
    rec = hist.times("r", "PodsReady", "False", "WaitForRecovery")[0]
    ev = hist.times("r", "Evicted", "True", "PodsReadyTimeout")[0]
    check(0.75 <= ev - rec <= 4.0, "recovery timeout after %.2fs"
          % (ev - rec))
    hist.stop()
    ctl.stop()


@case("restart-resumes-the-timer", simulate=SIM)
def restart(s):
    """A Job that cannot be placed, the controller stopped 1 s into the
    4 s wait and started again 2.5 s later: the eviction comes 4 s after
    the admission (the Admitted condition's time), not 4 s after the
    restart."""
    setup(s, 4, {"n1": 1})
    store = os.path.join(s.dir, "ledger.db")
    cfg = config(timeout="4s")
    ctl = Controller(s, config=cfg, store=store)
    hist = History(s)
    create_job(s, "x", 2)
    wait_for(lambda: hist.times("x", "Admitted", "True"), 15,
             what="x admitted")
    time.sleep(1.0)  # into the wait (not an assertion)
    ctl.stop(signal.SIGTERM)
    time.sleep(2.5)  # the controller is down (not an assertion)
    restarted = time.time()
    ctl = Controller(s, config=cfg, store=store)
    wait_for(lambda: hist.times("x", "Evicted", "True", "PodsReadyTimeout"),
             20, what="x evicted")
    adm = hist.times("x", "Admitted", "True")[0]
    ev = hist.times("x", "Evicted", "True", "PodsReadyTimeout")[0]
    # From zero it would be >= 4 s after the restart began (and >= 7.5 s
    # after the admission); resumed, it is due 0.5 s after the restart
    # began and comes as soon as the controller is up, however slow its
    # start-up is on a loaded machine.
    check(ev - restarted < 3.5, "evicted %.2fs after the restart began "
          "(%.2fs after the admission)" % (ev - restarted, ev - adm))
    check(ev - adm >= 2.75, "not before the timeout: %.2fs" % (ev - adm))
    hist.stop()
    ctl.stop()


if __name__ == "__main__":
    run_cases()
