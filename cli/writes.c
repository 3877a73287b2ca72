/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/writes.c - kubectl-cueue's write commands as kueuectl has them:
 * stop and resume of a ClusterQueue, LocalQueue or Workload; create of a
 * LocalQueue, ClusterQueue (flags read by cli/specs.c) or ResourceFlavor;
 * delete of Workloads through the jobs that own them. See cli/cli_int.h.
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

/* POST obj [borrowed] to res in ns (NULL: cluster-scoped), or only
 * print it with --dry-run=client; then print the result. */
static int create_obj(struct ctx *x, const struct api_resource *res,
    const char *ns, json_t *obj, const char *kind, cu_error *err)
{
	json_t *made = NULL;
	char *path, *p;
	int rc;

	if (x->a->dry_run == CLI_DRY_CLIENT)
		return cli_print_result(x, obj, kind, KUEUE_GROUP, "created");
	p = api_resource_path(res, ns, NULL, NULL);
	path = p == NULL ? NULL
	       : x->a->dry_run == CLI_DRY_SERVER
		   ? cu_asprintf("%s?dryRun=All", p)
		   : cu_strdup(p);
	cu_free(p);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = cli_call(x, "POST", path, NULL, obj, &made, NULL, err);
	cu_free(path);
	if (rc == CU_OK)
		rc = cli_print_result(x, made, kind, KUEUE_GROUP, "created");
	json_decref(made);
	return rc;
}

static int create_lq(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	json_t *lq;
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
	rc = create_obj(x, &cli_res_lq, x->ns, lq, "localqueue", err);
	json_decref(lq);
	return rc;
}

/* kueuectl's ClusterQueue: namespaceSelector {} (every namespace) unless
 * --namespace-selector, preemption Never/Never unless given. */
static int create_cq(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	const char *const *q[3] = {a->quota[0], a->quota[1], a->quota[2]};
	json_t *cq, *spec, *sel = NULL, *rgs = NULL;
	int rc = CU_OK;

	if (a->ns_selector != NULL)
		rc = cli_key_values(
		    "--namespace-selector", a->ns_selector, &sel, err);
	if (rc == CU_OK && (a->nquota[0] || a->nquota[1] || a->nquota[2]))
		rc = cli_resource_groups(q, a->nquota, &rgs, err);
	if (rc != CU_OK) {
		json_decref(sel);
		return rc;
	}
	spec = json_pack("{s:s, s:o, s:{s:s, s:s}}", "queueingStrategy",
	    a->queuing_strategy ? a->queuing_strategy : "BestEffortFIFO",
	    "namespaceSelector",
	    sel != NULL ? json_pack("{s:o}", "matchLabels", sel)
			: json_object(),
	    "preemption", "reclaimWithinCohort",
	    a->reclaim ? a->reclaim : "Never", "withinClusterQueue",
	    a->preempt_within ? a->preempt_within : "Never");
	if (spec != NULL && a->cohort != NULL && a->cohort[0] != '\0')
		(void)json_object_set_new(
		    spec, "cohortName", json_string(a->cohort));
	if (spec != NULL && rgs != NULL)
		(void)json_object_set_new(spec, "resourceGroups", rgs);
	else
		json_decref(rgs);
	cq = spec != NULL ? json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
				KUEUE_GROUP "/v1beta2", "kind", "ClusterQueue",
				"metadata", "name", a->name, "spec", spec)
			  : NULL;
	if (cq == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = create_obj(x, &cli_res_cq, NULL, cq, "clusterqueue", err);
	json_decref(cq);
	return rc;
}

static int add_list(json_t *spec, const char *key, const char *const *v,
    size_t n, bool taints, cu_error *err)
{
	json_t *all = json_array(), *one = NULL;
	size_t i;
	int rc =
	    all != NULL ? CU_OK : cu_error_set(err, CU_ENOMEM, "out of memory");

	for (i = 0; i < n && rc == CU_OK; i++) {
		rc = cli_taints_or_tolerations(taints, v[i], &one, err);
		if (rc == CU_OK && json_array_extend(all, one) != 0)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		json_decref(one);
		one = NULL;
	}
	if (rc == CU_OK && n > 0 && json_object_set(spec, key, all) != 0)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	json_decref(all);
	return rc;
}

static int create_rf(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	json_t *spec = json_object(), *labels = NULL, *rf;
	int rc = spec != NULL ? CU_OK
			      : cu_error_set(err, CU_ENOMEM, "out of memory");

	if (rc == CU_OK && a->node_labels != NULL) {
		rc = cli_key_values(
		    "--node-labels", a->node_labels, &labels, err);
		if (rc == CU_OK &&
		    json_object_set_new(spec, "nodeLabels", labels) != 0)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (rc == CU_OK)
		rc = add_list(
		    spec, "nodeTaints", a->taints, a->ntaints, true, err);
	if (rc == CU_OK)
		rc = add_list(spec, "tolerations", a->tolerations,
		    a->ntolerations, false, err);
	if (rc != CU_OK) {
		json_decref(spec);
		return rc;
	}
	rf = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
	    KUEUE_GROUP "/v1beta2", "kind", "ResourceFlavor", "metadata",
	    "name", a->name, "spec", spec);
	if (rf == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = create_obj(x, &cli_res_rf, NULL, rf, "resourceflavor", err);
	json_decref(rf);
	return rc;
}

int cli_create(struct ctx *x, cu_error *err)
{
	switch (x->a->kind) {
	case CLI_KIND_CLUSTERQUEUE:
		return create_cq(x, err);
	case CLI_KIND_RESOURCEFLAVOR:
		return create_rf(x, err);
	default:
		return create_lq(x, err);
	}
}

/* ---- delete workload ------------------------------------------------- */

/* An owner to delete: "jobs.batch/NAME" and its path. */
struct owner {
	char *label; /* [owned] RESOURCE[.GROUP]/NAME */
	char *path;  /* [owned] the object's URL path */
	const json_t *wl;
};

/* The resource (plural) of kind in apiVersion, from discovery (cached in
 * disc); NULL when the server does not serve it. */
static const char *resource_of(
    struct ctx *x, json_t *disc, const char *api_version, const char *kind)
{
	json_t *rl = json_object_get(disc, api_version), *r;
	size_t i;

	if (rl == NULL) {
		char *path = strchr(api_version, '/') != NULL
				 ? cu_asprintf("/apis/%s", api_version)
				 : cu_asprintf("/api/%s", api_version);
		cu_error ignore;

		if (path == NULL ||
		    cli_call(x, "GET", path, NULL, NULL, &rl, NULL, &ignore) !=
			CU_OK ||
		    rl == NULL)
			rl = json_null();
		cu_free(path);
		(void)json_object_set_new(disc, api_version, rl);
	}
	json_array_foreach(json_object_get(rl, "resources"), i, r)
	{
		const char *k = api_json_str(r, "kind"),
			   *n = api_json_str(r, "name");

		if (k != NULL && n != NULL && strcmp(k, kind) == 0 &&
		    strchr(n, '/') == NULL)
			return n;
	}
	return NULL;
}

static int owners_of(struct ctx *x, json_t *disc, const json_t *wl,
    struct owner **v, size_t *n, cu_error *err)
{
	const json_t *md = json_object_get(wl, "metadata"), *o;
	const char *ns = api_json_str(md, "namespace");
	size_t i;

	json_array_foreach(json_object_get(md, "ownerReferences"), i, o)
	{
		const char *av = api_json_str(o, "apiVersion");
		const char *kind = api_json_str(o, "kind");
		const char *name = api_json_str(o, "name");
		const char *res, *slash;
		struct owner *nv;
		size_t gl;

		if (av == NULL || kind == NULL || name == NULL)
			continue;
		res = resource_of(x, disc, av, kind);
		if (res == NULL)
			return cu_error_set(err, CU_ENOTFOUND,
			    "workload %s/%s: its owner %s %s/%s is not served "
			    "by "
			    "the API server (delete it with kubectl, or the "
			    "Workload with kubectl delete workloads.%s)",
			    ns, api_json_str(md, "name"), kind, ns, name,
			    KUEUE_GROUP);
		nv = cu_realloc(*v, (*n + 1) * sizeof(**v));
		if (nv == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		*v = nv;
		slash = strchr(av, '/');
		gl = slash ? (size_t)(slash - av) : 0;
		nv[*n].wl = wl;
		nv[*n].label =
		    gl ? cu_asprintf("%s.%.*s/%s", res, (int)gl, av, name)
		       : cu_asprintf("%s/%s", res, name);
		nv[*n].path = cu_asprintf("%s%s/namespaces/%s/%s/%s",
		    gl ? "/apis/" : "/api/", av, ns, res, name);
		(*n)++;
		if (nv[*n - 1].label == NULL || nv[*n - 1].path == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	return CU_OK;
}

/* kueuectl's question on stdout, the answer a word on stdin. */
static bool confirmed(struct ctx *x, const struct owner *o, size_t n)
{
	char word[16];
	size_t i;

	if (x->a->delete_all) {
		fputs(
		    "This operation will also delete the jobs associated with "
		    "these workloads.\n",
		    x->out);
	} else {
		fputs("This operation will also delete:\n", x->out);
		for (i = 0; i < n; i++) {
			const json_t *md = json_object_get(o[i].wl, "metadata");

			fprintf(x->out,
			    "  - %s associated with the %s/%s workload\n",
			    o[i].label, api_json_str(md, "namespace"),
			    api_json_str(md, "name"));
		}
	}
	fputs("Do you want to proceed (y/n)? ", x->out);
	fflush(x->out);
	if (scanf("%15s", word) != 1)
		return false;
	return strcmp(word, "y") == 0 || strcmp(word, "Y") == 0;
}

static int delete_path(struct ctx *x, const char *path, cu_error *err)
{
	json_t *body = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions",
	    "apiVersion", "v1", "propagationPolicy", "Background");
	char *p = x->a->dry_run == CLI_DRY_SERVER
		      ? cu_asprintf("%s?dryRun=All", path)
		      : cu_strdup(path);
	int code = 0, rc;

	if (body == NULL || p == NULL) {
		json_decref(body);
		cu_free(p);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	rc = cli_call(x, "DELETE", p, NULL, body, NULL, &code, err);
	json_decref(body);
	cu_free(p);
	if (rc != CU_OK && code == 404)
		rc = CU_OK; /* gone already: as kueuectl */
	return rc;
}

static void deleted(struct ctx *x, const char *label)
{
	fprintf(x->out, "%s deleted%s\n", label,
	    x->a->dry_run == CLI_DRY_CLIENT   ? " (client dry run)"
	    : x->a->dry_run == CLI_DRY_SERVER ? " (server dry run)"
					      : "");
}

/* The Workloads named, or all (--all); a missing one is reported and
 * skipped, as kueuectl does. *list [owned]: {"items": [...]}. */
static int workloads_to_delete(struct ctx *x, json_t **list, cu_error *err)
{
	size_t i;

	if (x->a->delete_all)
		return cli_list_all(x, &cli_res_wl,
		    x->a->all_namespaces ? NULL : x->ns, NULL, NULL, list, err);
	*list = json_pack("{s:[]}", "items");
	if (*list == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; i < x->a->nnames; i++) {
		json_t *wl = NULL;
		cu_error e;
		int code = 0;
		char *path =
		    api_resource_path(&cli_res_wl, x->ns, x->a->names[i], NULL);

		if (path == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		if (cli_call(x, "GET", path, NULL, NULL, &wl, &code, &e) ==
		    CU_OK)
			(void)json_array_append_new(
			    json_object_get(*list, "items"), wl);
		else if (code == 404)
			fprintf(x->errout, "Error from server (NotFound): %s\n",
			    e.msg);
		else {
			cu_free(path);
			return cu_error_set(err, e.code, "%s", e.msg);
		}
		cu_free(path);
	}
	return CU_OK;
}

int cli_delete_workloads(struct ctx *x, cu_error *err)
{
	json_t *list = NULL, *disc = json_object(), *wl;
	struct owner *o = NULL;
	size_t n = 0, i, j, k;
	int rc;

	if (disc == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = workloads_to_delete(x, &list, err);
	json_array_foreach(json_object_get(list, "items"), i, wl)
	{
		if (rc == CU_OK)
			rc = owners_of(x, disc, wl, &o, &n, err);
	}
	if (rc == CU_OK && n > 0 && x->a->dry_run == CLI_DRY_NONE &&
	    !x->a->yes && !confirmed(x, o, n)) {
		fputs("Deletion is canceled\n", x->out);
		goto out;
	}
	/* each Workload: its owners, or itself when it has none */
	k = 0;
	json_array_foreach(json_object_get(list, "items"), i, wl)
	{
		bool owned = false;

		for (j = k; j < n && o[j].wl == wl && rc == CU_OK; j++, k++) {
			owned = true;
			if (x->a->dry_run != CLI_DRY_CLIENT)
				rc = delete_path(x, o[j].path, err);
			if (rc == CU_OK)
				deleted(x, o[j].label);
		}
		if (!owned && rc == CU_OK) {
			const json_t *md = json_object_get(wl, "metadata");
			char *path = api_resource_path(&cli_res_wl,
			    api_json_str(md, "namespace"),
			    api_json_str(md, "name"), NULL);
			char *label = cu_asprintf("workload.%s/%s", KUEUE_GROUP,
			    api_json_str(md, "name"));

			if (path == NULL || label == NULL)
				rc = cu_error_set(
				    err, CU_ENOMEM, "out of memory");
			if (rc == CU_OK && x->a->dry_run != CLI_DRY_CLIENT)
				rc = delete_path(x, path, err);
			if (rc == CU_OK)
				deleted(x, label);
			cu_free(path);
			cu_free(label);
		}
	}
out:
	for (i = 0; i < n; i++) {
		cu_free(o[i].label);
		cu_free(o[i].path);
	}
	cu_free(o);
	json_decref(list);
	json_decref(disc);
	return rc;
}
