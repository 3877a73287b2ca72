/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/leader.h - leader election for cueue-controller on a
 * coordination.k8s.io/v1 Lease, behaving as client-go's
 * tools/leaderelection with a LeaseLock (docs/apiserver.md §7.2):
 *
 *  - every attempt is tryAcquireOrRenew: GET the Lease; 404 -> POST a new
 *    one (409 AlreadyExists: not leader this round); a record that differs
 *    from the last one seen is stamped with the LOCAL monotonic time at
 *    which it was seen, and a Lease held by another identity is taken over
 *    only after LeaseDuration has passed on that local clock (the record's
 *    own timestamps are never compared with local time); the new record
 *    is PUT with the resourceVersion that was read (409: fail this round);
 *  - a candidate attempts at once, then every RetryPeriod with jitter 1.2
 *    (wait uniformly in [RP, 2.2 RP));
 *  - a leader renews every RetryPeriod; when a renew cycle has not
 *    succeeded within RenewDeadline it has lost leadership: the in-flight
 *    request is canceled, nothing more is written and on_stopped_leading
 *    runs (the controller must stop writing; Kueue exits);
 *  - ctl_leader_release (SIGTERM) writes holderIdentity "" with
 *    leaseDurationSeconds 1, keeping leaseTransitions, so a successor takes
 *    over at its next attempt instead of after LeaseDuration.
 *
 * Event-loop thread only. Prefix: ctl_leader_, CTL_LEADER_.
 */
#ifndef CU_CONTROLLER_LEADER_H
#define CU_CONTROLLER_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "api/client.h"
#include "lib/cu.h"

/* client-go's defaults (and Kueue's). */
#define CTL_LEADER_LEASE_DURATION_NS (15LL * 1000000000LL)
#define CTL_LEADER_RENEW_DEADLINE_NS (10LL * 1000000000LL)
#define CTL_LEADER_RETRY_PERIOD_NS (2LL * 1000000000LL)
#define CTL_LEADER_JITTER 1.2
/* Longest identity accepted (a Lease's holderIdentity is a free string;
 * this only bounds memory). */
#define CTL_LEADER_IDENTITY_MAX 253

typedef struct ctl_leader ctl_leader;

/*
 * Where an elector is. follower -> candidate -> leader -> lost; leader ->
 * releasing -> released. LOST and RELEASED are terminal: the elector
 * writes nothing more (start a new process, or free it and make a new
 * one).
 */
enum ctl_leader_state {
	CTL_LEADER_FOLLOWER = 0, /* created, not started */
	CTL_LEADER_CANDIDATE,	 /* trying to acquire every RetryPeriod */
	CTL_LEADER_LEADING,	 /* holds the Lease and renews it */
	CTL_LEADER_LOST,	 /* missed RenewDeadline (terminal) */
	CTL_LEADER_RELEASING,	 /* ctl_leader_release in progress */
	CTL_LEADER_RELEASED,	 /* release finished (terminal) */
};

/*
 * Options. Strings [borrowed; copied by ctl_leader_new]. Zero durations
 * take the CTL_LEADER_* defaults; the result must satisfy
 * lease_duration > renew_deadline > 1.2 * retry_period > 0 (client-go's
 * check), else CU_EINVAL.
 */
struct ctl_leader_opts {
	const char *namespace_name; /* the Lease's namespace (required) */
	const char *name;	    /* the Lease's name (required) */
	const char *identity;	    /* NULL or "": "<hostname>_<uuid>" */
	int64_t lease_duration_ns;
	int64_t renew_deadline_ns;
	int64_t retry_period_ns;
	/* Clocks, for tests. mono_ns: every expiry and deadline decision
	 * (NULL = cu_time_mono_ns); wall_ns: acquireTime/renewTime written
	 * to the Lease (NULL = cu_time_now_ns). Timers still run on the
	 * loop's clock: a test clock that runs ahead makes expiries and
	 * deadlines happen at the next wake-up (at most one RetryPeriod
	 * later in real time). */
	int64_t (*mono_ns)(void);
	int64_t (*wall_ns)(void);
};

/*
 * Callbacks, each optional (NULL = not interested), run from the event
 * loop, never inside a ctl_leader_* call. They may call any ctl_leader_*
 * function on the elector, including ctl_leader_free (the elector is then
 * freed once the callback returns and nothing more runs).
 *
 *  on_started_leading: this process now holds the Lease
 *                      (ctl_leader_is_leader turned true).
 *  on_stopped_leading: the term ended (ctl_leader_is_leader turned false):
 *                      either lost (state CTL_LEADER_LOST) or released
 *                      (state CTL_LEADER_RELEASING, just before the
 *                      release's done callback). Runs at most once per
 *                      on_started_leading; never from ctl_leader_free.
 *  on_new_leader:      the holderIdentity observed in the Lease changed
 *                      (this process's own identity included, just before
 *                      on_started_leading); "" when the Lease was
 *                      released. identity [borrowed; valid during the
 *                      call].
 */
struct ctl_leader_callbacks {
	void (*on_started_leading)(void *payload);
	void (*on_stopped_leading)(void *payload);
	void (*on_new_leader)(const char *identity, void *payload);
};

/* Completion of ctl_leader_release: err is CU_OK when the Lease was
 * released or was not ours to release, else the failure (the Lease then
 * expires after LeaseDuration, as after a crash). */
typedef void (*ctl_leader_done_cb)(int err, void *payload);

/*
 * Create an elector (state FOLLOWER; nothing is sent until
 * ctl_leader_start). client [borrowed; must outlive the elector and run on
 * loop], loop [borrowed], opts [borrowed, strings copied], cbs [borrowed,
 * copied; NULL = no callbacks], payload [borrowed; passed to every
 * callback]. *out [owned: ctl_leader_free]; NULL on failure.
 * Errors: CU_EINVAL (missing namespace/name, bad durations, identity too
 * long), CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_leader_new(ctl_leader **out, api_client *client,
    struct ev_loop *loop, const struct ctl_leader_opts *opts,
    const struct ctl_leader_callbacks *cbs, void *payload, cu_error *err);

/* FOLLOWER -> CANDIDATE: the first attempt is sent at once. Errors:
 * CU_EINVAL when not in state FOLLOWER. */
CU_MUST_CHECK int ctl_leader_start(ctl_leader *l, cu_error *err);

/* True while this process holds the Lease: state LEADING and the last
 * successful renewal began less than RenewDeadline ago. The second half
 * matters after a stall (SIGSTOP, a blocked loop): the timers that notice
 * the loss may run after other callbacks that want to write. */
bool ctl_leader_is_leader(const ctl_leader *l);
enum ctl_leader_state ctl_leader_state(const ctl_leader *l);
/* "follower", "candidate", "leading", "lost", "releasing", "released". */
const char *ctl_leader_state_name(enum ctl_leader_state s);
/* This elector's identity [borrowed; valid until ctl_leader_free]. */
const char *ctl_leader_identity(const ctl_leader *l);
/* The holderIdentity last observed in the Lease, "" if none or unknown
 * [borrowed; valid until control returns to the loop]. */
const char *ctl_leader_holder(const ctl_leader *l);

/*
 * Stop electing and give the Lease up (client-go's ReleaseOnCancel; for
 * SIGTERM). From LEADING: the elector stops being leader at once (state
 * RELEASING, ctl_leader_is_leader false), cancels any renew in flight,
 * reads the Lease and, if it still names this identity, PUTs
 * holderIdentity "", leaseDurationSeconds 1, acquireTime = renewTime =
 * now and the same leaseTransitions; then on_stopped_leading runs, then
 * done. The whole release is bounded by RenewDeadline (CU_ETIMEOUT).
 * From any other state it stops any attempt and writes nothing. In every
 * case the state ends RELEASED and done (optional) runs exactly once,
 * later, from the loop. Errors: CU_EINVAL when a release is already in
 * progress or done (done then never runs). payload [borrowed].
 */
CU_MUST_CHECK int ctl_leader_release(
    ctl_leader *l, ctl_leader_done_cb done, void *payload, cu_error *err);

/*
 * Stop at once and free: in-flight requests are canceled, no callback
 * runs (a pending release's done included), nothing is written: to the
 * other candidates this looks like a crash, so the Lease expires after
 * LeaseDuration. Must be called before api_client_free of its client.
 * NULL is a no-op. l [consumed].
 */
void ctl_leader_free(ctl_leader *l);

#endif /* CU_CONTROLLER_LEADER_H */
