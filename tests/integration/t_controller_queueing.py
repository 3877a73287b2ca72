# SPDX-License-Identifier: Apache-2.0
"""cueue-controller queueing strategies and cohort borrowing, end to end
with the Job simulator.

StrictFIFO: a head that does not fit blocks every Workload behind it in
its ClusterQueue. BestEffortFIFO: Workloads behind an inadmissible head
are admitted when they fit. Cohorts: a ClusterQueue borrows its peer's
unused quota, the status shows the borrowed amount, and a Workload beyond
the cohort's total waits."""
import datetime
import os
import threading
import time

from cuetest import (CONTROLLER_CONFIG, Controller, Failure, case, check,
                     eq, free_port, run_cases, wait_for)
from cuetest.metrics import metric, scrape

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def cluster_queue(name, cpu, strategy="BestEffortFIFO", cohort=None):
    spec = {"namespaceSelector": {}, "queueingStrategy": strategy,
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": cpu}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name}, "spec": spec}


def job(ns, name, cpu, runtime_ms):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {"cpu": cpu}}}],
                "restartPolicy": "Never"}}}}


def setup(s, queues):
    """queues: {namespace: ClusterQueue object}; one LocalQueue `lq` per
    namespace pointing at its ClusterQueue."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/"
                          "resourceflavors", {
                              "apiVersion": "kueue.x-k8s.io/v1beta2",
                              "kind": "ResourceFlavor",
                              "metadata": {"name": "default-flavor"}})
    eq(code, 201, "ResourceFlavor: %r" % body)
    for ns, cq in queues.items():
        code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/"
                              "clusterqueues", cq)
        eq(code, 201, "ClusterQueue: %r" % body)
        s.namespace(ns)
        code, _, body = s.raw(
            "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
            "localqueues" % ns, {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": ns},
                "spec": {"clusterQueue": cq["metadata"]["name"]}})
        eq(code, 201, "LocalQueue: %r" % body)


def create(s, j):
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                          % j["metadata"]["namespace"], j)
    eq(code, 201, "create %s: %r" % (j["metadata"]["name"], body))


class StartWatcher:
    """Records, per namespace/job, the first time it was seen unsuspended
    and the first time it was seen succeeded."""

    def __init__(self, s, namespaces):
        self.s, self.namespaces = s, namespaces
        self.started, self.done = {}, {}
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            try:
                self.poll()
            except OSError:  # the server is gone: the case has failed
                return
            time.sleep(0.03)

    def poll(self):
        for ns in self.namespaces:
            for j in self.s.get_json(
                    "/apis/batch/v1/namespaces/%s/jobs" % ns)["items"]:
                k = "%s/%s" % (ns, j["metadata"]["name"])
                if j["spec"].get("suspend") is False and \
                        k not in self.started:
                    self.started[k] = time.monotonic()
                if j.get("status", {}).get("succeeded") == 1 and \
                        k not in self.done:
                    self.done[k] = time.monotonic()

    def close(self):
        self.stop.set()
        self.t.join()


def all_succeeded(s, ns, n):
    jobs = s.get_json("/apis/batch/v1/namespaces/%s/jobs" % ns)["items"]
    return len(jobs) == n and all(
        j.get("status", {}).get("succeeded") == 1 for j in jobs)


@case("strict-fifo-vs-best-effort-fifo", simulate="jobs")
def strict_vs_best_effort(s):
    """Same jobs in two ClusterQueues of 4 cpu: `first` (2 cpu) runs, `big`
    (4 cpu) cannot fit until it ends, `small` (1 cpu) comes after `big`.
    StrictFIFO holds `small` behind `big`; BestEffortFIFO starts `small`
    while `first` runs and `big` waits."""
    setup(s, {"strict": cluster_queue("strict", 4, "StrictFIFO"),
              "best": cluster_queue("best", 4, "BestEffortFIFO")})
    ctl = Controller(s, config=CONFIG)
    w = StartWatcher(s, ("strict", "best"))
    for ns in ("strict", "best"):
        create(s, job(ns, "first", "2", 2500))
    wait_for(lambda: "strict/first" in w.started and
             "best/first" in w.started, 15, what="first jobs running")
    for ns in ("strict", "best"):
        create(s, job(ns, "big", "4", 300))
    time.sleep(1.1)  # creation timestamps have one-second resolution
    for ns in ("strict", "best"):
        create(s, job(ns, "small", "1", 300))
    wait_for(lambda: all_succeeded(s, "strict", 3) and
             all_succeeded(s, "best", 3), 30, what="all jobs complete")
    w.close()
    st = w.started
    check(st["best/small"] < st["best/big"],
          "BestEffortFIFO: small starts before big (%r)" % st)
    check(st["strict/small"] >= st["strict/big"],
          "StrictFIFO: small waits for big (%r)" % st)
    ctl.stop()


@case("cohort-borrowing", simulate="jobs")
def cohort_borrowing(s):
    """cq-a and cq-b (2 cpu each) share cohort `co`. A 3-cpu Job in cq-a
    borrows 1 cpu; a 2-cpu Job behind it waits (cohort total 4); when the
    first ends, the second runs within cq-a's own quota."""
    setup(s, {"team-a": cluster_queue("cq-a", 2, cohort="co"),
              "team-b": cluster_queue("cq-b", 2, cohort="co")})
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  enableClusterQueueResources: true' % port))
    w = StartWatcher(s, ("team-a",))
    create(s, job("team-a", "wide", "3", 2000))
    wait_for(lambda: "team-a/wide" in w.started, 15,
             what="wide job running on borrowed quota")

    def borrowed():
        st = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq-a"
                        ).get("status", {})
        for f in st.get("flavorsReservation", []):
            for r in f["resources"]:
                if r["name"] == "cpu" and r["borrowed"] == "1":
                    return st
        return None
    st = wait_for(borrowed, 5, what="cq-a status shows 1 cpu borrowed")
    eq(st["reservingWorkloads"], 1)
    # The same facts as Prometheus metrics, under Kueue's names.
    m = wait_for(lambda: (lambda m: metric(
        m, "kueue_local_queue_reserving_active_workloads", name="lq",
        namespace="team-a") == 1 and m)(scrape(port)), 5,
        what="LocalQueue metrics")
    eq(metric(m, "kueue_cluster_queue_resource_reservation",
              cluster_queue="cq-a", flavor="default-flavor",
              resource="cpu", cohort="co"), 3.0)
    eq(metric(m, "kueue_cluster_queue_nominal_quota", cluster_queue="cq-b",
              resource="cpu"), 2.0)
    eq(metric(m, "kueue_cluster_queue_borrowing_limit", cluster_queue="cq-b",
              resource="cpu"), float("inf"))
    eq(metric(m, "kueue_cluster_queue_lending_limit", cluster_queue="cq-b",
              resource="cpu"), float("inf"))
    eq(metric(m, "kueue_cluster_queue_status", cluster_queue="cq-a",
              status="active"), 1.0)
    eq(metric(m, "kueue_local_queue_status", name="lq",
              namespace="team-a", active="True"), 1.0)
    check((metric(m, "cueue_api_requests_total", verb="PATCH", code="200")
           or 0) >= 1, "API requests counted")
    # Both API clients are counted: Events go through their own client.
    posts = [e for e in s.access_log(0)
             if e["userAgent"].startswith("cueue-controller/") and
             e["verb"] == "POST" and e["code"] == 201]
    check(any("/events" in e["path"] for e in posts), "Events were created")
    wait_for(lambda: (metric(scrape(port), "cueue_api_requests_total",
                             verb="POST", code="201") or 0) >= len(posts),
             5, what="%d controller POSTs (Events included) counted" %
             len(posts))
    check((metric(m, "cueue_loop_lag_seconds_count") or 0) >= 1,
          "loop lag observed")
    create(s, job("team-a", "next", "2", 300))
    wait_for(lambda: all_succeeded(s, "team-a", 2), 30,
             what="both jobs complete")
    w.close()
    # `next` (2 cpu) could not run beside `wide` (3 of the cohort's 4).
    check(w.started["team-a/next"] >= w.done["team-a/wide"] - 0.1,
          "next waited for wide: started %r done %r" % (w.started, w.done))
    ctl.stop()


@case("invalid-clusterqueue-logged-once-per-generation", simulate="jobs")
def invalid_logged_once(s):
    """A ClusterQueue the engine refuses is logged once per generation,
    not again on every unrelated configuration change (ten here), and
    once more when its spec changes."""
    setup(s, {"team": cluster_queue("good", 4)})
    bad = cluster_queue("bad", 4)
    # A quota for a resource the group does not cover: refused by the
    # engine, accepted by the API server (the CRD's rules only compare
    # the counts; Kueue's webhook would refuse it).
    bad["spec"]["resourceGroups"][0]["coveredResources"] = ["cpu", "memory"]
    bad["spec"]["resourceGroups"][0]["flavors"][0]["resources"].append(
        {"name": "gpu", "nominalQuota": "1"})
    code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/"
                          "clusterqueues", bad)
    eq(code, 201, "bad ClusterQueue: %r" % body)
    ctl = Controller(s, config=CONFIG)

    def warnings():
        with open(ctl.log) as f:
            return [ln for ln in f if "clusterqueues bad:" in ln]

    def settle(name):
        # A job admitted after the changes shows that the controller
        # has run its configuration pass over them.
        create(s, job("team", name, "1", 100))
        wait_for(lambda: all_succeeded(s, "team", int(name[-1]) + 1), 20,
                 what="job %s done" % name)

    settle("j0")
    for i in range(10):
        code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/"
                              "resourceflavors", {
                                  "apiVersion": "kueue.x-k8s.io/v1beta2",
                                  "kind": "ResourceFlavor",
                                  "metadata": {"name": "extra-%d" % i}})
        eq(code, 201, "ResourceFlavor extra-%d: %r" % (i, body))
    settle("j1")
    eq(len(warnings()), 1, "warnings after ten changes: %r" % warnings())

    # It is known as inactive, with the reason, not as missing.
    def bad_inactive():
        st = s.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/bad"
                        ).get("status", {})
        return [c for c in st.get("conditions", [])
                if c["type"] == "Active" and c["status"] == "False"]
    cond = wait_for(bad_inactive, 20, what="bad ClusterQueue Active=False")
    eq(cond[0]["reason"], "InvalidSpec")
    check("coveredResources" in cond[0]["message"],
          "the condition says why: %r" % cond[0]["message"])
    s.namespace("badns")
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/badns/localqueues",
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "badns"},
         "spec": {"clusterQueue": "bad"}})
    eq(code, 201, "LocalQueue to bad: %r" % body)
    create(s, job("badns", "waits", "1", 100))

    def pending_message():
        for w in s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/"
                            "badns/workloads")["items"]:
            for c in w.get("status", {}).get("conditions", []):
                if c["type"] == "QuotaReserved" and c["status"] == "False":
                    return c["message"]
        return None
    msg = wait_for(pending_message, 20, what="pending Workload message")
    check("ClusterQueue bad is inactive" in msg and "coveredResources" in msg,
          "the Workload says why, not that the queue is missing: %r" % msg)
    code, _, body = s.raw(
        "PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/bad",
        {"spec": {"queueingStrategy": "StrictFIFO"}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "patch bad: %r" % body)
    settle("j2")
    eq(len(warnings()), 2, "a new generation is logged: %r" % warnings())
    ctl.stop()


@case("refused-queue-status-backs-off", simulate="jobs")
def refused_status_backs_off(s):
    """A LocalQueue status write the API server refuses (422) is retried
    with a doubling pause (2 s, 4 s, 8 s, ...), the log says why, and a
    success resets it. Before, it was retried every few seconds forever."""
    import datetime
    setup(s, {"team": cluster_queue("good", 4)})
    ctl = Controller(s, config=CONFIG)
    create(s, job("team", "j0", "1", 100))
    wait_for(lambda: all_succeeded(s, "team", 1), 20, what="j0 done")
    path = ("/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues/"
            "lq/status")
    mark = s.log_mark()
    s.faults([{"method": "PATCH", "pathPrefix": path, "code": 422}])
    try:
        # j1 runs long: the LocalQueue's status stays different from
        # what the API holds for as long as the writes are refused.
        create(s, job("team", "j1", "1", 120000))

        seen = [0]

        def refused():
            r = [e for e in s.requests(mark, verb="PATCH", path=path)
                 if e["code"] == 422]
            seen[0] = len(r)
            return r if len(r) >= 4 else None
        # 2 + 4 + 8 s after the first refusal; the cap is for a loaded
        # machine, the gaps are checked below.
        try:
            r = wait_for(refused, 120, interval=0.5,
                         what="four refused writes")
        except Failure:
            raise Failure("%d refused writes in 120 s" % seen[0])
    finally:
        s.faults([])

    def at(e):
        return datetime.datetime.strptime(
            e["time"].replace("Z", ""), "%Y-%m-%dT%H:%M:%S.%f").timestamp()
    gaps = [at(b) - at(a) for a, b in zip(r, r[1:4])]
    # Each pause is a lower bound (the next attempt waits at least that
    # long after the refusal): 2 s, 4 s, 8 s.
    check(gaps[1] >= 3.9 and gaps[2] >= 7.9,
          "refused writes back off: gaps %r" % gaps)
    with open(ctl.log) as f:
        check(any("backing off" in ln and "422" in ln for ln in f),
              "the log says why and that it backs off")
    wait_for(lambda: s.get_json(path.replace("/status", "")).get(
        "status", {}).get("admittedWorkloads") == 1, 60,
        what="LocalQueue status written once the API accepts it")
    ctl.stop()


run_cases()
