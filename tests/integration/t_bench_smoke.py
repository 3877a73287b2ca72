# SPDX-License-Identifier: Apache-2.0
"""Smoke test of the scheduler-perf runner (`cueue-bench sched`): a short
run of Kueue's baseline shape (tests/bench/configs/smoke, 360 Workloads in
3 ClusterQueues of one cohort, with borrowing and preemption) against a
cueue-apiserver and cueue-controller the runner starts itself. Checks
correctness only, nothing timed: every Workload admitted and finished,
the summary in Kueue's keys (JSON and YAML alike), the CSVs and PNGs, an
input error naming the field and line, and that `make bench`'s inputs
(Kueue's shapes in tests/bench/configs/) parse (--check). The runner's own stderr and
the logs of the programs it started are scanned for sanitizer reports by
run.sh. The MultiKueue benchmark runs scaled down to 30 Jobs."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from cuetest import BIN, LOGS, TEST, check, eq

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SMOKE = os.path.join(ROOT, "tests", "bench", "configs", "smoke",
                     "generator.yaml")
TARGETS = os.path.join(ROOT, "tests", "bench", "targets",
                       "baseline-unthrottled.yaml")


def run(args, log, timeout):
    with open(log, "w") as err:
        return subprocess.run([os.path.join(BIN, "cueue-bench"), "sched"] +
                              args, stdout=subprocess.PIPE, stderr=err,
                              cwd=ROOT, timeout=timeout, text=True)


def smoke(tmp):
    out = os.path.join(tmp, "out")
    p = run(["--generator", SMOKE, "--bin", BIN, "--out", out,
             "--label", "smoke", "--targets", TARGETS, "--timeout", "240"],
            os.path.join(LOGS, TEST + ".runner.stderr"), 300)
    # the programs the runner started log into --out: keep them where
    # run.sh scans for sanitizer reports
    for name in ("controller", "apiserver"):
        src = os.path.join(out, "%s-smoke.log" % name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(LOGS, "%s.%s.stderr" %
                                          (TEST, name)))
    eq(p.returncode, 0, "runner exit status (stdout %r)" % p.stdout)
    check("finished 360/360" in p.stdout, "report: %r" % p.stdout)
    check("writes per admitted Workload" in p.stdout and
          "peak RSS" in p.stdout, "report lacks figures: %r" % p.stdout)
    with open(os.path.join(out, "summary.json")) as f:
        sj = json.load(f)
    with open(os.path.join(out, "summary.yaml")) as f:
        sy = yaml.safe_load(f)
    eq(sy, sj, "summary.yaml and summary.json")
    wc = sj["workloadClasses"]
    eq(sorted(wc), ["large", "medium", "small"], "workload classes")
    eq({k: v["count"] for k, v in wc.items()},
       {"small": 240, "medium": 90, "large": 30}, "counts per class")
    for k, v in wc.items():
        for key in ("averageTimeToAdmissionMs", "averageTimeToFinishMs",
                    "totalEvictions"):
            check(isinstance(v.get(key), int) and v[key] >= 0,
                  "%s.%s: %r" % (k, key, v.get(key)))
        check(v["averageTimeToFinishMs"] >= v["averageTimeToAdmissionMs"],
              "%s: finished before admitted? %r" % (k, v))
    cq = sj["clusterQueueClasses"]["cq"]
    eq(cq["nominalQuota"], 3 * 20000, "nominal quota (mCPU) of class cq")
    check(0 < cq["cpuAverageUsage"] <= cq["nominalQuota"] * 6,
          "cpuAverageUsage %r" % cq)
    cu = sj["cueue"]
    eq(cu["finished"], 360, "finished")
    eq(cu["timedOut"], False, "timedOut")
    check(cu["controllerWrites"] >= 360,
          "at least one write per admission: %r" % cu["controllerWrites"])
    check(cu["peakRssMiB"] > 0 and cu["averageCpuMillis"] >= 0,
          "controller stats %r" % cu)
    with open(os.path.join(out, "admissions.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) >= 2, "admissions.csv rows: %d" % len(rows))
    eq(int(rows[-1]["finished"]), 360, "last admissions.csv row")
    with open(os.path.join(out, "usage.csv")) as f:
        head = next(csv.reader(f))
    eq(head[:2], ["seconds", "all"], "usage.csv header")
    eq(len(head), 2 + 3, "usage.csv: one column per ClusterQueue")
    for png in ("admissions.png", "usage.png"):
        with open(os.path.join(out, png), "rb") as f:
            eq(f.read(8), b"\x89PNG\r\n\x1a\n", png)


def bad_input(tmp):
    """A generator error names the field and the line, and nothing is
    started."""
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write("cohorts:\n- className: c\n  count: 1\n  queuesSets:\n"
                "  - className: q\n    count: 1\n    nominalQuota: lots\n")
    p = run(["--generator", bad, "--bin", BIN, "--out",
             os.path.join(tmp, "bad")],
            os.path.join(LOGS, TEST + ".bad.stderr"), 30)
    eq(p.returncode, 1, "exit status for a bad generator")
    with open(os.path.join(LOGS, TEST + ".bad.stderr")) as f:
        err = f.read()
    check("bad.yaml:7: cohorts[0].queuesSets[0].nominalQuota" in err,
          "error names the file, line and field: %r" % err)


def bench_inputs(tmp):
    """Every input `make bench` and `make bench-large` read parses, and
    --check prints the plan without starting anything. The TAS shape is
    kept for reference and refused by name (cueue has no TAS)."""
    configs = os.path.join(ROOT, "tests", "bench", "configs")
    shapes = {"baseline": ("15000 Workloads", "baseline-qps50"),
              "large-scale": ("50000 Workloads",
                              "large-scale-unthrottled")}
    for shape, (total, tgt) in shapes.items():
        log = os.path.join(LOGS, TEST + ".check-%s.stderr" % shape)
        p = run(["--check",
                 "--generator", os.path.join(configs, shape,
                                             "generator.yaml"),
                 "--rangespec", os.path.join(configs, shape,
                                             "rangespec.yaml"),
                 "--targets", os.path.join(ROOT, "tests", "bench",
                                           "targets", tgt + ".yaml"),
                 "--qps", "50"], log, 30)
        eq(p.returncode, 0, "--check %s exit status" % shape)
        check(total in p.stdout and "maxWallMs" in p.stdout,
              "--check %s plan: %r" % (shape, p.stdout))
    log = os.path.join(LOGS, TEST + ".check-tas.stderr")
    p = run(["--check", "--generator",
             os.path.join(configs, "baseline", "generator.yaml"),
             "--rangespec", os.path.join(configs, "tas", "rangespec.yaml")],
            log, 30)
    eq(p.returncode, 0, "--check with the TAS rangespec")
    p = run(["--check", "--generator",
             os.path.join(configs, "tas", "generator.yaml")], log, 30)
    eq(p.returncode, 1, "--check of the TAS generator")
    with open(log) as f:
        err = f.read()
    check("topology: unknown field" in err, "TAS refused by name: %r" % err)


def moonshot(tmp):
    """`make bench-moonshot` scaled down to 300 pending Workloads in 20
    ClusterQueues (cohorts of 10): the run completes, every freed unit of
    quota is given to exactly one pending Workload (the script fails on
    more), and summary.json carries every key with a plausible value."""
    out = os.path.join(tmp, "moon")
    env = dict(os.environ, CUEUE_BIN=BIN, BENCH_OUT=out,
               MOONSHOT_PENDING="300", MOONSHOT_CQS="20",
               MOONSHOT_SAMPLE_S="1", MOONSHOT_TIMEOUT_S="120")
    with open(os.path.join(LOGS, TEST + ".moonshot.stderr"), "w") as err:
        p = subprocess.run(["/usr/bin/python3", os.path.join(
            ROOT, "tests", "bench", "moonshot.py")], env=env, cwd=ROOT,
            stdout=subprocess.PIPE, stderr=err, text=True, timeout=600)
    for name in ("controller", "controller-restart", "apiserver"):
        src = os.path.join(out, "moonshot", name + ".log")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(LOGS, "%s.moon-%s.stderr" %
                                          (TEST, name)))
    eq(p.returncode, 0, "moonshot exit status (stdout %r)" % p.stdout)
    with open(os.path.join(out, "moonshot", "summary.json")) as f:
        sj = json.load(f)
    eq((sj["pending"], sj["cluster_queues"]), (300, 20), "scale")
    for key in ("cycle_p50_ms", "cycle_p99_ms", "controller_peak_rss_mib",
                "apiserver_peak_rss_mib", "restart_to_ready_s",
                "admissions_per_s"):
        check(isinstance(sj.get(key), (int, float)) and sj[key] > 0,
              "summary %s: %r" % (key, sj.get(key)))
    check(sj["cycle_p50_ms"] <= sj["cycle_p99_ms"], "p50 <= p99: %r" % sj)
    with open(os.path.join(out, "moonshot", "samples.csv")) as f:
        rows = [r for r in f if not r.startswith("#")]
    check(len(rows) >= 1, "samples.csv rows: %d" % len(rows))


def multikueue(tmp):
    """`make bench`'s MultiKueue run (tests/bench/mk_bench.py) scaled
    down to 30 Jobs: every Job Complete on exactly one worker, none on two
    at once, and multikueue.json carries every figure."""
    out = os.path.join(tmp, "mk")
    env = dict(os.environ, CUEUE_BIN=BIN, BENCH_OUT=out,
               BENCH_MK_JOBS="30", BENCH_MK_TIMEOUT_S="300")
    env.pop("CUEUE_LOGS", None)
    env.pop("CUEUE_TEST_NAME", None)
    with open(os.path.join(LOGS, TEST + ".mk.stderr"), "w") as err:
        p = subprocess.run(["/usr/bin/python3", os.path.join(
            ROOT, "tests", "bench", "mk_bench.py")], env=env, cwd=ROOT,
            stdout=subprocess.PIPE, stderr=err, text=True, timeout=600)
    logs = os.path.join(out, "mk-logs")
    for name in os.listdir(logs) if os.path.isdir(logs) else ():
        shutil.copy(os.path.join(logs, name),
                    os.path.join(LOGS, "%s.mk-%s" % (TEST, name)))
    eq(p.returncode, 0, "mk_bench exit status (stdout %r)" % p.stdout)
    with open(os.path.join(out, "multikueue.json")) as f:
        sj = json.load(f)
    eq((sj["jobs"], sj["workers"], sum(sj["jobs_per_worker"])), (30, 3, 30),
       "scale")
    eq(sj["two_at_once"], [], "jobs on two workers at once")
    for key in ("dispatch_per_s", "manager_writes_per_job",
                "manager_writes_to_workers_per_job"):
        check(isinstance(sj.get(key), (int, float)) and sj[key] > 0,
              "summary %s: %r" % (key, sj.get(key)))
    a = sj["create_to_worker_admitted_ms"]
    check(0 < a["p50"] <= a["p99"], "admission p50 <= p99: %r" % a)


def main():
    tmp = tempfile.mkdtemp(prefix="cueue-bench-smoke-")
    failed = 0
    cases = (("sched-smoke", smoke), ("sched-bad-input", bad_input),
             ("sched-bench-inputs", bench_inputs),
             ("moonshot-smoke", moonshot), ("multikueue-smoke", multikueue))
    for name, fn in cases:
        start = time.time()
        try:
            fn(tmp)
            print("  ok   %s (%.1fs)" % (name, time.time() - start),
                  flush=True)
        except Exception as e:  # report and go on with the next one
            failed += 1
            print("  FAIL %s (%.1fs): %s" % (name, time.time() - start, e),
                  flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    sys.exit(1 if failed else 0)


main()
