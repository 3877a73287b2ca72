/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/complete.c - shell completion of kubectl-cueue: `completion bash`
 * and `completion zsh` print a script that asks the program itself,
 * `kubectl-cueue __complete WORD... PARTIAL`, which answers as cobra's
 * __complete does (one candidate a line, then ":4", no file names), so
 * that kubectl 1.26 and later complete `kubectl cueue ...` through an
 * executable kubectl_complete-cueue running it. Candidates: the
 * commands, the resource types of each, its flags, and the names of the
 * ClusterQueues, LocalQueues, ResourceFlavors and Workloads the API
 * server has. See cli/cli_int.h.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "cli/cli.h"
#include "cli/cli_int.h"

static const char BASH[] =
    "# bash completion of kubectl-cueue (and `kubectl cueue` through "
    "kubectl_complete-cueue)\n"
    "_kubectl_cueue() {\n"
    "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" IFS=$'\\n'\n"
    "    local out\n"
    "    out=$(kubectl-cueue __complete \"${COMP_WORDS[@]:1:COMP_CWORD}\" "
    "2>/dev/null) || return\n"
    "    COMPREPLY=($(compgen -W \"$(printf '%s\\n' \"$out\" | grep -v "
    "'^:')\" -- \"$cur\"))\n"
    "}\n"
    "complete -F _kubectl_cueue kubectl-cueue\n";

static const char ZSH[] =
    "#compdef kubectl-cueue\n"
    "# zsh completion of kubectl-cueue\n"
    "_kubectl_cueue() {\n"
    "    local -a c\n"
    "    c=(${(f)\"$(kubectl-cueue __complete \"${(@)words[2,CURRENT]}\" "
    "2>/dev/null | grep -v '^:')\"})\n"
    "    compadd -- $c\n"
    "}\n"
    "compdef _kubectl_cueue kubectl-cueue\n";

static const char *const VERBS[] = {"list", "stop", "resume", "create",
    "delete", "pending", "version", "completion", "get", "describe", "edit",
    "patch", NULL};

static const char *const *kinds_of(const char *verb)
{
	static const char *const list[] = {"workload", "clusterqueue",
	    "localqueue", "resourceflavor", "pods", NULL};
	static const char *const queues[] = {
	    "workload", "clusterqueue", "localqueue", NULL};
	static const char *const create[] = {
	    "localqueue", "clusterqueue", "resourceflavor", NULL};
	static const char *const del[] = {
	    "workload", "clusterqueue", "localqueue", "resourceflavor", NULL};
	static const char *const shells[] = {"bash", "zsh", NULL};

	if (strcmp(verb, "list") == 0)
		return list;
	if (strcmp(verb, "stop") == 0 || strcmp(verb, "resume") == 0)
		return queues;
	if (strcmp(verb, "create") == 0)
		return create;
	if (strcmp(verb, "completion") == 0)
		return shells;
	if (strcmp(verb, "delete") == 0 || strcmp(verb, "get") == 0 ||
	    strcmp(verb, "describe") == 0 || strcmp(verb, "edit") == 0 ||
	    strcmp(verb, "patch") == 0)
		return del;
	return NULL;
}

static void emit(struct ctx *x, const char *const *v, const char *prefix)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		if (strncmp(v[i], prefix, strlen(prefix)) == 0)
			fprintf(x->out, "%s\n", v[i]);
}

/* Names of the objects of kind on the server. */
static void names(struct ctx *x, const char *kind, const char *prefix)
{
	static const struct api_resource ns_res = {
	    "", "v1", "namespaces", false};
	const struct api_resource *res =
	    strncmp(kind, "clusterqueue", 12) == 0 || strcmp(kind, "cq") == 0
		? &cli_res_cq
	    : strncmp(kind, "localqueue", 10) == 0 || strcmp(kind, "lq") == 0
		? &cli_res_lq
	    : strncmp(kind, "resourceflavor", 14) == 0 ||
		    strcmp(kind, "rf") == 0
		? &cli_res_rf
	    : strncmp(kind, "workload", 8) == 0 || strcmp(kind, "kwl") == 0
		? &cli_res_wl
	    : strcmp(kind, "namespace") == 0 ? &ns_res
					     : NULL;
	json_t *list = NULL, *it;
	cu_error ignore;
	size_t i;

	if (res == NULL || x->c == NULL ||
	    cli_list_all(x, res, res->namespaced ? x->ns : NULL, NULL, NULL,
		&list, &ignore) != CU_OK)
		return;
	json_array_foreach(json_object_get(list, "items"), i, it)
	{
		const char *n =
		    api_json_str(json_object_get(it, "metadata"), "name");

		if (n != NULL && strncmp(n, prefix, strlen(prefix)) == 0)
			fprintf(x->out, "%s\n", n);
	}
	json_decref(list);
}

static const char *const FLAGS[] = {"--kubeconfig", "--context", "--namespace",
    "--help", "--output", "--all-namespaces", "--clusterqueue", "--localqueue",
    "--status", "--selector", "--field-selector", "--for", "--active",
    "--keep-already-running", "--dry-run", "--ignore-unknown-cq", "--limit",
    "--offset", "--cohort", "--queuing-strategy", "--namespace-selector",
    "--reclaim-within-cohort", "--preemption-within-cluster-queue",
    "--nominal-quota", "--borrowing-limit", "--lending-limit", "--node-labels",
    "--node-taints", "--tolerations", "--yes", "--all", NULL};

/* Whether flag word f (no inline "=") is followed by its value. */
static bool takes_value(const char *f)
{
	static const char *const bools[] = {"--help", "--all-namespaces",
	    "--keep-already-running", "--ignore-unknown-cq", "--yes", "--all",
	    NULL};

	if (strchr(f, '=') != NULL)
		return false;
	if (f[1] != '-')
		return f[2] == '\0' && strchr("nclqo", f[1]) != NULL;
	for (size_t i = 0; bools[i] != NULL; i++)
		if (strcmp(f, bools[i]) == 0)
			return false;
	return true;
}

/* The values of flag f that begin with cur. */
static void flag_values(struct ctx *x, const char *f, const char *cur)
{
	static const char *const status[] = {
	    "all", "pending", "quotareserved", "admitted", "finished", NULL};
	static const char *const out[] = {"json", "yaml", "name", "wide",
	    "jsonpath=", "jsonpath-file=", "go-template=", "go-template-file=",
	    NULL};
	static const char *const dry[] = {"none", "client", "server", NULL};
	static const char *const strat[] = {
	    "StrictFIFO", "BestEffortFIFO", NULL};
	static const char *const reclaim[] = {
	    "Never", "LowerPriority", "Any", NULL};
	static const char *const within[] = {
	    "Never", "LowerPriority", "LowerOrNewerEqualPriority", NULL};
	static const char *const tf[] = {"true", "false", NULL};

	if (strcmp(f, "-c") == 0 || strcmp(f, "--clusterqueue") == 0)
		names(x, "clusterqueue", cur);
	else if (strcmp(f, "-q") == 0 || strcmp(f, "--localqueue") == 0)
		names(x, "localqueue", cur);
	else if (strcmp(f, "-n") == 0 || strcmp(f, "--namespace") == 0)
		names(x, "namespace", cur);
	else if (strcmp(f, "--status") == 0)
		emit(x, status, cur);
	else if (strcmp(f, "-o") == 0 || strcmp(f, "--output") == 0)
		emit(x, out, cur);
	else if (strcmp(f, "--dry-run") == 0)
		emit(x, dry, cur);
	else if (strcmp(f, "--queuing-strategy") == 0)
		emit(x, strat, cur);
	else if (strcmp(f, "--reclaim-within-cohort") == 0)
		emit(x, reclaim, cur);
	else if (strcmp(f, "--preemption-within-cluster-queue") == 0)
		emit(x, within, cur);
	else if (strcmp(f, "--active") == 0)
		emit(x, tf, cur);
}

/* `__complete WORD... PARTIAL`: the words are a->names (cli_parse keeps
 * them as given, but for the connection flags and their values). */
static void complete_words(struct ctx *x)
{
	const char *w[CLI_MAX_REPEAT], *cur = "";
	size_t n = 0, i, last = x->a->nnames;

	for (i = 0; i + 1 < last; i++) {
		const char *s = x->a->names[i];

		if (s[0] != '-' || s[1] == '\0') {
			w[n++] = s;
			continue;
		}
		if (!takes_value(s))
			continue;
		if (i + 2 == last) {
			/* completing this flag's value */
			flag_values(x, s, x->a->names[last - 1]);
			fputs(":4\n", x->out);
			return;
		}
		i++; /* its value */
	}
	if (last > 0)
		cur = x->a->names[last - 1];
	if (cur[0] == '-')
		emit(x, FLAGS, cur);
	else if (n == 0)
		emit(x, VERBS, cur);
	else if (n == 1 && strcmp(w[0], "pending") == 0)
		names(x, "clusterqueue", cur);
	else if (n == 1)
		emit(x, kinds_of(w[0]), cur);
	else if (n >= 2 && strcmp(w[0], "list") != 0 &&
		 strcmp(w[0], "create") != 0)
		names(x, w[1], cur);
	fputs(":4\n", x->out);
}

int cli_completion(struct ctx *x, cu_error *err)
{
	(void)err;
	if (strcmp(x->a->shell, "bash") == 0)
		fputs(BASH, x->out);
	else if (strcmp(x->a->shell, "zsh") == 0)
		fputs(ZSH, x->out);
	else
		complete_words(x);
	return CU_OK;
}
