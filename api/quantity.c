/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/quantity.c - resource.Quantity parsing, canonical printing and
 * overflow-checked arithmetic on int64 milli-units.
 *
 * The grammar mirrors apimachinery's parseQuantityString: an optional sign,
 * digits, an optional '.' and fraction digits, then a suffix made of the
 * letters "eEinumkKMGTP" optionally followed by a signed exponent. The
 * suffix must then name a decimal SI unit, a binary SI unit or an "e<int>"
 * exponent. Like Kubernetes, a bare sign, "." or a suffix without digits
 * ("m") means zero.
 *
 * Values are computed exactly with a small decimal digit buffer, because
 * inputs can carry arbitrarily many digits and a fractional binary suffix
 * ("0.1Ki") must round the way Kubernetes rounds: up, away from zero, at
 * the milli position (MilliValue). Kubernetes itself keeps nano precision
 * and caps at 2^63-1 units; we keep milli precision and report CU_ERANGE
 * instead of silently capping, because a capped quota is a wrong quota.
 */
#include "api/quantity.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Longer exponents are clamped: anything beyond this many decimal places
 * is either out of range or rounds to the smallest non-zero value. */
#define QEXP_CLAMP 1000000000LL

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

struct qsuffix {
	const char *name;
	int base; /* 10 or 2 */
	int exp;  /* power of base */
	enum api_qformat format;
};

static const struct qsuffix qsuffixes[] = {
    {"n", 10, -9, API_QFMT_DECIMAL_SI},
    {"u", 10, -6, API_QFMT_DECIMAL_SI},
    {"m", 10, -3, API_QFMT_DECIMAL_SI},
    {"", 10, 0, API_QFMT_DECIMAL_SI},
    {"k", 10, 3, API_QFMT_DECIMAL_SI},
    {"M", 10, 6, API_QFMT_DECIMAL_SI},
    {"G", 10, 9, API_QFMT_DECIMAL_SI},
    {"T", 10, 12, API_QFMT_DECIMAL_SI},
    {"P", 10, 15, API_QFMT_DECIMAL_SI},
    {"E", 10, 18, API_QFMT_DECIMAL_SI},
    {"Ki", 2, 10, API_QFMT_BINARY_SI},
    {"Mi", 2, 20, API_QFMT_BINARY_SI},
    {"Gi", 2, 30, API_QFMT_BINARY_SI},
    {"Ti", 2, 40, API_QFMT_BINARY_SI},
    {"Pi", 2, 50, API_QFMT_BINARY_SI},
    {"Ei", 2, 60, API_QFMT_BINARY_SI},
};

/*
 * Parse the "e<int>" suffix form as strconv.ParseInt would: optional sign,
 * at least one digit, must fit int64 (else the suffix is invalid). The
 * result is clamped to +-QEXP_CLAMP, which is harmless (see above).
 */
static bool parse_exponent(const char *s, size_t n, long long *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '+' || s[i] == '-')) {
		neg = s[i] == '-';
		i++;
	}
	if (i == n)
		return false;
	unsigned long long v = 0;
	bool overflow = false;
	for (; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (~0ULL - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	/* int64 range: up to 2^63-1 positive, 2^63 negative. */
	if (overflow || v > (neg ? (1ULL << 63) : (1ULL << 63) - 1))
		return false;
	if (v > (unsigned long long)QEXP_CLAMP)
		v = (unsigned long long)QEXP_CLAMP;
	*out = neg ? -(long long)v : (long long)v;
	return true;
}

static bool interpret_suffix(const char *s, size_t n, int *base, long long *exp,
    enum api_qformat *format)
{
	for (size_t i = 0; i < sizeof(qsuffixes) / sizeof(qsuffixes[0]); i++) {
		if (strlen(qsuffixes[i].name) == n &&
		    memcmp(qsuffixes[i].name, s, n) == 0) {
			*base = qsuffixes[i].base;
			*exp = qsuffixes[i].exp;
			*format = qsuffixes[i].format;
			return true;
		}
	}
	if (n > 1 && (s[0] == 'e' || s[0] == 'E')) {
		if (!parse_exponent(s + 1, n - 1, exp))
			return false;
		*base = 10;
		*format = API_QFMT_DECIMAL_EXPONENT;
		return true;
	}
	return false;
}

/* Multiply the big-endian decimal digit string d[0..*len) by 2, in place;
 * the buffer has room for one more digit. */
static void digits_double(char *d, size_t *len)
{
	unsigned carry = 0;
	for (size_t i = *len; i-- > 0;) {
		unsigned v = (unsigned)(d[i] - '0') * 2 + carry;
		d[i] = (char)('0' + v % 10);
		carry = v / 10;
	}
	if (carry) {
		memmove(d + 1, d, *len);
		d[0] = (char)('0' + carry);
		(*len)++;
	}
}

/*
 * Turn digits D (no leading zeros, non-empty, not all zero) times 10^shift
 * into an integer magnitude, rounding any fraction up. CU_ERANGE when it
 * exceeds INT64_MAX.
 */
static int digits_to_magnitude(
    const char *d, size_t len, long long shift, uint64_t *out)
{
	/* Number of integer digits of the value. */
	long long int_digits = (long long)len + shift;
	if (int_digits > 19)
		return CU_ERANGE;
	if (int_digits <= 0) {
		*out = 1; /* a non-zero fraction rounds up to one milli */
		return CU_OK;
	}
	uint64_t v = 0;
	bool frac = false;
	for (long long i = 0; i < int_digits; i++) {
		unsigned dig = i < (long long)len ? (unsigned)(d[i] - '0') : 0;
		if (v > (UINT64_MAX - dig) / 10)
			return CU_ERANGE;
		v = v * 10 + dig;
	}
	for (long long i = int_digits; i < (long long)len; i++) {
		if (d[i] != '0') {
			frac = true;
			break;
		}
	}
	if (frac)
		v++;
	if (v > (uint64_t)INT64_MAX)
		return CU_ERANGE;
	*out = v;
	return CU_OK;
}

int api_quantity_parse(struct api_quantity *out, const char *s, cu_error *err)
{
	if (s == NULL || *s == '\0')
		return cu_error_set(err, CU_EPARSE,
		    "quantity \"\": quantities must match the regular "
		    "expression "
		    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");

	size_t end = strlen(s), pos = 0;
	bool negative = false;
	if (s[0] == '-' || s[0] == '+') {
		negative = s[0] == '-';
		pos++;
	}
	while (pos < end && s[pos] == '0')
		pos++;
	size_t num_start = pos;
	while (pos < end && is_digit(s[pos]))
		pos++;
	size_t num_len = pos - num_start;
	size_t den_start = pos, den_len = 0;
	if (pos < end && s[pos] == '.') {
		pos++;
		den_start = pos;
		while (pos < end && is_digit(s[pos]))
			pos++;
		den_len = pos - den_start;
	}
	size_t suf_start = pos;
	while (pos < end && strchr("eEinumkKMGTP", s[pos]) != NULL)
		pos++;
	if (pos < end && (s[pos] == '-' || s[pos] == '+'))
		pos++;
	while (pos < end && is_digit(s[pos]))
		pos++;
	if (pos != end)
		return cu_error_set(err, CU_EPARSE,
		    "quantity \"%.64s\": quantities must match the regular "
		    "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
		    s);

	int base = 10;
	long long exp = 0;
	enum api_qformat format = API_QFMT_DECIMAL_SI;
	if (!interpret_suffix(
		s + suf_start, end - suf_start, &base, &exp, &format))
		return cu_error_set(err, CU_EPARSE,
		    "quantity \"%.64s\": unable to parse quantity's suffix", s);

	/* D = num digits followed by fraction digits, leading zeros gone. */
	size_t dlen = num_len + den_len;
	const char *num = s + num_start, *den = s + den_start;
	size_t skip = 0;
	while (skip < dlen) {
		char c = skip < num_len ? num[skip] : den[skip - num_len];
		if (c != '0')
			break;
		skip++;
	}
	if (skip == dlen) {
		out->milli = 0;
		out->format = format;
		return CU_OK;
	}
	/* Doubling up to 60 times adds at most 19 digits. */
	size_t cap = dlen - skip + 20;
	char *d = cu_malloc(cap);
	if (d == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "quantity \"%.64s\": out of memory", s);
	size_t len = 0;
	for (size_t i = skip; i < dlen; i++)
		d[len++] = i < num_len ? num[i] : den[i - num_len];

	long long shift = 3 - (long long)den_len;
	if (base == 10) {
		shift += exp;
	} else {
		for (long long i = 0; i < exp; i++)
			digits_double(d, &len);
	}
	uint64_t mag = 0;
	int rc = digits_to_magnitude(d, len, shift, &mag);
	cu_free(d);
	if (rc != CU_OK)
		return cu_error_set(err, CU_ERANGE,
		    "quantity \"%.64s\": value does not fit in int64 "
		    "milli-units (at most 9223372036854775807m)",
		    s);
	out->milli = negative ? -(int64_t)mag : (int64_t)mag;
	out->format = format;
	return CU_OK;
}

int api_quantity_parse_milli(const char *s, int64_t *milli, cu_error *err)
{
	struct api_quantity q;
	int rc = api_quantity_parse(&q, s, err);
	if (rc != CU_OK)
		return rc;
	*milli = q.milli;
	return CU_OK;
}

/* Copy src into buf under the snprintf contract; returns strlen(src). */
static size_t put(char *buf, size_t n, const char *src)
{
	size_t len = strlen(src);
	if (n > 0) {
		size_t c = len < n - 1 ? len : n - 1;
		memcpy(buf, src, c);
		buf[c] = '\0';
	}
	return len;
}

static const char *decimal_suffix(int exp)
{
	switch (exp) {
	case -3:
		return "m";
	case 0:
		return "";
	case 3:
		return "k";
	case 6:
		return "M";
	case 9:
		return "G";
	case 12:
		return "T";
	case 15:
		return "P";
	default:
		return "E"; /* int64 milli never reaches beyond P */
	}
}

static size_t format_decimal(
    int64_t milli, bool exponent_form, char *buf, size_t n)
{
	char tmp[API_QUANTITY_STR_MAX];
	bool neg = milli < 0;
	uint64_t mag = neg ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
	int exp = -3;
	while (mag % 10 == 0) {
		mag /= 10;
		exp++;
	}
	/* Kubernetes lowers the exponent to a multiple of three, so the
	 * mantissa grows back rather than becoming fractional. */
	while (((exp % 3) + 3) % 3 != 0) {
		mag *= 10;
		exp--;
	}
	if (exponent_form) {
		if (exp == 0)
			snprintf(tmp, sizeof(tmp), "%s%llu", neg ? "-" : "",
			    (unsigned long long)mag);
		else
			snprintf(tmp, sizeof(tmp), "%s%llue%d", neg ? "-" : "",
			    (unsigned long long)mag, exp);
	} else {
		snprintf(tmp, sizeof(tmp), "%s%llu%s", neg ? "-" : "",
		    (unsigned long long)mag, decimal_suffix(exp));
	}
	return put(buf, n, tmp);
}

size_t api_quantity_format(const struct api_quantity *q, char *buf, size_t n)
{
	static const char *const bin[] = {
	    "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int64_t milli = q->milli;
	if (milli == 0)
		return put(buf, n, "0");
	bool neg = milli < 0;
	uint64_t mag = neg ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
	switch (q->format) {
	case API_QFMT_BINARY_SI:
		/* Small or fractional values would need rounding in base
		 * 1024, so Kubernetes shows them in DecimalSI instead. */
		if (mag < 1024000 || mag % 1000 != 0)
			return format_decimal(milli, false, buf, n);
		mag /= 1000;
		int e = 0;
		while (mag % 1024 == 0 && e < 6) {
			mag /= 1024;
			e++;
		}
		char tmp[API_QUANTITY_STR_MAX];
		snprintf(tmp, sizeof(tmp), "%s%llu%s", neg ? "-" : "",
		    (unsigned long long)mag, bin[e]);
		return put(buf, n, tmp);
	case API_QFMT_DECIMAL_EXPONENT:
		return format_decimal(milli, true, buf, n);
	case API_QFMT_DECIMAL_SI:
	default:
		return format_decimal(milli, false, buf, n);
	}
}

size_t api_quantity_format_milli(int64_t milli, char *buf, size_t n)
{
	struct api_quantity q = {.milli = milli, .format = API_QFMT_DECIMAL_SI};
	return api_quantity_format(&q, buf, n);
}

/* INT64_MIN is excluded so that negation (and printing) never overflows
 * and parse/format round-trip. */
static int checked_result(struct api_quantity *out, bool overflow, int64_t r,
    enum api_qformat format, const char *op, cu_error *err)
{
	if (overflow || r == INT64_MIN)
		return cu_error_set(err, CU_ERANGE,
		    "quantity %s overflows int64 milli-units", op);
	out->milli = r;
	out->format = format;
	return CU_OK;
}

int api_quantity_add(struct api_quantity *out, const struct api_quantity *a,
    const struct api_quantity *b, cu_error *err)
{
	int64_t r;
	bool of = __builtin_add_overflow(a->milli, b->milli, &r);
	return checked_result(out, of, r, a->format, "addition", err);
}

int api_quantity_sub(struct api_quantity *out, const struct api_quantity *a,
    const struct api_quantity *b, cu_error *err)
{
	int64_t r;
	bool of = __builtin_sub_overflow(a->milli, b->milli, &r);
	return checked_result(out, of, r, a->format, "subtraction", err);
}

int api_quantity_cmp(const struct api_quantity *a, const struct api_quantity *b)
{
	return (a->milli > b->milli) - (a->milli < b->milli);
}
