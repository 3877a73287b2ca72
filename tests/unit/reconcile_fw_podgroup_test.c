/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_podgroup_test.c - pod groups
 * (rec_pod_group_reconcile, reconcile/fw_podgroup.c), table-driven over
 * the group's Pods and its Workload:
 *
 *   waiting:   short of the total count (Failed Pods not counted), or
 *              without a valid total: nothing, no Workload
 *   creating:  one Workload named after the group, owned by every live
 *              Pod (none its controller), one pod set per role counted
 *   admitted:  one ungating patch per gated Pod, none for the others
 *   stopped:   not admitted or evicted, Pods past their gate deleted; an
 *              evicted Workload with no Pod running releases its quota
 *   finished:  total Pods Succeeded, or a Failed Pod not retriable in the
 *              group: the Workload is finished; another Failed Pod waits
 *   gone:      no Pod left: finalizer dropped, Workload deleted
 *   excess:    more Pods than the total count (no Workload) or a pod
 *              set's count: the last of them deleted
 *   deleting:  a Workload being deleted while the group has Pods: the
 *              running ones deleted, then the finalizer dropped
 *   finalizer: Kueue's pod finalizer dropped from every Pod once the
 *              Workload is Finished (not before), from Failed Pods
 *              before a Workload exists, from an excess Pod before its
 *              delete, from a replaced Failed Pod; a replacement Pod
 *              becomes an owner of the Workload
 *   parent:    a StatefulSet's group: its Workload owned by the
 *              StatefulSet, kept without Pods (released when evicted),
 *              on hold at zero replicas, the hold cleared on scale-up
 *              (made anew at another size)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/reconcile.h"
#include "tests/unit/fixtures.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at line %d col %d", jerr.text,
	    jerr.line, jerr.column);
	return j;
}

/* Pod `name` asking `cpu`, gated or not, in phase `phase`, with extra
 * annotations `ann` (members ending with a comma, or ""). */
static json_t *pod(const char *name, const char *cpu, bool gated,
    const char *phase, const char *ann)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\","
	    "\"resourceVersion\":\"7\",\"labels\":{"
	    "\"kueue.x-k8s.io/queue-name\":\"lq\","
	    "\"kueue.x-k8s.io/pod-group-name\":\"g\"},\"annotations\":{%s"
	    "\"kueue.x-k8s.io/pod-group-total-count\":\"2\"}},\"spec\":{%s"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
	    "\"requests\":{\"cpu\":\"%s\"}}}]},\"status\":{\"phase\":\"%s\"}}",
	    name, name, ann,
	    gated ? "\"schedulingGates\":[{\"name\":"
		    "\"kueue.x-k8s.io/admission\"}],"
		  : "",
	    cpu, phase);
	return parse(buf);
}

/* The admitted flavor: ResourceFlavor f with node label pool=f. */
static int flavors(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err)
{
	json_t *j = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			  "\"kind\":\"ResourceFlavor\",\"metadata\":{"
			  "\"name\":\"f\"},\"spec\":{\"nodeLabels\":{"
			  "\"pool\":\"f\"}}}");
	int rc;

	(void)wl;
	(void)payload;
	*out = cu_calloc(1, sizeof(**out));
	cr_assert_not_null(*out);
	rc = api_resource_flavor_decode(*out, j, err);
	json_decref(j);
	*n = 1;
	return rc;
}

/* The group's parent StatefulSet for reconcile(), NULL: none. */
static const json_t *parent;

struct run {
	json_t *pods[4];
	size_t n;
	struct rec_plan plan;
};

static void reconcile(
    struct run *r, int32_t total, const struct api_workload *wl)
{
	struct rec_job_view v;
	struct rec_pod_group_in in;
	cu_error err;

	memset(&v, 0, sizeof(v));
	v.managed = true;
	v.queue_name = "lq";
	v.admitted_flavors = flavors;
	v.local_queue_exists = fx_no_lq;
	memset(&in, 0, sizeof(in));
	in.ns = "ns";
	in.name = "g";
	in.pods = (const json_t *const *)r->pods;
	in.n_pods = r->n;
	in.total = total;
	in.wl = wl;
	in.parent = parent;
	rec_plan_init(&r->plan);
	cr_assert_eq(rec_pod_group_reconcile(&v, &in, 0, &r->plan, &err), CU_OK,
	    "%s", err.msg);
}

static void run_dispose(struct run *r)
{
	size_t i;

	rec_plan_free(&r->plan);
	for (i = 0; i < r->n; i++)
		json_decref(r->pods[i]);
}

/* "<target><op>:<name>" of each write, comma-separated: W/J for
 * Workload/job, C/P/S/D for create/patch/status/delete. */
static void writes(const struct rec_plan *p, char *out, size_t cap)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];
		char op = it->op == REC_WRITE_CREATE   ? 'C'
			  : it->op == REC_WRITE_STATUS ? 'S'
			  : it->op == REC_WRITE_DELETE ? 'D'
						       : 'P';

		if (it->kind != REC_ITEM_WRITE)
			continue;
		used += (size_t)snprintf(out + used, cap - used, "%s%c%c:%s",
		    used ? "," : "",
		    it->target == REC_TARGET_WORKLOAD ? 'W' : 'J', op,
		    it->name);
	}
}

/* The Workload of create item it [borrowed], decoded, with status
 * `status` (JSON). */
static void workload_from(
    const struct rec_item *it, const char *status, struct api_workload *wl)
{
	json_t *w = json_deep_copy(it->body);
	cu_error err;

	json_object_set_new(
	    json_object_get(w, "metadata"), "uid", json_string("wl-uid"));
	json_object_set_new(json_object_get(w, "metadata"), "resourceVersion",
	    json_string("9"));
	json_object_set_new(w, "status", parse(status));
	cr_assert_eq(api_workload_decode(wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
}

Test(pod_group, waits_until_complete)
{
	struct run r;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "1", false, "Failed", "");
	reconcile(&r, 2, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "", "one live Pod of two");
	rec_plan_free(&r.plan);
	reconcile(&r, 0, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "", "no total count");
	run_dispose(&r);
}

Test(pod_group, one_workload_per_group_with_roles)
{
	struct run r;
	const json_t *w, *sets, *refs;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "500m", true, "Pending", "");
	r.pods[r.n++] = pod("c", "1", true, "Pending", "");
	reconcile(&r, 3, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WC:g");
	w = r.plan.items[0].body;
	sets = json_object_get(json_object_get(w, "spec"), "podSets");
	cr_assert_eq(json_array_size(sets), 2);
	cr_assert_eq(json_integer_value(
			 json_object_get(json_array_get(sets, 0), "count")),
	    2);
	cr_assert_eq(json_integer_value(
			 json_object_get(json_array_get(sets, 1), "count")),
	    1);
	cr_assert_eq(strlen(api_json_str(json_array_get(sets, 0), "name")), 8);
	cr_assert_str_neq(api_json_str(json_array_get(sets, 0), "name"),
	    api_json_str(json_array_get(sets, 1), "name"));
	refs =
	    json_object_get(json_object_get(w, "metadata"), "ownerReferences");
	cr_assert_eq(json_array_size(refs), 3);
	cr_assert_null(json_object_get(json_array_get(refs, 0), "controller"));
	cr_assert_str_eq(api_json_str(json_array_get(refs, 2), "name"), "c");
	cr_assert_str_eq(
	    api_json_str(json_object_get(w, "spec"), "queueName"), "lq");
	run_dispose(&r);
}

#define ADMITTED_PRE                                                           \
	"{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{"     \
	"\"name\":\""
#define ADMITTED(extra)                                                        \
	"\",\"flavors\":{\"cpu\":\"f\"},\"resourceUsage\":{"                   \
	"\"cpu\":\"2\"},\"count\":2}]},\"conditions\":[{\"type\":"             \
	"\"QuotaReserved\",\"status\":\"True\",\"reason\":\"A\","              \
	"\"message\":\"m\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},"  \
	"{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"A\","         \
	"\"message\":\"m\",\"lastTransitionTime\":"                            \
	"\"2026-01-01T00:00:00Z\"}" extra "]}"

#define EVICTED                                                                \
	",{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\"," \
	"\"message\":\"p\",\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"}"

/* The group a (gated), b (as `b_gated`, phase b_phase) with a Workload
 * in status ADMITTED_PRE <the role's name> tail. */
static void two_pods_with(struct run *r, bool b_gated, const char *b_phase,
    const char *tail, struct api_workload *wl)
{
	struct run c;
	char status[2048];

	memset(r, 0, sizeof(*r));
	r->pods[r->n++] = pod("a", "1", true, "Pending", "");
	r->pods[r->n++] = pod("b", "1", b_gated, b_phase, "");
	/* the role's name from the Workload the group gets */
	memset(&c, 0, sizeof(c));
	c.pods[c.n++] = pod("a", "1", true, "Pending", "");
	c.pods[c.n++] = pod("b", "1", true, "Pending", "");
	reconcile(&c, 2, NULL);
	snprintf(status, sizeof(status), "%s%s%s", ADMITTED_PRE,
	    api_json_str(json_array_get(
			     json_object_get(
				 json_object_get(c.plan.items[0].body, "spec"),
				 "podSets"),
			     0),
		"name"),
	    tail);
	workload_from(&c.plan.items[0], status, wl);
	run_dispose(&c);
}

Test(pod_group, admitted_ungates_each_gated_pod)
{
	struct run r;
	struct api_workload wl;
	char got[512];

	two_pods_with(&r, false, "Running", ADMITTED(""), &wl);
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:a", "b is past its gate already: %s", got);
	rec_plan_free(&r.plan);
	api_workload_dispose(&wl);
	run_dispose(&r);

	two_pods_with(&r, true, "Pending", ADMITTED(""), &wl);
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:a,JP:b");
	api_workload_dispose(&wl);
	run_dispose(&r);
}

/* Two Pods (b gated or not, in phase b_phase) and their Workload
 * admitted with status tail, being deleted when `deleting`: the plan's
 * writes are `want`. */
static void two_pods_expect(bool b_gated, const char *b_phase, const char *tail,
    bool deleting, const char *want)
{
	struct run r;
	struct api_workload wl;
	char got[512];

	two_pods_with(&r, b_gated, b_phase, tail, &wl);
	wl.meta.has_deletion = deleting;
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, want);
	api_workload_dispose(&wl);
	run_dispose(&r);
}

Test(pod_group, evicted_deletes_then_releases)
{
	two_pods_expect(false, "Running", ADMITTED(EVICTED), false, "JD:b");
	/* then, with no Pod running, the quota is released */
	two_pods_expect(true, "Pending", ADMITTED(EVICTED), false, "WS:g");
}

Test(pod_group, finished_and_replacements)
{
	struct run r;
	struct api_workload wl;
	char got[512];

	two_pods_with(&r, false, "Failed", ADMITTED(""), &wl);
	json_object_set_new(json_object_get(r.pods[0], "status"), "phase",
	    json_string("Succeeded"));
	json_object_del(json_object_get(r.pods[0], "spec"), "schedulingGates");
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "", "a Failed Pod waits for its replacement");
	rec_plan_free(&r.plan);
	json_object_set_new(json_object_get(r.pods[1], "metadata"),
	    "annotations",
	    json_pack("{s:s}", "kueue.x-k8s.io/retriable-in-group", "false"));
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WS:g", "not retriable: finished");
	rec_plan_free(&r.plan);
	json_object_set_new(json_object_get(r.pods[1], "status"), "phase",
	    json_string("Succeeded"));
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WS:g", "all succeeded");
	api_workload_dispose(&wl);
	run_dispose(&r);
}

Test(pod_group, gone_group_deletes_workload)
{
	struct run r;
	struct api_workload wl;
	char got[512];
	size_t i;

	two_pods_with(&r, true, "Pending", ADMITTED(""), &wl);
	for (i = 0; i < r.n; i++)
		json_decref(r.pods[i]);
	r.n = 0;
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WP:g,WD:g");
	api_workload_dispose(&wl);
	run_dispose(&r);
}

/* A Workload being deleted while the group has Pods again (a
 * StatefulSet's Pods deleted on preemption and made anew before the
 * Workload went): the running Pods stop, then it loses its finalizer;
 * never ungated by it, never released, never stuck. */
Test(pod_group, deleted_workload_with_replacements_goes)
{
	/* the running Pod stops first */
	two_pods_expect(false, "Running", ADMITTED(EVICTED), true, "JD:b");
	/* then the finalizer goes */
	two_pods_expect(true, "Pending", ADMITTED(EVICTED), true, "WP:g");
	/* admitted but being deleted: never ungated */
	two_pods_expect(true, "Pending", ADMITTED(""), true, "WP:g");
}

/* Excess Pods (Kueue's): before the Workload, more Pods than the total
 * count: the last (gated, then newer, then by name) deleted and the
 * Workload made of the others; after, more Pods of a role than its pod
 * set counts: the excess deleted, Pods past their gate kept, never
 * ungated. */
Test(pod_group, excess_pods_deleted)
{
	struct run r, c;
	struct api_workload wl;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "1", true, "Pending", "");
	r.pods[r.n++] = pod("c", "1", true, "Pending", "");
	reconcile(&r, 2, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JD:c,WC:g", "%s", got);
	/* Kueue's event about the deleted Pod, after its delete. */
	cr_assert_eq(r.plan.items[1].kind, REC_ITEM_EVENT);
	cr_assert_str_eq(r.plan.items[1].reason, "ExcessPodDeleted");
	cr_assert_str_eq(r.plan.items[1].type, REC_EVENT_NORMAL);
	cr_assert_str_eq(r.plan.items[1].text, "Excess pod deleted");
	cr_assert_str_eq(r.plan.items[1].name, "c");
	cr_assert_eq(json_integer_value(json_object_get(
			 json_array_get(
			     json_object_get(
				 json_object_get(r.plan.items[2].body, "spec"),
				 "podSets"),
			     0),
			 "count")),
	    2, "the Workload asks for the total count");
	run_dispose(&r);

	two_pods_with(&r, true, "Pending", ADMITTED(""), &wl);
	r.pods[r.n++] = pod("c", "1", false, "Running", "");
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	/* c, kept, becomes an owner of the Workload (as Kueue's) */
	cr_assert_str_eq(got, "JD:b,WP:g,JP:a", "c is past its gate: %s", got);
	api_workload_dispose(&wl);
	run_dispose(&r);

	/* A Failed Pod or one being deleted is not counted. */
	memset(&c, 0, sizeof(c));
	c.pods[c.n++] = pod("a", "1", true, "Pending", "");
	c.pods[c.n++] = pod("b", "1", true, "Failed", "");
	c.pods[c.n++] = pod("c", "1", true, "Pending", "");
	json_object_set_new(json_object_get(c.pods[2], "metadata"),
	    "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
	c.pods[c.n++] = pod("d", "1", true, "Pending", "");
	reconcile(&c, 2, NULL);
	writes(&c.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WC:g", "%s", got);
	run_dispose(&c);
}

/* A serving webhook's role-hash annotation names the Pod's pod set (a
 * LeaderWorkerSet group: leader and worker; a StatefulSet: main). */
Test(pod_group, role_hash_names_pod_sets)
{
	struct run r;
	const json_t *sets;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "100m", true, "Pending",
	    "\"kueue.x-k8s.io/role-hash\":\"leader\",");
	r.pods[r.n++] = pod("b", "200m", true, "Pending",
	    "\"kueue.x-k8s.io/role-hash\":\"worker\",");
	r.pods[r.n++] = pod("c", "200m", true, "Pending",
	    "\"kueue.x-k8s.io/role-hash\":\"worker\",");
	reconcile(&r, 3, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WC:g");
	sets = json_object_get(
	    json_object_get(r.plan.items[0].body, "spec"), "podSets");
	cr_assert_eq(json_array_size(sets), 2);
	cr_assert_str_eq(
	    api_json_str(json_array_get(sets, 0), "name"), "leader");
	cr_assert_str_eq(
	    api_json_str(json_array_get(sets, 1), "name"), "worker");
	cr_assert_eq(json_integer_value(
			 json_object_get(json_array_get(sets, 1), "count")),
	    2);
	run_dispose(&r);
}

/* Fast admission (a StatefulSet's Pods come one by one): the Workload is
 * made at the first Pod, asking for the whole group; without it the same
 * Pod waits. */
Test(pod_group, fast_admission_at_first_pod)
{
	struct run r;
	const json_t *ps;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "500m", true, "Pending",
	    "\"kueue.x-k8s.io/pod-group-fast-admission\":\"true\","
	    "\"kueue.x-k8s.io/role-hash\":\"main\",");
	reconcile(&r, 3, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WC:g");
	ps = json_array_get(
	    json_object_get(
		json_object_get(r.plan.items[0].body, "spec"), "podSets"),
	    0);
	cr_assert_str_eq(api_json_str(ps, "name"), "main");
	cr_assert_eq(json_integer_value(json_object_get(ps, "count")), 3);
	run_dispose(&r);

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "500m", true, "Pending",
	    "\"kueue.x-k8s.io/pod-group-fast-admission\":\"false\",");
	reconcile(&r, 3, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "", "no fast admission: one Pod of three waits");
	run_dispose(&r);
}

/* Kueue's constructPodSet for each role of a group: the topology
 * request carries podIndexLabel kueue.x-k8s.io/pod-group-pod-index,
 * also without topology annotations. */
Test(pod_group, role_pod_sets_carry_the_pod_index_label)
{
	struct run r;
	const json_t *sets;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "500m", true, "Pending", "");
	reconcile(&r, 2, NULL);
	cr_assert_eq(r.plan.n, 1);
	sets = json_object_get(
	    json_object_get(r.plan.items[0].body, "spec"), "podSets");
	cr_assert_eq(json_array_size(sets), 2);
	for (i = 0; i < 2; i++)
		cr_assert_str_eq(
		    api_json_str(json_object_get(json_array_get(sets, i),
				     "topologyRequest"),
			"podIndexLabel"),
		    "kueue.x-k8s.io/pod-group-pod-index");
	run_dispose(&r);
}

/* ---- a parent StatefulSet ------------------------------------------- */

static json_t *sts(int replicas)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i}}", "apiVersion",
	    "apps/v1", "kind", "StatefulSet", "metadata", "name", "web",
	    "namespace", "ns", "uid", "sts-uid", "spec", "replicas", replicas);
}

/* The plan's only write is `want`, its body mentions `has` (or NULL). */
static void expect(struct run *r, const char *want, const char *has)
{
	char got[512], *body;

	writes(&r->plan, got, sizeof(got));
	cr_assert_str_eq(got, want);
	if (has == NULL)
		return;
	body = json_dumps(r->plan.items[0].body, JSON_COMPACT);
	cr_assert(
	    body != NULL && strstr(body, has) != NULL, "%s in %s", has, body);
	cu_free(body);
}

Test(pod_group, parent_owns_its_workload)
{
	json_t *p = sts(2), *want;
	const json_t *md;
	struct run r;

	parent = p;
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "1", true, "Pending", "");
	reconcile(&r, 2, NULL);
	expect(&r, "WC:g", NULL);
	md = json_object_get(r.plan.items[0].body, "metadata");
	want = json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "apps/v1",
	    "kind", "StatefulSet", "name", "web", "uid", "sts-uid");
	cr_assert(json_equal(json_object_get(md, "ownerReferences"), want));
	json_decref(want);
	cr_assert_str_eq(api_json_str(json_object_get(md, "labels"),
			     "kueue.x-k8s.io/job-uid"),
	    "sts-uid");
	cr_assert_str_eq(api_json_str(json_object_get(md, "annotations"),
			     "kueue.x-k8s.io/job-owner-gvk"),
	    "apps/v1, Kind=StatefulSet");
	run_dispose(&r);
	/* No Workload made at zero replicas. */
	json_decref(p);
	parent = p = sts(0);
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	reconcile(&r, 2, NULL);
	expect(&r, "", NULL);
	run_dispose(&r);
	parent = NULL;
	json_decref(p);
}

/* The group's Workload (owned by the StatefulSet of `replicas`) with
 * status tail and n Pods (gated, Pending). */
static void parent_group(
    struct run *r, int replicas, const char *tail, size_t n, json_t **p)
{
	struct api_workload wl;
	size_t i;

	json_t *made = sts(2);

	parent = made; /* the Workload made while it had replicas */
	two_pods_with(r, true, "Pending", tail, &wl);
	json_decref(made);
	*p = sts(replicas);
	parent = *p;
	for (i = n; i < r->n; i++)
		json_decref(r->pods[i]);
	r->n = n;
	reconcile(r, 2, &wl);
	api_workload_dispose(&wl);
}

Test(pod_group, parent_owned_workload_kept_without_pods)
{
	struct run r;
	json_t *p;

	/* Preempted, its Pods deleted: the same Workload gives its quota
	 * back (to be queued again), never deleted. */
	parent_group(&r, 2, ADMITTED(EVICTED), 0, &p);
	expect(&r, "WS:g", "PendingEvaluation");
	run_dispose(&r);
	json_decref(p);
	/* Admitted, Pods not made yet: kept as it is. */
	parent_group(&r, 2, ADMITTED(""), 0, &p);
	expect(&r, "", NULL);
	run_dispose(&r);
	json_decref(p);
	parent = NULL;
}

Test(pod_group, parent_scaled_to_zero_holds)
{
	struct run r;
	json_t *p;

	parent_group(&r, 0, ADMITTED(""), 2, &p);
	expect(&r, "WS:g", "\"reason\":\"OnHold\"");
	expect(&r, "WS:g", "StatefulSet scaled to zero; workload on hold");
	run_dispose(&r);
	json_decref(p);
	parent = NULL;
}

Test(pod_group, parent_scaled_up_clears_hold)
{
	struct api_workload wl;
	struct run r;
	json_t *p;

	/* The group's Workload as made, on hold. */
	p = sts(2);
	parent = p;
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	r.pods[r.n++] = pod("b", "1", true, "Pending", "");
	reconcile(&r, 2, NULL);
	workload_from(&r.plan.items[0],
	    "{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
	    "\"False\",\"reason\":\"OnHold\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}",
	    &wl);
	run_dispose(&r);
	/* Replicas as the pod set: the hold cleared, the same Workload. */
	cr_assert(rec_workload_on_hold(&wl));
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	reconcile(&r, 2, &wl);
	expect(&r, "WS:g", "PendingEvaluation");
	run_dispose(&r);
	/* Another size: made anew. */
	json_decref(p);
	parent = p = sts(1);
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = pod("a", "1", true, "Pending", "");
	reconcile(&r, 2, &wl);
	expect(&r, "WP:g,WD:g", NULL);
	run_dispose(&r);
	api_workload_dispose(&wl);
	json_decref(p);
	parent = NULL;
}

/* ---- the pod finalizer and the Workload's owners ---------------------- */

/* pod [borrowed] given Kueue's pod finalizer. */
static json_t *fin(json_t *pod)
{
	json_object_set_new(json_object_get(pod, "metadata"), "finalizers",
	    json_pack("[s]", REC_POD_FINALIZER));
	return pod;
}

#define FINISHED                                                               \
	",{\"type\":\"Finished\",\"status\":\"True\",\"reason\":"              \
	"\"Succeeded\",\"message\":\"m\",\"lastTransitionTime\":"              \
	"\"2026-01-01T00:00:02Z\"}"

/* The pod finalizer goes once the Workload says Finished, not when the
 * group is seen finished (the Workload is finished first). */
Test(pod_group, finalizer_dropped_once_workload_finished)
{
	struct run r;
	struct api_workload wl;
	const json_t *body;
	char got[512];

	two_pods_with(&r, false, "Succeeded", ADMITTED(""), &wl);
	fin(r.pods[0]);
	fin(r.pods[1]);
	json_object_set_new(json_object_get(r.pods[0], "status"), "phase",
	    json_string("Succeeded"));
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WS:g", "finished first, Pods kept: %s", got);
	api_workload_dispose(&wl);
	run_dispose(&r);

	two_pods_with(&r, false, "Succeeded", ADMITTED(FINISHED), &wl);
	fin(r.pods[0]);
	fin(r.pods[1]);
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WP:g,JP:a,JP:b", "%s", got);
	body = r.plan.items[1].body;
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(body, "metadata"), "finalizers")),
	    0);
	cr_assert_str_eq(
	    api_json_str(json_object_get(body, "metadata"), "resourceVersion"),
	    "7", "guarded by the Pod's resourceVersion");
	api_workload_dispose(&wl);
	run_dispose(&r);

	/* a Pod without the finalizer: nothing to drop */
	two_pods_with(&r, false, "Succeeded", ADMITTED(FINISHED), &wl);
	fin(r.pods[1]);
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "WP:g,JP:b", "%s", got);
	api_workload_dispose(&wl);
	run_dispose(&r);
}

/* Before the Workload exists, a Failed Pod loses the finalizer; an
 * excess Pod loses it before its delete; other Pods keep it. */
Test(pod_group, finalizer_of_inactive_and_excess_pods)
{
	struct run r;
	char got[512];

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = fin(pod("a", "1", true, "Pending", ""));
	r.pods[r.n++] = fin(pod("b", "1", true, "Pending", ""));
	r.pods[r.n++] = fin(pod("c", "1", false, "Failed", ""));
	reconcile(&r, 2, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:c,WC:g", "%s", got);
	run_dispose(&r);

	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = fin(pod("a", "1", true, "Pending", ""));
	r.pods[r.n++] = fin(pod("b", "1", true, "Pending", ""));
	r.pods[r.n++] = fin(pod("c", "1", true, "Pending", ""));
	reconcile(&r, 2, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:c,JD:c,WC:g", "%s", got);
	run_dispose(&r);

	/* of two excess candidates, the one without the finalizer goes */
	memset(&r, 0, sizeof(r));
	r.pods[r.n++] = fin(pod("a", "1", true, "Pending", ""));
	r.pods[r.n++] = pod("b", "1", true, "Pending", "");
	r.pods[r.n++] = fin(pod("c", "1", true, "Pending", ""));
	reconcile(&r, 2, NULL);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JD:b,WC:g", "%s", got);
	run_dispose(&r);
}

/* A Failed Pod of an admitted group and its replacement c: c becomes an
 * owner of the Workload (the others kept) and is ungated; the replaced
 * Pod loses the finalizer. Without a replacement the Failed Pod keeps
 * it (it is still counted). */
Test(pod_group, replacement_owns_workload_replaced_pod_let_go)
{
	struct run r;
	struct api_workload wl;
	const json_t *refs;
	char got[512];

	two_pods_with(&r, false, "Failed", ADMITTED(""), &wl);
	fin(r.pods[1]);
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:a", "no replacement yet: %s", got);
	rec_plan_free(&r.plan);

	r.pods[r.n++] = fin(pod("c", "1", true, "Pending", ""));
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JP:b,WP:g,JP:a,JP:c", "%s", got);
	refs =
	    json_object_get(json_object_get(r.plan.items[1].body, "metadata"),
		"ownerReferences");
	cr_assert_eq(json_array_size(refs), 3, "a and b kept, c added");
	cr_assert_str_eq(api_json_str(json_array_get(refs, 2), "name"), "c");
	cr_assert_str_eq(api_json_str(json_array_get(refs, 2), "uid"), "u-c");
	cr_assert_str_eq(
	    api_json_str(json_object_get(r.plan.items[1].body, "metadata"),
		"resourceVersion"),
	    "9", "guarded by the Workload's resourceVersion");
	api_workload_dispose(&wl);
	run_dispose(&r);
}

/* A Workload being deleted: its Pods lose the finalizer (Kueue's Stop
 * for WorkloadDeleted). */
Test(pod_group, deleted_workload_lets_pods_go)
{
	struct run r;
	struct api_workload wl;
	char got[512];

	two_pods_with(&r, false, "Running", ADMITTED(""), &wl);
	fin(r.pods[0]);
	fin(r.pods[1]);
	wl.meta.has_deletion = true;
	reconcile(&r, 2, &wl);
	writes(&r.plan, got, sizeof(got));
	cr_assert_str_eq(got, "JD:b,JP:a,JP:b", "%s", got);
	api_workload_dispose(&wl);
	run_dispose(&r);
}
