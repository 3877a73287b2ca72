# SPDX-License-Identifier: Apache-2.0
"""tests/bench/mk_bench.py - `make bench`: MultiKueue at scale. A report,
never a pass/fail timing test.

One manager and BENCH_MK_WORKERS workers (default 3), each a
cueue-apiserver (the workers with the Job simulator) with its own
cueue-controller, set up as tests/integration/t_multikueue.py sets them
up (its Clusters helper: worker kubeconfigs in Secrets, Kueue's
multikueue-setup.yaml, one MultiKueueCluster per worker). The manager's
ClusterQueue and each worker's hold BENCH_MK_QUOTA CPUs (default: the
number of Jobs: quota never limits), so what is measured is MultiKueue
itself. BENCH_MK_JOBS Jobs (default 3,000; 1 CPU, RUNTIME_MS of
simulated run) are sent to the manager with spec.managedBy
kueue.x-k8s.io/multikueue, as fast as the manager's API server takes
them (4 clients). The run ends once every manager Job is Complete and
every copy on the workers is gone.

Measured, from our watches of all clusters (arrival times) and the API
servers' access logs:
  - dispatch throughput: Jobs whose MultiKueue check went Ready (the
    winner named) per second, from the first create to the last Ready;
    and the whole run (all Complete, the copies collected);
  - time to admission on the workers: from a Job's create on the manager
    to the first copy of its Workload admitted on a worker, p50/p99
    (and create -> check Ready on the manager, p50/p99);
  - manager writes per Job: the manager controller's writes to its own
    API server by kind, and its writes to the workers (their access
    logs, User-Agent "... multikueue"), per Job.
Sanity (the run fails on any): every Job Complete on the manager, each
ran on exactly one worker, none on two workers at once. A run that
times out names the manager Jobs not Complete, counted by state (the
Job suspended or running, its Workload's conditions, the check's
state).

Environment: CUEUE_BIN (the programs; make bench: the release build),
BENCH_OUT (default build/bench), BENCH_MK_JOBS (3000), BENCH_MK_WORKERS
(3), BENCH_MK_QUOTA (the number of Jobs), BENCH_MK_RUNTIME_MS (1000),
BENCH_MK_TIMEOUT_S (1800). Writes BENCH_OUT/multikueue.json (every
figure) and BENCH_OUT/multikueue.txt (the report); the programs' logs in
BENCH_OUT/mk-logs/.
"""
import collections
import concurrent.futures
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.abspath(os.environ.get("BENCH_OUT",
                                     os.path.join(ROOT, "build", "bench")))
os.makedirs(os.path.join(OUT, "mk-logs"), exist_ok=True)
os.environ.setdefault("CUEUE_LOGS", os.path.join(OUT, "mk-logs"))
os.environ.setdefault("CUEUE_TEST_NAME", "mk-bench")
sys.path[:0] = [os.path.join(ROOT, "tests", "pylib"),
                os.path.join(ROOT, "tests", "integration")]

import cuetest  # noqa: E402
from cuetest.kobj import is_true  # noqa: E402
from controller_bench import category, is_watch  # noqa: E402
from t_multikueue import (KQ, MANAGER_CONFIG, NS, Clusters,  # noqa: E402
                          check_of, job, job_running, two_at_once)

N = int(os.environ.get("BENCH_MK_JOBS", "3000"))
WORKERS = int(os.environ.get("BENCH_MK_WORKERS", "3"))
QUOTA = int(os.environ.get("BENCH_MK_QUOTA", str(N)))
RUNTIME_MS = int(os.environ.get("BENCH_MK_RUNTIME_MS", "1000"))
TIMEOUT_S = float(os.environ.get("BENCH_MK_TIMEOUT_S", "1800"))
# Kueue's defaults: no collection or lost worker within a run.
CONFIG = MANAGER_CONFIG.replace("gcInterval: 2s", "gcInterval: 1m").replace(
    "workerLostTimeout: 5s", "workerLostTimeout: 15m")
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def log(msg):
    print("mk-bench: " + msg, flush=True)


def pct(values, q):
    """The q-quantile (nearest rank) of values, or None."""
    v = sorted(values)
    if not v:
        return None
    return v[min(len(v) - 1, int(q * len(v)))]


def owner(o):
    return (o["metadata"].get("ownerReferences") or [{}])[0].get("name")


def admitted(o):
    return any(c.get("type") == "Admitted" and c.get("status") == "True"
               for c in (o.get("status") or {}).get("conditions") or [])


def times(k, created):
    """From the watch timeline: per Job, when its manager Workload's
    check went Ready and when a worker first admitted a copy; the
    worker each Job ran on."""
    ready, first_admit, ran_on, wl_job = {}, {}, collections.defaultdict(
        set), {}
    for t, i, name, o in sorted(list(k.timeline), key=lambda e: e[0]):
        if o is None:
            continue
        if "podSets" in o.get("spec", {}):
            if i == 0:
                wl_job[name] = owner(o)
                if check_of(o).get("state") == "Ready":
                    ready.setdefault(owner(o), t)
            elif admitted(o):
                first_admit.setdefault(name, t)
        elif i > 0 and job_running(o):
            ran_on[name].add(i)
    admit = {wl_job[w]: t for w, t in first_admit.items() if w in wl_job}
    return ready, admit, ran_on


def writes(entries, who):
    """Write requests of entries whose User-Agent passes who, by
    category (controller_bench's), and their total."""
    by = collections.Counter()
    for e in entries:
        if e["verb"] in WRITE_VERBS and who(e.get("userAgent", "")) and \
                not is_watch(e):
            by[category(e)] += 1
    return dict(by), sum(by.values())


def done(s, k):
    """Every manager Job Complete and no copy left on any worker."""
    jobs = s.get_json("/apis/batch/v1/namespaces/%s/jobs" % NS)["items"]
    complete = sum(1 for j in jobs if any(
        c.get("type") == "Complete" and c.get("status") == "True"
        for c in (j.get("status") or {}).get("conditions") or []))
    left = sum(len(w.get_json(KQ + "/namespaces/%s/workloads" % NS)[
        "items"]) for w in k.w)
    return complete, left


def stuck(s):
    """The manager Jobs not Complete, counted by (the Job suspended?, its
    Workload's True conditions, the check's state), with a few names of
    each: what a run that timed out left behind."""
    wls = {owner(w): w for w in s.get_json(
        KQ + "/namespaces/%s/workloads" % NS)["items"]}
    by = collections.defaultdict(list)
    for j in s.get_json("/apis/batch/v1/namespaces/%s/jobs" % NS)["items"]:
        if is_true(j, "Complete"):
            continue
        name = j["metadata"]["name"]
        w = wls.get(name) or {}
        conds = ",".join(sorted(
            c["type"] for c in (w.get("status") or {}).get("conditions")
            or [] if c.get("status") == "True")) or "-"
        key = ("suspended" if j["spec"].get("suspend") else "running",
               conds, check_of(w).get("state", "-"))
        by[key].append(name)
    return {"%s; Workload %s; check %s" % k: "%d (%s)" % (
        len(v), " ".join(sorted(v)[:3])) for k, v in sorted(by.items())}


def run(s):
    k = Clusters(s, *[str(QUOTA)] * WORKERS, config=CONFIG,
                 ctl_args=("--zap-log-level", "info"), manager_cpu=QUOTA)
    try:
        cuetest.wait_for(lambda: is_true(s.get_json(
            KQ + "/admissionchecks/sample-multikueue"), "Active") and all(
            is_true(s.get_json(KQ + "/multikueueclusters/%s" % c),
                            "Active") for c in s.get_json(
                KQ + "/multikueueconfigs/multikueue-test")["spec"][
                "clusters"]), 120, what="the check and every worker Active")
        marks = [srv.log_mark() for srv in [s] + k.w]
        created = {}
        t0 = time.monotonic()

        def create(i):
            name = "mk%05d" % i
            code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs"
                                  % NS, job(name, cpu="1",
                                            runtime_ms=RUNTIME_MS))
            cuetest.eq(code, 201, "create %s: %r" % (name, body))
            created[name] = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            list(ex.map(create, range(N)))
        t_created = time.monotonic()
        log("%d Jobs created in %.1f s" % (N, t_created - t0))
        last = None
        while True:
            complete, left = done(s, k)
            if (complete, left) != last:
                log("%.0f s: %d/%d Complete, %d copies on the workers" % (
                    time.monotonic() - t0, complete, N, left))
                last = (complete, left)
            if complete == N and left == 0:
                break
            if time.monotonic() - t0 > TIMEOUT_S:
                raise cuetest.Failure("timeout: %d/%d Complete, %d copies "
                                      "left; not Complete: %s" % (
                                          complete, N, left, stuck(s)))
            time.sleep(2)
        t_end = time.monotonic()
        ready, admit, ran_on = times(k, created)
        bad = two_at_once(k)
        cuetest.eq(len(ready), N, "Jobs whose check went Ready")
        cuetest.eq(sorted(n for n in created if len(ran_on.get(n, ())) != 1),
                   [], "Jobs not run on exactly one worker")
        cuetest.eq(bad, [], "Jobs on two workers at once")
        mgr_by, mgr = writes(s.access_log(marks[0]),
                             lambda ua: ua.startswith("cueue-controller/")
                             and not ua.endswith(" multikueue"))
        rem_by, rem = collections.Counter(), 0
        per_worker = []
        for w, m in zip(k.w, marks[1:]):
            by, n = writes(w.access_log(m),
                           lambda ua: ua.endswith(" multikueue"))
            rem_by.update(by)
            rem += n
            per_worker.append(sum(1 for n in created
                                  if ran_on.get(n) == {k.w.index(w) + 1}))
        to_admit = [(admit[n] - created[n]) * 1000 for n in created
                    if n in admit]
        to_ready = [(ready[n] - created[n]) * 1000 for n in created
                    if n in ready]
        last_ready = max(ready.values())
        r = {
            "jobs": N, "workers": WORKERS, "quota_cpu": QUOTA,
            "runtime_ms": RUNTIME_MS, "cueue_bin": cuetest.BIN,
            "create_s": round(t_created - t0, 2),
            "dispatch_s": round(last_ready - t0, 2),
            "dispatch_per_s": round(N / (last_ready - t0), 1),
            "wall_s": round(t_end - t0, 2),
            "create_to_worker_admitted_ms": {
                "p50": round(pct(to_admit, 0.5), 1),
                "p99": round(pct(to_admit, 0.99), 1),
                "max": round(max(to_admit), 1), "n": len(to_admit)},
            "create_to_check_ready_ms": {
                "p50": round(pct(to_ready, 0.5), 1),
                "p99": round(pct(to_ready, 0.99), 1),
                "max": round(max(to_ready), 1)},
            "manager_writes_per_job": round(mgr / N, 2),
            "manager_writes_by_kind": mgr_by,
            "manager_writes_to_workers_per_job": round(rem / N, 2),
            "manager_writes_to_workers_by_kind": dict(rem_by),
            "jobs_per_worker": per_worker,
            "two_at_once": bad,
        }
        return r
    finally:
        k.stop()


def report(r):
    a, c = r["create_to_worker_admitted_ms"], r["create_to_check_ready_ms"]
    return "\n".join([
        "MultiKueue: 1 manager, %d workers, %d Jobs (1 cpu, %d ms), quota "
        "%d cpu everywhere" % (r["workers"], r["jobs"], r["runtime_ms"],
                               r["quota_cpu"]),
        "  created in %.1f s; dispatched (check Ready) in %.1f s: %.1f "
        "Jobs/s; all Complete, copies gone: %.1f s" % (
            r["create_s"], r["dispatch_s"], r["dispatch_per_s"],
            r["wall_s"]),
        "  create -> first copy admitted on a worker: p50 %.0f ms, p99 %.0f "
        "ms, max %.0f ms" % (a["p50"], a["p99"], a["max"]),
        "  create -> check Ready on the manager: p50 %.0f ms, p99 %.0f ms" %
        (c["p50"], c["p99"]),
        "  manager writes per Job: %.2f to its API server %s; %.2f to the "
        "workers %s" % (r["manager_writes_per_job"],
                        r["manager_writes_by_kind"],
                        r["manager_writes_to_workers_per_job"],
                        r["manager_writes_to_workers_by_kind"]),
        "  Jobs per worker: %s; on two workers at once: %d" % (
            r["jobs_per_worker"], len(r["two_at_once"]))])


def main():
    s = cuetest.Server(simulate="jobs")
    try:
        r = run(s)
    finally:
        s.stop()
    with open(os.path.join(OUT, "multikueue.json"), "w") as f:
        json.dump(r, f, indent=1, sort_keys=True)
    text = report(r)
    with open(os.path.join(OUT, "multikueue.txt"), "w") as f:
        f.write(text + "\n")
    print(text, flush=True)


if __name__ == "__main__":
    main()
