/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client_int.h - what the api/client*.c files share and nothing else
 * includes: the client and request structs, their limits, and the
 * functions one part of the client calls in another (api__ names).
 *
 *   client.c        the request engine: libcurl multi on libev, the
 *                   limiter queue, retries, streams, cancellation
 *   client_life.c   the client's lifecycle, its bearer token and its
 *                   request counters
 *   client_paths.c  resource paths and the per-verb request wrappers
 *
 * The request states and the invariants they keep are in the design notes
 * of api/client.c. Event-loop thread only.
 */
#ifndef CU_API_CLIENT_INT_H
#define CU_API_CLIENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "api/client.h"

#define CLIENT_MAGIC 0x41504943u /* "APIC" */
#define REQ_MAGIC 0x41505251u	 /* "APRQ" */
#define DEAD_MAGIC 0xdeadbeefu

#define MAX_BODY ((size_t)256 << 20) /* non-stream responses */
#define MAX_LINE ((size_t)16 << 20)  /* one watch event */
#define MAX_TOKEN ((size_t)64 << 10) /* token file */
#define MAX_PEM ((size_t)4 << 20)    /* CA bundle etc. */

enum req_state { REQ_NEW, REQ_QUEUED, REQ_ACTIVE, REQ_BACKOFF };

enum { VERB_GET, VERB_POST, VERB_PUT, VERB_PATCH, VERB_DELETE, VERB_OTHER };
/* "GET" .. "OTHER", indexed by the enum above (client_life.c). */
extern const char *const api__verb_names[];

struct api_sock {
	ev_io io; /* first member: the ev_io callback casts back */
	api_client *c;
	struct api_sock *prev, *next;
};

struct stat_entry {
	int verb;
	int code;
	uint64_t count;
};

struct api_client {
	unsigned magic;
	struct ev_loop *loop;
	CURLM *multi;
	ev_timer timer;	      /* libcurl's single timeout */
	ev_timer limit_timer; /* next token of the rate limiter */
	ev_timer token_timer; /* token file re-read */
	int running;

	char *server; /* owned; no trailing '/' */
	char *ca_file, *ca_pem, *cert_file, *key_file, *cert_pem, *key_pem;
	bool insecure;
	bool lean;	  /* opts.lean_bodies */
	char *token;	  /* owned; NULL = no Authorization header */
	char *token_file; /* owned */
	char *user_agent; /* owned */

	double qps, tokens, last_refill;
	int burst;
	int request_timeout_ms, connect_timeout_ms, max_attempts;
	/* Attempts (streams apart) with libcurl now, and how many may be: the
	 * rest wait in the queue, where no timeout runs (invariant 8). */
	size_t active, max_active;
	int retry_base_ms, retry_max_ms, retry_after_max_ms, token_reload_ms;

	struct api_req *all;	       /* every live request */
	struct api_req *qhead, *qtail; /* waiting for the rate limiter */
	struct api_req *dirty;	       /* streams with unread bytes */
	struct api_sock *socks;	       /* every watched socket */

	struct stat_entry *stats; /* owned */
	size_t nstats, capstats;
	struct api_client_stats totals;
	uint64_t rand;
	bool closing;
	api_write_gate_fn may_write; /* NULL: no write gate */
	void *gate_payload;	     /* borrowed */

	/* The API server not answering (transport failures): one log line
	 * per back-off step for the whole client, the cause in words. */
	char unreach[CURL_ERROR_SIZE + 64]; /* "" while reachable */
	double unreach_next, unreach_step;
};

struct api_req {
	unsigned magic;
	api_client *c;
	struct api_req *prev, *next; /* c->all */
	struct api_req *qnext;	     /* limiter queue */
	struct api_req *dnext;	     /* dirty list */
	bool dirty;
	enum req_state state;
	int verb;
	char *method;	    /* owned */
	char *path;	    /* owned; path and query */
	char *content_type; /* owned or NULL */
	char *body;	    /* owned (api_json_dumps; cu_free) or NULL */
	size_t body_len;
	api_response_cb cb;
	api_line_cb line_cb; /* streams only */
	void *payload;
	bool stream;
	int timeout_ms;
	CURL *easy;		 /* owned */
	struct curl_slist *hdrs; /* owned; rebuilt per attempt */
	char errbuf[CURL_ERROR_SIZE];
	cu_buf resp;   /* body, or the unconsumed tail of a stream */
	bool streamed; /* a 2xx stream byte arrived: no more retries */
	bool too_big;  /* a buffer cap was hit */
	int attempts;
	bool auth_retried;
	int fail_code; /* != 0: complete with this on the backoff timer */
	const char *fail_msg; /* static; the message that goes with it */
	ev_timer backoff;
	int busy;
	bool cancel_pending;
};

/* ---- client.c: the engine ------------------------------------------- */

/* libcurl's single timeout fired: drive the multi handle (watcher cb). */
void api__on_curl_timer(struct ev_loop *loop, ev_timer *w, int revents);
/* CURLMOPT_TIMERFUNCTION: (re)arm c->timer; userp is the client. */
int api__timer_cb(CURLM *multi, long timeout_ms, void *userp);
/* CURLMOPT_SOCKETFUNCTION: watch, rewatch or forget one socket. */
int api__socket_cb(
    CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
/* Stop and free one socket watcher [consumed], unlinking it from c. */
void api__sock_free(api_client *c, struct api_sock *as);
/* The rate limiter's next token is due: pump the queue (watcher cb). */
void api__on_limit_timer(struct ev_loop *loop, ev_timer *w, int revents);
/* Complete r with a cancellation now and free it (invariant 1). */
void api__cancel_now(struct api_req *r);

/* ---- client_life.c: token and counters ------------------------------ */

/* The VERB_* index of an HTTP method name [borrowed]. */
int api__verb_index(const char *m);
/* Count one finished attempt of verb answered with code (0: transport). */
void api__count_attempt(api_client *c, int verb, int code);
/* Re-read c's token file into c->token; *changed says whether it moved.
 * CU_OK, or the file's error (the old token is kept). */
int api__token_reload(api_client *c, bool *changed, cu_error *err);

#endif
