# SPDX-License-Identifier: Apache-2.0
"""tests/bench/moonshot.py - `make bench-moonshot`: one cueue-controller
with a million pending Workloads in 10,000 ClusterQueues (cohorts of 10).
A report, never a pass/fail test (not part of make test or make bench).

  1. cueue-apiserver (plain HTTP, no test endpoints: nothing kept per
     request) gets the CRDs, one ResourceFlavor, CQS ClusterQueues of
     1 cpu in cohorts of COHORT, and a LocalQueue per ClusterQueue in
     namespace `moon`;
  2. cueue-controller (release build, unthrottled client, a real ledger)
     starts; the first CQS Workloads (1 cpu, one per ClusterQueue) are
     created and all admitted: the quota is full;
  3. PENDING more Workloads are created through the API as fast as it
     takes them (WRITERS keep-alive connections), spread evenly over the
     LocalQueues, named in key order (wl-0000000, ...: cueue-apiserver
     keeps a kind's objects in one sorted array, and names in order
     append instead of moving half of it per create); every SAMPLE_S the controller's RSS and the admission
     attempts it timed since the last sample are recorded against the
     number of Workloads created, until every ClusterQueue's status
     counts its pending Workloads (the controller holds them all);
  4. quota frees: the CQS running Workloads are marked Finished at once;
     the time until CQS others are admitted gives admissions per second,
     and the controller's admission attempt histogram over that phase
     gives the cycle p50/p99 with PENDING pending (interpolated within
     buckets as Prometheus' histogram_quantile does);
  5. restart: the controller is stopped and started again on its ledger;
     restart to Ready is the time until /readyz answers 200 (informers
     synced over every object, ledger open).

Writes BENCH_OUT/moonshot/summary.json (pending, cluster_queues,
cycle_p50_ms, cycle_p99_ms, controller_peak_rss_mib,
apiserver_peak_rss_mib, restart_to_ready_s, admissions_per_s, the
phase times, controller_rss_held_mib (once it holds them all) and
metrics_bytes / metrics_scrape_s (the controller's /metrics answer then:
its size and the fastest of three scrapes), controller_idle_mcpu (its CPU
over IDLE_S once it holds them all, nothing happening: the one-second
tick) and controller_cpu_s (its CPU until the restart)), samples.csv and, with gnuplot, growth.png (RSS and cycle
time against Workloads created).

Environment: CUEUE_BIN (default build/release/bin), MOONSHOT_PENDING
(1000000), MOONSHOT_CQS (10000), MOONSHOT_COHORT (10), MOONSHOT_WRITERS
(4), MOONSHOT_SAMPLE_S (5), MOONSHOT_IDLE_S (20), MOONSHOT_TIMEOUT_S
(3600 per phase),
BENCH_OUT (build/bench), MOONSHOT_WRAP (a command the controller runs
under, split on blanks, e.g. "heaptrack -o /tmp/ctl": a profile of each
controller run, the restart's included; CPU, RSS and SIGTERM go to the
cueue-controller process under it), MOONSHOT_WRAP_RESTART (the same for
the restarted controller only).
"""
import datetime
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BIN = os.path.abspath(os.environ.get(
    "CUEUE_BIN", os.path.join(ROOT, "build", "release", "bin")))
OUT = os.path.join(os.path.abspath(os.environ.get(
    "BENCH_OUT", os.path.join(ROOT, "build", "bench"))), "moonshot")
PENDING = int(os.environ.get("MOONSHOT_PENDING", "1000000"))
CQS = int(os.environ.get("MOONSHOT_CQS", "10000"))
COHORT = int(os.environ.get("MOONSHOT_COHORT", "10"))
WRITERS = int(os.environ.get("MOONSHOT_WRITERS", "4"))
SAMPLE_S = float(os.environ.get("MOONSHOT_SAMPLE_S", "5"))
IDLE_S = float(os.environ.get("MOONSHOT_IDLE_S", "20"))
TIMEOUT_S = float(os.environ.get("MOONSHOT_TIMEOUT_S", "3600"))
WRAP = os.environ.get("MOONSHOT_WRAP", "").split()
WRAP_RESTART = os.environ.get("MOONSHOT_WRAP_RESTART", "").split() or WRAP
KQ = "/apis/kueue.x-k8s.io/v1beta2"
NS = "moon"
FAMILY = "kueue_admission_attempt_duration_seconds"
LE = re.compile(r'[{,]le="([^"]*)"')


def log(msg):
    print("moonshot: " + msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_kib(pid, key):
    """VmRSS or VmHWM of pid in KiB (0 once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Api:
    """Keep-alive HTTP to cueue-apiserver (one connection per thread)."""

    def __init__(self, host, port, token):
        self.host, self.port = host, port
        self.hdrs = {"Authorization": "Bearer " + token,
                     "Content-Type": "application/json"}
        self.local = threading.local()

    def conn(self):
        c = getattr(self.local, "c", None)
        if c is None:
            c = http.client.HTTPConnection(self.host, self.port, timeout=600)
            self.local.c = c
        return c

    def call(self, method, path, body=None, ctype=None):
        hdrs = dict(self.hdrs)
        if ctype:
            hdrs["Content-Type"] = ctype
        data = body if isinstance(body, (bytes, type(None))) else \
            json.dumps(body).encode()
        for attempt in range(3):
            c = self.conn()
            try:
                c.request(method, path, body=data, headers=hdrs)
                r = c.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                c.close()
                self.local.c = None
                if attempt == 2:
                    raise
                time.sleep(0.2)

    def must(self, method, path, body=None, ok=(200, 201), ctype=None):
        code, data = self.call(method, path, body, ctype)
        if code not in ok:
            raise SystemExit("moonshot: %s %s: %d %s" % (
                method, path, code, data[:300]))
        return json.loads(data) if data else None


def parallel(n, fn, threads=WRITERS):
    """fn(i) for i in range(n) on `threads` threads; returns when done."""
    nxt = [0]
    lock = threading.Lock()
    errors = []

    def run():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= n or errors:
                return
            try:
                fn(i)
            except BaseException as e:  # reported after the join
                errors.append(e)
                return
    ts = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def workload(name, lq):
    return ('{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",'
            '"metadata":{"name":"%s","namespace":"%s"},"spec":{"queueName":'
            '"%s","podSets":[{"name":"main","count":1,"template":{"spec":'
            '{"restartPolicy":"Never","containers":[{"name":"c","image":'
            '"busybox","resources":{"requests":{"cpu":"1"}}}]}}}]}}' %
            (name, NS, lq)).encode()


def metrics_scrape(port, tries=3):
    """(bytes, seconds) of the controller's /metrics answer: the fastest
    of tries scrapes, timed from request to last byte read; (None, None)
    when every one failed (a busy controller may cut an answer of many
    MB: a report, not a test, so the run goes on)."""
    best = (None, None)
    for _ in range(tries):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        try:
            t = time.monotonic()
            c.request("GET", "/metrics")
            n = len(c.getresponse().read())
            dt = time.monotonic() - t
        except (OSError, http.client.HTTPException) as e:
            log("  /metrics scrape failed: %s" % type(e).__name__)
            continue
        finally:
            c.close()
        best = (n, dt) if best[1] is None or dt < best[1] else best
    return best


def histogram(port, tries=1):
    """{le: cumulative count} summed over results, and (sum, count), of
    the admission attempt histogram on the controller's /metrics (asked
    up to tries times when the answer is cut)."""
    for i in range(tries):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            break
        except (OSError, http.client.HTTPException):
            if i + 1 == tries:
                raise
        finally:
            c.close()
    buckets, total, count = {}, 0.0, 0.0
    for line in text.splitlines():
        if not line.startswith(FAMILY):
            continue
        head, value = line.rsplit(" ", 1)
        if head.startswith(FAMILY + "_bucket{"):
            le = LE.search(head).group(1)
            le = float("inf") if le == "+Inf" else float(le)
            buckets[le] = buckets.get(le, 0.0) + float(value)
        elif head.startswith(FAMILY + "_sum"):
            total += float(value)
        elif head.startswith(FAMILY + "_count"):
            count += float(value)
    return buckets, total, count


def quantile(q, b0, b1):
    """Prometheus' histogram_quantile over the increase b1 - b0, in ms."""
    les = sorted(b1)
    inc = [b1[le] - b0.get(le, 0.0) for le in les]
    if not inc or inc[-1] <= 0:
        return None
    rank = q * inc[-1]
    prev_le, prev_c = 0.0, 0.0
    for le, c in zip(les, inc):
        if c >= rank:
            if le == float("inf"):
                return prev_le * 1000.0
            frac = (rank - prev_c) / (c - prev_c) if c > prev_c else 1.0
            return (prev_le + (le - prev_le) * frac) * 1000.0
        prev_le, prev_c = le, c
    return None


class Controller:
    def __init__(self, tmp, kubeconfig, name, wrap):
        self.probe, self.metrics = free_port(), free_port()
        cfg = os.path.join(tmp, "controller.yaml")
        with open(cfg, "w") as f:
            f.write("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                    "kind: Configuration\nnamespace: cueue-system\n"
                    "health:\n  healthProbeBindAddress: \"127.0.0.1:%d\"\n"
                    "metrics:\n  bindAddress: \"127.0.0.1:%d\"\n"
                    "internalCertManagement:\n  enable: false\n"
                    "leaderElection:\n  leaderElect: false\n"
                    "featureGates:\n  VisibilityOnDemand: false\n"
                    "clientConnection:\n  qps: 1000000\n  burst: 1000000\n"
                    % (self.probe, self.metrics))
        self.cfg = cfg
        self.wrap = wrap
        self.log = open(os.path.join(OUT, name + ".log"), "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            wrap + [os.path.join(BIN, "cueue-controller"), "--config", cfg,
             "--kubeconfig", kubeconfig, "--store",
             os.path.join(tmp, "ledger.db"), "--metrics-secure=false",
             "--log-level", "info"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def pid(self):
        """The cueue-controller process: the child itself, or the
        one under MOONSHOT_WRAP (found once; its pid then kept)."""
        if not self.wrap:
            return self.proc.pid
        if getattr(self, "_pid", None):
            return self._pid
        for d in os.listdir("/proc"):
            try:
                with open("/proc/%s/comm" % d) as f:
                    comm = f.read().strip()
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    argv = f.read().split(b"\0")
            except (OSError, ValueError):
                continue
            if comm == "cueue-controlle" and \
                    self.cfg.encode() in argv:
                self._pid = int(d)
                return self._pid
        return self.proc.pid

    def ready(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.probe,
                                           timeout=5)
            c.request("GET", "/readyz")
            ok = c.getresponse().status == 200
            c.close()
            return ok
        except OSError:
            return False

    def wait_ready(self):
        end = time.monotonic() + TIMEOUT_S
        while not self.ready():
            if self.proc.poll() is not None:
                raise SystemExit("moonshot: cueue-controller exited (%s)" %
                                 self.log.name)
            if time.monotonic() > end:
                raise SystemExit("moonshot: controller not ready")
            time.sleep(0.05)
        return time.monotonic() - self.t0

    def stop(self):
        try:
            os.kill(self.pid(), signal.SIGTERM)
        except OSError:
            pass
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def admissions(ctl):
    """Wall-clock times (s since the epoch) of the controller's
    "Workload admitted" log lines so far (the log is at info)."""
    out = []
    with open(ctl.log.name) as f:
        for line in f:
            if " Workload admitted " in line:
                ts = datetime.datetime.strptime(
                    line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S.%fZ")
                out.append(ts.replace(
                    tzinfo=datetime.timezone.utc).timestamp())
    return out


def wait_admitted(ctl, n, what):
    """Wait until the controller has logged n admissions; their times."""
    t0 = time.monotonic()
    end, said = t0 + TIMEOUT_S, t0
    while True:
        got = admissions(ctl)
        if len(got) >= n:
            return got
        if ctl.proc.poll() is not None or time.monotonic() > end:
            raise SystemExit("moonshot: %s: %d admissions, want %d" %
                             (what, len(got), n))
        if time.monotonic() - said >= 30:
            said = time.monotonic()
            log("  %s: %d of %d after %.0f s" % (what, len(got), n,
                                                  said - t0))
        time.sleep(0.5)


def cpu_s(pid):
    """User + system CPU seconds of pid."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(ctl, what):
    """Wait until the controller has used under 5% of a core for 5 s:
    it holds every Workload it was sent (its watch is drained)."""
    t0 = time.monotonic()
    end = t0 + TIMEOUT_S
    prev, said = cpu_s(ctl.pid()), t0
    while time.monotonic() < end:
        time.sleep(5)
        cur = cpu_s(ctl.pid())
        if cur - prev < 0.25:
            return time.monotonic() - t0 - 5
        prev = cur
        if time.monotonic() - said >= 30:
            said = time.monotonic()
            log("  %s: still busy after %.0f s" % (what, said - t0))
    raise SystemExit("moonshot: %s: the controller never went quiet" %
                     what)


def crds(api):
    """The shipped CRDs, POSTed as JSON, then Established."""
    import yaml
    d = os.path.join(ROOT, "manifests", "crds")
    names = []
    for fn in sorted(os.listdir(d)):
        with open(os.path.join(d, fn)) as f:
            for doc in yaml.safe_load_all(f):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    api.must("POST", "/apis/apiextensions.k8s.io/v1/"
                             "customresourcedefinitions", doc)
                    names.append(doc["metadata"]["name"])
    end = time.monotonic() + 60
    for n in names:
        while True:
            crd = api.must("GET", "/apis/apiextensions.k8s.io/v1/"
                           "customresourcedefinitions/" + n)
            if any(c["type"] == "Established" and c["status"] == "True"
                   for c in crd.get("status", {}).get("conditions", [])):
                break
            if time.monotonic() > end:
                raise SystemExit("moonshot: CRD %s not Established" % n)
            time.sleep(0.1)


def setup(api):
    api.must("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": NS}})
    api.must("POST", KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "rf"}})

    def queues(i):
        api.must("POST", KQ + "/clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "cq-%d" % i},
            "spec": {"namespaceSelector": {},
                     "cohortName": "co-%d" % (i // COHORT),
                     "resourceGroups": [{"coveredResources": ["cpu"],
                                         "flavors": [{"name": "rf",
                                                      "resources": [{
                                                          "name": "cpu",
                                                          "nominalQuota": 1
                                                      }]}]}]}})
        api.must("POST", KQ + "/namespaces/%s/localqueues" % NS, {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq-%d" % i, "namespace": NS},
            "spec": {"clusterQueue": "cq-%d" % i}})
    parallel(CQS, queues)


def finish(api, name):
    path = KQ + "/namespaces/%s/workloads/%s" % (NS, name)
    for _ in range(5):
        wl = api.must("GET", path)
        conds = wl.setdefault("status", {}).setdefault("conditions", [])
        conds.append({"type": "Finished", "status": "True",
                      "reason": "Succeeded", "message": "moonshot",
                      "lastTransitionTime": time.strftime(
                          "%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        code, _ = api.call("PUT", path + "/status", wl)
        if code == 200:
            return
    raise SystemExit("moonshot: cannot finish %s" % name)


def plot(samples):
    csv = os.path.join(OUT, "samples.csv")
    with open(csv, "w") as f:
        f.write("# created,controller_rss_mib,cycle_mean_ms,"
                "apiserver_rss_mib\n")
        for s in samples:
            f.write("%d,%.1f,%s,%.1f\n" % (
                s[0], s[1], "" if s[2] is None else "%.3f" % s[2], s[3]))
    if not shutil.which("gnuplot"):
        log("gnuplot not installed: samples.csv only")
        return
    script = ("set terminal png size 900,600\nset output '%s'\n"
              "set datafile separator ','\nset xlabel 'Workloads created'\n"
              "set ylabel 'RSS (MiB)'\nset y2label 'admission attempt, "
              "mean (ms)'\nset y2tics\nset key left top\n"
              "plot '%s' using 1:2 with lines title 'controller RSS', "
              "'%s' using 1:4 with lines title 'apiserver RSS', "
              "'%s' using 1:3 axes x1y2 with points title 'cycle mean'\n"
              % (os.path.join(OUT, "growth.png"), csv, csv, csv))
    subprocess.run(["gnuplot"], input=script, text=True, check=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cueue-moonshot-")
    kc = os.path.join(tmp, "kubeconfig")
    token = "moonshot-%d" % os.getpid()
    srv_log = open(os.path.join(OUT, "apiserver.log"), "w")
    srv = subprocess.Popen(
        [os.path.join(BIN, "cueue-apiserver"), "--listen", "127.0.0.1:0",
         "--kubeconfig-out", kc, "--token", token, "--log-level", "warn"],
        stdout=srv_log, stderr=subprocess.STDOUT)
    ctl = None
    try:
        end = time.monotonic() + 20
        while not os.path.exists(kc) and time.monotonic() < end:
            time.sleep(0.05)
        url = [ln.split("server:", 1)[1].strip().strip('"')
               for ln in open(kc) if "server:" in ln][0]
        host, port = url.split("//", 1)[1].rsplit(":", 1)
        api = Api(host, int(port), token)
        crds(api)
        t = time.monotonic()
        setup(api)
        log("%d ClusterQueues, %d LocalQueues in %.1f s" %
            (CQS, CQS, time.monotonic() - t))
        ctl = Controller(tmp, kc, "controller", WRAP)
        ctl.wait_ready()
        bodies = [workload("run-%d" % i, "lq-%d" % i) for i in range(CQS)]
        t = time.monotonic()
        parallel(CQS, lambda i: api.must("POST", KQ + "/namespaces/%s/"
                                         "workloads" % NS, bodies[i]))
        del bodies
        wait_admitted(ctl, CQS, "first Workloads admitted")
        log("%d Workloads created and admitted in %.1f s (quota full)" %
            (CQS, time.monotonic() - t))

        created = [0]
        samples = []
        stop = threading.Event()

        def scrape():
            """The histogram, or None when the scrape failed (a busy
            controller may cut a /metrics answer of many MB): the
            sample then has RSS only."""
            try:
                return histogram(ctl.metrics)
            except (OSError, http.client.HTTPException):
                return None

        def sampler():
            prev = scrape()
            while not stop.wait(SAMPLE_S):
                cur = scrape()
                if cur is None or prev is None:
                    samples.append((created[0],
                                    proc_kib(ctl.pid(), "VmRSS") / 1024.0,
                                    None,
                                    proc_kib(srv.pid, "VmRSS") / 1024.0))
                    prev = cur
                    continue
                dc = cur[2] - prev[2]
                mean = (cur[1] - prev[1]) / dc * 1000.0 if dc > 0 else None
                samples.append((created[0],
                                proc_kib(ctl.pid(), "VmRSS") / 1024.0,
                                mean, proc_kib(srv.pid, "VmRSS") / 1024.0))
                prev = cur
        smp = threading.Thread(target=sampler, daemon=True)
        smp.start()
        lock = threading.Lock()

        def create(i):
            api.must("POST", KQ + "/namespaces/%s/workloads" % NS,
                     workload("wl-%07d" % i, "lq-%d" % (i % CQS)))
            if i % 1000 == 999:
                with lock:
                    created[0] = max(created[0], i + 1)
                if (i + 1) % 100000 == 0:
                    log("%d created" % (i + 1))
        t = time.monotonic()
        parallel(PENDING, create)
        created[0] = PENDING
        t_create = time.monotonic() - t
        log("%d pending Workloads created in %.1f s (%.0f/s)" %
            (PENDING, t_create, PENDING / t_create))
        t_held = t_create + wait_quiet(ctl, "taking them in")
        log("the controller holds them all %.1f s after the first was "
            "created" % t_held)
        stop.set()
        smp.join()
        held_rss = proc_kib(ctl.pid(), "VmRSS") / 1024.0
        # What holding them costs with nothing happening: the one-second
        # tick's status pass, the cycles, the safety nets.
        c0 = cpu_s(ctl.pid())
        time.sleep(IDLE_S)
        idle_mcpu = (cpu_s(ctl.pid()) - c0) / IDLE_S * 1000.0
        log("holding them: %.0f mCPU over %.0f s" % (idle_mcpu, IDLE_S))
        m_bytes, m_s = metrics_scrape(ctl.metrics)
        log("RSS %.1f MiB holding them; /metrics %s" %
            (held_rss, "%.1f MB in %.2f s" % (m_bytes / 1e6, m_s)
             if m_s is not None else "not scraped whole"))

        # Quota frees: every running Workload finishes at once.
        h0 = histogram(ctl.metrics, tries=10)
        t_wall = time.time()
        t = time.monotonic()
        parallel(CQS, lambda i: finish(api, "run-%d" % i))
        t_marked = time.monotonic() - t
        got = wait_admitted(ctl, 2 * CQS, "the next Workloads admitted")
        t_free = max(got[CQS:]) - t_wall
        wait_quiet(ctl, "admitting them")
        h1 = histogram(ctl.metrics, tries=10)
        extra = len(admissions(ctl)) - 2 * CQS
        log("%d finished (written in %.1f s); %d admitted %.1f s after "
            "the first finish" % (CQS, t_marked, CQS, t_free))
        if extra:
            raise SystemExit("moonshot: %d admissions beyond the freed "
                             "quota" % extra)
        peak = proc_kib(ctl.pid(), "VmHWM") / 1024.0
        ctl_cpu = cpu_s(ctl.pid())
        ctl.stop()

        ctl = Controller(tmp, kc, "controller-restart", WRAP_RESTART)
        restart = ctl.wait_ready()
        log("restart to Ready %.1f s" % restart)
        restart_rss = proc_kib(ctl.pid(), "VmRSS") / 1024.0
        ctl.stop()
        ctl = None
        summary = {
            "pending": PENDING,
            "cluster_queues": CQS,
            "cycle_p50_ms": quantile(0.50, h0[0], h1[0]),
            "cycle_p99_ms": quantile(0.99, h0[0], h1[0]),
            "cycle_mean_ms": ((h1[1] - h0[1]) / (h1[2] - h0[2]) * 1000.0
                              if h1[2] > h0[2] else None),
            "cycles": h1[2] - h0[2],
            "controller_peak_rss_mib": round(peak, 1),
            "controller_rss_held_mib": round(held_rss, 1),
            "controller_rss_after_restart_mib": round(restart_rss, 1),
            "apiserver_peak_rss_mib": round(
                proc_kib(srv.pid, "VmHWM") / 1024.0, 1),
            "restart_to_ready_s": round(restart, 2),
            "admissions_per_s": round(CQS / t_free, 1),
            "create_s": round(t_create, 1),
            "held_s": round(t_held, 1),
            "metrics_bytes": m_bytes,
            "metrics_scrape_s": round(m_s, 3) if m_s is not None else None,
            "controller_idle_mcpu": round(idle_mcpu, 1),
            "controller_cpu_s": round(ctl_cpu, 1),
        }
        with open(os.path.join(OUT, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
        plot(samples)
        print(json.dumps(summary, indent=2))
        print("goals: cycle p99 <= 50 ms, controller RSS <= 2048 MiB, "
              "restart to Ready <= 60 s")
    finally:
        if ctl is not None:
            ctl.stop()
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(60)
        except subprocess.TimeoutExpired:
            srv.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
