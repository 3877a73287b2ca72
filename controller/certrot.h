/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/certrot.h - internalCertManagement: keep the webhook's
 * serving certificate in the Secret <namespace>/<webhookSecretName>
 * (ca.crt, tls.crt, tls.key; controller/certs.h makes and checks them),
 * inject its CA into the caBundle of every webhook of cueue's two webhook
 * configurations and of the conversion webhook of cueue's nine Kueue CRDs
 * (spec.conversion.webhook.clientConfig, when the strategy is Webhook;
 * each read and replaced by name only), and write the files into
 * webhook.certDir when that directory is writable (on a cluster the kubelet
 * mounts the Secret there; controller/whsrv.h picks the files up either way).
 *
 * One pass: GET the Secret; keep it if ctl_certs_check accepts it (names
 * <service>.<namespace>.svc and .svc.cluster.local, renewed 90 days before
 * expiry), else generate a new set and create or replace the Secret
 * (guarded by its resourceVersion: two writers cannot both win); then the
 * caBundles (each configuration and CRD read, changed only where it
 * differs, and replaced with its resourceVersion; a missing one is
 * skipped),
 * then the files. The caBundles hold the Secret's CA and, while the
 * pair in certDir (the one being served) has another CA - after a
 * rotation, until the kubelet refreshes the Secret's mount and the server
 * reloads it - that CA too, so the API server trusts the pod throughout;
 * the next pass after the new pair is in place drops the old CA (when
 * this process wrote the new pair into certDir itself, not before
 * grace_ns has passed: the server reloads it a few seconds later). A
 * pass runs on ctl_certrot_run, every CTL_CERTROT_PERIOD_S, and at once
 * when a watched target (each configuration and CRD, by name) shows a
 * caBundle without the Secret's CA - applied after the start,
 * re-created, replaced by an older manifest - while `may_run` allows
 * it (the leader only); a failed step is retried on the next period.
 *
 * Event-loop thread only. Prefix: ctl_certrot_.
 */
#ifndef CU_CONTROLLER_CERTROT_H
#define CU_CONTROLLER_CERTROT_H

#include <stdbool.h>

#include "api/client.h"
#include "lib/cu.h"

struct ev_loop;

typedef struct ctl_certrot ctl_certrot;

#define CTL_CERTROT_PERIOD_S 3600.0
/* How long the CA of a pair replaced in certDir stays in the caBundles
 * (several of whsrv's reload periods). */
#define CTL_CERTROT_GRACE_NS (60LL * 1000000000LL)
#define CTL_CERTROT_RENEW_BEFORE_NS (90LL * 24 * 3600 * 1000000000LL)
#define CTL_CERTROT_MUTATING "cueue-mutating-webhook-configuration"
#define CTL_CERTROT_VALIDATING "cueue-validating-webhook-configuration"

/* Every pointer [borrowed]; strings copied; client must outlive it. */
struct ctl_certrot_opts {
	api_client *client;
	const char *namespace_;	  /* cueue's namespace */
	const char *secret_name;  /* internalCertManagement.webhookSecretName */
	const char *service_name; /* ...webhookServiceName */
	const char *cert_dir;	  /* webhook.certDir; NULL: no files */
	bool (*may_run)(void *payload); /* NULL: always */
	void *payload;
	/* How long the CA of a pair replaced in certDir stays in the
	 * bundles after this process wrote the new pair; 0:
	 * CTL_CERTROT_GRACE_NS (tests set it short). */
	cu_ns_t grace_ns;
};

/* *out [owned: ctl_certrot_free]. CU_EINVAL for missing names, CU_ENOMEM. */
CU_MUST_CHECK int ctl_certrot_new(ctl_certrot **out, struct ev_loop *loop,
    const struct ctl_certrot_opts *opts, cu_error *err);

/* Start a pass now (unless one is running) and the periodic timer. */
void ctl_certrot_run(ctl_certrot *r);

/* Passes completed without error so far (for tests and logs). */
unsigned ctl_certrot_passes(const ctl_certrot *r);

/* Cancel what is in flight and free. NULL is a no-op. */
void ctl_certrot_free(ctl_certrot *r);

#endif /* CU_CONTROLLER_CERTROT_H */
