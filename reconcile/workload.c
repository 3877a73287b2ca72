/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/workload.c - the Workload side of the transformation layer:
 * building a job's Workload (Kueue's ConstructWorkload), the equivalence
 * check that decides whether it must be replaced (EquivalentToWorkload),
 * waitForPodsReady's reading of a Workload and a job, and the
 * deactivation patch. The status merge patches are in
 * reconcile/wlstatus.c. Contracts in reconcile/reconcile.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "reconcile/rec_int.h"

/* ---- small JSON helpers ---------------------------------------------- */

/* Member `key` of obj as an array, created when absent. Borrowed. */
static json_t *arr_child(json_t *obj, const char *key)
{
	json_t *c = json_object_get(obj, key);

	if (json_is_array(c))
		return c;
	c = json_array();
	if (c == NULL || json_object_set_new(obj, key, c) != 0)
		return NULL;
	return c;
}

static int set_str(json_t *obj, const char *key, const char *s)
{
	return json_object_set_new(obj, key, json_string(s ? s : ""));
}

/* ---- the job view ----------------------------------------------------- */

const struct api_meta *rec_job_meta(const struct rec_job *j)
{
	if (j->kind == REC_JOB_DOC)
		return j->meta;
	if (j->kind == REC_JOB_JOBSET)
		return &j->jobset->meta;
	return &j->job->meta;
}

int rec_job_podsets(
    const struct rec_job *j, struct api_podsets *out, cu_error *err)
{
	if (j->kind == REC_JOB_DOC)
		return rec__doc_podsets(j->fw, j->doc, out, err);
	if (j->kind == REC_JOB_JOBSET)
		return api_jobset_podsets(j->jobset, out, err);
	return api_job_podsets(j->job, out, err);
}

/* ---- 1. building the Workload ----------------------------------------- */

/* strconv.ParseInt(s, 10, 32) > 0, as MaximumExecutionTimeSecondsForObject
 * reads the label. */
static bool parse_max_exec(const char *s, int32_t *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return false;
	if (!((*s >= '0' && *s <= '9') || *s == '+' || *s == '-'))
		return false;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || v <= 0 || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

static bool strlist_has(const struct api_strlist *l, const char *s)
{
	size_t i;

	for (i = 0; l != NULL && i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return true;
	return false;
}

static int build_meta(json_t *wl, const struct rec_job *j,
    const struct rec_wl_build_opts *o, cu_error *err)
{
	const struct api_meta *m = rec_job_meta(j);
	const struct rec_fw *fw = rec_job_fw(j);
	json_t *md, *labels, *ann, *refs, *ref, *fin;
	char *name = NULL;
	size_t i;
	int rc;

	if (m->name == NULL || *m->name == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "job metadata.name: Required value");
	if (m->uid == NULL || *m->uid == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "job metadata.uid: Required value");
	rc = api_workload_name(fw->kind, fw->group, m->name, m->uid, -1,
	    o->name_max ? o->name_max : API_WORKLOAD_NAME_MAX, &name, err);
	if (rc != CU_OK)
		return rc;
	md = api_json_obj_child(wl, "metadata");
	if (md == NULL || set_str(md, "name", name) != 0) {
		cu_free(name);
		return rec__nomem(err, "workload metadata");
	}
	cu_free(name);
	if (m->namespace_ != NULL && set_str(md, "namespace", m->namespace_))
		return rec__nomem(err, "workload metadata");

	labels = json_object();
	if (labels == NULL || json_object_set_new(md, "labels", labels) != 0)
		return rec__nomem(err, "workload metadata.labels");
	for (i = 0; i < m->labels.n; i++)
		if (strlist_has(
			o->label_keys_to_copy, m->labels.items[i].key) &&
		    set_str(labels, m->labels.items[i].key,
			m->labels.items[i].value) != 0)
			return rec__nomem(err, "workload metadata.labels");
	/* Kueue leaves the label out when the uid is not a label value. */
	if (rec__is_label_value(m->uid) &&
	    set_str(labels, REC_LABEL_JOB_UID, m->uid) != 0)
		return rec__nomem(err, "workload metadata.labels");

	ann = json_object();
	if (ann == NULL)
		return rec__nomem(err, "workload metadata.annotations");
	for (i = 0; i < m->annotations.n; i++) {
		const struct api_kv *kv = &m->annotations.items[i];

		if (strncmp(kv->key, REC_ANNOTATION_PROVREQ_PREFIX,
			strlen(REC_ANNOTATION_PROVREQ_PREFIX)) == 0 &&
		    set_str(ann, kv->key, kv->value) != 0) {
			json_decref(ann);
			return rec__nomem(err, "workload metadata.annotations");
		}
	}
	if (json_object_size(ann) == 0)
		json_decref(ann);
	else if (json_object_set_new(md, "annotations", ann) != 0)
		return rec__nomem(err, "workload metadata.annotations");

	ref = rec__owner_ref(j);
	/* json_pack "o" steals ref, also on failure. */
	refs = ref ? json_pack("[o]", ref) : NULL;
	if (refs == NULL ||
	    json_object_set_new(md, "ownerReferences", refs) != 0)
		return rec__nomem(err, "workload metadata.ownerReferences");
	fin = json_pack("[s]", REC_FINALIZER_RESOURCE_IN_USE);
	if (fin == NULL || json_object_set_new(md, "finalizers", fin) != 0)
		return rec__nomem(err, "workload metadata.finalizers");
	return CU_OK;
}

static int build_podsets(
    json_t *spec, const struct api_podsets *ps, cu_error *err)
{
	json_t *arr = arr_child(spec, "podSets"), *p, *tr = NULL;
	size_t i;

	if (arr == NULL)
		return rec__nomem(err, "workload spec.podSets");
	for (i = 0; i < ps->n; i++) {
		const struct api_podset_info *in = &ps->items[i];

		p = json_pack("{s:s, s:O, s:i}", "name", in->name, "template",
		    in->template, "count", (json_int_t)in->count);
		if (p == NULL ||
		    (in->has_min_count &&
			json_object_set_new(
			    p, "minCount", json_integer(in->min_count)) != 0) ||
		    (in->has_topology_request &&
			(api_topology_request_encode(
			     &tr, &in->topology_request, err) != CU_OK ||
			    json_object_set_new(p, "topologyRequest", tr) !=
				0))) {
			json_decref(p);
			return rec__nomem(err, "workload spec.podSets");
		}
		if (json_array_append_new(arr, p) != 0)
			return rec__nomem(err, "workload spec.podSets");
	}
	return CU_OK;
}

/* ---- podSet groups (Kueue's TAS annotation validation) ------------------ */

#define ANN_GROUP "kueue.x-k8s.io/podset-group-name"
#define ANN_REQ "kueue.x-k8s.io/podset-required-topology"
#define ANN_PREF "kueue.x-k8s.io/podset-preferred-topology"

static const char *tpl_ann(const json_t *tpl, const char *key)
{
	const json_t *a =
	    json_object_get(json_object_get(tpl, "metadata"), "annotations");

	return json_string_value(json_object_get(a, key));
}

/* Go's strconv.ParseUint(s, 10, 64) succeeds. */
static bool is_uint(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 20)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n < 20 || strcmp(s, "18446744073709551615") <= 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Kueue's job webhooks refuse a job whose podset-group-name annotation
 * is a number, comes with slices or without a required or preferred
 * level, or whose groups are not of exactly 2 podSets, one of them of
 * 1 pod, with the same required or preferred level. The first error,
 * CU_EINVAL. */
static int validate_groups(const struct api_podsets *ps, cu_error *err)
{
	size_t i, j, k;

	for (i = 0; i < ps->n; i++) {
		const json_t *tpl = ps->items[i].template;
		const char *g = tpl_ann(tpl, ANN_GROUP);
		const char *what = NULL;

		if (g == NULL)
			continue;
		if (is_uint(g))
			return cu_error_set(err, CU_EINVAL,
			    "podSet %s: metadata.annotations[%s]: Invalid "
			    "value: \"%s\": must not be a number",
			    ps->items[i].name, ANN_GROUP, g);
		if (tpl_ann(tpl, "kueue.x-k8s.io/podset-slice-size") != NULL)
			what = "'kueue.x-k8s.io/podset-slice-size' is "
			       "specified";
		else if (tpl_ann(tpl, "kueue.x-k8s.io/"
				      "podset-slice-required-topology") != NULL)
			what = "'kueue.x-k8s.io/podset-slice-required-topology'"
			       " is specified";
		else if (tpl_ann(tpl, ANN_REQ) == NULL &&
			 tpl_ann(tpl, ANN_PREF) == NULL)
			what = "neither '" ANN_PREF "' nor '" ANN_REQ
			       "' is specified";
		if (what != NULL)
			return cu_error_set(err, CU_EINVAL,
			    "podSet %s: metadata.annotations[%s]: Forbidden: "
			    "may not be set when %s",
			    ps->items[i].name, ANN_GROUP, what);
	}
	for (i = 0; i < ps->n; i++) {
		const struct api_topology_request *a =
		    &ps->items[i].topology_request;
		size_t n = 0, other = i;

		if (!ps->items[i].has_topology_request || a->group_name == NULL)
			continue;
		for (j = 0; j < ps->n; j++) {
			const struct api_topology_request *b =
			    &ps->items[j].topology_request;

			if (!ps->items[j].has_topology_request ||
			    !same_str(a->group_name, b->group_name))
				continue;
			if (j < i)
				break; /* reported with the first */
			n++;
			if (j != i)
				other = j;
		}
		if (j < ps->n)
			continue;
		if (n != 2)
			return cu_error_set(err, CU_EINVAL,
			    "podSet %s: metadata.annotations[%s]: Invalid "
			    "value: \"%s\": can only define groups of exactly "
			    "2 pod sets, got: %zu pod set(s)",
			    ps->items[i].name, ANN_GROUP, a->group_name, n);
		k = other;
		if (ps->items[i].count != 1 && ps->items[k].count != 1)
			return cu_error_set(err, CU_EINVAL,
			    "podSet %s: metadata.annotations[%s]: Invalid "
			    "value: \"%s\": can only define groups where at "
			    "least one pod set has only 1 replica, got: %d "
			    "replica(s) and %d replica(s) in the group",
			    ps->items[i].name, ANN_GROUP, a->group_name,
			    ps->items[i].count, ps->items[k].count);
		if (!same_str(
			a->required, ps->items[k].topology_request.required) ||
		    !same_str(
			a->preferred, ps->items[k].topology_request.preferred))
			return cu_error_set(err, CU_EINVAL,
			    "podSet %s: metadata.annotations: Invalid value: "
			    "must specify '%s' or '%s' topology consistent "
			    "with podSet %s in group '%s'",
			    ps->items[i].name, ANN_REQ, ANN_PREF,
			    ps->items[k].name, a->group_name);
	}
	return CU_OK;
}

static int build_priority(
    json_t *spec, const struct api_priority *p, cu_error *err)
{
	json_t *ref;

	if (p != NULL && p->source != API_PRIO_NONE) {
		bool w = p->source == API_PRIO_WORKLOAD_PRIORITY_CLASS;

		ref = json_pack("{s:s, s:s, s:s}", "group",
		    w ? "kueue.x-k8s.io" : "scheduling.k8s.io", "kind",
		    w ? "WorkloadPriorityClass" : "PriorityClass", "name",
		    p->class_name ? p->class_name : "");
		if (ref == NULL ||
		    json_object_set_new(spec, "priorityClassRef", ref) != 0)
			return rec__nomem(
			    err, "workload spec.priorityClassRef");
	}
	if (json_object_set_new(
		spec, "priority", json_integer(p ? p->value : 0)) != 0)
		return rec__nomem(err, "workload spec.priority");
	return CU_OK;
}

int rec_wl_build(const struct rec_job *j, const struct rec_wl_build_opts *opts,
    json_t **out, cu_error *err)
{
	static const struct rec_wl_build_opts defaults = {0, NULL, NULL, NULL};
	const struct rec_wl_build_opts *o = opts ? opts : &defaults;
	const struct api_meta *m = rec_job_meta(j);
	struct api_podsets ps = {NULL, 0};
	struct api_priority prio = {API_PRIO_NONE, NULL, 0};
	const struct api_priority *pp = o->priority;
	const char *queue;
	json_t *wl = NULL, *spec;
	int32_t max_exec;
	int rc;

	*out = NULL;
	rc = rec_job_podsets(j, &ps, err);
	if (rc != CU_OK)
		return rc;
	rc = validate_groups(&ps, err);
	if (rc != CU_OK)
		goto out;
	if (pp == NULL && o->lookup != NULL) {
		rc = api_resolve_priority(
		    &m->labels, &ps, o->lookup, &prio, err);
		if (rc != CU_OK)
			goto out;
		pp = &prio;
	}
	wl = json_pack("{s:s, s:s}", "apiVersion", "kueue.x-k8s.io/v1beta2",
	    "kind", "Workload");
	if (wl == NULL) {
		rc = rec__nomem(err, "workload");
		goto out;
	}
	rc = build_meta(wl, j, o, err);
	if (rc != CU_OK)
		goto out;
	spec = api_json_obj_child(wl, "spec");
	if (spec == NULL) {
		rc = rec__nomem(err, "workload spec");
		goto out;
	}
	rc = build_podsets(spec, &ps, err);
	if (rc != CU_OK)
		goto out;
	queue = api_strmap_get(&m->labels, REC_LABEL_QUEUE_NAME);
	if (queue != NULL && *queue != '\0' &&
	    set_str(spec, "queueName", queue) != 0) {
		rc = rec__nomem(err, "workload spec.queueName");
		goto out;
	}
	if (parse_max_exec(api_strmap_get(&m->labels, REC_LABEL_MAX_EXEC_TIME),
		&max_exec) &&
	    json_object_set_new(spec, "maximumExecutionTimeSeconds",
		json_integer(max_exec)) != 0) {
		rc = rec__nomem(
		    err, "workload spec.maximumExecutionTimeSeconds");
		goto out;
	}
	rc = build_priority(spec, pp, err);
	if (rc != CU_OK)
		goto out;
	if (json_object_set_new(spec, "active", json_true()) != 0) {
		rc = rec__nomem(err, "workload spec.active");
		goto out;
	}
	*out = wl;
	wl = NULL;
out:
	json_decref(wl);
	cu_free(prio.class_name);
	api_podsets_dispose(&ps);
	return rc;
}

/* ---- 2. equivalence ---------------------------------------------------- */

/* Go zero values: absent, null, "", false, 0, [] and {} are all what an
 * unset field decodes to (equality.Semantic treats nil and empty slices
 * and maps alike). */
static bool is_zero(const json_t *v)
{
	if (v == NULL || json_is_null(v) || json_is_false(v))
		return true;
	if (json_is_string(v))
		return json_string_length(v) == 0;
	if (json_is_integer(v))
		return json_integer_value(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	if (json_is_object(v))
		return json_object_size(v) == 0;
	return false;
}

/*
 * equality.Semantic.DeepEqual on decoded JSON: zero values equal absent
 * ones; strings inside a ResourceList (qctx: the value of a "requests" or
 * "limits" key, and its members) compare as quantities.
 */
static bool sem_equal(const json_t *a, const json_t *b, bool qctx)
{
	const char *key;
	json_t *va;
	size_t i;

	if (is_zero(a) || is_zero(b))
		return is_zero(a) && is_zero(b);
	if (json_typeof(a) != json_typeof(b)) {
		/* true/false are distinct jansson types. */
		return json_equal(a, b);
	}
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		json_object_foreach((json_t *)a, key, va)
		{
			/* qctx: this object is a ResourceList, its values
			 * are quantities; "requests"/"limits" are ones. */
			bool q = qctx || strcmp(key, "requests") == 0 ||
				 strcmp(key, "limits") == 0;

			if (!sem_equal(va, json_object_get(b, key), q))
				return false;
		}
		json_object_foreach(
		    (json_t *)b, key, va) if (json_object_get(a, key) == NULL &&
					      !is_zero(va)) return false;
		return true;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!sem_equal(json_array_get(a, i),
				json_array_get(b, i), false))
				return false;
		return true;
	case JSON_STRING:
		if (qctx) {
			struct api_quantity qa, qb;

			if (api_quantity_parse(
				&qa, json_string_value(a), NULL) == CU_OK &&
			    api_quantity_parse(
				&qb, json_string_value(b), NULL) == CU_OK)
				return api_quantity_cmp(&qa, &qb) == 0;
		}
		return json_equal(a, b);
	default:
		return json_equal(a, b);
	}
}

static const json_t *pod_spec(const json_t *tpl)
{
	return json_object_get(tpl, "spec");
}

/* comparePodTemplate */
static bool same_template(
    const json_t *a, const json_t *b, bool ignore_tolerations)
{
	const json_t *sa = pod_spec(a), *sb = pod_spec(b);

	if (!ignore_tolerations &&
	    !sem_equal(json_object_get(sa, "tolerations"),
		json_object_get(sb, "tolerations"), false))
		return false;
	if (!sem_equal(json_object_get(sa, "initContainers"),
		json_object_get(sb, "initContainers"), false))
		return false;
	return sem_equal(json_object_get(sa, "containers"),
	    json_object_get(sb, "containers"), false);
}

static const struct api_podset_assignment *find_assignment(
    const struct api_workload *wl, const char *name)
{
	size_t i;

	for (i = 0; i < wl->status.admission.n_pod_set_assignments; i++) {
		const struct api_podset_assignment *a =
		    &wl->status.admission.pod_set_assignments[i];

		if (a->name != NULL && strcmp(a->name, name) == 0)
			return a;
	}
	return NULL;
}

/*
 * ComparePodSetSlices(job, wl.spec.podSets) with counts taken from the
 * admission when `running` (expectedRunningPodSets: partial admission
 * admits fewer pods than the spec asks for).
 */
static bool same_podsets(const struct api_podsets *ps,
    const struct api_workload *wl, bool running, bool ignore_tolerations)
{
	size_t i;

	if (ps->n != wl->spec.n_pod_sets)
		return false;
	for (i = 0; i < ps->n; i++) {
		const struct api_podset_info *a = &ps->items[i];
		const struct api_podset *b = &wl->spec.pod_sets[i];
		int32_t count = b->has_count ? b->count : 1;
		int32_t amin = a->has_min_count ? a->min_count : -1;
		int32_t bmin = b->has_min_count ? b->min_count : -1;

		if (running && b->has_min_count) {
			const struct api_podset_assignment *as =
			    find_assignment(wl, b->name ? b->name : "main");

			if (as != NULL && as->has_count)
				count = as->count;
		}
		if (a->count != count || amin != bmin)
			return false;
		if (!same_template(
			a->template, b->template, ignore_tolerations))
			return false;
	}
	return true;
}

static bool has_all_assignments(const struct api_workload *wl)
{
	size_t i;

	if (!wl->status.has_admission)
		return false;
	for (i = 0; i < wl->spec.n_pod_sets; i++)
		if (find_assignment(wl, wl->spec.pod_sets[i].name
					    ? wl->spec.pod_sets[i].name
					    : "main") == NULL)
			return false;
	return true;
}

int rec_wl_equivalent(const struct rec_job *j, const struct api_workload *wl,
    bool *out, cu_error *err)
{
	const struct api_meta *m = rec_job_meta(j);
	const struct api_owner_ref *owner = api_meta_controller(&wl->meta);
	struct api_podsets ps = {NULL, 0};
	int32_t job_max = -1, wl_max;
	bool admitted, reserved;
	int rc;

	*out = false;
	if (owner == NULL || owner->name == NULL || m->name == NULL ||
	    strcmp(owner->name, m->name) != 0)
		return CU_OK;
	if (owner->uid == NULL || m->uid == NULL ||
	    strcmp(owner->uid, m->uid) != 0)
		return CU_OK;
	if (!parse_max_exec(
		api_strmap_get(&m->labels, REC_LABEL_MAX_EXEC_TIME), &job_max))
		job_max = -1;
	wl_max = wl->spec.has_maximum_execution_time_seconds
		     ? wl->spec.maximum_execution_time_seconds
		     : -1;
	if (job_max != wl_max)
		return CU_OK;
	rc = rec_job_podsets(j, &ps, err);
	if (rc != CU_OK)
		return rc;
	admitted =
	    api_conditions_true(&wl->status.conditions, REC_COND_ADMITTED);
	reserved = api_conditions_true(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);
	if (reserved && has_all_assignments(wl)) {
		*out = same_podsets(&ps, wl, true, admitted) ||
		       (rec_job_is_suspended(j) &&
			   same_podsets(&ps, wl, false, admitted));
	} else {
		*out = same_podsets(&ps, wl, false, admitted);
	}
	api_podsets_dispose(&ps);
	return CU_OK;
}

/* ---- waitForPodsReady --------------------------------------------------- */

static bool reason_is(const struct api_condition *c, const char *reason)
{
	return c != NULL && c->reason != NULL && strcmp(c->reason, reason) == 0;
}

bool rec_pods_ready_condition(
    const struct api_workload *wl, bool ready, const char **reason)
{
	const struct api_condition *c =
	    api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY);

	if (ready) {
		*reason = reason_is(c, REC_PODS_READY_WAIT_FOR_RECOVERY) ||
				  reason_is(c, REC_PODS_READY_RECOVERED)
			      ? REC_PODS_READY_RECOVERED
			      : REC_PODS_READY_STARTED;
		return true;
	}
	*reason =
	    c != NULL && (c->status == API_COND_TRUE ||
			     reason_is(c, REC_PODS_READY_WAIT_FOR_RECOVERY))
		? REC_PODS_READY_WAIT_FOR_RECOVERY
		: REC_PODS_READY_WAIT_FOR_START;
	return false;
}

static int32_t add_sat(int32_t a, int32_t b)
{
	int64_t v = (int64_t)a + b;

	return v > INT32_MAX ? INT32_MAX : v < 0 ? 0 : (int32_t)v;
}

bool rec_job_pods_ready(const struct rec_job *j, int32_t *ready, int32_t *total)
{
	int32_t r = 0, t = 0;
	size_t i;

	if (j->kind == REC_JOB_DOC) {
		bool ok = rec__doc_pods_ready(j->fw, j->doc);

		/* The kind says ready or not, not how many pods are. */
		if (ready != NULL)
			*ready = ok ? 1 : 0;
		if (total != NULL)
			*total = 1;
		return ok;
	}
	if (j->kind == REC_JOB_BATCH) {
		const struct api_job *job = j->job;

		t = job->spec.has_parallelism ? job->spec.parallelism : 1;
		if (job->spec.has_completions && job->spec.completions < t)
			t = job->spec.completions;
		r = add_sat(job->status.has_ready ? job->status.ready : 0,
		    job->status.has_succeeded ? job->status.succeeded : 0);
	} else {
		const struct api_jobset *js = j->jobset;

		for (i = 0; i < js->spec.n_replicated_jobs; i++)
			t = add_sat(
			    t, js->spec.replicated_jobs[i].has_replicas
				   ? js->spec.replicated_jobs[i].replicas
				   : 1);
		for (i = 0; i < js->status.n_replicated_jobs_status; i++)
			r = add_sat(r,
			    add_sat(js->status.replicated_jobs_status[i].ready,
				js->status.replicated_jobs_status[i]
				    .succeeded));
	}
	if (ready != NULL)
		*ready = r;
	if (total != NULL)
		*total = t;
	return j->kind == REC_JOB_BATCH ? r >= t : r == t;
}

int64_t rec_requeue_backoff_ns(int32_t base_s, int32_t max_s, int32_t count)
{
	const int64_t sec = 1000000000LL;
	int64_t d = base_s > 0 ? base_s : 0, cap;
	int32_t i;

	cap = max_s > 0 ? max_s : INT64_MAX / sec;
	for (i = 1; i < count && d < cap; i++)
		d = d > cap / 2 ? cap : d * 2;
	if (d > cap)
		d = cap;
	return d * sec;
}

void rec_pods_ready_timeout(const struct rec_pods_ready_cfg *cfg,
    const struct api_workload *wl, int64_t now_ns, const char **cause,
    int64_t *left_ns)
{
	const struct api_condition *ad =
	    api_conditions_find(&wl->status.conditions, REC_COND_ADMITTED);
	const struct api_condition *pr =
	    api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY);

	*cause = NULL;
	*left_ns = 0;
	if (cfg == NULL || !cfg->enable || ad == NULL ||
	    ad->status != API_COND_TRUE ||
	    (pr != NULL && pr->status == API_COND_TRUE))
		return;
	/* "PodsReady" is the reason older Kueue releases wrote. */
	if (pr == NULL || reason_is(pr, REC_PODS_READY_WAIT_FOR_START) ||
	    reason_is(pr, REC_COND_PODS_READY)) {
		*cause = REC_PODS_READY_WAIT_FOR_START;
		*left_ns =
		    cfg->timeout_ns - (ad->has_last_transition
					      ? now_ns - ad->last_transition_ns
					      : 0);
	} else if (reason_is(pr, REC_PODS_READY_WAIT_FOR_RECOVERY) &&
		   cfg->has_recovery) {
		*cause = REC_PODS_READY_WAIT_FOR_RECOVERY;
		*left_ns =
		    cfg->recovery_timeout_ns -
		    (pr->has_last_transition ? now_ns - pr->last_transition_ns
					     : 0);
	}
}

int rec_wl_deactivate_patch(
    const struct api_workload *wl, json_t **patch, cu_error *err)
{
	json_t *from = NULL, *to;
	int rc;

	*patch = NULL;
	if (wl->spec.has_active && !wl->spec.active)
		return CU_OK;
	rc = api_workload_encode(&from, wl, err);
	if (rc != CU_OK)
		return rc;
	to = json_deep_copy(from);
	if (to == NULL || json_object_set_new(api_json_obj_child(to, "spec"),
			      "active", json_false()) != 0) {
		json_decref(from);
		json_decref(to);
		return rec__nomem(err, "workload deactivation");
	}
	rc = rec__strict_patch(from, to, patch, err);
	json_decref(from);
	json_decref(to);
	return rc;
}

char *rec_preemption_message(const char *preemptor_uid,
    const char *preemptor_job_uid, enum adm_preempt_reason reason,
    const char *preemptor_path, const char *preemptee_path)
{
	const char *why;

	switch (reason) {
	case ADM_IN_CLUSTER_QUEUE:
		why = "prioritization in the ClusterQueue";
		break;
	case ADM_IN_COHORT_RECLAMATION:
		why = "reclamation within the cohort";
		break;
	case ADM_IN_COHORT_RECLAIM_WHILE_BORROWING:
		why = "reclamation within the cohort while borrowing";
		break;
	case ADM_IN_COHORT_FAIR_SHARING:
		why = "Fair Sharing within the cohort";
		break;
	default:
		why = "UNKNOWN";
		break;
	}
#define OR_UNKNOWN(s) ((s) != NULL && *(s) != '\0' ? (s) : "UNKNOWN")
	return cu_asprintf("Preempted to accommodate a workload (UID: %s, "
			   "JobUID: %s) due to %s; preemptor path: %s; "
			   "preemptee path: %s",
	    OR_UNKNOWN(preemptor_uid), OR_UNKNOWN(preemptor_job_uid), why,
	    OR_UNKNOWN(preemptor_path), OR_UNKNOWN(preemptee_path));
#undef OR_UNKNOWN
}
