/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_trainjob.c - the TrainJob shape of the framework
 * descriptors (docs/frameworks.md section 2): trainer.kubeflow.org/
 * v1alpha1 TrainJob read as JSON, queued through the JobSet Kubeflow
 * Trainer renders for it. The pod sets are those of that JobSet, rendered
 * here from the runtime spec.runtimeRef names (a ClusterTrainingRuntime,
 * the default kind, or a TrainingRuntime of the TrainJob's namespace,
 * found through rec_fw_set_lookup): its spec.template.spec's replicated
 * jobs, the trainer step's (labelled trainer.kubeflow.org/
 * trainjob-ancestor-step: trainer, or named "node") parallelism and
 * completions set to spec.trainer.numNodes (else the runtime's
 * spec.mlPolicy.numNodes) and its first container's resources to
 * spec.trainer.resourcesPerNode. Start writes each pod set's admission
 * into the runtime patch managed by kueue.x-k8s.io/manager
 * (spec.runtimePatches[], replicated job name -> template.spec.template
 * metadata labels and annotations, spec nodeSelector, tolerations and
 * schedulingGates), which the trainer applies when it renders the JobSet;
 * stop clears that patch's replicated jobs. Finished on the Complete /
 * Failed conditions; active while some status.jobsStatus[] counts active
 * pods; pods ready when ready + succeeded there cover every replica.
 * Contracts in reconcile/rec_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define TRAINER_GROUP "trainer.kubeflow.org"
#define KUEUE_MANAGER "kueue.x-k8s.io/manager"
#define STEP_LABEL "trainer.kubeflow.org/trainjob-ancestor-step"

static rec_fw_lookup_fn lookup_fn;
static void *lookup_payload;

void rec_fw_set_lookup(rec_fw_lookup_fn fn, void *payload)
{
	lookup_fn = fn;
	lookup_payload = payload;
}

/* Does doc's spec.runtimeRef name a ClusterTrainingRuntime (the default
 * kind)? */
static bool cluster_ref(const json_t *ref)
{
	const char *kind = api_json_str(ref, "kind");

	return kind == NULL || strcmp(kind, "ClusterTrainingRuntime") == 0;
}

bool rec_trainjob_uses_runtime(
    const json_t *doc, bool cluster, const char *ns, const char *name)
{
	const json_t *ref =
	    json_object_get(json_object_get(doc, "spec"), "runtimeRef");
	const char *want = api_json_str(ref, "name");
	const char *own =
	    api_json_str(json_object_get(doc, "metadata"), "namespace");

	if (want == NULL || name == NULL || strcmp(want, name) != 0 ||
	    cluster_ref(ref) != cluster)
		return false;
	return cluster || (ns != NULL && own != NULL && strcmp(ns, own) == 0);
}

/* The runtime doc's spec.runtimeRef names [borrowed], or NULL. */
static const json_t *runtime_of(const json_t *doc)
{
	const json_t *ref =
	    json_object_get(json_object_get(doc, "spec"), "runtimeRef");
	const char *name = api_json_str(ref, "name");
	bool cluster = cluster_ref(ref);

	if (lookup_fn == NULL || name == NULL)
		return NULL;
	return lookup_fn(TRAINER_GROUP,
	    cluster ? "clustertrainingruntimes" : "trainingruntimes",
	    cluster
		? NULL
		: api_json_str(json_object_get(doc, "metadata"), "namespace"),
	    name, lookup_payload);
}

static bool trainer_step(const json_t *rj)
{
	const char *step = api_json_str(
	    json_object_get(
		json_object_get(json_object_get(rj, "template"), "metadata"),
		"labels"),
	    STEP_LABEL);
	const char *name = api_json_str(rj, "name");

	return (step != NULL && strcmp(step, "trainer") == 0) ||
	       (name != NULL && strcmp(name, "node") == 0);
}

/* The JobSet the trainer renders for doc [owned], or NULL when its
 * runtime is not known (yet) or out of memory. */
static json_t *rendered(const json_t *doc)
{
	const json_t *rt = runtime_of(doc);
	const json_t *tr =
	    json_object_get(json_object_get(doc, "spec"), "trainer");
	json_t *spec, *rjs, *rj, *js, *nodes = json_object_get(tr, "numNodes");
	size_t i;

	if (rt == NULL)
		return NULL;
	if (!json_is_integer(nodes))
		nodes = json_object_get(
		    json_object_get(json_object_get(rt, "spec"), "mlPolicy"),
		    "numNodes");
	spec = json_deep_copy(json_object_get(
	    json_object_get(json_object_get(rt, "spec"), "template"), "spec"));
	if (!json_is_object(spec)) {
		json_decref(spec);
		spec = json_object();
	}
	rjs = json_object_get(spec, "replicatedJobs");
	json_array_foreach(rjs, i, rj)
	{
		json_t *jspec =
		    json_object_get(json_object_get(rj, "template"), "spec");
		json_t *c0 = json_array_get(
		    json_object_get(
			json_object_get(
			    json_object_get(jspec, "template"), "spec"),
			"containers"),
		    0);

		if (!trainer_step(rj) || !json_is_object(jspec))
			continue;
		if (json_is_integer(nodes) && json_integer_value(nodes) > 0) {
			json_object_set(jspec, "parallelism", nodes);
			json_object_set(jspec, "completions", nodes);
		}
		if (json_is_object(c0) &&
		    json_is_object(json_object_get(tr, "resourcesPerNode")))
			json_object_set(c0, "resources",
			    json_object_get(tr, "resourcesPerNode"));
	}
	js = json_pack("{s:{s:O*,s:O*},s:o}", "metadata", "name",
	    json_object_get(json_object_get(doc, "metadata"), "name"),
	    "namespace",
	    json_object_get(json_object_get(doc, "metadata"), "namespace"),
	    "spec", spec);
	return js;
}

static json_t *replicated_jobs(const json_t *js)
{
	return json_object_get(json_object_get(js, "spec"), "replicatedJobs");
}

static size_t tj_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	json_t *js = rendered(doc);
	size_t n = json_array_size(replicated_jobs(js));

	(void)fw;
	json_decref(js);
	return n;
}

static json_t *tj_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	(void)fw;
	(void)doc;
	(void)name;
	return NULL; /* the templates live in the runtime, not the TrainJob */
}

static int tj_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	json_t *js = rendered(doc);
	struct api_jobset typed;
	int rc;

	(void)fw;
	memset(out, 0, sizeof(*out));
	if (js == NULL)
		return cu_error_set(err, CU_ENOTFOUND,
		    "spec.runtimeRef: the training runtime %s is not known",
		    api_json_str(json_object_get(json_object_get(doc, "spec"),
				     "runtimeRef"),
			"name")
			? api_json_str(
			      json_object_get(
				  json_object_get(doc, "spec"), "runtimeRef"),
			      "name")
			: "(none)");
	rc = api_jobset_decode(&typed, js, err);
	json_decref(js);
	if (rc != CU_OK)
		return rc;
	rc = api_jobset_podsets(&typed, out, err);
	api_jobset_dispose(&typed);
	return rc;
}

/* Kueue's runtime patch in doc [borrowed], created when `make`. */
static json_t *kueue_patch(json_t *doc, bool make)
{
	json_t *spec = make ? api_json_obj_child(doc, "spec")
			    : json_object_get(doc, "spec");
	json_t *ps = json_object_get(spec, "runtimePatches"), *p;
	size_t i;

	json_array_foreach(ps, i, p)
	{
		const char *m = api_json_str(p, "manager");

		if (m != NULL && strcmp(m, KUEUE_MANAGER) == 0)
			return p;
	}
	if (!make || spec == NULL)
		return NULL;
	if (!json_is_array(ps)) {
		ps = json_array();
		if (ps == NULL ||
		    json_object_set_new(spec, "runtimePatches", ps) != 0)
			return NULL;
	}
	p = json_pack("{s:s}", "manager", KUEUE_MANAGER);
	if (p == NULL || json_array_append_new(ps, p) != 0)
		return NULL;
	return p;
}

static int tj_set_info(const struct rec_fw *fw, json_t *doc, const char *name,
    const json_t *tpl, cu_error *err)
{
	json_t *p = kueue_patch(doc, true), *rjs, *entry, *t, *md, *spec;
	static const char *const md_keys[] = {"labels", "annotations", NULL};
	static const char *const spec_keys[] = {
	    "nodeSelector", "tolerations", "schedulingGates", NULL};
	size_t i;
	int e = 0;

	(void)fw;
	rjs = p ? api_json_obj_child(
		      api_json_obj_child(
			  api_json_obj_child(p, "trainingRuntimeSpec"),
			  "template"),
		      "spec")
		: NULL;
	if (rjs != NULL &&
	    !json_is_array(json_object_get(rjs, "replicatedJobs")))
		e |= json_object_set_new(rjs, "replicatedJobs", json_array());
	rjs = rjs ? json_object_get(rjs, "replicatedJobs") : NULL;
	md = json_object();
	spec = json_object();
	for (i = 0; md != NULL && md_keys[i] != NULL; i++) {
		json_t *v = json_object_get(
		    json_object_get(tpl, "metadata"), md_keys[i]);

		if (json_object_size(v) > 0)
			e |= json_object_set(md, md_keys[i], v);
	}
	for (i = 0; spec != NULL && spec_keys[i] != NULL; i++) {
		json_t *v =
		    json_object_get(json_object_get(tpl, "spec"), spec_keys[i]);

		if (v != NULL && !json_is_null(v))
			e |= json_object_set(spec, spec_keys[i], v);
	}
	t = json_pack("{s:o,s:o}", "metadata", md, "spec", spec);
	entry = json_pack("{s:s,s:{s:{s:o*}}}", "name", name, "template",
	    "spec", "template", t);
	if (rjs == NULL || entry == NULL || e != 0)
		goto nomem;
	/* one entry per replicated job: a readmission replaces it */
	for (i = 0; i < json_array_size(rjs); i++) {
		const char *n = api_json_str(json_array_get(rjs, i), "name");

		if (n != NULL && strcmp(n, name) == 0)
			return json_array_set_new(rjs, i, entry) == 0
				   ? CU_OK
				   : rec__nomem(err, "runtime patch");
	}
	if (json_array_append_new(rjs, entry) == 0)
		return CU_OK;
	entry = NULL;
nomem:
	json_decref(entry);
	return rec__nomem(err, "runtime patch");
}

static int tj_clear_info(const struct rec_fw *fw, json_t *doc, cu_error *err)
{
	json_t *p = kueue_patch(doc, false);
	json_t *spec = json_object_get(
	    json_object_get(
		json_object_get(p, "trainingRuntimeSpec"), "template"),
	    "spec");

	(void)fw;
	(void)err;
	if (json_is_object(spec))
		json_object_del(spec, "replicatedJobs");
	return CU_OK;
}

static bool tj_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	const json_t *ok = rec__doc_true_condition(doc, "Complete");
	const json_t *hit = ok ? ok : rec__doc_true_condition(doc, "Failed");
	const char *m = api_json_str(hit, "message");

	(void)fw;
	if (hit == NULL)
		return false;
	if (success != NULL)
		*success = ok != NULL;
	if (message != NULL)
		*message = m ? m : "";
	return true;
}

/* The sum of key over status.jobsStatus[]. */
static json_int_t jobs_status_sum(const json_t *doc, const char *key)
{
	json_t *st = json_object_get(
		   json_object_get(doc, "status"), "jobsStatus"),
	       *s;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(st, i, s)
	{
		n += json_integer_value(json_object_get(s, key));
	}
	return n;
}

static bool tj_active(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	return jobs_status_sum(doc, "active") > 0;
}

static bool tj_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	json_t *js = rendered(doc), *rj;
	json_int_t replicas = 0;
	size_t i;

	(void)fw;
	if (js == NULL)
		return false;
	json_array_foreach(replicated_jobs(js), i, rj)
	{
		json_t *r = json_object_get(rj, "replicas");

		replicas += json_is_integer(r) ? json_integer_value(r) : 1;
	}
	json_decref(js);
	return replicas == jobs_status_sum(doc, "ready") +
			       jobs_status_sum(doc, "succeeded");
}

const struct rec_fw_ops rec__fw_trainjob_ops = {
    tj_n_podsets,
    tj_template,
    NULL,
    tj_podsets,
    tj_finished,
    tj_active,
    tj_pods_ready,
    tj_set_info,
    tj_clear_info,
    NULL,
};
