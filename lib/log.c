/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/log.c - levelled logging to stderr, as text or one JSON object per
 * line, with optional structured fields (cu_log_kv). Single-threaded by design
 * (one event loop per process); a line is written with one fwrite so concurrent
 * processes do not interleave.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/cu.h"

static enum cu_log_level log_level = CU_LOG_INFO;
static bool log_json;
static const char *log_component = "cueue";

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void cu_log_set_level(enum cu_log_level level)
{
	log_level = level;
}

enum cu_log_level cu_log_get_level(void)
{
	return log_level;
}

void cu_log_set_json(bool json)
{
	log_json = json;
}

void cu_log_set_component(const char *name)
{
	log_component = name;
}

int cu_log_parse_level(const char *s, enum cu_log_level *out)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*out = (enum cu_log_level)i;
			return CU_OK;
		}
	}
	return CU_EINVAL;
}

/* Append s to out (bounded), escaping for a JSON string or, in text mode,
 * only flattening control characters so that a line stays a line. */
static size_t append_escaped(
    char *out, size_t pos, size_t cap, const char *s, bool json)
{
	for (; *s != '\0' && pos + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (json && (c == '"' || c == '\\')) {
			out[pos++] = '\\';
			out[pos++] = (char)c;
		} else if (c < 0x20) {
			if (json)
				pos += (size_t)snprintf(
				    out + pos, cap - pos, "\\u%04x", c);
			else
				out[pos++] = ' ';
		} else {
			out[pos++] = (char)c;
		}
	}
	out[pos] = '\0';
	return pos;
}

/* A bounded line: appends stop at cap - 2 (room for "\n" and NUL). */
struct line {
	char *p;
	size_t pos, cap;
};

static void put(struct line *l, const char *s)
{
	size_t n = strlen(s);

	if (l->pos + 2 >= l->cap)
		return;
	if (n > l->cap - 2 - l->pos)
		n = l->cap - 2 - l->pos;
	memcpy(l->p + l->pos, s, n);
	l->pos += n;
	l->p[l->pos] = '\0';
}

static void put_esc(struct line *l, const char *s, bool json)
{
	if (l->pos + 2 < l->cap)
		l->pos = append_escaped(
		    l->p, l->pos, l->cap - 2, s != NULL ? s : "", json);
}

/* A quoted string, escaped as JSON's (klog's text values read alike). */
static void put_q(struct line *l, const char *s)
{
	put(l, "\"");
	put_esc(l, s, true);
	put(l, "\"");
}

static bool empty(const char *s)
{
	return s == NULL || s[0] == '\0';
}

static void put_ref(struct line *l, const char *ns, const char *name, bool json)
{
	if (json) {
		put(l, "{\"name\":");
		put_q(l, name);
		if (!empty(ns)) {
			put(l, ",\"namespace\":");
			put_q(l, ns);
		}
		put(l, "}");
		return;
	}
	put(l, "\"");
	if (!empty(ns)) {
		put_esc(l, ns, true);
		put(l, "/");
	}
	put_esc(l, name, true);
	put(l, "\"");
}

static void put_field(struct line *l, const struct cu_log_field *f, bool json)
{
	char num[32];
	size_t i;

	if (json) {
		put(l, ",");
		put_q(l, f->key);
		put(l, ":");
	} else {
		put(l, " ");
		put_esc(l, f->key, false);
		put(l, "=");
	}
	switch (f->type) {
	case CU_LOGF_STR:
		put_q(l, f->s);
		break;
	case CU_LOGF_INT:
		snprintf(num, sizeof(num), "%lld", (long long)f->i);
		put(l, num);
		break;
	case CU_LOGF_REF:
		put_ref(l, f->ns, f->s, json);
		break;
	case CU_LOGF_REFS:
		put(l, "[");
		for (i = 0; i < f->n; i++) {
			if (i > 0)
				put(l, json ? "," : " ");
			put_ref(l, f->nss != NULL ? f->nss[i] : NULL,
			    f->names != NULL ? f->names[i] : NULL, json);
		}
		put(l, "]");
		break;
	}
}

size_t cu_log_format(char *out, size_t cap, bool json, const char *ts,
    enum cu_log_level level, const char *component, const char *msg,
    const struct cu_log_field *f, size_t n)
{
	struct line l = {out, 0, cap};
	const char *lv = level >= CU_LOG_DEBUG && level <= CU_LOG_ERROR
			     ? level_names[level]
			     : "info";
	char head[64];
	size_t i;

	if (cap < 2) {
		if (cap == 1)
			out[0] = '\0';
		return 0;
	}
	out[0] = '\0';
	if (json) {
		put(&l, "{\"ts\":");
		put_q(&l, ts);
		put(&l, ",\"level\":");
		put_q(&l, lv);
		put(&l, ",\"component\":");
		put_q(&l, component);
		put(&l, ",\"msg\":");
		put_q(&l, msg);
	} else {
		snprintf(
		    head, sizeof(head), "%s %-5s ", ts != NULL ? ts : "", lv);
		put(&l, head);
		put_esc(&l, component, false);
		put(&l, ": ");
		put_esc(&l, msg, false);
	}
	for (i = 0; i < n; i++)
		put_field(&l, &f[i], json);
	if (json) {
		put(&l, "}");
	}
	out[l.pos++] = '\n';
	out[l.pos] = '\0';
	return l.pos;
}

void cu_log_kv(enum cu_log_level level, const char *msg,
    const struct cu_log_field *f, size_t n)
{
	char line[8192], ts[CU_TIME_MICRO_LEN];
	size_t len;

	if (level < log_level)
		return;
	cu_time_format_micro(cu_time_now_ns(), ts);
	len = cu_log_format(
	    line, sizeof(line), log_json, ts, level, log_component, msg, f, n);
	fwrite(line, 1, len, stderr);
	fflush(stderr);
}

void cu_vlog(enum cu_log_level level, const char *fmt, va_list ap)
{
	char msg[2048], line[4608], ts[CU_TIME_MICRO_LEN];
	size_t pos;

	if (level < log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	cu_time_format_micro(cu_time_now_ns(), ts);
	if (log_json) {
		pos = (size_t)snprintf(line, sizeof(line),
		    "{\"ts\":\"%s\",\"level\":\"%s\",\"component\":\"", ts,
		    level_names[level]);
		pos = append_escaped(
		    line, pos, sizeof(line) - 16, log_component, true);
		pos += (size_t)snprintf(
		    line + pos, sizeof(line) - pos, "\",\"msg\":\"");
		pos = append_escaped(line, pos, sizeof(line) - 4, msg, true);
		pos +=
		    (size_t)snprintf(line + pos, sizeof(line) - pos, "\"}\n");
	} else {
		pos = (size_t)snprintf(line, sizeof(line), "%s %-5s %s: ", ts,
		    level_names[level], log_component);
		pos = append_escaped(line, pos, sizeof(line) - 2, msg, false);
		line[pos++] = '\n';
		line[pos] = '\0';
	}
	fwrite(line, 1, pos, stderr);
	fflush(stderr);
}

void cu_log(enum cu_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cu_vlog(level, fmt, ap);
	va_end(ap);
}

/* ---- rate-limited lines ------------------------------------------------ */

static struct cu_log_limit *limits; /* every limit used so far */

bool cu_log_limit_take(
    struct cu_log_limit *l, cu_ns_t now, unsigned long *ended)
{
	cu_ns_t period = CU_S_TO_NS(l->period_s > 0 ? l->period_s : 60);

	*ended = 0;
	if (l->start == 0 || now - l->start >= period) {
		*ended = l->suppressed;
		l->start = now;
		l->used = 0;
		l->suppressed = 0;
	}
	if (l->used < (l->burst > 0 ? l->burst : 1)) {
		l->used++;
		return true;
	}
	l->suppressed++;
	return false;
}

static void summary(const struct cu_log_limit *l, unsigned long n)
{
	cu_log(l->level,
	    "%s: %lu more suppressed in the last %d s (at most "
	    "%u lines per %d s)",
	    l->what, n, l->period_s > 0 ? l->period_s : 60,
	    l->burst > 0 ? l->burst : 1, l->period_s > 0 ? l->period_s : 60);
}

void cu_log_limited(
    struct cu_log_limit *l, enum cu_log_level level, const char *fmt, ...)
{
	unsigned long ended;
	bool ok;
	va_list ap;

	if (level < log_level)
		return;
	if (!l->linked) {
		l->linked = true;
		l->next = limits;
		limits = l;
	}
	ok = cu_log_limit_take(l, cu_time_mono_ns(), &ended);
	if (ended > 0)
		summary(l, ended);
	l->level = level;
	if (!ok)
		return;
	va_start(ap, fmt);
	cu_vlog(level, fmt, ap);
	va_end(ap);
}

size_t cu_log_limits_flush(cu_ns_t now)
{
	struct cu_log_limit *l;
	size_t n = 0;

	for (l = limits; l != NULL; l = l->next) {
		cu_ns_t period = CU_S_TO_NS(l->period_s > 0 ? l->period_s : 60);

		if (l->suppressed == 0 || now - l->start < period)
			continue;
		summary(l, l->suppressed);
		l->suppressed = 0;
		l->used = 0;
		l->start = now;
		n++;
	}
	return n;
}

void cu_log_limit_unlink(struct cu_log_limit *l)
{
	struct cu_log_limit **pp;

	if (!l->linked)
		return;
	if (l->suppressed > 0)
		summary(l, l->suppressed);
	for (pp = &limits; *pp != NULL; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	l->linked = false;
	l->next = NULL;
	l->suppressed = 0;
}
