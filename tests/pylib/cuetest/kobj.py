# SPDX-License-Identifier: Apache-2.0
"""cuetest.kobj - small helpers on Kubernetes objects as JSON dicts:
status conditions, cpu quantities, and a queued Job."""


def milli(q):
    """A cpu quantity ("2", "500m", "0.5") in milli-cpu."""
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(round(float(q) * 1000))


def cond(obj, t):
    """The status condition of type t of obj (None-safe), or None."""
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == t:
            return c
    return None


def is_true(obj, t):
    """obj has condition t with status True."""
    c = cond(obj, t)
    return c is not None and c.get("status") == "True"


def queued_job(ns, name, cpu="1", queue="lq", suspend=True):
    """A batch/v1 Job of one pod asking `cpu`, labelled for LocalQueue
    `queue` in `ns`, created suspended (admission unsuspends it)."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": 1, "suspend": suspend,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": cpu}}}],
                         "restartPolicy": "Never"}}}}
