/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/ctl.c - the cueue controller process (see ctl.h): the
 * wiring. Informers mark objects dirty; the turn runs the reconcilers
 * (controller/reconcilers.c) and the subsystems of the other
 * files (listed in ctl_int.h), which queue writes into the pipeline
 * (pipeline.h); the turn ends with the pipeline's flush. Lifecycle and
 * leadership live here too.
 *
 * Design notes
 * ------------
 * Informer handlers only mark objects dirty; all work happens in one
 * ev_prepare callback per loop turn ("the turn"), so a burst of watch
 * events costs one pass:
 *
 *   turn:  config dirty?  -> ResourceFlavors, ClusterQueues, Cohorts,
 *                            LocalQueues into the engine (feed.c,
 *                            reconcile/sync.c)
 *          Workloads dirty -> engine add / remove / release / adopt
 *          may write?     -> one admission cycle (admission/, decide.c)
 *                            decisions -> ledger (reserved) + writes queued
 *          ledger commit  -> only then the queued writes are sent
 *                            (pipeline.c)
 *
 * Invariants:
 *  1. A decision is in the ledger, committed, before the write that
 *     announces it leaves the process (docs/architecture.md lesson 3).
 *     After a restart, Workloads whose status holds quota are adopted by
 *     the engine from their status (reconcile/sync.c), never decided
 *     again.
 *  2. No write is sent that would not change the object: every status
 *     patch comes from reconcile/workload.c, which returns NULL when the
 *     object already says it (docs/architecture.md lesson 4); ClusterQueue
 *     status is compared with the cached object before writing.
 *  3. While an admission write is in flight for a Workload, its cached
 *     (older) state is not reconciled against the engine: the write's
 *     answer settles it (decide.c; success: ledger ADMITTED; failure: the
 *     engine unadmits and the ledger forgets).
 *  4. Nothing writes before every informer synced, and only the leader
 *     writes (with leader election off, this process is the leader).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/certs.h"
#include "controller/ctl_int.h"

const struct api_resource ctl_resources[INF__COUNT] = {
    [INF_NS] = {"", "v1", "namespaces", false},
    [INF_RF] = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false},
    [INF_CQ] = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false},
    [INF_LQ] = {"kueue.x-k8s.io", "v1beta2", "localqueues", true},
    [INF_COHORT] = {"kueue.x-k8s.io", "v1beta2", "cohorts", false},
    [INF_WL] = {"kueue.x-k8s.io", "v1beta2", "workloads", true},
    [INF_WPC] = {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false},
    [INF_PC] = {"scheduling.k8s.io", "v1", "priorityclasses", false},
    [INF_ACHECK] = {"kueue.x-k8s.io", "v1beta2", "admissionchecks", false},
    [INF_PRC] = {"kueue.x-k8s.io", "v1beta2", "provisioningrequestconfigs",
	false},
    [INF_PROVREQ] = {"autoscaling.x-k8s.io", "v1", "provisioningrequests",
	true},
    [INF_PODTEMPLATE] = {"", "v1", "podtemplates", true},
    [INF_DEVICECLASS] = {"resource.k8s.io", "v1", "deviceclasses", false},
    [INF_RCT] = {"resource.k8s.io", "v1", "resourceclaimtemplates", true},
    [INF_RSLICE] = {"resource.k8s.io", "v1", "resourceslices", false},
    [INF_TRAINRT] = {"trainer.kubeflow.org", "v1alpha1", "trainingruntimes",
	true},
    [INF_CTRAINRT] = {"trainer.kubeflow.org", "v1alpha1",
	"clustertrainingruntimes", false},
    [INF_JOB] = {"batch", "v1", "jobs", true},
    [INF_JOBSET] = {"jobset.x-k8s.io", "v1alpha2", "jobsets", true},
    [INF_PYTORCHJOB] = {"kubeflow.org", "v1", "pytorchjobs", true},
    [INF_TFJOB] = {"kubeflow.org", "v1", "tfjobs", true},
    [INF_XGBOOSTJOB] = {"kubeflow.org", "v1", "xgboostjobs", true},
    [INF_PADDLEJOB] = {"kubeflow.org", "v1", "paddlejobs", true},
    [INF_JAXJOB] = {"kubeflow.org", "v1", "jaxjobs", true},
    [INF_MPIJOB] = {"kubeflow.org", "v2beta1", "mpijobs", true},
    [INF_RAYJOB] = {"ray.io", "v1", "rayjobs", true},
    [INF_RAYCLUSTER] = {"ray.io", "v1", "rayclusters", true},
    [INF_APPWRAPPER] = {"workload.codeflare.dev", "v1beta2", "appwrappers",
	true},
    [INF_POD] = {"", "v1", "pods", true},
    [INF_STATEFULSET] = {"apps", "v1", "statefulsets", true},
    [INF_LWS] = {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", true},
    [INF_RAYSERVICE] = {"ray.io", "v1", "rayservices", true},
    [INF_SPARKAPP] = {"sparkoperator.k8s.io", "v1beta2", "sparkapplications",
	true},
    [INF_TRAINJOB] = {"trainer.kubeflow.org", "v1alpha1", "trainjobs", true},
};

const struct api_resource ctl_res_events = {
    "events.k8s.io", "v1", "events", true};

/* ---- small helpers ------------------------------------------------- */

const char *ctl_jmeta(json_t *obj, const char *field)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), field));
}

bool ctl_may_write(const ctl *c)
{
	/* ctl_leader_is_leader, not only c->leading: after a stall the
	 * callback that ends the term may run after the one writing. */
	return c->synced && !c->stopping &&
	       (c->leader == NULL ||
		   (c->leading && ctl_leader_is_leader(c->leader)));
}

/* The informer whose cache an expectation key is about (the pipeline's
 * hook). Queue status keys (ClusterQueue, LocalQueue) get the JobSet
 * informer's (or none): as before the pipeline was split out. */
static api_informer *expect_informer(const char *const *key, void *payload)
{
	ctl *c = payload;

	if (strcmp(key[0], CTL_KIND_WL) == 0)
		return c->inf[INF_WL];
	if (strcmp(key[0], "ProvisioningRequest") == 0)
		return c->inf[INF_PROVREQ];
	if (strcmp(key[0], "PodTemplate") == 0)
		return c->inf[INF_PODTEMPLATE];
	if (strcmp(key[0], "AdmissionCheck") == 0)
		return c->inf[INF_ACHECK];
	if (strcmp(key[0], "MultiKueueCluster") == 0)
		return ctl_mk_informer(c);
	enum inf_id id = ctl_fw_inf(key[0]);

	return c->inf[id == INF__COUNT ? INF_JOBSET : id];
}

/* ---- informer handlers -------------------------------------------- */

/* kind: CTL_KIND_JOB or CTL_KIND_JOBSET. */
static void mark_job(ctl *c, const char *kind, const char *ns, const char *name)
{
	if (name != NULL)
		(void)ctl_keys_put(
		    &c->dirty_jobs, CTL_K3(kind, ns ? ns : "", name));
}

struct ns_jobs {
	ctl *c;
	const char *kind;
	const char *ns;
};

static void mark_ns_job(json_t *obj, void *payload)
{
	struct ns_jobs *n = payload;
	const char *ns = ctl_jmeta(obj, "namespace");

	if (ns != NULL && strcmp(ns, n->ns) == 0)
		mark_job(n->c, n->kind, ns, ctl_jmeta(obj, "name"));
}

/* A namespace's labels decide the gate for its jobs: look at them again
 * (new decisions only; the gate never undoes an admission). */
static void mark_namespace_jobs(ctl *c, const char *ns)
{
	struct ns_jobs n = {c, CTL_KIND_JOB, ns};
	size_t i;

	if (ns == NULL)
		return;
	for (i = INF_JOB; i < INF__COUNT; i++) {
		n.kind = ctl_fw_kind((enum inf_id)i);
		if (c->inf[i] != NULL)
			api_informer_foreach(c->inf[i], mark_ns_job, &n);
	}
}

static void mark(ctl *c, enum inf_id id, json_t *obj)
{
	if (id == INF_JOB || id == INF_WL)
		ctl_egate_mark(c, id, obj);
	if (id == INF_WL) {
		const char *ns = ctl_jmeta(obj, "namespace");
		const char *wlname = ctl_jmeta(obj, "name");
		json_t *refs = json_object_get(
		    json_object_get(obj, "metadata"), "ownerReferences");
		json_t *r;
		size_t i;

		if (wlname != NULL)
			(void)ctl_keys_put(
			    &c->dirty_wl, CTL_K2(ns ? ns : "", wlname));
		/* A Workload change is news for the job that owns it. */
		json_array_foreach(refs, i, r)
		{
			const char *kind =
			    json_string_value(json_object_get(r, "kind"));
			const char *name =
			    json_string_value(json_object_get(r, "name"));

			/* A pod group's Workload is owned by its Pods (or
			 * its StatefulSet), none of them its controller, and
			 * named after it. */
			if (kind != NULL &&
			    (strcmp(kind, "Pod") == 0 ||
				strcmp(kind, "StatefulSet") == 0 ||
				strcmp(kind, "LeaderWorkerSet") == 0) &&
			    !json_is_true(json_object_get(r, "controller")) &&
			    wlname != NULL)
				mark_job(c, CTL_KIND_POD_GROUP, ns, wlname);
			/* ... and for its LeaderWorkerSet (a group's
			 * Workload deleted is made anew). */
			if (kind != NULL && name != NULL &&
			    strcmp(kind, "LeaderWorkerSet") == 0)
				mark_job(c, kind, ns, name);
			if (!json_is_true(json_object_get(r, "controller")) ||
			    kind == NULL || name == NULL)
				continue;
			if (ctl_fw_inf(kind) != INF__COUNT)
				mark_job(
				    c, ctl_fw_kind(ctl_fw_inf(kind)), ns, name);
		}
	} else if (id == INF_DEVICECLASS || id == INF_RCT || id == INF_RSLICE) {
		ctl_dra_mark(c);
		return;
	} else if (id == INF_PROVREQ || id == INF_PODTEMPLATE) {
		ctl_provreq_mark(c, id, obj);
		return;
	} else if (id == INF_TRAINRT || id == INF_CTRAINRT) {
		ctl_fw_runtime_mark(c, id, obj);
		return;
	} else if (ctl_fw_is_job(id)) {
		const char *group =
		    id == INF_POD ? ctl_pod_group_of(obj) : NULL;

		if (group != NULL)
			mark_job(c, CTL_KIND_POD_GROUP,
			    ctl_jmeta(obj, "namespace"), group);
		/* A LeaderWorkerSet's Pod is news for it (Kueue watches
		 * them): the Workload of a group without Pods may go. */
		if (group != NULL && c->inf[INF_LWS] != NULL &&
		    ctl_lws_of_pod(obj) != NULL)
			mark_job(c, "LeaderWorkerSet",
			    ctl_jmeta(obj, "namespace"), ctl_lws_of_pod(obj));
		else
			mark_job(c, ctl_fw_kind(id),
			    ctl_jmeta(obj, "namespace"),
			    ctl_jmeta(obj, "name"));
		return;
	} else {
		if (id == INF_NS)
			mark_namespace_jobs(c, ctl_jmeta(obj, "name"));
		c->dirty_config = true;
	}
	c->dirty_cycle = true;
}

/* Is obj the generation old [either borrowed; old may be NULL] was? */
static bool same_generation(json_t *old, json_t *obj)
{
	return old != NULL &&
	       json_equal(json_object_get(
			      json_object_get(old, "metadata"), "generation"),
		   json_object_get(
		       json_object_get(obj, "metadata"), "generation"));
}

/* A ClusterQueue generation that sets spec fields cueue does not act on
 * gets one UnsupportedField Warning event naming them (the table of
 * controller/compat.c). */
static void warn_cq_unsupported(ctl *c, json_t *old, json_t *obj)
{
	struct api_cluster_queue cq;
	char msg[1024];
	cu_error err;

	if (same_generation(old, obj))
		return;
	cu_error_clear(&err);
	if (api_cluster_queue_decode(&cq, obj, &err) != CU_OK)
		return;
	if (ctl_cq_unsupported(&cq, msg, sizeof(msg)) > 0)
		ctl_emit(c, obj, REC_EVENT_WARNING, "UnsupportedField", msg);
	api_cluster_queue_dispose(&cq);
}

/* The same for a ResourceFlavor (spec.topologyName). */
static void warn_rf_unsupported(ctl *c, json_t *old, json_t *obj)
{
	struct api_resource_flavor rf;
	char msg[1024];
	cu_error err;

	if (same_generation(old, obj))
		return;
	cu_error_clear(&err);
	if (api_resource_flavor_decode(&rf, obj, &err) != CU_OK)
		return;
	if (ctl_rf_unsupported(&rf, msg, sizeof(msg)) > 0)
		ctl_emit(c, obj, REC_EVENT_WARNING, "UnsupportedField", msg);
	api_resource_flavor_dispose(&rf);
}

static void on_add(json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	if (s->id == INF_CQ)
		warn_cq_unsupported(s->c, NULL, obj);
	else if (s->id == INF_RF)
		warn_rf_unsupported(s->c, NULL, obj);
	mark(s->c, s->id, obj);
}

/* Did anything but status (and bookkeeping metadata) change? */
static bool beyond_status(json_t *old, json_t *obj)
{
	static const char *const md[] = {"labels", "annotations", "finalizers",
	    "deletionTimestamp", "uid", NULL};
	json_t *om = json_object_get(old, "metadata"),
	       *nm = json_object_get(obj, "metadata");
	size_t i;

	if (!json_equal(
		json_object_get(old, "spec"), json_object_get(obj, "spec")) &&
	    (json_object_get(old, "spec") || json_object_get(obj, "spec")))
		return true;
	for (i = 0; md[i] != NULL; i++) {
		json_t *a = json_object_get(om, md[i]),
		       *b = json_object_get(nm, md[i]);

		if ((a || b) && !json_equal(a, b))
			return true;
	}
	return false;
}

static void on_update(json_t *old, json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	/* Queue status is ours (written on the tick from the engine): its
	 * echo is no news for the configuration, and re-reading it would
	 * re-examine every Workload on every status write. */
	if ((s->id == INF_CQ || s->id == INF_LQ) && old != NULL &&
	    !beyond_status(old, obj))
		return;
	if (s->id == INF_CQ)
		warn_cq_unsupported(s->c, old, obj);
	else if (s->id == INF_RF)
		warn_rf_unsupported(s->c, old, obj);
	mark(s->c, s->id, obj);
}

static void on_delete(json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	mark(s->c, s->id, obj);
}

/* The ProvisioningRequest API appeared after the start (its CRD
 * installed later): every Workload is looked at again. */
static void on_synced(void *payload)
{
	struct inf_slot *s = payload;

	if (s->id == INF_PROVREQ && s->c->synced)
		s->c->dirty_config = true;
}

static void mark_all_workloads(json_t *obj, void *payload)
{
	ctl *c = payload;

	mark(c, INF_WL, obj);
}

/* ---- the pipeline's hooks (settle: decide.c) ------------------------ */

static void stop_writes_done(ctl *c);

/* An expectation or owner key is to be looked at again. */
static void mark_key(const char *const *key, void *payload)
{
	ctl *c = payload;

	if (ctl_fw_inf(key[0]) != INF__COUNT)
		(void)ctl_keys_put(&c->dirty_jobs, key);
	else if (strcmp(key[0], CTL_KIND_WL) == 0)
		(void)ctl_keys_put(&c->dirty_wl, key + 1);
}

static void drained(void *payload)
{
	stop_writes_done(payload);
}

/* ---- the turn -------------------------------------------------------- */

/* An integration whose API the server does not serve (the JobSet CRD not
 * installed) does not hold readiness back: as Kueue, the controller says
 * so once and takes the integration up when the API appears (its
 * informer keeps asking). */
static bool integration_absent(ctl *c, size_t i)
{
	const struct api_resource *r = &ctl_resources[i];
	bool absent = api_informer_absent(c->inf[i]);

	if (absent && !c->inf_absent[i] && i != INF_ACHECK && i != INF_PRC &&
	    i != INF_PROVREQ && i != INF_PODTEMPLATE && i != INF_DEVICECLASS &&
	    i != INF_RCT && i != INF_RSLICE && i != INF_TRAINRT &&
	    i != INF_CTRAINRT)
		cu_warn("%s.%s is not served by the API server: the %s "
			"integration waits for %s/%s",
		    r->plural, r->group,
		    i == INF_JOB      ? "batch/job"
		    : i == INF_JOBSET ? "JobSet"
				      : rec_fw_at(i - INF_JOB)->name,
		    r->group, r->version);
	c->inf_absent[i] = absent;
	return absent;
}

static bool all_synced(ctl *c)
{
	size_t i;

	for (i = 0; i < INF__COUNT; i++) {
		bool optional =
		    ctl_fw_is_job((enum inf_id)i) || i == INF_ACHECK ||
		    i == INF_PRC || i == INF_PROVREQ || i == INF_PODTEMPLATE ||
		    i == INF_DEVICECLASS || i == INF_RCT || i == INF_RSLICE ||
		    i == INF_TRAINRT || i == INF_CTRAINRT;

		if (c->inf[i] == NULL) {
			if (!optional)
				return false;
		} else if (!api_informer_synced(c->inf[i]) &&
			   !(optional && integration_absent(c, i))) {
			return false;
		}
	}
	return true;
}

#ifdef CUEUE_CHECK_INVARIANTS
/* Debug, ASan and coverage builds: the engine's structural invariants
 * (queues.h, 1, 2 and 4) after every turn, and the ledger's agreement
 * with the engine (ctl_pipe_check_ledger; where this replica writes, once
 * the ledger's decisions were resumed) after every turn it is due (it
 * reads every live decision: paced to about 5% of the time), so every
 * integration test checks them; a violation is a programming error. */
static void check_invariants(ctl *c)
{
	cu_error err;

	if (c->st != NULL && que_check_structure(c->st, &err) != CU_OK) {
		cu_errorf("engine invariant violated: %s", err.msg);
		cu_assert_fail("que_check_structure", __FILE__, __LINE__);
	}
	if (c->st != NULL && c->pipe != NULL && c->resumed &&
	    ctl_may_write(c) && ctl_pipe_check_ledger_due(c->pipe) &&
	    ctl_pipe_check_ledger(c->pipe, c->st, &err) != CU_OK) {
		cu_errorf("ledger and engine disagree: %s", err.msg);
		cu_assert_fail("ctl_pipe_check_ledger", __FILE__, __LINE__);
	}
}
#else
static void check_invariants(ctl *c)
{
	(void)c;
}
#endif

static void turn(ctl *c)
{
	int64_t now = cu_time_now_ns();
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	if (c->freeing)
		return;
	if (!c->synced) {
		if (!all_synced(c))
			return;
		c->synced = true;
		c->dirty_config = true;
		ctl_certrot_run(c->srv.certrot);
		api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
		cu_info("informers synced: %zu workloads, %zu cluster queues",
		    api_informer_count(c->inf[INF_WL]),
		    api_informer_count(c->inf[INF_CQ]));
	}
	if (c->dirty_config && ctl_config_due(c)) {
		ctl_sync_config(c);
		ctl_tas_sync_config(c);
		ctl_provreq_sync_checks(c);
		/* Eligibility and routing may have changed for all. */
		api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
	}
	/* Dirty sets in insertion order (as before: deterministic). */
	ctl_keys_init(&batch, 2);
	ctl_keys_move(&batch, &c->dirty_wl);
	if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++) {
			ctl_reconcile_workload(
			    c, (const char *const *)v[i]->k, now);
			ctl_provreq_workload(c, (const char *const *)v[i]->k);
			ctl_mk_workload(c, (const char *const *)v[i]->k);
			ctl_retention_workload(
			    c, (const char *const *)v[i]->k, now);
		}
		cu_free(v);
	}
	ctl_keys_dispose(&batch);
	if (ctl_may_write(c) && !c->resumed) {
		c->resumed = true;
		ctl_resume_ledger(c, now);
	}
	if (ctl_may_write(c)) {
		ctl_keys_init(&batch, 3);
		ctl_keys_move(&batch, &c->dirty_jobs);
		if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
			for (i = 0; i < n; i++)
				ctl_reconcile_job(
				    c, (const char *const *)v[i]->k, now);
			cu_free(v);
		}
		ctl_keys_dispose(&batch);
	}
	if (ctl_may_write(c) && ctl_keys_count(&c->dec.deferred) > 0)
		ctl_announce_deferred(c, now);
	/* The first cycle orders by the usage the LocalQueues' status
	 * recorded (a restart), not by none. */
	if (ctl_may_write(c) && !c->afs.primed)
		ctl_afs_pass(c, now);
	if (ctl_may_write(c))
		ctl_tas_ungate(c, now);
	if (ctl_may_write(c))
		ctl_egate_turn(c, now);
	if (ctl_may_write(c) && c->dirty_cycle) {
		ctl_tas_before_cycle(c, now);
		ctl_run_cycle(c, now);
	}
	ctl_mk_turn(c, now);
	if (ctl_may_write(c) && c->rep.pending_scan) {
		c->rep.pending_scan = false;
		ctl_report_pending(c, now);
	}
	ctl_pipe_flush(c->pipe);
	check_invariants(c);
}

static void on_turn(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	turn(w->data);
}

/* ---- health ------------------------------------------------------ */

static int check_synced(cu_error *err, void *payload)
{
	ctl *c = payload;

	return c->synced ? CU_OK
			 : cu_error_set(
			       err, CU_EAGAIN, "informers have not synced yet");
}

/* The API server answers: else /readyz?verbose says why, in words. */
static int check_api(cu_error *err, void *payload)
{
	ctl *c = payload;
	const char *why = api_client_unreachable(c->client);

	return why == NULL ? CU_OK
			   : cu_error_set(err, CU_EIO, "API server %s: %s",
				 c->copts.server, why);
}

static int check_ledger(cu_error *err, void *payload)
{
	ctl *c = payload;

	if (c->ledger == NULL)
		return cu_error_set(err, CU_EIO, "ledger not open");
	if (c->pipe != NULL && ctl_pipe_ledger_error(c->pipe)[0] != '\0')
		return cu_error_set(err, CU_EIO,
		    "ledger: the last commit failed: %s",
		    ctl_pipe_ledger_error(c->pipe));
	return CU_OK;
}

/* ---- lifecycle ------------------------------------------------------ */

/* The secure metrics server's certificate: self-signed, made at start-up
 * for the metrics Service's names (controller-runtime's default when no
 * certificate directory is given; scrapers skip verification or pin it). */
static int metrics_certs(ctl *c, struct ctl_certs *out, cu_error *err)
{
	const char *ns = c->cfg->namespace ? c->cfg->namespace : "cueue-system";
	char *names[3];
	struct ctl_certs_request req;
	int rc;

	names[0] = cu_asprintf("cueue-controller-metrics.%s.svc", ns);
	names[1] =
	    cu_asprintf("cueue-controller-metrics.%s.svc.cluster.local", ns);
	names[2] = cu_strdup("localhost");
	memset(&req, 0, sizeof(req));
	req.dns_names = (const char *const *)names;
	req.n_dns_names = 3;
	req.ca_name = "cueue-metrics-ca";
	rc = names[0] && names[1] && names[2]
		 ? ctl_certs_generate(&req, out, err)
		 : cu_error_set(err, CU_ENOMEM, "out of memory");
	cu_free(names[0]);
	cu_free(names[1]);
	cu_free(names[2]);
	if (rc != CU_OK)
		return rc;
	cu_free(out->ca_key_pem);
	out->ca_key_pem = NULL;
	return CU_OK;
}

static int start_http(ctl *c, cu_error *err)
{
	struct ctl_httpd_opts o;
	const char *probe = c->cfg->health.probe_bind_address;
	const char *maddr = c->cfg->metrics.bind_address;
	int rc;

	rc = ctl_health_new(&c->srv.health, err);
	if (rc == CU_OK)
		rc = ctl_health_add_check(
		    c->srv.health, "api-server", check_api, c, err);
	if (rc == CU_OK)
		rc = ctl_health_add_check(
		    c->srv.health, "informers-synced", check_synced, c, err);
	if (rc == CU_OK)
		rc = ctl_health_add_check(
		    c->srv.health, "ledger-open", check_ledger, c, err);
	if (rc != CU_OK)
		return rc;
	if (probe != NULL && probe[0] != '\0' && strcmp(probe, "0") != 0) {
		memset(&o, 0, sizeof(o));
		o.name = "health";
		o.listen = probe;
		rc = ctl_httpd_new(&c->srv.probe_srv, c->loop, &o, err);
		if (rc == CU_OK)
			rc = ctl_health_mount_at(c->srv.health,
			    c->srv.probe_srv, c->cfg->health.readiness_endpoint,
			    c->cfg->health.liveness_endpoint, err);
		if (rc != CU_OK)
			return rc;
	}
	if (maddr != NULL && maddr[0] != '\0' && strcmp(maddr, "0") != 0) {
		struct ctl_certs certs;

		memset(&o, 0, sizeof(o));
		memset(&certs, 0, sizeof(certs));
		o.name = "metrics";
		o.listen = maddr;
		if (!c->opts.metrics_insecure) {
			rc = metrics_certs(c, &certs, err);
			o.cert_pem = certs.cert_pem;
			o.key_pem = certs.key_pem;
			o.tls_priorities = c->cfg->tls.priorities;
			o.per_ip_limit = CTL_HTTPD_AUTH_PER_IP_LIMIT;
		}
		if (rc == CU_OK)
			rc = ctl_httpd_new(
			    &c->srv.metrics_srv, c->loop, &o, err);
		ctl_certs_dispose(&certs);
		if (rc == CU_OK)
			rc = ctl_metrics_mount(
			    c->metrics, c->srv.metrics_srv, err);
		if (rc == CU_OK && !c->opts.metrics_insecure)
			rc = ctl_mauth_new(&c->srv.mauth, c->auth_client, err);
		if (rc == CU_OK && c->srv.mauth != NULL)
			rc = ctl_mauth_mount(
			    c->srv.mauth, c->srv.metrics_srv, err);
		/* The reasons of /readyz?verbose only to callers the gate
		 * authenticated and authorized (the probe port withholds
		 * them). */
		if (rc == CU_OK && c->srv.mauth != NULL)
			rc = ctl_health_mount_detailed(
			    c->srv.health, c->srv.metrics_srv, err);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int new_pipe(ctl *c, cu_error *err)
{
	struct ctl_pipe_opts po;

	memset(&po, 0, sizeof(po));
	po.client = c->client;
	po.ev_client = c->ev_client;
	po.ledger = c->ledger;
	po.metrics = c->metrics;
	po.qps = c->cfg->client_connection.qps;
	po.hooks.settle = ctl_settle;
	po.hooks.mark = mark_key;
	po.hooks.informer = expect_informer;
	po.hooks.drained = drained;
	po.hooks.payload = c;
	return ctl_pipe_new(&c->pipe, &po, err);
}

/* The reviews' and the Lease's clients (see ctl_int.h): the same server
 * and credentials, their own limiters and connection slots. Reviews get
 * the configured qps/burst, a few connections, short attempts and one
 * retry (a waiting scraper gives up long before the admission path's
 * patience); the Lease a small fixed budget - it asks about once per
 * retryPeriod. */
static int side_clients(ctl *c, cu_error *err)
{
	struct api_client_opts o = c->copts;
	int rc;

	o.user_agent = "cueue-controller/" CUEUE_VERSION " (reviews)";
	o.max_connections = CTL_AUTH_CLIENT_CONNECTIONS;
	o.request_timeout_ms = CTL_AUTH_CLIENT_TIMEOUT_MS;
	o.max_attempts = 2;
	rc = api_client_new(&c->auth_client, c->loop, &o, err);
	if (rc != CU_OK)
		return rc;
	o = c->copts;
	o.user_agent = "cueue-controller/" CUEUE_VERSION " (leader-election)";
	o.qps = CTL_LEASE_CLIENT_QPS;
	o.burst = (int)CTL_LEASE_CLIENT_QPS * 2;
	o.max_connections = 2;
	return api_client_new(&c->lease_client, c->loop, &o, err);
}

int ctl_new(ctl **out, struct ev_loop *loop, const struct ctl_config *cfg,
    const struct ctl_run_opts *opts, cu_error *err)
{
	ctl *c = cu_calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (c == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "controller: out of memory");
	c->loop = loop;
	c->cfg = cfg;
	if (opts != NULL)
		c->opts = *opts;
	if (c->opts.pending_status_delay_ms <= 0)
		c->opts.pending_status_delay_ms =
		    CTL_PENDING_STATUS_DELAY_DEFAULT_MS;
	if (c->opts.pending_status_period_ms <= 0)
		c->opts.pending_status_period_ms =
		    CTL_PENDING_STATUS_PERIOD_DEFAULT_MS;
	ctl_keys_init(&c->dirty_wl, 2);
	ctl_keys_init(&c->dirty_jobs, 3);
	c->gate.job_enabled = cfg->integrations.job;
	c->gate.jobset_enabled = cfg->integrations.jobset;
	ctl_fw_gate_config(cfg, &c->gate);
	c->gate.manage_jobs_without_queue_name =
	    cfg->manage_jobs_without_queue_name;
	c->gate.ns_selector = &cfg->managed_jobs_ns_selector;
	c->gate.own_namespace = cfg->namespace;
	ctl_egate_init(c);
	if (ctl_feed_init(&c->feed) != CU_OK ||
	    ctl_decide_init(&c->dec) != CU_OK ||
	    ctl_report_init(&c->rep) != CU_OK || ctl_pr_init(c) != CU_OK ||
	    ctl_wm_init(c) != CU_OK || ctl_tas_init(c) != CU_OK ||
	    ctl_dra_init(c) != CU_OK || ctl_afs_init(&c->afs) != CU_OK) {
		rc = cu_error_set(err, CU_ENOMEM, "controller: out of memory");
		goto fail;
	}
	{
		char *src = NULL;

		rc = api_client_opts_resolve(&c->copts, c->opts.kubeconfig,
		    c->opts.sa_dir, NULL, NULL, &src, err);
		if (rc == CU_OK)
			cu_info("API server %s (from %s)", c->copts.server,
			    src ? src : "?");
		cu_free(src);
	}
	if (rc != CU_OK)
		goto fail;
	c->copts.qps = cfg->client_connection.qps;
	c->copts.burst = cfg->client_connection.burst;
	/* Nothing here reads managedFields: list pages and write answers
	 * are parsed without them, as watch lines are (api/informer.c). */
	c->copts.lean_bodies = true;
	rc = api_client_new(&c->client, loop, &c->copts, err);
	if (rc == CU_OK)
		rc = api_client_new(&c->ev_client, loop, &c->copts, err);
	if (rc == CU_OK)
		rc = side_clients(c, err);
	if (rc == CU_OK)
		rc = que_state_new(&c->st, err);
	if (rc == CU_OK)
		rc = ctl_config_resources_apply(cfg, c->st, err);
	if (rc == CU_OK)
		que_recompute_overlap_set(
		    c->st, cfg->metrics.recompute_overlap);
	if (rc == CU_OK)
		que_admission_fair_sharing_set(
		    c->st, cfg->admission_fair_sharing.enable);
	if (rc == CU_OK) {
		struct que_fair_config fc = {cfg->fair_sharing.enable,
		    cfg->fair_sharing.nstrategies,
		    {(enum que_fair_strategy)cfg->fair_sharing.strategies[0],
			(enum que_fair_strategy)
			    cfg->fair_sharing.strategies[1]}};

		que_fair_sharing_set(c->st, &fc);
	}
	/* A corrupt ledger is moved aside and rebuilt from the API (the
	 * Workloads' status is the truth); read-only, full or newer ledgers
	 * stop the start-up with their "ledger ...:" message (store.h). */
	if (rc == CU_OK)
		rc = store_open_or_rebuild(&c->ledger,
		    c->opts.store_path ? c->opts.store_path : ":memory:", NULL,
		    err);
	if (rc == CU_OK)
		rc = ctl_metrics_new(&c->metrics, NULL, err);
	if (rc == CU_OK)
		rc = ctl_metrics_labels_setup(c, err);
	if (rc == CU_OK)
		rc = new_pipe(c, err);
	if (rc == CU_OK) {
		struct rec_events_opts eo;
		char host[256];

		/* reportingInstance: "<controller>-<host name>" as client-go
		 * (the pod name when POD_NAME says it). */
		memset(&eo, 0, sizeof(eo));
		eo.component = "cueue-controller";
		eo.instance = c->opts.identity;
		if (eo.instance == NULL &&
		    gethostname(host, sizeof(host) - 1) == 0) {
			host[sizeof(host) - 1] = '\0';
			eo.instance = host;
		}
		rc = rec_events_new(&c->events, &eo, err);
	}
	if (rc == CU_OK)
		rc = start_http(c, err);
	if (rc == CU_OK)
		rc = ctl_start_webhook(c, err);
	if (rc == CU_OK)
		rc = ctl_start_certrot(c, err);
	if (rc != CU_OK)
		goto fail;
	*out = c;
	return CU_OK;
fail:
	ctl_free(c);
	return rc;
}

static void mark_all_jobs(json_t *obj, void *payload)
{
	ctl *c = payload;
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	mark_job(c,
	    ctl_fw_inf(kind) != INF__COUNT ? ctl_fw_kind(ctl_fw_inf(kind))
					   : CTL_KIND_JOB,
	    ctl_jmeta(obj, "namespace"), ctl_jmeta(obj, "name"));
}

static void on_started_leading(void *payload)
{
	ctl *c = payload;
	size_t i;

	cu_info("leader election: %s leads", ctl_leader_identity(c->leader));
	c->leading = true;
	if (c->sync_deadline_ns == 0)
		c->sync_deadline_ns = cu_time_mono_ns() +
				      c->cfg->controller.cache_sync_timeout_ns;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_LEADER);
	ctl_certrot_run(c->srv.certrot);
	/* Everything the follower watched may need a decision now. */
	c->dirty_config = true;
	c->dirty_cycle = true;
	api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
	for (i = INF_JOB; i < INF__COUNT; i++)
		if (c->inf[i] != NULL)
			api_informer_foreach(c->inf[i], mark_all_jobs, c);
}

static void on_stopped_leading(void *payload)
{
	ctl *c = payload;

	c->leading = false;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_FOLLOWER);
	if (c->stopping)
		return;
	/* As Kueue: a replica that lost its lease exits and is restarted,
	 * rather than risk a second writer. */
	cu_errorf("leader election: lost the lease; stopping");
	c->failed = true;
	ev_break(c->loop, EVBREAK_ALL);
}

static void on_new_leader(const char *identity, void *payload)
{
	(void)payload;
	cu_info("leader election: the leader is %s",
	    identity && identity[0] ? identity : "(none)");
}

/* The API clients' write gate, with leader election: a write still
 * waiting in a client's rate limiter or retry backoff when this replica
 * stopped leading (a stall past RenewDeadline, SIGSTOP) is withheld, not
 * sent late beside the new leader's. The election's own Lease writes
 * always pass. */
static bool write_gate(const char *method, const char *path, void *payload)
{
	static const char lease_api[] = "/apis/coordination.k8s.io/";
	/* The metrics gate's reviews (controller/mauth.h) are POSTs that
	 * write nothing: every replica serves /metrics. */
	static const char authn_api[] = "/apis/authentication.k8s.io/";
	static const char authz_api[] = "/apis/authorization.k8s.io/";
	ctl *c = payload;

	(void)method;
	if (c->leader == NULL ||
	    (c->leading && ctl_leader_is_leader(c->leader)))
		return true;
	return strncmp(path, lease_api, sizeof(lease_api) - 1) == 0 ||
	       strncmp(path, authn_api, sizeof(authn_api) - 1) == 0 ||
	       strncmp(path, authz_api, sizeof(authz_api) - 1) == 0;
}

static int start_leader(ctl *c, cu_error *err)
{
	static const struct ctl_leader_callbacks cbs = {
	    on_started_leading, on_stopped_leading, on_new_leader};
	struct ctl_leader_opts o;
	const char *ns = c->cfg->leader_election.resource_namespace;
	int rc;

	if (!c->cfg->leader_election.leader_elect) {
		c->sync_deadline_ns = cu_time_mono_ns() +
				      c->cfg->controller.cache_sync_timeout_ns;
		ctl_metrics_set_role(c->metrics, CTL_ROLE_STANDALONE);
		return CU_OK;
	}
	memset(&o, 0, sizeof(o));
	if (ns == NULL || ns[0] == '\0')
		ns = c->copts.namespace_name && c->copts.namespace_name[0]
			 ? c->copts.namespace_name
			 : c->cfg->namespace;
	o.namespace_name = ns;
	o.name = c->cfg->leader_election.resource_name;
	o.identity = c->opts.identity;
	o.lease_duration_ns = c->cfg->leader_election.lease_duration_ns;
	o.renew_deadline_ns = c->cfg->leader_election.renew_deadline_ns;
	o.retry_period_ns = c->cfg->leader_election.retry_period_ns;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_FOLLOWER);
	rc = ctl_leader_new(
	    &c->leader, c->lease_client, c->loop, &o, &cbs, c, err);
	if (rc == CU_OK) {
		api_client_set_write_gate(c->client, write_gate, c);
		api_client_set_write_gate(c->ev_client, write_gate, c);
		rc = ctl_leader_start(c->leader, err);
	}
	return rc;
}

bool ctl_failed(const ctl *c)
{
	return c->failed;
}

int ctl_start(ctl *c, cu_error *err)
{
	static const struct api_informer_handlers h = {
	    on_add, on_update, on_delete, NULL};
	static const struct api_informer_handlers hs = {
	    on_add, on_update, on_delete, on_synced};
	const char *sel;
	size_t i;
	int rc;

	for (i = 0; i < INF__COUNT; i++) {
		c->slots[i].c = c;
		c->slots[i].id = (enum inf_id)i;
		if ((ctl_fw_is_job((enum inf_id)i) &&
			!ctl_fw_watched(c->cfg, (enum inf_id)i)) ||
		    /* ResourceSlices too: any claim's CEL selectors are
		     * checked against the cluster's devices, as Kueue. */
		    ((i == INF_DEVICECLASS || i == INF_RCT ||
			 i == INF_RSLICE) &&
			!c->cfg->dra.enabled) ||
		    ((i == INF_TRAINRT || i == INF_CTRAINRT) &&
			!ctl_fw_enabled(c->cfg, INF_TRAINJOB)))
			continue;
		/* The provisioning controller's objects only. */
		sel = i == INF_PROVREQ || i == INF_PODTEMPLATE
			  ? REC_LABEL_MANAGED "=true"
			  : NULL;
		rc = api_informer_new(&c->inf[i], c->client, &ctl_resources[i],
		    NULL, sel, NULL, i == INF_PROVREQ ? &hs : &h, &c->slots[i],
		    err);
		/* The caches that grow with the cluster's work are kept as
		 * text: a Workload takes ~1.3 KiB instead of ~12 KiB. */
		if (rc == CU_OK &&
		    (i == INF_WL || ctl_fw_is_job((enum inf_id)i)) &&
		    (rc = api_informer_compact(c->inf[i])) != CU_OK)
			cu_error_set(err, rc, "informer %s: out of memory",
			    ctl_resources[i].plural);
		if (rc != CU_OK)
			return rc;
	}
	rec_fw_set_lookup(ctl_fw_lookup, c);
	if ((rc = ctl_mk_start(c, err)) != CU_OK)
		return rc;
	if (c->srv.probe_srv != NULL &&
	    (rc = ctl_httpd_start(c->srv.probe_srv, err)) != CU_OK)
		return rc;
	if (c->srv.webhook != NULL &&
	    (rc = ctl_whsrv_start(c->srv.webhook, err)) != CU_OK)
		return rc;
	if (c->srv.metrics_srv != NULL &&
	    (rc = ctl_httpd_start(c->srv.metrics_srv, err)) != CU_OK)
		return rc;
	if ((rc = ctl_start_visibility(c, err)) != CU_OK)
		return rc;
	if ((rc = start_leader(c, err)) != CU_OK)
		return rc;
	ev_prepare_init(&c->turn_w, on_turn);
	c->turn_w.data = c;
	ev_prepare_start(c->loop, &c->turn_w);
	ctl_tick_start(c);
	return CU_OK;
}

static void released(int err, void *payload)
{
	ctl *c = payload;
	void (*done)(void *) = c->stop_done;

	if (err != CU_OK)
		cu_warn("leader election: release failed (%s); the lease "
			"expires instead",
		    cu_err_name(err));
	c->stop_done = NULL;
	if (done != NULL)
		done(c->stop_payload);
}

/* Every write has been answered: give the lease back, then done. */
static void stop_writes_done(ctl *c)
{
	cu_error err;

	if (c->leader != NULL && c->leading &&
	    ctl_leader_release(c->leader, released, c, &err) == CU_OK)
		return;
	released(CU_OK, c);
}

void ctl_shutdown(ctl *c, void (*done)(void *payload), void *payload)
{
	c->stopping = true;
	c->stop_done = done;
	c->stop_payload = payload;
	if (c->pipe == NULL || ctl_pipe_stop(c->pipe))
		stop_writes_done(c);
}

void ctl_free(ctl *c)
{
	size_t i;

	if (c == NULL)
		return;
	c->freeing = true;
	ctl_pipe_closing(c->pipe);
	ev_prepare_stop(c->loop, &c->turn_w);
	ctl_tick_stop(c);
	if (c->feed.wake_armed)
		ev_timer_stop(c->loop, &c->feed.wake_w);
	if (c->feed.sync_armed)
		ev_timer_stop(c->loop, &c->feed.sync_w);
	ctl_leader_free(c->leader);
	/* Answers the scrapes waiting on a review before the client and the
	 * metrics server go. */
	ctl_mauth_free(c->srv.mauth);
	ctl_vauth_free(c->srv.vauth);
	ctl_mk_dispose(c); /* its workers' clients, its informers */
	for (i = 0; i < INF__COUNT; i++)
		api_informer_free(c->inf[i]);
	/* Its informers before the client. */
	ctl_certrot_free(c->srv.certrot);
	c->srv.certrot = NULL;
	ctl_tas_dispose(c);
	ctl_egate_dispose(c);
	ctl_dra_dispose(c);
	api_client_free(c->ev_client);
	api_client_free(c->auth_client);
	api_client_free(c->lease_client);
	api_client_free(c->client);
	api_client_opts_dispose(&c->copts);
	ctl_pipe_free(c->pipe); /* rolls back an open transaction */
	store_close(c->ledger);
	que_state_free(c->st);
	ctl_httpd_free(c->srv.probe_srv);
	ctl_whsrv_free(c->srv.webhook);
	ctl_certrot_free(c->srv.certrot);
	ctl_httpd_free(c->srv.metrics_srv);
	ctl_health_free(c->srv.health);
	ctl_metrics_free(c->metrics);
	cu_free(c->copy_keys);
	rec_events_free(c->events);
	ctl_keys_dispose(&c->dirty_wl);
	ctl_keys_dispose(&c->dirty_jobs);
	ctl_feed_dispose(&c->feed);
	ctl_decide_dispose(&c->dec);
	ctl_report_dispose(&c->rep);
	ctl_afs_dispose(&c->afs);
	ctl_pr_dispose(c);
	ctl_wm_dispose(c);
	cu_free(c);
}
