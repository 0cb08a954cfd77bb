/* SPDX-License-Identifier: MIT */
/* BPF output through each adapter: libperfring-uv, -event and -ev on real
 * loops. Each loop makes the 10,000 getpid calls from a timer, then runs
 * until every sample came (its watermark's wakeups and the flush timer), or
 * a 20 s timeout fails the test. */
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>

#include <perfring/perfring-uv.h>

#include "bpfloops.h"

void lfx_open(struct lfx *f)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_event *ev;
	char why[1024] = "";
	int err;

	*f = (struct lfx){ .c = { .tgid = (uint32_t)getpid(), .tid = (uint32_t)getpid() } };
	err = kbpf_open(&f->b, getpid(), 0, why, sizeof(why));
	if (err == -EPERM || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	KCHECK(perfring_session_new(&o, &f->s), NULL);
	KCHECK(perfring_session_add_bpf_output(f->s, f->b.out_map, &ev), f->s);
	KCHECK(perfring_event_set_callback(ev, kbpf_check_cb, &f->c), f->s);
	KCHECK(perfring_session_start(f->s), f->s);
}

bool lfx_tick(struct lfx *f)
{
	if (f->ticks++ == 0) {
		f->c.t0 = kutil_now_ns();
		kutil_getpid_n(N);
		f->c.t1 = kutil_now_ns();
	}
	return f->c.n >= N || f->ticks > TIMEOUT_MS;
}

void lfx_close(struct lfx *f, const char *loop)
{
	cr_expect_eq(f->c.n, N, "%s: %llu of %d samples", loop, (unsigned long long)f->c.n, N);
	cr_expect_eq(kbpf_check_bad(&f->c), 0, "%s: %s", loop, f->c.first_bad);
	cr_expect_eq(f->c.raw_size, 28);
	cr_expect_eq(kutil_stats(f->s).lost, 0);
	perfring_session_free(f->s);
	cr_expect_eq(kbpf_close_gone(&f->b), 0, "%s: BPF objects outlived the test", loop);
}

static void uv_tick(uv_timer_t *t)
{
	if (lfx_tick(t->data))
		uv_stop(t->loop);
}

Test(bpf_loops, libuv, .timeout = 60)
{
	struct perfring_libuv *a;
	uv_loop_t loop;
	uv_timer_t t;
	struct lfx f;

	lfx_open(&f);
	cr_assert_eq(uv_loop_init(&loop), 0);
	KCHECK(perfring_libuv_attach(f.s, &loop, NULL, &a), f.s);
	uv_timer_init(&loop, &t);
	t.data = &f;
	uv_timer_start(&t, uv_tick, 0, 1);
	uv_run(&loop, UV_RUN_DEFAULT);
	perfring_libuv_detach(a, NULL, NULL);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	cr_expect_eq(uv_loop_close(&loop), 0);
	lfx_close(&f, "libuv");
}

