/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mk.c - the MultiKueue admission check controller
 * (controllerName kueue.x-k8s.io/multikueue), its cluster side, as
 * Kueue's admissionchecks/multikueue (see mk_int.h for the split):
 *
 *  - MultiKueueClusters and MultiKueueConfigs are watched on the manager
 *    (optional informers: a cluster without the CRDs is ready all the
 *    same);
 *  - each MultiKueueCluster gets one API client of its own (its own rate
 *    limiter) built from the kubeconfig in the Secret <location> of the
 *    controller's namespace (key "kubeconfig") or the file <location>
 *    (locationType Path), and informers on the Workloads and Jobs that
 *    carry this manager's origin label there; a kubeconfig that cannot
 *    be read or used is tried again with back-off (1 s doubling to
 *    60 s), a worker that stops answering is re-listed by its informers
 *    with theirs;
 *  - the cluster's Active condition says whether it is connected (its
 *    caches synced and its API server answering), else why not
 *    (BadConfig, ClientConnectionFailed with the error as message);
 *  - each MultiKueue AdmissionCheck is Active while its config exists
 *    and some of its clusters are (reconcile/mk.c rec_mk_check_active).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/json.h"
#include "controller/mk_int.h"

static const struct api_resource res_clusters = {
    "kueue.x-k8s.io", "v1beta2", "multikueueclusters", false};
static const struct api_resource res_configs = {
    "kueue.x-k8s.io", "v1beta2", "multikueueconfigs", false};
static const struct api_resource res_secrets = {"", "v1", "secrets", true};
static const struct api_resource res_wl = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};

/* ---- informer handlers ------------------------------------------------ */

static void mgr_changed(json_t *obj, void *payload)
{
	struct ctl_mk *mk = payload;

	(void)obj;
	mk->dirty_clusters = true;
}

static void mgr_updated(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	mgr_changed(obj, payload);
}

void ctl_mk__mark(struct ctl_mk *mk, const char *ns, const char *name)
{
	if (ns != NULL && name != NULL)
		(void)ctl_keys_put(&mk->dirty, CTL_K2(ns, name));
}

static void remote_wl(json_t *obj, void *payload)
{
	struct mk_worker *w = payload;

	ctl_mk__mark(
	    w->mk, ctl_jmeta(obj, "namespace"), ctl_jmeta(obj, "name"));
}

static void remote_wl_upd(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	remote_wl(obj, payload);
}

static void remote_job(json_t *obj, void *payload)
{
	struct mk_worker *w = payload;
	json_t *labels =
	    json_object_get(json_object_get(obj, "metadata"), "labels");

	ctl_mk__mark(w->mk, ctl_jmeta(obj, "namespace"),
	    api_json_str(labels, REC_PREBUILT_WORKLOAD));
}

static void remote_job_upd(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	remote_job(obj, payload);
}

static void remote_synced(void *payload)
{
	struct mk_worker *w = payload;

	w->mk->dirty_clusters = true;
}

/* ---- lookups ---------------------------------------------------------- */

enum inf_id ctl_mk__row_inf(ctl *c, size_t i)
{
	const struct rec_mk_adapter *a = rec_mk_adapter_at(i);
	const struct rec_fw *fw = a ? rec_fw_by_name(a->fw) : NULL;
	enum inf_id id = fw ? ctl_fw_inf(fw->kind) : INF__COUNT;

	if (id == INF__COUNT || (id != INF_JOB && c->inf[id] == NULL))
		return INF__COUNT;
	return id;
}

struct mk_worker *ctl_mk__worker(struct ctl_mk *mk, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < mk->nw; i++)
		if (strcmp(mk->w[i]->name, name) == 0)
			return mk->w[i];
	return NULL;
}

bool ctl_mk__config_clusters(struct ctl_mk *mk, const char *name, json_t **out)
{
	json_t *cfg = name ? api_informer_get(mk->configs, NULL, name) : NULL;

	*out = NULL;
	if (cfg == NULL)
		return false;
	*out = json_object_get(json_object_get(cfg, "spec"), "clusters");
	return true;
}

const char *ctl_mk__check_config(struct ctl_mk *mk, const char *check)
{
	ctl *c = mk->c;
	json_t *ac = c->inf[INF_ACHECK] != NULL && check != NULL
			 ? api_informer_get(c->inf[INF_ACHECK], NULL, check)
			 : NULL;
	json_t *spec = json_object_get(ac, "spec");
	json_t *par = json_object_get(spec, "parameters");
	const char *cn = api_json_str(spec, "controllerName");
	const char *kind = api_json_str(par, "kind");

	if (cn == NULL || strcmp(cn, REC_MK_CONTROLLER) != 0)
		return NULL;
	if (kind != NULL && strcmp(kind, "MultiKueueConfig") != 0)
		return "";
	return api_json_str(par, "name") ? api_json_str(par, "name") : "";
}

/* ---- workers ---------------------------------------------------------- */

static void worker_disconnect(struct mk_worker *w)
{
	size_t i;

	api_informer_free(w->wl);
	w->wl = NULL;
	for (i = 0; i < MK_MAX_ADAPTERS; i++) {
		api_informer_free(w->jobs[i]);
		w->jobs[i] = NULL;
	}
	api_client_free(w->cl);
	w->cl = NULL;
	w->connected = false;
}

static void worker_free(struct mk_worker *w)
{
	if (w == NULL)
		return;
	ctl_mk__forget_worker(w->mk, w);
	if (w->req != NULL)
		api_request_cancel(w->req);
	worker_disconnect(w);
	cu_free(w->name);
	cu_free(w->source);
	cu_free(w->kubeconfig);
	cu_free(w->err_msg);
	cu_free(w->sent);
	cu_free(w);
}

static void worker_fail(struct mk_worker *w, const char *reason, char *msg)
{
	int64_t now = cu_time_mono_ns();

	worker_disconnect(w);
	cu_free(w->err_msg);
	w->err_reason = reason;
	w->err_msg = msg;
	w->backoff_ns = w->backoff_ns ? w->backoff_ns * 2 : MK_BACKOFF_MIN_NS;
	if (w->backoff_ns > MK_BACKOFF_MAX_NS)
		w->backoff_ns = MK_BACKOFF_MAX_NS;
	w->retry_at_ns = now + w->backoff_ns;
	w->mk->dirty_clusters = true;
}

/* Build the client and informers of w from kubeconfig text kc
 * [borrowed]. */
static void worker_connect(struct mk_worker *w, const char *kc)
{
	static const struct api_informer_handlers hw = {
	    remote_wl, remote_wl_upd, remote_wl, remote_synced};
	static const struct api_informer_handlers hj = {
	    remote_job, remote_job_upd, remote_job, remote_synced};
	ctl *c = w->mk->c;
	char path[] = "/tmp/cueue-mk-kubeconfig-XXXXXX", *sel = NULL;
	struct api_client_opts o;
	size_t len = strlen(kc), i;
	cu_error err;
	int fd, rc;

	cu_error_clear(&err);
	worker_disconnect(w);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, kc, len) != (ssize_t)len) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		worker_fail(w, "BadConfig",
		    cu_strdup("cannot write the kubeconfig to a temporary "
			      "file"));
		return;
	}
	close(fd);
	rc = api_client_opts_from_kubeconfig(&o, path, &err);
	unlink(path);
	if (rc != CU_OK) {
		worker_fail(w, "BadConfig", cu_strdup(err.msg));
		return;
	}
	o.qps = MK_CLIENT_QPS;
	o.burst = MK_CLIENT_BURST;
	/* A worker's API server tells the manager's requests from its own
	 * controller's (same kubeconfig, often). */
	cu_free((void *)o.user_agent);
	o.user_agent = cu_strdup(MK_USER_AGENT);
	o.lean_bodies = true;
	rc = api_client_new(&w->cl, c->loop, &o, &err);
	api_client_opts_dispose(&o);
	sel = cu_asprintf("%s=%s", REC_MK_ORIGIN_LABEL, c->cfg->mk.origin);
	if (rc == CU_OK && sel == NULL)
		rc = cu_error_set(&err, CU_ENOMEM, "out of memory");
	if (rc == CU_OK)
		rc = api_informer_new(
		    &w->wl, w->cl, &res_wl, NULL, sel, NULL, &hw, w, &err);
	/* The kinds of the adapters whose framework the manager runs; but
	 * for Jobs, a worker without a kind's CRD runs the others only. */
	for (i = 0; rc == CU_OK && i < MK_MAX_ADAPTERS; i++) {
		enum inf_id id = ctl_mk__row_inf(c, i);

		if (id != INF__COUNT)
			rc = api_informer_new(&w->jobs[i], w->cl, CTL_RES(id),
			    NULL, sel, NULL, &hj, w, &err);
	}
	cu_free(sel);
	if (rc != CU_OK) {
		worker_fail(w, "BadConfig", cu_strdup(err.msg));
		return;
	}
	cu_free(w->err_msg);
	w->err_msg = NULL;
	w->err_reason = NULL;
	w->backoff_ns = 0;
	cu_info("multikueue: cluster %s: connecting", w->name);
}

static void secret_done(const struct api_response *resp, void *payload)
{
	struct mk_worker *w = payload;
	json_t *data;
	const char *b64;
	char *kc = NULL;
	size_t n;

	w->req = NULL;
	if (resp->canceled)
		return;
	if (resp->err != CU_OK) {
		worker_fail(w, "BadConfig",
		    cu_asprintf("cannot read the Secret: %s",
			resp->message[0] ? resp->message : resp->reason));
		return;
	}
	data = json_object_get(resp->body, "data");
	b64 = api_json_str(data, "kubeconfig");
	if (b64 == NULL || api_base64_decode(b64, &kc, &n, NULL) != CU_OK) {
		worker_fail(w, "BadConfig",
		    cu_strdup("key \"kubeconfig\" not found in the Secret"));
		return;
	}
	if (w->kubeconfig != NULL && strcmp(w->kubeconfig, kc) == 0 &&
	    w->cl != NULL) {
		cu_free(kc);
		return;
	}
	cu_free(w->kubeconfig);
	w->kubeconfig = kc;
	worker_connect(w, kc);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n < 1024 * 1024 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = cu_malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			cu_free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* Start (or restart, when due) loading w's kubeconfig from source. */
static void worker_load(struct mk_worker *w)
{
	ctl *c = w->mk->c;
	cu_error err;
	char *kc;

	if (w->req != NULL || w->cl != NULL ||
	    cu_time_mono_ns() < w->retry_at_ns)
		return;
	if (strncmp(w->source, "Path/", 5) == 0) {
		kc = read_file(w->source + 5);
		if (kc == NULL) {
			worker_fail(w, "BadConfig",
			    cu_asprintf("cannot read the kubeconfig file %s",
				w->source + 5));
			return;
		}
		cu_free(w->kubeconfig);
		w->kubeconfig = kc;
		worker_connect(w, kc);
		return;
	}
	cu_error_clear(&err);
	if (api_get(&w->req, c->client, &res_secrets, c->cfg->namespace,
		w->source + 7, secret_done, w, &err) != CU_OK) {
		w->req = NULL;
		worker_fail(w, "BadConfig", cu_strdup(err.msg));
	}
}

/* "Secret/<name>" or "Path/<path>" of a cached MultiKueueCluster, or
 * NULL (no kubeConfig source) [owned]. */
static char *source_of(json_t *obj)
{
	json_t *kc = json_object_get(
	    json_object_get(json_object_get(obj, "spec"), "clusterSource"),
	    "kubeConfig");
	const char *loc = api_json_str(kc, "location");
	const char *type = api_json_str(kc, "locationType");

	if (loc == NULL || loc[0] == '\0')
		return NULL;
	return cu_asprintf("%s/%s",
	    type != NULL && strcmp(type, "Path") == 0 ? "Path" : "Secret", loc);
}

static void see_cluster(json_t *obj, void *payload)
{
	struct ctl_mk *mk = payload;
	const char *name = ctl_jmeta(obj, "name");
	struct mk_worker *w = ctl_mk__worker(mk, name), **nv;
	char *src = source_of(obj);

	if (name == NULL)
		goto out;
	if (w != NULL &&
	    (src == NULL || w->source == NULL || strcmp(src, w->source) != 0)) {
		/* its source changed: a new connection */
		worker_disconnect(w);
		cu_free(w->source);
		w->source = src;
		src = NULL;
		cu_free(w->kubeconfig);
		w->kubeconfig = NULL;
		w->retry_at_ns = w->backoff_ns = 0;
	}
	if (w == NULL) {
		if (mk->nw == mk->capw) {
			size_t cap = mk->capw ? mk->capw * 2 : 4;

			nv = cu_realloc(mk->w, cap * sizeof(*nv));
			if (nv == NULL)
				goto out;
			mk->w = nv;
			mk->capw = cap;
		}
		w = cu_calloc(1, sizeof(*w));
		if (w == NULL || (w->name = cu_strdup(name)) == NULL) {
			cu_free(w);
			goto out;
		}
		w->mk = mk;
		w->source = src;
		src = NULL;
		mk->w[mk->nw++] = w;
	}
	w->seen = true;
	if (w->source == NULL) {
		if (w->err_reason == NULL) {
			w->err_reason = "BadConfig";
			w->err_msg = cu_strdup("no kubeConfig source: "
					       "clusterProfileRef is not "
					       "supported");
		}
	} else {
		worker_load(w);
	}
out:
	cu_free(src);
}

/* ---- conditions ------------------------------------------------------- */

static json_t *active_cond(
    bool on, const char *reason, const char *msg, json_t *obj)
{
	char now[CU_TIME_RFC3339_LEN];

	cu_time_format_rfc3339(cu_time_now_ns(), now);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", "Active",
	    "status", on ? "True" : "False", "reason", reason, "message",
	    msg ? msg : "", "lastTransitionTime", now, "observedGeneration",
	    json_integer_value(json_object_get(
		json_object_get(obj, "metadata"), "generation")));
}

static const char *s0(const char *s)
{
	return s != NULL ? s : "";
}

/* Does cached obj's Active condition say on/reason/msg already? */
static bool cond_is(json_t *obj, bool on, const char *reason, const char *msg)
{
	json_t *conds =
	    json_object_get(json_object_get(obj, "status"), "conditions");
	json_t *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t == NULL || strcmp(t, "Active") != 0)
			continue;
		return strcmp(s0(api_json_str(c, "status")),
			   on ? "True" : "False") == 0 &&
		       strcmp(s0(api_json_str(c, "reason")), reason) == 0 &&
		       strcmp(s0(api_json_str(c, "message")), s0(msg)) == 0;
	}
	return false;
}

/* conditions of obj with Active replaced by cond [consumed]. */
static json_t *with_cond(json_t *obj, json_t *cond)
{
	json_t *old =
	    json_object_get(json_object_get(obj, "status"), "conditions");
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(old, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (out != NULL && (t == NULL || strcmp(t, "Active") != 0))
			json_array_append(out, c);
	}
	if (out == NULL || cond == NULL ||
	    json_array_append_new(out, cond) != 0) {
		json_decref(out);
		json_decref(cond);
		return NULL;
	}
	return json_pack("{s:{s:o}}", "status", "conditions", out);
}

/* Every job informer of w synced (or its CRD absent, but for Jobs). */
static bool jobs_synced(struct mk_worker *w)
{
	size_t i;

	for (i = 0; i < MK_MAX_ADAPTERS; i++) {
		if (w->jobs[i] == NULL || api_informer_synced(w->jobs[i]))
			continue;
		if (ctl_mk__row_inf(w->mk->c, i) == INF_JOB ||
		    !api_informer_absent(w->jobs[i]))
			return false;
	}
	return true;
}

static void sync_cluster_status(struct ctl_mk *mk, struct mk_worker *w)
{
	json_t *obj = api_informer_get(mk->clusters, NULL, w->name), *patch;
	const char *reason,
	    *unreach = w->cl ? api_client_unreachable(w->cl) : NULL;
	char *msg = NULL, *key;
	bool on, was = w->connected;
	int64_t now = cu_time_mono_ns();

	w->connected = w->cl != NULL && api_informer_synced(w->wl) &&
		       jobs_synced(w) && unreach == NULL;
	if (w->connected != was) {
		cu_info("multikueue: cluster %s: %s", w->name,
		    w->connected ? "connected" : "disconnected");
		ctl_mk__mark_all(mk);
	}
	if (obj == NULL)
		return;
	on = w->connected;
	if (on) {
		reason = "Active";
		msg = cu_strdup("Connected");
	} else if (w->err_reason != NULL) {
		reason = w->err_reason;
		msg = cu_strdup(w->err_msg ? w->err_msg : "");
	} else if (unreach != NULL) {
		reason = "ClientConnectionFailed";
		msg = cu_strdup(unreach);
	} else {
		return; /* connecting: nothing to say yet */
	}
	if (msg == NULL)
		return;
	key = cu_asprintf("%d\x1f%s\x1f%s", on, reason, msg);
	if (key == NULL || cond_is(obj, on, reason, msg) ||
	    (w->sent != NULL && strcmp(w->sent, key) == 0 &&
		now - w->sent_at_ns < MK_RESEND_NS) ||
	    !ctl_may_write(mk->c)) {
		cu_free(key);
		cu_free(msg);
		return;
	}
	patch = with_cond(obj, active_cond(on, reason, msg, obj));
	if (patch != NULL)
		(void)ctl_pipe_queue(mk->c->pipe, CTL_PIPE_QUEUE_STATUS,
		    &res_clusters, NULL, w->name, NULL, patch);
	cu_free(w->sent);
	w->sent = key;
	w->sent_at_ns = now;
	cu_free(msg);
}

static bool cluster_active(struct ctl_mk *mk, const char *name)
{
	json_t *obj = api_informer_get(mk->clusters, NULL, name);

	return obj != NULL && cond_is(obj, true, "Active", "Connected");
}

static void sync_check(json_t *obj, void *payload)
{
	struct ctl_mk *mk = payload;
	const char *name = ctl_jmeta(obj, "name");
	const char *cfg = name ? ctl_mk__check_config(mk, name) : NULL;
	enum rec_mk_cluster_state st[REC_MK_MAX_CLUSTERS];
	const char *names[REC_MK_MAX_CLUSTERS], *reason;
	char *msg = NULL, *err = NULL, *key;
	json_t *clusters, *patch, *cl;
	struct ctl_kent *e;
	size_t i, n = 0;
	bool on;

	if (cfg == NULL)
		return;
	if (!ctl_mk__config_clusters(mk, cfg, &clusters))
		err = cu_asprintf("MultiKueueConfig.kueue.x-k8s.io \"%s\" not "
				  "found",
		    cfg);
	json_array_foreach(clusters, i, cl)
	{
		const char *cn = json_string_value(cl);

		if (cn == NULL || n == REC_MK_MAX_CLUSTERS)
			continue;
		names[n] = cn;
		st[n++] = api_informer_get(mk->clusters, NULL, cn) == NULL
			      ? REC_MK_CLUSTER_MISSING
			  : cluster_active(mk, cn) ? REC_MK_CLUSTER_ACTIVE
						   : REC_MK_CLUSTER_INACTIVE;
	}
	on = rec_mk_check_active(err, names, st, n, &reason, &msg);
	cu_free(err);
	if (msg == NULL || cond_is(obj, on, reason, msg) ||
	    ctl_pipe_stale(
		mk->c->pipe, CTL_K3("AdmissionCheck", "", name), obj)) {
		cu_free(msg);
		return;
	}
	key = cu_asprintf("%d\x1f%s\x1f%s", on, reason, msg);
	e = key ? ctl_keys_put(&mk->ac_sent, CTL_K1(name)) : NULL;
	if (e == NULL || (e->s[0] != NULL && strcmp(e->s[0], key) == 0 &&
			     cu_time_mono_ns() - e->n < MK_RESEND_NS)) {
		cu_free(key);
		cu_free(msg);
		return;
	}
	cu_free(e->s[0]);
	e->s[0] = key;
	e->n = cu_time_mono_ns();
	patch = with_cond(obj, active_cond(on, reason, msg, obj));
	if (patch != NULL)
		(void)ctl_pipe_queue(mk->c->pipe, CTL_PIPE_QUEUE_STATUS,
		    CTL_RES(INF_ACHECK), NULL, name, NULL, patch);
	cu_free(msg);
}

/* ---- the turn --------------------------------------------------------- */

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)t;
	(void)revents;
	/* Nothing to do here: the turn after this wake-up looks at the
	 * clocks (reconnects, lost workers, the collection). */
}

void ctl_mk__soon(struct ctl_mk *mk)
{
	if (ev_is_active(&mk->soon))
		return;
	ev_timer_set(&mk->soon, 0.0, 0.0);
	ev_timer_start(mk->c->loop, &mk->soon);
}

static void sync_clusters(struct ctl_mk *mk)
{
	size_t i, k;

	for (i = 0; i < mk->nw; i++)
		mk->w[i]->seen = false;
	api_informer_foreach(mk->clusters, see_cluster, mk);
	for (i = k = 0; i < mk->nw; i++) {
		if (mk->w[i]->seen) {
			mk->w[k++] = mk->w[i];
			continue;
		}
		cu_info("multikueue: cluster %s removed", mk->w[i]->name);
		worker_free(mk->w[i]);
	}
	mk->nw = k;
}

void ctl_mk_turn(ctl *c, int64_t now)
{
	struct ctl_mk *mk = c->mk;
	int64_t mono = cu_time_mono_ns();
	size_t i;

	(void)now;
	if (mk == NULL || !api_informer_synced(mk->clusters))
		return;
	sync_clusters(mk);
	for (i = 0; i < mk->nw; i++)
		sync_cluster_status(mk, mk->w[i]);
	if (ctl_may_write(c) && c->inf[INF_ACHECK] != NULL)
		api_informer_foreach(c->inf[INF_ACHECK], sync_check, mk);
	mk->dirty_clusters = false;
	if (ctl_may_write(c) && c->cfg->mk.gc_interval_ns > 0 &&
	    mono >= mk->gc_due_ns) {
		mk->gc_due_ns = mono + c->cfg->mk.gc_interval_ns;
		ctl_mk__gc(mk);
	}
	ctl_mk_workloads(c, now);
}

/* ---- lifecycle -------------------------------------------------------- */

int ctl_mk_start(ctl *c, cu_error *err)
{
	static const struct api_informer_handlers h = {
	    mgr_changed, mgr_updated, mgr_changed, NULL};
	struct ctl_mk *mk = cu_calloc(1, sizeof(*mk));
	int rc;

	if (mk == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	c->mk = mk;
	mk->c = c;
	ev_timer_init(&mk->soon, on_timer, 0.0, 0.0);
	ctl_keys_init(&mk->dirty, 2);
	ctl_keys_init(&mk->lost, 2);
	ctl_keys_init(&mk->rounds, 2);
	ctl_keys_init(&mk->evicting, 2);
	ctl_keys_init(&mk->finishing, 2);
	mk->round_ns = MK_ROUND_NS;
	if (getenv("CUEUE_MK_ROUND_MS") != NULL)
		mk->round_ns =
		    strtoll(getenv("CUEUE_MK_ROUND_MS"), NULL, 10) * 1000000LL;
	ctl_keys_init(&mk->inflight, 3);
	ctl_keys_init(&mk->ac_sent, 1);
	rc = api_informer_new(&mk->clusters, c->client, &res_clusters, NULL,
	    NULL, NULL, &h, mk, err);
	if (rc == CU_OK)
		rc = api_informer_new(&mk->configs, c->client, &res_configs,
		    NULL, NULL, NULL, &h, mk, err);
	if (rc != CU_OK)
		return rc;
	mk->gc_due_ns = cu_time_mono_ns() + c->cfg->mk.gc_interval_ns;
	ev_timer_init(&mk->timer, on_timer, 1.0, 1.0);
	ev_timer_start(c->loop, &mk->timer);
	mk->timer_on = true;
	return CU_OK;
}

api_informer *ctl_mk_informer(ctl *c)
{
	return c->mk != NULL ? c->mk->clusters : NULL;
}

void ctl_mk_dispose(ctl *c)
{
	struct ctl_mk *mk = c->mk;
	size_t i;

	if (mk == NULL)
		return;
	if (mk->timer_on)
		ev_timer_stop(c->loop, &mk->timer);
	ev_timer_stop(c->loop, &mk->soon);
	for (i = 0; i < mk->nw; i++)
		worker_free(mk->w[i]);
	cu_free(mk->w);
	api_informer_free(mk->clusters);
	api_informer_free(mk->configs);
	ctl_keys_dispose(&mk->dirty);
	ctl_keys_dispose(&mk->lost);
	ctl_keys_dispose(&mk->rounds);
	ctl_keys_dispose(&mk->evicting);
	ctl_keys_dispose(&mk->finishing);
	ctl_keys_dispose(&mk->inflight);
	ctl_keys_dispose(&mk->ac_sent);
	cu_free(mk);
	c->mk = NULL;
}
