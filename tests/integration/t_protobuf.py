# SPDX-License-Identifier: Apache-2.0
"""Protobuf bodies (docs/apiserver.md, "Content types"): kubectl's
generator commands send application/vnd.kubernetes.protobuf for built-in
kinds; cueue-apiserver stores them as JSON and answers in protobuf when
Accept asks for it first. With the real kubectl (the machine's, and the
1.32 and 1.27 builds where they exist: kubectl sends protobuf from 1.32
on, JSON before), read back as JSON; content negotiation and
honest 415/406 messages; unknown fields dropped as kube-apiserver drops
them (strict field validation does not apply to protobuf); garbage
answered with a Status."""
import json

from cuetest import case, check, eq, kubectl_minor, pb_fields, run_cases

PB = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


# ---- a small protobuf wire reader and writer (tests only) ------------
def pb_get(buf, *path):
    """The first value at a path of field numbers."""
    for num in path:
        vals = [v for n, v in pb_fields(buf) if n == num]
        if not vals:
            return None
        buf = vals[0]
    return buf


def varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def ld(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def vi(num, v):
    return varint(num << 3) + varint(v)


def envelope(api_version, kind, raw):
    return MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + \
        ld(3, "") + ld(4, "")


def leaves(o, path=""):
    """{path: value} of o's scalars; Go prints a zero Time as null and
    empty structs as {} where the server leaves them out, so neither
    counts."""
    out = {}
    if isinstance(o, dict):
        for k, v in o.items():
            out.update(leaves(v, path + "." + k))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            out.update(leaves(v, "%s[%d]" % (path, i)))
    elif o is not None:
        out[path] = o
    return out


# ---- the generators --------------------------------------------------
GENERATORS = [
    (["create", "namespace", "pb-ns"], "/api/v1/namespaces/pb-ns",
     lambda o: eq(o["metadata"]["name"], "pb-ns", "name")),
    (["create", "configmap", "pb-cm", "--from-literal=a=b",
      "--from-literal=empty="],
     "/api/v1/namespaces/default/configmaps/pb-cm",
     lambda o: eq(o["data"], {"a": "b", "empty": ""}, "data")),
    (["create", "secret", "generic", "pb-sec", "--from-literal=k=v"],
     "/api/v1/namespaces/default/secrets/pb-sec",
     lambda o: eq(o["data"], {"k": "dg=="}, "data")),
    (["create", "serviceaccount", "pb-sa"],
     "/api/v1/namespaces/default/serviceaccounts/pb-sa",
     lambda o: eq(o["kind"], "ServiceAccount", "kind")),
    (["create", "job", "pb-job", "--image=busybox"],
     "/apis/batch/v1/namespaces/default/jobs/pb-job",
     lambda o: eq(o["spec"]["template"]["spec"]["containers"][0]["image"],
                  "busybox", "image")),
    (["create", "cronjob", "pb-cj", "--image=busybox",
      "--schedule=*/5 * * * *"],
     "/apis/batch/v1/namespaces/default/cronjobs/pb-cj",
     lambda o: eq((o["spec"]["schedule"], o["spec"]["jobTemplate"]["spec"]
                   ["template"]["spec"]["restartPolicy"]),
                  ("*/5 * * * *", "OnFailure"), "schedule, restartPolicy")),
    # replicas 0 is a Go pointer's zero: kept, not dropped as "unset"
    (["create", "deployment", "pb-dep", "--image=nginx", "--replicas=0"],
     "/apis/apps/v1/namespaces/default/deployments/pb-dep",
     lambda o: eq((o["spec"]["replicas"], o["metadata"]["labels"],
                   o["spec"]["selector"]),
                  (0, {"app": "pb-dep"}, {"matchLabels": {"app": "pb-dep"}}),
                  "replicas, labels, selector")),
    (["create", "role", "pb-role", "--verb=get,list", "--resource=pods"],
     "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/pb-role",
     lambda o: eq(o["rules"], [{"apiGroups": [""], "resources": ["pods"],
                                "verbs": ["get", "list"]}], "rules")),
    (["create", "rolebinding", "pb-rb", "--role=pb-role", "--user=ann"],
     "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/"
     "pb-rb",
     lambda o: eq((o["roleRef"]["name"], o["subjects"][0]["name"]),
                  ("pb-role", "ann"), "roleRef, subject")),
    (["create", "clusterrole", "pb-cr", "--verb=get", "--resource=nodes"],
     "/apis/rbac.authorization.k8s.io/v1/clusterroles/pb-cr",
     lambda o: eq(o["rules"][0]["resources"], ["nodes"], "resources")),
    (["create", "clusterrolebinding", "pb-crb", "--clusterrole=pb-cr",
      "--group=devs"],
     "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/pb-crb",
     lambda o: eq(o["subjects"][0]["kind"], "Group", "subject kind")),
    (["create", "priorityclass", "pb-pc", "--value=0",
      "--description=zero"],
     "/apis/scheduling.k8s.io/v1/priorityclasses/pb-pc",
     lambda o: eq((o["value"], o["description"]), (0, "zero"),
                  "value, description")),
    (["create", "service", "clusterip", "pb-svc", "--tcp=80:8080"],
     "/api/v1/namespaces/default/services/pb-svc",
     lambda o: eq(o["spec"]["ports"][0]["targetPort"], 8080, "targetPort")),
]


def generators(s, version=None):
    # kubectl before 1.21 (Debian's 1.20) creates batch/v1beta1 CronJobs,
    # which the server does not serve
    minor = kubectl_minor(version)
    gens = [g for g in GENERATORS if minor >= 21 or "cronjob" not in g[0]]
    mark = s.log_mark()
    for args, path, checker in gens:
        p = s.kubectl(*args, version=version)
        check("created" in p.stdout, "%s: %r" % (" ".join(args), p.stdout))
        checker(s.get_json(path))
    posts = [e for e in s.access_log(mark) if e["verb"] == "POST"]
    eq(len(posts), len(gens), "POST count")
    for e in posts:
        eq(e["code"], 201, "code of POST %s" % e["path"])
    # kubectl sends protobuf from 1.32 on (and asks for it back first);
    # older builds (1.27-1.31, Debian's 1.20) send JSON
    if minor >= 32:
        for e in posts:
            eq((e["contentType"], e["accept"].split(",")[0]), (PB, PB),
               "Content-Type, Accept of POST %s" % e["path"])
    # kubectl prints the object it decoded from the answer (protobuf
    # from 1.32 on): the same as the stored JSON, value for value
    # (managedFields included: from 1.21 kubectl hides them unless asked)
    show = ["--show-managed-fields"] if minor >= 21 else []
    p = s.kubectl("create", "deployment", "pb-echo", "--image=nginx",
                  "--replicas=0", "-o", "json", *show, version=version)
    eq(leaves(json.loads(p.stdout)), leaves(s.get_json(
        "/apis/apps/v1/namespaces/default/deployments/pb-echo")),
       "kubectl's decoding of the answer")
    if minor < 21:
        return
    s.kubectl("create", "job", "pb-manual", "--from=cronjob/pb-cj",
              version=version)
    job = s.get_json("/apis/batch/v1/namespaces/default/jobs/pb-manual")
    eq(job["metadata"]["ownerReferences"][0]["name"], "pb-cj", "owner")
    eq(job["spec"]["template"]["spec"]["containers"][0]["image"], "busybox",
       "image from the CronJob")


@case("PB-1")
def kubectl_generators(s):
    generators(s)


@case("PB-1/kubectl-1.32")
def kubectl_generators_132(s):
    generators(s, version="1.32")


@case("PB-1/kubectl-1.27")
def kubectl_generators_127(s):
    generators(s, version="1.27")


@case("PB-2")
def negotiation(s):
    s.kubectl("create", "configmap", "neg", "--from-literal=x=y")
    path = "/api/v1/namespaces/default/configmaps/neg"
    for accept, want in ((PB, PB), (PB + ",application/json", PB),
                         ("application/json," + PB, "application/json"),
                         ("*/*", "application/json")):
        code, hdrs, body = s.raw("GET", path, headers={"Accept": accept})
        eq((code, hdrs.get("Content-Type")), (200, want), "Accept %s" % accept)
    code, hdrs, body = s.raw("GET", path, headers={"Accept": PB})
    check(isinstance(body, bytes) and body.startswith(MAGIC),
          "no magic: %r" % body[:16])
    env = body[4:]
    eq((pb_get(env, 1, 1), pb_get(env, 1, 2)), (b"v1", b"ConfigMap"),
       "typeMeta")
    raw = pb_get(env, 2)
    eq(pb_get(raw, 1, 1), b"neg", "metadata.name")
    entry = pb_get(raw, 2)
    eq((pb_get(entry, 1), pb_get(entry, 2)), (b"x", b"y"), "data entry")
    # lists and errors too
    code, hdrs, body = s.raw("GET", "/api/v1/namespaces/default/configmaps",
                             headers={"Accept": PB})
    eq((code, hdrs.get("Content-Type")), (200, PB), "list")
    eq(pb_get(body[4:], 1, 2), b"ConfigMapList", "list kind")
    code, hdrs, body = s.raw("GET", path + "-nope", headers={"Accept": PB})
    eq((code, hdrs.get("Content-Type")), (404, PB), "404 in protobuf")
    eq(pb_get(body[4:], 1, 2), b"Status", "Status kind")
    eq(pb_get(body[4:], 2, 4), b"NotFound", "Status reason")
    # a custom resource has no message: JSON when JSON is acceptable,
    # 406 naming only JSON when protobuf alone is
    crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    code, hdrs, body = s.raw("GET", crd, headers={"Accept": PB +
                                                  ",application/json"})
    eq((code, hdrs.get("Content-Type")), (200, "application/json"), "CRDs")
    code, hdrs, body = s.raw("GET", crd, headers={"Accept": PB})
    eq((code, body.get("reason")), (406, "NotAcceptable"), "CRDs, PB only")
    eq(body["message"], "only the following media types are accepted: "
       "application/json", "406 message")
    # Tables stay JSON (kubectl get)
    p = s.kubectl("get", "configmap", "neg")
    check("neg" in p.stdout, p.stdout)


@case("PB-3")
def honest_415(s):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}}
    code, _, body = s.raw("POST", "/api/v1/namespaces/default/configmaps",
                          json.dumps(cm),
                          headers={"Content-Type": "application/yaml"})
    eq((code, body.get("reason")), (415, "UnsupportedMediaType"), "yaml")
    eq(body["message"], "the body of the request was in an unknown format "
       "- accepted media types include: application/json, " + PB,
       "415 for a built-in kind")
    code, _, body = s.raw("PUT", "/api/v1/namespaces/default/configmaps/y",
                          json.dumps(cm),
                          headers={"Content-Type": "text/plain"})
    eq((code, body.get("reason")), (415, "UnsupportedMediaType"), "PUT")
    # a CRD (and its custom resources) takes JSON only: the message says so
    crd = envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                   ld(1, ld(1, "x.example.com")))
    code, _, body = s.raw(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd, headers={"Content-Type": PB})
    eq((code, body.get("reason")), (415, "UnsupportedMediaType"), "CRD")
    eq(body["message"], "the body of the request was in an unknown format "
       "- accepted media types include: application/json",
       "415 for a kind without a message")


@case("PB-4")
def unknown_fields_and_garbage(s):
    # ConfigMap: metadata (1) {name (1), unknown 99}, data (2) entry,
    # unknown 77 (varint) and 78 (bytes): dropped, even under Strict
    meta = ld(1, "unk") + vi(99, 5)
    raw = ld(1, meta) + ld(2, ld(1, "k") + ld(2, "v")) + vi(77, 1) + \
        ld(78, "zzz")
    code, hdrs, body = s.raw(
        "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
        envelope("v1", "ConfigMap", raw),
        headers={"Content-Type": PB, "Accept": "application/json"})
    eq(code, 201, "create with unknown fields: %r" % (body,))
    obj = s.get_json("/api/v1/namespaces/default/configmaps/unk")
    eq(obj["data"], {"k": "v"}, "data")
    eq(sorted(obj), ["apiVersion", "data", "kind", "metadata"], "fields")
    # a protobuf PUT replaces it
    raw = ld(1, ld(1, "unk") + ld(6, obj["metadata"]["resourceVersion"])) + \
        ld(2, ld(1, "k") + ld(2, "w"))
    code, _, body = s.raw(
        "PUT", "/api/v1/namespaces/default/configmaps/unk",
        envelope("v1", "ConfigMap", raw),
        headers={"Content-Type": PB, "Accept": "application/json"})
    eq((code, body.get("data")), (200, {"k": "w"}), "PUT in protobuf")
    # DeleteOptions in protobuf (typed clients): dryRun (5) All keeps it
    code, _, body = s.raw(
        "DELETE", "/api/v1/namespaces/default/configmaps/unk",
        envelope("meta.k8s.io/v1", "DeleteOptions", ld(5, "All")),
        headers={"Content-Type": PB, "Accept": "application/json"})
    eq(code, 200, "dry-run DELETE in protobuf: %r" % (body,))
    s.get_json("/api/v1/namespaces/default/configmaps/unk")
    code, _, body = s.raw(
        "DELETE", "/api/v1/namespaces/default/configmaps/unk",
        envelope("coordination.k8s.io/v1", "DeleteOptions",
                 ld(4, "Background")),
        headers={"Content-Type": PB, "Accept": PB})
    eq(code, 200, "DELETE in protobuf: %r" % (body,))
    code, _, _ = s.raw("GET", "/api/v1/namespaces/default/configmaps/unk")
    eq(code, 404, "deleted")
    # the envelope's kind must match the URL, as for JSON
    code, _, body = s.raw(
        "POST", "/api/v1/namespaces/default/configmaps",
        envelope("v1", "Secret", ld(1, ld(1, "sec"))),
        headers={"Content-Type": PB, "Accept": "application/json"})
    eq(code, 400, "Secret posted to configmaps: %r" % (body,))
    for bad in (b"", b"k8s", b"json{}", MAGIC + b"\xff\xff\xff",
                envelope("v1", "ConfigMap", b"\x0a\x05ab"),
                envelope("v1", "ConfigMap", ld(1, ld(1, b"\xff\xfe")))):
        code, hdrs, body = s.raw(
            "POST", "/api/v1/namespaces/default/configmaps", bad,
            headers={"Content-Type": PB, "Accept": "application/json"})
        eq((code, body.get("reason")), (400, "BadRequest"),
           "garbage %r" % bad[:20])
    code, _, _ = s.raw("GET", "/healthz")
    eq(code, 200, "alive")


if __name__ == "__main__":
    run_cases()
