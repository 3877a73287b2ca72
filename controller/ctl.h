/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/ctl.h - the cueue controller process: informers on the
 * Kueue, Kubernetes and job objects, the admission engine fed from them,
 * one scheduling cycle per loop turn, the SQLite ledger committed before
 * any write that announces a decision, and the writes themselves
 * (Workload status, ClusterQueue status), plus health and metrics
 * endpoints.
 *
 * Event-loop thread only. Prefix ctl_.
 */
#ifndef CU_CONTROLLER_CTL_H
#define CU_CONTROLLER_CTL_H

#include <ev.h>
#include <stdbool.h>

#include "controller/config.h"
#include "lib/cu.h"

typedef struct ctl ctl;

struct ctl_run_opts {
	const char *kubeconfig; /* [borrowed] NULL = in-cluster */
	const char *sa_dir;	/* [borrowed] in-cluster files; NULL = the
				 * standard service-account directory */
	const char *store_path; /* [borrowed] SQLite ledger; NULL = an
				 * in-memory ledger (no restart safety) */
	/* [borrowed] the API user cueue writes as (its service account,
	 * "system:serviceaccount:<ns>:<name>"): its own unsuspend writes
	 * pass the job webhook. NULL: nobody is exempt. */
	const char *own_username;
	const char *identity; /* [borrowed] leader-election identity;
			       * NULL = hostname_pid */
	/* /metrics over plain HTTP with no authentication (local use,
	 * `--metrics-secure=false`). Default false: HTTPS with a self-signed
	 * certificate made at start-up, every scrape authenticated
	 * (TokenReview) and authorized (SubjectAccessReview for the
	 * non-resource URL /metrics, verb get), as Kueue's
	 * (controller/mauth.h). */
	bool metrics_insecure;
	/* [borrowed] the visibility server's tls.crt and tls.key
	 * (controller/vauth.h); NULL: /visibility. */
	const char *visibility_cert_dir;
	/* Write pending-status conditions (QuotaReserved=False with the
	 * reason) only for Workloads pending at least this long, and at most
	 * once per pending_status_period_ms per Workload: every write costs
	 * the API server, and most Workloads are admitted quickly. */
	int pending_status_delay_ms;  /* <= 0: the default below */
	int pending_status_period_ms; /* <= 0: the default below */
};

/* Pending-status writes wait this long after a Workload was created ... */
#define CTL_PENDING_STATUS_DELAY_DEFAULT_MS 1000
/* ... and are repeated at most this often per Workload. */
#define CTL_PENDING_STATUS_PERIOD_DEFAULT_MS 30000

/*
 * Build the controller on loop [borrowed] with cfg [borrowed; must outlive
 * it]: the API client, informers, engine, ledger, HTTP endpoints. Nothing
 * runs until ctl_start. *out [owned: ctl_free]. Errors from the client
 * options (CU_ENOTFOUND/CU_EIO/CU_EINVAL), the ledger (see store.h), the
 * HTTP listeners (CU_EIO), CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_new(ctl **out, struct ev_loop *loop,
    const struct ctl_config *cfg, const struct ctl_run_opts *opts,
    cu_error *err);

/* Start the informers, endpoints and timers. */
CU_MUST_CHECK int ctl_start(ctl *c, cu_error *err);

/*
 * Graceful shutdown: stop deciding, send what the turn queued, wait for
 * every write in flight (each has a timeout), release the leader lease,
 * then call done(payload) from the loop (or at once when nothing is
 * pending). done may be NULL.
 */
void ctl_shutdown(ctl *c, void (*done)(void *payload), void *payload);

/* True when the controller stopped the loop because it lost its leader
 * lease: the process must exit non-zero (and be restarted). */
bool ctl_failed(const ctl *c);

/* Free everything. Not from inside a callback of c. NULL is a no-op. */
void ctl_free(ctl *c);

#endif /* CU_CONTROLLER_CTL_H */
