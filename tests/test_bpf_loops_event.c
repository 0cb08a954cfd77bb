/* SPDX-License-Identifier: MIT */
/* BPF output through libperfring-event (the fixture: tests/test_bpf_loops.c). */
#include "bpfloops.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <perfring/perfring-event.h>
#include <event2/event.h>

struct evfx { struct lfx *f; struct event_base *base; };

static void event_tick(evutil_socket_t fd, short what, void *arg)
{
	struct evfx *e = arg;

	(void)fd;
	(void)what;
	if (lfx_tick(e->f))
		event_base_loopbreak(e->base);
}

Test(bpf_loops, libevent, .timeout = 60)
{
	struct timeval ms = { 0, 1000 };
	struct perfring_libevent *a;
	struct event_base *base = event_base_new();
	struct event *t;
	struct lfx f;
	struct evfx e = { &f, base };

	lfx_open(&f);
	KCHECK(perfring_libevent_attach(f.s, base, NULL, &a), f.s);
	t = event_new(base, -1, EV_PERSIST, event_tick, &e);
	event_add(t, &ms);
	event_base_dispatch(base);
	event_free(t);
	perfring_libevent_detach(a);
	event_base_free(base);
	lfx_close(&f, "libevent");
}

