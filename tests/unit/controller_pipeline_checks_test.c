/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_pipeline_checks_test.c - the write that admits a
 * Workload once its admission checks are Ready (a Workload status write,
 * CTL_PIPE_WL_STATUS) announces a decision: the turn's ledger transaction
 * is committed before it leaves the process. Observed from a second
 * connection to the same ledger file at the moment the write is sent (its
 * settle hook, called synchronously when the send itself fails), so the
 * ordering is checked, not the end state.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/pipeline.h"

static const struct api_resource WL = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};

static char path[256];
static int settled;
static bool visible_at_send;

/* Is uid committed: visible from another connection? */
static bool committed(const char *uid)
{
	store *other = NULL;
	store_decision *d = NULL;
	cu_error err;
	bool found;

	cr_assert_eq(store_open(&other, path, &err), CU_OK, "%s", err.msg);
	found = store_decision_get(other, uid, &d, &err) == CU_OK;
	store_decision_free(d);
	store_close(other);
	return found;
}

static void settle(const struct ctl_pipe_write *w,
    enum ctl_pipe_outcome outcome, const struct api_response *resp,
    void *payload)
{
	(void)resp;
	(void)payload;
	cr_assert_eq(w->kind, CTL_PIPE_WL_STATUS);
	cr_assert_eq(outcome, CTL_PIPE_SEND_FAILED);
	settled++;
	visible_at_send = committed("uid-checks");
}

static void no_mark(const char *const *key, void *payload)
{
	(void)key;
	(void)payload;
}

static api_informer *no_informer(const char *const *key, void *payload)
{
	(void)key;
	(void)payload;
	return NULL;
}

static void no_drained(void *payload)
{
	(void)payload;
}

Test(pipeline_checks, admitted_after_checks_is_committed_before_sent)
{
	struct ctl_pipe_opts o;
	store_resource r = {"cpu", "default", 1000};
	store_podset ps = {"main", 1, 1, &r, NULL};
	store_decision sd;
	store *ledger = NULL;
	ctl_pipe *p = NULL;
	cu_error err;

	snprintf(path, sizeof(path), "/tmp/cueue-pipe-checks-%ld.db",
	    (long)getpid());
	unlink(path);
	cr_assert_eq(store_open(&ledger, path, &err), CU_OK, "%s", err.msg);
	memset(&o, 0, sizeof(o));
	o.ledger = ledger;
	o.qps = 50;
	o.hooks.settle = settle;
	o.hooks.mark = no_mark;
	o.hooks.informer = no_informer;
	o.hooks.drained = no_drained;
	cr_assert_eq(ctl_pipe_new(&p, &o, &err), CU_OK, "%s", err.msg);
	/* A first turn commits: the next one is within the lazy window, so
	 * only an announcing write commits before sending. */
	cr_assert_eq(ctl_pipe_begin(p), CU_OK);
	ctl_pipe_flush(p);
	cr_assert_eq(ctl_pipe_begin(p), CU_OK);
	memset(&sd, 0, sizeof(sd));
	sd.uid = "uid-checks";
	sd.ns = "team";
	sd.name = "wl";
	sd.cluster_queue = "cq";
	sd.state = STORE_ADMITTED;
	sd.n_podsets = 1;
	sd.podsets = &ps;
	cr_assert_eq(
	    store_decision_put(ledger, &sd, NULL, &err), CU_OK, "%s", err.msg);
	/* The Admitted=True write, as an array (not a merge patch: its send
	 * fails at once, before any client is used, and settle runs inside
	 * the flush). */
	cr_assert_not_null(
	    ctl_pipe_queue(p, CTL_PIPE_WL_STATUS, &WL, "team", "wl", NULL,
		json_pack("[{s:{s:[{s:s, s:s}]}}]", "status", "conditions",
		    "type", "Admitted", "status", "True")));
	ctl_pipe_flush(p);
	cr_assert_eq(settled, 1);
	cr_assert(visible_at_send,
	    "the ledger was committed before the write was sent");
	ctl_pipe_free(p);
	store_close(ledger);
	unlink(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "-wal");
	unlink(path);
	path[strlen(path) - 4] = '\0';
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "-shm");
	unlink(path);
}
