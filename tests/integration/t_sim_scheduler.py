# SPDX-License-Identifier: Apache-2.0
"""Scheduler and kubelet stand-ins: cueue-apiserver --simulate
jobs,scheduler binds pending Pods to v1 Nodes that fit, marks the rest
Unschedulable with kube-scheduler's message, starts bound Pods after
cueue.dev/sim-ready-ms, and (tests/apiserver/sched.c, sim.c) lets a Job's
runtime start only once all its Pods are Ready. Without Nodes nothing
changes."""
import json

from cuetest import case, check, eq, run_cases, wait_for

SIM = "jobs,scheduler"
PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"


def node(s, name, alloc, labels=None, taints=None, unschedulable=False):
    body = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {},
            "status": {"allocatable": alloc, "capacity": alloc}}
    if taints:
        body["spec"]["taints"] = taints
    if unschedulable:
        body["spec"]["unschedulable"] = True
    code, _, out = s.raw("POST", "/api/v1/nodes", body)
    eq(code, 201, "create node %s: %r" % (name, out))


def pod(s, name, cpu="100m", extra=None, spec=None, annotations=None):
    res = {"requests": {"cpu": cpu}}
    res["requests"].update(extra or {})
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": annotations or {}},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": res}]}}
    body["spec"].update(spec or {})
    code, _, out = s.raw("POST", PODS, body)
    eq(code, 201, "create pod %s: %r" % (name, out))


def get_pod(s, name):
    return s.get_json(PODS + "/" + name)


def cond(obj, typ):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == typ:
            return c
    return None


def bound(s, name, timeout=10):
    """Wait until the pod is bound; its node."""
    p = wait_for(lambda: (lambda p: p if p["spec"].get("nodeName") else
                          None)(get_pod(s, name)), timeout,
                 what="pod %s bound" % name)
    c = cond(p, "PodScheduled")
    check(c is not None and c["status"] == "True",
          "PodScheduled=True on %s: %r" % (name, c))
    return p["spec"]["nodeName"]


def unschedulable(s, name, reason="Unschedulable", timeout=10):
    """Wait for PodScheduled=False with reason; the condition."""
    def f():
        p = get_pod(s, name)
        c = cond(p, "PodScheduled")
        return c if c and c["status"] == "False" and \
            c.get("reason") == reason else None
    c = wait_for(f, timeout, what="pod %s %s" % (name, reason))
    check(not get_pod(s, name)["spec"].get("nodeName"),
          "%s not bound" % name)
    return c


def delete_pod(s, name):
    code, _, out = s.raw("DELETE", PODS + "/" + name)
    check(code in (200, 202), "delete %s: %d %r" % (name, code, out))


def job(s, name, parallelism, cpu="1", runtime=60000, ready_ms=None,
        spec=None, suspend=False):
    tmpl_md = {}
    if ready_ms is not None:
        tmpl_md["annotations"] = {"cueue.dev/sim-ready-ms": str(ready_ms)}
    body = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {
                             "cueue.dev/sim-runtime-ms": str(runtime)}},
            "spec": {"parallelism": parallelism,
                     "completions": parallelism, "suspend": suspend,
                     "template": {"metadata": tmpl_md, "spec": {
                         "containers": [{
                             "name": "c", "image": "busybox",
                             "resources": {"requests": {"cpu": cpu}}}]}}}}
    body["spec"]["template"]["spec"].update(spec or {})
    code, _, out = s.raw("POST", JOBS, body)
    eq(code, 201, "create job %s: %r" % (name, out))
    return out


def job_pods(s, name):
    return s.get_json(PODS + "?labelSelector=batch.kubernetes.io%2Fjob-name%3D"
                      + name)["items"]


def get_job(s, name):
    return s.get_json(JOBS + "/" + name)


def complete(j):
    return any(c["type"] == "Complete" and c["status"] == "True"
               for c in j.get("status", {}).get("conditions", []))


@case("sched-no-nodes-as-before", simulate=SIM)
def no_nodes(s):
    j = job(s, "j1", 3, runtime=300)
    # Created without a selector: the API server generates one.
    uid = j["metadata"]["uid"]
    eq(j["spec"]["selector"], {"matchLabels": {
        "batch.kubernetes.io/controller-uid": uid}}, "generated selector")
    labels = j["spec"]["template"]["metadata"]["labels"]
    for k, v in (("batch.kubernetes.io/controller-uid", uid),
                 ("controller-uid", uid),
                 ("batch.kubernetes.io/job-name", "j1"),
                 ("job-name", "j1")):
        eq(labels.get(k), v, "template label " + k)
    j = wait_for(lambda: (lambda j: j if j.get("status", {}).get("active")
                          else None)(get_job(s, "j1")), 5, what="active")
    # As before the scheduler existed: all ready at once, no nodes.
    eq(j["status"]["active"], 3, "active")
    eq(j["status"]["ready"], 3, "ready with active")
    pods = job_pods(s, "j1")
    eq(len(pods), 3, "pods")
    for p in pods:
        eq(p["status"]["phase"], "Running", "phase")
        check(not p["spec"].get("nodeName"), "no node")
        eq(p["metadata"]["ownerReferences"][0]["uid"], uid, "owner")
        eq(p["metadata"]["ownerReferences"][0]["controller"], True)
    wait_for(lambda: complete(get_job(s, "j1")), 10, what="complete")


@case("sched-resources-and-freeing", simulate=SIM)
def resources(s):
    node(s, "n1", {"cpu": "2", "memory": "4Gi", "pods": "110"})
    node(s, "n2", {"cpu": "1", "memory": "1Gi", "pods": "110"})
    pod(s, "a", cpu="1500m")
    pod(s, "b", cpu="1")
    eq(bound(s, "a"), "n1", "a on n1 (first fit)")
    eq(bound(s, "b"), "n2", "b: n1 has only 500m left")
    pod(s, "c", cpu="600m")
    c = unschedulable(s, "c")
    eq(c["message"], "0/2 nodes are available: 2 Insufficient cpu. "
       "preemption: 0/2 nodes are available: 2 No preemption victims "
       "found for incoming pod.", "message")
    # Memory counts too (limits stand in for missing requests).
    pod(s, "m", cpu="100m", extra={"memory": "3Gi"})
    eq(bound(s, "m"), "n1", "memory fits n1 only")
    pod(s, "m2", cpu="100m", extra={"memory": "2Gi"})
    eq(unschedulable(s, "m2")["message"],
       # n2 is short of both: one node counts under two reasons.
       "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient "
       "memory. preemption: 0/2 "
       "nodes are available: 2 No preemption victims found for incoming "
       "pod.", "memory message")
    # Deleting a bound pod frees its node: c is retried and bound.
    delete_pod(s, "b")
    eq(bound(s, "c"), "n2", "c after b is gone")
    # The scheduler's Events, as kubectl describe shows them.
    evs = sorted(s.get_json("/api/v1/namespaces/default/events?"
                            "fieldSelector=involvedObject.name%3Dc")["items"],
                 key=lambda e: e["reason"])
    eq([(e["type"], e["reason"], e["source"]["component"]) for e in evs],
       [("Warning", "FailedScheduling", "default-scheduler"),
        ("Normal", "Scheduled", "default-scheduler")], "events of c")
    eq(evs[1]["message"], "Successfully assigned default/c to n2",
       "Scheduled message")
    eq(evs[0]["message"], c["message"], "FailedScheduling message")
    delete_pod(s, "m2")


@case("sched-extended-and-pod-count", simulate=SIM)
def extended(s):
    node(s, "g1", {"cpu": "8", "nvidia.com/gpu": "2", "pods": "2"})
    node(s, "g2", {"cpu": "8", "pods": "110"})
    pod(s, "p1", extra={"nvidia.com/gpu": "2"})
    eq(bound(s, "p1"), "g1", "gpus on g1")
    pod(s, "p2", extra={"nvidia.com/gpu": "1"})
    eq(unschedulable(s, "p2")["message"],
       "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
       "preemption: 0/2 nodes are available: 2 No preemption victims "
       "found for incoming pod.", "gpu message")
    # p3 waits for a label no node has yet; labelling g1 is a Node
    # change, so it is retried and lands there.
    pod(s, "p3", spec={"nodeSelector": {"kubernetes.io/hostname": "g1"}})
    unschedulable(s, "p3")
    code, _, _ = s.raw("PATCH", "/api/v1/nodes/g1", json.dumps(
        {"metadata": {"labels": {"kubernetes.io/hostname": "g1"}}}),
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "label g1")
    eq(bound(s, "p3"), "g1", "p3 after label")
    pod(s, "p4", spec={"nodeSelector": {"kubernetes.io/hostname": "g1"}})
    eq(unschedulable(s, "p4")["message"],
       "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't match "
       "Pod's node affinity/selector. preemption: 0/2 nodes are "
       "available: 1 No preemption victims found for incoming pod, 1 "
       "Preemption is not helpful for scheduling.", "pod count message")


@case("sched-message-format", simulate=SIM)
def message(s):
    node(s, "a1", {"cpu": "1", "pods": "110"})
    node(s, "a2", {"cpu": "1", "pods": "110"})
    node(s, "t1", {"cpu": "8", "pods": "110"},
         taints=[{"key": "key", "value": "value", "effect": "NoSchedule"}])
    pod(s, "big", cpu="2")
    eq(unschedulable(s, "big")["message"],
       "0/3 nodes are available: 1 node(s) had untolerated taint "
       "{key: value}, 2 Insufficient cpu. preemption: 0/3 nodes are "
       "available: 1 Preemption is not helpful for scheduling, 2 No "
       "preemption victims found for incoming pod.", "kube's message")
    # More than one kind of unresolvable node, and preemptionPolicy Never.
    node(s, "u1", {"cpu": "8", "pods": "110"}, unschedulable=True)
    pod(s, "never", cpu="2", spec={"preemptionPolicy": "Never",
                                   "nodeSelector": {"zone": "x"}})
    eq(unschedulable(s, "never")["message"],
       "0/4 nodes are available: 1 node(s) had untolerated taint "
       "{key: value}, 1 node(s) were unschedulable, 2 node(s) didn't "
       "match Pod's node affinity/selector. preemption: not eligible due "
       "to preemptionPolicy=Never.", "unresolvable reasons")
    # A Node change is a reason to retry: big fits once a1 grows.
    code, _, _ = s.raw("PATCH", "/api/v1/nodes/a1/status", json.dumps(
        {"status": {"allocatable": {"cpu": "4", "pods": "110"}}}),
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "grow a1")
    eq(bound(s, "big"), "a1", "big after a1 grew")


@case("sched-selector-and-affinity", simulate=SIM)
def affinity(s):
    alloc = {"cpu": "8", "pods": "110"}
    node(s, "n-a", alloc, labels={"zone": "a", "gpu": "yes"})
    node(s, "n-b", alloc, labels={"zone": "b"})
    node(s, "n-c", alloc, labels={"zone": "c", "rank": "7"})

    def req(*exprs):
        return {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}}}}
    pod(s, "sel", spec={"nodeSelector": {"zone": "b"}})
    pod(s, "in", spec=req({"key": "zone", "operator": "In",
                           "values": ["c", "x"]}))
    pod(s, "notin", spec=req({"key": "zone", "operator": "NotIn",
                              "values": ["a", "c"]}))
    pod(s, "exists", spec=req({"key": "rank", "operator": "Exists"}))
    pod(s, "dne", spec=req({"key": "zone", "operator": "In",
                            "values": ["a", "c"]},
                           {"key": "gpu", "operator": "DoesNotExist"}))
    pod(s, "gt", spec=req({"key": "rank", "operator": "Gt",
                           "values": ["5"]}))
    pod(s, "field", spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In",
                                       "values": ["nowhere"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In",
                                  "values": ["n-b"]}]}]}}}})
    eq(bound(s, "sel"), "n-b", "nodeSelector")
    eq(bound(s, "in"), "n-c", "In")
    eq(bound(s, "notin"), "n-b", "NotIn")
    eq(bound(s, "exists"), "n-c", "Exists")
    eq(bound(s, "dne"), "n-c", "DoesNotExist (n-a has gpu)")
    eq(bound(s, "gt"), "n-c", "Gt")
    eq(bound(s, "field"), "n-b", "second term, matchFields")
    pod(s, "none", spec=req({"key": "zone", "operator": "In",
                             "values": ["z"]}))
    eq(unschedulable(s, "none")["message"],
       "0/3 nodes are available: 3 node(s) didn't match Pod's node "
       "affinity/selector. preemption: 0/3 nodes are available: 3 "
       "Preemption is not helpful for scheduling.", "no match")


@case("sched-taints-and-tolerations", simulate=SIM)
def taints(s):
    alloc = {"cpu": "8", "pods": "110"}
    node(s, "ns", alloc, taints=[{"key": "k", "value": "v",
                                  "effect": "NoSchedule"}])
    node(s, "ne", alloc, taints=[{"key": "gpu", "effect": "NoExecute"}])
    node(s, "pref", alloc, taints=[{"key": "p", "value": "q",
                                    "effect": "PreferNoSchedule"}])
    node(s, "zz", alloc, unschedulable=True)
    # PreferNoSchedule does not filter: "pref" takes an untolerating pod.
    pod(s, "plain")
    eq(bound(s, "plain"), "pref", "PreferNoSchedule ignored")
    code, _, _ = s.raw("DELETE", "/api/v1/nodes/pref")
    eq(code, 200, "delete pref")
    pod(s, "eq", spec={"tolerations": [{"key": "k", "operator": "Equal",
                                        "value": "v",
                                        "effect": "NoSchedule"}]})
    eq(bound(s, "eq"), "ns", "Equal toleration")
    pod(s, "wrongval", spec={"tolerations": [{"key": "k", "value": "w"}]})
    eq(unschedulable(s, "wrongval")["message"],
       "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: }, "
       "1 node(s) had untolerated taint {k: v}, 1 node(s) were "
       "unschedulable. preemption: 0/3 nodes are available: 3 Preemption "
       "is not helpful for scheduling.", "untolerated taints")
    pod(s, "ex", spec={"tolerations": [{"key": "gpu",
                                        "operator": "Exists"}]})
    eq(bound(s, "ex"), "ne", "Exists toleration of NoExecute")
    pod(s, "cordon", spec={"tolerations": [{
        "key": "node.kubernetes.io/unschedulable", "operator": "Exists",
        "effect": "NoSchedule"}]})
    eq(bound(s, "cordon"), "zz", "tolerating pod on the cordoned node")


@case("sched-gates-priority-nominated", simulate=SIM)
def gates_priority(s):
    node(s, "n1", {"cpu": "1", "pods": "110"})
    node(s, "n2", {"cpu": "1", "pods": "110"})
    pod(s, "gated", spec={"schedulingGates": [{"name": "example.com/g"}]})
    c = unschedulable(s, "gated", reason="SchedulingGated")
    eq(c["message"], "Scheduling is blocked due to non-empty scheduling "
       "gates", "gated message")
    out = s.kubectl("get", "pod", "gated").stdout
    check("SchedulingGated" in out, "STATUS column: %s" % out)
    # Nominated: n2 is tried first though n1 (first in order) fits too.
    code, _, body = s.raw(
        "PATCH", PODS + "/gated/status",
        json.dumps({"status": {"nominatedNodeName": "n2"}}),
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "nominate: %r" % body)
    code, _, _ = s.raw("PATCH", PODS + "/gated", json.dumps(
        {"spec": {"schedulingGates": None}}),
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "ungate")
    eq(bound(s, "gated"), "n2", "nominated node first")
    # Fill n1; then a low-priority pod waits before a high one.
    pod(s, "blocker", cpu="1")
    eq(bound(s, "blocker"), "n1")
    pod(s, "low", cpu="1", spec={"priority": 1})
    unschedulable(s, "low")
    pod(s, "high", cpu="1", spec={"priority": 100})
    unschedulable(s, "high")
    delete_pod(s, "blocker")
    eq(bound(s, "high"), "n1", "higher priority first")
    c = cond(get_pod(s, "low"), "PodScheduled")
    eq((c["status"], c["reason"]), ("False", "Unschedulable"),
       "low still waits")


@case("sched-job-readiness-and-status", simulate=SIM)
def job_readiness(s):
    node(s, "n1", {"cpu": "2", "pods": "110"}, labels={"pool": "a"})
    node(s, "n2", {"cpu": "1", "pods": "110"}, labels={"pool": "b"})
    on_a = {"nodeSelector": {"pool": "a"}}
    # Readiness delay: bound pods stay ContainerCreating, the Job counts
    # them active but not ready, and its runtime waits for all.
    job(s, "slow", 2, cpu="1", runtime=300, ready_ms=1500, spec=on_a)

    def state():
        j = get_job(s, "slow")
        pods = job_pods(s, "slow")
        return j, pods
    j, pods = wait_for(lambda: (lambda jp: jp if len(jp[1]) == 2 and all(
        p["spec"].get("nodeName") for p in jp[1]) and
        jp[0].get("status", {}).get("active") == 2 else None)(state()),
        10, what="pods bound")
    eq(j["status"]["ready"], 0, "not ready during the delay")
    for p in pods:
        eq(p["status"]["phase"], "Pending", "phase before ready")
        eq(cond(p, "Ready")["status"], "False", "Ready False")
        eq(p["status"]["containerStatuses"][0]["state"]["waiting"]
           ["reason"], "ContainerCreating", "waiting")
    check(not complete(j), "not complete before ready")
    j = wait_for(lambda: (lambda j: j if j.get("status", {}).get("ready") == 2
                          else None)(get_job(s, "slow")), 10, what="ready")
    eq(j["status"]["active"], 2, "active")
    check(not complete(j), "runtime counts from Ready, not from binding")
    for p in job_pods(s, "slow"):
        eq(p["status"]["phase"], "Running", "running")
        eq(cond(p, "ContainersReady")["status"], "True", "ContainersReady")
    j = wait_for(lambda: (lambda j: j if complete(j) else None)(
        get_job(s, "slow")), 10, what="complete")
    eq(j["status"]["succeeded"], 2)
    # Completed pods free the node; a Job that cannot fit never
    # completes, while one created after it that fits does.
    job(s, "huge", 3, cpu="1", runtime=100, spec=on_a)
    wait_for(lambda: get_job(s, "huge").get("status", {}).get("ready") == 2, 10,
             what="huge: two ready")
    job(s, "fits", 1, cpu="1", runtime=300,
        spec={"nodeSelector": {"pool": "b"}})
    wait_for(lambda: complete(get_job(s, "fits")), 10, what="fits done")
    h = get_job(s, "huge")
    check(not complete(h), "huge never completes")
    eq(h["status"]["active"], 3, "huge active")
    eq(h["status"]["ready"], 2, "huge ready")
    waiting = [p for p in job_pods(s, "huge") if not p["spec"].get(
        "nodeName")]
    eq(len(waiting), 1, "one pod left over")
    eq(cond(waiting[0], "PodScheduled")["message"],
       "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't "
       "match Pod's node affinity/selector. preemption: 0/2 nodes are "
       "available: 1 No preemption victims found for incoming pod, 1 "
       "Preemption is not helpful for scheduling.",
       "left-over pod's message")
    # Suspending deletes the pods and frees the node for another Job.
    job(s, "next", 2, cpu="1", runtime=60000, spec=on_a)
    wait_for(lambda: len(job_pods(s, "next")) == 2, 5, what="next pods")
    check(all(not p["spec"].get("nodeName") for p in job_pods(s, "next")),
          "next waits while huge holds the node")
    s.kubectl("patch", "job", "huge", "--type=merge", "-p",
              '{"spec":{"suspend":true}}')
    wait_for(lambda: job_pods(s, "huge") == [], 5, what="huge pods gone")
    wait_for(lambda: get_job(s, "next").get("status", {}).get("ready") == 2, 10,
             what="next ready after suspend")


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  namespace: default
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      metadata:
        annotations:
          cueue.dev/sim-runtime-ms: "600"
      spec:
        template:
          spec:
            nodeSelector: {role: leader}
            containers:
            - {name: c, image: busybox, resources: {requests: {cpu: "1"}}}
  - name: workers
    replicas: 1
    template:
      metadata:
        annotations:
          cueue.dev/sim-runtime-ms: "100"
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            nodeSelector: {role: worker}
            containers:
            - {name: c, image: busybox, resources: {requests: {cpu: 1500m}}}
"""


@case("sched-jobset-leader-fits-workers-not", simulate="jobs,jobsets,scheduler")
def jobset(s):
    node(s, "lead", {"cpu": "1", "pods": "110"}, labels={"role": "leader"})
    node(s, "work", {"cpu": "2", "pods": "110"}, labels={"role": "worker"})
    s.kubectl("apply", "-f", s.file("js.yaml", JOBSET))
    wait_for(lambda: get_job(s, "js-leader-0").get("status", {}).get(
        "ready") == 1 if len(job_pods(s, "js-leader-0")) else False, 10,
        what="leader ready")
    w = wait_for(lambda: (lambda j: j if j.get("status", {}).get("ready")
                          == 1 else None)(get_job(s, "js-workers-0")), 10,
                 what="one worker ready")
    eq(w["status"]["active"], 2, "workers active")
    eq(bound(s, job_pods(s, "js-leader-0")[0]["metadata"]["name"]), "lead",
       "leader on its node")
    left = [p for p in job_pods(s, "js-workers-0")
            if not p["spec"].get("nodeName")]
    eq(len(left), 1, "one worker left over")
    eq(unschedulable(s, left[0]["metadata"]["name"])["message"],
       "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't "
       "match Pod's node affinity/selector. preemption: 0/2 nodes are "
       "available: 1 No preemption victims found for incoming pod, 1 "
       "Preemption is not helpful for scheduling.", "worker's message")
    # The leader finishes its runtime; the workers, with a shorter one,
    # do not (they never all run), nor does the JobSet.
    wait_for(lambda: complete(get_job(s, "js-leader-0")), 10,
             what="leader complete")
    js = s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
                    "jobsets/js")
    check("terminalState" not in js.get("status", {}),
          "JobSet not finished: %r" % js.get("status"))
    # A child Job counts as ready only with all its pods ready (or
    # succeeded): the workers Job, one pod short, does not.
    rjs = {r["name"]: r for r in js["status"]["replicatedJobsStatus"]}
    eq((rjs["workers"]["ready"], rjs["workers"]["active"]), (0, 1),
       "workers: not ready, active")
    eq(rjs["leader"]["succeeded"], 1, "leader succeeded")
    check(not complete(get_job(s, "js-workers-0")), "workers not complete")


@case("sched-kubectl-columns", simulate=SIM)
def columns(s):
    node(s, "n1", {"cpu": "4", "pods": "110"},
         labels={"node-role.kubernetes.io/worker": ""})
    node(s, "n2", {"cpu": "4", "pods": "110"}, unschedulable=True)
    job(s, "j1", 2, cpu="1")
    job(s, "j2", 1, cpu="1")
    wait_for(lambda: get_job(s, "j1").get("status", {}).get("ready") == 2, 10,
             what="j1 ready")
    wait_for(lambda: get_job(s, "j2").get("status", {}).get("ready") == 1, 10,
             what="j2 ready")
    out = s.kubectl("get", "nodes").stdout.splitlines()
    eq(out[0].split(), ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
       "node columns")
    eq(out[1].split()[:3], ["n1", "Ready", "worker"], "n1 row")
    eq(out[2].split()[:3], ["n2", "Ready,SchedulingDisabled", "<none>"],
       "n2 row")
    out = s.kubectl("get", "nodes", "--field-selector",
                    "spec.unschedulable=false").stdout.splitlines()
    eq([line.split()[0] for line in out[1:]], ["n1"], "schedulable nodes")
    out = s.kubectl("get", "pods").stdout.splitlines()
    eq(out[0].split(), ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
       "pod columns")
    eq(len(out), 4, "three pods")
    for line in out[1:]:
        eq(line.split()[1:4], ["1/1", "Running", "0"], "pod row")
    out = s.kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    hdr = out[0].split()
    check(hdr[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and
          "IP" in hdr and "NODE" in hdr, "wide columns: %r" % hdr)
    check(all(" n1 " in line for line in out[1:]), "NODE column: %r" % out)
    out = s.kubectl("get", "pods", "-l",
                    "batch.kubernetes.io/job-name=j1").stdout.splitlines()
    eq(len(out), 3, "get pods -l job-name: %r" % out)
    check(all(line.startswith("j1-") for line in out[1:]), "only j1's")
    uid = get_job(s, "j2")["metadata"]["uid"]
    out = s.kubectl("get", "pods", "-l", "controller-uid=" + uid
                    ).stdout.splitlines()
    eq(len(out), 2, "get pods -l controller-uid")
    check(out[1].startswith("j2-"), "j2's pod")
    # kubectl logs job/x follows the Job's selector to one of its pods.
    out = s.kubectl("logs", "job/j2").stdout
    check(out.startswith("simulated container c of pod default/j2-") and
          out.rstrip().endswith(" on node n1"), "logs job/j2: %r" % out)
    out = s.kubectl("logs", "job/j1").stdout
    check(out.startswith("simulated container c of pod default/j1-"),
          "logs job/j1: %r" % out)
    out = s.kubectl("get", "jobs").stdout.splitlines()
    eq(out[0].split(), ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
       "job columns")
    eq(out[1].split()[:3], ["j1", "Running", "0/2"], "j1 row")
    out = s.kubectl("get", "events").stdout.splitlines()
    eq(out[0].split(), ["LAST", "SEEN", "TYPE", "REASON", "OBJECT",
                        "MESSAGE"], "event columns")
    rows = [line.split(None, 4) for line in out[1:]]
    check(any(r[1:3] == ["Normal", "Scheduled"] and
              r[3].startswith("pod/j2-") and
              r[4] == "Successfully assigned default/%s to n1" % r[3][4:]
              for r in rows if len(r) == 5), "Scheduled event: %r" % out)
    out = s.kubectl("get", "namespaces").stdout.splitlines()
    eq(out[0].split(), ["NAME", "STATUS", "AGE"], "namespace columns")
    check(any(line.split()[:2] == ["default", "Active"] for line in out),
          "default Active")


run_cases()
