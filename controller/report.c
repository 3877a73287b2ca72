/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/report.c - status reports: ClusterQueue and LocalQueue status
 * (usage, counts, Active), written only where they changed and within the
 * queue-status budget, oldest report first; Workload pending reasons,
 * once due and within the pending budget; and the queue gauges.
 * With fair sharing, also status.fairSharing.weightedShare of ClusterQueues
 * and Cohorts and the weighted-share gauges.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/ctl_int.h"

/* Quantities are kept in milli-units; metrics report units (cores,
 * bytes). */
static double milli_to_units(int64_t milli)
{
	return (double)milli / 1000.0;
}

/* Does the API show cached [borrowed; may be NULL] with a QuotaReserved
 * reason other than want [borrowed; may be NULL]? false when either is
 * not known. */
static bool shown_reason_differs(const json_t *cached, const char *want)
{
	struct api_conditions cs;
	const struct api_condition *q;
	bool differs;

	if (cached == NULL || want == NULL ||
	    api_conditions_decode(cached, &cs, NULL) != CU_OK)
		return false;
	q = api_conditions_find(&cs, REC_COND_QUOTA_RESERVED);
	differs =
	    q != NULL && q->reason != NULL && strcmp(q->reason, want) != 0;
	api_conditions_dispose(&cs);
	return differs;
}

/* Kueue's status.resourceRequests of a pending Workload: per podSet, its
 * requests times its count. [owned: json_decref]; NULL when out of
 * memory. */
static json_t *resource_requests(ctl *c, const struct que_wl *qw)
{
	json_t *a = json_array();
	uint32_t i, j;

	for (i = 0; a != NULL && i < qw->n_podsets; i++) {
		const struct que_podset *ps = &qw->podsets[i];
		json_t *o = json_pack("{s:s}", "name", ps->name), *res;

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
		if (ps->n_spec_req == 0)
			continue;
		res = json_object();
		if (res == NULL || json_object_set_new(o, "resources", res)) {
			json_decref(a);
			return NULL;
		}
		for (j = 0; j < ps->n_spec_req; j++) {
			const char *name =
			    que_resource_name(c->st, ps->req[j].res);
			char q[64];
			int64_t v;

			if (__builtin_mul_overflow(ps->req[j].per_pod,
				(int64_t)ps->full_count, &v))
				v = INT64_MAX;
			adm_format_quantity(name, v, q, sizeof(q));
			json_object_set_new(res, name, json_string(q));
		}
	}
	return a;
}

/* The pending reason r as a [static] string for the Warning event the
 * write announces (Kueue's event reason is the condition's reason). */
static const char *pending_event_reason(const char *r)
{
	static const char *const known[] = {"WaitingForQuota",
	    "NoMatchingFlavor", "ExceedsMaxQuota", "TopologyPlacementFailed",
	    "Misconfigured", "Suspended", "WaitingForPreemptedWorkloads",
	    REC_REASON_WAITING_FOR_PODS_READY, "Inadmissible", NULL};

	for (size_t i = 0; r != NULL && known[i] != NULL; i++)
		if (strcmp(r, known[i]) == 0)
			return known[i];
	return "Pending";
}

/*
 * Writing every pending reason as it changes would cost a write per
 * Workload per cycle; users read the reason of Workloads that wait, so it
 * is written once a Workload has waited pending_status_delay_ms, then at
 * most once per pending_status_period_ms while the reason stays the same
 * (a new message for it waits). A new reason (a ClusterQueue released
 * from Hold is no longer Suspended) is written as soon as the budget
 * allows. Each status written announces itself with Kueue's Warning
 * event (reason: the condition's, note: its message) and a log line;
 * an unchanged status writes nothing and says nothing.
 */
void ctl_report_pending(ctl *c, int64_t now)
{
	struct ctl_kent **due, *last;
	size_t i, n;
	int64_t now_ms = cu_ns_to_ms(now);

	/* In the order the reasons were first reported (oldest first). */
	if (ctl_keys_ordered(&c->rep.pending_due, &due, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++) {
		const char *uid = due[i]->k[0];
		struct que_wl *qw = que_workload_get(c->st, uid);
		struct api_workload wl;
		json_t *patch = NULL, *requests;
		cu_error err;

		last = ctl_keys_get(&c->rep.pending_at, CTL_K1(uid));
		if (qw == NULL || qw->where == QUE_WL_ADMITTED ||
		    qw->where == QUE_WL_EVICTING || qw->where == QUE_WL_HEAD) {
			ctl_keys_del(&c->rep.pending_due, CTL_K1(uid));
			continue;
		}
		if (now - qw->created_ns <
		    CU_MS_TO_NS(c->opts.pending_status_delay_ms))
			continue;
		if (last != NULL &&
		    now_ms - last->n < c->opts.pending_status_period_ms) {
			if (!shown_reason_differs(
				api_informer_get(
				    c->inf[INF_WL], qw->ns, qw->name),
				due[i]->s[0]))
				continue;
		}
		if (!ctl_pipe_budget_take(
			c->pipe, CTL_PIPE_BUDGET_PENDING, now_ms))
			break; /* the oldest due ones go first next time */
		if (ctl_decode_cached(c, qw->ns, qw->name, &wl) != CU_OK) {
			ctl_keys_del(&c->rep.pending_due, CTL_K1(uid));
			continue;
		}
		requests = resource_requests(c, qw);
		if (rec_wl_status_pending_requests(&wl, due[i]->s[0],
			due[i]->s[1], requests, now, &patch, &err) != CU_OK)
			cu_warn("pending %s/%s: %s", qw->ns, qw->name, err.msg);
		else if (patch != NULL) {
			last = ctl_keys_put(&c->rep.pending_at, CTL_K1(uid));
			if (last != NULL)
				last->n = now_ms;
			struct ctl_pipe_write *w = ctl_wl_write(c,
			    CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);

			ctl_pipe_set_budget(
			    c->pipe, w, CTL_PIPE_BUDGET_PENDING);
			ctl_pipe_set_event(w,
			    pending_event_reason(due[i]->s[0]),
			    cu_strdup(due[i]->s[1] ? due[i]->s[1] : ""));
			cu_info_kv("Workload re-queued",
			    CU_LOGF_REF("workload", qw->ns, qw->name),
			    CU_LOGF_REF("clusterQueue", NULL,
				qw->cq != NULL ? qw->cq->name : ""),
			    CU_LOGF_REF("localQueue", qw->ns, qw->queue_name),
			    CU_LOGF_S("reason", due[i]->s[0]),
			    CU_LOGF_S("message", due[i]->s[1]));
		}
		json_decref(requests);
		api_workload_dispose(&wl);
		ctl_keys_del(&c->rep.pending_due, CTL_K1(uid));
	}
	cu_free(due);
}

/* Set the Active condition in st [borrowed] through the one condition
 * writer (lastTransitionTime kept unless the status flips); out of memory
 * leaves it as it was or partly set, and is logged. */
static void set_active(
    json_t *st, bool active, const char *reason, const char *msg)
{
	struct api_condition_set cs = {.type = "Active",
	    .status = active ? API_COND_TRUE : API_COND_FALSE,
	    .reason = reason ? reason : "Unknown",
	    .message = msg};
	char now[CU_TIME_RFC3339_LEN];
	cu_error err;

	cu_time_format_rfc3339(cu_time_now_ns(), now);
	if (api_conditions_set_json(st, &cs, now, &err) != CU_OK)
		cu_warn("queue status: %s", err.msg);
}

/* Resource usage grouped by flavor, flavors in the order first seen. */
struct flv_usage {
	ctl_keys idx; /* flavor -> n: its position in res */
	json_t *res;  /* owned; [{name: flavor, resources: [usage]}] */
};

static void flv_usage_init(struct flv_usage *u)
{
	ctl_keys_init(&u->idx, 1);
	u->res = json_array();
}

/* Append entry [stolen] to flavor's [borrowed] group in u. */
static void add_flavor_usage(
    struct flv_usage *u, const char *flavor, json_t *entry)
{
	struct ctl_kent *e = ctl_keys_get(&u->idx, CTL_K1(flavor));
	json_t *list;

	if (e == NULL) {
		if (u->res == NULL ||
		    (e = ctl_keys_put(&u->idx, CTL_K1(flavor))) == NULL) {
			json_decref(entry);
			return;
		}
		e->n = (int64_t)json_array_size(u->res);
		json_array_append_new(u->res,
		    json_pack("{s:s, s:[]}", "name", flavor, "resources"));
	}
	list =
	    json_object_get(json_array_get(u->res, (size_t)e->n), "resources");
	json_array_append_new(list, entry); /* steals entry, even on error */
}

/* Set flavorsReservation/flavorsUsage from u [disposed] and the
 * workload counts in a CQ or LQ status st [borrowed]. */
static void set_usage_and_counts(json_t *st, struct flv_usage *u,
    size_t pending, size_t reserving, size_t admitted)
{
	json_t *res = u->res != NULL ? u->res : json_array();

	ctl_keys_dispose(&u->idx);
	u->res = NULL;
	json_object_set(st, "flavorsReservation", res);
	json_object_set_new(st, "flavorsUsage", res);
	json_object_set_new(
	    st, "pendingWorkloads", json_integer((json_int_t)pending));
	json_object_set_new(
	    st, "reservingWorkloads", json_integer((json_int_t)reserving));
	json_object_set_new(
	    st, "admittedWorkloads", json_integer((json_int_t)admitted));
}

/* status.fairSharing.weightedShare of a ClusterQueue or Cohort node with
 * fair sharing on; without, no fairSharing (as Kueue). */
static void set_fair_sharing(ctl *c, json_t *st, const struct que_node *n)
{
	struct adm_drs d;

	if (!que_fair_sharing(c->st)->enable) {
		json_object_del(st, "fairSharing");
		return;
	}
	adm_drs_of(c->st, n, &d);
	json_object_set_new(st, "fairSharing",
	    json_pack(
		"{s:I}", "weightedShare", (json_int_t)adm_drs_rounded(&d)));
}

/* The kueue_*_weighted_share value: +Inf is reported as NaN. */
static double share_metric(const struct que_node *n, ctl *c)
{
	struct adm_drs d;
	double v;

	adm_drs_of(c->st, n, &d);
	v = adm_drs_share(&d);
	return isinf(v) ? NAN : v;
}

static json_t *cq_status(ctl *c, struct que_cq *cq, json_t *cached)
{
	json_t *st = json_deep_copy(json_object_get(cached, "status"));
	uint32_t fr, nfr = que_fr_count(c->st);
	struct flv_usage byflv;
	char *msg;

	if (!json_is_object(st)) {
		json_decref(st);
		st = json_object();
	}
	flv_usage_init(&byflv);
	for (fr = 0; fr < nfr && fr < cq->node.ncells; fr++) {
		const struct que_cell *cell = &cq->node.cells[fr];
		const char *rs;
		char q[64], b[64];
		int64_t borrowed;

		if (!cell->q.defined)
			continue;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		borrowed = cell->usage > cell->q.nominal
			       ? cell->usage - cell->q.nominal
			       : 0;
		adm_format_quantity(rs, cell->usage, q, sizeof(q));
		adm_format_quantity(rs, borrowed, b, sizeof(b));
		add_flavor_usage(&byflv,
		    que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name,
		    json_pack("{s:s, s:s, s:s}", "name", rs, "total", q,
			"borrowed", b));
	}
	set_usage_and_counts(st, &byflv,
	    cq->n_heap + cq->inadmissible.n + cq->n_backoff, cq->admitted.n,
	    cq->admitted.n);
	set_fair_sharing(c, st, &cq->node);
	/* Being deleted, held by its resource-in-use finalizer while
	 * Workloads hold quota in it (feed.c): Kueue's Terminating. */
	msg = que_cq_active_message(c->st, cq);
	set_active(st, cq->active, cq->inactive_reason,
	    msg ? msg : "Can't admit new workloads");
	cu_free(msg);
	return st;
}

/* A queue status write for key [borrowed] is in flight, not yet in the
 * cache, or waiting to be retried. */
static bool status_busy(ctl *c, const char *const *key, json_t *cached)
{
	return ctl_pipe_stale(c->pipe, key, cached) ||
	       ctl_pipe_retrying(c->pipe, key);
}

/* kueue_cluster_queue_info: 1, labeled by the parent and root cohort.
 * When they change, the series labeled by the old cohort go (they are
 * set again under the new one by cq_metrics). */
static void cq_info(ctl *c, const struct que_cq *cq)
{
	static const enum ctl_metric_id by_cohort[] = {
	    CTL_M_CLUSTER_QUEUE_RESOURCE_RESERVATION,
	    CTL_M_CLUSTER_QUEUE_RESOURCE_USAGE,
	    CTL_M_CLUSTER_QUEUE_NOMINAL_QUOTA,
	    CTL_M_CLUSTER_QUEUE_BORROWING_LIMIT,
	    CTL_M_CLUSTER_QUEUE_LENDING_LIMIT,
	    CTL_M_CLUSTER_QUEUE_WEIGHTED_SHARE,
	    CTL_M_CLUSTER_QUEUE_INFO,
	};
	const struct que_cohort *p = cq->node.parent;
	const char *parent = cq->cohort_name ? cq->cohort_name : "";
	const char *root =
	    p != NULL && !p->in_cycle && p->root != NULL ? p->root->name : "";
	double have;
	size_t i;

	if (!c->cfg->metrics.cohorts)
		return;
	if (ctl_metric_value(&have, c->metrics, CTL_M_CLUSTER_QUEUE_INFO,
		CTL_LV(cq->name, parent, root)) == CU_OK)
		return;
	for (i = 0; i < sizeof(by_cohort) / sizeof(by_cohort[0]); i++)
		(void)ctl_metrics_remove_match(c->metrics, by_cohort[i],
		    CTL_LV("cluster_queue"), CTL_LV(cq->name));
	ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_INFO,
	    CTL_LV(cq->name, parent, root), 1.0);
}

/* kueue_cluster_queue_resource_pending: what the pending workloads of cq
 * (its heap and parked ones) request, per resource, 0 for the resources
 * it has quota for. Walks them: only with enableClusterQueueResources, in
 * the status pass, which walks them for the LocalQueue counts too. */
#define PENDING_RES_MAX 32
struct res_sum {
	uint32_t res;
	int64_t milli;
};

static void res_add(struct res_sum *v, size_t *n, uint32_t res, int64_t milli)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (v[i].res == res) {
			v[i].milli = v[i].milli > INT64_MAX - milli
					 ? INT64_MAX
					 : v[i].milli + milli;
			return;
		}
	if (*n < PENDING_RES_MAX)
		v[(*n)++] = (struct res_sum){res, milli};
}

static void res_add_wl(struct res_sum *v, size_t *n, const struct que_wl *wl)
{
	uint32_t ps, r;

	for (ps = 0; ps < wl->n_podsets; ps++)
		for (r = 0; r < wl->podsets[ps].n_req; r++)
			res_add(v, n, wl->podsets[ps].req[r].res,
			    wl->podsets[ps].req[r].total);
}

static void cq_pending_metrics(ctl *c, const struct que_cq *cq)
{
	struct res_sum v[PENDING_RES_MAX];
	size_t n = 0, i;
	uint32_t fr, nfr = que_fr_count(c->st);
	const struct que_wl *wl;

	for (fr = 0; fr < nfr && fr < cq->node.ncells; fr++)
		if (cq->node.cells[fr].q.defined)
			res_add(v, &n, que_fr_resource(c->st, fr), 0);
	for (i = 0; i < cq->n_heap; i++)
		res_add_wl(v, &n, cq->heap[i]);
	wl = cq->inadmissible.head;
	for (i = 0; i < cq->inadmissible.n && wl != NULL; i++, wl = wl->next)
		res_add_wl(v, &n, wl);
	for (i = 0; i < n; i++)
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_RESOURCE_PENDING,
		    CTL_LV(cq->name, que_resource_name(c->st, v[i].res)),
		    milli_to_units(v[i].milli));
}

/* Kueue's per-ClusterQueue gauges: status and, per flavor and resource,
 * nominal quota, reservation and usage (in units: cores, bytes). */
static void cq_metrics(ctl *c, struct que_cq *cq)
{
	static const char *const states[] = {
	    "pending", "active", "terminating"};
	const char *now = !cq->exists  ? "terminating"
			  : cq->active ? "active"
				       : "pending";
	const char *cohort = cq->cohort_name ? cq->cohort_name : "";
	uint32_t fr, nfr = que_fr_count(c->st);
	size_t i;

	cq_info(c, cq);
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_STATUS,
		    CTL_LV(cq->name, states[i]),
		    strcmp(states[i], now) == 0 ? 1.0 : 0.0);
	for (fr = 0; fr < nfr && fr < cq->node.ncells; fr++) {
		const struct que_cell *cell = &cq->node.cells[fr];
		const char *fl, *rs;

		if (!cell->q.defined)
			continue;
		fl = que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		/* As Kueue: quota and usage only with
		 * metrics.enableClusterQueueResources. */
		if (!c->cfg->metrics.enable_cluster_queue_resources)
			continue;
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_NOMINAL_QUOTA,
		    CTL_LV(cohort, cq->name, fl, rs),
		    milli_to_units(cell->q.nominal));
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_BORROWING_LIMIT,
		    CTL_LV(cohort, cq->name, fl, rs),
		    cell->q.has_borrowing_limit
			? milli_to_units(cell->q.borrowing_limit)
			: INFINITY);
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_LENDING_LIMIT,
		    CTL_LV(cohort, cq->name, fl, rs),
		    cell->q.has_lending_limit
			? milli_to_units(cell->q.lending_limit)
			: INFINITY);
		ctl_metric_set(c->metrics,
		    CTL_M_CLUSTER_QUEUE_RESOURCE_RESERVATION,
		    CTL_LV(cohort, cq->name, fl, rs),
		    milli_to_units(cell->usage));
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_RESOURCE_USAGE,
		    CTL_LV(cohort, cq->name, fl, rs),
		    milli_to_units(cell->usage));
	}
	if (c->cfg->metrics.enable_cluster_queue_resources)
		cq_pending_metrics(c, cq);
	/* As Kueue: with the resource metrics, when fair sharing is on. */
	if (c->cfg->metrics.enable_cluster_queue_resources &&
	    que_fair_sharing(c->st)->enable)
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_WEIGHTED_SHARE,
		    CTL_LV(cq->name, cohort), share_metric(&cq->node, c));
}

/* Does want [borrowed] change the Active condition's status of the
 * queue status have [borrowed; may be NULL]? A queue becoming (in)active
 * is a transition users and tools wait for (kubectl wait, a runner
 * waiting to submit): written at once, outside the report budget. There
 * are as many of them as configuration changes, not as admissions. */
static enum api_cond_status active_status(const json_t *status)
{
	struct api_conditions cs;
	const struct api_condition *a;
	enum api_cond_status st = API_COND_UNSET;

	if (api_conditions_decode_status(status, &cs, NULL) != CU_OK)
		return API_COND_UNSET;
	if ((a = api_conditions_find(&cs, "Active")) != NULL)
		st = a->status;
	api_conditions_dispose(&cs);
	return st;
}

static bool active_changed(json_t *have, json_t *want)
{
	return active_status(have) != active_status(want);
}

#ifdef CUEUE_CHECK_INVARIANTS
#define CTL_CHECKS_CLEAN 1
#else
#define CTL_CHECKS_CLEAN 0
#endif

/* A queue the pass skips as clean: in builds that check invariants,
 * its status built anew (want [consumed]) is the cached one (cached
 * [borrowed]) - the fingerprint missed nothing. */
static void check_clean(json_t *want, json_t *cached, const char *const *key)
{
#ifdef CUEUE_CHECK_INVARIANTS
	if (!json_equal(want, json_object_get(cached, "status"))) {
		cu_errorf("status pass: %s %s/%s skipped as clean, but its "
			  "status changed",
		    key[0], key[1], key[2]);
		CU_ASSERT(!"a clean queue's status changed");
	}
#else
	(void)cached;
	(void)key;
#endif
	json_decref(want);
}

static void write_cq_status(ctl *c)
{
	size_t i, n = que_cq_count(c->st);
	bool same = ctl_report__informer_same(&c->rep, &c->rep.cq_rv,
	    api_informer_resource_version(c->inf[INF_CQ]));

	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);
		json_t *cached, *want, *patch;
		const char *const *key;
		uint64_t print;
		bool busy, written, fast, clean;

		if (cq == NULL)
			continue;
		/* Fair sharing's weighted share reads the cohort: always
		 * built. */
		print = que_fair_sharing(c->st)->enable
			    ? 1
			    : ctl_report__cq_print(cq);
		key = CTL_K3(CTL_KIND_CQ, "", cq->name);
		/* No ClusterQueue object changed, nor this one's model:
		 * not even its object is read. */
		fast = same && ctl_report__clean_print(&c->rep, key, print);
		if (fast && !CTL_CHECKS_CLEAN)
			continue;
		/* A ClusterQueue the engine no longer has that the cache
		 * still shows is being deleted: its status says so. */
		cached = api_informer_get(c->inf[INF_CQ], NULL, cq->name);
		if (cached == NULL)
			continue;
		clean = ctl_report__clean(&c->rep, key, print, cached);
		CU_ASSERT(!fast || clean);
		if (clean) {
			check_clean(cq_status(c, cq, cached), cached, key);
			continue;
		}
		want = cq_status(c, cq, cached);
		/* One status write per queue at a time: a write waiting out
		 * a Retry-After must not be overtaken by a newer one. */
		busy = status_busy(c, key, cached);
		written = !busy &&
			  json_equal(want, json_object_get(cached, "status"));
		ctl_report__mark(&c->rep, key, print, cached, written);
		if (busy || written) {
			json_decref(want);
		} else {
			patch = json_pack("{s:o}", "status", want);
			ctl_report__offer(c, CTL_RES(INF_CQ), NULL, cq->name,
			    patch, CTL_KIND_CQ,
			    active_changed(
				json_object_get(cached, "status"), want));
		}
		if (c->metrics != NULL) {
			/* Kueue: the active heap and the parked
			 * (inadmissible) ones, backoffs included; all of
			 * them are inadmissible while the ClusterQueue is
			 * inactive. */
			if (!ctl_metrics_labels_pending(c, cq)) {
				ctl_metric_set(c->metrics,
				    CTL_M_PENDING_WORKLOADS,
				    CTL_LV(cq->name, "active"),
				    cq->active ? (double)cq->n_heap : 0.0);
				ctl_metric_set(c->metrics,
				    CTL_M_PENDING_WORKLOADS,
				    CTL_LV(cq->name, "inadmissible"),
				    (double)(cq->inadmissible.n +
					     cq->n_backoff) +
					(cq->active ? 0.0
						    : (double)cq->n_heap));
			}
			if (!ctl_metrics_labels_admitted(c, cq))
				ctl_metric_set(c->metrics,
				    CTL_M_ADMITTED_ACTIVE_WORKLOADS,
				    CTL_LV(cq->name), (double)cq->admitted.n);
			if (c->cfg->metrics.scheduling_hashes) {
				size_t act, in;
				cu_error e;

				if (que_cq_scheduling_hashes(
					c->st, cq, &act, &in, &e) == CU_OK) {
					ctl_metric_set(c->metrics,
					    CTL_M_PENDING_SCHEDULING_HASHES,
					    CTL_LV(cq->name, "active"),
					    (double)act);
					ctl_metric_set(c->metrics,
					    CTL_M_PENDING_SCHEDULING_HASHES,
					    CTL_LV(cq->name, "inadmissible"),
					    (double)in);
				}
			}
			ctl_metric_set(c->metrics,
			    CTL_M_RESERVING_ACTIVE_WORKLOADS, CTL_LV(cq->name),
			    (double)cq->admitted.n);
			cq_metrics(c, cq);
		}
	}
}

/* Per-LocalQueue tallies for its status, from one pass over the CQs. */
struct lq_tally {
	size_t pending, admitted;
	size_t parked;	/* of pending: inadmissible, as Kueue counts them */
	int64_t *usage; /* per fr, milli */
};

struct lq_pass {
	ctl *c;
	ctl_keys walk;	/* names of the ClusterQueues whose tallies are read */
	size_t dirty;	/* LocalQueues not found clean */
	ctl_keys index; /* {ns, name} -> n: position in v */
	struct lq_tally *v;
	size_t n, cap;
	uint32_t nfr;
};

static struct lq_tally *lq_tally_of(struct lq_pass *p, const struct que_wl *wl)
{
	struct ctl_kent *pos;

	if (wl->lq == NULL)
		return NULL;
	pos = ctl_keys_get(&p->index, wl->lq->ids);
	if (pos != NULL)
		return &p->v[pos->n];
	if (cu_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) != CU_OK)
		return NULL;
	p->v[p->n].pending = p->v[p->n].admitted = p->v[p->n].parked = 0;
	p->v[p->n].usage = cu_calloc(p->nfr ? p->nfr : 1, sizeof(int64_t));
	if (p->v[p->n].usage == NULL)
		return NULL;
	if ((pos = ctl_keys_put(&p->index, wl->lq->ids)) == NULL) {
		cu_free(p->v[p->n].usage);
		return NULL;
	}
	pos->n = (int64_t)p->n;
	return &p->v[p->n++];
}

static void lq_count_cq(struct lq_pass *p, struct que_cq *cq)
{
	struct que_wl *wl;
	struct lq_tally *t;
	size_t i;
	uint32_t ps, r;

	for (i = 0; i < cq->n_heap; i++)
		if ((t = lq_tally_of(p, cq->heap[i])) != NULL) {
			t->pending++;
			t->parked += !cq->active;
		}
	wl = cq->inadmissible.head;
	for (i = 0; i < cq->inadmissible.n; i++, wl = wl->next)
		if ((t = lq_tally_of(p, wl)) != NULL) {
			t->pending++;
			t->parked++;
		}
	wl = cq->admitted.head;
	for (i = 0; i < cq->admitted.n; i++, wl = wl->next) {
		if ((t = lq_tally_of(p, wl)) == NULL)
			continue;
		t->admitted++;
		for (ps = 0; ps < wl->n_podsets; ps++)
			for (r = 0; r < wl->podsets[ps].n_req; r++)
				if (wl->podsets[ps].fr[r] < p->nfr)
					t->usage[wl->podsets[ps].fr[r]] +=
					    wl->podsets[ps].req[r].total;
	}
}

/* Kueue's LocalQueue status: counts, flavorsReservation/flavorsUsage
 * over the ClusterQueue's flavors and resources, and Active. */
static json_t *lq_status(ctl *c, struct lq_pass *p, json_t *cached)
{
	json_t *st = json_deep_copy(json_object_get(cached, "status"));
	const char *cqname = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "clusterQueue"));
	const char *stop = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "stopPolicy"));
	struct que_cq *cq = cqname ? que_cq_get(c->st, cqname) : NULL;
	const char *ns = ctl_jmeta(cached, "namespace");
	const char *name = ctl_jmeta(cached, "name");
	struct ctl_kent *pos =
	    name ? ctl_keys_get(&p->index, CTL_K2(ns ? ns : "", name)) : NULL;
	const struct lq_tally *t = pos ? &p->v[pos->n] : NULL;
	struct flv_usage byflv;
	uint32_t fr;

	if (!json_is_object(st)) {
		json_decref(st);
		st = json_object();
	}
	flv_usage_init(&byflv);
	for (fr = 0;
	     cq != NULL && cq->exists && fr < p->nfr && fr < cq->node.ncells;
	     fr++) {
		const char *rs;
		char q[64];

		if (!cq->node.cells[fr].q.defined)
			continue;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		adm_format_quantity(rs, t ? t->usage[fr] : 0, q, sizeof(q));
		add_flavor_usage(&byflv,
		    que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name,
		    json_pack("{s:s, s:s}", "name", rs, "total", q));
	}
	set_usage_and_counts(st, &byflv, t ? t->pending : 0,
	    t ? t->admitted : 0, t ? t->admitted : 0);
	{
		json_t *afs = ctl_afs_status(c, ns, name);

		if (afs != NULL)
			json_object_set_new(st, "fairSharing", afs);
	}
	if (stop != NULL && strcmp(stop, "None") != 0)
		set_active(st, false, "Stopped", "LocalQueue is stopped");
	else if (cq == NULL || !cq->exists)
		set_active(st, false, "ClusterQueueDoesNotExist",
		    "Can't submit new workloads to clusterQueue");
	else if (!cq->active)
		set_active(st, false, "ClusterQueueIsInactive",
		    "Can't submit new workloads to clusterQueue");
	else
		set_active(st, true, "Ready",
		    "Can submit new workloads to localQueue");
	return st;
}

static const char *lq_label(const char *key, void *payload)
{
	return json_string_value(json_object_get(payload, key));
}

/* metrics.localQueueMetrics: enabled, and the LocalQueue [borrowed] in
 * localQueueSelector when there is one. */
bool ctl_lq_reported(const ctl *c, json_t *cached)
{
	if (!c->cfg->metrics.local_queue_metrics)
		return false;
	return !c->cfg->metrics.has_local_queue_selector ||
	       ns_selector_matches(&c->cfg->metrics.local_queue_selector,
		   lq_label,
		   json_object_get(
		       json_object_get(cached, "metadata"), "labels"));
}

/* Kueue's LocalQueue reservation and usage, per flavor and resource its
 * ClusterQueue has quota for. */
static void lq_resource_metrics(ctl *c, json_t *cached, const char *name,
    const char *ns, const struct lq_tally *t)
{
	const char *cqname = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "clusterQueue"));
	struct que_cq *cq = cqname ? que_cq_get(c->st, cqname) : NULL;
	uint32_t fr, nfr = que_fr_count(c->st);

	for (fr = 0; cq != NULL && fr < nfr && fr < cq->node.ncells; fr++) {
		const char *fl, *rs;
		double v;

		if (!cq->node.cells[fr].q.defined)
			continue;
		fl = que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		v = milli_to_units(t != NULL ? t->usage[fr] : 0);
		ctl_metric_set(c->metrics,
		    CTL_M_LOCAL_QUEUE_RESOURCE_RESERVATION,
		    CTL_LV(name, ns, fl, rs), v);
		ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_RESOURCE_USAGE,
		    CTL_LV(name, ns, fl, rs), v);
	}
}

static void lq_metrics(
    ctl *c, json_t *cached, json_t *st, const struct lq_tally *tally)
{
	static const char *const states[] = {"True", "False", "Unknown"};
	const char *ns = ctl_jmeta(cached, "namespace"),
		   *name = ctl_jmeta(cached, "name");
	enum api_cond_status active = active_status(st);
	const char *now = active == API_COND_TRUE    ? "True"
			  : active == API_COND_FALSE ? "False"
						     : "Unknown";
	size_t i;

	if (ns == NULL || name == NULL || !ctl_lq_reported(c, cached))
		return;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_STATUS,
		    CTL_LV(name, ns, states[i]),
		    strcmp(states[i], now) == 0 ? 1.0 : 0.0);
	/* As for the ClusterQueue: active and inadmissible (parked, or
	 * waiting in an inactive ClusterQueue). */
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_PENDING_WORKLOADS,
	    CTL_LV(name, ns, "active"),
	    (double)json_integer_value(
		json_object_get(st, "pendingWorkloads")) -
		(tally ? (double)tally->parked : 0.0));
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_PENDING_WORKLOADS,
	    CTL_LV(name, ns, "inadmissible"),
	    tally ? (double)tally->parked : 0.0);
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_RESERVING_ACTIVE_WORKLOADS,
	    CTL_LV(name, ns),
	    (double)json_integer_value(
		json_object_get(st, "reservingWorkloads")));
	if (!ctl_metrics_labels_lq_admitted(c, ns, name))
		ctl_metric_set(c->metrics,
		    CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS,
		    CTL_LV(name, ns),
		    (double)json_integer_value(
			json_object_get(st, "admittedWorkloads")));
	lq_resource_metrics(c, cached, name, ns, tally);
}

/* The fingerprint of what a LocalQueue's status reads from the model
 * (its ClusterQueue's, cached [borrowed] says which; the model's may
 * differ while a change is applied): 1 when it is never skipped
 * (admission fair sharing's usage decays with time). */
static uint64_t lq_print(
    struct lq_pass *p, json_t *cached, const char *ns, const char *name)
{
	ctl *c = p->c;
	const char *cqname = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "clusterQueue"));
	const struct que_lq *lq =
	    ns != NULL && name != NULL ? que_lq_get(c->st, ns, name) : NULL;
	const char *mname = lq != NULL ? lq->cq_name : NULL;

	if (cqname == NULL || c->cfg->admission_fair_sharing.enable ||
	    (mname != NULL && strcmp(mname, cqname) != 0))
		return 1;
	return ctl_report__cq_print(que_cq_get(c->st, cqname));
}

/* First pass: the ClusterQueues whose Workloads the LocalQueues not
 * clean count. */
static void walk_one_lq(json_t *cached, void *payload)
{
	struct lq_pass *p = payload;
	const char *ns = ctl_jmeta(cached, "namespace");
	const char *name = ctl_jmeta(cached, "name");
	const char *cqname;
	const struct que_lq *lq;

	if (ns == NULL || name == NULL ||
	    ctl_report__clean(&p->c->rep, CTL_K3(CTL_KIND_LQ, ns, name),
		lq_print(p, cached, ns, name), cached))
		return;
	cqname = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "clusterQueue"));
	if (cqname != NULL)
		(void)ctl_keys_put(&p->walk, CTL_K1(cqname));
	lq = que_lq_get(p->c->st, ns, name);
	if (lq != NULL && lq->cq_name != NULL)
		(void)ctl_keys_put(&p->walk, CTL_K1(lq->cq_name));
}

static void write_one_lq(json_t *cached, void *payload)
{
	struct lq_pass *p = payload;
	const char *ns = ctl_jmeta(cached, "namespace");
	const char *name = ctl_jmeta(cached, "name");
	uint64_t print = lq_print(p, cached, ns, name);
	const char *const *key = CTL_K3(CTL_KIND_LQ, ns ? ns : "", name);
	json_t *want;
	bool busy, written;

	if (name != NULL && ctl_report__clean(&p->c->rep, key, print, cached)) {
		check_clean(lq_status(p->c, p, cached), cached, key);
		return;
	}
	p->dirty++;
	want = lq_status(p->c, p, cached);
	if (p->c->metrics != NULL) {
		struct ctl_kent *pos =
		    name ? ctl_keys_get(&p->index, CTL_K2(ns ? ns : "", name))
			 : NULL;

		lq_metrics(p->c, cached, want, pos ? &p->v[pos->n] : NULL);
	}

	if (ns == NULL || name == NULL) {
		json_decref(want);
		return;
	}
	busy = status_busy(p->c, key, cached);
	written = !busy && json_equal(want, json_object_get(cached, "status"));
	ctl_report__mark(&p->c->rep, key, print, cached, written);
	if (busy || written)
		json_decref(want);
	else
		ctl_report__offer(p->c, CTL_RES(INF_LQ), ns, name,
		    json_pack("{s:o}", "status", want), CTL_KIND_LQ,
		    active_changed(json_object_get(cached, "status"), want));
}

/* LocalQueue status, written only where it changed. */
static void write_lq_status(ctl *c)
{
	struct lq_pass p = {.c = c, .nfr = que_fr_count(c->st)};
	size_t i, n = que_cq_count(c->st);
	uint64_t prints = 0;
	bool same = ctl_report__informer_same(&c->rep, &c->rep.lq_rv,
	    api_informer_resource_version(c->inf[INF_LQ]));
	bool skip;

	/* Every LocalQueue was clean, and neither their objects nor any
	 * ClusterQueue changed: none is read. */
	for (i = 0; i < n; i++)
		prints += ctl_report__cq_print(que_cq_at(c->st, i));
	skip = same && c->rep.lq_clean && prints == c->rep.lq_prints;
	c->rep.lq_prints = prints;
	if (skip && !CTL_CHECKS_CLEAN)
		return;
	ctl_keys_init(&p.index, 2);
	ctl_keys_init(&p.walk, 1);
	/* Only the ClusterQueues of LocalQueues not clean are walked (all
	 * where invariants are checked: the clean ones are built too). */
	if (!c->rep.full && !CTL_CHECKS_CLEAN)
		api_informer_foreach(c->inf[INF_LQ], walk_one_lq, &p);
	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);

		if (cq != NULL &&
		    (c->rep.full || CTL_CHECKS_CLEAN ||
			ctl_keys_get(&p.walk, CTL_K1(cq->name)) != NULL))
			lq_count_cq(&p, cq);
	}
	api_informer_foreach(c->inf[INF_LQ], write_one_lq, &p);
	for (i = 0; i < p.n; i++)
		cu_free(p.v[i].usage);
	cu_free(p.v);
	ctl_keys_dispose(&p.index);
	ctl_keys_dispose(&p.walk);
	c->rep.lq_clean = p.dirty == 0;
	CU_ASSERT(!skip || p.dirty == 0);
}

/* Cohort status (only fairSharing), written only where it changed; and
 * kueue_cohort_weighted_share. */
static void write_one_cohort(json_t *cached, void *payload)
{
	ctl *c = payload;
	const char *name = ctl_jmeta(cached, "name");
	struct que_cohort *co = name ? que_cohort_get(c->st, name) : NULL;
	json_t *have = json_object_get(cached, "status");
	json_t *want;

	if (co == NULL || co->in_cycle)
		return;
	if (c->metrics != NULL && que_fair_sharing(c->st)->enable)
		ctl_metric_set(c->metrics, CTL_M_COHORT_WEIGHTED_SHARE,
		    CTL_LV(name), share_metric(&co->node, c));
	if (!que_fair_sharing(c->st)->enable &&
	    json_object_get(have, "fairSharing") == NULL)
		return;
	want = json_is_object(have) ? json_deep_copy(have) : json_object();
	if (want == NULL)
		return;
	set_fair_sharing(c, want, &co->node);
	if (status_busy(c, CTL_K3(CTL_KIND_COHORT, "", name), cached) ||
	    (have != NULL ? json_equal(want, have)
			  : json_object_size(want) == 0))
		json_decref(want);
	else
		ctl_report__offer(c, CTL_RES(INF_COHORT), NULL, name,
		    json_pack("{s:o}", "status", want), CTL_KIND_COHORT, false);
}

/* Admitted workloads of the ClusterQueues in co's [borrowed] subtree. */
static size_t subtree_admitted(const struct que_cohort *co, int depth)
{
	size_t n = 0, i;

	if (depth > 64) /* a cycle is never walked; a bound all the same */
		return 0;
	for (i = 0; i < co->n_cqs; i++)
		n += co->cqs[i]->admitted.n;
	for (i = 0; i < co->n_kids; i++)
		n += subtree_admitted(co->kids[i], depth + 1);
	return n;
}

/* Kueue's cohort gauges (MetricsForCohorts): info, the subtree's quota
 * and reservations per flavor and resource (no series while 0), and its
 * admitted workloads. Once per pass per cohort (seen). */
static void cohort_metrics(ctl *c, const struct que_cohort *co, ctl_keys *seen)
{
	const char *parent = co->parent_name ? co->parent_name : "";
	const char *root = co->root != NULL ? co->root->name : co->name;
	uint32_t fr, nfr = que_fr_count(c->st);
	double have;

	if (co->in_cycle || ctl_keys_get(seen, CTL_K1(co->name)) != NULL ||
	    ctl_keys_put(seen, CTL_K1(co->name)) == NULL)
		return;
	if (ctl_metric_value(&have, c->metrics, CTL_M_COHORT_INFO,
		CTL_LV(co->name, parent, root)) != CU_OK) {
		(void)ctl_metrics_remove_match(c->metrics, CTL_M_COHORT_INFO,
		    CTL_LV("cohort"), CTL_LV(co->name));
		ctl_metric_set(c->metrics, CTL_M_COHORT_INFO,
		    CTL_LV(co->name, parent, root), 1.0);
	}
	for (fr = 0; fr < nfr && fr < co->node.ncells; fr++) {
		const struct que_cell *cell = &co->node.cells[fr];
		const char *fl =
		    que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name;
		const char *rs =
		    que_resource_name(c->st, que_fr_resource(c->st, fr));

		if (cell->subtree > 0)
			ctl_metric_set(c->metrics, CTL_M_COHORT_SUBTREE_QUOTA,
			    CTL_LV(co->name, fl, rs),
			    milli_to_units(cell->subtree));
		else
			(void)ctl_metric_remove(c->metrics,
			    CTL_M_COHORT_SUBTREE_QUOTA,
			    CTL_LV(co->name, fl, rs));
		if (cell->usage > 0)
			ctl_metric_set(c->metrics,
			    CTL_M_COHORT_SUBTREE_RESOURCE_RESERVATIONS,
			    CTL_LV(co->name, fl, rs),
			    milli_to_units(cell->usage));
		else
			(void)ctl_metric_remove(c->metrics,
			    CTL_M_COHORT_SUBTREE_RESOURCE_RESERVATIONS,
			    CTL_LV(co->name, fl, rs));
	}
	ctl_metric_set(c->metrics,
	    CTL_M_COHORT_SUBTREE_ADMITTED_ACTIVE_WORKLOADS, CTL_LV(co->name),
	    (double)subtree_admitted(co, 0));
}

struct cohort_pass {
	ctl *c;
	ctl_keys seen;
};

static void cohort_object_metrics(json_t *cached, void *payload)
{
	struct cohort_pass *p = payload;
	const char *name = ctl_jmeta(cached, "name");
	const struct que_cohort *co =
	    name != NULL ? que_cohort_get(p->c->st, name) : NULL;

	if (co != NULL)
		cohort_metrics(p->c, co, &p->seen);
}

/* Every cohort: those with an object, and those above a ClusterQueue.
 * The series of a cohort gone since the last pass are removed. */
static void write_cohort_metrics(ctl *c)
{
	struct cohort_pass p = {.c = c};
	struct ctl_kent **v;
	size_t i, n = que_cq_count(c->st);

	ctl_keys_init(&p.seen, 1);
	if (c->inf[INF_COHORT] != NULL)
		api_informer_foreach(
		    c->inf[INF_COHORT], cohort_object_metrics, &p);
	for (i = 0; i < n; i++) {
		const struct que_cq *cq = que_cq_at(c->st, i);
		const struct que_cohort *co;
		int depth = 0;

		for (co = cq != NULL ? cq->node.parent : NULL;
		     co != NULL && depth < 64; co = co->node.parent, depth++)
			cohort_metrics(c, co, &p.seen);
	}
	if (ctl_keys_ordered(&c->rep.metric_cohorts, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++)
			if (ctl_keys_get(
				&p.seen, (const char *const *)v[i]->k) == NULL)
				(void)ctl_metrics_remove_label(
				    c->metrics, "cohort", v[i]->k[0]);
		cu_free(v);
	}
	ctl_keys_move(&c->rep.metric_cohorts, &p.seen);
	ctl_keys_dispose(&p.seen);
}

void ctl_report_queues(ctl *c, int64_t now_ms)
{
	ctl_report__pass_begin(&c->rep, false);
	write_cq_status(c);
	write_lq_status(c);
	if (c->inf[INF_COHORT] != NULL)
		api_informer_foreach(c->inf[INF_COHORT], write_one_cohort, c);
	if (c->metrics != NULL && c->cfg->metrics.cohorts)
		write_cohort_metrics(c);
	ctl_report__flush(c, now_ms);
}

int ctl_report_init(struct ctl_report *r)
{
	memset(r, 0, sizeof(*r));
	ctl_keys_init(&r->pending_at, 1);
	ctl_keys_init(&r->pending_due, 1);
	ctl_keys_init(&r->reported_at, 3);
	ctl_keys_init(&r->metric_cohorts, 1);
	ctl_keys_init(&r->clean, 3);
	return CU_OK;
}

void ctl_report_dispose(struct ctl_report *r)
{
	size_t i;

	ctl_keys_dispose(&r->pending_at);
	ctl_keys_dispose(&r->pending_due);
	ctl_keys_dispose(&r->reported_at);
	ctl_keys_dispose(&r->metric_cohorts);
	ctl_keys_dispose(&r->clean);
	cu_free(r->cq_rv);
	cu_free(r->lq_rv);
	for (i = 0; i < r->noffers; i++) {
		ctl_report__offer_dispose(&r->offers[i]);
		json_decref(r->offers[i].patch);
	}
	cu_free(r->offers);
	memset(r, 0, sizeof(*r));
}
