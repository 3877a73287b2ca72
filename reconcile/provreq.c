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

#include "api/wire.h"
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

static int32_t ps_count(const struct api_podset *ps)
{
	return ps->has_count ? ps->count : 1;
}

static const struct api_podset_assignment *assignment(
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

static const char *ps_name(const struct api_podset *ps)
{
	return ps->name != NULL ? ps->name : "main";
}

/* Does pod set ps count for the check: pods, and one of managed used
 * (none: all)? */
static bool ps_required(const struct api_podset *ps, const struct rec_prc *prc)
{
	return ps_count(ps) > 0 && (json_array_size(prc->managed) == 0 ||
				       pod_uses(ps->template, prc->managed));
}

static int32_t assigned_count(
    const struct api_podset_assignment *psa, const struct api_podset *ps)
{
	return psa->has_count ? psa->count : ps_count(ps);
}

int rec_provreq_needed(const struct api_workload *wl, const struct rec_prc *prc,
    bool *needed, cu_error *err)
{
	const struct api_podset_assignment *psa;
	size_t i;

	*needed = false;
	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];

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

/* The pod templates stay JSON in the model (api_podset.template): what
 * is compared here is the template itself. */
static bool can_merge(const struct api_podset *p1, const struct api_podset *p2,
    enum rec_prc_merge policy)
{
	const json_t *t1 = p1->template, *t2 = p2->template;
	const json_t *s1 = json_object_get(t1, "spec"),
		     *s2 = json_object_get(t2, "spec");
	static const char *const same[] = {"resources", "nodeSelector",
	    "tolerations", "affinity", "resourceClaims"};
	size_t i;

	if (policy == REC_PRC_MERGE_TEMPLATES)
		return (t1 == NULL && t2 == NULL) ||
		       (t1 && t2 && json_equal(t1, t2));
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

int rec_provreq_podsets(const struct api_workload *wl,
    const struct rec_prc *prc, struct rec_provreq_podset **out, size_t *n,
    cu_error *err)
{
	const struct api_podset_assignment *psa;
	struct rec_provreq_podset *v;
	size_t i, k;

	*out = NULL;
	*n = 0;
	v = cu_calloc(wl->spec.n_pod_sets + 1, sizeof(*v));
	if (v == NULL)
		return rec__nomem(err, "provisioning request");
	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
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
			    &wl->spec.pod_sets[v[k].index], ps, prc->merge);
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

static json_t *wl_owner(const struct api_workload *wl)
{
	return owner_ref(
	    "kueue.x-k8s.io/v1beta2", "Workload", wl->meta.name, wl->meta.uid);
}

/* The flavors' nodeLabels into nodeSelector, their tolerations appended
 * (podset.FromAssignment + Merge), and limits copied to missing requests
 * (UseLimitsAsMissingRequestsInPod). */
static int template_apply(json_t *tmpl, const struct api_podset_assignment *psa,
    const struct api_resource_flavor *flavors, size_t n_flavors, cu_error *err)
{
	json_t *spec = api_json_obj_child(tmpl, "spec"), *c, *ns, *tols, *add;
	static const char *const lists[] = {"initContainers", "containers"};
	size_t i, k, f;
	int rc;

	if (spec == NULL)
		return rec__nomem(err, "pod template");
	for (f = 0; psa != NULL && f < psa->flavors.n; f++) {
		const char *fl = psa->flavors.items[f].value;
		const struct api_resource_flavor *rf = NULL;

		for (k = 0; k < n_flavors && rf == NULL; k++)
			if (flavors[k].meta.name != NULL && fl != NULL &&
			    strcmp(flavors[k].meta.name, fl) == 0)
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
		if (rf->spec.n_tolerations > 0) {
			rc = api_tolerations_encode(rf->spec.tolerations,
			    rf->spec.n_tolerations, &add, err);
			if (rc != CU_OK)
				return rc;
			tols = json_object_get(spec, "tolerations");
			if (!json_is_array(tols)) {
				tols = json_array();
				json_object_set_new(spec, "tolerations", tols);
			}
			json_array_extend(tols, add);
			json_decref(add);
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

int rec_provreq_new(const struct api_workload *wl, const char *check,
    const struct rec_prc *prc, int32_t attempt,
    const struct api_resource_flavor *flavors, size_t n_flavors, json_t **pr,
    json_t **templates, cu_error *err)
{
	const char *ns = wl->meta.namespace_, *wname = wl->meta.name;
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
	for (i = 0; i < wl->meta.annotations.n; i++) {
		const char *k = wl->meta.annotations.items[i].key;
		size_t pl = strlen(REC_ANNOTATION_PROVREQ_PREFIX);

		if (strncmp(k, REC_ANNOTATION_PROVREQ_PREFIX, pl) == 0 &&
		    k[pl] != '\0' &&
		    json_object_set_new(params, k + pl,
			json_string(wl->meta.annotations.items[i].value)) != 0)
			goto nomem;
	}
	for (i = 0; i < n; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[sets[i].index];

		ptname = rec_provreq_template_name(name, sets[i].name);
		t = ptname ? json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, "
				       "s:[o]}, s:O}",
				 "apiVersion", "v1", "kind", "PodTemplate",
				 "metadata", "name", ptname, "namespace", ns,
				 "labels", REC_LABEL_MANAGED, "true",
				 "ownerReferences", wl_owner(wl), "template",
				 ps->template)
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
	    wl_owner(wl), "spec", "provisioningClassName", prc->class_name,
	    "parameters", params, "podSets", psl);
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

static bool cond_true(const struct api_provreq *pr, const char *type)
{
	return api_conditions_true(&pr->status.conditions, type);
}

static const char *cond_msg(const struct api_provreq *pr, const char *type)
{
	const struct api_condition *c =
	    api_conditions_find(&pr->status.conditions, type);

	return c != NULL && c->message != NULL ? c->message : "";
}

/* The check's message set to s [borrowed, copied]; true when it changed
 * (out of memory: left as it was). */
static bool set_msg(struct api_admission_check_state *c, const char *s)
{
	char *m;

	if (c->message != NULL && strcmp(c->message, s) == 0)
		return false;
	m = cu_strdup(s);
	if (m == NULL)
		return false;
	cu_free(c->message);
	c->message = m;
	return true;
}

/* The state (SetAdmissionCheckState: a change of state moves
 * lastTransitionTime). */
static bool set_state(struct api_admission_check_state *c,
    enum api_check_state state, int64_t now_ns)
{
	if (c->state == state)
		return false;
	c->state = state;
	c->has_last_transition = true;
	c->last_transition_ns = now_ns;
	return true;
}

static int32_t retry_count(const struct api_admission_check_state *c)
{
	return c->has_retry_count ? c->retry_count : 0;
}

/* UpdateAdmissionCheckRequeueState: requeueAfterSeconds for the
 * (retryCount + 1)-th retry, base * 2^(n-1) capped at max, whole
 * seconds (Kueue's jitter is below a second). */
static void set_requeue_after(
    struct api_admission_check_state *c, const struct rec_prc *prc)
{
	int64_t ns = rec_requeue_backoff_ns(
	    prc->backoff_base_s, prc->backoff_max_s, retry_count(c) + 1);

	c->has_requeue_after_seconds = true;
	c->requeue_after_seconds = (int32_t)(ns / 1000000000LL);
}

static void drop_updates(struct api_admission_check_state *c)
{
	size_t i;

	for (i = 0; i < c->n_pod_set_updates; i++)
		api_podset_update_dispose(&c->pod_set_updates[i]);
	cu_free(c->pod_set_updates);
	c->pod_set_updates = NULL;
	c->n_pod_set_updates = 0;
}

/* The Workload pod set whose template request pr names ref, or "". */
static const char *update_podset(
    const struct api_workload *wl, const char *prname, const char *ref)
{
	const char *name = "";
	size_t k;

	for (k = 0; ref != NULL && k < wl->spec.n_pod_sets; k++) {
		const char *ps = wl->spec.pod_sets[k].name;
		char *t = rec_provreq_template_name(prname, ps ? ps : "");

		if (t != NULL && strcmp(t, ref) == 0)
			name = ps;
		cu_free(t);
	}
	return name;
}

/* One podSetUpdate u of request pr: the consume annotations and the
 * config's nodeSelector values found in provisioningClassDetails. */
static int fill_update(struct api_podset_update *u, const char *name,
    const struct api_provreq *pr, const struct rec_prc *prc)
{
	const char *prname = pr->meta.name ? pr->meta.name : "";
	const char *cls = pr->spec.class_name ? pr->spec.class_name : "";
	const json_t *sel;
	size_t j;

	u->name = cu_strdup(name);
	if (u->name == NULL ||
	    api_strmap_set(&u->annotations, REC_PROVREQ_ANN_CONSUME, prname,
		NULL) != CU_OK ||
	    api_strmap_set(&u->annotations, REC_PROVREQ_ANN_CLASS, cls, NULL) !=
		CU_OK)
		return CU_ENOMEM;
	json_array_foreach(prc->node_selector, j, sel)
	{
		const char *key = api_json_str(sel, "key");
		const char *v = api_strmap_get(&pr->status.class_details,
		    api_json_str(sel, "valueFromProvisioningClassDetail"));

		if (key != NULL && v != NULL &&
		    api_strmap_set(&u->node_selector, key, v, NULL) != CU_OK)
			return CU_ENOMEM;
	}
	return CU_OK;
}

/* Kueue's podSetUpdates of a Ready check: one per pod set of the
 * request. The check's updates are replaced; out of memory: dropped. */
static void set_updates(struct api_admission_check_state *c,
    const struct api_workload *wl, const struct api_provreq *pr,
    const struct rec_prc *prc)
{
	struct api_podset_update *u;
	size_t i, n = pr->spec.n_podsets;

	drop_updates(c);
	u = cu_calloc(n + 1, sizeof(*u));
	if (u == NULL)
		return;
	c->pod_set_updates = u;
	c->n_pod_set_updates = n;
	for (i = 0; i < n; i++) {
		if (fill_update(&u[i],
			update_podset(wl, pr->meta.name ? pr->meta.name : "",
			    pr->spec.podsets[i].template_name),
			pr, prc) != CU_OK) {
			drop_updates(c);
			return;
		}
	}
}

static bool admitted(const struct api_workload *wl)
{
	return api_conditions_true(&wl->status.conditions, "Admitted");
}

static bool active_and_running(const struct api_workload *wl)
{
	if (wl->spec.has_active && !wl->spec.active)
		return false;
	return !api_conditions_true(&wl->status.conditions, "Finished");
}

/* Retry (attempts left) or Rejected for a Failed or BookingExpired
 * request; word: "failure" or "booking expired". */
static bool retry_or_reject(struct api_admission_check_state *c,
    const struct api_provreq *pr, const struct rec_prc *prc, const char *wlname,
    const char *type, const char *word, int64_t now_ns)
{
	int32_t attempt = rec_provreq_attempt(
	    pr->meta.name ? pr->meta.name : "", wlname, c->name);
	bool changed = false;
	char *m;

	if (attempt < 0)
		attempt = 1;
	if (attempt <= prc->backoff_limit_count) {
		m = cu_asprintf(
		    "Retrying after %s: %s", word, cond_msg(pr, type));
		changed = m != NULL && set_msg(c, m);
		cu_free(m);
		if (attempt > retry_count(c)) {
			changed = true;
			set_state(c, API_CHECK_RETRY, now_ns);
			set_requeue_after(c, prc);
		}
		return changed;
	}
	set_state(c, API_CHECK_REJECTED, now_ns);
	set_msg(c, cond_msg(pr, type));
	return true;
}

bool rec_provreq_sync_state(struct api_admission_check_state *check,
    const struct api_workload *wl, const struct rec_prc *prc, bool needed,
    const struct api_provreq *pr, int64_t now_ns)
{
	const char *wlname = wl->meta.name;
	bool changed = false;

	if (check->name == NULL || wlname == NULL)
		return false;
	if (prc == NULL) {
		changed |= set_state(check, API_CHECK_PENDING, now_ns);
		changed |= set_msg(check, REC_PROVREQ_MSG_INACTIVE);
		return changed;
	}
	if (!needed) {
		if (!set_state(check, API_CHECK_READY, now_ns))
			return false;
		set_msg(check, REC_PROVREQ_MSG_NOT_NEEDED);
		drop_updates(check);
		return true;
	}
	if (pr == NULL)
		return false;
	if (cond_true(pr, "Failed"))
		return retry_or_reject(
		    check, pr, prc, wlname, "Failed", "failure", now_ns);
	if (cond_true(pr, "CapacityRevoked")) {
		if (active_and_running(wl)) {
			changed |= set_state(check, API_CHECK_REJECTED, now_ns);
			changed |=
			    set_msg(check, cond_msg(pr, "CapacityRevoked"));
		}
		return changed;
	}
	if (cond_true(pr, "BookingExpired")) {
		if (admitted(wl))
			return false;
		return retry_or_reject(check, pr, prc, wlname, "BookingExpired",
		    "booking expired", now_ns);
	}
	if (cond_true(pr, "Provisioned")) {
		if (!set_state(check, API_CHECK_READY, now_ns))
			return false;
		set_updates(check, wl, pr, prc);
		set_msg(check, cond_msg(pr, "Provisioned"));
		return true;
	}
	if (cond_true(pr, "Accepted")) {
		if (api_conditions_find(
			&pr->status.conditions, "Provisioned") != NULL) {
			changed |= set_msg(check, cond_msg(pr, "Provisioned"));
			changed |= set_state(check, API_CHECK_PENDING, now_ns);
		}
		return changed;
	}
	changed |= set_msg(check, "");
	changed |= set_state(check, API_CHECK_PENDING, now_ns);
	return changed;
}

bool rec_provreq_wants_new(const struct api_admission_check_state *check,
    const struct api_workload *wl, const struct api_provreq *pr,
    int32_t *attempt)
{
	int32_t a;

	*attempt = retry_count(check) + 1;
	if (check->state == API_CHECK_READY)
		return false;
	if (pr == NULL)
		return true;
	if ((cond_true(pr, "Failed") ||
		(cond_true(pr, "BookingExpired") && !admitted(wl))) &&
	    check->state == API_CHECK_PENDING) {
		a = rec_provreq_attempt(pr->meta.name ? pr->meta.name : "",
		    wl->meta.name ? wl->meta.name : "",
		    check->name ? check->name : "");
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

int rec_provreq_status_patch(const json_t *from, const struct api_workload *wl,
    json_t **patch, cu_error *err)
{
	json_t *to = NULL;
	int rc;

	*patch = NULL;
	rc = api_workload_encode(&to, wl, err);
	if (rc != CU_OK)
		return rc;
	rc = rec__strict_patch(from, to, patch, err);
	json_decref(to);
	return rc;
}
