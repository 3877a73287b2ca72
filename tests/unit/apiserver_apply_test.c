/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_apply_test.c - tests/apiserver/apply.c: field sets
 * of objects in kube's FieldsV1 encoding (built-in merge keys, CRD list
 * and map types), the FieldsV1 decoder, the structured merge, and apply
 * and update ownership: conflicts with kube's message, force, removal of
 * fields no longer applied, shared ownership of equal values.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *v = json_loads(s, JSON_DECODE_ANY, &e);

	cr_assert_not_null(v, "bad test JSON %s: %s", s, e.text);
	return v;
}

static void same(json_t *got, const char *want, const char *what)
{
	json_t *w = J(want);
	char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

	cr_assert(json_equal(got, w), "%s: got %s, want %s", what,
	    g ? g : "(null)", want);
	cu_free(g);
	json_decref(w);
}

/* A CRD schema with every list and map type. */
static const char *crd_schema =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
    "\"properties\":{"
    "\"m\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "\"x-kubernetes-list-map-keys\":[\"name\",\"zone\"],"
    "\"items\":{\"type\":\"object\"}},"
    "\"s\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\"},"
    "\"a\":{\"type\":\"array\"},"
    "\"am\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\"},"
    "\"gm\":{\"type\":\"object\",\"additionalProperties\":"
    "{\"type\":\"string\"}}}}}}";

struct fields_case {
	const char *name;
	bool crd;
	const char *kind;
	const char *obj;
	const char *want; /* wire FieldsV1, or NULL: a key is missing */
};

static const struct fields_case fields_cases[] = {
    {"configmap", false, "ConfigMap",
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
	"\"c\",\"namespace\":\"d\",\"uid\":\"u\",\"labels\":{\"a\":\"b\"}},"
	"\"data\":{\"k\":\"v\"},\"status\":{\"x\":1}}",
	"{\"f:data\":{\"f:k\":{}},\"f:metadata\":{\"f:labels\":{\"f:a\":{}}}}"},
    {"containers by name, ports by port and protocol", false, "Pod",
	"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
	"\"args\":[\"x\"],\"ports\":[{\"containerPort\":80}]}],"
	"\"tolerations\":[{\"key\":\"k\"}]}}",
	"{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":"
	"{},\"f:name\":{},\"f:image\":{},\"f:args\":{},\"f:ports\":{"
	"\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":"
	"{},\"f:containerPort\":{}}}}},\"f:tolerations\":{}}}"},
    {"service ports by port", false, "Service",
	"{\"spec\":{\"ports\":[{\"port\":443,\"protocol\":\"TCP\"}],"
	"\"selector\":{\"app\":\"x\"}}}",
	"{\"f:spec\":{\"f:ports\":{\"k:{\\\"port\\\":443,\\\"protocol\\\":"
	"\\\"TCP\\\"}\":{\".\":{},\"f:port\":{},\"f:protocol\":{}}},"
	"\"f:selector\":{}}}"},
    {"finalizers are a set", false, "ConfigMap",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
	"{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a\\\"\":{},"
	"\"v:\\\"b\\\"\":{}}}}"},
    {"a container without its name", false, "Pod",
	"{\"spec\":{\"containers\":[{\"image\":\"i\"}]}}", NULL},
    {"crd list and map types", true, "Widget",
	"{\"spec\":{\"m\":[{\"name\":\"x\",\"zone\":\"z\",\"v\":1}],"
	"\"s\":[1,2],\"a\":[{\"q\":1}],\"am\":{\"p\":1},\"gm\":{\"k\":\"v\"},"
	"\"empty\":{}}}",
	"{\"f:spec\":{\"f:m\":{\"k:{\\\"name\\\":\\\"x\\\",\\\"zone\\\":"
	"\\\"z\\\"}\":{\".\":{},\"f:name\":{},\"f:zone\":{},\"f:v\":{}}},"
	"\"f:s\":{\"v:1\":{},\"v:2\":{}},\"f:a\":{},\"f:am\":{},"
	"\"f:gm\":{\"f:k\":{}},\"f:empty\":{}}}"},
    {"crd list-map item without a key", true, "Widget",
	"{\"spec\":{\"m\":[{\"name\":\"x\"}]}}", NULL},
};

static void check_fields_of(const struct fields_case *c)
{
	json_t *schema = J(crd_schema), *obj = J(c->obj);
	struct as_apply_type t = {c->crd ? schema : NULL, c->kind};
	json_t *set = as_fields_of(&t, obj), *wire;

	if (c->want == NULL) {
		cr_assert_null(set, "%s: a set without keys", c->name);
	} else {
		cr_assert_not_null(set, "%s", c->name);
		wire = as_fields_encode(set);
		same(wire, c->want, c->name);
		json_decref(wire);
	}
	json_decref(set);
	json_decref(obj);
	json_decref(schema);
}

struct decode_case {
	const char *in;
	bool ok;
};

static const struct decode_case decode_cases[] = {
    {"{}", true},
    {"{\"f:a\":{}}", true},
    {"{\"f:a\":{\".\":{},\"f:b\":{}}}", true},
    {"{\"f:l\":{\"k:{\\\"name\\\":\\\"x\\\"}\":{\".\":{},\"f:name\":{}}}}",
	true},
    {"{\"f:l\":{\"v:3\":{},\"i:0\":{}}}", true},
    {"[]", false},
    {"{\"x:a\":{}}", false},
    {"{\"f:a\":1}", false},
    {"{\".\":{\"f:a\":{}}}", false},
    {"{\"k:[1]\":{}}", false},
    {"{\"k:{bad\":{}}", false},
    {"{\"v:\":{}}", false},
};

static void check_decode(const struct decode_case *c)
{
	json_t *in = J(c->in), *set = NULL;
	cu_error err;
	int rc = as_fields_decode(in, &set, &err);

	if (!c->ok) {
		cr_assert_eq(rc, CU_EPARSE, "%s decoded", c->in);
		cr_assert_null(set);
	} else {
		json_t *back;

		cr_assert_eq(rc, CU_OK, "%s: %s", c->in, err.msg);
		back = as_fields_encode(set);
		same(back, c->in, "round trip");
		json_decref(back);
	}
	json_decref(set);
	json_decref(in);
}

Test(apply, set_algebra_and_paths)
{
	json_t *a = NULL, *b = NULL, *u, *d, *i, *p, *w;
	json_t *wa = J("{\"f:x\":{\".\":{},\"f:y\":{}},\"f:z\":{}}");
	json_t *wb = J("{\"f:x\":{},\"f:l\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{"
		       "\".\":{},\"f:image\":{}},\"v:\\\"s\\\"\":{}}}");

	cr_assert_eq(as_fields_decode(wa, &a, NULL), CU_OK);
	cr_assert_eq(as_fields_decode(wb, &b, NULL), CU_OK);
	u = as_fields_union(a, b);
	d = as_fields_diff(a, b);
	i = as_fields_intersect(a, b);
	w = as_fields_encode(d);
	same(w, "{\"f:x\":{\"f:y\":{}},\"f:z\":{}}", "a - b");
	json_decref(w);
	w = as_fields_encode(i);
	same(w, "{\"f:x\":{}}", "a & b");
	json_decref(w);
	p = as_fields_paths(u);
	same(p,
	    "[\".x\",\".x.y\",\".z\",\".l[name=\\\"c\\\"]\","
	    "\".l[name=\\\"c\\\"].image\",\".l[=\\\"s\\\"]\"]",
	    "paths");
	json_decref(p);
	json_decref(u);
	json_decref(d);
	json_decref(i);
	json_decref(a);
	json_decref(b);
	json_decref(wa);
	json_decref(wb);
}

struct merge_case {
	const char *name;
	const char *kind;
	const char *live, *cfg, *want;
};

static const struct merge_case merge_cases[] = {
    {"maps merge, scalars replace", "ConfigMap",
	"{\"data\":{\"a\":\"1\",\"b\":\"2\"}}", "{\"data\":{\"a\":\"9\"}}",
	"{\"data\":{\"a\":\"9\",\"b\":\"2\"}}"},
    {"containers merge by name", "Pod",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},"
	"{\"name\":\"b\",\"image\":\"2\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\",\"env\":[{\"name\":\"X\""
	"}]},{\"name\":\"c\",\"image\":\"3\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},"
	"{\"name\":\"b\",\"image\":\"2\",\"env\":[{\"name\":\"X\"}]},"
	"{\"name\":\"c\",\"image\":\"3\"}]}}"},
    {"atomic lists are replaced", "Pod",
	"{\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}"},
    {"finalizers are a union", "ConfigMap",
	"{\"metadata\":{\"finalizers\":[\"a\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}"},
    {"atomic maps are replaced", "Deployment",
	"{\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"1\"}}}}",
	"{\"spec\":{\"selector\":{\"matchLabels\":{\"b\":\"2\"}}}}",
	"{\"spec\":{\"selector\":{\"matchLabels\":{\"b\":\"2\"}}}}"},
};

static void check_merge(const struct merge_case *c)
{
	json_t *live = J(c->live), *cfg = J(c->cfg), *got;
	struct as_apply_type t = {NULL, c->kind};

	got = as_apply_merge(&t, live, cfg);
	same(got, c->want, c->name);
	json_decref(got);
	json_decref(live);
	json_decref(cfg);
}

/* ---- apply and update ownership ------------------------------------- */

static const struct as_apply_type cm_type = {NULL, "ConfigMap"};

static struct as_manager mgr(const char *name, bool force)
{
	struct as_manager m = {name, "v1", "2026-01-01T00:00:00Z", force, NULL};

	return m;
}

/* Apply cfg as manager `name` onto *live; returns the rc, replaces *live
 * on success and leaves the conflict Status in *conflict. */
static int do_apply(json_t **live, const char *cfg, const char *name,
    bool force, json_t **conflict)
{
	json_t *c = J(cfg), *out = NULL;
	struct as_manager m = mgr(name, force);
	cu_error err;
	int rc = as_apply(&cm_type, *live, c, &m, &out, conflict, &err);

	if (rc == CU_OK) {
		json_decref(*live);
		*live = out;
	}
	json_decref(c);
	return rc;
}

static json_t *fields_of_manager(json_t *obj, const char *name)
{
	json_t *mf = json_object_get(
		   json_object_get(obj, "metadata"), "managedFields"),
	       *e;
	size_t i;

	json_array_foreach(mf, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "manager")),
			name) == 0)
			return json_object_get(e, "fieldsV1");
	}
	return NULL;
}

#define CM(data) "{\"metadata\":{\"name\":\"c\"},\"data\":" data "}"

Test(apply, create_update_remove)
{
	json_t *obj = NULL, *conflict = NULL;

	cr_assert_eq(do_apply(&obj, CM("{\"a\":\"1\",\"b\":\"2\"}"), "m", false,
			 &conflict),
	    CU_OK);
	same(fields_of_manager(obj, "m"),
	    "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}", "owner after create");
	cr_assert_eq(
	    do_apply(&obj, CM("{\"a\":\"1\"}"), "m", false, &conflict), CU_OK);
	same(json_object_get(obj, "data"), "{\"a\":\"1\"}", "b removed");
	same(fields_of_manager(obj, "m"), "{\"f:data\":{\"f:a\":{}}}",
	    "owner after removal");
	json_decref(obj);
}

Test(apply, conflict_message_force_and_sharing)
{
	json_t *obj = NULL, *conflict = NULL, *st;

	cr_assert_eq(do_apply(&obj, CM("{\"a\":\"1\",\"b\":\"2\"}"), "first",
			 false, &conflict),
	    CU_OK);
	/* The same value: shared, no conflict. */
	cr_assert_eq(
	    do_apply(&obj, CM("{\"a\":\"1\"}"), "second", false, &conflict),
	    CU_OK);
	cr_assert_not_null(fields_of_manager(obj, "second"));
	/* Another value: a conflict with both owners, sorted. */
	cr_assert_eq(do_apply(&obj, CM("{\"a\":\"2\",\"b\":\"3\"}"), "third",
			 false, &conflict),
	    CU_ECONFLICT);
	st = conflict;
	cr_assert_eq(json_integer_value(json_object_get(st, "code")), 409);
	cr_assert_str_eq(json_string_value(json_object_get(st, "message")),
	    "Apply failed with 3 conflicts: conflicts with \"first\":\n"
	    "- .data.a\n- .data.b\nconflicts with \"second\":\n- .data.a");
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(st, "details"), "causes")),
	    3);
	same(json_array_get(
		 json_object_get(json_object_get(st, "details"), "causes"), 0),
	    "{\"type\":\"FieldManagerConflict\",\"message\":\"conflict with "
	    "\\\"first\\\"\",\"field\":\".data.a\"}",
	    "first cause");
	json_decref(conflict);
	conflict = NULL;
	cr_assert_eq(
	    do_apply(&obj, CM("{\"b\":\"3\"}"), "third", false, &conflict),
	    CU_ECONFLICT);
	cr_assert_str_eq(
	    json_string_value(json_object_get(conflict, "message")),
	    "Apply failed with 1 conflict: conflict with \"first\": .data.b");
	json_decref(conflict);
	conflict = NULL;
	/* Force: the field moves to the applier. */
	cr_assert_eq(
	    do_apply(&obj, CM("{\"a\":\"2\"}"), "third", true, &conflict),
	    CU_OK);
	same(json_object_get(obj, "data"), "{\"a\":\"2\",\"b\":\"2\"}",
	    "forced");
	same(fields_of_manager(obj, "first"), "{\"f:data\":{\"f:b\":{}}}",
	    "first keeps b");
	cr_assert_null(fields_of_manager(obj, "second"), "second lost a");
	/* first stops applying b: gone, nobody else owns it. */
	cr_assert_eq(
	    do_apply(&obj, CM("{}"), "first", false, &conflict), CU_OK);
	same(json_object_get(obj, "data"), "{\"a\":\"2\"}", "b removed");
	json_decref(obj);
}

Test(apply, update_takes_changed_fields)
{
	json_t *obj = NULL, *conflict = NULL, *next, *st;
	struct as_manager up = mgr("kubectl-edit", false);

	cr_assert_eq(do_apply(&obj, CM("{\"a\":\"1\",\"b\":\"2\"}"), "app",
			 false, &conflict),
	    CU_OK);
	next = json_deep_copy(obj);
	json_object_set_new(
	    json_object_get(next, "data"), "a", json_string("edited"));
	json_object_set_new(
	    json_object_get(next, "data"), "c", json_string("new"));
	cr_assert_eq(as_apply_track_update(&cm_type, obj, next, &up), CU_OK);
	same(fields_of_manager(next, "kubectl-edit"),
	    "{\"f:data\":{\"f:a\":{},\"f:c\":{}}}", "editor owns its changes");
	same(fields_of_manager(next, "app"), "{\"f:data\":{\"f:b\":{}}}",
	    "applier keeps b");
	st = json_object_get(
	    json_array_get(json_object_get(json_object_get(next, "metadata"),
			       "managedFields"),
		1),
	    "operation");
	cr_assert_str_eq(json_string_value(st), "Update");
	json_decref(obj);
	obj = next;
	cr_assert_eq(do_apply(&obj, CM("{\"a\":\"1\",\"b\":\"2\"}"), "app",
			 false, &conflict),
	    CU_ECONFLICT);
	cr_assert_str_eq(
	    json_string_value(json_object_get(conflict, "message")),
	    "Apply failed with 1 conflict: conflict with \"kubectl-edit\" "
	    "using v1 at 2026-01-01T00:00:00Z: .data.a");
	json_decref(conflict);
	json_decref(obj);
}

Test(apply, unchanged_update_keeps_managed_fields)
{
	json_t *obj = NULL, *conflict = NULL, *next;
	struct as_manager up = mgr("other", false);

	cr_assert_eq(
	    do_apply(&obj, CM("{\"a\":\"1\"}"), "app", false, &conflict),
	    CU_OK);
	next = json_deep_copy(obj);
	cr_assert_eq(as_apply_track_update(&cm_type, obj, next, &up), CU_OK);
	cr_assert(json_equal(obj, next), "a no-op update changes nothing");
	json_decref(next);
	json_decref(obj);
}

Test(apply, fields_of)
{
	size_t i;

	for (i = 0; i < sizeof(fields_cases) / sizeof(fields_cases[0]); i++)
		check_fields_of(&fields_cases[i]);
}

Test(apply, decode)
{
	size_t i;

	for (i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++)
		check_decode(&decode_cases[i]);
}

Test(apply, merge)
{
	size_t i;

	for (i = 0; i < sizeof(merge_cases) / sizeof(merge_cases[0]); i++)
		check_merge(&merge_cases[i]);
}

Test(apply, crd_merge_by_schema)
{
	json_t *schema = J(crd_schema);
	struct as_apply_type t = {schema, "Widget"};
	json_t *live = J("{\"spec\":{\"m\":[{\"name\":\"x\",\"zone\":\"a\","
			 "\"v\":1},{\"name\":\"x\",\"zone\":\"b\",\"v\":2}],"
			 "\"s\":[1,2],\"a\":[1,2],\"am\":{\"p\":1},"
			 "\"gm\":{\"k\":\"v\"}}}");
	json_t *cfg = J("{\"spec\":{\"m\":[{\"name\":\"x\",\"zone\":\"b\","
			"\"w\":3}],\"s\":[3],\"a\":[3],\"am\":{\"q\":2},"
			"\"gm\":{\"l\":\"w\"}}}");
	json_t *got = as_apply_merge(&t, live, cfg);

	same(got,
	    "{\"spec\":{\"m\":[{\"name\":\"x\",\"zone\":\"a\",\"v\":1},"
	    "{\"name\":\"x\",\"zone\":\"b\",\"v\":2,\"w\":3}],\"s\":[1,2,3],"
	    "\"a\":[3],\"am\":{\"q\":2},\"gm\":{\"k\":\"v\",\"l\":\"w\"}}}",
	    "merge by the CRD's list and map types");
	json_decref(got);
	json_decref(live);
	json_decref(cfg);
	json_decref(schema);
}

Test(apply, defaulted_key_matches)
{
	struct as_apply_type t = {NULL, "Pod"};
	json_t *live = J("{\"spec\":{\"containers\":[{\"name\":\"c\","
			 "\"ports\":[{\"containerPort\":80,\"protocol\":"
			 "\"TCP\"}]}]}}");
	json_t *cfg = J("{\"spec\":{\"containers\":[{\"name\":\"c\","
			"\"ports\":[{\"containerPort\":80,\"name\":\"http\"}]"
			"}]}}");
	json_t *got = as_apply_merge(&t, live, cfg);

	same(got,
	    "{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{"
	    "\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"http\"}]}]}}",
	    "a port without protocol is the TCP one");
	json_decref(got);
	json_decref(live);
	json_decref(cfg);
}

/* An Update of a Pod's containers: a new container and a changed env var
 * go to the updater, a removed container leaves every owner, the
 * creator keeps what nobody changed. */
Test(apply, update_of_keyed_lists)
{
	struct as_apply_type t = {NULL, "Pod"};
	struct as_manager create = mgr("creator", false);
	struct as_manager edit = mgr("editor", false);
	json_t *old = J("{\"metadata\":{\"name\":\"p\"},"
			"\"spec\":{\"containers\":[{\"name\":\"a\","
			"\"image\":\"1\",\"env\":[{\"name\":\"X\",\"value\":"
			"\"1\"}]},{\"name\":\"b\",\"image\":\"2\"}]}}");
	json_t *next = J("{\"metadata\":{\"name\":\"p\"},"
			 "\"spec\":{\"containers\":[{\"name\":\"a\","
			 "\"image\":\"1\",\"env\":[{\"name\":\"X\",\"value\":"
			 "\"2\"}]},{\"name\":\"c\",\"image\":\"3\"}]}}");

	cr_assert_eq(as_apply_track_update(&t, NULL, old, &create), CU_OK);
	cr_assert_eq(as_apply_track_update(&t, old, next, &edit), CU_OK);
	same(fields_of_manager(next, "editor"),
	    "{\"f:spec\":{\"f:containers\":{"
	    "\"k:{\\\"name\\\":\\\"a\\\"}\":{\"f:env\":{"
	    "\"k:{\\\"name\\\":\\\"X\\\"}\":{\"f:value\":{}}}},"
	    "\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:name\":{},"
	    "\"f:image\":{}}}}}",
	    "editor");
	same(fields_of_manager(next, "creator"),
	    "{\"f:spec\":{\"f:containers\":{"
	    "\"k:{\\\"name\\\":\\\"a\\\"}\":{\".\":{},\"f:name\":{},"
	    "\"f:image\":{},\"f:env\":{\"k:{\\\"name\\\":\\\"X\\\"}\":{"
	    "\".\":{},\"f:name\":{}}}}}}}",
	    "creator");
	json_decref(old);
	json_decref(next);
}

/* A status write is an Update of the status subresource owning status
 * fields only; the object's other managers keep theirs. */
Test(apply, status_subresource_update)
{
	json_t *obj = NULL, *conflict = NULL, *next, *e;
	struct as_manager st = mgr("controller", false);

	st.subresource = "status";
	cr_assert_eq(
	    do_apply(&obj, CM("{\"a\":\"1\"}"), "app", false, &conflict),
	    CU_OK);
	next = json_deep_copy(obj);
	json_object_set_new(next, "status", J("{\"phase\":\"Ready\"}"));
	cr_assert_eq(as_apply_track_update(&cm_type, obj, next, &st), CU_OK);
	same(fields_of_manager(next, "app"), "{\"f:data\":{\"f:a\":{}}}",
	    "applier");
	same(fields_of_manager(next, "controller"),
	    "{\"f:status\":{\"f:phase\":{}}}", "status writer");
	e = json_array_get(
	    json_object_get(json_object_get(next, "metadata"), "managedFields"),
	    1);
	cr_assert_str_eq(
	    json_string_value(json_object_get(e, "subresource")), "status");
	json_decref(obj);
	json_decref(next);
}
