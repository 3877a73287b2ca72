# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: what a podset asks of quota beyond its containers,
end to end with the Job simulator.

The `pods` resource: a ClusterQueue covering `pods` counts one unit per
pod; it never holds more pods than its quota in any state the watch
history shows, and the Workload's admission, the ClusterQueue's status
and its reservation metric show them.

Partial admission: a Job shaped like Kueue's partial-admission example
(parallelism 20, kueue.x-k8s.io/job-min-parallelism 5, 1 cpu per pod) on
a 9-cpu ClusterQueue is admitted with 9 pods, runs with parallelism 9,
and keeps its Workload's full count."""
import os
import re
import signal
import threading
import time
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, run_cases, wait_for)
from cuetest.observe import Observer

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
CRDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "manifests", "crds")


def setup(s, ns, cq_resources):
    """ResourceFlavor default-flavor, ClusterQueue `cq` with one resource
    group {name: quota}, namespace ns with LocalQueue `lq`."""
    s.kubectl("apply", "-f", CRDS)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    code, _, body = s.raw("POST", KUEUE + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    eq(code, 201, "ResourceFlavor: %r" % body)
    code, _, body = s.raw("POST", KUEUE + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": list(cq_resources),
            "flavors": [{"name": "default-flavor", "resources": [
                {"name": r, "nominalQuota": q}
                for r, q in cq_resources.items()]}]}]}})
    eq(code, 201, "ClusterQueue: %r" % body)
    s.namespace(ns)
    code, _, body = s.raw("POST", KUEUE + "/namespaces/%s/localqueues" % ns, {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": ns},
        "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)


def job(ns, name, parallelism, requests, runtime_ms, annotations=None):
    ann = {"cueue.dev/sim-runtime-ms": str(runtime_ms)}
    ann.update(annotations or {})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                         "annotations": ann},
            "spec": {"parallelism": parallelism,
                     "completions": parallelism, "suspend": True,
                     "template": {"spec": {
                         "containers": [{
                             "name": "c", "image": "busybox",
                             "resources": {"requests": requests}}],
                         "restartPolicy": "Never"}}}}


def pods_reserved_metric(port):
    """kueue_cluster_queue_resource_reservation of cq's pods, or None."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith("kueue_cluster_queue_resource_reservation{") \
                and 'cluster_queue="cq"' in line \
                and 'resource="pods"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def create(s, j):
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                          % j["metadata"]["namespace"], j)
    eq(code, 201, "create %s: %r" % (j["metadata"]["name"], body))


def cond(obj, ctype):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c["status"] == "True"
    return False


def reserved_pods(w):
    """Pods a Workload holds: its admitted counts while QuotaReserved and
    not Finished."""
    adm = (w or {}).get("status", {}).get("admission")
    if not adm or not cond(w, "QuotaReserved") or cond(w, "Finished"):
        return 0
    return sum(p.get("count", 0) for p in adm["podSetAssignments"])


def status_pods(cq):
    """Pods the ClusterQueue status shows reserved."""
    for f in (cq or {}).get("status", {}).get("flavorsReservation", []):
        for r in f["resources"]:
            if r["name"] == "pods":
                return int(r["total"])
    return 0


class PodsWatcher:
    """Follows the namespace's Workloads and Jobs and the ClusterQueue
    through their watch history (every version the API served, in order)
    and keeps, over all observed states, the most pods held by Workloads
    with quota, run by Jobs (status.active) and shown reserved in the
    ClusterQueue status; a thread also samples the reservation metric."""

    def __init__(self, s, ns, port=None):
        self.s, self.port = s, port
        self.max_reserved = self.max_active = self.max_status = 0
        self.max_metric = 0.0
        self.admitted = {}
        self.held, self.active = {}, {}
        self.wls = Observer(s, KUEUE + "/namespaces/%s/workloads" % ns,
                            on_change=self.on_workload)
        self.jobs = Observer(s, "/apis/batch/v1/namespaces/%s/jobs" % ns,
                             on_change=self.on_job)
        self.cqs = Observer(s, KUEUE + "/clusterqueues",
                            on_change=self.on_cq)
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def on_workload(self, name, old, new, rv, relisting):
        self.held[name] = reserved_pods(new)
        if self.held[name]:
            self.admitted[name] = new["status"]["admission"]
        self.max_reserved = max(self.max_reserved, sum(self.held.values()))

    def on_job(self, name, old, new, rv, relisting):
        self.active[name] = (new or {}).get("status", {}).get("active", 0)
        self.max_active = max(self.max_active, sum(self.active.values()))

    def on_cq(self, name, old, new, rv, relisting):
        self.max_status = max(self.max_status, status_pods(new))

    def run(self):
        while self.port and not self.stop.is_set():
            try:
                v = pods_reserved_metric(self.port)
            except OSError:  # the controller is not serving yet
                v = None
            self.max_metric = max(self.max_metric, v or 0.0)
            self.stop.wait(0.02)

    def close(self):
        self.stop.set()
        self.t.join()
        for o in (self.wls, self.jobs, self.cqs):
            o.stop()


def all_succeeded(s, ns, n):
    jobs = s.get_json("/apis/batch/v1/namespaces/%s/jobs" % ns)["items"]
    return len(jobs) == n and all(
        j.get("status", {}).get("succeeded") == j["spec"]["completions"]
        for j in jobs)


@case("pods-quota-never-exceeded", simulate="jobs")
def pods_quota(s):
    """ClusterQueue: 100 cpu, 5 pods. Jobs of 3, 3 and 2 pods (100m cpu
    each): cpu never limits, pods do: never more than 5 pods reserved or
    running, and all three complete."""
    setup(s, "team", {"cpu": 100, "pods": 5})
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  enableClusterQueueResources: true' % port))
    w = PodsWatcher(s, "team", port)
    for name, n in (("a", 3), ("b", 3), ("c", 2)):
        create(s, job("team", name, n, {"cpu": "100m"}, 1500))
    wait_for(lambda: all_succeeded(s, "team", 3), 40,
             what="all three jobs complete")
    w.close()
    eq(w.max_reserved, 5, "at most (and at some point exactly) 5 pods "
       "reserved, 3 + 2")
    check(w.max_active <= 5,
          "never more than 5 pods running (max %d)" % w.max_active)
    check(0 < w.max_status <= 5,
          "ClusterQueue status shows pods reserved (max %d)" % w.max_status)
    check(0 < w.max_metric <= 5,
          "the reservation metric shows pods (max %r)" % w.max_metric)
    eq(len(w.admitted), 3, "admitted workloads")
    for name, adm in w.admitted.items():
        ps = adm["podSetAssignments"][0]
        eq(ps["flavors"].get("pods"), "default-flavor",
           "%s: pods flavor" % name)
        eq(ps["resourceUsage"].get("pods"), str(ps["count"]),
           "%s: pods in resourceUsage" % name)
    ctl.stop()


@case("partial-admission-sample", simulate="jobs")
def partial_admission(s):
    """Kueue's example shape: 20 pods of 1 cpu / 200Mi, min-parallelism
    5, on a ClusterQueue of 9 cpu and 36Gi: admitted with 9 pods, the Job
    runs with parallelism 9 (completions kept), the Workload keeps count
    20 and minCount 5."""
    setup(s, "default-ns", {"cpu": 9, "memory": "36Gi"})
    ctl = Controller(s, config=CONFIG)
    create(s, job("default-ns", "sample-partial", 20,
                  {"cpu": "1", "memory": "200Mi"}, 1000,
                  {"kueue.x-k8s.io/job-min-parallelism": "5"}))

    def admitted():
        for w in s.get_json(KUEUE + "/namespaces/default-ns/workloads"
                            )["items"]:
            if cond(w, "QuotaReserved"):
                return w
        return None
    w = wait_for(admitted, 15, what="Workload admitted")
    ps = w["status"]["admission"]["podSetAssignments"][0]
    eq(ps["count"], 9, "admitted count")
    eq(ps["resourceUsage"]["cpu"], "9", "cpu usage")
    eq(w["spec"]["podSets"][0]["count"], 20, "Workload keeps the full count")
    eq(w["spec"]["podSets"][0].get("minCount"), 5, "minCount")

    def started():
        j = s.get_json("/apis/batch/v1/namespaces/default-ns/jobs/"
                       "sample-partial")
        return j if j["spec"].get("suspend") is False else None
    j = wait_for(started, 15, what="Job started")
    eq(j["spec"]["parallelism"], 9, "Job parallelism")
    eq(j["spec"]["completions"], 20, "Job completions unchanged")
    wait_for(lambda: all_succeeded(s, "default-ns", 1), 30,
             what="Job completes")
    ctl.stop()


@case("partial-admission-completions-equal-parallelism", simulate="jobs")
def partial_admission_completions(s):
    """With kueue.x-k8s.io/job-completions-equal-parallelism: "true",
    completions follow the admitted count too; a second Job that cannot
    get its minCount stays pending with Kueue's message."""
    setup(s, "ns", {"cpu": 6})
    ctl = Controller(s, config=CONFIG)
    create(s, job("ns", "first", 8, {"cpu": "1"}, 3000, {
        "kueue.x-k8s.io/job-min-parallelism": "2",
        "kueue.x-k8s.io/job-completions-equal-parallelism": "true"}))

    def started(name):
        j = s.get_json("/apis/batch/v1/namespaces/ns/jobs/" + name)
        return j if j["spec"].get("suspend") is False else None
    j = wait_for(lambda: started("first"), 15, what="first started")
    eq(j["spec"]["parallelism"], 6, "parallelism")
    eq(j["spec"]["completions"], 6, "completions follow parallelism")
    create(s, job("ns", "second", 4, {"cpu": "1"}, 300, {
        "kueue.x-k8s.io/job-min-parallelism": "1"}))

    def pending_msg():
        for w in s.get_json(KUEUE + "/namespaces/ns/workloads")["items"]:
            if w["metadata"]["name"].startswith("job-second"):
                for c in w.get("status", {}).get("conditions", []):
                    if c["type"] == "QuotaReserved" and \
                            c["status"] == "False" and c.get("message"):
                        return c["message"]
        return None
    msg = wait_for(pending_msg, 15, what="second pending")
    eq(msg, "couldn't assign flavors to pod set main: insufficient unused "
       "quota for cpu in flavor default-flavor, 4 more needed",
       "pending message")
    j = wait_for(lambda: started("second"), 30,
                 what="second started after first")
    eq(j["spec"]["parallelism"], 4, "second runs in full")
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


@case("partial-admission-restored-on-preemption", simulate="jobs")
def partial_admission_preempted(s):
    """A Job admitted with 9 of its 20 pods is preempted by a
    higher-priority one: it is suspended with parallelism 20 restored
    (the watch history shows it), then admitted again with what is left
    (5 pods, its minCount) beside the preemptor."""
    setup(s, "team", {"cpu": 9})
    code, _, body = s.raw("PATCH", KUEUE + "/clusterqueues/cq", {
        "spec": {"preemption": {"withinClusterQueue": "LowerPriority"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "ClusterQueue preemption: %r" % body)
    s.kubectl("apply", "-f", s.file("prio.yaml", PRIORITIES))
    watch = s.stream("/apis/batch/v1/namespaces/team/jobs?watch=1&"
                     "timeoutSeconds=300")
    ctl = Controller(s, config=CONFIG)
    low = job("team", "low", 20, {"cpu": "1"}, 600000,
              {"kueue.x-k8s.io/job-min-parallelism": "5"})
    low["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "low"
    create(s, low)
    path = "/apis/batch/v1/namespaces/team/jobs/"

    def running(name, parallelism):
        j = s.get_json(path + name)
        return (j["spec"].get("suspend") is False and
                j["spec"]["parallelism"] == parallelism and
                j.get("status", {}).get("active") == parallelism) and j
    wait_for(lambda: running("low", 9), 20, what="low running 9 pods")
    high = job("team", "high", 4, {"cpu": "1"}, 600000)
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    create(s, high)
    wait_for(lambda: running("high", 4), 20, what="high running 4 pods")
    wait_for(lambda: running("low", 5), 20,
             what="low admitted again with 5 pods")
    history = [(bool(e["object"]["spec"].get("suspend")),
                e["object"]["spec"].get("parallelism"))
               for e in watch.events()
               if e["object"]["metadata"]["name"] == "low"]
    watch.close()
    runs = [p for susp, p in history if not susp]
    check(9 in runs and runs[-1] == 5, "low ran with 9, then 5: %r"
          % history)
    i9 = max(i for i, (susp, p) in enumerate(history) if not susp and p == 9)
    i5 = min(i for i, (susp, p) in enumerate(history)
             if not susp and p == 5)
    check(any(susp and p == 20 for susp, p in history[i9:i5]),
          "suspended with parallelism 20 restored in between: %r" % history)
    wls = s.get_json(KUEUE + "/namespaces/team/workloads")["items"]
    by = {w["metadata"]["ownerReferences"][0]["name"]: w for w in wls}
    eq(by["low"]["spec"]["podSets"][0]["count"], 20, "full count kept")
    eq(by["low"]["status"]["admission"]["podSetAssignments"][0]["count"],
       5, "admitted again with 5")
    ctl.stop()


def cycles_admitting(ctl):
    """How many admission cycles that admitted something ctl logged."""
    try:
        with open(ctl.log) as f:
            return len(re.findall(r"cycle: \d+ heads, [1-9]\d* admitted",
                                  f.read()))
    except OSError:
        return 0


@case("partial-admission-resumed-from-the-ledger", simulate="jobs")
def partial_admission_resumed(s):
    """ClusterQueue of 12 cpu; X (3 cpu, 6 s) runs; A (20 pods of 1 cpu,
    minCount 5) is admitted with 9 pods, but the controller is killed
    before that admission reaches the API (the write is held). Restarted
    on the same ledger, it announces A with 9 pods, and holds 9 cpu for A,
    not 20: once X ends, B (3 cpu) runs beside A."""
    setup(s, "team", {"cpu": 12})
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=store)
    path = "/apis/batch/v1/namespaces/team/jobs/"

    def running(name):
        j = s.get_json(path + name)
        return j["spec"].get("suspend") is False and j
    create(s, job("team", "x", 1, {"cpu": "3"}, 6000))
    wait_for(lambda: running("x"), 20, what="x running")
    seen = cycles_admitting(ctl)
    s.faults([{"method": "PATCH", "pathPrefix": KUEUE +
               "/namespaces/team/workloads/", "latencyMs": 2000}])
    create(s, job("team", "a", 20, {"cpu": "1"}, 600000,
                  {"kueue.x-k8s.io/job-min-parallelism": "5"}))
    wait_for(lambda: cycles_admitting(ctl) > seen, 20,
             what="a admitted by the engine, its write held")
    ctl.stop(signal.SIGKILL)
    killed = time.time()
    ctl = Controller(s, config=CONFIG, store=store)
    time.sleep(max(0, killed + 2.3 - time.time()))  # the held write is gone
    s.faults([])
    ja = wait_for(lambda: running("a"), 20, what="a started")
    eq(ja["spec"]["parallelism"], 9, "a runs the recorded 9 pods")
    check(ctl_log_has(ctl, "announcing the recorded decision"),
          "the recorded decision was resumed, not decided again")
    create(s, job("team", "b", 1, {"cpu": "3"}, 300))
    wait_for(lambda: all_succeeded_names(s, "team", ("x", "b")), 30,
             what="b runs once x ends, beside a")
    check(running("a"), "a still running")
    ctl.stop()


def ctl_log_has(ctl, text):
    with open(ctl.log) as f:
        return text in f.read()


def all_succeeded_names(s, ns, names):
    jobs = {j["metadata"]["name"]: j for j in s.get_json(
        "/apis/batch/v1/namespaces/%s/jobs" % ns)["items"]}
    return all(jobs.get(n, {}).get("status", {}).get("succeeded") == 1
               for n in names)


run_cases(rbac=True)
