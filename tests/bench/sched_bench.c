/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/sched_bench.c - `cueue-bench sched`: Kueue's scheduler
 * performance test, run the way Kueue's runner runs it, against
 * cueue-controller.
 *
 *   1. start cueue-apiserver (--bin) or use a running one (--kubeconfig);
 *      register the CRDs of manifests/crds;
 *   2. start cueue-controller (clientConnection qps/burst from --qps and
 *      --burst; a real SQLite ledger) unless one runs already;
 *   3. create the ResourceFlavor, Cohorts, ClusterQueues, one namespace
 *      and LocalQueue per ClusterQueue (Kueue's names and class labels);
 *   4. create Workloads directly, one per template every
 *      creationIntervalMs per workloadsSet per ClusterQueue;
 *   5. watch them: when one is Admitted, set Finished runningMs later;
 *      when one is Evicted, clear its quota reservation (what Kueue's
 *      runner does in place of a job controller);
 *   6. when every Workload has finished: stop the controller, write
 *      summary.json/summary.yaml (Kueue's keys), the CSVs and their gnuplot
 *      PNGs, and print the report against rangespec.yaml and the targets.
 *
 * Time to admission is measured as Kueue's recorder does: from the first
 * watch event of the Workload to the event that shows it Admitted.
 * ClusterQueue usage is the cpu of the Workloads Admitted in it, from the
 * same watch, integrated over time (what a timely flavorsUsage reports).
 * The controller's requests come from cueue-apiserver's access log (by
 * user agent); its peak RSS and CPU time from /proc.
 */
#define _GNU_SOURCE /* environ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <jansson.h>

#include "api/client.h"
#include "api/informer.h"
#include "api/json.h"
#include "api/yaml.h"
#include "lib/cu.h"
#include "tests/bench/bench.h"
#include "tests/bench/sched.h"

extern char **environ;

static const struct api_resource R_WL = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};
static const struct api_resource R_CQ = {
    "kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
static const struct api_resource R_LQ = {
    "kueue.x-k8s.io", "v1beta2", "localqueues", true};
static const struct api_resource R_RF = {
    "kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
static const struct api_resource R_COHORT = {
    "kueue.x-k8s.io", "v1beta2", "cohorts", false};
static const struct api_resource R_NS = {"", "v1", "namespaces", false};
static const struct api_resource R_CRD = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", false};

#define L_RUNNING "kueue.x-k8s.io/performance-scheduler-running-ms"
#define L_CLASS "kueue.x-k8s.io/performance-scheduler-class"

struct cq {
	char *name, *cls, *cohort; /* owned */
	int64_t nominal_milli;
	int64_t usage_milli; /* admitted cpu now */
	double used;	     /* milli * ms, integrated */
	int64_t last_ns, max_usage;
};

struct wl {
	struct run *r;
	char *ns, *name, *cls; /* owned */
	struct cq *cq;
	int64_t cpu_milli, runtime_ms;
	int64_t first_ns, admit_ns, finish_ns;
	int64_t time_to_admit_ms, time_to_finish_ms;
	int evictions;
	bool seen, admitted, evicted, finished, holding;
	bool fin_armed, fin_inflight, clear_inflight;
	ev_timer fin;
};

/* One (ClusterQueue, workloadsSet) creation stream. */
struct creator {
	ev_timer t;
	struct run *r;
	struct cq *cq;
	const struct sched_wl_set *set;
	int set_idx, si;
};

struct opts {
	const char *generator, *rangespec, *targets, *out, *bin, *crds;
	const char *kubeconfig;
	double qps;
	int burst;
	int timeout_s;
	const char *label;
	int controller_pid;
	bool check; /* --check: read the inputs, print the plan, run nothing */
};

struct run {
	struct ev_loop *loop;
	struct opts o;
	struct sched_gen g;
	api_client *client;
	/* The runner's own status writes (Finished, a cleared eviction) on a
	 * client of their own, as Kueue's runner reacts apart from its
	 * generator: behind a backlog of creates (a loaded machine) they
	 * would hold quota the controller has freed. */
	api_client *status_client;
	api_informer *inf;
	char tmp[256];
	pid_t apiserver, controller;
	int64_t ctl_start_ns, run_start_ns, end_ns;
	/* objects */
	struct cq *cqs;
	size_t ncqs;
	struct wl **wls;
	size_t nwls, capwls;
	json_t *index; /* "ns/name" -> integer index into wls */
	struct creator *creators;
	size_t ncreators;
	/* progress */
	int64_t total, created, create_failed, admitted_now, admissions,
	    finished, evictions;
	int outstanding; /* setup requests in flight */
	void (*next)(struct run *);
	int setup_failed;
	/* access log */
	uint64_t log_seq;
	bool log_inflight, have_log;
	json_t *ctl_verbs; /* verb -> count (controller) */
	json_t *ctl_kinds; /* "PATCH workloads/status" -> count (writes) */
	int64_t ctl_writes, ctl_event_writes, ctl_requests;
	json_t *ctl_per_sec; /* second -> count */
	/* outputs */
	FILE *adm_csv, *use_csv;
	int64_t last_sample_adm;
	ev_timer sample, logpoll, deadline;
	ev_timer wait_t; /* generic wait */
	int wait_tries;
	bool done, timed_out;
	/* controller stats */
	int64_t rss_kib;
	double cpu_s;
};

static int64_t mono(void)
{
	return cu_time_mono_ns();
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "cueue-bench sched: %s%s%s\n", what,
	    detail[0] ? ": " : "", detail);
	exit(1);
}

/* ---- processes ------------------------------------------------------ */

static pid_t spawn(char *const argv[], const char *log)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(
	    &fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "cueue-bench sched: spawn %s: %s\n", argv[0],
		    strerror(rc));
		return -1;
	}
	return pid;
}

static void stop_process(pid_t pid)
{
	int i, st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return;
		usleep(50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Peak RSS (KiB) and CPU seconds of a live process, from /proc. */
static void proc_stats(pid_t pid, int64_t *rss_kib, double *cpu_s)
{
	char path[64], line[512];
	FILE *f;

	*rss_kib = -1;
	*cpu_s = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "VmHWM:", 6) == 0)
				*rss_kib = strtoll(line + 6, NULL, 10);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), f) != NULL) {
			/* fields after the ")" of comm: state is field 3;
			 * utime 14, stime 15 */
			char *p = strrchr(line, ')');
			unsigned long long ut = 0, stime = 0;
			int field = 2;

			while (p != NULL && *p != '\0' && field < 15) {
				p = strchr(p + 1, ' ');
				if (p == NULL)
					break;
				field++;
				if (field == 14)
					ut = strtoull(p + 1, NULL, 10);
				if (field == 15)
					stime = strtoull(p + 1, NULL, 10);
			}
			*cpu_s =
			    (double)(ut + stime) / (double)sysconf(_SC_CLK_TCK);
		}
		fclose(f);
	}
}

/* ---- setup requests ------------------------------------------------- */

static void setup_done(const struct api_response *resp, void *payload)
{
	struct run *r = payload;

	if (resp->canceled)
		return;
	if (resp->err != CU_OK && resp->err != CU_EEXIST) {
		fprintf(stderr, "cueue-bench sched: %s %s: %d %s\n",
		    resp->method, resp->path, resp->code, resp->message);
		r->setup_failed++;
	}
	if (--r->outstanding == 0 && r->next != NULL) {
		void (*n)(struct run *) = r->next;

		r->next = NULL;
		n(r);
	}
}

static void post(
    struct run *r, const struct api_resource *res, const char *ns, json_t *obj)
{
	cu_error err;

	if (api_create(NULL, r->client, res, ns, obj, setup_done, r, &err) !=
	    CU_OK) {
		fprintf(stderr, "cueue-bench sched: create: %s\n", err.msg);
		r->setup_failed++;
	} else {
		r->outstanding++;
	}
	json_decref(obj);
}

/* Run next once every posted request has answered (now, if none). */
static void then(struct run *r, void (*next)(struct run *))
{
	if (r->outstanding == 0)
		next(r);
	else
		r->next = next;
}

/* ---- workloads ------------------------------------------------------ */

static struct wl *wl_lookup(struct run *r, json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");
	char key[512];
	json_t *i;

	snprintf(key, sizeof(key), "%s/%s",
	    json_string_value(json_object_get(md, "namespace")),
	    json_string_value(json_object_get(md, "name")));
	i = json_object_get(r->index, key);
	return i ? r->wls[json_integer_value(i)] : NULL;
}

static const char *sv(json_t *v)
{
	const char *s = json_string_value(v);

	return s ? s : "";
}

static bool cond_true(json_t *obj, const char *type)
{
	json_t *conds =
	    json_object_get(json_object_get(obj, "status"), "conditions");
	json_t *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		if (strcmp(sv(json_object_get(c, "type")), type) == 0)
			return strcmp(sv(json_object_get(c, "status")),
				   "True") == 0;
	}
	return false;
}

static void cq_account(struct cq *q, int64_t now, int64_t delta)
{
	if (q->last_ns > 0)
		q->used +=
		    (double)q->usage_milli * (double)(now - q->last_ns) / 1e6;
	q->last_ns = now;
	q->usage_milli += delta;
	if (q->usage_milli > q->max_usage)
		q->max_usage = q->usage_milli;
}

static void wl_evaluate(struct wl *w, json_t *obj);

static void status_done(const struct api_response *resp, void *payload)
{
	struct wl *w = payload;
	struct run *r = w->r;
	json_t *obj;

	if (resp->canceled)
		return;
	w->fin_inflight = false;
	w->clear_inflight = false;
	if (resp->err == CU_OK || resp->err == CU_ENOTFOUND)
		return;
	if (resp->err != CU_ECONFLICT)
		fprintf(stderr, "cueue-bench sched: %s %s: %d %s\n",
		    resp->method, resp->path, resp->code, resp->message);
	/* A conflict: look again at the newest cached state. */
	obj = api_informer_get(r->inf, w->ns, w->name);
	if (obj != NULL)
		wl_evaluate(w, obj);
}

/* A merge patch of status with obj's resourceVersion as precondition;
 * conds [consumed] replaces the conditions; clear drops the admission. */
static void send_status(struct wl *w, json_t *obj, json_t *conds, bool clear)
{
	json_t *patch =
	    json_pack("{s:{s:O}, s:{s:o}}", "metadata", "resourceVersion",
		json_object_get(
		    json_object_get(obj, "metadata"), "resourceVersion"),
		"status", "conditions", conds);
	cu_error err;

	if (patch == NULL)
		return;
	if (clear)
		json_object_set_new(
		    json_object_get(patch, "status"), "admission", json_null());
	if (api_merge_patch(NULL, w->r->status_client, &R_WL, w->ns, w->name,
		patch, true, status_done, w, &err) != CU_OK)
		fprintf(stderr, "cueue-bench sched: patch: %s\n", err.msg);
	else if (clear)
		w->clear_inflight = true;
	else
		w->fin_inflight = true;
	json_decref(patch);
}

static json_t *condition(const char *type, const char *status,
    const char *reason, const char *message)
{
	char ts[64];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	    status, "reason", reason, "message", message, "lastTransitionTime",
	    ts);
}

/* Conditions of obj with `type` replaced by c [consumed]. */
static json_t *with_condition(json_t *obj, const char *type, json_t *c)
{
	json_t *out = json_array(), *e;
	json_t *conds =
	    json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;

	json_array_foreach(conds, i, e)
	{
		if (strcmp(sv(json_object_get(e, "type")), type) != 0)
			json_array_append(out, e);
	}
	json_array_append_new(out, c);
	return out;
}

static void on_finish_due(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct wl *w = t->data;
	json_t *obj = api_informer_get(w->r->inf, w->ns, w->name);

	(void)loop;
	(void)revents;
	w->fin_armed = false;
	if (obj == NULL || w->finished || !w->admitted || w->evicted ||
	    w->fin_inflight)
		return;
	send_status(w, obj,
	    with_condition(obj, "Finished",
		condition("Finished", "True", "ByTest", "By test runner")),
	    false);
}

/* The runner's reaction to a Workload state (Kueue's runner: finish it
 * runningMs after admission; clear an eviction's reservation). */
static void wl_evaluate(struct wl *w, json_t *obj)
{
	struct run *r = w->r;
	bool admitted = cond_true(obj, "Admitted");
	bool evicted = cond_true(obj, "Evicted");
	bool finished = cond_true(obj, "Finished");
	bool reserved = json_object_get(json_object_get(obj, "status"),
			    "admission") != NULL &&
			!json_is_null(json_object_get(
			    json_object_get(obj, "status"), "admission"));
	int64_t now = mono();
	bool holding = admitted && !finished;

	if (!w->seen) {
		w->seen = true;
		w->first_ns = now;
	}
	if (admitted && !w->admitted) {
		w->time_to_admit_ms = (now - w->first_ns) / 1000000;
		w->admit_ns = now;
		r->admissions++;
	}
	if (evicted && !w->evicted) {
		w->evictions++;
		r->evictions++;
	}
	if (holding != w->holding && w->cq != NULL) {
		cq_account(w->cq, now, holding ? w->cpu_milli : -w->cpu_milli);
		r->admitted_now += holding ? 1 : -1;
	}
	w->holding = holding;
	w->admitted = admitted;
	w->evicted = evicted;
	if (finished && !w->finished) {
		w->finished = true;
		w->finish_ns = now;
		w->time_to_finish_ms = (now - w->first_ns) / 1000000;
		r->finished++;
	}
	if (finished) {
		if (w->fin_armed)
			ev_timer_stop(r->loop, &w->fin);
		w->fin_armed = false;
		return;
	}
	if (evicted && reserved && !w->clear_inflight) {
		json_t *c = with_condition(obj, "QuotaReserved",
		    condition("QuotaReserved", "False", "Pending",
			"Evicted by the test runner"));
		json_t *tmp = json_pack("{s:{s:o}}", "status", "conditions", c);

		if (w->fin_armed)
			ev_timer_stop(r->loop, &w->fin);
		w->fin_armed = false;
		send_status(w, obj,
		    with_condition(tmp, "Admitted",
			condition("Admitted", "False", "NoReservation",
			    "The workload has no reservation")),
		    true);
		json_decref(tmp);
		return;
	}
	if (admitted && !evicted && !w->fin_armed && !w->fin_inflight) {
		double due = (double)w->runtime_ms / 1000.0 -
			     (double)(now - w->admit_ns) / 1e9;

		ev_timer_init(&w->fin, on_finish_due, due > 0 ? due : 0, 0);
		w->fin.data = w;
		ev_timer_start(r->loop, &w->fin);
		w->fin_armed = true;
	} else if (!admitted && w->fin_armed) {
		ev_timer_stop(r->loop, &w->fin);
		w->fin_armed = false;
	}
}

static void on_wl_add(json_t *obj, void *payload)
{
	struct wl *w = wl_lookup(payload, obj);

	if (w != NULL)
		wl_evaluate(w, obj);
}

static void on_wl_update(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	on_wl_add(obj, payload);
}

static void create_done(const struct api_response *resp, void *payload)
{
	struct run *r = payload;

	if (resp->canceled)
		return;
	if (resp->err != CU_OK) {
		r->create_failed++;
		fprintf(stderr, "cueue-bench sched: create %s: %d %s\n",
		    resp->path, resp->code, resp->message);
	}
}

static void create_one(struct creator *c, int ti)
{
	struct run *r = c->r;
	const struct sched_wl_tmpl *t = &c->set->tmpl[ti];
	char name[256], key[512], cpu[32], rt[32];
	struct wl *w;
	json_t *obj;
	cu_error err;

	snprintf(name, sizeof(name), "%s-%d-%d-%d", t->class_name, c->set_idx,
	    c->si, ti);
	snprintf(key, sizeof(key), "%s/%s", c->cq->name, name);
	if (t->request_milli % 1000 == 0)
		snprintf(cpu, sizeof(cpu), "%lld",
		    (long long)(t->request_milli / 1000));
	else
		snprintf(
		    cpu, sizeof(cpu), "%lldm", (long long)t->request_milli);
	snprintf(rt, sizeof(rt), "%lld", (long long)t->runtime_ms);
	w = cu_calloc(1, sizeof(*w));
	if (w == NULL)
		die("out of memory", "");
	w->r = r;
	w->ns = cu_strdup(c->cq->name);
	w->name = cu_strdup(name);
	w->cls = cu_strdup(t->class_name);
	w->cq = c->cq;
	w->cpu_milli = t->request_milli;
	w->runtime_ms = t->runtime_ms;
	if (r->nwls == r->capwls) {
		size_t nc = r->capwls ? r->capwls * 2 : 1024;
		struct wl **nv = cu_realloc(r->wls, nc * sizeof(*nv));

		if (nv == NULL)
			die("out of memory", "");
		r->wls = nv;
		r->capwls = nc;
	}
	r->wls[r->nwls] = w;
	json_object_set_new(r->index, key, json_integer((json_int_t)r->nwls));
	r->nwls++;
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s, s:i, "
			"s:[{s:s, s:i, s:{s:{s:[{s:s, s:s, s:{s:{s:s}}}], "
			"s:s}}}]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", name, "namespace", c->cq->name, "labels",
	    L_RUNNING, rt, L_CLASS, t->class_name, "spec", "queueName",
	    c->cq->name, "priority", (int)t->priority, "podSets", "name",
	    "main", "count", 1, "template", "spec", "containers", "name", "c",
	    "image", "registry.k8s.io/pause:3.9", "resources", "requests",
	    "cpu", cpu, "restartPolicy", "Never");
	if (obj == NULL || api_create(NULL, r->client, &R_WL, c->cq->name, obj,
			       create_done, r, &err) != CU_OK) {
		r->create_failed++;
	}
	json_decref(obj);
	r->created++;
}

static void on_create_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct creator *c = t->data;
	size_t i;

	(void)revents;
	for (i = 0; i < c->set->ntmpl; i++)
		create_one(c, (int)i);
	if (++c->si >= c->set->count)
		ev_timer_stop(loop, t);
}

/* ---- measurement ---------------------------------------------------- */

static void count_log_entry(struct run *r, json_t *e)
{
	const char *ua = json_string_value(json_object_get(e, "userAgent"));
	const char *verb = json_string_value(json_object_get(e, "verb"));
	const char *path = json_string_value(json_object_get(e, "path"));
	const char *tm = json_string_value(json_object_get(e, "time"));
	json_t *v;

	if (ua == NULL || strncmp(ua, "cueue-controller", 16) != 0 ||
	    verb == NULL)
		return;
	r->ctl_requests++;
	v = json_object_get(r->ctl_verbs, verb);
	json_object_set_new(
	    r->ctl_verbs, verb, json_integer(json_integer_value(v) + 1));
	if (strcmp(verb, "GET") != 0 && strcmp(verb, "LIST") != 0 &&
	    strcmp(verb, "WATCH") != 0) {
		char what[96];
		const char *p = path ? path : "", *res = p, *q;

		if (strstr(p, "/events") != NULL)
			r->ctl_event_writes++;
		else
			r->ctl_writes++;
		/* the resource (and subresource): the segment after
		 * "namespaces/NS/" or the version */
		if ((q = strstr(p, "/namespaces/")) != NULL &&
		    strchr(q + 12, '/') != NULL)
			res = strchr(q + 12, '/') + 1;
		else if ((q = strstr(p, "/v1beta2/")) != NULL)
			res = q + 9;
		else if ((q = strstr(p, "/v1/")) != NULL)
			res = q + 4;
		{
			const char *slash = strchr(res, '/');
			const char *sub = slash ? strrchr(res, '/') : NULL;
			int rl = slash ? (int)(slash - res) : (int)strlen(res);

			snprintf(what, sizeof(what), "%s %.*s%s%s", verb, rl,
			    res,
			    sub && sub != slash && strchr(slash + 1, '/') ? "/"
									  : "",
			    sub && sub != slash && strchr(slash + 1, '/')
				? sub + 1
				: "");
		}
		v = json_object_get(r->ctl_kinds, what);
		json_object_set_new(r->ctl_kinds, what,
		    json_integer(json_integer_value(v) + 1));
	}
	if (tm != NULL && strlen(tm) >= 19) {
		char sec[20];

		memcpy(sec, tm, 19);
		sec[19] = '\0';
		v = json_object_get(r->ctl_per_sec, sec);
		json_object_set_new(r->ctl_per_sec, sec,
		    json_integer(json_integer_value(v) + 1));
	}
}

static void log_done(const struct api_response *resp, void *payload)
{
	struct run *r = payload;
	json_t *items = json_object_get(resp->body, "items"), *e;
	size_t i;

	r->log_inflight = false;
	if (resp->canceled || resp->err != CU_OK)
		return;
	r->have_log = true;
	json_array_foreach(items, i, e)
	{
		uint64_t seq =
		    (uint64_t)json_integer_value(json_object_get(e, "seq"));

		if (seq <= r->log_seq)
			continue;
		r->log_seq = seq;
		count_log_entry(r, e);
	}
}

static void poll_log(struct run *r)
{
	char path[64];
	cu_error err;

	if (r->log_inflight)
		return;
	snprintf(path, sizeof(path), "/__test/log?since=%llu",
	    (unsigned long long)r->log_seq);
	if (api_request(NULL, r->client, "GET", path, NULL, NULL, log_done, r,
		&err) == CU_OK)
		r->log_inflight = true;
}

static void on_logpoll(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	poll_log(t->data);
}

static void cq_class_usage(struct run *r, const char *cls, int64_t now,
    double *used, double *nominal, int64_t *cur)
{
	size_t i;

	*used = 0;
	*nominal = 0;
	*cur = 0;
	for (i = 0; i < r->ncqs; i++) {
		struct cq *q = &r->cqs[i];

		if (cls != NULL && strcmp(q->cls, cls) != 0)
			continue;
		cq_account(q, now, 0);
		*used += q->used;
		*nominal += (double)q->nominal_milli;
		*cur += q->usage_milli;
	}
}

static void finish_run(struct run *r);

static void on_sample(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct run *r = t->data;
	int64_t now = mono();
	double el = (double)(now - r->run_start_ns) / 1e9, used, nominal;
	int64_t cur;
	int64_t pending = r->created - r->finished - r->admitted_now;

	(void)loop;
	(void)revents;
	if (r->controller > 0) {
		int st;

		if (waitpid(r->controller, &st, WNOHANG) == r->controller) {
			fprintf(stderr,
			    "cueue-bench sched: cueue-controller "
			    "exited; see its log in %s\n",
			    r->o.out);
			r->controller = 0;
			r->timed_out = true;
			finish_run(r);
			return;
		}
	}
	cq_class_usage(r, NULL, now, &used, &nominal, &cur);
	if (r->adm_csv != NULL)
		fprintf(r->adm_csv, "%.1f,%lld,%lld,%lld,%lld,%lld\n", el,
		    (long long)r->created, (long long)r->admissions,
		    (long long)r->finished, (long long)pending,
		    (long long)(r->admissions - r->last_sample_adm));
	r->last_sample_adm = r->admissions;
	if (r->use_csv != NULL) {
		size_t i;

		fprintf(r->use_csv, "%.1f,%.2f", el,
		    nominal > 0 ? 100.0 * (double)cur / nominal : 0);
		for (i = 0; i < r->ncqs; i++)
			fprintf(r->use_csv, ",%.2f",
			    r->cqs[i].nominal_milli > 0
				? 100.0 * (double)r->cqs[i].usage_milli /
				      (double)r->cqs[i].nominal_milli
				: 0);
		fprintf(r->use_csv, "\n");
	}
	if (((int64_t)el) % 5 == 0 || r->finished == r->total)
		fprintf(stderr,
		    "  [%s] %6.0fs  created %lld/%lld  admitted %lld  "
		    "running %lld  pending %lld  finished %lld  evictions "
		    "%lld\n",
		    r->o.label, el, (long long)r->created, (long long)r->total,
		    (long long)r->admissions, (long long)r->admitted_now,
		    (long long)pending, (long long)r->finished,
		    (long long)r->evictions);
	if (r->finished >= r->total)
		finish_run(r);
}

static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct run *r = t->data;

	(void)loop;
	(void)revents;
	fprintf(stderr, "cueue-bench sched: timed out after %d s\n",
	    r->o.timeout_s);
	{
		size_t i, shown = 0;

		for (i = 0; i < r->nwls && shown < 10; i++) {
			struct wl *w = r->wls[i];
			json_t *o;
			char *s;

			if (w->finished)
				continue;
			shown++;
			o = api_informer_get(r->inf, w->ns, w->name);
			if (o == NULL ||
			    api_json_dumps(json_object_get(o, "status"),
				JSON_COMPACT | JSON_ENCODE_ANY, 0, &s,
				NULL) != CU_OK)
				s = NULL;
			fprintf(stderr, "  unfinished %s/%s: %s\n", w->ns,
			    w->name, s ? s : "(not in the cache)");
			cu_free(s);
		}
	}
	r->timed_out = true;
	finish_run(r);
}

static void final_log_done(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct run *r = t->data;

	(void)revents;
	/* Wait for the last access-log page (bounded). */
	if (r->log_inflight && r->wait_tries++ < 100)
		return;
	ev_timer_stop(loop, t);
	ev_break(loop, EVBREAK_ALL);
}

static void finish_run(struct run *r)
{
	size_t i;

	if (r->done)
		return;
	r->done = true;
	r->end_ns = mono();
	ev_timer_stop(r->loop, &r->sample);
	ev_timer_stop(r->loop, &r->logpoll);
	ev_timer_stop(r->loop, &r->deadline);
	for (i = 0; i < r->ncreators; i++)
		ev_timer_stop(r->loop, &r->creators[i].t);
	for (i = 0; i < r->nwls; i++)
		if (r->wls[i]->fin_armed) {
			ev_timer_stop(r->loop, &r->wls[i]->fin);
			r->wls[i]->fin_armed = false;
		}
	if (r->controller > 0)
		proc_stats(r->controller, &r->rss_kib, &r->cpu_s);
	else if (r->o.controller_pid > 0)
		proc_stats(r->o.controller_pid, &r->rss_kib, &r->cpu_s);
	/* Everything the controller sent up to now. */
	r->log_inflight = false;
	poll_log(r);
	r->wait_tries = 0;
	ev_timer_init(&r->wait_t, final_log_done, 0.05, 0.05);
	r->wait_t.data = r;
	ev_timer_start(r->loop, &r->wait_t);
}

/* ---- phases --------------------------------------------------------- */

static void start_run(struct run *r)
{
	size_t i;

	if (r->setup_failed) {
		fprintf(stderr, "cueue-bench sched: setup failed\n");
		ev_break(r->loop, EVBREAK_ALL);
		return;
	}
	r->run_start_ns = mono();
	if (r->ctl_start_ns == 0)
		r->ctl_start_ns = r->run_start_ns;
	for (i = 0; i < r->ncqs; i++)
		r->cqs[i].last_ns = r->run_start_ns;
	if (r->use_csv != NULL) {
		fprintf(r->use_csv, "seconds,all");
		for (i = 0; i < r->ncqs; i++)
			fprintf(r->use_csv, ",%s", r->cqs[i].name);
		fprintf(r->use_csv, "\n");
	}
	for (i = 0; i < r->ncreators; i++) {
		struct creator *c = &r->creators[i];
		double iv = (double)c->set->interval_ms / 1000.0;

		/* Kueue's generator waits one interval before each one. */
		ev_timer_init(&c->t, on_create_tick, iv, iv > 0 ? iv : 0.001);
		c->t.data = c;
		if (c->set->count > 0 && c->set->ntmpl > 0)
			ev_timer_start(r->loop, &c->t);
	}
	ev_timer_init(&r->sample, on_sample, 1.0, 1.0);
	r->sample.data = r;
	ev_timer_start(r->loop, &r->sample);
	ev_timer_init(&r->logpoll, on_logpoll, 2.0, 2.0);
	r->logpoll.data = r;
	ev_timer_start(r->loop, &r->logpoll);
	ev_timer_init(&r->deadline, on_deadline, r->o.timeout_s, 0);
	r->deadline.data = r;
	ev_timer_start(r->loop, &r->deadline);
}

/* Wait until the Workload informer has synced and the controller shows
 * every ClusterQueue Active (it is ready to admit). */
static void on_ready_poll(struct ev_loop *loop, ev_timer *t, int revents);

static void cq_active_done(const struct api_response *resp, void *payload)
{
	struct run *r = payload;
	json_t *items = json_object_get(resp->body, "items"), *e;
	size_t i, active = 0;

	if (resp->canceled)
		return;
	json_array_foreach(items, i, e)
	{
		if (cond_true(e, "Active"))
			active++;
	}
	if ((active == r->ncqs && api_informer_synced(r->inf)) ||
	    r->wait_tries++ > 600) {
		if (active != r->ncqs)
			fprintf(stderr,
			    "cueue-bench sched: only %zu of %zu ClusterQueues "
			    "active after 60 s; starting anyway\n",
			    active, r->ncqs);
		start_run(r);
		return;
	}
	ev_timer_init(&r->wait_t, on_ready_poll, 0.1, 0);
	r->wait_t.data = r;
	ev_timer_start(r->loop, &r->wait_t);
}

static void on_ready_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct run *r = t->data;
	char *path = api_resource_path(&R_CQ, NULL, NULL, NULL);
	cu_error err;

	(void)loop;
	(void)revents;
	if (path == NULL || api_request(NULL, r->client, "GET", path, NULL,
				NULL, cq_active_done, r, &err) != CU_OK)
		die("cannot poll ClusterQueues", "");
	cu_free(path);
}

static void after_lqs(struct run *r);

static void create_queues(struct run *r)
{
	size_t i;

	for (i = 0; i < r->ncqs; i++) {
		struct cq *q = &r->cqs[i];

		post(r, &R_LQ, q->name,
		    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
			"kueue.x-k8s.io/v1beta2", "kind", "LocalQueue",
			"metadata", "name", q->name, "namespace", q->name,
			"spec", "clusterQueue", q->name));
	}
	then(r, after_lqs);
}

static void after_lqs(struct run *r)
{
	if (r->setup_failed) {
		fprintf(stderr, "cueue-bench sched: setup failed\n");
		ev_break(r->loop, EVBREAK_ALL);
		return;
	}
	r->wait_tries = 0;
	r->wait_t.data = r;
	on_ready_poll(r->loop, &r->wait_t, 0);
}

static void create_objects(struct run *r);

static void start_controller(struct run *r)
{
	char cfg[300], kc[300], store[300], log[600], qps[64], burst[32];
	char *ctl;
	FILE *f;

	if (r->setup_failed) {
		fprintf(stderr, "cueue-bench sched: CRD registration failed\n");
		ev_break(r->loop, EVBREAK_ALL);
		return;
	}
	if (r->o.bin == NULL) {
		create_objects(r);
		return;
	}
	snprintf(cfg, sizeof(cfg), "%s/controller.yaml", r->tmp);
	snprintf(kc, sizeof(kc), "%s/kubeconfig", r->tmp);
	snprintf(store, sizeof(store), "%s/ledger.db", r->tmp);
	snprintf(
	    log, sizeof(log), "%s/controller-%s.log", r->o.out, r->o.label);
	snprintf(qps, sizeof(qps), "%g", r->o.qps);
	snprintf(burst, sizeof(burst), "%d", r->o.burst);
	f = fopen(cfg, "w");
	if (f == NULL)
		die("cannot write", cfg);
	fprintf(f, "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		   "kind: Configuration\n"
		   "namespace: cueue-system\n"
		   "health:\n  healthProbeBindAddress: \"0\"\n"
		   "metrics:\n  bindAddress: \"0\"\n"
		   "internalCertManagement:\n  enable: false\n"
		   "leaderElection:\n  leaderElect: false\n"
		   /* the visibility server's fixed port (8082) would keep
		    * two runs from going side by side */
		   "featureGates:\n  VisibilityOnDemand: false\n");
	if (r->o.qps > 0)
		fprintf(f, "clientConnection:\n  qps: %s\n  burst: %s\n", qps,
		    burst);
	else
		fprintf(f, "clientConnection:\n  qps: 1000000\n  burst: "
			   "1000000\n"); /* unthrottled */
	fclose(f);
	ctl = cu_asprintf("%s/cueue-controller", r->o.bin);
	{
		/* CUEUE_BENCH_LOG_LEVEL: the controller's level (debugging a
		 * run); the default keeps logging out of the measurement. */
		const char *lvl = getenv("CUEUE_BENCH_LOG_LEVEL");
		char *argv[] = {ctl, (char *)"--config", cfg,
		    (char *)"--kubeconfig", kc, (char *)"--store", store,
		    (char *)"--log-level", (char *)(lvl ? lvl : "warn"), NULL};

		r->ctl_start_ns = mono();
		r->controller = spawn(argv, log);
	}
	cu_free(ctl);
	if (r->controller <= 0)
		die("cannot start cueue-controller", "");
	create_objects(r);
}

static void create_objects(struct run *r)
{
	size_t i, j, k, n = 0, c, q;
	cu_error err;

	post(r, &R_RF, NULL,
	    json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion",
		"kueue.x-k8s.io/v1beta2", "kind", "ResourceFlavor", "metadata",
		"name", r->g.flavor, "labels", L_CLASS, "rf"));
	for (i = 0; i < r->g.ncohorts; i++) {
		const struct sched_cohort_set *cs = &r->g.cohorts[i];

		for (c = 0; c < (size_t)cs->count; c++) {
			char cohort[128];

			snprintf(cohort, sizeof(cohort), "%s-%zu",
			    cs->class_name, c);
			post(r, &R_COHORT, NULL,
			    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				"kueue.x-k8s.io/v1beta2", "kind", "Cohort",
				"metadata", "name", cohort));
			for (j = 0; j < cs->nqsets; j++) {
				const struct sched_queue_set *qs =
				    &cs->qsets[j];

				for (q = 0; q < (size_t)qs->count; q++) {
					struct cq *cq = &r->cqs[n++];
					char nom[32], bor[32];
					json_t *res, *cqo;

					cq->name = cu_asprintf("%s-%zu-%zu-%s",
					    qs->class_name, j, q, cohort);
					cq->cls = cu_strdup(qs->class_name);
					cq->cohort = cu_strdup(cohort);
					cq->nominal_milli = qs->nominal_milli;
					if (cq->name == NULL ||
					    cq->cls == NULL ||
					    cq->cohort == NULL)
						die("out of memory", "");
					snprintf(nom, sizeof(nom), "%lldm",
					    (long long)qs->nominal_milli);
					res = json_pack("{s:s, s:s}", "name",
					    "cpu", "nominalQuota", nom);
					if (qs->borrowing_milli >= 0) {
						snprintf(bor, sizeof(bor),
						    "%lldm",
						    (long long)
							qs->borrowing_milli);
						json_object_set_new(res,
						    "borrowingLimit",
						    json_string(bor));
					}
					cqo = json_pack(
					    "{s:s, s:s, s:{s:s, s:{s:s}}, "
					    "s:{s:s, s:{}, s:[{s:[s], "
					    "s:[{s:s, s:[o]}]}]}}",
					    "apiVersion",
					    "kueue.x-k8s.io/v1beta2", "kind",
					    "ClusterQueue", "metadata", "name",
					    cq->name, "labels", L_CLASS,
					    qs->class_name, "spec",
					    "cohortName", cohort,
					    "namespaceSelector",
					    "resourceGroups",
					    "coveredResources", "cpu",
					    "flavors", "name", r->g.flavor,
					    "resources", res);
					if (qs->reclaim != NULL ||
					    qs->within != NULL) {
						json_t *p = json_object();

						if (qs->reclaim)
							json_object_set_new(p,
							    "reclaimWithinCoh"
							    "ort",
							    json_string(
								qs->reclaim));
						if (qs->within)
							json_object_set_new(p,
							    "withinClusterQue"
							    "ue",
							    json_string(
								qs->within));
						json_object_set_new(
						    json_object_get(
							cqo, "spec"),
						    "preemption", p);
					}
					post(r, &R_NS, NULL,
					    json_pack("{s:s, s:s, s:{s:s}}",
						"apiVersion", "v1", "kind",
						"Namespace", "metadata", "name",
						cq->name));
					post(r, &R_CQ, NULL, cqo);
					for (k = 0; k < qs->nsets; k++) {
						struct creator *cr =
						    &r->creators
							 [r->ncreators++];

						cr->r = r;
						cr->cq = cq;
						cr->set = &qs->sets[k];
						cr->set_idx = (int)k;
					}
				}
			}
		}
	}
	{
		struct api_informer_handlers h = {
		    on_wl_add, on_wl_update, NULL, NULL};

		if (api_informer_new(&r->inf, r->client, &R_WL, NULL, L_CLASS,
			NULL, &h, r, &err) != CU_OK)
			die("informer", err.msg);
	}
	/* LocalQueues need their namespaces. */
	then(r, create_queues);
}

static void register_crds(struct run *r)
{
	DIR *d = opendir(r->o.crds);
	struct dirent *e;
	cu_error err;

	if (d == NULL)
		die("cannot open", r->o.crds);
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		size_t len = strlen(e->d_name);
		json_t *doc = NULL, *o;
		size_t i;

		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->o.crds, e->d_name);
		{
			FILE *f = fopen(path, "rb");
			char *buf;
			long n;

			if (f == NULL)
				die("cannot read", path);
			fseek(f, 0, SEEK_END);
			n = ftell(f);
			fseek(f, 0, SEEK_SET);
			buf = cu_malloc((size_t)n + 1);
			if (buf == NULL ||
			    fread(buf, 1, (size_t)n, f) != (size_t)n)
				die("cannot read", path);
			fclose(f);
			if (api_yaml_load_all(
				&doc, buf, (size_t)n, NULL, &err) != CU_OK)
				die("CRD", err.msg);
			cu_free(buf);
		}
		json_array_foreach(doc, i, o)
		{
			if (json_is_object(o))
				post(r, &R_CRD, NULL, json_incref(o));
		}
		json_decref(doc);
	}
	closedir(d);
	then(r, start_controller);
}

/* ---- report --------------------------------------------------------- */

struct wl_class_sum {
	char name[64];
	int64_t count, evictions, admit_ms, finish_ms;
};

static double class_limit(
    const struct sched_limit *l, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(l[i].name, name) == 0)
			return l[i].value;
	return -1;
}

static void verdict(FILE *out, int *fails, const char *what, double value,
    double limit, bool at_most, const char *unit, const char *src)
{
	bool ok;

	if (limit < 0)
		return;
	ok = at_most ? value <= limit : value >= limit;
	if (!ok)
		(*fails)++;
	/* Ratios near 1 (writes per admission) need three decimals. */
	fprintf(out, "  %-4s %-38s %12.*f %-4s %s %10.*f  (%s)\n",
	    ok ? "ok" : "FAIL", what, limit < 10 ? 3 : 1, value, unit,
	    at_most ? "<=" : ">=", limit < 10 ? 3 : 1, limit, src);
}

static void report(struct run *r, const struct sched_ranges *kueue,
    const struct sched_ranges *tgt, int *kfails, int *tfails)
{
	struct wl_class_sum cls[16];
	size_t ncls = 0, i, j;
	json_t *sum = json_object(), *wc = json_object(), *cc = json_object(),
	       *cu = json_object();
	int64_t wall_ms = (r->end_ns - r->ctl_start_ns) / 1000000;
	int64_t admitted_wls = 0;
	double wpa, peak_rps = 0;
	char path[1024];
	FILE *f;
	const char *k;
	json_t *v;

	memset(cls, 0, sizeof(cls));
	for (i = 0; i < r->nwls; i++) {
		struct wl *w = r->wls[i];

		for (j = 0; j < ncls; j++)
			if (strcmp(cls[j].name, w->cls) == 0)
				break;
		if (j == ncls && ncls < 16)
			snprintf(cls[ncls++].name, sizeof(cls[0].name), "%s",
			    w->cls);
		if (j >= ncls)
			continue;
		cls[j].count++;
		cls[j].evictions += w->evictions;
		cls[j].admit_ms += w->time_to_admit_ms;
		cls[j].finish_ms += w->time_to_finish_ms;
		if (w->admit_ns > 0)
			admitted_wls++;
	}
	for (j = 0; j < ncls; j++)
		json_object_set_new(wc, cls[j].name,
		    json_pack("{s:I, s:I, s:I, s:I}", "count",
			(json_int_t)cls[j].count, "totalEvictions",
			(json_int_t)cls[j].evictions,
			"averageTimeToAdmissionMs",
			(json_int_t)(cls[j].count
					 ? cls[j].admit_ms / cls[j].count
					 : 0),
			"averageTimeToFinishMs",
			(json_int_t)(cls[j].count
					 ? cls[j].finish_ms / cls[j].count
					 : 0)));
	for (i = 0; i < r->ncqs; i++) {
		json_t *g = json_object_get(cc, r->cqs[i].cls);
		double used, nominal;
		int64_t cur;

		if (g != NULL)
			continue;
		cq_class_usage(
		    r, r->cqs[i].cls, r->end_ns, &used, &nominal, &cur);
		{
			double run_ms =
			    (double)(r->end_ns - r->run_start_ns) / 1e6;
			double avg = run_ms > 0 ? used / run_ms : 0;

			json_object_set_new(cc, r->cqs[i].cls,
			    json_pack("{s:I, s:I, s:I, s:I}", "cpuUsed",
				(json_int_t)used, "cpuAverageUsage",
				(json_int_t)avg, "nominalQuota",
				(json_int_t)nominal, "monitoringTimeMs",
				(json_int_t)run_ms));
			json_object_set_new(cu, r->cqs[i].cls,
			    json_real(nominal > 0 ? 100.0 * avg / nominal : 0));
		}
	}
	json_object_foreach(r->ctl_per_sec, k, v)
	{
		if ((double)json_integer_value(v) > peak_rps)
			peak_rps = (double)json_integer_value(v);
	}
	wpa = admitted_wls ? (double)r->ctl_writes / (double)admitted_wls : 0;
	json_object_set_new(sum, "clusterQueueClasses", cc);
	json_object_set_new(sum, "workloadClasses", wc);
	json_object_set_new(sum, "cmd",
	    json_pack("{s:I, s:I, s:I}", "wallMs", (json_int_t)wall_ms, "cpuMs",
		(json_int_t)(r->cpu_s * 1000), "maxrss",
		(json_int_t)r->rss_kib));
	json_object_set_new(sum, "cueue",
	    json_pack("{s:s, s:f, s:i, s:I, s:I, s:I, s:I, s:f, s:f, s:O, "
		      "s:O, s:I, s:I, s:f, s:O, s:b}",
		"label", r->o.label, "qps", r->o.qps, "burst", r->o.burst,
		"workloads", (json_int_t)r->total, "finished",
		(json_int_t)r->finished, "capacityBoundMs",
		(json_int_t)sched_gen_capacity_bound_ms(&r->g), "writeBoundMs",
		(json_int_t)(r->o.qps > 0 ? (double)r->total * 1000.0 / r->o.qps
					  : 0),
		"peakRssMiB", r->rss_kib > 0 ? (double)r->rss_kib / 1024.0 : -1,
		"averageCpuMillis",
		wall_ms > 0 && r->cpu_s >= 0 ? r->cpu_s * 1e6 / (double)wall_ms
					     : -1,
		"controllerRequestsByVerb", r->ctl_verbs,
		"controllerWritesByResource", r->ctl_kinds, "controllerWrites",
		(json_int_t)r->ctl_writes, "controllerEventWrites",
		(json_int_t)r->ctl_event_writes, "writesPerAdmittedWorkload",
		wpa, "clusterQueueClassesUsagePercent", cu, "timedOut",
		r->timed_out));
	json_decref(cu);
	snprintf(path, sizeof(path), "%s/summary.json", r->o.out);
	json_dump_file(sum, path, JSON_INDENT(2) | JSON_SORT_KEYS);
	/* summary.yaml: the same document (JSON is YAML; block style). */
	snprintf(path, sizeof(path), "%s/summary.yaml", r->o.out);
	if ((f = fopen(path, "w")) != NULL) {
		json_t *top = sum;
		const char *k1, *k2, *k3;
		json_t *v1, *v2, *v3;

		json_object_foreach(top, k1, v1)
		{
			fprintf(f, "%s:\n", k1);
			json_object_foreach(v1, k2, v2)
			{
				if (!json_is_object(v2)) {
					char *s =
					    json_dumps(v2, JSON_ENCODE_ANY);

					fprintf(
					    f, "  %s: %s\n", k2, s ? s : "");
					cu_free(s);
					continue;
				}
				fprintf(f, "  %s:\n", k2);
				json_object_foreach(v2, k3, v3)
				{
					char *s =
					    json_dumps(v3, JSON_ENCODE_ANY);

					fprintf(
					    f, "    %s: %s\n", k3, s ? s : "");
					cu_free(s);
				}
			}
		}
		fclose(f);
	}
	/* The one-screen report. */
	printf("== %s: %lld Workloads, %zu ClusterQueues, controller QPS %s\n",
	    r->o.label, (long long)r->total, r->ncqs,
	    r->o.qps > 0 ? "limited" : "unlimited");
	if (r->o.qps > 0)
		printf("   clientConnection qps %g burst %d\n", r->o.qps,
		    r->o.burst);
	printf("   wall %.1f s   (capacity bound %.1f s",
	    (double)wall_ms / 1000.0,
	    (double)sched_gen_capacity_bound_ms(&r->g) / 1000.0);
	if (r->o.qps > 0)
		printf(", write bound %.1f s at 1 write/admission",
		    (double)r->total / r->o.qps);
	printf(")\n");
	printf("   finished %lld/%lld, evictions %lld%s\n",
	    (long long)r->finished, (long long)r->total,
	    (long long)r->evictions, r->timed_out ? "  TIMED OUT" : "");
	for (j = 0; j < ncls; j++)
		printf("   class %-8s count %6lld  avg time to admission "
		       "%9.1f ms  evictions %lld\n",
		    cls[j].name, (long long)cls[j].count,
		    cls[j].count
			? (double)cls[j].admit_ms / (double)cls[j].count
			: 0,
		    (long long)cls[j].evictions);
	json_object_foreach(cc, k, v)
	{
		printf("   cq class %-6s usage %.1f %%\n", k,
		    json_integer_value(json_object_get(v, "nominalQuota"))
			? 100.0 *
			      (double)json_integer_value(
				  json_object_get(v, "cpuAverageUsage")) /
			      (double)json_integer_value(
				  json_object_get(v, "nominalQuota"))
			: 0);
	}
	printf("   controller: peak RSS %.1f MiB, CPU %.0f mCPU average, "
	       "%lld requests (",
	    r->rss_kib > 0 ? (double)r->rss_kib / 1024.0 : -1,
	    wall_ms > 0 ? r->cpu_s * 1e6 / (double)wall_ms : -1,
	    (long long)r->ctl_requests);
	{
		bool first = true;

		json_object_foreach(r->ctl_verbs, k, v)
		{
			printf("%s%s %lld", first ? "" : ", ", k,
			    (long long)json_integer_value(v));
			first = false;
		}
	}
	printf("), peak %.0f req/s\n", peak_rps);
	printf("   writes per admitted Workload %.3f (%lld writes, %lld "
	       "Workloads admitted; %lld event writes apart)\n",
	    wpa, (long long)r->ctl_writes, (long long)admitted_wls,
	    (long long)r->ctl_event_writes);
	{
		bool first = true;

		printf("   controller writes:");
		json_object_foreach(r->ctl_kinds, k, v)
		{
			printf("%s %s %lld", first ? "" : ",", k,
			    (long long)json_integer_value(v));
			first = false;
		}
		printf("\n");
	}
	if (!r->have_log)
		printf("   (no /__test/log on this API server: request counts "
		       "unavailable)\n");
	*kfails = *tfails = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct sched_ranges *rg = pass == 0 ? kueue : tgt;
		int *fails = pass == 0 ? kfails : tfails;
		const char *src = pass == 0 ? "Kueue range" : "target";

		if (rg == NULL)
			continue;
		printf("   %s:\n",
		    pass == 0 ? "Kueue's rangespec" : "cueue's targets");
		verdict(stdout, fails, "wall ms", (double)wall_ms,
		    rg->max_wall_ms, true, "ms", src);
		for (j = 0; j < ncls; j++)
			verdict(stdout, fails,
			    cls[j].name[0] ? cls[j].name : "?",
			    cls[j].count
				? (double)cls[j].admit_ms / (double)cls[j].count
				: 0,
			    class_limit(
				rg->max_admit, rg->nmax_admit, cls[j].name),
			    true, "ms", "avg time to admission");
		json_object_foreach(cc, k, v)
		{
			double nom = (double)json_integer_value(
			    json_object_get(v, "nominalQuota"));
			double pct = nom > 0 ? 100.0 *
						   (double)json_integer_value(
						       json_object_get(v,
							   "cpuAverageUsage")) /
						   nom
					     : 0;
			char what[80];

			snprintf(what, sizeof(what), "cq class %s usage", k);
			verdict(stdout, fails, what, pct,
			    class_limit(rg->min_usage, rg->nmin_usage, k),
			    false, "%", src);
		}
		if (r->rss_kib > 0)
			verdict(stdout, fails, "controller peak RSS",
			    (double)r->rss_kib / 1024.0, rg->max_rss_mib, true,
			    "MiB", src);
		if (r->cpu_s >= 0 && wall_ms > 0)
			verdict(stdout, fails, "controller average CPU",
			    r->cpu_s * 1e6 / (double)wall_ms,
			    rg->max_cpu_millis, true, "mCPU", src);
		if (r->have_log)
			verdict(stdout, fails, "writes per admitted Workload",
			    wpa, rg->max_writes_per_admit, true, "", src);
	}
	json_decref(sum);
}

static void plots(struct run *r)
{
	char script[1024], *argv[3];
	FILE *f;
	pid_t pid;
	int st;

	snprintf(script, sizeof(script), "%s/plots.gp", r->o.out);
	if ((f = fopen(script, "w")) == NULL)
		return;
	fprintf(f,
	    "set datafile separator ','\n"
	    "set terminal pngcairo size 1000,500\n"
	    "set key outside\n"
	    "set xlabel 'seconds'\n"
	    "set output '%s/admissions.png'\n"
	    "set title 'cueue %s: Workloads over time'\n"
	    "plot '%s/admissions.csv' every ::1 using 1:2 with lines title "
	    "'created', '' every ::1 using 1:3 with lines title 'admitted', "
	    "'' every ::1 using 1:4 with lines title 'finished', '' every ::1 "
	    "using 1:5 with lines title 'pending'\n"
	    "set output '%s/usage.png'\n"
	    "set title 'cueue %s: ClusterQueue cpu usage (%% of nominal)'\n"
	    "set ylabel '%%'\n"
	    "plot '%s/usage.csv' every ::1 using 1:2 with lines lw 2 title "
	    "'all ClusterQueues'\n",
	    r->o.out, r->o.label, r->o.out, r->o.out, r->o.label, r->o.out);
	fclose(f);
	argv[0] = (char *)"/usr/bin/gnuplot";
	argv[1] = script;
	argv[2] = NULL;
	if (access(argv[0], X_OK) != 0) {
		fprintf(stderr, "cueue-bench sched: gnuplot not installed; "
				"CSVs only\n");
		return;
	}
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0)
		waitpid(pid, &st, 0);
}

/* ---- main ----------------------------------------------------------- */

/* The integer value v [borrowed] of option flag, at least min, into *out;
 * false (with a message naming the flag) when it is not one. */
static bool int_arg(const char *flag, const char *v, long min, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || *end != '\0' || errno != 0 || n < min || n > INT_MAX) {
		fprintf(stderr,
		    "cueue-bench sched: %s: \"%s\" is not an integer >= %ld\n",
		    flag, v, min);
		return false;
	}
	*out = (int)n;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-bench sched --generator FILE [--rangespec FILE]\n"
	    "         [--targets FILE] [--out DIR] [--label NAME]\n"
	    "         (--bin DIR [--crds DIR] | --kubeconfig FILE "
	    "[--controller-pid PID])\n"
	    "         [--qps N --burst N] [--timeout SECONDS]\n"
	    "       cueue-bench sched --check --generator FILE "
	    "[--rangespec FILE]\n"
	    "         [--targets FILE] [--qps N]\n"
	    "\n"
	    "Kueue's scheduler performance test against cueue-controller.\n"
	    "--bin starts cueue-apiserver and cueue-controller from DIR;\n"
	    "--kubeconfig uses running ones. --qps 0 means unthrottled.\n"
	    "--check only reads the input files and prints the plan (no\n"
	    "process is started): exit 0 when every file parses, else 1.\n"
	    "Exit status: 0 every Workload finished, 1 otherwise, 2 usage;\n"
	    "range and target verdicts are reported, not enforced.\n");
}

static void free_run(struct run *r)
{
	size_t i;

	api_informer_free(r->inf);
	api_client_free(r->status_client);
	api_client_free(r->client);
	for (i = 0; i < r->nwls; i++) {
		cu_free(r->wls[i]->ns);
		cu_free(r->wls[i]->name);
		cu_free(r->wls[i]->cls);
		cu_free(r->wls[i]);
	}
	cu_free(r->wls);
	for (i = 0; i < r->ncqs; i++) {
		cu_free(r->cqs[i].name);
		cu_free(r->cqs[i].cls);
		cu_free(r->cqs[i].cohort);
	}
	cu_free(r->cqs);
	cu_free(r->creators);
	json_decref(r->index);
	json_decref(r->ctl_verbs);
	json_decref(r->ctl_kinds);
	json_decref(r->ctl_per_sec);
	sched_gen_dispose(&r->g);
}

static void print_limits(
    const char *what, const struct sched_limit *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("     %s %s: %.10g\n", what, l[i].name, l[i].value);
}

/* --check: what a run of these inputs would do, without running it. */
static void print_plan(const struct opts *o, const struct sched_gen *g,
    const struct sched_ranges *kr, const struct sched_ranges *tr)
{
	const struct sched_ranges *rs[2] = {kr, tr};
	const char *rn[2] = {o->rangespec, o->targets};
	int64_t total = sched_gen_total(g);
	size_t i, j, k, l, r;

	printf("cueue-bench sched --check: %s\n", o->generator);
	printf("   ResourceFlavor %s\n", g->flavor);
	for (i = 0; i < g->ncohorts; i++) {
		const struct sched_cohort_set *c = &g->cohorts[i];

		printf(
		    "   %d cohort(s) of class %s\n", c->count, c->class_name);
		for (j = 0; j < c->nqsets; j++) {
			const struct sched_queue_set *q = &c->qsets[j];

			printf("     %d ClusterQueue(s) each of class %s: "
			       "nominal %lldm cpu, borrowing limit %lldm, "
			       "reclaimWithinCohort %s, withinClusterQueue "
			       "%s\n",
			    q->count, q->class_name,
			    (long long)q->nominal_milli,
			    (long long)q->borrowing_milli,
			    q->reclaim ? q->reclaim : "-",
			    q->within ? q->within : "-");
			for (k = 0; k < q->nsets; k++)
				for (l = 0; l < q->sets[k].ntmpl; l++) {
					const struct sched_wl_tmpl *t =
					    &q->sets[k].tmpl[l];

					printf("       %d x %s: %lldm cpu, "
					       "%lld ms, priority %d, every "
					       "%lld ms\n",
					    q->sets[k].count, t->class_name,
					    (long long)t->request_milli,
					    (long long)t->runtime_ms,
					    (int)t->priority,
					    (long long)q->sets[k].interval_ms);
				}
		}
	}
	printf("   %lld Workloads; capacity bound %.1f s", (long long)total,
	    (double)sched_gen_capacity_bound_ms(g) / 1000.0);
	if (o->qps > 0)
		printf(", write bound %.1f s at qps %.10g",
		    (double)total / o->qps, o->qps);
	printf("\n");
	for (r = 0; r < 2; r++) {
		if (rs[r] == NULL)
			continue;
		printf("   %s:\n", rn[r]);
		if (rs[r]->max_wall_ms >= 0)
			printf("     maxWallMs: %.10g\n", rs[r]->max_wall_ms);
		print_limits(
		    "min usage %", rs[r]->min_usage, rs[r]->nmin_usage);
		print_limits("max avg ms to admission", rs[r]->max_admit,
		    rs[r]->nmax_admit);
		if (rs[r]->max_rss_mib >= 0)
			printf(
			    "     maxPeakRssMiB: %.10g\n", rs[r]->max_rss_mib);
		if (rs[r]->max_cpu_millis >= 0)
			printf("     maxAverageCpuMillis: %.10g\n",
			    rs[r]->max_cpu_millis);
		if (rs[r]->max_writes_per_admit >= 0)
			printf("     maxWritesPerAdmittedWorkload: %.10g\n",
			    rs[r]->max_writes_per_admit);
	}
}

int bench_sched_main(int argc, char **argv)
{
	struct run r;
	struct sched_ranges kr, tr;
	bool have_kr = false, have_tr = false;
	struct api_client_opts co;
	cu_error err;
	size_t ncq = 0, ncr = 0, i, j;
	int kfails = 0, tfails = 0, rc;
	char path[1024];

	memset(&r, 0, sizeof(r));
	r.o.out = "build/bench/sched";
	r.o.label = "run";
	r.o.crds = "manifests/crds";
	r.o.timeout_s = 1800;
	r.o.burst = 100;
	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--check") == 0) {
			r.o.check = true;
			continue;
		}
		if (v == NULL) {
			usage(stderr);
			return 2;
		}
		i++;
		if (strcmp(a, "--generator") == 0)
			r.o.generator = v;
		else if (strcmp(a, "--rangespec") == 0)
			r.o.rangespec = v;
		else if (strcmp(a, "--targets") == 0)
			r.o.targets = v;
		else if (strcmp(a, "--out") == 0)
			r.o.out = v;
		else if (strcmp(a, "--label") == 0)
			r.o.label = v;
		else if (strcmp(a, "--bin") == 0)
			r.o.bin = v;
		else if (strcmp(a, "--crds") == 0)
			r.o.crds = v;
		else if (strcmp(a, "--kubeconfig") == 0)
			r.o.kubeconfig = v;
		else if (strcmp(a, "--controller-pid") == 0) {
			if (!int_arg(a, v, 1, &r.o.controller_pid))
				return 2;
		} else if (strcmp(a, "--qps") == 0) {
			char *end;

			r.o.qps = strtod(v, &end);
			if (end == v || *end != '\0' || !(r.o.qps >= 0)) {
				fprintf(stderr,
				    "cueue-bench sched: --qps: \"%s\" is not "
				    "a number >= 0\n",
				    v);
				return 2;
			}
		} else if (strcmp(a, "--burst") == 0) {
			if (!int_arg(a, v, 0, &r.o.burst))
				return 2;
		} else if (strcmp(a, "--timeout") == 0) {
			if (!int_arg(a, v, 1, &r.o.timeout_s))
				return 2;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (r.o.generator == NULL ||
	    (!r.o.check && (r.o.bin == NULL) == (r.o.kubeconfig == NULL))) {
		usage(stderr);
		return 2;
	}
	if (sched_gen_load(&r.g, r.o.generator, &err) != CU_OK) {
		fprintf(stderr, "cueue-bench sched: %s\n", err.msg);
		sched_gen_dispose(&r.g);
		return 1;
	}
	if (r.o.rangespec != NULL) {
		if (sched_ranges_load(&kr, r.o.rangespec, &err) != CU_OK) {
			fprintf(stderr, "cueue-bench sched: %s\n", err.msg);
			sched_ranges_dispose(&kr);
			sched_gen_dispose(&r.g);
			return 1;
		}
		have_kr = true;
	}
	if (r.o.targets != NULL) {
		if (sched_ranges_load(&tr, r.o.targets, &err) != CU_OK) {
			fprintf(stderr, "cueue-bench sched: %s\n", err.msg);
			sched_ranges_dispose(&tr);
			if (have_kr)
				sched_ranges_dispose(&kr);
			sched_gen_dispose(&r.g);
			return 1;
		}
		have_tr = true;
	}
	if (r.o.check) {
		print_plan(
		    &r.o, &r.g, have_kr ? &kr : NULL, have_tr ? &tr : NULL);
		sched_gen_dispose(&r.g);
		if (have_kr)
			sched_ranges_dispose(&kr);
		if (have_tr)
			sched_ranges_dispose(&tr);
		return 0;
	}
	mkdir(r.o.out, 0755);
	r.total = sched_gen_total(&r.g);
	for (i = 0; i < r.g.ncohorts; i++)
		for (j = 0; j < r.g.cohorts[i].nqsets; j++) {
			size_t n = (size_t)r.g.cohorts[i].qsets[j].count *
				   (size_t)r.g.cohorts[i].count;

			ncq += n;
			ncr += n * r.g.cohorts[i].qsets[j].nsets;
		}
	r.ncqs = ncq;
	r.cqs = cu_calloc(ncq + 1, sizeof(*r.cqs));
	r.creators = cu_calloc(ncr + 1, sizeof(*r.creators));
	r.index = json_object();
	r.ctl_verbs = json_object();
	r.ctl_kinds = json_object();
	r.ctl_per_sec = json_object();
	if (r.cqs == NULL || r.creators == NULL || r.index == NULL)
		die("out of memory", "");
	r.loop = EV_DEFAULT;
	snprintf(r.tmp, sizeof(r.tmp), "/tmp/cueue-bench-XXXXXX");
	if (mkdtemp(r.tmp) == NULL)
		die("mkdtemp failed", "");
	if (r.o.bin != NULL) {
		char as[1024], kc[300], log[1024];
		char *aargv[] = {as, (char *)"--listen", (char *)"127.0.0.1:0",
		    (char *)"--kubeconfig-out", kc, (char *)"--test-endpoints",
		    (char *)"--watch-history", (char *)"200000",
		    (char *)"--log-level", (char *)"warn", NULL};
		struct stat stt;
		int tries;

		snprintf(as, sizeof(as), "%s/cueue-apiserver", r.o.bin);
		snprintf(kc, sizeof(kc), "%s/kubeconfig", r.tmp);
		snprintf(log, sizeof(log), "%s/apiserver-%s.log", r.o.out,
		    r.o.label);
		r.apiserver = spawn(aargv, log);
		if (r.apiserver <= 0)
			die("cannot start cueue-apiserver", "");
		for (tries = 0; tries < 200; tries++) {
			if (stat(kc, &stt) == 0 && stt.st_size > 0)
				break;
			usleep(50000);
		}
		usleep(100000);
		rc = api_client_opts_from_kubeconfig(&co, kc, &err);
	} else {
		rc = api_client_opts_from_kubeconfig(&co, r.o.kubeconfig, &err);
	}
	if (rc != CU_OK) {
		stop_process(r.apiserver);
		die("kubeconfig", err.msg);
	}
	{
		const char *ua = co.user_agent; /* owned by co */

		co.user_agent = "cueue-bench/sched";
		co.qps = 0;
		co.max_attempts = 10;
		rc = api_client_new(&r.client, r.loop, &co, &err);
		if (rc == CU_OK)
			rc =
			    api_client_new(&r.status_client, r.loop, &co, &err);
		co.user_agent = ua;
	}
	api_client_opts_dispose(&co);
	if (rc != CU_OK) {
		stop_process(r.apiserver);
		die("client", err.msg);
	}
	snprintf(path, sizeof(path), "%s/admissions.csv", r.o.out);
	r.adm_csv = fopen(path, "w");
	if (r.adm_csv != NULL)
		fprintf(r.adm_csv, "seconds,created,admitted,finished,pending,"
				   "admissions_per_second\n");
	snprintf(path, sizeof(path), "%s/usage.csv", r.o.out);
	r.use_csv = fopen(path, "w");
	fprintf(stderr,
	    "cueue-bench sched [%s]: %lld Workloads in %zu "
	    "ClusterQueues\n",
	    r.o.label, (long long)r.total, r.ncqs);
	if (r.o.bin != NULL)
		register_crds(&r);
	else
		start_controller(&r);
	ev_run(r.loop, 0);
	if (r.use_csv != NULL)
		fclose(r.use_csv);
	if (r.adm_csv != NULL)
		fclose(r.adm_csv);
	stop_process(r.controller);
	stop_process(r.apiserver);
	if (r.done) {
		report(&r, have_kr ? &kr : NULL, have_tr ? &tr : NULL, &kfails,
		    &tfails);
		plots(&r);
	}
	rc = r.done && !r.timed_out && r.finished == r.total &&
		     r.create_failed == 0
		 ? 0
		 : 1;
	free_run(&r);
	if (have_kr)
		sched_ranges_dispose(&kr);
	if (have_tr)
		sched_ranges_dispose(&tr);
	bench_rm_tree(r.tmp);
	return rc;
}
