/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/podres.c - kube-apiserver's validation of the resources
 * in a pod spec (core validation ValidateResourceRequirements and
 * ValidateNonnegativeQuantity) for the built-in kinds that carry one:
 * Pods, PodTemplates, Deployments, ReplicaSets, StatefulSets, Jobs and
 * CronJobs. A negative limit or request of a container, an init container
 * or the pod itself is refused (422, every cause listed, limits before
 * requests as kube lists them). Large values are not: resource.Quantity
 * keeps "1e1000" exactly and caps "8Ei" at 2^63-1, so both are valid and
 * reach the controller.
 */
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "tests/apiserver/apiserver.h"

struct podres_ctx {
	const struct as_kind *k;
	const char *name;
	struct as_resp *resp;
	int n; /* causes so far */
};

/* Where the kind keeps its pod spec; NULL: it has none. */
static const char *pod_spec_path(const struct as_kind *k)
{
	static const struct {
		const char *group, *plural, *path;
	} kinds[] = {
	    {"", "pods", "spec"},
	    {"", "podtemplates", "template.spec"},
	    {"apps", "deployments", "spec.template.spec"},
	    {"apps", "replicasets", "spec.template.spec"},
	    {"apps", "statefulsets", "spec.template.spec"},
	    {"batch", "jobs", "spec.template.spec"},
	    {"batch", "cronjobs", "spec.jobTemplate.spec.template.spec"},
	};
	size_t i;

	if (k->flags & AS_CUSTOM)
		return NULL;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(k->group, kinds[i].group) == 0 &&
		    strcmp(k->plural, kinds[i].plural) == 0)
			return kinds[i].path;
	return NULL;
}

/* Negative, and the value as Quantity.String() prints it (the input
 * when it is beyond what api_quantity holds). */
static bool negative(const char *s, char *shown, size_t n)
{
	struct api_quantity q;
	cu_error err;
	int rc = api_quantity_parse(&q, s, &err);

	if (rc == CU_OK) {
		api_quantity_format(&q, shown, n);
		return q.milli < 0;
	}
	/* Out of range: the sign decides (a zero never is). */
	snprintf(shown, n, "%s", s);
	return rc == CU_ERANGE && s[0] == '-';
}

static void invalid(struct podres_ctx *x, const char *field, const char *v)
{
	static const char msg[] =
	    "Invalid value: \"%s\": must be greater than or equal to 0";

	if (x->n++ == 0)
		as_resp_invalid(x->resp, x->k, x->name, field, msg, v);
	else
		as_resp_invalid_add(x->resp, field, msg, v);
}

static void resource_list(
    struct podres_ctx *x, json_t *res, const char *path, const char *which)
{
	json_t *list = json_object_get(res, which), *v;
	const char *key;

	json_object_foreach(list, key, v)
	{
		char shown[256], field[768];

		if (!json_is_string(v) ||
		    !negative(json_string_value(v), shown, sizeof(shown)))
			continue;
		snprintf(field, sizeof(field), "%s.%s[%s]", path, which, key);
		invalid(x, field, shown);
	}
}

static void requirements(struct podres_ctx *x, json_t *res, const char *path)
{
	if (!json_is_object(res))
		return;
	resource_list(x, res, path, "limits");
	resource_list(x, res, path, "requests");
}

static void containers(
    struct podres_ctx *x, json_t *spec, const char *base, const char *member)
{
	json_t *list = json_object_get(spec, member), *c;
	size_t i;

	json_array_foreach(list, i, c)
	{
		char path[512];

		snprintf(path, sizeof(path), "%s.%s[%zu].resources", base,
		    member, i);
		requirements(x, json_object_get(c, "resources"), path);
	}
}

bool as_pod_resources_ok(const struct as_kind *k, json_t *obj, const char *name,
    struct as_resp *resp)
{
	const char *path = pod_spec_path(k);
	struct podres_ctx x = {k, name, resp, 0};
	json_t *spec;
	char base[128];

	if (path == NULL || (spec = as_jget(obj, path)) == NULL ||
	    !json_is_object(spec))
		return true;
	containers(&x, spec, path, "containers");
	containers(&x, spec, path, "initContainers");
	snprintf(base, sizeof(base), "%s.resources", path);
	requirements(&x, json_object_get(spec, "resources"), base);
	return x.n == 0;
}
