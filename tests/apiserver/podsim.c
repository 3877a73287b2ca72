/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/podsim.c - the pod stand-in (--simulate pods, implied by
 * every framework simulator): a kubelet-like lifecycle for Pods that no
 * Job simulator drives (docs/apiserver.md §15.1).
 *
 *   - a Pod with schedulingGates waits Pending with PodScheduled=False,
 *     reason SchedulingGated, as kube-scheduler reports it;
 *   - with --simulate scheduler and a Node, the scheduler and kubelet
 *     stand-ins (sched.c) bind and start it; without Nodes it is bound to
 *     the node "cueue-sim-node" (PodScheduled=True) and started after the
 *     milliseconds of cueue.dev/sim-ready-ms (Running, Ready); a Pod for
 *     another spec.schedulerName waits for that scheduler (or a test) to
 *     set its nodeName;
 *   - a Pod without a controller (a plain Pod) then runs for the
 *     milliseconds of cueue.dev/sim-runtime-ms, or 1000 when it has none
 *     and its restartPolicy is Never or OnFailure (with restartPolicy
 *     Always and no annotation it runs until deleted), and ends Succeeded,
 *     or Failed with cueue.dev/sim-fail: "true"; a Pod with a controller
 *     runs until its controller stops it;
 *   - a Pod being deleted that finalizers keep (deletionTimestamp set) has
 *     its containers killed: phase Failed (exit code 137) unless it had
 *     already finished (an unbound one is just marked Failed, as the pod
 *     garbage collector does); it goes once its finalizers are removed.
 * Writes are as system:node:cueue-sim-node (kubelet) and
 * system:kube-scheduler (binding).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define FAKE_NODE "cueue-sim-node"
#define KUBELET "system:node:cueue-sim-node"
#define SCHED "system:kube-scheduler"
#define READY_ANN "cueue.dev/sim-ready-ms"

static struct {
	bool on;
	json_t *dirty; /* "ns/name" -> true */
	json_t *wake;  /* "ns/name" -> ms */
	json_t *due;   /* "ns/name" -> ms: start (bound) or end (running) */
} ps;

static struct as_kind *pods_kind(struct as_server *srv)
{
	return as_kind_find(srv, "", "v1", "pods");
}

static char *key_of(json_t *pod)
{
	return cu_asprintf("%s/%s", as_jstr(pod, "metadata.namespace"),
	    as_jstr(pod, "metadata.name"));
}

static json_t *controller_of(json_t *obj)
{
	json_t *o;
	size_t i;

	json_array_foreach(as_jget(obj, "metadata.ownerReferences"), i, o)
	{
		if (json_is_true(json_object_get(o, "controller")))
			return o;
	}
	return NULL;
}

/* Pods of Jobs are the Job simulator's (sim.c). */
static bool jobs_pod(struct as_server *srv, json_t *pod)
{
	json_t *o = controller_of(pod);
	const char *k = as_jstr(o, "kind"), *av = as_jstr(o, "apiVersion");

	return srv->sim_jobs && k != NULL && av != NULL &&
	       strcmp(k, "Job") == 0 && strcmp(av, "batch/v1") == 0;
}

void as_podsim_notify(struct as_server *srv, json_t *obj, json_t *old)
{
	json_t *ref = obj ? obj : old;
	char *key;

	if (!ps.on || !(srv->sim_fw & AS_SIM_PODS))
		return;
	key = key_of(ref);
	if (key == NULL)
		return;
	if (obj == NULL) {
		json_object_del(ps.due, key);
		json_object_del(ps.wake, key);
	} else {
		json_object_set_new(ps.dirty, key, json_true());
	}
	cu_free(key);
}

static void wake(const char *key, int64_t at)
{
	json_t *cur = json_object_get(ps.wake, key);

	if (cur == NULL || json_integer_value(cur) > at)
		json_object_set_new(ps.wake, key, json_integer(at));
}

static long long ms_ann(json_t *pod, const char *ann, long long dflt)
{
	const char *v = as_fw_ann(pod, ann);
	long long ms = v ? strtoll(v, NULL, 10) : dflt;

	return ms < 0 ? 0 : ms;
}

/* How long a plain pod runs once Ready; -1: until deleted. */
static long long runtime_of(json_t *pod)
{
	const char *rp = as_jstr(pod, "spec.restartPolicy");

	if (as_fw_ann(pod, "cueue.dev/sim-runtime-ms") != NULL)
		return as_fw_runtime(pod, NULL, 0);
	if (rp != NULL &&
	    (strcmp(rp, "Never") == 0 || strcmp(rp, "OnFailure") == 0))
		return 1000;
	return -1;
}

static bool default_scheduler(json_t *pod)
{
	const char *sn = as_jstr(pod, "spec.schedulerName");

	return sn == NULL || sn[0] == '\0' ||
	       strcmp(sn, "default-scheduler") == 0;
}

static bool gated(json_t *pod)
{
	return json_array_size(as_jget(pod, "spec.schedulingGates")) > 0;
}

static void set_gated(struct as_server *srv, json_t *pod)
{
	json_t *c, *upd;
	size_t i;

	json_array_foreach(as_jget(pod, "status.conditions"), i, c)
	{
		const char *t = as_jstr(c, "type"), *r = as_jstr(c, "reason");

		if (t != NULL && strcmp(t, "PodScheduled") == 0 && r != NULL &&
		    strcmp(r, "SchedulingGated") == 0)
			return;
	}
	upd = json_deep_copy(pod);
	as_jset(upd, "status.phase", json_string("Pending"));
	as_fw_cond(upd, "PodScheduled", "False", "SchedulingGated",
	    "Scheduling is blocked due to non-empty scheduling gates", false);
	as_internal_update(srv, pods_kind(srv), upd, true, SCHED);
}

static void bind_fake(struct as_server *srv, json_t *pod, const char *key)
{
	json_t *upd = json_deep_copy(pod), *c;
	size_t i;

	as_jset(upd, "spec.nodeName", json_string(FAKE_NODE));
	as_fw_cond(upd, "PodScheduled", "True", "", "", false);
	/* kube writes PodScheduled=True without reason or message. */
	json_array_foreach(as_jget(upd, "status.conditions"), i, c)
	{
		const char *t = as_jstr(c, "type");

		if (t != NULL && strcmp(t, "PodScheduled") == 0) {
			json_object_del(c, "reason");
			json_object_del(c, "message");
		}
	}
	as_internal_update(srv, pods_kind(srv), upd, false, SCHED);
	json_object_set_new(ps.due, key,
	    json_integer(as_fw_now_ms() + ms_ann(pod, READY_ANN, 0)));
	json_object_set_new(ps.dirty, key, json_true());
}

/* A pod being deleted: the kubelet kills its containers; one never
 * bound is marked Failed by the pod garbage collector. */
static void kill_pod(struct as_server *srv, json_t *pod)
{
	const char *ph = as_jstr(pod, "status.phase");
	const char *node = as_jstr(pod, "spec.nodeName");
	json_t *upd;

	if (ph != NULL &&
	    (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0))
		return;
	if (node != NULL && node[0] != '\0') {
		as_fw_stop_pod(srv, pod, false, KUBELET);
		return;
	}
	upd = json_deep_copy(pod);
	as_jset(upd, "status.phase", json_string("Failed"));
	as_internal_update(srv, pods_kind(srv), upd, true,
	    "system:serviceaccount:kube-system:pod-garbage-collector");
}

static void step(struct as_server *srv, const char *key)
{
	char ns[254], name[254];
	json_t *pod, *due;
	const char *node, *ph;
	int64_t now = as_fw_now_ms();

	if (!as_fw_split(key, ns, sizeof(ns), name, sizeof(name)))
		return;
	pod = as_store_get(pods_kind(srv), ns, name);
	if (pod == NULL || jobs_pod(srv, pod))
		return;
	if (as_jget(pod, "metadata.deletionTimestamp") != NULL) {
		kill_pod(srv, pod);
		return;
	}
	ph = as_jstr(pod, "status.phase");
	if (ph != NULL &&
	    (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0))
		return;
	node = as_jstr(pod, "spec.nodeName");
	due = json_object_get(ps.due, key);
	if (node == NULL || node[0] == '\0') {
		if (as_sched_active(srv) || !default_scheduler(pod))
			return; /* sched.c binds it, or another scheduler */
		if (gated(pod))
			set_gated(srv, pod);
		else
			bind_fake(srv, pod, key);
		return;
	}
	if (!as_fw_cond_true(pod, "Ready")) {
		if (strcmp(node, FAKE_NODE) != 0 && srv->sim_sched)
			return; /* sched.c's kubelet starts it */
		if (due == NULL) {
			json_object_set_new(ps.due, key,
			    json_integer(now + ms_ann(pod, READY_ANN, 0)));
			due = json_object_get(ps.due, key);
		}
		if (json_integer_value(due) > now) {
			if (ph == NULL ||
			    as_jget(pod, "status.containerStatuses") == NULL)
				as_sched_run_pod(srv, pod, false);
			wake(key, json_integer_value(due));
			return;
		}
		json_object_del(ps.due, key);
		as_sched_run_pod(srv, pod, true);
		return;
	}
	/* Running: a plain pod ends after its runtime. */
	if (controller_of(pod) != NULL || runtime_of(pod) < 0)
		return;
	if (due == NULL) {
		json_object_set_new(
		    ps.due, key, json_integer(now + runtime_of(pod)));
		due = json_object_get(ps.due, key);
	}
	if (json_integer_value(due) > now) {
		wake(key, json_integer_value(due));
		return;
	}
	json_object_del(ps.due, key);
	as_fw_stop_pod(srv, pod, !as_fw_fails(pod, NULL), KUBELET);
}

bool as_podsim_tick(struct as_server *srv)
{
	json_t *batch, *v;
	const char *key;
	void *tmp;
	int64_t now = as_fw_now_ms();
	bool ran;

	if (!ps.on)
		return false;
	json_object_foreach_safe(ps.wake, tmp, key, v)
	{
		if (json_integer_value(v) <= now) {
			json_object_set_new(ps.dirty, key, json_true());
			json_object_del(ps.wake, key);
		}
	}
	batch = ps.dirty;
	ps.dirty = json_object();
	ran = json_object_size(batch) > 0;
	json_object_foreach_safe(batch, tmp, key, v)
	{
		step(srv, key);
	}
	json_decref(batch);
	return ran;
}

void as_podsim_start(struct as_server *srv)
{
	if (!(srv->sim_fw & AS_SIM_PODS) || ps.on)
		return;
	ps.dirty = json_object();
	ps.wake = json_object();
	ps.due = json_object();
	ps.on = true;
}

void as_podsim_stop(void)
{
	if (!ps.on)
		return;
	json_decref(ps.dirty);
	json_decref(ps.wake);
	json_decref(ps.due);
	memset(&ps, 0, sizeof(ps));
}
