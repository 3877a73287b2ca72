# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with the suspend-based CRD frameworks of
docs/frameworks.md (RayJob, RayCluster, AppWrapper), with
cueue-apiserver --simulate ray,jobs standing in for KubeRay and the Job
controller, and --simulate appwrappers,kubeflow for the AppWrapper
controller and the training operator.

Each object (our equivalent of Kueue's sample, tests/data/frameworks) is
queued (one Workload, pod sets head + worker groups (+ submitter)),
admitted within the ClusterQueue's quota (from the watch history of the
pods: at no observed instant do the running pods ask more cpu than the
quota), started with the flavor's node labels in its head and worker
templates (and so on its Ray pods), suspended with its templates
restored when preempted, admitted again and finished. The children a
managed parent creates (a RayJob's RayCluster and submitter Job, an
AppWrapper's components) get no Workload and no write from the
controller; neither does anything in a namespace the gate excludes."""
import json
import time

from cuetest import case, check, eq, run_cases, wait_for
from cuetest.frameworks import (QUEUES, WLS, PodWatch, cond_true, config,
                                controller_writes, sample, setup, start,
                                webhooks)

CONFIG = config("batch/job", "ray.io/rayjob", "ray.io/raycluster",
                "workload.codeflare.dev/appwrapper", "kubeflow.org/pytorchjob")

RAY = "/apis/ray.io/v1/namespaces/%s/"


def rayjob_done(obj):
    return obj.get("status", {}).get("jobDeploymentStatus") == "Complete"


def head_selector(obj):
    spec = obj["spec"].get("rayClusterSpec", obj["spec"])
    return spec["headGroupSpec"]["template"]["spec"].get("nodeSelector")


def worker_selector(obj):
    spec = obj["spec"].get("rayClusterSpec", obj["spec"])
    return spec["workerGroupSpecs"][0]["template"]["spec"].get(
        "nodeSelector")


def no_child_writes(s, mark):
    """The controller wrote to no RayCluster, no Job and nothing in
    namespace outside since mark."""
    eq(controller_writes(s, mark, lambda p: "/rayclusters" in p
                         or "/jobs" in p or "/namespaces/outside/" in p),
       [], "controller writes to children or namespace outside")


@case("fw-rayjob-quota-start-finish", simulate="ray,jobs")
def rayjob_quota(s):
    """Two RayJobs (1.7 cpu each with the submitter) in a 3 cpu queue:
    one at a time, each started with pool-a in its head and worker
    templates, both finished; their RayClusters and submitter Jobs are
    never managed alone; a RayJob in namespace outside runs on its own
    without a write from the controller."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    mark = s.log_mark()
    pods = PodWatch(s, "team")
    for name in ("rj0", "rj1"):
        code, _, body = s.raw("POST", RAY % "team" + "rayjobs", sample(
            "rayjob.yaml", name, suspend=True, runtime_ms=1500))
        eq(code, 201, "create %s: %r" % (name, body))
    code, _, body = s.raw("POST", RAY % "outside" + "rayjobs", sample(
        "rayjob.yaml", "free", ns="outside", queue="lq", runtime_ms=500))
    eq(code, 201, "create in outside: %r" % body)
    started = {}

    def done():
        items = s.get_json(RAY % "team" + "rayjobs")["items"]
        for j in items:
            if j["spec"].get("suspend") is False:
                started[j["metadata"]["name"]] = (head_selector(j),
                                                  worker_selector(j))
        return len(items) == 2 and all(rayjob_done(j) for j in items)
    wait_for(done, 60, what="two RayJobs complete")
    peak = pods.done()
    check(peak <= 3000, "running pods within 3 cpu, saw %dm" % peak)
    check(peak >= 1700, "a RayJob ran (peak %dm)" % peak)
    eq(sorted(started), ["rj0", "rj1"], "each RayJob started")
    for name, sels in started.items():
        eq(sels, ({"pool": "a"}, {"pool": "a"}),
           "%s head and worker template node selectors" % name)
    ray_pods = {n: sel for n, (labels, sel) in pods.ran.items()
                if "ray.io/node-type" in labels}
    check(len(ray_pods) >= 4, "head and worker pods ran: %r" % ray_pods)
    for n, sel in ray_pods.items():
        eq(sel, {"pool": "a"}, "pod %s ran with the flavor's labels" % n)
    # Finished is written once the controller sees the RayJob's terminal
    # state, a watch event after the one this test just read.
    wls = wait_for(lambda: (lambda items: items if len(items) == 2 and all(
        cond_true(w, "Finished") for w in items) else None)(
            s.get_json(WLS % "team")["items"]), 30,
        what="both RayJobs' Workloads Finished")
    eq(len(wls), 2, "one Workload per RayJob, none for the children")
    for wl in wls:
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("head", 1), ("small-group", 1), ("submitter", 1)])
        eq(wl["metadata"]["ownerReferences"][0]["kind"], "RayJob")
        check(wl["metadata"]["name"].startswith("rayjob-rj"),
              wl["metadata"]["name"])
        check(cond_true(wl, "Finished"), "Workload finished")
    wait_for(lambda: rayjob_done(s.get_json(RAY % "outside" +
                                            "rayjobs/free")), 30,
             what="the RayJob in namespace outside ran on its own")
    eq(s.get_json(WLS % "outside")["items"], [], "no Workload in outside")
    no_child_writes(s, mark)
    ctl.stop()


@case("fw-rayjob-preempted-by-raycluster", simulate="ray,jobs")
def rayjob_preempted(s):
    """A running low-priority RayJob (1.7 cpu) is preempted by a
    high-priority RayCluster (1.4 cpu; 3 cpu quota): the RayJob is
    suspended with its head and worker templates restored, the
    RayCluster is admitted and becomes ready with pool-a on its pods;
    deleted, it frees the quota and the RayJob runs again to the end."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    pods = PodWatch(s, "team")
    eq(s.raw("POST", RAY % "team" + "rayjobs", sample(
        "rayjob.yaml", "low", suspend=True, runtime_ms=20000,
        priority="low"))[0], 201)

    def running(path):
        j = s.get_json(path)
        return j["spec"].get("suspend") is False and j
    j = wait_for(lambda: running(RAY % "team" + "rayjobs/low"), 30,
                 what="low RayJob started")
    eq(head_selector(j), {"pool": "a"}, "flavor node labels injected")
    wait_for(lambda: s.get_json(RAY % "team" + "rayjobs/low")
             .get("status", {}).get("jobDeploymentStatus") == "Running",
             30, what="low RayJob running")
    mark = s.log_mark()
    eq(s.raw("POST", RAY % "team" + "rayclusters", sample(
        "raycluster.yaml", "high", suspend=True, priority="high"))[0], 201)

    def preempted():
        j = s.get_json(RAY % "team" + "rayjobs/low")
        return j["spec"].get("suspend") is True and j
    j = wait_for(preempted, 30, what="low RayJob suspended")
    eq((head_selector(j), worker_selector(j)), (None, None),
       "templates restored")
    rc = wait_for(lambda: (lambda o: o.get("status", {}).get("state") ==
                           "ready" and o)(s.get_json(
                               RAY % "team" + "rayclusters/high")), 30,
                  what="high RayCluster ready")
    eq((head_selector(rc), worker_selector(rc)),
       ({"pool": "a"}, {"pool": "a"}), "RayCluster templates")
    wl = [w for w in s.get_json(WLS % "team")["items"]
          if w["metadata"]["ownerReferences"][0]["kind"] == "RayCluster"]
    eq(len(wl), 1, "one Workload for the RayCluster")
    eq([(p["name"], p["count"]) for p in wl[0]["spec"]["podSets"]],
       [("head", 1), ("small-group", 2)])
    check(cond_true(wl[0], "Admitted"), "RayCluster admitted")
    s.kubectl("delete", "raycluster", "high", "-n", "team")
    try:
        wait_for(lambda: rayjob_done(s.get_json(RAY % "team" +
                                                "rayjobs/low")), 60,
                 what="low RayJob admitted again and complete")
    except Exception:
        print("low:", json.dumps(s.get_json(RAY % "team" + "rayjobs/low")))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        raise
    peak = pods.done()
    check(peak <= 3000, "running pods within 3 cpu, saw %dm" % peak)
    eq(controller_writes(s, mark, lambda p: "/jobs" in p), [],
       "controller writes to the submitter Jobs")
    ctl.stop()


@case("fw-rayjob-webhook-suspends-on-create", simulate="ray,jobs")
def rayjob_webhook(s):
    """With the shipped webhooks, the sample RayJob created unsuspended
    is stored suspended, then admitted and run; its RayCluster (created
    by KubeRay, owned by the RayJob) passes the RayCluster webhook
    untouched."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG + webhooks(s))
    body = None
    for _ in range(50):  # the webhook server may still be starting
        code, _, body = s.raw("POST", RAY % "team" + "rayjobs",
                              sample("rayjob.yaml", "hooked"))
        if code == 201:
            break
        time.sleep(0.2)
    eq(code, 201, "create: %r" % body)
    eq(body["spec"].get("suspend"), True, "stored suspended by the webhook")
    wait_for(lambda: rayjob_done(s.get_json(RAY % "team" +
                                            "rayjobs/hooked")), 40,
             what="admitted and run")
    ctl.stop()


AW = "/apis/workload.codeflare.dev/v1beta2/namespaces/%s/appwrappers"
KF = "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs"


def appwrapper(name, runtime_ms, priority=None):
    """Kueue's AppWrapper sample wrapping a PyTorchJob (Master + Worker,
    1 cpu each), created suspended. The wrapped PyTorchJob carries a
    queue name too: only the parent rule keeps it from being managed."""
    aw = sample("appwrapper-pytorchjob.yaml", name, suspend=True,
                priority=priority)
    tmpl = aw["spec"]["components"][0]["template"]
    tmpl["metadata"]["name"] = name + "-job"
    tmpl["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    tmpl["metadata"]["annotations"] = {
        "cueue.dev/sim-runtime-ms": str(runtime_ms)}
    return aw


def aw_phase(s, name):
    return s.get_json(AW % "team" + "/" + name).get("status", {}).get(
        "phase")


@case("fw-appwrapper-quota-preempted-finish",
      simulate="appwrappers,kubeflow")
def appwrapper_cases(s):
    """Two AppWrappers of 2 cpu in a 3 cpu queue run one at a time, the
    admission in podSetInfos (the wrapped templates untouched) and on the
    pods; a high-priority one preempts a running low one, whose
    podSetInfos are cleared; all finish; the wrapped PyTorchJobs get no
    Workload and no write."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    mark = s.log_mark()
    pods = PodWatch(s, "team")
    eq(s.raw("POST", AW % "team", appwrapper("low", 20000, "low"))[0], 201)

    def running(name):
        aw = s.get_json(AW % "team" + "/" + name)
        return aw["spec"].get("suspend") is False and aw
    aw = wait_for(lambda: running("low"), 30, what="low AppWrapper started")
    comp = aw["spec"]["components"][0]
    eq([i.get("nodeSelector") for i in comp["podSetInfos"]],
       [{"pool": "a"}, {"pool": "a"}], "podSetInfos carry the flavor")
    eq(comp["template"]["spec"]["pytorchReplicaSpecs"]["Master"]
       ["template"]["spec"].get("nodeSelector"), None,
       "the wrapped template is not edited")
    wait_for(lambda: aw_phase(s, "low") == "Running", 30,
             what="low AppWrapper running")
    eq(s.raw("POST", AW % "team", appwrapper("high", 800, "high"))[0], 201)
    eq(s.raw("POST", AW % "team", appwrapper("next", 800))[0], 201)

    def preempted():
        aw = s.get_json(AW % "team" + "/low")
        return aw["spec"].get("suspend") is True and aw
    aw = wait_for(preempted, 30, what="low AppWrapper suspended")
    eq(aw["spec"]["components"][0].get("podSetInfos"), None,
       "podSetInfos cleared")
    try:
        wait_for(lambda: all(aw_phase(s, n) == "Succeeded"
                             for n in ("high", "next", "low")), 90,
                 what="every AppWrapper succeeded")
    except Exception:
        print("appwrappers:", json.dumps(s.get_json(AW % "team")))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        raise
    peak = pods.done()
    check(peak <= 3000, "running pods within 3 cpu, saw %dm" % peak)
    check(peak >= 2000, "an AppWrapper ran (peak %dm)" % peak)
    check(len(pods.ran) >= 6, "pods ran: %r" % sorted(pods.ran))
    for n, (labels, sel) in pods.ran.items():
        eq(sel, {"pool": "a"}, "pod %s ran with the flavor's labels" % n)
    wls = s.get_json(WLS % "team")["items"]
    eq(sorted(w["metadata"]["ownerReferences"][0]["kind"] for w in wls),
       ["AppWrapper"] * 3, "one Workload per AppWrapper, none for the "
       "wrapped PyTorchJobs")
    for wl in wls:
        owner = wl["metadata"]["ownerReferences"][0]["name"]
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [(owner + "-0", 1), (owner + "-1", 1)])
        check(cond_true(wl, "Finished"), "Workload finished")
    eq(controller_writes(s, mark, lambda p: "/pytorchjobs" in p), [],
       "controller writes to the wrapped PyTorchJobs")
    ctl.stop()


if __name__ == "__main__":
    run_cases(rbac=True)
