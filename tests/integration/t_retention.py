# SPDX-License-Identifier: Apache-2.0
"""objectRetentionPolicies.workloads acting as in Kueue: afterFinished
deletes a finished Workload (its job stays, no new Workload is made for
it; Normal event Deleted), afterDeactivatedByKueue deletes the job of a
Workload Kueue deactivated (maximum execution time exceeded) with
Background propagation (Normal event Deleted on the job), and a Workload
a user deactivated is kept."""
import os
import time

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

LQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""


def setup(s):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", "-", input=flavor_and_queue(10) + "---" + LQ)


def job(name, runtime_ms, labels=""):
    return """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq%s}
  annotations: {cueue.dev/sim-runtime-ms: "%d"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: "1"}}
""" % (name, labels, runtime_ms)


def workload_of(s, name):
    for w in s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/"
                        "workloads")["items"]:
        for o in w["metadata"].get("ownerReferences", []):
            if o["name"] == name:
                return w
    return None


def events(s, kind, name, reason):
    out = []
    for e in s.get_json("/api/v1/namespaces/default/events")["items"]:
        io = e.get("involvedObject", {})
        if (io.get("kind"), io.get("name"), e.get("reason")) == (
                kind, name, reason):
            out.append(e)
    return out


def job_exists(s, name):
    code, _, _ = s.raw("GET", "/apis/batch/v1/namespaces/default/jobs/" +
                       name)
    return code == 200


@case("after-finished-deletes-the-workload", simulate="jobs")
def after_finished(s):
    """afterFinished 2s: the Workload of a Job that finished is deleted
    about 2s later, with the event; the Job stays and gets no new
    Workload."""
    setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + """objectRetentionPolicies:
  workloads:
    afterFinished: 2s
""")
    s.kubectl("apply", "-f", "-", input=job("quick", 200))

    def finished():
        w = workload_of(s, "quick")
        for c in (w or {}).get("status", {}).get("conditions", []):
            if c["type"] == "Finished" and c["status"] == "True":
                return w
        return None
    w = wait_for(finished, 30, what="quick finished")
    name = w["metadata"]["name"]
    t0 = time.monotonic()
    wait_for(lambda: workload_of(s, "quick") is None, 30,
             what="finished Workload deleted")
    check(time.monotonic() - t0 > 0.5, "deleted only after the retention")
    ev = wait_for(lambda: events(s, "Workload", name, "Deleted"), 10,
                  what="Deleted event")
    eq(ev[0]["type"], "Normal")
    eq(ev[0]["message"], "Deleted finished workload due to elapsed "
       "retention")
    check(job_exists(s, "quick"), "the job stays")
    time.sleep(2)
    eq(workload_of(s, "quick"), None, "no new Workload for a finished job")
    ctl.stop()


@case("after-deactivated-by-kueue-deletes-the-job", simulate="jobs")
def after_deactivated(s):
    """afterDeactivatedByKueue 1s: a Job whose Workload exceeds its maximum
    execution time (1s) is deactivated by cueue, then deleted 1s later
    (event on the Job); a Workload a user deactivated is kept."""
    setup(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG + """objectRetentionPolicies:
  workloads:
    afterDeactivatedByKueue: 1s
""")
    s.kubectl("apply", "-f", "-", input=job(
        "slow", 600000, ", kueue.x-k8s.io/max-exec-time-seconds: '1'"))
    s.kubectl("apply", "-f", "-", input=job("kept", 600000))
    w = wait_for(lambda: workload_of(s, "kept"), 30, what="kept's Workload")
    s.kubectl("patch", "workloads.kueue.x-k8s.io", "-n", "default",
              w["metadata"]["name"], "--type=merge", "-p",
              '{"spec":{"active":false}}')
    wait_for(lambda: not job_exists(s, "slow"), 45,
             what="the deactivated Workload's job deleted")
    ev = wait_for(lambda: events(s, "Job", "slow", "Deleted"), 10,
                  what="Deleted event on the job")
    eq(ev[0]["message"], "Deleted job: deactivation retention period "
       "expired")
    time.sleep(2)
    check(job_exists(s, "kept"), "a user's deactivation is kept")
    check(workload_of(s, "kept") is not None, "its Workload too")
    ctl.stop()


if __name__ == "__main__":
    from cuetest import run_cases
    run_cases()
