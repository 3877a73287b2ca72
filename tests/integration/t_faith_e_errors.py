# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group E: errors, retries, auth
(docs/apiserver.md §10 group E; §5.1-5.3, §6.1-6.3).

Adaptations:
- F-E2/F-E3 scope the fault to GET /api/v1/namespaces/default/configmaps so
  discovery and the dispatcher's GET /version are unaffected.
- F-E4: the modern kubectl refuses to send a token over plain http, so the
  server runs with --tls (the harness default) and the wrong token is given
  with --token.
- F-E5: modern kubectl (Go >= 1.17) no longer has the GODEBUG escape hatch;
  the error reads "x509: certificate relies on legacy Common Name field,
  use SANs instead" or, for an IP host, "x509: cannot validate certificate
  for 127.0.0.1 because it doesn't contain any IP SANs".
- F-E6 waits 61 s (python re-reads the token file when it is older than
  one minute); it is the only long case."""
import json
import os
import time

from cuetest import case, check, eq, run_cases

CMS = "/api/v1/namespaces/default/configmaps"


def api_exc(fn, *a, **kw):
    from kubernetes.client.rest import ApiException
    try:
        fn(*a, **kw)
    except ApiException as e:
        return e.status, e.body, e
    raise AssertionError("call succeeded, wanted ApiException")


@case("F-E1")
def e1(s):
    from kubernetes import client
    v1 = client.CoreV1Api(s.api())
    code, body, e = api_exc(v1.read_namespaced_config_map, "nope", "default")
    eq(code, 404, "code")
    eq(json.loads(body), {
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": 'configmaps "nope" not found',
        "reason": "NotFound", "details": {"name": "nope",
                                          "kind": "configmaps"},
        "code": 404}, "NotFound Status body")
    eq(e.headers.get("Content-Type"), "application/json", "Content-Type")
    # CRs and missing namespaces name the resource the same way
    code, _, b = s.raw("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                       "default/leases/nope")
    eq((code, b["message"], b["details"]),
       (404, 'leases.coordination.k8s.io "nope" not found',
        {"name": "nope", "group": "coordination.k8s.io", "kind": "leases"}),
       "Lease NotFound")


@case("F-E2")
def e2(s):
    from kubernetes import client
    s.kubectl("get", "ns")  # discovery cached before the fault
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "retryAfter": 1, "count": 2}])
    mark = s.log_mark()
    t0 = time.time()
    p = s.kubectl("get", "cm")
    took = time.time() - t0
    check(1.8 <= took <= 5, "kubectl took %.2fs, want ~2s (2 retries "
          "after Retry-After: 1)" % took)
    check("No resources found" in p.stderr, "kubectl output %r %r" %
          (p.stdout, p.stderr))
    eq([e["code"] for e in s.requests(mark, verb="GET", path=CMS)],
       [429, 429, 200], "GET codes")
    # python: its source suggests it never retries on status, but the
    # Debian urllib3 1.26 default Retry(3) honours Retry-After on 429/503
    # (RETRY_AFTER_STATUS_CODES). So with Retry-After python waits and
    # succeeds; without it python raises ApiException(429) at once.
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "retryAfter": 1, "count": 1}])
    v1 = client.CoreV1Api(s.api())
    mark = s.log_mark()
    t0 = time.time()
    v1.list_namespaced_config_map("default")
    check(time.time() - t0 >= 0.9, "urllib3 did not wait for Retry-After")
    eq([e["code"] for e in s.requests(mark, verb="GET", path=CMS)],
       [429, 200], "python requests with Retry-After")
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "count": 1}])
    mark = s.log_mark()
    code, body, e = api_exc(v1.list_namespaced_config_map, "default")
    eq(code, 429, "python status (no retries)")
    eq(len(s.requests(mark, verb="GET", path=CMS)), 1, "python requests")
    b = json.loads(body)
    eq((b["kind"], b["status"], b["reason"], b["code"]),
       ("Status", "Failure", "TooManyRequests", 429), "429 Status")
    # the Status form with Retry-After: header and details agree (5.1)
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "retryAfter": 1, "count": 1}])
    code, hdrs, b = s.raw("GET", CMS)
    eq((code, hdrs.get("Retry-After"), b.get("reason"),
        b.get("details", {}).get("retryAfterSeconds")),
       (429, "1", "TooManyRequests", 1), "429 Status with Retry-After")
    # the plain-text form of the max-in-flight filter (5.2)
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "retryAfter": 1, "count": 2, "plain": True}])
    t0 = time.time()
    s.kubectl("get", "cm")
    check(time.time() - t0 >= 1.8, "kubectl did not wait on plain 429")
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 429,
               "retryAfter": 1, "count": 1, "plain": True}])
    code, hdrs, body = s.raw("GET", CMS)
    eq((code, hdrs.get("Retry-After"), body),
       (429, "1", b"Too many requests, please try again later.\n"),
       "plain 429")


@case("F-E3")
def e3(s):
    s.kubectl("get", "ns")
    s.faults([{"method": "GET", "pathPrefix": CMS, "code": 500,
               "count": 1}])
    mark = s.log_mark()
    t0 = time.time()
    p = s.kubectl("get", "cm", check=False)
    took = time.time() - t0
    check(p.returncode != 0, "kubectl succeeded")
    check("Error from server (InternalError)" in p.stderr,
          "stderr %r" % p.stderr)
    check(took < 1.5, "kubectl took %.2fs (retried without Retry-After?)" %
          took)
    eq([e["code"] for e in s.requests(mark, verb="GET", path=CMS)], [500],
       "GETs (no retry)")


@case("F-E4")
def e4(s):
    from kubernetes import client, config
    p = s.kubectl("--token", "wrong-token", "get", "cm", check=False)
    check(p.returncode != 0, "kubectl with a wrong token succeeded")
    # kubectl 1.20 (and modern kubectl on non-discovery requests) print
    # "(Unauthorized)" from the Status message; modern kubectl fails in
    # discovery first, whose error carries client-go's generic text.
    check("error: You must be logged in to the server (Unauthorized)" in
          p.stderr or "error: You must be logged in to the server (the "
          "server has asked for the client to provide credentials)" in
          p.stderr, "stderr %r" % p.stderr)
    # with discovery cached, the object request's Status message is shown
    s.kubectl("get", "cm")
    p = s.kubectl("--token", "wrong-token", "get", "cm", check=False)
    check("error: You must be logged in to the server (Unauthorized)" in
          p.stderr, "stderr with cached discovery %r" % p.stderr)
    api = config.new_client_from_config(config_file=s.kubeconfig)
    api.configuration.api_key["authorization"] = "Bearer wrong-token"
    v1 = client.CoreV1Api(api)
    code, body, _ = api_exc(v1.list_namespaced_config_map, "default")
    eq(code, 401, "python status")
    b = json.loads(body)
    eq((b["kind"], b["status"], b["reason"], b["code"], b["message"]),
       ("Status", "Failure", "Unauthorized", 401, "Unauthorized"),
       "401 Status")
    code, _, b = s.raw("GET", CMS, token=False)
    eq((code, b["reason"]), (401, "Unauthorized"), "no token")
    # the scheme is case-insensitive (in-cluster python sends "bearer")
    code, _, _ = s.raw("GET", CMS, token=False,
                       headers={"Authorization": "bearer " + s.token})
    eq(code, 200, "lower-case bearer")


@case("F-E5", args=["--no-san"])
def e5(s):
    p = s.kubectl("get", "cm", check=False)
    check(p.returncode != 0, "kubectl accepted a certificate without SANs")
    check("x509: certificate relies on legacy Common Name field" in p.stderr
          or "doesn't contain any IP SANs" in p.stderr,
          "stderr %r" % p.stderr)


@case("F-E6")
def e6(s):
    from kubernetes import client
    from kubernetes.config.incluster_config import InClusterConfigLoader
    s.tokens(add=[("tok-one", "sa-one")])
    tfile = os.path.join(s.dir, "token")
    with open(tfile, "w") as f:
        f.write("tok-one")  # no trailing newline: python does not strip
    port = s.url.rsplit(":", 1)[1]
    cfg = client.Configuration()
    InClusterConfigLoader(
        token_filename=tfile, cert_filename=s.ca_file,
        environ={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                 "KUBERNETES_SERVICE_PORT": port}).load_and_set(cfg)
    eq(cfg.host, "https://127.0.0.1:%s" % port, "in-cluster host")
    check(cfg.get_api_key_with_prefix("authorization") == "bearer tok-one",
          "python header %r" % cfg.get_api_key_with_prefix("authorization"))
    v1 = client.CoreV1Api(client.ApiClient(configuration=cfg))
    mark = s.log_mark()
    v1.list_namespaced_config_map("default")
    eq([(e["user"], e["code"]) for e in s.requests(mark, path=CMS)],
       [("sa-one", 200)], "first list (lower-case bearer accepted)")
    # rotate: new token in the file, old one revoked
    s.tokens(add=[("tok-two", "sa-two")], revoke=["tok-one"])
    with open(tfile, "w") as f:
        f.write("tok-two")
    code, _, _ = api_exc(v1.list_namespaced_config_map, "default")
    eq(code, 401, "list with the revoked (cached) token")
    time.sleep(61)
    mark = s.log_mark()
    v1.list_namespaced_config_map("default")
    eq([(e["user"], e["code"]) for e in s.requests(mark, path=CMS)],
       [("sa-two", 200)], "list after python re-read the token file")


if __name__ == "__main__":
    run_cases()
