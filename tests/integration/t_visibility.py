# SPDX-License-Identifier: Apache-2.0
"""Kueue's visibility API (visibility.kueue.x-k8s.io) end to end (issue
20): cueue-controller serves it on its own HTTPS port
(visibilityServer.bindPort), the shipped APIServices
(manifests/visibility.yaml, Service port pointed at this test's
controller) register it with cueue-apiserver, which proxies to it as
kube-apiserver's aggregation layer does: with its front-proxy client
certificate and the caller in X-Remote-User/X-Remote-Group, trusted
through ConfigMap kube-system/extension-apiserver-authentication.

One ClusterQueue `cq` (1 cpu) and LocalQueues team/lq-a and team/lq-b; w0
(1 cpu) is admitted, then w1..w4 (1 cpu each, priorities 1, 2, 10, 5)
wait.

- positions: `kubectl get --raw .../v1beta2/clusterqueues/cq/
  pendingworkloads` lists w3, w4, w2, w1 with their positions in the
  ClusterQueue and in their LocalQueue, priority, localQueueName and
  ownerless metadata; v1beta1 answers the same in its apiVersion; a
  LocalQueue lists its own with their ClusterQueue positions; limit and
  offset page both; `kubectl cueue pending cq` shows the controller's
  answer; a priority raised moves a Workload to the front, a
  deleted one leaves and the positions close up, and when w0 finishes
  (deleted) the head is admitted and leaves the list. Unknown queues are
  404 with Kueue's message.
- discovery: /apis lists the group, /apis/visibility.kueue.x-k8s.io has
  v1beta2 (preferred) and v1beta1, the version documents come from the
  controller and kubectl reads them without a discovery error;
  `kubectl get apiservices` prints kube-aggregator's columns (Available
  True once a call went through); an
  APIService is defaulted (port 443) and validated as kube does.
- tls-and-down: an APIService with the webhook CA as caBundle (and no
  insecureSkipTLSVerify) is served; another CA is a 503 with Go's x509
  wording; with the controller stopped every request is a 503 and
  kubectl says "the server is currently unable to handle the request",
  and the APIService shows "False (FailedDiscoveryCheck)".
- authz: the visibility server authorizes every request with a
  SubjectAccessReview of its resource attributes: admin (system:masters)
  is served; a user token without RBAC gets kube's Forbidden message
  naming the resource, group and scope; the pending-workloads viewer
  roles (manifests/rbac/user_roles.yaml) bound to the user let it read
  the ClusterQueue, and in its namespace the LocalQueue; discovery is
  authorized as a non-resource URL (kube's system:discovery role for
  every authenticated user). Asked directly,
  without the front proxy's certificate: no credentials is
  system:anonymous (403, as k8s.io/apiserver's anonymous authentication),
  forged X-Remote-User headers are ignored, a bad token is a 401 (also
  on /readyz; /healthz is always allowed otherwise), a
  client certificate of another CA is a 401, the user's own token is
  served.
- client-ca: with client-ca-file in the ConfigMap, a client certificate
  it signs is the user CN in the groups O (refused, then allowed once
  the group is bound); its X-Remote-User header is ignored.
- gate-off: with the VisibilityOnDemand feature gate off nothing listens
  on the port and the APIService is unavailable; on, it is served; with
  the port taken the controller exits 1.
"""
import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request

import yaml

from cuetest import (BIN, CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, mint_certs, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
VIS = "/apis/visibility.kueue.x-k8s.io"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
SVC = "cueue-visibility-server.cueue-system.svc"


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "create %s: %r" % (obj["metadata"]["name"], body))


def workload(name, queue, prio):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "team"},
            "spec": {"queueName": queue, "priority": prio, "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": "1"}}}]}}}]}}


def apiservices(port, ca=None):
    """The shipped APIServices with this test's Service port; with ca
    (PEM bytes) verified against it instead of insecureSkipTLSVerify."""
    with open(os.path.join(MANIFESTS, "visibility.yaml")) as f:
        shipped = [d for d in yaml.safe_load_all(f) if d]
    eq(sorted((d["kind"], d["metadata"]["name"]) for d in shipped
              if d["kind"] != "APIService"),
       [("RoleBinding", "cueue-visibility-server-auth-reader"),
        ("Service", "cueue-visibility-server")], "shipped Service, "
       "RoleBinding")
    docs = [d for d in shipped if d["kind"] == "APIService"]
    eq([d["metadata"]["name"] for d in docs],
       ["v1beta2.visibility.kueue.x-k8s.io",
        "v1beta1.visibility.kueue.x-k8s.io"], "shipped APIServices")
    for d in docs:
        d["spec"]["service"]["port"] = port
        if ca is not None:
            d["spec"].pop("insecureSkipTLSVerify", None)
            d["spec"]["caBundle"] = base64.b64encode(ca).decode()
    return yaml.safe_dump_all(docs)


def vis_config(port, gate=None):
    """The controller's Configuration: the visibility server on
    127.0.0.1:port; gate True/False sets VisibilityOnDemand."""
    cfg = CONTROLLER_CONFIG + (
        "visibilityServer:\n  bindPort: %d\n  bindAddress: 127.0.0.1\n"
        % port)
    if gate is not None:
        cfg += "featureGates:\n  VisibilityOnDemand: %s\n" % (
            "true" if gate else "false")
    return cfg


def setup(s, before=None):
    """CRDs, queues, the APIServices and a controller serving on a
    certificate for the visibility Service; before(cert directory) runs
    just before the controller starts. Returns (Controller, port, cert
    directory)."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("cueue-system")
    s.namespace("team")
    certs = os.path.join(s.dir, "certs")
    os.mkdir(certs)
    mint_certs(certs, "DNS:" + SVC)
    shutil.copy(os.path.join(certs, "srv.crt"),
                os.path.join(certs, "tls.crt"))
    shutil.copy(os.path.join(certs, "srv.key"),
                os.path.join(certs, "tls.key"))
    port = free_port()
    s.kubectl("apply", "-f", s.file("apiservices.yaml", apiservices(port)))
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu"], "flavors": [{
                "name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": 1}]}]}]}})
    for lq in ("lq-a", "lq-b"):
        post(s, KQ + "/namespaces/team/localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": lq, "namespace": "team"},
            "spec": {"clusterQueue": "cq"}})
    if before is not None:
        before(certs)
    ctl = Controller(s, config=vis_config(port),
                     env={"CUEUE_VISIBILITY_CERT_DIR": certs})
    wait_for(lambda: s.raw("GET", VIS + "/v1beta2")[0] == 200, 30,
             what="the visibility API through the APIService")
    return ctl, port, certs


def holds_quota(s, name):
    wl = s.get_json(KQ + "/namespaces/team/workloads/" + name)
    return any(c["type"] == "QuotaReserved" and c["status"] == "True"
               for c in wl.get("status", {}).get("conditions", []))


def items(s, path):
    code, _, body = s.raw("GET", path)
    eq(code, 200, "GET %s: %r" % (path, body))
    return body["items"]


def rows(its):
    return [(i["metadata"]["name"], i["positionInClusterQueue"],
             i["positionInLocalQueue"]) for i in its]


def waits_for(s, path, want, what):
    """Wait until path lists want (rows)."""
    last = []

    def ok():
        last[:] = [rows(items(s, path))]
        return last[0] == want
    try:
        wait_for(ok, 20, what=what)
    except AssertionError:
        eq(last[0] if last else None, want, what)


CQ = VIS + "/v1beta2/clusterqueues/cq/pendingworkloads"
LQA = VIS + "/v1beta2/namespaces/team/localqueues/lq-a/pendingworkloads"
LQB = VIS + "/v1beta2/namespaces/team/localqueues/lq-b/pendingworkloads"


def pending_four(s):
    post(s, KQ + "/namespaces/team/workloads", workload("w0", "lq-a", 0))
    wait_for(lambda: holds_quota(s, "w0"), 20, what="w0 admitted")
    for name, q, prio in (("w1", "lq-a", 1), ("w2", "lq-b", 2),
                          ("w3", "lq-a", 10), ("w4", "lq-b", 5)):
        post(s, KQ + "/namespaces/team/workloads", workload(name, q, prio))
    waits_for(s, CQ, [("w3", 0, 0), ("w4", 1, 0), ("w2", 2, 1),
                      ("w1", 3, 1)], "four pending in queue order")


@case("positions")
def positions(s):
    ctl, _, _ = setup(s)
    pending_four(s)
    doc = yaml.safe_load(s.kubectl("get", "--raw", CQ).stdout)
    eq(doc["kind"], "PendingWorkloadsSummary", "kind")
    eq(doc["apiVersion"], "visibility.kueue.x-k8s.io/v1beta2", "apiVersion")
    first = doc["items"][0]
    eq((first["priority"], first["localQueueName"],
        first["metadata"]["namespace"]), (10, "lq-a", "team"), "w3 item")
    check(first["metadata"].get("creationTimestamp"), "creationTimestamp")
    v1 = s.get_json(VIS + "/v1beta1/clusterqueues/cq/pendingworkloads")
    eq(v1["apiVersion"], "visibility.kueue.x-k8s.io/v1beta1", "v1beta1")
    eq(rows(v1["items"]), rows(doc["items"]), "v1beta1 items")
    eq(rows(items(s, LQA)), [("w3", 0, 0), ("w1", 3, 1)], "lq-a")
    eq(rows(items(s, LQB)), [("w4", 1, 0), ("w2", 2, 1)], "lq-b")
    eq(rows(items(s, CQ + "?limit=2&offset=1")),
       [("w4", 1, 0), ("w2", 2, 1)], "page of the ClusterQueue")
    eq(rows(items(s, LQB + "?offset=1")), [("w2", 2, 1)],
       "page of lq-b")
    eq(rows(items(s, CQ + "?limit=1")), [("w3", 0, 0)], "limit 1")
    # kubectl-cueue pending reads the controller's answer (no Workload
    # LIST for a local order).
    mark = s.log_mark()
    p = subprocess.run([os.path.join(BIN, "kubectl-cueue"), "--kubeconfig",
                        s.kubeconfig, "pending", "cq", "-o", "json"],
                       capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, "kubectl-cueue pending: %s" % p.stderr)
    eq(rows(json.loads(p.stdout)["items"]), rows(doc["items"]),
       "kubectl-cueue pending")
    paths = [e["path"] for e in s.requests(since=mark)]
    check(CQ in paths and not any(p.endswith("/workloads") for p in paths),
          "kubectl-cueue asked the visibility API: %r" % paths)
    # A raised priority goes to the front.
    code, _, body = s.raw("PATCH", KQ + "/namespaces/team/workloads/w1",
                          {"spec": {"priority": 20}},
                          headers={"Content-Type":
                                   "application/merge-patch+json"})
    eq(code, 200, "patch w1: %r" % body)
    waits_for(s, CQ, [("w1", 0, 0), ("w3", 1, 1), ("w4", 2, 0),
                      ("w2", 3, 1)], "w1 first after its priority rose")
    # A deleted one leaves; positions close up.
    code, _, _ = s.raw("DELETE", KQ + "/namespaces/team/workloads/w3")
    check(code in (200, 202), "delete w3")
    waits_for(s, CQ, [("w1", 0, 0), ("w4", 1, 0), ("w2", 2, 1)],
              "w3 deleted")
    # Quota freed: the head is admitted and leaves the list.
    code, _, _ = s.raw("DELETE", KQ + "/namespaces/team/workloads/w0")
    check(code in (200, 202), "delete w0")
    wait_for(lambda: holds_quota(s, "w1"), 20, what="w1 admitted")
    waits_for(s, CQ, [("w4", 0, 0), ("w2", 1, 1)], "w1 admitted")
    eq(rows(items(s, LQA)), [], "lq-a empty")
    # Unknown queues: Kueue's 404.
    p = s.kubectl("get", "--raw",
                  VIS + "/v1beta2/clusterqueues/nope/pendingworkloads",
                  check=False)
    check(p.returncode != 0 and 'clusterqueue.visibility.kueue.x-k8s.io '
          '"nope" not found' in p.stderr, "unknown cq: %r" % p.stderr)
    code, _, body = s.raw("GET", VIS + "/v1beta2/namespaces/team/"
                          "localqueues/nope/pendingworkloads")
    eq((code, body.get("reason")), (404, "NotFound"), "unknown lq")
    ctl.stop()


@case("discovery")
def discovery(s):
    ctl, _, _ = setup(s)
    groups = s.get_json("/apis")["groups"]
    vis = [g for g in groups if g["name"] == "visibility.kueue.x-k8s.io"]
    eq(len(vis), 1, "the group in /apis")
    g = s.get_json(VIS)
    eq([v["version"] for v in g["versions"]], ["v1beta2", "v1beta1"],
       "versions")
    eq(g["preferredVersion"]["version"], "v1beta2", "preferred")
    for v in ("v1beta2", "v1beta1"):
        rl = s.get_json(VIS + "/" + v)
        eq(rl["groupVersion"], "visibility.kueue.x-k8s.io/" + v, "gv")
        eq(sorted(r["name"] for r in rl["resources"]),
           ["clusterqueues", "clusterqueues/pendingworkloads",
            "localqueues", "localqueues/pendingworkloads"], v)
    # kubectl reads the group's documents through the proxy without a
    # discovery error (its resources have no verbs of their own, only
    # their pendingworkloads subresources: api-resources lists none).
    p = s.kubectl("api-resources", "--api-group=visibility.kueue.x-k8s.io",
                  check=False)
    check(p.returncode == 0 and "visibility" not in p.stderr,
          "api-resources: %r" % p.stderr)
    rl = yaml.safe_load(s.kubectl("get", "--raw", VIS + "/v1beta1").stdout)
    eq(rl["kind"], "APIResourceList", "kubectl get --raw")
    # The aggregated group comes after kueue.x-k8s.io in /apis, so the
    # bare resource names keep meaning Kueue's kinds (as on a cluster,
    # where CRD groups have a higher group priority).
    names = [gr["name"] for gr in groups]
    check(names.index("kueue.x-k8s.io") <
          names.index("visibility.kueue.x-k8s.io"), "order: %r" % names)
    eq(s.kubectl("get", "clusterqueues", "-o", "name").stdout,
       "clusterqueue.kueue.x-k8s.io/cq\n", "kubectl get clusterqueues")
    out = s.kubectl("get", "apiservices").stdout.splitlines()
    eq(out[0].split(), ["NAME", "SERVICE", "AVAILABLE", "AGE"], "columns")
    row = [ln.split() for ln in out
           if ln.startswith("v1beta2.visibility.kueue.x-k8s.io")]
    eq(row[0][:3] if row else None,
       ["v1beta2.visibility.kueue.x-k8s.io",
        "cueue-system/cueue-visibility-server", "True"], "table row")
    cond = s.get_json("/apis/apiregistration.k8s.io/v1/apiservices/"
                      "v1beta2.visibility.kueue.x-k8s.io")["status"][
                          "conditions"][0]
    eq((cond["type"], cond["status"], cond["reason"]),
       ("Available", "True", "Passed"), "Available after a proxied call")
    # Defaults and kube-aggregator's validation.
    svc = s.get_json("/apis/apiregistration.k8s.io/v1/apiservices/"
                     "v1beta1.visibility.kueue.x-k8s.io")
    check(svc["spec"]["service"]["port"] > 0, "port kept")
    bad = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1.wrong.example.com"},
           "spec": {"group": "example.com", "version": "v1",
                    "groupPriorityMinimum": 100, "versionPriority": 0,
                    "insecureSkipTLSVerify": True, "caBundle": "eA==",
                    "service": {"name": "x", "namespace": "y"}}}
    code, _, body = s.raw("POST", "/apis/apiregistration.k8s.io/v1/"
                          "apiservices", bad)
    eq((code, body.get("reason")), (422, "Invalid"), "invalid: %r" % body)
    eq(sorted(c["field"] for c in body["details"]["causes"]),
       ["metadata.name", "spec.insecureSkipTLSVerify",
        "spec.versionPriority"], "causes")
    bad["metadata"]["name"] = "v1.example.com"
    bad["spec"].update({"versionPriority": 10, "caBundle": ""})
    code, _, body = s.raw("POST", "/apis/apiregistration.k8s.io/v1/"
                          "apiservices", bad)
    eq(code, 201, "valid: %r" % body)
    eq(body["spec"]["service"].get("port"), 443, "default port")
    ctl.stop()


@case("tls-and-down")
def tls_and_down(s):
    ctl, port, certs = setup(s)
    with open(os.path.join(certs, "ca.crt"), "rb") as f:
        ca = f.read()
    s.kubectl("apply", "-f", s.file("verified.yaml", apiservices(port, ca)))
    svc = s.get_json("/apis/apiregistration.k8s.io/v1/apiservices/"
                     "v1beta2.visibility.kueue.x-k8s.io")
    check("insecureSkipTLSVerify" not in svc["spec"], "verified: %r" % svc)
    eq(items(s, CQ), [], "served with the caBundle verified")
    other = os.path.join(s.dir, "other")
    os.mkdir(other)
    mint_certs(other, "DNS:" + SVC)
    with open(os.path.join(other, "ca.crt"), "rb") as f:
        s.kubectl("apply", "-f",
                  s.file("untrusted.yaml", apiservices(port, f.read())))
    code, _, body = s.raw("GET", CQ)
    eq(code, 503, "untrusted backend: %r" % body)
    check("x509: certificate signed by unknown authority" in str(body),
          "x509 wording: %r" % body)
    s.kubectl("apply", "-f", s.file("verified.yaml", apiservices(port, ca)))
    eq(items(s, CQ), [], "served again")
    ctl.stop()
    code, _, body = s.raw("GET", CQ)
    eq(code, 503, "backend down: %r" % body)
    check("connection refused" in str(body), "why: %r" % body)
    eq(s.raw("GET", VIS + "/v1beta2")[0], 503, "discovery down")
    p = s.kubectl("get", "--raw", CQ, check=False)
    check(p.returncode != 0 and "the server is currently unable to handle "
          "the request" in p.stderr, "kubectl: %r" % p.stderr)
    out = s.kubectl("get", "apiservice",
                    "v1beta2.visibility.kueue.x-k8s.io").stdout
    check("False (FailedDiscoveryCheck)" in out, out)
    cond = s.get_json("/apis/apiregistration.k8s.io/v1/apiservices/"
                      "v1beta2.visibility.kueue.x-k8s.io")["status"][
                          "conditions"][0]
    check("failing or missing response from https://" + SVC in
          cond["message"] and "connection refused" in cond["message"],
          "condition: %r" % cond)
    # The rest of the API is unaffected.
    eq(s.raw("GET", KQ + "/clusterqueues/cq")[0], 200, "kueue API")


def direct(port, certs, path, headers=None, cert=None):
    """GET https://127.0.0.1:port<path> verified against the test CA,
    without the aggregator; cert: (crt, key) files to present.
    Returns (status, body)."""
    ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.crt"))
    ctx.check_hostname = False
    if cert is not None:
        ctx.load_cert_chain(*cert)
    req = urllib.request.Request("https://127.0.0.1:%d%s" % (port, path),
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            code, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, raw = e.code, e.read()
    try:
        return code, json.loads(raw)
    except ValueError:
        return code, raw.decode()


def mint_client(d, subj="/CN=front-proxy-client"):
    """client.crt/client.key in d: a client certificate (subject subj; by
    default CN front-proxy-client, the allowed name) signed by d's CA,
    which is not the front proxy's."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True,
                       capture_output=True)
    ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj",
         subj)
    with open(os.path.join(d, "client.cnf"), "w") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    ossl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey",
         "ca.key", "-CAcreateserial", "-out", "client.crt", "-days", "2",
         "-extfile", "client.cnf")


def forbidden(user, res, scope):
    return ('User "%s" cannot get resource "%s/pendingworkloads" in API '
            'group "visibility.kueue.x-k8s.io" %s' % (user, res, scope))


@case("authz")
def authz(s):
    ctl, port, certs = setup(s)
    pending_four(s)
    s.tokens(add=[("alice-token", "alice")])
    # The aggregator's admin is system:masters: no review needed.
    eq(len(yaml.safe_load(s.kubectl("get", "--raw", CQ).stdout)["items"]),
       4, "admin")
    # A user without RBAC: kube's Forbidden, from the backend.
    p = s.kubectl("get", "--raw", CQ, "--token", "alice-token", check=False)
    check(p.returncode != 0 and 'clusterqueues.visibility.kueue.x-k8s.io '
          '"cq" is forbidden: ' + forbidden("alice", "clusterqueues",
                                            "at the cluster scope")
          in p.stderr, "alice, no RBAC: %r" % p.stderr)
    code, _, body = s.raw("GET", LQA, headers={
        "Authorization": "Bearer alice-token"})
    eq((code, body.get("reason"), body.get("details")),
       (403, "Forbidden", {"name": "lq-a", "group":
                           "visibility.kueue.x-k8s.io",
                           "kind": "localqueues"}), "lq: %r" % body)
    check(body["message"].endswith(forbidden(
        "alice", "localqueues", 'in the namespace "team"')), body["message"])
    # Discovery is a non-resource request: kube's system:discovery role
    # lets every authenticated user read it.
    code, _, body = s.raw("GET", VIS + "/v1beta2", headers={
        "Authorization": "Bearer alice-token"})
    eq((code, body.get("kind")), (200, "APIResourceList"),
       "alice's discovery: %r" % body)
    # Kueue's viewer roles, bound to alice (the denials were cached for
    # 10 s at most).
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "rbac",
                                          "user_roles.yaml"))
    post(s, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "alice-cq"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kueue-pending-workloads-cq-viewer-role"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io",
                      "kind": "User", "name": "alice"}]})
    post(s, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/"
         "rolebindings", {
             "apiVersion": "rbac.authorization.k8s.io/v1",
             "kind": "RoleBinding",
             "metadata": {"name": "alice-lq", "namespace": "team"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                         "kind": "ClusterRole",
                         "name": "kueue-pending-workloads-lq-viewer-role"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io",
                           "kind": "User", "name": "alice"}]})

    def alice(path):
        return s.raw("GET", path, headers={
            "Authorization": "Bearer alice-token"})
    wait_for(lambda: alice(CQ)[0] == 200, 30, what="alice reads cq")
    eq(rows(alice(CQ)[2]["items"]), [("w3", 0, 0), ("w4", 1, 0),
                                     ("w2", 2, 1), ("w1", 3, 1)], "alice cq")
    wait_for(lambda: alice(LQA)[0] == 200, 30, what="alice reads lq-a")
    p = s.kubectl("get", "--raw", LQB, "--token", "alice-token")
    eq(len(yaml.safe_load(p.stdout)["items"]), 2, "alice lq-b (kubectl)")
    # Straight to the port, past the aggregator.
    code, body = direct(port, certs, CQ)
    eq((code, body["reason"]), (403, "Forbidden"), "no credentials")
    check(forbidden("system:anonymous", "clusterqueues",
                    "at the cluster scope") in body["message"],
          body["message"])
    eq(direct(port, certs, "/healthz"), (200, "ok"), "healthz, anonymous")
    eq(direct(port, certs, "/readyz", {"Authorization": "Bearer nope"})[0],
       401, "readyz with a bad token")
    code, body = direct(port, certs, "/apis")
    eq((code, body["message"]), (403, 'forbidden: User "system:anonymous" '
                                      'cannot get path "/apis"'),
       "anonymous discovery")
    code, body = direct(port, certs, CQ, {"X-Remote-User": "admin",
                                          "X-Remote-Group": "system:masters"})
    check(code == 403 and "system:anonymous" in body["message"],
          "forged front-proxy headers: %d %r" % (code, body))
    code, body = direct(port, certs, CQ, {"Authorization": "Bearer nope"})
    eq((code, body["reason"], body["message"]),
       (401, "Unauthorized", "Unauthorized"), "bad token")
    mint_client(certs)
    code, body = direct(port, certs, CQ, {"X-Remote-User": "admin"},
                        cert=(os.path.join(certs, "client.crt"),
                              os.path.join(certs, "client.key")))
    eq((code, body["reason"]), (401, "Unauthorized"),
       "a client certificate of another CA")
    code, body = direct(port, certs, CQ, {
        "Authorization": "Bearer alice-token"})
    eq((code, len(body["items"])), (200, 4), "alice's own token")
    code, body = direct(port, certs, CQ, {
        "Authorization": "Bearer " + s.token})
    eq(code, 200, "admin's token")
    ctl.stop()


@case("client-ca")
def client_ca(s):
    """With a client-ca-file in the ConfigMap (as kube-apiserver publishes
    its --client-ca-file), a client certificate it signs is the user CN in
    the groups O."""
    cm = "/api/v1/namespaces/kube-system/configmaps/" \
        "extension-apiserver-authentication"

    def add_client_ca(certs):
        with open(os.path.join(certs, "ca.crt")) as f:
            code, _, body = s.raw("PATCH", cm, {"data": {
                "client-ca-file": f.read()}}, headers={
                    "Content-Type": "application/merge-patch+json"})
        eq(code, 200, "client-ca-file: %r" % body)
    ctl, port, certs = setup(s, before=add_client_ca)
    mint_client(certs, "/O=team-readers/CN=carol")
    me = (os.path.join(certs, "client.crt"), os.path.join(certs, "client.key"))
    code, body = direct(port, certs, CQ, cert=me)
    eq(code, 403, "carol without RBAC: %r" % body)
    check(forbidden("carol", "clusterqueues", "at the cluster scope")
          in body["message"], body["message"])
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "rbac",
                                          "user_roles.yaml"))
    post(s, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "readers-cq"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kueue-pending-workloads-cq-viewer-role"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io",
                      "kind": "Group", "name": "team-readers"}]})
    wait_for(lambda: direct(port, certs, CQ, cert=me)[0] == 200, 30,
             what="carol's group reads cq")
    # A certificate of the client CA names its own CN: X-Remote-User is
    # the front proxy's header only.
    code, body = direct(port, certs, LQA, {"X-Remote-User": "admin"},
                        cert=me)
    check(code == 403 and 'User "carol"' in body["message"],
          "headers ignored: %d %r" % (code, body))
    ctl.stop()


@case("gate-off")
def gate_off(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("cueue-system")
    port = free_port()
    s.kubectl("apply", "-f", s.file("apiservices.yaml", apiservices(port)))
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}})
    post(s, KQ + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "cq"}, "spec": {"resourceGroups": []}})
    ctl = Controller(s, config=vis_config(port, gate=False))
    # The controller is up once it reported on the ClusterQueue.
    wait_for(lambda: s.get_json(KQ + "/clusterqueues/cq").get(
        "status", {}).get("conditions"), 30, what="controller up")
    code, _, body = s.raw("GET", VIS + "/v1beta2")
    check(code == 503 and "connection refused" in str(body),
          "not served: %d %r" % (code, body))
    check(ctl.alive(), "the controller runs on")
    ctl.stop()
    # And on (Kueue's default): served.
    ctl = Controller(s, config=vis_config(port, gate=True))
    wait_for(lambda: s.raw("GET", VIS + "/v1beta2")[0] == 200, 30,
             what="served with the gate on")
    ctl.stop()
    # The port taken: the controller stops (exit 1), as Kueue exits.
    with socket.socket() as so:
        so.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        so.bind(("127.0.0.1", port))
        so.listen()
        ctl = Controller(s, config=vis_config(port, gate=True))
        wait_for(lambda: not ctl.alive(), 30, what="the controller exits")
        ctl.stop(sig=signal.SIGKILL)
        eq(ctl.proc.returncode, 1, "exit status")
        with open(ctl.log) as f:
            check("visibility: unable to start the server" in f.read(),
                  "logged")


if __name__ == "__main__":
    run_cases()
