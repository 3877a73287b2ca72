# SPDX-License-Identifier: Apache-2.0
"""Bad resource requests on a Job are refused or said, never silent
(issue 32).

- negative-refused: cueue-apiserver refuses a Job whose pod template asks
  a negative cpu, as kube-apiserver's pod validation does (422, the field
  and "must be greater than or equal to 0").
- too-large-said-on-the-job: resource.Quantity accepts "1e1000" and
  "8Ei" (kube keeps the first exactly and caps the second at 2^63-1), so
  such Jobs reach the controller; cueue cannot account them (int64
  milli-units) and builds no Workload for them: it says so on the Job
  with a Warning event ErrWorkloadCompose naming the field and the value
  (as Kueue does when it cannot compose a Workload), keeps the Job
  suspended, stays up and admits an ordinary Job created afterwards.
- invalid-workload-said: a Workload written with a negative request
  where no webhook runs (Kueue's webhook would refuse it) is not queued;
  a Warning event Pending on the Workload names the field and says "must
  be greater than or equal to 0"."""
from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     queued_job, queues_setup, run_cases, wait_for)

JOBS = "/apis/batch/v1/namespaces/team/jobs"
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"
EVENTS = "/api/v1/namespaces/team/events"


def job(name, res):
    j = queued_job("team", name)
    j["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": res}
    return j


def job_events(s, name):
    return [e for e in s.get_json(EVENTS)["items"]
            if e["involvedObject"].get("kind") == "Job"
            and e["involvedObject"].get("name") == name]


def workloads_of(s, name):
    return [w for w in s.get_json(WLS)["items"]
            if any(o.get("name") == name
                   for o in w["metadata"].get("ownerReferences", []))]


@case("negative-refused")
def negative_refused(s):
    queues_setup(s, 100)
    code, _, body = s.raw("POST", JOBS, job("neg", {"cpu": "-3"}))
    eq(code, 422, "a negative request: %r" % body)
    check(body["message"].endswith(
        'spec.template.spec.containers[0].resources.requests[cpu]: '
        'Invalid value: "-3": must be greater than or equal to 0'),
        body["message"])
    eq(body["details"]["causes"][0]["field"],
       "spec.template.spec.containers[0].resources.requests[cpu]", "field")


@case("too-large-said-on-the-job", tls=True)
def too_large(s):
    queues_setup(s, 100)
    ctl = Controller(s, config=CONTROLLER_CONFIG)
    cases = (("huge", {"cpu": "1e1000"}, "requests.cpu", "1e1000"),
             ("ei", {"memory": "8Ei"}, "requests.memory", "8Ei"))
    for name, res, _, _ in cases:
        code, _, body = s.raw("POST", JOBS, job(name, res))
        eq(code, 201, "Job %s (a valid quantity): %r" % (name, body))
    for name, _, field, value in cases:
        evs = wait_for(lambda: [e for e in job_events(s, name)
                                if e["reason"] == "ErrWorkloadCompose"],
                       30, what="ErrWorkloadCompose on Job " + name)
        ev = evs[0]
        print("    Job %s: %s %s (count %s): %s" % (
            name, ev["type"], ev["reason"], ev.get("count"), ev["message"]),
            flush=True)
        eq(ev["type"], "Warning", "event type")
        check(field in ev["message"] and '"%s"' % value in ev["message"],
              "the event names the field and the value: " + ev["message"])
    eq(s.raw("POST", JOBS, queued_job("team", "ok"))[0], 201, "Job ok")
    wait_for(lambda: not s.get_json(JOBS + "/ok")["spec"].get("suspend"),
             30, what="Job ok admitted")
    for name, _, _, _ in cases:
        check(s.get_json(JOBS + "/" + name)["spec"]["suspend"],
              "Job %s stays suspended" % name)
        eq(workloads_of(s, name), [], "no Workload for " + name)
    check(ctl.alive(), "controller alive")
    ctl.stop()


@case("invalid-workload-said", tls=True)
def invalid_workload(s):
    queues_setup(s, 100)
    ctl = Controller(s, config=CONTROLLER_CONFIG)
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
          "metadata": {"name": "wl-neg", "namespace": "team"},
          "spec": {"queueName": "lq", "podSets": [{
              "name": "main", "count": 1, "template": {"spec": {
                  "restartPolicy": "Never", "containers": [{
                      "name": "c", "image": "busybox", "resources": {
                          "requests": {"cpu": "-3"}}}]}}}]}}
    code, _, body = s.raw("POST", WLS, wl)
    eq(code, 201, "Workload wl-neg (no webhook here): %r" % body)

    def said():
        return [e for e in s.get_json(EVENTS)["items"]
                if e["involvedObject"].get("kind") == "Workload"
                and e["involvedObject"].get("name") == "wl-neg"]
    ev = wait_for(said, 30, what="an event on Workload wl-neg")[0]
    print("    Workload wl-neg: %s %s: %s" % (ev["type"], ev["reason"],
                                             ev["message"]), flush=True)
    eq((ev["type"], ev["reason"]), ("Warning", "Pending"), "event")
    check(ev["message"] ==
          'spec.podSets[0].template.spec.containers[0].resources.'
          'requests[cpu]: Invalid value: "-3": must be greater than or '
          'equal to 0', ev["message"])
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
