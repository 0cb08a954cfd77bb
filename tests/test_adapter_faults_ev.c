/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libev_attach(). libev's watcher functions
 * (ev_io_start, ev_idle_start, ev_timer_start) return void and cannot fail:
 * libev aborts the process itself when it cannot grow its arrays. What can
 * fail in this attach is allocation: the adapter's own calloc calls and the
 * core's (perfring_reactor_new). The adapter's source is compiled into this
 * program, the core is linked statically, and the linker wraps the
 * allocators (--wrap, tests/adapter-faults.mk); the wraps count and fail calls
 * only inside attach. A fault-free attach (wakeup mode, every online CPU, a
 * flush timer) first counts the calls; then, for every kind and every N up to
 * that count, an attach is made with the Nth call of that kind failing. Every
 * case must return -ENOMEM with *out NULL, leave no active watcher (ev_run()
 * returns), leave the fds as they were, leak nothing (LeakSanitizer, in a
 * sanitizer build) and let the same session attach again and deliver 25
 * getpid samples. The case counts go to stderr, i.e. the .log
 * ("# fault injection ..."): Criterion shows cr_log_info only with --verbose.
 */
#include "kutil.h"

#include <perfring/perfring-ev.h>

#include <ev.h>

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

enum kind { K_MALLOC, K_CALLOC, K_REALLOC, K__COUNT };
static const char *const kind_name[K__COUNT] = { "malloc", "calloc", "realloc" };

/* Counts (and fails) calls only while armed, i.e. inside one attach. */
static struct {
	bool armed, fired;
	enum kind kind;   /* K__COUNT: count only */
	long nth;         /* 1-based */
	long seen[K__COUNT];
} F;

static bool fail_now(enum kind k)
{
	if (!F.armed || ++F.seen[k] != F.nth || k != F.kind || F.fired)
		return false;
	F.fired = true;
	errno = ENOMEM;
	return true;
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__wrap_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

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

static bool fds_same(const char *what, const struct kfdset *before)
{
	char why[192];
	bool same = kutil_fd_changed(before, why, sizeof(why)) < 0;

	cr_expect(same, "%s: %s", what, why);
	return same;
}

/* ------------------------------------------------------------- the loop */

/* One case's loop: a fresh one each time. */
struct fx {
	struct ev_loop *loop;
	ev_timer tick;
	long ticks;
	bool timed_out;
	struct perfring_session *s;
	struct kcount *k;
	struct perfring_libev *a;
};

static void fx_init(struct fx *f, struct perfring_session *s, struct kcount *k)
{
	memset(f, 0, sizeof(*f));
	f->s = s;
	f->k = k;
	f->loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(f->loop);
}

/* No watcher may be left active (else ev_run would never return): a
 * non-blocking pass reports none, and then ev_run returns at once. */
static bool fx_run(struct fx *f, const char *what)
{
	int active = ev_run(f->loop, EVRUN_NOWAIT);

	cr_expect_eq(active, 0, "%s: %d watchers left active", what, active);
	if (active)
		return false;
	active = ev_run(f->loop, 0);
	cr_expect_eq(active, 0, "%s: ev_run returned %d", what, active);
	return active == 0;
}

static void fx_fini(struct fx *f)
{
	ev_loop_destroy(f->loop);
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

/* Empties the rings, so every attach starts from the same state. */
static void drain(struct fx *f)
{
	cr_assert_geq(perfring_session_parse_all(f->s), 0);
	memset(f->k, 0, sizeof(*f->k));
}

static int attach_armed(struct fx *f, enum kind kind, long nth)
{
	int rc;

	memset(&F, 0, sizeof(F));
	F.kind = kind;
	F.nth = nth;
	F.armed = true;
	rc = perfring_libev_attach(f->s, f->loop, &lopts, &f->a);
	F.armed = false;
	return rc;
}

/* Detaches once every sample has arrived, or on the timeout. */
static void on_tick(EV_P_ ev_timer *w, int revents)
{
	struct fx *f = w->data;

	f->timed_out = ++f->ticks > TIMEOUT_TICKS;
	if (f->k->n < SAMPLES && !f->timed_out)
		return;
	perfring_libev_detach(f->a);
	f->a = NULL;
	ev_timer_stop(EV_A_ w);
}

/* Attaches without faults and checks SAMPLES getpid samples arrive. */
static bool delivers(struct fx *f, const char *what)
{
	int rc;

	drain(f);
	rc = perfring_libev_attach(f->s, f->loop, &lopts, &f->a);
	cr_expect_eq(rc, 0, "%s: attach failed again: %d (%s)", what, rc,
		     perfring_session_last_error(f->s));
	if (rc)
		return false;
	ev_timer_init(&f->tick, on_tick, 0.001, 0.001);
	f->tick.data = f;
	ev_timer_start(f->loop, &f->tick);
	kutil_getpid_n(SAMPLES);
	/* Returns once the tick has detached and stopped itself. */
	rc = ev_run(f->loop, 0);
	cr_expect_eq(rc, 0, "%s: ev_run returned %d", what, rc);
	cr_expect(!f->timed_out, "%s: timed out", what);
	cr_expect_eq(f->k->n, SAMPLES, "%s: %llu of %d getpid samples", what,
		     (unsigned long long)f->k->n, SAMPLES);
	return rc == 0 && !f->timed_out && f->k->n == SAMPLES;
}

static bool check_failure(struct fx *f, int rc, const char *what)
{
	cr_expect_eq(rc, -ENOMEM, "%s: attach returned %d (%s), want -ENOMEM", what, rc,
		     perfring_strerror(rc));
	cr_expect_null(f->a, "%s: a failed attach must leave *out NULL", what);
	return rc == -ENOMEM && !f->a;
}

struct tally { long cases, bad; };

static void one_case(struct perfring_session *s, struct kcount *k, enum kind kind, long nth,
		     struct tally *t)
{
	struct kfdset outside, before; /* without and with the loop's own fds */
	struct fx f;
	char what[96];
	bool ok, leak;
	int rc;

	snprintf(what, sizeof(what), "%s #%ld failing", kind_name[kind], nth);
	cr_assert_eq(kutil_fd_snapshot(&outside), 0);
	fx_init(&f, s, k);
	drain(&f);
	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	rc = attach_armed(&f, kind, nth);
	cr_assert(F.fired, "%s: the call was never reached", what);
	ok = check_failure(&f, rc, what);
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
	rc = attach_armed(&f, K__COUNT, 0);
	cr_assert_eq(rc, 0, "fault-free attach: %d (%s)", rc, perfring_session_last_error(s));
	memcpy(seen, F.seen, sizeof(F.seen));
	perfring_libev_detach(f.a);
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
	long seen[K__COUNT], n;
	struct tally t = { 0 };

	count_calls(s, &k, seen);
	cr_assert(optional || seen[kind] > 0, "attach makes no %s call", kind_name[kind]);
	for (n = 1; n <= seen[kind]; n++)
		one_case(s, &k, kind, n, &t);
	perfring_session_free(s);
	fprintf(stderr, "# fault injection libev attach %s: %ld calls reached, %ld cases, "
		"%ld bad; leak check: %s\n", kind_name[kind], seen[kind], t.cases, t.bad,
		kutil_leak_check_on() ? "LeakSanitizer" : "off (no sanitizers)");
	cr_assert_eq(t.cases, seen[kind]);
	cr_assert_eq(t.bad, 0, "%ld of %ld %s cases misbehaved (listed above)", t.bad, t.cases,
		     kind_name[kind]);
	cr_assert(!kutil_leak_found(), "LeakSanitizer found a leak after perfring_session_free");
}

/* ------------------------------------------------------------- the tests */

TestSuite(ev_faults, .timeout = 300);

/* The attach's shape: the adapter's state and its ev_io array, and the
 * core's reactor; no libev call in it can fail. */
Test(ev_faults, calls_reached)
{
	struct kcount k = { 0 };
	struct perfring_session *s = started(&k);
	long seen[K__COUNT];
	enum kind c;

	count_calls(s, &k, seen);
	perfring_session_free(s);
	for (c = 0; c < K__COUNT; c++)
		fprintf(stderr, "# calls reached by libev attach: %s %ld\n", kind_name[c],
			seen[c]);
	cr_expect_geq(seen[K_CALLOC], 2, "the adapter's own two calloc calls");
}

/* Every allocator call inside attach, the adapter's and the core's. */
Test(ev_faults, allocators)
{
	run_kind(K_MALLOC, true);
	run_kind(K_CALLOC, false);
	run_kind(K_REALLOC, true);
}
