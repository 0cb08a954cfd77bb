/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libevent_attach(), driven by tests/afault.c
 * (what each case checks is in afault.h). Wrapped here: event_new
 * (evtimer_new is a macro around it) and event_add. Each case runs on a fresh
 * base, and must leave no event on it.
 */
#include "afault.h"

#include <perfring/perfring-event.h>

#include <event2/event.h>

#include <criterion/criterion.h>
#include <errno.h>

/* ------------------------------------------------------------ the wraps */

enum kind { K_EVENT_NEW, K_EVENT_ADD, K_MALLOC, K_CALLOC, K_REALLOC, K__COUNT };

/* event_new fails only when libevent runs out of memory. event_add fails in
 * epoll_ctl (ENOSPC: max_user_watches, ENOMEM) or in an allocation that may
 * leave errno 0, for which the adapter reports -ENOMEM. */
static const struct afault_mode add_modes[] = { { ENOSPC, -ENOSPC }, { ENOMEM, -ENOMEM },
						{ 0, -ENOMEM } };

static const struct afault_kind kinds[K__COUNT] = {
	{ "event_new", afault_enomem, 1, false },
	{ "event_add", add_modes, sizeof(add_modes) / sizeof(add_modes[0]), false },
	AFAULT_ALLOC_KINDS,
};

struct event *__real_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg);
struct event *__wrap_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg);
int __real_event_add(struct event *ev, const struct timeval *tv);
int __wrap_event_add(struct event *ev, const struct timeval *tv);

struct event *__wrap_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg)
{
	return afault_fail(K_EVENT_NEW) ? NULL : __real_event_new(b, fd, what, cb, arg);
}

int __wrap_event_add(struct event *ev, const struct timeval *tv)
{
	return afault_fail(K_EVENT_ADD) ? -1 : __real_event_add(ev, tv);
}

/* ------------------------------------------------------------- the loop */

static void fx_init(struct afault_fx *f)
{
	f->loop = event_base_new();
	cr_assert_not_null(f->loop);
}

static int fx_attach(struct afault_fx *f)
{
	return perfring_libevent_attach(f->s, f->loop, &afault_lopts, &f->a.event);
}

static void fx_detach(struct afault_fx *f)
{
	perfring_libevent_detach(f->a.event);
}

/* Nothing may be left on the base (else dispatch would never return), and
 * then dispatch returns 1: no events pending or active. */
static bool fx_settle(struct afault_fx *f, const char *what)
{
	int added = event_base_get_num_events(f->loop, EVENT_BASE_COUNT_ADDED);
	int rc;

	cr_expect_eq(added, 0, "%s: %d events left on the base", what, added);
	if (added)
		return false;
	rc = event_base_dispatch(f->loop);
	cr_expect_eq(rc, 1, "%s: event_base_dispatch returned %d", what, rc);
	return rc == 1;
}

struct tick { struct afault_fx *f; struct event *ev; };

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct tick *t = arg;

	if (!afault_tick(t->f))
		return;
	perfring_libevent_detach(t->f->a.event);
	t->f->a.p = NULL;
	event_del(t->ev);
}

static bool fx_deliver(struct afault_fx *f, const char *what)
{
	const struct timeval ms = { 0, 1000 };
	struct tick t = { .f = f };
	int rc;

	t.ev = event_new(f->loop, -1, EV_PERSIST, on_tick, &t);
	cr_assert_not_null(t.ev);
	cr_assert_eq(event_add(t.ev, &ms), 0);
	/* Returns once the tick has detached and removed itself. */
	rc = event_base_dispatch(f->loop);
	cr_expect_eq(rc, 1, "%s: event_base_dispatch returned %d", what, rc);
	event_free(t.ev);
	return rc == 1;
}

static bool fx_fini(struct afault_fx *f, const char *what)
{
	event_base_free(f->loop);
	return true;
}

static const struct afault_ops ops = {
	.loop = "libevent", .kinds = kinds, .nkinds = K__COUNT, .alloc = K_MALLOC,
	.fx_size = sizeof(struct afault_fx), .init = fx_init, .attach = fx_attach,
	.detach = fx_detach, .settle = fx_settle, .deliver = fx_deliver, .fini = fx_fini,
};

/* ------------------------------------------------------------- the tests */

TestSuite(event_faults, .timeout = 300);

/* The attach's shape: per ring an EV_READ event made and added; the flush
 * timer and the soon turn's zero timer made, the flush timer added. */
Test(event_faults, calls_reached)
{
	long seen[AFAULT_MAX_KINDS], ncpu = kutil_ncpu_online();

	afault_calls(&ops, seen);
	cr_expect_eq(seen[K_EVENT_NEW], ncpu + 2);
	cr_expect_eq(seen[K_EVENT_ADD], ncpu + 1);
	cr_expect_gt(seen[K_CALLOC], 0);
}

Test(event_faults, event_new) { afault_run(&ops, K_EVENT_NEW); }
Test(event_faults, event_add) { afault_run(&ops, K_EVENT_ADD); }
Test(event_faults, allocators) { afault_run_allocators(&ops); }
