/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/curlev.c - libcurl's multi interface driven by the
 * server's libev loop (socket and timer callbacks), shared by the two
 * outgoing HTTPS clients: admission webhooks (webhooks.c) and APIService
 * backends (aggregator.c). See apiserver.h.
 */
#include <string.h>

#include "tests/apiserver/apiserver.h"

struct curlev_sock {
	ev_io io;
	struct as_curlev *c;
};

/* Hand every finished transfer to the owner. */
static void drain(struct as_curlev *c)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			c->done(msg->easy_handle, msg->data.result, c->ctx);
}

static void on_sock(struct ev_loop *loop, ev_io *w, int revents)
{
	struct curlev_sock *ws = w->data;
	struct as_curlev *c = ws->c; /* ws may go in the action */
	int flags = 0;

	(void)loop;
	if (revents & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (revents & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(c->multi, w->fd, flags, &c->running);
	drain(c);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct as_curlev *c = w->data;

	(void)loop;
	(void)revents;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &c->running);
	drain(c);
}

static int socket_cb(
    CURL *e, curl_socket_t s, int what, void *userp, void *sockp)
{
	struct as_curlev *c = userp;
	struct curlev_sock *ws = sockp;
	int ev = 0;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (ws != NULL) {
			ev_io_stop(c->loop, &ws->io);
			cu_free(ws);
			curl_multi_assign(c->multi, s, NULL);
		}
		return 0;
	}
	if (ws == NULL) {
		if ((ws = cu_calloc(1, sizeof(*ws))) == NULL)
			return -1;
		ws->c = c;
		curl_multi_assign(c->multi, s, ws);
	} else {
		ev_io_stop(c->loop, &ws->io);
	}
	if (what & CURL_POLL_IN)
		ev |= EV_READ;
	if (what & CURL_POLL_OUT)
		ev |= EV_WRITE;
	ev_io_init(&ws->io, on_sock, s, ev);
	ws->io.data = ws;
	ev_io_start(c->loop, &ws->io);
	return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
	struct as_curlev *c = userp;

	(void)m;
	ev_timer_stop(c->loop, &c->timer);
	if (ms >= 0) {
		ev_timer_set(&c->timer, (double)ms / 1000.0, 0.);
		ev_timer_start(c->loop, &c->timer);
	}
	return 0;
}

int as_curlev_init(struct as_curlev *c, struct ev_loop *loop,
    void (*done)(CURL *e, CURLcode rc, void *ctx), void *ctx)
{
	memset(c, 0, sizeof(*c));
	c->loop = loop;
	c->done = done;
	c->ctx = ctx;
	c->multi = curl_multi_init();
	if (c->multi == NULL)
		return CU_ENOMEM;
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	ev_init(&c->timer, on_timer);
	c->timer.data = c;
	return CU_OK;
}

void as_curlev_dispose(struct as_curlev *c)
{
	if (c->multi != NULL)
		curl_multi_cleanup(c->multi); /* may call socket_cb */
	c->multi = NULL;
	ev_timer_stop(c->loop, &c->timer);
}
