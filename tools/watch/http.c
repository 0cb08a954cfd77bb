/* SPDX-License-Identifier: MIT */
/* --listen: libevent's evhttp on the loop's own event_base serves /metrics.
 * No client can stall collection or grow memory without bound:
 *  - at most HTTP_MAX_CONNS connections; one more is answered 503 and closed;
 *  - headers and body are capped, and evhttp times out a stalled read or write;
 *  - a connection must complete a request every HTTP_DEADLINE_NS, so one that
 *    trickles a byte a second is cut too;
 *  - evhttp reads a connection's next request only once its answer is
 *    written, so a client that never reads holds one page at most.
 * evhttp 2.1 has no connection limit or count, so each connection's
 * bufferevent is made here (evhttp_set_bevcb) and held by a reference; once
 * evhttp frees it, its callbacks are gone and the sweep lets go of it. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <signal.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define HTTP_MAX_CONNS 64
#define HTTP_MAX_HEADERS 8192
#define HTTP_MAX_BODY 1024
#define HTTP_TIMEOUT_S 5
#define HTTP_DEADLINE_NS (5 * WATCH_NS)
#define HTTP_DRAIN_NS (2 * WATCH_NS)
#define SWEEP_MS 100

static const char refusal[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
			      "Connection: close\r\n\r\n";

struct hconn {
	struct bufferevent *bev;
	uint64_t since_ns;          /* accepted, or its last request answered */
	bool answered, cut;
};

struct watch_http {
	struct watch *w;
	struct event_base *base;
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	struct event *sweep;
	struct hconn conn[HTTP_MAX_CONNS];
	size_t nconn;
	uint64_t stop_ns;           /* 0 while serving */
};

static bool freed_by_evhttp(struct bufferevent *bev)
{
	bufferevent_data_cb rd, wr;
	bufferevent_event_cb ev;
	void *arg;

	bufferevent_getcb(bev, &rd, &wr, &ev, &arg);
	return !rd && !wr && !ev;
}

static void cut(struct bufferevent *bev)
{
	evutil_socket_t fd = bufferevent_getfd(bev);

	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);    /* evhttp sees the end and frees it */
}

/* Lets go of freed connections, cuts the ones past their deadline. */
static void sweep_conns(struct watch_http *h, uint64_t now)
{
	for (size_t i = 0; i < h->nconn;) {
		struct hconn *c = &h->conn[i];

		if (freed_by_evhttp(c->bev)) {
			bufferevent_decref(c->bev);
			*c = h->conn[--h->nconn];
			continue;
		}
		if (!c->cut && now - c->since_ns > HTTP_DEADLINE_NS) {
			cut(c->bev);
			c->cut = true;
		}
		i++;
	}
}

static bool busy(const struct watch_http *h)
{
	for (size_t i = 0; i < h->nconn; i++) {
		const struct hconn *c = &h->conn[i];

		if (c->cut || freed_by_evhttp(c->bev))
			continue;
		if (!c->answered || evbuffer_get_length(bufferevent_get_output(c->bev)))
			return true;
	}
	return false;
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct watch_http *h = arg;
	uint64_t now = watch_now_ns();

	(void)fd;
	(void)what;
	sweep_conns(h, now);
	if (h->stop_ns && (!busy(h) || now - h->stop_ns > HTTP_DRAIN_NS))
		event_base_loopbreak(h->base);
}

static void on_refuse(evutil_socket_t fd, short what, void *arg)
{
	struct bufferevent *bev = arg;
	evutil_socket_t s = bufferevent_getfd(bev);

	(void)fd;
	(void)what;
	if (s >= 0 && send(s, refusal, sizeof(refusal) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		errno = 0;  /* the peer may be gone already; it is closed either way */
	cut(bev);
	bufferevent_decref(bev);
}

static struct bufferevent *new_conn(struct event_base *base, void *arg)
{
	struct watch_http *h = arg;
	struct timeval now = { 0, 0 };
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);

	if (!bev)
		return NULL;
	sweep_conns(h, watch_now_ns());
	bufferevent_incref(bev);
	if (h->nconn < HTTP_MAX_CONNS && !h->stop_ns) {
		h->conn[h->nconn++] = (struct hconn){ bev, watch_now_ns(), false, false };
		return bev;
	}
	/* evhttp sets the fd after this returns: refuse on the next turn. */
	if (event_base_once(base, -1, EV_TIMEOUT, on_refuse, bev, &now) < 0)
		bufferevent_decref(bev);
	return bev;
}

static void answered(struct watch_http *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;

	for (size_t i = 0; bev && i < h->nconn; i++) {
		if (h->conn[i].bev == bev) {
			h->conn[i].since_ns = watch_now_ns();
			h->conn[i].answered = true;
		}
	}
}

/* GET and HEAD alike: Content-Length is the body's, and a HEAD answer has
 * no body (RFC 9110 9.3.2). evhttp would send a HEAD its body anyway, with
 * no length, and a keep-alive client would read it as its next answer. */
static void reply(struct evhttp_request *req, int code, const char *reason, const char *type,
		  const char *body, size_t len)
{
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	char clen[FC_NUM_MAX];

	snprintf(clen, sizeof(clen), "%zu", len);
	if (evhttp_add_header(hdr, "Content-Type", type) < 0 ||
	    evhttp_add_header(hdr, "Content-Length", clen) < 0 ||
	    (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD &&
	     evbuffer_add(out, body, len) < 0)) {
		evhttp_clear_headers(hdr);
		evbuffer_drain(out, evbuffer_get_length(out));
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evhttp_send_reply(req, code, reason, NULL);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct watch_http *h = arg;
	char *page;
	size_t len;

	answered(h, req);
	if (watch_metrics_page(h->w, &page, &len)) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	reply(req, HTTP_OK, "OK", "text/plain; version=0.0.4; charset=utf-8", page, len);
	free(page);
}

static void on_other(struct evhttp_request *req, void *arg)
{
	static const char body[] = "only /metrics is served here\n";

	answered(arg, req);
	reply(req, HTTP_NOTFOUND, "Not Found", "text/plain; charset=utf-8", body,
	      sizeof(body) - 1);
}

static int bind_listen(struct watch_http *h, const char *spec)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	size_t len = (size_t)(colon - spec);
	unsigned port = (unsigned)strtoul(colon + 1, NULL, 10);

	if (spec[0] == '[' && len >= 2 && spec[len - 1] == ']')
		spec++, len -= 2;   /* [::1]:9464 */
	if (len >= sizeof(host))
		len = sizeof(host) - 1;
	memcpy(host, spec, len);
	host[len] = '\0';
	errno = 0;
	h->sock = evhttp_bind_socket_with_handle(h->http, host, (ev_uint16_t)port);
	if (h->sock)
		return 0;
	fprintf(stderr, "%s: --listen %s: cannot listen there: %s\n", watch_prog_name(&h->w->a),
		h->w->a.listen, errno ? strerror(errno) : "bad address");
	return -1;
}

static int configure(struct watch_http *h)
{
	struct timeval every = { 0, SWEEP_MS * 1000 };

	evhttp_set_bevcb(h->http, new_conn, h);
	evhttp_set_max_headers_size(h->http, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->http, HTTP_MAX_BODY);
	evhttp_set_timeout(h->http, HTTP_TIMEOUT_S);
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_gencb(h->http, on_other, h);
	if (evhttp_set_cb(h->http, "/metrics", on_metrics, h) < 0)
		return -1;
	h->sweep = event_new(h->base, -1, EV_PERSIST, on_sweep, h);
	return h->sweep && event_add(h->sweep, &every) == 0 ? 0 : -1;
}

int watch_http_start(struct watch *w, struct event_base *base)
{
	struct watch_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	/* A client gone mid-answer must not kill the server: bufferevents write
	 * without MSG_NOSIGNAL. */
	signal(SIGPIPE, SIG_IGN);
	w->http = h;
	h->w = w;
	h->base = base;
	h->http = evhttp_new(base);
	if (!h->http || configure(h) < 0) {
		fprintf(stderr, "%s: evhttp setup failed\n", watch_prog_name(&w->a));
		return -1;
	}
	if (bind_listen(h, w->a.listen) < 0)
		return -1;
	fprintf(stderr, "%s: serving http://%s/metrics\n", watch_prog_name(&w->a), w->a.listen);
	return 0;
}

/* SIGTERM, SIGINT or the end of -d: collection stops, no new connection is
 * taken, and the loop ends once every open one has its answer. */
void watch_http_stop(struct watch *w)
{
	struct watch_http *h = w->http;

	if (h->stop_ns)
		return;
	h->stop_ns = watch_now_ns();
	perfring_session_stop(w->s);
	if (h->sock)
		evhttp_del_accept_socket(h->http, h->sock);
	h->sock = NULL;
	on_sweep(-1, 0, h);
}

void watch_http_free(struct watch *w)
{
	struct watch_http *h = w->http;

	if (!h)
		return;
	if (h->sweep)
		event_free(h->sweep);
	if (h->http)
		evhttp_free(h->http);
	for (size_t i = 0; i < h->nconn; i++)
		bufferevent_decref(h->conn[i].bev);
	free(h);
	w->http = NULL;
}
