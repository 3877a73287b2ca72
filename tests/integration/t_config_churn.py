# SPDX-License-Identifier: Apache-2.0
"""Configuration churn does not stall admission (issue 32).

- flavor-churn: while 2,000 ResourceFlavors (10,000 in make soak,
  CHURN_FLAVORS=10000) are created and then deleted as fast as four
  clients can, Jobs of an unrelated ClusterQueue keep being created; each
  is admitted (unsuspended). The controller synced its configuration far
  fewer times than there were events (one engine rebuild per batch, not
  one per event: its debug line "configuration synced" is counted), and
  it sent no more ResourceFlavor finalizer writes than their budget
  allows (a quarter of clientConnection qps 20, burst 10). The slowest admission is printed (the README's
  Reliability section quotes a release build's); no assertion is made on
  times."""
import http.client
import json
import os
import ssl
import threading
import time

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     queued_job, queues_setup, run_cases, wait_for)

FLAVORS = int(os.environ.get("CHURN_FLAVORS", "2000"))
QPS = 20  # clientConnection.qps: finalizers get a quarter of it
FINALIZER_BURST = 10  # controller/pipeline.c CTL_REPORT_BURST
CLIENTS = 4
RF = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
JOBS = "/apis/batch/v1/namespaces/team/jobs"


class Churn:
    """CLIENTS threads creating FLAVORS ResourceFlavors, then deleting
    them, over keep-alive connections; `phase` says how far it got."""

    def __init__(self, s):
        self.s = s
        self.phase = "create"
        self.errors = []
        self.done = threading.Event()
        # A phase starts once a Job was created in it: on a fast machine
        # the deletes can take less than the creator's one second.
        self.job_in = {"create": threading.Event(),
                       "delete": threading.Event()}
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _conn(self):
        u = self.s.url.split("://", 1)[1]
        host, port = u.rsplit(":", 1)
        ctx = self.s.ctx or ssl.create_default_context()
        return http.client.HTTPSConnection(host, int(port), context=ctx,
                                           timeout=60)

    def _worker(self, lo, hi, method):
        c = self._conn()
        hdr = {"Authorization": "Bearer " + self.s.token,
               "Content-Type": "application/json"}
        for i in range(lo, hi):
            name = "churn-%05d" % i
            if method == "POST":
                body = json.dumps({"apiVersion": "kueue.x-k8s.io/v1beta2",
                                   "kind": "ResourceFlavor",
                                   "metadata": {"name": name}})
                c.request("POST", RF, body, hdr)
            else:
                c.request("DELETE", RF + "/" + name, None, hdr)
            r = c.getresponse()
            r.read()
            if r.status not in (200, 201, 202):
                self.errors.append((method, name, r.status))
        c.close()

    def _run(self, method):
        per = (FLAVORS + CLIENTS - 1) // CLIENTS
        ts = [threading.Thread(target=self._worker,
                               args=(i * per, min(FLAVORS, (i + 1) * per),
                                     method)) for i in range(CLIENTS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def _main(self):
        self.job_in["create"].wait(30)
        self._run("POST")
        self.phase = "delete"
        self.job_in["delete"].wait(30)
        self._run("DELETE")
        self.phase = "done"
        self.done.set()

    def start(self):
        self.thread.start()


def suspended(s, name):
    return s.get_json(JOBS + "/" + name)["spec"].get("suspend")


@case("flavor-churn", tls=True)
def flavor_churn(s):
    queues_setup(s, 1000)
    ctl = Controller(s, config=CONTROLLER_CONFIG +
                     "clientConnection:\n  qps: %d\n  burst: 30\n" % QPS)
    eq(s.raw("POST", JOBS, queued_job("team", "warm", "100m"))[0], 201,
       "Job warm")
    wait_for(lambda: not suspended(s, "warm"), 30, what="Job warm admitted")
    mark = s.log_mark()
    t_start = time.monotonic()
    churn = Churn(s)
    jobs = []  # (name, churn phase at creation, creation time)
    admitted = {}  # name -> first time seen unsuspended
    stop = threading.Event()

    def create():
        # One Job a second while the churn runs (and three after),
        # without waiting for their admission.
        n = 0
        while not churn.done.is_set() or n < 3:
            n += 1
            name = "j%d" % n
            phase, t0 = churn.phase, time.monotonic()
            eq(s.raw("POST", JOBS, queued_job("team", name, "100m"))[0],
               201, "Job " + name)
            jobs.append((name, phase, t0))
            if phase in churn.job_in:
                churn.job_in[phase].set()
            # One second, or less when the churn enters a new phase.
            for _ in range(20):
                if churn.phase != phase:
                    break
                time.sleep(0.05)

    def observe():
        while not stop.is_set():
            for j in s.get_json(JOBS)["items"]:
                n = j["metadata"]["name"]
                if n not in admitted and not j["spec"].get("suspend"):
                    admitted[n] = time.monotonic()
            time.sleep(0.1)
    creator = threading.Thread(target=create, daemon=True)
    watcher = threading.Thread(target=observe, daemon=True)
    watcher.start()
    churn.start()
    creator.start()
    creator.join(600)
    wait_for(lambda: all(name in admitted for name, _, _ in jobs), 120,
             what="every Job created during the churn admitted")
    stop.set()
    watcher.join(10)
    times = [admitted[name] - t0 for name, _, t0 in jobs]
    for ph in ("create", "delete", "done"):
        pt = sorted(admitted[n] - t0 for n, p, t0 in jobs if p == ph)
        if pt:
            print("    while %s: %d Jobs, slowest %.3f s, median %.3f s" %
                  (ph, len(pt), pt[-1], pt[len(pt) // 2]), flush=True)
    phases = {phase for _, phase, _ in jobs}
    eq(churn.errors[:5], [], "the churn's requests")
    check({"create", "delete"} <= phases, "Jobs created while flavors "
          "were created and while they were deleted: %r" % phases)
    print("    %d flavors created and deleted; %d Jobs admitted during the "
          "churn, slowest %.3f s, median %.3f s" %
          (FLAVORS, len(times), max(times), sorted(times)[len(times) // 2]),
          flush=True)
    with open(ctl.log) as f:
        syncs = sum(1 for line in f if "configuration synced" in line)
    print("    %d configuration syncs for %d flavor events" %
          (syncs, 2 * FLAVORS), flush=True)
    check(syncs <= 2 * FLAVORS // 10, "configuration syncs batched: %d for "
          "%d events" % (syncs, 2 * FLAVORS))
    patches = [e for e in s.access_log(mark) if e["verb"] == "PATCH" and
               e["path"].startswith(RF + "/churn-")]
    elapsed = time.monotonic() - t_start
    bound = FINALIZER_BURST + QPS / 4.0 * elapsed + 5
    print("    %d flavor finalizer writes in %.1f s (budget %d)" %
          (len(patches), elapsed, bound), flush=True)
    check(len(patches) <= bound, "finalizer writes within their budget: "
          "%d > %d" % (len(patches), bound))
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
