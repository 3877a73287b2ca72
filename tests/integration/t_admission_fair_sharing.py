# SPDX-License-Identifier: Apache-2.0
"""Admission fair sharing (Kueue's KEP-4136) end to end through the API with
the Job simulator: in a ClusterQueue with admissionScope
UsageBasedAdmissionFairSharing, two LocalQueues whose backlogs compete get
admissions in proportion to their weights once the early flood's usage has
decayed; status.fairSharing.admissionFairSharingStatus and the usage
metric are reported; and a restarted controller orders by the usage it
recovers from the LocalQueue status."""
import calendar
import os
import re
import time
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, Failure, case, check, eq,
                     free_port, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
KQ = "/apis/kueue.x-k8s.io/v1beta2"


def config(port, half_life="4s", sampling="1s"):
    return CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  localQueueMetrics: {enable: true}' % port) + """\
integrations:
  frameworks: ["batch/job"]
admissionFairSharing:
  usageHalfLifeTime: %s
  usageSamplingInterval: %s
  resourceWeights:
    cpu: 1
""" % (half_life, sampling)


def scrape(port):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read().decode()


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))


def setup(s, cpu, queues, stop="None"):
    """ClusterQueue `cq` of cpu with admission fair sharing, and per
    (namespace, weight) a LocalQueue `lq` there."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/workloadpriorityclasses", {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass", "metadata": {"name": "high"},
        "value": 1000})
    post(s, KQ + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "stopPolicy": stop,
                 "admissionScope": {
                     "admissionMode": "UsageBasedAdmissionFairSharing"},
                 "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                     {"name": "default-flavor", "resources": [
                         {"name": "cpu", "nominalQuota": str(cpu)}]}]}]}})
    for ns, weight in queues:
        s.namespace(ns)
        spec = {"clusterQueue": "cq"}
        if weight is not None:
            spec["fairSharing"] = {"weight": weight}
        post(s, KQ + "/namespaces/%s/localqueues" % ns,
             {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
              "metadata": {"name": "lq", "namespace": ns}, "spec": spec})


def job(ns, name, runtime_ms, priority=None):
    labels = {"kueue.x-k8s.io/queue-name": "lq"}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "1"}}}],
                         "restartPolicy": "Never"}}}}


def flood(s, ns, n, runtime_ms, prefix="j"):
    for i in range(n):
        post(s, "/apis/batch/v1/namespaces/%s/jobs" % ns,
             job(ns, "%s%d" % (prefix, i), runtime_ms))


def workloads(s, ns):
    return s.get_json(KQ + "/namespaces/%s/workloads" % ns)["items"]


def reserved(wl):
    """The Workload got quota (it may have finished since)."""
    return wl.get("status", {}).get("admission") is not None


def admitted(s, ns):
    return sum(1 for w in workloads(s, ns) if reserved(w))


def afs_status(s, ns):
    lq = s.get_json(KQ + "/namespaces/%s/localqueues/lq" % ns)
    return lq.get("status", {}).get("fairSharing", {}).get(
        "admissionFairSharingStatus")


def milli(q):
    """"1500m" / "2" as milli-units."""
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


@case("admissions-follow-weights-once-usage-decays", simulate="jobs")
def weights(s):
    """ClusterQueue of 10 cpu, LocalQueues a (weight 1) and b (weight 2),
    1 s Jobs of 1 cpu. a floods first and takes everything; b's backlog
    arrives later. Classically every older Workload of a would go first
    (b would get nothing while a has a backlog); with admission fair
    sharing, once a's early usage has decayed, b gets about twice as
    many admissions as a."""
    setup(s, 10, [("team-a", None), ("team-b", "2")])
    port = free_port()
    ctl = Controller(s, config=config(port, "2s"))
    flood(s, "team-a", 80, 1000)
    wait_for(lambda: admitted(s, "team-a") >= 20 or None, 30,
             what="a runs its flood")
    flood(s, "team-b", 75, 1000)
    # Let a's early usage decay (two half-lives) before counting.
    wait_for(lambda: admitted(s, "team-b") >= 15 or None, 30,
             what="b gets admissions while a still has a backlog")
    a0, b0 = admitted(s, "team-a"), admitted(s, "team-b")
    # A cap, not a figure: 10 cpu of 1 s Jobs make ~5 s on an idle
    # machine; a loaded one (sanitizers, parallel suites) is far slower.
    wait_for(lambda: admitted(s, "team-b") >= b0 + 36 or None, 120,
             what="b gets 36 more admissions")
    a1, b1 = admitted(s, "team-a"), admitted(s, "team-b")
    pending_a = len(workloads(s, "team-a")) - a1
    check(pending_a > 0, "a still had a backlog: %d pending" % pending_a)
    pending_b = len(workloads(s, "team-b")) - b1
    check(pending_b > 0, "b still had a backlog: %d pending" % pending_b)
    da, db = a1 - a0, b1 - b0
    check(da > 0, "a keeps getting admissions (%d)" % da)
    ratio = db / da
    print("b:a admissions %d:%d = %.2f" % (db, da, ratio))
    check(1.3 <= ratio <= 3.0,
          "b:a admissions %d:%d = %.2f, want about 2 (weights 2:1)"
          % (db, da, ratio))
    st = afs_status(s, "team-a")
    check(st is not None and "lastUpdate" in st, "status of a: %r" % st)
    check(milli(st["consumedResources"]["cpu"]) > 0, st)
    lq = s.get_json(KQ + "/namespaces/team-a/localqueues/lq")
    eq(lq["status"]["fairSharing"].get("weightedShare"), 0)
    text = scrape(port)
    m = re.search(r'kueue_local_queue_admission_fair_sharing_usage\{'
                  r'name="lq",namespace="team-b",cluster_queue="cq"'
                  r'[^}]*\} ([0-9.e+-]+)', text)
    check(m is not None and float(m.group(1)) > 0,
          "usage metric of b: %r" % (m.group(0) if m else text[-2000:]))
    ctl.stop()


@case("status-written-once-per-sampling-interval", simulate="jobs")
def no_write_storm(s):
    """A busy LocalQueue's admissionFairSharingStatus changes at its
    samples only (every 3 s here), never with each admission or tick: over
    6 s of churn its lastUpdate values are at least one sampling interval
    apart (2 s allowing for second-resolution stamps of a periodic timer),
    with one consumedResources per lastUpdate. The bound is on the stamps,
    not on how many a poll saw: a loaded machine stretches the poll, not
    the controller's interval."""
    setup(s, 2, [("team-a", None)])
    ctl = Controller(s, config=config(free_port(), "4s", "3s"))
    flood(s, "team-a", 40, 300)
    wait_for(lambda: afs_status(s, "team-a") or None, 20,
             what="status of a")
    seen = {}
    end = time.monotonic() + 6
    while time.monotonic() < end:
        st = afs_status(s, "team-a")
        seen.setdefault(st["lastUpdate"], set()).add(
            tuple(sorted(st["consumedResources"].items())))
        time.sleep(0.05)
    stamps = sorted(seen)
    secs = [calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))
            for t in stamps]
    check(all(b - a >= 2 for a, b in zip(secs, secs[1:])),
          "lastUpdate values closer than the sampling interval: %r" % stamps)
    for stamp, values in seen.items():
        eq(len(values), 1, "consumedResources at %s: %r" % (stamp, values))
    check(admitted(s, "team-a") >= 8, "the queue was busy")
    ctl.stop()


@case("restart-keeps-usage", simulate="jobs")
def restart(s):
    """a holds 1 of 2 cpu long enough to have usage; the controller
    restarts (sampling every 60 s now, so that nothing is sampled during
    the rest of the case); a high-priority Workload of a and a Workload of
    b then wait for the one free cpu (the ClusterQueue held while they are
    queued). Classically the high priority goes first; with admission fair
    sharing the lower usage does, and b has the lower usage only if a's
    usage survived the restart (recovered from the LocalQueue status)."""
    setup(s, 2, [("team-a", None), ("team-b", None)])
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=config(free_port(), "10s"), store=store)
    post(s, "/apis/batch/v1/namespaces/team-a/jobs",
         job("team-a", "long", 600000))

    def used():
        st = afs_status(s, "team-a")
        c = st and st.get("consumedResources", {}).get("cpu")
        return st if c and milli(c) >= 200 else None
    wait_for(used, 20, what="a's usage grows")
    ctl.stop()
    before = afs_status(s, "team-a")
    # lastUpdate has a one-second resolution: let the clock leave the
    # second of the last sample, so that the restarted controller's first
    # write (stamped with its start) shows as a new lastUpdate.
    stamp = calendar.timegm(time.strptime(before["lastUpdate"],
                                          "%Y-%m-%dT%H:%M:%SZ"))
    wait_for(lambda: time.time() >= stamp + 2 or None, 10,
             what="the clock past the last sample's second")
    code, _, body = s.raw(
        "PATCH", KQ + "/clusterqueues/cq", {"spec": {"stopPolicy": "Hold"}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "hold: %r" % body)
    ctl = Controller(s, config=config(free_port(), "10s", "60s"),
                     store=store)
    post(s, "/apis/batch/v1/namespaces/team-a/jobs",
         job("team-a", "urgent", 600000, priority="high"))
    post(s, "/apis/batch/v1/namespaces/team-b/jobs",
         job("team-b", "plain", 600000))
    wait_for(lambda: (len(workloads(s, "team-a")) == 2 and
                      len(workloads(s, "team-b")) == 1) or None, 20,
             what="both Workloads queued")
    after = wait_for(lambda: (lambda st: st if st and
                              st["lastUpdate"] != before["lastUpdate"]
                              else None)(afs_status(s, "team-a")), 20,
                     what="a's status written after the restart")
    eq(after["consumedResources"], before["consumedResources"],
       "a's consumed resources recovered from its status")
    code, _, body = s.raw(
        "PATCH", KQ + "/clusterqueues/cq", {"spec": {"stopPolicy": "None"}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "release: %r" % body)
    try:
        wait_for(lambda: (admitted(s, "team-b") +
                          admitted(s, "team-a")) == 2 or None, 20,
                 what="one more admission")
    except Failure as e:
        raise Failure("%s; a %r, b %r" % (
            e, afs_status(s, "team-a"), afs_status(s, "team-b")))
    eq(admitted(s, "team-b"), 1,
       "b (lower usage) admitted before a's high priority")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
