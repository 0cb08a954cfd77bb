/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libev_attach(), driven by tests/afault.c
 * (what each case checks is in afault.h). libev's watcher functions
 * (ev_io_start, ev_idle_start, ev_timer_start) return void and cannot fail:
 * libev aborts the process itself when it cannot grow its arrays. What can
 * fail in this attach is allocation, which afault.c wraps: the adapter's own
 * calloc calls and the core's (perfring_reactor_new). Each case runs on a
 * fresh loop, and must leave no watcher active on it.
 */
#include "afault.h"

#include <perfring/perfring-ev.h>

#include <ev.h>

#include <criterion/criterion.h>

enum kind { K_MALLOC, K_CALLOC, K_REALLOC, K__COUNT };
static const struct afault_kind kinds[K__COUNT] = { AFAULT_ALLOC_KINDS };

/* ------------------------------------------------------------- the loop */

static void fx_init(struct afault_fx *f)
{
	f->loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(f->loop);
}

static int fx_attach(struct afault_fx *f)
{
	return perfring_libev_attach(f->s, f->loop, &afault_lopts, &f->a.ev);
}

static void fx_detach(struct afault_fx *f)
{
	perfring_libev_detach(f->a.ev);
}

/* No watcher may be left active (else ev_run would never return): a
 * non-blocking pass reports none, and then ev_run returns at once. */
static bool fx_settle(struct afault_fx *f, const char *what)
{
	int active = ev_run(f->loop, EVRUN_NOWAIT);

	cr_expect_eq(active, 0, "%s: %d watchers left active", what, active);
	if (active)
		return false;
	active = ev_run(f->loop, 0);
	cr_expect_eq(active, 0, "%s: ev_run returned %d", what, active);
	return active == 0;
}

static void on_tick(EV_P_ ev_timer *w, int revents)
{
	struct afault_fx *f = w->data;

	if (!afault_tick(f))
		return;
	perfring_libev_detach(f->a.ev);
	f->a.p = NULL;
	ev_timer_stop(EV_A_ w);
}

static bool fx_deliver(struct afault_fx *f, const char *what)
{
	ev_timer tick;
	int rc;

	ev_timer_init(&tick, on_tick, 0.001, 0.001);
	tick.data = f;
	ev_timer_start(f->loop, &tick);
	/* Returns once the tick has detached and stopped itself. */
	rc = ev_run(f->loop, 0);
	cr_expect_eq(rc, 0, "%s: ev_run returned %d", what, rc);
	return rc == 0;
}

static bool fx_fini(struct afault_fx *f, const char *what)
{
	ev_loop_destroy(f->loop);
	return true;
}

static const struct afault_ops ops = {
	.loop = "libev", .kinds = kinds, .nkinds = K__COUNT, .alloc = K_MALLOC,
	.fx_size = sizeof(struct afault_fx), .init = fx_init, .attach = fx_attach,
	.detach = fx_detach, .settle = fx_settle, .deliver = fx_deliver, .fini = fx_fini,
};

/* ------------------------------------------------------------- the tests */

TestSuite(ev_faults, .timeout = 300);

/* The attach's shape: the adapter's state and its ev_io array, and the
 * core's reactor; no libev call in it can fail. */
Test(ev_faults, calls_reached)
{
	long seen[AFAULT_MAX_KINDS];

	afault_calls(&ops, seen);
	cr_expect_geq(seen[K_CALLOC], 2, "the adapter's own two calloc calls");
}

Test(ev_faults, allocators) { afault_run_allocators(&ops); }
