/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/typed_bench.c - `cueue-bench typed [N]`: what reading an
 * object through its api/ type costs beside walking its JSON, for the
 * reads the controller still does raw or has moved to the typed path:
 * per read, N reads of parsed objects (tests/data/golden; default
 * 100,000), the raw walk's and the typed path's nanoseconds and their
 * ratio (best of five rounds, taking turns). A change that makes a
 * typed path slower shows here; docs/architecture.md ("One
 * representation") says which reads stay raw because of it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/model.h"
#include "lib/cu.h"

int bench_typed_main(int argc, char **argv);

/* One read, both ways; each returns a value so that the work is kept. */
struct pair {
	const char *name;
	const char *file; /* tests/data/golden/<file> */
	size_t (*raw)(const json_t *obj);
	size_t (*typed)(const json_t *obj);
};

/* controller/ctl.c's owner walk on every Workload event. */
static size_t owner_raw(const json_t *obj)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(obj, "metadata"),
			       "ownerReferences"),
	    i, r)
	{
		if (json_is_true(json_object_get(r, "controller")))
			return strlen(
			    json_string_value(json_object_get(r, "name")));
	}
	return 0;
}

static size_t owner_typed(const json_t *obj)
{
	struct api_meta m;
	const struct api_owner_ref *r;
	size_t n = 0;

	if (api_object_meta_decode(&m, obj, NULL) != CU_OK)
		return 0;
	if ((r = api_meta_controller(&m)) != NULL)
		n = strlen(r->name);
	api_meta_dispose(&m);
	return n;
}

/* controller/provreq.c's first look at a Workload event: any checks? */
static size_t checks_raw(const json_t *obj)
{
	return json_array_size(
	    json_object_get(json_object_get(obj, "status"), "admissionChecks"));
}

static size_t checks_typed(const json_t *obj)
{
	struct api_workload wl;
	size_t n;

	if (api_workload_decode(&wl, obj, NULL) != CU_OK)
		return 0;
	n = wl.status.n_admission_checks;
	api_workload_dispose(&wl);
	return n;
}

/* A condition found by type (status.conditions alone decoded). */
static size_t cond_raw(const json_t *obj)
{
	const json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t != NULL && strcmp(t, "Admitted") == 0)
			return strcmp(json_string_value(
					  json_object_get(c, "status")),
				   "True") == 0;
	}
	return 0;
}

static size_t cond_typed(const json_t *obj)
{
	struct api_conditions cs;
	size_t yes;

	if (api_conditions_decode(obj, &cs, NULL) != CU_OK)
		return 0;
	yes = api_conditions_true(&cs, "Admitted");
	api_conditions_dispose(&cs);
	return yes;
}

/* controller/tas_trees.c's ResourceFlavor scan: its topologyName. */
static size_t flavor_raw(const json_t *obj)
{
	const char *t = json_string_value(
	    json_object_get(json_object_get(obj, "spec"), "topologyName"));

	return t != NULL ? strlen(t) + 1 : 0;
}

static size_t flavor_typed(const json_t *obj)
{
	struct api_resource_flavor rf;
	size_t n;

	if (api_resource_flavor_decode(&rf, obj, NULL) != CU_OK)
		return 0;
	n = rf.spec.topology_name ? strlen(rf.spec.topology_name) + 1 : 0;
	api_resource_flavor_dispose(&rf);
	return n;
}

/* controller/tas.c's look at a Workload event's pod templates (with
 * topology flavors): any tolerations, nodeSelector or node affinity? */
static const json_t *template0(const json_t *obj)
{
	return json_object_get(
	    json_array_get(
		json_object_get(json_object_get(obj, "spec"), "podSets"), 0),
	    "template");
}

static size_t sched_raw(const json_t *obj)
{
	const json_t *spec = json_object_get(template0(obj), "spec");

	return json_array_size(json_object_get(spec, "tolerations")) > 0 ||
	       json_object_size(json_object_get(spec, "nodeSelector")) > 0 ||
	       json_object_get(
		   json_object_get(
		       json_object_get(spec, "affinity"), "nodeAffinity"),
		   "requiredDuringSchedulingIgnoredDuringExecution") != NULL;
}

static size_t sched_typed(const json_t *obj)
{
	struct api_pod_sched ps;
	size_t any;

	if (api_pod_sched_decode(&ps, template0(obj), NULL) != CU_OK)
		return 0;
	any = api_pod_sched_any(&ps) + 1;
	api_pod_sched_dispose(&ps);
	return any;
}

static const struct pair PAIRS[] = {
    {"Workload owner (ctl.c event path)", "workload.json", owner_raw,
	owner_typed},
    {"Workload admission checks (provreq.c first look)", "workload.json",
	checks_raw, checks_typed},
    {"Workload Admitted condition", "workload.json", cond_raw, cond_typed},
    {"Workload template scheduling (tas.c has_sched)", "workload.json",
	sched_raw, sched_typed},
    {"ResourceFlavor topologyName (tas_trees.c scan)", "resourceflavor.json",
	flavor_raw, flavor_typed},
};

/* Copies read in turn: an informer event's object was just parsed, so
 * the reads run on objects in the cache, as in the controller. */
#define RING 8

/* ns per call of fn, n calls over the ring objs, in one round. */
static double per_call(
    size_t (*fn)(const json_t *), json_t **objs, size_t n, size_t *sink)
{
	int64_t t0 = cu_time_mono_ns();
	size_t i;

	for (i = 0; i < n; i++)
		*sink += fn(objs[i % RING]);
	return (double)(cu_time_mono_ns() - t0) / (double)n;
}

/* The best of five rounds of each, raw and typed taking turns (a busy
 * machine slows both alike). */
static void measure(const struct pair *p, json_t **objs, size_t n, size_t *sink,
    double *raw, double *typed)
{
	int round;

	for (round = 0; round < 5; round++) {
		double r = per_call(p->raw, objs, n, sink);
		double t = per_call(p->typed, objs, n, sink);

		if (round == 0 || r < *raw)
			*raw = r;
		if (round == 0 || t < *typed)
			*typed = t;
	}
}

int bench_typed_main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, p, i;
	size_t sink = 0;
	json_t *objs[RING];

	if (n == 0)
		n = 100000;
	for (p = 0; p < sizeof(PAIRS) / sizeof(PAIRS[0]); p++) {
		char path[256];
		json_t *one;
		double raw = 0, typed = 0;

		snprintf(
		    path, sizeof(path), "tests/data/golden/%s", PAIRS[p].file);
		one = json_load_file(path, 0, NULL);
		if (one == NULL) {
			fprintf(stderr, "cueue-bench typed: cannot read %s\n",
			    path);
			return 2;
		}
		for (i = 0; i < RING; i++)
			objs[i] = json_deep_copy(one);
		json_decref(one);
		measure(&PAIRS[p], objs, n, &sink, &raw, &typed);
		printf("typed-vs-raw: %s: raw %.0f ns, typed %.0f ns per "
		       "read (%.1fx), %zu reads\n",
		    PAIRS[p].name, raw, typed, raw > 0 ? typed / raw : 0.0, n);
		for (i = 0; i < RING; i++)
			json_decref(objs[i]);
	}
	return sink == 0 ? 1 : 0;
}
