/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.c - protobuf request and response bodies
 * (application/vnd.kubernetes.protobuf) for the built-in kinds that
 * kubectl's generators and typed clients send that way.
 *
 * The messages are tests/apiserver/kube.proto, compiled by protoc-c at
 * build time; libprotobuf-c parses and writes the wire format. This file
 * only bridges them to the JSON the store keeps: it walks protobuf-c's
 * message descriptors, so one pair of functions serves every message.
 *
 * The envelope (k8s.io/apimachinery runtime.Unknown after the magic
 * "k8s\0"): typeMeta {apiVersion, kind}, raw (the object's message),
 * contentEncoding and contentType (both empty). Decoding drops fields the
 * messages do not list, as kube-apiserver does: strict field validation
 * does not apply to protobuf there either.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <protobuf-c/protobuf-c.h>

#include "api/json.h"
#include "kube.pb-c.h"
#include "tests/apiserver/apiserver.h"

/* The marks of kube.proto's fields, sorted by "Message.field"; generated
 * by the Makefile. MARK_ZERO_KEPT: the zero value is real (a Go pointer or
 * a field without omitempty). MARK_INLINE: a Go embedded struct, whose
 * fields sit in the enclosing JSON object. */
enum { MARK_ZERO_KEPT = 1, MARK_INLINE = 2 };
struct mark {
	const char *name;
	int mark;
};
static const struct mark marks[] = {
#include "kube_marks.inc"
};

#define MAGIC "k8s\0"
#define MAGIC_LEN 4

/* ---- the message table ---------------------------------------------- */

struct top {
	const char *api_version;
	const char *kind;
	const ProtobufCMessageDescriptor *desc;
};

#define T(av, k, d)                                                            \
	{                                                                      \
		av, k, &cueue__kube__##d##__descriptor                         \
	}
static const struct top tops[] = {
    T("v1", "Namespace", namespace),
    T("v1", "NamespaceList", namespace_list),
    T("v1", "ConfigMap", config_map),
    T("v1", "ConfigMapList", config_map_list),
    T("v1", "Secret", secret),
    T("v1", "SecretList", secret_list),
    T("v1", "ServiceAccount", service_account),
    T("v1", "ServiceAccountList", service_account_list),
    T("v1", "Service", service),
    T("v1", "ServiceList", service_list),
    T("v1", "Pod", pod),
    T("v1", "PodList", pod_list),
    T("v1", "Event", event),
    T("v1", "EventList", event_list),
    T("v1", "Node", node),
    T("v1", "NodeList", node_list),
    T("v1", "Status", status),
    T("meta.k8s.io/v1", "Status", status),
    T("batch/v1", "Job", job),
    T("batch/v1", "JobList", job_list),
    T("batch/v1", "CronJob", cron_job),
    T("batch/v1", "CronJobList", cron_job_list),
    T("apps/v1", "Deployment", deployment),
    T("apps/v1", "DeploymentList", deployment_list),
    T("scheduling.k8s.io/v1", "PriorityClass", priority_class),
    T("scheduling.k8s.io/v1", "PriorityClassList", priority_class_list),
    T("coordination.k8s.io/v1", "Lease", lease),
    T("coordination.k8s.io/v1", "LeaseList", lease_list),
    T("events.k8s.io/v1", "Event", events_v1_event),
    T("events.k8s.io/v1", "EventList", events_v1_event_list),
    T("rbac.authorization.k8s.io/v1", "Role", role),
    T("rbac.authorization.k8s.io/v1", "RoleList", role_list),
    T("rbac.authorization.k8s.io/v1", "RoleBinding", role_binding),
    T("rbac.authorization.k8s.io/v1", "RoleBindingList", role_binding_list),
    T("rbac.authorization.k8s.io/v1", "ClusterRole", cluster_role),
    T("rbac.authorization.k8s.io/v1", "ClusterRoleList", cluster_role_list),
    T("rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
	cluster_role_binding),
    T("rbac.authorization.k8s.io/v1", "ClusterRoleBindingList",
	cluster_role_binding_list),
};
#undef T

static const ProtobufCMessageDescriptor *find_top(
    const char *api_version, const char *kind)
{
	size_t i;

	if (api_version == NULL || kind == NULL)
		return NULL;
	/* typed clients send DeleteOptions in their own group's version */
	if (strcmp(kind, "DeleteOptions") == 0)
		return &cueue__kube__delete_options__descriptor;
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (strcmp(tops[i].api_version, api_version) == 0 &&
		    strcmp(tops[i].kind, kind) == 0)
			return tops[i].desc;
	return NULL;
}

bool as_proto_kind(const struct as_kind *k)
{
	char av[256];

	if (k == NULL || (k->flags & AS_CUSTOM))
		return false;
	if (k->group[0] == '\0')
		snprintf(av, sizeof(av), "%s", k->version);
	else
		snprintf(av, sizeof(av), "%s/%s", k->group, k->version);
	return find_top(av, k->kind) != NULL;
}

/* ---- allocation through lib/mem.c ----------------------------------- */

static void *pa_alloc(void *data, size_t n)
{
	(void)data;
	return cu_malloc(n ? n : 1);
}

static void pa_free(void *data, void *p)
{
	(void)data;
	cu_free(p);
}

static ProtobufCAllocator allocator = {pa_alloc, pa_free, NULL};

/* ---- helpers --------------------------------------------------------- */

static int mark_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct mark *)a)->name, ((const struct mark *)b)->name);
}

static int mark_of(
    const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f)
{
	char key[256];
	struct mark k = {key, 0};
	const struct mark *m;

	snprintf(key, sizeof(key), "%s.%s", d->short_name, f->name);
	m = bsearch(&k, marks, sizeof(marks) / sizeof(marks[0]),
	    sizeof(marks[0]), mark_cmp);
	return m ? m->mark : 0;
}

static bool zero_kept(
    const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f)
{
	return mark_of(d, f) == MARK_ZERO_KEPT;
}

static bool is_named(const ProtobufCMessageDescriptor *d, const char *name)
{
	return strcmp(d->short_name, name) == 0;
}

/* A protoc map entry: a nested "...Entry" message of key and value. */
static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
	size_t n = strlen(d->short_name);

	return n > 5 && strcmp(d->short_name + n - 5, "Entry") == 0 &&
	       d->n_fields == 2 && strcmp(d->fields[0].name, "key") == 0 &&
	       strcmp(d->fields[1].name, "value") == 0;
}

#define AT(m, off) ((char *)(m) + (off))

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:
		return 8;
	}
}

/* Fields of the special messages by name (a Duration, say, is in no
 * served kind today, so it has no generated struct to name). */
static const ProtobufCFieldDescriptor *fld(
    const ProtobufCMessageDescriptor *d, const char *name)
{
	return protobuf_c_message_descriptor_get_field_by_name(d, name);
}

static int64_t get_int(const ProtobufCMessage *m, const char *name)
{
	const ProtobufCFieldDescriptor *f = fld(m->descriptor, name);
	int64_t v64 = 0;
	int32_t v32 = 0;

	if (f == NULL)
		return 0;
	if (f->type == PROTOBUF_C_TYPE_INT64) {
		memcpy(&v64, AT(m, f->offset), sizeof(v64));
		return v64;
	}
	memcpy(&v32, AT(m, f->offset), sizeof(v32));
	return v32;
}

static const ProtobufCBinaryData *get_bytes(
    const ProtobufCMessage *m, const char *name)
{
	const ProtobufCFieldDescriptor *f = fld(m->descriptor, name);

	return f ? (const ProtobufCBinaryData *)AT(m, f->offset) : NULL;
}

/* ---- protobuf to JSON ------------------------------------------------ */

static json_t *msg_to_json(const ProtobufCMessage *m, cu_error *err);

/* Go's time.Duration.String() for whole and fractional seconds. */
static json_t *duration_json(int64_t ns)
{
	char out[64];
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t h = u / 3600000000000ULL, mi = u / 60000000000ULL % 60;
	uint64_t s = u / 1000000000ULL % 60, frac = u % 1000000000ULL;
	int n = 0;

	if (u == 0)
		return json_string("0s");
	if (u < 1000000000ULL) {
		if (u % 1000000ULL == 0)
			snprintf(out, sizeof(out), "%s%llums",
			    ns < 0 ? "-" : "",
			    (unsigned long long)(u / 1000000ULL));
		else
			snprintf(out, sizeof(out), "%s%lluns",
			    ns < 0 ? "-" : "", (unsigned long long)u);
		return json_string(out);
	}
	n = snprintf(out, sizeof(out), "%s", ns < 0 ? "-" : "");
	if (h > 0)
		n += snprintf(out + n, sizeof(out) - (size_t)n, "%lluh",
		    (unsigned long long)h);
	if (h > 0 || mi > 0)
		n += snprintf(out + n, sizeof(out) - (size_t)n, "%llum",
		    (unsigned long long)mi);
	n += snprintf(
	    out + n, sizeof(out) - (size_t)n, "%llu", (unsigned long long)s);
	if (frac != 0) {
		char f[16];
		size_t l;

		snprintf(f, sizeof(f), "%09llu", (unsigned long long)frac);
		l = strlen(f);
		while (l > 0 && f[l - 1] == '0')
			f[--l] = '\0';
		n += snprintf(out + n, sizeof(out) - (size_t)n, ".%s", f);
	}
	snprintf(out + n, sizeof(out) - (size_t)n, "s");
	return json_string(out);
}

/* Embedded JSON (RawExtension.raw, FieldsV1.Raw); NULL when empty. */
static json_t *raw_json(const ProtobufCBinaryData *b, cu_error *err)
{
	json_error_t jerr;
	json_t *j;

	if (b == NULL || b->len == 0)
		return NULL;
	j = json_loadb((const char *)b->data, b->len, JSON_DECODE_ANY, &jerr);
	if (j == NULL)
		cu_error_set(err, CU_EPARSE, "embedded JSON: %s", jerr.text);
	if (json_is_null(j)) { /* as absent: JSON has no way to keep it */
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* Messages with a JSON form of their own; *done false for the others.
 * NULL with *done and no error: the value is left out (a zero Time). */
static json_t *special_to_json(
    const ProtobufCMessage *m, bool *done, cu_error *err)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	*done = true;
	if (is_named(d, "Time") || is_named(d, "MicroTime")) {
		const Cueue__Kube__Time *t = (const void *)m;
		char buf[CU_TIME_MICRO_LEN];
		int64_t ns;

		/* zero as kube reads it; below the JSON form's precision
		 * (seconds, microseconds) a 1970 instant reads as zero too */
		if (t->seconds == 0 &&
		    (is_named(d, "Time") || (t->nanos >= 0 && t->nanos < 1000)))
			return NULL;
		/* nanoseconds since 1970 in an int64: up to 2262 */
		if (t->seconds < 0 || t->seconds > INT64_MAX / 1000000000 - 1 ||
		    t->nanos < 0 || t->nanos > 999999999) {
			cu_error_set(err, CU_EPARSE,
			    "time out of range (%lld s, %d ns)",
			    (long long)t->seconds, (int)t->nanos);
			return NULL;
		}
		ns = t->seconds * 1000000000LL + t->nanos;
		if (is_named(d, "Time"))
			cu_time_format_rfc3339(ns, buf);
		else
			cu_time_format_micro(ns, buf);
		return json_string(buf);
	}
	if (is_named(d, "Duration"))
		return duration_json(get_int(m, "duration"));
	if (is_named(d, "Quantity")) {
		const Cueue__Kube__Quantity *q = (const void *)m;

		return json_string(q->string ? q->string : "0");
	}
	if (is_named(d, "IntOrString")) {
		const Cueue__Kube__IntOrString *v = (const void *)m;

		if (v->type == 1)
			return json_string(v->strval ? v->strval : "");
		return json_integer(v->intval);
	}
	if (is_named(d, "RawExtension"))
		return raw_json(get_bytes(m, "raw"), err);
	if (is_named(d, "FieldsV1"))
		return raw_json(get_bytes(m, "Raw"), err);
	*done = false;
	return NULL;
}

/* One value of field f at p; *skip when it is left out (a zero). */
static json_t *value_to_json(const ProtobufCMessageDescriptor *d,
    const ProtobufCFieldDescriptor *f, const void *p, bool repeated, bool *skip,
    cu_error *err)
{
	bool keep = repeated || zero_kept(d, f);
	json_t *j = NULL;

	*skip = false;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM: {
		int32_t v;

		memcpy(&v, p, sizeof(v));
		*skip = v == 0 && !keep;
		return *skip ? NULL : json_integer(v);
	}
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32: {
		uint32_t v;

		memcpy(&v, p, sizeof(v));
		*skip = v == 0 && !keep;
		return *skip ? NULL : json_integer(v);
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: {
		int64_t v;

		memcpy(&v, p, sizeof(v));
		*skip = v == 0 && !keep;
		return *skip ? NULL : json_integer(v);
	}
	case PROTOBUF_C_TYPE_FLOAT: {
		float v;

		memcpy(&v, p, sizeof(v));
		*skip = v == 0 && !keep;
		return *skip ? NULL : json_real(v);
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double v;

		memcpy(&v, p, sizeof(v));
		*skip = v == 0 && !keep;
		return *skip ? NULL : json_real(v);
	}
	case PROTOBUF_C_TYPE_BOOL: {
		protobuf_c_boolean v;

		memcpy(&v, p, sizeof(v));
		*skip = !v && !keep;
		return *skip ? NULL : json_boolean(v);
	}
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)p;

		*skip = s == NULL || (s[0] == '\0' && !keep);
		if (*skip)
			return NULL;
		j = json_string(s);
		if (j == NULL)
			cu_error_set(err, CU_EPARSE,
			    "field %s.%s: invalid UTF-8", d->short_name,
			    f->name);
		return j;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = p;
		char *s;

		/* []byte has no zero to keep: an empty one is left out
		 * unless it is a map value or list element. */
		*skip = b->len == 0 && !repeated;
		if (*skip)
			return NULL;
		s = api_base64_encode(b->data, b->len);
		if (s == NULL) {
			cu_error_set(err, CU_ENOMEM, "out of memory");
			return NULL;
		}
		j = json_string(s);
		cu_free(s);
		return j;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
		bool done;

		*skip = sub == NULL;
		if (*skip)
			return NULL;
		j = special_to_json(sub, &done, err);
		if (done) {
			*skip = j == NULL && err->code == 0;
			return j;
		}
		return msg_to_json(sub, err);
	}
	}
	*skip = true;
	return NULL;
}

/* The JSON of a map value the wire left out (string, bytes, Quantity). */
static json_t *zero_value(const ProtobufCFieldDescriptor *f)
{
	if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		return is_named(f->descriptor, "Quantity") ? json_string("0")
							   : json_object();
	if (f->type == PROTOBUF_C_TYPE_STRING ||
	    f->type == PROTOBUF_C_TYPE_BYTES)
		return json_string("");
	if (f->type == PROTOBUF_C_TYPE_BOOL)
		return json_false();
	return json_integer(0);
}

static json_t *map_to_json(const ProtobufCMessageDescriptor *d,
    ProtobufCMessage *const *ents, size_t n, cu_error *err)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < n && o != NULL; i++) {
		const ProtobufCMessage *e = ents[i];
		const ProtobufCMessageDescriptor *ed = e->descriptor;
		const char *key = *(char *const *)AT(e, ed->fields[0].offset);
		json_t *v;
		bool skip;

		v = value_to_json(ed, &ed->fields[1],
		    AT(e, ed->fields[1].offset), true, &skip, err);
		if (err->code != 0) {
			json_decref(o);
			return NULL;
		}
		if (v == NULL) /* an entry without a value: Go's zero */
			v = zero_value(&ed->fields[1]);
		if (json_object_set_new(o, key ? key : "", v) != 0) {
			cu_error_set(err, CU_EPARSE,
			    "field %s: invalid UTF-8 in a key", d->short_name);
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *msg_to_json(const ProtobufCMessage *m, cu_error *err)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	json_t *o = json_object();
	unsigned i;

	if (o == NULL) {
		cu_error_set(err, CU_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		json_t *v = NULL;
		bool skip = false;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)AT(m, f->quantifier_offset);
			const char *arr = *(char *const *)AT(m, f->offset);
			size_t k, es = elem_size(f->type);

			if (n == 0)
				continue;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    is_map_entry(f->descriptor)) {
				v = map_to_json(
				    d, (ProtobufCMessage *const *)arr, n, err);
			} else {
				v = json_array();
				for (k = 0; k < n && v != NULL; k++) {
					json_t *e = value_to_json(d, f,
					    arr + k * es, true, &skip, err);

					if (err->code != 0)
						break;
					json_array_append_new(
					    v, e ? e : json_null());
				}
			}
		} else {
			if (f->type != PROTOBUF_C_TYPE_STRING &&
			    f->type != PROTOBUF_C_TYPE_MESSAGE &&
			    f->quantifier_offset != 0 &&
			    !*(const protobuf_c_boolean *)AT(
				m, f->quantifier_offset))
				continue;
			v = value_to_json(
			    d, f, AT(m, f->offset), false, &skip, err);
		}
		if (err->code != 0) {
			json_decref(v);
			json_decref(o);
			return NULL;
		}
		if (v != NULL && json_is_object(v) &&
		    f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    mark_of(d, f) == MARK_INLINE) {
			json_object_update_missing(o, v);
			json_decref(v);
		} else if (v != NULL) {
			json_object_set_new(o, f->name, v);
		}
	}
	return o;
}

/* The envelope at buf [owned: cueue__kube__unknown__free_unpacked with
 * allocator], or NULL with err set. */
static Cueue__Kube__Unknown *unwrap(const void *buf, size_t len, cu_error *err)
{
	Cueue__Kube__Unknown *u;

	if (len < MAGIC_LEN || memcmp(buf, MAGIC, MAGIC_LEN) != 0) {
		cu_error_set(err, CU_EPARSE,
		    "provided data does not appear to be a protobuf message, "
		    "expected prefix [107 56 115 0]");
		return NULL;
	}
	u = cueue__kube__unknown__unpack(
	    &allocator, len - MAGIC_LEN, (const uint8_t *)buf + MAGIC_LEN);
	if (u == NULL) {
		cu_error_set(err, CU_EPARSE,
		    "unable to decode the protobuf envelope (runtime.Unknown)");
		return NULL;
	}
	if (u->contentencoding != NULL && u->contentencoding[0] != '\0') {
		cu_error_set(err, CU_EPARSE,
		    "unsupported content encoding %.64s", u->contentencoding);
		cueue__kube__unknown__free_unpacked(u, &allocator);
		return NULL;
	}
	return u;
}

int as_proto_peek(
    const void *buf, size_t len, char **api_version, char **kind, cu_error *err)
{
	Cueue__Kube__Unknown *u = unwrap(buf, len, err);
	const char *av = "", *k = "";

	if (u == NULL)
		return err->code;
	if (u->typemeta != NULL) {
		av = u->typemeta->apiversion ? u->typemeta->apiversion : "";
		k = u->typemeta->kind ? u->typemeta->kind : "";
	}
	*api_version = cu_strdup(av);
	*kind = cu_strdup(k);
	cueue__kube__unknown__free_unpacked(u, &allocator);
	if (*api_version == NULL || *kind == NULL) {
		cu_free(*api_version);
		cu_free(*kind);
		*api_version = *kind = NULL;
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	return 0;
}

json_t *as_proto_decode(const void *buf, size_t len, cu_error *err)
{
	Cueue__Kube__Unknown *u = unwrap(buf, len, err);
	const ProtobufCMessageDescriptor *d;
	ProtobufCMessage *m;
	json_t *obj = NULL, *head;
	const char *av = NULL, *kind = NULL;

	if (u == NULL)
		return NULL;
	if (u->typemeta != NULL) {
		av = u->typemeta->apiversion;
		kind = u->typemeta->kind;
	}
	d = find_top(av, kind);
	if (d == NULL) {
		cu_error_set(err, CU_EINVAL,
		    "no protobuf message for kind \"%.64s\" in version "
		    "\"%.64s\"",
		    kind ? kind : "", av ? av : "");
		goto out;
	}
	m = protobuf_c_message_unpack(d, &allocator, u->raw.len,
	    u->raw.data ? u->raw.data : (uint8_t *)"");
	if (m == NULL) {
		cu_error_set(err, CU_EPARSE,
		    "unable to decode the protobuf body as %s/%s", av, kind);
		goto out;
	}
	obj = msg_to_json(m, err);
	protobuf_c_message_free_unpacked(m, &allocator);
	if (obj == NULL)
		goto out;
	/* apiVersion and kind first, as a JSON client writes them */
	head = json_pack("{s:s, s:s}", "apiVersion", av, "kind", kind);
	if (head == NULL || json_object_update(head, obj) != 0) {
		json_decref(head);
		json_decref(obj);
		obj = NULL;
		cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	json_decref(obj);
	obj = head;
out:
	cueue__kube__unknown__free_unpacked(u, &allocator);
	return obj;
}

/* ---- JSON to protobuf ------------------------------------------------ */

static ProtobufCMessage *json_to_msg(
    const ProtobufCMessageDescriptor *d, json_t *o, int depth);

static ProtobufCMessage *new_msg(const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = cu_malloc(d->sizeof_message);

	if (m != NULL)
		d->message_init(m);
	return m;
}

static bool bytes_from(json_t *v, ProtobufCBinaryData *b, bool embedded)
{
	char *data = NULL;
	size_t n = 0;

	if (embedded) {
		data = as_json_dump(v, &n);
	} else {
		if (!json_is_string(v) ||
		    api_base64_decode(json_string_value(v), &data, &n, NULL) !=
			0)
			return false;
	}
	if (data == NULL)
		return false;
	b->data = (uint8_t *)data;
	b->len = n;
	return true;
}

/* The special messages from their JSON form; NULL when v does not fit. */
static ProtobufCMessage *special_from_json(
    const ProtobufCMessageDescriptor *d, json_t *v, bool *done)
{
	ProtobufCMessage *m;

	*done = true;
	if (is_named(d, "Time") || is_named(d, "MicroTime")) {
		Cueue__Kube__Time *t;
		int64_t ns;
		cu_error err = {0};

		if (!json_is_string(v) ||
		    cu_time_parse(json_string_value(v), &ns, &err) != 0)
			return NULL;
		if ((m = new_msg(d)) == NULL)
			return NULL;
		t = (void *)m;
		t->seconds = ns / 1000000000LL;
		t->nanos = (int32_t)(ns % 1000000000LL);
		if (t->nanos < 0) {
			t->nanos += 1000000000;
			t->seconds--;
		}
		t->has_seconds = t->has_nanos = 1;
		return m;
	}
	if (is_named(d, "Quantity")) {
		Cueue__Kube__Quantity *q;
		char num[64];

		if (json_is_string(v))
			snprintf(num, sizeof(num), "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(num, sizeof(num), "%lld",
			    (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(num, sizeof(num), "%g", json_real_value(v));
		else
			return NULL;
		if ((m = new_msg(d)) == NULL)
			return NULL;
		q = (void *)m;
		q->string = cu_strdup(num);
		return m;
	}
	if (is_named(d, "IntOrString")) {
		Cueue__Kube__IntOrString *x;

		if (!json_is_string(v) && !json_is_integer(v))
			return NULL;
		if ((m = new_msg(d)) == NULL)
			return NULL;
		x = (void *)m;
		x->has_type = x->has_intval = 1;
		if (json_is_string(v)) {
			x->type = 1;
			x->strval = cu_strdup(json_string_value(v));
		} else {
			x->intval = (int32_t)json_integer_value(v);
		}
		return m;
	}
	if (is_named(d, "RawExtension") || is_named(d, "FieldsV1")) {
		/* both messages are one bytes field */
		const ProtobufCFieldDescriptor *f = &d->fields[0];

		if ((m = new_msg(d)) == NULL)
			return NULL;
		if (bytes_from(v, (void *)AT(m, f->offset), true))
			*(protobuf_c_boolean *)AT(m, f->quantifier_offset) = 1;
		return m;
	}
	if (is_named(d, "Duration")) {
		*done = true;
		return NULL; /* no served field carries one */
	}
	*done = false;
	return NULL;
}

/* Store v into the value slot p of field f; false when v does not fit. */
static bool set_value(
    const ProtobufCFieldDescriptor *f, void *p, json_t *v, int depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_ENUM: {
		int32_t x;

		if (!json_is_integer(v))
			return false;
		x = (int32_t)json_integer_value(v);
		memcpy(p, &x, sizeof(x));
		return true;
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: {
		int64_t x;

		if (!json_is_integer(v))
			return false;
		x = (int64_t)json_integer_value(v);
		memcpy(p, &x, sizeof(x));
		return true;
	}
	case PROTOBUF_C_TYPE_FLOAT: {
		float x;

		if (!json_is_number(v))
			return false;
		x = (float)json_number_value(v);
		memcpy(p, &x, sizeof(x));
		return true;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double x;

		if (!json_is_number(v))
			return false;
		x = json_number_value(v);
		memcpy(p, &x, sizeof(x));
		return true;
	}
	case PROTOBUF_C_TYPE_BOOL: {
		protobuf_c_boolean x;

		if (!json_is_boolean(v))
			return false;
		x = json_is_true(v);
		memcpy(p, &x, sizeof(x));
		return true;
	}
	case PROTOBUF_C_TYPE_STRING: {
		char *s;

		if (!json_is_string(v))
			return false;
		s = cu_strdup(json_string_value(v));
		memcpy(p, &s, sizeof(s));
		return s != NULL;
	}
	case PROTOBUF_C_TYPE_BYTES:
		return bytes_from(v, p, false);
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessageDescriptor *sd = f->descriptor;
		ProtobufCMessage *m;
		bool done;

		m = special_from_json(sd, v, &done);
		if (!done)
			m = json_to_msg(sd, v, depth + 1);
		memcpy(p, &m, sizeof(m));
		return m != NULL;
	}
	}
	return false;
}

/* A JSON object into the repeated map-entry field f. */
static void set_map(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
    json_t *v, int depth)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	ProtobufCMessage **arr;
	const char *key;
	json_t *val;
	size_t n = 0;

	if (!json_is_object(v) || json_object_size(v) == 0)
		return;
	arr = cu_calloc(json_object_size(v), sizeof(*arr));
	if (arr == NULL)
		return;
	json_object_foreach(v, key, val)
	{
		ProtobufCMessage *e = new_msg(ed);
		char *k;

		if (e == NULL)
			break;
		k = cu_strdup(key);
		memcpy(AT(e, ed->fields[0].offset), &k, sizeof(k));
		if (ed->fields[1].quantifier_offset != 0 &&
		    ed->fields[1].type != PROTOBUF_C_TYPE_STRING &&
		    ed->fields[1].type != PROTOBUF_C_TYPE_MESSAGE)
			*(protobuf_c_boolean *)AT(
			    e, ed->fields[1].quantifier_offset) = 1;
		if (k == NULL || !set_value(&ed->fields[1],
				     AT(e, ed->fields[1].offset), val, depth)) {
			protobuf_c_message_free_unpacked(e, &allocator);
			continue;
		}
		arr[n++] = e;
	}
	*(size_t *)AT(m, f->quantifier_offset) = n;
	memcpy(AT(m, f->offset), &arr, sizeof(arr));
}

static void set_repeated(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
    json_t *v, int depth)
{
	size_t es = elem_size(f->type), i, n = 0;
	char *arr;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return;
	arr = cu_calloc(json_array_size(v), es);
	if (arr == NULL)
		return;
	json_array_foreach(v, i, e)
	{
		if (set_value(f, arr + n * es, e, depth))
			n++;
	}
	*(size_t *)AT(m, f->quantifier_offset) = n;
	memcpy(AT(m, f->offset), &arr, sizeof(arr));
}

/* 64 levels hold every served kind with room; deeper input is cut. */
#define MAX_DEPTH 64

static ProtobufCMessage *json_to_msg(
    const ProtobufCMessageDescriptor *d, json_t *o, int depth)
{
	ProtobufCMessage *m;
	unsigned i;

	if (!json_is_object(o) || depth > MAX_DEPTH)
		return NULL;
	if ((m = new_msg(d)) == NULL)
		return NULL;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		json_t *v = json_object_get(o, f->name);

		if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    f->label != PROTOBUF_C_LABEL_REPEATED &&
		    mark_of(d, f) == MARK_INLINE)
			v = o; /* the embedded struct's fields are here */
		if (v == NULL || json_is_null(v))
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    is_map_entry(f->descriptor))
				set_map(m, f, v, depth);
			else
				set_repeated(m, f, v, depth);
			continue;
		}
		if (set_value(f, AT(m, f->offset), v, depth) &&
		    f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE &&
		    f->quantifier_offset != 0)
			*(protobuf_c_boolean *)AT(m, f->quantifier_offset) = 1;
	}
	return m;
}

char *as_proto_encode(json_t *obj, size_t *len)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const ProtobufCMessageDescriptor *d = find_top(av, kind);
	Cueue__Kube__Unknown u = CUEUE__KUBE__UNKNOWN__INIT;
	Cueue__Kube__TypeMeta tm = CUEUE__KUBE__TYPE_META__INIT;
	ProtobufCMessage *m;
	size_t raw_len, n;
	uint8_t *raw;
	char *out;

	if (d == NULL || (m = json_to_msg(d, obj, 0)) == NULL)
		return NULL;
	raw_len = protobuf_c_message_get_packed_size(m);
	raw = cu_malloc(raw_len ? raw_len : 1);
	if (raw == NULL) {
		protobuf_c_message_free_unpacked(m, &allocator);
		return NULL;
	}
	protobuf_c_message_pack(m, raw);
	protobuf_c_message_free_unpacked(m, &allocator);
	tm.apiversion = (char *)av;
	tm.kind = (char *)kind;
	u.typemeta = &tm;
	u.has_raw = 1;
	u.raw.data = raw;
	u.raw.len = raw_len;
	u.contentencoding = (char *)"";
	u.contenttype = (char *)"";
	n = cueue__kube__unknown__get_packed_size(&u);
	out = cu_malloc(MAGIC_LEN + n);
	if (out != NULL) {
		memcpy(out, MAGIC, MAGIC_LEN);
		cueue__kube__unknown__pack(&u, (uint8_t *)out + MAGIC_LEN);
		*len = MAGIC_LEN + n;
	}
	cu_free(raw);
	return out;
}

/* ---- content negotiation --------------------------------------------- */

/* The media type of one Accept or Content-Type entry, lower case, and
 * whether it carries an "as=" parameter. */
static void media_of(const char *s, size_t n, char *out, size_t cap, bool *as)
{
	size_t i = 0, k = 0;

	while (i < n && isspace((unsigned char)s[i]))
		i++;
	while (i < n && s[i] != ';' && !isspace((unsigned char)s[i]) &&
	       k + 1 < cap)
		out[k++] = (char)tolower((unsigned char)s[i++]);
	out[k] = '\0';
	*as = false;
	for (; i < n; i++)
		if (s[i] == ';') {
			size_t j = i + 1;

			while (j < n && isspace((unsigned char)s[j]))
				j++;
			if (n - j >= 3 && strncasecmp(s + j, "as=", 3) == 0)
				*as = true;
		}
}

bool as_proto_is_protobuf(const char *content_type)
{
	char mt[128];
	bool as;

	if (content_type == NULL)
		return false;
	media_of(content_type, strlen(content_type), mt, sizeof(mt), &as);
	return strcmp(mt, AS_PROTOBUF) == 0;
}

enum as_accept as_proto_accept(const char *accept, bool can_protobuf)
{
	const char *p = accept;
	bool asked = false;

	if (accept == NULL || accept[0] == '\0')
		return AS_ACCEPT_JSON;
	while (*p != '\0') {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char mt[128];
		bool as;

		media_of(p, n, mt, sizeof(mt), &as);
		p += n + (e ? 1 : 0);
		if (as)
			continue; /* Tables: the handlers' business */
		if (strcmp(mt, AS_PROTOBUF) == 0) {
			if (can_protobuf)
				return AS_ACCEPT_PROTOBUF;
			asked = true;
		} else if (strcmp(mt, "application/json") == 0 ||
			   strcmp(mt, "application/*") == 0 ||
			   strcmp(mt, "*/*") == 0) {
			return AS_ACCEPT_JSON;
		}
	}
	return asked ? AS_ACCEPT_NONE : AS_ACCEPT_JSON;
}

bool as_proto_request(
    struct as_request *rq, struct as_resp *resp, char **json_out)
{
	char *av = NULL, *kind = NULL;
	cu_error err = {0};
	json_t *obj;
	size_t len;

	*json_out = NULL;
	if (!as_proto_is_protobuf(as_header(rq, "Content-Type")))
		return true;
	if (strcmp(rq->method, "POST") != 0 && strcmp(rq->method, "PUT") != 0 &&
	    strcmp(rq->method, "DELETE") != 0)
		return true; /* PATCH: the handler's 415 */
	if (as_proto_peek(rq->body, rq->body_len, &av, &kind, &err) != 0) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		return false;
	}
	if (find_top(av, kind) == NULL) {
		/* a kind without a message: the handler answers 415 */
		cu_free(av);
		cu_free(kind);
		return true;
	}
	cu_free(av);
	cu_free(kind);
	obj = as_proto_decode(rq->body, rq->body_len, &err);
	if (obj == NULL) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		return false;
	}
	*json_out = as_json_dump(obj, &len);
	json_decref(obj);
	if (*json_out == NULL) {
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return false;
	}
	return true;
}

void as_proto_reply(const struct as_request *rq, struct as_resp *resp)
{
	const char *accept = as_header(rq, "Accept");
	bool can;
	char *raw;
	size_t len = 0;

	if (resp->watch != NULL || resp->raw != NULL || resp->delay ||
	    resp->body == NULL || accept == NULL)
		return;
	can =
	    find_top(
		json_string_value(json_object_get(resp->body, "apiVersion")),
		json_string_value(json_object_get(resp->body, "kind"))) != NULL;
	switch (as_proto_accept(accept, can)) {
	case AS_ACCEPT_JSON:
		return;
	case AS_ACCEPT_NONE:
		json_decref(resp->body);
		resp->body = NULL;
		as_resp_error(resp, 406, "NotAcceptable",
		    "only the following media types are accepted: "
		    "application/json");
		return;
	case AS_ACCEPT_PROTOBUF:
		break;
	}
	raw = as_proto_encode(resp->body, &len);
	if (raw == NULL)
		return; /* out of memory: JSON it is */
	json_decref(resp->body);
	resp->body = NULL;
	resp->raw = raw;
	resp->raw_len = len;
	resp->content_type = AS_PROTOBUF;
}
