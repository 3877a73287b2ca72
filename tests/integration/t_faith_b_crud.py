# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group B: CRUD and write semantics
(docs/apiserver.md §10 group B; §1.5, §4.1-4.8, §5.2).

Adaptations to the modern kubectl (docs/apiserver.md §11):
- apply/create/replace send fieldValidation=Strict (default --validate), so
  F-B15 additionally expects the Strict rejection of an unknown CR field
  (400 "strict decoding error: unknown field ...") and stores the object
  through python (no fieldValidation) to observe pruning. Debian's kubectl
  1.20 sends no fieldValidation: there F-B15 expects the server's default,
  Warn (stored pruned, a Warning header kubectl prints).
- names in 422 messages: modern servers say "a lowercase RFC 1123
  subdomain", 1.20 said "a DNS-1123 subdomain"; both are accepted."""
import json
import re
import time

from cuetest import case, check, data, eq, kubectl_minor, run_cases, wait_for

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}"
                  r"-[0-9a-f]{12}$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
CRD = "widgets.example.com"
W = ("example.com", "v1", "default", "widgets")


def get_json(s, *args):
    return json.loads(s.kubectl("get", *args, "-o", "json").stdout)


def json_stream(text):
    """Concatenated (pretty-printed) JSON documents -> list."""
    dec = json.JSONDecoder()
    out, i = [], 0
    text = text.strip()
    while i < len(text):
        obj, j = dec.raw_decode(text, i)
        out.append(obj)
        i = j
        while i < len(text) and text[i].isspace():
            i += 1
    return out


def api_exc(fn, *a, **kw):
    from kubernetes.client.rest import ApiException
    try:
        fn(*a, **kw)
    except ApiException as e:
        return e.status, json.loads(e.body), e
    raise AssertionError("call succeeded, wanted ApiException")


def f_b1(s, version=None):
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", data("cm1.yaml"), version=version)
    eq(p.stdout.strip(), "configmap/cm1 created", "apply stdout")
    cm = get_json(s, "cm", "cm1")
    md = cm["metadata"]
    check(UUID.match(md.get("uid", "")), "uid %r" % md.get("uid"))
    check(TIME.match(md.get("creationTimestamp", "")),
          "creationTimestamp %r" % md.get("creationTimestamp"))
    check(re.match(r"^[1-9]\d*$", md.get("resourceVersion", "")),
          "resourceVersion %r" % md.get("resourceVersion"))
    la = md.get("annotations", {}).get(
        "kubectl.kubernetes.io/last-applied-configuration")
    check(la, "no last-applied-configuration annotation: %r" % md)
    eq(json.loads(la)["data"], {"a": "1"}, "last-applied data")
    posts = s.requests(mark, verb="POST")
    eq([(e["path"], e["code"]) for e in posts],
       [("/api/v1/namespaces/default/configmaps", 201)], "POST")
    check("fieldManager=kubectl-client-side-apply" in
          posts[0]["query"].split("&"), posts[0]["query"])
    gets = s.requests(mark, verb="GET",
                      path="/api/v1/namespaces/default/configmaps/cm1")
    check(gets and gets[0]["code"] == 404 and gets[0]["seq"] <
          posts[0]["seq"], "apply did not GET cm1 (404) before POST: %r" %
          gets)
    return cm


@case("F-B1")
def b1(s):
    f_b1(s)


@case("F-B1/kubectl-1.27")
def b1_127(s):
    f_b1(s, version="1.27")


@case("F-B2")
def b2(s):
    cm = f_b1(s)
    rv = s.state()["resourceVersion"]
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", data("cm1.yaml"))
    eq(p.stdout.strip(), "configmap/cm1 unchanged", "apply stdout")
    eq(s.requests(mark, verb="PATCH"), [], "PATCH requests")
    eq(s.requests(mark, verb="PUT"), [], "PUT requests")
    eq(get_json(s, "cm", "cm1")["metadata"]["resourceVersion"],
       cm["metadata"]["resourceVersion"], "resourceVersion")
    eq(s.state()["resourceVersion"], rv, "global resourceVersion")


@case("F-B3")
def b3(s):
    cm = f_b1(s)
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", data("cm1-v2.yaml"))
    eq(p.stdout.strip(), "configmap/cm1 configured", "apply stdout")
    patches = s.requests(mark, verb="PATCH")
    eq(len(patches), 1, "PATCH count")
    eq(patches[0]["contentType"].split(";")[0],
       "application/strategic-merge-patch+json", "PATCH Content-Type")
    eq(patches[0]["code"], 200, "PATCH code")
    new = get_json(s, "cm", "cm1")
    eq(new["data"], {"a": "2"}, "data")
    check(int(new["metadata"]["resourceVersion"]) >
          int(cm["metadata"]["resourceVersion"]), "RV did not grow")
    eq(json.loads(new["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"])["data"],
       {"a": "2"}, "last-applied data")


def f_b4(s, version=None):
    s.kubectl("apply", "-f", data("crd-widgets.yaml"), version=version)
    s.kubectl("wait", "--for=condition=Established", "crd/" + CRD,
              "--timeout=20s", version=version)
    crd = get_json(s, "crd", CRD)
    conds = {c["type"]: c for c in crd["status"].get("conditions", [])}
    for t in ("Established", "NamesAccepted"):
        check(t in conds, "CRD lacks condition %s: %r" % (t, conds))
        eq(conds[t]["status"], "True", "%s status" % t)
        check(TIME.match(conds[t].get("lastTransitionTime", "")),
              "%s lastTransitionTime" % t)
    an = crd["status"].get("acceptedNames", {})
    eq((an.get("plural"), an.get("singular"), an.get("kind"),
        an.get("listKind"), an.get("shortNames")),
       ("widgets", "widget", "Widget", "WidgetList", ["wd"]),
       "acceptedNames")
    eq(crd["status"].get("storedVersions"), ["v1"], "storedVersions")
    p = s.kubectl("apply", "-f", data("w1.yaml"), version=version)
    eq(p.stdout.strip(), "widget.example.com/w1 created", "apply w1")
    mark = s.log_mark()
    p = s.kubectl("apply", "-f", data("w1-v2.yaml"), version=version)
    eq(p.stdout.strip(), "widget.example.com/w1 configured", "apply w1 v2")
    patches = s.requests(mark, verb="PATCH")
    eq(len(patches), 1, "PATCH count")
    eq(patches[0]["contentType"].split(";")[0],
       "application/merge-patch+json", "CR apply patch type")
    eq(patches[0]["code"], 200, "PATCH code")
    w = get_json(s, "widget", "w1")
    eq(w["spec"], {"size": 1, "color": "blue"}, "widget spec")
    eq(w["metadata"].get("generation"), 2, "generation after spec change")


@case("F-B4")
def b4(s):
    f_b4(s)


@case("F-B4/kubectl-1.27")
def b4_127(s):
    f_b4(s, version="1.27")


@case("F-B5")
def b5(s):
    s.apply_crd(data("crd-widgets.yaml"), CRD)
    s.kubectl("apply", "-f", data("w1.yaml"))
    mark = s.log_mark()
    p = s.kubectl("patch", "widget", "w1", "-p", '{"spec":{"size":2}}',
                  check=False)
    check(p.returncode != 0, "strategic patch on a CR succeeded")
    # kubectl 1.20 prints "Error from server (UnsupportedMediaType): ...";
    # modern kubectl rewraps a 415 as "error: application/strategic-merge-
    # patch+json is not supported by example.com/v1, Kind=Widget: ..."
    check(("Error from server (UnsupportedMediaType)" in p.stderr or
           "error: application/strategic-merge-patch+json is not supported "
           "by example.com/v1, Kind=Widget: " in p.stderr) and
          "the body of the request was in an unknown format - accepted "
          "media types include: application/json-patch+json, "
          "application/merge-patch+json, application/apply-patch+yaml"
          in p.stderr, "stderr: %r" % p.stderr)
    pt = s.requests(mark, verb="PATCH")
    eq([(e["contentType"].split(";")[0], e["code"]) for e in pt],
       [("application/strategic-merge-patch+json", 415)], "PATCH log")
    p = s.kubectl("patch", "widget", "w1", "--type=merge", "-p",
                  '{"spec":{"size":2}}')
    eq(p.stdout.strip(), "widget.example.com/w1 patched", "merge stdout")
    eq(get_json(s, "widget", "w1")["spec"]["size"], 2, "size after merge")
    p = s.kubectl("patch", "widget", "w1", "--type=json", "-p",
                  '[{"op":"replace","path":"/spec/size","value":3}]')
    eq(p.stdout.strip(), "widget.example.com/w1 patched", "json stdout")
    w = get_json(s, "widget", "w1")
    eq(w["spec"]["size"], 3, "size after json patch")
    mark = s.log_mark()
    p = s.kubectl("patch", "widget", "w1", "--type=json", "-p",
                  '[{"op":"test","path":"/spec/size","value":99}]',
                  check=False)
    check(p.returncode != 0, "failing json-patch test op succeeded")
    pt = s.requests(mark, verb="PATCH")
    eq([(e["contentType"].split(";")[0], e["code"]) for e in pt],
       [("application/json-patch+json", 422)], "failed test op")
    eq(get_json(s, "widget", "w1")["metadata"]["resourceVersion"],
       w["metadata"]["resourceVersion"], "RV after failed patch")


@case("F-B6")
def b6(s):
    s.kubectl("apply", "-f", data("cm1.yaml"))
    old = s.kubectl("get", "cm", "cm1", "-o", "yaml").stdout
    path = s.file("old.yaml", old)
    s.kubectl("label", "cm", "cm1", "x=y")
    mark = s.log_mark()
    p = s.kubectl("replace", "-f", path, check=False)
    check(p.returncode != 0, "replace with a stale RV succeeded")
    want = ('Error from server (Conflict): error when replacing "%s": '
            'Operation cannot be fulfilled on configmaps "cm1": the object '
            'has been modified; please apply your changes to the latest '
            'version and try again' % path)
    check(want in p.stderr, "stderr: %r" % p.stderr)
    eq([(e["verb"], e["code"]) for e in s.requests(mark, verb="PUT")],
       [("PUT", 409)], "PUT log")
    code, _, body = s.raw("PUT", "/api/v1/namespaces/default/configmaps/cm1",
                          json.loads(json.dumps(
                              __import__("yaml").safe_load(old))))
    eq(code, 409, "raw stale PUT")
    eq((body["kind"], body["status"], body["reason"], body["code"]),
       ("Status", "Failure", "Conflict", 409), "Status")
    eq(body["details"], {"name": "cm1", "kind": "configmaps"},
       "Conflict details")


@case("F-B7")
def b7(s):
    p = s.kubectl("create", "-f", data("cm2.yaml"))
    eq(p.stdout.strip(), "configmap/cm2 created", "first create")
    p = s.kubectl("create", "-f", data("cm2.yaml"), check=False)
    check(p.returncode != 0, "second create succeeded")
    want = ('Error from server (AlreadyExists): error when creating "%s": '
            'configmaps "cm2" already exists' % data("cm2.yaml"))
    check(want in p.stderr, "stderr: %r" % p.stderr)
    code, _, body = s.raw("POST", "/api/v1/namespaces/default/configmaps",
                          {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "cm2"}})
    eq(code, 409, "raw duplicate POST")
    eq((body["reason"], body["message"], body["details"]),
       ("AlreadyExists", 'configmaps "cm2" already exists',
        {"name": "cm2", "kind": "configmaps"}), "AlreadyExists Status")


@case("F-B8")
def b8(s):
    s.kubectl("create", "-f", data("cm2.yaml"))
    mark = s.log_mark()
    t0 = time.time()
    p = s.kubectl("delete", "cm", "cm2")
    took = time.time() - t0
    eq(p.stdout.strip(), 'configmap "cm2" deleted', "delete stdout")
    check(took < 2.0, "kubectl delete took %.2fs" % took)
    log = s.access_log(mark)
    dels = [e for e in log if e["verb"] == "DELETE"]
    eq([(e["path"], e["code"]) for e in dels],
       [("/api/v1/namespaces/default/configmaps/cm2", 200)], "DELETE")
    check(not [e for e in log if e["verb"] == "GET" and
               e["path"].endswith("/configmaps/cm2") and
               e["seq"] < dels[0]["seq"]], "kubectl GET before DELETE")
    # kubectl 1.20 waits with a list+watch on fieldSelector=metadata.name;
    # modern kubectl first GETs the object and is done on 404
    sel = [e for e in log if e["verb"] == "GET" and
           e["path"] == "/api/v1/namespaces/default/configmaps" and
           ("fieldSelector=metadata.name%3Dcm2" in e["query"] or
            "fieldSelector=metadata.name=cm2" in e["query"])]
    get404 = [e for e in log if e["verb"] == "GET" and e["path"] ==
              "/api/v1/namespaces/default/configmaps/cm2" and
              e["code"] == 404 and e["seq"] > dels[0]["seq"]]
    check(sel or get404, "kubectl did not wait for the deletion: %r" %
          [(e["verb"], e["path"], e["query"]) for e in log])
    p = s.kubectl("get", "cm", "cm2", check=False)
    check(p.returncode != 0, "cm2 still there")
    check('Error from server (NotFound): configmaps "cm2" not found' in
          p.stderr, "stderr: %r" % p.stderr)


@case("F-B9")
def b9(s):
    s.apply_crd(data("crd-widgets.yaml"), CRD)
    s.kubectl("apply", "-f", data("w2-finalizer.yaml"))
    gen0 = get_json(s, "widget", "w2")["metadata"]["generation"]
    mark = s.log_mark()
    w = s.kubectl_bg("get", "widget", "w2", "-w", "--output-watch-events",
                     "-o", "json")
    wait_for(lambda: [e for e in s.requests(mark, verb="GET")
                      if "watch=true" in e["query"]], 10,
             what="kubectl's watch request")
    time.sleep(0.2)
    mark = s.log_mark()
    p = s.kubectl("delete", "widget", "w2", "--wait=false")
    eq(p.stdout.strip(), 'widget.example.com "w2" deleted', "delete stdout")
    eq([(e["verb"], e["code"]) for e in s.requests(mark, verb="DELETE")],
       [("DELETE", 200)], "DELETE with finalizer")
    obj = get_json(s, "widget", "w2")
    md = obj["metadata"]
    check(TIME.match(md.get("deletionTimestamp", "")),
          "deletionTimestamp %r" % md.get("deletionTimestamp"))
    eq(md.get("deletionGracePeriodSeconds"), 0, "deletionGracePeriodSeconds")
    eq(md.get("generation"), gen0 + 1, "generation")
    eq(md.get("finalizers"), ["example.com/f"], "finalizers")
    mark = s.log_mark()
    p = s.kubectl("patch", "widget", "w2", "--type=merge", "-p",
                  '{"metadata":{"finalizers":["example.com/f",'
                  '"example.com/g"]}}', check=False)
    check(p.returncode != 0, "adding a finalizer while deleting succeeded")
    check("no new finalizers can be added if the object is being deleted"
          in p.stderr, "stderr: %r" % p.stderr)
    eq([e["code"] for e in s.requests(mark, verb="PATCH")], [422],
       "finalizer add code")
    p = s.kubectl("patch", "widget", "w2", "--type=merge", "-p",
                  '{"metadata":{"finalizers":null}}', "-o", "json")
    # the answer carries the deletion's revision, past the deleting
    # object's (a client waiting for its own write must not take the
    # object it already has for the answer)
    gone_rv = json.loads(p.stdout)["metadata"]["resourceVersion"]
    check(int(gone_rv) > int(md["resourceVersion"]),
          "last-finalizer answer rv %s not past %s" %
          (gone_rv, md["resourceVersion"]))
    p = s.kubectl("get", "widget", "w2", check=False)
    check(p.returncode != 0 and "NotFound" in p.stderr,
          "w2 still present after its last finalizer went: %r" % p.stdout)
    # kubectl get -w does not end by itself: give it time to print the
    # DELETED event, then stop it and read what it printed
    time.sleep(1.0)
    early = w.poll() is not None
    w.kill()
    out, err = w.communicate()
    check(not early, "kubectl get -w exited early: %r %r" % (out, err))
    evs = json_stream(out)
    eq([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"],
       "watch events")
    eq(evs[-1]["object"]["metadata"]["resourceVersion"], gone_rv,
       "DELETED event and answer carry the same revision")


@case("F-B10")
def b10(s):
    from kubernetes import client
    s.apply_crd(data("crd-widgets.yaml"), CRD)
    s.kubectl("apply", "-f", data("w1.yaml"))
    api = s.api()
    co = client.CustomObjectsApi(api)
    w = co.get_namespaced_custom_object(*W[:3], "widgets", "w1")
    del w["metadata"]["resourceVersion"]
    code, body, _ = api_exc(co.replace_namespaced_custom_object,
                            *W[:3], "widgets", "w1", w)
    eq(code, 422, "CR PUT without RV")
    eq(body["reason"], "Invalid", "reason")
    check("metadata.resourceVersion: Invalid value: 0x0: must be specified "
          "for an update" in body["message"], body["message"])
    coord = client.CoordinationV1Api(api)
    coord.create_namespaced_lease("default", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l1"}, "spec": {"holderIdentity": "a",
                                             "leaseDurationSeconds": 15}})
    code, body, _ = api_exc(coord.replace_namespaced_lease, "l1", "default",
                            {"apiVersion": "coordination.k8s.io/v1",
                             "kind": "Lease", "metadata": {"name": "l1"},
                             "spec": {"holderIdentity": "b"}})
    eq(code, 422, "Lease PUT without RV")
    check("metadata.resourceVersion: Invalid value: 0x0: must be specified "
          "for an update" in body["message"], body["message"])
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map("default", {
        "metadata": {"name": "cmx"}, "data": {"a": "1"}})
    r = v1.replace_namespaced_config_map("cmx", "default", {
        "metadata": {"name": "cmx"}, "data": {"a": "2"}})
    eq(r.data, {"a": "2"}, "ConfigMap PUT without RV")
    log = s.requests(0, verb="PUT", path="/api/v1/namespaces/default/"
                     "configmaps/cmx")
    eq([e["code"] for e in log], [200], "ConfigMap PUT code")


@case("F-B11")
def b11(s):
    from kubernetes import client
    s.apply_crd(data("crd-widgets.yaml"), CRD)
    co = client.CustomObjectsApi(s.api())
    w = co.create_namespaced_custom_object(*W, {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w5"}, "spec": {"size": 1},
        "status": {"phase": "Ready"}})
    check("status" not in w, "status kept on create: %r" % w.get("status"))
    eq(w["metadata"]["generation"], 1, "generation on create")
    mark = s.log_mark()
    w = co.patch_namespaced_custom_object(*W, "w5", {
        "metadata": {"labels": {"a": "1"}}, "spec": {"size": 2},
        "status": {"phase": "Main"}})
    eq(s.requests(mark, verb="PATCH")[0]["contentType"].split(";")[0],
       "application/merge-patch+json", "python CR patch type")
    eq(w["spec"], {"size": 2}, "spec after main patch")
    eq(w["metadata"].get("labels"), {"a": "1"}, "labels after main patch")
    check("status" not in w, "main patch wrote status: %r" % w.get("status"))
    eq(w["metadata"]["generation"], 2, "generation after main patch")
    w = co.patch_namespaced_custom_object_status(*W, "w5", {
        "metadata": {"labels": {"a": "2"}}, "spec": {"size": 3},
        "status": {"phase": "Status"}})
    eq(w.get("status"), {"phase": "Status"}, "status after status patch")
    eq(w["spec"], {"size": 2}, "spec after status patch")
    eq(w["metadata"].get("labels"), {"a": "1"}, "labels after status patch")
    eq(w["metadata"]["generation"], 2, "generation after status patch")
    w = co.get_namespaced_custom_object(*W, "w5")
    eq((w["spec"], w["status"], w["metadata"]["labels"],
        w["metadata"]["generation"]),
       ({"size": 2}, {"phase": "Status"}, {"a": "1"}, 2), "stored widget")


@case("F-B12")
def b12(s):
    names = set()
    for _ in range(3):
        p = s.kubectl("create", "-f", data("gen-cm.yaml"))
        m = re.match(r"^configmap/(\S+) created$", p.stdout.strip())
        check(m, "create stdout %r" % p.stdout)
        check(re.match(r"^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$",
                       m.group(1)), "generated name %r" % m.group(1))
        names.add(m.group(1))
    eq(len(names), 3, "distinct names")
    got = s.kubectl("get", "cm", "-o", "name").stdout.split()
    eq(sorted(got), sorted("configmap/" + n for n in names), "stored")


@case("F-B13")
def b13(s):
    st = s.stream("/api/v1/namespaces/default/configmaps?watch=1&"
                  "resourceVersion=%s" % s.state()["resourceVersion"])
    rv = s.state()["resourceVersion"]
    mark = s.log_mark()
    p = s.kubectl("apply", "--dry-run=server", "-f", data("cm3.yaml"))
    eq(p.stdout.strip(), "configmap/cm3 created (server dry run)",
       "apply stdout")
    posts = s.requests(mark, verb="POST")
    eq(len(posts), 1, "POST count")
    check("dryRun=All" in posts[0]["query"].split("&"), posts[0]["query"])
    eq(posts[0]["code"], 201, "dry-run POST code")
    p = s.kubectl("get", "cm", "cm3", check=False)
    check('Error from server (NotFound): configmaps "cm3" not found' in
          p.stderr, "get after dry run: %r %r" % (p.stdout, p.stderr))
    eq(s.state()["resourceVersion"], rv, "global RV after dry run")
    time.sleep(0.3)
    eq(st.lines, [], "watch events from a dry run")
    # the dry-run response itself: uid/creationTimestamp set, RV empty
    code, _, body = s.raw("POST", "/api/v1/namespaces/default/configmaps"
                          "?dryRun=All", {"apiVersion": "v1",
                                          "kind": "ConfigMap",
                                          "metadata": {"name": "cm3"}})
    eq(code, 201, "raw dry-run code")
    check(UUID.match(body["metadata"].get("uid", "")), "dry-run uid")
    eq(body["metadata"].get("resourceVersion", ""), "", "dry-run RV")


@case("F-B14")
def b14(s):
    from kubernetes import client
    v1 = client.CoreV1Api(s.api())
    code, body, _ = api_exc(v1.create_namespaced_config_map, "default", {
        "metadata": {"name": "Bad_Name"}})
    eq(code, 422, "code")
    eq((body["kind"], body["status"], body["reason"], body["code"]),
       ("Status", "Failure", "Invalid", 422), "Status")
    check(re.match(r'^ConfigMap "Bad_Name" is invalid: metadata\.name: '
                   r'Invalid value: "Bad_Name": a (lowercase RFC 1123|'
                   r'DNS-1123) subdomain must consist of', body["message"]),
          "message %r" % body["message"])
    d = body["details"]
    eq((d.get("name"), d.get("kind")), ("Bad_Name", "ConfigMap"), "details")
    eq(d["causes"][0]["field"], "metadata.name", "causes[0].field")
    eq(d["causes"][0]["reason"], "FieldValueInvalid", "causes[0].reason")


@case("F-B15")
def b15(s):
    from kubernetes import client
    s.apply_crd(data("crd-widgets.yaml"), CRD)
    # modern kubectl: default --validate=strict -> fieldValidation=Strict,
    # which a real server answers with 400 for a field the schema prunes
    p = s.kubectl("apply", "-f", data("w3-extra.yaml"), check=False)
    if kubectl_minor() >= 27:
        check(p.returncode != 0 and "Error from server (BadRequest)" in
              p.stderr and 'unknown field "spec.extra"' in p.stderr,
              "strict apply of an unknown field: rc=%d %r" % (p.returncode,
                                                              p.stderr))
    else:
        # 1.20: no fieldValidation, so the server's default (Warn) stores
        # the pruned object and warns; kubectl prints the warning
        check(p.returncode == 0 and 'Warning: unknown field "spec.extra"'
              in p.stderr, "1.20 apply of an unknown field: rc=%d %r" %
              (p.returncode, p.stderr))
        eq(get_json(s, "widget", "w3")["spec"], {"size": 1},
           "spec after a warned apply")
        s.kubectl("delete", "widget", "w3")
    # Warn on the wire: one quoted, escaped warn-value per unknown field
    # (a client drops a Warning header it cannot parse)
    code, hdrs, _ = s.raw("POST", "/apis/example.com/v1/namespaces/default/"
                          "widgets", {"apiVersion": "example.com/v1",
                                      "kind": "Widget",
                                      "metadata": {"name": "w4"},
                                      "spec": {"size": 1, "extra": "x",
                                               "more": 2}})
    eq(code, 201, "POST with unknown fields, no fieldValidation")
    eq(hdrs.get("Warning"), '299 - "unknown field \\"spec.extra\\"", '
       '299 - "unknown field \\"spec.more\\""', "Warning header")
    co = client.CustomObjectsApi(s.api())
    w = co.create_namespaced_custom_object(*W, {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w3"}, "spec": {"size": 1, "extra": "x"}})
    eq(w["spec"], {"size": 1}, "spec in the create response")
    eq(get_json(s, "widget", "w3")["spec"], {"size": 1}, "spec on read")
    p = s.kubectl("apply", "--validate=false", "-f", data("w3-extra.yaml"))
    eq(get_json(s, "widget", "w3")["spec"], {"size": 1},
       "spec after --validate=false apply")


if __name__ == "__main__":
    run_cases()
