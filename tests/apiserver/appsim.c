/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/appsim.c - stand-ins for the Deployment and StatefulSet
 * controllers (--simulate deployments, statefulsets; docs/apiserver.md
 * §15.2), simplified: no ReplicaSets or ControllerRevisions; Pods are
 * created from the template through the front door (so that admission
 * webhooks gate them as they gate a ReplicaSet's) and controlled by the
 * Deployment or StatefulSet itself.
 *
 * Deployment: spec.replicas (default 1) Pods named
 * <deployment>-<pod-template-hash>-<5 random characters>, labelled
 * pod-template-hash; a template change creates Pods of the new hash and
 * deletes old ones as new ones become Ready (extra unready ones first;
 * strategy Recreate: every old one first);
 * status replicas, updatedReplicas, readyReplicas, availableReplicas,
 * unavailableReplicas, observedGeneration, conditions Available and
 * Progressing.
 * StatefulSet: Pods <statefulset>-<ordinal> labelled
 * controller-revision-hash, statefulset.kubernetes.io/pod-name and
 * apps.kubernetes.io/pod-index; OrderedReady (the default) creates the
 * next ordinal once every lower one is Running and Ready and removes the
 * highest first, Parallel does both at once; finished Pods are replaced;
 * a RollingUpdate deletes the highest-ordinal Pod of an old revision once
 * every Pod is Ready; status replicas, readyReplicas, availableReplicas,
 * currentReplicas, updatedReplicas, currentRevision, updateRevision,
 * observedGeneration, collisionCount.
 * Neither ever finishes; deleting one deletes its Pods (fwkit.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define DEPLOY_USER "system:serviceaccount:kube-system:deployment-controller"
#define STS_USER "system:serviceaccount:kube-system:statefulset-controller"
#define HASH_LABEL "pod-template-hash"
#define REV_LABEL "controller-revision-hash"

/* kube's rand.String and SafeEncodeString alphabet (no vowels). */
static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";

/* FNV-1a of the template's canonical JSON, safe-encoded as kube writes
 * a pod-template-hash (the digits of the 32-bit value, mapped). */
static void template_hash(json_t *tmpl, char out[16])
{
	char *s = json_dumps(tmpl, JSON_COMPACT | JSON_SORT_KEYS);
	uint32_t h = 2166136261u;
	char digits[16];
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0'; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	cu_free(s);
	snprintf(digits, sizeof(digits), "%u", (unsigned)h);
	for (i = 0; i < 15 && digits[i] != '\0'; i++)
		out[i] = alnum[(unsigned char)digits[i] % (sizeof(alnum) - 1)];
	out[i] = '\0';
}

static const char *label(json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(as_jget(obj, "metadata.labels"), key));
}

static void set_label(json_t *pod, const char *key, const char *val)
{
	json_t *l = as_jget(pod, "metadata.labels");

	if (!json_is_object(l)) {
		l = json_object();
		as_jset(pod, "metadata.labels", l);
	}
	json_object_set_new(l, key, json_string(val));
}

/* The status object of obj [borrowed] to fill, on a copy [owned]. */
static json_t *status_copy(json_t *obj)
{
	json_t *upd = json_deep_copy(obj);

	if (!json_is_object(json_object_get(upd, "status")))
		json_object_set_new(upd, "status", json_object());
	json_object_set_new(json_object_get(upd, "status"),
	    "observedGeneration",
	    json_integer(as_fw_int(obj, "metadata.generation", 1)));
	return upd;
}

/* Set status.<field> to v, or drop it when 0 (omitempty). */
static void count(json_t *upd, const char *field, json_int_t v)
{
	json_t *st = json_object_get(upd, "status");

	if (v != 0)
		json_object_set_new(st, field, json_integer(v));
	else
		json_object_del(st, field);
}

/* ---- Deployment ------------------------------------------------------- */

static bool recreate(json_t *d)
{
	const char *t = as_jstr(d, "spec.strategy.type");

	return t != NULL && strcmp(t, "Recreate") == 0;
}

static void deploy_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *dk = as_fw_kind(srv, c);
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *d = dk ? as_store_get(dk, ns, name) : NULL;
	json_t *pods, *p, *upd, *doomed;
	json_int_t replicas, live = 0, fresh = 0, ready = 0, fresh_ready = 0;
	json_int_t old = 0, allowed_old, maxu;
	char hash[16], rs[300], msg[400];
	size_t i;

	if (d == NULL || pk == NULL ||
	    as_jget(d, "metadata.deletionTimestamp") != NULL)
		return;
	replicas = as_fw_int(d, "spec.replicas", 1);
	template_hash(as_jget(d, "spec.template"), hash);
	snprintf(rs, sizeof(rs), "%s-%s", name, hash);
	pods = as_fw_owned(pk, d);
	doomed = json_array();
	/* Count; extra new Pods go, unready ones first (list order is by
	 * name, so readiness is the only preference here). */
	json_array_foreach(pods, i, p)
	{
		const char *h = label(p, HASH_LABEL);
		bool is_new = h != NULL && strcmp(h, hash) == 0;

		if (!as_fw_pod_live(p))
			continue;
		live++;
		if (as_fw_pod_ready(p))
			ready++;
		if (is_new) {
			fresh++;
			if (as_fw_pod_ready(p))
				fresh_ready++;
		} else {
			old++;
		}
	}
	allowed_old = replicas - fresh_ready > 0 ? replicas - fresh_ready : 0;
	if (recreate(d))
		allowed_old = 0;
	{
		json_int_t drop_new = fresh - replicas,
			   drop_old = old - allowed_old;
		int pass;

		for (pass = 0; pass < 2; pass++)
			json_array_foreach(pods, i, p)
			{
				const char *h = label(p, HASH_LABEL);
				bool is_new = h != NULL && strcmp(h, hash) == 0;
				json_int_t *budget =
				    is_new ? &drop_new : &drop_old;

				if (!as_fw_pod_live(p) || *budget <= 0 ||
				    as_fw_pod_ready(p) != (pass == 1))
					continue;
				json_array_append(doomed, p);
				(*budget)--;
			}
	}
	json_array_foreach(doomed, i, p)
	{
		as_fw_delete(srv, pk, p, c->user);
	}
	json_decref(doomed);
	json_decref(pods);
	d = as_store_get(dk, ns, name);
	if (d == NULL)
		return;
	/* Recreate: every old Pod goes before a new one is made. */
	if (old > 0 && recreate(d))
		fresh = replicas;
	if (fresh < replicas && !as_fw_pending(d)) {
		json_int_t n;

		for (n = fresh; n < replicas; n++) {
			char pname[400], sfx[6];
			json_t *pod;
			int j;

			for (j = 0; j < 5; j++)
				sfx[j] =
				    alnum[as_rand(srv) % (sizeof(alnum) - 1)];
			sfx[5] = '\0';
			snprintf(pname, sizeof(pname), "%s-%s", rs, sfx);
			pod = as_fw_pod(d, "apps/v1", "Deployment",
			    as_jget(d, "spec.template"), pname);
			set_label(pod, HASH_LABEL, hash);
			as_fw_create(srv, c, pk, pod, d);
		}
	}
	upd = status_copy(d);
	count(upd, "replicas", live);
	count(upd, "updatedReplicas", fresh);
	count(upd, "readyReplicas", ready);
	count(upd, "availableReplicas", ready);
	count(upd, "unavailableReplicas",
	    replicas - ready > 0 ? replicas - ready : 0);
	maxu = replicas / 4; /* maxUnavailable 25%, rounded down */
	if (ready >= replicas - maxu)
		as_fw_cond(upd, "Available", "True", "MinimumReplicasAvailable",
		    "Deployment has minimum availability.", true);
	else
		as_fw_cond(upd, "Available", "False",
		    "MinimumReplicasUnavailable",
		    "Deployment does not have minimum availability.", true);
	if (fresh_ready >= replicas && old == 0) {
		snprintf(msg, sizeof(msg),
		    "ReplicaSet \"%s\" has successfully progressed.", rs);
		as_fw_cond(upd, "Progressing", "True", "NewReplicaSetAvailable",
		    msg, true);
	} else {
		snprintf(
		    msg, sizeof(msg), "ReplicaSet \"%s\" is progressing.", rs);
		as_fw_cond(
		    upd, "Progressing", "True", "ReplicaSetUpdated", msg, true);
	}
	as_internal_update(srv, dk, upd, true, c->user);
}

const struct as_fw_ctl as_fw_deployments = {"apps", "v1", "deployments",
    "Deployment", AS_SIM_DEPLOYMENTS, DEPLOY_USER, deploy_reconcile};

/* ---- StatefulSet ------------------------------------------------------- */

static json_t *sts_pod(json_t *sts, const char *rev, json_int_t i)
{
	char pname[400], idx[24];
	const char *name = as_jstr(sts, "metadata.name");
	const char *svc = as_jstr(sts, "spec.serviceName");
	json_t *pod;

	snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)i);
	snprintf(idx, sizeof(idx), "%lld", (long long)i);
	pod = as_fw_pod(sts, "apps/v1", "StatefulSet",
	    as_jget(sts, "spec.template"), pname);
	set_label(pod, REV_LABEL, rev);
	set_label(pod, "statefulset.kubernetes.io/pod-name", pname);
	set_label(pod, "apps.kubernetes.io/pod-index", idx);
	as_jset(pod, "spec.hostname", json_string(pname));
	if (svc != NULL)
		as_jset(pod, "spec.subdomain", json_string(svc));
	return pod;
}

static json_int_t ordinal_of(json_t *sts, json_t *pod)
{
	const char *name = as_jstr(sts, "metadata.name");
	const char *pn = as_jstr(pod, "metadata.name");
	size_t n = strlen(name);
	char *end;
	long long v;

	if (pn == NULL || strncmp(pn, name, n) != 0 || pn[n] != '-')
		return -1;
	v = strtoll(pn + n + 1, &end, 10);
	return *end == '\0' && v >= 0 ? v : -1;
}

static void sts_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *sk = as_fw_kind(srv, c);
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *sts = sk ? as_store_get(sk, ns, name) : NULL;
	json_t *pods, *p, *byord, *upd, *victim = NULL, *stale = NULL;
	json_int_t replicas, i, live = 0, ready = 0, cur = 0, updated = 0;
	const char *policy, *strategy, *cur_rev;
	char cur_buf[320];
	bool parallel, all_ready = true;
	char hash[16], rev[320], key[32];
	size_t j;

	if (sts == NULL || pk == NULL ||
	    as_jget(sts, "metadata.deletionTimestamp") != NULL)
		return;
	replicas = as_fw_int(sts, "spec.replicas", 1);
	policy = as_jstr(sts, "spec.podManagementPolicy");
	parallel = policy != NULL && strcmp(policy, "Parallel") == 0;
	strategy = as_jstr(sts, "spec.updateStrategy.type");
	template_hash(as_jget(sts, "spec.template"), hash);
	snprintf(rev, sizeof(rev), "%s-%s", name, hash);
	cur_rev = as_jstr(sts, "status.currentRevision");
	if (cur_rev != NULL) {
		snprintf(cur_buf, sizeof(cur_buf), "%s", cur_rev);
		cur_rev = cur_buf;
	}
	pods = as_fw_owned(pk, sts);
	byord = json_object();
	json_array_foreach(pods, j, p)
	{
		json_int_t o = ordinal_of(sts, p);

		if (o < 0)
			continue;
		snprintf(key, sizeof(key), "%lld", (long long)o);
		json_object_set(byord, key, p);
	}
	/* Scale down: the highest ordinals first. */
	for (i = json_array_size(pods) + replicas; i >= replicas; i--) {
		snprintf(key, sizeof(key), "%lld", (long long)i);
		p = json_object_get(byord, key);
		if (p == NULL || as_jget(p, "metadata.deletionTimestamp"))
			continue;
		as_fw_delete(srv, pk, p, c->user);
		if (!parallel)
			break;
	}
	for (i = 0; i < replicas; i++) {
		snprintf(key, sizeof(key), "%lld", (long long)i);
		p = json_object_get(byord, key);
		if (p == NULL) {
			all_ready = false;
			if (!as_fw_pending(sts))
				as_fw_create(
				    srv, c, pk, sts_pod(sts, rev, i), sts);
			if (!parallel)
				break;
			continue;
		}
		if (!as_fw_pod_live(p)) {
			all_ready = false;
			if (as_jget(p, "metadata.deletionTimestamp") == NULL)
				as_fw_delete(srv, pk, p, c->user);
			if (!parallel)
				break;
			continue;
		}
		live++;
		if (as_fw_pod_ready(p))
			ready++;
		else
			all_ready = false;
		if (label(p, REV_LABEL) != NULL &&
		    strcmp(label(p, REV_LABEL), rev) == 0)
			updated++;
		else
			stale = p; /* the highest so far */
		if (cur_rev != NULL && label(p, REV_LABEL) != NULL &&
		    strcmp(label(p, REV_LABEL), cur_rev) == 0)
			cur++;
		if (!parallel && !as_fw_pod_ready(p))
			break;
	}
	if (all_ready && stale != NULL &&
	    (strategy == NULL || strcmp(strategy, "OnDelete") != 0))
		victim = stale;
	if (victim != NULL)
		as_fw_delete(srv, pk, victim, c->user);
	json_decref(byord);
	json_decref(pods);
	sts = as_store_get(sk, ns, name);
	if (sts == NULL)
		return;
	upd = status_copy(sts);
	if (cur_rev == NULL || (all_ready && updated == replicas)) {
		cur_rev = rev;
		cur = updated;
	}
	as_jset(upd, "status.replicas", json_integer(live));
	count(upd, "readyReplicas", ready);
	count(upd, "availableReplicas", ready);
	count(upd, "currentReplicas", cur);
	count(upd, "updatedReplicas", updated);
	as_jset(upd, "status.currentRevision", json_string(cur_rev));
	as_jset(upd, "status.updateRevision", json_string(rev));
	as_jset(upd, "status.collisionCount", json_integer(0));
	as_internal_update(srv, sk, upd, true, c->user);
}

const struct as_fw_ctl as_fw_statefulsets = {"apps", "v1", "statefulsets",
    "StatefulSet", AS_SIM_STATEFULSETS, STS_USER, sts_reconcile};
