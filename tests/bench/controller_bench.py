# SPDX-License-Identifier: Apache-2.0
"""tests/bench/controller_bench.py - `make bench`: cueue-controller while
1,000 Jobs flow through.

A release cueue-apiserver (TLS, --simulate jobs, --test-endpoints) and a
release cueue-controller (batch/job integration, SQLite ledger, log level
info). One ResourceFlavor, one ClusterQueue with QUOTA cpu, one LocalQueue;
N suspended Jobs asking 1 cpu each and running RUNTIME_MS once resumed are
created as fast as the server takes them (4 clients). The run settles
when every Job has succeeded and every Workload is Finished with its
resource-in-use finalizer removed.

Measured, all in this one run:
  - wall time from the first create to: all Jobs succeeded, all
    Workloads Finished, settled; Jobs/s against quota/runtime;
  - controller peak RSS (VmHWM of /proc/PID/status), RSS when idle;
  - controller average CPU (utime+stime of /proc/PID/stat) from the first
    create to settled, in mCPU, and over 2 s after that (should be ~0);
  - every API request the controller sent (the server's access log,
    userAgent cueue-controller/...), and its writes per admitted Job:
    Workload create, Workload status, Workload (not status), Job, queue
    status, other, events, each with its failed share, against the
    target of 3 (create + one status write + one Job patch; events are
    reported separately);
  - what each successful write changed, from our own watches on Workloads
    and Jobs (the server sends no event for a write that changes nothing;
    null -> {} counts as nothing, as it does for a Go server), and
    examples (Job and Workload writes in order) in controller.json.

Sanity checks (the run fails on any): all N Jobs succeeded, exactly one
Workload per Job (owner reference), each Workload Admitted and Finished,
no Job ran beyond quota.

BENCH_MIX=1 runs the mix instead: three ClusterQueues sharing QUOTA cpu
(default 60) in a cohort with preemption, three WorkloadPriorityClasses,
the Jobs spread over them and created at BENCH_RATE per second (default
200); wall is then compared with the capacity bound (N x runtime / quota).

Environment: CUEUE_BIN (the programs), BENCH_OUT (results directory,
default build/bench), BENCH_JOBS (default 1000), BENCH_QUOTA (default 50),
BENCH_RUNTIME_MS (default 1000), BENCH_TIMEOUT_S (default 600: the
flow's limit, for a loaded machine), BENCH_CTL_WRAP (a command the
controller runs under, such as "heaptrack -o FILE"), BENCH_DUMP_WATCH=1 (also keep both
watch streams). Writes to BENCH_OUT: controller.txt (the report),
controller.json (every figure, examples), controller-access-log.json (the
controller's requests), controller-events.json (the Events it wrote),
controller-bench.*.stderr (the programs' logs).
"""
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.abspath(os.environ.get("BENCH_OUT",
                                     os.path.join(ROOT, "build", "bench")))
os.makedirs(OUT, exist_ok=True)
os.environ.setdefault("CUEUE_LOGS", OUT)
os.environ.setdefault("CUEUE_TEST_NAME", "controller-bench")
# cuetest reads CUEUE_LOGS and CUEUE_TEST_NAME when imported (PYTHONPATH
# holds tests/pylib: tests/bench/run.sh sets it).
import cuetest  # noqa: E402

N = int(os.environ.get("BENCH_JOBS", "1000"))
QUOTA = int(os.environ.get("BENCH_QUOTA",
                           "60" if os.environ.get("BENCH_MIX") == "1"
                           else "50"))
RUNTIME_MS = int(os.environ.get("BENCH_RUNTIME_MS", "1000"))
NS = "bench"
TARGET_WRITES = 3
# References, not pass/fail: Kueue's manager Deployment requests 500m cpu
# and 512Mi memory; minimalkueue's last asserted scheduler-perf averages
# were 396 mCPU and 445,012 KiB maxrss (15,000 Workloads; dropped in
# Kueue PR #5077).
REF_MCPU = 500
REF_RSS_KIB = 512 * 1024

# Without the visibility server: its fixed port (8082) would keep two
# runs from going side by side.
CONFIG = cuetest.without_visibility(
    cuetest.CONTROLLER_CONFIG + """manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
""")

# BENCH_MIX=1: the mix. Three ClusterQueues in one cohort share QUOTA cpu
# (a third each, borrowing allowed; preemption within a ClusterQueue of
# lower priority, reclaim within the cohort), three WorkloadPriorityClasses,
# and the Jobs spread over the three LocalQueues and priorities, created
# at BENCH_RATE per second (default 200).
MIX = os.environ.get("BENCH_MIX") == "1"
RATE = float(os.environ.get("BENCH_RATE", "200" if MIX else "0"))
MIX_QUEUES = ("a", "b", "c")
MIX_PRIORITIES = (("low", 100), ("mid", 200), ("high", 300))

if MIX:
    QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
""" + "".join("""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: %s}
value: %d
""" % p for p in MIX_PRIORITIES) + "".join("""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-%s}
spec:
  cohortName: mix
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: %d}
""" % (q, QUOTA // len(MIX_QUEUES)) for q in MIX_QUEUES)
    QUOTA = QUOTA // len(MIX_QUEUES) * len(MIX_QUEUES)
    LOCAL_QUEUES = [("lq-%s" % q, "cq-%s" % q) for q in MIX_QUEUES]
else:
    QUEUES = cuetest.flavor_and_queue(QUOTA)
    LOCAL_QUEUES = [("default", "cq")]

CLK_TCK = os.sysconf("SC_CLK_TCK")


def job_labels(i):
    if not MIX:
        return {"kueue.x-k8s.io/queue-name": "default"}
    return {"kueue.x-k8s.io/queue-name": LOCAL_QUEUES[i % 3][0],
            "kueue.x-k8s.io/priority-class":
            MIX_PRIORITIES[(i // 3) % 3][0]}


def job(name, i=0):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS,
                         "labels": job_labels(i),
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(RUNTIME_MS)}},
            "spec": {"parallelism": 1, "completions": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "1"}}}],
                         "restartPolicy": "Never"}}}}


def proc_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def proc_status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith(key + ":"):
                return int(ln.split()[1])
    return 0


# ---- classification of the controller's requests ---------------------

PATH_RE = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+)/(?P<ver>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)"
    r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?$")

WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")
CATEGORIES = ("workload_create", "workload_status", "workload_other",
              "job_write", "event", "queue_status", "other")


def parse(e):
    m = PATH_RE.match(e["path"])
    if not m:
        return None, None, None, None
    return m.group("res"), m.group("ns"), m.group("name"), m.group("sub")


def category(e):
    res, _, name, sub = parse(e)
    v = e["verb"]
    if res == "workloads":
        if v == "POST" and name is None:
            return "workload_create"
        return "workload_status" if sub == "status" else "workload_other"
    if res == "jobs":
        return "job_write"
    if res == "events":
        return "event"
    if res in ("clusterqueues", "localqueues", "cohorts",
               "resourceflavors") and sub == "status":
        return "queue_status"
    return "other"


def is_watch(e):
    return "watch=1" in e["query"] or "watch=true" in e["query"]


# ---- the run ----------------------------------------------------------

def main():
    work = tempfile.mkdtemp(prefix="cueue-ctlbench-")
    srv = cuetest.Server(tls=True, simulate="jobs")
    ctl = None
    ctl_err = None
    try:
        srv.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
        srv.kubectl("wait", "--for=condition=Established", "crd", "--all",
                    "--timeout=30s")
        srv.kubectl("apply", "-f", srv.file("queues.yaml", QUEUES))
        srv.namespace(NS)
        for lq, cq in LOCAL_QUEUES:
            code, _, body = srv.raw(
                "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
                "localqueues" % NS, {"apiVersion": "kueue.x-k8s.io/v1beta2",
                                     "kind": "LocalQueue",
                                     "metadata": {"name": lq,
                                                  "namespace": NS},
                                     "spec": {"clusterQueue": cq}})
            cuetest.eq(code, 201, "LocalQueue: %r" % body)

        cfg = cuetest.write(work, "config.yaml", CONFIG)
        ctl_log = os.path.join(OUT, "controller-bench.controller.stderr")
        ctl_err = open(ctl_log, "w")
        mark0 = srv.log_mark()
        ctl = subprocess.Popen(
            os.environ.get("BENCH_CTL_WRAP", "").split() +
            [os.path.join(cuetest.BIN, "cueue-controller"), "--config", cfg,
             "--kubeconfig", srv.kubeconfig, "--store",
             os.path.join(work, "ledger.db"), "--log-level", "info"],
            stdout=ctl_err, stderr=subprocess.STDOUT,
            preexec_fn=cuetest._die_with_parent)
        pid = ctl.pid

        # Ready: the controller watches Jobs and Workloads, and then its
        # requests have been quiet for a second.
        def ready():
            reqs = [e for e in srv.access_log(mark0)
                    if e["userAgent"].startswith("cueue-controller/")]
            watched = {parse(e)[0] for e in reqs if is_watch(e)}
            return {"jobs", "workloads"} <= watched and reqs[-1]
        cuetest.wait_for(lambda: ctl.poll() is not None or ready(), 30,
                         what="controller watching jobs and workloads")
        cuetest.check(ctl.poll() is None, "controller exited, see %s"
                      % ctl_log)
        last = None
        for _ in range(50):
            cur = srv.log_mark()
            if cur == last:
                break
            last = cur
            time.sleep(1.0)
        startup = [e for e in srv.access_log(mark0)
                   if e["userAgent"].startswith("cueue-controller/")]
        idle_rss = proc_status_kib(pid, "VmRSS")

        # Watches of our own on Workloads and Jobs: a write after which
        # the object's next watch event does not arrive changed nothing.
        wl_watch = srv.stream("/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
                              "workloads?watch=1&timeoutSeconds=900" % NS)
        job_watch = srv.stream("/apis/batch/v1/namespaces/%s/jobs?watch=1&"
                               "timeoutSeconds=900" % NS)
        mark = srv.log_mark()

        # ---- the flow ----
        cpu0 = proc_cpu_s(pid)
        t0 = time.monotonic()

        def create(i):
            if RATE > 0:  # paced: Job i at t0 + i / RATE
                time.sleep(max(0.0, t0 + i / RATE - time.monotonic()))
            c, _, b = srv.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                              % NS, job("j%04d" % i, i))
            cuetest.eq(c, 201, "create j%04d: %r" % (i, b))
        with concurrent.futures.ThreadPoolExecutor(8 if RATE > 0 else 4) \
                as ex:
            list(ex.map(create, range(N)))
        t_created = time.monotonic()

        rss_samples = []
        active_max = 0
        active_samples = []
        t_jobs_done = t_finished = None
        deadline = t0 + float(os.environ.get("BENCH_TIMEOUT_S", "600"))
        while True:
            cuetest.check(ctl.poll() is None, "controller exited %r, see %s"
                          % (ctl.returncode, ctl_log))
            rss_samples.append((round(time.monotonic() - t0, 2),
                                proc_status_kib(pid, "VmRSS")))
            jobs = srv.get_json("/apis/batch/v1/namespaces/%s/jobs" % NS)[
                "items"]
            active = sum(j.get("status", {}).get("active", 0) for j in jobs)
            active_max = max(active_max, active)
            done = sum(1 for j in jobs
                       if j.get("status", {}).get("succeeded") == 1)
            if N - done >= QUOTA:  # enough work left to fill the quota
                active_samples.append(active)
            if done == N and t_jobs_done is None:
                t_jobs_done = time.monotonic()
            if t_jobs_done is not None:
                wls = srv.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/"
                                   "%s/workloads" % NS)["items"]
                fin = sum(1 for w in wls if cond(w, "Finished") == "True")
                if fin == N and t_finished is None:
                    t_finished = time.monotonic()
                # Settled: every Workload Finished and its resource-in-use
                # finalizer gone (the controller's last write for it).
                if fin == N and not any(w["metadata"].get("finalizers")
                                        for w in wls):
                    break
            if time.monotonic() > deadline:
                raise cuetest.Failure("timeout: %d/%d jobs succeeded, "
                                  "Workloads finished: %s" % (
                                      done, N, t_finished is not None))
            time.sleep(0.5)
        t_settled = time.monotonic()
        mark_settled = srv.log_mark()
        cpu1 = proc_cpu_s(pid)
        hwm = proc_status_kib(pid, "VmHWM")
        rss_end = proc_status_kib(pid, "VmRSS")
        # Let late writes (status, events) land before counting.
        time.sleep(2.0)
        cpu_quiet = proc_cpu_s(pid)

        # ---- sanity ----
        jobs = srv.get_json("/apis/batch/v1/namespaces/%s/jobs" % NS)["items"]
        wls = srv.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/"
                           "workloads" % NS)["items"]
        cuetest.eq(len(jobs), N, "jobs")
        cuetest.eq(sum(1 for j in jobs
                       if j.get("status", {}).get("succeeded") == 1), N,
                   "jobs succeeded")
        owners = collections.Counter(
            w["metadata"]["ownerReferences"][0]["name"] for w in wls)
        cuetest.eq(len(wls), N, "Workloads")
        cuetest.eq(set(owners.values()), {1}, "one Workload per Job")
        cuetest.eq(set(owners), {j["metadata"]["name"] for j in jobs},
                   "Workload owners")
        cuetest.eq({cond(w, "Admitted") for w in wls}, {"True"},
                   "all Admitted")
        cuetest.eq({cond(w, "Finished") for w in wls}, {"True"},
                   "all Finished")
        cuetest.check(active_max <= QUOTA, "at most %d running, saw %d" %
                      (QUOTA, active_max))

        reqs = [e for e in srv.access_log(mark)
                if e["userAgent"].startswith("cueue-controller/")]
        late = [e for e in reqs if e["seq"] > mark_settled]
        kevents = srv.get_json("/api/v1/namespaces/%s/events" % NS)["items"]
        wl_events = wl_watch.events()
        job_events = job_watch.events()
        lat = latencies(wl_watch.lines, job_watch.lines)
        wl_watch.close()
        job_watch.close()
        ctl.terminate()
        ctl.wait(20)
        ctl_rc = ctl.returncode
        ctl = None
    finally:
        if ctl is not None and ctl.poll() is None:
            ctl.kill()
            ctl.wait()
        if ctl_err is not None:
            ctl_err.close()
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)

    with open(os.path.join(OUT, "controller-access-log.json"), "w") as f:
        json.dump(reqs, f, indent=0)
    with open(os.path.join(OUT, "controller-events.json"), "w") as f:
        json.dump(kevents, f, indent=0)

    if os.environ.get("BENCH_DUMP_WATCH"):
        with open(os.path.join(OUT, "controller-watch.json"), "w") as f:
            json.dump({"workloads": wl_events, "jobs": job_events}, f)
    wall_jobs = t_jobs_done - t0
    wall = t_settled - t0
    res = analyse(reqs, wl_events, job_events, wls)
    reasons = collections.Counter()
    for e in kevents:
        # events.k8s.io series (core count for core-written ones)
        reasons["%s/%s" % (e["involvedObject"]["kind"], e["reason"])] += \
            (e.get("series") or {}).get("count") or e.get("count") or 1
    res["event_reasons"] = dict(reasons.most_common())
    res["event_objects"] = len(kevents)
    res["kueue_events"] = kueue_events(wl_events, job_events)
    res["requests_after_settled"] = ["%s %s %s -> %d" % (
        e["time"][11:], e["verb"], e["path"], e["code"]) for e in late]
    res.update({
        "jobs": N, "quota_cpu": QUOTA, "runtime_ms": RUNTIME_MS,
        "capacity_bound_s": round(N * RUNTIME_MS / 1000.0 / QUOTA, 1),
        "wall_over_capacity_bound": round(
            wall_jobs / (N * RUNTIME_MS / 1000.0 / QUOTA), 3),
        "mix": MIX, "rate_per_s": RATE,
        "create_s": round(t_created - t0, 2),
        "wall_all_jobs_succeeded_s": round(wall_jobs, 2),
        "wall_all_workloads_finished_s": round(t_finished - t0, 2),
        "wall_settled_s": round(wall, 2),
        "jobs_per_s": round(N / wall_jobs, 1),
        "jobs_per_s_bound": round(QUOTA * 1000.0 / RUNTIME_MS, 1),
        "max_running": active_max,
        "utilisation_pct": round(100.0 * sum(active_samples) / max(
            1, len(active_samples)) / QUOTA, 1),
        "latency_ms": lat,
        "rss_idle_kib": idle_rss, "rss_end_kib": rss_end,
        "rss_peak_kib": hwm, "rss_samples_kib": rss_samples,
        "cpu_s": round(cpu1 - cpu0, 3),
        "cpu_avg_mcpu": round((cpu1 - cpu0) / wall * 1000),
        "cpu_after_settled_2s_mcpu": round((cpu_quiet - cpu1) / 2.0 * 1000),
        "startup_requests": dict(collections.Counter(
            "%s %s%s" % (e["verb"], parse(e)[0],
                         " watch" if is_watch(e) else "")
            for e in startup)),
        "controller_exit_code": ctl_rc,
    })
    with open(os.path.join(OUT, "controller.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    text = report(res)
    with open(os.path.join(OUT, "controller.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


def latencies(wl_lines, job_lines):
    """From the arrival times of our watch events: Workload admitted ->
    its Job resumed (spec.suspend false), and Job succeeded -> its
    Workload Finished; p50/p90/max in ms."""
    admitted, finished, resumed, succeeded = {}, {}, {}, {}
    for t, ln in wl_lines:
        o = json.loads(ln)["object"]
        job = (o["metadata"].get("ownerReferences") or [{}])[0].get("name")
        if cond(o, "Admitted") == "True":
            admitted.setdefault(job, t)
        if cond(o, "Finished") == "True":
            finished.setdefault(job, t)
    for t, ln in job_lines:
        o = json.loads(ln)["object"]
        name = o["metadata"]["name"]
        if o["spec"].get("suspend") is False:
            resumed.setdefault(name, t)
        if (o.get("status") or {}).get("succeeded") == 1:
            succeeded.setdefault(name, t)

    def stats(a, b):
        d = sorted((b[k] - a[k]) * 1000 for k in a if k in b)
        if not d:
            return {}
        return {"n": len(d), "p50": round(d[len(d) // 2], 1),
                "p90": round(d[len(d) * 9 // 10], 1), "max": round(d[-1], 1)}
    return {"admitted_to_job_resumed": stats(admitted, resumed),
            "job_succeeded_to_workload_finished": stats(succeeded, finished)}


def cond_of(obj, typ):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c["type"] == typ:
            return c
    return {}


def kueue_events(wl_events, job_events):
    """The events Kueue records for the transitions these watches show,
    by kind/reason (its sources: pkg/controller/jobframework/reconciler.go
    CreatedWorkload, Started, Stopped, FinishedWorkload;
    pkg/scheduler/scheduler.go QuotaReserved, Admitted and the pending
    reason on a requeue; pkg/scheduler/preemption/preemption.go Preempted,
    PreemptedWorkload; pkg/workload/evict/evict.go EvictedDueTo<reason>).
    A pending reason counts once per change of the QuotaReserved=False
    condition: Kueue records one per failed scheduling attempt, folded
    by client-go into a series only while the Workload is unchanged, so
    this is its least."""
    n = collections.Counter()
    last = {}
    for ev in wl_events:
        o = ev["object"]
        name = o["metadata"]["name"]
        prev = last.get(name, {})
        last[name] = o
        if ev["type"] == "DELETED":
            continue
        if ev["type"] == "ADDED" and o["metadata"].get("ownerReferences"):
            n["Job/CreatedWorkload"] += 1
        st, pst = o.get("status") or {}, prev.get("status") or {}
        if st.get("admission") and not pst.get("admission"):
            n["Workload/QuotaReserved"] += 1
            if cond_of(o, "Admitted").get("status") == "True":
                n["Workload/Admitted"] += 1
        elif cond_of(o, "Admitted").get("status") == "True" and \
                cond_of(prev, "Admitted").get("status") != "True":
            n["Workload/Admitted"] += 1
        ev_c, pev_c = cond_of(o, "Evicted"), cond_of(prev, "Evicted")
        if ev_c.get("status") == "True" and (
                pev_c.get("status") != "True" or
                pev_c.get("lastTransitionTime") !=
                ev_c.get("lastTransitionTime")):
            n["Workload/EvictedDueTo%s" % ev_c.get("reason")] += 1
            if ev_c.get("reason") == "Preempted":
                n["Workload/Preempted"] += 1
                n["Workload/PreemptedWorkload"] += 1
        if cond_of(o, "Finished").get("status") == "True" and \
                cond_of(prev, "Finished").get("status") != "True":
            n["Job/FinishedWorkload"] += 1
        qr, pqr = cond_of(o, "QuotaReserved"), cond_of(prev, "QuotaReserved")
        if qr.get("status") == "False" and qr.get("reason") not in (
                "Pending", None) and st.get("admission") is None and \
                (qr.get("reason"), qr.get("message")) != (
                    pqr.get("reason"), pqr.get("message")):
            n["Workload/%s" % qr.get("reason")] += 1
    suspended = {}
    for ev in job_events:
        o = ev["object"]
        name = o["metadata"]["name"]
        s = (o.get("spec") or {}).get("suspend")
        p = suspended.get(name)
        suspended[name] = s
        if p is True and s is False:
            n["Job/Started"] += 1
        elif p is False and s is True:
            n["Job/Stopped"] += 1
    return dict(n.most_common())


def cond(obj, typ):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c["type"] == typ:
            return c["status"]
    return None


def analyse(reqs, wl_events, job_events, wls):
    """Counts, per-object histograms and no-op writes."""
    by_verb = collections.Counter(e["verb"] + (" (watch)" if is_watch(e)
                                               else "") for e in reqs)
    by_kind = collections.Counter(
        "%s %s%s%s" % (e["verb"], parse(e)[0] or e["path"],
                       "/" + parse(e)[3] if parse(e)[3] else "",
                       " watch" if is_watch(e) else "") for e in reqs)
    codes = collections.Counter(e["code"] for e in reqs)
    writes = [e for e in reqs if e["verb"] in WRITE_VERBS]
    ok = [e for e in writes if 200 <= e["code"] < 300]
    failed = [e for e in writes if not 200 <= e["code"] < 300]
    cats = collections.Counter(category(e) for e in writes)
    cats_ok = collections.Counter(category(e) for e in ok)
    per_wl = collections.Counter()
    per_job = collections.Counter()
    for e in writes:
        res, _, name, _ = parse(e)
        if res == "workloads" and name and category(e) == "workload_status":
            per_wl[name] += 1
        if res == "jobs" and name:
            per_job[name] += 1
    wl_owner = {w["metadata"]["name"]:
                w["metadata"]["ownerReferences"][0]["name"] for w in wls}

    # Redundant writes: successful writes of an object beyond the watch
    # events that changed it (the server sends no event for a write that
    # changes nothing; a change from null to {} counts as nothing).
    wl_changes = changes(wl_events)
    job_changes = changes(job_events, status_by_others=True)
    wl_writes = collections.Counter()
    job_writes_ok = collections.Counter()
    for e in ok:
        res, _, name, _ = parse(e)
        if res == "workloads" and name:
            wl_writes[name] += 1
        if res == "jobs" and name:
            job_writes_ok[name] += 1

    def real(seq):
        return sum(1 for c in seq if c not in ("ADDED", "DELETED", NOTHING))
    wl_noop = {n: wl_writes[n] - real(wl_changes[n]) for n in wl_writes
               if wl_writes[n] > real(wl_changes[n])}
    job_noop = {n: job_writes_ok[n] - real(job_changes[n])
                for n in job_writes_ok
                if job_writes_ok[n] > real(job_changes[n])}

    # Examples, each with every write to the Job and its Workload and what
    # each changed: the Job with the most writes, the most common shape,
    # and a Job that got a write that changed nothing.
    job_wl = {j: w for w, j in wl_owner.items()}
    total = collections.Counter()
    for e in writes:
        res, _, name, _ = parse(e)
        if res == "jobs" and name:
            total[name] += 1
        elif res == "workloads" and name in wl_owner:
            total[wl_owner[name]] += 1
    picks = []
    if total:
        picks.append(("most writes", total.most_common(1)[0][0]))
        shape = collections.Counter(
            (per_job[j], per_wl[w], total[j]) for w, j in wl_owner.items())
        common = shape.most_common(1)[0][0]
        picks.append(("most common (%d Jobs)" % shape[common], next(
            j for w, j in sorted(wl_owner.items())
            if (per_job[j], per_wl[w], total[j]) == common)))
    if job_noop:
        picks.append(("a Job write that changed nothing", sorted(job_noop)[0]))
    examples = []
    for why, j in picks:
        w = job_wl.get(j)
        examples.append({
            "why": why, "job": j, "workload": w,
            "requests": ["%s %s %s -> %d" % (e["time"][11:], e["verb"],
                                             e["path"], e["code"])
                         for e in writes if
                         parse(e)[0] in ("jobs", "workloads") and
                         parse(e)[2] in (j, w)],
            "workload_changes": wl_changes.get(w, []),
            "job_changes_outside_status": job_changes.get(j, [])})
    wl_sigs = collections.Counter(c for n in wl_changes
                                  for c in wl_changes[n])
    job_sigs = collections.Counter(c for n in job_changes
                                   for c in job_changes[n])
    events = collections.Counter()
    for e in writes:
        if category(e) == "event":
            events[e["verb"]] += 1
    admitted = len(wls)
    per = {c: round(cats[c] / admitted, 3) for c in CATEGORIES}
    core = cats["workload_create"] + cats["workload_status"] + \
        cats["job_write"]
    # The target counts the admission path: the Workload create, the one
    # status write that admits it, the one Job patch that starts it. The
    # other status writes (pending reason, Finished) and the finalizer
    # removal are reported beside it.
    admit_status = sum(v for sig, v in wl_sigs.items()
                       if "status.admission" in sig)
    finished_status = sum(v for sig, v in wl_sigs.items()
                          if "conditions[Finished]=True" in sig)
    admission_path = cats["workload_create"] + admit_status + \
        cats["job_write"] + (cats["workload_status"] - cats_ok[
            "workload_status"])
    return {
        "requests_total": len(reqs), "requests_by_verb": dict(by_verb),
        "requests_by_kind": dict(by_kind), "codes": {
            str(k): v for k, v in codes.items()},
        "writes_total": len(writes), "writes_failed": len(failed),
        "writes_failed_examples": ["%s %s -> %d" % (e["verb"], e["path"],
                                                    e["code"])
                                   for e in failed[:5]],
        "writes_by_category": {c: cats[c] for c in CATEGORIES},
        "writes_ok_by_category": {c: cats_ok[c] for c in CATEGORIES},
        "writes_failed_by_category": {
            c: cats[c] - cats_ok[c] for c in CATEGORIES},
        "writes_failed_codes": dict(collections.Counter(
            str(e["code"]) for e in failed)),
        "writes_per_job": per,
        "writes_per_job_core": round(core / admitted, 3),
        "writes_per_job_admission_path": round(admission_path / admitted, 3),
        "writes_per_job_finished_status": round(finished_status / admitted,
                                                3),
        "writes_per_job_all_but_events": round(
            (len(writes) - cats["event"]) / admitted, 3),
        "writes_per_job_total": round(len(writes) / admitted, 3),
        "event_writes_by_verb": dict(events),
        "workload_status_writes_histogram": dict(sorted(collections.Counter(
            per_wl[n] for n in wl_owner).items())),
        "job_writes_histogram": dict(sorted(collections.Counter(
            per_job[j] for j in wl_owner.values()).items())),
        "noop_workload_writes": sum(wl_noop.values()),
        "noop_workload_examples": sorted(wl_noop)[:5],
        "noop_job_writes": sum(job_noop.values()),
        "noop_job_examples": sorted(job_noop)[:5],
        "examples": examples,
        "workload_changes": dict(wl_sigs.most_common()),
        "job_spec_changes": dict(job_sigs.most_common()),
    }


IGNORED = ("metadata.resourceVersion", "metadata.generation",
           "metadata.managedFields")


def flat(o, prefix, out):
    """Leaf paths of a JSON value; lists of conditions are keyed by type,
    lists of named things by name. null, {} and [] are all absent, as
    for a Go client (a write that only turns null into {} changes
    nothing a real API server would store)."""
    if isinstance(o, dict):
        for k, v in o.items():
            flat(v, "%s.%s" % (prefix, k) if prefix else k, out)
    elif isinstance(o, list) and o and all(
            isinstance(x, dict) and ("type" in x or "name" in x) for x in o):
        for x in o:
            flat(x, "%s[%s]" % (prefix, x.get("type", x.get("name"))), out)
    elif o is not None and o != []:
        out[prefix] = json.dumps(o, sort_keys=True)
    return out


def change(old, new):
    """What changed between two versions: (signature of the changes
    outside status, signature of the changes in status). A signature
    lists changed leaves collapsed to 'a.b.c' or 'status.conditions[T]=S'."""
    a, b = flat(old, "", {}), flat(new, "", {})
    keys = set()
    for k in set(a) | set(b):
        if a.get(k) == b.get(k) or k.startswith(IGNORED):
            continue
        m = re.match(r"^(status\.conditions\[[^]]+\])", k)
        if m:
            keys.add(m.group(1) + "=" + str(json.loads(
                b.get(m.group(1) + ".status", '"-"'))))
        else:
            keys.add(".".join(k.split(".")[:3]))
    return (" ".join(sorted(k for k in keys if not k.startswith("status"))),
            " ".join(sorted(k for k in keys if k.startswith("status"))))


NOTHING = "(no semantic change)"


def changes(events, status_by_others=False):
    """Per object: the signatures of its watch events in order. With
    status_by_others (Jobs: the simulator writes their status) events
    that change only status are left out and status is not shown."""
    last, out = {}, collections.defaultdict(list)
    for ev in events:
        o = ev["object"]
        name = o["metadata"]["name"]
        if ev["type"] == "MODIFIED" and name in last:
            main, st = change(last[name], o)
            if status_by_others:
                if not main and st:
                    last[name] = o
                    continue
                st = ""
            out[name].append(" ".join(x for x in (main, st) if x) or NOTHING)
        else:
            out[name].append(ev["type"])
        last[name] = o
    return out


ROWS = (("workload_create", "Workload create", "1"),
        ("workload_status", "Workload status", "1 admission + Finished"),
        ("job_write", "Job patch", "1"),
        (None, "= create + all status + Job", "-"),
        ("workload_other", "Workload, not status", "-"),
        ("queue_status", "ClusterQueue/LocalQueue status", "-"),
        ("other", "other", "-"),
        ("event", "events (reported separately)", "-"))


def report(r):
    per, failed = r["writes_per_job"], r["writes_failed_by_category"]
    n = float(r["jobs"])
    if r["mix"]:
        L = ["controller: the mix, %d Jobs (1 cpu, %d ms, 3 priorities, "
             "%s/s) through 3 ClusterQueues sharing %d cpu in a cohort" % (
                 r["jobs"], r["runtime_ms"], r["rate_per_s"],
                 r["quota_cpu"])]
    else:
        L = ["controller: %d Jobs (1 cpu, %d ms) through one %d-cpu "
             "ClusterQueue" % (r["jobs"], r["runtime_ms"], r["quota_cpu"])]
    f = "  %-36s %11s  %s"
    L.append(f % ("", "measured", "target / reference"))
    L.append(f % ("wall: create -> all Jobs succeeded", "%.1f s" %
                  r["wall_all_jobs_succeeded_s"],
                  ">= %.0f s (capacity bound)" % r["capacity_bound_s"]))
    L.append(f % ("      / capacity bound", "%.2f" %
                  r["wall_over_capacity_bound"], "<= 1.10"))
    L.append(f % ("      -> all Workloads Finished", "%.1f s" %
                  r["wall_all_workloads_finished_s"], ""))
    L.append(f % ("      -> settled (finalizers gone)", "%.1f s" %
                  r["wall_settled_s"], ""))
    L.append(f % ("throughput", "%.1f Jobs/s" % r["jobs_per_s"],
                  "<= %.0f; max running %d of %d" % (
                      r["jobs_per_s_bound"], r["max_running"],
                      r["quota_cpu"])))
    L.append(f % ("quota in use (while >= quota left)", "%.0f %%" %
                  r["utilisation_pct"], "100 %"))
    for key, name in (("admitted_to_job_resumed",
                       "Workload admitted -> Job resumed"),
                      ("job_succeeded_to_workload_finished",
                       "Job succeeded -> Workload Finished")):
        v = r["latency_ms"].get(key) or {}
        L.append(f % (name, "%s ms" % v.get("p50"), "p50; p90 %s ms, "
                      "max %s ms" % (v.get("p90"), v.get("max"))))
    L.append(f % ("controller peak RSS (VmHWM)", "%d KiB" %
                  r["rss_peak_kib"], "idle %d KiB; Kueue manager: "
                  "512 MiB limit" % r["rss_idle_kib"]))
    L.append(f % ("controller CPU, average over the run", "%d mCPU" %
                  r["cpu_avg_mcpu"], "Kueue manager: 500m request"))
    L.append(f % ("controller CPU, 2 s after settled", "%d mCPU" %
                  r["cpu_after_settled_2s_mcpu"], "~0"))
    L.append(f % ("API requests by the controller", r["requests_total"],
                  ", ".join("%s %d" % kv for kv in
                            sorted(r["requests_by_verb"].items()))))
    L.append("  writes per admitted Job            per Job  failed  target")
    for key, name, target in ROWS:
        if key is None:
            v, fl = r["writes_per_job_core"], ""
        else:
            v, fl = per[key], "%.2f" % (failed[key] / n)
        L.append("    %-32s %7.2f  %6s  %s" % (name, v, fl, target))
    v = r["writes_per_job_admission_path"]
    L.append("    %-32s %7.2f  %6s  %s" % (
        "admission path (create+admit+start)", v, "",
        "%d  %s" % (TARGET_WRITES, "ok" if v <= TARGET_WRITES else
                    "OVER by %.2f" % (v - TARGET_WRITES))))
    L.append("    %-32s %7.2f  %6s  %s" % (
        "  of status: Finished", r["writes_per_job_finished_status"], "",
        "- (Kueue's; not in the target)"))
    L.append("    %-32s %7.2f  %6.2f  (%.2f without events)" % (
        "all writes", r["writes_per_job_total"], r["writes_failed"] / n,
        r["writes_per_job_all_but_events"]))
    L.append("  failed: %s" % (", ".join(
        "%d x %s" % (v, k) for k, v in r["writes_failed_codes"].items())
        or "none"))
    L.append("  events: %d objects; %s" % (r["event_objects"], ", ".join(
        "%s %d" % kv for kv in r["event_reasons"].items())))
    kq = r["kueue_events"]
    L.append("  events against Kueue's for the same transitions (cueue / "
             "Kueue): %.2f / %.2f per Job" % (
                 sum(r["event_reasons"].values()) / n,
                 sum(kq.values()) / n))
    for k in sorted(set(kq) | set(r["event_reasons"])):
        a, b = r["event_reasons"].get(k, 0), kq.get(k, 0)
        L.append("    %-40s %6d %6d%s" % (k, a, b, "  MORE" if a > b
                                            else ""))
    L.append("  per Workload, status writes: %s; per Job, Job writes: %s" % (
        " ".join("%sx%d" % kv for kv in
                 r["workload_status_writes_histogram"].items()),
        " ".join("%sx%d" % kv for kv in r["job_writes_histogram"].items())))
    L.append("  what the successful writes changed (from watches):")
    for what, key in (("Workload", "workload_changes"),
                      ("Job", "job_spec_changes")):
        for sig, k in r[key].items():
            if sig not in ("ADDED", "DELETED"):
                sig = sig.replace("status.admission.clusterQueue status."
                                  "admission.podSetAssignments[main]",
                                  "status.admission")
                L.append("    %-8s %5d  %s" % (what, k, sig[:90]))
    L.append("  Job changes outside status only; details in controller.json "
             "(examples), controller-access-log.json")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
