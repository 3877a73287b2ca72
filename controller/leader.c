/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/leader.c - leader election on a coordination.k8s.io/v1 Lease
 * (see leader.h): client-go's tryAcquireOrRenew, acquire and renew loops
 * and ReleaseOnCancel, asynchronous on the libev loop through api/client.
 *
 * Design notes
 * ------------
 * States (enum ctl_leader_state):
 *
 *   FOLLOWER --start--> CANDIDATE --attempt ok--> LEADING --RD missed--> LOST
 *                         ^   |                     |  ^
 *                         +---+ attempt failed:      |  | renew ok: next
 *                           wait RP + U[0,1.2 RP)    |  | cycle after RP
 *                                                    |  +--+
 *   any state except RELEASING/RELEASED --release--> RELEASING --> RELEASED
 *
 * One attempt (tryAcquireOrRenew) is a chain of at most two requests,
 * GET then POST (on 404) or PUT; at most one request is in flight
 * (l->req) and at most one attempt is under way. Two timers:
 *   retry    - when the next attempt (or renew cycle, or the release's
 *              first request) starts; a one-shot, re-armed after each
 *              attempt, so attempts never overlap;
 *   deadline - LEADING: RenewDeadline after the current renew cycle
 *              began; RELEASING: bounds the release. On expiry it cancels
 *              the request in flight, so a hung renew cannot outlive the
 *              deadline (newer client-go passes a context deadline to the
 *              request for the same reason).
 * Every time decision compares l->mono() values; libev timers only decide
 * when to look. A renew cycle starts RetryPeriod after the previous
 * success (client-go: wait.Until, sliding); within it failed attempts are
 * retried every RetryPeriod until RenewDeadline (PollImmediateUntil).
 * Difference from client-go 1.20: its renew loop starts with an immediate
 * renew right after acquiring; here the first renew comes RetryPeriod
 * after the acquiring write (one write fewer, same safety margins).
 *
 * Observation (client-go's observedRecord/observedTime): the Lease spec,
 * dumped with sorted keys, is compared with the last one seen; when it
 * differs it is stored with observed_time = mono(). Another holder's
 * Lease is considered expired only when observed_time + LeaseDuration <=
 * mono(): the record's timestamps are never compared with local time, so
 * clock skew between replicas does not matter.
 *
 * Callbacks and teardown: user callbacks run only from timer or response
 * callbacks, always as the last thing a code path does with the state it
 * changed. Each goes through a guard (cb_enter/cb_leave) that notices a
 * ctl_leader_free made inside the callback (l->dying) and frees the
 * elector once the callback returns; callers then return at once.
 * Canceled responses never touch the elector: the code that cancels has
 * already cleared l->req.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/leader.h"

static const struct api_resource LEASES = {
    "coordination.k8s.io", "v1", "leases", true};

struct ctl_leader {
	api_client *client;   /* [borrowed] */
	struct ev_loop *loop; /* [borrowed] */
	char *ns;	      /* [owned] */
	char *name;	      /* [owned] */
	char *identity;	      /* [owned] */
	int64_t ld, rd, rp;   /* ns */
	int64_t (*mono)(void);
	int64_t (*wall)(void);
	struct ctl_leader_callbacks cbs;
	void *payload; /* [borrowed] */

	enum ctl_leader_state state;
	api_req *req; /* [borrowed] in-flight request or NULL */
	ev_timer retry;
	ev_timer deadline;
	bool in_cycle;	     /* LEADING: a renew cycle is under way */
	int64_t cycle_start; /* mono() when it began */
	int64_t attempt_at;  /* mono() when the current attempt began */
	int64_t renewed_at;  /* LEADING: attempt_at of the last success */
	bool notified;	     /* on_started_leading ran, stop not yet */

	char *observed_raw;    /* [owned] spec last observed, or NULL */
	char *observed_holder; /* [owned] its holderIdentity, or NULL */
	int64_t observed_time; /* mono() when it was first seen */
	char *reported;	       /* [owned] last on_new_leader, NULL = "" */

	ctl_leader_done_cb done; /* pending release */
	void *done_payload;	 /* [borrowed] */
	bool release_write;	 /* release must write the Lease */

	uint64_t rng;
	int depth;  /* inside a user callback */
	bool dying; /* ctl_leader_free called from a callback */
};

/* ---- small helpers ------------------------------------------------- */

static double secs(int64_t ns)
{
	return cu_ns_to_secs(ns);
}

static uint64_t rng_next(ctl_leader *l)
{
	uint64_t z = (l->rng += 0x9E3779B97F4A7C15ULL); /* splitmix64 */

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* RP + U[0, 1.2 RP): wait.Jitter(RetryPeriod, 1.2). */
static int64_t jittered(ctl_leader *l)
{
	double u = (double)(rng_next(l) >> 11) / (double)(1ULL << 53);

	return l->rp + (int64_t)(u * CTL_LEADER_JITTER * (double)l->rp);
}

static void timer_arm(ctl_leader *l, ev_timer *t, int64_t ns)
{
	ev_timer_stop(l->loop, t);
	ev_timer_set(t, ns > 0 ? secs(ns) : 0.0, 0.0);
	ev_timer_start(l->loop, t);
}

static void cancel_req(ctl_leader *l)
{
	api_req *r = l->req;

	l->req = NULL;
	api_request_cancel(r); /* its callback ignores canceled answers */
}

static void stop_all(ctl_leader *l)
{
	ev_timer_stop(l->loop, &l->retry);
	ev_timer_stop(l->loop, &l->deadline);
	cancel_req(l);
}

static int set_str(char **dst, const char *src)
{
	char *n = cu_strdup(src ? src : "");

	if (n == NULL)
		return CU_ENOMEM;
	cu_free(*dst);
	*dst = n;
	return CU_OK;
}

static void destroy(ctl_leader *l)
{
	stop_all(l);
	cu_free(l->observed_raw);
	cu_free(l->observed_holder);
	cu_free(l->reported);
	cu_free(l->ns);
	cu_free(l->name);
	cu_free(l->identity);
	cu_free(l);
}

/* ---- user callbacks (see design notes) ----------------------------- */

static void cb_enter(ctl_leader *l)
{
	l->depth++;
}

/* False when the callback freed the elector: the caller returns at once. */
static bool cb_leave(ctl_leader *l)
{
	l->depth--;
	if (l->dying && l->depth == 0) {
		destroy(l);
		return false;
	}
	return !l->dying;
}

static bool notify_new_leader(ctl_leader *l)
{
	const char *holder = l->observed_holder;
	const char *old = l->reported ? l->reported : "";

	if (holder == NULL || strcmp(holder, old) == 0)
		return true;
	if (set_str(&l->reported, holder) != CU_OK)
		return true; /* reported again next time */
	cu_info("leader election: lease %s/%s: new leader \"%s\"", l->ns,
	    l->name, holder);
	if (l->cbs.on_new_leader == NULL)
		return true;
	cb_enter(l);
	l->cbs.on_new_leader(holder, l->payload);
	return cb_leave(l);
}

static bool notify_started(ctl_leader *l)
{
	l->notified = true;
	if (l->cbs.on_started_leading == NULL)
		return true;
	cb_enter(l);
	l->cbs.on_started_leading(l->payload);
	return cb_leave(l);
}

static bool notify_stopped(ctl_leader *l)
{
	if (!l->notified)
		return true;
	l->notified = false;
	if (l->cbs.on_stopped_leading == NULL)
		return true;
	cb_enter(l);
	l->cbs.on_stopped_leading(l->payload);
	return cb_leave(l);
}

/* ---- the Lease record ---------------------------------------------- */

static json_t *lease_spec(json_t *lease)
{
	return json_object_get(lease, "spec");
}

static const char *spec_str(json_t *spec, const char *key)
{
	return json_string_value(json_object_get(spec, key));
}

/*
 * Observe the record of lease [borrowed]: when it differs from the last
 * one seen, remember it with the local time (client-go's observedRecord
 * and observedTime). CU_ENOMEM leaves the observation unchanged.
 */
static int observe(ctl_leader *l, json_t *lease)
{
	json_t *spec = lease_spec(lease);
	/* json_dumps allocates with malloc; cu_free is free (as in
	 * api/client.c) */
	char *raw = json_dumps(spec ? spec : json_null(),
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (raw == NULL)
		return CU_ENOMEM;
	if (l->observed_raw != NULL && strcmp(raw, l->observed_raw) == 0) {
		cu_free(raw);
		return CU_OK;
	}
	if (set_str(&l->observed_holder, spec_str(spec, "holderIdentity")) !=
	    CU_OK) {
		cu_free(raw);
		return CU_ENOMEM;
	}
	cu_free(l->observed_raw);
	l->observed_raw = raw;
	l->observed_time = l->mono();
	return CU_OK;
}

/* The spec this elector writes [owned]; NULL on ENOMEM. */
static json_t *new_spec(ctl_leader *l, const char *holder, int64_t duration_s,
    const char *acquire, int64_t transitions)
{
	char now[CU_TIME_MICRO_LEN];

	cu_time_format_micro(l->wall(), now);
	return json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", holder,
	    "leaseDurationSeconds", (json_int_t)duration_s, "acquireTime",
	    acquire ? acquire : now, "renewTime", now, "leaseTransitions",
	    (json_int_t)transitions);
}

static int64_t duration_s(const ctl_leader *l)
{
	int64_t s = cu_ns_to_s(l->ld);

	return s > 0 ? s : 1; /* the server requires > 0 */
}

/* lease [borrowed] with its spec replaced by spec [consumed]; NULL on
 * ENOMEM. Metadata (and so resourceVersion) is kept. */
static json_t *with_spec(json_t *lease, json_t *spec)
{
	json_t *obj = spec ? json_deep_copy(lease) : NULL;

	if (obj == NULL || json_object_set_new(obj, "spec", spec) != 0) {
		json_decref(obj);
		if (obj == NULL)
			json_decref(spec);
		return NULL;
	}
	return obj;
}

/* ---- one attempt: tryAcquireOrRenew --------------------------------- */

static void attempt_done(ctl_leader *l, bool ok);
static void lose(ctl_leader *l);

static void on_write(const struct api_response *resp, void *payload)
{
	ctl_leader *l = payload;

	if (resp->canceled)
		return;
	l->req = NULL;
	if (resp->err != CU_OK) {
		cu_debug("leader election: %s %s: %d %s %s", resp->method,
		    resp->path, resp->code, cu_err_name(resp->err),
		    resp->message);
		attempt_done(l, false);
		return;
	}
	attempt_done(l, observe(l, resp->body) == CU_OK);
}

static void send_create(ctl_leader *l)
{
	json_t *spec = new_spec(l, l->identity, duration_s(l), NULL, 0);
	json_t *obj =
	    spec ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion",
		       "coordination.k8s.io/v1", "kind", "Lease", "metadata",
		       "name", l->name, "namespace", l->ns, "spec", spec)
		 : NULL;
	cu_error err;
	int rc;

	if (obj == NULL) {
		attempt_done(l, false);
		return;
	}
	rc = api_create(
	    &l->req, l->client, &LEASES, l->ns, obj, on_write, l, &err);
	json_decref(obj);
	if (rc != CU_OK) {
		l->req = NULL;
		cu_warn("leader election: create lease: %s", err.msg);
		attempt_done(l, false);
	}
}

static void send_update(ctl_leader *l, json_t *obj /* consumed */)
{
	cu_error err;
	int rc;

	if (obj == NULL) {
		attempt_done(l, false);
		return;
	}
	rc = api_update(
	    &l->req, l->client, &LEASES, obj, false, on_write, l, &err);
	json_decref(obj);
	if (rc != CU_OK) {
		l->req = NULL;
		cu_warn("leader election: update lease: %s", err.msg);
		attempt_done(l, false);
	}
}

static void on_get(const struct api_response *resp, void *payload)
{
	ctl_leader *l = payload;
	json_t *spec;
	const char *holder;
	bool mine;
	int64_t transitions;

	if (resp->canceled)
		return;
	l->req = NULL;
	if (resp->err == CU_ENOTFOUND) {
		send_create(l);
		return;
	}
	if (resp->err != CU_OK || !json_is_object(resp->body)) {
		cu_debug("leader election: GET %s: %d %s %s", resp->path,
		    resp->code, cu_err_name(resp->err), resp->message);
		attempt_done(l, false);
		return;
	}
	if (observe(l, resp->body) != CU_OK) {
		attempt_done(l, false);
		return;
	}
	holder = l->observed_holder;
	mine = strcmp(holder, l->identity) == 0;
	if (holder[0] != '\0' && !mine &&
	    l->observed_time + l->ld > l->mono()) {
		attempt_done(l, false); /* held by another, not expired */
		return;
	}
	spec = lease_spec(resp->body);
	transitions =
	    json_integer_value(json_object_get(spec, "leaseTransitions"));
	if (!mine)
		transitions++;
	send_update(l,
	    with_spec(resp->body,
		new_spec(l, l->identity, duration_s(l),
		    mine ? spec_str(spec, "acquireTime") : NULL, transitions)));
}

static void attempt_start(ctl_leader *l)
{
	cu_error err;

	l->attempt_at = l->mono();
	if (api_get(&l->req, l->client, &LEASES, l->ns, l->name, on_get, l,
		&err) != CU_OK) {
		l->req = NULL;
		cu_warn("leader election: get lease: %s", err.msg);
		attempt_done(l, false);
	}
}

/*
 * An attempt finished. Timers are set and the state is changed first,
 * user callbacks come last (each may free the elector or release it).
 */
static void attempt_done(ctl_leader *l, bool ok)
{
	if (l->state == CTL_LEADER_CANDIDATE) {
		if (!ok) {
			timer_arm(l, &l->retry, jittered(l));
			notify_new_leader(l);
			return;
		}
		if (l->mono() - l->attempt_at >= l->rd) {
			/* Taken, but the round trip outlasted RenewDeadline:
			 * a lease renewed that long ago is not one to lead
			 * on (ctl_leader_is_leader would say no while
			 * on_started runs). Renew it at once, still a
			 * candidate; the next attempt finds it ours. */
			cu_debug("leader election: %s took lease %s/%s after "
				 "%.3f s, renewing before leading",
			    l->identity, l->ns, l->name,
			    secs(l->mono() - l->attempt_at));
			timer_arm(l, &l->retry, 0);
			notify_new_leader(l);
			return;
		}
		l->state = CTL_LEADER_LEADING;
		l->in_cycle = false;
		l->renewed_at = l->attempt_at;
		timer_arm(l, &l->retry, l->rp);
		cu_info("leader election: %s acquired lease %s/%s", l->identity,
		    l->ns, l->name);
		if (!notify_new_leader(l))
			return;
		if (l->state == CTL_LEADER_LEADING)
			notify_started(l);
		return;
	}
	if (l->state != CTL_LEADER_LEADING)
		return;
	if (ok) {
		l->in_cycle = false;
		l->renewed_at = l->attempt_at;
		ev_timer_stop(l->loop, &l->deadline);
		timer_arm(l, &l->retry, l->rp);
	} else if (l->mono() - l->cycle_start >= l->rd) {
		lose(l);
		return;
	} else {
		timer_arm(l, &l->retry, l->rp);
	}
	notify_new_leader(l);
}

static void lose(ctl_leader *l)
{
	stop_all(l);
	l->state = CTL_LEADER_LOST;
	l->in_cycle = false;
	cu_warn("leader election: %s lost lease %s/%s: no renewal within "
		"%.3f s",
	    l->identity, l->ns, l->name, secs(l->rd));
	notify_stopped(l);
}

/* ---- release ------------------------------------------------------- */

static void release_finish(ctl_leader *l, int err)
{
	ctl_leader_done_cb done = l->done;
	void *payload = l->done_payload;

	stop_all(l);
	l->state = CTL_LEADER_RELEASED;
	l->done = NULL;
	if (err == CU_OK)
		cu_info("leader election: %s released lease %s/%s", l->identity,
		    l->ns, l->name);
	else
		cu_warn("leader election: releasing lease %s/%s failed: %s",
		    l->ns, l->name, cu_err_name(err));
	if (!notify_stopped(l))
		return;
	if (done == NULL)
		return;
	cb_enter(l);
	done(err, payload);
	cb_leave(l);
}

static void on_release_put(const struct api_response *resp, void *payload)
{
	ctl_leader *l = payload;

	if (resp->canceled)
		return;
	l->req = NULL;
	if (resp->err == CU_OK)
		(void)observe(l, resp->body);
	else
		cu_debug("leader election: release PUT: %d %s", resp->code,
		    resp->message);
	release_finish(l, resp->err);
}

static void on_release_get(const struct api_response *resp, void *payload)
{
	ctl_leader *l = payload;
	json_t *spec, *obj;
	cu_error err;
	int rc;

	if (resp->canceled)
		return;
	l->req = NULL;
	if (resp->err == CU_ENOTFOUND) {
		release_finish(l, CU_OK); /* nothing to release */
		return;
	}
	if (resp->err != CU_OK || !json_is_object(resp->body)) {
		release_finish(l, resp->err != CU_OK ? resp->err : CU_EPARSE);
		return;
	}
	(void)observe(l, resp->body);
	spec = lease_spec(resp->body);
	if (spec_str(spec, "holderIdentity") == NULL ||
	    strcmp(spec_str(spec, "holderIdentity"), l->identity) != 0) {
		release_finish(l, CU_OK); /* someone else holds it now */
		return;
	}
	obj = with_spec(resp->body,
	    new_spec(l, "", 1, NULL,
		json_integer_value(json_object_get(spec, "leaseTransitions"))));
	if (obj == NULL) {
		release_finish(l, CU_ENOMEM);
		return;
	}
	rc = api_update(
	    &l->req, l->client, &LEASES, obj, false, on_release_put, l, &err);
	json_decref(obj);
	if (rc != CU_OK) {
		l->req = NULL;
		release_finish(l, rc);
	}
}

static void release_start(ctl_leader *l)
{
	cu_error err;
	int rc;

	if (!l->release_write) {
		release_finish(l, CU_OK);
		return;
	}
	rc = api_get(&l->req, l->client, &LEASES, l->ns, l->name,
	    on_release_get, l, &err);
	if (rc != CU_OK) {
		l->req = NULL;
		release_finish(l, rc);
	}
}

/* ---- timers -------------------------------------------------------- */

static void on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl_leader *l = w->data;

	(void)loop;
	(void)revents;
	switch (l->state) {
	case CTL_LEADER_CANDIDATE:
		attempt_start(l);
		break;
	case CTL_LEADER_LEADING:
		if (!l->in_cycle && l->mono() - l->renewed_at >= l->rd) {
			/* Woken late (the process was stopped, the loop
			 * stalled): no renewal for RenewDeadline, so another
			 * replica may lead by now. A new cycle would keep us
			 * "leading" for another RenewDeadline. */
			lose(l);
			break;
		}
		if (!l->in_cycle) {
			l->in_cycle = true;
			l->cycle_start = l->mono();
			timer_arm(l, &l->deadline, l->rd);
		} else if (l->mono() - l->cycle_start >= l->rd) {
			lose(l);
			break;
		}
		attempt_start(l);
		break;
	case CTL_LEADER_RELEASING:
		release_start(l);
		break;
	default:
		break;
	}
}

static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl_leader *l = w->data;
	int64_t left;

	(void)loop;
	(void)revents;
	if (l->state == CTL_LEADER_RELEASING) {
		release_finish(l, CU_ETIMEOUT);
		return;
	}
	if (l->state != CTL_LEADER_LEADING || !l->in_cycle)
		return;
	left = l->cycle_start + l->rd - l->mono();
	if (left > 0)
		timer_arm(l, &l->deadline, left); /* a slower test clock */
	else
		lose(l);
}

/* ---- public -------------------------------------------------------- */

/* "<hostname>_<uuid v4>" [owned]; NULL on ENOMEM. */
static char *default_identity(void)
{
	char host[256];
	unsigned char b[16];
	size_t i;

	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "cueue");
	host[sizeof(host) - 1] = '\0';
	if (getentropy(b, sizeof(b)) != 0) {
		uint64_t s = (uint64_t)cu_time_now_ns() ^
			     ((uint64_t)getpid() << 32) ^
			     (uint64_t)cu_time_mono_ns();
		for (i = 0; i < sizeof(b); i++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			b[i] = (unsigned char)(s >> 56);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	return cu_asprintf("%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			   "%02x%02x%02x%02x%02x%02x",
	    host, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
	    b[10], b[11], b[12], b[13], b[14], b[15]);
}

int ctl_leader_new(ctl_leader **out, api_client *client, struct ev_loop *loop,
    const struct ctl_leader_opts *opts, const struct ctl_leader_callbacks *cbs,
    void *payload, cu_error *err)
{
	ctl_leader *l;
	int64_t ld, rd, rp;

	*out = NULL;
	if (client == NULL || loop == NULL || opts == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "leader election: client, loop and options are required");
	if (opts->namespace_name == NULL || opts->namespace_name[0] == '\0' ||
	    opts->name == NULL || opts->name[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "leader election: lease namespace and name are required");
	if (opts->identity != NULL &&
	    strlen(opts->identity) > CTL_LEADER_IDENTITY_MAX)
		return cu_error_set(err, CU_EINVAL,
		    "leader election: identity longer than %d bytes",
		    CTL_LEADER_IDENTITY_MAX);
	ld = opts->lease_duration_ns ? opts->lease_duration_ns
				     : CTL_LEADER_LEASE_DURATION_NS;
	rd = opts->renew_deadline_ns ? opts->renew_deadline_ns
				     : CTL_LEADER_RENEW_DEADLINE_NS;
	rp = opts->retry_period_ns ? opts->retry_period_ns
				   : CTL_LEADER_RETRY_PERIOD_NS;
	if (rp <= 0 || !((double)rd > CTL_LEADER_JITTER * (double)rp) ||
	    ld <= rd)
		return cu_error_set(err, CU_EINVAL,
		    "leader election: need leaseDuration (%" PRId64
		    " ns) > renewDeadline (%" PRId64
		    " ns) > 1.2 * retryPeriod (%" PRId64 " ns) > 0",
		    ld, rd, rp);
	l = cu_calloc(1, sizeof(*l));
	if (l == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "leader election: out of memory");
	l->client = client;
	l->loop = loop;
	l->ld = ld;
	l->rd = rd;
	l->rp = rp;
	l->mono = opts->mono_ns ? opts->mono_ns : cu_time_mono_ns;
	l->wall = opts->wall_ns ? opts->wall_ns : cu_time_now_ns;
	if (cbs != NULL)
		l->cbs = *cbs;
	l->payload = payload;
	l->state = CTL_LEADER_FOLLOWER;
	ev_timer_init(&l->retry, on_retry, 0.0, 0.0);
	l->retry.data = l;
	ev_timer_init(&l->deadline, on_deadline, 0.0, 0.0);
	l->deadline.data = l;
	l->ns = cu_strdup(opts->namespace_name);
	l->name = cu_strdup(opts->name);
	l->identity = opts->identity != NULL && opts->identity[0] != '\0'
			  ? cu_strdup(opts->identity)
			  : default_identity();
	if (l->ns == NULL || l->name == NULL || l->identity == NULL) {
		destroy(l);
		return cu_error_set(
		    err, CU_ENOMEM, "leader election: out of memory");
	}
	l->rng = (uint64_t)cu_time_mono_ns() ^ (uint64_t)(uintptr_t)l;
	for (const char *p = l->identity; *p != '\0'; p++)
		l->rng = (l->rng ^ (unsigned char)*p) * 1099511628211ULL;
	*out = l;
	return CU_OK;
}

int ctl_leader_start(ctl_leader *l, cu_error *err)
{
	if (l->state != CTL_LEADER_FOLLOWER)
		return cu_error_set(err, CU_EINVAL,
		    "leader election: cannot start in state %s",
		    ctl_leader_state_name(l->state));
	l->state = CTL_LEADER_CANDIDATE;
	timer_arm(l, &l->retry, 0); /* JitterUntil runs at once */
	return CU_OK;
}

bool ctl_leader_is_leader(const ctl_leader *l)
{
	/* LEADING alone is not enough: after a stall (SIGSTOP, a blocked
	 * loop) the timers that notice the loss may run after other
	 * callbacks that want to write. The last successful renewal began
	 * less than RenewDeadline (< LeaseDuration) ago, so nobody else can
	 * have taken the Lease over yet. */
	return l != NULL && l->state == CTL_LEADER_LEADING &&
	       l->mono() - l->renewed_at < l->rd;
}

enum ctl_leader_state ctl_leader_state(const ctl_leader *l)
{
	return l->state;
}

const char *ctl_leader_state_name(enum ctl_leader_state s)
{
	switch (s) {
	case CTL_LEADER_FOLLOWER:
		return "follower";
	case CTL_LEADER_CANDIDATE:
		return "candidate";
	case CTL_LEADER_LEADING:
		return "leading";
	case CTL_LEADER_LOST:
		return "lost";
	case CTL_LEADER_RELEASING:
		return "releasing";
	case CTL_LEADER_RELEASED:
		return "released";
	}
	return "unknown";
}

const char *ctl_leader_identity(const ctl_leader *l)
{
	return l->identity;
}

const char *ctl_leader_holder(const ctl_leader *l)
{
	return l->observed_holder ? l->observed_holder : "";
}

int ctl_leader_release(
    ctl_leader *l, ctl_leader_done_cb done, void *payload, cu_error *err)
{
	if (l->state == CTL_LEADER_RELEASING || l->state == CTL_LEADER_RELEASED)
		return cu_error_set(err, CU_EINVAL,
		    "leader election: already %s",
		    ctl_leader_state_name(l->state));
	l->release_write = l->state == CTL_LEADER_LEADING;
	stop_all(l);
	l->state = CTL_LEADER_RELEASING;
	l->in_cycle = false;
	l->done = done;
	l->done_payload = payload;
	if (l->release_write)
		timer_arm(l, &l->deadline, l->rd);
	timer_arm(l, &l->retry, 0);
	return CU_OK;
}

void ctl_leader_free(ctl_leader *l)
{
	if (l == NULL)
		return;
	if (l->depth > 0) {
		l->dying = true; /* freed when the callback returns */
		stop_all(l);
		return;
	}
	destroy(l);
}
