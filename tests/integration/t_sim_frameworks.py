# SPDX-License-Identifier: Apache-2.0
"""The framework stand-ins alone (no cueue-controller): cueue-apiserver
--simulate pods, deployments, statefulsets, leaderworkersets, kubeflow,
mpijobs, trainjobs, ray, appwrappers, sparkapplications
(tests/apiserver/*sim.c, docs/apiserver.md section 15). Each sample of
tests/data/frameworks is applied with kubectl and runs to completion;
suspending deletes the Pods; spec.managedBy naming another controller
leaves the object alone; the pod stand-in honours scheduling gates,
runtime, failure and finalizers."""
import base64
import http.server
import json
import os
import ssl
import subprocess
import threading

from cuetest import case, check, eq, mint_certs, run_cases, wait_for, write
from cuetest.env import BIN, ROOT
from cuetest.samples import DONE, FILES

SAMPLES = os.path.join(ROOT, "tests", "data", "frameworks")
NS = "/namespaces/default/"
BATCH = ("jobs,jobsets,kubeflow,mpijobs,trainjobs,ray,appwrappers,"
         "sparkapplications,deployments,leaderworkersets")


def sample(name):
    return os.path.join(SAMPLES, name)


def api(group_version):
    return "/api/v1" if group_version == "v1" else "/apis/" + group_version


def get(s, gv, plural, name):
    code, _, body = s.raw("GET", api(gv) + NS + plural + "/" + name)
    return body if code == 200 else None


def pods(s, prefix=""):
    items = s.get_json("/api/v1" + NS + "pods")["items"]
    return {p["metadata"]["name"]: p for p in items
            if p["metadata"]["name"].startswith(prefix)}


def phase(p):
    return p.get("status", {}).get("phase")


def cond(obj, typ):
    for c in (obj or {}).get("status", {}).get("conditions", []):
        if c["type"] == typ:
            return c
    return None


def cond_true(obj, typ):
    c = cond(obj, typ)
    return c is not None and c["status"] == "True"


def live(ps):
    return {n: p for n, p in ps.items()
            if phase(p) not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")}


def ready(p):
    return cond_true(p, "Ready") and phase(p) == "Running"


# ---- pods -------------------------------------------------------------


@case("sim-pods-lifecycle", simulate="pods")
def pods_lifecycle(s):
    s.kubectl("create", "-f", sample("pod.yaml"), "-f",
              sample("pod-group.yaml"))
    extra = """
apiVersion: v1
kind: Pod
metadata:
  name: NAME
  annotations: {ANN}
spec:
  restartPolicy: Never
  GATES
  containers:
  - name: c
    image: busybox
"""
    gated = extra.replace("NAME", "gated").replace(
        "ANN", '"cueue.dev/sim-runtime-ms": "200"').replace(
        "GATES", "schedulingGates: [{name: example.com/wait}]")
    failing = extra.replace("NAME", "failing").replace(
        "ANN", '"cueue.dev/sim-runtime-ms": "100", '
               '"cueue.dev/sim-fail": "true"').replace("GATES", "")
    kept = extra.replace("NAME", "kept").replace(
        "ANN", '"cueue.dev/sim-runtime-ms": "600000"').replace(
        "GATES", "").replace("annotations:",
                             "finalizers: [example.com/keep]\n  annotations:")
    serving = extra.replace("NAME", "serving").replace("ANN", "").replace(
        "GATES", "").replace("restartPolicy: Never", "restartPolicy: Always")
    other = extra.replace("NAME", "other").replace("ANN", "").replace(
        "GATES", "schedulerName: my-scheduler")
    held = extra.replace("NAME", "held").replace("ANN", "").replace(
        "GATES", "schedulingGates: [{name: example.com/wait}]").replace(
        "annotations:", "finalizers: [example.com/keep]\n  annotations:")
    s.kubectl("apply", "-f", write(s.dir, "p.yaml", "---".join(
        [gated, failing, kept, serving, other, held])))
    # The samples (restartPolicy Never, no annotation) run 1 s and end.
    done = wait_for(lambda: (lambda ps: ps if len(ps) == 3 and all(
        phase(p) == "Succeeded" for p in ps.values()) else None)(
        {n: p for n, p in pods(s).items() if n.startswith(
            ("kueue-sleep-", "group-member-"))}), 20,
        what="sample pods Succeeded")
    for p in done.values():
        eq(p["spec"]["nodeName"], "cueue-sim-node", "fake node")
        eq(p["status"]["containerStatuses"][0]["state"]["terminated"]
           ["reason"], "Completed", "container state")
    f = wait_for(lambda: (lambda p: p if phase(p) == "Failed" else None)(
        pods(s)["failing"]), 10, what="failing pod Failed")
    eq(f["status"]["containerStatuses"][0]["state"]["terminated"]
       ["exitCode"], 137, "exit code")
    # A gated pod waits as kube-scheduler reports it.
    g = pods(s)["gated"]
    eq(phase(g), "Pending", "gated phase")
    c = cond(g, "PodScheduled")
    eq((c["status"], c["reason"]), ("False", "SchedulingGated"),
       "gated condition")
    check("nodeName" not in g["spec"], "gated pod unbound")
    o = pods(s)["other"]
    check("nodeName" not in o["spec"] and phase(o) == "Pending",
          "a pod for another scheduler waits for it")
    # Running for ever without a runtime under restartPolicy Always.
    check(ready(wait_for(lambda: (lambda p: p if ready(p) else None)(
        pods(s)["serving"]), 10, what="serving pod running")), "ready")
    s.kubectl("patch", "pod", "gated", "--type=json", "-p",
              '[{"op":"remove","path":"/spec/schedulingGates"}]')
    wait_for(lambda: phase(pods(s)["gated"]) == "Succeeded", 10,
             what="ungated pod ran")
    eq(phase(pods(s)["serving"]), "Running", "serving still running")
    # A finalizer keeps a deleted pod; its containers are killed.
    wait_for(lambda: ready(pods(s)["kept"]), 10, what="kept running")
    s.kubectl("delete", "pod", "kept", "--wait=false")
    k = wait_for(lambda: (lambda p: p if phase(p) == "Failed" else None)(
        pods(s).get("kept")), 10, what="deleted pod killed")
    check(k["metadata"].get("deletionTimestamp"), "deletionTimestamp")
    # One that never ran is only marked Failed (the pod GC's part).
    s.kubectl("delete", "pod", "held", "--wait=false")
    h = wait_for(lambda: (lambda p: p if phase(p) == "Failed" else None)(
        pods(s).get("held")), 10, what="deleted gated pod failed")
    check("containerStatuses" not in h["status"], "never started")
    for name in ("kept", "held"):
        s.kubectl("patch", "pod", name, "--type=merge", "-p",
                  '{"metadata":{"finalizers":null}}')
    wait_for(lambda: "kept" not in pods(s) and "held" not in pods(s), 10,
             what="finalized pods gone")


@case("sim-pods-with-scheduler", simulate="pods,scheduler,deployments")
def pods_with_scheduler(s):
    s.kubectl("apply", "-f", write(s.dir, "n.yaml", """
apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata:
  name: p1
  annotations: {cueue.dev/sim-runtime-ms: "300"}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "1"}}
"""))
    p = wait_for(lambda: (lambda p: p if phase(p) == "Succeeded" else None)(
        pods(s).get("p1")), 10, what="pod done on the node")
    eq(p["spec"]["nodeName"], "n1", "bound by the scheduler stand-in")
    # A controller's pods get their priority as kube's admission gives it.
    s.kubectl("apply", "-f", write(s.dir, "pc.yaml", """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
"""))
    s.kubectl("apply", "-f", write(s.dir, "d.yaml", read(
        "deployment.yaml").replace("    spec:\n      containers:",
                                   "    spec:\n      priorityClassName: "
                                   "high\n      containers:")))
    ps = wait_for(lambda: (lambda ps: ps if len(ps) == 3 and all(
        ready(p) for p in ps.values()) else None)(pods(s, "web-")), 15,
        what="deployment pods running on the node")
    for p in ps.values():
        eq((p["spec"]["priority"], p["spec"]["nodeName"]), (1000, "n1"),
           "priority and node")


# ---- serving ------------------------------------------------------------


@case("sim-serving-workloads",
      simulate="deployments,statefulsets,leaderworkersets")
def serving(s):
    mark = s.log_mark()
    s.kubectl("apply", "-f", sample("deployment.yaml"), "-f",
              sample("statefulset.yaml"), "-f", sample("leaderworkerset.yaml"))

    def settled():
        d = get(s, "apps/v1", "deployments", "web")
        st = get(s, "apps/v1", "statefulsets", "store")
        lws = get(s, "leaderworkerset.x-k8s.io/v1", "leaderworkersets",
                  "serving")
        ok = d and d.get("status", {}).get("readyReplicas") == 3 and \
            st and st.get("status", {}).get("readyReplicas") == 3 and \
            lws and lws.get("status", {}).get("readyReplicas") == 2
        return (d, st, lws) if ok else None
    d, st, lws = wait_for(settled, 20, what="serving workloads ready")
    ps = pods(s)
    web = sorted(n for n in ps if n.startswith("web-"))
    eq(len(web), 3, "deployment pods")
    h = ps[web[0]]["metadata"]["labels"]["pod-template-hash"]
    check(all(n.startswith("web-%s-" % h) and len(n) == len(web[0])
              for n in web), "deployment pod names %r" % web)
    # Deployment -> ReplicaSet web-<hash> -> Pods, as kube's controllers.
    rs = get(s, "apps/v1", "replicasets", "web-" + h)
    eq((rs["metadata"]["ownerReferences"][0]["kind"],
        ps[web[0]]["metadata"]["ownerReferences"][0]["kind"],
        ps[web[0]]["metadata"]["ownerReferences"][0]["name"]),
       ("Deployment", "ReplicaSet", "web-" + h), "owners")
    eq(sorted(n for n in ps if n.startswith("store-")),
       ["store-0", "store-1", "store-2"], "statefulset ordinals")
    eq(ps["store-1"]["metadata"]["labels"]["apps.kubernetes.io/pod-index"],
       "1", "pod-index label")
    eq(sorted(n for n in ps if n.startswith("serving-")),
       ["serving-0", "serving-0-1", "serving-0-2", "serving-1",
        "serving-1-1", "serving-1-2"], "leaderworkerset pods")
    eq(ps["serving-1-2"]["metadata"]["annotations"]
       ["leaderworkerset.sigs.k8s.io/leader-name"], "serving-1",
       "leader name")
    eq(ps["serving-0"]["spec"]["containers"][0]["name"], "leader",
       "leader template")
    eq(cond(d, "Available")["reason"], "MinimumReplicasAvailable")
    out = s.kubectl("get", "deployment/web", "statefulset/store").stdout
    check("3/3" in out and "UP-TO-DATE" in out, "kubectl get: " + out)
    eq(st["status"]["currentRevision"], st["status"]["updateRevision"],
       "revisions")
    # The pods went through the front door, as a controller's creates.
    users = {e["user"] for e in s.requests(mark, verb="POST",
                                           prefix="/api/v1/namespaces/"
                                                  "default/pods")}
    eq(users, {"system:serviceaccount:kube-system:replicaset-controller",
               "system:serviceaccount:kube-system:statefulset-controller",
               "system:serviceaccount:lws-system:lws-controller-manager"},
       "pod creators")
    # Scale subresources, through kubectl scale.
    s.kubectl("scale", "deployment", "web", "--replicas=1")
    s.kubectl("scale", "statefulset", "store", "--replicas=2")
    s.kubectl("scale", "leaderworkerset", "serving", "--replicas=1")
    wait_for(lambda: len(live(pods(s, "web-"))) == 1 and
             sorted(live(pods(s, "store-"))) == ["store-0", "store-1"] and
             sorted(live(pods(s, "serving-"))) ==
             ["serving-0", "serving-0-1", "serving-0-2"], 15,
             what="scaled down")
    sc = s.get_json("/apis/apps/v1" + NS + "statefulsets/store/scale")
    eq((sc["kind"], sc["spec"]["replicas"], sc["status"]["selector"]),
       ("Scale", 2, "app=store"), "statefulset scale")
    # A template change rolls the Deployment to a new hash.
    s.kubectl("set", "image", "deployment/web", "web=nginx:2")
    wait_for(lambda: (lambda ps: len(ps) == 1 and h not in list(ps)[0])(
        live(pods(s, "web-"))), 15, what="deployment rolled")
    wait_for(lambda: get(s, "apps/v1", "replicasets", "web-" + h)["spec"]
             ["replicas"] == 0, 10, what="old replicaset scaled to 0")
    # Deleting the owners deletes their pods.
    s.kubectl("delete", "deployment", "web")
    s.kubectl("delete", "statefulset", "store")
    wait_for(lambda: not pods(s, "web-") and not pods(s, "store-"), 10,
             what="pods collected")


# ---- batch frameworks ----------------------------------------------------

@case("sim-batch-samples-complete", simulate=BATCH)
def batch_samples(s):
    args = []
    for f in FILES:
        args += ["-f", sample(f)]
    s.kubectl("apply", *args)
    s.kubectl("create", "-f", sample("job.yaml"), "-f", sample("jobset.yaml"))
    # A wrapped job that fails: the AppWrapper fails and deletes it.
    s.kubectl("apply", "-f", write(s.dir, "awf.yaml", read(
        "appwrapper-pytorchjob.yaml").replace(
        "name: wrapped-pytorch\n", "name: aw-fail\n").replace(
        "        name: wrapped-pytorch-job\n",
        "        name: aw-fail-job\n        annotations:\n"
        "          cueue.dev/sim-fail: \"true\"\n")))

    def left():
        return [n for gv, pl, n, ok in DONE
                if not (lambda o: bool(o and o.get("status") and ok(o)))(
                    get(s, gv, pl, n))]
    wait_for(lambda: not left(), 40, what="every sample done")
    awf = wait_for(lambda: (lambda o: o if o and o.get("status", {}).get(
        "phase") == "Failed" else None)(get(
            s, "workload.codeflare.dev/v1beta2", "appwrappers", "aw-fail")),
        15, what="failed appwrapper")
    eq(cond(awf, "ResourcesDeployed")["status"], "False", "deployed")
    wait_for(lambda: get(s, "kubeflow.org/v1", "pytorchjobs",
                         "aw-fail-job") is None, 10,
             what="failed component deleted")
    ps = pods(s)
    # Finished objects leave no pod running; parameter servers included.
    for prefix in ("pytorch-simple-", "tf-dist-mnist-", "pi-", "spark-pi-",
                   "wrapped-pytorch-job-", "pytorch-mnist-"):
        mine = {n: p for n, p in ps.items() if n.startswith(prefix)}
        check(mine, "pods of %s" % prefix)
        eq({n: phase(p) for n, p in mine.items()},
           {n: "Succeeded" for n in mine}, "pods of " + prefix)
    eq(sorted(n for n in ps if n.startswith("tf-dist-mnist-")),
       ["tf-dist-mnist-ps-0", "tf-dist-mnist-worker-0"], "tfjob pods")
    eq(ps["pytorch-simple-master-0"]["metadata"]["labels"]
       ["training.kubeflow.org/replica-type"], "master", "replica type")
    eq(sorted(n for n in ps if n.startswith("pi-worker-")),
       ["pi-worker-0", "pi-worker-1"], "mpijob workers")
    lj = get(s, "batch/v1", "jobs", "pi-launcher")
    check(cond_true(lj, "Complete"), "launcher job complete")
    eq(lj["metadata"]["ownerReferences"][0]["kind"], "MPIJob",
       "launcher job owner")
    c = cond(get(s, "kubeflow.org/v1", "pytorchjobs", "pytorch-simple"),
             "Succeeded")
    eq(c["reason"], "PyTorchJobSucceeded", "kubeflow reason")
    eq(ps["pytorch-simple-master-0"]["spec"]["restartPolicy"], "OnFailure",
       "the replica's restartPolicy")
    # KubeRay's submitter Job ran the RayJob; its cluster went with
    # shutdownAfterJobFinishes.
    rj = get(s, "ray.io/v1", "rayjobs", "rayjob-sample")
    eq(rj["status"]["jobStatus"], "SUCCEEDED", "rayjob status")
    sub = get(s, "batch/v1", "jobs", "rayjob-sample")
    check(cond_true(sub, "Complete"), "submitter job complete")
    eq((sub["metadata"]["ownerReferences"][0]["kind"],
        sub["spec"]["template"]["spec"]["containers"][0]["name"]),
       ("RayJob", "ray-job-submitter"), "submitter job")
    wait_for(lambda: get(s, "ray.io/v1", "rayclusters",
                         rj["status"]["rayClusterName"]) is None, 10,
             what="rayjob cluster deleted")
    eq(len(live(pods(s, "raycluster-sample-"))), 3, "raycluster pods")
    eq(len(live(pods(s, "wrapped-web-"))), 2, "wrapped deployment pods")
    eq(sorted(live(pods(s, "wrapped-serving-"))),
       ["wrapped-serving-0", "wrapped-serving-0-1"], "wrapped lws pods")
    js = s.get_json("/apis/jobset.x-k8s.io/v1alpha2" + NS + "jobsets/"
                    "pytorch-mnist")
    eq(js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"],
       2, "trainer numNodes")
    sp = get(s, "sparkoperator.k8s.io/v1beta2", "sparkapplications",
             "spark-pi")
    eq(len(sp["status"]["executorState"]), 2, "executors")
    eq(ps["spark-pi-driver"]["spec"]["containers"][0]["resources"]
       ["requests"], {"cpu": "1", "memory": "512Mi"}, "driver requests")


# ---- suspend and managedBy ----------------------------------------------

def long(text):
    """A sample that runs for a minute (annotation on the object, or on
    the pod template of a TrainJob's runtime: its Jobs run the time)."""
    ann = "    cueue.dev/sim-runtime-ms: \"60000\"\n"
    if "kind: ClusterTrainingRuntime" in text:
        return text.replace("          metadata:\n            labels:\n",
                            "          metadata:\n            annotations:"
                            "\n          " + ann + "            labels:\n")
    return text.replace("  labels:\n", "  annotations:\n" + ann +
                        "  labels:\n", 1)


def read(name):
    with open(sample(name)) as f:
        return f.read()


# (file, plural, group/version, name, suspend patch, pod prefix)
SUSPEND = [
    ("pytorchjob.yaml", "pytorchjob", "pytorch-simple",
     {"spec": {"runPolicy": {"suspend": True}}}, "pytorch-simple-"),
    ("mpijob.yaml", "mpijob", "pi",
     {"spec": {"runPolicy": {"suspend": True}}}, "pi-"),
    ("raycluster.yaml", "raycluster", "raycluster-sample",
     {"spec": {"suspend": True}}, "raycluster-sample-"),
    ("rayservice.yaml", "rayservice", "rayservice-sample",
     {"spec": {"rayClusterConfig": {"suspend": True}}},
     "rayservice-sample-"),
    ("rayjob.yaml", "rayjob", "rayjob-sample", {"spec": {"suspend": True}},
     "rayjob-sample-"),
    ("appwrapper-deployment.yaml", "appwrapper", "wrapped-deployment",
     {"spec": {"suspend": True}}, "wrapped-web-"),
    ("sparkapplication.yaml", "sparkapplication", "spark-pi",
     {"spec": {"suspend": True}}, "spark-pi-"),
    ("trainjob.yaml", "trainjob", "pytorch-mnist",
     {"spec": {"suspend": True}}, "pytorch-mnist-"),
]


@case("sim-suspend-deletes-pods", simulate=BATCH)
def suspend(s):
    text = "---\n".join(long(read(f)) for f, *_ in SUSPEND)
    s.kubectl("apply", "-f", write(s.dir, "all.yaml", text))
    for _, kind, name, _, prefix in SUSPEND:
        wait_for(lambda: any(ready(p) for p in pods(s, prefix).values()),
                 20, what="%s running" % name)
    for _, kind, name, patch, _ in SUSPEND:
        s.kubectl("patch", kind, name, "--type=merge", "-p",
                  json.dumps(patch))
    for _, kind, name, _, prefix in SUSPEND:
        wait_for(lambda: not live(pods(s, prefix)), 15,
                 what="%s pods deleted" % name)
    eq(cond(get(s, "kubeflow.org/v1", "pytorchjobs", "pytorch-simple"),
            "Suspended")["reason"], "PyTorchJobSuspended", "kubeflow")
    eq(get(s, "ray.io/v1", "rayjobs", "rayjob-sample")["status"]
       ["jobDeploymentStatus"], "Suspended", "rayjob")
    eq(get(s, "ray.io/v1", "rayclusters", "raycluster-sample")["status"]
       ["state"], "suspended", "raycluster")
    eq(get(s, "workload.codeflare.dev/v1beta2", "appwrappers",
           "wrapped-deployment")["status"]["phase"], "Suspended",
       "appwrapper")
    eq(get(s, "sparkoperator.k8s.io/v1beta2", "sparkapplications",
           "spark-pi")["status"]["applicationState"]["state"], "SUSPENDED",
       "spark")
    check(cond_true(get(s, "trainer.kubeflow.org/v1alpha1", "trainjobs",
                        "pytorch-mnist"), "Suspended"), "trainjob")
    # Resuming starts them again.
    s.kubectl("patch", "pytorchjob", "pytorch-simple", "--type=merge", "-p",
              '{"spec":{"runPolicy":{"suspend":false}}}')
    wait_for(lambda: len(live(pods(s, "pytorch-simple-"))) == 2, 10,
             what="resumed pods")


MANAGED = [
    ("pytorchjob.yaml", "kubeflow.org/v1", "pytorchjobs", "pytorch-simple",
     "  runPolicy:\n    managedBy: kueue.x-k8s.io/multikueue\n"),
    ("mpijob.yaml", "kubeflow.org/v2beta1", "mpijobs", "pi",
     "  runPolicy:\n    managedBy: kueue.x-k8s.io/multikueue\n"),
    ("raycluster.yaml", "ray.io/v1", "rayclusters", "raycluster-sample",
     "  managedBy: kueue.x-k8s.io/multikueue\n"),
    ("rayjob.yaml", "ray.io/v1", "rayjobs", "rayjob-sample",
     "  managedBy: kueue.x-k8s.io/multikueue\n"),
    ("appwrapper-pytorchjob.yaml", "workload.codeflare.dev/v1beta2",
     "appwrappers", "wrapped-pytorch",
     "  managedBy: kueue.x-k8s.io/multikueue\n"),
    ("trainjob.yaml", "trainer.kubeflow.org/v1alpha1", "trainjobs",
     "pytorch-mnist", "  managedBy: kueue.x-k8s.io/multikueue\n"),
]


@case("sim-managed-by-elsewhere", simulate=BATCH)
def managed_by(s):
    docs = []
    for f, *_, extra in MANAGED:
        t = read(f)
        if "  runPolicy:\n" in t:
            t = t.replace("  runPolicy:\n", extra)
        elif "  runtimeRef:\n" in t:
            t = t.replace("  runtimeRef:\n", extra + "  runtimeRef:\n")
        else:
            t = t.replace("\nspec:\n", "\nspec:\n" + extra, 1)
        docs.append(t)
    s.kubectl("apply", "-f", write(s.dir, "m.yaml", "---\n".join(docs)))
    # A control object beside them runs to completion meanwhile.
    s.kubectl("apply", "-f", write(s.dir, "c.yaml", read(
        "xgboostjob.yaml")))
    wait_for(lambda: cond_true(get(s, "kubeflow.org/v1", "xgboostjobs",
                                   "xgboost-dist-iris"), "Succeeded"), 20,
             what="control job done")
    for f, gv, plural, name, _ in MANAGED:
        o = get(s, gv, plural, name)
        eq(o.get("status", {}), {}, "status of %s managed elsewhere" % name)
    eq(sorted(n for n in pods(s) if not n.startswith("xgboost-")), [],
       "pods of objects managed elsewhere")
    eq(s.get_json("/apis/jobset.x-k8s.io/v1alpha2" + NS + "jobsets")
       ["items"], [], "trainjob's jobset")
    # An AppWrapper never adopts (nor deletes) an object it does not own.
    s.kubectl("apply", "-f", sample("deployment.yaml"))
    s.kubectl("apply", "-f", write(s.dir, "aw.yaml", read(
        "appwrapper-deployment.yaml").replace("name: wrapped-web\n",
                                              "name: web\n", 1)))
    aw = wait_for(lambda: (lambda o: o if cond(o, "ResourcesDeployed")
                           else None)(get(s, "workload.codeflare.dev/"
                                          "v1beta2", "appwrappers",
                                          "wrapped-deployment")), 10,
                  what="appwrapper status")
    eq(cond(aw, "ResourcesDeployed")["reason"], "CreateFailed", "clash")
    s.kubectl("patch", "appwrapper", "wrapped-deployment", "--type=merge",
              "-p", '{"spec":{"suspend":true}}')
    wait_for(lambda: get(s, "workload.codeflare.dev/v1beta2", "appwrappers",
                         "wrapped-deployment")["status"]["phase"] ==
             "Suspended", 10, what="suspended")
    check(get(s, "apps/v1", "deployments", "web") is not None,
          "the Deployment it does not own stays")


# ---- admission webhooks see the simulators' creates ---------------------

class GateHook:
    """An HTTPS mutating webhook that gates every Pod, as Kueue's pod
    webhook does, or refuses it while `refuse` is set."""

    def __init__(self, d):
        mint_certs(d, "IP:127.0.0.1")
        with open(os.path.join(d, "ca.crt"), "rb") as f:
            self.ca = base64.b64encode(f.read()).decode()
        self.refuse = True
        self.seen = []
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                req = json.loads(self.rfile.read(n))["request"]
                hook.seen.append(req["userInfo"]["username"])
                resp = {"uid": req["uid"], "allowed": not hook.refuse}
                if hook.refuse:
                    resp["status"] = {"code": 403, "message": "not yet"}
                else:
                    ops = [{"op": "add", "path": "/spec/schedulingGates",
                            "value": [{"name": "example.com/admission"}]}]
                    resp["patchType"] = "JSONPatch"
                    resp["patch"] = base64.b64encode(
                        json.dumps(ops).encode()).decode()
                body = json.dumps({"apiVersion": "admission.k8s.io/v1",
                                   "kind": "AdmissionReview",
                                   "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(d, "srv.crt"),
                            os.path.join(d, "srv.key"))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket,
                                            server_side=True)
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def config(self):
        return {"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": "gate-pods"},
                "webhooks": [{
                    "name": "gate.example.com", "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "failurePolicy": "Fail",
                    "clientConfig": {
                        "url": "https://127.0.0.1:%d/gate" %
                        self.httpd.server_address[1], "caBundle": self.ca},
                    "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                               "apiVersions": ["v1"],
                               "resources": ["pods"]}]}]}


@case("sim-creates-pass-admission-webhooks", simulate="deployments")
def webhooks_see_creates(s):
    hook = GateHook(s.dir)
    try:
        code, _, body = s.raw(
            "POST", "/apis/admissionregistration.k8s.io/v1/"
            "mutatingwebhookconfigurations", hook.config())
        eq(code, 201, "webhook configuration: %r" % body)
        s.kubectl("apply", "-f", sample("deployment.yaml"))
        # Refused: no pod, and the controller keeps trying.
        wait_for(lambda: len(hook.seen) >= 2, 10, what="retried creates")
        eq(pods(s), {}, "pods while the webhook refuses")
        eq(set(hook.seen),
           {"system:serviceaccount:kube-system:replicaset-controller"},
           "who the webhook saw")
        hook.refuse = False
        gated = wait_for(lambda: (lambda ps: ps if len(ps) == 3 and all(
            cond(p, "PodScheduled") for p in ps.values()) else None)(
            pods(s, "web-")), 15, what="gated pods")
        for p in gated.values():
            eq(p["spec"]["schedulingGates"],
               [{"name": "example.com/admission"}], "gate added")
            eq((phase(p), cond(p, "PodScheduled")["reason"]),
               ("Pending", "SchedulingGated"), "waits gated")
        name = sorted(gated)[0]
        s.kubectl("patch", "pod", name, "--type=json", "-p",
                  '[{"op":"remove","path":"/spec/schedulingGates"}]')
        wait_for(lambda: ready(pods(s)[name]), 10, what="ungated pod runs")
        wait_for(lambda: get(s, "apps/v1", "deployments", "web")["status"]
                 .get("readyReplicas") == 1, 10, what="one ready")
    finally:
        hook.httpd.shutdown()


@case("sim-unknown-simulator-refused")
def unknown_simulator(s):
    r = subprocess.run([os.path.join(BIN, "cueue-apiserver"), "--listen",
                        "127.0.0.1:0", "--kubeconfig-out",
                        os.path.join(s.dir, "kc"), "--simulate",
                        "pods,rayjobs"], capture_output=True, text=True,
                       timeout=30)
    eq(r.returncode, 2, "exit code")
    check('unknown simulator "rayjobs"' in r.stderr, r.stderr)


run_cases()
