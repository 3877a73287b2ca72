/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/convert.c - the CRD conversion webhook: Kueue objects between
 * kueue.x-k8s.io/v1beta1 and v1beta2 with the semantics of Kueue's
 * apis/kueue/v1beta1 conversion functions, and the ConversionReview v1
 * codec around it (see "Conversion" in webhook.h for the field mapping).
 */
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "webhook/webhook.h"

#define PATH_MAX_LEN 160

#define V1 WH_KUEUE_GROUP "/v1beta1"
#define V2 WH_KUEUE_GROUP "/v1beta2"

static const char *const KINDS[] = {"ClusterQueue", "LocalQueue", "Workload",
    "Cohort", "ResourceFlavor", "WorkloadPriorityClass", "Topology",
    "AdmissionCheck", "ProvisioningRequestConfig", "MultiKueueCluster",
    "MultiKueueConfig", NULL};

/* ---- small helpers ---------------------------------------------------- */

/* obj[key] when it is of type t (JSON null and absent read as NULL);
 * another type is CU_EPARSE naming path.key. */
static int typed(json_t *obj, const char *key, const char *path, json_type t,
    json_t **out, cu_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return CU_OK;
	if (json_typeof(v) != t &&
	    !(t == JSON_INTEGER && json_typeof(v) == JSON_REAL))
		return cu_error_set(err, CU_EPARSE,
		    "%s%s%s: Invalid type: expected %s, got %s", path,
		    path[0] ? "." : "", key, api_json_type_word(t, true),
		    api_json_type_name(v, true));
	*out = v;
	return CU_OK;
}

/* Move obj[from] to obj[to] (to is replaced; nothing when from absent). */
static int rename_key(json_t *obj, const char *from, const char *to)
{
	json_t *v = json_object_get(obj, from);

	if (v == NULL) {
		json_object_del(obj, to);
		return CU_OK;
	}
	if (json_object_set(obj, to, v) != 0)
		return CU_ENOMEM;
	json_object_del(obj, from);
	return CU_OK;
}

static int nomem(cu_error *err)
{
	return cu_error_set(err, CU_ENOMEM, "conversion: out of memory");
}

/* ---- preserved v1beta2-only fields ------------------------------------ */

/* Stash v (borrowed) under data[key] and remove parent[field]. */
static int stash(json_t *data, const char *key, json_t *parent,
    const char *field, cu_error *err)
{
	json_t *v = json_object_get(parent, field);

	if (v == NULL)
		return CU_OK;
	if (json_object_set(data, key, v) != 0)
		return nomem(err);
	json_object_del(parent, field);
	return CU_OK;
}

/* Write data as the annotation (nothing when data is empty). */
static int stash_store(json_t *obj, json_t *data, cu_error *err)
{
	json_t *md, *ann;
	char *text;

	if (json_object_size(data) == 0)
		return CU_OK;
	md = api_json_obj_child(obj, "metadata");
	ann = md ? api_json_obj_child(md, "annotations") : NULL;
	if (ann == NULL)
		return nomem(err);
	if (api_json_dumps(
		data, JSON_COMPACT | JSON_SORT_KEYS, 0, &text, NULL) != CU_OK)
		return nomem(err);
	if (json_object_set_new(
		ann, WH_CONVERT_ANNOTATION, json_string(text)) != 0) {
		cu_free(text);
		return nomem(err);
	}
	cu_free(text);
	return CU_OK;
}

/* The annotation's data, removed from obj [owned], or NULL. A value that
 * is not a JSON object is an error naming the annotation. */
static int stash_take(json_t *obj, json_t **out, cu_error *err)
{
	json_t *md = json_object_get(obj, "metadata");
	json_t *ann = json_object_get(md, "annotations");
	const char *s = api_json_str(ann, WH_CONVERT_ANNOTATION);
	json_t *data;

	*out = NULL;
	if (s == NULL) {
		json_object_del(ann, WH_CONVERT_ANNOTATION);
		return CU_OK;
	}
	data = json_loads(s, 0, NULL);
	if (!json_is_object(data)) {
		json_decref(data);
		return cu_error_set(err, CU_EINVAL,
		    "metadata.annotations[%s]: Invalid value: not a JSON "
		    "object",
		    WH_CONVERT_ANNOTATION);
	}
	json_object_del(ann, WH_CONVERT_ANNOTATION);
	if (json_object_size(ann) == 0)
		json_object_del(md, "annotations");
	*out = data;
	return CU_OK;
}

/* Put data[key] back as parent[field] unless the object already has it. */
static int unstash(json_t *data, const char *key, json_t *parent,
    const char *field, cu_error *err)
{
	json_t *v = json_object_get(data, key);

	if (v == NULL || parent == NULL ||
	    json_object_get(parent, field) != NULL)
		return CU_OK;
	if (json_object_set(parent, field, v) != 0)
		return nomem(err);
	return CU_OK;
}

/* ---- fair sharing status ---------------------------------------------- */

/* v1beta2's FairSharingStatus of ClusterQueues and Cohorts has no
 * admissionFairSharingStatus: dropped going up, as Kueue's does. */
static int fair_sharing_up(json_t *status, cu_error *err)
{
	json_t *fs;
	int rc = typed(status, "fairSharing", "status", JSON_OBJECT, &fs, err);

	if (rc == CU_OK && fs != NULL)
		json_object_del(fs, "admissionFairSharingStatus");
	return rc;
}

/* ---- ClusterQueue ------------------------------------------------------ */

static int cq_up(json_t *obj, json_t *spec, json_t *status, cu_error *err)
{
	json_t *checks, *ff, *v, *data = NULL;
	size_t i;
	int rc;

	if (spec != NULL) {
		if ((rc = typed(spec, "cohort", "spec", JSON_STRING, &v,
			 err)) != CU_OK ||
		    (rc = typed(spec, "admissionChecks", "spec", JSON_ARRAY,
			 &checks, err)) != CU_OK ||
		    (rc = typed(spec, "flavorFungibility", "spec", JSON_OBJECT,
			 &ff, err)) != CU_OK)
			return rc;
		json_object_del(spec, "cohortName");
		if (v != NULL && json_string_length(v) > 0 &&
		    json_object_set(spec, "cohortName", v) != 0)
			return nomem(err);
		json_object_del(spec, "cohort");
		if (json_array_size(checks) > 0) {
			json_t *rules = json_array();

			json_array_foreach(checks, i, v)
			{
				if (!json_is_string(v)) {
					json_decref(rules);
					return cu_error_set(err, CU_EPARSE,
					    "spec.admissionChecks[%zu]: "
					    "Invalid type: expected string, "
					    "got %s",
					    i, api_json_type_name(v, true));
				}
				if (json_array_append_new(rules,
					json_pack("{sO}", "name", v)) != 0) {
					json_decref(rules);
					return nomem(err);
				}
			}
			if (json_object_set_new(spec, "admissionChecksStrategy",
				json_pack("{so}", "admissionChecks", rules)) !=
			    0)
				return nomem(err);
		}
		json_object_del(spec, "admissionChecks");
		if (ff != NULL) {
			const char *p = api_json_str(ff, "whenCanPreempt");
			const char *b = api_json_str(ff, "whenCanBorrow");

			if (p != NULL && strcmp(p, "Preempt") == 0)
				json_object_set_new(ff, "whenCanPreempt",
				    json_string("MayStopSearch"));
			if (b != NULL && strcmp(b, "Borrow") == 0)
				json_object_set_new(ff, "whenCanBorrow",
				    json_string("MayStopSearch"));
		}
	}
	if (status != NULL) {
		json_object_del(status, "pendingWorkloadsStatus");
		if ((rc = fair_sharing_up(status, err)) != CU_OK)
			return rc;
	}
	if ((rc = stash_take(obj, &data, err)) != CU_OK)
		return rc;
	if (data != NULL)
		rc = unstash(data, "spec.concurrentAdmissionPolicy", spec,
		    "concurrentAdmissionPolicy", err);
	json_decref(data);
	return rc;
}

static int cq_down(json_t *obj, json_t *spec, cu_error *err)
{
	json_t *v, *data;
	int rc;

	if (spec == NULL)
		return CU_OK;
	if ((rc = typed(spec, "cohortName", "spec", JSON_STRING, &v, err)) !=
	    CU_OK)
		return rc;
	json_object_del(spec, "admissionChecks");
	if (rename_key(spec, "cohortName", "cohort") != CU_OK)
		return nomem(err);
	if ((data = json_object()) == NULL)
		return nomem(err);
	rc = stash(data, "spec.concurrentAdmissionPolicy", spec,
	    "concurrentAdmissionPolicy", err);
	if (rc == CU_OK)
		rc = stash_store(obj, data, err);
	json_decref(data);
	return rc;
}

/* ---- LocalQueue -------------------------------------------------------- */

static int lq_up(json_t *status, cu_error *err)
{
	json_t *v;
	int rc;

	if (status == NULL)
		return CU_OK;
	if ((rc = typed(status, "flavorUsage", "status", JSON_ARRAY, &v,
		 err)) != CU_OK)
		return rc;
	json_object_del(status, "flavors");
	return rename_key(status, "flavorUsage", "flavorsUsage") == CU_OK
		   ? CU_OK
		   : nomem(err);
}

static int lq_down(json_t *status, cu_error *err)
{
	json_t *v;
	int rc;

	if (status == NULL)
		return CU_OK;
	if ((rc = typed(status, "flavorsUsage", "status", JSON_ARRAY, &v,
		 err)) != CU_OK)
		return rc;
	return rename_key(status, "flavorsUsage", "flavorUsage") == CU_OK
		   ? CU_OK
		   : nomem(err);
}

/* ---- topology assignments --------------------------------------------- */

/* Common prefix and suffix lengths of the strings vals[0..n) (n >= 1),
 * not overlapping in the shortest one; *same when all are equal. */
static void affixes(
    json_t **vals, size_t n, size_t *plen, size_t *slen, bool *same)
{
	const char *first = json_string_value(vals[0]);
	size_t p = strlen(first), s = p, minl = p, maxl = p, i, k;

	for (i = 1; i < n; i++) {
		const char *v = json_string_value(vals[i]);
		size_t l = strlen(v);

		minl = l < minl ? l : minl;
		maxl = l > maxl ? l : maxl;
		if (l < p)
			p = l;
		if (l < s)
			s = l;
		for (k = 0; k < p; k++)
			if (v[k] != first[k]) {
				p = k;
				break;
			}
		for (k = 0; k < s; k++)
			if (v[l - 1 - k] != first[strlen(first) - 1 - k]) {
				s = k;
				break;
			}
	}
	*same = p == maxl;
	if (!*same && p + s > minl)
		p = minl - s;
	*plen = p;
	*slen = s;
}

/* One level's values of the single compact slice [owned]. */
static json_t *level_values(json_t **vals, size_t n)
{
	size_t p, s, i;
	bool same;
	json_t *ind, *roots;
	const char *first = json_string_value(vals[0]);

	affixes(vals, n, &p, &s, &same);
	if (same)
		return json_pack("{ss}", "universal", first);
	ind = json_object();
	roots = json_array();
	if (ind == NULL || roots == NULL) {
		json_decref(ind);
		json_decref(roots);
		return NULL;
	}
	if (p > 0)
		json_object_set_new(ind, "prefix", json_stringn(first, p));
	if (s > 0)
		json_object_set_new(
		    ind, "suffix", json_string(first + strlen(first) - s));
	for (i = 0; i < n; i++) {
		const char *v = json_string_value(vals[i]);

		json_array_append_new(
		    roots, json_stringn(v + p, strlen(v) - p - s));
	}
	json_object_set_new(ind, "roots", roots);
	return json_pack("{so}", "individual", ind);
}

/* v1beta1 {levels, domains[{values, count}]} -> v1beta2 {levels,
 * slices}: one maximally compacted slice, as Kueue's default encoding. */
static int ta_up(json_t *ta, const char *path, cu_error *err)
{
	json_t *levels, *domains, *d, *v, *slice, *vpl, *counts, **col = NULL;
	size_t nl, nd, i, l;
	bool same_count = true;
	int rc;

	if ((rc = typed(ta, "levels", path, JSON_ARRAY, &levels, err)) !=
		CU_OK ||
	    (rc = typed(ta, "domains", path, JSON_ARRAY, &domains, err)) !=
		CU_OK)
		return rc;
	nl = json_array_size(levels);
	nd = json_array_size(domains);
	json_array_foreach(domains, i, d)
	{
		json_t *vals = json_object_get(d, "values");

		if (!json_is_object(d) || !json_is_array(vals) ||
		    json_array_size(vals) != nl)
			return cu_error_set(err, CU_EINVAL,
			    "%s.domains[%zu].values: Invalid value: must have "
			    "one value per level (%zu)",
			    path, i, nl);
		json_array_foreach(vals, l, v)
		{
			if (!json_is_string(v))
				return cu_error_set(err, CU_EPARSE,
				    "%s.domains[%zu].values[%zu]: Invalid "
				    "type: expected string, got %s",
				    path, i, l, api_json_type_name(v, true));
		}
		if (!json_is_integer(json_object_get(d, "count")))
			return cu_error_set(err, CU_EPARSE,
			    "%s.domains[%zu].count: Invalid type: expected "
			    "integer, got %s",
			    path, i,
			    api_json_type_name(
				json_object_get(d, "count"), true));
		if (json_integer_value(json_object_get(d, "count")) !=
		    json_integer_value(
			json_object_get(json_array_get(domains, 0), "count")))
			same_count = false;
	}
	if (nd == 0) {
		json_object_del(ta, "domains");
		json_object_del(ta, "slices");
		return CU_OK;
	}
	col = cu_calloc(nd, sizeof(*col));
	vpl = json_array();
	counts = json_array();
	slice = json_object();
	if (col == NULL || vpl == NULL || counts == NULL || slice == NULL)
		goto oom;
	for (l = 0; l < nl; l++) {
		for (i = 0; i < nd; i++)
			col[i] = json_array_get(
			    json_object_get(
				json_array_get(domains, i), "values"),
			    l);
		if (json_array_append_new(vpl, level_values(col, nd)) != 0)
			goto oom;
	}
	json_array_foreach(domains, i, d)
	{
		json_array_append(counts, json_object_get(d, "count"));
	}
	json_object_set_new(slice, "domainCount", json_integer((json_int_t)nd));
	json_object_set_new(slice, "valuesPerLevel", vpl);
	vpl = NULL;
	if (same_count)
		json_object_set_new(slice, "podCounts",
		    json_pack("{sO}", "universal", json_array_get(counts, 0)));
	else
		json_object_set_new(slice, "podCounts",
		    json_pack("{sO}", "individual", counts));
	if (json_object_set_new(ta, "slices", json_pack("[o]", slice)) != 0) {
		slice = NULL;
		goto oom;
	}
	json_object_del(ta, "domains");
	json_decref(counts);
	cu_free(col);
	return CU_OK;
oom:
	cu_free(col);
	json_decref(vpl);
	json_decref(counts);
	json_decref(slice);
	return nomem(err);
}

/* Value of a level for domain i of a slice [owned], or NULL with err. */
static json_t *slice_value(
    json_t *lv, size_t i, const char *path, size_t si, size_t l, cu_error *err)
{
	json_t *u = json_object_get(lv, "universal");
	json_t *ind = json_object_get(lv, "individual");
	json_t *r;
	const char *pre, *suf;

	if (json_is_string(u))
		return json_incref(u);
	r = json_array_get(json_object_get(ind, "roots"), i);
	if (!json_is_string(r)) {
		cu_error_set(err, CU_EINVAL,
		    "%s.slices[%zu].valuesPerLevel[%zu]: Invalid value: "
		    "exactly one of universal or individual (with a root "
		    "per domain) is required",
		    path, si, l);
		return NULL;
	}
	pre =
	    api_json_str(json_object_get(ind, "prefix") ? ind : NULL, "prefix");
	suf =
	    api_json_str(json_object_get(ind, "suffix") ? ind : NULL, "suffix");
	{
		char *s = cu_asprintf("%s%s%s", pre ? pre : "",
		    json_string_value(r), suf ? suf : "");
		json_t *out = s ? json_string(s) : NULL;

		cu_free(s);
		if (out == NULL)
			nomem(err);
		return out;
	}
}

/* v1beta2 {levels, slices} -> v1beta1 {levels, domains}. */
static int ta_down(json_t *ta, const char *path, cu_error *err)
{
	json_t *levels, *slices, *s, *domains;
	size_t nl, si, i, l;
	int rc;

	if ((rc = typed(ta, "levels", path, JSON_ARRAY, &levels, err)) !=
		CU_OK ||
	    (rc = typed(ta, "slices", path, JSON_ARRAY, &slices, err)) != CU_OK)
		return rc;
	nl = json_array_size(levels);
	if ((domains = json_array()) == NULL)
		return nomem(err);
	json_array_foreach(slices, si, s)
	{
		json_t *dc = json_object_get(s, "domainCount");
		json_t *vpl = json_object_get(s, "valuesPerLevel");
		json_t *pc = json_object_get(s, "podCounts");
		json_t *pu = json_object_get(pc, "universal");
		json_t *pi = json_object_get(pc, "individual");
		json_int_t n;

		if (!json_is_integer(dc) || json_integer_value(dc) < 0 ||
		    json_integer_value(dc) > 100000) {
			json_decref(domains);
			return cu_error_set(err, CU_EINVAL,
			    "%s.slices[%zu].domainCount: Invalid value: must "
			    "be an integer in 0..100000",
			    path, si);
		}
		n = json_integer_value(dc);
		if (!json_is_array(vpl) || json_array_size(vpl) != nl) {
			json_decref(domains);
			return cu_error_set(err, CU_EINVAL,
			    "%s.slices[%zu].valuesPerLevel: Invalid value: "
			    "must have one entry per level (%zu)",
			    path, si, nl);
		}
		for (i = 0; i < (size_t)n; i++) {
			json_t *vals = json_array(), *count;

			if (json_is_integer(pu))
				count = json_incref(pu);
			else if (json_is_integer(json_array_get(pi, i)))
				count = json_incref(json_array_get(pi, i));
			else {
				json_decref(vals);
				json_decref(domains);
				return cu_error_set(err, CU_EINVAL,
				    "%s.slices[%zu].podCounts: Invalid "
				    "value: exactly one of universal or "
				    "individual (with a count per domain) "
				    "is required",
				    path, si);
			}
			for (l = 0; l < nl; l++) {
				json_t *v = slice_value(json_array_get(vpl, l),
				    i, path, si, l, err);

				if (v == NULL) {
					json_decref(vals);
					json_decref(count);
					json_decref(domains);
					return err && err->code ? err->code
								: CU_EINVAL;
				}
				json_array_append_new(vals, v);
			}
			if (json_array_append_new(
				domains, json_pack("{soso}", "values", vals,
					     "count", count)) != 0) {
				json_decref(domains);
				return nomem(err);
			}
		}
	}
	json_object_del(ta, "slices");
	if (json_object_set_new(ta, "domains", domains) != 0)
		return nomem(err);
	return CU_OK;
}

/* Every status.admission.podSetAssignments[i].topologyAssignment. */
static int each_ta(json_t *status, bool up, cu_error *err)
{
	json_t *adm, *psa, *a, *ta;
	size_t i;
	char path[PATH_MAX_LEN];
	int rc;

	if ((rc = typed(status, "admission", "status", JSON_OBJECT, &adm,
		 err)) != CU_OK ||
	    adm == NULL)
		return rc;
	if ((rc = typed(adm, "podSetAssignments", "status.admission",
		 JSON_ARRAY, &psa, err)) != CU_OK)
		return rc;
	json_array_foreach(psa, i, a)
	{
		snprintf(path, sizeof(path),
		    "status.admission.podSetAssignments[%zu]", i);
		if (!json_is_object(a))
			return cu_error_set(err, CU_EPARSE,
			    "%s: Invalid type: expected object, got %s", path,
			    api_json_type_name(a, true));
		if ((rc = typed(a, "topologyAssignment", path, JSON_OBJECT, &ta,
			 err)) != CU_OK)
			return rc;
		if (ta == NULL)
			continue;
		snprintf(path, sizeof(path),
		    "status.admission.podSetAssignments[%zu]."
		    "topologyAssignment",
		    i);
		rc = up ? ta_up(ta, path, err) : ta_down(ta, path, err);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

/* ---- Workload ---------------------------------------------------------- */

struct prio_source {
	const char *source, *group, *kind;
};

static const struct prio_source PRIO[] = {
    {"kueue.x-k8s.io/workloadpriorityclass", "kueue.x-k8s.io",
	"WorkloadPriorityClass"},
    {"scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass"},
};

static int wl_up(json_t *obj, json_t *spec, json_t *status, cu_error *err)
{
	json_t *name, *src, *data = NULL, *podsets, *ps;
	size_t i;
	int rc;

	if (spec != NULL) {
		if ((rc = typed(spec, "priorityClassName", "spec", JSON_STRING,
			 &name, err)) != CU_OK ||
		    (rc = typed(spec, "priorityClassSource", "spec",
			 JSON_STRING, &src, err)) != CU_OK)
			return rc;
		json_object_del(spec, "priorityClassRef");
		for (i = 0; src != NULL && i < sizeof(PRIO) / sizeof(PRIO[0]);
		     i++)
			if (strcmp(json_string_value(src), PRIO[i].source) ==
			    0) {
				json_t *ref = json_pack("{ssss}", "group",
				    PRIO[i].group, "kind", PRIO[i].kind);

				if (ref != NULL && name != NULL &&
				    json_string_length(name) > 0)
					json_object_set(ref, "name", name);
				if (json_object_set_new(
					spec, "priorityClassRef", ref) != 0)
					return nomem(err);
			}
		json_object_del(spec, "priorityClassName");
		json_object_del(spec, "priorityClassSource");
	}
	if (status != NULL) {
		json_t *v;

		if ((rc = typed(status, "accumulatedPastExexcutionTimeSeconds",
			 "status", JSON_INTEGER, &v, err)) != CU_OK)
			return rc;
		if (rename_key(status, "accumulatedPastExexcutionTimeSeconds",
			"accumulatedPastExecutionTimeSeconds") != CU_OK)
			return nomem(err);
		if ((rc = each_ta(status, true, err)) != CU_OK)
			return rc;
	}
	if ((rc = stash_take(obj, &data, err)) != CU_OK || data == NULL)
		return rc;
	rc =
	    unstash(data, "spec.preemptionGates", spec, "preemptionGates", err);
	podsets = json_object_get(spec, "podSets");
	json_array_foreach(podsets, i, ps)
	{
		char key[PATH_MAX_LEN];
		json_t *tr = json_object_get(ps, "topologyRequest");

		if (rc != CU_OK || !json_is_object(tr))
			continue;
		snprintf(key, sizeof(key),
		    "spec.podSets[%s].topologyRequest."
		    "podsetSliceRequiredTopologyConstraints",
		    api_json_str(ps, "name") ? api_json_str(ps, "name") : "");
		rc = unstash(data, key, tr,
		    "podsetSliceRequiredTopologyConstraints", err);
	}
	json_decref(data);
	return rc;
}

static int wl_down(json_t *obj, json_t *spec, json_t *status, cu_error *err)
{
	json_t *ref, *data, *podsets, *ps;
	size_t i;
	int rc;

	if ((data = json_object()) == NULL)
		return nomem(err);
	if (spec != NULL) {
		if ((rc = typed(spec, "priorityClassRef", "spec", JSON_OBJECT,
			 &ref, err)) != CU_OK)
			goto out;
		json_object_del(spec, "priorityClassName");
		json_object_del(spec, "priorityClassSource");
		for (i = 0; ref != NULL && i < sizeof(PRIO) / sizeof(PRIO[0]);
		     i++) {
			const char *g = api_json_str(ref, "group");
			const char *k = api_json_str(ref, "kind");
			const char *n = api_json_str(ref, "name");

			if (g == NULL || k == NULL ||
			    strcmp(g, PRIO[i].group) != 0 ||
			    strcmp(k, PRIO[i].kind) != 0)
				continue;
			json_object_set_new(spec, "priorityClassSource",
			    json_string(PRIO[i].source));
			if (n != NULL && n[0] != '\0')
				json_object_set_new(
				    spec, "priorityClassName", json_string(n));
		}
		json_object_del(spec, "priorityClassRef");
		rc = stash(
		    data, "spec.preemptionGates", spec, "preemptionGates", err);
		podsets = json_object_get(spec, "podSets");
		json_array_foreach(podsets, i, ps)
		{
			char key[PATH_MAX_LEN];
			json_t *tr = json_object_get(ps, "topologyRequest");

			if (rc != CU_OK || !json_is_object(tr))
				continue;
			snprintf(key, sizeof(key),
			    "spec.podSets[%s].topologyRequest."
			    "podsetSliceRequiredTopologyConstraints",
			    api_json_str(ps, "name") ? api_json_str(ps, "name")
						     : "");
			rc = stash(data, key, tr,
			    "podsetSliceRequiredTopologyConstraints", err);
		}
		if (rc != CU_OK)
			goto out;
	}
	if (status != NULL) {
		json_t *v;

		if ((rc = typed(status, "accumulatedPastExecutionTimeSeconds",
			 "status", JSON_INTEGER, &v, err)) != CU_OK)
			goto out;
		if (rename_key(status, "accumulatedPastExecutionTimeSeconds",
			"accumulatedPastExexcutionTimeSeconds") != CU_OK) {
			rc = nomem(err);
			goto out;
		}
		/* Status-only v1beta2 field: dropped, as Kueue's. */
		json_object_del(status, "preemptionGates");
		if ((rc = each_ta(status, false, err)) != CU_OK)
			goto out;
	}
	rc = stash_store(obj, data, err);
out:
	json_decref(data);
	return rc;
}

/* ---- AdmissionCheck --------------------------------------------------- */

/* v1beta1's deprecated spec.retryDelayMinutes has no v1beta2 field and
 * Kueue keeps no annotation for it: dropped going up (its type is still
 * checked). ProvisioningRequestConfig is the same in both versions. */
static int ac_up(json_t *spec, cu_error *err)
{
	json_t *v;
	int rc;

	if (spec == NULL)
		return CU_OK;
	if ((rc = typed(spec, "retryDelayMinutes", "spec", JSON_INTEGER, &v,
		 err)) != CU_OK)
		return rc;
	json_object_del(spec, "retryDelayMinutes");
	return CU_OK;
}

/* ---- MultiKueueCluster ------------------------------------------------- */

/* v1beta1 keeps the kubeconfig at spec.kubeConfig, v1beta2 under
 * spec.clusterSource.kubeConfig (beside clusterProfileRef, which v1beta1
 * carries only so that nothing is lost). Up: a kubeConfig with a
 * location moves under clusterSource, as does clusterProfileRef; down:
 * both move back. MultiKueueConfig is the same in both versions. */
static int mkc_up(json_t *spec, cu_error *err)
{
	json_t *kc, *loc, *prof, *src;
	int rc;

	if (spec == NULL)
		return CU_OK;
	if ((rc = typed(spec, "kubeConfig", "spec", JSON_OBJECT, &kc, err)) !=
		CU_OK ||
	    (rc = typed(spec, "clusterProfileRef", "spec", JSON_OBJECT, &prof,
		 err)) != CU_OK)
		return rc;
	if (kc != NULL && (rc = typed(kc, "location", "spec.kubeConfig",
			       JSON_STRING, &loc, err)) != CU_OK)
		return rc;
	src = json_object();
	if (src == NULL)
		return nomem(err);
	if (kc != NULL && loc != NULL && json_string_length(loc) > 0)
		json_object_set(src, "kubeConfig", kc);
	if (prof != NULL)
		json_object_set(src, "clusterProfileRef", prof);
	json_object_del(spec, "kubeConfig");
	json_object_del(spec, "clusterProfileRef");
	if (json_object_set_new(spec, "clusterSource", src) != 0)
		return nomem(err);
	return CU_OK;
}

static int mkc_down(json_t *spec, cu_error *err)
{
	json_t *src, *kc, *prof;
	int rc;

	if (spec == NULL)
		return CU_OK;
	if ((rc = typed(spec, "clusterSource", "spec", JSON_OBJECT, &src,
		 err)) != CU_OK)
		return rc;
	if (src == NULL)
		return CU_OK;
	if ((rc = typed(src, "kubeConfig", "spec.clusterSource", JSON_OBJECT,
		 &kc, err)) != CU_OK ||
	    (rc = typed(src, "clusterProfileRef", "spec.clusterSource",
		 JSON_OBJECT, &prof, err)) != CU_OK)
		return rc;
	if ((kc != NULL && json_object_set(spec, "kubeConfig", kc) != 0) ||
	    (prof != NULL &&
		json_object_set(spec, "clusterProfileRef", prof) != 0))
		return nomem(err);
	json_object_del(spec, "clusterSource");
	return CU_OK;
}

/* ---- one object -------------------------------------------------------- */

static bool known_kind(const char *k)
{
	size_t i;

	for (i = 0; KINDS[i] != NULL; i++)
		if (strcmp(KINDS[i], k) == 0)
			return true;
	return false;
}

static int version_of(const char *av, const char *what, cu_error *err)
{
	if (strcmp(av, V1) == 0)
		return 1;
	if (strcmp(av, V2) == 0)
		return 2;
	cu_error_set(err, CU_EINVAL,
	    "%s: Unsupported value: \"%s\": supported values: \"" V1 "\", \"" V2
	    "\"",
	    what, av);
	return 0;
}

int wh_convert_object(
    const json_t *in, const char *desired, json_t **out, cu_error *err)
{
	const char *av, *kind;
	json_t *obj, *spec, *status;
	int from, to, rc;

	*out = NULL;
	if (!json_is_object(in))
		return cu_error_set(err, CU_EPARSE,
		    "object: Invalid type: expected object, got %s",
		    api_json_type_name(in, true));
	if (desired == NULL ||
	    (to = version_of(desired, "desiredAPIVersion", err)) == 0)
		return desired == NULL ? cu_error_set(err, CU_EINVAL,
					     "desiredAPIVersion: Required "
					     "value")
				       : CU_EINVAL;
	av = api_json_str(in, "apiVersion");
	kind = api_json_str(in, "kind");
	if (av == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "apiVersion: Required value");
	if ((from = version_of(av, "apiVersion", err)) == 0)
		return CU_EINVAL;
	if (kind == NULL)
		return cu_error_set(err, CU_EINVAL, "kind: Required value");
	if (!known_kind(kind))
		return cu_error_set(err, CU_EINVAL,
		    "kind: Unsupported value: \"%s\": not a kind of " V2
		    " cueue serves",
		    kind);
	if ((obj = json_deep_copy(in)) == NULL)
		return nomem(err);
	{
		json_t *md;

		if ((rc = typed(obj, "metadata", "", JSON_OBJECT, &md, err)) !=
			CU_OK ||
		    (rc = typed(obj, "spec", "", JSON_OBJECT, &spec, err)) !=
			CU_OK ||
		    (rc = typed(obj, "status", "", JSON_OBJECT, &status,
			 err)) != CU_OK) {
			json_decref(obj);
			return rc;
		}
	}
	if (from == 1 && to == 2) {
		if (strcmp(kind, "ClusterQueue") == 0)
			rc = cq_up(obj, spec, status, err);
		else if (strcmp(kind, "LocalQueue") == 0)
			rc = lq_up(status, err);
		else if (strcmp(kind, "Workload") == 0)
			rc = wl_up(obj, spec, status, err);
		else if (strcmp(kind, "Cohort") == 0 && status != NULL)
			rc = fair_sharing_up(status, err);
		else if (strcmp(kind, "AdmissionCheck") == 0)
			rc = ac_up(spec, err);
		else if (strcmp(kind, "MultiKueueCluster") == 0)
			rc = mkc_up(spec, err);
	} else if (from == 2 && to == 1) {
		if (strcmp(kind, "ClusterQueue") == 0)
			rc = cq_down(obj, spec, err);
		else if (strcmp(kind, "LocalQueue") == 0)
			rc = lq_down(status, err);
		else if (strcmp(kind, "Workload") == 0)
			rc = wl_down(obj, spec, status, err);
		else if (strcmp(kind, "MultiKueueCluster") == 0)
			rc = mkc_down(spec, err);
	}
	if (rc == CU_OK &&
	    json_object_set_new(obj, "apiVersion", json_string(desired)) != 0)
		rc = nomem(err);
	if (rc != CU_OK) {
		json_decref(obj);
		return rc;
	}
	*out = obj;
	return CU_OK;
}

/* ---- the ConversionReview ---------------------------------------------- */

/* Body of the answer [owned: cu_free]. */
static int encode(const char *uid, json_t *objects, const char *failure,
    char **out, size_t *out_len, cu_error *err)
{
	json_t *result =
	    failure != NULL
		? json_pack("{sss{}ss}", "status", "Failure", "metadata",
		      "message", failure)
		: json_pack("{sss{}}", "status", "Success", "metadata");
	json_t *doc = json_pack("{sssss{sssoso}}", "apiVersion",
	    WH_CONVERT_API_VERSION, "kind", WH_CONVERT_KIND, "response", "uid",
	    uid, "convertedObjects",
	    objects != NULL ? json_incref(objects) : json_array(), "result",
	    result);
	int rc;

	if (doc == NULL)
		return nomem(err);
	rc = api_json_dumps(doc, JSON_COMPACT, 0, out, out_len);
	json_decref(doc);
	return rc == CU_OK ? CU_OK : nomem(err);
}

/* The uid when the body is a review with one, else "" [borrowed from
 * doc or static]. */
static const char *uid_of(json_t *doc)
{
	const char *u = api_json_str(json_object_get(doc, "request"), "uid");

	return u != NULL ? u : "";
}

/* Decode and convert; *objects [owned] on CU_OK; err names the field. */
static int convert_review(json_t *doc, json_t **objects, cu_error *err)
{
	json_t *req, *objs, *o, *conv;
	const char *av, *kind, *uid, *desired;
	size_t i;
	int rc;

	*objects = NULL;
	if (!json_is_object(doc))
		return cu_error_set(err, CU_EPARSE,
		    "ConversionReview: Invalid type: expected object, got %s",
		    api_json_type_name(doc, true));
	av = api_json_str(doc, "apiVersion");
	kind = api_json_str(doc, "kind");
	if (av == NULL || strcmp(av, WH_CONVERT_API_VERSION) != 0)
		return cu_error_set(err, CU_EINVAL,
		    "apiVersion: Unsupported value: \"%s\": supported "
		    "values: \"" WH_CONVERT_API_VERSION "\"",
		    av ? av : "");
	if (kind == NULL || strcmp(kind, WH_CONVERT_KIND) != 0)
		return cu_error_set(err, CU_EINVAL,
		    "kind: Unsupported value: \"%s\": supported values: "
		    "\"" WH_CONVERT_KIND "\"",
		    kind ? kind : "");
	req = json_object_get(doc, "request");
	if (!json_is_object(req))
		return cu_error_set(err,
		    req == NULL || json_is_null(req) ? CU_EINVAL : CU_EPARSE,
		    req == NULL || json_is_null(req)
			? "request: Required value"
			: "request: Invalid type: expected object, got %s",
		    api_json_type_name(req, true));
	uid = api_json_str(req, "uid");
	if (uid == NULL || uid[0] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "request.uid: Required value");
	desired = api_json_str(req, "desiredAPIVersion");
	if (desired == NULL || desired[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "request.desiredAPIVersion: Required value");
	if (version_of(desired, "request.desiredAPIVersion", err) == 0)
		return CU_EINVAL;
	objs = json_object_get(req, "objects");
	if (objs != NULL && !json_is_null(objs) && !json_is_array(objs))
		return cu_error_set(err, CU_EPARSE,
		    "request.objects: Invalid type: expected array, got %s",
		    api_json_type_name(objs, true));
	if ((*objects = json_array()) == NULL)
		return nomem(err);
	json_array_foreach(objs, i, o)
	{
		cu_error e;

		cu_error_clear(&e);
		rc = wh_convert_object(o, desired, &conv, &e);
		if (rc != CU_OK) {
			json_decref(*objects);
			*objects = NULL;
			return cu_error_set(err, rc, "request.objects[%zu]%s%s",
			    i, e.msg[0] == '[' ? "" : ".", e.msg);
		}
		if (json_array_append_new(*objects, conv) != 0) {
			json_decref(*objects);
			*objects = NULL;
			return nomem(err);
		}
	}
	return CU_OK;
}

int wh_convert_serve(const void *body, size_t len, int *http_status, char **out,
    size_t *out_len, cu_error *err)
{
	json_t *doc = NULL, *objects = NULL;
	json_error_t jerr;
	cu_error local;
	int rc;

	*out = NULL;
	*http_status = 500;
	cu_error_clear(&local);
	if (len > WH_MAX_BODY)
		rc = cu_error_set(&local, CU_ETOOBIG,
		    "request body: Too long: must have at most %zu bytes",
		    WH_MAX_BODY);
	else if ((rc = api_json_loadb(&doc, body, len, 0, &jerr)) != CU_OK)
		rc = rc == CU_ENOMEM ? nomem(&local)
				     : cu_error_set(&local, CU_EPARSE,
					   "request body: Invalid value: not "
					   "JSON: %s",
					   jerr.text);
	else
		rc = convert_review(doc, &objects, &local);
	if (rc == CU_ENOMEM) {
		json_decref(doc);
		if (err != NULL)
			*err = local;
		return CU_ENOMEM;
	}
	/* A review that could not be read is a 400 (controller-runtime's
	 * answer); a conversion that failed is a Failure result in a 200. */
	if (rc == CU_OK)
		*http_status = 200;
	else if (rc == CU_ETOOBIG)
		*http_status = 413;
	else if (json_is_object(doc) &&
		 json_is_object(json_object_get(doc, "request")) &&
		 uid_of(doc)[0] != '\0' &&
		 strncmp(local.msg, "request.objects[", 16) == 0)
		*http_status = 200;
	else
		*http_status = 400;
	if (rc != CU_OK && err != NULL)
		*err = local;
	rc = encode(uid_of(doc), objects, rc == CU_OK ? NULL : local.msg, out,
	    out_len, &local);
	json_decref(objects);
	json_decref(doc);
	if (rc != CU_OK) {
		*http_status = 500;
		if (err != NULL)
			*err = local;
		return CU_ENOMEM;
	}
	return CU_OK;
}
