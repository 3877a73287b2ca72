/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_ray.c - the Ray shape of the framework descriptors
 * (docs/frameworks.md section 2): ray.io/v1 RayJob, RayCluster and
 * RayService read as JSON. Pod sets: `head` (one pod, the head group's
 * template), then one per worker group (its groupName lower-cased,
 * replicas (default 1) x numOfHosts when above 1), then for a RayJob in
 * K8sJobMode `submitter` (one pod: spec.submitterPodTemplate, else
 * KubeRay's default submitter container). A RayJob is finished when its
 * jobDeploymentStatus is Complete or Failed (success: jobStatus
 * SUCCEEDED), active unless its deployment is Suspended, and its pods
 * are ready when its cluster's state is ready; a RayCluster (and a
 * RayService) never finishes and is active and ready while its state is
 * ready. The cluster spec sits under spec.<fw->replicas_field> (RayJob
 * rayClusterSpec, RayService rayClusterConfig), or is spec itself.
 * Contracts in reconcile/rec_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define HEAD "head"
#define SUBMITTER "submitter"

static bool is_rayjob(const struct rec_fw *fw)
{
	return strcmp(fw->kind, "RayJob") == 0;
}

/* The cluster spec of doc [borrowed], or NULL. */
static json_t *cluster_spec(const struct rec_fw *fw, const json_t *doc)
{
	json_t *spec = json_object_get(doc, "spec");

	if (fw->replicas_field != NULL)
		spec = json_object_get(spec, fw->replicas_field);
	return json_is_object(spec) ? spec : NULL;
}

static json_t *worker_groups(const struct rec_fw *fw, const json_t *doc)
{
	json_t *w = json_object_get(cluster_spec(fw, doc), "workerGroupSpecs");

	return json_is_array(w) ? w : NULL;
}

/* A RayJob that runs KubeRay's submitter Job (K8sJobMode). */
static bool has_submitter(const struct rec_fw *fw, const json_t *doc)
{
	const char *m;

	if (!is_rayjob(fw))
		return false;
	m = api_json_str(json_object_get(doc, "spec"), "submissionMode");
	return m != NULL && strcmp(m, "K8sJobMode") == 0;
}

/* Does groupName `g` lower-cased equal `name`? */
static bool group_is(const char *g, const char *name)
{
	size_t i;

	if (g == NULL || strlen(g) != strlen(name))
		return false;
	for (i = 0; g[i] != '\0'; i++) {
		char c = g[i] >= 'A' && g[i] <= 'Z' ? (char)(g[i] - 'A' + 'a')
						    : g[i];

		if (c != name[i])
			return false;
	}
	return true;
}

static size_t ray_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	return 1 + json_array_size(worker_groups(fw, doc)) +
	       (has_submitter(fw, doc) ? 1 : 0);
}

static json_t *ray_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	json_t *cs = cluster_spec(fw, doc), *wg;
	size_t i;

	if (strcmp(name, HEAD) == 0)
		return json_object_get(
		    json_object_get(cs, "headGroupSpec"), "template");
	json_array_foreach(worker_groups(fw, doc), i, wg)
	{
		if (group_is(api_json_str(wg, "groupName"), name))
			return json_object_get(wg, "template");
	}
	if (strcmp(name, SUBMITTER) == 0 && has_submitter(fw, doc))
		return json_object_get(
		    json_object_get(doc, "spec"), "submitterPodTemplate");
	return NULL;
}

static bool ray_template_optional(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	return strcmp(name, SUBMITTER) == 0 && has_submitter(fw, doc);
}

/* KubeRay's default submitter pod template, with the head's first
 * container image [owned: json_decref]; NULL when out of memory. */
static json_t *default_submitter(const struct rec_fw *fw, const json_t *doc)
{
	json_t *cs = json_object_get(
		   json_object_get(cluster_spec(fw, doc), "headGroupSpec"),
		   "template"),
	       *c0 = json_array_get(
		   json_object_get(json_object_get(cs, "spec"), "containers"),
		   0);
	const char *image = api_json_str(c0, "image");

	return json_pack("{s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}],s:s}}",
	    "spec", "containers", "name", "ray-job-submitter", "image",
	    image ? image : "", "resources", "limits", "cpu", "1", "memory",
	    "1Gi", "requests", "cpu", "500m", "memory", "200Mi",
	    "restartPolicy", "Never");
}

/* The count of worker group wg: replicas (default 1) x numOfHosts. */
static int group_count(
    const json_t *wg, const char *path, int64_t *out, cu_error *err)
{
	json_t *r = json_object_get(wg, "replicas");
	json_t *h = json_object_get(wg, "numOfHosts");
	int64_t n = json_is_integer(r) ? json_integer_value(r) : 1;
	int64_t hosts = json_is_integer(h) ? json_integer_value(h) : 1;

	if (hosts > 1)
		n *= hosts;
	if (n < 0 || n > INT32_MAX || hosts > INT32_MAX)
		return cu_error_set(err, CU_EINVAL,
		    "%s.replicas: Invalid value: %lld", path, (long long)n);
	*out = n;
	return CU_OK;
}

static int ray_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	size_t n = ray_n_podsets(fw, doc), i, k = 0;
	json_t *wg, *sub = NULL;
	char base[64], path[128], name[256];
	int rc = CU_OK;

	memset(out, 0, sizeof(*out));
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL)
		return rec__nomem(err, "podsets");
	snprintf(base, sizeof(base), "spec%s%s", fw->replicas_field ? "." : "",
	    fw->replicas_field ? fw->replicas_field : "");
	snprintf(path, sizeof(path), "%s.headGroupSpec.template", base);
	out->n = 1;
	rc = api_podset_from_template(
	    ray_template(fw, doc, HEAD), HEAD, 1, path, &out->items[k++], err);
	json_array_foreach(worker_groups(fw, doc), i, wg)
	{
		const char *g = api_json_str(wg, "groupName");
		int64_t count = 0;
		size_t j;

		if (rc != CU_OK)
			break;
		snprintf(
		    path, sizeof(path), "%s.workerGroupSpecs[%zu]", base, i);
		snprintf(name, sizeof(name), "%s", g ? g : "");
		for (j = 0; name[j] != '\0'; j++)
			if (name[j] >= 'A' && name[j] <= 'Z')
				name[j] = (char)(name[j] - 'A' + 'a');
		rc = group_count(wg, path, &count, err);
		if (rc != CU_OK)
			break;
		snprintf(path, sizeof(path),
		    "%s.workerGroupSpecs[%zu].template", base, i);
		out->n = k + 1;
		rc = api_podset_from_template(json_object_get(wg, "template"),
		    name, (int32_t)count, path, &out->items[k++], err);
	}
	if (rc == CU_OK && has_submitter(fw, doc)) {
		json_t *t = ray_template(fw, doc, SUBMITTER);

		sub = t != NULL ? json_incref(t) : default_submitter(fw, doc);
		out->n = k + 1;
		rc = sub == NULL ? rec__nomem(err, "submitter template")
				 : api_podset_from_template(sub, SUBMITTER, 1,
				       "spec.submitterPodTemplate",
				       &out->items[k++], err);
		json_decref(sub);
	}
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}

static const char *status_str(const json_t *doc, const char *key)
{
	return api_json_str(json_object_get(doc, "status"), key);
}

static bool str_is(const char *s, const char *want)
{
	return s != NULL && strcmp(s, want) == 0;
}

/* The cluster's state: a RayJob's status.rayClusterStatus.state, a
 * RayService's active cluster's, a RayCluster's status.state. */
static const char *cluster_state(const struct rec_fw *fw, const json_t *doc)
{
	const json_t *st = json_object_get(doc, "status");

	if (is_rayjob(fw))
		st = json_object_get(st, "rayClusterStatus");
	else if (fw->replicas_field != NULL)
		return str_is(api_json_str(st, "serviceStatus"), "Running")
			   ? "ready"
			   : "";
	return api_json_str(st, "state");
}

static bool ray_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	const char *ds = status_str(doc, "jobDeploymentStatus");
	const char *m = status_str(doc, "message");

	if (!is_rayjob(fw) || !(str_is(ds, "Complete") || str_is(ds, "Failed")))
		return false;
	if (success != NULL)
		*success = str_is(status_str(doc, "jobStatus"), "SUCCEEDED");
	if (message != NULL)
		*message = m ? m : "";
	return true;
}

static bool ray_active(const struct rec_fw *fw, const json_t *doc)
{
	if (is_rayjob(fw)) {
		const char *ds = status_str(doc, "jobDeploymentStatus");

		/* Suspended, or New (""): no pods, as in Kueue. */
		return ds != NULL && ds[0] != '\0' && !str_is(ds, "Suspended");
	}
	return str_is(cluster_state(fw, doc), "ready");
}

static bool ray_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	return str_is(cluster_state(fw, doc), "ready");
}

const struct rec_fw_ops rec__fw_ray_ops = {
    ray_n_podsets,
    ray_template,
    ray_template_optional,
    ray_podsets,
    ray_finished,
    ray_active,
    ray_pods_ready,
    NULL,
    NULL,
    NULL,
};
