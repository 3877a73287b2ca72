/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_serving.c - the serving shapes of the framework descriptors
 * (docs/frameworks.md section 2): apps/v1 StatefulSet and
 * leaderworkerset.x-k8s.io/v1 LeaderWorkerSet. cueue never writes to
 * either object: its Pods are queued as pod groups
 * (reconcile/fw_podgroup.c), labelled so by the serving webhooks
 * (webhook/serving.c); a LeaderWorkerSet's group Workloads are made and
 * deleted here as Kueue's leaderworkerset reconciler does
 * (rec_lws_reconcile). These readers say what one group's Workload holds,
 * read from the parent: a StatefulSet is one group, pod set `main` of
 * spec.replicas (default 1) Pods of spec.template; a LeaderWorkerSet is
 * one group per replica, pod sets `leader` (1 Pod of
 * leaderWorkerTemplate.leaderTemplate) and `worker` (size - 1 of
 * workerTemplate), or, without a leader template, `main` (size of
 * workerTemplate). Neither finishes; active while status.replicas > 0;
 * ready when status.readyReplicas reaches spec.replicas. Contracts in
 * reconcile/rec_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

static bool is_lws(const struct rec_fw *fw)
{
	return strcmp(fw->kind, "LeaderWorkerSet") == 0;
}

static json_int_t int_or(const json_t *o, const char *key, json_int_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static json_t *lwt(const json_t *doc)
{
	return json_object_get(
	    json_object_get(doc, "spec"), "leaderWorkerTemplate");
}

static bool has_leader(const json_t *doc)
{
	return json_is_object(json_object_get(lwt(doc), "leaderTemplate"));
}

static size_t serving_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	return is_lws(fw) && has_leader(doc) ? 2 : 1;
}

static json_t *serving_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	if (!is_lws(fw))
		return strcmp(name, REC_POD_PODSET) == 0
			   ? json_object_get(
				 json_object_get(doc, "spec"), "template")
			   : NULL;
	if (has_leader(doc) && strcmp(name, "leader") == 0)
		return json_object_get(lwt(doc), "leaderTemplate");
	if (strcmp(name, has_leader(doc) ? "worker" : REC_POD_PODSET) == 0)
		return json_object_get(lwt(doc), "workerTemplate");
	return NULL;
}

/* One pod set into out->items[out->n++]; its count read from the field
 * count_of, its template at path, its pods indexed by label index (NULL:
 * none, as Kueue's LeaderWorkerSet leader). */
static int one(struct api_podsets *out, const json_t *tpl, const char *name,
    json_int_t count, const char *count_of, const char *path, const char *index,
    cu_error *err)
{
	int rc;

	if (count < 0 || count > INT32_MAX)
		return cu_error_set(err, CU_EINVAL,
		    "%s: Invalid value: %lld: must be greater than or equal "
		    "to 0",
		    count_of, (long long)count);
	if (!json_is_object(tpl))
		return cu_error_set(
		    err, CU_EINVAL, "%s: Required value: a pod template", path);
	/* Counted before it is filled: a half-filled one is disposed too. */
	out->n++;
	rc = api_podset_from_template(
	    tpl, name, (int32_t)count, path, &out->items[out->n - 1], err);
	if (rc == CU_OK && index != NULL)
		rc = api_podset_index_labels(
		    &out->items[out->n - 1], index, NULL, 0, err);
	return rc;
}

static int serving_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	const json_t *spec = json_object_get(doc, "spec"), *t = lwt(doc);
	json_int_t size = int_or(t, "size", 1);
	int rc;

	memset(out, 0, sizeof(*out));
	out->items = cu_calloc(2, sizeof(*out->items));
	if (out->items == NULL)
		return rec__nomem(err, "podsets");
	if (!is_lws(fw))
		rc = one(out, json_object_get(spec, "template"), REC_POD_PODSET,
		    int_or(spec, "replicas", 1), "spec.replicas",
		    "spec.template", API_LABEL_STATEFULSET_POD_INDEX, err);
	else if (!has_leader(doc))
		rc = one(out, json_object_get(t, "workerTemplate"),
		    REC_POD_PODSET, size, "spec.leaderWorkerTemplate.size",
		    "spec.leaderWorkerTemplate.workerTemplate",
		    API_LABEL_LWS_WORKER_INDEX, err);
	else if ((rc = one(out, json_object_get(t, "leaderTemplate"), "leader",
		      1, "spec.leaderWorkerTemplate.size",
		      "spec.leaderWorkerTemplate.leaderTemplate", NULL, err)) ==
		 CU_OK)
		rc = one(out, json_object_get(t, "workerTemplate"), "worker",
		    size - 1, "spec.leaderWorkerTemplate.size",
		    "spec.leaderWorkerTemplate.workerTemplate",
		    API_LABEL_LWS_WORKER_INDEX, err);
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}

static bool serving_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	(void)fw;
	(void)doc;
	(void)success;
	(void)message;
	return false; /* a server runs until scaled to zero or deleted */
}

static bool serving_active(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	return int_or(json_object_get(doc, "status"), "replicas", 0) > 0;
}

static bool serving_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	json_int_t want = int_or(json_object_get(doc, "spec"), "replicas", 1);

	(void)fw;
	return want > 0 && int_or(json_object_get(doc, "status"),
			       "readyReplicas", 0) >= want;
}

const struct rec_fw_ops rec__fw_serving_ops = {
    serving_n_podsets,
    serving_template,
    NULL,
    serving_podsets,
    serving_finished,
    serving_active,
    serving_pods_ready,
    NULL,
    NULL,
    NULL,
};

bool rec_fw_pods_only(const struct rec_fw *fw)
{
	return fw != NULL && fw->ops == &rec__fw_serving_ops;
}

/* ---- a LeaderWorkerSet's group Workloads ------------------------------ */

#define LWS_FW "leaderworkerset.x-k8s.io/leaderworkerset"
#define LWS_API "leaderworkerset.x-k8s.io/v1"
#define LWS_PREFIX "leaderworkerset.sigs.k8s.io"

int rec_lws_workload_name(const char *lws, const char *uid, json_int_t index,
    char **out, cu_error *err)
{
	char *owner = cu_asprintf("%s-%lld", lws, (long long)index);
	int rc;

	*out = NULL;
	if (owner == NULL)
		return rec__nomem(err, "leaderworkerset workload name");
	rc = api_workload_name("LeaderWorkerSet", "leaderworkerset.x-k8s.io",
	    owner, uid != NULL ? uid : "", -1, API_WORKLOAD_NAME_MAX, out, err);
	cu_free(owner);
	return rc;
}

bool rec_lws_owned(const struct api_workload *wl, const char *lws)
{
	size_t i;

	for (i = 0; wl != NULL && i < wl->meta.n_owner_refs; i++) {
		const struct api_owner_ref *r = &wl->meta.owner_refs[i];

		if (r->kind != NULL &&
		    strcmp(r->kind, "LeaderWorkerSet") == 0 &&
		    r->api_version != NULL &&
		    strncmp(r->api_version, "leaderworkerset.x-k8s.io/", 25) ==
			0 &&
		    (lws == NULL ||
			(r->name != NULL && strcmp(r->name, lws) == 0)))
			return true;
	}
	return false;
}

/* Kueue's group count: spec.replicas (default 1), or status.replicas
 * when larger during a rolling update with a positive maxSurge that has
 * not updated every replica yet. */
json_int_t rec_lws_groups(const json_t *lws)
{
	const json_t *spec = json_object_get(lws, "spec");
	const json_t *st = json_object_get(lws, "status");
	json_int_t want = int_or(spec, "replicas", 1);
	const json_t *surge = json_object_get(
	    json_object_get(json_object_get(spec, "rolloutStrategy"),
		"rollingUpdateConfiguration"),
	    "maxSurge");
	json_int_t s = json_is_integer(surge) ? json_integer_value(surge) : 0;

	if (json_is_string(surge)) /* intstr: a number, or a percentage (0) */
		s = strspn(json_string_value(surge), "0123456789") ==
			    strlen(json_string_value(surge))
			? strtoll(json_string_value(surge), NULL, 10)
			: 0;
	if (int_or(st, "replicas", 0) > want && s > 0 &&
	    int_or(st, "updatedReplicas", 0) < want)
		return int_or(st, "replicas", 0);
	return want;
}

/* Append a Workload write on ns/name; body [owned: taken even on
 * failure]; *it the item. */
static int lws_write(struct rec_plan *p, enum rec_write_op op, const char *ns,
    const char *name, json_t *body, struct rec_item **it, cu_error *err)
{
	if (rec_plan_push(p, it, err) != CU_OK) {
		json_decref(body);
		return err->code;
	}
	(*it)->kind = REC_ITEM_WRITE;
	(*it)->target = REC_TARGET_WORKLOAD;
	(*it)->op = op;
	(*it)->body = body;
	(*it)->expect = REC_EXPECT_RV;
	(*it)->ns = cu_strdup(ns);
	(*it)->name = cu_strdup(name);
	if ((*it)->ns == NULL || (*it)->name == NULL)
		return rec__nomem(err, "leaderworkerset workload");
	return CU_OK;
}

/* Drop the LeaderWorkerSet's own label and annotation keys from a pod
 * set template's metadata md [borrowed], its name label kept (Kueue). */
static void drop_lws_keys(json_t *md)
{
	static const char *const maps[] = {"labels", "annotations"};
	size_t m;

	for (m = 0; m < 2; m++) {
		json_t *o = json_object_get(md, maps[m]);
		const char *k;
		json_t *v, *tmp;

		json_object_foreach_safe(o, tmp, k, v)
		{
			if (strncmp(k, LWS_PREFIX, strlen(LWS_PREFIX)) == 0 &&
			    strcmp(k, LWS_PREFIX "/name") != 0)
				json_object_del(o, k);
		}
	}
}

/* The Workload of group `index` named wlname, as Kueue's
 * leaderworkerset reconciler makes it [owned in *out]. */
static int lws_build(const struct rec_job_view *view, const json_t *lws,
    const char *wlname, json_int_t index, json_t **out, cu_error *err)
{
	struct rec_wl_build_opts bo;
	struct api_meta m;
	struct rec_job j;
	json_t *w = NULL, *md, *a, *ps, *sets;
	char idx[32];
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = api_meta_decode(&m, json_object_get(lws, "metadata"), err)) !=
	    CU_OK)
		return rc;
	memset(&j, 0, sizeof(j));
	j.kind = REC_JOB_DOC;
	j.fw = rec_fw_by_name(LWS_FW);
	j.doc = lws;
	j.meta = &m;
	memset(&bo, 0, sizeof(bo));
	bo.lookup = view->priority;
	bo.label_keys_to_copy = view->label_keys_to_copy;
	rc = rec_wl_build(&j, &bo, &w, err);
	if (rc != CU_OK)
		goto out;
	snprintf(idx, sizeof(idx), "%lld", (long long)index);
	md = json_object_get(w, "metadata");
	a = api_json_obj_child(md, "annotations");
	if (a == NULL ||
	    json_object_set_new(md, "name", json_string(wlname)) != 0 ||
	    json_object_set_new(md, "ownerReferences",
		json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", LWS_API,
		    "kind", "LeaderWorkerSet", "name", m.name, "uid", m.uid)) !=
		0 ||
	    json_object_set_new(
		a, REC_ANNOT_GROUP_WORKLOAD, json_string("true")) != 0 ||
	    json_object_set_new(a, REC_ANNOT_JOB_OWNER_GVK,
		json_string(LWS_API ", Kind=LeaderWorkerSet")) != 0 ||
	    json_object_set_new(
		a, REC_ANNOT_JOB_OWNER_NAME, json_string(m.name)) != 0 ||
	    json_object_set_new(
		a, REC_ANNOT_COMPONENT_INDEX, json_string(idx)) != 0) {
		rc = rec__nomem(err, "leaderworkerset workload");
		goto out;
	}
	sets = json_object_get(json_object_get(w, "spec"), "podSets");
	json_array_foreach(sets, i, ps)
	{
		drop_lws_keys(json_object_get(
		    json_object_get(ps, "template"), "metadata"));
	}
	*out = w;
	w = NULL;
out:
	json_decref(w);
	api_meta_dispose(&m);
	return rc;
}

/* A Workload whose group has no Pod left loses cueue's finalizer. */
static int unfinalize(const char *ns, const struct api_workload *wl,
    struct rec_plan *p, cu_error *err)
{
	struct rec_item *it;
	json_t *fp = NULL;

	if (rec__wl_drop_finalizer_patch(wl, &fp, err) != CU_OK)
		return err->code;
	return fp == NULL ? CU_OK
			  : lws_write(p, REC_WRITE_PATCH, ns, wl->meta.name, fp,
				&it, err);
}

/* A group's Workload that stays: its queue follows the
 * LeaderWorkerSet's; evicted with no Pod of its group left (they were
 * stopped; the LeaderWorkerSet makes them anew, gated), the same
 * Workload gives its quota back and is queued again. */
static int lws_keep(const struct rec_lws_in *in, const struct api_workload *wl,
    size_t pods, int64_t now_ns, struct rec_plan *p, cu_error *err)
{
	const char *q = json_string_value(json_object_get(
	    json_object_get(json_object_get(in->lws, "metadata"), "labels"),
	    "kueue.x-k8s.io/queue-name"));
	struct rec_item *it;
	json_t *patch = NULL;
	cu_error serr;

	if (wl->meta.has_deletion)
		return pods == 0 ? unfinalize(in->ns, wl, p, err) : CU_OK;
	if (q != NULL && q[0] != '\0' &&
	    (wl->spec.queue_name == NULL ||
		strcmp(wl->spec.queue_name, q) != 0) &&
	    lws_write(p, REC_WRITE_PATCH, in->ns, wl->meta.name,
		json_pack("{s:{s:s}}", "spec", "queueName", q), &it,
		err) != CU_OK)
		return err->code;
	if (pods == 0 &&
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED) &&
	    rec_workload_holds_quota(wl)) {
		if (rec_wl_status_release(wl, now_ns, &patch, &serr) != CU_OK)
			return rec__plan_compose_error(p, &serr, err);
		if (patch != NULL)
			return lws_write(p, REC_WRITE_STATUS, in->ns,
			    wl->meta.name, patch, &it, err);
	}
	return CU_OK;
}

/* A Workload of a group beyond the count (or of a LeaderWorkerSet that
 * is gone): deleted; once its group has no Pod it loses the finalizer. */
static int lws_drop(const struct rec_lws_in *in, const struct api_workload *wl,
    size_t pods, struct rec_plan *p, cu_error *err)
{
	struct rec_item *it;

	if (pods == 0 && unfinalize(in->ns, wl, p, err) != CU_OK)
		return err->code;
	if (wl->meta.has_deletion)
		return CU_OK;
	return lws_write(
	    p, REC_WRITE_DELETE, in->ns, wl->meta.name, NULL, &it, err);
}

int rec_lws_reconcile(const struct rec_job_view *view,
    const struct rec_lws_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err)
{
	const char *uid;
	bool *kept;
	json_int_t g, groups;
	size_t i;
	int rc = CU_OK;

	if (view == NULL || in == NULL || out == NULL || in->ns == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "leaderworkerset reconciler: missing input");
	if (in->lws == NULL) { /* gone: the collector deletes them */
		for (i = 0; i < in->n_owned && rc == CU_OK; i++)
			if (in->pods[i] == 0)
				rc = unfinalize(in->ns, in->owned[i], out, err);
		return rc;
	}
	uid = json_string_value(
	    json_object_get(json_object_get(in->lws, "metadata"), "uid"));
	if (!view->managed || uid == NULL)
		return CU_OK;
	kept = cu_calloc(in->n_owned + 1, sizeof(*kept));
	if (kept == NULL)
		return rec__nomem(err, "leaderworkerset reconciler");
	groups = rec_lws_groups(in->lws);
	for (g = 0; g < groups && rc == CU_OK; g++) {
		struct rec_item *it;
		char *name = NULL;
		json_t *w = NULL;

		if ((rc = rec_lws_workload_name(
			 in->name, uid, g, &name, err)) != CU_OK)
			break;
		for (i = 0; i < in->n_owned; i++)
			if (strcmp(in->owned[i]->meta.name, name) == 0)
				break;
		if (i < in->n_owned) {
			kept[i] = true;
			rc = lws_keep(
			    in, in->owned[i], in->pods[i], now_ns, out, err);
		} else if (!in->awaited) {
			cu_error berr;

			if (lws_build(view, in->lws, name, g, &w, &berr) !=
			    CU_OK)
				rc = rec__plan_compose_error(out, &berr, err);
			else if ((rc = lws_write(out, REC_WRITE_CREATE, in->ns,
				      name, w, &it, err)) == CU_OK) {
				/* Kueue's CreatedWorkload once it lands. */
				it->for_job = true;
				it->done_reason = REC_REASON_CREATED_WORKLOAD;
				it->text = cu_asprintf(
				    "Created Workload: %s/%s", in->ns, name);
				if (it->text == NULL)
					rc = rec__nomem(err, "leaderworkerset");
			}
		}
		cu_free(name);
	}
	for (i = 0; i < in->n_owned && rc == CU_OK; i++)
		if (!kept[i])
			rc = lws_drop(in, in->owned[i], in->pods[i], out, err);
	cu_free(kept);
	return rc;
}
