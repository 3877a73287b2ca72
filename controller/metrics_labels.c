/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/metrics_labels.c - the controller's side of Kueue's custom
 * metric labels (metrics.customLabels with the CustomMetricLabels gate):
 * hands the configured labels to the metrics registry and answers its
 * questions ("the label or annotation K of ClusterQueue X") from the
 * informer caches, so every update of a ClusterQueue, Cohort or
 * LocalQueue metric carries the object's current value.
 */
#include <string.h>

#include "controller/ctl_int.h"

static const char *resolve(void *payload, enum ctl_metric_object kind,
    const char *ns, const char *name, const char *key, bool annotation)
{
	ctl *c = payload;
	enum inf_id id = kind == CTL_MOBJ_CLUSTER_QUEUE ? INF_CQ
			 : kind == CTL_MOBJ_COHORT	? INF_COHORT
							: INF_LQ;
	json_t *obj;

	if (c->inf[id] == NULL ||
	    (obj = api_informer_get(c->inf[id],
		 kind == CTL_MOBJ_LOCAL_QUEUE ? ns : NULL, name)) == NULL)
		return NULL;
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(obj, "metadata"),
				annotation ? "annotations" : "labels"),
		key));
}

int ctl_metrics_labels_setup(ctl *c, cu_error *err)
{
	const struct ctl_config *cfg = c->cfg;
	struct ctl_metric_custom *mc;
	size_t i, n = 0;
	int rc;

	if (!cfg->metrics.custom_enable || cfg->metrics.ncustom == 0)
		return CU_OK;
	mc = cu_calloc(cfg->metrics.ncustom, sizeof(*mc));
	if (mc == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; i < cfg->metrics.ncustom; i++) {
		const struct ctl_config_custom_label *l =
		    &cfg->metrics.custom[i];

		if (l->kind == CTL_CUSTOM_WORKLOAD)
			continue; /* not added yet (compatibility table) */
		mc[n].name = l->name;
		mc[n].kind = l->kind == CTL_CUSTOM_COHORT ? CTL_MOBJ_COHORT
			     : l->kind == CTL_CUSTOM_LOCAL_QUEUE
				 ? CTL_MOBJ_LOCAL_QUEUE
				 : CTL_MOBJ_CLUSTER_QUEUE;
		mc[n].key = l->key;
		mc[n].annotation = l->annotation;
		mc[n].tracked = (const char *const *)l->tracked;
		mc[n].ntracked = l->ntracked;
		n++;
	}
	rc = ctl_metrics_set_custom(c->metrics, mc, n, resolve, c, err);
	cu_free(mc);
	return rc;
}
