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
- Kueue's job annotations are validated with Kueue's messages:
  job-min-parallelism out of range, a malformed admission-gated-by, a
  gate added after creation.
- With the controller down, Jobs in unmanaged namespaces are still
  created (the webhook configuration's namespaceSelector mirrors the
  managed-namespace selector); in managed ones creation fails closed."""
import base64
import http.client
import json
import os
import ssl
import threading
import time
import warnings

import jsonpatch
import yaml

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, free_port, mint_certs, run_cases,
                     wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
ADM = "/apis/admissionregistration.k8s.io/v1"
SVC = {"namespace": "cueue-system", "name": "cueue-webhook-service"}
EXCLUDED = ["kube-system", "cueue-system", "free"]


def config(port, cert_dir):
    return CONTROLLER_CONFIG + """namespace: cueue-system
webhook:
  port: %d
  host: 127.0.0.1
  certDir: %s
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [%s]
integrations:
  frameworks: ["batch/job"]
""" % (port, cert_dir, ", ".join(EXCLUDED))


def internal_certs_config(port, cert_dir):
    return config(port, cert_dir).replace(
        "internalCertManagement:\n  enable: false\n",
        "internalCertManagement:\n  enable: true\n"
        "  webhookServiceName: cueue-webhook-service\n"
        "  webhookSecretName: cueue-webhook-server-cert\n")


def shipped_webhooks(port, ca):
    """manifests/webhooks/webhooks.yaml as shipped, pointed at this test's
    port and CA, with namespace `free` added to the excluded ones (as a
    user changing managedJobsNamespaceSelector must)."""
    with open(os.path.join(MANIFESTS, "webhooks", "webhooks.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    for d in docs:
        for w in d["webhooks"]:
            w["clientConfig"]["service"]["port"] = port
            if ca is not None:
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


def setup(s, with_webhooks=True):
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
    if not with_webhooks:
        return None, None
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

    # Kueue's job annotations are validated with Kueue's messages:
    # job-min-parallelism out of range, a malformed admission gate, a
    # gate added after creation.
    j = job("team", "minpar")
    j["spec"]["parallelism"] = 5
    j["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = \
        "50"
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs", j)
    eq(code, 403, "min-parallelism 50 of 5 refused: %r" % body)
    check(body["message"].endswith(
        "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: "
        "Invalid value: 50: should be between 0 and 4"), body["message"])
    j = job("team", "gated")
    j["metadata"]["annotations"]["kueue.x-k8s.io/admission-gated-by"] = \
        "no-domain"
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs", j)
    eq(code, 403, "malformed gate refused: %r" % body)
    check("must be a domain-prefixed path" in body["message"],
          body["message"])
    code, _, body = s.raw(
        "PATCH", "/apis/batch/v1/namespaces/team/jobs/big",
        {"metadata": {"annotations": {
            "kueue.x-k8s.io/admission-gated-by": "example.com/late"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 403, "gate added after creation refused: %r" % body)
    check(body["message"].endswith(
        "metadata.annotations[kueue.x-k8s.io/admission-gated-by]: "
        "Forbidden: cannot add admission gate after creation"),
        body["message"])
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


def review(op, obj, old=None, dry_run=False, uid="f-h-uid-1"):
    group, _, version = obj["apiVersion"].rpartition("/")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": uid,
                "kind": {"group": group, "version": version,
                         "kind": obj["kind"]},
                "resource": {"group": group, "version": version,
                             "resource": obj["kind"].lower() + "s"},
                "name": obj["metadata"]["name"],
                "namespace": obj["metadata"].get("namespace", ""),
                "operation": op,
                "userInfo": {"username": "alice"},
                "object": None if op == "DELETE" else obj,
                "oldObject": old, "dryRun": dry_run}}


def post_review(port, ca_file, path, body, tls_max=None):
    ctx = ssl.create_default_context(cafile=ca_file)
    if tls_max is not None:
        # Let this client offer old versions, so that a refusal is the
        # server's (Debian's OpenSSL refuses them by default).
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
            ctx.maximum_version = tls_max
    ctx.check_hostname = False  # the SAN is the Service's DNS name
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx,
                                       timeout=10)
    try:
        conn.request("POST", path + "?timeout=10s", json.dumps(body),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw)
        except ValueError:  # "caches not synced yet" answers are text
            return r.status, raw
    finally:
        conn.close()


@case("webhook-server-f-h1-h3-tls-and-reload", simulate="jobs")
def faithfulness_h(s):
    """docs/apiserver.md §10 F-H1..H3 against cueue's webhook server,
    TLS below 1.2 refused, and a new certificate picked up."""
    port, d = setup(s)
    ctl = Controller(s, config=config(port, d))
    ca = os.path.join(d, "ca.crt")
    obj = job("team", "fh")
    wait_for(lambda: _serves_with(port, ca), 15, what="webhook serving")
    # F-H1: mutating CREATE -> 200, echo, uid, a JSONPatch that applies.
    code, out = post_review(port, ca, "/mutate-batch-v1-job",
                            review("CREATE", obj))
    eq(code, 200)
    eq((out["apiVersion"], out["kind"]),
       ("admission.k8s.io/v1", "AdmissionReview"))
    r = out["response"]
    eq((r["uid"], r["allowed"], r["patchType"]),
       ("f-h-uid-1", True, "JSONPatch"))
    patched = jsonpatch.apply_patch(obj, json.loads(
        base64.b64decode(r["patch"])))
    eq(patched["spec"]["suspend"], True, "patch suspends the job")
    # validating: no patch fields.
    code, out = post_review(port, ca, "/validate-batch-v1-job",
                            review("CREATE", patched))
    eq(code, 200)
    check(out["response"]["allowed"] and "patch" not in out["response"]
          and "patchType" not in out["response"], out)
    # F-H2: a denial.
    unsuspended = json.loads(json.dumps(patched))
    unsuspended["spec"]["suspend"] = False
    code, out = post_review(port, ca, "/validate-batch-v1-job",
                            review("UPDATE", unsuspended, old=patched))
    eq(code, 200)
    r = out["response"]
    check(not r["allowed"] and r["status"]["code"] >= 400 and
          "spec.suspend" in r["status"]["message"], r)
    # F-H3: DELETE (object null) and dryRun: allowed, no patch.
    for body in (review("DELETE", obj, old=obj),
                 review("CREATE", obj, dry_run=True)):
        code, out = post_review(port, ca, "/mutate-batch-v1-job", body)
        eq(code, 200)
        check(out["response"]["allowed"] and
              "patch" not in out["response"], out)
    # Malformed and oversized bodies: 400 / 413, and the server lives on.
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    for payload, want in ((b"{not json", 400),
                          (b"{" + b" " * (4 * 1024 * 1024) + b"}", 413)):
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx,
                                           timeout=20)
        try:
            conn.request("POST", "/mutate-batch-v1-job", payload,
                         {"Content-Type": "application/json"})
            eq(conn.getresponse().status, want)
        except (ConnectionError, ssl.SSLError):
            check(want == 413, "connection dropped on a %d case" % want)
        finally:
            conn.close()
    # TLS 1.1 is refused.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            old_tls = ssl.TLSVersion.TLSv1_1
        post_review(port, ca, "/mutate-batch-v1-job", review("CREATE", obj),
                    tls_max=old_tls)
        check(False, "TLS 1.1 accepted")
    except (ssl.SSLError, ConnectionError):
        pass
    # A new certificate from a new CA is served after the reload period.
    new = os.path.join(s.dir, "new-certs")
    os.mkdir(new)
    mint(new)
    for f in ("tls.crt", "tls.key"):
        os.replace(os.path.join(new, f), os.path.join(d, f))
    newca = os.path.join(new, "ca.crt")
    wait_for(lambda: _serves_with(port, newca), 25,
             what="new certificate served")
    ctl.stop()


def _serves_with(port, ca):
    try:
        return post_review(port, ca, "/mutate-batch-v1-job", review(
            "CREATE", job("team", "r")))[0] == 200
    except (ssl.SSLError, ConnectionError):
        return False


@case("internal-cert-management", simulate="jobs")
def internal_certs(s):
    """internalCertManagement: the controller mints the certificate,
    stores it in the Secret, injects its CA into the shipped webhook
    configurations (installed without caBundle) and serves with it; a
    restart keeps the stored certificate."""
    setup(s, with_webhooks=False)
    port = free_port()
    for obj in shipped_webhooks(port, None):
        path = obj["kind"].lower() + "s"
        code, _, body = s.raw("POST", "%s/%s" % (ADM, path), obj)
        eq(code, 201, "%s: %r" % (path, body))
    d = os.path.join(s.dir, "internal-certs")
    os.mkdir(d)
    ctl = Controller(s, config=internal_certs_config(port, d))
    secret = "/api/v1/namespaces/cueue-system/secrets/" \
        "cueue-webhook-server-cert"

    def stored():
        code, _, body = s.raw("GET", secret)
        return code == 200 and body
    sec = wait_for(stored, 15, what="certificate Secret")
    eq(sec["type"], "kubernetes.io/tls")
    ca = sec["data"]["ca.crt"]
    for kind in ("mutatingwebhookconfigurations",
                 "validatingwebhookconfigurations"):
        wait_for(lambda: all(
            w["clientConfig"].get("caBundle") == ca for w in s.get_json(
                "%s/%s/cueue-%s-webhook-configuration" % (
                    ADM, kind, kind[:kind.index("webhook")]))["webhooks"]),
            10, what="caBundle injected into " + kind)
    # Served with it: the API server verifies the webhook with that CA.
    wait_for(lambda: s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                           job("team", "minted"), timeout=10)[0] == 201,
             20, what="webhook served with the minted certificate")
    j = s.get_json("/apis/batch/v1/namespaces/team/jobs/minted")
    eq(j["spec"]["suspend"], True, "suspended by the webhook")
    rv = sec["metadata"]["resourceVersion"]
    ctl.stop()
    ctl = Controller(s, config=internal_certs_config(port, d))
    time.sleep(2.0)
    eq(s.get_json(secret)["metadata"]["resourceVersion"], rv,
       "a valid stored certificate is kept across restarts")
    ctl.stop()


@case("rotation-under-load-rejects-nothing", simulate="jobs")
def rotation_under_load(s):
    """internalCertManagement replaces an expiring certificate while Jobs
    are created through the API server (each one calls both webhooks):
    the caBundles keep the CA of the pair still being served until the
    server has reloaded the new one, so no creation is refused."""
    port, d = setup(s)
    data = {}
    for f in ("ca.crt", "tls.crt", "tls.key"):
        with open(os.path.join(d, f), "rb") as fh:
            data[f] = base64.b64encode(fh.read()).decode()
    code, _, body = s.raw(
        "POST", "/api/v1/namespaces/cueue-system/secrets",
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
         "metadata": {"name": "cueue-webhook-server-cert",
                      "namespace": "cueue-system"}, "data": data})
    eq(code, 201, "expiring Secret: %r" % body)
    results, stop = [], threading.Event()

    def load():
        i = 0
        while not stop.is_set():
            i += 1
            why = None
            try:
                code, _, body = s.raw(
                    "POST", "/apis/batch/v1/namespaces/team/jobs",
                    job("team", "load-%d" % i), timeout=10)
                if code != 201:
                    why = body.get("message") if isinstance(body, dict) \
                        else body
            except OSError as e:
                code = str(e)
            results.append((time.time(), code, why))
            time.sleep(0.05)
    secret = "/api/v1/namespaces/cueue-system/secrets/" \
        "cueue-webhook-server-cert"
    # The controller's first read of the Secret is held back 4 s, so the
    # rotation comes while creations already succeed with the old pair.
    s.faults([{"method": "GET", "pathPrefix": secret, "latencyMs": 4000,
               "count": 1}])
    t = threading.Thread(target=load, daemon=True)
    t.start()
    ctl = Controller(s, config=internal_certs_config(port, d))
    try:
        wait_for(lambda: s.get_json(secret)["data"]["tls.crt"] !=
                 data["tls.crt"], 20, interval=0.02,
                 what="certificate rotated")
        rotated_at = time.time()
        newca = os.path.join(s.dir, "rotated-ca.crt")
        with open(newca, "wb") as fh:
            fh.write(base64.b64decode(s.get_json(secret)["data"]["ca.crt"]))
        # The server reloads its files within its reload period.
        wait_for(lambda: _serves_with(port, newca), 25,
                 what="new certificate served")
        time.sleep(1.0)  # a few more creations on the new pair
    finally:
        stop.set()
        t.join(15)
    s.faults([])
    ok = [i for i, (_, c, _) in enumerate(results) if c == 201]
    check(ok, "no creation succeeded: %r" % results[-5:])
    check(results[ok[0]][0] < rotated_at,
          "creations succeeded before the rotation")
    after = results[ok[0]:]
    # Each refusal with the API server's message (a webhook call that
    # failed TLS, or one that timed out, say which).
    bad = [(round(ts - rotated_at, 2), c, why) for ts, c, why in after
           if c != 201]
    check(not bad, "creations refused during the rotation: %r of %d"
          % (bad[:5], len(after)))
    ctl.stop()


run_cases()
