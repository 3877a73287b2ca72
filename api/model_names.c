/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_names.c - the names and priorities Kueue derives for a job's
 * Workload. Both must match Kueue exactly: the name because a Kueue and a
 * cueue deployment (or a restarted cueue) must find the same Workload for
 * a job, the priority because it orders the queues.
 */
#include <inttypes.h>
#include <string.h>

#include <openssl/evp.h>

#include "api/model_internal.h"

#define HASH_CHARS 5

static int sha1_hex(
    const char *const *parts, size_t n, char *hex, cu_error *err)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1;
	size_t k;

	for (k = 0; ok && k < n; k++) {
		if (k > 0)
			ok = EVP_DigestUpdate(ctx, "\n", 1) == 1;
		if (ok)
			ok = EVP_DigestUpdate(
				 ctx, parts[k], strlen(parts[k])) == 1;
	}
	if (ok)
		ok = EVP_DigestFinal_ex(ctx, md, &len) == 1;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return cu_error_set(
		    err, CU_EIO, "workload name: OpenSSL SHA-1 failed");
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * len] = '\0';
	return CU_OK;
}

int api_sha1_hex(const char *s, char hex[API_SHA1_HEX_LEN], cu_error *err)
{
	char full[2 * EVP_MAX_MD_SIZE + 1];
	int rc = sha1_hex(&s, 1, full, err);

	if (rc == CU_OK) {
		memcpy(hex, full, API_SHA1_HEX_LEN - 1);
		hex[API_SHA1_HEX_LEN - 1] = '\0';
	}
	return rc;
}

int api_workload_name(const char *kind, const char *group, const char *name,
    const char *uid, int64_t generation, size_t max, char **out, cu_error *err)
{
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	char gen[24];
	const char *parts[5] = {kind, group, name, uid, gen};
	size_t prefix_max, klen, nlen, plen, i;
	char *s;
	int rc;

	*out = NULL;
	if (max < HASH_CHARS + 2)
		return cu_error_set(err, CU_EINVAL,
		    "workload name: maximum length %zu is below %d", max,
		    HASH_CHARS + 2);
	snprintf(gen, sizeof(gen), "%" PRId64, generation);
	rc = sha1_hex(parts, generation >= 0 ? 5 : 4, hex, err);
	if (rc != CU_OK)
		return rc;
	prefix_max = max - 1 - HASH_CHARS;
	klen = strlen(kind);
	nlen = strlen(name);
	/* Go truncates the "kind-name" prefix by bytes. */
	plen = klen + 1 + nlen;
	if (plen > prefix_max)
		plen = prefix_max;
	s = cu_malloc(plen + 1 + HASH_CHARS + 1);
	if (s == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload name: out of memory");
	for (i = 0; i < plen; i++) {
		char c;

		if (i < klen)
			c = kind[i];
		else if (i == klen)
			c = '-';
		else
			c = name[i - klen - 1];
		/* strings.ToLower on the kind; API kinds are ASCII */
		if (i < klen && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		s[i] = c;
	}
	s[plen] = '-';
	memcpy(s + plen + 1, hex, HASH_CHARS);
	s[plen + 1 + HASH_CHARS] = '\0';
	*out = s;
	return CU_OK;
}

/* ---- priority ----------------------------------------------------------- */

static int set_result(struct api_priority *out, enum api_priority_source src,
    const char *name, int32_t value, cu_error *err)
{
	out->source = src;
	out->value = value;
	out->class_name = NULL;
	if (name != NULL) {
		out->class_name = cu_strdup(name);
		if (out->class_name == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "priority: out of memory");
	}
	return CU_OK;
}

static int lookup(int (*fn)(const char *, int32_t *, void *, cu_error *),
    const char *what, const char *name, int32_t *value, void *payload,
    cu_error *err)
{
	cu_error local;
	int rc;

	if (fn == NULL)
		return cu_error_set(err, CU_ENOTFOUND,
		    "%s \"%s\" not found (no lookup)", what, name);
	cu_error_clear(&local);
	rc = fn(name, value, payload, &local);
	if (rc == CU_ENOTFOUND)
		return cu_error_set(err, rc, "%s \"%s\" not found", what, name);
	if (rc != CU_OK)
		return cu_error_set(err, rc, "%s", local.msg);
	return CU_OK;
}

int api_resolve_priority(const struct api_strmap *job_labels,
    const struct api_podsets *ps, const struct api_priority_lookup *lk,
    struct api_priority *out, cu_error *err)
{
	const char *wpc =
	    job_labels ? api_strmap_get(job_labels, API_LABEL_PRIORITY_CLASS)
		       : NULL;
	const char *pc = NULL, *dname = NULL;
	int32_t v = 0;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (wpc != NULL && *wpc != '\0') {
		rc = lookup(lk->wpc, "WorkloadPriorityClass", wpc, &v,
		    lk->payload, err);
		if (rc != CU_OK)
			return rc;
		return set_result(
		    out, API_PRIO_WORKLOAD_PRIORITY_CLASS, wpc, v, err);
	}
	/* Kueue's webhook labels such jobs with the "default" class when it
	 * exists, so it wins over the pod's PriorityClass. */
	if (lk->default_wpc && lk->wpc != NULL) {
		cu_error local;

		cu_error_clear(&local);
		rc = lk->wpc(API_DEFAULT_WPC_NAME, &v, lk->payload, &local);
		if (rc == CU_OK)
			return set_result(out, API_PRIO_WORKLOAD_PRIORITY_CLASS,
			    API_DEFAULT_WPC_NAME, v, err);
		if (rc != CU_ENOTFOUND)
			return cu_error_set(err, rc, "%s", local.msg);
	}
	for (i = 0; ps != NULL && i < ps->n && pc == NULL; i++)
		if (ps->items[i].priority_class_name &&
		    *ps->items[i].priority_class_name)
			pc = ps->items[i].priority_class_name;
	if (pc != NULL) {
		rc = lookup(lk->pc, "PriorityClass", pc, &v, lk->payload, err);
		if (rc != CU_OK)
			return rc;
		return set_result(out, API_PRIO_PRIORITY_CLASS, pc, v, err);
	}
	if (lk->pc_global_default != NULL) {
		cu_error local;

		cu_error_clear(&local);
		rc = lk->pc_global_default(&dname, &v, lk->payload, &local);
		if (rc == CU_OK && dname != NULL)
			return set_result(
			    out, API_PRIO_PRIORITY_CLASS, dname, v, err);
		if (rc != CU_OK && rc != CU_ENOTFOUND)
			return cu_error_set(err, rc, "%s", local.msg);
	}
	return set_result(out, API_PRIO_NONE, NULL, 0, err);
}

int api_workload_set_priority(
    struct api_workload *wl, const struct api_priority *p, cu_error *err)
{
	struct api_priority_class_ref r = {NULL, NULL, NULL};

	if (p->source != API_PRIO_NONE) {
		bool w = p->source == API_PRIO_WORKLOAD_PRIORITY_CLASS;

		r.group = cu_strdup(w ? "kueue.x-k8s.io" : "scheduling.k8s.io");
		r.kind =
		    cu_strdup(w ? "WorkloadPriorityClass" : "PriorityClass");
		r.name = cu_strdup(p->class_name ? p->class_name : "");
		if (!r.group || !r.kind || !r.name) {
			cu_free(r.group);
			cu_free(r.kind);
			cu_free(r.name);
			return cu_error_set(err, CU_ENOMEM,
			    "spec.priorityClassRef: out of memory");
		}
	}
	cu_free(wl->spec.priority_class_ref.group);
	cu_free(wl->spec.priority_class_ref.kind);
	cu_free(wl->spec.priority_class_ref.name);
	wl->spec.priority_class_ref = r;
	wl->spec.has_priority_class_ref = p->source != API_PRIO_NONE;
	wl->spec.has_priority = true;
	wl->spec.priority = p->value;
	return CU_OK;
}
