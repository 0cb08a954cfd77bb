/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libuv_attach(), driven by tests/afault.c
 * (what each case checks is in afault.h). Wrapped here: uv_poll_init,
 * uv_poll_start, uv_timer_start and uv_idle_start. Each case runs on a fresh
 * loop, so uv_loop_close() tells whether anything was left on it.
 */
#include "afault.h"

#include <perfring/perfring-uv.h>

#include <criterion/criterion.h>

#define TIMEOUT_MS 10000

/* ------------------------------------------------------------ the wraps */

enum kind { K_POLL_INIT, K_POLL_START, K_TIMER_START, K_IDLE_START, K_MALLOC, K_CALLOC,
	    K_REALLOC, K__COUNT };

/* libuv reports failure by its return alone; errno is left 0 so that an
 * attach reading it would be caught. uv_timer_start and uv_idle_start only
 * fail with UV_EINVAL. */
static const struct afault_mode nomem[] = { { 0, UV_ENOMEM } };
static const struct afault_mode inval[] = { { 0, UV_EINVAL } };

static const struct afault_kind kinds[K__COUNT] = {
	{ "uv_poll_init", nomem, 1, false },
	{ "uv_poll_start", nomem, 1, false },
	{ "uv_timer_start", inval, 1, false },
	{ "uv_idle_start", inval, 1, false },
	AFAULT_ALLOC_KINDS,
};

int __real_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd);
int __wrap_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd);
int __real_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb);
int __wrap_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb);
int __real_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat);
int __wrap_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat);
int __real_uv_idle_start(uv_idle_t *h, uv_idle_cb cb);
int __wrap_uv_idle_start(uv_idle_t *h, uv_idle_cb cb);

int __wrap_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd)
{
	return afault_fail(K_POLL_INIT) ? UV_ENOMEM : __real_uv_poll_init(loop, h, fd);
}

int __wrap_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb)
{
	return afault_fail(K_POLL_START) ? UV_ENOMEM : __real_uv_poll_start(h, events, cb);
}

int __wrap_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	if (afault_fail(K_TIMER_START))
		return UV_EINVAL;
	return __real_uv_timer_start(h, cb, timeout, repeat);
}

int __wrap_uv_idle_start(uv_idle_t *h, uv_idle_cb cb)
{
	return afault_fail(K_IDLE_START) ? UV_EINVAL : __real_uv_idle_start(h, cb);
}

/* ------------------------------------------------------------- the loop */

/* The timeout timer is unreferenced: uv_run() returns once nothing else is
 * active, and the timer only bounds a hang. */
struct fx {
	struct afault_fx base;
	uv_loop_t loop;
	uv_timer_t timeout, tick;
	int done_calls;
};

static struct fx *fx_of(struct afault_fx *b)
{
	return (struct fx *)b;
}

static void on_timeout(uv_timer_t *t)
{
	struct fx *f = t->data;

	f->base.timed_out = true;
	uv_stop(&f->loop);
}

static void fx_init(struct afault_fx *b)
{
	struct fx *f = fx_of(b);

	b->loop = &f->loop;
	cr_assert_eq(uv_loop_init(&f->loop), 0);
	uv_timer_init(&f->loop, &f->timeout);
	f->timeout.data = f;
	cr_assert_eq(uv_timer_start(&f->timeout, on_timeout, TIMEOUT_MS, 0), 0);
	uv_unref((uv_handle_t *)&f->timeout);
}

static int fx_attach(struct afault_fx *b)
{
	return perfring_libuv_attach(b->s, b->loop, &afault_lopts, &b->a.uv);
}

static void fx_detach(struct afault_fx *b)
{
	perfring_libuv_detach(b->a.uv, NULL, NULL);
}

/* Runs the loop until nothing of ours is active; false if it hung. */
static bool fx_settle(struct afault_fx *b, const char *what)
{
	int rc = uv_run(b->loop, UV_RUN_DEFAULT);

	cr_expect(!b->timed_out && rc == 0, "%s: uv_run did not finish (returned %d%s)", what,
		  rc, b->timed_out ? ", timed out" : "");
	return !b->timed_out && rc == 0;
}

static void on_done(void *ctx)
{
	((struct fx *)ctx)->done_calls++;
}

static void on_tick(uv_timer_t *t)
{
	struct fx *f = t->data;

	if (!afault_tick(&f->base))
		return;
	perfring_libuv_detach(f->base.a.uv, on_done, f);
	uv_close((uv_handle_t *)t, NULL);
}

static bool fx_deliver(struct afault_fx *b, const char *what)
{
	struct fx *f = fx_of(b);
	bool ran;

	uv_timer_init(&f->loop, &f->tick);
	f->tick.data = f;
	uv_timer_start(&f->tick, on_tick, 1, 1);
	ran = fx_settle(b, what);
	cr_expect_eq(f->done_calls, 1, "%s: detach's done ran %d times", what, f->done_calls);
	return ran && f->done_calls == 1;
}

static bool fx_fini(struct afault_fx *b, const char *what)
{
	struct fx *f = fx_of(b);
	int rc;

	uv_close((uv_handle_t *)&f->timeout, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	rc = uv_loop_close(&f->loop);
	cr_expect_eq(rc, 0, "%s: a handle was left on the loop (%s)", what, uv_strerror(rc));
	return rc == 0;
}

static const struct afault_ops ops = {
	.loop = "libuv", .kinds = kinds, .nkinds = K__COUNT, .alloc = K_MALLOC,
	.fx_size = sizeof(struct fx), .init = fx_init, .attach = fx_attach,
	.detach = fx_detach, .settle = fx_settle, .deliver = fx_deliver, .fini = fx_fini,
};

/* ------------------------------------------------------------- the tests */

TestSuite(uv_faults, .timeout = 300);

/* The attach's shape: per ring a poll handle initialised and started, then
 * the flush timer and the idle handle (settling flushes) started. */
Test(uv_faults, calls_reached)
{
	long seen[AFAULT_MAX_KINDS], ncpu = kutil_ncpu_online();

	afault_calls(&ops, seen);
	cr_expect_eq(seen[K_POLL_INIT], ncpu);
	cr_expect_eq(seen[K_POLL_START], ncpu);
	cr_expect_eq(seen[K_TIMER_START], 1);
	cr_expect_eq(seen[K_IDLE_START], 1);
	cr_expect_gt(seen[K_CALLOC], 0);
}

Test(uv_faults, uv_poll_init) { afault_run(&ops, K_POLL_INIT); }
Test(uv_faults, uv_poll_start) { afault_run(&ops, K_POLL_START); }
Test(uv_faults, uv_timer_start) { afault_run(&ops, K_TIMER_START); }
Test(uv_faults, uv_idle_start) { afault_run(&ops, K_IDLE_START); }
Test(uv_faults, allocators) { afault_run_allocators(&ops); }
