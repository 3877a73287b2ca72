# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with the remaining suspend-based CRD frameworks of
docs/frameworks.md (RayService, SparkApplication, TrainJob), with
cueue-apiserver --simulate ray, sparkapplications and trainjobs,jobsets
standing in for KubeRay, the Spark operator and Kubeflow Trainer (and
the JobSet controller).

Each object (our equivalent of Kueue's sample, tests/data/frameworks) is
queued (one Workload), admitted within the ClusterQueue's quota (from
the watch history of the pods: at no observed instant do the running
pods ask more cpu than the quota), started with the flavor's node labels
(and so its pods run with them), suspended with what cueue injected
removed when preempted, admitted again and finished (a RayService never
finishes, as in Kueue: it is deleted instead). The children a managed
parent creates (a RayService's RayCluster, a TrainJob's JobSet and its
Jobs) get no Workload and no write from the controller; neither does
anything in a namespace the gate excludes."""
import json
import os
import threading
import time

import yaml

from cuetest import case, check, eq, queued_job, run_cases, wait_for
from cuetest.frameworks import (QUEUES, WLS, PodWatch, cond_true, config,
                                controller_writes, owned_workloads, sample,
                                setup, start, webhooks)
from cuetest.env import ROOT
from cuetest.observe import Observer

CONFIG = config("batch/job", "jobset.x-k8s.io/jobset", "ray.io/raycluster",
                "ray.io/rayservice", "sparkoperator.k8s.io/sparkapplication",
                "trainer.kubeflow.org/trainjob")


def started(s, path, suspended):
    """The object at path once suspended(obj) is False, else None."""
    obj = s.get_json(path)
    return obj if suspended(obj) is False else None


def check_pods(pods, quota_milli, least_milli, want_pods):
    """The watch history: the running pods never asked more than the
    quota, some object ran, and every pod ran with the flavor's label."""
    peak = pods.done()
    check(peak <= quota_milli, "running pods within %dm cpu, saw %dm"
          % (quota_milli, peak))
    check(peak >= least_milli, "an object ran (peak %dm)" % peak)
    check(len(pods.ran) >= want_pods, "pods ran: %r" % sorted(pods.ran))
    for n, (_, sel) in pods.ran.items():
        eq(sel, {"pool": "a"}, "pod %s ran with the flavor's labels" % n)


# ---- SparkApplication ------------------------------------------------------

SPARK = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/%s/sparkapplications"


def spark(name, runtime_ms, priority=None, ns="team", queue="lq",
          suspend=True):
    """Kueue's spark-pi sample: a driver and 2 executors, 1 cpu each."""
    return sample("sparkapplication.yaml", name, ns=ns, queue=queue,
                  suspend=suspend, runtime_ms=runtime_ms, priority=priority)


def spark_state(s, name, ns="team"):
    return s.get_json(SPARK % ns + "/" + name).get("status", {}).get(
        "applicationState", {}).get("state")


def spark_suspended(obj):
    return obj["spec"].get("suspend")


@case("fw-spark-quota-preempted-finish", simulate="sparkapplications")
def spark_cases(s):
    """Three SparkApplications of 3 cpu in a 3 cpu queue run one at a
    time, started with pool-a in their driver and executor node
    selectors; a high-priority one preempts the running low one, which
    is suspended with its roles restored and runs again later; all
    complete. One in namespace outside runs on its own, untouched."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    mark = s.log_mark()
    pods = PodWatch(s, "team")
    eq(s.raw("POST", SPARK % "team", spark("low", 20000, "low"))[0], 201)
    app = wait_for(lambda: started(s, SPARK % "team" + "/low",
                                   spark_suspended), 30,
                   what="low SparkApplication started")
    eq((app["spec"]["driver"].get("nodeSelector"),
        app["spec"]["executor"].get("nodeSelector")),
       ({"pool": "a"}, {"pool": "a"}), "the flavor in both roles")
    wait_for(lambda: spark_state(s, "low") == "RUNNING", 30,
             what="low SparkApplication running")
    code, _, body = s.raw("POST", SPARK % "outside", spark(
        "free", 500, ns="outside", suspend=False))
    eq(code, 201, "create in outside: %r" % body)
    eq(s.raw("POST", SPARK % "team", spark("high", 800, "high"))[0], 201)
    eq(s.raw("POST", SPARK % "team", spark("next", 800))[0], 201)

    def preempted():
        app = s.get_json(SPARK % "team" + "/low")
        return app["spec"].get("suspend") is True and app
    app = wait_for(preempted, 30, what="low SparkApplication suspended")
    eq((app["spec"]["driver"].get("nodeSelector"),
        app["spec"]["executor"].get("nodeSelector")), (None, None),
       "node selectors restored")
    try:
        wait_for(lambda: all(spark_state(s, n) == "COMPLETED"
                             for n in ("high", "next", "low")), 90,
                 what="every SparkApplication completed")
    except Exception:
        print("apps:", json.dumps(s.get_json(SPARK % "team")))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        raise
    check_pods(pods, 3000, 3000, 9)
    wls = wait_for(lambda: (lambda ws: ws if len(ws) == 3 and all(
        cond_true(w, "Finished") for w in ws) else None)(
            owned_workloads(s, "SparkApplication")), 30,
        what="three Finished Workloads")
    for wl in wls:
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("driver", 1), ("executor", 2)])
    wait_for(lambda: spark_state(s, "free", "outside") == "COMPLETED", 30,
             what="the SparkApplication in outside ran on its own")
    eq(s.get_json(WLS % "outside")["items"], [], "no Workload in outside")
    eq(controller_writes(s, mark, lambda p: "/pods" in p
                         or "/namespaces/outside/" in p), [],
       "controller writes to pods or namespace outside")
    ctl.stop()


# ---- RayService -------------------------------------------------------------

RAY = "/apis/ray.io/v1/namespaces/%s/"


def rayservice(name, priority=None, suspend=True):
    """Kueue's RayService sample: head 1 cpu + one 500m worker."""
    svc = sample("rayservice.yaml", name, priority=priority)
    if suspend is not None:
        svc["spec"]["rayClusterConfig"]["suspend"] = suspend
    return svc


def svc_suspended(obj):
    return obj["spec"]["rayClusterConfig"].get("suspend")


def svc_selectors(obj):
    cc = obj["spec"]["rayClusterConfig"]
    return (cc["headGroupSpec"]["template"]["spec"].get("nodeSelector"),
            cc["workerGroupSpecs"][0]["template"]["spec"].get(
                "nodeSelector"))


def svc_running(s, name):
    return s.get_json(RAY % "team" + "rayservices/" + name).get(
        "status", {}).get("serviceStatus") == "Running"


@case("fw-rayservice-quota-preempted-restored", simulate="ray")
def rayservice_cases(s):
    """Two low RayServices (1.5 cpu each) fill a 3 cpu queue and serve
    with pool-a in their head and worker templates; a high one preempts
    one of them, which is suspended through rayClusterConfig.suspend
    with its templates restored; deleting the high one readmits it. The
    RayClusters the services create get no Workload and no write."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    mark = s.log_mark()
    pods = PodWatch(s, "team")
    for name in ("svc0", "svc1"):
        eq(s.raw("POST", RAY % "team" + "rayservices",
                 rayservice(name, "low"))[0], 201)
    for name in ("svc0", "svc1"):
        svc = wait_for(lambda: started(s, RAY % "team" + "rayservices/"
                                       + name, svc_suspended), 30,
                       what="%s started" % name)
        eq(svc_selectors(svc), ({"pool": "a"}, {"pool": "a"}),
           "%s templates" % name)
        wait_for(lambda: svc_running(s, name), 30,
                 what="%s serving" % name)
    eq(s.raw("POST", RAY % "team" + "rayservices",
             rayservice("top", "high"))[0], 201)

    def one_preempted():
        for name in ("svc0", "svc1"):
            svc = s.get_json(RAY % "team" + "rayservices/" + name)
            if svc_suspended(svc) is True:
                return svc
        return None
    svc = wait_for(one_preempted, 30, what="a low RayService suspended")
    victim = svc["metadata"]["name"]
    eq(svc_selectors(svc), (None, None), "templates restored")
    wait_for(lambda: svc_running(s, "top"), 30, what="top serving")
    s.kubectl("delete", "rayservice", "top", "-n", "team")
    try:
        wait_for(lambda: svc_running(s, victim), 60,
                 what="%s admitted again and serving" % victim)
    except Exception:
        print("services:", json.dumps(s.get_json(RAY % "team" +
                                                 "rayservices")))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        raise
    check_pods(pods, 3000, 3000, 6)
    # top's Workload goes with top (garbage collection), maybe after
    # the victim is serving again.
    wls = wait_for(lambda: (lambda w: w if sorted(
        x["metadata"]["ownerReferences"][0]["name"] for x in w) ==
        ["svc0", "svc1"] else None)(owned_workloads(s, "RayService")), 30,
        what="one Workload per live RayService")
    for wl in wls:
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("head", 1), ("small-group", 1)])
        check(cond_true(wl, "Admitted"), "Workload admitted")
    eq(owned_workloads(s, "RayCluster"), [], "no Workload for RayClusters")
    eq(controller_writes(s, mark, lambda p: "/rayclusters" in p
                         or "/pods" in p), [],
       "controller writes to the RayClusters or pods")
    ctl.stop()


@case("fw-crds2-webhooks-suspend-on-create",
      simulate="ray,sparkapplications,trainjobs,jobsets")
def crds2_webhooks(s):
    """With the shipped webhooks, a RayService, a SparkApplication and a
    TrainJob created unsuspended are stored suspended
    (rayClusterConfig.suspend, spec.suspend), the first two then admitted
    and run; the RayService's RayCluster passes the RayCluster webhook
    untouched. With the pod integration on, the application's Pods pass
    the pod webhook untouched, its executors (controlled by the driver
    Pod, as the Spark operator makes them) included, and the controller
    never writes to them (as Kueue: children of a managed parent)."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG.replace('"batch/job"', '"batch/job", "pod"') +
                webhooks(s))
    pods_mark = s.log_mark()
    body = None
    for _ in range(50):  # the webhook server may still be starting
        code, _, body = s.raw("POST", SPARK % "team",
                              spark("hooked", 500, suspend=False))
        if code == 201:
            break
        time.sleep(0.2)
    eq(code, 201, "create: %r" % body)
    eq(body["spec"].get("suspend"), True, "SparkApplication stored "
       "suspended")
    wait_for(lambda: spark_state(s, "hooked") == "COMPLETED", 40,
             what="SparkApplication admitted and run")
    spark_pods = [p for p in s.get_json("/api/v1/namespaces/team/pods")[
        "items"] if p["metadata"]["labels"].get("spark-app-name") ==
        "hooked"]
    drv = [p for p in spark_pods if p["metadata"]["name"] == "hooked-driver"]
    eq(len(drv), 1, "the driver Pod")
    execs = [p for p in spark_pods if p is not drv[0]]
    eq(len(execs), 2, "two executor Pods")
    for p in execs:
        eq([(o["kind"], o["name"], o["uid"], o.get("controller"))
            for o in p["metadata"]["ownerReferences"]],
           [("Pod", "hooked-driver", drv[0]["metadata"]["uid"], True)],
           "%s controlled by the driver Pod" % p["metadata"]["name"])
    for p in spark_pods:
        md = p["metadata"]
        eq((md["labels"].get("kueue.x-k8s.io/managed"),
            md.get("finalizers"), p["spec"].get("schedulingGates")),
           (None, None, None), "%s untouched by the pod webhook"
           % md["name"])
    eq(controller_writes(s, pods_mark, lambda p: "/pods" in p), [],
       "controller writes to the application's Pods")
    mark = s.log_mark()
    code, _, body = s.raw("POST", RAY % "team" + "rayservices",
                          rayservice("hooked", suspend=None))
    eq(code, 201, "create: %r" % body)
    eq(svc_suspended(body), True, "RayService stored suspended")
    wait_for(lambda: svc_running(s, "hooked"), 40,
             what="RayService admitted and serving")
    eq(owned_workloads(s, "RayCluster"), [], "no Workload for its "
       "RayCluster")
    rt, tj = trainer_docs("torch-distributed", 500)
    eq(s.raw("POST", TRAINER + "clustertrainingruntimes", rt)[0], 201)
    tj["metadata"]["namespace"] = "team"
    tj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq"
    code, _, body = s.raw("POST", TRAINER + "namespaces/team/trainjobs", tj)
    eq(code, 201, "create: %r" % body)
    eq(body["spec"].get("suspend"), True, "TrainJob stored suspended")
    eq(controller_writes(s, mark, lambda p: "/rayclusters" in p), [],
       "controller writes to the RayCluster")
    ctl.stop()


# ---- integrations.externalFrameworks ----------------------------------------

THING_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Thing, listKind: ThingList, plural: things, singular: thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""

THINGS = "/apis/example.com/v1/namespaces/team/things"


def thing_workload(thing, cpu):
    """The Workload an external controller makes for its Thing: owned by
    it, queued to lq, 2 pods of cpu each."""
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "thing-" + thing["metadata"]["name"],
                         "namespace": "team", "ownerReferences": [{
                             "apiVersion": "example.com/v1", "kind": "Thing",
                             "name": thing["metadata"]["name"],
                             "uid": thing["metadata"]["uid"],
                             "controller": True,
                             "blockOwnerDeletion": True}]},
            "spec": {"queueName": "lq", "podSets": [{
                "name": "main", "count": 2, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}]}}}]}}


class ReservedPeak:
    """The Workloads of team followed by an Observer: the most cpu that
    Workloads holding quota (QuotaReserved, not Finished) asked at any
    observed instant."""

    def __init__(self, s):
        self.held, self.peak = {}, 0
        self.lock = threading.Lock()
        self.obs = Observer(s, WLS % "team", on_change=self._change)

    def _change(self, name, old, new, rv, relisting):
        with self.lock:
            if new is not None and cond_true(new, "QuotaReserved") and \
                    not cond_true(new, "Finished"):
                self.held[name] = sum(
                    ps["count"] * int(float(c["resources"]["requests"]
                                            ["cpu"]) * 1000)
                    for ps in new["spec"]["podSets"]
                    for c in ps["template"]["spec"]["containers"])
            else:
                self.held.pop(name, None)
            self.peak = max(self.peak, sum(self.held.values()))

    def done(self):
        self.obs.stop()
        return self.peak


@case("fw-external-framework-workloads-queued")
def external_frameworks(s):
    """integrations.externalFrameworks [Thing.v1.example.com]: Workloads
    owned by Things (2 cpu each, 3 cpu quota) are queued and admitted one
    at a time, the next once the Thing's own controller finishes the
    first; a Job a Thing owns, queue-name label and all, is never
    suspended, written to or given a Workload by cueue."""
    setup(s, QUEUES)
    s.kubectl("apply", "-f", s.file("thing-crd.yaml", THING_CRD))
    s.kubectl("wait", "--for=condition=Established",
              "crd/things.example.com", "--timeout=30s")
    ctl = start(s, CONFIG + "  externalFrameworks: [Thing.v1.example.com]\n")
    mark = s.log_mark()
    held = ReservedPeak(s)
    things = {}
    for name in ("t1", "t2"):
        code, _, body = s.raw("POST", THINGS, {
            "apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": name, "namespace": "team"}})
        eq(code, 201, "create Thing %s: %r" % (name, body))
        things[name] = body
    child = queued_job("team", "t1-child", suspend=False)
    child["metadata"]["ownerReferences"] = [{
        "apiVersion": "example.com/v1", "kind": "Thing", "name": "t1",
        "uid": things["t1"]["metadata"]["uid"], "controller": True}]
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          child)
    eq(code, 201, "create the Thing's Job: %r" % body)
    for name in ("t1", "t2"):
        eq(s.raw("POST", WLS % "team",
                 thing_workload(things[name], "1"))[0], 201)

    def wl(name):
        return s.get_json(WLS % "team" + "/thing-" + name)
    wait_for(lambda: cond_true(wl("t1"), "Admitted"), 30,
             what="the first Thing's Workload admitted")
    # the second stays pending: it does not fit
    wait_for(lambda: [c["status"] for c in wl("t2").get("status", {}).get(
        "conditions", []) if c["type"] == "QuotaReserved"] == ["False"], 30,
        what="t2 pending for quota")
    check(not cond_true(wl("t1"), "Finished"), "t1 still running")
    # The Thing's controller runs it and finishes its Workload.
    w1 = wl("t1")
    w1["status"]["conditions"].append({
        "type": "Finished", "status": "True", "reason": "Succeeded",
        "message": "done by the Thing controller",
        "lastTransitionTime": "2026-01-01T00:00:00Z"})
    code, _, body = s.raw("PUT", WLS % "team" + "/thing-t1/status", w1)
    eq(code, 200, "finish t1: %r" % body)
    wait_for(lambda: cond_true(wl("t2"), "Admitted"), 30,
             what="the second Thing's Workload admitted")
    peak = held.done()
    check(peak <= 3000, "Workloads holding quota within 3 cpu, saw %dm"
          % peak)
    check(peak >= 2000, "a Workload held quota (peak %dm)" % peak)
    job = s.get_json("/apis/batch/v1/namespaces/team/jobs/t1-child")
    eq(job["spec"].get("suspend"), False, "the Thing's Job not suspended")
    eq(sorted(w["metadata"]["name"]
              for w in s.get_json(WLS % "team")["items"]),
       ["thing-t1", "thing-t2"], "no Workload for the Thing's Job")
    eq(controller_writes(s, mark, lambda p: "/jobs" in p
                         or "/things" in p), [],
       "controller writes to the Thing or its Job")
    ctl.stop()


# ---- TrainJob ---------------------------------------------------------------

TRAINER = "/apis/trainer.kubeflow.org/v1alpha1/"


def trainer_docs(runtime, runtime_ms):
    """Kueue's TrainJob sample: its ClusterTrainingRuntime (renamed
    runtime, its Jobs running runtime_ms) and the TrainJob (2 nodes of 1
    cpu)."""
    with open(os.path.join(ROOT, "tests", "data", "frameworks",
                           "trainjob.yaml")) as f:
        rt, tj = list(yaml.safe_load_all(f))
    rt["metadata"]["name"] = runtime
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"][
        "metadata"]["annotations"] = {"cueue.dev/sim-runtime-ms":
                                      str(runtime_ms)}
    return rt, tj


def trainjob(name, runtime, priority=None):
    _, tj = trainer_docs(runtime, 0)
    md = tj["metadata"]
    md["name"], md["namespace"] = name, "team"
    md["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    if priority is not None:
        md["labels"]["kueue.x-k8s.io/priority-class"] = priority
    tj["spec"]["runtimeRef"]["name"] = runtime
    tj["spec"]["suspend"] = True
    return tj


def kueue_patch(tj):
    """The node selector Kueue's runtime patch gives the node job."""
    for p in tj["spec"].get("runtimePatches", []):
        if p.get("manager") != "kueue.x-k8s.io/manager":
            continue
        for rj in p.get("trainingRuntimeSpec", {}).get("template", {}).get(
                "spec", {}).get("replicatedJobs", []) or []:
            if rj["name"] == "node":
                return rj["template"]["spec"]["template"]["spec"].get(
                    "nodeSelector")
    return None


def tj_get(s, name):
    return s.get_json(TRAINER + "namespaces/team/trainjobs/" + name)


@case("fw-trainjob-quota-preempted-finish",
      simulate="trainjobs,jobsets,jobs")
def trainjob_cases(s):
    """TrainJobs of 2 cpu (2 nodes) in a 3 cpu queue run one at a time,
    the flavor in Kueue's runtime patch and so on the pods of the JobSet
    the trainer renders; a high-priority one preempts the running low
    one, whose patch is cleared; all complete. The JobSets and their Jobs
    get no Workload and no write from the controller."""
    setup(s, QUEUES)
    for runtime, ms in (("slow", 20000), ("fast", 800)):
        rt, _ = trainer_docs(runtime, ms)
        code, _, body = s.raw("POST", TRAINER + "clustertrainingruntimes",
                              rt)
        eq(code, 201, "create runtime %s: %r" % (runtime, body))
    ctl = start(s, CONFIG)
    mark = s.log_mark()
    pods = PodWatch(s, "team")
    tjs = TRAINER + "namespaces/team/trainjobs"
    eq(s.raw("POST", tjs, trainjob("low", "slow", "low"))[0], 201)
    tj = wait_for(lambda: started(s, tjs + "/low",
                                  lambda o: o["spec"].get("suspend")), 30,
                  what="low TrainJob started")
    eq(kueue_patch(tj), {"pool": "a"}, "the flavor in Kueue's patch")
    wait_for(lambda: any(p.get("active", 0) for p in tj_get(s, "low").get(
        "status", {}).get("jobsStatus", [])), 30,
        what="low TrainJob running")
    eq(s.raw("POST", tjs, trainjob("high", "fast", "high"))[0], 201)
    eq(s.raw("POST", tjs, trainjob("next", "fast"))[0], 201)

    def preempted():
        tj = tj_get(s, "low")
        return tj["spec"].get("suspend") is True and tj
    tj = wait_for(preempted, 30, what="low TrainJob suspended")
    eq(kueue_patch(tj), None, "Kueue's patch cleared")
    try:
        wait_for(lambda: all(cond_true(tj_get(s, n), "Complete")
                             for n in ("high", "next", "low")), 120,
                 what="every TrainJob complete")
    except Exception:
        print("trainjobs:", json.dumps(s.get_json(tjs)))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        raise
    check_pods(pods, 3000, 2000, 6)
    wls = wait_for(lambda: (lambda ws: ws if len(ws) == 3 and all(
        cond_true(w, "Finished") for w in ws) else None)(
            owned_workloads(s, "TrainJob")), 30,
        what="three Finished Workloads")
    for wl in wls:
        eq([(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
           [("node", 2)])
    eq(len(s.get_json(WLS % "team")["items"]), 3,
       "no Workload for the JobSets or Jobs")
    eq(controller_writes(s, mark, lambda p: "/jobsets" in p
                         or "/jobs/" in p or p.endswith("/jobs")), [],
       "controller writes to the JobSets or Jobs")
    ctl.stop()


def tj_workloads(s):
    return owned_workloads(s, "TrainJob")


@case("fw-trainjob-runtime-events-requeue",
      simulate="trainjobs,jobsets,jobs")
def trainjob_runtime_events(s):
    """A TrainJob whose ClusterTrainingRuntime does not exist yet gets no
    Workload; once the runtime is created it is queued, admitted and
    completes. A TrainJob reading its node count from a namespaced
    TrainingRuntime (4 nodes), queued to a LocalQueue that does not exist
    yet, waits with a Workload of 4 pods that nothing else touches; when
    the runtime is changed to 2 nodes, the runtime's event alone brings
    the TrainJob back and its pending Workload follows (2 pods); with its
    LocalQueue created it runs."""
    setup(s, QUEUES)
    ctl = start(s, CONFIG)
    tjs = TRAINER + "namespaces/team/trainjobs"
    eq(s.raw("POST", tjs, trainjob("early", "late"))[0], 201)
    # Reconciled without its runtime: nothing to queue yet.
    time.sleep(2)
    eq(tj_workloads(s), [], "no Workload before the runtime exists")
    rt, _ = trainer_docs("late", 500)
    eq(s.raw("POST", TRAINER + "clustertrainingruntimes", rt)[0], 201)
    wait_for(lambda: cond_true(tj_get(s, "early"), "Complete"), 60,
             what="the TrainJob queued and run once its runtime exists")

    rt, _ = trainer_docs("team-rt", 500)
    rt["kind"] = "TrainingRuntime"
    rt["metadata"]["namespace"] = "team"
    rt["spec"]["mlPolicy"]["numNodes"] = 4
    rts = TRAINER + "namespaces/team/trainingruntimes"
    eq(s.raw("POST", rts, rt)[0], 201)
    tj = trainjob("grow", "team-rt")
    tj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "later"
    tj["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    del tj["spec"]["trainer"]["numNodes"]
    eq(s.raw("POST", tjs, tj)[0], 201)

    def counts():
        ws = [w for w in tj_workloads(s)
              if w["metadata"]["ownerReferences"][0]["name"] == "grow"]
        return [p["count"] for w in ws for p in w["spec"]["podSets"]]
    wait_for(lambda: counts() == [4], 30, what="a Workload of 4 pods")
    cur = s.get_json(rts + "/team-rt")
    cur["spec"]["mlPolicy"]["numNodes"] = 2
    eq(s.raw("PUT", rts + "/team-rt", cur)[0], 200)
    wait_for(lambda: counts() == [2], 30,
             what="the pending Workload follows the runtime (2 pods)")
    s.kubectl("apply", "-f", s.file("later.yaml", """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: later, namespace: team}
spec: {clusterQueue: cq}
"""))
    wait_for(lambda: cond_true(tj_get(s, "grow"), "Complete"), 60,
             what="the TrainJob admitted and run")
    ctl.stop()


if __name__ == "__main__":
    run_cases(rbac=True)
