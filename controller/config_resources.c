/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_resources.c - the Configuration's `resources` section
 * (excludeResourcePrefixes, transformations, quotaCheckStrategy) loaded
 * and validated as Kueue does, printed back for --check-config, and handed
 * to the quota model (queues/resources.c), which applies it to every
 * Workload's requests. Also objectRetentionPolicies (durations after which
 * finished Workloads and the jobs of Workloads Kueue deactivated are
 * deleted, by controller/retention.c).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/quantity.h"
#include "controller/config_int.h"
#include "queues/queues.h"

static int load_transform(const struct ctl_config_dec *d, const json_t *tr,
    size_t i, struct ctl_config_transform *t)
{
	const json_t *tri = json_array_get(tr, i);
	const char *in = json_string_value(ctl_config_jget(tri, "input"));
	const char *st = json_string_value(ctl_config_jget(tri, "strategy"));
	const char *mb = json_string_value(ctl_config_jget(tri, "multiplyBy"));
	const json_t *outs = ctl_config_jget(tri, "outputs");
	struct ctl_config_path p, base = {0}, op;
	const char *name;
	json_t *v;
	size_t k;
	int rc = CU_OK;

	ctl_config_path_set(&base, "resources.transformations");
	ctl_config_path_index(&p, &base, i);
	if (in == NULL || in[0] == '\0')
		return ctl_config_fail(
		    d, CU_EINVAL, p.look, "%s.input: Required value", p.disp);
	for (k = 0; k < i; k++) {
		const char *prev = json_string_value(
		    ctl_config_jget(json_array_get(tr, k), "input"));

		if (prev != NULL && strcmp(prev, in) == 0)
			return ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s.input: Duplicate value: \"%s\"", p.disp, in);
	}
	/* Kueue defaults the strategy to Retain, then accepts only the
	 * two values. */
	if (st != NULL && st[0] != '\0' && strcmp(st, "Retain") != 0 &&
	    strcmp(st, "Replace") != 0)
		return ctl_config_fail(d, CU_EINVAL, p.look,
		    "%s.strategy: Unsupported value: \"%s\": supported "
		    "values: \"Retain\", \"Replace\"",
		    p.disp, st);
	t->replace = st != NULL && strcmp(st, "Replace") == 0;
	t->input = cu_strdup(in);
	if (t->input == NULL || (mb != NULL && mb[0] != '\0' &&
				    (t->multiply_by = cu_strdup(mb)) == NULL))
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	t->outputs = cu_calloc(json_object_size(outs) + 1, sizeof(char *));
	t->output_milli =
	    cu_calloc(json_object_size(outs) + 1, sizeof(int64_t));
	if (t->outputs == NULL || t->output_milli == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	ctl_config_path_child(&base, &p, "outputs", false);
	json_object_foreach((json_t *)outs, name, v)
	{
		char num[64];
		const char *s = num;
		cu_error e;

		ctl_config_path_child(&op, &base, name, true);
		if (json_is_string(v))
			s = json_string_value(v);
		else if (json_is_integer(v))
			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			    json_integer_value(v));
		else
			snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		if (api_quantity_parse_milli(
			s, &t->output_milli[t->noutputs], &e) != CU_OK) {
			rc = ctl_config_fail(d, CU_EINVAL, op.look,
			    "%s: Invalid value: \"%s\": %s", op.disp, s, e.msg);
			continue;
		}
		t->outputs[t->noutputs] = cu_strdup(name);
		if (t->outputs[t->noutputs] == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		t->noutputs++;
	}
	return rc;
}

int ctl_config_load_resources(
    const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *res = ctl_config_jget(root, "resources");
	const json_t *tr = ctl_config_jget(res, "transformations");
	const json_t *ex = ctl_config_jget(res, "excludeResourcePrefixes");
	const json_t *qc = ctl_config_jget(res, "quotaCheckStrategy");
	bool gate = ctl_config_get_bool(
	    ctl_config_jget(root, "featureGates"), "QuotaCheckStrategy", true);
	struct ctl_config_path p, base = {0};
	size_t i, n;
	json_t *v;
	int rc = CU_OK, rc2;

	n = json_array_size(ex);
	c->resources.exclude_prefixes = cu_calloc(n + 1, sizeof(char *));
	n = json_array_size(tr);
	c->resources.transforms =
	    cu_calloc(n + 1, sizeof(*c->resources.transforms));
	if (c->resources.exclude_prefixes == NULL ||
	    c->resources.transforms == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	ctl_config_path_set(&base, "resources.excludeResourcePrefixes");
	json_array_foreach((json_t *)ex, i, v)
	{
		ctl_config_path_index(&p, &base, i);
		if (json_string_value(v)[0] == '\0') {
			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: \"\": must not be empty",
			    p.disp);
			continue;
		}
		c->resources.exclude_prefixes[c->resources.nexclude] =
		    cu_strdup(json_string_value(v));
		if (c->resources.exclude_prefixes[c->resources.nexclude] ==
		    NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		c->resources.nexclude++;
	}
	for (i = 0; i < n; i++) {
		rc2 = load_transform(d, tr, i,
		    &c->resources.transforms[c->resources.ntransforms]);
		/* A half-loaded entry is kept for dispose to free. */
		c->resources.ntransforms++;
		if (rc2 == CU_ENOMEM)
			return rc2;
		if (rc2 != CU_OK && rc == CU_OK)
			rc = rc2;
	}
	/* quotaCheckStrategy: only with its gate on (Beta, default on);
	 * unset is BlockUndeclared. */
	if (gate && qc != NULL) {
		const char *s = json_string_value(qc);

		if (strcmp(s, "IgnoreUndeclared") == 0)
			c->resources.ignore_undeclared = true;
		else if (strcmp(s, "BlockUndeclared") != 0)
			return ctl_config_fail(d, CU_EINVAL,
			    "resources.quotaCheckStrategy",
			    "resources.quotaCheckStrategy: Unsupported value: "
			    "\"%s\": supported values: \"BlockUndeclared\", "
			    "\"IgnoreUndeclared\"",
			    s);
		if (c->resources.ignore_undeclared && json_array_size(ex) > 0)
			return ctl_config_fail(d, CU_EINVAL,
			    "resources.excludeResourcePrefixes",
			    "resources.excludeResourcePrefixes: Invalid value: "
			    "excludeResourcePrefixes is not allowed when "
			    "quotaCheckStrategy is IgnoreUndeclared");
	}
	return rc;
}

void ctl_config_dispose_resources(struct ctl_config *c)
{
	size_t i, k;

	for (i = 0; i < c->resources.nexclude; i++)
		cu_free(c->resources.exclude_prefixes[i]);
	cu_free(c->resources.exclude_prefixes);
	for (i = 0; i < c->resources.ntransforms; i++) {
		struct ctl_config_transform *t = &c->resources.transforms[i];

		cu_free(t->input);
		cu_free(t->multiply_by);
		for (k = 0; k < t->noutputs; k++)
			cu_free(t->outputs[k]);
		cu_free(t->outputs);
		cu_free(t->output_milli);
	}
	cu_free(c->resources.transforms);
}

/* `resources` in v1beta2 form (NULL when out of memory), or a JSON null
 * when nothing is set. [owned] */
json_t *ctl_config_resources_json(const struct ctl_config *c)
{
	json_t *res, *ex, *trs;
	size_t i, k;

	if (c->resources.nexclude == 0 && c->resources.ntransforms == 0 &&
	    !c->resources.ignore_undeclared && c->dra.nmappings == 0)
		return json_null();
	res = json_object();
	ex = json_array();
	trs = json_array();
	if (res == NULL || ex == NULL || trs == NULL)
		goto nomem;
	for (i = 0; i < c->resources.nexclude; i++)
		if (json_array_append_new(
			ex, json_string(c->resources.exclude_prefixes[i])) != 0)
			goto nomem;
	for (i = 0; i < c->resources.ntransforms; i++) {
		const struct ctl_config_transform *t =
		    &c->resources.transforms[i];
		json_t *o = json_pack("{s:s, s:s}", "input", t->input,
		    "strategy", t->replace ? "Replace" : "Retain");
		json_t *outs = json_object();

		if (o == NULL || outs == NULL ||
		    json_object_set_new(o, "outputs", outs) != 0 ||
		    json_array_append_new(trs, o) != 0) {
			json_decref(o);
			goto nomem;
		}
		if (t->multiply_by != NULL &&
		    json_object_set_new(
			o, "multiplyBy", json_string(t->multiply_by)) != 0)
			goto nomem;
		for (k = 0; k < t->noutputs; k++) {
			char q[API_QUANTITY_STR_MAX];

			api_quantity_format_milli(
			    t->output_milli[k], q, sizeof(q));
			if (json_object_set_new(
				outs, t->outputs[k], json_string(q)) != 0)
				goto nomem;
		}
	}
	if (c->resources.ignore_undeclared &&
	    json_object_set_new(res, "quotaCheckStrategy",
		json_string("IgnoreUndeclared")) != 0)
		goto nomem;
	if (json_object_set_new(res, "excludeResourcePrefixes", ex) != 0 ||
	    json_object_set_new(res, "transformations", trs) != 0) {
		ex = trs = NULL;
		goto nomem;
	}
	if (c->dra.nmappings > 0) {
		json_t *m = ctl_config_dra_json(c);

		if (m == NULL ||
		    json_object_set_new(res, "deviceClassMappings", m) != 0) {
			ex = trs = NULL;
			goto nomem;
		}
	}
	return res;
nomem:
	json_decref(res);
	json_decref(ex);
	json_decref(trs);
	return NULL;
}

int ctl_config_resources_apply(
    const struct ctl_config *c, que_state *st, cu_error *err)
{
	struct que_resources_spec spec;
	struct que_transform *tr;
	struct que_request *outs;
	size_t i, k, nouts = 0, o = 0;
	int rc;

	for (i = 0; i < c->resources.ntransforms; i++)
		nouts += c->resources.transforms[i].noutputs;
	tr = cu_calloc(c->resources.ntransforms + 1, sizeof(*tr));
	outs = cu_calloc(nouts + 1, sizeof(*outs));
	if (tr == NULL || outs == NULL) {
		cu_free(tr);
		cu_free(outs);
		return cu_error_set(err, CU_ENOMEM, "resources: out of memory");
	}
	for (i = 0; i < c->resources.ntransforms; i++) {
		const struct ctl_config_transform *t =
		    &c->resources.transforms[i];

		tr[i].input = t->input;
		tr[i].replace = t->replace;
		tr[i].multiply_by = t->multiply_by;
		tr[i].outputs = &outs[o];
		tr[i].n_outputs = t->noutputs;
		for (k = 0; k < t->noutputs; k++, o++) {
			outs[o].resource = t->outputs[k];
			outs[o].per_pod = t->output_milli[k];
		}
	}
	memset(&spec, 0, sizeof(spec));
	spec.exclude_prefixes =
	    (const char *const *)c->resources.exclude_prefixes;
	spec.n_exclude = c->resources.nexclude;
	spec.transforms = tr;
	spec.n_transforms = c->resources.ntransforms;
	spec.quota_check = c->resources.ignore_undeclared
			       ? QUE_IGNORE_UNDECLARED
			       : QUE_BLOCK_UNDECLARED;
	rc = que_resources_set(st, &spec, err);
	cu_free(tr);
	cu_free(outs);
	return rc;
}

/* One objectRetentionPolicies.workloads duration: unset stays unset, 0 is
 * kept (delete at once), negative is refused as Kueue does. */
static int load_retention_dur(const struct ctl_config_dec *d, const json_t *w,
    const char *key, bool *has, int64_t *ns)
{
	const json_t *v = ctl_config_jget(w, key);
	char look[96];

	*has = false;
	if (v == NULL)
		return CU_OK;
	if (ctl_config_parse_duration(json_string_value(v), ns, NULL) != CU_OK)
		return CU_OK; /* the schema walk reported it */
	snprintf(
	    look, sizeof(look), "objectRetentionPolicies.workloads.%s", key);
	if (*ns < 0)
		return ctl_config_fail(d, CU_EINVAL, look,
		    "%s: Invalid value: \"%s\": must be greater than or equal "
		    "to 0",
		    look, json_string_value(v));
	*has = true;
	return CU_OK;
}

int ctl_config_load_retention(
    const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *w = ctl_config_jget(
	    ctl_config_jget(root, "objectRetentionPolicies"), "workloads");
	struct ctl_config *c = d->c;
	int rc, rc2;

	rc = load_retention_dur(d, w, "afterFinished",
	    &c->retention.has_after_finished, &c->retention.after_finished_ns);
	rc2 = load_retention_dur(d, w, "afterDeactivatedByKueue",
	    &c->retention.has_after_deactivated,
	    &c->retention.after_deactivated_ns);
	return rc != CU_OK ? rc : rc2;
}

json_t *ctl_config_retention_json(const struct ctl_config *c)
{
	json_t *w;
	char buf[64];

	if (!c->retention.has_after_finished &&
	    !c->retention.has_after_deactivated)
		return json_null();
	w = json_object();
	if (w == NULL)
		return NULL;
	if (c->retention.has_after_finished) {
		ctl_config_format_duration(
		    c->retention.after_finished_ns, buf, sizeof(buf));
		if (json_object_set_new(w, "afterFinished", json_string(buf)))
			goto nomem;
	}
	if (c->retention.has_after_deactivated) {
		ctl_config_format_duration(
		    c->retention.after_deactivated_ns, buf, sizeof(buf));
		if (json_object_set_new(
			w, "afterDeactivatedByKueue", json_string(buf)))
			goto nomem;
	}
	return json_pack("{s:o}", "workloads", w);
nomem:
	json_decref(w);
	return NULL;
}
