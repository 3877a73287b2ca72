/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_workload_test.c - the Workload's admission check
 * states in the typed model: a Ready check with the podSetUpdates Kueue's
 * provisioning controller writes (annotations, nodeSelector) and one
 * carrying labels and tolerations decode field by field and re-encode to
 * the same document; a model that drops its podSetUpdates encodes without
 * the key (omitempty); a missing name, a wrong-typed map and too many
 * tolerations or updates are refused with the field's path.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/model.h"
#include "fixtures.h"

#define WL_HEAD                                                                \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","    \
	"\"metadata\":{\"name\":\"job-a-1\",\"namespace\":\"ns\"},"            \
	"\"spec\":{\"queueName\":\"main\",\"podSets\":[{\"name\":\"main\","    \
	"\"count\":2,\"template\":{\"spec\":{\"containers\":[]}}}]},"          \
	"\"status\":{\"admissionChecks\":["

#define PROV_CHECK                                                             \
	"{\"name\":\"prov\",\"state\":\"Ready\",\"message\":\"Provisioned\","  \
	"\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","                     \
	"\"podSetUpdates\":[{\"name\":\"main\",\"annotations\":{"              \
	"\"autoscaling.x-k8s.io/consume-provisioning-request\":"               \
	"\"job-a-1-prov-1\",\"autoscaling.x-k8s.io/provisioning-class-name\":" \
	"\"queued-provisioning.gke.io\"},\"nodeSelector\":{"                   \
	"\"cloud.google.com/gke-nodepool\":\"pool-1\"}}]}"

#define LABEL_CHECK                                                            \
	"{\"name\":\"lbl\",\"state\":\"Retry\",\"message\":\"again\","         \
	"\"lastTransitionTime\":\"2026-01-01T00:00:05Z\",\"retryCount\":1,"    \
	"\"requeueAfterSeconds\":60,\"podSetUpdates\":[{\"name\":\"main\","    \
	"\"labels\":{\"team\":\"a\"},\"tolerations\":[{\"key\":\"gpu\","       \
	"\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}]}"

static json_t *workload_with(const char *checks)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s%s]}}", WL_HEAD, checks);
	return fx_parse(buf);
}

Test(api_model_workload, check_states_with_pod_set_updates)
{
	struct api_workload wl;
	const struct api_admission_check_state *c;
	const struct api_podset_update *u;
	json_t *j = workload_with(PROV_CHECK "," LABEL_CHECK), *out = NULL;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(wl.status.n_admission_checks, 2);
	c = &wl.status.admission_checks[0];
	cr_assert_str_eq(c->name, "prov");
	cr_assert_eq(c->state, API_CHECK_READY);
	cr_assert_str_eq(c->message, "Provisioned");
	cr_assert(c->has_last_transition);
	cr_assert_not(c->has_requeue_after_seconds);
	cr_assert_eq(c->n_pod_set_updates, 1);
	u = &c->pod_set_updates[0];
	cr_assert_str_eq(u->name, "main");
	cr_assert_str_eq(
	    api_strmap_get(&u->annotations,
		"autoscaling.x-k8s.io/consume-provisioning-request"),
	    "job-a-1-prov-1");
	cr_assert_str_eq(
	    api_strmap_get(&u->node_selector, "cloud.google.com/gke-nodepool"),
	    "pool-1");
	cr_assert_eq(u->labels.n, 0);
	cr_assert_eq(u->n_tolerations, 0);
	c = &wl.status.admission_checks[1];
	cr_assert_eq(c->state, API_CHECK_RETRY);
	cr_assert(c->has_requeue_after_seconds);
	cr_assert_eq(c->requeue_after_seconds, 60);
	cr_assert_eq(c->retry_count, 1);
	u = &c->pod_set_updates[0];
	cr_assert_str_eq(api_strmap_get(&u->labels, "team"), "a");
	cr_assert_eq(u->n_tolerations, 1);
	cr_assert_str_eq(u->tolerations[0].key, "gpu");
	cr_assert_eq(u->tolerations[0].op, API_TOL_OP_EXISTS);
	cr_assert_eq(u->tolerations[0].effect, API_EFFECT_NO_SCHEDULE);
	cr_assert_eq(api_workload_encode(&out, &wl, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_workload_dispose(&wl);
	json_decref(j);
}

/* The model is the truth on encode: updates it dropped leave the wire. */
Test(api_model_workload, dropped_pod_set_updates_are_omitted)
{
	struct api_workload wl;
	struct api_admission_check_state *c;
	json_t *j = workload_with(PROV_CHECK), *out = NULL, *co;
	cu_error err;
	size_t i;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	c = &wl.status.admission_checks[0];
	for (i = 0; i < c->n_pod_set_updates; i++)
		api_podset_update_dispose(&c->pod_set_updates[i]);
	c->n_pod_set_updates = 0;
	cr_assert_eq(api_workload_encode(&out, &wl, &err), CU_OK);
	co = json_array_get(
	    json_object_get(json_object_get(out, "status"), "admissionChecks"),
	    0);
	cr_assert_not_null(co);
	cr_assert_null(json_object_get(co, "podSetUpdates"));
	cr_assert_str_eq(
	    json_string_value(json_object_get(co, "name")), "prov");
	json_decref(out);
	api_workload_dispose(&wl);
	json_decref(j);
}

static int decode_workload(const json_t *j, cu_error *err)
{
	struct api_workload wl;
	int rc = api_workload_decode(&wl, j, err);

	api_workload_dispose(&wl);
	return rc;
}

static void refused(const char *checks, const char *msg)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s%s]}}", WL_HEAD, checks);
	fx_refused(decode_workload, buf, msg);
}

#define CHK_HEAD                                                               \
	"{\"name\":\"c\",\"state\":\"Ready\",\"lastTransitionTime\":"          \
	"\"2026-01-01T00:00:00Z\",\"podSetUpdates\":"
#define TOL "{\"operator\":\"Exists\"}"

Test(api_model_workload, pod_set_updates_refused)
{
	refused(CHK_HEAD "[{\"labels\":{}}]}",
	    "status.admissionChecks[0].podSetUpdates[0].name: "
	    "Required value");
	refused(CHK_HEAD "[{\"name\":\"m\",\"nodeSelector\":{\"a\":1}}]}",
	    "status.admissionChecks[0].podSetUpdates[0]."
	    "nodeSelector.a: Invalid type: expected string, got integer");
	refused(CHK_HEAD "[{\"name\":\"m\",\"tolerations\":[" TOL "," TOL
			 "," TOL "," TOL "," TOL "," TOL "," TOL "," TOL "," TOL
			 "]}]}",
	    "status.admissionChecks[0].podSetUpdates[0]."
	    "tolerations: Too many: 9: must have at most 8 items");
	refused(CHK_HEAD "{}}",
	    "status.admissionChecks[0].podSetUpdates: Invalid "
	    "type: expected array, got object");
}
