# SPDX-License-Identifier: Apache-2.0
"""cuetest.checks - assertions of the test harness: Failure, check, eq,
Soft (collect several failures into one) and wait_for (poll a predicate
with a deadline)."""
import time


class Failure(AssertionError):
    pass


def check(cond, msg="check failed"):
    if not cond:
        raise Failure(msg)


def eq(got, want, what="value"):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what, got, want))


class Soft:
    """Collects failures so that one case can report every divergence
    of a table of inputs: `with soft.item("what"): eq(...)`, then
    soft.done() raises one Failure listing them all."""

    def __init__(self):
        self.errors = []

    def item(self, what):
        soft = self

        class _Ctx:
            def __enter__(self):
                return self

            def __exit__(self, et, ev, tb):
                if et is not None and issubclass(et, AssertionError):
                    soft.errors.append("%s: %s" % (what, ev))
                    return True
                return False
        return _Ctx()

    def done(self):
        if self.errors:
            raise Failure("%d divergences:\n  " % len(self.errors) +
                          "\n  ".join(self.errors))


def wait_for(pred, timeout=10.0, interval=0.05, what="condition"):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise Failure("timed out after %.1fs waiting for %s (last: %r)" %
                  (timeout, what, last))


