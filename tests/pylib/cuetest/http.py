# SPDX-License-Identifier: Apache-2.0
"""cuetest.http - HTTP below the python3-kubernetes client: RawStream (a
streaming GET whose wire framing the test can inspect, used for watches)
retrying (a request of the test itself, retried through injected
429/5xx when the server is told to misbehave) and pb_fields (the fields
of a protobuf answer, for OpenAPI v2 and Kubernetes protobuf bodies)."""
import json
import random
import time

from .checks import Failure, wait_for


def maybe_json(raw):
    """raw decoded as JSON, or raw itself when it is not JSON."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw


def retrying(s, method, path, body=None, headers=None, ok=(200, 201),
             give_up=(), tries=400):
    """A request of the test itself on Server s, retried through injected
    429/5xx and connection errors (the test is a client of the faulty
    server too). Returns (code, body) of the first answer in ok or
    give_up; any other answer raises Failure."""
    for _ in range(tries):
        try:
            code, hdrs, b = s.raw(method, path, body, headers, timeout=30)
        except OSError:
            time.sleep(0.1)
            continue
        if code in ok or code in give_up:
            return code, b
        if code == 429 or code >= 500:
            time.sleep(0.05 + random.random() * 0.2)
            continue
        raise Failure("%s %s: %d %r" % (method, path, code, b))
    raise Failure("%s %s: still failing after %d tries" % (method, path,
                                                          tries))


class RawStream:
    """A raw streaming GET over its own (TLS) socket. Parses the status
    line, headers and chunked framing by hand so tests can assert what is
    on the wire: .status, .headers (lower-case names), .lines (list of
    (monotonic time, bytes) for every complete `\n`-terminated line of the
    decoded body), .chunks (decoded chunk payloads), .clean_end (the
    zero-length terminating chunk arrived), .eof (the connection closed)."""

    def __init__(self, srv, path, token=True, headers=None):
        import socket
        import threading
        from urllib.parse import urlparse
        u = urlparse(srv.url)
        sock = socket.create_connection((u.hostname, u.port), timeout=30)
        if u.scheme == "https":
            sock = srv.ctx.wrap_socket(sock, server_hostname=u.hostname)
        self.sock = sock
        hdrs = {"Host": u.netloc, "Accept": "application/json",
                "User-Agent": "cuetest-rawstream"}
        if token:
            hdrs["Authorization"] = "Bearer " + srv.token
        hdrs.update(headers or {})
        req = "GET %s HTTP/1.1\r\n" % path + "".join(
            "%s: %s\r\n" % kv for kv in hdrs.items()) + "\r\n"
        self.t0 = time.monotonic()
        sock.sendall(req.encode())
        self.status = None
        self.headers = {}
        self.lines = []
        self.chunks = []
        self.body = b""
        self.clean_end = False
        self.eof = False
        self.error = None
        self._ready = threading.Event()
        self._th = threading.Thread(target=self._run, daemon=True)
        self._th.start()
        if not self._ready.wait(30):
            raise Failure("no response headers for GET %s" % path)
        if self.error and self.status is None:
            raise Failure("GET %s: %s" % (path, self.error))

    def _read(self, buf):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError
        return buf + d

    def _run(self):
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                buf = self._read(buf)
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for ln in lines[1:]:
                k, _, v = ln.partition(":")
                self.headers[k.strip().lower()] = v.strip()
            self._ready.set()
            pending = b""
            chunked = self.headers.get("transfer-encoding", "").lower() \
                == "chunked"
            if not chunked:
                n = int(self.headers.get("content-length", "-1"))
                while n < 0 or len(buf) < n:
                    try:
                        buf = self._read(buf)
                    except EOFError:
                        break
                self._feed(buf if n < 0 else buf[:n], pending)
                self.eof = True
                return
            while True:
                while b"\r\n" not in buf:
                    buf = self._read(buf)
                size_s, buf = buf.split(b"\r\n", 1)
                size = int(size_s.split(b";")[0], 16)
                while len(buf) < size + 2:
                    buf = self._read(buf)
                data, buf = buf[:size], buf[size + 2:]
                if size == 0:
                    self.clean_end = True
                    break
                self.chunks.append(data)
                pending = self._feed(data, pending)
        except EOFError:
            pass
        except Exception as e:  # noqa: BLE001 - recorded for the test
            self.error = e
        finally:
            self.eof = True
            self._ready.set()

    def _feed(self, data, pending):
        self.body += data
        pending += data
        while b"\n" in pending:
            ln, pending = pending.split(b"\n", 1)
            self.lines.append((time.monotonic(), ln + b"\n"))
        return pending

    def events(self):
        return [json.loads(ln) for _, ln in self.lines]

    def wait_lines(self, n, timeout=10.0):
        wait_for(lambda: len(self.lines) >= n or self.eof, timeout,
                 what="%d watch lines" % n)
        return self.events()

    def wait_end(self, timeout=10.0):
        wait_for(lambda: self.eof, timeout, what="end of stream")
        return self.events()

    def close(self):
        """Shut the connection down, wait for the reader thread, then close
        the socket. Closing first would free the fd number while the
        reader still sits in recv(): the next connection the test opens
        reuses it, and the stale reader eats that connection's bytes
        (seen as TLS "bad record mac" errors on unrelated requests)."""
        import socket
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._th.join(10)
        try:
            self.sock.close()
        except OSError:
            pass


def pb_fields(buf):
    """The top-level fields of a protobuf message: [(number, value)],
    value bytes for length-delimited fields, int for varints."""
    out, i = [], 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return v
    while i < len(buf):
        key = varint()
        if key & 7 == 2:
            n = varint()
            out.append((key >> 3, buf[i:i + n]))
            i += n
        elif key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            raise AssertionError("wire type %d" % (key & 7))
    return out
