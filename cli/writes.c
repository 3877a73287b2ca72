/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/writes.c - kubectl-cueue's write commands: stop and resume of a
 * ClusterQueue, LocalQueue or Workload, and create. See cli/cli_int.h.
 */
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/client.h"
#include "api/json.h"
#include "cli/cli.h"
#include "cli/cli_int.h"

/* ---- stop / resume / create ----------------------------------------- */

int cli_patch_spec(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	const struct api_resource *res =
	    a->kind == CLI_KIND_CLUSTERQUEUE ? &cli_res_cq
	    : a->kind == CLI_KIND_LOCALQUEUE ? &cli_res_lq
					     : &cli_res_wl;
	const char *kind = a->kind == CLI_KIND_CLUSTERQUEUE ? "clusterqueue"
			   : a->kind == CLI_KIND_LOCALQUEUE ? "localqueue"
							    : "workload";
	bool stop = a->verb == CLI_STOP;
	const char *op = a->kind != CLI_KIND_WORKLOAD ? ""
			 : stop			      ? "stopped"
						      : "resumed";
	json_t *spec, *patch, *obj = NULL;
	char *path;
	int rc;

	if (a->kind == CLI_KIND_WORKLOAD)
		spec = json_pack("{s:b}", "active", !stop);
	else
		spec = json_pack("{s:s}", "stopPolicy",
		    !stop	      ? "None"
		    : a->keep_running ? "Hold"
				      : "HoldAndDrain");
	patch = spec != NULL ? json_pack("{s:o}", "spec", spec) : NULL;
	if (patch == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	/* The object must exist, as kueuectl GETs it first. */
	rc = cli_get_obj(x, res, x->ns, a->name, &obj, err);
	if (rc != CU_OK)
		goto out;
	if (a->dry_run == CLI_DRY_CLIENT) {
		json_t *s = json_object_get(obj, "spec");

		if (!json_is_object(s) || json_object_update(s, spec) != 0) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			goto out;
		}
	} else {
		char *p = api_resource_path(res, x->ns, a->name, NULL);

		path = p == NULL ? NULL
		       : a->dry_run == CLI_DRY_SERVER
			   ? cu_asprintf("%s?dryRun=All", p)
			   : cu_strdup(p);
		cu_free(p);
		if (path == NULL) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			goto out;
		}
		json_decref(obj);
		obj = NULL;
		rc = cli_call(x, "PATCH", path, "application/merge-patch+json",
		    patch, &obj, NULL, err);
		cu_free(path);
		if (rc != CU_OK)
			goto out;
	}
	rc = cli_print_result(x, obj, kind, KUEUE_GROUP, op);
out:
	json_decref(patch);
	json_decref(obj);
	return rc;
}

int cli_create_lq(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	json_t *lq, *made = NULL;
	char *path, *p;
	int rc;

	if (!a->ignore_unknown_cq) {
		json_t *cq = NULL;

		rc = cli_get_obj(
		    x, &cli_res_cq, NULL, a->clusterqueue, &cq, err);
		json_decref(cq);
		if (rc != CU_OK)
			return rc;
	}
	lq = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
	    KUEUE_GROUP "/v1beta2", "kind", "LocalQueue", "metadata", "name",
	    a->name, "namespace", x->ns, "spec", "clusterQueue",
	    a->clusterqueue);
	if (lq == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	if (a->dry_run == CLI_DRY_CLIENT) {
		rc = cli_print_result(
		    x, lq, "localqueue", KUEUE_GROUP, "created");
		json_decref(lq);
		return rc;
	}
	p = api_resource_path(&cli_res_lq, x->ns, NULL, NULL);
	path = p == NULL		      ? NULL
	       : a->dry_run == CLI_DRY_SERVER ? cu_asprintf("%s?dryRun=All", p)
					      : cu_strdup(p);
	cu_free(p);
	if (path == NULL) {
		json_decref(lq);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	rc = cli_call(x, "POST", path, NULL, lq, &made, NULL, err);
	cu_free(path);
	json_decref(lq);
	if (rc == CU_OK)
		rc = cli_print_result(
		    x, made, "localqueue", KUEUE_GROUP, "created");
	json_decref(made);
	return rc;
}
