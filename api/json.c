/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/json.c - json_loadb and json_dumps that cannot be fooled by an
 * allocation failure inside jansson, and the small shared jansson helpers
 * (see api/json.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"

int api_json_loadb(
    json_t **out, const void *buf, size_t len, size_t flags, json_error_t *jerr)
{
	uint64_t failures = cu_mem_failures();
	json_error_t local;
	json_t *j;

	*out = NULL;
	j = json_loadb(buf != NULL ? buf : "", buf != NULL ? len : 0, flags,
	    jerr != NULL ? jerr : &local);
	if (cu_mem_failures() != failures) {
		json_decref(j);
		return CU_ENOMEM;
	}
	if (j == NULL)
		return CU_EPARSE;
	*out = j;
	return CU_OK;
}

struct dump_ctx {
	cu_buf b;
	int rc; /* first failure of an append; CU_OK while none */
};

static int dump_cb(const char *data, size_t size, void *payload)
{
	struct dump_ctx *d = payload;

	if (d->rc != CU_OK)
		return -1; /* jansson may write on after a failure */
	d->rc = cu_buf_add(&d->b, data, size);
	return d->rc == CU_OK ? 0 : -1;
}

int api_json_dumps(
    const json_t *v, size_t flags, size_t max, char **out, size_t *len)
{
	uint64_t failures = cu_mem_failures();
	struct dump_ctx d = {.rc = CU_OK};
	int jrc;

	*out = NULL;
	cu_buf_init(&d.b, max != 0 ? max : SIZE_MAX - 1);
	jrc = json_dump_callback(v, dump_cb, &d, flags);
	if (d.rc == CU_OK && cu_mem_failures() != failures)
		d.rc = CU_ENOMEM;
	if (d.rc == CU_OK && jrc != 0)
		d.rc = CU_EINVAL;
	if (d.rc == CU_OK) {
		size_t n = d.b.len, cap = d.b.cap;
		char *small;

		*out = cu_buf_detach(&d.b, len);
		if (*out == NULL)
			d.rc = CU_ENOMEM;
		/* The buffer doubled as it grew: give the rest back, as the
		 * text may be kept (an informer's compact cache holds one per
		 * object). A failed shrink keeps the larger block. */
		else if (cap > n + 1 &&
			 (small = cu_realloc(*out, n + 1)) != NULL)
			*out = small;
	}
	cu_buf_dispose(&d.b);
	return d.rc;
}

const char *api_json_type_word(json_type t, bool int_apart)
{
	switch (t) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return int_apart ? "integer" : "number";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		break;
	}
	return "null";
}

const char *api_json_type_name(const json_t *v, bool int_apart)
{
	return api_json_type_word(
	    v != NULL ? json_typeof(v) : JSON_NULL, int_apart);
}

const char *api_json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int api_json_get_str(const json_t *o, const char *key, const char *path,
    const char *dflt, const char **out, cu_error *err)
{
	const json_t *v = json_object_get(o, key);

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return CU_OK;
	if (!json_is_string(v))
		return cu_error_set(err, CU_EPARSE,
		    "%s: Invalid type: expected string, got %s", path,
		    api_json_type_name(v, false));
	*out = json_string_value(v);
	return CU_OK;
}

json_t *api_json_obj_child(json_t *obj, const char *key)
{
	json_t *c = json_object_get(obj, key);

	if (json_is_object(c))
		return c;
	c = json_object();
	if (c == NULL || json_object_set_new(obj, key, c) != 0)
		return NULL;
	return c;
}

/* ---- lean text (api_json_lean) ----------------------------------------- */

/* Flags of one open container of the copied text. */
enum {
	LEAN_OBJ = 1,  /* an object (else an array) */
	LEAN_META = 2, /* the value of a member "metadata" */
	LEAN_KEY = 4   /* a key comes next (after '{' or ',') */
};

struct lean {
	const char *p, *end;
	char *o; /* the output, at most as long as the input */
	size_t n;
	unsigned char *stk; /* flags per open container [owned] */
	size_t depth, cap;
	size_t dropped;
	/* The member being read: where it starts in the output (its ','
	 * or right after its object's '{') and whether a ',' leads it. */
	size_t mstart;
	bool mcomma;
};

static bool lean_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *lean_skip_ws(const char *p, const char *end)
{
	while (p < end && lean_ws(*p))
		p++;
	return p;
}

/* The end of the string starting at p ('"'), just past its closing
 * quote, escapes skipped unchecked; end when unterminated. */
static const char *lean_string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return end;
}

static bool lean_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* A checked string at p ('"'): past its end, or NULL when it is not a
 * JSON string (unterminated, a control character, a bad escape). */
static const char *lean_check_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			if (end - p < 5 || !lean_hex(p[1]) || !lean_hex(p[2]) ||
			    !lean_hex(p[3]) || !lean_hex(p[4]))
				return NULL;
			p += 4;
		} else if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') {
			return NULL;
		}
	}
	return NULL;
}

static const char *lean_digits(const char *p, const char *end)
{
	const char *s = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* A checked number or literal at p: past its end, or NULL. */
static const char *lean_check_scalar(const char *p, const char *end)
{
	static const char *const lits[] = {"true", "false", "null"};
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = strlen(lits[i]);
		if ((size_t)(end - p) >= n && memcmp(p, lits[i], n) == 0)
			return p + n;
	}
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if ((p = lean_digits(p, end)) == NULL)
		return NULL;
	if (p < end && *p == '.' && (p = lean_digits(p + 1, end)) == NULL)
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		p = lean_digits(p, end);
	}
	return p;
}

static int lean_push(unsigned char **stk, size_t *depth, size_t *cap,
    size_t limit, unsigned char v)
{
	if (*depth >= limit)
		return CU_EPARSE;
	if (cu_grow((void **)stk, cap, *depth + 1, 1) != CU_OK)
		return CU_ENOMEM;
	(*stk)[(*depth)++] = v;
	return CU_OK;
}

/* The value at l->p, checked (see api_json_lean) and skipped. */
static int lean_skip_value(struct lean *l)
{
	enum { VALUE, FIRST_VALUE, FIRST_KEY, KEY, AFTER } st = VALUE;
	unsigned char *stk = NULL; /* '{' or '[' per open container */
	size_t depth = 0, cap = 0;
	const char *p = l->p, *end = l->end;
	int rc = CU_EPARSE;

	for (;;) {
		p = lean_skip_ws(p, end);
		if (st == AFTER && depth == 0)
			break; /* the value is complete */
		if (p >= end)
			goto out;
		switch (st) {
		case FIRST_VALUE:
			if (*p == ']') {
				depth--, p++, st = AFTER;
				break;
			}
			/* fall through */
		case VALUE:
			if (*p == '{' || *p == '[') {
				rc = lean_push(&stk, &depth, &cap,
				    API_JSON_MAX_DEPTH - l->depth,
				    (unsigned char)*p);
				if (rc != CU_OK)
					goto out;
				rc = CU_EPARSE;
				st = *p == '{' ? FIRST_KEY : FIRST_VALUE;
				p++;
				break;
			}
			p = *p == '"' ? lean_check_string(p, end)
				      : lean_check_scalar(p, end);
			if (p == NULL)
				goto out;
			st = AFTER;
			break;
		case FIRST_KEY:
			if (*p == '}') {
				depth--, p++, st = AFTER;
				break;
			}
			/* fall through */
		case KEY:
			if (*p != '"' ||
			    (p = lean_check_string(p, end)) == NULL)
				goto out;
			p = lean_skip_ws(p, end);
			if (p >= end || *p != ':')
				goto out;
			p++, st = VALUE;
			break;
		case AFTER:
			if (*p == ',') {
				p++, st = stk[depth - 1] == '{' ? KEY : VALUE;
			} else if (*p == (stk[depth - 1] == '{' ? '}' : ']')) {
				depth--, p++;
			} else {
				goto out;
			}
			break;
		}
	}
	l->p = p;
	rc = CU_OK;
out:
	cu_free(stk);
	return rc;
}

static bool lean_is(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(s, word, n) == 0;
}

/* Drop the member whose key ends at l->p: the output goes back to where
 * the member started, its value is skipped, and a ',' after it goes too
 * when none led it (it was its object's first). */
static int lean_drop(struct lean *l, const char *key_start)
{
	int rc;

	l->n = l->mstart;
	l->p = lean_skip_ws(l->p, l->end);
	if (l->p >= l->end || *l->p != ':')
		return CU_EPARSE;
	l->p++;
	if ((rc = lean_skip_value(l)) != CU_OK)
		return rc;
	l->dropped += (size_t)(l->p - key_start);
	l->p = lean_skip_ws(l->p, l->end);
	if (l->p >= l->end || (*l->p != ',' && *l->p != '}'))
		return CU_EPARSE; /* the member does not end there */
	if (!l->mcomma && *l->p == ',') {
		l->p++; /* the next member is now the first */
		l->stk[l->depth - 1] |= LEAN_KEY;
	}
	return CU_OK;
}

static void lean_emit(struct lean *l, const char *s, size_t n)
{
	memcpy(l->o + l->n, s, n);
	l->n += n;
}

static int lean_run(struct lean *l, const char *span, struct api_json_lean *r)
{
	bool meta_next = false, span_next = false, in_span = false;
	unsigned char *top;
	const char *s, *q;
	int rc;

	while (l->p < l->end) {
		top = l->depth > 0 ? &l->stk[l->depth - 1] : NULL;
		s = l->p;
		switch (*s) {
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			l->p++;
			continue;
		case '{':
		case '[':
			rc = lean_push(&l->stk, &l->depth, &l->cap,
			    API_JSON_MAX_DEPTH,
			    *s == '{'
				? (unsigned char)(LEAN_OBJ | LEAN_KEY |
						  (meta_next ? LEAN_META : 0))
				: 0);
			if (rc != CU_OK)
				return rc;
			if (span_next && *s == '{' && l->depth == 2) {
				r->span_off = l->n;
				in_span = true;
			}
			meta_next = span_next = false;
			lean_emit(l, s, 1);
			l->mstart = l->n, l->mcomma = false;
			l->p++;
			continue;
		case '}':
		case ']':
			if (l->depth > 0)
				l->depth--;
			lean_emit(l, s, 1);
			if (in_span && l->depth == 1) {
				r->span_len = l->n - r->span_off;
				in_span = false;
			}
			l->p++;
			continue;
		case ',':
			if (top != NULL && (*top & LEAN_OBJ)) {
				*top |= LEAN_KEY;
				l->mstart = l->n, l->mcomma = true;
			}
			lean_emit(l, s, 1);
			l->p++;
			continue;
		case ':':
			lean_emit(l, s, 1);
			l->p++;
			continue;
		case '"':
			q = lean_string_end(s, l->end);
			l->p = q;
			if (top == NULL || !(*top & LEAN_KEY)) {
				meta_next = span_next = false;
				lean_emit(l, s, (size_t)(q - s));
				continue;
			}
			*top &= (unsigned char)~LEAN_KEY;
			if ((*top & LEAN_META) &&
			    lean_is(
				s + 1, (size_t)(q - s) - 2, "managedFields")) {
				if ((rc = lean_drop(l, s)) != CU_OK)
					return rc;
				continue;
			}
			meta_next =
			    lean_is(s + 1, (size_t)(q - s) - 2, "metadata");
			span_next = span != NULL && l->depth == 1 &&
				    lean_is(s + 1, (size_t)(q - s) - 2, span);
			lean_emit(l, s, (size_t)(q - s));
			continue;
		default:
			/* a number or literal (or not JSON: the parser says) */
			meta_next = span_next = false;
			for (q = s; q < l->end && !lean_ws(*q) &&
				    strchr(",:{}[]\"", *q) == NULL;
			     q++)
				;
			if (q == s)
				q++; /* a NUL byte */
			lean_emit(l, s, (size_t)(q - s));
			l->p = q;
			continue;
		}
	}
	if (in_span)
		r->span_off = 0; /* unterminated: not a span */
	return CU_OK;
}

int api_json_lean(
    struct api_json_lean *out, const char *in, size_t len, const char *span)
{
	struct lean l = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	l.p = in != NULL ? in : "";
	l.end = l.p + (in != NULL ? len : 0);
	l.o = cu_malloc((size_t)(l.end - l.p) + 1);
	if (l.o == NULL)
		return CU_ENOMEM;
	rc = lean_run(&l, span, out);
	cu_free(l.stk);
	if (rc != CU_OK) {
		cu_free(l.o);
		out->span_off = out->span_len = 0;
		return rc;
	}
	l.o[l.n] = '\0';
	out->text = l.o;
	out->len = l.n;
	out->dropped = l.dropped;
	if (out->span_len == 0)
		out->span_off = 0;
	return CU_OK;
}

void api_json_lean_dispose(struct api_json_lean *l)
{
	cu_free(l->text);
	memset(l, 0, sizeof(*l));
}

void api_json_drop_managed_fields(json_t *v)
{
	const char *k;
	json_t *c;
	size_t i;

	if (json_is_object(v)) {
		json_object_del(
		    json_object_get(v, "metadata"), "managedFields");
		json_object_foreach(v, k, c)
		{
			api_json_drop_managed_fields(c);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
		{
			api_json_drop_managed_fields(c);
		}
	}
}

int api_json_loadb_lean(
    json_t **out, const void *buf, size_t len, size_t flags, json_error_t *jerr)
{
	struct api_json_lean l;
	int rc;

	*out = NULL;
	rc = api_json_lean(&l, buf, len, NULL);
	if (rc == CU_EPARSE && jerr != NULL) {
		memset(jerr, 0, sizeof(*jerr));
		snprintf(jerr->text, sizeof(jerr->text), "%s",
		    "metadata.managedFields is not valid JSON, or the "
		    "document nests too deep");
	}
	if (rc != CU_OK)
		return rc;
	rc = api_json_loadb(out, l.text, l.len, flags, jerr);
	api_json_lean_dispose(&l);
	return rc;
}
