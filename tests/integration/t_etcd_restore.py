# SPDX-License-Identifier: Apache-2.0
"""An etcd restore: the API server's resourceVersion goes backwards
(issue 32).

- watch-from-the-future: cueue-apiserver refuses a watch from a
  resourceVersion it has not reached as kube-apiserver's watch cache
  does: HTTP 200, then (after waiting up to 3 s for the revision) one
  ERROR event, a Status 504 Timeout "Timeout: Too large resource
  version: X, current: Y" with details.causes[0].reason
  ResourceVersionTooLarge and retryAfterSeconds 1, and the stream ends.
  POST /__test/restore sets the revision back (422 unless below the
  current one).
- jobs-created-after-a-restore: the controller admits a Job; the server
  is restored to a revision below the one its informers watch from; Jobs
  created afterwards get their Workloads and are admitted (their
  informers relist instead of waiting for a revision that would come
  only after the gap). The time from the first Job's creation to its
  Workload is printed (README, Reliability); the deadline asserted is a
  generous one."""
import json
import time

from cuetest import (CONTROLLER_CONFIG, Controller, RawStream, case, check,
                     eq, queued_job, queues_setup, run_cases, wait_for)

JOBS = "/apis/batch/v1/namespaces/team/jobs"
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"


def current_rv(s):
    return s.get_json("/__test/state")["resourceVersion"]


@case("watch-from-the-future", tls=True)
def watch_future(s):
    s.namespace("team")
    rv = current_rv(s)
    ahead = rv + 1000
    t0 = time.monotonic()
    w = RawStream(s, "/api/v1/namespaces/team/configmaps?watch=1&"
                  "resourceVersion=%d" % ahead)
    eq(w.status, 200, "a watch's errors come as events")
    wait_for(lambda: w.lines or w.eof, 20, what="the ERROR event")
    waited = time.monotonic() - t0
    ev = json.loads(w.lines[0][1])
    eq(ev["type"], "ERROR", "event type")
    st = ev["object"]
    eq((st["kind"], st["status"], st["code"], st["reason"]),
       ("Status", "Failure", 504, "Timeout"), "the Status")
    eq(st["message"], "Timeout: Too large resource version: %d, current: %d"
       % (ahead, current_rv(s)), "message")
    eq(st["details"], {"causes": [{"reason": "ResourceVersionTooLarge",
                                   "message": "Too large resource version"}],
                       "retryAfterSeconds": 1}, "details")
    check(waited >= 2.5, "the server waited for the revision first "
          "(%.1f s)" % waited)
    wait_for(lambda: w.eof or w.clean_end, 10, what="the stream ends")
    # A watch from the current revision is served as before.
    code, _, body = s.raw("POST", "/__test/restore",
                          {"resourceVersion": rv + 5})
    eq(code, 422, "restore to a revision not below the current: %r" % body)
    code, _, body = s.raw("POST", "/__test/restore",
                          {"resourceVersion": rv - 1})
    eq((code, body.get("resourceVersion")), (200, rv - 1), "restore")
    eq(current_rv(s), rv - 1, "the revision went back")


def workload_of(s, name):
    for w in s.get_json(WLS)["items"]:
        for o in w["metadata"].get("ownerReferences", []):
            if o.get("kind") == "Job" and o.get("name") == name:
                return w
    return None


@case("jobs-created-after-a-restore", tls=True)
def after_restore(s):
    queues_setup(s, 100)
    backup = current_rv(s)
    ctl = Controller(s, config=CONTROLLER_CONFIG)
    eq(s.raw("POST", JOBS, queued_job("team", "before"))[0], 201, "Job before")
    wait_for(lambda: not s.get_json(JOBS + "/before")["spec"].get(
        "suspend"), 30, what="Job before admitted")
    # Revisions well past the backup's, seen by every informer.
    for i in range(30):
        s.raw("POST", "/api/v1/namespaces/team/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "churn-%d" % i}})
    time.sleep(1)
    code, _, body = s.raw("POST", "/__test/restore",
                          {"resourceVersion": backup})
    eq(code, 200, "restore: %r" % body)
    t0 = time.monotonic()
    names = ["gap-%d" % i for i in range(3)]
    for n in names:
        eq(s.raw("POST", JOBS, queued_job("team", n))[0], 201, "Job " + n)
    wait_for(lambda: all(workload_of(s, n) is not None for n in names), 60,
             what="Workloads for the Jobs created after the restore")
    took = time.monotonic() - t0
    wait_for(lambda: all(not s.get_json(JOBS + "/" + n)["spec"].get(
        "suspend") for n in names), 60, what="the Jobs admitted")
    print("    Workloads for the Jobs created after the restore %.2f s "
          "after their creation" % took, flush=True)
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
