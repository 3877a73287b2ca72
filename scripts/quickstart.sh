#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/quickstart.sh - `make run`: cueue on this machine, no cluster
# needed. Starts cueue-apiserver (TLS, Job and JobSet simulators), applies
# cueue's CRDs and a ClusterQueue with 9 CPUs, starts cueue-controller
# with the default configuration plus the JobSet integration, submits four
# Jobs and a JobSet, and shows their Workloads going from pending (with
# the reason) to admitted to finished. Ctrl-C stops everything started
# here.
set -eu
: "${CUEUE_BIN:?}"
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
kc="$dir/kubeconfig"
pids=""
cleanup() {
	echo
	echo "quickstart: stopping"
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

"$CUEUE_BIN/cueue-apiserver" --listen 127.0.0.1:0 --kubeconfig-out "$kc" \
	--tls --simulate jobs,jobsets >"$dir/apiserver.log" 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$kc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$kc" ] || { cat "$dir/apiserver.log"; exit 1; }
k() { kubectl --kubeconfig "$kc" --cache-dir "$dir/cache" "$@"; }

k apply -f "$here/manifests/crds/" >/dev/null
k wait --for=condition=Established crd --all --timeout=30s >/dev/null
cat >"$dir/queues.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cluster-queue}
YAML
k apply -f "$dir/queues.yaml"

# The default Configuration of manifests/configmap.yaml, run locally:
# endpoints on loopback, one replica, both integrations.
cat >"$dir/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:0
metrics:
  bindAddress: 127.0.0.1:0
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
YAML
"$CUEUE_BIN/cueue-controller" --config "$dir/config.yaml" \
	--kubeconfig "$kc" --store "$dir/ledger.db" >"$dir/controller.log" 2>&1 &
pids="$pids $!"

# Jobs are created suspended: the quickstart does not install the
# admission webhooks (manifests/webhooks), which suspend them on creation.
for n in 1 2 3 4; do
	cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-job-$n
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: user-queue}
  annotations: {cueue.dev/sim-runtime-ms: "6000"}
spec:
  suspend: true
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "1", memory: 1Gi}}
YAML
done
cat <<'YAML' | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: sample-jobset
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          metadata:
            annotations: {cueue.dev/sim-runtime-ms: "4000"}
          spec:
            restartPolicy: Never
            containers:
            - name: w
              image: busybox
              resources: {requests: {cpu: "2", memory: 1Gi}}
YAML

echo
echo "quickstart: API server at $(sed -n 's/.*server: "\(.*\)"/\1/p' "$kc")"
echo "  kubectl --kubeconfig $kc get workloads,jobs,jobsets"
echo "  controller log: $dir/controller.log"
echo "Ctrl-C stops everything."
wcols='NAME:.metadata.name'
wcols="$wcols,RESERVED:.status.conditions[?(@.type==\"QuotaReserved\")].status"
wcols="$wcols,FINISHED:.status.conditions[?(@.type==\"Finished\")].status"
wcols="$wcols,REASON:.status.conditions[?(@.type==\"QuotaReserved\")].message"
while :; do
	echo "---- $(date +%T)"
	k get workloads -o custom-columns="$wcols" 2>&1 || true
	k get clusterqueue cluster-queue 2>&1 || true
	sleep 3
done
