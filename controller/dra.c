/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/dra.c - dynamic resource allocation against quota, as Kueue's
 * KueueDRAIntegration: Workloads enter the quota model with the devices
 * their ResourceClaimTemplates request (and the DRA-backed extended
 * resources their pods request) charged to the quota resources of
 * resources.deviceClassMappings (reconcile/dra.c decides, reading the
 * DeviceClass and ResourceClaimTemplate caches). A Workload that cannot be
 * counted is not queued: it shows QuotaReserved=False, reason
 * Misconfigured, with Kueue's message and a Warning event, and is looked at
 * again when a DeviceClass, ResourceClaimTemplate or ResourceSlice changes.
 * The CEL selectors of every request are checked against the
 * ResourceSlice devices (cel/), and mappings with counter sources
 * (KueueDRAIntegrationPartitionableDevices) charge counters of the
 * devices they match.
 */
#include <string.h>

#include "controller/ctl_int.h"

struct ctl_dra {
	struct rec_dra_config cfg;
	struct rec_dra_mapping *maps;	  /* owned; strings borrowed from cfg */
	struct rec_dra_counter *counters; /* owned; strings borrowed */
	ctl_keys waiting;    /* {ns, name} refused, to look at again */
	const char **binary; /* owned array; names borrowed from cfg */
};

/* Kueue prints the quota resources of counter and capacity mappings in
 * binary suffixes (10Gi): registered with the admission printer. */
static int register_binary(struct ctl_dra *d, const struct ctl_config *cfg)
{
	size_t i, n = 0;

	d->binary = cu_calloc(cfg->dra.nmappings + 1, sizeof(*d->binary));
	if (d->binary == NULL)
		return CU_ENOMEM;
	for (i = 0; cfg->dra.enabled && i < cfg->dra.nmappings; i++)
		if (cfg->dra.mappings[i].counter_sources ||
		    cfg->dra.mappings[i].capacity_sources)
			d->binary[n++] = cfg->dra.mappings[i].name;
	adm_binary_resources_set(d->binary, n);
	return CU_OK;
}

/* The counter sources of the mappings (sources[].counter), in order;
 * the strings stay in the configuration's JSON. */
static int load_counters(struct ctl_dra *d, const struct ctl_config *cfg)
{
	size_t i, k, n = 0, at = 0;
	json_t *s;

	for (i = 0; i < cfg->dra.nmappings; i++)
		n += json_array_size(cfg->dra.mappings[i].sources);
	d->counters = cu_calloc(n + 1, sizeof(*d->counters));
	if (d->counters == NULL)
		return CU_ENOMEM;
	for (i = 0; i < cfg->dra.nmappings; i++) {
		d->maps[i].counters = &d->counters[at];
		json_array_foreach(cfg->dra.mappings[i].sources, k, s)
		{
			json_t *cn = json_object_get(s, "counter");

			if (cn == NULL)
				continue;
			d->counters[at].name =
			    json_string_value(json_object_get(cn, "name"));
			d->counters[at].driver =
			    json_string_value(json_object_get(cn, "driver"));
			d->counters[at].selector =
			    json_string_value(json_object_get(
				json_object_get(
				    json_object_get(cn, "deviceSelector"),
				    "cel"),
				"expression"));
			if (d->counters[at].name == NULL ||
			    d->counters[at].driver == NULL)
				continue;
			at++;
			d->maps[i].n_counters++;
		}
	}
	return CU_OK;
}

int ctl_dra_init(ctl *c)
{
	const struct ctl_config *cfg = c->cfg;
	struct ctl_dra *d = cu_calloc(1, sizeof(*d));
	size_t i;

	if (d == NULL)
		return CU_ENOMEM;
	d->maps = cu_calloc(cfg->dra.nmappings + 1, sizeof(*d->maps));
	if (d->maps == NULL) {
		cu_free(d);
		return CU_ENOMEM;
	}
	for (i = 0; i < cfg->dra.nmappings; i++) {
		const struct ctl_config_dcm *m = &cfg->dra.mappings[i];

		d->maps[i].name = m->name;
		d->maps[i].classes = (const char *const *)m->classes;
		d->maps[i].n_classes = m->nclasses;
		d->maps[i].by_device_count =
		    !m->counter_sources && !m->capacity_sources;
	}
	if ((cfg->dra.partitionable && load_counters(d, cfg) != CU_OK) ||
	    register_binary(d, cfg) != CU_OK) {
		cu_free(d->binary);
		cu_free(d->counters);
		cu_free(d->maps);
		cu_free(d);
		return CU_ENOMEM;
	}
	d->cfg.enabled = cfg->dra.enabled;
	d->cfg.extended = cfg->dra.extended;
	d->cfg.reject_disabled = cfg->dra.reject_disabled;
	d->cfg.mappings = d->maps;
	d->cfg.n_mappings = cfg->dra.nmappings;
	ctl_keys_init(&d->waiting, 2);
	c->dra = d;
	return CU_OK;
}

void ctl_dra_dispose(ctl *c)
{
	if (c->dra == NULL)
		return;
	ctl_keys_dispose(&c->dra->waiting);
	adm_binary_resources_set(NULL, 0);
	cu_free(c->dra->binary);
	cu_free(c->dra->counters);
	cu_free(c->dra->maps);
	cu_free(c->dra);
	c->dra = NULL;
}

static json_t *claim_template(void *payload, const char *ns, const char *name)
{
	ctl *c = payload;

	return c->inf[INF_RCT] != NULL
		   ? api_informer_get(c->inf[INF_RCT], ns, name)
		   : NULL;
}

static json_t *device_class(void *payload, const char *name)
{
	ctl *c = payload;

	return c->inf[INF_DEVICECLASS] != NULL
		   ? api_informer_get(c->inf[INF_DEVICECLASS], NULL, name)
		   : NULL;
}

static void slices(
    void *payload, void (*visit)(json_t *slice, void *arg), void *arg)
{
	ctl *c = payload;

	if (c->inf[INF_RSLICE] != NULL)
		api_informer_foreach(c->inf[INF_RSLICE], visit, arg);
}

struct ext_find {
	const char *name;
	json_t *best; /* [borrowed] */
};

/* Kueue's pick among the DeviceClasses declaring one extended resource:
 * the newest, then the smallest name. */
static void ext_visit(json_t *obj, void *payload)
{
	struct ext_find *f = payload;
	const char *ext = json_string_value(json_object_get(
	    json_object_get(obj, "spec"), "extendedResourceName"));
	const char *ts, *bts;
	int cmp;

	if (ext == NULL || strcmp(ext, f->name) != 0)
		return;
	if (f->best == NULL) {
		f->best = obj;
		return;
	}
	ts = ctl_jmeta(obj, "creationTimestamp");
	bts = ctl_jmeta(f->best, "creationTimestamp");
	cmp = strcmp(ts ? ts : "", bts ? bts : "");
	if (cmp > 0 || (cmp == 0 && strcmp(ctl_jmeta(obj, "name"),
					ctl_jmeta(f->best, "name")) < 0))
		f->best = obj;
}

static const char *extended_class(void *payload, const char *name)
{
	ctl *c = payload;
	struct ext_find f = {name, NULL};

	if (c->inf[INF_DEVICECLASS] == NULL)
		return NULL;
	api_informer_foreach(c->inf[INF_DEVICECLASS], ext_visit, &f);
	return f.best != NULL ? ctl_jmeta(f.best, "name") : NULL;
}

/* QuotaReserved=False, Misconfigured, with the refusal (written when it
 * changes, with Kueue's Warning event). */
static void show_refusal(
    ctl *c, const struct api_workload *wl, const char *msg, int64_t now)
{
	struct ctl_pipe_write *w;
	json_t *patch = NULL;
	cu_error err;

	if (!ctl_may_write(c) ||
	    rec_wl_status_pending(
		wl, "Misconfigured", msg, now, &patch, &err) != CU_OK ||
	    patch == NULL)
		return;
	w = ctl_wl_write(c, CTL_PIPE_WL_STATUS, wl->meta.namespace_,
	    wl->meta.name, patch, NULL);
	if (w != NULL)
		ctl_pipe_set_event(w, "Misconfigured", cu_strdup(msg));
}

int ctl_dra_sync_workload(
    ctl *c, const struct api_workload *wl, bool eligible, cu_error *err)
{
	struct rec_dra_lookup lk = {
	    claim_template, extended_class, device_class, slices, c};
	char *refused = NULL;
	bool retry = false;
	int rc;

	if (c->dra == NULL)
		return rec_sync_workload(c->st, wl, eligible, err);
	rc = rec_sync_workload_dra(
	    c->st, wl, eligible, &c->dra->cfg, &lk, &refused, &retry, err);
	if (refused != NULL) {
		(void)ctl_keys_put(&c->dra->waiting,
		    CTL_K2(wl->meta.namespace_, wl->meta.name));
		show_refusal(c, wl, refused, cu_time_now_ns());
		cu_free(refused);
	} else {
		ctl_keys_del(&c->dra->waiting,
		    CTL_K2(wl->meta.namespace_, wl->meta.name));
	}
	return rc;
}

void ctl_dra_mark(ctl *c)
{
	struct ctl_kent **v;
	size_t i, n;

	if (c->dra == NULL || ctl_keys_count(&c->dra->waiting) == 0 ||
	    ctl_keys_ordered(&c->dra->waiting, &v, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++)
		(void)ctl_keys_put(&c->dirty_wl, (const char *const *)v[i]->k);
	cu_free(v);
}
