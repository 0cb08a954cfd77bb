/* SPDX-License-Identifier: MIT */
/* perfring-watch on libev: the libperfring-ev adapter watches the rings;
 * ev_signal handles SIGINT and SIGTERM, ev_child the COMMAND's exit (libev
 * supports child watchers only on the default loop, hence that loop), and a
 * one-shot ev_timer re-armed each time gives the tick. Stopping breaks the
 * loop; the adapter is detached and the watchers stopped after it. */
#include "config.h"
#include "watch.h"

#include <perfring/perfring-ev.h>

#include <ev.h>
#include <signal.h>
#include <stdio.h>

struct evw {
	struct ev_loop *loop;
	ev_timer tick;
	ev_signal sigint, sigterm;
	ev_child child;
	struct perfring_libev *a;
};

static void tick_arm(struct evw *e, int ms)
{
	ev_timer_set(&e->tick, ms / 1000.0, 0.);
	ev_timer_start(e->loop, &e->tick);
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct watch *w = t->data;

	(void)loop;
	(void)revents;
	watch_tick(w);
	if (!w->stopping)
		tick_arm(w->loop, watch_next_tick_ms(w));
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
	(void)loop;
	(void)revents;
	watch_signal(s->data, s->signum);
}

static void on_child(struct ev_loop *loop, ev_child *c, int revents)
{
	(void)loop;
	(void)revents;
	ev_child_stop(loop, c);
	watch_child_exited(c->data, c->rstatus);
}

static void ev_stop(struct watch *w)
{
	struct evw *e = w->loop;

	ev_break(e->loop, EVBREAK_ALL);
}

static void start_signals(struct evw *e, struct watch *w)
{
	ev_signal_init(&e->sigint, on_signal, SIGINT);
	ev_signal_init(&e->sigterm, on_signal, SIGTERM);
	e->sigint.data = e->sigterm.data = w;
	ev_signal_start(e->loop, &e->sigint);
	ev_signal_start(e->loop, &e->sigterm);
	if (w->child) {
		ev_child_init(&e->child, on_child, w->child, 0);
		e->child.data = w;
		ev_child_start(e->loop, &e->child);
	}
}

static void teardown(struct evw *e)
{
	perfring_libev_detach(e->a);
	ev_timer_stop(e->loop, &e->tick);
	ev_signal_stop(e->loop, &e->sigint);
	ev_signal_stop(e->loop, &e->sigterm);
	ev_child_stop(e->loop, &e->child);
	ev_loop_destroy(e->loop);
}

int watch_loop_ev(struct watch *w)
{
	struct evw e = { .loop = ev_default_loop(EVFLAG_AUTO) };
	struct perfring_loop_opts lo;

	if (!e.loop) {
		fprintf(stderr, "perfring-watch: libev: no default loop\n");
		return -1;
	}
	ev_init(&e.tick, on_tick);
	e.tick.data = w;
	ev_child_init(&e.child, on_child, 0, 0);
	w->loop = &e;
	start_signals(&e, w);
	watch_loop_opts(w, &lo);
	if (perfring_libev_attach(w->s, e.loop, &lo, &e.a)) {
		fprintf(stderr, "perfring-watch: %s\n", perfring_session_last_error(w->s));
		teardown(&e);
		w->loop = NULL;
		return -1;
	}
	w->loop_stop = ev_stop;
	watch_started(w);
	tick_arm(&e, watch_next_tick_ms(w));
	if (!w->stopping)
		ev_run(e.loop, 0);
	w->loop_stop = NULL;
	teardown(&e);
	w->loop = NULL;
	return 0;
}
