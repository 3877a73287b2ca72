/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/specs.c - the flag values of kueuectl's `create clusterqueue` and
 * `create resourceflavor` as kueuectl reads them: quotas per flavor
 * ("FLAVOR:RESOURCE=QUANTITY;..."), merged by flavor and grouped by the
 * resources they cover; KEY=VALUE maps; taints and tolerations
 * ("KEY[=VALUE][:EFFECT]"). Pure: JSON out, no I/O. See cli/cli.h.
 */
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/labelselector.h"
#include "api/quantity.h"
#include "cli/cli.h"

#define MAX_ITEMS 64

static const char *const QUOTA_KEY[3] = {
    "nominalQuota", "borrowingLimit", "lendingLimit"};
static const char *const QUOTA_FLAG[3] = {
    "--nominal-quota", "--borrowing-limit", "--lending-limit"};

/* One comma-separated item of a list flag, s[0..n), trimmed, into buf. */
static bool item(const char *s, size_t n, char *buf, size_t cap)
{
	while (n > 0 && s[0] == ' ') {
		s++;
		n--;
	}
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n >= cap)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

static bool dns_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '-' || c == '.'))
			return false;
	}
	return s[0] != '-' && s[0] != '.' && s[n - 1] != '-' && s[n - 1] != '.';
}

/* The flavor's entry of rgs-in-progress "flavors" (an object keyed by
 * flavor, each {"order": [names], name: {quota fields}}). */
static int one_quota_spec(
    const char *spec, int which, json_t *flavors, json_t *order, cu_error *err)
{
	const char *colon = strchr(spec, ':'), *p;
	char flavor[256], res[256];
	json_t *fl, *names;
	size_t nres = 0;
	bool fresh;
	int rc = CU_OK;

#define BAD(why)                                                               \
	cu_error_set(err, CU_EINVAL,                                           \
	    "%s \"%s\": %s: write FLAVOR:RESOURCE=QUANTITY[;RESOURCE="         \
	    "QUANTITY...], e.g. default-flavor:cpu=9;memory=36Gi",             \
	    QUOTA_FLAG[which], spec, why)
	if (colon == NULL ||
	    !item(spec, (size_t)(colon - spec), flavor, sizeof(flavor)) ||
	    !dns_name(flavor))
		return BAD("invalid flavor name");
	fl = json_object_get(flavors, flavor);
	fresh = fl == NULL;
	names = json_array();
	if (fresh && names != NULL &&
	    (json_object_set_new(flavors, flavor, json_object()) != 0 ||
		json_array_append_new(order, json_string(flavor)) != 0))
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	if (names == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	fl = json_object_get(flavors, flavor);
	p = colon + 1;
	while (rc == CU_OK) {
		const char *semi = strchr(p, ';');
		char *eq;
		size_t n = semi ? (size_t)(semi - p) : strlen(p);
		struct api_quantity q;
		cu_error qe;
		json_t *r;

		if (n == 0 && semi == NULL && nres > 0)
			break; /* a trailing ';' */
		if (!item(p, n, res, sizeof(res)) ||
		    (eq = strchr(res, '=')) == NULL || eq == res ||
		    eq[1] == '\0') {
			rc = BAD("invalid resources specification");
			break;
		}
		*eq = '\0';
		if (api_quantity_parse(&q, eq + 1, &qe) != CU_OK) {
			rc = BAD("invalid quantity");
			break;
		}
		r = json_object_get(fl, res);
		if (fresh ? r != NULL : r == NULL) {
			rc = BAD(fresh ? "a resource listed twice"
				       : "a flavor must list the same "
					 "resources in every quota flag");
			break;
		}
		if (fresh &&
		    (json_object_set_new(fl, res, json_object()) != 0 ||
			json_array_append_new(names, json_string(res)) != 0)) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		r = json_object_get(fl, res);
		if (json_object_get(r, QUOTA_KEY[which]) == NULL &&
		    json_object_set_new(
			r, QUOTA_KEY[which], json_string(eq + 1)) != 0) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		nres++;
		if (semi == NULL)
			break;
		p = semi + 1;
	}
	/* the flavor's resources in the first spec's order */
	if (rc == CU_OK && fresh &&
	    json_object_set(fl, "\x01order", names) != 0)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	if (rc == CU_OK && !fresh && json_object_size(fl) != nres + 1)
		rc = BAD("a flavor must list the same resources in every "
			 "quota flag");
	json_decref(names);
	return rc;
#undef BAD
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted resource names of a flavor, joined by ',' [owned]. */
static char *group_id(json_t *order)
{
	const char *v[MAX_ITEMS] = {0};
	size_t i, n = json_array_size(order);
	cu_buf b;

	if (n > MAX_ITEMS)
		n = MAX_ITEMS;
	for (i = 0; i < n; i++)
		v[i] = json_string_value(json_array_get(order, i));
	qsort(v, n, sizeof(v[0]), cmp_str);
	cu_buf_init(&b, 1 << 16);
	for (i = 0; i < n; i++)
		if (cu_buf_addf(&b, "%s,", v[i]) != CU_OK) {
			cu_buf_dispose(&b);
			return NULL;
		}
	if (cu_buf_adds(&b, "") != CU_OK) {
		cu_buf_dispose(&b);
		return NULL;
	}
	return cu_buf_detach(&b, NULL);
}

int cli_resource_groups(const char *const *flags[3], const size_t nflags[3],
    json_t **out, cu_error *err)
{
	json_t *flavors = json_object(), *order = json_array();
	json_t *groups = json_array(), *ids = json_array();
	size_t w, k, i;
	int rc = CU_OK;

	*out = NULL;
	if (flavors == NULL || order == NULL || groups == NULL || ids == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	/* every item of every flag, merged by flavor */
	for (w = 0; w < 3 && rc == CU_OK; w++)
		for (k = 0; k < nflags[w] && rc == CU_OK; k++) {
			const char *p = flags[w][k];

			while (rc == CU_OK) {
				const char *c = strchr(p, ',');
				size_t n = c ? (size_t)(c - p) : strlen(p);
				char one[1024];

				if (!item(p, n, one, sizeof(one)))
					rc = cu_error_set(err, CU_EINVAL,
					    "%s: item longer than 1023 bytes",
					    QUOTA_FLAG[w]);
				else
					rc = one_quota_spec(
					    one, (int)w, flavors, order, err);
				if (c == NULL)
					break;
				p = c + 1;
			}
		}
	/* flavors with the same resources form a group, in order */
	for (i = 0; i < json_array_size(order) && rc == CU_OK; i++) {
		const char *fname = json_string_value(json_array_get(order, i));
		json_t *fl = json_object_get(flavors, fname);
		json_t *names = json_object_get(fl, "\x01order");
		char *id = group_id(names);
		json_t *res = json_array(), *rg = NULL, *n;
		size_t g, j;

		if (id == NULL || res == NULL) {
			cu_free(id);
			json_decref(res);
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		json_array_foreach(names, j, n)
		{
			json_t *q = json_deep_copy(
			    json_object_get(fl, json_string_value(n)));

			if (q == NULL ||
			    json_object_set_new(q, "name", json_copy(n)) ||
			    (!json_object_get(q, "nominalQuota") &&
				json_object_set_new(
				    q, "nominalQuota", json_string("0"))) ||
			    json_array_append_new(res, q))
				rc = cu_error_set(
				    err, CU_ENOMEM, "out of memory");
		}
		for (g = 0; g < json_array_size(ids) && rc == CU_OK; g++) {
			const char *gid =
			    json_string_value(json_array_get(ids, g));

			if (strcmp(gid, id) == 0) {
				rg = json_array_get(groups, g);
				break;
			}
			json_array_foreach(names, j, n)
			{
				char needle[300], hay[4096];

				snprintf(needle, sizeof(needle), ",%s,",
				    json_string_value(n));
				snprintf(hay, sizeof(hay), ",%s", gid);
				if (rc == CU_OK && strstr(hay, needle) != NULL)
					rc = cu_error_set(err, CU_EINVAL,
					    "flavor %s: resource %s is already "
					    "covered by a flavor with other "
					    "resources (a resource belongs to "
					    "one group only): give the flavors "
					    "that share it the same resources",
					    fname, json_string_value(n));
			}
		}
		if (rc == CU_OK && rg == NULL) {
			rg = json_pack("{s:O, s:[]}", "coveredResources", names,
			    "flavors");
			if (rg == NULL || json_array_append_new(groups, rg) ||
			    json_array_append_new(ids, json_string(id)))
				rc = cu_error_set(
				    err, CU_ENOMEM, "out of memory");
		}
		if (rc == CU_OK &&
		    json_array_append_new(json_object_get(rg, "flavors"),
			json_pack("{s:s, s:O}", "name", fname, "resources",
			    res)) != 0)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		json_decref(res);
		cu_free(id);
	}
	json_decref(flavors);
	json_decref(order);
	json_decref(ids);
	if (rc != CU_OK) {
		json_decref(groups);
		return rc;
	}
	*out = groups;
	return CU_OK;
}

int cli_key_values(
    const char *flag, const char *spec, json_t **out, cu_error *err)
{
	json_t *o = json_object();
	const char *p = spec;

	*out = NULL;
	if (o == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	while (*p != '\0') {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char one[512], *eq;
		cu_error e;

		if (!item(p, n, one, sizeof(one)) ||
		    (eq = strchr(one, '=')) == NULL || eq == one) {
			json_decref(o);
			return cu_error_set(err, CU_EINVAL,
			    "%s \"%.*s\": must be formatted as key=value[,"
			    "key=value]",
			    flag, (int)n, p);
		}
		*eq = '\0';
		if (api_validate_label_key(one, flag, &e) != CU_OK ||
		    api_validate_label_value(eq + 1, flag, &e) != CU_OK) {
			json_decref(o);
			return cu_error_set(err, CU_EINVAL, "%s", e.msg);
		}
		if (json_object_set_new(o, one, json_string(eq + 1)) != 0) {
			json_decref(o);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
		if (c == NULL)
			break;
		p = c + 1;
	}
	*out = o;
	return CU_OK;
}

static bool effect_ok(const char *e)
{
	return strcmp(e, "NoSchedule") == 0 ||
	       strcmp(e, "PreferNoSchedule") == 0 ||
	       strcmp(e, "NoExecute") == 0;
}

/* KEY[=VALUE][:EFFECT] into its parts (in buf); false when malformed. */
static bool split_item(char *buf, char **key, char **value, char **effect)
{
	char *colon = strchr(buf, ':'), *eq;

	*effect = NULL;
	if (colon != NULL) {
		if (strchr(colon + 1, ':') != NULL)
			return false;
		*colon = '\0';
		*effect = colon + 1;
	}
	eq = strchr(buf, '=');
	*value = NULL;
	if (eq != NULL) {
		if (strchr(eq + 1, '=') != NULL)
			return false;
		*eq = '\0';
		*value = eq + 1;
	}
	*key = buf;
	return true;
}

int cli_taints_or_tolerations(
    bool taints, const char *spec, json_t **out, cu_error *err)
{
	const char *flag = taints ? "--node-taints" : "--tolerations";
	const char *form =
	    taints ? "KEY[=VALUE]:EFFECT" : "KEY[=VALUE][:EFFECT] or :EFFECT";
	json_t *a = json_array();
	const char *p = spec;

	*out = NULL;
	if (a == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	while (*p != '\0') {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char one[512], *key, *value, *effect;
		cu_error e;
		json_t *t;
		size_t i;

		if (!item(p, n, one, sizeof(one)) || one[0] == '\0' ||
		    !split_item(one, &key, &value, &effect) ||
		    (taints && (effect == NULL || key[0] == '\0')) ||
		    (!taints && key[0] == '\0' && value != NULL)) {
			json_decref(a);
			return cu_error_set(err, CU_EINVAL,
			    "%s \"%.*s\": invalid spec: write %s, EFFECT one "
			    "of NoSchedule, PreferNoSchedule, NoExecute",
			    flag, (int)n, p, form);
		}
		if ((effect != NULL && (effect[0] != '\0' || taints) &&
			!effect_ok(effect)) ||
		    (key[0] != '\0' &&
			api_validate_label_key(key, flag, &e) != CU_OK) ||
		    (value != NULL && value[0] != '\0' &&
			api_validate_label_value(value, flag, &e) != CU_OK)) {
			json_decref(a);
			if (effect != NULL && !effect_ok(effect))
				return cu_error_set(err, CU_EINVAL,
				    "%s \"%.*s\": invalid taint effect \"%s\": "
				    "one of NoSchedule, PreferNoSchedule, "
				    "NoExecute",
				    flag, (int)n, p, effect);
			return cu_error_set(err, CU_EINVAL, "%s", e.msg);
		}
		t = json_object();
		if (t == NULL || json_array_append_new(a, t) != 0) {
			json_decref(a);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
		if (key[0] != '\0')
			(void)json_object_set_new(t, "key", json_string(key));
		if (!taints)
			(void)json_object_set_new(t, "operator",
			    json_string(key[0] == '\0' || value == NULL ||
						value[0] == '\0'
					    ? "Exists"
					    : "Equal"));
		if (value != NULL && value[0] != '\0')
			(void)json_object_set_new(
			    t, "value", json_string(value));
		if (effect != NULL && effect[0] != '\0')
			(void)json_object_set_new(
			    t, "effect", json_string(effect));
		/* kueuectl: one taint per key and effect */
		for (i = 0; taints && i + 1 < json_array_size(a); i++) {
			json_t *o = json_array_get(a, i);

			const char *ok = api_json_str(o, "key");

			if (strcmp(ok != NULL ? ok : "", key) == 0 &&
			    strcmp(api_json_str(o, "effect"), effect) == 0) {
				json_decref(a);
				return cu_error_set(err, CU_EINVAL,
				    "--node-taints: duplicated taints with the "
				    "same key and effect: %s:%s",
				    key, effect);
			}
		}
		if (c == NULL)
			break;
		p = c + 1;
	}
	*out = a;
	return CU_OK;
}
