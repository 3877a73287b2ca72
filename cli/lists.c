/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/lists.c - kubectl-cueue's read commands: list workload,
 * clusterqueue, localqueue, resourceflavor and pods as kueuectl lists
 * them, and pending (the visibility API's answer, else the local order,
 * labelled). See cli/cli_int.h.
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

/* ---- list workload -------------------------------------------------- */

const json_t *cli_path_get(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b != NULL ? json_object_get(v, b) : v;
}

static bool keep_wl(const json_t *wl, struct ctx *x)
{
	const struct cli_args *a = x->a;
	const char *lq =
	    api_json_str(cli_path_get(wl, "spec", NULL), "queueName");
	const char *cq = api_json_str(
	    cli_path_get(wl, "status", "admission"), "clusterQueue");

	if (a->localqueue != NULL &&
	    (lq == NULL || strcmp(lq, a->localqueue) != 0))
		return false;
	/* as kueuectl: the admission's ClusterQueue only */
	if (a->clusterqueue != NULL &&
	    (cq == NULL || strcmp(cq, a->clusterqueue) != 0))
		return false;
	if (a->statuses != 0 &&
	    (a->statuses & cli_workload_status_bit(wl)) == 0)
		return false;
	return true;
}

static bool keep_owned(const json_t *wl, struct ctx *x)
{
	const json_t *refs = cli_path_get(wl, "metadata", "ownerReferences");
	size_t i;
	json_t *r;

	json_array_foreach((json_t *)refs, i, r)
	{
		const char *u = api_json_str(r, "uid");

		if (u != NULL && strcmp(u, x->for_uid) == 0)
			return true;
	}
	return false;
}

/*
 * The object of --for TYPE[.GROUP]/NAME in the namespace: job (batch
 * Jobs) and pod are known. *obj NULL when it does not exist.
 */
static int for_object(
    struct ctx *x, const struct api_resource **res, json_t **obj, cu_error *err)
{
	const char *f = x->a->for_object, *slash = strchr(f, '/');
	char type[128];
	size_t n = (size_t)(slash - f);
	int code = 0, rc;
	char *path;

	*obj = NULL;
	if (n >= sizeof(type))
		n = sizeof(type) - 1;
	memcpy(type, f, n);
	type[n] = '\0';
	for (char *p = type; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strcmp(type, "job") == 0 || strcmp(type, "jobs") == 0 ||
	    strcmp(type, "job.batch") == 0 || strcmp(type, "jobs.batch") == 0)
		*res = &cli_res_job;
	else if (strcmp(type, "pod") == 0 || strcmp(type, "pods") == 0 ||
		 strcmp(type, "po") == 0)
		*res = &cli_res_pod;
	else
		return cu_error_set(err, CU_EINVAL,
		    "the server doesn't have a resource type \"%s\" (--for "
		    "knows job and pod)",
		    type);
	path = api_resource_path(*res, x->ns, slash + 1, NULL);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = cli_call(x, "GET", path, NULL, NULL, obj, &code, err);
	cu_free(path);
	if (rc == CU_ENOTFOUND) {
		cu_error_clear(err);
		return CU_OK;
	}
	return rc;
}

/* Pending positions of one ClusterQueue, cached. */
struct pend_cache {
	char *cq;
	struct cli_pending *p;
	size_t n;
	json_t *keep; /* what p points into */
};

static int fetch_cluster_wide(struct ctx *x, cu_error *err)
{
	int rc = CU_OK;

	if (x->all_wls == NULL)
		rc = cli_list_all(
		    x, &cli_res_wl, NULL, NULL, NULL, &x->all_wls, err);
	if (rc == CU_OK && x->all_lqs == NULL)
		rc = cli_list_all(
		    x, &cli_res_lq, NULL, NULL, NULL, &x->all_lqs, err);
	return rc;
}

/*
 * The pending Workloads of cq: the visibility API's answer, else (not
 * served) the local order. *keep [owned] holds what *p points into
 * (NULL when it points into x's cluster-wide lists).
 */
static int pending_of(struct ctx *x, const char *cq, long limit, long offset,
    struct cli_pending **p, size_t *n, json_t **keep, cu_error *err)
{
	char *e = api_escape(cq), *path;
	json_t *body = NULL;
	int rc, code = 0;
	cu_error ignore;

	*keep = NULL;
	cu_error_clear(&ignore);
	if (e == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	path = cu_asprintf("/apis/visibility.kueue.x-k8s.io/v1beta2/"
			   "clusterqueues/%s/pendingworkloads?limit=%ld&"
			   "offset=%ld",
	    e, limit, offset);
	cu_free(e);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = cli_call(x, "GET", path, NULL, NULL, &body, &code, &ignore);
	cu_free(path);
	if (rc == CU_OK && json_is_object(body)) {
		rc = cli_pending_from_visibility(
		    json_object_get(body, "items"), p, n, err);
		if (rc != CU_OK)
			json_decref(body);
		else
			*keep = body;
		return rc;
	}
	json_decref(body);
	/* Not served (404, 503 ...): compute it, and say so. */
	if (code > 0)
		fprintf(x->errout,
		    "note: the visibility API is not served (HTTP %d): "
		    "positions computed locally; see `kubectl cueue pending "
		    "--help`\n",
		    code);
	else
		fprintf(x->errout,
		    "note: the visibility API could not be reached (%s): "
		    "positions computed locally; see `kubectl cueue pending "
		    "--help`\n",
		    ignore.msg);
	rc = fetch_cluster_wide(x, err);
	if (rc != CU_OK)
		return rc;
	rc = cli_pending_order(json_object_get(x->all_wls, "items"),
	    json_object_get(x->all_lqs, "items"), cq, p, n, err);
	if (rc != CU_OK)
		return rc;
	if ((size_t)offset >= *n) {
		cu_free(*p);
		*p = NULL;
		*n = 0;
		return CU_OK;
	}
	if (offset > 0)
		memmove(*p, *p + offset, (*n - (size_t)offset) * sizeof(**p));
	*n -= (size_t)offset;
	if ((size_t)limit < *n)
		*n = (size_t)limit;
	return CU_OK;
}

/* "job.batch" for an owner apiVersion/kind, from discovery; cached by
 * apiVersion in *disc (an object apiVersion -> APIResourceList|null). */
static int job_type(struct ctx *x, json_t *disc, const char *api_version,
    const char *kind, char *out, size_t outn, cu_error *err)
{
	json_t *rl = json_object_get(disc, api_version), *r;
	const char *slash = strchr(api_version, '/');
	size_t i;
	int rc;

	out[0] = '\0';
	if (rl == NULL) {
		char *path = slash != NULL
				 ? cu_asprintf("/apis/%s", api_version)
				 : cu_asprintf("/api/%s", api_version);
		cu_error ignore;

		if (path == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		rc = cli_call(x, "GET", path, NULL, NULL, &rl, NULL, &ignore);
		cu_free(path);
		if (rc != CU_OK || rl == NULL)
			rl = json_null();
		if (json_object_set_new(disc, api_version, rl) != 0)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	json_array_foreach(json_object_get(rl, "resources"), i, r)
	{
		const char *k = api_json_str(r, "kind");
		const char *s = api_json_str(r, "singularName");
		char full[256];
		size_t gl = slash != NULL ? (size_t)(slash - api_version) : 0;

		if (k == NULL || s == NULL || s[0] == '\0' ||
		    strcmp(k, kind) != 0 ||
		    strchr(
			api_json_str(r, "name") ? api_json_str(r, "name") : "",
			'/') != NULL)
			continue;
		if (gl > 0)
			snprintf(full, sizeof(full), "%s.%.*s", s, (int)gl,
			    api_version);
		else
			snprintf(full, sizeof(full), "%s", s);
		/* kueuectl cuts the type at 20 characters */
		snprintf(
		    out, outn, "%.20s%s", full, strlen(full) > 20 ? "..." : "");
		return CU_OK;
	}
	return CU_OK;
}

/* What the rows of list workload look up, cached across rows. */
struct wl_ctx {
	json_t *lqs;	       /* "ns/name" -> LocalQueue or null */
	json_t *disc;	       /* apiVersion -> APIResourceList or null */
	struct pend_cache *pc; /* one per ClusterQueue asked */
	size_t npc;
};

static void wl_ctx_dispose(struct wl_ctx *w)
{
	for (size_t i = 0; i < w->npc; i++) {
		cu_free(w->pc[i].cq);
		cu_free(w->pc[i].p);
		json_decref(w->pc[i].keep);
	}
	cu_free(w->pc);
	json_decref(w->lqs);
	json_decref(w->disc);
}

/* The ClusterQueue of LocalQueue ns/lq [borrowed from w->lqs], or NULL. */
static int lq_cluster_queue(struct ctx *x, struct wl_ctx *w, const char *ns,
    const char *lq, const char **cq, cu_error *err)
{
	char *k = cu_asprintf("%s/%s", ns, lq);
	json_t *lqo;

	*cq = NULL;
	if (k == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	lqo = json_object_get(w->lqs, k);
	if (lqo == NULL) {
		cu_error ignore;

		if (cli_get_obj(x, &cli_res_lq, ns, lq, &lqo, &ignore) !=
			CU_OK ||
		    lqo == NULL)
			lqo = json_null();
		if (json_object_set_new(w->lqs, k, lqo) != 0) {
			cu_free(k);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
	}
	cu_free(k);
	*cq = api_json_str(json_object_get(lqo, "spec"), "clusterQueue");
	return CU_OK;
}

/* JOB TYPE: the first owner whose kind discovery names. */
static int wl_job_type(struct ctx *x, struct wl_ctx *w, const json_t *wl,
    char *out, size_t outn, cu_error *err)
{
	const json_t *refs = cli_path_get(wl, "metadata", "ownerReferences");
	size_t j;
	json_t *r;
	int rc;

	out[0] = '\0';
	json_array_foreach((json_t *)refs, j, r)
	{
		const char *av = api_json_str(r, "apiVersion");
		const char *kd = api_json_str(r, "kind");

		if (av == NULL || kd == NULL)
			continue;
		rc = job_type(x, w->disc, av, kd, out, outn, err);
		if (rc != CU_OK)
			return rc;
		if (out[0] != '\0')
			break;
	}
	return CU_OK;
}

/* POSITION IN QUEUE of a pending Workload of cq (-1 when not found). */
static int wl_position(struct ctx *x, struct wl_ctx *w, const json_t *wl,
    const char *cq, long *pos, cu_error *err)
{
	const char *name =
	    api_json_str(json_object_get(wl, "metadata"), "name");
	const char *ns =
	    api_json_str(json_object_get(wl, "metadata"), "namespace");
	struct pend_cache *c;
	size_t k;
	int rc;

	*pos = -1;
	for (k = 0; k < w->npc; k++)
		if (strcmp(w->pc[k].cq, cq) == 0)
			break;
	c = &w->pc[k];
	if (k == w->npc) {
		c->cq = cu_strdup(cq);
		if (c->cq == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		w->npc++;
		rc = pending_of(x, cq, 1000000, 0, &c->p, &c->n, &c->keep, err);
		if (rc != CU_OK)
			return rc;
	}
	for (size_t j = 0; j < c->n; j++)
		if (name != NULL && ns != NULL &&
		    strcmp(c->p[j].name, name) == 0 &&
		    strcmp(c->p[j].namespace_, ns) == 0)
			*pos = c->p[j].pos_lq;
	return CU_OK;
}

/* The Workloads kueuectl's filters keep; *list NULL when the --for
 * object does not exist ("No resources found" said). */
static int wl_list(struct ctx *x, json_t **list, cu_error *err)
{
	const char *ns = x->a->all_namespaces ? NULL : x->ns;
	json_t *forobj = NULL;
	int rc;

	*list = NULL;
	if (x->a->for_object != NULL) {
		const struct api_resource *res;

		rc = for_object(x, &res, &forobj, err);
		if (rc != CU_OK)
			return rc;
		if (forobj == NULL) {
			cli_no_resources(x, false);
			return CU_OK;
		}
	}
	rc = cli_list_all(x, &cli_res_wl, ns, x->a->selector,
	    x->a->field_selector, list, err);
	if (rc == CU_OK && cli_filter(*list, keep_wl, x) != CU_OK)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	if (rc == CU_OK && forobj != NULL) {
		x->for_uid =
		    api_json_str(json_object_get(forobj, "metadata"), "uid");
		if (x->for_uid == NULL)
			x->for_uid = "";
		if (cli_filter(*list, keep_owned, x) != CU_OK)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		x->for_uid = NULL;
	}
	json_decref(forobj);
	if (rc != CU_OK) {
		json_decref(*list);
		*list = NULL;
	}
	return rc;
}

int cli_list_workloads(struct ctx *x, cu_error *err)
{
	json_t *list = NULL, *items, *wl;
	struct cli_wl_extra *extra = NULL;
	char(*types)[64] = NULL;
	struct wl_ctx w = {0};
	size_t i, n;
	char *table = NULL;
	int rc;

	rc = wl_list(x, &list, err);
	if (rc != CU_OK || list == NULL)
		return rc;
	items = json_object_get(list, "items");
	n = json_array_size(items);
	if (x->a->output != CLI_OUT_TABLE || n == 0) {
		rc =
		    cli_print_list(x, list, "workload", KUEUE_GROUP, "", false);
		json_decref(list);
		return rc;
	}
	extra = cu_calloc(n, sizeof(*extra));
	types = cu_calloc(n, sizeof(*types));
	w.pc = cu_calloc(n, sizeof(*w.pc));
	w.lqs = json_object();
	w.disc = json_object();
	if (extra == NULL || types == NULL || w.pc == NULL || w.lqs == NULL ||
	    w.disc == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; rc == CU_OK && i < n; i++) {
		const char *cq, *lq, *ns;

		wl = json_array_get(items, i);
		cq = api_json_str(
		    cli_path_get(wl, "status", "admission"), "clusterQueue");
		lq = api_json_str(json_object_get(wl, "spec"), "queueName");
		ns = api_json_str(json_object_get(wl, "metadata"), "namespace");
		extra[i].position = -1;
		if ((cq == NULL || cq[0] == '\0') && lq != NULL && ns != NULL)
			rc = lq_cluster_queue(x, &w, ns, lq, &cq, err);
		extra[i].cluster_queue = cq;
		if (rc == CU_OK)
			rc = wl_job_type(
			    x, &w, wl, types[i], sizeof(types[i]), err);
		extra[i].job_type = types[i];
		if (rc == CU_OK &&
		    strcmp(cli_workload_status(wl), "pending") == 0 &&
		    cq != NULL && cq[0] != '\0')
			rc =
			    wl_position(x, &w, wl, cq, &extra[i].position, err);
	}
	if (rc == CU_OK)
		rc = cli_render_workloads(items, extra, x->a->all_namespaces,
		    cu_time_now_ns(), &table, err);
	if (rc == CU_OK)
		fputs(table, x->out);
	wl_ctx_dispose(&w);
	cu_free(table);
	cu_free(extra);
	cu_free(types);
	json_decref(list);
	return rc;
}

/* ---- list clusterqueue / localqueue / pods -------------------------- */

static bool keep_cq(const json_t *cq, struct ctx *x)
{
	const json_t *conds = cli_path_get(cq, "status", "conditions");
	bool active = false;
	size_t i;
	json_t *c;

	if (x->a->active < 0)
		return true;
	json_array_foreach((json_t *)conds, i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *s = api_json_str(c, "status");

		if (t != NULL && s != NULL && strcmp(t, "Active") == 0)
			active = strcmp(s, "True") == 0;
	}
	return active == (x->a->active == 1);
}

static bool keep_lq(const json_t *lq, struct ctx *x)
{
	const char *cq =
	    api_json_str(json_object_get(lq, "spec"), "clusterQueue");

	return x->a->clusterqueue == NULL ||
	       (cq != NULL && strcmp(cq, x->a->clusterqueue) == 0);
}

int cli_list_queues(struct ctx *x, bool cluster, cu_error *err)
{
	json_t *list = NULL;
	char *table = NULL;
	int rc;

	rc = cli_list_all(x, cluster ? &cli_res_cq : &cli_res_lq,
	    cluster || x->a->all_namespaces ? NULL : x->ns, x->a->selector,
	    x->a->field_selector, &list, err);
	if (rc != CU_OK)
		return rc;
	if (cli_filter(list, cluster ? keep_cq : keep_lq, x) != CU_OK) {
		json_decref(list);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (x->a->output == CLI_OUT_TABLE)
		rc = cluster ? cli_render_clusterqueues(
				   json_object_get(list, "items"),
				   cu_time_now_ns(), &table, err)
			     : cli_render_localqueues(
				   json_object_get(list, "items"),
				   x->a->all_namespaces, cu_time_now_ns(),
				   &table, err);
	if (rc == CU_OK)
		rc = cli_print_list(x, list,
		    cluster ? "clusterqueue" : "localqueue", KUEUE_GROUP, table,
		    cluster);
	cu_free(table);
	json_decref(list);
	return rc;
}

int cli_list_flavors(struct ctx *x, cu_error *err)
{
	json_t *list = NULL;
	char *table = NULL;
	int rc;

	rc = cli_list_all(x, &cli_res_rf, NULL, x->a->selector,
	    x->a->field_selector, &list, err);
	if (rc == CU_OK && x->a->output == CLI_OUT_TABLE)
		rc = cli_render_resourceflavors(json_object_get(list, "items"),
		    cu_time_now_ns(), &table, err);
	if (rc == CU_OK)
		rc = cli_print_list(
		    x, list, "resourceflavor", KUEUE_GROUP, table, true);
	cu_free(table);
	json_decref(list);
	return rc;
}

int cli_list_pods(struct ctx *x, cu_error *err)
{
	const struct api_resource *res;
	json_t *obj = NULL, *list = NULL;
	char *sel = NULL, *table = NULL, *fields = NULL;
	const char *name;
	int rc;

	rc = for_object(x, &res, &obj, err);
	if (rc != CU_OK)
		return rc;
	if (obj == NULL) {
		cli_no_resources(x, false);
		return CU_OK;
	}
	name = api_json_str(json_object_get(obj, "metadata"), "name");
	if (res == &cli_res_job) {
		sel = cu_asprintf("batch.kubernetes.io/job-name=%s", name);
	} else {
		const char *grp =
		    api_json_str(cli_path_get(obj, "metadata", "labels"),
			"kueue.x-k8s.io/pod-group-name");

		if (grp != NULL)
			sel = cu_asprintf(
			    "kueue.x-k8s.io/pod-group-name=%s", grp);
		else
			fields = cu_asprintf("metadata.name=%s", name);
	}
	if ((sel == NULL && fields == NULL)) {
		json_decref(obj);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (sel != NULL && x->a->selector != NULL) {
		char *both = cu_asprintf("%s,%s", x->a->selector, sel);

		cu_free(sel);
		sel = both;
	}
	if (fields != NULL && x->a->field_selector != NULL) {
		char *both = cu_asprintf("%s,%s", x->a->field_selector, fields);

		cu_free(fields);
		fields = both;
	}
	rc = cli_list_all(x, &cli_res_pod, x->a->all_namespaces ? NULL : x->ns,
	    sel != NULL ? sel : x->a->selector,
	    fields != NULL ? fields : x->a->field_selector, &list, err);
	if (rc == CU_OK &&
	    (x->a->output == CLI_OUT_TABLE || x->a->output == CLI_OUT_WIDE))
		rc = cli_render_pods(json_object_get(list, "items"),
		    x->a->all_namespaces, x->a->output == CLI_OUT_WIDE,
		    cu_time_now_ns(), &table, err);
	if (rc == CU_OK)
		rc = cli_print_list(x, list, "pod", "", table, false);
	cu_free(table);
	cu_free(sel);
	cu_free(fields);
	json_decref(list);
	json_decref(obj);
	return rc;
}

/* ---- pending / version ---------------------------------------------- */

int cli_pending(struct ctx *x, cu_error *err)
{
	struct cli_pending *p = NULL;
	json_t *keep = NULL, *cq = NULL, *summary = NULL;
	char *table = NULL;
	size_t n = 0;
	int rc;

	/* A ClusterQueue that does not exist is an error, not "none". */
	rc = cli_get_obj(x, &cli_res_cq, NULL, x->a->name, &cq, err);
	json_decref(cq);
	if (rc != CU_OK)
		return rc;
	rc = pending_of(
	    x, x->a->name, x->a->limit, x->a->offset, &p, &n, &keep, err);
	if (rc != CU_OK)
		return rc;
	if (x->a->output == CLI_OUT_JSON || x->a->output == CLI_OUT_YAML ||
	    x->a->output == CLI_OUT_JSONPATH) {
		rc = cli_pending_json(p, n, &summary, err);
		if (rc == CU_OK)
			rc = cli_print_obj(x, summary);
	} else if (n == 0) {
		fprintf(x->errout, "No pending workloads in ClusterQueue %s\n",
		    x->a->name);
	} else {
		rc = cli_render_pending(p, n, cu_time_now_ns(), &table, err);
		if (rc == CU_OK)
			fputs(table, x->out);
	}
	cu_free(table);
	json_decref(summary);
	cu_free(p);
	json_decref(keep);
	return rc;
}
