#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/quickstart.sh - `make run`: a local cluster stand-in on this
# machine. Starts cueue-apiserver (TLS, Job and JobSet simulators), applies
# cueue's CRDs and the single-ClusterQueue sample, submits a Job, and shows
# live status until Ctrl-C, which stops everything started here.
#
# The controller itself (cueue-controller) joins this quickstart once its
# reconcilers land; until then the Job below stays as the API server's Job
# simulator runs it, without queueing.
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

if [ -d "$here/manifests/crds" ]; then
	k apply -f "$here/manifests/crds/" >/dev/null
	k wait --for=condition=Established crd --all --timeout=30s >/dev/null
fi
if [ -f "$here/manifests/samples/single-clusterqueue.yaml" ]; then
	k apply -f "$here/manifests/samples/single-clusterqueue.yaml"
fi
cat >"$dir/job.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
  annotations:
    cueue.dev/sim-runtime-ms: "5000"
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      containers:
      - name: main
        image: busybox
        resources:
          requests:
            cpu: "1"
            memory: 200Mi
YAML
k create -f "$dir/job.yaml"

echo
echo "quickstart: API server at $(sed -n 's/.*server: "\(.*\)"/\1/p' "$kc")"
echo "  kubectl --kubeconfig $kc get jobs,pods"
echo "Ctrl-C stops everything."
cols='NAME:.metadata.name,QUEUE:.metadata.labels.kueue\.x-k8s\.io/queue-name'
cols="$cols,SUSPENDED:.spec.suspend,ACTIVE:.status.active"
cols="$cols,SUCCEEDED:.status.succeeded"
while :; do
	echo "---- $(date +%T)"
	k get jobs -o custom-columns="$cols" 2>&1 || true
	k get pods -o custom-columns='NAME:.metadata.name,PHASE:.status.phase' \
		2>&1 || true
	sleep 3
done
