# SPDX-License-Identifier: Apache-2.0
"""cueue-controller against cueue-apiserver, Workloads created directly
(the path Kueue's scheduler benchmark uses): admission within quota with
Kueue's status, a root-cause pending reason beyond it, admission when quota
frees, ClusterQueue status, and restart safety (a restarted controller on a
settled cluster writes nothing and decides nothing again)."""
import os
import time

from cuetest import (Controller, case, check, eq, flavor_and_queue,
                     run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")

QUEUES = flavor_and_queue(9) + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def workload(name, cpu, queue="lq"):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": queue, "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}]}}}]}}


WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"


def cond(wl, t):
    for c in wl.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return None


def get_wl(s, name):
    return s.get_json(WLS + "/" + name)


def reserved(s, name):
    c = cond(get_wl(s, name), "QuotaReserved")
    return c is not None and c["status"] == "True"


def setup(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))


def controller_writes(s, since):
    return [e for e in s.access_log(since)
            if e["userAgent"].startswith("cueue-controller/") and
            e["verb"] in ("POST", "PUT", "PATCH", "DELETE")]


def split(s, names=("a", "b", "c")):
    """(admitted names, pending names) as the API shows them. Workloads
    created within one second tie on creation time; Kueue then orders by
    UID, so which ones win is not known in advance."""
    adm = [n for n in names if reserved(s, n)]
    return adm, [n for n in names if n not in adm]


@case("controller-admits-within-quota")
def admits(s):
    setup(s)
    for n in ("a", "b", "c"):
        code, _, body = s.raw("POST", WLS, workload(n, "4"))
        eq(code, 201, "create %s: %r" % (n, body))
    ctl = Controller(s, store=os.path.join(s.dir, "ledger.db"))
    wait_for(lambda: len(split(s)[0]) == 2, 15, what="two admitted")
    adm, pend = split(s)
    eq(len(pend), 1, "one pending")
    w = get_wl(s, adm[0])
    eq(w["status"]["admission"]["clusterQueue"], "cq")
    psa = w["status"]["admission"]["podSetAssignments"][0]
    eq(psa["flavors"], {"cpu": "default-flavor"})
    eq(psa["resourceUsage"], {"cpu": "4"})
    eq(cond(w, "QuotaReserved")["message"],
       "Quota reserved in ClusterQueue cq")
    eq(cond(w, "Admitted")["status"], "True")
    # The third waits, with Kueue's reason and message.
    c = wait_for(lambda: cond(get_wl(s, pend[0]), "QuotaReserved"), 15,
                 what="pending status")
    eq(c["status"], "False")
    eq(c["reason"], "WaitingForQuota")
    check("insufficient unused quota for cpu in flavor default-flavor, "
          "3 more needed" in c["message"], c["message"])
    # ClusterQueue status.
    cq = wait_for(lambda: (lambda q: q if q.get("status", {}).get(
        "admittedWorkloads") == 2 else None)(s.get_json(
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq")), 10,
        what="cq status")
    eq(cq["status"]["pendingWorkloads"], 1)
    usage = cq["status"]["flavorsReservation"][0]["resources"][0]
    eq((usage["name"], usage["total"]), ("cpu", "8"))
    # One admitted Workload finishes: the pending one fits now.
    code, _, body = s.raw(
        "PATCH", WLS + "/" + adm[0] + "/status", {"status": {
            "conditions": w["status"]["conditions"] + [{
                "type": "Finished", "status": "True", "reason": "Succeeded",
                "message": "done",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        {"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "finish %s: %r" % (adm[0], body))
    wait_for(lambda: reserved(s, pend[0]), 15,
             what="%s admitted after %s finished" % (pend[0], adm[0]))
    ctl.stop()


@case("controller-restart-writes-nothing")
def restart(s):
    setup(s)
    for n in ("a", "b", "c"):
        s.raw("POST", WLS, workload(n, "4"))
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, store=store)
    wait_for(lambda: len(split(s)[0]) == 2 and cond(get_wl(
        s, split(s)[1][0]), "QuotaReserved") is not None, 15,
        what="settled")
    time.sleep(2.5)  # let the ClusterQueue status settle
    ctl.stop()
    rv = {n: get_wl(s, n)["metadata"]["resourceVersion"]
          for n in ("a", "b", "c")}
    mark = s.log_mark()
    ctl = Controller(s, store=store)
    time.sleep(4)
    writes = controller_writes(s, mark)
    eq([(w["verb"], w["path"]) for w in writes], [],
       "writes after a restart on a settled cluster")
    eq({n: get_wl(s, n)["metadata"]["resourceVersion"]
        for n in ("a", "b", "c")}, rv, "no Workload changed")
    check(ctl.alive(), "controller running")
    ctl.stop()


@case("controller-missing-localqueue-is-the-reason")
def missing_lq(s):
    setup(s)
    s.raw("POST", WLS, workload("x", "1", queue="nope"))
    ctl = Controller(s)
    c = wait_for(lambda: cond(get_wl(s, "x"), "QuotaReserved"), 15,
                 what="pending status")
    eq(c["status"], "False")
    check("nope" in c["message"] and "LocalQueue" in c["message"],
          "root cause first: %r" % c["message"])
    ctl.stop()


run_cases()
