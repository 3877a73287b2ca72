# SPDX-License-Identifier: Apache-2.0
"""internalCertManagement keeps the caBundle injected (issue 32): the
webhook configurations and the conversion CRDs are watched by name, and
a caBundle found missing or stale is restored by a pass at once.

- cabundle-kept: the controller starts before any webhook configuration
  exists. The shipped configurations applied afterwards get the Secret's
  CA; deleted and re-created, they get it again; replaced by the shipped
  manifest (kubectl replace: no caBundle, as an older manifest applied
  over them), they get it back; a conversion CRD whose caBundle is
  replaced by a stale one gets the current one back. Jobs created
  afterwards pass the webhook (the API server trusts it). The times are
  printed; the deadlines asserted are generous ones."""
import base64
import copy
import os
import time

import yaml

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, free_port, queued_job, run_cases,
                     wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
ADM = "/apis/admissionregistration.k8s.io/v1"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" \
    "workloads.kueue.x-k8s.io"
SECRET = "/api/v1/namespaces/cueue-system/secrets/cueue-webhook-server-cert"
KINDS = {"MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
         "ValidatingWebhookConfiguration": "validatingwebhookconfigurations"}


def config(port, cert_dir):
    return CONTROLLER_CONFIG.replace(
        "internalCertManagement:\n  enable: false\n",
        "internalCertManagement:\n  enable: true\n"
        "  webhookServiceName: cueue-webhook-service\n"
        "  webhookSecretName: cueue-webhook-server-cert\n") + """namespace: cueue-system
webhook:
  port: %d
  host: 127.0.0.1
  certDir: %s
manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
""" % (port, cert_dir)


def shipped(port):
    """The shipped configurations, pointed at this test's port."""
    with open(os.path.join(MANIFESTS, "webhooks", "webhooks.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        for w in d["webhooks"]:
            w["clientConfig"]["service"]["port"] = port
    return docs


def bundles(s, doc):
    code, _, body = s.raw("GET", "%s/%s/%s" % (
        ADM, KINDS[doc["kind"]], doc["metadata"]["name"]))
    if code != 200:
        return None
    return [w["clientConfig"].get("caBundle") for w in body["webhooks"]]


def injected(s, docs, ca):
    return all(bundles(s, d) is not None and
               all(b == ca for b in bundles(s, d)) for d in docs)


def timed(what, fn, deadline=60):
    t0 = time.monotonic()
    wait_for(fn, deadline, what=what)
    took = time.monotonic() - t0
    print("    %s: %.2f s" % (what, took), flush=True)
    return took


@case("cabundle-kept")
def cabundle_kept(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("queues.yaml", flavor_and_queue(4)))
    for ns in ("team", "cueue-system"):
        s.namespace(ns)
    port = free_port()
    d = os.path.join(s.dir, "certs")
    os.mkdir(d)
    ctl = Controller(s, config=config(port, d))
    sec = wait_for(lambda: (lambda r: r[0] == 200 and r[2])(
        s.raw("GET", SECRET)), 30, what="the certificate Secret")
    ca = sec["data"]["ca.crt"]
    wait_for(lambda: s.get_json(CRD)["spec"]["conversion"]["webhook"][
        "clientConfig"].get("caBundle") == ca, 30,
        what="the CRDs' caBundle at start")
    docs = shipped(port)
    path = s.file("webhooks.yaml", yaml.safe_dump_all(docs))
    # Applied after the start.
    s.kubectl("apply", "-f", path)
    timed("caBundle of configurations applied after the start",
          lambda: injected(s, docs, ca))
    # Deleted and re-created.
    s.kubectl("delete", "-f", path)
    s.kubectl("apply", "-f", path)
    timed("caBundle of configurations deleted and re-created",
          lambda: injected(s, docs, ca))
    # Replaced by the shipped manifest (no caBundle).
    s.kubectl("replace", "-f", path)
    timed("caBundle of configurations replaced by the shipped manifest",
          lambda: injected(s, docs, ca))
    # A conversion CRD with a stale caBundle.
    crd = s.get_json(CRD)
    stale = copy.deepcopy(crd)
    stale["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = \
        base64.b64encode(b"-----BEGIN CERTIFICATE-----\nstale\n").decode()
    code, _, body = s.raw("PUT", CRD, stale)
    eq(code, 200, "stale CRD caBundle: %r" % body)
    timed("caBundle of a conversion CRD made stale",
          lambda: s.get_json(CRD)["spec"]["conversion"]["webhook"][
              "clientConfig"].get("caBundle") == ca)
    # The API server trusts the webhook: Jobs pass it.
    wait_for(lambda: s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                           queued_job("team", "after", suspend=False), timeout=10)[0] == 201, 30,
             what="a Job through the webhook")
    check(s.get_json("/apis/batch/v1/namespaces/team/jobs/after")["spec"][
        "suspend"], "suspended by the webhook")
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
