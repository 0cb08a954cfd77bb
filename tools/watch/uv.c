/* SPDX-License-Identifier: MIT */
/* perfring-watch on libuv: the libperfring-uv adapter watches the rings;
 * uv_signal_t handles SIGINT, SIGTERM and (with COMMAND) SIGCHLD, and a
 * one-shot uv_timer_t re-armed each time gives the tick. Stopping detaches
 * and closes every handle, so uv_run() returns on its own. */
#include "config.h"
#include "watch.h"

#include <perfring/perfring-uv.h>

#include <signal.h>
#include <stdio.h>

static const int watched_signals[] = { SIGINT, SIGTERM, SIGCHLD };
#define NSIG_WATCHED (sizeof(watched_signals) / sizeof(watched_signals[0]))

struct uvw {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_signal_t sig[NSIG_WATCHED];
	struct perfring_libuv *a;
	bool closing;
};

static void on_tick(uv_timer_t *t)
{
	struct watch *w = t->data;

	watch_tick(w);
	if (!w->stopping)
		uv_timer_start(t, on_tick, (uint64_t)watch_next_tick_ms(w), 0);
}

static void on_signal(uv_signal_t *h, int signo)
{
	watch_signal(h->data, signo);
}

/* Safe from any callback, the adapter's included (detach is). */
static void uv_stop_all(struct watch *w)
{
	struct uvw *u = w->loop;

	if (u->closing)
		return;
	u->closing = true;
	perfring_libuv_detach(u->a, NULL, NULL);
	u->a = NULL;
	uv_close((uv_handle_t *)&u->tick, NULL);
	for (size_t i = 0; i < NSIG_WATCHED; i++)
		uv_close((uv_handle_t *)&u->sig[i], NULL);
}

static int start_signals(struct uvw *u, struct watch *w)
{
	int err = 0;

	for (size_t i = 0; !err && i < NSIG_WATCHED; i++)
		if (watched_signals[i] != SIGCHLD || w->child)
			err = uv_signal_start(&u->sig[i], on_signal, watched_signals[i]);
	return err;
}

static void init_handles(struct uvw *u, struct watch *w)
{
	uv_timer_init(&u->loop, &u->tick);
	u->tick.data = w;
	for (size_t i = 0; i < NSIG_WATCHED; i++) {
		uv_signal_init(&u->loop, &u->sig[i]);
		u->sig[i].data = w;
	}
}

int watch_loop_uv(struct watch *w)
{
	struct uvw u = { .closing = false };
	struct perfring_loop_opts lo;
	int err = uv_loop_init(&u.loop), ret = 0;

	if (err) {
		fprintf(stderr, "perfring-watch: uv_loop_init: %s\n", uv_strerror(err));
		return -1;
	}
	init_handles(&u, w);
	w->loop = &u;
	w->loop_stop = uv_stop_all;
	watch_loop_opts(w, &lo);
	if ((err = perfring_libuv_attach(w->s, &u.loop, &lo, &u.a))) {
		fprintf(stderr, "perfring-watch: %s\n", perfring_session_last_error(w->s));
		ret = -1;
	} else if (!w->stopping && (err = start_signals(&u, w))) {
		fprintf(stderr, "perfring-watch: libuv: %s\n", uv_strerror(err));
		ret = -1;
	} else {
		watch_started(w);
		if (!w->stopping)
			uv_timer_start(&u.tick, on_tick, (uint64_t)watch_next_tick_ms(w), 0);
	}
	if (ret || w->stopping)
		uv_stop_all(w);
	uv_run(&u.loop, UV_RUN_DEFAULT);
	uv_loop_close(&u.loop);
	w->loop = NULL;
	w->loop_stop = NULL;
	return ret;
}
