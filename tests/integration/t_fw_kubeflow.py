# SPDX-License-Identifier: Apache-2.0
"""cueue-controller with the Kubeflow framework descriptors
(docs/frameworks.md): PyTorchJobs and an MPIJob, with cueue-apiserver
--simulate kubeflow,mpijobs standing in for the training operators.

Each job is queued (one Workload, pod sets per replica type), admitted
within the ClusterQueue's quota (sampled from the pods: at no observed
instant do the running pods of managed jobs ask more cpu than the quota),
started with the flavor's node labels in every replica template, and
finished, and, preempted, suspended with its templates restored. A job
whose namespace the gate excludes is never written to.
With the shipped webhook configurations, a PyTorchJob created unsuspended
is stored with spec.runPolicy.suspend true, then admitted and run."""
import json
import time

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     run_cases, wait_for)
from cuetest.frameworks import cond_true, setup, webhooks
from cuetest.pods import PodSampler

CONFIG = CONTROLLER_CONFIG + """managedJobsNamespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [kube-system, kueue-system, outside]
integrations:
  frameworks: ["batch/job", "kubeflow.org/pytorchjob", "kubeflow.org/mpijob"]
"""

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec:
  nodeLabels: {pool: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: pool-a
      resources:
      - {name: cpu, nominalQuota: 3}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
"""

KF = "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs"
MPI = "/apis/kubeflow.org/v2beta1/namespaces/%s/mpijobs"
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"


def template(cpu, runtime_ms):
    return {"metadata": {"annotations": {
        "cueue.dev/sim-runtime-ms": str(runtime_ms)}},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu}}}]}}


def pytorchjob(ns, name, runtime_ms=1200, suspend=True):
    """Master 1 + Worker 1, one cpu each. Created suspended: the webhook
    that suspends on create is not part of this step."""
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": ns, "labels": {
                "kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"runPolicy": {"suspend": suspend},
                     "pytorchReplicaSpecs": {
                         "Master": {"replicas": 1, "restartPolicy": "Never",
                                    "template": template("1", runtime_ms)},
                         "Worker": {"replicas": 1, "restartPolicy": "Never",
                                    "template": template("1", runtime_ms)}}}}


def mpijob(ns, name):
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": ns, "labels": {
                "kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"runPolicy": {"suspend": True}, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1,
                             "template": template("500m", 800)},
                "Worker": {"replicas": 2, "template": template("1", 800)}}}}


@case("fw-pytorchjob-quota-start-finish", simulate="kubeflow")
def pytorch_quota(s):
    setup(s, QUEUES)
    ctl = Controller(s, config=CONFIG)
    sampler = PodSampler(s, "team")
    for i in range(3):
        code, _, body = s.raw("POST", KF % "team",
                              pytorchjob("team", "pt%d" % i))
        eq(code, 201, "create pt%d: %r" % (i, body))
    seen_selector = {}

    def done():
        items = s.get_json(KF % "team")["items"]
        for j in items:
            if not j["spec"]["runPolicy"].get("suspend"):
                ns = (j["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
                      ["spec"].get("nodeSelector"))
                seen_selector[j["metadata"]["name"]] = ns
        return len(items) == 3 and all(cond_true(j, "Succeeded")
                                       for j in items)
    wait_for(done, 45, what="three PyTorchJobs succeeded")
    peak = sampler.done()
    check(peak <= 3000, "running pods within 3 cpu, saw %dm" % peak)
    check(peak >= 2000, "jobs ran (peak %dm)" % peak)
    eq(sorted(seen_selector), ["pt0", "pt1", "pt2"], "each job started")
    for name, sel in seen_selector.items():
        eq(sel, {"pool": "a"}, "%s worker template node selector" % name)
    wls = s.get_json(WLS % "team")["items"]
    eq(len(wls), 3, "one Workload per job")
    for wl in wls:
        eq([p["name"] for p in wl["spec"]["podSets"]], ["master", "worker"])
        check(wl["metadata"]["name"].startswith("pytorchjob-pt"),
              wl["metadata"]["name"])
        eq(wl["metadata"]["ownerReferences"][0]["kind"], "PyTorchJob")
        check(cond_true(wl, "Finished"), "Workload finished")
    ctl.stop()


@case("fw-mpijob-and-excluded-namespace", simulate="kubeflow,mpijobs")
def mpijob_and_outside(s):
    setup(s, QUEUES)
    ctl = Controller(s, config=CONFIG)
    wait_for(lambda: "informers synced" in open(ctl.log).read(), 30,
             what="the controller's informers synced")
    mark = s.log_mark()
    code, _, body = s.raw("POST", KF % "outside",
                          pytorchjob("outside", "free", runtime_ms=600,
                                     suspend=False))
    eq(code, 201, "create in outside: %r" % body)
    code, _, body = s.raw("POST", MPI % "team", mpijob("team", "pi"))
    eq(code, 201, "create MPIJob: %r" % body)
    wait_for(lambda: cond_true(s.get_json(MPI % "team" + "/pi"),
                               "Succeeded"), 40, what="MPIJob succeeded")
    wls = s.get_json(WLS % "team")["items"]
    eq(len(wls), 1)
    eq([(p["name"], p["count"]) for p in wls[0]["spec"]["podSets"]],
       [("launcher", 1), ("worker", 2)])
    wait_for(lambda: cond_true(s.get_json(KF % "outside" + "/free"),
                               "Succeeded"), 30,
             what="the job in the excluded namespace ran on its own")
    writes = [(e["verb"], e["path"]) for e in s.access_log(mark)
              if e["userAgent"].startswith("cueue-controller/")
              and e["verb"] in ("POST", "PUT", "PATCH", "DELETE")
              and "/namespaces/outside/" in e["path"]]
    eq(writes, [], "controller writes in namespace outside")
    eq(s.get_json(WLS % "outside")["items"], [], "no Workload in outside")
    ctl.stop()


PRIORITIES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
"""


@case("fw-pytorchjob-preempted-restored", simulate="kubeflow")
def pytorch_preempted(s):
    """A high-priority PyTorchJob preempts a running low-priority one:
    the low job is suspended with every replica template restored (no
    flavor node selector left), the high one runs and finishes, and the
    low one is admitted again and finishes."""
    setup(s, QUEUES.replace(
        "  namespaceSelector: {}\n", "  namespaceSelector: {}\n"
        "  preemption:\n    withinClusterQueue: LowerPriority\n")
        + "---" + PRIORITIES)
    ctl = Controller(s, config=CONFIG)
    sampler = PodSampler(s, "team")
    low = pytorchjob("team", "low", runtime_ms=4000)
    low["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "low"
    eq(s.raw("POST", KF % "team", low)[0], 201)

    def running(name):
        j = s.get_json(KF % "team" + "/" + name)
        return j["spec"]["runPolicy"].get("suspend") is False and j
    lj = wait_for(lambda: running("low"), 20, what="low job started")
    eq(lj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
       .get("nodeSelector"), {"pool": "a"}, "flavor node labels injected")
    high = pytorchjob("team", "high", runtime_ms=800)
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    eq(s.raw("POST", KF % "team", high)[0], 201)

    def preempted():
        j = s.get_json(KF % "team" + "/low")
        return j["spec"]["runPolicy"].get("suspend") is True and j
    lj = wait_for(preempted, 20, what="low job suspended")
    for role in ("Master", "Worker"):
        eq(lj["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
           .get("nodeSelector"), None, "%s template restored" % role)
    wait_for(lambda: cond_true(s.get_json(KF % "team" + "/high"),
                               "Succeeded"), 30, what="high job succeeded")
    try:
        wait_for(lambda: cond_true(s.get_json(KF % "team" + "/low"),
                                   "Succeeded"), 40,
                 what="low job admitted again and succeeded")
    except Exception:
        # Seen once under load, not reproduced since: keep the evidence.
        print("low job:", json.dumps(s.get_json(KF % "team" + "/low")))
        print("workloads:", json.dumps(s.get_json(WLS % "team")))
        print("pods:", json.dumps([
            (p["metadata"]["name"], p.get("status", {}).get("phase"),
             p["metadata"].get("deletionTimestamp"))
            for p in s.get_json("/api/v1/namespaces/team/pods")["items"]]))
        raise
    peak = sampler.done()
    check(peak <= 3000, "running pods within 3 cpu, saw %dm" % peak)
    ctl.stop()


@case("fw-pytorchjob-webhook-suspends-on-create", simulate="kubeflow")
def pytorch_webhook(s):
    setup(s, QUEUES)
    ctl = Controller(s, config=CONFIG + webhooks(s))
    wait_for(lambda: "informers synced" in open(ctl.log).read(), 30,
             what="the controller's informers synced")
    body = None
    for _ in range(50):  # the webhook server may still be starting
        code, _, body = s.raw("POST", KF % "team",
                              pytorchjob("team", "hooked", suspend=False))
        if code == 201:
            break
        time.sleep(0.2)
    eq(code, 201, "create: %r" % body)
    eq(body["spec"]["runPolicy"].get("suspend"), True,
       "stored suspended by the webhook")
    wait_for(lambda: cond_true(s.get_json(KF % "team" + "/hooked"),
                               "Succeeded"), 30, what="admitted and run")
    ctl.stop()


if __name__ == "__main__":
    run_cases(rbac=True)
