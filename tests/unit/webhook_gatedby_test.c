/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/webhook_gatedby_test.c - wh_admission_gated_by
 * (webhook/gatedby.c), one row per rule of Kueue's validation of the
 * kueue.x-k8s.io/admission-gated-by annotation: the value's format on
 * create and update, no gate added after creation, only removals, and
 * several failures aggregated (duplicates dropped) as apimachinery
 * prints them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "webhook/webhook.h"

#define P "metadata.annotations[kueue.x-k8s.io/admission-gated-by]"

/* A job whose annotation is v (NULL: absent). */
static json_t *obj(const char *v)
{
	json_t *o = json_pack(
	    "{s:{s:s, s:{}}}", "metadata", "name", "j", "annotations");

	cr_assert_not_null(o);
	if (v != NULL)
		json_object_set_new(
		    json_object_get(
			json_object_get(o, "metadata"), "annotations"),
		    WH_ADMISSION_GATED_BY, json_string(v));
	return o;
}

struct row {
	bool update;
	const char *old_v, *new_v;
	const char *want; /* NULL: allowed */
};

static const struct row ROWS[] = {
    /* create */
    {false, NULL, NULL, NULL},
    {false, NULL, "", NULL},
    {false, NULL, "example.com/gate", NULL},
    {false, NULL, " a.io/x , b.io/y ", NULL},
    {false, NULL, "gate",
	P ": Invalid value: \"gate\": must be a domain-prefixed path (such "
	  "as \"acme.io/foo\")"},
    {false, NULL, "/x",
	P ": Invalid value: \"/x\": must be a domain-prefixed path (such "
	  "as \"acme.io/foo\")"},
    {false, NULL, "Example.com/x",
	P
	": Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain "
	"must consist of lower case alphanumeric characters, '-' or '.', "
	"and must start and end with an alphanumeric character (e.g. "
	"'example.com', regex used for validation is "
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
    {false, NULL, "a.io/x y",
	P ": Invalid value: \"x y\": must be a valid path (regex used for "
	  "validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"},
    {false, NULL, "a.io/x,,b.io/y",
	P ": Invalid value: \"a.io/x,,b.io/y\": cannot contain empty gate "
	  "names"},
    {false, NULL, "a.io/x,a.io/x",
	P ": Invalid value: \"a.io/x,a.io/x\": duplicate gate name: "
	  "a.io/x"},
    {false, NULL,
	"example.com/"
	"0123456789012345678901234567890123456789012345678901",
	P ": Too long: may not be more than 63 bytes"},
    {false, NULL, "x,y",
	"[" P ": Invalid value: \"x\": must be a domain-prefixed path (such "
	"as \"acme.io/foo\"), " P ": Invalid value: \"y\": must be a "
	"domain-prefixed path (such as \"acme.io/foo\")]"},
    /* update */
    {true, NULL, NULL, NULL},
    {true, "a.io/x,b.io/y", "b.io/y", NULL},
    {true, "a.io/x,b.io/y", "", NULL},
    {true, "a.io/x,b.io/y", NULL, NULL},
    {true, "a.io/x", "a.io/x", NULL},
    {true, NULL, "a.io/x",
	P ": Forbidden: cannot add admission gate after creation"},
    {true, "", "a.io/x",
	P ": Forbidden: cannot add admission gate after creation"},
    {true, "a.io/x", "a.io/x,b.io/y",
	P ": Forbidden: can only remove gates, not add new ones"},
    {true, "a.io/x", "bad",
	"[" P ": Forbidden: can only remove gates, not add new ones, " P
	": Invalid value: \"bad\": must be a domain-prefixed path (such as "
	"\"acme.io/foo\")]"},
};

Test(webhook_gatedby, table)
{
	size_t i;

	for (i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++) {
		const struct row *r = &ROWS[i];
		json_t *o = r->update ? obj(r->old_v) : NULL,
		       *n = obj(r->new_v);
		cu_error err = {0};
		int rc = wh_admission_gated_by(o, n, &err);

		if (r->want == NULL)
			cr_expect_eq(rc, CU_OK, "row %zu: %s", i, err.msg);
		else {
			cr_expect_eq(rc, CU_EDENIED, "row %zu: rc %d", i, rc);
			cr_expect_str_eq(err.msg, r->want, "row %zu", i);
		}
		json_decref(o);
		json_decref(n);
	}
}
