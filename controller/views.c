/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/views.c - read-only views of the informer caches for the pure
 * layers: namespace labels and the gate's owner lookup, priority classes,
 * admitted flavors, and the admission webhook handlers' view; starting
 * the webhook server and the certificate rotation, which use them.
 */
#include <string.h>

#include "controller/ctl_int.h"

const char *ctl_ns_label(const char *key, void *payload)
{
	json_t *labels = json_object_get(
	    json_object_get((json_t *)payload, "metadata"), "labels");

	return json_string_value(json_object_get(labels, key));
}

/* Owner lookup for the gate, over the job caches. */
int ctl_gate_lookup(const struct ns_gate_owner *ref, const char *ns,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	ctl *c = payload;
	enum ns_gate_kind kind = ns_gate_kind_of(ref->api_version, ref->kind);
	enum inf_id id = ctl_fw_inf(ref->kind);
	api_informer *inf =
	    kind != NS_GATE_KIND_OTHER && id != INF__COUNT ? c->inf[id] : NULL;
	json_t *obj = inf ? api_informer_get(inf, ns, ref->name) : NULL;

	if (obj == NULL)
		return CU_ENOTFOUND;
	return ns_gate_object_from_json(out, obj, err);
}

/* Priority lookups over the class caches (api_resolve_priority). The
 * value is decoded, never cast: one outside int32 is an error naming the
 * class, not a wrapped priority. */
static int wpc_value(json_t *o, int32_t *value, cu_error *err)
{
	struct api_workload_priority_class w;
	int rc = api_workload_priority_class_decode(&w, o, err);

	if (rc == CU_OK) {
		*value = w.value;
		api_workload_priority_class_dispose(&w);
	}
	return rc;
}

static int pc_value(json_t *o, int32_t *value, cu_error *err)
{
	struct api_priority_class pc;
	int rc = api_priority_class_decode(&pc, o, err);

	if (rc == CU_OK) {
		*value = pc.value;
		api_priority_class_dispose(&pc);
	}
	return rc;
}

static int class_value(api_informer *inf, const char *kind,
    int (*decode)(json_t *, int32_t *, cu_error *), const char *name,
    int32_t *value, cu_error *err)
{
	json_t *o = api_informer_get(inf, NULL, name);
	cu_error local;

	if (o == NULL)
		return CU_ENOTFOUND;
	cu_error_clear(&local);
	if (decode(o, value, &local) != CU_OK)
		return cu_error_set(
		    err, local.code, "%s \"%s\": %s", kind, name, local.msg);
	return CU_OK;
}

int ctl_lookup_wpc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	return class_value(((ctl *)payload)->inf[INF_WPC],
	    "WorkloadPriorityClass", wpc_value, name, value, err);
}

int ctl_lookup_pc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	return class_value(((ctl *)payload)->inf[INF_PC], "PriorityClass",
	    pc_value, name, value, err);
}

struct global_default {
	const char *name;
	int32_t value;
};

static void find_global_default(json_t *pc, void *payload)
{
	struct global_default *g = payload;
	int32_t v;
	cu_error err;

	cu_error_clear(&err);
	if (!json_is_true(json_object_get(pc, "globalDefault")) ||
	    pc_value(pc, &v, &err) != CU_OK)
		return;
	if (g->name == NULL || v < g->value) {
		g->name = ctl_jmeta(pc, "name");
		g->value = v;
	}
}

int ctl_lookup_pc_default(
    const char **name, int32_t *value, void *payload, cu_error *err)
{
	ctl *c = payload;
	struct global_default g = {NULL, 0};

	(void)err;
	api_informer_foreach(c->inf[INF_PC], find_global_default, &g);
	if (g.name == NULL)
		return CU_ENOTFOUND;
	*name = g.name;
	*value = g.value;
	return CU_OK;
}

/* Decoded ResourceFlavors named by the Workload's admission. */
int ctl_admitted_flavors(ctl *c, const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, cu_error *err)
{
	size_t i, j, cap = 0;
	struct api_resource_flavor *v = NULL;

	*out = NULL;
	*n = 0;
	for (i = 0; i < wl->status.admission.n_pod_set_assignments; i++) {
		const struct api_podset_assignment *a =
		    &wl->status.admission.pod_set_assignments[i];

		for (j = 0; j < a->flavors.n; j++) {
			const char *fname = a->flavors.items[j].value;
			json_t *obj =
			    api_informer_get(c->inf[INF_RF], NULL, fname);
			size_t k;
			bool dup = false;

			for (k = 0; k < *n; k++)
				dup = dup || strcmp(v[k].meta.name, fname) == 0;
			if (dup || obj == NULL)
				continue;
			if (cu_grow((void **)&v, &cap, *n + 1, sizeof(*v)) !=
			    CU_OK) {
				cu_error_set(err, CU_ENOMEM, "out of memory");
				goto fail;
			}
			if (api_resource_flavor_decode(&v[*n], obj, err) !=
			    CU_OK)
				goto fail;
			(*n)++;
		}
	}
	*out = v;
	return CU_OK;
fail:
	for (i = 0; i < *n; i++)
		api_resource_flavor_dispose(&v[i]);
	cu_free(v);
	*n = 0;
	return err->code;
}

static bool wh_ready(void *payload)
{
	return ((ctl *)payload)->synced;
}

static int wh_namespace(const char *name, struct ns_gate_namespace *out,
    void *payload, cu_error *err)
{
	ctl *c = payload;
	json_t *nsobj = api_informer_get(c->inf[INF_NS], NULL, name);

	(void)err;
	out->name = name;
	out->found = nsobj != NULL;
	out->get = ctl_ns_label;
	out->payload = nsobj;
	return CU_OK;
}

static int wh_local_queue(const char *ns, const char *name, bool *exists,
    void *payload, cu_error *err)
{
	ctl *c = payload;

	(void)err;
	*exists = api_informer_get(c->inf[INF_LQ], ns, name) != NULL;
	return CU_OK;
}

static bool wh_default_wpc(void *payload)
{
	ctl *c = payload;

	/* WorkloadPriorityClassDefaulting off: no label either. */
	return c->cfg->job_gates.wpc_defaulting && c->inf[INF_WPC] != NULL &&
	       api_informer_get(c->inf[INF_WPC], NULL, API_DEFAULT_WPC_NAME) !=
		   NULL;
}

/* The state w [borrowed] gives the webhook, or'ed into out. */
static void wl_state(
    const struct api_workload *w, struct wh_workload_state *out)
{
	bool held = rec_workload_holds_quota(w) &&
		    !api_conditions_true(&w->status.conditions, "Finished");

	out->quota_reserved |= held;
	out->admitted |=
	    held && api_conditions_true(&w->status.conditions, "Admitted");
	out->on_hold |= rec_workload_on_hold(w);
}

static int wh_workload_named(const char *ns, const char *name,
    struct wh_workload_state *out, void *payload, cu_error *err)
{
	ctl *c = payload;
	json_t *wl = api_informer_get(c->inf[INF_WL], ns, name);
	struct api_workload w;
	int rc;

	memset(out, 0, sizeof(*out));
	if (wl == NULL)
		return CU_ENOTFOUND;
	rc = api_workload_decode(&w, wl, err);
	if (rc != CU_OK)
		return rc;
	wl_state(&w, out);
	api_workload_dispose(&w);
	return CU_OK;
}

static const char *wh_lws_uid(const char *ns, const char *name, void *payload)
{
	ctl *c = payload;

	return c->inf[INF_LWS] != NULL
		   ? ctl_jmeta(
			 api_informer_get(c->inf[INF_LWS], ns, name), "uid")
		   : NULL;
}

static void owned_state(json_t *obj, void *payload)
{
	struct api_workload w;
	cu_error err;

	cu_error_clear(&err);
	if (api_workload_decode(&w, obj, &err) != CU_OK)
		return;
	wl_state(&w, payload);
	api_workload_dispose(&w);
}

static int wh_workload(const struct wh_job_ref *job,
    struct wh_workload_state *out, void *payload, cu_error *err)
{
	ctl *c = payload;
	const char *group = "", *kind = "";
	char *wlname = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!ns_gate_kind_names(job->kind, &group, &kind, NULL))
		return CU_ENOTFOUND;
	rc = api_workload_name(kind, group, job->name, job->uid, -1,
	    API_WORKLOAD_NAME_MAX, &wlname, err);
	if (rc != CU_OK)
		return rc;
	rc = wh_workload_named(job->namespace_, wlname, out, payload, err);
	cu_free(wlname);
	if (rc != CU_ENOTFOUND)
		return rc;
	/* An elastic job's slices are named with its generation: the
	 * Workloads it owns. */
	if (job->uid == NULL || job->uid[0] == '\0' ||
	    api_informer_foreach_owned(
		c->inf[INF_WL], job->uid, owned_state, out) == 0)
		return CU_ENOTFOUND;
	return CU_OK;
}

static bool certrot_may_run(void *payload)
{
	return ctl_may_write(payload);
}

/* internalCertManagement: the leader keeps the Secret, the caBundles
 * and the files in certDir. */
int ctl_start_certrot(ctl *c, cu_error *err)
{
	struct ctl_certrot_opts o;

	if (!c->cfg->internal_cert.enable)
		return CU_OK;
	memset(&o, 0, sizeof(o));
	o.client = c->client;
	o.namespace_ = c->cfg->namespace;
	o.secret_name = c->cfg->internal_cert.webhook_secret_name;
	o.service_name = c->cfg->internal_cert.webhook_service_name;
	o.cert_dir = c->cfg->webhook.cert_dir;
	o.may_run = certrot_may_run;
	o.payload = c;
	return ctl_certrot_new(&c->srv.certrot, c->loop, &o, err);
}

/* The visibility API's view of the Workload cache. */
static json_t *vis_workload(const char *ns, const char *name, void *payload)
{
	ctl *c = payload;

	return c->inf[INF_WL] ? api_informer_get(c->inf[INF_WL], ns, name)
			      : NULL;
}

/* The visibility server could not start: stop, as Kueue exits. */
static void vis_failed(const cu_error *err, void *payload)
{
	ctl *c = payload;

	(void)err;
	c->failed = true;
	ev_break(c->loop, EVBREAK_ALL);
}

/* The visibility API's own server (controller/vauth.h), when the
 * VisibilityOnDemand feature gate is on. */
int ctl_start_visibility(ctl *c, cu_error *err)
{
	struct ctl_vauth_opts o;
	const char *a = c->cfg->visibility.bind_address;
	char *listen;
	int rc;

	if (!c->cfg->visibility.enable)
		return CU_OK;
	c->srv.vis.st = c->st;
	c->srv.vis.workload = vis_workload;
	c->srv.vis.payload = c;
	listen = cu_asprintf(
	    a != NULL && strchr(a, ':') != NULL ? "[%s]:%d" : "%s:%d",
	    a != NULL ? a : "", c->cfg->visibility.bind_port);
	if (listen == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	memset(&o, 0, sizeof(o));
	o.listen = listen;
	o.namespace_ = c->cfg->namespace;
	o.cert_dir = c->opts.visibility_cert_dir;
	o.tls_priorities = c->cfg->tls.priorities;
	o.vis = &c->srv.vis;
	o.failed = vis_failed;
	o.payload = c;
	o.review_client = c->auth_client;
	rc = ctl_vauth_start(&c->srv.vauth, c->loop, c->client, &o, err);
	cu_free(listen);
	return rc;
}

/* The admission-webhook server; it serves once its certificate is
 * mounted. */
int ctl_start_webhook(ctl *c, cu_error *err)
{
	struct ctl_whsrv_opts o;
	char *listen;
	int rc;

	if (c->cfg->webhook.port <= 0)
		return CU_OK;
	c->srv.wh.gate = &c->gate;
	c->srv.wh.namespace_get = wh_namespace;
	c->srv.wh.owner_lookup = ctl_gate_lookup;
	c->srv.wh.local_queue_exists = wh_local_queue;
	c->srv.wh.workload_state = wh_workload;
	c->srv.wh.workload_named = wh_workload_named;
	c->srv.wh.lws_uid = wh_lws_uid;
	c->srv.wh.default_wpc_exists = wh_default_wpc;
	c->srv.wh.own_username = c->opts.own_username;
	c->srv.wh.no_admission_gated_by = !c->cfg->job_gates.admission_gated_by;
	c->srv.wh.no_elastic_jobs = !c->cfg->job_gates.elastic_jobs;
	c->srv.wh.deployment = c->cfg->integrations.deployment;
	c->srv.wh.statefulset = c->cfg->integrations.statefulset;
	c->srv.wh.leaderworkerset = c->cfg->integrations.leaderworkerset;
	c->srv.wh.payload = c;
	listen = cu_asprintf("%s:%d",
	    c->cfg->webhook.host ? c->cfg->webhook.host : "",
	    c->cfg->webhook.port);
	if (listen == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	memset(&o, 0, sizeof(o));
	o.listen = listen;
	o.cert_dir = c->cfg->webhook.cert_dir;
	o.wh = &c->srv.wh;
	o.ready = wh_ready;
	o.tls_priorities = c->cfg->tls.priorities;
	rc = ctl_whsrv_new(&c->srv.webhook, c->loop, &o, err);
	cu_free(listen);
	return rc;
}
