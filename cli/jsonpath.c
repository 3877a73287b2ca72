/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/jsonpath.c - kubectl's JSONPath templates (`-o jsonpath=...`), as
 * client-go's util/jsonpath reads and prints them, for kubectl-cueue's
 * output. See cli_jsonpath_parse in cli/cli.h for the language.
 *
 * A template compiles to a list of nodes (text, an expression, a range
 * with its body); an expression is a list of steps applied to a set of
 * values (borrowed pointers into the document), starting from the root
 * ($, or @ inside a range). Missing keys give no value, as kubectl's
 * jsonpath printer allows them. Depth and sizes are bounded, so hostile
 * templates cost bounded time and memory.
 */
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "cli/cli.h"

#define JP_MAX_TEMPLATE 8192
#define JP_MAX_DEPTH 16	     /* nested ranges, filter paths */
#define JP_MAX_VALUES 100000 /* values in one set */
#define JP_MAX_UNION 32

enum step_kind {
	ST_FIELD,     /* .name or ['name'] */
	ST_RECURSIVE, /* ..name, ..* : name NULL for any */
	ST_WILDCARD,  /* .* or [*] */
	ST_SLICE,     /* [i], [s:e], [s:e:st] */
	ST_UNION,     /* ['a','b'] or [0,2] */
	ST_FILTER,    /* [?(@.x OP lit)] */
};

enum filter_op { OP_EXISTS, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct path;

struct step {
	enum step_kind kind;
	char *name; /* [owned] ST_FIELD, ST_RECURSIVE (NULL: any) */
	/* ST_SLICE */
	long start, end, stride;
	bool has_start, has_end, single;
	/* ST_UNION: names or indexes */
	char *names[JP_MAX_UNION]; /* [owned] */
	long idx[JP_MAX_UNION];
	size_t nunion;
	bool union_idx;
	/* ST_FILTER */
	struct path *left, *rpath; /* [owned] rpath when the right is a path */
	enum filter_op op;
	json_t *lit; /* [owned] right-hand literal */
};

struct path {
	bool from_root;	    /* $: the document; else @, the current value */
	struct step *steps; /* [owned] */
	size_t n;
};

enum node_kind { N_TEXT, N_EXPR, N_RANGE };

struct node {
	enum node_kind kind;
	char *text;	   /* [owned] N_TEXT */
	struct path *path; /* [owned] N_EXPR, N_RANGE */
	struct node *body; /* [owned] N_RANGE: nbody nodes */
	size_t nbody;
};

struct cli_jsonpath {
	struct node *nodes; /* [owned] */
	size_t n;
};

/* ---- freeing ---------------------------------------------------------- */

static void path_free(struct path *p);

static void step_dispose(struct step *s)
{
	size_t i;

	cu_free(s->name);
	for (i = 0; i < s->nunion; i++)
		cu_free(s->names[i]);
	path_free(s->left);
	path_free(s->rpath);
	json_decref(s->lit);
}

static void path_free(struct path *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		step_dispose(&p->steps[i]);
	cu_free(p->steps);
	cu_free(p);
}

static void nodes_dispose(struct node *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cu_free(v[i].text);
		path_free(v[i].path);
		nodes_dispose(v[i].body, v[i].nbody);
	}
	cu_free(v);
}

void cli_jsonpath_free(cli_jsonpath *jp)
{
	if (jp == NULL)
		return;
	nodes_dispose(jp->nodes, jp->n);
	cu_free(jp);
}

/* ---- parsing ---------------------------------------------------------- */

struct parser {
	const char *s; /* the expression being read */
	size_t i, len;
	cu_error *err;
	int depth;
};

static int perr(struct parser *p, const char *what)
{
	return cu_error_set(p->err, CU_EINVAL,
	    "jsonpath: %s at %zu in \"%.*s\"", what, p->i, (int)p->len, p->s);
}

static void skip_ws(struct parser *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
		p->i++;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '/' ||
	       c == '$' || (unsigned char)c >= 0x80;
}

static int push_step(struct path *pa, struct step *st, struct parser *p)
{
	struct step *v;

	if (pa->n >= 64) {
		step_dispose(st);
		return perr(p, "too many steps");
	}
	v = cu_realloc(pa->steps, (pa->n + 1) * sizeof(*v));
	if (v == NULL) {
		step_dispose(st);
		return cu_error_set(p->err, CU_ENOMEM, "out of memory");
	}
	pa->steps = v;
	pa->steps[pa->n++] = *st;
	return CU_OK;
}

/* A quoted string at p->i ('...' or "..."), with \ escapes, into *out
 * [owned]. */
static int read_quoted(struct parser *p, char **out)
{
	char q = p->s[p->i++];
	cu_buf b;
	int rc = CU_OK;

	cu_buf_init(&b, JP_MAX_TEMPLATE);
	if (cu_buf_adds(&b, "") != CU_OK)
		return cu_error_set(p->err, CU_ENOMEM, "out of memory");
	while (p->i < p->len && p->s[p->i] != q) {
		char c = p->s[p->i++];

		if (c == '\\' && p->i < p->len) {
			c = p->s[p->i++];
			c = c == 'n'   ? '\n'
			    : c == 't' ? '\t'
			    : c == 'r' ? '\r'
				       : c;
		}
		if (cu_buf_add(&b, &c, 1) != CU_OK) {
			rc = cu_error_set(p->err, CU_ENOMEM, "out of memory");
			break;
		}
	}
	if (rc == CU_OK && p->i >= p->len)
		rc = perr(p, "unterminated string");
	if (rc != CU_OK) {
		cu_buf_dispose(&b);
		return rc;
	}
	p->i++;
	*out = cu_strdup(b.ptr);
	cu_buf_dispose(&b);
	return *out != NULL ? CU_OK
			    : cu_error_set(p->err, CU_ENOMEM, "out of memory");
}

static bool read_long(struct parser *p, long *out)
{
	size_t st = p->i;
	long v = 0;
	bool neg = false;

	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == '-') {
		neg = true;
		p->i++;
	}
	if (p->i >= p->len || p->s[p->i] < '0' || p->s[p->i] > '9') {
		p->i = st;
		return false;
	}
	while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
		if (v < 100000000L)
			v = v * 10 + (p->s[p->i] - '0');
		p->i++;
	}
	*out = neg ? -v : v;
	skip_ws(p);
	return true;
}

static int parse_path(struct parser *p, struct path **out, bool in_filter);

/* The right side of a filter: a literal or a path. */
static int filter_right(struct parser *p, struct step *st)
{
	skip_ws(p);
	if (p->i < p->len && (p->s[p->i] == '\'' || p->s[p->i] == '"')) {
		char *s = NULL;
		int rc = read_quoted(p, &s);

		if (rc != CU_OK)
			return rc;
		st->lit = json_string(s);
		cu_free(s);
	} else if (p->i < p->len && (p->s[p->i] == '@' || p->s[p->i] == '$')) {
		return parse_path(p, &st->rpath, true);
	} else {
		size_t b = p->i;
		char num[64];

		while (p->i < p->len && p->s[p->i] != ')' && p->s[p->i] != ' ')
			p->i++;
		if (p->i == b || p->i - b >= sizeof(num))
			return perr(p, "filter: expected a value");
		memcpy(num, p->s + b, p->i - b);
		num[p->i - b] = '\0';
		if (strcmp(num, "true") == 0 || strcmp(num, "false") == 0)
			st->lit = json_boolean(num[0] == 't');
		else {
			char *end;
			double d = strtod(num, &end);

			if (*end != '\0')
				return perr(p, "filter: expected a value");
			st->lit = json_real(d);
		}
	}
	return st->lit != NULL || st->rpath != NULL
		   ? CU_OK
		   : cu_error_set(p->err, CU_ENOMEM, "out of memory");
}

/* [?( LEFT [OP RIGHT] )] after "[?(" */
static int parse_filter(struct parser *p, struct step *st)
{
	static const struct {
		const char *s;
		enum filter_op op;
	} ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
	    {"<", OP_LT}, {">", OP_GT}};
	size_t k;
	int rc;

	st->kind = ST_FILTER;
	skip_ws(p);
	rc = parse_path(p, &st->left, true);
	if (rc != CU_OK)
		return rc;
	skip_ws(p);
	st->op = OP_EXISTS;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].s);

		if (p->len - p->i >= n &&
		    strncmp(p->s + p->i, ops[k].s, n) == 0) {
			st->op = ops[k].op;
			p->i += n;
			break;
		}
	}
	if (st->op != OP_EXISTS) {
		rc = filter_right(p, st);
		if (rc != CU_OK)
			return rc;
	}
	skip_ws(p);
	if (p->len - p->i < 2 || p->s[p->i] != ')' || p->s[p->i + 1] != ']')
		return perr(p, "filter: expected )]");
	p->i += 2;
	return CU_OK;
}

/* [...] after "[" */
static int parse_bracket(struct parser *p, struct step *st)
{
	long v;

	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == '*') {
		p->i++;
		skip_ws(p);
		st->kind = ST_WILDCARD;
	} else if (p->len - p->i >= 2 && p->s[p->i] == '?' &&
		   p->s[p->i + 1] == '(') {
		p->i += 2;
		return parse_filter(p, st);
	} else if (p->i < p->len && (p->s[p->i] == '\'' || p->s[p->i] == '"')) {
		st->kind = ST_UNION;
		for (;;) {
			int rc;

			if (st->nunion == JP_MAX_UNION)
				return perr(p, "too many names");
			rc = read_quoted(p, &st->names[st->nunion]);
			if (rc != CU_OK)
				return rc;
			st->nunion++;
			skip_ws(p);
			if (p->i < p->len && p->s[p->i] == ',') {
				p->i++;
				skip_ws(p);
				if (p->i < p->len &&
				    (p->s[p->i] == '\'' || p->s[p->i] == '"'))
					continue;
				return perr(p, "expected a quoted name");
			}
			break;
		}
		if (st->nunion == 1) {
			st->kind = ST_FIELD;
			st->name = st->names[0];
			st->names[0] = NULL;
			st->nunion = 0;
		}
	} else {
		bool have = read_long(p, &v);

		st->kind = ST_SLICE;
		st->stride = 1;
		if (p->i < p->len && p->s[p->i] == ',' && have) {
			st->kind = ST_UNION;
			st->union_idx = true;
			st->idx[st->nunion++] = v;
			while (p->i < p->len && p->s[p->i] == ',') {
				p->i++;
				if (st->nunion == JP_MAX_UNION ||
				    !read_long(p, &v))
					return perr(p, "bad index list");
				st->idx[st->nunion++] = v;
			}
		} else if (p->i < p->len && p->s[p->i] == ':') {
			st->has_start = have;
			st->start = have ? v : 0;
			p->i++;
			st->has_end = read_long(p, &st->end);
			if (p->i < p->len && p->s[p->i] == ':') {
				p->i++;
				if (read_long(p, &st->stride) &&
				    st->stride == 0)
					return perr(p, "step must not be 0");
				if (st->stride == 0)
					st->stride = 1;
			}
		} else if (have) {
			st->single = true;
			st->start = v;
		} else {
			return perr(p, "bad subscript");
		}
	}
	if (p->i >= p->len || p->s[p->i] != ']')
		return perr(p, "expected ]");
	p->i++;
	return CU_OK;
}

/* A field name; "\." and other backslash escapes keep the character. */
static int read_name(struct parser *p, char **out)
{
	char *n = cu_malloc(p->len - p->i + 1);
	size_t k = 0;

	if (n == NULL)
		return cu_error_set(p->err, CU_ENOMEM, "out of memory");
	while (p->i < p->len) {
		char c = p->s[p->i];

		if (c == '\\' && p->i + 1 < p->len) {
			n[k++] = p->s[p->i + 1];
			p->i += 2;
		} else if (name_char(c)) {
			n[k++] = c;
			p->i++;
		} else {
			break;
		}
	}
	n[k] = '\0';
	if (k == 0) {
		cu_free(n);
		return perr(p, "expected a field name");
	}
	*out = n;
	return CU_OK;
}

/* One step at p->i (after the root); *done when the path ends. */
static int parse_step(struct parser *p, struct step *st, bool *done)
{
	char c = p->s[p->i];

	*done = false;
	if (c == '.' && p->i + 1 < p->len && p->s[p->i + 1] == '.') {
		p->i += 2;
		st->kind = ST_RECURSIVE;
		if (p->i < p->len && p->s[p->i] == '*') {
			p->i++;
			return CU_OK;
		}
		if (p->i < p->len && p->s[p->i] == '[')
			return CU_OK; /* ..[...]: all, then the subscript */
		return read_name(p, &st->name);
	}
	if (c == '.') {
		p->i++;
		if (p->i < p->len && p->s[p->i] == '*') {
			p->i++;
			st->kind = ST_WILDCARD;
			return CU_OK;
		}
		if (p->i >= p->len ||
		    (!name_char(p->s[p->i]) && p->s[p->i] != '\\')) {
			/* "{.}" is the current value itself */
			*done = true;
			return CU_OK;
		}
		st->kind = ST_FIELD;
		return read_name(p, &st->name);
	}
	if (c == '[') {
		p->i++;
		return parse_bracket(p, st);
	}
	*done = true;
	return CU_OK;
}

static int parse_path(struct parser *p, struct path **out, bool in_filter)
{
	struct path *pa;
	int rc = CU_OK;

	if (++p->depth > JP_MAX_DEPTH) {
		p->depth--;
		return perr(p, "nested too deep");
	}
	pa = cu_calloc(1, sizeof(*pa));
	if (pa == NULL) {
		p->depth--;
		return cu_error_set(p->err, CU_ENOMEM, "out of memory");
	}
	skip_ws(p);
	if (p->i < p->len && (p->s[p->i] == '$' || p->s[p->i] == '@')) {
		pa->from_root = p->s[p->i] == '$';
		p->i++;
	} else if (p->i < p->len &&
		   (name_char(p->s[p->i]) || p->s[p->i] == '\\')) {
		/* {metadata.name}: a leading field without its dot */
		struct step st = {.kind = ST_FIELD};

		rc = read_name(p, &st.name);
		if (rc == CU_OK)
			rc = push_step(pa, &st, p);
	}
	while (rc == CU_OK && p->i < p->len) {
		struct step st = {.kind = ST_FIELD};
		bool done;

		if (in_filter && (p->s[p->i] == ' ' || p->s[p->i] == ')' ||
				     strchr("=!<>", p->s[p->i]) != NULL))
			break;
		rc = parse_step(p, &st, &done);
		if (rc != CU_OK) {
			step_dispose(&st);
			break;
		}
		if (done)
			break;
		rc = push_step(pa, &st, p);
	}
	p->depth--;
	if (rc != CU_OK) {
		path_free(pa);
		return rc;
	}
	*out = pa;
	return CU_OK;
}

static int add_node(
    struct node **v, size_t *n, const struct node *nd, cu_error *err)
{
	struct node *nv = cu_realloc(*v, (*n + 1) * sizeof(**v));

	if (nv == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	*v = nv;
	(*v)[(*n)++] = *nd;
	return CU_OK;
}

static void node_dispose(struct node *nd)
{
	cu_free(nd->text);
	path_free(nd->path);
	nodes_dispose(nd->body, nd->nbody);
}

/*
 * Nodes from t[*pos] up to the end, or to an {end} when in_range (then
 * *pos is after it). depth bounds nested ranges.
 */
static int parse_nodes(const char *t, size_t *pos, bool in_range, int depth,
    struct node **out, size_t *nout, cu_error *err)
{
	size_t len = strlen(t);
	int rc = CU_OK;

	if (depth > JP_MAX_DEPTH)
		return cu_error_set(
		    err, CU_EINVAL, "jsonpath: ranges nested too deep");
	while (rc == CU_OK && *pos < len) {
		struct node nd = {.kind = N_TEXT};
		const char *open = strchr(t + *pos, '{'), *close;
		struct parser p = {.err = err};

		if (open != t + *pos) {
			size_t n =
			    open ? (size_t)(open - t - *pos) : len - *pos;

			nd.text = cu_strndup(t + *pos, n);
			*pos += n;
			rc = nd.text ? add_node(out, nout, &nd, err)
				     : cu_error_set(
					   err, CU_ENOMEM, "out of memory");
			if (rc != CU_OK)
				node_dispose(&nd);
			continue;
		}
		/* the matching }, skipping quoted strings */
		close = open + 1;
		while (*close != '\0' && *close != '}') {
			if (*close == '"' || *close == '\'') {
				char q = *close++;

				while (*close != '\0' && *close != q) {
					if (*close == '\\' && close[1] != '\0')
						close++;
					close++;
				}
				if (*close == '\0')
					break;
			}
			close++;
		}
		if (*close != '}')
			return cu_error_set(err, CU_EINVAL,
			    "jsonpath: unclosed action at %zu", *pos);
		p.s = open + 1;
		p.len = (size_t)(close - open - 1);
		*pos = (size_t)(close - t) + 1;
		skip_ws(&p);
		while (p.len > p.i &&
		       (p.s[p.len - 1] == ' ' || p.s[p.len - 1] == '\t'))
			p.len--;
		if (p.len - p.i == 3 && strncmp(p.s + p.i, "end", 3) == 0) {
			if (!in_range)
				return cu_error_set(err, CU_EINVAL,
				    "jsonpath: {end} without {range}");
			return CU_OK;
		}
		if (p.len - p.i > 6 && strncmp(p.s + p.i, "range ", 6) == 0) {
			p.i += 6;
			nd.kind = N_RANGE;
			rc = parse_path(&p, &nd.path, false);
			if (rc == CU_OK && p.i != p.len)
				rc = perr(&p, "unexpected text");
			if (rc == CU_OK)
				rc = parse_nodes(t, pos, true, depth + 1,
				    &nd.body, &nd.nbody, err);
		} else if (p.i < p.len &&
			   (p.s[p.i] == '"' || p.s[p.i] == '\'')) {
			rc = read_quoted(&p, &nd.text);
			if (rc == CU_OK && p.i != p.len)
				rc = perr(&p, "unexpected text");
		} else {
			nd.kind = N_EXPR;
			rc = parse_path(&p, &nd.path, false);
			if (rc == CU_OK && p.i != p.len)
				rc = perr(&p, "unexpected text");
		}
		if (rc == CU_OK)
			rc = add_node(out, nout, &nd, err);
		if (rc != CU_OK)
			node_dispose(&nd);
	}
	if (rc == CU_OK && in_range)
		rc = cu_error_set(
		    err, CU_EINVAL, "jsonpath: {range} without {end}");
	return rc;
}

int cli_jsonpath_parse(const char *tmpl, cli_jsonpath **out, cu_error *err)
{
	cli_jsonpath *jp;
	size_t pos = 0;
	int rc;

	*out = NULL;
	if (strlen(tmpl) > JP_MAX_TEMPLATE)
		return cu_error_set(err, CU_EINVAL,
		    "jsonpath: template longer than %d bytes", JP_MAX_TEMPLATE);
	jp = cu_calloc(1, sizeof(*jp));
	if (jp == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = parse_nodes(tmpl, &pos, false, 0, &jp->nodes, &jp->n, err);
	if (rc != CU_OK) {
		cli_jsonpath_free(jp);
		return rc;
	}
	*out = jp;
	return CU_OK;
}

/* ---- evaluation -------------------------------------------------------- */

struct vals {
	const json_t **v; /* [borrowed] each */
	size_t n, cap;
};

static int vals_add(struct vals *s, const json_t *j, cu_error *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		const json_t **nv;

		if (cap > JP_MAX_VALUES)
			return cu_error_set(err, CU_ETOOBIG,
			    "jsonpath: more than %d values", JP_MAX_VALUES);
		nv = cu_realloc((void *)s->v, cap * sizeof(*nv));
		if (nv == NULL)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = j;
	return CU_OK;
}

static int eval_path(const struct path *pa, const json_t *root,
    const json_t *cur, struct vals *out, cu_error *err);

/* Every value under j (j itself included), depth first. */
static int descend(const json_t *j, const char *name, struct vals *out,
    int depth, cu_error *err)
{
	const char *k;
	json_t *v;
	size_t i;
	int rc = CU_OK;

	if (depth > 64)
		return CU_OK;
	if (name == NULL)
		rc = vals_add(out, j, err);
	else if (json_is_object(j) && json_object_get(j, name) != NULL)
		rc = vals_add(out, json_object_get(j, name), err);
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
		{
			if (rc != CU_OK)
				break;
			rc = descend(v, name, out, depth + 1, err);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
		{
			if (rc != CU_OK)
				break;
			rc = descend(v, name, out, depth + 1, err);
		}
	}
	return rc;
}

static int slice(
    const struct step *st, const json_t *a, struct vals *out, cu_error *err)
{
	long n = (long)json_array_size(a), s, e, i;
	int rc = CU_OK;

	if (st->single) {
		s = st->start < 0 ? st->start + n : st->start;
		return s >= 0 && s < n
			   ? vals_add(out, json_array_get(a, (size_t)s), err)
			   : CU_OK;
	}
	s = st->has_start ? st->start : (st->stride > 0 ? 0 : n - 1);
	e = st->has_end ? st->end : (st->stride > 0 ? n : -n - 1);
	if (s < 0)
		s += n;
	if (e < 0)
		e += n;
	if (st->stride > 0) {
		s = s < 0 ? 0 : s;
		e = e > n ? n : e;
		for (i = s; i < e && rc == CU_OK; i += st->stride)
			rc = vals_add(out, json_array_get(a, (size_t)i), err);
	} else {
		s = s >= n ? n - 1 : s;
		for (i = s; i > e && i >= 0 && rc == CU_OK; i += st->stride)
			rc = vals_add(out, json_array_get(a, (size_t)i), err);
	}
	return rc;
}

/* a OP b for two JSON scalars; false when they cannot be compared. */
static bool compare(const json_t *a, enum filter_op op, const json_t *b)
{
	int c;

	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);

		c = x < y ? -1 : x > y ? 1 : 0;
	} else if (json_is_string(a) && json_is_string(b)) {
		c = strcmp(json_string_value(a), json_string_value(b));
	} else if (json_is_boolean(a) && json_is_boolean(b)) {
		c = json_is_true(a) == json_is_true(b) ? 0 : 1;
		if (op != OP_EQ && op != OP_NE)
			return false;
	} else {
		return op == OP_NE;
	}
	switch (op) {
	case OP_EQ:
		return c == 0;
	case OP_NE:
		return c != 0;
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	case OP_GT:
		return c > 0;
	case OP_GE:
		return c >= 0;
	case OP_EXISTS:
		break;
	}
	return false;
}

static int filter_one(const struct step *st, const json_t *root,
    const json_t *el, bool *keep, cu_error *err)
{
	struct vals l = {0}, r = {0};
	int rc;

	*keep = false;
	rc = eval_path(st->left, root, el, &l, err);
	if (rc == CU_OK && st->rpath != NULL)
		rc = eval_path(st->rpath, root, el, &r, err);
	if (rc == CU_OK) {
		if (st->op == OP_EXISTS)
			*keep = l.n > 0;
		else if (l.n > 0 && (st->rpath == NULL || r.n > 0))
			*keep = compare(l.v[0], st->op,
			    st->rpath != NULL ? r.v[0] : st->lit);
	}
	cu_free((void *)l.v);
	cu_free((void *)r.v);
	return rc;
}

static int apply_step(const struct step *st, const json_t *root,
    const json_t *j, struct vals *out, cu_error *err)
{
	const char *k;
	json_t *v;
	size_t i;
	int rc = CU_OK;

	switch (st->kind) {
	case ST_FIELD:
		v = json_is_object(j) ? json_object_get(j, st->name) : NULL;
		return v != NULL ? vals_add(out, v, err) : CU_OK;
	case ST_RECURSIVE:
		return descend(j, st->name, out, 0, err);
	case ST_WILDCARD:
		if (json_is_object(j))
			json_object_foreach((json_t *)j, k, v)
			{
				if (rc == CU_OK)
					rc = vals_add(out, v, err);
			}
		else if (json_is_array(j))
			json_array_foreach(j, i, v)
			{
				if (rc == CU_OK)
					rc = vals_add(out, v, err);
			}
		return rc;
	case ST_SLICE:
		return json_is_array(j) ? slice(st, j, out, err) : CU_OK;
	case ST_UNION:
		for (i = 0; i < st->nunion && rc == CU_OK; i++) {
			if (st->union_idx && json_is_array(j)) {
				long n = (long)json_array_size(j);
				long x = st->idx[i] < 0 ? st->idx[i] + n
							: st->idx[i];

				if (x >= 0 && x < n)
					rc = vals_add(out,
					    json_array_get(j, (size_t)x), err);
			} else if (!st->union_idx && json_is_object(j) &&
				   json_object_get(j, st->names[i]) != NULL) {
				rc = vals_add(
				    out, json_object_get(j, st->names[i]), err);
			}
		}
		return rc;
	case ST_FILTER:
		if (!json_is_array(j))
			return CU_OK;
		json_array_foreach(j, i, v)
		{
			bool keep;

			if (rc == CU_OK)
				rc = filter_one(st, root, v, &keep, err);
			if (rc == CU_OK && keep)
				rc = vals_add(out, v, err);
		}
		return rc;
	}
	return CU_OK;
}

static int eval_path(const struct path *pa, const json_t *root,
    const json_t *cur, struct vals *out, cu_error *err)
{
	struct vals a = {0}, b = {0};
	size_t s, i;
	int rc;

	rc = vals_add(&a, pa->from_root ? root : cur, err);
	for (s = 0; s < pa->n && rc == CU_OK; s++) {
		b.n = 0;
		for (i = 0; i < a.n && rc == CU_OK; i++)
			rc = apply_step(&pa->steps[s], root, a.v[i], &b, err);
		{
			struct vals t = a;

			a = b;
			b = t;
		}
	}
	for (i = 0; i < a.n && rc == CU_OK; i++)
		rc = vals_add(out, a.v[i], err);
	cu_free((void *)a.v);
	cu_free((void *)b.v);
	return rc;
}

/* One value as kubectl prints it: strings bare, the rest as JSON
 * (objects with sorted keys, as Go's encoding/json writes maps). */
static int print_value(const json_t *v, cu_buf *out, cu_error *err)
{
	char *s = NULL;
	int rc;

	if (json_is_string(v))
		rc = cu_buf_add(
		    out, json_string_value(v), json_string_length(v));
	else if (json_is_real(v) &&
		 json_real_value(v) == (double)(long long)json_real_value(v) &&
		 json_real_value(v) < 1e15 && json_real_value(v) > -1e15)
		rc = cu_buf_addf(out, "%lld", (long long)json_real_value(v));
	else {
		rc = api_json_dumps(v,
		    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY, 0, &s,
		    NULL);
		if (rc == CU_OK)
			rc = cu_buf_adds(out, s);
		cu_free(s);
	}
	return rc == CU_OK ? CU_OK
			   : cu_error_set(err, rc, "jsonpath: output: %s",
				 cu_err_desc(rc));
}

static int exec_nodes(const struct node *nodes, size_t n, const json_t *root,
    const json_t *cur, cu_buf *out, cu_error *err)
{
	size_t i, k;
	int rc = CU_OK;

	for (i = 0; i < n && rc == CU_OK; i++) {
		const struct node *nd = &nodes[i];
		struct vals vs = {0};

		if (nd->kind == N_TEXT) {
			rc = cu_buf_adds(out, nd->text);
			if (rc != CU_OK)
				rc = cu_error_set(err, rc,
				    "jsonpath: output: %s", cu_err_desc(rc));
			continue;
		}
		rc = eval_path(nd->path, root, cur, &vs, err);
		for (k = 0; k < vs.n && rc == CU_OK; k++) {
			if (nd->kind == N_RANGE) {
				rc = exec_nodes(nd->body, nd->nbody, root,
				    vs.v[k], out, err);
				continue;
			}
			if (k > 0 && cu_buf_adds(out, " ") != CU_OK)
				rc = cu_error_set(
				    err, CU_ENOMEM, "out of memory");
			if (rc == CU_OK)
				rc = print_value(vs.v[k], out, err);
		}
		cu_free((void *)vs.v);
	}
	return rc;
}

int cli_jsonpath_exec(
    const cli_jsonpath *jp, const json_t *doc, cu_buf *out, cu_error *err)
{
	if (cu_buf_adds(out, "") != CU_OK)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	return exec_nodes(jp->nodes, jp->n, doc, doc, out, err);
}
