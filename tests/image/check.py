# SPDX-License-Identifier: Apache-2.0
"""make image-check: the image of `make image` is what the Deployment
expects and nothing more.

- oci-layout: cueue-controller-oci.tar is an OCI image layout with one
  manifest, one gzip layer, under 40 MB;
- config: user 65532:65532, entrypoint /usr/local/bin/cueue-controller,
  the org.opencontainers.image labels (version = VERSION, revision = the
  commit, source = this clone's git remote as `scripts/image.sh source`
  gives it - left out, never "unknown", without one - licenses
  Apache-2.0), the ports of the Deployment;
- source-url: `scripts/image.sh source URL` turns git remotes of every
  form into the https URL of the repository, credentials dropped;
- docker-archive: cueue-controller-docker.tar carries the same config and
  layer under the image name;
- layer-files: every entry is root's and not writable by others, except
  the ledger mount point /var/lib/cueue (65532's); no setuid or setgid
  file, no shell, no package manager; passwd names 65532; the CA bundle;
- libraries: the shared objects in the image are exactly those the
  dynamic loader resolves for the binary inside the image;
- entrypoint: in a chroot of the rootfs unpacked by umoci, as 65532
  (as root) or in an unprivileged user namespace, --version prints
  VERSION and --check-config accepts manifests/configmap.yaml's config;
  /manager is the same program and takes Kueue's Deployment arguments
  (--config=FILE --zap-log-level=2);
- runs: the controller in that chroot, with the Deployment's arguments
  (the ledger in /var/lib/cueue), against cueue-apiserver over TLS with
  the CRDs applied, reports ready on /readyz (informers synced, ledger
  open): the image has everything the controller loads at run time.

Environment (set by the Makefile): IMAGE_DIR, IMAGE, VERSION, REVISION,
APISERVER (the cueue-apiserver binary for `runs`)."""
import gzip
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

import yaml

ROOT = os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
IMAGE_DIR = os.path.join(ROOT, os.environ.get("IMAGE_DIR", "build/image"))
VERSION = os.environ["VERSION"]
REVISION = os.environ.get("REVISION", "unknown")
IMAGE = os.environ.get("IMAGE", "cueue-controller:" + VERSION)
UID = 65532
ENTRYPOINT = "/usr/local/bin/cueue-controller"
LEDGER = "var/lib/cueue"
MAX_BYTES = 40 * 1000 * 1000
SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh", "busybox", "toybox"}
PKG_TOOLS = {"apt", "apt-get", "apt-cache", "dpkg", "dpkg-deb", "dpkg-query",
             "rpm", "yum", "dnf", "apk", "pip", "pip3"}


class Failure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Image:
    """The OCI archive read once: manifest, config and layer bytes."""

    def __init__(self):
        self.oci = os.path.join(IMAGE_DIR, "cueue-controller-oci.tar")
        self.docker = os.path.join(IMAGE_DIR, "cueue-controller-docker.tar")
        with tarfile.open(self.oci) as t:
            self.blobs = {}
            for m in t.getmembers():
                if m.isfile():
                    self.blobs[m.name.lstrip("./")] = t.extractfile(m).read()
        self.index = json.loads(self.blobs["index.json"])
        check(len(self.index["manifests"]) == 1,
              "one manifest in index.json: %r" % self.index)
        self.manifest_desc = self.index["manifests"][0]
        self.manifest = json.loads(self.blob(self.manifest_desc["digest"]))
        self.config = json.loads(self.blob(self.manifest["config"]["digest"]))
        self.layers = [self.blob(d["digest"]) for d in self.manifest["layers"]]

    def blob(self, digest):
        algo, hexd = digest.split(":")
        data = self.blobs["blobs/%s/%s" % (algo, hexd)]
        check(hashlib.sha256(data).hexdigest() == hexd,
              "blob %s does not match its digest" % digest)
        return data


def case_oci_layout(img):
    check(json.loads(img.blobs["oci-layout"])["imageLayoutVersion"] ==
          "1.0.0", "oci-layout file")
    check(img.manifest_desc["mediaType"] ==
          "application/vnd.oci.image.manifest.v1+json", "manifest type")
    check(img.manifest_desc["annotations"].get(
        "org.opencontainers.image.ref.name") == VERSION,
        "tag %r" % img.manifest_desc.get("annotations"))
    check(len(img.manifest["layers"]) == 1, "one layer")
    check(img.manifest["layers"][0]["mediaType"] ==
          "application/vnd.oci.image.layer.v1.tar+gzip", "gzip layer")
    size = os.path.getsize(img.oci)
    check(size < MAX_BYTES, "oci archive is %d bytes (limit %d)" %
          (size, MAX_BYTES))
    with open(os.path.join(IMAGE_DIR, "digest")) as f:
        check(f.read().strip() == img.manifest_desc["digest"],
              "build/image/digest is the manifest's digest")


def case_config(img):
    c = img.config
    check(c["os"] == "linux", "os")
    cfg = c["config"]
    check(cfg.get("User") == "%d:%d" % (UID, UID), "user %r" %
          cfg.get("User"))
    check(cfg.get("Entrypoint") == [ENTRYPOINT], "entrypoint %r" %
          cfg.get("Entrypoint"))
    check(not cfg.get("Cmd"), "no Cmd: %r" % cfg.get("Cmd"))
    labels = cfg.get("Labels") or {}
    want = {"org.opencontainers.image.version": VERSION,
            "org.opencontainers.image.revision": REVISION,
            "org.opencontainers.image.licenses": "Apache-2.0"}
    for k, v in want.items():
        check(labels.get(k) == v, "label %s=%r, want %r" %
              (k, labels.get(k), v))
    src = subprocess.run(["sh", os.path.join(ROOT, "scripts", "image.sh"),
                          "source"], capture_output=True, text=True,
                         cwd=ROOT).stdout.strip()
    got = labels.get("org.opencontainers.image.source")
    check(got == (src or None), "label org.opencontainers.image.source=%r, "
          "want %r (this clone's remote)" % (got, src or None))
    ports = set(cfg.get("ExposedPorts") or {})
    dep = deployment()
    ctr = dep["spec"]["template"]["spec"]["containers"][0]
    for p in ctr["ports"]:
        check("%d/tcp" % p["containerPort"] in ports,
              "port %d exposed: %r" % (p["containerPort"], ports))
    check(ctr["command"] == [ENTRYPOINT],
          "deployment.yaml's command is the entrypoint")
    sc = dep["spec"]["template"]["spec"]["securityContext"]
    check(sc["runAsUser"] == UID and sc["runAsGroup"] == UID,
          "deployment.yaml runs as the image's user")


def case_source_url():
    script = os.path.join(ROOT, "scripts", "image.sh")
    for url, want in (
            ("git@github.com:acme/cueue.git", "https://github.com/acme/cueue"),
            ("ssh://git@github.com:22/acme/cueue.git",
             "https://github.com/acme/cueue"),
            ("https://user:token@github.com/acme/cueue.git",
             "https://github.com/acme/cueue"),
            ("https://gitlab.example.org/group/sub/cueue/",
             "https://gitlab.example.org/group/sub/cueue"),
            ("/srv/git/cueue", ""), ("", "")):
        got = subprocess.run(["sh", script, "source", url],
                             capture_output=True, text=True).stdout.strip()
        check(got == want, "source %r: %r, want %r" % (url, got, want))


def case_docker_archive(img):
    with tarfile.open(img.docker) as t:
        mf = json.loads(t.extractfile("manifest.json").read())
        check(len(mf) == 1, "one image in the docker archive")
        name = IMAGE if "/" in IMAGE.split(":")[0] else \
            "docker.io/library/" + IMAGE
        check(mf[0]["RepoTags"] == [name], "tags %r, want %r" %
              (mf[0]["RepoTags"], [name]))
        cfg = t.extractfile(mf[0]["Config"]).read()
        check(hashlib.sha256(cfg).hexdigest() ==
              img.manifest["config"]["digest"].split(":")[1],
              "the docker archive has the OCI image's config")
        check(len(mf[0]["Layers"]) == 1, "one layer")
        layer = t.extractfile(mf[0]["Layers"][0]).read()
        check("sha256:" + hashlib.sha256(layer).hexdigest() ==
              img.config["rootfs"]["diff_ids"][0],
              "the docker archive has the OCI image's layer")


def layer_members(img):
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(img.layers[0]))) \
            as t:
        return t.getmembers()


def case_layer_files(img):
    members = layer_members(img)
    names = {}
    for m in members:
        n = os.path.normpath(m.name.lstrip("./")) if m.name not in (".", "./") \
            else "."
        names[n] = m
        if n == LEDGER:
            check(m.isdir() and m.uid == UID and m.gid == UID,
                  "%s: a directory owned by %d" % (n, UID))
            continue
        check(m.uid == 0 and m.gid == 0, "%s: owner %d:%d" %
              (n, m.uid, m.gid))
        if not m.issym():
            check(not m.mode & 0o022, "%s: mode %o writable by others" %
                  (n, m.mode))
            check(not m.mode & 0o6000, "%s: setuid/setgid (%o)" %
                  (n, m.mode))
        base = os.path.basename(n)
        if m.isdir():
            continue
        check(base not in SHELLS, "a shell in the image: " + n)
        check(base not in PKG_TOOLS, "a package tool in the image: " + n)
    for need in ("usr/local/bin/cueue-controller", "etc/passwd",
                 "etc/group", "etc/ssl/certs/ca-certificates.crt", "tmp",
                 LEDGER, "usr/share/doc/cueue/copyright"):
        check(need in names, "missing " + need)
    check(names["usr/local/bin/cueue-controller"].mode & 0o777 == 0o755,
          "binary mode")
    check(names["etc/ssl/certs/ca-certificates.crt"].size > 10000,
          "CA bundle present")
    check(names["tmp"].mode & 0o777 == 0o755, "/tmp is a bare mount point")
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(img.layers[0]))) \
            as t:
        passwd = t.extractfile(names["etc/passwd"]).read().decode()
    users = {ln.split(":")[2]: ln.split(":") for ln in passwd.splitlines()}
    check(str(UID) in users, "passwd names %d: %r" % (UID, passwd))
    check(users[str(UID)][0] == "nonroot", "user name nonroot")


def unpack(img, tmp):
    """The rootfs as a runtime sees it, unpacked by umoci."""
    bundle = os.path.join(tmp, "bundle")
    layout = os.path.join(tmp, "layout")
    with tarfile.open(img.oci) as t:
        t.extractall(layout)
    args = ["umoci", "unpack", "--image", layout + ":" + VERSION, bundle]
    if os.geteuid() != 0:
        args.insert(2, "--rootless")
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    check(p.returncode == 0, "umoci unpack: " + p.stdout)
    with open(os.path.join(bundle, "config.json")) as f:
        spec = json.load(f)
    check(spec["process"]["user"]["uid"] == UID, "runtime spec user %r" %
          spec["process"]["user"])
    check(spec["process"]["args"] == [ENTRYPOINT], "runtime spec args %r" %
          spec["process"]["args"])
    return os.path.join(bundle, "rootfs")


def in_root(rootfs, path):
    """Resolve path inside rootfs, following symlinks as the chroot does."""
    parts = [p for p in path.split("/") if p]
    cur = "/"
    hops = 0
    while parts:
        comp = parts.pop(0)
        if comp == "..":
            cur = os.path.dirname(cur.rstrip("/")) or "/"
            continue
        nxt = os.path.join(cur, comp)
        host = rootfs + nxt
        if os.path.islink(host):
            hops += 1
            check(hops < 40, "symlink loop at " + path)
            t = os.readlink(host)
            parts = [p for p in t.split("/") if p] + parts
            if t.startswith("/"):
                cur = "/"
            continue
        cur = nxt
    return cur


def chroot_argv(rootfs, args):
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    if os.geteuid() == 0:
        return [chroot, "--userspec=%d:%d" % (UID, UID), rootfs] + args
    # Root of an unprivileged user namespace: may chroot, is not 65532.
    return [shutil.which("unshare") or "/usr/bin/unshare",
            "--map-root-user", chroot, rootfs] + args


def chroot_cmd(rootfs, args):
    cmd = chroot_argv(rootfs, args)
    e = {"PATH": "/usr/local/bin"}
    return subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=e, cwd="/")


def case_libraries(img, rootfs):
    # The binary's own loader lists what it maps (no shell, no ldd).
    ph = subprocess.run(["readelf", "-lW", rootfs + ENTRYPOINT],
                        stdout=subprocess.PIPE, universal_newlines=True,
                        check=True).stdout
    interp = ph.split("interpreter: ")[1].split("]")[0]
    p = chroot_cmd(rootfs, [interp, "--list", ENTRYPOINT])
    check(p.returncode == 0, "loader trace: %s%s" % (p.stdout, p.stderr))
    loaded = set()
    for ln in p.stdout.splitlines():
        f = ln.split()
        if "=>" in f:
            target = f[f.index("=>") + 1]
            check(target.startswith("/"), "unresolved library: " + ln)
            loaded.add(in_root(rootfs, target))
        elif f and f[0].startswith("/"):
            loaded.add(in_root(rootfs, f[0]))
    shipped = set()
    for dp, _, fns in os.walk(rootfs):
        for n in fns:
            full = os.path.join(dp, n)
            if ".so" in n and not os.path.islink(full):
                shipped.add("/" + os.path.relpath(full, rootfs))
    check(loaded, "no library loaded?")
    check(shipped == loaded, "shipped but not loaded: %r; loaded but not "
          "shipped: %r" % (sorted(shipped - loaded), sorted(loaded - shipped)))


def case_entrypoint(rootfs):
    p = chroot_cmd(rootfs, [ENTRYPOINT, "--version"])
    check(p.returncode == 0 and VERSION in p.stdout,
          "--version: exit %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    # The shipped configuration, where the Deployment mounts it.
    with open(os.path.join(ROOT, "manifests", "configmap.yaml")) as f:
        cm = yaml.safe_load(f)
    os.makedirs(os.path.join(rootfs, "etc", "cueue"), exist_ok=True)
    with open(os.path.join(rootfs, "etc", "cueue", "config.yaml"), "w") as f:
        f.write(cm["data"]["config.yaml"])
    os.chmod(os.path.join(rootfs, "etc", "cueue", "config.yaml"), 0o644)
    ctr = deployment()["spec"]["template"]["spec"]["containers"][0]
    cfg = ctr["args"][ctr["args"].index("--config") + 1]
    check(cfg == "/etc/cueue/config.yaml", "deployment --config " + cfg)
    p = chroot_cmd(rootfs, [ENTRYPOINT, "--config", cfg, "--check-config"])
    check(p.returncode == 0, "--check-config: exit %d: %s" %
          (p.returncode, p.stderr))
    check("apiVersion: config.kueue.x-k8s.io/v1beta2" in p.stdout,
          "--check-config prints the effective configuration: " + p.stdout)
    # Kueue's Deployment: command /manager, Kueue's arguments.
    check(os.readlink(os.path.join(rootfs, "manager")) ==
          ENTRYPOINT.lstrip("/"), "/manager links the controller")
    p = chroot_cmd(rootfs, ["/manager", "--config=" + cfg,
                            "--zap-log-level=2", "--check-config"])
    check(p.returncode == 0, "/manager with Kueue's arguments: exit %d: %s"
          % (p.returncode, p.stderr))
    # Only the ledger directory is writable by the runtime user.
    if os.geteuid() == 0:
        for dp, dns, fns in os.walk(rootfs):
            for n in dns + fns:
                full = os.path.join(dp, n)
                rel = os.path.relpath(full, rootfs)
                if os.path.islink(full) or rel.startswith("etc/cueue"):
                    continue
                st = os.lstat(full)
                w = (st.st_uid == UID and st.st_mode & 0o200) or \
                    (st.st_gid == UID and st.st_mode & 0o020) or \
                    st.st_mode & 0o002
                check(not w or rel == LEDGER, "%s writable by %d" % (rel, UID))


def case_runs(rootfs):
    apiserver = os.environ.get("APISERVER")
    check(apiserver and os.access(apiserver, os.X_OK),
          "APISERVER (cueue-apiserver) not given")
    tmp = tempfile.mkdtemp(prefix="cueue-image-run-")
    kc = os.path.join(tmp, "kubeconfig")
    log = open(os.path.join(tmp, "apiserver.log"), "w")
    srv = subprocess.Popen([apiserver, "--listen", "127.0.0.1:0",
                            "--kubeconfig-out", kc, "--tls"],
                           stdout=log, stderr=subprocess.STDOUT)
    ctl = None
    try:
        for _ in range(200):
            if os.path.exists(kc) or srv.poll() is not None:
                break
            time.sleep(0.05)
        check(os.path.exists(kc), "cueue-apiserver did not start")
        p = subprocess.run(["kubectl", "--kubeconfig", kc, "apply", "-f",
                            os.path.join(ROOT, "manifests", "crds")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        check(p.returncode == 0, "kubectl apply CRDs: " + p.stdout)
        etc = os.path.join(rootfs, "etc", "cueue")
        os.makedirs(etc, exist_ok=True)
        shutil.copy(kc, os.path.join(etc, "kubeconfig"))
        port = free_port()
        with open(os.path.join(etc, "run.yaml"), "w") as f:
            # Free ports: 8082, the visibility server's default, may be
            # taken on the machine running the check.
            f.write(RUN_CONFIG % (port, free_port(), free_port()))
        for n in ("kubeconfig", "run.yaml"):
            os.chmod(os.path.join(etc, n), 0o644)
        ctl = subprocess.Popen(
            chroot_argv(rootfs, [ENTRYPOINT, "--config",
                                 "/etc/cueue/run.yaml", "--kubeconfig",
                                 "/etc/cueue/kubeconfig", "--store",
                                 "/var/lib/cueue/ledger.db"]),
            stdout=log, stderr=subprocess.STDOUT,
            env={"PATH": "/usr/local/bin"}, cwd="/")
        url = "http://127.0.0.1:%d/readyz" % port
        ready = False
        for _ in range(300):
            if ctl.poll() is not None:
                break
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    ready = r.status == 200
            except Exception:
                pass
            if ready:
                break
            time.sleep(0.1)
        log.flush()
        with open(log.name) as f:
            tail = f.read()[-2000:]
        check(ready, "controller in the image not ready (exit %r):\n%s" %
              (ctl.poll(), tail))
        check(os.path.exists(os.path.join(rootfs, "var", "lib", "cueue",
                                          "ledger.db")),
              "ledger written in /var/lib/cueue")
    finally:
        for proc in (ctl, srv):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


RUN_CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: default
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
visibilityServer:
  bindPort: %d
  bindAddress: 127.0.0.1
"""


def free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def deployment():
    with open(os.path.join(ROOT, "manifests", "deployment.yaml")) as f:
        return yaml.safe_load(f)


def main():
    results = []

    def run(name, fn, *args):
        try:
            fn(*args)
            results.append(True)
            print("  ok   " + name, flush=True)
        except Exception as e:  # report every case, then fail
            results.append(False)
            print("  FAIL %s: %s" % (name, e), flush=True)

    img = Image()
    run("oci-layout", case_oci_layout, img)
    run("config", case_config, img)
    run("source-url", case_source_url)
    run("docker-archive", case_docker_archive, img)
    run("layer-files", case_layer_files, img)
    tmp = tempfile.mkdtemp(prefix="cueue-image-check-")
    try:
        rootfs = None
        try:
            rootfs = unpack(img, tmp)
            results.append(True)
            print("  ok   unpack", flush=True)
        except Exception as e:
            results.append(False)
            print("  FAIL unpack: %s" % e, flush=True)
        if rootfs:
            run("libraries", case_libraries, img, rootfs)
            run("entrypoint", case_entrypoint, rootfs)
            run("runs", case_runs, rootfs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    sys.exit(1 if failed else 0)


main()
