# SPDX-License-Identifier: Apache-2.0
"""kubectl-cueue, the kubectl plugin, against cueue-apiserver and
cueue-controller: every verb (list of each kind with kueuectl's columns
and values, stop/resume of each kind changing the spec field, create
localqueue, pending positions before and after admissions, version) and
bad input (one-line error naming what is wrong, exit code 1)."""
import json
import os
import subprocess

from cuetest import (BIN, CONTROLLER_CONFIG, Controller, case, check, eq,
                     run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
KQ = "/apis/kueue.x-k8s.io/v1beta2"

CONFIG = CONTROLLER_CONFIG + """integrations:
  frameworks: ["batch/job"]
"""

WL_HEADER = ["NAME", "JOB TYPE", "JOB NAME", "LOCALQUEUE", "CLUSTERQUEUE",
             "STATUS", "POSITION IN QUEUE", "EXEC TIME", "AGE"]


def cli(s, *args, env=None, kubeconfig=True, stdin=None):
    """Run kubectl-cueue; returns (exit code, stdout, stderr)."""
    cmd = [os.path.join(BIN, "kubectl-cueue")]
    if kubeconfig:
        cmd += ["--kubeconfig", s.kubeconfig]
    full = dict(os.environ)
    full.pop("KUBECONFIG", None)
    full.update(env or {})
    p = subprocess.run(cmd + list(args), capture_output=True, text=True,
                       timeout=60, env=full, input=stdin or "")
    check("Sanitizer" not in p.stderr and "runtime error:" not in
          p.stderr, "sanitizer report from kubectl-cueue %s: %s" % (
              " ".join(args), p.stderr))
    return p.returncode, p.stdout, p.stderr


def ok(s, *args, **kw):
    code, out, err = cli(s, *args, **kw)
    check(code == 0, "kubectl-cueue %s: exit %d: %s%s" % (
        " ".join(args), code, out, err))
    return out


def table(text, header):
    """Rows of a kubectl table as dicts, cut at the header's column
    starts (every column but the last is padded to its widest cell)."""
    lines = text.splitlines()
    check(lines, "empty table")
    head = lines[0]
    starts = []
    for h in header:
        i = head.find(h, starts[-1] + 1 if starts else 0)
        check(i >= 0, "header %r missing in %r" % (h, head))
        starts.append(i)
    eq(head.split(), " ".join(header).split(), "header")
    rows = []
    for ln in lines[1:]:
        cells = []
        for k, st in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else None
            cells.append(ln[st:end].strip())
        rows.append(dict(zip(header, cells)))
    return rows


def by_name(rows, key="NAME"):
    return {r[key]: r for r in rows}


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "POST %s: %r" % (path, body))
    return body


def cluster_queue(name, cpu, cohort=None, labels=None):
    spec = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": cpu}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def local_queue(ns, name, cq):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterQueue": cq}}


def workload(ns, name, lq, cpu, priority):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"queueName": lq, "priority": priority, "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": cpu}}}]}}}]}}


def job(ns, name, lq, cpu):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": lq},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         "600000"}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": cpu}}}],
                         "restartPolicy": "Never"}}}}


def cond_true(obj, t):
    return any(c.get("type") == t and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions", []))


def setup(s):
    """cq (2 cpu, cohort co) with LocalQueues default/lq and team/tq;
    idle (1 cpu) with none. A Job `running` (1 cpu) admitted through lq,
    then three 2-cpu Workloads that cannot fit: p-high (priority 100,
    team/tq), p-mid (50, default/lq), p-low (0, default/lq)."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/clusterqueues", cluster_queue("cq", 2, "co"))
    post(s, KQ + "/clusterqueues", cluster_queue("idle", 1,
                                                 labels={"tier": "low"}))
    s.namespace("team")
    post(s, KQ + "/namespaces/default/localqueues",
         local_queue("default", "lq", "cq"))
    post(s, KQ + "/namespaces/team/localqueues",
         local_queue("team", "tq", "cq"))
    ctl = Controller(s, config=CONFIG)
    post(s, "/apis/batch/v1/namespaces/default/jobs",
         job("default", "running", "lq", "1"))

    def admitted():
        wls = s.get_json(KQ + "/namespaces/default/workloads")["items"]
        return [w for w in wls if cond_true(w, "Admitted")]
    wait_for(admitted, 20, what="the Job's Workload admitted")
    post(s, KQ + "/namespaces/team/workloads",
         workload("team", "p-high", "tq", "2", 100))
    post(s, KQ + "/namespaces/default/workloads",
         workload("default", "p-mid", "lq", "2", 50))
    post(s, KQ + "/namespaces/default/workloads",
         workload("default", "p-low", "lq", "2", 0))

    def counted():
        st = s.get_json(KQ + "/clusterqueues/cq").get("status", {})
        return st.get("pendingWorkloads") == 3 and \
            st.get("admittedWorkloads") == 1
    wait_for(counted, 20, what="cq status: 3 pending, 1 admitted")
    return ctl


def job_workload_name(s):
    for w in s.get_json(KQ + "/namespaces/default/workloads")["items"]:
        if any(r.get("name") == "running"
               for r in w["metadata"].get("ownerReferences", [])):
            return w["metadata"]["name"]
    raise AssertionError("no Workload for Job running")


@case("cli-list", simulate="jobs")
def cli_list(s):
    ctl = setup(s)
    jwl = job_workload_name(s)
    # list workloads -A: every column as kueuectl fills it.
    rows = by_name(table(ok(s, "list", "workloads", "-A"),
                         ["NAMESPACE"] + WL_HEADER))
    eq(sorted(rows), sorted([jwl, "p-high", "p-mid", "p-low"]), "names")
    r = rows[jwl]
    eq((r["NAMESPACE"], r["JOB TYPE"], r["JOB NAME"], r["LOCALQUEUE"],
        r["CLUSTERQUEUE"], r["STATUS"], r["POSITION IN QUEUE"]),
       ("default", "job.batch", "running", "lq", "cq", "ADMITTED", ""),
       "admitted Job row")
    check(r["EXEC TIME"].endswith("s") or r["EXEC TIME"].endswith("m"),
          "exec time %r" % r["EXEC TIME"])
    check(r["AGE"] != "", "age")
    for name, ns, lq, pos in (("p-high", "team", "tq", "0"),
                              ("p-mid", "default", "lq", "0"),
                              ("p-low", "default", "lq", "1")):
        r = rows[name]
        eq((r["NAMESPACE"], r["JOB TYPE"], r["JOB NAME"], r["LOCALQUEUE"],
            r["CLUSTERQUEUE"], r["STATUS"], r["POSITION IN QUEUE"],
            r["EXEC TIME"]),
           (ns, "", "", lq, "cq", "PENDING", pos, ""), name)
    # the default namespace only, and kueuectl's filters
    rows = table(ok(s, "list", "workload"), WL_HEADER)
    eq(sorted(r["NAME"] for r in rows), sorted([jwl, "p-mid", "p-low"]),
       "namespace default")
    rows = table(ok(s, "list", "kwl", "-n", "team"), WL_HEADER)
    eq([r["NAME"] for r in rows], ["p-high"], "-n team")
    rows = table(ok(s, "list", "workloads", "--status", "pending"),
                 WL_HEADER)
    eq(sorted(r["NAME"] for r in rows), ["p-low", "p-mid"], "--status")
    rows = table(ok(s, "list", "workloads", "--status=admitted", "-A"),
                 ["NAMESPACE"] + WL_HEADER)
    eq([r["NAME"] for r in rows], [jwl], "--status admitted")
    rows = table(ok(s, "list", "workloads", "-A", "-c", "cq"),
                 ["NAMESPACE"] + WL_HEADER)
    eq([r["NAME"] for r in rows], [jwl], "-c: admitted to cq")
    rows = table(ok(s, "list", "workloads", "-q", "lq"), WL_HEADER)
    eq(len(rows), 3, "-q lq")
    rows = table(ok(s, "list", "workloads", "--for", "job/running"),
                 WL_HEADER)
    eq([r["NAME"] for r in rows], [jwl], "--for job/running")
    code, out, err = cli(s, "list", "workloads", "-q", "nope")
    eq((code, out, err), (0, "", "No resources found in default "
                          "namespace.\n"), "nothing matches")
    out = ok(s, "list", "workloads", "-n", "team", "-o", "json")
    lst = json.loads(out)
    eq([w["metadata"]["name"] for w in lst["items"]], ["p-high"], "-o json")
    out = ok(s, "list", "workloads", "-n", "team", "-o", "name")
    eq(out, "workload.kueue.x-k8s.io/p-high\n", "-o name")
    out = ok(s, "list", "workloads", "-n", "team", "-o", "yaml")
    check("- apiVersion: kueue.x-k8s.io/v1beta2\n" in out and
          "  kind: Workload\n" in out and "    name: p-high\n" in out,
          "-o yaml: %s" % out)

    # ClusterQueues
    hdr = ["NAME", "COHORT", "PENDING WORKLOADS", "ADMITTED WORKLOADS",
           "ACTIVE", "AGE"]
    rows = by_name(table(ok(s, "list", "clusterqueues"), hdr))
    eq(sorted(rows), ["cq", "idle"], "ClusterQueues")
    r = rows["cq"]
    eq((r["COHORT"], r["PENDING WORKLOADS"], r["ADMITTED WORKLOADS"],
        r["ACTIVE"]), ("co", "3", "1", "true"), "cq row")
    r = rows["idle"]
    eq((r["COHORT"], r["PENDING WORKLOADS"], r["ADMITTED WORKLOADS"],
        r["ACTIVE"]), ("", "0", "0", "true"), "idle row")
    rows = table(ok(s, "list", "cq", "-l", "tier=low"), hdr)
    eq([r["NAME"] for r in rows], ["idle"], "-l tier=low")
    rows = table(ok(s, "list", "cq", "--selector=tier!=low"), hdr)
    eq([r["NAME"] for r in rows], ["cq"], "--selector tier!=low")
    rows = table(ok(s, "list", "cq", "--field-selector",
                    "metadata.name=cq"), hdr)
    eq([r["NAME"] for r in rows], ["cq"], "--field-selector")
    rows = table(ok(s, "list", "cq", "--active=true"), hdr)
    eq(len(rows), 2, "--active=true")
    code, out, err = cli(s, "list", "cq", "--active", "false")
    eq((code, out, err), (0, "", "No resources found\n"), "--active false")

    # ResourceFlavors
    rows = table(ok(s, "list", "resourceflavors"),
                 ["NAME", "NODE LABELS", "AGE"])
    eq([(r["NAME"], r["NODE LABELS"]) for r in rows],
       [("default-flavor", "")], "ResourceFlavors")
    eq(ok(s, "list", "rf", "-o", "name"),
       "resourceflavor.kueue.x-k8s.io/default-flavor\n", "rf -o name")

    # LocalQueues
    hdr = ["NAME", "CLUSTERQUEUE", "PENDING WORKLOADS",
           "ADMITTED WORKLOADS", "AGE"]

    def lq_rows():
        rows = table(ok(s, "list", "localqueues", "-A"),
                     ["NAMESPACE"] + hdr)
        return {(r["NAMESPACE"], r["NAME"]): (
            r["CLUSTERQUEUE"], r["PENDING WORKLOADS"],
            r["ADMITTED WORKLOADS"]) for r in rows}
    want = {("default", "lq"): ("cq", "2", "1"),
            ("team", "tq"): ("cq", "1", "0")}
    wait_for(lambda: lq_rows() == want, 10,
             what="LocalQueue rows %r" % want)
    rows = table(ok(s, "list", "lq"), hdr)
    eq([r["NAME"] for r in rows], ["lq"], "default namespace")
    code, out, err = cli(s, "list", "lq", "-A", "-c", "idle")
    eq((code, out, err), (0, "", "No resources found\n"), "-c idle")

    # Pods of the Job (the simulator's)
    hdr = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    out = wait_for(lambda: ok(s, "list", "pods", "--for", "job/running"),
                   10, what="a Pod of Job running")
    rows = table(out, hdr)
    eq(len(rows), 1, "one Pod")
    check(rows[0]["NAME"].startswith("running-"), "pod name %r" % rows)
    eq((rows[0]["STATUS"], rows[0]["RESTARTS"]), ("Running", "0"), "pod")
    code, out, err = cli(s, "list", "pods", "--for", "job/nope")
    eq((code, out, err), (0, "", "No resources found in default "
                          "namespace.\n"), "--for a missing Job")
    ctl.stop()


@case("cli-pending-and-admissions")
def cli_pending(s):
    ctl = setup(s)
    hdr = ["POSITION IN CLUSTERQUEUE", "POSITION IN LOCALQUEUE",
           "NAMESPACE", "NAME", "LOCALQUEUE", "PRIORITY", "AGE"]

    def pending_rows(*extra):
        rows = table(ok(s, "pending", "cq", *extra), hdr)
        return [(r["POSITION IN CLUSTERQUEUE"], r["POSITION IN LOCALQUEUE"],
                 r["NAMESPACE"], r["NAME"], r["LOCALQUEUE"], r["PRIORITY"])
                for r in rows]
    eq(pending_rows(), [("0", "0", "team", "p-high", "tq", "100"),
                        ("1", "0", "default", "p-mid", "lq", "50"),
                        ("2", "1", "default", "p-low", "lq", "0")],
       "pending before admissions")
    # No visibility API here: the local order, labelled as such.
    code, _, err = cli(s, "pending", "cq")
    eq(code, 0, "pending")
    check(err.startswith("note: the visibility API is not served (HTTP "
                         "404): positions computed locally;"), err)
    eq(pending_rows("--offset", "1", "--limit", "1"),
       [("1", "0", "default", "p-mid", "lq", "50")], "--offset/--limit")
    summ = json.loads(ok(s, "pending", "cq", "-o", "json"))
    eq(summ["kind"], "PendingWorkloadsSummary", "kind")
    eq([(i["metadata"]["name"], i["positionInClusterQueue"],
         i["positionInLocalQueue"], i["priority"], i["localQueueName"])
        for i in summ["items"]],
       [("p-high", 0, 0, 100, "tq"), ("p-mid", 1, 0, 50, "lq"),
        ("p-low", 2, 1, 0, "lq")], "-o json")
    code, out, err = cli(s, "pending", "idle")
    eq((code, out), (0, ""), "idle: nothing pending")
    check("No pending workloads" in err, err)
    # A stopped Workload leaves the queue; resumed, it is back.
    eq(ok(s, "stop", "workload", "p-mid"),
       "workload.kueue.x-k8s.io/p-mid stopped\n", "stop output")
    eq(s.get_json(KQ + "/namespaces/default/workloads/p-mid")["spec"]
       ["active"], False, "spec.active after stop")
    settles(pending_rows, [("0", "0", "team", "p-high", "tq", "100"),
                           ("1", "0", "default", "p-low", "lq", "0")],
            "pending with p-mid stopped")
    eq(ok(s, "resume", "workload", "p-mid"),
       "workload.kueue.x-k8s.io/p-mid resumed\n", "resume output")
    eq(s.get_json(KQ + "/namespaces/default/workloads/p-mid")["spec"]
       ["active"], True, "spec.active after resume")
    settles(pending_rows, [("0", "0", "team", "p-high", "tq", "100"),
                           ("1", "0", "default", "p-mid", "lq", "50"),
                           ("2", "1", "default", "p-low", "lq", "0")],
            "pending with p-mid resumed")
    # Admissions: 4 cpu fits the Job (1) and p-high (2), not p-mid.
    code, _, body = s.raw("PATCH", KQ + "/clusterqueues/cq", {
        "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
                                     "flavors": [{
                                         "name": "default-flavor",
                                         "resources": [{
                                             "name": "cpu",
                                             "nominalQuota": 4}]}]}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "raise cq quota: %r" % body)
    wait_for(lambda: cond_true(s.get_json(
        KQ + "/namespaces/team/workloads/p-high"), "QuotaReserved"), 20,
        what="p-high admitted")
    settles(pending_rows, [("0", "0", "default", "p-mid", "lq", "50"),
                           ("1", "1", "default", "p-low", "lq", "0")],
            "pending after p-high's admission")

    def positions():
        rows = by_name(table(ok(s, "list", "workloads", "-A"),
                             ["NAMESPACE"] + WL_HEADER))
        return [(n, rows[n]["STATUS"], rows[n]["POSITION IN QUEUE"])
                for n in ("p-high", "p-mid", "p-low")]
    settles(positions, [("p-high", "ADMITTED", ""), ("p-mid", "PENDING", "0"),
                        ("p-low", "PENDING", "1")],
            "list workloads after p-high's admission")
    ctl.stop()


def settles(fn, want, what, timeout=15):
    """fn() == want, now or within timeout: when the visibility API is
    served, the controller's queues follow a change a moment later."""
    last = [None]

    def same():
        last[0] = fn()
        return last[0] == want
    try:
        wait_for(same, timeout, what=what)
    except AssertionError:
        eq(last[0], want, what)


def stop_policy(s, path):
    return s.get_json(path)["spec"].get("stopPolicy", "None")


@case("cli-stop-resume-create")
def cli_stop_resume_create(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/clusterqueues", cluster_queue("cq", 2))
    s.namespace("team")
    post(s, KQ + "/namespaces/team/localqueues",
         local_queue("team", "tq", "cq"))
    post(s, KQ + "/namespaces/default/workloads",
         workload("default", "w", "lq", "1", 0))
    cqp = KQ + "/clusterqueues/cq"
    lqp = KQ + "/namespaces/team/localqueues/tq"
    # ClusterQueue
    eq(ok(s, "stop", "clusterqueue", "cq"),
       "clusterqueue.kueue.x-k8s.io/cq\n", "stop cq output")
    eq(stop_policy(s, cqp), "HoldAndDrain", "stop cq")
    ok(s, "stop", "cq", "cq", "--keep-already-running")
    eq(stop_policy(s, cqp), "Hold", "stop cq --keep-already-running")
    out = ok(s, "resume", "cq", "cq", "-o", "json")
    eq(json.loads(out)["spec"]["stopPolicy"], "None", "resume -o json")
    eq(stop_policy(s, cqp), "None", "resume cq")
    eq(ok(s, "stop", "cq", "cq", "--dry-run", "client"),
       "clusterqueue.kueue.x-k8s.io/cq (client dry run)\n", "client dry")
    eq(stop_policy(s, cqp), "None", "client dry run changes nothing")
    ok(s, "stop", "cq", "cq", "--dry-run=server")
    eq(stop_policy(s, cqp), "None", "server dry run changes nothing")
    # LocalQueue, in its namespace
    eq(ok(s, "stop", "localqueue", "tq", "-n", "team"),
       "localqueue.kueue.x-k8s.io/tq\n", "stop lq output")
    eq(stop_policy(s, lqp), "HoldAndDrain", "stop lq")
    ok(s, "stop", "lq", "tq", "--namespace=team", "--keep-already-running")
    eq(stop_policy(s, lqp), "Hold", "stop lq --keep-already-running")
    out = ok(s, "resume", "lq", "tq", "-nteam", "-o", "yaml")
    check("  stopPolicy: None\n" in out, "resume lq -o yaml: %s" % out)
    eq(stop_policy(s, lqp), "None", "resume lq")
    code, out, err = cli(s, "stop", "lq", "tq")
    eq((code, out), (1, ""), "stop lq in the wrong namespace")
    eq(err.count("\n"), 1, "one line: %r" % err)
    check('"tq" not found' in err, err)
    # Workload (spec.active)
    ok(s, "stop", "workload", "w")
    eq(s.get_json(KQ + "/namespaces/default/workloads/w")["spec"]
       ["active"], False, "stop workload")
    ok(s, "resume", "kwl", "w")
    eq(s.get_json(KQ + "/namespaces/default/workloads/w")["spec"]
       ["active"], True, "resume workload")
    # create localqueue
    eq(ok(s, "create", "localqueue", "new", "-c", "cq", "-n", "team"),
       "localqueue.kueue.x-k8s.io/new created\n", "create output")
    lq = s.get_json(KQ + "/namespaces/team/localqueues/new")
    eq(lq["spec"]["clusterQueue"], "cq", "created LocalQueue")
    code, out, err = cli(s, "create", "lq", "other", "-c", "nope")
    eq((code, out), (1, ""), "unknown ClusterQueue")
    eq(err, 'error: clusterqueues.kueue.x-k8s.io "nope" not found '
            '(kubectl cueue list clusterqueue lists them)\n',
       "unknown ClusterQueue message")
    ok(s, "create", "lq", "other", "--clusterqueue=nope", "-i")
    eq(s.get_json(KQ + "/namespaces/default/localqueues/other")["spec"]
       ["clusterQueue"], "nope", "created with -i")
    code, out, err = cli(s, "create", "lq", "new", "-c", "cq", "-n", "team")
    eq(code, 1, "create twice")
    check(err.startswith("error: ") and "already exists" in err and
          err.count("\n") == 1, err)
    # kueuectl's pass-through to kubectl
    eq(ok(s, "get", "cq", "cq", "-o", "name"),
       "clusterqueue.kueue.x-k8s.io/cq\n", "get cq (kubectl)")
    out = ok(s, "get", "lq", "-n", "team",
             "-o", "jsonpath={.items[*].metadata.name}")
    eq(sorted(out.split()), ["new", "tq"], "get lq (kubectl)")
    # delete workload is kubectl-cueue's own (a Workload without owner:
    # deleted itself; see cli-create-delete-formats-completion)
    eq(ok(s, "delete", "workload", "w"),
       "workload.kueue.x-k8s.io/w deleted\n", "delete workload")
    # KUBECONFIG and --context
    code, out, err = cli(s, "list", "lq", "-n", "team", kubeconfig=False,
                         env={"KUBECONFIG": s.kubeconfig})
    eq(code, 0, "KUBECONFIG: %s" % err)
    check(out.startswith("NAME ") and "\nnew " in out, out)
    code, out, err = cli(s, "list", "cq", "--context", "nope")
    eq(code, 1, "--context nope")
    check('context "nope" not found' in err and err.count("\n") == 1, err)
    import yaml
    with open(s.kubeconfig) as f:
        ctxname = yaml.safe_load(f)["contexts"][0]["name"]
    ok(s, "list", "cq", "--context", ctxname)


@case("cli-create-delete-formats-completion")
def cli_kueuectl_verbs(s):
    """kueuectl's create clusterqueue / resourceflavor (its examples),
    delete workload (the owning Job after confirmation, else the Workload),
    -o jsonpath (as kubectl prints it) and go-template (run by kubectl),
    completion; each bad input named with what to write."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    out = ok(s, "create", "clusterqueue", "team-a", "--cohort", "org",
             "--queuing-strategy", "StrictFIFO", "--namespace-selector",
             "fooX=barX,fooY=barY", "--reclaim-within-cohort", "Any",
             "--preemption-within-cluster-queue", "LowerPriority",
             "--nominal-quota", "alpha:cpu=9;memory=36Gi;nvidia.com/gpu=10,"
             "beta:cpu=18;memory=72Gi;nvidia.com/gpu=20",
             "--borrowing-limit", "alpha:cpu=1;memory=1Gi;nvidia.com/gpu=1",
             "--lending-limit", "beta:cpu=2;memory=2Gi;nvidia.com/gpu=2")
    eq(out, "clusterqueue.kueue.x-k8s.io/team-a created\n", "create cq")
    spec = s.get_json(KQ + "/clusterqueues/team-a")["spec"]
    eq((spec["cohortName"], spec["queueingStrategy"],
        spec["namespaceSelector"], spec["preemption"]["reclaimWithinCohort"],
        spec["preemption"]["withinClusterQueue"]),
       ("org", "StrictFIFO", {"matchLabels": {"fooX": "barX",
                                              "fooY": "barY"}},
        "Any", "LowerPriority"), "cq spec")
    rg = spec["resourceGroups"]
    eq(len(rg), 1, "one resource group")
    eq(rg[0]["coveredResources"], ["cpu", "memory", "nvidia.com/gpu"],
       "covered")
    alpha, beta = rg[0]["flavors"]
    eq((alpha["name"], alpha["resources"][0]["nominalQuota"],
        alpha["resources"][0]["borrowingLimit"],
        beta["resources"][1]["lendingLimit"]),
       ("alpha", "9", "1", "2Gi"), "quotas merged by flavor")
    out = ok(s, "create", "cq", "open", "-o", "jsonpath={.spec}")
    eq(json.loads(out)["namespaceSelector"], {}, "every namespace")
    out = ok(s, "create", "rf", "gpu", "--node-labels",
             "kubernetes.io/arch=arm64,kubernetes.io/os=linux",
             "--node-taints", "key1=value:NoSchedule,key2:NoExecute",
             "--tolerations", "key1=value:NoSchedule,key3,:PreferNoSchedule")
    eq(out, "resourceflavor.kueue.x-k8s.io/gpu created\n", "create rf")
    rf = s.get_json(KQ + "/resourceflavors/gpu")["spec"]
    eq((rf["nodeLabels"]["kubernetes.io/arch"], len(rf["nodeTaints"]),
        rf["tolerations"][1], rf["tolerations"][2]["operator"]),
       ("arm64", 2, {"key": "key3", "operator": "Exists"}, "Exists"),
       "rf spec")
    out = ok(s, "create", "rf", "dry", "--dry-run", "client", "-o",
             "jsonpath={.kind}/{.metadata.name}")
    eq(out, "ResourceFlavor/dry", "client dry run, jsonpath")
    code, _, _ = s.raw("GET", KQ + "/resourceflavors/dry")
    eq(code, 404, "dry run created nothing")
    # -o jsonpath prints what kubectl prints for the same template
    for tmpl in ("{.items[*].metadata.name}",
                 "{range .items[*]}{.metadata.name}:{.spec.cohortName}"
                 "{\"\\n\"}{end}",
                 "{.items[?(@.spec.cohortName==\"org\")].spec."
                 "preemption.withinClusterQueue}"):
        want = s.kubectl("get", "clusterqueues.kueue.x-k8s.io", "-o",
                         "jsonpath=" + tmpl).stdout
        eq(ok(s, "list", "cq", "-o", "jsonpath=" + tmpl), want,
           "jsonpath %s" % tmpl)
    tmpl = "{{range .items}}{{.metadata.name}},{{end}}"
    want = s.kubectl("get", "clusterqueues.kueue.x-k8s.io", "-o",
                     "go-template=" + tmpl).stdout
    eq(ok(s, "list", "cq", "-o", "go-template=" + tmpl), want,
       "go-template through kubectl")
    eq(ok(s, "create", "cq", "gt", "--dry-run", "client", "-o",
          "go-template={{.spec.queueingStrategy}}"), "BestEffortFIFO",
       "go-template of one object")
    # delete workload: the owning Job, after confirmation
    jb = post(s, "/apis/batch/v1/namespaces/default/jobs", {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "owner"},
        "spec": {"suspend": True, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}})
    for name, owners in (("owned", [{
            "apiVersion": "batch/v1", "kind": "Job", "name": "owner",
            "uid": jb["metadata"]["uid"], "controller": True}]),
            ("orphan", [])):
        wl = workload("default", name, "lq", "1", 0)
        wl["metadata"]["ownerReferences"] = owners
        post(s, KQ + "/namespaces/default/workloads", wl)
    code, out, err = cli(s, "delete", "workload", "owned", stdin="n\n")
    eq((code, out), (0, "This operation will also delete:\n  - "
                        "jobs.batch/owner associated with the "
                        "default/owned workload\nDo you want to proceed "
                        "(y/n)? Deletion is canceled\n"), "declined")
    eq(s.raw("GET", "/apis/batch/v1/namespaces/default/jobs/owner")[0],
       200, "job kept")
    eq(ok(s, "delete", "kwl", "owned", "--dry-run", "server"),
       "jobs.batch/owner deleted (server dry run)\n", "server dry run")
    code, out, err = cli(s, "delete", "workload", "owned", "missing",
                         stdin="y\n")
    eq(code, 0, "delete: %s" % err)
    check(out.endswith("(y/n)? jobs.batch/owner deleted\n"), out)
    check('"missing" not found' in err, err)
    eq(s.raw("GET", "/apis/batch/v1/namespaces/default/jobs/owner")[0],
       404, "job deleted")
    eq(ok(s, "delete", "workload", "orphan"),
       "workload.kueue.x-k8s.io/orphan deleted\n", "no owner: itself")
    # completion
    check("complete -F _kubectl_cueue kubectl-cueue" in
          ok(s, "completion", "bash"), "bash script")
    check("compdef _kubectl_cueue kubectl-cueue" in
          ok(s, "completion", "zsh"), "zsh script")
    eq(ok(s, "__complete", "cr"), "create\n:4\n", "verbs")
    eq(ok(s, "__complete", "create", ""),
       "localqueue\nclusterqueue\nresourceflavor\n:4\n", "kinds")
    eq(ok(s, "__complete", "stop", "cq", "te"), "team-a\n:4\n", "names")
    eq(ok(s, "__complete", "pending", ""), "open\nteam-a\n:4\n",
       "ClusterQueues of pending")
    check("--nominal-quota\n" in ok(s, "__complete", "create", "cq", "x",
                                     "--n"), "flags")
    eq(ok(s, "__complete", "list", "workload", "-c", "t"), "team-a\n:4\n",
       "a flag's value: ClusterQueue names")
    eq(ok(s, "__complete", "list", "workload", "--status", "p"),
       "pending\n:4\n", "a flag's value: statuses")
    eq(ok(s, "__complete", "list", "lq", "-n", "kube-s"),
       "kube-system\n:4\n", "a flag's value: namespaces")
    eq(ok(s, "__complete", "-n", "default", "stop", "cq", "o"),
       "open\n:4\n", "names after a flag and its value")
    bad = [
        (["list", "cq", "-o", "jsonpath"],
         "template format specified but no template given: write -o "
         "jsonpath=TEMPLATE"),
        (["list", "cq", "-o", "jsonpath={.items[0"], "jsonpath: "),
        (["create", "cq", "x", "--nominal-quota", "alpha:cpu"],
         "write FLAVOR:RESOURCE=QUANTITY"),
        (["create", "rf", "x", "--node-taints", "k=v"],
         "write KEY[=VALUE]:EFFECT"),
        (["create", "rf", "x", "--cohort", "c"],
         'unknown flag: --cohort (not a flag of "create resourceflavor")'),
        (["delete", "workload"], "requires at least 1 NAME, or --all"),
        (["delete", "workload", "w", "-A"], "use --all -A"),
        (["pending", "cq", "-o", "go-template={{.}}"],
         "use -o jsonpath=TEMPLATE or -o json"),
        (["completion", "fish"], "kubectl cueue completion bash"),
        (["list", "cq", "-o", "jsonpath-file=/nonexistent"],
         "template file /nonexistent"),
    ]
    for args, want in bad:
        code, out, err = cli(s, *args)
        eq(code, 1, "exit code of %r (stderr %r)" % (args, err))
        check(err.startswith("error: ") and want in err and
              err.count("\n") == 1, "%r: %r not in %r" % (args, want, err))


@case("cli-version-and-bad-input")
def cli_version_bad(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    out = ok(s, "version")
    eq(out, "Client Version: v%s\n" % open(os.path.join(
        ROOT, "VERSION")).read().strip(), "version, nothing installed")
    s.namespace("cueue-system")
    post(s, "/apis/apps/v1/namespaces/cueue-system/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cueue-controller",
                     "namespace": "cueue-system"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}},
                              "spec": {"containers": [{
                                  "name": "controller",
                                  "image": "cueue-controller:test"}]}}}})
    out = ok(s, "version")
    check(out.endswith("Cueue Controller Image: cueue-controller:test\n"),
          out)
    # help goes to stdout, exit 0
    out = ok(s, "pending", "--help")
    check("computed locally" in out, out)
    bad = [
        (["frobnicate"], 'unknown command "frobnicate"'),
        (["list"], "missing resource type"),
        (["list", "widgets"], 'unknown resource type "widgets"'),
        (["list", "workloads", "--bogus"], "unknown flag: --bogus"),
        (["list", "workloads", "-Z"], "unknown shorthand flag: 'Z'"),
        (["list", "cq", "-A"], "unknown flag: --all-namespaces"),
        (["list", "workloads", "--status", "lost"],
         "invalid status value (lost)"),
        (["list", "workloads", "-o", "xml"], 'output format "xml"'),
        (["list", "cq", "--active", "maybe"], '"--active"'),
        (["list", "cq", "--active", "true", "--active", "false"],
         "only one active flag"),
        (["list", "pods"], 'required flag(s) "for" not set'),
        (["list", "pods", "--for", "running"], "--for"),
        (["list", "workloads", "-n"], "flag needs an argument"),
        (["stop", "clusterqueue"], "missing NAME"),
        (["stop", "clusterqueue", "a", "b"], "accepts 1 NAME"),
        (["stop", "workload", "w", "--keep-already-running"],
         "unknown flag: --keep-already-running"),
        (["stop", "pods", "p"], 'unknown resource type "pods"'),
        (["resume", "lq"], "missing NAME"),
        (["stop", "cq", "x", "--dry-run", "maybe"],
         "invalid dry-run value (maybe)"),
        (["create", "localqueue", "x"], 'required flag(s) "clusterqueue" '
                                        'not set: write -c'),
        (["create", "workload", "x"], 'unknown resource type'),
        (["pending"], "missing CLUSTER_QUEUE"),
        (["pending", "cq", "--limit", "-1"], '"--limit"'),
        (["pending", "nope"], 'clusterqueues.kueue.x-k8s.io "nope" not '
                              'found'),
        (["stop", "cq", "nope"], 'clusterqueues.kueue.x-k8s.io "nope" not '
                                 'found'),
        (["version", "extra"], 'unexpected argument "extra"'),
    ]
    for args, want in bad:
        code, out, err = cli(s, *args)
        eq(code, 1, "exit code of %r (stderr %r)" % (args, err))
        eq(out, "", "stdout of %r" % (args,))
        check(err.startswith("error: ") and err.count("\n") == 1 and
              err.endswith("\n"), "one line for %r: %r" % (args, err))
        check(want in err, "%r: %r not in %r" % (args, want, err))
    code, out, err = cli(s, "list", "cq", kubeconfig=False,
                         env={"KUBECONFIG": "/nonexistent/kc",
                              "HOME": s.dir})
    eq(code, 1, "no configuration")
    check("KUBECONFIG" in err and err.count("\n") == 1, err)


run_cases()
