# SPDX-License-Identifier: Apache-2.0
"""cuetest.rbac - the shipped RBAC (manifests/rbac) against the requests
the controller made: each access-log entry turned into RBAC's request
attributes as kube-apiserver's RequestInfo does, the ClusterRole and Role
loaded, and a check that every request the controller sent is allowed.

run_cases(rbac=True) checks this after every case of a file (the
framework suites: every kind's suspend, resume, status and delete paths
go through the shipped rules, not only Job's); t_security.py checks the
reverse as well (every verb granted is used)."""
import os
import re

import yaml

from .checks import Failure, check

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "..")
RBAC = os.path.join(ROOT, "manifests", "rbac")
AGENT = "cueue-controller/"


def attributes(entry):
    """(verb, group, resource, subresource, namespace, name) of one
    request, or
    ("nonresource", path) for a path outside /api/v1 and /apis/G/V."""
    path = entry["path"].rstrip("/")
    segs = path.split("/")[1:]
    if segs[:2] == ["api", "v1"]:
        group, rest = "", segs[2:]
    elif segs[:1] == ["apis"] and len(segs) >= 3:
        group, rest = segs[1], segs[3:]
    else:
        return ("nonresource", path)
    if not rest:
        return ("nonresource", path)
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    res = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else ""
    m = entry["verb"]
    q = entry.get("query", "")
    if m == "GET":
        if name is not None:
            verb = "get"
        elif re.search(r"(^|&)watch=(1|true)", q):
            verb = "watch"
        else:
            verb = "list"
        # kube-apiserver's RequestInfo: a list or watch with the field
        # selector metadata.name=X is a request on X (RBAC resourceNames).
        sel = re.search(r"(?:^|&)fieldSelector=metadata\.name(?:%3D|=)"
                        r"([^&,%]+)(?:&|$)", q)
        if verb in ("list", "watch") and sel:
            name = sel.group(1)
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}[m]
    return (verb, group, res, sub, ns, name)


def load_rules():
    """[(namespace or None, rule)] from the ClusterRole and the Role;
    no wildcard anywhere."""
    out = []
    for fname in ("cluster_role.yaml", "role.yaml"):
        with open(os.path.join(RBAC, fname)) as f:
            doc = yaml.safe_load(f)
        ns = doc["metadata"].get("namespace") if doc["kind"] == "Role" \
            else None
        for r in doc["rules"]:
            check("*" not in r["verbs"] and "*" not in r["resources"] and
                  "*" not in r.get("apiGroups", []),
                  "no wildcards: %r" % r)
            out.append((ns, r))
    return out


def allowed(rules, a):
    """The rules [(ns, rule)] that allow request attributes a."""
    verb, group, res, sub, ns, name = a
    full = res + ("/" + sub if sub else "")
    return [(rns, r) for rns, r in rules
            if (rns is None or rns == ns) and group in r["apiGroups"] and
            full in r["resources"] and verb in r["verbs"] and
            ("resourceNames" not in r or name in r["resourceNames"])]


def controller_calls(srv, since=0):
    """{attributes: first path} of the controller's requests to srv."""
    calls = {}
    for e in srv.access_log(since):
        if e.get("userAgent", "").startswith(AGENT):
            calls.setdefault(attributes(e), e["path"])
    return calls


def check_controller_allowed(srv, since=0):
    """Every request the controller sent to srv since the access-log mark
    is allowed by the shipped rules; the denied ones are named."""
    rules = load_rules()
    denied = sorted("%s %s" % (a[0], p)
                    for a, p in controller_calls(srv, since).items()
                    if a[0] == "nonresource" or not allowed(rules, a))
    if denied:
        raise Failure("requests manifests/rbac does not allow: %r" % denied)
