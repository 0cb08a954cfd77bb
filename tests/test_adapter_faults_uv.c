/* SPDX-License-Identifier: MIT */
/*
 * Fault injection into perfring_libuv_attach(). The adapter's source is
 * compiled into this program and the libuv calls it makes that can fail are
 * wrapped by the linker (--wrap, tests/adapter-faults.mk), as are the
 * allocator calls of the adapter and of the statically linked core. A
 * fault-free attach (wakeup mode, every online CPU, a flush timer) first
 * counts each kind of call; then, for every kind and every N up to that
 * count, an attach is made with the Nth call of that kind failing. Every case
 * must return the injected error with *out NULL, and once uv_run() has
 * returned leave the fds as they were, leak nothing (LeakSanitizer, in a
 * sanitizer build) and let the same session attach again and deliver 25
 * getpid samples. The case counts go to stderr, i.e. the .log
 * ("# fault injection ..."): Criterion shows cr_log_info only with --verbose.
 */
#include "kutil.h"

#include <perfring/perfring-uv.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLES 25
#define TIMEOUT_MS 10000

/* Present only in a sanitizer build; weak so other builds link. */

/* ------------------------------------------------------------ the wraps */

enum kind { K_POLL_INIT, K_POLL_START, K_TIMER_START, K_IDLE_START, K_MALLOC, K_CALLOC,
	    K_REALLOC, K__COUNT };
static const char *const kind_name[K__COUNT] = {
	"uv_poll_init", "uv_poll_start", "uv_timer_start", "uv_idle_start", "malloc", "calloc",
	"realloc",
};
/* What each call returns when it really fails: uv_timer_start and
 * uv_idle_start only fail with UV_EINVAL; the allocators with NULL/ENOMEM. */
static const int kind_err[K__COUNT] = {
	UV_ENOMEM, UV_ENOMEM, UV_EINVAL, UV_EINVAL, -ENOMEM, -ENOMEM, -ENOMEM,
};

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
	return true;
}

int __real_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd);
int __wrap_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd);
int __real_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb);
int __wrap_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb);
int __real_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat);
int __wrap_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat);
int __real_uv_idle_start(uv_idle_t *h, uv_idle_cb cb);
int __wrap_uv_idle_start(uv_idle_t *h, uv_idle_cb cb);
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__wrap_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

int __wrap_uv_poll_init(uv_loop_t *loop, uv_poll_t *h, int fd)
{
	return fail_now(K_POLL_INIT) ? kind_err[K_POLL_INIT] : __real_uv_poll_init(loop, h, fd);
}

int __wrap_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb)
{
	if (fail_now(K_POLL_START))
		return kind_err[K_POLL_START];
	return __real_uv_poll_start(h, events, cb);
}

int __wrap_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	if (fail_now(K_TIMER_START))
		return kind_err[K_TIMER_START];
	return __real_uv_timer_start(h, cb, timeout, repeat);
}

int __wrap_uv_idle_start(uv_idle_t *h, uv_idle_cb cb)
{
	return fail_now(K_IDLE_START) ? kind_err[K_IDLE_START] : __real_uv_idle_start(h, cb);
}

static void *no_memory(void)
{
	errno = ENOMEM;
	return NULL;
}

void *__wrap_malloc(size_t n)
{
	return fail_now(K_MALLOC) ? no_memory() : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	return fail_now(K_CALLOC) ? no_memory() : __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now(K_REALLOC) ? no_memory() : __real_realloc(p, n);
}

static bool fds_same(const char *what, const struct kfdset *before)
{
	char why[192];
	bool same = kutil_fd_changed(before, why, sizeof(why)) < 0;

	cr_expect(same, "%s: %s", what, why);
	return same;
}

/* ------------------------------------------------------------- the loop */

/* One case's loop: a fresh one each time, so uv_loop_close() tells whether
 * anything was left on it. The timeout timer is unreferenced: uv_run()
 * returns once nothing else is active, and the timer only bounds a hang. */
struct fx {
	uv_loop_t loop;
	uv_timer_t timeout, tick;
	bool timed_out;
	struct perfring_session *s;
	struct kcount *k;
	struct perfring_libuv *a;
	int done_calls;
};

static void on_timeout(uv_timer_t *t)
{
	struct fx *f = t->data;

	f->timed_out = true;
	uv_stop(&f->loop);
}

static void fx_init(struct fx *f, struct perfring_session *s, struct kcount *k)
{
	memset(f, 0, sizeof(*f));
	f->s = s;
	f->k = k;
	cr_assert_eq(uv_loop_init(&f->loop), 0);
	uv_timer_init(&f->loop, &f->timeout);
	f->timeout.data = f;
	cr_assert_eq(uv_timer_start(&f->timeout, on_timeout, TIMEOUT_MS, 0), 0);
	uv_unref((uv_handle_t *)&f->timeout);
}

/* Runs the loop until nothing of ours is active; false if it hung. */
static bool fx_run(struct fx *f, const char *what)
{
	int rc = uv_run(&f->loop, UV_RUN_DEFAULT);

	cr_expect(!f->timed_out && rc == 0, "%s: uv_run did not finish (returned %d%s)", what,
		  rc, f->timed_out ? ", timed out" : "");
	return !f->timed_out && rc == 0;
}

static bool fx_fini(struct fx *f, const char *what)
{
	int rc;

	uv_close((uv_handle_t *)&f->timeout, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	rc = uv_loop_close(&f->loop);
	cr_expect_eq(rc, 0, "%s: a handle was left on the loop (%s)", what, uv_strerror(rc));
	return rc == 0;
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

static int attach_armed(struct fx *f, enum kind kind, long nth)
{
	int rc;

	memset(&F, 0, sizeof(F));
	F.kind = kind;
	F.nth = nth;
	F.armed = true;
	rc = perfring_libuv_attach(f->s, &f->loop, &lopts, &f->a);
	F.armed = false;
	return rc;
}

static void on_done(void *ctx)
{
	((struct fx *)ctx)->done_calls++;
}

static void on_tick(uv_timer_t *t)
{
	struct fx *f = t->data;

	if (f->k->n < SAMPLES)
		return;
	perfring_libuv_detach(f->a, on_done, f);
	uv_close((uv_handle_t *)t, NULL);
}

/* Attaches without faults and checks SAMPLES getpid samples arrive. */
static bool delivers(struct fx *f, const char *what)
{
	int rc;

	drain(f);
	rc = perfring_libuv_attach(f->s, &f->loop, &lopts, &f->a);
	cr_expect_eq(rc, 0, "%s: attach failed again: %d (%s)", what, rc,
		     perfring_session_last_error(f->s));
	if (rc)
		return false;
	uv_timer_init(&f->loop, &f->tick);
	f->tick.data = f;
	uv_timer_start(&f->tick, on_tick, 1, 1);
	kutil_getpid_n(SAMPLES);
	if (!fx_run(f, what))
		return false;
	cr_expect_eq(f->k->n, SAMPLES, "%s: %llu of %d getpid samples", what,
		     (unsigned long long)f->k->n, SAMPLES);
	cr_expect_eq(f->done_calls, 1, "%s: detach's done ran %d times", what, f->done_calls);
	return f->k->n == SAMPLES && f->done_calls == 1;
}

static bool check_failure(struct fx *f, int rc, const char *what)
{
	int want = kind_err[F.kind];

	cr_expect_eq(rc, want, "%s: attach returned %d (%s), want %d", what, rc,
		     perfring_strerror(rc), want);
	cr_expect_null(f->a, "%s: a failed attach must leave *out NULL", what);
	return rc == want && !f->a;
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
	ok = fx_fini(&f, what) && ok;
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
	perfring_libuv_detach(f.a, NULL, NULL);
	cr_assert(fx_run(&f, "fault-free attach"));
	cr_assert(delivers(&f, "fault-free attach"));
	cr_assert(fx_fini(&f, "fault-free attach"));
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
	fprintf(stderr, "# fault injection libuv attach %s: %ld calls reached, %ld cases, "
		"%ld bad; leak check: %s\n", kind_name[kind], seen[kind], t.cases, t.bad,
		kutil_leak_check_on() ? "LeakSanitizer" : "off (no sanitizers)");
	cr_assert_eq(t.cases, seen[kind]);
	cr_assert_eq(t.bad, 0, "%ld of %ld %s cases misbehaved (listed above)", t.bad, t.cases,
		     kind_name[kind]);
	cr_assert(!kutil_leak_found(), "LeakSanitizer found a leak after perfring_session_free");
}

/* ------------------------------------------------------------- the tests */

TestSuite(uv_faults, .timeout = 300);

/* The attach's shape: per ring a poll handle initialised and started, then
 * the flush timer and the idle handle (settling flushes) started. */
Test(uv_faults, calls_reached)
{
	struct kcount k = { 0 };
	struct perfring_session *s = started(&k);
	long seen[K__COUNT], ncpu = kutil_ncpu_online();
	enum kind c;

	count_calls(s, &k, seen);
	perfring_session_free(s);
	for (c = 0; c < K__COUNT; c++)
		fprintf(stderr, "# calls reached by libuv attach: %s %ld\n", kind_name[c],
			seen[c]);
	cr_expect_eq(seen[K_POLL_INIT], ncpu);
	cr_expect_eq(seen[K_POLL_START], ncpu);
	cr_expect_eq(seen[K_TIMER_START], 1);
	cr_expect_eq(seen[K_IDLE_START], 1);
	cr_expect_gt(seen[K_CALLOC], 0);
}

Test(uv_faults, uv_poll_init) { run_kind(K_POLL_INIT, false); }
Test(uv_faults, uv_poll_start) { run_kind(K_POLL_START, false); }
Test(uv_faults, uv_timer_start) { run_kind(K_TIMER_START, false); }
Test(uv_faults, uv_idle_start) { run_kind(K_IDLE_START, false); }
/* Every allocator call inside attach, the adapter's and the core's. */
Test(uv_faults, allocators)
{
	run_kind(K_MALLOC, true);
	run_kind(K_CALLOC, false);
	run_kind(K_REALLOC, true);
}
