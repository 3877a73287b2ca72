# SPDX-License-Identifier: Apache-2.0
"""README's "Kueue compatibility" table is the one in the code: it must be
exactly what `cueue-controller --compat-table` prints. The shipped
ConfigMap loads with only the warnings the table predicts for it. A
controller given only KUBECONFIG (no --kubeconfig) works; it serves its
probes at the configured endpoint names and exports no quota families
without enableClusterQueueResources. A ResourceFlavor using a spec field
cueue does not act on is told so (every ClusterQueue spec field is acted
on)."""
import os
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request

import yaml

from cuetest import (Controller, Failure, case, check, controller_config, eq,
                     flavor_and_queue, run_cases, wait_for, without_visibility)
from cuetest.env import BIN, LOGS, TEST
from cuetest.procs import _die_with_parent, free_port, stop_process

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CTL = os.path.join(BIN, "cueue-controller")


def readme_table():
    """The table rows of README's "## Kueue compatibility" section."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    start = text.find("\n## Kueue compatibility\n")
    check(start >= 0, "README.md has no \"## Kueue compatibility\" section")
    end = text.find("\n## ", start + 1)
    body = text[start:end if end >= 0 else len(text)]
    return [l for l in body.splitlines() if l.startswith("|")]


@case("readme-table-matches-code")
def readme_table_matches_code(s):
    out = subprocess.run([CTL, "--compat-table"], capture_output=True,
                         text=True, timeout=30)
    eq(out.returncode, 0, "--compat-table exit status")
    code = [l for l in out.stdout.splitlines() if l.startswith("|")]
    check(len(code) > 10, "--compat-table printed %d rows" % len(code))
    readme = readme_table()
    diff = [("README: " + a, "code:   " + b)
            for a, b in zip(readme, code) if a != b]
    if len(readme) != len(code):
        only = set(readme) ^ set(code)
        raise Failure("README has %d rows, the code %d; differing rows:\n%s"
                      % (len(readme), len(code), "\n".join(sorted(only))))
    if diff:
        raise Failure("README and --compat-table differ:\n" +
                      "\n".join("%s\n%s" % d for d in diff))


@case("shipped-configmap-warns-as-expected")
def shipped_configmap(s):
    with open(os.path.join(ROOT, "manifests", "configmap.yaml")) as f:
        cm = yaml.safe_load(f)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(cm["data"]["config.yaml"])
        f.flush()
        out = subprocess.run([CTL, "--config", f.name, "--check-config"],
                             capture_output=True, text=True, timeout=30)
    eq(out.returncode, 0, "--check-config exit status (%s)" % out.stderr)
    warnings = [l for l in out.stderr.splitlines() if "warning:" in l]
    # v1beta2 turns waitForPodsReady on by default; cueue acts on it.
    # Nothing to say.
    eq(warnings, [], "warnings")


@case("unknown-feature-gate-is-refused")
def unknown_gate(s):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                "kind: Configuration\n"
                "featureGates:\n  NoSuchGate: true\n")
        f.flush()
        out = subprocess.run([CTL, "--config", f.name, "--check-config"],
                             capture_output=True, text=True, timeout=30)
    eq(out.returncode, 1, "exit status")
    check("featureGates[NoSuchGate]: unrecognized feature gate" in
          out.stderr, out.stderr)


@case("every-configuration-error-in-one-run")
def every_error(s):
    """A file with errors in three sections: --check-config and the
    controller's start both name all three, each with its line."""
    text = ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
            "kind: Configuration\n"
            "webhook:\n  port: 0\n"
            "metrics:\n  bindAddress: nowhere\n"
            "featureGates:\n  NoSuchGate: true\n")
    want = ["line 4: webhook.port: Invalid value: 0",
            'line 6: metrics.bindAddress: Invalid value: "nowhere"',
            "line 8: featureGates[NoSuchGate]: unrecognized feature gate"]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(text)
        f.flush()
        for args in (["--check-config"], ["--kubeconfig", "/nonexistent"]):
            out = subprocess.run([CTL, "--config", f.name] + args,
                                 capture_output=True, text=True,
                                 timeout=30)
            eq(out.returncode, 1, "exit status (%s)" % args)
            lines = [l for l in out.stderr.splitlines()
                     if "invalid configuration" in l]
            eq(len(lines), 3, "one line per error: %r" % out.stderr)
            for line, w in zip(lines, want):
                check(w in line, "%r lacks %r" % (line, w))


def http_get(port, path):
    """(status, body) of GET http://127.0.0.1:port/path."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open("http://127.0.0.1:%d%s" % (port, path),
                         timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@case("kubeconfig-env-only-probes-metrics-events")
def kubeconfig_env_only(s):
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    queue = yaml.safe_load_all(flavor_and_queue(4))
    docs = [d for d in queue if d]
    for name, labels in (("lq-in", {"metrics": "yes"}), ("lq-out", {})):
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2",
                     "kind": "LocalQueue",
                     "metadata": {"name": name, "namespace": "default",
                                  "labels": labels},
                     "spec": {"clusterQueue": "cq"}})
    s.kubectl("apply", "-f", s.file("q.yaml", yaml.safe_dump_all(docs)))
    hport, mport = free_port(), free_port()
    # The visibility server's fixed port is shared by tests running side
    # by side: off here, as cuetest.Controller does.
    cfg = without_visibility(controller_config()).replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"\n'
        '  readinessEndpointName: ready\n'
        '  livenessEndpointName: alive' % hport).replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"\n'
        '  localQueueMetrics:\n'
        '    enable: true\n'
        '    localQueueSelector: {matchLabels: {metrics: "yes"}}' % mport)
    cfgf = s.file("config.yaml", cfg)
    home = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KUBERNETES_SERVICE")}
    env.update({"KUBECONFIG": s.kubeconfig, "HOME": home})
    log = os.path.join(LOGS, "%s.ctl-env.stderr" % TEST)
    with open(log, "w") as errf:
        proc = subprocess.Popen(
            [os.path.join(BIN, "cueue-controller"), "--config", cfgf,
             "--metrics-secure=false"],
            stdout=errf, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent)
        try:
            def active():
                st = s.get_json("/apis/kueue.x-k8s.io/v1beta2/"
                                "clusterqueues/cq").get("status", {})
                return any(c["type"] == "Active" and c["status"] == "True"
                           for c in st.get("conditions", []))
            wait_for(active, 20, what="ClusterQueue Active (controller "
                     "reached the API through KUBECONFIG; log %s)" % log)
            wait_for(lambda: http_get(hport, "/ready")[0] == 200, 10,
                     what="readiness at /ready")
            eq(http_get(hport, "/alive")[0], 200, "liveness at /alive")
            eq(http_get(hport, "/readyz")[0], 404, "/readyz not served")
            status, text = wait_for(
                lambda: (lambda r: r if 'name="lq-in"' in r[1] else None)(
                    http_get(mport, "/metrics")), 10,
                what="LocalQueue metrics of lq-in")
            eq(status, 200)
            check('name="lq-out"' not in text,
                  "lq-out is outside localQueueSelector")
            check("kueue_cluster_queue_status{" in text, "CQ status exported")
            check("kueue_cluster_queue_nominal_quota{" not in text,
                  "no quota families without enableClusterQueueResources")
        finally:
            stop_process(proc, "cueue-controller", signal.SIGTERM)
    with open(log) as f:
        text = f.read()
    check("(from KUBECONFIG %s)" % s.kubeconfig in text,
          "start-up says where the API server came from")


@case("unreachable-api-server-said-once-per-step")
def unreachable(s):
    """A kubeconfig naming a port nobody listens on: one log line per
    back-off step naming the endpoint and the cause in words (no internal
    error code, no line per informer), and /readyz?verbose says it
    failed (the reason is logged, withheld from the unauthenticated probe
    port)."""
    with open(s.kubeconfig) as f:
        kc = yaml.safe_load(f)
    dead = free_port()
    endpoint = "https://127.0.0.1:%d" % dead
    kc["clusters"][0]["cluster"]["server"] = endpoint
    kcf = s.file("dead-kubeconfig", yaml.safe_dump(kc))
    hport = free_port()
    cfgf = s.file("config.yaml", without_visibility(
        controller_config()).replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"' % hport))
    log = os.path.join(LOGS, "%s.ctl-dead.stderr" % TEST)
    with open(log, "w") as errf:
        proc = subprocess.Popen(
            [os.path.join(BIN, "cueue-controller"), "--config", cfgf,
             "--kubeconfig", kcf], stdout=errf, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent)
        try:
            def lines():
                with open(log) as f:
                    return [l for l in f.read().splitlines()
                            if " warn " in l or " error " in l]
            wait_for(lambda: len([l for l in lines()
                                  if "unreachable" in l]) >= 3, 20,
                     what="three back-off steps reported")
            st, body = http_get(hport, "/readyz?verbose")
            eq(st, 500, "not ready")
            # The probe port authenticates nobody: the reason is
            # withheld there, and logged.
            check("[-]api-server failed: reason withheld" in body, body)
            wait_for(lambda: "readyz: api-server failed: API server %s: "
                     "Failed to connect" % endpoint in open(log).read(), 10,
                     what="the reason in the log")
        finally:
            stop_process(proc, "cueue-controller", signal.SIGTERM)
    warned = [l for l in lines() if "waitForPodsReady" not in l and
              "webhook certificate" not in l]
    bad = [l for l in warned if "unreachable" not in l]
    check(not bad, "only unreachable lines expected, got %r" % bad[:3])
    for l in warned:
        check("API server %s unreachable: " % endpoint in l and
              "CU_E" not in l and "connect" in l, l)
    # One line per step: 1 s, 2 s, 4 s ... apart, whatever the number of
    # informers retrying meanwhile.
    import datetime
    ts = [datetime.datetime.strptime(l.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ")
          for l in warned]
    gaps = [(b - a).total_seconds() for a, b in zip(ts, ts[1:])]
    check(all(g >= 0.9 for g in gaps), "gaps between reports %r" % gaps)


@case("kueue-controller-section-acts")
def controller_section(s):
    """Kueue's shipped configuration sets controller.groupKindConcurrency
    (a bound on parallel reconciles per kind, which cueue's one object at
    a time keeps): it loads without a warning. controller.cacheSyncTimeout
    (Kueue's default 2 minutes) acts as controller-runtime's: caches not
    synced in time stop the controller with an error, here after 2 s
    against an API server nobody listens on."""
    shipped = ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
               "kind: Configuration\n"
               "controller:\n"
               "  groupKindConcurrency:\n"
               "    Job.batch: 5\n"
               "    Workload.kueue.x-k8s.io: 10\n"
               "    ClusterQueue.kueue.x-k8s.io: 5\n")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(shipped)
        f.flush()
        out = subprocess.run([CTL, "--config", f.name, "--check-config"],
                             capture_output=True, text=True, timeout=30)
    eq(out.returncode, 0, "--check-config exit status (%s)" % out.stderr)
    warnings = [l for l in out.stderr.splitlines() if "warning:" in l and
                "controller" in l]
    eq(warnings, [], "controller section warnings")
    with open(s.kubeconfig) as f:
        kc = yaml.safe_load(f)
    kc["clusters"][0]["cluster"]["server"] = \
        "https://127.0.0.1:%d" % free_port()
    kcf = s.file("dead-kubeconfig", yaml.safe_dump(kc))
    cfgf = s.file("config.yaml", without_visibility(controller_config()) +
                  "controller:\n  cacheSyncTimeout: 2000000000\n")
    log = os.path.join(LOGS, "%s.ctl-sync-timeout.stderr" % TEST)
    with open(log, "w") as errf:
        proc = subprocess.Popen(
            [CTL, "--config", cfgf, "--kubeconfig", kcf], stdout=errf,
            stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stop_process(proc, "cueue-controller", signal.SIGTERM)
            raise Failure("still running 30 s after a 2 s cacheSyncTimeout")
    check(rc != 0, "exit status %d" % rc)
    text = open(log).read()
    check("timed out waiting for cache to be synced" in text, text[-2000:])


run_cases()
