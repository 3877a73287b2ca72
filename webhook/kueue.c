/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/kueue.c - the webhooks of the Kueue kinds
 * (kueue.x-k8s.io/v1beta2): validation of ClusterQueue, Cohort,
 * LocalQueue, ResourceFlavor, Workload and WorkloadPriorityClass on
 * CREATE/UPDATE with Kueue's rules and messages (pkg/webhooks and the
 * CRDs' CEL rules), run in the causal order documented in
 * webhook/webhook.h; and Kueue's defaulting of the resource-in-use
 * finalizer on ClusterQueues and ResourceFlavors (opt-in).
 */
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/model.h"

#define MAX_GROUPS 16
#define MAX_COVERED 64
#define MAX_FLAVORS 64
#define MAX_TOTAL_FLAVORS 256
#define MAX_TOTAL_COVERED 256
#define MAX_PAIRS 512
#define MAX_RF_ITEMS 8
#define MAX_WPC_DESCRIPTION 2048

#define NEGATIVE "must be greater than or equal to 0"

/* Path buffers: the deepest is
 * "spec.resourceGroups[15].flavors[63].resources[63].borrowingLimit". */
#define PATH_LEN 192
#define SHORT_PATH_LEN 96 /* a prefix that gets a suffix */

/* A model decoder's verdict in webhook terms: a missing or invalid value
 * is a rule failure (403), a wrong JSON type stays malformed (400). */
static int decoded(int rc)
{
	return rc == CU_EINVAL ? CU_EDENIED : rc;
}

/* o[key] unless absent or JSON null. */
static const json_t *member(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

static int want_type(
    const json_t *v, json_type t, const char *path, cu_error *err)
{
	if (v == NULL || json_typeof(v) == t)
		return CU_OK;
	return cu_error_set(err, CU_EPARSE,
	    "%s: Invalid type: expected %s, got %s", path,
	    api_json_type_word(t, false), api_json_type_name(v, false));
}

/* The spec object [borrowed] or NULL. */
static int spec_of(const json_t *obj, const json_t **spec, cu_error *err)
{
	*spec = member(obj, "spec");
	return want_type(*spec, JSON_OBJECT, "spec", err);
}

/* A reference to another object: a DNS-1123 subdomain when set. */
static int ref_field(const json_t *spec, const char *key, const char *path,
    const char **out, cu_error *err)
{
	int rc = api_json_get_str(spec, key, path, "", out, err);

	if (rc != CU_OK || (*out)[0] == '\0')
		return rc;
	return wh__check_dns1123_subdomain(*out, path, err);
}

static const char *qstr(
    const struct api_quantity *q, char buf[API_QUANTITY_STR_MAX])
{
	api_quantity_format(q, buf, API_QUANTITY_STR_MAX);
	return buf;
}

static const char *name_of(const struct wh_ctx *c)
{
	const json_t *n = json_object_get(
	    json_object_get(c->req->object, "metadata"), "name");

	if (json_is_string(n))
		return json_string_value(n);
	return c->req->name;
}

/* Old object's string at spec[key], "" when absent or not a string. */
static const char *old_spec_str(const struct wh_ctx *c, const char *key)
{
	const json_t *v =
	    json_object_get(json_object_get(c->req->old_object, "spec"), key);

	return json_is_string(v) ? json_string_value(v) : "";
}

static bool same(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* Add s to the set (a JSON object); *dup when it was there already. */
static int set_add(json_t *set, const char *s, bool *dup, cu_error *err)
{
	*dup = json_object_get(set, s) != NULL;
	if (*dup)
		return CU_OK;
	if (json_object_set_new(set, s, json_true()) != 0)
		return cu_error_set(err, CU_ENOMEM, "webhook: set");
	return CU_OK;
}

/* ---- resource groups (ClusterQueue, Cohort) -------------------------- */

/* Item count of an array: 1..max, else a field error. */
static int check_count(
    const json_t *arr, const char *path, size_t max, cu_error *err)
{
	size_t n;

	if (arr == NULL)
		return cu_error_set(
		    err, CU_EDENIED, "%s: Required value", path);
	if (!json_is_array(arr))
		return want_type(arr, JSON_ARRAY, path, err);
	n = json_array_size(arr);
	if (n == 0)
		return cu_error_set(err, CU_EDENIED,
		    "%s: Invalid value: 0: must have at least 1 items", path);
	if (n > max)
		return cu_error_set(err, CU_EDENIED,
		    "%s: Too many: %zu: must have at most %zu items", path, n,
		    max);
	return CU_OK;
}

static int covered_resources(
    const json_t *cr, const char *gpath, json_t *seen, cu_error *err)
{
	char path[PATH_LEN], q[WH_QUOTE_MAX];
	size_t j;
	bool dup;
	int rc;

	for (j = 0; j < json_array_size(cr); j++) {
		const json_t *v = json_array_get(cr, j);

		snprintf(
		    path, sizeof(path), "%s.coveredResources[%zu]", gpath, j);
		if ((rc = want_type(v, JSON_STRING, path, err)) != CU_OK)
			return rc;
		if (api_validate_label_key(json_string_value(v), path, err) !=
		    CU_OK)
			return CU_EDENIED;
		if ((rc = set_add(seen, json_string_value(v), &dup, err)) !=
		    CU_OK)
			return rc;
		if (dup)
			return cu_error_set(err, CU_EDENIED,
			    "%s: Duplicate value: %s", path,
			    wh__quote(q, json_string_value(v)));
	}
	return CU_OK;
}

/* Step 4: sizes and everything a group's flavors derive from. */
static int groups_structure_loop(const json_t *rgs, json_t *seen, cu_error *err)
{
	char gpath[SHORT_PATH_LEN], path[PATH_LEN];
	size_t i, nf_total = 0, nc_total = 0;
	int rc;

	for (i = 0; i < json_array_size(rgs); i++) {
		const json_t *g = json_array_get(rgs, i), *cr, *fl;
		size_t nc, nf;

		snprintf(gpath, sizeof(gpath), "spec.resourceGroups[%zu]", i);
		if ((rc = want_type(g, JSON_OBJECT, gpath, err)) != CU_OK)
			return rc;
		cr = member(g, "coveredResources");
		snprintf(path, sizeof(path), "%s.coveredResources", gpath);
		if ((rc = check_count(cr, path, MAX_COVERED, err)) != CU_OK ||
		    (rc = covered_resources(cr, gpath, seen, err)) != CU_OK)
			return rc;
		fl = member(g, "flavors");
		snprintf(path, sizeof(path), "%s.flavors", gpath);
		if ((rc = check_count(fl, path, MAX_FLAVORS, err)) != CU_OK)
			return rc;
		nc = json_array_size(cr);
		nf = json_array_size(fl);
		if (nc * nf > MAX_PAIRS)
			return cu_error_set(err, CU_EDENIED,
			    "%s: Invalid value: %zu: number of "
			    "flavor-resource combinations in a resourceGroup "
			    "must be ≤ %d, got %zu",
			    gpath, nc * nf, MAX_PAIRS, nc * nf);
		nc_total += nc;
		nf_total += nf;
	}
	if (nf_total > MAX_TOTAL_FLAVORS)
		return cu_error_set(err, CU_EDENIED,
		    "spec.resourceGroups: Invalid value: %zu: total number of "
		    "flavors across all resourceGroups must be ≤ %d, got %zu",
		    nf_total, MAX_TOTAL_FLAVORS, nf_total);
	if (nc_total > MAX_TOTAL_COVERED)
		return cu_error_set(err, CU_EDENIED,
		    "spec.resourceGroups: Invalid value: %zu: total number of "
		    "covered resources across all resourceGroups must be ≤ "
		    "%d, got %zu",
		    nc_total, MAX_TOTAL_COVERED, nc_total);
	return CU_OK;
}

static int groups_structure(const json_t *spec, cu_error *err)
{
	const json_t *rgs = member(spec, "resourceGroups");
	json_t *seen;
	int rc;

	if (rgs == NULL)
		return CU_OK;
	if ((rc = want_type(rgs, JSON_ARRAY, "spec.resourceGroups", err)) !=
	    CU_OK)
		return rc;
	if (json_array_size(rgs) > MAX_GROUPS)
		return cu_error_set(err, CU_EDENIED,
		    "spec.resourceGroups: Too many: %zu: must have at most %d "
		    "items",
		    json_array_size(rgs), MAX_GROUPS);
	if ((seen = json_object()) == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook: set");
	rc = groups_structure_loop(rgs, seen, err);
	json_decref(seen);
	return rc;
}

/* Step 6 for one resource of a flavor. */
static int resource_quota(const struct api_resource_quota *r,
    const char *covered, const char *rpath, bool has_parent, bool cohort,
    cu_error *err)
{
	char q[WH_QUOTE_MAX], a[API_QUANTITY_STR_MAX];
	const char *none = cohort ? "parent" : "cohort";

	if (!same(r->name, covered))
		return cu_error_set(err, CU_EDENIED,
		    "%s.name: Invalid value: %s: must match the name in "
		    "coveredResources",
		    rpath, wh__quote(q, r->name));
	if (r->nominal_quota.milli < 0)
		return cu_error_set(err, CU_EDENIED,
		    "%s.nominalQuota: Invalid value: \"%s\": " NEGATIVE, rpath,
		    qstr(&r->nominal_quota, a));
	if (r->has_borrowing_limit) {
		if (!has_parent)
			return cu_error_set(err, CU_EDENIED,
			    "%s.borrowingLimit: Invalid value: \"%s\": must be "
			    "nil when %s is empty",
			    rpath, qstr(&r->borrowing_limit, a), none);
		if (r->borrowing_limit.milli < 0)
			return cu_error_set(err, CU_EDENIED,
			    "%s.borrowingLimit: Invalid value: "
			    "\"%s\": " NEGATIVE,
			    rpath, qstr(&r->borrowing_limit, a));
	}
	if (r->has_lending_limit) {
		if (!has_parent)
			return cu_error_set(err, CU_EDENIED,
			    "%s.lendingLimit: Invalid value: \"%s\": must be "
			    "nil when %s is empty",
			    rpath, qstr(&r->lending_limit, a), none);
		if (r->lending_limit.milli < 0)
			return cu_error_set(err, CU_EDENIED,
			    "%s.lendingLimit: Invalid value: \"%s\": " NEGATIVE,
			    rpath, qstr(&r->lending_limit, a));
		if (!cohort &&
		    api_quantity_cmp(&r->lending_limit, &r->nominal_quota) > 0)
			return cu_error_set(err, CU_EDENIED,
			    "%s.lendingLimit: Invalid value: \"%s\": must be "
			    "less than or equal to the nominalQuota",
			    rpath, qstr(&r->lending_limit, a));
	}
	return CU_OK;
}

static int groups_items_loop(const struct api_resource_groups *rg,
    bool has_parent, bool cohort, json_t *seen, cu_error *err)
{
	char fpath[SHORT_PATH_LEN], path[PATH_LEN], q[WH_QUOTE_MAX];
	size_t i, j, k;
	bool dup;
	int rc;

	for (i = 0; i < rg->n; i++) {
		const struct api_resource_group *g = &rg->items[i];

		for (j = 0; j < g->n_flavors; j++) {
			const struct api_flavor_quotas *f = &g->flavors[j];

			snprintf(fpath, sizeof(fpath),
			    "spec.resourceGroups[%zu].flavors[%zu]", i, j);
			snprintf(path, sizeof(path), "%s.name", fpath);
			if ((rc = wh__check_dns1123_subdomain(
				 f->name, path, err)) != CU_OK ||
			    (rc = set_add(seen, f->name, &dup, err)) != CU_OK)
				return rc;
			if (dup)
				return cu_error_set(err, CU_EDENIED,
				    "%s: Duplicate value: %s", path,
				    wh__quote(q, f->name));
			for (k = 0;
			     k < f->n_resources && k < g->covered_resources.n;
			     k++) {
				snprintf(path, sizeof(path),
				    "%s.resources[%zu]", fpath, k);
				rc = resource_quota(&f->resources[k],
				    g->covered_resources.items[k], path,
				    has_parent, cohort, err);
				if (rc != CU_OK)
					return rc;
			}
		}
	}
	return CU_OK;
}

/* Step 6: flavor-level rules on the decoded groups. */
static int groups_items(const struct api_resource_groups *rg, bool has_parent,
    bool cohort, cu_error *err)
{
	json_t *seen = json_object();
	int rc;

	if (seen == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook: set");
	rc = groups_items_loop(rg, has_parent, cohort, seen, err);
	json_decref(seen);
	return rc;
}

static int fair_weight(bool has, const struct api_quantity *w, cu_error *err)
{
	char a[API_QUANTITY_STR_MAX];

	if (has && w->milli < 0)
		return cu_error_set(err, CU_EDENIED,
		    "spec.fairSharing: Invalid value: \"%s\": " NEGATIVE,
		    qstr(w, a));
	return CU_OK;
}

/* ---- ClusterQueue ---------------------------------------------------- */

static bool cq_has_flavor(const struct api_cluster_queue *cq, const char *f)
{
	const struct api_resource_groups *rg = &cq->spec.resource_groups;
	size_t i, j;

	for (i = 0; i < rg->n; i++)
		for (j = 0; j < rg->items[i].n_flavors; j++)
			if (same(rg->items[i].flavors[j].name, f))
				return true;
	return false;
}

static void cq_flavor_list(
    const struct api_cluster_queue *cq, char *buf, size_t n)
{
	const struct api_resource_groups *rg = &cq->spec.resource_groups;
	size_t i, j, len = 0;

	buf[0] = '\0';
	for (i = 0; i < rg->n; i++) {
		for (j = 0; j < rg->items[i].n_flavors && len + 8 < n; j++) {
			char q[WH_QUOTE_MAX];
			int w = snprintf(buf + len, n - len, "%s%s",
			    len ? ", " : "",
			    wh__quote(q, rg->items[i].flavors[j].name));

			if (w < 0 || (size_t)w >= n - len) {
				snprintf(buf + len, n - len, "...");
				return;
			}
			len += (size_t)w;
		}
	}
}

/* Step 7: the rules that read the spec as a whole. */
static int cq_spec_rules(const struct api_cluster_queue *cq, cu_error *err)
{
	const struct api_cluster_queue_spec *s = &cq->spec;
	char q[WH_QUOTE_MAX], list[200];
	size_t i, j;
	int rc;

	if (s->has_preemption &&
	    (s->preemption.reclaim_within_cohort == API_PREEMPT_UNSET ||
		s->preemption.reclaim_within_cohort == API_PREEMPT_NEVER) &&
	    s->preemption.has_borrow_within_cohort &&
	    s->preemption.borrow_within_cohort.policy != API_PREEMPT_UNSET &&
	    s->preemption.borrow_within_cohort.policy != API_PREEMPT_NEVER)
		return cu_error_set(err, CU_EDENIED,
		    "spec.preemption: Invalid value: \"object\": "
		    "reclaimWithinCohort=Never and "
		    "borrowWithinCohort.Policy!=Never");
	if (s->has_flavor_fungibility &&
	    s->flavor_fungibility.preference != API_FUNG_PREF_UNSET &&
	    (s->flavor_fungibility.when_can_borrow !=
		    API_FUNG_TRY_NEXT_FLAVOR ||
		(s->flavor_fungibility.when_can_preempt !=
			API_FUNG_TRY_NEXT_FLAVOR &&
		    s->flavor_fungibility.when_can_preempt !=
			API_FUNG_UNSET))) {
		const char *p = s->flavor_fungibility.preference ==
					API_FUNG_PREF_PREEMPTION_OVER_BORROWING
				    ? "PreemptionOverBorrowing"
				    : "BorrowingOverPreemption";

		return cu_error_set(err, CU_EDENIED,
		    "spec.flavorFungibility.preference: Invalid value: "
		    "\"%s\": preference \"%s\" requires both whenCanBorrow "
		    "and whenCanPreempt to be TryNextFlavor",
		    p, p);
	}
	if ((rc = fair_weight(s->has_fair_sharing_weight,
		 &s->fair_sharing_weight, err)) != CU_OK)
		return rc;
	for (i = 0; i < s->n_admission_checks; i++) {
		const struct api_strlist *of =
		    &s->admission_checks[i].on_flavors;

		for (j = 0; j < of->n; j++) {
			if (cq_has_flavor(cq, of->items[j]))
				continue;
			cq_flavor_list(cq, list, sizeof(list));
			return cu_error_set(err, CU_EDENIED,
			    "spec.admissionChecksStrategy.admissionChecks[%zu]"
			    ".onFlavors[%zu]: Unsupported value: %s: "
			    "supported values: %s",
			    i, j, wh__quote(q, of->items[j]), list);
		}
	}
	return CU_OK;
}

static int cluster_queue(struct wh_ctx *c, cu_error *err)
{
	const json_t *spec;
	const char *cohort;
	struct api_cluster_queue cq;
	int rc;

	if ((rc = spec_of(c->req->object, &spec, err)) != CU_OK ||
	    (rc = ref_field(spec, "cohortName", "spec.cohortName", &cohort,
		 err)) != CU_OK ||
	    (rc = groups_structure(spec, err)) != CU_OK)
		return rc;
	if ((rc = api_cluster_queue_decode(&cq, c->req->object, err)) != CU_OK)
		return decoded(rc);
	rc = groups_items(
	    &cq.spec.resource_groups, cohort[0] != '\0', false, err);
	if (rc == CU_OK)
		rc = cq_spec_rules(&cq, err);
	api_cluster_queue_dispose(&cq);
	return rc;
}

/* ---- Cohort ---------------------------------------------------------- */

static int cohort(struct wh_ctx *c, cu_error *err)
{
	const json_t *spec;
	const char *parent;
	char q[WH_QUOTE_MAX];
	struct api_cohort co;
	int rc;

	if ((rc = spec_of(c->req->object, &spec, err)) != CU_OK ||
	    (rc = ref_field(
		 spec, "parentName", "spec.parentName", &parent, err)) != CU_OK)
		return rc;
	if (parent[0] != '\0' && same(parent, name_of(c)))
		return cu_error_set(err, CU_EDENIED,
		    "spec.parentName: Invalid value: %s: must not be the "
		    "Cohort's own name",
		    wh__quote(q, parent));
	if ((rc = groups_structure(spec, err)) != CU_OK)
		return rc;
	if ((rc = api_cohort_decode(&co, c->req->object, err)) != CU_OK)
		return decoded(rc);
	rc = groups_items(
	    &co.spec.resource_groups, parent[0] != '\0', true, err);
	if (rc == CU_OK)
		rc = fair_weight(co.spec.has_fair_sharing_weight,
		    &co.spec.fair_sharing_weight, err);
	api_cohort_dispose(&co);
	return rc;
}

/* ---- LocalQueue ------------------------------------------------------ */

static int local_queue(struct wh_ctx *c, cu_error *err)
{
	const json_t *spec;
	const char *cq;
	char q[WH_QUOTE_MAX];
	struct api_local_queue lq;
	int rc;

	if ((rc = spec_of(c->req->object, &spec, err)) != CU_OK ||
	    (rc = ref_field(
		 spec, "clusterQueue", "spec.clusterQueue", &cq, err)) != CU_OK)
		return rc;
	if ((rc = api_local_queue_decode(&lq, c->req->object, err)) != CU_OK)
		return decoded(rc);
	rc = fair_weight(
	    lq.spec.has_fair_sharing_weight, &lq.spec.fair_sharing_weight, err);
	api_local_queue_dispose(&lq);
	if (rc != CU_OK || c->req->operation != WH_OP_UPDATE)
		return rc;
	/* a CEL transition rule: only when set before and after */
	if (cq[0] != '\0' && old_spec_str(c, "clusterQueue")[0] != '\0' &&
	    !same(cq, old_spec_str(c, "clusterQueue")))
		return cu_error_set(err, CU_EDENIED,
		    "spec.clusterQueue: Invalid value: %s: field is immutable",
		    wh__quote(q, cq));
	return CU_OK;
}

/* ---- ResourceFlavor -------------------------------------------------- */

static int rf_sizes(const json_t *spec, cu_error *err)
{
	static const struct {
		const char *key, *path;
		json_type type;
	} f[] = {
	    {"nodeLabels", "spec.nodeLabels", JSON_OBJECT},
	    {"nodeTaints", "spec.nodeTaints", JSON_ARRAY},
	    {"tolerations", "spec.tolerations", JSON_ARRAY},
	};
	size_t i, n;
	int rc;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		const json_t *v = member(spec, f[i].key);

		if ((rc = want_type(v, f[i].type, f[i].path, err)) != CU_OK)
			return rc;
		n = f[i].type == JSON_OBJECT ? json_object_size(v)
					     : json_array_size(v);
		if (n > MAX_RF_ITEMS)
			return cu_error_set(err, CU_EDENIED,
			    "%s: Too many: %zu: must have at most %d items",
			    f[i].path, n, MAX_RF_ITEMS);
	}
	return CU_OK;
}

static const char *effect_name(enum api_taint_effect e)
{
	switch (e) {
	case API_EFFECT_NO_SCHEDULE:
		return "NoSchedule";
	case API_EFFECT_PREFER_NO_SCHEDULE:
		return "PreferNoSchedule";
	case API_EFFECT_NO_EXECUTE:
		return "NoExecute";
	case API_EFFECT_UNSET:
		break;
	}
	return "";
}

static int rf_taints(const struct api_resource_flavor *rf, cu_error *err)
{
	char path[PATH_LEN], q[WH_QUOTE_MAX], kv[PATH_LEN];
	size_t i, j;

	for (i = 0; i < rf->spec.n_node_taints; i++) {
		const struct api_taint *t = &rf->spec.node_taints[i];

		snprintf(path, sizeof(path), "spec.nodeTaints[%zu].key", i);
		if (api_validate_label_key(t->key, path, err) != CU_OK)
			return CU_EDENIED;
		snprintf(path, sizeof(path), "spec.nodeTaints[%zu].value", i);
		if (t->value != NULL &&
		    api_validate_label_value(t->value, path, err) != CU_OK)
			return CU_EDENIED;
		for (j = 0; j < i; j++) {
			const struct api_taint *u = &rf->spec.node_taints[j];

			if (u->effect != t->effect || !same(u->key, t->key))
				continue;
			snprintf(kv, sizeof(kv), "%.120s:%s", t->key,
			    effect_name(t->effect));
			return cu_error_set(err, CU_EDENIED,
			    "spec.nodeTaints[%zu]: Duplicate value: %s: taints "
			    "must be unique by key and effect pair",
			    i, wh__quote(q, kv));
		}
	}
	return CU_OK;
}

static int rf_tolerations(const struct api_resource_flavor *rf, cu_error *err)
{
	char path[SHORT_PATH_LEN], q[WH_QUOTE_MAX];
	size_t i;

	for (i = 0; i < rf->spec.n_tolerations; i++) {
		const struct api_toleration *t = &rf->spec.tolerations[i];
		bool no_key = t->key == NULL || t->key[0] == '\0';

		snprintf(path, sizeof(path), "spec.tolerations[%zu]", i);
		if (!no_key) {
			char kp[PATH_LEN];

			snprintf(kp, sizeof(kp), "%s.key", path);
			if (api_validate_label_key(t->key, kp, err) != CU_OK)
				return CU_EDENIED;
		}
		if (no_key && t->op != API_TOL_OP_EXISTS)
			return cu_error_set(err, CU_EDENIED,
			    "%s.operator: Invalid value: \"Equal\": operator "
			    "must be Exists when 'key' is empty, which means "
			    "'match all values and all keys'",
			    path);
		if (t->has_toleration_seconds &&
		    t->effect != API_EFFECT_NO_EXECUTE)
			return cu_error_set(err, CU_EDENIED,
			    "%s.effect: Invalid value: \"%s\": effect must be "
			    "'NoExecute' when 'tolerationSeconds' is set",
			    path, effect_name(t->effect));
		if (t->op == API_TOL_OP_EXISTS && t->value != NULL &&
		    t->value[0] != '\0')
			return cu_error_set(err, CU_EDENIED,
			    "%s.value: Invalid value: %s: a value must be "
			    "empty when 'operator' is 'Exists'",
			    path, wh__quote(q, t->value));
	}
	return CU_OK;
}

static int resource_flavor(struct wh_ctx *c, cu_error *err)
{
	const json_t *spec;
	const char *old_topo;
	char q[WH_QUOTE_MAX];
	struct api_resource_flavor rf;
	size_t i;
	int rc;

	if ((rc = spec_of(c->req->object, &spec, err)) != CU_OK ||
	    (rc = rf_sizes(spec, err)) != CU_OK)
		return rc;
	if ((rc = api_resource_flavor_decode(&rf, c->req->object, err)) !=
	    CU_OK)
		return decoded(rc);
	for (i = 0; i < rf.spec.node_labels.n && rc == CU_OK; i++) {
		const struct api_kv *kv = &rf.spec.node_labels.items[i];

		if (api_validate_label_key(kv->key, "spec.nodeLabels", err) !=
			CU_OK ||
		    api_validate_label_value(
			kv->value, "spec.nodeLabels", err) != CU_OK)
			rc = CU_EDENIED;
	}
	if (rc == CU_OK)
		rc = rf_taints(&rf, err);
	if (rc == CU_OK)
		rc = rf_tolerations(&rf, err);
	if (rc == CU_OK && rf.spec.topology_name != NULL &&
	    rf.spec.node_labels.n == 0)
		rc = cu_error_set(err, CU_EDENIED,
		    "spec.nodeLabels: Required value: at least one nodeLabel "
		    "is required when topology is set");
	old_topo = old_spec_str(c, "topologyName");
	if (rc == CU_OK && c->req->operation == WH_OP_UPDATE &&
	    old_topo[0] != '\0' && !same(old_topo, rf.spec.topology_name))
		rc = cu_error_set(err, CU_EDENIED,
		    "spec.topologyName: Invalid value: %s: topologyName is "
		    "immutable when topologyName is set",
		    wh__quote(q, rf.spec.topology_name));
	api_resource_flavor_dispose(&rf);
	return rc;
}

/* ---- Workload -------------------------------------------------------- */

/* A DNS-1123 label: <= 63 of [a-z0-9-], alphanumeric at both ends. */
static bool is_dns1123_label(const char *s)
{
	size_t n = strlen(s);

	return n <= 63 && strchr(s, '.') == NULL && wh__is_dns1123_subdomain(s);
}

static bool quota_reserved(const json_t *wl)
{
	const json_t *cs =
	    json_object_get(json_object_get(wl, "status"), "conditions");
	const json_t *cnd;
	size_t i;

	json_array_foreach(cs, i, cnd)
	{
		const json_t *t = json_object_get(cnd, "type");
		const json_t *s = json_object_get(cnd, "status");

		if (json_is_string(t) && json_is_string(s) &&
		    strcmp(json_string_value(t), "QuotaReserved") == 0 &&
		    strcmp(json_string_value(s), "True") == 0)
			return true;
	}
	return false;
}

static int wl_podsets(const struct api_workload *wl, cu_error *err)
{
	char path[PATH_LEN], q[WH_QUOTE_MAX];
	size_t i, j, with_min = 0;

	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
		const char *name = ps->name != NULL ? ps->name : "main";

		snprintf(path, sizeof(path), "spec.podSets[%zu].name", i);
		if (!is_dns1123_label(name))
			return cu_error_set(err, CU_EDENIED,
			    "%s: Invalid value: %s: a lowercase RFC 1123 label "
			    "must consist of lower case alphanumeric "
			    "characters or '-', and must start and end with "
			    "an alphanumeric character (e.g. 'my-name',  or "
			    "'123-abc', regex used for validation is "
			    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
			    path, wh__quote(q, name));
		for (j = 0; j < i; j++) {
			const char *o = wl->spec.pod_sets[j].name;

			if (same(o != NULL ? o : "main", name))
				return cu_error_set(err, CU_EDENIED,
				    "%s: Duplicate value: %s", path,
				    wh__quote(q, name));
		}
		if (ps->has_count && ps->count < 0)
			return cu_error_set(err, CU_EDENIED,
			    "spec.podSets[%zu].count: Invalid value: "
			    "%d: " NEGATIVE,
			    i, (int)ps->count);
		if (wh__podset_template(ps->template, i, true, err) != CU_OK)
			return CU_EDENIED;
		with_min += ps->has_min_count;
	}
	if (with_min > 1)
		return cu_error_set(err, CU_EDENIED,
		    "spec.podSets: Invalid value: %zu: at most one podSet can "
		    "use minCount",
		    with_min);
	return CU_OK;
}

static const char *ps_name(const struct api_podset *ps)
{
	return ps->name != NULL ? ps->name : "main";
}

static const struct api_podset *find_podset(
    const struct api_workload *wl, const char *name)
{
	size_t i;

	for (i = 0; i < wl->spec.n_pod_sets; i++)
		if (same(ps_name(&wl->spec.pod_sets[i]), name))
			return &wl->spec.pod_sets[i];
	return NULL;
}

/* Kueue's ValidateWorkload, status part: every reclaimablePods entry
 * names a podSet and reclaims at most its count; with a quota
 * reservation, the admission assigns each podSet exactly once. */
static int wl_status(
    const struct wh_ctx *c, const struct api_workload *wl, cu_error *err)
{
	char q[WH_QUOTE_MAX], names[512];
	size_t i, n = 0;

	for (i = 0; i < wl->status.n_reclaimable_pods; i++) {
		const struct api_reclaimable_pod *rp =
		    &wl->status.reclaimable_pods[i];
		const struct api_podset *ps = find_podset(wl, rp->name);
		int32_t count;

		if (ps == NULL) {
			size_t j;

			names[0] = '\0';
			for (j = 0, n = 0;
			     j < wl->spec.n_pod_sets && n < sizeof(names); j++)
				n += (size_t)snprintf(names + n,
				    sizeof(names) - n, "%s\"%s\"",
				    j > 0 ? ", " : "",
				    ps_name(&wl->spec.pod_sets[j]));
			return cu_error_set(err, CU_EDENIED,
			    "status.reclaimablePods[%s].name: Unsupported "
			    "value: %s: supported values: %s",
			    rp->name, wh__quote(q, rp->name), names);
		}
		count = ps->has_count ? ps->count : 1;
		if (rp->count > count)
			return cu_error_set(err, CU_EDENIED,
			    "status.reclaimablePods[%s].count: Invalid value: "
			    "%d: should be less or equal to %d",
			    rp->name, (int)rp->count, (int)count);
	}
	if (!quota_reserved(c->req->object) || !wl->status.has_admission)
		return CU_OK;
	if (wl->status.admission.n_pod_set_assignments != wl->spec.n_pod_sets)
		return cu_error_set(err, CU_EDENIED,
		    "status.admission.podSetAssignments: Invalid value: %zu: "
		    "must have the same number of podSets as the spec",
		    wl->spec.n_pod_sets);
	for (i = 0; i < wl->status.admission.n_pod_set_assignments; i++) {
		const char *name =
		    wl->status.admission.pod_set_assignments[i].name;

		if (find_podset(wl, name) == NULL)
			return cu_error_set(err, CU_EDENIED,
			    "status.admission.podSetAssignments[%zu].name: Not "
			    "found: %s",
			    i, wh__quote(q, name));
	}
	return CU_OK;
}

/* Kueue's status rules while the quota stays reserved (old and new):
 * reclaimablePods entries are never removed and their counts never
 * decrease; the admission may be set or cleared, never changed. */
static int wl_status_update(const struct wh_ctx *c, cu_error *err)
{
	const json_t *ost = json_object_get(c->req->old_object, "status");
	const json_t *nst = json_object_get(c->req->object, "status");
	const json_t *orp = json_object_get(ost, "reclaimablePods");
	const json_t *nrp = json_object_get(nst, "reclaimablePods");
	const json_t *oa = json_object_get(ost, "admission");
	const json_t *na = json_object_get(nst, "admission");
	const json_t *o, *n;
	size_t i, j;

	json_array_foreach(orp, i, o)
	{
		const char *name =
		    json_string_value(json_object_get(o, "name"));
		json_int_t oc = json_integer_value(json_object_get(o, "count"));
		bool found = false;

		if (name == NULL)
			continue;
		json_array_foreach(nrp, j, n)
		{
			if (!same(json_string_value(json_object_get(n, "name")),
				name))
				continue;
			found = true;
			if (json_integer_value(json_object_get(n, "count")) <
			    oc)
				return cu_error_set(err, CU_EDENIED,
				    "status.reclaimablePods[%s].count: Invalid "
				    "value: %" JSON_INTEGER_FORMAT
				    ": cannot be less then "
				    "%" JSON_INTEGER_FORMAT,
				    name,
				    json_integer_value(
					json_object_get(n, "count")),
				    oc);
		}
		if (!found)
			return cu_error_set(err, CU_EDENIED,
			    "status.reclaimablePods[%s]: Required value: "
			    "cannot be removed",
			    name);
	}
	if (json_is_object(oa) && json_is_object(na) && !json_equal(oa, na))
		return cu_error_set(err, CU_EDENIED,
		    "status.admission: Invalid value: \"object\": field is "
		    "immutable");
	return CU_OK;
}

/* Step 8: what a quota reservation freezes. */
static int wl_update(
    const struct wh_ctx *c, const struct api_workload *wl, cu_error *err)
{
	const json_t *old = c->req->old_object, *obj = c->req->object;
	const json_t *op =
	    json_object_get(json_object_get(old, "spec"), "podSets");
	const json_t *np =
	    json_object_get(json_object_get(obj, "spec"), "podSets");
	char q[WH_QUOTE_MAX];
	size_t i;

	if (!quota_reserved(old))
		return CU_OK;
	if (quota_reserved(obj) &&
	    !same(wl->spec.queue_name, old_spec_str(c, "queueName")))
		return cu_error_set(err, CU_EDENIED,
		    "spec.queueName: Invalid value: %s: queueName is immutable "
		    "while workload quota reserved",
		    wh__quote(q, wl->spec.queue_name));
	if (json_array_size(op) != json_array_size(np))
		return cu_error_set(err, CU_EDENIED,
		    "spec.podSets: Invalid value: \"array\": field is "
		    "immutable");
	for (i = 0; i < json_array_size(np); i++)
		if (!json_equal(json_array_get(op, i), json_array_get(np, i)))
			return cu_error_set(err, CU_EDENIED,
			    "spec.podSets[%zu]: Invalid value: \"object\": "
			    "field is immutable",
			    i);
	if (quota_reserved(obj))
		return wl_status_update(c, err);
	return CU_OK;
}

static int workload(struct wh_ctx *c, cu_error *err)
{
	const json_t *spec;
	struct api_workload wl;
	int rc;

	if ((rc = spec_of(c->req->object, &spec, err)) != CU_OK)
		return rc;
	if ((rc = api_workload_decode(&wl, c->req->object, err)) != CU_OK)
		return decoded(rc);
	rc = wl_podsets(&wl, err);
	if (rc == CU_OK)
		rc = wl_status(c, &wl, err);
	if (rc == CU_OK && c->req->operation == WH_OP_UPDATE)
		rc = wl_update(c, &wl, err);
	api_workload_dispose(&wl);
	return rc;
}

/* ---- WorkloadPriorityClass ------------------------------------------- */

static int workload_priority_class(struct wh_ctx *c, cu_error *err)
{
	struct api_workload_priority_class w;
	size_t chars = 0;
	const char *p;
	int rc;

	if ((rc = api_workload_priority_class_decode(
		 &w, c->req->object, err)) != CU_OK)
		return decoded(rc);
	for (p = w.description != NULL ? w.description : ""; *p; p++)
		chars += ((unsigned char)*p & 0xC0) != 0x80;
	api_workload_priority_class_dispose(&w);
	if (chars > MAX_WPC_DESCRIPTION)
		return cu_error_set(err, CU_EDENIED,
		    "description: Too long: must have at most %d characters",
		    MAX_WPC_DESCRIPTION);
	return CU_OK;
}

/* ---- defaulting ------------------------------------------------------ */

/* Kueue's Default() of ClusterQueue and ResourceFlavor. */
static int add_finalizer(struct wh_ctx *c, cu_error *err)
{
	const json_t *meta = json_object_get(c->req->object, "metadata");
	const json_t *fin, *v;
	size_t i;

	if (!json_is_object(meta))
		return wh__patch_add(c->out, "add", "/metadata",
		    json_pack(
			"{s:[s]}", "finalizers", WH_FINALIZER_RESOURCE_IN_USE),
		    err);
	fin = member(meta, "finalizers");
	if (fin == NULL)
		return wh__patch_add(c->out, "add", "/metadata/finalizers",
		    json_pack("[s]", WH_FINALIZER_RESOURCE_IN_USE), err);
	if (!json_is_array(fin))
		return want_type(fin, JSON_ARRAY, "metadata.finalizers", err);
	json_array_foreach(fin, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v),
					     WH_FINALIZER_RESOURCE_IN_USE) == 0)
			return CU_OK;
	}
	return wh__patch_add(c->out, "add", "/metadata/finalizers/-",
	    json_string(WH_FINALIZER_RESOURCE_IN_USE), err);
}

int wh__kueue(struct wh_ctx *c, const char *kind, cu_error *err)
{
	static const struct {
		const char *kind;
		int (*validate)(struct wh_ctx *, cu_error *);
		bool finalizer;
	} kinds[] = {
	    {"ClusterQueue", cluster_queue, true},
	    {"Cohort", cohort, false},
	    {"LocalQueue", local_queue, false},
	    {"ResourceFlavor", resource_flavor, true},
	    {"Workload", workload, false},
	    {"WorkloadPriorityClass", workload_priority_class, false},
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].kind, kind) != 0)
			continue;
		if (c->mode == WH_VALIDATE)
			return kinds[i].validate(c, err);
		if (kinds[i].finalizer && c->req->operation == WH_OP_CREATE &&
		    c->opt->add_resource_in_use_finalizer)
			return add_finalizer(c, err);
		return CU_OK;
	}
	return CU_OK;
}
