/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/cu.h - base utilities shared by every cueue module: error codes with
 * one-line messages, levelled (optionally JSON) logging, checked allocation
 * with fault injection, a bounded growable byte buffer, and time formatting.
 *
 * Everything here depends on libc only. Every other folder may include
 * it. Also the project's one hash map (last section).
 * Prefix: cu_ (functions), CU_ (macros and enum values).
 */
#ifndef CU_LIB_CU_H
#define CU_LIB_CU_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CU_MUST_CHECK __attribute__((warn_unused_result))
#define CU_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- errors --------------------------------------------------------- */

/*
 * Error codes: 0 is success, every failure is negative. X-macro table:
 * name, value, retryable, short description.
 */
#define CU_ERR_TABLE(X)                                                        \
	X(CU_OK, 0, false, "ok")                                               \
	X(CU_ENOMEM, -1, true, "out of memory")                                \
	X(CU_EINVAL, -2, false, "invalid argument")                            \
	X(CU_EPARSE, -3, false, "parse error")                                 \
	X(CU_ENOTFOUND, -4, false, "not found")                                \
	X(CU_ECONFLICT, -5, true, "conflict")                                  \
	X(CU_EEXIST, -6, false, "already exists")                              \
	X(CU_EGONE, -7, true, "gone")                                          \
	X(CU_ERANGE, -8, false, "out of range")                                \
	X(CU_ETOOBIG, -9, false, "too big")                                    \
	X(CU_EIO, -10, true, "i/o error")                                      \
	X(CU_ETIMEOUT, -11, true, "timed out")                                 \
	X(CU_EQUOTA, -12, false, "quota exceeded")                             \
	X(CU_EUNSUPPORTED, -13, false, "unsupported")                          \
	X(CU_EDENIED, -14, false, "denied")                                    \
	X(CU_EAGAIN, -15, true, "try again")                                   \
	X(CU_ECANCELED, -16, false, "canceled")

enum cu_err {
#define CU_X_ENUM(name, value, retry, desc) name = value,
	CU_ERR_TABLE(CU_X_ENUM)
#undef CU_X_ENUM
};

#define CU_ERROR_MSG_MAX 512

/*
 * Caller-owned error detail. Functions that fail set it once, at the point of
 * failure, with a one-line message; callers pass the code up and never
 * overwrite the message. Every function taking a `cu_error *err` accepts
 * NULL (detail discarded).
 */
typedef struct cu_error {
	int code;		    /* a cu_err value */
	char msg[CU_ERROR_MSG_MAX]; /* one line, NUL-terminated */
} cu_error;

/* Set err (if non-NULL) to code and the formatted message. Returns code,
 * so that `return cu_error_set(err, CU_EINVAL, "...")` reads naturally. */
int cu_error_set(cu_error *err, int code, const char *fmt, ...) CU_PRINTF(3, 4);

/* Reset err to CU_OK with an empty message. NULL is a no-op. */
void cu_error_clear(cu_error *err);

/* Static name ("CU_EINVAL") and description of a code; "unknown" if none. */
const char *cu_err_name(int code);
const char *cu_err_desc(int code);
/* True when a retry of the same operation may succeed. */
bool cu_err_retryable(int code);

/* ---- logging -------------------------------------------------------- */

enum cu_log_level {
	CU_LOG_DEBUG = 0,
	CU_LOG_INFO = 1,
	CU_LOG_WARN = 2,
	CU_LOG_ERROR = 3,
};

/* Process-wide settings. Default: INFO, text format, stderr. */
void cu_log_set_level(enum cu_log_level level);
enum cu_log_level cu_log_get_level(void);
void cu_log_set_json(bool json);
/* Parse "debug"/"info"/"warn"/"error"; returns CU_EINVAL if unknown. */
int cu_log_parse_level(const char *s, enum cu_log_level *out);
/* Set the component name written in every line ("cueue" by default).
 * name [borrowed; must outlive logging, usually a string literal]. */
void cu_log_set_component(const char *name);

/* Log one line. With JSON output each line is one JSON object with keys
 * ts, level, component, msg. Messages are single-line: newlines are
 * escaped. */
void cu_log(enum cu_log_level level, const char *fmt, ...) CU_PRINTF(2, 3);
void cu_vlog(enum cu_log_level level, const char *fmt, va_list ap)
    CU_PRINTF(2, 0);

/*
 * Structured lines: a message and key/value fields, named as
 * controller-runtime's logger names them. JSON output adds each field as
 * a member (a REF as klog.KObj/KRef marshal it: {"name", "namespace"},
 * namespace left out when empty; REFS an array of those); text output
 * appends key="value" pairs (a REF as "namespace/name" or "name", REFS
 * as ["ns/a" "ns/b"]). Every string [borrowed] for the call; NULL
 * strings read as "".
 */
enum cu_log_ftype {
	CU_LOGF_STR = 0,
	CU_LOGF_INT,
	CU_LOGF_REF,  /* s: name, ns: namespace */
	CU_LOGF_REFS, /* n refs: names[i], nss[i] (nss may be NULL) */
};

struct cu_log_field {
	const char *key;
	enum cu_log_ftype type;
	const char *s;
	const char *ns;
	int64_t i;
	const char *const *names;
	const char *const *nss;
	size_t n;
};

#define CU_LOGF_S(k, v)                                                        \
	((struct cu_log_field){.key = (k), .type = CU_LOGF_STR, .s = (v)})
#define CU_LOGF_I(k, v)                                                        \
	((struct cu_log_field){.key = (k), .type = CU_LOGF_INT, .i = (v)})
#define CU_LOGF_REF(k, namespace_, name)                                       \
	((struct cu_log_field){                                                \
	    .key = (k), .type = CU_LOGF_REF, .s = (name), .ns = (namespace_)})
#define CU_LOGF_REFS(k, nss_, names_, n_)                                      \
	((struct cu_log_field){.key = (k),                                     \
	    .type = CU_LOGF_REFS,                                              \
	    .names = (names_),                                                 \
	    .nss = (nss_),                                                     \
	    .n = (n_)})

/* Log msg [borrowed] with n fields f [borrowed] at level. */
void cu_log_kv(enum cu_log_level level, const char *msg,
    const struct cu_log_field *f, size_t n);

/*
 * The line cu_log_kv writes, into out[cap] (NUL-terminated, cut at
 * cap, ending in a newline): the pure part, for tests. ts and component
 * [borrowed]. Returns its length.
 */
size_t cu_log_format(char *out, size_t cap, bool json, const char *ts,
    enum cu_log_level level, const char *component, const char *msg,
    const struct cu_log_field *f, size_t n);

#define cu_info_kv(msg, ...)                                                   \
	do {                                                                   \
		const struct cu_log_field cu_f_[] = {__VA_ARGS__};             \
		cu_log_kv(CU_LOG_INFO, (msg), cu_f_,                           \
		    sizeof(cu_f_) / sizeof(cu_f_[0]));                         \
	} while (0)

#define cu_debug(...) cu_log(CU_LOG_DEBUG, __VA_ARGS__)
#define cu_info(...) cu_log(CU_LOG_INFO, __VA_ARGS__)
/* Every cu_warn call site is rate-limited (CU_LOG_SITE_BURST lines a
 * minute, then one line with the count, see cu_log_limited): a warning
 * said once per connection, request or object cannot flood the log. */
#define CU_LOG_SITE_BURST 30
#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x)
#define cu_warn(...)                                                           \
	do {                                                                   \
		static struct cu_log_limit cu_site_ = CU_LOG_LIMIT(            \
		    __FILE__ ":" CU_STR(__LINE__), 60, CU_LOG_SITE_BURST);     \
		cu_log_limited(&cu_site_, CU_LOG_WARN, __VA_ARGS__);           \
	} while (0)
#define cu_errorf(...) cu_log(CU_LOG_ERROR, __VA_ARGS__)

/* ---- assertions ----------------------------------------------------- */

/* Programming errors. Stays on in release builds (Redis serverAssert). */
#define CU_ASSERT(e) ((e) ? (void)0 : cu_assert_fail(#e, __FILE__, __LINE__))
void cu_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn));

/* ---- checked allocation -------------------------------------------- */

/*
 * All project allocations go through these. They return NULL on failure
 * (never abort); callers turn that into CU_ENOMEM. A test build can make
 * the n-th allocation from now fail with cu_mem_fail_after() to exercise
 * every failure path (curl's torture tests, SQLite's malloc tests).
 * Memory from cu_malloc/cu_calloc/cu_realloc/cu_strdup is freed with cu_free.
 */
void *cu_malloc(size_t n);
void *cu_calloc(size_t nmemb, size_t size);
void *cu_realloc(void *p, size_t n);
char *cu_strdup(const char *s);
char *cu_strndup(const char *s, size_t n);
/* printf into a new string [owned: cu_free]; NULL on failure. */
char *cu_asprintf(const char *fmt, ...) CU_PRINTF(1, 2);
void cu_free(void *p);

/* Grow *arr (elements of `elem` bytes, capacity *cap) to hold at least
 * `need` elements, doubling. *arr is unchanged on failure (CU_ENOMEM). */
CU_MUST_CHECK int cu_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Fail the n-th allocation from now (1 = the next one) and every one
 * after it while `sticky`, else only that one. n == 0 disables. */
void cu_mem_fail_after(uint64_t n, bool sticky);
/* Number of allocation calls made since start (for torture loops). */
uint64_t cu_mem_calls(void);
/* Number of allocation calls that returned NULL (injected or real). A
 * library that answers allocation failure and bad input alike (jansson's
 * json_loadb, json_stringn, json_object_set_new return NULL / -1 for
 * both) is told apart by comparing this before and after the call. */
uint64_t cu_mem_failures(void);

/* ---- byte buffer ---------------------------------------------------- */

/*
 * A growable byte buffer with a hard maximum (curl's dynbuf). Invariants:
 * `ptr` is NULL or NUL-terminated with `len` bytes before the NUL;
 * len < cap <= max+1 when ptr != NULL. A failed append frees the buffer
 * (curl's contract) and returns CU_ENOMEM or CU_ETOOBIG.
 */
typedef struct cu_buf {
	char *ptr;  /* owned; cu_malloc; NULL while empty */
	size_t len; /* bytes used, excluding the NUL */
	size_t cap; /* bytes allocated */
	size_t max; /* maximum len allowed */
} cu_buf;

void cu_buf_init(cu_buf *b, size_t max);
void cu_buf_dispose(cu_buf *b);
void cu_buf_reset(cu_buf *b); /* len = 0, keeps the memory */
CU_MUST_CHECK int cu_buf_add(cu_buf *b, const void *data, size_t n);
CU_MUST_CHECK int cu_buf_adds(cu_buf *b, const char *s);
CU_MUST_CHECK int cu_buf_addf(cu_buf *b, const char *fmt, ...) CU_PRINTF(2, 3);
/* Give the contents to the caller [owned: cu_free]; b is left empty.
 * Returns "" copy when empty; NULL on allocation failure. */
char *cu_buf_detach(cu_buf *b, size_t *len_out);

/* ---- time ----------------------------------------------------------- */

/* The one time type: nanoseconds, either since the epoch (wall clock)
 * or since an arbitrary point (monotonic clock). Durations too. */
typedef int64_t cu_ns_t;

#define CU_NS_PER_MS INT64_C(1000000)
#define CU_NS_PER_S INT64_C(1000000000)
#define CU_MS_PER_S 1000

/* Named conversions (integer ones truncate toward zero, as C division). */
#define CU_MS_TO_NS(ms) ((cu_ns_t)(ms)*CU_NS_PER_MS)
#define CU_S_TO_NS(s) ((cu_ns_t)(s)*CU_NS_PER_S)
static inline int64_t cu_ns_to_ms(cu_ns_t ns)
{
	return ns / CU_NS_PER_MS;
}
static inline int64_t cu_ns_to_s(cu_ns_t ns)
{
	return ns / CU_NS_PER_S;
}
/* Seconds as a double (metrics, libev timestamps). */
static inline double cu_ns_to_secs(cu_ns_t ns)
{
	return (double)ns / 1e9;
}
/* Milliseconds as double seconds (token-bucket refill). */
static inline double cu_ms_to_secs(int64_t ms)
{
	return (double)ms / 1000.0;
}

/* Wall clock in nanoseconds since the epoch, and a monotonic clock. */
cu_ns_t cu_time_now_ns(void);
cu_ns_t cu_time_mono_ns(void);

/*
 * Rate-limited lines, for warnings one per connection, request or object
 * (a flood must not flood the log): a site writes at most `burst` lines
 * per `period_s` seconds; the lines beyond are counted, and one summary
 * line "<what>: N more suppressed in the last P s" is written when the
 * period ends - at the site's next line, or by cu_log_limits_flush (the
 * controller's tick) if none comes. Declare one static limit per site:
 *
 *   static struct cu_log_limit lim = CU_LOG_LIMIT("webhook: TLS", 60, 5);
 *   cu_log_limited(&lim, CU_LOG_WARN, "webhook: TLS handshake: %s", e);
 *
 * `what` [borrowed; static]. Loop thread only (the limits are linked into
 * one process-wide list on first use).
 */
struct cu_log_limit {
	const char *what;
	int period_s;
	unsigned burst;
	/* State, zero at first. */
	enum cu_log_level level;  /* of the last line, for the summary */
	cu_ns_t start;		  /* of the current period; 0: none yet */
	unsigned used;		  /* lines written in this period */
	unsigned long suppressed; /* lines counted, not written */
	bool linked;
	struct cu_log_limit *next;
};
#define CU_LOG_LIMIT(what_, period_s_, burst_)                                 \
	{                                                                      \
		.what = (what_), .period_s = (period_s_), .burst = (burst_)    \
	}

/* The pure step: may a line be written at `now`? *ended is set to the
 * number of lines suppressed in a period that `now` ended (0: nothing to
 * report), which the caller reports before its own line. */
bool cu_log_limit_take(
    struct cu_log_limit *l, cu_ns_t now, unsigned long *ended);

void cu_log_limited(struct cu_log_limit *l, enum cu_log_level level,
    const char *fmt, ...) CU_PRINTF(3, 4);

/* Take l out of the process-wide list (a limit inside an object that is
 * freed), writing its pending summary first. */
void cu_log_limit_unlink(struct cu_log_limit *l);

/* Write the summary of every limit whose period has ended with lines
 * suppressed (and start their next period). Returns how many summary
 * lines were written. */
size_t cu_log_limits_flush(cu_ns_t now);
/* The same clocks in milliseconds. */
int64_t cu_time_now_ms(void);
int64_t cu_time_mono_ms(void);

#define CU_TIME_RFC3339_LEN 21 /* "2006-01-02T15:04:05Z" + NUL */
#define CU_TIME_MICRO_LEN 28   /* "2006-01-02T15:04:05.000000Z" + NUL */

/* Format ns since epoch as metav1.Time (seconds, UTC, 'Z'). */
void cu_time_format_rfc3339(int64_t ns, char out[CU_TIME_RFC3339_LEN]);
/* Format as metav1.MicroTime (exactly six fractional digits). */
void cu_time_format_micro(int64_t ns, char out[CU_TIME_MICRO_LEN]);
/* Parse RFC 3339 (with optional fraction and Z or +hh:mm offset) into ns
 * since epoch. Returns CU_EPARSE with a message naming the input. */
CU_MUST_CHECK int cu_time_parse(const char *s, int64_t *out, cu_error *err);

/*
 * ---- the map -------------------------------------------------------
 *
 * The project's one hash map: open addressing, keys borrowed
 * from the values, typed wrappers. Use it instead of a hand-written table
 * (and never a jansson object as a map or set).
 *
 * Why not a library: none of the stack (libc, jansson, libcurl, libev,
 * SQLite, libyaml, libmicrohttpd, OpenSSL) offers a typed map; POSIX
 * hsearch is one global table of string keys without delete, and jansson
 * objects copy every key and hold json_t values only.
 *
 * Keys, by the kind chosen at init:
 *   - CU_MAP_STR: a NUL-terminated string, `const char *`;
 *   - CU_MAP_PARTS: a tuple of nparts strings, `const char *const *`
 *     (an array of nparts pointers), e.g. {namespace, name}: parts are
 *     compared one by one, so ("a/b", "c") and ("a", "b/c") are two keys,
 *     and nothing is glued into a prefixed string;
 *   - custom: any pointer, with the caller's hash and equality
 *     (cu_map_init_custom; tests use it to force collisions).
 *
 * Ownership: the map owns its slot array only. Keys and values are
 * [borrowed]: a stored key (the string, or the parts array and its
 * strings) must stay valid and unchanged while its entry is in the map,
 * which is easiest when the key lives inside the value (wl->uid, an
 * entry's {ns, name} array). A set of owned strings stores the copy as
 * both key and value, and frees what cu_map_del returns.
 *
 * Stored keys must not be NULL (a 0-part map may be given NULL to look
 * up; its only key is the empty tuple). Values must not be NULL.
 *
 * Iteration visits every entry once, in no particular order (slot
 * order; deterministic for a given history of operations). Deleting any
 * entry during an iteration is allowed (deletion leaves a tombstone,
 * nothing moves); inserting a new key is not (it may rehash), replacing
 * the value of an existing key is.
 *
 * Allocation: only growth allocates (cu_calloc); a failed growth returns
 * CU_ENOMEM and leaves the map as it was. cu_map_reserve makes the next
 * insertions infallible. Deletion never allocates and never shrinks.
 *
 * Not thread-safe; the hash is not keyed (a fixed multiply-fold over
 * 8-byte words): keys come from the API server or the configuration, not
 * from an adversary able to choose colliding names at scale. Prefix:
 * cu_map_, CU_MAP_.
 */

enum cu_map_kind {
	CU_MAP_STR = 0, /* key: const char * */
	CU_MAP_PARTS,	/* key: const char *const *, nparts strings */
	CU_MAP_CUSTOM,	/* key: const void *, hash and eq given */
};

struct cu_map_slot {
	uint64_t hash;
	const void *key; /* NULL: empty; CU_MAP_TOMB: deleted */
	void *val;
};

/* Embed by value; zero-initialised is not enough: call cu_map_init. */
typedef struct cu_map {
	struct cu_map_slot *slots; /* owned; cap slots, NULL while cap == 0 */
	size_t cap;		   /* 0 or a power of two */
	size_t n;		   /* live entries */
	size_t tombs;		   /* deleted slots not yet reused */
	enum cu_map_kind kind;
	unsigned nparts;			  /* CU_MAP_PARTS */
	uint64_t (*hash)(const void *key);	  /* CU_MAP_CUSTOM */
	bool (*eq)(const void *a, const void *b); /* CU_MAP_CUSTOM */
} cu_map;

/* Iterator: set to CU_MAP_ITER_INIT, then call cu_map_next. */
typedef size_t cu_map_iter;
#define CU_MAP_ITER_INIT ((cu_map_iter)0)

/* An empty map; allocates nothing. */
void cu_map_init_str(cu_map *m);
void cu_map_init_parts(cu_map *m, unsigned nparts);
void cu_map_init_custom(cu_map *m, uint64_t (*hash)(const void *key),
    bool (*eq)(const void *a, const void *b));
/* Free the slot array (not keys or values); m is then empty and may be
 * used again with the same kind. */
void cu_map_dispose(cu_map *m);

/* The value stored for key [borrowed, only during the call], or NULL. */
void *cu_map_get(const cu_map *m, const void *key);

/*
 * Store val under key (both [borrowed], see above). If key is present
 * its value and stored key are replaced (the new key pointer is kept,
 * so the old value may then be freed) and *old, if old is not NULL, gets
 * the previous value; else *old = NULL. CU_ENOMEM (only when a new key
 * needs growth; the map is unchanged).
 */
CU_MUST_CHECK int cu_map_put(cu_map *m, const void *key, void *val, void **old);

/* Remove key; returns its value (the caller's again) or NULL. */
void *cu_map_del(cu_map *m, const void *key);

/* Make room so that the next `extra` insertions of new keys cannot fail.
 * CU_ENOMEM (map unchanged). */
CU_MUST_CHECK int cu_map_reserve(cu_map *m, size_t extra);

static inline size_t cu_map_count(const cu_map *m)
{
	return m->n;
}

/* The deleted-slot marker (internal). */
extern const char cu_map_tomb_;
#define CU_MAP_TOMB ((const void *)&cu_map_tomb_)

/* Next entry: true with *key and *val set (either may be NULL to skip),
 * false at the end. Inline: callers walk whole maps in hot loops. */
static inline bool cu_map_next(
    const cu_map *m, cu_map_iter *it, const void **key, void **val)
{
	size_t i;

	for (i = *it; i < m->cap; i++) {
		const struct cu_map_slot *s = &m->slots[i];

		if (s->key == NULL || s->key == CU_MAP_TOMB)
			continue;
		*it = i + 1;
		if (key != NULL)
			*key = s->key;
		if (val != NULL)
			*val = s->val;
		return true;
	}
	*it = m->cap;
	return false;
}

/* The hashes the built-in kinds use (64 bits; each part's length is
 * hashed with it, so the tuple's encoding is unambiguous). */
uint64_t cu_map_hash_str(const char *s);
uint64_t cu_map_hash_parts(const char *const *parts, unsigned nparts);

/*
 * Typed maps: CU_MAP_TYPED(name, K, V) declares `name`, a map with keys
 * of type K (`const char *` for CU_MAP_STR, `const char *const *` for
 * CU_MAP_PARTS) and values of type V * (V a complete or incomplete
 * type), and static inline functions that check both:
 *
 *   void name_init_str(name *t);             (or name_init_parts(t, n))
 *   void name_dispose(name *t);
 *   V *name_get(const name *t, K key);
 *   int name_put(name *t, K key, V *val);    CU_ENOMEM; replaces
 *   int name_put_old(name *t, K key, V *val, V **old);
 *   V *name_del(name *t, K key);
 *   int name_reserve(name *t, size_t extra);
 *   size_t name_count(const name *t);
 *   bool name_next(const name *t, cu_map_iter *it, V **val);
 *
 *   CU_MAP_TYPED(wl_index, const char *, struct que_wl);
 *   wl_index idx; struct que_wl *wl; cu_map_iter it = CU_MAP_ITER_INIT;
 *   wl_index_init_str(&idx);
 *   if (wl_index_put(&idx, wl->uid, wl)) ...;
 *   while (wl_index_next(&idx, &it, &wl)) ...;
 */
#define CU_MAP_TYPED(name, K, V)                                               \
	typedef struct name {                                                  \
		cu_map map;                                                    \
	} name;                                                                \
	static inline void name##_init_str(name *t)                            \
	{                                                                      \
		cu_map_init_str(&t->map);                                      \
	}                                                                      \
	static inline void name##_init_parts(name *t, unsigned nparts)         \
	{                                                                      \
		cu_map_init_parts(&t->map, nparts);                            \
	}                                                                      \
	static inline void name##_dispose(name *t)                             \
	{                                                                      \
		cu_map_dispose(&t->map);                                       \
	}                                                                      \
	static inline V *name##_get(const name *t, K key)                      \
	{                                                                      \
		return (V *)cu_map_get(&t->map, (const void *)key);            \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_put_old(                        \
	    name *t, K key, V *val, V **old)                                   \
	{                                                                      \
		void *o = NULL;                                                \
		int rc = cu_map_put(&t->map, (const void *)key, val, &o);      \
		if (old != NULL)                                               \
			*old = (V *)o;                                         \
		return rc;                                                     \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_put(name *t, K key, V *val)     \
	{                                                                      \
		return cu_map_put(&t->map, (const void *)key, val, NULL);      \
	}                                                                      \
	static inline V *name##_del(name *t, K key)                            \
	{                                                                      \
		return (V *)cu_map_del(&t->map, (const void *)key);            \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_reserve(name *t, size_t extra)  \
	{                                                                      \
		return cu_map_reserve(&t->map, extra);                         \
	}                                                                      \
	static inline size_t name##_count(const name *t)                       \
	{                                                                      \
		return cu_map_count(&t->map);                                  \
	}                                                                      \
	static inline bool name##_next(                                        \
	    const name *t, cu_map_iter *it, V **val)                           \
	{                                                                      \
		void *v = NULL;                                                \
		bool more = cu_map_next(&t->map, it, NULL, &v);                \
		*val = (V *)v;                                                 \
		return more;                                                   \
	}                                                                      \
	typedef int name##_semicolon_

#endif /* CU_LIB_CU_H */
