/* SPDX-License-Identifier: MIT */
/* BPF ring buffers through each adapter: libperfring-uv, -event and -ev on
 * real loops, with no flush timer and a budget of 7, so that every record
 * comes through the ring buffer's own slot (its fd's readiness, and the
 * continuation of a drain the budget cut). Each loop makes the 10,000
 * getpid calls from a timer, then runs until every record came, or a 20 s
 * timeout fails the test. */
#include "test_ringbuf_loops.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>

#include <perfring/perfring-uv.h>

static struct kbpf_rb second;
static struct rbcheck second_c;
static uint32_t second_ids[3];

void rlfx_open(struct rlfx *l)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 16 };
	struct perfring_event *ev;
	char why[1024];

	*l = (struct rlfx){ .lo = { .sz = sizeof(l->lo), .budget = 7,
				    .flush_ms = PERFRING_FLUSH_NEVER } };
	rbfx_open(&l->f, KBPF_RB_OUTPUT, 1u << 19, 24, &o, NULL, false);
	cr_assert_eq(kbpf_rb_open(&second, (pid_t)l->f.c.tgid, 1u << 19, KBPF_RB_RESERVE, 40, why,
				  sizeof(why)), 0, "%s", why);
	second_ids[0] = kbpf_id(second.map);
	second_ids[1] = kbpf_id(second.prog);
	second_ids[2] = kbpf_id(second.res_map);
	second_c = l->f.c;
	second_c.size = 40;
	second_c.timed = true; /* in the session's merge, read by the slot all the same */
	KCHECK(perfring_session_add_bpf_ringbuf(l->f.s, second.map, &ro, &ev), l->f.s);
	second_c.ev = ev;
	KCHECK(perfring_event_set_callback(ev, rbcheck_cb, &second_c), l->f.s);
	KCHECK(perfring_session_start(l->f.s), l->f.s);
}

bool rlfx_tick(struct rlfx *l)
{
	if (l->ticks++ == 0) {
		rbfx_calls(&l->f, LN);
		second_c.t0 = l->f.c.t0;
		second_c.t1 = l->f.c.t1;
	}
	return (l->f.c.n >= LN && second_c.n >= LN) || l->ticks > LTIMEOUT_MS;
}

void rlfx_close(struct rlfx *l, const char *loop)
{
	cr_expect_eq(second_c.n, LN, "%s: %llu of %d records of the second map", loop,
		     (unsigned long long)second_c.n, LN);
	cr_expect_eq(second_c.bad, 0, "%s: %s", loop, second_c.first_bad);
	rbfx_expect(&l->f, LN);
	rbfx_close(&l->f);
	kbpf_rb_close(&second);
	cr_expect_eq(kbpf_wait_gone(second_ids, 3), 0, "%s: BPF objects outlived the test", loop);
}

static void uv_tick(uv_timer_t *t)
{
	if (rlfx_tick(t->data))
		uv_stop(t->loop);
}

Test(ringbuf_loops, libuv, .timeout = 60)
{
	struct perfring_libuv *a;
	uv_loop_t loop;
	uv_timer_t t;
	struct rlfx l;

	rlfx_open(&l);
	cr_assert_eq(uv_loop_init(&loop), 0);
	KCHECK(perfring_libuv_attach(l.f.s, &loop, &l.lo, &a), l.f.s);
	uv_timer_init(&loop, &t);
	t.data = &l;
	uv_timer_start(&t, uv_tick, 0, 1);
	uv_run(&loop, UV_RUN_DEFAULT);
	perfring_libuv_detach(a, NULL, NULL);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	cr_expect_eq(uv_loop_close(&loop), 0);
	rlfx_close(&l, "libuv");
}
