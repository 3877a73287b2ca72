/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_certrot_test.c - controller/certrot's files in
 * webhook.certDir, after one real pass against the in-process API server
 * (tests/apiserver fixture: the Secret is created, the webhook
 * configurations are absent and skipped): ca.crt, tls.crt and tls.key are
 * regular files of mode 0600 even under umask 0, and a stale temporary
 * file left where certrot writes - a symlink to a file elsewhere, a
 * dangling symlink, a world-readable leftover - is never followed or
 * reused: its target is untouched and no temporary file remains.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

#include "api/client.h"
#include "controller/certrot.h"
#include "tests/apiserver/apiserver.h"

#define TOKEN "certrot-token"
#define VICTIM_TEXT "not a key: must stay as it is\n"

static const char *const FILES[] = {"ca.crt", "tls.crt", "tls.key"};
#define N_FILES (sizeof(FILES) / sizeof(FILES[0]))

static char dir[64];

static char *in_dir(const char *name)
{
	char *p = cu_asprintf("%s/%s", dir, name);

	cr_assert_not_null(p);
	return p;
}

static void write_text(const char *name, const char *text, mode_t mode)
{
	char *p = in_dir(name);
	FILE *f = fopen(p, "w");

	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(p, mode), 0);
	cu_free(p);
}

static void make_symlink(const char *target, const char *name)
{
	char *t = in_dir(target), *p = in_dir(name);

	cr_assert_eq(symlink(t, p), 0, "%s -> %s: %s", p, t, strerror(errno));
	cu_free(t);
	cu_free(p);
}

/* Whole file [owned: cu_free], or NULL when it cannot be read. */
static char *slurp(const char *name)
{
	char *p = in_dir(name), *out = NULL;
	FILE *f = fopen(p, "rb");
	cu_buf b;
	char chunk[4096];
	size_t n;

	cu_free(p);
	if (f == NULL)
		return NULL;
	cu_buf_init(&b, 1024 * 1024);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		cr_assert_eq(cu_buf_add(&b, chunk, n), CU_OK);
	fclose(f);
	out = cu_buf_detach(&b, NULL);
	cr_assert_not_null(out);
	return out;
}

static bool lexists(const char *name)
{
	char *p = in_dir(name);
	struct stat st;
	bool e = lstat(p, &st) == 0;

	cu_free(p);
	return e;
}

static void on_deadline(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)revents;
	*(bool *)w->data = true;
}

/* One certrot pass into dir, under `mask`; returns when it completed. */
static void run_pass(mode_t mask)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct as_server srv;
	struct api_client_opts co;
	struct ctl_certrot_opts ro;
	api_client *client = NULL;
	ctl_certrot *rot = NULL;
	bool expired = false;
	ev_timer deadline;
	mode_t old;
	cu_error err;
	char url[64];

	cr_assert_not_null(loop);
	cr_assert_eq(as_fixture_start(&srv, loop, TOKEN, NULL, &err), CU_OK,
	    "%s", err.msg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)srv.port);
	memset(&co, 0, sizeof(co));
	co.server = url;
	co.token = TOKEN;
	cr_assert_eq(
	    api_client_new(&client, loop, &co, &err), CU_OK, "%s", err.msg);
	memset(&ro, 0, sizeof(ro));
	ro.client = client;
	ro.namespace_ = "default";
	ro.secret_name = "cueue-webhook-server-cert";
	ro.service_name = "cueue-webhook-service";
	ro.cert_dir = dir;
	cr_assert_eq(
	    ctl_certrot_new(&rot, loop, &ro, &err), CU_OK, "%s", err.msg);

	old = umask(mask);
	ctl_certrot_run(rot);
	ev_timer_init(&deadline, on_deadline, 30.0, 0.0);
	deadline.data = &expired;
	ev_timer_start(loop, &deadline);
	while (ctl_certrot_passes(rot) == 0 && !expired)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &deadline);
	umask(old);

	cr_assert_eq(ctl_certrot_passes(rot), 1, "the pass did not complete");
	ctl_certrot_free(rot);
	api_client_free(client);
	as_fixture_stop(&srv);
	ev_loop_destroy(loop);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/certrot_test.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

/* dir holds plain files and symlinks only. */
static void teardown(void)
{
	static const char *const names[] = {"ca.crt", "tls.crt", "tls.key",
	    ".ca.crt.tmp", ".tls.crt.tmp", ".tls.key.tmp", "victim",
	    "dangling"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *p = in_dir(names[i]);

		unlink(p);
		cu_free(p);
	}
	cr_assert_eq(rmdir(dir), 0, "%s: %s", dir, strerror(errno));
}

/* The written files: regular, mode 0600, PEM of the expected kind. */
static void expect_files(void)
{
	size_t i;

	for (i = 0; i < N_FILES; i++) {
		char *p = in_dir(FILES[i]), *text;
		struct stat st;

		cr_assert_eq(lstat(p, &st), 0, "%s missing", p);
		cr_expect(S_ISREG(st.st_mode), "%s is not a regular file", p);
		cr_expect_eq(st.st_mode & 07777, 0600, "%s has mode %04o", p,
		    (unsigned)(st.st_mode & 07777));
		cu_free(p);
		text = slurp(FILES[i]);
		cr_assert_not_null(text);
		cr_expect_not_null(
		    strstr(text,
			i == 2 ? "PRIVATE KEY-----" : "BEGIN CERTIFICATE-----"),
		    "%s: %.40s", FILES[i], text);
		cu_free(text);
	}
}

Test(ctl_certrot, files_are_0600_even_with_umask_0, .init = setup,
    .fini = teardown, .timeout = 60)
{
	run_pass(0);
	expect_files();
}

Test(ctl_certrot, stale_temporary_files_are_not_followed, .init = setup,
    .fini = teardown, .timeout = 60)
{
	char *text;
	size_t i;

	/* Where the key goes first: a symlink to a file the process may
	 * write; then a dangling one; then a leftover readable by all. */
	write_text("victim", VICTIM_TEXT, 0644);
	make_symlink("victim", ".tls.key.tmp");
	make_symlink("dangling", ".ca.crt.tmp");
	write_text(".tls.crt.tmp", "half a certificate from a crash", 0644);

	run_pass(0);

	expect_files();
	text = slurp("victim");
	cr_assert_not_null(text);
	cr_expect_str_eq(text, VICTIM_TEXT, "the symlink's target was written");
	cu_free(text);
	cr_expect(!lexists("dangling"), "the dangling symlink was followed");
	for (i = 0; i < N_FILES; i++) {
		char *tmp = cu_asprintf(".%s.tmp", FILES[i]);

		cr_assert_not_null(tmp);
		cr_expect(!lexists(tmp), "%s left behind", tmp);
		cu_free(tmp);
	}
}
