/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/run.c - kubectl-cueue's commands against the API server: one
 * api/ client on a private libev loop, each request awaited in turn
 * (a command line tool has nothing else to do meanwhile), LISTs paged
 * as kueuectl pages them, and kubectl's messages and exit status. See
 * cli/cli.h.
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

#define KUEUE_GROUP "kueue.x-k8s.io"
#define LIST_LIMIT_ENV "KUEUECTL_LIST_REQUEST_LIMIT"

static const struct api_resource RES_CQ = {
    KUEUE_GROUP, "v1beta2", "clusterqueues", false};
static const struct api_resource RES_LQ = {
    KUEUE_GROUP, "v1beta2", "localqueues", true};
static const struct api_resource RES_RF = {
    KUEUE_GROUP, "v1beta2", "resourceflavors", false};
static const struct api_resource RES_WL = {
    KUEUE_GROUP, "v1beta2", "workloads", true};
static const struct api_resource RES_POD = {"", "v1", "pods", true};
static const struct api_resource RES_JOB = {"batch", "v1", "jobs", true};
static const struct api_resource RES_DEPLOY = {
    "apps", "v1", "deployments", true};

struct ctx {
	const struct cli_args *a;
	struct ev_loop *loop;
	api_client *c;
	const char *ns; /* [borrowed] the namespace in effect */
	FILE *out, *errout;
	long page;
	const char *for_uid; /* [borrowed] --for: the owner kept */
	/* lazily fetched, for the local pending order */
	json_t *all_wls, *all_lqs;
};

/* ---- one request, awaited ------------------------------------------- */

struct sync {
	bool done;
	int code, err;
	json_t *body;
	char msg[CU_ERROR_MSG_MAX];
};

static void on_resp(const struct api_response *r, void *payload)
{
	struct sync *s = payload;

	s->done = true;
	s->code = r->code;
	s->err = r->err;
	s->body = r->body != NULL ? json_incref(r->body) : NULL;
	snprintf(
	    s->msg, sizeof(s->msg), "%s", r->message != NULL ? r->message : "");
}

/*
 * Send and wait. *body_out [owned: json_decref] gets a 2xx body; *code
 * the HTTP status (0 on a transport failure). Errors: the response's
 * classification with the server's message (kubectl's "Error from
 * server (Reason): message" is shortened to the message).
 */
static int call(struct ctx *x, const char *method, const char *path,
    const char *ctype, json_t *body, json_t **body_out, int *code,
    cu_error *err)
{
	struct sync s = {0};
	int rc;

	if (body_out != NULL)
		*body_out = NULL;
	rc = api_request(
	    NULL, x->c, method, path, ctype, body, on_resp, &s, err);
	if (rc != CU_OK)
		return rc;
	while (!s.done)
		ev_run(x->loop, EVRUN_ONCE);
	if (code != NULL)
		*code = s.code;
	if (s.err != CU_OK) {
		json_decref(s.body);
		if (s.code == 0)
			return cu_error_set(err, s.err, "%s: %s",
			    "cannot reach the API server",
			    s.msg[0] ? s.msg : cu_err_desc(s.err));
		return cu_error_set(
		    err, s.err, "%s", s.msg[0] ? s.msg : cu_err_desc(s.err));
	}
	if (body_out != NULL)
		*body_out = s.body;
	else
		json_decref(s.body);
	return CU_OK;
}

static int get_obj(struct ctx *x, const struct api_resource *res,
    const char *ns, const char *name, json_t **out, cu_error *err)
{
	char *path = api_resource_path(res, ns, name, NULL);
	int rc;

	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = call(x, "GET", path, NULL, NULL, out, NULL, err);
	cu_free(path);
	return rc;
}

/* Append "&k=v" (or "?k=v") with v escaped. */
static int add_query(cu_buf *b, const char *k, const char *v)
{
	char *e;
	int rc;

	if (v == NULL || v[0] == '\0')
		return CU_OK;
	e = api_escape(v);
	if (e == NULL)
		return CU_ENOMEM;
	rc = cu_buf_addf(b, "%c%s=%s", strchr(b->ptr, '?') ? '&' : '?', k, e);
	cu_free(e);
	return rc;
}

/*
 * LIST every page of res in ns (NULL = all namespaces) with the
 * selectors; *list [owned] is the first page's list object with the
 * items of every page.
 */
static int list_all(struct ctx *x, const struct api_resource *res,
    const char *ns, const char *labels, const char *fields, json_t **list,
    cu_error *err)
{
	char *base = api_resource_path(res, ns, NULL, NULL), *cont = NULL;
	json_t *all = NULL, *page = NULL;
	int rc = CU_OK;

	*list = NULL;
	if (base == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	do {
		cu_buf q;
		char lim[32];
		json_t *items;
		const char *c;

		cu_buf_init(&q, (size_t)1 << 20);
		snprintf(lim, sizeof(lim), "%ld", x->page);
		if (cu_buf_adds(&q, base) != CU_OK ||
		    add_query(&q, "labelSelector", labels) != CU_OK ||
		    add_query(&q, "fieldSelector", fields) != CU_OK ||
		    (x->page > 0 && add_query(&q, "limit", lim) != CU_OK) ||
		    add_query(&q, "continue", cont) != CU_OK) {
			cu_buf_dispose(&q);
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		rc = call(x, "GET", q.ptr, NULL, NULL, &page, NULL, err);
		cu_buf_dispose(&q);
		if (rc != CU_OK)
			break;
		items = json_object_get(page, "items");
		if (all == NULL) {
			all = page;
			if (!json_is_array(items)) {
				items = json_array();
				if (items == NULL ||
				    json_object_set_new(all, "items", items)) {
					rc = cu_error_set(
					    err, CU_ENOMEM, "out of memory");
					break;
				}
			}
		} else if (json_is_array(items) &&
			   json_array_extend(
			       json_object_get(all, "items"), items) != 0) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		c = api_json_str(json_object_get(page, "metadata"), "continue");
		cu_free(cont);
		cont = c != NULL && c[0] != '\0' ? cu_strdup(c) : NULL;
		if (c != NULL && c[0] != '\0' && cont == NULL)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		if (page != all)
			json_decref(page);
		page = NULL;
	} while (rc == CU_OK && cont != NULL);
	json_decref(page != all ? page : NULL);
	cu_free(cont);
	cu_free(base);
	if (rc != CU_OK) {
		json_decref(all);
		return rc;
	}
	(void)json_object_del(json_object_get(all, "metadata"), "continue");
	*list = all;
	return CU_OK;
}

/* Keep only the items for which keep(item, x) is true. */
static int filter(
    json_t *list, bool (*keep)(const json_t *, struct ctx *), struct ctx *x)
{
	json_t *items = json_object_get(list, "items");
	size_t i = 0;

	while (i < json_array_size(items)) {
		if (keep(json_array_get(items, i), x))
			i++;
		else if (json_array_remove(items, i) != 0)
			return CU_ENOMEM;
	}
	return CU_OK;
}

/* ---- printing ------------------------------------------------------- */

static int print_obj(struct ctx *x, const json_t *obj)
{
	cu_buf b;
	char *s;
	int rc;

	if (x->a->output == CLI_OUT_YAML) {
		cu_buf_init(&b, (size_t)1 << 30);
		rc = cli_yaml_dump(obj, &b);
		if (rc == CU_OK && b.ptr != NULL)
			fputs(b.ptr, x->out);
		cu_buf_dispose(&b);
		return rc;
	}
	rc = api_json_dumps(obj, JSON_INDENT(4), 0, &s, NULL);
	if (rc != CU_OK)
		return rc;
	fprintf(x->out, "%s\n", s);
	cu_free(s);
	return CU_OK;
}

/* "clusterqueue.kueue.x-k8s.io/NAME[ op]" as kubectl's name printer. */
static void print_name(struct ctx *x, const char *kind, const char *group,
    const char *name, const char *op)
{
	const char *dry = x->a->dry_run == CLI_DRY_CLIENT   ? "client"
			  : x->a->dry_run == CLI_DRY_SERVER ? "server"
							    : NULL;

	fprintf(x->out, "%s%s%s/%s", kind, group[0] ? "." : "", group, name);
	if (op != NULL && op[0] != '\0')
		fprintf(x->out, " %s", op);
	if (dry != NULL)
		fprintf(x->out, " (%s dry run)", dry);
	fputc('\n', x->out);
}

/* -o json|yaml prints the object, else its name. */
static int print_result(struct ctx *x, const json_t *obj, const char *kind,
    const char *group, const char *op)
{
	if (x->a->output == CLI_OUT_JSON || x->a->output == CLI_OUT_YAML)
		return print_obj(x, obj);
	print_name(x, kind, group,
	    api_json_str(json_object_get(obj, "metadata"), "name"), op);
	return CU_OK;
}

static void no_resources(struct ctx *x, bool cluster_scoped)
{
	if (cluster_scoped || x->a->all_namespaces)
		fprintf(x->errout, "No resources found\n");
	else
		fprintf(
		    x->errout, "No resources found in %s namespace.\n", x->ns);
}

/* A list in the output format of -o, or the table text. */
static int print_list(struct ctx *x, json_t *list, const char *kind,
    const char *group, const char *table, bool cluster_scoped)
{
	json_t *items = json_object_get(list, "items");
	size_t i;
	json_t *it;

	if (x->a->output == CLI_OUT_JSON || x->a->output == CLI_OUT_YAML)
		return print_obj(x, list);
	if (json_array_size(items) == 0) {
		no_resources(x, cluster_scoped);
		return CU_OK;
	}
	if (x->a->output == CLI_OUT_NAME) {
		for (i = 0; i < json_array_size(items); i++) {
			it = json_array_get(items, i);
			fprintf(x->out, "%s%s%s/%s\n", kind,
			    group[0] ? "." : "", group,
			    api_json_str(
				json_object_get(it, "metadata"), "name"));
		}
		return CU_OK;
	}
	fputs(table, x->out);
	return CU_OK;
}

/* ---- list workload -------------------------------------------------- */

static const json_t *path_get(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b != NULL ? json_object_get(v, b) : v;
}

static bool keep_wl(const json_t *wl, struct ctx *x)
{
	const struct cli_args *a = x->a;
	const char *lq = api_json_str(path_get(wl, "spec", NULL), "queueName");
	const char *cq =
	    api_json_str(path_get(wl, "status", "admission"), "clusterQueue");

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
	const json_t *refs = path_get(wl, "metadata", "ownerReferences");
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
		*res = &RES_JOB;
	else if (strcmp(type, "pod") == 0 || strcmp(type, "pods") == 0 ||
		 strcmp(type, "po") == 0)
		*res = &RES_POD;
	else
		return cu_error_set(err, CU_EINVAL,
		    "the server doesn't have a resource type \"%s\" (--for "
		    "knows job and pod)",
		    type);
	path = api_resource_path(*res, x->ns, slash + 1, NULL);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = call(x, "GET", path, NULL, NULL, obj, &code, err);
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
		rc = list_all(x, &RES_WL, NULL, NULL, NULL, &x->all_wls, err);
	if (rc == CU_OK && x->all_lqs == NULL)
		rc = list_all(x, &RES_LQ, NULL, NULL, NULL, &x->all_lqs, err);
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
	rc = call(x, "GET", path, NULL, NULL, &body, &code, &ignore);
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
		rc = call(x, "GET", path, NULL, NULL, &rl, NULL, &ignore);
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

		if (get_obj(x, &RES_LQ, ns, lq, &lqo, &ignore) != CU_OK ||
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
	const json_t *refs = path_get(wl, "metadata", "ownerReferences");
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
			no_resources(x, false);
			return CU_OK;
		}
	}
	rc = list_all(
	    x, &RES_WL, ns, x->a->selector, x->a->field_selector, list, err);
	if (rc == CU_OK && filter(*list, keep_wl, x) != CU_OK)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	if (rc == CU_OK && forobj != NULL) {
		x->for_uid =
		    api_json_str(json_object_get(forobj, "metadata"), "uid");
		if (x->for_uid == NULL)
			x->for_uid = "";
		if (filter(*list, keep_owned, x) != CU_OK)
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

static int list_workloads(struct ctx *x, cu_error *err)
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
		rc = print_list(x, list, "workload", KUEUE_GROUP, "", false);
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
		    path_get(wl, "status", "admission"), "clusterQueue");
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
	const json_t *conds = path_get(cq, "status", "conditions");
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

static int list_queues(struct ctx *x, bool cluster, cu_error *err)
{
	json_t *list = NULL;
	char *table = NULL;
	int rc;

	rc = list_all(x, cluster ? &RES_CQ : &RES_LQ,
	    cluster || x->a->all_namespaces ? NULL : x->ns, x->a->selector,
	    x->a->field_selector, &list, err);
	if (rc != CU_OK)
		return rc;
	if (filter(list, cluster ? keep_cq : keep_lq, x) != CU_OK) {
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
		rc =
		    print_list(x, list, cluster ? "clusterqueue" : "localqueue",
			KUEUE_GROUP, table, cluster);
	cu_free(table);
	json_decref(list);
	return rc;
}

static int list_flavors(struct ctx *x, cu_error *err)
{
	json_t *list = NULL;
	char *table = NULL;
	int rc;

	rc = list_all(
	    x, &RES_RF, NULL, x->a->selector, x->a->field_selector, &list, err);
	if (rc == CU_OK && x->a->output == CLI_OUT_TABLE)
		rc = cli_render_resourceflavors(json_object_get(list, "items"),
		    cu_time_now_ns(), &table, err);
	if (rc == CU_OK)
		rc = print_list(
		    x, list, "resourceflavor", KUEUE_GROUP, table, true);
	cu_free(table);
	json_decref(list);
	return rc;
}

static int list_pods(struct ctx *x, cu_error *err)
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
		no_resources(x, false);
		return CU_OK;
	}
	name = api_json_str(json_object_get(obj, "metadata"), "name");
	if (res == &RES_JOB) {
		sel = cu_asprintf("batch.kubernetes.io/job-name=%s", name);
	} else {
		const char *grp =
		    api_json_str(path_get(obj, "metadata", "labels"),
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
	rc = list_all(x, &RES_POD, x->a->all_namespaces ? NULL : x->ns,
	    sel != NULL ? sel : x->a->selector,
	    fields != NULL ? fields : x->a->field_selector, &list, err);
	if (rc == CU_OK &&
	    (x->a->output == CLI_OUT_TABLE || x->a->output == CLI_OUT_WIDE))
		rc = cli_render_pods(json_object_get(list, "items"),
		    x->a->all_namespaces, x->a->output == CLI_OUT_WIDE,
		    cu_time_now_ns(), &table, err);
	if (rc == CU_OK)
		rc = print_list(x, list, "pod", "", table, false);
	cu_free(table);
	cu_free(sel);
	cu_free(fields);
	json_decref(list);
	json_decref(obj);
	return rc;
}

/* ---- stop / resume / create ----------------------------------------- */

static int patch_spec(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	const struct api_resource *res =
	    a->kind == CLI_KIND_CLUSTERQUEUE ? &RES_CQ
	    : a->kind == CLI_KIND_LOCALQUEUE ? &RES_LQ
					     : &RES_WL;
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
	rc = get_obj(x, res, x->ns, a->name, &obj, err);
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
		rc = call(x, "PATCH", path, "application/merge-patch+json",
		    patch, &obj, NULL, err);
		cu_free(path);
		if (rc != CU_OK)
			goto out;
	}
	rc = print_result(x, obj, kind, KUEUE_GROUP, op);
out:
	json_decref(patch);
	json_decref(obj);
	return rc;
}

static int create_lq(struct ctx *x, cu_error *err)
{
	const struct cli_args *a = x->a;
	json_t *lq, *made = NULL;
	char *path, *p;
	int rc;

	if (!a->ignore_unknown_cq) {
		json_t *cq = NULL;

		rc = get_obj(x, &RES_CQ, NULL, a->clusterqueue, &cq, err);
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
		rc = print_result(x, lq, "localqueue", KUEUE_GROUP, "created");
		json_decref(lq);
		return rc;
	}
	p = api_resource_path(&RES_LQ, x->ns, NULL, NULL);
	path = p == NULL		      ? NULL
	       : a->dry_run == CLI_DRY_SERVER ? cu_asprintf("%s?dryRun=All", p)
					      : cu_strdup(p);
	cu_free(p);
	if (path == NULL) {
		json_decref(lq);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	rc = call(x, "POST", path, NULL, lq, &made, NULL, err);
	cu_free(path);
	json_decref(lq);
	if (rc == CU_OK)
		rc =
		    print_result(x, made, "localqueue", KUEUE_GROUP, "created");
	json_decref(made);
	return rc;
}

/* ---- pending / version ---------------------------------------------- */

static int pending(struct ctx *x, cu_error *err)
{
	struct cli_pending *p = NULL;
	json_t *keep = NULL, *cq = NULL, *summary = NULL;
	char *table = NULL;
	size_t n = 0;
	int rc;

	/* A ClusterQueue that does not exist is an error, not "none". */
	rc = get_obj(x, &RES_CQ, NULL, x->a->name, &cq, err);
	json_decref(cq);
	if (rc != CU_OK)
		return rc;
	rc = pending_of(
	    x, x->a->name, x->a->limit, x->a->offset, &p, &n, &keep, err);
	if (rc != CU_OK)
		return rc;
	if (x->a->output == CLI_OUT_JSON || x->a->output == CLI_OUT_YAML) {
		rc = cli_pending_json(p, n, &summary, err);
		if (rc == CU_OK)
			rc = print_obj(x, summary);
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

static int version(struct ctx *x, cu_error *err)
{
	json_t *d = NULL, *cs;
	size_t i;
	cu_error ignore;

	(void)err;
	fprintf(x->out, "Client Version: v%s\n", CUEUE_VERSION);
	fflush(x->out);
	if (x->c == NULL)
		return CU_OK;
	if (get_obj(x, &RES_DEPLOY, "cueue-system", "cueue-controller", &d,
		&ignore) != CU_OK)
		return CU_OK; /* not installed, or not readable: as kueuectl */
	cs = json_object_get(
	    path_get(path_get(d, "spec", "template"), "spec", NULL),
	    "containers");
	for (i = 0; i < json_array_size(cs); i++) {
		const char *n = api_json_str(json_array_get(cs, i), "name");
		const char *img = api_json_str(json_array_get(cs, i), "image");

		if (n != NULL && img != NULL && strcmp(n, "controller") == 0) {
			fprintf(x->out, "Cueue Controller Image: %s\n", img);
			break;
		}
	}
	json_decref(d);
	return CU_OK;
}

/* ---- the client ----------------------------------------------------- */

static void quiet_note(const char *line, void *payload)
{
	(void)line;
	(void)payload;
}

/* The first existing file of $KUBECONFIG, else ~/.kube/config
 * [owned: cu_free]; NULL when there is none (or ENOMEM). */
static char *kubeconfig_path(void)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");

	if (env != NULL && env[0] != '\0') {
		const char *p = env;

		while (*p != '\0') {
			const char *c = strchr(p, ':');
			char *f =
			    c ? cu_strndup(p, (size_t)(c - p)) : cu_strdup(p);

			if (f == NULL)
				return NULL;
			if (f[0] != '\0' && access(f, F_OK) == 0)
				return f;
			cu_free(f);
			p = c ? c + 1 : p + strlen(p);
		}
		return NULL;
	}
	return home != NULL ? cu_asprintf("%s/.kube/config", home) : NULL;
}

static int open_client(struct ctx *x, struct api_client_opts *o, cu_error *err)
{
	const struct cli_args *a = x->a;
	char *ua;
	int rc;

	if (a->context != NULL && a->context[0] != '\0') {
		char *path = a->kubeconfig != NULL && a->kubeconfig[0]
				 ? cu_strdup(a->kubeconfig)
				 : kubeconfig_path();

		if (path == NULL)
			return cu_error_set(err, CU_ENOTFOUND,
			    "--context %s: no kubeconfig file (--kubeconfig, "
			    "KUBECONFIG or ~/.kube/config)",
			    a->context);
		rc = api_client_opts_from_kubeconfig_context(
		    o, path, a->context, err);
		cu_free(path);
	} else {
		rc = api_client_opts_resolve(
		    o, a->kubeconfig, NULL, quiet_note, NULL, NULL, err);
	}
	if (rc != CU_OK)
		return rc;
	ua = cu_asprintf("kubectl-cueue/%s", CUEUE_VERSION);
	if (ua == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	cu_free((void *)o->user_agent);
	o->user_agent = ua;
	o->max_attempts = 3;
	return api_client_new(&x->c, x->loop, o, err);
}

/* Replace this process by kubectl with the same arguments (kueuectl's
 * pass-through); returns only when kubectl cannot be run. */
static int pass_through(const struct cli_args *a, FILE *errout)
{
	const char **argv = cu_calloc((size_t)a->argc + 2, sizeof(*argv));

	if (argv == NULL) {
		fprintf(errout, "error: out of memory\n");
		return 1;
	}
	argv[0] = "kubectl";
	for (int i = 0; i < a->argc; i++)
		argv[i + 1] = a->argv[i];
	argv[a->kind_at + 1] =
	    a->kind == CLI_KIND_WORKLOAD       ? "workloads." KUEUE_GROUP
	    : a->kind == CLI_KIND_CLUSTERQUEUE ? "clusterqueues." KUEUE_GROUP
	    : a->kind == CLI_KIND_LOCALQUEUE   ? "localqueues." KUEUE_GROUP
					       : "resourceflavors." KUEUE_GROUP;
	fflush(NULL);
	execvp("kubectl", (char *const *)argv);
	fprintf(errout,
	    "error: pass-through commands are not available: kubectl: %s, "
	    "PATH=\"%s\"\n",
	    strerror(errno), getenv("PATH") ? getenv("PATH") : "");
	cu_free((void *)argv);
	return 1;
}

int cli_run(const struct cli_args *a, FILE *out, FILE *errout)
{
	struct api_client_opts o = {0};
	struct ctx x = {0};
	cu_error err;
	const char *lim = getenv(LIST_LIMIT_ENV);
	int rc;

	cu_error_clear(&err);
	x.a = a;
	x.out = out;
	x.errout = errout;
	x.page = 100;
	if (lim != NULL && lim[0] != '\0') {
		char *end;

		x.page = strtol(lim, &end, 10);
		if (*end != '\0' || x.page < 0) {
			fprintf(errout,
			    "error: invalid list request limit "
			    "(%s=%s)\n",
			    LIST_LIMIT_ENV, lim);
			return 1;
		}
	}
	if (a->verb == CLI_PASSTHROUGH)
		return pass_through(a, errout);
	if (a->verb == CLI_HELP) {
		fputs(a->usage != NULL ? a->usage : cli_usage(), out);
		return 0;
	}
	x.loop = ev_loop_new(EVFLAG_AUTO);
	if (x.loop == NULL) {
		fprintf(errout, "error: cannot create an event loop\n");
		return 1;
	}
	rc = open_client(&x, &o, &err);
	if (rc != CU_OK && a->verb == CLI_VERSION) {
		/* the client version needs no server */
		rc = version(&x, &err);
		goto done;
	}
	if (rc != CU_OK)
		goto done;
	x.ns = a->namespace_ != NULL	  ? a->namespace_
	       : o.namespace_name != NULL ? o.namespace_name
					  : "default";
	switch (a->verb) {
	case CLI_LIST:
		switch (a->kind) {
		case CLI_KIND_WORKLOAD:
			rc = list_workloads(&x, &err);
			break;
		case CLI_KIND_CLUSTERQUEUE:
			rc = list_queues(&x, true, &err);
			break;
		case CLI_KIND_LOCALQUEUE:
			rc = list_queues(&x, false, &err);
			break;
		case CLI_KIND_POD:
			rc = list_pods(&x, &err);
			break;
		case CLI_KIND_RESOURCEFLAVOR:
			rc = list_flavors(&x, &err);
			break;
		case CLI_KIND_NONE:
			rc = cu_error_set(&err, CU_EINVAL, "no resource type");
			break;
		}
		break;
	case CLI_STOP:
	case CLI_RESUME:
		rc = patch_spec(&x, &err);
		break;
	case CLI_CREATE:
		rc = create_lq(&x, &err);
		break;
	case CLI_PENDING:
		rc = pending(&x, &err);
		break;
	case CLI_VERSION:
		rc = version(&x, &err);
		break;
	case CLI_HELP:
	case CLI_PASSTHROUGH:
		break;
	}
done:
	if (rc != CU_OK)
		fprintf(errout, "error: %s\n",
		    err.msg[0] ? err.msg : cu_err_desc(rc));
	json_decref(x.all_wls);
	json_decref(x.all_lqs);
	api_client_free(x.c);
	api_client_opts_dispose(&o);
	ev_loop_destroy(x.loop);
	fflush(out);
	return rc == CU_OK ? 0 : 1;
}
