# SPDX-License-Identifier: Apache-2.0
"""Shared builders of the pod-based framework tests (t_fw_pods.py): a plain
Pod, a pod-group Pod, a Deployment, and a sampler of the cpu the running
Pods of a namespace ask for at once."""
import threading
import time

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ADMISSION_GATE = "kueue.x-k8s.io/admission"


def pod_spec(cpu, restart="Never"):
    return {"restartPolicy": restart, "containers": [{
        "name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": cpu}}}]}


def plain_pod(ns, name, cpu="1", runtime_ms=1000, queue="lq", labels=None):
    """A Pod asking `cpu`, running runtime_ms once started, labelled with
    queue (None: no queue-name label)."""
    lab = dict(labels or {})
    if queue is not None:
        lab[QUEUE_LABEL] = queue
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": lab,
                         "annotations": {
                             "cueue.dev/sim-runtime-ms": str(runtime_ms)}},
            "spec": pod_spec(cpu)}


def group_pod(ns, name, group, total, cpu="1", runtime_ms=1000,
               queue="lq", fail=False):
    """A Pod of pod group `group` (kueue.x-k8s.io/pod-group-name) of
    `total` Pods (pod-group-total-count)."""
    p = plain_pod(ns, name, cpu, runtime_ms, queue,
                  {"kueue.x-k8s.io/pod-group-name": group})
    p["metadata"]["annotations"][
        "kueue.x-k8s.io/pod-group-total-count"] = str(total)
    if fail:
        p["metadata"]["annotations"]["cueue.dev/sim-fail"] = "true"
    return p


def deployment(ns, name, replicas, cpu="1", queue="lq", on_template=True):
    """A Deployment of `replicas` long-running Pods; queue goes on the
    Deployment (None: nowhere) and, when on_template, its pod template
    (else the deployment webhook is to copy it there)."""
    lab = {QUEUE_LABEL: queue} if queue is not None else {}
    tl = dict(lab if on_template else {}, app=name)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": lab},
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": tl},
                                  "spec": pod_spec(cpu, "Always")}}}


def gated(pod):
    return any(g.get("name") == ADMISSION_GATE
               for g in pod["spec"].get("schedulingGates") or [])


def cpu_milli(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


class PodSampler:
    """The most cpu the Running Pods of namespace ns asked at once, and
    every Pod name seen Running with the node selector it had then."""

    def __init__(self, s, ns):
        self.s, self.ns, self.peak = s, ns, 0
        self.selectors = {}
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            items = self.s.get_json("/api/v1/namespaces/%s/pods"
                                    % self.ns)["items"]
            running = [p for p in items
                       if p.get("status", {}).get("phase") == "Running"]
            used = sum(cpu_milli(c["resources"]["requests"]["cpu"])
                       for p in running for c in p["spec"]["containers"])
            for p in running:
                self.selectors[p["metadata"]["name"]] = \
                    p["spec"].get("nodeSelector")
            self.peak = max(self.peak, used)
            time.sleep(0.05)

    def done(self):
        self.stop.set()
        self.t.join()
        return self.peak
