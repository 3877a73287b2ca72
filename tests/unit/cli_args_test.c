/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/cli_args_test.c - kubectl-cueue's command line
 * (cli_parse): kueuectl's verbs, resource types and aliases, pflag's
 * flag forms (--f v, --f=v, -f v, -fv, -f=v, bundled booleans, --),
 * each command taking only its own flags, help, and every refusal as
 * one line naming what is wrong.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cli/cli.h"

#define ARGV(...) ((const char *[]){"kubectl-cueue", __VA_ARGS__, NULL})
#define ARGC(...)                                                              \
	((int)(sizeof((const char *[]){"x", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, e, ...) cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), a, e)

Test(cli_args, list_workloads_with_every_filter)
{
	struct cli_args a;
	cu_error e;

	cr_assert_eq(PARSE(&a, &e, "list", "workloads", "-A", "-c", "cq",
			 "--localqueue=lq", "--status", "pending", "--status",
			 "Admitted", "-l", "a=b", "--field-selector",
			 "metadata.name=x", "--for", "job/j", "-o", "yaml"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(a.verb, CLI_LIST);
	cr_assert_eq(a.kind, CLI_KIND_WORKLOAD);
	cr_assert(a.all_namespaces);
	cr_assert_str_eq(a.clusterqueue, "cq");
	cr_assert_str_eq(a.localqueue, "lq");
	cr_assert_eq(a.statuses, CLI_ST_PENDING | CLI_ST_ADMITTED);
	cr_assert_str_eq(a.selector, "a=b");
	cr_assert_str_eq(a.field_selector, "metadata.name=x");
	cr_assert_str_eq(a.for_object, "job/j");
	cr_assert_eq(a.output, CLI_OUT_YAML);
	cr_assert_null(a.name);
}

Test(cli_args, kueuectl_aliases)
{
	static const struct {
		const char *word;
		enum cli_kind kind;
	} t[] = {{"workload", CLI_KIND_WORKLOAD}, {"kwl", CLI_KIND_WORKLOAD},
	    {"kueueworkloads", CLI_KIND_WORKLOAD},
	    {"clusterqueues", CLI_KIND_CLUSTERQUEUE},
	    {"cq", CLI_KIND_CLUSTERQUEUE}, {"lq", CLI_KIND_LOCALQUEUE},
	    {"localqueue", CLI_KIND_LOCALQUEUE}, {"po", CLI_KIND_POD},
	    {"pods", CLI_KIND_POD}, {"rf", CLI_KIND_RESOURCEFLAVOR},
	    {"resourceflavors", CLI_KIND_RESOURCEFLAVOR}};
	struct cli_args a;
	cu_error e;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *argv[] = {
		    "k", "list", t[i].word, "--for", "job/x", NULL};
		int argc = t[i].kind == CLI_KIND_POD ? 5 : 3;

		cr_assert_eq(cli_parse(argc, argv, &a, &e), CU_OK, "%s: %s",
		    t[i].word, e.msg);
		cr_assert_eq(a.kind, t[i].kind, "%s", t[i].word);
	}
}

Test(cli_args, flag_forms_and_global_flags_anywhere)
{
	struct cli_args a;
	cu_error e;

	cr_assert_eq(PARSE(&a, &e, "--kubeconfig", "/k", "stop", "-nteam", "lq",
			 "--context=c1", "q1", "--keep-already-running",
			 "--dry-run=server"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(a.verb, CLI_STOP);
	cr_assert_eq(a.kind, CLI_KIND_LOCALQUEUE);
	cr_assert_str_eq(a.name, "q1");
	cr_assert_str_eq(a.kubeconfig, "/k");
	cr_assert_str_eq(a.context, "c1");
	cr_assert_str_eq(a.namespace_, "team");
	cr_assert(a.keep_running);
	cr_assert_eq(a.dry_run, CLI_DRY_SERVER);

	cr_assert_eq(PARSE(&a, &e, "list", "lq", "-n=ns", "-Ao", "json"), CU_OK,
	    "%s", e.msg);
	cr_assert_str_eq(a.namespace_, "ns");
	cr_assert(a.all_namespaces);
	cr_assert_eq(a.output, CLI_OUT_JSON);

	/* after --, a word starting with '-' is a NAME */
	cr_assert_eq(PARSE(&a, &e, "stop", "workload", "--", "-odd"), CU_OK,
	    "%s", e.msg);
	cr_assert_str_eq(a.name, "-odd");

	/* a boolean flag takes =false */
	cr_assert_eq(
	    PARSE(&a, &e, "list", "workload", "--all-namespaces=false"), CU_OK,
	    "%s", e.msg);
	cr_assert(!a.all_namespaces);
}

Test(cli_args, other_verbs)
{
	struct cli_args a;
	cu_error e;

	cr_assert_eq(
	    PARSE(&a, &e, "create", "localqueue", "q", "-c", "cq", "-i"), CU_OK,
	    "%s", e.msg);
	cr_assert_eq(a.verb, CLI_CREATE);
	cr_assert_str_eq(a.name, "q");
	cr_assert_str_eq(a.clusterqueue, "cq");
	cr_assert(a.ignore_unknown_cq);

	cr_assert_eq(PARSE(&a, &e, "pending", "cq", "--limit", "5",
			 "--offset=2", "-o", "json"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(a.verb, CLI_PENDING);
	cr_assert_str_eq(a.name, "cq");
	cr_assert_eq(a.limit, 5);
	cr_assert_eq(a.offset, 2);

	cr_assert_eq(PARSE(&a, &e, "pending", "cq"), CU_OK);
	cr_assert_eq(a.limit, 1000, "default limit");
	cr_assert_eq(a.offset, 0);

	cr_assert_eq(PARSE(&a, &e, "resume", "cq", "x"), CU_OK);
	cr_assert_eq(a.verb, CLI_RESUME);
	cr_assert_eq(a.kind, CLI_KIND_CLUSTERQUEUE);

	cr_assert_eq(PARSE(&a, &e, "version"), CU_OK);
	cr_assert_eq(a.verb, CLI_VERSION);

	cr_assert_eq(PARSE(&a, &e, "list", "cq", "--active", "false"), CU_OK);
	cr_assert_eq(a.active, 0);
	cr_assert_eq(PARSE(&a, &e, "list", "cq"), CU_OK);
	cr_assert_eq(a.active, -1);
}

Test(cli_args, kueuectl_pass_through)
{
	struct cli_args a;
	cu_error e;

	/* a.argv points into argv: it must outlive the checks */
	const char *argv[] = {"kubectl-cueue", "-n", "team", "get", "cq", "x",
	    "-o", "custom-columns=N:.metadata.name", "--watch", NULL};

	cr_assert_eq(cli_parse(9, argv, &a, &e), CU_OK, "%s", e.msg);
	cr_assert_eq(a.verb, CLI_PASSTHROUGH);
	cr_assert_eq(a.kind, CLI_KIND_CLUSTERQUEUE);
	cr_assert_eq(a.argc, 8);
	cr_assert_str_eq(a.argv[0], "-n");
	cr_assert_str_eq(a.argv[7], "--watch");
	cr_assert_eq(a.kind_at, 3);
	cr_assert_eq(PARSE(&a, &e, "describe", "kwl", "w"), CU_OK);
	cr_assert_eq(a.verb, CLI_PASSTHROUGH);
	cr_assert_eq(PARSE(&a, &e, "delete", "rf", "f"), CU_OK);
	cr_assert_eq(a.verb, CLI_PASSTHROUGH);
	/* not a pass-through: pods, unknown kinds, delete workload */
	cr_assert_eq(PARSE(&a, &e, "get", "pods"), CU_EINVAL);
	cr_assert_eq(
	    PARSE(&a, &e, "delete", "workload", "w", "v", "-y"), CU_OK);
	cr_assert_eq(a.verb, CLI_DELETE);
	cr_assert_eq(a.nnames, 2);
	cr_assert_str_eq(a.names[1], "v");
	cr_assert(a.yes);
}

Test(cli_args, help)
{
	struct cli_args a;
	cu_error e;
	const char *none[] = {"kubectl-cueue", NULL};

	cr_assert_eq(cli_parse(1, none, &a, &e), CU_OK);
	cr_assert_eq(a.verb, CLI_HELP);
	cr_assert_str_eq(a.usage, cli_usage());

	cr_assert_eq(PARSE(&a, &e, "pending", "-h"), CU_OK);
	cr_assert_eq(a.verb, CLI_HELP);
	cr_assert_not_null(strstr(a.usage, "computed locally"));

	cr_assert_eq(PARSE(&a, &e, "help", "stop"), CU_OK);
	cr_assert_eq(a.verb, CLI_HELP);
	cr_assert_not_null(strstr(a.usage, "--keep-already-running"));

	/* --help wins over what would be an error */
	cr_assert_eq(PARSE(&a, &e, "list", "widgets", "--help"), CU_OK);
	cr_assert_eq(a.verb, CLI_HELP);
}

/* Every refusal: CU_EINVAL and one line containing `want`. */
static void refused(int argc, const char **argv, const char *want)
{
	struct cli_args a;
	cu_error e;

	cr_assert_eq(cli_parse(argc, argv, &a, &e), CU_EINVAL, "%s %s: %s",
	    argv[1], argc > 2 ? argv[2] : "", want);
	cr_assert_null(strchr(e.msg, '\n'), "%s", e.msg);
	cr_assert_not_null(
	    strstr(e.msg, want), "got \"%s\", want \"%s\"", e.msg, want);
}

#define REFUSED(want, ...) refused(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), want)

Test(cli_args, refusals_name_what_is_wrong)
{
	REFUSED("unknown command \"frob\"", "frob");
	REFUSED("missing resource type", "list");
	REFUSED("unknown resource type \"widgets\" for \"list\"", "list",
	    "widgets");
	REFUSED(
	    "unknown resource type \"pods\" for \"stop\"", "stop", "pods", "p");
	REFUSED("unknown flag: --clusterqueue (not a flag of \"create "
		"clusterqueue\")",
	    "create", "clusterqueue", "x", "-c", "y");
	REFUSED("unknown resource type \"workload\" for \"create\"", "create",
	    "workload", "x");
	REFUSED("unexpected argument \"x\"", "list", "cq", "x");
	REFUSED("unknown flag: --bogus", "list", "workload", "--bogus");
	REFUSED("unknown shorthand flag: 'Z' in -Z", "list", "workload", "-Z");
	REFUSED("unknown flag: --all-namespaces", "list", "cq", "-A");
	REFUSED("unknown flag: --keep-already-running", "stop", "workload", "w",
	    "--keep-already-running");
	REFUSED("unknown flag: --status", "list", "lq", "--status", "all");
	REFUSED("unknown flag: --limit", "list", "workload", "--limit", "3");
	REFUSED("unknown flag: --all-namespaces", "list", "rf", "-A");
	REFUSED("unknown resource type \"rf\" for \"stop\"", "stop", "rf", "x");
	REFUSED(
	    "flag needs an argument: --status", "list", "workload", "--status");
	REFUSED("flag needs an argument: 'n' in -n", "list", "workload", "-n");
	REFUSED("invalid status value (lost)", "list", "workload", "--status",
	    "lost");
	REFUSED("output format \"xml\"", "list", "workload", "-o", "xml");
	REFUSED("output format \"wide\"", "list", "workload", "-o", "wide");
	REFUSED("output format \"name\"", "pending", "cq", "-o", "name");
	REFUSED("\"--active\"", "list", "cq", "--active", "maybe");
	REFUSED("only one active flag", "list", "cq", "--active=true,false");
	REFUSED(
	    "\"--all-namespaces\"", "list", "workload", "--all-namespaces=yes");
	REFUSED("required flag(s) \"for\" not set", "list", "pods");
	REFUSED("TYPE[.API-GROUP]/NAME", "list", "pods", "--for", "job");
	REFUSED("TYPE[.API-GROUP]/NAME", "list", "workload", "--for", "a/b/c");
	REFUSED("missing NAME", "stop", "clusterqueue");
	REFUSED("accepts 1 NAME, received 2", "resume", "lq", "a", "b");
	REFUSED("NAME must not be empty", "stop", "workload", "");
	REFUSED("invalid dry-run value (maybe)", "stop", "cq", "x", "--dry-run",
	    "maybe");
	REFUSED(
	    "required flag(s) \"clusterqueue\" not set", "create", "lq", "x");
	REFUSED("missing CLUSTER_QUEUE", "pending");
	REFUSED("accepts 1 CLUSTER_QUEUE", "pending", "a", "b");
	REFUSED("\"--limit\"", "pending", "cq", "--limit", "-1");
	REFUSED("\"--offset\"", "pending", "cq", "--offset", "x");
	REFUSED("unexpected argument \"extra\"", "version", "extra");
	REFUSED("--namespace must not be empty", "list", "workload", "-n", "");
	REFUSED("unknown flag: --output", "version", "-o", "json");
}

Test(cli_args, output_templates)
{
	struct cli_args a;
	cu_error e;

	cr_assert_eq(PARSE(&a, &e, "list", "cq", "-o", "jsonpath={.items}"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(a.output, CLI_OUT_JSONPATH);
	cr_assert_str_eq(a.template_, "{.items}");
	cr_assert_not(a.template_file);
	cr_assert_eq(PARSE(&a, &e, "list", "cq", "-o=jsonpath-file=/t"), CU_OK,
	    "%s", e.msg);
	cr_assert(a.template_file);
	cr_assert_str_eq(a.template_, "/t");
	cr_assert_eq(PARSE(&a, &e, "list", "cq", "--output", "template={{.}}"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(a.output, CLI_OUT_GO_TEMPLATE);
	cr_assert_eq(PARSE(&a, &e, "list", "cq", "-o", "go-template-file=f"),
	    CU_OK, "%s", e.msg);
	cr_assert(a.template_file && a.output == CLI_OUT_GO_TEMPLATE);
	cr_assert_eq(
	    PARSE(&a, &e, "list", "cq", "-o", "go-template="), CU_EINVAL);
	cr_assert(strstr(e.msg, "no template given") != NULL, "%s", e.msg);
	cr_assert_eq(PARSE(&a, &e, "list", "cq", "-o", "xml"), CU_EINVAL);
	cr_assert(strstr(e.msg, "jsonpath=TEMPLATE") != NULL, "%s", e.msg);
}
