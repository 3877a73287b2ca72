# SPDX-License-Identifier: Apache-2.0
"""cuetest - the one Python harness of cueue's integration tests
(tests/integration/), soaks (tests/soak/) and Python benchmarks
(tests/bench/). The runners (tests/*/run.sh) put tests/pylib on
PYTHONPATH; run with /usr/bin/python3 (Debian's, which has
python3-kubernetes).

  checks     Failure, check, eq, Soft, wait_for
  env        ROOT, BIN, LOGS, TEST, data(), write()
  procs      Server (cueue-apiserver, kubectl, raw HTTP, /__test/),
             Controller (cueue-controller), certificates, free ports
  http       RawStream (a watch on the wire), retrying
  cases      @case and run_cases()
  kobj       small helpers on Kubernetes objects (conditions, quantities)
  observe    Observer: LIST + WATCH of a collection like an informer
  metrics    scrape(), metric(), metric_total(): a /metrics page
  crashsoak  scaled-down scheduler-perf runs under SIGKILLs, leader
             changes and API faults (t_crash, t_leader_failover,
             t_fault_soak, make soak)

The names tests use most are importable from the package itself.
"""
from .cases import case, run_cases, skip
from .checks import Failure, Soft, check, eq, wait_for
from .env import BIN, DATA, LOGS, ROOT, TEST, data, write
from .http import RawStream, maybe_json, pb_fields, retrying
from .kobj import queued_job
from .procs import (CONTROLLER_CONFIG, Controller, Server, _die_with_parent,
                    controller_config, flavor_and_queue, free_port,
                    queues_setup,
                    kubectl_available, kubectl_minor, mint_certs, reachable_copy,
                    stop_process, without_visibility)

__all__ = ["BIN", "CONTROLLER_CONFIG", "Controller", "DATA", "Failure",
           "LOGS", "ROOT", "RawStream", "Server", "Soft", "TEST", "case",
           "check", "controller_config", "data", "eq", "flavor_and_queue", "free_port",
           "kubectl_available", "kubectl_minor", "maybe_json", "mint_certs",
           "pb_fields", "queued_job", "queues_setup", "reachable_copy",
           "retrying", "run_cases", "skip", "stop_process",
           "wait_for", "without_visibility",
           "write", "_die_with_parent"]
