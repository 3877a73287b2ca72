/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_proto_test.c - tests/apiserver/proto.c: JSON to
 * protobuf and back for the types with a JSON form of their own (Time,
 * MicroTime, Quantity, IntOrString, bytes, maps), zeros kept only where
 * Go keeps them, the envelope, and Accept negotiation.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

/* j [borrowed] encoded and decoded again [owned] */
static json_t *round_trip(json_t *j)
{
	cu_error err = {0};
	size_t len = 0;
	char *pb = as_proto_encode(j, &len);
	json_t *back;

	cr_assert_not_null(pb, "encode");
	cr_assert(len > 4 && memcmp(pb, "k8s\0", 4) == 0, "magic");
	back = as_proto_decode(pb, len, &err);
	cu_free(pb);
	cr_assert_not_null(back, "decode: %s", err.msg);
	return back;
}

static void same(json_t *got, const char *want_text)
{
	json_t *want = json_loads(want_text, 0, NULL);
	size_t len;
	char *g = as_json_dump(got, &len);

	cr_assert_not_null(want);
	cr_assert(json_equal(got, want), "got %s\nwant %s", g, want_text);
	cu_free(g);
	json_decref(want);
}

Test(proto, pod_special_types)
{
	const char *text =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"p\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
	    "\"labels\":{\"a\":\"\"}},\"spec\":{\"containers\":[{\"name\":"
	    "\"c\",\"resources\":{\"limits\":{\"cpu\":\"1500m\",\"gpu\":2}},"
	    "\"readinessProbe\":{\"httpGet\":{\"port\":\"http\"}},"
	    "\"livenessProbe\":{\"tcpSocket\":{\"port\":8080}}}],"
	    "\"terminationGracePeriodSeconds\":0,\"hostNetwork\":false,"
	    "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{\"sizeLimit\":"
	    "\"1Gi\"}},{\"name\":\"w\",\"configMap\":{\"name\":\"cm\"}}],"
	    "\"initContainers\":[{\"name\":\"i\",\"env\":[{\"name\":\"E\","
	    "\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}"
	    "}]}]},\"status\":{\"phase\":\"\"}}";
	json_t *j = json_loads(text, 0, NULL), *back = round_trip(j);

	/* a Quantity number becomes its string; terminationGracePeriodSeconds
	 * is a pointer (zero kept), hostNetwork a plain bool (zero dropped),
	 * like status.phase ""; embedded structs (a Probe's handler, a
	 * Volume's source, a key selector's name) stay inline */
	same(back,
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"p\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
	    "\"labels\":{\"a\":\"\"}},\"spec\":{\"containers\":[{\"name\":"
	    "\"c\",\"resources\":{\"limits\":{\"cpu\":\"1500m\",\"gpu\":\"2\"}}"
	    ","
	    "\"readinessProbe\":{\"httpGet\":{\"port\":\"http\"}},"
	    "\"livenessProbe\":{\"tcpSocket\":{\"port\":8080}}}],"
	    "\"terminationGracePeriodSeconds\":0,"
	    "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{\"sizeLimit\":"
	    "\"1Gi\"}},{\"name\":\"w\",\"configMap\":{\"name\":\"cm\"}}],"
	    "\"initContainers\":[{\"name\":\"i\",\"env\":[{\"name\":\"E\","
	    "\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}"
	    "}]}]},\"status\":{}}");
	json_decref(back);
	json_decref(j);
}

Test(proto, secret_bytes_and_lease_microtime)
{
	json_t *j = json_loads(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
	    "\"s\"},\"data\":{\"k\":\"AAEC\",\"e\":\"\"},\"immutable\":false}",
	    0, NULL);
	json_t *back = round_trip(j);

	same(back, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{"
		   "\"name\":\"s\"},\"data\":{\"k\":\"AAEC\",\"e\":\"\"},"
		   "\"immutable\":false}");
	json_decref(back);
	json_decref(j);
	j = json_loads(
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":"
	    "\"Lease\",\"metadata\":{\"name\":\"l\"},\"spec\":{"
	    "\"holderIdentity\":\"me\",\"renewTime\":"
	    "\"2026-01-02T03:04:05.123456Z\",\"leaseDurationSeconds\""
	    ":15}}",
	    0, NULL);
	back = round_trip(j);
	same(back,
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":"
	    "\"Lease\",\"metadata\":{\"name\":\"l\"},\"spec\":{"
	    "\"holderIdentity\":\"me\",\"renewTime\":"
	    "\"2026-01-02T03:04:05.123456Z\",\"leaseDurationSeconds\":15}}");
	json_decref(back);
	json_decref(j);
}

Test(proto, status_and_unknown_kinds)
{
	json_t *st = as_status(404, "NotFound", "gone"), *back;
	json_t *cr = json_pack("{s:s, s:s}", "apiVersion",
	    "kueue.x-k8s.io/v1beta2", "kind", "Workload");
	size_t len;

	back = round_trip(st);
	cr_assert_str_eq(
	    json_string_value(json_object_get(back, "reason")), "NotFound");
	cr_assert_eq(json_integer_value(json_object_get(back, "code")), 404);
	json_decref(back);
	json_decref(st);
	cr_assert_null(as_proto_encode(cr, &len), "no message for a CR");
	json_decref(cr);
}

Test(proto, garbage_is_an_error)
{
	cu_error err = {0};

	cr_assert_null(as_proto_decode("json", 4, &err));
	cr_assert_eq(err.code, CU_EPARSE);
	cr_assert(strstr(err.msg, "expected prefix") != NULL, "%s", err.msg);
	cu_error_clear(&err);
	cr_assert_null(as_proto_decode("k8s\0\x0a\x05", 6, &err));
	cr_assert_eq(err.code, CU_EPARSE);
}

Test(proto, negotiation)
{
	const char *pb = AS_PROTOBUF;

	cr_assert_eq(as_proto_accept(NULL, true), AS_ACCEPT_JSON);
	cr_assert_eq(as_proto_accept(pb, true), AS_ACCEPT_PROTOBUF);
	cr_assert_eq(as_proto_accept(pb, false), AS_ACCEPT_NONE);
	cr_assert_eq(as_proto_accept("application/vnd.kubernetes.protobuf,"
				     "application/json",
			 false),
	    AS_ACCEPT_JSON);
	cr_assert_eq(as_proto_accept("application/json, "
				     "application/vnd.kubernetes.protobuf",
			 true),
	    AS_ACCEPT_JSON);
	cr_assert_eq(as_proto_accept(" Application/Vnd.Kubernetes.Protobuf ; "
				     "q=1, */*",
			 true),
	    AS_ACCEPT_PROTOBUF);
	/* Tables are the handlers' business, never protobuf here */
	cr_assert_eq(as_proto_accept("application/vnd.kubernetes.protobuf;"
				     "as=Table;v=v1;g=meta.k8s.io",
			 true),
	    AS_ACCEPT_JSON);
	cr_assert_eq(as_proto_accept("text/html", true), AS_ACCEPT_JSON);
	cr_assert(as_proto_is_protobuf(
	    "application/vnd.kubernetes.protobuf; charset=binary"));
	cr_assert(!as_proto_is_protobuf("application/json"));
	cr_assert(!as_proto_is_protobuf(NULL));
}
