/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/names.c - the name rules kube-apiserver applies per
 * kind on top of (or instead of) the DNS-1123 subdomain of ObjectMeta:
 * a Service's name is a DNS-1035 label (ValidateServiceName); RBAC names
 * are path segments (ValidateRBACName: not "." or "..", no '/' or '%');
 * a CronJob's name has at most 52 characters (its Jobs get an 11
 * character suffix); a Job's at most 63 unless it has a manual selector,
 * because its pod template gets the labels batch.kubernetes.io/job-name
 * and job-name with the name as value, and a label value has at most 63.
 */
#include <ctype.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define DNS1035_MSG                                                            \
	"a DNS-1035 label must consist of lower case alphanumeric "            \
	"characters or '-', start with an alphabetic character, and end "      \
	"with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "      \
	"regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

static bool is_kind(
    const struct as_kind *k, const char *group, const char *plural)
{
	return !(k->flags & AS_CUSTOM) && strcmp(k->group, group) == 0 &&
	       strcmp(k->plural, plural) == 0;
}

/* One cause more (the first builds the 422). */
static void cause(struct as_resp *resp, const struct as_kind *k,
    const char *name, int *n, const char *field, const char *value,
    const char *msg)
{
	if ((*n)++ == 0)
		as_resp_invalid(resp, k, name, field,
		    "Invalid value: \"%s\": %s", value, msg);
	else
		as_resp_invalid_add(
		    resp, field, "Invalid value: \"%s\": %s", value, msg);
}

static bool dns1035_label(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || !islower((unsigned char)s[0]) || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}

static int path_segment(
    const struct as_kind *k, const char *name, struct as_resp *resp)
{
	int n = 0;

	if (strcmp(name, ".") == 0)
		cause(
		    resp, k, name, &n, "metadata.name", name, "may not be '.'");
	if (strcmp(name, "..") == 0)
		cause(resp, k, name, &n, "metadata.name", name,
		    "may not be '..'");
	if (strchr(name, '/') != NULL)
		cause(resp, k, name, &n, "metadata.name", name,
		    "may not contain '/'");
	if (strchr(name, '%') != NULL)
		cause(resp, k, name, &n, "metadata.name", name,
		    "may not contain '%'");
	return n == 0 ? 1 : 0;
}

int as_kind_name_rule(const struct as_kind *k, json_t *obj, const char *name,
    struct as_resp *resp)
{
	int n = 0;

	if (strcmp(k->group, "rbac.authorization.k8s.io") == 0 &&
	    !(k->flags & AS_CUSTOM))
		return path_segment(k, name, resp);
	if (is_kind(k, "", "services")) {
		if (strlen(name) > 63)
			cause(resp, k, name, &n, "metadata.name", name,
			    "must be no more than 63 characters");
		if (!dns1035_label(name))
			cause(resp, k, name, &n, "metadata.name", name,
			    DNS1035_MSG);
		return n == 0 ? 1 : 0;
	}
	if (!as_valid_dns_subdomain(name))
		return -1; /* the generic rule says it */
	if (is_kind(k, "batch", "cronjobs") && strlen(name) > 52) {
		cause(resp, k, name, &n, "metadata.name", name,
		    "must be no more than 52 characters");
		return 0;
	}
	if (is_kind(k, "batch", "jobs") && strlen(name) > 63 &&
	    !json_is_true(as_jget(obj, "spec.manualSelector"))) {
		cause(resp, k, name, &n, "spec.template.labels", name,
		    "must be no more than 63 characters");
		cause(resp, k, name, &n, "spec.template.labels", name,
		    "must be no more than 63 characters");
		return 0;
	}
	return -1;
}
