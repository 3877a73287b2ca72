/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/log.c - levelled logging to stderr, as text or one JSON object per
 * line. Single-threaded by design (one event loop per process); a line is
 * written with one fwrite so concurrent processes do not interleave.
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
