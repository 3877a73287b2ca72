/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mk_int.h - what the files of the MultiKueue admission check
 * controller share, and nothing else includes:
 *
 *   mk.c     the worker clusters: MultiKueueCluster and MultiKueueConfig
 *            informers on the manager, one API client (its own rate
 *            limiter) and Workload/Job informers per worker built from
 *            the kubeconfig in a Secret or a file, the clusters' and the
 *            AdmissionChecks' Active conditions, rebuilds with back-off;
 *   mk_wl.c  the manager's Workloads: the dispatch decision of
 *            reconcile/mk.c carried out (the choice of a worker recorded
 *            in the ledger before it is announced, copies created and
 *            removed on the workers, the check's state, the job's status
 *            copied back), orphans collected every gcInterval.
 *
 * The controller's other files use only the ctl_mk_* entry points of
 * controller/ctl_int.h. Names shared between the two files carry the
 * internal prefix ctl_mk__. Event-loop thread only.
 */
#ifndef CU_CONTROLLER_MK_INT_H
#define CU_CONTROLLER_MK_INT_H

#include "controller/ctl_int.h"

/* A worker client's own budget (each worker has its own limiter). */
#define MK_CLIENT_QPS 20.0
#define MK_CLIENT_BURST 40
/* Its User-Agent. */
#define MK_USER_AGENT "cueue-controller/" CUEUE_VERSION " multikueue"

/* A kubeconfig that cannot be loaded is tried again after this long,
 * doubling up to MK_BACKOFF_MAX_NS. */
#define MK_BACKOFF_MIN_NS (1LL * 1000000000LL)
#define MK_BACKOFF_MAX_NS (60LL * 1000000000LL)
/* Kueue's Incremental dispatcher round; CUEUE_MK_ROUND_MS shortens it
 * for tests. */
#define MK_ROUND_NS (5LL * 60LL * 1000000000LL)
/* An evicted Workload whose job still shows a worker's pods is looked at
 * again this often (the job's stop on the manager is not a Workload
 * event). */
#define MK_EVICT_POLL_NS (1LL * 1000000000LL)
/* A finished copy whose job status is not yet on the manager's job is
 * looked at again this often (the manager's job is not watched here). */
#define MK_FINISH_POLL_NS (200LL * 1000000LL)
/* A status write not seen in the cache after this long is sent again. */
#define MK_RESEND_NS (10LL * 1000000000LL)

/* Rows of the MultiKueue adapter table (reconcile/mk_adapt.c) a worker
 * can watch. */
#define MK_MAX_ADAPTERS 16

struct ctl_mk;

/* One worker cluster (one MultiKueueCluster). */
struct mk_worker {
	struct ctl_mk *mk; /* [borrowed] */
	char *name;	   /* [owned] the MultiKueueCluster's name */
	char *source;	   /* [owned] "Secret/<name>" or "Path/<path>" */
	char *kubeconfig;  /* [owned] the text the client was built from */
	api_client *cl;	   /* [owned] NULL while not built */
	api_informer *wl;  /* [owned] the Workload copies there */
	/* [owned] the jobs there, one per row of the adapter table
	 * (rec_mk_adapter_at) whose framework the manager runs; NULL: not
	 * watched. */
	api_informer *jobs[MK_MAX_ADAPTERS];
	api_req *req; /* [borrowed] the Secret GET in flight */
	/* Why the client could not be built (reason [static], message
	 * [owned]); NULL while it is built or being built. */
	const char *err_reason;
	char *err_msg;
	int64_t retry_at_ns, backoff_ns; /* monotonic */
	bool connected;			 /* as last computed */
	char *sent;	    /* [owned] the Active condition last sent */
	int64_t sent_at_ns; /* monotonic */
	bool seen;	    /* the cluster still exists (a pass) */
};

struct ctl_mk {
	ctl *c;				  /* [borrowed] */
	api_informer *clusters, *configs; /* [owned] on the manager */
	struct mk_worker **w;		  /* [owned] */
	size_t nw, capw;
	ctl_keys dirty;	     /* {ns, name}: manager Workloads to look at */
	ctl_keys lost;	     /* {ns, name} -> n: its worker lost since (ns) */
	ctl_keys rounds;     /* {ns, name} -> n: its Incremental round start */
	ctl_keys evicting;   /* {ns, name}: evicted, its job still active */
	ctl_keys finishing;  /* {ns, name}: finished, its job not synced */
	int64_t round_ns;    /* an Incremental round (Kueue: 5 min) */
	ctl_keys inflight;   /* {cluster, what, ns/name}: remote writes */
	ctl_keys ac_sent;    /* {AdmissionCheck} -> s[0] sent, n when */
	bool dirty_clusters; /* the clusters or configs changed */
	bool all_wl;	     /* every MultiKueue Workload is to be looked at */
	int64_t gc_due_ns;   /* monotonic */
	int64_t wake_ns;     /* monotonic; 0: none */
	ev_timer timer;
	bool timer_on;
	ev_timer soon; /* one more turn at once (a choice recorded) */
};

/* mk.c: the worker of that name [borrowed], or NULL. */
struct mk_worker *ctl_mk__worker(struct ctl_mk *mk, const char *name);
/* The clusters of MultiKueueConfig name [borrowed]: *out [borrowed from
 * the cache; valid for the turn], *n; false when the config is missing. */
bool ctl_mk__config_clusters(struct ctl_mk *mk, const char *name, json_t **out);
/* The MultiKueueConfig named by the cached AdmissionCheck name [borrowed]
 * when it is a MultiKueue check, else NULL [borrowed]. */
const char *ctl_mk__check_config(struct ctl_mk *mk, const char *check);
/* The job informer (and its kind) of adapter row i watched on workers,
 * or INF__COUNT when the manager does not run that framework. */
enum inf_id ctl_mk__row_inf(ctl *c, size_t i);

/* A remote Workload or Job changed: its manager Workload is marked. */
void ctl_mk__mark(struct ctl_mk *mk, const char *ns, const char *name);

/* Another turn at once (the Workloads marked are looked at then). */
void ctl_mk__soon(struct ctl_mk *mk);

/* mk_wl.c: every manager Workload with a MultiKueue check is marked. */
void ctl_mk__mark_all(struct ctl_mk *mk);
/* Collect the copies on connected workers whose manager Workload is
 * gone (writers), and the ledger's choices for Workloads gone. */
void ctl_mk__gc(struct ctl_mk *mk);
/* Worker w [borrowed] is being freed: nothing refers to it after. */
void ctl_mk__forget_worker(struct ctl_mk *mk, struct mk_worker *w);

#endif /* CU_CONTROLLER_MK_INT_H */
