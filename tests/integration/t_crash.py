# SPDX-License-Identifier: Apache-2.0
"""Crash: a scaled-down Kueue scheduler-perf baseline (2 cohorts x 3
ClusterQueues, borrowing and preemption, a few hundred Workloads created
directly and finished by the test driver) while cueue-controller is
killed with SIGKILL at random moments and restarted on the same ledger,
10 times. cuetest.crashsoak checks the whole history: no
ClusterQueue or cohort over its quota at any resourceVersion, no
Workload admitted twice without an eviction in between, the ledger
covering every reservation the API shows after each kill, every Workload
admitted and finished, and ledger and API agreeing at the end. The long
version (100+ kills) is `make soak`. CRASH_SEED=N replays a run."""
import os

from cuetest import case, crashsoak, run_cases


@case("sigkill-10-times-during-baseline")
def crash(s):
    seed = os.environ.get("CRASH_SEED")
    r = crashsoak.run_crash(
        s, kills=int(os.environ.get("CRASH_KILLS", "10")),
        workloads=int(os.environ.get("CRASH_WORKLOADS", "300")),
        create_s=50.0, runtime_scale=6.0, kill_gap=(1.0, 7.0),
        seed=int(seed) if seed else None, timeout=170)
    crashsoak.log(" ".join("%s=%s" % kv for kv in r.items()))


run_cases()
