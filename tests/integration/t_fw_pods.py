# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with the pod-based framework descriptors
(docs/frameworks.md): plain Pods, and a Deployment's Pods (managed one
by one, as Kueue does), with cueue-apiserver --simulate pods,deployments
standing in for the kubelet and the Deployment controller, and the
shipped pod webhook adding the kueue.x-k8s.io/admission scheduling gate.

Each Pod is created gated, queued (one Workload `pod-<name>-<hash>`, pod
set `main`), admitted within the ClusterQueue's quota (sampled from the
Pods: at no observed instant do the Running Pods ask more cpu than the
quota), ungated with the flavor's node selector, and finished; a
preempted Pod is deleted (a Pod cannot be suspended). A pod group is one
Workload, all or nothing: short of its total count it waits (no
Workload, every Pod gated); a group the quota cannot hold never has a
Pod ungated; an admitted group ungates a replacement for a failed Pod;
a group's excess Pods (beyond its total count) are deleted, never run.
In a namespace the
gate excludes, neither a plain Pod nor a Deployment's Pods are gated or
written to by the controller (seed 001 generalised)."""
import time

from cuetest import CONTROLLER_CONFIG, case, check, eq, run_cases, wait_for
from cuetest.frameworks import create as fw_create
from cuetest.frameworks import SELECTOR, queues, start
from cuetest.frameworks import setup as fw_setup
from cuetest.pods import (PodSampler, deployment, gated, group_pod,
                          plain_pod)
from cuetest.webhooks import install_webhooks

CONFIG = CONTROLLER_CONFIG + SELECTOR + """integrations:
  frameworks: ["batch/job", "pod", "deployment"]
"""

PODS = "/api/v1/namespaces/%s/pods"
DEPLOY = "/apis/apps/v1/namespaces/%s/deployments"
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"


def setup(s):
    fw_setup(s, queues(2))
    return install_webhooks(s)


def create(s, ns, obj, path=PODS):
    return fw_create(s, path % ns, obj)


def cond_true(obj, typ):
    return any(c["type"] == typ and c["status"] == "True"
               for c in obj.get("status", {}).get("conditions", []))


def phase(s, ns, name):
    code, _, p = s.raw("GET", PODS % ns + "/" + name)
    return p.get("status", {}).get("phase") if code == 200 else None


MANAGED = "kueue.x-k8s.io/managed"


def finalizers(s, ns, name):
    """The Pod's finalizers, None when it is gone."""
    code, _, p = s.raw("GET", PODS % ns + "/" + name)
    return p["metadata"].get("finalizers", []) if code == 200 else None


def finished_reason(s, ns, name):
    wl = wl_named(s, ns, name)
    for c in (wl or {}).get("status", {}).get("conditions", []):
        if c["type"] == "Finished" and c["status"] == "True":
            return c["reason"]
    return None


def delete_pod(s, ns, name):
    code, _, p = s.raw("DELETE", PODS % ns + "/" + name)
    eq(code, 200, "DELETE pod %s" % name)
    return p


@case("fw-pod-quota-start-finish", simulate="pods")
def pods_quota(s):
    ctl = start(s, CONFIG + setup(s))
    sampler = PodSampler(s, "team")
    for i in range(4):
        p = create(s, "team", plain_pod("team", "p%d" % i, runtime_ms=1200))
        check(gated(p), "p%d stored with the admission gate" % i)
        eq((p["metadata"]["labels"].get(MANAGED),
            p["metadata"].get("finalizers")), ("true", [MANAGED]),
           "p%d labelled managed, with Kueue's pod finalizer" % i)
    wait_for(lambda: all(phase(s, "team", "p%d" % i) == "Succeeded"
                         for i in range(4)), 60, what="four Pods succeeded")
    peak = sampler.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    check(peak >= 1000, "pods ran (peak %dm)" % peak)
    eq(sorted(sampler.selectors), ["p0", "p1", "p2", "p3"], "each ran")
    for name, sel in sampler.selectors.items():
        eq(sel, {"pool": "a"}, "%s node selector" % name)
    wls = s.get_json(WLS % "team")["items"]
    eq(len(wls), 4, "one Workload per Pod")
    for wl in wls:
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("main", 1)])
        check(wl["metadata"]["name"].startswith("pod-p"),
              wl["metadata"]["name"])
        eq(wl["metadata"]["ownerReferences"][0]["kind"], "Pod")
        check(not wl["spec"]["podSets"][0]["template"]["spec"]
              .get("schedulingGates"), "no gate in the pod set template")
        wait_for(lambda: cond_true(s.get_json(
            WLS % "team" + "/" + wl["metadata"]["name"]), "Finished"), 20,
            what="Workload %s finished" % wl["metadata"]["name"])
    wait_for(lambda: not any(finalizers(s, "team", "p%d" % i)
                             for i in range(4)), 20,
             what="the finished Pods lost their finalizer")
    ctl.stop()


@case("fw-pod-preempted-deleted", simulate="pods")
def pod_preempted(s):
    """A high-priority Pod preempts a running low-priority one: the low
    Pod is deleted, the high one is ungated with the flavor's node
    selector and finishes."""
    ctl = start(s, CONFIG + setup(s))
    sampler = PodSampler(s, "team")
    low = plain_pod("team", "low", cpu="2", runtime_ms=60000,
                    labels={"kueue.x-k8s.io/priority-class": "low"})
    create(s, "team", low)
    wait_for(lambda: phase(s, "team", "low") == "Running", 30,
             what="low Pod running")
    high = plain_pod("team", "high", cpu="2", runtime_ms=800,
                     labels={"kueue.x-k8s.io/priority-class": "high"})
    create(s, "team", high)
    wait_for(lambda: phase(s, "team", "low") in (None, "Failed"), 30,
             what="low Pod stopped")
    wait_for(lambda: phase(s, "team", "high") == "Succeeded", 30,
             what="high Pod succeeded")
    peak = sampler.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    eq(sampler.selectors.get("high"), {"pool": "a"}, "high node selector")
    ctl.stop()


def wl_named(s, ns, name):
    code, _, wl = s.raw("GET", WLS % ns + "/" + name)
    return wl if code == 200 else None


@case("fw-pod-group-all-or-nothing", simulate="pods")
def pod_group(s):
    """Group g1 (3 Pods of 500m) waits with 2 of its 3 Pods: no Workload,
    both gated. With the third it is one Workload (one pod set of 3),
    admitted, every Pod ungated with the flavor's node selector, run and
    finished. Group big (3 Pods of 1 cpu, 3 cpu > the quota of 2) gets a
    Workload that is never admitted and no Pod of it ever runs."""
    ctl = start(s, CONFIG + setup(s))
    sampler = PodSampler(s, "team")
    for i in range(3):
        create(s, "team", group_pod("team", "big-%d" % i, "big", 3,
                                    cpu="1", runtime_ms=500))
    for i in range(2):
        create(s, "team", group_pod("team", "g1-%d" % i, "g1", 3,
                                    cpu="500m", runtime_ms=1500))
    wait_for(lambda: wl_named(s, "team", "big"), 20,
             what="Workload of the complete group big")
    time.sleep(2)
    eq(wl_named(s, "team", "g1"), None, "no Workload for 2 of 3 Pods")
    for i in range(2):
        check(gated(s.get_json(PODS % "team" + "/g1-%d" % i)),
              "g1-%d still gated" % i)
    create(s, "team", group_pod("team", "g1-2", "g1", 3, cpu="500m",
                                runtime_ms=1500))
    wait_for(lambda: all(phase(s, "team", "g1-%d" % i) == "Succeeded"
                         for i in range(3)), 40, what="group g1 ran")
    wl = wait_for(lambda: (lambda w: w if w and cond_true(w, "Finished")
                           else None)(wl_named(s, "team", "g1")), 20,
                  what="g1's Workload finished")
    eq([(p["count"]) for p in wl["spec"]["podSets"]], [3], "one role")
    eq(sorted(r["name"] for r in wl["metadata"]["ownerReferences"]),
       ["g1-0", "g1-1", "g1-2"], "owned by its Pods")
    for i in range(3):
        eq(sampler.selectors.get("g1-%d" % i), {"pool": "a"},
           "g1-%d node selector" % i)
    big = wl_named(s, "team", "big")
    check(not cond_true(big, "QuotaReserved"), "big never admitted")
    for i in range(3):
        check(gated(s.get_json(PODS % "team" + "/big-%d" % i)),
              "big-%d still gated" % i)
        check("big-%d" % i not in sampler.selectors, "big-%d never ran" % i)
    peak = sampler.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    ctl.stop()


@case("fw-pod-group-replacement", simulate="pods")
def pod_group_replacement(s):
    """A Pod of an admitted group fails; its replacement (a new Pod of the
    same group) is ungated without a new admission and the group's
    Workload finishes once two Pods succeeded."""
    ctl = start(s, CONFIG + setup(s))
    create(s, "team", group_pod("team", "r-0", "r", 2, runtime_ms=3000))
    create(s, "team", group_pod("team", "r-1", "r", 2, runtime_ms=300,
                                fail=True))
    wait_for(lambda: phase(s, "team", "r-1") == "Failed", 30,
             what="r-1 failed")
    check(not cond_true(wl_named(s, "team", "r"), "Finished"),
          "a failed Pod waits for its replacement")
    create(s, "team", group_pod("team", "r-2", "r", 2, runtime_ms=300))
    # As Kueue: the replacement becomes an owner of the group's Workload
    # and the replaced Failed Pod loses its finalizer (it no longer
    # counts), while the Workload's other owners stay.
    wait_for(lambda: "r-2" in [o["name"] for o in wl_named(
        s, "team", "r")["metadata"]["ownerReferences"]], 30,
        what="the replacement owns the Workload")
    wait_for(lambda: finalizers(s, "team", "r-1") == [], 30,
             what="the replaced Pod r-1 lost its finalizer")
    wait_for(lambda: phase(s, "team", "r-2") == "Succeeded", 30,
             what="the replacement ran")
    wl = wait_for(lambda: (lambda w: w if w and cond_true(w, "Finished")
                           else None)(wl_named(s, "team", "r")), 30,
                  what="r's Workload finished")
    check(any(c["type"] == "Finished" and c["reason"] == "Succeeded"
              for c in wl["status"]["conditions"]), "succeeded")
    ctl.stop()


@case("fw-pod-finalizer", simulate="pods")
def pod_finalizer(s):
    """Kueue's pod finalizer keeps a Pod until its result is accounted: a
    running plain Pod deleted by its user stays (being deleted) until its
    Workload is finished as orphaned (OwnerNotFound), then goes; a
    Succeeded Pod of group f deleted before the group ends stays and is
    counted: the group's Workload finishes Succeeded, then every Pod of
    the group loses the finalizer and the deleted one goes."""
    ctl = start(s, CONFIG + setup(s))
    create(s, "team", plain_pod("team", "solo", cpu="500m",
                                runtime_ms=60000))
    create(s, "team", group_pod("team", "f-0", "f", 2, cpu="500m",
                                runtime_ms=300))
    create(s, "team", group_pod("team", "f-1", "f", 2, cpu="500m",
                                runtime_ms=2500))
    wait_for(lambda: phase(s, "team", "solo") == "Running", 30,
             what="solo running")
    gone = delete_pod(s, "team", "solo")
    check(gone["metadata"].get("deletionTimestamp"),
          "solo kept, being deleted")
    wait_for(lambda: [w["metadata"]["name"] for w in s.get_json(
        WLS % "team")["items"] if w["metadata"]["name"].startswith(
        "pod-solo-") and finished_reason(
        s, "team", w["metadata"]["name"]) == "OwnerNotFound"], 30,
        what="solo's Workload finished as orphaned")
    wait_for(lambda: phase(s, "team", "solo") is None, 30,
             what="solo gone once finalized")
    wait_for(lambda: phase(s, "team", "f-0") == "Succeeded", 30,
             what="f-0 succeeded")
    delete_pod(s, "team", "f-0")
    time.sleep(0.5)
    eq(finalizers(s, "team", "f-0"), [MANAGED],
       "f-0 kept while its group runs")
    wait_for(lambda: finished_reason(s, "team", "f") == "Succeeded", 30,
             what="group f finished Succeeded, f-0 counted")
    wait_for(lambda: phase(s, "team", "f-0") is None and
             finalizers(s, "team", "f-1") == [], 30,
             what="f-0 gone, f-1 finalizer removed")
    # A Pod that is no longer ours (its queue-name label removed) but
    # carries the managed label and finalizer: deleted, it still goes.
    create(s, "team", plain_pod("team", "stray", cpu="3"))
    code, _, body = s.raw("PATCH", PODS % "team" + "/stray", {
        "metadata": {"labels": {"kueue.x-k8s.io/queue-name": None}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "unlabel stray: %r" % body)
    delete_pod(s, "team", "stray")
    wait_for(lambda: phase(s, "team", "stray") is None, 30,
             what="stray gone once finalized")
    ctl.stop()


@case("fw-pod-group-excess", simulate="pods")
def pod_group_excess(s):
    """Excess Pods (as Kueue): group x of total count 2 gets a third Pod;
    the newest is deleted without ever being ungated (a Normal
    ExcessPodDeleted event about it, as Kueue's), the Workload asks for 2
    and the two others run and finish it."""
    ctl = start(s, CONFIG + setup(s))
    sampler = PodSampler(s, "team")
    for i in range(3):
        create(s, "team", group_pod("team", "x-%d" % i, "x", 2,
                                    cpu="500m", runtime_ms=1500))
    wait_for(lambda: phase(s, "team", "x-2") is None, 30,
             what="the excess Pod x-2 deleted")

    def excess_events():
        return [e for e in s.get_json(
                    "/apis/events.k8s.io/v1/namespaces/team/events")["items"]
                if e.get("reason") == "ExcessPodDeleted"]
    ev = wait_for(excess_events, 20, what="Kueue's ExcessPodDeleted event")
    eq([(e["type"], e["note"], e["regarding"]["kind"], e["regarding"]["name"])
        for e in ev], [("Normal", "Excess pod deleted", "Pod", "x-2")],
       "one event about the deleted Pod")
    wait_for(lambda: all(phase(s, "team", "x-%d" % i) == "Succeeded"
                         for i in range(2)), 40, what="group x ran")
    wl = wait_for(lambda: (lambda w: w if w and cond_true(w, "Finished")
                           else None)(wl_named(s, "team", "x")), 20,
                  what="x's Workload finished")
    eq([p["count"] for p in wl["spec"]["podSets"]], [2], "pod set of 2")
    check("x-2" not in sampler.selectors, "x-2 never ran")
    peak = sampler.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    ctl.stop()


@case("fw-deployment-pods-within-quota", simulate="pods,deployments")
def deployment_quota(s):
    """A Deployment of three 1-cpu Pods on a 2-cpu queue, labelled with
    its queue only on itself: the deployment webhook copies the label to
    its pod template, and its Pods are managed one by one (a Workload
    each); two run, the third stays gated."""
    ctl = start(s, CONFIG + setup(s))
    sampler = PodSampler(s, "team")
    d = create(s, "team", deployment("team", "web", 3, on_template=False),
               DEPLOY)
    eq(d["spec"]["template"]["metadata"]["labels"].get(
        "kueue.x-k8s.io/queue-name"), "lq", "queue name on the template")

    def settled():
        pods = s.get_json(PODS % "team")["items"]
        run = [p for p in pods if p["status"].get("phase") == "Running"]
        gat = [p for p in pods if gated(p)]
        return len(run) == 2 and len(gat) == 1 and pods
    pods = wait_for(settled, 40, what="two Pods running, one gated")
    for p in pods:
        if not gated(p):
            eq(p["spec"].get("nodeSelector"), {"pool": "a"},
               "%s node selector" % p["metadata"]["name"])
    wait_for(lambda: len(s.get_json(WLS % "team")["items"]) == 3, 20,
             what="a Workload per Pod")
    time.sleep(2)
    peak = sampler.done()
    check(peak <= 2000, "running pods within 2 cpu, saw %dm" % peak)
    ctl.stop()


@case("fw-pod-excluded-namespace-untouched", simulate="pods,deployments")
def excluded(s):
    """Seed 001 generalised: with manageJobsWithoutQueueName, a plain Pod
    and a Deployment's Pods in a namespace the selector excludes are
    never gated, and the controller writes nothing there."""
    hooks = setup(s)
    ctl = start(s, CONFIG.replace(
        "integrations:", "manageJobsWithoutQueueName: true\n"
        "integrations:") + hooks)
    mark = s.log_mark()
    p = create(s, "outside", plain_pod("outside", "free", runtime_ms=600))
    check(not gated(p), "plain Pod in outside stored ungated")
    create(s, "outside", deployment("outside", "web", 2), DEPLOY)
    wait_for(lambda: phase(s, "outside", "free") == "Succeeded", 30,
             what="the plain Pod in outside ran on its own")

    def web_running():
        pods = [p for p in s.get_json(PODS % "outside")["items"]
                if p["metadata"]["name"].startswith("web-")]
        return (len(pods) == 2 and all(
            p["status"].get("phase") == "Running" for p in pods) and pods)
    for p in wait_for(web_running, 30, what="the Deployment's Pods run"):
        check(not gated(p), "%s ungated" % p["metadata"]["name"])
    writes = [(e["verb"], e["path"]) for e in s.access_log(mark)
              if e["userAgent"].startswith("cueue-controller/")
              and e["verb"] in ("POST", "PUT", "PATCH", "DELETE")
              and "/namespaces/outside/" in e["path"]]
    eq(writes, [], "controller writes in namespace outside")
    eq(s.get_json(WLS % "outside")["items"], [], "no Workload in outside")
    ctl.stop()


if __name__ == "__main__":
    run_cases(rbac=True)
