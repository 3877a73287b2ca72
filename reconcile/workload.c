/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/workload.c - the Workload side of the transformation layer:
 * building a job's Workload (Kueue's ConstructWorkload), the equivalence
 * check that decides whether it must be replaced (EquivalentToWorkload),
 * and the status merge patches for admission, pending, eviction, quota
 * release and finish (pkg/workload, pkg/workload/evict, .../finish).
 * Contracts in reconcile/reconcile.h.
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

/*
 * Kueue's TruncateConditionMessage: longer than the limit keeps
 * limit-4 bytes and appends " ...". The cut backs off to a UTF-8
 * character boundary so that the result stays valid JSON text.
 * Returns a new jansson string.
 */
static json_t *message_string(const char *msg)
{
	size_t n = msg ? strlen(msg) : 0;
	size_t keep;
	char *buf;
	json_t *s;

	if (n <= REC_CONDITION_MESSAGE_MAX)
		return json_string(msg ? msg : "");
	keep = REC_CONDITION_MESSAGE_MAX - 4;
	while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
		keep--;
	buf = cu_malloc(keep + 5);
	if (buf == NULL)
		return NULL;
	memcpy(buf, msg, keep);
	memcpy(buf + keep, " ...", 5);
	s = json_string(buf);
	cu_free(buf);
	return s;
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

/* ---- 3. status --------------------------------------------------------- */

struct cond {
	const char *type;
	const char *status; /* "True" | "False" */
	const char *reason;
	const char *message;
	bool with_generation; /* observedGeneration = metadata.generation */
};

struct st {
	json_t *status; /* [borrowed] the status object being edited */
	int64_t generation;
	char now[CU_TIME_RFC3339_LEN];
	int64_t now_ns;
};

static json_t *cond_find(json_t *status, const char *type)
{
	json_t *conds = json_object_get(status, "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static bool cond_is_true(json_t *status, const char *type)
{
	json_t *c = cond_find(status, type);
	const char *s = c ? api_json_str(c, "status") : NULL;

	return s != NULL && strcmp(s, "True") == 0;
}

/* apimeta.SetStatusCondition. Returns 0 or -1 (out of memory). */
static int cond_set(struct st *s, const struct cond *c)
{
	json_t *conds = arr_child(s->status, "conditions"), *o, *msg;
	const char *cur;
	bool gen = c->with_generation && s->generation != 0;

	if (conds == NULL)
		return -1;
	msg = message_string(c->message);
	if (msg == NULL)
		return -1;
	o = cond_find(s->status, c->type);
	if (o == NULL) {
		/* Key order as Kueue writes a metav1.Condition. */
		o = json_pack(
		    "{s:s, s:s}", "type", c->type, "status", c->status);
		if (o == NULL ||
		    (gen && json_object_set_new(o, "observedGeneration",
				json_integer(s->generation)) != 0) ||
		    set_str(o, "lastTransitionTime", s->now) != 0 ||
		    set_str(o, "reason", c->reason) != 0) {
			json_decref(o);
			json_decref(msg);
			return -1;
		}
		if (json_object_set_new(o, "message", msg) != 0) {
			json_decref(o);
			return -1;
		}
		return json_array_append_new(conds, o);
	}
	cur = api_json_str(o, "status");
	if (cur == NULL || strcmp(cur, c->status) != 0) {
		if (set_str(o, "status", c->status) != 0 ||
		    set_str(o, "lastTransitionTime", s->now) != 0) {
			json_decref(msg);
			return -1;
		}
	}
	if (json_object_set_new(o, "message", msg) != 0 ||
	    set_str(o, "reason", c->reason) != 0)
		return -1;
	if (gen)
		return json_object_set_new(
		    o, "observedGeneration", json_integer(s->generation));
	json_object_del(o, "observedGeneration");
	return 0;
}

/* resetActiveCondition: a True condition becomes False with
 * "Previously: <message>". */
static int cond_reset_active(struct st *s, const char *type, const char *reason)
{
	json_t *c = cond_find(s->status, type);
	const char *st, *prev;
	char *msg;
	int rc;

	st = c ? api_json_str(c, "status") : NULL;
	if (st == NULL || strcmp(st, "True") != 0)
		return 0;
	prev = api_json_str(c, "message");
	msg = cu_asprintf("Previously: %s", prev ? prev : "");
	if (msg == NULL)
		return -1;
	rc = cond_set(s, &(struct cond){type, "False", reason, msg, true});
	cu_free(msg);
	return rc;
}

/* SyncAdmittedCondition with UnadmittedWorkloadsObservability on and no
 * admission checks: Admitted follows QuotaReserved; leaving Admitted adds
 * the admitted seconds to accumulatedPastExecutionTimeSeconds. */
static int sync_admitted(struct st *s)
{
	json_t *qr = cond_find(s->status, REC_COND_QUOTA_RESERVED);
	json_t *ad = cond_find(s->status, REC_COND_ADMITTED);
	bool reserved = cond_is_true(s->status, REC_COND_QUOTA_RESERVED);
	bool was = cond_is_true(s->status, REC_COND_ADMITTED);
	bool ready = rec__checks_all_ready(s->status);

	if (qr == NULL && ad == NULL)
		return 0;
	if (was && !(reserved && ready)) {
		const char *ltt = api_json_str(ad, "lastTransitionTime");
		json_t *acc;
		int64_t t, d;

		if (ltt != NULL && cu_time_parse(ltt, &t, NULL) == CU_OK) {
			d = (s->now_ns - t) / 1000000000LL;
			acc = json_object_get(
			    s->status, "accumulatedPastExecutionTimeSeconds");
			if (json_is_integer(acc))
				d += json_integer_value(acc);
			if (d > INT32_MAX)
				d = INT32_MAX;
			if (d < INT32_MIN)
				d = INT32_MIN;
			if (json_object_set_new(s->status,
				"accumulatedPastExecutionTimeSeconds",
				json_integer(d)) != 0)
				return -1;
		}
	}
	if (reserved && !ready)
		return cond_set(s, &(struct cond){REC_COND_ADMITTED, "False",
				       REC_ADMITTED_UNSATISFIED_CHECKS,
				       REC_MSG_UNSATISFIED_CHECKS, true});
	if (reserved)
		return cond_set(
		    s, &(struct cond){REC_COND_ADMITTED, "True", "Admitted",
			   "The workload is admitted", true});
	return cond_set(
	    s, &(struct cond){REC_COND_ADMITTED, "False", "NoReservation",
		   "The workload has no reservation", true});
}

/* UnsetQuotaReservationWithCondition */
static int unset_reservation(
    struct st *s, const char *reason, const char *message)
{
	if (cond_set(s, &(struct cond){REC_COND_QUOTA_RESERVED, "False", reason,
			    message, true}) != 0)
		return -1;
	json_object_del(s->status, "admission");
	return sync_admitted(s);
}

/* A status change must say why: CU_EINVAL "<what>: reason: Required
 * value" when reason is NULL or "". */
static int need_reason(const char *reason, const char *what, cu_error *err)
{
	if (reason == NULL || *reason == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "%s: reason: Required value", what);
	return CU_OK;
}

/* Encode wl into *from (as read) and *to (a copy to edit), with s set up
 * on to's status. */
static int status_begin(const struct api_workload *wl, int64_t now_ns,
    json_t **from, json_t **to, struct st *s, cu_error *err)
{
	int rc;

	*from = *to = NULL;
	rc = api_workload_encode(from, wl, err);
	if (rc != CU_OK)
		return rc;
	*to = json_deep_copy(*from);
	if (*to == NULL ||
	    (s->status = api_json_obj_child(*to, "status")) == NULL) {
		json_decref(*from);
		json_decref(*to);
		*from = *to = NULL;
		return rec__nomem(err, "workload status");
	}
	s->generation = wl->meta.has_generation ? wl->meta.generation : 0;
	s->now_ns = now_ns;
	cu_time_format_rfc3339(now_ns, s->now);
	return CU_OK;
}

static int status_end(
    json_t *from, json_t *to, int edit_rc, json_t **patch, cu_error *err)
{
	int rc;

	if (edit_rc != 0)
		rc = rec__nomem(err, "workload status");
	else
		rc = rec__strict_patch(from, to, patch, err);
	json_decref(from);
	json_decref(to);
	return rc;
}

static json_t *admission_json(const struct adm_decision *d)
{
	json_t *adm, *psas, *psa, *flavors, *usage;
	char q[API_QUANTITY_STR_MAX + 16];
	size_t i, k;

	adm = json_pack("{s:s, s:[]}", "clusterQueue", d->cluster_queue,
	    "podSetAssignments");
	if (adm == NULL)
		return NULL;
	psas = json_object_get(adm, "podSetAssignments");
	for (i = 0; i < d->n_podsets; i++) {
		const struct adm_podset_assignment *a = &d->podsets[i];

		psa = json_pack("{s:s, s:{}, s:{}, s:i}", "name",
		    a->name ? a->name : "main", "flavors", "resourceUsage",
		    "count", (json_int_t)a->count);
		if (psa == NULL || json_array_append_new(psas, psa) != 0)
			goto fail;
		if (a->topology != NULL &&
		    json_object_set_new(psa, "topologyAssignment",
			json_deep_copy(a->topology)) != 0)
			goto fail;
		flavors = json_object_get(psa, "flavors");
		usage = json_object_get(psa, "resourceUsage");
		for (k = 0; k < a->n_uses; k++) {
			const struct adm_flavor_use *u = &a->uses[k];

			adm_format_quantity(
			    u->resource, u->usage, q, sizeof(q));
			if (set_str(flavors, u->resource, u->flavor) != 0 ||
			    set_str(usage, u->resource, q) != 0)
				goto fail;
		}
	}
	return adm;
fail:
	json_decref(adm);
	return NULL;
}

int rec_wl_status_admit(const struct api_workload *wl,
    const struct adm_decision *d, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_admit_wait(wl, d, false, now_ns, patch, err);
}

/* PodsReady=False, WaitForStart: the condition of a Workload whose pods
 * have not started (waitForPodsReady). */
static int pods_wait_for_start(struct st *s)
{
	return cond_set(s,
	    &(struct cond){REC_COND_PODS_READY, "False",
		REC_PODS_READY_WAIT_FOR_START, REC_MSG_PODS_NOT_READY, true});
}

int rec_wl_status_admit_wait(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready, int64_t now_ns,
    json_t **patch, cu_error *err)
{
	return rec_wl_status_admit_checks(
	    wl, d, pods_ready, NULL, now_ns, patch, err);
}

int rec_wl_status_admit_checks(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to, *adm;
	struct st s;
	char *msg;
	int rc, e = 0;

	*patch = NULL;
	if (d == NULL || d->kind != ADM_ADMIT)
		return cu_error_set(
		    err, CU_EINVAL, "admission decision: not an admission");
	if (d->cluster_queue == NULL || *d->cluster_queue == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "admission decision: clusterQueue: Required value");
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	adm = admission_json(d);
	msg =
	    cu_asprintf("Quota reserved in ClusterQueue %s", d->cluster_queue);
	if (adm == NULL || msg == NULL ||
	    json_object_set_new(s.status, "admission", adm) != 0) {
		e = -1;
	} else {
		e = cond_set(&s, &(struct cond){REC_COND_QUOTA_RESERVED, "True",
				     "QuotaReserved", msg, true});
		if (e == 0)
			e = cond_reset_active(
			    &s, REC_COND_EVICTED, "QuotaReserved");
		if (e == 0)
			e = cond_reset_active(
			    &s, REC_COND_PREEMPTED, "QuotaReserved");
		if (e == 0)
			e = cond_reset_active(
			    &s, "BlockedOnPreemptionGates", "QuotaReserved");
		if (e == 0 && cq != NULL)
			e = rec__checks_sync(s.status, cq, s.now);
		if (e == 0)
			e = sync_admitted(&s);
		if (e == 0 && pods_ready)
			e = pods_wait_for_start(&s);
		json_object_del(s.status, "resourceRequests");
	}
	cu_free(msg);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_pending(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_pending_requests(
	    wl, reason, message, NULL, now_ns, patch, err);
}

int rec_wl_status_pending_requests(const struct api_workload *wl,
    const char *reason, const char *message, const json_t *requests,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, edit;

	*patch = NULL;
	rc = need_reason(reason, "pending status", err);
	if (rc == CU_OK)
		rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	edit = unset_reservation(&s, reason, message);
	if (edit == 0 && requests != NULL &&
	    json_object_set_new(
		s.status, "resourceRequests", json_deep_copy(requests)) != 0)
		edit = -1;
	return status_end(from, to, edit, patch, err);
}

int rec_wl_status_sync_checks(const struct api_workload *wl,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cq != NULL ? rec__checks_sync(s.status, cq, s.now) : 0;
	if (e == 0)
		e = sync_admitted(&s);
	return status_end(from, to, e, patch, err);
}

/* resetChecksOnEviction */
static int reset_checks(struct st *s)
{
	json_t *checks = json_object_get(s->status, "admissionChecks"), *c, *n;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *state = api_json_str(c, "state");
		json_t *rc_old = json_object_get(c, "retryCount");
		json_t *ras = json_object_get(c, "requeueAfterSeconds");
		char *msg;

		if (state == NULL || strcmp(state, "Pending") == 0)
			continue;
		msg = cu_asprintf(
		    "Reset to Pending after eviction. Previously: %s", state);
		n = json_pack("{s:O?, s:s, s:s, s:s}", "name",
		    json_object_get(c, "name"), "state", "Pending",
		    "lastTransitionTime", s->now, "message", msg ? msg : "");
		if (msg == NULL || n == NULL) {
			cu_free(msg);
			json_decref(n);
			return -1;
		}
		cu_free(msg);
		if (ras != NULL &&
		    json_object_set(n, "requeueAfterSeconds", ras) != 0) {
			json_decref(n);
			return -1;
		}
		if (strcmp(state, "Retry") == 0 &&
		    json_object_set_new(n, "retryCount",
			json_integer((json_is_integer(rc_old)
					     ? json_integer_value(rc_old)
					     : 0) +
				     1)) != 0) {
			json_decref(n);
			return -1;
		}
		if (json_array_set_new(checks, i, n) != 0)
			return -1;
	}
	return 0;
}

/* workloadEvictionStateInc for an empty underlying cause. The CRD requires
 * underlyingCause, so the empty cause is written out as "". */
static int count_eviction(struct st *s, const char *reason, const char *cause)
{
	json_t *stats = api_json_obj_child(s->status, "schedulingStats"), *ev,
	       *e;
	size_t i;

	if (stats == NULL || (ev = arr_child(stats, "evictions")) == NULL)
		return -1;
	json_array_foreach(ev, i, e)
	{
		const char *r = api_json_str(e, "reason");
		const char *u = api_json_str(e, "underlyingCause");
		json_t *cnt = json_object_get(e, "count");

		if (r == NULL || strcmp(r, reason) != 0 ||
		    strcmp(u ? u : "", cause) != 0)
			continue;
		return json_object_set_new(e, "count",
		    json_integer(
			(json_is_integer(cnt) ? json_integer_value(cnt) : 0) +
			1));
	}
	return json_array_append_new(
	    ev, json_pack("{s:s, s:s, s:i}", "reason", reason,
		    "underlyingCause", cause, "count", 1));
}

/* apimeta.RemoveStatusCondition */
static void cond_remove(struct st *s, const char *type)
{
	json_t *conds = json_object_get(s->status, "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0) {
			json_array_remove(conds, i);
			return;
		}
	}
}

static int close_preemption_gates(struct st *s)
{
	json_t *gates = json_object_get(s->status, "preemptionGates"), *g;
	size_t i;

	json_array_foreach(gates, i, g)
	{
		if (!json_is_object(g))
			continue;
		if (set_str(g, "position", "Closed") != 0 ||
		    set_str(g, "lastTransitionTime", s->now) != 0)
			return -1;
	}
	return 0;
}

int rec_wl_status_evict(const struct api_workload *wl,
    const struct rec_eviction *ev, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	char *why = NULL;
	const char *cond_reason;
	int rc, e = 0;

	*patch = NULL;
	rc = need_reason(ev != NULL ? ev->reason : NULL, "eviction", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return rc;
	/* Kueue's Evict: a deactivation with a cause says so in the
	 * condition's reason (ReasonWithCause); the counters keep the
	 * plain reason. */
	cond_reason = ev->reason;
	if (strcmp(ev->reason, REC_EVICTED_DEACTIVATED) == 0 &&
	    ev->underlying_cause != NULL && *ev->underlying_cause) {
		why =
		    cu_asprintf("%sDueTo%s", ev->reason, ev->underlying_cause);
		if (why == NULL)
			return rec__nomem(err, "workload status");
		cond_reason = why;
	}
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK) {
		cu_free(why);
		return rc;
	}
	/* Kueue's CustomPrepare (Preempted) runs before prepareForEviction. */
	if (ev->preempted_reason != NULL)
		e = cond_set(&s, &(struct cond){REC_COND_PREEMPTED, "True",
				     ev->preempted_reason, ev->message, false});
	if (e == 0)
		e = cond_set(&s, &(struct cond){REC_COND_EVICTED, "True",
				     cond_reason, ev->message, true});
	json_object_del(s.status, "clusterName");
	json_object_del(s.status, "nominatedClusterNames");
	json_object_del(s.status, "unhealthyNodes");
	if (e == 0)
		e = reset_checks(&s);
	if (e == 0 && cond_is_true(s.status, "BlockedOnPreemptionGates"))
		e = cond_set(&s, &(struct cond){"BlockedOnPreemptionGates",
				     "False", cond_reason, ev->message, true});
	if (e == 0)
		e = close_preemption_gates(&s);
	if (e == 0)
		e = count_eviction(&s, ev->reason,
		    ev->underlying_cause ? ev->underlying_cause : "");
	/* The deactivation's own preparation: its target is consumed and
	 * the requeue state forgotten. */
	if (e == 0 && strcmp(ev->reason, REC_EVICTED_DEACTIVATED) == 0) {
		cond_remove(&s, REC_COND_DEACTIVATION_TARGET);
		json_object_del(s.status, "requeueState");
	}
	if (e == 0 && ev->set_requeue) {
		char at[CU_TIME_RFC3339_LEN];

		cu_time_format_rfc3339(ev->requeue_at_ns, at);
		e = json_object_set_new(s.status, "requeueState",
		    json_pack("{s:i, s:s}", "count",
			(json_int_t)ev->requeue_count, "requeueAt", at));
	}
	cu_free(why);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_release(const struct api_workload *wl, int64_t now_ns,
    json_t **patch, cu_error *err)
{
	const struct api_condition *ev;
	json_t *from, *to;
	struct st s;
	bool requeue;
	int rc, e;

	*patch = NULL;
	ev = api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	if (ev == NULL || ev->status != API_COND_TRUE ||
	    !api_conditions_true(
		&wl->status.conditions, REC_COND_QUOTA_RESERVED))
		return CU_OK;
	requeue = ev->reason != NULL &&
		  (strcmp(ev->reason, REC_EVICTED_PREEMPTED) == 0 ||
		      strcmp(ev->reason, REC_EVICTED_NODE_FAILURES) == 0);
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(
	    &s, &(struct cond){REC_COND_REQUEUED, requeue ? "True" : "False",
		    ev->reason ? ev->reason : "", ev->message, true});
	if (e == 0)
		e = unset_reservation(
		    &s, REC_REASON_PENDING_EVALUATION, ev->message);
	if (e == 0 && cond_find(s.status, REC_COND_PODS_READY) != NULL)
		e = pods_wait_for_start(&s);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_finish(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_finish_ready(
	    wl, reason, message, NULL, 0, now_ns, patch, err);
}

int rec_wl_status_finish_ready(const struct api_workload *wl,
    const char *reason, const char *message, const char *ready_reason,
    int64_t ready_ns, int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = need_reason(reason, "finished status", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s,
	    &(struct cond){REC_COND_FINISHED, "True", reason, message, true});
	if (e == 0 && ready_reason != NULL &&
	    !cond_is_true(s.status, REC_COND_PODS_READY)) {
		struct st r = s;

		r.now_ns = ready_ns;
		cu_time_format_rfc3339(ready_ns, r.now);
		e = cond_set(&r, &(struct cond){REC_COND_PODS_READY, "True",
				     ready_reason, REC_MSG_PODS_READY, true});
	}
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_deactivation_target(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = need_reason(reason, "deactivation target", err);
	if (rc != CU_OK || api_conditions_true(&wl->status.conditions,
			       REC_COND_DEACTIVATION_TARGET))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s, &(struct cond){REC_COND_DEACTIVATION_TARGET, "True",
			     reason, message, true});
	json_object_del(s.status, "accumulatedPastExecutionTimeSeconds");
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_requeued(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc;

	*patch = NULL;
	rc = need_reason(reason, "requeued status", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_REQUEUED))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	return status_end(from, to,
	    cond_set(&s, &(struct cond){REC_COND_REQUEUED, "True", reason,
			     message, true}),
	    patch, err);
}

int rec_wl_status_backoff_finished(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to, *rs;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s,
	    &(struct cond){REC_COND_REQUEUED, "True",
		REC_REQUEUED_BACKOFF_FINISHED, REC_MSG_BACKOFF_FINISHED, true});
	rs = json_object_get(s.status, "requeueState");
	if (json_is_object(rs))
		json_object_del(rs, "requeueAt");
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_pods_ready(const struct api_workload *wl, bool ready,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc;

	*patch = NULL;
	rc = need_reason(reason, "pods ready status", err);
	if (rc == CU_OK)
		rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	return status_end(from, to,
	    cond_set(&s, &(struct cond){REC_COND_PODS_READY,
			     ready ? "True" : "False", reason, message, true}),
	    patch, err);
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
