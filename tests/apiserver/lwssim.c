/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/lwssim.c - a stand-in for the LeaderWorkerSet controller
 * (--simulate leaderworkersets: leaderworkerset.x-k8s.io/v1;
 * docs/apiserver.md §15.3), simplified: no StatefulSets; the Pods are
 * created through the front door and controlled by the LeaderWorkerSet.
 *
 * For each group i < spec.replicas (default 1) a leader Pod <lws>-<i>
 * from leaderWorkerTemplate.leaderTemplate (else workerTemplate) and
 * size-1 (size default 1) workers <lws>-<i>-<j> from workerTemplate,
 * created once the leader exists (startupPolicy LeaderCreated, the
 * default) or is Ready (LeaderReady). Labels
 * leaderworkerset.sigs.k8s.io/{name,group-index,worker-index,group-key,
 * template-revision-hash}; annotation leaderworkerset.sigs.k8s.io/size,
 * and on workers leaderworkerset.sigs.k8s.io/leader-name. Groups beyond
 * the replicas are deleted; a finished Pod is replaced. status.replicas,
 * readyReplicas (groups whose Pods are all Ready), updatedReplicas,
 * hpaPodSelector and condition Available. Never finishes (LeaderWorkerSet
 * has no spec.managedBy).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define LWS_USER "system:serviceaccount:lws-system:lws-controller-manager"
#define L "leaderworkerset.sigs.k8s.io/"

static json_t *group_pod(
    json_t *lws, json_int_t g, json_int_t w, json_int_t size, const char *rev)
{
	const char *name = as_jstr(lws, "metadata.name");
	const char *ns = as_jstr(lws, "metadata.namespace");
	json_t *tmpl = as_jget(lws, "spec.leaderWorkerTemplate.workerTemplate");
	json_t *pod, *l, *a;
	char pname[512], leader[400], buf[64], key[41], *kin;

	snprintf(leader, sizeof(leader), "%s-%lld", name, (long long)g);
	if (w == 0) {
		json_t *lt =
		    as_jget(lws, "spec.leaderWorkerTemplate.leaderTemplate");

		if (lt != NULL)
			tmpl = lt;
		snprintf(pname, sizeof(pname), "%s", leader);
	} else {
		snprintf(pname, sizeof(pname), "%s-%lld", leader, (long long)w);
	}
	pod = as_fw_pod(
	    lws, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", tmpl, pname);
	l = as_jget(pod, "metadata.labels");
	a = as_jget(pod, "metadata.annotations");
	if (!json_is_object(a)) {
		a = json_object();
		as_jset(pod, "metadata.annotations", a);
	}
	kin = cu_asprintf("%s/%s", ns, leader);
	as_fw_sha1_hex(kin ? kin : "", key);
	cu_free(kin);
	json_object_set_new(l, L "name", json_string(name));
	snprintf(buf, sizeof(buf), "%lld", (long long)g);
	json_object_set_new(l, L "group-index", json_string(buf));
	snprintf(buf, sizeof(buf), "%lld", (long long)w);
	json_object_set_new(l, L "worker-index", json_string(buf));
	json_object_set_new(l, L "group-key", json_string(key));
	json_object_set_new(l, L "template-revision-hash", json_string(rev));
	snprintf(buf, sizeof(buf), "%lld", (long long)size);
	json_object_set_new(a, L "size", json_string(buf));
	if (w > 0)
		json_object_set_new(a, L "leader-name", json_string(leader));
	return pod;
}

static const char *label(json_t *o, const char *k)
{
	return json_string_value(
	    json_object_get(as_jget(o, "metadata.labels"), k));
}

static void lws_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	bool can_create;
	struct as_kind *k = as_fw_kind(srv, c);
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *lws = k ? as_store_get(k, ns, name) : NULL, *pods, *p, *have,
	       *upd;
	json_int_t replicas, size, g, w, groups = 0, ready_groups = 0;
	const char *policy;
	char rev[41], pname[400], sel[400];
	size_t i;

	if (lws == NULL || pk == NULL ||
	    as_jget(lws, "metadata.deletionTimestamp") != NULL)
		return;
	replicas = as_fw_int(lws, "spec.replicas", 1);
	/* Creates answered before more are sent (one batch per pass). */
	can_create = !as_fw_pending(lws);
	size = as_fw_int(lws, "spec.leaderWorkerTemplate.size", 1);
	policy = as_jstr(lws, "spec.startupPolicy");
	{
		char *t = json_dumps(as_jget(lws, "spec.leaderWorkerTemplate"),
		    JSON_COMPACT | JSON_SORT_KEYS);

		as_fw_sha1_hex(t ? t : "", rev);
		cu_free(t);
		rev[16] = '\0';
	}
	pods = as_fw_owned(pk, lws);
	have = json_object();
	json_array_foreach(pods, i, p)
	{
		const char *gi = label(p, L "group-index");

		if (gi == NULL || strtoll(gi, NULL, 10) >= replicas) {
			as_fw_delete(srv, pk, p, c->user);
			continue;
		}
		if (!as_fw_pod_live(p)) {
			if (as_jget(p, "metadata.deletionTimestamp") == NULL)
				as_fw_delete(srv, pk, p, c->user);
			continue;
		}
		json_object_set(have, as_jstr(p, "metadata.name"), p);
	}
	json_decref(pods);
	for (g = 0; g < replicas; g++) {
		json_t *leader;
		bool all = true;

		snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)g);
		leader = json_object_get(have, pname);
		if (leader == NULL) {
			if (can_create)
				as_fw_create(srv, c, pk,
				    group_pod(lws, g, 0, size, rev), lws);
			continue;
		}
		groups++;
		all = as_fw_pod_ready(leader);
		for (w = 1; w < size; w++) {
			json_t *wp;

			snprintf(pname, sizeof(pname), "%s-%lld-%lld", name,
			    (long long)g, (long long)w);
			wp = json_object_get(have, pname);
			if (wp != NULL) {
				all = all && as_fw_pod_ready(wp);
				continue;
			}
			all = false;
			if (policy != NULL &&
			    strcmp(policy, "LeaderReady") == 0 &&
			    !as_fw_pod_ready(leader))
				continue;
			if (can_create)
				as_fw_create(srv, c, pk,
				    group_pod(lws, g, w, size, rev), lws);
		}
		ready_groups += all;
	}
	json_decref(have);
	lws = as_store_get(k, ns, name);
	if (lws == NULL)
		return;
	upd = json_deep_copy(lws);
	as_jset(upd, "status.replicas", json_integer(groups));
	as_jset(upd, "status.readyReplicas", json_integer(ready_groups));
	as_jset(upd, "status.updatedReplicas", json_integer(groups));
	snprintf(sel, sizeof(sel), L "name=%s," L "worker-index=0", name);
	as_jset(upd, "status.hpaPodSelector", json_string(sel));
	if (ready_groups >= replicas)
		as_fw_cond(upd, "Available", "True", "AllGroupsReady",
		    "All replicas are ready", false);
	else
		as_fw_cond(upd, "Available", "False", "GroupsNotReady",
		    "Not all replicas are ready", false);
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_lws = {"leaderworkerset.x-k8s.io", "v1",
    "leaderworkersets", "LeaderWorkerSet", AS_SIM_LWS, LWS_USER, lws_reconcile};
