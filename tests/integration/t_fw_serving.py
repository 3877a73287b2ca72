# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with the serving frameworks (docs/frameworks.md):
StatefulSet and LeaderWorkerSet, with cueue-apiserver --simulate
pods,statefulsets,leaderworkersets standing in for their controllers and
the kubelet, and the shipped webhooks (manifests/webhooks) labelling
their pod templates and gating their Pods.

A StatefulSet labelled with its queue only on itself is one pod group:
the StatefulSet webhook writes the queue name, its total count
(replicas) and fast admission into the pod template, and the pod
webhook the group's name (Kueue's Workload name for the StatefulSet and
its uid) on each Pod; its Pods, created one by one
(OrderedReady), are one Workload (pod set `main` of `replicas`) owned by
the StatefulSet, admitted within quota and ungated with the flavor's
node selector; preempted, its Pods are deleted and come back gated, and
the same Workload is queued again and restored once the quota is free;
it scales only to and from zero (as Kueue: other resizes are refused),
and scaled to zero its Workload is kept on hold, quota given back.
A LeaderWorkerSet like Kueue's serving sample is one Workload per group
index, made as Kueue's reconciler makes it and owned by the
LeaderWorkerSet (pod sets leader and worker); scaling it up queues the
new group, which waits gated while the quota is full, scaling down
deletes the Workloads beyond the count, a preempted group keeps its
Workload, and deleting the set removes its Workloads.
The quota check reads the Pods' watch history: at no observed instant do
the Running Pods ask more cpu than the ClusterQueue's quota. In a
namespace the gate excludes, neither kind's Pods are gated and the
controller writes nothing there (seed 001 generalised)."""
import time

from cuetest import CONTROLLER_CONFIG, case, check, eq, run_cases, wait_for
from cuetest.frameworks import (SELECTOR, PodWatch, cond_true,
                                controller_writes, create, queues, sample,
                                setup, start, webhooks)
from cuetest.pods import gated, plain_pod

CONFIG = CONTROLLER_CONFIG + SELECTOR + """integrations:
  frameworks: ["batch/job", "pod", "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset"]
"""

PODS = "/api/v1/namespaces/%s/pods"
STS = "/apis/apps/v1/namespaces/%s/statefulsets"
LWS = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/%s/leaderworkersets"
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"
QUEUE = "kueue.x-k8s.io/queue-name"
GROUP = "kueue.x-k8s.io/pod-group-name"
MERGE = {"Content-Type": "application/merge-patch+json"}


def begin(s, config=CONFIG):
    """Queues of 2 cpu, the shipped webhooks, a controller."""
    setup(s, queues(2))
    return start(s, config + webhooks(s))


def statefulset(ns, name, replicas, cpu="500m", prio=None, parallel=False):
    """tests/data/frameworks/statefulset.yaml (Kueue's serving sample's
    shape), its queue on itself only, `replicas` Pods asking `cpu`."""
    o = sample("statefulset.yaml", name, ns, priority=prio)
    spec = o["spec"]
    spec["replicas"] = replicas
    spec["serviceName"] = name
    spec["selector"] = {"matchLabels": {"app": name}}
    spec["template"]["metadata"]["labels"] = {"app": name}
    spec["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": cpu}}
    if not parallel:
        del spec["podManagementPolicy"]
    return o


def leaderworkerset(ns, name, replicas):
    """tests/data/frameworks/leaderworkerset.yaml, as Kueue's serving
    sample: groups of a 100m leader and two 200m workers."""
    o = sample("leaderworkerset.yaml", name, ns)
    o["spec"]["replicas"] = replicas
    return o


def pods_of(s, ns, prefix):
    return [p for p in s.get_json(PODS % ns)["items"]
            if p["metadata"]["name"].startswith(prefix)]


def running(s, ns, prefix):
    return [p for p in pods_of(s, ns, prefix)
            if p["status"].get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")]


def wl_named(s, ns, name):
    code, _, wl = s.raw("GET", WLS % ns + "/" + name)
    return wl if code == 200 else None


def scale(s, path, name, replicas):
    return s.raw("PATCH", path + "/" + name,
                 {"spec": {"replicas": replicas}}, headers=MERGE)


def sts_group(s, ns, sts, prefix):
    """The group of the StatefulSet's Pods (the pod webhook names it
    from the Pod's controller reference): Kueue's Workload name,
    statefulset-<name>-<hash of name and uid>, the same on every Pod."""
    groups = {p["metadata"]["labels"].get(GROUP)
              for p in pods_of(s, ns, prefix)}
    eq(len(groups), 1, "one group: %r" % groups)
    group = groups.pop() or ""
    check(group.startswith("statefulset-%s-" % sts["metadata"]["name"]),
          "group name %r" % group)
    return group


def owned_by(wl, sts):
    """wl is owned by the StatefulSet sts (not by its Pods), as Kueue's
    statefulset reconciler makes it."""
    eq([(r["kind"], r["name"], r["uid"])
        for r in wl["metadata"].get("ownerReferences", [])],
       [("StatefulSet", sts["metadata"]["name"], sts["metadata"]["uid"])],
       "the Workload's owner")


def reason(wl, cond):
    return next((c.get("reason") for c in wl["status"].get("conditions", [])
                 if c["type"] == cond), None)


@case("fw-sts-queued-preempted-restored",
      simulate="pods,statefulsets")
def sts_preempted(s):
    """Kueue's statefulset integration: the group's Workload is owned by
    the StatefulSet and named after it and its uid; preempted, its Pods
    are deleted and come back gated, and the SAME Workload (same uid) is
    queued again and restored once the quota is free."""
    ctl = begin(s)
    watch = PodWatch(s, "team")
    sts = create(s, STS % "team", statefulset("team", "web", 3, prio="low"))
    tm = sts["spec"]["template"]["metadata"]
    eq(tm["labels"].get(QUEUE), "lq", "queue name on the template")
    check(GROUP not in tm["labels"],
          "no group name on the template (it needs the uid)")
    eq(tm["annotations"].get("kueue.x-k8s.io/pod-group-total-count"), "3",
       "total count")
    wait_for(lambda: len(running(s, "team", "web-")) == 3, 60,
             what="the StatefulSet's three Pods running (one by one)")
    group = sts_group(s, "team", sts, "web-")
    wl = wl_named(s, "team", group)
    eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
       [("main", 3)], "one Workload, pod set main of 3")
    check(cond_true(wl, "Admitted"), "admitted")
    owned_by(wl, sts)
    uid = wl["metadata"]["uid"]
    for p in running(s, "team", "web-"):
        eq(p["spec"].get("nodeSelector"), {"pool": "a"},
           "%s node selector" % p["metadata"]["name"])
    # A high-priority 2-cpu Pod preempts the group: its Pods go, come
    # back gated, and wait until the quota is free again.
    create(s, PODS % "team", plain_pod(
        "team", "urgent", cpu="2", runtime_ms=3000,
        labels={"kueue.x-k8s.io/priority-class": "high"}))
    wait_for(lambda: any(p["metadata"]["name"] == "urgent"
                         for p in running(s, "team", "urgent")), 40,
             what="the high-priority Pod running")
    check(not running(s, "team", "web-"), "the group was stopped")
    check(all(gated(p) for p in pods_of(s, "team", "web-")),
          "the group's Pods came back gated")
    wait_for(lambda: len(running(s, "team", "web-")) == 3, 60,
             what="the StatefulSet restored after the preemptor finished")
    wl = wait_for(lambda: (lambda w: w if cond_true(w, "Admitted")
                           else None)(wl_named(s, "team", group)), 20,
                  what="the group's Workload admitted again")
    eq(wl["metadata"]["uid"], uid,
       "the same Workload re-admitted (Kueue keeps it across preemption)")
    eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
       [("main", 3)], "pod set after the restore")
    peak = watch.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    check(peak >= 1500, "the group ran (peak %dm)" % peak)
    ctl.stop()


@case("fw-sts-scale", simulate="pods,statefulsets")
def sts_scale(s):
    """Scaled to zero, a StatefulSet's Workload is kept on hold (Kueue:
    QuotaReserved=False, reason OnHold, its quota given back and not
    queued); scaled up from zero the hold is cleared and the same Workload
    admitted again; any other resize is refused (as Kueue)."""
    ctl = begin(s)
    watch = PodWatch(s, "team")
    sts = create(s, STS % "team", statefulset("team", "db", 2, cpu="1",
                                         parallel=True))
    wait_for(lambda: len(running(s, "team", "db-")) == 2, 60,
             what="two Pods running")
    group = sts_group(s, "team", sts, "db-")
    uid = wl_named(s, "team", group)["metadata"]["uid"]
    code, _, body = scale(s, STS % "team", "db", 3)
    eq(code, 403, "resize 2 -> 3 refused: %r" % body)
    check("spec.replicas" in body.get("message", ""), body)
    eq(scale(s, STS % "team", "db", 0)[0], 200, "scale to zero")
    wait_for(lambda: not pods_of(s, "team", "db-"), 40,
             what="the Pods gone")
    wl = wait_for(lambda: (lambda w: w if w and reason(w, "QuotaReserved")
                           == "OnHold" else None)(
                               wl_named(s, "team", group)), 30,
                  what="the Workload on hold")
    eq(wl["metadata"]["uid"], uid, "the same Workload, kept")
    check(not cond_true(wl, "QuotaReserved") and
          not wl["status"].get("admission"), "its quota given back")
    owned_by(wl, sts)
    # The freed quota admits another 2-cpu workload meanwhile.
    create(s, PODS % "team", plain_pod("team", "other", cpu="2",
                                       runtime_ms=1500))
    wait_for(lambda: running(s, "team", "other"), 40,
             what="another Pod running in the freed quota")

    def scaled_up():
        # Refused (as Kueue) while Pods remain or while the controller's
        # cache has not seen the hold yet.
        code, _, body = scale(s, STS % "team", "db", 2)
        msg = body.get("message", "")
        return code == 200 or (code == 403 and (
            "still in progress" in msg or "still being deleted" in msg)
            and None)
    wait_for(scaled_up, 30, what="scale up from zero accepted")
    wait_for(lambda: len(running(s, "team", "db-")) == 2, 60,
             what="two Pods running again")
    wl = wait_for(lambda: (lambda w: w if cond_true(w, "Admitted")
                           else None)(wl_named(s, "team", group)), 20,
                  what="the Workload admitted again")
    eq(wl["metadata"]["uid"], uid, "the same Workload, its hold cleared")
    eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
       [("main", 2)], "pod set main of 2")
    peak = watch.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    ctl.stop()


def lws_wls(s, ns, lws):
    """The LeaderWorkerSet's group Workloads by name (not being deleted)."""
    return {w["metadata"]["name"]: w for w in s.get_json(WLS % ns)["items"]
            if not w["metadata"].get("deletionTimestamp") and
            any(r["kind"] == "LeaderWorkerSet" and
                r["uid"] == lws["metadata"]["uid"]
                for r in w["metadata"].get("ownerReferences", []))}


@case("fw-lws-groups-scale", simulate="pods,leaderworkersets")
def lws_groups(s):
    """Kueue's LeaderWorkerSet sample (2 groups of a 100m leader and two
    200m workers) with a 2-cpu quota: one Workload per group index made
    by the LeaderWorkerSet's reconciler, owned by the LeaderWorkerSet
    (not its Pods; the component-workload-index annotation), pod sets
    leader 1 and worker 2, admitted, its Pods ungated with the flavor's
    node selector; scaled to 5 groups (2.5 cpu), five Workloads, four run
    and one waits with every Pod gated; scaled down to 3, the Workloads of
    groups 3 and 4 go; a high-priority Pod preempts a group: its Pods go
    and come back gated, and the SAME Workload is queued again and
    re-admitted once it finished; scaled to 0, every group's Workload
    goes. The quota holds throughout."""
    ctl = begin(s)
    watch = PodWatch(s, "team")
    lws = create(s, LWS % "team", leaderworkerset("team", "nginx", 2))
    lwt = lws["spec"]["leaderWorkerTemplate"]
    eq(lwt["workerTemplate"]["metadata"]["labels"].get(QUEUE),
       "lq", "queue name on the worker template")
    wait_for(lambda: len(running(s, "team", "nginx-")) == 6, 60,
             what="two groups of three Pods running")
    for p in running(s, "team", "nginx-"):
        eq(p["spec"].get("nodeSelector"), {"pool": "a"},
           "%s node selector" % p["metadata"]["name"])
    wls = lws_wls(s, "team", lws)
    eq(sorted(w["metadata"]["annotations"].get(
        "kueue.x-k8s.io/component-workload-index") for w in wls.values()),
       ["0", "1"], "a Workload per group index, owned by the set")
    for p in pods_of(s, "team", "nginx-"):
        check(p["metadata"]["labels"][GROUP] in wls,
              "%s in its group's Workload" % p["metadata"]["name"])
    def created():
        # events.k8s.io: the second group's joins the first's series
        # (client-go's key leaves the note out), as Kueue's would.
        return sum((e.get("series") or {}).get("count") or e.get("count")
                   or 1 for e in s.get_json(
                       "/api/v1/namespaces/team/events")["items"]
                   if e["involvedObject"]["kind"] == "LeaderWorkerSet" and
                   e["reason"] == "CreatedWorkload" and
                   e["message"].startswith(
                       "Created Workload: team/leaderworkerset-nginx-"))
    wait_for(lambda: created() == 2, 20,
             what="Kueue's CreatedWorkload event on the set per group")
    for name, wl in wls.items():
        check(name.startswith("leaderworkerset-nginx-"), name)
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("leader", 1), ("worker", 2)], "pod sets of %s" % name)
        check(cond_true(wl, "Admitted"), "%s admitted" % name)
        eq([r.get("controller", False)
            for r in wl["metadata"]["ownerReferences"]], [False],
           "%s: one owner, not its controller" % name)
    eq(scale(s, LWS % "team", "nginx", 5)[0], 200, "scale to 5")
    wait_for(lambda: len(pods_of(s, "team", "nginx-")) == 15 and
             len(running(s, "team", "nginx-")) == 12, 60,
             what="four groups running, the fifth created")
    eq(len(lws_wls(s, "team", lws)), 5, "a Workload per group")
    time.sleep(1)
    waiting = {p["metadata"]["labels"][GROUP]
               for p in pods_of(s, "team", "nginx-") if gated(p)}
    eq(len(waiting), 1, "one group waits: %r" % waiting)
    check(all(gated(p) for p in pods_of(s, "team", "nginx-")
              if p["metadata"]["labels"][GROUP] in waiting),
          "every Pod of the waiting group gated (all or nothing)")
    eq(len(running(s, "team", "nginx-")), 12, "four groups running")
    eq(scale(s, LWS % "team", "nginx", 3)[0], 200, "scale to 3")
    wait_for(lambda: not pods_of(s, "team", "nginx-4") and
             not pods_of(s, "team", "nginx-3"), 40,
             what="groups 3 and 4 gone")
    wait_for(lambda: sorted(w["metadata"]["annotations"][
        "kueue.x-k8s.io/component-workload-index"]
        for w in lws_wls(s, "team", lws).values()) == ["0", "1", "2"], 30,
             what="the Workloads of groups 3 and 4 gone")
    wait_for(lambda: len(running(s, "team", "nginx-")) == 9, 30,
             what="three groups running")
    uids = {n: w["metadata"]["uid"] for n, w in lws_wls(s, "team",
                                                         lws).items()}
    # A high-priority 1-cpu Pod preempts one group: its Pods go, come
    # back gated and run again once the preemptor finished, under the
    # same Workload.
    create(s, PODS % "team", plain_pod(
        "team", "urgent", cpu="1", runtime_ms=2000,
        labels={"kueue.x-k8s.io/priority-class": "high"}))
    wait_for(lambda: running(s, "team", "urgent"), 40,
             what="the high-priority Pod running")
    check(len(running(s, "team", "nginx-")) <= 6, "a group was stopped")
    wait_for(lambda: not running(s, "team", "urgent") and
             len(running(s, "team", "nginx-")) == 9, 60,
             what="the preempted group restored")
    wls = wait_for(lambda: (lambda d: d if all(
        cond_true(w, "Admitted") for w in d.values()) else None)(
            lws_wls(s, "team", lws)), 20, what="every group admitted")
    eq({n: w["metadata"]["uid"] for n, w in wls.items()}, uids,
       "the same Workloads (Kueue keeps a group's across preemption)")
    # Scaled to zero, every group goes, and its Workload with it.
    eq(scale(s, LWS % "team", "nginx", 0)[0], 200, "scale to 0")
    wait_for(lambda: not pods_of(s, "team", "nginx-") and not [
        w for w in s.get_json(WLS % "team")["items"]
        if w["metadata"]["name"].startswith("leaderworkerset-")], 40,
             what="no group and no group Workload left")
    # Deleted, its groups' Workloads go with it (the garbage collector;
    # cueue drops its finalizer once the group has no Pod).
    eq(scale(s, LWS % "team", "nginx", 1)[0], 200, "scale to 1")
    wait_for(lambda: len(running(s, "team", "nginx-")) == 3 and
             len(lws_wls(s, "team", lws)) == 1, 40,
             what="one group running again")
    eq(s.raw("DELETE", LWS % "team" + "/nginx")[0], 200, "delete the set")
    wait_for(lambda: not pods_of(s, "team", "nginx-") and not [
        w for w in s.get_json(WLS % "team")["items"]
        if w["metadata"]["name"].startswith("leaderworkerset-")], 40,
             what="its Pods and its group's Workload gone")
    peak = watch.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    ctl.stop()


@case("fw-serving-excluded-namespace-untouched",
      simulate="pods,statefulsets,leaderworkersets")
def excluded(s):
    """Seed 001 generalised: with manageJobsWithoutQueueName, a
    StatefulSet's and a LeaderWorkerSet's Pods in a namespace the
    selector excludes are never gated, their templates never labelled,
    and the controller writes nothing there."""
    ctl = begin(s, CONFIG.replace(
        "integrations:", "manageJobsWithoutQueueName: true\n"
        "integrations:"))
    mark = s.log_mark()
    sts = create(s, STS % "outside", statefulset("outside", "web", 2))
    check(GROUP not in sts["spec"]["template"]["metadata"]["labels"],
          "StatefulSet template untouched")
    lws = create(s, LWS % "outside", leaderworkerset("outside", "nginx", 1))
    check("metadata" not in lws["spec"]["leaderWorkerTemplate"][
        "workerTemplate"], "LeaderWorkerSet template untouched")
    wait_for(lambda: len(running(s, "outside", "web-")) == 2 and
             len(running(s, "outside", "nginx-")) == 3, 60,
             what="both run on their own")
    for p in pods_of(s, "outside", ""):
        check(not gated(p), "%s ungated" % p["metadata"]["name"])
        check(GROUP not in p["metadata"].get("labels", {}),
              "%s in no group" % p["metadata"]["name"])
    eq(controller_writes(s, mark, lambda p: "/namespaces/outside/" in p),
       [], "controller writes in namespace outside")
    eq(s.get_json(WLS % "outside")["items"], [], "no Workload in outside")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
