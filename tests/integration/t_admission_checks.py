# SPDX-License-Identifier: Apache-2.0
"""cueue-controller: admission checks end to end with the Job simulator
(--simulate jobs) and a manual check driven by the test: the test plays
the check's external controller and sets its state by patching the
Workload's status, as Kueue's admission-check controllers do.

A ClusterQueue whose admissionChecksStrategy names a check reserves
quota and lists the check Pending; the Workload is not Admitted
(Admitted=False, UnsatisfiedAdmissionChecks) and its job stays
suspended. Ready admits it and the job starts; Retry evicts it (reason
AdmissionCheck), releases the quota and requeues it with the check reset
to Pending; Rejected deactivates it. A restart of the controller while
the check is Pending neither admits it early nor loses it."""
import os
import signal

from cuetest import CONTROLLER_CONFIG, Controller, case, check, eq, \
    free_port, run_cases, wait_for
from cuetest.kobj import cond, is_true
from cuetest.metrics import metric_total

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
MERGE = {"Content-Type": "application/merge-patch+json"}
CHECK = "manual-check"

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def post(s, path, obj):
    obj.setdefault("apiVersion", "kueue.x-k8s.io/v1beta2")
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))


def cluster_queue(name, checks, cpu=2):
    spec = {"namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu"],
                                "flavors": [{"name": "default-flavor",
                                             "resources": [{
                                                 "name": "cpu",
                                                 "nominalQuota": cpu}]}]}]}
    if checks is not None:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"kind": "ClusterQueue", "metadata": {"name": name},
            "spec": spec}


def admission_check(s, name, active=True):
    """An AdmissionCheck of an external controller (the test), its Active
    condition set as that controller would."""
    post(s, KQ + "/admissionchecks", {
        "kind": "AdmissionCheck", "metadata": {"name": name},
        "spec": {"controllerName": "example.com/manual"}})
    if active is not None:
        set_active(s, name, active)


def set_active(s, name, active):
    path = KQ + "/admissionchecks/%s/status" % name
    code, _, body = s.raw("PATCH", path, {"status": {"conditions": [{
        "type": "Active", "status": "True" if active else "False",
        "reason": "Active" if active else "Inactive", "message": "by test",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}, headers=MERGE)
    eq(code, 200, "PATCH %s: %r" % (path, body))


def setup(s, checks=({"name": CHECK},), make_check=True):
    """cq (with checks) behind LocalQueue lq; cq-free (no checks) behind
    LocalQueue lq-free; the AdmissionCheck CHECK, Active."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    if make_check:
        admission_check(s, CHECK)
    post(s, KQ + "/resourceflavors", {"kind": "ResourceFlavor",
                                      "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/clusterqueues", cluster_queue("cq", list(checks)))
    post(s, KQ + "/clusterqueues", cluster_queue("cq-free", None))
    s.namespace(NS)
    for lq, cq in (("lq", "cq"), ("lq-free", "cq-free")):
        post(s, KQ + "/namespaces/%s/localqueues" % NS, {
            "kind": "LocalQueue", "metadata": {"name": lq, "namespace": NS},
            "spec": {"clusterQueue": cq}})


def create_job(s, name, queue="lq"):
    code, _, body = s.raw("POST", JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": queue},
                     "annotations": {"cueue.dev/sim-runtime-ms": "600000"}},
        "spec": {"parallelism": 1, "suspend": True,
                 "template": {"spec": {
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {
                                         "cpu": "1"}}}],
                     "restartPolicy": "Never"}}}})
    eq(code, 201, "create %s: %r" % (name, body))


def wl_of(s, job):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == job:
            return w
    return None


def job(s, name):
    return s.get_json(JOBS + "/" + name)


def checks_of(w):
    return [(c["name"], c["state"])
            for c in (w or {}).get("status", {}).get("admissionChecks") or []]


def waiting_on_checks(s, name, states=None):
    """The Workload of job name holds quota, lists the checks Pending
    (or states) and is not Admitted, with Kueue's reason and message."""
    want = states or [(CHECK, "Pending")]

    def ok():
        w = wl_of(s, name)
        if not is_true(w, "QuotaReserved") or checks_of(w) != want:
            return None
        ad = cond(w, "Admitted") or {}
        if ad.get("status") != "False":
            return None
        return w
    w = wait_for(ok, 20, what="%s waiting on its checks" % name)
    ad = cond(w, "Admitted")
    eq(ad.get("reason"), "UnsatisfiedAdmissionChecks", "Admitted reason")
    eq(ad.get("message"), "The workload has not all checks ready",
       "Admitted message")
    eq(job(s, name)["spec"].get("suspend"), True,
       "%s suspended while its checks are not Ready" % name)
    return w


UPDATES = [{"name": "main",
            "labels": {"example.com/provisioned": "yes"},
            "annotations": {"example.com/booking": "b-1"},
            "nodeSelector": {"example.com/pool": "p1"},
            "tolerations": [{"key": "example.com/pool", "operator": "Equal",
                             "value": "p1", "effect": "NoSchedule"}]}]


def set_check(s, w, state, message="", updates=None):
    path = WLS + "/" + w["metadata"]["name"] + "/status"
    cur = w["status"]["admissionChecks"]
    new = [dict(c, state=state, message=message,
                lastTransitionTime=c["lastTransitionTime"])
           if c["name"] == CHECK else c for c in cur]
    for c in new:
        if c["name"] == CHECK and updates is not None:
            c["podSetUpdates"] = updates
    code, _, body = s.raw("PATCH", path, {"status": {"admissionChecks": new}},
                          headers=MERGE)
    eq(code, 200, "PATCH %s: %r" % (path, body))


def started(s, name):
    def ok():
        w = wl_of(s, name)
        j = job(s, name)
        return w if is_true(w, "Admitted") and \
            j["spec"].get("suspend") is False else None
    return wait_for(ok, 20, what="%s admitted and started" % name)


@case("pending-blocks-ready-admits", simulate="jobs")
def pending_then_ready(s):
    setup(s)
    port = free_port()
    ctl = Controller(s, config=CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % port))
    create_job(s, "a")
    w = waiting_on_checks(s, "a")
    eq(cond(w, "QuotaReserved").get("reason"), "QuotaReserved",
       "QuotaReserved reason")
    # A job in a queue without checks is admitted meanwhile: the
    # controller is not stuck, and "a" is still waiting after that.
    create_job(s, "free", queue="lq-free")
    started(s, "free")
    waiting_on_checks(s, "a")
    set_check(s, wl_of(s, "a"), "Ready", updates=UPDATES)
    w = started(s, "a")
    eq(cond(w, "Admitted").get("reason"), "Admitted", "Admitted reason")
    eq(checks_of(w), [(CHECK, "Ready")], "checks after admission")
    # The check's podSetUpdates are in the started job's pod template.
    tpl = job(s, "a")["spec"]["template"]
    eq(tpl["metadata"]["labels"].get("example.com/provisioned"), "yes",
       "label from the check")
    eq(tpl["metadata"]["annotations"].get("example.com/booking"), "b-1",
       "annotation from the check")
    eq(tpl["spec"]["nodeSelector"].get("example.com/pool"), "p1",
       "nodeSelector from the check")
    check(UPDATES[0]["tolerations"][0] in tpl["spec"]["tolerations"],
          "toleration from the check: %r" % tpl["spec"].get("tolerations"))
    # Events: QuotaReserved at the reservation; one Admitted, Kueue's,
    # once the checks are Ready (none with the reservation).
    name = w["metadata"]["name"]

    def events(reason):
        return [e for e in s.get_json("/api/v1/namespaces/%s/events" %
                                      NS)["items"]
                if e["involvedObject"].get("name") == name and
                e.get("reason") == reason]
    wait_for(lambda: events("Admitted") and events("QuotaReserved"), 20,
             what="the Workload's events")
    adm = events("Admitted")
    eq(len(adm), 1, "Admitted events: %r" % adm)
    # Metrics: admitted once, the time waited on checks observed once
    # (the reservation alone counts as no admission).
    eq(metric_total(port, "kueue_admission_checks_wait_time_seconds_count",
              cluster_queue="cq"), 1.0, "admission checks wait time")
    eq(metric_total(port, "kueue_admitted_workloads_total", cluster_queue="cq"),
       1.0, "admitted workloads in cq")
    check(adm[0]["message"].startswith(
        "Admitted by ClusterQueue cq, wait time since reservation was "),
        "Admitted message: %r" % adm[0]["message"])
    # Kueue's Workload controller sends this one (the scheduler, the
    # QuotaReserved).
    eq((adm[0]["reportingComponent"],
        events("QuotaReserved")[0]["reportingComponent"]),
       ("kueue-workload-controller", "kueue-admission"),
       "reporting controllers")
    ctl.stop()


@case("retry-evicts-and-requeues", simulate="jobs")
def retry(s):
    setup(s)
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a")
    set_check(s, waiting_on_checks(s, "a"), "Ready", updates=UPDATES)
    started(s, "a")
    eq(job(s, "a")["spec"]["template"]["spec"].get("nodeSelector"),
       {"example.com/pool": "p1"}, "started with the check's nodeSelector")
    set_check(s, wl_of(s, "a"), "Retry", "capacity revoked")

    msg = ('Evicted due to AdmissionCheck in Retry state: "%s" '
           '(capacity revoked)' % CHECK)

    def evicted():
        # Evicted now, or already re-admitted ("Previously: ..."): the
        # simulator stops the job at once, so both are quick.
        ev = cond(wl_of(s, "a"), "Evicted") or {}
        return (ev.get("status") == "True" and
                ev.get("reason") == "AdmissionCheck" and
                ev.get("message") == msg) or \
            (ev.get("status") == "False" and
             ev.get("message") == "Previously: " + msg)
    wait_for(evicted, 20, what="a evicted by its check")
    # Requeued: quota reserved again, the check reset to Pending, the job
    # suspended again, its template restored, until the check is Ready.
    w = waiting_on_checks(s, "a")
    tpl = job(s, "a")["spec"]["template"]
    check(not tpl["spec"].get("nodeSelector") and
          not tpl["spec"].get("tolerations") and
          "example.com/booking" not in
          (tpl.get("metadata", {}).get("annotations") or {}) and
          "example.com/provisioned" not in
          (tpl.get("metadata", {}).get("labels") or {}),
          "template restored after the eviction: %r" % tpl)
    check(cond(w, "Evicted").get("status") == "False",
          "Evicted reset by the new reservation")
    wait_for(lambda: ((cond(wl_of(s, "a"), "Requeued") or {}).get("status"),
                      (cond(wl_of(s, "a"), "Requeued") or {}).get("reason"))
             == ("True", "BackoffFinished"), 20,
             what="Requeued=True (BackoffFinished)")
    set_check(s, w, "Ready")
    started(s, "a")
    ctl.stop()


@case("rejected-deactivates", simulate="jobs")
def rejected(s):
    setup(s)
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a")
    set_check(s, waiting_on_checks(s, "a"), "Rejected", "no capacity")

    def deactivated():
        w = wl_of(s, "a")
        if w is None or w["spec"].get("active") is not False:
            return None
        if is_true(w, "QuotaReserved"):
            return None
        return w
    w = wait_for(deactivated, 20, what="a deactivated, its quota released")
    ev = cond(w, "Evicted") or {}
    eq(ev.get("status"), "True", "Evicted")
    check("AdmissionCheck" in (ev.get("reason") or ""),
          "Evicted reason names the check: %r" % ev.get("reason"))
    check('AdmissionCheck in Rejected state: "%s" (no capacity)' % CHECK
          in (ev.get("message") or ""), "Evicted message: %r" % ev)
    eq(job(s, "a")["spec"].get("suspend"), True, "job suspended")
    ctl.stop()


@case("per-flavor-checks", simulate="jobs")
def per_flavor(s):
    """A check on another flavor does not apply: admitted at once."""
    setup(s, checks=({"name": CHECK, "onFlavors": ["other-flavor"]},))
    ctl = Controller(s, config=CONFIG)
    create_job(s, "a")
    w = started(s, "a")
    eq(checks_of(w), [], "no check applies to default-flavor")
    ctl.stop()


@case("restart-while-pending", simulate="jobs")
def restart(s):
    setup(s)
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=store)
    create_job(s, "a")
    w = waiting_on_checks(s, "a")
    uid = w["metadata"]["uid"]
    ctl.stop(signal.SIGKILL)
    ctl = Controller(s, config=CONFIG, store=store)
    # The restarted controller has done its work once it admits a job of
    # the other queue; "a" still waits, same Workload.
    create_job(s, "free", queue="lq-free")
    started(s, "free")
    w = waiting_on_checks(s, "a")
    eq(w["metadata"]["uid"], uid, "same Workload")
    set_check(s, w, "Ready")
    started(s, "a")
    ctl.stop()


@case("ready-while-the-controller-is-down", simulate="jobs")
def ready_while_down(s):
    """The check becomes Ready while the controller is stopped: the
    restarted controller admits the Workload it reserved quota for and
    starts its job."""
    setup(s)
    store = os.path.join(s.dir, "ledger.db")
    ctl = Controller(s, config=CONFIG, store=store)
    create_job(s, "a")
    w = waiting_on_checks(s, "a")
    uid = w["metadata"]["uid"]
    ctl.stop(signal.SIGKILL)
    set_check(s, w, "Ready", updates=UPDATES)
    ctl = Controller(s, config=CONFIG, store=store)
    w = started(s, "a")
    eq(w["metadata"]["uid"], uid, "same Workload")
    eq(job(s, "a")["spec"]["template"]["spec"].get("nodeSelector"),
       {"example.com/pool": "p1"}, "started with the check's nodeSelector")
    ctl.stop()


def cq_active(s, name):
    return cond(s.get_json(KQ + "/clusterqueues/" + name), "Active") or {}


@case("missing-or-inactive-check-makes-cq-inactive", simulate="jobs")
def missing_check(s):
    setup(s, make_check=False)
    ctl = Controller(s, config=CONFIG)
    want = ("False", "AdmissionCheckNotFound",
            "Can't admit new workloads: references missing "
            "AdmissionCheck(s): %s." % CHECK)
    wait_for(lambda: tuple(cq_active(s, "cq").get(k) for k in
                           ("status", "reason", "message")) == want, 20,
             what="cq inactive, naming the missing check")
    create_job(s, "a")

    def says_inactive():
        qr = cond(wl_of(s, "a"), "QuotaReserved") or {}
        return qr.get("status") == "False" and \
            "ClusterQueue cq is inactive" in (qr.get("message") or "")
    wait_for(says_inactive, 20, what="a pending on the inactive cq")
    eq(job(s, "a")["spec"].get("suspend"), True, "a suspended")
    # The check appears, not Active yet: still inactive, another reason.
    admission_check(s, CHECK, active=False)
    want = ("False", "AdmissionCheckInactive",
            "Can't admit new workloads: references inactive "
            "AdmissionCheck(s): %s." % CHECK)
    wait_for(lambda: tuple(cq_active(s, "cq").get(k) for k in
                           ("status", "reason", "message")) == want, 20,
             what="cq inactive, naming the inactive check")
    # Its controller says Active: the queue admits, the check gates.
    set_active(s, CHECK, True)
    wait_for(lambda: cq_active(s, "cq").get("status") == "True", 20,
             what="cq active")
    set_check(s, waiting_on_checks(s, "a"), "Ready")
    started(s, "a")
    ctl.stop()


@case("sample-admission-check-applies", simulate="jobs")
def sample(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", os.path.join(ROOT, "tests", "integration",
                                          "data",
                                          "sample-admission-check.yaml"))
    ac = s.get_json(KQ + "/admissionchecks/sample-prov")
    eq(ac["spec"]["parameters"]["kind"], "ProvisioningRequestConfig",
       "parameters kind")
    cfg = s.get_json(KQ + "/provisioningrequestconfigs/sample-prov-config")
    eq(cfg["spec"]["provisioningClassName"], "sample-class", "class")


if __name__ == "__main__":
    run_cases()
