# SPDX-License-Identifier: Apache-2.0
"""Hostile input against cueue-controller's own ports and caches.

- Slowloris: many connections trickling a request one byte at a time
  against the health, metrics and (TLS) webhook ports. A normal client
  keeps getting answers within a few seconds, and every slow connection
  is cut after the request deadline (10 s by default).
- Oversized and deeply nested input: a 100k-level JSON AdmissionReview
  (400), an oversized one with and without Content-Length (413), a
  100 KiB header (refused), a 100k-level YAML configuration (the
  controller exits with a clear error). The controller stays up.
- A flood of 2,000 updates to one managed Job keeps the controller's
  writes (events included) and its memory bounded (VmRSS from
  /proc/<pid>/status before and after)."""
import os
import select
import socket
import ssl
import subprocess
import threading
import time
import urllib.request

from cuetest import (BIN, CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, free_port, mint_certs, run_cases,
                     wait_for)

REQUEST_DEADLINE_S = 10  # CTL_HTTPD_DEFAULT_CONN_TIMEOUT_S
WH_HOST = "cueue-webhook-service.cueue-system.svc"


def certs(s):
    d = os.path.join(s.dir, "webhook-certs")
    os.mkdir(d)
    mint_certs(d, "DNS:" + WH_HOST)
    os.rename(os.path.join(d, "srv.crt"), os.path.join(d, "tls.crt"))
    os.rename(os.path.join(d, "srv.key"), os.path.join(d, "tls.key"))
    return d


def config(hport, mport, wport, cert_dir):
    return CONTROLLER_CONFIG.replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"' % hport).replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % mport) + """\
namespace: cueue-system
webhook:
  port: %d
  host: 127.0.0.1
  certDir: %s
manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
""" % (wport, cert_dir)


def http_get(port, path, timeout=5):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=timeout) as r:
        return r.status, r.read()


def tls_ctx(cert_dir):
    ctx = ssl.create_default_context(cafile=os.path.join(cert_dir,
                                                         "ca.crt"))
    return ctx


def raw_request(port, data, cert_dir=None, timeout=10, chunks=None):
    """Send `data` (bytes) on a new connection (TLS when cert_dir) and
    return (status code or None if the server closed without one, the
    whole answer). chunks: more byte strings sent after data."""
    so = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if cert_dir:
        so = tls_ctx(cert_dir).wrap_socket(so, server_hostname=WH_HOST)
    got = b""
    try:
        so.sendall(data)
        for c in chunks or ():
            so.sendall(c)
        so.settimeout(timeout)
        while True:
            b = so.recv(65536)
            if not b:
                break
            got += b
            if b"\r\n\r\n" in got:
                head, _, body = got.partition(b"\r\n\r\n")
                n = [ln for ln in head.split(b"\r\n")
                     if ln.lower().startswith(b"content-length:")]
                if n and len(body) >= int(n[0].split(b":")[1]):
                    break
    except (ConnectionError, ssl.SSLError, socket.timeout):
        pass
    finally:
        so.close()
    if not got.startswith(b"HTTP/1."):
        return None, got
    return int(got.split(b" ", 2)[1]), got


def post(path, body, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n"
            % (path.encode(), len(body), extra)) + body


def review(obj_json):
    return (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",'
            b'"request":{"uid":"u-1","kind":{"group":"batch","version":"v1",'
            b'"kind":"Job"},"resource":{"group":"batch","version":"v1",'
            b'"resource":"jobs"},"namespace":"team","operation":"CREATE",'
            b'"userInfo":{"username":"alice"},"object":' + obj_json + b'}}')


SMALL_JOB = (b'{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j",'
             b'"namespace":"team"},"spec":{"template":{"spec":{'
             b'"containers":[{"name":"c","image":"i"}]}}}}')


def webhook_ok(wport, cert_dir):
    code, got = raw_request(wport, post("/mutate-batch-v1-job",
                                        review(SMALL_JOB)), cert_dir, 5)
    # Any decided review will do.
    return code == 200 and b'"AdmissionReview"' in got


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def crds(s):
    s.kubectl("apply", "-f", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..",
        "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")


def start(s, cert_dir, env=None):
    crds(s)
    hport, mport, wport = free_port(), free_port(), free_port()
    ctl = Controller(s, config=config(hport, mport, wport, cert_dir),
                     env=env)
    wait_for(lambda: _quiet(lambda: http_get(hport, "/healthz")[0] == 200),
             20, what="health port")
    wait_for(lambda: _quiet(lambda: webhook_ok(wport, cert_dir)), 20,
             what="webhook port")
    return ctl, hport, mport, wport


def _quiet(fn):
    try:
        return fn()
    except (OSError, ValueError):
        return False


class Slowloris:
    """n connections per port, each sending one byte of an endless
    request every `every` seconds from one thread; records when the
    server closed each."""

    def __init__(self, ports, n, every=0.5, tls=None):
        """ports: plain ports; tls: (port, cert_dir) whose connections
        complete the TLS handshake first and trickle inside it."""
        self.lock = threading.Lock()
        self.conns = []  # [sock, port, opened, closed_at or None]
        targets = [(p, None) for p in ports] + ([tls] if tls else [])
        for p, d in targets:
            for _ in range(n):
                so = socket.create_connection(("127.0.0.1", p), timeout=5)
                if d:
                    so = tls_ctx(d).wrap_socket(so, server_hostname=WH_HOST)
                so.setblocking(False)
                self.conns.append([so, p, time.time(), None])
        self.data = (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" +
                     b"X-Slow: " + b"a" * 1000000)
        self.pos = 0
        self.every = every
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop_ev.wait(self.every):
            b = self.data[self.pos:self.pos + 1]
            self.pos += 1
            for c in self.conns:
                if c[3] is not None:
                    continue
                so = c[0]
                try:
                    r, _, _ = select.select([so], [], [], 0)
                    if r:
                        try:
                            if not so.recv(4096):
                                raise ConnectionResetError()
                        except (ssl.SSLWantReadError,
                                ssl.SSLWantWriteError):
                            pass
                    so.send(b)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    pass
                except (OSError, ValueError):
                    with self.lock:
                        c[3] = time.time()

    def open_count(self):
        with self.lock:
            return sum(1 for c in self.conns if c[3] is None)

    def lifetimes(self):
        with self.lock:
            return [c[3] - c[2] for c in self.conns if c[3] is not None]

    def close(self):
        self.stop_ev.set()
        self.t.join(5)
        for c in self.conns:
            c[0].close()


@case("slowloris-health-metrics-webhook")
def slowloris(s):
    s.namespace("cueue-system")
    d = certs(s)
    ctl, hport, mport, wport = start(s, d)
    t0 = time.time()
    slow = Slowloris([hport, mport], 40, tls=(wport, d))
    worst = 0.0
    try:
        # Normal clients, once a second, until the deadline has passed.
        while time.time() - t0 < REQUEST_DEADLINE_S + 3:
            a = time.time()
            eq(http_get(hport, "/healthz", timeout=5)[0], 200, "healthz")
            eq(http_get(mport, "/metrics", timeout=5)[0], 200, "metrics")
            check(webhook_ok(wport, d), "webhook answers")
            worst = max(worst, time.time() - a)
            time.sleep(1.0)
        check(worst < 3.0, "normal clients waited %.1fs" % worst)
        wait_for(lambda: slow.open_count() == 0, REQUEST_DEADLINE_S,
                 what="every slow connection cut (%d open)" %
                 slow.open_count())
        lt = slow.lifetimes()
        check(min(lt) >= REQUEST_DEADLINE_S - 1.5,
              "cut too early: %.1fs" % min(lt))
        check(max(lt) <= REQUEST_DEADLINE_S + 5,
              "cut too late: %.1fs" % max(lt))
        print("    slowloris: %d connections cut after %.1f..%.1fs; "
              "normal clients answered within %.2fs" %
              (len(lt), min(lt), max(lt), worst), flush=True)
    finally:
        slow.close()
    check(ctl.alive(), "controller alive")
    ctl.stop()


@case("oversized-and-deeply-nested-input")
def oversized(s):
    s.namespace("cueue-system")
    d = certs(s)
    ctl, hport, mport, wport = start(s, d)
    # 100,000 levels of JSON nesting inside request.object: 400 with the
    # parser's message, not a crash (jansson stops at depth 2048).
    deep = b"[" * 100000 + b"]" * 100000
    code, got = raw_request(wport, post("/validate-batch-v1-job",
                                        review(deep)), d)
    eq(code, 400, "deep JSON: %r" % got[:300])
    check(b"invalid JSON" in got and b"depth" in got, got[:400])
    # Oversized AdmissionReview: Content-Length says so -> 413 at once.
    # The answer comes before the body is read, so send the head only
    # (a client writing on would see its connection reset).
    big = review(b'{"x":"' + b"a" * (4 << 20) + b'"}')
    head = post("/validate-batch-v1-job", big)[:-len(big)]
    code, got = raw_request(wport, head, d)
    eq(code, 413, "oversized with Content-Length: %r" % got[:300])
    # The same without Content-Length (chunked): read, capped, 413.
    head = (b"POST /validate-batch-v1-job HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked"
            b"\r\nConnection: close\r\n\r\n")
    chunk = b"a" * 65536
    body = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 64 + [b"0\r\n\r\n"]
    code, got = raw_request(wport, head, d, chunks=body)
    eq(code, 413, "oversized chunked: %r" % got[:300])
    # Headers beyond the per-connection memory: refused, never served.
    for port, tls in ((hport, None), (wport, d)):
        code, got = raw_request(
            port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
            b"a" * (100 << 10) + b"\r\n\r\n", tls)
        check(code is None or code in (400, 413, 431),
              "100 KiB header on %d: %r" % (port, got[:200]))
    # Oversized bodies on the plain ports too.
    code, got = raw_request(hport, post("/healthz", b"a" * (2 << 20))[
        :-(2 << 20)])
    check(code in (405, 413), "health POST: %r" % got[:200])
    eq(http_get(hport, "/healthz")[0], 200, "healthz still served")
    check(webhook_ok(wport, d), "webhook still served")
    check(ctl.alive(), "controller alive")
    ctl.stop()

    # A 100,000-level YAML configuration: a clear error, no crash.
    cfg = os.path.join(s.dir, "deep.yaml")
    with open(cfg, "w") as f:
        f.write(CONTROLLER_CONFIG + "integrations:\n  x: " +
                "[" * 100000 + "]" * 100000 + "\n")
    p = subprocess.run([os.path.join(BIN, "cueue-controller"), "--config",
                        cfg, "--kubeconfig", s.kubeconfig],
                       capture_output=True, timeout=60)
    out = (p.stdout + p.stderr).decode(errors="replace")
    check(p.returncode not in (0, -6, -11) and p.returncode < 128,
          "deep YAML exit %d: %s" % (p.returncode, out[-500:]))
    check("deep" in out.lower() or "depth" in out.lower() or
          "nest" in out.lower(), "deep YAML message: %s" % out[-500:])
    check("Sanitizer" not in out, out[-2000:])


@case("update-flood-bounded", simulate="jobs")
def flood(s):
    crds(s)
    s.kubectl("apply", "-f", s.file("q.yaml", flavor_and_queue(1)))
    s.namespace("team")
    s.namespace("cueue-system")
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues",
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "team"},
         "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)
    # Quarantine and stacks of ASan would dominate RSS: keep them small.
    env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
           ":quarantine_size_mb=4:malloc_context_size=8"}
    ctl = Controller(s, config=CONTROLLER_CONFIG, env=env)
    # A job that does not fit (2 cpu of 1): it stays pending, so every
    # update reaches the reconciler with the Workload in place.
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "hot", "namespace": "team",
                        "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
           "spec": {"parallelism": 1, "suspend": True, "template": {
               "spec": {"containers": [{
                   "name": "c", "image": "busybox",
                   "resources": {"requests": {"cpu": "2"}}}],
                   "restartPolicy": "Never"}}}}
    code, _, body = s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                          job)
    eq(code, 201, "create: %r" % body)
    wl = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads"
    wait_for(lambda: len(s.get_json(wl)["items"]) == 1, 20,
             what="Workload created")
    path = "/apis/batch/v1/namespaces/team/jobs/hot"
    hdr = {"Content-Type": "application/merge-patch+json"}

    def patches(a, b):
        for i in range(a, b):
            code, _, body = s.raw("PATCH", path, {"metadata": {
                "annotations": {"flood": str(i)}}}, headers=hdr)
            eq(code, 200, "patch %d: %r" % (i, body))

    patches(0, 200)  # warm-up: caches, buffers, first events
    time.sleep(2.0)
    mark = s.log_mark()
    rss0 = rss_kib(ctl.proc.pid)
    patches(200, 1100)
    rss1 = rss_kib(ctl.proc.pid)
    patches(1100, 2000)
    time.sleep(3.0)  # let the controller drain its watch
    rss2 = rss_kib(ctl.proc.pid)
    writes = [e for e in s.access_log(mark)
              if e["userAgent"].startswith("cueue-controller/")
              and e["verb"] not in ("GET", "LIST", "WATCH")]
    events = [e for e in writes if "/events" in e["path"]]
    print("    flood: 1800 patches -> %d controller writes (%d event "
          "writes); VmRSS %d -> %d -> %d KiB" %
          (len(writes), len(events), rss0, rss1, rss2), flush=True)
    check(len(events) <= 5, "event writes: %r" %
          [(e["verb"], e["path"]) for e in events[:20]])
    check(len(writes) <= 20, "controller writes: %r" %
          [(e["verb"], e["path"]) for e in writes[:20]])
    check(rss2 - rss0 < 64 * 1024, "RSS grew %d KiB" % (rss2 - rss0))
    check(rss2 - rss1 < 32 * 1024, "RSS still growing: %d KiB in the "
          "second half" % (rss2 - rss1))
    check(ctl.alive(), "controller alive")
    ctl.stop()


if __name__ == "__main__":
    run_cases()
