/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/vauth.c - the visibility API's own HTTPS server with
 * k8s.io/apiserver's delegated authentication (front-proxy and client
 * certificates from the extension-apiserver-authentication ConfigMap,
 * bearer tokens) and authorization (SubjectAccessReview with the
 * request's resource attributes) - see vauth.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <ev.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "api/json.h"
#include "controller/certs.h"
#include "controller/vauth.h"

struct ctl_vauth {
	struct ev_loop *loop; /* borrowed */
	api_client *client;   /* borrowed */
	api_client *reviews;  /* borrowed: the reviews' client */
	char *listen;	      /* owned */
	char *namespace_;     /* owned */
	char *cert_dir;	      /* owned */
	char *tls_priorities; /* owned; NULL: default */
	const struct ctl_vis *vis;
	void (*failed)(const cu_error *err, void *payload);
	void *payload;
	api_req *cm_req;  /* the ConfigMap read in flight, or NULL */
	ev_timer retry;	  /* the next read, after a transport failure */
	double backoff;	  /* seconds before the next read */
	double refresh_s; /* between reads while serving */
	struct ctl_vauth_settings set;
	ctl_httpd *srv;
	ctl_mauth *mauth;
};

/* ---- settings ------------------------------------------------------------ */

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		cu_free(v[i]);
	cu_free(v);
}

void ctl_vauth_settings_dispose(struct ctl_vauth_settings *s)
{
	if (s == NULL)
		return;
	cu_free(s->client_ca_pem);
	cu_free(s->rh_ca_pem);
	free_strv(s->allowed_names, s->nallowed);
	free_strv(s->user_headers, s->nuser);
	free_strv(s->group_headers, s->ngroup);
	free_strv(s->extra_prefixes, s->nextra);
	free_strv(s->uid_headers, s->nuid);
	memset(s, 0, sizeof(*s));
}

/* data[key], a JSON list of strings, into *v, *n; def (NULL-terminated)
 * when the key is absent. */
static int str_list(const json_t *data, const char *key, const char *const *def,
    char ***v, size_t *n, cu_error *err)
{
	const char *text = api_json_str(data, key);
	json_t *list = NULL, *x;
	size_t i, count = 0;

	*v = NULL;
	*n = 0;
	if (text != NULL) {
		list = json_loads(text, 0, NULL);
		if (!json_is_array(list)) {
			json_decref(list);
			return cu_error_set(err, CU_EINVAL,
			    "ConfigMap %s/%s: %s: not a JSON list of strings",
			    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP, key);
		}
		count = json_array_size(list);
	} else {
		while (def != NULL && def[count] != NULL)
			count++;
	}
	if (count > 0 && (*v = cu_calloc(count, sizeof(**v))) == NULL) {
		json_decref(list);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	for (i = 0; i < count; i++) {
		const char *s;

		if (list != NULL) {
			x = json_array_get(list, i);
			if (!json_is_string(x)) {
				json_decref(list);
				free_strv(*v, *n);
				*v = NULL;
				*n = 0;
				return cu_error_set(err, CU_EINVAL,
				    "ConfigMap %s/%s: %s: not a JSON list of "
				    "strings",
				    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP,
				    key);
			}
			s = json_string_value(x);
		} else
			s = def[i];
		if (((*v)[i] = cu_strdup(s)) == NULL) {
			json_decref(list);
			free_strv(*v, i);
			*v = NULL;
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
		*n = i + 1;
	}
	json_decref(list);
	return CU_OK;
}

int ctl_vauth_settings_from(
    struct ctl_vauth_settings *out, const json_t *cm, cu_error *err)
{
	static const char *const def_user[] = {"X-Remote-User", NULL};
	static const char *const def_group[] = {"X-Remote-Group", NULL};
	static const char *const def_extra[] = {"X-Remote-Extra-", NULL};
	const json_t *data = json_object_get(cm, "data");
	const char *ca = api_json_str(data, "client-ca-file");
	const char *rh = api_json_str(data, "requestheader-client-ca-file");
	bool proxy;
	int rc;

	memset(out, 0, sizeof(*out));
	if (ca != NULL && ca[0] != '\0' &&
	    (out->client_ca_pem = cu_strdup(ca)) == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	if (rh != NULL && rh[0] != '\0' &&
	    (out->rh_ca_pem = cu_strdup(rh)) == NULL) {
		ctl_vauth_settings_dispose(out);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	proxy = out->rh_ca_pem != NULL;
	rc = str_list(data, "requestheader-allowed-names", NULL,
	    &out->allowed_names, &out->nallowed, err);
	if (rc == CU_OK)
		rc = str_list(data, "requestheader-username-headers",
		    proxy ? def_user : NULL, &out->user_headers, &out->nuser,
		    err);
	if (rc == CU_OK)
		rc = str_list(data, "requestheader-group-headers",
		    proxy ? def_group : NULL, &out->group_headers, &out->ngroup,
		    err);
	if (rc == CU_OK)
		rc = str_list(data, "requestheader-extra-headers-prefix",
		    proxy ? def_extra : NULL, &out->extra_prefixes,
		    &out->nextra, err);
	if (rc == CU_OK)
		rc = str_list(data, "requestheader-uid-headers", NULL,
		    &out->uid_headers, &out->nuid, err);
	if (rc != CU_OK)
		ctl_vauth_settings_dispose(out);
	return rc;
}

/* ---- certificates ------------------------------------------------------ */

/* Go's x509 wording of a verification failure. */
static const char *verify_why(int code)
{
	switch (code) {
	case X509_V_ERR_CERT_HAS_EXPIRED:
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return "certificate has expired or is not yet valid";
	case X509_V_ERR_INVALID_PURPOSE:
		return "certificate specifies an incompatible key usage";
	default:
		return "certificate signed by unknown authority";
	}
}

int ctl_vauth_verify(const struct ctl_http_der *chain, size_t n,
    const char *ca_pem, char **cn, json_t **orgs, cu_error *err)
{
	X509_STORE *store = NULL;
	X509_STORE_CTX *ctx = NULL;
	STACK_OF(X509) *mid = NULL;
	X509 *leaf = NULL, *x;
	X509_NAME *subj;
	BIO *b = NULL;
	size_t i, ncas = 0;
	int rc = CU_OK, idx = -1;

	*cn = NULL;
	*orgs = NULL;
	if (n == 0 || ca_pem == NULL)
		return cu_error_set(err, CU_EINVAL, "no client certificate");
	store = X509_STORE_new();
	mid = sk_X509_new_null();
	b = BIO_new_mem_buf(ca_pem, -1);
	if (store == NULL || mid == NULL || b == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		if (X509_STORE_add_cert(store, x) == 1)
			ncas++;
		X509_free(x);
	}
	ERR_clear_error();
	if (ncas == 0) {
		rc = cu_error_set(err, CU_EINVAL, "no CA certificate");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const unsigned char *p = chain[i].data;

		x = d2i_X509(NULL, &p, (long)chain[i].len);
		if (x == NULL) {
			ERR_clear_error();
			rc = cu_error_set(
			    err, CU_EDENIED, "x509: malformed certificate");
			goto out;
		}
		if (i == 0)
			leaf = x;
		else if (!sk_X509_push(mid, x)) {
			X509_free(x);
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			goto out;
		}
	}
	ctx = X509_STORE_CTX_new();
	if (ctx == NULL || X509_STORE_CTX_init(ctx, store, leaf, mid) != 1) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	/* Go's ExtKeyUsageClientAuth: a certificate with an extended key
	 * usage must allow client authentication. */
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
	if (X509_verify_cert(ctx) != 1) {
		rc = cu_error_set(err, CU_EDENIED, "x509: %s",
		    verify_why(X509_STORE_CTX_get_error(ctx)));
		ERR_clear_error();
		goto out;
	}
	subj = X509_get_subject_name(leaf);
	*orgs = json_array();
	if (*orgs == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	while ((idx = X509_NAME_get_index_by_NID(
		    subj, NID_organizationName, idx)) >= 0) {
		ASN1_STRING *d =
		    X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, idx));

		json_array_append_new(
		    *orgs, json_stringn((const char *)ASN1_STRING_get0_data(d),
			       (size_t)ASN1_STRING_length(d)));
	}
	idx = X509_NAME_get_index_by_NID(subj, NID_commonName, -1);
	if (idx >= 0) {
		ASN1_STRING *d =
		    X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, idx));

		*cn = cu_strndup((const char *)ASN1_STRING_get0_data(d),
		    (size_t)ASN1_STRING_length(d));
	} else
		*cn = cu_strdup("");
	if (*cn == NULL) {
		json_decref(*orgs);
		*orgs = NULL;
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
out:
	X509_STORE_CTX_free(ctx);
	X509_free(leaf);
	sk_X509_pop_free(mid, X509_free);
	X509_STORE_free(store);
	BIO_free(b);
	return rc;
}

/* ---- request headers --------------------------------------------------- */

static bool in_list(char *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(v[i], name) == 0)
			return true;
	return false;
}

static bool blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0';
}

/* url.PathUnescape, lower-cased; the key as it is when malformed. */
static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

static char *extra_key(const char *enc)
{
	char *out = cu_strdup(enc), *o;
	const char *p;

	if (out == NULL)
		return NULL;
	for (p = enc, o = out; *p != '\0'; p++) {
		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		if (hexval(p[1]) < 0 || hexval(p[2]) < 0) {
			/* Malformed: the key as it was sent. */
			memcpy(out, enc, strlen(enc) + 1);
			o = out + strlen(out);
			break;
		}
		*o++ = (char)(hexval(p[1]) * 16 + hexval(p[2]));
		p += 2;
	}
	*o = '\0';
	for (o = out; *o != '\0'; o++)
		*o = (char)tolower((unsigned char)*o);
	return out;
}

enum ctl_mauth_who ctl_vauth_headers_user(
    const struct ctl_vauth_settings *s, const char *const *hv, json_t **user)
{
	const char *name = NULL, *uid = NULL;
	json_t *groups = NULL, *extra = NULL, *u;
	size_t i, j;

	*user = NULL;
	/* The first header name of the list with a value wins. */
	for (j = 0; name == NULL && j < s->nuser; j++)
		for (i = 0; hv != NULL && hv[i] != NULL; i += 2)
			if (strcasecmp(hv[i], s->user_headers[j]) == 0 &&
			    !blank(hv[i + 1])) {
				name = hv[i + 1];
				break;
			}
	if (name == NULL)
		return CTL_MAUTH_WHO_NONE;
	for (j = 0; uid == NULL && j < s->nuid; j++)
		for (i = 0; hv[i] != NULL; i += 2)
			if (strcasecmp(hv[i], s->uid_headers[j]) == 0 &&
			    !blank(hv[i + 1])) {
				uid = hv[i + 1];
				break;
			}
	groups = json_array();
	extra = json_object();
	u = json_pack("{s:s}", "username", name);
	if (groups == NULL || extra == NULL || u == NULL)
		goto oom;
	for (j = 0; j < s->ngroup; j++)
		for (i = 0; hv[i] != NULL; i += 2)
			if (strcasecmp(hv[i], s->group_headers[j]) == 0 &&
			    !blank(hv[i + 1]))
				json_array_append_new(
				    groups, json_string(hv[i + 1]));
	for (i = 0; hv[i] != NULL; i += 2) {
		for (j = 0; j < s->nextra; j++) {
			size_t pl = strlen(s->extra_prefixes[j]);
			char *key;
			json_t *vals;

			if (strncasecmp(hv[i], s->extra_prefixes[j], pl) != 0 ||
			    blank(hv[i + 1]))
				continue;
			if ((key = extra_key(hv[i] + pl)) == NULL)
				goto oom;
			vals = json_object_get(extra, key);
			if (vals == NULL) {
				vals = json_array();
				json_object_set_new(extra, key, vals);
			}
			json_array_append_new(vals, json_string(hv[i + 1]));
			cu_free(key);
			break;
		}
	}
	json_object_set_new(u, "groups", groups);
	if (json_object_size(extra) > 0)
		json_object_set_new(u, "extra", extra);
	else
		json_decref(extra);
	if (uid != NULL)
		json_object_set_new(u, "uid", json_string(uid));
	*user = u;
	return CTL_MAUTH_WHO_USER;
oom:
	json_decref(groups);
	json_decref(extra);
	json_decref(u);
	return CTL_MAUTH_WHO_NONE;
}

/* ---- request attributes ------------------------------------------------ */

#define MAX_PARTS 12

json_t *ctl_vauth_attributes(const char *method, const char *path)
{
	char buf[1024], *parts[MAX_PARTS] = {NULL}, *p;
	const char *verb = "", *ns = "", *res = "", *name = "", *sub = "";
	char lower[16];
	size_t n = 0, i;
	char **rest;
	size_t nrest;

	snprintf(buf, sizeof(buf), "%s", path);
	/* Go's splitPath: strings.Split(strings.Trim(path, "/"), "/"). */
	for (p = buf; *p == '/'; p++)
		;
	i = strlen(p);
	while (i > 0 && p[i - 1] == '/')
		p[--i] = '\0';
	while (*p != '\0' && n < MAX_PARTS) {
		char *slash = strchr(p, '/');

		parts[n++] = p;
		if (slash == NULL)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	if (n < 4 || strcmp(parts[0], "apis") != 0) {
		for (i = 0; method[i] != '\0' && i + 1 < sizeof(lower); i++)
			lower[i] = (char)tolower((unsigned char)method[i]);
		lower[i] = '\0';
		return json_pack("{s{ssss}}", "nonResourceAttributes", "path",
		    path, "verb", lower);
	}
	rest = parts + 3;
	nrest = n - 3;
	if (strcmp(rest[0], "namespaces") == 0 && nrest > 1) {
		ns = rest[1];
		if (nrest > 2) {
			rest += 2;
			nrest -= 2;
		}
	}
	res = rest[0];
	if (nrest >= 2)
		name = rest[1];
	if (nrest >= 3)
		sub = rest[2];
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		verb = name[0] != '\0' ? "get" : "list";
	else if (strcmp(method, "POST") == 0)
		verb = "create";
	else if (strcmp(method, "PUT") == 0)
		verb = "update";
	else if (strcmp(method, "PATCH") == 0)
		verb = "patch";
	else if (strcmp(method, "DELETE") == 0)
		verb = name[0] != '\0' ? "delete" : "deletecollection";
	return json_pack("{s{ss ss ss ss ss ss ss}}", "resourceAttributes",
	    "namespace", ns, "verb", verb, "group", parts[1], "version",
	    parts[2], "resource", res, "subresource", sub, "name", name);
}

/* ---- the gate's hooks ------------------------------------------------- */

struct hv_collect {
	const char **hv; /* owned array; strings borrowed */
	size_t n, cap;
	bool failed;
};

static bool collect(const char *name, const char *value, void *payload)
{
	struct hv_collect *c = payload;

	if (c->n + 3 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		const char **nv = cu_realloc(c->hv, cap * sizeof(*nv));

		if (nv == NULL) {
			c->failed = true;
			return false;
		}
		c->hv = nv;
		c->cap = cap;
	}
	c->hv[c->n++] = name;
	c->hv[c->n++] = value;
	c->hv[c->n] = NULL;
	return true;
}

static enum ctl_mauth_who identify(
    const struct ctl_http_request *req, json_t **user, void *payload)
{
	ctl_vauth *v = payload;
	struct ctl_http_der chain[CTL_VAUTH_MAX_CHAIN];
	size_t n = ctl_http_peer_chain(req, chain, CTL_VAUTH_MAX_CHAIN);
	bool failed = false;
	char *cn = NULL;
	json_t *orgs = NULL;
	cu_error err;

	*user = NULL;
	if (n == 0)
		return CTL_MAUTH_WHO_NONE;
	if (v->set.rh_ca_pem != NULL) {
		cu_error_clear(&err);
		if (ctl_vauth_verify(chain, n, v->set.rh_ca_pem, &cn, &orgs,
			&err) != CU_OK) {
			cu_debug(
			    "visibility: front-proxy certificate: %s", err.msg);
			failed = true;
		} else if (v->set.nallowed > 0 && !in_list(v->set.allowed_names,
						      v->set.nallowed, cn)) {
			cu_debug(
			    "visibility: x509: subject with cn=%s is not in "
			    "the allowed list",
			    cn);
			failed = true;
		} else {
			struct hv_collect c;
			enum ctl_mauth_who who = CTL_MAUTH_WHO_NONE;

			memset(&c, 0, sizeof(c));
			ctl_http_headers_each(req, collect, &c);
			if (!c.failed && c.hv != NULL)
				who =
				    ctl_vauth_headers_user(&v->set, c.hv, user);
			cu_free(c.hv);
			if (who == CTL_MAUTH_WHO_USER) {
				cu_free(cn);
				json_decref(orgs);
				return who;
			}
		}
		cu_free(cn);
		json_decref(orgs);
		cn = NULL;
		orgs = NULL;
	}
	if (v->set.client_ca_pem != NULL) {
		cu_error_clear(&err);
		if (ctl_vauth_verify(chain, n, v->set.client_ca_pem, &cn, &orgs,
			&err) == CU_OK) {
			/* Go's CommonNameUserConversion: no CN, nobody. */
			if (cn[0] == '\0') {
				cu_free(cn);
				json_decref(orgs);
				return failed ? CTL_MAUTH_WHO_ERROR
					      : CTL_MAUTH_WHO_NONE;
			}
			*user = json_pack(
			    "{s:s, s:o}", "username", cn, "groups", orgs);
			cu_free(cn);
			return *user != NULL ? CTL_MAUTH_WHO_USER
					     : CTL_MAUTH_WHO_ERROR;
		}
		cu_debug("visibility: client certificate: %s", err.msg);
		failed = true;
	}
	return failed ? CTL_MAUTH_WHO_ERROR : CTL_MAUTH_WHO_NONE;
}

static json_t *attributes(const struct ctl_http_request *req, void *payload)
{
	(void)payload;
	return ctl_vauth_attributes(req->method, req->path);
}

/* ---- the server ------------------------------------------------------- */

static char *read_text(const char *dir, const char *file)
{
	char *path = cu_asprintf("%s/%s", dir, file);
	FILE *f = path != NULL ? fopen(path, "r") : NULL;
	cu_buf b;
	char chunk[4096];
	size_t got;
	char *out = NULL;

	cu_free(path);
	if (f == NULL)
		return NULL;
	cu_buf_init(&b, 1u << 20);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (cu_buf_add(&b, chunk, got) != CU_OK)
			break;
	if (!ferror(f) && b.len > 0)
		out = cu_buf_detach(&b, NULL);
	fclose(f);
	cu_buf_dispose(&b);
	return out;
}

/* The serving pair: the files, else a self-signed one. */
static int serving_pair(ctl_vauth *v, char **cert, char **key, cu_error *err)
{
	struct ctl_certs certs;
	struct ctl_certs_request req;
	char *names[3];
	int rc;

	*cert = read_text(v->cert_dir, "tls.crt");
	*key = read_text(v->cert_dir, "tls.key");
	if (*cert != NULL && *key != NULL)
		return CU_OK;
	cu_free(*cert);
	cu_free(*key);
	*cert = *key = NULL;
	names[0] = cu_asprintf("cueue-visibility-server.%s.svc", v->namespace_);
	names[1] = cu_asprintf(
	    "cueue-visibility-server.%s.svc.cluster.local", v->namespace_);
	names[2] = cu_strdup("localhost");
	memset(&req, 0, sizeof(req));
	req.dns_names = (const char *const *)names;
	req.n_dns_names = 3;
	req.ca_name = "cueue-visibility-ca";
	memset(&certs, 0, sizeof(certs));
	rc = names[0] && names[1] && names[2]
		 ? ctl_certs_generate(&req, &certs, err)
		 : cu_error_set(err, CU_ENOMEM, "out of memory");
	cu_free(names[0]);
	cu_free(names[1]);
	cu_free(names[2]);
	if (rc == CU_OK) {
		*cert = certs.cert_pem;
		*key = certs.key_pem;
		certs.cert_pem = certs.key_pem = NULL;
		cu_info("visibility: no %s/tls.crt and tls.key: serving a "
			"self-signed certificate",
		    v->cert_dir);
	}
	ctl_certs_dispose(&certs);
	return rc;
}

/* Both CAs, for the TLS handshake's certificate request [owned], or
 * NULL when there is none. */
static char *trust_pem(const struct ctl_vauth_settings *s)
{
	if (s->client_ca_pem != NULL && s->rh_ca_pem != NULL)
		return cu_asprintf("%s\n%s", s->client_ca_pem, s->rh_ca_pem);
	if (s->client_ca_pem != NULL)
		return cu_strdup(s->client_ca_pem);
	if (s->rh_ca_pem != NULL)
		return cu_strdup(s->rh_ca_pem);
	return NULL;
}

/* k8s.io/apiserver's health endpoints (no checks of their own here). */
static void healthy(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	(void)ctl_http_reply(resp, 200, "ok");
}

static int serve(ctl_vauth *v, cu_error *err)
{
	struct ctl_httpd_opts o;
	struct ctl_mauth_opts mo;
	char *cert = NULL, *key = NULL, *trust = trust_pem(&v->set);
	int rc;

	rc = serving_pair(v, &cert, &key, err);
	memset(&o, 0, sizeof(o));
	o.name = "visibility";
	o.listen = v->listen;
	o.cert_pem = cert;
	o.key_pem = key;
	o.client_ca_pem = trust;
	o.tls_priorities = v->tls_priorities;
	o.per_ip_limit = CTL_HTTPD_AUTH_PER_IP_LIMIT;
	if (rc == CU_OK)
		rc = ctl_httpd_new(&v->srv, v->loop, &o, err);
	cu_free(cert);
	if (key != NULL) {
		memset(key, 0, strlen(key));
		cu_free(key);
	}
	cu_free(trust);
	memset(&mo, 0, sizeof(mo));
	mo.name = "visibility";
	mo.authn_ttl_ns = mo.allow_ttl_ns = mo.deny_ttl_ns = CTL_VAUTH_TTL_NS;
	mo.apiserver = true;
	mo.identify = identify;
	mo.attributes = attributes;
	mo.payload = v;
	if (rc == CU_OK)
		rc = ctl_vis_mount(v->vis, v->srv, err);
	if (rc == CU_OK)
		rc =
		    ctl_httpd_route(v->srv, "GET", "/healthz", healthy, v, err);
	if (rc == CU_OK)
		rc = ctl_httpd_route(v->srv, "GET", "/readyz", healthy, v, err);
	if (rc == CU_OK)
		rc = ctl_httpd_route(v->srv, "GET", "/livez", healthy, v, err);
	if (rc == CU_OK)
		rc = ctl_mauth_new_opts(&v->mauth, v->reviews, &mo, err);
	if (rc == CU_OK)
		rc = ctl_mauth_mount(v->mauth, v->srv, err);
	if (rc == CU_OK)
		rc = ctl_httpd_start(v->srv, err);
	if (rc == CU_OK)
		cu_info("visibility: serving %s on :%u (front proxy %s, client "
			"CA %s)",
		    CTL_VIS_GROUP, (unsigned)ctl_httpd_port(v->srv),
		    v->set.rh_ca_pem ? "trusted" : "none",
		    v->set.client_ca_pem ? "trusted" : "none");
	return rc;
}

static void on_configmap(const struct api_response *resp, void *payload);

static bool same_pem(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int read_configmap(ctl_vauth *v, cu_error *err)
{
	return api_request(&v->cm_req, v->client, "GET",
	    "/api/v1/namespaces/" CTL_VAUTH_CONFIGMAP_NS
	    "/configmaps/" CTL_VAUTH_CONFIGMAP,
	    NULL, NULL, on_configmap, v, err);
}

static void on_retry(struct ev_loop *loop, ev_timer *t, int revents)
{
	ctl_vauth *v = t->data;
	cu_error err;

	(void)loop;
	(void)revents;
	cu_error_clear(&err);
	if (read_configmap(v, &err) != CU_OK) {
		cu_errorf("visibility: %s", err.msg);
		if (v->failed != NULL)
			v->failed(&err, v->payload);
	}
}

/* A periodic read while serving: new settings replace the old ones (a
 * rotated CA, other allowed names); a failed read keeps them. */
static void refreshed(ctl_vauth *v, const struct api_response *resp)
{
	struct ctl_vauth_settings set;
	cu_error err;

	ev_timer_set(&v->retry, v->refresh_s, 0.);
	ev_timer_start(v->loop, &v->retry);
	if (resp->err != CU_OK) {
		cu_debug(
		    "visibility: ConfigMap %s/%s: %d %s; the settings read "
		    "before stay",
		    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP, resp->code,
		    resp->message);
		return;
	}
	cu_error_clear(&err);
	if (ctl_vauth_settings_from(&set, resp->body, &err) != CU_OK) {
		cu_warn(
		    "visibility: %s; the settings read before stay", err.msg);
		return;
	}
	if (!same_pem(set.rh_ca_pem, v->set.rh_ca_pem) ||
	    !same_pem(set.client_ca_pem, v->set.client_ca_pem))
		cu_info("visibility: the client CAs of ConfigMap %s/%s changed",
		    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP);
	ctl_vauth_settings_dispose(&v->set);
	v->set = set;
}

static void on_configmap(const struct api_response *resp, void *payload)
{
	ctl_vauth *v = payload;
	cu_error err;
	int rc = CU_OK;

	v->cm_req = NULL;
	if (resp->canceled)
		return;
	cu_error_clear(&err);
	if (v->srv != NULL) {
		refreshed(v, resp);
		return;
	}
	if (resp->err != CU_OK && resp->err != CU_ENOTFOUND &&
	    resp->err != CU_EDENIED) {
		/* The API server is not answering yet (the informers report
		 * it): read again later; nothing is served meanwhile. */
		cu_debug("visibility: ConfigMap %s/%s: %d %s; again in %.0f s",
		    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP, resp->code,
		    resp->message, v->backoff);
		ev_timer_set(&v->retry, v->backoff, 0.);
		ev_timer_start(v->loop, &v->retry);
		v->backoff = v->backoff * 2 > 30 ? 30 : v->backoff * 2;
		return;
	}
	if (resp->err == CU_OK)
		rc = ctl_vauth_settings_from(&v->set, resp->body, &err);
	else
		cu_warn("visibility: cannot read ConfigMap %s/%s (%d %s): "
			"only bearer tokens authenticate",
		    CTL_VAUTH_CONFIGMAP_NS, CTL_VAUTH_CONFIGMAP, resp->code,
		    resp->message);
	if (rc == CU_OK)
		rc = serve(v, &err);
	if (rc == CU_OK) {
		ev_timer_set(&v->retry, v->refresh_s, 0.);
		ev_timer_start(v->loop, &v->retry);
	}
	if (rc != CU_OK) {
		cu_errorf(
		    "visibility: unable to start the server: %s", err.msg);
		if (v->failed != NULL)
			v->failed(&err, v->payload);
	}
}

int ctl_vauth_start(ctl_vauth **out, struct ev_loop *loop, api_client *client,
    const struct ctl_vauth_opts *o, cu_error *err)
{
	ctl_vauth *v = cu_calloc(1, sizeof(*v));
	int rc;

	*out = NULL;
	if (v == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	v->loop = loop;
	ev_init(&v->retry, on_retry);
	v->retry.data = v;
	v->backoff = 1;
	v->refresh_s = o->refresh_s > 0 ? o->refresh_s : CTL_VAUTH_REFRESH_S;
	v->client = client;
	v->reviews = o->review_client != NULL ? o->review_client : client;
	v->vis = o->vis;
	v->failed = o->failed;
	v->payload = o->payload;
	v->listen = cu_strdup(o->listen);
	v->namespace_ =
	    cu_strdup(o->namespace_ != NULL ? o->namespace_ : "cueue-system");
	v->cert_dir =
	    cu_strdup(o->cert_dir != NULL ? o->cert_dir : CTL_VAUTH_CERT_DIR);
	if (o->tls_priorities != NULL)
		v->tls_priorities = cu_strdup(o->tls_priorities);
	if (v->listen == NULL || v->namespace_ == NULL || v->cert_dir == NULL ||
	    (o->tls_priorities != NULL && v->tls_priorities == NULL)) {
		ctl_vauth_free(v);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	rc = read_configmap(v, err);
	if (rc != CU_OK) {
		ctl_vauth_free(v);
		return rc;
	}
	*out = v;
	return CU_OK;
}

uint16_t ctl_vauth_port(const ctl_vauth *v)
{
	return v != NULL && v->srv != NULL ? ctl_httpd_port(v->srv) : 0;
}

const struct ctl_vauth_settings *ctl_vauth_settings(const ctl_vauth *v)
{
	return &v->set;
}

void ctl_vauth_free(ctl_vauth *v)
{
	if (v == NULL)
		return;
	if (v->cm_req != NULL)
		api_request_cancel(v->cm_req);
	if (v->loop != NULL)
		ev_timer_stop(v->loop, &v->retry);
	ctl_mauth_free(v->mauth);
	ctl_httpd_free(v->srv);
	ctl_vauth_settings_dispose(&v->set);
	cu_free(v->listen);
	cu_free(v->namespace_);
	cu_free(v->cert_dir);
	cu_free(v->tls_priorities);
	cu_free(v);
}
