/* libperfring-event on a real event_base with real perf rings. */
#include <criterion/criterion.h>
#include <perfring/perfring-event.h>

#include <event2/event.h>

#include "kutil.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAFETY_MS 10000

struct tctx {
	struct kcount k;
	struct event_base *base;
	struct perfring_libevent *a;
	uint64_t want;          /* when k.n reaches it: --*left, loopbreak at 0 */
	int *left;
	uint64_t detach_at;     /* detach (twice) at this count; 0 = never */
	uint64_t sleep_at;      /* sleep 20 ms at this count; 0 = never */
	bool detached;
	uint64_t after_detach;  /* callbacks after the detach */
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int count_cb(const struct perfring_sample *smp, void *ctx)
{
	struct tctx *t = ctx;

	t->after_detach += t->detached;
	kutil_count_cb(smp, &t->k);
	if (t->k.n == t->detach_at) {
		perfring_libevent_detach(t->a);
		perfring_libevent_detach(t->a);
		t->detached = true;
	}
	if (t->k.n == t->sleep_at)
		sleep_ms(20);
	if (t->want && t->k.n == t->want && --*t->left == 0)
		event_base_loopbreak(t->base);
	return 0;
}

/* A started getpid session filtered on this process, counting into t. */
static struct perfring_session *getpid_session(struct perfring_opts *o, pid_t filter,
					       struct tctx *t)
{
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err = kutil_getpid_session(o, filter, &t->k, &s, &ev);

	if (!err)
		err = perfring_event_set_callback(ev, count_cb, t);
	if (!err)
		err = perfring_session_start(s);
	KCHECK(err, s);
	return s;
}

struct deadline {
	struct event_base *base;
	bool hit;
};

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct deadline *d = arg;

	d->hit = true;
	event_base_loopbreak(d->base);
}

static struct event *deadline_new(struct deadline *d, struct event_base *base, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event *ev = evtimer_new(base, on_deadline, d);

	d->base = base;
	d->hit = false;
	cr_assert_not_null(ev);
	cr_assert_eq(evtimer_add(ev, &tv), 0);
	return ev;
}

/* Runs base until a callback breaks it or ms pass; true when time ran out. */
static bool run_for(struct event_base *base, int ms)
{
	struct deadline d;
	struct event *ev = deadline_new(&d, base, ms);

	cr_assert_geq(event_base_dispatch(base), 0);
	event_free(ev);
	return d.hit;
}

/* Runs t's base until t has seen `want` samples (some may have come already,
 * during attach). */
static void run_until(struct tctx *t, uint64_t want)
{
	int left = 1;

	if (t->k.n < want) {
		t->want = want;
		t->left = &left;
		cr_assert_not(run_for(t->base, SAFETY_MS), "%lu of %lu samples after %d ms",
			      (unsigned long)t->k.n, (unsigned long)want, SAFETY_MS);
		t->want = 0;
	}
	cr_assert_eq(t->k.n, want, "%lu samples, want %lu", (unsigned long)t->k.n, (unsigned long)want);
}

static int added(struct event_base *base)
{
	return event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
}

static size_t nfds(const struct perfring_session *s)
{
	const struct perfring_cpu_fd *fds;

	return perfring_session_fds(s, &fds);
}

static struct perfring_cpu_stats sum_stats(const struct perfring_session *s)
{
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st, sum = { 0 };
	size_t i, n = perfring_session_fds(s, &fds);

	for (i = 0; i < n; i++) {
		cr_assert_eq(perfring_session_cpu_stats(s, fds[i].cpu, &st), 0);
		sum.records += st.records;
		sum.bytes += st.bytes;
		sum.lost += st.lost;
		sum.wakeups += st.wakeups;
		sum.flushes += st.flushes;
	}
	return sum;
}

static void finish(struct tctx *t, struct perfring_session *s)
{
	perfring_libevent_detach(t->a);
	t->a = NULL;
	cr_assert_eq(added(t->base), 0, "detach left events on the base");
	event_base_free(t->base);
	perfring_session_free(s);
}

static void attach(struct tctx *t, struct perfring_session *s, const struct perfring_loop_opts *lo)
{
	if (!t->base)
		t->base = event_base_new();
	cr_assert_not_null(t->base);
	cr_assert_eq(perfring_libevent_attach(s, t->base, lo, &t->a), 0, "%s",
		     perfring_session_last_error(s));
	cr_assert_not_null(t->a);
}

Test(adapter_event, exact_delivery_then_flush)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_cpu_stats st1, st2;
	struct tctx t = { 0 };
	struct perfring_session *s;

	/* One ring, so the 10 extra records stay below its next watermark. */
	cr_assert_eq(kutil_pin(0), 0);
	s = getpid_session(&o, getpid(), &t);
	attach(&t, s, NULL);
	cr_assert_eq(added(t.base), (int)nfds(s) + 1, "one event per ring and a flush timer");
	kutil_getpid_n(10000);
	run_until(&t, 10000);
	st1 = sum_stats(s);
	cr_assert_eq(st1.lost, 0);
	cr_assert_geq(st1.wakeups, 1, "the 10,000 came without a readiness");
	cr_assert_leq(st1.wakeups, st1.bytes / 4096 + 2 + st1.flushes);

	kutil_getpid_n(10);
	run_until(&t, 10010);
	st2 = sum_stats(s);
	cr_assert_eq(st2.wakeups, st1.wakeups, "10 records below the watermark woke the loop");
	cr_assert_gt(st2.flushes, st1.flushes, "the flush timer did not drain");
	cr_assert_leq(st2.wakeups, st2.bytes / 4096 + 2 + st2.flushes);
	/* Logged only now: Criterion's logging calls getpid(). */
	cr_log_info("10000 records: %lu bytes, %lu wakeups, %lu flushes; +10: %lu flushes",
		    (unsigned long)st1.bytes, (unsigned long)st1.wakeups,
		    (unsigned long)st1.flushes, (unsigned long)st2.flushes);
	finish(&t, s);
}

Test(adapter_event, flush_disabled_readiness_only)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	struct tctx t = { 0 };
	struct perfring_session *s;

	cr_assert_eq(kutil_pin(0), 0);
	s = getpid_session(&o, getpid(), &t);
	attach(&t, s, &lo);
	cr_assert_eq(added(t.base), (int)nfds(s), "a flush timer with flushing off");
	kutil_getpid_n(10000);
	run_until(&t, 10000);
	/* The only drain that is not a readiness is the one at attach. */
	cr_assert_eq(sum_stats(s).flushes, nfds(s));
	cr_assert_geq(sum_stats(s).wakeups, 1);

	kutil_getpid_n(10);
	cr_assert(run_for(t.base, 300));
	cr_assert_eq(t.k.n, 10000, "records below the watermark left the ring without a flush");
	perfring_libevent_detach(t.a);
	t.a = NULL;
	cr_assert_eq(perfring_session_parse_all(s), 10);
	cr_assert_eq(t.k.n, 10010);
	finish(&t, s);
}

Test(adapter_event, records_pending_at_attach)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct tctx t = { 0 };
	struct perfring_session *s;

	/* Registering the fd consumes the pending readiness; only the drain at
	 * attach can deliver these. */
	cr_assert_eq(kutil_pin(0), 0);
	s = getpid_session(&o, getpid(), &t);
	kutil_getpid_n(10000);
	attach(&t, s, NULL);
	run_until(&t, 10000);
	cr_assert_eq(sum_stats(s).lost, 0);
	finish(&t, s);
}

struct ticker {
	struct tctx *t;
	uint64_t ticks_during;      /* ticks after the sleep, records still draining */
	uint64_t first_after_sleep; /* records delivered at the first of those */
};

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct ticker *tk = arg;
	uint64_t n = tk->t->k.n;

	/* The sleep happens inside the callback of record sleep_at. */
	if (n < tk->t->sleep_at || n >= 10000)
		return;
	if (!tk->ticks_during++)
		tk->first_after_sleep = n;
}

Test(adapter_event, budget_lets_timers_run)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_events = 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 16 };
	struct timeval ms1 = { 0, 1000 };
	struct tctx t = { .sleep_at = 100 };
	struct ticker tk = { .t = &t };
	struct perfring_session *s;
	struct event *tick;

	s = getpid_session(&o, getpid(), &t);
	attach(&t, s, &lo);
	tick = event_new(t.base, -1, EV_PERSIST, on_tick, &tk);
	cr_assert_not_null(tick);
	cr_assert_eq(event_add(tick, &ms1), 0);
	kutil_getpid_n(10000);
	run_until(&t, 10000);
	cr_assert_eq(sum_stats(s).lost, 0);
	cr_log_info("budget: %lu ticks during the drain, first at record %lu",
		    (unsigned long)tk.ticks_during, (unsigned long)tk.first_after_sleep);
	cr_assert_geq(tk.ticks_during, 1, "a 1 ms timer never ran during the drain");
	/* The tick was due when the 20 ms sleep ended: at most the rest of that
	 * batch and one batch of each other source (continuation, flush) precede
	 * it. */
	cr_assert_lt(tk.first_after_sleep, t.sleep_at + 4 * lo.budget,
		     "tick waited %lu records past the sleep",
		     (unsigned long)(tk.first_after_sleep - t.sleep_at));
	event_free(tick);
	finish(&t, s);
}

/* Detaches (twice) from inside the sample callback at record `at`, checks
 * that nothing more arrives, then attaches again and gets the rest. */
static void detach_inside(struct perfring_opts *o, const struct perfring_loop_opts *lo, uint64_t at)
{
	struct tctx t = { .detach_at = at };
	struct perfring_session *s;

	cr_assert_eq(kutil_pin(0), 0);
	s = getpid_session(o, getpid(), &t);
	attach(&t, s, lo);
	kutil_getpid_n(1000);
	cr_assert(run_for(t.base, 150));
	cr_assert(t.detached);
	cr_assert_eq(t.k.n, at);
	cr_assert_eq(t.after_detach, 0, "callbacks after detach");
	cr_assert_eq(added(t.base), 0, "detach left events on the base");

	t.detached = false;
	t.detach_at = 0;
	attach(&t, s, lo);
	run_until(&t, 1000);
	cr_assert_eq(sum_stats(s).lost, 0);
	finish(&t, s);
}

Test(adapter_event, detach_inside_readiness)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };

	detach_inside(&o, NULL, 5);
}

Test(adapter_event, detach_inside_flush)
{
	struct perfring_opts o = { .sz = sizeof(o) }; /* default mode: only the timer drains */

	detach_inside(&o, NULL, 5);
}

Test(adapter_event, detach_inside_continuation)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 16 };

	detach_inside(&o, &lo, 100);
}

static void detach_timer(evutil_socket_t fd, short what, void *arg)
{
	struct tctx *t = arg;

	if (t->k.n == 0)
		return;
	perfring_libevent_detach(t->a);
	t->a = NULL;
	t->detached = true;
	event_base_loopbreak(t->base);
}

Test(adapter_event, detach_from_timer_mid_drain_then_free_base)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_events = 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 16 };
	struct timeval ms1 = { 0, 1000 };
	struct tctx t = { .sleep_at = 50 };
	struct perfring_session *s;
	struct event *tick;
	uint64_t seen;

	s = getpid_session(&o, getpid(), &t);
	attach(&t, s, &lo);
	tick = event_new(t.base, -1, EV_PERSIST, detach_timer, &t);
	cr_assert_eq(event_add(tick, &ms1), 0);
	kutil_getpid_n(10000);
	cr_assert_not(run_for(t.base, SAFETY_MS));
	cr_assert(t.detached);
	seen = t.k.n;
	cr_assert(seen > 0 && seen < 10000, "detached after %lu", (unsigned long)seen);
	event_free(tick);
	cr_assert_eq(added(t.base), 0, "detach left events on the base");
	event_base_free(t.base);
	/* Nothing was stranded or lost: the rest is still in the rings. */
	cr_assert_eq(perfring_session_parse_all(s), (int)(10000 - seen));
	cr_assert_eq(sum_stats(s).lost, 0);
	perfring_session_free(s);
}

Test(adapter_event, detach_without_running_loop)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct tctx t = { 0 };
	struct perfring_session *s = getpid_session(&o, getpid(), &t);

	attach(&t, s, NULL);
	kutil_getpid_n(100);
	perfring_libevent_detach(t.a);
	perfring_libevent_detach(NULL);
	cr_assert_eq(added(t.base), 0);
	event_base_free(t.base);
	cr_assert_eq(perfring_session_parse_all(s), 100);
	perfring_session_free(s);
}

struct hup {
	struct tctx *t;
	int errs[64], last_err, total;
	size_t slots;
	struct event *later;
	bool done;
};

static void hup_detach(evutil_socket_t fd, short what, void *arg)
{
	struct hup *h = arg;

	perfring_libevent_detach(h->t->a);
	h->t->a = NULL;
	h->done = true;
}

static void hup_error(int cpu, int err, void *ctx)
{
	struct hup *h = ctx;
	struct timeval ms50 = { 0, 50000 };

	if (cpu >= 0 && cpu < 64)
		h->errs[cpu]++;
	h->last_err = err;
	/* Let the loop run on a while: a watched HUP fd would spin it. */
	if ((size_t)++h->total == h->slots)
		cr_assert_eq(evtimer_add(h->later, &ms50), 0);
}

/* getppid, not getpid: valgrind calls getpid in a traced child as it exits. */
static int child_getppid(void *arg)
{
	for (int i = 0; i < 200; i++)
		syscall(SYS_getppid);
	return 0;
}

/* A started session on task `pid` (every CPU) counting its getppid calls. */
static struct perfring_session *getppid_session(pid_t pid, struct tctx *t)
{
	struct perfring_opts o = { .sz = sizeof(o), .pid = pid };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err = perfring_session_new(&o, &s);

	if (!err)
		err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getppid", &ev);
	if (!err)
		err = perfring_event_set_callback(ev, count_cb, t);
	if (!err)
		err = perfring_session_start(s);
	KCHECK(err, s);
	return s;
}

Test(adapter_event, hup_unwatches_once)
{
	struct tctx t = { 0 };
	struct hup h = { .t = &t };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = 20, .on_error = hup_error,
					 .ctx = &h };
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st;
	struct perfring_session *s;
	struct deadline d;
	struct event *safety;
	struct kchild c;
	int iters = 0;
	size_t i;

	cr_assert_eq(kutil_child_start(&c, child_getppid, NULL), 0);
	s = getppid_session(c.pid, &t);
	attach(&t, s, &lo);
	h.slots = perfring_session_fds(s, &fds);
	h.later = evtimer_new(t.base, hup_detach, &h);
	safety = deadline_new(&d, t.base, SAFETY_MS);
	kutil_child_go(&c);
	while (!h.done && !d.hit && iters < 100000) {
		event_base_loop(t.base, EVLOOP_ONCE);
		iters++;
	}
	event_free(safety);
	event_free(h.later);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_log_info("HUP: %d loop iterations until detach", iters);
	cr_assert_lt(iters, 1000, "the loop spun: %d iterations", iters);
	cr_assert(h.done, "on_error came %d times for %zu CPUs", h.total, h.slots);
	/* What event_base_dispatch() checks before it returns 1, without the risk
	 * of blocking on a fd a buggy detach left behind. */
	cr_assert_eq(event_base_loop(t.base, EVLOOP_NONBLOCK), 1, "events left after detach");
	cr_assert_eq(t.k.n, 200, "%lu samples from the child", (unsigned long)t.k.n);
	cr_assert_eq(h.last_err, -EPIPE);
	for (i = 0; i < h.slots; i++) {
		cr_assert_eq(h.errs[fds[i].cpu], 1, "CPU %d: on_error %d times", fds[i].cpu,
			     h.errs[fds[i].cpu]);
		cr_assert_eq(perfring_session_cpu_stats(s, fds[i].cpu, &st), 0);
		cr_assert_eq(st.hup, 1);
		cr_log_info("HUP: CPU %d: %lu wakeups, %lu samples", fds[i].cpu,
			    (unsigned long)st.wakeups, (unsigned long)st.samples);
		cr_assert_leq(st.wakeups, 4, "CPU %d: %lu readiness calls", fds[i].cpu,
			      (unsigned long)st.wakeups);
	}
	finish(&t, s);
}

Test(adapter_event, cpu_mask)
{
	static const int cpu1[] = { 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = cpu1, .cpu_cnt = 1,
					 .flush_ms = 10 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct tctx t = { 0 };
	struct perfring_session *s;

	if (kutil_ncpu_online() < 2)
		cr_skip_test("needs 2 online CPUs");
	s = getpid_session(&o, getpid(), &t);
	cr_assert_geq(perfring_session_fd_for_cpu(s, 1), 0);
	attach(&t, s, &lo);
	cr_assert_eq(added(t.base), 2, "one ring event and a flush timer");
	cr_assert_eq(kutil_pin(0), 0);
	kutil_getpid_n(300);
	cr_assert_eq(kutil_pin(1), 0);
	kutil_getpid_n(500);
	run_until(&t, 500);
	cr_assert(run_for(t.base, 100)); /* ten more flushes */
	cr_assert_eq(t.k.per_cpu[1], 500);
	cr_assert_eq(t.k.per_cpu[0], 0, "CPU 0 was not attached but delivered");
	perfring_libevent_detach(t.a);
	t.a = NULL;
	cr_assert_eq(perfring_session_parse_all(s), 300);
	cr_assert_eq(t.k.per_cpu[0], 300);
	finish(&t, s);
}

Test(adapter_event, two_sessions_one_base)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct tctx t1 = { .detach_at = 1000 }, t2 = { 0 };
	struct perfring_session *s1, *s2;
	int left = 2;

	s1 = getpid_session(&o, getpid(), &t1);
	s2 = getpid_session(&o, getpid(), &t2);
	attach(&t1, s1, NULL);
	t2.base = t1.base;
	attach(&t2, s2, NULL);
	cr_assert_eq(added(t1.base), (int)(nfds(s1) + nfds(s2)) + 2);
	kutil_getpid_n(1000);
	t1.want = t2.want = 1000;
	t1.left = t2.left = &left;
	cr_assert_not(run_for(t1.base, SAFETY_MS), "%lu and %lu of 1000",
		      (unsigned long)t1.k.n, (unsigned long)t2.k.n);
	cr_assert_eq(t1.k.n, 1000);
	cr_assert_eq(t2.k.n, 1000);
	/* t1 detached itself (twice) in its last callback; t2 is untouched. */
	cr_assert(t1.detached);
	cr_assert_eq(added(t1.base), (int)nfds(s2) + 1);
	perfring_session_free(s1);
	finish(&t2, s2);
}

static int alloc_budget = -1; /* libevent allocations left before failing; -1 = no limit */

static void *fail_malloc(size_t n)
{
	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	return malloc(n);
}

static void *fail_realloc(void *p, size_t n)
{
	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	return realloc(p, n);
}

Test(adapter_event, attach_failure_unwinds)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct tctx t = { 0 };
	struct perfring_session *s;
	int err, k, failures = 0;

	/* Before libevent allocates anything (each test runs in its own process). */
	event_set_mem_functions(fail_malloc, fail_realloc, free);
	s = getpid_session(&o, getpid(), &t);
	t.base = event_base_new();
	cr_assert_not_null(t.base);
	for (k = 0; k < 1000; k++) {
		alloc_budget = k;
		err = perfring_libevent_attach(s, t.base, NULL, &t.a);
		alloc_budget = -1;
		if (!err)
			break;
		cr_assert_eq(err, -ENOMEM, "allocation %d: %d", k, err);
		cr_assert_null(t.a);
		cr_assert_eq(added(t.base), 0, "allocation %d: a failed attach left events", k);
		failures++;
	}
	cr_assert_not_null(t.a);
	/* 2 events per ring and a flush timer, then event_add's own allocations. */
	cr_assert_gt(failures, (int)(2 * nfds(s) + 1), "no event_add failure was injected");
	kutil_getpid_n(100);
	run_until(&t, 100);
	finish(&t, s);
}

Test(adapter_event, bad_arguments)
{
	static const int cpu_none[] = { 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = cpu_none, .cpu_cnt = 1 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_libevent *a = (struct perfring_libevent *)&o;
	struct perfring_session *s = NULL;
	struct event_base *base = event_base_new();
	struct tctx t = { 0 };

	cr_assert_not_null(base);
	cr_assert_eq(perfring_session_new(&o, &s), 0);
	cr_assert_eq(perfring_libevent_attach(s, base, NULL, &a), -EINVAL, "not started");
	cr_assert_null(a);
	perfring_session_free(s);
	s = getpid_session(&o, getpid(), &t);
	cr_assert_eq(perfring_libevent_attach(s, NULL, NULL, &a), -EINVAL);
	cr_assert_eq(perfring_libevent_attach(NULL, base, NULL, &a), -EINVAL);
	cr_assert_eq(perfring_libevent_attach(s, base, NULL, NULL), -EINVAL);
	cr_assert_eq(perfring_libevent_attach(s, base, &lo, &a), -ENOENT);
	cr_assert_null(a);
	cr_assert_eq(added(base), 0);
	event_base_free(base);
	perfring_session_free(s);
}

/* R6: the session freed with the adapter attached. The adapter's flush
 * timer and ring events stay on the base for 300 ms (3 flushes), touching
 * nothing of the session (ASan in the sanitizer tree); detach still frees. */
Test(adapter_event, session_freed_while_attached_cancels_the_adapter)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct tctx t = { 0 };
	struct perfring_session *s;
	uint64_t before;

	s = getpid_session(&o, getpid(), &t);
	attach(&t, s, NULL);
	perfring_session_free(s);
	before = t.k.n;
	cr_assert(run_for(t.base, 300), "the loop ended by itself");
	cr_assert_eq(t.k.n, before, "a callback ran after the session was freed");
	perfring_libevent_detach(t.a);
	cr_assert_eq(added(t.base), 0, "detach left events on the base");
	event_base_free(t.base);
}

/* R2: the child's main thread exits first (its fds report HUP) while its
 * other thread writes for a second: every record arrives, and the end is
 * reported once per CPU, after the process's. */
struct ends { struct event_base *base; int n, want; };

static void end_counted(int cpu, int err, void *ctx)
{
	struct ends *e = ctx;

	if (err == -EPIPE && ++e->n == e->want)
		event_base_loopbreak(e->base);
}

Test(adapter_event, pid_mode_follows_the_process_past_its_main_thread)
{
	static struct kleader l = { 5000, 1000, 0 };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct ends e = { 0 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = end_counted, .ctx = &e };
	struct tctx t = { 0 };
	struct perfring_session *s;
	struct kchild c;

	cr_assert_eq(kutil_leader_start(&c, &l), 0);
	o.pid = c.pid;
	s = getpid_session(&o, l.worker, &t);
	e.want = (int)nfds(s);
	t.base = e.base = event_base_new();
	attach(&t, s, &lo);
	kutil_child_go(&c);
	cr_assert_not(run_for(t.base, SAFETY_MS), "%d of %d ends", e.n, e.want);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(t.k.n, 5000, "%lu of 5000 records", (unsigned long)t.k.n);
	finish(&t, s);
}
