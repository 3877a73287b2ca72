# SPDX-License-Identifier: Apache-2.0
"""cuetest.observe - follow a collection the way an informer does.

Observer LISTs a collection, then WATCHes it from the list's
resourceVersion. A watch that ends (timeoutSeconds, /__test/drop-watches)
resumes from the last resourceVersion seen; an ERROR 410 (history
compacted) relists and delivers the difference between what it held and
the fresh list. Two hooks:

  on_change(name, old, new, rv, relisting)
      for every version seen, in resourceVersion order, under
      Observer.lock; new is None on deletion, old None on creation; rv is
      the event's resourceVersion (the list's during a relist) and
      relisting is True while a LIST's difference is being delivered
      (the states in between were skipped);
  after_relist(rv)
      once a LIST's difference has been delivered (the initial one too),
      still under the lock: where to check the listed state as a whole.

faulty=False: the Observer's own requests retry 429 only, and anything
else fails it. faulty=True (the server is told to misbehave): they retry
429, 5xx and connection errors too. An error in the watching thread is
raised again by stop().
"""
import json
import threading
import time

from .checks import Failure, check
from .http import RawStream, retrying


class Observer:
    """LIST + WATCH of `path` on Server s (see the module docstring).
    objs: name -> latest object; rv: the last resourceVersion seen;
    relists: LISTs after the first; watches: watch requests opened."""

    def __init__(self, s, path, on_change=None, after_relist=None,
                 faulty=False, watch_timeout_s=120, join_s=15):
        self.s = s
        self.path = path
        self.on_change = on_change or (lambda *a: None)
        self.after_relist = after_relist or (lambda rv: None)
        self.faulty = faulty
        self.watch_timeout_s = watch_timeout_s
        self.join_s = join_s
        self.objs = {}
        self.rv = "0"
        self.relists = -1  # the first LIST is not a relist
        self.watches = 0
        self.lock = threading.RLock()
        self.error = None
        self._stop = threading.Event()
        self._list()
        self._th = threading.Thread(target=self._run, daemon=True)
        self._th.start()

    def _get_list(self):
        if self.faulty:
            return retrying(self.s, "GET", self.path, ok=(200,))[1]
        while True:
            code, _, body = self.s.raw("GET", self.path)
            if code == 200:
                return body
            check(code == 429, "LIST %s: %d %r" % (self.path, code, body))
            time.sleep(0.05)

    def _list(self):
        body = self._get_list()
        self.relists += 1
        items = {o["metadata"]["name"]: o for o in body["items"]}
        rv = body["metadata"]["resourceVersion"]
        with self.lock:
            for name, old in list(self.objs.items()):
                if name not in items:
                    self.on_change(name, old, None, rv, True)
            for name, o in items.items():
                old = self.objs.get(name)
                if old is None or old["metadata"]["resourceVersion"] != \
                        o["metadata"]["resourceVersion"]:
                    self.on_change(name, old, o, rv, True)
            self.objs = items
            self.after_relist(rv)
            self.rv = rv

    def _apply(self, ev):
        """One watch event; False when the watch must relist."""
        t = ev.get("type")
        o = ev.get("object") or {}
        if t == "ERROR":
            check(o.get("code") == 410, "watch error %r" % o)
            return False
        rv = (o.get("metadata") or {}).get("resourceVersion")
        if t != "BOOKMARK":
            name = o["metadata"]["name"]
            with self.lock:
                old = self.objs.get(name)
                if t == "DELETED":
                    self.objs.pop(name, None)
                    self.on_change(name, old, None, rv, False)
                else:
                    self.objs[name] = o
                    self.on_change(name, old, o, rv, False)
        if rv:
            self.rv = rv
        return True

    def _open(self):
        """A watch from self.rv, or None to try again."""
        try:
            st = RawStream(self.s, "%s?watch=1&resourceVersion=%s&"
                           "allowWatchBookmarks=true&timeoutSeconds=%d"
                           % (self.path, self.rv, self.watch_timeout_s))
        except (Failure, OSError):
            if not self.faulty:
                raise
            time.sleep(0.1)
            return None
        self.watches += 1
        if st.status not in (200, 410):
            check(self.faulty or st.status == 429, "WATCH %s: %r" % (
                self.path, st.status))
            st.close()
            time.sleep(0.05)
            return None
        return st

    def _run(self):
        try:
            while not self._stop.is_set():
                st = self._open()
                if st is None:
                    continue
                relist = st.status == 410
                n = 0
                while not relist and not self._stop.is_set():
                    lines = st.lines
                    if n < len(lines):
                        for _, ln in lines[n:]:
                            n += 1
                            if not self._apply(json.loads(ln)):
                                relist = True
                                break
                        continue
                    if st.eof:
                        if n == len(st.lines):
                            break
                        continue
                    time.sleep(0.005)
                st.close()
                if relist and not self._stop.is_set():
                    self._list()
        except Exception as e:  # noqa: BLE001 - raised again by stop()
            self.error = e

    def snapshot(self):
        """A copy of name -> object, taken under the lock."""
        with self.lock:
            return dict(self.objs)

    def halt(self):
        """Ask the watching thread to end, without waiting for it."""
        self._stop.set()

    def stop(self):
        """End the watching thread; raise the error it met, if any."""
        self._stop.set()
        self._th.join(self.join_s)
        if self.error is not None:
            raise self.error
