# SPDX-License-Identifier: Apache-2.0
"""cuetest.frameworks - shared pieces of the framework tests
(t_fw_*.py, docs/frameworks.md) run against cueue-apiserver --simulate.

  setup(s, queues)    CRDs, namespaces team and outside, the queues
  QUEUES              ResourceFlavor pool-a (node label pool=a), a 3 cpu
                      ClusterQueue cq preempting lower priorities,
                      LocalQueue team/lq, priority classes high and low
  config(*frameworks) a controller config managing them, the gate
                      excluding namespace outside
  start(s, config)    the controller, once its informers synced
  owned_workloads(s, kind)
                      the Workloads of namespace team whose owner is a kind
  sample(name, ...)   a tests/data/frameworks sample as a dict, queued to
                      LocalQueue lq in namespace team
  cond_true(obj, t)   a status condition of type t is True
  PodWatch(s, ns)     the pods of a namespace followed by LIST + WATCH:
                      the peak cpu of running pods at any observed
                      instant, and each pod's node selector when it ran
  controller_writes(s, mark, pred)
                      the controller's writes after mark whose path
                      pred accepts
  webhooks(s)         the shipped webhook configurations installed,
                      pointed at a fresh port and CA
  queues(cpu, lq)     ResourceFlavor pool-a (node label pool: a), a
                      ClusterQueue cq of `cpu` preempting lower priority,
                      LocalQueue lq in team, priority classes high, low
  create(s, path, o)  POST o to path, retried while the webhook server
                      starts
"""
import os
import threading
import time

import yaml

from .checks import wait_for
from .env import ROOT
from .observe import Observer
from .pods import cpu_milli
from .procs import CONTROLLER_CONFIG, Controller
from .webhooks import install_webhooks as webhooks  # noqa: F401

WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads"

# Every namespace but kube-system, kueue-system and outside is managed.
SELECTOR = """managedJobsNamespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [kube-system, kueue-system, outside]
"""


def queues(cpu, lq="lq", memory=None):
    """The queues, cpu quota `cpu` (and `memory`, covered too when
    given)."""
    covered = "[cpu, memory]" if memory else "[cpu]"
    mem = "\n      - {name: memory, nominalQuota: %s}" % memory \
        if memory else ""
    return """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec:
  nodeLabels: {pool: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: %s
    flavors:
    - name: pool-a
      resources:
      - {name: cpu, nominalQuota: %s}%s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %s, namespace: team}
spec: {clusterQueue: cq}
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
""" % (covered, cpu, mem, lq)


QUEUES = queues(3, memory="64Gi")


def config(*frameworks):
    return CONTROLLER_CONFIG + SELECTOR + """integrations:
  frameworks: [%s]
""" % ", ".join('"%s"' % f for f in frameworks)


def start(s, cfg):
    ctl = Controller(s, config=cfg)
    wait_for(lambda: "informers synced" in open(ctl.log).read(), 30,
             what="the controller's informers synced")
    return ctl


def owned_workloads(s, kind):
    return [w for w in s.get_json(WLS % "team")["items"]
            if w["metadata"]["ownerReferences"][0]["kind"] == kind]


def cond_true(obj, typ):
    return any(c.get("type") == typ and c.get("status") == "True"
               for c in obj.get("status", {}).get("conditions", []))


def setup(s, queues):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("team")
    s.namespace("outside")
    s.kubectl("apply", "-f", s.file("queues.yaml", queues))


def sample(file, name, ns="team", queue="lq", suspend=None,
           runtime_ms=None, priority=None):
    """tests/data/frameworks/<file> renamed to name in ns, queued to
    queue (None: no queue-name label); suspend sets spec.suspend;
    runtime_ms the object's cueue.dev/sim-runtime-ms; priority its
    kueue.x-k8s.io/priority-class label."""
    with open(os.path.join(ROOT, "tests", "data", "frameworks",
                           file)) as f:
        obj = yaml.safe_load(f)
    md = obj["metadata"]
    md["name"], md["namespace"] = name, ns
    labels = md.setdefault("labels", {})
    labels.pop("kueue.x-k8s.io/queue-name", None)
    if queue is not None:
        labels["kueue.x-k8s.io/queue-name"] = queue
    if priority is not None:
        labels["kueue.x-k8s.io/priority-class"] = priority
    if runtime_ms is not None:
        md.setdefault("annotations", {})["cueue.dev/sim-runtime-ms"] = \
            str(runtime_ms)
    if suspend is not None:
        obj["spec"]["suspend"] = suspend
    return obj


def pod_cpu(p):
    return sum(cpu_milli(c.get("resources", {}).get("requests", {})
                         .get("cpu", "0"))
               for c in p["spec"]["containers"])


class PodWatch:
    """Pods of namespace ns followed by an Observer: peak is the most
    cpu the Running pods asked at any instant of the watch history,
    ran maps each pod that was ever Running to its labels and node
    selector then."""

    def __init__(self, s, ns):
        self.running, self.ran, self.peak = {}, {}, 0
        self.lock = threading.Lock()
        self.obs = Observer(s, "/api/v1/namespaces/%s/pods" % ns,
                            on_change=self._change)

    def _change(self, name, old, new, rv, relisting):
        with self.lock:
            if new is not None and new.get("status", {}).get(
                    "phase") == "Running":
                self.running[name] = pod_cpu(new)
                self.ran.setdefault(name, (
                    new["metadata"].get("labels", {}),
                    new["spec"].get("nodeSelector")))
            else:
                self.running.pop(name, None)
            self.peak = max(self.peak, sum(self.running.values()))

    def done(self):
        self.obs.stop()
        return self.peak


def controller_writes(s, mark, pred):
    return [(e["verb"], e["path"]) for e in s.access_log(mark)
            if e["userAgent"].startswith("cueue-controller/")
            and e["verb"] in ("POST", "PUT", "PATCH", "DELETE")
            and pred(e["path"])]


# Every namespace but kube-system, kueue-system and outside is managed.
def create(s, path, obj):
    """POST, retried while the webhook server is still starting."""
    body = None
    for _ in range(50):
        code, _, body = s.raw("POST", path, obj)
        if code == 201:
            return body
        time.sleep(1)
    raise AssertionError("create %s: %r" % (obj["metadata"]["name"], body))
