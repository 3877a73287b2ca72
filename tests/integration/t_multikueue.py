# SPDX-License-Identifier: Apache-2.0
"""MultiKueue with three clusters: three cueue-apiserver processes (each on
a free port of its own), a cueue-controller on each; the first is the
manager, whose worker kubeconfigs are Secrets in the controller's
namespace, the other two are workers running Jobs with the Job simulator.

A Job sent to the manager (spec.managedBy kueue.x-k8s.io/multikueue) has
its Workload copied to the workers, is admitted on exactly one of them
(a worker without room never admits it while the other has room), runs
there, and the manager's Job shows the worker's status and completion;
the copies go once it finished. The MultiKueueCluster shows Active, the
AdmissionCheck too; a worker whose API server is gone goes Active=False;
orphaned copies are collected every gcInterval."""
import base64
import os
import signal
import threading
import time

from cuetest import CONTROLLER_CONFIG, Controller, Failure, Server, case, \
    check, eq, free_port, wait_for
from cuetest.metrics import metric, scrape
from cuetest.frameworks import sample
from cuetest.kobj import cond, is_true
from cuetest.observe import Observer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
DATA = os.path.join(ROOT, "tests", "integration", "data")
KQ = "/apis/kueue.x-k8s.io/v1beta2"
NS = "default"
CTL_NS = "cueue-system"
CHECK = "sample-multikueue"
MK = "kueue.x-k8s.io/multikueue"
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
W1, W2 = "multikueue-test-worker1", "multikueue-test-worker2"

MANAGER_CONFIG = CONTROLLER_CONFIG + """namespace: %s
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
multiKueue:
  gcInterval: 2s
  workerLostTimeout: 5s
""" % CTL_NS

WORKER_CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
"""
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets" % NS


def crds(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")


def worker_queues(w, cpu):
    """The worker's own flavor, ClusterQueue (cpu CPUs, no checks) and
    the LocalQueue of the manager's name in NS."""
    w.kubectl("apply", "-f", "-", input="""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: %s}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: %s}
spec: {clusterQueue: cluster-queue}
""" % (cpu, NS))


def secret(s, name, worker):
    with open(worker.kubeconfig, "rb") as f:
        kc = base64.b64encode(f.read()).decode()
    code, _, body = s.raw(
        "POST", "/api/v1/namespaces/%s/secrets" % CTL_NS, {
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": CTL_NS},
            "data": {"kubeconfig": kc}})
    eq(code, 201, "secret %s: %r" % (name, body))


def worker_name(i):
    """The MultiKueueCluster of worker i (0-based)."""
    return "multikueue-test-worker%d" % (i + 1)


def add_workers(s, n):
    """Workers 2..n (multikueue-setup.yaml has the first): their
    MultiKueueClusters, and all n in the MultiKueueConfig."""
    for i in range(1, n):
        s.kubectl("apply", "-f", "-", input="""
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: %s}
spec:
  clusterSource:
    kubeConfig: {locationType: Secret, location: worker%d-secret}
""" % (worker_name(i), i + 1))
    code, _, body = s.raw(
        "PATCH", KQ + "/multikueueconfigs/multikueue-test",
        {"spec": {"clusters": [worker_name(i) for i in range(n)]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "config with all workers: %r" % body)


class Clusters:
    """The manager (the case's server) and one worker per CPU quota in
    cpus (two in the tests), each with its controller (ctl_args: more
    arguments for every controller). The manager's ClusterQueue is the
    one of multikueue-setup.yaml (9 CPUs) unless manager_cpu says."""

    def __init__(self, s, *cpus, simulate="jobs", config=None, env=None,
                 ctl_args=(), manager_cpu=None, worker_config=None):
        self.m = s
        self.cfg, self.env, self.args = config or MANAGER_CONFIG, env, \
            ctl_args
        # The manager's ledger, kept across its restarts.
        self.store = os.path.join(s.dir, "manager-ledger.db")
        self.w = [Server(simulate=simulate) for _ in cpus]
        self.ctls = []
        for w, cpu in zip(self.w, cpus):
            crds(w)
            worker_queues(w, cpu)
            self.ctls.append(Controller(
                w, config=worker_config or WORKER_CONFIG, args=ctl_args))
        crds(s)
        s.namespace(CTL_NS)
        for i, w in enumerate(self.w):
            secret(s, "worker%d-secret" % (i + 1), w)
        with open(os.path.join(DATA, "multikueue-setup.yaml")) as f:
            setup = f.read()
        if manager_cpu is not None:
            setup = setup.replace("nominalQuota: 9", "nominalQuota: %s" %
                                  manager_cpu)
        s.kubectl("apply", "-f", "-", input=setup)
        add_workers(s, len(self.w))
        self.mctl = self.start_manager()
        self.dead = []
        self.history = [[] for _ in range(len(self.w) + 1)]
        # (monotonic time, server index, name, object or None) of every
        # change seen, in the order seen.
        self.timeline = []
        self.obs = {}
        for i, srv in enumerate([s] + self.w):
            self.obs[i] = [
                Observer(srv, KQ + "/namespaces/%s/workloads" % NS,
                         on_change=self._recorder(i)),
                Observer(srv, "/apis/batch/v1/namespaces/%s/jobs" % NS,
                         on_change=self._recorder(i))]

    def _recorder(self, i):
        lock = threading.Lock()

        def rec(name, old, new, rv, relisting):
            with lock:
                self.history[i].append((name, new))
                self.timeline.append((time.monotonic(), i, name, new))
        return rec

    def start_manager(self):
        return Controller(self.m, config=self.cfg, store=self.store,
                          env=self.env, args=self.args)

    def restart_manager(self):
        """SIGKILL the manager's controller and start it again on the
        same ledger."""
        self.mctl.stop(signal.SIGKILL)
        self.mctl = self.start_manager()

    def kill_worker(self, i):
        """SIGKILL worker i's API server (index into self.w) mid-run;
        its controller is stopped after."""
        for o in self.obs.pop(i + 1):
            o.stop()
        w = self.w[i]
        w.proc.send_signal(signal.SIGKILL)
        w.proc.wait()
        self.dead.append(i)

    def stop(self):
        for obs in self.obs.values():
            for o in obs:
                o.stop()
        self.mctl.stop()
        for i, c in enumerate(self.ctls):
            c.stop(signal.SIGKILL if i in self.dead else signal.SIGTERM)
        for i, w in enumerate(self.w):
            if i in self.dead:
                w.errf.close()
            else:
                w.stop()


def job(name, cpu="2", runtime_ms=1500, managed=True):
    spec = {"parallelism": 1, "completions": 1, "suspend": True,
            "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {"cpu": cpu}}}],
                "restartPolicy": "Never"}}}
    if managed:
        spec["managedBy"] = MK
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name":
                                    "user-queue"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": spec}


def jobset(name, runtime_ms=1500):
    """A JobSet of two replicatedJobs (1 and 2 CPUs) for MultiKueue."""
    def rj(rname, cpu):
        return {"name": rname, "replicas": 1, "template": {"spec": {
            "template": {"metadata": {"annotations": {
                "cueue.dev/sim-runtime-ms": str(runtime_ms)}}, "spec": {
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {"cpu": cpu}}}],
                "restartPolicy": "Never"}}}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name":
                                    "user-queue"}},
            "spec": {"suspend": True, "managedBy": MK, "replicatedJobs": [
                rj("workers", "1"), rj("driver", "2")]}}


def wl_of(srv, job_name):
    for w in srv.get_json(KQ + "/namespaces/%s/workloads" % NS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == job_name:
            return w
    return None


def check_of(w):
    for c in (w or {}).get("status", {}).get("admissionChecks") or []:
        if c["name"] == CHECK:
            return c
    return {}


def active(srv, path):
    return is_true(srv.get_json(path), "Active")


def wl_summary(w):
    """What a failed wait shows of a manager Workload: its conditions,
    the check, clusterName and nominatedClusterNames."""
    if not w:
        return "no Workload"
    st = w.get("status") or {}
    return "%s rv=%s conditions=%s check=%s clusterName=%s nominated=%s" % (
        w["metadata"]["name"], w["metadata"].get("resourceVersion"),
        ["%s=%s(%s)" % (c.get("type"), c.get("status"), c.get("reason"))
         for c in st.get("conditions") or []],
        {k: v for k, v in check_of(w).items()
         if k in ("state", "message", "retryCount")},
        st.get("clusterName"), st.get("nominatedClusterNames"))


def wait_wl(srv, job_name, pred, timeout, what):
    """Wait until pred(the Workload of job_name) holds; return the
    Workload. On time-out the failure names the Workload's last state."""
    seen = [None]

    def poll():
        seen[0] = wl_of(srv, job_name)
        return seen[0] if seen[0] and pred(seen[0]) else None
    try:
        return wait_for(poll, timeout, what=what)
    except Failure as e:
        raise Failure("%s; the Workload: %s" % (e, wl_summary(seen[0])))


def start_job(s, body):
    """Once both workers are Active, create Job body on the manager."""
    wait_for(lambda: active(s, KQ + "/multikueueclusters/" + W1) and
             active(s, KQ + "/multikueueclusters/" + W2), 30,
             what="both MultiKueueClusters Active")
    code, _, resp = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs" % NS,
                          body)
    eq(code, 201, "create job: %r" % resp)


@case("multikueue-dispatch-one-worker")
def dispatch(s):
    """Worker 1 has 1 CPU, worker 2 has 9: the 2-CPU Job is admitted on
    worker 2 only, runs there, and the manager's Job completes; the
    manager's multikueue_* metrics count one copy per worker and one
    admission, on worker 2."""
    port = free_port()
    k = Clusters(s, "1", "9", config=MANAGER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % port))
    try:
        wait_for(lambda: active(s, KQ + "/multikueueclusters/" + W1) and
                 active(s, KQ + "/multikueueclusters/" + W2), 30,
                 what="both MultiKueueClusters Active")
        mkc = s.get_json(KQ + "/multikueueclusters/" + W1)
        eq(cond(mkc, "Active")["reason"], "Active", "cluster reason")
        wait_for(lambda: active(s, KQ + "/admissionchecks/" + CHECK), 20,
                 what="the AdmissionCheck Active")
        p = s.kubectl("get", "multikueuecluster", W1)
        check("CONNECTED" in p.stdout and "True" in p.stdout,
              "printer columns: %s" % p.stdout)
        code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                              % NS, job("a"))
        eq(code, 201, "create job: %r" % body)
        w = wait_for(lambda: (lambda w: w if check_of(w).get("state") ==
                              "Ready" else None)(wl_of(s, "a")), 40,
                     what="the check Ready")
        name = w["metadata"]["name"]
        eq(check_of(w)["message"],
           'The workload got reservation on "%s"' % W2, "check message")
        m = scrape(port)
        for wk in (W1, W2):
            eq(metric(m, "multikueue_workloads_dispatched_total",
                      cluster_queue="cluster-queue", cluster=wk), 1.0,
               "dispatched to %s" % wk)
        eq(metric(m, "multikueue_workloads_admitted_total",
                  cluster_queue="cluster-queue", cluster=W2), 1.0,
           "admitted on worker 2")
        eq(metric(m, "multikueue_workloads_admitted_total",
                  cluster_queue="cluster-queue", cluster=W1), None,
           "never admitted on worker 1")
        # The Workload's MultiKueue event names the winner (as Kueue's).
        wait_for(lambda: any(
            e.get("reason") == "MultiKueue" and e.get("type") == "Normal"
            and e.get("regarding", {}).get("name") == name and
            W2 in e.get("note", "") for e in s.get_json(
                "/apis/events.k8s.io/v1/namespaces/%s/events" % NS)[
                    "items"]), 20, what="the MultiKueue event")
        eq(w["status"].get("clusterName"), W2, "status.clusterName")
        # The manager's Job completes with the worker's status.
        j = wait_for(lambda: (lambda j: j if is_true(j, "Complete") else
                              None)(s.get_json(
                                  "/apis/batch/v1/namespaces/%s/jobs/a"
                                  % NS)), 40,
                     what="the manager's Job Complete")
        eq(j["status"].get("succeeded"), 1, "succeeded copied back")
        wait_for(lambda: is_true(wl_of(s, "a"), "Finished"), 30,
                 what="the manager's Workload Finished")
        # The copies go once it finished.
        wait_for(lambda: not k.w[1].get_json(
            KQ + "/namespaces/%s/workloads" % NS)["items"], 30,
            what="worker 2's copy removed")
        wait_for(lambda: not k.w[1].get_json(
            "/apis/batch/v1/namespaces/%s/jobs" % NS)["items"], 30,
            what="worker 2's job removed")
        # From the watch histories: worker 1 never admitted it, never
        # ran a job; worker 2 ran exactly one; the manager never ran
        # the job itself (its simulator leaves managedBy alone: no pods
        # counted before the copy back).
        w1_admitted = [n for n, o in k.history[1] if o and
                       is_true(o, "QuotaReserved")]
        eq(w1_admitted, [], "worker 1 never reserved quota")
        w1_jobs = [n for n, o in k.history[1] if o and
                   o.get("kind", "Job") == "Job" and "spec" in o and
                   "template" in o["spec"]]
        eq(w1_jobs, [], "no job on worker 1")
        w2_jobs = {n for n, o in k.history[2] if o and "template" in
                   o.get("spec", {})}
        eq(w2_jobs, {"a"}, "the job ran on worker 2")
        remote = [o for n, o in k.history[2] if o and n == name]
        check(remote and remote[0]["metadata"]["labels"].get(ORIGIN) ==
              "multikueue", "the copy carries the origin label")
    finally:
        k.stop()


@case("multikueue-orphans-collected")
def orphans(s):
    """A copy with this manager's origin whose manager Workload does not
    exist is collected within gcInterval; one of another origin is not."""
    k = Clusters(s, "9", "9")
    try:
        wait_for(lambda: active(s, KQ + "/multikueueclusters/" + W2), 30,
                 what="worker 2 Active")
        for name, origin in (("orphan", "multikueue"), ("other", "else")):
            code, _, body = k.w[1].raw(
                "POST", KQ + "/namespaces/%s/workloads" % NS, {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "Workload",
                    "metadata": {"name": name, "namespace": NS,
                                 "labels": {ORIGIN: origin}},
                    "spec": {"queueName": "nowhere", "podSets": [{
                        "name": "main", "count": 1, "template": {"spec": {
                            "containers": [{"name": "c", "image": "x"}],
                            "restartPolicy": "Never"}}}]}})
            eq(code, 201, "%s: %r" % (name, body))

        def names():
            return {w["metadata"]["name"] for w in k.w[1].get_json(
                KQ + "/namespaces/%s/workloads" % NS)["items"]}
        wait_for(lambda: "orphan" not in names(), 30,
                 what="the orphan collected")
        eq(names(), {"other"}, "another origin's copy left alone")
    finally:
        k.stop()


@case("multikueue-worker-lost-requeued")
def worker_lost(s):
    """The winning worker's API server is killed while the job runs
    there: its MultiKueueCluster goes Active=False with the connection
    error, the check stays Active (SomeActiveClusters), and after
    workerLostTimeout the Workload is requeued and lands on the other
    worker, where the job completes. No job ever ran on two workers at
    once (from the watch histories)."""
    k = Clusters(s, "9", "9")
    try:
        start_job(s, job("b", runtime_ms=8000))
        w = wait_for(lambda: (lambda w: w if check_of(w).get("state") ==
                              "Ready" else None)(wl_of(s, "b")), 40,
                     what="the check Ready")
        first = w["status"]["clusterName"]
        lost, other = (0, W2) if first == W1 else (1, W1)
        # The job runs on the winner only.
        wait_for(lambda: any(o and n == "b" and "template" in
                             o.get("spec", {}) for n, o in
                             k.history[lost + 1]), 20,
                 what="the job on %s" % first)
        check(not any(o and n == "b" and "template" in o.get("spec", {})
                      for n, o in k.history[2 - lost]),
              "no job on the other worker while the winner runs it")
        # The manager's Job shows the worker's running pod before the
        # worker goes: nothing but MultiKueue may clear it after, or the
        # evicted Workload never releases its quota.
        wait_for(lambda: ((s.get_json("/apis/batch/v1/namespaces/%s/jobs/b"
                                      % NS).get("status") or {}).get(
                                          "active") or 0) > 0, 20,
                 what="the manager's Job active (copied back)")
        k.kill_worker(lost)
        wait_for(lambda: not active(s, KQ + "/multikueueclusters/" +
                                    first), 60,
                 what="%s Active=False" % first)
        c = cond(s.get_json(KQ + "/multikueueclusters/" + first), "Active")
        eq(c["reason"], "ClientConnectionFailed", "reason")
        check(c["message"], "the connection error as message")
        ac = wait_for(lambda: (lambda c: c if c and c.get("reason") ==
                               "SomeActiveClusters" else None)(cond(
            s.get_json(KQ + "/admissionchecks/" + CHECK), "Active")),
            30, what="the check SomeActiveClusters")
        eq(ac["status"], "True", "still Active")
        # Requeued after workerLostTimeout, dispatched to the other.
        w = wait_wl(s, "b", lambda w: check_of(w).get("state") ==
                    "Ready" and w["status"].get("clusterName") == other,
                    60, what="the Workload Ready on %s" % other)
        wait_for(lambda: is_true(s.get_json(
            "/apis/batch/v1/namespaces/%s/jobs/b" % NS), "Complete"), 60,
            what="the manager's Job Complete")
        check(any(c.get("type") == "Evicted" for c in cond_history(
            k.history[0], w["metadata"]["name"])),
            "the manager's Workload was evicted (requeued) on the way")
    finally:
        k.stop()


@case("multikueue-started-when-answers-come-after-events")
def answers_after_events(s):
    """The manager's API server answers every Workload patch 1.5 s after
    carrying it out, so the watch events of the check-Ready and Admitted
    writes reach the controller before their answers: the job reconcile
    those events ask for finds a write in flight to the Workload and
    skips the Job. The answers must bring the Job back: it is started
    (unsuspended), runs on the worker and completes on the manager (the
    88 manager Jobs of the 1,000-Job bench were never unsuspended)."""
    k = Clusters(s, "9", "9")
    try:
        code, _, body = s.raw("POST", "/__test/faults", {"rules": [
            {"method": "PATCH", "pathPrefix": KQ + "/namespaces/%s/workloads/"
             % NS, "answerDelayMs": 1500}]})
        eq(code, 200, "faults: %r" % body)
        start_job(s, job("late", runtime_ms=1500))
        wait_wl(s, "late", lambda w: is_true(w, "Admitted") and
                check_of(w).get("state") == "Ready", 60,
                what="Admitted with the check Ready")
        wait_for(lambda: s.get_json("/apis/batch/v1/namespaces/%s/jobs/late"
                                    % NS)["spec"].get("suspend") is False,
                 30, what="the manager's Job unsuspended")
        wait_for(lambda: is_true(s.get_json(
            "/apis/batch/v1/namespaces/%s/jobs/late" % NS), "Complete"), 60,
            what="the manager's Job Complete")
    finally:
        k.stop()


@case("multikueue-finish-bounded-by-worker-lost-timeout")
def finish_bounded(s):
    """The winner's copy of the Workload is Finished on the worker while
    its job runs on there (finished by hand): the manager waits for the
    worker's job to be seen finished, but no longer than
    workerLostTimeout (5 s here); then its Workload is Finished as its
    copy (reason and message), the manager's Job keeps the worker job's
    last status, and the copies go."""
    k = Clusters(s, "9", "9")
    try:
        start_job(s, job("f", runtime_ms=120000))
        w = wait_wl(s, "f", lambda w: check_of(w).get("state") == "Ready",
                    40, what="the check Ready")
        win = 0 if w["status"]["clusterName"] == W1 else 1
        worker = k.w[win]
        wait_for(lambda: any(job_running(o) for n, o in k.history[win + 1]
                             if n == "f"), 30, what="the job running")
        path = KQ + "/namespaces/%s/workloads/%s" % (
            NS, w["metadata"]["name"])
        copy = worker.get_json(path)
        conds = [c for c in copy["status"].get("conditions") or []
                 if c.get("type") != "Finished"]
        conds.append({"type": "Finished", "status": "True",
                      "reason": "FinishedByHand",
                      "message": "finished on the worker, job left running",
                      "lastTransitionTime": time.strftime(
                          "%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        t0 = time.monotonic()
        code, _, body = worker.raw(
            "PATCH", path + "/status", {"status": {"conditions": conds}},
            headers={"Content-Type": "application/merge-patch+json"})
        eq(code, 200, "the copy Finished on the worker: %r" % body)
        done = wait_wl(s, "f", lambda w: is_true(w, "Finished"), 60,
                       what="the manager's Workload Finished")
        check(time.monotonic() - t0 >= 5.0,
              "finished only after workerLostTimeout (waited %.1f s)" %
              (time.monotonic() - t0))
        c = cond(done, "Finished")
        eq((c["reason"], c["message"]),
           ("FinishedByHand", "finished on the worker, job left running"),
           "the copy's reason and message")
        j = s.get_json("/apis/batch/v1/namespaces/%s/jobs/f" % NS)
        check(not is_true(j, "Complete"), "the manager's Job not Complete")
        eq((j.get("status") or {}).get("active"), 1,
           "the worker job's last status on the manager's Job")
        wait_for(lambda: not worker.get_json(
            "/apis/batch/v1/namespaces/%s/jobs" % NS)["items"], 30,
            what="the worker's job removed")
    finally:
        k.stop()


@case("multikueue-jobset")
def jobset_case(s):
    """A JobSet is dispatched likewise: admitted on exactly one worker,
    run there by its JobSet controller, and the manager's JobSet shows
    the worker's status until it completes."""
    k = Clusters(s, "2", "9", simulate="jobs,jobsets")
    try:
        wait_for(lambda: active(s, KQ + "/admissionchecks/" + CHECK) and
                 active(s, KQ + "/multikueueclusters/" + W2), 40,
                 what="the check and worker 2 Active")
        code, _, body = s.raw("POST", JOBSETS, jobset("js"))
        eq(code, 201, "create jobset: %r" % body)
        w = wait_for(lambda: (lambda w: w if check_of(w).get("state") ==
                              "Ready" else None)(wl_of(s, "js")), 40,
                     what="the check Ready")
        eq(w["status"].get("clusterName"), W2, "status.clusterName")
        js = wait_for(lambda: (lambda j: j if (j.get("status") or {}).get(
            "terminalState") == "Completed" else None)(
            s.get_json(JOBSETS + "/js")), 60,
            what="the manager's JobSet Completed")
        check(js["spec"].get("managedBy") == MK, "still MultiKueue's")
        wait_for(lambda: is_true(wl_of(s, "js"), "Finished"), 30,
                 what="the manager's Workload Finished")
        # The JobSet's child Jobs show in the Job watch histories.
        check(not any(o and "template" in o.get("spec", {})
                      for n, o in k.history[1]), "no job on worker 1")
        check(any(o and "template" in o.get("spec", {})
                  for n, o in k.history[2]), "its jobs ran on worker 2")
    finally:
        k.stop()


FW = ["batch/job", "kubeflow.org/pytorchjob", "ray.io/rayjob"]
FW_LIST = 'frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]'
FW_NEW = "frameworks: [%s]" % ", ".join('"%s"' % f for f in FW)
PYTORCHJOBS = "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs" % NS
RAYJOBS = "/apis/ray.io/v1/namespaces/%s/rayjobs" % NS


def fw_sample(file, name, managed_by, suspend=None):
    """tests/data/frameworks/<file> as name in NS, queued to user-queue,
    handed to MultiKueue at its kind's managedBy (a key path), with a
    short simulated runtime (suspend: spec.suspend, as Kueue's webhook
    sets it)."""
    obj = sample(file, name, ns=NS, queue="user-queue", runtime_ms=500,
                 suspend=suspend)
    at = obj
    for k in managed_by[:-1]:
        at = at.setdefault(k, {})
    at[managed_by[-1]] = MK
    return obj


@case("multikueue-kubeflow-and-ray", simulate="jobs,kubeflow,ray")
def kubeflow_and_ray(s):
    """A PyTorchJob (managedBy at spec.runPolicy) and a RayJob are
    dispatched through their adapters: each runs on the worker (created
    there without managedBy, with Kueue's prebuilt Workload label) while
    the manager's stand-in operators leave them alone, and the manager's
    objects show the worker's final status; their Workloads finish."""
    k = Clusters(s, "9", simulate="jobs,kubeflow,ray",
                 config=MANAGER_CONFIG.replace(FW_LIST, FW_NEW),
                 worker_config=WORKER_CONFIG.replace(FW_LIST, FW_NEW))
    w = k.w[0]
    try:
        wait_for(lambda: active(s, KQ + "/admissionchecks/" + CHECK) and
                 active(s, KQ + "/multikueueclusters/" + W1), 40,
                 what="the check and the worker Active")
        for path, body in (
                (PYTORCHJOBS, fw_sample("pytorchjob.yaml", "pt",
                                        ["spec", "runPolicy",
                                         "managedBy"])),
                (RAYJOBS, fw_sample("rayjob.yaml", "rj",
                                    ["spec", "managedBy"], True))):
            code, _, resp = s.raw("POST", path, body)
            eq(code, 201, "create %s: %r" % (body["kind"], resp))

        def done(path, pred):
            o = s.get_json(path)
            return o if pred(o.get("status") or {}) else None
        pt = wait_for(lambda: done(PYTORCHJOBS + "/pt", lambda st: any(
            c.get("type") == "Succeeded" and c.get("status") == "True"
            for c in st.get("conditions") or [])), 60,
            what="the manager's PyTorchJob Succeeded (copied back)")
        rj = wait_for(lambda: done(RAYJOBS + "/rj", lambda st: st.get(
            "jobDeploymentStatus") == "Complete"), 60,
            what="the manager's RayJob Complete (copied back)")
        eq(pt["spec"]["runPolicy"].get("managedBy"), MK, "still MK's")
        eq(rj["spec"].get("managedBy"), MK, "still MK's")
        for name in ("pt", "rj"):
            wait_wl(s, name, lambda wl: is_true(wl, "Finished"), 30,
                    "the manager's Workload of %s Finished" % name)
        # The manager ran nothing: no Pod there, no RayCluster.
        eq(s.get_json("/api/v1/namespaces/%s/pods" % NS)["items"], [],
           "pods on the manager")
        eq(s.get_json("/apis/ray.io/v1/namespaces/%s/rayclusters" %
                      NS)["items"], [], "rayclusters on the manager")
        # The worker's copies were created by MultiKueue, and its
        # operators ran them (their pods and children appeared there).
        mine = [e for e in w.access_log()
                if e.get("verb") == "POST" and "multikueue" in
                (e.get("userAgent") or "") and
                ("/pytorchjobs" in e.get("path", "") or
                 "/rayjobs" in e.get("path", ""))]
        eq(sorted(e["path"].rsplit("/", 1)[1] for e in mine
                  if e["code"] == 201), ["pytorchjobs", "rayjobs"],
           "the worker's copies created by the manager: %r" %
           [(e["path"], e["code"]) for e in mine])
    finally:
        k.stop()


@case("multikueue-manager-killed-mid-dispatch")
def manager_killed(s):
    """The manager's controller is SIGKILLed while Workloads are being
    copied to the workers and started again: every Job still runs on
    exactly one worker (from the workers' watch histories) and
    completes on the manager."""
    k = Clusters(s, "9", "9")
    try:
        wait_for(lambda: active(s, KQ + "/admissionchecks/" + CHECK), 40,
                 what="the check Active")
        names = ["k%d" % i for i in range(4)]
        for n in names:
            code, _, body = s.raw(
                "POST", "/apis/batch/v1/namespaces/%s/jobs" % NS,
                job(n, cpu="1", runtime_ms=2500))
            eq(code, 201, "create %s: %r" % (n, body))
        wait_for(lambda: any(o for _, o in k.history[1] + k.history[2]),
                 30, what="a first copy on a worker")
        k.restart_manager()
        for n in names:
            wait_for(lambda n=n: is_true(s.get_json(
                "/apis/batch/v1/namespaces/%s/jobs/%s" % (NS, n)),
                "Complete"), 90, what="%s Complete" % n)
        for n in names:
            ran = [i for i in (1, 2) if any(
                o and m == n and "template" in o.get("spec", {})
                for m, o in k.history[i])]
            eq(len(ran), 1, "%s ran on exactly one worker: %r" % (n, ran))
        check_one_at_a_time(k)
    finally:
        k.stop()


def copy_of(wl):
    """A worker's copy of manager Workload wl, as MultiKueue makes it."""
    labels = {k: v for k, v in (wl["metadata"].get("labels") or {}).items()
              if k != "kueue.x-k8s.io/job-uid"}
    labels[ORIGIN] = "multikueue"
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": wl["metadata"]["name"], "namespace": NS,
                         "labels": labels},
            "spec": wl["spec"]}


@case("multikueue-manager-restart-keeps-its-choice")
def manager_restart_choice(s):
    """The manager's controller is SIGKILLed after it chose a worker and
    the job runs there, leaving what a kill before the removal of the
    other copy leaves: an admitted copy on the other worker. Restarted,
    it sees that worker first (the chosen one refuses its lists for a
    while). It keeps its choice - the other copy goes, the job is never
    started there - and waits for the chosen worker, where the job
    completes. Checked from all three watch histories."""
    cfg = MANAGER_CONFIG.replace("workerLostTimeout: 5s",
                                 "workerLostTimeout: 120s")
    k = Clusters(s, "9", "9", config=cfg)
    try:
        start_job(s, job("r", runtime_ms=40000))
        w = wait_wl(s, "r", lambda w: check_of(w).get("state") == "Ready",
                    40, what="the check Ready")
        win = 0 if w["status"]["clusterName"] == W1 else 1
        chosen, other = k.w[win], k.w[1 - win]
        wait_for(lambda: any(job_running(o) for n, o in k.history[win + 1]
                             if n == "r"), 30, what="the job running")
        k.mctl.stop(signal.SIGKILL)
        code, _, body = other.raw(
            "POST", KQ + "/namespaces/%s/workloads" % NS, copy_of(w))
        eq(code, 201, "the leftover copy: %r" % body)
        wl_path = KQ + "/namespaces/%s/workloads/%s" % (
            NS, w["metadata"]["name"])
        wait_for(lambda: is_true(other.get_json(wl_path), "Admitted"), 30,
                 what="the leftover copy admitted")
        code, _, body = chosen.raw("POST", "/__test/faults", {"rules": [
            {"method": "GET", "pathPrefix": p, "code": 503}
            for p in ("/apis/kueue.x-k8s.io/v1beta2/workloads",
                      "/apis/batch/v1/jobs")]})
        eq(code, 200, "faults: %r" % body)
        k.mctl = k.start_manager()
        # The restarted manager acted on the other worker: its copy
        # removed (or, wrongly, the job created there).
        wait_for(lambda: other.raw("GET", wl_path)[0] == 404 or any(
            n == "r" for n, o in k.history[2 - win] if o), 60,
            what="the manager acting on the other worker")
        code, _, body = chosen.raw("DELETE", "/__test/faults")
        eq(code, 200, "faults cleared: %r" % body)
        wait_for(lambda: is_true(s.get_json(
            "/apis/batch/v1/namespaces/%s/jobs/r" % NS), "Complete"), 90,
            what="the manager's Job Complete")
        check_one_at_a_time(k)
        check(not any(n == "r" and o for n, o in k.history[2 - win]),
              "no job on the other worker")
    finally:
        k.stop()


@case("multikueue-incremental-dispatcher")
def incremental(s):
    """dispatcherName Incremental with stepSize 1: the first round
    nominates worker 1 alone (name order); worker 1 has no room, so the
    next round (shortened here) adds worker 2, which admits it."""
    cfg = MANAGER_CONFIG.replace("  workerLostTimeout: 5s\n", """\
  workerLostTimeout: 5s
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
  incrementalDispatcherConfig:
    stepSize: 1
""")
    k = Clusters(s, "1", "9", config=cfg, env={"CUEUE_MK_ROUND_MS": "4000"})
    try:
        wait_for(lambda: active(s, KQ + "/admissionchecks/" + CHECK) and
                 active(s, KQ + "/multikueueclusters/" + W2), 40,
                 what="the check and worker 2 Active")
        code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                              % NS, job("inc"))
        eq(code, 201, "create job: %r" % body)
        w = wait_for(lambda: (lambda w: w if (w or {}).get(
            "status", {}).get("nominatedClusterNames") else None)(
            wl_of(s, "inc")), 30, what="the first round")
        eq(w["status"]["nominatedClusterNames"], [W1], "round 1")
        wait_for(lambda: any(o for _, o in k.history[1]), 20,
                 what="the copy on worker 1")
        check(not any(o for _, o in k.history[2]),
              "nothing on worker 2 in round 1")
        w = wait_for(lambda: (lambda w: w if check_of(w).get("state") ==
                              "Ready" else None)(wl_of(s, "inc")), 60,
                     what="the check Ready")
        eq(w["status"].get("clusterName"), W2, "admitted on worker 2")
        wait_for(lambda: is_true(s.get_json(
            "/apis/batch/v1/namespaces/%s/jobs/inc" % NS), "Complete"), 60,
            what="the manager's Job Complete")
    finally:
        k.stop()


def job_running(o):
    """A Job (not a Workload) that exists, unsuspended and unfinished."""
    if not o or "template" not in o.get("spec", {}) or \
            o["spec"].get("suspend"):
        return False
    return not any(c.get("type") in ("Complete", "Failed") and
                   c.get("status") == "True"
                   for c in (o.get("status") or {}).get("conditions") or [])


def two_at_once(k):
    """The Jobs seen running on two workers at the same time, from the
    workers' watch histories in time order."""
    running, bad = {}, set()
    for _, i, name, o in sorted(list(k.timeline), key=lambda e: e[0]):
        if i == 0:
            continue
        running[(i, name)] = job_running(o)
        if sum(1 for j in range(1, len(k.history))
               if running.get((j, name))) > 1:
            bad.add(name)
    return sorted(bad)


def changed_mind(hist):
    """Manager Workloads whose status.clusterName went from one worker
    to another without being cleared (requeued) in between, from the
    manager's watch history."""
    last, bad = {}, []
    for name, o in hist:
        if not o or "podSets" not in o.get("spec", {}):
            continue
        cn = (o.get("status") or {}).get("clusterName")
        if cn and last.get(name) and cn != last[name]:
            bad.append((name, last[name], cn))
        last[name] = cn
    return bad


def check_one_at_a_time(k):
    """All three watch histories: no Job ran on two workers at once, and
    the manager never moved a Workload from one worker to another."""
    eq(two_at_once(k), [], "jobs running on both workers at once")
    eq(changed_mind(k.history[0]), [],
       "manager Workloads moved between workers without a requeue")


def cond_history(hist, name):
    """Every condition ever seen on object name in a watch history."""
    out = []
    for n, o in hist:
        if n == name and o:
            out.extend((o.get("status") or {}).get("conditions") or [])
    return out


if __name__ == "__main__":
    from cuetest import run_cases
    run_cases()
