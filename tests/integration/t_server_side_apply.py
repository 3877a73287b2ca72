# SPDX-License-Identifier: Apache-2.0
"""Server-side apply (docs/apiserver.md §4.3) with the real kubectl:
`kubectl apply --server-side` creates and updates objects, records
metadata.managedFields per manager (Apply entries for appliers, Update
entries for other writers), refuses to overrule another manager's field
with kube's 409 message unless `--force-conflicts`, removes the fields a
manager stops applying, merges container lists by name, and applies the
release manifest (`make release`) as Kueue's install command does.

- SSA-1: a ConfigMap created, re-applied (no new revision), a key
  dropped from the manifest is removed; managedFields as kube writes it.
- SSA-2: a patch by kubectl-patch makes it an Update owner; applying
  another value for its field is a 409 naming it and the path;
  `--force-conflicts` takes the field; the same value is shared.
- SSA-3: a Deployment: a second manager adds an env var to the container
  named in the first manager's manifest (merge by name), both keep their
  fields, and a Job applied twice (suspend changed) keeps its defaults.
- SSA-4: the release manifest applied with --server-side, twice.
- SSA-5: the API contract: fieldManager required (422), malformed YAML
  (400), create-on-apply answers 201, the name comes from the URL.
- SSA-6: Kueue's CRDs and sample applied server-side; a second manager
  adds a field, conflicts on an atomic list of the CRD schema, and keeps
  the field the first manager stops applying."""
import json
import os
import re
import subprocess

import yaml

from cuetest import Failure, case, check, eq, kubectl_minor, run_cases

ROOT = os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CMS = "/api/v1/namespaces/default/configmaps"


def write(s, name, doc):
    path = os.path.join(s.dir, name)
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    return path


def get(s, res, name):
    args = ["get", res, name, "-o", "json"]
    if kubectl_minor() >= 21:  # newer kubectl hides managedFields
        args.append("--show-managed-fields")
    return json.loads(s.kubectl(*args).stdout)


def managed(obj):
    return {(e["manager"], e["operation"]): e
            for e in obj["metadata"].get("managedFields", [])}


def cm(data, labels=None):
    md = {"name": "c1", "namespace": "default"}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
            "data": data}


def configmap_lifecycle(s, version=None):
    path = write(s, "cm.yaml", cm({"k1": "v1", "k2": "v2"}, {"app": "a"}))
    p = s.kubectl("apply", "--server-side", "-f", path, version=version)
    check("configmap/c1 serverside-applied" in p.stdout, p.stdout)
    obj = get(s, "configmap", "c1")
    eq(obj["data"], {"k1": "v1", "k2": "v2"}, "data after create")
    mf = managed(obj)
    eq(list(mf), [("kubectl", "Apply")], "managers after create")
    e = mf[("kubectl", "Apply")]
    eq((e["apiVersion"], e["fieldsType"]), ("v1", "FieldsV1"), "entry")
    eq(e["fieldsV1"], {"f:data": {"f:k1": {}, "f:k2": {}},
                       "f:metadata": {"f:labels": {"f:app": {}}}},
       "fieldsV1")
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", e["time"]),
          "time %r" % e["time"])
    rv = obj["metadata"]["resourceVersion"]
    s.kubectl("apply", "--server-side", "-f", path, version=version)
    eq(get(s, "configmap", "c1")["metadata"]["resourceVersion"], rv,
       "a repeated apply writes nothing")
    write(s, "cm.yaml", cm({"k1": "v1"}, {"app": "a"}))
    s.kubectl("apply", "--server-side", "-f", path, version=version)
    obj = get(s, "configmap", "c1")
    eq(obj["data"], {"k1": "v1"}, "k2 no longer applied is removed")
    eq(managed(obj)[("kubectl", "Apply")]["fieldsV1"]["f:data"],
       {"f:k1": {}}, "ownership after the removal")


@case("SSA-1")
def ssa_configmap(s):
    configmap_lifecycle(s)


def conflicts(s, version=None):
    path = write(s, "cm.yaml", cm({"k1": "v1", "k2": "v2"}))
    s.kubectl("apply", "--server-side", "-f", path, version=version)
    # As kubectl patch sends it (1.20 may not name its manager).
    code, _, got = s.raw("PATCH", CMS + "/c1?fieldManager=kubectl-patch",
                         {"data": {"k1": "patched"}}, headers={
                             "Content-Type": "application/merge-patch+json"})
    eq(code, 200, "patch: %r" % got)
    mf = managed(get(s, "configmap", "c1"))
    eq(mf[("kubectl-patch", "Update")]["fieldsV1"],
       {"f:data": {"f:k1": {}}}, "kubectl-patch owns what it changed")
    eq(mf[("kubectl", "Apply")]["fieldsV1"], {"f:data": {"f:k2": {}}},
       "the applier lost k1")
    p = s.kubectl("apply", "--server-side", "-f", path, check=False,
                  version=version)
    check(p.returncode != 0, "conflicting apply succeeded")
    check(re.search(r'Apply failed with 1 conflict: conflict with '
                    r'"kubectl-patch" using v1 at \S+Z: \.data\.k1',
                    p.stderr), "stderr: %r" % p.stderr)
    eq(get(s, "configmap", "c1")["data"]["k1"], "patched",
       "a refused apply changes nothing")
    # The same value as the owner's: shared, no conflict.
    other = write(s, "other.yaml", cm({"k1": "patched"}))
    s.kubectl("apply", "--server-side", "--field-manager=tuner", "-f",
              other, version=version)
    mf = managed(get(s, "configmap", "c1"))
    check(("tuner", "Apply") in mf and ("kubectl-patch", "Update") in mf,
          "shared ownership: %r" % list(mf))
    p = s.kubectl("apply", "--server-side", "--force-conflicts", "-f", path,
                  version=version)
    obj = get(s, "configmap", "c1")
    eq(obj["data"], {"k1": "v1", "k2": "v2"}, "forced apply")
    mf = managed(obj)
    check(("kubectl-patch", "Update") not in mf and ("tuner", "Apply")
          not in mf, "forced apply took k1 from every owner: %r" % list(mf))


@case("SSA-2")
def ssa_conflicts(s):
    conflicts(s)


@case("SSA-2/kubectl-1.27")
def ssa_conflicts_127(s):
    conflicts(s, version="1.27")


@case("SSA-3")
def ssa_lists(s):
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "d", "namespace": "default"},
           "spec": {"replicas": 1,
                    "selector": {"matchLabels": {"app": "d"}},
                    "template": {
                        "metadata": {"labels": {"app": "d"}},
                        "spec": {"containers": [
                            {"name": "main", "image": "busybox:1"}]}}}}
    s.kubectl("apply", "--server-side", "-f", write(s, "d.yaml", dep))
    env = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "d", "namespace": "default"},
           "spec": {"template": {"spec": {"containers": [
               {"name": "main", "env": [{"name": "X", "value": "1"}]}]}}}}
    s.kubectl("apply", "--server-side", "--field-manager=tuner", "-f",
              write(s, "env.yaml", env))
    got = get(s, "deployment", "d")
    c = got["spec"]["template"]["spec"]["containers"]
    eq([(x["name"], x["image"], x.get("env")) for x in c],
       [("main", "busybox:1", [{"name": "X", "value": "1"}])],
       "containers merged by name")
    fv = managed(got)[("tuner", "Apply")]["fieldsV1"]
    eq(fv["f:spec"]["f:template"]["f:spec"]["f:containers"],
       {'k:{"name":"main"}': {".": {}, "f:name": {}, "f:env": {
           'k:{"name":"X"}': {".": {}, "f:name": {}, "f:value": {}}}}},
       "tuner's fields")
    # The first manager again: the env var is tuner's, untouched.
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    s.kubectl("apply", "--server-side", "-f", write(s, "d.yaml", dep))
    c = get(s, "deployment", "d")["spec"]["template"]["spec"]["containers"]
    eq([(x["image"], x.get("env")) for x in c],
       [("busybox:2", [{"name": "X", "value": "1"}])], "both managers")
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "default"},
           "spec": {"suspend": True, "template": {"spec": {
               "restartPolicy": "Never",
               "containers": [{"name": "c", "image": "busybox"}]}}}}
    p = s.kubectl("apply", "--server-side", "-f", write(s, "j.yaml", job))
    check("job.batch/j serverside-applied" in p.stdout, p.stdout)
    job["spec"]["suspend"] = False
    s.kubectl("apply", "--server-side", "-f", write(s, "j.yaml", job))
    got = get(s, "job", "j")
    eq(got["spec"].get("suspend"), False, "suspend applied")
    check(got["spec"].get("backoffLimit") is not None,
          "defaults kept: %r" % got["spec"])


@case("SSA-4")
def ssa_release(s):
    out = os.path.join(s.dir, "cueue.yaml")
    env = {k: v for k, v in os.environ.items()
           if k not in ("IMAGE", "RELEASE_PIN", "DIGEST_FILE", "JOBSET_CRD")}
    p = subprocess.run(["/usr/bin/python3",
                        os.path.join(ROOT, "scripts", "release.py"), out],
                       env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        raise Failure("release.py: " + p.stdout)
    p = s.kubectl("apply", "--server-side", "-f", out)
    check("serverside-applied" in p.stdout, p.stdout)
    with open(out) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    crd = get(s, "crd", "workloads.kueue.x-k8s.io")
    check(("kubectl", "Apply") in managed(crd), "CRD managed by kubectl")
    rvs = json.loads(s.kubectl("get", "crd", "-o", "json").stdout)
    before = {i["metadata"]["name"]: i["metadata"]["resourceVersion"]
              for i in rvs["items"]}
    p = s.kubectl("apply", "--server-side", "-f", out)
    eq(p.stdout.count("serverside-applied"), len(docs), p.stdout)
    rvs = json.loads(s.kubectl("get", "crd", "-o", "json").stdout)
    after = {i["metadata"]["name"]: i["metadata"]["resourceVersion"]
             for i in rvs["items"]}
    eq(after, before, "a second apply of the release changes no CRD")


@case("SSA-6")
def ssa_custom_resources(s):
    s.kubectl("apply", "--server-side", "-f",
              os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    sample = os.path.join(ROOT, "manifests", "samples",
                          "single-clusterqueue.yaml")
    with open(sample) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        if d["kind"] == "ClusterQueue":
            d["spec"]["cohortName"] = "team"
    mine = os.path.join(s.dir, "sample.yaml")
    with open(mine, "w") as f:
        yaml.safe_dump_all(docs, f)
    p = s.kubectl("apply", "--server-side", "-f", mine)
    check("clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied"
          in p.stdout, p.stdout)
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
          "metadata": {"name": "cluster-queue"},
          "spec": {"cohortName": "team"}}
    s.kubectl("apply", "--server-side", "--field-manager=tuner", "-f",
              write(s, "cq.yaml", cq))
    got = get(s, "clusterqueue", "cluster-queue")
    eq((got["spec"]["cohortName"],
        got["spec"]["resourceGroups"][0]["flavors"][0]["name"]),
       ("team", "default-flavor"), "both managers' fields")
    # resourceGroups is an atomic list (x-kubernetes-list-type: atomic):
    # another manager's different value conflicts on the whole list.
    cq["spec"]["resourceGroups"] = [{
        "coveredResources": ["cpu"], "flavors": [{
            "name": "default-flavor",
            "resources": [{"name": "cpu", "nominalQuota": 1}]}]}]
    p = s.kubectl("apply", "--server-side", "--field-manager=tuner", "-f",
                  write(s, "cq.yaml", cq), check=False)
    check(p.returncode != 0 and
          'conflict with "kubectl": .spec.resourceGroups' in p.stderr,
          "stderr: %r" % p.stderr)
    # The applier drops cohortName from its manifest: tuner (same value,
    # shared) still owns it, so it stays.
    s.kubectl("apply", "--server-side", "-f", sample)
    eq(get(s, "clusterqueue", "cluster-queue")["spec"].get("cohortName"),
       "team", "a field another manager owns stays")


@case("SSA-5")
def ssa_api(s):
    body = json.dumps(cm({"k": "v"})).encode()
    yml = {"Content-Type": "application/apply-patch+yaml"}
    code, _, st = s.raw("PATCH", CMS + "/c1", body, headers=yml)
    eq((code, st.get("reason")), (422, "Invalid"), "no fieldManager")
    check("fieldManager: Required value" in st.get("message", ""),
          st.get("message"))
    code, _, st = s.raw("PATCH", CMS + "/c1?fieldManager=t", b"a: [",
                        headers=yml)
    eq(code, 400, "malformed YAML: %r" % st)
    code, _, got = s.raw("PATCH", CMS + "/c1?fieldManager=t", body,
                         headers=yml)
    eq(code, 201, "create on apply: %r" % got)
    eq([(e["manager"], e["operation"])
        for e in got["metadata"]["managedFields"]], [("t", "Apply")],
       "managedFields")
    code, _, got = s.raw("PATCH", CMS + "/c1?fieldManager=t", body,
                         headers=yml)
    eq(code, 200, "update on apply")
    code, _, st = s.raw("PATCH", CMS + "/c1?fieldManager=t", json.dumps(
        {"apiVersion": "v1", "kind": "Secret"}).encode(), headers=yml)
    eq(code, 400, "another kind: %r" % st)
    check("the kind in the data (Secret) does not match" in st["message"],
          st["message"])
    # Without fieldManager, an Update is the user agent's up to its '/'.
    code, _, got = s.raw("PATCH", CMS + "/c1", {"data": {"k": "w"}},
                         headers={"Content-Type":
                                  "application/merge-patch+json",
                                  "User-Agent": "tool/1.0 (linux)"})
    eq(code, 200, "merge patch: %r" % got)
    eq([(e["manager"], e["operation"])
        for e in got["metadata"]["managedFields"]],
       [("tool", "Update")], "the writer took the field it changed")
    # The URL names the object when the body does not.
    code, _, got = s.raw("PATCH", CMS + "/c2?fieldManager=t",
                         json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                     "data": {"k": "v"}}).encode(),
                         headers=yml)
    eq((code, got["metadata"]["name"]), (201, "c2"), "name from the URL")


if __name__ == "__main__":
    run_cases()
