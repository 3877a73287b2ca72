#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/quickstart.sh - `make run`: cueue on this machine, no cluster
# needed. Starts cueue-apiserver (TLS; simulated Job and JobSet
# controllers, a kubelet for plain Pods, scheduler - once Nodes exist -
# and cluster-autoscaler ProvisioningRequests), applies
# cueue's CRDs and a ClusterQueue with 9 CPUs, starts cueue-controller
# with the default configuration plus the JobSet and pod integrations,
# installs what a cluster install has around it (the webhook and visibility
# Services, the admission webhooks, the conversion webhook of the v1beta1
# CRD versions, the visibility APIServices: each pointed at the
# controller's loopback port, as cueue-apiserver dials a Service on
# 127.0.0.1 at its port), submits four Jobs, a JobSet and a group of two
# plain Pods (tests/data/frameworks/pod-group.yaml, as Kueue's pod-group
# sample: gated by the webhook, one Workload, ungated on admission), and
# shows their Workloads going from pending (with the reason) to admitted to
# finished. A banner says how to reach it (KUBECONFIG, the PATH line for
# `kubectl cueue`, metrics, health, webhook and visibility addresses,
# commands to try); when every Workload has finished a summary follows
# (admitted, preempted, finished, wall time) and everything keeps serving
# until Ctrl-C.
#
# Every way out (the end of the script, Ctrl-C, SIGTERM, SIGHUP, a closed
# output pipe) stops the programs started here and removes the temporary
# directory, which holds the admin token and the ledger. Run in the
# foreground of a terminal (make run), it takes the terminal for its own
# process group, so that Ctrl-C reaches it alone and make exits quietly.
#
#   CUEUE_BIN=DIR        the programs (make run sets it)
#   QUICKSTART_TICK=S    seconds between progress updates (default 2)
#   QUICKSTART_LOGS=P    on exit, copy the programs' logs to Papiserver.stderr
#                        and Pcontroller.stderr (tests scan them)
set -eu
: "${CUEUE_BIN:?}"
# At a prompt (make run in the terminal's foreground process group), run
# again as a job of our own: job control gives its new process group the
# terminal, so Ctrl-C reaches the quickstart alone and not make, which
# would report "Interrupt" for a run that ended as asked. Fields 5 and 8
# of /proc/PID/stat: the process group and the terminal's foreground one.
if [ -z "${QUICKSTART_JOB:-}" ] && [ -t 0 ] && [ -r /proc/$$/stat ]; then
	# shellcheck disable=SC2046 # split into fields on purpose
	set -- $(cat /proc/$$/stat)
	if [ "$5" = "$8" ]; then
		set -m
		rc=0
		QUICKSTART_JOB=1 sh "$0" || rc=$?
		exit $rc
	fi
fi
here=$(cd "$(dirname "$0")/.." && pwd)
tick=${QUICKSTART_TICK:-2}
start=$(date +%s)
pids=""
dir=""
cleanup() {
	set +e
	trap '' INT TERM HUP PIPE
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	if [ -n "${QUICKSTART_LOGS:-}" ] && [ -n "$dir" ]; then
		for l in apiserver controller; do
			cp "$dir/$l.log" "$QUICKSTART_LOGS$l.stderr" 2>/dev/null
		done
	fi
	[ -n "$dir" ] && rm -rf "$dir"
	# stderr: stdout may be the pipe that just closed
	echo "quickstart: stopped; $dir removed" >&2
}
trap cleanup EXIT
# Ctrl-C and SIGTERM are the ways to stop it: exit 0. A hang-up or a
# closed pipe is not: 128 + the signal's number.
trap 'exit 0' INT TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE
dir=$(mktemp -d "${TMPDIR:-/tmp}/cueue-quickstart.XXXXXX")
kc="$dir/kubeconfig"

fail() {
	echo "quickstart: $1" >&2
	[ -n "${2:-}" ] && [ -f "$2" ] && tail -n 20 "$2" >&2
	exit 1
}
# Wait up to 10 s for a line matching $2 in file $1; print its match.
wait_line() {
	i=0
	while [ $i -lt 100 ]; do
		m=$(sed -n "s/$2/\\1/p" "$1" 2>/dev/null | head -n 1)
		[ -n "$m" ] && { echo "$m"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

"$CUEUE_BIN/cueue-apiserver" --listen 127.0.0.1:0 --kubeconfig-out "$kc" \
	--tls --simulate jobs,jobsets,pods,scheduler,provisioning >"$dir/apiserver.log" 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$kc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$kc" ] || fail "cueue-apiserver did not start" "$dir/apiserver.log"
k() { kubectl --kubeconfig "$kc" --cache-dir "$dir/cache" "$@"; }

# The webhook server's certificate, for the name the API server dials
# (the Service's DNS name, on 127.0.0.1), and its own CA: the conversion
# and admission webhook configurations carry it as their caBundle.
mkdir -p "$dir/certs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$dir/certs/tls.key" -out "$dir/certs/tls.crt" -days 1 \
	-subj /CN=cueue-webhook-service.cueue-system.svc -addext \
	"subjectAltName=DNS:cueue-webhook-service.cueue-system.svc,IP:127.0.0.1" \
	>/dev/null 2>&1 || fail "openssl could not make the webhook certificate"
ca=$(base64 "$dir/certs/tls.crt" | tr -d '\n')
whport=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
visport=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# A shipped manifest with its Service port 443 replaced by $2 (the API
# server dials a Service on 127.0.0.1 at its port) and, given $3, that
# caBundle in every clientConfig.
at_port() {
	awk -v port="$2" -v ca="${3:-}" '
		/^ *port: 443$/ { sub(/443$/, port) }
		{ print }
		ca != "" && /^ *clientConfig:$/ {
			match($0, /^ */)
			printf "%*scaBundle: %s\n", RLENGTH + 2, "", ca
		}' "$1"
}

# cueue's CRDs, their v1beta1 versions converted by the controller's
# /convert; the JobSet simulator registers JobSet's CRD itself (applying
# it again would warn about a missing last-applied annotation).
for f in "$here"/manifests/crds/*.yaml; do
	case "$f" in
	*/jobset.x-k8s.io_*)
		k get -f "$f" >/dev/null 2>&1 && continue ;;
	esac
	at_port "$f" "$whport" "$ca" | k apply -f - >/dev/null
done
# The ProvisioningRequest CRD, which cluster-autoscaler brings on a real
# cluster (the API server's simulator stands in for the autoscaler).
k apply -f "$here/tests/data/crds" >/dev/null
k wait --for=condition=Established crd --all --timeout=30s >/dev/null
# The webhook Service of a cluster install.
k create namespace cueue-system >/dev/null
at_port "$here/manifests/service.yaml" "$whport" | k apply -f - >/dev/null
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
k apply -f "$dir/queues.yaml" >/dev/null

# The default Configuration of manifests/configmap.yaml, run locally:
# endpoints on loopback, one replica, the Job, JobSet and pod
# integrations (pods of kube-system and cueue-system are never managed,
# as podOptions defaults to), the webhook
# certificate made above.
cat >"$dir/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:0
metrics:
  bindAddress: 127.0.0.1:0
webhook:
  host: 127.0.0.1
  port: $whport
  certDir: $dir/certs
visibilityServer:
  bindAddress: 127.0.0.1
  bindPort: $visport
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset", "pod"]
YAML
# Local use: plain-HTTP metrics without authentication (on a cluster they
# are HTTPS with bearer-token authentication and authorization).
"$CUEUE_BIN/cueue-controller" --config "$dir/config.yaml" \
	--kubeconfig "$kc" --store "$dir/ledger.db" --metrics-secure=false \
	>"$dir/controller.log" 2>&1 &
pids="$pids $!"
metrics=$(wait_line "$dir/controller.log" \
	'.*metrics: listening on \([^ ]*\) (http).*') ||
	fail "cueue-controller did not start" "$dir/controller.log"
health=$(wait_line "$dir/controller.log" \
	'.*health: listening on \([^ ]*\) (http).*') ||
	fail "cueue-controller did not start" "$dir/controller.log"
wait_line "$dir/controller.log" '.*\(webhook\): listening on .*' \
	>/dev/null || fail "the webhook server did not start" \
	"$dir/controller.log"
# The admission webhooks, once their server listens (they fail closed).
at_port "$here/manifests/webhooks/webhooks.yaml" "$whport" "$ca" |
	k apply -f - >/dev/null
# The visibility APIServices and Service, once their server listens (an
# APIService without its backend makes kubectl's discovery complain).
wait_line "$dir/controller.log" '.*\(visibility\): listening on .*' \
	>/dev/null || fail "the visibility server did not start" \
	"$dir/controller.log"
at_port "$here/manifests/visibility.yaml" "$visport" |
	k apply -f - >/dev/null
i=0
until k get --raw /apis/visibility.kueue.x-k8s.io/v1beta2 >/dev/null 2>&1; do
	[ $i -lt 100 ] || fail "the visibility API is not served" \
		"$dir/controller.log"
	sleep 0.1
	i=$((i + 1))
done

# Created as a user would: the admission webhook suspends them until
# their Workloads are admitted.
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
# A pod group as Kueue's sample writes it: two Pods, one Workload.
k create -n default -f "$here/tests/data/frameworks/pod-group.yaml" \
	>/dev/null
total=6

vis=/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue
banner() {
	cat <<EOF
==== cueue quickstart: 4 Jobs, a JobSet and a pod group share ClusterQueue cluster-queue (9 CPUs)
  export KUBECONFIG=$kc
  export PATH=$CUEUE_BIN:\$PATH   # for kubectl cueue
  metrics:    http://$metrics/metrics
  health:     http://$health/healthz  http://$health/readyz
  webhooks:   https://127.0.0.1:$whport (Service cueue-webhook-service: admission, v1beta1 conversion)
  visibility: https://127.0.0.1:$visport (APIService v1beta2.visibility.kueue.x-k8s.io)
  try:        kubectl get workloads
              kubectl describe clusterqueue cluster-queue
              kubectl get jobs,jobsets,pods -o wide
  next:       kubectl cueue pending cluster-queue
              kubectl get --raw $vis/pendingworkloads
              kubectl get clusterqueues.v1beta1.kueue.x-k8s.io
  guides:     $here/docs/tasks/README.md
  Ctrl-C stops everything and removes $dir
EOF
}

# Sum of a counter over its series in the controller's /metrics.
counter() {
	curl -fsS "http://$metrics/metrics" 2>/dev/null |
		awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF }
			END { printf "%d\n", s }'
}

wcols='NAME:.metadata.name'
wcols="$wcols,RESERVED:.status.conditions[?(@.type==\"QuotaReserved\")].status"
wcols="$wcols,FINISHED:.status.conditions[?(@.type==\"Finished\")].status"
wcols="$wcols,REASON:.status.conditions[?(@.type==\"QuotaReserved\")].message"
tty=0
[ -t 1 ] && tty=1
banner
last=""
while :; do
	table=$(k get workloads -o custom-columns="$wcols" 2>&1 || true)
	if [ "$table" != "$last" ]; then
		# a terminal redraws under the banner; a pipe gets each change
		[ $tty -eq 1 ] && { printf '\033[H\033[2J'; banner; }
		printf '%s\n%s\n' "---- $(date +%T)" "$table"
		last=$table
	fi
	done_n=$(k get workloads -o \
		jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Finished")].status}{"\n"}{end}' \
		2>/dev/null | grep -c '^True$' || true)
	[ "$done_n" -ge "$total" ] && break
	sleep "$tick"
done
secs=$(($(date +%s) - start))
echo
echo "==== done in ${secs}s: $(counter kueue_admitted_workloads_total) admitted," \
	"$(counter kueue_preempted_workloads_total) preempted, $done_n finished" \
	"(of $total workloads)"
banner
echo "Still serving: try the commands above; Ctrl-C stops."
while :; do
	sleep 1
done
