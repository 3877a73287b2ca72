/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/run.c - kubectl-cueue's commands against the API server: one
 * api/ client on a private libev loop, each request awaited in turn
 * (a command line tool has nothing else to do meanwhile), LISTs paged
 * as kueuectl pages them, kubectl's output formats, messages and exit
 * status, and the dispatch of each command (cli_run). The commands live
 * in lists.c (list, pending) and writes.c (stop, resume, create,
 * delete). See cli/cli.h and cli/cli_int.h.
 */
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/client.h"
#include "api/json.h"
#include "cli/cli.h"
#include "cli/cli_int.h"

#define LIST_LIMIT_ENV "KUEUECTL_LIST_REQUEST_LIMIT"

const struct api_resource cli_res_cq = {
    KUEUE_GROUP, "v1beta2", "clusterqueues", false};
const struct api_resource cli_res_lq = {
    KUEUE_GROUP, "v1beta2", "localqueues", true};
const struct api_resource cli_res_rf = {
    KUEUE_GROUP, "v1beta2", "resourceflavors", false};
const struct api_resource cli_res_wl = {
    KUEUE_GROUP, "v1beta2", "workloads", true};
const struct api_resource cli_res_pod = {"", "v1", "pods", true};
const struct api_resource cli_res_job = {"batch", "v1", "jobs", true};
const struct api_resource cli_res_deploy = {"apps", "v1", "deployments", true};

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
int cli_call(struct ctx *x, const char *method, const char *path,
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
			return cu_error_set(err, s.err,
			    "cannot reach the API server: %s (check "
			    "--kubeconfig, KUBECONFIG or --context)",
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

int cli_get_obj(struct ctx *x, const struct api_resource *res, const char *ns,
    const char *name, json_t **out, cu_error *err)
{
	char *path = api_resource_path(res, ns, name, NULL);
	int rc, code = 0;

	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = cli_call(x, "GET", path, NULL, NULL, out, &code, err);
	cu_free(path);
	if (rc != CU_OK && code == 404 && err != NULL) {
		/* what to do: see what there is */
		const char *kind = res == &cli_res_cq	? "clusterqueue"
				   : res == &cli_res_lq ? "localqueue"
				   : res == &cli_res_wl ? "workload"
				   : res == &cli_res_rf ? "resourceflavor"
							: NULL;
		size_t n = strlen(err->msg);

		if (kind != NULL)
			snprintf(err->msg + n, sizeof(err->msg) - n,
			    " (kubectl cueue list %s%s lists them)", kind,
			    res->namespaced ? " -n NAMESPACE" : "");
	}
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
int cli_list_all(struct ctx *x, const struct api_resource *res, const char *ns,
    const char *labels, const char *fields, json_t **list, cu_error *err)
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
		rc = cli_call(x, "GET", q.ptr, NULL, NULL, &page, NULL, err);
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
int cli_filter(
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

/* The -o template's text: as given, or the file's [owned: cu_free]. */
static int template_text(struct ctx *x, char **out, cu_error *err)
{
	const char *t = x->a->template_;
	FILE *f;
	cu_buf b;
	char chunk[4096];
	size_t n;
	int rc = CU_OK;

	if (!x->a->template_file) {
		*out = cu_strdup(t);
		return *out ? CU_OK
			    : cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	f = fopen(t, "r");
	if (f == NULL)
		return cu_error_set(err, CU_ENOTFOUND,
		    "template file %s: %s (check the path of -o ...-file=)", t,
		    strerror(errno));
	cu_buf_init(&b, (size_t)1 << 20);
	while (rc == CU_OK && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = cu_buf_add(&b, chunk, n);
	if (rc == CU_OK)
		rc = cu_buf_adds(&b, "");
	(void)fclose(f);
	if (rc != CU_OK) {
		cu_buf_dispose(&b);
		return cu_error_set(
		    err, rc, "template file %s: larger than 1 MiB", t);
	}
	*out = cu_buf_detach(&b, NULL);
	cu_buf_dispose(&b);
	return *out ? CU_OK : cu_error_set(err, CU_ENOMEM, "out of memory");
}

static int print_jsonpath(struct ctx *x, const json_t *obj, cu_error *err)
{
	cu_buf b;
	int rc = CU_OK;

	if (x->jp == NULL) {
		char *t = NULL;

		rc = template_text(x, &t, err);
		if (rc == CU_OK)
			rc = cli_jsonpath_parse(t, &x->jp, err);
		cu_free(t);
		if (rc != CU_OK)
			return rc;
	}
	cu_buf_init(&b, (size_t)1 << 30);
	rc = cli_jsonpath_exec(x->jp, obj, &b, err);
	if (rc == CU_OK)
		fwrite(b.ptr, 1, b.len, x->out);
	cu_buf_dispose(&b);
	return rc;
}

/*
 * -o go-template runs kubectl's own templates (Go's text/template with
 * kubectl's functions): obj is written to a private temporary file and
 * kubectl prints it - a list with `kubectl get -f FILE` (the same
 * objects, read again, as kubectl get prints a List), one object with
 * `kubectl create --dry-run=client -f FILE` (this object as it is, the
 * server not written to).
 */
static int print_go_template(
    struct ctx *x, const json_t *obj, bool list, cu_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *path, *opt;
	const char *argv[16];
	json_t *doc = json_deep_copy(obj);
	int fd, n = 0, status = 0, rc = CU_OK;
	pid_t pid;

	path = cu_asprintf("%s/kubectl-cueue-XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	opt = cu_asprintf("-o=go-template%s=%s",
	    x->a->template_file ? "-file" : "", x->a->template_);
	if (doc == NULL || path == NULL || opt == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	if (list) {
		/* kubectl needs each item's apiVersion and kind */
		const char *av = api_json_str(doc, "apiVersion");
		const char *lk = api_json_str(doc, "kind");
		json_t *it;
		size_t i;

		json_array_foreach(json_object_get(doc, "items"), i, it)
		{
			if (av != NULL && !json_object_get(it, "apiVersion"))
				(void)json_object_set_new(
				    it, "apiVersion", json_string(av));
			if (lk != NULL && strlen(lk) > 4 &&
			    !json_object_get(it, "kind"))
				(void)json_object_set_new(it, "kind",
				    json_stringn(lk, strlen(lk) - 4));
		}
	}
	fd = mkstemp(path);
	if (fd < 0 || json_dumpfd(doc, fd, JSON_COMPACT) != 0) {
		rc = cu_error_set(err, CU_EIO,
		    "go-template: cannot write a temporary file in %s (set "
		    "TMPDIR to a writable directory)",
		    tmp != NULL ? tmp : "/tmp");
		if (fd >= 0)
			(void)close(fd);
		goto out;
	}
	(void)close(fd);
	argv[n++] = "kubectl";
	if (x->a->kubeconfig != NULL)
		argv[n++] = "--kubeconfig", argv[n++] = x->a->kubeconfig;
	if (x->a->context != NULL)
		argv[n++] = "--context", argv[n++] = x->a->context;
	if (list) {
		argv[n++] = "get";
	} else {
		argv[n++] = "create";
		argv[n++] = "--dry-run=client";
		argv[n++] = "--validate=false";
	}
	argv[n++] = "-f";
	argv[n++] = path;
	argv[n++] = opt;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (fileno(x->out) != STDOUT_FILENO)
			(void)dup2(fileno(x->out), STDOUT_FILENO);
		execvp("kubectl", (char *const *)argv);
		fprintf(stderr, "error: -o go-template runs kubectl: %s\n",
		    strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		rc = cu_error_set(
		    err, CU_EIO, "go-template: cannot run kubectl");
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = cu_error_set(err, CU_EINVAL,
		    "go-template: kubectl exited with %d (its message is "
		    "above); "
		    "-o jsonpath=TEMPLATE needs no kubectl",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	(void)unlink(path);
out:
	json_decref(doc);
	cu_free(path);
	cu_free(opt);
	return rc;
}

static int print_formatted(struct ctx *x, const json_t *obj, bool list)
{
	cu_error err;
	cu_buf b;
	char *s;
	int rc;

	cu_error_clear(&err);
	if (x->a->output == CLI_OUT_JSONPATH ||
	    x->a->output == CLI_OUT_GO_TEMPLATE) {
		rc = x->a->output == CLI_OUT_JSONPATH
			 ? print_jsonpath(x, obj, &err)
			 : print_go_template(x, obj, list, &err);
		if (rc != CU_OK)
			fprintf(x->errout, "error: %s\n", err.msg);
		return rc == CU_OK ? CU_OK : CLI_EREPORTED;
	}
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

int cli_print_obj(struct ctx *x, const json_t *obj)
{
	return print_formatted(x, obj, false);
}

/* "clusterqueue.kueue.x-k8s.io/NAME[ op]" as kubectl's name printer. */
void cli_print_name(struct ctx *x, const char *kind, const char *group,
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
int cli_print_result(struct ctx *x, const json_t *obj, const char *kind,
    const char *group, const char *op)
{
	if (x->a->output != CLI_OUT_TABLE && x->a->output != CLI_OUT_NAME)
		return cli_print_obj(x, obj);
	cli_print_name(x, kind, group,
	    api_json_str(json_object_get(obj, "metadata"), "name"), op);
	return CU_OK;
}

void cli_no_resources(struct ctx *x, bool cluster_scoped)
{
	if (cluster_scoped || x->a->all_namespaces)
		fprintf(x->errout, "No resources found\n");
	else
		fprintf(
		    x->errout, "No resources found in %s namespace.\n", x->ns);
}

/* A list in the output format of -o, or the table text. */
int cli_print_list(struct ctx *x, json_t *list, const char *kind,
    const char *group, const char *table, bool cluster_scoped)
{
	json_t *items = json_object_get(list, "items");
	size_t i;
	json_t *it;

	if (x->a->output == CLI_OUT_JSON || x->a->output == CLI_OUT_YAML ||
	    x->a->output == CLI_OUT_JSONPATH)
		return print_formatted(x, list, true);
	if (json_array_size(items) == 0) {
		cli_no_resources(x, cluster_scoped);
		return CU_OK;
	}
	if (x->a->output == CLI_OUT_GO_TEMPLATE)
		return print_formatted(x, list, true);
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
	if (cli_get_obj(x, &cli_res_deploy, "cueue-system", "cueue-controller",
		&d, &ignore) != CU_OK)
		return CU_OK; /* not installed, or not readable: as kueuectl */
	cs = json_object_get(
	    cli_path_get(cli_path_get(d, "spec", "template"), "spec", NULL),
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
	if (a->verb == CLI_COMPLETION && strcmp(a->shell, "__complete") != 0)
		return cli_completion(&x, &err) == CU_OK ? 0 : 1;
	x.loop = ev_loop_new(EVFLAG_AUTO);
	if (x.loop == NULL) {
		fprintf(errout, "error: cannot create an event loop\n");
		return 1;
	}
	rc = open_client(&x, &o, &err);
	if (a->verb == CLI_COMPLETION) {
		/* names from the server when it answers, else none */
		x.ns = a->namespace_ != NULL	  ? a->namespace_
		       : o.namespace_name != NULL ? o.namespace_name
						  : "default";
		rc = cli_completion(&x, &err);
		goto done;
	}
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
			rc = cli_list_workloads(&x, &err);
			break;
		case CLI_KIND_CLUSTERQUEUE:
			rc = cli_list_queues(&x, true, &err);
			break;
		case CLI_KIND_LOCALQUEUE:
			rc = cli_list_queues(&x, false, &err);
			break;
		case CLI_KIND_POD:
			rc = cli_list_pods(&x, &err);
			break;
		case CLI_KIND_RESOURCEFLAVOR:
			rc = cli_list_flavors(&x, &err);
			break;
		case CLI_KIND_NONE:
			rc = cu_error_set(&err, CU_EINVAL, "no resource type");
			break;
		}
		break;
	case CLI_STOP:
	case CLI_RESUME:
		rc = cli_patch_spec(&x, &err);
		break;
	case CLI_CREATE:
		rc = cli_create(&x, &err);
		break;
	case CLI_DELETE:
		rc = cli_delete_workloads(&x, &err);
		break;
	case CLI_PENDING:
		rc = cli_pending(&x, &err);
		break;
	case CLI_VERSION:
		rc = version(&x, &err);
		break;
	case CLI_COMPLETION:
	case CLI_HELP:
	case CLI_PASSTHROUGH:
		break;
	}
done:
	if (rc != CU_OK && rc != CLI_EREPORTED)
		fprintf(errout, "error: %s\n",
		    err.msg[0] ? err.msg : cu_err_desc(rc));
	cli_jsonpath_free(x.jp);
	json_decref(x.all_wls);
	json_decref(x.all_lqs);
	api_client_free(x.c);
	api_client_opts_dispose(&o);
	ev_loop_destroy(x.loop);
	fflush(out);
	return rc == CU_OK ? 0 : 1;
}
