/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_pod_test.c - v1 Pods and Nodes decoded once
 * (api/model_pod.c): a table of Pods (node name, nodeSelector, gates,
 * requests, phase, finished), a table of Nodes (labels, taints,
 * allocatable, unschedulable, Ready), and the shapes refused with the
 * field's path.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/model.h"

/* JSON written with ' for " (the tables stay readable). */
static json_t *parse(const char *q)
{
	char buf[2048];
	size_t i;
	json_t *j;

	cr_assert_lt(strlen(q), sizeof(buf));
	for (i = 0; q[i] != '\0'; i++)
		buf[i] = q[i] == '\'' ? '"' : q[i];
	buf[i] = '\0';
	j = json_loads(buf, 0, NULL);
	cr_assert_not_null(j, "%s", buf);
	return j;
}

struct pod_case {
	const char *json;
	const char *node, *host_sel, *phase;
	bool gated, finished;
	const char *req; /* first request name, or NULL */
	int64_t req_milli;
	size_t n_conditions;
};

Test(api_model_pod, table)
{
	static const struct pod_case cases[] = {
	    {"{'metadata':{'name':'p','namespace':'ns','labels':{'a':'b'}}}",
		NULL, NULL, NULL, false, false, NULL, 0, 0},
	    {"{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
	     "'spec':{'nodeName':'n1','containers':[{'name':'c',"
	     "'resources':{'requests':{'cpu':'500m'}}}]},"
	     "'status':{'phase':'Running','conditions':[{'type':'Ready',"
	     "'status':'True'}]}}",
		"n1", NULL, "Running", false, false, "cpu", 500, 1},
	    {"{'metadata':{'name':'p'},'spec':{'schedulingGates':[{'name':"
	     "'x'},{'name':'kueue.x-k8s.io/topology'}],'nodeSelector':{"
	     "'kubernetes.io/hostname':'h2'}},'status':{'phase':'Pending'}}",
		NULL, "h2", "Pending", true, false, NULL, 0, 0},
	    {"{'metadata':{'name':'p'},'status':{'phase':'Succeeded'}}", NULL,
		NULL, "Succeeded", false, true, NULL, 0, 0},
	    {"{'metadata':{'name':'p'},'status':{'phase':'Failed'}}", NULL,
		NULL, "Failed", false, true, NULL, 0, 0},
	    {"{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
	     "'resources':{'limits':{'memory':'1Gi'}}}],'overhead':{"
	     "'memory':'1'}}}",
		NULL, NULL, NULL, false, false, "memory", 1073741825000LL, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pod_case *c = &cases[i];
		json_t *j = parse(c->json);
		struct api_pod p;
		cu_error err;

		cr_assert_eq(api_pod_decode(&p, j, &err), CU_OK, "case %zu: %s",
		    i, err.msg);
		cr_assert_str_eq(p.meta.name, "p");
		cr_assert(p.raw == j);
		if (c->node)
			cr_assert_str_eq(
			    p.spec.node_name, c->node, "case %zu", i);
		else
			cr_assert_null(p.spec.node_name, "case %zu", i);
		if (c->host_sel)
			cr_assert_str_eq(api_strmap_get(&p.spec.node_selector,
					     "kubernetes.io/hostname"),
			    c->host_sel);
		else
			cr_assert_eq(p.spec.node_selector.n, 0);
		if (c->phase)
			cr_assert_str_eq(p.status.phase, c->phase);
		else
			cr_assert_null(p.status.phase);
		cr_assert_eq(api_pod_gated(&p, "kueue.x-k8s.io/topology"),
		    c->gated, "case %zu", i);
		cr_assert_eq(api_pod_finished(&p), c->finished, "case %zu", i);
		if (c->req) {
			cr_assert_geq(p.spec.n_requests, 1);
			cr_assert_str_eq(p.spec.requests[0].name, c->req);
			cr_assert_eq(p.spec.requests[0].milli, c->req_milli,
			    "case %zu: %lld", i,
			    (long long)p.spec.requests[0].milli);
		} else
			cr_assert_eq(p.spec.n_requests, 0, "case %zu", i);
		cr_assert_eq(p.status.conditions.n, c->n_conditions);
		if (i == 0)
			cr_assert_str_eq(
			    api_strmap_get(&p.meta.labels, "a"), "b");
		api_pod_dispose(&p);
		cr_assert_null(p.raw);
		json_decref(j);
	}
}

struct node_case {
	const char *json;
	bool ready, unschedulable;
	size_t n_taints;
	int64_t cpu_milli; /* -1: no allocatable cpu */
	const char *zone;
};

Test(api_model_node, table)
{
	static const struct node_case cases[] = {
	    /* simulated Nodes carry no conditions: Ready */
	    {"{'metadata':{'name':'n'}}", true, false, 0, -1, NULL},
	    {"{'apiVersion':'v1','kind':'Node','metadata':{'name':'n',"
	     "'labels':{'zone':'z1'}},'status':{'allocatable':{'cpu':'4',"
	     "'pods':'110'},'conditions':[{'type':'Ready','status':'True',"
	     "'lastHeartbeatTime':'2026-01-01T00:00:00Z'}]}}",
		true, false, 0, 4000, "z1"},
	    {"{'metadata':{'name':'n'},'status':{'conditions':[{'type':"
	     "'Ready','status':'False','reason':'KubeletDown'}]}}",
		false, false, 0, -1, NULL},
	    {"{'metadata':{'name':'n'},'status':{'conditions':[{'type':"
	     "'Ready','status':'Unknown'}]}}",
		false, false, 0, -1, NULL},
	    {"{'metadata':{'name':'n'},'spec':{'unschedulable':true,'taints':"
	     "[{'key':'k','value':'v','effect':'NoSchedule'},{'key':'x',"
	     "'effect':'NoExecute'}]}}",
		true, true, 2, -1, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct node_case *c = &cases[i];
		json_t *j = parse(c->json);
		struct api_node n;
		const struct api_quantity *q;
		cu_error err;

		cr_assert_eq(api_node_decode(&n, j, &err), CU_OK,
		    "case %zu: %s", i, err.msg);
		cr_assert_str_eq(n.meta.name, "n");
		cr_assert_eq(api_node_ready(&n), c->ready, "case %zu", i);
		cr_assert_eq(n.spec.unschedulable, c->unschedulable);
		cr_assert_eq(n.spec.n_taints, c->n_taints, "case %zu", i);
		q = api_qmap_get(&n.status.allocatable, "cpu");
		if (c->cpu_milli < 0)
			cr_assert_null(q);
		else
			cr_assert_eq(q->milli, c->cpu_milli);
		if (c->zone)
			cr_assert_str_eq(
			    api_strmap_get(&n.meta.labels, "zone"), c->zone);
		if (c->n_taints == 2) {
			cr_assert_str_eq(n.spec.taints[0].key, "k");
			cr_assert_str_eq(n.spec.taints[0].value, "v");
			cr_assert_eq(
			    n.spec.taints[0].effect, API_EFFECT_NO_SCHEDULE);
			cr_assert_eq(
			    n.spec.taints[1].effect, API_EFFECT_NO_EXECUTE);
		}
		api_node_dispose(&n);
		json_decref(j);
	}
}

Test(api_model_pod, refused_with_path)
{
	static const char *const bad[][2] = {
	    {"[]", "a Pod must be a JSON object"},
	    {"{'kind':'Node'}", "kind"},
	    {"{'spec':{'nodeName':3}}", "spec.nodeName"},
	    {"{'spec':{'schedulingGates':[{}]}}",
		"spec.schedulingGates[0].name: Required value"},
	    {"{'spec':{'containers':[{'resources':{'requests':{'cpu':'x'}}}]}}",
		"spec.containers[0].resources.requests"},
	    {"{'status':{'conditions':[{'type':'Ready'}]}}",
		"status.conditions[0].status: Required value"},
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = parse(bad[i][0]);
		struct api_pod p;
		cu_error err;

		cr_assert_neq(
		    api_pod_decode(&p, j, &err), CU_OK, "case %zu", i);
		cr_assert(strstr(err.msg, bad[i][1]) != NULL, "case %zu: %s", i,
		    err.msg);
		cr_assert_null(p.raw);
		json_decref(j);
	}
}

Test(api_model_node, refused_with_path)
{
	static const char *const bad[][2] = {
	    {"{'kind':'Pod'}", "kind"},
	    {"{'spec':{'unschedulable':'yes'}}", "spec.unschedulable"},
	    {"{'spec':{'taints':[{'key':'k'}]}}",
		"spec.taints[0].effect: Required value"},
	    {"{'status':{'allocatable':{'cpu':'lots'}}}", "status.allocatable"},
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = parse(bad[i][0]);
		struct api_node n;
		cu_error err;

		cr_assert_neq(
		    api_node_decode(&n, j, &err), CU_OK, "case %zu", i);
		cr_assert(strstr(err.msg, bad[i][1]) != NULL, "case %zu: %s", i,
		    err.msg);
		json_decref(j);
	}
}

/* The Workload's status.unhealthyNodes (TAS node failures) is read as
 * the names alone and written back in its wire form. */
Test(api_model_workload, unhealthy_nodes_round_trip)
{
	json_t *j = parse(
	    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
	    "'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{"
	    "'name':'main','count':1,'template':{'spec':{'containers':[]}}}]},"
	    "'status':{'unhealthyNodes':[{'name':'n1'},{'name':'n2'}]}}");
	json_t *bad =
	    parse("{'kind':'Workload','metadata':{'name':'w'},"
		  "'spec':{'podSets':[{'name':'main','count':1,"
		  "'template':{}}]},'status':{'unhealthyNodes':[{}]}}");
	struct api_workload wl;
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(wl.status.unhealthy_nodes.n, 2);
	cr_assert_str_eq(wl.status.unhealthy_nodes.items[1], "n2");
	cr_assert_eq(api_workload_encode(&out, &wl, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_workload_dispose(&wl);
	cr_assert_neq(api_workload_decode(&wl, bad, &err), CU_OK);
	cr_assert(strstr(err.msg, "status.unhealthyNodes[0].name") != NULL,
	    "%s", err.msg);
	json_decref(bad);
	json_decref(j);
}
