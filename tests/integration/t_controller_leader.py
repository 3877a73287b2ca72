# SPDX-License-Identifier: Apache-2.0
"""Two cueue-controller replicas with leader election on a Lease: one
leads and writes; killed with SIGKILL, the other takes over within 20 s;
no Workload is admitted twice; SIGTERM releases the Lease so a successor
takes over at once."""
import os
import signal
import time

from cuetest import (Controller, case, check, controller_config, eq,
                     flavor_and_queue, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

CONFIG = controller_config(leader=True)

QUEUES = flavor_and_queue(9) + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""

WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/default/leases/cueue-leader"


def workload(name, cpu):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}]}}}]}}


def reserved_names(s):
    out = []
    for w in s.get_json(WLS)["items"]:
        for c in w.get("status", {}).get("conditions", []):
            if c["type"] == "QuotaReserved" and c["status"] == "True":
                out.append(w["metadata"]["name"])
    return sorted(out)


def holder(s):
    code, _, body = s.raw("GET", LEASE)
    return body["spec"].get("holderIdentity") if code == 200 else None


def admissions_per_workload(st):
    """QuotaReserved transitions to True per Workload in a watch."""
    last, count = {}, {}
    for ev in st.events():
        o = ev["object"]
        n = o["metadata"]["name"]
        now = any(c["type"] == "QuotaReserved" and c["status"] == "True"
                  for c in o.get("status", {}).get("conditions", []))
        if now and not last.get(n, False):
            count[n] = count.get(n, 0) + 1
        last[n] = now
    return count


def finish(s, name):
    w = s.get_json(WLS + "/" + name)
    code, _, body = s.raw(
        "PATCH", WLS + "/" + name + "/status", {"status": {
            "conditions": w["status"]["conditions"] + [{
                "type": "Finished", "status": "True", "reason": "Succeeded",
                "message": "done",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        {"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "finish %s: %r" % (name, body))


@case("leader-killed-successor-takes-over")
def takeover(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("q.yaml", QUEUES))
    watch = s.stream(WLS + "?watch=1&timeoutSeconds=300")
    for n in ("a", "b", "c"):
        s.raw("POST", WLS, workload(n, "4"))
    ctls = {i: Controller(s, config=CONFIG, env={"POD_NAME": i})
            for i in ("replica-1", "replica-2")}
    lead = wait_for(lambda: holder(s), 20, what="a leader")
    check(lead in ctls, "holder %r" % lead)
    wait_for(lambda: len(reserved_names(s)) == 2, 20, what="2 admitted")
    # Kill the leader without a chance to release.
    ctls[lead].stop(signal.SIGKILL)
    other = [i for i in ctls if i != lead][0]
    t0 = time.time()
    wait_for(lambda: holder(s) == other, 20, what="takeover")
    took = time.time() - t0
    check(took < 20, "takeover in %.1f s" % took)
    # The new leader works: free quota, the third is admitted.
    adm = reserved_names(s)
    finish(s, adm[0])
    wait_for(lambda: len(reserved_names(s)) == 3, 20,
             what="third admitted by the new leader")
    time.sleep(0.5)
    counts = admissions_per_workload(watch)
    watch.close()
    for n, k in counts.items():
        eq(k, 1, "admissions of %s" % n)
    eq(sorted(counts), ["a", "b", "c"])
    # SIGTERM releases the lease: holderIdentity is cleared.
    ctls[other].stop()
    lease = s.get_json(LEASE)
    eq(lease["spec"].get("holderIdentity", ""), "", "released on SIGTERM")


run_cases()
