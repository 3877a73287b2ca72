# SPDX-License-Identifier: Apache-2.0
"""Kueue defaults that act on jobs and their Workloads, cueue-controller
against cueue-apiserver simulating the Job controller.

  default-wpc             WorkloadPriorityClassDefaulting (on by default):
      with a WorkloadPriorityClass named `default`, the Workload of a Job
      without the kueue.x-k8s.io/priority-class label gets that class and
      its value; a Job with the label keeps its own class
  default-wpc-gate-off    with the gate set to false, the `default` class
      is not applied: the Workload has no class and priority 0
  orphan-finished         FinishOrphanedWorkloads (on by default): the
      Workload of a deleted Job is marked Finished (reason OwnerNotFound,
      "The workload's owner no longer exists"), its finalizer dropped,
      its quota given back, and kept; objectRetentionPolicies then
      deletes it after afterFinished
  orphan-no-owner         a Workload that lost its owner references
      (the garbage collector's orphan propagation) but keeps the job-uid
      label is finished (OwnerNotFound) and let go of too
  orphan-gate-off         with the gate set to false, the Workload of a
      deleted Job is deleted (the garbage collector's part, done by
      cueue since the local server has none)"""
import os

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     queues_setup, run_cases, wait_for)
from cuetest.kobj import cond, is_true

NS = "team"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads" % NS

CONFIG = CONTROLLER_CONFIG + """manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
"""

WPCS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: default}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 5000
"""


def job(name, labels=None, runtime_ms=600000, cpu="1"):
    lab = {"kueue.x-k8s.io/queue-name": "lq"}
    lab.update(labels or {})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "labels": lab,
                         "annotations": {
                             "cueue.dev/sim-runtime-ms": str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{
                             "name": "c", "image": "busybox",
                             "resources": {"requests": {"cpu": cpu}}}],
                         "restartPolicy": "Never"}}}}


def create(s, obj):
    code, _, body = s.raw("POST", JOBS, obj)
    eq(code, 201, "create %s: %r" % (obj["metadata"]["name"], body))
    return body


def wl_of(s, name):
    for w in s.get_json(WLS)["items"]:
        for r in w["metadata"].get("ownerReferences") or []:
            if r.get("name") == name:
                return w
    return None


def running(s, name):
    code, _, j = s.raw("GET", JOBS + "/" + name)
    return code == 200 and not j["spec"].get("suspend")


def wpc_setup(s, gate):
    queues_setup(s, 4)
    s.kubectl("apply", "-f", s.file("wpc.yaml", WPCS))
    cfg = CONFIG
    if gate is not None:
        cfg += "featureGates:\n  WorkloadPriorityClassDefaulting: %s\n" % (
            "true" if gate else "false")
    return Controller(s, config=cfg)


@case("default-wpc", simulate="jobs")
def default_wpc(s):
    ctl = wpc_setup(s, None)
    create(s, job("plain"))
    create(s, job("own", labels={"kueue.x-k8s.io/priority-class": "high"}))
    wl = wait_for(lambda: wl_of(s, "plain"), 20, what="plain's Workload")
    eq(wl["spec"].get("priorityClassRef"),
       {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
        "name": "default"}, "the default class")
    eq(wl["spec"].get("priority"), 1000, "the default class's value")
    wl = wait_for(lambda: wl_of(s, "own"), 20, what="own's Workload")
    eq(wl["spec"]["priorityClassRef"]["name"], "high", "its own class")
    eq(wl["spec"].get("priority"), 5000, "its own class's value")
    ctl.stop()


@case("default-wpc-gate-off", simulate="jobs")
def default_wpc_off(s):
    ctl = wpc_setup(s, False)
    create(s, job("plain"))
    wl = wait_for(lambda: wl_of(s, "plain"), 20, what="plain's Workload")
    check(wl["spec"].get("priorityClassRef") is None,
          "no class with the gate off: %r" % wl["spec"])
    eq(wl["spec"].get("priority", 0), 0, "priority 0")
    ctl.stop()


RETAIN = """objectRetentionPolicies:
  workloads:
    afterFinished: 6s
"""


def orphan_setup(s, gate, retain=""):
    queues_setup(s, 1)
    cfg = CONFIG + retain
    if gate is not None:
        cfg += "featureGates:\n  FinishOrphanedWorkloads: %s\n" % (
            "true" if gate else "false")
    return Controller(s, config=cfg)


@case("orphan-finished", simulate="jobs")
def orphan_finished(s):
    ctl = orphan_setup(s, None, RETAIN)
    create(s, job("a"))
    create(s, job("b"))
    wait_for(lambda: running(s, "a"), 20, what="a running")
    wl = wl_of(s, "a")
    uid = wl["metadata"]["uid"]
    code, _, body = s.raw("DELETE", JOBS + "/a")
    check(code in (200, 202), "delete a: %r" % body)

    def finished():
        w = wl_of(s, "a")
        return w if w is not None and is_true(w, "Finished") and \
            not w["metadata"].get("finalizers") else None
    wl = wait_for(finished, 20, what="a's Workload Finished, no finalizer")
    eq(wl["metadata"]["uid"], uid, "the same Workload, kept")
    c = cond(wl, "Finished")
    eq(c["reason"], "OwnerNotFound", "reason")
    eq(c["message"], "The workload's owner no longer exists", "message")
    wait_for(lambda: running(s, "b"), 20, what="b runs on the freed quota")
    check(wl_of(s, "a") is not None, "kept before afterFinished")
    wait_for(lambda: wl_of(s, "a") is None, 30,
             what="retention deletes it after afterFinished")
    ctl.stop()


@case("orphan-no-owner", simulate="jobs")
def orphan_no_owner(s):
    ctl = orphan_setup(s, None)
    create(s, job("a"))
    create(s, job("b"))
    wait_for(lambda: running(s, "a"), 20, what="a running")
    wl = wl_of(s, "a")
    path = WLS + "/" + wl["metadata"]["name"]
    # What the garbage collector does before deleting an owner with
    # propagationPolicy=Orphan, then the job goes.
    code, _, body = s.raw("PATCH", path,
                          {"metadata": {"ownerReferences": None}},
                          {"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "drop ownerReferences: %r" % body)
    code, _, body = s.raw("DELETE", JOBS + "/a")
    check(code in (200, 202), "delete a: %r" % body)

    def finished():
        code, _, w = s.raw("GET", path)
        return w if code == 200 and is_true(w, "Finished") and \
            not w["metadata"].get("finalizers") else None
    w = wait_for(finished, 20, what="the orphan Finished, no finalizer")
    eq(cond(w, "Finished")["reason"], "OwnerNotFound", "reason")
    wait_for(lambda: running(s, "b"), 20, what="b runs on the freed quota")
    ctl.stop()


@case("orphan-gate-off", simulate="jobs")
def orphan_off(s):
    ctl = orphan_setup(s, False)
    create(s, job("a"))
    wait_for(lambda: running(s, "a"), 20, what="a running")
    code, _, body = s.raw("DELETE", JOBS + "/a")
    check(code in (200, 202), "delete a: %r" % body)
    wait_for(lambda: wl_of(s, "a") is None, 20, what="a's Workload deleted")
    ctl.stop()


run_cases()
