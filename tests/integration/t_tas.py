# SPDX-License-Identifier: Apache-2.0
"""Topology-aware scheduling, end to end as far as it is built: the
Topology CRD is served and a Topology with Kueue's example levels
(block, rack, hostname) is stored; Nodes of a 2 blocks x 2 racks x 4
hosts fixture carry those labels; a ResourceFlavor names the Topology;
Jobs whose pod templates carry the podset-required-topology,
podset-preferred-topology or podset-unconstrained-topology annotation
get Workloads whose spec.podSets[].topologyRequest says so, in Kueue's
wire form (and a Job without them gets none). Placement is not wired
into admission yet: these Workloads are admitted on quota."""
import os

from cuetest import CONTROLLER_CONFIG, Controller, case, eq, run_cases, \
    wait_for

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MANIFESTS = os.path.join(ROOT, "manifests")
NS = "team-a"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS
WLS = KQ + "/namespaces/%s/workloads" % NS
SIM = "jobs,scheduler"
BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"

CONFIG = CONTROLLER_CONFIG + (
    "integrations:\n"
    "  frameworks: [\"batch/job\"]\n")


def post(s, path, obj):
    code, _, body = s.raw("POST", path, obj)
    eq(code, 201, "%s: %r" % (path, body))
    return body


def fixture(s):
    """Topology "default", its flavor, queues with 32 cpu, and 16 Nodes
    (b{1,2}-r{1,2}-n{1..4}, 1 cpu each) labelled by block/rack/host."""
    s.kubectl("apply", "-f", os.path.join(MANIFESTS, "crds"))
    s.kubectl("wait", "--for=condition=Established", "crd", "--all",
              "--timeout=30s")
    post(s, KQ + "/topologies", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK},
                            {"nodeLabel": HOST}]}})
    post(s, KQ + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "tas-flavor"},
        "spec": {"nodeLabels": {"cloud.provider.com/node-group": "tas"},
                 "topologyName": "default"}})
    post(s, KQ + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "tas-cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu"],
            "flavors": [{"name": "tas-flavor", "resources": [
                {"name": "cpu", "nominalQuota": "32"}]}]}]}})
    s.namespace(NS)
    post(s, KQ + "/namespaces/%s/localqueues" % NS, {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "tas-lq", "namespace": NS},
        "spec": {"clusterQueue": "tas-cq"}})
    for b in (1, 2):
        for r in (1, 2):
            for h in range(1, 5):
                name = "b%d-r%d-n%d" % (b, r, h)
                alloc = {"cpu": "1", "memory": "8Gi", "pods": "110"}
                post(s, "/api/v1/nodes", {
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {
                        BLOCK: "b%d" % b, RACK: "b%d-r%d" % (b, r),
                        HOST: name,
                        "cloud.provider.com/node-group": "tas"}},
                    "spec": {},
                    "status": {"allocatable": alloc, "capacity": alloc}})


def create_job(s, name, pods, annotations):
    tpl = {"metadata": {"annotations": dict(annotations)},
           "spec": {"containers": [{
               "name": "c", "image": "busybox",
               "resources": {"requests": {"cpu": "1"}}}],
               "restartPolicy": "Never"}}
    post(s, JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"kueue.x-k8s.io/queue-name": "tas-lq"}},
        "spec": {"parallelism": pods, "completions": pods,
                 "suspend": True, "template": tpl}})


def wl_of(s, owner):
    for w in s.get_json(WLS)["items"]:
        refs = w["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("name") == owner:
            return w
    return None


@case("topology-requests-reach-workloads", simulate=SIM)
def requests(s):
    """Each annotation becomes the matching topologyRequest field."""
    fixture(s)
    topo = s.get_json(KQ + "/topologies/default")
    eq([lv["nodeLabel"] for lv in topo["spec"]["levels"]],
       [BLOCK, RACK, HOST], "Topology levels stored")
    Controller(s, config=CONFIG)
    create_job(s, "rack", 4,
               {"kueue.x-k8s.io/podset-required-topology": RACK})
    create_job(s, "pref", 2,
               {"kueue.x-k8s.io/podset-preferred-topology": BLOCK})
    create_job(s, "anywhere", 2,
               {"kueue.x-k8s.io/podset-unconstrained-topology": "true"})
    create_job(s, "plain", 1, {})
    want = {"rack": {"required": RACK}, "pref": {"preferred": BLOCK},
            "anywhere": {"unconstrained": True}, "plain": None}
    for owner, tr in want.items():
        w = wait_for(lambda: wl_of(s, owner), 15,
                     what="%s's Workload" % owner)
        eq(w["spec"]["podSets"][0].get("topologyRequest"), tr,
           "%s topologyRequest" % owner)


if __name__ == "__main__":
    run_cases()
