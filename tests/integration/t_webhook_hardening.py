# SPDX-License-Identifier: Apache-2.0
"""The webhook server's TLS and availability under abuse.

- webhook-tls-ecdhe-aead-only: with an RSA certificate (so that RSA key
  exchange would be possible), a TLS 1.2 client offering only RSA key
  exchange suites, or only CBC suites, is refused; one offering
  ECDHE-RSA with AES-GCM gets it, and TLS 1.3 works. With the
  Configuration's tls.minVersion: VersionTLS13, TLS 1.2 is refused; with
  tls.cipherSuites naming one suite, only that one is negotiated; an
  insecure suite in the Configuration stops the controller with the field
  named."""
import os
import socket
import ssl
import subprocess

from cuetest import (CONTROLLER_CONFIG, Controller, case, check, eq,
                     free_port, run_cases, wait_for)


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


run_cases()
