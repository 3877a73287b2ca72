/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_appwrapper.c - the AppWrapper shape of the framework
 * descriptors (docs/frameworks.md section 2):
 * workload.codeflare.dev/v1beta2 AppWrapper read as JSON. Pod sets: one
 * per spec.components[i].podSets[j] in order, named <appwrapper>-<k>
 * (k counting across components), count `replicas` (default 1), the pod
 * template at its `path` ("template.spec.template") inside the
 * component; a component without podSets gets the ones its kind implies
 * (what AppWrapper's own webhook infers: Job, Deployment, StatefulSet,
 * ReplicaSet, Pod, JobSet, RayCluster, LeaderWorkerSet, the Kubeflow
 * jobs). Start never edits the wrapped templates: the admission of pod
 * set k goes to the component's podSetInfos[j] (labels, annotations,
 * nodeSelector, tolerations, schedulingGates), which the AppWrapper
 * controller applies when it creates the component; stop clears them.
 * Finished when status.phase is Succeeded, or Failed with
 * ResourcesDeployed no longer True; active while the QuotaReserved
 * condition is True; pods ready with PodsReady True.
 * Contracts in reconcile/rec_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define AW_MAX_PODSETS 64

/* AppWrapper's per-pod-set annotations naming the labels its pods are
 * indexed by, for the topology request (as Kueue reads them). */
#define AW_TAS_POD_INDEX "workload.codeflare.dev.appwrapper/tas-pod-index-label"
#define AW_TAS_SUB_INDEX                                                       \
	"workload.codeflare.dev.appwrapper/tas-sub-group-index-label"
#define AW_TAS_SUB_COUNT "workload.codeflare.dev.appwrapper/tas-sub-group-count"

/* One pod set of a component: where its template is, how many pods,
 * the index labels of its topology request (AppWrapper's annotations,
 * or what its webhook infers for the kind). */
struct aw_ps {
	char path[160]; /* relative to {"template": <component template>} */
	int64_t count;
	const char *pod_label; /* [borrowed: doc or static] NULL: none */
	const char *sub_label; /* [borrowed: doc or static] NULL: none */
	int64_t sub_count;
};

static json_t *components(const json_t *doc)
{
	json_t *c = json_object_get(json_object_get(doc, "spec"), "components");

	return json_is_array(c) ? c : NULL;
}

static int64_t int_or(const json_t *o, const char *key, int64_t def)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

/* The pods AppWrapper infers for a Job's spec s: its parallelism (1 when
 * unset), no more than its completions when set. */
static int64_t job_pods(const json_t *s)
{
	int64_t p = int_or(s, "parallelism", 1),
		c = int_or(s, "completions", p);

	return c < p ? c : p;
}

static size_t add(struct aw_ps *out, size_t n, int64_t count, const char *path)
{
	if (n >= AW_MAX_PODSETS)
		return n;
	snprintf(out[n].path, sizeof(out[n].path), "%s", path);
	out[n].count = count;
	out[n].pod_label = out[n].sub_label = NULL;
	out[n].sub_count = 0;
	return n + 1;
}

/* The last pod set added (n > 0) gets the index labels AppWrapper's
 * webhook infers for its kind. */
static size_t indexed(struct aw_ps *out, size_t n, const char *pod_label,
    const char *sub_label, int64_t sub_count)
{
	if (n > 0) {
		out[n - 1].pod_label = pod_label;
		out[n - 1].sub_label = sub_label;
		out[n - 1].sub_count = sub_count;
	}
	return n;
}

/* The Kubeflow replica maps and the order their types are listed in. */
static const char *const kf_maps[] = {"pytorchReplicaSpecs", "tfReplicaSpecs",
    "xgbReplicaSpecs", "paddleReplicaSpecs", "jaxReplicaSpecs",
    "mpiReplicaSpecs", NULL};
static const char *const kf_order[] = {
    "Launcher", "Chief", "Master", "PS", "Worker", "Evaluator", NULL};

static size_t implied_kubeflow(const json_t *spec, struct aw_ps *out)
{
	size_t n = 0, i, j;

	for (i = 0; kf_maps[i] != NULL; i++) {
		json_t *m = json_object_get(spec, kf_maps[i]);
		char key[128];

		for (j = 0; json_is_object(m) && kf_order[j] != NULL; j++) {
			json_t *r = json_object_get(m, kf_order[j]);

			if (!json_is_object(r))
				continue;
			snprintf(key, sizeof(key),
			    "template.spec.%s.%s.template", kf_maps[i],
			    kf_order[j]);
			n = add(out, n, int_or(r, "replicas", 1), key);
			/* AppWrapper infers the index for PyTorchJob */
			if (i == 0)
				n = indexed(out, n,
				    API_LABEL_KUBEFLOW_REPLICA_INDEX, NULL, 0);
		}
	}
	return n;
}

/* The pod sets the kind of component template t implies. */
static size_t implied(const json_t *t, struct aw_ps *out)
{
	const char *kind = api_json_str(t, "kind");
	json_t *spec = json_object_get(t, "spec"), *v;
	size_t n = 0, i;
	char path[160];

	if (kind == NULL)
		return 0;
	if (strcmp(kind, "Job") == 0)
		return indexed(out,
		    add(out, 0, job_pods(spec), "template.spec.template"),
		    API_LABEL_JOB_COMPLETION_INDEX, NULL, 0);
	if (strcmp(kind, "Deployment") == 0 ||
	    strcmp(kind, "StatefulSet") == 0 || strcmp(kind, "ReplicaSet") == 0)
		return add(out, 0, int_or(spec, "replicas", 1),
		    "template.spec.template");
	if (strcmp(kind, "Pod") == 0)
		return add(out, 0, 1, "template");
	if (strcmp(kind, "JobSet") == 0) {
		json_array_foreach(
		    json_object_get(spec, "replicatedJobs"), i, v)
		{
			json_t *js = json_object_get(
			    json_object_get(v, "template"), "spec");

			snprintf(path, sizeof(path),
			    "template.spec.replicatedJobs[%zu].template.spec."
			    "template",
			    i);
			n = indexed(out,
			    add(out, n, int_or(v, "replicas", 1) * job_pods(js),
				path),
			    API_LABEL_JOB_COMPLETION_INDEX,
			    API_LABEL_JOBSET_JOB_INDEX,
			    int_or(v, "replicas", 1));
		}
		return n;
	}
	if (strcmp(kind, "RayCluster") == 0) {
		n = add(out, 0, 1, "template.spec.headGroupSpec.template");
		json_array_foreach(
		    json_object_get(spec, "workerGroupSpecs"), i, v)
		{
			int64_t h = int_or(v, "numOfHosts", 1);

			snprintf(path, sizeof(path),
			    "template.spec.workerGroupSpecs[%zu].template", i);
			n = add(out, n,
			    int_or(v, "replicas", 1) * (h > 1 ? h : 1), path);
		}
		return n;
	}
	if (strcmp(kind, "LeaderWorkerSet") == 0) {
		json_t *lwt = json_object_get(spec, "leaderWorkerTemplate");
		int64_t groups = int_or(spec, "replicas", 1);
		int64_t size = int_or(lwt, "size", 1);
		bool leader =
		    json_is_object(json_object_get(lwt, "leaderTemplate"));

		if (leader)
			n = add(out, n, groups,
			    "template.spec.leaderWorkerTemplate."
			    "leaderTemplate");
		return add(out, n, groups * (leader ? size - 1 : size),
		    "template.spec.leaderWorkerTemplate.workerTemplate");
	}
	return implied_kubeflow(spec, out);
}

/* The pod sets of component c, explicit or implied. */
static size_t comp_podsets(const json_t *c, struct aw_ps *out)
{
	json_t *ps = json_object_get(c, "podSets"), *p;
	size_t n = 0, i;

	if (json_array_size(ps) == 0)
		return implied(json_object_get(c, "template"), out);
	json_array_foreach(ps, i, p)
	{
		const char *path = api_json_str(p, "path");
		json_t *ann = json_object_get(p, "annotations");
		const char *cnt = api_json_str(ann, AW_TAS_SUB_COUNT);
		char *end = NULL;
		long long sc = cnt != NULL ? strtoll(cnt, &end, 10) : 0;

		n = add(out, n, int_or(p, "replicas", 1), path ? path : "");
		/* a malformed count is ignored, as Kueue does (and the
		 * sub group with it: the request has no count alone) */
		if (cnt == NULL || end == cnt || *end != '\0' || sc < 0 ||
		    sc > INT32_MAX)
			n = indexed(out, n, api_json_str(ann, AW_TAS_POD_INDEX),
			    NULL, 0);
		else
			n = indexed(out, n, api_json_str(ann, AW_TAS_POD_INDEX),
			    api_json_str(ann, AW_TAS_SUB_INDEX), sc);
	}
	return n;
}

/* The object at path (a.b[2].c) below root [borrowed], or NULL. */
static json_t *at_path(json_t *root, const char *path)
{
	const char *p = path;
	char key[96];

	while (root != NULL && *p != '\0') {
		size_t n = strcspn(p, ".[");

		if (n > 0) {
			if (n >= sizeof(key))
				return NULL;
			memcpy(key, p, n);
			key[n] = '\0';
			root = json_object_get(root, key);
			p += n;
		}
		if (*p == '[') {
			char *end;
			long i = strtol(p + 1, &end, 10);

			if (*end != ']' || i < 0)
				return NULL;
			root = json_array_get(root, (size_t)i);
			p = end + 1;
		}
		if (*p == '.')
			p++;
	}
	return root;
}

/* Pod set k of doc: its component index *ci, index within it *pj, and
 * the component's pod sets in ps (*nps). False past the end. */
static bool locate(const json_t *doc, size_t k, size_t *ci, size_t *pj,
    struct aw_ps *ps, size_t *nps)
{
	json_t *c;
	size_t i, seen = 0;

	json_array_foreach(components(doc), i, c)
	{
		size_t n = comp_podsets(c, ps);

		if (k < seen + n) {
			*ci = i;
			*pj = k - seen;
			*nps = n;
			return true;
		}
		seen += n;
	}
	return false;
}

static size_t aw_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	struct aw_ps ps[AW_MAX_PODSETS];
	json_t *c;
	size_t i, n = 0;

	(void)fw;
	json_array_foreach(components(doc), i, c)
	{
		n += comp_podsets(c, ps);
	}
	return n;
}

/* k of pod set name "<appwrapper>-<k>" of doc; false when not one. */
static bool index_of(const json_t *doc, const char *name, size_t *k)
{
	const char *own =
	    api_json_str(json_object_get(doc, "metadata"), "name");
	size_t n = own ? strlen(own) : 0;
	char *end;
	unsigned long v;

	if (own == NULL || strncmp(name, own, n) != 0 || name[n] != '-' ||
	    name[n + 1] < '0' || name[n + 1] > '9')
		return false;
	v = strtoul(name + n + 1, &end, 10);
	if (*end != '\0')
		return false;
	*k = (size_t)v;
	return true;
}

static json_t *aw_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	struct aw_ps ps[AW_MAX_PODSETS];
	size_t k, ci, pj, n;
	json_t *wrap, *t;

	(void)fw;
	if (!index_of(doc, name, &k) || !locate(doc, k, &ci, &pj, ps, &n))
		return NULL;
	/* the paths start at "template": look below the component */
	wrap = json_array_get(components(doc), ci);
	t = at_path(wrap, ps[pj].path);
	return json_is_object(t) ? t : NULL;
}

static int aw_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	size_t n = aw_n_podsets(fw, doc), k;
	int rc = CU_OK;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return CU_OK;
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL)
		return rec__nomem(err, "podsets");
	for (k = 0; k < n && rc == CU_OK; k++) {
		struct aw_ps ps[AW_MAX_PODSETS];
		size_t ci = 0, pj = 0, np = 0;
		char name[300], path[256];
		json_t *t;

		(void)locate(doc, k, &ci, &pj, ps, &np);
		snprintf(name, sizeof(name), "%s-%zu",
		    api_json_str(json_object_get(doc, "metadata"), "name"), k);
		snprintf(path, sizeof(path), "spec.components[%zu].%s", ci,
		    ps[pj].path);
		t = at_path(json_array_get(components(doc), ci), ps[pj].path);
		out->n = k + 1;
		if (ps[pj].count < 0 || ps[pj].count > INT32_MAX)
			rc = cu_error_set(err, CU_EINVAL,
			    "spec.components[%zu].podSets[%zu].replicas: "
			    "Invalid value: %lld",
			    ci, pj, (long long)ps[pj].count);
		else
			rc = api_podset_from_template(t, name,
			    (int32_t)ps[pj].count, path, &out->items[k], err);
		/* Kueue: the pod set's index labels in its topology request
		 * (AppWrapper's tas-* annotations) */
		if (rc == CU_OK && ps[pj].pod_label != NULL)
			rc = api_podset_index_labels(&out->items[k],
			    ps[pj].pod_label, ps[pj].sub_label,
			    (int32_t)ps[pj].sub_count, err);
	}
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}

/* podSetInfos[j] of the component of pod set `name` set from the
 * template-shaped admission info tpl [borrowed]: its labels and
 * annotations, node selector, tolerations and scheduling gates. */
static int aw_set_info(const struct rec_fw *fw, json_t *doc, const char *name,
    const json_t *tpl, cu_error *err)
{
	struct aw_ps ps[AW_MAX_PODSETS];
	static const char *const md_keys[] = {"labels", "annotations", NULL};
	static const char *const spec_keys[] = {
	    "nodeSelector", "tolerations", "schedulingGates", NULL};
	size_t k, ci, pj, n, i;
	json_t *comp, *infos, *info;
	int e = 0;

	(void)fw;
	if (!index_of(doc, name, &k) || !locate(doc, k, &ci, &pj, ps, &n))
		return cu_error_set(err, CU_EINVAL,
		    "invalid podset infos: the AppWrapper has no pod set %s",
		    name);
	comp = json_array_get(components(doc), ci);
	infos = json_object_get(comp, "podSetInfos");
	if (!json_is_array(infos)) {
		infos = json_array();
		e |= json_object_set_new(comp, "podSetInfos", infos);
	}
	while (e == 0 && json_array_size(infos) < n)
		e |= json_array_append_new(infos, json_object());
	info = json_object();
	for (i = 0; e == 0 && info != NULL && md_keys[i] != NULL; i++) {
		json_t *v = json_object_get(
		    json_object_get(tpl, "metadata"), md_keys[i]);

		if (v != NULL && json_object_size(v) > 0)
			e |= json_object_set(info, md_keys[i], v);
	}
	for (i = 0; e == 0 && info != NULL && spec_keys[i] != NULL; i++) {
		json_t *v =
		    json_object_get(json_object_get(tpl, "spec"), spec_keys[i]);

		if (v != NULL && !json_is_null(v))
			e |= json_object_set(info, spec_keys[i], v);
	}
	if (info == NULL || e != 0 || json_array_set_new(infos, pj, info) != 0)
		return rec__nomem(err, "podSetInfos");
	return CU_OK;
}

/* Every component's podSetInfos cleared (AppWrapper's restore). */
static int aw_clear_info(const struct rec_fw *fw, json_t *doc, cu_error *err)
{
	json_t *c;
	size_t i;

	(void)fw;
	(void)err;
	json_array_foreach(components(doc), i, c)
	{
		json_object_del(c, "podSetInfos");
	}
	return CU_OK;
}

static bool cond_true(const json_t *doc, const char *type)
{
	return rec__doc_true_condition(doc, type) != NULL;
}

static bool aw_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	const char *ph = api_json_str(json_object_get(doc, "status"), "phase");
	bool ok;

	(void)fw;
	if (ph == NULL)
		return false;
	if (strcmp(ph, "Succeeded") == 0)
		ok = true;
	else if (strcmp(ph, "Failed") == 0 &&
		 !cond_true(doc, "ResourcesDeployed"))
		ok = false;
	else
		return false;
	if (success != NULL)
		*success = ok;
	if (message != NULL)
		*message = ok ? "AppWrapper finished successfully"
			      : "AppWrapper failed";
	return true;
}

static bool aw_active(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	return cond_true(doc, "QuotaReserved");
}

static bool aw_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	return cond_true(doc, "PodsReady");
}

const struct rec_fw_ops rec__fw_appwrapper_ops = {
    aw_n_podsets,
    aw_template,
    NULL,
    aw_podsets,
    aw_finished,
    aw_active,
    aw_pods_ready,
    aw_set_info,
    aw_clear_info,
    NULL,
};
