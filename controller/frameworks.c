/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/frameworks.c - the controller's side of the framework
 * descriptors (reconcile/framework.c, docs/frameworks.md): which job
 * informer holds which kind, whether its framework is enabled, the
 * gate's per-kind switches, the training runtimes a TrainJob's pod sets
 * are read from and the TrainJobs a runtime's event concerns. The job
 * informers follow the descriptor table (INF_JOB + i is rec_fw_at(i));
 * ctl_resources repeats each descriptor's resource, checked by the unit
 * test of this file's users.
 */
#include <stdio.h>
#include <string.h>

#include "controller/config.h"
#include "controller/ctl_int.h"
#include "reconcile/reconcile.h"

bool ctl_fw_is_job(enum inf_id id)
{
	return id >= INF_JOB && id < INF__COUNT;
}

const char *ctl_fw_kind(enum inf_id id)
{
	const struct rec_fw *fw =
	    ctl_fw_is_job(id) ? rec_fw_at((size_t)(id - INF_JOB)) : NULL;

	return fw != NULL ? fw->kind : "";
}

enum inf_id ctl_fw_inf(const char *kind)
{
	const struct rec_fw *fw;
	size_t i;

	for (i = 0; kind != NULL && (fw = rec_fw_at(i)) != NULL &&
		    INF_JOB + i < INF__COUNT;
	     i++)
		if (strcmp(fw->kind, kind) == 0)
			return (enum inf_id)(INF_JOB + i);
	return INF__COUNT;
}

bool ctl_fw_enabled(const struct ctl_config *cfg, enum inf_id id)
{
	const struct rec_fw *fw =
	    ctl_fw_is_job(id) ? rec_fw_at((size_t)(id - INF_JOB)) : NULL;
	size_t i;

	if (fw == NULL || rec_fw_pods_only(fw))
		return false; /* their Pods are reconciled as pod groups */
	if (id == INF_JOB)
		return cfg->integrations.job;
	if (id == INF_JOBSET)
		return cfg->integrations.jobset;
	for (i = 0; i < cfg->integrations.nframeworks; i++)
		if (strcmp(cfg->integrations.frameworks[i], fw->name) == 0)
			return true;
	return false;
}

bool ctl_fw_watched(const struct ctl_config *cfg, enum inf_id id)
{
	size_t i;

	if (id != INF_STATEFULSET && id != INF_LWS)
		return ctl_fw_enabled(cfg, id);
	for (i = 0; i < cfg->integrations.nframeworks; i++)
		if (strcmp(cfg->integrations.frameworks[i],
			id == INF_LWS
			    ? "leaderworkerset.x-k8s.io/leaderworkerset"
			    : "statefulset") == 0)
			return true;
	return false;
}

/* The StatefulSet named by an ownerReference r [borrowed] if it is one
 * and cached with r's uid; *named when r names one at all. */
static const json_t *sts_of(
    ctl *c, const char *ns, const struct api_owner_ref *r, bool *named)
{
	const json_t *sts;
	const char *uid;

	*named = r != NULL && r->kind != NULL && r->api_version != NULL &&
		 r->name != NULL && strcmp(r->kind, "StatefulSet") == 0 &&
		 strcmp(r->api_version, "apps/v1") == 0;
	if (!*named || c->inf[INF_STATEFULSET] == NULL)
		return NULL;
	sts = api_informer_get(c->inf[INF_STATEFULSET], ns, r->name);
	uid = ctl_jmeta((json_t *)sts, "uid");
	return sts != NULL && uid != NULL && r->uid != NULL &&
		       strcmp(uid, r->uid) == 0
		   ? sts
		   : NULL;
}

const json_t *ctl_fw_sts_parent(ctl *c, const json_t *const *pods, size_t n,
    const struct api_workload *wl, bool *awaited)
{
	const json_t *sts = NULL;
	struct api_meta m;
	bool named = false;
	cu_error err;
	size_t i;

	*awaited = false;
	for (i = 0; wl != NULL && sts == NULL && i < wl->meta.n_owner_refs; i++)
		sts = sts_of(
		    c, wl->meta.namespace_, &wl->meta.owner_refs[i], &named);
	if (sts != NULL || n == 0)
		return sts;
	if (api_meta_decode(&m, json_object_get(pods[0], "metadata"), &err) !=
	    CU_OK)
		return NULL;
	sts = sts_of(c, m.namespace_, api_meta_controller(&m), &named);
	*awaited = sts == NULL && named && c->inf[INF_STATEFULSET] != NULL;
	api_meta_dispose(&m);
	return sts;
}

void ctl_fw_sts_reconcile(ctl *c, const char *const *key, int64_t now)
{
	json_t *sts =
	    c->inf[INF_STATEFULSET] != NULL
		? api_informer_get(c->inf[INF_STATEFULSET], key[1], key[2])
		: NULL;
	const char *uid = ctl_jmeta(sts, "uid");
	char *group = NULL;
	cu_error err;

	if (uid == NULL ||
	    api_workload_name("StatefulSet", "apps", key[2], uid, -1,
		API_WORKLOAD_NAME_MAX, &group, &err) != CU_OK)
		return;
	ctl_reconcile_pod_group(
	    c, (const char *const[]){CTL_KIND_POD_GROUP, key[1], group}, now);
	cu_free(group);
}

void ctl_fw_gate_config(const struct ctl_config *cfg, struct ns_gate_config *g)
{
	size_t id;

	g->external = (const char *const *)cfg->integrations.external;
	g->n_external = cfg->integrations.nexternal;

	for (id = INF_JOBSET + 1; id < INF__COUNT; id++) {
		const struct rec_fw *fw = rec_fw_at(id - INF_JOB);
		char av[128];
		enum ns_gate_kind k;

		if (fw == NULL)
			continue;
		if (fw->group[0] != '\0')
			snprintf(
			    av, sizeof(av), "%s/%s", fw->group, fw->version);
		else
			snprintf(av, sizeof(av), "%s", fw->version);
		k = ns_gate_kind_of(av, fw->kind);
		if (k != NS_GATE_KIND_OTHER)
			g->enabled[k] = ctl_fw_enabled(cfg, (enum inf_id)id);
	}
}

const json_t *ctl_fw_lookup(const char *group, const char *plural,
    const char *ns, const char *name, void *payload)
{
	ctl *c = payload;
	enum inf_id id = INF__COUNT;

	if (strcmp(group, "trainer.kubeflow.org") == 0 &&
	    strcmp(plural, "trainingruntimes") == 0)
		id = INF_TRAINRT;
	else if (strcmp(group, "trainer.kubeflow.org") == 0 &&
		 strcmp(plural, "clustertrainingruntimes") == 0)
		id = INF_CTRAINRT;
	if (id == INF__COUNT || c->inf[id] == NULL)
		return NULL;
	return api_informer_get(c->inf[id], ns, name);
}

struct runtime_news {
	ctl *c;
	bool cluster;
	const char *ns;
	const char *name;
};

static void mark_user(json_t *tj, void *payload)
{
	struct runtime_news *r = payload;
	const char *ns = ctl_jmeta(tj, "namespace");
	const char *name = ctl_jmeta(tj, "name");

	if (name != NULL &&
	    rec_trainjob_uses_runtime(tj, r->cluster, r->ns, r->name))
		(void)ctl_keys_put(&r->c->dirty_jobs,
		    CTL_K3(ctl_fw_kind(INF_TRAINJOB), ns ? ns : "", name));
}

void ctl_fw_runtime_mark(ctl *c, enum inf_id id, json_t *obj)
{
	struct runtime_news r = {c, id == INF_CTRAINRT,
	    ctl_jmeta(obj, "namespace"), ctl_jmeta(obj, "name")};

	if ((id != INF_TRAINRT && id != INF_CTRAINRT) || r.name == NULL ||
	    c->inf[INF_TRAINJOB] == NULL)
		return;
	api_informer_foreach(c->inf[INF_TRAINJOB], mark_user, &r);
}
