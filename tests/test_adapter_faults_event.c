/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libevent_attach(). The adapter's source is
 * compiled into this program and the libevent calls it makes that can fail
 * are wrapped by the linker (--wrap, tests/adapter-faults.mk): event_new
 * (evtimer_new is a macro around it) and event_add; so are the allocator calls
 * of the adapter and of the statically linked core. A fault-free attach
 * (wakeup mode, every online CPU, a flush timer) first counts each kind of
 * call; then, for every kind and every N up to that count, an attach is made
 * with the Nth call of that kind failing. Every case must return the injected
 * error with *out NULL, leave no event on the base (event_base_dispatch()
 * returns), leave the fds as they were, leak nothing (LeakSanitizer, in a
 * sanitizer build) and let the same session attach again and deliver 25
 * getpid samples. The case counts go to stderr, i.e. the .log
 * ("# fault injection ..."): Criterion shows cr_log_info only with --verbose.
 */
#include "kutil.h"

#include <perfring/perfring-event.h>

#include <event2/event.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLES 25
#define TIMEOUT_TICKS 10000 /* 1 ms ticks */

/* Present only in a sanitizer build; weak so other builds link. */

/* ------------------------------------------------------------ the wraps */

enum kind { K_EVENT_NEW, K_EVENT_ADD, K_MALLOC, K_CALLOC, K_REALLOC, K__COUNT };
static const char *const kind_name[K__COUNT] = {
	"event_new", "event_add", "malloc", "calloc", "realloc",
};

/* Counts (and fails) calls only while armed, i.e. inside one attach. */
static struct {
	bool armed, fired;
	enum kind kind;   /* K__COUNT: count only */
	long nth;         /* 1-based */
	int err;          /* errno the failing call leaves */
	long seen[K__COUNT];
} F;

static bool fail_now(enum kind k)
{
	if (!F.armed || ++F.seen[k] != F.nth || k != F.kind || F.fired)
		return false;
	F.fired = true;
	errno = F.err;
	return true;
}

struct event *__real_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg);
struct event *__wrap_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg);
int __real_event_add(struct event *ev, const struct timeval *tv);
int __wrap_event_add(struct event *ev, const struct timeval *tv);
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__wrap_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

struct event *__wrap_event_new(struct event_base *b, evutil_socket_t fd, short what,
			       event_callback_fn cb, void *arg)
{
	return fail_now(K_EVENT_NEW) ? NULL : __real_event_new(b, fd, what, cb, arg);
}

int __wrap_event_add(struct event *ev, const struct timeval *tv)
{
	return fail_now(K_EVENT_ADD) ? -1 : __real_event_add(ev, tv);
}

void *__wrap_malloc(size_t n)
{
	return fail_now(K_MALLOC) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	return fail_now(K_CALLOC) ? NULL : __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now(K_REALLOC) ? NULL : __real_realloc(p, n);
}

/* How each kind really fails, and what attach must then return. event_new
 * fails only when libevent runs out of memory. event_add fails in epoll_ctl
 * (ENOSPC: max_user_watches, ENOMEM) or in an allocation that may leave errno
 * 0, for which the adapter reports -ENOMEM. */
struct fault_mode { int err, want; };
static const struct fault_mode alloc_modes[] = { { ENOMEM, -ENOMEM } };
static const struct fault_mode add_modes[] = { { ENOSPC, -ENOSPC }, { ENOMEM, -ENOMEM },
					       { 0, -ENOMEM } };

static const struct fault_mode *modes_of(enum kind k, size_t *n)
{
	if (k == K_EVENT_ADD) {
		*n = sizeof(add_modes) / sizeof(add_modes[0]);
		return add_modes;
	}
	*n = 1;
	return alloc_modes;
}

static bool fds_same(const char *what, const struct kfdset *before)
{
	char why[192];
	bool same = kutil_fd_changed(before, why, sizeof(why)) < 0;

	cr_expect(same, "%s: %s", what, why);
	return same;
}

/* ------------------------------------------------------------- the loop */

/* One case's base: a fresh one each time. */
struct fx {
	struct event_base *base;
	struct event *tick;
	long ticks;
	bool timed_out;
	struct perfring_session *s;
	struct kcount *k;
	struct perfring_libevent *a;
};

static void fx_init(struct fx *f, struct perfring_session *s, struct kcount *k)
{
	memset(f, 0, sizeof(*f));
	f->s = s;
	f->k = k;
	f->base = event_base_new();
	cr_assert_not_null(f->base);
}

/* Nothing may be left on the base (else dispatch would never return), and
 * then dispatch returns 1: no events pending or active. */
static bool fx_run(struct fx *f, const char *what)
{
	int added = event_base_get_num_events(f->base, EVENT_BASE_COUNT_ADDED);
	int rc;

	cr_expect_eq(added, 0, "%s: %d events left on the base", what, added);
	if (added)
		return false;
	rc = event_base_dispatch(f->base);
	cr_expect_eq(rc, 1, "%s: event_base_dispatch returned %d", what, rc);
	return rc == 1;
}

static void fx_fini(struct fx *f)
{
	event_base_free(f->base);
}

/* ------------------------------------------------------------ the cases */

static const struct perfring_loop_opts lopts = { .sz = sizeof(lopts) };

static struct perfring_session *started(struct kcount *k)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .wakeup_watermark = 256,
				   .flush_ms = 10 };
	struct perfring_session *s = NULL;

	KCHECK(kutil_getpid_session(&o, getpid(), k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	return s;
}

/* Empties the rings, so an attach parses nothing and every run of it makes
 * the same calls. */
static void drain(struct fx *f)
{
	cr_assert_geq(perfring_session_parse_all(f->s), 0);
	memset(f->k, 0, sizeof(*f->k));
}

static int attach_armed(struct fx *f, enum kind kind, long nth, int err)
{
	int rc;

	memset(&F, 0, sizeof(F));
	F.kind = kind;
	F.nth = nth;
	F.err = err;
	F.armed = true;
	rc = perfring_libevent_attach(f->s, f->base, &lopts, &f->a);
	F.armed = false;
	return rc;
}

/* Detaches once every sample has arrived, or on the timeout. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fx *f = arg;

	f->timed_out = ++f->ticks > TIMEOUT_TICKS;
	if (f->k->n < SAMPLES && !f->timed_out)
		return;
	perfring_libevent_detach(f->a);
	f->a = NULL;
	event_del(f->tick);
}

/* Attaches without faults and checks SAMPLES getpid samples arrive. */
static bool delivers(struct fx *f, const char *what)
{
	const struct timeval ms = { 0, 1000 };
	bool ok;
	int rc;

	drain(f);
	rc = perfring_libevent_attach(f->s, f->base, &lopts, &f->a);
	cr_expect_eq(rc, 0, "%s: attach failed again: %d (%s)", what, rc,
		     perfring_session_last_error(f->s));
	if (rc)
		return false;
	f->tick = event_new(f->base, -1, EV_PERSIST, on_tick, f);
	cr_assert_not_null(f->tick);
	cr_assert_eq(event_add(f->tick, &ms), 0);
	kutil_getpid_n(SAMPLES);
	/* Returns once the tick has detached and removed itself. */
	rc = event_base_dispatch(f->base);
	cr_expect_eq(rc, 1, "%s: event_base_dispatch returned %d", what, rc);
	ok = rc == 1;
	event_free(f->tick);
	cr_expect(!f->timed_out, "%s: timed out", what);
	cr_expect_eq(f->k->n, SAMPLES, "%s: %llu of %d getpid samples", what,
		     (unsigned long long)f->k->n, SAMPLES);
	return ok && !f->timed_out && f->k->n == SAMPLES;
}

static bool check_failure(struct fx *f, int rc, int want, const char *what)
{
	cr_expect_eq(rc, want, "%s: attach returned %d (%s), want %d", what, rc,
		     perfring_strerror(rc), want);
	cr_expect_null(f->a, "%s: a failed attach must leave *out NULL", what);
	return rc == want && !f->a;
}

struct tally { long cases, bad; };

static void one_case(struct perfring_session *s, struct kcount *k, enum kind kind, long nth,
		     const struct fault_mode *m, struct tally *t)
{
	struct kfdset outside, before; /* without and with the base's own fds */
	struct fx f;
	char what[96];
	bool ok, leak;
	int rc;

	snprintf(what, sizeof(what), "%s #%ld failing with errno %d", kind_name[kind], nth,
		 m->err);
	cr_assert_eq(kutil_fd_snapshot(&outside), 0);
	fx_init(&f, s, k);
	drain(&f);
	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	rc = attach_armed(&f, kind, nth, m->err);
	cr_assert(F.fired, "%s: the call was never reached", what);
	ok = check_failure(&f, rc, m->want, what);
	ok = fx_run(&f, what) && ok;
	ok = fds_same(what, &before) && ok;
	leak = kutil_leak_found();
	cr_expect(!leak, "%s: LeakSanitizer found a leak (its report is above)", what);
	ok = ok && !leak && delivers(&f, what);
	fx_fini(&f);
	ok = fds_same(what, &outside) && ok;
	t->cases++;
	t->bad += !ok;
}

/* The calls a fault-free attach makes; checks that it works. */
static void count_calls(struct perfring_session *s, struct kcount *k, long seen[K__COUNT])
{
	struct fx f;
	int rc;

	fx_init(&f, s, k);
	drain(&f);
	rc = attach_armed(&f, K__COUNT, 0, 0);
	cr_assert_eq(rc, 0, "fault-free attach: %d (%s)", rc, perfring_session_last_error(s));
	memcpy(seen, F.seen, sizeof(F.seen));
	perfring_libevent_detach(f.a);
	f.a = NULL;
	cr_assert(fx_run(&f, "fault-free attach"));
	cr_assert(delivers(&f, "fault-free attach"));
	fx_fini(&f);
}

/* Runs every case of one kind; an allocator may be unused (optional). */
static void run_kind(enum kind kind, bool optional)
{
	struct kcount k = { 0 };
	struct perfring_session *s = started(&k);
	const struct fault_mode *modes;
	long seen[K__COUNT], n;
	struct tally t = { 0 };
	size_t i, nmodes;

	count_calls(s, &k, seen);
	cr_assert(optional || seen[kind] > 0, "attach makes no %s call", kind_name[kind]);
	modes = modes_of(kind, &nmodes);
	for (n = 1; n <= seen[kind]; n++)
		for (i = 0; i < nmodes; i++)
			one_case(s, &k, kind, n, &modes[i], &t);
	perfring_session_free(s);
	fprintf(stderr, "# fault injection libevent attach %s: %ld calls reached, %ld cases, "
		"%ld bad; leak check: %s\n", kind_name[kind], seen[kind], t.cases, t.bad,
		kutil_leak_check_on() ? "LeakSanitizer" : "off (no sanitizers)");
	cr_assert_eq(t.cases, seen[kind] * (long)nmodes);
	cr_assert_eq(t.bad, 0, "%ld of %ld %s cases misbehaved (listed above)", t.bad, t.cases,
		     kind_name[kind]);
	cr_assert(!kutil_leak_found(), "LeakSanitizer found a leak after perfring_session_free");
}

/* ------------------------------------------------------------- the tests */

TestSuite(event_faults, .timeout = 300);

/* The attach's shape: per ring an EV_READ event and a continuation timer
 * made, the flush timer made; each ring's event and the flush timer added. */
Test(event_faults, calls_reached)
{
	struct kcount k = { 0 };
	struct perfring_session *s = started(&k);
	long seen[K__COUNT], ncpu = kutil_ncpu_online();
	enum kind c;

	count_calls(s, &k, seen);
	perfring_session_free(s);
	for (c = 0; c < K__COUNT; c++)
		fprintf(stderr, "# calls reached by libevent attach: %s %ld\n", kind_name[c],
			seen[c]);
	cr_expect_eq(seen[K_EVENT_NEW], 2 * ncpu + 1);
	cr_expect_eq(seen[K_EVENT_ADD], ncpu + 1);
	cr_expect_gt(seen[K_CALLOC], 0);
}

Test(event_faults, event_new) { run_kind(K_EVENT_NEW, false); }
Test(event_faults, event_add) { run_kind(K_EVENT_ADD, false); }
/* Every allocator call inside attach, the adapter's and the core's. */
Test(event_faults, allocators)
{
	run_kind(K_MALLOC, true);
	run_kind(K_CALLOC, false);
	run_kind(K_REALLOC, true);
}
