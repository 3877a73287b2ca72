# SPDX-License-Identifier: Apache-2.0
"""tests/integration/run.py - run the integration tests (t_*.sh with sh,
t_*.py with Debian's /usr/bin/python3), INT_JOBS at a time, each against
programs it starts itself on 127.0.0.1, then scan the logs of every
program a test started for sanitizer reports.

Most of a test's wall time is spent waiting for the programs it drives
(timers, back-offs, watches), so two tests side by side roughly halve the
suite on two cores. Longer tests start first (their last wall times are
kept in $CUEUE_LOGS/int-times.txt, else the checked-in times.txt beside
this file, a copy of one such run's), so the pool does not end on one long test. Tests that run make in the source tree (MAKE_USERS) never overlap
each other: they share build/release.

Environment: CUEUE_BIN (programs), CUEUE_LOGS (log directory),
SAN_PATTERN (regex of sanitizer reports), ONLY (substring filter; a
comma-separated list matches any),
INT_JOBS (tests at a time, default 3; 1 runs them one after another;
the CROWD_SHY tests run with at most one other)."""
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_USERS = {"t_install.py", "t_release.py"}
# Tests whose waits are tuned for at most one other test beside them (a
# kill timed against recorded decisions, a back-off counted over 120 s,
# a relist after a restore, fairness and readiness clocks): while one of
# them runs the pool holds two, not INT_JOBS.
CROWD_SHY = {"t_controller_resilience.py", "t_controller_queueing.py",
             "t_etcd_restore.py", "t_pods_ready.py", "t_config_churn.py",
             "t_fair_sharing.py", "t_admission_fair_sharing.py",
             "t_controller_jobs.py", "t_fw_crds2.py",
             "t_kueue_defaults.py"}
TIMEOUT_S = 600


def env_or_die(name):
    v = os.environ.get(name)
    if not v:
        sys.stderr.write("run.py: %s is not set\n" % name)
        sys.exit(2)
    return v


def load_times(path):
    times = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1].isdigit():
                    times[parts[0]] = int(parts[1])
    except OSError:
        pass
    return times


def save_times(path, times):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for name in sorted(times):
            f.write("%s %d\n" % (name, times[name]))
    os.replace(tmp, path)


def sanitizer_report(logs, test, pattern):
    if not pattern:
        return False
    rx = re.compile(pattern)
    for p in glob.glob(os.path.join(logs, test + ".*.stderr")):
        try:
            with open(p, errors="replace") as f:
                if rx.search(f.read()):
                    return True
        except OSError:
            continue
    return False


def skipped_count(log):
    n = None
    rx = re.compile(r"^\d+ passed, \d+ failed, (\d+) skipped$")
    with open(log, errors="replace") as f:
        for line in f:
            m = rx.match(line.rstrip("\n"))
            if m:
                n = m.group(1)
    return n


def tail(log, n=60):
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()[-n:]
    return "".join("    | %s\n" % l for l in lines)


class Running:
    def __init__(self, path, logs):
        self.path = path
        self.name = os.path.basename(path)
        self.test = os.path.splitext(self.name)[0]
        self.log = os.path.join(logs, "int-%s.log" % self.name)
        env = dict(os.environ, CUEUE_TEST_NAME=self.test)
        argv = (["/usr/bin/python3", path] if path.endswith(".py") else
                ["sh", path])
        self.out = open(self.log, "w")
        self.start = time.monotonic()
        # Each test leads its own process group so that a timeout ends
        # everything it started.
        self.proc = subprocess.Popen(argv, stdout=self.out,
                                     stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def poll(self):
        rc = self.proc.poll()
        if rc is None and time.monotonic() - self.start > TIMEOUT_S:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            self.proc.wait()
            rc = 124
        return rc


def main():
    binv = env_or_die("CUEUE_BIN")
    logs = env_or_die("CUEUE_LOGS")
    os.makedirs(logs, exist_ok=True)
    pylib = os.path.normpath(os.path.join(HERE, "..", "pylib"))
    pp = os.environ.get("PYTHONPATH")
    os.environ.update(CUEUE_BIN=binv, CUEUE_LOGS=logs,
                      PYTHONPATH=pylib + (":" + pp if pp else ""))
    only = os.environ.get("ONLY", "")
    jobs = max(1, int(os.environ.get("INT_JOBS", "3") or "3"))
    pattern = os.environ.get("SAN_PATTERN", "")
    times_path = os.path.join(logs, "int-times.txt")
    times = load_times(os.path.join(HERE, "times.txt"))
    times.update(load_times(times_path))

    tests = sorted(glob.glob(os.path.join(HERE, "t_*.sh")) +
                   glob.glob(os.path.join(HERE, "t_*.py")))
    tests = [t for t in tests
             if any(o in os.path.basename(t) for o in only.split(","))]
    # Longest first (a test never timed counts as a minute): the pool's
    # last slot then holds a short test.
    tests.sort(key=lambda t: -times.get(os.path.basename(t), 60))

    passed = failed = 0
    failures = []
    running = []
    start = time.monotonic()
    while tests or running:
        while len(running) < jobs and tests:
            busy_make = any(r.name in MAKE_USERS for r in running)
            shy = any(r.name in CROWD_SHY for r in running)
            if shy and len(running) >= min(jobs, 2):
                break
            pick = next((t for t in tests if not (
                busy_make and os.path.basename(t) in MAKE_USERS) and not (
                os.path.basename(t) in CROWD_SHY and
                len(running) >= min(jobs, 2))), None)
            if pick is None:
                break
            tests.remove(pick)
            running.append(Running(pick, logs))
        time.sleep(0.2)
        for r in list(running):
            rc = r.poll()
            if rc is None:
                continue
            running.remove(r)
            r.out.close()
            secs = int(time.monotonic() - r.start)
            times[r.name] = secs
            san = ""
            if sanitizer_report(logs, r.test, pattern):
                san = " (sanitizer report in %s/%s.*.stderr)" % (logs, r.test)
                rc = rc or 1
            if rc == 0:
                passed += 1
                # Cases a test could not run here (say, a kubectl build
                # this machine lacks) are reported, never counted as
                # passed.
                skip = skipped_count(r.log)
                print("  ok   %s (%ds%s)" % (
                    r.name, secs,
                    ", %s skipped" % skip if skip not in (None, "0") else ""),
                      flush=True)
            else:
                failed += 1
                failures.append(r.name)
                print("  FAIL %s (exit %d, %ds)%s" % (r.name, rc, secs, san),
                      flush=True)
                sys.stdout.write(tail(r.log))
                sys.stdout.flush()
    save_times(times_path, times)
    print("integration: %d passed, %d failed (%d s, %d at a time)%s" %
          (passed, failed, int(time.monotonic() - start), jobs,
           ": " + " ".join(failures) if failures else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
