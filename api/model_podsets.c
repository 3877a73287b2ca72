/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_podsets.c - turns a Job or JobSet into the pod sets Kueue
 * would put into its Workload (kueue pkg/controller/jobs/job and
 * jobs/jobset PodSets), with the per-pod resource requests the quota
 * accounting needs, computed as Kubernetes' PodRequests does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"

/* ---- per-pod requests ----------------------------------------------- */

struct reqs {
	struct api_request *items; /* [owned] */
	size_t n;
};

static void reqs_dispose(struct reqs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		cu_free(r->items[i].name);
	cu_free(r->items);
	r->items = NULL;
	r->n = 0;
}

static struct api_request *reqs_slot(
    struct api_dec *d, struct reqs *r, const char *name)
{
	struct api_request *items;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->items[i].name, name) == 0)
			return &r->items[i];
	items = cu_realloc(r->items, (r->n + 1) * sizeof(*items));
	if (items == NULL) {
		apid_nomem(d);
		return NULL;
	}
	r->items = items;
	items[r->n].name = cu_strdup(name);
	items[r->n].milli = 0;
	if (items[r->n].name == NULL) {
		apid_nomem(d);
		return NULL;
	}
	return &items[r->n++];
}

/* op 0: add, 1: max */
static void reqs_merge(struct api_dec *d, struct reqs *dst, const char *name,
    int64_t milli, int op)
{
	struct api_request *s = reqs_slot(d, dst, name);

	if (s == NULL)
		return;
	if (op == 1) {
		if (milli > s->milli)
			s->milli = milli;
		return;
	}
	if (__builtin_add_overflow(s->milli, milli, &s->milli))
		apid_fail(d, CU_ERANGE,
		    "Invalid value: sum of %s requests overflows", name);
}

static void reqs_merge_all(
    struct api_dec *d, struct reqs *dst, const struct reqs *src, int op)
{
	size_t i;

	for (i = 0; i < src->n && d->rc == CU_OK; i++)
		reqs_merge(d, dst, src->items[i].name, src->items[i].milli, op);
}

/* One container's effective requests: a resource with a limit but no
 * request requests its limit (Kubernetes defaulting). */
static void container_reqs(struct api_dec *d, const json_t *c, struct reqs *out)
{
	const json_t *res = apid_field(d, c, "resources", JSON_OBJECT, false);
	struct api_qmap rq = {NULL, 0}, lim = {NULL, 0};
	size_t i, mark = apid_push(d, "resources");

	apid_qmap(d, res, "requests", &rq);
	apid_qmap(d, res, "limits", &lim);
	apid_pop(d, mark);
	for (i = 0; i < rq.n && d->rc == CU_OK; i++)
		reqs_merge(d, out, rq.items[i].name, rq.items[i].q.milli, 0);
	for (i = 0; i < lim.n && d->rc == CU_OK; i++)
		if (api_qmap_get(&rq, lim.items[i].name) == NULL)
			reqs_merge(
			    d, out, lim.items[i].name, lim.items[i].q.milli, 0);
	api_qmap_dispose(&rq);
	api_qmap_dispose(&lim);
}

static int cmp_request(const void *a, const void *b)
{
	return strcmp(((const struct api_request *)a)->name,
	    ((const struct api_request *)b)->name);
}

/*
 * Kubernetes PodRequests: sum of the regular containers; init containers
 * run one at a time, each alongside the restartable (sidecar) init
 * containers started before it, and sidecars also run with the regular
 * containers; the pod needs the max of both phases, plus overhead.
 */
static void pod_requests(
    struct api_dec *d, const json_t *spec, struct reqs *out)
{
	const json_t *arr, *c, *rp;
	struct reqs sidecars = {NULL, 0}, init_max = {NULL, 0};
	struct api_qmap overhead = {NULL, 0};
	size_t i, mark, m2;

	arr = apid_field(d, spec, "containers", JSON_ARRAY, false);
	mark = apid_push(d, "containers");
	for (i = 0; i < json_array_size(arr) && d->rc == CU_OK; i++) {
		c = apid_elem(d, arr, i, &m2);
		if (c != NULL)
			container_reqs(d, c, out);
		apid_pop(d, m2);
	}
	apid_pop(d, mark);
	arr = apid_field(d, spec, "initContainers", JSON_ARRAY, false);
	mark = apid_push(d, "initContainers");
	for (i = 0; i < json_array_size(arr) && d->rc == CU_OK; i++) {
		struct reqs one = {NULL, 0};

		c = apid_elem(d, arr, i, &m2);
		if (c != NULL)
			container_reqs(d, c, &one);
		rp = c ? json_object_get(c, "restartPolicy") : NULL;
		if (json_is_string(rp) &&
		    strcmp(json_string_value(rp), "Always") == 0) {
			reqs_merge_all(d, out, &one, 0);
			reqs_merge_all(d, &sidecars, &one, 0);
			reqs_merge_all(d, &init_max, &sidecars, 1);
		} else {
			reqs_merge_all(d, &one, &sidecars, 0);
			reqs_merge_all(d, &init_max, &one, 1);
		}
		reqs_dispose(&one);
		apid_pop(d, m2);
	}
	apid_pop(d, mark);
	reqs_merge_all(d, out, &init_max, 1);
	apid_qmap(d, spec, "overhead", &overhead);
	for (i = 0; i < overhead.n && d->rc == CU_OK; i++)
		reqs_merge(d, out, overhead.items[i].name,
		    overhead.items[i].q.milli, 0);
	api_qmap_dispose(&overhead);
	reqs_dispose(&sidecars);
	reqs_dispose(&init_max);
	if (out->n > 1)
		qsort(out->items, out->n, sizeof(*out->items), cmp_request);
}

void apid_pod_requests(
    struct api_dec *d, const json_t *spec, struct api_request **out, size_t *n)
{
	struct reqs r = {NULL, 0};

	pod_requests(d, spec, &r);
	if (d->rc != CU_OK) {
		reqs_dispose(&r);
		return;
	}
	*out = r.items;
	*n = r.n;
}

int api_pod_requests(const json_t *pod_template, const char *path,
    struct api_request **out, size_t *n, cu_error *err)
{
	struct api_dec d;
	struct reqs r = {NULL, 0};
	const json_t *spec;

	apid_init(&d, err);
	*out = NULL;
	*n = 0;
	apid_push(&d, path ? path : "template");
	spec = apid_field(&d, pod_template, "spec", JSON_OBJECT, true);
	apid_push(&d, "spec");
	pod_requests(&d, spec, &r);
	if (d.rc != CU_OK) {
		reqs_dispose(&r);
		return d.rc;
	}
	*out = r.items;
	*n = r.n;
	return CU_OK;
}

/* ---- pod sets ----------------------------------------------------------- */

void api_podsets_dispose(struct api_podsets *ps)
{
	size_t i, j;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++) {
		struct api_podset_info *p = &ps->items[i];

		cu_free(p->name);
		for (j = 0; j < p->n_requests; j++)
			cu_free(p->requests[j].name);
		cu_free(p->requests);
		api_strmap_dispose(&p->node_selector);
		api_tolerations_dispose(p->tolerations, p->n_tolerations);
		json_decref(p->required_node_affinity);
		json_decref(p->template);
		cu_free(p->priority_class_name);
		api_topology_request_dispose(&p->topology_request);
	}
	cu_free(ps->items);
	ps->items = NULL;
	ps->n = 0;
}

const char *const api_job_managed_labels[] = {
    "job-name",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/controller-uid",
    NULL,
};

/* Fill p from the pod template tpl [borrowed] at the current path. */
static void podset_from_template(struct api_dec *d, const json_t *tpl,
    bool strip_job_labels, struct api_podset_info *p)
{
	const json_t *spec, *aff;
	struct reqs r = {NULL, 0};
	size_t mark, i;

	spec = apid_section(d, tpl, "spec", true, &mark);
	pod_requests(d, spec, &r);
	p->requests = r.items;
	p->n_requests = r.n;
	apid_strmap(d, spec, "nodeSelector", &p->node_selector);
	apid_tolerations(
	    d, spec, "tolerations", &p->tolerations, &p->n_tolerations);
	apid_str(d, spec, "priorityClassName", false, &p->priority_class_name);
	aff = spec ? json_object_get(spec, "affinity") : NULL;
	aff = json_is_object(aff) ? json_object_get(aff, "nodeAffinity") : NULL;
	aff = json_is_object(aff)
		  ? json_object_get(
			aff, "requiredDuringSchedulingIgnoredDuringExecution")
		  : NULL;
	aff = json_is_object(aff) ? json_object_get(aff, "nodeSelectorTerms")
				  : NULL;
	if (json_is_array(aff) && json_array_size(aff) > 0 && d->rc == CU_OK) {
		p->required_node_affinity = json_deep_copy(aff);
		if (p->required_node_affinity == NULL)
			apid_nomem(d);
	}
	apid_pop(d, mark);
	if (d->rc != CU_OK)
		return;
	if (api_topology_request_from_template(tpl, &p->topology_request,
		&p->has_topology_request, NULL) != CU_OK) {
		apid_fail(d, CU_EINVAL,
		    "metadata.annotations: invalid podset "
		    "topology annotation");
		return;
	}
	p->template = json_deep_copy(tpl);
	if (p->template == NULL) {
		apid_nomem(d);
		return;
	}
	if (strip_job_labels) {
		json_t *md = json_object_get(p->template, "metadata");
		json_t *labels =
		    json_is_object(md) ? json_object_get(md, "labels") : NULL;

		for (i = 0; json_is_object(labels) && api_job_managed_labels[i];
		     i++)
			json_object_del(labels, api_job_managed_labels[i]);
	}
}

/* Go's strconv.Atoi on the annotation value, as Kueue reads it. */
static bool parse_min_count(const char *s, int32_t *out)
{
	char *end;
	long long v;

	if (s == NULL || !((*s >= '0' && *s <= '9') || *s == '+' || *s == '-'))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s)
		return false;
	*out = (int32_t)v;
	return true;
}

#define API_JOB_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"

int api_job_podsets(
    const struct api_job *job, struct api_podsets *out, cu_error *err)
{
	struct api_dec d;
	struct api_podset_info *p;
	int32_t count;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	out->items = cu_calloc(1, sizeof(*out->items));
	if (out->items == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "job podsets: out of memory");
	out->n = 1;
	p = &out->items[0];
	p->name = cu_strdup("main");
	if (p->name == NULL)
		apid_nomem(&d);
	/* Kubernetes defaults parallelism to 1; Kueue counts the pods that
	 * can run at once, never more than the completions left. */
	count = job->spec.has_parallelism ? job->spec.parallelism : 1;
	if (job->spec.has_completions && job->spec.completions < count)
		count = job->spec.completions;
	p->count = count;
	p->has_min_count = parse_min_count(
	    api_strmap_get(&job->meta.annotations, API_JOB_MIN_PARALLELISM),
	    &p->min_count);
	apid_push(&d, "spec");
	if (job->spec.template == NULL && d.rc == CU_OK)
		apid_fail(&d, CU_EINVAL, "template: Required value");
	apid_push(&d, "template");
	if (d.rc == CU_OK)
		podset_from_template(&d, job->spec.template, true, p);
	/* Kueue: the Job's pods are indexed by their completion index. */
	if (d.rc == CU_OK &&
	    api_podset_index_labels(
		p, API_LABEL_JOB_COMPLETION_INDEX, NULL, 0, NULL) != CU_OK)
		apid_nomem(&d);
	if (d.rc != CU_OK)
		api_podsets_dispose(out);
	return d.rc;
}

int api_jobset_podsets(
    const struct api_jobset *js, struct api_podsets *out, cu_error *err)
{
	struct api_dec d;
	size_t i, k, mark, m2;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	if (js->spec.n_replicated_jobs == 0)
		return CU_OK;
	out->items = cu_calloc(js->spec.n_replicated_jobs, sizeof(*out->items));
	if (out->items == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "jobset podsets: out of memory");
	out->n = js->spec.n_replicated_jobs;
	mark = apid_push(&d, "spec.replicatedJobs");
	for (i = 0; i < js->spec.n_replicated_jobs && d.rc == CU_OK; i++) {
		const struct api_replicated_job *rj =
		    &js->spec.replicated_jobs[i];
		struct api_podset_info *p = &out->items[i];
		int64_t replicas = rj->has_replicas ? rj->replicas : 1;
		int64_t par = rj->has_parallelism ? rj->parallelism : 1;
		int64_t comp = rj->has_completions ? rj->completions : par;
		int64_t total = replicas * (comp < par ? comp : par);

		m2 = apid_push_idx(&d, i);
		/* Kueue: NewPodSetReference lower-cases the name. */
		p->name = cu_strdup(rj->name ? rj->name : "");
		if (p->name == NULL) {
			apid_nomem(&d);
			break;
		}
		for (k = 0; p->name[k]; k++)
			if (p->name[k] >= 'A' && p->name[k] <= 'Z')
				p->name[k] = (char)(p->name[k] - 'A' + 'a');
		if (total > INT32_MAX || total < INT32_MIN) {
			apid_fail(&d, CU_ERANGE,
			    "Invalid value: replicas x pods per replica = "
			    "%lld overflows int32",
			    (long long)total);
			break;
		}
		p->count = (int32_t)total;
		apid_push(&d, "template.spec.template");
		if (rj->pod_template == NULL)
			apid_fail(&d, CU_EINVAL, "Required value");
		else
			podset_from_template(&d, rj->pod_template, false, p);
		/* Kueue: pods by completion index within their Job, the
		 * replicated Jobs by job-index, as many as replicas. */
		if (d.rc == CU_OK &&
		    api_podset_index_labels(p, API_LABEL_JOB_COMPLETION_INDEX,
			API_LABEL_JOBSET_JOB_INDEX, (int32_t)replicas,
			NULL) != CU_OK)
			apid_nomem(&d);
		apid_pop(&d, m2);
	}
	apid_pop(&d, mark);
	if (d.rc != CU_OK)
		api_podsets_dispose(out);
	return d.rc;
}

int api_podset_from_template(const json_t *tpl, const char *name, int32_t count,
    const char *path, struct api_podset_info *p, cu_error *err)
{
	struct api_dec d;

	apid_init(&d, err);
	p->count = count;
	p->name = cu_strdup(name ? name : "");
	if (p->name == NULL)
		return cu_error_set(err, CU_ENOMEM, "podsets: out of memory");
	apid_push(&d, path);
	if (!json_is_object(tpl))
		apid_fail(&d, CU_EINVAL, "Required value");
	else
		podset_from_template(&d, tpl, false, p);
	return d.rc;
}
