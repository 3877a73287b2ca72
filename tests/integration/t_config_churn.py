# SPDX-License-Identifier: Apache-2.0
"""Configuration churn does not stall admission (issue 32).

- flavor-churn: while 2,000 ResourceFlavors (10,000 in make soak,
  CHURN_FLAVORS=10000) are created and then deleted as fast as four
  clients can, Jobs of an unrelated ClusterQueue keep being created; each
  is admitted (unsuspended). The controller synced its configuration far
  fewer times than there were events (one engine rebuild per batch, not
  one per event: its debug line "configuration synced" is counted), and
  it sent no more ResourceFlavor finalizer writes than its finalizer
  budget allows. The slowest admission is printed (the README's
  Reliability section quotes a release build's); no assertion is made on
  times."""
import http.client
import json
import os
import ssl
import threading
import time

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     flavor_and_queue, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
FLAVORS = int(os.environ.get("CHURN_FLAVORS", "2000"))
CLIENTS = 4
RF = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
JOBS = "/apis/batch/v1/namespaces/team/jobs"


def job(name):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "team",
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"parallelism": 1, "suspend": True,
                     "template": {"spec": {
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {
                                             "cpu": "100m"}}}],
                         "restartPolicy": "Never"}}}}


class Churn:
    """CLIENTS threads creating FLAVORS ResourceFlavors, then deleting
    them, over keep-alive connections; `phase` says how far it got."""

    def __init__(self, s):
        self.s = s
        self.phase = "create"
        self.errors = []
        self.done = threading.Event()
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
        self._run("POST")
        self.phase = "delete"
        self._run("DELETE")
        self.phase = "done"
        self.done.set()

    def start(self):
        self.thread.start()


def suspended(s, name):
    return s.get_json(JOBS + "/" + name)["spec"].get("suspend")


@case("flavor-churn", tls=True)
def flavor_churn(s):
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("team")
    s.kubectl("apply", "-f", s.file("queues.yaml", flavor_and_queue(1000)))
    code, _, body = s.raw(
        "POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues",
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "team"},
         "spec": {"clusterQueue": "cq"}})
    eq(code, 201, "LocalQueue: %r" % body)
    ctl = Controller(s, config=CONTROLLER_CONFIG)
    eq(s.raw("POST", JOBS, job("warm"))[0], 201, "Job warm")
    wait_for(lambda: not suspended(s, "warm"), 30, what="Job warm admitted")
    mark = s.log_mark()
    churn = Churn(s)
    churn.start()
    times, phases, n = [], set(), 0
    while not churn.done.is_set() or n < 3:
        n += 1
        name = "j%d" % n
        phase = churn.phase
        t0 = time.monotonic()
        eq(s.raw("POST", JOBS, job(name))[0], 201, "Job " + name)
        wait_for(lambda: not suspended(s, name), 120,
                 what="Job %s admitted during the churn (%s)" % (name, phase))
        times.append(time.monotonic() - t0)
        phases.add(phase)
        time.sleep(0.5)
    eq(churn.errors[:5], [], "the churn's requests")
    check({"create", "delete"} <= phases, "Jobs admitted while flavors "
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
    print("    %d flavor finalizer writes" % len(patches), flush=True)
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
