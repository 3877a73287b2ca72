/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_certrot_bundle_test.c - controller/certrot's
 * caBundle across a rotation, against the in-process API server with both
 * webhook configurations installed: while webhook.certDir still holds the
 * old pair (on a cluster, the kubelet has not refreshed the Secret's
 * mount yet, so the pod serves the old certificate) the bundle trusts the
 * new CA and the old one; the next pass, with the new pair in place,
 * trusts the new CA alone. A first installation (nothing in certDir)
 * trusts the one CA. The CA goes into the conversion webhook of cueue's
 * CRDs too (by name), and into no CRD whose strategy is not Webhook.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "api/json.h"
#include "api/client.h"
#include "controller/certrot.h"
#include "controller/certs.h"
#include "tests/apiserver/apiserver.h"

#define TOKEN "certrot-bundle-token"
#define NS "default" /* exists in the fixture */
#define SECRET "cueue-webhook-server-cert"

static const struct api_resource MUTATING = {"admissionregistration.k8s.io",
    "v1", "mutatingwebhookconfigurations", false};
static const struct api_resource VALIDATING = {"admissionregistration.k8s.io",
    "v1", "validatingwebhookconfigurations", false};
static const struct api_resource SECRETS = {"", "v1", "secrets", true};
static const struct api_resource CRDS = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", false};

static struct ev_loop *loop;
static struct as_server srv;
static api_client *client;
static ctl_certrot *rot;
static char dir[64];

struct call {
	bool done;
	int err;
	json_t *body;
};

static void on_resp(const struct api_response *resp, void *payload)
{
	struct call *c = payload;

	c->done = true;
	c->err = resp->err;
	c->body = json_incref(resp->body);
}

static void on_deadline(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)revents;
	*(bool *)w->data = true;
}

/* Run the loop until *done (done NULL: until `want` passes completed),
 * or 30 s. */
static void wait_done(const bool *done, unsigned want)
{
	bool expired = false;
	ev_timer deadline;

	ev_timer_init(&deadline, on_deadline, 30.0, 0.0);
	deadline.data = &expired;
	ev_timer_start(loop, &deadline);
	while (!expired &&
	       (done != NULL ? !*done : ctl_certrot_passes(rot) < want))
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &deadline);
	cr_assert(!expired, "timed out");
}

static json_t *get(
    const struct api_resource *res, const char *ns, const char *name)
{
	struct call c = {false, 0, NULL};
	api_req *req;
	cu_error err;

	cr_assert_eq(api_get(&req, client, res, ns, name, on_resp, &c, &err),
	    CU_OK, "%s", err.msg);
	wait_done(&c.done, 0);
	cr_assert_eq(c.err, CU_OK, "GET %s", name);
	return c.body;
}

static void create_config(
    const struct api_resource *res, const char *kind, const char *name)
{
	struct call c = {false, 0, NULL};
	api_req *req;
	cu_error err;
	json_t *obj = json_pack(
	    "{s:s, s:s, s:{s:s}, s:[{s:s, s:[s], s:s, s:s, "
	    "s:{s:{s:s, s:s, s:s, s:i}}, s:[{s:[s], s:[s], s:[s], s:[s]}]}]}",
	    "apiVersion", "admissionregistration.k8s.io/v1", "kind", kind,
	    "metadata", "name", name, "webhooks", "name", "x.cueue.dev",
	    "admissionReviewVersions", "v1", "sideEffects", "None",
	    "failurePolicy", "Ignore", "clientConfig", "service", "name",
	    "cueue-webhook-service", "namespace", NS, "path", "/x", "port", 443,
	    "rules", "operations", "CREATE", "apiGroups", "example.com",
	    "apiVersions", "v1", "resources", "nothings");

	cr_assert_not_null(obj);
	cr_assert_eq(
	    api_create(&req, client, res, NULL, obj, on_resp, &c, &err), CU_OK,
	    "%s", err.msg);
	json_decref(obj);
	wait_done(&c.done, 0);
	cr_assert_eq(c.err, CU_OK, "create %s", name);
	json_decref(c.body);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert(fputs(text, f) >= 0);
	cr_assert_eq(fclose(f), 0);
}

/* base64-decoded data[key] of a Secret, or caBundle of every webhook of a
 * configuration (asserted equal), [owned: cu_free]. */
static char *decoded(const char *b64)
{
	char *out = NULL;
	size_t n;

	cr_assert_not_null(b64);
	cr_assert_eq(api_base64_decode(b64, &out, &n, NULL), CU_OK);
	return out;
}

static char *bundle(const struct api_resource *res, const char *name)
{
	json_t *cfg = get(res, NULL, name), *w;
	const char *first = NULL;
	char *out;
	size_t i;

	json_array_foreach(json_object_get(cfg, "webhooks"), i, w)
	{
		const char *b = json_string_value(json_object_get(
		    json_object_get(w, "clientConfig"), "caBundle"));

		cr_assert_not_null(b, "%s: no caBundle", name);
		if (first == NULL)
			first = b;
		cr_assert_str_eq(b, first);
	}
	out = decoded(first);
	json_decref(cfg);
	return out;
}

static char *secret_ca(void)
{
	json_t *s = get(&SECRETS, NS, SECRET);
	char *ca = decoded(json_string_value(
	    json_object_get(json_object_get(s, "data"), "ca.crt")));

	json_decref(s);
	return ca;
}

static cu_ns_t grace_ns = 1;

static void setup(void)
{
	struct api_client_opts co;
	struct ctl_certrot_opts ro;
	cu_error err;
	char url[64];

	snprintf(dir, sizeof(dir), "/tmp/certrot_bundle.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(loop);
	cr_assert_eq(as_fixture_start(&srv, loop, TOKEN, NULL, &err), CU_OK,
	    "%s", err.msg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)srv.port);
	memset(&co, 0, sizeof(co));
	co.server = url;
	co.token = TOKEN;
	cr_assert_eq(
	    api_client_new(&client, loop, &co, &err), CU_OK, "%s", err.msg);
	create_config(
	    &MUTATING, "MutatingWebhookConfiguration", CTL_CERTROT_MUTATING);
	create_config(&VALIDATING, "ValidatingWebhookConfiguration",
	    CTL_CERTROT_VALIDATING);
	memset(&ro, 0, sizeof(ro));
	ro.client = client;
	ro.namespace_ = NS;
	ro.secret_name = SECRET;
	ro.service_name = "cueue-webhook-service";
	ro.cert_dir = dir;
	/* The replaced pair's CA is dropped at the next pass (the grace
	 * after writing a new pair has its own test). */
	ro.grace_ns = grace_ns;
	cr_assert_eq(
	    ctl_certrot_new(&rot, loop, &ro, &err), CU_OK, "%s", err.msg);
}

static void teardown(void)
{
	static const char *const names[] = {"ca.crt", "tls.crt", "tls.key"};
	char path[128];
	size_t i;

	ctl_certrot_free(rot);
	api_client_free(client);
	as_fixture_stop(&srv);
	ev_loop_destroy(loop);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	cr_assert_eq(rmdir(dir), 0, "%s: %s", dir, strerror(errno));
}

Test(ctl_certrot_bundle, old_ca_trusted_until_the_new_pair_is_in_place,
    .init = setup, .fini = teardown, .timeout = 90)
{
	const char *const dns[] = {"cueue-webhook-service.default.svc"};
	struct ctl_certs_request q;
	struct ctl_certs old;
	char *ca, *mb, *vb;
	cu_error err;

	/* The pair being served: another CA's, not in the Secret (there is
	 * no Secret yet, so the pass mints and stores a new set). */
	memset(&q, 0, sizeof(q));
	q.dns_names = dns;
	q.n_dns_names = 1;
	cr_assert_eq(ctl_certs_generate(&q, &old, &err), CU_OK, "%s", err.msg);
	write_file("ca.crt", old.ca_cert_pem);
	write_file("tls.crt", old.cert_pem);
	write_file("tls.key", old.key_pem);

	ctl_certrot_run(rot);
	wait_done(NULL, 1);
	ca = secret_ca();
	cr_assert_str_neq(ca, old.ca_cert_pem, "a new CA was minted");
	mb = bundle(&MUTATING, CTL_CERTROT_MUTATING);
	vb = bundle(&VALIDATING, CTL_CERTROT_VALIDATING);
	cr_assert_str_eq(mb, vb);
	cr_expect(strstr(mb, ca) == mb, "the new CA first:\n%s", mb);
	cr_expect(strstr(mb, old.ca_cert_pem) != NULL,
	    "the served pair's CA is still trusted:\n%s", mb);
	cu_free(mb);
	cu_free(vb);

	/* The pass wrote the new pair into certDir (on a cluster: the
	 * kubelet refreshed the mount): the next pass drops the old CA. */
	ctl_certrot_run(rot);
	wait_done(NULL, 2);
	mb = bundle(&MUTATING, CTL_CERTROT_MUTATING);
	vb = bundle(&VALIDATING, CTL_CERTROT_VALIDATING);
	cr_expect_str_eq(mb, ca, "only the new CA once it is served");
	cr_expect_str_eq(vb, ca);
	cu_free(mb);
	cu_free(vb);
	cu_free(ca);
	ctl_certs_dispose(&old);
}

Test(ctl_certrot_bundle, first_installation_trusts_one_ca, .init = setup,
    .fini = teardown, .timeout = 60)
{
	char *ca, *mb;

	ctl_certrot_run(rot);
	wait_done(NULL, 1);
	ca = secret_ca();
	mb = bundle(&MUTATING, CTL_CERTROT_MUTATING);
	cr_expect_str_eq(mb, ca);
	cu_free(mb);
	cu_free(ca);
}

/* A Kueue CRD with the conversion webhook (strategy Webhook) or none. */
static void create_crd(const char *plural, const char *kind, bool webhook)
{
	struct call c = {false, 0, NULL};
	api_req *req;
	cu_error err;
	char name[128];
	json_t *obj;

	snprintf(name, sizeof(name), "%s.kueue.x-k8s.io", plural);
	obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:s}, "
			"s:[{s:s, s:b, s:b, s:{s:{s:s, s:b}}}]}}",
	    "apiVersion", "apiextensions.k8s.io/v1", "kind",
	    "CustomResourceDefinition", "metadata", "name", name, "spec",
	    "group", "kueue.x-k8s.io", "scope", "Cluster", "names", "kind",
	    kind, "plural", plural, "versions", "name", "v1beta2", "served", 1,
	    "storage", 1, "schema", "openAPIV3Schema", "type", "object",
	    "x-kubernetes-preserve-unknown-fields", 1);
	cr_assert_not_null(obj);
	json_object_set_new(json_object_get(obj, "spec"), "conversion",
	    webhook ? json_pack("{s:s, s:{s:[s], s:{s:{s:s, s:s, s:s, s:i}}}}",
			  "strategy", "Webhook", "webhook",
			  "conversionReviewVersions", "v1", "clientConfig",
			  "service", "name", "cueue-webhook-service",
			  "namespace", NS, "path", "/convert", "port", 443)
		    : json_pack("{s:s}", "strategy", "None"));
	cr_assert_eq(
	    api_create(&req, client, &CRDS, NULL, obj, on_resp, &c, &err),
	    CU_OK, "%s", err.msg);
	json_decref(obj);
	wait_done(&c.done, 0);
	cr_assert_eq(c.err, CU_OK, "create %s", name);
	json_decref(c.body);
}

static const char *crd_bundle(json_t *crd)
{
	return json_string_value(json_object_get(
	    json_object_get(
		json_object_get(
		    json_object_get(json_object_get(crd, "spec"), "conversion"),
		    "webhook"),
		"clientConfig"),
	    "caBundle"));
}

Test(ctl_certrot_bundle, crd_conversion_webhooks_get_the_ca, .init = setup,
    .fini = teardown, .timeout = 60)
{
	json_t *cq, *lq;
	char *ca, *b;

	create_crd("clusterqueues", "ClusterQueue", true);
	create_crd("localqueues", "LocalQueue", false);
	ctl_certrot_run(rot);
	wait_done(NULL, 1);
	ca = secret_ca();
	cq = get(&CRDS, NULL, "clusterqueues.kueue.x-k8s.io");
	lq = get(&CRDS, NULL, "localqueues.kueue.x-k8s.io");
	b = decoded(crd_bundle(cq));
	cr_expect_str_eq(b, ca);
	cr_expect_null(json_object_get(
	    json_object_get(json_object_get(lq, "spec"), "conversion"),
	    "webhook"));
	cu_free(b);
	cu_free(ca);
	json_decref(cq);
	json_decref(lq);
}

/* Within the grace after this process wrote a new pair into certDir, a
 * pass keeps the replaced pair's CA: the webhook server still serves the
 * old pair until its next reload (a pass asked for by the watch right
 * after a rotation must not drop it). */
static void setup_grace(void)
{
	grace_ns = 60LL * CU_NS_PER_S;
	setup();
}

Test(ctl_certrot_bundle, replaced_ca_kept_within_the_grace, .init = setup_grace,
    .fini = teardown, .timeout = 90)
{
	const char *const dns[] = {"cueue-webhook-service.default.svc"};
	struct ctl_certs_request q;
	struct ctl_certs old;
	char *ca, *mb;
	cu_error err;

	memset(&q, 0, sizeof(q));
	q.dns_names = dns;
	q.n_dns_names = 1;
	cr_assert_eq(ctl_certs_generate(&q, &old, &err), CU_OK, "%s", err.msg);
	write_file("ca.crt", old.ca_cert_pem);
	write_file("tls.crt", old.cert_pem);
	write_file("tls.key", old.key_pem);
	ctl_certrot_run(rot);
	wait_done(NULL, 1);
	ctl_certrot_run(rot);
	wait_done(NULL, 2);
	ca = secret_ca();
	mb = bundle(&MUTATING, CTL_CERTROT_MUTATING);
	cr_expect(strstr(mb, ca) == mb, "the new CA first:\n%s", mb);
	cr_expect(strstr(mb, old.ca_cert_pem) != NULL,
	    "the replaced CA still trusted within the grace:\n%s", mb);
	cu_free(mb);
	cu_free(ca);
	ctl_certs_dispose(&old);
}
