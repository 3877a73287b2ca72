/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client_config.c - where the API client's options come from: a
 * kubeconfig file (current-context, its cluster and user, inline *-data
 * fields base64-decoded) or the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT and the files under the service-account
 * directory). See api/client.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/json.h"
#include "api/client.h"
#include "api/yaml.h"

#define SMALL_FILE ((size_t)64 << 10)

void api_client_opts_dispose(struct api_client_opts *o)
{
	if (o == NULL)
		return;
	/* loader-filled: every string was allocated here (client.h) */
	cu_free((void *)o->server);
	cu_free((void *)o->ca_file);
	cu_free((void *)o->ca_pem);
	cu_free((void *)o->token);
	cu_free((void *)o->token_file);
	cu_free((void *)o->client_cert_file);
	cu_free((void *)o->client_key_file);
	cu_free((void *)o->client_cert_pem);
	cu_free((void *)o->client_key_pem);
	cu_free((void *)o->user_agent);
	cu_free((void *)o->namespace_name);
	memset(o, 0, sizeof(*o));
}

/*
 * Decode a kubeconfig *-data member into a NUL-terminated string [owned:
 * cu_free]. Lenient as before: whitespace is skipped, the URL-safe
 * alphabet and missing padding are accepted, and anything after the first
 * '=' is ignored; the text is brought to standard padded form and decoded
 * by api_base64_decode. Errors name the field and the offset in `in`.
 */
static int b64_decode(
    const char *in, const char *field, char **out, cu_error *err)
{
	size_t n = strlen(in), i, j = 0, len, bad;
	char *norm = cu_malloc(n + 4);
	size_t *pos = cu_malloc((n + 4) * sizeof(*pos));
	int rc;

	*out = NULL;
	if (norm == NULL || pos == NULL) {
		cu_free(norm);
		cu_free(pos);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	for (i = 0; i < n && in[i] != '='; i++) {
		if (isspace((unsigned char)in[i]))
			continue;
		pos[j] = i;
		norm[j++] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	}
	while (j % 4 != 0) {
		pos[j] = i;
		norm[j++] = '=';
	}
	norm[j] = '\0';
	rc = api_base64_decode(norm, out, &len, &bad);
	if (rc == CU_EPARSE)
		rc = cu_error_set(err, CU_EPARSE,
		    "%s: invalid base64 at offset %zu", field,
		    bad < j ? pos[bad] : n);
	else if (rc == CU_ENOMEM)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	cu_free(norm);
	cu_free(pos);
	return rc;
}

static json_t *find_named(json_t *arr, const char *name, const char *member)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));

		if (n != NULL && strcmp(n, name) == 0)
			return json_object_get(e, member);
	}
	return NULL;
}

static const char *str_of(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* A path from the kubeconfig, relative to its directory [owned]. */
static char *resolve(const char *dir, const char *p)
{
	if (p[0] == '/' || dir == NULL)
		return cu_strdup(p);
	return cu_asprintf("%s/%s", dir, p);
}

/* Set *dst from a file path member or a base64 *-data member. */
static int file_or_data(json_t *obj, const char *file_key, const char *data_key,
    const char *dir, const char **file_dst, const char **pem_dst, cu_error *err)
{
	const char *data = str_of(obj, data_key);
	const char *file = str_of(obj, file_key);
	char *v;
	int rc;

	if (data != NULL) {
		rc = b64_decode(data, data_key, &v, err);
		if (rc != CU_OK)
			return rc;
		*pem_dst = v;
	} else if (file != NULL) {
		v = resolve(dir, file);
		if (v == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		*file_dst = v;
	}
	return CU_OK;
}

int api_client_opts_from_kubeconfig(
    struct api_client_opts *out, const char *path, cu_error *err)
{
	return api_client_opts_from_kubeconfig_context(out, path, NULL, err);
}

int api_client_opts_from_kubeconfig_context(struct api_client_opts *out,
    const char *path, const char *context, cu_error *err)
{
	json_t *root = NULL, *ctx, *cluster, *user = NULL, *v;
	const char *cur, *cname, *uname, *s;
	char *dir = NULL, *slash;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = api_yaml_load_file(&root, NULL, path, NULL, err);
	if (rc != CU_OK)
		return rc;
	cur = context != NULL && context[0] != '\0'
		  ? context
		  : str_of(root, "current-context");
	if (cur == NULL) {
		rc = cu_error_set(
		    err, CU_EINVAL, "%s: no current-context", path);
		goto out;
	}
	ctx = find_named(json_object_get(root, "contexts"), cur, "context");
	if (!json_is_object(ctx)) {
		rc = cu_error_set(
		    err, CU_EINVAL, "%s: context \"%s\" not found", path, cur);
		goto out;
	}
	cname = str_of(ctx, "cluster");
	cluster = cname ? find_named(json_object_get(root, "clusters"), cname,
			      "cluster")
			: NULL;
	if (!json_is_object(cluster) || str_of(cluster, "server") == NULL) {
		rc = cu_error_set(err, CU_EINVAL,
		    "%s: cluster \"%s\" not found or has no server", path,
		    cname ? cname : "");
		goto out;
	}
	uname = str_of(ctx, "user");
	if (uname != NULL) {
		user =
		    find_named(json_object_get(root, "users"), uname, "user");
		if (!json_is_object(user)) {
			rc = cu_error_set(err, CU_EINVAL,
			    "%s: user \"%s\" not found", path, uname);
			goto out;
		}
	}
	/* Credential plugins are not run: refusing beats sending every
	 * request unauthenticated. */
	if (user != NULL &&
	    (json_object_get(user, "exec") != NULL ||
		json_object_get(user, "auth-provider") != NULL)) {
		rc = cu_error_set(err, CU_EINVAL,
		    "%s: user \"%s\": %s is not supported by cueue (requests "
		    "would go out unauthenticated); use token, tokenFile or "
		    "client-certificate and client-key",
		    path, uname,
		    json_object_get(user, "exec") != NULL
			? "users[].user.exec (credential plugin)"
			: "users[].user.auth-provider");
		goto out;
	}
	dir = cu_strdup(path);
	if (dir == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	else {
		cu_free(dir);
		dir = NULL;
	}
	out->server = cu_strdup(str_of(cluster, "server"));
	v = json_object_get(cluster, "insecure-skip-tls-verify");
	out->insecure =
	    json_is_true(v) ||
	    (json_is_string(v) && strcmp(json_string_value(v), "true") == 0);
	rc = file_or_data(cluster, "certificate-authority",
	    "certificate-authority-data", dir, &out->ca_file, &out->ca_pem,
	    err);
	if (rc == CU_OK && out->insecure &&
	    (out->ca_file != NULL || out->ca_pem != NULL))
		rc = cu_error_set(err, CU_EINVAL,
		    "%s: cluster \"%s\": certificate-authority%s with "
		    "insecure-skip-tls-verify: true: specifying a root "
		    "certificates file with the insecure flag is not allowed",
		    path, cname, out->ca_pem != NULL ? "-data" : "");
	if (rc == CU_OK && user != NULL)
		rc = file_or_data(user, "client-certificate",
		    "client-certificate-data", dir, &out->client_cert_file,
		    &out->client_cert_pem, err);
	if (rc == CU_OK && user != NULL)
		rc = file_or_data(user, "client-key", "client-key-data", dir,
		    &out->client_key_file, &out->client_key_pem, err);
	if (rc != CU_OK)
		goto out;
	if (user != NULL && (s = str_of(user, "token")) != NULL)
		out->token = cu_strdup(s);
	if (user != NULL && (s = str_of(user, "tokenFile")) != NULL)
		out->token_file = resolve(dir, s);
	s = str_of(ctx, "namespace");
	out->namespace_name = cu_strdup(s != NULL ? s : "default");
	if (out->server == NULL || out->namespace_name == NULL ||
	    (user != NULL && str_of(user, "token") && out->token == NULL) ||
	    (user != NULL && str_of(user, "tokenFile") &&
		out->token_file == NULL))
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
out:
	if (rc != CU_OK)
		api_client_opts_dispose(out);
	cu_free(dir);
	json_decref(root);
	return rc;
}

/* Trimmed first line of a small file [owned], or NULL (absent/empty). */
static char *read_trimmed(const char *path)
{
	FILE *f = fopen(path, "rb");
	char buf[4096], *s, *e;
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = buf;
	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e == s)
		return NULL;
	return cu_strndup(s, (size_t)(e - s));
}

int api_client_opts_in_cluster(
    struct api_client_opts *out, const char *dir, cu_error *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *pod_ns = getenv("POD_NAMESPACE");
	char *tok, *ca, *nsfile;
	FILE *f;
	int rc = CU_OK;

	memset(out, 0, sizeof(*out));
	if (dir == NULL)
		dir = API_SA_DIR;
	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "not in a cluster: KUBERNETES_SERVICE_HOST and "
		    "KUBERNETES_SERVICE_PORT must be set");
	out->server = strchr(host, ':') != NULL && host[0] != '['
			  ? cu_asprintf("https://[%s]:%s", host, port)
			  : cu_asprintf("https://%s:%s", host, port);
	out->token_file = cu_asprintf("%s/token", dir);
	ca = cu_asprintf("%s/ca.crt", dir);
	nsfile = cu_asprintf("%s/namespace", dir);
	if (out->server == NULL || out->token_file == NULL || ca == NULL ||
	    nsfile == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	tok = read_trimmed(out->token_file);
	if (tok == NULL) {
		rc = cu_error_set(err,
		    access(out->token_file, F_OK) == 0 ? CU_EIO : CU_ENOTFOUND,
		    "%s: missing or empty service-account token",
		    out->token_file);
		goto out;
	}
	cu_free(tok);
	f = fopen(ca, "rb");
	if (f != NULL) {
		fclose(f);
		out->ca_file = ca;
		ca = NULL;
	}
	if (pod_ns != NULL && pod_ns[0] != '\0')
		out->namespace_name = cu_strdup(pod_ns);
	else
		out->namespace_name = read_trimmed(nsfile);
	if (out->namespace_name == NULL)
		out->namespace_name = cu_strdup("default");
	if (out->namespace_name == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
out:
	cu_free(ca);
	cu_free(nsfile);
	if (rc != CU_OK)
		api_client_opts_dispose(out);
	return rc;
}

/* Say one failed attempt: through note, else as a warning. */
static void attempt_failed(
    api_client_note_fn note, void *payload, const char *what, const char *why)
{
	char line[CU_ERROR_MSG_MAX + 128];

	snprintf(line, sizeof(line), "client config: %s: %s", what, why);
	if (note != NULL)
		note(line, payload);
	else
		cu_warn("%s", line);
}

int api_client_opts_resolve(struct api_client_opts *out, const char *kubeconfig,
    const char *sa_dir, api_client_note_fn note, void *payload, char **source,
    cu_error *err)
{
	const char *env = getenv("KUBECONFIG");
	const char *home = getenv("HOME");
	char *path = NULL, *in_cluster_why = NULL;
	cu_error e;
	int rc;

	memset(out, 0, sizeof(*out));
	if (source != NULL)
		*source = NULL;
	/* 1. --kubeconfig: that file or nothing. */
	if (kubeconfig != NULL && kubeconfig[0] != '\0') {
		rc = api_client_opts_from_kubeconfig(out, kubeconfig, err);
		if (rc != CU_OK)
			return rc;
		if (source != NULL)
			*source = cu_asprintf("--kubeconfig %s", kubeconfig);
		return CU_OK;
	}
	/* 2. KUBECONFIG: the first file of the list that exists (client-go
	 * merges them; cueue reads one), and nothing else. */
	if (env != NULL && env[0] != '\0') {
		const char *p = env, *colon;

		while (*p != '\0') {
			colon = strchr(p, ':');
			cu_free(path);
			path = colon ? cu_strndup(p, (size_t)(colon - p))
				     : cu_strdup(p);
			if (path == NULL)
				return cu_error_set(
				    err, CU_ENOMEM, "out of memory");
			if (path[0] != '\0' && access(path, F_OK) == 0)
				break;
			if (path[0] != '\0')
				attempt_failed(note, payload, "KUBECONFIG",
				    "no such file: skipped");
			cu_free(path);
			path = NULL;
			p = colon ? colon + 1 : p + strlen(p);
		}
		if (path == NULL)
			return cu_error_set(err, CU_ENOTFOUND,
			    "KUBECONFIG=%s: none of its files exists", env);
		rc = api_client_opts_from_kubeconfig(out, path, err);
		if (rc == CU_OK && source != NULL)
			*source = cu_asprintf("KUBECONFIG %s", path);
		cu_free(path);
		return rc;
	}
	/* 3. In a cluster: the service account. */
	rc = api_client_opts_in_cluster(out, sa_dir, &e);
	if (rc == CU_OK) {
		if (source != NULL)
			*source = cu_strdup("in-cluster service account");
		return CU_OK;
	}
	attempt_failed(note, payload, "in-cluster", e.msg);
	in_cluster_why = cu_strdup(e.msg);
	/* 4. $HOME/.kube/config. */
	if (home == NULL || home[0] == '\0') {
		attempt_failed(
		    note, payload, "~/.kube/config", "HOME is not set");
		rc = cu_error_set(err, CU_ENOTFOUND,
		    "no API server configuration: no --kubeconfig, no "
		    "KUBECONFIG, not in a cluster (%s), HOME not set",
		    in_cluster_why ? in_cluster_why : "out of memory");
		cu_free(in_cluster_why);
		return rc;
	}
	path = cu_asprintf("%s/.kube/config", home);
	if (path == NULL) {
		cu_free(in_cluster_why);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	rc = api_client_opts_from_kubeconfig(out, path, &e);
	if (rc == CU_OK) {
		if (source != NULL)
			*source = cu_strdup(path);
	} else {
		attempt_failed(note, payload, path, e.msg);
		rc = cu_error_set(err, rc,
		    "no API server configuration: no --kubeconfig, no "
		    "KUBECONFIG, not in a cluster (%s), %s: %s",
		    in_cluster_why ? in_cluster_why : "out of memory", path,
		    e.msg);
	}
	cu_free(path);
	cu_free(in_cluster_why);
	return rc;
}
