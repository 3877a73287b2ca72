/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/serving.c - the serving frameworks' webhooks (docs/frameworks.md
 * section 5): StatefulSet (framework statefulset) and LeaderWorkerSet
 * (leaderworkerset.x-k8s.io/leaderworkerset). Neither object is ever
 * suspended: their Pods are queued as pod groups. The mutating webhook of
 * a managed object (the gate decides on it as on its Pods, the namespace
 * first) writes into its pod templates what makes its Pods one group:
 * the queue-name (and priority-class) label, the
 * kueue.x-k8s.io/pod-suspending-parent annotation, the group's total
 * count, the role-hash naming the Pod's pod set (main; leader, worker)
 * and, for a StatefulSet, fast admission (its Pods come one by one).
 * The Pods get their group's name from the pod webhook
 * (wh__pod_serving): a StatefulSet's, Kueue's Workload name for it
 * (statefulset-<name>-<hash of name and uid>, the uid read from the
 * Pod's controller reference: the StatefulSet's own admission comes
 * before its uid exists); a LeaderWorkerSet's, Kueue's Workload name of
 * its group index (with the set's uid, from the Pod's controller
 * reference or the controller's cache: wh_options.lws_uid). The
 * validating webhook keeps the queue name fixed and, as Kueue, keeps a
 * managed StatefulSet's pod spec shape (spec_shape) and lets a managed
 * StatefulSet scale only to and from zero; a managed LeaderWorkerSet keeps
 * its templates' shapes and size and may not
 * use the LeaderReady startup policy.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/patch.h"

#define K "kueue.x-k8s.io/"
#define GROUP_LABEL K "pod-group-name"
#define GROUP_TOTAL K "pod-group-total-count"
#define GROUP_FAST K "pod-group-fast-admission"
#define ROLE K "role-hash"
#define LWS_NAME "leaderworkerset.sigs.k8s.io/name"
#define LWS_GROUP "leaderworkerset.sigs.k8s.io/group-index"
#define LWS_FRAMEWORK "leaderworkerset.x-k8s.io/leaderworkerset"
#define QUEUE_PATH "metadata.labels[" NS_GATE_LABEL_QUEUE_NAME "]"

static bool is(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool is_sts(const struct wh_request *req)
{
	return is(req->kind.group, "apps") && is(req->kind.kind, "StatefulSet");
}

static const char *label_of(const json_t *obj, const char *key)
{
	return api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"), key);
}

static json_int_t int_at(const json_t *o, const char *a, const char *b,
    const char *c, json_int_t dflt)
{
	const json_t *v = json_object_get(o, a);

	if (b != NULL)
		v = json_object_get(v, b);
	if (c != NULL)
		v = json_object_get(v, c);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Merge labels and annotations [both borrowed] into the metadata of the
 * pod template tpl [borrowed] at JSON pointer `at`, as one "add" of the
 * whole metadata (nothing when it already has them). */
static int template_meta(struct wh_ctx *c, const char *at, const json_t *tpl,
    const json_t *labels, const json_t *annots, cu_error *err)
{
	const json_t *md = json_object_get(tpl, "metadata");
	json_t *nm = json_is_object(md) ? json_deep_copy(md) : json_object();
	json_t *l, *a;
	char *path;
	int rc;

	if (nm == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook patch: template");
	l = api_json_obj_child(nm, "labels");
	a = api_json_obj_child(nm, "annotations");
	if (l == NULL || a == NULL ||
	    json_object_update(l, (json_t *)labels) != 0 ||
	    json_object_update(a, (json_t *)annots) != 0) {
		json_decref(nm);
		return cu_error_set(err, CU_ENOMEM, "webhook patch: template");
	}
	if (json_object_size(a) == 0)
		json_object_del(nm, "annotations");
	if (json_is_object(md) && json_equal(nm, md)) {
		json_decref(nm);
		return CU_OK;
	}
	path = cu_asprintf("%s/metadata", at);
	if (path == NULL) {
		json_decref(nm);
		return cu_error_set(err, CU_ENOMEM, "webhook patch: template");
	}
	rc = wh__patch_add(c->out, "add", path, nm, err);
	cu_free(path);
	return rc;
}

/* The labels every managed template gets [owned], or NULL. */
static json_t *queue_labels(const json_t *obj, const char *queue)
{
	const char *prio = label_of(obj, API_LABEL_PRIORITY_CLASS);

	return json_pack("{s:s, s:s*}", NS_GATE_LABEL_QUEUE_NAME, queue,
	    API_LABEL_PRIORITY_CLASS, prio);
}

static int mutate_sts(
    struct wh_ctx *c, const json_t *obj, const char *queue, cu_error *err)
{
	const json_t *tpl =
	    json_object_get(json_object_get(obj, "spec"), "template");
	char total[32];
	json_t *labels, *annots;
	int rc;

	if (!json_is_object(tpl))
		return cu_error_set(err, CU_EPARSE,
		    "spec.template: Invalid type: expected object");
	snprintf(total, sizeof(total), "%lld",
	    (long long)int_at(obj, "spec", "replicas", NULL, 1));
	labels = queue_labels(obj, queue);
	annots = json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    K "pod-suspending-parent", "statefulset", GROUP_TOTAL, total,
	    GROUP_FAST, "true", K "pod-group-serving", "true", ROLE, "main");
	rc = labels == NULL || annots == NULL
		 ? cu_error_set(err, CU_ENOMEM, "webhook patch: template")
		 : template_meta(c, "/spec/template", tpl, labels, annots, err);
	json_decref(labels);
	json_decref(annots);
	return rc;
}

static int mutate_lws(
    struct wh_ctx *c, const json_t *obj, const char *queue, cu_error *err)
{
	const json_t *lwt = json_object_get(
	    json_object_get(obj, "spec"), "leaderWorkerTemplate");
	const json_t *leader = json_object_get(lwt, "leaderTemplate");
	const json_t *worker = json_object_get(lwt, "workerTemplate");
	const bool has_leader = json_is_object(leader);
	char total[32];
	json_t *labels = queue_labels(obj, queue), *annots;
	int rc = CU_OK;

	if (!json_is_object(worker)) {
		json_decref(labels);
		return cu_error_set(err, CU_EPARSE,
		    "spec.leaderWorkerTemplate.workerTemplate: Required value");
	}
	snprintf(total, sizeof(total), "%lld",
	    (long long)int_at(lwt, "size", NULL, NULL, 1));
	annots = json_pack("{s:s, s:s, s:s}", K "pod-suspending-parent",
	    LWS_FRAMEWORK, GROUP_TOTAL, total, K "pod-group-serving", "true");
	if (labels == NULL || annots == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "webhook patch: template");
	if (rc == CU_OK && has_leader) {
		json_object_set_new(annots, ROLE, json_string("leader"));
		rc = template_meta(c,
		    "/spec/leaderWorkerTemplate/leaderTemplate", leader, labels,
		    annots, err);
	}
	if (rc == CU_OK) {
		json_object_set_new(
		    annots, ROLE, json_string(has_leader ? "worker" : "main"));
		rc = template_meta(c,
		    "/spec/leaderWorkerTemplate/workerTemplate", worker, labels,
		    annots, err);
	}
	json_decref(labels);
	json_decref(annots);
	return rc;
}

/* The gate on obj [borrowed] as on its Pods: *queue the queue name of a
 * managed object [borrowed from obj], NULL when not managed. */
static int managed(
    struct wh_ctx *c, const json_t *obj, const char **queue, cu_error *err)
{
	struct ns_gate_object gobj;
	struct ns_gate_decision d;
	int rc;

	*queue = NULL;
	if (obj == NULL)
		return CU_OK;
	if ((rc = wh__gate_as(c, obj, NS_GATE_KIND_POD, &gobj, &d, err)) !=
	    CU_OK)
		return rc;
	if (d.managed == NS_GATE_YES && gobj.queue_name != NULL &&
	    gobj.queue_name[0] != '\0')
		*queue = gobj.queue_name;
	return CU_OK;
}

/* Scaled up from zero: the Workload of the previous scale-down must be
 * gone or on hold (Kueue keeps it on hold and clears the hold). */
static int sts_workload_settled(
    struct wh_ctx *c, const json_t *old, cu_error *err)
{
	const json_t *md = json_object_get(old, "metadata");
	const char *name = api_json_str(md, "name");
	const char *uid = api_json_str(md, "uid");
	struct wh_workload_state st;
	char *wl = NULL;
	int rc;

	if (c->opt->workload_named == NULL || name == NULL)
		return CU_OK;
	if (api_workload_name("StatefulSet", "apps", name, uid ? uid : "", -1,
		API_WORKLOAD_NAME_MAX, &wl, err) != CU_OK)
		return err->code;
	rc = c->opt->workload_named(
	    c->req->namespace_, wl, &st, c->opt->payload, err);
	cu_free(wl);
	if (rc == CU_ENOTFOUND)
		return CU_OK;
	if (rc != CU_OK)
		return rc;
	return st.on_hold ? CU_OK
			  : cu_error_set(err, CU_EDENIED,
				"spec.replicas: Forbidden: workload from "
				"previous scale-down is still being deleted");
}

/* ---- Kueue's pod spec shape: immutable while managed ------------------ */

/* Absent, null, an empty object or an empty array: Kueue's semantic
 * equality holds nil and empty equal. */
static bool empty(const json_t *v)
{
	return v == NULL || json_is_null(v) ||
	       (json_is_object(v) && json_object_size(v) == 0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

static bool same(const json_t *a, const json_t *b)
{
	return (empty(a) && empty(b)) ||
	       (a != NULL && b != NULL && json_equal((json_t *)a, (json_t *)b));
}

/* The errors found, joined as Kueue's aggregate ("[a, b]" for more
 * than one). */
struct errs {
	char msg[2048];
	size_t len;
	int n;
};

/* One "<path>: Invalid value: <new>: field is immutable" into b. */
static void immutable(struct errs *b, const char *path, const json_t *nv)
{
	char *v = nv != NULL ? json_dumps(nv, JSON_COMPACT | JSON_SORT_KEYS |
						  JSON_ENCODE_ANY)
			     : NULL;
	int w = snprintf(b->msg + b->len, sizeof(b->msg) - b->len,
	    "%s%s: Invalid value: %s: field is immutable", b->n > 0 ? ", " : "",
	    path, v != NULL ? v : "null");

	if (w > 0)
		b->len = b->len + (size_t)w < sizeof(b->msg)
			     ? b->len + (size_t)w
			     : sizeof(b->msg) - 1;
	cu_free(v);
	b->n++;
}

static int errs_result(const struct errs *b, cu_error *err)
{
	if (b->n == 0)
		return CU_OK;
	return b->n == 1 ? cu_error_set(err, CU_EDENIED, "%s", b->msg)
			 : cu_error_set(err, CU_EDENIED, "[%s]", b->msg);
}

/* Kueue's ContainersShape compared: per container its resource requests
 * and ports (a different count: the whole list). */
static void containers_shape(
    struct errs *b, const char *path, const json_t *nl, const json_t *ol)
{
	char p[640];
	size_t i;

	if (json_array_size(nl) != json_array_size(ol)) {
		snprintf(p, sizeof(p), "%s", path);
		immutable(b, p, nl);
		return;
	}
	for (i = 0; i < json_array_size(nl); i++) {
		const json_t *n = json_array_get(nl, i),
			     *o = json_array_get(ol, i);
		const json_t *nr = json_object_get(
				 json_object_get(n, "resources"), "requests"),
			     *orq = json_object_get(
				 json_object_get(o, "resources"), "requests");

		if (!same(nr, orq)) {
			snprintf(p, sizeof(p), "%s[%zu].resources.requests",
			    path, i);
			immutable(b, p, nr);
		}
		if (!same(json_object_get(n, "ports"),
			json_object_get(o, "ports"))) {
			snprintf(p, sizeof(p), "%s[%zu].ports", path, i);
			immutable(b, p, json_object_get(n, "ports"));
		}
	}
}

/* Kueue's ValidateImmutablePodGroupPodSpec over pod specs ns and os
 * [borrowed] at path (e.g. "spec.template.spec"): errors appended to b. */
static void spec_shape(
    struct errs *b, const char *path, const json_t *ns, const json_t *os)
{
	static const char *const whole[] = {"nodeSelector", "affinity",
	    "tolerations", "runtimeClassName", "priority",
	    "topologySpreadConstraints", "overhead", "resourceClaims", NULL};
	static const char *const lists[] = {
	    "initContainers", "containers", NULL};
	char p[512];
	size_t i;

	for (i = 0; lists[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s.%s", path, lists[i]);
		containers_shape(b, p, json_object_get(ns, lists[i]),
		    json_object_get(os, lists[i]));
	}
	for (i = 0; whole[i] != NULL; i++) {
		const json_t *n = json_object_get(ns, whole[i]);

		if (same(n, json_object_get(os, whole[i])))
			continue;
		snprintf(p, sizeof(p), "%s.%s", path, whole[i]);
		immutable(b, p, n);
	}
	/* Pod-level requests count only when resources is set. */
	if (!same(json_object_get(json_object_get(ns, "resources"), "requests"),
		json_object_get(
		    json_object_get(os, "resources"), "requests"))) {
		snprintf(p, sizeof(p), "%s.resources", path);
		immutable(b, p,
		    json_object_get(
			json_object_get(ns, "resources"), "requests"));
	}
}

static int validate_sts(struct wh_ctx *c, const json_t *obj, const json_t *old,
    bool managed, cu_error *err)
{
	json_int_t nr = int_at(obj, "spec", "replicas", NULL, 1);
	json_int_t or = int_at(old, "spec", "replicas", NULL, 1);
	struct errs b = {.len = 0, .n = 0};

	/* Kueue: the pod spec's shape is immutable while managed. */
	if (managed)
		spec_shape(&b, "spec.template.spec",
		    json_object_get(
			json_object_get(
			    json_object_get(obj, "spec"), "template"),
			"spec"),
		    json_object_get(
			json_object_get(
			    json_object_get(old, "spec"), "template"),
			"spec"));
	if (b.n > 0)
		return errs_result(&b, err);

	if (nr != 0 && or != 0 && nr != or)
		return cu_error_set(err, CU_EDENIED,
		    "spec.replicas: Invalid value: %lld: field is immutable",
		    (long long)nr);
	if (or == 0 && nr > 0 && int_at(obj, "status", "replicas", NULL, 0) > 0)
		return cu_error_set(err, CU_EDENIED,
		    "spec.replicas: Forbidden: scaling down is still in "
		    "progress");
	if (or == 0 && nr > 0)
		return sts_workload_settled(c, old, err);
	return CU_OK;
}

/* Kueue: while managed, a LeaderWorkerSet's templates keep their pod
 * spec shape (a leader template added or removed: the whole template)
 * and its size is immutable (LWSImmutableGroupSize). */
static int validate_lws(const json_t *obj, const json_t *old, cu_error *err)
{
	const json_t *n = json_object_get(
			 json_object_get(obj, "spec"), "leaderWorkerTemplate"),
		     *o = json_object_get(
			 json_object_get(old, "spec"), "leaderWorkerTemplate");
	const json_t *nl = json_object_get(n, "leaderTemplate"),
		     *ol = json_object_get(o, "leaderTemplate");
	struct errs b = {.len = 0, .n = 0};
	json_int_t ns = int_at(n, "size", NULL, NULL, 1);

	if (empty(nl) != empty(ol))
		immutable(&b, "spec.leaderWorkerTemplate.leaderTemplate", nl);
	else if (!empty(nl))
		spec_shape(&b, "spec.leaderWorkerTemplate.leaderTemplate.spec",
		    json_object_get(nl, "spec"), json_object_get(ol, "spec"));
	spec_shape(&b, "spec.leaderWorkerTemplate.workerTemplate.spec",
	    json_object_get(json_object_get(n, "workerTemplate"), "spec"),
	    json_object_get(json_object_get(o, "workerTemplate"), "spec"));
	if (ns != int_at(o, "size", NULL, NULL, 1)) {
		json_t *jv = json_integer(ns);

		immutable(&b, "spec.leaderWorkerTemplate.size", jv);
		json_decref(jv);
	}
	return errs_result(&b, err);
}

static int validate(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	const json_t *old = c->req->old_object;
	const char *q = label_of(obj, NS_GATE_LABEL_QUEUE_NAME), *oq, *sp;
	const char *now = NULL, *before = NULL;
	char quoted[WH_QUOTE_MAX];
	int rc;

	if ((rc = managed(c, obj, &now, err)) != CU_OK ||
	    (rc = managed(c, old, &before, err)) != CU_OK)
		return rc;
	if (now == NULL && before == NULL)
		return CU_OK;
	if (q != NULL &&
	    (rc = wh__check_dns1123_subdomain(q, QUEUE_PATH, err)) != CU_OK)
		return rc;
	sp = api_json_str(json_object_get(obj, "spec"), "startupPolicy");
	if (!is_sts(c->req) && q != NULL && is(sp, "LeaderReady"))
		return cu_error_set(err, CU_EDENIED,
		    "spec.startupPolicy: Invalid value: \"LeaderReady\": only "
		    "the LeaderCreated startup policy is allowed when using "
		    "the " NS_GATE_LABEL_QUEUE_NAME " label or annotation");
	if (c->req->operation != WH_OP_UPDATE || old == NULL)
		return CU_OK;
	oq = label_of(old, NS_GATE_LABEL_QUEUE_NAME);
	if (!is(q ? q : "", oq ? oq : ""))
		return cu_error_set(err, CU_EDENIED,
		    QUEUE_PATH ": Invalid value: %s: field is immutable",
		    wh__quote(quoted, q ? q : ""));
	if (is_sts(c->req))
		return validate_sts(c, obj, old, now != NULL, err);
	return now != NULL ? validate_lws(obj, old, err) : CU_OK;
}

int wh__serving(struct wh_ctx *c, cu_error *err)
{
	const json_t *obj = c->req->object;
	const bool sts = is_sts(c->req);
	const char *queue = NULL;
	int rc;

	if (sts ? !c->opt->statefulset : !c->opt->leaderworkerset)
		return CU_OK;
	if (c->mode == WH_VALIDATE)
		return validate(c, obj, err);
	if ((rc = managed(c, obj, &queue, err)) != CU_OK || queue == NULL)
		return rc;
	return sts ? mutate_sts(c, obj, queue, err)
		   : mutate_lws(c, obj, queue, err);
}

bool wh__is_serving(const struct wh_request *req)
{
	return is_sts(req) ||
	       (is(req->kind.group, "leaderworkerset.x-k8s.io") &&
		   is(req->kind.kind, "LeaderWorkerSet"));
}

/* The controller ownerReference of the Pod whose metadata is md
 * [borrowed], if it is an apps/v1 StatefulSet, else NULL. */
static const json_t *sts_owner(const json_t *md)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(md, "ownerReferences"), i, r)
	{
		if (json_is_true(json_object_get(r, "controller")) &&
		    is(api_json_str(r, "kind"), "StatefulSet") &&
		    is(api_json_str(r, "apiVersion"), "apps/v1"))
			return r;
	}
	return NULL;
}

/* A StatefulSet's Pod's group: Kueue's Workload name for its owner,
 * uid included (the StatefulSet's own webhook cannot know the uid: it
 * is given after admission) [owned: cu_free], or NULL (err set). A Pod
 * without its owner's uid gets the name without it (Kueue's legacy
 * name). */
static char *sts_group(const json_t *md, cu_error *err)
{
	const json_t *r = sts_owner(md);
	const char *uid = r != NULL ? api_json_str(r, "uid") : NULL;
	char *out = NULL;

	if (r == NULL || api_json_str(r, "name") == NULL) {
		cu_error_set(err, CU_EPARSE,
		    "metadata.ownerReferences: Required value: the Pod's "
		    "StatefulSet");
		return NULL;
	}
	if (api_workload_name("StatefulSet", "apps", api_json_str(r, "name"),
		uid != NULL ? uid : "", -1, API_WORKLOAD_NAME_MAX, &out,
		err) != CU_OK)
		return NULL;
	return out;
}

/* A LeaderWorkerSet's Pod's group: Kueue's Workload name of its group
 * gi of the set `name`, "<name>-<gi>" hashed with the set's uid, read from
 * the Pod's controller reference when the set controls it, else from the
 * controller's cache (a Pod of one of its StatefulSets); a set not cached
 * yet gives the name without a uid [owned: cu_free], or NULL (err set). */
static char *lws_group(struct wh_ctx *c, const json_t *md, const char *name,
    const char *gi, cu_error *err)
{
	const json_t *r;
	const char *uid = NULL;
	char *owner, *out = NULL;
	size_t i;

	json_array_foreach(json_object_get(md, "ownerReferences"), i, r)
	{
		if (json_is_true(json_object_get(r, "controller")) &&
		    is(api_json_str(r, "kind"), "LeaderWorkerSet") &&
		    is(api_json_str(r, "name"), name))
			uid = api_json_str(r, "uid");
	}
	if (uid == NULL && c->opt->lws_uid != NULL)
		uid =
		    c->opt->lws_uid(c->req->namespace_, name, c->opt->payload);
	if ((owner = cu_asprintf("%s-%s", name, gi)) == NULL) {
		cu_error_set(err, CU_ENOMEM, "webhook patch: pod group");
		return NULL;
	}
	if (api_workload_name("LeaderWorkerSet", "leaderworkerset.x-k8s.io",
		owner, uid != NULL ? uid : "", -1, API_WORKLOAD_NAME_MAX, &out,
		err) != CU_OK)
		out = NULL;
	cu_free(owner);
	return out;
}

int wh__pod_serving(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *parent = api_json_str(
	    json_object_get(md, "annotations"), K "pod-suspending-parent");
	const char *name = label_of(obj, LWS_NAME);
	const char *gi = label_of(obj, LWS_GROUP);
	char *gname = NULL, *key, *path;
	int rc;

	if (label_of(obj, GROUP_LABEL) != NULL)
		return CU_OK;
	if (c->opt->statefulset && is(parent, "statefulset") &&
	    sts_owner(md) != NULL) {
		if ((gname = sts_group(md, err)) == NULL)
			return err->code;
	} else if (!c->opt->leaderworkerset ||
		   !(is(parent, LWS_FRAMEWORK) ||
		       is(parent, "leaderworkerset")) ||
		   name == NULL || gi == NULL) {
		return CU_OK;
	} else if ((gname = lws_group(c, md, name, gi, err)) == NULL) {
		return err->code;
	}
	key = api_json_pointer_escape(GROUP_LABEL);
	path = key != NULL ? cu_asprintf("/metadata/labels/%s", key) : NULL;
	cu_free(key);
	if (path == NULL) {
		cu_free(gname);
		cu_free(path);
		return cu_error_set(err, CU_ENOMEM, "webhook patch: pod group");
	}
	rc = wh__patch_add(c->out, "add", path, json_string(gname), err);
	cu_free(gname);
	cu_free(path);
	return rc;
}
