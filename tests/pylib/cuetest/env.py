# SPDX-License-Identifier: Apache-2.0
"""cuetest.env - where things are: the repository root, the programs
(CUEUE_BIN), the log directory (CUEUE_LOGS), the running test's name
(CUEUE_TEST_NAME) and the integration tests' fixtures."""
import os
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "..", ".."))
BIN = os.environ.get("CUEUE_BIN", os.path.join(ROOT, "build", "debug",
                                               "bin"))
LOGS = os.environ.get("CUEUE_LOGS", tempfile.gettempdir())
TEST = os.environ.get("CUEUE_TEST_NAME", os.path.splitext(
    os.path.basename(sys.argv[0]))[0])

DATA = os.path.join(ROOT, "tests", "integration", "data")


def data(name):
    """Path of a fixture in tests/integration/data/."""
    return os.path.join(DATA, name)


def write(dirpath, name, text):
    p = os.path.join(dirpath, name)
    with open(p, "w") as f:
        f.write(text)
    return p
