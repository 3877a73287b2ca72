/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/podset.c - Kueue's validation of a Workload podSet's pod
 * template (pkg/webhooks/workload_webhook.go validatePodSet): with
 * WorkloadValidationForPodSetMetadata (on by default) the template's
 * labels and annotations must be valid Kubernetes labels and annotations;
 * every container's, init container's and the pod's own requests and
 * limits must not use the `pods` key (reserved for Kueue's own use) and,
 * with WorkloadValidateResourcesAreNonNegative (on by default), must not
 * be negative. The first failure is the denial, with its field path.
 */
#include <stdio.h>
#include <string.h>

#include "api/labelselector.h"
#include "api/quantity.h"
#include "webhook/webhook_int.h"

#define ANNOTATIONS_MAX                                                        \
	(256 * 1024) /* Kubernetes' TotalAnnotationSizeLimit                   \
		      */

static int resource_list(const json_t *list, const char *path, cu_error *err)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)list, name, v)
	{
		struct api_quantity q;
		char qs[API_QUANTITY_STR_MAX];
		cu_error e;

		if (strcmp(name, "pods") == 0)
			return cu_error_set(err, CU_EDENIED,
			    "%s[pods]: Invalid value: \"pods\": the key is "
			    "reserved for internal kueue use",
			    path);
		if (!json_is_string(v) ||
		    api_quantity_parse(&q, json_string_value(v), &e) != CU_OK)
			continue; /* the API server refuses what is no quantity
				   */
		if (q.milli < 0) {
			api_quantity_format(&q, qs, sizeof(qs));
			return cu_error_set(err, CU_EDENIED,
			    "%s[%s]: Invalid value: \"%s\": must be greater "
			    "than or equal to 0",
			    path, name, qs);
		}
	}
	return CU_OK;
}

static int resources(const json_t *res, const char *path, cu_error *err)
{
	char p[256];
	int rc;

	snprintf(p, sizeof(p), "%s.requests", path);
	rc = resource_list(json_object_get(res, "requests"), p, err);
	if (rc != CU_OK)
		return rc;
	snprintf(p, sizeof(p), "%s.limits", path);
	return resource_list(json_object_get(res, "limits"), p, err);
}

static int metadata(const json_t *md, const char *base, cu_error *err)
{
	const json_t *labels = json_object_get(md, "labels");
	const json_t *anns = json_object_get(md, "annotations");
	const char *k;
	json_t *v;
	size_t total = 0;
	char f[512];

	json_object_foreach((json_t *)labels, k, v)
	{
		snprintf(f, sizeof(f), "%s.labels", base);
		if (api_validate_label_key(k, f, err) != CU_OK)
			return CU_EDENIED;
		snprintf(f, sizeof(f), "%s.labels", base);
		if (json_is_string(v) &&
		    api_validate_label_value(json_string_value(v), f, err) !=
			CU_OK)
			return CU_EDENIED;
	}
	json_object_foreach((json_t *)anns, k, v)
	{
		char lower[512];
		size_t i;

		/* Kubernetes validates annotation keys lower-cased. */
		for (i = 0; k[i] != '\0' && i + 1 < sizeof(lower); i++)
			lower[i] = (char)((k[i] >= 'A' && k[i] <= 'Z')
					      ? k[i] - 'A' + 'a'
					      : k[i]);
		lower[i] = '\0';
		snprintf(f, sizeof(f), "%s.annotations", base);
		if (api_validate_label_key(lower, f, err) != CU_OK)
			return CU_EDENIED;
		total += strlen(k) +
			 (json_is_string(v) ? strlen(json_string_value(v)) : 0);
	}
	if (total > ANNOTATIONS_MAX)
		return cu_error_set(err, CU_EDENIED,
		    "%s.annotations: Too long: may not be more than %d bytes",
		    base, ANNOTATIONS_MAX);
	return CU_OK;
}

int wh__podset_template(
    const json_t *tpl, size_t i, bool check_metadata, cu_error *err)
{
	const json_t *spec = json_object_get(tpl, "spec");
	static const char *const lists[] = {"initContainers", "containers"};
	char path[256];
	size_t l, k;
	json_t *c;
	int rc;

	if (check_metadata) {
		snprintf(path, sizeof(path),
		    "spec.podSets[%zu].template.metadata", i);
		rc = metadata(json_object_get(tpl, "metadata"), path, err);
		if (rc != CU_OK)
			return rc;
	}
	for (l = 0; l < 2; l++)
		json_array_foreach(json_object_get(spec, lists[l]), k, c)
		{
			snprintf(path, sizeof(path),
			    "spec.podSets[%zu].template.spec.%s[%zu].resources",
			    i, lists[l], k);
			rc = resources(
			    json_object_get(c, "resources"), path, err);
			if (rc != CU_OK)
				return rc;
		}
	if (json_object_get(spec, "resources") != NULL) {
		snprintf(path, sizeof(path),
		    "spec.podSets[%zu].template.spec.resources", i);
		return resources(json_object_get(spec, "resources"), path, err);
	}
	return CU_OK;
}
