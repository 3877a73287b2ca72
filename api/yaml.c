/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/yaml.c - YAML to JSON conversion on libyaml's event API, resolving
 * plain scalars the way sigs.k8s.io/yaml does (go-yaml v2.4 resolve(),
 * then encoding/json), plus the path -> (line, column) index that lets
 * strict decoders point at the offending line.
 *
 * The tree is built iteratively from events (no recursion), so nesting is
 * bounded only by our own depth limit; libyaml 0.2.5 has none. Containers
 * are attached to their parent as soon as they start, so on any error
 * dropping the root releases everything.
 */
#include "api/yaml.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"
#define NO_PARENT UINT32_MAX

/* ---- path -> position index ----------------------------------------- */

/*
 * The index is a tree stored flat: every node knows its parent and its
 * component (a key or a sequence index). A hash over (parent, component)
 * finds children, so memory stays linear in the input even when keys are
 * long and deeply nested (full path strings would be quadratic).
 */
struct lines_entry {
	uint32_t parent;
	int line;
	int column;
	bool is_index;
	size_t off; /* key: offset into arena; index: the index */
	size_t len; /* key length */
};

struct api_yaml_lines {
	struct lines_entry *v;
	size_t n, cap;
	uint32_t *slots; /* entry id + 1; 0 = empty */
	size_t nslots;	 /* power of two, > 2 * n */
	cu_buf arena;	 /* key bytes */
};

static uint64_t lines_hash(
    uint32_t parent, bool is_index, const char *key, size_t len, size_t index)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	h = (h ^ parent) * 1099511628211ull;
	h = (h ^ (is_index ? 1u : 2u)) * 1099511628211ull;
	if (is_index) {
		h = (h ^ (uint64_t)index) * 1099511628211ull;
	} else {
		for (i = 0; i < len; i++)
			h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
	}
	return h ^ (h >> 29);
}

static bool lines_match(const api_yaml_lines *l, const struct lines_entry *e,
    uint32_t parent, bool is_index, const char *key, size_t len, size_t index)
{
	if (e->parent != parent || e->is_index != is_index)
		return false;
	if (is_index)
		return e->off == index;
	return e->len == len &&
	       (len == 0 || memcmp(l->arena.ptr + e->off, key, len) == 0);
}

static void lines_slot_put(
    uint32_t *slots, size_t nslots, uint64_t h, uint32_t id)
{
	size_t i = (size_t)h & (nslots - 1);

	while (slots[i] != 0)
		i = (i + 1) & (nslots - 1);
	slots[i] = id + 1;
}

static int lines_grow(api_yaml_lines *l)
{
	if (l->n + 1 > l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct lines_entry *nv = cu_realloc(l->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return CU_ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	if (2 * (l->n + 1) >= l->nslots) {
		size_t ns = l->nslots ? l->nslots * 2 : 128;
		uint32_t *s = cu_calloc(ns, sizeof(*s));
		size_t i;

		if (s == NULL)
			return CU_ENOMEM;
		for (i = 0; i < l->n; i++) {
			const struct lines_entry *e = &l->v[i];
			const char *k = e->is_index || l->arena.ptr == NULL
					    ? NULL
					    : l->arena.ptr + e->off;

			lines_slot_put(s, ns,
			    lines_hash(
				e->parent, e->is_index, k, e->len, e->off),
			    (uint32_t)i);
		}
		cu_free(l->slots);
		l->slots = s;
		l->nslots = ns;
	}
	return CU_OK;
}

/* Add a node; *id receives its entry id (the parent of its children). */
static int lines_add(api_yaml_lines *l, uint32_t parent, bool is_index,
    const char *key, size_t len, size_t index, const yaml_mark_t *mark,
    uint32_t *id)
{
	struct lines_entry *e;
	size_t off = index;

	if (l->n >= NO_PARENT - 1)
		return CU_ETOOBIG;
	if (lines_grow(l) != CU_OK)
		return CU_ENOMEM;
	if (!is_index) {
		off = l->arena.len;
		if (cu_buf_add(&l->arena, key, len) != CU_OK)
			return CU_ENOMEM;
	}
	e = &l->v[l->n];
	e->parent = parent;
	e->is_index = is_index;
	e->off = off;
	e->len = is_index ? 0 : len;
	e->line = (int)mark->line + 1;
	e->column = (int)mark->column + 1;
	lines_slot_put(l->slots, l->nslots,
	    lines_hash(parent, is_index, key, len, index), (uint32_t)l->n);
	*id = (uint32_t)l->n;
	l->n++;
	return CU_OK;
}

static const struct lines_entry *lines_find(const api_yaml_lines *l,
    uint32_t parent, bool is_index, const char *key, size_t len, size_t index)
{
	size_t i;

	if (l->nslots == 0)
		return NULL;
	i = (size_t)lines_hash(parent, is_index, key, len, index) &
	    (l->nslots - 1);
	while (l->slots[i] != 0) {
		const struct lines_entry *e = &l->v[l->slots[i] - 1];

		if (lines_match(l, e, parent, is_index, key, len, index))
			return e;
		i = (i + 1) & (l->nslots - 1);
	}
	return NULL;
}

void api_yaml_lines_free(api_yaml_lines *lines)
{
	if (lines == NULL)
		return;
	cu_free(lines->v);
	cu_free(lines->slots);
	cu_buf_dispose(&lines->arena);
	cu_free(lines);
}

static api_yaml_lines *lines_new(void)
{
	api_yaml_lines *l = cu_calloc(1, sizeof(*l));

	if (l != NULL)
		cu_buf_init(&l->arena, SIZE_MAX / 2);
	return l;
}

int api_yaml_line(const api_yaml_lines *lines, const char *path, int *column)
{
	const struct lines_entry *e;
	char *key;
	size_t i = 0, plen;
	int line = 0;

	if (column != NULL)
		*column = 0;
	if (lines == NULL || path == NULL || lines->n == 0)
		return 0;
	/* The root is always entry 0. */
	e = &lines->v[0];
	plen = strlen(path);
	key = cu_malloc(plen + 1);
	if (key == NULL)
		return 0;
	while (i < plen && e != NULL) {
		uint32_t parent = (uint32_t)(e - lines->v);

		if (path[i] == '[') {
			size_t idx = 0, start = ++i;

			while (i < plen && path[i] >= '0' && path[i] <= '9') {
				if (idx > (SIZE_MAX - 9) / 10)
					goto out;
				idx = idx * 10 + (size_t)(path[i] - '0');
				i++;
			}
			if (i == start || i >= plen || path[i] != ']')
				goto out;
			i++;
			e = lines_find(lines, parent, true, NULL, 0, idx);
		} else {
			size_t n = 0;

			/* A '.' separates keys; the very first key has none. */
			if (path[i] == '.') {
				if (i == 0)
					goto out;
				i++;
			} else if (i != 0) {
				goto out;
			}
			while (i < plen && path[i] != '.' && path[i] != '[') {
				if (path[i] == '\\' && i + 1 < plen)
					i++;
				key[n++] = path[i++];
			}
			e = lines_find(lines, parent, false, key, n, 0);
		}
	}
	if (e != NULL) {
		line = e->line;
		if (column != NULL)
			*column = e->column;
	}
out:
	cu_free(key);
	return line;
}

/* ---- scalar resolution (go-yaml v2.4 resolve) ---------------------- */

enum rkind { R_NULL, R_BOOL, R_INT, R_UINT, R_FLOAT, R_STR };

struct resolved {
	enum rkind kind;
	bool b;
	int64_t i;
	uint64_t u;
	double d;
};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static int digit_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* strconv.ParseUint(s, 0, 64): no sign; 0x/0o/0b prefixes, leading 0 is
 * octal. */
static bool go_parse_uint(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && s[1] != '\0') {
		if (s[1] == 'x' || s[1] == 'X') {
			base = 16;
			s += 2;
		} else if (s[1] == 'o' || s[1] == 'O') {
			base = 8;
			s += 2;
		} else if (s[1] == 'b' || s[1] == 'B') {
			base = 2;
			s += 2;
		} else {
			base = 8;
			s += 1;
		}
	}
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		int d = digit_val(*s);

		if (d >= (int)base)
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return false;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool go_parse_int(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t u;

	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	if (!go_parse_uint(s, &u))
		return false;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return false;
		*out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		if (u > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)u;
	}
	return true;
}

static size_t span_digits(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* go-yaml's yamlStyleFloat:
 * ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
	size_t n;

	if (*s == '+' || *s == '-')
		s++;
	if (*s == '.') {
		s++;
		n = span_digits(s);
		if (n == 0)
			return false;
		s += n;
	} else {
		n = span_digits(s);
		if (n == 0)
			return false;
		s += n;
		if (*s == '.') {
			s++;
			s += span_digits(s);
		}
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		n = span_digits(s);
		if (n == 0)
			return false;
		s += n;
	}
	return *s == '\0';
}

/* strconv.ParseFloat on a yamlStyleFloat string; overflow fails (Go
 * returns ErrRange there, and go-yaml then keeps the string). */
static bool parse_float(const char *s, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (*end != '\0' || isinf(d))
		return false;
	*out = d;
	return true;
}

/*
 * Resolve a plain scalar s (NUL-terminated, n bytes). Returns CU_ENOMEM
 * only; anything unrecognised is a string.
 */
static int resolve_plain(const char *s, size_t n, struct resolved *r)
{
	static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true",
	    "True", "TRUE", "on", "On", "ON", NULL};
	static const char *const no[] = {"n", "N", "no", "No", "NO", "false",
	    "False", "FALSE", "off", "Off", "OFF", NULL};
	static const char *const nul[] = {
	    "", "~", "null", "Null", "NULL", NULL};
	static const char *const nan[] = {".nan", ".NaN", ".NAN", NULL};
	static const char *const pinf[] = {
	    ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
	static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};
	char c = s[0];

	memset(r, 0, sizeof(*r));
	r->kind = R_STR;
	/* A NUL inside means it came from an escape: never a number. */
	if (strlen(s) != n)
		return CU_OK;
	if (in_list(s, nul)) {
		r->kind = R_NULL;
	} else if (in_list(s, yes) || in_list(s, no)) {
		r->kind = R_BOOL;
		r->b = in_list(s, yes);
	} else if (in_list(s, nan)) {
		r->kind = R_FLOAT;
		r->d = NAN;
	} else if (in_list(s, pinf) || in_list(s, ninf)) {
		r->kind = R_FLOAT;
		r->d = in_list(s, pinf) ? INFINITY : -INFINITY;
	} else if (c == '.') {
		/* Go's ParseFloat on the unmodified text; ".5", ".5e3". */
		if (yaml_style_float(s) && parse_float(s, &r->d))
			r->kind = R_FLOAT;
	} else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
		/* go-yaml drops every '_' before trying the number forms. */
		char *plain = cu_malloc(n + 1);
		size_t i, k = 0;

		if (plain == NULL)
			return CU_ENOMEM;
		for (i = 0; i < n; i++)
			if (s[i] != '_')
				plain[k++] = s[i];
		plain[k] = '\0';
		if (go_parse_int(plain, &r->i)) {
			r->kind = R_INT;
		} else if (go_parse_uint(plain, &r->u)) {
			r->kind = R_UINT;
		} else if (yaml_style_float(plain) &&
			   parse_float(plain, &r->d)) {
			r->kind = R_FLOAT;
		}
		cu_free(plain);
	}
	return CU_OK;
}

static const char *rkind_tag(enum rkind k)
{
	switch (k) {
	case R_NULL:
		return "!!null";
	case R_BOOL:
		return "!!bool";
	case R_INT:
	case R_UINT:
		return "!!int";
	case R_FLOAT:
		return "!!float";
	case R_STR:
		break;
	}
	return "!!str";
}

/* ---- the converter -------------------------------------------------- */

struct frame {
	json_t *node; /* borrowed: owned by its parent or by conv.root */
	bool is_map;
	bool have_key;
	char *key; /* pending key [owned: cu_free] */
	size_t key_len;
	yaml_mark_t key_mark;
	size_t index; /* next sequence index */
	uint32_t lid; /* lines entry of this node */
};

struct conv {
	const char *buf;
	size_t len;
	size_t max_nodes;
	unsigned max_depth;
	size_t nodes;
	struct frame *stack;
	size_t depth, cap;
	json_t *root; /* current document [owned] */
	bool have_root;
	api_yaml_lines *lines; /* current document index [owned] */
	cu_error *err;
};

/* Printable, bounded rendering of user text for one-line messages. */
static void snippet(char *out, size_t outsz, const char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 8 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (i < n && o + 4 <= outsz) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static int fail_at(
    struct conv *c, int code, const yaml_mark_t *m, const char *what)
{
	return cu_error_set(c->err, code, "line %zu, column %zu: %s",
	    m->line + 1, m->column + 1, what);
}

/* libyaml's own failure, positioned from its marks. */
static int fail_parser(struct conv *c, const yaml_parser_t *p)
{
	size_t line = 1, col = 1, i;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return cu_error_set(c->err, CU_ENOMEM, "yaml: out of memory");
	case YAML_READER_ERROR:
		/* Reader errors carry a byte offset only. */
		for (i = 0; i < p->problem_offset && i < c->len; i++) {
			if (c->buf[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (p->problem_value != -1)
			return cu_error_set(c->err, CU_EPARSE,
			    "line %zu, column %zu: %s (byte 0x%02x)", line, col,
			    p->problem ? p->problem : "invalid input",
			    (unsigned)p->problem_value & 0xffu);
		return cu_error_set(c->err, CU_EPARSE,
		    "line %zu, column %zu: %s", line, col,
		    p->problem ? p->problem : "invalid input");
	default:
		break;
	}
	if (p->context != NULL &&
	    (p->context_mark.line != p->problem_mark.line ||
		p->context_mark.column != p->problem_mark.column))
		return cu_error_set(c->err, CU_EPARSE,
		    "line %zu, column %zu: %s (%s at line %zu, column %zu)",
		    p->problem_mark.line + 1, p->problem_mark.column + 1,
		    p->problem ? p->problem : "syntax error", p->context,
		    p->context_mark.line + 1, p->context_mark.column + 1);
	return cu_error_set(c->err, CU_EPARSE, "line %zu, column %zu: %s",
	    p->problem_mark.line + 1, p->problem_mark.column + 1,
	    p->problem ? p->problem : "syntax error");
}

/*
 * Resolve a scalar event into r, honouring explicit tags the way go-yaml
 * does: no tag and quoted -> string; !!str -> string; !!int/!!float/
 * !!bool/!!null -> resolved and type-checked; other tags -> string.
 */
static int resolve_event(
    struct conv *c, const yaml_event_t *ev, struct resolved *r)
{
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *v = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *want = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->kind = R_STR;
	if (tag == NULL)
		return ev->data.scalar.plain_implicit ? resolve_plain(v, n, r)
						      : CU_OK;
	if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
		return CU_OK;
	tag += strlen(TAG_PREFIX);
	if (strcmp(tag, "binary") == 0)
		return fail_at(c, CU_EUNSUPPORTED, &ev->start_mark,
		    "!!binary scalars are not supported (use plain base64)");
	if (strcmp(tag, "int") == 0)
		want = "!!int";
	else if (strcmp(tag, "float") == 0)
		want = "!!float";
	else if (strcmp(tag, "bool") == 0)
		want = "!!bool";
	else if (strcmp(tag, "null") == 0)
		want = "!!null";
	if (want == NULL)
		return CU_OK;
	rc = resolve_plain(v, n, r);
	if (rc != CU_OK)
		return rc;
	if (strcmp(want, "!!float") == 0 &&
	    (r->kind == R_INT || r->kind == R_UINT)) {
		r->d = r->kind == R_INT ? (double)r->i : (double)r->u;
		r->kind = R_FLOAT;
	}
	if (strcmp(rkind_tag(r->kind), want) != 0) {
		char s[80];

		snippet(s, sizeof(s), v, n);
		return cu_error_set(c->err, CU_EPARSE,
		    "line %zu, column %zu: cannot decode %s \"%s\" as a %s",
		    ev->start_mark.line + 1, ev->start_mark.column + 1,
		    rkind_tag(r->kind), s, want);
	}
	return CU_OK;
}

/* Number as JSON would carry it: an integral float is what Go's
 * encoding/json prints without a fraction, so it reads back as an integer
 * (e.g. "1e3" -> 1000). */
static json_t *json_number(double d)
{
	if (d == floor(d) && d >= -9223372036854775808.0 &&
	    d < 9223372036854775808.0)
		return json_integer((json_int_t)d);
	return json_real(d);
}

/* resolve_event, with the one-line message of an allocation failure. */
static int resolve(struct conv *c, const yaml_event_t *ev, struct resolved *r)
{
	int rc = resolve_event(c, ev, r);

	if (rc == CU_ENOMEM)
		return cu_error_set(c->err, rc, "yaml: out of memory");
	return rc;
}

static int scalar_value(struct conv *c, const yaml_event_t *ev, json_t **out)
{
	struct resolved r;
	uint64_t failures;
	int rc = resolve(c, ev, &r);

	*out = NULL;
	if (rc != CU_OK)
		return rc;
	switch (r.kind) {
	case R_NULL:
		*out = json_null();
		break;
	case R_BOOL:
		*out = json_boolean(r.b);
		break;
	case R_INT:
		*out = json_integer((json_int_t)r.i);
		break;
	case R_UINT:
		/* Beyond int64: JSON readers see a float64 too. */
		*out = json_real((double)r.u);
		break;
	case R_FLOAT:
		if (!isfinite(r.d))
			return fail_at(c, CU_EPARSE, &ev->start_mark,
			    ".inf and .nan cannot be represented in JSON");
		*out = json_number(r.d);
		break;
	case R_STR:
		failures = cu_mem_failures();
		*out = json_stringn((const char *)ev->data.scalar.value,
		    ev->data.scalar.length);
		if (*out == NULL && cu_mem_failures() == failures)
			return fail_at(c, CU_EPARSE, &ev->start_mark,
			    "scalar is not valid UTF-8");
		break;
	}
	if (*out == NULL)
		return cu_error_set(c->err, CU_ENOMEM, "yaml: out of memory");
	return CU_OK;
}

/*
 * strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for
 * float map keys, so that "1.5: x" and "1e6: x" give Go's key strings.
 * Go's shortest 'g' switches to exponent form at exp < -4 || exp >= 6
 * whatever the digit count, unlike C's %g.
 */
static void go_float32_key(double d, char out[48])
{
	float f = (float)d;
	char e[48];
	int p, exp, nd;
	const char *x;

	if (isnan(f)) {
		snprintf(out, 48, "%s", ".nan");
		return;
	}
	if (isinf(f)) {
		snprintf(out, 48, "%s", f > 0 ? ".inf" : "-.inf");
		return;
	}
	for (p = 1; p < 9; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, (double)f);
		if (strtof(e, NULL) == f)
			break;
	}
	snprintf(e, sizeof(e), "%.*e", p - 1, (double)f);
	x = strchr(e, 'e');
	exp = x != NULL ? (int)strtol(x + 1, NULL, 10) : 0;
	/* The smallest p that round-trips has no trailing zero digit. */
	nd = p;
	if (exp < -4 || exp >= 6) {
		snprintf(out, 48, "%.*e", nd - 1, (double)f);
		return;
	}
	snprintf(
	    out, 48, "%.*f", nd - 1 - exp > 0 ? nd - 1 - exp : 0, (double)f);
}

/* The JSON key for a key scalar (sigs.k8s.io/yaml convertToJSONableObject). */
static int scalar_key(
    struct conv *c, const yaml_event_t *ev, char **key, size_t *klen)
{
	struct resolved r;
	char tmp[48];
	const char *src = tmp;
	size_t n;
	int rc;

	*key = NULL;
	if (ev->data.scalar.plain_implicit && ev->data.scalar.tag == NULL &&
	    strcmp((const char *)ev->data.scalar.value, "<<") == 0)
		return fail_at(c, CU_EUNSUPPORTED, &ev->start_mark,
		    "merge keys (<<) are not supported");
	rc = resolve(c, ev, &r);
	if (rc != CU_OK)
		return rc;
	switch (r.kind) {
	case R_NULL:
		return fail_at(c, CU_EPARSE, &ev->start_mark,
		    "null map key cannot be converted to JSON");
	case R_UINT:
		return fail_at(c, CU_EPARSE, &ev->start_mark,
		    "map key beyond int64 cannot be converted to JSON");
	case R_BOOL:
		src = r.b ? "true" : "false";
		break;
	case R_INT:
		snprintf(tmp, sizeof(tmp), "%" PRId64, r.i);
		break;
	case R_FLOAT:
		go_float32_key(r.d, tmp);
		break;
	case R_STR:
		src = (const char *)ev->data.scalar.value;
		break;
	}
	n = r.kind == R_STR ? ev->data.scalar.length : strlen(src);
	*key = cu_malloc(n + 1);
	if (*key == NULL)
		return cu_error_set(c->err, CU_ENOMEM, "yaml: out of memory");
	memcpy(*key, src, n);
	(*key)[n] = '\0';
	*klen = n;
	return CU_OK;
}

static int count_node(struct conv *c, const yaml_event_t *ev)
{
	const char *anchor = NULL;

	if (ev->type == YAML_SCALAR_EVENT)
		anchor = (const char *)ev->data.scalar.anchor;
	else if (ev->type == YAML_SEQUENCE_START_EVENT)
		anchor = (const char *)ev->data.sequence_start.anchor;
	else if (ev->type == YAML_MAPPING_START_EVENT)
		anchor = (const char *)ev->data.mapping_start.anchor;
	if (anchor != NULL) {
		char s[80];

		snippet(s, sizeof(s), anchor, strlen(anchor));
		return cu_error_set(c->err, CU_EUNSUPPORTED,
		    "line %zu, column %zu: anchors are not allowed (&%s)",
		    ev->start_mark.line + 1, ev->start_mark.column + 1, s);
	}
	if (++c->nodes > c->max_nodes)
		return cu_error_set(c->err, CU_ETOOBIG,
		    "line %zu, column %zu: more than %zu nodes",
		    ev->start_mark.line + 1, ev->start_mark.column + 1,
		    c->max_nodes);
	return CU_OK;
}

/*
 * Place a new value (scalar, or a just-started container) in the current
 * context: document root, next sequence item, or value of the pending key.
 * value [consumed]. *lid receives the index entry of the value.
 */
static int place(
    struct conv *c, const yaml_event_t *ev, json_t *value, uint32_t *lid)
{
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;
	int rc;

	if (top == NULL) {
		c->root = value;
		c->have_root = true;
		rc = lines_add(c->lines, NO_PARENT, true, NULL, 0, 0,
		    &ev->start_mark, lid);
	} else if (!top->is_map) {
		size_t idx = top->index++;

		if (json_array_append_new(top->node, value) != 0)
			return cu_error_set(
			    c->err, CU_ENOMEM, "yaml: out of memory");
		rc = lines_add(c->lines, top->lid, true, NULL, 0, idx,
		    &ev->start_mark, lid);
	} else {
		uint64_t failures = cu_mem_failures();

		rc = json_object_setn_new(
		    top->node, top->key, top->key_len, value);
		if (rc != 0 && cu_mem_failures() != failures)
			return cu_error_set(
			    c->err, CU_ENOMEM, "yaml: out of memory");
		if (rc != 0) {
			char s[80];

			snippet(s, sizeof(s), top->key, top->key_len);
			return cu_error_set(c->err, CU_EPARSE,
			    "line %zu, column %zu: key \"%s\" is not valid "
			    "UTF-8",
			    top->key_mark.line + 1, top->key_mark.column + 1,
			    s);
		}
		rc = lines_add(c->lines, top->lid, false, top->key,
		    top->key_len, 0, &top->key_mark, lid);
		cu_free(top->key);
		top->key = NULL;
		top->have_key = false;
	}
	if (rc != CU_OK)
		return cu_error_set(c->err, rc == CU_ETOOBIG ? rc : CU_ENOMEM,
		    "yaml: line index too large or out of memory");
	return CU_OK;
}

static int on_key(struct conv *c, struct frame *top, const yaml_event_t *ev)
{
	char *key = NULL;
	size_t klen = 0; /* set by scalar_key; initialised for -O2's sake */
	int rc = scalar_key(c, ev, &key, &klen);

	if (rc != CU_OK)
		return rc;
	if (json_object_getn(top->node, key, klen) != NULL) {
		const struct lines_entry *first =
		    lines_find(c->lines, top->lid, false, key, klen, 0);
		char s[80];

		snippet(s, sizeof(s), key, klen);
		cu_free(key);
		return cu_error_set(c->err, CU_EPARSE,
		    "line %zu, column %zu: duplicate key \"%s\" (first at "
		    "line %d)",
		    ev->start_mark.line + 1, ev->start_mark.column + 1, s,
		    first != NULL ? first->line : 0);
	}
	top->key = key;
	top->key_len = klen;
	top->key_mark = ev->start_mark;
	top->have_key = true;
	return CU_OK;
}

static int on_start(struct conv *c, const yaml_event_t *ev, bool is_map)
{
	struct frame *f;
	json_t *node;
	uint32_t lid;
	int rc;

	if (c->depth >= c->max_depth)
		return cu_error_set(c->err, CU_ETOOBIG,
		    "line %zu, column %zu: nesting deeper than %u levels",
		    ev->start_mark.line + 1, ev->start_mark.column + 1,
		    c->max_depth);
	if (c->depth == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct frame *ns = cu_realloc(c->stack, ncap * sizeof(*ns));

		if (ns == NULL)
			return cu_error_set(
			    c->err, CU_ENOMEM, "yaml: out of memory");
		c->stack = ns;
		c->cap = ncap;
	}
	node = is_map ? json_object() : json_array();
	if (node == NULL)
		return cu_error_set(c->err, CU_ENOMEM, "yaml: out of memory");
	rc = place(c, ev, node, &lid);
	if (rc != CU_OK)
		return rc;
	f = &c->stack[c->depth++];
	memset(f, 0, sizeof(*f));
	f->node = node;
	f->is_map = is_map;
	f->lid = lid;
	return CU_OK;
}

static void conv_reset_doc(struct conv *c)
{
	while (c->depth > 0)
		cu_free(c->stack[--c->depth].key);
	json_decref(c->root);
	c->root = NULL;
	c->have_root = false;
}

static int on_event(struct conv *c, const yaml_event_t *ev)
{
	struct frame *top = c->depth ? &c->stack[c->depth - 1] : NULL;
	json_t *v;
	uint32_t lid;
	int rc;

	switch (ev->type) {
	case YAML_ALIAS_EVENT: {
		char s[80];
		const char *a = (const char *)ev->data.alias.anchor;

		snippet(s, sizeof(s), a, strlen(a));
		return cu_error_set(c->err, CU_EUNSUPPORTED,
		    "line %zu, column %zu: aliases are not allowed (*%s)",
		    ev->start_mark.line + 1, ev->start_mark.column + 1, s);
	}
	case YAML_SCALAR_EVENT:
		rc = count_node(c, ev);
		if (rc != CU_OK)
			return rc;
		if (top != NULL && top->is_map && !top->have_key)
			return on_key(c, top, ev);
		rc = scalar_value(c, ev, &v);
		if (rc != CU_OK)
			return rc;
		return place(c, ev, v, &lid);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		rc = count_node(c, ev);
		if (rc != CU_OK)
			return rc;
		if (top != NULL && top->is_map && !top->have_key)
			return fail_at(c, CU_EPARSE, &ev->start_mark,
			    "map keys must be scalars");
		return on_start(c, ev, ev->type == YAML_MAPPING_START_EVENT);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		CU_ASSERT(top != NULL);
		cu_free(top->key);
		c->depth--;
		return CU_OK;
	default:
		return CU_OK;
	}
}

static void limits_of(const struct api_yaml_limits *lim, size_t *max_bytes,
    unsigned *max_depth, size_t *max_nodes)
{
	*max_bytes =
	    lim && lim->max_bytes ? lim->max_bytes : API_YAML_DEFAULT_MAX_BYTES;
	*max_depth =
	    lim && lim->max_depth ? lim->max_depth : API_YAML_DEFAULT_MAX_DEPTH;
	*max_nodes =
	    lim && lim->max_nodes ? lim->max_nodes : API_YAML_DEFAULT_MAX_NODES;
}

/*
 * Drive the parser over the stream. all: collect every non-null document
 * into an array; else keep the one non-null document (and its index).
 */
static int parse_stream(json_t **out, api_yaml_lines **lines_out,
    const char *buf, size_t len, const struct api_yaml_limits *lim, bool all,
    cu_error *err)
{
	struct conv c;
	yaml_parser_t parser;
	yaml_event_t ev;
	size_t max_bytes;
	json_t *result = NULL;
	api_yaml_lines *kept = NULL;
	yaml_mark_t doc_mark = {0, 0, 0};
	bool done = false;
	int rc = CU_OK;

	*out = NULL;
	if (lines_out != NULL)
		*lines_out = NULL;
	memset(&c, 0, sizeof(c));
	c.buf = buf;
	c.len = len;
	c.err = err;
	limits_of(lim, &max_bytes, &c.max_depth, &c.max_nodes);
	if (buf == NULL && len != 0)
		return cu_error_set(err, CU_EINVAL, "yaml: NULL input");
	if (len > max_bytes)
		return cu_error_set(err, CU_ETOOBIG,
		    "yaml: input is %zu bytes, limit is %zu", len, max_bytes);
	if (all) {
		result = json_array();
		if (result == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "yaml: out of memory");
	}
	if (!yaml_parser_initialize(&parser)) {
		json_decref(result);
		return cu_error_set(err, CU_ENOMEM, "yaml: out of memory");
	}
	yaml_parser_set_input_string(
	    &parser, (const unsigned char *)(buf != NULL ? buf : ""), len);
	while (!done && rc == CU_OK) {
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = fail_parser(&c, &parser);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			conv_reset_doc(&c);
			api_yaml_lines_free(c.lines);
			c.lines = lines_new();
			if (c.lines == NULL)
				rc = cu_error_set(
				    err, CU_ENOMEM, "yaml: out of memory");
			doc_mark = ev.start_mark;
			break;
		case YAML_DOCUMENT_END_EVENT:
			/* Documents that are null (empty, "~", only
			 * comments) are skipped, as kubectl does. */
			if (c.root == NULL || json_is_null(c.root)) {
				conv_reset_doc(&c);
			} else if (all) {
				if (json_array_append_new(result, c.root) != 0)
					rc = cu_error_set(err, CU_ENOMEM,
					    "yaml: out of memory");
				c.root = NULL;
			} else if (kept != NULL || *out != NULL) {
				rc = fail_at(&c, CU_EPARSE, &doc_mark,
				    "expected a single document, found "
				    "another one");
			} else {
				*out = c.root;
				c.root = NULL;
				kept = c.lines;
				c.lines = NULL;
			}
			break;
		default:
			rc = on_event(&c, &ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	conv_reset_doc(&c);
	cu_free(c.stack);
	api_yaml_lines_free(c.lines);
	if (rc != CU_OK) {
		json_decref(*out);
		*out = NULL;
		json_decref(result);
		api_yaml_lines_free(kept);
		return rc;
	}
	if (all) {
		*out = result;
	} else if (*out == NULL) {
		*out = json_null();
	}
	if (lines_out != NULL) {
		if (kept == NULL)
			kept = lines_new();
		if (kept == NULL) {
			json_decref(*out);
			*out = NULL;
			return cu_error_set(
			    err, CU_ENOMEM, "yaml: out of memory");
		}
		*lines_out = kept;
	} else {
		api_yaml_lines_free(kept);
	}
	return CU_OK;
}

int api_yaml_load(json_t **out, api_yaml_lines **lines, const char *buf,
    size_t len, const struct api_yaml_limits *lim, cu_error *err)
{
	return parse_stream(out, lines, buf, len, lim, false, err);
}

int api_yaml_load_all(json_t **out, const char *buf, size_t len,
    const struct api_yaml_limits *lim, cu_error *err)
{
	return parse_stream(out, NULL, buf, len, lim, true, err);
}

static int read_file(const char *path, size_t max, cu_buf *b, cu_error *err)
{
	FILE *f = fopen(path, "rb");
	char chunk[16384];
	size_t n;

	if (f == NULL)
		return cu_error_set(err,
		    errno == ENOENT ? CU_ENOTFOUND : CU_EIO, "%s: %s", path,
		    strerror(errno));
	/* One byte over the limit is enough to know it is too big. */
	cu_buf_init(b, max + 1 > max ? max + 1 : max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		int rc = cu_buf_add(b, chunk, n);

		if (rc != CU_OK) {
			fclose(f);
			if (rc == CU_ETOOBIG)
				return cu_error_set(err, CU_ETOOBIG,
				    "%s: larger than %zu bytes", path, max);
			return cu_error_set(err, rc, "%s: out of memory", path);
		}
	}
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		cu_buf_dispose(b);
		return cu_error_set(err, CU_EIO, "%s: %s", path, strerror(e));
	}
	fclose(f);
	if (b->len > max) {
		cu_buf_dispose(b);
		return cu_error_set(
		    err, CU_ETOOBIG, "%s: larger than %zu bytes", path, max);
	}
	return CU_OK;
}

int api_yaml_load_file(json_t **out, api_yaml_lines **lines, const char *path,
    const struct api_yaml_limits *lim, cu_error *err)
{
	size_t max_bytes, max_nodes;
	unsigned max_depth;
	cu_buf b;
	cu_error inner;
	int rc;

	*out = NULL;
	if (lines != NULL)
		*lines = NULL;
	limits_of(lim, &max_bytes, &max_depth, &max_nodes);
	rc = read_file(path, max_bytes, &b, err);
	if (rc != CU_OK)
		return rc;
	cu_error_clear(&inner);
	rc = api_yaml_load(out, lines, b.ptr, b.len, lim, &inner);
	cu_buf_dispose(&b);
	if (rc != CU_OK)
		return cu_error_set(err, rc, "%s: %s", path, inner.msg);
	return CU_OK;
}
