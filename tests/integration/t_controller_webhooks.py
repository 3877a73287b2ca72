# SPDX-License-Identifier: Apache-2.0
"""cueue-controller's admission webhooks, called by cueue-apiserver as
kube-apiserver calls them (TLS verified with the webhook configuration's
caBundle; the service reference is dialled on 127.0.0.1).

- A Job created unsuspended in a managed namespace is stored suspended
  (it can never run before admission), then admitted and run.
- The same Job in a namespace outside managedJobsNamespaceSelector is
  stored unchanged, runs, and the controller never writes to it.
- A user cannot unsuspend a managed Job that is not admitted.
- A ClusterQueue with a negative quota is refused with the field named.
- With the controller down, Jobs in unmanaged namespaces are still
  created (the webhook configuration's namespaceSelector mirrors the
  managed-namespace selector); in managed ones creation fails closed."""
import base64
import os
import socket
import time

import yaml

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, mint_certs, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
ADM = "/apis/admissionregistration.k8s.io/v1"
SVC = {"namespace": "cueue-system", "name": "cueue-webhook-service"}
EXCLUDED = ["kube-system", "cueue-system", "free"]


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def config(port, cert_dir):
    return CONTROLLER_CONFIG + """namespace: cueue-system
webhook:
  port: %d
  host: 127.0.0.1
  certDir: %s
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [%s]
integrations:
  frameworks: ["batch/job"]
""" % (port, cert_dir, ", ".join(EXCLUDED))


def shipped_webhooks(port, ca):
    """manifests/webhooks/webhooks.yaml as shipped, pointed at this test's
    port and CA, with namespace `free` added to the excluded ones (as a
    user changing managedJobsNamespaceSelector must)."""
    with open(os.path.join(MANIFESTS, "webhooks", "webhooks.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    for d in docs:
        for w in d["webhooks"]:
            w["clientConfig"]["service"]["port"] = port
            w["clientConfig"]["caBundle"] = ca
            for e in w.get("namespaceSelector", {}).get(
                    "matchExpressions", []):
                if w["name"] in ("mjob.cueue.dev", "vjob.cueue.dev",
                                 "mjobset.cueue.dev", "vjobset.cueue.dev"):
                    e["values"] = EXCLUDED
    return docs


def mint(d):
    """The serving certificate, as the mounted Secret holds it."""
    mint_certs(d, "DNS:cueue-webhook-service.cueue-system.svc")
    os.rename(os.path.join(d, "srv.crt"), os.path.join(d, "tls.crt"))
    os.rename(os.path.join(d, "srv.key"), os.path.join(d, "tls.key"))
    with open(os.path.join(d, "ca.crt"), "rb") as f:
        return base64.b64encode(f.read()).decode()


def setup(s):
    """CRDs, queues, namespaces, certificates, the shipped webhook
    configurations.
    Returns (port, cert_dir)."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", flavor_and_queue(2)))
    for ns in ("team", "free", "cueue-system"):
        s.namespace(ns)
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues",
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "team"},
         "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)
    d = os.path.join(s.dir, "webhook-certs")  # removed with the server
    os.mkdir(d)
    ca = mint(d)
    port = free_port()
    for obj in shipped_webhooks(port, ca):
        path = obj["kind"].lower() + "s"
        code, _, body = s.raw("POST", "%s/%s" % (ADM, path), obj)
        eq(code, 201, "%s: %r" % (path, body))
    return port, d


def job(ns, name, cpu="1", runtime_ms=600, queue=True):
    labels = {"kueue.x-k8s.io/queue-name": "lq"} if queue else {}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": False, "template": {
                "spec": {"containers": [{
                    "name": "c", "image": "busybox",
                    "resources": {"requests": {"cpu": cpu}}}],
                    "restartPolicy": "Never"}}}}


def succeeded(s, ns, name):
    j = s.get_json("/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, name))
    return j.get("status", {}).get("succeeded") == 1


@case("webhook-suspends-managed-jobs-only", simulate="jobs")
def suspends_managed_only(s):
    port, d = setup(s)
    ctl = Controller(s, config=config(port, d))
    wait_for(lambda: s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                           job("team", "probe"), timeout=10)[0] == 201, 15,
             what="webhook serving")
    since = s.access_log()[-1]["seq"] if s.access_log() else 0
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "managed"))
    eq(code, 201, "create managed: %r" % body)
    eq(body["spec"]["suspend"], True, "stored suspended by the webhook")
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/free/jobs",
                          job("free", "free-job", queue=True))
    eq(code, 201, "create unmanaged: %r" % body)
    eq(body["spec"]["suspend"], False, "unmanaged namespace untouched")
    wait_for(lambda: succeeded(s, "team", "managed"), 20,
             what="managed job admitted and run")
    wait_for(lambda: succeeded(s, "free", "free-job"), 20,
             what="unmanaged job ran")
    writes = [e for e in s.access_log(since)
              if e["userAgent"].startswith("cueue-controller/")
              and e["verb"] not in ("GET", "LIST", "WATCH")
              and "/namespaces/free/" in e["path"]]
    eq(writes, [], "no controller writes in the unmanaged namespace")

    # A user may not unsuspend a managed job that is not admitted: one
    # that does not fit (3 cpu of 2) stays pending.
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "big", cpu="3"))
    eq(code, 201, "create big: %r" % body)
    time.sleep(1.0)
    code, _, body = s.raw(
        "PATCH", "/apis/batch/v1/namespaces/team/jobs/big",
        {"spec": {"suspend": False}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 403, "unsuspend refused: %r" % body)
    check('admission webhook "vjob.cueue.dev" denied the request' in
          body["message"] and "spec.suspend" in body["message"],
          body["message"])

    # Kueue kinds are validated, the field named.
    bad = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
           "metadata": {"name": "bad"}, "spec": {"resourceGroups": [{
               "coveredResources": ["cpu"], "flavors": [{
                   "name": "default-flavor", "resources": [
                       {"name": "cpu", "nominalQuota": "-1"}]}]}]}}
    code, _, body = s.raw("POST", "/apis/kueue.x-k8s.io/v1beta2/"
                          "clusterqueues", bad)
    eq(code, 403, "negative quota refused: %r" % body)
    check("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
          in body["message"], body["message"])
    ctl.stop()


@case("webhook-down-unmanaged-namespaces-still-work", simulate="jobs")
def controller_down(s):
    port, d = setup(s)
    # No controller: nothing serves the webhook port.
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/free/jobs",
                          job("free", "still-works"))
    eq(code, 201, "unmanaged namespace unaffected: %r" % body)
    eq(body["spec"]["suspend"], False)
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "refused"))
    eq(code, 500, "managed namespace fails closed: %r" % body)
    check('failed calling webhook "mjob.cueue.dev"' in body["message"],
          body["message"])

    # A controller started before its Secret is mounted serves as soon as
    # the certificate appears.
    later = os.path.join(s.dir, "mounted-later")
    os.mkdir(later)
    ctl = Controller(s, config=config(port, later))
    time.sleep(1.0)
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job("team", "early"))
    eq(code, 500, "no certificate yet: %r" % body)
    for f in ("tls.crt", "tls.key"):
        os.link(os.path.join(d, f), os.path.join(later, f))
    wait_for(lambda: s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                           job("team", "late"), timeout=10)[0] == 201, 20,
             what="webhook served once the certificate is mounted")
    ctl.stop()


run_cases()
