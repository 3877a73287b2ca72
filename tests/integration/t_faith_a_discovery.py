# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group A: discovery and kubectl plumbing
(docs/apiserver.md §10 group A; §1.2, §1.3, §1.6).

Adaptations to the modern kubectl (docs/apiserver.md §11): the client is a
1.27-1.33 build behind a dispatcher that first GETs /version?timeout=5s;
apply/create validate with OpenAPI v3 first and fall back to v2, so F-A3/F-A4
accept either before the object requests. Debian's kubectl 1.20 (a fresh
machine, §11) differs where the checks say so (kubectl_minor): no
fieldValidation, its own error and version wording, verbs printed as a
list, no CATEGORIES column."""
import json
import re

from cuetest import (case, check, data, eq, kubectl_minor, pb_fields,
                     run_cases)

API_RESOURCE_ROW = re.compile(r"^(\S+)\s+(?:(\S+)\s+)?(\S+/\S+|v1)\s+"
                              r"(true|false)\s+(\S+)(?:\s+(\S+))?")


def api_resources(s, version=None):
    """kubectl api-resources -o wide -> {(name, apiversion): row dict}."""
    out = s.kubectl("api-resources", "-o", "wide", version=version).stdout
    lines = out.splitlines()
    head = lines[0]
    cols = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND",
            "VERBS", "CATEGORIES"]
    if kubectl_minor(version) < 21:
        cols.pop()  # 1.20 prints no CATEGORIES column
    pos = [head.index(c) for c in cols]
    rows = {}
    for ln in lines[1:]:
        f = {}
        for i, c in enumerate(cols):
            end = pos[i + 1] if i + 1 < len(cols) else None
            f[c] = ln[pos[i]:end].strip()
        # 1.20 prints the verbs as a list: [create delete ...]
        f["VERBS"] = ",".join(f["VERBS"].strip("[]").replace(",", " ")
                              .split())
        rows[(f["NAME"], f["APIVERSION"])] = f
    return rows


def check_core_rows(rows):
    cm = rows.get(("configmaps", "v1"))
    check(cm is not None, "configmaps v1 missing from api-resources")
    eq((cm["SHORTNAMES"], cm["NAMESPACED"], cm["KIND"]),
       ("cm", "true", "ConfigMap"), "configmaps row")
    eq(cm["VERBS"], "create,delete,deletecollection,get,list,patch,"
       "update,watch", "configmaps verbs")
    ls = rows.get(("leases", "coordination.k8s.io/v1"))
    check(ls is not None, "leases coordination.k8s.io/v1 missing")
    eq((ls["NAMESPACED"], ls["KIND"]), ("true", "Lease"), "leases row")
    ns = rows.get(("namespaces", "v1"))
    check(ns is not None, "namespaces missing")
    eq((ns["SHORTNAMES"], ns["NAMESPACED"], ns["KIND"]),
       ("ns", "false", "Namespace"), "namespaces row")
    # subresources must not be listed as resources (the REST mapper skips
    # names containing "/")
    check(not any("/" in n for n, _ in rows), "subresource listed: %r" %
          [n for n, _ in rows if "/" in n])


def f_a1(s, version=None):
    rows = api_resources(s, version)
    check_core_rows(rows)
    check(("widgets", "example.com/v1") not in rows,
          "widgets listed before its CRD exists")
    vers = s.kubectl("api-versions", version=version).stdout.split()
    for gv in ("v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1",
               "events.k8s.io/v1"):
        check(gv in vers, "api-versions lacks %s: %r" % (gv, vers))
    check("example.com/v1" not in vers, "example.com/v1 before the CRD")
    # after F-B4's CRD the new kind shows up (a new process re-discovers)
    s.apply_crd(data("crd-widgets.yaml"), "widgets.example.com")
    rows = api_resources(s, version)
    w = rows.get(("widgets", "example.com/v1"))
    check(w is not None, "widgets missing after the CRD: %r" % sorted(rows))
    eq((w["SHORTNAMES"], w["NAMESPACED"], w["KIND"]),
       ("wd", "true", "Widget"), "widgets row")
    # kubectl api-resources prints the verbs as a sorted set
    eq(w["VERBS"], "create,delete,deletecollection,get,list,patch,update,"
       "watch", "widgets verbs (docs/apiserver.md §1.3)")
    vers = s.kubectl("api-versions", version=version).stdout.split()
    check("example.com/v1" in vers, "api-versions lacks example.com/v1")


@case("F-A1")
def a1(s):
    f_a1(s)


@case("F-A1/kubectl-1.27")
def a1_127(s):
    f_a1(s, version="1.27")


def raw(s, path):
    p = s.kubectl("get", "--raw", path)
    return json.loads(p.stdout)


@case("F-A2")
def a2(s):
    api = raw(s, "/api")
    eq(api.get("kind"), "APIVersions", "/api kind")
    eq(api.get("versions"), ["v1"], "/api versions")
    check(isinstance(api.get("serverAddressByClientCIDRs"), list),
          "/api serverAddressByClientCIDRs: %r" % api)
    apis = raw(s, "/apis")
    eq(apis.get("kind"), "APIGroupList", "/apis kind")
    eq(apis.get("apiVersion"), "v1", "/apis apiVersion")
    groups = {g["name"]: g for g in apis["groups"]}
    for g in ("coordination.k8s.io", "events.k8s.io",
              "apiextensions.k8s.io"):
        check(g in groups, "/apis lacks group %s" % g)
    eq(groups["coordination.k8s.io"]["preferredVersion"],
       {"groupVersion": "coordination.k8s.io/v1", "version": "v1"},
       "coordination preferredVersion")
    check({"groupVersion": "coordination.k8s.io/v1", "version": "v1"} in
          groups["coordination.k8s.io"]["versions"], "coordination versions")
    check("" not in groups, "core group listed in /apis")
    grp = raw(s, "/apis/coordination.k8s.io")
    eq(grp.get("kind"), "APIGroup", "/apis/coordination.k8s.io kind")
    eq(grp.get("name"), "coordination.k8s.io", "APIGroup name")
    v1 = raw(s, "/api/v1")
    eq(v1.get("kind"), "APIResourceList", "/api/v1 kind")
    eq(v1.get("groupVersion"), "v1", "/api/v1 groupVersion")
    res = {r["name"]: r for r in v1["resources"]}
    cm = res.get("configmaps")
    check(cm is not None, "/api/v1 lacks configmaps")
    eq((cm["namespaced"], cm["kind"], cm.get("shortNames")),
       (True, "ConfigMap", ["cm"]), "configmaps resource")
    eq(sorted(cm["verbs"]), ["create", "delete", "deletecollection", "get",
                             "list", "patch", "update", "watch"],
       "configmaps verbs")
    check("singularName" in cm, "configmaps lacks singularName")
    check("namespaces/status" in res, "/api/v1 lacks namespaces/status")
    eq(sorted(res["namespaces/status"]["verbs"]), ["get", "patch", "update"],
       "namespaces/status verbs")
    eq(res["namespaces"]["namespaced"], False, "namespaces namespaced")
    co = raw(s, "/apis/coordination.k8s.io/v1")
    eq(co.get("kind"), "APIResourceList", "coordination kind")
    eq(co.get("groupVersion"), "coordination.k8s.io/v1", "coordination gv")
    leases = [r for r in co["resources"] if r["name"] == "leases"]
    eq(len(leases), 1, "leases entries")
    eq((leases[0]["kind"], leases[0]["namespaced"]), ("Lease", True),
       "leases resource")
    # every advertised group/version must be fetchable (§1.3)
    for g in apis["groups"]:
        for v in g["versions"]:
            d = raw(s, "/apis/" + v["groupVersion"])
            eq(d.get("kind"), "APIResourceList", v["groupVersion"])
    ver = raw(s, "/version")
    eq(sorted(ver), sorted(["major", "minor", "gitVersion", "gitCommit",
                            "gitTreeState", "buildDate", "goVersion",
                            "compiler", "platform"]), "version.Info keys")
    check(re.match(r"^v\d+\.\d+\.\d+", ver["gitVersion"]),
          "gitVersion %r" % ver["gitVersion"])
    eq(ver["major"], "1", "major")
    check(ver["gitVersion"].startswith("v1.%s." % ver["minor"].rstrip("+")),
          "minor %r vs gitVersion %r" % (ver["minor"], ver["gitVersion"]))


def object_requests(s, mark):
    return [e for e in s.access_log(mark)
            if "/configmaps" in e["path"]]


@case("F-A3")
def a3(s):
    # 1. default validation with the server's minimal /openapi/v2
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", data("cm1.yaml"))
    eq(p.stdout.strip(), "configmap/cm1 created", "apply stdout")
    v2 = s.requests(mark, verb="GET", path="/openapi/v2")
    check(v2, "apply with validation did not fetch /openapi/v2 "
          "(modern kubectl falls back to v2 when v3 has no paths)")
    eq(v2[-1]["code"], 200, "/openapi/v2 code")
    # 2. /openapi/v2, /openapi/v3 (and the legacy /swagger-2.0.0.pb-v1)
    # answer 404:
    # apply must fail before any object request.
    # (/openapi/v3 too: modern kubectl would otherwise find the custom
    # resource groups' v3 discovery and fail in its field-validation
    # check instead, with another message)
    s.faults([{"pathPrefix": "/openapi/v2", "code": 404},
              {"pathPrefix": "/openapi/v3", "code": 404},
              {"pathPrefix": "/swagger-2.0.0.pb-v1", "code": 404}])
    s.file("cm-a3.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
           "  name: cm-a3\ndata:\n  k: v\n")
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", s.dir + "/cm-a3.yaml", check=False)
    check(p.returncode != 0, "apply succeeded although /openapi/v2 is 404")
    # 1.20: "Error from server (NotFound): the server could not find the
    # requested resource"; modern: "error validating data: failed to
    # download openapi: the server could not find the requested resource"
    # (docs/apiserver.md §11)
    check("the server could not find the requested resource" in p.stderr,
          "stderr: %r" % p.stderr)
    if kubectl_minor() >= 27:
        check("failed to download openapi" in p.stderr,
              "stderr: %r" % p.stderr)
    else:
        check(p.stderr.startswith("Error from server (NotFound): "),
              "stderr: %r" % p.stderr)
    eq(object_requests(s, mark), [], "object requests after failed openapi")
    # 3. --validate=false never needs OpenAPI
    mark = s.log_mark()
    p = s.kubectl("apply", "--validate=false", "-f", s.dir + "/cm-a3.yaml")
    eq(p.stdout.strip(), "configmap/cm-a3 created", "apply stdout")
    posts = s.requests(mark, verb="POST")
    eq([(e["path"], e["code"]) for e in posts],
       [("/api/v1/namespaces/default/configmaps", 201)], "POSTs")
    # --validate=false sends fieldValidation=Ignore (modern kubectl);
    # 1.20 predates the parameter
    if kubectl_minor() >= 27:
        check("fieldValidation=Ignore" in posts[0]["query"],
              posts[0]["query"])
    else:
        check("fieldValidation" not in posts[0]["query"], posts[0]["query"])
    s.faults([])


@case("F-A4")
def a4(s):
    mark = s.log_mark()
    s.kubectl("apply", "-f", data("cm1.yaml"))
    log = s.access_log(mark)
    disc = [e for e in log if e["verb"] == "GET" and (
        e["path"] in ("/api", "/apis", "/api/v1") or
        re.match(r"^/apis/[^/]+/[^/]+$", e["path"]))]
    paths = {e["path"] for e in disc}
    for p in ("/api", "/apis", "/api/v1"):
        check(p in paths, "no discovery GET %s: %r" % (p, sorted(paths)))
    for e in disc:
        check("timeout=32s" in e["query"].split("&"),
              "discovery GET %s without timeout=32s: %r" %
              (e["path"], e["query"]))
    v2 = [e for e in log if e["path"] == "/openapi/v2"]
    check(v2, "no /openapi/v2 request")
    for e in v2:
        check("application/com.github.proto-openapi.spec.v2" in e["accept"]
              and "protobuf" in e["accept"],
              "/openapi/v2 Accept %r" % e["accept"])
        check("timeout=32s" in e["query"], "/openapi/v2 query %r" %
              e["query"])
    post = [e for e in log if e["verb"] == "POST"]
    eq(len(post), 1, "POST count")
    check("fieldManager=kubectl-client-side-apply" in post[0]["query"],
          post[0]["query"])
    if kubectl_minor() >= 27:
        check("fieldValidation=Strict" in post[0]["query"], post[0]["query"])
    else:  # 1.20 validates on the client only
        check("fieldValidation" not in post[0]["query"], post[0]["query"])
    # the OpenAPI and discovery requests come before the object request
    check(max(e["seq"] for e in v2) < post[0]["seq"], "openapi after POST")


@case("F-A5")
def a5(s):
    p = s.kubectl("version")
    ver = s.get_json("/version")
    # modern: "Server Version: v1.33.0-cueue"; 1.20 prints the Go struct:
    # "Server Version: version.Info{Major:"1", ... GitVersion:"v1.33..."
    if kubectl_minor() >= 27:
        want = "Server Version: %s" % ver["gitVersion"]
    else:
        want = 'GitVersion:"%s"' % ver["gitVersion"]
    server_line = [ln for ln in p.stdout.splitlines()
                   if ln.startswith("Server Version: ")]
    check(len(server_line) == 1 and want in server_line[0],
          "kubectl version: %r" % p.stdout)
    j = json.loads(s.kubectl("version", "-o", "json").stdout)
    eq(j["serverVersion"], ver, "kubectl version -o json serverVersion")


def pb_get(buf, *path):
    """The values at a path of field numbers (repeated fields fan out)."""
    vals = [buf]
    for num in path:
        vals = [v for b in vals for n, v in pb_fields(b) if n == num]
    return vals


def v2_patch_paths(doc):
    """{path: (gvk yaml, [query parameter names])} of the PATCH
    operations in a gnostic openapi.v2.Document."""
    out = {}
    for named in pb_get(doc, 8, 2):  # Document.paths, Paths.path
        name = pb_get(named, 1)[0].decode()
        op = pb_get(named, 2, 8)  # NamedPathItem.value, PathItem.patch
        if not op:
            continue
        # Operation.parameters -> parameter -> non_body_parameter ->
        # query_parameter_sub_schema -> name
        params = [n.decode() for n in pb_get(op[0], 8, 1, 2, 3, 4)]
        gvk = [pb_get(ext, 2, 2)[0].decode() for ext in pb_get(op[0], 13)
               if pb_get(ext, 1)[0] == b"x-kubernetes-group-version-kind"]
        out[name] = (gvk[0] if gvk else None, params)
    return out


@case("F-A6")
def a6(s):
    # kube-apiserver's /openapi/v2 has a PATCH operation per kind naming
    # its group/version/kind and the dryRun parameter; kubectl 1.20 looks
    # them up before --dry-run=server (for a CR it looks up Namespace)
    code, hdrs, doc = s.raw("GET", "/openapi/v2", headers={
        "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+"
                  "protobuf"})
    eq(code, 200, "/openapi/v2 code")
    eq(hdrs.get("Content-Type"),
       "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
       "/openapi/v2 Content-Type")
    eq(pb_get(doc, 1), [b"2.0"], "swagger")
    paths = v2_patch_paths(doc)
    for path, gvk in (
            ("/api/v1/namespaces/{namespace}/configmaps/{name}",
             'group: ""\nkind: ConfigMap\nversion: v1\n'),
            ("/api/v1/namespaces/{name}",
             'group: ""\nkind: Namespace\nversion: v1\n'),
            ("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/"
             "{name}", 'group: "coordination.k8s.io"\nkind: Lease\n'
             'version: v1\n')):
        check(path in paths, "no PATCH %s in /openapi/v2: %r" %
              (path, sorted(paths)))
        eq(paths[path][0], gvk, "%s x-kubernetes-group-version-kind" % path)
        for q in ("dryRun", "fieldManager", "fieldValidation", "force"):
            check(q in paths[path][1], "%s lacks %s: %r" %
                  (path, q, paths[path][1]))
    # a CRD's kind appears once it is served
    wpath = "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"
    check(wpath not in paths, "widgets before the CRD")
    s.apply_crd(data("crd-widgets.yaml"), "widgets.example.com")
    _, _, doc = s.raw("GET", "/openapi/v2")
    eq(v2_patch_paths(doc).get(wpath, (None,))[0],
       'group: "example.com"\nkind: Widget\nversion: v1\n', "widgets path")


if __name__ == "__main__":
    run_cases()
