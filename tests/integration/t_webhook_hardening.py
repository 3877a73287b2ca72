# SPDX-License-Identifier: Apache-2.0
"""The webhook server's TLS and availability under abuse.

- webhook-tls-ecdhe-aead-only: with an RSA certificate (so that RSA key
  exchange would be possible), a TLS 1.2 client offering only RSA key
  exchange suites, or only CBC suites, is refused; one offering
  ECDHE-RSA with AES-GCM gets it, and TLS 1.3 works. With the
  Configuration's tls.minVersion: VersionTLS13, TLS 1.2 is refused; with
  tls.cipherSuites naming one suite, only that one is negotiated; an
  insecure suite in the Configuration stops the controller with the field
  named.
- connection-flood-per-ip-and-probes: 300 stalled connections from
  127.0.0.1 on the webhook port are cut to the per-address limit (128)
  and a webhook call from 127.0.0.2 is answered; then with 400 stalled
  connections each on the health and metrics ports, the server trims the
  flood (the connection idle longest gives way to a new one) and /healthz
  from 127.0.0.1 answers within a 1 s socket timeout - the liveness
  probe's semantics - and webhook calls go on."""
import json
import os
import resource
import select
import socket
import ssl
import subprocess
import time

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, run_cases, wait_for)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PER_IP_LIMIT = 128  # CTL_WHSRV_PER_IP_LIMIT
CONN_LIMIT = 256  # CTL_HTTPD_DEFAULT_CONN_LIMIT
HEADROOM = 8  # live connections above CONN_LIMIT - HEADROOM are trimmed
DEADLINE_S = 10  # CTL_HTTPD_DEFAULT_CONN_TIMEOUT_S: cuts them all anyway


def mint_rsa(d):
    """ca.crt and an RSA serving pair tls.crt/tls.key for 127.0.0.1."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True,
                       capture_output=True)
    rsa = ["-newkey", "rsa:2048", "-nodes"]
    ossl("req", "-x509", *rsa, "-keyout", "ca.key", "-out", "ca.crt",
         "-days", "2", "-subj", "/CN=webhook-test-ca")
    ossl("req", *rsa, "-keyout", "tls.key", "-out", "srv.csr", "-subj",
         "/CN=webhook")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                "keyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n")
    ossl("x509", "-req", "-in", "srv.csr", "-CA", "ca.crt", "-CAkey",
         "ca.key", "-CAcreateserial", "-out", "tls.crt", "-days", "2",
         "-extfile", "ext.cnf")
    return os.path.join(d, "ca.crt")


def webhook_config(port, cert_dir, tls=""):
    return CONTROLLER_CONFIG + """namespace: cueue-system
webhook:
  port: %d
  host: 127.0.0.1
  certDir: %s
integrations:
  frameworks: ["batch/job"]
%s""" % (port, cert_dir, tls)


def handshake(port, ca, ciphers=None, version=None):
    """The negotiated (version, cipher) or the ssl error's text."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    if ciphers is not None:
        ctx.set_ciphers(ciphers + ":@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
                return t.version(), t.cipher()[0]
    except (ssl.SSLError, ConnectionError) as e:
        return "refused: %s" % e


def serving(port, ca):
    return not isinstance(handshake(port, ca), str)


TLS12 = ssl.TLSVersion.TLSv1_2
RSA_KX = "AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA:AES256-SHA:" \
    "AES128-SHA256"
CBC = "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-SHA256:" \
    "ECDHE-RSA-AES256-SHA384"


@case("webhook-tls-ecdhe-aead-only", tls=False)
def tls_suites(s):
    d = os.path.join(s.dir, "certs")
    os.mkdir(d)
    ca = mint_rsa(d)
    port = free_port()
    ctl = Controller(s, config=webhook_config(port, d))
    wait_for(lambda: serving(port, ca) or not ctl.alive(), 20,
             what="webhook serving")
    check(ctl.alive(), "controller running, see %s" % ctl.log)
    got = {"rsa-kx": handshake(port, ca, RSA_KX, TLS12),
           "cbc": handshake(port, ca, CBC, TLS12)}
    for k, v in got.items():
        check(isinstance(v, str) and v.startswith("refused"),
              "TLS 1.2 with %s suites only: negotiated %r" % (k, v))
    eq(handshake(port, ca, "ECDHE-RSA-AES128-GCM-SHA256", TLS12),
       ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), "ECDHE-RSA AES-GCM")
    eq(handshake(port, ca, "ECDHE-RSA-CHACHA20-POLY1305", TLS12),
       ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"), "ECDHE-RSA ChaCha20")
    eq(handshake(port, ca)[0], "TLSv1.3", "default client")
    ctl.stop()
    # tls.minVersion: VersionTLS13 refuses TLS 1.2 altogether.
    port = free_port()
    ctl = Controller(s, config=webhook_config(
        port, d, "tls:\n  minVersion: VersionTLS13\n"))
    wait_for(lambda: serving(port, ca) or not ctl.alive(), 20,
             what="webhook serving TLS 1.3")
    v = handshake(port, ca, "ECDHE-RSA-AES128-GCM-SHA256", TLS12)
    check(isinstance(v, str), "TLS 1.2 under minVersion 1.3: %r" % (v,))
    eq(handshake(port, ca)[0], "TLSv1.3", "TLS 1.3")
    ctl.stop()
    # tls.cipherSuites: one suite.
    port = free_port()
    ctl = Controller(s, config=webhook_config(
        port, d, "tls:\n  cipherSuites:\n"
        "  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"))
    wait_for(lambda: serving(port, ca) or not ctl.alive(), 20,
             what="webhook serving one suite")
    eq(handshake(port, ca, "ECDHE-RSA-AES256-GCM-SHA384:"
                 "ECDHE-RSA-AES128-GCM-SHA256", TLS12),
       ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), "the configured suite")
    v = handshake(port, ca, "ECDHE-RSA-AES128-GCM-SHA256", TLS12)
    check(isinstance(v, str), "a suite not configured: %r" % (v,))
    ctl.stop()
    # An insecure suite is a configuration error naming the field.
    ctl = Controller(s, config=webhook_config(
        free_port(), d, "tls:\n  cipherSuites:\n"
        "  - TLS_RSA_WITH_AES_128_CBC_SHA\n"))
    wait_for(lambda: not ctl.alive(), 20, what="controller refuses")
    check(ctl.proc.returncode != 0, "exit status")
    with open(ctl.log) as f:
        text = f.read()
    check("tls.cipherSuites[0]: Unsupported value: "
          "\"TLS_RSA_WITH_AES_128_CBC_SHA\": insecure" in text, text[-2000:])



def flood(port, n):
    """n TCP connections from 127.0.0.1 that never send a byte."""
    out = []
    for _ in range(n):
        so = socket.create_connection(("127.0.0.1", port), timeout=10)
        so.setblocking(False)
        out.append(so)
    return out


def closed_by_server(socks):
    """How many of socks the server has closed (EOF or reset)."""
    n = 0
    p = select.poll()  # select() stops at descriptor 1023
    for so in socks:
        p.register(so, select.POLLIN)
    ready = {fd for fd, _ in p.poll(0)}
    for so in socks:
        if so.fileno() not in ready:
            continue
        try:
            if so.recv(1) == b"":
                n += 1
        except BlockingIOError:
            pass
        except OSError:
            n += 1
    return n


def webhook_call(port, ca, source="127.0.0.1", timeout=10):
    """POST one AdmissionReview (a valid ResourceFlavor) from `source`;
    returns the HTTP status and the response's uid."""
    body = json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "flood-1",
            "kind": {"group": "kueue.x-k8s.io", "version": "v1beta2",
                     "kind": "ResourceFlavor"},
            "resource": {"group": "kueue.x-k8s.io", "version": "v1beta2",
                         "resource": "resourceflavors"},
            "name": "f", "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": {"apiVersion": "kueue.x-k8s.io/v1beta2",
                       "kind": "ResourceFlavor", "metadata": {"name": "f"},
                       "spec": {}}}}).encode()
    ctx = ssl.create_default_context(cafile=ca)
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                   source_address=(source, 0))
    with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as t:
        t.sendall(b"POST /validate-kueue-x-k8s-io-v1beta2-resourceflavor "
                  b"HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
                  % len(body) + body)
        data = b""
        while True:
            chunk = t.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    try:
        uid = json.loads(payload)["response"]["uid"]
    except (ValueError, KeyError, TypeError):
        uid = None
    return status, uid


def healthz(port, timeout):
    """GET /healthz with one socket timeout for connect and answer:
    (status line, seconds) or raises socket.timeout."""
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port),
                                  timeout=timeout) as so:
        so.settimeout(timeout)
        so.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                   b"Connection: close\r\n\r\n")
        line = so.recv(64).split(b"\r\n")[0]
    return line, time.monotonic() - t0


@case("connection-flood-per-ip-and-probes")
def flood_case(s):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    # The webhook answers once the controller's caches are synced.
    s.kubectl("apply", "-f", os.path.join(ROOT, "manifests", "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    s.namespace("cueue-system")
    d = os.path.join(s.dir, "certs")
    os.mkdir(d)
    ca = mint_rsa(d)
    hport, mport, wport = free_port(), free_port(), free_port()
    cfg = webhook_config(wport, d).replace(
        'healthProbeBindAddress: "0"',
        'healthProbeBindAddress: "127.0.0.1:%d"' % hport).replace(
        'bindAddress: "0"', 'bindAddress: "127.0.0.1:%d"' % mport)
    ctl = Controller(s, config=cfg)
    wait_for(lambda: serving(wport, ca) or not ctl.alive(), 20,
             what="webhook serving")
    check(ctl.alive(), "controller running, see %s" % ctl.log)
    wait_for(lambda: webhook_call(wport, ca) == (200, "flood-1"), 20,
             what="webhook answering")
    socks = []
    try:
        # One address holds at most PER_IP_LIMIT connections; another
        # address is served.
        wh = flood(wport, 300)
        socks += wh
        # Within the request deadline (10 s, which in the end cuts every
        # stalled connection anyway): exactly those beyond the limit.
        wait_for(lambda: closed_by_server(wh) >= 300 - PER_IP_LIMIT,
                 DEADLINE_S - 2, what="connections beyond the per-address "
                 "limit closed (%d closed)" % closed_by_server(wh))
        eq(closed_by_server(wh), 300 - PER_IP_LIMIT,
           "connections the server closed")
        eq(webhook_call(wport, ca, source="127.0.0.2"), (200, "flood-1"),
           "a webhook call from 127.0.0.2 under the flood")
        # Health and metrics: the flood is trimmed, the probe answered.
        hs, ms = flood(hport, 400), flood(mport, 400)
        socks += hs + ms
        keep = CONN_LIMIT - HEADROOM
        wait_for(lambda: closed_by_server(hs) >= 400 - keep,
                 DEADLINE_S - 2, what="health flood trimmed (%d closed)" %
                 closed_by_server(hs))
        eq(closed_by_server(hs), 400 - keep, "health connections closed")
        try:
            line, secs = healthz(hport, 1.0)
        except socket.timeout:
            raise AssertionError("/healthz did not answer within 1 s "
                                 "under 400 stalled connections")
        eq(line, b"HTTP/1.1 200 OK", "/healthz")
        print("    /healthz answered in %.3f s under 400 stalled "
              "connections (and 400 on metrics)" % secs, flush=True)
        wait_for(lambda: closed_by_server(ms) >= 400 - keep,
                 DEADLINE_S - 2, what="metrics flood trimmed")
        eq(webhook_call(wport, ca, source="127.0.0.2"), (200, "flood-1"),
           "admission goes on")
    finally:
        for so in socks:
            so.close()
    check(ctl.alive(), "controller alive")
    ctl.stop()


run_cases()
