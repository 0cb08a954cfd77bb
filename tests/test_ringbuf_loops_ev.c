/* SPDX-License-Identifier: MIT */
/* BPF ring buffers through libperfring-ev (the fixture:
 * tests/test_ringbuf_loops.c). */
#include "test_ringbuf_loops.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <perfring/perfring-ev.h>
#include <ev.h>

static void ev_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)revents;
	if (rlfx_tick(t->data))
		ev_break(loop, EVBREAK_ALL);
}

Test(ringbuf_loops, libev, .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct perfring_libev *a;
	ev_timer t;
	struct rlfx l;

	rlfx_open(&l);
	KCHECK(perfring_libev_attach(l.f.s, loop, &l.lo, &a), l.f.s);
	ev_timer_init(&t, ev_tick, 0., 0.001);
	t.data = &l;
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
	perfring_libev_detach(a);
	ev_loop_destroy(loop);
	rlfx_close(&l, "libev");
}
