/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/resources.c - the Configuration's `resources` as the quota model
 * counts them: excludeResourcePrefixes (requests whose name starts with a
 * prefix are never counted), transformations (Retain or Replace an input
 * resource, adding outputs per unit of it, optionally multiplied by
 * another request of the same pod) and quotaCheckStrategy (whether a
 * resource no ClusterQueue group covers blocks admission).
 *
 * Kueue applies these to the per-pod requests of each podSet of a pending
 * Workload, in that order: exclusion, then transformations; outputs of
 * several inputs add up and a negative total output counts as 0. The
 * result is what the Workload asks of quota (status.resourceRequests,
 * then its admission's resourceUsage).
 */
#include <string.h>

#include "queues/queues_int.h"

struct que_resources {
	char **exclude; /* owned */
	size_t n_exclude;
	struct que_transform *tr; /* owned; strings owned too */
	size_t n_tr;
	enum que_quota_check quota_check;
};

static void resources_free(struct que_resources *r)
{
	size_t i, k;

	if (r == NULL)
		return;
	for (i = 0; i < r->n_exclude; i++)
		cu_free(r->exclude[i]);
	cu_free(r->exclude);
	for (i = 0; i < r->n_tr; i++) {
		struct que_transform *t = &r->tr[i];

		cu_free((char *)t->input);
		cu_free((char *)t->multiply_by);
		for (k = 0; k < t->n_outputs; k++)
			cu_free((char *)t->outputs[k].resource);
		cu_free((struct que_request *)t->outputs);
	}
	cu_free(r->tr);
	cu_free(r);
}

void que_resources_free(que_state *st)
{
	resources_free(st->resources);
	st->resources = NULL;
}

static int copy_transform(
    struct que_transform *dst, const struct que_transform *src)
{
	struct que_request *outs;
	size_t k;

	memset(dst, 0, sizeof(*dst));
	dst->replace = src->replace;
	dst->input = cu_strdup(src->input);
	if (dst->input == NULL)
		return CU_ENOMEM;
	if (src->multiply_by != NULL &&
	    (dst->multiply_by = cu_strdup(src->multiply_by)) == NULL)
		return CU_ENOMEM;
	outs = cu_calloc(src->n_outputs + 1, sizeof(*outs));
	if (outs == NULL)
		return CU_ENOMEM;
	dst->outputs = outs;
	for (k = 0; k < src->n_outputs; k++) {
		outs[k].per_pod = src->outputs[k].per_pod;
		outs[k].resource = cu_strdup(src->outputs[k].resource);
		if (outs[k].resource == NULL)
			return CU_ENOMEM;
		dst->n_outputs = k + 1;
	}
	return CU_OK;
}

int que_resources_set(
    que_state *st, const struct que_resources_spec *spec, cu_error *err)
{
	struct que_resources *r;
	size_t i;

	for (i = 0; i < spec->n_transforms; i++)
		if (spec->transforms[i].input == NULL ||
		    spec->transforms[i].input[0] == '\0')
			return cu_error_set(err, CU_EINVAL,
			    "resources.transformations[%zu].input: Required "
			    "value",
			    i);
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL)
		return cu_error_set(err, CU_ENOMEM, "resources: out of memory");
	r->quota_check = spec->quota_check;
	r->exclude = cu_calloc(spec->n_exclude + 1, sizeof(*r->exclude));
	r->tr = cu_calloc(spec->n_transforms + 1, sizeof(*r->tr));
	if (r->exclude == NULL || r->tr == NULL)
		goto nomem;
	for (i = 0; i < spec->n_exclude; i++) {
		r->exclude[i] = cu_strdup(spec->exclude_prefixes[i]);
		if (r->exclude[i] == NULL)
			goto nomem;
		r->n_exclude = i + 1;
	}
	for (i = 0; i < spec->n_transforms; i++) {
		r->n_tr = i + 1;
		if (copy_transform(&r->tr[i], &spec->transforms[i]) != CU_OK)
			goto nomem;
	}
	resources_free(st->resources);
	st->resources = r;
	return CU_OK;
nomem:
	resources_free(r);
	return cu_error_set(err, CU_ENOMEM, "resources: out of memory");
}

bool que_resources_ignore_undeclared(const que_state *st)
{
	return st->resources != NULL &&
	       st->resources->quota_check == QUE_IGNORE_UNDECLARED;
}

static bool excluded(const struct que_resources *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_exclude; i++)
		if (strncmp(name, r->exclude[i], strlen(r->exclude[i])) == 0)
			return true;
	return false;
}

static const struct que_transform *transform_of(
    const struct que_resources *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_tr; i++)
		if (strcmp(r->tr[i].input, name) == 0)
			return &r->tr[i];
	return NULL;
}

/* a x b of two milli-unit values, in milli-units: exact, then rounded up
 * (away from zero) to a milli-unit as Quantity.MilliValue rounds, and
 * saturated to the int64 range. */
int64_t que_milli_mul(int64_t a, int64_t b)
{
	__int128 p = (__int128)a * (__int128)b;
	__int128 q = p / 1000;

	if (p % 1000 != 0)
		q += p > 0 ? 1 : -1;
	if (q > INT64_MAX)
		return INT64_MAX;
	if (q < INT64_MIN)
		return INT64_MIN;
	return (int64_t)q;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;

	if (!__builtin_add_overflow(a, b, &s))
		return s;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Add v to name's entry of list (n entries), appending one if absent. */
static void accumulate(
    struct que_request *list, size_t *n, const char *name, int64_t v)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(list[i].resource, name) == 0) {
			list[i].per_pod = sat_add(list[i].per_pod, v);
			return;
		}
	list[*n].resource = name;
	list[*n].per_pod = v;
	(*n)++;
}

/* The request named name among in[0..n) that is not excluded, or NULL. */
static const struct que_request *find_kept(const struct que_resources *r,
    const struct que_request *in, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(in[i].resource, name) == 0 &&
		    !excluded(r, in[i].resource))
			return &in[i];
	return NULL;
}

int que_resources_apply(const que_state *st, const struct que_request *in,
    size_t n, struct que_request **out, size_t *n_out, cu_error *err)
{
	const struct que_resources *r = st->resources;
	struct que_request *kept, *gen;
	size_t cap = n, n_kept = 0, n_gen = 0, i, k;

	*out = NULL;
	*n_out = 0;
	for (i = 0; r != NULL && i < r->n_tr; i++)
		cap += r->tr[i].n_outputs;
	kept = cu_calloc(cap + 1, sizeof(*kept));
	gen = cu_calloc(cap + 1, sizeof(*gen));
	if (kept == NULL || gen == NULL) {
		cu_free(kept);
		cu_free(gen);
		return cu_error_set(err, CU_ENOMEM, "requests: out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct que_transform *t;
		int64_t base;

		if (r == NULL) {
			accumulate(
			    kept, &n_kept, in[i].resource, in[i].per_pod);
			continue;
		}
		if (excluded(r, in[i].resource))
			continue;
		t = transform_of(r, in[i].resource);
		if (t == NULL || !t->replace)
			accumulate(
			    kept, &n_kept, in[i].resource, in[i].per_pod);
		if (t == NULL)
			continue;
		base = in[i].per_pod;
		if (t->multiply_by != NULL) {
			const struct que_request *m =
			    find_kept(r, in, n, t->multiply_by);

			if (m != NULL)
				base = que_milli_mul(base, m->per_pod);
		}
		for (k = 0; k < t->n_outputs; k++)
			accumulate(gen, &n_gen, t->outputs[k].resource,
			    que_milli_mul(base, t->outputs[k].per_pod));
	}
	/* A negative total output is an allowance that never goes below
	 * zero; it does not reduce a retained request of the same name. */
	for (i = 0; i < n_gen; i++)
		accumulate(kept, &n_kept, gen[i].resource,
		    gen[i].per_pod < 0 ? 0 : gen[i].per_pod);
	cu_free(gen);
	*out = kept;
	*n_out = n_kept;
	return CU_OK;
}
