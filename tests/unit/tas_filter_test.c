/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_filter_test.c - which nodes a podSet may use in a
 * topology placement, table-driven: tolerations against NoSchedule and
 * NoExecute taints (the pod template's and the flavor's), nodeSelector
 * and required node affinity (In, NotIn, Exists, DoesNotExist, Gt, Lt,
 * matchFields) as parsed from a PodSpec; then placements that skip
 * tainted or unselected nodes, with hostname and rack leaves, and the
 * tree's bookkeeping when a node's taints, labels or leaf change.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tas/tas.h"
#include "tests/unit/fixtures.h"

#define RACK "cloud.provider.com/topology-rack"

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);

	cr_assert_not_null(j, "%s: %s", s, je.text);
	return j;
}

/* ---- the filter alone ---------------------------------------------------- */

struct match_case {
	const char *name;
	const char *spec;   /* PodSpec fields */
	const char *flavor; /* flavor tolerations array, or NULL */
	const char *labels; /* node labels object */
	const char *taints; /* node taints array */
	bool want;
};

static const struct match_case match_cases[] = {
    {"no filter, no taint", "{}", NULL, "{}", "[]", true},
    {"no filter, NoSchedule", "{}", NULL, "{}",
	"[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]", false},
    {"no filter, NoExecute", "{}", NULL, "{}",
	"[{\"key\":\"k\",\"effect\":\"NoExecute\"}]", false},
    {"no filter, PreferNoSchedule ignored", "{}", NULL, "{}",
	"[{\"key\":\"k\",\"effect\":\"PreferNoSchedule\"}]", true},
    {"Equal tolerates same key value effect",
	"{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\","
	"\"value\":\"v\",\"effect\":\"NoSchedule\"}]}",
	NULL, "{}",
	"[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]", true},
    {"Equal is the default operator",
	"{\"tolerations\":[{\"key\":\"k\",\"value\":\"v\"}]}", NULL, "{}",
	"[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]", true},
    {"Equal with another value",
	"{\"tolerations\":[{\"key\":\"k\",\"value\":\"w\"}]}", NULL, "{}",
	"[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]", false},
    {"Equal without value vs taint without value",
	"{\"tolerations\":[{\"key\":\"k\"}]}", NULL, "{}",
	"[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", true},
    {"Exists ignores the value",
	"{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}", NULL,
	"{}", "[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoExecute\"}]",
	true},
    {"unknown operator tolerates nothing",
	"{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Like\"}]}", NULL, "{}",
	"[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", false},
    {"other key", "{\"tolerations\":[{\"key\":\"x\",\"operator\":\"Exists\"}]}",
	NULL, "{}", "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", false},
    {"other effect",
	"{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\","
	"\"effect\":\"NoExecute\"}]}",
	NULL, "{}", "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", false},
    {"empty key Exists tolerates all",
	"{\"tolerations\":[{\"operator\":\"Exists\"}]}", NULL, "{}",
	"[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
	"{\"key\":\"b\",\"effect\":\"NoExecute\"}]",
	true},
    {"every taint must be tolerated",
	"{\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}", NULL,
	"{}",
	"[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
	"{\"key\":\"b\",\"effect\":\"NoSchedule\"}]",
	false},
    {"flavor toleration counts", "{}",
	"[{\"key\":\"k\",\"operator\":\"Exists\"}]", "{}",
	"[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", true},
    {"pod and flavor tolerations together",
	"{\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}",
	"[{\"key\":\"b\",\"operator\":\"Exists\"}]", "{}",
	"[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
	"{\"key\":\"b\",\"effect\":\"NoExecute\"}]",
	true},
    {"nodeSelector matches", "{\"nodeSelector\":{\"gpu\":\"a100\"}}", NULL,
	"{\"gpu\":\"a100\",\"x\":\"y\"}", "[]", true},
    {"nodeSelector other value", "{\"nodeSelector\":{\"gpu\":\"a100\"}}", NULL,
	"{\"gpu\":\"h100\"}", "[]", false},
    {"nodeSelector missing label", "{\"nodeSelector\":{\"gpu\":\"a100\"}}",
	NULL, "{}", "[]", false},
    {"selector and taint: both needed", "{\"nodeSelector\":{\"gpu\":\"a100\"}}",
	NULL, "{\"gpu\":\"a100\"}",
	"[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", false},
#define AFF(terms)                                                             \
	"{\"affinity\":{\"nodeAffinity\":{"                                    \
	"\"requiredDuringSchedulingIgnoredDuringExecution\":{"                 \
	"\"nodeSelectorTerms\":[" terms "]}}}}"
#define EXPR(k, op, vals)                                                      \
	"{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"" op         \
	"\",\"values\":[" vals "]}]}"
    {"In", AFF(EXPR("zone", "In", "\"a\",\"b\"")), NULL, "{\"zone\":\"b\"}",
	"[]", true},
    {"In, other value", AFF(EXPR("zone", "In", "\"a\"")), NULL,
	"{\"zone\":\"b\"}", "[]", false},
    {"In, no label", AFF(EXPR("zone", "In", "\"a\"")), NULL, "{}", "[]", false},
    {"NotIn", AFF(EXPR("zone", "NotIn", "\"a\"")), NULL, "{\"zone\":\"b\"}",
	"[]", true},
    {"NotIn, listed", AFF(EXPR("zone", "NotIn", "\"a\"")), NULL,
	"{\"zone\":\"a\"}", "[]", false},
    {"NotIn, no label", AFF(EXPR("zone", "NotIn", "\"a\"")), NULL, "{}", "[]",
	true},
    {"Exists", AFF(EXPR("zone", "Exists", "")), NULL, "{\"zone\":\"\"}", "[]",
	true},
    {"Exists, no label", AFF(EXPR("zone", "Exists", "")), NULL, "{}", "[]",
	false},
    {"DoesNotExist", AFF(EXPR("zone", "DoesNotExist", "")), NULL, "{}", "[]",
	true},
    {"DoesNotExist, label", AFF(EXPR("zone", "DoesNotExist", "")), NULL,
	"{\"zone\":\"a\"}", "[]", false},
    {"Gt", AFF(EXPR("gen", "Gt", "\"3\"")), NULL, "{\"gen\":\"4\"}", "[]",
	true},
    {"Gt, equal", AFF(EXPR("gen", "Gt", "\"3\"")), NULL, "{\"gen\":\"3\"}",
	"[]", false},
    {"Gt, not a number", AFF(EXPR("gen", "Gt", "\"3\"")), NULL,
	"{\"gen\":\"x4\"}", "[]", false},
    {"Gt, no label", AFF(EXPR("gen", "Gt", "\"3\"")), NULL, "{}", "[]", false},
    {"Gt, two values", AFF(EXPR("gen", "Gt", "\"3\",\"4\"")), NULL,
	"{\"gen\":\"9\"}", "[]", false},
    {"Lt", AFF(EXPR("gen", "Lt", "\"3\"")), NULL, "{\"gen\":\"-1\"}", "[]",
	true},
    {"Lt, larger", AFF(EXPR("gen", "Lt", "\"3\"")), NULL, "{\"gen\":\"10\"}",
	"[]", false},
    {"unknown operator", AFF(EXPR("zone", "Like", "\"a\"")), NULL,
	"{\"zone\":\"a\"}", "[]", false},
    {"terms are ORed",
	AFF(EXPR("zone", "In", "\"a\"") "," EXPR("zone", "In", "\"b\"")), NULL,
	"{\"zone\":\"b\"}", "[]", true},
    {"expressions of a term are ANDed",
	AFF("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
	    "\"values\":[\"a\"]},{\"key\":\"gpu\",\"operator\":\"Exists\"}]}"),
	NULL, "{\"zone\":\"a\"}", "[]", false},
    {"an empty term matches nothing", AFF("{}"), NULL, "{\"zone\":\"a\"}", "[]",
	false},
    {"matchFields on the name",
	AFF("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
	    "\"values\":[\"n1\"]}]}"),
	NULL, "{}", "[]", true},
    {"matchFields, other name",
	AFF("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	    "\"NotIn\",\"values\":[\"n1\"]}]}"),
	NULL, "{}", "[]", false},
    {"selector and affinity both hold",
	"{\"nodeSelector\":{\"gpu\":\"a100\"},\"affinity\":{\"nodeAffinity\":"
	"{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	"\"nodeSelectorTerms\":[" EXPR("zone", "In", "\"a\"") "]}}}}",
	NULL, "{\"gpu\":\"a100\",\"zone\":\"b\"}", "[]", false},
};

Test(tas_filter, matches_table)
{
	size_t i, k;

	for (i = 0; i < sizeof(match_cases) / sizeof(match_cases[0]); i++) {
		const struct match_case *c = &match_cases[i];
		json_t *spec = parse(c->spec), *labels = parse(c->labels);
		json_t *taints = parse(c->taints), *fl = NULL, *v;
		struct tas_filter *f = NULL, *ff = NULL, comb;
		struct api_strmap lm = {NULL, 0};
		struct tas_taint tt[8];
		const char *key;
		cu_error err;

		cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
		memset(&comb, 0, sizeof(comb));
		if (f != NULL)
			comb = *f;
		if (c->flavor != NULL) {
			fl =
			    json_pack("{s:o}", "tolerations", parse(c->flavor));
			cr_assert_eq(tas_filter_parse(fl, &ff, &err), CU_OK);
			comb.flavor_tolerations = ff->tolerations;
			comb.n_flavor_tolerations = ff->n_tolerations;
		}
		json_object_foreach(labels, key, v) cr_assert_eq(
		    api_strmap_set(&lm, key, json_string_value(v), &err),
		    CU_OK);
		json_array_foreach(taints, k, v)
		{
			tt[k].key =
			    json_string_value(json_object_get(v, "key"));
			tt[k].value =
			    json_string_value(json_object_get(v, "value"));
			tt[k].effect =
			    json_string_value(json_object_get(v, "effect"));
		}
		cr_expect_eq(tas_filter_matches(
				 &comb, "n1", &lm, tt, json_array_size(taints)),
		    c->want, "case %s", c->name);
		if (f == NULL && c->flavor == NULL)
			cr_expect_eq(tas_filter_matches(NULL, "n1", &lm, tt,
					 json_array_size(taints)),
			    c->want, "case %s (NULL filter)", c->name);
		api_strmap_dispose(&lm);
		tas_filter_free(f);
		tas_filter_free(ff);
		json_decref(fl);
		json_decref(spec);
		json_decref(labels);
		json_decref(taints);
	}
}

Test(tas_filter, parse_empty_spec_is_null)
{
	json_t *spec = parse("{\"containers\":[],\"nodeSelector\":{}}");
	struct tas_filter *f = (struct tas_filter *)1;
	cu_error err;

	cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
	cr_assert_null(f);
	cr_assert_eq(tas_filter_parse(NULL, &f, &err), CU_OK);
	cr_assert_null(f);
	json_decref(spec);
}

/* ---- placements ---------------------------------------------------------- */

static const struct tas_amount one_cpu[] = {{"cpu", 1000}};

/* A Node of rack `rack`: 2 cpu, optional extra label and taint. */
static void node(struct tas_tree *t, const char *name, const char *rack,
    const char *lk, const char *lv, const char *taint)
{
	struct api_strmap labels = {NULL, 0};
	struct tas_amount alloc[] = {{"cpu", 2000}, {"pods", 110}};
	struct tas_taint tt = {taint, NULL, "NoSchedule"};
	cu_error err;

	cr_assert_eq(api_strmap_set(&labels, RACK, rack, &err), CU_OK);
	cr_assert_eq(
	    api_strmap_set(&labels, TAS_HOSTNAME_LABEL, name, &err), CU_OK);
	if (lk != NULL)
		cr_assert_eq(api_strmap_set(&labels, lk, lv, &err), CU_OK);
	cr_assert_eq(tas_tree_node_put(t, name, &labels, alloc, 2, &tt,
			 taint != NULL ? 1 : 0, true, &err),
	    CU_OK, "%s", err.msg);
	api_strmap_dispose(&labels);
}

/* Racks r1 (2 hosts tainted "dedicated") and r2 (h3 with gpu=a100, h4),
 * 2 cpu each; the lowest level is the hostname or the rack. */
static struct tas_tree *fixture(bool host_lowest)
{
	const char *levels[] = {RACK, TAS_HOSTNAME_LABEL};
	struct tas_tree *t;
	cu_error err;

	cr_assert_eq(
	    tas_tree_new("default", levels, host_lowest ? 2 : 1, &t, &err),
	    CU_OK);
	node(t, "h1", "r1", NULL, NULL, "dedicated");
	node(t, "h2", "r1", NULL, NULL, "dedicated");
	node(t, "h3", "r2", "gpu", "a100", NULL);
	node(t, "h4", "r2", NULL, NULL, NULL);
	return t;
}

struct place_case {
	const char *name;
	bool host_lowest;
	enum tas_mode mode;
	int32_t count;
	const char *spec;   /* PodSpec fields */
	const char *flavor; /* flavor tolerations, or NULL */
	const char *want;   /* assignment, or the NoFit message */
};

#define TOL                                                                    \
	"{\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]}"
#define FTOL "[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]"

static const struct place_case place_cases[] = {
    {"no filter: the tainted rack is skipped", true, TAS_REQUIRED, 4, "{}",
	NULL, "h3:2,h4:2"},
    {"no filter: 5 pods do not fit", true, TAS_REQUIRED, 5, "{}", NULL,
	"topology \"default\" allows to fit only 4 out of 5 pod(s)"},
    {"unconstrained without toleration stays off r1", true, TAS_UNCONSTRAINED,
	6, "{}", NULL,
	"topology \"default\" allows to fit only 4 out of 6 pod(s)"},
    {"toleration: r1 is used", true, TAS_UNCONSTRAINED, 8, TOL, NULL,
	"h1:2,h2:2,h3:2,h4:2"},
    {"flavor toleration: r1 is used", true, TAS_UNCONSTRAINED, 8, "{}", FTOL,
	"h1:2,h2:2,h3:2,h4:2"},
    {"other toleration: r1 still skipped", true, TAS_UNCONSTRAINED, 5,
	"{\"tolerations\":[{\"key\":\"other\",\"operator\":\"Exists\"}]}", NULL,
	"topology \"default\" allows to fit only 4 out of 5 pod(s)"},
    {"nodeSelector: only h3", true, TAS_UNCONSTRAINED, 2,
	"{\"nodeSelector\":{\"gpu\":\"a100\"}}", NULL, "h3:2"},
    {"nodeSelector: 3 pods do not fit", true, TAS_PREFERRED, 3,
	"{\"nodeSelector\":{\"gpu\":\"a100\"}}", NULL,
	"topology \"default\" allows to fit only 2 out of 3 pod(s)"},
    {"affinity NotIn gpu a100: h4 only", true, TAS_REQUIRED, 2,
	AFF(EXPR("gpu", "NotIn", "\"a100\"")), NULL, "h4:2"},
    {"affinity on the hostname with toleration", true, TAS_REQUIRED, 4,
	"{\"tolerations\":[{\"operator\":\"Exists\"}],\"affinity\":{"
	"\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	"{\"nodeSelectorTerms\":[" EXPR(
	    "kubernetes.io/hostname", "In", "\"h1\",\"h2\",\"h3\"") "]}}}}",
	NULL, "h1:2,h2:2"},
    {"selector matching nothing", true, TAS_UNCONSTRAINED, 1,
	"{\"nodeSelector\":{\"gpu\":\"h100\"}}", NULL,
	"topology \"default\" doesn't allow to fit any of 1 pod(s)"},
    {"rack leaves: no filter", false, TAS_REQUIRED, 4, "{}", NULL, "r2:4"},
    {"rack leaves: toleration", false, TAS_UNCONSTRAINED, 8, TOL, NULL,
	"r1:4,r2:4"},
    {"rack leaves: selector counts h3 only", false, TAS_REQUIRED, 3,
	"{\"nodeSelector\":{\"gpu\":\"a100\"}}", NULL,
	"topology \"default\" allows to fit only 2 out of 3 pod(s)"},
};

Test(tas_filter, placement_table)
{
	size_t i;

	for (i = 0; i < sizeof(place_cases) / sizeof(place_cases[0]); i++) {
		const struct place_case *c = &place_cases[i];
		struct tas_tree *t = fixture(c->host_lowest);
		json_t *spec = parse(c->spec), *fl = NULL;
		struct tas_filter *f = NULL, *ff = NULL, comb;
		struct tas_request r = {c->mode, RACK, c->count, one_cpu, 1,
		    NULL, 0, &comb, NULL, 0};
		struct api_topology_assignment a;
		char msg[256], got[256];
		cu_error err;
		int rc;

		cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
		memset(&comb, 0, sizeof(comb));
		if (f != NULL)
			comb = *f;
		if (c->flavor != NULL) {
			fl =
			    json_pack("{s:o}", "tolerations", parse(c->flavor));
			cr_assert_eq(tas_filter_parse(fl, &ff, &err), CU_OK);
			comb.flavor_tolerations = ff->tolerations;
			comb.n_flavor_tolerations = ff->n_tolerations;
		}
		rc = tas_place(t, &r, &a, msg, sizeof(msg), &err);
		if (rc == CU_OK) {
			fx_tas_render(&a, got, sizeof(got));
			cr_expect_str_eq(got, c->want, "case %s", c->name);
			api_topology_assignment_dispose(&a);
		} else {
			cr_expect_eq(rc, TAS_NOFIT, "case %s", c->name);
			cr_expect_str_eq(msg, c->want, "case %s", c->name);
		}
		tas_filter_free(f);
		tas_filter_free(ff);
		json_decref(fl);
		json_decref(spec);
		tas_tree_free(t);
	}
}

/* With rack leaves, a filtered request counts the admitted nodes minus
 * all the TAS usage of the leaf: pods placed there may run on any of
 * its nodes. */
Test(tas_filter, rack_leaf_tas_usage_counts_against_selected_nodes)
{
	struct tas_tree *t = fixture(false);
	json_t *spec = parse("{\"nodeSelector\":{\"gpu\":\"a100\"}}");
	struct tas_filter *f = NULL;
	struct tas_request plain = {
	    TAS_REQUIRED, RACK, 2, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct tas_request sel = {
	    TAS_REQUIRED, RACK, 1, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a, b;
	char msg[256];
	cu_error err;

	cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
	sel.filter = f;
	cr_assert_eq(tas_place(t, &plain, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err), CU_OK);
	/* r2 has 2 free cpu on h4 and 2 on h3, but the 2 TAS pods may be
	 * on h3: nothing is left for certain on h3 */
	cr_expect_eq(tas_place(t, &sel, &b, msg, sizeof(msg), &err), TAS_NOFIT);
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, -1, &err), CU_OK);
	cr_expect_eq(tas_place(t, &sel, &b, msg, sizeof(msg), &err), CU_OK);
	api_topology_assignment_dispose(&b);
	api_topology_assignment_dispose(&a);
	tas_filter_free(f);
	json_decref(spec);
	tas_tree_free(t);
}

/* A node whose taint goes, whose labels change or that moves to another
 * rack or is removed: the leaves' counts follow. */
Test(tas_filter, node_changes_are_followed)
{
	struct tas_tree *t = fixture(true);
	json_t *spec = parse("{\"nodeSelector\":{\"gpu\":\"a100\"}}");
	struct tas_filter *f = NULL;
	struct tas_request plain = {
	    TAS_UNCONSTRAINED, NULL, 1, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct tas_request sel = {
	    TAS_UNCONSTRAINED, NULL, 4, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a;
	char msg[256];
	cu_error err;

	cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
	sel.filter = f;
	cr_expect_eq(tas_tree_leaf_free(t, "h1", "cpu"), 0);
	node(t, "h1", "r1", "gpu", "a100", NULL); /* untainted, labelled */
	cr_expect_eq(tas_tree_leaf_free(t, "h1", "cpu"), 2000);
	cr_assert_eq(
	    tas_place(t, &sel, &a, msg, sizeof(msg), &err), CU_OK, "%s", msg);
	cr_expect_eq(a.n_domains, 2);
	api_topology_assignment_dispose(&a);
	node(t, "h3", "r2", NULL, NULL, NULL); /* label gone */
	cr_expect_eq(tas_place(t, &sel, &a, msg, sizeof(msg), &err), TAS_NOFIT);
	cr_expect_str_eq(
	    msg, "topology \"default\" allows to fit only 2 out of 4 pod(s)");
	node(t, "h3", "r1", "gpu", "a100", NULL); /* moved to r1 */
	cr_assert_eq(tas_place(t, &sel, &a, msg, sizeof(msg), &err), CU_OK);
	api_topology_assignment_dispose(&a);
	tas_tree_node_remove(t, "h3");
	tas_tree_node_remove(t, "h1");
	cr_expect_eq(tas_place(t, &sel, &a, msg, sizeof(msg), &err), TAS_NOFIT);
	cr_expect_str_eq(
	    msg, "topology \"default\" doesn't allow to fit any of 4 pod(s)");
	plain.count = 3;
	cr_expect_eq(
	    tas_place(t, &plain, &a, msg, sizeof(msg), &err), TAS_NOFIT);
	plain.count = 2;
	cr_assert_eq(tas_place(t, &plain, &a, msg, sizeof(msg), &err), CU_OK);
	api_topology_assignment_dispose(&a);
	tas_filter_free(f);
	json_decref(spec);
	tas_tree_free(t);
}

/* tas_node_apply keeps a Node's taints: tolerated, it is used. */
Test(tas_filter, node_apply_taints)
{
	const char *levels[] = {RACK, TAS_HOSTNAME_LABEL};
	json_t *n = parse(
	    "{\"metadata\":{\"name\":\"h1\",\"labels\":{\"" RACK "\":\"r1\","
	    "\"kubernetes.io/hostname\":\"h1\"}},\"spec\":{\"taints\":["
	    "{\"key\":\"a\",\"effect\":\"PreferNoSchedule\"},"
	    "{\"key\":\"gpu\",\"value\":\"true\",\"effect\":\"NoExecute\"}]},"
	    "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"}}}");
	json_t *spec = parse("{\"tolerations\":[{\"key\":\"gpu\","
			     "\"operator\":\"Equal\",\"value\":\"true\"}]}");
	struct tas_filter *f = NULL;
	struct tas_request r = {
	    TAS_REQUIRED, RACK, 4, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a;
	struct api_node nd;
	struct tas_tree *t;
	char msg[256];
	cu_error err;

	cr_assert_eq(tas_tree_new("default", levels, 2, &t, &err), CU_OK);
	cr_assert_eq(api_node_decode(&nd, n, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(tas_node_apply(t, &nd, &err), CU_OK);
	api_node_dispose(&nd);
	cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
	cr_expect_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), TAS_NOFIT);
	r.filter = f;
	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_expect_eq(a.n_domains, 1);
	cr_expect_eq(a.domains[0].count, 4);
	api_topology_assignment_dispose(&a);
	tas_filter_free(f);
	json_decref(spec);
	json_decref(n);
	tas_tree_free(t);
}

/* A failed node's pods are replaced on nodes the filter admits only: the
 * tainted rack's other host with the toleration, none without it. */
Test(tas_filter, replacement_follows_the_filter)
{
	struct tas_tree *t = fixture(true);
	json_t *spec = parse(TOL);
	struct tas_filter *f = NULL;
	struct tas_request r = {
	    TAS_REQUIRED, RACK, 2, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a, b;
	char msg[256], got[64];
	cu_error err;

	cr_assert_eq(tas_filter_parse(spec, &f, &err), CU_OK);
	r.filter = f;
	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	fx_tas_render(&a, got, sizeof(got));
	cr_assert_str_eq(got, "h1:2");
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err), CU_OK);
	r.filter = NULL;
	cr_expect_eq(tas_replace(t, &a, "h1", &r, &b, msg, sizeof(msg), &err),
	    TAS_NOFIT);
	r.filter = f;
	cr_assert_eq(tas_replace(t, &a, "h1", &r, &b, msg, sizeof(msg), &err),
	    CU_OK, "%s", msg);
	fx_tas_render(&b, got, sizeof(got));
	cr_expect_str_eq(got, "h2:2");
	api_topology_assignment_dispose(&b);
	api_topology_assignment_dispose(&a);
	tas_filter_free(f);
	json_decref(spec);
	tas_tree_free(t);
}
