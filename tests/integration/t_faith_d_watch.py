# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group D: WATCH
(docs/apiserver.md §10 group D; §1.2, §1.5, §3.1-3.5).

Wire-level checks use cuetest.RawStream (a raw socket that parses the
status line, headers and chunked framing itself) where a test would use
`curl -sN --raw`: same bytes, but with per-line arrival times.

Adaptations:
- F-D8 uses --bookmark-interval-ms 1000 and timeoutSeconds=3 instead of
  waiting 70 s for the 1.20 cache's one-minute bookmark.
- F-D11 is about the project's controller (its reflector); the controller
  has no reflector yet, so a python reflector-equivalent performs the same
  steps against the server: drop -> re-watch from the last RV without a
  relist; 410 -> relist with resourceVersion=<last> -> watch."""
import json
import re
import threading
import time

from cuetest import case, check, data, eq, run_cases, wait_for

NS = "default"
CMS = "/api/v1/namespaces/default/configmaps"


def cm(name, labels=None, d=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels or {}},
            "data": d or {"k": "v"}}


def create(s, name, labels=None):
    code, _, body = s.raw("POST", CMS, cm(name, labels))
    check(code == 201, "create %s: %d %r" % (name, code, body))
    return body


def patch(s, name, p):
    code, _, body = s.raw("PATCH", CMS + "/" + name, p,
                          {"Content-Type": "application/merge-patch+json"})
    check(code == 200, "patch %s: %d %r" % (name, code, body))
    return body


def delete(s, name):
    code, _, body = s.raw("DELETE", CMS + "/" + name)
    check(code == 200, "delete %s: %d %r" % (name, code, body))
    return body


def list_rv(s, path=CMS):
    return s.get_json(path)["metadata"]["resourceVersion"]


def wait_watch_request(s, mark, what="watch request"):
    wait_for(lambda: [e for e in s.requests(mark, verb="GET")
                      if "watch=true" in e["query"].split("&")], 15,
             what=what)
    time.sleep(0.2)


def summary(evs):
    return [(e["type"], e["object"]["metadata"].get("name")) for e in evs]


@case("F-D1")
def d1(s):
    s.kubectl("apply", "-f", data("cm1.yaml"))
    mark = s.log_mark()
    w = s.kubectl_bg("get", "cm", "cm1", "-w", "-o", "name")
    wait_watch_request(s, mark)
    watch = [e for e in s.requests(mark, verb="GET") if "watch=true" in
             e["query"]][0]
    check("resourceVersion=0" in watch["query"].split("&") and
          ("fieldSelector=metadata.name%3Dcm1" in watch["query"] or
           "fieldSelector=metadata.name=cm1" in watch["query"]),
          "kubectl single-object watch query %r" % watch["query"])
    s.kubectl("label", "cm", "cm1", "x=y")
    time.sleep(1.0)
    early = w.poll() is not None
    w.kill()
    out, err = w.communicate()
    check(not early, "kubectl get -w ended early: %r %r" % (out, err))
    eq(out.splitlines(), ["configmap/cm1", "configmap/cm1"],
       "kubectl get cm cm1 -w output (initial GET + the change; the "
       "synthetic ADDED is swallowed)")


def f_d2(s, version=None):
    s.kubectl("apply", "-f", data("cm1.yaml"), version=version)
    mark = s.log_mark()
    w = s.kubectl_bg("get", "cm", "-w", "--output-watch-events", "-o",
                     "json", version=version)
    wait_watch_request(s, mark)
    log = s.requests(mark, verb="GET", path=CMS)
    lst = [e for e in log if "watch=true" not in e["query"]]
    wat = [e for e in log if "watch=true" in e["query"]]
    eq(len(wat), 1, "watch requests")
    q = dict(kv.split("=", 1) for kv in wat[0]["query"].split("&"))
    check(q.get("resourceVersion") not in (None, "", "0"),
          "kubectl get -w did not watch from the list RV: %r" % q)
    check(lst and lst[-1]["seq"] < wat[0]["seq"], "no list before watch")
    s.kubectl("create", "-f", data("cm2.yaml"), version=version)
    s.kubectl("label", "cm", "cm2", "x=y", version=version)
    s.kubectl("delete", "cm", "cm2", version=version)
    time.sleep(1.0)
    early = w.poll() is not None
    w.kill()
    out, err = w.communicate()
    check(not early, "kubectl get -w ended early: %r %r" % (out, err))
    dec = json.JSONDecoder()
    evs, i, out = [], 0, out.strip()
    while i < len(out):
        o, i = dec.raw_decode(out, i)
        evs.append(o)
        while i < len(out) and out[i].isspace():
            i += 1
    eq(summary(evs), [("ADDED", "cm1"), ("ADDED", "cm2"),
                      ("MODIFIED", "cm2"), ("DELETED", "cm2")],
       "kubectl watch events (list item, then the changes; no synthetic "
       "ADDEDs)")
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs[1:]]
    check(rvs == sorted(rvs) and len(set(rvs)) == 3, "event RVs %r" % rvs)


@case("F-D2")
def d2(s):
    f_d2(s)


@case("F-D2/kubectl-1.27")
def d2_127(s):
    f_d2(s, version="1.27")


@case("F-D3")
def d3(s):
    from kubernetes import client, watch
    create(s, "pre")
    v1 = client.CoreV1Api(s.api())
    rv = v1.list_namespaced_config_map(NS).metadata.resource_version
    got = []

    def changes():
        time.sleep(0.5)
        create(s, "a")
        patch(s, "a", {"data": {"k": "v2"}})
        delete(s, "pre")

    th = threading.Thread(target=changes)
    t0 = time.time()
    th.start()
    for ev in watch.Watch().stream(v1.list_namespaced_config_map, NS,
                                   resource_version=rv, timeout_seconds=5):
        got.append((ev["type"], ev["object"].metadata.name,
                    time.time() - t0))
    took = time.time() - t0
    th.join()
    eq([g[:2] for g in got], [("ADDED", "a"), ("MODIFIED", "a"),
                              ("DELETED", "pre")], "python watch events")
    check(4.5 <= took <= 7, "generator ended after %.2fs, want ~5s" % took)
    check(all(g[2] < 2 for g in got), "events arrived late: %r" % got)


@case("F-D4")
def d4(s):
    from kubernetes import client, watch
    for n in ("x1", "x2", "x3"):
        create(s, n)
    v1 = client.CoreV1Api(s.api())
    mark = s.log_mark()
    evs = [(e["type"], e["object"].metadata.name) for e in
           watch.Watch().stream(v1.list_namespaced_config_map, NS,
                                timeout_seconds=2)]
    eq(evs, [("ADDED", "x1"), ("ADDED", "x2"), ("ADDED", "x3")],
       "synthetic ADDEDs for a watch without resourceVersion")
    q = s.requests(mark, verb="GET", path=CMS)[0]["query"]
    check("resourceVersion" not in q and "watch=True" in q.split("&"),
          "python watch query %r" % q)


@case("F-D5")
def d5(s):
    rv0 = list_rv(s)
    create(s, "a")
    create(s, "b")
    create(s, "c")
    patch(s, "a", {"data": {"k": "2"}})
    delete(s, "b")
    cur = s.state()["resourceVersion"]
    st = s.stream(CMS + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % rv0)
    evs = st.wait_end(5)
    eq(summary(evs), [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c"),
                      ("MODIFIED", "a"), ("DELETED", "b")], "all events")
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
    check(rvs == sorted(rvs) and len(set(rvs)) == 5, "RVs %r" % rvs)
    eq(rvs[-1], cur, "DELETED carries the delete's RV")
    check(rvs[-1] > rvs[1], "DELETED RV not newer than b's create")
    k = 2
    st = s.stream(CMS + "?watch=1&resourceVersion=%d&timeoutSeconds=1" %
                  rvs[k - 1])
    eq(summary(st.wait_end(5)), summary(evs[k:]),
       "watch from the %d-th event's RV" % k)
    st = s.stream(CMS + "?watch=1&resourceVersion=%d&timeoutSeconds=1" %
                  rvs[-1])
    eq(st.wait_end(5), [], "watch from the DELETED event's RV")
    check(st.clean_end, "watch did not end with the terminating chunk")


@case("F-D6")
def d6(s):
    create(s, "pre")
    st = s.stream(CMS + "?watch=1&resourceVersion=%s" % list_rv(s))
    eq(st.status, 200, "status")
    eq(st.headers.get("transfer-encoding", "").lower(), "chunked",
       "Transfer-Encoding")
    eq(st.headers.get("content-type"), "application/json", "Content-Type")
    check("content-length" not in st.headers, "Content-Length on a watch")
    check(not st.headers.get("content-encoding"), "compressed watch")
    eq(st.lines, [], "events before any change (headers flushed first)")
    lat = []
    for i in range(3):
        t = time.monotonic()
        create(s, "n%d" % i)
        wait_for(lambda: len(st.lines) > i, 2, what="event %d" % i)
        lat.append(st.lines[i][0] - t)
    patch(s, "n0", {"data": {"k": "x"}})
    delete(s, "n1")
    st.wait_lines(5, 3)
    check(max(lat) < 0.2, "event latency %r (flush per event)" % lat)
    for _, ln in st.lines:
        check(ln.endswith(b"\n") and ln.count(b"\n") == 1,
              "event not one line: %r" % ln)
        ev = json.loads(ln)
        eq(sorted(ev), ["object", "type"], "WatchEvent keys")
        check(ln.startswith(b'{"type":'), "pretty or reordered: %r" %
              ln[:40])
        eq((ev["object"]["kind"], ev["object"]["apiVersion"]),
           ("ConfigMap", "v1"), "event object TypeMeta")
    eq([e["type"] for e in st.events()],
       ["ADDED", "ADDED", "ADDED", "MODIFIED", "DELETED"], "types")
    check(st.body.endswith(b"\n"), "partial line in the body")


@case("F-D7")
def d7(s):
    from kubernetes import client, watch
    from kubernetes.client.rest import ApiException
    early = list_rv(s)
    for i in range(5):
        create(s, "c%d" % i)
    s.compact()
    st = s.stream(CMS + "?watch=1&resourceVersion=%s" % early)
    evs = st.wait_end(5)
    eq(st.status, 200, "HTTP status of an expired watch")
    eq(st.headers.get("transfer-encoding", "").lower(), "chunked", "TE")
    eq(len(evs), 1, "events on an expired watch: %r" % evs)
    ev = evs[0]
    eq(ev["type"], "ERROR", "type")
    o = ev["object"]
    m = re.match(r"^too old resource version: (\d+) \((\d+)\)$",
                 o.get("message", ""))
    check(m and m.group(1) == early, "message %r" % o.get("message"))
    eq(o, {"kind": "Status", "apiVersion": "v1", "metadata": {},
           "status": "Failure", "message": o["message"],
           "reason": "Expired", "code": 410}, "ERROR object")
    check(st.clean_end, "stream not ended with the terminating chunk")
    # python: retries once from the last RV, then raises 410
    v1 = client.CoreV1Api(s.api())
    mark = s.log_mark()
    try:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, NS,
                                      resource_version=early):
            raise AssertionError("python got an event from an expired RV")
        raise AssertionError("python watch ended without 410")
    except ApiException as e:
        eq(e.status, 410, "python ApiException status")
        check(e.reason.startswith("Expired: too old resource version: "),
              "reason %r" % e.reason)
    eq(len([e for e in s.requests(mark, verb="GET", path=CMS)]), 2,
       "python watch requests (one internal retry)")


@case("F-D8", args=["--bookmark-interval-ms", "1000"])
def d8(s):
    create(s, "a")
    rv = list_rv(s)
    st = s.stream(CMS + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=3"
                  "&resourceVersion=%s" % rv)
    plain = s.stream(CMS + "?watch=1&timeoutSeconds=3&resourceVersion=%s" %
                     rv)
    evs = st.wait_end(8)
    bm = [e for e in evs if e["type"] == "BOOKMARK"]
    check(len(bm) >= 1, "no BOOKMARK in %r" % evs)
    eq([e["type"] for e in evs if e["type"] != "BOOKMARK"], [],
       "other events")
    for b in bm:
        o = b["object"]
        eq((o.get("kind"), o.get("apiVersion")), ("ConfigMap", "v1"),
           "BOOKMARK TypeMeta")
        check(set(o) <= {"kind", "apiVersion", "metadata"},
              "BOOKMARK object has content: %r" % o)
        md = o["metadata"]
        check(set(md) <= {"resourceVersion", "creationTimestamp"} and
              md.get("creationTimestamp") is None,
              "BOOKMARK metadata %r" % md)
        eq(md["resourceVersion"], rv, "BOOKMARK resourceVersion")
    eq(plain.wait_end(8), [], "bookmarks sent without allowWatchBookmarks")


@case("F-D9")
def d9(s):
    create(s, "m", {"env": "a"})
    create(s, "other", {"env": "b"})
    st = s.stream(CMS + "?watch=1&labelSelector=env%%3Da&resourceVersion=%s"
                  % list_rv(s))
    b = patch(s, "m", {"metadata": {"labels": {"env": "b"}}})
    patch(s, "other", {"data": {"k": "never matched"}})
    a = patch(s, "m", {"metadata": {"labels": {"env": "a"}}})
    evs = st.wait_lines(2, 5)
    time.sleep(0.3)
    evs = st.events()
    eq(summary(evs), [("DELETED", "m"), ("ADDED", "m")], "events")
    eq(evs[0]["object"]["metadata"]["labels"], {"env": "a"},
       "DELETED carries the previous content")
    eq(evs[0]["object"]["metadata"]["resourceVersion"],
       b["metadata"]["resourceVersion"], "DELETED carries the new RV")
    eq(evs[1]["object"]["metadata"]["resourceVersion"],
       a["metadata"]["resourceVersion"], "ADDED RV")
    eq(evs[1]["object"]["metadata"]["labels"], {"env": "a"}, "ADDED labels")


@case("F-D10")
def d10(s):
    create(s, "a")
    for v in ("True", "1", "true", "", "yes"):
        st = s.stream(CMS + "?watch=%s&timeoutSeconds=1" % v)
        eq((st.status, st.headers.get("transfer-encoding", "").lower()),
           (200, "chunked"), "watch=%r" % v)
        eq(summary(st.wait_end(5)), [("ADDED", "a")], "watch=%r events" % v)
    for v in ("false", "False", "0"):
        code, _, body = s.raw("GET", CMS + "?watch=%s" % v)
        eq((code, body.get("kind")), (200, "ConfigMapList"),
           "watch=%r is a list" % v)


@case("F-D11")
def d11(s):
    create(s, "a")
    lst = s.get_json(CMS + "?resourceVersion=0")
    last = lst["metadata"]["resourceVersion"]
    st = s.stream(CMS + "?watch=1&allowWatchBookmarks=true&"
                  "timeoutSeconds=300&resourceVersion=%s" % last)
    time.sleep(1.2)
    check(not st.eof, "watch with timeoutSeconds=300 closed within 1.2s")
    patch(s, "a", {"data": {"k": "1"}})
    last = st.wait_lines(1)[-1]["object"]["metadata"]["resourceVersion"]
    s.drop_watches()
    st.wait_end(5)
    check(st.clean_end, "dropped watch not ended with the terminating chunk")
    patch(s, "a", {"data": {"k": "2"}})  # while nobody watches
    # reflector: re-watch from the last synced RV, no relist
    st = s.stream(CMS + "?watch=1&timeoutSeconds=300&resourceVersion=%s" %
                  last)
    evs = st.wait_lines(1)
    eq([(e["type"], e["object"]["data"]) for e in evs],
       [("MODIFIED", {"k": "2"})], "events after re-watch (no replay)")
    last = evs[-1]["object"]["metadata"]["resourceVersion"]
    st.close()
    patch(s, "a", {"data": {"k": "3"}})
    s.compact()
    # the watch from the now-compacted RV fails in-stream with 410
    st = s.stream(CMS + "?watch=1&timeoutSeconds=300&resourceVersion=%s" %
                  last)
    evs = st.wait_end(5)
    eq([(e["type"], e["object"].get("code")) for e in evs], [("ERROR", 410)],
       "watch after compaction")
    # reflector: relist with resourceVersion=<last> (not older than)
    code, _, body = s.raw("GET", CMS + "?resourceVersion=%s" % last)
    eq(code, 200, "relist with resourceVersion=<last>")
    check(int(body["metadata"]["resourceVersion"]) >= int(last), "list RV")
    eq([i["data"] for i in body["items"]], [{"k": "3"}], "relist content")
    st = s.stream(CMS + "?watch=1&timeoutSeconds=300&resourceVersion=%s" %
                  body["metadata"]["resourceVersion"])
    patch(s, "a", {"data": {"k": "4"}})
    eq([e["object"]["data"] for e in st.wait_lines(1)], [{"k": "4"}],
       "watch after relist")


if __name__ == "__main__":
    run_cases()
