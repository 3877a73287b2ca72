# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group G: Events (docs/apiserver.md §10 group G;
§1.5, §4.3, §8.1-8.2): F-G1, and F-G2/F-G3 for the
events.k8s.io/v1 view of the same storage."""
import datetime
import re

from cuetest import case, check, data, eq, run_cases


def ts(delta=0):
    t = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@case("F-G1")
def g1(s):
    from kubernetes import client
    s.apply_crd(data("crd-widgets.yaml"), "widgets.example.com")
    s.kubectl("apply", "-f", data("w1.yaml"))
    co = client.CustomObjectsApi(s.api())
    w = co.get_namespaced_custom_object("example.com", "v1", "default",
                                        "widgets", "w1")
    uid = w["metadata"]["uid"]
    v1 = client.CoreV1Api(s.api())
    name = "w1.%x" % 0x17a6c2f1d2e3f4a5
    ev = v1.create_namespaced_event("default", {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Widget", "apiVersion": "example.com/v1",
                           "name": "w1", "namespace": "default",
                           "uid": uid},
        "reason": "Resized", "message": "size changed",
        "source": {"component": "cueue-test"},
        "firstTimestamp": ts(-180), "lastTimestamp": ts(-180),
        "count": 1, "type": "Normal"})
    eq(ev.count, 1, "created count")
    mark = s.log_mark()
    ev = v1.patch_namespaced_event(name, "default", {
        "count": 3, "lastTimestamp": ts(), "message": "size changed again"})
    pt = s.requests(mark, verb="PATCH")
    eq([(e["contentType"].split(";")[0], e["code"]) for e in pt],
       [("application/strategic-merge-patch+json", 200)],
       "event PATCH (dict body => SMP)")
    eq((ev.count, ev.message, ev.reason), (3, "size changed again",
                                           "Resized"), "patched event")
    eq(ev.involved_object.uid, uid, "involvedObject.uid kept")
    mark = s.log_mark()
    out = s.kubectl("describe", "widget", "w1").stdout
    evq = [e for e in s.requests(mark, verb="GET",
                                 path="/api/v1/namespaces/default/events")]
    check(evq, "describe did not list events")
    q = evq[0]["query"]
    for f in ("involvedObject.name", "involvedObject.namespace",
              "involvedObject.kind", "involvedObject.uid"):
        check(f in q, "describe's event query lacks %s: %r" % (f, q))
    eq(evq[0]["code"], 200, "event list code")
    lines = [ln for ln in out.splitlines() if "Resized" in ln]
    eq(len(lines), 1, "describe Events lines: %r" % out)
    check(re.search(r"\(x3 over \d+m\d*s?\)|\(x3 over \d+s\)|"
                    r"\(x3 over \d+m\)", lines[0]),
          "describe line %r" % lines[0])
    check("size changed again" in lines[0] and "cueue-test" in lines[0],
          "describe line %r" % lines[0])


CORE_EVENT = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "pod1.17a6c2f1d2e3f4a5", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "apiVersion": "v1", "name": "pod1",
                       "namespace": "default", "uid": "u-1"},
    "reason": "Started", "message": "started the thing",
    "source": {"component": "kubelet"},
    "firstTimestamp": "2024-01-01T00:00:00Z",
    "lastTimestamp": "2024-01-01T00:00:10Z",
    "count": 3, "type": "Normal"}


@case("F-G2")
def g2(s):
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    base = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e1", "namespace": "default"},
            "regarding": {"kind": "Pod", "name": "pod1",
                          "namespace": "default"},
            "reason": "Started", "action": "Start", "note": "n",
            "type": "Normal", "reportingController": "example.com/c",
            "reportingInstance": "i-1"}
    code, _, body = s.raw("POST", path, base)
    eq(code, 422, "create without eventTime")
    eq(body["details"]["causes"][0]["field"], "eventTime")
    good = dict(base, eventTime="2024-01-01T00:00:00.000000Z")
    code, _, body = s.raw("POST", path, dict(good, series={
        "count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}))
    eq(code, 422, "series.count 1")
    code, _, body = s.raw("POST", path, good)
    eq(code, 201, "valid create: %r" % body)
    eq(body["note"], "n")
    # One storage: the core API sees the same object, converted.
    core = s.get_json("/api/v1/namespaces/default/events/e1")
    eq(core["message"], "n", "note -> message")
    eq(core["involvedObject"]["name"], "pod1",
       "regarding -> involvedObject")
    eq(core["reportingComponent"], "example.com/c")
    eq(core["metadata"]["resourceVersion"],
       body["metadata"]["resourceVersion"],
       "same object, same resourceVersion")


@case("F-G3")
def g3(s):
    import json
    from kubernetes import client
    code, _, _ = s.raw("POST", "/api/v1/namespaces/default/events",
                       CORE_EVENT)
    eq(code, 201)
    raw = s.kubectl("get", "--raw", "/apis/events.k8s.io/v1/namespaces/"
                    "default/events/pod1.17a6c2f1d2e3f4a5").stdout
    ev = json.loads(raw)
    eq(ev["apiVersion"], "events.k8s.io/v1")
    eq(ev["note"], "started the thing")
    eq(ev["regarding"]["name"], "pod1")
    eq(ev["deprecatedCount"], 3)
    eq(ev["deprecatedSource"], {"component": "kubelet"})
    check('"eventTime":null' in raw.replace(" ", ""),
          "eventTime is null: %r" % raw)
    # python's EventsV1Api rejects that null (the real-server quirk).
    try:
        client.EventsV1Api(s.api()).list_namespaced_event("default")
        raise AssertionError("EventsV1Api accepted eventTime null")
    except ValueError as e:
        check("event_time" in str(e), str(e))
    body = s.get_json("/apis/events.k8s.io/v1/namespaces/default/events")
    eq(body["kind"], "EventList")
    eq(body["apiVersion"], "events.k8s.io/v1")
    eq(body["items"][0]["note"], "started the thing")
    # A watch on the view delivers converted objects too.
    code, _, text = s.raw("GET", "/apis/events.k8s.io/v1/namespaces/"
                          "default/events?watch=1&timeoutSeconds=1")
    eq(code, 200)
    lines = text.decode().splitlines() if isinstance(text, bytes) else \
        [json.dumps(text)]
    first = json.loads(lines[0])
    eq(first["type"], "ADDED")
    eq(first["object"]["apiVersion"], "events.k8s.io/v1")
    eq(first["object"]["note"], "started the thing")


if __name__ == "__main__":
    run_cases()
