# SPDX-License-Identifier: Apache-2.0
"""Kueue's manager flags (cmd/kueue) on cueue-controller, with Kueue's
meaning, so that a Kueue Deployment with only its image swapped starts.

- kueue-deployment-args: Kueue's Deployment arguments exactly
  (--config=FILE --zap-log-level=2, the API server from KUBECONFIG as the
  in-cluster account would give it) on a Kueue-style Configuration: the
  controller becomes ready and admits a Workload; level 2 logs at info
  (no debug lines).
- helm-and-zap-flags: the Helm chart's --feature-gates and every zap flag
  (-zap-devel=false: JSON lines, Go's single-dash spelling,
  --zap-stacktrace-level, --zap-time-encoding) are accepted;
  --check-config shows the flag's gates as featureGates.
- no-config-means-defaults: without --config, Kueue's defaults.
- refused-with-what-to-do: an unknown flag exits 2 naming the accepted
  ones; --feature-gates with featureGates in the file, a bad gate value
  and an unknown gate exit 1 naming the gate."""
import json
import os
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request

import yaml

from cuetest import (case, check, controller_config, eq, flavor_and_queue,
                     run_cases, wait_for, without_visibility)
from cuetest.env import BIN, LOGS, TEST
from cuetest.procs import _die_with_parent, free_port, stop_process

CTL = os.path.join(BIN, "cueue-controller")
KQ = "/apis/kueue.x-k8s.io/v1beta2"


def ctl(*args, config=None):
    """cueue-controller args (--check-config runs), with config text in a
    file whose path replaces CONFIG in args."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(config or "")
        f.flush()
        argv = [CTL] + [a.replace("CONFIG", f.name) for a in args]
        return subprocess.run(argv, capture_output=True, text=True,
                              timeout=30)


def http_status(port, path):
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open("http://127.0.0.1:%d%s" % (port, path),
                         timeout=5) as r:
            return r.status
    except (urllib.error.URLError, OSError) as e:
        return getattr(e, "code", 0)


@case("kueue-deployment-args")
def deployment_args(s):
    s.kubectl("apply", "-f", os.path.join(
        os.path.dirname(__file__), "..", "..", "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("q.yaml", flavor_and_queue(4) + (
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: lq, namespace: default}\n"
        "spec: {clusterQueue: cq}\n")))
    hport = free_port()
    # Kueue's ConfigMap shape (v1beta1, as Kueue's releases ship it),
    # endpoints on loopback for this test.
    cfg = s.file("controller_manager_config.yaml", (
        "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
        "kind: Configuration\n"
        "health:\n  healthProbeBindAddress: 127.0.0.1:%d\n"
        "metrics:\n  bindAddress: \"0\"\n"
        "webhook:\n  port: %d\n  host: 127.0.0.1\n"
        "leaderElection:\n  leaderElect: false\n"
        "internalCertManagement:\n  enable: false\n"
        "integrations:\n  frameworks:\n  - batch/job\n"
        "featureGates:\n  VisibilityOnDemand: false\n") % (hport,
                                                           free_port()))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KUBERNETES_SERVICE")}
    env.update({"KUBECONFIG": s.kubeconfig, "HOME": tempfile.mkdtemp()})
    log = os.path.join(LOGS, "%s.kueue-args.stderr" % TEST)
    with open(log, "w") as errf:
        proc = subprocess.Popen(
            [CTL, "--config=" + cfg, "--zap-log-level=2",
             "--metrics-secure=false"],
            stdout=errf, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent)
        try:
            wait_for(lambda: http_status(hport, "/readyz") == 200, 30,
                     what="ready with Kueue's arguments (log %s)" % log)
            s.kubectl("create", "-f", s.file("wl.yaml", yaml.safe_dump({
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": "w", "namespace": "default"},
                "spec": {"queueName": "lq", "podSets": [{
                    "name": "main", "count": 1, "template": {"spec": {
                        "restartPolicy": "Never", "containers": [{
                            "name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}}}]}
            })))

            def admitted():
                st = s.get_json(KQ + "/namespaces/default/workloads/w").get(
                    "status", {})
                return any(c["type"] == "QuotaReserved" and
                           c["status"] == "True"
                           for c in st.get("conditions", []))
            wait_for(admitted, 20, what="the Workload admitted")
        finally:
            stop_process(proc, "cueue-controller", signal.SIGTERM)
    with open(log) as f:
        lines = f.read().splitlines()
    check(any(" info " in ln for ln in lines), "info lines: %r" % lines[:5])
    eq([ln for ln in lines if " debug " in ln], [],
       "--zap-log-level=2 logs at info")


@case("helm-and-zap-flags")
def helm_flags(s):
    p = ctl("--config=CONFIG", "--zap-log-level=debug",
            "--feature-gates=TopologyAwareScheduling=true,"
            "PartialAdmission=false", "-zap-devel=false",
            "--zap-stacktrace-level", "error",
            "--zap-time-encoding=iso8601", "--check-config",
            config="apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                   "kind: Configuration\n")
    eq(p.returncode, 0, "exit status: %s" % p.stderr)
    # The flag's gates are the configuration's: PartialAdmission=false is
    # one cueue announces it does not act on.
    check("featureGates[PartialAdmission]: not acted on" in p.stderr,
          "the flag's gates reach the configuration: %r" % p.stderr)
    # -zap-devel=false: production lines (JSON), as Kueue's default.
    proc = subprocess.run([CTL, "--zap-devel=false", "--zap-encoder=json",
                           "--kubeconfig=/nonexistent/kubeconfig"],
                          capture_output=True, text=True, timeout=30)
    check(proc.returncode != 0, "no API server: exit %d" % proc.returncode)
    first = proc.stderr.splitlines()[0]
    check(json.loads(first).get("level"), "JSON log line: %r" % first)


@case("no-config-means-defaults")
def no_config(s):
    p = subprocess.run([CTL, "--check-config"], capture_output=True,
                       text=True, timeout=30)
    eq(p.returncode, 0, "exit status: %s" % p.stderr)
    cfg = yaml.safe_load(p.stdout)
    eq(cfg.get("namespace"), "kueue-system", "Kueue's default namespace")
    eq(cfg.get("webhook", {}).get("port"), 9443, "Kueue's webhook port")


@case("refused-with-what-to-do")
def refused(s):
    p = ctl("--config=CONFIG", "--leader-elect", config="")
    eq(p.returncode, 2, "unknown flag: exit 2")
    check("unknown flag --leader-elect; the flags are: " in p.stderr and
          "--zap-log-level" in p.stderr and "--feature-gates" in p.stderr,
          p.stderr)
    gated = ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
             "kind: Configuration\nfeatureGates:\n  PartialAdmission: true\n")
    p = ctl("--config", "CONFIG", "--feature-gates=TopologyAwareScheduling="
            "true", "--check-config", config=gated)
    eq(p.returncode, 1, "both: exit 1")
    check("cannot both be set" in p.stderr, p.stderr)
    p = ctl("--feature-gates=PartialAdmission=maybe", "--check-config")
    eq(p.returncode, 1, "bad value: exit 1")
    check("invalid value of PartialAdmission=maybe" in p.stderr, p.stderr)
    p = ctl("--feature-gates=NoSuchGate=true", "--check-config")
    eq(p.returncode, 1, "unknown gate: exit 1")
    check("NoSuchGate" in p.stderr and "unrecognized" in p.stderr, p.stderr)


run_cases()
