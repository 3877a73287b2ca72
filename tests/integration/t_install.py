# SPDX-License-Identifier: Apache-2.0
"""make install and make install-dev (the contracts of the Makefile).

- install-release-hardened: `make install DESTDIR=D PREFIX=/usr` installs
  exactly two files, D/usr/bin/cueue-controller and D/usr/bin/kubectl-cueue
  (the kubectl plugin), and each is the hardened release build: a
  position-independent executable (ELF type DYN with an interpreter), full
  RELRO (GNU_RELRO and BIND_NOW), a non-executable stack, the stack
  protector (__stack_chk_fail) and fortified libc calls (*_chk symbols);
  each runs (--version, version).
- install-dev-every-program: `make install-dev` of the build under test
  (CUEUE_BIN's directory, already up to date) installs the controller,
  kubectl-cueue, cueue-apiserver and cueue-bench.

The release objects are built in build/release/ of the tree the first
time (later runs reuse them)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cuetest import BIN, Failure, check, eq

ROOT = os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def make(*args):
    # A make test run exports its own BUILD through MAKEFLAGS: the
    # targets under test must decide the flavour themselves.
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BUILD",
                        "BUILDDIR")}
    p = subprocess.run(["make", "--no-print-directory", "-j2", "-C", ROOT] +
                       list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        raise Failure("make %s: exit %d\n%s" % (" ".join(args), p.returncode,
                                                p.stdout[-3000:]))
    return p.stdout


def installed(dest):
    out = []
    for dp, _, fns in os.walk(dest):
        for n in fns:
            out.append(os.path.relpath(os.path.join(dp, n), dest))
    return sorted(out)


def readelf(*args):
    return subprocess.run(["readelf", "-W"] + list(args),
                          stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout


def install_release(dest):
    make("install", "DESTDIR=" + dest, "PREFIX=/usr")
    eq(installed(dest), ["usr/bin/cueue-controller", "usr/bin/kubectl-cueue"],
       "installed files")
    hardened(os.path.join(dest, "usr", "bin", "cueue-controller"),
             "--version")
    hardened(os.path.join(dest, "usr", "bin", "kubectl-cueue"), "version")


def hardened(exe, version_arg):
    eq(os.stat(exe).st_mode & 0o777, 0o755, "mode")
    header = readelf("-h", exe)
    check(re.search(r"Type:\s+DYN", header), "PIE (ELF type DYN):\n" + header)
    phdrs = readelf("-l", exe)
    check("INTERP" in phdrs, "an executable, not a library")
    check("GNU_RELRO" in phdrs, "RELRO")
    stack = [ln for ln in phdrs.splitlines() if "GNU_STACK" in ln]
    eq(len(stack), 1, "a GNU_STACK header")
    check(not re.search(r"\bRWE\b", stack[0]), "non-executable stack: " +
          stack[0])
    dyn = readelf("-d", exe)
    check(re.search(r"\(FLAGS\)\s+.*BIND_NOW", dyn) or
          re.search(r"\(FLAGS_1\)\s+.*\bNOW\b", dyn), "BIND_NOW:\n" + dyn)
    check(re.search(r"\(FLAGS_1\)\s+.*\bPIE\b", dyn), "FLAGS_1 PIE")
    syms = set()
    for ln in readelf("--dyn-syms", exe).splitlines():
        f = ln.split()
        if len(f) >= 8 and f[0].endswith(":"):
            syms.add(f[7].split("@")[0])
    check("__stack_chk_fail" in syms, "stack protector (__stack_chk_fail)")
    chk = sorted(s for s in syms if s.startswith("__") and s.endswith("_chk")
                 and s != "__stack_chk_fail")
    check(len(chk) >= 3, "fortified calls (*_chk): %r" % chk)
    env = dict(os.environ, KUBECONFIG="/nonexistent/kubeconfig")
    p = subprocess.run([exe, version_arg], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True,
                       env=env)
    eq(p.returncode, 0, "%s %s: %s" % (exe, version_arg, p.stdout))
    with open(os.path.join(ROOT, "VERSION")) as f:
        check(f.read().strip() in p.stdout, "version printed: " + p.stdout)


def install_dev(dest):
    builddir = os.path.dirname(os.path.abspath(BIN))
    with open(os.path.join(builddir, ".flavor")) as f:
        flavor = f.read().strip()
    make("install-dev", "BUILD=" + flavor, "BUILDDIR=" + builddir,
         "DESTDIR=" + dest, "PREFIX=/opt/cueue")
    eq(installed(dest), ["opt/cueue/bin/cueue-apiserver",
                         "opt/cueue/bin/cueue-bench",
                         "opt/cueue/bin/cueue-controller",
                         "opt/cueue/bin/kubectl-cueue"],
       "installed files")


def main():
    failed = 0
    for name, fn in (("install-release-hardened", install_release),
                     ("install-dev-every-program", install_dev)):
        dest = tempfile.mkdtemp(prefix="cueue-install-")
        try:
            fn(dest)
            print("  ok   %s" % name, flush=True)
        except Exception as e:  # report every case, then fail
            failed += 1
            print("  FAIL %s: %s" % (name, e), flush=True)
        finally:
            shutil.rmtree(dest, ignore_errors=True)
    print("%d passed, %d failed" % (2 - failed, failed))
    sys.exit(1 if failed else 0)


main()
