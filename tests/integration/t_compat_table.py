# SPDX-License-Identifier: Apache-2.0
"""README's "Kueue compatibility" table is the one in the code: it must be
exactly what `cueue-controller --compat-table` prints. The shipped
ConfigMap loads with only the warnings the table predicts for it."""
import os
import subprocess
import tempfile

import yaml

from cuetest import Failure, case, check, eq, run_cases
from cuetest.env import BIN

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CTL = os.path.join(BIN, "cueue-controller")


def readme_table():
    """The table rows of README's "## Kueue compatibility" section."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    start = text.find("\n## Kueue compatibility\n")
    check(start >= 0, "README.md has no \"## Kueue compatibility\" section")
    end = text.find("\n## ", start + 1)
    body = text[start:end if end >= 0 else len(text)]
    return [l for l in body.splitlines() if l.startswith("|")]


@case("readme-table-matches-code")
def readme_table_matches_code(s):
    out = subprocess.run([CTL, "--compat-table"], capture_output=True,
                         text=True, timeout=30)
    eq(out.returncode, 0, "--compat-table exit status")
    code = [l for l in out.stdout.splitlines() if l.startswith("|")]
    check(len(code) > 10, "--compat-table printed %d rows" % len(code))
    readme = readme_table()
    diff = [("README: " + a, "code:   " + b)
            for a, b in zip(readme, code) if a != b]
    if len(readme) != len(code):
        only = set(readme) ^ set(code)
        raise Failure("README has %d rows, the code %d; differing rows:\n%s"
                      % (len(readme), len(code), "\n".join(sorted(only))))
    if diff:
        raise Failure("README and --compat-table differ:\n" +
                      "\n".join("%s\n%s" % d for d in diff))


@case("shipped-configmap-warns-as-expected")
def shipped_configmap(s):
    with open(os.path.join(ROOT, "manifests", "configmap.yaml")) as f:
        cm = yaml.safe_load(f)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(cm["data"]["config.yaml"])
        f.flush()
        out = subprocess.run([CTL, "--config", f.name, "--check-config"],
                             capture_output=True, text=True, timeout=30)
    eq(out.returncode, 0, "--check-config exit status (%s)" % out.stderr)
    warnings = [l for l in out.stderr.splitlines() if "warning:" in l]
    # v1beta2 turns waitForPodsReady on by default; cueue does not
    # implement it and says so. Nothing else.
    eq(len(warnings), 1, "warnings: %r" % warnings)
    check("waitForPodsReady: not acted on by cueue (on by default)" in
          warnings[0], warnings[0])


@case("unknown-feature-gate-is-refused")
def unknown_gate(s):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                "kind: Configuration\n"
                "featureGates:\n  NoSuchGate: true\n")
        f.flush()
        out = subprocess.run([CTL, "--config", f.name, "--check-config"],
                             capture_output=True, text=True, timeout=30)
    eq(out.returncode, 1, "exit status")
    check("featureGates[NoSuchGate]: unrecognized feature gate" in
          out.stderr, out.stderr)


run_cases()
