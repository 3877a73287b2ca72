# SPDX-License-Identifier: Apache-2.0
"""scripts/release.py - `make release`: one manifest that installs cueue,
build/release/cueue.yaml, from manifests/ (the resources of
manifests/kustomization.yaml, in its order: CRDs, namespace, RBAC with
the user-facing ClusterRoles, ConfigMap, Services, NetworkPolicy,
Deployment; then the admission webhook configurations of
manifests/webhooks/). The files are copied as they are, comments
included; only the Deployment's image changes:

  IMAGE        the image reference (default cueue-controller:VERSION)
  DIGEST_FILE  build/image/digest of `make image`: when it exists and was
               built for IMAGE (build/image/image-ref), the pod template
               carries it as the annotation cueue.dev/image-digest (a new
               image rolls the Deployment)
  RELEASE_PIN  1: reference the image by that digest (IMAGE@sha256:...),
               for a registry the OCI image was pushed to unchanged
               (`skopeo copy oci-archive:... docker://REGISTRY/...`)
  JOBSET_CRD   0: leave out manifests/crds/jobset.x-k8s.io_jobsets.yaml,
               for clusters where JobSet is installed (its own CRD must
               not be replaced by cueue's, which covers only what cueue
               reads); default 1

usage: python3 scripts/release.py OUT"""
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MANIFESTS = os.path.join(ROOT, "manifests")


def die(msg):
    sys.stderr.write("release: %s\n" % msg)
    sys.exit(1)


def check_service_refs(docs):
    """Every webhook clientConfig (admission webhooks, CRD conversion)
    names a Service of the release: a conversion webhook pointing at a
    Service that is not installed makes every v1beta1 request fail."""
    objs = [yaml.safe_load(d) for d in docs]
    services = {(o["metadata"].get("namespace"), o["metadata"]["name"])
                for o in objs if o["kind"] == "Service"}
    for o in objs:
        ccs = [w.get("clientConfig") for w in o.get("webhooks") or []]
        conv = (o.get("spec") or {}).get("conversion") or {} \
            if o["kind"] == "CustomResourceDefinition" else {}
        if conv.get("strategy") == "Webhook":
            ccs.append((conv.get("webhook") or {}).get("clientConfig"))
        for cc in ccs:
            svc = (cc or {}).get("service")
            if svc and (svc.get("namespace"), svc.get("name")) \
                    not in services:
                die("%s %s: webhook Service %s/%s is not in the release" %
                    (o["kind"], o["metadata"]["name"],
                     svc.get("namespace"), svc.get("name")))


def resources(kdir):
    with open(os.path.join(kdir, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    return [os.path.join(kdir, r) for r in k["resources"]]


def split_docs(text):
    """The YAML documents of a file as text, comments kept."""
    docs, cur = [], []
    for line in text.splitlines(True):
        if line.rstrip() == "---":
            docs.append("".join(cur))
            cur = []
        else:
            cur.append(line)
    docs.append("".join(cur))
    return [d for d in docs if yaml.safe_load(d)]


def set_image(doc, image, digest, pin):
    ref = image + "@" + digest if (pin and digest) else image
    lines = doc.splitlines(True)
    hits = [i for i, ln in enumerate(lines)
            if re.match(r"^\s+image: cueue-controller:\S+\s*$", ln)]
    if len(hits) != 1:
        die("deployment.yaml: expected one 'image: cueue-controller:...' "
            "line, found %d" % len(hits))
    i = hits[0]
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = "%simage: %s\n" % (indent, ref)
    out = "".join(lines)
    if digest:
        # The pod template's labels block: annotations go beside it.
        m = re.search(r"^(  template:\n    metadata:\n)", out, re.M)
        if not m:
            die("deployment.yaml: no pod template metadata")
        out = out[:m.end()] + ("      annotations:\n"
                               "        cueue.dev/image-digest: \"%s\"\n"
                               % digest) + out[m.end():]
    return out


def main():
    if len(sys.argv) != 2:
        die("usage: scripts/release.py OUT")
    out = sys.argv[1]
    with open(os.path.join(ROOT, "VERSION")) as f:
        version = f.read().strip()
    image = os.environ.get("IMAGE") or "cueue-controller:" + version
    pin = os.environ.get("RELEASE_PIN") == "1"
    digest = None
    dfile = os.environ.get("DIGEST_FILE")
    if dfile and os.path.exists(dfile):
        ref = os.path.join(os.path.dirname(dfile), "image-ref")
        built = open(ref).read().strip() if os.path.exists(ref) else None
        if built == image:
            digest = open(dfile).read().strip()
            if not re.match(r"^sha256:[0-9a-f]{64}$", digest):
                die("%s: not a sha256 digest: %r" % (dfile, digest))
    if pin and not digest:
        die("RELEASE_PIN=1 needs the digest of `make image` for %s" % image)

    files = resources(MANIFESTS) + resources(os.path.join(MANIFESTS,
                                                          "webhooks"))
    if os.environ.get("JOBSET_CRD", "1") == "0":
        files = [f for f in files
                 if os.path.basename(f) != "jobset.x-k8s.io_jobsets.yaml"]
    # The cluster's own namespaces exist before any release (the
    # visibility server's RoleBinding lives in kube-system).
    docs, seen_crd = [], set()
    seen_ns = {"default", "kube-system", "kube-public", "kube-node-lease"}
    for path in files:
        with open(path) as f:
            for d in split_docs(f.read()):
                obj = yaml.safe_load(d)
                md = obj.get("metadata") or {}
                for k in ("apiVersion", "kind"):
                    if k not in obj:
                        die("%s: a document without %s" % (path, k))
                if "name" not in md:
                    die("%s: a %s without a name" % (path, obj["kind"]))
                ns = md.get("namespace")
                if ns and ns not in seen_ns:
                    die("%s: %s/%s comes before its Namespace %s" %
                        (path, obj["kind"], md["name"], ns))
                group = obj["apiVersion"].rpartition("/")[0]
                if group == "kueue.x-k8s.io" and \
                        (group, obj["kind"]) not in seen_crd:
                    die("%s: %s before its CRD" % (path, obj["kind"]))
                if obj["kind"] == "Namespace":
                    seen_ns.add(md["name"])
                if obj["kind"] == "CustomResourceDefinition":
                    seen_crd.add((obj["spec"]["group"],
                                  obj["spec"]["names"]["kind"]))
                if obj["kind"] == "Deployment" and \
                        md["name"] == "cueue-controller":
                    d = set_image(d, image, digest, pin)
                rel = os.path.relpath(path, ROOT)
                docs.append("# Source: %s\n%s" % (rel, d))
    check_service_refs(docs)
    head = ("# cueue %s: everything a cluster needs, in one file.\n"
            "#   kubectl apply --server-side -f cueue.yaml\n"
            "#   kubectl -n cueue-system rollout status deploy/cueue-controller\n"
            "# Image: %s%s\n" % (version, image,
                                 " (%s)" % digest if digest else ""))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + "---\n" + "---\n".join(
            d if d.endswith("\n") else d + "\n" for d in docs))
    os.replace(tmp, out)
    print("release: %s (%d objects, image %s)" % (out, len(docs),
                                                  image + ("@" + digest
                                                           if pin else "")))


main()
