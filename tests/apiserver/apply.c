/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/apply.c - server-side apply and field ownership
 * (docs/apiserver.md §4.3): field sets in kube's FieldsV1 encoding, the
 * structured merge of an applied configuration into the live object, the
 * conflicts between field managers, and the metadata.managedFields
 * entries that Apply and Update operations leave behind.
 *
 * Field sets are kept as JSON trees in a normalised FieldsV1 form: every
 * member of the set carries a "." child, so a leaf is {".": {}}; the wire
 * form (a leaf is {}) is produced by as_fields_encode and read back by
 * as_fields_decode. Children are named "f:<field>", "k:<key object>"
 * (an item of an associative list) or "v:<value>" (an item of a set).
 * Pure functions: no server state, no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define FIELDS_MAX_DEPTH 64

/* ---- text helpers ---------------------------------------------------- */

/* Append s [owned] to b; on failure b is left empty (cu_buf's contract). */
static void adds(cu_buf *b, char *s)
{
	if (s != NULL && cu_buf_adds(b, s) != CU_OK)
		cu_buf_init(b, b->max);
	cu_free(s);
}

static const char *bstr(const cu_buf *b)
{
	return b->ptr != NULL ? b->ptr : "";
}

/* ---- list semantics ------------------------------------------------- */

enum list_kind { LIST_ATOMIC, LIST_SET, LIST_MAP };

struct list_info {
	enum list_kind kind;
	const char *keys[3];  /* LIST_MAP: key fields, NULL-terminated */
	const char *deflt[3]; /* default per key when an item omits it */
	const json_t *jkeys;  /* CRD: x-kubernetes-list-map-keys */
};

/* Where a value sits: the schema node describing it (custom resources),
 * or the built-in tables (schema NULL, crd false). */
struct ctx {
	const json_t *schema; /* [borrowed] structural schema node or NULL */
	bool crd;	      /* inside a custom resource without schema */
	const char *name;     /* field name holding the value, or NULL */
	const char *kind;     /* the object's kind [borrowed] */
	int depth;
};

/* Built-in lists that are not atomic: merge keys of the core kinds. */
static const struct {
	const char *name;
	enum list_kind kind;
	const char *k1, *k2;
} builtin_lists[] = {
    {"containers", LIST_MAP, "name", NULL},
    {"initContainers", LIST_MAP, "name", NULL},
    {"ephemeralContainers", LIST_MAP, "name", NULL},
    {"volumes", LIST_MAP, "name", NULL},
    {"env", LIST_MAP, "name", NULL},
    {"imagePullSecrets", LIST_MAP, "name", NULL},
    {"resourceClaims", LIST_MAP, "name", NULL},
    {"volumeMounts", LIST_MAP, "mountPath", NULL},
    {"volumeDevices", LIST_MAP, "devicePath", NULL},
    {"ownerReferences", LIST_MAP, "uid", NULL},
    {"conditions", LIST_MAP, "type", NULL},
    {"hostAliases", LIST_MAP, "ip", NULL},
    {"topologySpreadConstraints", LIST_MAP, "topologyKey", "whenUnsatisfiable"},
    {"webhooks", LIST_MAP, "name", NULL},
    {"finalizers", LIST_SET, NULL, NULL},
};

/* Built-in objects replaced whole (structType/mapType atomic). */
static const char *const builtin_atomic_maps[] = {"selector", NULL};

static void list_info_of(const struct ctx *c, struct list_info *li)
{
	size_t i;

	memset(li, 0, sizeof(*li));
	li->kind = LIST_ATOMIC;
	if (c->schema != NULL) {
		const char *t = json_string_value(
		    json_object_get(c->schema, "x-kubernetes-list-type"));
		const json_t *keys =
		    json_object_get(c->schema, "x-kubernetes-list-map-keys");

		if (t != NULL && strcmp(t, "set") == 0)
			li->kind = LIST_SET;
		else if (t != NULL && strcmp(t, "map") == 0 &&
			 json_array_size(keys) > 0) {
			li->kind = LIST_MAP;
			li->jkeys = keys;
		}
		return;
	}
	if (c->crd || c->name == NULL)
		return;
	if (strcmp(c->name, "ports") == 0) {
		li->kind = LIST_MAP;
		li->keys[0] = c->kind != NULL && strcmp(c->kind, "Service") == 0
				  ? "port"
				  : "containerPort";
		li->keys[1] = "protocol";
		li->deflt[1] = "TCP";
		return;
	}
	for (i = 0; i < sizeof(builtin_lists) / sizeof(builtin_lists[0]); i++) {
		if (strcmp(builtin_lists[i].name, c->name) == 0) {
			li->kind = builtin_lists[i].kind;
			li->keys[0] = builtin_lists[i].k1;
			li->keys[1] = builtin_lists[i].k2;
			return;
		}
	}
}

static bool atomic_map(const struct ctx *c)
{
	size_t i;

	if (c->schema != NULL) {
		const char *t = json_string_value(
		    json_object_get(c->schema, "x-kubernetes-map-type"));

		return t != NULL && strcmp(t, "atomic") == 0;
	}
	if (c->crd || c->name == NULL)
		return false;
	for (i = 0; builtin_atomic_maps[i] != NULL; i++)
		if (strcmp(builtin_atomic_maps[i], c->name) == 0)
			return true;
	return false;
}

static struct ctx child_ctx(const struct ctx *c, const char *name)
{
	struct ctx n = {NULL, c->crd, name, c->kind, c->depth + 1};

	if (c->schema != NULL) {
		const json_t *props = json_object_get(c->schema, "properties");
		const json_t *ap =
		    json_object_get(c->schema, "additionalProperties");

		if (c->depth == 0 && strcmp(name, "metadata") == 0) {
			n.crd = false; /* ObjectMeta: the built-in rules */
			return n;
		}
		n.schema = json_object_get(props, name);
		if (n.schema == NULL && json_is_object(ap))
			n.schema = ap;
		n.crd = true;
	}
	return n;
}

static struct ctx item_ctx(const struct ctx *c)
{
	struct ctx n = {NULL, c->crd, NULL, c->kind, c->depth + 1};

	if (c->schema != NULL) {
		n.schema = json_object_get(c->schema, "items");
		n.crd = true;
	}
	return n;
}

/* The key object identifying `item` of a LIST_MAP list [owned], or NULL
 * when the item is no object or omits a key without default. */
static json_t *item_key(const struct list_info *li, const json_t *item)
{
	json_t *key;
	size_t i;

	if (!json_is_object(item))
		return NULL;
	key = json_object();
	if (key == NULL)
		return NULL;
	if (li->jkeys != NULL) {
		json_t *k;

		json_array_foreach(li->jkeys, i, k)
		{
			const char *f = json_string_value(k);
			json_t *v = f ? json_object_get(item, f) : NULL;

			if (v == NULL) {
				json_decref(key);
				return NULL;
			}
			json_object_set(key, f, v);
		}
		return key;
	}
	for (i = 0; i < 3 && li->keys[i] != NULL; i++) {
		json_t *v = json_object_get(item, li->keys[i]);

		if (v != NULL)
			json_object_set(key, li->keys[i], v);
		else if (li->deflt[i] != NULL)
			json_object_set_new(
			    key, li->keys[i], json_string(li->deflt[i]));
		else {
			json_decref(key);
			return NULL;
		}
	}
	return key;
}

/* "k:{...}" / "v:..." for an item [owned: cu_free]. */
static char *prefixed_dump(const char *prefix, const json_t *v)
{
	char *s =
	    json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	char *out;

	if (s == NULL)
		return NULL;
	out = cu_asprintf("%s%s", prefix, s);
	cu_free(s);
	return out;
}

/* Whether `item` has the key values of `key` (an object). */
static bool item_matches(
    const struct list_info *li, const json_t *item, const json_t *key)
{
	json_t *mine = item_key(li, item);
	bool eq = mine != NULL && json_equal(mine, key);

	json_decref(mine);
	return eq;
}

/* ---- field sets ----------------------------------------------------- */

static json_t *leaf(void)
{
	return json_pack("{s:{}}", ".");
}

static bool set_put(json_t *set, const char *key, json_t *child)
{
	return key != NULL && child != NULL &&
	       json_object_set_new(set, key, child) == 0;
}

static json_t *fields_of_obj(const struct ctx *c, const json_t *obj, bool root);

static json_t *fields_of_value(const struct ctx *c, const json_t *v)
{
	struct list_info li;
	json_t *node, *item;
	size_t i;

	if (c->depth > FIELDS_MAX_DEPTH)
		return leaf();
	if (json_is_object(v)) {
		if (json_object_size(v) == 0 || atomic_map(c))
			return leaf();
		return fields_of_obj(c, v, false);
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return leaf();
	list_info_of(c, &li);
	if (li.kind == LIST_ATOMIC)
		return leaf();
	node = json_object();
	json_array_foreach(v, i, item)
	{
		char *k;
		json_t *sub;

		if (li.kind == LIST_SET) {
			k = prefixed_dump("v:", item);
			sub = leaf();
		} else {
			struct ctx ic = item_ctx(c);
			json_t *key = item_key(&li, item);

			if (key == NULL) {
				json_decref(node);
				return NULL;
			}
			k = prefixed_dump("k:", key);
			json_decref(key);
			sub = fields_of_obj(&ic, item, false);
			if (sub != NULL)
				json_object_set_new(sub, ".", json_object());
		}
		if (!set_put(node, k, sub)) {
			cu_free(k);
			json_decref(node);
			return NULL;
		}
		cu_free(k);
	}
	return node;
}

/* Fields a write never owns: identity and server-set metadata. */
static bool untracked(bool root, bool meta, const char *key)
{
	static const char *const top[] = {"apiVersion", "kind", "status", NULL};
	static const char *const md[] = {"name", "namespace", "uid",
	    "resourceVersion", "generation", "creationTimestamp",
	    "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
	    "selfLink", "generateName", NULL};
	const char *const *l = root ? top : meta ? md : NULL;
	size_t i;

	for (i = 0; l != NULL && l[i] != NULL; i++)
		if (strcmp(l[i], key) == 0)
			return true;
	return false;
}

static json_t *fields_of_obj(const struct ctx *c, const json_t *obj, bool root)
{
	json_t *node = json_object(), *v;
	const char *key;

	if (node == NULL)
		return NULL;
	json_object_foreach((json_t *)obj, key, v)
	{
		struct ctx cc = child_ctx(c, key);
		char *k;
		json_t *sub;

		if (json_is_null(v) || untracked(root, false, key))
			continue;
		if (root && strcmp(key, "metadata") == 0) {
			const char *mk;
			json_t *mv, *mnode = json_object();

			json_object_foreach(v, mk, mv)
			{
				struct ctx mc = child_ctx(&cc, mk);

				if (json_is_null(mv) ||
				    untracked(false, true, mk))
					continue;
				k = cu_asprintf("f:%s", mk);
				if (!set_put(
					mnode, k, fields_of_value(&mc, mv))) {
					cu_free(k);
					json_decref(mnode);
					json_decref(node);
					return NULL;
				}
				cu_free(k);
			}
			if (json_object_size(mnode) > 0)
				json_object_set_new(node, "f:metadata", mnode);
			else
				json_decref(mnode);
			continue;
		}
		k = cu_asprintf("f:%s", key);
		sub = fields_of_value(&cc, v);
		if (!set_put(node, k, sub)) {
			cu_free(k);
			json_decref(node);
			return NULL;
		}
		cu_free(k);
	}
	return node;
}

json_t *as_fields_of(const struct as_apply_type *t, const json_t *obj)
{
	struct ctx c = {t->schema, t->schema != NULL, NULL, t->kind, 0};

	if (!json_is_object(obj))
		return json_object();
	return fields_of_obj(&c, obj, true);
}

json_t *as_fields_union(const json_t *a, const json_t *b)
{
	json_t *out = json_deep_copy(a), *v;
	const char *key;

	if (out == NULL)
		return NULL;
	json_object_foreach((json_t *)b, key, v)
	{
		json_t *mine = json_object_get(out, key);

		if (mine == NULL)
			json_object_set_new(out, key, json_deep_copy(v));
		else
			json_object_set_new(out, key, as_fields_union(mine, v));
	}
	return out;
}

json_t *as_fields_diff(const json_t *a, const json_t *b)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)a, key, v)
	{
		json_t *other = json_object_get(b, key);

		if (other == NULL) {
			json_object_set_new(out, key, json_deep_copy(v));
		} else if (strcmp(key, ".") != 0) {
			json_t *d = as_fields_diff(v, other);

			if (json_object_size(d) > 0)
				json_object_set_new(out, key, d);
			else
				json_decref(d);
		}
	}
	return out;
}

json_t *as_fields_intersect(const json_t *a, const json_t *b)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)a, key, v)
	{
		json_t *other = json_object_get(b, key);

		if (other == NULL)
			continue;
		if (strcmp(key, ".") == 0) {
			json_object_set_new(out, key, json_object());
		} else {
			json_t *d = as_fields_intersect(v, other);

			if (json_object_size(d) > 0)
				json_object_set_new(out, key, d);
			else
				json_decref(d);
		}
	}
	return out;
}

/* ---- FieldsV1 wire form --------------------------------------------- */

static int decode_node(const json_t *in, json_t **out, int depth, cu_error *err)
{
	json_t *node, *v;
	const char *key;

	*out = NULL;
	if (!json_is_object(in))
		return cu_error_set(err, CU_EPARSE, "fieldsV1: not an object");
	if (depth > FIELDS_MAX_DEPTH)
		return cu_error_set(
		    err, CU_EPARSE, "fieldsV1: nested too deep");
	if (json_object_size(in) == 0) {
		*out = leaf();
		return *out ? CU_OK : cu_error_set(err, CU_ENOMEM, "fieldsV1");
	}
	node = json_object();
	if (node == NULL)
		return cu_error_set(err, CU_ENOMEM, "fieldsV1");
	json_object_foreach((json_t *)in, key, v)
	{
		json_t *sub = NULL;
		int rc;

		if (strcmp(key, ".") == 0) {
			if (!json_is_object(v) || json_object_size(v) != 0) {
				json_decref(node);
				return cu_error_set(err, CU_EPARSE,
				    "fieldsV1: \".\" must be {}");
			}
			json_object_set_new(node, ".", json_object());
			continue;
		}
		if (strncmp(key, "f:", 2) != 0 && strncmp(key, "k:", 2) != 0 &&
		    strncmp(key, "v:", 2) != 0 && strncmp(key, "i:", 2) != 0) {
			json_decref(node);
			return cu_error_set(err, CU_EPARSE,
			    "fieldsV1: unknown path element %.60s", key);
		}
		if (key[0] == 'k' || key[0] == 'v') {
			json_t *parsed =
			    json_loads(key + 2, JSON_DECODE_ANY, NULL);
			bool ok = parsed != NULL &&
				  (key[0] == 'v' || json_is_object(parsed));

			json_decref(parsed);
			if (!ok) {
				json_decref(node);
				return cu_error_set(err, CU_EPARSE,
				    "fieldsV1: bad %s element %.60s",
				    key[0] == 'k' ? "key" : "value", key);
			}
		}
		rc = decode_node(v, &sub, depth + 1, err);
		if (rc != CU_OK) {
			json_decref(node);
			return rc;
		}
		json_object_set_new(node, key, sub);
	}
	*out = node;
	return CU_OK;
}

int as_fields_decode(const json_t *fields, json_t **set, cu_error *err)
{
	/* The root is the object itself, never a member. */
	int rc = decode_node(fields, set, 0, err);

	if (rc == CU_OK)
		json_object_del(*set, ".");
	return rc;
}

json_t *as_fields_encode(const json_t *set)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)set, key, v)
	{
		if (strcmp(key, ".") == 0) {
			if (json_object_size(set) > 1)
				json_object_set_new(out, ".", json_object());
			continue;
		}
		json_object_set_new(out, key, as_fields_encode(v));
	}
	return out;
}

/* ---- walking values along set paths -------------------------------- */

/* The value one path element below v, or NULL. */
static json_t *step(
    const struct ctx *c, const json_t *v, const char *key, struct ctx *next)
{
	json_t *want, *item;
	size_t i;

	if (strncmp(key, "f:", 2) == 0) {
		*next = child_ctx(c, key + 2);
		return json_is_object(v) ? json_object_get(v, key + 2) : NULL;
	}
	*next = item_ctx(c);
	if (!json_is_array(v))
		return NULL;
	want = json_loads(key + 2, JSON_DECODE_ANY, NULL);
	if (want == NULL)
		return NULL;
	json_array_foreach(v, i, item)
	{
		bool hit;

		if (key[0] == 'v') {
			hit = json_equal(item, want);
		} else if (key[0] == 'k') {
			struct list_info li;

			list_info_of(c, &li);
			hit = li.kind == LIST_MAP &&
			      item_matches(&li, item, want);
		} else {
			hit = false;
		}
		if (hit) {
			json_decref(want);
			return item;
		}
	}
	json_decref(want);
	return NULL;
}

/* The members of `set` that differ between a and b: present in only
 * one of them, or (leaves) with different values. */
static json_t *changed(
    const struct ctx *c, const json_t *set, const json_t *a, const json_t *b)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)set, key, v)
	{
		struct ctx n;
		json_t *sub;

		if (strcmp(key, ".") == 0) {
			bool is_leaf = json_object_size(set) == 1;

			if ((a == NULL) != (b == NULL) ||
			    (a != NULL && is_leaf && !json_equal(a, b)))
				json_object_set_new(out, ".", json_object());
			continue;
		}
		{
			struct ctx n2;
			json_t *ca = step(c, a, key, &n);
			json_t *cb = step(c, b, key, &n2);

			sub = changed(&n, v, ca, cb);
		}
		if (json_object_size(sub) > 0)
			json_object_set_new(out, key, sub);
		else
			json_decref(sub);
	}
	return out;
}

/* The members of `set` present in v. */
static json_t *present(const struct ctx *c, const json_t *set, const json_t *v)
{
	json_t *out = json_object(), *s;
	const char *key;

	json_object_foreach((json_t *)set, key, s)
	{
		struct ctx n;
		json_t *sub;

		if (strcmp(key, ".") == 0) {
			if (v != NULL)
				json_object_set_new(out, ".", json_object());
			continue;
		}
		sub = present(&n, s, step(c, v, key, &n));
		if (json_object_size(sub) > 0)
			json_object_set_new(out, key, sub);
		else
			json_decref(sub);
	}
	return out;
}

/* Remove the members of `set` from the container v (in place). */
static void remove_members(const struct ctx *c, json_t *v, const json_t *set)
{
	json_t *s;
	const char *key;

	json_object_foreach((json_t *)set, key, s)
	{
		struct ctx n;
		json_t *child;

		if (strcmp(key, ".") == 0)
			continue;
		child = step(c, v, key, &n);
		if (child == NULL)
			continue;
		if (json_object_get(s, ".") != NULL) {
			if (key[0] == 'f') {
				json_object_del(v, key + 2);
			} else {
				size_t i;

				for (i = 0; i < json_array_size(v); i++)
					if (json_array_get(v, i) == child) {
						json_array_remove(v, i);
						break;
					}
			}
			continue;
		}
		remove_members(&n, child, s);
	}
}

/* Path text as kube prints it: .spec.containers[name="c"].image */
static void path_text(cu_buf *b, const char *key)
{
	if (strncmp(key, "f:", 2) == 0) {
		adds(b, cu_asprintf(".%s", key + 2));
	} else if (strncmp(key, "k:", 2) == 0) {
		json_t *k = json_loads(key + 2, 0, NULL);
		const char *f;
		json_t *v;
		bool first = true;

		adds(b, cu_strdup("["));
		json_object_foreach(k, f, v)
		{
			char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			adds(b, cu_asprintf("%s%s=%s", first ? "" : ",", f,
				    s ? s : ""));
			cu_free(s);
			first = false;
		}
		adds(b, cu_strdup("]"));
		json_decref(k);
	} else {
		adds(b, cu_asprintf("[=%s]", key + 2));
	}
}

/* Append the text of every member path of set to arr. */
static void member_paths(const json_t *set, const char *prefix, json_t *arr)
{
	json_t *v;
	const char *key;

	if (json_object_get(set, ".") != NULL)
		json_array_append_new(arr, json_string(prefix));
	json_object_foreach((json_t *)set, key, v)
	{
		cu_buf b;

		if (strcmp(key, ".") == 0)
			continue;
		cu_buf_init(&b, 1u << 20);
		adds(&b, cu_strdup(prefix));
		path_text(&b, key);
		member_paths(v, bstr(&b), arr);
		cu_buf_dispose(&b);
	}
}

json_t *as_fields_paths(const json_t *set)
{
	json_t *arr = json_array();

	member_paths(set, "", arr);
	return arr;
}

/* ---- merge ---------------------------------------------------------- */

static json_t *merge_value(
    const struct ctx *c, const json_t *live, const json_t *cfg);

static json_t *merge_list(
    const struct ctx *c, const json_t *live, const json_t *cfg)
{
	struct list_info li;
	struct ctx ic = item_ctx(c);
	json_t *out, *item;
	size_t i, j;

	list_info_of(c, &li);
	if (li.kind == LIST_ATOMIC || !json_is_array(live))
		return json_deep_copy(cfg);
	out = json_deep_copy(live);
	json_array_foreach(cfg, i, item)
	{
		bool found = false;

		for (j = 0; j < json_array_size(out) && !found; j++) {
			json_t *cur = json_array_get(out, j);

			if (li.kind == LIST_SET) {
				found = json_equal(cur, item);
			} else {
				json_t *key = item_key(&li, item);

				found =
				    key != NULL && item_matches(&li, cur, key);
				json_decref(key);
				if (found)
					json_array_set_new(out, j,
					    merge_value(&ic, cur, item));
			}
		}
		if (!found)
			json_array_append_new(out, json_deep_copy(item));
	}
	return out;
}

static json_t *merge_value(
    const struct ctx *c, const json_t *live, const json_t *cfg)
{
	json_t *out, *v;
	const char *key;

	if (json_is_array(cfg))
		return merge_list(c, live, cfg);
	if (!json_is_object(cfg) || !json_is_object(live) || atomic_map(c) ||
	    c->depth > FIELDS_MAX_DEPTH)
		return json_deep_copy(cfg);
	out = json_deep_copy(live);
	json_object_foreach((json_t *)cfg, key, v)
	{
		struct ctx cc = child_ctx(c, key);

		if (json_is_null(v))
			continue;
		json_object_set_new(
		    out, key, merge_value(&cc, json_object_get(live, key), v));
	}
	return out;
}

json_t *as_apply_merge(
    const struct as_apply_type *t, const json_t *live, const json_t *cfg)
{
	struct ctx c = {t->schema, t->schema != NULL, NULL, t->kind, 0};

	return merge_value(&c, live, cfg);
}

/* ---- managedFields -------------------------------------------------- */

static const char *entry_str(const json_t *e, const char *key)
{
	const char *s = json_string_value(json_object_get(e, key));

	return s ? s : "";
}

static json_t *entry_set(const json_t *e)
{
	json_t *set = NULL;

	if (as_fields_decode(json_object_get(e, "fieldsV1"), &set, NULL) !=
	    CU_OK)
		return json_object();
	return set;
}

static json_t *new_entry(
    const struct as_manager *m, const char *op, const json_t *set)
{
	json_t *e =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "manager", m->manager,
		"operation", op, "apiVersion", m->api_version, "time", m->time,
		"fieldsType", "FieldsV1", "fieldsV1", as_fields_encode(set));

	if (e != NULL && m->subresource != NULL && m->subresource[0] != '\0')
		json_object_set_new(
		    e, "subresource", json_string(m->subresource));
	return e;
}

static json_t *managed_of(const json_t *obj)
{
	json_t *mf =
	    json_object_get(json_object_get(obj, "metadata"), "managedFields");

	return json_is_array(mf) ? mf : NULL;
}

static void set_managed(json_t *obj, json_t *mf)
{
	json_t *md = json_object_get(obj, "metadata");

	if (!json_is_object(md)) {
		json_decref(mf);
		return;
	}
	if (json_array_size(mf) == 0) {
		json_object_del(md, "managedFields");
		json_decref(mf);
		return;
	}
	json_object_set_new(md, "managedFields", mf);
}

/* Replace entry e's set, keeping the rest of the entry. */
static json_t *with_set(const json_t *e, const json_t *set)
{
	json_t *c = json_deep_copy(e);

	json_object_set_new(c, "fieldsV1", as_fields_encode(set));
	return c;
}

static bool is_entry(const json_t *e, const char *manager, const char *op,
    const char *api_version, const char *sub)
{
	return strcmp(entry_str(e, "manager"), manager) == 0 &&
	       strcmp(entry_str(e, "operation"), op) == 0 &&
	       strcmp(entry_str(e, "subresource"), sub ? sub : "") == 0 &&
	       (api_version == NULL ||
		   strcmp(entry_str(e, "apiVersion"), api_version) == 0);
}

/* Put child [owned; may be NULL] under key in *node (created). */
static void put_child(json_t **node, const char *key, json_t *child)
{
	if (child == NULL)
		return;
	if (*node == NULL)
		*node = json_object();
	if (*node == NULL || json_object_set_new(*node, key, child) != 0)
		json_decref(child);
}

static void put_prefixed(
    json_t **node, const char *prefix, const json_t *v, json_t *child)
{
	char *k = prefixed_dump(prefix, v);

	if (k == NULL)
		json_decref(child);
	else
		put_child(node, k, child);
	cu_free(k);
}

/* The members that differ between a and b (values at one path, either
 * NULL) as the set node of that path in *ch, those only in a in *rm;
 * NULL when none. Equal subtrees are skipped whole, so an update costs
 * what it changed. level: 0 the object, 1 its metadata, 2 below. */
static void diff_value(const struct ctx *c, const json_t *a, const json_t *b,
    int level, json_t **ch, json_t **rm)
{
	struct list_info li;
	json_t *v, *item;
	const char *key;
	size_t i, j;

	*ch = *rm = NULL;
	if (a != NULL && b != NULL && json_equal(a, b))
		return;
	if (b == NULL || json_is_null(b)) {
		if (a == NULL || json_is_null(a))
			return;
		*rm = level == 0 ? fields_of_obj(c, a, true)
				 : fields_of_value(c, a);
		*ch = json_deep_copy(*rm);
		return;
	}
	if (a == NULL || json_is_null(a)) {
		*ch = level == 0 ? fields_of_obj(c, b, true)
				 : fields_of_value(c, b);
		return;
	}
	if (json_is_object(a) && json_is_object(b) && json_object_size(a) &&
	    json_object_size(b) && (level < 2 || !atomic_map(c)) &&
	    c->depth <= FIELDS_MAX_DEPTH) {
		for (i = 0; i < 2; i++) {
			const json_t *x = i == 0 ? b : a, *y = i == 0 ? a : b;

			json_object_foreach((json_t *)x, key, v)
			{
				struct ctx cc = child_ctx(c, key);
				json_t *sch, *srm;
				char *k;

				if (i == 1 && json_object_get(y, key) != NULL)
					continue; /* seen from b */
				if (untracked(level == 0, level == 1, key))
					continue;
				diff_value(&cc,
				    i == 0 ? json_object_get(a, key) : v,
				    i == 0 ? v : NULL,
				    level == 0 && strcmp(key, "metadata") == 0
					? 1
					: 2,
				    &sch, &srm);
				if (sch == NULL && srm == NULL)
					continue;
				k = cu_asprintf("f:%s", key);
				if (k == NULL) {
					json_decref(sch);
					json_decref(srm);
					continue;
				}
				put_child(ch, k, sch);
				put_child(rm, k, srm);
				cu_free(k);
			}
		}
		return;
	}
	list_info_of(c, &li);
	if (json_is_array(a) && json_is_array(b) && li.kind != LIST_ATOMIC &&
	    json_array_size(a) && json_array_size(b)) {
		struct ctx ic = item_ctx(c);

		if (li.kind == LIST_SET) {
			for (i = 0; i < 2; i++) {
				const json_t *x = i == 0 ? b : a;
				const json_t *y = i == 0 ? a : b;

				json_array_foreach(x, j, item)
				{
					size_t n;
					bool in = false;

					for (n = 0; n < json_array_size(y); n++)
						in = in ||
						     json_equal(item,
							 json_array_get(y, n));
					if (in)
						continue;
					put_prefixed(ch, "v:", item, leaf());
					if (i == 1)
						put_prefixed(
						    rm, "v:", item, leaf());
				}
			}
			return;
		}
		for (i = 0; i < 2; i++) {
			const json_t *x = i == 0 ? b : a, *y = i == 0 ? a : b;

			json_array_foreach(x, j, item)
			{
				json_t *ik = item_key(&li, item), *other = NULL;
				json_t *sch, *srm;
				size_t n;

				if (ik == NULL)
					continue;
				for (n = 0; n < json_array_size(y) && !other;
				     n++)
					if (item_matches(
						&li, json_array_get(y, n), ik))
						other = json_array_get(y, n);
				if (i == 1 && other != NULL) {
					json_decref(ik);
					continue;
				}
				diff_value(&ic, i == 0 ? other : item,
				    i == 0 ? item : NULL, 2, &sch, &srm);
				if (json_is_object(item) &&
				    (i == 1 || other == NULL)) {
					/* The item itself came or went. */
					if (sch != NULL)
						json_object_set_new(
						    sch, ".", json_object());
					if (srm != NULL)
						json_object_set_new(
						    srm, ".", json_object());
				}
				if (sch != NULL)
					put_prefixed(ch, "k:", ik, sch);
				if (srm != NULL)
					put_prefixed(rm, "k:", ik, srm);
				json_decref(ik);
			}
		}
		return;
	}
	*ch = leaf();
}

/* Whether a member of the normalised set is not in the wire FieldsV1 w. */
static bool wire_misses(const json_t *set, const json_t *w)
{
	json_t *v;
	const char *key;

	json_object_foreach((json_t *)set, key, v)
	{
		json_t *wc;

		if (strcmp(key, ".") == 0) {
			if (json_object_size(w) != 0 &&
			    json_object_get(w, ".") == NULL)
				return true;
			continue;
		}
		wc = json_object_get(w, key);
		if (!json_is_object(wc) || wire_misses(v, wc))
			return true;
	}
	return false;
}

/* Whether the normalised set meets the wire FieldsV1 w in a member. */
static bool wire_meets(const json_t *set, const json_t *w)
{
	json_t *v;
	const char *key;

	json_object_foreach((json_t *)set, key, v)
	{
		json_t *wc;

		if (strcmp(key, ".") == 0) {
			if (json_object_size(w) == 0 ||
			    json_object_get(w, ".") != NULL)
				return true;
			continue;
		}
		wc = json_object_get(w, key);
		if (json_is_object(wc) && wire_meets(v, wc))
			return true;
	}
	return false;
}

int as_apply_track_update(const struct as_apply_type *t, const json_t *old,
    json_t *obj, const struct as_manager *m)
{
	struct ctx c = {t->schema, t->schema != NULL, NULL, t->kind, 0};
	json_t *ch = NULL, *rm = NULL, *prev = managed_of(old), *e;
	json_t *out = NULL, *mine = NULL, *mine_e = NULL;
	size_t i;
	int rc = CU_OK;

	if (m->subresource != NULL && strcmp(m->subresource, "status") == 0) {
		/* A status write owns fields of status only. */
		struct ctx sc = child_ctx(&c, "status");
		json_t *sch, *srm;

		diff_value(&sc, json_object_get(old, "status"),
		    json_object_get(obj, "status"), 2, &sch, &srm);
		put_child(&ch, "f:status", sch);
		put_child(&rm, "f:status", srm);
	} else {
		diff_value(&c, old, obj, 0, &ch, &rm);
	}
	if (ch == NULL) {
		/* Nothing changed: ownership stays as it was. */
		set_managed(obj, prev ? json_deep_copy(prev) : json_array());
		goto done;
	}
	out = json_array();
	if (out == NULL) {
		rc = CU_ENOMEM;
		goto done;
	}
	json_array_foreach(prev, i, e)
	{
		json_t *s, *rest;

		if (is_entry(e, m->manager, "Update", m->api_version,
			m->subresource)) {
			mine_e = e;
			continue;
		}
		if (!wire_meets(ch, json_object_get(e, "fieldsV1"))) {
			json_array_append(out, e);
			continue;
		}
		s = entry_set(e);
		rest = as_fields_diff(s, ch);
		if (json_object_size(rest) > 0)
			json_array_append_new(out, with_set(e, rest));
		json_decref(rest);
		json_decref(s);
	}
	if (mine_e != NULL && rm == NULL &&
	    !wire_misses(ch, json_object_get(mine_e, "fieldsV1"))) {
		/* The manager already owns every changed field (the usual
		 * controller write): its entry only gets the new time. */
		json_t *cp = json_copy((json_t *)mine_e);

		json_object_set_new(cp, "time", json_string(m->time));
		json_array_append_new(out, cp);
	} else {
		json_t *u, *p;

		mine = mine_e ? entry_set(mine_e) : NULL;
		u = mine ? as_fields_union(mine, ch) : json_incref(ch);
		p = rm ? as_fields_diff(u, rm) : json_incref(u);

		if (json_object_size(p) > 0)
			json_array_append_new(out, new_entry(m, "Update", p));
		json_decref(p);
		json_decref(u);
	}
	set_managed(obj, out);
	out = NULL;
done:
	json_decref(mine);
	json_decref(out);
	json_decref(ch);
	json_decref(rm);
	return rc;
}

/* The 409 of an apply that conflicts (kube's wording). */
static json_t *conflict_status(json_t *found /* [{who, path}] */)
{
	size_t n = json_array_size(found), i;
	json_t *causes = json_array(), *st, *f;
	cu_buf msg;

	cu_buf_init(&msg, 1u << 20);
	json_array_foreach(found, i, f)
	{
		json_array_append_new(causes,
		    json_pack("{s:s, s:s, s:s}", "type", "FieldManagerConflict",
			"message", entry_str(f, "cause"), "field",
			entry_str(f, "path")));
	}
	if (n == 1) {
		f = json_array_get(found, 0);
		adds(&msg, cu_asprintf("Apply failed with 1 conflict: %s: %s",
			       entry_str(f, "cause"), entry_str(f, "path")));
	} else {
		const char *last = NULL;

		adds(&msg, cu_asprintf("Apply failed with %zu conflicts: ", n));
		json_array_foreach(found, i, f)
		{
			const char *who = entry_str(f, "who");

			if (last == NULL || strcmp(last, who) != 0)
				adds(&msg, cu_asprintf("%sconflicts with %s:",
					       last ? "\n" : "", who));
			adds(&msg, cu_asprintf("\n- %s", entry_str(f, "path")));
			last = who;
		}
	}
	st = as_status(409, "Conflict", bstr(&msg));
	json_object_set_new(
	    st, "details", json_pack("{s:o}", "causes", causes));
	cu_buf_dispose(&msg);
	return st;
}

/* How a conflict names its manager: "m" (Apply) or "m" using v at t. */
static char *who_of(const json_t *e)
{
	const char *sub = entry_str(e, "subresource");
	char *base = sub[0] ? cu_asprintf("\"%s\" with subresource \"%s\"",
				  entry_str(e, "manager"), sub)
			    : cu_asprintf("\"%s\"", entry_str(e, "manager"));
	char *out;

	if (base == NULL || strcmp(entry_str(e, "operation"), "Update") != 0)
		return base;
	if (entry_str(e, "time")[0] != '\0')
		out = cu_asprintf("%s using %s at %s", base,
		    entry_str(e, "apiVersion"), entry_str(e, "time"));
	else
		out = cu_asprintf(
		    "%s using %s", base, entry_str(e, "apiVersion"));
	cu_free(base);
	return out;
}

/* Managers sorted, each one's paths in the order found (stable). */
static int by_who(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(entry_str(x, "who"), entry_str(y, "who"));
	json_int_t i = json_integer_value(json_object_get(x, "i"));
	json_int_t j = json_integer_value(json_object_get(y, "i"));

	return c != 0 ? c : (i > j) - (i < j);
}

int as_apply(const struct as_apply_type *t, const json_t *live,
    const json_t *cfg_in, const struct as_manager *m, json_t **out,
    json_t **conflict, cu_error *err)
{
	struct ctx c = {t->schema, t->schema != NULL, NULL, t->kind, 0};
	json_t *cfg = NULL, *mine = json_object(), *others = json_array();
	json_t *cset = NULL, *merged = NULL, *found = json_array();
	json_t *prev = managed_of(live), *e, *result = json_array();
	size_t i;
	int rc = CU_OK;

	*out = NULL;
	*conflict = NULL;
	if (!json_is_object(cfg_in)) {
		rc = cu_error_set(err, CU_EPARSE,
		    "error decoding YAML: the applied configuration is not an "
		    "object");
		goto done;
	}
	cfg = json_deep_copy(cfg_in);
	json_object_del(json_object_get(cfg, "metadata"), "managedFields");
	json_object_del(cfg, "status");
	cset = as_fields_of(t, cfg);
	if (cset == NULL) {
		rc = cu_error_set(err, CU_EINVAL,
		    "an item of an associative list omits one of its keys");
		goto done;
	}
	merged = live ? as_apply_merge(t, live, cfg) : json_deep_copy(cfg);
	if (merged == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto done;
	}
	/* Conflicts: fields this apply changes that another manager owns. */
	json_array_foreach(prev, i, e)
	{
		json_t *s = entry_set(e), *both, *ch, *paths, *p;
		size_t j;

		if (is_entry(e, m->manager, "Apply", NULL, NULL)) {
			json_decref(mine);
			mine = s;
			continue;
		}
		both = as_fields_intersect(cset, s);
		ch = changed(&c, both, live, merged);
		if (json_object_size(ch) > 0 && m->force) {
			json_t *rest = as_fields_diff(s, ch);

			json_decref(s);
			s = rest;
		} else if (json_object_size(ch) > 0) {
			char *who = who_of(e);
			char *cause =
			    cu_asprintf("conflict with %s", who ? who : "");

			paths = as_fields_paths(ch);
			json_array_foreach(paths, j, p)
			{
				json_array_append_new(found,
				    json_pack("{s:s, s:s, s:O, s:I}", "who",
					who ? who : "", "cause",
					cause ? cause : "", "path", p, "i",
					(json_int_t)json_array_size(found)));
			}
			json_decref(paths);
			cu_free(who);
			cu_free(cause);
		}
		json_array_append_new(
		    others, json_pack("{s:O, s:o}", "entry", e, "set", s));
		json_decref(both);
		json_decref(ch);
	}
	if (json_array_size(found) > 0) {
		/* Grouped by manager, managers sorted (as kube prints). */
		size_t n = json_array_size(found);
		json_t **v = cu_calloc(n, sizeof(*v));
		json_t *sorted = json_array();

		for (i = 0; v != NULL && i < n; i++)
			v[i] = json_array_get(found, i);
		if (v != NULL)
			qsort(v, n, sizeof(*v), by_who);
		for (i = 0; v != NULL && i < n; i++)
			json_array_append(sorted, v[i]);
		cu_free(v);
		*conflict = conflict_status(sorted);
		json_decref(sorted);
		rc = cu_error_set(err, CU_ECONFLICT, "apply conflicts");
		goto done;
	}
	/* Fields this manager stops applying go, unless someone else still
	 * owns them. */
	{
		json_t *gone = as_fields_diff(mine, cset), *o;

		json_array_foreach(others, i, o)
		{
			json_t *rest =
			    as_fields_diff(gone, json_object_get(o, "set"));

			json_decref(gone);
			gone = rest;
		}
		remove_members(&c, merged, gone);
		json_decref(gone);
	}
	/* Ownership: entries in their order; this manager's Apply entry
	 * replaces its previous one (or comes last when new). */
	{
		bool placed = false;
		json_t *o;
		size_t k = 0;

		json_array_foreach(prev, i, e)
		{
			if (is_entry(e, m->manager, "Apply", NULL, NULL)) {
				/* Unchanged ownership keeps its entry (and
				 * time): a repeated apply is a no-op. */
				if (!placed && json_equal(mine, cset) &&
				    strcmp(entry_str(e, "apiVersion"),
					m->api_version) == 0)
					json_array_append(result, e);
				else if (!placed && json_object_size(cset) > 0)
					json_array_append_new(result,
					    new_entry(m, "Apply", cset));
				placed = true;
				continue;
			}
			o = json_array_get(others, k++);
			{
				json_t *p = present(
				    &c, json_object_get(o, "set"), merged);

				if (json_object_size(p) > 0)
					json_array_append_new(
					    result, with_set(e, p));
				json_decref(p);
			}
		}
		if (!placed && json_object_size(cset) > 0)
			json_array_append_new(
			    result, new_entry(m, "Apply", cset));
	}
	set_managed(merged, result);
	result = NULL;
	*out = merged;
	merged = NULL;
done:
	json_decref(result);
	json_decref(found);
	json_decref(merged);
	json_decref(cset);
	json_decref(others);
	json_decref(mine);
	json_decref(cfg);
	return rc;
}
