/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_topology_test.c - the Topology codec, podSet
 * topologyRequest from pod-template annotations (Kueue's precedence:
 * required, preferred, unconstrained), its Workload round trip, and the
 * topologyAssignment wire form (universal/individual values and counts,
 * prefix/suffix on decode).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/model.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at %d", jerr.text, jerr.column);
	return j;
}

Test(topology, decodes_levels_and_round_trips)
{
	json_t *j = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			  "\"kind\":\"Topology\",\"metadata\":{\"name\":"
			  "\"default\"},\"spec\":{\"levels\":["
			  "{\"nodeLabel\":\"cloud.provider.com/block\"},"
			  "{\"nodeLabel\":\"cloud.provider.com/rack\"},"
			  "{\"nodeLabel\":\"kubernetes.io/hostname\"}]}}");
	struct api_topology t;
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_topology_decode(&t, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(t.spec.levels.n, 3);
	cr_assert_str_eq(t.spec.levels.items[1], "cloud.provider.com/rack");
	cr_assert_eq(api_topology_encode(&out, &t, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_topology_dispose(&t);
	json_decref(j);
}

Test(topology, rejects_missing_levels)
{
	json_t *j = parse("{\"kind\":\"Topology\",\"metadata\":{\"name\":"
			  "\"t\"},\"spec\":{\"levels\":[]}}");
	struct api_topology t;
	cu_error err;

	cr_assert_neq(api_topology_decode(&t, j, &err), CU_OK);
	cr_assert(strstr(err.msg, "spec.levels") != NULL, "%s", err.msg);
	json_decref(j);
}

struct req_case {
	const char *annotations;
	const char *required, *preferred;
	int unconstrained; /* -1 absent */
	bool found;
};

Test(topology, request_from_annotations_table)
{
	static const struct req_case cases[] = {
	    {"", NULL, NULL, -1, false},
	    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\"", "rack",
		NULL, -1, true},
	    {"\"kueue.x-k8s.io/podset-preferred-topology\":\"block\"", NULL,
		"block", -1, true},
	    /* required wins over preferred, as in Kueue */
	    {"\"kueue.x-k8s.io/podset-preferred-topology\":\"block\","
	     "\"kueue.x-k8s.io/podset-required-topology\":\"rack\"",
		"rack", NULL, -1, true},
	    {"\"kueue.x-k8s.io/podset-unconstrained-topology\":\"true\"", NULL,
		NULL, 1, true},
	    {"\"kueue.x-k8s.io/podset-unconstrained-topology\":\"F\"", NULL,
		NULL, 0, true},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		struct api_topology_request r;
		bool found = true;
		json_t *tpl;
		cu_error err;

		snprintf(buf, sizeof(buf),
		    "{\"metadata\":{\"annotations\":{%s}}}",
		    cases[i].annotations);
		tpl = parse(buf);
		cr_assert_eq(
		    api_topology_request_from_template(tpl, &r, &found, &err),
		    CU_OK, "case %zu", i);
		cr_assert_eq(found, cases[i].found, "case %zu", i);
		if (cases[i].required)
			cr_assert_str_eq(r.required, cases[i].required);
		else
			cr_assert_null(r.required, "case %zu", i);
		if (cases[i].preferred)
			cr_assert_str_eq(r.preferred, cases[i].preferred);
		else
			cr_assert_null(r.preferred, "case %zu", i);
		cr_assert_eq(r.has_unconstrained, cases[i].unconstrained >= 0,
		    "case %zu", i);
		if (cases[i].unconstrained >= 0)
			cr_assert_eq(r.unconstrained,
			    cases[i].unconstrained == 1, "case %zu", i);
		api_topology_request_dispose(&r);
		json_decref(tpl);
	}
}

Test(topology, bad_unconstrained_value_is_an_error)
{
	json_t *tpl = parse("{\"metadata\":{\"annotations\":{"
			    "\"kueue.x-k8s.io/podset-unconstrained-"
			    "topology\":\"yes\"}}}");
	struct api_topology_request r;
	bool found;
	cu_error err;

	cr_assert_eq(api_topology_request_from_template(tpl, &r, &found, &err),
	    CU_EINVAL);
	json_decref(tpl);
}

/* TASMultiLayerTopology: the constraints annotation becomes the slice
 * layers (taking the place of the two-level slice annotations) and
 * encodes as podsetSliceRequiredTopologyConstraints; a malformed list or
 * more than 3 layers is an error. */
Test(topology, slice_layers_from_annotation)
{
	json_t *tpl = parse(
	    "{\"metadata\":{\"annotations\":{"
	    "\"kueue.x-k8s.io/podset-required-topology\":\"block\","
	    "\"kueue.x-k8s.io/podset-slice-required-topology\":\"host\","
	    "\"kueue.x-k8s.io/podset-slice-size\":\"2\","
	    "\"kueue.x-k8s.io/podset-slice-required-topology-constraints\":"
	    "\"[{\\\"topology\\\":\\\"rack\\\",\\\"size\\\":8},"
	    "{\\\"topology\\\":\\\"host\\\",\\\"size\\\":4}]\"}}}");
	static const char *const bad[] = {"[]", "{}", "[{\"topology\":\"r\"}]",
	    "[{\"topology\":\"r\",\"size\":0}]",
	    "[{\"topology\":\"a\",\"size\":1},{\"topology\":\"b\",\"size\":1},"
	    "{\"topology\":\"c\",\"size\":1},{\"topology\":\"d\",\"size\":1}]",
	    "not json"};
	struct api_topology_request r;
	json_t *out = NULL, *want;
	bool found;
	cu_error err;
	size_t i;

	cr_assert_eq(api_topology_request_from_template(tpl, &r, &found, &err),
	    CU_OK, "%s", err.msg);
	cr_assert(found);
	cr_assert_eq(r.n_layers, 2);
	cr_assert_str_eq(r.layers[0].topology, "rack");
	cr_assert_eq(r.layers[1].size, 4);
	cr_assert_null(r.slice_required);
	cr_assert(api_topology_request_places(&r));
	cr_assert_eq(api_topology_request_encode(&out, &r, &err), CU_OK);
	want = parse("{\"required\":\"block\","
		     "\"podsetSliceRequiredTopologyConstraints\":"
		     "[{\"topology\":\"rack\",\"size\":8},"
		     "{\"topology\":\"host\",\"size\":4}]}");
	cr_assert(json_equal(out, want));
	json_decref(want);
	json_decref(out);
	api_topology_request_dispose(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *b = json_pack("{s:{s:{s:s}}}", "metadata",
		    "annotations",
		    "kueue.x-k8s.io/podset-slice-required-topology-constraints",
		    bad[i]);

		cr_expect_eq(
		    api_topology_request_from_template(b, &r, &found, &err),
		    CU_EINVAL, "%s", bad[i]);
		json_decref(b);
	}
	json_decref(tpl);
}

Test(topology, job_podset_carries_the_request)
{
	json_t *j =
	    parse("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
		  "{\"name\":\"j\"},\"spec\":{\"parallelism\":3,\"template\":"
		  "{\"metadata\":{\"annotations\":{\"kueue.x-k8s.io/podset-"
		  "required-topology\":\"cloud.provider.com/rack\"}},\"spec\":"
		  "{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}");
	struct api_job job;
	struct api_podsets ps;
	cu_error err;

	cr_assert_eq(api_job_decode(&job, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_job_podsets(&job, &ps, &err), CU_OK, "%s", err.msg);
	cr_assert(ps.items[0].has_topology_request);
	cr_assert_str_eq(
	    ps.items[0].topology_request.required, "cloud.provider.com/rack");
	api_podsets_dispose(&ps);
	api_job_dispose(&job);
	json_decref(j);
}

Test(topology, workload_round_trips_request_and_assignment)
{
	json_t *j = parse(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"d\"},\"spec\":{"
	    "\"podSets\":[{\"name\":\"main\",\"count\":2,\"template\":{},"
	    "\"topologyRequest\":{\"preferred\":\"rack\","
	    "\"podIndexLabel\":\"x\"}}]},\"status\":{\"admission\":{"
	    "\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
	    "\"main\",\"topologyAssignment\":{\"levels\":[\"h\"],\"slices\":"
	    "[{\"domainCount\":1,\"valuesPerLevel\":[{\"universal\":\"n1\"}],"
	    "\"podCounts\":{\"universal\":2}}]}}]}}}");
	struct api_workload wl;
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert(wl.spec.pod_sets[0].has_topology_request);
	cr_assert_str_eq(
	    wl.spec.pod_sets[0].topology_request.preferred, "rack");
	cr_assert_not_null(
	    wl.status.admission.pod_set_assignments[0].topology_assignment);
	cr_assert_eq(api_workload_encode(&out, &wl, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_workload_dispose(&wl);
	json_decref(j);
}

Test(topology, assignment_encode_universal_and_individual)
{
	char b1[] = "b1", r1[] = "r1", h1[] = "h1", h2[] = "h2";
	char bl[] = "block", rk[] = "rack", ho[] = "host";
	char *v1[] = {b1, r1, h1}, *v2[] = {b1, r1, h2};
	struct api_topology_domain doms[] = {{v1, 3}, {v2, 1}};
	char *levels[] = {bl, rk, ho};
	struct api_topology_assignment a = {{levels, 3}, doms, 2}, back;
	json_t *out = NULL, *want;
	cu_error err;

	cr_assert_eq(api_topology_assignment_encode(&out, &a, &err), CU_OK);
	want = parse("{\"levels\":[\"block\",\"rack\",\"host\"],\"slices\":"
		     "[{\"domainCount\":2,\"valuesPerLevel\":["
		     "{\"universal\":\"b1\"},{\"universal\":\"r1\"},"
		     "{\"individual\":{\"roots\":[\"h1\",\"h2\"]}}],"
		     "\"podCounts\":{\"individual\":[3,1]}}]}");
	cr_assert(json_equal(out, want), "%s",
	    json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS));
	cr_assert_eq(api_topology_assignment_decode(&back, out, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(back.n_domains, 2);
	cr_assert_str_eq(back.domains[1].values[2], "h2");
	cr_assert_eq(back.domains[0].count, 3);
	api_topology_assignment_dispose(&back);
	json_decref(out);
	json_decref(want);
}

Test(topology, assignment_decode_applies_prefix_and_suffix)
{
	json_t *j = parse("{\"levels\":[\"host\"],\"slices\":[{\"domainCount\":"
			  "2,\"valuesPerLevel\":[{\"individual\":{\"prefix\":"
			  "\"node-\",\"suffix\":\"-x\",\"roots\":[\"1\",\"2\"]"
			  "}}],\"podCounts\":{\"universal\":1}},{\"domainCount"
			  "\":1,\"valuesPerLevel\":[{\"universal\":\"n9\"}],"
			  "\"podCounts\":{\"universal\":4}}]}");
	struct api_topology_assignment a;
	cu_error err;

	cr_assert_eq(
	    api_topology_assignment_decode(&a, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(a.n_domains, 3);
	cr_assert_str_eq(a.domains[1].values[0], "node-2-x");
	cr_assert_str_eq(a.domains[2].values[0], "n9");
	cr_assert_eq(a.domains[2].count, 4);
	api_topology_assignment_dispose(&a);
	json_decref(j);
}

Test(topology, assignment_decode_rejects_short_roots)
{
	json_t *j = parse("{\"levels\":[\"host\"],\"slices\":[{\"domainCount\":"
			  "2,\"valuesPerLevel\":[{\"individual\":{\"roots\":"
			  "[\"a\"]}}],\"podCounts\":{\"universal\":1}}]}");
	struct api_topology_assignment a;
	cu_error err;

	cr_assert_eq(api_topology_assignment_decode(&a, j, &err), CU_EINVAL);
	json_decref(j);
}

Test(topology, assignment_decode_caps_the_domain_count)
{
	json_t *j = parse("{\"levels\":[\"host\"],\"slices\":[{\"domainCount\":"
			  "60000,\"valuesPerLevel\":[{\"universal\":\"a\"}],"
			  "\"podCounts\":{\"universal\":1}},{\"domainCount\":"
			  "60000,\"valuesPerLevel\":[{\"universal\":\"a\"}],"
			  "\"podCounts\":{\"universal\":1}}]}");
	struct api_topology_assignment a;
	cu_error err;

	cr_assert_eq(api_topology_assignment_decode(&a, j, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "100000") != NULL, "%s", err.msg);
	json_decref(j);
}

/* kueue.x-k8s.io/podset-group-name becomes podSetGroupName with a
 * required or preferred level only (Kueue's builder), and round-trips
 * through the Workload's topologyRequest. */
Test(topology, group_name_from_annotations)
{
	static const struct {
		const char *annotations;
		const char *group;
	} cases[] = {
	    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
		"g"},
	    {"\"kueue.x-k8s.io/podset-preferred-topology\":\"rack\","
	     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
		"g"},
	    {"\"kueue.x-k8s.io/podset-unconstrained-topology\":\"true\","
	     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
		NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		struct api_topology_request r;
		bool found = false;
		json_t *tpl, *enc = NULL;
		cu_error err;

		snprintf(buf, sizeof(buf),
		    "{\"metadata\":{\"annotations\":{%s}}}",
		    cases[i].annotations);
		tpl = parse(buf);
		cr_assert_eq(
		    api_topology_request_from_template(tpl, &r, &found, &err),
		    CU_OK);
		cr_assert(found);
		cr_assert_eq(
		    api_topology_request_encode(&enc, &r, &err), CU_OK);
		if (cases[i].group) {
			cr_assert_str_eq(r.group_name, cases[i].group);
			cr_assert_str_eq(json_string_value(json_object_get(
					     enc, "podSetGroupName")),
			    cases[i].group);
		} else {
			cr_assert_null(r.group_name, "case %zu", i);
			cr_assert_null(json_object_get(enc, "podSetGroupName"));
		}
		json_decref(enc);
		api_topology_request_dispose(&r);
		json_decref(tpl);
	}
}

Test(topology, workload_round_trips_group_name)
{
	json_t *j = parse(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"d\"},\"spec\":{"
	    "\"podSets\":[{\"name\":\"main\",\"count\":2,\"template\":{},"
	    "\"topologyRequest\":{\"required\":\"rack\","
	    "\"podSetGroupName\":\"g\"}}]}}");
	struct api_workload wl;
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(wl.spec.pod_sets[0].topology_request.group_name, "g");
	cr_assert_eq(api_workload_encode(&out, &wl, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_workload_dispose(&wl);
	json_decref(j);
}
