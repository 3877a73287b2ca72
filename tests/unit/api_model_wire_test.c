/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_wire_test.c - the decode-only kinds the
 * controller reads besides its own: a ProvisioningRequest (pod sets,
 * conditions, class details), a Secret's data, the caBundles of a webhook
 * configuration and of a CRD's conversion webhook; wrong-typed or missing
 * fields refused with the field's path; the caBundle setters change only
 * what differs; an owner reference, a string map, tolerations and
 * conditions back on the wire; a pod template's scheduling fields.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/wire.h"
#include "tests/unit/fixtures.h"

#define PR                                                                     \
	"{\"apiVersion\":\"autoscaling.x-k8s.io/v1\",\"kind\":"                \
	"\"ProvisioningRequest\",\"metadata\":{\"name\":\"wl-c-1\","           \
	"\"namespace\":\"ns\",\"uid\":\"u1\"},\"spec\":{"                      \
	"\"provisioningClassName\":\"cls\",\"parameters\":{\"a\":\"b\"},"      \
	"\"podSets\":[{\"podTemplateRef\":{\"name\":\"ppt-1\"},"               \
	"\"count\":4},{\"podTemplateRef\":{\"name\":\"ppt-2\"},"               \
	"\"count\":1}]},\"status\":{\"conditions\":[{\"type\":"                \
	"\"Provisioned\",\"status\":\"True\",\"reason\":\"R\",\"message\":"    \
	"\"m\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}],"             \
	"\"provisioningClassDetails\":{\"k\":\"v\"}}}"

Test(api_model_wire, provreq_decodes)
{
	struct api_provreq pr;
	json_t *j = fx_parse(PR);
	cu_error err;

	cr_assert_eq(api_provreq_decode(&pr, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(pr.meta.uid, "u1");
	cr_assert_str_eq(pr.spec.class_name, "cls");
	cr_assert_str_eq(api_strmap_get(&pr.spec.parameters, "a"), "b");
	cr_assert_eq(pr.spec.n_podsets, 2);
	cr_assert_str_eq(pr.spec.podsets[1].template_name, "ppt-2");
	cr_assert_eq(pr.spec.podsets[0].count, 4);
	cr_assert(api_conditions_true(&pr.status.conditions, "Provisioned"));
	cr_assert_str_eq(api_strmap_get(&pr.status.class_details, "k"), "v");
	api_provreq_dispose(&pr);
	json_decref(j);
}

#define DEC(K)                                                                 \
	static int dec_##K(const json_t *j, cu_error *err)                     \
	{                                                                      \
		struct api_##K x;                                              \
		int rc = api_##K##_decode(&x, j, err);                         \
                                                                               \
		api_##K##_dispose(&x);                                         \
		return rc;                                                     \
	}
DEC(provreq)
DEC(secret)
DEC(webhook_configuration)
DEC(crd)

Test(api_model_wire, bad_fields_named)
{
	fx_refused(dec_provreq, "{\"spec\":{\"provisioningClassName\":\"c\"}}",
	    "spec.podSets: Required value");
	fx_refused(dec_provreq,
	    "{\"spec\":{\"provisioningClassName\":\"c\",\"podSets\":[{"
	    "\"podTemplateRef\":{},\"count\":1}]}}",
	    "spec.podSets[0].podTemplateRef.name: Required value");
	fx_refused(dec_provreq,
	    "{\"spec\":{\"provisioningClassName\":\"c\",\"podSets\":[{"
	    "\"podTemplateRef\":{\"name\":\"t\"},\"count\":\"1\"}]}}",
	    "spec.podSets[0].count: Invalid type: expected integer, got "
	    "string");
	fx_refused(dec_provreq, "{\"kind\":\"Job\",\"spec\":{}}",
	    "kind: Invalid value: \"Job\": expected \"ProvisioningRequest\"");
	fx_refused(dec_secret, "{\"data\":{\"tls.key\":7}}",
	    "data.tls.key: Invalid type: expected string, got integer");
	fx_refused(dec_webhook_configuration,
	    "{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":"
	    "1}}]}",
	    "webhooks[0].clientConfig.caBundle: Invalid type: expected "
	    "string, got integer");
	fx_refused(dec_webhook_configuration, "{\"webhooks\":[{}]}",
	    "webhooks[0].name: Required value");
	fx_refused(dec_webhook_configuration, "{\"kind\":\"Secret\"}",
	    "kind: Invalid value: \"Secret\": expected a webhook "
	    "configuration");
	fx_refused(dec_crd, "{\"spec\":{\"conversion\":{\"strategy\":5}}}",
	    "spec.conversion.strategy: Invalid type: expected string, got "
	    "integer");
}

Test(api_model_wire, secret_and_bundles)
{
	struct api_secret sec;
	struct api_webhook_configuration wc;
	struct api_crd crd;
	json_t *j =
	    fx_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
		     "\"metadata\":{\"resourceVersion\":\"9\"},\"type\":"
		     "\"Opaque\",\"data\":{\"ca.crt\":\"QQ==\"}}");
	cu_error err;

	cr_assert_eq(api_secret_decode(&sec, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(sec.type, "Opaque");
	cr_assert_str_eq(sec.meta.resource_version, "9");
	cr_assert_str_eq(api_strmap_get(&sec.data, "ca.crt"), "QQ==");
	api_secret_dispose(&sec);
	json_decref(j);

	j = fx_parse(
	    "{\"kind\":\"ValidatingWebhookConfiguration\",\"webhooks\":"
	    "[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":\"QQ==\"}},"
	    "{\"name\":\"b\",\"clientConfig\":{}},{\"name\":\"c\"}]}");
	cr_assert_eq(api_webhook_configuration_decode(&wc, j, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(wc.n_webhooks, 3);
	cr_assert_str_eq(wc.webhooks[0].ca_bundle, "QQ==");
	cr_assert_null(wc.webhooks[1].ca_bundle);
	api_webhook_configuration_dispose(&wc);
	cr_assert(!api_webhook_configuration_set_ca_bundle(j, NULL));
	cr_assert(api_webhook_configuration_set_ca_bundle(j, "QQ=="));
	cr_assert(!api_webhook_configuration_set_ca_bundle(j, "QQ=="));
	cr_assert_eq(api_webhook_configuration_decode(&wc, j, &err), CU_OK);
	cr_assert_str_eq(wc.webhooks[1].ca_bundle, "QQ==");
	cr_assert_null(wc.webhooks[2].ca_bundle, "no clientConfig: untouched");
	api_webhook_configuration_dispose(&wc);
	json_decref(j);

	j = fx_parse("{\"spec\":{\"conversion\":{\"strategy\":\"None\","
		     "\"webhook\":{\"clientConfig\":{}}}}}");
	cr_assert(!api_crd_set_ca_bundle(j, "Qg=="), "strategy None");
	json_object_set_new(
	    json_object_get(json_object_get(j, "spec"), "conversion"),
	    "strategy", json_string("Webhook"));
	cr_assert(api_crd_set_ca_bundle(j, "Qg=="));
	cr_assert_eq(api_crd_decode(&crd, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(crd.conversion_strategy, "Webhook");
	cr_assert_str_eq(crd.ca_bundle, "Qg==");
	api_crd_dispose(&crd);
	json_decref(j);
}

Test(api_model_wire, owner_ref_and_strmap_on_the_wire)
{
	struct api_owner_ref r = {(char *)"v1", (char *)"Pod", (char *)"p",
	    (char *)"u", true, true, false, false};
	struct api_kv kv[] = {{(char *)"a", (char *)"1"}};
	struct api_strmap m = {kv, 1};
	json_t *o = api_owner_ref_encode(&r), *want;

	want =
	    fx_parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\","
		     "\"uid\":\"u\",\"controller\":true}");
	cr_assert(json_equal(o, want));
	json_decref(o);
	json_decref(want);
	o = api_strmap_encode(&m);
	want = fx_parse("{\"a\":\"1\"}");
	cr_assert(json_equal(o, want));
	json_decref(o);
	json_decref(want);
}

Test(api_model_wire, tolerations_and_conditions_back_on_the_wire)
{
	struct api_resource_flavor rf;
	struct api_pod pod;
	json_t *j = fx_parse("{\"kind\":\"ResourceFlavor\",\"metadata\":{"
			     "\"name\":\"f\"},\"spec\":{\"tolerations\":[{"
			     "\"key\":\"k\",\"operator\":\"Exists\",\"effect\":"
			     "\"NoSchedule\"},{\"key\":\"a\",\"value\":\"b\","
			     "\"tolerationSeconds\":5}]}}");
	json_t *out = NULL, *st;
	cu_error err;

	cr_assert_eq(
	    api_resource_flavor_decode(&rf, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_tolerations_encode(rf.spec.tolerations,
			 rf.spec.n_tolerations, &out, &err),
	    CU_OK);
	cr_assert(json_equal(
	    out, json_object_get(json_object_get(j, "spec"), "tolerations")));
	json_decref(out);
	cr_assert_eq(api_tolerations_encode(NULL, 0, &out, &err), CU_OK);
	cr_assert(json_is_array(out) && json_array_size(out) == 0);
	json_decref(out);
	api_resource_flavor_dispose(&rf);
	json_decref(j);

	j = fx_parse("{\"kind\":\"Pod\",\"status\":{\"conditions\":[{\"type\":"
		     "\"Ready\",\"status\":\"False\",\"lastProbeTime\":"
		     "\"2026-01-01T00:00:01Z\",\"lastTransitionTime\":"
		     "\"2026-01-01T00:00:00Z\",\"reason\":\"r\"}]}}");
	cr_assert_eq(api_pod_decode(&pod, j, &err), CU_OK, "%s", err.msg);
	st = json_object();
	cr_assert_eq(api_conditions_encode_status(
			 st, &pod.status.conditions, true, &err),
	    CU_OK);
	cr_assert(json_equal(st, json_object_get(j, "status")));
	api_conditions_dispose(&pod.status.conditions);
	json_decref(st);
	st = json_object();
	cr_assert_eq(api_conditions_encode_status(
			 st, &pod.status.conditions, true, &err),
	    CU_OK);
	cr_assert_null(json_object_get(st, "conditions"), "none: not written");
	json_decref(st);
	api_pod_dispose(&pod);
	json_decref(j);
}

Test(api_model_wire, pod_template_scheduling)
{
	struct api_pod_sched ps;
	json_t *j =
	    fx_parse("{\"spec\":{\"tolerations\":[{\"key\":\"k\","
		     "\"operator\":\"Exists\"}],\"nodeSelector\":{"
		     "\"pool\":\"a\"},\"affinity\":{\"nodeAffinity\":{"
		     "\"requiredDuringSchedulingIgnoredDuringExecution\":"
		     "{\"nodeSelectorTerms\":[]}}}}}");
	cu_error err;

	cr_assert_eq(api_pod_sched_decode(&ps, j, &err), CU_OK, "%s", err.msg);
	cr_assert(api_pod_sched_any(&ps));
	cr_assert_eq(ps.n_tolerations, 1);
	cr_assert_str_eq(api_strmap_get(&ps.node_selector, "pool"), "a");
	cr_assert_not_null(ps.required_node_affinity);
	api_pod_sched_dispose(&ps);
	json_decref(j);
	j = fx_parse("{\"spec\":{\"containers\":[]}}");
	cr_assert_eq(api_pod_sched_decode(&ps, j, &err), CU_OK);
	cr_assert(!api_pod_sched_any(&ps));
	api_pod_sched_dispose(&ps);
	json_decref(j);
	j = fx_parse("{\"spec\":{\"nodeSelector\":{\"pool\":1}}}");
	cr_assert_neq(api_pod_sched_decode(&ps, j, &err), CU_OK);
	cr_assert_str_eq(err.msg, "spec.nodeSelector.pool: Invalid type: "
				  "expected string, got integer");
	json_decref(j);
	j = fx_parse("{\"spec\":{\"tolerations\":{}}}");
	cr_assert_neq(api_pod_sched_decode(&ps, j, &err), CU_OK);
	cr_assert_str_eq(err.msg,
	    "spec.tolerations: Invalid type: expected array, got object");
	json_decref(j);
}
