/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/appsim.c - stand-ins for the Deployment, ReplicaSet and
 * StatefulSet controllers (--simulate deployments, statefulsets;
 * docs/apiserver.md §15.2), simplified (no ControllerRevisions, no
 * maxSurge/maxUnavailable arithmetic). Pods and ReplicaSets are created
 * through the front door, so admission webhooks gate them as they gate
 * kube-controller-manager's.
 *
 * Deployment: a ReplicaSet <deployment>-<pod-template-hash> per template
 * (label and selector pod-template-hash, annotation
 * deployment.kubernetes.io/revision); the new one is scaled to
 * spec.replicas (default 1) at once, the old ones down as the new one's
 * Pods become Ready (strategy Recreate: the old ones to 0 first, the new
 * one after); status replicas, updatedReplicas, readyReplicas,
 * availableReplicas, unavailableReplicas, observedGeneration, conditions
 * Available and Progressing, from the ReplicaSets'.
 * ReplicaSet: spec.replicas Pods <replicaset>-<5 random characters>;
 * extra ones go, unready first; status replicas, fullyLabeledReplicas,
 * readyReplicas, availableReplicas.
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
#define RS_USER "system:serviceaccount:kube-system:replicaset-controller"
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

/* Extra live pods of a ReplicaSet go, unready ones first. */
static void scale_down(struct as_server *srv, struct as_kind *pk, json_t *pods,
    json_int_t extra, const char *user)
{
	json_t *doomed = json_array(), *p;
	size_t i;
	int pass;

	for (pass = 0; pass < 2 && extra > 0; pass++)
		json_array_foreach(pods, i, p)
		{
			if (extra <= 0 || !as_fw_pod_live(p) ||
			    as_fw_pod_ready(p) != (pass == 1))
				continue;
			json_array_append(doomed, p);
			extra--;
		}
	json_array_foreach(doomed, i, p)
	{
		as_fw_delete(srv, pk, p, user);
	}
	json_decref(doomed);
}

static void rs_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *rk = as_fw_kind(srv, c);
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *rs = rk ? as_store_get(rk, ns, name) : NULL, *pods, *p, *upd;
	json_int_t replicas, live = 0, ready = 0, n;
	size_t i;

	if (rs == NULL || pk == NULL ||
	    as_jget(rs, "metadata.deletionTimestamp") != NULL)
		return;
	replicas = as_fw_int(rs, "spec.replicas", 1);
	pods = as_fw_owned(pk, rs);
	json_array_foreach(pods, i, p)
	{
		if (!as_fw_pod_live(p))
			continue;
		live++;
		ready += as_fw_pod_ready(p);
	}
	if (live > replicas)
		scale_down(srv, pk, pods, live - replicas, c->user);
	json_decref(pods);
	rs = as_store_get(rk, ns, name);
	if (rs == NULL)
		return;
	for (n = as_fw_pending(rs) ? replicas : live; n < replicas; n++) {
		char pname[400], sfx[6];
		int j;

		for (j = 0; j < 5; j++)
			sfx[j] = alnum[as_rand(srv) % (sizeof(alnum) - 1)];
		sfx[5] = '\0';
		snprintf(pname, sizeof(pname), "%s-%s", name, sfx);
		as_fw_create(srv, c, pk,
		    as_fw_pod(rs, "apps/v1", "ReplicaSet",
			as_jget(rs, "spec.template"), pname),
		    rs);
	}
	upd = status_copy(rs);
	as_jset(upd, "status.replicas",
	    json_integer(live < replicas ? live : replicas));
	count(upd, "fullyLabeledReplicas", live < replicas ? live : replicas);
	count(upd, "readyReplicas", ready);
	count(upd, "availableReplicas", ready);
	as_internal_update(srv, rk, upd, true, c->user);
}

const struct as_fw_ctl as_fw_replicasets = {"apps", "v1", "replicasets",
    "ReplicaSet", AS_SIM_DEPLOYMENTS, RS_USER, rs_reconcile};

/* The new ReplicaSet of d for its template hash [owned]. */
static json_t *new_rs(json_t *d, const char *rsname, const char *hash,
    json_int_t replicas, size_t revision)
{
	json_t *tmpl = json_deep_copy(as_jget(d, "spec.template"));
	json_t *sel = json_deep_copy(as_jget(d, "spec.selector"));
	json_t *labels, *rs;
	char rev[24];

	if (!json_is_object(tmpl))
		tmpl = json_object();
	if (!json_is_object(sel))
		sel = json_object();
	set_label(tmpl, HASH_LABEL, hash);
	labels = json_deep_copy(as_jget(tmpl, "metadata.labels"));
	if (!json_is_object(json_object_get(sel, "matchLabels")))
		json_object_set_new(sel, "matchLabels", json_object());
	json_object_set_new(
	    json_object_get(sel, "matchLabels"), HASH_LABEL, json_string(hash));
	snprintf(rev, sizeof(rev), "%zu", revision);
	rs = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:{s:s}, s:o}, "
		       "s:{s:I, s:o, s:o}}",
	    "apiVersion", "apps/v1", "kind", "ReplicaSet", "metadata", "name",
	    rsname, "namespace", as_jstr(d, "metadata.namespace"), "labels",
	    labels, "annotations", "deployment.kubernetes.io/revision", rev,
	    "ownerReferences", as_fw_controller_ref(d, "apps/v1", "Deployment"),
	    "spec", "replicas", replicas, "selector", sel, "template", tmpl);
	return rs;
}

static void set_rs_replicas(struct as_server *srv, struct as_kind *rk,
    json_t *rs, json_int_t want, const char *user)
{
	json_t *u;

	if (as_fw_int(rs, "spec.replicas", 1) == want)
		return;
	u = json_deep_copy(rs);
	as_jset(u, "spec.replicas", json_integer(want));
	as_internal_update(srv, rk, u, false, user);
}

static void deploy_status(struct as_server *srv, struct as_kind *dk, json_t *d,
    json_int_t live, json_int_t fresh, json_int_t ready, bool done,
    const char *rsname, const char *user)
{
	json_int_t replicas = as_fw_int(d, "spec.replicas", 1);
	json_int_t maxu = replicas / 4; /* maxUnavailable 25%, rounded down */
	json_t *upd = status_copy(d);
	char msg[400];

	count(upd, "replicas", live);
	count(upd, "updatedReplicas", fresh);
	count(upd, "readyReplicas", ready);
	count(upd, "availableReplicas", ready);
	count(upd, "unavailableReplicas",
	    replicas - ready > 0 ? replicas - ready : 0);
	if (ready >= replicas - maxu)
		as_fw_cond(upd, "Available", "True", "MinimumReplicasAvailable",
		    "Deployment has minimum availability.", true);
	else
		as_fw_cond(upd, "Available", "False",
		    "MinimumReplicasUnavailable",
		    "Deployment does not have minimum availability.", true);
	if (done)
		snprintf(msg, sizeof(msg),
		    "ReplicaSet \"%s\" has successfully progressed.", rsname);
	else
		snprintf(msg, sizeof(msg), "ReplicaSet \"%s\" is progressing.",
		    rsname);
	as_fw_cond(upd, "Progressing", "True",
	    done ? "NewReplicaSetAvailable" : "ReplicaSetUpdated", msg, true);
	as_internal_update(srv, dk, upd, true, user);
}

static void deploy_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *dk = as_fw_kind(srv, c);
	struct as_kind *rk = as_fw_kind(srv, &as_fw_replicasets);
	json_t *d = dk ? as_store_get(dk, ns, name) : NULL, *sets, *rs;
	json_t *fresh_rs = NULL;
	json_int_t replicas, live = 0, ready = 0, fresh = 0, fresh_ready = 0;
	json_int_t old = 0, budget, want;
	char hash[16], rsname[300];
	size_t i;

	if (d == NULL || rk == NULL ||
	    as_jget(d, "metadata.deletionTimestamp") != NULL)
		return;
	replicas = as_fw_int(d, "spec.replicas", 1);
	template_hash(as_jget(d, "spec.template"), hash);
	snprintf(rsname, sizeof(rsname), "%s-%s", name, hash);
	sets = as_fw_owned(rk, d);
	json_array_foreach(sets, i, rs)
	{
		json_int_t n = as_fw_int(rs, "status.replicas", 0);

		live += n;
		ready += as_fw_int(rs, "status.readyReplicas", 0);
		if (strcmp(as_jstr(rs, "metadata.name"), rsname) == 0) {
			fresh_rs = rs;
			fresh = n;
			fresh_ready = as_fw_int(rs, "status.readyReplicas", 0);
		} else {
			old += n;
		}
	}
	/* New Pods first; old ones go as new ones are Ready (Recreate: the
	 * old ones first, the new ones after). */
	want = recreate(d) && old > 0 ? 0 : replicas;
	if (fresh_rs == NULL && !as_fw_pending(d))
		as_fw_create(srv, c, rk,
		    new_rs(d, rsname, hash, want, json_array_size(sets) + 1),
		    d);
	else if (fresh_rs != NULL)
		set_rs_replicas(srv, rk, fresh_rs, want, c->user);
	budget =
	    recreate(d) || replicas <= fresh_ready ? 0 : replicas - fresh_ready;
	json_array_foreach(sets, i, rs)
	{
		json_int_t cur = as_fw_int(rs, "spec.replicas", 1);

		if (rs == fresh_rs)
			continue;
		set_rs_replicas(
		    srv, rk, rs, cur < budget ? cur : budget, c->user);
		budget -= cur < budget ? cur : budget;
	}
	json_decref(sets);
	d = as_store_get(dk, ns, name);
	if (d != NULL)
		deploy_status(srv, dk, d, live, fresh, ready,
		    fresh_ready >= replicas && old == 0, rsname, c->user);
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
	bool can_create;
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
	/* Creates answered before more are sent (one batch per pass). */
	can_create = !as_fw_pending(sts);
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
			if (can_create)
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
