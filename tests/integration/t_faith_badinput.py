# SPDX-License-Identifier: Apache-2.0
"""Bad input: malformed bodies, oversized bodies, invalid names, unknown
paths, bad query parameters and garbage on the wire. Every answer must be
the real apiserver's (a Status with the right code and reason,
docs/apiserver.md §1.1, §1.2, §4.1, §4.8, §5.1-5.2), and the
server must keep answering afterwards."""
import json
import socket
import time

from cuetest import Soft, case, check, eq, run_cases

CMS = "/api/v1/namespaces/default/configmaps"


def alive(s, what):
    code, _, body = s.raw("GET", "/healthz", timeout=5)
    eq((code, body), (200, b"ok"), "healthz after %s" % what)
    code, _, body = s.raw("GET", CMS, timeout=5)
    eq((code, body.get("kind")), (200, "ConfigMapList"),
       "list after %s" % what)
    check(s.proc.poll() is None, "server exited after %s" % what)


def status(body, code, reason):
    check(isinstance(body, dict), "not a Status: %r" % (body,)[:200])
    eq((body.get("kind"), body.get("apiVersion"), body.get("status"),
        body.get("code"), body.get("reason")),
       ("Status", "v1", "Failure", code, reason), "Status")
    eq(body.get("metadata"), {}, "Status metadata")


@case("F-BAD-json")
def bad_json(s):
    s.raw("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "cm1"}, "data": {"k": "v"}})
    bodies = [
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":',
        b"[1]", b"null", b'"x"', b"\xff\xfe\x00", b"",
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}',
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},'
        b'"data":{"k":1}}',
        b"[" * 100000,
        b'{"a":' * 50000 + b"1" + b"}" * 50000,
    ]
    soft = Soft()
    for i, b in enumerate(bodies):
        for method, path in (("POST", CMS), ("PUT", CMS + "/cm1")):
            what = "%s body #%d %r" % (method, i, b[:60])
            with soft.item(what):
                code, hdrs, body = s.raw(method, path, b)
                eq(code, 400, "code")
                status(body, 400, "BadRequest")
                eq(hdrs.get("Content-Type"), "application/json",
                   "Content-Type")
        alive(s, "body #%d" % i)
    # a body without TypeMeta is decoded with the endpoint's kind as the
    # default (json serializer gvkWithDefaults), so {} fails validation
    with soft.item("POST {}"):
        code, _, body = s.raw("POST", CMS, b"{}")
        eq(code, 422, "code")
        status(body, 422, "Invalid")
        check("metadata.name: Required value: name or generateName is "
              "required" in body["message"], body["message"])
        eq(body["details"]["causes"][0]["reason"], "FieldValueRequired",
           "causes[0].reason (field.Required)")
    # PATCH bodies that are not valid for their patch type
    for ct, b in (("application/merge-patch+json", b"{"),
                  ("application/json-patch+json", b'{"op":"add"}'),
                  ("application/json-patch+json", b"[{]"),
                  ("application/strategic-merge-patch+json", b"[1,")):
        code, _, body = s.raw("PATCH", CMS + "/cm1", b,
                              {"Content-Type": ct})
        eq(code, 400, "PATCH %s %r" % (ct, b))
        status(body, 400, "BadRequest")
    alive(s, "bad patches")
    # an unknown media type is 415, not 400
    code, _, body = s.raw("PATCH", CMS + "/cm1", b"{}",
                          {"Content-Type": "application/x-nonsense"})
    eq(code, 415, "PATCH with an unknown Content-Type")
    status(body, 415, "UnsupportedMediaType")
    code, _, body = s.raw("GET", CMS + "/cm1")
    eq((code, body["metadata"]["name"]), (200, "cm1"), "cm1 still there")
    with soft.item("cm1 after the rejected PUTs"):
        eq(body.get("data"), {"k": "v"}, "cm1 data")
    soft.done()


@case("F-BAD-size")
def bad_size(s):
    big = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},'
           '"data":{"a":"' + "a" * (3 * 1024 * 1024 + 16) + '"}}')
    for method, path in (("POST", CMS), ("PUT", CMS + "/big"),
                         ("PATCH", CMS + "/big")):
        code, _, body = s.raw(method, path, big, {"Content-Type":
                                                  "application/merge-patch+"
                                                  "json"} if method ==
                              "PATCH" else None)
        eq(code, 413, "%s of %d bytes" % (method, len(big)))
        status(body, 413, "RequestEntityTooLarge")
        eq(body["message"], "Request entity too large: limit is 3145728",
           "413 message")
        alive(s, "413 " + method)
    # just under the limit is accepted (the limit is on the body)
    ok = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok"},'
          '"data":{"a":"' + "a" * (1024 * 1024 - 200) + '"}}')
    code, _, body = s.raw("POST", CMS, ok)
    eq(code, 201, "1 MiB ConfigMap")
    alive(s, "1 MiB body")


@case("F-BAD-names")
def bad_names(s):
    cases = [
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"name": "Bad_Name"}, "metadata.name"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"name": "a" * 254}, "metadata.name"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"name": "-lead"}, "metadata.name"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {}, "metadata.name"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"generateName": "Bad_"}, "metadata.generateName"),
        ("/api/v1/namespaces", "Namespace", "v1", {"name": "a" * 64},
         "metadata.name"),
        ("/api/v1/namespaces", "Namespace", "v1", {"name": "dot.ted"},
         "metadata.name"),
        ("/apis/coordination.k8s.io/v1/namespaces/default/leases", "Lease",
         "coordination.k8s.io/v1", {"name": "UPPER"}, "metadata.name"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"name": "ok", "labels": {"a": "b c"}}, "metadata.labels"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap", "v1",
         {"name": "ok", "labels": {"-bad-key": "v"}}, "metadata.labels"),
    ]
    soft = Soft()
    for path, kind, av, md, field in cases:
        what = "%s %r" % (kind, md)
        with soft.item(what):
            check_invalid(s, path, kind, av, md, field, what)
        alive(s, what)
    soft.done()


def check_invalid(s, path, kind, av, md, field, what):
    """POST metadata md; expect 422 Invalid naming `field`."""
    code, _, body = s.raw("POST", path, {"apiVersion": av, "kind": kind,
                                         "metadata": md})
    eq(code, 422, "code")
    status(body, 422, "Invalid")
    causes = body.get("details", {}).get("causes", [])
    check(causes and all("field" in c for c in causes),
          "causes %r" % (causes,))
    check(any(c["field"] == field or c["field"].startswith(field + "[")
              for c in causes), "fields %r, want %s" %
          ([c["field"] for c in causes], field))
    eq(body["details"].get("kind"), kind, "details.kind")
    check(body["message"].startswith('%s "' % kind) and
          " is invalid: " in body["message"], body["message"])


@case("F-BAD-mismatch")
def bad_mismatch(s):
    # URL name and namespace mismatches are 400 (4.1, 4.2)
    code, _, body = s.raw("POST", CMS, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "other"}})
    eq(code, 400, "namespace mismatch")
    status(body, 400, "BadRequest")
    eq(body["message"], "the namespace of the provided object does not "
       "match the namespace sent on the request", "namespace mismatch")
    s.raw("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "a"}})
    code, _, body = s.raw("PUT", CMS + "/a", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})
    eq(code, 400, "name mismatch")
    eq(body["message"], "the name of the object (b) does not match the "
       "name on the URL (a)", "name mismatch")
    code, _, body = s.raw("POST", CMS, {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
    eq(code, 400, "kind mismatch")
    status(body, 400, "BadRequest")
    alive(s, "mismatches")


@case("F-BAD-paths")
def bad_paths(s):
    for method, p in (
            ("GET", "/apis/nope.example.com/v1/things"),
            ("GET", "/api/v2"),
            ("GET", "/foo"),
            ("GET", "/api/v1/namespaces/default/nothings"),
            ("GET", "/api/v1/namespaces/default/configmaps/x/bogus"),
            ("GET", "/apis/example.com/v1"),
            ("GET", "/apis/coordination.k8s.io/v2"),
            ("GET", "/api/v1/namespaces/default/namespaces"),  # cluster kind
            ("GET", "/api/v1/configmaps/x"),  # item without namespace
            ("POST", "/api/v1/configmaps"),
            ("DELETE", "/apis/nope/v1/x"),
            ("GET", "/api/v1/namespaces/default/configmaps/a/b/c/d/e/f/g"),
            ("GET", "/" + "a/" * 2000),
            ("GET", "/%zz")):
        code, _, body = s.raw(method, p, {} if method == "POST" else None)
        eq(code, 404, "%s %s" % (method, p[:60]))
        status(body, 404, "NotFound")
        alive(s, p[:60])
    # a missing namespace is a 404 naming the namespace (4.1)
    code, _, body = s.raw("POST", "/api/v1/namespaces/nope/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    eq((code, body.get("message")), (404, 'namespaces "nope" not found'),
       "create in a missing namespace")


@case("F-BAD-query")
def bad_query(s):
    soft = Soft()
    for q in ("limit=abc", "limit=-1x", "timeoutSeconds=abc&watch=1",
              "labelSelector=env%20in", "labelSelector=a%3D%3D%3Db",
              "fieldSelector=spec.nope%3D1", "continue=%%%",
              "resourceVersionMatch=Exact"):
        # a raw stream, so that a server that wrongly starts a watch
        # fails the check instead of hanging the test
        with soft.item("?" + q):
            st = s.stream(CMS + "?" + q)
            code = st.status
            check(code in (400, 422), "got %d (%r)" % (code, st.body[:100]))
            st.wait_end(5)
            body = json.loads(st.body)
            status(body, code, "BadRequest" if code == 400 else "Invalid")
        alive(s, "?" + q)
    soft.done()


@case("F-BAD-wire")
def bad_wire(s):
    from urllib.parse import urlparse
    u = urlparse(s.url)
    for raw in (b"GARBAGE\r\n\r\n", b"GET\r\n\r\n",
                b"GET / HTTP/9.9\r\n\r\n",
                b"GET /api HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                b"GET /api HTTP/1.1\r\n" + b"X-Long: " + b"a" * 70000 +
                b"\r\n\r\n",
                b"POST " + CMS.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
                b"\x16\x03\x01\x00\x05hello"):
        sock = socket.create_connection((u.hostname, u.port), timeout=5)
        sock = s.ctx.wrap_socket(sock, server_hostname=u.hostname)
        resp = b""
        try:
            sock.settimeout(1.5)
            sock.sendall(raw)
            t0 = time.time()
            while time.time() - t0 < 1.5:
                d = sock.recv(65536)
                if not d:
                    break
                resp += d
        except OSError:
            pass
        finally:
            sock.close()
        if resp:
            check(resp.startswith(b"HTTP/1.1 4") or
                  resp.startswith(b"HTTP/1.0 4") or
                  resp.startswith(b"HTTP/1.1 505"),
                  "answer to %r: %r" % (raw[:30], resp[:60]))
        alive(s, "raw %r" % raw[:30])
    # a client that connects and never completes TLS must not block others
    idle = socket.create_connection((u.hostname, u.port), timeout=5)
    try:
        t0 = time.time()
        alive(s, "an idle TLS connection")
        check(time.time() - t0 < 2, "server blocked by an idle client")
    finally:
        idle.close()


if __name__ == "__main__":
    run_cases()
