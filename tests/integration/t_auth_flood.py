# SPDX-License-Identifier: Apache-2.0
"""Nobody outside spends the controller's API budget (issue 32).

- auth-flood: the controller runs with clientConnection qps 20, burst 30,
  secure metrics and the visibility server. 50 connections (300 in make
  soak) on each of the metrics and visibility ports (from five addresses
  each, 127.0.0.2 to 127.0.0.11) send request after request with made-up
  bearer tokens.
  While they hold their connections:
  - a Job created in a managed namespace is admitted (unsuspended);
  - a scrape with a bound token and a visibility request with an admin
    token, both from 127.0.0.1, are answered 200;
  - the API server saw no TokenReview from the controller's own client
    (every review carries the reviews client's User-Agent), and the
    reviews stayed within the limits of controller/mauth.h: per flooding
    address at most the failed-authentication burst plus its refill rate
    over the flood's duration plus the reviews in flight at its end;
  - the controller's log grew by a few rate-limited summary lines only.
  The time from the Job's creation to its admission is printed (the
  README's Reliability section quotes it); no assertion is made on it."""
import asyncio
import os
import random
import resource
import ssl
import string
import tempfile
import threading
import time
import urllib.error
import urllib.request

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, queued_job, queues_setup, run_cases,
                     wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
TR = "/apis/authentication.k8s.io/v1/tokenreviews"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
READER_SA = "system:serviceaccount:monitoring:prometheus-k8s"
# 300 connections per port in make soak (AUTH_FLOOD_PER_PORT=300); the
# servers hold 248 each at most (their connection limit less headroom).
PER_PORT = int(os.environ.get("AUTH_FLOOD_PER_PORT", "50"))
# Connections up at once, both ports together: near its connection limit
# a server cuts the connection that waited longest for a request in
# favour of a new one, so a flood that reconnects at once keeps only
# part of its connections open.
HELD = int(2 * min(PER_PORT, 248) * 0.5)
ADDRESSES = 5  # per port, each within the per-IP limit (64)
FAIL_BURST = 10  # CTL_MAUTH_FAIL_BURST
FAIL_PER_S = 1.0  # CTL_MAUTH_FAIL_PER_S
PER_IP_INFLIGHT = 8  # CTL_MAUTH_PER_IP_INFLIGHT
VIS_CQ = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/" \
    "pendingworkloads"


def tls_ctx():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def get(port, path, token):
    """(status, body) of GET https://127.0.0.1:port/path with token."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=tls_ctx()))
    req = urllib.request.Request(
        "https://127.0.0.1:%d%s" % (port, path),
        headers={"Authorization": "Bearer " + token})
    try:
        with opener.open(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, OSError) as e:
        return None, str(e)


class Flood:
    """PER_PORT keep-alive TLS connections per port, from ADDRESSES
    source addresses each, each sending GETs with a made-up token, one
    after the other, and reconnecting when the server closes it. Runs an
    asyncio loop in a thread; `open` is how many connections are up."""

    def __init__(self, ports, path):
        self.ports, self.path = ports, path
        self.open = 0
        self.sent = 0
        self.codes = {}
        self.errors = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)

    def start(self):
        self.thread.start()

    async def _one(self, port, source):
        ctx = tls_ctx()
        while not self.stop.is_set():
            try:
                r, w = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", port, ssl=ctx, local_addr=(source, 0)), 30)
            except (OSError, asyncio.TimeoutError, ssl.SSLError) as e:
                k = type(e).__name__
                self.errors[k] = self.errors.get(k, 0) + 1
                await asyncio.sleep(0.2)
                continue
            self.open += 1
            try:
                while not self.stop.is_set():
                    tok = "".join(random.choice(string.ascii_letters)
                                  for _ in range(24))
                    w.write(("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: "
                             "Bearer %s\r\n\r\n" % (self.path[port], tok))
                            .encode())
                    await w.drain()
                    head = await asyncio.wait_for(
                        r.readuntil(b"\r\n\r\n"), 30)
                    code = int(head.split(b" ")[1])
                    self.codes[code] = self.codes.get(code, 0) + 1
                    self.sent += 1
                    n = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            n = int(line.split(b":")[1])
                    if n:
                        await r.readexactly(n)
                    if code == 429:
                        await asyncio.sleep(0.05)
            except (OSError, asyncio.IncompleteReadError,
                    asyncio.LimitOverrunError, asyncio.TimeoutError,
                    ssl.SSLError, ValueError, IndexError) as e:
                k = "io:" + type(e).__name__
                self.errors[k] = self.errors.get(k, 0) + 1
            finally:
                self.open -= 1
                w.close()

    async def _all(self):
        tasks = []
        for port in self.ports:
            for i in range(PER_PORT):
                source = "127.0.0.%d" % (2 + self.ports.index(port) *
                                         ADDRESSES + i % ADDRESSES)
                tasks.append(asyncio.ensure_future(self._one(port, source)))
                if i % 10 == 9:
                    await asyncio.sleep(0.2)
        while not self.stop.is_set():
            await asyncio.sleep(0.2)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _main(self):
        asyncio.run(self._all())

    def halt(self):
        self.stop.set()
        self.thread.join(60)


def log_lines(path):
    with open(path) as f:
        return f.read().splitlines()


@case("auth-flood", tls=True)
def auth_flood(s):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    queues_setup(s, 9, namespaces=("cueue-system",))
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "rbac",
                                          "metrics_reader_role.yaml"))
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "prometheus",
                                          "metrics_reader_binding.yaml"))
    code, _, body = s.raw("POST", "/__test/tokens", {"add": [
        {"token": "reader-token", "user": READER_SA},
        {"token": "admin-token", "user": "root",
         "groups": ["system:masters"]}]})
    eq(code, 200, "tokens: %r" % body)
    mport, vport = free_port(), free_port()
    cfg = CONTROLLER_CONFIG.replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % mport) + (
        "namespace: cueue-system\nclientConnection:\n  qps: 20\n"
        "  burst: 30\nvisibilityServer:\n  bindPort: %d\n"
        "  bindAddress: 127.0.0.1\n" % vport)
    certs = tempfile.mkdtemp(dir=s.dir)
    ctl = Controller(s, config=cfg, args=["--metrics-secure",
                                          "--log-level", "info"],
                     env={"CUEUE_VISIBILITY_CERT_DIR": certs})
    wait_for(lambda: get(mport, "/metrics", "reader-token")[0] == 200 and
             get(vport, VIS_CQ, "admin-token")[0] == 200, 30,
             what="metrics and visibility answering")
    # A first Job: the controller is admitting.
    eq(s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
             queued_job("team", "warm"))[0], 201, "Job warm")
    wait_for(lambda: not s.get_json("/apis/batch/v1/namespaces/team/jobs/"
                                    "warm")["spec"].get("suspend"), 30,
             what="Job warm admitted")
    mark = s.log_mark()
    lines_before = len(log_lines(ctl.log))
    flood = Flood([mport, vport], {mport: "/metrics", vport: VIS_CQ})
    t_flood = time.monotonic()
    flood.start()
    try:
        try:
            wait_for(lambda: flood.sent >= 200 and (
                flood.open >= HELD or PER_PORT > 248), 120,
                     what="the flood holding %d connections" % HELD)
        except Exception:
            print("open %d sent %d codes %r errors %r" % (
                flood.open, flood.sent, flood.codes, flood.errors))
            raise
        time.sleep(2)
        held = flood.open
        t0 = time.monotonic()
        eq(s.raw("POST", "/apis/batch/v1/namespaces/team/jobs",
                 queued_job("team", "j1"))[0], 201, "Job j1")
        wait_for(lambda: not s.get_json("/apis/batch/v1/namespaces/team/"
                                        "jobs/j1")["spec"].get("suspend"),
                 60, what="Job j1 admitted under the flood")
        took = time.monotonic() - t0
        held = min(held, flood.open)
        scrape = get(mport, "/metrics", "reader-token")
        vis = get(vport, VIS_CQ, "admin-token")
        held = min(held, flood.open)
        sent = flood.sent
    finally:
        flood.halt()
    flood_s = time.monotonic() - t_flood
    print("    Job admitted %.3f s after its creation while the flood held "
          "%d connections (%d requests, answers %r)" %
          (took, held, sent, flood.codes), flush=True)
    # Beyond a server's connection limit the flood's own reconnections
    # cut its idle connections: only below it must they all stay up.
    if PER_PORT <= 248:
        check(held >= HELD // 2, "the flood held its connections during "
              "the admission: %d" % held)
    eq(scrape[0], 200, "a legitimate scrape during the flood: %s" %
       (scrape[1][:200],))
    eq(vis[0], 200, "a visibility request during the flood: %s" %
       (vis[1][:200],))
    check(sent > 200, "the flood sent requests: %d" % sent)
    log = s.access_log(mark)
    reviews = [e for e in log if e["verb"] == "POST" and
               e["path"] in (TR, SAR)]
    eq([e for e in reviews if "(reviews)" not in e.get("userAgent", "")],
       [], "reviews only through the reviews client")
    bound = 2 * ADDRESSES * (FAIL_BURST + FAIL_PER_S * flood_s +
                             PER_IP_INFLIGHT) + 10
    n_tr = sum(1 for e in reviews if e["path"] == TR)
    print("    %d TokenReviews in %.1f s (bound %d)" % (n_tr, flood_s, bound),
          flush=True)
    check(n_tr <= bound, "TokenReviews within the limits: %d > %d" %
          (n_tr, bound))
    grown = log_lines(ctl.log)[lines_before:]
    check(len(grown) <= 12, "the log grew by %d lines:\n%s" %
          (len(grown), "\n".join(grown[:30])))
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
