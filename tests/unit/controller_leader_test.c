/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_leader_test.c - controller/leader.c against the
 * project's real API server (tests/apiserver) run in-process on the same
 * libev loop: acquiring and renewing a Lease, exclusivity of two
 * candidates, takeover after a crash (real time with short durations, and
 * with client-go's default durations on a test clock), graceful release,
 * losing leadership when renewals fail for longer than RenewDeadline,
 * racing creates, a foreign Lease whose timestamps lie, and teardown from
 * inside callbacks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/client.h"
#include "controller/leader.h"
#include "tests/apiserver/apiserver.h"

void as_testapi_free(struct as_server *srv);

#define GOOD_TOKEN "good-token"
#define LEASE "cueue-leader"
#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/default/leases"
#define NS_PER_S 1000000000LL
#define MS(x) ((int64_t)(x)*1000000LL)

static struct ev_loop *loop;
static struct as_server srv;
static char url[128];

/* The test clock: the monotonic clock plus an offset tests move ahead. */
static int64_t clock_offset;

static int64_t test_mono(void)
{
	return cu_time_mono_ns() + clock_offset;
}

/* One candidate: its own client, elector and what its callbacks saw. */
struct cand {
	api_client *cl;
	ctl_leader *l;
	int started, stopped, new_leaders, dones;
	int done_err;
	char last_leader[256];
	char log[1024]; /* "new(x) start stop done(rc)" in order */
	double started_at, stopped_at, done_at;
	bool free_on_start, free_on_stop, release_on_start;
	bool in_call; /* a ctl_leader_* call is under way */
	bool cb_inside_call;
};

static struct cand ca, cb;

static double now_s(void)
{
	return (double)cu_time_mono_ns() / 1e9;
}

static void log_add(struct cand *c, const char *s)
{
	size_t n = strlen(c->log);

	snprintf(c->log + n, sizeof(c->log) - n, "%s%s", n ? " " : "", s);
	if (c->in_call)
		c->cb_inside_call = true;
}

static void on_done(int err, void *payload)
{
	struct cand *c = payload;
	char buf[64];

	c->dones++;
	c->done_err = err;
	c->done_at = now_s();
	snprintf(buf, sizeof(buf), "done(%s)", cu_err_name(err));
	log_add(c, buf);
}

static void on_started(void *payload)
{
	struct cand *c = payload;

	c->started++;
	c->started_at = now_s();
	log_add(c, "start");
	cr_assert(ctl_leader_is_leader(c->l));
	if (c->release_on_start) {
		cr_assert_eq(ctl_leader_release(c->l, on_done, c, NULL), CU_OK);
		cr_assert(!ctl_leader_is_leader(c->l));
	}
	if (c->free_on_start) {
		ctl_leader_free(c->l);
		c->l = NULL;
	}
}

static void on_stopped(void *payload)
{
	struct cand *c = payload;

	c->stopped++;
	c->stopped_at = now_s();
	log_add(c, "stop");
	cr_assert(!ctl_leader_is_leader(c->l));
	if (c->free_on_stop) {
		ctl_leader_free(c->l);
		c->l = NULL;
	}
}

static void on_new_leader(const char *identity, void *payload)
{
	struct cand *c = payload;
	char buf[300];

	c->new_leaders++;
	snprintf(c->last_leader, sizeof(c->last_leader), "%s", identity);
	snprintf(buf, sizeof(buf), "new(%s)", identity);
	log_add(c, buf);
}

static const struct ctl_leader_callbacks CBS = {
    on_started, on_stopped, on_new_leader};

/* ---- loop helpers ---------------------------------------------------- */

static void on_deadline(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)revents;
	*(bool *)w->data = true;
}

/* Exclusivity sampler: every 2 ms, at most one candidate leads. */
static ev_timer sampler;
static int samples, overlaps;

static void on_sample(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	samples++;
	if (ca.l != NULL && cb.l != NULL && ctl_leader_is_leader(ca.l) &&
	    ctl_leader_is_leader(cb.l))
		overlaps++;
}

static void sampler_start(void)
{
	ev_timer_init(&sampler, on_sample, 0.002, 0.002);
	ev_timer_start(loop, &sampler);
}

typedef bool (*cond_fn)(void);

/* Run the loop until cond() or `seconds` pass; returns cond(). */
static bool run_until(cond_fn cond, double seconds)
{
	bool expired = false;
	ev_timer t;

	ev_timer_init(&t, on_deadline, seconds, 0.0);
	t.data = &expired;
	ev_timer_start(loop, &t);
	while (!(cond && cond()) && !expired)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &t);
	return cond && cond();
}

static void run_for(double seconds)
{
	run_until(NULL, seconds);
}

static bool a_leads(void)
{
	return ca.l != NULL && ctl_leader_is_leader(ca.l);
}

static bool b_leads(void)
{
	return cb.l != NULL && ctl_leader_is_leader(cb.l);
}

static bool a_stopped(void)
{
	return ca.stopped > 0;
}

static bool b_stopped(void)
{
	return cb.stopped > 0;
}

static bool a_done(void)
{
	return ca.dones > 0;
}

static bool a_started(void)
{
	return ca.started > 0;
}

static bool either_leads(void)
{
	return a_leads() || b_leads();
}

/* ---- server and candidates ------------------------------------------ */

static void setup(void)
{
	cu_error err;

	loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(loop);
	memset(&ca, 0, sizeof(ca));
	memset(&cb, 0, sizeof(cb));
	clock_offset = 0;
	samples = overlaps = 0;
	cr_assert_eq(as_fixture_start(&srv, loop, GOOD_TOKEN, NULL, &err),
	    CU_OK, "%s", err.msg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)srv.port);
}

static void cand_dispose(struct cand *c)
{
	ctl_leader_free(c->l);
	c->l = NULL;
	api_client_free(c->cl);
	c->cl = NULL;
}

static void teardown(void)
{

	ev_timer_stop(loop, &sampler);
	cand_dispose(&ca);
	cand_dispose(&cb);
	as_fixture_stop(&srv);
	ev_loop_destroy(loop);
	loop = NULL;
}

/* Durations of one test, in ns; mono NULL = the real clock. */
struct durs {
	int64_t ld, rd, rp;
	int64_t (*mono)(void);
};

/* LD 1.5 s, RD 1 s, RP 0.2 s on the real clock. */
static const struct durs REAL = {MS(1500), MS(1000), MS(200), NULL};
/* client-go's defaults on the test clock, attempts every 50 ms. */
static const struct durs FAST = {
    15 * NS_PER_S, 10 * NS_PER_S, MS(50), test_mono};

static void cand_new(struct cand *c, const char *identity, struct durs d)
{
	struct api_client_opts co;
	struct ctl_leader_opts o;
	cu_error err;

	memset(&co, 0, sizeof(co));
	co.server = url;
	co.token = GOOD_TOKEN;
	co.retry_base_ms = 50;
	cr_assert_eq(
	    api_client_new(&c->cl, loop, &co, &err), CU_OK, "%s", err.msg);
	memset(&o, 0, sizeof(o));
	o.namespace_name = "default";
	o.name = LEASE;
	o.identity = identity;
	o.lease_duration_ns = d.ld;
	o.renew_deadline_ns = d.rd;
	o.retry_period_ns = d.rp;
	o.mono_ns = d.mono;
	cr_assert_eq(ctl_leader_new(&c->l, c->cl, loop, &o, &CBS, c, &err),
	    CU_OK, "%s", err.msg);
}

static void cand_start(struct cand *c)
{
	cu_error err;

	c->in_call = true;
	cr_assert_eq(ctl_leader_start(c->l, &err), CU_OK, "%s", err.msg);
	c->in_call = false;
}

/* The stored Lease [owned ref: json_decref], or NULL. */
static json_t *lease_get(void)
{
	struct as_kind *k =
	    as_kind_find(&srv, "coordination.k8s.io", "v1", "leases");

	cr_assert_not_null(k);
	return json_incref(as_store_get(k, "default", LEASE));
}

static const char *spec_s(json_t *lease, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(lease, "spec"), key));
}

static json_int_t spec_i(json_t *lease, const char *key)
{
	json_t *v = json_object_get(json_object_get(lease, "spec"), key);

	cr_assert(json_is_integer(v), "spec.%s is not an integer", key);
	return json_integer_value(v);
}

static const char *rv_of(json_t *lease)
{
	return json_string_value(json_object_get(
	    json_object_get(lease, "metadata"), "resourceVersion"));
}

/* metav1.MicroTime: "2006-01-02T15:04:05.000000Z". */
static void assert_micro(const char *s)
{
	cr_assert_not_null(s);
	cr_assert_eq(strlen(s), 27, "not MicroTime: %s", s);
	cr_assert_eq(s[10], 'T', "%s", s);
	cr_assert_eq(s[19], '.', "%s", s);
	for (int i = 20; i < 26; i++)
		cr_assert(s[i] >= '0' && s[i] <= '9', "%s", s);
	cr_assert_eq(s[26], 'Z', "%s", s);
}

/* Replace the server's fault rules with one (NULL method = any). */
static void set_fault(const char *method, int code, int latency_ms, int count)
{
	as_testapi_free(&srv);
	srv.faults = cu_calloc(1, sizeof(*srv.faults));
	cr_assert_not_null(srv.faults);
	srv.faults[0].method = method ? cu_strdup(method) : NULL;
	srv.faults[0].path_prefix = cu_strdup(LEASE_PATH);
	srv.faults[0].code = code;
	srv.faults[0].retry_after = -1;
	srv.faults[0].remaining = count;
	srv.faults[0].probability = 1.0;
	srv.faults[0].latency_ms = latency_ms;
	srv.nfaults = 1;
}

static uint64_t requests_of(const struct cand *c)
{
	struct api_client_stats st;

	api_client_stats(c->cl, &st);
	return st.requests;
}

static uint64_t count_of(const struct cand *c, const char *verb, int code)
{
	return api_client_stats_count(c->cl, verb, code);
}

/* ---- options --------------------------------------------------------- */

Test(leader, options_are_validated, .init = setup, .fini = teardown)
{
	struct api_client_opts co;
	struct ctl_leader_opts o;
	ctl_leader *l = NULL;
	cu_error err;
	char host[256];
	const char *id;

	memset(&co, 0, sizeof(co));
	co.server = url;
	co.token = GOOD_TOKEN;
	cr_assert_eq(api_client_new(&ca.cl, loop, &co, &err), CU_OK);
	memset(&o, 0, sizeof(o));
	o.namespace_name = "default";

	/* the Lease's name is required */
	cr_assert_eq(
	    ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err), CU_EINVAL);
	cr_assert_null(l);
	cr_assert_neq(err.msg[0], '\0');
	o.name = LEASE;

	/* LD > RD > 1.2 RP > 0 */
	o.lease_duration_ns = MS(1000);
	o.renew_deadline_ns = MS(1000);
	o.retry_period_ns = MS(100);
	cr_assert_eq(ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
	    CU_EINVAL, "LD == RD accepted");
	o.lease_duration_ns = MS(2000);
	o.renew_deadline_ns = MS(1200);
	o.retry_period_ns = MS(1000);
	cr_assert_eq(ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
	    CU_EINVAL, "RD == 1.2 RP accepted");
	o.retry_period_ns = -MS(1);
	cr_assert_eq(ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
	    CU_EINVAL, "negative RP accepted");
	o.retry_period_ns = MS(999);
	cr_assert_eq(ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
	    CU_OK, "%s", err.msg);
	ctl_leader_free(l);
	/* 10 s is not > 1.2 * 10 s: defaults apply only to zero fields */
	o.lease_duration_ns = 0;
	o.renew_deadline_ns = 0;
	o.retry_period_ns = 10 * NS_PER_S;
	cr_assert_eq(
	    ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err), CU_EINVAL);

	/* defaults: 15 s / 10 s / 2 s; identity "<hostname>_<uuid>" */
	o.retry_period_ns = 0;
	cr_assert_eq(ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	id = ctl_leader_identity(l);
	cr_assert_eq(strncmp(id, host, strlen(host)), 0, "%s", id);
	cr_assert_eq(id[strlen(host)], '_', "%s", id);
	cr_assert_eq(strlen(id), strlen(host) + 1 + 36, "%s", id);
	cr_assert_eq(ctl_leader_state(l), CTL_LEADER_FOLLOWER);
	cr_assert_str_eq(
	    ctl_leader_state_name(ctl_leader_state(l)), "follower");
	cr_assert(!ctl_leader_is_leader(l));
	cr_assert_str_eq(ctl_leader_holder(l), "");
	cr_assert_eq(ctl_leader_start(l, &err), CU_OK);
	cr_assert_eq(ctl_leader_state(l), CTL_LEADER_CANDIDATE);
	cr_assert_eq(ctl_leader_start(l, &err), CU_EINVAL);
	ctl_leader_free(l);

	/* two default identities differ */
	{
		ctl_leader *l2 = NULL;

		cr_assert_eq(
		    ctl_leader_new(&l, ca.cl, loop, &o, NULL, NULL, &err),
		    CU_OK);
		cr_assert_eq(
		    ctl_leader_new(&l2, ca.cl, loop, &o, NULL, NULL, &err),
		    CU_OK);
		cr_assert_str_neq(
		    ctl_leader_identity(l), ctl_leader_identity(l2));
		ctl_leader_free(l);
		ctl_leader_free(l2);
	}
	ctl_leader_free(NULL);
}

/* ---- one candidate --------------------------------------------------- */

Test(leader, single_candidate_acquires_and_renews, .init = setup,
    .fini = teardown)
{
	json_t *first, *cur;
	char acquire[64], renew[64], rv[32];
	int changes = 0;
	double t0;

	cand_new(&ca, "pod-a", REAL);
	cr_assert_null(lease_get());
	t0 = now_s();
	cand_start(&ca);
	cr_assert(!ca.cb_inside_call);
	cr_assert(run_until(a_leads, 2.0), "no leadership");
	cr_assert_lt(now_s() - t0, 0.5, "first attempt is not immediate");
	cr_assert_eq(ca.started, 1);
	cr_assert_str_eq(ca.log, "new(pod-a) start");
	cr_assert_str_eq(ctl_leader_holder(ca.l), "pod-a");
	cr_assert_eq(count_of(&ca, "POST", 201), 1);

	first = lease_get();
	cr_assert_not_null(first);
	cr_assert_str_eq(spec_s(first, "holderIdentity"), "pod-a");
	cr_assert_eq(spec_i(first, "leaseDurationSeconds"), 1); /* 1.5 s */
	cr_assert_eq(spec_i(first, "leaseTransitions"), 0);
	assert_micro(spec_s(first, "acquireTime"));
	assert_micro(spec_s(first, "renewTime"));
	cr_assert_str_eq(
	    spec_s(first, "acquireTime"), spec_s(first, "renewTime"));
	snprintf(acquire, sizeof(acquire), "%s", spec_s(first, "acquireTime"));
	snprintf(renew, sizeof(renew), "%s", spec_s(first, "renewTime"));
	snprintf(rv, sizeof(rv), "%s", rv_of(first));
	json_decref(first);

	/* renewals every RetryPeriod (0.2 s): in 1.1 s about five */
	t0 = now_s();
	while (now_s() - t0 < 1.1) {
		run_for(0.02);
		cur = lease_get();
		if (strcmp(rv_of(cur), rv) != 0) {
			changes++;
			cr_assert_str_eq(
			    spec_s(cur, "holderIdentity"), "pod-a");
			cr_assert_str_eq(spec_s(cur, "acquireTime"), acquire);
			cr_assert_eq(spec_i(cur, "leaseTransitions"), 0);
			assert_micro(spec_s(cur, "renewTime"));
			cr_assert_gt(strcmp(spec_s(cur, "renewTime"), renew), 0,
			    "renewTime did not advance: %s <= %s",
			    spec_s(cur, "renewTime"), renew);
			snprintf(renew, sizeof(renew), "%s",
			    spec_s(cur, "renewTime"));
			snprintf(rv, sizeof(rv), "%s", rv_of(cur));
		}
		json_decref(cur);
	}
	cr_assert(
	    changes >= 4 && changes <= 6, "%d renewals in 1.1 s", changes);
	cr_assert(ctl_leader_is_leader(ca.l));
	cr_assert_eq(ca.started, 1);
	cr_assert_eq(ca.stopped, 0);
	cr_assert_eq(ca.new_leaders, 1);
	/* one GET + one write per attempt, nothing else */
	cr_assert_eq(count_of(&ca, "PUT", 200), (uint64_t)changes);
	cr_assert_eq(count_of(&ca, "GET", 200), (uint64_t)changes);
}

/* ---- two candidates: crash and takeover ------------------------------ */

Test(leader, takeover_after_crash_real_time, .init = setup, .fini = teardown)
{
	json_t *before, *after;
	double t_crash, took;
	const double ld = 1.5, rp = 0.2;

	cand_new(&ca, "pod-a", REAL);
	cand_new(&cb, "pod-b", REAL);
	sampler_start();
	cand_start(&ca);
	cr_assert(run_until(a_leads, 2.0));
	cand_start(&cb);
	run_for(1.0);
	cr_assert(a_leads());
	cr_assert(!b_leads(), "two leaders");
	cr_assert_str_eq(cb.log, "new(pod-a)");
	cr_assert_eq(ctl_leader_state(cb.l), CTL_LEADER_CANDIDATE);
	before = lease_get();

	/* crash: the leader disappears without a word */
	ctl_leader_free(ca.l);
	ca.l = NULL;
	t_crash = now_s();
	cr_assert(run_until(b_leads, ld + 5 * rp + 1.0), "no takeover");
	took = now_s() - t_crash;
	/*
	 * B takes over LD after it observed A's last renewal (which was at
	 * most ~RP before the crash), at its next attempt; attempts come
	 * every RP..2.2 RP, and B may see that renewal up to 2.2 RP late:
	 * LD - RP <= took <= LD + 4.4 RP.
	 */
	cr_assert_geq(took, ld - rp - 0.05, "took over after %.3f s", took);
	cr_assert_leq(
	    took, ld + 4.4 * rp + 0.3, "took over after %.3f s", took);
	cr_assert_eq(cb.started, 1);
	cr_assert_str_eq(cb.log, "new(pod-a) new(pod-b) start");

	after = lease_get();
	cr_assert_str_eq(spec_s(after, "holderIdentity"), "pod-b");
	cr_assert_eq(spec_i(after, "leaseTransitions"),
	    spec_i(before, "leaseTransitions") + 1);
	cr_assert_str_neq(
	    spec_s(after, "acquireTime"), spec_s(before, "acquireTime"));
	assert_micro(spec_s(after, "acquireTime"));
	json_decref(before);
	json_decref(after);
	run_for(0.5);
	cr_assert(b_leads());
	cr_assert_gt(samples, 500, "only %d samples", samples);
	cr_assert_eq(overlaps, 0, "%d samples with two leaders", overlaps);
}

Test(leader, takeover_after_crash_default_durations_on_test_clock,
    .init = setup, .fini = teardown)
{
	json_t *after;

	cand_new(&ca, "pod-a", FAST);
	cand_new(&cb, "pod-b", FAST);
	sampler_start();
	cand_start(&ca);
	cr_assert(run_until(a_leads, 1.0));
	cand_start(&cb);
	run_for(0.3);
	ctl_leader_free(ca.l);
	ca.l = NULL;
	/* B saw A's last record at most 0.6 s + 14 s ago: not expired */
	run_for(0.3);
	clock_offset += 14 * NS_PER_S;
	run_for(0.3);
	cr_assert(!b_leads(), "took over before LeaseDuration");
	/* now LD has passed since B last saw the record change */
	clock_offset += NS_PER_S;
	cr_assert(run_until(b_leads, 0.5), "no takeover after LD");
	after = lease_get();
	cr_assert_str_eq(spec_s(after, "holderIdentity"), "pod-b");
	cr_assert_eq(spec_i(after, "leaseDurationSeconds"), 15);
	cr_assert_eq(spec_i(after, "leaseTransitions"), 1);
	json_decref(after);
	cr_assert_eq(overlaps, 0);
}

/* ---- graceful release ------------------------------------------------ */

Test(leader, graceful_release_lets_the_other_take_over_at_once, .init = setup,
    .fini = teardown)
{
	struct durs d = {15 * NS_PER_S, 10 * NS_PER_S, MS(200), NULL};
	json_t *released, *after;
	uint64_t reqs;
	double t_rel, took;
	int64_t transitions;
	cu_error err;

	cand_new(&ca, "pod-a", d);
	cand_new(&cb, "pod-b", d);
	sampler_start();
	cand_start(&ca);
	cr_assert(run_until(a_leads, 1.0));
	cand_start(&cb);
	run_for(0.5);
	cr_assert(!b_leads());
	released = lease_get();
	transitions = spec_i(released, "leaseTransitions");
	json_decref(released);

	ca.in_call = true;
	cr_assert_eq(ctl_leader_release(ca.l, on_done, &ca, &err), CU_OK);
	ca.in_call = false;
	cr_assert(!ca.cb_inside_call, "callback inside ctl_leader_release");
	cr_assert(!ctl_leader_is_leader(ca.l));
	cr_assert_eq(ctl_leader_state(ca.l), CTL_LEADER_RELEASING);
	cr_assert_eq(ctl_leader_release(ca.l, on_done, &ca, &err), CU_EINVAL);
	t_rel = now_s();
	cr_assert(run_until(a_done, 2.0), "release never finished");
	cr_assert_eq(ca.done_err, CU_OK);
	cr_assert_str_eq(ca.log, "new(pod-a) start stop done(CU_OK)");
	cr_assert_eq(ctl_leader_state(ca.l), CTL_LEADER_RELEASED);

	released = lease_get();
	/* B may already have taken over; the release is in the history */
	if (strcmp(spec_s(released, "holderIdentity"), "") == 0) {
		cr_assert_eq(spec_i(released, "leaseDurationSeconds"), 1);
		cr_assert_eq(spec_i(released, "leaseTransitions"), transitions);
		assert_micro(spec_s(released, "renewTime"));
	}
	json_decref(released);
	reqs = requests_of(&ca);

	cr_assert(run_until(b_leads, 1.0 + 2.2 * 0.2 + 0.3),
	    "no takeover after release");
	took = now_s() - t_rel;
	cr_assert_lt(took, 1.0 + 2.2 * 0.2 + 0.3, "%.3f s", took);
	after = lease_get();
	cr_assert_str_eq(spec_s(after, "holderIdentity"), "pod-b");
	cr_assert_eq(spec_i(after, "leaseTransitions"), transitions + 1);
	cr_assert_eq(spec_i(after, "leaseDurationSeconds"), 15);
	json_decref(after);
	cr_assert(strstr(cb.log, "new(pod-b) start") != NULL, "%s", cb.log);
	run_for(0.5);
	cr_assert_eq(requests_of(&ca), reqs, "released elector still writes");
	cr_assert_eq(ca.started, 1);
	cr_assert_eq(ca.stopped, 1);
	cr_assert_eq(ca.dones, 1);
	cr_assert_eq(overlaps, 0);
}

/* The release write itself, checked before anyone else can take over. */
Test(leader, release_writes_empty_holder_and_keeps_transitions, .init = setup,
    .fini = teardown)
{
	json_t *l;

	cand_new(&ca, "pod-a", REAL);
	cand_start(&ca);
	cr_assert(run_until(a_leads, 2.0));
	cr_assert_eq(ctl_leader_release(ca.l, on_done, &ca, NULL), CU_OK);
	cr_assert(run_until(a_done, 2.0));
	cr_assert_eq(ca.done_err, CU_OK);
	l = lease_get();
	cr_assert_str_eq(spec_s(l, "holderIdentity"), "");
	cr_assert_eq(spec_i(l, "leaseDurationSeconds"), 1);
	cr_assert_eq(spec_i(l, "leaseTransitions"), 0);
	assert_micro(spec_s(l, "acquireTime"));
	assert_micro(spec_s(l, "renewTime"));
	json_decref(l);
	/* release reads the Lease, then writes it once */
	cr_assert_eq(count_of(&ca, "PUT", 200), count_of(&ca, "GET", 200));
}

Test(leader, release_when_not_leading_writes_nothing, .init = setup,
    .fini = teardown)
{
	cu_error err;

	cand_new(&ca, "pod-a", REAL);
	ca.in_call = true;
	cr_assert_eq(ctl_leader_release(ca.l, on_done, &ca, &err), CU_OK);
	ca.in_call = false;
	cr_assert_eq(ca.dones, 0, "done ran inside the call");
	cr_assert(run_until(a_done, 1.0));
	cr_assert_eq(ca.done_err, CU_OK);
	cr_assert_str_eq(ca.log, "done(CU_OK)");
	cr_assert_eq(requests_of(&ca), 0);
	cr_assert_eq(ctl_leader_state(ca.l), CTL_LEADER_RELEASED);
	cr_assert_eq(ctl_leader_start(ca.l, &err), CU_EINVAL);
	cr_assert_null(lease_get());
}

/* ---- losing leadership ------------------------------------------------ */

Test(leader, renew_failures_beyond_deadline_lose_leadership, .init = setup,
    .fini = teardown)
{
	struct api_client_stats st;
	double t_fault, took;
	uint64_t reqs;

	cand_new(&ca, "pod-a", REAL);
	cand_start(&ca);
	cr_assert(run_until(a_leads, 2.0));
	run_for(0.5);
	set_fault(NULL, 500, 0, -1);
	t_fault = now_s();
	cr_assert(run_until(a_stopped, 3.0), "leadership never lost");
	took = now_s() - t_fault;
	/* the renew cycle under way started at most RP before the fault
	 * and ends RD after its start; RD cancels the retrying request */
	cr_assert_geq(took, 1.0 - 0.2 - 0.05, "lost after %.3f s", took);
	cr_assert_leq(took, 1.0 + 0.2 + 0.2, "lost after %.3f s", took);
	cr_assert_eq(ctl_leader_state(ca.l), CTL_LEADER_LOST);
	cr_assert(!ctl_leader_is_leader(ca.l));
	cr_assert_str_eq(ca.log, "new(pod-a) start stop");
	cr_assert_gt(count_of(&ca, "GET", 500), 0);

	/* lost is terminal: nothing more is sent even once the server is
	 * fine again */
	as_testapi_free(&srv);
	api_client_stats(ca.cl, &st);
	cr_assert_eq(st.in_flight, 0);
	reqs = requests_of(&ca);
	run_for(0.8);
	cr_assert_eq(requests_of(&ca), reqs, "lost elector still sends");
	cr_assert_eq(ca.stopped, 1);
}

Test(leader, renew_failures_lose_leadership_on_test_clock, .init = setup,
    .fini = teardown)
{
	cand_new(&ca, "pod-a", FAST);
	cand_start(&ca);
	cr_assert(run_until(a_leads, 1.0));
	set_fault("PUT", 500, 0, -1);
	run_for(0.5);
	cr_assert(a_leads(), "lost before RenewDeadline");
	cr_assert_gt(count_of(&ca, "PUT", 500), 0);
	clock_offset += 10 * NS_PER_S;
	/* at the latest when the retrying renew in flight gives up */
	cr_assert(run_until(a_stopped, 3.0), "not lost after RenewDeadline");
	cr_assert_eq(ctl_leader_state(ca.l), CTL_LEADER_LOST);
}

Test(leader, one_conflict_does_not_cost_leadership, .init = setup,
    .fini = teardown)
{
	cand_new(&ca, "pod-a", REAL);
	cand_start(&ca);
	cr_assert(run_until(a_leads, 2.0));
	set_fault("PUT", 409, 0, 1);
	run_for(1.2);
	cr_assert_eq(count_of(&ca, "PUT", 409), 1);
	cr_assert(a_leads());
	cr_assert_geq(count_of(&ca, "PUT", 200), 3);
	cr_assert_eq(ca.stopped, 0);
}

/* ---- racing creates --------------------------------------------------- */

Test(leader, racing_creates_elect_exactly_one, .init = setup, .fini = teardown)
{
	struct cand *win, *lose;

	cand_new(&ca, "pod-a", REAL);
	cand_new(&cb, "pod-b", REAL);
	/* both GETs wait 50 ms, so both see 404 and both POST */
	set_fault("GET", 0, 50, -1);
	sampler_start();
	cand_start(&ca);
	cand_start(&cb);
	cr_assert(run_until(either_leads, 2.0));
	run_for(1.0);
	cr_assert_eq(overlaps, 0);
	cr_assert(a_leads() != b_leads(), "not exactly one leader");
	win = a_leads() ? &ca : &cb;
	lose = a_leads() ? &cb : &ca;
	cr_assert_eq(count_of(win, "POST", 201), 1);
	cr_assert_eq(count_of(lose, "POST", 409), 1, "no AlreadyExists");
	cr_assert_eq(count_of(lose, "POST", 201), 0);
	cr_assert_eq(count_of(win, "POST", 409), 0);
	cr_assert_eq(lose->started, 0);
	cr_assert_str_eq(lose->last_leader, ctl_leader_identity(win->l));
	cr_assert_eq(ctl_leader_state(lose->l), CTL_LEADER_CANDIDATE);
}

/* ---- only local clocks ------------------------------------------------ */

Test(leader, foreign_lease_expires_by_local_observation_only, .init = setup,
    .fini = teardown)
{
	struct as_kind *k =
	    as_kind_find(&srv, "coordination.k8s.io", "v1", "leases");
	json_t *l;

	/* renewTime in 2000 and a 1 s duration: expired by its own
	 * timestamps, yet client-go waits LD from its own observation */
	cr_assert_eq(
	    as_internal_create(&srv, k,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, "
			  "s:s, s:s, s:i}}",
		    "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
		    "metadata", "name", LEASE, "namespace", "default", "spec",
		    "holderIdentity", "other", "leaseDurationSeconds", 1,
		    "acquireTime", "2000-01-01T00:00:00.000000Z", "renewTime",
		    "2000-01-01T00:00:00.000000Z", "leaseTransitions", 7),
		"test"),
	    CU_OK);
	cand_new(&ca, "pod-a", FAST);
	cand_start(&ca);
	run_for(0.4);
	cr_assert(!a_leads(), "took a lease it saw less than LD ago");
	cr_assert_str_eq(ca.log, "new(other)");
	cr_assert_str_eq(ctl_leader_holder(ca.l), "other");
	cr_assert_eq(count_of(&ca, "PUT", 200), 0);
	clock_offset += 15 * NS_PER_S;
	cr_assert(run_until(a_leads, 0.5));
	l = lease_get();
	cr_assert_str_eq(spec_s(l, "holderIdentity"), "pod-a");
	cr_assert_eq(spec_i(l, "leaseTransitions"), 8);
	cr_assert_str_neq(
	    spec_s(l, "acquireTime"), "2000-01-01T00:00:00.000000Z");
	json_decref(l);
}

/* An acquisition whose round trip outlasts RenewDeadline (here: the
 * PUT held by the server while the test clock jumps past RD) is not
 * announced: a lease renewed more than RD ago may be someone else's by
 * now, so is_leader is false and on_started (which asserts is_leader)
 * must wait for an attempt that finishes in time. */
Test(leader, acquisition_slower_than_renew_deadline_is_retried_first,
    .init = setup, .fini = teardown)
{
	struct as_kind *k =
	    as_kind_find(&srv, "coordination.k8s.io", "v1", "leases");

	cr_assert_eq(
	    as_internal_create(&srv, k,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, "
			  "s:s, s:s, s:i}}",
		    "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
		    "metadata", "name", LEASE, "namespace", "default", "spec",
		    "holderIdentity", "other", "leaseDurationSeconds", 15,
		    "acquireTime", "2000-01-01T00:00:00.000000Z", "renewTime",
		    "2000-01-01T00:00:00.000000Z", "leaseTransitions", 1),
		"test"),
	    CU_OK);
	cand_new(&ca, "pod-a", FAST);
	cand_start(&ca);
	run_for(0.2); /* "other" observed now: LD from here */
	cr_assert(!a_leads());
	set_fault("PUT", 0, 400, 1);
	clock_offset += 16 * NS_PER_S; /* expired: the next attempt PUTs */
	run_for(0.15);		       /* ... and the server holds it */
	cr_assert_eq(ca.started, 0);
	clock_offset += 11 * NS_PER_S; /* past RD while it is held */
	cr_assert(run_until(a_leads, 3.0));
	cr_assert_eq(ca.started, 1);
	cr_assert_eq(ca.stopped, 0);
	cr_assert_geq(count_of(&ca, "PUT", 200), 2, "taken, then renewed");
}

/* ---- teardown from callbacks ----------------------------------------- */

Test(leader, free_from_inside_callbacks, .init = setup, .fini = teardown)
{
	cand_new(&ca, "pod-a", REAL);
	ca.free_on_start = true;
	cand_start(&ca);
	cr_assert(run_until(a_started, 2.0));
	cr_assert_null(ca.l);
	run_for(0.5); /* nothing may fire on the freed elector */
	cr_assert_eq(requests_of(&ca), 2); /* GET 404, POST */

	cand_new(&cb, "pod-b", FAST);
	cb.free_on_stop = true;
	cand_start(&cb);
	run_for(0.2); /* pod-a's Lease, seen now, expires LD later */
	cr_assert(!b_leads());
	clock_offset += 15 * NS_PER_S;
	cr_assert(run_until(b_leads, 1.0));
	set_fault(NULL, 500, 0, -1);
	run_for(0.2); /* a failing renew cycle is under way */
	clock_offset += 11 * NS_PER_S;
	cr_assert(run_until(b_stopped, 3.0));
	run_for(0.3);
	cr_assert_eq(cb.stopped, 1);
	cr_assert_null(cb.l);
}

Test(leader, release_from_on_started_leading, .init = setup, .fini = teardown)
{
	json_t *l;

	cand_new(&ca, "pod-a", REAL);
	ca.release_on_start = true;
	cand_start(&ca);
	cr_assert(run_until(a_done, 2.0));
	cr_assert_str_eq(ca.log, "new(pod-a) start stop done(CU_OK)");
	l = lease_get();
	cr_assert_str_eq(spec_s(l, "holderIdentity"), "");
	json_decref(l);
}
