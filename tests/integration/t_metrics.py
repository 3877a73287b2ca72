# SPDX-License-Identifier: Apache-2.0
"""/metrics as a Kueue user scrapes it, after a scenario with admission,
borrowing in a cohort tree, preemption (reclamation), eviction, the
requeued victim admitted again, finishing and a Workload that can never
fit; with the Job simulator.

Every family of the scrape named like one of Kueue's has Kueue's type,
label names and buckets (tests/integration/data/kueue-metrics.txt, written
from Kueue's pkg/metrics); every Kueue family is in the scrape, in the
compatibility table's "Metric" rows (and then not in the scrape), or named
below as one this scenario does not reach; the values the scenario
determines are checked; the process_* families are there; and every
metric the Grafana dashboard (manifests/grafana) queries is in the
scrape."""
import json
import os
import re
import subprocess
import time
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, Failure, case, check, eq,
                     free_port, run_cases, wait_for)
from cuetest.env import BIN

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
KUEUE_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "data", "kueue-metrics.txt")
DASHBOARD = os.path.join(MANIFESTS, "grafana", "cueue-dashboard.json")
KQ = "/apis/kueue.x-k8s.io/v1beta2"

# Kueue families cueue exports that this scenario does not reach, and why.
NOT_REACHED = {
    "multikueue_workloads_dispatched_total":
        "a MultiKueue manager only (t_multikueue)",
    "multikueue_workloads_admitted_total":
        "a MultiKueue manager only (t_multikueue)",
    "kueue_admission_checks_wait_time_seconds":
        "no admission checks here (t_admission_checks)",
    "kueue_local_queue_admission_checks_wait_time_seconds":
        "no admission checks here (t_admission_checks)",
    "kueue_pod_scheduling_gate_removal_seconds":
        "topology-aware scheduling only (t_tas)",
    "kueue_admission_cycle_preemption_skips":
        "needs two preemptors with overlapping targets in one cycle "
        "(admission_kueue_test)",
    "kueue_preemption_target_recomputations_total":
        "needs two preemptors with overlapping targets in one cycle "
        "(admission_kueue_test overlapping_preemptor_recomputed_defers)",
    "kueue_cluster_queue_weighted_share": "fair sharing off here "
                                          "(t_fair_sharing)",
    "kueue_cohort_weighted_share": "fair sharing off here (t_fair_sharing)",
    "kueue_local_queue_admission_fair_sharing_usage":
        "admission fair sharing off here (t_admission_fair_sharing)",
}

# Buckets of the data file's names, as the text format prints them.
KUEUE_EXP = ["1", "2.5", "5", "10", "20", "40", "80", "160", "320", "640",
             "1280", "2560", "5120", "10240", "20480", "40960"]
BUCKETS = {
    "kueue14": KUEUE_EXP[:14],
    "kueue16": KUEUE_EXP,
    "default": ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1",
                "2.5", "5", "10"],
    "exp-0.01x2x11": ["0.01", "0.02", "0.04", "0.08", "0.16", "0.32",
                      "0.64", "1.28", "2.56", "5.12", "10.24"],
}

SETUP = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: co}
spec: {parentName: root}
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
""" + "".join("""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  cohortName: co
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
""" % cq for cq in ("a", "b"))


def config(port):
    return CONTROLLER_CONFIG.replace(
        'bindAddress: "0"',
        'bindAddress: "127.0.0.1:%d"\n'
        '  enableClusterQueueResources: true\n'
        '  localQueueMetrics:\n'
        '    enable: true' % port) + (
        "integrations:\n  frameworks: [\"batch/job\"]\n"
        "waitForPodsReady:\n  timeout: 5m\n  blockAdmission: false\n")


def scrape(port):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        eq(r.headers.get("Content-Type"),
           "text/plain; version=0.0.4; charset=utf-8", "Content-Type")
        return r.read().decode()


LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{family: {"type": t, "samples": [(name, {label: value}, value)]}}"""
    fams = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            check(name not in fams, "family %s twice" % name)
            fams[name] = {"type": typ, "samples": []}
            continue
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
        check(m, "sample line %r" % line)
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        fam = name
        if fam not in fams:
            for suffix in ("_bucket", "_sum", "_count"):
                if name.endswith(suffix) and name[:-len(suffix)] in fams:
                    fam = name[:-len(suffix)]
        check(fam in fams, "sample %s before its # TYPE" % name)
        fams[fam]["samples"].append(
            (name, dict(LABEL.findall(labels)), float(value)))
    return fams


def value(fams, metric, /, **labels):
    """The value of the one sample of metric with these labels (a
    subset), or None."""
    fam = metric
    for suffix in ("_bucket", "_sum", "_count"):
        if metric.endswith(suffix) and metric[:-len(suffix)] in fams:
            fam = metric[:-len(suffix)]
    got = [v for n, ls, v in fams.get(fam, {}).get("samples", [])
           if n == metric and all(ls.get(k) == w for k, w in labels.items())]
    check(len(got) <= 1, "%s%r: %d samples" % (metric, labels, len(got)))
    return got[0] if got else None


def kueue_families():
    out = {}
    with open(KUEUE_LIST) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            labels = [] if parts[2] == "-" else parts[2].split(",")
            buckets = parts[3][len("buckets="):] if len(parts) > 3 else None
            out[parts[0]] = (parts[1], set(labels), buckets)
    return out


def compat_metric_rows():
    out = subprocess.run([os.path.join(BIN, "cueue-controller"),
                          "--compat-table"], capture_output=True, text=True,
                         timeout=30)
    eq(out.returncode, 0, "--compat-table")
    rows = {}
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0] == "Metric":
            rows[cells[1].strip("`")] = cells[3]
    return rows


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))


def job(ns, name, prio, cpu="1", runtime_ms=600000):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq",
                                    "kueue.x-k8s.io/priority-class": prio},
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "completions": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": cpu}}}],
                         "restartPolicy": "Never"}}}}


def cq_status(s, name):
    return s.get_json(KQ + "/clusterqueues/%s" % name).get("status", {})


def check_families(fams, kueue, compat):
    """Names, types, label names and buckets against Kueue's list."""
    for name, fam in sorted(fams.items()):
        check(name.startswith(("kueue_", "multikueue_", "cueue_",
                               "process_")),
              "family %s: neither Kueue's, cueue's nor process_" % name)
        if name not in kueue:
            check(not name.startswith("kueue_"),
                  "%s: not one of Kueue's families" % name)
            continue
        typ, labels, buckets = kueue[name]
        eq(fam["type"], typ, "%s: type" % name)
        check(fam["samples"], "%s exported empty" % name)
        les = set()
        for sample, ls, _ in fam["samples"]:
            got = set(ls)
            if sample.endswith("_bucket"):
                les.add(ls.get("le"))
                got.discard("le")
            eq(got, labels, "%s: label names of %s" % (name, sample))
        if typ == "histogram":
            eq(sorted(les, key=float), BUCKETS[buckets] + ["+Inf"],
               "%s: buckets" % name)
    for name in kueue:
        if name in compat:
            check(name not in fams, "%s: in the compatibility table as "
                  "not exported, yet in the scrape" % name)
            check(name not in NOT_REACHED, name)
        elif name not in NOT_REACHED:
            check(name in fams, "%s: neither in the scrape nor in the "
                  "compatibility table" % name)
    for name in compat:
        check(name in kueue, "compatibility row %s: not a Kueue family"
              % name)


def dashboard_metrics():
    """Every metric name the dashboard's queries use."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("expr", "definition") and isinstance(v, str):
                    exprs.append(v)
                elif k == "query" and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash)
    check(len(exprs) > 20, "dashboard queries: %d" % len(exprs))
    names = set()
    for e in exprs:
        names.update(re.findall(r"\b((?:kueue|cueue|process)_[a-z0-9_]+)",
                                e))
    return names


@case("scrape-after-scenario", simulate="jobs,scheduler")
def scrape_after_scenario(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("setup.yaml", SETUP))
    for ns, cq in (("team-a", "a"), ("team-b", "b")):
        s.namespace(ns)
        post(s, KQ + "/namespaces/%s/localqueues" % ns, {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": ns},
            "spec": {"clusterQueue": cq}})
    # A Node for the scheduler stand-in: the pods run and become ready.
    alloc = {"cpu": "64", "memory": "64Gi", "pods": "110"}
    post(s, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": "node-1"}, "spec": {},
                              "status": {"allocatable": alloc,
                                         "capacity": alloc}})
    port = free_port()
    started = time.time()
    ctl = Controller(s, config=config(port))
    # a: three low-priority Jobs of 1 cpu (2 nominal, 1 borrowed from b)
    # and one of 10 cpu that can never fit.
    for i in range(3):
        post(s, "/apis/batch/v1/namespaces/team-a/jobs",
             job("team-a", "low-%d" % i, "low"))
    wait_for(lambda: cq_status(s, "a").get("admittedWorkloads") == 3, 30,
             what="a admits 3 (borrowing 1)")
    post(s, "/apis/batch/v1/namespaces/team-a/jobs",
         job("team-a", "huge", "low", cpu="10"))

    def ready():
        wls = s.get_json(KQ + "/namespaces/team-a/workloads")["items"]
        return sum(1 for w in wls for c in w.get("status", {}).get(
            "conditions", []) if c["type"] == "PodsReady" and
            c["status"] == "True") == 3
    wait_for(ready, 30, what="a's pods ready")
    # b reclaims its quota: two short high-priority Jobs; the second
    # preempts a's borrowed workload, which waits, then runs again once
    # b's Jobs finished.
    for i in range(2):
        post(s, "/apis/batch/v1/namespaces/team-b/jobs",
             job("team-b", "high-%d" % i, "high", runtime_ms=1500))

    def settled():
        fams = parse(scrape(port))
        done = (value(fams, "kueue_finished_workloads_total",
                      cluster_queue="b") == 2 and
                value(fams, "kueue_admitted_active_workloads",
                      cluster_queue="a") == 3 and
                value(fams, "kueue_pending_workloads", cluster_queue="a",
                      status="inadmissible") == 1 and
                value(fams, "kueue_admitted_workloads_total",
                      cluster_queue="a") == 4 and
                # the gauges follow at the next status pass
                value(fams, "kueue_admitted_active_workloads",
                      cluster_queue="b") == 0 and
                value(fams, "kueue_cohort_subtree_admitted_active_workloads",
                      cohort="co") == 3)
        return fams if done else None
    fams = wait_for(settled, 40, interval=0.5,
                    what="b's Jobs finished, a's victim admitted again")

    # Values the scenario determines.
    want = [
        # admission, borrowing, requeue
        ("kueue_quota_reserved_workloads_total",
         dict(cluster_queue="a", priority_class="low"), 4),
        ("kueue_admitted_workloads_total",
         dict(cluster_queue="a", priority_class="low"), 4),
        ("kueue_admitted_workloads_total",
         dict(cluster_queue="b", priority_class="high"), 2),
        ("kueue_admission_wait_time_seconds_count",
         dict(cluster_queue="a", priority_class="low"), 4),
        ("kueue_quota_reserved_wait_time_seconds_count",
         dict(cluster_queue="b", priority_class="high"), 2),
        ("kueue_local_queue_admitted_workloads_total",
         dict(name="lq", namespace="team-a", priority_class="low"), 4),
        ("kueue_local_queue_quota_reserved_workloads_total",
         dict(name="lq", namespace="team-b", priority_class="high"), 2),
        ("kueue_local_queue_admission_wait_time_seconds_count",
         dict(name="lq", namespace="team-b", priority_class="high"), 2),
        ("kueue_admitted_active_workloads", dict(cluster_queue="a"), 3),
        ("kueue_admitted_active_workloads", dict(cluster_queue="b"), 0),
        ("kueue_reserving_active_workloads", dict(cluster_queue="a"), 3),
        ("kueue_local_queue_admitted_active_workloads",
         dict(name="lq", namespace="team-a"), 3),
        ("kueue_pending_workloads",
         dict(cluster_queue="a", status="inadmissible"), 1),
        ("kueue_pending_workloads", dict(cluster_queue="a", status="active"),
         0),
        ("kueue_local_queue_pending_workloads",
         dict(name="lq", namespace="team-a", status="inadmissible"), 1),
        ("kueue_cluster_queue_resource_usage",
         dict(cohort="co", cluster_queue="a", flavor="default-flavor",
              resource="cpu"), 3),
        ("kueue_cluster_queue_resource_reservation",
         dict(cohort="co", cluster_queue="b", flavor="default-flavor",
              resource="cpu"), 0),
        ("kueue_cluster_queue_nominal_quota",
         dict(cohort="co", cluster_queue="a", flavor="default-flavor",
              resource="cpu"), 2),
        ("kueue_cluster_queue_resource_pending",
         dict(cluster_queue="a", resource="cpu"), 10),
        ("kueue_cluster_queue_resource_pending",
         dict(cluster_queue="b", resource="cpu"), 0),
        ("kueue_cluster_queue_borrowing_limit",
         dict(cluster_queue="a", resource="cpu"), float("inf")),
        ("kueue_local_queue_resource_usage",
         dict(name="lq", namespace="team-a", flavor="default-flavor",
              resource="cpu"), 3),
        ("kueue_local_queue_resource_reservation",
         dict(name="lq", namespace="team-b", flavor="default-flavor",
              resource="cpu"), 0),
        ("kueue_cluster_queue_status",
         dict(cluster_queue="a", status="active"), 1),
        ("kueue_local_queue_status",
         dict(name="lq", namespace="team-a", active="True"), 1),
        # cohorts: co (explicit, under root) and root (implied)
        ("kueue_cluster_queue_info",
         dict(cluster_queue="a", parent_cohort="co", root_cohort="root"), 1),
        ("kueue_cohort_info",
         dict(cohort="co", parent_cohort="root", root_cohort="root"), 1),
        ("kueue_cohort_info",
         dict(cohort="root", parent_cohort="", root_cohort="root"), 1),
        ("kueue_cohort_subtree_quota",
         dict(cohort="co", flavor="default-flavor", resource="cpu"), 4),
        ("kueue_cohort_subtree_quota",
         dict(cohort="root", flavor="default-flavor", resource="cpu"), 4),
        ("kueue_cohort_subtree_resource_reservations",
         dict(cohort="root", flavor="default-flavor", resource="cpu"), 3),
        ("kueue_cohort_subtree_admitted_active_workloads",
         dict(cohort="co"), 3),
        ("kueue_cohort_subtree_admitted_workloads_total",
         dict(cohort="root", priority_class="low"), 4),
        ("kueue_cohort_subtree_admitted_workloads_total",
         dict(cohort="co", priority_class="high"), 2),
        # preemption and eviction
        ("kueue_preempted_workloads_total",
         dict(preempting_cluster_queue="b", reason="InCohortReclamation"),
         1),
        ("kueue_evicted_workloads_total",
         dict(cluster_queue="a", reason="Preempted", underlying_cause="",
              priority_class="low"), 1),
        ("kueue_evicted_workloads_once_total",
         dict(cluster_queue="a", reason="Preempted", underlying_cause="",
              priority_class="low"), 1),
        ("kueue_local_queue_evicted_workloads_total",
         dict(name="lq", namespace="team-a", reason="Preempted",
              priority_class="low"), 1),
        ("kueue_workload_eviction_latency_seconds_count",
         dict(cluster_queue="a", reason="Preempted"), 1),
        ("kueue_pods_ready_to_evicted_time_seconds_count",
         dict(cluster_queue="a", reason="Preempted"), 1),
        # finishing
        ("kueue_finished_workloads_total",
         dict(cluster_queue="b", priority_class="high"), 2),
        ("kueue_finished_workloads", dict(cluster_queue="b"), 2),
        ("kueue_local_queue_finished_workloads_total",
         dict(name="lq", namespace="team-b", priority_class="high"), 2),
        ("kueue_local_queue_finished_workloads",
         dict(name="lq", namespace="team-b"), 2),
        ("kueue_execution_time_seconds_count",
         dict(cluster_queue="b", priority_class="high"), 2),
        ("kueue_local_queue_execution_time_seconds_count",
         dict(name="lq", namespace="team-b", priority_class="high"), 2),
        # the job framework: every Job got its Workload
        ("kueue_workload_creation_latency_seconds_count",
         dict(job_kind="Job"), 6),
        # pods ready (the scheduler stand-in's pods are ready at once)
        ("kueue_ready_wait_time_seconds_count",
         dict(cluster_queue="b", priority_class="high"), 2),
        ("kueue_local_queue_ready_wait_time_seconds_count",
         dict(name="lq", namespace="team-b", priority_class="high"), 2),
    ]
    bad = []
    for name, labels, w in want:
        got = value(fams, name, **labels)
        if got != w:
            bad.append("%s%r = %r, want %r" % (name, labels, got, w))
    if bad:
        raise Failure("values:\n  " + "\n  ".join(bad))
    # Unadmitted: the Workload that never fits, whatever its reasons; none
    # in b (its Workloads finished).
    def unadmitted(fam, **labels):
        return sum(v for _, ls, v in fams.get(fam, {}).get("samples", [])
                   if all(ls.get(k) == w for k, w in labels.items()))
    eq(unadmitted("kueue_unadmitted_workloads", cluster_queue="a"), 1,
       "unadmitted in a")
    eq(unadmitted("kueue_unadmitted_workloads", cluster_queue="b"), 0,
       "unadmitted in b")
    eq(unadmitted("kueue_local_queue_unadmitted_workloads",
                  namespace="team-a", cluster_queue="a"), 1,
       "unadmitted in team-a/lq")
    # Admission attempts: one per cycle, some of them successes.
    check((value(fams, "kueue_admission_attempts_total",
                 result="success") or 0) >= 3, "successful attempts")
    check(value(fams, "kueue_admission_attempt_duration_seconds_count",
                result="success") ==
          value(fams, "kueue_admission_attempts_total", result="success"),
          "one attempt duration per attempt")
    # Every series carries replica_role (standalone here) but build_info.
    for name, fam in fams.items():
        if name.startswith("kueue_") and name != "kueue_build_info":
            for sample, ls, _ in fam["samples"]:
                eq(ls.get("replica_role"), "standalone", sample)

    check_families(fams, kueue_families(), compat_metric_rows())

    # process_*, as client libraries export them.
    for name, typ in (("process_cpu_seconds_total", "counter"),
                      ("process_resident_memory_bytes", "gauge"),
                      ("process_virtual_memory_bytes", "gauge"),
                      ("process_open_fds", "gauge"),
                      ("process_max_fds", "gauge"),
                      ("process_start_time_seconds", "gauge")):
        check(name in fams, "%s missing" % name)
        eq(fams[name]["type"], typ, name)
    start = value(fams, "process_start_time_seconds")
    check(started - 5 <= start <= time.time(),
          "process_start_time_seconds %r, started at %r" % (start, started))
    check(value(fams, "process_resident_memory_bytes") > 1 << 20, "rss")
    check(value(fams, "process_open_fds") >= 3, "open fds")

    # The dashboard queries only what is exported.
    missing = sorted(n for n in dashboard_metrics()
                     if n not in fams and not any(
                         n.endswith(x) and n[:-len(x)] in fams
                         for x in ("_bucket", "_sum", "_count")))
    eq(missing, [], "dashboard metrics missing from the scrape")
    ctl.stop()


@case("families-gated-off", simulate="jobs")
def families_gated_off(s):
    """Kueue's options and gates turned off take their families away:
    enableClusterQueueResources (quota, usage, pending resources),
    localQueueMetrics.enable (every kueue_local_queue_*), and the gates
    MetricsForCohorts, MetricForWorkloadCreationLatency and
    UnadmittedWorkloadsObservability."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("setup.yaml", SETUP))
    s.namespace("team-a")
    post(s, KQ + "/namespaces/team-a/localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "team-a"},
        "spec": {"clusterQueue": "a"}})
    port = free_port()
    cfg = CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  localQueueMetrics:\n    enable: false' % port) + (
        "integrations:\n  frameworks: [\"batch/job\"]\n"
        "featureGates:\n  MetricsForCohorts: false\n"
        "  MetricForWorkloadCreationLatency: false\n"
        "  UnadmittedWorkloadsObservability: false\n")
    ctl = Controller(s, config=cfg)
    post(s, "/apis/batch/v1/namespaces/team-a/jobs",
         job("team-a", "one", "low"))
    post(s, "/apis/batch/v1/namespaces/team-a/jobs",
         job("team-a", "huge", "low", cpu="10"))

    def scraped():
        try:
            fams = parse(scrape(port))
        except OSError:  # not listening yet
            return None
        return fams if (value(fams, "kueue_admitted_workloads_total",
                              cluster_queue="a") == 1 and
                        value(fams, "kueue_pending_workloads",
                              cluster_queue="a", status="inadmissible") == 1
                        ) else None
    fams = wait_for(scraped, 30, interval=0.5, what="one admitted, one "
                    "inadmissible")
    gone = sorted(n for n in fams if n.startswith((
        "kueue_local_queue_", "kueue_cohort_", "kueue_unadmitted_",
        "kueue_workload_creation_latency_")) or n in (
        "kueue_cluster_queue_info", "kueue_cluster_queue_nominal_quota",
        "kueue_cluster_queue_borrowing_limit",
        "kueue_cluster_queue_lending_limit",
        "kueue_cluster_queue_resource_usage",
        "kueue_cluster_queue_resource_reservation",
        "kueue_cluster_queue_resource_pending"))
    eq(gone, [], "families exported though turned off")
    for name in ("kueue_cluster_queue_status", "kueue_admitted_active_workloads",
                 "kueue_quota_reserved_workloads_total", "process_open_fds"):
        check(name in fams, "%s missing" % name)
    ctl.stop()


if __name__ == "__main__":
    run_cases()
