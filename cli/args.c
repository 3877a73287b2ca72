/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/args.c - the command line of kubectl-cueue: kueuectl's verbs,
 * resource types (with its aliases) and flags, read as pflag reads them,
 * each command checked for the flags it takes, and the help texts. See
 * cli/cli.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/cli_int.h"

enum flag_id {
	F_KUBECONFIG,
	F_CONTEXT,
	F_NAMESPACE,
	F_HELP,
	F_ALLNS,
	F_CQ,
	F_LQ,
	F_STATUS,
	F_SELECTOR,
	F_FIELDSEL,
	F_FOR,
	F_OUTPUT,
	F_ACTIVE,
	F_KEEP,
	F_DRYRUN,
	F_IGNORE,
	F_LIMIT,
	F_OFFSET,
	F_COHORT,
	F_QSTRAT,
	F_NSSEL,
	F_RECLAIM,
	F_PREEMPT,
	F_NOMINAL,
	F_BORROW,
	F_LEND,
	F_NODELABELS,
	F_NODETAINTS,
	F_TOLERATIONS,
	F_YES,
	F_ALL,
	F_COUNT
};

struct flag_def {
	const char *lng;
	char shrt; /* 0: none */
	bool value;
};

static const struct flag_def FLAGS[F_COUNT] = {
    [F_KUBECONFIG] = {"kubeconfig", 0, true},
    [F_CONTEXT] = {"context", 0, true},
    [F_NAMESPACE] = {"namespace", 'n', true},
    [F_HELP] = {"help", 'h', false},
    [F_ALLNS] = {"all-namespaces", 'A', false},
    [F_CQ] = {"clusterqueue", 'c', true},
    [F_LQ] = {"localqueue", 'q', true},
    [F_STATUS] = {"status", 0, true},
    [F_SELECTOR] = {"selector", 'l', true},
    [F_FIELDSEL] = {"field-selector", 0, true},
    [F_FOR] = {"for", 0, true},
    [F_OUTPUT] = {"output", 'o', true},
    [F_ACTIVE] = {"active", 0, true},
    [F_KEEP] = {"keep-already-running", 0, false},
    [F_DRYRUN] = {"dry-run", 0, true},
    [F_IGNORE] = {"ignore-unknown-cq", 'i', false},
    [F_LIMIT] = {"limit", 0, true},
    [F_OFFSET] = {"offset", 0, true},
    [F_COHORT] = {"cohort", 0, true},
    [F_QSTRAT] = {"queuing-strategy", 0, true},
    [F_NSSEL] = {"namespace-selector", 0, true},
    [F_RECLAIM] = {"reclaim-within-cohort", 0, true},
    [F_PREEMPT] = {"preemption-within-cluster-queue", 0, true},
    [F_NOMINAL] = {"nominal-quota", 0, true},
    [F_BORROW] = {"borrowing-limit", 0, true},
    [F_LEND] = {"lending-limit", 0, true},
    [F_NODELABELS] = {"node-labels", 0, true},
    [F_NODETAINTS] = {"node-taints", 0, true},
    [F_TOLERATIONS] = {"tolerations", 0, true},
    [F_YES] = {"yes", 'y', false},
    [F_ALL] = {"all", 0, false},
};

_Static_assert(F_COUNT <= 32, "flag bits fit an unsigned");

#define BIT(f) (1u << (f))
#define GLOBAL                                                                 \
	(BIT(F_KUBECONFIG) | BIT(F_CONTEXT) | BIT(F_NAMESPACE) | BIT(F_HELP))

#define MAX_POS 16

const char *cli_usage(void)
{
	return cli_usage_root;
}

/* ---- parsing -------------------------------------------------------- */

struct verb_def {
	const char *name;
	enum cli_verb verb;
	const char *usage;
};

static const struct verb_def VERBS[] = {
    {"list", CLI_LIST, cli_usage_list},
    {"stop", CLI_STOP, cli_usage_stop},
    {"resume", CLI_RESUME, cli_usage_resume},
    {"create", CLI_CREATE, cli_usage_create},
    {"pending", CLI_PENDING, cli_usage_pending},
    {"version", CLI_VERSION, cli_usage_version},
    {"delete", CLI_DELETE, cli_usage_delete},
    {"completion", CLI_COMPLETION, cli_usage_completion},
};

static const struct verb_def *find_verb(const char *s)
{
	for (size_t i = 0; i < sizeof(VERBS) / sizeof(VERBS[0]); i++)
		if (strcmp(VERBS[i].name, s) == 0)
			return &VERBS[i];
	return NULL;
}

static enum cli_kind find_kind(const char *s)
{
	static const struct {
		const char *name;
		enum cli_kind kind;
	} kinds[] = {
	    {"workload", CLI_KIND_WORKLOAD},
	    {"workloads", CLI_KIND_WORKLOAD},
	    {"kwl", CLI_KIND_WORKLOAD},
	    {"kueueworkload", CLI_KIND_WORKLOAD},
	    {"kueueworkloads", CLI_KIND_WORKLOAD},
	    {"clusterqueue", CLI_KIND_CLUSTERQUEUE},
	    {"clusterqueues", CLI_KIND_CLUSTERQUEUE},
	    {"cq", CLI_KIND_CLUSTERQUEUE},
	    {"localqueue", CLI_KIND_LOCALQUEUE},
	    {"localqueues", CLI_KIND_LOCALQUEUE},
	    {"lq", CLI_KIND_LOCALQUEUE},
	    {"pods", CLI_KIND_POD},
	    {"pod", CLI_KIND_POD},
	    {"po", CLI_KIND_POD},
	    {"resourceflavor", CLI_KIND_RESOURCEFLAVOR},
	    {"resourceflavors", CLI_KIND_RESOURCEFLAVOR},
	    {"rf", CLI_KIND_RESOURCEFLAVOR},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, s) == 0)
			return kinds[i].kind;
	return CLI_KIND_NONE;
}

static const char *kind_word(enum cli_kind k)
{
	switch (k) {
	case CLI_KIND_WORKLOAD:
		return "workload";
	case CLI_KIND_CLUSTERQUEUE:
		return "clusterqueue";
	case CLI_KIND_LOCALQUEUE:
		return "localqueue";
	case CLI_KIND_POD:
		return "pods";
	case CLI_KIND_RESOURCEFLAVOR:
		return "resourceflavor";
	case CLI_KIND_NONE:
		break;
	}
	return "";
}

/* The flags a command takes (GLOBAL included). */
static unsigned allowed_flags(enum cli_verb v, enum cli_kind k)
{
	unsigned out = BIT(F_OUTPUT);

	switch (v) {
	case CLI_LIST:
		switch (k) {
		case CLI_KIND_WORKLOAD:
			return GLOBAL | out | BIT(F_ALLNS) | BIT(F_CQ) |
			       BIT(F_LQ) | BIT(F_STATUS) | BIT(F_SELECTOR) |
			       BIT(F_FIELDSEL) | BIT(F_FOR);
		case CLI_KIND_CLUSTERQUEUE:
			return GLOBAL | out | BIT(F_SELECTOR) |
			       BIT(F_FIELDSEL) | BIT(F_ACTIVE);
		case CLI_KIND_LOCALQUEUE:
			return GLOBAL | out | BIT(F_ALLNS) | BIT(F_CQ) |
			       BIT(F_SELECTOR) | BIT(F_FIELDSEL);
		case CLI_KIND_RESOURCEFLAVOR:
			return GLOBAL | out | BIT(F_SELECTOR) | BIT(F_FIELDSEL);
		case CLI_KIND_POD:
			return GLOBAL | out | BIT(F_ALLNS) | BIT(F_SELECTOR) |
			       BIT(F_FIELDSEL) | BIT(F_FOR);
		case CLI_KIND_NONE:
			break;
		}
		return GLOBAL;
	case CLI_STOP:
		if (k == CLI_KIND_CLUSTERQUEUE || k == CLI_KIND_LOCALQUEUE)
			return GLOBAL | out | BIT(F_DRYRUN) | BIT(F_KEEP);
		return GLOBAL | out | BIT(F_DRYRUN);
	case CLI_RESUME:
		return GLOBAL | out | BIT(F_DRYRUN);
	case CLI_CREATE:
		if (k == CLI_KIND_CLUSTERQUEUE)
			return GLOBAL | out | BIT(F_DRYRUN) | BIT(F_COHORT) |
			       BIT(F_QSTRAT) | BIT(F_NSSEL) | BIT(F_RECLAIM) |
			       BIT(F_PREEMPT) | BIT(F_NOMINAL) | BIT(F_BORROW) |
			       BIT(F_LEND);
		if (k == CLI_KIND_RESOURCEFLAVOR)
			return GLOBAL | out | BIT(F_DRYRUN) |
			       BIT(F_NODELABELS) | BIT(F_NODETAINTS) |
			       BIT(F_TOLERATIONS);
		return GLOBAL | out | BIT(F_DRYRUN) | BIT(F_CQ) | BIT(F_IGNORE);
	case CLI_DELETE:
		return GLOBAL | BIT(F_DRYRUN) | BIT(F_YES) | BIT(F_ALL) |
		       BIT(F_ALLNS);
	case CLI_COMPLETION:
		return GLOBAL;
	case CLI_PENDING:
		return GLOBAL | out | BIT(F_LIMIT) | BIT(F_OFFSET);
	case CLI_VERSION:
	case CLI_HELP:
	case CLI_PASSTHROUGH:
		break;
	}
	return GLOBAL;
}

/* Parse a boolean flag value as strconv.ParseBool. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const f[] = {
	    "0", "f", "F", "false", "FALSE", "False"};

	for (size_t i = 0; i < 6; i++) {
		if (strcmp(s, t[i]) == 0) {
			*out = true;
			return CU_OK;
		}
		if (strcmp(s, f[i]) == 0) {
			*out = false;
			return CU_OK;
		}
	}
	return CU_EINVAL;
}

static int parse_count(
    const char *s, const char *flag, long *out, cu_error *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || v < 0)
		return cu_error_set(err, CU_EINVAL,
		    "invalid argument \"%s\" for \"--%s\" flag: must be a "
		    "non-negative integer",
		    s, flag);
	*out = v;
	return CU_OK;
}

static int set_status(struct cli_args *a, const char *val, cu_error *err)
{
	if (strcasecmp(val, "all") == 0)
		a->statuses |= CLI_ST_ALL;
	else if (strcasecmp(val, "pending") == 0)
		a->statuses |= CLI_ST_PENDING;
	else if (strcasecmp(val, "quotareserved") == 0)
		a->statuses |= CLI_ST_QUOTA_RESERVED;
	else if (strcasecmp(val, "admitted") == 0)
		a->statuses |= CLI_ST_ADMITTED;
	else if (strcasecmp(val, "finished") == 0)
		a->statuses |= CLI_ST_FINISHED;
	else
		return cu_error_set(err, CU_EINVAL,
		    "invalid status value (%s). Must be \"all\", "
		    "\"pending\", \"admitted\" or \"finished\"",
		    val);
	return CU_OK;
}

/* The -o formats that take a template: FORMAT=TEMPLATE. */
static const struct {
	const char *prefix;
	enum cli_output out;
	bool file;
} TEMPLATES[] = {
    {"jsonpath=", CLI_OUT_JSONPATH, false},
    {"jsonpath-file=", CLI_OUT_JSONPATH, true},
    {"go-template=", CLI_OUT_GO_TEMPLATE, false},
    {"go-template-file=", CLI_OUT_GO_TEMPLATE, true},
    /* kubectl's other names of the go-template printers */
    {"template=", CLI_OUT_GO_TEMPLATE, false},
    {"templatefile=", CLI_OUT_GO_TEMPLATE, true},
};

#define FORMATS                                                                \
	"json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, "            \
	"go-template=TEMPLATE, go-template-file=FILE"

static int set_output(struct cli_args *a, const char *val, cu_error *err)
{
	size_t i;

	if (strcmp(val, "json") == 0)
		a->output = CLI_OUT_JSON;
	else if (strcmp(val, "yaml") == 0)
		a->output = CLI_OUT_YAML;
	else if (strcmp(val, "name") == 0)
		a->output = CLI_OUT_NAME;
	else if (strcmp(val, "wide") == 0)
		a->output = CLI_OUT_WIDE;
	else {
		for (i = 0; i < sizeof(TEMPLATES) / sizeof(TEMPLATES[0]); i++) {
			size_t n = strlen(TEMPLATES[i].prefix);

			if (strncmp(val, TEMPLATES[i].prefix, n - 1) != 0 ||
			    (val[n - 1] != '=' && val[n - 1] != '\0'))
				continue;
			if (val[n - 1] != '=' || val[n] == '\0')
				return cu_error_set(err, CU_EINVAL,
				    "template format specified but no "
				    "template given: write -o %sTEMPLATE",
				    TEMPLATES[i].prefix);
			a->output = TEMPLATES[i].out;
			a->template_ = val + n;
			a->template_file = TEMPLATES[i].file;
			return CU_OK;
		}
		return cu_error_set(err, CU_EINVAL,
		    "unable to match a printer suitable for the output format "
		    "\"%s\", allowed formats are: " FORMATS,
		    val);
	}
	return CU_OK;
}

/* --active: a comma-separated list, as pflag's BoolSlice; each value
 * counts (kueuectl takes only one). */
static int set_active(
    struct cli_args *a, const char *val, unsigned *active_count, cu_error *err)
{
	const char *p = val;
	bool v;

	while (true) {
		const char *c = strchr(p, ',');
		char one[8];
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n >= sizeof(one))
			n = sizeof(one) - 1;
		memcpy(one, p, n);
		one[n] = '\0';
		if (parse_bool(one, &v) != CU_OK)
			return cu_error_set(err, CU_EINVAL,
			    "invalid argument \"%s\" for \"--active\" flag: "
			    "must be true or false",
			    val);
		a->active = v ? 1 : 0;
		(*active_count)++;
		if (c == NULL)
			return CU_OK;
		p = c + 1;
	}
}

static int set_dry_run(struct cli_args *a, const char *val, cu_error *err)
{
	if (strcmp(val, "none") == 0)
		a->dry_run = CLI_DRY_NONE;
	else if (strcmp(val, "client") == 0)
		a->dry_run = CLI_DRY_CLIENT;
	else if (strcmp(val, "server") == 0)
		a->dry_run = CLI_DRY_SERVER;
	else
		return cu_error_set(err, CU_EINVAL,
		    "invalid dry-run value (%s). Must be \"none\", "
		    "\"server\", or \"client\"",
		    val);
	return CU_OK;
}

/* One more value of a repeatable flag. */
static int repeat(
    const char **v, size_t *n, const char *flag, const char *val, cu_error *err)
{
	if (*n == CLI_MAX_REPEAT)
		return cu_error_set(err, CU_EINVAL,
		    "--%s given more than %d times: join the values with "
		    "commas",
		    flag, CLI_MAX_REPEAT);
	v[(*n)++] = val;
	return CU_OK;
}

/* Store one flag's value (NULL for a boolean flag given bare). */
static int set_flag(struct cli_args *a, enum flag_id id, const char *val,
    bool bare, unsigned *active_count, cu_error *err)
{
	bool b = true;

	if (!FLAGS[id].value && !bare && parse_bool(val, &b) != CU_OK)
		return cu_error_set(err, CU_EINVAL,
		    "invalid argument \"%s\" for \"--%s\" flag: must be "
		    "true or false",
		    val, FLAGS[id].lng);
	switch (id) {
	case F_KUBECONFIG:
		a->kubeconfig = val;
		break;
	case F_CONTEXT:
		a->context = val;
		break;
	case F_NAMESPACE:
		a->namespace_ = val;
		break;
	case F_HELP:
		if (b)
			a->verb = CLI_HELP;
		break;
	case F_ALLNS:
		a->all_namespaces = b;
		break;
	case F_CQ:
		a->clusterqueue = val;
		break;
	case F_LQ:
		a->localqueue = val;
		break;
	case F_STATUS:
		return set_status(a, val, err);
	case F_SELECTOR:
		a->selector = val;
		break;
	case F_FIELDSEL:
		a->field_selector = val;
		break;
	case F_FOR:
		a->for_object = val;
		break;
	case F_OUTPUT:
		return set_output(a, val, err);
	case F_ACTIVE:
		return set_active(a, val, active_count, err);
	case F_KEEP:
		a->keep_running = b;
		break;
	case F_DRYRUN:
		return set_dry_run(a, val, err);
	case F_IGNORE:
		a->ignore_unknown_cq = b;
		break;
	case F_LIMIT:
		return parse_count(val, "limit", &a->limit, err);
	case F_OFFSET:
		return parse_count(val, "offset", &a->offset, err);
	case F_COHORT:
		a->cohort = val;
		break;
	case F_QSTRAT:
		a->queuing_strategy = val;
		break;
	case F_NSSEL:
		a->ns_selector = val;
		break;
	case F_RECLAIM:
		a->reclaim = val;
		break;
	case F_PREEMPT:
		a->preempt_within = val;
		break;
	case F_NOMINAL:
	case F_BORROW:
	case F_LEND:
		return repeat(a->quota[id - F_NOMINAL],
		    &a->nquota[id - F_NOMINAL], FLAGS[id].lng, val, err);
	case F_NODELABELS:
		a->node_labels = val;
		break;
	case F_NODETAINTS:
		return repeat(a->taints, &a->ntaints, FLAGS[id].lng, val, err);
	case F_TOLERATIONS:
		return repeat(
		    a->tolerations, &a->ntolerations, FLAGS[id].lng, val, err);
	case F_YES:
		a->yes = b;
		break;
	case F_ALL:
		a->delete_all = b;
		break;
	case F_COUNT:
		break;
	}
	return CU_OK;
}

static int find_long(const char *name, size_t n)
{
	for (int i = 0; i < F_COUNT; i++)
		if (strlen(FLAGS[i].lng) == n &&
		    strncmp(FLAGS[i].lng, name, n) == 0)
			return i;
	return -1;
}

static int find_short(char c)
{
	for (int i = 0; i < F_COUNT; i++)
		if (FLAGS[i].shrt == c)
			return i;
	return -1;
}

/* The usage of the command named by the positional words. */
static const char *usage_of(const char *const *pos, size_t npos)
{
	const struct verb_def *v;

	if (npos > 0 && strcmp(pos[0], "help") == 0) {
		pos++;
		npos--;
	}
	v = npos > 0 ? find_verb(pos[0]) : NULL;
	return v != NULL ? v->usage : cli_usage_root;
}

static const char *const PASS_VERBS[] = {
    "get", "describe", "edit", "patch", "delete"};

/* The first two positional words, skipping the flags this program knows
 * (and their values); NULL when absent. */
static void first_words(
    int argc, const char *const *argv, const char **w0, const char **w1)
{
	*w0 = *w1 = NULL;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int id = -1;

		if (s[0] != '-' || s[1] == '\0') {
			if (*w0 == NULL)
				*w0 = s;
			else {
				*w1 = s;
				return;
			}
			continue;
		}
		if (strcmp(s, "--") == 0)
			return;
		if (s[1] == '-' && strchr(s, '=') == NULL)
			id = find_long(s + 2, strlen(s + 2));
		else if (s[1] != '-' && s[2] == '\0')
			id = find_short(s[1]);
		if (id >= 0 && FLAGS[id].value)
			i++; /* its value */
	}
}

static int pass_through(int argc, const char *const *argv, struct cli_args *a,
    bool *is, cu_error *err)
{
	const char *w0, *w1;
	enum cli_kind k;

	(void)err;
	*is = false;
	first_words(argc, argv, &w0, &w1);
	if (w0 == NULL || w1 == NULL)
		return CU_OK;
	for (size_t i = 0; i < 5; i++) {
		if (strcmp(w0, PASS_VERBS[i]) != 0)
			continue;
		k = find_kind(w1);
		if (k == CLI_KIND_NONE || k == CLI_KIND_POD)
			return CU_OK;
		if (k == CLI_KIND_WORKLOAD && strcmp(w0, "delete") == 0)
			return CU_OK; /* ours: CLI_DELETE */
		a->verb = CLI_PASSTHROUGH;
		a->kind = k;
		a->argv = argv + 1;
		a->argc = argc - 1;
		for (int j = 0; j < a->argc; j++)
			if (a->argv[j] == w1)
				a->kind_at = j;
		*is = true;
		return CU_OK;
	}
	return CU_OK;
}

/* What the scan of argv found besides the flags' values. */
struct scan {
	const char *pos[MAX_POS]; /* positional words [borrowed] */
	size_t npos;
	unsigned seen;	       /* BIT(flag) of every flag given */
	unsigned active_count; /* --active values */
	bool help;
};

/* Every flag into a, every other word into sc->pos. */
static int scan_flags(int argc, const char *const *argv, struct cli_args *a,
    struct scan *sc, cu_error *err)
{
	bool done = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (done || s[0] != '-' || s[1] == '\0') {
			if (sc->npos == MAX_POS)
				return cu_error_set(err, CU_EINVAL,
				    "too many arguments (%d)", argc - 1);
			sc->pos[sc->npos++] = argv[i];
			continue;
		}
		if (strcmp(s, "--") == 0) {
			done = true;
			continue;
		}
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			int id = find_long(name, n);
			const char *val = eq ? eq + 1 : NULL;

			if (id < 0)
				return cu_error_set(err, CU_EINVAL,
				    "unknown flag: --%.*s (kubectl cueue "
				    "COMMAND --help lists the flags)",
				    (int)n, name);
			if (FLAGS[id].value && val == NULL) {
				if (i + 1 >= argc)
					return cu_error_set(err, CU_EINVAL,
					    "flag needs an argument: --%s "
					    "(write "
					    "--%s=VALUE)",
					    FLAGS[id].lng, FLAGS[id].lng);
				val = argv[++i];
			}
			if (id == F_HELP)
				sc->help = true;
			sc->seen |= BIT(id);
			rc = set_flag(a, (enum flag_id)id, val, val == NULL,
			    &sc->active_count, err);
			if (rc != CU_OK)
				return rc;
			continue;
		}
		/* shorthands: -n NS, -nNS, -n=NS, -Ai */
		for (const char *p = s + 1; *p != '\0'; p++) {
			int id = find_short(*p);
			const char *val = NULL;

			if (id < 0)
				return cu_error_set(err, CU_EINVAL,
				    "unknown shorthand flag: '%c' in %s "
				    "(kubectl "
				    "cueue COMMAND --help lists the flags)",
				    *p, s);
			sc->seen |= BIT(id);
			if (id == F_HELP)
				sc->help = true;
			if (!FLAGS[id].value) {
				rc = set_flag(a, (enum flag_id)id, NULL, true,
				    &sc->active_count, err);
				if (rc != CU_OK)
					return rc;
				continue;
			}
			if (p[1] != '\0')
				val = p[1] == '=' ? p + 2 : p + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return cu_error_set(err, CU_EINVAL,
				    "flag needs an argument: '%c' in -%c", *p,
				    *p);
			rc = set_flag(a, (enum flag_id)id, val, false,
			    &sc->active_count, err);
			if (rc != CU_OK)
				return rc;
			break;
		}
	}
	return CU_OK;
}

/* The verb's words: resource type, NAME or CLUSTER_QUEUE. */
static int take_words(struct cli_args *a, const struct scan *sc, cu_error *err)
{
	switch (a->verb) {
	case CLI_LIST:
	case CLI_STOP:
	case CLI_RESUME:
	case CLI_CREATE:
	case CLI_DELETE:
		if (sc->npos < 2)
			return cu_error_set(err, CU_EINVAL,
			    "%s: missing resource type (one of %s)", sc->pos[0],
			    a->verb == CLI_LIST ? "workload, clusterqueue, "
						  "localqueue, resourceflavor, "
						  "pods"
			    : a->verb == CLI_CREATE
				? "localqueue, clusterqueue, resourceflavor"
			    : a->verb == CLI_DELETE
				? "workload"
				: "workload, clusterqueue, localqueue");
		a->kind = find_kind(sc->pos[1]);
		if (a->kind == CLI_KIND_NONE ||
		    (a->verb != CLI_LIST && a->kind == CLI_KIND_POD) ||
		    ((a->verb == CLI_STOP || a->verb == CLI_RESUME) &&
			a->kind == CLI_KIND_RESOURCEFLAVOR) ||
		    (a->verb == CLI_CREATE && a->kind == CLI_KIND_WORKLOAD) ||
		    (a->verb == CLI_DELETE && a->kind != CLI_KIND_WORKLOAD))
			return cu_error_set(err, CU_EINVAL,
			    "unknown resource type \"%s\" for \"%s\" (see "
			    "kubectl cueue %s --help)",
			    sc->pos[1], sc->pos[0], sc->pos[0]);
		if (a->verb == CLI_LIST) {
			if (sc->npos > 2)
				return cu_error_set(err, CU_EINVAL,
				    "list %s: unexpected argument \"%s\"",
				    kind_word(a->kind), sc->pos[2]);
			break;
		}
		if (a->verb == CLI_DELETE) {
			for (size_t i = 2; i < sc->npos; i++)
				a->names[a->nnames++] = sc->pos[i];
			break;
		}
		if (sc->npos < 3)
			return cu_error_set(err, CU_EINVAL,
			    "%s %s: missing NAME (write kubectl cueue %s %s "
			    "NAME)",
			    sc->pos[0], kind_word(a->kind), sc->pos[0],
			    kind_word(a->kind));
		if (sc->npos > 3)
			return cu_error_set(err, CU_EINVAL,
			    "%s %s: accepts 1 NAME, received %zu", sc->pos[0],
			    kind_word(a->kind), sc->npos - 2);
		a->name = sc->pos[2];
		if (a->name[0] == '\0')
			return cu_error_set(err, CU_EINVAL,
			    "%s %s: NAME must not be empty", sc->pos[0],
			    kind_word(a->kind));
		break;
	case CLI_COMPLETION:
		if (sc->npos != 2 || (strcmp(sc->pos[1], "bash") != 0 &&
					 strcmp(sc->pos[1], "zsh") != 0))
			return cu_error_set(err, CU_EINVAL,
			    "completion: name the shell: kubectl cueue "
			    "completion bash (or zsh)");
		a->shell = sc->pos[1];
		break;
	case CLI_PENDING:
		if (sc->npos < 2)
			return cu_error_set(err, CU_EINVAL,
			    "pending: missing CLUSTER_QUEUE "
			    "(write kubectl cueue pending "
			    "CLUSTER_QUEUE)");
		if (sc->npos > 2)
			return cu_error_set(err, CU_EINVAL,
			    "pending: accepts 1 CLUSTER_QUEUE, received %zu",
			    sc->npos - 1);
		a->name = sc->pos[1];
		if (a->name[0] == '\0')
			return cu_error_set(err, CU_EINVAL,
			    "pending: CLUSTER_QUEUE must not be empty");
		break;
	case CLI_VERSION:
		if (sc->npos > 1)
			return cu_error_set(err, CU_EINVAL,
			    "version: unexpected argument \"%s\"", sc->pos[1]);
		break;
	case CLI_HELP:
	case CLI_PASSTHROUGH:
		break;
	}
	return CU_OK;
}

/* Flags the command does not take, and the flags' combinations. */
static int check_flags(const struct cli_args *a, const struct scan *sc,
    const char *verb, cu_error *err)
{
	/* Every flag given must be one this command takes. */
	{
		unsigned bad = sc->seen & ~allowed_flags(a->verb, a->kind);

		for (int id = 0; id < F_COUNT; id++)
			if (bad & BIT(id))
				return cu_error_set(err, CU_EINVAL,
				    "unknown flag: --%s (not a flag of "
				    "\"%s%s%s\")",
				    FLAGS[id].lng, verb,
				    a->kind != CLI_KIND_NONE ? " " : "",
				    kind_word(a->kind));
	}
	if (sc->active_count > 1)
		return cu_error_set(
		    err, CU_EINVAL, "only one active flag can be provided");
	if (a->output == CLI_OUT_WIDE && a->kind != CLI_KIND_POD)
		return cu_error_set(err, CU_EINVAL,
		    "unable to match a printer suitable for the output "
		    "format \"wide\", allowed formats are: " FORMATS);
	if (a->verb == CLI_PENDING && a->output == CLI_OUT_NAME)
		return cu_error_set(err, CU_EINVAL,
		    "unable to match a printer suitable for the output "
		    "format \"name\", allowed formats are: json, yaml, "
		    "jsonpath=TEMPLATE, jsonpath-file=FILE");
	if (a->verb == CLI_PENDING && a->output == CLI_OUT_GO_TEMPLATE)
		return cu_error_set(err, CU_EINVAL,
		    "-o go-template is not available for pending (kubectl, "
		    "which runs the templates, cannot read a "
		    "PendingWorkloadsSummary): use -o jsonpath=TEMPLATE or "
		    "-o json");
	if (a->verb == CLI_CREATE && a->kind == CLI_KIND_LOCALQUEUE &&
	    (a->clusterqueue == NULL || a->clusterqueue[0] == '\0'))
		return cu_error_set(err, CU_EINVAL,
		    "required flag(s) \"clusterqueue\" not set: write -c "
		    "CLUSTER_QUEUE");
	if (a->verb == CLI_DELETE && !a->delete_all && a->nnames == 0)
		return cu_error_set(err, CU_EINVAL,
		    "delete workload: requires at least 1 NAME, or --all");
	if (a->verb == CLI_DELETE && a->delete_all && a->nnames > 0)
		return cu_error_set(err, CU_EINVAL,
		    "delete workload: NAME cannot be given with --all");
	if (a->verb == CLI_DELETE && a->all_namespaces && !a->delete_all)
		return cu_error_set(err, CU_EINVAL,
		    "delete workload: a resource cannot be retrieved by name "
		    "across all namespaces: drop -A, or use --all -A");
	if (a->verb == CLI_LIST && a->kind == CLI_KIND_POD &&
	    (a->for_object == NULL || a->for_object[0] == '\0'))
		return cu_error_set(
		    err, CU_EINVAL, "required flag(s) \"for\" not set");
	if (a->for_object != NULL) {
		const char *slash = strchr(a->for_object, '/');

		if (slash == NULL || slash == a->for_object ||
		    slash[1] == '\0' || strchr(slash + 1, '/') != NULL)
			return cu_error_set(err, CU_EINVAL,
			    "invalid value '%s' used in --for flag; value "
			    "must be in the format TYPE[.API-GROUP]/NAME",
			    a->for_object);
	}
	if (a->namespace_ != NULL && a->namespace_[0] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "--namespace must not be empty");
	return CU_OK;
}

int cli_parse(
    int argc, const char *const *argv, struct cli_args *a, cu_error *err)
{
	struct scan sc = {.npos = 0};
	const struct verb_def *vd;
	const char *w0, *w1;
	bool pass;
	int rc;

	memset(a, 0, sizeof(*a));
	a->active = -1;
	a->limit = 1000;
	first_words(argc, argv, &w0, &w1);
	if (w0 != NULL && strcmp(w0, "__complete") == 0) {
		/* the shell's words, the last one partial (complete.c) */
		a->verb = CLI_COMPLETION;
		a->shell = "__complete";
		for (int i = 1; i < argc && a->nnames < CLI_MAX_REPEAT; i++) {
			if (argv[i] == w0)
				continue;
			/* a value being completed (the last word) stays */
			if (i + 2 < argc &&
			    strcmp(argv[i], "--kubeconfig") == 0)
				a->kubeconfig = argv[i + 1];
			else if (i + 2 < argc &&
				 strcmp(argv[i], "--context") == 0)
				a->context = argv[i + 1];
			else if (i + 2 < argc &&
				 (strcmp(argv[i], "-n") == 0 ||
				     strcmp(argv[i], "--namespace") == 0))
				a->namespace_ = argv[i + 1];
			else {
				a->names[a->nnames++] = argv[i];
				continue;
			}
			i++;
		}
		return CU_OK;
	}
	rc = pass_through(argc, argv, a, &pass, err);
	if (rc != CU_OK || pass)
		return rc;
	rc = scan_flags(argc, argv, a, &sc, err);
	if (rc != CU_OK)
		return rc;
	if (sc.help || sc.npos == 0 || strcmp(sc.pos[0], "help") == 0) {
		a->verb = CLI_HELP;
		a->usage = usage_of(sc.pos, sc.npos);
		return CU_OK;
	}
	vd = find_verb(sc.pos[0]);
	if (vd == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "unknown command \"%s\" for \"kubectl cueue\" (kubectl "
		    "cueue "
		    "--help lists the commands)",
		    sc.pos[0]);
	a->verb = vd->verb;
	rc = take_words(a, &sc, err);
	if (rc != CU_OK)
		return rc;
	return check_flags(a, &sc, vd->name, err);
}
