# SPDX-License-Identifier: Apache-2.0
"""cuetest.procs - the programs under test as processes.

Server starts a real cueue-apiserver on 127.0.0.1 (a free port, TLS by
default so that kubectl sends its bearer token) and gives tests the
machine's kubectl, the Debian python3-kubernetes client, raw HTTPS access
and the server's /__test/ endpoints; Controller starts a cueue-controller
against it. Both are stopped by the test and die with it (prctl). Their
output goes to LOGS/<test>.<n>.stderr and LOGS/<test>.ctl<n>.stderr, which
the runners scan for sanitizer reports.
"""
import base64
import json
import os
import re
import shutil
import socket
import signal
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.request

from .checks import Failure, check, wait_for
from .env import BIN, LOGS, ROOT, TEST, write
from .http import RawStream, maybe_json

_servers = 0


class Server:
    """A cueue-apiserver process and clients for it."""

    def __init__(self, tls=True, args=(), simulate=None):
        global _servers
        _servers += 1
        self.dir = tempfile.mkdtemp(prefix="cueue-test-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.cache = os.path.join(self.dir, "kubectl-cache")
        self.log = os.path.join(LOGS, "%s.%d.stderr" % (TEST, _servers))
        cmd = [os.path.join(BIN, "cueue-apiserver"), "--listen",
               "127.0.0.1:0", "--kubeconfig-out", self.kubeconfig,
               "--test-endpoints"]
        if tls:
            cmd.append("--tls")
        if simulate:
            cmd += ["--simulate", simulate]
        cmd += list(args)
        self.errf = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.errf,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        wait_for(lambda: os.path.exists(self.kubeconfig) or
                 self.proc.poll() is not None, 20, what="kubeconfig")
        if self.proc.poll() is not None:
            raise Failure("cueue-apiserver exited: see %s" % self.log)
        self._read_kubeconfig()
        self._api = None
        self._procs = []
        self._streams = []

    def _read_kubeconfig(self):
        import yaml
        with open(self.kubeconfig) as f:
            kc = yaml.safe_load(f)
        cl = kc["clusters"][0]["cluster"]
        self.url = cl["server"]
        self.token = kc["users"][0]["user"]["token"]
        self.ca_file = None
        self.ctx = None
        if "certificate-authority-data" in cl:
            self.ca_file = os.path.join(self.dir, "ca.crt")
            with open(self.ca_file, "wb") as f:
                f.write(base64.b64decode(cl["certificate-authority-data"]))
            self.ctx = ssl.create_default_context(cafile=self.ca_file)

    # ---- kubectl ----------------------------------------------------
    def kubectl(self, *args, check=True, input=None, timeout=60,
                version=None):
        exe = _kubectl_exe(version)
        cmd = [exe, "--kubeconfig", self.kubeconfig, "--cache-dir",
               self.cache] + list(args)
        p = subprocess.run(cmd, input=input, capture_output=True,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure("kubectl %s failed (%d): %s%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def kubectl_bg(self, *args, version=None):
        cmd = [_kubectl_exe(version), "--kubeconfig", self.kubeconfig,
               "--cache-dir", self.cache] + list(args)
        # kubectl is a dispatcher that runs the real kubectl as a child:
        # a process group of its own lets kill() reach both, so that the
        # pipes close and communicate() cannot hang on the orphan.
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=True)

        def kill_group(p=p):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.kill = kill_group
        self._procs.append(p)
        return p

    def file(self, name, text):
        """Write text to a file in this server's scratch directory."""
        return write(self.dir, name, text)

    def namespace(self, name):
        """Create a namespace with a raw POST (generator subcommands such
        as `kubectl create ns` send protobuf, which the server refuses)."""
        code, _, body = self.raw("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name}})
        check(code == 201, "create namespace %s: %d %r" % (name, code,
                                                          body))
        return body

    # ---- python3-kubernetes -----------------------------------------
    def api(self):
        if self._api is None:
            from kubernetes import config
            self._api = config.new_client_from_config(
                config_file=self.kubeconfig)
        return self._api

    # ---- raw HTTP ---------------------------------------------------
    def raw(self, method, path, body=None, headers=None, token=True,
            timeout=30):
        data = None
        hdrs = {"Accept": "application/json"}
        if token:
            hdrs["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else \
                json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
            hdrs.setdefault("Content-Type", "application/json")
        hdrs.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, context=self.ctx,
                                        timeout=timeout) as r:
                raw = r.read()
                return r.status, dict(r.headers), maybe_json(raw)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, dict(e.headers), maybe_json(raw)

    def get_json(self, path):
        code, _, body = self.raw("GET", path)
        check(code == 200, "GET %s: %d %r" % (path, code, body))
        return body

    # ---- /__test/ ---------------------------------------------------
    def access_log(self, since=0):
        return self.get_json("/__test/log?since=%d" % since)["items"]

    def log_mark(self):
        return self.get_json("/__test/log?since=999999999999")["last"]

    def faults(self, rules):
        self.raw("POST", "/__test/faults", {"rules": rules})

    def compact(self):
        return self.raw("POST", "/__test/compact", {})[2]["compacted"]

    def drop_watches(self):
        self.raw("POST", "/__test/drop-watches", {})

    def state(self):
        return self.get_json("/__test/state")

    def requests(self, since=0, verb=None, path=None, prefix=None):
        """Access-log entries after mark `since`, optionally filtered by
        verb, exact path or path prefix (the /__test/ calls are never
        logged)."""
        out = []
        for e in self.access_log(since):
            if verb and e["verb"] != verb:
                continue
            if path and e["path"] != path:
                continue
            if prefix and not e["path"].startswith(prefix):
                continue
            out.append(e)
        return out

    def tokens(self, add=(), revoke=()):
        code, _, body = self.raw("POST", "/__test/tokens", {
            "add": [{"token": t, "user": u} for t, u in add],
            "revoke": list(revoke)})
        check(code == 200, "tokens: %d %r" % (code, body))

    def apply_crd(self, path, name, timeout=20):
        """kubectl apply a CRD file and wait until it is Established."""
        self.kubectl("apply", "-f", path)
        self.kubectl("wait", "--for=condition=Established", "crd/" + name,
                     "--timeout=%ds" % timeout, timeout=timeout + 10)

    def stream(self, path, token=True, headers=None):
        """Open a raw HTTP/1.1 GET (a watch) on its own socket and read it
        in a thread, keeping the exact wire framing: see RawStream."""
        st = RawStream(self, path, token, headers)
        self._streams.append(st)
        return st

    def stop(self):
        for p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for st in self._streams:
            st.close()
        stop_process(self.proc, "cueue-apiserver")
        self.errf.close()
        if not os.environ.get("CUEUE_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.proc.returncode != 0:
            raise Failure("cueue-apiserver exited %d, see %s" %
                          (self.proc.returncode, self.log))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def stop_process(proc, what, sig=signal.SIGTERM, timeout=20):
    """Send sig to proc (a subprocess.Popen) if it still runs and wait for
    it to end; after `timeout` seconds kill it and raise Failure."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise Failure("%s did not stop on %s" % (
                what, signal.Signals(sig).name))


def _die_with_parent():
    """In the child: get SIGTERM when the test process dies, so a test
    killed by a timeout leaves no server behind (Linux prctl)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(
            1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kubectl_exe(version=None):
    """The kubectl dispatcher, or with version ("1.27") the versioned
    build that sits beside the dispatcher's real path."""
    if not version:
        return "kubectl"
    real = os.path.dirname(os.path.realpath(shutil.which("kubectl")))
    return os.path.join(real, "kubectl.%s" % version)


def kubectl_available(version):
    """Whether the versioned kubectl build ("1.27") exists here."""
    if shutil.which("kubectl") is None:
        return False
    return os.access(_kubectl_exe(version), os.X_OK)


_minor_cache = {}


def kubectl_minor(version=None):
    """The minor version of the kubectl a test's s.kubectl(...,
    version=version) runs, for checks of behaviour that differs between
    kubectl releases. A pinned build ("1.27") is that minor. Otherwise
    `kubectl version --client -o json` tells: Debian's kubernetes-client
    says 20; our machines' dispatcher ("v1.32.4-dispatcher") runs the
    build matching the server's minor, and cueue-apiserver reports 1.33,
    so it is the newest kubectl.1.N beside the dispatcher."""
    if version:
        return int(version.split(".")[1])
    if version in _minor_cache:
        return _minor_cache[version]
    p = subprocess.run(["kubectl", "version", "--client", "-o", "json"],
                       capture_output=True, text=True, timeout=30)
    info = json.loads(p.stdout)["clientVersion"]
    minor = int(re.match(r"\d+", info["minor"]).group(0))
    if "dispatcher" in info.get("gitVersion", ""):
        real = os.path.dirname(os.path.realpath(shutil.which("kubectl")))
        builds = [int(m.group(1)) for m in (
            re.match(r"^kubectl\.1\.(\d+)$", n) for n in os.listdir(real))
            if m]
        minor = max(builds) if builds else minor
    _minor_cache[version] = minor
    return minor


def reachable_copy(dirpath, name="cueue-controller"):
    """A copy of BIN/name in dirpath (made 0755), for a test that runs it
    as another user: the build tree may sit under a home directory that
    user cannot enter (a clone under /root). Returns its path."""
    os.chmod(dirpath, 0o755)
    dst = os.path.join(dirpath, name)
    shutil.copy(os.path.join(BIN, name), dst)
    os.chmod(dst, 0o755)
    return dst


_controllers = 0


class Controller:
    """A cueue-controller process talking to `srv` with its kubeconfig.
    config: Configuration YAML text (health/metrics ports default to 0,
    i.e. disabled here unless the text sets them). store: ledger path or
    None. Its stderr goes to LOGS/<test>.ctl<n>.stderr, which the runner
    scans for sanitizer reports. The visibility server is off unless the
    config names VisibilityOnDemand or visibilityServer
    (without_visibility). Metrics are plain HTTP
    (--metrics-secure=false) unless args name --metrics-secure."""

    def __init__(self, srv, config=None, store=None, args=(), env=None):
        global _controllers
        _controllers += 1
        self.srv = srv
        self.cfg = os.path.join(srv.dir, "cueue-config-%d.yaml" %
                                _controllers)
        with open(self.cfg, "w") as f:
            f.write(without_visibility(config or CONTROLLER_CONFIG))
        self.log = os.path.join(LOGS, "%s.ctl%d.stderr" % (TEST,
                                                          _controllers))
        cmd = [os.path.join(BIN, "cueue-controller"), "--config",
               self.cfg, "--kubeconfig", srv.kubeconfig, "--log-level",
               "debug"]
        if store:
            cmd += ["--store", store]
        if not any(a.startswith("--metrics-secure") for a in args):
            cmd.append("--metrics-secure=false")
        cmd += list(args)
        self.errf = open(self.log, "w")
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdout=self.errf,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent,
                                     env=full_env)

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM):
        stop_process(self.proc, "cueue-controller", sig)
        self.errf.close()
        if sig == signal.SIGTERM and self.proc.returncode not in (0, None):
            raise Failure("cueue-controller exited %d, see %s" %
                          (self.proc.returncode, self.log))


def mint_certs(d, sans):
    """A CA (ca.crt, ca.key) and a serving certificate signed by it
    (srv.crt, srv.key; subjectAltName `sans`, e.g. "DNS:x,IP:127.0.0.1")
    in directory d, with the openssl CLI."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True,
                       capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    ossl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt",
         "-days", "2", "-subj", "/CN=webhook-test-ca")
    ossl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj",
         "/CN=webhook")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\n"
                "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
                % sans)
    ossl("x509", "-req", "-in", "srv.csr", "-CA", "ca.crt", "-CAkey",
         "ca.key", "-CAcreateserial", "-out", "srv.crt", "-days", "2",
         "-extfile", "ext.cnf")


def flavor_and_queue(cpu, name="cq"):
    """YAML of the ResourceFlavor `default-flavor` and a ClusterQueue
    `name` with `cpu` nominal quota on it, open to every namespace."""
    return """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: %s}
""" % (name, cpu)


def queues_setup(srv, cpu, ns="team", lq="lq", namespaces=()):
    """The shipped CRDs (Established), namespace ns and `namespaces`,
    flavor_and_queue(cpu) and LocalQueue ns/lq on ClusterQueue cq."""
    srv.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    srv.kubectl("wait", "--for=condition=Established", "crd", "--all",
                "--timeout=30s")
    for n in (ns,) + tuple(namespaces):
        srv.namespace(n)
    srv.kubectl("apply", "-f", srv.file("queues.yaml", flavor_and_queue(cpu)))
    code, _, body = srv.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues" % ns,
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": lq, "namespace": ns},
         "spec": {"clusterQueue": "cq"}})
    if code != 201:
        raise Failure("LocalQueue %s/%s: %d %r" % (ns, lq, code, body))


def controller_config(leader=False, qps=None, burst=None):
    """cueue-controller Configuration YAML for namespace default: health
    and metrics off, no internal certificate management; with qps (and
    burst) a clientConnection; with leader, leader election on the Lease
    default/cueue-leader (leaseDuration 6 s, renewDeadline 4 s,
    retryPeriod 1 s), else none."""
    cfg = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: default
health:
  healthProbeBindAddress: "0"
metrics:
  bindAddress: "0"
internalCertManagement:
  enable: false
"""
    if qps is not None:
        cfg += "clientConnection:\n  qps: %s\n  burst: %d\n" % (qps, burst)
    if leader:
        cfg += """leaderElection:
  leaderElect: true
  resourceName: cueue-leader
  resourceNamespace: default
  leaseDuration: 6s
  renewDeadline: 4s
  retryPeriod: 1s
"""
    else:
        cfg += "leaderElection:\n  leaderElect: false\n"
    return cfg


def without_visibility(cfg):
    """cfg with the VisibilityOnDemand gate off unless it says otherwise:
    the visibility server listens on a fixed port (8082 by default), which
    tests running side by side, and replicas of one test, would share."""
    if "VisibilityOnDemand" in cfg or "visibilityServer" in cfg:
        return cfg
    if "\nfeatureGates:\n" in cfg:
        return cfg.replace("\nfeatureGates:\n",
                           "\nfeatureGates:\n  VisibilityOnDemand: false\n")
    if not cfg.endswith("\n"):
        cfg += "\n"
    return cfg + "featureGates:\n  VisibilityOnDemand: false\n"


def free_port():
    """A TCP port on 127.0.0.1 free right now."""
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


CONTROLLER_CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: "0"
metrics:
  bindAddress: "0"
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
"""


