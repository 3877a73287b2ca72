/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/kinds.c - the registry of resource types: built-in kinds
 * with their per-kind semantics, kinds registered from stored CRDs (with
 * structural-schema pruning and defaulting), selectable fields, and the
 * discovery documents kubectl and client libraries build their REST
 * mappers from (docs/apiserver.md §1.3, §4.8).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

static const char *const ev_fields[] = {"involvedObject.kind",
    "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "source",
    "type", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const secret_fields[] = {"type", NULL};
static const char *const pod_fields[] = {"spec.nodeName", "spec.restartPolicy",
    "spec.schedulerName", "spec.serviceAccountName", "status.phase",
    "status.podIP", "status.nominatedNodeName", NULL};
static const char *const job_fields[] = {"status.successful", NULL};
static const char *const node_fields[] = {"spec.unschedulable", NULL};

static const char *const cm_top[] = {"data", "binaryData", "immutable", NULL};
static const char *const secret_top[] = {
    "data", "stringData", "type", "immutable", NULL};
static const char *const ev_top[] = {"involvedObject", "reason", "message",
    "source", "firstTimestamp", "lastTimestamp", "count", "type", "eventTime",
    "series", "action", "related", "reportingComponent", "reportingInstance",
    NULL};
static const char *const spec_status_top[] = {"spec", "status", NULL};
static const char *const lease_top[] = {"spec", NULL};
static const char *const spec_top[] = {"spec", NULL};
static const char *const sa_top[] = {
    "secrets", "imagePullSecrets", "automountServiceAccountToken", NULL};
static const char *const webhook_top[] = {"webhooks", NULL};
static const char *const pc_top[] = {
    "value", "globalDefault", "description", "preemptionPolicy", NULL};
static const char *const role_top[] = {"rules", "aggregationRule", NULL};
static const char *const podtemplate_top[] = {"template", NULL};
static const char *const binding_top[] = {"subjects", "roleRef", NULL};
static const char *const evv1_top[] = {"eventTime", "series",
    "reportingController", "reportingInstance", "action", "reason", "regarding",
    "related", "note", "type", "deprecatedSource", "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp", "deprecatedCount", NULL};

struct builtin {
	const char *group, *version, *plural, *kind, *shorts, *cats;
	unsigned flags;
	const char *const *fields;
	const char *const *top;
};

#define NSD AS_NAMESPACED
#define UNC AS_UNCONDITIONAL_UPDATE
static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "Namespace", "ns", NULL, AS_STATUS | UNC,
	ns_fields, spec_status_top},
    {"", "v1", "configmaps", "ConfigMap", "cm", NULL, NSD | UNC, NULL, cm_top},
    {"", "v1", "secrets", "Secret", NULL, NULL, NSD | UNC, secret_fields,
	secret_top},
    {"", "v1", "events", "Event", "ev", NULL, NSD | UNC, ev_fields, ev_top},
    {"", "v1", "pods", "Pod", "po", "all", NSD | UNC | AS_STATUS, pod_fields,
	spec_status_top},
    {"", "v1", "nodes", "Node", "no", NULL, AS_STATUS | UNC, node_fields,
	spec_status_top},
    {"", "v1", "podtemplates", "PodTemplate", NULL, NULL, NSD | UNC, NULL,
	podtemplate_top},
    {"", "v1", "serviceaccounts", "ServiceAccount", "sa", NULL, NSD | UNC, NULL,
	sa_top},
    {"", "v1", "services", "Service", "svc", "all", NSD | UNC | AS_STATUS, NULL,
	spec_status_top},
    {"apps", "v1", "deployments", "Deployment", "deploy", "all",
	NSD | UNC | AS_STATUS | AS_GENERATION | AS_SCALE, NULL,
	spec_status_top},
    {"apps", "v1", "replicasets", "ReplicaSet", "rs", "all",
	NSD | UNC | AS_STATUS | AS_GENERATION | AS_SCALE, NULL,
	spec_status_top},
    {"apps", "v1", "statefulsets", "StatefulSet", "sts", "all",
	NSD | UNC | AS_STATUS | AS_GENERATION | AS_SCALE, NULL,
	spec_status_top},
    {"batch", "v1", "jobs", "Job", NULL, "all",
	NSD | UNC | AS_STATUS | AS_GENERATION, job_fields, spec_status_top},
    {"batch", "v1", "cronjobs", "CronJob", "cj", "all",
	NSD | UNC | AS_STATUS | AS_GENERATION, NULL, spec_status_top},
    {"coordination.k8s.io", "v1", "leases", "Lease", NULL, NULL,
	NSD | AS_CREATE_ON_UPDATE, NULL, lease_top},
    {"events.k8s.io", "v1", "events", "Event", "ev", NULL, NSD | UNC, ev_fields,
	evv1_top},
    {"networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", "netpol",
	NULL, NSD | UNC | AS_GENERATION, NULL, spec_top},
    {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", "pc", NULL,
	UNC, NULL, pc_top},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", NULL,
	NULL, UNC, NULL, role_top},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings",
	"ClusterRoleBinding", NULL, NULL, UNC, NULL, binding_top},
    {"rbac.authorization.k8s.io", "v1", "roles", "Role", NULL, NULL, NSD | UNC,
	NULL, role_top},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", NULL,
	NULL, NSD | UNC, NULL, binding_top},
    {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
	"MutatingWebhookConfiguration", NULL, "api-extensions",
	UNC | AS_GENERATION, NULL, webhook_top},
    {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
	"ValidatingWebhookConfiguration", NULL, "api-extensions",
	UNC | AS_GENERATION, NULL, webhook_top},
    {"apiregistration.k8s.io", "v1", "apiservices", "APIService", NULL,
	"api-extensions", AS_STATUS | UNC, NULL, spec_status_top},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions",
	"CustomResourceDefinition", "crd,crds", "api-extensions",
	AS_STATUS | AS_GENERATION, NULL, spec_status_top},
};

static json_t *split_list(const char *csv)
{
	json_t *a = json_array();
	const char *p = csv;

	while (a != NULL && p != NULL && *p != '\0') {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		json_array_append_new(a, json_stringn(p, n));
		p = c ? c + 1 : NULL;
	}
	return a;
}

static char *lower_dup(const char *s)
{
	char *d = cu_strdup(s), *p;

	for (p = d; p != NULL && *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

static struct as_kind *kind_new(struct as_server *srv, const char *group,
    const char *version, const char *plural, const char *kind)
{
	struct as_kind *k = cu_calloc(1, sizeof(*k));

	if (k == NULL)
		return NULL;
	k->group = cu_strdup(group);
	k->version = cu_strdup(version);
	k->versions = json_pack("[s]", version);
	k->plural = cu_strdup(plural);
	k->kind = cu_strdup(kind);
	k->list_kind = cu_asprintf("%sList", kind);
	/* kube-apiserver 1.27+ names built-in singulars: the kind,
	 * lowercased (kubectl and kueuectl read it from discovery) */
	k->singular = cu_strdup(kind);
	for (char *p = k->singular; p != NULL && *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	k->short_names = json_array();
	k->categories = json_array();
	k->ring_cap = srv->history ? srv->history : 1;
	k->ring = cu_calloc(k->ring_cap, sizeof(*k->ring));
	k->ring_floor = srv->rv;
	if (!k->group || !k->version || !k->versions || !k->plural ||
	    !k->kind || !k->list_kind || !k->singular || !k->short_names ||
	    !k->categories || !k->ring) {
		as_kind_storage_free(k);
		cu_free(k);
		return NULL;
	}
	return k;
}

static void kind_free(struct as_kind *k)
{
	as_kind_storage_free(k);
	cu_free(k->group);
	cu_free(k->version);
	json_decref(k->versions);
	cu_free(k->plural);
	cu_free(k->singular);
	cu_free(k->kind);
	cu_free(k->list_kind);
	json_decref(k->short_names);
	json_decref(k->categories);
	json_decref(k->schema);
	json_decref(k->scale);
	json_decref(k->printer_columns);
	cu_free(k);
}

int as_kinds_init(struct as_server *srv, cu_error *err)
{
	size_t i;
	struct as_kind **tail = &srv->kinds;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];
		struct as_kind *k =
		    kind_new(srv, b->group, b->version, b->plural, b->kind);

		if (k == NULL)
			return cu_error_set(err, CU_ENOMEM, "kinds: no memory");
		k->flags = b->flags;
		k->fields = b->fields;
		k->top_fields = b->top;
		if (b->shorts) {
			json_decref(k->short_names);
			k->short_names = split_list(b->shorts);
		}
		if (b->cats) {
			json_decref(k->categories);
			k->categories = split_list(b->cats);
		}
		*tail = k;
		tail = &k->next;
	}
	/* events.k8s.io/v1 reads and writes core/v1 Event storage. */
	{
		struct as_kind *core = as_kind_find(srv, "", "v1", "events");
		struct as_kind *ev =
		    as_kind_find(srv, "events.k8s.io", "v1", "events");

		if (core != NULL && ev != NULL)
			ev->storage = core;
	}
	return CU_OK;
}

void as_kinds_free(struct as_server *srv)
{
	struct as_kind *k = srv->kinds, *n;

	for (; k != NULL; k = n) {
		n = k->next;
		kind_free(k);
	}
	srv->kinds = NULL;
}

static bool version_served(const struct as_kind *k, const char *version)
{
	size_t i;
	json_t *v;

	json_array_foreach(k->versions, i, v)
	{
		if (strcmp(json_string_value(v), version) == 0)
			return true;
	}
	return false;
}

struct as_kind *as_kind_find(struct as_server *srv, const char *group,
    const char *version, const char *plural)
{
	struct as_kind *k;

	for (k = srv->kinds; k != NULL; k = k->next) {
		if (!k->removed && strcmp(k->group, group) == 0 &&
		    strcmp(k->plural, plural) == 0 &&
		    version_served(k, version))
			return k;
	}
	return NULL;
}

struct as_kind *as_kind_by_gvk(
    struct as_server *srv, const char *api_version, const char *kind)
{
	struct as_kind *k;
	const char *slash = strchr(api_version, '/');
	char group[256];
	const char *version;

	if (slash) {
		size_t n = (size_t)(slash - api_version);

		if (n >= sizeof(group))
			return NULL;
		memcpy(group, api_version, n);
		group[n] = '\0';
		version = slash + 1;
	} else {
		group[0] = '\0';
		version = api_version;
	}
	for (k = srv->kinds; k != NULL; k = k->next) {
		if (!k->removed && strcmp(k->group, group) == 0 &&
		    strcmp(k->kind, kind) == 0 && version_served(k, version))
			return k;
	}
	return NULL;
}

char *as_kind_api_version(const struct as_kind *k, const char *version)
{
	if (k->group[0] == '\0')
		return cu_strdup(version);
	return cu_asprintf("%s/%s", k->group, version);
}

/* ---- selectable fields --------------------------------------------- */

bool as_kind_field_ok(const struct as_kind *k, const char *field)
{
	size_t i;

	if (strcmp(field, "metadata.name") == 0)
		return true;
	if (strcmp(field, "metadata.namespace") == 0)
		return (k->flags & AS_NAMESPACED) != 0;
	for (i = 0; k->fields != NULL && k->fields[i] != NULL; i++)
		if (strcmp(k->fields[i], field) == 0)
			return true;
	return false;
}

const char *as_obj_field(
    const struct as_kind *k, json_t *obj, const char *field)
{
	(void)k;
	if (strcmp(field, "source") == 0)
		return as_jstr(obj, "source.component");
	if (strcmp(field, "metadata.namespace") == 0) {
		const char *ns = as_jstr(obj, "metadata.namespace");

		return ns ? ns : "";
	}
	if (strcmp(field, "status.successful") == 0) {
		static char buf[32];
		json_t *v = as_jget(obj, "status.succeeded");

		snprintf(
		    buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (strcmp(field, "spec.unschedulable") == 0)
		return json_is_true(as_jget(obj, field)) ? "true" : "false";
	{
		const char *s = as_jstr(obj, field);

		/* Real servers expose absent string fields as "". */
		return s ? s : "";
	}
}

/* ---- CRDs ---------------------------------------------------------- */

static json_t *condition(
    const char *type, const char *reason, const char *message)
{
	char now[CU_TIME_RFC3339_LEN];

	as_now_rfc3339(now);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	    "True", "lastTransitionTime", now, "reason", reason, "message",
	    message);
}

int as_crd_prepare(json_t *crd, cu_error *err)
{
	json_t *spec = json_object_get(crd, "spec");
	json_t *names = json_object_get(spec, "names");
	json_t *versions = json_object_get(spec, "versions");
	const char *group = as_jstr(crd, "spec.group");
	const char *plural =
	    json_string_value(json_object_get(names, "plural"));
	const char *kind = json_string_value(json_object_get(names, "kind"));
	const char *scope = as_jstr(crd, "spec.scope");
	const char *name = as_jstr(crd, "metadata.name");
	json_t *status, *accepted, *stored, *v;
	size_t i, nstorage = 0;
	char *expect;

	if (group == NULL || group[0] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "spec.group: Required value");
	if (plural == NULL || plural[0] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "spec.names.plural: Required value");
	if (kind == NULL || kind[0] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "spec.names.kind: Required value");
	if (scope == NULL ||
	    (strcmp(scope, "Namespaced") != 0 && strcmp(scope, "Cluster") != 0))
		return cu_error_set(err, CU_EINVAL,
		    "spec.scope: Unsupported value: \"%s\": supported values: "
		    "\"Cluster\", \"Namespaced\"",
		    scope ? scope : "");
	expect = cu_asprintf("%s.%s", plural, group);
	if (expect == NULL)
		return cu_error_set(err, CU_ENOMEM, "no memory");
	if (name == NULL || strcmp(name, expect) != 0) {
		cu_error_set(err, CU_EINVAL,
		    "metadata.name: Invalid value: \"%s\": must be "
		    "spec.names.plural+\".\"+spec.group",
		    name ? name : "");
		cu_free(expect);
		return CU_EINVAL;
	}
	cu_free(expect);
	if (!json_is_array(versions) || json_array_size(versions) == 0)
		return cu_error_set(err, CU_EINVAL,
		    "spec.versions: Invalid value: must have exactly one "
		    "version marked as storage version");
	stored = json_array();
	json_array_foreach(versions, i, v)
	{
		if (json_is_true(json_object_get(v, "storage"))) {
			nstorage++;
			json_array_append_new(stored,
			    json_string(
				as_jstr(v, "name") ? as_jstr(v, "name") : ""));
		}
		if (json_is_true(json_object_get(v, "served")) &&
		    !json_is_object(as_jget(v, "schema.openAPIV3Schema"))) {
			json_decref(stored);
			return cu_error_set(err, CU_EINVAL,
			    "spec.versions[%zu].schema.openAPIV3Schema: "
			    "Required value: schemas are required",
			    i);
		}
	}
	if (nstorage != 1) {
		json_decref(stored);
		return cu_error_set(err, CU_EINVAL,
		    "spec.versions: Invalid value: must have exactly one "
		    "version marked as storage version");
	}
	accepted = json_deep_copy(names);
	if (json_object_get(accepted, "singular") == NULL) {
		char *l = lower_dup(kind);

		json_object_set_new(accepted, "singular", json_string(l));
		cu_free(l);
	}
	if (json_object_get(accepted, "listKind") == NULL) {
		char *lk = cu_asprintf("%sList", kind);

		json_object_set_new(accepted, "listKind", json_string(lk));
		cu_free(lk);
	}
	/* Keep an existing Established transition time stable. */
	status = json_object_get(crd, "status");
	if (!json_is_object(status)) {
		status = json_object();
		json_object_set_new(crd, "status", status);
	}
	json_object_set_new(status, "acceptedNames", accepted);
	json_object_set_new(status, "storedVersions", stored);
	if (!json_is_array(json_object_get(status, "conditions")) ||
	    json_array_size(json_object_get(status, "conditions")) == 0)
		json_object_set_new(status, "conditions",
		    json_pack("[o, o]",
			condition("NamesAccepted", "NoConflicts",
			    "no conflicts found"),
			condition("Established", "InitialNamesAccepted",
			    "the initial names have been accepted")));
	return CU_OK;
}

int as_crd_register(struct as_server *srv, json_t *crd, cu_error *err)
{
	const char *group = as_jstr(crd, "spec.group");
	const char *plural = as_jstr(crd, "spec.names.plural");
	json_t *acc = as_jget(crd, "status.acceptedNames");
	json_t *versions = as_jget(crd, "spec.versions"), *v, *storage = NULL;
	json_t *served = json_array();
	struct as_kind *k;
	size_t i;

	json_array_foreach(versions, i, v)
	{
		if (json_is_true(json_object_get(v, "served")))
			json_array_append(served, json_object_get(v, "name"));
		if (json_is_true(json_object_get(v, "storage")))
			storage = v;
	}
	if (storage == NULL || json_array_size(served) == 0) {
		json_decref(served);
		return cu_error_set(
		    err, CU_EINVAL, "CRD has no served storage");
	}
	for (k = srv->kinds; k != NULL; k = k->next)
		if (!k->removed && strcmp(k->group, group) == 0 &&
		    strcmp(k->plural, plural) == 0)
			break;
	if (k == NULL) {
		k = kind_new(srv, group, as_jstr(storage, "name"), plural,
		    as_jstr(acc, "kind"));
		if (k == NULL) {
			json_decref(served);
			return cu_error_set(err, CU_ENOMEM, "no memory");
		}
		k->next = srv->kinds;
		srv->kinds = k;
	}
	json_decref(k->versions);
	k->versions = served;
	cu_free(k->version);
	k->version = cu_strdup(as_jstr(storage, "name"));
	cu_free(k->singular);
	k->singular = cu_strdup(as_jstr(acc, "singular"));
	cu_free(k->list_kind);
	k->list_kind = cu_strdup(as_jstr(acc, "listKind"));
	json_decref(k->short_names);
	k->short_names = json_object_get(acc, "shortNames")
			     ? json_incref(json_object_get(acc, "shortNames"))
			     : json_array();
	json_decref(k->categories);
	k->categories = json_object_get(acc, "categories")
			    ? json_incref(json_object_get(acc, "categories"))
			    : json_array();
	k->flags = AS_CUSTOM | AS_GENERATION;
	if (strcmp(as_jstr(crd, "spec.scope"), "Namespaced") == 0)
		k->flags |= AS_NAMESPACED;
	if (as_jget(storage, "subresources.status") != NULL)
		k->flags |= AS_STATUS;
	json_decref(k->scale);
	k->scale = json_incref(as_jget(storage, "subresources.scale"));
	if (k->scale != NULL)
		k->flags |= AS_SCALE;
	json_decref(k->schema);
	k->schema = json_incref(as_jget(storage, "schema.openAPIV3Schema"));
	json_decref(k->printer_columns);
	k->printer_columns =
	    json_incref(json_object_get(storage, "additionalPrinterColumns"));
	return CU_OK;
}

void as_crd_unregister(struct as_server *srv, json_t *crd)
{
	const char *group = as_jstr(crd, "spec.group");
	const char *plural = as_jstr(crd, "spec.names.plural");
	struct as_kind *k;

	for (k = srv->kinds; k != NULL; k = k->next) {
		if (!k->removed && group && plural &&
		    strcmp(k->group, group) == 0 &&
		    strcmp(k->plural, plural) == 0) {
			/* Watches end; objects go with the kind (the
			 * CRD finalizer's cleanup, done at once). */
			as_watch_drop_kind(srv, k);
			k->removed = true;
			return;
		}
	}
}

/* ---- structural schema: pruning and defaulting ---------------------- */

static void prune(
    json_t *schema, json_t *value, const char *path, json_t *unknown, int depth)
{
	json_t *props, *addl, *items;
	bool preserve;

	if (schema == NULL || value == NULL || depth > 64)
		return;
	preserve = json_is_true(
	    json_object_get(schema, "x-kubernetes-preserve-unknown-fields"));
	if (json_is_object(value)) {
		const char *key;
		json_t *child, *sub;
		void *tmp;
		bool embedded = json_is_true(
		    json_object_get(schema, "x-kubernetes-embedded-resource"));

		props = json_object_get(schema, "properties");
		addl = json_object_get(schema, "additionalProperties");
		/* Defaults first, so that defaulted values are pruned too. */
		json_object_foreach(props, key, sub)
		{
			json_t *def = json_object_get(sub, "default");

			if (def != NULL && json_object_get(value, key) == NULL)
				json_object_set_new(
				    value, key, json_deep_copy(def));
		}
		json_object_foreach_safe(value, tmp, key, child)
		{
			char *cpath;

			if (embedded && (strcmp(key, "apiVersion") == 0 ||
					    strcmp(key, "kind") == 0 ||
					    strcmp(key, "metadata") == 0))
				continue;
			cpath = cu_asprintf(
			    "%s%s%s", path, path[0] ? "." : "", key);
			sub = json_object_get(props, key);
			if (sub != NULL) {
				prune(sub, child, cpath ? cpath : "", unknown,
				    depth + 1);
			} else if (json_is_object(addl)) {
				prune(addl, child, cpath ? cpath : "", unknown,
				    depth + 1);
			} else if (!json_is_true(addl) && !preserve) {
				if (unknown != NULL && cpath != NULL)
					json_array_append_new(
					    unknown, json_string(cpath));
				json_object_del(value, key);
			}
			cu_free(cpath);
		}
	} else if (json_is_array(value)) {
		size_t i;
		json_t *el;

		items = json_object_get(schema, "items");
		if (items == NULL)
			return;
		json_array_foreach(value, i, el)
		{
			char *cpath = cu_asprintf("%s[%zu]", path, i);

			prune(
			    items, el, cpath ? cpath : "", unknown, depth + 1);
			cu_free(cpath);
		}
	}
}

void as_schema_apply(const struct as_kind *k, json_t *obj, json_t *unknown)
{
	const char *key;
	json_t *child, *props;
	void *tmp;

	if (k->schema != NULL) {
		props = json_object_get(k->schema, "properties");
		json_object_foreach_safe(obj, tmp, key, child)
		{
			json_t *sub;

			if (strcmp(key, "apiVersion") == 0 ||
			    strcmp(key, "kind") == 0 ||
			    strcmp(key, "metadata") == 0)
				continue;
			sub = json_object_get(props, key);
			if (sub != NULL) {
				prune(sub, child, key, unknown, 0);
			} else if (!json_is_true(json_object_get(k->schema,
				       "x-kubernetes-preserve-"
				       "unknown-fields"))) {
				if (unknown != NULL)
					json_array_append_new(
					    unknown, json_string(key));
				json_object_del(obj, key);
			}
		}
		/* Top-level defaults (rare, but part of the schema). */
		json_object_foreach(props, key, child)
		{
			json_t *def = json_object_get(child, "default");

			if (def != NULL && json_object_get(obj, key) == NULL &&
			    strcmp(key, "metadata") != 0)
				json_object_set_new(
				    obj, key, json_deep_copy(def));
		}
		return;
	}
	if (k->top_fields != NULL && unknown != NULL) {
		/* Built-ins keep what they receive (no schema here), but
		 * strict field validation still reports unknown top-level
		 * fields as a real server would. */
		json_object_foreach(obj, key, child)
		{
			size_t i;
			bool known = strcmp(key, "apiVersion") == 0 ||
				     strcmp(key, "kind") == 0 ||
				     strcmp(key, "metadata") == 0;

			for (i = 0; !known && k->top_fields[i] != NULL; i++)
				known = strcmp(k->top_fields[i], key) == 0;
			if (!known)
				json_array_append_new(
				    unknown, json_string(key));
		}
	}
}

/* ---- discovery ----------------------------------------------------- */

json_t *as_discovery_api(struct as_server *srv)
{
	char addr[64];

	snprintf(
	    addr, sizeof(addr), "%s:%u", srv->listen_host, (unsigned)srv->port);
	return json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions",
	    "versions", "v1", "serverAddressByClientCIDRs", "clientCIDR",
	    "0.0.0.0/0", "serverAddress", addr);
}

static json_t *group_doc(struct as_server *srv, const char *group)
{
	struct as_kind *k;
	json_t *versions = json_array(), *g;
	const char *preferred = NULL;

	for (k = srv->kinds; k != NULL; k = k->next) {
		size_t i;
		json_t *v;

		if (k->removed || strcmp(k->group, group) != 0)
			continue;
		if (preferred == NULL)
			preferred = k->version;
		json_array_foreach(k->versions, i, v)
		{
			size_t j;
			json_t *have;
			bool dup = false;
			char *gv;

			json_array_foreach(versions, j, have)
			{
				if (strcmp(as_jstr(have, "version"),
					json_string_value(v)) == 0)
					dup = true;
			}
			if (dup)
				continue;
			gv = cu_asprintf("%s/%s", group, json_string_value(v));
			json_array_append_new(
			    versions, json_pack("{s:s, s:s}", "groupVersion",
					  gv, "version", json_string_value(v)));
			cu_free(gv);
		}
	}
	if (preferred == NULL) {
		json_decref(versions);
		return NULL;
	}
	{
		char *gv = cu_asprintf("%s/%s", group, preferred);

		g = json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "kind",
		    "APIGroup", "apiVersion", "v1", "name", group, "versions",
		    versions, "preferredVersion", "groupVersion", gv, "version",
		    preferred);
		cu_free(gv);
	}
	return g;
}

json_t *as_discovery_group(struct as_server *srv, const char *group)
{
	json_t *g = group_doc(srv, group);

	return g != NULL ? g : as_aggregated_group(srv, group);
}

json_t *as_discovery_apis(struct as_server *srv)
{
	json_t *groups = json_array();
	struct as_kind *k, *j;

	for (k = srv->kinds; k != NULL; k = k->next) {
		json_t *g;

		if (k->removed || k->group[0] == '\0')
			continue;
		/* Only the first kind of each group emits it. */
		for (j = srv->kinds; j != k; j = j->next)
			if (!j->removed && strcmp(j->group, k->group) == 0)
				break;
		if (j != k)
			continue;
		g = group_doc(srv, k->group);
		if (g != NULL) {
			json_object_del(g, "kind");
			json_object_del(g, "apiVersion");
			json_array_append_new(groups, g);
		}
	}
	as_aggregated_groups(srv, groups);
	return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList",
	    "apiVersion", "v1", "groups", groups);
}

json_t *as_discovery_resources(
    struct as_server *srv, const char *group, const char *version)
{
	json_t *res = json_array();
	struct as_kind *k;
	bool any = false;
	char *gv;
	json_t *doc;

	for (k = srv->kinds; k != NULL; k = k->next) {
		json_t *verbs, *r;
		bool ns = (k->flags & AS_NAMESPACED) != 0;

		if (k->removed || strcmp(k->group, group) != 0 ||
		    !version_served(k, version))
			continue;
		any = true;
		if (strcmp(k->plural, "namespaces") == 0)
			verbs = json_pack("[s,s,s,s,s,s,s]", "create", "delete",
			    "get", "list", "patch", "update", "watch");
		else
			verbs = json_pack("[s,s,s,s,s,s,s,s]", "create",
			    "delete", "deletecollection", "get", "list",
			    "patch", "update", "watch");
		r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", k->plural,
		    "singularName", k->singular, "namespaced", ns, "kind",
		    k->kind, "verbs", verbs);
		if (json_array_size(k->short_names) > 0)
			json_object_set(r, "shortNames", k->short_names);
		if (json_array_size(k->categories) > 0)
			json_object_set(r, "categories", k->categories);
		json_array_append_new(res, r);
		if (k->flags & AS_STATUS) {
			char *n = cu_asprintf("%s/status", k->plural);

			json_array_append_new(res,
			    json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name",
				n, "singularName", "", "namespaced", ns, "kind",
				k->kind, "verbs", "get", "patch", "update"));
			cu_free(n);
		}
		if (k->flags & AS_SCALE) {
			char *n = cu_asprintf("%s/scale", k->plural);

			json_array_append_new(res,
			    json_pack("{s:s, s:s, s:b, s:s, s:s, s:s, "
				      "s:[s,s,s]}",
				"name", n, "singularName", "", "namespaced", ns,
				"group", "autoscaling", "version", "v1", "kind",
				"Scale", "verbs", "get", "patch", "update"));
			cu_free(n);
		}
		if (strcmp(k->plural, "namespaces") == 0 && k->group[0] == '\0')
			json_array_append_new(
			    res, json_pack("{s:s, s:s, s:b, s:s, s:[s]}",
				     "name", "namespaces/finalize",
				     "singularName", "", "namespaced", false,
				     "kind", "Namespace", "verbs", "update"));
	}
	if (!any) {
		json_decref(res);
		return NULL;
	}
	gv = group[0] ? cu_asprintf("%s/%s", group, version)
		      : cu_strdup(version);
	doc = json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList",
	    "apiVersion", "v1", "groupVersion", gv, "resources", res);
	cu_free(gv);
	return doc;
}
