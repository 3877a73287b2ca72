/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures_api.c - the api/ tests' fixtures (see fixtures.h):
 * the project's API server in-process on a fresh libev loop, a client to
 * it, a scratch directory, and requests answered by running the loop.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cu.h"
#include "tests/unit/fixtures.h"

struct ev_loop *fx_loop;
struct as_server fx_srv;
struct as_tls_material fx_tls;
api_client *fx_cl;
char fx_tmpdir[64];
char fx_url[128];

void fx_result_dispose(struct fx_result *r)
{
	json_decref(r->body);
	cu_free(r->lines);
	memset(r, 0, sizeof(*r));
}

void fx_on_resp(const struct api_response *resp, void *payload)
{
	struct fx_result *r = payload;

	cr_assert(!r->done, "callback ran twice");
	r->done = true;
	r->code = resp->code;
	r->err = resp->err;
	r->attempts = resp->attempts;
	r->canceled = resp->canceled;
	r->body = json_incref(resp->body);
	snprintf(r->reason, sizeof(r->reason), "%s", resp->reason);
	snprintf(r->msg, sizeof(r->msg), "%s", resp->message);
}

void fx_on_deadline(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)revents;
	*(bool *)w->data = true;
}

bool fx_run_until(bool *flag, double seconds)
{
	bool expired = false;
	ev_timer t;

	ev_timer_init(&t, fx_on_deadline, seconds, 0.0);
	t.data = &expired;
	ev_timer_start(fx_loop, &t);
	while (!*flag && !expired)
		ev_run(fx_loop, EVRUN_ONCE);
	ev_timer_stop(fx_loop, &t);
	return *flag;
}

void fx_run_for(double seconds)
{
	bool never = false;

	fx_run_until(&never, seconds);
}

void fx_server_start(bool with_tls)
{
	cu_error err;

	fx_loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(fx_loop);
	memset(&fx_tls, 0, sizeof(fx_tls));
	cr_assert_eq(as_fixture_start(&fx_srv, fx_loop, FX_TOKEN,
			 with_tls ? &fx_tls : NULL, &err),
	    CU_OK, "%s", err.msg);
	snprintf(fx_url, sizeof(fx_url), "%s://127.0.0.1:%u",
	    with_tls ? "https" : "http", (unsigned)fx_srv.port);
	snprintf(fx_tmpdir, sizeof(fx_tmpdir), "/tmp/cueue_api_test.XXXXXX");
	cr_assert_not_null(mkdtemp(fx_tmpdir));
}

void fx_client_start(struct api_client_opts *o)
{
	cu_error err;

	if (o->server == NULL)
		o->server = fx_url;
	if (o->token == NULL && o->token_file == NULL)
		o->token = FX_TOKEN;
	if (o->retry_base_ms == 0)
		o->retry_base_ms = 50;
	cr_assert_eq(
	    api_client_new(&fx_cl, fx_loop, o, &err), CU_OK, "%s", err.msg);
}

void fx_remove_tmpdir(void)
{
	DIR *d = opendir(fx_tmpdir);
	struct dirent *de;
	char path[512];

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", fx_tmpdir, de->d_name);
		cr_assert_eq(unlink(path), 0, "%s", path);
	}
	closedir(d);
	cr_assert_eq(rmdir(fx_tmpdir), 0);
}

void fx_setup(void)
{
	struct api_client_opts o;

	fx_server_start(false);
	memset(&o, 0, sizeof(o));
	fx_client_start(&o);
}

void fx_setup_server_only(void)
{
	fx_server_start(false);
}

void fx_teardown(void)
{
	api_client_free(fx_cl);
	fx_cl = NULL;
	as_fixture_stop(&fx_srv);
	as_tls_material_dispose(&fx_tls);
	ev_loop_destroy(fx_loop);
	fx_loop = NULL;
	fx_remove_tmpdir();
}

void fx_send_nowait(struct fx_result *r, const char *method, const char *path,
    const char *ctype, json_t *body)
{
	cu_error err;

	memset(r, 0, sizeof(*r));
	cr_assert_eq(api_request(NULL, fx_cl, method, path, ctype, body,
			 fx_on_resp, r, &err),
	    CU_OK, "%s", err.msg);
	json_decref(body);
	cr_assert(!r->done, "callback ran inside api_request");
}

void fx_call(struct fx_result *r, const char *method, const char *path,
    const char *ctype, json_t *body)
{
	fx_send_nowait(r, method, path, ctype, body);
	cr_assert(
	    fx_run_until(&r->done, 20.0), "%s %s: no answer", method, path);
}

json_t *fx_configmap(const char *name, const char *value)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
	    "v1", "kind", "ConfigMap", "metadata", "name", name, "namespace",
	    "default", "data", "k", value);
}

void fx_faults(const char *rules_json)
{
	struct fx_result r;
	json_t *body = json_loads(rules_json, 0, NULL);

	cr_assert_not_null(body, "bad rules JSON");
	fx_call(&r, "POST", "/__test/faults", NULL, body);
	cr_assert_eq(r.code, 200, "faults: %d %s", r.code, r.msg);
	fx_result_dispose(&r);
}
