# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: the ProvisioningRequest admission check end to end,
with cueue-apiserver playing cluster-autoscaler (--simulate provisioning)
and the Job simulator.

An AdmissionCheck of controller kueue.x-k8s.io/provisioning-request whose
ProvisioningRequestConfig exists is marked Active. A Workload that
reserves quota in a ClusterQueue with that check gets a
ProvisioningRequest (<workload>-<check>-<attempt>) and its PodTemplates,
owned by the Workload; Provisioned makes the check Ready and the job
starts with the consume-provisioning-request annotations. Failed requests
are retried (Retry, eviction with backoff, a new request per attempt)
until retryStrategy.backoffLimitCount, then the check is Rejected and the
Workload deactivated. CapacityRevoked after the start deactivates it too.
A controller restart while the check is pending neither admits early nor
loses the Workload nor creates a second request. Kueue's provisioning
example (written here in the same shape) applies and behaves as
documented."""
import os
import signal

from cuetest import CONTROLLER_CONFIG, Controller, case, check, eq, \
    free_port, run_cases, wait_for
from cuetest.kobj import cond, is_true
from cuetest.metrics import metric_total

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
DATA = os.path.join(ROOT, "tests", "integration", "data")
PR_CRD = os.path.join(ROOT, "tests", "data", "crds")
NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
PRS = "/apis/autoscaling.x-k8s.io/v1/namespaces/%s/provisioningrequests"
PTS = "/api/v1/namespaces/%s/podtemplates"
MERGE = {"Content-Type": "application/merge-patch+json"}
CHECK = "prov"
CONSUME = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS = "autoscaling.x-k8s.io/provisioning-class-name"
SIM = "jobs,provisioning"

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def post(s, path, obj):
    obj.setdefault("apiVersion", "kueue.x-k8s.io/v1beta2")
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))


def install_crds(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("apply", "-f", PR_CRD)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")


def setup(s, params=None, retry=None):
    """cq (check CHECK) behind lq in NS; the AdmissionCheck CHECK of the
    provisioning controller with config cfg (params, retryStrategy)."""
    install_crds(s)
    spec = {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
            "parameters": dict(params or {})}
    if retry is not None:
        spec["retryStrategy"] = retry
    post(s, KQ + "/provisioningrequestconfigs", {
        "kind": "ProvisioningRequestConfig", "metadata": {"name": "cfg"},
        "spec": spec})
    post(s, KQ + "/admissionchecks", {
        "kind": "AdmissionCheck", "metadata": {"name": CHECK},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                 "parameters": {"apiGroup": "kueue.x-k8s.io",
                                "kind": "ProvisioningRequestConfig",
                                "name": "cfg"}}})
    post(s, KQ + "/resourceflavors", {"kind": "ResourceFlavor",
                                      "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/clusterqueues", {
        "kind": "ClusterQueue", "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {},
                 "resourceGroups": [{"coveredResources": ["cpu"],
                                     "flavors": [{"name": "default-flavor",
                                                  "resources": [{
                                                      "name": "cpu",
                                                      "nominalQuota": 4}]}]}],
                 "admissionChecksStrategy": {
                     "admissionChecks": [{"name": CHECK}]}}})
    s.namespace(NS)
    post(s, KQ + "/namespaces/%s/localqueues" % NS, {
        "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": NS},
        "spec": {"clusterQueue": "cq"}})


def check_active(s, name=CHECK):
    wait_for(lambda: is_true(s.get_json(KQ + "/admissionchecks/" + name),
                             "Active"), 20,
             what="AdmissionCheck %s Active" % name)


def create_job(s, name, runtime_ms=600000):
    code, _, body = s.raw("POST", JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                     "annotations": {
                         "cueue.dev/sim-runtime-ms": str(runtime_ms)}},
        "spec": {"parallelism": 2, "completions": 2, "suspend": True,
                 "template": {"spec": {
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {
                                         "cpu": "1"}}}],
                     "restartPolicy": "Never"}}}})
    eq(code, 201, "create %s: %r" % (name, body))


def wl_of(s, job, ns=NS):
    for w in s.get_json(KQ + "/namespaces/%s/workloads" % ns)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == job:
            return w
    return None


def job(s, name):
    return s.get_json(JOBS + "/" + name)


def check_state(w):
    for c in (w or {}).get("status", {}).get("admissionChecks") or []:
        if c["name"] == CHECK:
            return c
    return {}


def prs(s, ns=NS):
    return {p["metadata"]["name"]: p
            for p in s.get_json(PRS % ns)["items"]}


def events(s, name, reason, ns=NS):
    return [e for e in s.get_json("/api/v1/namespaces/%s/events" %
                                  ns)["items"]
            if e["involvedObject"].get("name") == name and
            e.get("reason") == reason]


def started(s, name, ns=NS):
    def ok():
        w = wl_of(s, name, ns)
        j = s.get_json("/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, name))
        return (w, j) if is_true(w, "Admitted") and \
            j["spec"].get("suspend") is False else None
    return wait_for(ok, 20, what="%s admitted and started" % name)


@case("provisioned-admits-with-consume-annotations", simulate=SIM)
def provisioned(s):
    setup(s, params={"cueue.dev/sim-provision-ms": "700"})
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  localQueueMetrics:\n    enable: true' % port))
    check_active(s)
    # The first create of a request is refused: Kueue's FailedCreate
    # Warning, and the create is retried.
    s.faults([{"method": "POST", "code": 403, "count": 1,
               "pathPrefix": PRS % NS}])
    create_job(s, "a", runtime_ms=1500)
    # Quota reserved, the request created, the check Pending, the job
    # suspended.
    w = wait_for(lambda: (lambda w: w if is_true(w, "QuotaReserved") and
                          check_state(w).get("state") == "Pending"
                          else None)(wl_of(s, "a")), 20,
                 what="a reserved, its check Pending")
    name = w["metadata"]["name"]
    prname = "%s-%s-1" % (name, CHECK)
    pr = wait_for(lambda: prs(s).get(prname), 20,
                  what="ProvisioningRequest %s" % prname)
    eq(job(s, "a")["spec"].get("suspend"), True, "suspended while pending")
    check(not is_true(wl_of(s, "a"), "Admitted"), "not Admitted yet")
    owner = pr["metadata"]["ownerReferences"][0]
    eq((owner["kind"], owner["name"], owner.get("controller")),
       ("Workload", name, True), "request owned by the Workload")
    eq(pr["spec"]["provisioningClassName"],
       "check-capacity.autoscaling.x-k8s.io", "class from the config")
    eq(pr["spec"]["parameters"].get("cueue.dev/sim-provision-ms"), "700",
       "parameters from the config")
    eq(pr["metadata"]["labels"].get("kueue.x-k8s.io/managed"), "true",
       "managed label")
    eq(pr["spec"]["podSets"][0]["count"], 2, "pod set count")
    ptname = pr["spec"]["podSets"][0]["podTemplateRef"]["name"]
    eq(ptname, "ppt-%s-main" % prname, "template name")
    # The template is handed over to the request once it is cached.
    pt = wait_for(lambda: (lambda t: t if t["metadata"][
        "ownerReferences"][0]["kind"] == "ProvisioningRequest" else None)(
        s.get_json(PTS % NS + "/" + ptname)), 20,
        what="template owned by the request")
    eq(pt["template"]["spec"]["containers"][0]["resources"]["requests"],
       {"cpu": "1"}, "template from the pod set")
    # Provisioned: Ready with the consume annotations; the job starts
    # with them.
    w, j = started(s, "a")
    c = check_state(w)
    eq(c.get("state"), "Ready", "check Ready")
    eq(c.get("message"), "Capacity is provisioned", "message from the PR")
    ann = j["spec"]["template"]["metadata"].get("annotations") or {}
    eq(ann.get(CONSUME), prname, "consume annotation on the job's pods")
    eq(ann.get(CLASS), "check-capacity.autoscaling.x-k8s.io",
       "class annotation on the job's pods")
    wait_for(lambda: events(s, name, "ProvisioningRequestCreated") and
             events(s, name, "AdmissionCheckUpdated"), 20,
             what="the controller's events")
    failed = events(s, name, "FailedCreate")
    eq([(e["type"], e["message"]) for e in failed],
       [("Warning", 'Error creating ProvisioningRequest "%s": Internal '
         'error occurred: injected fault' % prname)], "FailedCreate event")
    created = events(s, name, "ProvisioningRequestCreated")
    eq([(e["message"], e.get("count", 1)) for e in created],
       [('Created ProvisioningRequest: "%s"' % prname, 1)],
       "one created event, for the create that succeeded")
    # Kueue's provisioning controller reports them.
    eq({e["reportingComponent"] for e in failed + created +
        events(s, name, "AdmissionCheckUpdated")},
       {"kueue-provisioning-request-controller"}, "reporting controller")
    check(any(e["message"] == "Admission check %s updated state from "
              "Pending to Ready with message: Capacity is provisioned"
              % CHECK for e in events(s, name, "AdmissionCheckUpdated")),
          "AdmissionCheckUpdated event")
    eq(metric_total(port, "kueue_admission_checks_wait_time_seconds_count",
              cluster_queue="cq"), 1.0, "admission checks wait time")
    eq(metric_total(port,
              "kueue_local_queue_admission_checks_wait_time_seconds_count",
              name="lq", namespace=NS), 1.0,
       "admission checks wait time of the LocalQueue")
    # Finished: its request is deleted.
    wait_for(lambda: is_true(wl_of(s, "a"), "Finished"), 20,
             what="a finished")
    wait_for(lambda: prname not in prs(s), 20,
             what="the finished Workload's request deleted")
    ctl.stop()


@case("failed-retries-then-rejected", simulate=SIM)
def failed(s):
    setup(s, params={"cueue.dev/sim-provision-ms": "100",
                     "simProvisionResult": "Failed"},
          retry={"backoffLimitCount": 1, "backoffBaseSeconds": 1,
                 "backoffMaxSeconds": 5})
    ctl = Controller(s, config=CONFIG)
    check_active(s)
    create_job(s, "a")

    def deactivated():
        w = wl_of(s, "a")
        return w if w is not None and \
            w["spec"].get("active") is False and \
            not is_true(w, "QuotaReserved") else None
    w = wait_for(deactivated, 30, what="a deactivated after the retries")
    name = w["metadata"]["name"]
    # The deactivation's eviction resets the Rejected check (Kueue's
    # resetChecksOnEviction).
    eq(check_state(w).get("message"),
       "Reset to Pending after eviction. Previously: Rejected",
       "check reset by the deactivation")
    ev = cond(w, "Evicted") or {}
    check('AdmissionCheck in Rejected state: "%s" (Simulated '
          'provisioning failure)' % CHECK in (ev.get("message") or ""),
          "Evicted message names the rejection: %r" % ev)
    # One request per attempt, announced as Kueue's recorder does: the
    # second create joins the first one's series (client-go's key has
    # no note; the Event keeps the first note, count 2).
    created = events(s, name, "ProvisioningRequestCreated")
    eq([(e["message"], (e.get("series") or {}).get("count")) for e in
        created], [('Created ProvisioningRequest: "%s-%s-1"' % (name,
                                                                CHECK), 2)],
       "one request per attempt")
    # The retry and the rejection: one series too (the rejection itself
    # is in the Evicted condition checked above).
    upd = events(s, name, "AdmissionCheckUpdated")
    eq(len(upd), 1, "one AdmissionCheckUpdated series: %r" % upd)
    check((upd[0].get("series") or {}).get("count") == 2,
          "the check's later updates counted in it: %r" % upd[0])
    eq(job(s, "a")["spec"].get("suspend"), True, "job suspended")
    # The retry waited for its backoff: requeued after BackoffFinished.
    rq = cond(w, "Requeued") or {}
    check(rq.get("reason") in ("BackoffFinished", "Deactivated",
                               "DeactivatedDueToAdmissionCheck"),
          "Requeued: %r" % rq)
    ctl.stop()


@case("retried-then-provisioned-then-capacity-revoked", simulate=SIM)
def revoked(s):
    """The first attempt fails, the retry (no backoff) is provisioned and
    the job starts; capacity revoked after the start deactivates it."""
    setup(s, params={"cueue.dev/sim-provision-ms": "100",
                     "simFailAttempts": "1"},
          retry={"backoffLimitCount": 3, "backoffBaseSeconds": 0})
    ctl = Controller(s, config=CONFIG)
    check_active(s)
    create_job(s, "a")
    w, j = started(s, "a")
    name = w["metadata"]["name"]
    prname = "%s-%s-2" % (name, CHECK)
    eq(check_state(w).get("retryCount"), 1, "admitted after one retry")
    eq((j["spec"]["template"]["metadata"].get("annotations") or {}).get(
        CONSUME), prname, "the second attempt is consumed")
    eq(sorted(prs(s)), [prname], "the failed attempt's request deleted")
    code, _, body = s.raw("PATCH", PRS % NS + "/" + prname, {
        "metadata": {"annotations": {
            "cueue.dev/sim-capacity-revoked": "true"}}}, headers=MERGE)
    eq(code, 200, "annotate %s: %r" % (prname, body))

    # Deactivation (spec.active) and the Evicted condition are two
    # writes, as in Kueue: wait for both.
    def deactivated():
        w = wl_of(s, "a")
        return w if w["spec"].get("active") is False and \
            job(s, "a")["spec"].get("suspend") is True and \
            (cond(w, "Evicted") or {}).get("status") == "True" else None
    w = wait_for(deactivated, 20, what="a deactivated, its job suspended")
    ev = cond(w, "Evicted") or {}
    check('"%s" (Simulated capacity revocation)' % CHECK in
          (ev.get("message") or ""), "Evicted message: %r" % ev)
    wait_for(lambda: prname not in prs(s), 20,
             what="the evicted Workload's request deleted")
    ctl.stop()


@case("restart-while-provisioning", simulate=SIM)
def restart(s):
    setup(s, params={"cueue.dev/sim-provision-ms": "3000"})
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=store)
    check_active(s)
    create_job(s, "a")
    w = wait_for(lambda: (lambda w: w if w and check_state(w).get(
        "state") == "Pending" and prs(s) else None)(wl_of(s, "a")), 20,
        what="a pending on its request")
    uid = w["metadata"]["uid"]
    ctl.stop(signal.SIGKILL)
    ctl = Controller(s, config=CONFIG, store=store)
    # Not admitted before the request is provisioned, same Workload, one
    # request.
    w, j = started(s, "a")
    eq(w["metadata"]["uid"], uid, "same Workload")
    eq(sorted(prs(s)), ["%s-%s-1" % (w["metadata"]["name"], CHECK)],
       "one request")
    pr = prs(s)["%s-%s-1" % (w["metadata"]["name"], CHECK)]
    check(is_true(pr, "Provisioned"), "admitted only once provisioned")
    ad = cond(w, "Admitted")
    check(ad["lastTransitionTime"] >= cond(pr, "Provisioned")[
        "lastTransitionTime"], "Admitted after Provisioned")
    ctl.stop()


@case("provisioned-capacity-becomes-nodes",
      simulate="jobs,provisioning,scheduler")
def nodes(s):
    """With the scheduler stand-in, the provisioned capacity is one Node
    per pod, and the job's pods run there."""
    setup(s, params={"cueue.dev/sim-provision-ms": "100"})
    ctl = Controller(s, config=CONFIG)
    check_active(s)
    create_job(s, "a")
    w, _ = started(s, "a")
    prname = "%s-%s-1" % (w["metadata"]["name"], CHECK)
    made = [n["metadata"]["name"] for n in s.get_json(
        "/api/v1/nodes?labelSelector=autoscaling.x-k8s.io/"
        "provisioning-request%3D" + prname)["items"]]
    eq(sorted(made), [prname + "-0-0", prname + "-0-1"],
       "one Node per provisioned pod")

    def bound():
        pods = s.get_json("/api/v1/namespaces/%s/pods" % NS)["items"]
        on = sorted(p["spec"].get("nodeName") or "" for p in pods)
        return on if on == sorted(made) else None
    wait_for(bound, 20, what="the job's pods on the provisioned Nodes")
    ctl.stop()


@case("kueue-provisioning-example", simulate=SIM)
def example(s):
    """Kueue's site/static/examples/provisioning setup and job, written
    in the same shape: the GPU job gets a request with the job's
    provreq.kueue.x-k8s.io/ parameter and starts once provisioned; a job
    without GPUs needs no request (managedResources) and starts at
    once. The ProvisioningRequest CRD is installed after the controller
    started (cluster-autoscaler installed later): it is taken up."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    ctl = Controller(s, config=CONFIG)
    s.kubectl("apply", "-f", PR_CRD)
    s.kubectl("apply", "-f", os.path.join(DATA, "provisioning-setup.yaml"))
    check_active(s, "sample-prov")
    out = s.kubectl("create", "-f",
                    os.path.join(DATA, "provisioning-job.yaml"), "-o",
                    "name").stdout.strip()
    name = out.split("/")[-1]
    w = wait_for(lambda: (lambda w: w if w and check_state_of(
        w, "sample-prov") else None)(wl_of(s, name, "default")), 20,
        what="the sample job's Workload with its check")
    prname = "%s-sample-prov-1" % w["metadata"]["name"]
    pr = wait_for(lambda: prs(s, "default").get(prname), 20,
                  what="the sample job's request")
    eq(pr["spec"]["parameters"].get("maxRunDurationSeconds"), "600",
       "the job's provreq.kueue.x-k8s.io/ annotation as a parameter")
    eq(pr["spec"]["provisioningClassName"],
       "check-capacity.autoscaling.x-k8s.io", "class")
    w, j = started(s, name, "default")
    eq((j["spec"]["template"]["metadata"].get("annotations") or {}).get(
        CONSUME), prname, "consume annotation")
    # No GPU: no request needed.
    s.kubectl("create", "-f", os.path.join(DATA, "provisioning-job-cpu.yaml"))
    w, _ = started(s, "cpu-only", "default")
    eq(check_state_of(w, "sample-prov").get("message"),
       "the provisioning request is not needed", "no request needed")
    check(not any(n.startswith(w["metadata"]["name"])
                  for n in prs(s, "default")), "no request for cpu-only")
    ctl.stop()


def check_state_of(w, name):
    for c in (w or {}).get("status", {}).get("admissionChecks") or []:
        if c["name"] == name:
            return c
    return {}


if __name__ == "__main__":
    run_cases()
