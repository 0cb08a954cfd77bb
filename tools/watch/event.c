/* SPDX-License-Identifier: MIT */
/* perfring-watch on libevent: the libperfring-event adapter watches the
 * rings; evsignal events handle SIGINT, SIGTERM and (with COMMAND) SIGCHLD,
 * and a one-shot timer re-added each time gives the tick. Stopping breaks
 * the dispatch (with --listen, once the HTTP clients have their answers);
 * the adapter is detached and the events freed after it. */
#include "config.h"
#include "watch.h"

#include <perfring/perfring-event.h>

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>

static const int watched_signals[] = { SIGINT, SIGTERM, SIGCHLD };
#define NSIG_WATCHED (sizeof(watched_signals) / sizeof(watched_signals[0]))

struct evw {
	struct event_base *base;
	struct event *tick;
	struct event *sig[NSIG_WATCHED];
	struct perfring_libevent *a;
};

static int tick_add(struct evw *e, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return event_add(e->tick, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
	struct watch *w = ctx;

	(void)fd;
	(void)what;
	watch_tick(w);
	if (!w->stopping)
		tick_add(w->loop, watch_next_tick_ms(w));
}

static void on_signal(evutil_socket_t signo, short what, void *ctx)
{
	(void)what;
	watch_signal(ctx, (int)signo);
}

static void ev_stop(struct watch *w)
{
	struct evw *e = w->loop;

	if (w->http)
		watch_http_stop(w);
	else
		event_base_loopbreak(e->base);
}

static int make_events(struct evw *e, struct watch *w)
{
	e->tick = evtimer_new(e->base, on_tick, w);
	if (!e->tick)
		return -1;
	for (size_t i = 0; i < NSIG_WATCHED; i++) {
		if (watched_signals[i] == SIGCHLD && !w->child)
			continue;
		e->sig[i] = evsignal_new(e->base, watched_signals[i], on_signal, w);
		if (!e->sig[i] || event_add(e->sig[i], NULL) < 0)
			return -1;
	}
	return 0;
}

static void teardown(struct evw *e)
{
	perfring_libevent_detach(e->a);
	if (e->tick)
		event_free(e->tick);
	for (size_t i = 0; i < NSIG_WATCHED; i++)
		if (e->sig[i])
			event_free(e->sig[i]);
	if (e->base)
		event_base_free(e->base);
}

int watch_loop_event(struct watch *w)
{
	struct evw e = { .base = event_base_new() };
	struct perfring_loop_opts lo;
	int ret = 0;

	w->loop = &e;
	watch_loop_opts(w, &lo);
	if (!e.base || make_events(&e, w) < 0) {
		fprintf(stderr, "%s: libevent setup failed\n", watch_prog_name(&w->a));
		ret = -1;
	} else if (perfring_libevent_attach(w->s, e.base, &lo, &e.a)) {
		fprintf(stderr, "%s: %s\n", watch_prog_name(&w->a),
			perfring_session_last_error(w->s));
		ret = -1;
	} else if (w->a.listen && watch_http_start(w, e.base) < 0) {
		ret = -1;
	} else {
		w->loop_stop = ev_stop;
		watch_started(w);
		if (tick_add(&e, watch_next_tick_ms(w)) < 0)
			watch_loop_failed(w, "event_add", -EIO);
		/* A stop during attach's first drain came before loop_stop was set. */
		if (!w->stopping && event_base_dispatch(e.base) < 0)
			watch_loop_failed(w, "event_base_dispatch", -EIO);
	}
	w->loop_stop = NULL;
	watch_http_free(w);
	teardown(&e);
	w->loop = NULL;
	return ret;
}
