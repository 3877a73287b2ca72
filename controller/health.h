/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/health.h - liveness and readiness endpoints in the
 * controller-runtime / kube-apiserver convention:
 *
 *   /healthz, /livez  200 "ok" whenever the loop serves the request. They
 *                     never consult the API server: a stuck loop cannot
 *                     answer, the probe times out and the pod restarts,
 *                     which is the point.
 *   /readyz           200 "ok" only when every registered check passes,
 *                     else 500 listing the checks ("[-]name failed: reason
 *                     withheld") and "readyz check failed".
 *   /readyz?verbose   one "[+]name ok" or "[-]name failed: reason
 *                     withheld" line per check, then "readyz check
 *                     passed" or "readyz check failed". The probe port
 *                     authenticates nobody, so reasons (a ledger's path
 *                     and error, the API server's address) go to the log
 *                     only, as kube-apiserver withholds them; on a server
 *                     that authenticates every request (the secure
 *                     metrics port, ctl_health_mount_detailed) verbose
 *                     gives "[-]name failed: <reason>".
 *
 * Checks are callbacks registered by name (informers-synced, ledger-open,
 * webhook-cert-loaded, ...), run in registration order on every /readyz.
 * Event-loop thread only. Prefix: ctl_health_.
 */
#ifndef CU_CONTROLLER_HEALTH_H
#define CU_CONTROLLER_HEALTH_H

#include <stdbool.h>

#include "controller/httpd.h"
#include "lib/cu.h"

typedef struct ctl_health ctl_health;

/*
 * A readiness check: return CU_OK when ready, else a negative cu_err with
 * a one-line reason in err (err is never NULL here). payload [borrowed] is
 * the pointer given at registration. Must not block.
 */
typedef int (*ctl_health_check_fn)(cu_error *err, void *payload);

/* *out [owned: ctl_health_free]. CU_ENOMEM. */
CU_MUST_CHECK int ctl_health_new(ctl_health **out, cu_error *err);

/* NULL is a no-op. */
void ctl_health_free(ctl_health *h);

/*
 * Register a readiness check. name [borrowed; copied]: lowercase letters,
 * digits and '-', as in "informers-synced". payload [borrowed; must outlive
 * h]. CU_EEXIST for a duplicate name, CU_EINVAL for a bad one, CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_health_add_check(ctl_health *h, const char *name,
    ctl_health_check_fn fn, void *payload, cu_error *err);

/*
 * Run every check. When out [borrowed] is non-NULL, append the /readyz
 * body: "ok" if all pass and !verbose; otherwise the per-check lines
 * (reasons shown only when verbose) and the final "readyz check
 * passed|failed" line. Returns true when all checks pass. An append
 * failure leaves out freed (cu_buf contract) and does not change the
 * result.
 */
bool ctl_health_ready(ctl_health *h, cu_buf *out, bool verbose);

/*
 * Serve GET /healthz, /livez and /readyz from srv. h [borrowed; must
 * outlive srv's serving]. Errors of ctl_httpd_route.
 */
CU_MUST_CHECK int ctl_health_mount(
    ctl_health *h, ctl_httpd *srv, cu_error *err);

/*
 * As ctl_health_mount, at the Configuration's health.readinessEndpointName
 * and livenessEndpointName [borrowed; NULL or "" = "readyz" / "healthz"; a
 * leading '/' is accepted], as controller-runtime serves them; /livez is
 * served as well unless one of the names takes it. CU_EINVAL when both
 * names are the same path; errors of ctl_httpd_route.
 */
/* GET /readyz with the reasons in its verbose form, on srv [borrowed],
 * a server whose gate authenticates and authorizes every request. */
CU_MUST_CHECK int ctl_health_mount_detailed(
    ctl_health *h, ctl_httpd *srv, cu_error *err);

CU_MUST_CHECK int ctl_health_mount_at(ctl_health *h, ctl_httpd *srv,
    const char *readiness, const char *liveness, cu_error *err);

#endif /* CU_CONTROLLER_HEALTH_H */
