# SPDX-License-Identifier: Apache-2.0
"""cuetest.crashsoak - drive a scaled-down Kueue scheduler-perf
baseline through cueue-controller while the controller is killed, the
leader is replaced, or the API server misbehaves, and check the history.

The shape (Kueue's baseline, tests/bench/configs/baseline/generator.yaml,
scaled down by Shape): cohorts of ClusterQueues with nominal cpu quota and
a borrowingLimit, preemption reclaimWithinCohort Any and
withinClusterQueue LowerPriority, one LocalQueue per ClusterQueue, and
Workloads created directly (no Jobs) in classes small / medium / large
with priorities. The test driver (Driver) plays Kueue's scheduler-perf
runner: `runningMs` after a Workload is Admitted it sets Finished=True;
an evicted Workload gets its reservation cleared (status.admission
removed, QuotaReserved=False, Admitted=False).

History follows the Workloads with cuetest.observe.Observer from the start
(resuming after dropped watches, relisting after 410) and checks at every
resourceVersion it sees:
  - no ClusterQueue holds more than nominal + borrowingLimit and no
    cohort more than the sum of its nominal quotas;
  - no Workload is admitted twice without an eviction in between: a
    reservation appears again only after one ended with Evicted=True,
    a reservation is never rewritten while held, and nothing Finished is
    admitted again.
At the end: every Workload was admitted and Finished, every ClusterQueue
reports zero usage, and the SQLite ledger (read with sqlite3 once the
controller has stopped) holds no live decision and no usage, as the API.
After every SIGKILL the ledger is also checked against a fresh LIST: every
Workload the API shows holding quota has a live ledger decision for the
same ClusterQueue and usage (docs/architecture.md lesson 3: recorded before
announced).

Entry points: run_crash (SIGKILL + restart on the same ledger),
run_faults (API fault injection; returns the figures to compare with a
clean run), run_leader (two replicas, the leader killed or paused). Each
returns a summary dict; a failed check raises Failure.
"""
import datetime
import heapq
import json
import os
import random
import signal
import sqlite3
import threading
import time
from collections import Counter

from .checks import Failure, check, wait_for
from .env import LOGS, ROOT, TEST
from .http import retrying
from .kobj import cond, is_true, milli
from .observe import Observer
from . import procs
from .procs import Controller

NS = "perf"
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
WLS = KUEUE + "/namespaces/%s/workloads" % NS
CQS = KUEUE + "/clusterqueues"
CTL_UA = "cueue-controller/"
WRITES = ("POST", "PUT", "PATCH", "DELETE")
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def log(msg):
    print("    " + msg, flush=True)


# ---- the shape ------------------------------------------------------------

class Shape:
    """A scaled-down baseline. Per ClusterQueue, `per_cq` Workloads split
    7:2:1 between small (1 cpu), medium (2 cpu) and large (= nominal)
    as the baseline's 350:100:50; each class created evenly over
    `create_s` seconds; runtimes are the baseline's times
    `runtime_scale` (longer runs make the queues contend)."""

    CLASSES = (  # name, cpu share of nominal, runtime ms, priority, share
        ("small", 0.25, 200, 50, 0.7),
        ("medium", 0.5, 500, 100, 0.2),
        ("large", 1.0, 1000, 200, 0.1))

    def __init__(self, cohorts=2, cqs=3, nominal=4, borrowing=8,
                 workloads=300, create_s=60.0, runtime_scale=4.0, seed=1):
        self.cohorts = cohorts
        self.cqs = cqs
        self.nominal = nominal
        self.borrowing = borrowing
        self.runtime_scale = runtime_scale
        self.create_s = create_s
        self.rng = random.Random(seed)
        self.cq_names = ["c%d-cq%d" % (i, j) for i in range(cohorts)
                         for j in range(cqs)]
        self.cohort_of = {n: n.split("-")[0] for n in self.cq_names}
        per_cq = max(1, workloads // len(self.cq_names))
        self.workloads = []  # (t_offset_s, name, cq, class, cpu, ms, prio)
        for cq in self.cq_names:
            for cls, share, ms, prio, frac in self.CLASSES:
                n = max(1, int(round(per_cq * frac)))
                every = create_s / n
                cpu = max(1, int(round(nominal * share)))
                for i in range(n):
                    t = i * every + self.rng.random() * every * 0.5
                    self.workloads.append((t, "%s-%s-%d" % (cq, cls, i), cq,
                                           cls, cpu,
                                           int(ms * runtime_scale), prio))
        self.workloads.sort()
        self.by_name = {w[1]: w for w in self.workloads}

    def manifests(self):
        docs = ["""apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""]
        for cq in self.cq_names:
            docs.append("""apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  cohortName: %s
  namespaceSelector: {}
  preemption:
    reclaimWithinCohort: Any
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: %d, borrowingLimit: %d}
""" % (cq, self.cohort_of[cq], self.nominal, self.borrowing))
            docs.append("""apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-%s, namespace: %s}
spec: {clusterQueue: %s}
""" % (cq, NS, cq))
        return "---\n".join(docs)

    def workload(self, name):
        _, _, cq, cls, cpu, ms, prio = self.by_name[name]
        return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": name, "namespace": NS, "labels": {
                    "kueue.x-k8s.io/performance-scheduler-running-ms":
                        str(ms),
                    "kueue.x-k8s.io/performance-scheduler-class": cls}},
                "spec": {"queueName": "lq-" + cq, "priority": prio,
                         "podSets": [{"name": "main", "count": 1,
                                      "template": {"spec": {"containers": [{
                                          "name": "c", "image": "busybox",
                                          "resources": {"requests": {
                                              "cpu": str(cpu)}}}]}}}]}}


def setup(s, shape):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace(NS)
    s.kubectl("apply", "-f", s.file("shape.yaml", shape.manifests()))


def start_shape(s, workloads, create_s, runtime_scale, seed):
    """A Shape set up on s; returns it and a ledger path in s.dir."""
    shape = Shape(workloads=workloads, create_s=create_s,
                  runtime_scale=runtime_scale, seed=seed)
    setup(s, shape)
    return shape, os.path.join(s.dir, "ledger.db")


def controller_config(qps=50, burst=100, leader=False):
    """The soak's controller: Kueue's clientConnection (qps 50, burst 100)
    unless told otherwise."""
    return procs.controller_config(leader=leader, qps=qps, burst=burst)


# ---- small object helpers -------------------------------------------------

def holds(obj):
    """(ClusterQueue, milli-cpu) the Workload holds, or None: reserved
    (QuotaReserved=True with status.admission) and not Finished."""
    if obj is None or is_true(obj, "Finished"):
        return None
    adm = (obj.get("status") or {}).get("admission")
    if not adm or not is_true(obj, "QuotaReserved"):
        return None
    m = sum(milli((psa.get("resourceUsage") or {}).get("cpu", "0"))
            for psa in adm.get("podSetAssignments") or [])
    return adm.get("clusterQueue"), m


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def ts(e):
    """An access-log time in seconds (only differences are used)."""
    return datetime.datetime.strptime(
        e["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


# ---- following the Workloads ----------------------------------------------

class History:
    """The Workloads of NS followed by an Observer (resuming after a
    dropped watch, relisting after 410; retrying through injected
    faults), checking the invariants of the module docstring at every
    resourceVersion: the transitions for every change, the quota for
    every watch event and once for the state a relist jumps to.
    listeners: callables (name, old, new) run under self.lock after the
    checks."""

    def __init__(self, s, shape, listeners=()):
        self.s = s
        self.shape = shape
        self.listeners = list(listeners)
        self.events = 0
        self.checks = 0  # invariant evaluations (one per state seen)
        self.violations = []
        self.trace = []  # (rv, name, cq, milli, flags) per change
        self.admissions = Counter()  # name -> reservations seen
        self.evictions = Counter()
        self.cleared_after_evict = {}  # name -> last release was evicted
        self.finished = set()
        self.ever_admitted = set()
        self.peak_cq = Counter()
        self.peak_cohort = Counter()
        self.held = {}  # name -> (cq, milli)
        self.obs = Observer(s, WLS, on_change=self._change,
                            after_relist=self._check_quota, faulty=True,
                            watch_timeout_s=300, join_s=20)
        self.lock = self.obs.lock

    # -- invariants --
    def _violate(self, msg):
        if len(self.violations) < 200:
            self.violations.append(msg)

    def _check_quota(self, rv):
        self.checks += 1
        per_cq, per_cohort = Counter(), Counter()
        for cq, m in self.held.values():
            per_cq[cq] += m
            per_cohort[self.shape.cohort_of.get(cq, cq)] += m
        lim = (self.shape.nominal + self.shape.borrowing) * 1000
        tot = self.shape.nominal * self.shape.cqs * 1000
        for cq, m in per_cq.items():
            self.peak_cq[cq] = max(self.peak_cq[cq], m)
            if m > lim:
                self._violate("rv %s: ClusterQueue %s holds %dm > %dm "
                              "(%s)" % (rv, cq, m, lim, sorted(
                                  n for n, h in self.held.items()
                                  if h[0] == cq)))
        for co, m in per_cohort.items():
            self.peak_cohort[co] = max(self.peak_cohort[co], m)
            if m > tot:
                self._violate("rv %s: cohort %s holds %dm > %dm" % (
                    rv, co, m, tot))

    def _transition(self, name, old, new, rv):
        was, now = holds(old), holds(new)
        if new is not None and is_true(new, "Evicted") and \
                not is_true(old, "Evicted"):
            self.evictions[name] += 1
        if now and not was:
            if name in self.finished:
                self._violate("rv %s: %s admitted after Finished" % (
                    rv, name))
            if self.admissions[name] > 0 and \
                    not self.cleared_after_evict.get(name):
                self._violate("rv %s: %s admitted again without an "
                              "eviction in between" % (rv, name))
            self.admissions[name] += 1
            self.ever_admitted.add(name)
            self.cleared_after_evict[name] = False
        elif was and now:
            a = (old["status"].get("admission"),
                 cond(old, "QuotaReserved").get("lastTransitionTime"))
            b = (new["status"].get("admission"),
                 cond(new, "QuotaReserved").get("lastTransitionTime"))
            if a != b:
                self._violate("rv %s: %s admission rewritten while held: "
                              "%r -> %r" % (rv, name, a, b))
        elif was and not now:
            if new is not None and is_true(new, "Finished"):
                pass
            elif new is not None and is_true(new, "Evicted"):
                self.cleared_after_evict[name] = True
            elif new is not None:
                self._violate("rv %s: %s lost its reservation without an "
                              "eviction or finish" % (rv, name))
        if new is not None and is_true(new, "Finished"):
            self.finished.add(name)
        if now:
            self.held[name] = now
        else:
            self.held.pop(name, None)
        h = now or (None, 0)
        self.trace.append((rv, name, h[0], h[1], "".join(
            k[0] for k in ("QuotaReserved", "Admitted", "Evicted",
                           "Finished") if is_true(new, k))))

    def _change(self, name, old, new, rv, relisting):
        self.events += 1
        self._transition(name, old, new, rv)
        if not relisting:  # a relist's state is checked once, at its end
            self._check_quota(rv)
        for fn in self.listeners:
            fn(name, old, new)

    @property
    def relists(self):
        return self.obs.relists

    def snapshot(self):
        return self.obs.snapshot()

    def halt(self):
        self.obs.halt()

    def stop(self):
        self.obs.stop()

    def dump(self, path):
        with open(path, "w") as f:
            json.dump({"trace": self.trace, "violations": self.violations},
                      f)


# ---- the test driver ------------------------------------------------------

class Driver:
    """Creates the shape's Workloads on schedule; `runningMs` after one
    is Admitted sets Finished=True; clears the reservation of an evicted
    one. Writes are merge patches guarded by resourceVersion, retried
    through 409 (re-read) and injected 429/5xx."""

    def __init__(self, s, shape, workers=6):
        self.s = s
        self.shape = shape
        self.heap = []  # (due, seq, kind, name, epoch)
        self.seq = 0
        self.cv = threading.Condition()
        self.created = set()
        self.finishes = 0
        self.clears = 0
        self.conflicts = 0
        self.errors = []
        self.epoch = Counter()  # name -> admissions seen (driver view)
        self.scheduled_clear = set()
        self.history = None
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._work, daemon=True)
                         for _ in range(workers)]
        self._creator = None
        self.t0 = None

    # called by History under its lock
    def on_change(self, name, old, new):
        if new is None or is_true(new, "Finished"):
            return
        if is_true(new, "Admitted") and not is_true(old, "Admitted"):
            self.epoch[name] += 1
            ms = self.shape.by_name[name][5] if name in \
                self.shape.by_name else 100
            self._push(time.monotonic() + ms / 1000.0, "finish", name,
                       self.epoch[name])
        if is_true(new, "Evicted") and holds(new) and \
                (name, self.epoch[name]) not in self.scheduled_clear:
            self.scheduled_clear.add((name, self.epoch[name]))
            self._push(time.monotonic(), "clear", name, self.epoch[name])

    def _push(self, due, kind, name, epoch):
        with self.cv:
            self.seq += 1
            heapq.heappush(self.heap, (due, self.seq, kind, name, epoch))
            self.cv.notify()

    def start(self, history):
        self.history = history
        self.t0 = time.monotonic()
        for t in self._threads:
            t.start()
        self._creator = threading.Thread(target=self._create_all,
                                         daemon=True)
        self._creator.start()

    def _create_all(self):
        try:
            for t, name, *_ in self.shape.workloads:
                if self._stop.is_set():
                    return
                delay = self.t0 + t - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                self._push(0, "create", name, 0)
        except Exception as e:  # noqa: BLE001
            self.errors.append("creator: %r" % e)

    def creating_done(self):
        return self._creator is not None and not self._creator.is_alive()

    def _work(self):
        while not self._stop.is_set():
            with self.cv:
                while not self._stop.is_set() and (
                        not self.heap or self.heap[0][0] > time.monotonic()):
                    wait = self.heap[0][0] - time.monotonic() \
                        if self.heap else 0.5
                    self.cv.wait(max(0.001, min(wait, 0.5)))
                if self._stop.is_set():
                    return
                _, _, kind, name, epoch = heapq.heappop(self.heap)
            try:
                if kind == "create":
                    self._create(name)
                elif kind == "finish":
                    self._patch(name, epoch, self._finish_patch)
                else:
                    self._patch(name, epoch, self._clear_patch)
            except Exception as e:  # noqa: BLE001 - reported by stop()
                self.errors.append("%s %s: %r" % (kind, name, e))

    def _create(self, name):
        code, _ = retrying(self.s, "POST", WLS, self.shape.workload(name),
                           ok=(201,), give_up=(409,))
        self.created.add(name)

    def _finish_patch(self, obj, epoch):
        if is_true(obj, "Finished") or not is_true(obj, "Admitted") or \
                is_true(obj, "Evicted") or self.epoch[
                    obj["metadata"]["name"]] != epoch:
            return None
        conds = [c for c in obj["status"].get("conditions", [])
                 if c["type"] != "Finished"]
        conds.append({"type": "Finished", "status": "True",
                      "reason": "Succeeded", "message": "done (test driver)",
                      "lastTransitionTime": now_rfc3339()})
        return {"status": {"conditions": conds}}

    def _clear_patch(self, obj, epoch):
        if is_true(obj, "Finished") or not is_true(obj, "Evicted") or \
                not holds(obj):
            return None
        t = now_rfc3339()
        conds = []
        for c in obj["status"].get("conditions", []):
            c = dict(c)
            if c["type"] == "QuotaReserved":
                c.update(status="False", reason="Pending",
                         message="Reservation cleared after eviction "
                                 "(test driver)", lastTransitionTime=t)
            elif c["type"] == "Admitted" and c["status"] == "True":
                c.update(status="False", reason="NoReservation",
                         message="The workload has no reservation",
                         lastTransitionTime=t)
            conds.append(c)
        return {"status": {"admission": None, "conditions": conds}}

    def _patch(self, name, epoch, make):
        obj = self.history.snapshot().get(name)
        for _ in range(100):
            if obj is None:
                return
            p = make(obj, epoch)
            if p is None:
                return
            p["metadata"] = {"resourceVersion":
                             obj["metadata"]["resourceVersion"]}
            code, body = retrying(
                self.s, "PATCH", WLS + "/" + name + "/status", p,
                {"Content-Type": "application/merge-patch+json"},
                ok=(200,), give_up=(409, 404))
            if code == 200:
                if make == self._finish_patch:
                    self.finishes += 1
                else:
                    self.clears += 1
                return
            if code == 404:
                return
            self.conflicts += 1
            code, obj = retrying(self.s, "GET", WLS + "/" + name,
                                 ok=(200,), give_up=(404,))
            if code == 404:
                return
        raise Failure("%s: conflicts without end" % name)

    def stop(self):
        self._stop.set()
        with self.cv:
            self.cv.notify_all()
        for t in self._threads:
            t.join(10)
        check(not self.errors, "driver errors: %s" % self.errors[:5])


# ---- the ledger -----------------------------------------------------------

def ledger_read(path):
    """(live decisions uid -> (name, cq, state, milli), usage rows
    (cq, flavor, resource) -> milli) of a ledger file; the controller
    must not be running."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=10)
    try:
        live = {}
        for uid, name, cq, state in db.execute(
                "SELECT uid, name, cluster_queue, state FROM decision "
                "WHERE state != 3"):
            m = db.execute("SELECT COALESCE(SUM(milli), 0) FROM "
                           "podset_resource WHERE uid = ? AND resource = "
                           "'cpu'", (uid,)).fetchone()[0]
            live[uid] = (name, cq, state, m)
        usage = {(cq, fl, rs): m for cq, fl, rs, m in db.execute(
            "SELECT cluster_queue, flavor, resource, milli FROM usage")}
        return live, usage
    finally:
        db.close()


def check_ledger_covers_api(s, path):
    """After a SIGKILL: every Workload the API shows holding quota (a
    fresh LIST) has a live ledger decision with the same ClusterQueue
    and cpu. Returns (API holding, ledger live) counts."""
    live, _ = ledger_read(path)
    _, body = retrying(s, "GET", WLS, ok=(200,))
    bad = []
    n = 0
    for o in body["items"]:
        h = holds(o)
        if not h:
            continue
        n += 1
        d = live.get(o["metadata"]["uid"])
        if d is None:
            bad.append("%s holds %s/%dm, no live ledger decision" % (
                o["metadata"]["name"], h[0], h[1]))
        elif (d[1], d[3]) != h:
            bad.append("%s holds %s/%dm, ledger says %s/%dm" % (
                o["metadata"]["name"], h[0], h[1], d[1], d[3]))
    check(not bad, "ledger behind the API after a kill: %s" % bad[:5])
    return n, len(live)


def check_end_state(s, shape, history):
    """Every Workload admitted and Finished; every ClusterQueue reports
    zero usage and no workloads (the controller writes that status: it
    must still run)."""
    snap = history.snapshot()
    names = set(shape.by_name)
    check(set(snap) == names, "Workloads: %d in the API, %d expected" % (
        len(snap), len(names)))
    notfin = sorted(n for n, o in snap.items() if not is_true(o, "Finished"))
    check(not notfin, "not Finished: %s" % notfin[:10])
    never = sorted(names - history.ever_admitted)
    check(not never, "never admitted: %s" % never[:10])
    check(not history.held, "still holding quota: %r" % history.held)

    last = []

    def cq_zero():
        _, body = retrying(s, "GET", CQS, ok=(200,))
        bad = last
        del bad[:]
        for cq in body["items"]:
            st = cq.get("status") or {}
            used = [r.get("total") for f in st.get("flavorsReservation")
                    or [] for r in f.get("resources") or []]
            if any(milli(u) for u in used) or st.get(
                    "reservingWorkloads") or st.get("admittedWorkloads") or \
                    st.get("pendingWorkloads"):
                bad.append((cq["metadata"]["name"], used,
                            st.get("pendingWorkloads"),
                            st.get("reservingWorkloads")))
        return not bad
    try:
        wait_for(cq_zero, 30, interval=0.5,
                 what="every ClusterQueue status at zero usage")
    except Failure as e:
        raise Failure("%s: %r" % (e, last))


def check_ledger_end(ledger):
    """The stopped controller's ledger agrees with the settled API:
    nothing live, no usage."""
    live, usage = ledger_read(ledger)
    check(not live, "ledger live decisions at the end: %r" % list(
        live.values())[:5])
    check(not any(usage.values()), "ledger usage at the end: %r" % usage)


def ctl_requests(s, since, ua=CTL_UA):
    return [e for e in s.access_log(since) if e["userAgent"].startswith(ua)]


def max_in_window(times, width):
    times = sorted(times)
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - width:
            j += 1
        best = max(best, i - j + 1)
    return best


def wait_all_finished(history, shape, timeout, alive=None):
    names = set(shape.by_name)

    def done():
        if alive is not None:
            alive()
        snap = history.snapshot()
        return len(snap) == len(names) and all(
            is_true(o, "Finished") for o in snap.values())
    try:
        wait_for(done, timeout, interval=0.5,
                 what="every Workload Finished")
    except Failure as e:
        snap = history.snapshot()
        left = sorted((n, "".join(k[0] for k in (
            "QuotaReserved", "Admitted", "Evicted", "Finished")
            if is_true(o, k))) for n, o in snap.items()
            if not is_true(o, "Finished"))
        raise Failure("%s; %d created, not finished: %s" % (
            e, len(snap), left[:15]))


def ctl_log_tail(ctl, n=30):
    try:
        with open(ctl.log) as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# ---- 1. crash: SIGKILL at random moments ----------------------------------

def wind_down(s, ctl, driver, history, ledger, mark):
    """The end of a run that converged: the controller still runs and
    stops cleanly, the driver and History stop without errors, the
    ledger is empty. Returns the controller's requests since mark."""
    check(ctl.alive(), "controller running")
    ctl.stop()
    driver.stop()
    history.stop()
    check_ledger_end(ledger)
    return ctl_requests(s, mark)


def abandon(ctl, driver, history, dump_name):
    """Whatever happened: kill a controller still running, stop the driver
    and History without waiting, and keep the History in LOGS/dump_name."""
    if ctl.alive():
        ctl.stop(signal.SIGKILL)
    driver._stop.set()
    history.halt()
    history.dump(os.path.join(LOGS, dump_name))


def run_crash(s, kills=10, workloads=300, create_s=60.0, runtime_scale=4.0,
              kill_gap=(2.0, 8.0), seed=None, timeout=240):
    """Run the shape; SIGKILL the controller `kills` times at random
    moments (gaps uniform in kill_gap seconds), restarting it on the same
    ledger each time. Returns the summary."""
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    t_start = time.time()
    shape, ledger = start_shape(s, workloads, create_s, runtime_scale, seed)
    cfg = controller_config()
    driver = Driver(s, shape)
    history = History(s, shape, [driver.on_change])
    mark = s.log_mark()
    ctl = Controller(s, config=cfg, store=ledger)
    driver.start(history)
    survived = 0
    ledger_checks = 0
    held_at_kill = []
    try:
        while survived < kills:
            time.sleep(rng.uniform(*kill_gap))
            check(ctl.alive(), "controller exited %r:\n%s" % (
                ctl.proc.poll(), ctl_log_tail(ctl)))
            ctl.stop(signal.SIGKILL)
            survived += 1
            n_api, n_led = check_ledger_covers_api(s, ledger)
            ledger_checks += 1
            held_at_kill.append((n_api, n_led))
            ctl = Controller(s, config=cfg, store=ledger)
        log("seed %d: %d kills done at %.0fs; %d/%d created" % (
            seed, survived, time.time() - t_start, len(driver.created),
            len(shape.workloads)))
        wait_all_finished(history, shape, timeout - (time.time() - t_start),
                          alive=lambda: check(ctl.alive(),
                                              "controller exited:\n%s" %
                                              ctl_log_tail(ctl)))
        check_end_state(s, shape, history)
        reqs = wind_down(s, ctl, driver, history, ledger, mark)
    finally:
        abandon(ctl, driver, history, "%s.history.json" % TEST)
    check(not history.violations, "%d invariant violations:\n  %s" % (
        len(history.violations), "\n  ".join(history.violations[:20])))
    writes = [e for e in reqs if e["verb"] in WRITES]
    return {
        "seed": seed, "kills_survived": survived,
        "workloads": len(shape.workloads),
        "admissions": sum(history.admissions.values()),
        "evictions": sum(history.evictions.values()),
        "finishes_by_driver": driver.finishes,
        "clears_by_driver": driver.clears,
        "states_checked": history.checks,
        "ledger_checks_after_kill": ledger_checks,
        "held_at_kill_api_ledger": held_at_kill,
        "peak_cq_milli": max(history.peak_cq.values() or [0]),
        "peak_cohort_milli": max(history.peak_cohort.values() or [0]),
        "controller_requests": len(reqs),
        "controller_writes": len(writes),
        "duration_s": round(time.time() - t_start, 1),
    }


# ---- 3. API faults ---------------------------------------------------------

def fault_rules(p429=0.3, latency_ms=50, burst500=False):
    """First match wins: a burst of 500s (all requests, while on), 429 +
    Retry-After on p429 of the rest, 50 ms on everything."""
    rules = []
    if burst500:
        rules.append({"code": 500, "latencyMs": latency_ms})
    rules.append({"code": 429, "retryAfter": 1, "probability": p429,
                  "latencyMs": latency_ms})
    rules.append({"latencyMs": latency_ms})
    return rules


def run_faults(s, faults=True, workloads=150, create_s=30.0,
               runtime_scale=4.0, qps=20, burst=40, seed=1, timeout=180,
               drop_every=(2.0, 5.0), burst_every=(6.0, 12.0),
               burst_len=(0.5, 1.5)):
    """The shape against a controller (qps/burst) with or without the
    fault injection of issue 8's "API faults". Returns the summary with
    the controller's requests and writes."""
    rng = random.Random(seed)
    t_start = time.time()
    shape, ledger = start_shape(s, workloads, create_s, runtime_scale, seed)
    driver = Driver(s, shape)
    history = History(s, shape, [driver.on_change])
    mark = s.log_mark()
    ctl = Controller(s, config=controller_config(qps, burst), store=ledger)
    wait_for(lambda: any(e["userAgent"].startswith(CTL_UA) and
                         "watch=1" in e["query"] for e in
                         s.access_log(mark)), 20, what="controller watching")
    stats = Counter()
    if faults:
        s.faults(fault_rules())
    driver.start(history)
    t_end = time.time() + timeout
    next_drop = time.time() + rng.uniform(*drop_every)
    next_burst = time.time() + rng.uniform(*burst_every)
    names = set(shape.by_name)
    try:
        while True:
            snap = history.snapshot()
            if len(snap) == len(names) and all(
                    is_true(o, "Finished") for o in snap.values()):
                break
            check(time.time() < t_end, "timeout: %d/%d Finished; not: %s" % (
                sum(1 for o in snap.values() if is_true(o, "Finished")),
                len(names), sorted((n, o["metadata"]["uid"], "".join(
                    k[0] for k in ("QuotaReserved", "Admitted", "Evicted",
                                   "Finished") if is_true(o, k)),
                    bool((o.get("status") or {}).get("admission")))
                    for n, o in snap.items()
                    if not is_true(o, "Finished"))[:10]))
            check(ctl.alive(), "controller exited:\n%s" % ctl_log_tail(ctl))
            time.sleep(0.1)
            if not faults:
                continue
            now = time.time()
            if now >= next_drop:
                if stats["drop"] % 3 == 2:
                    s.compact()
                    stats["compact"] += 1
                s.drop_watches()
                stats["drop"] += 1
                next_drop = now + rng.uniform(*drop_every)
            if now >= next_burst:
                s.faults(fault_rules(burst500=True))
                time.sleep(rng.uniform(*burst_len))
                s.faults(fault_rules())
                stats["burst500"] += 1
                next_burst = time.time() + rng.uniform(*burst_every)
        s.faults([])
        check_end_state(s, shape, history)
        time.sleep(1.0)  # late writes land
        reqs = wind_down(s, ctl, driver, history, ledger, mark)
    finally:
        s.faults([])
        abandon(ctl, driver, history, "%s.faults-%s.history.json" % (
            TEST, faults))
    check(not history.violations, "%d invariant violations:\n  %s" % (
        len(history.violations), "\n  ".join(history.violations[:20])))
    codes = Counter(e["code"] for e in reqs)
    writes = [e for e in reqs if e["verb"] in WRITES]
    ok_writes = [e for e in writes if 200 <= e["code"] < 300]
    times = [ts(e) for e in reqs]
    # Events may go through a client (and token bucket) of their own,
    # as controller-runtime's recorder does: each is checked on its own.
    ev_times = [ts(e) for e in reqs if "/events" in e["path"]]
    api_times = [ts(e) for e in reqs if "/events" not in e["path"]]
    by_kind = Counter()
    for e in ok_writes:
        p = e["path"]
        k = "events" if "/events" in p else "workload-status" if \
            "/workloads/" in p and p.endswith("/status") else \
            "queue-status" if p.endswith("/status") else "other"
        by_kind[k] += 1
    dur = (max(times) - min(times)) if times else 0
    return {
        "faults": faults, "seed": seed, "workloads": len(shape.workloads),
        "admissions": sum(history.admissions.values()),
        "evictions": sum(history.evictions.values()),
        "states_checked": history.checks,
        "observer_relists": history.relists,
        "controller_requests": len(reqs),
        "controller_writes_sent": len(writes),
        "controller_writes_ok": len(ok_writes),
        "controller_writes_ok_by_kind": dict(by_kind),
        "codes": {str(k): v for k, v in sorted(codes.items())},
        "injected_429": codes.get(429, 0), "injected_500": codes.get(500, 0),
        "drops": stats["drop"], "compactions": stats["compact"],
        "bursts500": stats["burst500"],
        "peak_req_1s": max_in_window(times, 1.0),
        "peak_req_10s": max_in_window(times, 10.0),
        "peak_nonevent_req_1s": max_in_window(api_times, 1.0),
        "peak_nonevent_req_10s": max_in_window(api_times, 10.0),
        "peak_event_req_1s": max_in_window(ev_times, 1.0),
        "peak_event_req_10s": max_in_window(ev_times, 10.0),
        "qps": qps, "burst": burst,
        "controller_span_s": round(dur, 1),
        "duration_s": round(time.time() - t_start, 1),
    }


def check_no_storm(r):
    """Controller requests, from the access log, within the token bucket
    of clientConnection: in any 1 s window at most burst + qps (plus 10 %
    of qps for the latency jitter between sending and logging), in any
    10 s window at most burst + 10 qps (same slack). Event writes and
    the other requests are checked each on their own (a separate event
    client has a bucket of its own)."""
    b1 = r["burst"] + 1.1 * r["qps"]
    b10 = r["burst"] + 10.5 * r["qps"]
    for what in ("nonevent", "event"):
        p1, p10 = r["peak_%s_req_1s" % what], r["peak_%s_req_10s" % what]
        check(p1 <= b1, "retry storm: %d %s requests in 1 s (bound %d)" %
              (p1, what, b1))
        check(p10 <= b10, "retry storm: %d %s requests in 10 s (bound %d)"
              % (p10, what, b10))


# ---- 2. leader election: kill and pause the leader -------------------------

class Replicas:
    """Controller processes with leader election; each process gets its
    own identity (POD_NAME) and its own API user (a bearer token added
    through /__test/tokens), so every request in the access log names
    the process that sent it."""

    def __init__(self, s, cfg):
        self.s = s
        self.cfg = cfg
        self.n = 0
        self.procs = {}  # identity -> Controller
        self.user_of = {}  # identity -> API user

    def start(self):
        self.n += 1
        ident = "replica-%d" % self.n
        user = "ctl-" + ident
        tok = "tok-%s-%d" % (ident, random.randrange(1 << 30))
        self.s.tokens(add=[(tok, user)])
        with open(self.s.kubeconfig) as f:
            kc = f.read().replace(self.s.token, tok)
        path = self.s.file("kubeconfig-" + ident, kc)
        self.procs[ident] = Controller(
            self.s, config=self.cfg, args=("--kubeconfig", path),
            env={"POD_NAME": ident})
        self.user_of[ident] = user
        return ident

    def holder(self):
        code, b = retrying(self.s, "GET", LEASES + "/cueue-leader",
                           ok=(200,), give_up=(404,))
        return b["spec"].get("holderIdentity") if code == 200 else None


def check_single_writer(entries, users):
    """Every write of a controller process that is not a Lease write must
    come from the process holding the Lease at that point of the access
    log (the identity of the last successful Lease write before it).
    Returns (writes checked, violations)."""
    ident_of = {u: i for i, u in users.items()}
    holder = None
    bad = []
    n = 0
    for e in entries:
        who = ident_of.get(e["user"])
        if who is None or e["verb"] not in WRITES:
            continue
        if e["path"] == LEASES or e["path"].startswith(LEASES + "/"):
            if 200 <= e["code"] < 300:
                holder = who
            continue
        n += 1
        if who != holder:
            bad.append("seq %d %s %s %s -> %d by %s while %s held the "
                       "Lease" % (e["seq"], e["time"][11:], e["verb"],
                                  e["path"], e["code"], who, holder))
    return n, bad


def run_leader(s, rounds=4, workloads=120, create_s=40.0, runtime_scale=3.0,
               pause_s=(8.0, 11.0), gap=(3.0, 6.0), seed=None, timeout=300):
    """Two replicas; `rounds` times the leader is killed (SIGKILL, then a
    new replica started) or paused (SIGSTOP for pause_s, then SIGCONT;
    it must notice the lost Lease and stop without writing). Each time a
    standby takes over within 20 s, and at no point did a process write
    without holding the Lease."""
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    t_start = time.time()
    shape = Shape(cohorts=1, cqs=2, workloads=workloads, create_s=create_s,
                  runtime_scale=runtime_scale, seed=seed)
    setup(s, shape)
    mark = s.log_mark()
    reps = Replicas(s, controller_config(leader=True))
    reps.start()
    reps.start()
    driver = Driver(s, shape)
    history = History(s, shape, [driver.on_change])
    lead = wait_for(lambda: reps.holder() in reps.procs and reps.holder(),
                    20, what="a leader")
    driver.start(history)
    takeovers = []
    actions = Counter()
    resumed = []
    try:
        for r in range(rounds):
            time.sleep(rng.uniform(*gap))
            lead = reps.holder()
            check(lead in reps.procs and reps.procs[lead].alive(),
                  "round %d: holder %r" % (r, lead))
            old = reps.procs[lead]
            pause = r % 2 == 1
            t0 = time.time()
            if pause:
                old.proc.send_signal(signal.SIGSTOP)
                actions["pause"] += 1
            else:
                old.stop(signal.SIGKILL)
                actions["kill"] += 1
            new = wait_for(lambda: (reps.holder() not in (lead, None, "")
                                    and reps.holder()), 25, interval=0.1,
                           what="takeover (round %d)" % r)
            took = time.time() - t0
            takeovers.append(round(took, 1))
            check(took < 20, "round %d: takeover in %.1fs" % (r, took))
            check(reps.procs[new].alive(), "new leader alive")
            if pause:
                left = t0 + rng.uniform(*pause_s) - time.time()
                if left > 0:
                    time.sleep(left)
                old.proc.send_signal(signal.SIGCONT)
                # It must find out that it lost the Lease and exit
                # (Kueue's behaviour) - without a write in between.
                wait_for(lambda: not old.alive(), 15,
                         what="resumed old leader %s exits" % lead)
                resumed.append(lead)
                old.errf.close()
            reps.start()  # a fresh standby
        log("seed %d: %d rounds at %.0fs, takeovers %s" % (
            seed, rounds, time.time() - t_start, takeovers))
        wait_all_finished(history, shape,
                          max(30, timeout - (time.time() - t_start)))
        check_end_state(s, shape, history)
        for ident, c in reps.procs.items():
            if c.alive():
                c.stop()
        driver.stop()
        history.stop()
        entries = s.access_log(mark)
    finally:
        for c in reps.procs.values():
            if c.alive():
                try:
                    c.proc.send_signal(signal.SIGCONT)
                except OSError:
                    pass
                c.stop(signal.SIGKILL)
        driver._stop.set()
        history.halt()
    n, bad = check_single_writer(entries, reps.user_of)
    check(not bad, "%d writes by a process not holding the Lease:\n  %s" % (
        len(bad), "\n  ".join(bad[:20])))
    check(not history.violations, "%d invariant violations:\n  %s" % (
        len(history.violations), "\n  ".join(history.violations[:20])))
    check(n > 0, "the leaders wrote")
    return {"seed": seed, "rounds": rounds, "kills": actions["kill"],
            "pauses": actions["pause"], "takeovers_s": takeovers,
            "max_takeover_s": max(takeovers) if takeovers else 0,
            "writes_checked": n, "workloads": len(shape.workloads),
            "admissions": sum(history.admissions.values()),
            "evictions": sum(history.evictions.values()),
            "states_checked": history.checks,
            "duration_s": round(time.time() - t_start, 1)}
