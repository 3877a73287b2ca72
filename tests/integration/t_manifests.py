# SPDX-License-Identifier: Apache-2.0
"""Every manifest of manifests/ and every sample applies to cueue-apiserver
with the machine's kubectl (CRDs first, then `kubectl wait` for
Established, as on a real cluster) and reads back unchanged: each field the
file sets has the same value on the server (the server may add defaults
and metadata, nothing may be lost or altered). Kueue's kinds have Kueue's
short names, and their CRDs describe every field for `kubectl explain`:
what it does, each enum value and the default."""
import glob
import os

import yaml

from cuetest import Failure, case, check, eq, run_cases

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")


def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


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


def read_back(s, doc):
    md = doc["metadata"]
    args = ["get", "%s.%s" % (doc["kind"].lower(),
                                doc["apiVersion"].split("/")[0])
            if "/" in doc["apiVersion"] else doc["kind"].lower(),
            md["name"], "-o", "json"]
    if "namespace" in md:
        args += ["-n", md["namespace"]]
    import json
    return json.loads(s.kubectl(*args).stdout)


def check_all(s, files):
    errors = []
    n = 0
    for path in files:
        for doc in docs(path):
            got = read_back(s, doc)
            want = dict(doc)
            subset(want, got, "%s %s/%s" % (os.path.basename(path),
                                          doc["kind"],
                                          doc["metadata"]["name"]), errors)
            n += 1
    if errors:
        raise Failure("%d differences:\n  %s" % (len(errors),
                                                 "\n  ".join(errors)))
    return n


@case("manifests-install")
def install(s):
    crds = sorted(glob.glob(os.path.join(MANIFESTS, "crds", "*.yaml")))
    check(len(crds) >= 7, "expected the 6 Kueue CRDs and JobSet's")
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    # The whole kustomization, as a user installs it.
    p = s.kubectl("apply", "-k", MANIFESTS)
    check("deployment.apps/cueue-controller" in p.stdout, p.stdout)
    files = [os.path.join(MANIFESTS, f) for f in (
        "namespace.yaml", "configmap.yaml", "service.yaml",
        "network_policy.yaml", "deployment.yaml", "visibility.yaml")] + \
        sorted(glob.glob(
            os.path.join(MANIFESTS, "rbac", "*.yaml"))) + crds
    n = check_all(s, files)
    check(n >= 15, "read back %d objects" % n)
    # Re-applying changes nothing.
    p = s.kubectl("apply", "-k", MANIFESTS)
    for line in p.stdout.splitlines():
        check(line.endswith(" unchanged"), "re-apply: %r" % line)
    # Discovery knows the Kueue kinds with Kueue's short names. No
    # controller serves the visibility APIServices here: as with any
    # aggregated API whose backend is down, kubectl reports that group
    # (and exits 1) but lists the rest.
    p = s.kubectl("api-resources", "--api-group=kueue.x-k8s.io",
                  "-o", "name", check=False)
    for line in p.stderr.splitlines():
        check("visibility.kueue.x-k8s.io/v1beta" in line and
              "the server is currently unable to handle the request" in
              line, "api-resources: %r" % line)
    for r in ("clusterqueues", "localqueues", "resourceflavors",
              "workloads", "workloadpriorityclasses", "cohorts"):
        check(r + ".kueue.x-k8s.io" in p.stdout, p.stdout)
    p = s.kubectl("get", "cq")
    eq(p.returncode, 0, "short name cq")


def schema_fields(node, path, out):
    """(path, schema) of every property under node, arrays' items and
    maps' values included (their fields under the same path)."""
    for k, v in (node.get("properties") or {}).items():
        p = path + "." + k if path else k
        out.append((p, v))
        schema_fields(v, p, out)
    for sub in ("items", "additionalProperties"):
        if isinstance(node.get(sub), dict):
            schema_fields(node[sub], path, out)


# Kueue's short names (config/components/crd/bases); MultiKueue's kinds
# have none.
SHORT_NAMES = {
    "admissionchecks": ["ac"], "clusterqueues": ["cq"], "cohorts": ["co"],
    "localqueues": ["queue", "queues", "lq"],
    "multikueueclusters": None, "multikueueconfigs": None,
    "provisioningrequestconfigs": ["prc"],
    "resourceflavors": ["flavor", "flavors", "rf"], "topologies": ["topo"],
    "workloadpriorityclasses": ["wpc"],
    "workloads": ["kwl", "kueueworkload", "kueueworkloads"]}


@case("manifests-crd-docs-and-short-names")
def crd_docs(s):
    """Every field of every served version says what it does (at least a
    sentence), names each enum value and, for a scalar default, says
    "default" and the value; Kueue's short names resolve."""
    bad = []
    crds = sorted(glob.glob(os.path.join(MANIFESTS, "crds",
                                         "kueue.x-k8s.io_*.yaml")))
    eq(len(crds), len(SHORT_NAMES), "Kueue CRDs")
    for f in crds:
        d = docs(f)[0]
        names = d["spec"]["names"]
        eq(names.get("shortNames"), SHORT_NAMES[names["plural"]],
           names["plural"] + " short names")
        for ver in d["spec"]["versions"]:
            top = ver["schema"]["openAPIV3Schema"]
            out = [("", top)]
            schema_fields(top, "", out)
            for path, v in out:
                where = "%s %s %s" % (names["kind"], ver["name"],
                                      path or "(kind)")
                desc = v.get("description", "")
                if path != "metadata" and len(desc) < 24:
                    bad.append("%s: description %r" % (where, desc))
                    continue
                for e in v.get("enum", []):
                    if str(e) not in desc:
                        bad.append("%s: enum value %s not described" %
                                   (where, e))
                dflt = v.get("default")
                if isinstance(dflt, (str, int)) and not isinstance(
                        dflt, bool) and (str(dflt) not in desc or
                                         "efault" not in desc):
                    bad.append("%s: default %r not said" % (where, dflt))
    check(not bad, "%d fields:\n  %s" % (len(bad), "\n  ".join(bad)))
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    # kubectl before 1.2x expands a short name from its discovery cache
    # (kept 10 minutes) without a refresh: list the kinds anew, as a
    # user of such a kubectl does after installing CRDs.
    s.kubectl("api-resources")
    for short in ("ac", "prc", "topo", "wpc", "kwl", "co", "rf", "lq"):
        p = s.kubectl("get", short, "-A", check=False)
        eq(p.returncode, 0, "kubectl get %s: %s" % (short, p.stderr))


@case("manifests-samples")
def samples(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    files = sorted(glob.glob(os.path.join(MANIFESTS, "samples", "*.yaml")))
    check(len(files) >= 2, "samples present")
    for f in files:
        s.kubectl("apply", "-f", f)
    n = check_all(s, files)
    check(n >= 5, "read back %d sample objects" % n)
    # Printer columns come from the CRDs (server-side Table output).
    # Admitted Workloads has priority 1, as in Kueue: shown with -o wide.
    p = s.kubectl("get", "clusterqueues", "-o", "wide")
    header = p.stdout.splitlines()[0]
    for col in ("COHORT", "STRATEGY", "PENDING", "ADMITTED"):
        check(col in header, "ClusterQueue columns: %r" % header)


@case("manifests-reject-invalid-cr")
def invalid(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    bad = s.file("bad-cq.yaml", """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: bad
spec:
  queueingStrategy: Sometimes
""")
    p = s.kubectl("apply", "-f", bad, check=False)
    check(p.returncode != 0, "invalid enum accepted")
    check("queueingStrategy" in p.stderr and "Unsupported value" in
          p.stderr, p.stderr)


run_cases()
