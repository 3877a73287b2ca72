/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/certrot.c - internalCertManagement: the Secret, the
 * caBundles and the files, one asynchronous pass at a time (certrot.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>
#include <openssl/crypto.h>

#include "api/informer.h"
#include "api/json.h"
#include "api/wire.h"
#include "controller/certrot.h"
#include "controller/certs.h"

/* A CA certificate file larger than this is not read. */
#define CERTROT_CA_MAX (64u * 1024u)

static const struct api_resource SECRETS = {"", "v1", "secrets", true};
static const struct api_resource MUTATING = {"admissionregistration.k8s.io",
    "v1", "mutatingwebhookconfigurations", false};
static const struct api_resource VALIDATING = {"admissionregistration.k8s.io",
    "v1", "validatingwebhookconfigurations", false};
static const struct api_resource CRDS = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", false};

/* The objects whose caBundle a pass keeps, in order: the two webhook
 * configurations (every webhook's clientConfig), then cueue's CRDs with
 * a conversion webhook (spec.conversion.webhook.clientConfig). */
static const struct inject_target {
	const struct api_resource *res;
	const char *name;
	bool crd;
} TARGETS[] = {
    {&MUTATING, CTL_CERTROT_MUTATING, false},
    {&VALIDATING, CTL_CERTROT_VALIDATING, false},
    {&CRDS, "clusterqueues.kueue.x-k8s.io", true},
    {&CRDS, "localqueues.kueue.x-k8s.io", true},
    {&CRDS, "workloads.kueue.x-k8s.io", true},
    {&CRDS, "cohorts.kueue.x-k8s.io", true},
    {&CRDS, "resourceflavors.kueue.x-k8s.io", true},
    {&CRDS, "workloadpriorityclasses.kueue.x-k8s.io", true},
    {&CRDS, "topologies.kueue.x-k8s.io", true},
    {&CRDS, "admissionchecks.kueue.x-k8s.io", true},
    {&CRDS, "provisioningrequestconfigs.kueue.x-k8s.io", true},
    {&CRDS, "multikueueclusters.kueue.x-k8s.io", true},
    {&CRDS, "multikueueconfigs.kueue.x-k8s.io", true},
};
#define NTARGETS (sizeof(TARGETS) / sizeof(TARGETS[0]))

/* One watched target: its informer's handler payload. */
struct watched {
	struct ctl_certrot *r;
	size_t i; /* index into TARGETS */
};

struct ctl_certrot {
	struct ev_loop *loop;
	api_client *client;
	char *ns, *secret, *cert_dir; /* owned */
	char *dns[2];		      /* owned: the Service's names */
	bool (*may_run)(void *payload);
	void *payload;
	ev_timer period_w;
	api_req *req; /* the request in flight, NULL when idle */
	bool running;
	bool failed; /* a step of this pass failed */
	unsigned passes;
	/* The set being served: PEM [owned]. */
	char *ca, *cert, *key;
	size_t step; /* index into TARGETS of the caBundle being kept */
	/* Every target watched by name: a caBundle found missing or stale
	 * (applied after the start, re-created, replaced by an older
	 * manifest) asks for a pass at once. */
	api_informer *inf[NTARGETS];
	struct watched w[NTARGETS];
	bool again; /* a pass was asked for while one ran */
	/* The CA of the pair this process just replaced in certDir [owned;
	 * NULL: none], kept in the bundles until grace_until (monotonic):
	 * whsrv serves the old pair until its next reload, and a pass asked
	 * for meanwhile must not drop that CA. */
	char *grace_ca;
	cu_ns_t grace_until;
	cu_ns_t grace_ns;
};

static void start_pass(ctl_certrot *r);

static void pass_done(ctl_certrot *r)
{
	r->running = false;
	r->req = NULL;
	if (!r->failed)
		r->passes++;
	if (r->again) {
		r->again = false;
		start_pass(r);
	}
}

/* Write `data` to dir/name through a temporary file and a rename, so a
 * reader never sees half a key. The temporary file is created afresh with
 * mode 0600 whatever the umask (it holds the private key), O_EXCL so that
 * nothing already at its path - a stale one from a crash, a symlink
 * planted in the directory - is followed or reused; a stale one is
 * unlinked first (unlink removes a symlink, not its target). Failure is
 * not fatal: on a cluster the directory is the read-only Secret mount. */
static void write_file(const char *dir, const char *name, const char *data)
{
	char *path = cu_asprintf("%s/%s", dir, name);
	char *tmp = cu_asprintf("%s/.%s.tmp", dir, name);
	FILE *f;
	int fd;
	bool ok = false;

	if (path == NULL || tmp == NULL)
		goto out;
	if (unlink(tmp) != 0 && errno != ENOENT)
		cu_debug("webhook certificate: removing stale %s: %s", tmp,
		    strerror(errno));
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		cu_debug("webhook certificate: not writing %s: %s", path,
		    strerror(errno));
		goto out;
	}
	f = fdopen(fd, "wb");
	if (f == NULL) {
		close(fd);
		unlink(tmp);
		cu_warn("webhook certificate: writing %s failed: %s", path,
		    strerror(errno));
		goto out;
	}
	ok = fputs(data, f) >= 0;
	ok = fflush(f) == 0 && ok;
	ok = fsync(fd) == 0 && ok; /* durable before it replaces the old */
	ok = fclose(f) == 0 && ok;
	if (ok && rename(tmp, path) != 0)
		ok = false;
	if (!ok) {
		cu_warn("webhook certificate: writing %s failed", path);
		unlink(tmp);
	}
out:
	cu_free(path);
	cu_free(tmp);
}

/* Files rewritten only when they differ, so whsrv reloads only on change. */
static bool same_file(const char *dir, const char *name, const char *data)
{
	char *path = cu_asprintf("%s/%s", dir, name);
	FILE *f = path ? fopen(path, "rb") : NULL;
	size_t n = strlen(data), got;
	char *buf;
	bool same = false;

	cu_free(path);
	if (f == NULL)
		return false;
	buf = cu_malloc(n + 2);
	if (buf != NULL) {
		got = fread(buf, 1, n + 1, f);
		same = got == n && memcmp(buf, data, n) == 0;
	}
	cu_free(buf);
	fclose(f);
	return same;
}

static char *served_ca(const ctl_certrot *r);

static void write_files(ctl_certrot *r)
{
	static const char *const names[] = {"ca.crt", "tls.crt", "tls.key"};
	const char *data[] = {r->ca, r->cert, r->key};
	size_t i;
	bool same = true;
	char *old;

	if (r->cert_dir == NULL)
		return;
	for (i = 0; i < 3; i++)
		same = same && same_file(r->cert_dir, names[i], data[i]);
	if (same)
		return;
	/* The CA of the pair still being served stays trusted for a while
	 * (see grace_ca). */
	if ((old = served_ca(r)) != NULL) {
		cu_free(r->grace_ca);
		r->grace_ca = old;
		r->grace_until = cu_time_mono_ns() + r->grace_ns;
	}
	/* The key before the certificate: whsrv reloads on either. */
	write_file(r->cert_dir, names[0], data[0]);
	write_file(r->cert_dir, names[2], data[2]);
	write_file(r->cert_dir, names[1], data[1]);
}

static void inject_next(ctl_certrot *r);

/* The CA of the pair in certDir - the one being served, or about to be
 * after whsrv's next reload - when it is not the Secret's [owned:
 * cu_free], else NULL. On a cluster certDir is the Secret's mount, which
 * the kubelet refreshes a while after a rotation: until then the pod
 * serves the old certificate, so the old CA must stay trusted. */
static char *served_ca(const ctl_certrot *r)
{
	char *path, *buf = NULL;
	FILE *f;
	size_t n = 0;

	if (r->cert_dir == NULL)
		return NULL;
	path = cu_asprintf("%s/ca.crt", r->cert_dir);
	f = path != NULL ? fopen(path, "rb") : NULL;
	cu_free(path);
	if (f == NULL)
		return NULL;
	buf = cu_malloc(CERTROT_CA_MAX + 1);
	if (buf != NULL)
		n = fread(buf, 1, CERTROT_CA_MAX + 1, f);
	fclose(f);
	if (buf == NULL || n == 0 || n > CERTROT_CA_MAX) {
		cu_free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (strncmp(buf, "-----BEGIN CERTIFICATE-----", 27) != 0 ||
	    strlen(buf) != n || strcmp(buf, r->ca) == 0) {
		cu_free(buf);
		return NULL;
	}
	return buf;
}

/* The caBundle: the Secret's CA, then the served one while it differs
 * [owned: cu_free]; NULL when out of memory. */
static char *bundle_of(const ctl_certrot *r)
{
	char *old = served_ca(r), *pem, *b64;
	size_t n = strlen(r->ca);
	const char *grace =
	    r->grace_ca != NULL && cu_time_mono_ns() < r->grace_until &&
		    strcmp(r->grace_ca, r->ca) != 0 &&
		    (old == NULL || strcmp(r->grace_ca, old) != 0)
		? r->grace_ca
		: "";

	pem = old == NULL
		  ? cu_asprintf("%s%s%s", r->ca,
			grace[0] && n > 0 && r->ca[n - 1] != '\n' ? "\n" : "",
			grace)
		  : cu_asprintf("%s%s%s%s", r->ca,
			n > 0 && r->ca[n - 1] == '\n' ? "" : "\n", old, grace);
	cu_free(old);
	if (pem == NULL)
		return NULL;
	b64 = api_base64_encode(pem, strlen(pem));
	cu_free(pem);
	return b64;
}

static void on_config_put(const struct api_response *resp, void *payload)
{
	ctl_certrot *r = payload;

	if (resp->canceled) {
		/* The client may be freed first (ctl_free): the request is
		 * gone, so ctl_certrot_free must not cancel it again. */
		r->req = NULL;
		return;
	}
	r->req = NULL;
	if (resp->err != CU_OK) {
		cu_warn("webhook caBundle: %s %s: %d %s", resp->method,
		    resp->path, resp->code, resp->message);
		r->failed = true;
	}
	r->step++;
	inject_next(r);
}

/* Set caBundle on every webhook of the configuration, or on the CRD's
 * conversion webhook; PUT when changed. */
static void on_config_get(const struct api_response *resp, void *payload)
{
	ctl_certrot *r = payload;
	const struct inject_target *t = &TARGETS[r->step];
	const struct api_resource *res = t->res;
	char *bundle;
	json_t *obj;
	bool changed;
	cu_error err;

	if (resp->canceled) {
		/* The client may be freed first (ctl_free): the request is
		 * gone, so ctl_certrot_free must not cancel it again. */
		r->req = NULL;
		return;
	}
	r->req = NULL;
	if (resp->err == CU_ENOTFOUND) { /* webhooks not installed */
		r->step++;
		inject_next(r);
		return;
	}
	if (resp->err != CU_OK || !json_is_object(resp->body)) {
		cu_warn("webhook caBundle: GET %s: %d %s", resp->path,
		    resp->code, resp->message);
		r->failed = true;
		r->step++;
		inject_next(r);
		return;
	}
	bundle = bundle_of(r);
	obj = json_deep_copy(resp->body);
	/* The object is written back whole (PUT): edited on the wire. */
	changed = t->crd ? api_crd_set_ca_bundle(obj, bundle)
			 : api_webhook_configuration_set_ca_bundle(obj, bundle);
	cu_free(bundle);
	if (changed && api_update(&r->req, r->client, res, obj, false,
			   on_config_put, r, &err) == CU_OK) {
		json_decref(obj);
		return;
	}
	if (changed) {
		cu_warn("webhook caBundle: %s", err.msg);
		r->failed = true;
	}
	json_decref(obj);
	r->step++;
	inject_next(r);
}

/* ---- the targets watched ---------------------------------------------- */

/* Does caBundle have [borrowed; base64, NULL: none] hold the PEM ca? */
static bool holds_ca(const char *have, const char *ca)
{
	char *pem = NULL;
	size_t n;
	bool yes;

	if (have == NULL || have[0] == '\0' ||
	    api_base64_decode(have, &pem, &n, NULL) != CU_OK)
		return false;
	yes = strstr(pem, ca) != NULL;
	cu_free(pem);
	return yes;
}

/* Does target i's object obj [borrowed] lack the Secret's CA in a
 * caBundle (missing, or another CA: applied after the start, re-created,
 * replaced by an older manifest)? Unknown until a pass has read the
 * Secret (r->ca). A bundle that also holds the CA still being served
 * during a rotation is not stale: the periodic pass drops that one once
 * the new pair is in place. */
static bool stale(const ctl_certrot *r, size_t i, json_t *obj)
{
	struct api_webhook_configuration wc;
	struct api_crd crd;
	size_t k;
	bool bad = false;

	if (r->ca == NULL)
		return false;
	if (TARGETS[i].crd) {
		if (api_crd_decode(&crd, obj, NULL) != CU_OK)
			return false;
		bad = crd.conversion_strategy != NULL &&
		      strcmp(crd.conversion_strategy, "Webhook") == 0 &&
		      !holds_ca(crd.ca_bundle, r->ca);
		api_crd_dispose(&crd);
		return bad;
	}
	if (api_webhook_configuration_decode(&wc, obj, NULL) != CU_OK)
		return false;
	for (k = 0; k < wc.n_webhooks; k++)
		if (!holds_ca(wc.webhooks[k].ca_bundle, r->ca))
			bad = true;
	api_webhook_configuration_dispose(&wc);
	return bad;
}

/* A pass now, or right after the one running. */
static void ask_pass(ctl_certrot *r)
{
	if (r->running)
		r->again = true;
	else
		start_pass(r);
}

static void on_target(json_t *obj, void *payload)
{
	struct watched *w = payload;

	if (stale(w->r, w->i, obj)) {
		cu_info("webhook caBundle: %s %s lacks the current CA: "
			"injecting it",
		    TARGETS[w->i].res->plural, TARGETS[w->i].name);
		ask_pass(w->r);
	}
}

static void on_target_update(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	on_target(obj, payload);
}

static void on_target_delete(json_t *obj, void *payload)
{
	(void)obj;
	(void)payload;
}

static const struct api_informer_handlers TARGET_HANDLERS = {
    on_target, on_target_update, on_target_delete, NULL};

/* Watch every target by name (a field selector on metadata.name, which
 * RBAC authorizes against the rules' resourceNames). Best effort: a
 * target not watched is still kept by the periodic pass. */
static void watch_targets(ctl_certrot *r)
{
	char sel[256];
	size_t i;
	cu_error err;

	for (i = 0; i < NTARGETS; i++) {
		if (r->inf[i] != NULL)
			continue;
		r->w[i].r = r;
		r->w[i].i = i;
		snprintf(sel, sizeof(sel), "metadata.name=%s", TARGETS[i].name);
		if (api_informer_new(&r->inf[i], r->client, TARGETS[i].res,
			NULL, NULL, sel, &TARGET_HANDLERS, &r->w[i],
			&err) != CU_OK) {
			cu_warn("webhook caBundle: not watching %s: %s",
			    TARGETS[i].name, err.msg);
			r->inf[i] = NULL;
		}
	}
}

static void inject_next(ctl_certrot *r)
{
	cu_error err;

	if (r->step >= NTARGETS) {
		write_files(r);
		pass_done(r);
		return;
	}
	if (api_get(&r->req, r->client, TARGETS[r->step].res, NULL,
		TARGETS[r->step].name, on_config_get, r, &err) != CU_OK) {
		cu_warn("webhook caBundle: %s", err.msg);
		r->failed = true;
		r->step++;
		inject_next(r);
	}
}

static void use_set(
    ctl_certrot *r, const char *ca, const char *cert, const char *key)
{
	char *c = cu_strdup(ca), *t = cu_strdup(cert), *k = cu_strdup(key);

	if (c == NULL || t == NULL || k == NULL) {
		cu_free(c);
		cu_free(t);
		cu_free(k);
		r->failed = true;
		pass_done(r);
		return;
	}
	cu_free(r->ca);
	cu_free(r->cert);
	cu_free(r->key);
	r->ca = c;
	r->cert = t;
	r->key = k;
	r->step = 0;
	inject_next(r);
}

static void on_secret_written(const struct api_response *resp, void *payload)
{
	ctl_certrot *r = payload;

	if (resp->canceled) {
		/* The client may be freed first (ctl_free): the request is
		 * gone, so ctl_certrot_free must not cancel it again. */
		r->req = NULL;
		return;
	}
	r->req = NULL;
	if (resp->err != CU_OK) {
		/* A conflict: someone else rotated; the next pass reads it. */
		cu_warn("webhook certificate Secret: %s %s: %d %s%s",
		    resp->method, resp->path, resp->code, resp->message,
		    resp->code == 403 && strcmp(resp->method, "POST") == 0
			? " (the shipped Role grants no create on Secrets: "
			  "apply manifests/webhook_secret.yaml, which the "
			  "kustomization installs)"
			: "");
		r->failed = true;
		pass_done(r);
		return;
	}
	cu_info("webhook certificate: new certificate stored in Secret %s/%s",
	    r->ns, r->secret);
	inject_next(r);
}

/* A new set into the Secret: replaced (guarded by its resourceVersion)
 * when it exists, else created. */
static void rotate(ctl_certrot *r, const struct api_secret *existing)
{
	const char *const dns[] = {r->dns[0], r->dns[1]};
	struct ctl_certs_request q;
	struct ctl_certs set;
	json_t *obj;
	char *ca = NULL, *crt = NULL, *key = NULL;
	cu_error err;
	int rc;

	memset(&q, 0, sizeof(q));
	q.dns_names = dns;
	q.n_dns_names = 2;
	if (ctl_certs_generate(&q, &set, &err) != CU_OK) {
		cu_errorf("webhook certificate: %s", err.msg);
		r->failed = true;
		pass_done(r);
		return;
	}
	ca = api_base64_encode(set.ca_cert_pem, strlen(set.ca_cert_pem));
	crt = api_base64_encode(set.cert_pem, strlen(set.cert_pem));
	key = api_base64_encode(set.key_pem, strlen(set.key_pem));
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:{s:s?, s:s?, s:s?}}",
	    "apiVersion", "v1", "kind", "Secret", "metadata", "name", r->secret,
	    "namespace", r->ns, "type", "kubernetes.io/tls", "data", "ca.crt",
	    ca, "tls.crt", crt, "tls.key", key);
	cu_free(ca);
	cu_free(crt);
	cu_free(key);
	if (obj != NULL && existing != NULL) {
		json_t *md = api_json_obj_child(obj, "metadata");
		const char *rv = existing->meta.resource_version;
		const char *type = existing->type;

		if (rv != NULL)
			json_object_set_new(
			    md, "resourceVersion", json_string(rv));
		/* A Secret's type cannot change: the shipped one
		 * (manifests/webhook_secret.yaml) is Opaque. Its labels and
		 * annotations stay. */
		if (type != NULL && type[0] != '\0')
			json_object_set_new(obj, "type", json_string(type));
		if (existing->meta.labels.n > 0)
			json_object_set_new(md, "labels",
			    api_strmap_encode(&existing->meta.labels));
		if (existing->meta.annotations.n > 0)
			json_object_set_new(md, "annotations",
			    api_strmap_encode(&existing->meta.annotations));
	}
	/* The set is served only once stored: r keeps it from here. */
	cu_free(r->ca);
	cu_free(r->cert);
	cu_free(r->key);
	r->ca = set.ca_cert_pem;
	r->cert = set.cert_pem;
	r->key = set.key_pem;
	set.ca_cert_pem = set.cert_pem = set.key_pem = NULL;
	ctl_certs_dispose(&set);
	r->step = 0;
	if (obj == NULL)
		rc = cu_error_set(&err, CU_ENOMEM, "Secret: out of memory");
	else if (existing != NULL)
		rc = api_update(&r->req, r->client, &SECRETS, obj, false,
		    on_secret_written, r, &err);
	else
		rc = api_create(&r->req, r->client, &SECRETS, r->ns, obj,
		    on_secret_written, r, &err);
	json_decref(obj);
	if (rc != CU_OK) {
		cu_warn("webhook certificate Secret: %s", err.msg);
		r->failed = true;
		pass_done(r);
	}
}

/* One Secret data field, base64-decoded [owned: cu_free]; NULL when
 * absent or not base64. */
static char *secret_field(const struct api_secret *secret, const char *key)
{
	const char *v = api_strmap_get(&secret->data, key);
	char *out;
	size_t n;

	if (v == NULL || api_base64_decode(v, &out, &n, NULL) != CU_OK)
		return NULL;
	return out;
}

static void on_secret(const struct api_response *resp, void *payload)
{
	ctl_certrot *r = payload;
	const char *const dns[] = {r->dns[0], r->dns[1]};
	struct api_secret sec;
	char *ca, *crt, *key;
	bool valid = false;
	cu_error err;

	if (resp->canceled) {
		/* The client may be freed first (ctl_free): the request is
		 * gone, so ctl_certrot_free must not cancel it again. */
		r->req = NULL;
		return;
	}
	r->req = NULL;
	if (resp->err == CU_ENOTFOUND) {
		rotate(r, NULL);
		return;
	}
	if (resp->err != CU_OK) {
		cu_warn("webhook certificate Secret: GET %s: %d %s", resp->path,
		    resp->code, resp->message);
		r->failed = true;
		pass_done(r);
		return;
	}
	if (api_secret_decode(&sec, resp->body, &err) != CU_OK) {
		cu_warn("webhook certificate Secret: %s", err.msg);
		r->failed = true;
		pass_done(r);
		return;
	}
	ca = secret_field(&sec, "ca.crt");
	crt = secret_field(&sec, "tls.crt");
	key = secret_field(&sec, "tls.key");
	if (ca && crt && key &&
	    ctl_certs_check(ca, crt, key, dns, 2, 0,
		CTL_CERTROT_RENEW_BEFORE_NS, &valid, &err) == CU_OK &&
	    !valid)
		cu_info("webhook certificate: replacing the stored one: %s",
		    err.msg);
	if (valid)
		use_set(r, ca, crt, key);
	else
		rotate(r, &sec);
	api_secret_dispose(&sec);
	cu_free(ca);
	cu_free(crt);
	cu_free(key);
}

static void start_pass(ctl_certrot *r)
{
	cu_error err;

	if (r->running || (r->may_run != NULL && !r->may_run(r->payload)))
		return;
	r->running = true;
	r->failed = false;
	if (api_get(&r->req, r->client, &SECRETS, r->ns, r->secret, on_secret,
		r, &err) != CU_OK) {
		cu_warn("webhook certificate Secret: %s", err.msg);
		r->failed = true;
		pass_done(r);
	}
}

static void on_period(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	start_pass(t->data);
}

int ctl_certrot_new(ctl_certrot **out, struct ev_loop *loop,
    const struct ctl_certrot_opts *opts, cu_error *err)
{
	ctl_certrot *r;

	*out = NULL;
	if (opts == NULL || opts->client == NULL || opts->namespace_ == NULL ||
	    opts->secret_name == NULL || opts->service_name == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "internalCertManagement: missing namespace, secret or "
		    "service name");
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL)
		return cu_error_set(err, CU_ENOMEM, "certrot: out of memory");
	r->loop = loop;
	r->client = opts->client;
	r->may_run = opts->may_run;
	r->payload = opts->payload;
	r->grace_ns =
	    opts->grace_ns > 0 ? opts->grace_ns : CTL_CERTROT_GRACE_NS;
	r->ns = cu_strdup(opts->namespace_);
	r->secret = cu_strdup(opts->secret_name);
	r->cert_dir = opts->cert_dir ? cu_strdup(opts->cert_dir) : NULL;
	r->dns[0] =
	    cu_asprintf("%s.%s.svc", opts->service_name, opts->namespace_);
	r->dns[1] = cu_asprintf(
	    "%s.%s.svc.cluster.local", opts->service_name, opts->namespace_);
	if (!r->ns || !r->secret || (opts->cert_dir && !r->cert_dir) ||
	    !r->dns[0] || !r->dns[1]) {
		ctl_certrot_free(r);
		return cu_error_set(err, CU_ENOMEM, "certrot: out of memory");
	}
	ev_timer_init(&r->period_w, on_period, CTL_CERTROT_PERIOD_S,
	    CTL_CERTROT_PERIOD_S);
	r->period_w.data = r;
	*out = r;
	return CU_OK;
}

void ctl_certrot_run(ctl_certrot *r)
{
	if (r == NULL)
		return;
	if (!ev_is_active(&r->period_w))
		ev_timer_start(r->loop, &r->period_w);
	watch_targets(r);
	start_pass(r);
}

unsigned ctl_certrot_passes(const ctl_certrot *r)
{
	return r ? r->passes : 0;
}

void ctl_certrot_free(ctl_certrot *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < NTARGETS; i++)
		api_informer_free(r->inf[i]);
	ev_timer_stop(r->loop, &r->period_w);
	if (r->req != NULL) {
		api_req *q = r->req;

		r->req = NULL;
		api_request_cancel(q);
	}
	cu_free(r->ns);
	cu_free(r->secret);
	cu_free(r->cert_dir);
	cu_free(r->dns[0]);
	cu_free(r->dns[1]);
	cu_free(r->ca);
	cu_free(r->cert);
	if (r->key != NULL)
		OPENSSL_cleanse(r->key, strlen(r->key));
	cu_free(r->key);
	cu_free(r->grace_ca);
	cu_free(r);
}
