/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/namespaces_gate_test.c - namespaces/gate: every branch of the
 * management gate in a table (framework, namespace, owner chain, queue
 * name, manageJobsWithoutQueueName), the seed-001 configuration (Kueue
 * #7649) with a check that an excluded namespace is decided before any
 * owner lookup, and the input helpers (decoded metadata, AdmissionReview
 * JSON, api_namespace).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "namespaces/gate.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the world: namespaces, objects, configurations ------------------ */

struct nsdef {
	const char *name;
	bool found;
	const char *kv[4]; /* k0, v0, k1, v1 (NULL-terminated pairs) */
};

static const struct nsdef namespaces[] = {
    {"default", true, {"kubernetes.io/metadata.name", "default"}},
    {"test", true, {"kubernetes.io/metadata.name", "test"}},
    {"kube-system", true, {"kubernetes.io/metadata.name", "kube-system"}},
    {"kueue-system", true, {"kubernetes.io/metadata.name", "kueue-system"}},
    {"team-a", true,
	{"kubernetes.io/metadata.name", "team-a", "managed", "true"}},
    /* A cache object without the API server's automatic label. */
    {"nolabel", true, {NULL}},
    {"gone", false, {NULL}},
};

#define BATCH "batch/v1"
#define JS "jobset.x-k8s.io/v1alpha2"

/* Objects the lookup can find (any namespace). */
struct objdef {
	const char *name;
	enum ns_gate_kind kind;
	const char *uid;
	const char *queue;
	const char *owner_av, *owner_kind, *owner_name, *owner_uid;
};

static const struct objdef world[] = {
    {"js", NS_GATE_KIND_JOBSET, "uid-js", NULL, NULL, NULL, NULL, NULL},
    {"jsq", NS_GATE_KIND_JOBSET, "uid-jsq", "main", NULL, NULL, NULL, NULL},
    {"js-of-cron", NS_GATE_KIND_JOBSET, "uid-joc", NULL, BATCH, "CronJob", "c",
	"uid-c"},
    /* Job -> JobSet -> Job(queued): the outermost decides. */
    {"outer", NS_GATE_KIND_JOB, "uid-outer", "main", NULL, NULL, NULL, NULL},
    {"mid", NS_GATE_KIND_JOBSET, "uid-mid", NULL, BATCH, "Job", "outer",
	"uid-outer"},
    /* a cycle */
    {"cyc-a", NS_GATE_KIND_JOBSET, "uid-cyc-a", NULL, BATCH, "Job", "cyc-b",
	"uid-cyc-b"},
    {"cyc-b", NS_GATE_KIND_JOB, "uid-cyc-b", NULL, JS, "JobSet", "cyc-a",
	"uid-cyc-a"},
    /* a chain deep-0 <- deep-1 <- ... <- deep-11 (deep-N owned by N+1) */
    {"deep-1", NS_GATE_KIND_JOBSET, "uid-d1", "q", JS, "JobSet", "deep-2",
	"uid-d2"},
    {"deep-2", NS_GATE_KIND_JOBSET, "uid-d2", "q", JS, "JobSet", "deep-3",
	"uid-d3"},
    {"deep-3", NS_GATE_KIND_JOBSET, "uid-d3", "q", JS, "JobSet", "deep-4",
	"uid-d4"},
    {"deep-4", NS_GATE_KIND_JOBSET, "uid-d4", "q", JS, "JobSet", "deep-5",
	"uid-d5"},
    {"deep-5", NS_GATE_KIND_JOBSET, "uid-d5", "q", JS, "JobSet", "deep-6",
	"uid-d6"},
    {"deep-6", NS_GATE_KIND_JOBSET, "uid-d6", "q", JS, "JobSet", "deep-7",
	"uid-d7"},
    {"deep-7", NS_GATE_KIND_JOBSET, "uid-d7", "q", JS, "JobSet", "deep-8",
	"uid-d8"},
    {"deep-8", NS_GATE_KIND_JOBSET, "uid-d8", "q", JS, "JobSet", "deep-9",
	"uid-d9"},
    {"deep-9", NS_GATE_KIND_JOBSET, "uid-d9", "q", JS, "JobSet", "deep-10",
	"uid-d10"},
    {"deep-10", NS_GATE_KIND_JOBSET, "uid-d10", "q", JS, "JobSet", "deep-11",
	"uid-d11"},
    {"deep-11", NS_GATE_KIND_JOBSET, "uid-d11", "q", NULL, NULL, NULL, NULL},
    /* a chain of exactly NS_GATE_CHAIN_LIMIT owners above a job */
    {"ok-1", NS_GATE_KIND_JOBSET, "uid-o1", NULL, JS, "JobSet", "ok-2",
	"uid-o2"},
    {"ok-2", NS_GATE_KIND_JOBSET, "uid-o2", NULL, JS, "JobSet", "ok-3",
	"uid-o3"},
    {"ok-3", NS_GATE_KIND_JOBSET, "uid-o3", NULL, JS, "JobSet", "ok-4",
	"uid-o4"},
    {"ok-4", NS_GATE_KIND_JOBSET, "uid-o4", NULL, JS, "JobSet", "ok-5",
	"uid-o5"},
    {"ok-5", NS_GATE_KIND_JOBSET, "uid-o5", NULL, JS, "JobSet", "ok-6",
	"uid-o6"},
    {"ok-6", NS_GATE_KIND_JOBSET, "uid-o6", NULL, JS, "JobSet", "ok-7",
	"uid-o7"},
    {"ok-7", NS_GATE_KIND_JOBSET, "uid-o7", NULL, JS, "JobSet", "ok-8",
	"uid-o8"},
    {"ok-8", NS_GATE_KIND_JOBSET, "uid-o8", NULL, JS, "JobSet", "ok-9",
	"uid-o9"},
    {"ok-9", NS_GATE_KIND_JOBSET, "uid-o9", NULL, JS, "JobSet", "ok-10",
	"uid-o10"},
    {"ok-10", NS_GATE_KIND_JOBSET, "uid-o10", "q", NULL, NULL, NULL, NULL},
};

static int lookups; /* calls of world_lookup in the current case */

static void objdef_to_gate(const struct objdef *d, struct ns_gate_object *o)
{
	memset(o, 0, sizeof(*o));
	o->kind = d->kind;
	o->name = d->name;
	o->uid = d->uid;
	o->queue_name = d->queue;
	if (d->owner_kind != NULL) {
		o->has_owner = true;
		o->owner.api_version = d->owner_av;
		o->owner.kind = d->owner_kind;
		o->owner.name = d->owner_name;
		o->owner.uid = d->owner_uid;
	}
}

static int world_lookup(const struct ns_gate_owner *ref, const char *nsname,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	(void)payload;
	lookups++;
	cr_assert_not_null(nsname);
	if (strcmp(ref->name, "broken-cache") == 0)
		return cu_error_set(err, CU_EAGAIN, "cache not synced");
	for (size_t i = 0; i < LEN(world); i++) {
		if (strcmp(world[i].name, ref->name) == 0) {
			objdef_to_gate(&world[i], out);
			return CU_OK;
		}
	}
	return CU_ENOTFOUND;
}

static const char *pairs_get(const char *key, void *payload)
{
	const struct nsdef *d = payload;
	for (size_t i = 0; i + 1 < LEN(d->kv) && d->kv[i] != NULL; i += 2)
		if (strcmp(d->kv[i], key) == 0)
			return d->kv[i + 1];
	return NULL;
}

static void ns_of(const char *name, struct ns_gate_namespace *out)
{
	for (size_t i = 0; i < LEN(namespaces); i++) {
		if (strcmp(namespaces[i].name, name) == 0) {
			out->name = name;
			out->found = namespaces[i].found;
			out->get = pairs_get;
			out->payload = (void *)(uintptr_t)&namespaces[i];
			return;
		}
	}
	cr_assert_fail("no namespace %s in the test world", name);
}

/* Configurations. */
enum cfgid {
	SEED,	  /* seed 001: mjwqn, NotIn [kube-system,kueue-system,test] */
	QNAME,	  /* same selector, manageJobsWithoutQueueName false */
	OPTIN,	  /* mjwqn, selector managed=true */
	NILSEL,	  /* mjwqn, no selector */
	NOJOBSET, /* seed config without the jobset framework */
	NOJOB,	  /* seed config without the batch/job framework */
	NOTHING,  /* mjwqn, a selector that matches nothing */
	CFG_COUNT,
};

static api_selector sel_seed, sel_optin, sel_nothing;
static struct ns_gate_config cfgs[CFG_COUNT];

static void setup(void)
{
	cu_error err;
	const char *vals[] = {"kube-system", "kueue-system", "test"};
	const char *t[] = {"true"};

	api_selector_init(&sel_seed);
	cr_assert_eq(api_selector_add(&sel_seed, "kubernetes.io/metadata.name",
			 API_SEL_OP_NOT_IN, vals, 3, NULL, &err),
	    CU_OK, "%s", err.msg);
	api_selector_init(&sel_optin);
	cr_assert_eq(api_selector_add(&sel_optin, "managed", API_SEL_OP_IN, t,
			 1, NULL, &err),
	    CU_OK, "%s", err.msg);
	api_selector_init(&sel_nothing);
	sel_nothing.match_nothing = true;

	struct ns_gate_config base = {
	    .job_enabled = true,
	    .jobset_enabled = true,
	    .manage_jobs_without_queue_name = true,
	    .ns_selector = &sel_seed,
	    .own_namespace = "kueue-system",
	};
	for (int i = 0; i < CFG_COUNT; i++)
		cfgs[i] = base;
	cfgs[QNAME].manage_jobs_without_queue_name = false;
	cfgs[OPTIN].ns_selector = &sel_optin;
	cfgs[NILSEL].ns_selector = NULL;
	cfgs[NOJOBSET].jobset_enabled = false;
	cfgs[NOJOB].job_enabled = false;
	cfgs[NOTHING].ns_selector = &sel_nothing;
	lookups = 0;
}

static void teardown(void)
{
	api_selector_dispose(&sel_seed);
	api_selector_dispose(&sel_optin);
	api_selector_dispose(&sel_nothing);
}

TestSuite(gate, .init = setup, .fini = teardown);

/* ---- the table --------------------------------------------------------- */

struct row {
	const char *what;
	enum cfgid cfg;
	const char *ns;
	struct objdef obj;
	enum ns_gate_managed want;
	enum ns_gate_reason reason;
	int max_lookups; /* -1 = any */
	const char *why; /* substring of the explanation, or NULL */
};

#define J(name, q)                                                             \
	{                                                                      \
		name, NS_GATE_KIND_JOB, "uid-" name, q, NULL, NULL, NULL, NULL \
	}
#define JS_(name, q)                                                           \
	{                                                                      \
		name, NS_GATE_KIND_JOBSET, "uid-" name, q, NULL, NULL, NULL,   \
		    NULL                                                       \
	}
#define CHILD(name, q, okind, oav, oname, ouid)                                \
	{                                                                      \
		name, NS_GATE_KIND_JOB, "uid-" name, q, oav, okind, oname,     \
		    ouid                                                       \
	}

static const struct row rows[] = {
    /* --- seed 001: Kueue #7649 ---------------------------------------- */
    {"seed: JobSet in test", SEED, "test", JS_("sleep", NULL), NS_GATE_NO,
	NS_GATE_R_NAMESPACE_NOT_SELECTED, 0,
	"namespace test does not match managedJobsNamespaceSelector"},
    {"seed: child Job of the JobSet in test", SEED, "test",
	CHILD("sleep-driver-0", NULL, "JobSet", JS, "js", "uid-js"), NS_GATE_NO,
	NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, "namespace test does not match"},
    {"seed: JobSet in default", SEED, "default", JS_("sleep", NULL),
	NS_GATE_YES, NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
    {"seed: child Jobs in default", SEED, "default",
	CHILD("js-workers-0", NULL, "JobSet", JS, "js", "uid-js"),
	NS_GATE_VIA_PARENT, NS_GATE_R_VIA_PARENT, 1,
	"never suspended or resumed directly"},
    {"seed: queued Job in test: namespace first", SEED, "test", J("q", "main"),
	NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, NULL},
    {"seed: Job in kube-system", SEED, "kube-system", J("k", NULL), NS_GATE_NO,
	NS_GATE_R_SYSTEM_NAMESPACE, 0, "system namespace"},
    {"seed: queued Job in kube-system", SEED, "kube-system", J("k", "main"),
	NS_GATE_NO, NS_GATE_R_SYSTEM_NAMESPACE, 0, NULL},
    {"kube-system even with no selector", NILSEL, "kube-system", J("k", "main"),
	NS_GATE_NO, NS_GATE_R_SYSTEM_NAMESPACE, 0, NULL},
    {"own namespace even with no selector", NILSEL, "kueue-system",
	J("k", "main"), NS_GATE_NO, NS_GATE_R_SYSTEM_NAMESPACE, 0, NULL},

    /* --- 1. framework --------------------------------------------------- */
    {"unsupported kind", SEED, "default",
	{"p", NS_GATE_KIND_OTHER, "u", "main", NULL, NULL, NULL, NULL},
	NS_GATE_NO, NS_GATE_R_KIND_UNSUPPORTED, 0, NULL},
    {"jobset framework disabled", NOJOBSET, "default", JS_("x", "main"),
	NS_GATE_NO, NS_GATE_R_FRAMEWORK_DISABLED, 0,
	"jobset.x-k8s.io/jobset is not enabled"},
    {"job framework disabled", NOJOB, "default", J("x", "main"), NS_GATE_NO,
	NS_GATE_R_FRAMEWORK_DISABLED, 0, "batch/job is not enabled"},
    {"framework before namespace", NOJOB, "gone", J("x", "main"), NS_GATE_NO,
	NS_GATE_R_FRAMEWORK_DISABLED, 0, NULL},

    /* --- 2. namespace ---------------------------------------------------- */
    {"namespace not in cache", SEED, "gone", J("x", "main"), NS_GATE_NO,
	NS_GATE_R_NAMESPACE_NOT_FOUND, 0, "namespace gone not found"},
    {"namespace not in cache, no selector", NILSEL, "gone", J("x", NULL),
	NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_FOUND, 0, NULL},
    {"opt-in: unlabelled namespace, queued", OPTIN, "default", J("x", "main"),
	NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, NULL},
    {"opt-in: labelled namespace", OPTIN, "team-a", J("x", NULL), NS_GATE_YES,
	NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
    {"opt-in: namespace without any labels", OPTIN, "nolabel", J("x", "main"),
	NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, NULL},
    {"metadata.name label supplied when missing", SEED, "nolabel", J("x", NULL),
	NS_GATE_YES, NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
    {"selector matching nothing", NOTHING, "default", J("x", "main"),
	NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, NULL},
    {"no selector: every namespace", NILSEL, "test", J("x", NULL), NS_GATE_YES,
	NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
    {"selector applies with manageJobsWithoutQueueName=false", QNAME, "test",
	J("x", "main"), NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED, 0, NULL},

    /* --- 3. owners ------------------------------------------------------- */
    {"child of a queued JobSet, mjwqn=false", QNAME, "default",
	CHILD("c", NULL, "JobSet", JS, "jsq", "uid-jsq"), NS_GATE_VIA_PARENT,
	NS_GATE_R_VIA_PARENT, 1, NULL},
    {"child of an unqueued JobSet, mjwqn=false", QNAME, "default",
	CHILD("c", NULL, "JobSet", JS, "js", "uid-js"), NS_GATE_NO,
	NS_GATE_R_OWNER_NOT_MANAGED, 1, "has no queue-name label"},
    {"queued child of an unqueued JobSet, mjwqn=false", QNAME, "default",
	CHILD("c", "main", "JobSet", JS, "js", "uid-js"), NS_GATE_NO,
	NS_GATE_R_OWNER_NOT_MANAGED, 1, NULL},
    {"child with jobset framework disabled", NOJOBSET, "default",
	CHILD("c", NULL, "JobSet", JS, "js", "uid-js"), NS_GATE_NO,
	NS_GATE_R_OWNER_FRAMEWORK_DISABLED, 1, "is not enabled"},
    {"queued child with jobset framework disabled", NOJOBSET, "default",
	CHILD("c", "main", "JobSet", JS, "jsq", "uid-jsq"), NS_GATE_NO,
	NS_GATE_R_OWNER_FRAMEWORK_DISABLED, 1, NULL},
    {"owner JobSet missing from the cache", SEED, "default",
	CHILD("c", "main", "JobSet", JS, "ghost", "uid-ghost"), NS_GATE_NO,
	NS_GATE_R_OWNER_NOT_FOUND, 1, "owner JobSet ghost not found"},
    {"owner uid mismatch", SEED, "default",
	CHILD("c", "main", "JobSet", JS, "js", "uid-old"), NS_GATE_NO,
	NS_GATE_R_OWNER_UID_MISMATCH, 1, "has uid uid-js, not uid-old"},
    {"owner reference without uid", SEED, "default",
	CHILD("c", NULL, "JobSet", JS, "js", NULL), NS_GATE_VIA_PARENT,
	NS_GATE_R_VIA_PARENT, 1, NULL},
    {"another JobSet API version", SEED, "default",
	CHILD("c", NULL, "JobSet", "jobset.x-k8s.io/v1", "js", "uid-js"),
	NS_GATE_VIA_PARENT, NS_GATE_R_VIA_PARENT, 1, NULL},
    {"owner of unknown kind: standalone (Kueue's rule)", QNAME, "default",
	CHILD("c", "main", "ReplicaSet", "apps/v1", "rs", "uid-rs"),
	NS_GATE_YES, NS_GATE_R_QUEUE_NAME, 0, NULL},
    {"owner of unknown kind, no queue, mjwqn", SEED, "default",
	CHILD("c", NULL, "CronJob", BATCH, "cron", "uid-cron"), NS_GATE_YES,
	NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
    {"owner of unknown kind, no queue, !mjwqn", QNAME, "default",
	CHILD("c", NULL, "CronJob", BATCH, "cron", "uid-cron"), NS_GATE_NO,
	NS_GATE_R_NO_QUEUE_NAME, 0, NULL},
    {"same kind name in another group is unknown", QNAME, "default",
	CHILD("c", "main", "JobSet", "example.com/v1", "js", "uid-js"),
	NS_GATE_YES, NS_GATE_R_QUEUE_NAME, 0, NULL},
    {"JobSet owned by a CronJob is top-level", QNAME, "default",
	CHILD("c", NULL, "JobSet", JS, "js-of-cron", "uid-joc"), NS_GATE_NO,
	NS_GATE_R_OWNER_NOT_MANAGED, 1, NULL},
    {"two levels: outermost queued Job decides", QNAME, "default",
	CHILD("c", NULL, "JobSet", JS, "mid", "uid-mid"), NS_GATE_VIA_PARENT,
	NS_GATE_R_VIA_PARENT, 2, "via its Job outer"},
    {"cyclic ownership", SEED, "default",
	CHILD("c", NULL, "JobSet", JS, "cyc-a", "uid-cyc-a"), NS_GATE_NO,
	NS_GATE_R_OWNER_CYCLE, -1, "cyclic"},
    {"chain deeper than the limit", SEED, "default",
	CHILD("c", NULL, "JobSet", JS, "deep-1", "uid-d1"), NS_GATE_NO,
	NS_GATE_R_OWNER_CHAIN_TOO_DEEP, NS_GATE_CHAIN_LIMIT, NULL},
    {"chain exactly at the limit", QNAME, "default",
	CHILD("c", NULL, "JobSet", JS, "ok-1", "uid-o1"), NS_GATE_VIA_PARENT,
	NS_GATE_R_VIA_PARENT, NS_GATE_CHAIN_LIMIT, NULL},

    /* --- 4./5. queue name, manageJobsWithoutQueueName --------------------- */
    {"queued Job, mjwqn=false", QNAME, "default", J("x", "main"), NS_GATE_YES,
	NS_GATE_R_QUEUE_NAME, 0, "queue-name main"},
    {"unqueued Job, mjwqn=false", QNAME, "default", J("x", NULL), NS_GATE_NO,
	NS_GATE_R_NO_QUEUE_NAME, 0, NULL},
    {"empty queue-name is none", QNAME, "default", J("x", ""), NS_GATE_NO,
	NS_GATE_R_NO_QUEUE_NAME, 0, NULL},
    {"queued JobSet, mjwqn=false", QNAME, "default", JS_("x", "main"),
	NS_GATE_YES, NS_GATE_R_QUEUE_NAME, 0, NULL},
    {"unqueued Job, mjwqn", SEED, "default", J("x", NULL), NS_GATE_YES,
	NS_GATE_R_WITHOUT_QUEUE_NAME, 0, NULL},
};

Test(gate, table)
{
	for (size_t i = 0; i < LEN(rows); i++) {
		const struct row *r = &rows[i];
		struct ns_gate_object obj;
		struct ns_gate_namespace ns;
		struct ns_gate_decision d;
		cu_error err;

		cu_error_clear(&err);
		objdef_to_gate(&r->obj, &obj);
		ns_of(r->ns, &ns);
		lookups = 0;
		int rc = ns_gate_decide(
		    &cfgs[r->cfg], &obj, &ns, world_lookup, NULL, &d, &err);
		cr_assert_eq(rc, CU_OK, "%s: rc %d: %s", r->what, rc, err.msg);
		cr_assert_eq(d.managed, r->want, "%s: managed %s, want %s (%s)",
		    r->what, ns_gate_managed_name(d.managed),
		    ns_gate_managed_name(r->want), d.why);
		cr_assert_eq(d.reason, r->reason, "%s: reason %s, want %s (%s)",
		    r->what, ns_gate_reason_name(d.reason),
		    ns_gate_reason_name(r->reason), d.why);
		if (r->max_lookups >= 0)
			cr_assert_eq(lookups, r->max_lookups,
			    "%s: %d lookups, want %d", r->what, lookups,
			    r->max_lookups);
		if (r->why != NULL)
			cr_assert(strstr(d.why, r->why) != NULL,
			    "%s: why \"%s\" lacks \"%s\"", r->what, d.why,
			    r->why);
		cr_assert(d.why[0] != '\0' && strchr(d.why, '\n') == NULL,
		    "%s: explanation must be one line", r->what);
		if (d.managed == NS_GATE_YES &&
		    d.reason == NS_GATE_R_QUEUE_NAME)
			cr_assert_eq(d.queue_name, obj.queue_name);
		else
			cr_assert_null(d.queue_name, "%s", r->what);
	}
}

Test(gate, via_parent_reports_the_managing_ancestor)
{
	struct objdef c = CHILD("c", NULL, "JobSet", JS, "mid", "uid-mid");
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;

	objdef_to_gate(&c, &obj);
	ns_of("default", &ns);
	cr_assert_eq(ns_gate_decide(
			 &cfgs[QNAME], &obj, &ns, world_lookup, NULL, &d, NULL),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_VIA_PARENT);
	cr_assert_eq(d.top_kind, NS_GATE_KIND_JOB);
	cr_assert_eq(d.depth, 2);
}

Test(gate, lookup_error_is_returned_and_not_managed)
{
	struct objdef c = CHILD("c", "main", "JobSet", JS, "broken-cache", "u");
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	cu_error err;

	objdef_to_gate(&c, &obj);
	ns_of("default", &ns);
	cr_assert_eq(ns_gate_decide(
			 &cfgs[SEED], &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_EAGAIN);
	cr_assert_str_eq(err.msg, "cache not synced");
	cr_assert_eq(d.managed, NS_GATE_NO);
	cr_assert_eq(d.reason, NS_GATE_R_LOOKUP_FAILED);
}

Test(gate, null_lookup_means_owner_not_found)
{
	struct objdef c = CHILD("c", NULL, "JobSet", JS, "js", "uid-js");
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;

	objdef_to_gate(&c, &obj);
	ns_of("default", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfgs[SEED], &obj, &ns, NULL, NULL, &d, NULL),
	    CU_OK);
	cr_assert_eq(d.reason, NS_GATE_R_OWNER_NOT_FOUND);
}

Test(gate, null_arguments)
{
	struct ns_gate_decision d;
	struct ns_gate_object obj = {.kind = NS_GATE_KIND_JOB};
	struct ns_gate_namespace ns = {.name = "default", .found = true};
	cu_error err;

	cr_assert_eq(
	    ns_gate_decide(NULL, &obj, &ns, NULL, NULL, &d, &err), CU_EINVAL);
	cr_assert_eq(d.managed, NS_GATE_NO);
	cr_assert_eq(
	    ns_gate_decide(&cfgs[SEED], &obj, &ns, NULL, NULL, NULL, &err),
	    CU_EINVAL);
	ns.name = NULL;
	cr_assert_eq(
	    ns_gate_decide(&cfgs[SEED], &obj, &ns, NULL, NULL, &d, &err),
	    CU_EINVAL);
}

Test(gate, names)
{
	cr_assert_str_eq(ns_gate_reason_name(NS_GATE_R_NAMESPACE_NOT_SELECTED),
	    "NamespaceNotSelected");
	cr_assert_str_eq(ns_gate_reason_name(NS_GATE_R_OWNER_CHAIN_TOO_DEEP),
	    "JobNestingTooDeep");
	cr_assert_str_eq(ns_gate_reason_name(NS_GATE_R_COUNT), "unknown");
	cr_assert_str_eq(
	    ns_gate_managed_name(NS_GATE_VIA_PARENT), "VIA_PARENT");
	cr_assert_eq(ns_gate_kind_of("batch/v1", "Job"), NS_GATE_KIND_JOB);
	cr_assert_eq(ns_gate_kind_of("batch/v2", "Job"), NS_GATE_KIND_JOB);
	cr_assert_eq(ns_gate_kind_of("jobset.x-k8s.io/v1alpha2", "JobSet"),
	    NS_GATE_KIND_JOBSET);
	cr_assert_eq(ns_gate_kind_of("batch", "Job"), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of("batchx/v1", "Job"), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of("v1", "Job"), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of(NULL, NULL), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of("batch/v1", "job"), NS_GATE_KIND_OTHER);
}

/* The Kubeflow kinds: known (so their children are never managed alone),
 * each behind its own framework switch, named for the webhook. */
Test(gate, kubeflow_kinds)
{
	struct ns_gate_config cfg = cfgs[SEED];
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	const char *group = NULL, *kind = NULL;
	bool rp = false;
	cu_error err;

	cr_assert_eq(ns_gate_kind_of("kubeflow.org/v1", "PyTorchJob"),
	    NS_GATE_KIND_PYTORCHJOB);
	cr_assert_eq(ns_gate_kind_of("kubeflow.org/v2beta1", "MPIJob"),
	    NS_GATE_KIND_MPIJOB);
	cr_assert_eq(
	    ns_gate_kind_of("kubeflow.org/v1", "Job"), NS_GATE_KIND_OTHER);
	cr_assert_eq(
	    ns_gate_kind_of("other.org/v1", "TFJob"), NS_GATE_KIND_OTHER);
	cr_assert(ns_gate_kind_names(NS_GATE_KIND_JAXJOB, &group, &kind, &rp));
	cr_assert_str_eq(group, "kubeflow.org");
	cr_assert_str_eq(kind, "JAXJob");
	cr_assert(rp);
	cr_assert(ns_gate_kind_names(NS_GATE_KIND_JOBSET, NULL, &kind, &rp));
	cr_assert_str_eq(kind, "JobSet");
	cr_assert(!rp);
	cr_assert(!ns_gate_kind_names(NS_GATE_KIND_OTHER, NULL, NULL, NULL));

	memset(&obj, 0, sizeof(obj));
	obj.kind = NS_GATE_KIND_PYTORCHJOB;
	obj.name = "pt";
	obj.queue_name = "main";
	ns_of("default", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_NO);
	cr_assert_eq(d.reason, NS_GATE_R_FRAMEWORK_DISABLED);
	cr_assert(
	    strstr(d.why, "kubeflow.org/pytorchjob") != NULL, "%s", d.why);
	cfg.enabled[NS_GATE_KIND_PYTORCHJOB] = true;
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_YES);
	/* the seed's excluded namespace: not ours, before any lookup */
	ns_of("test", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_NO);
}

/* The core v1 Pod (framework "pod"): its own kind in the core group only,
 * not a runPolicy kind; a Pod owned by a Job is the Job's (never managed
 * alone), one in an excluded namespace is never ours. */
Test(gate, pod_kind)
{
	struct ns_gate_config cfg = cfgs[SEED];
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	const char *group = NULL, *kind = NULL;
	bool rp = true;
	cu_error err;

	cr_assert_eq(ns_gate_kind_of("v1", "Pod"), NS_GATE_KIND_POD);
	cr_assert_eq(ns_gate_kind_of("apps/v1", "Pod"), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of("", "Pod"), NS_GATE_KIND_OTHER);
	cr_assert_eq(ns_gate_kind_of("v1", "Namespace"), NS_GATE_KIND_OTHER);
	cr_assert(ns_gate_kind_names(NS_GATE_KIND_POD, &group, &kind, &rp));
	cr_assert_str_eq(group, "");
	cr_assert_str_eq(kind, "Pod");
	cr_assert(!rp);

	memset(&obj, 0, sizeof(obj));
	obj.kind = NS_GATE_KIND_POD;
	obj.name = "p";
	obj.queue_name = "main";
	ns_of("default", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.reason, NS_GATE_R_FRAMEWORK_DISABLED);
	cr_assert(strstr(d.why, "framework pod ") != NULL, "%s", d.why);
	cfg.enabled[NS_GATE_KIND_POD] = true;
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_YES);
	/* a ReplicaSet (a Deployment's) owner ends the walk: standalone */
	obj.has_owner = true;
	obj.owner.api_version = "apps/v1";
	obj.owner.kind = "ReplicaSet";
	obj.owner.name = "web-abc";
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_YES);
	/* the seed's excluded namespace: not ours, before any lookup */
	ns_of("test", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_NO);
	cr_assert_eq(d.reason, NS_GATE_R_NAMESPACE_NOT_SELECTED);
}

/* ---- input helpers: decoded objects and AdmissionReview JSON ----------- */

static json_t *load(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	cr_assert_not_null(j, "%s", jerr.text);
	return j;
}

static const char seed_child_json[] =
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
    "\"metadata\":{\"name\":\"sleep-job-x5ffx-driver-0\","
    "\"namespace\":\"test\",\"uid\":\"u1\","
    "\"labels\":{\"jobset.sigs.k8s.io/jobset-name\":\"sleep-job-x5ffx\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\","
    "\"name\":\"o\",\"uid\":\"uo\"},"
    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
    "\"name\":\"js\",\"uid\":\"uid-js\",\"controller\":true,"
    "\"blockOwnerDeletion\":true}]},"
    "\"spec\":{\"suspend\":false,\"template\":{\"spec\":{"
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],"
    "\"restartPolicy\":\"Never\"}}}}";

Test(gate, from_json_admission_object)
{
	json_t *j = load(seed_child_json);
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	cu_error err;

	cr_assert_eq(
	    ns_gate_object_from_json(&obj, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(obj.kind, NS_GATE_KIND_JOB);
	cr_assert_str_eq(obj.name, "sleep-job-x5ffx-driver-0");
	cr_assert_str_eq(obj.uid, "u1");
	cr_assert_null(obj.queue_name);
	cr_assert(obj.has_owner);
	cr_assert_str_eq(obj.owner.kind, "JobSet");
	cr_assert_str_eq(obj.owner.uid, "uid-js");

	ns_of("test", &ns);
	cr_assert_eq(ns_gate_decide(
			 &cfgs[SEED], &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_NO);
	cr_assert_eq(lookups, 0);
	ns_of("default", &ns);
	cr_assert_eq(ns_gate_decide(
			 &cfgs[SEED], &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.managed, NS_GATE_VIA_PARENT);
	json_decref(j);
}

Test(gate, from_json_minimal_and_queue_label)
{
	json_t *j = load("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\","
			 "\"kind\":\"JobSet\",\"metadata\":{\"labels\":{"
			 "\"kueue.x-k8s.io/queue-name\":\"main\"},"
			 "\"ownerReferences\":null}}");
	struct ns_gate_object obj;

	cr_assert_eq(ns_gate_object_from_json(&obj, j, NULL), CU_OK);
	cr_assert_eq(obj.kind, NS_GATE_KIND_JOBSET);
	cr_assert_str_eq(obj.queue_name, "main");
	cr_assert_null(obj.name);
	cr_assert(!obj.has_owner);
	json_decref(j);

	j = load("{\"kind\":\"Pod\"}");
	cr_assert_eq(ns_gate_object_from_json(&obj, j, NULL), CU_OK);
	cr_assert_eq(obj.kind, NS_GATE_KIND_OTHER);
	json_decref(j);
}

Test(gate, from_json_type_errors)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
	    {"[]", "object: expected an object"},
	    {"{\"kind\":3}", "kind: expected a string"},
	    {"{\"metadata\":[]}", "metadata: expected an object"},
	    {"{\"metadata\":{\"name\":1}}", "metadata.name: expected a string"},
	    {"{\"metadata\":{\"labels\":[]}}",
		"metadata.labels: expected an object"},
	    {"{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":1}}}",
		"metadata.labels[kueue.x-k8s.io/queue-name]: expected a "
		"string"},
	    {"{\"metadata\":{\"ownerReferences\":{}}}",
		"metadata.ownerReferences: expected an array"},
	    {"{\"metadata\":{\"ownerReferences\":[1]}}",
		"metadata.ownerReferences[0]: expected an object"},
	    {"{\"metadata\":{\"ownerReferences\":[{\"controller\":\"y\"}]}}",
		"metadata.ownerReferences[0].controller: expected a boolean"},
	    {"{\"metadata\":{\"ownerReferences\":[{\"controller\":true,"
	     "\"kind\":[]}]}}",
		"metadata.ownerReferences[0]: expected a string"},
	};
	for (size_t i = 0; i < LEN(cases); i++) {
		json_t *j = load(cases[i].json);
		struct ns_gate_object obj;
		cu_error err;

		cu_error_clear(&err);
		cr_assert_eq(ns_gate_object_from_json(&obj, j, &err), CU_EPARSE,
		    "%s", cases[i].json);
		cr_assert_str_eq(err.msg, cases[i].msg, "%s", cases[i].json);
		cr_assert(!obj.has_owner && obj.kind == NS_GATE_KIND_OTHER);
		json_decref(j);
	}
	cr_assert_eq(
	    ns_gate_object_from_json(&(struct ns_gate_object){0}, NULL, NULL),
	    CU_EPARSE);
}

Test(gate, from_decoded_job_and_namespace)
{
	json_t *j = load(seed_child_json);
	json_t *nsj = load("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			   "\"metadata\":{\"name\":\"test\",\"labels\":{"
			   "\"kubernetes.io/metadata.name\":\"test\"}}}");
	struct api_job job;
	struct api_namespace apins;
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	cu_error err;

	cr_assert_eq(api_job_decode(&job, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    api_namespace_decode(&apins, nsj, &err), CU_OK, "%s", err.msg);
	ns_gate_object_from_meta(&obj, NS_GATE_KIND_JOB, &job.meta);
	cr_assert(obj.has_owner);
	cr_assert_str_eq(obj.owner.name, "js");
	cr_assert_str_eq(obj.name, "sleep-job-x5ffx-driver-0");

	ns_gate_namespace_from_api(&ns, NULL, &apins);
	cr_assert_str_eq(ns.name, "test");
	cr_assert(ns.found);
	cr_assert_eq(ns_gate_decide(
			 &cfgs[SEED], &obj, &ns, world_lookup, NULL, &d, &err),
	    CU_OK);
	cr_assert_eq(d.reason, NS_GATE_R_NAMESPACE_NOT_SELECTED);

	ns_gate_namespace_from_api(&ns, "elsewhere", NULL);
	cr_assert(!ns.found);
	cr_assert_str_eq(ns.name, "elsewhere");

	ns_gate_object_from_meta(&obj, NS_GATE_KIND_JOBSET, NULL);
	cr_assert_eq(obj.kind, NS_GATE_KIND_JOBSET);
	cr_assert(!obj.has_owner);

	api_job_dispose(&job);
	api_namespace_dispose(&apins);
	json_decref(j);
	json_decref(nsj);
}

/*
 * Seed 001 end to end at the gate: a JobSet in `test` with two child Jobs,
 * reconciled 15,000 times by a naive loop that writes only what the gate
 * allows. Not one write may reach the excluded namespace; in `default`
 * the children are never written either (VIA_PARENT).
 */
Test(gate, seed_001_write_count)
{
	static const char *const spaces[] = {"test", "default"};
	int writes[2] = {0, 0};

	for (int s = 0; s < 2; s++) {
		struct ns_gate_namespace ns;
		ns_of(spaces[s], &ns);
		for (int iter = 0; iter < 15000; iter++) {
			struct objdef children[] = {
			    CHILD("sleep-driver-0", NULL, "JobSet", JS, "js",
				"uid-js"),
			    CHILD("sleep-workers-0", NULL, "JobSet", JS, "js",
				"uid-js"),
			};
			for (size_t c = 0; c < LEN(children); c++) {
				struct ns_gate_object obj;
				struct ns_gate_decision d;
				objdef_to_gate(&children[c], &obj);
				cr_assert_eq(
				    ns_gate_decide(&cfgs[SEED], &obj, &ns,
					world_lookup, NULL, &d, NULL),
				    CU_OK);
				if (d.managed == NS_GATE_YES)
					writes[s]++;
			}
		}
	}
	cr_assert_eq(writes[0], 0);
	cr_assert_eq(writes[1], 0);
}

/* A managed RayJob "rj" in namespace default, for ray_kinds. */
static int ray_lookup(const struct ns_gate_owner *ref, const char *nsname,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	(void)nsname;
	(void)payload;
	(void)err;
	if (strcmp(ref->name, "rj") != 0)
		return CU_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->kind = NS_GATE_KIND_RAYJOB;
	out->name = "rj";
	out->uid = "rj-uid";
	out->queue_name = "main";
	return CU_OK;
}

/* The Ray kinds: known, suspended through spec.suspend, and a RayCluster
 * a managed RayJob controls is managed through its parent, never alone;
 * with the RayJob framework off the RayCluster is its own. */
Test(gate, ray_kinds)
{
	struct ns_gate_config cfg = cfgs[SEED];
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	const char *group = NULL, *kind = NULL;
	bool rp = true;
	cu_error err;

	cr_assert_eq(
	    ns_gate_kind_of("ray.io/v1", "RayJob"), NS_GATE_KIND_RAYJOB);
	cr_assert_eq(ns_gate_kind_of("ray.io/v1", "RayCluster"),
	    NS_GATE_KIND_RAYCLUSTER);
	cr_assert_eq(ns_gate_kind_of("ray.io/v1", "Job"), NS_GATE_KIND_OTHER);
	cr_assert(
	    ns_gate_kind_names(NS_GATE_KIND_RAYCLUSTER, &group, &kind, &rp));
	cr_assert_str_eq(group, "ray.io");
	cr_assert_str_eq(kind, "RayCluster");
	cr_assert(!rp);

	memset(&obj, 0, sizeof(obj));
	obj.kind = NS_GATE_KIND_RAYCLUSTER;
	obj.name = "rj-abcde";
	obj.queue_name = "main";
	obj.has_owner = true;
	obj.owner.api_version = "ray.io/v1";
	obj.owner.kind = "RayJob";
	obj.owner.name = "rj";
	obj.owner.uid = "rj-uid";
	ns_of("default", &ns);
	cfg.enabled[NS_GATE_KIND_RAYJOB] = true;
	cfg.enabled[NS_GATE_KIND_RAYCLUSTER] = true;
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, ray_lookup, NULL, &d, &err), CU_OK);
	cr_assert_eq(d.managed, NS_GATE_VIA_PARENT, "%s", d.why);
	cr_assert_eq(d.top_kind, NS_GATE_KIND_RAYJOB);
	cfg.enabled[NS_GATE_KIND_RAYJOB] = false;
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, ray_lookup, NULL, &d, &err), CU_OK);
	cr_assert_neq(d.managed, NS_GATE_VIA_PARENT, "%s", d.why);
}

/* AppWrapper: known, spec.suspend, behind its own switch. */
Test(gate, appwrapper_kind)
{
	const char *group = NULL, *kind = NULL;
	bool rp = true;

	cr_assert_eq(
	    ns_gate_kind_of("workload.codeflare.dev/v1beta2", "AppWrapper"),
	    NS_GATE_KIND_APPWRAPPER);
	cr_assert_eq(ns_gate_kind_of("other.dev/v1beta2", "AppWrapper"),
	    NS_GATE_KIND_OTHER);
	cr_assert(
	    ns_gate_kind_names(NS_GATE_KIND_APPWRAPPER, &group, &kind, &rp));
	cr_assert_str_eq(group, "workload.codeflare.dev");
	cr_assert_str_eq(kind, "AppWrapper");
	cr_assert(!rp);
}

/* RayService and SparkApplication: known kinds; RayService suspends
 * through spec.rayClusterConfig, SparkApplication through spec.suspend,
 * the Kubeflow jobs through spec.runPolicy. */
Test(gate, rayservice_and_spark_kinds)
{
	cr_assert_eq(ns_gate_kind_of("ray.io/v1", "RayService"),
	    NS_GATE_KIND_RAYSERVICE);
	cr_assert_eq(
	    ns_gate_kind_of("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
	    NS_GATE_KIND_SPARKAPP);
	cr_assert_str_eq(ns_gate_kind_suspend_under(NS_GATE_KIND_RAYSERVICE),
	    "rayClusterConfig");
	cr_assert_null(ns_gate_kind_suspend_under(NS_GATE_KIND_SPARKAPP));
	cr_assert_null(ns_gate_kind_suspend_under(NS_GATE_KIND_JOB));
	cr_assert_str_eq(
	    ns_gate_kind_suspend_under(NS_GATE_KIND_TFJOB), "runPolicy");
}

/* externalFrameworks: a Job whose controller owner is of an external
 * kind is managed via it (never alone), whatever its own label says;
 * the namespace gate still comes first; other owners are not. */
Test(gate, external_framework_owner)
{
	static const char *const ext[] = {"Foo.v1.example.com"};
	struct ns_gate_config cfg = cfgs[SEED];
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	cu_error err;

	cfg.external = ext;
	cfg.n_external = 1;
	memset(&obj, 0, sizeof(obj));
	obj.kind = NS_GATE_KIND_JOB;
	obj.name = "child";
	obj.queue_name = "main";
	obj.has_owner = true;
	obj.owner.api_version = "example.com/v1";
	obj.owner.kind = "Foo";
	obj.owner.name = "foo";
	obj.owner.uid = "foo-uid";
	ns_of("default", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, NULL, NULL, &d, &err), CU_OK);
	cr_assert_eq(d.managed, NS_GATE_VIA_PARENT, "%s", d.why);
	cr_assert(strstr(d.why, "external framework") != NULL, "%s", d.why);
	obj.owner.api_version = "example.com/v2";
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, NULL, NULL, &d, &err), CU_OK);
	cr_assert_eq(d.managed, NS_GATE_YES, "%s", d.why);
	obj.owner.api_version = "example.com/v1";
	ns_of("test", &ns);
	cr_assert_eq(
	    ns_gate_decide(&cfg, &obj, &ns, NULL, NULL, &d, &err), CU_OK);
	cr_assert_eq(d.managed, NS_GATE_NO, "%s", d.why);
}
