# SPDX-License-Identifier: Apache-2.0
"""API fault soak: the same scaled-down scheduler-perf input (Workloads
created directly, finished by the test driver) run twice against
cueue-controller, once clean and once while cueue-apiserver answers 30 %
of all requests 429 + Retry-After, bursts of 500s, drops every watch
every few seconds, compacts history so resuming gives 410, and adds
50 ms to every request. The faulted run converges to the clean run's end
state (every Workload admitted and finished, every ClusterQueue at zero
usage, no ClusterQueue or cohort over quota at any resourceVersion seen,
ledger empty), its successful writes stay within 1.2x the clean run's,
and the controller's requests per second (access log, sliding 1 s and
10 s windows) stay within its clientConnection qps/burst: no retry
storm. The longer version is `make soak`."""
import os

from cuetest import Server, case, check, crashsoak, run_cases

WORKLOADS = int(os.environ.get("FAULT_WORKLOADS", "120"))
CREATE_S = float(os.environ.get("FAULT_CREATE_S", "25"))


@case("faulted-run-converges-like-a-clean-run")
def faults(s):
    clean_srv = Server()
    try:
        clean = crashsoak.run_faults(clean_srv, faults=False,
                                     workloads=WORKLOADS, create_s=CREATE_S,
                                     timeout=120)
    finally:
        clean_srv.stop()
    crashsoak.log("clean:   " + " ".join("%s=%s" % kv
                                         for kv in clean.items()))
    bad = crashsoak.run_faults(s, faults=True, workloads=WORKLOADS,
                               create_s=CREATE_S, timeout=150)
    crashsoak.log("faulted: " + " ".join("%s=%s" % kv for kv in bad.items()))
    check(bad["injected_429"] >= 20 and bad["injected_500"] >= 5 and
          bad["drops"] >= 3 and bad["compactions"] >= 1,
          "faults were injected: %r" % bad)
    check(bad["controller_writes_ok"] <= 1.2 * clean["controller_writes_ok"],
          "successful writes %d faulted vs %d clean (> 1.2x)" % (
              bad["controller_writes_ok"], clean["controller_writes_ok"]))
    for r in (clean, bad):
        crashsoak.check_no_storm(r)


run_cases()
