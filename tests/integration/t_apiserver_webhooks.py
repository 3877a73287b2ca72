# SPDX-License-Identifier: Apache-2.0
"""Admission webhooks in cueue-apiserver (docs/apiserver.md §9): the
server calls MutatingWebhookConfiguration / ValidatingWebhookConfiguration
webhooks as kube-apiserver does. The webhooks here are a small HTTPS
server in a thread of this test (python ssl + http.server) with a CA and
serving certificate minted by the openssl CLI."""
import atexit
import base64
import http.server
import json
import os
import shutil
import tempfile
import threading
import time
from urllib.parse import urlsplit

from cuetest import (case, check, eq, free_port, mint_certs, run_cases,
                     wait_for)

ADM = "/apis/admissionregistration.k8s.io/v1"
CMS = "/api/v1/namespaces/default/configmaps"


# ---- the webhook server ---------------------------------------------

def allow(review, **fields):
    """An AdmissionReview v1 answer to `review`."""
    resp = {"uid": review["request"]["uid"], "allowed": True}
    resp.update(fields)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": resp}


def patch(review, ops):
    return allow(review, patchType="JSONPatch", patch=base64.b64encode(
        json.dumps(ops).encode()).decode())


def labels_of(obj):
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def add_label(review, key, value):
    obj = review["request"]["object"]
    if labels_of(obj):
        op = {"op": "add", "path": "/metadata/labels/" +
              key.replace("~", "~0").replace("/", "~1"), "value": value}
    else:
        op = {"op": "add", "path": "/metadata/labels",
              "value": {key: value}}
    return patch(review, [op])


class Hooks:
    """HTTPS webhook server: behaviour per path, every call recorded."""

    def __init__(self):
        import ssl
        self.dir = tempfile.mkdtemp(prefix="cueue-webhooks-")
        atexit.register(shutil.rmtree, self.dir, True)
        mint_certs(self.dir,
                   "IP:127.0.0.1,DNS:localhost,DNS:hooks.default.svc")
        with open(os.path.join(self.dir, "ca.crt"), "rb") as f:
            self.ca = base64.b64encode(f.read()).decode()
        self.routes = {}
        self.calls = []
        self.lock = threading.Lock()
        hooks = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                review = json.loads(self.rfile.read(n))
                u = urlsplit(self.path)
                with hooks.lock:
                    hooks.calls.append({"path": u.path, "query": u.query,
                                        "ctype": self.headers.get(
                                            "Content-Type"),
                                        "review": review})
                    fn = hooks.routes.get(u.path)
                if fn is None:
                    self.send_error(404)
                    return
                out = fn(review)
                body = out if isinstance(out, bytes) else \
                    json.dumps(out).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the caller gave up (timeout cases)

        class Srv(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(self.dir, "srv.crt"),
                            os.path.join(self.dir, "srv.key"))
        self.httpd = Srv(("127.0.0.1", 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket,
                                            server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def route(self, path, fn):
        with self.lock:
            self.routes[path] = fn
        return self.url(path)

    def url(self, path):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def got(self, path):
        with self.lock:
            return [c for c in self.calls if c["path"] == path]

    def reviews(self, path):
        return [c["review"]["request"] for c in self.got(path)]


H = Hooks()


# ---- configurations ---------------------------------------------------

def rule(ops=("CREATE",), groups=("",), versions=("v1",),
         resources=("configmaps",), scope=None):
    r = {"operations": list(ops), "apiGroups": list(groups),
         "apiVersions": list(versions), "resources": list(resources)}
    if scope:
        r["scope"] = scope
    return r


def hook(name, path=None, url=None, rules=None, **kw):
    h = {"name": name,
         "clientConfig": {"url": url or H.url(path), "caBundle": H.ca},
         "rules": rules or [rule()], "sideEffects": "None",
         "admissionReviewVersions": ["v1"]}
    h.update(kw)
    return h


def register(s, kind, name, hooks, want=201):
    plural = ("mutatingwebhookconfigurations" if kind == "Mutating"
              else "validatingwebhookconfigurations")
    code, _, body = s.raw("POST", "%s/%s" % (ADM, plural), {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "%sWebhookConfiguration" % kind,
        "metadata": {"name": name}, "webhooks": hooks})
    eq(code, want, "register %s: %r" % (name, body))
    return body


def cm(name, labels=None, ns=None, **extra):
    md = {"name": name}
    if labels:
        md["labels"] = labels
    if ns:
        md["namespace"] = ns
    o = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
         "data": {"k": "v"}}
    o.update(extra)
    return o


def create_cm(s, name, labels=None, ns="default", query=""):
    return s.raw("POST", "/api/v1/namespaces/%s/configmaps%s" % (ns, query),
                 cm(name, labels))


# ---- cases ------------------------------------------------------------

@case("W-mutate")
def mutate_applied(s):
    H.route("/m1", lambda rv: dict(add_label(
        rv, "example.com/mutated", "yes"), response=dict(add_label(
            rv, "example.com/mutated", "yes")["response"],
            warnings=['careful "now"'])))
    register(s, "Mutating", "m1", [hook("m1.example.com", "/m1")])
    code, hdrs, body = create_cm(s, "c1", {"a": "b"})
    eq(code, 201, "create: %r" % body)
    eq(hdrs.get("Warning"), '299 - "careful \\"now\\""',
       "webhook warning")
    eq(labels_of(body), {"a": "b", "example.com/mutated": "yes"},
       "labels in the answer")
    got = s.get_json(CMS + "/c1")
    eq(labels_of(got)["example.com/mutated"], "yes", "stored label")
    calls = H.got("/m1")
    eq(len(calls), 1, "calls")
    c = calls[0]
    eq(c["query"], "timeout=10s", "timeout query")
    eq(c["ctype"], "application/json", "content type")
    rv = c["review"]
    eq((rv["apiVersion"], rv["kind"]),
       ("admission.k8s.io/v1", "AdmissionReview"), "review type")
    rq = rv["request"]
    eq(rq["kind"], {"group": "", "version": "v1", "kind": "ConfigMap"},
       "kind")
    eq(rq["resource"], {"group": "", "version": "v1",
                        "resource": "configmaps"}, "resource")
    eq(rq["requestKind"], rq["kind"], "requestKind")
    check("subResource" not in rq, "no subResource on the main resource")
    eq((rq["operation"], rq["name"], rq["namespace"]),
       ("CREATE", "c1", "default"), "operation/name/namespace")
    eq(rq["oldObject"], None, "oldObject")
    eq(rq["object"]["data"], {"k": "v"}, "object")
    eq(rq["dryRun"], False, "dryRun")
    eq(rq["options"]["kind"], "CreateOptions", "options")
    eq(rq["userInfo"]["username"], "admin", "user")
    check("system:authenticated" in rq["userInfo"]["groups"], "groups")
    # kubectl create shows the mutation too.
    p = s.kubectl("create", "-f", "-", "-o", "json",
                  input=json.dumps(cm("c2")))
    eq(labels_of(json.loads(p.stdout)), {"example.com/mutated": "yes"},
       "kubectl create")


@case("W-deny")
def denial(s):
    H.route("/deny403", lambda rv: allow(rv, allowed=False, status={
        "code": 403, "reason": "Forbidden", "message": "team quota"}))
    H.route("/denybare", lambda rv: allow(rv, allowed=False))
    H.route("/deny200", lambda rv: allow(rv, allowed=False, status={
        "code": 200, "message": "low code"}))
    register(s, "Validating", "v1", [
        hook("deny403.example.com", "/deny403",
             objectSelector={"matchLabels": {"case": "403"}}),
        hook("denybare.example.com", "/denybare",
             objectSelector={"matchLabels": {"case": "bare"}}),
        hook("deny200.example.com", "/deny200",
             objectSelector={"matchLabels": {"case": "200"}})])
    code, _, body = create_cm(s, "d1", {"case": "403"})
    eq(code, 403, "code")
    eq((body["kind"], body["status"], body["reason"], body["code"]),
       ("Status", "Failure", "Forbidden", 403), "status")
    eq(body["message"], 'admission webhook "deny403.example.com" denied '
       'the request: team quota', "message")
    code, _, body = create_cm(s, "d2", {"case": "bare"})
    eq((code, body["code"]), (400, 400), "default code")
    eq(body["message"], 'admission webhook "denybare.example.com" denied '
       'the request without explanation', "message without status")
    code, _, body = create_cm(s, "d3", {"case": "200"})
    eq((code, body["code"]), (400, 400), "code forced to >= 400")
    code, _, _ = s.raw("GET", CMS + "/d1")
    eq(code, 404, "denied object not stored")
    p = s.kubectl("create", "-f", "-", check=False,
                  input=json.dumps(cm("d4", {"case": "403"})))
    check(p.returncode != 0, "kubectl must fail")
    check('admission webhook "deny403.example.com" denied the request: '
          'team quota' in p.stderr, "kubectl stderr: %r" % p.stderr)


@case("W-down")
def failure_policy_down(s):
    port = free_port()
    down = "https://127.0.0.1:%d/gone" % port
    register(s, "Validating", "down", [
        hook("fail.example.com", url=down,
             objectSelector={"matchLabels": {"policy": "fail"}}),
        hook("ignore.example.com", url=down, failurePolicy="Ignore",
             objectSelector={"matchLabels": {"policy": "ignore"}})])
    got = s.get_json(ADM + "/validatingwebhookconfigurations/down")
    eq(got["webhooks"][0]["failurePolicy"], "Fail", "default failurePolicy")
    eq(got["webhooks"][0]["timeoutSeconds"], 10, "default timeoutSeconds")
    eq(got["webhooks"][0]["matchPolicy"], "Equivalent",
       "default matchPolicy")
    code, _, body = create_cm(s, "f1", {"policy": "fail"})
    eq((code, body.get("reason")), (500, "InternalError"), "Fail: %r" % body)
    eq(body["message"], 'Internal error occurred: failed calling webhook '
       '"fail.example.com": failed to call webhook: Post '
       '"%s?timeout=10s": dial tcp 127.0.0.1:%d: connect: connection '
       'refused' % (down, port), "message")
    code, _, body = create_cm(s, "f2", {"policy": "ignore"})
    eq(code, 201, "Ignore fails open: %r" % body)


@case("W-timeout")
def failure_policy_timeout(s):
    def slow(rv):
        time.sleep(2.5)
        return allow(rv)
    H.route("/slow", slow)
    register(s, "Validating", "slow", [
        hook("slowfail.example.com", "/slow", timeoutSeconds=1,
             objectSelector={"matchLabels": {"policy": "fail"}}),
        hook("slowignore.example.com", "/slow", timeoutSeconds=1,
             failurePolicy="Ignore",
             objectSelector={"matchLabels": {"policy": "ignore"}})])
    result = {}

    def write():
        t0 = time.monotonic()
        result["resp"] = create_cm(s, "t1", {"policy": "fail"})
        result["secs"] = time.monotonic() - t0
    th = threading.Thread(target=write)
    th.start()
    wait_for(lambda: H.got("/slow"), 5, what="the slow webhook called")
    # The server keeps serving while a write waits for its webhook.
    t0 = time.monotonic()
    eq(s.raw("GET", CMS)[0], 200, "list during the call")
    check(time.monotonic() - t0 < 0.5, "server blocked by a webhook call")
    th.join(10)
    code, _, body = result["resp"]
    eq(code, 500, "Fail on timeout: %r" % body)
    check(body["message"].startswith(
        'Internal error occurred: failed calling webhook '
        '"slowfail.example.com": failed to call webhook: Post "%s'
        '?timeout=1s": context deadline exceeded' % H.url("/slow")),
        "message: %r" % body["message"])
    check(0.9 < result["secs"] < 2.4, "timed out after %.2fs, want ~1s" %
          result["secs"])
    eq(H.got("/slow")[0]["query"], "timeout=1s", "timeout query")
    t0 = time.monotonic()
    code, _, body = create_cm(s, "t2", {"policy": "ignore"})
    eq(code, 201, "Ignore on timeout: %r" % body)
    check(time.monotonic() - t0 < 2.4, "Ignore waited for the webhook")


@case("W-selectors")
def selectors(s):
    H.route("/nsel", lambda rv: add_label(rv, "nsel", "hit"))
    H.route("/osel", lambda rv: allow(rv))
    H.route("/nsobj", lambda rv: allow(rv))
    H.route("/cluster", lambda rv: allow(rv))
    s.raw("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"env": "prod"}}})
    s.namespace("team-b")
    register(s, "Mutating", "sel", [
        hook("nsel.example.com", "/nsel",
             namespaceSelector={"matchLabels": {"env": "prod"}}),
        hook("nsobj.example.com", "/nsobj",
             rules=[rule(resources=["namespaces"])],
             namespaceSelector={"matchExpressions": [
                 {"key": "env", "operator": "In", "values": ["prod"]}]}),
        hook("cluster.example.com", "/cluster",
             rules=[rule(groups=["rbac.authorization.k8s.io"],
                         resources=["clusterroles"])],
             namespaceSelector={"matchLabels": {"never": "matches"}})])
    register(s, "Validating", "osel", [
        hook("osel.example.com", "/osel",
             rules=[rule(ops=["*"])],
             objectSelector={"matchLabels": {"hook": "yes"}})])
    code, _, a = create_cm(s, "n1", ns="team-a")
    eq(code, 201, "create in team-a")
    code, _, b = create_cm(s, "n1", ns="team-b")
    eq(code, 201, "create in team-b")
    eq(labels_of(a), {"nsel": "hit"}, "namespace selector matched")
    eq(labels_of(b), {}, "namespace selector did not match")
    # Namespace objects are matched on their own labels.
    s.raw("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-c", "labels": {"env": "prod"}}})
    s.namespace("team-d")
    eq([r["object"]["metadata"]["name"] for r in H.reviews("/nsobj")],
       ["team-c"], "namespace objects")
    # No effect on other cluster-scoped objects.
    code, _, _ = s.raw(
        "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole", "metadata": {"name": "r1"}, "rules": []})
    eq(code, 201, "clusterrole")
    eq(len(H.got("/cluster")), 1, "cluster-scoped object ignores "
       "namespaceSelector")
    # objectSelector: object or oldObject labels.
    create_cm(s, "o1", {"hook": "yes"})
    create_cm(s, "o2")
    eq([r["name"] for r in H.reviews("/osel")], ["o1"], "object selector")
    code, _, _ = s.raw("PATCH", CMS + "/o1", {"metadata": {"labels": None}},
                       headers={"Content-Type":
                                "application/merge-patch+json"})
    eq(code, 200, "unlabel")
    last = H.reviews("/osel")[-1]
    eq((last["operation"], labels_of(last["object"]),
        labels_of(last["oldObject"])), ("UPDATE", {}, {"hook": "yes"}),
       "matched on oldObject")
    create_cm(s, "o3", {"hook": "yes"})
    eq(s.raw("DELETE", CMS + "/o3")[0], 200, "delete")
    last = H.reviews("/osel")[-1]
    eq((last["operation"], last["object"], last["oldObject"]["metadata"]
        ["name"], last["options"]["kind"]),
       ("DELETE", None, "o3", "DeleteOptions"), "delete review")
    eq([r["name"] for r in H.reviews("/osel")], ["o1", "o1", "o3", "o3"],
       "o2 (unlabelled) never matched")


@case("W-rules")
def rules(s):
    H.route("/rupd", lambda rv: allow(rv))
    H.route("/rsec", lambda rv: allow(rv))
    H.route("/rstatus", lambda rv: allow(rv))
    H.route("/rstar", lambda rv: allow(rv))
    H.route("/rcluster", lambda rv: allow(rv))
    H.route("/rjobm", lambda rv: allow(rv))
    register(s, "Mutating", "jobs", [
        hook("jobm.example.com", "/rjobm",
             rules=[rule(groups=["batch"], resources=["jobs"])])])
    register(s, "Validating", "rules", [
        hook("upd.example.com", "/rupd", rules=[rule(ops=["UPDATE"])]),
        hook("sec.example.com", "/rsec", rules=[rule(resources=["secrets"])]),
        hook("status.example.com", "/rstatus",
             rules=[rule(ops=["*"], groups=["batch"],
                         resources=["*/status"])]),
        hook("star.example.com", "/rstar",
             rules=[rule(ops=["UPDATE"], groups=["*"], versions=["*"],
                         resources=["*"])]),
        hook("cluster.example.com", "/rcluster",
             rules=[rule(ops=["*"], resources=["*"], scope="Cluster")])])
    create_cm(s, "r1")
    eq(H.got("/rupd"), [], "CREATE does not match an UPDATE rule")
    eq(H.got("/rsec"), [], "configmaps do not match a secrets rule")
    eq(H.got("/rcluster"), [], "namespaced object, Cluster scope")
    s.raw("PATCH", CMS + "/r1", {"data": {"k": "w"}},
          headers={"Content-Type": "application/merge-patch+json"})
    eq([r["operation"] for r in H.reviews("/rupd")], ["UPDATE"],
       "PATCH is an UPDATE")
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j1"},
           "spec": {"suspend": True, "template": {"spec": {
               "containers": [{"name": "c", "image": "x"}]}}}}
    jobs = "/apis/batch/v1/namespaces/default/jobs"
    eq(s.raw("POST", jobs, job)[0], 201, "job")
    spec = H.reviews("/rjobm")[0]["object"]["spec"]
    eq((spec.get("backoffLimit"), spec.get("completionMode")),
       (6, "NonIndexed"), "mutating webhooks see the defaulted Job")
    eq(H.got("/rstatus"), [], "*/status does not match the main resource")
    code, _, body = s.raw("PATCH", jobs + "/j1/status",
                          {"status": {"active": 0}},
                          headers={"Content-Type":
                                   "application/merge-patch+json"})
    eq(code, 200, "status patch: %r" % body)
    st = H.reviews("/rstatus")
    eq([(r["subResource"], r["requestSubResource"], r["operation"])
        for r in st], [("status", "status", "UPDATE")], "status review")
    # "*" is every main resource and no subresource: the cm PATCH only.
    eq([r["resource"]["resource"] for r in H.reviews("/rstar")],
       ["configmaps"], "* matches main resources only")
    s.namespace("rules-ns")
    eq([r["object"]["metadata"]["name"] for r in H.reviews("/rcluster")],
       ["rules-ns"], "Cluster scope matches namespaces")


@case("W-order")
def ordering(s):
    def appender(tag):
        def fn(rv):
            ann = (rv["request"]["object"]["metadata"].get("annotations")
                   or {})
            if "trail" in ann:
                op = {"op": "replace",
                      "path": "/metadata/annotations/trail",
                      "value": ann["trail"] + "," + tag}
            elif ann:
                op = {"op": "add", "path": "/metadata/annotations/trail",
                      "value": tag}
            else:
                op = {"op": "add", "path": "/metadata/annotations",
                      "value": {"trail": tag}}
            return patch(rv, [op])
        return fn
    for tag in ("a", "a2", "z"):
        H.route("/order/" + tag, appender(tag))
    H.route("/order-v", lambda rv: allow(rv))
    # Registered out of order: configurations run sorted by name.
    register(s, "Mutating", "z-last", [hook("z.example.com", "/order/z")])
    register(s, "Mutating", "a-first", [
        hook("a.example.com", "/order/a"),
        hook("a2.example.com", "/order/a2")])
    register(s, "Validating", "v", [hook("v.example.com", "/order-v")])
    code, _, body = create_cm(s, "o1")
    eq(code, 201, "create")
    eq(body["metadata"]["annotations"]["trail"], "a,a2,z", "trail")
    z = H.reviews("/order/z")[0]
    eq(z["object"]["metadata"]["annotations"]["trail"], "a,a2",
       "the last webhook sees the earlier patches")
    v = H.reviews("/order-v")[0]
    eq(v["object"]["metadata"]["annotations"]["trail"], "a,a2,z",
       "validating webhooks see the mutated object")


@case("W-validating-view")
def validating_sees_final(s):
    H.route("/vm", lambda rv: add_label(rv, "mutated", "yes"))
    H.route("/vv", lambda rv: allow(rv))
    register(s, "Mutating", "m", [hook("m.example.com", "/vm")])
    register(s, "Validating", "v", [hook("v.example.com", "/vv")])
    code, _, body = s.raw("POST", CMS, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"generateName": "gen-"}})
    eq(code, 201, "create: %r" % body)
    m = H.reviews("/vm")[0]
    eq(m.get("name", ""), "", "mutating review of generateName: no name")
    v = H.reviews("/vv")[0]
    eq(labels_of(v["object"]), {"mutated": "yes"}, "mutated labels")
    md = body["metadata"]
    eq((v["name"], v["object"]["metadata"]["name"]), (md["name"],
       md["name"]), "validating saw the generated name")
    eq(v["object"]["metadata"]["uid"], md["uid"],
       "validating saw the stored uid")
    eq(v["object"]["metadata"]["creationTimestamp"],
       md["creationTimestamp"], "and its creationTimestamp")


@case("W-invalid-response")
def invalid_response(s):
    H.route("/baduid", lambda rv: {"apiVersion": "admission.k8s.io/v1",
                                   "kind": "AdmissionReview",
                                   "response": {"uid": "wrong",
                                                "allowed": True}})
    H.route("/badkind", lambda rv: dict(allow(rv),
                                        apiVersion="admission.k8s.io/v2"))
    H.route("/vpatch", lambda rv: add_label(rv, "x", "y"))
    H.route("/nopatchtype", lambda rv: allow(rv, patch=base64.b64encode(
        b"[]").decode()))
    register(s, "Mutating", "m", [
        hook("baduid.example.com", "/baduid",
             objectSelector={"matchLabels": {"t": "uid"}}),
        hook("baduidignore.example.com", "/baduid", failurePolicy="Ignore",
             objectSelector={"matchLabels": {"t": "uid-ignore"}}),
        hook("badkind.example.com", "/badkind",
             objectSelector={"matchLabels": {"t": "kind"}}),
        hook("nopatchtype.example.com", "/nopatchtype",
             objectSelector={"matchLabels": {"t": "ptype"}})])
    register(s, "Validating", "v", [
        hook("vpatch.example.com", "/vpatch",
             objectSelector={"matchLabels": {"t": "vpatch"}})])
    uid = {}

    def one(name, t):
        code, _, body = create_cm(s, name, {"t": t})
        return code, body.get("message", "") if isinstance(body, dict) \
            else body
    code, msg = one("i1", "uid")
    sent = H.reviews("/baduid")[0]["uid"]
    eq(code, 500, "uid mismatch with Fail")
    eq(msg, 'Internal error occurred: failed calling webhook '
       '"baduid.example.com": received invalid webhook response: expected '
       'response.uid="%s", got "wrong"' % sent, "message")
    uid["n"] = len(H.got("/baduid"))
    code, msg = one("i2", "uid-ignore")
    eq(code, 201, "uid mismatch with Ignore: %s" % msg)
    code, msg = one("i3", "kind")
    eq(code, 500, "wrong apiVersion")
    check("expected webhook response of admission.k8s.io/v1, "
          "Kind=AdmissionReview, got admission.k8s.io/v2, "
          "Kind=AdmissionReview" in msg, msg)
    code, msg = one("i4", "ptype")
    eq(code, 500, "patch without patchType")
    check("webhook returned response.patch but not response.patchType"
          in msg, msg)
    code, msg = one("i5", "vpatch")
    eq(code, 500, "validating webhook with a patch")
    check("validating webhook may not return response.patch" in msg, msg)


@case("W-dryrun")
def dry_run(s):
    H.route("/dry", lambda rv: add_label(rv, "dry", "seen"))
    H.route("/dryunknown", lambda rv: allow(rv))
    register(s, "Mutating", "dry", [
        hook("dry.example.com", "/dry", sideEffects="NoneOnDryRun")])
    code, _, body = create_cm(s, "dr1", query="?dryRun=All")
    eq(code, 201, "dry run: %r" % body)
    eq(labels_of(body), {"dry": "seen"}, "mutated in the dry run")
    eq(H.reviews("/dry")[0]["dryRun"], True, "review.dryRun")
    eq(H.reviews("/dry")[0]["options"]["dryRun"], ["All"], "options")
    eq(s.raw("GET", CMS + "/dr1")[0], 404, "not stored")
    # v1 refuses sideEffects Unknown/Some ...
    body = register(s, "Validating", "bad", [
        hook("unknown.example.com", "/dryunknown", sideEffects="Unknown")],
        want=422)
    check("webhooks[0].sideEffects" in body["message"], body["message"])
    # ... which older API versions stored: such webhooks refuse dry runs.
    code, _, body = s.raw("POST", "/__test/objects", {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "legacy"},
        "webhooks": [hook("unknown.example.com", "/dryunknown",
                          sideEffects="Unknown", failurePolicy="Ignore",
                          timeoutSeconds=10)]})
    eq(code, 200, "store legacy configuration: %r" % body)
    code, _, body = create_cm(s, "dr2", query="?dryRun=All")
    eq((code, body["reason"], body["message"]),
       (400, "BadRequest",
        'admission webhook "unknown.example.com" does not support dry run'),
       "dry run refused even with failurePolicy Ignore")
    eq(H.got("/dryunknown"), [], "not called")
    code, _, _ = create_cm(s, "dr3")
    eq(code, 201, "a real write calls it")
    eq(len(H.got("/dryunknown")), 1, "called once")


@case("W-config-exempt")
def configs_exempt(s):
    port = free_port()
    down = "https://127.0.0.1:%d/x" % port
    everything = [rule(ops=["*"], groups=["*"], versions=["*"],
                       resources=["*/*"])]
    register(s, "Validating", "broken", [
        hook("broken.example.com", url=down, rules=everything)])
    register(s, "Mutating", "broken-m", [
        hook("brokenm.example.com", url=down, rules=everything)])
    code, _, _ = create_cm(s, "blocked")
    eq(code, 500, "ordinary writes fail closed")
    # Configuration writes never call webhooks: they can be fixed.
    register(s, "Validating", "another", [
        hook("another.example.com", url=down)])
    code, _, body = s.raw(
        "PATCH", ADM + "/validatingwebhookconfigurations/broken",
        {"metadata": {"labels": {"x": "y"}}},
        headers={"Content-Type": "application/merge-patch+json"})
    eq(code, 200, "patch: %r" % body)
    for plural, name in (("validatingwebhookconfigurations", "broken"),
                         ("validatingwebhookconfigurations", "another"),
                         ("mutatingwebhookconfigurations", "broken-m")):
        code, _, body = s.raw("DELETE", "%s/%s/%s" % (ADM, plural, name))
        eq(code, 200, "delete %s: %r" % (name, body))
    eq(create_cm(s, "free")[0], 201, "writes work again")
    lst = s.get_json(ADM + "/mutatingwebhookconfigurations")
    eq((lst["kind"], lst["items"]),
       ("MutatingWebhookConfigurationList", []), "list")


@case("W-config-validation")
def config_validation(s):
    code, _, body = s.raw("POST", ADM + "/mutatingwebhookconfigurations", {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "bad"},
        "webhooks": [{"name": "short", "clientConfig": {
            "url": "http://127.0.0.1:1/x"}, "rules": [rule()],
            "timeoutSeconds": 31}]})
    eq(code, 422, "invalid configuration: %r" % body)
    fields = sorted(c["field"] for c in body["details"]["causes"])
    eq(fields, ["webhooks[0].admissionReviewVersions",
                "webhooks[0].clientConfig.url", "webhooks[0].name",
                "webhooks[0].sideEffects", "webhooks[0].timeoutSeconds"],
       "fields")


@case("W-service")
def service_ref(s):
    H.route("/svc", lambda rv: add_label(rv, "via", "service"))
    svc = {"name": "hooks", "namespace": "default", "port": H.port,
           "path": "/svc"}
    h = hook("svc.example.com", "/svc",
             objectSelector={"matchLabels": {"t": "svc"}})
    h["clientConfig"] = {"service": svc, "caBundle": H.ca}
    bad = hook("badsan.example.com", "/svc",
               objectSelector={"matchLabels": {"t": "san"}})
    bad["clientConfig"] = {"service": dict(svc, name="other"),
                           "caBundle": H.ca}
    with open(s.ca_file, "rb") as f:
        other_ca = base64.b64encode(f.read()).decode()
    wrong_ca = hook("wrongca.example.com", "/svc",
                    objectSelector={"matchLabels": {"t": "ca"}})
    wrong_ca["clientConfig"]["caBundle"] = other_ca
    register(s, "Mutating", "svc", [h, bad, wrong_ca])
    code, _, body = create_cm(s, "s1", {"t": "svc"})
    eq(code, 201, "service reference: %r" % body)
    eq(labels_of(body)["via"], "service", "patched")
    eq(H.got("/svc")[0]["query"], "timeout=10s", "service path and query")
    code, _, body = create_cm(s, "s2", {"t": "san"})
    eq(code, 500, "certificate without the service name")
    check(body["message"].endswith(
        'Post "https://other.default.svc:%d/svc?timeout=10s": tls: '
        'failed to verify certificate: x509: certificate is not valid for '
        'other.default.svc' % H.port), body["message"])
    code, _, body = create_cm(s, "s3", {"t": "ca"})
    eq(code, 500, "certificate from another CA")
    check(body["message"].endswith(
        'Post "%s?timeout=10s": tls: failed to verify certificate: x509: '
        'certificate signed by unknown authority' % H.url("/svc")),
        body["message"])
    eq(len(H.got("/svc")), 1, "no TLS failure reached the handler")


GADGETS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


@case("W-equivalent")
def equivalent(s):
    H.route("/eq", lambda rv: add_label(rv, "seen", "v1"))
    H.route("/exact", lambda rv: allow(rv))
    s.apply_crd(s.file("gadgets.yaml", GADGETS), "gadgets.example.com")
    g = [rule(groups=["example.com"], versions=["v1"],
              resources=["gadgets"])]
    register(s, "Mutating", "eq", [
        hook("eq.example.com", "/eq", rules=g),
        hook("exact.example.com", "/exact", rules=g, matchPolicy="Exact")])
    code, _, body = s.raw(
        "POST", "/apis/example.com/v1beta1/namespaces/default/gadgets", {
            "apiVersion": "example.com/v1beta1", "kind": "Gadget",
            "metadata": {"name": "g1"}, "spec": {"x": 1}})
    eq(code, 201, "create at v1beta1: %r" % body)
    eq((body["apiVersion"], labels_of(body)),
       ("example.com/v1beta1", {"seen": "v1"}), "answer")
    rq = H.reviews("/eq")[0]
    eq((rq["kind"]["version"], rq["requestKind"]["version"],
        rq["resource"]["version"], rq["requestResource"]["version"],
        rq["object"]["apiVersion"]),
       ("v1", "v1beta1", "v1", "v1beta1", "example.com/v1"),
       "called in the rule's version")
    eq(H.got("/exact"), [], "matchPolicy Exact")


@case("W-reentrant")
def reentrant(s):
    # A webhook that reads from this API server while it answers: the
    # server must go on serving (no deadlock, no timeout).
    def lookup(rv):
        code, _, _ = s.raw("GET", CMS, timeout=5)
        return allow(rv) if code == 200 else allow(rv, allowed=False)
    H.route("/lookup", lookup)
    register(s, "Validating", "lookup", [hook("lookup.example.com",
                                              "/lookup", timeoutSeconds=5)])
    t0 = time.monotonic()
    code, _, body = create_cm(s, "re1")
    eq(code, 201, "create: %r" % body)
    check(time.monotonic() - t0 < 2, "took %.1fs" % (time.monotonic() - t0))


@case("W-abandon")
def abandon(s):
    # A client that gives up while its write waits, then a shutdown with
    # a call in flight: both end cleanly (the server's exit status and
    # the sanitizer scan of its log prove it).
    gate = threading.Event()

    def held(rv):
        gate.wait(6)
        return allow(rv)
    H.route("/held", held)
    register(s, "Validating", "held", [hook("held.example.com", "/held",
                                            timeoutSeconds=8)])
    try:
        s.raw("POST", CMS, cm("ab1"), timeout=0.5)
        raise AssertionError("the write should still be waiting")
    except OSError:
        pass
    gate.set()
    # (Whether the abandoned write lands is not specified: kube-apiserver
    # cancels it with the client's context.)
    eq(create_cm(s, "ab2")[0], 201, "the server goes on")
    n = len(H.got("/held"))
    gate.clear()
    th = threading.Thread(target=lambda: s.raw("POST", CMS, cm("ab3"),
                                               timeout=10))
    th.start()
    wait_for(lambda: len(H.got("/held")) == n + 1, 5, what="third call")
    t0 = time.monotonic()
    s.stop()
    check(time.monotonic() - t0 < 3, "stop waited for the webhook")
    gate.set()
    th.join(10)


if __name__ == "__main__":
    run_cases()
