# SPDX-License-Identifier: Apache-2.0
"""Faithfulness tests, group F: Leases (docs/apiserver.md §10 group F;
§1.4, §4.2, §7.1). Only F-F3 is in scope here (F-F1/F-F2 need
leader-election candidates / the controller)."""
import json
import re
import subprocess

from cuetest import case, check, eq, run_cases

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def curl(s, method, path, body):
    """curl, as a wire-level check; returns (code, parsed body)."""
    p = subprocess.run(
        ["curl", "-sS", "-X", method, "--cacert", s.ca_file,
         "-H", "Authorization: Bearer " + s.token,
         "-H", "Content-Type: application/json",
         "-H", "Accept: application/json",
         "--data-binary", json.dumps(body), "-w", "\n%{http_code}",
         s.url + path], capture_output=True, text=True, timeout=20)
    text, _, code = p.stdout.rpartition("\n")
    return int(code), json.loads(text)


def lease(name, holder, rv=None, **spec):
    md = {"name": name}
    if rv:
        md["resourceVersion"] = rv
    sp = {"holderIdentity": holder, "leaseDurationSeconds": 15,
          "acquireTime": "2026-01-02T03:04:05.123456Z",
          "renewTime": "2026-01-02T03:04:05.654321Z",
          "leaseTransitions": 0}
    sp.update(spec)
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": md, "spec": sp}


@case("F-F3")
def f3(s):
    # PUT to a lease that does not exist creates it (AllowCreateOnUpdate)
    code, body = curl(s, "PUT", LEASES + "/l1", lease("l1", "a"))
    eq(code, 201, "PUT to a missing lease: %r" % body)
    eq((body["kind"], body["metadata"]["name"],
        body["spec"]["holderIdentity"]), ("Lease", "l1", "a"), "created")
    check(body["metadata"].get("resourceVersion"), "RV of the created lease")
    for f in ("acquireTime", "renewTime"):
        check(MICRO.match(body["spec"][f]), "%s %r (MicroTime: six "
              "fractional digits)" % (f, body["spec"][f]))
    eq(body["spec"]["renewTime"], "2026-01-02T03:04:05.654321Z",
       "renewTime round trip")
    # PUT without resourceVersion: 422 (AllowUnconditionalUpdate=false)
    code, err = curl(s, "PUT", LEASES + "/l1", lease("l1", "b"))
    eq(code, 422, "PUT without RV: %r" % err)
    eq((err["kind"], err["reason"], err["details"].get("kind")),
       ("Status", "Invalid", "Lease"), "422 Status")
    check("metadata.resourceVersion: Invalid value: 0x0: must be specified "
          "for an update" in err["message"], err["message"])
    eq(err["details"]["causes"][0]["field"], "metadata.resourceVersion",
       "causes[0].field")
    # with the current RV the update succeeds (200); a stale one is 409
    rv = body["metadata"]["resourceVersion"]
    code, upd = curl(s, "PUT", LEASES + "/l1", lease("l1", "b", rv,
                                                    leaseTransitions=1))
    eq(code, 200, "PUT with RV: %r" % upd)
    eq((upd["spec"]["holderIdentity"], upd["spec"]["leaseTransitions"]),
       ("b", 1), "updated spec")
    code, err = curl(s, "PUT", LEASES + "/l1", lease("l1", "c", rv))
    eq((code, err["reason"]), (409, "Conflict"), "stale RV")
    eq(err["message"], 'Operation cannot be fulfilled on '
       'leases.coordination.k8s.io "l1": the object has been modified; '
       'please apply your changes to the latest version and try again',
       "Conflict message")
    # racing creators: the second POST is 409 AlreadyExists
    code, err = curl(s, "POST", LEASES, lease("l1", "d"))
    eq((code, err["reason"], err["message"]),
       (409, "AlreadyExists",
        'leases.coordination.k8s.io "l1" already exists'), "POST duplicate")
    # validation (7.1): leaseDurationSeconds > 0
    code, err = curl(s, "PUT", LEASES + "/l2",
                     lease("l2", "a", leaseDurationSeconds=0))
    eq((code, err.get("reason")), (422, "Invalid"),
       "leaseDurationSeconds 0: %r" % err)
    check("spec.leaseDurationSeconds" in err["message"], err["message"])


if __name__ == "__main__":
    run_cases()
