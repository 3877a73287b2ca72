/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/inuse.c - the kueue.x-k8s.io/resource-in-use finalizer of
 * ClusterQueues and ResourceFlavors, as Kueue's ClusterQueue and
 * ResourceFlavor controllers keep it: added while the object lives,
 * removed once it is being deleted and nothing uses it. Pure; contracts
 * in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

bool rec_cq_uses_flavor(const json_t *cq, const char *flavor)
{
	const json_t *groups =
	    json_object_get(json_object_get(cq, "spec"), "resourceGroups");
	const json_t *g, *f;
	size_t i, k;

	json_array_foreach(groups, i, g)
	{
		json_array_foreach(json_object_get(g, "flavors"), k, f)
		{
			const char *n =
			    json_string_value(json_object_get(f, "name"));

			if (n != NULL && strcmp(n, flavor) == 0)
				return true;
		}
	}
	return false;
}

int rec_in_use_finalizer_patch(
    const json_t *obj, bool in_use, json_t **patch, cu_error *err)
{
	const json_t *md = json_object_get(obj, "metadata");
	const json_t *fins = json_object_get(md, "finalizers");
	const char *rv =
	    json_string_value(json_object_get(md, "resourceVersion"));
	bool deleting = json_object_get(md, "deletionTimestamp") != NULL &&
			!json_is_null(json_object_get(md, "deletionTimestamp"));
	bool has = false;
	json_t *keep, *f;
	size_t i;

	*patch = NULL;
	json_array_foreach(fins, i, f)
	{
		const char *s = json_string_value(f);

		if (s != NULL && strcmp(s, REC_FINALIZER_RESOURCE_IN_USE) == 0)
			has = true;
	}
	if (rv == NULL || (deleting ? !has || in_use : has))
		return CU_OK;
	keep = json_array();
	if (keep == NULL)
		return rec__nomem(err, "finalizers");
	json_array_foreach(fins, i, f)
	{
		const char *s = json_string_value(f);

		if (s != NULL && strcmp(s, REC_FINALIZER_RESOURCE_IN_USE) == 0)
			continue;
		if (json_array_append(keep, f) != 0) {
			json_decref(keep);
			return rec__nomem(err, "finalizers");
		}
	}
	if (!deleting && json_array_append_new(keep,
			     json_string(REC_FINALIZER_RESOURCE_IN_USE)) != 0) {
		json_decref(keep);
		return rec__nomem(err, "finalizers");
	}
	*patch = json_pack("{s:{s:o, s:s}}", "metadata", "finalizers", keep,
	    "resourceVersion", rv);
	return *patch == NULL ? rec__nomem(err, "finalizers") : CU_OK;
}
