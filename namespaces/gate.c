/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/gate.c - the management gate (see gate.h for the rules and
 * their order). Pure logic: no I/O, no allocation, no clock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "namespaces/gate.h"

#include "api/json.h"

static const char *const reason_names[NS_GATE_R_COUNT] = {
#define NS_GATE_X_NAME(name, str) str,
    NS_GATE_REASON_TABLE(NS_GATE_X_NAME)
#undef NS_GATE_X_NAME
};

const char *ns_gate_reason_name(enum ns_gate_reason r)
{
	if ((int)r < 0 || r >= NS_GATE_R_COUNT)
		return "unknown";
	return reason_names[r];
}

const char *ns_gate_managed_name(enum ns_gate_managed m)
{
	switch (m) {
	case NS_GATE_NO:
		return "NO";
	case NS_GATE_YES:
		return "YES";
	case NS_GATE_VIA_PARENT:
		return "VIA_PARENT";
	}
	return "unknown";
}

/* The frameworks beyond Job and JobSet, by enum ns_gate_kind. */
static const struct {
	const char *group, *kind, *framework;
} others[NS_GATE_KIND__COUNT] = {
    [NS_GATE_KIND_PYTORCHJOB] = {"kubeflow.org", "PyTorchJob",
	"kubeflow.org/pytorchjob"},
    [NS_GATE_KIND_TFJOB] = {"kubeflow.org", "TFJob", "kubeflow.org/tfjob"},
    [NS_GATE_KIND_XGBOOSTJOB] = {"kubeflow.org", "XGBoostJob",
	"kubeflow.org/xgboostjob"},
    [NS_GATE_KIND_PADDLEJOB] = {"kubeflow.org", "PaddleJob",
	"kubeflow.org/paddlejob"},
    [NS_GATE_KIND_JAXJOB] = {"kubeflow.org", "JAXJob", "kubeflow.org/jaxjob"},
    [NS_GATE_KIND_MPIJOB] = {"kubeflow.org", "MPIJob", "kubeflow.org/mpijob"},
    [NS_GATE_KIND_RAYJOB] = {"ray.io", "RayJob", "ray.io/rayjob"},
    [NS_GATE_KIND_RAYCLUSTER] = {"ray.io", "RayCluster", "ray.io/raycluster"},
    [NS_GATE_KIND_APPWRAPPER] = {"workload.codeflare.dev", "AppWrapper",
	"workload.codeflare.dev/appwrapper"},
    [NS_GATE_KIND_POD] = {"", "Pod", "pod"},
    [NS_GATE_KIND_RAYSERVICE] = {"ray.io", "RayService", "ray.io/rayservice"},
    [NS_GATE_KIND_SPARKAPP] = {"sparkoperator.k8s.io", "SparkApplication",
	"sparkoperator.k8s.io/sparkapplication"},
    [NS_GATE_KIND_TRAINJOB] = {"trainer.kubeflow.org", "TrainJob",
	"trainer.kubeflow.org/trainjob"},
};

static bool is_other(enum ns_gate_kind k)
{
	return k > NS_GATE_KIND_JOBSET && k < NS_GATE_KIND__COUNT;
}

static const char *kind_label(enum ns_gate_kind k)
{
	if (is_other(k))
		return others[k].kind;
	switch (k) {
	case NS_GATE_KIND_JOB:
		return "Job";
	case NS_GATE_KIND_JOBSET:
		return "JobSet";
	default:
		break;
	}
	return "object";
}

static const char *str_or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static bool nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* Group of an apiVersion: "" for "v1", "batch" for "batch/v1". */
static bool group_is(const char *api_version, const char *group)
{
	const char *slash = strchr(api_version, '/');
	size_t n = strlen(group);

	if (n == 0) /* the core group: "v1" */
		return slash == NULL && api_version[0] != '\0';
	return slash != NULL && (size_t)(slash - api_version) == n &&
	       memcmp(api_version, group, n) == 0;
}

enum ns_gate_kind ns_gate_kind_of(const char *api_version, const char *kind)
{
	int k;

	api_version = str_or_empty(api_version);
	kind = str_or_empty(kind);
	if (strcmp(kind, "Job") == 0 && group_is(api_version, "batch"))
		return NS_GATE_KIND_JOB;
	if (strcmp(kind, "JobSet") == 0 &&
	    group_is(api_version, "jobset.x-k8s.io"))
		return NS_GATE_KIND_JOBSET;
	for (k = NS_GATE_KIND_JOBSET + 1; k < NS_GATE_KIND__COUNT; k++)
		if (strcmp(kind, others[k].kind) == 0 &&
		    group_is(api_version, others[k].group))
			return (enum ns_gate_kind)k;
	return NS_GATE_KIND_OTHER;
}

const char *ns_gate_kind_suspend_under(enum ns_gate_kind k)
{
	if (k == NS_GATE_KIND_RAYSERVICE)
		return "rayClusterConfig";
	if (is_other(k) && strcmp(others[k].group, "kubeflow.org") == 0)
		return "runPolicy";
	return NULL;
}

bool ns_gate_kind_names(enum ns_gate_kind k, const char **group,
    const char **kind, bool *run_policy)
{
	const char *g = "", *n = "";

	if (is_other(k)) {
		g = others[k].group;
		n = others[k].kind;
	} else if (k == NS_GATE_KIND_JOB) {
		g = "batch";
		n = "Job";
	} else if (k == NS_GATE_KIND_JOBSET) {
		g = "jobset.x-k8s.io";
		n = "JobSet";
	}
	if (group != NULL)
		*group = g;
	if (kind != NULL)
		*kind = n;
	if (run_policy != NULL)
		*run_policy =
		    is_other(k) && strcmp(others[k].group, "kubeflow.org") == 0;
	return *n != '\0';
}

static bool framework_enabled(
    const struct ns_gate_config *cfg, enum ns_gate_kind k)
{
	if (is_other(k))
		return cfg->enabled[k];
	switch (k) {
	case NS_GATE_KIND_JOB:
		return cfg->job_enabled;
	case NS_GATE_KIND_JOBSET:
		return cfg->jobset_enabled;
	default:
		break;
	}
	return false;
}

static const char *framework_name(enum ns_gate_kind k)
{
	if (is_other(k))
		return others[k].framework;
	return k == NS_GATE_KIND_JOB ? "batch/job" : "jobset.x-k8s.io/jobset";
}

static void decide(struct ns_gate_decision *out, enum ns_gate_managed m,
    enum ns_gate_reason r, const char *fmt, ...) CU_PRINTF(4, 5);

static void decide(struct ns_gate_decision *out, enum ns_gate_managed m,
    enum ns_gate_reason r, const char *fmt, ...)
{
	va_list ap;

	out->managed = m;
	out->reason = r;
	va_start(ap, fmt);
	(void)vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

/* Namespace label lookup that supplies kubernetes.io/metadata.name when
 * the caller's labels lack it (the API server always sets it). */
struct ns_labels {
	const struct ns_gate_namespace *ns;
};

static const char *ns_label(const char *key, void *payload)
{
	const struct ns_labels *l = payload;
	const char *v = NULL;

	if (l->ns->get != NULL)
		v = l->ns->get(key, l->ns->payload);
	if (v == NULL && strcmp(key, NS_GATE_LABEL_NS_NAME) == 0)
		v = l->ns->name;
	return v;
}

/* Step 2. True when the namespace lets the object through. */
static bool namespace_gate(const struct ns_gate_config *cfg,
    const struct ns_gate_object *obj, const struct ns_gate_namespace *ns,
    struct ns_gate_decision *out)
{
	const char *kind = kind_label(obj->kind);
	const char *name = str_or_empty(obj->name);
	struct ns_labels l = {ns};

	if (strcmp(ns->name, NS_GATE_KUBE_SYSTEM) == 0 ||
	    (nonempty(cfg->own_namespace) &&
		strcmp(ns->name, cfg->own_namespace) == 0)) {
		decide(out, NS_GATE_NO, NS_GATE_R_SYSTEM_NAMESPACE,
		    "%s %s/%s: namespace %s is a system namespace, never "
		    "managed",
		    kind, ns->name, name, ns->name);
		return false;
	}
	if (!ns->found) {
		decide(out, NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_FOUND,
		    "%s %s/%s: namespace %s not found", kind, ns->name, name,
		    ns->name);
		return false;
	}
	if (cfg->ns_selector != NULL &&
	    !ns_selector_matches(cfg->ns_selector, ns_label, &l)) {
		decide(out, NS_GATE_NO, NS_GATE_R_NAMESPACE_NOT_SELECTED,
		    "%s %s/%s: namespace %s does not match "
		    "managedJobsNamespaceSelector",
		    kind, ns->name, name, ns->name);
		return false;
	}
	return true;
}

/* Managed on its own by steps 4-5 (framework already checked). */
static bool self_managed(
    const struct ns_gate_config *cfg, const struct ns_gate_object *o)
{
	return nonempty(o->queue_name) || cfg->manage_jobs_without_queue_name;
}

/*
 * Step 3: obj has a controller owner of kind Job/JobSet. Walk up to the
 * outermost such ancestor and decide from it. Returns CU_OK or the
 * lookup's error; *out is filled either way.
 */
static int owner_gate(const struct ns_gate_config *cfg,
    const struct ns_gate_object *obj, const struct ns_gate_namespace *ns,
    ns_gate_lookup lookup, void *payload, struct ns_gate_decision *out,
    cu_error *err)
{
	const char *seen[NS_GATE_CHAIN_LIMIT + 1];
	size_t nseen = 0;
	const char *kind = kind_label(obj->kind);
	const char *name = str_or_empty(obj->name);
	struct ns_gate_object cur = *obj, parent;
	int depth = 0;

	if (nonempty(obj->uid))
		seen[nseen++] = obj->uid;
	while (cur.has_owner && ns_gate_kind_of(cur.owner.api_version,
				    cur.owner.kind) != NS_GATE_KIND_OTHER) {
		const struct ns_gate_owner *ref = &cur.owner;
		int rc;

		if (depth >= NS_GATE_CHAIN_LIMIT) {
			decide(out, NS_GATE_NO, NS_GATE_R_OWNER_CHAIN_TOO_DEEP,
			    "%s %s/%s: more than %d owner levels above it, "
			    "not managed",
			    kind, ns->name, name, NS_GATE_CHAIN_LIMIT);
			return CU_OK;
		}
		memset(&parent, 0, sizeof(parent));
		rc = lookup != NULL
			 ? lookup(ref, ns->name, &parent, payload, err)
			 : CU_ENOTFOUND;
		if (rc == CU_ENOTFOUND) {
			decide(out, NS_GATE_NO, NS_GATE_R_OWNER_NOT_FOUND,
			    "%s %s/%s: owner %s %s not found, not managed",
			    kind, ns->name, name, str_or_empty(ref->kind),
			    str_or_empty(ref->name));
			return CU_OK;
		}
		if (rc != CU_OK) {
			decide(out, NS_GATE_NO, NS_GATE_R_LOOKUP_FAILED,
			    "%s %s/%s: looking up owner %s %s failed", kind,
			    ns->name, name, str_or_empty(ref->kind),
			    str_or_empty(ref->name));
			return rc;
		}
		/* The lookup found whatever has that name; its kind is the
		 * reference's (Kueue fetches by the reference's GVK). */
		parent.kind = ns_gate_kind_of(ref->api_version, ref->kind);
		if (nonempty(ref->uid) && nonempty(parent.uid) &&
		    strcmp(ref->uid, parent.uid) != 0) {
			decide(out, NS_GATE_NO, NS_GATE_R_OWNER_UID_MISMATCH,
			    "%s %s/%s: owner %s %s has uid %s, not %s; not "
			    "managed",
			    kind, ns->name, name, kind_label(parent.kind),
			    str_or_empty(ref->name), parent.uid, ref->uid);
			return CU_OK;
		}
		if (nonempty(parent.uid)) {
			for (size_t i = 0; i < nseen; i++) {
				if (strcmp(seen[i], parent.uid) == 0) {
					decide(out, NS_GATE_NO,
					    NS_GATE_R_OWNER_CYCLE,
					    "%s %s/%s: cyclic ownership at "
					    "%s %s, not managed",
					    kind, ns->name, name,
					    kind_label(parent.kind),
					    str_or_empty(ref->name));
					return CU_OK;
				}
			}
			seen[nseen++] = parent.uid;
		}
		depth++;
		cur = parent;
	}

	/* cur is the outermost Job/JobSet ancestor. */
	if (!framework_enabled(cfg, cur.kind)) {
		decide(out, NS_GATE_NO, NS_GATE_R_OWNER_FRAMEWORK_DISABLED,
		    "%s %s/%s: owned by %s %s whose framework %s is not "
		    "enabled, not managed",
		    kind, ns->name, name, kind_label(cur.kind),
		    str_or_empty(cur.name), framework_name(cur.kind));
		return CU_OK;
	}
	if (!self_managed(cfg, &cur)) {
		decide(out, NS_GATE_NO, NS_GATE_R_OWNER_NOT_MANAGED,
		    "%s %s/%s: owned by %s %s, which has no queue-name label "
		    "and manageJobsWithoutQueueName is false; not managed",
		    kind, ns->name, name, kind_label(cur.kind),
		    str_or_empty(cur.name));
		return CU_OK;
	}
	out->top_kind = cur.kind;
	out->depth = depth;
	decide(out, NS_GATE_VIA_PARENT, NS_GATE_R_VIA_PARENT,
	    "%s %s/%s: managed via its %s %s; never suspended or resumed "
	    "directly",
	    kind, ns->name, name, kind_label(cur.kind), str_or_empty(cur.name));
	return CU_OK;
}

/* Is ref of a kind cfg lists in externalFrameworks (Kind.version.group)? */
static bool external_owner(
    const struct ns_gate_config *cfg, const struct ns_gate_owner *ref)
{
	const char *av = str_or_empty(ref->api_version);
	const char *slash = strchr(av, '/');
	char want[512];
	size_t i;

	if (slash == NULL || cfg->n_external == 0)
		return false;
	snprintf(want, sizeof(want), "%s.%s.%.*s", str_or_empty(ref->kind),
	    slash + 1, (int)(slash - av), av);
	for (i = 0; i < cfg->n_external; i++)
		if (cfg->external[i] != NULL &&
		    strcmp(cfg->external[i], want) == 0)
			return true;
	return false;
}

int ns_gate_decide(const struct ns_gate_config *cfg,
    const struct ns_gate_object *obj, const struct ns_gate_namespace *ns,
    ns_gate_lookup lookup, void *payload, struct ns_gate_decision *out,
    cu_error *err)
{
	const char *kind, *name;

	if (out == NULL)
		return cu_error_set(err, CU_EINVAL, "ns_gate_decide: NULL out");
	memset(out, 0, sizeof(*out));
	if (cfg == NULL || obj == NULL || ns == NULL || ns->name == NULL) {
		decide(out, NS_GATE_NO, NS_GATE_R_LOOKUP_FAILED,
		    "management gate called without its inputs");
		return cu_error_set(
		    err, CU_EINVAL, "ns_gate_decide: NULL argument");
	}
	kind = kind_label(obj->kind);
	name = str_or_empty(obj->name);

	/* 1. framework */
	if (obj->kind == NS_GATE_KIND_OTHER) {
		decide(out, NS_GATE_NO, NS_GATE_R_KIND_UNSUPPORTED,
		    "object %s/%s: kind not managed by cueue", ns->name, name);
		return CU_OK;
	}
	if (!framework_enabled(cfg, obj->kind)) {
		decide(out, NS_GATE_NO, NS_GATE_R_FRAMEWORK_DISABLED,
		    "%s %s/%s: framework %s is not enabled in "
		    "integrations.frameworks",
		    kind, ns->name, name, framework_name(obj->kind));
		return CU_OK;
	}
	/* 2. namespace, before anything else looks at the object */
	if (!namespace_gate(cfg, obj, ns, out))
		return CU_OK;
	/* 3. children of an external framework's object: its controller
	 * manages them (Kueue's IsOwnerManagedByKueue) */
	if (obj->has_owner && external_owner(cfg, &obj->owner)) {
		out->depth = 1;
		decide(out, NS_GATE_VIA_PARENT, NS_GATE_R_VIA_PARENT,
		    "%s %s/%s: managed via its %s %s (an external framework); "
		    "never suspended or resumed directly",
		    kind, ns->name, name, str_or_empty(obj->owner.kind),
		    str_or_empty(obj->owner.name));
		return CU_OK;
	}
	/* 3b. children of Jobs/JobSets and the other frameworks */
	if (obj->has_owner && ns_gate_kind_of(obj->owner.api_version,
				  obj->owner.kind) != NS_GATE_KIND_OTHER)
		return owner_gate(cfg, obj, ns, lookup, payload, out, err);
	/* 4. queue-name label */
	if (nonempty(obj->queue_name)) {
		out->queue_name = obj->queue_name;
		decide(out, NS_GATE_YES, NS_GATE_R_QUEUE_NAME,
		    "%s %s/%s: managed, queue-name %s", kind, ns->name, name,
		    obj->queue_name);
		return CU_OK;
	}
	/* 5. manageJobsWithoutQueueName */
	if (cfg->manage_jobs_without_queue_name) {
		decide(out, NS_GATE_YES, NS_GATE_R_WITHOUT_QUEUE_NAME,
		    "%s %s/%s: managed without a queue-name label "
		    "(manageJobsWithoutQueueName)",
		    kind, ns->name, name);
		return CU_OK;
	}
	decide(out, NS_GATE_NO, NS_GATE_R_NO_QUEUE_NAME,
	    "%s %s/%s: no queue-name label and manageJobsWithoutQueueName is "
	    "false",
	    kind, ns->name, name);
	return CU_OK;
}

/* ---- input helpers ---------------------------------------------------- */

void ns_gate_object_from_meta(struct ns_gate_object *out,
    enum ns_gate_kind kind, const struct api_meta *m)
{
	const struct api_owner_ref *c;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (m == NULL)
		return;
	out->name = m->name;
	out->uid = m->uid;
	out->queue_name = api_strmap_get(&m->labels, NS_GATE_LABEL_QUEUE_NAME);
	c = api_meta_controller(m);
	if (c != NULL) {
		out->has_owner = true;
		out->owner.api_version = c->api_version;
		out->owner.kind = c->kind;
		out->owner.name = c->name;
		out->owner.uid = c->uid;
	}
}

/* A string member of o, or NULL when absent or null. CU_EPARSE for
 * another type, in this decoder's own words. */
static int json_str(const json_t *o, const char *key, const char *path,
    const char **out, cu_error *err)
{
	if (api_json_get_str(o, key, path, NULL, out, NULL) != CU_OK)
		return cu_error_set(
		    err, CU_EPARSE, "%s: expected a string", path);
	return CU_OK;
}

static int json_owner(
    const json_t *refs, struct ns_gate_object *out, cu_error *err)
{
	size_t i;
	const json_t *r;

	if (refs == NULL || json_is_null(refs))
		return CU_OK;
	if (!json_is_array(refs))
		return cu_error_set(err, CU_EPARSE,
		    "metadata.ownerReferences: expected an array");
	json_array_foreach(refs, i, r)
	{
		const json_t *ctl;
		char path[64];
		int rc;

		if (!json_is_object(r))
			return cu_error_set(err, CU_EPARSE,
			    "metadata.ownerReferences[%zu]: expected an object",
			    i);
		ctl = json_object_get(r, "controller");
		if (ctl != NULL && !json_is_null(ctl) && !json_is_boolean(ctl))
			return cu_error_set(err, CU_EPARSE,
			    "metadata.ownerReferences[%zu].controller: "
			    "expected a boolean",
			    i);
		if (!json_is_true(ctl) || out->has_owner)
			continue;
		(void)snprintf(
		    path, sizeof(path), "metadata.ownerReferences[%zu]", i);
		if ((rc = json_str(r, "apiVersion", path,
			 &out->owner.api_version, err)) != CU_OK ||
		    (rc = json_str(r, "kind", path, &out->owner.kind, err)) !=
			CU_OK ||
		    (rc = json_str(r, "name", path, &out->owner.name, err)) !=
			CU_OK ||
		    (rc = json_str(r, "uid", path, &out->owner.uid, err)) !=
			CU_OK)
			return rc;
		out->has_owner = true;
	}
	return CU_OK;
}

int ns_gate_object_from_json(
    struct ns_gate_object *out, const json_t *obj, cu_error *err)
{
	const char *api_version = NULL, *kind = NULL;
	const json_t *meta, *labels;
	int rc;

	memset(out, 0, sizeof(*out));
	if (obj == NULL || !json_is_object(obj))
		return cu_error_set(
		    err, CU_EPARSE, "object: expected an object");
	if ((rc = json_str(obj, "apiVersion", "apiVersion", &api_version,
		 err)) != CU_OK ||
	    (rc = json_str(obj, "kind", "kind", &kind, err)) != CU_OK)
		goto fail;
	out->kind = ns_gate_kind_of(api_version, kind);
	meta = json_object_get(obj, "metadata");
	if (meta == NULL || json_is_null(meta))
		return CU_OK;
	if (!json_is_object(meta)) {
		rc = cu_error_set(
		    err, CU_EPARSE, "metadata: expected an object");
		goto fail;
	}
	if ((rc = json_str(meta, "name", "metadata.name", &out->name, err)) !=
		CU_OK ||
	    (rc = json_str(meta, "uid", "metadata.uid", &out->uid, err)) !=
		CU_OK)
		goto fail;
	labels = json_object_get(meta, "labels");
	if (labels != NULL && !json_is_null(labels)) {
		if (!json_is_object(labels)) {
			rc = cu_error_set(err, CU_EPARSE,
			    "metadata.labels: expected an object");
			goto fail;
		}
		rc = json_str(labels, NS_GATE_LABEL_QUEUE_NAME,
		    "metadata.labels[" NS_GATE_LABEL_QUEUE_NAME "]",
		    &out->queue_name, err);
		if (rc != CU_OK)
			goto fail;
	}
	rc = json_owner(json_object_get(meta, "ownerReferences"), out, err);
	if (rc != CU_OK)
		goto fail;
	return CU_OK;
fail:
	memset(out, 0, sizeof(*out));
	return rc;
}

const char *ns_gate_strmap_get(const char *key, void *payload)
{
	const struct api_strmap *m = payload;
	return m != NULL ? api_strmap_get(m, key) : NULL;
}

void ns_gate_namespace_from_api(struct ns_gate_namespace *out, const char *name,
    const struct api_namespace *ns)
{
	memset(out, 0, sizeof(*out));
	out->name = name;
	if (ns == NULL)
		return;
	if (out->name == NULL)
		out->name = ns->meta.name;
	out->found = true;
	out->get = ns_gate_strmap_get;
	/* The lookup only reads through this pointer. */
	out->payload = (void *)(uintptr_t)&ns->meta.labels;
}
