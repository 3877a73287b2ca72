/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_serving.c - the serving shapes of the framework descriptors
 * (docs/frameworks.md section 2): apps/v1 StatefulSet and
 * leaderworkerset.x-k8s.io/v1 LeaderWorkerSet. cueue never writes to
 * either object: its Pods are queued as pod groups
 * (reconcile/fw_podgroup.c), labelled so by the serving webhooks
 * (webhook/serving.c). These readers say what one group's Workload holds,
 * read from the parent: a StatefulSet is one group, pod set `main` of
 * spec.replicas (default 1) Pods of spec.template; a LeaderWorkerSet is
 * one group per replica, pod sets `leader` (1 Pod of
 * leaderWorkerTemplate.leaderTemplate) and `worker` (size - 1 of
 * workerTemplate), or, without a leader template, `main` (size of
 * workerTemplate). Neither finishes; active while status.replicas > 0;
 * ready when status.readyReplicas reaches spec.replicas. Contracts in
 * reconcile/rec_int.h.
 */
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
