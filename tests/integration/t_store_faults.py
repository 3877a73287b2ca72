# SPDX-License-Identifier: Apache-2.0
"""The SQLite ledger under faults, with the real controller and Workloads
admitted in the API server (docs/architecture.md lesson 3; store/store.h lists the
outcomes):

- corrupt ledger: moved aside to <path>.corrupt-<time> with one warning,
  a new ledger is rebuilt from the API server, the controller keeps going;
- ledger truncated to 0 bytes: a new ledger, with one warning saying the
  file was empty and the ledger is rebuilt from the API server;
- old-schema (v1) ledger: migrated at start-up ("ledger migrated from
  schema v1 to v4"), its decisions kept;
- read-only ledger (a file the controller's user cannot write; as root the
  controller runs as uid 65534, since chmod does not stop root): start-up
  fails clearly with "ledger read-only: ..." and exit 1, before any write
  to the API server; fixed, the next start carries on;
- full disk during operation (RLIMIT_FSIZE lowered on the running process
  with prlimit, so the WAL cannot grow): "ledger disk full: ..." and the
  turn's decisions are withdrawn, nothing is announced that the ledger
  does not hold; with room again the waiting Workload is admitted;
- a file-size limit that stays (a container's ulimit -f): commits fail
  once the WAL reaches it, the controller checkpoints and truncates the
  WAL after the failure, and admission resumes without a restart and
  without lifting the limit (before, the WAL was never checkpointed and
  admission stalled for good);
- the ledger deleted while the controller runs (the file only; its -wal
  and -shm stay): one warning, a new ledger at the path with the live
  decisions of the one open, the next Workload admitted and recorded in
  it, nothing lost and nothing doubled.

In every case the Workloads admitted before stay admitted (exactly one
QuotaReserved transition each, in a watch), and a new Workload is admitted
once the fault is gone. A ledger of a newer schema stops the start-up
with a message saying to upgrade or delete it."""
import glob
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

from cuetest import (BIN, CONTROLLER_CONFIG, LOGS, TEST, Failure, case,
                     check, eq, flavor_and_queue, free_port,
                     reachable_copy, run_cases, stop_process, wait_for,
                     without_visibility,
                     _die_with_parent)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
NOBODY = 65534

# The ledger's current schema (store/store.h STORE_SCHEMA_VERSION).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "store", "store.h")) as _f:
    SCHEMA = int(re.search(r"#define STORE_SCHEMA_VERSION (\d+)",
                           _f.read()).group(1))

QUEUES = flavor_and_queue(3) + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""

_n = 0


class Ctl:
    """cueue-controller with its stderr read through a pipe and copied to
    LOGS/<test>.store<n>.stderr (scanned for sanitizer reports by the
    runner). A pipe, not a file, so that a file size limit on the process
    hits the ledger only. user: run as that uid/gid (root only)."""

    def __init__(self, srv, ledger, user=None, config=CONTROLLER_CONFIG):
        global _n
        _n += 1
        d = tempfile.mkdtemp(prefix="cueue-ctl-")
        os.chmod(d, 0o755)
        self.dir = d
        cfg = os.path.join(d, "config.yaml")
        with open(cfg, "w") as f:
            f.write(without_visibility(config))
        kc = os.path.join(d, "kubeconfig")
        shutil.copy(srv.kubeconfig, kc)
        if user is not None:
            for p in (cfg, kc):
                os.chown(p, user, user)
        self.log = os.path.join(LOGS, "%s.store%d.stderr" % (TEST, _n))
        self.lines = []
        # Another user may not reach the build tree (a clone under
        # /root): it runs a copy from this directory.
        exe = reachable_copy(d) if user is not None else \
            os.path.join(BIN, "cueue-controller")
        cmd = [exe, "--config", cfg,
               "--kubeconfig", kc, "--log-level", "debug", "--store",
               ledger]

        def pre():
            _die_with_parent()
            if user is not None:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=pre)
        self._th = threading.Thread(target=self._copy, daemon=True)
        self._th.start()

    def _copy(self):
        with open(self.log, "w") as out:
            for ln in iter(self.proc.stdout.readline, b""):
                t = ln.decode(errors="replace")
                self.lines.append(t)
                out.write(t)
                out.flush()

    def text(self):
        return "".join(self.lines)

    def wait_log(self, needle, timeout=15):
        wait_for(lambda: needle in self.text(), timeout,
                 what="%r in %s" % (needle, self.log))

    def stop(self):
        stop_process(self.proc, "cueue-controller")
        self._th.join(10)
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def workload(name):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox",
                                    "resources": {"requests": {
                                        "cpu": "1"}}}]}}}]}}


def reserved(s):
    out = []
    for w in s.get_json(WLS)["items"]:
        for c in w.get("status", {}).get("conditions", []):
            if c["type"] == "QuotaReserved" and c["status"] == "True":
                out.append(w["metadata"]["name"])
    return sorted(out)


def admissions(st):
    """QuotaReserved transitions to True per Workload seen in a watch."""
    last, count = {}, {}
    for ev in st.events():
        o = ev["object"]
        n = o["metadata"]["name"]
        now = any(c["type"] == "QuotaReserved" and c["status"] == "True"
                  for c in o.get("status", {}).get("conditions", []))
        if now and not last.get(n, False):
            count[n] = count.get(n, 0) + 1
        last[n] = now
    return count


def setup(s):
    """CRDs, a 3-CPU queue, a watch on Workloads, a ledger path in a
    directory of its own. Returns (watch, ledger)."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.kubectl("apply", "-f", s.file("q.yaml", QUEUES))
    watch = s.stream(WLS + "?watch=1&timeoutSeconds=300")
    d = os.path.join(s.dir, "ledger")
    os.mkdir(d)
    os.chmod(d, 0o755)
    return watch, os.path.join(d, "ledger.db")


def admit_two(s, ledger):
    """A controller admits w1 and w2 (recorded in `ledger`) and stops."""
    c = Ctl(s, ledger)
    for n in ("w1", "w2"):
        s.raw("POST", WLS, workload(n))
    wait_for(lambda: reserved(s) == ["w1", "w2"], 20, what="w1, w2 admitted")
    eq(c.stop(), 0, "clean stop")
    check(os.path.exists(ledger), "ledger written")


def third_is_admitted_once(s, watch):
    """Once the fault is gone: w3 is admitted, w1/w2 stay admitted, and
    every Workload was admitted exactly once."""
    s.raw("POST", WLS, workload("w3"))
    wait_for(lambda: reserved(s) == ["w1", "w2", "w3"], 20,
             what="w3 admitted")
    time.sleep(0.5)
    eq(admissions(watch), {"w1": 1, "w2": 1, "w3": 1},
       "QuotaReserved transitions per Workload")


def ledger_rows(ledger):
    db = sqlite3.connect("file:%s?mode=ro" % ledger, uri=True)
    try:
        ver = db.execute("PRAGMA user_version").fetchone()[0]
        rows = dict(db.execute(
            "SELECT name, state FROM decision").fetchall())
    finally:
        db.close()
    return ver, rows


@case("corrupt-ledger-is-moved-aside-and-rebuilt")
def corrupt(s):
    watch, ledger = setup(s)
    admit_two(s, ledger)
    size = os.path.getsize(ledger)
    check(size > 4096, "ledger has data pages (%d bytes)" % size)
    with open(ledger, "r+b") as f:
        f.seek(4096)
        f.write(b"\x5a" * (size - 4096))
    c = Ctl(s, ledger)
    c.wait_log("ledger corrupt:")
    c.wait_log("a new ledger is rebuilt from the API server")
    moved = glob.glob(ledger + ".corrupt-*")
    eq(len(moved), 1, "moved-aside files %r" % moved)
    eq(os.path.getsize(moved[0]), size, "the damaged file kept as it was")
    check(moved[0] in c.text(), "the log names %s" % moved[0])
    third_is_admitted_once(s, watch)
    check(c.proc.poll() is None, "still running")
    eq(c.stop(), 0, "clean stop")
    ver, rows = ledger_rows(ledger)
    eq(ver, SCHEMA, "new ledger schema")
    eq(rows.get("w3"), 1, "w3 recorded ADMITTED in the new ledger")


@case("truncated-ledger-is-rebuilt-with-a-warning")
def truncated(s):
    watch, ledger = setup(s)
    admit_two(s, ledger)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(ledger + suffix):
            os.unlink(ledger + suffix)
    os.truncate(ledger, 0)
    c = Ctl(s, ledger)
    c.wait_log("was empty (0 bytes")
    line = [ln for ln in c.text().splitlines() if "was empty" in ln][0]
    check(ledger in line, "the warning names the file: %s" % line)
    check("rebuilt from the API server" in line, "and what follows: %s" %
          line)
    third_is_admitted_once(s, watch)
    eq(c.stop(), 0, "clean stop")
    ver, rows = ledger_rows(ledger)
    eq(ver, SCHEMA, "new ledger schema")
    eq(rows.get("w3"), 1, "w3 recorded ADMITTED in the new ledger")


@case("old-schema-ledger-is-migrated")
def old_schema(s):
    watch, ledger = setup(s)
    admit_two(s, ledger)
    db = sqlite3.connect(ledger)
    db.executescript("ALTER TABLE podset DROP COLUMN topology;"
                     "ALTER TABLE decision DROP COLUMN generation;"
                     "ALTER TABLE decision DROP COLUMN state_ns;"
                     "DROP TABLE usage; DROP TABLE mk_dispatch;"
                     "PRAGMA user_version = 1;")
    db.close()
    eq(ledger_rows(ledger), (1, {"w1": 1, "w2": 1}), "a v1 ledger")
    c = Ctl(s, ledger)
    c.wait_log("ledger migrated from schema v1 to v%d" % SCHEMA)
    third_is_admitted_once(s, watch)
    eq(c.stop(), 0, "clean stop")
    eq(ledger_rows(ledger), (SCHEMA, {"w1": 1, "w2": 1, "w3": 1}),
       "migrated, decisions kept, w3 added")


@case("read-only-ledger-fails-start-up-clearly")
def read_only(s):
    watch, ledger = setup(s)
    admit_two(s, ledger)
    os.chmod(ledger, 0o444)
    os.chmod(s.dir, 0o711)  # reachable, so only the file itself refuses
    user = NOBODY if os.geteuid() == 0 else None
    mark = s.log_mark()
    c = Ctl(s, ledger, user=user)
    try:
        c.proc.wait(30)
    except subprocess.TimeoutExpired:
        c.stop()
        raise Failure("the controller kept running on a read-only ledger")
    rc = c.stop()
    eq(rc, 1, "exit status")
    check("start-up failed: ledger read-only:" in c.text(),
          "log line, got:\n" + c.text()[-2000:])
    writes = [e for e in s.access_log(mark)
              if e["verb"] not in ("GET", "HEAD")]
    eq(writes, [], "writes to the API server before failing")
    eq(reserved(s), ["w1", "w2"], "admissions untouched")
    # The operator fixes the volume; the next start carries on.
    os.chmod(ledger, 0o600)
    c = Ctl(s, ledger)
    third_is_admitted_once(s, watch)
    eq(c.stop(), 0, "clean stop")


@case("newer-schema-ledger-fails-start-up-clearly")
def newer_schema(s):
    """Not one of the four faults, but the neighbour of an old schema: a
    ledger written by a newer cueue is refused (never downgraded, never
    moved: store/migrate.c invariant 3) and the message says what to do."""
    watch, ledger = setup(s)
    admit_two(s, ledger)
    db = sqlite3.connect(ledger)
    db.execute("PRAGMA user_version = 99")
    db.close()
    mark = s.log_mark()
    c = Ctl(s, ledger)
    try:
        c.proc.wait(30)
    except subprocess.TimeoutExpired:
        c.stop()
        raise Failure("the controller kept running on a newer ledger")
    eq(c.stop(), 1, "exit status")
    check("ledger schema version 99 is newer than this binary supports" in
          c.text(), "log line, got:\n" + c.text()[-2000:])
    eq([e for e in s.access_log(mark) if e["verb"] not in ("GET", "HEAD")],
       [], "writes to the API server before failing")
    eq(ledger_rows(ledger)[0], 99, "the ledger left as it was")
    eq(reserved(s), ["w1", "w2"], "admissions untouched")
    watch.close()


def readyz(port):
    """(status, body) of the controller's /readyz?verbose."""
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler(
                {})).open("http://127.0.0.1:%d/readyz?verbose" % port,
                          timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@case("full-disk-during-operation")
def full_disk(s):
    """Also: /readyz fails while the ledger cannot commit, and recovers."""
    watch, ledger = setup(s)
    port = free_port()
    c = Ctl(s, ledger, config=CONTROLLER_CONFIG.replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"' % port))
    for n in ("w1", "w2"):
        s.raw("POST", WLS, workload(n))
    wait_for(lambda: reserved(s) == ["w1", "w2"], 20, what="w1, w2 admitted")
    time.sleep(0.5)  # their ADMITTED state is committed too
    eq(readyz(port)[0], 200, "ready before the disk fills")
    db = ledger
    wal = ledger + "-wal"
    limit = os.path.getsize(wal) if os.path.exists(wal) else 1
    hard = resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (max(limit, 1),
                                                          hard))
    s.raw("POST", WLS, workload("w3"))
    c.wait_log("ledger disk full:")
    check("decisions of this turn are withdrawn" in c.text(),
          "the turn's decisions withdrawn")
    time.sleep(2.0)
    # Once the WAL is truncated (store_checkpoint after the failure) w3
    # may be recorded and admitted under the same limit; never announced
    # without its record.
    got = reserved(s)
    check(set(got) <= set(ledger_rows(db)[1]), "announced %r, recorded %r"
          % (got, ledger_rows(db)[1]))
    check(c.proc.poll() is None, "still running on a full disk")
    if got == ["w1", "w2"]:
        # The unauthenticated probe port withholds the reason (the log
        # has it).
        wait_for(lambda: (lambda r: r[0] == 500 and
                          "[-]ledger-open failed: reason withheld" in
                          r[1])(readyz(port)), 5,
                 what="not ready on a full disk")
        c.wait_log("readyz: ledger-open failed: ledger: the last commit "
                   "failed: ledger disk full")
    resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
    wait_for(lambda: reserved(s) == ["w1", "w2", "w3"], 20,
             what="w3 admitted once there is room")
    wait_for(lambda: readyz(port)[0] == 200, 10, what="ready again")
    time.sleep(0.5)
    eq(admissions(watch), {"w1": 1, "w2": 1, "w3": 1},
       "QuotaReserved transitions per Workload")
    eq(c.stop(), 0, "clean stop")
    eq(ledger_rows(ledger), (SCHEMA, {"w1": 1, "w2": 1, "w3": 1}),
       "every announced admission is in the ledger")


def two_admitted(s):
    """setup(), then a controller that admitted w1 and w2 and committed
    their ADMITTED state. Returns (watch, ledger, Ctl)."""
    watch, ledger = setup(s)
    c = Ctl(s, ledger)
    for n in ("w1", "w2"):
        s.raw("POST", WLS, workload(n))
    wait_for(lambda: reserved(s) == ["w1", "w2"], 20, what="w1, w2 admitted")
    time.sleep(0.5)
    return watch, ledger, c


@case("wal-limit-that-stays")
def wal_limit_stays(s):
    watch, ledger, c = two_admitted(s)
    wal = ledger + "-wal"
    limit = max(os.path.getsize(wal) if os.path.exists(wal) else 0,
                os.path.getsize(ledger)) + 16384
    hard = resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (limit, hard))
    # Workloads until a commit fails at the limit, and one more.
    n = 2
    while "ledger disk full:" not in c.text() and n < 40:
        n += 1
        s.raw("POST", WLS, workload("w%d" % n))
        time.sleep(0.3)
        # quota for 3: the third admitted frees nothing; delete the
        # admitted ones beyond w1, w2 to keep the ledger busy
        for name in reserved(s):
            if name not in ("w1", "w2"):
                s.raw("DELETE", WLS + "/" + name)
    c.wait_log("ledger disk full:")
    # Every Workload but w1 and w2 goes (admitted or not yet), so that
    # the next one has quota.
    for i in range(3, n + 1):
        s.raw("DELETE", WLS + "/w%d" % i)
    wait_for(lambda: reserved(s) == ["w1", "w2"], 30,
             what="quota freed for one more")
    last = "w%d" % (n + 1)
    s.raw("POST", WLS, workload(last))
    wait_for(lambda: last in reserved(s), 30,
             what="%s admitted while the limit stays" % last)
    check(resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE)[0] == limit,
          "the limit still in place")
    check(last in ledger_rows(ledger)[1], "%s recorded" % last)
    resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
    eq(c.stop(), 0, "clean stop")
    time.sleep(0.2)
    counts = admissions(watch)
    eq(sorted(k for k, v in counts.items() if v != 1), [],
       "each Workload admitted once: %r" % counts)


@case("ledger-deleted-while-running")
def deleted_while_running(s):
    watch, ledger, c = two_admitted(s)
    os.unlink(ledger)
    c.wait_log("was deleted (or moved away) while the controller runs")
    c.wait_log("live decisions carried over")
    check(os.path.exists(ledger), "a ledger at the path again")
    third_is_admitted_once(s, watch)
    check(c.proc.poll() is None, "still running")
    eq(c.stop(), 0, "clean stop")
    ver, rows = ledger_rows(ledger)
    eq((ver, rows), (SCHEMA, {"w1": 1, "w2": 1, "w3": 1}),
       "every admission in the new ledger, once, ADMITTED")
    eq(len([ln for ln in c.lines if "was deleted" in ln]), 1,
       "one warning")


run_cases()
