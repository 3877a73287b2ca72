# SPDX-License-Identifier: Apache-2.0
"""OpenAPI v3 for custom resources (docs/apiserver.md §1.6): the
/openapi/v3 discovery document and one document per group and version
built from the CRDs' schemas, so that `kubectl explain` describes Kueue's
kinds, while kubectl's validation, dry-run and field-validation checks of
built-in and custom kinds keep working. kubectl 1.20 only reads OpenAPI
v2 and cannot explain from it here: its explain cases are skipped."""
import hashlib
import json
import os

from cuetest import case, check, eq, kubectl_minor, run_cases, skip

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CRDS = os.path.join(ROOT, "manifests", "crds")
GV = "apis/kueue.x-k8s.io/v1beta2"


def install(s):
    s.kubectl("apply", "-f", CRDS)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")


def need_v3_explain(version=None):
    if kubectl_minor(version) < 27:
        skip("kubectl 1.%d explains from OpenAPI v2 only"
             % kubectl_minor(version))


@case("OA-1")
def documents(s):
    root = s.get_json("/openapi/v3")
    eq(root["paths"], {}, "no custom resources: no paths")
    install(s)
    root = s.get_json("/openapi/v3")
    keys = sorted(root["paths"])
    check(GV in keys and "apis/kueue.x-k8s.io/v1beta1" in keys and
          "apis/jobset.x-k8s.io/v1alpha2" in keys, "paths %r" % keys)
    check(not any(k == "api/v1" or k.startswith("apis/apps/")
                  for k in keys), "built-in groups listed: %r" % keys)
    url = root["paths"][GV]["serverRelativeURL"]
    check(url.startswith("/openapi/v3/" + GV + "?hash="), url)
    code, hdrs, raw = s.raw("GET", url.split("?")[0], headers={
        "Accept": "application/json"})
    eq(code, 200, "gv document")
    doc = raw
    # served compact with sorted keys: the same text hashes the same
    text = json.dumps(doc, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)
    sha = hashlib.sha512(text.encode()).hexdigest().upper()
    eq(url.split("hash=")[1], sha, "hash is the document's SHA-512")
    eq(hdrs.get("ETag"), '"%s"' % sha, "ETag")
    eq(doc["openapi"], "3.0.0", "openapi version")
    schemas = doc["components"]["schemas"]
    cq = schemas["io.x-k8s.kueue.v1beta2.ClusterQueue"]
    eq(cq["x-kubernetes-group-version-kind"],
       [{"group": "kueue.x-k8s.io", "version": "v1beta2",
         "kind": "ClusterQueue"}], "GVK extension")
    eq(cq["properties"]["metadata"]["allOf"],
       [{"$ref": "#/components/schemas/"
                 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
       "metadata references ObjectMeta")
    for f in ("apiVersion", "kind", "spec", "status"):
        check(f in cq["properties"], "ClusterQueue lacks %s" % f)
    check("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas,
          "no ObjectMeta schema")
    check("io.x-k8s.kueue.v1beta2.WorkloadList" in schemas, "no list")
    patch = doc["paths"]["/apis/kueue.x-k8s.io/v1beta2/namespaces/"
                         "{namespace}/workloads/{name}"]["patch"]
    eq(patch["x-kubernetes-group-version-kind"]["kind"], "Workload", "gvk")
    eq(sorted(p["name"] for p in patch["parameters"]),
       ["dryRun", "fieldManager", "fieldValidation", "force"], "params")
    check("application/strategic-merge-patch+json"
          not in patch["requestBody"]["content"], "SMP for a CR")
    # a group-version without custom kinds is not there
    eq(s.raw("GET", "/openapi/v3/apis/apps/v1")[0], 404, "apps/v1")
    eq(s.raw("GET", "/openapi/v3/apis/kueue.x-k8s.io/v9")[0], 404, "v9")


def explain_cases(s, version=None):
    need_v3_explain(version)
    install(s)
    out = s.kubectl("explain", "clusterqueue.spec", version=version).stdout
    check("KIND:       ClusterQueue" in out or "KIND:     ClusterQueue"
          in out, out)
    for f in ("cohort", "resourceGroups", "namespaceSelector",
              "preemption"):
        check(f in out, "clusterqueue.spec lacks %s:\n%s" % (f, out))
    out = s.kubectl("explain", "workload.spec.podSets",
                    version=version).stdout
    for f in ("FIELD: podSets", "count", "template", "name"):
        check(f in out, "workload.spec.podSets lacks %r:\n%s" % (f, out))
    out = s.kubectl("explain", "localqueue", "--recursive",
                    version=version).stdout
    for f in ("clusterQueue", "metadata", "annotations", "ownerReferences",
              "creationTimestamp", "pendingWorkloads"):
        check(f in out, "localqueue --recursive lacks %s:\n%s" % (f, out))
    out = s.kubectl("explain", "clusterqueues",
                    "--api-version=kueue.x-k8s.io/v1beta1",
                    version=version).stdout
    check("v1beta1" in out, out)
    p = s.kubectl("explain", "clusterqueue.spec.nosuchfield",
                  version=version, check=False)
    check(p.returncode != 0, "explain of a missing field succeeded")


@case("OA-2")
def explain(s):
    explain_cases(s)


@case("OA-2/kubectl-1.27")
def explain_127(s):
    explain_cases(s, "1.27")


def kubectl_still_works(s, version=None):
    install(s)
    s.namespace("x")
    cq = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
          "metadata:\n  name: cq\nspec:\n  namespaceSelector: {}\n")
    s.file("cq.yaml", cq)
    s.file("cq-bad.yaml", cq.replace("name: cq", "name: cq-bad") +
           "  bogus: 1\n")
    s.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
           "  name: cm\n  namespace: x\ndata:\n  k: v\n")
    s.file("cm-bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
           "  name: cm-bad\n  namespace: x\nbogus: 1\n")
    for f in ("cq.yaml", "cm.yaml"):
        p = s.kubectl("apply", "--dry-run=server", "-f", s.dir + "/" + f,
                      version=version)
        check("(server dry run)" in p.stdout, p.stdout)
        s.kubectl("apply", "-f", s.dir + "/" + f, version=version)
        s.kubectl("replace", "-f", s.dir + "/" + f, version=version)
        s.kubectl("apply", "-f", s.dir + "/" + f, version=version)
    s.kubectl("patch", "clusterqueue", "cq", "--type=merge", "-p",
              '{"spec":{"cohort":"c"}}', version=version)
    s.kubectl("patch", "configmap", "cm", "-n", "x", "-p",
              '{"data":{"k2":"v2"}}', version=version)
    eq(s.get_json("/api/v1/namespaces/x/configmaps/cm")["data"],
       {"k": "v", "k2": "v2"}, "patched configmap")
    if kubectl_minor(version) < 25:
        # --validate is a boolean before 1.25 and such kubectl sends no
        # fieldValidation: the object is created, the custom resource's
        # unknown field pruned as a real server prunes it.
        for f in ("cq-bad.yaml", "cm-bad.yaml"):
            s.kubectl("create", "--validate=true", "-f", s.dir + "/" + f,
                      version=version)
        check("bogus" not in s.get_json(
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq-bad")["spec"],
              "cq-bad kept bogus")
        return
    for f in ("cq-bad.yaml", "cm-bad.yaml"):
        p = s.kubectl("create", "--validate=strict", "-f",
                      s.dir + "/" + f, version=version, check=False)
        check(p.returncode != 0, "strict create of %s succeeded" % f)
        check("bogus" in p.stderr, p.stderr)


@case("OA-3")
def still_works(s):
    kubectl_still_works(s)


@case("OA-3/kubectl-1.27")
def still_works_127(s):
    kubectl_still_works(s, "1.27")


run_cases()
