/* SPDX-License-Identifier: MIT */
/* BPF output through libperfring-ev (the fixture: tests/test_bpf_loops.c). */
#include "bpfloops.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <perfring/perfring-ev.h>
#include <ev.h>

static void ev_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)revents;
	if (lfx_tick(t->data))
		ev_break(loop, EVBREAK_ALL);
}

Test(bpf_loops, libev, .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct perfring_libev *a;
	ev_timer t;
	struct lfx f;

	lfx_open(&f);
	KCHECK(perfring_libev_attach(f.s, loop, NULL, &a), f.s);
	ev_timer_init(&t, ev_tick, 0., 0.001);
	t.data = &f;
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
	perfring_libev_detach(a);
	ev_loop_destroy(loop);
	lfx_close(&f, "libev");
}
