/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_mk.c - the Configuration's `multiKueue` section
 * (origin, gcInterval, workerLostTimeout, dispatcherName) loaded with
 * Kueue's defaults, for the MultiKueue admission check controller
 * (controller/mk.c). The schema walk (config_schema.c) has checked the
 * types already; what is left here is the values.
 */
#include <string.h>

#include "controller/config_int.h"

#define MK_DEFAULT_ORIGIN "multikueue"
#define MK_DEFAULT_GC_NS (60LL * 1000000000LL)
#define MK_DEFAULT_LOST_NS (15LL * 60LL * 1000000000LL)
#define MK_DISPATCHER_ALL "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
#define MK_DISPATCHER_INC "kueue.x-k8s.io/multikueue-dispatcher-incremental"

int ctl_config_load_mk(const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *mk = ctl_config_jget(root, "multiKueue");
	struct ctl_config *c = d->c;
	const char *disp;
	int rc, first = CU_OK;

	rc = ctl_config_dup_str(d, &c->mk.origin, mk, "origin", NULL);
	if (rc != CU_OK)
		return rc;
	if (c->mk.origin == NULL || c->mk.origin[0] == '\0') {
		cu_free(c->mk.origin);
		c->mk.origin = cu_strdup(MK_DEFAULT_ORIGIN);
		if (c->mk.origin == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	}
	/* A zero duration takes the default, as Kueue's defaulting. */
	c->mk.gc_interval_ns =
	    ctl_config_get_dur(mk, "gcInterval", MK_DEFAULT_GC_NS);
	c->mk.worker_lost_ns =
	    ctl_config_get_dur(mk, "workerLostTimeout", MK_DEFAULT_LOST_NS);
	c->mk.step_size = (int)json_integer_value(ctl_config_jget(
	    ctl_config_jget(mk, "incrementalDispatcherConfig"), "stepSize"));
	if (c->mk.step_size <= 0)
		c->mk.step_size = 3;
	disp = json_string_value(ctl_config_jget(mk, "dispatcherName"));
	c->mk.incremental =
	    disp != NULL && strcmp(disp, MK_DISPATCHER_INC) == 0;
	if (disp != NULL && strcmp(disp, MK_DISPATCHER_ALL) != 0 &&
	    strcmp(disp, MK_DISPATCHER_INC) != 0)
		first = ctl_config_keep(first,
		    ctl_config_add_warning(d, "multiKueue.dispatcherName",
			"multiKueue.dispatcherName",
			"an external dispatcher; cueue dispatches as "
			"AllAtOnce"));
	return first;
}

void ctl_config_dispose_mk(struct ctl_config *c)
{
	cu_free(c->mk.origin);
	c->mk.origin = NULL;
}
