/* SPDX-License-Identifier: MIT */
/* BPF ring buffers through libperfring-event (the fixture:
 * tests/test_ringbuf_loops.c). */
#include "test_ringbuf_loops.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <perfring/perfring-event.h>
#include <event2/event.h>

struct evfx { struct rlfx *l; struct event_base *base; };

static void event_tick(evutil_socket_t fd, short what, void *arg)
{
	struct evfx *e = arg;

	(void)fd;
	(void)what;
	if (rlfx_tick(e->l))
		event_base_loopbreak(e->base);
}

Test(ringbuf_loops, libevent, .timeout = 60)
{
	struct timeval ms = { 0, 1000 };
	struct perfring_libevent *a;
	struct event_base *base = event_base_new();
	struct event *t;
	struct rlfx l;
	struct evfx e = { &l, base };

	rlfx_open(&l);
	KCHECK(perfring_libevent_attach(l.f.s, base, &l.lo, &a), l.f.s);
	t = event_new(base, -1, EV_PERSIST, event_tick, &e);
	event_add(t, &ms);
	event_base_dispatch(base);
	event_free(t);
	perfring_libevent_detach(a);
	event_base_free(base);
	rlfx_close(&l, "libevent");
}
