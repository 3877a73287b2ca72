# SPDX-License-Identifier: Apache-2.0
"""The release manifest (`make release`, scripts/release.py) against
cueue-apiserver, applied with the machine's kubectl as one file.

- release-applies: the file names the image (IMAGE, pinned by the digest
  of `make image` with RELEASE_PIN=1) and has cueue's JobSet CRD unless
  JOBSET_CRD=0; `kubectl apply -f` accepts every
  object, each reads back with every field the file sets, a second apply
  changes nothing. (Plain client-side apply; `--server-side` is
  exercised by t_server_side_apply.py.)
- release-pod-template: the Deployment's pod template is what the image
  expects and the ConfigMap's configuration says: user 65532, the
  entrypoint, the webhook, metrics and health ports of the configuration,
  liveness and readiness probes on the health port, the ledger (--store)
  on a writable emptyDir at the image's volume /var/lib/cueue, the
  ConfigMap mounted read-only at --config, the certificate Secret of
  internalCertManagement at the webhook's certificate directory, the
  Service and webhook configurations pointing at the webhook port. When
  build/image holds an image, its config is compared as well.
- release-user-roles: Kueue's user-facing ClusterRoles: per kind an
  editor and a viewer with Kueue's verbs and aggregation labels; what
  kueue-batch-admin-role and kueue-batch-user-role aggregate (computed
  from the labels their selectors match) is what Kueue's grant; the
  viewers Kueue adds to Kubernetes' view, edit and admin roles.
- release-runs: the controller with the release's own configuration
  (ports and certificate directory moved to this machine) against the
  applied release: it mints the certificate Secret, injects its CA into
  the release's webhook configurations, reports ready on the probe's
  path, and a Job sent to the sample's LocalQueue is suspended by the
  webhook, admitted and runs."""
import json
import os
import re
import subprocess
import tempfile
import urllib.request

import yaml

from cuetest import (Controller, Failure, case, check, eq, free_port,
                     run_cases, wait_for)

ROOT = os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MANIFESTS = os.path.join(ROOT, "manifests")
ADM = "/apis/admissionregistration.k8s.io/v1"
UID = 65532
ENTRYPOINT = "/usr/local/bin/cueue-controller"
with open(os.path.join(ROOT, "VERSION")) as _f:
    VERSION = _f.read().strip()
FAKE_DIGEST = "sha256:" + "ab" * 32


def release(s, image=None, digest=None, pin=False, name="cueue.yaml",
            jobset_crd=True):
    """Run scripts/release.py into the server's scratch directory."""
    out = os.path.join(s.dir, name)
    env = {k: v for k, v in os.environ.items()
           if k not in ("IMAGE", "RELEASE_PIN", "DIGEST_FILE", "JOBSET_CRD")}
    if not jobset_crd:
        env["JOBSET_CRD"] = "0"
    if image:
        env["IMAGE"] = image
    if digest:
        d = tempfile.mkdtemp(dir=s.dir)
        with open(os.path.join(d, "digest"), "w") as f:
            f.write(digest + "\n")
        with open(os.path.join(d, "image-ref"), "w") as f:
            f.write((image or "cueue-controller:" + VERSION) + "\n")
        env["DIGEST_FILE"] = os.path.join(d, "digest")
    if pin:
        env["RELEASE_PIN"] = "1"
    p = subprocess.run(["/usr/bin/python3",
                        os.path.join(ROOT, "scripts", "release.py"), out],
                       env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        raise Failure("release.py: " + p.stdout)
    with open(out) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    return out, docs


def find(docs, kind, name):
    got = [d for d in docs if d["kind"] == kind and
           d["metadata"]["name"] == name]
    eq(len(got), 1, "%s/%s in the release" % (kind, name))
    return got[0]


def subset(want, got, path, errors):
    """Record every place where `want` is not contained in `got`."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            errors.append("%s: got %r" % (path, got))
            return
        for k, v in want.items():
            if k not in got:
                errors.append("%s.%s: missing" % (path, k))
            else:
                subset(v, got[k], "%s.%s" % (path, k), errors)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            errors.append("%s: got %r, want %r" % (path, got, want))
            return
        for i, (a, b) in enumerate(zip(want, got)):
            subset(a, b, "%s[%d]" % (path, i), errors)
    elif want != got and not (isinstance(want, (int, float)) and
                              isinstance(got, (int, float)) and
                              float(want) == float(got)):
        errors.append("%s: got %r, want %r" % (path, got, want))


def apply_release(s, path):
    p = s.kubectl("apply", "-f", path)
    return p.stdout


def read_back(s, doc):
    av = doc["apiVersion"]
    res = doc["kind"].lower() + ("." + av.split("/")[0] if "/" in av
                                 else "")
    args = ["get", res, doc["metadata"]["name"], "-o", "json"]
    if "namespace" in doc["metadata"]:
        args += ["-n", doc["metadata"]["namespace"]]
    return json.loads(s.kubectl(*args).stdout)


def config_of(docs):
    cm = find(docs, "ConfigMap", "cueue-config")
    return yaml.safe_load(cm["data"]["config.yaml"])


def port_of(addr):
    return int(addr.rsplit(":", 1)[1])


@case("release-applies")
def applies(s):
    # The image reference: the default, then a registry's, pinned.
    _, docs = release(s)
    dep = find(docs, "Deployment", "cueue-controller")
    eq(dep["spec"]["template"]["spec"]["containers"][0]["image"],
       "cueue-controller:" + VERSION, "default image")
    image = "registry.example/cueue/cueue-controller:" + VERSION
    path, docs = release(s, image=image, digest=FAKE_DIGEST, pin=True)
    dep = find(docs, "Deployment", "cueue-controller")
    eq(dep["spec"]["template"]["spec"]["containers"][0]["image"],
       image + "@" + FAKE_DIGEST, "pinned image")
    eq(dep["spec"]["template"]["metadata"]["annotations"]
       ["cueue.dev/image-digest"], FAKE_DIGEST, "digest annotation")
    # A digest built for another image name is not used.
    _, other = release(s, image="elsewhere/cueue:1", name="other.yaml")
    check("annotations" not in find(other, "Deployment", "cueue-controller")
          ["spec"]["template"]["metadata"], "no digest without make image")

    # `make release` is the same script with the Makefile's variables.
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BUILD",
                        "BUILDDIR")}
    made = os.path.join(s.dir, "made.yaml")
    p = subprocess.run(["make", "--no-print-directory", "-C", ROOT,
                        "release", "RELEASE_OUT=" + made, "IMAGE=" + image,
                        "IMAGE_DIR=" + os.path.join(s.dir, "no-image"),
                        "JOBSET_CRD=0"],
                       env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    eq(p.returncode, 0, "make release: " + p.stdout)
    with open(made) as f:
        mdocs = [d for d in yaml.safe_load_all(f) if d]
    eq(find(mdocs, "Deployment", "cueue-controller")["spec"]["template"]
       ["spec"]["containers"][0]["image"], image, "make release IMAGE=")
    check(not any(d["kind"] == "CustomResourceDefinition" and
                  d["metadata"]["name"] == "jobsets.jobset.x-k8s.io"
                  for d in mdocs), "make release JOBSET_CRD=0")
    crds = [d["metadata"]["name"] for d in docs
            if d["kind"] == "CustomResourceDefinition"]
    check("jobsets.jobset.x-k8s.io" in crds, "JobSet CRD by default")
    _, without = release(s, name="nojobset.yaml", jobset_crd=False)
    eq([d["metadata"]["name"] for d in without
        if d["kind"] == "CustomResourceDefinition"],
       [c for c in crds if c != "jobsets.jobset.x-k8s.io"],
       "JOBSET_CRD=0 leaves out only the JobSet CRD")
    kinds = {d["kind"] for d in docs}
    for k in ("CustomResourceDefinition", "Namespace", "ServiceAccount",
              "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
              "ConfigMap", "Service", "NetworkPolicy", "Deployment",
              "MutatingWebhookConfiguration",
              "ValidatingWebhookConfiguration"):
        check(k in kinds, "the release has a %s" % k)
    out = apply_release(s, path)
    eq(len([ln for ln in out.splitlines() if ln.strip()]), len(docs),
       "one line per object:\n" + out)
    errors = []
    got = json.loads(s.kubectl("get", "-f", path, "-o", "json").stdout)
    items = got["items"] if got.get("kind") == "List" else [got]
    eq(len(items), len(docs), "objects read back")
    for d, g in zip(docs, items):
        subset(d, g, "%s/%s" % (d["kind"], d["metadata"]["name"]), errors)
    if errors:
        raise Failure("%d differences:\n  %s" % (len(errors),
                                                 "\n  ".join(errors)))
    out = apply_release(s, path)
    for line in out.splitlines():
        check(line.endswith(" unchanged"), "re-apply: %r" % line)


@case("release-pod-template")
def pod_template(s):
    path, docs = release(s)
    apply_release(s, path)
    dep = read_back(s, find(docs, "Deployment", "cueue-controller"))
    cfg = config_of(docs)
    pod = dep["spec"]["template"]["spec"]
    eq(pod["serviceAccountName"], "cueue-controller", "service account")
    find(docs, "ServiceAccount", "cueue-controller")
    sc = pod["securityContext"]
    eq((sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]),
       (UID, UID, True), "pod user")
    eq(len(pod["containers"]), 1, "one container")
    c = pod["containers"][0]
    eq(c["command"], [ENTRYPOINT], "command is the image's entrypoint")
    csc = c["securityContext"]
    eq((csc["readOnlyRootFilesystem"], csc["allowPrivilegeEscalation"],
        csc["capabilities"]["drop"]), (True, False, ["ALL"]),
       "container security context")
    args = c["args"]
    conf_path = args[args.index("--config") + 1]
    store = args[args.index("--store") + 1]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    eq(ports, {"webhook": cfg["webhook"]["port"],
               "metrics": port_of(cfg["metrics"]["bindAddress"]),
               "health": port_of(cfg["health"]["healthProbeBindAddress"]),
               "visibility": cfg.get("visibilityServer", {}).get(
                   "bindPort", 8082)},
       "container ports are the configuration's")
    for probe, path_ in (("livenessProbe", "/healthz"),
                         ("readinessProbe", "/readyz")):
        eq(c[probe]["httpGet"], {"path": path_, "port": "health",
                                 "scheme": "HTTP"}
           if "scheme" in c[probe]["httpGet"] else
           {"path": path_, "port": "health"}, probe)
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    # The ledger: a writable emptyDir holding --store, the image's volume.
    ledger_dir = os.path.dirname(store)
    eq(ledger_dir, "/var/lib/cueue", "ledger directory")
    check(ledger_dir in mounts, "ledger mounted: %r" % list(mounts))
    m = mounts[ledger_dir]
    check(not m.get("readOnly"), "ledger writable")
    check("emptyDir" in vols[m["name"]], "ledger on an emptyDir")
    check("/tmp" in mounts and "emptyDir" in vols[mounts["/tmp"]["name"]],
          "/tmp is an emptyDir (read-only root filesystem)")
    # The configuration: the ConfigMap of the release, read-only.
    m = mounts[conf_path]
    eq((m.get("subPath"), m.get("readOnly")), ("config.yaml", True),
       "config mount")
    eq(vols[m["name"]]["configMap"]["name"], "cueue-config", "ConfigMap")
    # The webhook certificate: the Secret internalCertManagement writes,
    # where the webhook server reads it.
    icm = cfg["internalCertManagement"]
    check(icm["enable"], "internalCertManagement on")
    cert_dir = cfg["webhook"].get("certDir",
                                  "/tmp/k8s-webhook-server/serving-certs")
    m = mounts[cert_dir]
    check(m.get("readOnly"), "certificate mount read-only")
    eq(vols[m["name"]]["secret"]["secretName"], icm["webhookSecretName"],
       "certificate Secret")
    role = find(docs, "Role", "cueue-controller")
    check(any(icm["webhookSecretName"] in r.get("resourceNames", [])
              for r in role["rules"]), "the Role grants that Secret")
    # The Service and the webhook configurations reach the webhook port.
    svc = find(docs, "Service", icm["webhookServiceName"])
    eq([p["targetPort"] for p in svc["spec"]["ports"]], ["webhook"],
       "Service target port")
    eq(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"],
       "Service selects the pod")
    for kind in ("MutatingWebhookConfiguration",
                 "ValidatingWebhookConfiguration"):
        for wc in (d for d in docs if d["kind"] == kind):
            for w in wc["webhooks"]:
                ref = w["clientConfig"]["service"]
                eq((ref["name"], ref["namespace"], ref["port"]),
                   (icm["webhookServiceName"], cfg["namespace"],
                    svc["spec"]["ports"][0]["port"]), w["name"])
    # The image of make image, when it was built.
    oci = os.path.join(ROOT, "build", "image", "cueue-controller-oci.tar")
    if os.path.exists(oci):
        img = image_config(oci)
        eq(img["User"], "%d:%d" % (UID, UID), "image user")
        eq(img["Entrypoint"], [ENTRYPOINT], "image entrypoint")
        check(ledger_dir in img.get("Volumes", {}), "image volume")
        for p in ports.values():
            check("%d/tcp" % p in img.get("ExposedPorts", {}),
                  "image exposes %d" % p)


def image_config(oci):
    import tarfile
    with tarfile.open(oci) as t:
        def blob(digest):
            return json.loads(t.extractfile(
                "blobs/sha256/" + digest.split(":")[1]).read())
        index = json.loads(t.extractfile("index.json").read())
        manifest = blob(index["manifests"][0]["digest"])
        return blob(manifest["config"]["digest"])["config"]


# Kueue's user-facing roles: kind -> (group, resource, has status,
# viewer for batch users, viewer aggregated into view/edit, editor for
# batch users).
KINDS = {
    "clusterqueue": ("kueue.x-k8s.io", "clusterqueues", True, False, False,
                     False),
    "localqueue": ("kueue.x-k8s.io", "localqueues", True, True, True, False),
    "resourceflavor": ("kueue.x-k8s.io", "resourceflavors", False, False,
                       False, False),
    "cohort": ("kueue.x-k8s.io", "cohorts", False, False, False, False),
    "workload": ("kueue.x-k8s.io", "workloads", True, True, True, False),
    "workloadpriorityclass": ("kueue.x-k8s.io", "workloadpriorityclasses",
                              False, False, False, False),
    "job": ("batch", "jobs", True, True, True, True),
    "jobset": ("jobset.x-k8s.io", "jobsets", True, True, True, True),
}
EDIT = {"create", "delete", "get", "list", "patch", "update", "watch"}
VIEW = {"get", "list", "watch"}


def grants(rules):
    """{(group, resource): set(verbs)} of a rule list."""
    out = {}
    for r in rules:
        check("resourceNames" not in r and "nonResourceURLs" not in r,
              "user role rule too narrow or too wide: %r" % r)
        for g in r["apiGroups"]:
            for res in r["resources"]:
                out.setdefault((g, res), set()).update(r["verbs"])
    return out


def aggregate(roles, selector_labels):
    out = {}
    for r in roles.values():
        labels = r["metadata"].get("labels", {})
        if all(labels.get(k) == v for k, v in selector_labels.items()):
            for k, v in grants(r.get("rules", [])).items():
                out.setdefault(k, set()).update(v)
    return out


@case("release-user-roles")
def user_roles(s):
    path, docs = release(s)
    apply_release(s, path)
    got = json.loads(s.kubectl("get", "clusterroles", "-o", "json").stdout)
    roles = {r["metadata"]["name"]: r for r in got["items"]}
    for d in docs:
        if d["kind"] == "ClusterRole":
            check(d["metadata"]["name"] in roles, "applied " +
                  d["metadata"]["name"])
    want_admin, want_user = {}, {}
    agg = {"view": {}, "edit": {}, "admin": {}}
    for kind, (group, res, status, vuser, vview, euser) in KINDS.items():
        for role, verbs in (("editor", EDIT), ("viewer", VIEW)):
            name = "kueue-%s-%s-role" % (kind, role)
            check(name in roles, "ClusterRole %s" % name)
            r = roles[name]
            labels = r["metadata"]["labels"]
            eq(labels.get("rbac.kueue.x-k8s.io/role"),
               "%s-%s" % (kind, role), name + " role label")
            eq(labels.get("rbac.kueue.x-k8s.io/batch-admin"), "true",
               name + " batch-admin label")
            in_user = vuser if role == "viewer" else euser
            eq(labels.get("rbac.kueue.x-k8s.io/batch-user"),
               "true" if in_user else None, name + " batch-user label")
            to_view = role == "viewer" and vview
            for k8s in ("view", "edit"):
                eq(labels.get("rbac.authorization.k8s.io/aggregate-to-" +
                              k8s), "true" if to_view else None,
                   "%s aggregate-to-%s" % (name, k8s))
            eq(labels.get("rbac.authorization.k8s.io/aggregate-to-admin"),
               "true" if role == "viewer" else None,
               name + " aggregate-to-admin")
            want = {(group, res): verbs}
            if status:
                want[(group, res + "/status")] = {"get"}
            eq(grants(r["rules"]), want, name + " rules")
            for k, v in want.items():
                want_admin.setdefault(k, set()).update(v)
                if in_user:
                    want_user.setdefault(k, set()).update(v)
                if role == "viewer":
                    agg["admin"].setdefault(k, set()).update(v)
                    if to_view:
                        agg["view"].setdefault(k, set()).update(v)
                        agg["edit"].setdefault(k, set()).update(v)
    # The visibility API's viewers: Kueue's pending-workloads roles, in
    # view, edit and admin; the LocalQueue one for batch users too.
    for scope, res, in_user in (("cq", "clusterqueues", False),
                                ("lq", "localqueues", True)):
        name = "kueue-pending-workloads-%s-viewer-role" % scope
        check(name in roles, "ClusterRole %s" % name)
        labels = roles[name]["metadata"]["labels"]
        eq(labels.get("rbac.kueue.x-k8s.io/role"),
           "pending-workloads-%s-viewer" % scope, name + " role label")
        eq(labels.get("rbac.kueue.x-k8s.io/batch-user"),
           "true" if in_user else None, name + " batch-user label")
        key = ("visibility.kueue.x-k8s.io", res + "/pendingworkloads")
        eq(grants(roles[name]["rules"]), {key: VIEW}, name + " rules")
        want_admin[key] = VIEW
        if in_user:
            want_user[key] = VIEW
        for k8s in agg:
            agg[k8s][key] = VIEW
    for name, label, want in (
            ("kueue-batch-admin-role", "rbac.kueue.x-k8s.io/batch-admin",
             want_admin),
            ("kueue-batch-user-role", "rbac.kueue.x-k8s.io/batch-user",
             want_user)):
        r = roles[name]
        eq(r["aggregationRule"]["clusterRoleSelectors"],
           [{"matchLabels": {label: "true"}}], name + " selector")
        eq(aggregate(roles, {label: "true"}), want, name + " aggregates")
    # Batch users submit and watch jobs; they never touch the queues'
    # definitions or other users' Workloads' specs.
    user = aggregate(roles, {"rbac.kueue.x-k8s.io/batch-user": "true"})
    eq(user[("batch", "jobs")], EDIT, "batch users edit Jobs")
    eq(user[("kueue.x-k8s.io", "localqueues")], VIEW, "view LocalQueues")
    check(("kueue.x-k8s.io", "clusterqueues") not in user,
          "batch users cannot see ClusterQueues (as in Kueue)")
    for k8s, want in agg.items():
        eq(aggregate(roles, {"rbac.authorization.k8s.io/aggregate-to-" +
                             k8s: "true"}), want, "into " + k8s)


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except Exception:
        return False


@case("release-runs", simulate="jobs")
def runs(s):
    path, docs = release(s)
    apply_release(s, path)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    # The release's configuration, its ports and certificate directory
    # moved to this machine (the API server dials webhook services on
    # 127.0.0.1 at the configuration's port).
    cfg = config_of(docs)
    port, health = free_port(), free_port()
    cfg["webhook"].update({"port": port, "host": "127.0.0.1",
                           "certDir": os.path.join(s.dir, "certs")})
    os.mkdir(cfg["webhook"]["certDir"])
    cfg["health"]["healthProbeBindAddress"] = "127.0.0.1:%d" % health
    cfg["metrics"]["bindAddress"] = "0"
    for kind in ("mutatingwebhookconfigurations",
                 "validatingwebhookconfigurations"):
        name = "cueue-%s-webhook-configuration" % kind[:kind.index("webhook")]
        wc = s.get_json("%s/%s/%s" % (ADM, kind, name))
        ops = [{"op": "replace", "path": "/webhooks/%d/clientConfig/service/"
                "port" % i, "value": port} for i in range(len(wc["webhooks"]))]
        code, _, body = s.raw("PATCH", "%s/%s/%s" % (ADM, kind, name), ops,
                              headers={"Content-Type":
                                       "application/json-patch+json"})
        eq(code, 200, "point %s at this machine: %r" % (name, body))
    ctl = Controller(s, config=yaml.safe_dump(cfg))
    secret = "/api/v1/namespaces/%s/secrets/%s" % (
        cfg["namespace"], cfg["internalCertManagement"]["webhookSecretName"])

    def stored():
        # The release ships the Secret empty; the controller fills it.
        code, _, body = s.raw("GET", secret)
        return code == 200 and (body.get("data") or {}).get("ca.crt") and \
            body
    ca = wait_for(stored, 20, what="certificate Secret")["data"]["ca.crt"]
    for kind in ("mutatingwebhookconfigurations",
                 "validatingwebhookconfigurations"):
        name = "cueue-%s-webhook-configuration" % kind[:kind.index("webhook")]
        wait_for(lambda: all(
            w["clientConfig"].get("caBundle") == ca for w in s.get_json(
                "%s/%s/%s" % (ADM, kind, name))["webhooks"]),
            15, what="caBundle injected into " + name)
    # The CRDs' conversion webhook gets the same CA; pointed at this
    # machine, v1beta1 is served.
    convert = [d["metadata"]["name"] for d in docs
               if d["kind"] == "CustomResourceDefinition" and
               (d["spec"].get("conversion") or {}).get("strategy") ==
               "Webhook"]
    eq(len(convert), 11, "the eleven Kueue CRDs convert")
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
    for name in convert:
        wait_for(lambda: s.get_json(crd_path + name)["spec"]["conversion"]
                 ["webhook"]["clientConfig"].get("caBundle") == ca, 15,
                 what="caBundle injected into CRD " + name)
    code, _, body = s.raw(
        "PATCH", crd_path + "clusterqueues.kueue.x-k8s.io",
        [{"op": "replace", "path": "/spec/conversion/webhook/clientConfig/"
          "service/port", "value": port}],
        headers={"Content-Type": "application/json-patch+json"})
    eq(code, 200, "point the ClusterQueue conversion here: %r" % body)
    wait_for(lambda: http_ok("http://127.0.0.1:%d/readyz" % health), 20,
             what="/readyz (the readiness probe)")
    check(http_ok("http://127.0.0.1:%d/healthz" % health),
          "/healthz (the liveness probe)")
    # The validating webhook admits the sample; a Job is held, then runs.
    wait_for(lambda: s.kubectl("apply", "-f", os.path.join(
        MANIFESTS, "samples", "single-clusterqueue.yaml"),
        check=False).returncode == 0, 20, what="sample accepted")
    cqs = json.loads(s.kubectl("get", "clusterqueues.v1beta1.kueue.x-k8s.io",
                               "-o", "json").stdout)["items"]
    check(cqs and all(c["apiVersion"] == "kueue.x-k8s.io/v1beta1"
                      for c in cqs), "ClusterQueues read in v1beta1: %r" % cqs)
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "hello", "namespace": "default",
                        "labels": {"kueue.x-k8s.io/queue-name":
                                   "user-queue"},
                        "annotations": {"cueue.dev/sim-runtime-ms": "300"}},
           "spec": {"parallelism": 1, "suspend": False, "template": {
               "spec": {"containers": [{
                   "name": "c", "image": "busybox",
                   "resources": {"requests": {"cpu": "1"}}}],
                   "restartPolicy": "Never"}}}}
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/default/jobs",
                          job)
    eq(code, 201, "create Job: %r" % body)
    eq(body["spec"]["suspend"], True, "held by the mutating webhook")

    def done():
        j = s.get_json("/apis/batch/v1/namespaces/default/jobs/hello")
        return j.get("status", {}).get("succeeded") == 1
    wait_for(done, 30, what="Job admitted and run")
    ctl.stop()


run_cases()
