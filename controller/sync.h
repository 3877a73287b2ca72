/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/sync.h - translation of the Kueue objects the informers hold
 * (api/model.h) into the queue model the admission engine works on
 * (queues/queues.h): ResourceFlavors, ClusterQueues, Cohorts, LocalQueues
 * and Workloads, including Workloads that already hold quota (restored
 * after a restart from their status.admission, DESIGN.md lesson 3).
 *
 * Pure: no I/O, no clock reads. Event-loop thread only. Prefix ctl_.
 */
#ifndef CU_CONTROLLER_SYNC_H
#define CU_CONTROLLER_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "api/model.h"
#include "lib/cu.h"
#include "queues/queues.h"

/* Create or replace the object in st from its decoded form [borrowed].
 * CU_EINVAL when the engine rejects the spec (message names the field),
 * CU_ENOMEM. */
CU_MUST_CHECK int ctl_sync_flavor(
    que_state *st, const struct api_resource_flavor *rf, cu_error *err);
CU_MUST_CHECK int ctl_sync_cluster_queue(
    que_state *st, const struct api_cluster_queue *cq, cu_error *err);
CU_MUST_CHECK int ctl_sync_cohort(
    que_state *st, const struct api_cohort *co, cu_error *err);
CU_MUST_CHECK int ctl_sync_local_queue(
    que_state *st, const struct api_local_queue *lq, cu_error *err);

/* The Workload holds quota in the API's view: status.admission is set
 * and QuotaReserved is True. */
bool ctl_workload_holds_quota(const struct api_workload *wl);
/* Finished=True, or spec.active=false: the engine must not queue it. */
bool ctl_workload_inactive(const struct api_workload *wl);

/*
 * Queue a Workload [borrowed] in st: pending, or, when it holds quota,
 * adopted as admitted in the ClusterQueue its admission names with the
 * flavors it records. ns_eligible: the caller evaluated the ClusterQueue's
 * namespaceSelector. Errors: CU_EEXIST (already queued), CU_EINVAL (a pod
 * set the engine cannot model; message names the field), CU_ENOTFOUND
 * (the admission names a flavor or ClusterQueue the engine does not know:
 * the workload stays queued as pending), CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_sync_workload(que_state *st,
    const struct api_workload *wl, bool ns_eligible, cu_error *err);

#endif /* CU_CONTROLLER_SYNC_H */
