# SPDX-License-Identifier: Apache-2.0
"""Kueue's events and decision log lines (docs/events.md), on Jobs and
Workloads, read back through events.k8s.io/v1 and core/v1 and from the
controller's JSON log.

One scenario: a low-priority Job admitted (CreatedWorkload, Started,
QuotaReserved, Admitted), a Job too big for its ClusterQueue (a Warning
with the pending reason, once), a high-priority Job preempting the first
(EvictedDueToPreempted and Preempted on the victim, PreemptedWorkload on
the preemptor, Stopped on the victim's Job) and finishing
(FinishedWorkload). Each event is checked for type, reason, action,
reporting controller and its note's format; each decision for its log
line's JSON fields."""
import json
import os
import re

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
KQ = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team"
JOBS = "/apis/batch/v1/namespaces/team/jobs"

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: spot
      resources:
      - {name: cpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
"""

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""


def job(name, cpu, prio=None, runtime_ms=800):
    j = {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": name, "namespace": "team",
                      "labels": {"kueue.x-k8s.io/queue-name": "default"},
                      "annotations": {"cueue.dev/sim-runtime-ms":
                                      str(runtime_ms)}},
         "spec": {"parallelism": 1, "suspend": True,
                  "template": {"spec": {
                      "containers": [{"name": "c", "image": "busybox",
                                      "resources": {"requests": {
                                          "cpu": cpu}}}],
                      "restartPolicy": "Never"}}}}
    if prio:
        j["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = prio
    return j


def create(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "create %s: %r" % (obj["metadata"]["name"], body))
    return body


def events(s):
    """The namespace's events through events.k8s.io/v1."""
    return s.get_json("/apis/events.k8s.io/v1/namespaces/team/events")[
        "items"]


def about(evs, kind, name, reason):
    return [e for e in evs if e["regarding"]["kind"] == kind and
            e["regarding"]["name"] == name and e["reason"] == reason]


def one(s, kind, name, reason, timeout=20):
    """The single Event with reason about kind/name, once it exists."""
    got = wait_for(lambda: about(events(s), kind, name, reason), timeout,
                   what="%s event on %s %s" % (reason, kind, name))
    eq(len(got), 1, "one %s Event on %s: %r" % (reason, name, got))
    return got[0]


def check_event(e, type_, ctl, note_re):
    """type, action (= reason, as Kueue passes it), reporting controller,
    reportingInstance and eventTime as the events.k8s.io recorder writes
    them, and the note's format."""
    what = "%s on %s" % (e["reason"], e["regarding"]["name"])
    eq(e["type"], type_, "type of " + what)
    eq(e["action"], e["reason"], "action of " + what)
    eq(e["reportingController"], ctl, "reportingController of " + what)
    check(e["reportingInstance"].startswith(ctl + "-"),
          "reportingInstance of %s: %r" % (what, e["reportingInstance"]))
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$",
                   e["eventTime"] or ""),
          "eventTime of %s: %r" % (what, e["eventTime"]))
    check(e.get("deprecatedCount") in (None, 0),
          "no core count on %s: %r" % (what, e))
    check(re.fullmatch(note_re, e["note"]),
          "note of %s: %r !~ %r" % (what, e["note"], note_re))


def wl_of(s, job_name):
    def find():
        for w in s.get_json(KQ + "/workloads")["items"]:
            if w["metadata"]["ownerReferences"][0]["name"] == job_name:
                return w
        return None
    return wait_for(find, 20, what="Workload of " + job_name)


def log_lines(path):
    out = []
    with open(path, errors="replace") as f:
        for ln in f:
            ln = ln.strip()
            if ln.startswith("{"):
                out.append(json.loads(ln))
    return out


def decision(ctl, msg, **match):
    """The JSON log line with msg whose fields include match."""
    def find():
        for ln in log_lines(ctl.log):
            if ln.get("msg") == msg and all(ln.get(k) == v
                                            for k, v in match.items()):
                return ln
        return None
    return wait_for(find, 10, what="log line %r %r" % (msg, match))


def ref(name, ns=None):
    return {"name": name, "namespace": ns} if ns else {"name": name}


@case("kueue-events-and-decision-logs", simulate="jobs")
def scenario(s):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))
    s.namespace("team")
    create(s, KQ + "/localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "default", "namespace": "team"},
        "spec": {"clusterQueue": "cq"}})
    ctl = Controller(s, config=CONFIG, args=("--log-json",))
    JOB_CTL = "batch/job-kueue-controller"

    # 1. admitted: the job's and the Workload's events.
    low_job = create(s, JOBS, job("low", "3", "low", runtime_ms=600000))
    low = wl_of(s, "low")
    lname = low["metadata"]["name"]
    e = one(s, "Job", "low", "CreatedWorkload")
    check_event(e, "Normal", JOB_CTL,
                re.escape("Created Workload: team/" + lname))
    eq(e["regarding"]["apiVersion"], "batch/v1")
    eq(e["regarding"]["uid"], low_job["metadata"]["uid"])
    check_event(one(s, "Workload", lname, "QuotaReserved"), "Normal",
                "kueue-admission", r"Quota reserved in ClusterQueue cq, "
                r"wait time since queued was \d+s")
    check_event(one(s, "Workload", lname, "Admitted"), "Normal",
                "kueue-admission", r"Admitted by ClusterQueue cq, wait "
                r"time since reservation was 0s")
    check_event(one(s, "Job", "low", "Started"), "Normal", JOB_CTL,
                r"Admitted by clusterQueue cq")
    ln = decision(ctl, "Workload admitted", workload=ref(lname, "team"))
    eq((ln["clusterQueue"], ln["localQueue"], ln["reason"], ln["level"]),
       (ref("cq"), ref("default", "team"), "Admitted", "info"),
       "admission log line %r" % ln)

    # 2. pending: a Warning with the condition's reason and message.
    create(s, JOBS, job("big", "5"))
    big = wl_of(s, "big")
    bname = big["metadata"]["name"]

    def pending_cond():
        w = s.get_json(KQ + "/workloads/" + bname)
        for c in w.get("status", {}).get("conditions", []):
            if c["type"] == "QuotaReserved" and c["status"] == "False":
                return c
        return None
    cond = wait_for(pending_cond, 20, what="big's pending condition")

    def pending_events():
        return [x for x in events(s) if x["regarding"]["name"] == bname
                and x["type"] == "Warning"]
    pe = wait_for(pending_events, 20, what="big's Warning event")
    eq(len(pe), 1, "one pending Warning: %r" % pe)
    check_event(pe[0], "Warning", "kueue-admission", re.escape(
        cond["message"]))
    eq(pe[0]["reason"], cond["reason"], "event reason = condition reason")
    ln = decision(ctl, "Workload re-queued", workload=ref(bname, "team"))
    eq((ln["clusterQueue"], ln["localQueue"], ln["reason"],
        ln["message"]), (ref("cq"), ref("default", "team"),
                         cond["reason"], cond["message"]),
       "re-queued log line %r" % ln)

    # The job's priority class changed: the Workload follows, the job is
    # told (UpdatedWorkload is about the job, as Kueue's).
    code, _, body = s.raw("PATCH", JOBS + "/big", {"metadata": {"labels": {
        "kueue.x-k8s.io/priority-class": "low"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "relabel big: %r" % body)
    check_event(one(s, "Job", "big", "UpdatedWorkload"), "Normal", JOB_CTL,
                re.escape("Updated workload priority class: team/" + bname))
    eq(about(events(s), "Workload", bname, "UpdatedWorkload"), [],
       "not on the Workload")

    # 3. preemption: victim, preemptor, the victim's Job.
    high_job = create(s, JOBS, job("high", "2", "high", runtime_ms=1500))
    high = wl_of(s, "high")
    hname = high["metadata"]["name"]
    why = (r"Preempted to accommodate a workload \(UID: %s, JobUID: %s\) "
           r"due to prioritization in the ClusterQueue; preemptor path: "
           r"/cq; preemptee path: /cq" % (high["metadata"]["uid"],
                                        high_job["metadata"]["uid"]))
    check_event(one(s, "Workload", lname, "EvictedDueToPreempted"),
                "Normal", "kueue-admission", why)
    check_event(one(s, "Workload", lname, "Preempted"), "Normal",
                "kueue-admission", why + re.escape(
                    "; preemptor effective priority: 1000 (base: 1000, "
                    "boost: 0); preemptee effective priority: 10 (base: "
                    "10, boost: 0)"))
    check_event(one(s, "Workload", hname, "PreemptedWorkload"), "Normal",
                "kueue-admission", re.escape(
                    "Preempted workload team/%s (UID: %s) in ClusterQueue "
                    "cq; preemptor effective priority: 1000 (base: 1000, "
                    "boost: 0); preemptee effective priority: 10 (base: "
                    "10, boost: 0)" % (lname, low["metadata"]["uid"])))
    check_event(one(s, "Job", "low", "Stopped"), "Normal", JOB_CTL,
                r"Preempted to accommodate a workload .*")
    ln = decision(ctl, "Workload preempting", workload=ref(hname, "team"))
    eq((ln["clusterQueue"], ln["localQueue"], ln["victims"],
        ln["reason"]), (ref("cq"), ref("default", "team"),
                        [ref(lname, "team")], "InClusterQueue"),
       "preempting log line %r" % ln)
    ln = decision(ctl, "Preempted", targetWorkload=ref(lname, "team"))
    eq((ln["preemptingWorkload"], ln["targetClusterQueue"],
        ln["reason"]), (ref(hname, "team"), ref("cq"), "Preempted"),
       "preempted log line %r" % ln)
    check(re.fullmatch(why + ".*", ln["message"]), ln["message"])

    # 4. finished: on the job, once the Workload is Finished.
    check_event(one(s, "Job", "high", "FinishedWorkload", timeout=30),
                "Normal", JOB_CTL, re.escape(
                    "Workload 'team/%s' is declared finished" % hname))
    ln = decision(ctl, "Workload finished", workload=ref(hname, "team"))
    eq((ln["clusterQueue"], ln["localQueue"], ln["reason"]),
       (ref("cq"), ref("default", "team"), "FinishedWorkload"),
       "finished log line %r" % ln)

    # The same objects through core/v1 (kubectl get events' view), and
    # kubectl describe finds the job's events by involvedObject.
    core = s.get_json("/api/v1/namespaces/team/events")["items"]
    fw = [x for x in core if x["reason"] == "FinishedWorkload"]
    eq(len(fw), 1, "core/v1 view: %r" % fw)
    eq((fw[0]["involvedObject"]["name"], fw[0]["message"],
        fw[0]["reportingComponent"]),
       ("high", "Workload 'team/%s' is declared finished" % hname,
        JOB_CTL), "core/v1 view of FinishedWorkload")
    out = s.kubectl("get", "events", "-n", "team").stdout
    for r in ("CreatedWorkload", "QuotaReserved", "PreemptedWorkload",
              "FinishedWorkload", cond["reason"]):
        check(r in out, "kubectl get events lacks %s:\n%s" % (r, out))
    out = s.kubectl("describe", "job", "high", "-n", "team").stdout
    check("FinishedWorkload" in out and "Started" in out, out[-800:])
    # Nothing said twice: every Event is its own (reason, object, note).
    seen = {}
    for x in events(s):
        k = (x["regarding"]["name"], x["reason"], x["note"])
        seen[k] = seen.get(k, 0) + 1
    eq([k for k, n in seen.items() if n > 1], [], "repeated Events")

    # 5. a repeat is the same Event's series: low's Workload deleted
    # twice under its running Job stops it twice more.
    def running_with_new_wl(old_uid):
        j = s.get_json(JOBS + "/low")
        w = wl_of(s, "low")
        return (j["spec"].get("suspend") is False and
                w["metadata"]["uid"] != old_uid and w)
    w = wait_for(lambda: running_with_new_wl(None), 30,
                 what="low running again")
    for i in range(2):
        code, _, body = s.raw("DELETE", KQ + "/workloads/" +
                              w["metadata"]["name"])
        check(code in (200, 202), "delete low's Workload: %r" % body)
        w = wait_for(lambda: running_with_new_wl(w["metadata"]["uid"]),
                     30, what="low running under a new Workload %d" % i)
    # client-go's series: the note is not part of the key, so both stops
    # join the preemption's Stopped; the first repeat writes count 2,
    # the second is only counted (written with the 30-minute refresh).
    st = about(events(s), "Job", "low", "Stopped")
    eq(len(st), 1, "one Event for the repeated Stopped: %r" % st)
    eq(st[0]["series"]["count"], 2, "series count: %r" % st[0])
    check(st[0]["note"].startswith("Preempted to accommodate"),
          "the first note is kept: %r" % st[0]["note"])
    check(re.match(r"^\d{4}-.*\.\d{6}Z$", st[0]["series"]
                   ["lastObservedTime"]), st[0]["series"])

    # 6. evicted by the Workload controller: deactivated.
    wname = w["metadata"]["name"]
    code, _, body = s.raw("PATCH", KQ + "/workloads/" + wname,
                          {"spec": {"active": False}}, headers={
                              "Content-Type": "application/merge-patch+json"})
    eq(code, 200, "deactivate: %r" % body)
    e = one(s, "Workload", wname, "EvictedDueToDeactivated")
    ev_cond = [c for c in s.get_json(KQ + "/workloads/" + wname)["status"][
        "conditions"] if c["type"] == "Evicted"][0]
    check_event(e, "Normal", "kueue-workload-controller",
                re.escape(ev_cond["message"]))
    ln = decision(ctl, "Workload evicted", workload=ref(wname, "team"))
    eq((ln["clusterQueue"], ln["localQueue"], ln["reason"],
        ln["message"]), (ref("cq"), ref("default", "team"),
                         "EvictedDueToDeactivated", ev_cond["message"]),
       "evicted log line %r" % ln)
    ctl.stop()


# Kueue's events per Job lifecycle (docs/events.md section 3), as Event
# objects and as writes: {(object, reason): (Events, writes)}. A series
# is one Event: its create, then one patch when it first repeats
# (client-go's events.k8s.io recorder, which Kueue uses, writes the later
# counts only every 30 minutes). Kueue's FinishedWorkload is a series of
# two (its job reconciler says it when it finishes the Workload and again
# when it finalizes the job); cueue's is one write.
LIFECYCLE_ADMITTED = {
    ("Job", "CreatedWorkload"): (1, 1),
    ("Job", "Started"): (1, 1),
    ("Job", "FinishedWorkload"): (1, 1),
    ("Workload", "QuotaReserved"): (1, 1),
    ("Workload", "Admitted"): (1, 1),
}
# Preempted twice, then admitted and finished: QuotaReserved, Admitted
# and Started repeat on each of the three admissions, Stopped,
# EvictedDueToPreempted and Preempted on each eviction (notes differing
# in the preemptor's UID and the wait times): one series each, two
# writes (None: one write per eviction, at most two).
LIFECYCLE_PREEMPTED = {
    ("Job", "CreatedWorkload"): (1, 1),
    ("Job", "Started"): (1, 2),
    ("Job", "Stopped"): (1, None),
    ("Job", "FinishedWorkload"): (1, 1),
    ("Workload", "QuotaReserved"): (1, 2),
    ("Workload", "Admitted"): (1, 2),
    ("Workload", "EvictedDueToPreempted"): (1, None),
    ("Workload", "Preempted"): (1, None),
}
# The pending reason a re-queued Workload shows (Kueue: one per failed
# scheduling attempt, folded into one series): at most one Event, two
# writes, per reason.
PENDING_REASONS = ("WaitingForQuota", "Pending", "Inadmissible",
                   "NoMatchingFlavor", "WaitingForPreemptedWorkloads")


def tally(evs, kind, name):
    """{reason: (Events, writes)} about kind/name: a series' stored count
    n means n - 1 patches."""
    out = {}
    for e in evs:
        if e["regarding"]["kind"] != kind or e["regarding"]["name"] != name:
            continue
        n, w = out.get(e["reason"], (0, 0))
        out[e["reason"]] = (n + 1, w + (e.get("series") or {}).get(
            "count", 1))
    return out


def check_lifecycle(evs, job_name, wl_name, want, evictions):
    got = {("Job", r): v for r, v in tally(evs, "Job", job_name).items()}
    got.update({("Workload", r): v for r, v in
                tally(evs, "Workload", wl_name).items()})
    for k, (n, w) in list(got.items()):
        if k[0] == "Workload" and k[1] in PENDING_REASONS:
            check(n == 1 and w <= 2, "%s on %s: %r Events/writes, Kueue "
                  "records one series" % (k[1], job_name, (n, w)))
            del got[k]
    exp = {}
    for k, (n, w) in want.items():
        exp[k] = (n, min(evictions, 2) if w is None else w)
    eq(got, exp, "events of %s's lifecycle (Kueue's)" % job_name)


@case("events-per-lifecycle-as-kueue", simulate="jobs")
def per_lifecycle(s):
    """created -> queued -> admitted -> finished, and preempted twice ->
    requeued -> admitted -> finished: each Job and Workload gets exactly
    the Events (and no more writes) Kueue records for the same
    transitions."""
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))
    s.namespace("team")
    create(s, KQ + "/localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "default", "namespace": "team"},
        "spec": {"clusterQueue": "cq"}})
    ctl = Controller(s, config=CONFIG)

    def finished(name):
        return lambda: any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in (s.get_json(JOBS + "/" + name).get("status") or {})
            .get("conditions", []) or [])

    def said(kind, name, reason):
        return lambda: about(events(s), kind, name, reason)

    def running(name):
        return lambda: s.get_json(JOBS + "/" + name)["spec"].get(
            "suspend") is False

    # 1. admitted at once, finished; its Workload's first create is
    # refused and retried: Kueue says CreatedWorkload once it succeeded.
    s.faults([{"method": "POST", "code": 403, "count": 1,
               "pathPrefix": KQ + "/workloads"}])
    create(s, JOBS, job("plain", "1", "low", runtime_ms=300))
    plain = wl_of(s, "plain")["metadata"]["name"]
    wait_for(finished("plain"), 30, what="plain finished")
    wait_for(said("Job", "plain", "FinishedWorkload"), 30,
             what="plain's FinishedWorkload")

    # 2. victim preempted twice, re-queued, admitted again, finished.
    create(s, JOBS, job("victim", "3", "low", runtime_ms=4000))
    victim = wl_of(s, "victim")
    vname = victim["metadata"]["name"]
    wait_for(running("victim"), 30, what="victim running")
    for i in range(2):
        name = "pre%d" % i
        create(s, JOBS, job(name, "3", "high", runtime_ms=300))
        wait_for(finished(name), 30, what=name + " finished")
        wait_for(running("victim"), 30, what="victim running again")
    wait_for(finished("victim"), 60, what="victim finished")
    wait_for(said("Job", "victim", "FinishedWorkload"), 30,
             what="victim's FinishedWorkload")
    for i in range(2):
        wait_for(said("Job", "pre%d" % i, "FinishedWorkload"), 30,
                 what="pre%d's FinishedWorkload" % i)
    # The last announcements of the preemptions are in: every Event
    # above follows its write, so nothing more is on its way.
    evs = events(s)
    check_lifecycle(evs, "plain", plain, LIFECYCLE_ADMITTED, 0)
    check_lifecycle(evs, "victim", vname, LIFECYCLE_PREEMPTED, 2)
    for i in range(2):
        name = "pre%d" % i
        wname = wl_of(s, name)["metadata"]["name"]
        pre = dict(LIFECYCLE_ADMITTED)
        pre[("Workload", "PreemptedWorkload")] = (1, 1)
        check_lifecycle(evs, name, wname, pre, 0)
    ctl.stop()


@case("series-patch-through-events-k8s-io")
def series(s):
    """The writes the recorder sends for a repeat, as the server takes
    them: a create through events.k8s.io, then a strategic-merge patch of
    its series; both views show the series."""
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "w.187a", "namespace": "default"},
          "eventTime": "2026-01-01T00:00:00.000000Z",
          "reportingController": "kueue-admission",
          "reportingInstance": "kueue-admission-h",
          "action": "Pending", "reason": "Pending", "type": "Warning",
          "regarding": {"kind": "Workload", "name": "w",
                        "namespace": "default"},
          "note": "waiting"}
    code, _, body = s.raw("POST", path, ev)
    eq(code, 201, "create: %r" % body)
    code, _, body = s.raw("PATCH", path + "/w.187a", {"series": {
        "count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}},
        headers={"Content-Type": "application/strategic-merge-patch+json"})
    eq(code, 200, "series patch: %r" % body)
    eq(body["series"], {"count": 2,
                        "lastObservedTime": "2026-01-01T00:00:05.000000Z"})
    eq((body["note"], body["action"]), ("waiting", "Pending"), "kept")
    core = s.get_json("/api/v1/namespaces/default/events/w.187a")
    eq(core["series"]["count"], 2, "core/v1 view of the series")
    eq(core["message"], "waiting")
    code, _, body = s.raw("PATCH", path + "/gone.1", {"series": {
        "count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}},
        headers={"Content-Type": "application/strategic-merge-patch+json"})
    eq(code, 404, "series patch of an expired Event")


if __name__ == "__main__":
    run_cases()
