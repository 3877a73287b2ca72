/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/fixture.c - an in-process cueue-apiserver for unit tests
 * of the code that talks to it (API client, informers, leader election):
 * a real HTTP(S) listener on 127.0.0.1 driven by the test's own libev loop,
 * with the /__test/ endpoints on, one admin token and the default
 * namespace.
 */
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"
#include "tests/apiserver/tls.h"

void as_testapi_free(struct as_server *srv);

int as_fixture_start(struct as_server *srv, struct ev_loop *loop,
    const char *token, struct as_tls_material *tls, cu_error *err)
{
	struct as_kind *k;
	int rc;

	memset(srv, 0, sizeof(*srv));
	srv->history = 10000;
	srv->bookmark_ms = 60000;
	srv->sim_tick_ms = 100;
	srv->rand_state = 42;
	srv->test_endpoints = true;
	srv->loop = loop;
	srv->listen_host = cu_strdup("127.0.0.1");
	srv->access_log = json_array();
	srv->writes_by_user = json_object();
	srv->tokens = cu_calloc(1, sizeof(*srv->tokens));
	if (srv->listen_host == NULL || srv->access_log == NULL ||
	    srv->writes_by_user == NULL || srv->tokens == NULL) {
		as_fixture_stop(srv);
		return cu_error_set(err, CU_ENOMEM, "fixture: out of memory");
	}
	srv->tokens[0].token = cu_strdup(token);
	srv->tokens[0].user = cu_strdup("admin");
	srv->tokens[0].groups = cu_strdup("system:masters");
	srv->ntokens = 1;
	rc = as_kinds_init(srv, err);
	if (rc == CU_OK && tls != NULL) {
		rc = as_tls_generate(tls, NULL, false, err);
		srv->tls = true;
		srv->cert_pem = tls->cert_pem;
		srv->key_pem = tls->key_pem;
		srv->ca_pem = tls->ca_cert_pem;
	}
	if (rc == CU_OK) {
		k = as_kind_find(srv, "", "v1", "namespaces");
		rc = as_internal_create(srv, k,
		    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
			"Namespace", "metadata", "name", "default"),
		    "fixture");
	}
	if (rc == CU_OK)
		rc = as_http_start(srv, err);
	if (rc != CU_OK)
		as_fixture_stop(srv);
	return rc;
}

void as_fixture_stop(struct as_server *srv)
{
	size_t i;

	as_http_stop(srv);
	as_kinds_free(srv);
	as_testapi_free(srv);
	for (i = 0; i < srv->ntokens; i++) {
		cu_free(srv->tokens[i].token);
		cu_free(srv->tokens[i].user);
		cu_free(srv->tokens[i].groups);
	}
	cu_free(srv->tokens);
	srv->tokens = NULL;
	srv->ntokens = 0;
	json_decref(srv->access_log);
	srv->access_log = NULL;
	json_decref(srv->writes_by_user);
	srv->writes_by_user = NULL;
	cu_free(srv->listen_host);
	srv->listen_host = NULL;
}
