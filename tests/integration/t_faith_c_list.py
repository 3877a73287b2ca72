# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group C: LIST, selectors, pagination
(docs/apiserver.md §10 group C; §1.4, §2.1-2.5).

Every case works in its own namespace t<id> ("-n tc1" ...), filled from
data/seven-cms.yaml:
  cm-1 env=a,tier=x  cm-2 env=b  cm-3 env=c,tier=y  cm-4 env=a,skip=1
  cm-5 (none)        cm-6 env=b,tier=z               cm-7 tier=x"""
import json
import subprocess
import time

from cuetest import case, check, data, eq, run_cases

ALL = ["cm-%d" % i for i in range(1, 8)]


def api_exc(fn, *a, **kw):
    from kubernetes.client.rest import ApiException
    try:
        fn(*a, **kw)
    except ApiException as e:
        return e.status, json.loads(e.body), e
    raise AssertionError("call succeeded, wanted ApiException")


def seven(s, ns):
    s.namespace(ns)
    s.kubectl("apply", "-n", ns, "-f", data("seven-cms.yaml"))


def names(s, ns, *args, version=None):
    out = s.kubectl("get", "cm", "-n", ns, "-o", "name", *args,
                    version=version).stdout.split()
    return [n.split("/", 1)[1] for n in out]


def f_c1(s, version=None):
    seven(s, "tc1")
    mark = s.log_mark()
    got = names(s, "tc1", "--chunk-size=2", version=version)
    eq(got, ALL, "names in namespace/name order")
    lists = [e for e in s.requests(mark, verb="GET",
                                   path="/api/v1/namespaces/tc1/configmaps")]
    q = [dict(kv.split("=", 1) for kv in e["query"].split("&") if kv)
         for e in lists]
    eq(len(lists), 4, "list requests: %r" % [e["query"] for e in lists])
    eq([x.get("limit") for x in q], ["2"] * 4, "limit on every page")
    eq(["continue" in x for x in q], [False, True, True, True],
       "continue on pages 2-4")
    check(all(e["code"] == 200 for e in lists), "page codes")


@case("F-C1")
def c1(s):
    f_c1(s)


@case("F-C1/kubectl-1.27")
def c1_127(s):
    f_c1(s, version="1.27")


@case("F-C2")
def c2(s):
    from kubernetes import client
    seven(s, "tc2")
    v1 = client.CoreV1Api(s.api())
    pages, tok = [], None
    while True:
        kw = {"limit": 2}
        if tok:
            kw["_continue"] = tok
        r = v1.list_namespaced_config_map("tc2", **kw)
        pages.append(r)
        if len(pages) == 1:
            # changes after the first page must not show on later pages
            v1.create_namespaced_config_map("tc2", {
                "metadata": {"name": "cm-8"}})
            v1.delete_namespaced_config_map("cm-7", "tc2")
            v1.patch_namespaced_config_map("cm-6", "tc2",
                                           {"data": {"num": "changed"}})
            first_tok = r.metadata._continue
        tok = r.metadata._continue
        if not tok:
            break
        check(len(pages) < 10, "pagination does not end")
    eq([[i.metadata.name for i in p.items] for p in pages],
       [["cm-1", "cm-2"], ["cm-3", "cm-4"], ["cm-5", "cm-6"], ["cm-7"]],
       "pages (snapshot of the first page)")
    eq(pages[2].items[1].data, {"num": "6"}, "cm-6 data at the snapshot")
    rvs = {p.metadata.resource_version for p in pages}
    eq(len(rvs), 1, "resourceVersion differs between pages: %r" % rvs)
    eq([p.metadata.remaining_item_count for p in pages], [5, 3, 1, None],
       "remainingItemCount")
    eq([i.metadata.resource_version is not None for i in pages[0].items],
       [True, True], "item RVs")
    list_rv = int(next(iter(rvs)))
    check(all(int(i.metadata.resource_version) <= list_rv
              for p in pages for i in p.items), "item RV > list RV")
    code, body, _ = api_exc(v1.list_namespaced_config_map, "tc2", limit=2,
                            _continue=first_tok, resource_version="5")
    eq(code, 400, "continue + resourceVersion")
    eq(body["reason"], "BadRequest", "reason")
    eq(body["message"], "specifying resource version is not allowed when "
       "using continue", "message")
    code, body, _ = api_exc(v1.list_namespaced_config_map, "tc2", limit=2,
                            _continue="not-a-token")
    eq((code, body["reason"]), (400, "BadRequest"), "malformed token")
    check(body["message"].startswith("invalid continue token"),
          body["message"])
    # RV=0 lists are served from the "cache" and ignore limit (2.2/2.3)
    r = v1.list_namespaced_config_map("tc2", limit=2, resource_version="0")
    eq(len(r.items), 7, "RV=0 list with limit")
    eq(r.metadata._continue, None, "RV=0 list continue")


@case("F-C3")
def c3(s):
    seven(s, "tc3")
    eq(names(s, "tc3", "-l", "env in (a,b),!skip"), ["cm-1", "cm-2", "cm-6"],
       "env in (a,b),!skip")
    eq(names(s, "tc3", "-l", "env!=a"),
       ["cm-2", "cm-3", "cm-5", "cm-6", "cm-7"],
       "env!=a (includes objects without env)")
    eq(names(s, "tc3", "-l", "env notin (a,c)"),
       ["cm-2", "cm-5", "cm-6", "cm-7"], "env notin (a,c)")
    eq(names(s, "tc3", "-l", "tier"), ["cm-1", "cm-3", "cm-6", "cm-7"],
       "tier")
    eq(names(s, "tc3", "-l", "!tier"), ["cm-2", "cm-4", "cm-5"], "!tier")
    eq(names(s, "tc3", "-l", "env==a,tier=x"), ["cm-1"], "env==a,tier=x")
    eq(names(s, "tc3", "--field-selector", "metadata.name=cm-3"), ["cm-3"],
       "metadata.name=cm-3")
    eq(names(s, "tc3", "--field-selector", "metadata.name!=cm-3"),
       [n for n in ALL if n != "cm-3"], "metadata.name!=cm-3")
    eq(names(s, "tc3", "--field-selector", "metadata.namespace=tc3",
             "-l", "env=b"), ["cm-2", "cm-6"], "namespace field + label")
    # python sends the selector urlencoded with '+' for spaces (1.2)
    code, _, body = s.raw("GET", "/api/v1/namespaces/tc3/configmaps?"
                          "labelSelector=env+in+%28a%2Cb%29%2C%21skip")
    eq(code, 200, "'+' encoded selector")
    eq([i["metadata"]["name"] for i in body["items"]],
       ["cm-1", "cm-2", "cm-6"], "'+' encoded selector result")


@case("F-C4")
def c4(s):
    seven(s, "tc4")
    mark = s.log_mark()
    p = s.kubectl("get", "cm", "-n", "tc4", "-l", "env in", check=False)
    check(p.returncode != 0, "bad selector accepted: %r" % p.stdout)
    check("Error from server (BadRequest)" in p.stderr or
          "unable to parse requirement" in p.stderr, "stderr %r" % p.stderr)
    codes = [e["code"] for e in s.requests(mark, verb="GET", path=
                                           "/api/v1/namespaces/tc4/"
                                           "configmaps")]
    eq(codes, [400], "server answer to labelSelector 'env in'")
    s.apply_crd(data("crd-widgets.yaml"), "widgets.example.com")
    p = s.kubectl("get", "widgets", "--field-selector", "spec.size=1",
                  check=False)
    check(p.returncode != 0, "unsupported CR field selector accepted")
    check("Error from server (BadRequest)" in p.stderr and
          "field label not supported: spec.size" in p.stderr,
          "stderr %r" % p.stderr)
    code, _, body = s.raw("GET", "/api/v1/namespaces/tc4/configmaps?"
                          "fieldSelector=data.num%3D1")
    eq((code, body["reason"]), (400, "BadRequest"), "cm field selector")
    check('"data.num" is not a known field selector' in body["message"],
          body["message"])


@case("F-C5")
def c5(s):
    from kubernetes import client
    s.namespace("tc5")
    v1 = client.CoreV1Api(s.api())
    for kw, msg in (({"resource_version_match": "Exact"},
                     "resourceVersionMatch is forbidden unless "
                     "resourceVersion is provided"),
                    ({"resource_version": "0",
                      "resource_version_match": "Exact"},
                     'resourceVersionMatch "exact" is forbidden for '
                     'resourceVersion "0"'),
                    ({"resource_version": "1",
                      "resource_version_match": "Bogus"},
                     'resourceVersionMatch: Unsupported value: "Bogus": '
                     'supported values: "Exact", "NotOlderThan"')):
        code, body, _ = api_exc(v1.list_namespaced_config_map, "tc5", **kw)
        eq(code, 422, "code for %r" % kw)
        eq(body["reason"], "Invalid", "reason for %r" % kw)
        eq((body["details"].get("group"), body["details"].get("kind")),
           ("meta.k8s.io", "ListOptions"), "details for %r" % kw)
        check(msg in body["message"], "message %r" % body["message"])
        c = body["details"]["causes"][0]
        eq(c["field"], "resourceVersionMatch", "causes[0].field")
        eq(c["reason"], "FieldValueNotSupported" if "Bogus" in str(kw)
           else "FieldValueForbidden", "causes[0].reason")


@case("F-C6")
def c6(s):
    from kubernetes import client
    s.namespace("tc6")
    v1 = client.CoreV1Api(s.api())
    cur = int(s.state()["resourceVersion"])
    t0 = time.time()
    code, body, e = api_exc(v1.list_namespaced_config_map, "tc6",
                            resource_version=str(cur + 1000))
    took = time.time() - t0
    eq(code, 504, "code")
    check(2.5 <= took <= 6, "answered after %.2fs, want ~3s" % took)
    eq(body["reason"], "Timeout", "reason")
    eq(body["message"], "Timeout: Too large resource version: %d, current: "
       "%d" % (cur + 1000, cur), "message")
    eq(body["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
       "causes[0].reason")
    eq(body["details"].get("retryAfterSeconds"), 1, "retryAfterSeconds")
    eq(e.headers.get("Retry-After"), "1", "Retry-After header")


@case("F-C7")
def c7(s):
    from kubernetes import client
    s.namespace("tc7")
    v1 = client.CoreV1Api(s.api())
    r = v1.list_namespaced_config_map("tc7")
    eq(r.items, [], "python items")
    eq(r.kind, "ConfigMapList", "kind")
    out = subprocess.run(
        ["curl", "-sS", "--cacert", s.ca_file, "-H",
         "Authorization: Bearer " + s.token,
         s.url + "/api/v1/namespaces/tc7/configmaps"],
        capture_output=True, text=True, timeout=20).stdout
    check('"items":[]' in out, "curl body %r" % out)
    j = json.loads(out)
    eq((j["kind"], j["apiVersion"]), ("ConfigMapList", "v1"), "list type")
    check(j["metadata"].get("resourceVersion"), "list RV %r" % j["metadata"])
    check("continue" not in j["metadata"] or j["metadata"]["continue"] == "",
          "continue on an empty list")


if __name__ == "__main__":
    run_cases()
