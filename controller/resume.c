/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/resume.c - restart: the ledger's decisions first
 * (docs/architecture.md lesson 3). Decisions recorded before a restart
 * are adopted or released before any new cycle; decisions whose
 * announcement waited for the cache (deferred) are announced from the
 * ledger's record.
 */
#include <string.h>

#include "controller/ctl_int.h"

/* docs/architecture.md lesson 3: a decision recorded is announced before
 * anything new is decided. */

/* Every live decision: [uid, state]. */
static int collect_live(const store_decision *d, void *payload)
{
	return json_array_append_new(
		   payload, json_pack("[s,i]", d->uid, (int)d->state)) != 0;
}

/* The flavor of each request of qw [borrowed] as the decision sd
 * [borrowed] recorded it: frs[] in podset/request order, and the
 * assignment pa[] for the status write (uses[] owned by the caller).
 * false when the decision does not fit the Workload any more. */
static bool recorded_flavors(ctl *c, const struct que_wl *qw,
    const store_decision *sd, uint32_t *frs, int64_t *use,
    struct adm_podset_assignment *pa)
{
	size_t i, j, m, k = 0;

	for (i = 0; i < qw->n_podsets; i++) {
		const store_podset *sp = NULL;

		for (m = 0; m < sd->n_podsets; m++)
			if (strcmp(sd->podsets[m].name, qw->podsets[i].name) ==
			    0)
				sp = &sd->podsets[m];
		if (sp == NULL)
			return false;
		pa[i].name = qw->podsets[i].name;
		pa[i].count = sp->count;
		pa[i].n_uses = qw->podsets[i].n_req;
		pa[i].uses = cu_calloc(pa[i].n_uses + 1, sizeof(*pa[i].uses));
		if (pa[i].uses == NULL)
			return false;
		for (j = 0; j < qw->podsets[i].n_req; j++, k++) {
			const char *res =
			    que_resource_name(c->st, qw->podsets[i].req[j].res);
			const store_resource *r = NULL;
			struct que_flavor *f;

			for (m = 0; m < sp->n_resources; m++)
				if (strcmp(sp->resources[m].resource, res) == 0)
					r = &sp->resources[m];
			if (r == NULL ||
			    (f = que_flavor_get(c->st, r->flavor)) == NULL)
				return false;
			frs[k] = que_fr_find(
			    c->st, f->id, qw->podsets[i].req[j].res);
			use[k] = r->milli;
			pa[i].uses[j].resource = res;
			pa[i].uses[j].flavor = f->name;
			pa[i].uses[j].usage = r->milli;
		}
	}
	return true;
}

/* A decision recorded but maybe never announced: if the API shows the
 * Workload admitted, the ledger catches up; if it shows it pending, the
 * recorded decision is adopted by the engine and announced now, before
 * any new cycle; if the Workload is gone, so is the decision. */
static bool announce_recorded(
    ctl *c, struct que_wl *qw, int64_t now, bool adopt);

static void resume_one(ctl *c, const char *uid, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, uid);
	cu_error err;

	if (qw == NULL) {
		cu_info("recorded decision for Workload uid %s withdrawn: no "
			"active Workload with that uid (deleted, re-created or "
			"deactivated)",
		    uid);
		ctl_ledger_release(c, uid, now);
		return;
	}
	if (qw->where == QUE_WL_ADMITTED || qw->where == QUE_WL_EVICTING) {
		if (ctl_pipe_begin(c->pipe) == CU_OK &&
		    store_decision_set_state(
			c->ledger, uid, STORE_ADMITTED, now, &err) != CU_OK)
			cu_warn("ledger: %s", err.msg);
		return;
	}
	announce_recorded(c, qw, now, true);
}

/* Announce qw's decision as the ledger recorded it: the admission patch
 * on the cached Workload. adopt: the engine takes the decision first (a
 * restart); else it holds it already (a deferred announcement). Returns
 * false when nothing was sent; the decision is then released (adopt) or
 * left to the caller. */
/* A restart: the Workloads the API shows admitted are adopted already;
 * the recorded decision sd [borrowed] of qw (flavors frs[], usage use[],
 * n requests) is adopted only if it still fits on top of them and the
 * Workload wl [borrowed] as cached is still the one decided for. If not,
 * the decision is withdrawn from the ledger and qw waits as pending. */
static bool still_fits(ctl *c, const struct que_wl *qw,
    const store_decision *sd, const uint32_t *frs, const int64_t *use, size_t n,
    const struct api_workload *wl)
{
	struct que_recorded rec = {
	    qw->uid, sd->cluster_queue, sd->generation, frs, use, n};
	struct que_observed obs = {
	    wl->meta.has_generation ? wl->meta.generation : 0,
	    !rec_workload_inactive(wl)};
	enum que_refit fit = QUE_REFIT_FITS;
	char why[256];
	cu_error err;

	if (que_workload_fits_recorded(
		c->st, &rec, &obs, &fit, why, sizeof(why), &err) != CU_OK) {
		cu_warn("resume %s/%s: %s", qw->ns, qw->name, err.msg);
		return false;
	}
	if (fit == QUE_REFIT_FITS)
		return true;
	cu_info(
	    "recorded decision for %s/%s withdrawn: %s", qw->ns, qw->name, why);
	if (ctl_pipe_begin(c->pipe) == CU_OK &&
	    store_decision_withdraw(c->ledger, qw->uid, &err) != CU_OK)
		cu_warn("ledger: %s", err.msg);
	c->dirty_cycle = true; /* it waits as pending */
	return false;
}

static bool announce_recorded(
    ctl *c, struct que_wl *qw, int64_t now, bool adopt)
{
	const char *uid = qw->uid;
	store_decision *sd = NULL;
	struct adm_podset_assignment *pa = NULL;
	uint32_t *frs = NULL;
	int64_t *use = NULL;
	struct api_workload wl;
	struct adm_decision d;
	struct rec_admit_in in = {0};
	struct rec_admit_plan plan = {0};
	size_t i, n = 0;
	bool sent = false, has_cq;
	struct api_cluster_queue cq;
	cu_error err;
	int rc;

	if (store_decision_get(c->ledger, uid, &sd, &err) != CU_OK) {
		cu_warn("ledger: %s", err.msg);
		return false;
	}
	for (i = 0; i < qw->n_podsets; i++)
		n += qw->podsets[i].n_req;
	frs = cu_calloc(n + 1, sizeof(*frs));
	use = cu_calloc(n + 1, sizeof(*use));
	pa = cu_calloc(qw->n_podsets + 1, sizeof(*pa));
	if (frs == NULL || use == NULL || pa == NULL ||
	    !recorded_flavors(c, qw, sd, frs, use, pa)) {
		/* Queues changed under it: decided again by the engine. */
		cu_info("recorded decision for %s/%s no longer fits; released",
		    qw->ns, qw->name);
		if (adopt)
			ctl_ledger_release(c, uid, now);
		goto out;
	}
	if (ctl_decode_cached(c, qw->ns, qw->name, &wl) != CU_OK)
		goto out;
	if (adopt && !still_fits(c, qw, sd, frs, use, n, &wl))
		goto out_wl;
	if (adopt && que_workload_adopt(c->st, uid, sd->cluster_queue, frs,
			 sd->decided_ns, &err) != CU_OK) {
		cu_warn("resume %s/%s: %s", qw->ns, qw->name, err.msg);
		ctl_ledger_release(c, uid, now);
		goto out_wl;
	}
	if (adopt)
		ctl_tas_adopt_recorded(c, uid, sd);
	ctl_tas_fill(c, uid, pa, qw->n_podsets);
	if (adopt) {
		/* A partial admission holds the recorded counts, not the
		 * podSets' full ones (which stay held if the record is off). */
		int32_t counts[18];

		for (i = 0; i < qw->n_podsets && i < 18; i++)
			counts[i] = pa[i].count;
		if (que_workload_set_counts(c->st, uid, counts, &err) != CU_OK)
			cu_warn("resume %s/%s: %s", qw->ns, qw->name, err.msg);
	}
	memset(&d, 0, sizeof(d));
	d.kind = ADM_ADMIT;
	d.uid = qw->uid;
	d.cluster_queue = qw->cq ? qw->cq->name : sd->cluster_queue;
	d.podsets = pa;
	d.n_podsets = qw->n_podsets;
	ctl_pr_track(c, uid, true);
	has_cq = ctl_acheck_cq(c, d.cluster_queue, false, &cq);
	/* The one producer of admission writes; recorded already. */
	in.source = REC_ADMIT_FROM_CYCLE;
	in.ledger = REC_LEDGER_RESERVED;
	in.d = &d;
	in.w.where = qw->where;
	in.w.wl = &wl;
	in.pods_ready = c->pr.cfg.enable;
	in.cq = has_cq ? &cq.spec : NULL;
	in.queued_ns = qw->queue_ts;
	rc = rec_admission_write(&in, now, &plan, &err);
	if (has_cq)
		api_cluster_queue_dispose(&cq);
	if (rc != CU_OK || plan.step != REC_ADMIT_ANNOUNCE)
		cu_warn("resume %s/%s: %s", qw->ns, qw->name,
		    plan.warning != NULL ? plan.warning : "not announced");
	else if (plan.patch != NULL) {
		struct ctl_admission a = {.qw = qw,
		    .d = &d,
		    .wl = &wl,
		    .ns = qw->ns,
		    .name = qw->name};

		if (adopt)
			cu_info("announcing the recorded decision for %s/%s",
			    qw->ns, qw->name);
		sent = true;
		ctl_admission_write(c, &a, &plan, now);
	}
	rec_admit_plan_dispose(&plan);
out_wl:
	api_workload_dispose(&wl);
out:
	for (i = 0; pa != NULL && i < qw->n_podsets; i++)
		cu_free(pa[i].uses);
	cu_free(pa);
	cu_free(use);
	cu_free(frs);
	store_decision_free(sd);
	return sent;
}

/* Deferred announcements (decide_admit) whose Workload the cache now
 * shows as we last wrote it. A Workload gone, or one the engine no
 * longer holds, gives its decision back. */
void ctl_announce_deferred(ctl *c, int64_t now)
{
	struct ctl_kent **v;
	size_t i, n;

	/* In the order they were deferred (as before: deterministic). */
	if (ctl_keys_ordered(&c->dec.deferred, &v, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++) {
		const char *uid = v[i]->k[0];
		struct que_wl *qw = que_workload_get(c->st, uid);
		json_t *obj =
		    qw ? api_informer_get(c->inf[INF_WL], qw->ns, qw->name)
		       : NULL;
		bool st = obj != NULL &&
			  ctl_pipe_stale(c->pipe,
			      CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj);

		if (st)
			continue;
		if (qw == NULL || obj == NULL || qw->where != QUE_WL_ADMITTED ||
		    !announce_recorded(c, qw, now, false)) {
			ctl_withdraw(c, uid, now);
			ctl_ledger_release(c, uid, now);
			ctl_keys_del(&c->dec.in_flight, CTL_K1(uid));
		}
		ctl_keys_del(&c->dec.deferred, CTL_K1(uid));
	}
	cu_free(v);
}

void ctl_resume_ledger(ctl *c, int64_t now)
{
	json_t *uids = json_array(), *v;
	size_t i;
	cu_error err;

	if (uids == NULL)
		return;
	if (store_decision_foreach_live(c->ledger, collect_live, uids, &err) !=
	    CU_OK)
		cu_warn("ledger: %s", err.msg);
	json_array_foreach(uids, i, v)
	{
		const char *uid = json_string_value(json_array_get(v, 0));
		struct que_wl *qw;

		if (json_integer_value(json_array_get(v, 1)) ==
		    STORE_RESERVED) {
			resume_one(c, uid, now);
			continue;
		}
		/* ADMITTED or EVICTING, but the admission ended while we
		 * were down (the Workload finished, was cleared, deactivated
		 * or deleted): store.h's STORE_RECON_STALE, release it. The
		 * engine holds every Workload the API shows reserved by now
		 * (ctl_reconcile_workload ran on the synced cache). */
		qw = que_workload_get(c->st, uid);
		if (qw == NULL || (qw->where != QUE_WL_ADMITTED &&
				      qw->where != QUE_WL_EVICTING))
			ctl_ledger_release(c, uid, now);
		else
			ctl_tas_resume_replaced(c, uid);
	}
	json_decref(uids);
}
