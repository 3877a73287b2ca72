#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/mk-quickstart.py - `make run MULTIKUEUE=1`: MultiKueue on this
machine, no cluster needed. Three cueue-apiserver processes are three
clusters, each with its own cueue-controller: a manager (the MultiKueue
admission check, its worker kubeconfigs in Secrets, Kueue's
multikueue-setup.yaml) and two workers with 4 CPUs each, running Jobs
with their Job simulators. Six 2-CPU Jobs are sent to the manager
(spec.managedBy kueue.x-k8s.io/multikueue); every 2 s a table shows, per
Job, the worker that won it and the manager's Job status copied back
from it, until all are Complete; then everything is stopped.

The clusters are the ones tests/integration/t_multikueue.py builds
(its Clusters helper), with the programs of CUEUE_BIN and logs under a
temporary directory (MK_QUICKSTART_LOGS=DIR, existing, puts them there).
Not all Complete after 180 s: it stops and exits 1."""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
os.environ.setdefault("CUEUE_LOGS", os.environ.get(
    "MK_QUICKSTART_LOGS") or tempfile.mkdtemp(prefix="cueue-mk-"))
os.environ.setdefault("CUEUE_TEST_NAME", "mk-quickstart")
sys.path[:0] = [os.path.join(ROOT, "tests", "pylib"),
                os.path.join(ROOT, "tests", "integration")]

from cuetest import Server, wait_for  # noqa: E402
from cuetest.kobj import is_true  # noqa: E402
from t_multikueue import KQ, NS, W1, W2, Clusters, active, job  # noqa: E402

JOBS = ["demo-%d" % i for i in range(6)]


def row(s, name):
    j = s.get_json("/apis/batch/v1/namespaces/%s/jobs/%s" % (NS, name))
    st = j.get("status") or {}
    wl = [w for w in s.get_json(KQ + "/namespaces/%s/workloads" % NS)[
        "items"] if (w["metadata"].get("ownerReferences") or [{}])[0].get(
            "name") == name]
    where = ((wl[0].get("status") or {}).get("clusterName") if wl
             else None) or "-"
    state = "Complete" if is_true(j, "Complete") else (
        "running" if st.get("active") else "waiting")
    return "%-8s %-26s %-9s active=%s succeeded=%s" % (
        name, where, state, st.get("active", 0), st.get("succeeded", 0))


def main():
    start = time.time()
    s = Server(simulate="jobs")
    k = None
    try:
        print("mk-quickstart: manager %s; starting two workers (4 CPUs "
              "each) and three controllers" % s.kubeconfig, flush=True)
        k = Clusters(s, "4", "4")
        wait_for(lambda: active(s, KQ + "/multikueueclusters/" + W1) and
                 active(s, KQ + "/multikueueclusters/" + W2), 60,
                 what="both MultiKueueClusters Active")
        print(s.kubectl("get", "multikueueclusters").stdout, flush=True)
        for n in JOBS:
            s.raw("POST", "/apis/batch/v1/namespaces/%s/jobs" % NS,
                  job(n, cpu="2", runtime_ms=4000))
        print("mk-quickstart: %d Jobs of 2 CPUs sent to the manager" %
              len(JOBS), flush=True)
        while True:
            rows = [row(s, n) for n in JOBS]
            print("--- %.0f s" % (time.time() - start))
            print("\n".join(rows), flush=True)
            if all(" Complete " in r for r in rows):
                break
            if time.time() - start > 180:
                print("mk-quickstart: not all Complete after 180 s; the "
                      "programs' logs are kept in %s" %
                      os.environ["CUEUE_LOGS"], flush=True)
                sys.exit(1)
            time.sleep(2)
        per = {w: sum(1 for r in rows if " %s " % w in r) for w in (W1, W2)}
        print("mk-quickstart: all %d Complete in %.0f s; ran on %s" % (
            len(JOBS), time.time() - start, per), flush=True)
    finally:
        if k is not None:
            k.stop()
        s.stop()
        print("mk-quickstart: stopped; logs in %s" % os.environ["CUEUE_LOGS"])


if __name__ == "__main__":
    main()
