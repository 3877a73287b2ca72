/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_crash_test.c - store/: decisions survive SIGKILL.
 *
 * A forked child runs loop turns against a real ledger file: begin, put a
 * few decisions it never touches again ("kept"), churn a small set of
 * other decisions (replace, release, delete: the usage bookkeeping paths),
 * commit, and only then report the kept decisions' sequence numbers
 * through a pipe - exactly the controller's "commit, then announce"
 * order. The parent SIGKILLs it at a random moment (during open and
 * recovery, mid-transaction, mid-commit), reopens the ledger and checks
 * that it is consistent and that every reported sequence number is
 * present. Then it does it again on the same file, 60 times.
 *
 * Kill times are relative to how long the child needs to its first commit
 * (measured in round 0), so the test means the same under ASan, valgrind
 * or a fast release build: kills land before, during and after commits.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

#define ROUNDS 60
/* Calibration: round 0 waits this long at most for the first commit. */
#define FIRST_COMMIT_MAX_MS 20000
#define CHURN_UIDS 12

TestSuite(store_crash, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int rnd(int n)
{
	return (int)(rng() % (uint64_t)n);
}

static const store_resource res_small[] = {
    {.resource = "cpu", .flavor = "on-demand", .milli = 500},
    {.resource = "memory", .flavor = "on-demand", .milli = 1024000},
};
static const store_resource res_big[] = {
    {.resource = "cpu", .flavor = "spot", .milli = 8000},
    {.resource = "nvidia.com/gpu", .flavor = "a100", .milli = 2000},
};
static const store_podset ps_small[] = {{"main", 1, 2, res_small, NULL}};
static const store_podset ps_big[] = {
    {"driver", 1, 2, res_small, NULL},
    {"workers", 4, 2, res_big, NULL},
};

static store_decision crash_dec(const char *uid, enum store_state st, int64_t t)
{
	store_decision d = {
	    .uid = uid,
	    .ns = "batch",
	    .name = uid,
	    .cluster_queue = (t & 1) ? "cq-a" : "cq-b",
	    .state = st,
	    .decided_ns = t,
	    .n_podsets = (t & 2) ? 2 : 1,
	    .podsets = (t & 2) ? ps_big : ps_small,
	};
	return d;
}

/* What the child announces after each commit. 16 bytes, so one write()
 * to a pipe is atomic (<= PIPE_BUF): a kill never leaves half a record. */
struct report {
	int64_t seq;
	int32_t turn;
	int32_t idx;
};

static void kept_uid(char *buf, size_t len, int round, int turn, int idx)
{
	snprintf(buf, len, "kept-%d-%d-%d", round, turn, idx);
}

/* Child: never returns; every failure is a distinct exit code. If the
 * parent dies (a failed assertion), the next report hits a pipe without a
 * reader and SIGPIPE ends the child, so it never outlives the test. */
static void child_loop(int wfd, int round)
{
	cu_error err;
	store *s = NULL;
	char uid[64];

	rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(round + 1) * 7919;
	if (store_open(&s, fx_tpath, &err) != CU_OK)
		_exit(3);
	for (int32_t turn = 0;; turn++) {
		struct report rep[8];
		int nkept = 1 + rnd(4);

		if (store_begin(s, &err) != CU_OK)
			_exit(4);
		for (int i = 0; i < nkept; i++) {
			store_decision d;

			kept_uid(uid, sizeof(uid), round, turn, i);
			d = crash_dec(uid,
			    rnd(2) ? STORE_RESERVED : STORE_ADMITTED, turn + i);
			rep[i].turn = turn;
			rep[i].idx = i;
			if (store_decision_put(s, &d, &rep[i].seq, &err) !=
			    CU_OK)
				_exit(5);
		}
		for (int i = rnd(4); i > 0; i--) {
			int op = rnd(3);
			int rc;

			snprintf(uid, sizeof(uid), "churn-%d", rnd(CHURN_UIDS));
			if (op == 0) {
				store_decision d = crash_dec(
				    uid, (enum store_state)rnd(4), turn + i);

				rc = store_decision_put(s, &d, NULL, &err);
			} else if (op == 1) {
				rc = store_decision_set_state(s, uid,
				    (enum store_state)(1 + rnd(3)), turn, &err);
			} else {
				rc = store_decision_delete(s, uid, &err);
			}
			if (rc != CU_OK && rc != CU_ENOTFOUND &&
			    rc != CU_ECONFLICT)
				_exit(6);
		}
		if (store_commit(s, &err) != CU_OK)
			_exit(7);
		/* Announce only what is committed. */
		for (int i = 0; i < nkept; i++)
			if (write(wfd, &rep[i], sizeof(rep[i])) !=
			    (ssize_t)sizeof(rep[i]))
				_exit(8);
	}
}

struct reported {
	struct {
		int64_t seq;
		int round, turn, idx;
	} * v;
	size_t n, cap;
};

static void reported_add(struct reported *q, int round, const struct report *r)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		void *v = cu_realloc(q->v, cap * sizeof(*q->v));

		cr_assert_not_null(v);
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n].seq = r->seq;
	q->v[q->n].round = round;
	q->v[q->n].turn = r->turn;
	q->v[q->n].idx = r->idx;
	q->n++;
}

/* Read whole records from fd until the deadline (or EOF if < 0), or
 * until q holds `until` of them. */
static void read_reports(
    int fd, struct reported *q, int round, int64_t deadline_ns, size_t until)
{
	struct report buf[32];
	size_t have = 0; /* bytes in buf */

	while (q->n < until || have > 0) {
		ssize_t r;

		if (deadline_ns >= 0) {
			int64_t left = deadline_ns - cu_time_mono_ns();
			struct pollfd p = {.fd = fd, .events = POLLIN};

			if (left <= 0)
				break;
			if (poll(&p, 1, (int)(left / 1000000) + 1) <= 0)
				continue;
		}
		r = read(fd, (char *)buf + have, sizeof(buf) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		for (size_t i = 0; i < have / sizeof(buf[0]); i++)
			reported_add(q, round, &buf[i]);
		/* Writes are atomic, so a partial record can only be the
		 * tail of this read, completed by the next one. */
		memmove(buf,
		    (char *)buf + have / sizeof(buf[0]) * sizeof(buf[0]),
		    have % sizeof(buf[0]));
		have %= sizeof(buf[0]);
	}
	cr_assert_eq(have, 0, "torn record in the pipe");
}

struct uids {
	char **v;
	size_t n, cap;
};

/* Every live decision, through the restart path: with no API views,
 * store_reconcile reports each live decision as an orphan. */
static int collect_uid(const char *uid, enum store_recon what, void *payload)
{
	struct uids *u = payload;

	if (what != STORE_RECON_UNANNOUNCED && what != STORE_RECON_STALE)
		return -1;
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 256;
		char **v = cu_realloc(u->v, cap * sizeof(*v));

		if (v == NULL)
			return -2;
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n] = cu_strdup(uid);
	return u->v[u->n++] == NULL ? -2 : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void verify(const struct reported *q, size_t first_new, int round)
{
	struct uids live = {0};
	cu_error err = {0};
	int64_t last = 0;
	char uid[64];
	const char *key = uid;
	store *s = NULL;

	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_OK, "round %d: %s",
	    round, err.msg);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "round %d: %s",
	    round, err.msg);
	cr_assert_eq(store_reconcile(s, NULL, 0, collect_uid, &live, &err),
	    CU_OK, "round %d: %s", round, err.msg);
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	if (live.n > 0)
		qsort(live.v, live.n, sizeof(*live.v), cmp_str);
	for (size_t i = 0; i < q->n; i++) {
		kept_uid(
		    uid, sizeof(uid), q->v[i].round, q->v[i].turn, q->v[i].idx);
		cr_assert(live.n > 0 && bsearch(&key, live.v, live.n,
					    sizeof(*live.v), cmp_str) != NULL,
		    "round %d: committed %s (seq %lld) lost", round, uid,
		    (long long)q->v[i].seq);
		cr_assert_leq(q->v[i].seq, last);
	}
	/* The newly announced ones carry the sequence number announced. */
	for (size_t i = first_new; i < q->n; i++) {
		store_decision *d = NULL;

		kept_uid(
		    uid, sizeof(uid), q->v[i].round, q->v[i].turn, q->v[i].idx);
		cr_assert_eq(store_decision_get(s, uid, &d, &err), CU_OK,
		    "%s: %s", uid, err.msg);
		cr_assert_eq(d->seq, q->v[i].seq, "%s", uid);
		store_decision_free(d);
	}
	store_close(s);
	for (size_t i = 0; i < live.n; i++)
		cu_free(live.v[i]);
	cu_free(live.v);
}

/* ~5 s under ASan; several minutes under valgrind, where every round
 * waits proportionally longer (hence the generous timeout). */
Test(store_crash, committed_decisions_survive_sigkill, .timeout = 600)
{
	struct reported reported = {0};
	int rounds_with_commits = 0;
	int64_t span_ms = 0; /* fork to first commit, from round 0 */

	rng_state = 0xc0ffee1234abcdefULL;
	for (int round = 0; round < ROUNDS; round++) {
		size_t before = reported.n;
		int64_t t0 = cu_time_mono_ns();
		int fds[2], status = 0;
		pid_t pid;

		cr_assert_eq(pipe(fds), 0);
		pid = fork();
		cr_assert_geq(pid, 0, "fork");
		if (pid == 0) {
			close(fds[0]);
			child_loop(fds[1], round);
		}
		close(fds[1]);
		if (round == 0) {
			read_reports(fds[0], &reported, round,
			    t0 + (int64_t)FIRST_COMMIT_MAX_MS * 1000000, 1);
			cr_assert_gt(reported.n, 0, "no commit in %d ms",
			    FIRST_COMMIT_MAX_MS);
			span_ms = (cu_time_mono_ns() - t0) / 1000000 + 1;
		} else {
			int64_t delay_ms = rnd((int)(3 * span_ms) + 1);

			read_reports(fds[0], &reported, round,
			    t0 + delay_ms * 1000000, SIZE_MAX);
		}
		cr_assert_eq(kill(pid, SIGKILL), 0);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "round %d: child ended on its own (exit %d)", round,
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		read_reports(fds[0], &reported, round, -1, SIZE_MAX);
		close(fds[0]);
		rounds_with_commits += reported.n > before;
		verify(&reported, before, round);
	}
	cr_log_info("%zu committed decisions reported, %d/%d rounds with "
		    "commits, first commit after %lld ms",
	    reported.n, rounds_with_commits, ROUNDS, (long long)span_ms);
	/* The kills must have hit both before and after commits. */
	cr_assert_gt(
	    rounds_with_commits, ROUNDS / 4, "%d", rounds_with_commits);
	cr_assert_lt(rounds_with_commits, ROUNDS, "no kill before a commit");
	cu_free(reported.v);
}
