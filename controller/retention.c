/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/retention.c - Kueue's objectRetentionPolicies carried out: a
 * finished Workload is deleted once afterFinished has passed since it
 * finished (Normal event Deleted on the Workload, its job stays), and the
 * job of a Workload Kueue deactivated (requeuing limit, maximum execution
 * time) is deleted with Background propagation once
 * afterDeactivatedByKueue has passed since the eviction (Normal event
 * Deleted on the job; the Workload follows by garbage collection). The
 * decision is reconcile/retention.c's; this file wakes the Workload when
 * its deadline comes and sends the deletes. Writers only.
 */
#include <string.h>

#include "api/json.h"
#include "controller/ctl_int.h"

/* Cheap test on the cached JSON before decoding: Finished=True, or
 * spec.active false. */
static bool may_apply(json_t *obj)
{
	json_t *st = json_object_get(obj, "status"), *cond;
	size_t i;

	if (json_is_false(
		json_object_get(json_object_get(obj, "spec"), "active")))
		return true;
	json_array_foreach(json_object_get(st, "conditions"), i, cond)
	{
		const char *t = api_json_str(cond, "type");
		const char *s = api_json_str(cond, "status");

		if (t != NULL && s != NULL &&
		    strcmp(t, REC_COND_FINISHED) == 0 && strcmp(s, "True") == 0)
			return true;
	}
	return false;
}

static json_t *delete_options(const char *uid, const char *propagation)
{
	json_t *o = json_pack("{s:{s:s}}", "preconditions", "uid", uid);

	if (o != NULL && propagation != NULL &&
	    json_object_set_new(
		o, "propagationPolicy", json_string(propagation)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void delete_workload(ctl *c, json_t *obj, const struct api_workload *wl)
{
	const char *ns = wl->meta.namespace_, *name = wl->meta.name;
	json_t *opts = delete_options(wl->meta.uid, NULL);
	struct ctl_pipe_write *w;

	if (opts == NULL)
		return;
	w = ctl_pipe_queue(c->pipe, CTL_PIPE_WL_DELETE, CTL_RES(INF_WL), ns,
	    name, wl->meta.uid, opts);
	if (w == NULL)
		return;
	ctl_pipe_expect(c->pipe, w, CTL_K3(CTL_KIND_WL, ns, name), true);
	ctl_emit(c, obj, "Normal", "Deleted",
	    "Deleted finished workload due to elapsed retention");
	cu_info_kv("Deleting finished Workload: retention elapsed",
	    CU_LOGF_REF("workload", ns, name));
}

static void delete_job(ctl *c, const struct api_workload *wl)
{
	const struct api_owner_ref *o = api_meta_controller(&wl->meta);
	const char *ns = wl->meta.namespace_;
	const char *kind;
	enum inf_id id;
	json_t *job, *opts;
	struct ctl_pipe_write *w;

	if (o == NULL || o->kind == NULL || o->name == NULL)
		return;
	id = ctl_fw_inf(o->kind);
	if (id == INF__COUNT)
		return; /* a kind this controller does not manage */
	kind = ctl_fw_kind(id);
	if (c->inf[id] == NULL ||
	    (job = api_informer_get(c->inf[id], ns, o->name)) == NULL ||
	    json_object_get(json_object_get(job, "metadata"),
		"deletionTimestamp") != NULL ||
	    ctl_pipe_awaits(c->pipe, CTL_K3(kind, ns, o->name)))
		return;
	opts = delete_options(ctl_jmeta(job, "uid"), "Background");
	if (opts == NULL)
		return;
	w = ctl_pipe_queue(
	    c->pipe, CTL_PIPE_WL_DELETE, CTL_RES(id), ns, o->name, NULL, opts);
	if (w == NULL)
		return;
	ctl_pipe_expect(c->pipe, w, CTL_K3(kind, ns, o->name), true);
	ctl_emit(c, job, "Normal", "Deleted",
	    "Deleted job: deactivation retention period expired");
	cu_info_kv("Deleting job of a deactivated Workload: retention elapsed",
	    CU_LOGF_REF("workload", ns, wl->meta.name),
	    CU_LOGF_REF("job", ns, o->name));
}

void ctl_retention_workload(ctl *c, const char *const *key, int64_t now)
{
	struct rec_retention cfg = {
	    c->cfg->retention.has_after_finished,
	    c->cfg->retention.after_finished_ns,
	    c->cfg->retention.has_after_deactivated,
	    c->cfg->retention.after_deactivated_ns,
	};
	struct api_workload wl;
	json_t *obj;
	int64_t due;
	cu_error err;

	if ((!cfg.has_after_finished && !cfg.has_after_deactivated) ||
	    !ctl_may_write(c))
		return;
	obj = api_informer_get(c->inf[INF_WL], key[0], key[1]);
	if (obj == NULL || !may_apply(obj) ||
	    ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, key[0], key[1])))
		return;
	if (api_workload_decode(&wl, obj, &err) != CU_OK)
		return; /* the Workload reconciler warned */
	switch (rec_retention_decide(&cfg, &wl, now, &due)) {
	case REC_RETAIN_KEEP:
		break;
	case REC_RETAIN_WAIT:
		ctl_wake_workload(c, key, due);
		break;
	case REC_RETAIN_DELETE_WORKLOAD:
		delete_workload(c, obj, &wl);
		break;
	case REC_RETAIN_DELETE_JOB:
		delete_job(c, &wl);
		break;
	}
	api_workload_dispose(&wl);
}
