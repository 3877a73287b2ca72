# SPDX-License-Identifier: Apache-2.0
"""Our equivalents of Kueue's samples (tests/data/frameworks: pods-kueue,
serving-workloads, jobs/sample-*, appwrapper, ray-*), applied unchanged
with kubectl, as a user of make run would, to cueue-apiserver with every
framework simulator, cueue-controller managing every framework and the
shipped admission webhooks. Each is queued to LocalQueue user-queue (in
namespace team: kubectl -n team), admitted, and runs to completion (the
kinds that never finish - Deployment, StatefulSet, LeaderWorkerSet,
RayCluster, RayService, an AppWrapper of a Deployment or
LeaderWorkerSet - serve); every Workload holds quota and the batch ones
finish."""
import os

from cuetest import case, check, run_cases, wait_for
from cuetest.env import ROOT
from cuetest.frameworks import (cond_true, config, queues, setup, start,
                                webhooks)
from cuetest.samples import DONE, FILES

SIM = ("jobs,jobsets,pods,deployments,statefulsets,leaderworkersets,"
       "kubeflow,mpijobs,trainjobs,ray,appwrappers,sparkapplications")
FRAMEWORKS = (
    "batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
    "kubeflow.org/paddlejob", "kubeflow.org/jaxjob", "kubeflow.org/mpijob",
    "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication", "trainer.kubeflow.org/trainjob",
    "pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/"
    "leaderworkerset")
# Room for every sample at once (LocalQueue user-queue in namespace
# team): admission is what is checked here, the quota itself in
# t_fw_*.py.
QUEUES = queues(200, lq="user-queue", memory="800Gi")
# Created with generateName (kubectl create), or applied.
CREATED = ["job.yaml", "jobset.yaml", "pod.yaml", "pod-group.yaml"]
SERVING = ["deployment.yaml", "statefulset.yaml", "leaderworkerset.yaml"]
NS = "/namespaces/team/"
# The kinds whose Workloads must exist (their owners).
OWNERS = {"Job", "JobSet", "PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob",
          "JAXJob", "MPIJob", "TrainJob", "RayJob", "RayCluster",
          "RayService", "AppWrapper", "SparkApplication", "Pod"}


def sample(name):
    return os.path.join(ROOT, "tests", "data", "frameworks", name)


def get(s, gv, plural, name):
    code, _, body = s.raw("GET", "/apis/" + gv + NS + plural + "/" + name)
    return body if code == 200 else None


def items(s, path):
    return s.get_json(path)["items"]


def left(s):
    """What has not finished (or does not serve) yet."""
    out = [n for gv, pl, n, ok in DONE
           if not (lambda o: bool(o and o.get("status") and ok(o)))(
               get(s, gv, pl, n))]
    for j in items(s, "/apis/batch/v1" + NS + "jobs"):
        if j["metadata"]["name"].startswith("sample-job-") and \
                not cond_true(j, "Complete"):
            out.append(j["metadata"]["name"])
    for j in items(s, "/apis/jobset.x-k8s.io/v1alpha2" + NS + "jobsets"):
        if not cond_true(j, "Completed"):
            out.append(j["metadata"]["name"])
    for p in items(s, "/api/v1" + NS + "pods"):
        n = p["metadata"]["name"]
        if n.startswith(("kueue-sleep-", "group-member-")) and \
                p.get("status", {}).get("phase") != "Succeeded":
            out.append(n)
    for kind, name, want in (("apps/v1/deployments", "web", 3),
                             ("apps/v1/statefulsets", "store", 3),
                             ("leaderworkerset.x-k8s.io/v1/"
                              "leaderworkersets", "serving", 2)):
        gv, pl = kind.rsplit("/", 1)
        o = get(s, gv, pl, name)
        if not o or o.get("status", {}).get("readyReplicas") != want:
            out.append(name)
    return out


@case("fw-samples-queued-admitted-finished", simulate=SIM)
def samples(s):
    setup(s, QUEUES)
    ctl = start(s, config(*FRAMEWORKS) + webhooks(s))
    args = ["-n", "team"]
    for f in FILES + SERVING:
        args += ["-f", sample(f)]
    # the webhook server may still be starting: the first apply may fail
    wait_for(lambda: s.kubectl("apply", *args, check=False).returncode == 0,
             30, what="the samples applied")
    created = ["-n", "team"]
    for f in CREATED:
        created += ["-f", sample(f)]
    s.kubectl("create", *created)
    try:
        wait_for(lambda: not left(s), 120, what="every sample done")
    except Exception:
        print("left:", left(s))
        raise
    wls = items(s, "/apis/kueue.x-k8s.io/v1beta2" + NS + "workloads")
    owners = {r["kind"] for w in wls
              for r in w["metadata"].get("ownerReferences", [])}
    check(OWNERS <= owners, "Workloads of every kind: missing %r"
          % sorted(OWNERS - owners))
    for w in wls:
        check(cond_true(w, "QuotaReserved") or cond_true(w, "Finished"),
              "Workload %s admitted or finished: %r"
              % (w["metadata"]["name"], w.get("status")))
    # The Spark operator copies the application's labels to its pods:
    # queue-named, but children of a managed parent, never gated and
    # never queued on their own (with the pod integration on).
    spark = [p for p in items(s, "/api/v1" + NS + "pods")
             if p["metadata"]["name"].startswith("spark-pi-")]
    check(len(spark) == 3, "driver and 2 executors: %r"
          % [p["metadata"]["name"] for p in spark])
    for p in spark:
        check(p["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") ==
              "user-queue", "queue-name label on %s" % p["metadata"]["name"])
        check(not p["spec"].get("schedulingGates"),
              "%s not gated" % p["metadata"]["name"])
    check(not [w for w in wls for r in w["metadata"].get(
        "ownerReferences", []) if r["name"].startswith("spark-pi-")],
        "no Workload for the Spark pods")
    ctl.stop()


if __name__ == "__main__":
    run_cases(rbac=True)
