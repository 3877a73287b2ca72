/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/visibility.h - Kueue's visibility API
 * (visibility.kueue.x-k8s.io, v1beta2 and v1beta1), served as an
 * aggregated API server serves its group: the API server proxies
 * /apis/visibility.kueue.x-k8s.io/... to it through an APIService.
 *
 *   GET /apis                                   APIGroupList (the group)
 *   GET /apis/visibility.kueue.x-k8s.io         APIGroup
 *   GET /apis/visibility.kueue.x-k8s.io/<v>     APIResourceList
 *   GET .../<v>/clusterqueues/<name>/pendingworkloads
 *   GET .../<v>/namespaces/<ns>/localqueues/<name>/pendingworkloads
 *       PendingWorkloadsSummary; query `limit` (absent or 0: 1000,
 *       clamped to [0, 100000]) and `offset` (clamped to >= 0)
 *
 * The listing is the engine's (que_pending_cq/_lq): the order its
 * scheduler would take the Workloads in. Each item's metadata (name,
 * namespace, creationTimestamp, ownerReferences) comes from the cached
 * Workload. Errors are Status objects as Kueue's server writes them
 * (404 `clusterqueue.visibility.kueue.x-k8s.io "x" not found`, 400 for a
 * malformed limit or offset).
 *
 * Mounted on the visibility server of controller/vauth.h (its own port,
 * authenticated and authorized as an aggregated API server).
 *
 * Event-loop thread only: handlers read the engine between turns.
 * Prefix: ctl_vis_.
 */
#ifndef CU_CONTROLLER_VISIBILITY_H
#define CU_CONTROLLER_VISIBILITY_H

#include <jansson.h>

#include "lib/cu.h"
#include "queues/queues.h"

struct ctl_httpd;

#define CTL_VIS_GROUP "visibility.kueue.x-k8s.io"

/* What the handlers read. Every pointer [borrowed; must outlive the
 * servers it is mounted on]. */
struct ctl_vis {
	que_state *st; /* the engine */
	/* The cached Workload ns/name [borrowed; valid during the call], or
	 * NULL. May be NULL itself (metadata from the engine only). */
	json_t *(*workload)(const char *ns, const char *name, void *payload);
	void *payload;
};

/*
 * Route the paths above (GET) on srv [borrowed] to v's handlers. Errors
 * of ctl_httpd_route (CU_EEXIST when srv routes one already).
 */
CU_MUST_CHECK int ctl_vis_mount(
    const struct ctl_vis *v, struct ctl_httpd *srv, cu_error *err);

#endif /* CU_CONTROLLER_VISIBILITY_H */
