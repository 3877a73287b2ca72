/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/render.c - the rows of kubectl-cueue's listings, cell by cell as
 * kueuectl (and kubectl for Pods) prints them, and the pending order of
 * a ClusterQueue computed from the Workloads themselves or read from the
 * visibility API's answer. Pure functions of JSON: no I/O. See cli/cli.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/model.h"
#include "cli/cli.h"

/* ---- small readers -------------------------------------------------- */

static const json_t *member(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, a) : NULL;

	if (b != NULL)
		v = json_is_object(v) ? json_object_get(v, b) : NULL;
	return v;
}

static const char *str2(const json_t *o, const char *a, const char *b)
{
	const json_t *v = member(o, a, b);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int64_t int2(const json_t *o, const char *a, const char *b)
{
	const json_t *v = member(o, a, b);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

/* obj's status.conditions [api_conditions_dispose]; none when they cannot
 * be read (a listing shows what it can). */
static void conds_of(const json_t *obj, struct api_conditions *out)
{
	if (api_conditions_decode(obj, out, NULL) != CU_OK)
		return; /* out is empty */
}

/* The condition of type t in cs when its status is True, or NULL. */
static const struct api_condition *true_cond(
    const struct api_conditions *cs, const char *t)
{
	const struct api_condition *c = api_conditions_find(cs, t);

	return c != NULL && c->status == API_COND_TRUE ? c : NULL;
}

/* A metav1.Time string as ns; false when absent or unparsable. */
static bool time_of(const char *s, int64_t *ns)
{
	return s != NULL && cu_time_parse(s, ns, NULL) == CU_OK;
}

/* Age since the timestamp, or "<unknown>" as kubectl says for none. */
static void age(const char *ts, int64_t now_ns, char out[CLI_DURATION_MAX])
{
	int64_t t;

	if (!time_of(ts, &t))
		snprintf(out, CLI_DURATION_MAX, "<unknown>");
	else
		cli_human_duration(now_ns - t, out);
}

static const char *meta_name(const json_t *o)
{
	const char *s = str2(o, "metadata", "name");

	return s != NULL ? s : "";
}

static const char *meta_ns(const json_t *o)
{
	const char *s = str2(o, "metadata", "namespace");

	return s != NULL ? s : "";
}

const char *cli_workload_status(const json_t *wl)
{
	struct api_conditions cs;
	const char *s = "pending";

	conds_of(wl, &cs);
	if (api_conditions_true(&cs, "Finished"))
		s = "finished";
	else if (api_conditions_true(&cs, "Admitted"))
		s = "admitted";
	else if (api_conditions_true(&cs, "QuotaReserved"))
		s = "quotaReserved";
	api_conditions_dispose(&cs);
	return s;
}

unsigned cli_workload_status_bit(const json_t *wl)
{
	const char *s = cli_workload_status(wl);

	if (strcmp(s, "finished") == 0)
		return CLI_ST_FINISHED;
	if (strcmp(s, "admitted") == 0)
		return CLI_ST_ADMITTED;
	if (strcmp(s, "quotaReserved") == 0)
		return CLI_ST_QUOTA_RESERVED;
	return CLI_ST_PENDING;
}

/* Render t (with the NAMESPACE column dropped unless with_ns) into out. */
static int finish(cli_table *t, char **out, cu_error *err)
{
	*out = cli_table_render(t, false);
	cli_table_dispose(t);
	if (*out == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	return CU_OK;
}

/* Add a row; with_ns prefixes the namespace. cells has n entries. */
static int add_row(cli_table *t, bool with_ns, const char *ns,
    const char **cells, size_t n, cu_error *err)
{
	const char *row[16];

	if (!with_ns)
		return cli_table_add(t, cells, err);
	row[0] = ns;
	memcpy(row + 1, cells, n * sizeof(*cells));
	return cli_table_add(t, row, err);
}

static int start(
    cli_table *t, bool with_ns, const char *const *hdr, size_t n, cu_error *err)
{
	const char *row[16];

	if (!with_ns)
		return cli_table_init(t, hdr, n, err);
	row[0] = "NAMESPACE";
	memcpy(row + 1, hdr, n * sizeof(*hdr));
	return cli_table_init(t, row, n + 1, err);
}

/* ---- Workloads ------------------------------------------------------ */

/* Unique owner names joined by ", " into b. */
static int owner_names(const json_t *wl, cu_buf *b)
{
	const json_t *refs = member(wl, "metadata", "ownerReferences");
	size_t i, j;
	json_t *r, *q;

	if (!json_is_array(refs))
		return CU_OK;
	json_array_foreach((json_t *)refs, i, r)
	{
		const char *n = api_json_str(r, "name");
		bool dup = false;

		if (n == NULL)
			continue;
		for (j = 0; j < i && !dup; j++) {
			const char *m;

			q = json_array_get(refs, j);
			m = api_json_str(q, "name");
			dup = m != NULL && strcmp(m, n) == 0;
		}
		if (dup)
			continue;
		if (b->len > 0 && cu_buf_adds(b, ", ") != CU_OK)
			return CU_ENOMEM;
		if (cu_buf_adds(b, n) != CU_OK)
			return CU_ENOMEM;
	}
	return CU_OK;
}

int cli_render_workloads(const json_t *items, const struct cli_wl_extra *extra,
    bool with_ns, int64_t now_ns, char **out, cu_error *err)
{
	static const char *const hdr[] = {"NAME", "JOB TYPE", "JOB NAME",
	    "LOCALQUEUE", "CLUSTERQUEUE", "STATUS", "POSITION IN QUEUE",
	    "EXEC TIME", "AGE"};
	cli_table t;
	size_t i;
	json_t *wl;
	int rc;

	*out = NULL;
	rc = start(&t, with_ns, hdr, 9, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach((json_t *)items, i, wl)
	{
		char status[32], pos[32] = "", exec[CLI_DURATION_MAX] = "",
				 ag[CLI_DURATION_MAX];
		const char *st = cli_workload_status(wl), *cells[9], *lq;
		struct api_conditions cs;
		const struct api_condition *adm, *fin;
		cu_buf names;
		size_t k;

		for (k = 0; st[k] != '\0' && k + 1 < sizeof(status); k++)
			status[k] = (char)(st[k] >= 'a' && st[k] <= 'z'
					       ? st[k] - 'a' + 'A'
					       : st[k]);
		status[k] = '\0';
		if (extra[i].position >= 0)
			snprintf(pos, sizeof(pos), "%ld", extra[i].position);
		conds_of(wl, &cs);
		adm = true_cond(&cs, "Admitted");
		fin = true_cond(&cs, "Finished");
		if (adm != NULL && adm->has_last_transition)
			cli_human_duration(
			    (fin != NULL && fin->has_last_transition
				    ? fin->last_transition_ns
				    : now_ns) -
				adm->last_transition_ns,
			    exec);
		api_conditions_dispose(&cs);
		age(str2(wl, "metadata", "creationTimestamp"), now_ns, ag);
		cu_buf_init(&names, (size_t)1 << 20);
		if (owner_names(wl, &names) != CU_OK) {
			cu_buf_dispose(&names);
			cli_table_dispose(&t);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
		lq = str2(wl, "spec", "queueName");
		cells[0] = meta_name(wl);
		cells[1] = extra[i].job_type;
		cells[2] = names.ptr;
		cells[3] = lq;
		cells[4] = extra[i].cluster_queue;
		cells[5] = status;
		cells[6] = pos;
		cells[7] = exec;
		cells[8] = ag;
		rc = add_row(&t, with_ns, meta_ns(wl), cells, 9, err);
		cu_buf_dispose(&names);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

/* ---- queues --------------------------------------------------------- */

int cli_render_clusterqueues(
    const json_t *items, int64_t now_ns, char **out, cu_error *err)
{
	static const char *const hdr[] = {"NAME", "COHORT", "PENDING WORKLOADS",
	    "ADMITTED WORKLOADS", "ACTIVE", "AGE"};
	cli_table t;
	size_t i;
	json_t *cq;
	int rc;

	*out = NULL;
	rc = cli_table_init(&t, hdr, 6, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach((json_t *)items, i, cq)
	{
		char pend[24], adm[24], ag[CLI_DURATION_MAX];
		const char *cohort = str2(cq, "spec", "cohortName"), *cells[6];
		struct api_conditions cs;

		if (cohort == NULL) /* v1beta1 */
			cohort = str2(cq, "spec", "cohort");
		snprintf(pend, sizeof(pend), "%lld",
		    (long long)int2(cq, "status", "pendingWorkloads"));
		snprintf(adm, sizeof(adm), "%lld",
		    (long long)int2(cq, "status", "admittedWorkloads"));
		age(str2(cq, "metadata", "creationTimestamp"), now_ns, ag);
		cells[0] = meta_name(cq);
		cells[1] = cohort;
		cells[2] = pend;
		cells[3] = adm;
		conds_of(cq, &cs);
		cells[4] =
		    api_conditions_true(&cs, "Active") ? "true" : "false";
		api_conditions_dispose(&cs);
		cells[5] = ag;
		rc = cli_table_add(&t, cells, err);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

int cli_render_localqueues(const json_t *items, bool with_ns, int64_t now_ns,
    char **out, cu_error *err)
{
	static const char *const hdr[] = {"NAME", "CLUSTERQUEUE",
	    "PENDING WORKLOADS", "ADMITTED WORKLOADS", "AGE"};
	cli_table t;
	size_t i;
	json_t *lq;
	int rc;

	*out = NULL;
	rc = start(&t, with_ns, hdr, 5, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach((json_t *)items, i, lq)
	{
		char pend[24], adm[24], ag[CLI_DURATION_MAX];
		const char *cells[5];

		snprintf(pend, sizeof(pend), "%lld",
		    (long long)int2(lq, "status", "pendingWorkloads"));
		snprintf(adm, sizeof(adm), "%lld",
		    (long long)int2(lq, "status", "admittedWorkloads"));
		age(str2(lq, "metadata", "creationTimestamp"), now_ns, ag);
		cells[0] = meta_name(lq);
		cells[1] = str2(lq, "spec", "clusterQueue");
		cells[2] = pend;
		cells[3] = adm;
		cells[4] = ag;
		rc = add_row(&t, with_ns, meta_ns(lq), cells, 5, err);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

/* ---- ResourceFlavors ----------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_render_resourceflavors(
    const json_t *items, int64_t now_ns, char **out, cu_error *err)
{
	static const char *const hdr[] = {"NAME", "NODE LABELS", "AGE"};
	cli_table t;
	size_t i;
	json_t *rf;
	int rc;

	*out = NULL;
	rc = cli_table_init(&t, hdr, 3, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach((json_t *)items, i, rf)
	{
		const json_t *nl = member(rf, "spec", "nodeLabels");
		size_t n = json_is_object(nl) ? json_object_size(nl) : 0, k = 0;
		char **pairs = cu_calloc(n ? n : 1, sizeof(*pairs));
		char ag[CLI_DURATION_MAX];
		const char *cells[3];
		cu_buf b;

		cu_buf_init(&b, (size_t)1 << 20);
		rc = pairs == NULL ? CU_ENOMEM : CU_OK;
		for (void *it = n ? json_object_iter((json_t *)nl) : NULL;
		     rc == CU_OK && it != NULL;
		     it = json_object_iter_next((json_t *)nl, it)) {
			const json_t *v = json_object_iter_value(it);

			pairs[k] =
			    cu_asprintf("%s=%s", json_object_iter_key(it),
				json_is_string(v) ? json_string_value(v) : "");
			if (pairs[k++] == NULL)
				rc = CU_ENOMEM;
		}
		if (rc == CU_OK)
			qsort((void *)pairs, k, sizeof(*pairs), str_cmp);
		for (size_t j = 0; rc == CU_OK && j < k; j++)
			if ((j > 0 && cu_buf_adds(&b, ", ") != CU_OK) ||
			    cu_buf_adds(&b, pairs[j]) != CU_OK)
				rc = CU_ENOMEM;
		for (size_t j = 0; pairs != NULL && j < k; j++)
			cu_free(pairs[j]);
		cu_free((void *)pairs);
		if (rc != CU_OK) {
			cu_buf_dispose(&b);
			cli_table_dispose(&t);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
		age(str2(rf, "metadata", "creationTimestamp"), now_ns, ag);
		cells[0] = meta_name(rf);
		cells[1] = b.ptr;
		cells[2] = ag;
		rc = cli_table_add(&t, cells, err);
		cu_buf_dispose(&b);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

/* ---- Pods ----------------------------------------------------------- */

/* kubectl's STATUS of a Pod, simplified: Terminating, a container's
 * waiting or terminated reason, status.reason, else the phase. */
static const char *pod_status(const json_t *pod)
{
	const json_t *cs = member(pod, "status", "containerStatuses");
	const char *reason = str2(pod, "status", "reason");
	const char *phase = str2(pod, "status", "phase");
	size_t i;
	json_t *c;

	if (member(pod, "metadata", "deletionTimestamp") != NULL &&
	    !json_is_null(member(pod, "metadata", "deletionTimestamp")))
		return "Terminating";
	if (json_is_array(cs))
		json_array_foreach((json_t *)cs, i, c)
		{
			const char *w = str2(c, "state", "waiting");
			const json_t *wt = member(c, "state", "waiting");
			const json_t *tm = member(c, "state", "terminated");

			(void)w;
			if (api_json_str(wt, "reason") != NULL)
				return api_json_str(wt, "reason");
			if (api_json_str(tm, "reason") != NULL &&
			    strcmp(api_json_str(tm, "reason"), "Completed") !=
				0)
				return api_json_str(tm, "reason");
		}
	if (reason != NULL && reason[0] != '\0')
		return reason;
	return phase != NULL ? phase : "Unknown";
}

int cli_render_pods(const json_t *items, bool with_ns, bool wide,
    int64_t now_ns, char **out, cu_error *err)
{
	static const char *const hdr[] = {"NAME", "READY", "STATUS", "RESTARTS",
	    "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"};
	size_t ncols = wide ? 9 : 5;
	cli_table t;
	size_t i;
	json_t *pod;
	int rc;

	*out = NULL;
	rc = start(&t, with_ns, hdr, ncols, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach((json_t *)items, i, pod)
	{
		const json_t *cs = member(pod, "status", "containerStatuses");
		const json_t *cont = member(pod, "spec", "containers");
		char ready[48], restarts[24], ag[CLI_DURATION_MAX];
		const char *cells[9], *ip = str2(pod, "status", "podIP");
		const char *node = str2(pod, "spec", "nodeName");
		const char *nom = str2(pod, "status", "nominatedNodeName");
		long long nready = 0, nrestart = 0;
		size_t j;
		json_t *c;

		if (json_is_array(cs))
			json_array_foreach((json_t *)cs, j, c)
			{
				if (json_is_true(json_object_get(c, "ready")))
					nready++;
				if (json_is_integer(
					json_object_get(c, "restartCount")))
					nrestart += json_integer_value(
					    json_object_get(c, "restartCount"));
			}
		snprintf(ready, sizeof(ready), "%lld/%zu", nready,
		    json_is_array(cont) ? json_array_size(cont) : (size_t)0);
		snprintf(restarts, sizeof(restarts), "%lld", nrestart);
		age(str2(pod, "metadata", "creationTimestamp"), now_ns, ag);
		cells[0] = meta_name(pod);
		cells[1] = ready;
		cells[2] = pod_status(pod);
		cells[3] = restarts;
		cells[4] = ag;
		cells[5] = ip != NULL && ip[0] ? ip : "<none>";
		cells[6] = node != NULL && node[0] ? node : "<none>";
		cells[7] = nom != NULL && nom[0] ? nom : "<none>";
		cells[8] = "<none>";
		rc = add_row(&t, with_ns, meta_ns(pod), cells, ncols, err);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

/* ---- the pending order ---------------------------------------------- */

static int pending_cmp(const void *pa, const void *pb)
{
	const struct cli_pending *a = pa, *b = pb;
	int c;

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->queue_ts_ns != b->queue_ts_ns)
		return a->queue_ts_ns < b->queue_ts_ns ? -1 : 1;
	c = strcmp(a->uid, b->uid);
	if (c != 0)
		return c;
	c = strcmp(a->namespace_, b->namespace_);
	return c != 0 ? c : strcmp(a->name, b->name);
}

/* Number positions in the ClusterQueue and per LocalQueue (one map
 * of LocalQueue -> next position: O(n)). CU_ENOMEM. */
static int number(struct cli_pending *p, size_t n, cu_error *err)
{
	const char *(*keys)[2] = cu_calloc(n, sizeof(*keys));
	long *next = cu_calloc(n, sizeof(*next));
	cu_map m;
	int rc = CU_OK;

	cu_map_init_parts(&m, 2);
	if (keys == NULL || next == NULL || cu_map_reserve(&m, n) != CU_OK)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	for (size_t i = 0; rc == CU_OK && i < n; i++) {
		long *at;

		keys[i][0] = p[i].namespace_;
		keys[i][1] = p[i].local_queue;
		at = cu_map_get(&m, keys[i]);
		if (at == NULL) {
			at = &next[i];
			/* reserved above: cannot fail */
			rc = cu_map_put(&m, keys[i], at, NULL);
		}
		p[i].pos_cq = (long)i;
		p[i].pos_lq = (*at)++;
	}
	cu_map_dispose(&m);
	cu_free((void *)keys);
	cu_free(next);
	return rc;
}

/* Does LocalQueue ns/name exist among lqs and point at cq? */
static bool lq_points_at(
    const json_t *lqs, const char *ns, const char *name, const char *cq)
{
	size_t i;
	json_t *lq;

	json_array_foreach((json_t *)lqs, i, lq)
	{
		const char *c = str2(lq, "spec", "clusterQueue");

		if (strcmp(meta_ns(lq), ns) == 0 &&
		    strcmp(meta_name(lq), name) == 0)
			return c != NULL && strcmp(c, cq) == 0;
	}
	return false;
}

int cli_pending_order(const json_t *workloads, const json_t *localqueues,
    const char *cq, struct cli_pending **out, size_t *n, cu_error *err)
{
	struct cli_pending *p;
	size_t i, k = 0;
	json_t *wl;

	*out = NULL;
	*n = 0;
	if (!json_is_array(workloads) || json_array_size(workloads) == 0)
		return CU_OK;
	p = cu_calloc(json_array_size(workloads), sizeof(*p));
	if (p == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	json_array_foreach((json_t *)workloads, i, wl)
	{
		const char *lq = str2(wl, "spec", "queueName");
		const json_t *active = member(wl, "spec", "active");
		const struct api_condition *ev;
		struct api_conditions cs;
		int64_t ts = 0;
		bool skip;

		conds_of(wl, &cs);
		skip = !json_is_object(wl) || lq == NULL ||
		       json_is_false(active) ||
		       api_conditions_true(&cs, "QuotaReserved") ||
		       api_conditions_true(&cs, "Finished") ||
		       !json_is_array(localqueues) ||
		       !lq_points_at(localqueues, meta_ns(wl), lq, cq);
		/* Kueue's queue order timestamp: the eviction time after
		 * an eviction by PodsReadyTimeout (requeuingStrategy
		 * timestamp Eviction, the default) or by an AdmissionCheck,
		 * else the creation time */
		ev = true_cond(&cs, "Evicted");
		if (ev != NULL && ev->reason != NULL &&
		    (strcmp(ev->reason, "PodsReadyTimeout") == 0 ||
			strcmp(ev->reason, "AdmissionCheck") == 0) &&
		    ev->has_last_transition)
			ts = ev->last_transition_ns;
		else
			(void)time_of(
			    str2(wl, "metadata", "creationTimestamp"), &ts);
		api_conditions_dispose(&cs);
		if (skip)
			continue;
		p[k].namespace_ = meta_ns(wl);
		p[k].name = meta_name(wl);
		p[k].local_queue = lq;
		p[k].uid = str2(wl, "metadata", "uid");
		if (p[k].uid == NULL)
			p[k].uid = "";
		p[k].created = str2(wl, "metadata", "creationTimestamp");
		p[k].priority = int2(wl, "spec", "priority");
		p[k].queue_ts_ns = ts;
		k++;
	}
	if (k == 0) {
		cu_free(p);
		return CU_OK;
	}
	qsort(p, k, sizeof(*p), pending_cmp);
	if (number(p, k, err) != CU_OK) {
		cu_free(p);
		return CU_ENOMEM;
	}
	*out = p;
	*n = k;
	return CU_OK;
}

int cli_pending_from_visibility(
    const json_t *items, struct cli_pending **out, size_t *n, cu_error *err)
{
	struct cli_pending *p;
	size_t i, k = 0;
	json_t *it;

	*out = NULL;
	*n = 0;
	if (!json_is_array(items) || json_array_size(items) == 0)
		return CU_OK;
	p = cu_calloc(json_array_size(items), sizeof(*p));
	if (p == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	json_array_foreach((json_t *)items, i, it)
	{
		const char *lq = api_json_str(it, "localQueueName");

		if (!json_is_object(it))
			continue;
		p[k].namespace_ = meta_ns(it);
		p[k].name = meta_name(it);
		p[k].local_queue = lq != NULL ? lq : "";
		p[k].uid = "";
		p[k].created = str2(it, "metadata", "creationTimestamp");
		p[k].priority = int2(it, "priority", NULL);
		p[k].pos_cq = (long)int2(it, "positionInClusterQueue", NULL);
		p[k].pos_lq = (long)int2(it, "positionInLocalQueue", NULL);
		(void)time_of(p[k].created, &p[k].queue_ts_ns);
		k++;
	}
	if (k == 0) {
		cu_free(p);
		return CU_OK;
	}
	*out = p;
	*n = k;
	return CU_OK;
}

int cli_render_pending(const struct cli_pending *p, size_t n, int64_t now_ns,
    char **out, cu_error *err)
{
	static const char *const hdr[] = {"POSITION IN CLUSTERQUEUE",
	    "POSITION IN LOCALQUEUE", "NAMESPACE", "NAME", "LOCALQUEUE",
	    "PRIORITY", "AGE"};
	cli_table t;
	int rc;

	*out = NULL;
	rc = cli_table_init(&t, hdr, 7, err);
	if (rc != CU_OK)
		return rc;
	for (size_t i = 0; i < n; i++) {
		char pc[24], pl[24], pr[24], ag[CLI_DURATION_MAX];
		const char *cells[7];

		snprintf(pc, sizeof(pc), "%ld", p[i].pos_cq);
		snprintf(pl, sizeof(pl), "%ld", p[i].pos_lq);
		snprintf(pr, sizeof(pr), "%lld", (long long)p[i].priority);
		age(p[i].created, now_ns, ag);
		cells[0] = pc;
		cells[1] = pl;
		cells[2] = p[i].namespace_;
		cells[3] = p[i].name;
		cells[4] = p[i].local_queue;
		cells[5] = pr;
		cells[6] = ag;
		rc = cli_table_add(&t, cells, err);
		if (rc != CU_OK) {
			cli_table_dispose(&t);
			return rc;
		}
	}
	return finish(&t, out, err);
}

int cli_pending_json(
    const struct cli_pending *p, size_t n, json_t **out, cu_error *err)
{
	json_t *items = json_array(), *o;

	*out = NULL;
	if (items == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *meta = json_pack("{s:s, s:s}", "name", p[i].name,
		    "namespace", p[i].namespace_);

		if (meta != NULL && p[i].created != NULL &&
		    json_object_set_new(meta, "creationTimestamp",
			json_string(p[i].created)) != 0) {
			json_decref(meta);
			meta = NULL;
		}
		o = meta == NULL
			? NULL
			: json_pack("{s:o, s:I, s:s, s:I, s:I}", "metadata",
			      meta, "priority", (json_int_t)p[i].priority,
			      "localQueueName", p[i].local_queue,
			      "positionInClusterQueue", (json_int_t)p[i].pos_cq,
			      "positionInLocalQueue", (json_int_t)p[i].pos_lq);
		if (o == NULL || json_array_append_new(items, o) != 0) {
			json_decref(items);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
	}
	o = json_pack("{s:s, s:s, s:{}, s:o}", "kind",
	    "PendingWorkloadsSummary", "apiVersion",
	    "visibility.kueue.x-k8s.io/v1beta2", "metadata", "items", items);
	if (o == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	*out = o;
	return CU_OK;
}
