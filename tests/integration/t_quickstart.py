# SPDX-License-Identifier: Apache-2.0
"""scripts/quickstart.sh (make run) as a newcomer meets it, with the
machine's kubectl.

- QS-readme: the banner (export KUBECONFIG=... and PATH=... lines, metrics
  and health URLs that answer, webhook and visibility ports, the commands
  to try and the next three), the summary once every Workload has
  finished, serving on afterwards; then every command the banner shows
  and every kubectl command of the README's quickstart block, run as
  written from the repository with the banner's two lines pasted: v1beta1
  apply and get through the conversion webhook, the visibility API's
  --raw call, `kubectl cueue pending` answered by the visibility API (its
  header, not the local fallback's note), a Job created unsuspended and
  suspended by the admission webhook; no warning in the controller's log.
- QS-explain: `kubectl explain` of three enum fields (reclaimWithinCohort,
  queueingStrategy, stopPolicy) describes every value (kubectl 1.27 and
  later: kubectl 1.20 cannot explain custom resources here, skipped).
- QS-sigint, QS-sigterm, QS-sighup, QS-sigpipe: cleanup on every way out
  - no temporary directory and no process left.
- QS-make-ctrl-c: `make run` at a terminal (a pty), Ctrl-C: make exits 0
  without "Interrupt" and nothing is left.
"""
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.request

from cuetest import (BIN, LOGS, ROOT, TEST, Failure, check, eq,
                     kubectl_minor)
from cuetest.cases import Skipped

SCRIPT = os.path.join(ROOT, "scripts", "quickstart.sh")
DIR = re.compile(r"^  export KUBECONFIG=(/\S+)/kubeconfig$")
VIS = ("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/"
       "cluster-queue/pendingworkloads")


def default_signals():
    """The script starts with every stop signal at its default, as under
    a terminal: a shell started with a signal ignored (under nohup, or
    as a background job of a script) cannot trap it, so the cases that
    send it would test the runner instead of the script."""
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM,
                signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)


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
            ["sh", SCRIPT], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
            stderr=open(self.errlog, "w"), env=env, start_new_session=True,
            preexec_fn=default_signals)
        self.lines = []
        self.dir = None
        self.b = None

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
        """Read the banner; return {kubeconfig, path, metrics, health,
        webhooks, visibility, try, next}."""
        self.read_until(r"^==== cueue quickstart")
        start = len(self.lines) - 1
        self.read_until(r"^  Ctrl-C stops everything")
        b = parse_banner(self.lines[start:])
        self.b = b
        return b

    def stop(self, sig, want_rc):
        self.proc.send_signal(sig)
        self.finish(want_rc)

    def finish(self, want_rc):
        try:
            rc = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            why = self.stuck()
            self.killpg()
            raise Failure("quickstart did not stop; %s" % why)
        eq(rc, want_rc, "exit status")
        check(self.dir is not None, "no directory seen in the banner")
        check(not os.path.exists(self.dir), "%s left behind" % self.dir)
        eq(leftovers(self.dir), [], "processes left")

    def stuck(self):
        """What still runs (and each log's last lines) when the script
        does not stop: which of its processes holds it up."""
        left = leftovers(self.dir) if self.dir else []
        tails = []
        for name in ("apiserver", "controller"):
            try:
                with open(os.path.join(self.dir or "", name + ".log")) as f:
                    tails.append("%s.log ends:\n%s" % (
                        name, "".join(f.readlines()[-8:])))
            except OSError:
                pass
        return "still running: %r\n%s" % (left, "\n".join(tails))

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


def parse_banner(text):
    b = {"try": [], "next": []}
    section = None
    for ln in text:
        m = re.match(r"^  export KUBECONFIG=(\S+)$", ln)
        if m:
            b["kubeconfig"] = m.group(1)
        m = re.match(r"^  export PATH=(\S+):\$PATH\s+# for kubectl cueue$",
                     ln)
        if m:
            b["path"] = m.group(1)
        m = re.match(r"^  metrics: +(http://\S+/metrics)$", ln)
        if m:
            b["metrics"] = m.group(1)
        m = re.match(r"^  health: +(http://\S+/healthz) ", ln)
        if m:
            b["health"] = m.group(1)
        m = re.match(r"^  (webhooks|visibility): +https://127\.0\.0\.1:"
                     r"(\d+) \((.*)\)$", ln)
        if m:
            b[m.group(1)] = (int(m.group(2)), m.group(3))
        m = re.match(r"^  (try|next): +(kubectl .*)$", ln)
        if m:
            section = m.group(1)
            b[section].append(m.group(2))
        elif section and re.match(r"^ {14}kubectl ", ln):
            b[section].append(ln.strip())
        elif not ln.startswith("   "):
            section = None
    return b


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


def readme_commands():
    """The kubectl commands of the README's quickstart block (the fenced
    block that starts with the banner's export line), comments cut."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"```sh\n(export KUBECONFIG=.*?)```", text, re.S)
    check(m, "README: no quickstart block starting with export KUBECONFIG")
    cmds = []
    for ln in m.group(1).splitlines():
        ln = re.sub(r"\s+#.*$", "", ln).strip()
        if ln.startswith("kubectl "):
            cmds.append(ln)
    return cmds


def run(q, cmd, cache="cache2"):
    """A command line as a user pastes it, with the banner's two lines."""
    env = dict(os.environ, KUBECONFIG=q.b["kubeconfig"],
               PATH=q.b["path"] + ":" + os.environ["PATH"])
    argv = shlex.split(cmd)
    if argv[0] == "kubectl" and argv[1] != "cueue":
        argv += ["--cache-dir", os.path.join(q.dir, cache)]
    return subprocess.run(argv, capture_output=True, text=True, env=env,
                          timeout=60, cwd=ROOT)


def ok(q, cmd):
    p = run(q, cmd)
    eq(p.returncode, 0, "%s: %s" % (cmd, p.stderr))
    check(p.stdout.strip() and not p.stderr.strip(),
          "%s: %r %r" % (cmd, p.stdout, p.stderr))
    return p.stdout


SHARED = {}


def readme(q):
    """The whole flow: banner, summary, every command shown."""
    SHARED["q"] = q
    b = q.banner()
    check(os.path.exists(b.get("kubeconfig", "")), "banner: %r" % b)
    eq(b.get("path"), BIN, "the PATH line names the plugin's directory")
    check(os.access(os.path.join(b["path"], "kubectl-cueue"), os.X_OK),
          "kubectl-cueue in the banner's PATH")
    code, body = http_get(b["metrics"])
    eq(code, 200, "metrics URL")
    check("kueue_admitted_workloads_total" in body, "metrics body")
    eq(http_get(b["health"]), (200, "ok"), "health URL")
    check("webhooks" in b and "conversion" in b["webhooks"][1] and
          "visibility" in b, "webhook and visibility ports: %r" % b)
    eq(len(b["try"]), 3, "kubectl commands to try: %r" % b["try"])
    eq(b["next"], ["kubectl cueue pending cluster-queue",
                   "kubectl get --raw " + VIS,
                   "kubectl get clusterqueues.v1beta1.kueue.x-k8s.io"],
       "the next three things")
    line = q.read_until(r"^==== done in ")
    m = re.match(r"^==== done in (\d+)s: (\d+) admitted, (\d+) preempted, "
                 r"(\d+) finished \(of 6 workloads\)$", line)
    check(m, "summary line %r" % line)
    eq(m.group(2, 3, 4), ("6", "0", "6"), "admitted, preempted, finished")
    q.read_until(r"^Still serving")
    # A Job created unsuspended: the admission webhook suspends it; it
    # waits (20 CPUs on 9), listed by the visibility API and the plugin.
    job = os.path.join(q.dir, "big.yaml")
    with open(job, "w") as f:
        f.write("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: big\n"
                "  namespace: default\n  labels: "
                "{kueue.x-k8s.io/queue-name: user-queue}\nspec:\n"
                "  template:\n    spec:\n      restartPolicy: Never\n"
                "      containers:\n      - name: main\n"
                "        image: busybox\n        resources: {requests: "
                "{cpu: \"20\"}}\n")
    out = ok(q, "kubectl create -f %s -o jsonpath={.spec.suspend}" % job)
    eq(out, "true", "suspended by the webhook")
    deadline = time.time() + 30
    while "big" not in run(q, "kubectl get --raw " + VIS).stdout:
        check(time.time() < deadline, "the Job's Workload never pending")
        time.sleep(0.5)
    shown = readme_commands()
    for c in ("kubectl get --raw " + VIS,
              "kubectl cueue pending cluster-queue",
              "kubectl get clusterqueues.v1beta1.kueue.x-k8s.io"):
        check(c in shown, "README block lacks %r: %r" % (c, shown))
    explains = [c for c in shown if c.startswith("kubectl explain ")]
    check(explains, "README shows kubectl explain")
    SHARED["explain"] = explains
    # The README's block in its order (apply before get), then the
    # banner's commands it does not show.
    cmds = [c for c in shown if c not in explains]
    cmds += [c for c in b["try"] + b["next"] if c not in cmds]
    outs = {c: ok(q, c) for c in cmds}
    rows = outs["kubectl get workloads"].splitlines()[1:]
    eq(len(rows), 7, "workload rows: %r" % rows)
    eq(sum(1 for r in rows if re.search(r"\sTrue\s+True\s", r)), 6,
       "ADMITTED and FINISHED: %r" % rows)
    pend = outs["kubectl cueue pending cluster-queue"]
    check(pend.startswith("POSITION IN CLUSTERQUEUE") and
          re.search(r"\n0\s+0\s+default\s+job-big-", pend),
          "kubectl cueue pending: %r" % pend)
    check('"positionInClusterQueue":0' in outs["kubectl get --raw " + VIS],
          "visibility API answer")
    v1 = outs["kubectl get clusterqueues.v1beta1.kueue.x-k8s.io"]
    check(re.search(r"\nteam-b\s+org\s", v1) and "cluster-queue" in v1,
          "v1beta1 list (the README's v1beta1 ClusterQueue): %r" % v1)
    v2 = ok(q, "kubectl get clusterqueue team-b -o "
               "jsonpath={.apiVersion}/{.spec.cohortName}")
    eq(v2, "kueue.x-k8s.io/v1beta2/org", "stored v1beta2, converted")
    # no warning about webhooks or certificates (a 409 retried against
    # the simulator's status writes may be logged)
    with open(os.path.join(q.dir, "controller.log")) as f:
        warned = [ln for ln in f if " warn " in ln and
                  ("webhook" in ln or "certificate" in ln)]
    eq(warned, [], "controller warnings about webhooks")
    with open(os.path.join(q.dir, "apiserver.log")) as f:
        check("last-applied" not in f.read(), "apiserver log")
    with open(q.errlog) as f:
        eq(f.read(), "", "the script's stderr while serving")


ENUMS = [("clusterqueue.spec.preemption.reclaimWithinCohort",
          ["Never", "LowerPriority", "Any"]),
         ("clusterqueue.spec.queueingStrategy",
          ["StrictFIFO", "BestEffortFIFO"]),
         ("clusterqueue.spec.stopPolicy", ["None", "Hold", "HoldAndDrain"])]


def explain(q):
    """Each enum value described (not only listed under ENUM)."""
    q = SHARED.get("q")
    check(q is not None and q.b is not None, "no quickstart serving")
    minor = kubectl_minor()
    if minor < 27:
        raise Skipped("kubectl 1.%d cannot explain custom resources here"
                      % minor)
    fields = [f for f, _ in ENUMS]
    for c in SHARED.get("explain", []):
        check(c.split()[2] in fields, "README's %r is checked here" % c)
    for field, values in ENUMS:
        out = ok(q, "kubectl explain " + field)
        desc = out.split("DESCRIPTION:", 1)[-1]
        for v in values:
            check(re.search(r"\b%s\b[^\n]*\w+" % v, desc),
                  "%s: %s not described in %r" % (field, v, desc))


def sigint(q):
    q = SHARED.get("q")
    check(q is not None, "no quickstart serving")
    q.stop(signal.SIGINT, 0)


def on_signal(sig, rc):
    def run_it(q):
        q.banner()
        q.stop(sig, rc)
    return run_it


def closed_pipe(q):
    q.banner()
    q.proc.stdout.close()  # the next progress line or the summary fails
    q.finish(141)


def drain(fd):
    """What is left to read on a pty whose process ended."""
    rest = b""
    while select.select([fd], [], [], 0.5)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        rest += chunk
    return rest


def make_ctrl_c(_):
    """make run in a terminal, Ctrl-C once the banner is out."""
    build = os.path.relpath(BIN, os.path.join(ROOT, "build")).split(os.sep)
    if len(build) != 2 or build[1] != "bin":
        raise Skipped("programs not in this tree's build/: %s" % BIN)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.environ["QUICKSTART_TICK"] = "0.5"
        # a make test run's own make settings are not this make's
        for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BUILD", "BUILDDIR"):
            os.environ.pop(k, None)
        os.execvp("make", ["make", "--no-print-directory", "run",
                           "BUILD=" + build[0]])
    out = b""
    sent = False
    status = None
    deadline = time.time() + 240
    d = None
    try:
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                out += chunk
            m = re.search(rb"export KUBECONFIG=(/\S+)/kubeconfig", out)
            if m and not sent and b"Ctrl-C stops" in out:
                d = m.group(1).decode()
                os.write(fd, b"\x03")
                sent = True
                deadline = min(deadline, time.time() + 60)
            done, st = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = st
                out += drain(fd)
                break
    finally:
        if status is None:
            # No banner, or no exit within 60 s of Ctrl-C: everything
            # make started is killed and the case fails, never hangs.
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
        os.close(fd)
    text = out.decode(errors="replace")
    check(sent, "no banner from make run: %r" % text[-2000:])
    check(status is not None, "make run did not exit within 60 s of "
          "Ctrl-C: %r" % text[-2000:])
    eq(os.waitstatus_to_exitcode(status), 0, "make's exit status: %r"
       % text[-500:])
    check("Interrupt" not in text and "***" not in text,
          "make's last words: %r" % text[-500:])
    check("quickstart: stopped" in text, "cleanup message: %r" % text[-500:])
    check(not os.path.exists(d), "%s left behind" % d)
    eq(leftovers(d), [], "processes left")


# Cases marked True share one quickstart (SHARED["q"]) started by the first.
CASES = [("QS-readme", readme, False),
         ("QS-explain", explain, True),
         ("QS-sigint", sigint, True),
         ("QS-sigterm", on_signal(signal.SIGTERM, 0), False),
         ("QS-sighup", on_signal(signal.SIGHUP, 129), False),
         ("QS-sigpipe", closed_pipe, False),
         ("QS-make-ctrl-c", make_ctrl_c, None)]


def run_case(name, fn, shared):
    """(status, seconds, report) of one case: status ok, skip or FAIL."""
    start = time.time()
    q = None if shared is not False else Quickstart(name)
    try:
        fn(q)
        return "ok", time.time() - start, ""
    except Skipped as e:
        return "skip", time.time() - start, str(e)
    except Exception:
        q = q or SHARED.get("q")
        return "FAIL", time.time() - start, traceback.format_exc() + (
            "  output:\n    " + "\n    ".join(q.lines[-40:])
            if q is not None else "")
    finally:
        if q is not None and q is not SHARED.get("q"):
            q.kill()


def main():
    """The cases sharing one quickstart in turn, then the others (each
    its own quickstart) side by side."""
    # A user's shell starts the quickstart with Ctrl-C's default action;
    # this run may have inherited SIGINT and SIGQUIT ignored (started as
    # a background job of a non-interactive shell), and the quickstart's
    # shell cannot trap a signal ignored on entry. Handled here, they are
    # at their default in every program started below.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
    only = os.environ.get("CASE")
    todo = [c for c in CASES if not only or c[0] in only.split(",")]
    results = {}
    for name, fn, shared in todo:
        if name in ("QS-readme",) or shared is True:
            results[name] = run_case(name, fn, shared)
    if SHARED.get("q") is not None:
        SHARED["q"].kill()
    threads = []
    for name, fn, shared in todo:
        if name not in results:
            def work(name=name, fn=fn, shared=shared):
                results[name] = run_case(name, fn, shared)
            threads.append(threading.Thread(target=work))
            threads[-1].start()
    for t in threads:
        t.join()
    counts = {"ok": 0, "skip": 0, "FAIL": 0}
    for name, _, _ in todo:
        status, secs, report = results[name]
        counts[status] += 1
        if status == "skip":
            print("  skip %s (%s)" % (name, report), flush=True)
        else:
            print("  %-4s %s (%.1fs)" % (status, name, secs), flush=True)
        if status == "FAIL":
            print(report, flush=True)
    print("%d passed, %d failed%s" % (
        counts["ok"], counts["FAIL"],
        ", %d skipped" % counts["skip"] if counts["skip"] else ""))
    sys.exit(1 if counts["FAIL"] else 0)


if __name__ == "__main__":
    main()
