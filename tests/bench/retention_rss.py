# SPDX-License-Identifier: Apache-2.0
"""tests/bench/retention_rss.py - cueue-controller's resident memory while
10,000 Jobs flow through with objectRetentionPolicies on. A report, never
a pass/fail test (not part of make test or make bench).

A cueue-apiserver (--simulate jobs) and a cueue-controller with
objectRetentionPolicies.workloads.afterFinished: 0s (finished Workloads
deleted at once, as a busy cluster would configure it). N suspended Jobs
of 1 cpu, RUNTIME_MS each, are created in waves that keep at most WINDOW
unfinished; a finished Job is deleted by this script a moment later (as
Job's ttlSecondsAfterFinished would), so what the controller keeps is its
own state. Every CHECK Jobs the controller's RSS (VmRSS) is sampled; the
report gives the samples and the growth over the second half of the run
(flat: a few hundred KiB at most, allocator noise). Without retention the
Workloads of finished Jobs would stay in the controller's cache.

Environment: CUEUE_BIN (programs; default build/release/bin), BENCH_JOBS
(10000), BENCH_WINDOW (200), BENCH_RUNTIME_MS (100), BENCH_CHECK (1000),
BENCH_OUT (build/bench): retention-rss.txt.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.abspath(os.environ.get("BENCH_OUT",
                                     os.path.join(ROOT, "build", "bench")))
os.makedirs(OUT, exist_ok=True)
os.environ.setdefault("CUEUE_BIN", os.path.join(ROOT, "build", "release",
                                                "bin"))
os.environ.setdefault("CUEUE_LOGS", OUT)
os.environ.setdefault("CUEUE_TEST_NAME", "retention-rss")
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
import cuetest  # noqa: E402

N = int(os.environ.get("BENCH_JOBS", "10000"))
WINDOW = int(os.environ.get("BENCH_WINDOW", "200"))
RUNTIME_MS = int(os.environ.get("BENCH_RUNTIME_MS", "100"))
CHECK = int(os.environ.get("BENCH_CHECK", "1000"))
NS = "bench"

CONFIG = cuetest.CONTROLLER_CONFIG + """objectRetentionPolicies:
  workloads:
    afterFinished: 0s
"""


def job(name):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name": "default"},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(RUNTIME_MS)}},
            "spec": {"parallelism": 1, "completions": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "1"}}}],
                         "restartPolicy": "Never"}}}}


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def finished_jobs(srv):
    items = srv.get_json("/apis/batch/v1/namespaces/%s/jobs" % NS)["items"]
    done, live = [], 0
    for j in items:
        conds = j.get("status", {}).get("conditions", [])
        if any(c["type"] in ("Complete", "Failed") and c["status"] == "True"
               for c in conds):
            done.append(j["metadata"]["name"])
        else:
            live += 1
    return done, live


def main():
    srv = cuetest.Server(tls=True, simulate="jobs")
    ctl = None
    lines = []
    try:
        srv.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
        srv.kubectl("wait", "--for=condition=Established", "crd", "--all",
                    "--timeout=30s")
        srv.kubectl("apply", "-f",
                    srv.file("queues.yaml", cuetest.flavor_and_queue(50)))
        srv.namespace(NS)
        code, _, body = srv.raw(
            "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues"
            % NS, {"apiVersion": "kueue.x-k8s.io/v1beta2",
                   "kind": "LocalQueue",
                   "metadata": {"name": "default", "namespace": NS},
                   "spec": {"clusterQueue": "cq"}})
        cuetest.eq(code, 201, "LocalQueue: %r" % body)
        ctl = cuetest.Controller(srv, config=CONFIG)
        time.sleep(2)
        created = deleted = 0
        samples = []
        t0 = time.monotonic()
        next_check = CHECK
        while deleted < N:
            done, live = finished_jobs(srv)
            for name in done:
                srv.raw("DELETE", "/apis/batch/v1/namespaces/%s/jobs/%s"
                        % (NS, name), {"propagationPolicy": "Background"})
                deleted += 1
            while created < N and live < WINDOW:
                code, _, body = srv.raw(
                    "POST", "/apis/batch/v1/namespaces/%s/jobs" % NS,
                    job("j%05d" % created))
                cuetest.eq(code, 201, "create: %r" % body)
                created += 1
                live += 1
            if deleted >= next_check:
                time.sleep(1)  # let the retention deletes land
                r = rss_kib(ctl.proc.pid)
                wls = len(srv.get_json(
                    "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"
                    % NS)["items"])
                samples.append((deleted, r, wls))
                lines.append("%6d jobs done  RSS %7d KiB  Workloads left %d"
                             "  (%.0f s)" % (deleted, r, wls,
                                             time.monotonic() - t0))
                print(lines[-1], flush=True)
                next_check += CHECK
            time.sleep(0.2)
        half = [s for s in samples if s[0] > N // 2]
        if len(half) >= 2:
            lines.append("growth over the second half: %+d KiB"
                         % (half[-1][1] - half[0][1]))
        lines.append("peak RSS %d KiB; %d Jobs in %.0f s" % (
            max(s[1] for s in samples), N, time.monotonic() - t0))
    finally:
        if ctl is not None:
            ctl.stop()
        srv.stop()
    with open(os.path.join(OUT, "retention-rss.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[-2:]))


if __name__ == "__main__":
    main()
