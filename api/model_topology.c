/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_topology.c - topology-aware scheduling in the model: the
 * kueue.x-k8s.io/v1beta2 Topology codec, the Workload podSet
 * topologyRequest (decoded, encoded, and built from the pod template's
 * podset-*-topology annotations as Kueue's job framework does), and the
 * podSetAssignments[].topologyAssignment wire form (levels + slices)
 * converted to and from a flat list of domains.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_internal.h"

#define KUEUE_V1B2 "kueue.x-k8s.io/v1beta2"

#define ANN_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define ANN_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define ANN_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define ANN_SLICE_REQUIRED "kueue.x-k8s.io/podset-slice-required-topology"
#define ANN_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"
#define ANN_GROUP "kueue.x-k8s.io/podset-group-name"
#define ANN_SLICE_LAYERS                                                       \
	"kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define LAYERS_KEY "podsetSliceRequiredTopologyConstraints"
#define LAYERS_MAX 3

/* ---- Topology ----------------------------------------------------------- */

static void dec_level(struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	char **label = item;

	(void)ctx;
	apid_str(d, e, "nodeLabel", true, label);
}

static void topology_decode_body(
    struct api_dec *d, const json_t *j, struct api_topology *t)
{
	const json_t *spec;
	size_t mark, m2;

	apid_meta(d, j, &t->meta);
	spec = apid_section(d, j, "spec", true, &mark);
	t->spec.levels.items = apid_each(d, spec, "levels", true,
	    sizeof(*t->spec.levels.items), &t->spec.levels.n, dec_level, NULL);
	if (d->rc == CU_OK && (t->spec.levels.n < 1 || t->spec.levels.n > 16)) {
		m2 = apid_push(d, "levels");
		apid_fail(d, CU_EINVAL,
		    "Invalid value: %zu: must have between 1 and 16 items",
		    t->spec.levels.n);
		apid_pop(d, m2);
	}
	apid_pop(d, mark);
}

static void topology_encode_body(
    struct api_enc *e, json_t *dst, const struct api_topology *t)
{
	json_t *spec, *a;
	size_t i;

	apie_meta(e, dst, &t->meta);
	spec = apie_obj(e, dst, "spec", true);
	a = apie_arr(e, spec, "levels", t->spec.levels.n);
	for (i = 0; a && i < t->spec.levels.n; i++)
		apie_str(e, json_array_get(a, i), "nodeLabel",
		    t->spec.levels.items[i]);
}

static void topology_dispose_body(struct api_topology *t)
{
	api_strlist_dispose(&t->spec.levels);
}

API_MODEL_DEFINE_CODEC(topology, KUEUE_V1B2, "Topology")

/* ---- podSet topologyRequest --------------------------------------------- */

static void layers_dispose(struct api_topology_request *t)
{
	size_t i;

	for (i = 0; i < t->n_layers; i++)
		cu_free(t->layers[i].topology);
	cu_free(t->layers);
	t->layers = NULL;
	t->n_layers = 0;
}

void api_topology_request_dispose(struct api_topology_request *t)
{
	if (t == NULL)
		return;
	cu_free(t->required);
	cu_free(t->preferred);
	cu_free(t->slice_required);
	cu_free(t->group_name);
	cu_free(t->pod_index_label);
	cu_free(t->subgroup_index_label);
	layers_dispose(t);
	memset(t, 0, sizeof(*t));
}

/* The slice layers of list [borrowed] into t: 1 to 3 objects with a
 * non-empty topology and a size >= 1; false when malformed (t has none)
 * or out of memory (*nomem). */
static bool layers_from(
    const json_t *list, struct api_topology_request *t, bool *nomem)
{
	const json_t *l;
	size_t i, n = json_array_size(list);

	*nomem = false;
	if (!json_is_array(list) || n == 0 || n > LAYERS_MAX)
		return false;
	t->layers = cu_calloc(n, sizeof(*t->layers));
	if (t->layers == NULL)
		return !(*nomem = true);
	json_array_foreach(list, i, l)
	{
		const char *top =
		    json_string_value(json_object_get(l, "topology"));
		const json_t *sz = json_object_get(l, "size");

		if (top == NULL || top[0] == '\0' || !json_is_integer(sz) ||
		    json_integer_value(sz) < 1 ||
		    json_integer_value(sz) > INT32_MAX)
			break;
		t->layers[i].size = (int32_t)json_integer_value(sz);
		t->n_layers = i + 1;
		if ((t->layers[i].topology = cu_strdup(top)) == NULL) {
			*nomem = true;
			break;
		}
	}
	if (t->n_layers == n && !*nomem)
		return true;
	layers_dispose(t);
	return false;
}

void apid_topology_request(struct api_dec *d, const json_t *o, bool *has,
    struct api_topology_request *t)
{
	const json_t *tr;
	size_t mark;

	tr = apid_section(d, o, "topologyRequest", false, &mark);
	if (tr != NULL) {
		*has = true;
		apid_str(d, tr, "required", false, &t->required);
		apid_str(d, tr, "preferred", false, &t->preferred);
		apid_bool(d, tr, "unconstrained", &t->has_unconstrained,
		    &t->unconstrained);
		apid_str(d, tr, "podSetSliceRequiredTopology", false,
		    &t->slice_required);
		apid_i32(d, tr, "podSetSliceSize", false, &t->has_slice_size,
		    &t->slice_size);
		apid_str(d, tr, "podSetGroupName", false, &t->group_name);
		apid_str(d, tr, "podIndexLabel", false, &t->pod_index_label);
		apid_str(d, tr, "subGroupIndexLabel", false,
		    &t->subgroup_index_label);
		apid_i32(d, tr, "subGroupCount", false, &t->has_subgroup_count,
		    &t->subgroup_count);
		if (json_object_get(tr, LAYERS_KEY) != NULL && d->rc == CU_OK) {
			bool nomem;

			if (!layers_from(
				json_object_get(tr, LAYERS_KEY), t, &nomem)) {
				if (nomem)
					apid_nomem(d);
				else
					apid_fail(d, CU_EINVAL,
					    LAYERS_KEY ": Invalid value: 1 to "
						       "3 {topology, size >= "
						       "1}");
			}
		}
	}
	apid_pop(d, mark);
}

void apie_topology_request(struct api_enc *e, json_t *dst, bool has,
    const struct api_topology_request *t)
{
	json_t *o = apie_obj(e, dst, "topologyRequest", has);

	if (o == NULL)
		return;
	apie_str(e, o, "required", t->required);
	apie_str(e, o, "preferred", t->preferred);
	apie_bool(
	    e, o, "unconstrained", t->has_unconstrained, t->unconstrained);
	apie_str(e, o, "podSetSliceRequiredTopology", t->slice_required);
	apie_i64(e, o, "podSetSliceSize", t->has_slice_size, t->slice_size);
	apie_str(e, o, "podSetGroupName", t->group_name);
	apie_str(e, o, "podIndexLabel", t->pod_index_label);
	apie_str(e, o, "subGroupIndexLabel", t->subgroup_index_label);
	apie_i64(
	    e, o, "subGroupCount", t->has_subgroup_count, t->subgroup_count);
	if (t->n_layers > 0 && e->rc == CU_OK) {
		json_t *a = json_array();
		size_t i;

		for (i = 0; a != NULL && i < t->n_layers; i++)
			if (json_array_append_new(
				a, json_pack("{s:s, s:i}", "topology",
				       t->layers[i].topology, "size",
				       (int)t->layers[i].size)) != 0) {
				json_decref(a);
				a = NULL;
			}
		if (a == NULL || json_object_set_new(o, LAYERS_KEY, a) != 0)
			e->rc = cu_error_set(
			    e->err, CU_ENOMEM, "topologyRequest: no memory");
	}
}

int api_topology_request_encode(
    json_t **out, const struct api_topology_request *t, cu_error *err)
{
	struct api_enc e = {CU_OK, err};
	json_t *wrap = json_object();

	*out = NULL;
	if (wrap == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "topologyRequest: no memory");
	apie_topology_request(&e, wrap, true, t);
	if (e.rc == CU_OK) {
		*out = json_incref(json_object_get(wrap, "topologyRequest"));
		if (*out == NULL)
			e.rc = cu_error_set(
			    err, CU_ENOMEM, "topologyRequest: no memory");
	}
	json_decref(wrap);
	return e.rc;
}

static const char *ann(const json_t *anns, const char *key)
{
	const json_t *v =
	    json_is_object(anns) ? json_object_get(anns, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Go's strconv.ParseBool. */
static bool parse_go_bool(const char *s, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {
	    "0", "f", "F", "FALSE", "false", "False"};
	size_t i;

	for (i = 0; i < 6; i++) {
		if (strcmp(s, t[i]) == 0)
			return *out = true, true;
		if (strcmp(s, f[i]) == 0)
			return *out = false, true;
	}
	return false;
}

static bool parse_i32(const char *s, int32_t *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || *s == ' ')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

int api_topology_request_from_template(const json_t *tpl,
    struct api_topology_request *out, bool *found, cu_error *err)
{
	const json_t *md =
	    json_is_object(tpl) ? json_object_get(tpl, "metadata") : NULL;
	const json_t *anns =
	    json_is_object(md) ? json_object_get(md, "annotations") : NULL;
	const char *req = ann(anns, ANN_REQUIRED);
	const char *pref = ann(anns, ANN_PREFERRED);
	const char *unc = ann(anns, ANN_UNCONSTRAINED);
	const char *slice = ann(anns, ANN_SLICE_REQUIRED);
	const char *size = ann(anns, ANN_SLICE_SIZE);
	const char *group = ann(anns, ANN_GROUP);
	const char *layers = ann(anns, ANN_SLICE_LAYERS);
	bool b = false;

	memset(out, 0, sizeof(*out));
	*found = false;
	/* One mode, in Kueue's order: required, preferred, unconstrained. */
	if (req != NULL) {
		out->required = cu_strdup(req);
		if (out->required == NULL)
			goto nomem;
	} else if (pref != NULL) {
		out->preferred = cu_strdup(pref);
		if (out->preferred == NULL)
			goto nomem;
	} else if (unc != NULL) {
		if (!parse_go_bool(unc, &b))
			return cu_error_set(err, CU_EINVAL,
			    "metadata.annotations[%s]: invalid value %s: "
			    "must be a boolean",
			    ANN_UNCONSTRAINED, unc);
		out->has_unconstrained = true;
		out->unconstrained = b;
	} else if ((slice == NULL || size == NULL) && layers == NULL) {
		return CU_OK;
	}
	if (layers != NULL) {
		/* Kueue (TASMultiLayerTopology): the layers take the place
		 * of the two slice annotations. */
		json_t *list = json_loads(layers, 0, NULL);
		bool nomem = false, ok = layers_from(list, out, &nomem);

		json_decref(list);
		if (nomem)
			goto nomem;
		if (!ok) {
			api_topology_request_dispose(out);
			return cu_error_set(err, CU_EINVAL,
			    "metadata.annotations[%s]: invalid value: must be "
			    "a JSON list of 1 to 3 {topology, size >= 1}",
			    ANN_SLICE_LAYERS);
		}
	} else if (slice != NULL && size != NULL) {
		if (!parse_i32(size, &out->slice_size)) {
			api_topology_request_dispose(out);
			return cu_error_set(err, CU_EINVAL,
			    "metadata.annotations[%s]: invalid value %s",
			    ANN_SLICE_SIZE, size);
		}
		out->has_slice_size = true;
		out->slice_required = cu_strdup(slice);
		if (out->slice_required == NULL)
			goto nomem;
	}
	if (group != NULL && (req != NULL || pref != NULL) &&
	    (out->group_name = cu_strdup(group)) == NULL)
		goto nomem;
	*found = true;
	return CU_OK;
nomem:
	api_topology_request_dispose(out);
	return cu_error_set(err, CU_ENOMEM, "topologyRequest: out of memory");
}

int api_podset_index_labels(struct api_podset_info *p, const char *pod_label,
    const char *sub_label, int32_t sub_count, cu_error *err)
{
	struct api_topology_request *t = &p->topology_request;

	if (!p->has_topology_request)
		memset(t, 0, sizeof(*t));
	cu_free(t->pod_index_label);
	cu_free(t->subgroup_index_label);
	t->pod_index_label = cu_strdup(pod_label);
	t->subgroup_index_label = sub_label ? cu_strdup(sub_label) : NULL;
	t->has_subgroup_count = sub_label != NULL;
	t->subgroup_count = sub_label != NULL ? sub_count : 0;
	p->has_topology_request = true;
	if (t->pod_index_label == NULL ||
	    (sub_label != NULL && t->subgroup_index_label == NULL))
		return cu_error_set(
		    err, CU_ENOMEM, "topologyRequest: out of memory");
	return CU_OK;
}

bool api_topology_request_places(const struct api_topology_request *t)
{
	return t->required != NULL || t->preferred != NULL ||
	       t->has_unconstrained || t->slice_required != NULL ||
	       t->n_layers > 0;
}

/* ---- topologyAssignment ------------------------------------------------- */

void api_topology_assignment_dispose(struct api_topology_assignment *a)
{
	size_t i, k;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_domains; i++) {
		for (k = 0; a->domains[i].values && k < a->levels.n; k++)
			cu_free(a->domains[i].values[k]);
		cu_free(a->domains[i].values);
	}
	cu_free(a->domains);
	api_strlist_dispose(&a->levels);
	memset(a, 0, sizeof(*a));
}

/* One slice holding every domain; a level (or the pod counts) is
 * "universal" when all domains share the value, else "individual". */
int api_topology_assignment_encode(
    json_t **out, const struct api_topology_assignment *a, cu_error *err)
{
	json_t *o = NULL, *levels, *slices, *slice, *vpl, *pc, *arr;
	size_t i, k;
	bool same;
	int bad = 0;

	*out = NULL;
	o = json_object();
	levels = json_array();
	slices = json_array();
	slice = json_object();
	vpl = json_array();
	pc = json_object();
	if (o == NULL || levels == NULL || slices == NULL || slice == NULL ||
	    vpl == NULL || pc == NULL) {
		json_decref(levels);
		json_decref(slices);
		json_decref(slice);
		json_decref(vpl);
		json_decref(pc);
		goto nomem;
	}
	bad |= json_object_set_new(o, "levels", levels);
	bad |= json_object_set_new(o, "slices", slices);
	bad |= json_array_append_new(slices, slice);
	bad |= json_object_set_new(
	    slice, "domainCount", json_integer((json_int_t)a->n_domains));
	bad |= json_object_set_new(slice, "valuesPerLevel", vpl);
	bad |= json_object_set_new(slice, "podCounts", pc);
	for (k = 0; k < a->levels.n && !bad; k++) {
		json_t *lv = json_object();

		bad |= json_array_append_new(
		    levels, json_string(a->levels.items[k]));
		bad |= json_array_append_new(vpl, lv);
		if (lv == NULL)
			break;
		same = true;
		for (i = 1; i < a->n_domains; i++)
			same = same && strcmp(a->domains[i].values[k],
					   a->domains[0].values[k]) == 0;
		if (same && a->n_domains > 0) {
			bad |= json_object_set_new(lv, "universal",
			    json_string(a->domains[0].values[k]));
			continue;
		}
		arr = json_array();
		bad |= json_object_set_new(
		    lv, "individual", json_pack("{s:o?}", "roots", arr));
		for (i = 0; arr && i < a->n_domains; i++)
			bad |= json_array_append_new(
			    arr, json_string(a->domains[i].values[k]));
	}
	same = true;
	for (i = 1; i < a->n_domains; i++)
		same = same && a->domains[i].count == a->domains[0].count;
	if (same && a->n_domains > 0) {
		bad |= json_object_set_new(
		    pc, "universal", json_integer(a->domains[0].count));
	} else {
		arr = json_array();
		bad |= json_object_set_new(pc, "individual", arr);
		for (i = 0; arr && i < a->n_domains; i++)
			bad |= json_array_append_new(
			    arr, json_integer(a->domains[i].count));
	}
	if (bad)
		goto nomem;
	*out = o;
	return CU_OK;
nomem:
	json_decref(o);
	return cu_error_set(
	    err, CU_ENOMEM, "topologyAssignment: out of memory");
}

static int dec_fail(struct api_topology_assignment *out, cu_error *err,
    int code, const char *what)
{
	api_topology_assignment_dispose(out);
	return cu_error_set(err, code, "topologyAssignment: %s", what);
}

/* Value of level k for domain i of a slice, with prefix/suffix. */
static char *slice_value(const json_t *lv, size_t i)
{
	const json_t *u = json_object_get(lv, "universal");
	const json_t *ind = json_object_get(lv, "individual");
	const json_t *roots, *pre, *suf, *r;
	const char *p, *s;
	size_t n;
	char *v;

	if (json_is_string(u))
		return cu_strdup(json_string_value(u));
	roots = json_is_object(ind) ? json_object_get(ind, "roots") : NULL;
	r = json_is_array(roots) ? json_array_get(roots, i) : NULL;
	if (!json_is_string(r))
		return NULL;
	pre = json_object_get(ind, "prefix");
	suf = json_object_get(ind, "suffix");
	p = json_is_string(pre) ? json_string_value(pre) : "";
	s = json_is_string(suf) ? json_string_value(suf) : "";
	n = strlen(p) + strlen(json_string_value(r)) + strlen(s) + 1;
	v = cu_malloc(n);
	if (v != NULL)
		snprintf(v, n, "%s%s%s", p, json_string_value(r), s);
	return v;
}

int api_topology_assignment_decode(
    struct api_topology_assignment *out, const json_t *j, cu_error *err)
{
	const json_t *levels = json_object_get(j, "levels");
	const json_t *slices = json_object_get(j, "slices");
	const json_t *sl, *lv, *vpl, *pc, *u, *ind, *c;
	size_t i, k, s, total = 0, at = 0, nl;

	memset(out, 0, sizeof(*out));
	if (!json_is_array(levels) || json_array_size(levels) == 0 ||
	    !json_is_array(slices))
		return dec_fail(
		    out, err, CU_EINVAL, "levels and slices required");
	nl = json_array_size(levels);
	json_array_foreach(slices, s, sl)
	{
		c = json_object_get(sl, "domainCount");
		if (!json_is_integer(c) || json_integer_value(c) < 1 ||
		    json_integer_value(c) > 100000)
			return dec_fail(
			    out, err, CU_EINVAL, "domainCount must be >= 1");
		total += (size_t)json_integer_value(c);
		if (total > 100000) /* Kueue: roots and counts MaxItems */
			return dec_fail(
			    out, err, CU_EINVAL, "more than 100000 domains");
	}
	out->levels.items = cu_calloc(nl, sizeof(char *));
	out->domains = cu_calloc(total ? total : 1, sizeof(*out->domains));
	if (out->levels.items == NULL || out->domains == NULL)
		return dec_fail(out, err, CU_ENOMEM, "out of memory");
	out->levels.n = nl;
	json_array_foreach(levels, k, lv)
	{
		if (!json_is_string(lv))
			return dec_fail(
			    out, err, CU_EINVAL, "levels must be strings");
		out->levels.items[k] = cu_strdup(json_string_value(lv));
		if (out->levels.items[k] == NULL)
			return dec_fail(out, err, CU_ENOMEM, "out of memory");
	}
	json_array_foreach(slices, s, sl)
	{
		size_t n = (size_t)json_integer_value(
		    json_object_get(sl, "domainCount"));

		vpl = json_object_get(sl, "valuesPerLevel");
		pc = json_object_get(sl, "podCounts");
		if (!json_is_array(vpl) || json_array_size(vpl) != nl ||
		    !json_is_object(pc))
			return dec_fail(out, err, CU_EINVAL,
			    "valuesPerLevel must have one entry per level");
		u = json_object_get(pc, "universal");
		ind = json_object_get(pc, "individual");
		if (!json_is_integer(u) &&
		    !(json_is_array(ind) && json_array_size(ind) == n))
			return dec_fail(out, err, CU_EINVAL,
			    "podCounts needs universal or individual");
		for (i = 0; i < n; i++, at++) {
			struct api_topology_domain *d = &out->domains[at];

			out->n_domains = at + 1;
			d->count = (int32_t)json_integer_value(
			    json_is_integer(u) ? u : json_array_get(ind, i));
			d->values = cu_calloc(nl, sizeof(char *));
			if (d->values == NULL)
				return dec_fail(
				    out, err, CU_ENOMEM, "out of memory");
			for (k = 0; k < nl; k++) {
				d->values[k] =
				    slice_value(json_array_get(vpl, k), i);
				if (d->values[k] == NULL)
					return dec_fail(out, err, CU_EINVAL,
					    "valuesPerLevel entry missing or "
					    "too short");
			}
		}
	}
	return CU_OK;
}
