# SPDX-License-Identifier: Apache-2.0
"""docs/tasks/ (the guides) against make run's cluster: every guide links
Kueue's page on the same task and only YAML that exists, README links the
guides; on a running scripts/quickstart.sh every Configuration file of the
guides passes --check-config without a warning and every other YAML file
applies with the machine's kubectl, and what each guide says happens
does: team-a borrows 1 cpu from its cohort, the urgent job holds the
quota the routine one wanted, sweep is admitted with 4 of its 6 pods,
train passes its ProvisioningRequest check, allreduce gets a topology
assignment, and the two broken jobs of the troubleshooting guide say why
they wait."""
import json
import os
import re
import subprocess
import sys
import threading
import time
import traceback

from cuetest import BIN, ROOT, Failure, check, eq
from t_quickstart import Quickstart

TASKS = os.path.join(ROOT, "docs", "tasks")
# Last, nodes before the flavor that needs them: once Nodes exist, make
# run's scheduler binds every new pod to one, and the other guides' pods
# would take the topology's room.
LAST = ["topology-aware-scheduling-nodes.yaml",
        "topology-aware-scheduling.yaml"]


def kubectl(q, *args):
    env = dict(os.environ, KUBECONFIG=q.b["kubeconfig"])
    return subprocess.run(["kubectl", "--cache-dir",
                           os.path.join(q.dir, "guides-cache")] + list(args),
                          capture_output=True, text=True, env=env,
                          timeout=60, cwd=ROOT)


def get(q, *args):
    p = kubectl(q, "get", "-o", "json", *args)
    eq(p.returncode, 0, "get %r: %s" % (args, p.stderr))
    return json.loads(p.stdout)


def workload_of(q, job, ns="default"):
    for wl in get(q, "workloads", "-n", ns).get("items", []):
        for o in wl["metadata"].get("ownerReferences", []):
            if o.get("kind") == "Job" and o.get("name") == job:
                return wl
    return None


def cond(wl, t):
    for c in (wl or {}).get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return {}


def until(what, fn, timeout=40):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.5)
    raise Failure("%s: not within %ds (last: %r)" % (what, timeout, last))


def docs_links():
    guides = sorted(f for f in os.listdir(TASKS)
                    if f.endswith(".md") and f != "README.md")
    eq(len(guides), 10, "ten guides: %r" % guides)
    with open(os.path.join(TASKS, "README.md")) as f:
        index = f.read()
    for g in guides:
        with open(os.path.join(TASKS, g)) as f:
            text = f.read()
        check(re.search(r"\(https://kueue\.sigs\.k8s\.io/docs/[^)]+/\)",
                        text), "%s links no Kueue page" % g)
        check("(%s)" % g in index, "README.md does not list %s" % g)
        for y in re.findall(r"\]\(([\w.-]+\.yaml)\)", text):
            check(os.path.exists(os.path.join(TASKS, y)),
                  "%s links missing %s" % (g, y))
    with open(os.path.join(ROOT, "README.md")) as f:
        check("docs/tasks/" in f.read(), "README.md links the guides")


def apply_all(q, files):
    for f in files:
        path = os.path.join(TASKS, f)
        with open(path) as fh:
            text = fh.read()
        if re.search(r"^kind: Configuration$", text, re.M):
            p = subprocess.run([os.path.join(BIN, "cueue-controller"),
                                "--config", path, "--check-config"],
                               capture_output=True, text=True, timeout=30)
            eq(p.returncode, 0, "%s: %s" % (f, p.stderr))
            eq(p.stderr, "", "%s: warnings" % f)
            continue
        p = kubectl(q, "apply", "-f", path)
        eq(p.returncode, 0, "apply %s: %s" % (f, p.stderr))
        eq(p.stderr, "", "apply %s" % f)


def borrowed_cpu(q):
    st = get(q, "clusterqueue", "team-a-cq").get("status", {})
    for fl in st.get("flavorsUsage", []):
        for r in fl.get("resources", []):
            if r["name"] == "cpu" and str(r.get("borrowed")) == "1":
                return True
    return False


def outcomes(q):
    until("quotas: team-a-cq borrows 1 cpu", lambda: borrowed_cpu(q))
    until("priority: hotfix-rebuild holds prio-cq's quota",
          lambda: cond(workload_of(q, "hotfix-rebuild"),
                       "QuotaReserved").get("status") == "True" and
          cond(workload_of(q, "nightly-index"),
               "QuotaReserved").get("status") != "True")

    def partial():
        wl = workload_of(q, "sweep")
        psa = (wl or {}).get("status", {}).get("admission", {}).get(
            "podSetAssignments", [])
        return psa and psa[0].get("count")
    eq(until("partial: sweep admitted", partial), 4, "sweep's pods")
    until("admission check: train admitted after provisioning",
          lambda: cond(workload_of(q, "train"), "Admitted").get(
              "status") == "True")
    for job, want in (("wrong-queue",
                       "LocalQueue no-such-queue doesn't exist"),
                      ("too-big", "> maximum capacity (9)")):
        until("troubleshooting: %s says %r" % (job, want),
              lambda: want in cond(workload_of(q, job),
                                   "QuotaReserved").get("message", ""))


def main():
    q = None
    failed = 0
    start = time.time()
    try:
        docs_links()
        q = Quickstart("guides")
        q.banner()
        # keep reading its progress lines: a full pipe would stop it
        threading.Thread(target=lambda: [None for _ in q.proc.stdout],
                         daemon=True).start()
        files = sorted(f for f in os.listdir(TASKS) if f.endswith(".yaml"))
        apply_all(q, [f for f in files if f not in LAST])
        outcomes(q)
        apply_all(q, LAST)
        until("tas: allreduce placed", lambda: any(
            a.get("topologyAssignment") for a in
            (workload_of(q, "allreduce") or {}).get("status", {}).get(
                "admission", {}).get("podSetAssignments", [])))
        print("  ok   guides (%.1fs)" % (time.time() - start), flush=True)
    except Exception:
        failed = 1
        print("  FAIL guides (%.1fs)" % (time.time() - start), flush=True)
        traceback.print_exc()
    finally:
        if q is not None:
            q.kill()
    print("%d passed, %d failed" % (1 - failed, failed))
    sys.exit(failed)


if __name__ == "__main__":
    main()
