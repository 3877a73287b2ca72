# SPDX-License-Identifier: Apache-2.0
"""`kubectl get` of custom resources through the server-side Table
(docs/apiserver.md §1.4): additionalPrinterColumns with JSONPath filters in
single quotes (Kueue's CRDs: ADMITTED, FINISHED of a Workload) or double
quotes, `type: date` columns as ages the way kube-apiserver words them, and
a CRD without columns getting kube's default AGE column. With the real
kubectl, whichever build is on the machine."""
import os
import re

from cuetest import case, check, data, eq, run_cases

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CRDS = os.path.join(ROOT, "manifests", "crds")
WLS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
AGE = re.compile(r"^(\d+s|\d+m\d*s?)$")  # a few seconds old
TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
         "application/json")


def columns(out):
    """kubectl's table text -> (header names, rows as lists of cells),
    split at the header's column starts (cells may contain spaces)."""
    lines = out.rstrip("\n").splitlines()
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=\s\s))\S", lines[0])]
    def cut(ln):
        return [ln[a:b].strip() for a, b in
                zip(starts, starts[1:] + [None])]
    return cut(lines[0]), [cut(ln) for ln in lines[1:]]


def condition(t, status, reason):
    return {"type": t, "status": status, "reason": reason, "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


@case("PC-1")
def workload_columns(s):
    s.kubectl("apply", "-f", CRDS)
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
          "metadata": {"name": "wl-done", "namespace": "default"},
          "spec": {"queueName": "user-queue", "podSets": [{
              "name": "main", "count": 1, "template": {"spec": {
                  "containers": [{"name": "c", "image": "busybox"}]}}}]}}
    code, _, body = s.raw("POST", WLS, wl)
    eq(code, 201, "create workload: %r" % body)
    wl["metadata"]["name"] = "wl-pending"
    eq(s.raw("POST", WLS, wl)[0], 201, "create second workload")
    body["status"] = {
        "admission": {"clusterQueue": "cluster-queue", "podSetAssignments": [
            {"name": "main", "count": 1, "flavors": {"cpu": "default"},
             "resourceUsage": {"cpu": "1"}}]},
        "conditions": [condition("QuotaReserved", "True", "QuotaReserved"),
                       condition("Admitted", "True", "Admitted"),
                       condition("Finished", "True", "Succeeded")]}
    code, _, got = s.raw("PUT", WLS + "/wl-done/status", body)
    eq(code, 200, "status update: %r" % got)
    head, rows = columns(s.kubectl("get", "workloads").stdout)
    eq(head, ["NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"],
       "workloads header")
    byname = {r[0]: r for r in rows}
    eq(byname["wl-done"][1:5], ["user-queue", "cluster-queue", "True",
                                "True"], "wl-done row")
    eq(byname["wl-pending"][1:5], ["user-queue", "", "", ""],
       "wl-pending row")
    for r in rows:
        check(AGE.match(r[5]), "AGE %r is no age" % r[5])


@case("PC-2")
def filters_dates_and_default_age(s):
    crd = open(data("crd-widgets.yaml")).read()
    # the same kind with columns: a double-quoted filter, a date column of
    # the object's own and one holding no time
    cols = """    additionalPrinterColumns:
    - {name: Ready, type: string,
       jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Bad-Ready, type: string,
       jsonPath: ".status.conditions[?(@.type=='Ready')].reason"}
    - {name: Since, type: date, jsonPath: .status.since}
    - {name: Broken, type: date, jsonPath: .status.phase}
"""
    gadgets = (crd.replace("widgets", "gadgets").replace("widget", "gadget")
               .replace("Widget", "Gadget").replace("[wd]", "[gd]")
               .replace("    subresources:", cols + "    subresources:")
               .replace("              phase:\n",
                        "              since: {type: string}\n"
                        "              conditions:\n"
                        "                type: array\n"
                        "                items:\n"
                        "                  type: object\n"
                        "                  x-kubernetes-preserve-unknown"
                        "-fields: true\n"
                        "              phase:\n"))
    s.apply_crd(data("crd-widgets.yaml"), "widgets.example.com")
    s.apply_crd(s.file("crd-gadgets.yaml", gadgets), "gadgets.example.com")
    base = "/apis/example.com/v1/namespaces/default/"
    eq(s.raw("POST", base + "widgets", {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}})[0], 201, "widget")
    code, _, g = s.raw("POST", base + "gadgets", {
        "apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g1"}, "spec": {"size": 1}})
    eq(code, 201, "gadget: %r" % g)
    g["status"] = {"since": "2026-01-01T00:00:00Z", "phase": "soon",
                   "conditions": [{"type": "Ready", "status": "True",
                                   "reason": "Built"}]}
    code, _, got = s.raw("PUT", base + "gadgets/g1/status", g)
    eq(code, 200, "gadget status: %r" % got)
    # a CRD without columns: kube's default, NAME and AGE as an age
    head, rows = columns(s.kubectl("get", "widgets").stdout)
    eq(head, ["NAME", "AGE"], "widgets header")
    check(AGE.match(rows[0][1]), "widget AGE %r" % rows[0][1])
    # the CRD's own columns only (no AGE added), dates as ages
    head, rows = columns(s.kubectl("get", "gadgets").stdout)
    eq(head, ["NAME", "READY", "BAD-READY", "SINCE", "BROKEN"],
       "gadgets header")
    eq(rows[0][:3], ["g1", "True", "Built"], "filter cells")
    check(re.match(r"^\d+d$", rows[0][3]), "SINCE %r" % rows[0][3])
    eq(rows[0][4], "<invalid>", "a date column holding no time")
    # on the wire: the column stays `date`, the cell is the age
    code, _, t = s.raw("GET", base + "gadgets", headers={"Accept": TABLE})
    eq(code, 200, "Table")
    eq([(c["name"], c["type"]) for c in t["columnDefinitions"]],
       [("Name", "string"), ("Ready", "string"), ("Bad-Ready", "string"),
        ("Since", "date"), ("Broken", "date")], "columnDefinitions")
    eq(t["rows"][0]["cells"][3], rows[0][3], "Since cell")


if __name__ == "__main__":
    run_cases()
