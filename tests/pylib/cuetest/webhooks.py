# SPDX-License-Identifier: Apache-2.0
"""The shipped webhook configurations (manifests/webhooks/webhooks.yaml)
registered on a test API server, pointed at a fresh port and CA, for the
framework tests whose jobs go through cueue's webhooks."""
import base64
import os

import yaml

from .checks import eq
from .env import ROOT
from .procs import free_port, mint_certs


def install_webhooks(s):
    """manifests/webhooks with a fresh port and CA registered on server s;
    returns the Configuration lines that make the controller serve them
    (namespace cueue-system, created here)."""
    d = os.path.join(s.dir, "webhook-certs")
    os.mkdir(d)
    mint_certs(d, "DNS:cueue-webhook-service.cueue-system.svc")
    os.rename(os.path.join(d, "srv.crt"), os.path.join(d, "tls.crt"))
    os.rename(os.path.join(d, "srv.key"), os.path.join(d, "tls.key"))
    with open(os.path.join(d, "ca.crt"), "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    port = free_port()
    with open(os.path.join(ROOT, "manifests", "webhooks",
                           "webhooks.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    for doc in docs:
        for w in doc["webhooks"]:
            w["clientConfig"]["service"]["port"] = port
            w["clientConfig"]["caBundle"] = ca
        code, _, body = s.raw("POST", "/apis/admissionregistration.k8s.io/"
                              "v1/%ss" % doc["kind"].lower(), doc)
        eq(code, 201, "%s: %r" % (doc["kind"], body))
    s.namespace("cueue-system")
    return ("namespace: cueue-system\nwebhook:\n  port: %d\n"
            "  host: 127.0.0.1\n  certDir: %s\n" % (port, d))
