/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/filter.c - which nodes a podSet's pods may use: its tolerations
 * against a node's NoSchedule/NoExecute taints (the scheduler's
 * TaintToleration filter), its nodeSelector and its required node
 * affinity terms against the node's labels (and name, for matchFields);
 * and the parsing of those from a v1 PodSpec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tas/tas_int.h"

static bool empty(const char *s)
{
	return s == NULL || s[0] == '\0';
}

bool tas__scheduling_taint(const char *effect)
{
	return effect != NULL && (strcmp(effect, "NoSchedule") == 0 ||
				     strcmp(effect, "NoExecute") == 0);
}

static bool tolerates(
    const struct tas_toleration *tol, const struct tas_taint *t)
{
	if (!empty(tol->effect) &&
	    (t->effect == NULL || strcmp(tol->effect, t->effect) != 0))
		return false;
	if (!empty(tol->key) &&
	    (t->key == NULL || strcmp(tol->key, t->key) != 0))
		return false;
	if (tol->exists)
		return true;
	return strcmp(tol->value ? tol->value : "", t->value ? t->value : "") ==
	       0;
}

static bool tolerated(const struct tas_filter *f, const struct tas_taint *t)
{
	size_t i;

	if (f == NULL)
		return false;
	for (i = 0; i < f->n_tolerations; i++)
		if (tolerates(&f->tolerations[i], t))
			return true;
	for (i = 0; i < f->n_flavor_tolerations; i++)
		if (tolerates(&f->flavor_tolerations[i], t))
			return true;
	return false;
}

bool tas_filter_tolerates(
    const struct tas_filter *f, const struct tas_taint *taints, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tas__scheduling_taint(taints[i].effect) &&
		    !tolerated(f, &taints[i]))
			return false;
	return true;
}

bool tas_filter_selects(const struct tas_filter *f)
{
	return f != NULL && (f->n_selector > 0 || f->n_terms > 0);
}

/* A whole base-10 int64, as Go's strconv.ParseInt(s, 10, 64). */
static bool parse_int(const char *s, long long *out)
{
	char *end;

	if (empty(s))
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0' && end != s &&
	       !(s[0] == ' ' || s[0] == '\t' || s[0] == '\n');
}

/* Label `key` of labels (NULL: none): by binary search when the items
 * are sorted by key (the tree keeps its nodes' labels so), else in
 * order. */
static const char *label(
    const struct api_strmap *labels, bool sorted, const char *key)
{
	size_t lo = 0, hi;

	if (labels == NULL || key == NULL)
		return NULL;
	if (!sorted)
		return api_strmap_get(labels, key);
	hi = labels->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(labels->items[mid].key, key);

		if (c == 0)
			return labels->items[mid].value;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool req_matches(const struct tas_node_req *r, const char *node,
    const struct api_strmap *labels, bool sorted)
{
	const char *v;
	long long a, b;
	size_t i;

	if (r->field)
		v = r->key != NULL && strcmp(r->key, "metadata.name") == 0
			? node
			: NULL;
	else
		v = label(labels, sorted, r->key);
	switch (r->op) {
	case TAS_SEL_IN:
	case TAS_SEL_NOT_IN:
		for (i = 0; v != NULL && i < r->n_values; i++)
			if (r->values[i] != NULL &&
			    strcmp(r->values[i], v) == 0)
				return r->op == TAS_SEL_IN;
		return r->op == TAS_SEL_NOT_IN;
	case TAS_SEL_EXISTS:
		return v != NULL;
	case TAS_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case TAS_SEL_GT:
	case TAS_SEL_LT:
		if (v == NULL || r->n_values != 1 || !parse_int(v, &a) ||
		    !parse_int(r->values[0], &b))
			return false;
		return r->op == TAS_SEL_GT ? a > b : a < b;
	case TAS_SEL_NEVER:
	default:
		return false;
	}
}

static bool term_matches(const struct tas_term *t, const char *node,
    const struct api_strmap *labels, bool sorted)
{
	size_t i;

	if (t->n_reqs == 0)
		return false;
	for (i = 0; i < t->n_reqs; i++)
		if (!req_matches(&t->reqs[i], node, labels, sorted))
			return false;
	return true;
}

static bool matches(const struct tas_filter *f, const char *node,
    const struct api_strmap *labels, bool sorted,
    const struct tas_taint *taints, size_t n_taints)
{
	size_t i;
	const char *v;

	if (!tas_filter_tolerates(f, taints, n_taints))
		return false;
	if (f == NULL)
		return true;
	for (i = 0; i < f->n_selector; i++) {
		v = label(labels, sorted, f->selector[i].key);
		if (v == NULL || f->selector[i].value == NULL ||
		    strcmp(v, f->selector[i].value) != 0)
			return false;
	}
	if (f->n_terms == 0)
		return true;
	for (i = 0; i < f->n_terms; i++)
		if (term_matches(&f->terms[i], node, labels, sorted))
			return true;
	return false;
}

bool tas_filter_matches(const struct tas_filter *f, const char *node,
    const struct api_strmap *labels, const struct tas_taint *taints,
    size_t n_taints)
{
	return matches(f, node, labels, false, taints, n_taints);
}

bool tas__node_matches(const struct tas_filter *f, const struct tas_node *n)
{
	return matches(f, n->name, &n->labels, true, n->taints, n->n_taints);
}

/* ---- parsing ------------------------------------------------------------ */

/* A parsed filter and the pools its arrays point into. */
struct filter_block {
	struct tas_filter f; /* first: tas_filter_free casts back */
	struct tas_toleration *tols;
	struct tas_label *sel;
	struct tas_term *terms;
	struct tas_node_req *reqs;
	const char **vals;
};

static const char *jstr(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const json_t *jget(const json_t *o, const char *key)
{
	return json_is_object(o) ? json_object_get(o, key) : NULL;
}

static enum tas_sel_op sel_op(const char *op, bool field)
{
	if (op == NULL)
		return TAS_SEL_NEVER;
	if (strcmp(op, "In") == 0)
		return TAS_SEL_IN;
	if (strcmp(op, "NotIn") == 0)
		return TAS_SEL_NOT_IN;
	if (field) /* matchFields: In and NotIn only */
		return TAS_SEL_NEVER;
	if (strcmp(op, "Exists") == 0)
		return TAS_SEL_EXISTS;
	if (strcmp(op, "DoesNotExist") == 0)
		return TAS_SEL_DOES_NOT_EXIST;
	if (strcmp(op, "Gt") == 0)
		return TAS_SEL_GT;
	if (strcmp(op, "Lt") == 0)
		return TAS_SEL_LT;
	return TAS_SEL_NEVER;
}

static void parse_reqs(struct filter_block *b, struct tas_term *term,
    const json_t *exprs, bool field, size_t *ri, size_t *vi)
{
	const json_t *e, *v;
	size_t j, k;

	json_array_foreach(exprs, j, e)
	{
		struct tas_node_req *r = &b->reqs[*ri];

		if (term->n_reqs == 0)
			term->reqs = r;
		(*ri)++;
		term->n_reqs++;
		r->key = jstr(e, "key");
		r->field = field;
		r->op = sel_op(jstr(e, "operator"), field);
		r->values = &b->vals[*vi];
		json_array_foreach(jget(e, "values"), k, v)
		{
			if (!json_is_string(v))
				continue;
			b->vals[(*vi)++] = json_string_value(v);
			r->n_values++;
		}
		/* Gt/Lt take exactly one integer (the API's rule) */
		if ((r->op == TAS_SEL_GT || r->op == TAS_SEL_LT) &&
		    r->n_values != 1)
			r->op = TAS_SEL_NEVER;
	}
}

int tas_filter_parse(const json_t *spec, struct tas_filter **out, cu_error *err)
{
	const json_t *tols = jget(spec, "tolerations");
	const json_t *sel = jget(spec, "nodeSelector");
	const json_t *terms =
	    jget(jget(jget(jget(spec, "affinity"), "nodeAffinity"),
		     "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");
	size_t nreqs = 0, nvals = 0, i, j, ri = 0, vi = 0;
	struct filter_block *b;
	const json_t *t, *e, *v;
	const char *key;

	*out = NULL;
	json_array_foreach(terms, i, t)
	{
		const char *parts[] = {"matchExpressions", "matchFields"};
		size_t p;

		for (p = 0; p < 2; p++)
			json_array_foreach(jget(t, parts[p]), j, e)
			{
				nreqs++;
				nvals += json_array_size(jget(e, "values"));
			}
	}
	if (json_array_size(tols) == 0 && json_object_size(sel) == 0 &&
	    json_array_size(terms) == 0)
		return CU_OK;
	b = cu_calloc(1, sizeof(*b));
	if (b == NULL)
		goto nomem;
	b->tols = cu_calloc(json_array_size(tols) + 1, sizeof(*b->tols));
	b->sel = cu_calloc(json_object_size(sel) + 1, sizeof(*b->sel));
	b->terms = cu_calloc(json_array_size(terms) + 1, sizeof(*b->terms));
	b->reqs = cu_calloc(nreqs + 1, sizeof(*b->reqs));
	b->vals = cu_calloc(nvals + 1, sizeof(*b->vals));
	if (!b->tols || !b->sel || !b->terms || !b->reqs || !b->vals) {
		tas_filter_free(&b->f);
		goto nomem;
	}
	b->f.tolerations = b->tols;
	b->f.selector = b->sel;
	b->f.terms = b->terms;
	json_array_foreach(tols, i, t)
	{
		struct tas_toleration *o = &b->tols[b->f.n_tolerations];
		const char *op = jstr(t, "operator");

		/* another operator tolerates nothing (core/v1) */
		if (op != NULL && *op != '\0' && strcmp(op, "Equal") != 0 &&
		    strcmp(op, "Exists") != 0)
			continue;
		b->f.n_tolerations++;
		o->key = jstr(t, "key");
		o->value = jstr(t, "value");
		o->effect = jstr(t, "effect");
		o->exists = op != NULL && strcmp(op, "Exists") == 0;
	}
	json_object_foreach((json_t *)sel, key, v)
	{
		if (!json_is_string(v))
			continue;
		b->sel[b->f.n_selector].key = key;
		b->sel[b->f.n_selector++].value = json_string_value(v);
	}
	json_array_foreach(terms, i, t)
	{
		struct tas_term *term = &b->terms[b->f.n_terms++];

		parse_reqs(
		    b, term, jget(t, "matchExpressions"), false, &ri, &vi);
		parse_reqs(b, term, jget(t, "matchFields"), true, &ri, &vi);
	}
	*out = &b->f;
	return CU_OK;
nomem:
	return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
}

void tas_filter_free(struct tas_filter *f)
{
	struct filter_block *b = (struct filter_block *)f;

	if (b == NULL)
		return;
	cu_free(b->tols);
	cu_free(b->sel);
	cu_free(b->terms);
	cu_free(b->reqs);
	cu_free(b->vals);
	cu_free(b);
}
