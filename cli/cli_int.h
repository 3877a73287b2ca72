/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_int.h - what the files of kubectl-cueue share (not a public
 * header: cli/cli.h is): the command's context, the resources it
 * reads and writes, one request awaited (cli_call), paged LISTs, and
 * kubectl's output formats; the commands each file implements.
 */
#ifndef CU_CLI_CLI_INT_H
#define CU_CLI_CLI_INT_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "api/client.h"
#include "cli/cli.h"
#include "lib/cu.h"

#define KUEUE_GROUP "kueue.x-k8s.io"
/* An error already written to errout (cli_run adds no line). */
#define CLI_EREPORTED CU_ECANCELED

extern const struct api_resource cli_res_cq, cli_res_lq, cli_res_rf, cli_res_wl,
    cli_res_pod, cli_res_job, cli_res_deploy;

struct ctx {
	const struct cli_args *a;
	struct ev_loop *loop;
	api_client *c;
	const char *ns; /* [borrowed] the namespace in effect */
	FILE *out, *errout;
	long page;
	const char *for_uid; /* [borrowed] --for: the owner kept */
	cli_jsonpath *jp;    /* [owned] -o jsonpath, compiled once */
	/* lazily fetched, for the local pending order */
	json_t *all_wls, *all_lqs;
};

/*
 * Send and wait. *body_out [owned: json_decref] gets a 2xx body; *code
 * the HTTP status (0 on a transport failure). Errors carry the server's
 * message. body [borrowed].
 */
CU_MUST_CHECK int cli_call(struct ctx *x, const char *method, const char *path,
    const char *ctype, json_t *body, json_t **body_out, int *code,
    cu_error *err);
/* GET one object of res (ns NULL: cluster-scoped) into *out [owned]. */
CU_MUST_CHECK int cli_get_obj(struct ctx *x, const struct api_resource *res,
    const char *ns, const char *name, json_t **out, cu_error *err);
/* LIST every page of res in ns (NULL: all) with the selectors [borrowed,
 * may be NULL] into *list [owned]: the first page with every item. */
CU_MUST_CHECK int cli_list_all(struct ctx *x, const struct api_resource *res,
    const char *ns, const char *labels, const char *fields, json_t **list,
    cu_error *err);
/* Keep the items of list [borrowed] for which keep(item, x). */
CU_MUST_CHECK int cli_filter(
    json_t *list, bool (*keep)(const json_t *, struct ctx *), struct ctx *x);
/* o.a.b [borrowed], b may be NULL. */
const json_t *cli_path_get(const json_t *o, const char *a, const char *b);

/* obj [borrowed] in the -o format (json, yaml, jsonpath, go-template). */
CU_MUST_CHECK int cli_print_obj(struct ctx *x, const json_t *obj);
/* "kind.group/NAME[ op][ (client dry run)]" as kubectl's name printer. */
void cli_print_name(struct ctx *x, const char *kind, const char *group,
    const char *name, const char *op);
/* -o json|yaml|jsonpath|go-template prints obj, else its name. */
CU_MUST_CHECK int cli_print_result(struct ctx *x, const json_t *obj,
    const char *kind, const char *group, const char *op);
/* "No resources found[ in NS namespace.]" on stderr, as kubectl. */
void cli_no_resources(struct ctx *x, bool cluster_scoped);
/* A list [borrowed] in the -o format, or table [borrowed]. */
CU_MUST_CHECK int cli_print_list(struct ctx *x, json_t *list, const char *kind,
    const char *group, const char *table, bool cluster_scoped);

/* usage.c: the help text of each command */
extern const char cli_usage_root[], cli_usage_list[], cli_usage_stop[],
    cli_usage_resume[], cli_usage_create[], cli_usage_delete[],
    cli_usage_completion[], cli_usage_pending[], cli_usage_version[];

/* lists.c */
CU_MUST_CHECK int cli_list_workloads(struct ctx *x, cu_error *err);
CU_MUST_CHECK int cli_list_queues(struct ctx *x, bool cluster, cu_error *err);
CU_MUST_CHECK int cli_list_flavors(struct ctx *x, cu_error *err);
CU_MUST_CHECK int cli_list_pods(struct ctx *x, cu_error *err);
CU_MUST_CHECK int cli_pending(struct ctx *x, cu_error *err);

/* writes.c */
CU_MUST_CHECK int cli_patch_spec(struct ctx *x, cu_error *err);
/* create localqueue|clusterqueue|resourceflavor */
CU_MUST_CHECK int cli_create(struct ctx *x, cu_error *err);
/* delete workload: the owning jobs after confirmation, else itself */
CU_MUST_CHECK int cli_delete_workloads(struct ctx *x, cu_error *err);

/* complete.c */
/* completion bash|zsh: the script on x->out */
CU_MUST_CHECK int cli_completion(struct ctx *x, cu_error *err);

#endif /* CU_CLI_CLI_INT_H */
