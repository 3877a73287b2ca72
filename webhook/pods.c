/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/pods.c - the Pod webhook's own step (framework "pod",
 * docs/frameworks.md section 5): a Pod the management gate calls ours
 * (webhook/jobs.c decides, the namespace first) is created with the
 * kueue.x-k8s.io/admission scheduling gate, which holds it Pending until
 * its Workload is admitted; cueue removes the gate then. A Pod is never
 * given a spec.suspend. Anything the gate does not call ours, including
 * the Pods of a managed Job, JobSet or other parent, passes untouched.
 */
#include <string.h>

#include "webhook/webhook_int.h"

#define ADMISSION_GATE "kueue.x-k8s.io/admission"

bool wh__is_pod(const struct wh_request *req)
{
	return req->kind.group[0] == '\0' && strcmp(req->kind.kind, "Pod") == 0;
}

int wh__pod_gate(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	const json_t *spec = json_object_get(obj, "spec"), *gates, *g;
	size_t i;

	if (!json_is_object(spec))
		return cu_error_set(err, CU_EPARSE,
		    "spec: Invalid type: expected object, got %s",
		    api_json_type_name(spec, false));
	gates = json_object_get(spec, "schedulingGates");
	if (gates == NULL || json_is_null(gates))
		return wh__patch_add(c->out, "add", "/spec/schedulingGates",
		    json_pack("[{s:s}]", "name", ADMISSION_GATE), err);
	if (!json_is_array(gates))
		return cu_error_set(err, CU_EPARSE,
		    "spec.schedulingGates: Invalid type: expected array, got "
		    "%s",
		    api_json_type_name(gates, false));
	json_array_foreach(gates, i, g)
	{
		const char *n = api_json_str(g, "name");

		if (n != NULL && strcmp(n, ADMISSION_GATE) == 0)
			return CU_OK;
	}
	return wh__patch_add(c->out, "add", "/spec/schedulingGates/-",
	    json_pack("{s:s}", "name", ADMISSION_GATE), err);
}
