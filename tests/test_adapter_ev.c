/* libperfring-ev on a real libev loop with real perf events. */
#include <criterion/criterion.h>
#include <errno.h>
#include <ev.h>
#include <perfring/perfring-ev.h>
#include <unistd.h>

#include "kutil.h"

#define GUARD_S 10.0 /* every loop run is bounded by this */
#define N 10000

struct totals { uint64_t wakeups, flushes, bytes, samples; };

static struct totals totals(const struct perfring_session *s)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(s, &fds);
	struct perfring_cpu_stats st;
	struct totals t = { 0 };

	for (i = 0; i < n; i++) {
		cr_assert_eq(perfring_session_cpu_stats(s, fds[i].cpu, &st), 0);
		t.wakeups += st.wakeups;
		t.flushes += st.flushes;
		t.bytes += st.bytes;
		t.samples += st.samples;
	}
	return t;
}

static void on_guard(EV_P_ ev_timer *w, int revents)
{
	*(bool *)w->data = true;
	ev_break(EV_A_ EVBREAK_ALL);
}

/* Runs the loop until *count reaches want or `secs` pass; false on timeout. */
static bool run_until(struct ev_loop *loop, const uint64_t *count, uint64_t want, double secs)
{
	bool expired = false;
	ev_timer g;

	ev_timer_init(&g, on_guard, secs, 0);
	g.data = &expired;
	ev_now_update(loop);
	ev_timer_start(loop, &g);
	while (*count < want && !expired)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &g);
	return !expired;
}

/* ev_run until nothing but the (unreferenced) guard is active; false when the
 * guard had to stop it. */
static bool run_to_end(struct ev_loop *loop)
{
	bool expired = false;
	ev_timer g;

	ev_timer_init(&g, on_guard, GUARD_S, 0);
	g.data = &expired;
	ev_now_update(loop);
	ev_timer_start(loop, &g);
	ev_unref(loop);
	ev_run(loop, 0);
	ev_ref(loop);
	ev_timer_stop(loop, &g);
	return !expired;
}

/* Runs the loop until the adapter's attach drain has passed over all `slots`
 * (it runs after libev registered the fds), so later records can only come
 * through readiness or the flush timer. */
/* Until the attach drain has run and the reactor's two catch-up turns (idle
 * callbacks after libev registered the fds) are done. */
static void catch_up(struct ev_loop *loop, const struct perfring_session *s, uint64_t slots)
{
	for (int i = 0; i < 100 && (totals(s).flushes < slots || ev_pending_count(loop) ||
				    i < 3); i++)
		ev_run(loop, EVRUN_NOWAIT);
	cr_assert_geq(totals(s).flushes, slots, "the attach drain never ran");
}

static struct ev_loop *new_loop(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);

	cr_assert_not_null(loop);
	return loop;
}

/* Our pid, asked for once: a getpid() while a session runs is a record. */
static pid_t self(void)
{
	static pid_t pid;

	if (!pid)
		pid = getpid();
	return pid;
}

/* A getpid session filtered on this process, started, counting into k. */
static struct perfring_session *started(struct perfring_opts *o, struct kcount *k,
					struct perfring_event **ev)
{
	struct perfring_session *s = NULL;

	KCHECK(kutil_getpid_session(o, self(), k, &s, ev), s);
	KCHECK(perfring_session_start(s), s);
	return s;
}

Test(ev, exact_delivery_then_flush)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct ev_loop *loop = new_loop();
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;
	struct totals t1, t2;

	cr_assert_eq(kutil_pin(0), 0); /* one ring: its wakeup points are exact */
	s = started(&o, &k, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, NULL, &a), 0);
	catch_up(loop, s, perfring_session_fds(s, NULL));
	kutil_getpid_n(N);
	cr_assert(run_until(loop, &k.n, N, GUARD_S), "only %lu of %d delivered", k.n, N);
	cr_assert_eq(k.n, N);
	t1 = totals(s);
	cr_assert_geq(t1.wakeups, 1, "nothing came through readiness");

	kutil_getpid_n(10); /* 640 B: below the watermark, no wakeup */
	cr_assert(run_until(loop, &k.n, N + 10, GUARD_S), "flush timer: %lu", k.n);
	cr_assert_eq(k.n, N + 10);
	t2 = totals(s);
	cr_assert_eq(t2.wakeups, t1.wakeups, "a wakeup below the watermark");
	cr_assert_gt(t2.flushes, t1.flushes);
	cr_assert_eq(t2.samples, N + 10);
	cr_assert_leq(t2.wakeups, t2.bytes / 4096 + 2 + t2.flushes, "wakeups %lu bytes %lu",
		      t2.wakeups, t2.bytes);
	perfring_libev_detach(a);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

Test(ev, flush_never_readiness_alone)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	struct ev_loop *loop = new_loop();
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;
	uint64_t slots;

	cr_assert_eq(kutil_pin(0), 0);
	s = started(&o, &k, NULL);
	slots = perfring_session_fds(s, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &a), 0);
	catch_up(loop, s, slots);
	cr_assert_eq(k.n, 0);
	kutil_getpid_n(N);
	cr_assert(run_until(loop, &k.n, N, GUARD_S), "only %lu of %d delivered", k.n, N);
	cr_assert_geq(totals(s).wakeups, 1);
	cr_assert_eq(totals(s).flushes, slots, "a flush ran with flushing disabled");

	kutil_getpid_n(10);
	run_until(loop, &k.n, UINT64_MAX, 0.3);
	cr_assert_eq(k.n, N, "records below the watermark left the ring: %lu", k.n);
	cr_assert_eq(totals(s).flushes, slots, "a flush ran with flushing disabled");
	cr_assert_eq(perfring_session_parse_all(s), 10);
	cr_assert_eq(k.n, N + 10);
	perfring_libev_detach(a);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

/* Records written after attach but before the loop first runs: libev
 * registers the fds (consuming their readiness) only then, so they must come
 * from the attach drain, with no timer to fall back on. */
Test(ev, flush_never_records_before_first_run)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	struct ev_loop *loop = new_loop();
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;

	cr_assert_eq(kutil_pin(0), 0);
	s = started(&o, &k, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &a), 0);
	cr_assert_eq(k.n, 0, "attach ran callbacks before returning");
	kutil_getpid_n(N);
	cr_assert(run_until(loop, &k.n, N, GUARD_S), "only %lu of %d delivered", k.n, N);
	cr_assert_eq(k.n, N);
	perfring_libev_detach(a);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

struct ctl {
	struct kcount k;            /* first: kutil_count_cb's ctx */
	uint64_t sleep_at;          /* sleep 3 ms when k.n reaches it (1 ms timer due) */
	uint64_t detach_at;         /* detach (twice) when k.n reaches it */
	struct perfring_libev *a;
	bool detached, looping;
	uint64_t after;             /* callbacks from the loop after detaching */
	uint64_t ticks, ticks_mid;  /* test timer fires; those while records remained */
};

static int ctl_cb(const struct perfring_sample *smp, void *ctx)
{
	struct ctl *c = ctx;

	if (c->detached && c->looping)
		c->after++;
	kutil_count_cb(smp, &c->k);
	if (c->k.n == c->sleep_at)
		usleep(3000);
	if (c->k.n == c->detach_at) {
		perfring_libev_detach(c->a);
		perfring_libev_detach(c->a);
		c->detached = true;
	}
	return 0;
}

static struct perfring_session *ctl_session(struct perfring_opts *o, struct ctl *c)
{
	struct perfring_event *ev;
	struct perfring_session *s = NULL;

	KCHECK(kutil_getpid_session(o, self(), &c->k, &s, &ev), s);
	cr_assert_eq(perfring_event_set_callback(ev, ctl_cb, c), 0);
	KCHECK(perfring_session_start(s), s);
	return s;
}

static void on_tick(EV_P_ ev_timer *w, int revents)
{
	struct ctl *c = w->data;

	c->ticks++;
	c->ticks_mid += c->k.n > 0 && c->k.n < N;
}

Test(ev, budget_lets_timer_run)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_events = 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 16 };
	struct ev_loop *loop = new_loop();
	struct ctl c = { .sleep_at = 1000 };
	struct perfring_session *s;
	ev_timer tick;

	cr_assert_eq(kutil_pin(0), 0);
	s = ctl_session(&o, &c);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &c.a), 0);
	kutil_getpid_n(N); /* queued before the loop runs */
	ev_timer_init(&tick, on_tick, 0.001, 0.001);
	tick.data = &c;
	ev_now_update(loop);
	ev_timer_start(loop, &tick);
	cr_assert(run_until(loop, &c.k.n, N, GUARD_S), "only %lu of %d delivered", c.k.n, N);
	ev_timer_stop(loop, &tick);
	cr_assert_eq(c.k.n, N);
	cr_assert_eq(totals(s).samples, N);
	cr_assert_geq(c.ticks_mid, 1, "the 1 ms timer never fired during the drain (%lu ticks)",
		      c.ticks);
	perfring_libev_detach(c.a);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

/* Detaches from the sample callback at record `at`; with `caught_up`, the
 * records come through readiness, else through the attach drain (or, with a
 * budget, its continuation). */
static void detach_inside(uint32_t budget, uint64_t at, bool caught_up)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = budget };
	struct ev_loop *loop = new_loop();
	struct ctl c = { .detach_at = at, .looping = true };
	struct perfring_session *s;

	cr_assert_eq(kutil_pin(0), 0);
	s = ctl_session(&o, &c);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &c.a), 0);
	if (caught_up)
		catch_up(loop, s, perfring_session_fds(s, NULL));
	kutil_getpid_n(N);
	cr_assert(run_to_end(loop), "ev_run kept running after detach (%lu)", c.k.n);
	cr_assert(c.detached);
	cr_assert_eq(c.k.n, at, "delivered %lu, detached at %lu", c.k.n, at);
	cr_assert_eq(c.after, 0);
	c.looping = false;
	cr_assert_eq(perfring_session_parse_all(s), N - (int)at, "the session lost records");
	cr_assert_eq(c.k.n, N);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

Test(ev, detach_in_attach_drain)
{
	detach_inside(0, 100, false);
}

Test(ev, detach_in_budget_continuation)
{
	detach_inside(16, 500, false);
}

Test(ev, detach_in_readiness)
{
	detach_inside(0, 100, true);
}

Test(ev, loop_destroy_after_detach)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	int fds0 = kutil_fd_count();
	struct kcount k = { 0 };
	struct perfring_session *s = started(&o, &k, NULL);
	struct perfring_libev *a;
	struct ev_loop *loop;

	for (uint64_t round = 1; round <= 3; round++) {
		loop = new_loop();
		cr_assert_eq(perfring_libev_attach(s, loop, NULL, &a), 0);
		kutil_getpid_n(1000);
		cr_assert(run_until(loop, &k.n, round * 1000, GUARD_S), "round %lu: %lu", round, k.n);
		perfring_libev_detach(a);
		ev_loop_destroy(loop);
	}
	cr_assert_eq(k.n, 3000);
	perfring_session_free(s);
	cr_assert_eq(kutil_fd_count(), fds0, "fds leaked");
}

struct hup {
	struct perfring_libev *a;
	struct ev_loop *loop;
	ev_timer later;             /* detaches a while after the last HUP */
	bool detach_now;            /* detach from inside on_error instead */
	size_t want;                /* CPUs to hear from before detaching */
	int calls[64], err[64];
	size_t total;
};

static void hup_detach(EV_P_ ev_timer *w, int revents)
{
	struct hup *h = w->data;

	perfring_libev_detach(h->a);
}

static void hup_on_error(int cpu, int err, void *ctx)
{
	struct hup *h = ctx;

	cr_assert(cpu >= 0 && cpu < 64);
	h->calls[cpu]++;
	h->err[cpu] = err;
	if (++h->total < h->want)
		return;
	if (h->detach_now) {
		perfring_libev_detach(h->a);
		return;
	}
	/* let the loop go on with the HUP fds: a watcher left on one spins */
	ev_timer_init(&h->later, hup_detach, 0.2, 0);
	h->later.data = h;
	ev_timer_start(h->loop, &h->later);
}

static int child_getpid(void *arg)
{
	kutil_getpid_n(1000);
	return 0;
}

static void hup_run(bool detach_now)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = hup_on_error };
	const struct perfring_cpu_fd *fds;
	struct ev_loop *loop = new_loop();
	struct perfring_session *s = NULL;
	struct hup h = { .loop = loop, .detach_now = detach_now };
	struct kcount k = { 0 };
	struct kchild c;
	size_t i, n;
	int err;

	cr_assert_eq(kutil_child_start(&c, child_getpid, NULL), 0);
	o.pid = c.pid;
	lo.ctx = &h;
	err = kutil_getpid_session(&o, 0, &k, &s, NULL);
	if (!err)
		err = perfring_session_start(s);
	if (err)
		kutil_child_wait(&c); /* never released: it exits at once */
	KCHECK(err, s);
	n = perfring_session_fds(s, &fds);
	h.want = n;
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &h.a), 0);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert(run_to_end(loop), "ev_run did not return after detach (%zu errors)", h.total);
	cr_assert_eq(k.n, 1000, "final drain: %lu", k.n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(h.calls[fds[i].cpu], 1, "cpu %d: on_error x%d", fds[i].cpu,
			     h.calls[fds[i].cpu]);
		cr_assert_eq(h.err[fds[i].cpu], -EPIPE);
	}
	/* 0.2 s at the default 15 ms flush is ~14 passes; a spin is thousands */
	cr_assert_lt(ev_iteration(loop), 100, "spun: %u iterations", ev_iteration(loop));
	cr_assert_leq(totals(s).wakeups, 2 * n, "wakeups %lu", totals(s).wakeups);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

Test(ev, hup_once_no_spin)
{
	hup_run(false);
}

Test(ev, hup_detach_inside_on_error)
{
	hup_run(true);
}

static void count_error(int cpu, int err, void *ctx)
{
	struct hup *h = ctx;

	cr_assert(cpu >= 0 && cpu < 64);
	h->calls[cpu]++;
	h->err[cpu] = err;
	h->total++;
}

/* libev reports an fd it cannot watch with EV_ERROR: here CPU 0's fd is
 * closed while the loop polls it (a dup keeps the event alive and puts it
 * back). The select backend turns EBADF into EV_ERROR; epoll and poll assert.
 * That CPU is unwatched with one on_error; the others go on. */
Test(ev, loop_error_unwatches_one_cpu)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = count_error };
	struct ev_loop *loop = ev_loop_new(EVBACKEND_SELECT);
	struct kcount k = { 0 };
	struct hup h = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;
	int fd0, saved;

	cr_assert_geq(kutil_ncpu_online(), 2, "needs CPUs 0 and 1");
	cr_assert_not_null(loop);
	lo.ctx = &h;
	s = started(&o, &k, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &a), 0);
	fd0 = perfring_session_fd_for_cpu(s, 0);
	saved = dup(fd0);
	cr_assert_geq(saved, 0);
	close(fd0);
	catch_up(loop, s, perfring_session_fds(s, NULL) - 1);
	cr_assert_eq(dup2(saved, fd0), fd0);
	close(saved);
	cr_assert_eq(h.total, 1);
	cr_assert_eq(h.calls[0], 1);
	cr_assert_eq(h.err[0], -EIO);
	cr_assert_eq(kutil_pin(0), 0);
	kutil_getpid_n(100);
	cr_assert_eq(kutil_pin(1), 0);
	kutil_getpid_n(100);
	cr_assert(run_until(loop, &k.per_cpu[1], 100, GUARD_S), "cpu1: %lu", k.per_cpu[1]);
	run_until(loop, &k.n, UINT64_MAX, 0.3); /* three flush periods */
	cr_assert_eq(k.per_cpu[0], 0, "the failed CPU still delivers");
	cr_assert_eq(h.total, 1, "on_error again");
	cr_assert_lt(ev_iteration(loop), 100, "spun: %u iterations", ev_iteration(loop));
	perfring_libev_detach(a);
	cr_assert_eq(perfring_session_parse_all(s), 100);
	cr_assert_eq(k.per_cpu[0], 100);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

Test(ev, mask_cpu1_only)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	static const int cpu1[] = { 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = cpu1, .cpu_cnt = 1 };
	struct ev_loop *loop = new_loop();
	struct perfring_cpu_stats st0;
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;

	cr_assert_geq(kutil_ncpu_online(), 2, "needs CPUs 0 and 1");
	s = started(&o, &k, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &a), 0);
	cr_assert_eq(kutil_pin(0), 0);
	kutil_getpid_n(1000);
	cr_assert_eq(kutil_pin(1), 0);
	kutil_getpid_n(1000);
	cr_assert(run_until(loop, &k.per_cpu[1], 1000, GUARD_S), "cpu1: %lu", k.per_cpu[1]);
	run_until(loop, &k.n, UINT64_MAX, 0.2); /* give CPU 0 every chance to leak in */
	cr_assert_eq(k.per_cpu[1], 1000);
	cr_assert_eq(k.per_cpu[0], 0, "CPU 0 delivered %lu through the loop", k.per_cpu[0]);
	cr_assert_eq(perfring_session_cpu_stats(s, 0, &st0), 0);
	cr_assert_eq(st0.flushes + st0.wakeups, 0, "the adapter touched CPU 0");
	perfring_libev_detach(a);
	cr_assert_eq(perfring_session_parse_all(s), 1000);
	cr_assert_eq(k.per_cpu[0], 1000);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}

Test(ev, two_sessions_one_loop)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct ev_loop *loop = new_loop();
	struct kcount k1 = { 0 }, k2 = { 0 };
	struct perfring_session *s1 = started(&o, &k1, NULL), *s2 = started(&o, &k2, NULL);
	struct perfring_libev *a1, *a2;

	cr_assert_eq(perfring_libev_attach(s1, loop, NULL, &a1), 0);
	cr_assert_eq(perfring_libev_attach(s2, loop, NULL, &a2), 0);
	kutil_getpid_n(2000);
	cr_assert(run_until(loop, &k1.n, 2000, GUARD_S), "session 1: %lu", k1.n);
	cr_assert(run_until(loop, &k2.n, 2000, GUARD_S), "session 2: %lu", k2.n);
	cr_assert_eq(k1.n, 2000, "k1 %lu k2 %lu", k1.n, k2.n);
	cr_assert_eq(k2.n, 2000);
	perfring_libev_detach(a1);
	perfring_libev_detach(a2);
	perfring_libev_detach(NULL);
	cr_assert(run_to_end(loop), "watchers left on the loop");
	perfring_session_free(s1);
	perfring_session_free(s2);
	ev_loop_destroy(loop);
}

Test(ev, attach_failure_leaves_nothing)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	static const int bad_cpu[] = { 1, 99 }, twice[] = { 0, 0 };
	struct perfring_loop_opts bad = { .sz = sizeof(bad), .cpus = bad_cpu, .cpu_cnt = 2 };
	struct perfring_loop_opts dup = { .sz = sizeof(dup), .cpus = twice, .cpu_cnt = 2 };
	struct perfring_loop_opts small = { .sz = 1 };
	struct ev_loop *loop = new_loop();
	struct perfring_session *idle = NULL, *s;
	struct kcount k = { 0 }, k0 = { 0 };
	struct perfring_libev *a = (void *)1;
	int fds0;

	KCHECK(kutil_getpid_session(&o, self(), &k0, &idle, NULL), idle);
	cr_assert_eq(perfring_libev_attach(idle, loop, NULL, &a), -EINVAL, "not started");
	cr_assert_null(a);
	s = started(&o, &k, NULL);
	fds0 = kutil_fd_count();
	kutil_getpid_n(100);
	cr_assert_eq(perfring_libev_attach(s, loop, &bad, &a), -ENOENT);
	cr_assert_null(a);
	cr_assert_eq(perfring_libev_attach(s, loop, &dup, &a), -EINVAL);
	cr_assert_eq(perfring_libev_attach(s, loop, &small, &a), -EINVAL);
	cr_assert_eq(perfring_libev_attach(s, NULL, NULL, &a), -EINVAL);
	a = (void *)1;
	cr_assert_eq(perfring_libev_attach(NULL, loop, NULL, &a), -EINVAL);
	cr_assert_null(a);
	cr_assert_eq(perfring_libev_attach(s, loop, NULL, NULL), -EINVAL);
	cr_assert(run_to_end(loop), "a failed attach left a watcher");
	cr_assert_eq(k.n, 0, "a failed attach delivered records");
	cr_assert_eq(kutil_fd_count(), fds0);
	cr_assert_eq(perfring_session_parse_all(s), 100);
	perfring_session_free(s);
	perfring_session_free(idle);
	ev_loop_destroy(loop);
}

/* R6: the session freed with the adapter attached. The adapter's timer and
 * watchers stay on the loop for 300 ms (3 flushes), touching nothing of the
 * session (ASan in the sanitizer tree); detach still frees the adapter. */
Test(ev, session_freed_while_attached_cancels_the_adapter)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct ev_loop *loop = new_loop();
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;
	uint64_t before;

	s = started(&o, &k, NULL);
	cr_assert_eq(perfring_libev_attach(s, loop, NULL, &a), 0);
	catch_up(loop, s, perfring_session_fds(s, NULL));
	perfring_session_free(s);
	before = k.n;
	cr_assert_not(run_until(loop, &k.n, UINT64_MAX, 0.3), "the guard ended the run");
	cr_assert_eq(k.n, before, "a callback ran after the session was freed");
	perfring_libev_detach(a);
	cr_assert(run_to_end(loop), "a watcher was left on the loop");
	ev_loop_destroy(loop);
}

/* R2: the child's main thread exits first (its fds report HUP) while its
 * other thread writes for a second: every record arrives, and the end is
 * reported once per CPU, after the process's. */
Test(ev, pid_mode_follows_the_process_past_its_main_thread)
{
	static struct kleader l = { 5000, 1000, 0 };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = count_error };
	struct ev_loop *loop = new_loop();
	struct kcount k = { 0 };
	struct hup h = { 0 };
	struct perfring_session *s;
	struct perfring_libev *a;
	uint64_t ends;
	struct kchild c;

	lo.ctx = &h;
	cr_assert_eq(kutil_leader_start(&c, &l), 0);
	o.pid = c.pid;
	KCHECK(kutil_getpid_session(&o, l.worker, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_libev_attach(s, loop, &lo, &a), 0);
	kutil_child_go(&c);
	ends = perfring_session_fds(s, NULL);
	for (int i = 0; i < 500 && (uint64_t)h.total < ends; i++)
		run_until(loop, &k.n, UINT64_MAX, 0.02);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(k.n, 5000, "%lu of 5000 records", (unsigned long)k.n);
	cr_assert_eq((uint64_t)h.total, ends, "the end once per CPU");
	perfring_libev_detach(a);
	perfring_session_free(s);
	ev_loop_destroy(loop);
}
