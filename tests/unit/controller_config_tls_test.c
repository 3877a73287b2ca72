/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_tls_test.c - the Configuration's `tls`
 * section: minVersion and cipherSuites become the webhook server's GnuTLS
 * priorities (ctl_httpd_tls_priorities); unknown and insecure values are
 * refused with the field named; the defaults allow TLS 1.2 only with
 * ECDHE and AEAD ciphers.
 */
#include <criterion/criterion.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <string.h>

#include "controller/config.h"
#include "controller/httpd.h"

#define HDR                                                                    \
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"                          \
	"kind: Configuration\n"

static int load_str(struct ctl_config *c, const char *yaml, cu_error *err)
{
	return ctl_config_load_buffer(c, yaml, strlen(yaml), "t.yaml", err);
}

/* The TLS 1.2 suites GnuTLS enables for `prio`, as "name name ...", and
 * whether TLS 1.2 / 1.3 are enabled. */
static void suites_of(
    const char *prio, char *out, size_t size, bool *v12, bool *v13)
{
	gnutls_priority_t p;
	const char *errpos = NULL;
	const unsigned *protos;
	unsigned idx, i;
	int n;

	out[0] = '\0';
	*v12 = *v13 = false;
	cr_assert_eq(gnutls_priority_init(&p, prio, &errpos), 0,
	    "GnuTLS refuses %s at %s", prio, errpos ? errpos : "?");
	for (i = 0;; i++) {
		unsigned char id[2];
		gnutls_kx_algorithm_t kx;
		gnutls_cipher_algorithm_t ci;
		gnutls_mac_algorithm_t mac;
		gnutls_protocol_t min;
		const char *name;
		int rc = gnutls_priority_get_cipher_suite_index(p, i, &idx);

		if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (rc != 0)
			continue;
		name = gnutls_cipher_suite_info(idx, id, &kx, &ci, &mac, &min);
		if (name != NULL)
			snprintf(
			    out + strlen(out), size - strlen(out), "%s ", name);
	}
	n = gnutls_priority_protocol_list(p, &protos);
	for (i = 0; n > 0 && i < (unsigned)n; i++) {
		*v12 |= protos[i] == GNUTLS_TLS1_2;
		*v13 |= protos[i] == GNUTLS_TLS1_3;
	}
	gnutls_priority_deinit(p);
}

/* Every TLS 1.2 suite in `list` uses ECDHE and an AEAD cipher. */
static void assert_ecdhe_aead_only(const char *list)
{
	const char *s = list;

	while (*s != '\0') {
		size_t n = strcspn(s, " ");
		char name[128];

		cr_assert_lt(n, sizeof(name));
		memcpy(name, s, n);
		name[n] = '\0';
		s += n + (s[n] == ' ');
		if (strncmp(name, "TLS_ECDHE_", 10) != 0) {
			/* TLS 1.3 suites have no key exchange in the name. */
			cr_assert(
			    strcmp(name, "TLS_AES_128_GCM_SHA256") == 0 ||
				strcmp(name, "TLS_AES_256_GCM_SHA384") == 0 ||
				strcmp(name, "TLS_CHACHA20_POLY1305_SHA256") ==
				    0,
			    "non-ECDHE suite %s in %s", name, list);
			continue;
		}
		cr_assert(strstr(name, "GCM") || strstr(name, "CHACHA20"),
		    "non-AEAD suite %s", name);
		cr_assert_null(strstr(name, "CBC"), "CBC suite %s", name);
	}
}

Test(httpd_tls, default_priorities_are_ecdhe_aead_and_tls13)
{
	char list[4096];
	bool v12, v13;

	suites_of(CTL_HTTPD_TLS_PRIORITIES, list, sizeof(list), &v12, &v13);
	cr_assert(v12 && v13);
	assert_ecdhe_aead_only(list);
	cr_assert(strstr(list, "TLS_ECDHE_RSA_AES_128_GCM_SHA256"), "%s", list);
	cr_assert(
	    strstr(list, "TLS_ECDHE_ECDSA_AES_256_GCM_SHA384"), "%s", list);
	cr_assert(strstr(list, "TLS_AES_128_GCM_SHA256"), "%s", list);
	cr_assert_null(strstr(list, "TLS_RSA_"), "%s", list);
	cr_assert_null(strstr(list, "TLS_DHE_"), "%s", list);
}

Test(ctl_config_tls, no_section_keeps_the_defaults)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c, HDR, &err), CU_OK, "%s", err.msg);
	cr_assert_null(c.tls.priorities);
	ctl_config_dispose(&c);
}

Test(ctl_config_tls, min_version_13_disables_tls12)
{
	struct ctl_config c;
	cu_error err;
	char list[4096];
	bool v12, v13;
	size_t i;

	cr_assert_eq(load_str(&c,
			 HDR "tls:\n"
			     "  minVersion: VersionTLS13\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not_null(c.tls.priorities);
	suites_of(c.tls.priorities, list, sizeof(list), &v12, &v13);
	cr_assert(!v12 && v13, "%s", c.tls.priorities);
	/* The section is honoured, not warned about. */
	for (i = 0; i < c.nwarnings; i++)
		cr_assert_null(
		    strstr(c.warnings[i], "tls"), "%s", c.warnings[i]);
	ctl_config_dispose(&c);
}

Test(ctl_config_tls, cipher_suites_restrict_tls12)
{
	struct ctl_config c;
	cu_error err;
	char list[4096];
	bool v12, v13;

	cr_assert_eq(
	    load_str(&c,
		HDR "tls:\n"
		    "  minVersion: VersionTLS12\n"
		    "  cipherSuites:\n"
		    "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		    "  - TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256\n",
		&err),
	    CU_OK, "%s", err.msg);
	suites_of(c.tls.priorities, list, sizeof(list), &v12, &v13);
	cr_assert(v12 && v13, "%s", c.tls.priorities);
	assert_ecdhe_aead_only(list);
	cr_assert(strstr(list, "TLS_ECDHE_RSA_AES_128_GCM_SHA256"), "%s", list);
	cr_assert(strstr(list, "TLS_ECDHE_RSA_CHACHA20_POLY1305"), "%s", list);
	cr_assert_null(strstr(list, "ECDSA"), "%s", list);
	cr_assert_null(strstr(list, "AES_256"), "%s", list);
	ctl_config_dispose(&c);
}

static void refused(const char *yaml, const char *want)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c, yaml, &err), CU_EINVAL, "%s accepted", yaml);
	cr_assert(strstr(err.msg, want) != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, "t.yaml: line ") != NULL, "%s", err.msg);
	cr_assert_null(c.tls.priorities);
	ctl_config_dispose(&c);
}

Test(ctl_config_tls, insecure_and_unknown_values_are_refused)
{
	refused(HDR "tls:\n  minVersion: VersionTLS11\n",
	    "tls.minVersion: Unsupported value: \"VersionTLS11\": insecure");
	refused(HDR "tls:\n  minVersion: TLS1.2\n",
	    "tls.minVersion: Unsupported value: \"TLS1.2\": unknown");
	refused(HDR "tls:\n  cipherSuites:\n"
		    "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		    "  - TLS_RSA_WITH_AES_128_GCM_SHA256\n",
	    "tls.cipherSuites[1]: Unsupported value: "
	    "\"TLS_RSA_WITH_AES_128_GCM_SHA256\": insecure");
	refused(HDR "tls:\n  cipherSuites:\n"
		    "  - TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA\n",
	    "tls.cipherSuites[0]: Unsupported value: "
	    "\"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA\": insecure");
	refused(HDR "tls:\n  cipherSuites:\n"
		    "  - ECDHE-RSA-AES128-GCM-SHA256\n",
	    "tls.cipherSuites[0]: Unsupported value: "
	    "\"ECDHE-RSA-AES128-GCM-SHA256\": unknown");
	/* Only TLS 1.3 names while TLS 1.2 is allowed: no TLS 1.2 suite. */
	refused(HDR "tls:\n  cipherSuites:\n  - TLS_AES_128_GCM_SHA256\n",
	    "tls.cipherSuites: Invalid value: no TLS 1.2 suite");
}

Test(ctl_config_tls, tls13_names_with_min_version_13)
{
	char *prio = NULL;
	const char *names[] = {"TLS_AES_256_GCM_SHA384"};
	char list[4096];
	bool v12, v13;
	cu_error err;

	cr_assert_eq(
	    ctl_httpd_tls_priorities("VersionTLS13", names, 1, &prio, &err),
	    CU_OK, "%s", err.msg);
	suites_of(prio, list, sizeof(list), &v12, &v13);
	cr_assert(!v12 && v13, "%s", prio);
	cr_assert_str_eq(list, "TLS_AES_256_GCM_SHA384 ", "%s", prio);
	cu_free(prio);
}

Test(ctl_config_tls, curve_preferences_become_gnutls_groups_in_order)
{
	struct ctl_config c;
	gnutls_priority_t p;
	const unsigned *groups = NULL;
	const char *errpos = NULL;
	cu_error err;
	int n;

	cr_assert_eq(
	    load_str(&c, HDR "tls:\n  curvePreferences: [29, 23]\n", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not_null(c.tls.priorities);
	cr_assert(strstr(c.tls.priorities,
		      ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1") != NULL,
	    "%s", c.tls.priorities);
	cr_assert_eq(gnutls_priority_init(&p, c.tls.priorities, &errpos), 0,
	    "GnuTLS refuses %s at %s", c.tls.priorities, errpos);
	n = gnutls_priority_group_list(p, &groups);
	cr_assert_eq(n, 2, "%d groups", n);
	cr_assert_eq(groups[0], GNUTLS_GROUP_X25519);
	cr_assert_eq(groups[1], GNUTLS_GROUP_SECP256R1);
	gnutls_priority_deinit(p);
	ctl_config_dispose(&c);
}

Test(ctl_config_tls, unknown_and_unavailable_curves_are_refused)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(
	    load_str(&c, HDR "tls:\n  curvePreferences: [23, 0]\n", &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "line 4: tls.curvePreferences[1]: Invalid "
				  "value: 0: unsupported curve ID") != NULL,
	    "%s", err.msg);
	cr_assert_eq(
	    load_str(&c, HDR "tls:\n  curvePreferences: [4588]\n", &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "post-quantum hybrid group") != NULL, "%s",
	    err.msg);
}
