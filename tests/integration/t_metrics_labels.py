# SPDX-License-Identifier: Apache-2.0
"""metrics.customLabels as in Kueue's "custom metric labels" task: with
the CustomMetricLabels gate on, a ClusterQueue label and a LocalQueue
annotation become custom_<name> labels on Kueue's ClusterQueue and
LocalQueue metrics (a value trackedValues does not list is
kueue.x-k8s.io/_UNTRACKED_VALUE_); a Workload-sourced label (a job
label, trackedValues required) splits kueue_admitted_active_workloads
by value as in Kueue's "break down workloads by type" example, and, as
Kueue's pkg/metrics, kueue_pending_workloads and the LocalQueue families
local_queue_admitted_active_workloads, local_queue_admitted_workloads_total
and local_queue_admission_wait_time_seconds; with the gate off (Kueue's default) the configuration loads and no label is
added."""
import os
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, free_port,
                     wait_for)

SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
  labels: {team: ml}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: lq
  annotations: {example.com/cost-center: gold}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: other
  annotations: {example.com/cost-center: lead}
spec: {clusterQueue: cq}
"""

LABELS = """  customLabels:
  - name: team
  - name: cost_center
    sourceAnnotationKey: example.com/cost-center
    sourceKind: LocalQueue
    trackedValues: [gold, silver]
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: %s}
  annotations: {cueue.dev/sim-runtime-ms: "600000"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: "1"}}
"""


WL_LABELS = """  - name: workload_type
    sourceKind: Workload
    sourceLabelKey: company.com/workload-type
    trackedValues: [inference, training]
"""

TYPED_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq, company.com/workload-type: %s}
  annotations: {cueue.dev/sim-runtime-ms: "600000"}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: "1"}}
"""


def config(port, gate, extra=""):
    cfg = CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n' % port + LABELS +
        extra)
    if gate:
        cfg += "featureGates:\n  CustomMetricLabels: true\n"
    return cfg


def scrape(port):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read().decode()


def run(s, gate):
    s.kubectl("apply", "-f", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "manifests",
        "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", "-", input=SETUP)
    port = free_port()
    ctl = Controller(s, config=config(port, gate))
    s.kubectl("apply", "-f", "-", input=JOB % ("a", "lq"))
    s.kubectl("apply", "-f", "-", input=JOB % ("b", "other"))
    text = wait_for(lambda: (lambda t: t if t.count(
        "kueue_local_queue_admitted_workloads_total{") >= 2 else None)(
        scrape(port)), 30, what="both admitted in the metrics")
    return ctl, text


@case("custom-labels-on-kueue-metrics", simulate="jobs")
def custom_labels(s):
    ctl, text = run(s, True)
    check('kueue_admitted_workloads_total{cluster_queue="cq",'
          'priority_class="",custom_team="ml",replica_role="standalone"} 2'
          in text, text)
    check('kueue_local_queue_admitted_workloads_total{name="lq",'
          'namespace="default",priority_class="",custom_cost_center="gold",'
          in text, text)
    check('kueue_local_queue_admitted_workloads_total{name="other",'
          'namespace="default",priority_class="",custom_cost_center='
          '"kueue.x-k8s.io/_UNTRACKED_VALUE_",' in text, text)
    check('kueue_admission_attempts_total{result="success",'
          'replica_role="standalone"}' in text, "no custom labels there")
    ctl.stop()


def typed_four(s):
    """CRDs and queues, a controller with the Workload-sourced label, and
    Jobs i1, i2 (inference), t1 (training), x1 (batch): the quota's 4."""
    s.kubectl("apply", "-f", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "manifests",
        "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", "-", input=SETUP)
    port = free_port()
    ctl = Controller(s, config=config(port, True, WL_LABELS))
    for name, kind in (("i1", "inference"), ("i2", "inference"),
                       ("t1", "training"), ("x1", "batch")):
        s.kubectl("apply", "-f", "-", input=TYPED_JOB % (name, kind))
    return ctl, port


@case("workload-labels-split-admitted-active", simulate="jobs")
def workload_labels(s):
    ctl, port = typed_four(s)
    head = 'kueue_admitted_active_workloads{cluster_queue="cq",' \
        'custom_team="ml",custom_workload_type='
    want = [head + '"inference",replica_role="standalone"} 2',
            head + '"training",replica_role="standalone"} 1',
            head + '"kueue.x-k8s.io/_UNTRACKED_VALUE_",'
            'replica_role="standalone"} 1']

    def split():
        t = scrape(port)
        return t if all(w in t for w in want) else None
    text = wait_for(split, 30, what="kueue_admitted_active_workloads split "
                    "by workload type")
    check(text.count("kueue_admitted_active_workloads{") == 3,
          "one series per value: %s" % "\n".join(
              l for l in text.splitlines()
              if l.startswith("kueue_admitted_active_workloads{")))
    check('kueue_reserving_active_workloads{cluster_queue="cq",'
          'custom_team="ml",replica_role="standalone"} 4' in text,
          "other families keep only the ClusterQueue labels")
    # Kueue copies the source label from the job onto its Workload.
    wls = s.get_json("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/"
                     "workloads")["items"]
    typed = sorted(w["metadata"].get("labels", {}).get(
        "company.com/workload-type", "") for w in wls)
    check(typed == ["batch", "inference", "inference", "training"],
          "the Workloads carry the job's label: %r" % typed)
    ctl.stop()


def series(text, family, *parts):
    """The values of family's series whose label text holds every part."""
    out = []
    for line in text.splitlines():
        if line.startswith(family + "{") and all(p in line for p in parts):
            out.append(float(line.rsplit(" ", 1)[1]))
    return out


@case("workload-labels-on-pending-and-local-queue", simulate="jobs")
def workload_labels_pending_lq(s):
    ctl, port = typed_four(s)
    wait_for(lambda: 'custom_team="ml",replica_role="standalone"} 4' in
             scrape(port), 30, what="four admitted")
    # The quota is full: these wait.
    for name, kind in (("p1", "inference"), ("p2", "training"),
                       ("p3", "training")):
        s.kubectl("apply", "-f", "-", input=TYPED_JOB % (name, kind))
    wt = 'custom_workload_type="%s"'
    lq = 'name="lq",namespace="default"'
    want = [
        ("kueue_pending_workloads", ['cluster_queue="cq"',
                                     'custom_team="ml"', wt % "inference"],
         1),
        ("kueue_pending_workloads", ['cluster_queue="cq"', wt % "training"],
         2),
        ("kueue_local_queue_admitted_active_workloads",
         [lq, 'custom_cost_center="gold"', wt % "inference"], 2),
        ("kueue_local_queue_admitted_active_workloads",
         [lq, wt % "training"], 1),
        ("kueue_local_queue_admitted_active_workloads",
         [lq, wt % "kueue.x-k8s.io/_UNTRACKED_VALUE_"], 1),
        ("kueue_local_queue_admitted_workloads_total",
         [lq, 'priority_class=""', wt % "inference"], 2),
        ("kueue_local_queue_admission_wait_time_seconds_count",
         [lq, wt % "training"], 1),
    ]

    def split():
        t = scrape(port)
        return t if all(sum(series(t, f, *p)) == v and series(t, f, *p)
                        for f, p, v in want) else None
    text = wait_for(split, 30, what="pending and LocalQueue families split "
                    "by workload type")
    pend = [l for l in text.splitlines()
            if l.startswith("kueue_pending_workloads{")]
    check(all(wt[:-4] in l for l in pend) and
          sum(float(l.rsplit(" ", 1)[1]) for l in pend) == 3,
          "every pending series carries the label, 3 in all: %s" % pend)
    check(series(text, "kueue_admitted_workloads_total", 'custom_team="ml"')
          == [4.0] and "custom_workload_type" not in "".join(
              l for l in text.splitlines()
              if l.startswith("kueue_admitted_workloads_total{")),
          "kueue_admitted_workloads_total has no Workload labels in Kueue")
    ctl.stop()


@case("gate-off-no-custom-labels", simulate="jobs")
def gate_off(s):
    ctl, text = run(s, False)
    check("custom_" not in text, text)
    ctl.stop()


if __name__ == "__main__":
    from cuetest import run_cases
    run_cases()
