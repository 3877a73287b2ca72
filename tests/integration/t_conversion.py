# SPDX-License-Identifier: Apache-2.0
"""kueue.x-k8s.io/v1beta1 served through the conversion webhook (issue 19).

The shipped Kueue CRDs (manifests/crds: v1beta1 and v1beta2 served,
v1beta2 stored, conversion.strategy Webhook at the controller's /convert)
are installed with the conversion Service port pointed at a real
cueue-controller running the shipped configuration (internalCertManagement
on: it mints the certificate and injects its CA into the CRDs' caBundle).
cueue-apiserver calls the webhook as kube-apiserver does.

- v1beta1-examples-both-ways: Kueue-style v1beta1 manifests (a
  ResourceFlavor, a ClusterQueue with spec.cohort, one with the
  admissionChecks list and the deprecated Borrow/Preempt values, a
  LocalQueue, a WorkloadPriorityClass, a Cohort) apply unchanged with
  kubectl, re-apply as unchanged, and read back in v1beta1 as written
  and in v1beta2 converted (cohortName, admissionChecksStrategy,
  MayStopSearch); an object created in v1beta2 reads back in v1beta1;
  `kubectl get clusterqueues.v1beta1.kueue.x-k8s.io` and `.v1beta2.`
  both list them (table and JSON); a merge patch and a PUT in v1beta1
  land in the stored v1beta2 object; a v1beta1 watch sees ADDED and
  MODIFIED events in v1beta1 shape.
- v1beta1-admission-checks: the v1beta1 shapes of Kueue's provisioning
  and admission-check examples (tests/integration/data/v1beta1-*.yaml)
  apply unchanged, re-apply as unchanged and read back in v1beta1 as
  written and in v1beta2; AdmissionCheck's deprecated retryDelayMinutes
  is accepted in v1beta1 and dropped in the stored v1beta2 object, as
  Kueue does; AdmissionChecks and ProvisioningRequestConfigs created in
  v1beta2 read back in v1beta1, and `kubectl get` lists both kinds in
  both versions.
- webhook-untrusted: a caBundle of another CA makes v1beta1 reads a 500
  with Go's x509 wording; the right one restores them.
- webhook-down: with the controller stopped, v1beta2 reads and writes
  still work; a v1beta1 GET, list, create and `kubectl get` fail with
  500 and kube's message ("conversion webhook for
  kueue.x-k8s.io/v1beta2, Kind=ClusterQueue failed: Post ...: connect:
  connection refused"), and a v1beta1 watch ends with an ERROR event
  carrying that Status when the next change cannot be converted.
"""
import base64
import os

import yaml

from cuetest import (Controller, case, check, data, eq, free_port,
                     mint_certs, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
V1 = "/apis/kueue.x-k8s.io/v1beta1"
V2 = "/apis/kueue.x-k8s.io/v1beta2"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"

# Written for this test in the v1beta1 form of Kueue's documentation
# examples before the move to v1beta2.
EXAMPLES = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-cq
spec:
  namespaceSelector: {}
  cohort: team-ab
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
        borrowingLimit: 3
      - name: memory
        nominalQuota: 36Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: legacy-cq
spec:
  namespaceSelector: {}
  admissionChecks:
  - prov-check
  flavorFungibility:
    whenCanBorrow: Borrow
    whenCanPreempt: Preempt
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: default
  name: user-queue
spec:
  clusterQueue: team-a-cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: sample-priority
value: 10000
description: "Sample priority"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata:
  name: team-ab
spec:
  parentName: org
"""


def config(port, cert_dir):
    """The shipped configuration with this test's webhook address and
    certificate directory, short leader election, no probe ports."""
    with open(os.path.join(MANIFESTS, "configmap.yaml")) as f:
        cfg = yaml.safe_load(yaml.safe_load(f)["data"]["config.yaml"])
    cfg["health"] = {"healthProbeBindAddress": "0"}
    cfg["metrics"] = {"bindAddress": "0"}
    cfg["webhook"] = {"port": port, "host": "127.0.0.1",
                      "certDir": cert_dir}
    cfg["leaderElection"].update({"leaseDuration": "6s",
                                  "renewDeadline": "4s",
                                  "retryPeriod": "1s"})
    return yaml.safe_dump(cfg)


def install(s):
    """The shipped Kueue CRDs with the conversion Service port of this
    test's controller, and the controller. Returns (Controller, port)."""
    port = free_port()
    docs = []
    crds = os.path.join(MANIFESTS, "crds")
    for fname in sorted(os.listdir(crds)):
        with open(os.path.join(crds, fname)) as f:
            d = yaml.safe_load(f)
        conv = d["spec"].get("conversion") or {}
        if conv.get("strategy") != "Webhook":
            # JobSet (the controller's informers need it) and the Kueue
            # kinds still served in v1beta2 only.
            s.kubectl("apply", "-f", os.path.join(crds, fname))
            continue
        eq([v["name"] for v in d["spec"]["versions"]],
           ["v1beta2", "v1beta1"], fname + " versions")
        conv["webhook"]["clientConfig"]["service"]["port"] = port
        docs.append(d)
    s.kubectl("apply", "-f", s.file("crds.yaml",
                                    yaml.safe_dump_all(docs)))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("cueue-system")
    cert_dir = os.path.join(s.dir, "certs")
    os.mkdir(cert_dir)
    ctl = Controller(s, config=config(port, cert_dir),
                     env={"POD_NAME": "cueue-controller-0"})

    def injected():
        for d in docs:
            cc = s.get_json(CRD + d["metadata"]["name"])["spec"][
                "conversion"]["webhook"]["clientConfig"]
            if not cc.get("caBundle"):
                return False
        return b"BEGIN CERTIFICATE" in base64.b64decode(cc["caBundle"])
    wait_for(injected, 30, what="caBundle injected into the eleven CRDs")
    # Serving: the webhook server picks the minted pair up on its
    # reload period.
    probe = {"apiVersion": "kueue.x-k8s.io/v1beta1",
             "kind": "ResourceFlavor", "metadata": {"name": "probe"}}
    wait_for(lambda: s.raw("POST", V1 + "/resourceflavors", probe)[0] ==
             201, 40, what="a v1beta1 create through the webhook")
    code, _, body = s.raw("DELETE", V1 + "/resourceflavors/probe")
    check(code in (200, 202), "delete the probe: %r" % body)
    return ctl, port


def spec_of(s, path):
    return s.get_json(path).get("spec", {})


@case("v1beta1-examples-both-ways", tls=True)
def examples(s):
    ctl, _ = install(s)
    path = s.file("v1beta1-examples.yaml", EXAMPLES)
    out = s.kubectl("apply", "-f", path).stdout
    check("clusterqueue.kueue.x-k8s.io/team-a-cq created" in out, out)
    out = s.kubectl("apply", "-f", path).stdout
    # legacy-cq reads back with admissionChecksStrategy and MayStopSearch
    # (Kueue's one-way mapping), so kubectl re-patches it; the rest are
    # as written.
    check(out.count("unchanged") == 5 and
          "clusterqueue.kueue.x-k8s.io/legacy-cq configured" in out,
          "re-apply: %s" % out)
    # Stored and read in v1beta2: converted as Kueue converts.
    cq = s.get_json(V2 + "/clusterqueues/team-a-cq")
    eq(cq["apiVersion"], "kueue.x-k8s.io/v1beta2", "apiVersion")
    eq(cq["spec"].get("cohortName"), "team-ab", "v1beta2 cohortName")
    check("cohort" not in cq["spec"], "no cohort in v1beta2: %r" % cq)
    legacy = spec_of(s, V2 + "/clusterqueues/legacy-cq")
    eq(legacy.get("admissionChecksStrategy"),
       {"admissionChecks": [{"name": "prov-check"}]}, "strategy")
    eq(legacy["flavorFungibility"],
       {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"},
       "deprecated values")
    eq(spec_of(s, V2 + "/cohorts/team-ab").get("parentName"), "org",
       "Cohort")
    eq(s.get_json(V2 + "/workloadpriorityclasses/sample-priority")["value"],
       10000, "WorkloadPriorityClass")
    eq(spec_of(s, V2 + "/namespaces/default/localqueues/user-queue").get(
        "clusterQueue"), "team-a-cq", "LocalQueue")
    # Read back in v1beta1 as written.
    cq1 = s.get_json(V1 + "/clusterqueues/team-a-cq")
    eq(cq1["apiVersion"], "kueue.x-k8s.io/v1beta1", "v1beta1 apiVersion")
    eq(cq1["spec"].get("cohort"), "team-ab", "v1beta1 cohort")
    check("cohortName" not in cq1["spec"], "no cohortName: %r" % cq1)
    eq(cq1["metadata"]["uid"], cq["metadata"]["uid"], "same object")
    eq(cq1["metadata"]["resourceVersion"], cq["metadata"]["resourceVersion"],
       "same resourceVersion")
    # Created in v1beta2, read in v1beta1.
    code, _, body = s.raw("POST", V2 + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "new-cq"},
        "spec": {"cohortName": "team-ab", "namespaceSelector": {},
                 "resourceGroups": []}})
    eq(code, 201, "create v1beta2: %r" % body)
    eq(spec_of(s, V1 + "/clusterqueues/new-cq").get("cohort"), "team-ab",
       "v1beta2-created read in v1beta1")
    # kubectl get in both versions (table and JSON).
    for v, field in (("v1beta1", "cohort"), ("v1beta2", "cohortName")):
        out = s.kubectl("get", "clusterqueues.%s.kueue.x-k8s.io" % v).stdout
        check("team-a-cq" in out and "team-ab" in out,
              "kubectl get %s table: %s" % (v, out))
        lst = yaml.safe_load(s.kubectl(
            "get", "clusterqueues.%s.kueue.x-k8s.io" % v, "-o",
            "json").stdout)
        got = {i["metadata"]["name"]: i["spec"].get(field)
               for i in lst["items"]}
        eq(got.get("team-a-cq"), "team-ab", "kubectl get %s -o json" % v)
        check(all(i["apiVersion"] == "kueue.x-k8s.io/" + v
                  for i in lst["items"]), "items in %s" % v)
    # A v1beta1 watch: ADDED in v1beta1 shape, then MODIFIED.
    st = s.stream(V1 + "/clusterqueues?watch=1&fieldSelector=" +
                  "metadata.name%3Dteam-a-cq")
    ev = st.wait_lines(1)
    eq(ev[0]["type"], "ADDED", "first watch event")
    eq(ev[0]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta1",
       "watch apiVersion")
    eq(ev[0]["object"]["spec"].get("cohort"), "team-ab", "watch cohort")
    # A merge patch in v1beta1 lands in v1beta2's cohortName.
    s.kubectl("patch", "clusterqueues.v1beta1.kueue.x-k8s.io", "team-a-cq",
              "--type", "merge", "-p", '{"spec":{"cohort":"team-xy"}}')
    eq(spec_of(s, V2 + "/clusterqueues/team-a-cq").get("cohortName"),
       "team-xy", "merge patch in v1beta1")
    # (The controller may modify the queue too: its finalizer, status.)
    wait_for(lambda: any(e["type"] == "MODIFIED" and
                         e["object"]["spec"].get("cohort") == "team-xy"
                         for e in st.events()), 15,
             what="MODIFIED in v1beta1 shape")
    check(all(e["object"]["apiVersion"] == "kueue.x-k8s.io/v1beta1"
              for e in st.events()), "every event in v1beta1")
    st.close()
    # A wrong type is the v1beta1 schema's 422, before any conversion.
    code, _, body = s.raw("POST", V1 + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
        "metadata": {"name": "bad"}, "spec": {"cohort": 5}})
    eq(code, 422, "wrong type in v1beta1: %r" % body)
    check("spec.cohort" in body.get("message", ""), "names the field: %r"
          % body)
    # A PUT in v1beta1 (read-modify-write).
    cq1 = s.get_json(V1 + "/clusterqueues/team-a-cq")
    cq1["spec"]["cohort"] = "team-ab"
    code, _, body = s.raw("PUT", V1 + "/clusterqueues/team-a-cq", cq1)
    eq(code, 200, "PUT v1beta1: %r" % body)
    eq(body["apiVersion"], "kueue.x-k8s.io/v1beta1", "PUT answer version")
    eq(spec_of(s, V2 + "/clusterqueues/team-a-cq").get("cohortName"),
       "team-ab", "PUT in v1beta1")
    ctl.stop()


def written_part(got, want):
    """got reduced to the keys want sets (recursively into objects), so
    that schema defaults and server-set fields do not count."""
    if isinstance(want, dict) and isinstance(got, dict):
        return {k: written_part(got.get(k), v) for k, v in want.items()}
    if isinstance(want, list) and isinstance(got, list) and \
            len(want) == len(got):
        return [written_part(g, w) for g, w in zip(got, want)]
    return got


@case("v1beta1-admission-checks", tls=True)
def admission_checks(s):
    ctl, _ = install(s)
    files = [data("v1beta1-provisioning-setup.yaml"),
             data("v1beta1-sample-admission-check.yaml")]
    written = []
    for path in files:
        with open(path) as f:
            written += [d for d in yaml.safe_load_all(f) if d]
        out = s.kubectl("apply", "-f", path).stdout
        check(out.count(" created") == out.count("\n"),
              "created: %s" % out)
    for path in files:
        out = s.kubectl("apply", "-f", path).stdout
        check(out.count(" unchanged") == out.count("\n"),
              "re-applied unchanged: %s" % out)
    plural = {"ResourceFlavor": "resourceflavors",
              "ClusterQueue": "clusterqueues", "LocalQueue": "localqueues",
              "AdmissionCheck": "admissionchecks",
              "ProvisioningRequestConfig": "provisioningrequestconfigs"}
    for d in written:
        name = d["metadata"]["name"]
        ns = d["metadata"].get("namespace")
        rel = ("/namespaces/%s/" % ns if ns else "/") + \
            plural[d["kind"]] + "/" + name
        # Read back in v1beta1 as written (schema defaults aside), and in
        # v1beta2 with the same fields: these kinds' specs do not differ
        # for what the examples set.
        want = {"apiVersion": d["apiVersion"], "kind": d["kind"],
                "metadata": {"name": name}, "spec": d.get("spec")}
        eq(written_part(s.get_json(V1 + rel), want), want,
           "v1beta1 read of %s" % rel)
        want["apiVersion"] = "kueue.x-k8s.io/v1beta2"
        eq(written_part(s.get_json(V2 + rel), want), want,
           "v1beta2 read of %s" % rel)
    cq = spec_of(s, V2 + "/clusterqueues/prov-cq")
    eq(cq.get("admissionChecksStrategy"),
       {"admissionChecks": [{"name": "prov-check",
                             "onFlavors": ["prov-flavor"]}]}, "strategy")
    # The deprecated retryDelayMinutes: accepted, dropped going up.
    code, _, body = s.raw("POST", V1 + "/admissionchecks", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "AdmissionCheck",
        "metadata": {"name": "legacy-check"},
        "spec": {"controllerName": "example.com/approver",
                 "retryDelayMinutes": 5}})
    eq(code, 201, "create with retryDelayMinutes: %r" % body)
    ac = s.get_json(V2 + "/admissionchecks/legacy-check")
    eq(ac["spec"], {"controllerName": "example.com/approver"},
       "v1beta2 has no retryDelayMinutes")
    check(not ac["metadata"].get("annotations"),
          "no annotation keeps it: %r" % ac["metadata"])
    eq(spec_of(s, V1 + "/admissionchecks/legacy-check").get(
        "controllerName"), "example.com/approver", "v1beta1 read")
    # Created in v1beta2, read in v1beta1.
    code, _, body = s.raw("POST", V2 + "/provisioningrequestconfigs", {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": "v2-config"},
        "spec": {"provisioningClassName": "queued-provisioning.gke.io",
                 "podSetMergePolicy": "IdenticalPodTemplates"}})
    eq(code, 201, "create v1beta2: %r" % body)
    prc = s.get_json(V1 + "/provisioningrequestconfigs/v2-config")
    eq((prc["apiVersion"], prc["spec"]["podSetMergePolicy"]),
       ("kueue.x-k8s.io/v1beta1", "IdenticalPodTemplates"),
       "v1beta2-created read in v1beta1")
    for v in ("v1beta1", "v1beta2"):
        for res, names in (("admissionchecks",
                            ("prov-check", "v1-check", "legacy-check")),
                           ("provisioningrequestconfigs",
                            ("prov-config", "v1-check-config",
                             "v2-config"))):
            lst = yaml.safe_load(s.kubectl(
                "get", "%s.%s.kueue.x-k8s.io" % (res, v), "-o",
                "json").stdout)
            eq(sorted(i["metadata"]["name"] for i in lst["items"]),
               sorted(names), "kubectl get %s.%s" % (res, v))
            check(all(i["apiVersion"] == "kueue.x-k8s.io/" + v
                      for i in lst["items"]), "items in %s" % v)
    ctl.stop()


@case("webhook-untrusted", tls=True)
def webhook_untrusted(s):
    ctl, port = install(s)
    s.kubectl("apply", "-f", s.file("v1beta1-examples.yaml", EXAMPLES))
    path = CRD + "clusterqueues.kueue.x-k8s.io"
    good = s.get_json(path)
    other = os.path.join(s.dir, "other-ca")
    os.mkdir(other)
    mint_certs(other, "DNS:elsewhere")
    with open(os.path.join(other, "ca.crt"), "rb") as f:
        bad_ca = base64.b64encode(f.read()).decode()

    def set_ca(ca):
        code, _, body = s.raw(
            "PATCH", path,
            [{"op": "replace", "path": "/spec/conversion/webhook/"
              "clientConfig/caBundle", "value": ca}],
            headers={"Content-Type": "application/json-patch+json"})
        eq(code, 200, "set caBundle: %r" % body)
    set_ca(bad_ca)
    code, _, body = s.raw("GET", V1 + "/clusterqueues/team-a-cq")
    eq(code, 500, "untrusted webhook: %r" % body)
    eq(body.get("message"),
       'conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueue '
       'failed: Post "https://cueue-webhook-service.cueue-system.svc:%d/'
       'convert?timeout=30s": tls: failed to verify certificate: x509: '
       'certificate signed by unknown authority' % port, "kube's message")
    set_ca(good["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"])
    eq(spec_of(s, V1 + "/clusterqueues/team-a-cq").get("cohort"), "team-ab",
       "trusted again")
    ctl.stop()


@case("webhook-down", tls=True)
def webhook_down(s):
    ctl, port = install(s)
    s.kubectl("apply", "-f", s.file("v1beta1-examples.yaml", EXAMPLES))
    st = s.stream(V1 + "/clusterqueues?watch=1&fieldSelector=" +
                  "metadata.name%3Dteam-a-cq")
    st.wait_lines(1)
    ctl.stop()
    want = ('conversion webhook for kueue.x-k8s.io/v1beta2, '
            'Kind=ClusterQueue failed: Post "https://cueue-webhook-service.'
            'cueue-system.svc:%d/convert?timeout=30s": dial tcp '
            '127.0.0.1:%d: connect: connection refused' % (port, port))
    # v1beta2 is not converted: it keeps working.
    eq(spec_of(s, V2 + "/clusterqueues/team-a-cq").get("cohortName"),
       "team-ab", "v1beta2 read while the webhook is down")
    code, _, body = s.raw("GET", V1 + "/clusterqueues/team-a-cq")
    eq(code, 500, "v1beta1 GET: %r" % body)
    eq(body.get("message"), want, "kube's message")
    eq(body.get("kind"), "Status", "a Status")
    check("reason" not in body or body["reason"] == "",
          "no reason, as kube: %r" % body)
    code, _, body = s.raw("GET", V1 + "/clusterqueues")
    eq((code, body.get("message")), (500, want), "v1beta1 list")
    code, _, body = s.raw("POST", V1 + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
        "metadata": {"name": "refused"}, "spec": {"cohort": "x"}})
    eq(code, 500, "v1beta1 create: %r" % body)
    eq(body.get("message"), want.replace("v1beta2", "v1beta1", 1),
       "create converts from v1beta1")
    check(s.raw("GET", V2 + "/clusterqueues/refused")[0] == 404,
          "nothing stored")
    p = s.kubectl("get", "clusterqueues.v1beta1.kueue.x-k8s.io",
                  "team-a-cq", check=False)
    out = p.stdout + p.stderr
    check(p.returncode != 0 and "Error from server: " + want in out,
          "kubectl's error is kube's: %s" % out)
    # The open v1beta1 watch: the next change cannot be converted.
    code, _, body = s.raw("PATCH", V2 + "/clusterqueues/team-a-cq",
                          {"spec": {"cohortName": "later"}},
                          headers={"Content-Type":
                                   "application/merge-patch+json"})
    eq(code, 200, "v1beta2 patch while the webhook is down: %r" % body)
    ev = st.wait_end()
    eq(ev[-1]["type"], "ERROR", "the watch ends with an ERROR event")
    eq((ev[-1]["object"]["code"], ev[-1]["object"]["message"]), (500, want),
       "its Status")
    st.close()


run_cases()
