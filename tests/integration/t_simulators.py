# SPDX-License-Identifier: Apache-2.0
"""Simulator tests: cueue-apiserver --simulate jobs,jobsets stands in for
the Job and JobSet controllers (tests/apiserver/sim.c)."""
from cuetest import case, check, eq, run_cases, wait_for, write

JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js1
  namespace: default
spec:
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            annotations:
              cueue.dev/sim-runtime-ms: "300"
          spec:
            containers:
            - name: c
              image: busybox
  - name: driver
    replicas: 1
    template:
      spec:
        template:
          spec:
            containers:
            - name: c
              image: busybox
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: j1
  namespace: default
  annotations:
    cueue.dev/sim-runtime-ms: "500"
spec:
  parallelism: 3
  completions: 3
  template:
    spec:
      containers:
      - name: c
        image: busybox
"""


def jobs_of(s, js):
    code, _, body = s.raw(
        "GET", "/apis/batch/v1/namespaces/default/jobs?labelSelector="
        "jobset.sigs.k8s.io/jobset-name%3D" + js)
    eq(code, 200, "list jobs")
    return {j["metadata"]["name"]: j for j in body["items"]}


@case("sim-jobset-suspend-resume", simulate="jobs,jobsets")
def jobset_suspend_resume(s):
    p = write(s.dir, "js.yaml", JOBSET)
    s.kubectl("apply", "-f", p)
    jobs = wait_for(lambda: (lambda j: j if len(j) == 3 else None)(
        jobs_of(s, "js1")), 10, what="3 child jobs")
    eq(sorted(jobs), ["js1-driver-0", "js1-workers-0", "js1-workers-1"],
       "child job names")
    for name, j in jobs.items():
        eq(j["spec"]["suspend"], True, name + " suspended")
        refs = j["metadata"]["ownerReferences"]
        eq(len(refs), 1, "one owner")
        eq(refs[0]["kind"], "JobSet")
        eq(refs[0]["controller"], True)
        eq(j["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"], "js1")
    # No pods while suspended.
    code, _, pods = s.raw("GET", "/api/v1/namespaces/default/pods")
    eq(len(pods["items"]), 0, "pods while suspended")
    # Resume with a node selector added to the template: it is merged.
    s.kubectl("patch", "jobset", "js1", "--type=json", "-p",
              '[{"op":"replace","path":"/spec/suspend","value":false},'
              '{"op":"add","path":"/spec/replicatedJobs/0/template/spec/'
              'template/spec/nodeSelector","value":{"pool":"a"}}]')

    def resumed():
        j = jobs_of(s, "js1")
        return j if all(not x["spec"]["suspend"] for x in j.values()) \
            else None
    jobs = wait_for(resumed, 10, what="children resumed")
    eq(jobs["js1-workers-0"]["spec"]["template"]["spec"].get(
        "nodeSelector"), {"pool": "a"}, "merged nodeSelector")
    check("nodeSelector" not in jobs["js1-driver-0"]["spec"]["template"]
          ["spec"], "driver template untouched")
    wait_for(lambda: s.get_json(
        "/api/v1/namespaces/default/pods")["items"], 10, what="pods")

    def done():
        js = s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
                        "jobsets/js1")
        return js if js.get("status", {}).get("terminalState") else None
    js = wait_for(done, 15, what="jobset completed")
    eq(js["status"]["terminalState"], "Completed")
    conds = {c["type"]: c for c in js["status"]["conditions"]}
    eq(conds["Completed"]["reason"], "AllJobsCompleted")
    eq(conds["Suspended"]["status"], "False", "Suspended flipped")


@case("sim-job-completes", simulate="jobs")
def job_completes(s):
    p = write(s.dir, "job.yaml", JOB)
    s.kubectl("apply", "-f", p)

    def running():
        j = s.get_json("/apis/batch/v1/namespaces/default/jobs/j1")
        return j if j.get("status", {}).get("active") == 3 else None
    j = running() or wait_for(running, 5, what="job active")
    eq(j["status"]["ready"], 3, "ready pods")
    check("startTime" in j["status"], "startTime set")
    pods = s.get_json("/api/v1/namespaces/default/pods")["items"]
    eq(len(pods), 3, "one pod per active index")

    def complete():
        j = s.get_json("/apis/batch/v1/namespaces/default/jobs/j1")
        conds = {c["type"]: c["status"] for c in
                 j.get("status", {}).get("conditions", [])}
        return j if conds.get("Complete") == "True" else None
    j = wait_for(complete, 10, what="job complete")
    eq(j["status"]["succeeded"], 3)
    eq(j["status"]["active"], 0)


@case("sim-job-suspended-has-no-pods", simulate="jobs")
def job_suspended(s):
    # A long runtime: the Job must still be running when it is
    # suspended again, however slow kubectl is on a loaded machine.
    p = write(s.dir, "job.yaml", JOB.replace("parallelism: 3",
              "suspend: true\n  parallelism: 3").replace('"500"', '"60000"'))
    s.kubectl("apply", "-f", p)

    def suspended():
        j = s.get_json("/apis/batch/v1/namespaces/default/jobs/j1")
        conds = {c["type"]: c for c in
                 j.get("status", {}).get("conditions", [])}
        return conds.get("Suspended")
    c = wait_for(suspended, 5, what="Suspended condition")
    eq(c["status"], "True")
    eq(c["reason"], "JobSuspended")
    eq(s.get_json("/api/v1/namespaces/default/pods")["items"], [], "pods")
    s.kubectl("patch", "job", "j1", "--type=merge", "-p",
              '{"spec":{"suspend":false}}')
    wait_for(lambda: len(s.get_json("/api/v1/namespaces/default/pods")
                         ["items"]) == 3, 5, what="pods after resume")
    s.kubectl("patch", "job", "j1", "--type=merge", "-p",
              '{"spec":{"suspend":true}}')
    wait_for(lambda: s.get_json("/api/v1/namespaces/default/pods")
             ["items"] == [], 5, what="pods gone after suspend")


@case("sim-managed-by-elsewhere-left-alone", simulate="jobs,jobsets")
def managed_by_elsewhere(s):
    # As kube's Job controller and the JobSet controller: an object whose
    # spec.managedBy names another controller gets no pods, no child
    # Jobs and no status. A control Job and JobSet beside them do run,
    # so the check is not a matter of time.
    mine = JOB.replace("name: j1", "name: mine")
    other = JOB.replace("name: j1", "name: other").replace(
        "parallelism: 3", "managedBy: kueue.x-k8s.io/multikueue\n"
        "  parallelism: 3")
    dflt = JOB.replace("name: j1", "name: dflt").replace(
        "parallelism: 3", "managedBy: kubernetes.io/job-controller\n"
        "  parallelism: 3")
    js_other = JOBSET.replace("name: js1", "name: jsother").replace(
        "suspend: true", "suspend: false\n  managedBy: "
        "kueue.x-k8s.io/multikueue")
    js_mine = JOBSET.replace("name: js1", "name: jsmine").replace(
        "suspend: true", "suspend: false\n  managedBy: "
        "jobset.sigs.k8s.io/jobset-controller")
    p = write(s.dir, "all.yaml", "---".join(
        [mine, other, dflt, js_other, js_mine]))
    s.kubectl("apply", "-f", p)

    def complete(name):
        j = s.get_json("/apis/batch/v1/namespaces/default/jobs/" + name)
        return any(c["type"] == "Complete" and c["status"] == "True"
                   for c in j.get("status", {}).get("conditions", []))
    wait_for(lambda: complete("mine") and complete("dflt"), 15,
             what="control jobs complete")

    def js_done(name):
        js = s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/"
                        "default/jobsets/" + name)
        return js.get("status", {}).get("terminalState") == "Completed"
    wait_for(lambda: js_done("jsmine"), 20, what="control jobset done")
    j = s.get_json("/apis/batch/v1/namespaces/default/jobs/other")
    eq(j.get("status", {}), {}, "status of a Job managed elsewhere")
    pods = s.get_json("/api/v1/namespaces/default/pods")["items"]
    eq([p["metadata"]["name"] for p in pods
        if p["metadata"]["name"].startswith("other-")], [],
       "pods of a Job managed elsewhere")
    eq(sorted(jobs_of(s, "jsother")), [], "child jobs of a JobSet "
       "managed elsewhere")
    js = s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
                    "jobsets/jsother")
    eq(js.get("status", {}), {}, "status of a JobSet managed elsewhere")


@case("sim-jobset-failure-deletes-active-jobs", simulate="jobs,jobsets")
def jobset_failure(s):
    # One replicated Job fails fast, the other would run a minute: the
    # JobSet fails naming the first failed Job and deletes the active one
    # (and so its pods), as the JobSet controller does once finished.
    js = JOBSET.replace("suspend: true", "suspend: false").replace(
        """    template:
      spec:
        parallelism: 2""", """    template:
      metadata:
        annotations:
          cueue.dev/sim-runtime-ms: "200"
          cueue.dev/sim-fail: "true"
      spec:
        parallelism: 2""").replace(
        """  - name: driver
    replicas: 1
    template:
      spec:
        template:
          spec:""", """  - name: driver
    replicas: 1
    template:
      metadata:
        annotations:
          cueue.dev/sim-runtime-ms: "60000"
      spec:
        template:
          spec:""")
    p = write(s.dir, "js.yaml", js)
    s.kubectl("apply", "-f", p)

    def failed():
        o = s.get_json("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
                       "jobsets/js1")
        return o if o.get("status", {}).get("terminalState") else None
    o = wait_for(failed, 15, what="jobset finished")
    eq(o["status"]["terminalState"], "Failed")
    c = {x["type"]: x for x in o["status"]["conditions"]}["Failed"]
    check(c["message"].startswith("jobset failed due to one or more job "
                                  "failures (first failed job: js1-workers-"),
          c["message"])
    wait_for(lambda: "js1-driver-0" not in jobs_of(s, "js1"), 10,
             what="active driver job deleted")
    wait_for(lambda: not [p for p in s.get_json(
        "/api/v1/namespaces/default/pods")["items"]
        if p["metadata"]["name"].startswith("js1-driver-")], 10,
        what="driver pods gone")


run_cases()
