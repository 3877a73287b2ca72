/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_spark.c - the SparkApplication shape of the framework
 * descriptors (docs/frameworks.md section 2): sparkoperator.k8s.io/v1beta2
 * SparkApplication read as JSON. Two pod sets, `driver` (one pod) and
 * `executor` (spec.executor.instances, default 0), each a pod template
 * built from its role's fields the way spark-operator builds the pods:
 * one container spark-kubernetes-<role> requesting coreRequest (else
 * cores) cpu and the Java-sized memory, limited by coreLimit,
 * memoryLimit and the gpu, with the role's init containers, sidecars,
 * priority class, affinity, tolerations and node selector
 * (spec.nodeSelector instead when set); labels and annotations are the
 * role template's metadata, the role's own and spark-app-selector /
 * spark-role. Start writes the admission into the role's fields (labels,
 * annotations, tolerations, the node selector where it is read from, the
 * scheduling gates of the role's template); stop puts back those of the
 * Workload's pod set templates. Finished on applicationState.state
 * COMPLETED (success), FAILED or SUBMISSION_FAILED (message
 * errorMessage); active while RUNNING; pods ready while RUNNING with as
 * many executors RUNNING or COMPLETED as instances.
 * Contracts in reconcile/rec_int.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define DRIVER "driver"
#define EXECUTOR "executor"

static bool role_name(const char *name)
{
	return strcmp(name, DRIVER) == 0 || strcmp(name, EXECUTOR) == 0;
}

/* spec.<role> of doc [borrowed], or NULL. */
static json_t *role_of(const json_t *doc, const char *role)
{
	json_t *r = json_object_get(json_object_get(doc, "spec"), role);

	return json_is_object(r) ? r : NULL;
}

static size_t sp_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	(void)doc;
	return 2;
}

static json_t *sp_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	(void)fw;
	return role_name(name) ? json_object_get(role_of(doc, name), "template")
			       : NULL;
}

/* A Java memory size ("512m", "2g") as a Kubernetes quantity [owned], or
 * NULL when absent or too long. */
static json_t *java_quantity(const char *m)
{
	size_t n = m ? strlen(m) : 0;
	char unit = n ? (char)tolower((unsigned char)m[n - 1]) : 0;

	if (n == 0 || n > 60)
		return NULL;
	if (strchr("kmgt", unit) != NULL && unit != 0)
		return json_sprintf("%.*s%ci", (int)(n - 1), m,
		    (char)toupper((unsigned char)unit));
	return json_string(m);
}

/* dst gets every key of the object src [borrowed]; src may be absent. */
static int update(json_t *dst, const json_t *src)
{
	return json_is_object(src) ? json_object_update(dst, (json_t *)src) : 0;
}

/* o[key] = v [v stolen] unless v is NULL. */
static int put(json_t *o, const char *key, json_t *v)
{
	return v == NULL ? 0 : json_object_set_new(o, key, v);
}

/* copy of r[key] when present and not null [owned], else NULL. */
static json_t *copy_of(const json_t *r, const char *key)
{
	json_t *v = json_object_get(r, key);

	return v == NULL || json_is_null(v) ? NULL : json_deep_copy(v);
}

/* The container's resources from the role's sizes [owned]. */
static json_t *role_resources(const json_t *r)
{
	json_t *req = json_object(), *lim = json_object(), *res = json_object();
	json_t *cores = json_object_get(r, "cores");
	json_t *gpu = json_object_get(r, "gpu");
	int e = req == NULL || lim == NULL || res == NULL;

	if (!e && api_json_str(r, "coreRequest") != NULL)
		e |= put(req, "cpu", copy_of(r, "coreRequest"));
	else if (!e && json_is_integer(cores))
		e |= put(req, "cpu",
		    json_sprintf("%lld", (long long)json_integer_value(cores)));
	if (!e)
		e |= put(
		    req, "memory", java_quantity(api_json_str(r, "memory")));
	if (!e)
		e |= put(lim, "cpu", copy_of(r, "coreLimit"));
	if (!e)
		e |= put(lim, "memory",
		    java_quantity(api_json_str(r, "memoryLimit")));
	if (!e && api_json_str(gpu, "name") != NULL &&
	    json_integer_value(json_object_get(gpu, "quantity")) > 0)
		e |= put(lim, api_json_str(gpu, "name"),
		    json_sprintf(
			"%lld", (long long)json_integer_value(
				    json_object_get(gpu, "quantity"))));
	if (!e && json_object_size(req) > 0)
		e |= json_object_set(res, "requests", req);
	if (!e && json_object_size(lim) > 0)
		e |= json_object_set(res, "limits", lim);
	json_decref(req);
	json_decref(lim);
	if (e) {
		json_decref(res);
		return NULL;
	}
	return res;
}

/* The labels of role's pods: its template's, its own, and the app's
 * selector and role [owned]. */
static json_t *role_labels(const json_t *doc, const json_t *r, const char *role)
{
	json_t *l =
	    copy_of(json_object_get(json_object_get(r, "template"), "metadata"),
		"labels");
	const char *name =
	    api_json_str(json_object_get(doc, "metadata"), "name");

	if (!json_is_object(l)) {
		json_decref(l);
		l = json_object();
	}
	if (l == NULL || update(l, json_object_get(r, "labels")) ||
	    json_object_set_new(
		l, "spark-app-selector", json_string(name ? name : "")) ||
	    json_object_set_new(l, "spark-role", json_string(role))) {
		json_decref(l);
		return NULL;
	}
	return l;
}

/* The node selector role's pods get: spec.nodeSelector when set, else
 * the role's; the object holding it is *where [borrowed]. */
static json_t *node_selector(const json_t *doc, json_t *r, json_t **where)
{
	json_t *spec = json_object_get(doc, "spec");

	*where = json_object_get(spec, "nodeSelector") != NULL ? spec : r;
	return json_object_get(*where, "nodeSelector");
}

/* The pod template of `role` built from doc [owned], or NULL (no
 * memory). */
static json_t *role_template(const json_t *doc, const char *role)
{
	json_t *r = role_of(doc, role), *where, *sel;
	json_t *t = json_object(), *md = json_object(), *spec = json_object();
	json_t *c = json_object(), *cs = json_array(), *ann;
	json_t *l = role_labels(doc, r, role);
	char cname[48];
	const char *img = api_json_str(r, "image");
	int e = t == NULL || md == NULL || spec == NULL || c == NULL ||
		cs == NULL || l == NULL;

	if (img == NULL)
		img = api_json_str(json_object_get(doc, "spec"), "image");
	snprintf(cname, sizeof(cname), "spark-kubernetes-%s", role);
	ann =
	    copy_of(json_object_get(json_object_get(r, "template"), "metadata"),
		"annotations");
	if (!e && !json_is_object(ann)) {
		json_decref(ann);
		ann = json_object();
	}
	e |= ann == NULL || update(ann, json_object_get(r, "annotations"));
	e |= put(md, "labels", json_incref(l));
	if (!e && json_object_size(ann) > 0)
		e |= json_object_set(md, "annotations", ann);
	e |= put(c, "name", json_string(cname));
	e |= put(c, "image", img ? json_string(img) : NULL);
	e |= put(c, "resources", role_resources(r));
	e |= json_array_append(cs, c);
	if (!e && json_is_array(json_object_get(r, "sidecars")))
		e |= json_array_extend(cs, json_object_get(r, "sidecars"));
	e |= put(spec, "containers", json_incref(cs));
	e |= put(spec, "initContainers", copy_of(r, "initContainers"));
	e |= put(spec, "priorityClassName", copy_of(r, "priorityClassName"));
	e |= put(spec, "affinity", copy_of(r, "affinity"));
	e |= put(spec, "tolerations", copy_of(r, "tolerations"));
	sel = r != NULL ? node_selector(doc, r, &where) : NULL;
	e |= put(spec, "nodeSelector", sel ? json_deep_copy(sel) : NULL);
	e |= put(spec, "schedulingGates",
	    copy_of(json_object_get(json_object_get(r, "template"), "spec"),
		"schedulingGates"));
	e |= put(t, "metadata", json_incref(md));
	e |= put(t, "spec", json_incref(spec));
	json_decref(md);
	json_decref(spec);
	json_decref(c);
	json_decref(cs);
	json_decref(l);
	json_decref(ann);
	if (e) {
		json_decref(t);
		return NULL;
	}
	return t;
}

static int sp_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	static const char *const roles[] = {DRIVER, EXECUTOR};
	json_t *inst = json_object_get(role_of(doc, EXECUTOR), "instances");
	json_int_t n = json_is_integer(inst) ? json_integer_value(inst) : 0;
	size_t i;
	int rc = CU_OK;

	(void)fw;
	memset(out, 0, sizeof(*out));
	if (n < 0 || n > INT32_MAX)
		return cu_error_set(err, CU_EINVAL,
		    "spec.executor.instances: Invalid value: %lld",
		    (long long)n);
	out->items = cu_calloc(2, sizeof(*out->items));
	if (out->items == NULL)
		return rec__nomem(err, "podsets");
	for (i = 0; i < 2 && rc == CU_OK; i++) {
		json_t *t = role_template(doc, roles[i]);
		char path[32];

		snprintf(path, sizeof(path), "spec.%s", roles[i]);
		out->n = i + 1;
		rc = t == NULL ? rec__nomem(err, "spark pod template")
			       : api_podset_from_template(t, roles[i],
				     i == 0 ? 1 : (int32_t)n, path,
				     &out->items[i], err);
		json_decref(t);
	}
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}

/* dst[key] (an object) gets every key of src [borrowed]. */
static int merge_map(json_t *dst, const char *key, const json_t *src)
{
	json_t *m;

	if (json_object_size(src) == 0)
		return 0;
	m = api_json_obj_child(dst, key);
	return m == NULL || update(m, src);
}

/* dst[key] (an array) gets each element of src [borrowed] it lacks. */
static int append_new(json_t *dst, const char *key, const json_t *src)
{
	json_t *a = json_object_get(dst, key), *v, *w;
	size_t i, j;
	int e = 0;

	if (json_array_size(src) == 0)
		return 0;
	if (!json_is_array(a)) {
		a = json_array();
		if (a == NULL || json_object_set_new(dst, key, a) != 0)
			return -1;
	}
	json_array_foreach(src, i, v)
	{
		bool seen = false;

		json_array_foreach(a, j, w) seen |= json_equal(v, w);
		if (!seen)
			e |= json_array_append(a, v);
	}
	return e;
}

/* The role's template spec [borrowed], created when absent (Kueue starts
 * from an empty template with the role's container). */
static json_t *template_spec(json_t *r, const char *role)
{
	json_t *t = json_object_get(r, "template"), *spec;
	char cname[48];

	if (!json_is_object(t)) {
		snprintf(cname, sizeof(cname), "spark-kubernetes-%s", role);
		t = json_pack(
		    "{s:{s:[{s:s}]}}", "spec", "containers", "name", cname);
		if (t == NULL || json_object_set_new(r, "template", t) != 0)
			return NULL;
	}
	spec = api_json_obj_child(t, "spec");
	return spec;
}

static int sp_set_info(const struct rec_fw *fw, json_t *doc, const char *name,
    const json_t *tpl, cu_error *err)
{
	json_t *r, *where, *md = json_object_get(tpl, "metadata");
	json_t *spec = json_object_get(tpl, "spec"), *ts;
	int e;

	(void)fw;
	if (!role_name(name))
		return cu_error_set(err, CU_EINVAL,
		    "invalid podset infos: the SparkApplication has no pod set "
		    "%s",
		    name);
	r = api_json_obj_child(api_json_obj_child(doc, "spec"), name);
	if (r == NULL)
		return rec__nomem(err, "spark role");
	(void)node_selector(doc, r, &where);
	e = merge_map(r, "labels", json_object_get(md, "labels"));
	e |= merge_map(r, "annotations", json_object_get(md, "annotations"));
	e |= merge_map(
	    where, "nodeSelector", json_object_get(spec, "nodeSelector"));
	e |= append_new(r, "tolerations", json_object_get(spec, "tolerations"));
	if (json_array_size(json_object_get(spec, "schedulingGates")) > 0) {
		ts = template_spec(r, name);
		e |=
		    ts == NULL || append_new(ts, "schedulingGates",
				      json_object_get(spec, "schedulingGates"));
	}
	return e ? rec__nomem(err, "spark pod set info") : CU_OK;
}

/* parent[key] = copy of want, or removed when want is empty. */
static int restore_key(json_t *parent, const char *key, const json_t *want)
{
	if (want == NULL || json_is_null(want) ||
	    ((json_is_object(want) || json_is_array(want)) &&
		(json_is_object(want) ? json_object_size(want)
				      : json_array_size(want)) == 0)) {
		if (json_object_get(parent, key) != NULL)
			return json_object_del(parent, key);
		return 0;
	}
	if (json_equal(json_object_get(parent, key), (json_t *)want))
		return 0;
	return json_object_set_new(parent, key, json_deep_copy(want));
}

static int sp_restore_info(const struct rec_fw *fw, json_t *doc,
    const char *name, const json_t *saved, cu_error *err)
{
	json_t *r = role_of(doc, name), *where, *ts;
	const json_t *md = json_object_get(saved, "metadata");
	const json_t *spec = json_object_get(saved, "spec");
	int e;

	(void)fw;
	if (r == NULL || !role_name(name))
		return CU_OK;
	(void)node_selector(doc, r, &where);
	e = restore_key(r, "labels", json_object_get(md, "labels"));
	e |= restore_key(r, "annotations", json_object_get(md, "annotations"));
	e |= restore_key(
	    where, "nodeSelector", json_object_get(spec, "nodeSelector"));
	e |=
	    restore_key(r, "tolerations", json_object_get(spec, "tolerations"));
	ts = json_object_get(json_object_get(r, "template"), "spec");
	if (json_is_object(ts))
		e |= restore_key(ts, "schedulingGates",
		    json_object_get(spec, "schedulingGates"));
	return e ? rec__nomem(err, "spark restore") : CU_OK;
}

static const char *app_state(const json_t *doc, const char *key)
{
	return api_json_str(
	    json_object_get(json_object_get(doc, "status"), "applicationState"),
	    key);
}

static bool state_is(const json_t *doc, const char *want)
{
	const char *s = app_state(doc, "state");

	return s != NULL && strcmp(s, want) == 0;
}

static bool sp_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	const char *m = app_state(doc, "errorMessage");
	bool ok = state_is(doc, "COMPLETED");

	(void)fw;
	if (!ok && !state_is(doc, "FAILED") &&
	    !state_is(doc, "SUBMISSION_FAILED"))
		return false;
	if (success != NULL)
		*success = ok;
	if (message != NULL)
		*message = m ? m : "";
	return true;
}

static bool sp_active(const struct rec_fw *fw, const json_t *doc)
{
	(void)fw;
	return state_is(doc, "RUNNING");
}

static bool sp_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	json_t *inst = json_object_get(role_of(doc, EXECUTOR), "instances");
	json_t *es = json_object_get(
		   json_object_get(doc, "status"), "executorState"),
	       *v;
	json_int_t want = json_is_integer(inst) ? json_integer_value(inst) : 0;
	json_int_t ready = 0;
	const char *k;

	(void)fw;
	if (!state_is(doc, "RUNNING"))
		return false;
	json_object_foreach(es, k, v)
	{
		const char *s = json_string_value(v);

		if (s != NULL &&
		    (strcmp(s, "RUNNING") == 0 || strcmp(s, "COMPLETED") == 0))
			ready++;
	}
	return ready >= want;
}

const struct rec_fw_ops rec__fw_spark_ops = {
    sp_n_podsets,
    sp_template,
    NULL,
    sp_podsets,
    sp_finished,
    sp_active,
    sp_pods_ready,
    sp_set_info,
    NULL,
    sp_restore_info,
};
