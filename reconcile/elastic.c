/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/elastic.c - Kueue's elastic jobs (ElasticJobsViaWorkloadSlices,
 * kueue.x-k8s.io/elastic-job: "true"), the decisions that need no I/O:
 * how a job's pod-set counts compare with its Workload's (Kueue's
 * workloadslicing ScaledDown / EnsureWorkloadSlices), the in-place count
 * update of a scale-down (the Workload keeps its admission and its
 * quota shrinks at once), and the annotations of a Workload slice
 * (workload-slice-name, workload-slice-replacement-for), and which
 * gated pods the elastic ungater may release (rec_elastic_ungate).
 * Contract in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

bool rec_elastic_job(const struct api_meta *m)
{
	const char *v = api_strmap_get(&m->annotations, REC_ELASTIC_JOB);

	return v != NULL && strcmp(v, "true") == 0;
}

enum rec_elastic_change rec_elastic_compare(const struct rec_elastic_count *job,
    size_t nj, const struct rec_elastic_count *wl, size_t nw)
{
	bool fewer = false, more = false;
	size_t i, k;

	if (nj != nw)
		return REC_ELASTIC_INCOMPATIBLE;
	for (i = 0; i < nj; i++) {
		const struct rec_elastic_count *w = NULL;

		for (k = 0; k < nw && w == NULL; k++)
			if (strcmp(job[i].name, wl[k].name) == 0)
				w = &wl[k];
		if (w == NULL)
			return REC_ELASTIC_INCOMPATIBLE;
		fewer |= job[i].count < w->count;
		more |= job[i].count > w->count;
	}
	if (fewer && more)
		return REC_ELASTIC_MIXED;
	return fewer  ? REC_ELASTIC_DOWN
	       : more ? REC_ELASTIC_UP
		      : REC_ELASTIC_SAME;
}

/* The job's and wl's counts in podset order; CU_ENOMEM. */
static int counts(const struct api_podsets *ps, const struct api_workload *wl,
    struct rec_elastic_count **jc, struct rec_elastic_count **wc, cu_error *err)
{
	size_t i;

	*jc = cu_calloc(ps->n + 1, sizeof(**jc));
	*wc = cu_calloc(wl->spec.n_pod_sets + 1, sizeof(**wc));
	if (*jc == NULL || *wc == NULL) {
		cu_free(*jc);
		cu_free(*wc);
		return rec__nomem(err, "elastic job");
	}
	for (i = 0; i < ps->n; i++) {
		(*jc)[i].name = ps->items[i].name ? ps->items[i].name : "main";
		(*jc)[i].count = ps->items[i].count;
	}
	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *p = &wl->spec.pod_sets[i];

		(*wc)[i].name = p->name ? p->name : "main";
		(*wc)[i].count = p->has_count ? p->count : 1;
	}
	return CU_OK;
}

/* spec.podSets of wl [borrowed raw] with the job's counts. */
static json_t *podsets_with(const struct api_workload *wl,
    const struct rec_elastic_count *jc, size_t nj)
{
	json_t *arr = json_deep_copy(
	    json_object_get(json_object_get(wl->raw, "spec"), "podSets"));
	json_t *p;
	size_t i, k;

	if (!json_is_array(arr)) {
		json_decref(arr);
		return NULL;
	}
	json_array_foreach(arr, i, p)
	{
		const char *name =
		    json_string_value(json_object_get(p, "name"));

		for (k = 0; k < nj; k++)
			if (strcmp(jc[k].name, name ? name : "main") == 0 &&
			    json_object_set_new(
				p, "count", json_integer(jc[k].count)) != 0) {
				json_decref(arr);
				return NULL;
			}
	}
	return arr;
}

int rec_elastic_change_of(const struct rec_job *j,
    const struct api_workload *wl, enum rec_elastic_change *out, cu_error *err)
{
	struct api_podsets ps = {NULL, 0};
	struct rec_elastic_count *jc = NULL, *wc = NULL;
	int rc;

	*out = REC_ELASTIC_INCOMPATIBLE;
	if ((rc = rec_job_podsets(j, &ps, err)) != CU_OK)
		return rc;
	if ((rc = counts(&ps, wl, &jc, &wc, err)) == CU_OK)
		*out = rec_elastic_compare(jc, ps.n, wc, wl->spec.n_pod_sets);
	cu_free(jc);
	cu_free(wc);
	api_podsets_dispose(&ps);
	return rc;
}

int rec_elastic_counts_patch(const struct rec_job *j,
    const struct api_workload *wl, bool down_only, json_t **patch,
    cu_error *err)
{
	struct api_podsets ps = {NULL, 0};
	struct rec_elastic_count *jc = NULL, *wc = NULL;
	enum rec_elastic_change ch;
	json_t *arr;
	int rc;

	*patch = NULL;
	if (wl->meta.resource_version == NULL || wl->raw == NULL)
		return CU_OK;
	if ((rc = rec_job_podsets(j, &ps, err)) != CU_OK)
		return rc;
	if ((rc = counts(&ps, wl, &jc, &wc, err)) != CU_OK) {
		api_podsets_dispose(&ps);
		return rc;
	}
	ch = rec_elastic_compare(jc, ps.n, wc, wl->spec.n_pod_sets);
	if (ch == REC_ELASTIC_DOWN ||
	    (!down_only && (ch == REC_ELASTIC_UP || ch == REC_ELASTIC_MIXED))) {
		arr = podsets_with(wl, jc, ps.n);
		*patch = arr == NULL
			     ? NULL
			     : json_pack("{s:{s:s}, s:{s:o}}", "metadata",
				   "resourceVersion", wl->meta.resource_version,
				   "spec", "podSets", arr);
		if (*patch == NULL)
			rc = rec__nomem(err, "elastic job");
	}
	cu_free(jc);
	cu_free(wc);
	api_podsets_dispose(&ps);
	return rc;
}

int rec_elastic_scale_down_patch(const struct rec_job *j,
    const struct api_workload *wl, json_t **patch, cu_error *err)
{
	return rec_elastic_counts_patch(j, wl, true, patch, err);
}

int rec_elastic_slice_annotations(
    const struct api_workload *old, const char *name, json_t *wl, cu_error *err)
{
	json_t *meta, *ann;
	const char *origin = name;
	char *key = NULL;

	/* wl is the document being built: written, not read */
	meta = api_json_obj_child(wl, "metadata");
	ann = meta != NULL ? api_json_obj_child(meta, "annotations") : NULL;
	if (ann == NULL)
		return rec__nomem(err, "workload slice");
	if (old != NULL) {
		const char *o = api_strmap_get(
		    &old->meta.annotations, REC_WORKLOAD_SLICE_NAME);

		origin = o != NULL && *o != '\0' ? o : old->meta.name;
		key = cu_asprintf("%s/%s",
		    old->meta.namespace_ ? old->meta.namespace_ : "",
		    old->meta.name ? old->meta.name : "");
		if (key == NULL)
			return rec__nomem(err, "workload slice");
	}
	if ((name != NULL && json_is_object(meta) &&
		json_object_set_new(meta, "name", json_string(name))) ||
	    json_object_set_new(ann, REC_ELASTIC_JOB, json_string("true")) ||
	    json_object_set_new(ann, REC_WORKLOAD_SLICE_NAME,
		json_string(origin ? origin : "")) ||
	    (key != NULL &&
		json_object_set_new(ann, REC_WORKLOAD_SLICE_REPLACEMENT_FOR,
		    json_string(key)))) {
		cu_free(key);
		return rec__nomem(err, "workload slice");
	}
	cu_free(key);
	return CU_OK;
}

size_t rec_elastic_ungate(
    const struct rec_egate_pod *pods, size_t n, int32_t granted, bool *ungate)
{
	size_t i, live = 0, todo = 0;

	for (i = 0; i < n; i++) {
		ungate[i] = false;
		live += !pods[i].terminated && !pods[i].gated;
	}
	for (i = 0; i < n && (int64_t)(live + todo) < (int64_t)granted; i++)
		if (pods[i].gated && !pods[i].terminated) {
			ungate[i] = true;
			todo++;
		}
	return todo;
}
