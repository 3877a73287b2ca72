/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/dra.c - what a Workload's dynamic resource allocation asks of
 * quota, as Kueue's DRA integration counts it (KueueDRAIntegration and
 * KueueDRAIntegrationExtendedResource): per podSet, the devices its
 * ResourceClaimTemplates request, counted per DeviceClass (Exactly with
 * its count, default 1; admin access counts 0) and charged to the quota
 * resource resources.deviceClassMappings maps the class to; and extended
 * resources a DeviceClass backs (spec.extendedResourceName), charged to the
 * class's mapping name when it has one; and, for a class mapped with
 * counter sources (KueueDRAIntegrationPartitionableDevices), the largest
 * counter its matching ResourceSlice devices consume (CEL selectors
 * through cel/), times the count. Every request's CEL selectors are
 * checked against the ResourceSlice devices first, as Kueue: fewer
 * matching devices than its count refuse. A Workload this cannot count (a
 * direct ResourceClaim, firstAvailable, allocationMode All, a class with no
 * mapping, a missing template, DRA off with rejection on) is refused with
 * Kueue's message; the controller shows it as QuotaReserved=False,
 * Misconfigured. Pure: the caches are read through the lookup callbacks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "cel/cel.h"
#include "reconcile/reconcile.h"

#define CLAIM_PATH "spec.podSets[%zu].template.spec.resourceClaims[%zu]"

static int nomem(cu_error *err)
{
	return cu_error_set(err, CU_ENOMEM, "DRA: out of memory");
}

void rec_dra_result_dispose(struct rec_dra_result *r)
{
	size_t i;

	for (i = 0; r->podsets != NULL && i < r->n; i++) {
		cu_free(r->podsets[i].add);
		cu_free(r->podsets[i].drop);
	}
	cu_free(r->podsets);
	cu_free(r->refused);
	memset(r, 0, sizeof(*r));
}

static const struct rec_dra_mapping *mapping_of(
    const struct rec_dra_config *cfg, const char *cls)
{
	size_t i, k;

	for (i = 0; i < cfg->n_mappings; i++)
		for (k = 0; k < cfg->mappings[i].n_classes; k++)
			if (strcmp(cfg->mappings[i].classes[k], cls) == 0)
				return &cfg->mappings[i];
	return NULL;
}

static int add_to(
    struct rec_dra_podset *p, size_t cap, const char *name, int64_t milli)
{
	size_t i;

	for (i = 0; i < p->n_add; i++)
		if (strcmp(p->add[i].resource, name) == 0) {
			if (__builtin_add_overflow(
				p->add[i].per_pod, milli, &p->add[i].per_pod))
				p->add[i].per_pod = INT64_MAX;
			return CU_OK;
		}
	if (p->n_add >= cap)
		return CU_ERANGE;
	p->add[p->n_add].resource = name;
	p->add[p->n_add++].per_pod = milli;
	return CU_OK;
}

static int refuse(struct rec_dra_result *out, bool retry, cu_error *err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(
    struct rec_dra_result *out, bool retry, cu_error *err, const char *fmt, ...)
{
	char buf[CU_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out->refused = cu_strdup(buf);
	out->retry = retry;
	return out->refused != NULL ? CU_OK : nomem(err);
}

/* ---- counter sources (KueueDRAIntegrationPartitionableDevices) -------- */

#define REQ_PATH CLAIM_PATH ".devices.requests[%zu]"

/* The CEL selectors of one request: the source's deviceSelector, the
 * DeviceClass's and the request's own, parsed [owned: cel_free each]. */
struct selectors {
	struct cel_expr *v[32];
	size_t n;
};

static void selectors_dispose(struct selectors *s)
{
	while (s->n > 0)
		cel_free(s->v[--s->n]);
}

/* Parse the cel.expression of each entry of sel (a DeviceSelector list)
 * into s; a message [owned: cu_free] when one is outside the subset. */
static char *selectors_add(struct selectors *s, const json_t *sel)
{
	json_t *x;
	size_t i;

	json_array_foreach(sel, i, x)
	{
		const char *src = json_string_value(
		    json_object_get(json_object_get(x, "cel"), "expression"));
		char *err = NULL;

		if (src == NULL)
			continue;
		if (s->n >= sizeof(s->v) / sizeof(s->v[0]))
			return cu_strdup("too many selectors");
		if ((s->v[s->n] = cel_parse(src, &err)) == NULL)
			return err;
		s->n++;
	}
	return NULL;
}

/* The CEL view of a ResourceSlice device: driver, attributes and
 * capacity by domain (a name without one is the driver's), attribute
 * values plain (version as its string), capacities quantities. */
static json_t *device_view(const char *driver, const json_t *dev)
{
	json_t *v = json_pack(
	    "{s:s, s:{}, s:{}}", "driver", driver, "attributes", "capacity");
	const char *key;
	json_t *x;
	int pass;

	if (v == NULL)
		return NULL;
	for (pass = 0; pass < 2; pass++) {
		const char *field = pass == 0 ? "attributes" : "capacity";
		json_t *out = json_object_get(v, field);

		json_object_foreach(json_object_get(dev, field), key, x)
		{
			const char *slash = strrchr(key, '/');
			char *dom = slash
					? cu_strndup(key, (size_t)(slash - key))
					: cu_strdup(driver);
			json_t *m, *val = NULL;
			int64_t milli;
			cu_error qe;

			if (dom == NULL)
				goto fail;
			if ((m = json_object_get(out, dom)) == NULL)
				json_object_set_new(
				    out, dom, m = json_object());
			cu_free(dom);
			if (pass == 1) {
				const char *q = json_string_value(
				    json_object_get(x, "value"));

				if (q != NULL && api_quantity_parse_milli(
						     q, &milli, &qe) == CU_OK)
					val = cel_quantity(milli);
			} else if ((val = json_object_get(x, "string")) ||
				   (val = json_object_get(x, "int")) ||
				   (val = json_object_get(x, "bool")) ||
				   (val = json_object_get(x, "version")))
				json_incref(val);
			if (m != NULL && val != NULL)
				json_object_set_new(
				    m, slash ? slash + 1 : key, val);
			else
				json_decref(val);
		}
	}
	return v;
fail:
	json_decref(v);
	return NULL;
}

/* Pools of one driver: the newest generation of each, complete or not. */
struct pool {
	const char *name;
	json_int_t gen, want, have;
};

/* One walk over the cached ResourceSlice devices: those of the listed
 * drivers (none listed: every driver), of complete pools only when
 * complete (the newest generation), that every selector matches, each
 * given to hit in turn. */
struct match {
	const char *const *drivers;
	size_t n_drivers;
	bool complete;
	const struct selectors *sel;
	void (*hit)(const json_t *dev, size_t idx, struct match *m);
	const char *counter;  /* counter sources: the counter's name */
	unsigned char *taken; /* CEL check: devices earlier requests took */
	size_t n_taken, idx;  /* idx: the running device index */
	int64_t need;	      /* stop after a match reaching this many */
	bool nomem;	      /* an allocation failed */
	struct pool *pools;
	size_t n_pools, cap_pools;
	int phase;	       /* 0: gather pools, 1: match devices */
	int64_t matched, best; /* best: largest counter (milli), -1 none */
	char *err;	       /* [owned] an evaluation error */
};

static struct pool *pool_of(struct match *m, const json_t *spec)
{
	const json_t *pl = json_object_get(spec, "pool");
	const char *name = json_string_value(json_object_get(pl, "name"));
	size_t i;

	for (i = 0; name != NULL && i < m->n_pools; i++)
		if (strcmp(m->pools[i].name, name) == 0)
			return &m->pools[i];
	return NULL;
}

static void gather(json_t *slice, struct match *m)
{
	json_t *spec = json_object_get(slice, "spec");
	const json_t *pl = json_object_get(spec, "pool");
	json_int_t gen = json_integer_value(json_object_get(pl, "generation"));
	json_int_t want =
	    json_integer_value(json_object_get(pl, "resourceSliceCount"));
	struct pool *p = pool_of(m, spec);

	if (p == NULL) {
		const char *name =
		    json_string_value(json_object_get(pl, "name"));

		if (name == NULL)
			return;
		if (m->n_pools == m->cap_pools) {
			size_t nc = m->cap_pools ? 2 * m->cap_pools : 8;
			struct pool *np =
			    cu_realloc(m->pools, nc * sizeof(*np));

			if (np == NULL)
				return;
			m->pools = np;
			m->cap_pools = nc;
		}
		p = &m->pools[m->n_pools++];
		*p = (struct pool){name, gen, want, 1};
	} else if (gen > p->gen)
		*p = (struct pool){p->name, gen, want, 1};
	else if (gen == p->gen)
		p->have++;
}

/* Every selector true on the device view v; an error is kept. */
static bool selected(struct match *m, json_t *v)
{
	struct cel_var var = {"device", v};
	struct cel_env env = {&var, 1, NULL};
	size_t i;

	for (i = 0; i < m->sel->n; i++) {
		char *err = NULL;
		json_t *r = cel_eval(m->sel->v[i], &env, &err);
		bool yes = json_is_true(r);

		json_decref(r);
		if (err != NULL) {
			if (m->err == NULL)
				m->err = err;
			else
				cu_free(err);
			return false;
		}
		if (!yes)
			return false;
	}
	return true;
}

static void consider(const json_t *dev, size_t idx, struct match *m)
{
	json_t *cs;
	size_t i;

	(void)idx;
	m->matched++;
	json_array_foreach(json_object_get(dev, "consumesCounters"), i, cs)
	{
		const char *q = json_string_value(json_object_get(
		    json_object_get(
			json_object_get(cs, "counters"), m->counter),
		    "value"));
		int64_t milli;
		cu_error qe;

		if (q == NULL ||
		    api_quantity_parse_milli(q, &milli, &qe) != CU_OK)
			continue;
		if (milli < 0)
			milli = 0; /* Kueue clamps a negative value */
		if (milli > m->best)
			m->best = milli;
	}
}

static bool driver_listed(const struct match *m, const char *driver)
{
	size_t i;

	for (i = 0; i < m->n_drivers; i++)
		if (strcmp(m->drivers[i], driver) == 0)
			return true;
	return m->n_drivers == 0;
}

static void visit_slice(json_t *slice, void *arg)
{
	struct match *m = arg;
	json_t *spec = json_object_get(slice, "spec"), *dev;
	const char *driver = json_string_value(json_object_get(spec, "driver"));
	struct pool *p;
	size_t i;

	if (driver == NULL || !driver_listed(m, driver))
		return;
	if (m->phase == 0) {
		gather(slice, m);
		return;
	}
	p = pool_of(m, spec);
	if (m->complete &&
	    (p == NULL || p->have != p->want ||
		json_integer_value(json_object_get(
		    json_object_get(spec, "pool"), "generation")) != p->gen))
		return;
	json_array_foreach(json_object_get(spec, "devices"), i, dev)
	{
		size_t idx = m->idx++;
		json_t *v;

		if (m->err != NULL ||
		    (m->taken != NULL && idx < m->n_taken && m->taken[idx]))
			continue;
		if (m->matched > 0 && m->matched >= m->need)
			continue;
		v = device_view(driver, dev);
		if (v != NULL && selected(m, v))
			m->hit(dev, idx, m);
		json_decref(v);
	}
}

/* Walk the devices once (complete pools: gather them first). */
static void walk(const struct rec_dra_lookup *lk, struct match *m)
{
	if (lk->slices == NULL)
		return;
	m->phase = m->complete ? 0 : 1;
	if (m->complete)
		lk->slices(lk->payload, visit_slice, m);
	m->phase = 1;
	m->idx = 0;
	lk->slices(lk->payload, visit_slice, m);
}

/* Kueue's charge of one request of count n on counter source src: the
 * largest value of the counter among the devices of the driver's
 * complete pools that every selector matches, times n; refused (to be
 * retried) while fewer than n devices match or none consumes the
 * counter. */
static int counter_charge(const struct rec_dra_lookup *lk,
    const struct rec_dra_mapping *map, const struct rec_dra_counter *src,
    struct selectors *sel, int64_t n, size_t i, size_t j, size_t k,
    struct rec_dra_podset *p, size_t cap, struct rec_dra_result *out,
    cu_error *err)
{
	struct match m = {.drivers = &src->driver,
	    .n_drivers = 1,
	    .complete = true,
	    .sel = sel,
	    .hit = consider,
	    .counter = src->name,
	    .need = INT64_MAX,
	    .best = -1};
	char *perr = NULL;
	size_t base = sel->n;
	int rc = CU_OK;

	if (src->selector != NULL) {
		json_t *one = json_pack(
		    "[{s:{s:s}}]", "cel", "expression", src->selector);

		perr = one ? selectors_add(sel, one) : cu_strdup("no memory");
		json_decref(one);
	}
	if (perr != NULL) {
		rc = refuse(out, false, err,
		    REQ_PATH ": Invalid value: \"%s\": deviceSelector CEL "
			     "compilation failed: %s",
		    i, j, k, src->selector, perr);
		goto out;
	}
	walk(lk, &m);
	if (m.err != NULL)
		rc = refuse(out, true, err,
		    REQ_PATH ": Internal error: CEL evaluation error: %s", i, j,
		    k, m.err);
	else if (m.matched < n)
		rc = refuse(out, true, err,
		    REQ_PATH ": Internal error: insufficient matching devices "
			     "for counter driver: %lld device(s) match but "
			     "%lld requested",
		    i, j, k, (long long)m.matched, (long long)n);
	else if (m.best < 0)
		rc = refuse(out, true, err,
		    REQ_PATH ": Internal error: matched devices have no "
			     "consumesCounters entry for counter \"%s\"",
		    i, j, k, src->name);
	else {
		/* Kueue charges the integer value (rounded up), saturating */
		int64_t units = m.best / 1000 + (m.best % 1000 != 0), milli;

		if (__builtin_mul_overflow(units, n, &units) ||
		    __builtin_mul_overflow(units, (int64_t)1000, &milli))
			milli = INT64_MAX;
		if (add_to(p, cap, map->name, milli) != CU_OK)
			rc = refuse(out, false, err,
			    CLAIM_PATH ": Too many: device classes", i, j);
	}
out:
	while (sel->n > base)
		cel_free(sel->v[--sel->n]);
	cu_free(perr);
	cu_free(m.err);
	cu_free(m.pools);
	return rc;
}

/* A request of a DeviceClass mapped with counter sources: each source
 * charges the mapping's quota resource. */
static int count_counters(const struct rec_dra_lookup *lk,
    const struct rec_dra_mapping *map, const char *cls, const json_t *ex,
    int64_t n, size_t i, size_t j, size_t k, struct rec_dra_podset *p,
    size_t cap, struct rec_dra_result *out, cu_error *err)
{
	struct selectors sel = {{NULL}, 0};
	json_t *dc = lk->device_class != NULL
			 ? lk->device_class(lk->payload, cls)
			 : NULL;
	char *perr;
	size_t s;
	int rc = CU_OK;

	if (dc == NULL)
		return refuse(out, true, err,
		    REQ_PATH ": Internal error: failed to get DeviceClass %s: "
			     "deviceclasses.resource.k8s.io \"%s\" not found",
		    i, j, k, cls, cls);
	if ((perr = selectors_add(&sel,
		 json_object_get(json_object_get(dc, "spec"), "selectors"))) !=
	    NULL) {
		rc = refuse(out, false, err,
		    REQ_PATH ": Invalid value: null: DeviceClass %s has "
			     "invalid CEL selector: %s",
		    i, j, k, cls, perr);
		goto out;
	}
	if ((perr = selectors_add(&sel, json_object_get(ex, "selectors"))) !=
	    NULL) {
		rc = refuse(out, false, err,
		    REQ_PATH ".exactly.selectors: Invalid value: null: CEL "
			     "compilation failed: %s",
		    i, j, k, perr);
		goto out;
	}
	for (s = 0; s < map->n_counters && out->refused == NULL; s++)
		rc = counter_charge(lk, map, &map->counters[s], &sel, n, i, j,
		    k, p, cap, out, err);
out:
	cu_free(perr);
	selectors_dispose(&sel);
	return rc;
}

/* ---- CEL selectors against the cluster's devices --------------------- */

/* Kueue's field errors of one claim template, joined as its aggregate
 * shows them: one alone, several as [a, b]. */
struct errs {
	char buf[CU_ERROR_MSG_MAX];
	size_t n;
	bool internal;
};

static void errs_add(struct errs *e, bool internal, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void errs_add(struct errs *e, bool internal, const char *fmt, ...)
{
	size_t len = strlen(e->buf);
	va_list ap;

	if (e->n > 0 && len + 2 < sizeof(e->buf))
		len +=
		    (size_t)snprintf(e->buf + len, sizeof(e->buf) - len, ", ");
	va_start(ap, fmt);
	if (len < sizeof(e->buf))
		vsnprintf(e->buf + len, sizeof(e->buf) - len, fmt, ap);
	va_end(ap);
	e->n++;
	e->internal |= internal;
}

static void take(const json_t *dev, size_t idx, struct match *m)
{
	(void)dev;
	if (idx >= m->n_taken) {
		size_t nc = idx * 2 + 16;
		unsigned char *nt = cu_realloc(m->taken, nc);

		if (nt == NULL) {
			m->nomem = true;
			return;
		}
		memset(nt + m->n_taken, 0, nc - m->n_taken);
		m->taken = nt;
		m->n_taken = nc;
	}
	m->taken[idx] = 1;
	m->matched++;
}

static bool has_cel(const json_t *ex)
{
	json_t *x;
	size_t i;

	json_array_foreach(json_object_get(ex, "selectors"), i, x)
	{
		if (json_object_get(x, "cel") != NULL)
			return true;
	}
	return false;
}

/* The drivers Kueue lists slices of for a claim's CEL requests: none
 * (every slice) as soon as one request's class has no counter source,
 * else its counter sources' drivers. */
static size_t cel_drivers(const struct rec_dra_config *cfg, const json_t *reqs,
    const char **drv, size_t cap)
{
	json_t *r;
	size_t k, n = 0, s, d;

	json_array_foreach(reqs, k, r)
	{
		const json_t *ex = json_object_get(r, "exactly");
		const char *cls =
		    json_string_value(json_object_get(ex, "deviceClassName"));
		const struct rec_dra_mapping *m =
		    cls != NULL ? mapping_of(cfg, cls) : NULL;

		if (!has_cel(ex))
			continue;
		if (m == NULL || m->n_counters == 0)
			return 0;
		for (s = 0; s < m->n_counters; s++) {
			for (d = 0; d < n; d++)
				if (strcmp(drv[d], m->counters[s].driver) == 0)
					break;
			if (d == n && n < cap)
				drv[n++] = m->counters[s].driver;
		}
	}
	return n;
}

/* Kueue's check of the CEL selectors of every request of one claim
 * template (spec: its spec.spec) against the cluster's devices: the
 * DeviceClass's selectors, then the request's; a device one request
 * matched is not matched again; fewer matches than the request's count
 * refuse the Workload (to be retried), as does a DeviceClass missing; a
 * selector failing on a device refuses it for good (Kueue's
 * field.Invalid). */
static int cel_check(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const json_t *spec, size_t i, size_t j,
    const char *tname, struct rec_dra_result *out, cu_error *err)
{
	const char *drv[16];
	struct errs e = {{0}, 0, false};
	json_t *reqs =
	    json_object_get(json_object_get(spec, "devices"), "requests");
	struct match m = {.drivers = drv, .hit = take, .best = -1};
	json_t *r;
	size_t k;
	int rc = CU_OK;

	m.n_drivers = cel_drivers(cfg, reqs, drv, sizeof(drv) / sizeof(*drv));
	json_array_foreach(reqs, k, r)
	{
		const json_t *ex = json_object_get(r, "exactly");
		const char *cls =
		    json_string_value(json_object_get(ex, "deviceClassName"));
		json_t *cnt = json_object_get(ex, "count"), *dc = NULL;
		int64_t n = json_is_integer(cnt) ? json_integer_value(cnt) : 1;
		struct selectors sel = {{NULL}, 0};
		size_t base;
		char *perr = NULL;

		if (!has_cel(ex))
			continue;
		if (n < 0)
			n = 0;
		if (cls == NULL)
			cls = "";
		if (cls[0] != '\0') {
			dc = lk->device_class != NULL
				 ? lk->device_class(lk->payload, cls)
				 : NULL;
			if (dc == NULL) {
				errs_add(&e, true,
				    REQ_PATH ": Internal error: "
					     "ResourceClaimTemplate %s: failed "
					     "to get DeviceClass %s: "
					     "deviceclasses.resource.k8s.io "
					     "\"%s\" not found",
				    i, j, k, tname, cls, cls);
				continue;
			}
			perr = selectors_add(
			    &sel, json_object_get(json_object_get(dc, "spec"),
				      "selectors"));
		}
		if (perr != NULL) {
			errs_add(&e, false,
			    REQ_PATH ": Invalid value: null: "
				     "ResourceClaimTemplate %s: DeviceClass "
				     "%s has invalid CEL selector: %s",
			    i, j, k, tname, cls, perr);
			goto next;
		}
		base = sel.n;
		if ((perr = selectors_add(
			 &sel, json_object_get(ex, "selectors"))) != NULL ||
		    sel.n == base)
			goto next; /* the first pass refused it already */
		m.sel = &sel;
		m.need = n;
		m.matched = 0;
		walk(lk, &m);
		/* Kueue: an evaluation error is invalid (not retried), a
		 * shortage internal (retried) */
		if (m.err != NULL)
			errs_add(&e, false,
			    REQ_PATH ".exactly.selectors: Invalid value: null: "
				     "ResourceClaimTemplate %s: CEL evaluation "
				     "failed for DeviceClass %s: %s",
			    i, j, k, tname, cls, m.err);
		else if (m.matched < n)
			errs_add(&e, true,
			    REQ_PATH ".exactly.selectors: Internal error: "
				     "ResourceClaimTemplate %s: insufficient "
				     "matching devices for CEL selector in "
				     "DeviceClass %s: %lld device(s) match "
				     "in the cluster but %lld requested",
			    i, j, k, tname, cls, (long long)m.matched,
			    (long long)n);
		cu_free(m.err);
		m.err = NULL;
	next:
		cu_free(perr);
		selectors_dispose(&sel);
	}
	if (m.nomem)
		rc = nomem(err);
	else if (e.n == 1)
		rc = refuse(out, e.internal, err, "%s", e.buf);
	else if (e.n > 1)
		rc = refuse(out, e.internal, err, "[%s]", e.buf);
	cu_free(m.taken);
	cu_free(m.pools);
	return rc;
}

/* The request selectors that do not compile, refused as Kueue. */
static int check_compiles(const json_t *ex, size_t i, size_t j, size_t k,
    const char *tname, struct rec_dra_result *out, cu_error *err)
{
	json_t *x;
	size_t s;

	json_array_foreach(json_object_get(ex, "selectors"), s, x)
	{
		struct selectors one = {{NULL}, 0};
		json_t *arr = json_pack("[O]", x);
		char *perr = arr ? selectors_add(&one, arr) : NULL;
		int rc = CU_OK;

		json_decref(arr);
		selectors_dispose(&one);
		if (arr == NULL)
			return nomem(err);
		if (perr != NULL)
			rc = refuse(out, false, err,
			    REQ_PATH ".exactly.selectors: Invalid value: null: "
				     "ResourceClaimTemplate %s: "
				     "devices.requests[%zu].exactly.selectors"
				     "[%zu].cel.expression: Invalid value: "
				     "\"%s\": CEL compilation failed: %s",
			    i, j, k, tname, k, s,
			    json_string_value(json_object_get(
				json_object_get(x, "cel"), "expression")),
			    perr);
		cu_free(perr);
		if (rc != CU_OK || out->refused != NULL)
			return rc;
	}
	return CU_OK;
}

/* Devices of one claim template spec (json spec.spec) into p: checked
 * first (charge false), then charged. */
static int count_template(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const json_t *spec, size_t i, size_t j,
    const char *tname, const char *podset, struct rec_dra_podset *p, size_t cap,
    bool charge, struct rec_dra_result *out, cu_error *err)
{
	json_t *reqs =
	    json_object_get(json_object_get(spec, "devices"), "requests");
	json_t *r;
	size_t k;

	json_array_foreach(reqs, k, r)
	{
		json_t *ex = json_object_get(r, "exactly");
		const char *mode =
		    json_string_value(json_object_get(ex, "allocationMode"));
		const char *cls =
		    json_string_value(json_object_get(ex, "deviceClassName"));
		json_t *cnt = json_object_get(ex, "count");
		const struct rec_dra_mapping *m;
		int64_t n = json_is_integer(cnt) ? json_integer_value(cnt) : 1;

		if (json_object_get(r, "firstAvailable") != NULL)
			return refuse(out, false, err,
			    CLAIM_PATH ".devices.requests[%zu]: Invalid value: "
				       "null: ResourceClaimTemplate %s: "
				       "FirstAvailable device selection is not "
				       "supported",
			    i, j, k, tname);
		if (!json_is_object(ex))
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".devices.requests[%zu]: Invalid value: "
			    "null: ResourceClaimTemplate %s: Exactly "
			    "must be set if FirstAvailable is nil",
			    i, j, k, tname);
		if (!charge) {
			int rc = check_compiles(ex, i, j, k, tname, out, err);

			if (rc != CU_OK || out->refused != NULL)
				return rc;
		}
		if (json_is_true(json_object_get(ex, "adminAccess")))
			continue;
		if (mode != NULL && strcmp(mode, "All") == 0)
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".devices.requests[%zu].exactly."
			    "allocationMode: Invalid value: \"All\": "
			    "ResourceClaimTemplate %s: AllocationMode "
			    "'All' is not supported",
			    i, j, k, tname);
		if (mode != NULL && strcmp(mode, "ExactCount") != 0)
			return refuse(out, false, err,
			    CLAIM_PATH ".devices.requests[%zu].exactly."
				       "allocationMode: Invalid value: \"%s\": "
				       "ResourceClaimTemplate %s: unsupported "
				       "allocation mode: %s",
			    i, j, k, mode, tname, mode);
		if (!charge || cls == NULL || cls[0] == '\0')
			continue;
		m = mapping_of(cfg, cls);
		if (m == NULL)
			return refuse(out, false, err,
			    CLAIM_PATH ".resourceClaimTemplateName: Not found: "
				       "\"DeviceClass %s is not mapped in DRA "
				       "configuration for podset %s\"",
			    i, j, cls, podset);
		if (n < 0)
			n = 0;
		if (m->n_counters > 0) {
			int rc = count_counters(
			    lk, m, cls, ex, n, i, j, k, p, cap, out, err);

			if (rc != CU_OK || out->refused != NULL)
				return rc;
			continue;
		}
		if (!m->by_device_count)
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".resourceClaimTemplateName: Invalid "
			    "value: \"%s\": DeviceClass %s is mapped "
			    "with capacity sources, which "
			    "cueue does not count yet",
			    i, j, tname, cls);
		if (add_to(p, cap, m->name,
			n > INT64_MAX / 1000 ? INT64_MAX : n * 1000) != CU_OK)
			return refuse(out, false, err,
			    CLAIM_PATH ": Too many: device classes", i, j);
	}
	return CU_OK;
}

/* The extended resources of podSet i's requests that a DeviceClass backs
 * and whose mapping renames them: dropped and charged to the mapping. */
static int extended(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct que_request *reqs, size_t n,
    struct rec_dra_podset *p, size_t cap, struct rec_dra_result *out,
    cu_error *err)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const char *cls;
		const struct rec_dra_mapping *m;

		if (reqs[k].per_pod <= 0 ||
		    strchr(reqs[k].resource, '/') == NULL ||
		    lk->extended_class == NULL ||
		    (cls = lk->extended_class(lk->payload, reqs[k].resource)) ==
			NULL)
			continue;
		out->uses_dra = true;
		if (reqs[k].per_pod % 1000 != 0)
			return refuse(out, false, err,
			    "%s: Invalid value: extended resource quantity "
			    "must be an integer",
			    reqs[k].resource);
		m = mapping_of(cfg, cls);
		if (m != NULL && !m->by_device_count)
			return refuse(out, false, err,
			    "extended resource %s resolves to DeviceClass %s "
			    "with counters configured; use "
			    "ResourceClaimTemplates with CEL selectors for "
			    "counter-based quota",
			    reqs[k].resource, cls);
		if (m == NULL || strcmp(m->name, reqs[k].resource) == 0)
			continue; /* charged under its own name as it is */
		p->drop[p->n_drop++] = reqs[k].resource;
		if (add_to(p, cap, m->name, reqs[k].per_pod) != CU_OK)
			return refuse(
			    out, false, err, "%s: Too many", reqs[k].resource);
	}
	return CU_OK;
}

int rec_dra_evaluate(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct api_workload *wl,
    const struct que_request *const *reqs, const size_t *n_reqs,
    struct rec_dra_result *out, cu_error *err)
{
	size_t i, j, n = wl->spec.n_pod_sets;
	bool claims = false, direct = false;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		json_t *rc,
		    *prc = json_object_get(
			json_object_get(wl->spec.pod_sets[i].template, "spec"),
			"resourceClaims");

		json_array_foreach(prc, j, rc)
		{
			claims |= json_object_get(
				      rc, "resourceClaimTemplateName") != NULL;
			direct |=
			    json_object_get(rc, "resourceClaimName") != NULL;
		}
	}
	out->uses_dra = claims || direct;
	if (!cfg->enabled) {
		if (out->uses_dra && cfg->reject_disabled)
			return refuse(out, false, err,
			    "Workload uses DRA resources but the "
			    "KueueDRAIntegration feature gate is not enabled");
		out->uses_dra = false;
		return CU_OK;
	}
	if (direct)
		return refuse(out, false, err,
		    "KueueDRAIntegration feature does not support use of "
		    "resource claims");
	out->podsets = cu_calloc(n + 1, sizeof(*out->podsets));
	if (out->podsets == NULL)
		return nomem(err);
	out->n = n;
	for (i = 0; i < n; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
		const char *psname = ps->name ? ps->name : "main";
		json_t *rc, *prc = json_object_get(
				json_object_get(ps->template, "spec"),
				"resourceClaims");
		struct rec_dra_podset *p = &out->podsets[i];
		size_t cap = cfg->n_mappings + (n_reqs ? n_reqs[i] : 0) + 1;
		int rc2;

		p->add = cu_calloc(cap, sizeof(*p->add));
		p->drop = cu_calloc(cap, sizeof(*p->drop));
		if (p->add == NULL || p->drop == NULL)
			return nomem(err);
		json_array_foreach(prc, j, rc)
		{
			const char *tname = json_string_value(
			    json_object_get(rc, "resourceClaimTemplateName"));
			json_t *t;

			if (tname == NULL)
				continue;
			t = lk->claim_template != NULL
				? lk->claim_template(
				      lk->payload, wl->meta.namespace_, tname)
				: NULL;
			if (t == NULL)
				return refuse(out, true, err,
				    CLAIM_PATH
				    ": Internal error: failed to "
				    "get claim spec for "
				    "ResourceClaimTemplate %s in "
				    "podset %s: "
				    "resourceclaimtemplates.resource."
				    "k8s.io \"%s\" not found",
				    i, j, tname, psname, tname);
			t = json_object_get(json_object_get(t, "spec"), "spec");
			rc2 = count_template(cfg, lk, t, i, j, tname, psname, p,
			    cap, false, out, err);
			if (rc2 == CU_OK && out->refused == NULL)
				rc2 = cel_check(
				    cfg, lk, t, i, j, tname, out, err);
			if (rc2 == CU_OK && out->refused == NULL)
				rc2 = count_template(cfg, lk, t, i, j, tname,
				    psname, p, cap, true, out, err);
			if (rc2 != CU_OK || out->refused != NULL)
				return rc2;
		}
		if (cfg->extended && reqs != NULL) {
			rc2 = extended(
			    cfg, lk, reqs[i], n_reqs[i], p, cap, out, err);
			if (rc2 != CU_OK || out->refused != NULL)
				return rc2;
		}
	}
	return CU_OK;
}
