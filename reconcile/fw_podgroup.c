/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_podgroup.c - pod groups as a pure function
 * (rec_pod_group_reconcile, docs/frameworks.md section 2): the Pods that
 * share a kueue.x-k8s.io/pod-group-name label are one Workload, named
 * after the group, owned by every Pod, with one pod set per role (Pods
 * of the same shape) counted from the Pods. All or nothing: the Workload
 * is created only once the group has as many Pods as its
 * kueue.x-k8s.io/pod-group-total-count, and no Pod loses its admission
 * gate before the Workload is admitted; then every gated Pod of the
 * group, replacement Pods included, is ungated with its role's flavor.
 * Pods beyond the total count (or, once the Workload exists, beyond a
 * role's pod set count) are deleted, as Kueue's excess Pods. Evicted,
 * the group's running Pods are deleted; a Workload being deleted while
 * the group has Pods loses its finalizer once none runs. Contract in
 * reconcile/reconcile.h.
 */
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

/* ---- roles ------------------------------------------------------------ */

/* The spec members that make two Pods of a group the same role (Kueue's
 * role hash reads the same kind of fields). */
static const char *const role_fields[] = {"initContainers", "containers",
    "nodeSelector", "affinity", "tolerations", "runtimeClassName", "priority",
    "topologySpreadConstraints", "overhead", "resourceClaims", NULL};

static const char *annotation(const json_t *pod, const char *key)
{
	return api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "annotations"),
	    key);
}

/* The role of pod: its kueue.x-k8s.io/role-hash annotation when it has
 * one of at most 8 characters (the serving webhooks name the roles of a
 * StatefulSet's or LeaderWorkerSet's Pods after their Workload's pod
 * sets: main, leader, worker), else the first 8 hex digits of the SHA-1
 * of its shape. */
static int role_of(const json_t *pod, char out[9], cu_error *err)
{
	const json_t *spec = json_object_get(pod, "spec");
	const char *named = annotation(pod, REC_POD_ROLE_HASH);
	json_t *shape, *c, *ctr;
	char hex[API_SHA1_HEX_LEN], *text = NULL;
	size_t i, k;
	int rc;

	if (named != NULL && named[0] != '\0' && strlen(named) <= 8) {
		memcpy(out, named, strlen(named) + 1);
		return CU_OK;
	}
	shape = json_object();
	if (shape == NULL)
		return rec__nomem(err, "pod role");
	for (i = 0; role_fields[i] != NULL; i++) {
		json_t *v = json_object_get(spec, role_fields[i]);

		if (v == NULL)
			continue;
		v = json_deep_copy(v);
		if (v == NULL ||
		    json_object_set_new(shape, role_fields[i], v) != 0) {
			json_decref(shape);
			return rec__nomem(err, "pod role");
		}
	}
	/* What cueue injects on admission is not the Pod's shape. */
	json_object_del(shape, "nodeSelector");
	json_object_del(shape, "tolerations");
	/* Nor are a container's image-independent runtime defaults. */
	json_array_foreach(json_object_get(shape, "containers"), k, ctr)
	{
		c = ctr;
		json_object_del(c, "terminationMessagePath");
		json_object_del(c, "terminationMessagePolicy");
		json_object_del(c, "imagePullPolicy");
	}
	text = json_dumps(shape, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(shape);
	if (text == NULL)
		return rec__nomem(err, "pod role");
	rc = api_sha1_hex(text, hex, err);
	cu_free(text);
	if (rc != CU_OK)
		return rc;
	memcpy(out, hex, 8);
	out[8] = '\0';
	return CU_OK;
}

static const char *phase(const json_t *pod)
{
	const char *p = api_json_str(json_object_get(pod, "status"), "phase");

	return p != NULL ? p : "";
}

static bool failed(const json_t *pod)
{
	return strcmp(phase(pod), "Failed") == 0;
}

/* ---- plan items ------------------------------------------------------- */

/* Append a write; body [owned: taken even on failure]. */
static int add(struct rec_plan *p, enum rec_target target, enum rec_write_op op,
    const char *ns, const char *name, json_t *body, enum rec_expect expect,
    bool for_job, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK) {
		json_decref(body);
		return err->code;
	}
	it->kind = REC_ITEM_WRITE;
	it->target = target;
	it->op = op;
	it->body = body;
	it->expect = expect;
	it->for_job = for_job;
	it->job = REC_JOB_START;
	it->ns = cu_strdup(ns);
	it->name = cu_strdup(name);
	if (it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "pod group");
	return CU_OK;
}

/* A warning line "start pod ns/name of group g: msg". */
static int warn(struct rec_plan *p, const struct rec_pod_group_in *in,
    const char *pod, const char *msg, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = REC_ITEM_WARN;
	it->text = cu_asprintf("start pod %s/%s of group %s: %s", in->ns,
	    pod ? pod : "", in->name, msg);
	return it->text == NULL ? rec__nomem(err, "pod group") : CU_OK;
}

static int wl_write(struct rec_plan *p, const struct rec_pod_group_in *in,
    enum rec_write_op op, json_t *body, cu_error *err)
{
	return add(p, REC_TARGET_WORKLOAD, op, in->ns, in->name, body,
	    REC_EXPECT_RV, true, err);
}

/* A view of one Pod as a job of the pod shape; meta decoded into *m
 * (api_meta_dispose it when CU_OK). */
static int pod_job(const struct rec_fw *fw, const json_t *pod,
    struct api_meta *m, struct rec_job *j, cu_error *err)
{
	int rc = api_meta_decode(m, json_object_get(pod, "metadata"), err);

	memset(j, 0, sizeof(*j));
	j->kind = REC_JOB_DOC;
	j->fw = fw;
	j->doc = pod;
	j->meta = m;
	return rc;
}

/* ---- the Workload of a group ------------------------------------------ */

/* Pod i counts towards the group: not Failed (a failed Pod waits for its
 * replacement). */
static size_t live_pods(const struct rec_pod_group_in *in)
{
	size_t i, n = 0;

	for (i = 0; i < in->n_pods; i++)
		n += !failed(in->pods[i]);
	return n;
}

/* kueue.x-k8s.io/pod-group-fast-admission: "true" on a Pod of the
 * group: its Workload is made from the first Pod, not the whole group
 * (a StatefulSet creating its Pods one by one). */
static bool fast_admission(const struct rec_pod_group_in *in)
{
	size_t i;

	for (i = 0; i < in->n_pods; i++) {
		const char *v = annotation(in->pods[i], REC_POD_GROUP_FAST);

		if (v != NULL && strcmp(v, "true") == 0)
			return true;
	}
	return false;
}

/* With fast admission, the pods the group does not have yet count in
 * its first pod set, so the Workload asks for the whole group. */
static int fill_to_total(
    const struct rec_pod_group_in *in, json_t *sets, cu_error *err)
{
	json_int_t sum = 0;
	json_t *ps;
	size_t i;

	if (!fast_admission(in) || json_array_size(sets) == 0)
		return CU_OK;
	json_array_foreach(sets, i, ps) sum +=
	    json_integer_value(json_object_get(ps, "count"));
	if (sum >= in->total)
		return CU_OK;
	ps = json_array_get(sets, 0);
	if (json_object_set_new(ps, "count",
		json_integer(json_integer_value(json_object_get(ps, "count")) +
			     in->total - sum)) != 0)
		return rec__nomem(err, "pod group pod set");
	return CU_OK;
}

/* The pod set of role `role` [copied]: the one rec_wl_build made for its
 * first Pod, renamed and counted. */
static int role_podset(const struct rec_job_view *view, const json_t *pod,
    const char *role, int32_t count, json_t **out, cu_error *err)
{
	struct rec_wl_build_opts bo;
	struct api_meta m;
	struct rec_job j;
	json_t *w = NULL, *ps;
	int rc;

	*out = NULL;
	if ((rc = pod_job(rec_fw_by_name("pod"), pod, &m, &j, err)) != CU_OK)
		return rc;
	memset(&bo, 0, sizeof(bo));
	bo.lookup = view->priority;
	bo.label_keys_to_copy = view->label_keys_to_copy;
	rc = rec_wl_build(&j, &bo, &w, err);
	api_meta_dispose(&m);
	if (rc != CU_OK)
		return rc;
	ps = json_array_get(
	    json_object_get(json_object_get(w, "spec"), "podSets"), 0);
	*out = ps != NULL ? json_deep_copy(ps) : NULL;
	json_decref(w);
	if (*out == NULL ||
	    json_object_set_new(*out, "name", json_string(role)) != 0 ||
	    json_object_set_new(*out, "count", json_integer(count)) != 0)
		return rec__nomem(err, "pod group pod set");
	return CU_OK;
}

/* The group's Workload: built for its first live Pod (queue, priority,
 * copied labels), named after the group, owned by every Pod, one pod set
 * per role in the order the roles first appear. */
static int build(const struct rec_job_view *view,
    const struct rec_pod_group_in *in, json_t **out, cu_error *err)
{
	struct rec_wl_build_opts bo;
	struct api_meta m;
	struct rec_job j;
	json_t *w = NULL, *sets = json_array(), *refs = json_array(), *md;
	char(*roles)[9] = cu_calloc(in->n_pods + 1, sizeof(*roles));
	const json_t *first = NULL;
	size_t i, k;
	int rc = CU_OK;

	*out = NULL;
	if (sets == NULL || refs == NULL || roles == NULL) {
		rc = rec__nomem(err, "pod group");
		goto out;
	}
	for (i = 0; i < in->n_pods && rc == CU_OK; i++) {
		const json_t *pmd = json_object_get(in->pods[i], "metadata");

		if (failed(in->pods[i]))
			continue;
		if (first == NULL)
			first = in->pods[i];
		rc = role_of(in->pods[i], roles[i], err);
		if (rc == CU_OK && json_array_append_new(refs,
				       json_pack("{s:s, s:s, s:s?, s:s?, s:b}",
					   "apiVersion", "v1", "kind", "Pod",
					   "name", api_json_str(pmd, "name"),
					   "uid", api_json_str(pmd, "uid"),
					   "blockOwnerDeletion", 1)) != 0)
			rc = rec__nomem(err, "pod group owners");
	}
	for (i = 0; i < in->n_pods && rc == CU_OK; i++) {
		int32_t count = 0;
		json_t *ps;
		bool seen = false;

		if (failed(in->pods[i]))
			continue;
		for (k = 0; k < i && !seen; k++)
			seen = !failed(in->pods[k]) &&
			       strcmp(roles[k], roles[i]) == 0;
		if (seen)
			continue;
		for (k = i; k < in->n_pods; k++)
			count += !failed(in->pods[k]) &&
				 strcmp(roles[k], roles[i]) == 0;
		rc = role_podset(view, in->pods[i], roles[i], count, &ps, err);
		if (rc == CU_OK && json_array_append_new(sets, ps) != 0)
			rc = rec__nomem(err, "pod group pod sets");
	}
	if (rc == CU_OK)
		rc = fill_to_total(in, sets, err);
	if (rc != CU_OK || first == NULL)
		goto out;
	if ((rc = pod_job(rec_fw_by_name("pod"), first, &m, &j, err)) != CU_OK)
		goto out;
	memset(&bo, 0, sizeof(bo));
	bo.lookup = view->priority;
	bo.label_keys_to_copy = view->label_keys_to_copy;
	rc = rec_wl_build(&j, &bo, &w, err);
	api_meta_dispose(&m);
	if (rc != CU_OK)
		goto out;
	md = json_object_get(w, "metadata");
	if (json_object_set_new(md, "name", json_string(in->name)) != 0 ||
	    json_object_set(md, "ownerReferences", refs) != 0 ||
	    json_object_set(json_object_get(w, "spec"), "podSets", sets) != 0)
		rc = rec__nomem(err, "pod group");
	if (rc == CU_OK && view->queue_name == NULL &&
	    view->local_queue_exists(in->ns, "default", view->payload) &&
	    json_object_set_new(json_object_get(w, "spec"), "queueName",
		json_string("default")) != 0)
		rc = rec__nomem(err, "pod group");
out:
	if (rc == CU_OK)
		*out = w;
	else
		json_decref(w);
	json_decref(sets);
	json_decref(refs);
	cu_free(roles);
	return rc;
}

/* ---- start and stop --------------------------------------------------- */

/* Ungate every gated Pod of an admitted group with its role's
 * assignment (the Workload seen with that one assignment). */
static int start(const struct rec_job_view *view,
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	struct api_resource_flavor *fl = NULL;
	size_t nfl = 0, i, a;
	cu_error serr;
	int rc = CU_OK;

	if (view->admitted_flavors(wl, &fl, &nfl, view->payload, &serr) !=
	    CU_OK)
		return CU_OK; /* flavors not cached yet: later */
	for (i = 0; i < in->n_pods && rc == CU_OK; i++) {
		struct api_workload one = *wl;
		struct api_meta m;
		struct rec_job j;
		json_t *patch = NULL;
		char role[9];

		if (!rec__pod_gated(in->pods[i]) ||
		    role_of(in->pods[i], role, err) != CU_OK)
			continue;
		for (a = 0; a < wl->status.admission.n_pod_set_assignments; a++)
			if (wl->status.admission.pod_set_assignments[a].name &&
			    strcmp(wl->status.admission.pod_set_assignments[a]
				       .name,
				role) == 0)
				break;
		if (a == wl->status.admission.n_pod_set_assignments)
			continue; /* a role the Workload does not have */
		one.status.admission.pod_set_assignments =
		    &wl->status.admission.pod_set_assignments[a];
		one.status.admission.n_pod_set_assignments = 1;
		if ((rc = pod_job(rec_fw_by_name("pod"), in->pods[i], &m, &j,
			 err)) != CU_OK)
			break;
		if (rec_job_start_patch(&j, &one, fl, nfl, &patch, &serr) !=
		    CU_OK)
			rc = warn(p, in, m.name, serr.msg, err);
		else if (patch != NULL)
			rc = add(p, REC_TARGET_JOB, REC_WRITE_PATCH, in->ns,
			    m.name, patch, REC_EXPECT_NONE, false, err);
		api_meta_dispose(&m);
	}
	for (i = 0; i < nfl; i++)
		api_resource_flavor_dispose(&fl[i]);
	cu_free(fl);
	return rc;
}

/* Delete every Pod of the group that got past its gate; *wrote. */
static int stop(const struct rec_pod_group_in *in, struct rec_plan *p,
    bool *wrote, cu_error *err)
{
	size_t i;

	*wrote = false;
	for (i = 0; i < in->n_pods; i++) {
		const char *name = api_json_str(
		    json_object_get(in->pods[i], "metadata"), "name");

		if (name == NULL || !rec__pod_stop_deletes(in->pods[i]))
			continue;
		*wrote = true;
		if (add(p, REC_TARGET_JOB, REC_WRITE_DELETE, in->ns, name, NULL,
			REC_EXPECT_NONE, false, err) != CU_OK)
			return err->code;
	}
	return CU_OK;
}

static bool any_active(const struct rec_pod_group_in *in)
{
	size_t i;

	for (i = 0; i < in->n_pods; i++)
		if (rec__pod_active(in->pods[i]))
			return true;
	return false;
}

/* A Failed Pod that its group may not replace
 * (kueue.x-k8s.io/retriable-in-group: "false"). */
static bool final_failure(const json_t *pod)
{
	const char *v = api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "annotations"),
	    "kueue.x-k8s.io/retriable-in-group");

	return failed(pod) && v != NULL && strcmp(v, "false") == 0;
}

/* The group's end: as many Pods Succeeded as its total count; or, with
 * none running, a Failed Pod the group may not replace. Other Failed
 * Pods wait for their replacements. */
static bool group_finished(const struct rec_pod_group_in *in, bool *ok)
{
	size_t i, done = 0;
	bool final = false;

	for (i = 0; i < in->n_pods; i++) {
		done += strcmp(phase(in->pods[i]), "Succeeded") == 0;
		final = final || final_failure(in->pods[i]);
	}
	*ok = in->total > 0 && done >= (size_t)in->total;
	return *ok || (final && !any_active(in));
}

/* ---- excess Pods ------------------------------------------------------ */

static const char *meta_str(const json_t *pod, const char *key)
{
	const char *v = api_json_str(json_object_get(pod, "metadata"), key);

	return v != NULL ? v : "";
}

/* Pod counts against its role's limit: not Failed, not being deleted. */
static bool counted(const json_t *pod)
{
	return !failed(pod) && json_object_get(json_object_get(pod, "metadata"),
				   "deletionTimestamp") == NULL;
}

/* Of two counted Pods of a role, a is kept before b: with the pod
 * finalizer first, then past its gate, then the older, then by name. */
static bool kept_before(const json_t *a, const json_t *b)
{
	bool ga = rec__pod_gated(a), gb = rec__pod_gated(b);
	bool fa = rec__pod_has_finalizer(a), fb = rec__pod_has_finalizer(b);
	int c;

	if (fa != fb)
		return fa;
	if (ga != gb)
		return !ga;
	c = strcmp(
	    meta_str(a, "creationTimestamp"), meta_str(b, "creationTimestamp"));
	if (c != 0)
		return c < 0;
	return strcmp(meta_str(a, "name"), meta_str(b, "name")) < 0;
}

/* Mark in excess[] the counted Pods of role `role` (NULL: any) beyond
 * the first `limit` of them; roles[i] is Pod i's role. */
static void mark_excess(const struct rec_pod_group_in *in, char (*roles)[9],
    const char *role, int32_t limit, bool *excess)
{
	size_t i, k, rank;

	for (i = 0; i < in->n_pods; i++) {
		if (!counted(in->pods[i]) ||
		    (role != NULL && strcmp(roles[i], role) != 0))
			continue;
		rank = 0;
		for (k = 0; k < in->n_pods; k++)
			rank += k != i && counted(in->pods[k]) &&
				(role == NULL || strcmp(roles[k], role) == 0) &&
				kept_before(in->pods[k], in->pods[i]);
		excess[i] = limit < 0 || rank >= (size_t)limit;
	}
}

/* Kueue's Normal ExcessPodDeleted event about the excess Pod ns/name
 * (the event item names the Pod it is about). */
static int excess_event(
    struct rec_plan *p, const char *ns, const char *name, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = REC_ITEM_EVENT;
	it->type = REC_EVENT_NORMAL;
	it->reason = REC_REASON_EXCESS_POD_DELETED;
	it->text = cu_strdup("Excess pod deleted");
	it->ns = cu_strdup(ns);
	it->name = cu_strdup(name);
	if (it->text == NULL || it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "pod group");
	return CU_OK;
}

/* Excess Pods (Kueue's): more counted Pods than the group's total count
 * before its Workload exists, or than a role's pod set count after,
 * the last of them (gated, then newer) deleted. *kept gets the others
 * in pods[] [owned by the caller: cu_free(kept->pods)]. */
static int trim(const struct rec_pod_group_in *in, struct rec_plan *p,
    struct rec_pod_group_in *kept, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	char(*roles)[9] = cu_calloc(in->n_pods + 1, sizeof(*roles));
	bool *excess = cu_calloc(in->n_pods + 1, sizeof(*excess));
	const json_t **pods = cu_calloc(in->n_pods + 1, sizeof(*pods));
	size_t i;
	int rc = CU_OK;

	*kept = *in;
	kept->pods = NULL;
	if (roles == NULL || excess == NULL || pods == NULL) {
		rc = rec__nomem(err, "pod group");
		goto out;
	}
	for (i = 0; i < in->n_pods && rc == CU_OK; i++)
		rc = role_of(in->pods[i], roles[i], err);
	if (rc != CU_OK)
		goto out;
	if (wl == NULL && in->total > 0)
		mark_excess(in, roles, NULL, in->total, excess);
	for (i = 0; wl != NULL && i < wl->spec.n_pod_sets; i++)
		if (wl->spec.pod_sets[i].name != NULL)
			mark_excess(in, roles, wl->spec.pod_sets[i].name,
			    wl->spec.pod_sets[i].count, excess);
	kept->n_pods = 0;
	for (i = 0; i < in->n_pods && rc == CU_OK; i++) {
		if (!excess[i])
			pods[kept->n_pods++] = in->pods[i];
		else if ((rc = rec__pod_unfinalize(
			      in->pods[i], in->ns, p, err)) == CU_OK &&
			 (rc = add(p, REC_TARGET_JOB, REC_WRITE_DELETE, in->ns,
			      meta_str(in->pods[i], "name"), NULL,
			      REC_EXPECT_NONE, false, err)) == CU_OK)
			rc = excess_event(
			    p, in->ns, meta_str(in->pods[i], "name"), err);
	}
out:
	cu_free(roles);
	cu_free(excess);
	if (rc == CU_OK)
		kept->pods = pods;
	else
		cu_free(pods);
	return rc;
}

/* ---- the pod finalizer and the Workload's owners ---------------------- */

/* Every Pod of the group loses the pod finalizer (Kueue's Finalize). */
static int unfinalize_pods(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	size_t i;

	for (i = 0; i < in->n_pods; i++)
		if (rec__pod_unfinalize(in->pods[i], in->ns, p, err) != CU_OK)
			return err->code;
	return CU_OK;
}

/* Kueue's inactive Pod: Failed, or being deleted before it was bound. */
static bool inactive(const json_t *pod)
{
	const char *node =
	    api_json_str(json_object_get(pod, "spec"), "nodeName");

	return failed(pod) ||
	       (rec__pod_deleting(pod) && (node == NULL || node[0] == '\0'));
}

/* Before its Workload exists, the group's inactive Pods lose the pod
 * finalizer (Kueue's: they are not part of the Workload made). */
static int unfinalize_inactive(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	size_t i;

	for (i = 0; i < in->n_pods; i++)
		if (inactive(in->pods[i]) &&
		    rec__pod_unfinalize(in->pods[i], in->ns, p, err) != CU_OK)
			return err->code;
	return CU_OK;
}

/* When pod was last active: its Ready condition's last transition, else
 * its creation. */
static const char *last_active(const json_t *pod)
{
	const json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *at = api_json_str(c, "lastTransitionTime");

		if (t != NULL && strcmp(t, "Ready") == 0 && at != NULL)
			return at;
	}
	return meta_str(pod, "creationTimestamp");
}

/* Of two inactive Pods of a role, a is kept before b (Kueue's order):
 * with the pod finalizer first, then the last active, then the older. */
static bool inactive_kept_before(const json_t *a, const json_t *b)
{
	bool fa = rec__pod_has_finalizer(a), fb = rec__pod_has_finalizer(b);
	int c;

	if (fa != fb)
		return fa;
	c = strcmp(last_active(a), last_active(b));
	if (c != 0)
		return c > 0;
	c = strcmp(
	    meta_str(a, "creationTimestamp"), meta_str(b, "creationTimestamp"));
	if (c != 0)
		return c < 0;
	return strcmp(meta_str(a, "name"), meta_str(b, "name")) < 0;
}

static bool owns(const struct api_workload *wl, const json_t *pod)
{
	const char *uid = meta_str(pod, "uid");
	size_t i;

	for (i = 0; i < wl->meta.n_owner_refs; i++)
		if (wl->meta.owner_refs[i].uid != NULL &&
		    strcmp(wl->meta.owner_refs[i].uid, uid) == 0)
			return true;
	return false;
}

/* Is w [borrowed] owned by a parent of its group (a StatefulSet, a
 * LeaderWorkerSet: any owner that is not a Pod)? Such a Workload keeps
 * its parent as its one owner: the group's Pods are not added. */
static bool owned_by_parent(const struct api_workload *w)
{
	size_t i;

	for (i = 0; w != NULL && i < w->meta.n_owner_refs; i++)
		if (w->meta.owner_refs[i].kind != NULL &&
		    strcmp(w->meta.owner_refs[i].kind, "Pod") != 0)
			return true;
	return false;
}

/* The Workload's owner references, kept ones first, with the kept Pods
 * (keep[i]) that do not own it yet added: a PATCH guarded by its
 * resourceVersion, none when every kept Pod owns it. */
static int add_owners(const struct rec_pod_group_in *in, const bool *keep,
    struct rec_plan *p, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	json_t *refs = json_array(), *body;
	size_t i, added = 0;

	if (refs == NULL)
		return rec__nomem(err, "pod group owners");
	for (i = 0; i < wl->meta.n_owner_refs; i++) {
		const struct api_owner_ref *r = &wl->meta.owner_refs[i];
		json_t *o = json_pack("{s:s?, s:s?, s:s?, s:s?}", "apiVersion",
		    r->api_version, "kind", r->kind, "name", r->name, "uid",
		    r->uid);

		if (o != NULL && r->has_controller)
			json_object_set_new(
			    o, "controller", json_boolean(r->controller));
		if (o != NULL && r->has_block_owner_deletion)
			json_object_set_new(o, "blockOwnerDeletion",
			    json_boolean(r->block_owner_deletion));
		if (json_array_append_new(refs, o) != 0) {
			json_decref(refs);
			return rec__nomem(err, "pod group owners");
		}
	}
	for (i = 0; i < in->n_pods; i++) {
		if (!keep[i] || owns(wl, in->pods[i]))
			continue;
		added++;
		if (json_array_append_new(
			refs, json_pack("{s:s, s:s, s:s, s:s, s:b}",
				  "apiVersion", "v1", "kind", "Pod", "name",
				  meta_str(in->pods[i], "name"), "uid",
				  meta_str(in->pods[i], "uid"),
				  "blockOwnerDeletion", 1)) != 0) {
			json_decref(refs);
			return rec__nomem(err, "pod group owners");
		}
	}
	if (added == 0 || wl->meta.resource_version == NULL) {
		json_decref(refs);
		return CU_OK;
	}
	body = json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", refs,
	    "resourceVersion", wl->meta.resource_version);
	if (body == NULL)
		return rec__nomem(err, "pod group owners");
	return wl_write(p, in, REC_WRITE_PATCH, body, err);
}

/* With its Workload, each role (pod set) keeps its active Pods and as
 * many inactive ones as it still lacks, the best kept
 * (inactive_kept_before); the other inactive Pods are replaced and lose
 * the pod finalizer; a kept Pod (a replacement) that does not own the
 * Workload yet becomes an owner (Kueue's group Workload is owned by
 * every Pod it counts). A StatefulSet's Workload keeps its one owner. */
static int replaced_and_owners(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	char(*roles)[9] = cu_calloc(in->n_pods + 1, sizeof(*roles));
	bool *keep = cu_calloc(in->n_pods + 1, sizeof(*keep));
	size_t i, k, s;
	int rc = CU_OK;

	if (roles == NULL || keep == NULL) {
		rc = rec__nomem(err, "pod group");
		goto out;
	}
	for (i = 0; i < in->n_pods && rc == CU_OK; i++)
		rc = role_of(in->pods[i], roles[i], err);
	for (s = 0; s < wl->spec.n_pod_sets && rc == CU_OK; s++) {
		const char *role = wl->spec.pod_sets[s].name;
		long active = 0, idle = 0, spare;

		for (i = 0; role != NULL && i < in->n_pods; i++) {
			if (strcmp(roles[i], role) != 0)
				continue;
			if (inactive(in->pods[i])) {
				idle++;
			} else {
				active++;
				keep[i] = true;
			}
		}
		/* inactive Pods beyond what the role lacks */
		spare = idle + active - wl->spec.pod_sets[s].count;
		if (spare > idle)
			spare = idle;
		for (i = 0; role != NULL && i < in->n_pods && rc == CU_OK;
		     i++) {
			long rank = 0;

			if (strcmp(roles[i], role) != 0 ||
			    !inactive(in->pods[i]))
				continue;
			for (k = 0; k < in->n_pods; k++)
				rank += k != i && strcmp(roles[k], role) == 0 &&
					inactive(in->pods[k]) &&
					inactive_kept_before(
					    in->pods[k], in->pods[i]);
			keep[i] = rank < idle - (spare > 0 ? spare : 0);
			if (!keep[i])
				rc = rec__pod_unfinalize(
				    in->pods[i], in->ns, p, err);
		}
	}
	if (rc == CU_OK && !owned_by_parent(wl))
		rc = add_owners(in, keep, p, err);
out:
	cu_free(roles);
	cu_free(keep);
	return rc;
}

/* ---- the reconciler --------------------------------------------------- */

/* The Workload loses cueue's finalizer (when it has it). */
static int unfinalize(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	json_t *fp = NULL;

	if (rec__wl_drop_finalizer_patch(in->wl, &fp, err) != CU_OK)
		return err->code;
	return fp == NULL ? CU_OK
			  : add(p, REC_TARGET_WORKLOAD, REC_WRITE_PATCH, in->ns,
				in->name, fp, REC_EXPECT_NONE, false, err);
}

/* The Workload is being deleted while the group has Pods (its Pods
 * preempted and deleted, and the group's owner, a StatefulSet, made new
 * ones before the Workload went): the running Pods stop, then the
 * Workload loses its finalizer, so that it goes and the group's next
 * reconcile makes a new one. Without this the group waited gated
 * forever behind a Workload that could never go. */
static int deleting(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	bool wrote;

	if (stop(in, p, &wrote, err) != CU_OK ||
	    unfinalize_pods(in, p, err) != CU_OK) /* Kueue's Stop */
		return err->code;
	return wrote || any_active(in) ? CU_OK : unfinalize(in, p, err);
}

static int gone(
    const struct rec_pod_group_in *in, struct rec_plan *p, cu_error *err)
{
	if (unfinalize(in, p, err) != CU_OK)
		return err->code;
	if (in->wl->meta.has_deletion)
		return CU_OK;
	return add(p, REC_TARGET_WORKLOAD, REC_WRITE_DELETE, in->ns, in->name,
	    NULL, REC_EXPECT_NONE, false, err);
}

/* ---- a parent StatefulSet (Kueue's statefulset integration) ---------- */

#define STS_GVK "apps/v1, Kind=StatefulSet"

bool rec_pod_group_parent_owned(const struct api_workload *wl)
{
	size_t i;

	for (i = 0; wl != NULL && i < wl->meta.n_owner_refs; i++) {
		const struct api_owner_ref *r = &wl->meta.owner_refs[i];

		if (r->kind != NULL && strcmp(r->kind, "StatefulSet") == 0 &&
		    r->api_version != NULL &&
		    strcmp(r->api_version, "apps/v1") == 0)
			return true;
	}
	return false;
}

/* The Workload w [borrowed] owned by the StatefulSet sts [borrowed]
 * instead of by its Pods, as Kueue's statefulset reconciler makes it. */
static int own_by_parent(const json_t *sts, json_t *w)
{
	json_t *md = json_object_get(w, "metadata");
	const char *name = meta_str(sts, "name"), *uid = meta_str(sts, "uid");
	json_t *l = api_json_obj_child(md, "labels");
	json_t *a = api_json_obj_child(md, "annotations");

	if (l == NULL || a == NULL ||
	    json_object_set_new(md, "ownerReferences",
		json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "apps/v1",
		    "kind", "StatefulSet", "name", name, "uid", uid)) != 0 ||
	    json_object_set_new(l, REC_LABEL_JOB_UID, json_string(uid)) != 0 ||
	    json_object_set_new(
		a, "kueue.x-k8s.io/job-owner-gvk", json_string(STS_GVK)) != 0 ||
	    json_object_set_new(
		a, "kueue.x-k8s.io/job-owner-name", json_string(name)) != 0)
		return CU_ENOMEM;
	return CU_OK;
}

static json_int_t parent_replicas(const json_t *sts)
{
	const json_t *v =
	    json_object_get(json_object_get(sts, "spec"), "replicas");

	return json_is_integer(v) ? json_integer_value(v) : 1;
}

static int32_t podset_total(const struct api_workload *wl)
{
	int32_t n = 0;
	size_t i;

	for (i = 0; i < wl->spec.n_pod_sets; i++)
		n += wl->spec.pod_sets[i].count;
	return n;
}

/* A parent-owned Workload, neither finished nor being deleted: *done
 * when this decided (Kueue's statefulset reconciler: on hold at zero
 * replicas, the hold cleared on scale-up; never deleted for want of
 * Pods while the StatefulSet exists). */
static int parent_step(const struct rec_pod_group_in *in, int64_t now_ns,
    struct rec_plan *out, bool *done, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	json_int_t replicas = parent_replicas(in->parent);
	json_t *patch = NULL;
	cu_error serr;

	*done = true;
	if (replicas == 0) {
		if (rec_wl_status_hold(wl, true,
			"StatefulSet scaled to zero; workload on hold", now_ns,
			&patch, &serr) != CU_OK)
			return rec__plan_compose_error(out, &serr, err);
		return patch == NULL
			   ? CU_OK
			   : wl_write(out, in, REC_WRITE_STATUS, patch, err);
	}
	if (rec_workload_on_hold(wl)) {
		/* Scaled up to another size than before: made anew. */
		if (replicas != podset_total(wl))
			return gone(in, out, err);
		if (rec_wl_status_hold(wl, false,
			"Workload no longer on hold; waiting for quota "
			"reservation",
			now_ns, &patch, &serr) != CU_OK)
			return rec__plan_compose_error(out, &serr, err);
		return patch == NULL
			   ? CU_OK
			   : wl_write(out, in, REC_WRITE_STATUS, patch, err);
	}
	if (in->n_pods > 0) {
		*done = false;
		return CU_OK;
	}
	/* No Pod (preempted, the StatefulSet recreates them gated): the
	 * same Workload gives its quota back and is queued again. */
	if (api_conditions_true(&wl->status.conditions, REC_COND_EVICTED) &&
	    rec_wl_status_release(wl, now_ns, &patch, &serr) == CU_OK &&
	    patch != NULL)
		return wl_write(out, in, REC_WRITE_STATUS, patch, err);
	return CU_OK;
}

/* A group neither finished nor gone, its excess Pods trimmed. */
static int step(const struct rec_job_view *view,
    const struct rec_pod_group_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err)
{
	const struct api_workload *wl = in->wl;
	json_t *patch = NULL, *w = NULL;
	bool wrote, holds, admitted, evicted;
	cu_error serr;

	if (wl == NULL) {
		/* All or nothing: a group short of its total count waits
		 * (with fast admission, for its first Pod only). */
		if (in->total <= 0 || live_pods(in) == 0 ||
		    (live_pods(in) < (size_t)in->total && !fast_admission(in)))
			return CU_OK;
		if (build(view, in, &w, &serr) != CU_OK || w == NULL)
			return rec__plan_compose_error(out, &serr, err);
		if (in->parent != NULL &&
		    own_by_parent(in->parent, w) != CU_OK) {
			json_decref(w);
			return rec__nomem(err, "pod group owner");
		}
		return wl_write(out, in, REC_WRITE_CREATE, w, err);
	}
	holds = rec_workload_holds_quota(wl);
	admitted = holds && api_conditions_true(
				&wl->status.conditions, REC_COND_ADMITTED);
	evicted = api_conditions_true(&wl->status.conditions, REC_COND_EVICTED);
	if (admitted && !evicted)
		return start(view, in, out, err);
	if (stop(in, out, &wrote, err) != CU_OK)
		return err->code;
	if (!wrote && evicted && holds && !any_active(in) &&
	    rec_wl_status_release(wl, now_ns, &patch, &serr) == CU_OK &&
	    patch != NULL)
		return wl_write(out, in, REC_WRITE_STATUS, patch, err);
	return CU_OK;
}

int rec_pod_group_reconcile(const struct rec_job_view *view,
    const struct rec_pod_group_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err)
{
	const struct api_workload *wl;
	struct rec_pod_group_in kept;
	json_t *patch = NULL;
	bool ok = false;
	cu_error serr;
	int rc;

	if (view == NULL || in == NULL || out == NULL || in->ns == NULL ||
	    in->name == NULL || view->admitted_flavors == NULL ||
	    view->local_queue_exists == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "pod group reconciler: missing input");
	if (!view->managed || view->wl_awaited)
		return CU_OK;
	wl = in->wl;
	if (wl != NULL && in->parent != NULL &&
	    rec_pod_group_parent_owned(wl) && !wl->meta.has_deletion &&
	    !api_conditions_true(&wl->status.conditions, REC_COND_FINISHED)) {
		bool done;

		if ((rc = parent_step(in, now_ns, out, &done, err)) != CU_OK ||
		    done)
			return rc;
	}
	/* Kueue makes a StatefulSet's Workload only while it has replicas. */
	if (wl == NULL && in->parent != NULL &&
	    parent_replicas(in->parent) == 0)
		return CU_OK;
	if (in->n_pods == 0)
		return wl != NULL ? gone(in, out, err) : CU_OK;
	if (wl != NULL &&
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED)) {
		if (rec__wl_drop_finalizer_patch(wl, &patch, err) != CU_OK)
			return err->code;
		/* its result accounted: the Pods may go (Kueue's
		 * finalizeJob) */
		if (patch != NULL &&
		    wl_write(out, in, REC_WRITE_PATCH, patch, err) != CU_OK)
			return err->code;
		return unfinalize_pods(in, out, err);
	}
	if (wl != NULL && wl->meta.has_deletion)
		return deleting(in, out, err);
	if (group_finished(in, &ok)) {
		if (wl == NULL)
			return unfinalize_pods(in, out, err);
		if (rec_wl_status_finish(wl,
			ok ? REC_FINISHED_SUCCEEDED : REC_FINISHED_FAILED,
			ok ? "Pods succeeded" : "Pods failed", now_ns, &patch,
			&serr) == CU_OK &&
		    patch != NULL)
			return wl_write(out, in, REC_WRITE_STATUS, patch, err);
		return CU_OK;
	}
	if (trim(in, out, &kept, err) != CU_OK)
		return err->code;
	rc = wl == NULL ? unfinalize_inactive(&kept, out, err)
			: replaced_and_owners(&kept, out, err);
	if (rc == CU_OK)
		rc = step(view, &kept, now_ns, out, err);
	cu_free((void *)kept.pods);
	return rc;
}
