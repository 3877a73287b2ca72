/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/provreq.c - the ProvisioningRequest admission check
 * controller (controllerName kueue.x-k8s.io/provisioning-request), the
 * process side of reconcile/provreq.c, as Kueue's
 * pkg/controller/admissionchecks/provisioning:
 *
 *  - its AdmissionChecks are marked Active while their parameters name a
 *    ProvisioningRequestConfig that exists (else Active=False,
 *    BadParametersRef);
 *  - a Workload holding quota whose check is not Ready gets a
 *    ProvisioningRequest (autoscaling.x-k8s.io/v1) and one PodTemplate
 *    per pod set it covers, both owned by the Workload; once the request
 *    is cached, its templates are handed over to it (controller owner);
 *  - the request's conditions become the check's state (Pending, Ready
 *    with the consume annotations as podSetUpdates, Retry with a
 *    backoff, Rejected), with Kueue's AdmissionCheckUpdated events; a
 *    retried check gets a new request (attempt + 1);
 *  - requests of finished or evicted Workloads, and requests no check
 *    uses any more, are deleted.
 *
 * Everything is read from the informers' caches (the ProvisioningRequest
 * and PodTemplate ones select label kueue.x-k8s.io/managed=true and are
 * optional: a cluster without the ProvisioningRequest CRD is ready all
 * the same); every write goes through the pipeline with an expectation,
 * so a request is never created twice while the first is in flight.
 */
#include <string.h>

#include "api/json.h"
#include "api/wire.h"
#include "controller/ctl_int.h"

#define KIND_PR "ProvisioningRequest"
#define KIND_PT "PodTemplate"
#define KIND_AC "AdmissionCheck"

/* ---- the AdmissionChecks' Active condition --------------------------- */

static json_t *prc_of(ctl *c, const struct api_admission_check *ac)
{
	if (c->inf[INF_PRC] == NULL || !ac->spec.has_parameters ||
	    ac->spec.parameters.name == NULL)
		return NULL;
	return api_informer_get(
	    c->inf[INF_PRC], NULL, ac->spec.parameters.name);
}

static void sync_check(json_t *obj, void *payload)
{
	ctl *c = payload;
	struct api_admission_check ac;
	const char *name = ctl_jmeta(obj, "name");
	const struct api_condition *cur;
	char *msg = NULL, now[CU_TIME_RFC3339_LEN];
	struct api_condition_set set = {
	    "Active", API_COND_UNSET, NULL, NULL, true, 0};
	json_t *status, *patch;
	struct ctl_pipe_write *w;
	cu_error err;
	bool active;

	if (name == NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(KIND_AC, "", name), obj))
		return;
	cu_error_clear(&err);
	if (api_admission_check_decode(&ac, obj, &err) != CU_OK)
		return;
	if (ac.spec.controller_name == NULL ||
	    strcmp(ac.spec.controller_name, REC_PROVREQ_CONTROLLER) != 0) {
		api_admission_check_dispose(&ac);
		return;
	}
	active = rec_provreq_active(&ac, prc_of(c, &ac), &msg);
	cur = api_conditions_find(&ac.status.conditions, "Active");
	if (cur != NULL &&
	    cur->status == (active ? API_COND_TRUE : API_COND_FALSE)) {
		cu_free(msg);
		api_admission_check_dispose(&ac);
		return;
	}
	set.status = active ? API_COND_TRUE : API_COND_FALSE;
	set.reason = active ? "Active" : "BadParametersRef";
	set.message = active ? "The admission check is active" : msg;
	set.observed_generation =
	    ac.meta.has_generation ? ac.meta.generation : 0;
	cu_time_format_rfc3339(cu_time_now_ns(), now);
	/* the cached conditions, copied: the patch replaces the list */
	status = json_object();
	if (status != NULL && api_conditions_encode_status(status,
				  &ac.status.conditions, false, NULL) != CU_OK)
		json_object_clear(status);
	patch =
	    status != NULL &&
		    api_conditions_set_json(status, &set, now, &err) == CU_OK
		? json_pack("{s:{s:s}, s:O}", "metadata", "resourceVersion",
		      ac.meta.resource_version ? ac.meta.resource_version : "",
		      "status", status)
		: NULL;
	json_decref(status);
	if (patch != NULL) {
		w = ctl_pipe_queue(c->pipe, CTL_PIPE_QUEUE_STATUS,
		    CTL_RES(INF_ACHECK), NULL, name, NULL, patch);
		if (w != NULL)
			ctl_pipe_expect(
			    c->pipe, w, CTL_K3(KIND_AC, "", name), true);
	}
	cu_free(msg);
	api_admission_check_dispose(&ac);
}

void ctl_provreq_sync_checks(ctl *c)
{
	if (!ctl_may_write(c) || c->inf[INF_ACHECK] == NULL)
		return;
	api_informer_foreach(c->inf[INF_ACHECK], sync_check, c);
}

/* ---- a Workload's requests -------------------------------------------- */

struct owned_prs {
	json_t **v; /* [borrowed] cached requests */
	size_t n, cap;
};

static void collect(json_t *obj, void *payload)
{
	struct owned_prs *o = payload;
	json_t **nv;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4;

		nv = cu_realloc(o->v, cap * sizeof(*nv));
		if (nv == NULL)
			return;
		o->v = nv;
		o->cap = cap;
	}
	o->v[o->n++] = obj;
}

/* Is a write to kind ns/name in flight, or its result not cached yet? */
static bool busy(
    ctl *c, const char *kind, const char *ns, const char *name, json_t *cached)
{
	return cached != NULL
		   ? ctl_pipe_stale(c->pipe, CTL_K3(kind, ns, name), cached)
		   : ctl_pipe_awaits(c->pipe, CTL_K3(kind, ns, name));
}

static void delete_pr(ctl *c, json_t *pr, const char *wl_name)
{
	struct api_meta m;
	struct ctl_pipe_write *w;

	if (api_object_meta_decode(&m, pr, NULL) != CU_OK)
		return;
	if (m.namespace_ == NULL || m.name == NULL || m.has_deletion ||
	    busy(c, KIND_PR, m.namespace_, m.name, pr))
		goto out;
	w = ctl_pipe_queue(c->pipe, CTL_PIPE_WL_DELETE, CTL_RES(INF_PROVREQ),
	    m.namespace_, m.name, NULL, json_object());
	if (w == NULL)
		goto out;
	ctl_pipe_expect(
	    c->pipe, w, CTL_K3(KIND_PR, m.namespace_, m.name), true);
	ctl_pipe_set_owner(w, CTL_K3(CTL_KIND_WL, m.namespace_, wl_name));
out:
	api_meta_dispose(&m);
}

/* One check of the Workload this controller drives. */
struct pcheck {
	const char *name;   /* [borrowed from the new status] */
	json_t *prc_obj;    /* [borrowed] cached config, NULL: inactive */
	struct rec_prc prc; /* decoded from prc_obj */
	bool needed;
	json_t *pr; /* [borrowed] active or last request, or NULL */
	bool has_dpr;
	struct api_provreq dpr; /* pr decoded when has_dpr */
	/* [borrowed] its state in the Workload being reconciled */
	struct api_admission_check_state *check;
};

/* The check's config when the check is ours; false when it is not. */
static bool our_check(ctl *c, const char *name, struct pcheck *pc)
{
	json_t *obj = c->inf[INF_ACHECK] != NULL
			  ? api_informer_get(c->inf[INF_ACHECK], NULL, name)
			  : NULL;
	struct api_admission_check ac;
	char *msg = NULL;
	cu_error err = {0};
	bool ours;

	memset(pc, 0, sizeof(*pc));
	pc->name = name;
	if (obj == NULL || api_admission_check_decode(&ac, obj, &err) != CU_OK)
		return false;
	ours = ac.spec.controller_name != NULL &&
	       strcmp(ac.spec.controller_name, REC_PROVREQ_CONTROLLER) == 0;
	if (ours && rec_provreq_active(&ac, prc_of(c, &ac), &msg)) {
		pc->prc_obj = prc_of(c, &ac);
		if (rec_prc_decode(pc->prc_obj, &pc->prc, &err) != CU_OK)
			pc->prc_obj = NULL;
	}
	cu_free(msg);
	api_admission_check_dispose(&ac);
	return ours;
}

/* activeOrLastPRForChecks: the owned request of the check with the
 * highest attempt, matching the config. */
static json_t *active_pr(
    const struct owned_prs *o, const char *wl, const struct pcheck *pc)
{
	json_t *best = NULL;
	int32_t best_a = -1, a;
	size_t i;

	if (pc->prc_obj == NULL || !pc->needed)
		return NULL;
	for (i = 0; i < o->n; i++) {
		a = rec_provreq_attempt(
		    ctl_jmeta(o->v[i], "name"), wl, pc->name);
		if (a < 0 || !rec_provreq_synced_with(o->v[i], &pc->prc))
			continue;
		if (a > best_a) {
			best_a = a;
			best = o->v[i];
		}
	}
	return best;
}

/* The PodTemplate's owner references with the controller one replaced
 * by the request's [owned], or NULL when pr already controls it (or out
 * of memory). */
static json_t *handed_over(
    const struct api_meta *pt, const json_t *pr, const char *uid)
{
	json_t *nrefs = json_array();
	size_t k;

	for (k = 0; nrefs != NULL && k < pt->n_owner_refs; k++) {
		const struct api_owner_ref *r = &pt->owner_refs[k];

		if (!(r->has_controller && r->controller))
			json_array_append_new(nrefs, api_owner_ref_encode(r));
		else if (r->uid != NULL && strcmp(r->uid, uid) == 0) {
			json_decref(nrefs);
			return NULL;
		}
	}
	if (nrefs != NULL)
		json_array_append_new(
		    nrefs, rec_provreq_owner(pr, "autoscaling.x-k8s.io/v1",
			       "ProvisioningRequest"));
	return nrefs;
}

/* Templates of cached request pr [borrowed] still controlled by the
 * Workload: handed over to the request. */
static void adopt_templates(ctl *c, json_t *pr)
{
	struct api_provreq dpr;
	struct api_meta m;
	json_t *pt, *nrefs, *patch;
	struct ctl_pipe_write *w;
	const char *ns, *uid;
	size_t i;

	if (c->inf[INF_PODTEMPLATE] == NULL ||
	    api_provreq_decode(&dpr, pr, NULL) != CU_OK)
		return;
	ns = dpr.meta.namespace_;
	uid = dpr.meta.uid;
	for (i = 0; uid != NULL && ns != NULL && i < dpr.spec.n_podsets; i++) {
		const char *name = dpr.spec.podsets[i].template_name;

		pt = api_informer_get(c->inf[INF_PODTEMPLATE], ns, name);
		if (pt == NULL || busy(c, KIND_PT, ns, name, pt) ||
		    api_object_meta_decode(&m, pt, NULL) != CU_OK)
			continue;
		nrefs = handed_over(&m, pr, uid);
		patch = nrefs != NULL
			    ? json_pack("{s:{s:o, s:s?}}", "metadata",
				  "ownerReferences", nrefs, "resourceVersion",
				  m.resource_version)
			    : NULL;
		api_meta_dispose(&m);
		w = patch ? ctl_pipe_queue(c->pipe, CTL_PIPE_WL_PATCH,
				CTL_RES(INF_PODTEMPLATE), ns, name, NULL, patch)
			  : NULL;
		if (w != NULL)
			ctl_pipe_expect(
			    c->pipe, w, CTL_K3(KIND_PT, ns, name), true);
	}
	api_provreq_dispose(&dpr);
}

/* Create the request pr [consumed] and its templates [consumed]. */
static void create(ctl *c, json_t *wl, json_t *pr, json_t *templates)
{
	const char *ns = ctl_jmeta(pr, "namespace"),
		   *name = ctl_jmeta(pr, "name");
	const char *wname = ctl_jmeta(wl, "name");
	struct ctl_pipe_write *w;
	json_t *t;
	size_t i;
	char *note;

	json_array_foreach(templates, i, t)
	{
		const char *tn = ctl_jmeta(t, "name");

		if (tn == NULL ||
		    (c->inf[INF_PODTEMPLATE] != NULL &&
			api_informer_get(c->inf[INF_PODTEMPLATE], ns, tn)) ||
		    ctl_pipe_awaits(c->pipe, CTL_K3(KIND_PT, ns, tn)))
			continue;
		w = ctl_pipe_queue(c->pipe, CTL_PIPE_WL_CREATE,
		    CTL_RES(INF_PODTEMPLATE), ns, tn, NULL, json_incref(t));
		if (w != NULL)
			ctl_pipe_expect(
			    c->pipe, w, CTL_K3(KIND_PT, ns, tn), true);
	}
	json_decref(templates);
	w = ctl_pipe_queue(c->pipe, CTL_PIPE_WL_CREATE, CTL_RES(INF_PROVREQ),
	    ns, name, NULL, json_incref(pr));
	if (w != NULL) {
		ctl_pipe_expect(c->pipe, w, CTL_K3(KIND_PR, ns, name), true);
		ctl_pipe_set_owner(w, CTL_K3(CTL_KIND_WL, ns, wname));
		/* Kueue's event, once the create succeeded */
		note = cu_asprintf("Created ProvisioningRequest: \"%s\"", name);
		ctl_pipe_set_event(w, "ProvisioningRequestCreated", note);
	}
	json_decref(pr);
}

/* A new request for check pc of wl when it needs one. */
static void maybe_create(
    ctl *c, json_t *wl, const struct api_workload *dwl, const struct pcheck *pc)
{
	const char *ns = ctl_jmeta(wl, "namespace"),
		   *wname = ctl_jmeta(wl, "name");
	struct api_resource_flavor *fl = NULL;
	size_t nfl = 0, i;
	json_t *pr = NULL, *pts = NULL;
	int32_t attempt;
	char *name;
	cu_error err;

	if (pc->prc_obj == NULL || !pc->needed ||
	    (pc->pr != NULL && !pc->has_dpr) ||
	    !rec_provreq_wants_new(
		pc->check, dwl, pc->has_dpr ? &pc->dpr : NULL, &attempt))
		return;
	name = rec_provreq_name(wname, pc->name, attempt);
	if (name == NULL ||
	    api_informer_get(c->inf[INF_PROVREQ], ns, name) != NULL ||
	    ctl_pipe_awaits(c->pipe, CTL_K3(KIND_PR, ns, name)) ||
	    ctl_pipe_retrying(c->pipe, CTL_K3(KIND_PR, ns, name))) {
		cu_free(name);
		return;
	}
	cu_free(name);
	cu_error_clear(&err);
	if (ctl_admitted_flavors(c, dwl, &fl, &nfl, &err) != CU_OK)
		nfl = 0; /* the templates without the flavors' labels */
	if (rec_provreq_new(dwl, pc->name, &pc->prc, attempt, fl, nfl, &pr,
		&pts, &err) != CU_OK)
		cu_warn(
		    "provisioning request for %s/%s: %s", ns, wname, err.msg);
	else
		create(c, wl, pr, pts);
	for (i = 0; i < nfl; i++)
		api_resource_flavor_dispose(&fl[i]);
	cu_free(fl);
}

/* The check states' announcements: Kueue's AdmissionCheckUpdated event
 * for a check whose state moved from before. */
static void announce(ctl *c, json_t *wl,
    const struct api_admission_check_state *chk, enum api_check_state before)
{
	char *m;

	if (chk->state == before)
		return;
	m = rec_provreq_update_message(chk->name, api_check_state_name(before),
	    api_check_state_name(chk->state), chk->message);
	if (m != NULL)
		ctl_emit(c, wl, REC_EVENT_NORMAL, "AdmissionCheckUpdated", m);
	cu_free(m);
}

/* The states of our checks in dwl [changed in place] synced with their
 * requests; true when one changed. pcs[0..*n) are filled. */
static bool sync_states(ctl *c, json_t *wl, struct api_workload *dwl,
    const struct owned_prs *o, struct pcheck *pcs, size_t *n)
{
	const char *ns = dwl->meta.namespace_, *wname = dwl->meta.name;
	int64_t now_ns = cu_time_now_ns();
	bool changed = false;
	cu_error err;
	size_t i;

	/* lastTransitionTime is written in whole seconds */
	now_ns -= now_ns % 1000000000LL;
	for (i = 0; i < dwl->status.n_admission_checks; i++) {
		struct api_admission_check_state *chk =
		    &dwl->status.admission_checks[i];
		enum api_check_state before = chk->state;
		struct pcheck *pc = &pcs[*n];

		if (chk->name == NULL || !our_check(c, chk->name, pc))
			continue;
		(*n)++;
		pc->check = chk;
		if (pc->prc_obj != NULL && rec_provreq_needed(dwl, &pc->prc,
					       &pc->needed, &err) != CU_OK) {
			cu_warn("workload %s/%s: %s", ns, wname, err.msg);
			pc->prc_obj = NULL;
		}
		pc->pr = active_pr(o, wname, pc);
		pc->has_dpr = pc->pr != NULL && api_provreq_decode(&pc->dpr,
						    pc->pr, NULL) == CU_OK;
		if (pc->pr != NULL && !pc->has_dpr)
			continue; /* not a request we can read: left alone */
		if (rec_provreq_sync_state(chk, dwl,
			pc->prc_obj ? &pc->prc : NULL, pc->needed,
			pc->has_dpr ? &pc->dpr : NULL, now_ns)) {
			changed = true;
			announce(c, wl, chk, before);
		}
	}
	return changed;
}

static void reconcile(ctl *c, json_t *wl, struct api_workload *dwl)
{
	const char *ns = dwl->meta.namespace_, *wname = dwl->meta.name;
	struct owned_prs o = {0};
	json_t *from = NULL, *patch;
	struct pcheck *pcs = NULL;
	size_t i, k, n = 0;
	bool keep;
	cu_error err;

	api_informer_foreach_owned(
	    c->inf[INF_PROVREQ], dwl->meta.uid, collect, &o);
	if (api_conditions_true(&dwl->status.conditions, REC_COND_FINISHED) ||
	    api_conditions_true(&dwl->status.conditions, REC_COND_EVICTED)) {
		for (i = 0; i < o.n; i++)
			delete_pr(c, o.v[i], wname);
		cu_free(o.v);
		return;
	}
	if (!rec_workload_holds_quota(dwl)) {
		cu_free(o.v);
		return;
	}
	cu_error_clear(&err);
	pcs = cu_calloc(dwl->status.n_admission_checks + 1, sizeof(*pcs));
	if (pcs == NULL || api_workload_encode(&from, dwl, &err) != CU_OK)
		goto out;
	if (sync_states(c, wl, dwl, &o, pcs, &n)) {
		patch = NULL;
		if (rec_provreq_status_patch(from, dwl, &patch, &err) != CU_OK)
			cu_warn("workload %s/%s: %s", ns, wname, err.msg);
		else if (patch != NULL)
			ctl_wl_write(
			    c, CTL_PIPE_WL_STATUS, ns, wname, patch, NULL);
	}
	/* requests no check uses */
	for (i = 0; i < o.n; i++) {
		keep = false;
		for (k = 0; k < n && !keep; k++)
			keep = pcs[k].pr == o.v[i];
		if (!keep)
			delete_pr(c, o.v[i], wname);
	}
	for (k = 0; k < n; k++) {
		maybe_create(c, wl, dwl, &pcs[k]);
		if (pcs[k].pr != NULL)
			adopt_templates(c, pcs[k].pr);
	}
out:
	for (k = 0; pcs != NULL && k < n; k++)
		if (pcs[k].has_dpr)
			api_provreq_dispose(&pcs[k].dpr);
	cu_free(pcs);
	json_decref(from);
	cu_free(o.v);
}

void ctl_provreq_workload(ctl *c, const char *const *key)
{
	const char *ns = key[0], *name = key[1];
	struct api_workload dwl;
	json_t *wl;
	cu_error err;

	if (c->inf[INF_PROVREQ] == NULL ||
	    api_informer_absent(c->inf[INF_PROVREQ]) ||
	    !api_informer_synced(c->inf[INF_PROVREQ]) ||
	    c->inf[INF_ACHECK] == NULL || !ctl_may_write(c) ||
	    api_informer_count(c->inf[INF_ACHECK]) == 0)
		return;
	wl = api_informer_get(c->inf[INF_WL], ns, name);
	/* The common case costs one lookup: no checks, no requests. */
	if (wl != NULL &&
	    json_array_size(json_object_get(
		json_object_get(wl, "status"), "admissionChecks")) == 0 &&
	    api_informer_count(c->inf[INF_PROVREQ]) == 0)
		return;
	if (wl == NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, name), wl) ||
	    ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, ns, name)))
		return;
	json_incref(wl);
	cu_error_clear(&err);
	if (api_workload_decode(&dwl, wl, &err) == CU_OK) {
		if (dwl.meta.uid != NULL && !dwl.meta.has_deletion)
			reconcile(c, wl, &dwl);
		api_workload_dispose(&dwl);
	}
	json_decref(wl);
}

/* handleError: message msg [borrowed] on the checks of Workload wl
 * [borrowed] the failed request name was for; the status patch
 * [owned: json_decref] or NULL (none, or out of memory). */
static json_t *failed_patch(json_t *wl, const char *name, const char *msg)
{
	struct api_workload dwl;
	json_t *from = NULL, *patch = NULL;
	bool found = false;
	cu_error err;
	size_t i;

	cu_error_clear(&err);
	if (api_workload_decode(&dwl, wl, &err) != CU_OK)
		return NULL;
	if (api_workload_encode(&from, &dwl, &err) != CU_OK)
		goto out;
	for (i = 0; i < dwl.status.n_admission_checks; i++) {
		struct api_admission_check_state *chk =
		    &dwl.status.admission_checks[i];
		char *m;

		if (chk->name == NULL ||
		    rec_provreq_attempt(name, dwl.meta.name, chk->name) < 0 ||
		    (m = cu_strdup(msg)) == NULL)
			continue;
		cu_free(chk->message);
		chk->message = m;
		found = true;
	}
	if (found &&
	    rec_provreq_status_patch(from, &dwl, &patch, &err) != CU_OK)
		patch = NULL;
out:
	json_decref(from);
	api_workload_dispose(&dwl);
	return patch;
}

void ctl_provreq_create_failed(
    ctl *c, const struct ctl_pipe_write *w, const struct api_response *resp)
{
	const char *ns = w->owner[1], *wname = w->owner[2];
	json_t *wl, *patch;
	char *msg;

	/* AlreadyExists: an earlier attempt of ours raced this one; the
	 * cache will show it (Kueue reports nothing either). */
	if (resp->code == 409 || ns == NULL || wname == NULL || w->name == NULL)
		return;
	wl = api_informer_get(c->inf[INF_WL], ns, wname);
	if (wl == NULL)
		return;
	msg = cu_asprintf("Error creating ProvisioningRequest \"%s\": %s",
	    w->name, resp->message[0] ? resp->message : resp->reason);
	if (msg == NULL)
		return;
	ctl_emit(c, wl, REC_EVENT_WARNING, "FailedCreate", msg);
	if (ctl_may_write(c) &&
	    !ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, ns, wname)) &&
	    (patch = failed_patch(wl, w->name, msg)) != NULL)
		ctl_wl_write(c, CTL_PIPE_WL_STATUS, ns, wname, patch, NULL);
	cu_free(msg);
}

void ctl_provreq_mark(ctl *c, enum inf_id id, json_t *obj)
{
	struct api_meta m;
	size_t i;

	(void)id;
	if (api_object_meta_decode(&m, obj, NULL) != CU_OK)
		return;
	for (i = 0; i < m.n_owner_refs; i++)
		if (strcmp(m.owner_refs[i].kind, "Workload") == 0)
			(void)ctl_keys_put(&c->dirty_wl,
			    CTL_K2(m.namespace_ ? m.namespace_ : "",
				m.owner_refs[i].name));
	api_meta_dispose(&m);
}
