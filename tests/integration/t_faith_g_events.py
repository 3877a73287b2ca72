# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group G: Events (notes/kubernetes-api.md section
10.G; sections 1.5, 4.3, 8.1-8.2). Only F-G1 is in scope here."""
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


if __name__ == "__main__":
    run_cases()
