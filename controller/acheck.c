/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/acheck.c - admission checks, the process side: the cached
 * ClusterQueue whose admissionChecksStrategy the admission write and the
 * Workload reconciler sync a Workload's checks with. A ClusterQueue
 * without checks is not decoded (the admission path of a queue without
 * checks costs nothing more).
 */
#include <string.h>

#include "controller/ctl_int.h"

bool ctl_acheck_cq(
    ctl *c, const char *name, bool force, struct api_cluster_queue *cq)
{
	json_t *obj, *st;
	cu_error err;

	if (name == NULL)
		return false;
	obj = api_informer_get(c->inf[INF_CQ], NULL, name);
	if (obj == NULL)
		return false;
	st = json_object_get(json_object_get(json_object_get(obj, "spec"),
				 "admissionChecksStrategy"),
	    "admissionChecks");
	if (!force && json_array_size(st) == 0)
		return false;
	if (api_cluster_queue_decode(cq, obj, &err) != CU_OK) {
		cu_warn("clusterqueue %s: %s", name, err.msg);
		return false;
	}
	return true;
}
