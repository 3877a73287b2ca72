/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/provreq.c - the ProvisioningRequest admission check, pure:
 * a ProvisioningRequestConfig decoded (Kueue's defaults), whether an
 * AdmissionCheck of controller kueue.x-k8s.io/provisioning-request is
 * Active, the names of requests and pod templates (Kueue's naming with
 * the attempt suffix and the hashed cut of long names), which pod sets a
 * request covers (managedResources, podSetMergePolicy), the request and
 * its PodTemplates as new objects, and a request's conditions mapped onto
 * the Workload's check state with the retry strategy (Retry with a
 * backoff, Rejected past backoffLimitCount, Ready with the consume
 * annotations as podSetUpdates). No I/O, no clock read. Contracts in
 * reconcile/reconcile.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

/* ---- ProvisioningRequestConfig --------------------------------------- */

static int bad(cu_error *err, const char *field)
{
	return cu_error_set(
	    err, CU_EINVAL, "provisioningrequestconfig: %s: wrong type", field);
}

static int opt_int(
    const json_t *o, const char *k, int32_t dflt, int32_t *out, cu_error *err)
{
	const json_t *v = json_object_get(o, k);

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return CU_OK;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > INT32_MAX)
		return bad(err, k);
	*out = (int32_t)json_integer_value(v);
	return CU_OK;
}

static bool all_strings(const json_t *a, bool object)
{
	const json_t *v;
	const char *k;
	size_t i;

	if (object) {
		json_object_foreach((json_t *)a, k, v)
		{
			if (!json_is_string(v))
				return false;
		}
		return true;
	}
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v))
			return false;
	}
	return true;
}

int rec_prc_decode(const json_t *obj, struct rec_prc *out, cu_error *err)
{
	const json_t *spec, *v, *rs, *psu, *ns;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->backoff_limit_count = REC_PRC_DEFAULT_LIMIT;
	out->backoff_base_s = REC_PRC_DEFAULT_BASE_S;
	out->backoff_max_s = REC_PRC_DEFAULT_MAX_S;
	if (!json_is_object(obj))
		return bad(err, "object");
	out->name = api_json_str(json_object_get(obj, "metadata"), "name");
	spec = json_object_get(obj, "spec");
	if (!json_is_object(spec))
		return bad(err, "spec");
	v = json_object_get(spec, "provisioningClassName");
	if (!json_is_string(v))
		return bad(err, "spec.provisioningClassName");
	out->class_name = json_string_value(v);
	v = json_object_get(spec, "parameters");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_object(v) || !all_strings(v, true))
			return bad(err, "spec.parameters");
		out->parameters = v;
	}
	v = json_object_get(spec, "managedResources");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || !all_strings(v, false))
			return bad(err, "spec.managedResources");
		out->managed = v;
	}
	rs = json_object_get(spec, "retryStrategy");
	if (rs != NULL && !json_is_null(rs)) {
		if (!json_is_object(rs))
			return bad(err, "spec.retryStrategy");
		if (opt_int(rs, "backoffLimitCount", REC_PRC_DEFAULT_LIMIT,
			&out->backoff_limit_count, err) != CU_OK ||
		    opt_int(rs, "backoffBaseSeconds", REC_PRC_DEFAULT_BASE_S,
			&out->backoff_base_s, err) != CU_OK ||
		    opt_int(rs, "backoffMaxSeconds", REC_PRC_DEFAULT_MAX_S,
			&out->backoff_max_s, err) != CU_OK)
			return err->code;
	}
	psu = json_object_get(spec, "podSetUpdates");
	if (psu != NULL && !json_is_null(psu)) {
		if (!json_is_object(psu))
			return bad(err, "spec.podSetUpdates");
		ns = json_object_get(psu, "nodeSelector");
		if (ns != NULL && !json_is_null(ns)) {
			if (!json_is_array(ns))
				return bad(
				    err, "spec.podSetUpdates.nodeSelector");
			json_array_foreach(ns, i, v)
			{
				if (!json_is_string(
					json_object_get(v, "key")) ||
				    !json_is_string(json_object_get(
					v, "valueFromProvisioningClassDetail")))
					return bad(err, "spec.podSetUpdates."
							"nodeSelector[]");
			}
			out->node_selector = ns;
		}
	}
	v = json_object_get(spec, "podSetMergePolicy");
	if (v != NULL && !json_is_null(v)) {
		const char *s = json_string_value(v);

		if (s != NULL && strcmp(s, "IdenticalPodTemplates") == 0)
			out->merge = REC_PRC_MERGE_TEMPLATES;
		else if (s != NULL &&
			 strcmp(s, "IdenticalWorkloadSchedulingRequirements") ==
			     0)
			out->merge = REC_PRC_MERGE_REQUIREMENTS;
		else
			return bad(err, "spec.podSetMergePolicy");
	}
	return CU_OK;
}

/* ---- the AdmissionCheck's Active condition ---------------------------- */

bool rec_provreq_active(
    const struct api_admission_check *ac, const json_t *prc, char **message)
{
	const char *g, *k, *n;
	struct rec_prc cfg;
	cu_error err;

	*message = NULL;
	if (!ac->spec.has_parameters) {
		*message = cu_strdup("missing parameters reference");
		return false;
	}
	g = ac->spec.parameters.api_group ? ac->spec.parameters.api_group : "";
	k = ac->spec.parameters.kind ? ac->spec.parameters.kind : "";
	n = ac->spec.parameters.name ? ac->spec.parameters.name : "";
	if (*n == '\0')
		*message = cu_strdup("empty name: bad parameters reference");
	else if (strcmp(g, "kueue.x-k8s.io") != 0)
		*message = cu_asprintf("wrong group \"%s\", expecting "
				       "\"kueue.x-k8s.io\": bad parameters "
				       "reference",
		    g);
	else if (strcmp(k, REC_PRC_KIND) != 0)
		*message =
		    cu_asprintf("wrong kind \"%s\", expecting \"%s\": bad "
				"parameters reference",
			k, REC_PRC_KIND);
	else if (prc == NULL)
		*message = cu_asprintf("provisioningrequestconfigs.kueue.x-k8s."
				       "io \"%s\" not found",
		    n);
	else if (rec_prc_decode(prc, &cfg, &err) != CU_OK)
		*message = cu_strdup(err.msg);
	else
		return true;
	if (*message == NULL)
		*message = cu_strdup("");
	return false;
}

/* ---- names ------------------------------------------------------------- */

/* Kueue's limitObjectName: names longer than 247 characters are cut there
 * and suffixed with "-" and the first 5 hex digits of their SHA-1. */
static char *limit_name(char *full)
{
	char hex[API_SHA1_HEX_LEN];
	cu_error err;
	char *out;

	if (full == NULL || strlen(full) <= REC_PROVREQ_NAME_MAX)
		return full;
	if (api_sha1_hex(full, hex, &err) != CU_OK) {
		cu_free(full);
		return NULL;
	}
	out = cu_asprintf("%.*s-%.5s", (int)REC_PROVREQ_NAME_MAX, full, hex);
	cu_free(full);
	return out;
}

char *rec_provreq_name(const char *wl, const char *check, int32_t attempt)
{
	return limit_name(cu_asprintf("%s-%s-%d", wl, check, (int)attempt));
}

char *rec_provreq_template_name(const char *pr, const char *podset)
{
	return limit_name(cu_asprintf("ppt-%s-%s", pr, podset));
}

int32_t rec_provreq_attempt(const char *pr, const char *wl, const char *check)
{
	char *prefix = limit_name(cu_asprintf("%s-%s-", wl, check));
	size_t n;
	const char *p;
	long v = 0;

	if (prefix == NULL || pr == NULL)
		goto none;
	n = strlen(prefix);
	if (strncmp(pr, prefix, n) != 0 || pr[n] == '\0')
		goto none;
	for (p = pr + n; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || v > 100000000L)
			goto none;
		v = v * 10 + (*p - '0');
	}
	cu_free(prefix);
	return v > INT32_MAX ? INT32_MAX : (int32_t)v;
none:
	cu_free(prefix);
	return -1;
}

/* ---- pod sets ---------------------------------------------------------- */

static bool in_list(const json_t *list, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(list, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	}
	return false;
}

static bool container_uses(const json_t *c, const json_t *managed)
{
	static const char *const kinds[] = {"requests", "limits"};
	const json_t *res = json_object_get(c, "resources"), *v;
	const char *k;
	size_t i;

	for (i = 0; i < 2; i++) {
		json_object_foreach(json_object_get(res, kinds[i]), k, v)
		{
			if (in_list(managed, k))
				return true;
		}
	}
	return false;
}

/* podUses: a container or init container of pod template t requests or
 * limits one of managed. */
static bool pod_uses(const json_t *t, const json_t *managed)
{
	const json_t *spec = json_object_get(t, "spec"), *c;
	static const char *const lists[] = {"initContainers", "containers"};
	size_t i, k;

	for (k = 0; k < 2; k++) {
		json_array_foreach(json_object_get(spec, lists[k]), i, c)
		{
			if (container_uses(c, managed))
				return true;
		}
	}
	return false;
}

static int32_t ps_count(const json_t *ps)
{
	const json_t *c = json_object_get(ps, "count");

	return json_is_integer(c) ? (int32_t)json_integer_value(c) : 1;
}

static const json_t *assignment(const json_t *wl, const char *name)
{
	const json_t *a,
	    *psas = json_object_get(
		json_object_get(json_object_get(wl, "status"), "admission"),
		"podSetAssignments");
	size_t i;

	json_array_foreach(psas, i, a)
	{
		const char *n = api_json_str(a, "name");

		if (n != NULL && strcmp(n, name) == 0)
			return a;
	}
	return NULL;
}

static const char *ps_name(const json_t *ps)
{
	const char *n = api_json_str(ps, "name");

	return n != NULL ? n : "main";
}

/* Does pod set ps count for the check: pods, and one of managed used
 * (none: all)? */
static bool ps_required(const json_t *ps, const struct rec_prc *prc)
{
	return ps_count(ps) > 0 &&
	       (json_array_size(prc->managed) == 0 ||
		   pod_uses(json_object_get(ps, "template"), prc->managed));
}

static int32_t assigned_count(const json_t *psa, const json_t *ps)
{
	const json_t *c = json_object_get(psa, "count");

	return json_is_integer(c) ? (int32_t)json_integer_value(c)
				  : ps_count(ps);
}

int rec_provreq_needed(
    const json_t *wl, const struct rec_prc *prc, bool *needed, cu_error *err)
{
	const json_t *ps, *psa;
	size_t i;

	*needed = false;
	json_array_foreach(
	    json_object_get(json_object_get(wl, "spec"), "podSets"), i, ps)
	{
		if (!ps_required(ps, prc))
			continue;
		psa = assignment(wl, ps_name(ps));
		if (psa == NULL)
			return cu_error_set(err, CU_EINVAL,
			    "inconsistent podSet assignments: missing "
			    "assignment for PodSet \"%s\"",
			    ps_name(ps));
		if (assigned_count(psa, ps) > 0) {
			*needed = true;
			return CU_OK;
		}
	}
	return CU_OK;
}

/* Containers' resource requests equal, pairwise. */
static bool same_requests(const json_t *a, const json_t *b)
{
	const json_t *x, *y;
	size_t i;

	if (json_array_size(a) != json_array_size(b))
		return false;
	for (i = 0; i < json_array_size(a); i++) {
		x = json_object_get(
		    json_object_get(json_array_get(a, i), "resources"),
		    "requests");
		y = json_object_get(
		    json_object_get(json_array_get(b, i), "resources"),
		    "requests");
		if ((x || y) && !(x && y && json_equal(x, y)))
			return false;
	}
	return true;
}

static bool same_field(const json_t *a, const json_t *b, const char *k)
{
	const json_t *x = json_object_get(a, k), *y = json_object_get(b, k);

	return (x == NULL && y == NULL) || (x && y && json_equal(x, y));
}

static bool can_merge(
    const json_t *p1, const json_t *p2, enum rec_prc_merge policy)
{
	const json_t *t1 = json_object_get(p1, "template"),
		     *t2 = json_object_get(p2, "template");
	const json_t *s1 = json_object_get(t1, "spec"),
		     *s2 = json_object_get(t2, "spec");
	static const char *const same[] = {"resources", "nodeSelector",
	    "tolerations", "affinity", "resourceClaims"};
	size_t i;

	if (policy == REC_PRC_MERGE_TEMPLATES)
		return same_field(p1, p2, "template");
	if (policy != REC_PRC_MERGE_REQUIREMENTS)
		return false;
	if (!same_requests(json_object_get(s1, "containers"),
		json_object_get(s2, "containers")) ||
	    !same_requests(json_object_get(s1, "initContainers"),
		json_object_get(s2, "initContainers")))
		return false;
	for (i = 0; i < sizeof(same) / sizeof(*same); i++)
		if (!same_field(s1, s2, same[i]))
			return false;
	return true;
}

int rec_provreq_podsets(const json_t *wl, const struct rec_prc *prc,
    struct rec_provreq_podset **out, size_t *n, cu_error *err)
{
	const json_t *pss =
	    json_object_get(json_object_get(wl, "spec"), "podSets");
	const json_t *ps, *psa;
	struct rec_provreq_podset *v;
	size_t i, k;

	*out = NULL;
	*n = 0;
	v = cu_calloc(json_array_size(pss) + 1, sizeof(*v));
	if (v == NULL)
		return rec__nomem(err, "provisioning request");
	json_array_foreach(pss, i, ps)
	{
		int32_t count;
		bool merged = false;

		if (!ps_required(ps, prc))
			continue;
		psa = assignment(wl, ps_name(ps));
		if (psa == NULL) {
			cu_free(v);
			return cu_error_set(
			    err, CU_EINVAL, "inconsistent podSet assignments");
		}
		count = assigned_count(psa, ps);
		if (count <= 0)
			continue;
		for (k = 0; k < *n && !merged; k++) {
			merged = can_merge(
			    json_array_get(pss, v[k].index), ps, prc->merge);
			if (merged)
				v[k].count += count;
		}
		if (merged)
			continue;
		v[*n].index = i;
		v[*n].name = ps_name(ps);
		v[*n].count = count;
		(*n)++;
	}
	*out = v;
	return CU_OK;
}

/* ---- new objects ------------------------------------------------------- */

static json_t *owner_ref(const char *api_version, const char *kind,
    const char *name, const char *uid)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion",
	    api_version, "kind", kind, "name", name ? name : "", "uid",
	    uid ? uid : "", "controller", 1, "blockOwnerDeletion", 1);
}

json_t *rec_provreq_owner(
    const json_t *obj, const char *api_version, const char *kind)
{
	const json_t *md = json_object_get(obj, "metadata");

	return owner_ref(api_version, kind, api_json_str(md, "name"),
	    api_json_str(md, "uid"));
}

/* The flavors' nodeLabels into nodeSelector, their tolerations appended
 * (podset.FromAssignment + Merge), and limits copied to missing requests
 * (UseLimitsAsMissingRequestsInPod). */
static int template_apply(json_t *tmpl, const json_t *psa,
    const struct api_resource_flavor *flavors, size_t n_flavors, cu_error *err)
{
	json_t *spec = api_json_obj_child(tmpl, "spec"), *c, *ns, *tols;
	const json_t *fl;
	const char *res;
	static const char *const lists[] = {"initContainers", "containers"};
	size_t i, k;

	if (spec == NULL)
		return rec__nomem(err, "pod template");
	json_object_foreach((json_t *)json_object_get(psa, "flavors"), res, fl)
	{
		const struct api_resource_flavor *rf = NULL;

		for (k = 0; k < n_flavors && rf == NULL; k++)
			if (flavors[k].meta.name != NULL &&
			    json_is_string(fl) &&
			    strcmp(flavors[k].meta.name,
				json_string_value(fl)) == 0)
				rf = &flavors[k];
		if (rf == NULL)
			continue;
		if (rf->spec.node_labels.n > 0) {
			ns = api_json_obj_child(spec, "nodeSelector");
			for (k = 0; ns != NULL && k < rf->spec.node_labels.n;
			     k++)
				json_object_set_new(ns,
				    rf->spec.node_labels.items[k].key,
				    json_string(
					rf->spec.node_labels.items[k].value));
		}
		if (rf->raw != NULL &&
		    json_array_size(json_object_get(
			json_object_get(rf->raw, "spec"), "tolerations")) > 0) {
			tols = json_object_get(spec, "tolerations");
			if (!json_is_array(tols)) {
				tols = json_array();
				json_object_set_new(spec, "tolerations", tols);
			}
			json_array_extend(tols,
			    json_object_get(json_object_get(rf->raw, "spec"),
				"tolerations"));
		}
	}
	for (k = 0; k < 2; k++) {
		json_array_foreach(json_object_get(spec, lists[k]), i, c)
		{
			json_t *r = json_object_get(c, "resources");
			json_t *lim = json_object_get(r, "limits"), *req, *v;
			const char *name;

			if (json_object_size(lim) == 0)
				continue;
			req = api_json_obj_child(r, "requests");
			if (req == NULL)
				return rec__nomem(err, "pod template");
			json_object_foreach(lim, name, v)
			{
				if (json_object_get(req, name) == NULL)
					json_object_set(req, name, v);
			}
		}
	}
	return CU_OK;
}

int rec_provreq_new(const json_t *wl, const char *check,
    const struct rec_prc *prc, int32_t attempt,
    const struct api_resource_flavor *flavors, size_t n_flavors, json_t **pr,
    json_t **templates, cu_error *err)
{
	const json_t *md = json_object_get(wl, "metadata"), *v;
	const char *ns = api_json_str(md, "namespace"),
		   *wname = api_json_str(md, "name"), *k;
	const json_t *pss =
	    json_object_get(json_object_get(wl, "spec"), "podSets");
	struct rec_provreq_podset *sets = NULL;
	json_t *params, *psl, *pts, *t;
	char *name, *ptname;
	size_t i, n = 0;
	int rc;

	*pr = NULL;
	*templates = NULL;
	if (ns == NULL || wname == NULL || check == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "provisioning request: no workload name");
	rc = rec_provreq_podsets(wl, prc, &sets, &n, err);
	if (rc != CU_OK)
		return rc;
	name = rec_provreq_name(wname, check, attempt);
	params =
	    prc->parameters ? json_deep_copy(prc->parameters) : json_object();
	psl = json_array();
	pts = json_array();
	if (name == NULL || params == NULL || psl == NULL || pts == NULL)
		goto nomem;
	/* passProvReqParams: the Workload's provreq.kueue.x-k8s.io/
	 * annotations, prefix dropped. */
	json_object_foreach((json_t *)json_object_get(md, "annotations"), k, v)
	{
		size_t pl = strlen(REC_ANNOTATION_PROVREQ_PREFIX);

		if (strncmp(k, REC_ANNOTATION_PROVREQ_PREFIX, pl) == 0 &&
		    json_is_string(v) && k[pl] != '\0' &&
		    json_object_set(params, k + pl, (json_t *)v) != 0)
			goto nomem;
	}
	for (i = 0; i < n; i++) {
		const json_t *ps = json_array_get(pss, sets[i].index);

		ptname = rec_provreq_template_name(name, sets[i].name);
		t = ptname ? json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, "
				       "s:[o]}, s:O}",
				 "apiVersion", "v1", "kind", "PodTemplate",
				 "metadata", "name", ptname, "namespace", ns,
				 "labels", REC_LABEL_MANAGED, "true",
				 "ownerReferences",
				 rec_provreq_owner(
				     wl, "kueue.x-k8s.io/v1beta2", "Workload"),
				 "template", json_object_get(ps, "template"))
			   : NULL;
		if (t == NULL) {
			cu_free(ptname);
			goto nomem;
		}
		/* the template is a deep copy: json_pack's O is a ref */
		json_object_set_new(t, "template",
		    json_deep_copy(json_object_get(t, "template")));
		rc = template_apply(json_object_get(t, "template"),
		    assignment(wl, sets[i].name), flavors, n_flavors, err);
		if (rc != CU_OK || json_array_append_new(pts, t) != 0 ||
		    json_array_append_new(psl,
			json_pack("{s:{s:s}, s:i}", "podTemplateRef", "name",
			    ptname, "count", (json_int_t)sets[i].count)) != 0) {
			cu_free(ptname);
			if (rc != CU_OK)
				goto fail;
			goto nomem;
		}
		cu_free(ptname);
	}
	*pr = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[o]}, "
			"s:{s:s, s:o, s:o}}",
	    "apiVersion", "autoscaling.x-k8s.io/v1", "kind",
	    "ProvisioningRequest", "metadata", "name", name, "namespace", ns,
	    "labels", REC_LABEL_MANAGED, "true", "ownerReferences",
	    rec_provreq_owner(wl, "kueue.x-k8s.io/v1beta2", "Workload"), "spec",
	    "provisioningClassName", prc->class_name, "parameters", params,
	    "podSets", psl);
	params = psl = NULL;
	if (*pr == NULL)
		goto nomem;
	*templates = pts;
	cu_free(name);
	cu_free(sets);
	return CU_OK;
nomem:
	rc = rec__nomem(err, "provisioning request");
fail:
	cu_free(name);
	cu_free(sets);
	json_decref(params);
	json_decref(psl);
	json_decref(pts);
	return rc;
}

/* ---- conditions -> check state ---------------------------------------- */

static const json_t *pr_cond(const json_t *pr, const char *type)
{
	const json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(pr, "status"), "conditions"), i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

bool rec_provreq_cond_true(const json_t *pr, const char *type)
{
	const char *s = api_json_str(pr_cond(pr, type), "status");

	return s != NULL && strcmp(s, "True") == 0;
}

static const char *cond_msg(const json_t *pr, const char *type)
{
	const char *m = api_json_str(pr_cond(pr, type), "message");

	return m != NULL ? m : "";
}

/* Set key of check c to string s (NULL: removed); true when it changed. */
static bool set_str(json_t *c, const char *key, const char *s)
{
	const char *old = api_json_str(c, key);

	if (s == NULL) {
		if (json_object_get(c, key) == NULL)
			return false;
		json_object_del(c, key);
		return true;
	}
	if (old != NULL && strcmp(old, s) == 0)
		return false;
	json_object_set_new(c, key, json_string(s));
	return true;
}

/* The state (SetAdmissionCheckState: a change of state moves
 * lastTransitionTime). */
static bool set_state(json_t *c, const char *state, const char *now)
{
	if (!set_str(c, "state", state))
		return false;
	json_object_set_new(c, "lastTransitionTime", json_string(now));
	return true;
}

static int32_t retry_count(const json_t *c)
{
	const json_t *v = json_object_get(c, "retryCount");

	return json_is_integer(v) ? (int32_t)json_integer_value(v) : 0;
}

/* UpdateAdmissionCheckRequeueState: requeueAfterSeconds for the
 * (retryCount + 1)-th retry, base * 2^(n-1) capped at max, whole
 * seconds (Kueue's jitter is below a second). */
static void set_requeue_after(json_t *c, const struct rec_prc *prc)
{
	int64_t ns = rec_requeue_backoff_ns(
	    prc->backoff_base_s, prc->backoff_max_s, retry_count(c) + 1);

	json_object_set_new(
	    c, "requeueAfterSeconds", json_integer(ns / 1000000000LL));
}

/* Kueue's podSetUpdates of a Ready check: per pod set of the request,
 * the consume annotations and the nodeSelector values from
 * status.provisioningClassDetails that the config names. */
static json_t *ps_updates(
    const json_t *wl, const json_t *pr, const struct rec_prc *prc)
{
	const json_t *pss =
	    json_object_get(json_object_get(wl, "spec"), "podSets");
	const json_t *rps, *ps, *sel, *details;
	const char *prname =
	    api_json_str(json_object_get(pr, "metadata"), "name");
	const char *cls =
	    api_json_str(json_object_get(pr, "spec"), "provisioningClassName");
	json_t *out = json_array(), *u, *nsel;
	size_t i, k, j;

	details = json_object_get(
	    json_object_get(pr, "status"), "provisioningClassDetails");
	json_array_foreach(
	    json_object_get(json_object_get(pr, "spec"), "podSets"), i, rps)
	{
		const char *ref = api_json_str(
		    json_object_get(rps, "podTemplateRef"), "name");
		const char *name = "";

		json_array_foreach(pss, k, ps)
		{
			char *t = rec_provreq_template_name(
			    prname ? prname : "", ps_name(ps));

			if (t != NULL && ref != NULL && strcmp(t, ref) == 0)
				name = ps_name(ps);
			cu_free(t);
		}
		u = json_pack("{s:s, s:{s:s, s:s}}", "name", name,
		    "annotations", REC_PROVREQ_ANN_CONSUME,
		    prname ? prname : "", REC_PROVREQ_ANN_CLASS,
		    cls ? cls : "");
		if (u == NULL || out == NULL) {
			json_decref(u);
			json_decref(out);
			return NULL;
		}
		if (prc->node_selector != NULL) {
			nsel = json_object();
			json_array_foreach(prc->node_selector, j, sel)
			{
				const json_t *v = json_object_get(details,
				    api_json_str(sel,
					"valueFromProvisioningClassDetail"));

				if (json_is_string(v))
					json_object_set(nsel,
					    api_json_str(sel, "key"),
					    (json_t *)v);
			}
			/* an empty map is left out (omitempty) */
			if (json_object_size(nsel) > 0)
				json_object_set_new(u, "nodeSelector", nsel);
			else
				json_decref(nsel);
		}
		json_array_append_new(out, u);
	}
	return out;
}

static bool admitted(const json_t *wl)
{
	const json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(wl, "status"), "conditions"), i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *s = api_json_str(c, "status");

		if (t != NULL && strcmp(t, "Admitted") == 0)
			return s != NULL && strcmp(s, "True") == 0;
	}
	return false;
}

static bool active_and_running(const json_t *wl)
{
	const json_t *a =
	    json_object_get(json_object_get(wl, "spec"), "active");
	const json_t *c;
	size_t i;

	if (json_is_false(a))
		return false;
	json_array_foreach(
	    json_object_get(json_object_get(wl, "status"), "conditions"), i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *s = api_json_str(c, "status");

		if (t != NULL && strcmp(t, "Finished") == 0 && s != NULL &&
		    strcmp(s, "True") == 0)
			return false;
	}
	return true;
}

/* Retry (attempts left) or Rejected for a Failed or BookingExpired
 * request; word: "failure" or "booking expired". */
static bool retry_or_reject(json_t *c, const json_t *pr, const char *check,
    const struct rec_prc *prc, const char *wlname, const char *type,
    const char *word, const char *now)
{
	const char *prname =
	    api_json_str(json_object_get(pr, "metadata"), "name");
	int32_t attempt = rec_provreq_attempt(prname, wlname, check);
	bool changed = false;
	char *m;

	if (attempt < 0)
		attempt = 1;
	if (attempt <= prc->backoff_limit_count) {
		m = cu_asprintf(
		    "Retrying after %s: %s", word, cond_msg(pr, type));
		changed = m != NULL && set_str(c, "message", m);
		cu_free(m);
		if (attempt > retry_count(c)) {
			changed = true;
			set_state(c, "Retry", now);
			set_requeue_after(c, prc);
		}
		return changed;
	}
	set_state(c, "Rejected", now);
	set_str(c, "message", cond_msg(pr, type));
	return true;
}

bool rec_provreq_sync_state(json_t *check, const json_t *wl,
    const struct rec_prc *prc, bool needed, const json_t *pr, const char *now)
{
	const char *name = api_json_str(check, "name");
	const char *wlname =
	    api_json_str(json_object_get(wl, "metadata"), "name");
	bool changed = false;
	json_t *u;

	if (name == NULL || wlname == NULL)
		return false;
	if (prc == NULL) {
		changed |= set_state(check, "Pending", now);
		changed |= set_str(check, "message", REC_PROVREQ_MSG_INACTIVE);
		return changed;
	}
	if (!needed) {
		if (!set_state(check, "Ready", now))
			return false;
		set_str(check, "message", REC_PROVREQ_MSG_NOT_NEEDED);
		json_object_del(check, "podSetUpdates");
		return true;
	}
	if (pr == NULL)
		return false;
	if (rec_provreq_cond_true(pr, "Failed"))
		return retry_or_reject(
		    check, pr, name, prc, wlname, "Failed", "failure", now);
	if (rec_provreq_cond_true(pr, "CapacityRevoked")) {
		if (active_and_running(wl)) {
			changed |= set_state(check, "Rejected", now);
			changed |= set_str(
			    check, "message", cond_msg(pr, "CapacityRevoked"));
		}
		return changed;
	}
	if (rec_provreq_cond_true(pr, "BookingExpired")) {
		if (admitted(wl))
			return false;
		return retry_or_reject(check, pr, name, prc, wlname,
		    "BookingExpired", "booking expired", now);
	}
	if (rec_provreq_cond_true(pr, "Provisioned")) {
		if (!set_state(check, "Ready", now))
			return false;
		u = ps_updates(wl, pr, prc);
		if (u != NULL)
			json_object_set_new(check, "podSetUpdates", u);
		set_str(check, "message", cond_msg(pr, "Provisioned"));
		return true;
	}
	if (rec_provreq_cond_true(pr, "Accepted")) {
		if (pr_cond(pr, "Provisioned") != NULL) {
			changed |= set_str(
			    check, "message", cond_msg(pr, "Provisioned"));
			changed |= set_state(check, "Pending", now);
		}
		return changed;
	}
	changed |= set_str(check, "message", "");
	changed |= set_state(check, "Pending", now);
	return changed;
}

bool rec_provreq_wants_new(
    const json_t *check, const json_t *wl, const json_t *pr, int32_t *attempt)
{
	const char *name = api_json_str(check, "name");
	const char *state = api_json_str(check, "state");
	const char *wlname =
	    api_json_str(json_object_get(wl, "metadata"), "name");
	int32_t a;

	*attempt = retry_count(check) + 1;
	if (state != NULL && strcmp(state, "Ready") == 0)
		return false;
	if (pr == NULL)
		return true;
	if ((rec_provreq_cond_true(pr, "Failed") ||
		(rec_provreq_cond_true(pr, "BookingExpired") &&
		    !admitted(wl))) &&
	    state != NULL && strcmp(state, "Pending") == 0) {
		a = rec_provreq_attempt(
		    api_json_str(json_object_get(pr, "metadata"), "name"),
		    wlname ? wlname : "", name ? name : "");
		*attempt = (a < 0 ? 1 : a) + 1;
		return true;
	}
	return false;
}

bool rec_provreq_synced_with(const json_t *pr, const struct rec_prc *prc)
{
	const json_t *spec = json_object_get(pr, "spec");
	const json_t *params = json_object_get(spec, "parameters"), *v;
	const char *cls = api_json_str(spec, "provisioningClassName"), *k;

	if (cls == NULL || strcmp(cls, prc->class_name) != 0)
		return false;
	json_object_foreach((json_t *)prc->parameters, k, v)
	{
		if (!json_equal(json_object_get(params, k), v))
			return false;
	}
	return true;
}

char *rec_provreq_update_message(
    const char *check, const char *from, const char *to, const char *msg)
{
	return msg != NULL && *msg != '\0'
		   ? cu_asprintf("Admission check %s updated state from %s "
				 "to %s with message: %s",
			 check, from, to, msg)
		   : cu_asprintf(
			 "Admission check %s updated state from %s to %s",
			 check, from, to);
}

int64_t rec_acheck_requeue_at(const struct api_workload *wl)
{
	int64_t best = 0, at;
	size_t i;

	for (i = 0; i < wl->status.n_admission_checks; i++) {
		const struct api_admission_check_state *c =
		    &wl->status.admission_checks[i];

		if (c->state != API_CHECK_RETRY ||
		    !c->has_requeue_after_seconds || !c->has_last_transition ||
		    c->last_transition_ns == 0)
			continue;
		at = c->last_transition_ns +
		     (int64_t)c->requeue_after_seconds * 1000000000LL;
		if (at > best)
			best = at;
	}
	return best;
}

int rec_wl_status_check_requeue_at(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	int64_t at = rec_acheck_requeue_at(wl);
	char ts[CU_TIME_RFC3339_LEN];
	json_t *from = NULL, *to, *rs;
	int rc;

	*patch = NULL;
	if (at <= now_ns || (wl->status.has_requeue_state &&
				wl->status.requeue_state.has_requeue_at &&
				wl->status.requeue_state.requeue_at_ns >= at))
		return CU_OK;
	rc = api_workload_encode(&from, wl, err);
	if (rc != CU_OK)
		return rc;
	to = json_deep_copy(from);
	rs = to != NULL ? api_json_obj_child(
			      api_json_obj_child(to, "status"), "requeueState")
			: NULL;
	cu_time_format_rfc3339(at, ts);
	if (rs == NULL ||
	    json_object_set_new(rs, "requeueAt", json_string(ts)) != 0)
		rc = rec__nomem(err, "workload status");
	else
		rc = rec__strict_patch(from, to, patch, err);
	json_decref(from);
	json_decref(to);
	return rc;
}

int rec_provreq_status_patch(
    const json_t *wl, const json_t *checks, json_t **patch, cu_error *err)
{
	json_t *to = json_deep_copy(wl), *st;
	int rc;

	*patch = NULL;
	st = to != NULL ? api_json_obj_child(to, "status") : NULL;
	if (st == NULL ||
	    json_object_set(st, "admissionChecks", (json_t *)checks) != 0) {
		json_decref(to);
		return rec__nomem(err, "workload status");
	}
	rc = rec__strict_patch(wl, to, patch, err);
	json_decref(to);
	return rc;
}
