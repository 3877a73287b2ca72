/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli.h - kubectl-cueue, the kubectl plugin of cueue (`kubectl cueue
 * ...`), with kueuectl's verbs, flags and output: `list
 * workload|clusterqueue|localqueue|resourceflavor|pods`, `stop`/`resume` of a
 * ClusterQueue, LocalQueue or Workload, `create localqueue`, `pending CQ`
 * and `version`, on the api/ client with kubectl's kubeconfig flags.
 *
 * Pieces, each usable alone (the unit tests and the fuzz target drive
 * them without a server): the command-line parser (cli_parse), the table
 * writer laid out as kubectl's tabwriter (cli_table_*), kubectl's
 * human-readable ages (cli_human_duration), a JSON-to-YAML writer
 * (cli_yaml_dump), the row builders of every listing (cli_render_*), the
 * local pending order of a ClusterQueue (cli_pending_order) and the
 * runner that talks to the API server (cli_run).
 *
 * Files: args.c (parser and help texts), table.c (table, durations,
 * YAML), render.c (rows and the pending order), run.c (requests, output
 * formats, dispatch), lists.c (list, pending), writes.c (stop, resume,
 * create), main.c (the program); cli_int.h is what they share. Prefix:
 * cli_, CLI_.
 */
#ifndef CU_CLI_CLI_H
#define CU_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/cu.h"

/* ---- the command line ----------------------------------------------- */

enum cli_verb {
	CLI_HELP = 0, /* print cli_args.usage to stdout, exit 0 */
	CLI_LIST,
	CLI_STOP,
	CLI_RESUME,
	CLI_CREATE,
	CLI_PENDING,
	CLI_VERSION,
	CLI_DELETE,	 /* delete workload: the owning job, else itself */
	CLI_COMPLETION,	 /* completion bash|zsh: the script on stdout */
	CLI_PASSTHROUGH, /* get/describe/edit/patch/delete: run kubectl */
};

enum cli_kind {
	CLI_KIND_NONE = 0,
	CLI_KIND_WORKLOAD,
	CLI_KIND_CLUSTERQUEUE,
	CLI_KIND_LOCALQUEUE,
	CLI_KIND_POD,
	CLI_KIND_RESOURCEFLAVOR,
};

enum cli_output {
	CLI_OUT_TABLE = 0, /* no -o */
	CLI_OUT_JSON,
	CLI_OUT_YAML,
	CLI_OUT_NAME,
	CLI_OUT_WIDE,	     /* list pods only, as a table */
	CLI_OUT_JSONPATH,    /* jsonpath=T, jsonpath-file=F (cli_jsonpath) */
	CLI_OUT_GO_TEMPLATE, /* go-template=T, go-template-file=F: kubectl's */
};

enum cli_dry_run {
	CLI_DRY_NONE = 0,
	CLI_DRY_CLIENT,
	CLI_DRY_SERVER,
};

/* Workload statuses of --status (bits); 0 = every status. */
#define CLI_ST_PENDING 0x1u
#define CLI_ST_QUOTA_RESERVED 0x2u
#define CLI_ST_ADMITTED 0x4u
#define CLI_ST_FINISHED 0x8u
#define CLI_ST_ALL 0xfu

/* Most values of a repeatable flag, and NAMEs of delete. */
#define CLI_MAX_REPEAT 16

/*
 * A parsed command line. Every string is [borrowed] from argv (or a
 * static help text): nothing here is allocated.
 */
struct cli_args {
	enum cli_verb verb;
	enum cli_kind kind;
	const char *name; /* NAME of stop/resume/create, CQ of pending */
	/* kubectl's flags */
	const char *kubeconfig; /* --kubeconfig, or NULL */
	const char *context;	/* --context, or NULL */
	const char *namespace_; /* -n/--namespace, or NULL */
	bool all_namespaces;	/* -A */
	/* kueuectl's */
	const char *clusterqueue;   /* -c/--clusterqueue */
	const char *localqueue;	    /* -q/--localqueue */
	unsigned statuses;	    /* --status, CLI_ST_* bits; 0 = any */
	const char *selector;	    /* -l/--selector */
	const char *field_selector; /* --field-selector */
	const char *for_object;	    /* --for TYPE[.GROUP]/NAME */
	int active;		    /* --active: -1 unset, 0 false, 1 true */
	bool keep_running;	    /* --keep-already-running */
	bool ignore_unknown_cq;	    /* -i/--ignore-unknown-cq */
	enum cli_dry_run dry_run;   /* --dry-run */
	enum cli_output output;	    /* -o/--output */
	const char *template_;	    /* jsonpath or go-template: text or file */
	bool template_file;	    /* template_ names a file */
	/* create clusterqueue */
	const char *cohort;	      /* --cohort */
	const char *queuing_strategy; /* --queuing-strategy */
	const char *ns_selector;      /* --namespace-selector k=v,... */
	const char *reclaim;	      /* --reclaim-within-cohort */
	const char *preempt_within;   /* --preemption-within-cluster-queue */
	/* --nominal-quota, --borrowing-limit, --lending-limit (repeatable) */
	const char *quota[3][CLI_MAX_REPEAT];
	size_t nquota[3];
	/* create resourceflavor */
	const char *node_labels; /* --node-labels k=v,... */
	const char *taints[CLI_MAX_REPEAT], *tolerations[CLI_MAX_REPEAT];
	size_t ntaints, ntolerations;
	/* delete workload */
	const char *names[CLI_MAX_REPEAT]; /* NAME... */
	size_t nnames;
	bool yes;	 /* -y/--yes: no prompt */
	bool delete_all; /* --all */
	/* completion */
	const char *shell; /* bash or zsh */
	/* pending */
	long limit;  /* --limit, default 1000 */
	long offset; /* --offset, default 0 */
	/* CLI_HELP: the text to print [borrowed, static] */
	const char *usage;
	/* CLI_PASSTHROUGH: argv[1..argc) as given [borrowed] */
	const char *const *argv;
	int argc;
	int kind_at; /* index in argv of the resource type word */
};

/*
 * kueuectl's pass-through commands: `get`, `describe`, `edit`, `patch`
 * and `delete` of a workload, clusterqueue, localqueue or resourceflavor
 * (with their aliases) are CLI_PASSTHROUGH, whatever their flags: cli_run
 * runs kubectl with the same arguments, the resource type spelled out
 * ("clusterqueues.kueue.x-k8s.io": kubectl knows no "rf" or "kwl").
 * `delete workload` is refused
 * (kueuectl's own deletes the job too; kubectl-cueue does not have it).
 *
 * Parse argv[1..argc) (argv[0] is the program) into *out as kueuectl
 * (cobra and pflag) reads it: flags anywhere, `--flag value`,
 * `--flag=value`, `-n value`, `-nvalue`, bundled boolean shorthands
 * (`-Ai`), `--` ends the flags. -h/--help anywhere, `help [VERB [KIND]]`
 * and no arguments at all give CLI_HELP with the usage of that command.
 * Errors (CU_EINVAL, one line naming what is wrong, as cobra words it
 * where it has a message): an unknown verb or resource type, an unknown
 * flag or a flag the command does not take, a flag without its value, a
 * missing or extra NAME, a missing required flag, a bad --status,
 * --output, --dry-run, --active, --limit or --offset. argv [borrowed;
 * must outlive *out].
 */
CU_MUST_CHECK int cli_parse(
    int argc, const char *const *argv, struct cli_args *out, cu_error *err);

/* Usage of the whole program [static]. */
const char *cli_usage(void);

/* ---- tables as kubectl prints them ---------------------------------- */

/*
 * A table of strings: the header row, then data rows. Laid out as
 * kubectl's tabwriter (minimum width 6, padding 3, spaces): every column
 * but the last is padded to its widest cell (in UTF-8 characters) plus 3,
 * and to at least 6; the last column is not padded.
 */
typedef struct cli_table {
	size_t ncols;
	size_t nrows; /* the header row included */
	char **cells; /* [owned] nrows * ncols strings, each [owned] */
	size_t cap;   /* rows allocated */
} cli_table;

/* Start a table with the given headers [borrowed, copied]. CU_ENOMEM. */
CU_MUST_CHECK int cli_table_init(
    cli_table *t, const char *const *headers, size_t ncols, cu_error *err);
/* Append a row of ncols cells [borrowed, copied; NULL = ""]. */
CU_MUST_CHECK int cli_table_add(
    cli_table *t, const char *const *cells, cu_error *err);
/* The text, every line ending in '\n' [owned: cu_free]. With
 * skip_header, the header row is left out. NULL on ENOMEM. */
char *cli_table_render(const cli_table *t, bool skip_header);
/* Free every cell; t is left empty. */
void cli_table_dispose(cli_table *t);

/* Room for cli_human_duration's text. */
#define CLI_DURATION_MAX 32

/*
 * A duration as kubectl prints ages (apimachinery's HumanDuration):
 * "<invalid>" below -1 s, "0s" for -1 s, then "59s", "119s", "2m",
 * "9m59s", "10m", "179m", "3h", "7h59m", "8h", "47h", "2d", "7d23h",
 * "8d", ..., "2y", "7y364d", "8y".
 */
void cli_human_duration(int64_t ns, char out[CLI_DURATION_MAX]);

/*
 * v [borrowed] as a YAML document in block style, as kubectl -o yaml
 * writes it (keys in the object's order, strings quoted when a plain
 * scalar would read as something else), appended to out. CU_ENOMEM,
 * CU_ETOOBIG (out's maximum).
 */
CU_MUST_CHECK int cli_yaml_dump(const json_t *v, cu_buf *out);

/* ---- listings ------------------------------------------------------- */

/*
 * Kueue's status of a Workload (workload.Status): "finished" (condition
 * Finished True), "admitted" (Admitted True), "quotaReserved"
 * (QuotaReserved True), else "pending". wl [borrowed]. Static string.
 */
const char *cli_workload_status(const json_t *wl);

/* The CLI_ST_* bit of cli_workload_status(wl). */
unsigned cli_workload_status_bit(const json_t *wl);

/* What a Workload row needs beyond the object. */
struct cli_wl_extra {
	const char *cluster_queue; /* [borrowed] admission's, else its
				    * LocalQueue's; NULL when unknown */
	const char *job_type;	   /* [borrowed] "job.batch", or NULL */
	long position;		   /* in its LocalQueue; -1: not pending */
};

/*
 * The listings, as kueuectl prints them, into *out [owned: cu_free]:
 *   workloads:     NAME, JOB TYPE, JOB NAME, LOCALQUEUE, CLUSTERQUEUE,
 *                  STATUS, POSITION IN QUEUE, EXEC TIME, AGE
 *   clusterqueues: NAME, COHORT, PENDING WORKLOADS, ADMITTED WORKLOADS,
 *                  ACTIVE, AGE
 *   localqueues:   NAME, CLUSTERQUEUE, PENDING WORKLOADS, ADMITTED
 *                  WORKLOADS, AGE
 *   resourceflavors: NAME, NODE LABELS (sorted key=value, ", "), AGE
 *   pods:          NAME, READY, STATUS, RESTARTS, AGE (kubectl get pods;
 *                  wide adds IP, NODE, NOMINATED NODE, READINESS GATES)
 * with_ns puts NAMESPACE first (-A). items [borrowed] is the list's
 * "items" array; extra [borrowed] has one entry per item (workloads).
 * now_ns is the wall clock for ages and execution times. CU_ENOMEM.
 */
CU_MUST_CHECK int cli_render_workloads(const json_t *items,
    const struct cli_wl_extra *extra, bool with_ns, int64_t now_ns, char **out,
    cu_error *err);
CU_MUST_CHECK int cli_render_clusterqueues(
    const json_t *items, int64_t now_ns, char **out, cu_error *err);
CU_MUST_CHECK int cli_render_localqueues(const json_t *items, bool with_ns,
    int64_t now_ns, char **out, cu_error *err);
CU_MUST_CHECK int cli_render_resourceflavors(
    const json_t *items, int64_t now_ns, char **out, cu_error *err);
CU_MUST_CHECK int cli_render_pods(const json_t *items, bool with_ns, bool wide,
    int64_t now_ns, char **out, cu_error *err);

/* ---- pending Workloads ---------------------------------------------- */

/* One pending Workload of a ClusterQueue, in queue order. */
struct cli_pending {
	const char *namespace_;	 /* [borrowed] from the Workload JSON */
	const char *name;	 /* [borrowed] */
	const char *local_queue; /* [borrowed] */
	const char *created;	 /* [borrowed] creationTimestamp, or NULL */
	const char *uid;	 /* [borrowed] metadata.uid, or "" */
	int64_t priority;
	int64_t queue_ts_ns; /* creation, or the eviction time */
	long pos_cq;	     /* 0-based position in the ClusterQueue */
	long pos_lq;	     /* 0-based position in its LocalQueue */
};

/*
 * The pending Workloads of ClusterQueue cq [borrowed], computed as Kueue
 * orders its queue when the visibility API is not served: from
 * workloads and localqueues [borrowed; "items" arrays of every
 * namespace], a Workload is pending in cq when its LocalQueue
 * (namespace, spec.queueName) exists and points at cq, it has no quota
 * reservation, it is not finished and spec.active is not false. Order:
 * higher spec.priority first, then the older queue timestamp (Kueue's
 * GetQueueOrderTimestamp with its defaults: the Evicted condition's
 * lastTransitionTime while it is True with reason PodsReadyTimeout or
 * AdmissionCheck, else creationTimestamp), then the smaller UID (as cueue's
 * engine breaks ties), then namespace and name. *out [owned: cu_free; NULL when
 * *n is 0] points into workloads. CU_ENOMEM.
 */
CU_MUST_CHECK int cli_pending_order(const json_t *workloads,
    const json_t *localqueues, const char *cq, struct cli_pending **out,
    size_t *n, cu_error *err);

/*
 * The same from the visibility API's PendingWorkloadsSummary `items`
 * [borrowed] (positionInClusterQueue, positionInLocalQueue, priority,
 * localQueueName, metadata). Items that are not objects are skipped.
 * *out [owned: cu_free; NULL when *n is 0] points into items. CU_ENOMEM.
 */
CU_MUST_CHECK int cli_pending_from_visibility(
    const json_t *items, struct cli_pending **out, size_t *n, cu_error *err);

/*
 * `pending` as a table (POSITION IN CLUSTERQUEUE, POSITION IN
 * LOCALQUEUE, NAMESPACE, NAME, LOCALQUEUE, PRIORITY, AGE) [owned:
 * cu_free], or as a visibility.kueue.x-k8s.io/v1beta2
 * PendingWorkloadsSummary object (cli_pending_json [owned: json_decref]).
 * p [borrowed], n entries. CU_ENOMEM.
 */
CU_MUST_CHECK int cli_render_pending(const struct cli_pending *p, size_t n,
    int64_t now_ns, char **out, cu_error *err);
CU_MUST_CHECK int cli_pending_json(
    const struct cli_pending *p, size_t n, json_t **out, cu_error *err);

/* ---- create clusterqueue / resourceflavor flags ---------------------- */

/*
 * kueuectl's quota flags: flags[w][0..nflags[w]) are the values of
 * --nominal-quota (w 0), --borrowing-limit (1) and --lending-limit (2),
 * each a comma-separated list of "FLAVOR:RESOURCE=QUANTITY[;...]". The
 * specs of one flavor merge (the same resources in each, the first value
 * of each kind kept; a flavor without a nominal quota gets "0"); flavors
 * covering the same resources form one group, in the order flavors first
 * appear; a resource in two groups is refused. *out [owned] is
 * spec.resourceGroups. Errors (CU_EINVAL) name the flag, the value and
 * the form to write.
 */
CU_MUST_CHECK int cli_resource_groups(const char *const *flags[3],
    const size_t nflags[3], json_t **out, cu_error *err);

/* "k=v[,k=v]" of flag [borrowed, for messages] as a JSON object [owned],
 * keys and values checked as label keys and values. */
CU_MUST_CHECK int cli_key_values(
    const char *flag, const char *spec, json_t **out, cu_error *err);

/*
 * --node-taints (taints true: "KEY[=VALUE]:EFFECT", one per key and
 * effect) or --tolerations ("KEY[=VALUE][:EFFECT]", ":EFFECT" or "KEY";
 * operator Equal with a value, else Exists) as a JSON array [owned].
 */
CU_MUST_CHECK int cli_taints_or_tolerations(
    bool taints, const char *spec, json_t **out, cu_error *err);

/* ---- JSONPath (-o jsonpath=...) -------------------------------------- */

/*
 * kubectl's JSONPath templates (client-go util/jsonpath). Text outside
 * {} is copied; inside: a path ($ the document, @ or nothing the current
 * value) of .name, ['name'], ['a','b'], [i], [s:e:step], [i,j], .* and
 * [*], ..name (recursive), [?(@.path OP value)] with OP ==, !=, <, <=,
 * >, >= against a quoted string, a number, true/false or another path,
 * [?(@.path)] (exists); {range PATH}...{end} repeats its body with each
 * value as @; {"text"} a literal with \n, \t escapes. Each value prints
 * bare if a string, else as compact JSON (keys sorted); the values of
 * one {} are separated by a space. Missing keys print nothing, as
 * kubectl's printer allows them.
 */
typedef struct cli_jsonpath cli_jsonpath;

/* Compile tmpl [borrowed] into *out [owned: cli_jsonpath_free].
 * CU_EINVAL with the position of a syntax error, CU_ENOMEM. */
CU_MUST_CHECK int cli_jsonpath_parse(
    const char *tmpl, cli_jsonpath **out, cu_error *err);
/* Append the template's text for doc [borrowed] to out. CU_ENOMEM,
 * CU_ETOOBIG (more than 100,000 values, or out's maximum). */
CU_MUST_CHECK int cli_jsonpath_exec(
    const cli_jsonpath *jp, const json_t *doc, cu_buf *out, cu_error *err);
void cli_jsonpath_free(cli_jsonpath *jp);

/* ---- running a command ---------------------------------------------- */

/*
 * Run the parsed command a [borrowed] against the API server found as
 * api_client_opts_resolve does (--kubeconfig, KUBECONFIG, in-cluster,
 * ~/.kube/config; --context picks a context of that kubeconfig). Results
 * go to out, "No resources found ..." and errors (one line, "error: ...")
 * to errout [both borrowed]. Returns the exit status: 0, or 1 on any
 * error.
 */
int cli_run(const struct cli_args *a, FILE *out, FILE *errout);

#endif /* CU_CLI_CLI_H */
