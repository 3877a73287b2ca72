/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/ctl_int.h - the controller's internal header: the shared
 * struct ctl (wiring, plus one sub-struct per subsystem file) and the
 * functions the controller's files call across each other. Only the
 * controller's own files include it; the public interface is ctl.h.
 *
 * Which file holds what: docs/architecture.md section 2.3 (checked
 * against the tree by scripts/check-refs.sh). The declarations below are
 * grouped by the file that defines them.
 *
 * Event-loop thread only. Prefix ctl_.
 */
#ifndef CU_CONTROLLER_CTL_INT_H
#define CU_CONTROLLER_CTL_INT_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>

#include "admission/admission.h"
#include "api/client.h"
#include "controller/mauth.h"
#include "api/informer.h"
#include "api/model.h"
#include "controller/certrot.h"
#include "controller/ctl.h"
#include "controller/health.h"
#include "controller/httpd.h"
#include "controller/keys.h"
#include "controller/leader.h"
#include "controller/metrics.h"
#include "controller/pipeline.h"
#include "controller/vauth.h"
#include "controller/visibility.h"
#include "controller/whsrv.h"
#include "namespaces/gate.h"
#include "queues/queues.h"
#include "reconcile/reconcile.h"
#include "store/store.h"

/* ---- named constants ------------------------------------------------ */

/* The tick (metrics, backoffs, due pending statuses), in seconds. */
#define CTL_TICK_S 1.0
/* The authentication reviews' client (ctl.c side_clients). */
#define CTL_AUTH_CLIENT_CONNECTIONS 4
#define CTL_AUTH_CLIENT_TIMEOUT_MS 5000
/* The Lease client's own budget. */
#define CTL_LEASE_CLIENT_QPS 5.0
/* Configuration syncs under churn (feed.c ctl_config_due). */
#define CTL_SYNC_SPACING 4
#define CTL_SYNC_SPACING_MAX_NS (1000LL * 1000000LL)
/* Every this many ticks, parked Workloads get another look (on_tick). */
#define CTL_REQUEUE_ALL_TICKS 10
/* How long a PodsReady=True write may wait for the job's Finished write
 * to carry it (at most half the timeout; none with blockAdmission). */
#define CTL_PR_READY_DEFER_NS (5LL * 1000000000LL)

/* ---- informers ------------------------------------------------------ */

enum inf_id {
	INF_NS = 0,
	INF_RF,
	INF_CQ,
	INF_LQ,
	INF_COHORT,
	INF_WL,
	INF_WPC,	 /* WorkloadPriorityClasses */
	INF_PC,		 /* scheduling.k8s.io PriorityClasses */
	INF_ACHECK,	 /* AdmissionChecks (optional: the CRD may be absent) */
	INF_PRC,	 /* ProvisioningRequestConfigs (optional) */
	INF_PROVREQ,	 /* autoscaling.x-k8s.io ProvisioningRequests, label
			  * kueue.x-k8s.io/managed=true (optional) */
	INF_PODTEMPLATE, /* PodTemplates, the same label (optional) */
	INF_DEVICECLASS, /* resource.k8s.io DeviceClasses (optional; DRA) */
	INF_RCT,	 /* ResourceClaimTemplates (optional; DRA) */
	INF_RSLICE,	 /* resource.k8s.io/v1 ResourceSlices (optional; DRA
			  * CEL selectors, counter sources) */
	INF_TRAINRT,	 /* trainer.kubeflow.org TrainingRuntimes (optional;
			  * with the trainjob framework) */
	INF_CTRAINRT,	 /* ClusterTrainingRuntimes (the same) */
	/* The jobs, one informer per framework descriptor, in the order of
	 * the descriptor table (rec_fw_at(id - INF_JOB)); each only with
	 * its framework enabled (controller/frameworks.c). */
	INF_JOB,	 /* batch/job */
	INF_JOBSET,	 /* jobset.x-k8s.io/jobset */
	INF_PYTORCHJOB,	 /* kubeflow.org/pytorchjob */
	INF_TFJOB,	 /* kubeflow.org/tfjob */
	INF_XGBOOSTJOB,	 /* kubeflow.org/xgboostjob */
	INF_PADDLEJOB,	 /* kubeflow.org/paddlejob */
	INF_JAXJOB,	 /* kubeflow.org/jaxjob */
	INF_MPIJOB,	 /* kubeflow.org/mpijob */
	INF_RAYJOB,	 /* ray.io/rayjob */
	INF_RAYCLUSTER,	 /* ray.io/raycluster */
	INF_APPWRAPPER,	 /* workload.codeflare.dev/appwrapper */
	INF_POD,	 /* pod (plain Pods, reconcile/fw_pod.c) */
	INF_STATEFULSET, /* statefulset (never watched: rec_fw_pods_only) */
	INF_LWS,	 /* leaderworkerset.x-k8s.io (read only: its groups) */
	INF_RAYSERVICE,	 /* ray.io/rayservice */
	INF_SPARKAPP,	 /* sparkoperator.k8s.io/sparkapplication */
	INF_TRAINJOB,	 /* trainer.kubeflow.org/trainjob */
	INF__COUNT
};

/* ---- frameworks (controller/frameworks.c) ----------------------------- */

/* The job informer of objects of kind `kind` [borrowed] (a descriptor's
 * kind, e.g. CTL_KIND_JOB), or INF__COUNT when no framework has it. */
enum inf_id ctl_fw_inf(const char *kind);

/* The kind (key[0] of a job key) of job informer id [static]. */
const char *ctl_fw_kind(enum inf_id id);

/* Is id a job informer? */
bool ctl_fw_is_job(enum inf_id id);

/* The cached object group/plural ns/name for the descriptors
 * (rec_fw_lookup_fn; payload the ctl): the training runtimes. */
const json_t *ctl_fw_lookup(const char *group, const char *plural,
    const char *ns, const char *name, void *payload);

/* A TrainingRuntime or ClusterTrainingRuntime (informer id) obj
 * [borrowed] appeared, changed or went away: every TrainJob that
 * references it is reconciled again (its pod sets come from it). */
void ctl_fw_runtime_mark(ctl *c, enum inf_id id, json_t *obj);

/* Is the framework of job informer id listed in integrations.frameworks? */
bool ctl_fw_enabled(const struct ctl_config *cfg, enum inf_id id);

/* Is job informer id's cache kept? ctl_fw_enabled, and the StatefulSets
 * of a configured statefulset framework (pods-only: read for their pod
 * groups, never reconciled as jobs). */
bool ctl_fw_watched(const struct ctl_config *cfg, enum inf_id id);

/* The cached apps/v1 StatefulSet [borrowed] that owns the pod group of
 * pods[0..n) [borrowed] (a Pod's controller) or its Workload wl
 * [borrowed, may be NULL], or NULL; *awaited when a Pod names one that
 * is not cached yet (its event reconciles the group later). */
const json_t *ctl_fw_sts_parent(ctl *c, const json_t *const *pods, size_t n,
    const struct api_workload *wl, bool *awaited);

/* A StatefulSet event (key {"StatefulSet", ns, name}): its pod group (the
 * Workload name Kueue gives it) is reconciled. Event-loop thread only. */
void ctl_fw_sts_reconcile(ctl *c, const char *const *key, int64_t now);

/* The gate's per-kind switches (ns_gate_config.enabled) from cfg. */
void ctl_fw_gate_config(const struct ctl_config *cfg, struct ns_gate_config *g);

/* The kueue.x-k8s.io/pod-group-name label of Pod obj [borrowed from obj],
 * or NULL (controller/reconcilers.c). */
const char *ctl_pod_group_of(json_t *obj);

/* The pod-group reconciler for key {CTL_KIND_POD_GROUP, ns, group}
 * (controller/reconcilers.c). Event-loop thread only. */
void ctl_reconcile_pod_group(ctl *c, const char *const *key, int64_t now);

/* Kueue's leaderworkerset reconciler for key {"LeaderWorkerSet", ns,
 * name}: the group Workloads of the cached LeaderWorkerSet (or of one
 * that is gone), rec_lws_reconcile (controller/reconcilers.c). Event-loop
 * thread only. */
void ctl_reconcile_lws(ctl *c, const char *const *key, int64_t now);

/* A pod group whose first Pod pod [borrowed] a LeaderWorkerSet made
 * (its pod-suspending-parent annotation) and whose Workload is not there
 * (!have_wl) waits for the LeaderWorkerSet's reconciler to make it, as
 * Kueue's Pods wait for their prebuilt Workload. */
bool ctl_lws_pod_group_awaited(const json_t *pod, bool have_wl);

/* The leaderworkerset.sigs.k8s.io/name label of Pod obj [borrowed from
 * obj], or NULL. */
const char *ctl_lws_of_pod(const json_t *obj);

/* The resource of each informer (ctl.c), and of Events. */
extern const struct api_resource ctl_resources[INF__COUNT];
extern const struct api_resource ctl_res_events;
/* The resource of informer id, as a pointer (writes compare them). */
#define CTL_RES(id) (&ctl_resources[id])

struct inf_slot {
	ctl *c;
	enum inf_id id;
};

/* ---- the subsystems' state ------------------------------------------ */

/* Every ctl_keys below owns its entries, their keys and strings (keys.h);
 * a uid key is one string, a Workload key {ns, name}, an object key
 * {kind, ns, name} (CTL_KIND_*). */

/* A ClusterQueue's namespaceSelector, kept decoded between turns. */
struct cq_sel {
	char *name; /* owned */
	bool has;   /* a selector is set ({} = all); unset = none */
	api_selector sel;
};

/* feed.c: what the engine was given. */
struct ctl_feed {
	/* The names given to the engine (sets): ClusterQueues,
	 * ResourceFlavors, Cohorts by name, LocalQueues by {ns, name}. */
	ctl_keys cq_names, rf_names, cohort_names, lq_names;
	struct cq_sel *sels;
	size_t nsels, capsels;
	/* {ns, name} -> n: ns at which the Workload is reconciled again
	 * (maximumExecutionTimeSeconds), and the timer of the earliest. */
	ctl_keys wake;
	ev_timer wake_w;
	bool wake_armed;
	int64_t wake_due; /* when the armed timer fires (ns) */
	/* Configuration objects the engine refused, by (plural, namespace,
	 * name) -> struct ctl_warned [owned]: each is logged once per
	 * generation, not on every configuration change. */
	cu_map warned;
	unsigned pass; /* ctl_sync_config's pass: entries not seen go */
	/* Configuration churn (ctl_config_due): the next sync not before
	 * sync_next_ns (monotonic), and the timer that wakes the loop for
	 * it. */
	int64_t sync_next_ns;
	ev_timer sync_w;
	bool sync_armed;
	/* The finalizer budget ran out in this ctl_sync_finalizers pass:
	 * the objects after it wait for the next tick unexamined. */
	bool fin_spent;
};

/* decide.c, resume.c: decisions whose announcement is under way. */
struct ctl_decide {
	ctl_keys in_flight; /* set of uids while an admission write runs */
	/* Set of uids admitted by the engine and recorded in the ledger, the
	 * announcement waits for the cache to show our own earlier write to
	 * the Workload (ctl_announce_deferred; in insertion order). In
	 * in_flight too. */
	ctl_keys deferred;
	/* Preemption victim uid -> s[0] "ns/name" of its preemptor, s[1]
	 * the preemptor's PreemptedWorkload note, n the length of the
	 * victim's eviction message in its Preempted note: sent once the
	 * eviction is written. */
	ctl_keys preemptors;
};

/* report.c: status reports. They have budgets of their own within the
 * client's (ctl_pipe_budget_take): under load the admission path gets
 * the API, reports are coalesced and written oldest-first. */
struct ctl_report {
	ctl_keys pending_at; /* uid -> n: ms its pending status was written */
	/* uid -> s: {reason, message} not yet written (insertion order) */
	ctl_keys pending_due;
	/* object key (CTL_KIND_CQ or _LQ) -> n: ms of its last write */
	ctl_keys reported_at;
	struct offer {
		const struct api_resource *res;
		char *ns, *name;  /* owned */
		const char *kind; /* [static] CTL_KIND_CQ or CTL_KIND_LQ */
		json_t *patch;	  /* owned */
		char *order; /* owned: "cq/name", "lq/ns/name", made once */
		int64_t last;
		bool urgent; /* Active changes: outside the budget */
	} * offers;	     /* queue status writes offered this tick */
	size_t noffers, capoffers;
	bool pending_scan; /* the tick asks the turn to write due ones */
	/* Cohorts with metrics series after the last pass: one gone from
	 * the next pass has its series removed. */
	ctl_keys metric_cohorts;
	/* report_pass.c: object key (CTL_KIND_CQ or _LQ) -> n the
	 * fingerprint its written status was built from, s[0] the cached
	 * resourceVersion; full: this pass builds every queue. */
	ctl_keys clean;
	bool full;
	uint64_t passes;
	/* The ClusterQueue and LocalQueue informers' resourceVersions at
	 * the last pass [owned]: the same, and none of their objects
	 * changed (a clean queue is skipped without reading its object).
	 * lq_prints: the sum of every ClusterQueue's fingerprint then;
	 * lq_clean: every LocalQueue was found clean. */
	char *cq_rv, *lq_rv;
	uint64_t lq_prints;
	bool lq_clean;
};

/* report_pass.c: which queues the status pass builds again. Every
 * CTL_REPORT_FULL_PASSES-th pass builds all. */
#define CTL_REPORT_FULL_PASSES 60
/* The fingerprint of what a status derived from cq [borrowed; NULL: a
 * queue without one, never clean] reads from the model: never 0 or 1
 * for a ClusterQueue. */
uint64_t ctl_report__cq_print(const struct que_cq *cq);
/* A pass begins: full (or every CTL_REPORT_FULL_PASSES-th) forgets
 * every clean queue. */
void ctl_report__pass_begin(struct ctl_report *r, bool full);
/* key's [borrowed] status was found written at the last pass from print
 * and cached [borrowed] (the same resourceVersion): nothing to build. */
bool ctl_report__clean(const struct ctl_report *r, const char *const *key,
    uint64_t print, json_t *cached);
/* key is clean as far as the model goes (the same print), whatever its
 * cached object: for a pass whose informer saw no change
 * (ctl_report__informer_same). */
bool ctl_report__clean_print(
    const struct ctl_report *r, const char *const *key, uint64_t print);
/* The informer's resourceVersion rv [borrowed] is *seen, the one the
 * last pass saw (never in a full pass); *seen [owned] becomes rv. */
bool ctl_report__informer_same(
    const struct ctl_report *r, char **seen, const char *rv);
/* Remember key [borrowed; copied] as clean (its status built from print
 * and cached [borrowed] is the written one) or forget it. */
void ctl_report__mark(struct ctl_report *r, const char *const *key,
    uint64_t print, json_t *cached, bool clean);
/* Offer a queue status write (patch [consumed]) of the object kind,
 * ns [borrowed; NULL: cluster-scoped], name [borrowed] in res; urgent:
 * an Active change (room, no token). ctl_report__flush writes the
 * offers whose last report is oldest while the budget lasts, and drops
 * the rest. */
void ctl_report__offer(ctl *c, const struct api_resource *res, const char *ns,
    const char *name, json_t *patch, const char *kind, bool urgent);
void ctl_report__flush(ctl *c, int64_t now_ms);
/* Free what an offer owns but its patch. */
void ctl_report__offer_dispose(struct offer *o);

/* ctl.c, views.c: the HTTP endpoints and webhook. */
struct ctl_serve {
	ctl_health *health;
	ctl_httpd *probe_srv, *metrics_srv;
	ctl_mauth *mauth;     /* NULL: metrics off or plain HTTP */
	ctl_whsrv *webhook;   /* NULL: no serving certificate */
	ctl_certrot *certrot; /* NULL: internalCertManagement off */
	struct wh_options wh; /* the webhook handlers' view of caches */
	struct ctl_vis vis;   /* the visibility API's view (visibility.h) */
	ctl_vauth *vauth;     /* its server; NULL: VisibilityOnDemand off */
};

/* podsready.c: waitForPodsReady. */
struct ctl_pr {
	struct rec_pods_ready_cfg cfg;
	/* blockAdmission: uids [owned strings, key == value] of Workloads
	 * holding quota whose PodsReady is not True. */
	cu_map not_ready;
	/* object key {kind, ns, name} of a job -> struct ctl_pr_diag
	 * [owned]: the pods' cause of a job that waits for its pods, and its
	 * next LIST. */
	cu_map diag;
	/* job object key -> struct ctl_pr_ready [owned]: when a job's pods were
	 * first seen ready, until its Workload says PodsReady=True; and when
	 * to look at the job again (a deferred PodsReady=True). */
	cu_map ready;
	size_t lists; /* LISTs in flight */
	ev_timer timer;
	bool timer_init, armed;
};

/* wlmetrics.c: {ns, name} of the Workloads seen finished -> s[0] their
 * ClusterQueue, s[1] their LocalQueue's name, n 1 when counted in the
 * LocalQueue gauge (the kueue_*finished_workloads gauges). */
struct ctl_wm {
	ctl_keys finished;
	/* The label sets Workloads not admitted are counted under
	 * (kueue_*unadmitted_*), interned: {ns, ClusterQueue, "F reason
	 * \x1funderlying cause\x1fLocalQueue"} (F '1' when counted in the
	 * LocalQueue gauge too) -> n its tag. tags[tag - 1] is its entry
	 * [borrowed from labels] and how many Workloads hold the tag; a
	 * free slot (e NULL) keeps the next free slot + 1 in refs. */
	ctl_keys labels;
	struct ctl_wm_tag {
		struct ctl_kent *e;
		uint32_t refs;
	} * tags; /* [owned] */
	size_t n_tags, cap_tags;
	uint32_t free_tag; /* first free slot + 1; 0: none */
	/* A Workload's tag lives in its queue-model record (struct que_wl
	 * tag; released by the model's forget hook when the record goes);
	 * here only those the model does not hold: {ns, name} -> n the
	 * tag. */
	ctl_keys unadmitted;
	bool hooked;	    /* the forget hook is installed on c->st */
	int64_t started_ns; /* wall clock at start */
};

/* tas*.c: topology-aware scheduling (controller/tas_int.h). */
struct tas_flavor;
struct ctl_tas {
	bool started; /* the informers below run (a flavor names a topology) */
	api_informer *topo, *nodes, *pods;
	struct tas_flavor *fl; /* [owned] the TAS flavors, by name */
	size_t nfl;
	bool dirty_rebuild;    /* the trees are built again before the cycle */
	cu_map wls;	       /* uid -> struct tas_wl [owned] */
	ctl_keys tas_only;     /* ClusterQueue names: every flavor is TAS */
	ctl_keys dirty_ungate; /* {ns, Workload name}: gated pods seen */
	/* "ns\x1fWorkload name" -> struct tas_wl_pods [owned]: the names of
	 * the cached pods annotated with that Workload (the ungater's
	 * index). */
	cu_map pods_by_wl;
	ctl_keys ungating; /* pod uid -> n: when to send again (ns) */
	uint64_t ungated;  /* ungate writes sent */
	/* node failures: Node events since the last check; the next
	 * NotReady deadline (0: none); Kueue's NodeFailureDelay
	 * (CUEUE_TAS_NODE_FAILURE_DELAY_MS shortens it for tests) */
	bool dirty_nodes;
	int64_t nodes_due, node_delay_ns;
	ctl_keys terminating; /* pod uid -> n: stray pod failed, resend at */
	ctl_keys strays;      /* {ns, Workload name}: its pods to look at */
	struct que_tas_hook hook;
};

/* egate.c: the elastic-job ungater. */
struct ctl_egate {
	bool wanted;	    /* an elastic Job was seen, the gate on */
	api_informer *pods; /* [owned] Job pods, started once wanted */
	ctl_keys dirty;	    /* {ns, Job name}: its pods or slices changed */
	ctl_keys sent;	    /* pod uid -> n: when to send again (ns) */
};

/* tick.c */
struct ctl_tick {
	ev_timer w;
	ev_tstamp due;	/* when w should fire next (loop lag) */
	uint64_t ticks; /* on_tick calls */
};

/* Admission fair sharing (afs.c): per LocalQueue usage. */
struct ctl_afs {
	cu_map map;  /* {ns, name} -> struct afs_lq [owned] */
	bool primed; /* a pass ran since start-up */
};

/* The controller: wiring, and the subsystems' state. */
struct ctl {
	struct ev_loop *loop;
	const struct ctl_config *cfg;
	struct ctl_run_opts opts;
	struct api_client_opts copts;
	api_client *client;
	/* Events go through a client of their own with the same qps/burst,
	 * as controller-runtime's event recorder does: they never take the
	 * admission path's rate budget. */
	api_client *ev_client;
	/* Authentication reviews of the metrics and visibility ports
	 * (TokenReview, SubjectAccessReview): their own client, rate
	 * limiter and connections, so that nobody outside spends the
	 * admission path's budget (controller/mauth.h). */
	api_client *auth_client;
	/* Leader election's Lease reads and writes: a path nothing else can
	 * fill, so that renewals never wait behind writes or reviews. */
	api_client *lease_client;
	api_informer *inf[INF__COUNT];
	/* an integration's API was found not served, and said so */
	bool inf_absent[INF__COUNT];
	struct inf_slot slots[INF__COUNT];
	que_state *st;
	store *ledger;
	ctl_metrics *metrics;
	/* labelKeysToCopy plus the label keys of Workload-sourced custom
	 * metric labels (Kueue copies them onto the Workloads it creates):
	 * [owned: cu_free] array of strings borrowed from cfg; NULL: just
	 * labelKeysToCopy (ctl_metrics_labels_setup). */
	char **copy_keys;
	size_t ncopy_keys;
	ctl_leader *leader; /* NULL with leader election off */
	rec_events *events; /* event recorder (dedup, spam filter) */
	ctl_pipe *pipe;	    /* every write; the ledger transaction */
	struct ns_gate_config gate;
	bool leading;
	bool failed; /* lost leadership: the process must exit (as Kueue) */

	ev_prepare turn_w;
	bool synced; /* every informer delivered its first LIST */
	/* Monotonic time by which informers must have synced (controller.
	 * cacheSyncTimeout from when reconciling starts); 0: not started. */
	int64_t sync_deadline_ns;
	bool resumed;	   /* the ledger's open decisions were taken up */
	bool dirty_config; /* flavors/queues/cohorts/namespaces changed */
	bool dirty_cycle;  /* something may be admissible now */
	/* Dirty sets, reconciled in insertion order by the turn. */
	ctl_keys dirty_wl;   /* Workloads: {ns, name} */
	ctl_keys dirty_jobs; /* object keys: {"Job" or "JobSet", ns, name} */

	struct ctl_feed feed;
	struct ctl_decide dec;
	struct ctl_report rep;
	struct ctl_serve srv;
	struct ctl_tick tick;
	struct ctl_pr pr;
	struct ctl_wm wm;
	struct ctl_afs afs;
	struct ctl_tas tas;
	struct ctl_egate egate;
	struct ctl_dra *dra; /* owned (dra.c) */
	struct ctl_mk *mk;   /* owned (mk.c; controller/mk_int.h) */

	bool stopping;
	void (*stop_done)(void *payload);
	void *stop_payload;
	bool freeing;
};

/* ---- ctl.c ------------------------------------------------------------ */

/* metadata.<field> of obj as a string [borrowed], or NULL. */
const char *ctl_jmeta(json_t *obj, const char *field);
/* Synced, not stopping, and leading (invariant 4). */
bool ctl_may_write(const ctl *c);

/* ---- feed.c ----------------------------------------------------------- */

/* Init (CU_ENOMEM) and dispose the subsystems' state; dispose is safe on
 * a zeroed or partly initialized struct. */
int ctl_feed_init(struct ctl_feed *f);
void ctl_feed_dispose(struct ctl_feed *f);
/* ResourceFlavors, Cohorts, ClusterQueues, LocalQueues into the engine
 * (a ClusterQueue being deleted leaves it: it admits nothing new while
 * its finalizer holds it). */
void ctl_sync_config(ctl *c);
/* May the configuration be synced now (ctl_sync_config)? Each sync reads
 * every configuration object, so a burst of thousands of events is
 * batched: a sync comes at least CTL_SYNC_SPACING times the last one's
 * cost after it (at most CTL_SYNC_SPACING_MAX_NS later); when not yet,
 * a timer wakes the loop in time and false is returned. */
bool ctl_config_due(ctl *c);
/* The resource-in-use finalizers of ClusterQueues and ResourceFlavors:
 * added, and removed once nothing uses a deleted one
 * (rec_in_use_finalizer_patch). Writers only. */
void ctl_sync_finalizers(ctl *c);
/* Does the ClusterQueue behind LocalQueue ns/queue [borrowed; queue may
 * be NULL] admit namespace ns? Unknown queues: true (the engine reports
 * the missing queue). */
bool ctl_eligible(ctl *c, const char *ns, const char *queue);
/* The engine and the ledger drop Workload uid [borrowed] cached as key
 * {ns, name} [borrowed]. */
void ctl_forget_workload(ctl *c, const char *const *key, const char *uid);
/* The engine queues (or adopts, when its status holds quota) wl
 * [borrowed], cached as key {ns, name} [borrowed]. */
void ctl_add_workload(
    ctl *c, const char *const *key, const struct api_workload *wl);

/* Reconcile Workload key ({ns, name} [borrowed]) again at at_ns (a timer). */
void ctl_wake_workload(ctl *c, const char *const *key, int64_t at_ns);

/* ---- afs.c ------------------------------------------------------------ */

/* Init (always CU_OK) and dispose; dispose is safe on a zeroed struct. */
int ctl_afs_init(struct ctl_afs *a);
void ctl_afs_dispose(struct ctl_afs *a);
/* With admissionFairSharing on: every LocalQueue's entry (new ones seeded
 * from their status), a sample of those whose interval elapsed, and the
 * usage handed to the engine and the metric. */
void ctl_afs_pass(ctl *c, int64_t now_ns);
/* wl [borrowed] was just admitted: its LocalQueue's entry penalty, when
 * its ClusterQueue uses admission fair sharing. */
void ctl_afs_admitted(ctl *c, const struct que_wl *wl, int64_t now_ns);
/* The LocalQueue status' fairSharing [owned: json_decref] for ns/name
 * [borrowed], or NULL (off, or not sampled yet). */
json_t *ctl_afs_status(ctl *c, const char *ns, const char *name);

/* ---- decide.c --------------------------------------------------------- */

int ctl_decide_init(struct ctl_decide *d);
void ctl_decide_dispose(struct ctl_decide *d);
/* One admission cycle; its decisions recorded and their writes queued. */
void ctl_run_cycle(ctl *c, int64_t now);
/* The engine gives back the quota of a decision that will not be
 * announced (uid [borrowed]). */
void ctl_withdraw(ctl *c, const char *uid, int64_t now);
/* The ledger forgets uid's [borrowed] decision (in the turn's
 * transaction). */
void ctl_ledger_release(ctl *c, const char *uid, int64_t now);
/* The ledger records that uid's eviction is decided (a Workload without a
 * decision there is not an error); committed before the eviction write
 * is sent. */
void ctl_ledger_evicting(ctl *c, const char *uid, int64_t now);
/* Decode the cached Workload ns/name [borrowed] into *wl [owned:
 * api_workload_dispose on CU_OK]. CU_ENOTFOUND, decode errors (logged). */
int ctl_decode_cached(
    ctl *c, const char *ns, const char *name, struct api_workload *wl);
/* Queue qw's [borrowed] admission patch [consumed] with the note
 * [consumed; may be NULL] of its QuotaReserved event. */
void ctl_queue_admit(
    ctl *c, const struct que_wl *qw, json_t *patch, char *note);
/* The ledger's record of uid [borrowed] (REC_LEDGER_NONE: none, or the
 * ledger failed: logged). */
enum rec_ledger_state ctl_ledger_state(ctl *c, const char *uid);
/* What an admission write is about [all borrowed]. */
struct ctl_admission {
	const struct que_wl *qw;       /* the engine's; the cycle's: set */
	const struct adm_decision *d;  /* the cycle's decision, recorded */
	const struct api_workload *wl; /* as cached, or NULL */
	const char *ns, *name;	       /* the Workload written */
};
/*
 * The one writer of admission writes: p [its patch and note taken], a
 * plan of rec_admission_write (ANNOUNCE or DEFER; other steps are not
 * writes and are left to the caller). When p->record the decision a->d
 * goes in the ledger first (lesson 3; a failed record withdraws it and
 * nothing is written); the cycle's writes are queued as CTL_PIPE_ADMIT
 * (in flight until answered, settled by rec_cycle_answer), the Workload
 * controller's (checks synced, Admitted once Ready) as status writes
 * awaited in the cache, with Kueue's Admitted event and metrics.
 */
void ctl_admission_write(ctl *c, const struct ctl_admission *a,
    struct rec_admit_plan *p, int64_t now);
/* The pipeline's settle hook (see pipeline.h). */
void ctl_settle(const struct ctl_pipe_write *w, enum ctl_pipe_outcome outcome,
    const struct api_response *resp, void *payload);

/* ---- resume.c --------------------------------------------------------- */

/* After a restart, once: every live decision of the ledger is adopted,
 * announced or released before any new cycle. */
void ctl_resume_ledger(ctl *c, int64_t now);
/* Announce the deferred decisions whose Workload the cache now shows. */
void ctl_announce_deferred(ctl *c, int64_t now);

/* ---- report.c --------------------------------------------------------- */

int ctl_report_init(struct ctl_report *r);
void ctl_report_dispose(struct ctl_report *r);
/* Pending reasons that came due (budgeted). */
void ctl_report_pending(ctl *c, int64_t now);
/* ClusterQueue and LocalQueue status (budgeted) and their metrics. */
void ctl_report_queues(ctl *c, int64_t now_ms);
/* Are LocalQueue metrics reported for the cached LocalQueue [borrowed]
 * (metrics.enableLocalQueueMetrics and its localQueueSelector)? */
bool ctl_lq_reported(const ctl *c, json_t *cached);

/* ---- views.c ---------------------------------------------------------- */

/* Label key [borrowed] of the namespace object payload [borrowed json_t;
 * may be NULL]: [borrowed] or NULL. The gate's label getter. */
const char *ctl_ns_label(const char *key, void *payload);
/* The gate's owner lookup over the job caches (payload: the ctl). */
int ctl_gate_lookup(const struct ns_gate_owner *ref, const char *ns,
    struct ns_gate_object *out, void *payload, cu_error *err);
/* Priority lookups over the class caches (api_resolve_priority; payload:
 * the ctl; *name [borrowed from the cache]). CU_ENOTFOUND. */
int ctl_lookup_wpc(
    const char *name, int32_t *value, void *payload, cu_error *err);
int ctl_lookup_pc(
    const char *name, int32_t *value, void *payload, cu_error *err);
int ctl_lookup_pc_default(
    const char **name, int32_t *value, void *payload, cu_error *err);
/* The cached ResourceFlavors named by wl's [borrowed] admission, decoded:
 * *out [owned: api_resource_flavor_dispose each, then cu_free], *n. */
int ctl_admitted_flavors(ctl *c, const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, cu_error *err);
/* internalCertManagement (when enabled) and the webhook server (when a
 * port is set), built on the caches' view. */
int ctl_start_certrot(ctl *c, cu_error *err);
int ctl_start_webhook(ctl *c, cu_error *err);
int ctl_start_visibility(ctl *c, cu_error *err);

/* ---- writes.c --------------------------------------------------------- */

/* A Workload write (patch [consumed]) expected in the cache under
 * {CTL_KIND_WL, ns, name}; owner [borrowed; may be NULL]: the job's
 * object key to look at again on the answer. Returns the entry
 * [borrowed] or NULL. */
struct ctl_pipe_write *ctl_wl_write(ctl *c, enum ctl_pipe_kind kind,
    const char *ns, const char *name, json_t *patch, const char *const *owner);
/* An Event about obj [borrowed], folded into a series when repeated
 * (strings [borrowed]); type NULL: Kueue's type for the reason
 * (rec_events_kueue_meta), as is the reporting controller always. */
void ctl_emit(ctl *c, json_t *obj, const char *type, const char *reason,
    const char *message);
/* ctl_emit as reporting controller rc [static] instead of Kueue's by
 * reason (an event two of Kueue's controllers send, e.g. Admitted). */
void ctl_emit_as(ctl *c, json_t *obj, const char *rc, const char *reason,
    const char *message);

/* ---- plans.c ---------------------------------------------------------- */

/* What the items of a plan refer to [all borrowed]. */
struct ctl_plan_ctx {
	enum inf_id inf; /* the job's informer (its resource) */
	/* the job's object key {"Job" or "JobSet", ns, name}, or NULL */
	const char *const *job_key;
	json_t *job_obj; /* the job as cached: events are about it */
	/* {ns, name} of the reconciled Workload */
	const char *const *wl_key;
	const struct api_workload *wl; /* the reconciled Workload, or NULL */
	int64_t now;
	int64_t ready_ns; /* the job's pods first seen ready; 0: now */
};
/* Carry out plan about x [borrowed]: writes queued in the pipeline,
 * events, log lines and engine actions, in the plan's order; the plan's
 * items are freed (rec_plan_free). Event-loop thread only. */
void ctl_apply_plan(
    ctl *c, const struct ctl_plan_ctx *x, struct rec_plan *plan);

/* ---- reconcilers.c ---------------------------------------------------- */

/* The Workload reconciler for key {ns, name} [borrowed]: the cached
 * Workload and the engine's record into rec_workload_reconcile, its plan
 * carried out. */
void ctl_reconcile_workload(ctl *c, const char *const *key, int64_t now);
/* The job reconciler for object key {"Job" or "JobSet", ns, name}
 * [borrowed]: the gate first, then the job, its Workload and the caches'
 * view into rec_job_reconcile, its plan carried out. A job gone from the
 * cache has its Workloads deleted (step 0). */
void ctl_reconcile_job(ctl *c, const char *const *key, int64_t now);

/* ---- podsready.c ------------------------------------------------------ */

/* Init (from c->cfg; CU_OK) and dispose (safe on a zeroed struct; after
 * the clients are freed). */
int ctl_pr_init(ctl *c);
void ctl_pr_dispose(ctl *c);
/* The job of object key job_key [borrowed; {kind, ns, name}] waits for
 * its pods (admitted, started, not ready): the pods' cause [borrowed;
 * valid until the next call] or NULL, and a LIST of its pods when one is
 * due (answers mark the job dirty). */
const char *ctl_pr_cause(ctl *c, const char *const *job_key,
    const struct rec_job *j, const struct api_workload *wl, int64_t now);
/* The job no longer waits for its pods: its cause is forgotten. */
void ctl_pr_done(ctl *c, const char *const *job_key);
/* need: job_key's [borrowed] pods are ready (or it finished) and its
 * Workload does not say PodsReady=True yet: when they were first seen so
 * (now the first time); !need: forgotten, 0. */
int64_t ctl_pr_ready_since(
    ctl *c, const char *const *job_key, bool need, int64_t now);
/* Reconcile job job_key [borrowed] again at at_ns. */
void ctl_pr_wake_job(ctl *c, const char *const *job_key, int64_t at_ns);
/* blockAdmission: Workload uid [borrowed] holds quota and its pods are
 * not ready (not_ready) or not any more; a set that empties marks the
 * cycle. */
void ctl_pr_track(ctl *c, const char *uid, bool not_ready);
/* blockAdmission holds admissions back: an admitted Workload waits for
 * its pods. */
bool ctl_pr_blocked(const ctl *c);
/* Observe the PodsReady timings of wl [borrowed] whose PodsReady became
 * True (Started) now. */
void ctl_pr_ready_metrics(ctl *c, const struct api_workload *wl, int64_t now);
/* kueue_pods_ready_to_evicted_time_seconds for wl [borrowed] evicted now
 * in cq with reason and cause [borrowed; may be NULL]. */
void ctl_pr_evicted_metrics(ctl *c, const struct api_workload *wl,
    const char *cq, const char *reason, const char *cause, int64_t now);

/* ---- wlmetrics.c ----------------------------------------------------- */

/* The labels of a Workload's metrics [all borrowed from the Workload or
 * the ClusterQueue name given; "" when unset]. */
struct ctl_wm_labels {
	const char *cq, *ns, *lq, *pc;
	bool lq_on; /* the LocalQueue families apply (ctl_lq_reported) */
	/* Workload-sourced custom label values (ctl_metrics_labels_wl_values)
	 * for the LocalQueue families that carry them (has_wlv). */
	const char *wlv[2];
	bool has_wlv;
};

/* spec.priorityClassRef.name of wl [borrowed; may be NULL], or "". */
const char *ctl_wm_priority_class(const struct api_workload *wl);
/* The labels of the cached Workload wl or the decoded one, counted in
 * ClusterQueue cq [borrowed; may be NULL]. */
void ctl_wm_labels_json(
    ctl *c, struct ctl_wm_labels *l, json_t *wl, const char *cq);
void ctl_wm_labels(ctl *c, struct ctl_wm_labels *l,
    const struct api_workload *wl, const char *cq);
/* When wl [borrowed] was queued: its Requeued condition's transition,
 * else its creation (Kueue's QueuedWaitTime start). */
int64_t ctl_wm_queued_ns(const struct api_workload *wl);
/* Quota reserved / admitted, wait_s after it was queued: the
 * ClusterQueue, LocalQueue and cohort subtree counters and wait times. */
void ctl_wm_quota_reserved(
    ctl *c, const struct ctl_wm_labels *l, double wait_s);
void ctl_wm_admitted(ctl *c, const struct ctl_wm_labels *l, double wait_s);
/* wl [borrowed; as before the eviction] is evicted from cq [borrowed]
 * for reason and cause [borrowed; cause may be NULL]: the evicted and
 * evicted-once counters. */
void ctl_wm_evicted(ctl *c, const struct api_workload *wl, const char *cq,
    const char *reason, const char *cause);
/* The quota of evicted wl [borrowed] (of cq [borrowed; may be NULL]) is
 * released now: kueue_workload_eviction_latency_seconds. */
void ctl_wm_released(
    ctl *c, const struct api_workload *wl, const char *cq, int64_t now);
/* The LocalQueue PodsReady wait times of wl [borrowed] (ctl_pr_*). */
void ctl_wm_ready(ctl *c, const struct api_workload *wl, double queued_s,
    double admitted_s, bool has_admitted);
/* The Workload reconciler looked at key {ns, name} [borrowed]: wl
 * [borrowed] as cached, NULL when gone. A Workload first seen finished
 * counts in the finished gauges (and, when it finished while this
 * process ran, the finished counters and execution time); one gone
 * leaves them. The unadmitted gauges follow its conditions. */
void ctl_wm_seen(ctl *c, const char *const *key, const struct api_workload *wl);
/* Workload wl [borrowed: the create's answer] was created for its job:
 * kueue_workload_creation_latency_seconds. */
void ctl_wm_created(ctl *c, json_t *wl);
/* A deleted ClusterQueue or LocalQueue [borrowed]: its series go. */
void ctl_wm_forget_cq(ctl *c, const char *name);
void ctl_wm_forget_lq(ctl *c, const char *ns, const char *name);
/* Init (CU_OK) and dispose (safe on a zeroed struct). */
int ctl_wm_init(ctl *c);
void ctl_wm_dispose(ctl *c);

/* ---- acheck.c --------------------------------------------------------- */

/* Decode the cached ClusterQueue name [borrowed; may be NULL] into *cq
 * [owned: api_cluster_queue_dispose when true] when its
 * admissionChecksStrategy lists checks, or (force) whenever it exists. */
bool ctl_acheck_cq(
    ctl *c, const char *name, bool force, struct api_cluster_queue *cq);

/* cq's [borrowed] admission checks into the engine: inactive
 * (AdmissionCheckNotFound, AdmissionCheckInactive) while one it names is
 * missing or not Active. */
void ctl_acheck_sync_cq(ctl *c, const struct api_cluster_queue *cq);

/* ---- tas.c ------------------------------------------------------------ */

/* Init (CU_OK) and dispose (safe on a zeroed struct; before the client
 * is freed). */
int ctl_tas_init(ctl *c);
void ctl_tas_dispose(ctl *c);

/* egate.c: Kueue's ElasticJobUngater. ctl_egate_mark: a Job or Workload
 * event [obj borrowed] (elastic ones only count); ctl_egate_turn: the
 * turn's step (starts the pod view when first wanted, removes the
 * elastic-job gate from the pods the active slice grants). */
void ctl_egate_init(ctl *c);
void ctl_egate_dispose(ctl *c);
void ctl_egate_mark(ctl *c, enum inf_id id, json_t *obj);
void ctl_egate_turn(ctl *c, int64_t now);
/* The TAS flavors from the ResourceFlavor cache: the informers start
 * with the first, the hook is set while there is one. */
void ctl_tas_sync_config(ctl *c);
/* wl [borrowed] was given to the engine: its topologyRequests are
 * remembered, and an assignment its status holds is adopted (charged). */
void ctl_tas_workload(ctl *c, const struct api_workload *wl);
/* A restart adopts the ledger's decision sd [borrowed] for uid: its
 * recorded assignments are charged without placing again. */
void ctl_tas_adopt_recorded(ctl *c, const char *uid, const store_decision *sd);
/* Workload uid [borrowed] is gone: its charges go. */
void ctl_tas_forget(ctl *c, const char *uid);
/* A restart: uid's Workload, admitted, still lists unhealthyNodes while
 * its recorded decision has a replacement not using them (the status
 * write after the ledger commit was lost): the recorded one is charged
 * and announced. */
void ctl_tas_resume_replaced(ctl *c, const char *uid);
/* Before a cycle: trees rebuilt when due; charges of Workloads the
 * engine no longer holds are released. */
void ctl_tas_before_cycle(ctl *c, int64_t now);
/* pa[i].topology [borrowed from the record] for uid's placed podSets. */
void ctl_tas_fill(
    ctl *c, const char *uid, struct adm_podset_assignment *pa, size_t n);
/* podSet i's assignment of uid as JSON text [owned: cu_free] or NULL. */
char *ctl_tas_ledger_text(ctl *c, const char *uid, size_t i);
/* Ungate the gated pods of the Workloads whose pods changed. Writers. */
void ctl_tas_ungate(ctl *c, int64_t now);

/* ---- provreq.c ------------------------------------------------------ */

/* The ProvisioningRequest check controller: Active conditions of its
 * AdmissionChecks (writers only). */
void ctl_provreq_sync_checks(ctl *c);
/* Its part of Workload key {ns, name} [borrowed]: requests created,
 * deleted and mapped onto the check states (writers only). */
void ctl_provreq_workload(ctl *c, const char *const *key);
/* The create of a request w [borrowed] was refused (resp [borrowed]):
 * Kueue's FailedCreate Warning and the error on the check's message. */
void ctl_provreq_create_failed(
    ctl *c, const struct ctl_pipe_write *w, const struct api_response *resp);
/* A request or template obj [borrowed] changed: its owner Workload is
 * marked dirty. */
void ctl_provreq_mark(ctl *c, enum inf_id id, json_t *obj);

/* ---- mk.c, mk_wl.c: MultiKueue (controller/mk_int.h) ------------------ */

struct ctl_mk;
/* Start the MultiKueueCluster and MultiKueueConfig informers and the
 * state (c->mk); dispose (safe when not started; before the client is
 * freed). CU_ENOMEM and the informers' errors. */
int ctl_mk_start(ctl *c, cu_error *err);
void ctl_mk_dispose(ctl *c);
/* The MultiKueueCluster informer (the pipeline's expectation hook), or
 * NULL. */
api_informer *ctl_mk_informer(ctl *c);
/* One turn: connections to the workers, the clusters' and the checks'
 * Active conditions, the orphan collection when due, the marked
 * Workloads (writers only for writes). */
void ctl_mk_turn(ctl *c, int64_t now);
/* The Workloads marked dirty, decided and carried out (mk_wl.c). */
void ctl_mk_workloads(ctl *c, int64_t now);
/* Workload key {ns, name} [borrowed] changed on the manager. */
void ctl_mk_workload(ctl *c, const char *const *key);

/* ---- metrics_labels.c ------------------------------------------------ */

/* metrics.customLabels (with CustomMetricLabels on) into c->metrics,
 * resolved from the caches. CU_ENOMEM. */
int ctl_metrics_labels_setup(ctl *c, cu_error *err);
/* kueue_admitted_active_workloads of cq split by the Workload-sourced
 * custom labels (its series replaced by one per value tuple of its
 * admitted Workloads). false when no such label is configured: the
 * caller sets the plain series. */
bool ctl_metrics_labels_admitted(ctl *c, const struct que_cq *cq);
/* The same for kueue_pending_workloads (active and inadmissible) of cq,
 * and for kueue_local_queue_admitted_active_workloads of LocalQueue ns/name
 * [borrowed]. */
bool ctl_metrics_labels_pending(ctl *c, const struct que_cq *cq);
bool ctl_metrics_labels_lq_admitted(ctl *c, const char *ns, const char *name);
/* The Workload-sourced label values of the cached Workload wl [borrowed;
 * may be NULL] into out[2] [borrowed strings, valid while the
 * configuration is]; false (out untracked) when none is configured. */
bool ctl_metrics_labels_wl_values(ctl *c, json_t *wl, const char **out);

/* ---- dra.c ---------------------------------------------------------- */

struct ctl_dra;
/* Init (CU_ENOMEM) and dispose the DRA state from c->cfg. */
int ctl_dra_init(ctl *c);
void ctl_dra_dispose(ctl *c);
/* rec_sync_workload with Kueue's DRA counting; a Workload it refuses
 * shows QuotaReserved=False Misconfigured (writers) and is looked at
 * again on ctl_dra_mark. Errors as rec_sync_workload_dra. */
int ctl_dra_sync_workload(
    ctl *c, const struct api_workload *wl, bool eligible, cu_error *err);
/* A DeviceClass or ResourceClaimTemplate changed: the refused Workloads
 * are reconciled again. */
void ctl_dra_mark(ctl *c);

/* ---- retention.c -------------------------------------------------- */

/* objectRetentionPolicies for Workload key {ns, name} [borrowed]: the
 * finished Workload or the deactivated Workload's job deleted when due,
 * else a wake-up at the deadline (writers only; nothing when unset). */
void ctl_retention_workload(ctl *c, const char *const *key, int64_t now);

/* ---- tick.c ----------------------------------------------------------- */

/* Start and stop the one-second tick timer. */
void ctl_tick_start(ctl *c);
void ctl_tick_stop(ctl *c);

#endif /* CU_CONTROLLER_CTL_INT_H */
