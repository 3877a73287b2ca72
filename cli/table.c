/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/table.c - output helpers of kubectl-cueue: the table laid out as
 * kubectl's tabwriter lays it out, kubectl's human-readable durations
 * and a JSON-to-YAML writer for -o yaml. See cli/cli.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "cli/cli.h"

#define TAB_MINWIDTH 6
#define TAB_PADDING 3

int cli_table_init(
    cli_table *t, const char *const *headers, size_t ncols, cu_error *err)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	return cli_table_add(t, headers, err);
}

int cli_table_add(cli_table *t, const char *const *cells, cu_error *err)
{
	size_t i;
	char **row;

	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		char **c = cu_realloc(t->cells, cap * t->ncols * sizeof(*c));

		if (c == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		t->cells = c;
		t->cap = cap;
	}
	row = t->cells + t->nrows * t->ncols;
	for (i = 0; i < t->ncols; i++) {
		row[i] = cu_strdup(cells[i] != NULL ? cells[i] : "");
		if (row[i] == NULL) {
			while (i-- > 0)
				cu_free(row[i]);
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		}
	}
	t->nrows++;
	return CU_OK;
}

void cli_table_dispose(cli_table *t)
{
	if (t->cells != NULL)
		for (size_t i = 0; i < t->nrows * t->ncols; i++)
			cu_free(t->cells[i]);
	cu_free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* Width in UTF-8 characters (continuation bytes not counted). */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

char *cli_table_render(const cli_table *t, bool skip_header)
{
	size_t *w, r, c;
	cu_buf b;

	w = cu_calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	if (w == NULL)
		return NULL;
	for (r = skip_header ? 1 : 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			size_t n = text_width(t->cells[r * t->ncols + c]) +
				   TAB_PADDING;

			if (n < TAB_MINWIDTH)
				n = TAB_MINWIDTH;
			if (n > w[c])
				w[c] = n;
		}
	cu_buf_init(&b, (size_t)1 << 30);
	for (r = skip_header ? 1 : 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];

			if (cu_buf_adds(&b, s) != CU_OK)
				goto fail;
			if (c + 1 == t->ncols)
				break;
			for (size_t k = text_width(s); k < w[c]; k++)
				if (cu_buf_add(&b, " ", 1) != CU_OK)
					goto fail;
		}
		if (cu_buf_add(&b, "\n", 1) != CU_OK)
			goto fail;
	}
	cu_free(w);
	return cu_buf_detach(&b, NULL);
fail:
	cu_free(w);
	cu_buf_dispose(&b);
	return NULL;
}

void cli_human_duration(int64_t ns, char out[CLI_DURATION_MAX])
{
	int64_t secs = ns / CU_NS_PER_S, mins, hours, days, years;

	if (secs < -1) {
		snprintf(out, CLI_DURATION_MAX, "<invalid>");
		return;
	}
	if (secs < 0) {
		snprintf(out, CLI_DURATION_MAX, "0s");
		return;
	}
	if (secs < 120) {
		snprintf(out, CLI_DURATION_MAX, "%" PRId64 "s", secs);
		return;
	}
	mins = secs / 60;
	if (mins < 10) {
		if (secs % 60 == 0)
			snprintf(out, CLI_DURATION_MAX, "%" PRId64 "m", mins);
		else
			snprintf(out, CLI_DURATION_MAX,
			    "%" PRId64 "m%" PRId64 "s", mins, secs % 60);
		return;
	}
	if (mins < 180) {
		snprintf(out, CLI_DURATION_MAX, "%" PRId64 "m", mins);
		return;
	}
	hours = mins / 60;
	if (hours < 8) {
		if (mins % 60 == 0)
			snprintf(out, CLI_DURATION_MAX, "%" PRId64 "h", hours);
		else
			snprintf(out, CLI_DURATION_MAX,
			    "%" PRId64 "h%" PRId64 "m", hours, mins % 60);
		return;
	}
	if (hours < 48) {
		snprintf(out, CLI_DURATION_MAX, "%" PRId64 "h", hours);
		return;
	}
	days = hours / 24;
	if (hours < 24 * 8) {
		if (hours % 24 == 0)
			snprintf(out, CLI_DURATION_MAX, "%" PRId64 "d", days);
		else
			snprintf(out, CLI_DURATION_MAX,
			    "%" PRId64 "d%" PRId64 "h", days, hours % 24);
		return;
	}
	if (hours < 24 * 365 * 2) {
		snprintf(out, CLI_DURATION_MAX, "%" PRId64 "d", days);
		return;
	}
	years = days / 365;
	if (hours < 24 * 365 * 8) {
		if (days % 365 == 0)
			snprintf(out, CLI_DURATION_MAX, "%" PRId64 "y", years);
		else
			snprintf(out, CLI_DURATION_MAX,
			    "%" PRId64 "y%" PRId64 "d", years, days % 365);
		return;
	}
	snprintf(out, CLI_DURATION_MAX, "%" PRId64 "y", years);
}

/* ---- YAML ----------------------------------------------------------- */

/* Would s, written plain, read back as the same string? */
static bool plain_ok(const char *s)
{
	static const char *const special[] = {"true", "false", "yes", "no",
	    "on", "off", "y", "n", "null", "~", "True", "False", "Yes", "No",
	    "On", "Off", "Y", "N", "Null", "NULL", "TRUE", "FALSE", "YES", "NO",
	    "ON", "OFF"};
	size_t n = strlen(s);
	bool numeric = true, digit = false;
	/* after an optional sign, "0x": hexadecimal digits are digits */
	const char *h = s + (s[0] == '+' || s[0] == '-');
	bool hex = h[0] == '0' && (h[1] == 'x' || h[1] == 'X');

	if (n == 0)
		return false;
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (strcmp(s, special[i]) == 0)
			return false;
	/* YAML 1.1 timestamps ("2024-01-01T00:00:00Z"): kubectl quotes them;
	 * "<<" is the merge key, "=" the value key */
	if (n >= 6 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' &&
	    s[1] <= '9' && s[2] >= '0' && s[2] <= '9' && s[3] >= '0' &&
	    s[3] <= '9' && s[4] == '-')
		return false;
	if (strcmp(s, "<<") == 0 || strcmp(s, "=") == 0)
		return false;
	if (strchr("-?:,[]{}#&*!|>'\"%@` .", s[0]) != NULL || s[n - 1] == ' ' ||
	    s[n - 1] == ':')
		return false;
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == 0x7f || c >= 0x80)
			return false;
		if ((c == ':' && (p[1] == ' ' || p[1] == '\0')) ||
		    (c == '#' && p > s && p[-1] == ' '))
			return false;
		if (c >= '0' && c <= '9')
			digit = true;
		/* YAML 1.1 numbers: 1_000, 0o17, 0O17, 0x1F, 0b101, 1e3 */
		if (!((c >= '0' && c <= '9') || c == '.' || c == '+' ||
			c == '-' || c == 'e' || c == 'E' || c == '_' ||
			c == 'x' || c == 'X' || c == 'o' || c == 'O' ||
			c == 'b' || c == 'B' ||
			(hex && ((c >= 'a' && c <= 'f') ||
				    (c >= 'A' && c <= 'F')))))
			numeric = false;
	}
	/* anything that could read as a number stays quoted */
	return !(numeric && digit) && strcmp(s, ".inf") != 0 &&
	       strcmp(s, ".nan") != 0;
}

static int scalar(const json_t *v, cu_buf *b)
{
	char *s;
	int rc;

	switch (json_typeof(v)) {
	case JSON_STRING:
		if (plain_ok(json_string_value(v)))
			return cu_buf_adds(b, json_string_value(v));
		/* JSON's escapes are YAML double-quoted escapes */
		rc = api_json_dumps(v, JSON_ENCODE_ANY, 0, &s, NULL);
		if (rc != CU_OK)
			return rc;
		rc = cu_buf_adds(b, s);
		cu_free(s);
		return rc;
	case JSON_INTEGER:
		return cu_buf_addf(
		    b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL:
		rc = api_json_dumps(v, JSON_ENCODE_ANY, 0, &s, NULL);
		if (rc != CU_OK)
			return rc;
		rc = cu_buf_adds(b, s);
		cu_free(s);
		return rc;
	case JSON_TRUE:
		return cu_buf_adds(b, "true");
	case JSON_FALSE:
		return cu_buf_adds(b, "false");
	case JSON_NULL:
		return cu_buf_adds(b, "null");
	case JSON_OBJECT:
		return cu_buf_adds(b, "{}");
	case JSON_ARRAY:
		return cu_buf_adds(b, "[]");
	}
	return CU_EINVAL;
}

static bool is_nonempty_coll(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v) > 0) ||
	       (json_is_array(v) && json_array_size(v) > 0);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int indent(cu_buf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (cu_buf_add(b, "  ", 2) != CU_OK)
			return CU_ENOMEM;
	return CU_OK;
}

static int node(const json_t *v, unsigned depth, bool first_inline, cu_buf *b,
    unsigned level);

/* A mapping key. */
static int key(const char *k, cu_buf *b)
{
	json_t *s;
	int rc;

	if (plain_ok(k))
		return cu_buf_adds(b, k);
	s = json_string(k);
	if (s == NULL)
		return CU_ENOMEM;
	rc = scalar(s, b);
	json_decref(s);
	return rc;
}

/*
 * Write v at indentation `level`. first_inline: the first line continues
 * the current line (after "- "), so it gets no indentation.
 */
static int node(const json_t *v, unsigned depth, bool first_inline, cu_buf *b,
    unsigned level)
{
	int rc = CU_OK;
	bool first = true;

	if (depth > 100)
		return cu_buf_adds(b, "null\n");
	if (json_is_object(v) && json_object_size(v) > 0) {
		size_t nk = json_object_size(v), i = 0;
		const char **keys = cu_malloc(nk * sizeof(*keys));
		const char *k;
		json_t *m;

		if (keys == NULL)
			return CU_ENOMEM;
		/* sorted, as kubectl -o yaml writes them */
		for (void *it = json_object_iter((json_t *)v); it != NULL;
		     it = json_object_iter_next((json_t *)v, it))
			keys[i++] = json_object_iter_key(it);
		qsort((void *)keys, nk, sizeof(*keys), key_cmp);
		for (i = 0; i < nk; i++) {
			k = keys[i];
			m = json_object_get(v, k);
			if (!(first && first_inline))
				rc = indent(b, level);
			first = false;
			if (rc == CU_OK)
				rc = key(k, b);
			if (rc == CU_OK && is_nonempty_coll(m)) {
				rc = cu_buf_adds(b, ":\n");
				/* kubectl writes sequences under a key at
				 * the key's indentation */
				if (rc == CU_OK)
					rc = node(m, depth + 1, false, b,
					    json_is_array(m) ? level
							     : level + 1);
			} else if (rc == CU_OK) {
				rc = cu_buf_adds(b, ": ");
				if (rc == CU_OK)
					rc = scalar(m, b);
				if (rc == CU_OK)
					rc = cu_buf_adds(b, "\n");
			}
			if (rc != CU_OK)
				break;
		}
		cu_free((void *)keys);
		return rc;
	}
	if (json_is_array(v) && json_array_size(v) > 0) {
		size_t i;
		json_t *m;

		json_array_foreach((json_t *)v, i, m)
		{
			if (!(first && first_inline))
				rc = indent(b, level);
			first = false;
			if (rc == CU_OK)
				rc = cu_buf_adds(b, "- ");
			if (rc == CU_OK && is_nonempty_coll(m))
				rc = node(m, depth + 1, true, b, level + 1);
			else if (rc == CU_OK) {
				rc = scalar(m, b);
				if (rc == CU_OK)
					rc = cu_buf_adds(b, "\n");
			}
			if (rc != CU_OK)
				return rc;
		}
		return CU_OK;
	}
	if (!first_inline)
		rc = indent(b, level);
	if (rc == CU_OK)
		rc = scalar(v, b);
	if (rc == CU_OK)
		rc = cu_buf_adds(b, "\n");
	return rc;
}

int cli_yaml_dump(const json_t *v, cu_buf *out)
{
	return node(v, 0, false, out, 0);
}
