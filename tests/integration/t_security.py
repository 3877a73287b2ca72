# SPDX-License-Identifier: Apache-2.0
"""Security of the shipped controller (issue 8, part A).

- rbac-least-privilege: a full scenario with the real controller
  (leader election on, internalCertManagement on with the webhook
  configurations of manifests/webhooks, Jobs and a JobSet admitted and
  finished, a preemption, a Workload deleted, events, ClusterQueue and
  LocalQueue status). Every API call the controller made (its User-Agent
  is cueue-controller/...) is turned into (verb, group, resource,
  subresource, namespace) and must be allowed by a rule of
  manifests/rbac/cluster_role.yaml or, in cueue-system, role.yaml; every
  verb of every rule must have been used, or be on ALLOWED_UNUSED below
  with the reason.
- The same run at the most verbose log level (debug): the controller's log
  holds no bearer token, no PEM marker ("BEGIN", "PRIVATE KEY"), and no
  base64 of the Secret's keys (tls.key, ca.key), whole or in part.
- deployment-read-only-root: manifests/deployment.yaml runs non-root with
  a read-only root filesystem, no privilege escalation, no capabilities,
  RuntimeDefault seccomp, and mounts a volume at every path the controller
  writes (the ledger directory, /tmp, the certificate directory). Then the
  controller runs as an unprivileged user (uid 65534 when the test runs
  as root) with an unwritable HOME, TMPDIR and working directory, umask 0,
  and only the ledger and certificate directories writable: it works, it
  writes nothing anywhere else, and the ledger, its WAL and index are
  0600.

Webhook TLS refusing versions below 1.2 is tested in
t_controller_webhooks.py (webhook-server-f-h1-h3-tls-and-reload)."""
import base64
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import urllib.request

import yaml

from cuetest import (BIN, LOGS, TEST, Controller, Failure, case, check,
                     eq, free_port, reachable_copy, run_cases, wait_for,
                     _die_with_parent)
from cuetest.rbac import allowed, controller_calls
from cuetest.rbac import load_rules as rbac_rules

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
ADM = "/apis/admissionregistration.k8s.io/v1"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
NOBODY = 65534
SECRET = "/api/v1/namespaces/cueue-system/secrets/cueue-webhook-server-cert"

# Rule entries (group, resource[/subresource], verb) the scenario does not
# call, each with the reason it stays in the manifests.
ALLOWED_UNUSED = {
    # Never a request: the OwnerReferencesPermissionEnforcement admission
    # plugin requires update on <owner>/finalizers to create a Workload
    # whose ownerReference to the Job/JobSet has blockOwnerDeletion: true
    # (controller/workload.c).
    ("batch", "jobs/finalizers", "update"):
        "blockOwnerDeletion on Workloads owned by Jobs",
    ("jobset.x-k8s.io", "jobsets/finalizers", "update"):
        "blockOwnerDeletion on Workloads owned by JobSets",
}

# Rule entries the scenario reaches only on some runs (timing), each with
# the path that uses it; exempt from the "never used" check.
USED_BY_TIMING = {
    # Stopping a Job that had started clears status.startTime
    # (CTL_STOP_RESET_START); whether the preempted or deleted Job had
    # started when it was stopped depends on the simulator's tick.
    ("batch", "jobs/status", "patch"): "stopping a started Job",
    # waitForPodsReady: a job still short of ready pods a moment after its
    # admission gets its pods listed for the PodsReady cause (every run of
    # t_pods_ready; here only when a Job's status lags).
    ("", "pods", "list"): "the pods of a job that waits for them",
    # objectRetentionPolicies.workloads.afterDeactivatedByKueue
    # (t_retention): this scenario configures no retention.
    ("batch", "jobs", "delete"): "retention: the job of a deactivated "
        "Workload",
    # Workloads are deleted by retention (afterFinished) or, with
    # FinishOrphanedWorkloads off, when their job is gone (t_retention,
    # t_kueue_defaults); a replaced Workload only on some runs here.
    ("kueue.x-k8s.io", "workloads", "delete"): "retention, or a gone "
        "job's Workloads with FinishOrphanedWorkloads off",
    ("jobset.x-k8s.io", "jobsets", "delete"): "retention: the JobSet of a "
        "deactivated Workload",
    # Topology-aware scheduling (t_tas): only once a ResourceFlavor names
    # a Topology, which this scenario's flavors do not.
    ("", "pods", "watch"): "topology-aware scheduling: pod capacity",
    ("", "pods", "patch"): "topology-aware scheduling: the ungater",
    ("", "nodes", "list"): "topology-aware scheduling: node capacity",
    ("", "nodes", "watch"): "topology-aware scheduling: node capacity",
    ("kueue.x-k8s.io", "topologies", "list"):
        "topology-aware scheduling: levels",
    ("kueue.x-k8s.io", "topologies", "watch"):
        "topology-aware scheduling: levels",
}

# Rule entries of the ProvisioningRequest admission check controller: the
# scenario has no such check (tests/integration/t_provisioning.py uses
# them), only its informers' list and watch are reached here.
USED_BY_PROVISIONING = {
    ("kueue.x-k8s.io", "admissionchecks/status", "patch"),
    ("autoscaling.x-k8s.io", "provisioningrequests", "list"),
    ("autoscaling.x-k8s.io", "provisioningrequests", "watch"),
    ("autoscaling.x-k8s.io", "provisioningrequests", "create"),
    ("autoscaling.x-k8s.io", "provisioningrequests", "delete"),
    ("", "podtemplates", "create"),
    ("", "podtemplates", "patch"),
}

# The MultiKueue controller's writes on the manager (t_multikueue.py),
# and its reads of the worker kubeconfig Secrets.
USED_BY_MULTIKUEUE = {
    ("kueue.x-k8s.io", "multikueueclusters/status", "patch"),
    ("", "secrets", "get"),
}

# The frameworks beyond Job and JobSet (manifests/rbac/cluster_role.yaml):
# this scenario runs Jobs and a JobSet only. The framework suites
# (t_fw_*.py, t_controller_pods.py: run_cases(rbac=True)) check that every
# request of theirs is allowed by the shipped rules; their <kind>/finalizers
# update is never a request (blockOwnerDeletion, as jobs/finalizers).
FRAMEWORK_GROUPS = {"kubeflow.org", "ray.io", "workload.codeflare.dev",
                    "sparkoperator.k8s.io", "trainer.kubeflow.org",
                    "leaderworkerset.x-k8s.io"}


def used_by_frameworks(k):
    group, res, verb = k
    return group in FRAMEWORK_GROUPS or \
        (group == "apps" and res.startswith("statefulsets")) or \
        k == ("", "pods", "delete")


# The ResourceSlice informer starts with KueueDRAIntegration (on by
# default); a run whose controller stops before its first list does not
# use them (t_dra.py always does).
USED_BY_DRA = {
    ("resource.k8s.io", "resourceslices", "list"),
    ("resource.k8s.io", "resourceslices", "watch"),
}

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {pool: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: spot
      resources:
      - {name: cpu, nominalQuota: 4}
      - {name: memory, nominalQuota: 4Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
"""


def config(port, cert_dir, mport=None):
    """The shipped configuration (manifests/configmap.yaml) with this
    test's webhook address, certificate directory and no probe ports;
    metrics on 127.0.0.1:mport when given, else off."""
    with open(os.path.join(MANIFESTS, "configmap.yaml")) as f:
        cfg = yaml.safe_load(yaml.safe_load(f)["data"]["config.yaml"])
    cfg["health"] = {"healthProbeBindAddress": "0"}
    cfg["metrics"] = {"bindAddress": "127.0.0.1:%d" % mport if mport
                      else "0"}
    cfg["webhook"] = {"port": port, "host": "127.0.0.1",
                      "certDir": cert_dir}
    # The visibility server's fixed port would be shared by tests running
    # side by side (t_visibility covers it).
    cfg.setdefault("featureGates", {})["VisibilityOnDemand"] = False
    cfg["leaderElection"].update({"leaseDuration": "6s",
                                  "renewDeadline": "4s",
                                  "retryPeriod": "1s"})
    check(cfg["internalCertManagement"]["enable"] is True,
          "the shipped configuration manages its certificate")
    return yaml.safe_dump(cfg)


def install(s):
    """CRDs, namespaces, queues and the shipped webhook configurations
    (without caBundle: the controller injects it). Returns the port."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    for ns in ("team", "cueue-system"):
        s.namespace(ns)
    # The certificate Secret comes with the manifests (shipped empty):
    # the Role grants no create on Secrets.
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "webhook_secret.yaml"))
    s.kubectl("apply", "-f", s.file("queues.yaml", QUEUES))
    code, _, body = s.raw("POST", KQ + "/namespaces/team/localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "default", "namespace": "team"},
        "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)
    port = free_port()
    with open(os.path.join(MANIFESTS, "webhooks", "webhooks.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    for d in docs:
        for w in d["webhooks"]:
            w["clientConfig"]["service"]["port"] = port
        code, _, body = s.raw("POST", "%s/%ss" % (ADM, d["kind"].lower()),
                              d)
        eq(code, 201, "%s: %r" % (d["kind"], body))
    return port


def job(name, cpu, runtime_ms, prio=None):
    labels = {"kueue.x-k8s.io/queue-name": "default"}
    if prio:
        labels["kueue.x-k8s.io/priority-class"] = prio
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "team",
                         "labels": labels,
                         "annotations": {"cueue.dev/sim-runtime-ms":
                                         str(runtime_ms)}},
            "spec": {"parallelism": 1, "suspend": False, "template": {
                "spec": {"containers": [{
                    "name": "c", "image": "busybox",
                    "resources": {"requests": {"cpu": cpu,
                                               "memory": "100Mi"}}}],
                    "restartPolicy": "Never"}}}}


def jobset(name, runtime_ms):
    def rj(rname, cpu):
        return {"name": rname, "replicas": 1, "template": {"spec": {
            "template": {"metadata": {"annotations": {
                "cueue.dev/sim-runtime-ms": str(runtime_ms)}}, "spec": {
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {
                                    "cpu": cpu, "memory": "100Mi"}}}],
                "restartPolicy": "Never"}}}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": "team",
                         "labels": {"kueue.x-k8s.io/queue-name":
                                    "default"}},
            "spec": {"suspend": False, "replicatedJobs": [
                rj("workers", "1"), rj("driver", "1")]}}


JOBS = "/apis/batch/v1/namespaces/team/jobs"
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team/jobsets"
WLS = KQ + "/namespaces/team/workloads"


def create(s, path, obj):
    code, _, body = s.raw("POST", path, obj, timeout=15)
    eq(code, 201, "create %s: %r" % (obj["metadata"]["name"], body))


def job_state(s, name):
    j = s.get_json(JOBS + "/" + name)
    return j["spec"].get("suspend"), j.get("status", {})


def scenario(s, port, cert_dir):
    """Everything the controller does in a cluster. Returns the
    Controller (running)."""
    # Secure metrics, as shipped: one authorized scrape below makes the
    # controller's TokenReview and SubjectAccessReview part of the record.
    mport = free_port()
    ctl = Controller(s, config=config(port, cert_dir, mport),
                     args=["--metrics-secure"],
                     env={"POD_NAME": "cueue-controller-0"})

    def scraped():
        req = urllib.request.Request(
            "https://127.0.0.1:%d/metrics" % mport,
            headers={"Authorization": "Bearer " + s.token})
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.build_opener(
                    urllib.request.ProxyHandler({}),
                    urllib.request.HTTPSHandler(context=ctx)).open(
                        req, timeout=5) as r:
                return r.status == 200
        except OSError:
            return False
    wait_for(scraped, 20, what="an authorized scrape of secure metrics")

    def stored():
        code, _, body = s.raw("GET", SECRET)
        return code == 200 and body
    wait_for(stored, 20, what="certificate Secret")
    # Served with the minted certificate: creation through the webhook.
    wait_for(lambda: s.raw("POST", JOBS, job("first", "1", 500),
                           timeout=10)[0] == 201, 30,
             what="Job created through the webhook")
    create(s, JOBSETS, jobset("js", 800))
    wait_for(lambda: job_state(s, "first")[1].get("succeeded") == 1, 30,
             what="first Job admitted and finished")
    wait_for(lambda: any(c["type"] == "Completed" and c["status"] == "True"
                         for c in s.get_json(JOBSETS + "/js").get(
                             "status", {}).get("conditions", [])), 30,
             what="JobSet admitted and finished")
    # Preemption: a long low-priority Job, then a high-priority one.
    create(s, JOBS, job("low", "3", 600000, "low"))
    wait_for(lambda: job_state(s, "low")[0] is False, 20,
             what="low Job running")
    create(s, JOBS, job("high", "2", 800, "high"))
    wait_for(lambda: job_state(s, "low")[0] is True, 20,
             what="low Job preempted")
    wait_for(lambda: job_state(s, "high")[1].get("succeeded") == 1, 30,
             what="high Job finished")
    wait_for(lambda: job_state(s, "low")[0] is False, 30,
             what="low Job admitted again")
    # A Workload deleted under its running Job.
    wl = [w for w in s.get_json(WLS)["items"]
          if w["metadata"]["ownerReferences"][0]["name"] == "low"][0]
    code, _, body = s.raw("DELETE", WLS + "/" + wl["metadata"]["name"])
    check(code in (200, 202), "delete Workload: %r" % body)
    wait_for(lambda: any(
        w["metadata"]["ownerReferences"][0]["name"] == "low" and
        w["metadata"]["uid"] != wl["metadata"]["uid"] and
        any(c["type"] == "QuotaReserved" and c["status"] == "True"
            for c in w.get("status", {}).get("conditions", []))
        for w in s.get_json(WLS)["items"]), 30,
        what="low Job queued again under a new Workload and admitted")
    # The job deleted: its Workload is finished (FinishOrphanedWorkloads:
    # OwnerNotFound) and loses its finalizer.
    code, _, body = s.raw("DELETE", JOBS + "/low")
    check(code in (200, 202), "delete Job: %r" % body)
    wait_for(lambda: all(
        any(c["type"] == "Finished" and c["status"] == "True"
            for c in w.get("status", {}).get("conditions", [])) and
        not w["metadata"].get("finalizers")
        for w in s.get_json(WLS)["items"]
        if w["metadata"]["ownerReferences"][0]["name"] == "low"), 20,
        what="the deleted Job's Workload finished, no finalizer")
    # Queue status and events were written.
    wait_for(lambda: s.get_json(KQ + "/clusterqueues/cq").get(
        "status", {}).get("admittedWorkloads") == 0, 15,
        what="ClusterQueue status")
    wait_for(lambda: s.get_json(KQ + "/namespaces/team/localqueues/default")
             .get("status", {}).get("admittedWorkloads") == 0, 15,
             what="LocalQueue status")
    return ctl


# ---- access log -> RBAC attributes --------------------------------------

WEBHOOK_CONFIG_KINDS = {
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations"}


def shipped_webhook_configs():
    """{resource: name} of the configurations in manifests/webhooks."""
    with open(os.path.join(MANIFESTS, "webhooks", "webhooks.yaml")) as f:
        return {WEBHOOK_CONFIG_KINDS[d["kind"]]: d["metadata"]["name"]
                for d in yaml.safe_load_all(f) if d}


def check_webhook_config_rules(rules):
    """Every rule on admission webhook configurations names cueue's own
    configuration of that resource, and only it (resourceNames, one rule
    per resource): a token allowed to rewrite any webhook configuration
    can switch off or hijack admission for the whole cluster."""
    names = shipped_webhook_configs()
    for _, r in rules:
        hooks = [res for res in r["resources"]
                 if res.split("/")[0] in WEBHOOK_CONFIG_KINDS.values()]
        if not hooks:
            continue
        check("resourceNames" in r,
              "a rule on %s has no resourceNames: %r" % (hooks, r))
        check(len(hooks) == len(r["resources"]) == 1,
              "one webhook configuration resource per rule: %r" % r)
        res = hooks[0].split("/")[0]
        eq(r["resourceNames"], [names[res]],
           "resourceNames of the rule on %s" % res)
        # list and watch are restricted to requests with the field
        # selector metadata.name=<name> (the rbac test checks the
        # controller's requests carry it); create and deletecollection
        # cannot be restricted by name.
        check(not set(r["verbs"]) & {"create", "deletecollection"},
              "verbs that resourceNames cannot restrict: %r" % r)


def shipped_conversion_crds():
    """Names of the shipped CRDs with a conversion webhook."""
    out = []
    crds = os.path.join(MANIFESTS, "crds")
    for fname in sorted(os.listdir(crds)):
        with open(os.path.join(crds, fname)) as f:
            for d in yaml.safe_load_all(f):
                conv = (d or {}).get("spec", {}).get("conversion") or {}
                if conv.get("strategy") == "Webhook":
                    out.append(d["metadata"]["name"])
    return sorted(out)


def check_crd_rules(rules):
    """Rules on CustomResourceDefinitions (caBundle injection into the
    conversion webhook) name exactly cueue's CRDs that convert, with
    verbs resourceNames restricts: rewriting another CRD's conversion
    webhook would hand its objects to whoever serves it."""
    want = shipped_conversion_crds()
    check(len(want) == 11, "the eleven Kueue CRDs convert: %r" % want)
    for _, r in rules:
        if "customresourcedefinitions" not in r["resources"]:
            continue
        check(r["resources"] == ["customresourcedefinitions"],
              "CRDs alone in their rule: %r" % r)
        eq(sorted(r.get("resourceNames", [])), want,
           "resourceNames of the rule on CRDs")
        check(not set(r["verbs"]) & {"create", "deletecollection",
                                     "delete"},
              "verbs that resourceNames cannot restrict, or delete: %r" %
              r)


def load_rules():
    """The shipped rules (cuetest.rbac), webhook and CRD rules checked."""
    out = rbac_rules()
    check_webhook_config_rules(out)
    check_crd_rules(out)
    return out


@case("rbac-webhook-configurations-by-name", tls=False)
def rbac_webhook_names(s):
    """The shipped rules pass; the checker refuses a rule without
    resourceNames, with another name, or on both resources at once."""
    rules = load_rules()
    hooks = [r for _, r in rules
             if r["resources"][0] in WEBHOOK_CONFIG_KINDS.values()]
    eq(sorted(r["resources"][0] for r in hooks),
       sorted(WEBHOOK_CONFIG_KINDS.values()), "one rule per resource")
    base = {"apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations"],
            "verbs": ["get", "update"]}
    bad = [dict(base),
           dict(base, resourceNames=["someone-elses-webhook"]),
           dict(base, resources=sorted(WEBHOOK_CONFIG_KINDS.values()),
                resourceNames=sorted(shipped_webhook_configs().values()))]
    for r in bad:
        try:
            check_webhook_config_rules(rules + [(None, r)])
        except Failure:
            continue
        raise Failure("the RBAC check accepted %r" % r)
    crd = {"apiGroups": ["apiextensions.k8s.io"],
           "resources": ["customresourcedefinitions"],
           "verbs": ["get", "update"]}
    for r in [dict(crd), dict(crd, resourceNames=["jobsets.jobset.x-k8s.io"]),
              dict(crd, verbs=["create"],
                   resourceNames=shipped_conversion_crds())]:
        try:
            check_crd_rules(rules + [(None, r)])
        except Failure:
            continue
        raise Failure("the RBAC check accepted %r" % r)


@case("rbac-least-privilege-and-no-secrets-in-logs", simulate="jobs,jobsets")
def rbac(s):
    port = install(s)
    cert_dir = os.path.join(s.dir, "certs")
    os.mkdir(cert_dir)
    mark = s.log_mark()
    ctl = scenario(s, port, cert_dir)
    secrets = [s.get_json(SECRET)]
    ctl.stop()  # releases the Lease: its update is part of the record
    logs = [ctl.log]
    # A damaged Secret is replaced by the next start (the update path of
    # rotation, which a short run cannot otherwise reach).
    bad = secrets[0]
    bad["data"]["tls.crt"] = base64.b64encode(b"garbage").decode()
    code, _, body = s.raw("PUT", SECRET, bad)
    eq(code, 200, "damage the Secret: %r" % body)
    ctl = Controller(s, config=config(port, cert_dir),
                     env={"POD_NAME": "cueue-controller-1"})
    wait_for(lambda: s.get_json(SECRET)["data"]["tls.crt"] !=
             bad["data"]["tls.crt"], 20, what="Secret replaced")
    secrets.append(s.get_json(SECRET))
    ctl.stop()
    logs.append(ctl.log)
    calls = controller_calls(s, mark)
    check(calls, "the controller's requests are in the access log")
    check(any(a[:3] == ("create", "events.k8s.io", "events")
              for a in calls),
          "the controller recorded events")
    rules = load_rules()
    denied = sorted("%s %s" % (a[0], p) for a, p in calls.items()
                    if a[0] == "nonresource" or not allowed(rules, a))
    eq(denied, [], "calls no rule allows")
    used = set()
    for a in calls:
        for rns, r in allowed(rules, a):
            used.add((a[1], a[2] + ("/" + a[3] if a[3] else ""), a[0]))
    unused = []
    for rns, r in rules:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                for v in r["verbs"]:
                    k = (g, res, v)
                    if k not in used and k not in ALLOWED_UNUSED and \
                            k not in USED_BY_TIMING and \
                            k not in USED_BY_PROVISIONING and \
                            k not in USED_BY_MULTIKUEUE and \
                            k not in USED_BY_DRA and \
                            not used_by_frameworks(k):
                        unused.append("%s %s/%s%s" % (
                            v, g or "core", res,
                            " in " + rns if rns else ""))
    eq(sorted(set(unused)), [], "rule verbs never used")
    for k in ALLOWED_UNUSED:
        check(k not in used, "%r is used now: drop it from ALLOWED_UNUSED"
              % (k,))
    with open(logs[0], errors="replace") as f:
        check(" debug " in f.read(), "the log is at debug level")
    for log in logs:
        no_secrets_in_log(s, log, secrets)


def no_secrets_in_log(s, log, secrets):
    """Nothing secret in the controller's log, written at debug level."""
    with open(log, errors="replace") as f:
        text = f.read()
    needles = {"bearer token": s.token, "PEM marker BEGIN": "BEGIN",
               "PEM marker PRIVATE KEY": "PRIVATE KEY"}
    for n, sec in enumerate(secrets):
        for k in ("tls.key", "ca.key", "tls.crt", "ca.crt"):
            b64 = sec["data"].get(k)
            if not b64:
                continue
            needles["Secret#%d %s (base64)" % (n, k)] = b64
            if not k.endswith(".key"):
                continue
            pem = base64.b64decode(b64).decode()
            body = "".join(ln for ln in pem.splitlines()
                           if ln and not ln.startswith("-----"))
            # Any 24-character slice of the key, PEM body or Secret data.
            for src, what in ((body, "PEM body"), (b64, "data")):
                for i in range(0, max(1, len(src) - 24), 12):
                    needles["Secret#%d %s %s @%d" % (n, k, what, i)] = \
                        src[i:i + 24]
    found = sorted(k for k, v in needles.items() if v and v in text)
    eq(found, [], "secrets in %s" % log)


# ---- the NetworkPolicy --------------------------------------------------

@case("network-policy", tls=False)
def network_policy(s):
    """manifests/network_policy.yaml selects the controller pod, admits
    the webhook port from anywhere (the API server has no pod selector),
    the visibility port only from outside the pod network (the API
    server, not pods), its comment naming the metrics port it opens,
    metrics only from namespaces labelled metrics=enabled, and lists no
    rule for the health port (only the node's kubelet reaches it); it is
    part of the kustomization, and its named ports are the Deployment's
    and match the configuration."""
    with open(os.path.join(MANIFESTS, "network_policy.yaml")) as f:
        pol = yaml.safe_load(f)
    with open(os.path.join(MANIFESTS, "kustomization.yaml")) as f:
        check("network_policy.yaml" in yaml.safe_load(f)["resources"],
              "NetworkPolicy in the kustomization")
    d = deployment()
    eq(pol["kind"], "NetworkPolicy", "kind")
    eq(pol["metadata"]["namespace"], d["metadata"]["namespace"],
       "namespace")
    labels = d["spec"]["template"]["metadata"]["labels"]
    sel = pol["spec"]["podSelector"]["matchLabels"]
    check(sel and all(labels.get(k) == v for k, v in sel.items()),
          "podSelector %r matches the pod's labels %r" % (sel, labels))
    eq(pol["spec"]["policyTypes"], ["Ingress"], "policyTypes")
    ports = {p["name"]: p["containerPort"]
             for p in d["spec"]["template"]["spec"]["containers"][0]["ports"]}
    with open(os.path.join(MANIFESTS, "configmap.yaml")) as f:
        cfg = yaml.safe_load(yaml.safe_load(f)["data"]["config.yaml"])
    eq(ports.get("webhook"), cfg["webhook"]["port"], "webhook port")
    eq(":%d" % ports.get("metrics"), cfg["metrics"]["bindAddress"],
       "metrics port")
    eq(":%d" % ports.get("health"), cfg["health"]["healthProbeBindAddress"],
       "health port")
    opened = {}
    for rule in pol["spec"]["ingress"]:
        for p in rule["ports"]:
            check(p["port"] in ports, "named port %r" % p["port"])
            opened[p["port"]] = rule.get("from")
    eq(ports.get("visibility"), cfg.get("visibilityServer", {}).get(
        "bindPort", 8082), "visibility port")
    eq(sorted(opened), ["metrics", "visibility", "webhook"], "ports opened")
    eq(opened["webhook"], None, "webhook from anywhere")
    eq(opened["visibility"], [
        {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.244.0.0/16"]}},
        {"ipBlock": {"cidr": "::/0"}}],
       "visibility API only from outside the pod network (the API server)")
    with open(os.path.join(MANIFESTS, "network_policy.yaml")) as f:
        check("metrics (%d)" % ports["metrics"] in f.read(),
              "the comment names the metrics port %d" % ports["metrics"])
    eq(opened["metrics"], [{"namespaceSelector": {
        "matchLabels": {"metrics": "enabled"}}}], "metrics sources")


# ---- the Deployment -----------------------------------------------------

def deployment():
    with open(os.path.join(MANIFESTS, "deployment.yaml")) as f:
        return yaml.safe_load(f)


def shipped_cert_dir():
    with open(os.path.join(MANIFESTS, "configmap.yaml")) as f:
        cfg = yaml.safe_load(yaml.safe_load(f)["data"]["config.yaml"])
    return cfg.get("webhook", {}).get(
        "certDir", "/tmp/k8s-webhook-server/serving-certs")


def check_manifest():
    d = deployment()
    pod = d["spec"]["template"]["spec"]
    psc = pod.get("securityContext", {})
    eq(psc.get("runAsNonRoot"), True, "pod runAsNonRoot")
    check(psc.get("runAsUser", 0) != 0, "pod runAsUser not 0")
    eq(len(pod["containers"]), 1, "one container")
    c = pod["containers"][0]
    sc = c.get("securityContext", {})
    eq(sc.get("runAsNonRoot"), True, "container runAsNonRoot")
    eq(sc.get("readOnlyRootFilesystem"), True, "readOnlyRootFilesystem")
    eq(sc.get("allowPrivilegeEscalation"), False,
       "allowPrivilegeEscalation")
    eq(sc.get("privileged", False), False, "privileged")
    eq(sc.get("capabilities", {}).get("drop"), ["ALL"], "capabilities drop")
    eq(sc.get("capabilities", {}).get("add"), None, "capabilities add")
    eq((sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get(
        "type"), "RuntimeDefault", "seccompProfile")
    eq(pod.get("automountServiceAccountToken", True), True,
       "the service account token is how it authenticates")
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        eq(pod.get(k, False), False, k)
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    args = c["args"]
    store = args[args.index("--store") + 1]
    ledger_dir = os.path.dirname(store)
    # Every path the controller writes is a mounted volume.
    for path, kind in ((ledger_dir, "emptyDir"), ("/tmp", "emptyDir")):
        check(path in mounts, "%s is mounted" % path)
        m = mounts[path]
        check(kind in vols[m["name"]], "%s is an %s" % (path, kind))
        check(not m.get("readOnly"), "%s writable" % path)
    cert = shipped_cert_dir()
    check(cert in mounts, "certDir %s is mounted" % cert)
    m = mounts[cert]
    eq(vols[m["name"]].get("secret", {}).get("secretName"),
       "cueue-webhook-server-cert", "certDir is the Secret")
    eq(m.get("readOnly"), True, "the Secret mount is read-only")
    for p, m in mounts.items():
        if p not in (ledger_dir, "/tmp"):
            eq(m.get("readOnly"), True, "%s read-only" % p)
    return ledger_dir


def snapshot(roots):
    """{path: (mtime_ns, size)} of every file below roots."""
    out = {}
    for r in roots:
        for dp, dns, fns in os.walk(r):
            for n in dns + fns:
                p = os.path.join(dp, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[p] = (st.st_mtime_ns, st.st_size)
    return out


def owned_files(roots, uid):
    out = set()
    for r in roots:
        for dp, dns, fns in os.walk(r):
            for n in dns + fns:
                p = os.path.join(dp, n)
                try:
                    if os.lstat(p).st_uid == uid:
                        out.add(p)
                except OSError:
                    pass
    return out


@case("deployment-read-only-root", simulate="jobs")
def read_only_root(s):
    check_manifest()
    port = install(s)
    root = tempfile.mkdtemp(prefix="cueue-ro-")
    try:
        _read_only_run(s, port, root)
    finally:
        for dp, dns, _ in os.walk(root):
            os.chmod(dp, 0o700)
        shutil.rmtree(root, ignore_errors=True)


def _read_only_run(s, port, root):
    as_root = os.geteuid() == 0
    uid = NOBODY if as_root else os.geteuid()
    os.chmod(root, 0o755)
    home, tmp, cwd, etc = (os.path.join(root, n)
                           for n in ("home", "tmp", "cwd", "etc"))
    ledger_dir = os.path.join(root, "var-lib-cueue")
    cert_dir = os.path.join(root, "serving-certs")
    for d in (home, tmp, cwd, etc, ledger_dir, cert_dir,
              os.path.join(root, "bin")):
        os.mkdir(d)
    # The build tree may be out of this user's reach (a clone under
    # /root): run a copy in the read-only root.
    exe = reachable_copy(os.path.join(root, "bin")) if as_root else \
        os.path.join(BIN, "cueue-controller")
    for d in (ledger_dir, cert_dir):  # the mounted, writable volumes
        os.chmod(d, 0o700)
        if as_root:
            os.chown(d, uid, uid)
    cfg = os.path.join(etc, "config.yaml")
    with open(cfg, "w") as f:
        f.write(config(port, cert_dir))
    kc = os.path.join(etc, "kubeconfig")
    shutil.copy(s.kubeconfig, kc)
    for p in (cfg, kc):
        os.chmod(p, 0o644)
    for d in (home, tmp, cwd, etc, os.path.join(root, "bin")):
        os.chmod(d, 0o555)  # the read-only root filesystem
    # The world-writable places an unprivileged process could still use.
    shared = [p for p in ("/tmp", "/var/tmp", "/dev/shm")
              if os.path.isdir(p)]
    before_owned = owned_files(shared, uid) if as_root else set()
    before = snapshot([root])
    log = os.path.join(LOGS, "%s.ro.stderr" % TEST)
    env = {k: v for k, v in os.environ.items()
           if k in ("PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                    "LSAN_OPTIONS")}
    env.update({"HOME": home, "TMPDIR": tmp, "POD_NAME": "ro-0"})

    def pre():
        _die_with_parent()
        os.umask(0)
        if as_root:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
    with open(log, "w") as errf:
        p = subprocess.Popen(
            [exe, "--config", cfg,
             "--kubeconfig", kc, "--log-level", "debug", "--store",
             os.path.join(ledger_dir, "ledger.db")],
            stdout=errf, stderr=subprocess.STDOUT, cwd=cwd, env=env,
            preexec_fn=pre)
        try:
            wait_for(lambda: s.raw("POST", JOBS, job("ro", "1", 300),
                                   timeout=10)[0] == 201 or
                     p.poll() is not None, 30,
                     what="Job created through the webhook")
            check(p.poll() is None, "controller running, see %s" % log)
            wait_for(lambda: job_state(s, "ro")[1].get("succeeded") == 1,
                     30, what="Job admitted and finished")
            modes = {}
            for n in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
                fp = os.path.join(ledger_dir, n)
                check(os.path.exists(fp), "%s exists" % n)
                modes[n] = oct(os.stat(fp).st_mode & 0o777)
            eq(modes, {n: "0o600" for n in modes},
               "ledger files under umask 0")
            key = os.path.join(cert_dir, "tls.key")
            check(os.path.exists(key), "the minted key is in certDir")
            eq(oct(os.stat(key).st_mode & 0o077), "0o0",
               "group/other bits of %s under umask 0" % key)
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    raise Failure("controller did not stop on SIGTERM")
    eq(p.returncode, 0, "exit status, see %s" % log)
    with open(log, errors="replace") as f:
        refused = [ln for ln in f if "Permission denied" in ln or
                   "Read-only file system" in ln]
    eq(refused, [], "writes attempted outside the writable directories")
    no_secrets_in_log(s, log, [s.get_json(SECRET)])
    after = snapshot([root])
    changed = sorted(
        q for q in set(after) | set(before)
        if after.get(q) != before.get(q) and
        not q.startswith(ledger_dir + "/") and
        not q.startswith(cert_dir + "/") and q not in (ledger_dir, cert_dir))
    eq(changed, [], "written outside the ledger and certificate dirs")
    if as_root:
        new = sorted(owned_files(shared, uid) - before_owned -
                     {q for q in after})
        eq(new, [], "files the controller's user left in %s" % shared)


run_cases()
