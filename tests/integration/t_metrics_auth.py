# SPDX-License-Identifier: Apache-2.0
"""Secure metrics (issue 20): /metrics over HTTPS behind bearer-token
authentication and authorization, as controller-runtime's metrics filter
does it, against cueue-apiserver's TokenReview and SubjectAccessReview.

- secure-metrics: the controller runs with the shipped default
  (--metrics-secure), as a follower (another replica holds the leader
  Lease: its writes are withheld, its reviews are not). The shipped cueue-metrics-reader ClusterRole is
  bound (manifests/prometheus/metrics_reader_binding.yaml) to
  monitoring/prometheus-k8s and, by a Group subject, to a group. A scrape
  without a token, with another scheme or with an unknown token is 401
  "Unauthorized"; a known token whose user is not bound is 403
  "Authorization denied for user <name>"; the bound service account's
  token and a token of the bound group get the metrics page. A second
  scrape with the same token sends no new review (cached). Plain HTTP
  gets no metrics from the HTTPS port.
- reviews-from-rbac: cueue-apiserver's TokenReview (the token's user and
  groups, service accounts' groups) and SubjectAccessReview
  (nonResourceURLs with a '*' suffix, verbs, resource rules with
  resourceNames, RoleBindings only in their namespace, system:masters).
"""
import datetime
import os
import ssl
import urllib.error
import urllib.request

from cuetest import (Controller, case, check, controller_config, eq,
                     free_port, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
READER_SA = "system:serviceaccount:monitoring:prometheus-k8s"
TR = "/apis/authentication.k8s.io/v1/tokenreviews"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def scrape(port, auth=None, scheme="https"):
    """(status, body) of GET /metrics; the certificate is self-signed."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=ctx))
    req = urllib.request.Request("%s://127.0.0.1:%d/metrics" % (scheme, port),
                                 headers={"Authorization": auth} if auth
                                 else {})
    try:
        with opener.open(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, OSError) as e:
        return None, str(e)


def add_tokens(s, entries):
    code, _, body = s.raw("POST", "/__test/tokens", {"add": entries})
    eq(code, 200, "tokens: %r" % body)


def reviews(s, mark):
    return [e["path"] for e in s.access_log(mark)
            if e["verb"] == "POST" and e["path"] in (TR, SAR)]


@case("secure-metrics", tls=True)
def secure(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "rbac",
                                          "metrics_reader_role.yaml"))
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "prometheus",
                                          "metrics_reader_binding.yaml"))
    code, _, body = s.raw("POST", "/apis/rbac.authorization.k8s.io/v1/"
                          "clusterrolebindings", {
                              "apiVersion": "rbac.authorization.k8s.io/v1",
                              "kind": "ClusterRoleBinding",
                              "metadata": {"name": "metrics-team"},
                              "roleRef": {
                                  "apiGroup": "rbac.authorization.k8s.io",
                                  "kind": "ClusterRole",
                                  "name": "cueue-metrics-reader"},
                              "subjects": [{
                                  "apiGroup": "rbac.authorization.k8s.io",
                                  "kind": "Group", "name": "metrics-team"}]})
    eq(code, 201, "group binding: %r" % body)
    add_tokens(s, [{"token": "reader-token", "user": READER_SA},
                   {"token": "intruder-token",
                    "user": "system:serviceaccount:team:intruder"},
                   {"token": "team-token", "user": "alice",
                    "groups": ["metrics-team"]}])
    # A follower: another replica holds the leader Lease, so the
    # controller's writes are withheld - but not its reviews.
    now = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.000000Z")
    code, _, body = s.raw(
        "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "cueue-leader"},
            "spec": {"holderIdentity": "another-replica",
                     "leaseDurationSeconds": 3600, "acquireTime": now,
                     "renewTime": now}})
    eq(code, 201, "the other replica's Lease: %r" % body)
    mport = free_port()
    cfg = controller_config(leader=True).replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % mport)
    ctl = Controller(s, config=cfg, args=["--metrics-secure"])
    wait_for(lambda: scrape(mport)[0] == 401, 20,
             what="the HTTPS metrics port answers")
    eq(scrape(mport), (401, "Unauthorized\n"), "no token")
    eq(scrape(mport, "Basic cmVhZGVyOnRva2Vu")[0], 401, "another scheme")
    eq(scrape(mport, "Bearer ")[0], 401, "an empty token")
    eq(scrape(mport, "Bearer not-a-token"), (401, "Unauthorized\n"),
       "an unknown token")
    eq(scrape(mport, "Bearer intruder-token"),
       (403, "Authorization denied for user "
        "system:serviceaccount:team:intruder\n"), "a user not bound")
    mark = s.log_mark()
    code, text = scrape(mport, "Bearer reader-token")
    eq(code, 200, "the reader's scrape: %s" % text[:200])
    check("# TYPE kueue_" in text, "the metrics page: %s" % text[:200])
    eq(reviews(s, mark), [TR, SAR], "one TokenReview, one "
       "SubjectAccessReview")
    mark = s.log_mark()
    eq(scrape(mport, "bearer reader-token")[0], 200, "again (scheme in "
       "any case)")
    eq(reviews(s, mark), [], "cached: no new review")
    eq(scrape(mport, "Bearer team-token")[0], 200, "a bound group")
    # The port speaks TLS only.
    code, _ = scrape(mport, "Bearer reader-token", scheme="http")
    check(code != 200, "plain HTTP on the HTTPS port: %r" % code)
    check(s.get_json("/apis/coordination.k8s.io/v1/namespaces/default/"
                     "leases/cueue-leader")["spec"]["holderIdentity"] ==
          "another-replica", "the controller stayed a follower")
    ctl.stop()


def sar(s, spec):
    code, _, body = s.raw("POST", SAR, {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview", "spec": spec})
    eq(code, 201, "SubjectAccessReview: %r" % body)
    return body["status"]


@case("reviews-from-rbac", tls=True)
def reviews_from_rbac(s):
    add_tokens(s, [{"token": "sa-token", "user": READER_SA}])
    code, _, body = s.raw("POST", TR, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": "sa-token"}})
    eq(code, 201, "TokenReview: %r" % body)
    eq(body["status"], {"authenticated": True, "user": {
        "username": READER_SA,
        "groups": ["system:serviceaccounts",
                   "system:serviceaccounts:monitoring",
                   "system:authenticated"]}}, "the token's user")
    code, _, body = s.raw("POST", TR, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": "nope"}})
    eq((code, body["status"]["authenticated"]), (201, False), "unknown")
    s.namespace("team")
    s.kubectl("apply", "-f", s.file("rbac.yaml", """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: debug-reader}
rules:
- nonResourceURLs: ["/debug/*"]
  verbs: [get]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [settings]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: debug-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,
          name: debug-reader}
subjects:
- {kind: ServiceAccount, name: prometheus-k8s, namespace: monitoring}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: pods-in-team, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,
          name: pod-lister}
subjects:
- {kind: User, name: bob}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-lister}
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [list, get]
"""))
    nr = {"user": READER_SA, "groups": ["system:serviceaccounts"]}
    st = sar(s, dict(nr, nonResourceAttributes={"path": "/debug/pprof",
                                                "verb": "get"}))
    eq(st["allowed"], True, "prefix match: %r" % st)
    check("debug-reader" in st.get("reason", ""), "reason: %r" % st)
    eq(sar(s, dict(nr, nonResourceAttributes={
        "path": "/debug/pprof", "verb": "post"}))["allowed"], False,
       "another verb")
    eq(sar(s, dict(nr, nonResourceAttributes={
        "path": "/metrics", "verb": "get"}))["allowed"], False,
       "another path")
    eq(sar(s, dict(nr, resourceAttributes={
        "namespace": "x", "verb": "get", "resource": "configmaps",
        "name": "settings"}))["allowed"], True, "resourceNames")
    eq(sar(s, dict(nr, resourceAttributes={
        "namespace": "x", "verb": "get", "resource": "configmaps",
        "name": "other"}))["allowed"], False, "another name")
    bob = {"user": "bob"}
    eq(sar(s, dict(bob, resourceAttributes={
        "namespace": "team", "verb": "get", "resource": "pods",
        "subresource": "log"}))["allowed"], True, "RoleBinding, subresource")
    eq(sar(s, dict(bob, resourceAttributes={
        "namespace": "other", "verb": "list", "resource": "pods"}))[
        "allowed"], False, "RoleBinding in another namespace")
    eq(sar(s, {"user": "root", "groups": ["system:masters"],
               "nonResourceAttributes": {"path": "/anything",
                                         "verb": "delete"}})["allowed"],
       True, "system:masters")
    code, _, body = s.raw("POST", SAR, {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview", "spec": {"user": "bob"}})
    eq(code, 422, "no attributes: %r" % body)


run_cases()
