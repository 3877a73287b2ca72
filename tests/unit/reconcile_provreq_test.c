/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_provreq_test.c - the ProvisioningRequest admission
 * check's pure decisions, table-driven: the config's defaults and type
 * checks, the AdmissionCheck's Active verdict, Kueue's names and attempt
 * numbers, managedResources filtering and pod set merging, the request
 * and PodTemplates built for a Workload, the request's conditions mapped
 * onto the check state with the retry strategy, when a new attempt is
 * created, and the retry time of Retry checks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "api/wire.h"
#include "reconcile/reconcile.h"

/* 2026-01-01T00:00:00Z and 2026-01-01T00:01:40Z */
#define T0_NS (1767225600LL * 1000000000LL)
#define NOW_NS (T0_NS + 100LL * 1000000000LL)

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "%s: %s", text, e.text);
	return j;
}

static json_t *prc_doc(const char *spec_extra)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"cfg\"},\"spec\":{"
	    "\"provisioningClassName\":\"check-capacity.autoscaling.x-k8s."
	    "io\"%s}}",
	    spec_extra);
	return parse(buf);
}

/* A Workload w/ns with pod sets "main" (cpu) and "gpu" (nvidia.com/gpu
 * limit only), both admitted (count 3 and 2), Admitted as given. */
static json_t *wl_doc(const char *admitted, const char *active)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"
	    "\"u1\",\"annotations\":{\"provreq.kueue.x-k8s.io/"
	    "maxRunDurationSeconds\":\"600\",\"other\":\"x\"}},"
	    "\"spec\":{\"active\":%s,\"podSets\":["
	    "{\"name\":\"main\",\"count\":3,\"template\":{\"spec\":{"
	    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	    "\"cpu\":\"1\"}}}]}}},"
	    "{\"name\":\"gpu\",\"count\":2,\"template\":{\"spec\":{"
	    "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
	    "\"nvidia.com/gpu\":\"1\"}}}]}}}]},"
	    "\"status\":{\"conditions\":[{\"type\":\"Admitted\",\"status\":"
	    "\"%s\",\"reason\":\"R\",\"message\":\"\",\"lastTransitionTime\":"
	    "\"2026-01-01T00:00:00Z\"}],\"admission\":{\"clusterQueue\":\"cq\","
	    "\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"cpu\":"
	    "\"f\"},\"count\":3},{\"name\":\"gpu\",\"flavors\":{"
	    "\"nvidia.com/gpu\":\"f\"},\"count\":2}]}}}",
	    active, admitted);
	return parse(buf);
}

/* The Workload document decoded, as the decisions take it. */
static void wl_typed(json_t *doc, struct api_workload *out)
{
	cu_error err;

	cr_assert_eq(api_workload_decode(out, doc, &err), CU_OK, "%s", err.msg);
}

static void decode(json_t *doc, struct rec_prc *out)
{
	cu_error err;

	cr_assert_eq(rec_prc_decode(doc, out, &err), CU_OK, "%s", err.msg);
}

Test(provreq, config_defaults_and_types)
{
	static const struct {
		const char *extra;
		int ok;
		int32_t limit, base, max;
		enum rec_prc_merge merge;
	} cases[] = {
	    {"", 1, 3, 60, 1800, REC_PRC_MERGE_NONE},
	    {",\"retryStrategy\":{\"backoffLimitCount\":2,"
	     "\"backoffBaseSeconds\":0}",
		1, 2, 0, 1800, REC_PRC_MERGE_NONE},
	    {",\"podSetMergePolicy\":\"IdenticalPodTemplates\"", 1, 3, 60, 1800,
		REC_PRC_MERGE_TEMPLATES},
	    {",\"podSetMergePolicy\":\"IdenticalWorkloadSchedulingRequirem"
	     "ents\"",
		1, 3, 60, 1800, REC_PRC_MERGE_REQUIREMENTS},
	    {",\"podSetMergePolicy\":\"Bogus\"", 0, 0, 0, 0, 0},
	    {",\"retryStrategy\":{\"backoffLimitCount\":\"2\"}", 0, 0, 0, 0, 0},
	    {",\"parameters\":{\"a\":1}", 0, 0, 0, 0, 0},
	    {",\"managedResources\":[1]", 0, 0, 0, 0, 0},
	    {",\"podSetUpdates\":{\"nodeSelector\":[{\"key\":\"k\"}]}", 0, 0, 0,
		0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *d = prc_doc(cases[i].extra);
		struct rec_prc p;
		cu_error err;
		int rc = rec_prc_decode(d, &p, &err);

		cr_assert_eq(rc == CU_OK, cases[i].ok != 0, "case %zu", i);
		if (rc == CU_OK) {
			cr_assert_eq(p.backoff_limit_count, cases[i].limit);
			cr_assert_eq(p.backoff_base_s, cases[i].base);
			cr_assert_eq(p.backoff_max_s, cases[i].max);
			cr_assert_eq(p.merge, cases[i].merge);
			cr_assert_str_eq(p.class_name,
			    "check-capacity.autoscaling.x-k8s.io");
		}
		json_decref(d);
	}
}

Test(provreq, check_active)
{
	static const struct {
		const char *params; /* AdmissionCheck spec.parameters */
		int prc;	    /* the config exists */
		int active;
		const char *msg;
	} cases[] = {
	    {"{\"apiGroup\":\"kueue.x-k8s.io\",\"kind\":"
	     "\"ProvisioningRequestConfig\",\"name\":\"cfg\"}",
		1, 1, NULL},
	    {"{\"apiGroup\":\"kueue.x-k8s.io\",\"kind\":"
	     "\"ProvisioningRequestConfig\",\"name\":\"cfg\"}",
		0, 0,
		"provisioningrequestconfigs.kueue.x-k8s.io \"cfg\" not found"},
	    {"{\"apiGroup\":\"example.com\",\"kind\":"
	     "\"ProvisioningRequestConfig\",\"name\":\"cfg\"}",
		1, 0,
		"wrong group \"example.com\", expecting \"kueue.x-k8s.io\": "
		"bad parameters reference"},
	    {"{\"apiGroup\":\"kueue.x-k8s.io\",\"kind\":\"Other\",\"name\":"
	     "\"cfg\"}",
		1, 0,
		"wrong kind \"Other\", expecting "
		"\"ProvisioningRequestConfig\": "
		"bad parameters reference"},
	    {NULL, 1, 0, "missing parameters reference"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char buf[1024];
		struct api_admission_check ac;
		json_t *j, *prc = prc_doc("");
		char *msg = NULL;
		cu_error err;
		bool a;

		snprintf(buf, sizeof(buf),
		    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		    "\"AdmissionCheck\",\"metadata\":{\"name\":\"ac\"},"
		    "\"spec\":{\"controllerName\":\"%s\"%s%s}}",
		    REC_PROVREQ_CONTROLLER,
		    cases[i].params ? ",\"parameters\":" : "",
		    cases[i].params ? cases[i].params : "");
		j = parse(buf);
		cr_assert_eq(api_admission_check_decode(&ac, j, &err), CU_OK,
		    "%s", err.msg);
		a = rec_provreq_active(&ac, cases[i].prc ? prc : NULL, &msg);
		cr_assert_eq(a, cases[i].active != 0, "case %zu", i);
		if (cases[i].msg != NULL)
			cr_assert_str_eq(msg, cases[i].msg);
		cu_free(msg);
		api_admission_check_dispose(&ac);
		json_decref(j);
		json_decref(prc);
	}
}

Test(provreq, names_and_attempts)
{
	char longwl[300];
	char *n, *t;

	n = rec_provreq_name("w", "prov", 2);
	cr_assert_str_eq(n, "w-prov-2");
	t = rec_provreq_template_name(n, "main");
	cr_assert_str_eq(t, "ppt-w-prov-2-main");
	cr_assert_eq(rec_provreq_attempt(n, "w", "prov"), 2);
	cr_assert_eq(rec_provreq_attempt("w-prov-x", "w", "prov"), -1);
	cr_assert_eq(rec_provreq_attempt("w-other-1", "w", "prov"), -1);
	cr_assert_eq(rec_provreq_attempt("w-prov-", "w", "prov"), -1);
	cu_free(n);
	cu_free(t);
	/* a long name: cut at 247 and hashed, still parseable */
	memset(longwl, 'a', 260);
	longwl[260] = '\0';
	n = rec_provreq_name(longwl, "prov", 1);
	cr_assert_eq(strlen(n), 253);
	cr_assert_eq(n[247], '-');
	/* Kueue's suffix: the first 5 hex digits of the full name's SHA-1 */
	cr_assert_str_eq(n + 248, "4aad0");
	cu_free(n);
}

Test(provreq, managed_resources_and_merge)
{
	static const struct {
		const char *extra;
		size_t n;
		const char *first;
		int32_t count;
	} cases[] = {
	    {"", 2, "main", 3},
	    {",\"managedResources\":[\"nvidia.com/gpu\"]", 1, "gpu", 2},
	    {",\"managedResources\":[\"example.com/none\"]", 0, NULL, 0},
	    {",\"podSetMergePolicy\":\"IdenticalPodTemplates\"", 2, "main", 3},
	};
	json_t *wl = wl_doc("False", "true");
	struct api_workload dwl;
	size_t i;

	wl_typed(wl, &dwl);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *d = prc_doc(cases[i].extra);
		struct rec_provreq_podset *v;
		struct rec_prc p;
		size_t n;
		bool needed;
		cu_error err;

		decode(d, &p);
		cr_assert_eq(
		    rec_provreq_podsets(&dwl, &p, &v, &n, &err), CU_OK);
		cr_assert_eq(n, cases[i].n, "case %zu", i);
		if (n > 0) {
			cr_assert_str_eq(v[0].name, cases[i].first);
			cr_assert_eq(v[0].count, cases[i].count);
		}
		cr_assert_eq(
		    rec_provreq_needed(&dwl, &p, &needed, &err), CU_OK);
		cr_assert_eq(needed, n > 0, "case %zu", i);
		cu_free(v);
		json_decref(d);
	}
	api_workload_dispose(&dwl);
	json_decref(wl);
}

Test(provreq, merge_identical_templates)
{
	json_t *wl = wl_doc("False", "true");
	json_t *d = prc_doc(",\"podSetMergePolicy\":\"IdenticalPodTemplates\"");
	json_t *pss = json_object_get(json_object_get(wl, "spec"), "podSets");
	struct rec_provreq_podset *v;
	struct api_workload dwl;
	struct rec_prc p;
	size_t n;
	cu_error err;

	/* the same template twice: one merged pod set of 5 */
	json_object_set(json_array_get(pss, 1), "template",
	    json_object_get(json_array_get(pss, 0), "template"));
	wl_typed(wl, &dwl);
	decode(d, &p);
	cr_assert_eq(rec_provreq_podsets(&dwl, &p, &v, &n, &err), CU_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(v[0].count, 5);
	cu_free(v);
	api_workload_dispose(&dwl);
	json_decref(d);
	json_decref(wl);
}

Test(provreq, new_request_and_templates)
{
	json_t *wl = wl_doc("False", "true");
	json_t *d = prc_doc(",\"parameters\":{\"p\":\"v\"},"
			    "\"managedResources\":[\"nvidia.com/gpu\"]");
	json_t *pr, *pts, *pt;
	struct api_workload dwl;
	struct rec_prc p;
	struct api_resource_flavor rf;
	json_t *rfj = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			    "\"kind\":\"ResourceFlavor\",\"metadata\":{"
			    "\"name\":\"f\"},\"spec\":{\"nodeLabels\":{"
			    "\"pool\":\"gpu\"},\"tolerations\":[{\"key\":"
			    "\"gpu\",\"operator\":\"Exists\"}]}}");
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&rf, rfj, &err), CU_OK);
	wl_typed(wl, &dwl);
	decode(d, &p);
	cr_assert_eq(
	    rec_provreq_new(&dwl, "prov", &p, 1, &rf, 1, &pr, &pts, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(
	    api_json_str(json_object_get(pr, "metadata"), "name"), "w-prov-1");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(pr, "metadata"), "labels"),
		REC_LABEL_MANAGED)),
	    "true");
	cr_assert_str_eq(
	    api_json_str(
		json_array_get(json_object_get(json_object_get(pr, "metadata"),
				   "ownerReferences"),
		    0),
		"kind"),
	    "Workload");
	/* the config's parameters and the Workload's provreq annotation */
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(json_object_get(pr, "spec"), "parameters"),
		"p"),
	    "v");
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(json_object_get(pr, "spec"), "parameters"),
		"maxRunDurationSeconds"),
	    "600");
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(pr, "spec"), "podSets")),
	    1);
	cr_assert_eq(json_array_size(pts), 1);
	pt = json_array_get(pts, 0);
	cr_assert_str_eq(api_json_str(json_object_get(pt, "metadata"), "name"),
	    "ppt-w-prov-1-gpu");
	/* the flavor's tolerations appended */
	cr_assert_str_eq(
	    api_json_str(
		json_array_get(json_object_get(
				   json_object_get(
				       json_object_get(pt, "template"), "spec"),
				   "tolerations"),
		    0),
		"key"),
	    "gpu");
	/* flavor node labels merged, limits copied to requests */
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(
		    json_object_get(json_object_get(pt, "template"), "spec"),
		    "nodeSelector"),
		"pool"),
	    "gpu");
	cr_assert_not_null(json_object_get(
	    json_object_get(
		json_object_get(
		    json_array_get(
			json_object_get(
			    json_object_get(
				json_object_get(pt, "template"), "spec"),
			    "containers"),
			0),
		    "resources"),
		"requests"),
	    "nvidia.com/gpu"));
	json_decref(pr);
	json_decref(pts);
	api_resource_flavor_dispose(&rf);
	api_workload_dispose(&dwl);
	json_decref(rfj);
	json_decref(d);
	json_decref(wl);
}

/* A request named name with the condition cond True ("" none). */
static json_t *pr_doc(const char *name, const char *cond)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"%s\"},\"spec\":{"
	    "\"provisioningClassName\":\"cls\",\"podSets\":[{"
	    "\"podTemplateRef\":{\"name\":\"ppt-%s-main\"},\"count\":3}]},"
	    "\"status\":{\"provisioningClassDetails\":{\"zone\":\"z1\"},"
	    "\"conditions\":[%s%s%s]}}",
	    name, name, *cond ? "{\"type\":\"" : "", cond,
	    *cond ? "\",\"status\":\"True\",\"reason\":\"R\",\"message\":"
		    "\"m\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}"
		  : "");
	return parse(buf);
}

/* The typed forms the check-state decisions take. */
static struct api_provreq *pr_typed(json_t *doc, struct api_provreq *out)
{
	cu_error err;

	if (doc == NULL)
		return NULL;
	cr_assert_eq(api_provreq_decode(out, doc, &err), CU_OK, "%s", err.msg);
	return out;
}

static enum api_check_state state_of(const char *name)
{
	int v;

	for (v = API_CHECK_PENDING; v <= API_CHECK_REJECTED; v++)
		if (strcmp(api_check_state_name((enum api_check_state)v),
			name) == 0)
			return (enum api_check_state)v;
	cr_assert_fail("state %s", name);
	return API_CHECK_UNSET;
}

/* Check "prov" in state, message "", lastTransitionTime T0 (retry > 0:
 * retryCount). */
static void check_init(
    struct api_admission_check_state *c, const char *state, int retry)
{
	memset(c, 0, sizeof(*c));
	c->name = cu_strdup("prov");
	c->message = cu_strdup("");
	cr_assert(c->name != NULL && c->message != NULL);
	c->state = state_of(state);
	c->has_last_transition = true;
	c->last_transition_ns = T0_NS;
	c->has_retry_count = retry > 0;
	c->retry_count = retry;
}

Test(provreq, conditions_to_check_state)
{
	static const struct {
		const char *pr;	   /* request name ("" none) */
		const char *cond;  /* its True condition */
		const char *state; /* the check's state before */
		int retry_count;
		const char *admitted;
		const char *active;
		int prc; /* 0: the check is inactive */
		int changed;
		const char *want;  /* state after */
		const char *msg;   /* message after (NULL: not checked) */
		int requeue_after; /* -1: absent */
	} cases[] = {
	    /* inactive check */
	    {"", "", "Pending", 0, "False", "true", 0, 1, "Pending",
		REC_PROVREQ_MSG_INACTIVE, -1},
	    /* no condition yet */
	    {"w-prov-1", "", "Pending", 0, "False", "true", 1, 0, "Pending", "",
		-1},
	    {"w-prov-1", "Provisioned", "Pending", 0, "False", "true", 1, 1,
		"Ready", "m", -1},
	    {"w-prov-1", "Provisioned", "Ready", 0, "False", "true", 1, 0,
		"Ready", NULL, -1},
	    /* Failed, attempt 1 of limit 2: Retry, backoff 10s */
	    {"w-prov-1", "Failed", "Pending", 0, "False", "true", 1, 1, "Retry",
		"Retrying after failure: m", 10},
	    /* attempt 2 after one retry: backoff doubled */
	    {"w-prov-2", "Failed", "Pending", 1, "False", "true", 1, 1, "Retry",
		"Retrying after failure: m", 20},
	    /* attempt 3 > limit 2: Rejected */
	    {"w-prov-3", "Failed", "Pending", 2, "False", "true", 1, 1,
		"Rejected", "m", -1},
	    /* an old request (attempt 1, retryCount 1): no new Retry */
	    {"w-prov-1", "Failed", "Pending", 1, "False", "true", 1, 1,
		"Pending", "Retrying after failure: m", -1},
	    {"w-prov-1", "BookingExpired", "Pending", 0, "False", "true", 1, 1,
		"Retry", "Retrying after booking expired: m", 10},
	    /* BookingExpired once Admitted: nothing */
	    {"w-prov-1", "BookingExpired", "Ready", 0, "True", "true", 1, 0,
		"Ready", NULL, -1},
	    {"w-prov-1", "CapacityRevoked", "Ready", 0, "True", "true", 1, 1,
		"Rejected", "m", -1},
	    /* CapacityRevoked of an inactive Workload: nothing */
	    {"w-prov-1", "CapacityRevoked", "Ready", 0, "True", "false", 1, 0,
		"Ready", NULL, -1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *wl = wl_doc(cases[i].admitted, cases[i].active);
		json_t *d = prc_doc(",\"retryStrategy\":{\"backoffLimitCount\":"
				    "2,\"backoffBaseSeconds\":10}");
		json_t *pr =
		    *cases[i].pr ? pr_doc(cases[i].pr, cases[i].cond) : NULL;
		struct api_admission_check_state chk;
		struct api_workload dwl;
		struct api_provreq dpr;
		struct rec_prc p;
		bool changed;

		check_init(&chk, cases[i].state, cases[i].retry_count);
		wl_typed(wl, &dwl);
		decode(d, &p);
		changed = rec_provreq_sync_state(&chk, &dwl,
		    cases[i].prc ? &p : NULL, true, pr_typed(pr, &dpr), NOW_NS);
		cr_assert_eq(changed, cases[i].changed != 0, "case %zu", i);
		cr_assert_str_eq(api_check_state_name(chk.state), cases[i].want,
		    "case %zu", i);
		if (cases[i].msg != NULL)
			cr_assert_str_eq(
			    chk.message, cases[i].msg, "case %zu", i);
		if (cases[i].requeue_after < 0)
			cr_assert_not(
			    chk.has_requeue_after_seconds, "case %zu", i);
		else
			cr_assert_eq(chk.requeue_after_seconds,
			    cases[i].requeue_after, "case %zu", i);
		if (strcmp(cases[i].state, cases[i].want) != 0)
			cr_assert_eq(chk.last_transition_ns, NOW_NS);
		api_admission_check_state_dispose(&chk);
		if (pr != NULL)
			api_provreq_dispose(&dpr);
		api_workload_dispose(&dwl);
		json_decref(pr);
		json_decref(d);
		json_decref(wl);
	}
}

Test(provreq, ready_pod_set_updates)
{
	json_t *wl = wl_doc("False", "true");
	json_t *d = prc_doc(",\"podSetUpdates\":{\"nodeSelector\":[{\"key\":"
			    "\"topology.kubernetes.io/zone\",\"valueFromProvi"
			    "sioningClassDetail\":\"zone\"}]}");
	json_t *pr = pr_doc("w-prov-1", "Provisioned");
	struct api_admission_check_state chk;
	const struct api_podset_update *u;
	struct api_workload dwl;
	struct api_provreq dpr;
	struct rec_prc p;

	check_init(&chk, "Pending", 0);
	wl_typed(wl, &dwl);
	decode(d, &p);
	cr_assert(rec_provreq_sync_state(
	    &chk, &dwl, &p, true, pr_typed(pr, &dpr), NOW_NS));
	cr_assert_eq(chk.n_pod_set_updates, 1);
	u = &chk.pod_set_updates[0];
	cr_assert_str_eq(u->name, "main");
	cr_assert_str_eq(
	    api_strmap_get(&u->annotations, REC_PROVREQ_ANN_CONSUME),
	    "w-prov-1");
	cr_assert_str_eq(
	    api_strmap_get(&u->annotations, REC_PROVREQ_ANN_CLASS), "cls");
	cr_assert_str_eq(
	    api_strmap_get(&u->node_selector, "topology.kubernetes.io/zone"),
	    "z1");
	api_admission_check_state_dispose(&chk);
	api_provreq_dispose(&dpr);
	api_workload_dispose(&dwl);
	json_decref(pr);
	json_decref(d);
	json_decref(wl);
}

Test(provreq, not_needed_is_ready)
{
	json_t *wl = wl_doc("False", "true");
	json_t *d = prc_doc("");
	struct api_admission_check_state chk;
	struct api_workload dwl;
	struct rec_prc p;

	check_init(&chk, "Pending", 0);
	wl_typed(wl, &dwl);
	decode(d, &p);
	cr_assert(rec_provreq_sync_state(&chk, &dwl, &p, false, NULL, NOW_NS));
	cr_assert_eq(chk.state, API_CHECK_READY);
	cr_assert_str_eq(chk.message, REC_PROVREQ_MSG_NOT_NEEDED);
	cr_assert_eq(chk.n_pod_set_updates, 0);
	api_admission_check_state_dispose(&chk);
	api_workload_dispose(&dwl);
	json_decref(d);
	json_decref(wl);
}

Test(provreq, wants_new_attempt)
{
	static const struct {
		const char *pr, *cond, *state, *admitted;
		int retry_count, wants, attempt;
	} cases[] = {
	    {"", "", "Pending", "False", 0, 1, 1},
	    /* after one retry the previous request was deleted: attempt 2 */
	    {"", "", "Pending", "False", 1, 1, 2},
	    {"w-prov-1", "", "Pending", "False", 0, 0, 1},
	    {"w-prov-1", "Failed", "Pending", "False", 1, 1, 2},
	    /* Retry: wait for the eviction */
	    {"w-prov-1", "Failed", "Retry", "False", 0, 0, 1},
	    {"w-prov-1", "BookingExpired", "Pending", "False", 1, 1, 2},
	    {"w-prov-1", "BookingExpired", "Pending", "True", 1, 0, 2},
	    {"w-prov-1", "Provisioned", "Ready", "False", 0, 0, 1},
	    {"", "", "Ready", "False", 0, 0, 1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *wl = wl_doc(cases[i].admitted, "true");
		json_t *pr =
		    *cases[i].pr ? pr_doc(cases[i].pr, cases[i].cond) : NULL;
		struct api_admission_check_state chk;
		struct api_workload dwl;
		struct api_provreq dpr;
		int32_t attempt = 0;

		check_init(&chk, cases[i].state, cases[i].retry_count);
		/* retryCount 0 is written out here */
		chk.has_retry_count = true;
		wl_typed(wl, &dwl);
		cr_assert_eq(rec_provreq_wants_new(
				 &chk, &dwl, pr_typed(pr, &dpr), &attempt),
		    cases[i].wants != 0, "case %zu", i);
		if (cases[i].wants)
			cr_assert_eq(attempt, cases[i].attempt, "case %zu", i);
		api_admission_check_state_dispose(&chk);
		if (pr != NULL)
			api_provreq_dispose(&dpr);
		api_workload_dispose(&dwl);
		json_decref(pr);
		json_decref(wl);
	}
}

Test(provreq, synced_with_config)
{
	json_t *d = prc_doc(",\"parameters\":{\"a\":\"1\"}");
	json_t *ok = parse("{\"spec\":{\"provisioningClassName\":\"check-"
			   "capacity.autoscaling.x-k8s.io\",\"parameters\":{"
			   "\"a\":\"1\",\"b\":\"2\"}}}");
	json_t *cls = parse("{\"spec\":{\"provisioningClassName\":\"other\","
			    "\"parameters\":{\"a\":\"1\"}}}");
	json_t *par = parse("{\"spec\":{\"provisioningClassName\":\"check-"
			    "capacity.autoscaling.x-k8s.io\",\"parameters\":{"
			    "\"a\":\"2\"}}}");
	struct rec_prc p;

	decode(d, &p);
	cr_assert(rec_provreq_synced_with(ok, &p));
	cr_assert_not(rec_provreq_synced_with(cls, &p));
	cr_assert_not(rec_provreq_synced_with(par, &p));
	json_decref(ok);
	json_decref(cls);
	json_decref(par);
	json_decref(d);
}

Test(provreq, retry_requeue_at)
{
	json_t *j = parse(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":\"u\","
	    "\"resourceVersion\":\"3\"},\"spec\":{\"queueName\":\"lq\","
	    "\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{"
	    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}]},\"status\":{"
	    "\"admissionChecks\":[{\"name\":\"a\",\"state\":\"Retry\","
	    "\"message\":\"\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	    "\"requeueAfterSeconds\":30},{\"name\":\"b\",\"state\":\"Pending\","
	    "\"message\":\"\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	    "\"requeueAfterSeconds\":300}]}}");
	struct api_workload wl;
	json_t *patch = NULL;
	cu_error err;
	const int64_t t0 = 1767225600LL * 1000000000LL;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	/* only Retry checks count */
	cr_assert_eq(rec_acheck_requeue_at(&wl), t0 + 30LL * 1000000000LL);
	cr_assert_eq(
	    rec_wl_status_check_requeue_at(&wl, t0, &patch, &err), CU_OK);
	cr_assert_not_null(patch);
	cr_assert_str_eq(
	    api_json_str(json_object_get(
			     json_object_get(patch, "status"), "requeueState"),
		"requeueAt"),
	    "2026-01-01T00:00:30Z");
	json_decref(patch);
	/* past: nothing */
	cr_assert_eq(rec_wl_status_check_requeue_at(
			 &wl, t0 + 40LL * 1000000000LL, &patch, &err),
	    CU_OK);
	cr_assert_null(patch);
	api_workload_dispose(&wl);
	json_decref(j);
}
