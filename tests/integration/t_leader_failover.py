# SPDX-License-Identifier: Apache-2.0
"""Leader failover under load: two cueue-controller replicas with leader
election (Lease, leaseDuration 6 s) while a scaled-down scheduler-perf
input flows (cuetest.crashsoak). The leader is killed (SIGKILL) or
paused (SIGSTOP, SIGCONT after the Lease moved on) again and again, and a
fresh standby is started each time. Each time a standby takes over within
20 s; a paused-then-resumed old leader stops without writing; and, from
the access log (each process has its own API user), every write by a
controller process came from the Lease holder of that moment: never two
writers. The quota and double-admission invariants of the crash test
hold, and every Workload is admitted and finished. `make soak` runs more
rounds."""
import os

from cuetest import case, crashsoak, run_cases


@case("leader-killed-and-paused-under-load")
def failover(s):
    seed = os.environ.get("LEADER_SEED")
    r = crashsoak.run_leader(
        s, rounds=int(os.environ.get("LEADER_ROUNDS", "4")),
        workloads=100, create_s=35.0, runtime_scale=3.0,
        seed=int(seed) if seed else None, timeout=150)
    crashsoak.log(" ".join("%s=%s" % kv for kv in r.items()))


run_cases()
