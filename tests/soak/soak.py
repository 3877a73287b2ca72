# SPDX-License-Identifier: Apache-2.0
"""tests/soak/soak.py - `make soak`: the long versions of t_crash.py,
t_leader_failover.py and t_fault_soak.py (cuetest.crashsoak, in
tests/pylib/, does the work), each against its own cueue-apiserver, then one summary.

  crash    SIGKILL the controller at random moments (SOAK_KILLS, default
           100) while a scaled-down scheduler-perf baseline runs
  leader   two replicas; the leader killed or paused SOAK_LEADER_ROUNDS
           times (default 10)
  faults   the same input clean and under 30 % 429 + Retry-After, 500
           bursts, dropped watches, compaction (410) and 50 ms latency
           (SOAK_FAULT_WORKLOADS, default 400)

SOAK_ONLY=crash,leader,faults picks parts; SOAK_SEED=N fixes the seeds.
Bounded: each part has its own timeout and the whole run stays under
20 minutes on a shared 2-core machine (ASan build). Exit 1 on any
failure; the summary goes to stdout and $CUEUE_LOGS/soak-summary.json.
"""
import json
import os
import sys
import time
import traceback

import cuetest
from cuetest import crashsoak


def env_int(name, default):
    return int(os.environ.get(name, str(default)))


def part_crash(seed):
    s = cuetest.Server()
    try:
        return crashsoak.run_crash(
            s, kills=env_int("SOAK_KILLS", 100),
            workloads=env_int("SOAK_CRASH_WORKLOADS", 1200),
            create_s=float(os.environ.get("SOAK_CRASH_CREATE_S", "360")),
            runtime_scale=8.0, kill_gap=(0.5, 6.0), seed=seed, timeout=600)
    finally:
        s.stop()


def part_leader(seed):
    s = cuetest.Server()
    try:
        return crashsoak.run_leader(
            s, rounds=env_int("SOAK_LEADER_ROUNDS", 10), workloads=300,
            create_s=150.0, runtime_scale=3.0, seed=seed, timeout=300)
    finally:
        s.stop()


def part_faults(seed):
    n = env_int("SOAK_FAULT_WORKLOADS", 400)
    create_s = n / 4.0
    s = cuetest.Server()
    try:
        clean = crashsoak.run_faults(s, faults=False, workloads=n,
                                     create_s=create_s, seed=seed or 1,
                                     timeout=240)
    finally:
        s.stop()
    s = cuetest.Server()
    try:
        bad = crashsoak.run_faults(s, faults=True, workloads=n,
                                   create_s=create_s, seed=seed or 1,
                                   timeout=360)
    finally:
        s.stop()
    cuetest.check(bad["controller_writes_ok"] <=
                  1.2 * clean["controller_writes_ok"],
                  "successful writes %d faulted vs %d clean (> 1.2x)" % (
                      bad["controller_writes_ok"],
                      clean["controller_writes_ok"]))
    crashsoak.check_no_storm(clean)
    crashsoak.check_no_storm(bad)
    return {"clean": clean, "faulted": bad}


PARTS = (("crash", part_crash), ("leader", part_leader),
         ("faults", part_faults))


def main():
    only = os.environ.get("SOAK_ONLY", "crash,leader,faults").split(",")
    seed = os.environ.get("SOAK_SEED")
    seed = int(seed) if seed else None
    t0 = time.time()
    results, failed = {}, []
    for name, fn in PARTS:
        if name not in only:
            continue
        start = time.time()
        print("soak %s ..." % name, flush=True)
        try:
            results[name] = fn(seed)
            print("  ok   %s (%.0fs)" % (name, time.time() - start),
                  flush=True)
        except Exception as e:  # noqa: BLE001 - reported, run goes on
            failed.append(name)
            results[name] = {"error": str(e)[:2000]}
            print("  FAIL %s (%.0fs)" % (name, time.time() - start),
                  flush=True)
            traceback.print_exc()
    results["duration_s"] = round(time.time() - t0, 1)
    results["failed"] = failed
    with open(os.path.join(cuetest.LOGS, "soak-summary.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(summary(results), flush=True)
    return 1 if failed else 0


def summary(r):
    L = ["soak summary (%.0f s):" % r["duration_s"]]
    c = r.get("crash")
    if c and "error" not in c:
        L.append("  crash:  %d SIGKILLs survived; %d workloads, %d "
                 "admissions, %d evictions, all finished; %d states "
                 "checked for quota, %d ledger checks after a kill, "
                 "end state agreed (%.0f s, seed %d)" % (
                     c["kills_survived"], c["workloads"], c["admissions"],
                     c["evictions"], c["states_checked"],
                     c["ledger_checks_after_kill"], c["duration_s"],
                     c["seed"]))
    lr = r.get("leader")
    if lr and "error" not in lr:
        L.append("  leader: %d kills + %d pauses of the leader; takeover "
                 "max %.1f s (%s); %d writes checked against the Lease "
                 "holder, none by a non-holder (%.0f s, seed %d)" % (
                     lr["kills"], lr["pauses"], lr["max_takeover_s"],
                     lr["takeovers_s"], lr["writes_checked"],
                     lr["duration_s"], lr["seed"]))
    fr = r.get("faults")
    if fr and "error" not in fr:
        cl, fa = fr["clean"], fr["faulted"]
        L.append("  faults: %d workloads; injected %d x 429, %d x 500 "
                 "(%d bursts), %d watch drops, %d compactions" % (
                     fa["workloads"], fa["injected_429"],
                     fa["injected_500"], fa["bursts500"], fa["drops"],
                     fa["compactions"]))
        L.append("          successful controller writes clean %d vs "
                 "faulted %d (%.2fx, limit 1.2x); sent %d vs %d" % (
                     cl["controller_writes_ok"], fa["controller_writes_ok"],
                     fa["controller_writes_ok"] /
                     max(1, cl["controller_writes_ok"]),
                     cl["controller_writes_sent"],
                     fa["controller_writes_sent"]))
        L.append("          peak controller requests faulted: %d/1 s, "
                 "%d/10 s (events %d/1 s, %d/10 s; all %d/1 s); clean: "
                 "%d/1 s, %d/10 s; qps %s burst %d" % (
                     fa["peak_nonevent_req_1s"], fa["peak_nonevent_req_10s"],
                     fa["peak_event_req_1s"], fa["peak_event_req_10s"],
                     fa["peak_req_1s"], cl["peak_nonevent_req_1s"],
                     cl["peak_nonevent_req_10s"], fa["qps"], fa["burst"]))
    for name in r["failed"]:
        L.append("  FAILED %s: %s" % (name, r[name]["error"][:500]))
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
