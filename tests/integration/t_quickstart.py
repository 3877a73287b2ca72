# SPDX-License-Identifier: Apache-2.0
"""scripts/quickstart.sh (make run) as a newcomer meets it: the banner
(export KUBECONFIG=..., metrics and health URLs that answer, three kubectl
commands that work), the summary once every Workload has finished, serving
on afterwards, no warning in the controller's log, and cleanup on every way
out - Ctrl-C, SIGTERM, SIGHUP and a closed output pipe: no temporary
directory and no process left. Runs the machine's kubectl."""
import os
import re
import signal
import subprocess
import sys
import time
import traceback
import urllib.request

from cuetest import BIN, LOGS, ROOT, TEST, Failure, check, eq

SCRIPT = os.path.join(ROOT, "scripts", "quickstart.sh")
DIR = re.compile(r"^  export KUBECONFIG=(/\S+)/kubeconfig$")


class Quickstart:
    """The script with its stdout on a pipe read line by line."""

    def __init__(self, name):
        self.name = name
        self.errlog = os.path.join(LOGS, "%s.%s.script.log" % (TEST, name))
        env = dict(os.environ, CUEUE_BIN=BIN, QUICKSTART_TICK="0.5",
                   QUICKSTART_LOGS=os.path.join(
                       LOGS, "%s.%s-" % (TEST, name)))
        # Its own process group: a quickstart that does not stop is
        # killed with everything it started.
        self.proc = subprocess.Popen(
            ["sh", SCRIPT], stdout=subprocess.PIPE,
            stderr=open(self.errlog, "w"), env=env, start_new_session=True)
        self.lines = []
        self.dir = None

    def read_until(self, pattern, timeout=120):
        """Lines up to and including the first matching `pattern`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ln = self.proc.stdout.readline()
            if not ln:
                raise Failure("quickstart ended before %r; stderr: %s" %
                              (pattern, open(self.errlog).read()))
            ln = ln.decode().rstrip("\n")
            self.lines.append(ln)
            m = DIR.match(ln)
            if m and self.dir is None:
                self.dir = m.group(1)
            if re.search(pattern, ln):
                return ln
        raise Failure("no %r within %ds" % (pattern, timeout))

    def banner(self):
        """Read the banner; return {kubeconfig, metrics, health, try}."""
        self.read_until(r"^==== cueue quickstart")
        start = len(self.lines) - 1
        self.read_until(r"^  Ctrl-C stops everything")
        text = self.lines[start:]
        b = {"try": []}
        for ln in text:
            m = re.match(r"^  export KUBECONFIG=(\S+)$", ln)
            if m:
                b["kubeconfig"] = m.group(1)
            m = re.match(r"^  metrics: (http://\S+/metrics)$", ln)
            if m:
                b["metrics"] = m.group(1)
            m = re.match(r"^  health:  (http://\S+/healthz) ", ln)
            if m:
                b["health"] = m.group(1)
            m = re.match(r"^  (?:try:  )?\s+(kubectl .*)$", ln)
            if m:
                b["try"].append(m.group(1))
        return b

    def stop(self, sig, want_rc):
        self.proc.send_signal(sig)
        self.finish(want_rc)

    def finish(self, want_rc):
        try:
            rc = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.killpg()
            raise Failure("quickstart did not stop")
        eq(rc, want_rc, "exit status")
        check(self.dir is not None, "no directory seen in the banner")
        check(not os.path.exists(self.dir), "%s left behind" % self.dir)
        eq(leftovers(self.dir), [], "processes left")

    def killpg(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.killpg()


def leftovers(d):
    """Processes whose command line names directory d."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if d in cmd:
            out.append("%s: %s" % (pid, cmd))
    return out


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read().decode()


def summary(q):
    """The whole flow: banner, summary, serving on, Ctrl-C."""
    b = q.banner()
    check(os.path.exists(b.get("kubeconfig", "")), "banner: %r" % b)
    code, body = http_get(b["metrics"])
    eq(code, 200, "metrics URL")
    check("kueue_admitted_workloads_total" in body, "metrics body")
    eq(http_get(b["health"]), (200, "ok"), "health URL")
    eq(len(b["try"]), 3, "kubectl commands in the banner: %r" % b["try"])
    line = q.read_until(r"^==== done in ")
    m = re.match(r"^==== done in (\d+)s: (\d+) admitted, (\d+) preempted, "
                 r"(\d+) finished \(of 5 workloads\)$", line)
    check(m, "summary line %r" % line)
    eq(m.group(2, 3, 4), ("5", "0", "5"), "admitted, preempted, finished")
    q.read_until(r"^Still serving")
    # still serving: the banner's commands work with its KUBECONFIG
    env = dict(os.environ, KUBECONFIG=b["kubeconfig"])
    for cmd in b["try"]:
        p = subprocess.run(cmd.split() + ["--cache-dir",
                                          os.path.join(q.dir, "cache2")],
                           capture_output=True, text=True, env=env,
                           timeout=60)
        eq(p.returncode, 0, "%s: %s" % (cmd, p.stderr))
        check(p.stdout.strip() and not p.stderr.strip(),
              "%s: %r %r" % (cmd, p.stdout, p.stderr))
        if cmd == "kubectl get workloads":
            rows = p.stdout.splitlines()[1:]
            eq(len(rows), 5, "workload rows")
            for r in rows:
                check(re.search(r"\sTrue\s+True\s", r),
                      "ADMITTED and FINISHED in %r" % r)
    # no warning about a webhook certificate the quickstart never uses
    # (a 409 retried against the simulator's status writes may be logged)
    with open(os.path.join(q.dir, "controller.log")) as f:
        warned = [ln for ln in f if " warn " in ln and
                  ("webhook" in ln or "certificate" in ln)]
    eq(warned, [], "controller warnings about webhooks")
    with open(os.path.join(q.dir, "apiserver.log")) as f:
        check("last-applied" not in f.read(), "apiserver log")
    q.stop(signal.SIGINT, 0)


def on_signal(sig, rc):
    def run(q):
        q.banner()
        q.stop(sig, rc)
    return run


def closed_pipe(q):
    q.banner()
    q.proc.stdout.close()  # the next progress line or the summary fails
    q.finish(141)


CASES = [("QS-summary-sigint", summary),
         ("QS-sigterm", on_signal(signal.SIGTERM, 0)),
         ("QS-sighup", on_signal(signal.SIGHUP, 129)),
         ("QS-sigpipe", closed_pipe)]


def main():
    only = os.environ.get("CASE")
    passed = failed = 0
    for name, fn in CASES:
        if only and name not in only.split(","):
            continue
        start = time.time()
        q = Quickstart(name)
        try:
            fn(q)
            passed += 1
            print("  ok   %s (%.1fs)" % (name, time.time() - start),
                  flush=True)
        except Exception:
            failed += 1
            print("  FAIL %s (%.1fs)" % (name, time.time() - start),
                  flush=True)
            traceback.print_exc()
            print("  output:\n    " + "\n    ".join(q.lines[-40:]))
        finally:
            q.kill()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
