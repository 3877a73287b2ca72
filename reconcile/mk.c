/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/mk.c - the MultiKueue admission check, pure: the
 * AdmissionCheck's Active verdict from its config and clusters, the
 * dispatch decision for one manager Workload given its copies on the
 * workers (see "MultiKueue" in reconcile.h), the status patch that
 * carries it out, and the copies of the Workload and of its job created
 * on a worker. No I/O: controller/mk.c and controller/mk_wl.c gather the
 * inputs and send the writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/rec_int.h"
#include "reconcile/reconcile.h"

/* ---- the AdmissionCheck ---------------------------------------------- */

/* "[a b c]" of the names whose state is st (Go's %v of a slice). */
static char *names_with(const char *const *names,
    const enum rec_mk_cluster_state *states, size_t n,
    enum rec_mk_cluster_state st, size_t *count)
{
	char *out = cu_strdup("["), *next;
	size_t i;

	*count = 0;
	for (i = 0; out != NULL && i < n; i++) {
		if (states[i] != st)
			continue;
		next =
		    cu_asprintf("%s%s%s", out, *count > 0 ? " " : "", names[i]);
		cu_free(out);
		out = next;
		(*count)++;
	}
	if (out != NULL) {
		next = cu_asprintf("%s]", out);
		cu_free(out);
		out = next;
	}
	return out;
}

bool rec_mk_check_active(const char *config_err, const char *const *clusters,
    const enum rec_mk_cluster_state *states, size_t n, const char **reason,
    char **message)
{
	char *missing = NULL, *inactive = NULL;
	size_t nm = 0, ni = 0;
	bool active = true;

	*reason = "Active";
	*message = NULL;
	if (config_err != NULL) {
		*reason = "BadConfig";
		*message = cu_asprintf(
		    "Cannot load the AdmissionChecks parameters: %s",
		    config_err);
		return false;
	}
	missing = names_with(clusters, states, n, REC_MK_CLUSTER_MISSING, &nm);
	inactive =
	    names_with(clusters, states, n, REC_MK_CLUSTER_INACTIVE, &ni);
	if (nm + ni == 0) {
		*message = cu_strdup("The admission check is active");
	} else {
		if (nm + ni < n) {
			*reason = "SomeActiveClusters";
		} else {
			*reason = "NoUsableClusters";
			active = false;
		}
		if (missing != NULL && inactive != NULL)
			*message = cu_asprintf("%s%s%s%s%s",
			    nm ? "Missing clusters: " : "", nm ? missing : "",
			    nm && ni ? ", " : "",
			    ni ? "Inactive clusters: " : "",
			    ni ? inactive : "");
	}
	cu_free(missing);
	cu_free(inactive);
	return active;
}

/* ---- the dispatch decision -------------------------------------------- */

static const json_t *cond_of(const json_t *obj, const char *type)
{
	const json_t *conds =
	    json_object_get(json_object_get(obj, "status"), "conditions");
	const json_t *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static bool cond_true(const json_t *obj, const char *type)
{
	const json_t *c = cond_of(obj, type);
	const char *st = c ? api_json_str(c, "status") : NULL;

	return st != NULL && strcmp(st, "True") == 0;
}

static const json_t *check_of(const json_t *wl, const char *name)
{
	const json_t *checks =
	    json_object_get(json_object_get(wl, "status"), "admissionChecks");
	const json_t *c;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *n = api_json_str(c, "name");

		if (n != NULL && strcmp(n, name) == 0)
			return c;
	}
	return NULL;
}

/* The copy whose condition type is True since the earliest time (Kueue's
 * bestMatchByCondition; RFC 3339 strings of one format compare as
 * times), ties to the config order; -1 when none. */
static int best_by(const struct rec_mk_in *in, const char *type)
{
	const char *best_t = NULL;
	int best = -1;
	size_t i;

	for (i = 0; i < in->n; i++) {
		const json_t *c;
		const char *t;

		if (in->remotes[i].wl == NULL ||
		    !cond_true(in->remotes[i].wl, type))
			continue;
		c = cond_of(in->remotes[i].wl, type);
		t = api_json_str(c, "lastTransitionTime");
		if (best < 0 ||
		    (t != NULL && best_t != NULL && strcmp(t, best_t) < 0)) {
			best = (int)i;
			best_t = t;
		}
	}
	return best;
}

/* The index of the worker named name [may be NULL], or -1. */
static int worker_at(const struct rec_mk_in *in, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < in->n; i++)
		if (strcmp(in->remotes[i].cluster, name) == 0)
			return (int)i;
	return -1;
}

/* The first admitted copy whose worker has the job (a choice made
 * before the ledger recorded choices); -1 when none. */
static int committed(const struct rec_mk_in *in)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		if (in->remotes[i].wl != NULL && in->remotes[i].has_job &&
		    cond_true(in->remotes[i].wl, REC_COND_ADMITTED))
			return (int)i;
	return -1;
}

static bool holds_quota(const json_t *wl)
{
	return cond_true(wl, REC_COND_QUOTA_RESERVED) &&
	       json_object_get(json_object_get(wl, "status"), "admission") !=
		   NULL;
}

static void remove_all_but(
    const struct rec_mk_in *in, struct rec_mk_plan *out, int keep)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		out->remove[i] = (int)i != keep && in->remotes[i].wl != NULL &&
				 in->remotes[i].reachable;
}

static bool listed(const json_t *arr, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);

		if (s != NULL && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Kueue's Incremental dispatcher: the workers nominated so far stay; a
 * round that ran out (or none yet) adds the next step_size workers not
 * nominated, in name order. */
static void incremental(const struct rec_mk_in *in, struct rec_mk_plan *out)
{
	const json_t *cur = json_object_get(
	    json_object_get(in->local, "status"), "nominatedClusterNames");
	const char *rest[REC_MK_MAX_CLUSTERS];
	size_t i, nrest = 0, step;

	for (i = 0; i < in->n; i++) {
		if (listed(cur, in->remotes[i].cluster))
			out->nominate[out->n_nominate++] =
			    in->remotes[i].cluster;
		else
			rest[nrest++] = in->remotes[i].cluster;
	}
	if (nrest == 0)
		return;
	if (in->round_start_ns != 0 &&
	    in->now_ns - in->round_start_ns <= in->round_ns) {
		out->wake_ns = in->round_start_ns + in->round_ns + 1;
		return;
	}
	qsort(rest, nrest, sizeof(*rest), cmp_name);
	step = in->step_size > 0 ? (size_t)in->step_size : 3;
	for (i = 0; i < nrest && i < step; i++)
		out->nominate[out->n_nominate++] = rest[i];
	out->new_round = true;
	if (nrest > step)
		out->wake_ns = in->now_ns + in->round_ns + 1;
}

/* The chosen worker cname (the check Ready, or the ledger's record) has
 * no admitted copy any more: wait for a lost winner up to
 * workerLostTimeout, else Retry. */
static void reservation_gone(
    const struct rec_mk_in *in, const char *cname, struct rec_mk_plan *out)
{
	size_t i;
	bool reachable = false;

	for (i = 0; cname != NULL && i < in->n; i++)
		if (strcmp(in->remotes[i].cluster, cname) == 0)
			reachable = in->remotes[i].reachable;
	if (!reachable) {
		int64_t since =
		    in->lost_since_ns ? in->lost_since_ns : in->now_ns;

		if (in->now_ns - since < in->worker_lost_ns) {
			out->step = REC_MK_LOST_WAIT;
			out->wake_ns = since + in->worker_lost_ns;
			return;
		}
		out->step = REC_MK_RETRY;
		out->state = "Retry";
		out->message = cu_strdup("Reserving remote lost");
		return;
	}
	out->step = REC_MK_RETRY;
	out->state = "Retry";
	out->message =
	    cu_strdup("Reserving remote no longer exists or is not admitted");
}

/* The choice already made: status.clusterName cname [may be NULL], else
 * the ledger's. Its admitted copy wins (*w); a chosen worker that is
 * unreachable (or no longer configured) is waited for, then the check
 * goes Retry; a reachable one whose copy is gone or not admitted sends
 * an announced check to Retry, while an unannounced record is forgotten
 * and the choice made again. True when out is decided here. */
static bool chosen(const struct rec_mk_in *in, const char *cname,
    const char *state, struct rec_mk_plan *out, int *w)
{
	const char *name = cname != NULL ? cname : in->recorded;
	int i = worker_at(in, name);

	*w = -1;
	if (name == NULL)
		return false;
	if (i >= 0 && in->remotes[i].wl != NULL &&
	    cond_true(in->remotes[i].wl, REC_COND_ADMITTED)) {
		*w = i;
		return false;
	}
	if (cname == NULL && i >= 0 && in->remotes[i].reachable) {
		out->forget = true;
		return false;
	}
	/* Retry or Rejected already: the Workload controller acts. */
	if (state != NULL &&
	    (strcmp(state, "Retry") == 0 || strcmp(state, "Rejected") == 0))
		return true;
	/* The other workers' copies are of no use while it stands. */
	remove_all_but(in, out, i);
	reservation_gone(in, name, out);
	return true;
}

static void dispatch(const struct rec_mk_in *in, struct rec_mk_plan *out);

void rec_mk_decide(const struct rec_mk_in *in, struct rec_mk_plan *out)
{
	const json_t *acs = check_of(in->local, in->check);
	const char *state = acs ? api_json_str(acs, "state") : NULL;
	const char *cname =
	    api_json_str(json_object_get(in->local, "status"), "clusterName");
	bool ready = state != NULL && strcmp(state, "Ready") == 0;
	int w;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->remote = -1;
	if (acs == NULL || in->n > REC_MK_MAX_CLUSTERS)
		return;
	/* 1. finished, or no quota: every copy goes. */
	if (cond_true(in->local, REC_COND_FINISHED) ||
	    !holds_quota(in->local)) {
		const json_t *st = json_object_get(in->local, "status");

		out->step = REC_MK_REMOVE_ALL;
		out->forget = in->recorded != NULL;
		remove_all_but(in, out, -1);
		out->clear_cluster =
		    !cond_true(in->local, REC_COND_FINISHED) &&
		    (cname != NULL ||
			json_object_get(st, "nominatedClusterNames") != NULL);
		return;
	}
	/* The owner must have an adapter and be handed to MultiKueue
	 * (its managedBy). */
	if (in->no_adapter != NULL || !in->job_managed) {
		if (state != NULL && strcmp(state, "Rejected") == 0)
			return;
		out->step = REC_MK_REJECT;
		out->state = "Rejected";
		if (in->no_adapter != NULL)
			out->message = cu_asprintf("No multikueue adapter "
						   "found for owner kind "
						   "\"%s\"",
			    in->no_adapter);
		else
			out->message =
			    cu_asprintf("The owner is not managed by Kueue: "
					"Expecting %s to be \"%s\" not \"%s\"",
				in->managed_by_field ? in->managed_by_field
						     : "spec.managedBy",
				REC_MK_CONTROLLER,
				in->job_managed_by ? in->job_managed_by : "");
		return;
	}
	/* 2. a finished copy finishes the Workload. */
	if ((w = best_by(in, REC_COND_FINISHED)) >= 0) {
		const json_t *c = cond_of(in->remotes[w].wl, REC_COND_FINISHED);

		out->step = REC_MK_FINISH;
		out->remote = w;
		out->finish_reason = api_json_str(c, "reason");
		out->finish_message = api_json_str(c, "message");
		return;
	}
	/* 2b. evicted on the manager while holding quota (the check went
	 * Retry, or a manager-side preemption): the copies go, and the
	 * manager's job, stopped, must stop showing the worker's pods or the
	 * quota is never released. A worker that still holds the job is
	 * waited for (its deletion is seen in its cache); a lost worker
	 * cannot be, it was given workerLostTimeout already. */
	if (cond_true(in->local, REC_COND_EVICTED)) {
		bool held = false;

		out->step = REC_MK_EVICTED;
		out->forget = in->recorded != NULL;
		remove_all_but(in, out, -1);
		for (i = 0; i < in->n; i++)
			held |=
			    in->remotes[i].reachable && in->remotes[i].has_job;
		out->reset_job = in->job_active && in->job_suspended && !held;
		return;
	}
	/* 3. a choice made (announced in status.clusterName, or recorded in
	 * the ledger) is kept: never another worker while it stands. */
	if (chosen(in, cname, state, out, &w))
		return;
	/* 4. else the admitted copy whose worker already has the job (a
	 * choice from before the ledger), else the earliest admitted, is
	 * recorded first and announced once the record is committed. */
	if (w < 0)
		w = committed(in);
	if (w < 0)
		w = best_by(in, REC_COND_ADMITTED);
	if (w < 0 && ready) {
		reservation_gone(in, cname, out);
		return;
	}
	if (w >= 0 && worker_at(in, in->recorded) != w &&
	    (cname == NULL || strcmp(cname, in->remotes[w].cluster) != 0)) {
		out->step = REC_MK_RECORD;
		out->remote = w;
		out->record = in->remotes[w].cluster;
		return;
	}
	if (w >= 0) {
		out->step = REC_MK_WINNER;
		out->remote = w;
		remove_all_but(in, out, w);
		if (state == NULL || (strcmp(state, "Retry") != 0 &&
					 strcmp(state, "Rejected") != 0)) {
			out->state = "Ready";
			out->message = cu_asprintf(
			    "The workload got reservation on \"%s\"",
			    in->remotes[w].cluster);
			if (cname == NULL ||
			    strcmp(cname, in->remotes[w].cluster) != 0)
				out->cluster_name = in->remotes[w].cluster;
		}
		return;
	}
	/* 5. dispatch: nominate every reachable worker (AllAtOnce), while
	 * the check is Pending (the Workload is not evicted: 2b). */
	if (state != NULL && strcmp(state, "Pending") == 0)
		dispatch(in, out);
}

/* Step 5 of rec_mk_decide: the workers nominated, the copies to create
 * and to remove. */
static void dispatch(const struct rec_mk_in *in, struct rec_mk_plan *out)
{
	size_t i;

	out->step = REC_MK_DISPATCH;
	if (in->incremental) {
		incremental(in, out);
	} else {
		for (i = 0; i < in->n; i++)
			if (in->remotes[i].reachable)
				out->nominate[out->n_nominate++] =
				    in->remotes[i].cluster;
	}
	for (i = 0; i < in->n; i++) {
		bool nominated = false;
		size_t k;

		for (k = 0; k < out->n_nominate && !nominated; k++)
			nominated = strcmp(out->nominate[k],
					in->remotes[i].cluster) == 0;
		out->create[i] = nominated && in->remotes[i].reachable &&
				 in->remotes[i].wl == NULL;
		out->remove[i] = !nominated && in->remotes[i].reachable &&
				 in->remotes[i].wl != NULL;
	}
}

bool rec_mk_finish_waits(const json_t *local, const struct rec_fw *fw,
    const json_t *remote, bool job_suspended, const json_t *status_patch,
    int64_t waited_ns, int64_t limit_ns)
{
	if (cond_true(local, REC_COND_EVICTED) || waited_ns >= limit_ns)
		return false;
	if (fw != NULL &&
	    (remote == NULL || !rec__doc_finished(fw, remote, NULL, NULL)))
		return true;
	return job_suspended || status_patch != NULL;
}

void rec_mk_plan_dispose(struct rec_mk_plan *p)
{
	if (p == NULL)
		return;
	cu_free(p->message);
	p->message = NULL;
}

/* ---- the manager's Workload status ------------------------------------ */

static int set_check(
    json_t *st, const char *check, const struct rec_mk_plan *p, const char *now)
{
	json_t *checks = json_object_get(st, "admissionChecks"), *c;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *n = api_json_str(c, "name");
		const char *old = api_json_str(c, "state");
		const char *msg = api_json_str(c, "message");

		if (n == NULL || strcmp(n, check) != 0)
			continue;
		if (old != NULL && strcmp(old, p->state) == 0 && msg != NULL &&
		    p->message != NULL && strcmp(msg, p->message) == 0)
			return CU_OK;
		if (json_object_set_new(c, "state", json_string(p->state)) ||
		    json_object_set_new(c, "message",
			json_string(p->message ? p->message : "")) ||
		    json_object_set_new(
			c, "lastTransitionTime", json_string(now)))
			return CU_ENOMEM;
	}
	return CU_OK;
}

static int set_finished(
    json_t *st, const struct rec_mk_plan *p, const char *now, long long gen)
{
	json_t *conds = api_json_obj_child(st, "conditions"), *c, *nc;
	size_t i;

	if (!json_is_array(conds)) {
		conds = json_array();
		if (conds == NULL ||
		    json_object_set_new(st, "conditions", conds) != 0)
			return CU_ENOMEM;
	}
	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, REC_COND_FINISHED) == 0) {
			json_array_remove(conds, i);
			break;
		}
	}
	nc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type",
	    REC_COND_FINISHED, "status", "True", "reason",
	    p->finish_reason ? p->finish_reason : "Succeeded", "message",
	    p->finish_message ? p->finish_message : "", "lastTransitionTime",
	    now, "observedGeneration", (json_int_t)gen);
	if (nc == NULL || json_array_append_new(conds, nc) != 0)
		return CU_ENOMEM;
	return CU_OK;
}

int rec_mk_status_patch(const json_t *local, const char *check,
    const struct rec_mk_plan *p, const char *const *nominated, size_t n,
    const char *now, json_t **patch, cu_error *err)
{
	json_t *to = json_deep_copy(local), *st;
	long long gen = (long long)json_integer_value(
	    json_object_get(json_object_get(local, "metadata"), "generation"));
	int rc = CU_OK;
	size_t i;

	*patch = NULL;
	st = to != NULL ? api_json_obj_child(to, "status") : NULL;
	if (st == NULL)
		goto nomem;
	if (p->state != NULL && set_check(st, check, p, now) != CU_OK)
		goto nomem;
	if (p->cluster_name != NULL) {
		if (json_object_set_new(
			st, "clusterName", json_string(p->cluster_name)) != 0)
			goto nomem;
		json_object_del(st, "nominatedClusterNames");
	}
	if (p->clear_cluster) {
		json_object_del(st, "clusterName");
		json_object_del(st, "nominatedClusterNames");
	}
	if (p->step == REC_MK_DISPATCH) {
		json_t *a = json_array();

		for (i = 0; a != NULL && i < n; i++)
			json_array_append_new(a, json_string(nominated[i]));
		if (a == NULL ||
		    json_object_set_new(
			st, "nominatedClusterNames", n ? a : json_null()) != 0)
			goto nomem;
		if (n == 0) {
			json_decref(a);
			json_object_del(st, "nominatedClusterNames");
		}
	}
	if (p->step == REC_MK_FINISH && set_finished(st, p, now, gen) != CU_OK)
		goto nomem;
	rc = rec__strict_patch(local, to, patch, err);
	json_decref(to);
	return rc;
nomem:
	json_decref(to);
	return rec__nomem(err, "workload status");
}

/* ---- the copies on a worker ------------------------------------------- */

/* name, namespace, labels (less drop [may be NULL]) with the extra
 * labels, annotations of obj [borrowed] as a new metadata. */
static json_t *clone_meta(const json_t *obj, const char *drop, const char *k1,
    const char *v1, const char *k2, const char *v2)
{
	const json_t *md = json_object_get(obj, "metadata");
	json_t *out = json_object(), *labels, *ann;

	if (out == NULL)
		return NULL;
	json_object_set(out, "name", json_object_get(md, "name"));
	json_object_set(out, "namespace", json_object_get(md, "namespace"));
	labels = json_deep_copy(json_object_get(md, "labels"));
	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	if (labels == NULL) {
		json_decref(out);
		return NULL;
	}
	if (drop != NULL)
		json_object_del(labels, drop);
	if (k1 != NULL)
		json_object_set_new(labels, k1, json_string(v1));
	if (k2 != NULL)
		json_object_set_new(labels, k2, json_string(v2));
	json_object_set_new(out, "labels", labels);
	ann = json_object_get(md, "annotations");
	if (json_is_object(ann) && json_object_size(ann) > 0)
		json_object_set(out, "annotations", ann);
	return out;
}

json_t *rec_mk_remote_workload(const json_t *local, const char *origin)
{
	json_t *md = clone_meta(
	    local, REC_LABEL_JOB_UID, REC_MK_ORIGIN_LABEL, origin, NULL, NULL);
	json_t *spec = json_deep_copy(json_object_get(local, "spec"));

	if (md == NULL || spec == NULL) {
		json_decref(md);
		json_decref(spec);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion",
	    "kueue.x-k8s.io/v1beta2", "kind", "Workload", "metadata", md,
	    "spec", spec);
}

/* The labels the Job controller puts on a Job's pod template. */
static const char *const job_template_labels[] = {"controller-uid",
    "batch.kubernetes.io/controller-uid", "job-name",
    "batch.kubernetes.io/job-name", NULL};

/* Remove the last key of path [static, NULL-terminated] from doc. */
static void del_path(json_t *doc, const char *const *path)
{
	json_t *o = doc;
	size_t i;

	for (i = 0; o != NULL && path[i] != NULL && path[i + 1] != NULL; i++)
		o = json_object_get(o, path[i]);
	if (json_is_object(o) && path[i] != NULL)
		json_object_del(o, path[i]);
}

/* Drop the spec.runtimePatches entries of manager from spec. */
static void drop_patches(json_t *spec, const char *manager)
{
	json_t *ps = json_object_get(spec, "runtimePatches");
	size_t i = 0;

	while (i < json_array_size(ps)) {
		const char *m = api_json_str(json_array_get(ps, i), "manager");

		if (m != NULL && strcmp(m, manager) == 0)
			json_array_remove(ps, i);
		else
			i++;
	}
	if (json_is_array(ps) && json_array_size(ps) == 0)
		json_object_del(spec, "runtimePatches");
}

json_t *rec_mk_remote_job(const struct rec_fw *fw, const json_t *doc,
    const char *wl_name, const char *origin)
{
	const struct rec_mk_adapter *a = rec_mk_adapter_of(fw);
	json_t *md, *spec, *out;
	char *av;
	size_t i;

	if (a == NULL)
		return NULL;
	md = clone_meta(doc, NULL, REC_PREBUILT_WORKLOAD, wl_name,
	    REC_MK_ORIGIN_LABEL, origin);
	spec = json_deep_copy(json_object_get(doc, "spec"));
	av = fw->group[0] ? cu_asprintf("%s/%s", fw->group, fw->version)
			  : cu_strdup(fw->version);
	if (md == NULL || !json_is_object(spec) || av == NULL) {
		json_decref(md);
		json_decref(spec);
		cu_free(av);
		return NULL;
	}
	if (a->job_cleanup) {
		json_t *tl = json_object_get(
		    json_object_get(
			json_object_get(spec, "template"), "metadata"),
		    "labels");

		json_object_del(spec, "selector");
		for (i = 0; tl != NULL && job_template_labels[i] != NULL; i++)
			json_object_del(tl, job_template_labels[i]);
	}
	if (a->drop_patch_manager != NULL)
		drop_patches(spec, a->drop_patch_manager);
	out = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", av, "kind",
	    fw->kind, "metadata", md, "spec", spec);
	cu_free(av);
	/* Cleared: the worker's own controller takes the copy over. */
	if (out != NULL && fw->managed_by != NULL)
		del_path(out, fw->managed_by);
	return out;
}

/* The status fields of obj that adapter a copies [owned], or NULL. */
static json_t *copied_status(const struct rec_mk_adapter *a, const json_t *obj)
{
	const json_t *st = json_object_get(obj, "status");
	json_t *out;
	size_t i;

	if (!json_is_object(st))
		return NULL;
	if (a == NULL || a->status == NULL)
		return json_deep_copy(st);
	out = json_object();
	for (i = 0; out != NULL && a->status[i] != NULL; i++) {
		const json_t *v = json_object_get(st, a->status[i]);

		if (v != NULL)
			json_object_set_new(
			    out, a->status[i], json_deep_copy(v));
	}
	return out;
}

json_t *rec_mk_job_status_patch(
    const struct rec_mk_adapter *a, const json_t *doc, const json_t *remote)
{
	json_t *rs = copied_status(a, remote);
	json_t *ls = copied_status(a, doc);
	const char *k;
	json_t *v;

	if (rs == NULL || json_equal(rs, ls)) {
		json_decref(rs);
		json_decref(ls);
		return NULL;
	}
	/* A merge patch: the worker's fields, and null for those the
	 * manager's copy has and the worker's has not. */
	json_object_foreach(ls, k, v)
	{
		if (json_object_get(rs, k) == NULL)
			json_object_set_new(rs, k, json_null());
	}
	json_decref(ls);
	return json_pack("{s:o}", "status", rs);
}

/* Zero the counts named in keys of object o [borrowed] that are
 * positive; true when some was. */
static bool zero_counts(json_t *o, const char *const *keys)
{
	bool any = false;
	size_t i;

	for (i = 0; keys != NULL && keys[i] != NULL; i++) {
		json_t *v = json_object_get(o, keys[i]);

		if (json_is_integer(v) && json_integer_value(v) > 0) {
			json_object_set_new(o, keys[i], json_integer(0));
			any = true;
		}
	}
	return any;
}

/* The positive counts of a Job's status ls [borrowed] set to null or
 * to 0 in st. */
static bool top_counts(
    const struct rec_mk_adapter *a, const json_t *ls, json_t *st)
{
	bool any = false;
	size_t i;

	for (i = 0; a->counts_null != NULL && a->counts_null[i] != NULL; i++)
		if (json_integer_value(json_object_get(ls, a->counts_null[i])) >
		    0) {
			json_object_set_new(st, a->counts_null[i], json_null());
			any = true;
		}
	for (i = 0; a->counts_zero != NULL && a->counts_zero[i] != NULL; i++)
		if (json_integer_value(json_object_get(ls, a->counts_zero[i])) >
		    0) {
			json_object_set_new(
			    st, a->counts_zero[i], json_integer(0));
			any = true;
		}
	return any;
}

/* The array or map a->counts_in of ls [borrowed] with its counts zeroed
 * (a merge patch replaces it whole) set in st. */
static bool nested_counts(
    const struct rec_mk_adapter *a, const json_t *ls, json_t *st)
{
	json_t *c = json_deep_copy(json_object_get(ls, a->counts_in)), *r;
	const char *k;
	bool some = false;
	size_t i;

	if (a->counts_shape == REC_MK_COUNTS_ARRAY && json_is_array(c)) {
		json_array_foreach(c, i, r) some |=
		    json_is_object(r) && zero_counts(r, a->counts_zero);
	} else if (a->counts_shape == REC_MK_COUNTS_MAP && json_is_object(c)) {
		json_object_foreach(c, k, r) some |=
		    json_is_object(r) && zero_counts(r, a->counts_zero);
	}
	if (some && json_object_set(st, a->counts_in, c) != 0)
		some = false;
	json_decref(c);
	return some;
}

/* a->state_field of ls [borrowed] set to a->state_stopped in st. */
static bool stop_state(
    const struct rec_mk_adapter *a, const json_t *ls, json_t *st)
{
	const char *cur = api_json_str(ls, a->state_field);

	if (a->state_stopped == NULL
		? cur == NULL
		: cur != NULL && strcmp(cur, a->state_stopped) == 0)
		return false;
	json_object_set_new(st, a->state_field,
	    a->state_stopped ? json_string(a->state_stopped) : json_null());
	return true;
}

/* The condition a->cond_off of ls [borrowed], True, set False in st (the
 * whole list: a merge patch replaces it). */
static bool cond_off(
    const struct rec_mk_adapter *a, const json_t *ls, json_t *st)
{
	json_t *cs = json_deep_copy(json_object_get(ls, "conditions")), *c;
	bool any = false;
	size_t i;

	json_array_foreach(cs, i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *v = api_json_str(c, "status");

		if (t != NULL && v != NULL && strcmp(t, a->cond_off) == 0 &&
		    strcmp(v, "True") == 0) {
			json_object_set_new(c, "status", json_string("False"));
			any = true;
		}
	}
	if (any && json_object_set(st, "conditions", cs) != 0)
		any = false;
	json_decref(cs);
	return any;
}

json_t *rec_mk_job_inactive_patch(
    const struct rec_mk_adapter *a, const json_t *doc)
{
	const json_t *ls = json_object_get(doc, "status");
	json_t *st;
	bool any = false;

	if (a == NULL || (st = json_object()) == NULL)
		return NULL;
	if (a->counts_shape == REC_MK_COUNTS_TOP)
		any |= top_counts(a, ls, st);
	else if (a->counts_shape != REC_MK_COUNTS_NONE)
		any |= nested_counts(a, ls, st);
	if (a->state_field != NULL)
		any |= stop_state(a, ls, st);
	if (a->cond_off != NULL)
		any |= cond_off(a, ls, st);
	if (!any) {
		json_decref(st);
		return NULL;
	}
	return json_pack("{s:o}", "status", st);
}
