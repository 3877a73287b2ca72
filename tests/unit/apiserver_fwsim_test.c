/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_fwsim_test.c - the pure parts of cueue-apiserver's
 * framework stand-ins (tests/apiserver/fwkit.c, scale.c, fwcrds.c): the
 * --simulate list and what each name implies, the Scale read from and
 * written into an object, the helpers every simulator uses (managedBy,
 * runtime, conditions), and every CRD document a family installs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "%s: %s", text, e.text);
	return j;
}

struct pcase {
	const char *list;
	bool ok;
	unsigned fw;
	bool jobs, jobsets, sched, prov;
};

static const struct pcase pcases[] = {
    {"jobs", true, 0, true, false, false, false},
    {"jobs,jobsets,scheduler,provisioning", true, 0, true, true, true, true},
    {"jobsets", true, 0, false, true, false, false},
    {"pods", true, AS_SIM_PODS, false, false, false, false},
    {"deployments", true, AS_SIM_DEPLOYMENTS | AS_SIM_PODS, false, false, false,
	false},
    {"statefulsets,leaderworkersets", true,
	AS_SIM_STATEFULSETS | AS_SIM_LWS | AS_SIM_PODS, false, false, false,
	false},
    {"kubeflow,mpijobs", true, AS_SIM_KUBEFLOW | AS_SIM_MPIJOBS | AS_SIM_PODS,
	false, false, false, false},
    {"trainjobs", true, AS_SIM_TRAINJOBS | AS_SIM_PODS, true, true, false,
	false},
    {"ray,appwrappers,sparkapplications", true,
	AS_SIM_RAY | AS_SIM_APPWRAPPERS | AS_SIM_SPARK | AS_SIM_PODS, false,
	false, false, false},
    {"jobs,,pods", true, AS_SIM_PODS, true, false, false, false},
    {"job", false, 0, false, false, false, false},
    {"pods,rayjobs", false, AS_SIM_PODS, false, false, false, false},
    {"Pods", false, 0, false, false, false, false},
};

Test(fwsim, simulate_list)
{
	size_t i;

	for (i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		const struct pcase *c = &pcases[i];
		struct as_server srv;
		cu_error err;
		bool ok;

		memset(&srv, 0, sizeof(srv));
		err.msg[0] = '\0';
		ok = as_sim_parse(&srv, c->list, &err);
		cr_expect_eq(ok, c->ok, "%s: ok", c->list);
		if (!ok) {
			cr_expect(strstr(err.msg, "unknown simulator") != NULL,
			    "%s: %s", c->list, err.msg);
			continue;
		}
		cr_expect_eq(
		    srv.sim_fw, c->fw, "%s: fw %#x", c->list, srv.sim_fw);
		cr_expect_eq(srv.sim_jobs, c->jobs, "%s: jobs", c->list);
		cr_expect_eq(
		    srv.sim_jobsets, c->jobsets, "%s: jobsets", c->list);
		cr_expect_eq(srv.sim_sched, c->sched, "%s: scheduler", c->list);
		cr_expect_eq(
		    srv.sim_prov, c->prov, "%s: provisioning", c->list);
	}
}

Test(fwsim, unknown_name_is_named)
{
	struct as_server srv;
	cu_error err;

	memset(&srv, 0, sizeof(srv));
	cr_assert_not(as_sim_parse(&srv, "pods,rayjob,ray", &err));
	cr_expect(strstr(err.msg, "\"rayjob\"") != NULL, "%s", err.msg);
}

Test(fwsim, scale_of_builtin)
{
	struct as_kind k;
	json_t *d =
	    load("{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\","
		 "\"uid\":\"u\",\"resourceVersion\":\"7\"},"
		 "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":"
		 "{\"tier\":\"b\",\"app\":\"web\"}}},"
		 "\"status\":{\"replicas\":2}}");
	json_t *sc, *upd;

	memset(&k, 0, sizeof(k));
	sc = as_scale_get(&k, d);
	cr_expect_str_eq(as_jstr(sc, "kind"), "Scale");
	cr_expect_str_eq(as_jstr(sc, "apiVersion"), "autoscaling/v1");
	cr_expect_str_eq(as_jstr(sc, "metadata.resourceVersion"), "7");
	cr_expect_eq(json_integer_value(as_jget(sc, "spec.replicas")), 3);
	cr_expect_eq(json_integer_value(as_jget(sc, "status.replicas")), 2);
	/* metav1.FormatLabelSelector sorts the keys */
	cr_expect_str_eq(as_jstr(sc, "status.selector"), "app=web,tier=b");
	upd = as_scale_set(&k, d, 5);
	cr_expect_eq(json_integer_value(as_jget(upd, "spec.replicas")), 5);
	cr_expect_eq(json_integer_value(as_jget(d, "spec.replicas")), 3,
	    "the stored object is not touched");
	json_decref(upd);
	json_decref(sc);
	json_decref(d);
}

Test(fwsim, scale_of_custom_resource)
{
	struct as_kind k;
	json_t *o =
	    load("{\"metadata\":{\"name\":\"l\"},\"spec\":{\"replicas\":"
		 "2},\"status\":{\"replicas\":1,\"hpaPodSelector\":"
		 "\"x=y\"}}");
	json_t *sc, *upd;

	memset(&k, 0, sizeof(k));
	k.scale = load("{\"specReplicasPath\":\".spec.replicas\","
		       "\"statusReplicasPath\":\".status.replicas\","
		       "\"labelSelectorPath\":\".status.hpaPodSelector\"}");
	sc = as_scale_get(&k, o);
	cr_expect_eq(json_integer_value(as_jget(sc, "spec.replicas")), 2);
	cr_expect_eq(json_integer_value(as_jget(sc, "status.replicas")), 1);
	cr_expect_str_eq(as_jstr(sc, "status.selector"), "x=y");
	upd = as_scale_set(&k, o, 0);
	cr_expect_eq(json_integer_value(as_jget(upd, "spec.replicas")), 0);
	json_decref(upd);
	json_decref(sc);
	json_decref(k.scale);
	json_decref(o);
}

Test(fwsim, managed_by_runtime_fail)
{
	json_t *o =
	    load("{\"metadata\":{\"annotations\":{"
		 "\"cueue.dev/sim-runtime-ms\":\"250\"}},"
		 "\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\","
		 "\"runPolicy\":{}}}");
	json_t *t = load("{\"metadata\":{\"annotations\":{"
			 "\"cueue.dev/sim-runtime-ms\":\"-5\","
			 "\"cueue.dev/sim-fail\":\"true\"}}}");

	cr_expect_not(as_fw_managed_here(o, "spec.managedBy", "ray.io/x"));
	cr_expect(as_fw_managed_here(
	    o, "spec.managedBy", "kueue.x-k8s.io/multikueue"));
	cr_expect(as_fw_managed_here(o, "spec.runPolicy.managedBy", "any"),
	    "unset means ours");
	cr_expect_eq(as_fw_runtime(o, t, 1000), 250, "the object's first");
	cr_expect_eq(as_fw_runtime(NULL, t, 1000), 0, "negative is 0");
	cr_expect_eq(as_fw_runtime(NULL, NULL, 1000), 1000, "default");
	cr_expect_not(as_fw_fails(o, NULL));
	cr_expect(as_fw_fails(o, t), "the template's");
	json_decref(o);
	json_decref(t);
}

Test(fwsim, condition_keeps_transition_time)
{
	json_t *o = load("{\"status\":{\"conditions\":[{\"type\":\"Ready\","
			 "\"status\":\"True\",\"lastTransitionTime\":"
			 "\"2020-01-01T00:00:00Z\"}]}}");

	as_fw_cond(o, "Ready", "True", "R", "m", false);
	cr_expect_str_eq(
	    as_jstr(json_array_get(as_jget(o, "status.conditions"), 0),
		"lastTransitionTime"),
	    "2020-01-01T00:00:00Z");
	cr_expect(as_fw_cond_true(o, "Ready"));
	as_fw_cond(o, "Ready", "False", "R", "m", true);
	cr_expect_str_neq(
	    as_jstr(json_array_get(as_jget(o, "status.conditions"), 0),
		"lastTransitionTime"),
	    "2020-01-01T00:00:00Z");
	cr_expect_not_null(
	    as_jget(json_array_get(as_jget(o, "status.conditions"), 0),
		"lastUpdateTime"));
	as_fw_cond(o, "Suspended", "True", "S", "n", false);
	cr_expect_eq(json_array_size(as_jget(o, "status.conditions")), 2);
	json_decref(o);
}

/* Every CRD a family installs parses and is a valid CRD. */
Test(fwsim, crds_are_valid)
{
	static const struct {
		unsigned sim;
		size_t n;
	} fam[] = {{AS_SIM_PODS, 0}, {AS_SIM_DEPLOYMENTS, 0}, {AS_SIM_LWS, 1},
	    {AS_SIM_KUBEFLOW, 5}, {AS_SIM_MPIJOBS, 1}, {AS_SIM_TRAINJOBS, 3},
	    {AS_SIM_RAY, 3}, {AS_SIM_APPWRAPPERS, 1}, {AS_SIM_SPARK, 1},
	    {~0u, 15}};
	size_t f;

	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		cu_error err;
		json_t *list = as_fw_crds(fam[f].sim, &err), *crd;
		size_t i;

		cr_assert_not_null(list, "%#x: %s", fam[f].sim, err.msg);
		cr_expect_eq(
		    json_array_size(list), fam[f].n, "family %#x", fam[f].sim);
		json_array_foreach(list, i, crd)
		{
			json_t *copy = json_deep_copy(crd);

			cr_expect_eq(as_crd_prepare(copy, &err), CU_OK,
			    "%s: %s", as_jstr(crd, "metadata.name"), err.msg);
			json_decref(copy);
		}
		json_decref(list);
	}
}

Test(fwsim, crd_defaults_and_scale)
{
	cu_error err;
	json_t *list = as_fw_crds(AS_SIM_LWS | AS_SIM_RAY, &err), *crd;
	json_t *lws = NULL, *rayjob = NULL;
	size_t i;

	cr_assert_not_null(list, "%s", err.msg);
	json_array_foreach(list, i, crd)
	{
		const char *n = as_jstr(crd, "metadata.name");

		if (strcmp(n, "leaderworkersets.leaderworkerset.x-k8s.io") == 0)
			lws = json_array_get(as_jget(crd, "spec.versions"), 0);
		if (strcmp(n, "rayjobs.ray.io") == 0)
			rayjob =
			    json_array_get(as_jget(crd, "spec.versions"), 0);
	}
	cr_assert_not_null(lws);
	cr_assert_not_null(rayjob);
	cr_expect_str_eq(as_jstr(lws, "subresources.scale.labelSelectorPath"),
	    ".status.hpaPodSelector");
	cr_expect_not_null(as_jget(lws, "subresources.status"));
	cr_expect_eq(json_integer_value(as_jget(lws,
			 "schema.openAPIV3Schema.properties.spec.properties."
			 "leaderWorkerTemplate.properties.size.default")),
	    1);
	cr_expect_str_eq(as_jstr(rayjob, "schema.openAPIV3Schema.properties."
					 "spec.properties.submissionMode."
					 "default"),
	    "K8sJobMode");
	json_decref(list);
}
