/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/patch.c - the strict merge patch (a diff that carries the
 * source's resourceVersion) shared by the job and Workload sides of the
 * reconcile layer; see reconcile/rec_int.h.
 */
#include "api/patch.h"
#include "reconcile/rec_int.h"

int rec__nomem(cu_error *err, const char *what)
{
	return cu_error_set(err, CU_ENOMEM, "%s: out of memory", what);
}

int rec__strict_patch(
    const json_t *from, const json_t *to, json_t **patch, cu_error *err)
{
	json_t *p = NULL, *md;
	const char *rv;
	int rc;

	*patch = NULL;
	rc = api_merge_patch_diff(&p, from, to, err);
	if (rc != CU_OK || p == NULL)
		return rc;
	rv = api_json_str(json_object_get(from, "metadata"), "resourceVersion");
	if (rv != NULL && *rv != '\0') {
		md = api_json_obj_child(p, "metadata");
		if (md == NULL || json_object_set_new(
				      md, "resourceVersion", json_string(rv))) {
			json_decref(p);
			return rec__nomem(err, "patch metadata");
		}
	}
	*patch = p;
	return CU_OK;
}
