/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_names_test.c - cueue-apiserver's object names as
 * kube-apiserver's (apimachinery IsDNS1123Subdomain): a dot-separated
 * part longer than 63 characters is valid (only labels have that limit),
 * 253 characters in all are, 254 are not, and parts must start and end
 * with a letter or digit. Per kind, as kube validates them: a Service's
 * name is a DNS-1035 label, RBAC names are path segments (anything but
 * "." and ".." without '/' or '%'), a CronJob's name has at most 52
 * characters and a Job's at most 63 (its pods' job-name labels).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/fixtures.h"

static int create(const char *name)
{
	struct fx_result r;
	int code;

	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap(name, "v"));
	code = r.code;
	fx_result_dispose(&r);
	return code;
}

Test(apiserver_names, dns_subdomain_parts_have_no_length_limit,
    .init = fx_setup, .fini = fx_teardown)
{
	char name[300];

	/* A part of 100 characters. */
	memset(name, 'a', sizeof(name));
	memcpy(name, "x.", 2);
	name[102] = '.';
	name[103] = 'y';
	name[104] = '\0';
	cr_expect_eq(create(name), 201, "a 100-character part");
	/* 253 characters: the limit. */
	memset(name, 'b', 253);
	name[100] = '.';
	name[253] = '\0';
	cr_expect_eq(create(name), 201, "253 characters");
	name[253] = 'b';
	name[254] = '\0';
	cr_expect_eq(create(name), 422, "254 characters");
	cr_expect_eq(create("a.-b"), 422, "a part starting with '-'");
	cr_expect_eq(create("a-.b"), 422, "a part ending with '-'");
	cr_expect_eq(create("a..b"), 422, "an empty part");
	cr_expect_eq(create("A.b"), 422, "upper case");
}

static json_t *named(const char *api, const char *kind, const char *name)
{
	return json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", api, "kind", kind,
	    "metadata", "name", name);
}

static int post(const char *path, json_t *body, char *msg, size_t n)
{
	struct fx_result r;
	int code;
	const char *m;

	fx_call(&r, "POST", path, NULL, body);
	code = r.code;
	m = json_string_value(json_object_get(r.body, "message"));
	m = m ? strstr(m, " is invalid: ") : NULL;
	snprintf(msg, n, "%s", m ? m + strlen(" is invalid: ") : "");
	fx_result_dispose(&r);
	return code;
}

static json_t *service(const char *name)
{
	json_t *s = named("v1", "Service", name);

	json_object_set_new(
	    s, "spec", json_pack("{s:[{s:i}]}", "ports", "port", 80));
	return s;
}

#define SVC "/api/v1/namespaces/default/services"
#define CR "/apis/rbac.authorization.k8s.io/v1/clusterroles"

Test(apiserver_names, service_names_are_dns1035_labels, .init = fx_setup,
    .fini = fx_teardown)
{
	char msg[1024], long_name[80];

	cr_expect_eq(post(SVC, service("abc-123"), msg, sizeof(msg)), 201);
	cr_expect_eq(post(SVC, service("1abc"), msg, sizeof(msg)), 422);
	cr_expect_str_eq(msg,
	    "metadata.name: Invalid value: \"1abc\": a DNS-1035 label must "
	    "consist of lower case alphanumeric characters or '-', start with "
	    "an alphabetic character, and end with an alphanumeric character "
	    "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
	    "'[a-z]([-a-z0-9]*[a-z0-9])?')");
	cr_expect_eq(post(SVC, service("a.b"), msg, sizeof(msg)), 422);
	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	cr_expect_eq(post(SVC, service(long_name), msg, sizeof(msg)), 422);
	cr_expect_str_eq(msg, "metadata.name: Invalid value: "
			      "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			      "aaaaaaaaaaaaaaaaaa\""
			      ": must be no more than 63 characters");
}

Test(apiserver_names, rbac_names_are_path_segments, .init = fx_setup,
    .fini = fx_teardown)
{
	char msg[1024];
	const char *api = "rbac.authorization.k8s.io/v1";

	cr_expect_eq(post(CR, named(api, "ClusterRole", "system:controller:x"),
			 msg, sizeof(msg)),
	    201, "%s", msg);
	cr_expect_eq(
	    post(CR, named(api, "ClusterRole", "Upper_Case"), msg, sizeof(msg)),
	    201, "%s", msg);
	cr_expect_eq(
	    post(CR, named(api, "ClusterRole", "a/b"), msg, sizeof(msg)), 422);
	cr_expect_str_eq(
	    msg, "metadata.name: Invalid value: \"a/b\": may not contain '/'");
	cr_expect_eq(
	    post(CR, named(api, "ClusterRole", "a%b"), msg, sizeof(msg)), 422);
	cr_expect_eq(
	    post(CR, named(api, "ClusterRole", ".."), msg, sizeof(msg)), 422);
	cr_expect_str_eq(
	    msg, "metadata.name: Invalid value: \"..\": may not be '..'");
}

static json_t *cronjob(const char *name)
{
	json_t *c = named("batch/v1", "CronJob", name);

	json_object_set_new(c, "spec",
	    json_pack("{s:s, s:{s:{s:{s:{s:s, s:[{s:s, s:s}]}}}}}", "schedule",
		"* * * * *", "jobTemplate", "spec", "template", "spec",
		"restartPolicy", "Never", "containers", "name", "c", "image",
		"busybox"));
	return c;
}

static json_t *job(const char *name)
{
	json_t *j = named("batch/v1", "Job", name);

	json_object_set_new(j, "spec",
	    json_pack("{s:{s:{s:s, s:[{s:s, s:s}]}}}", "template", "spec",
		"restartPolicy", "Never", "containers", "name", "c", "image",
		"busybox"));
	return j;
}

Test(apiserver_names, job_and_cronjob_name_lengths, .init = fx_setup,
    .fini = fx_teardown)
{
	char msg[1024], name[80];

	memset(name, 'c', sizeof(name));
	name[52] = '\0';
	cr_expect_eq(post("/apis/batch/v1/namespaces/default/cronjobs",
			 cronjob(name), msg, sizeof(msg)),
	    201, "%s", msg);
	name[52] = 'c';
	name[53] = '\0';
	cr_expect_eq(post("/apis/batch/v1/namespaces/default/cronjobs",
			 cronjob(name), msg, sizeof(msg)),
	    422);
	cr_expect(
	    strstr(msg, "metadata.name: Invalid value: ") == msg &&
		strstr(msg, ": must be no more than 52 characters") != NULL,
	    "%s", msg);
	memset(name, 'j', sizeof(name));
	name[63] = '\0';
	cr_expect_eq(post("/apis/batch/v1/namespaces/default/jobs", job(name),
			 msg, sizeof(msg)),
	    201, "%s", msg);
	name[63] = 'j';
	name[64] = '\0';
	cr_expect_eq(post("/apis/batch/v1/namespaces/default/jobs", job(name),
			 msg, sizeof(msg)),
	    422);
	cr_expect(
	    strstr(msg, "spec.template.labels: Invalid value: ") != NULL &&
		strstr(msg, ": must be no more than 63 characters") != NULL,
	    "%s", msg);
}
