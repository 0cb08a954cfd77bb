/* SPDX-License-Identifier: MIT */
/* libperfring-uv on real perf fds and a real libuv loop. Links the shared
 * libperfring as a user program does. Every loop is bounded by a timeout
 * timer that fails the test instead of hanging it. */
#include "kutil.h"
#include "fakeloop.h"

#include <perfring/perfring-uv.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define N 10000
#define SAMPLE_BYTES 64     /* a getpid sample with RAW, see DESIGN.md */
#define TIMEOUT_MS 20000
#define HUP_N 1000

/* When a pid-mode child ran its workload (CLOCK_MONOTONIC ns). */
struct window { uint64_t t0, t1; };

/* One test's loop and everything its callbacks look at. */
struct fx {
	uv_loop_t *loop;
	uv_timer_t timeout, tick;   /* tick: 1 ms, drives the test's steps */
	uv_prepare_t iter;          /* counts loop iterations */
	uint64_t iterations, ticks;
	bool timed_out;
	void (*on_tick)(struct fx *f);
	void (*on_prepare)(struct fx *f);  /* just before the loop polls */
	struct perfring_session *s;
	struct perfring_event *ev;
	struct perfring_libuv *a;
	struct kcount k;
	int phase;
	uint64_t mark;              /* a step's saved count, tick or iteration */
	uint64_t detach_at;         /* sample callback detaches at this count */
	uint64_t after_detach;      /* samples delivered after that detach */
	uint64_t spin_ns;           /* sample callback burns this long per record */
	int done_calls, done_other;
	int errors, err_on_cpu[64], last_err;
	size_t nslots;
	const struct window *win;   /* pid-mode child's workload */
	uint64_t in_window;         /* samples timed inside it */
};

static void on_timeout(uv_timer_t *t)
{
	struct fx *f = t->data;

	f->timed_out = true;
	uv_stop(f->loop);
}

static void on_tick(uv_timer_t *t)
{
	struct fx *f = t->data;

	f->ticks++;
	if (f->on_tick)
		f->on_tick(f);
}

static void on_iter(uv_prepare_t *p)
{
	struct fx *f = p->data;

	f->iterations++;
	if (f->on_prepare)
		f->on_prepare(f);
}

/* The helper handles are unreferenced: uv_run() returns as soon as every
 * adapter is detached, which is what the tests wait for. */
static void fx_init(struct fx *f, uv_loop_t *loop)
{
	memset(f, 0, sizeof(*f));
	f->loop = loop;
	cr_assert_eq(uv_loop_init(loop), 0);
	uv_timer_init(loop, &f->timeout);
	uv_timer_init(loop, &f->tick);
	uv_prepare_init(loop, &f->iter);
	f->timeout.data = f->tick.data = f->iter.data = f;
	uv_timer_start(&f->timeout, on_timeout, TIMEOUT_MS, 0);
	uv_timer_start(&f->tick, on_tick, 1, 1);
	uv_prepare_start(&f->iter, on_iter);
	uv_unref((uv_handle_t *)&f->timeout);
	uv_unref((uv_handle_t *)&f->tick);
	uv_unref((uv_handle_t *)&f->iter);
}

static void fx_run(struct fx *f)
{
	uv_run(f->loop, UV_RUN_DEFAULT);
	cr_assert_not(f->timed_out, "the loop timed out (phase %d, %llu samples)", f->phase,
		      (unsigned long long)f->k.n);
}

/* Closes the helpers; the loop must then have nothing left and close. */
static void fx_fini(struct fx *f)
{
	uv_close((uv_handle_t *)&f->timeout, NULL);
	uv_close((uv_handle_t *)&f->tick, NULL);
	uv_close((uv_handle_t *)&f->iter, NULL);
	cr_assert_eq(uv_run(f->loop, UV_RUN_DEFAULT), 0);
	cr_assert_eq(uv_loop_close(f->loop), 0, "a handle was left on the loop");
}

static void on_done(void *ctx)
{
	((struct fx *)ctx)->done_calls++;
}

static void on_done_other(void *ctx)
{
	((struct fx *)ctx)->done_other++;
}

static void detach(struct fx *f)
{
	perfring_libuv_detach(f->a, on_done, f);
}

static void spin(uint64_t ns)
{
	uint64_t end = kutil_now_ns() + ns;

	while (kutil_now_ns() < end)
		;
}

/* t1 is still 0 while the workload runs; a getpid after it was written is
 * seen only after t1 (x86 and the ring's barriers keep the order). */
static bool in_window(const struct window *w, uint64_t t)
{
	uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_ACQUIRE);
	uint64_t t1 = __atomic_load_n(&w->t1, __ATOMIC_ACQUIRE);

	return t0 && t >= t0 && (!t1 || t <= t1);
}

static int count_cb(const struct perfring_sample *smp, void *ctx)
{
	struct fx *f = ctx;

	if (f->detach_at && f->k.n >= f->detach_at)
		f->after_detach++;
	kutil_count_cb(smp, &f->k);
	if (f->win && in_window(f->win, smp->time))
		f->in_window++;
	spin(f->spin_ns);
	if (f->detach_at && f->k.n == f->detach_at) {
		detach(f);
		perfring_libuv_detach(f->a, on_done_other, f);
	}
	return 0;
}

static void on_error(int cpu, int err, void *ctx)
{
	struct fx *f = ctx;

	f->errors++;
	f->last_err = err;
	if (cpu >= 0 && cpu < 64)
		f->err_on_cpu[cpu]++;
}

/* A started session counting getpid samples of this process into f->k. */
static void getpid_session(struct fx *f, struct perfring_opts *o, pid_t pid)
{
	KCHECK(kutil_getpid_session(o, pid, &f->k, &f->s, &f->ev), f->s);
	cr_assert_eq(perfring_event_set_callback(f->ev, count_cb, f), 0);
	KCHECK(perfring_session_start(f->s), f->s);
}

static void attach(struct fx *f, const struct perfring_loop_opts *lo)
{
	int err = perfring_libuv_attach(f->s, f->loop, lo, &f->a);

	cr_assert_eq(err, 0, "attach: %s", perfring_session_last_error(f->s));
	cr_assert_not_null(f->a);
}

#define SUM(s, field) (kutil_stats(s).field)

static void need_cpus(int n)
{
	if (kutil_ncpu_online() < n)
		cr_skip_test("needs %d online CPUs", n);
}

TestSuite(uv, .timeout = 120);

/* ---------------------------------------------------------------- delivery */

static void finish_step(struct fx *f)
{
	if (f->k.n >= N) {
		f->on_tick = NULL;
		detach(f);
	}
}

static void exact_step(struct fx *f)
{
	if (f->phase == 0 && f->k.n >= N && f->iterations >= 4) {
		/* attach's own drains are over: the next drain is the timer's */
		cr_assert_eq(f->k.n, N);
		f->mark = SUM(f->s, wakeups);
		f->phase = 1;
		kutil_getpid_n(10);     /* 640 bytes: below the watermark */
	} else if (f->phase == 1 && f->k.n >= N + 10) {
		cr_assert_eq(SUM(f->s, wakeups), f->mark, "the last 10 came by a wakeup");
		f->phase = 2;
		detach(f);
	}
}

Test(uv, exact_delivery_then_flush_timer)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	uv_loop_t loop;
	struct fx f;
	uint64_t wakeups, flushes, bytes;

	fx_init(&f, &loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	attach(&f, NULL);
	kutil_getpid_n(N);
	cr_assert_eq(f.k.n, 0, "nothing is delivered outside the loop");
	f.on_tick = exact_step;
	fx_run(&f);
	cr_assert_eq(f.phase, 2);
	cr_assert_eq(f.k.n, N + 10);
	cr_assert_eq(f.done_calls, 1);
	wakeups = SUM(f.s, wakeups);
	flushes = SUM(f.s, flushes);
	bytes = SUM(f.s, bytes);
	cr_log_info("%llu bytes, %llu wakeups, %llu flushes", (unsigned long long)bytes,
		    (unsigned long long)wakeups, (unsigned long long)flushes);
	cr_assert_eq(bytes, (uint64_t)(N + 10) * SAMPLE_BYTES);
	cr_assert_leq(wakeups, bytes / 4096 + 2 + flushes);
	cr_assert_eq(SUM(f.s, lost), 0);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* Flush never: records come by readiness only; the 10 below the watermark
 * stay in the ring until a direct parse. */
static void never_step(struct fx *f)
{
	if (f->phase == 0 && f->iterations >= 4) {
		/* attach's own drains are over: from here only wakeups deliver */
		f->mark = SUM(f->s, flushes);
		f->phase = 1;
		kutil_getpid_n(N);
	} else if (f->phase == 1 && f->k.n >= N) {
		cr_assert_eq(f->k.n, N);
		cr_assert_eq(SUM(f->s, flushes), f->mark, "a flush ran with flush never");
		f->phase = 2;
		kutil_getpid_n(10);
		f->mark = f->ticks;
	} else if (f->phase == 2 && f->ticks >= f->mark + 50) {
		f->phase = 3;
		detach(f);
	}
}

Test(uv, flush_never_delivers_by_readiness_only)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	attach(&f, &lo);
	f.on_tick = never_step;
	fx_run(&f);
	cr_assert_eq(f.phase, 3);
	cr_assert_eq(f.k.n, N, "records below the watermark were delivered");
	cr_assert_gt(SUM(f.s, wakeups), 0);
	cr_assert_eq(perfring_session_parse_all(f.s), 10);
	cr_assert_eq(f.k.n, N + 10);
	perfring_session_free(f.s);
	fx_fini(&f);
}

static void gen_once(struct fx *f)
{
	f->on_prepare = NULL;
	kutil_getpid_n(N);
}

/* libuv adds a watcher to epoll only at its next poll, and that consumes the
 * readiness of records written since the last drain: with no flush timer,
 * the adapter must still drain them once the watchers are registered. The
 * worst case writes them in the prepare phase right before that poll. */
static void records_before_first_poll(bool in_prepare)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	attach(&f, &lo);
	if (in_prepare)
		f.on_prepare = gen_once;
	else
		kutil_getpid_n(N);
	f.on_tick = finish_step;
	fx_run(&f);
	cr_assert_eq(f.k.n, N);
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

Test(uv, flush_never_records_written_before_run)
{
	records_before_first_poll(false);
}

Test(uv, flush_never_records_written_just_before_first_poll)
{
	records_before_first_poll(true);
}

/* ------------------------------------------------------------------ budget */

static void budget_step(struct fx *f)
{
	if (f->k.n > 0 && f->k.n < N)
		f->mark++;      /* ticks while the drain is under way */
	if (f->phase == 0 && f->k.n >= N) {
		f->phase = 1;
		detach(f);
	}
}

Test(uv, budget_lets_timers_run_between_batches)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_events = 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 16 };
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	kutil_getpid_n(N);
	/* 2 us a record: the whole drain takes 20 ms, one batch 32 us, so a
	 * 1 ms timer fires during it exactly when the loop runs between batches */
	f.spin_ns = 2000;
	attach(&f, &lo);
	cr_assert_eq(f.k.n, 16, "attach drains one batch");
	f.on_tick = budget_step;
	fx_run(&f);
	cr_log_info("budget 16: %llu ticks during the drain, %llu iterations",
		    (unsigned long long)f.mark, (unsigned long long)f.iterations);
	cr_assert_eq(f.k.n, N);
	cr_assert_gt(f.mark, 0, "the 1 ms timer never ran during the drain");
	cr_assert_geq(f.iterations, N / 16 / 2, "batches were not spread over iterations");
	cr_assert_eq(SUM(f.s, lost), 0);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* ------------------------------------------------------------------ detach */

enum gen { GEN_BEFORE_ATTACH, GEN_BEFORE_RUN, GEN_IN_LOOP };

static void gen_step(struct fx *f)
{
	if (f->phase == 0 && f->iterations >= 4) {
		f->phase = 1;
		kutil_getpid_n(N);
	}
}

/* Detaches from inside the K-th sample callback; no sample follows, the
 * rest stays in the ring, and a new attachment delivers it. */
static void detach_in_callback(enum gen when, uint32_t budget, uint32_t flush_ms)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = budget, .flush_ms = flush_ms };
	const uint64_t K = 100;
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	f.detach_at = K;
	if (when == GEN_BEFORE_ATTACH)
		kutil_getpid_n(N);
	attach(&f, &lo);
	if (when == GEN_BEFORE_RUN)
		kutil_getpid_n(N);
	if (when == GEN_IN_LOOP)
		f.on_tick = gen_step;
	fx_run(&f);
	cr_assert_eq(f.k.n, K);
	cr_assert_eq(f.after_detach, 0, "samples were delivered after detach");
	cr_assert_eq(f.done_calls, 1);
	cr_assert_eq(f.done_other, 0, "a second detach replaced done");

	f.detach_at = 0;
	f.done_calls = 0;
	f.on_tick = finish_step;
	attach(&f, &lo);
	fx_run(&f);
	cr_assert_eq(f.k.n, N, "records were lost across detach and attach");
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

Test(uv, detach_in_sample_callback_during_attach)
{
	detach_in_callback(GEN_BEFORE_ATTACH, 0, 0);
}

Test(uv, detach_in_sample_callback_first_pass)
{
	detach_in_callback(GEN_BEFORE_RUN, 0, 0);
}

Test(uv, detach_in_sample_callback_on_readiness)
{
	detach_in_callback(GEN_IN_LOOP, 0, PERFRING_FLUSH_NEVER);
}

Test(uv, detach_in_sample_callback_budgeted)
{
	detach_in_callback(GEN_IN_LOOP, 7, PERFRING_FLUSH_NEVER);
}

Test(uv, detach_twice_calls_done_once)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	getpid_session(&f, &o, getpid());
	attach(&f, NULL);
	detach(&f);
	perfring_libuv_detach(f.a, on_done_other, &f);
	cr_assert_eq(f.done_calls, 0, "done ran before the handles closed");
	fx_run(&f);
	cr_assert_eq(f.done_calls, 1);
	cr_assert_eq(f.done_other, 0);
	perfring_libuv_detach(NULL, on_done, &f);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* The loop object itself is freed after detach: valgrind and ASan check
 * that nothing of the adapter outlives it. */
Test(uv, loop_freed_after_detach)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	uv_loop_t *loop = malloc(sizeof(*loop));
	struct fx f;

	cr_assert_not_null(loop);
	fx_init(&f, loop);
	kutil_pin(0);
	getpid_session(&f, &o, getpid());
	attach(&f, NULL);
	kutil_getpid_n(N);
	f.on_tick = finish_step;
	fx_run(&f);
	cr_assert_eq(f.k.n, N);
	cr_assert_eq(f.done_calls, 1);
	fx_fini(&f);
	free(loop);
	perfring_session_free(f.s);
}

/* --------------------------------------------------------------------- HUP */

/* The child's workload, timed: under valgrind a forked child makes getpid
 * calls of its own before and after it, which the window leaves out. */
static int getpid_child(void *arg)
{
	struct window *w = arg;

	__atomic_store_n(&w->t0, kutil_now_ns(), __ATOMIC_RELEASE);
	kutil_getpid_n(HUP_N);
	__atomic_store_n(&w->t1, kutil_now_ns(), __ATOMIC_RELEASE);
	return 0;
}

static struct window *child_window(struct fx *f)
{
	struct window *w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(w, MAP_FAILED);
	memset(w, 0, sizeof(*w));
	f->win = w;
	return w;
}

static void hup_step(struct fx *f)
{
	if (f->phase == 0 && f->errors == (int)f->nslots) {
		f->phase = 1;
		f->mark = f->iterations;
		f->ticks = 0;
	} else if (f->phase == 1 && f->ticks >= 50) {
		/* 50 ticks after the last HUP: a spinning watcher would have made
		 * thousands of iterations, the ticks and flushes make about 60 */
		cr_assert_lt(f->iterations - f->mark, 500, "the loop spins after HUP");
		f->phase = 2;
		detach(f);
	}
}

Test(uv, hup_stops_watching_and_reports_once)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error };
	const struct perfring_cpu_fd *fds;
	struct kchild c;
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	lo.ctx = &f;
	cr_assert_eq(kutil_child_start(&c, getpid_child, child_window(&f)), 0);
	o.pid = c.pid;
	getpid_session(&f, &o, 0);
	f.nslots = perfring_session_fds(f.s, &fds);
	attach(&f, &lo);
	kutil_child_go(&c);
	f.on_tick = hup_step;
	fx_run(&f);
	cr_assert_geq(kutil_child_wait(&c), 0, "the child was killed");
	munmap((void *)f.win, sizeof(*f.win));
	cr_assert_eq(f.phase, 2);
	cr_assert_eq(f.in_window, HUP_N, "the final drain missed records");
	cr_assert_eq(f.errors, (int)f.nslots, "on_error once per CPU");
	for (size_t i = 0; i < f.nslots; i++)
		cr_assert_eq(f.err_on_cpu[fds[i].cpu], 1, "CPU %d", fds[i].cpu);
	cr_assert_eq(f.last_err, -EPIPE);
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* Detaching from on_error (inside the reactor's drain) ends the loop. */
static void on_error_detach(int cpu, int err, void *ctx)
{
	struct fx *f = ctx;

	on_error(cpu, err, ctx);
	if (f->errors == (int)f->nslots)
		detach(f);
}

/* A pid-mode session on child c (its records from filter, 0 = all),
 * attached with on_error_detach, run until the detach. */
static void run_on_child(struct fx *f, struct perfring_opts *o, struct kchild *c, pid_t filter)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error_detach, .ctx = f };

	o->pid = c->pid;
	getpid_session(f, o, filter);
	f->nslots = perfring_session_fds(f->s, NULL);
	attach(f, &lo);
	kutil_child_go(c);
	fx_run(f);
}

Test(uv, detach_in_on_error)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct kchild c;
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	cr_assert_eq(kutil_child_start(&c, getpid_child, child_window(&f)), 0);
	run_on_child(&f, &o, &c, 0);
	cr_assert_geq(kutil_child_wait(&c), 0, "the child was killed");
	munmap((void *)f.win, sizeof(*f.win));
	cr_assert_eq(f.in_window, HUP_N);
	cr_assert_eq(f.errors, (int)f.nslots);
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* ------------------------------------------------- CPU subsets, two sessions */

static void settle_step(struct fx *f)
{
	if (f->phase == 0 && f->k.per_cpu[1] >= N / 2) {
		f->phase = 1;
		f->mark = f->ticks;
	} else if (f->phase == 1 && f->ticks >= f->mark + 50) {
		f->phase = 2;
		detach(f);
	}
}

Test(uv, cpu_subset_watches_only_those_cpus)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	const int cpu1[] = { 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = cpu1, .cpu_cnt = 1,
					 .flush_ms = 5 };
	uv_loop_t loop;
	struct fx f;

	need_cpus(2);
	fx_init(&f, &loop);
	getpid_session(&f, &o, getpid());
	cr_assert_eq(kutil_pin(1), 0);
	kutil_getpid_n(N / 2);
	cr_assert_eq(kutil_pin(0), 0);
	kutil_getpid_n(N / 4);
	attach(&f, &lo);
	f.on_tick = settle_step;
	fx_run(&f);
	cr_assert_eq(f.phase, 2);
	cr_assert_eq(f.k.per_cpu[1], N / 2);
	cr_assert_eq(f.k.per_cpu[0], 0, "an unwatched CPU delivered");
	cr_assert_eq(perfring_session_parse_all(f.s), N / 4, "CPU 0 kept its records");
	cr_assert_eq(f.k.per_cpu[0], N / 4);
	perfring_session_free(f.s);
	fx_fini(&f);
}

static struct fx *second;

static void two_step(struct fx *f)
{
	if (f->phase == 0 && f->iterations >= 4) {
		f->phase = 1;
		kutil_getpid_n(N / 2);
	} else if (f->phase == 1 && f->k.n >= N / 2 && second->k.n >= N / 2) {
		f->phase = 2;
		detach(f);
		detach(second);
	}
}

Test(uv, two_sessions_on_one_loop)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	pid_t self = getpid();  /* once: a getpid after the first start is traced */
	uv_loop_t loop;
	struct fx f, g;

	fx_init(&f, &loop);
	memset(&g, 0, sizeof(g));
	g.loop = &loop;
	second = &g;
	getpid_session(&f, &o, self);
	getpid_session(&g, &o, self);
	/* only f saw the syscalls of g's setup (valgrind adds getpids there) */
	perfring_session_parse_all(f.s);
	memset(&f.k, 0, sizeof(f.k));
	attach(&f, NULL);
	attach(&g, NULL);
	f.on_tick = two_step;
	fx_run(&f);
	cr_assert_eq(f.k.n, N / 2);
	cr_assert_eq(g.k.n, N / 2);
	cr_assert_eq(f.done_calls, 1);
	cr_assert_eq(g.done_calls, 1);
	perfring_session_free(f.s);
	perfring_session_free(g.s);
	fx_fini(&f);
}

/* ----------------------------------------------------------- attach errors */

Test(uv, attach_errors_leave_nothing_behind)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	const int bad[] = { 4095 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = bad, .cpu_cnt = 1 };
	struct perfring_libuv *a = (void *)&o;
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	KCHECK(kutil_getpid_session(&o, getpid(), &f.k, &f.s, &f.ev), f.s);
	cr_assert_eq(perfring_libuv_attach(f.s, &loop, NULL, &a), -EINVAL, "before start");
	cr_assert_null(a);
	KCHECK(perfring_session_start(f.s), f.s);
	cr_assert_eq(perfring_libuv_attach(f.s, &loop, &lo, &a), -ENOENT);
	cr_assert_null(a);
	lo.sz = 1;
	cr_assert_eq(perfring_libuv_attach(f.s, &loop, &lo, &a), -EINVAL);
	cr_assert_eq(perfring_libuv_attach(NULL, &loop, NULL, &a), -EINVAL);
	fx_run(&f);
	cr_assert_leq(f.iterations, 1, "uv_run took %llu turns to release the failed attaches' handles",
		      (unsigned long long)f.iterations);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* The second attachment fails at CPU 1's fd, which the first one watches,
 * after it has made its flush timer, idle handle and CPU 0's poll. */
Test(uv, attach_failing_midway_unwinds)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	const int cpu1[] = { 1 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = cpu1, .cpu_cnt = 1 };
	struct perfring_libuv *b = NULL;
	uv_loop_t loop;
	struct fx f;
	int err;

	need_cpus(2);
	fx_init(&f, &loop);
	getpid_session(&f, &o, getpid());
	attach(&f, &lo);
	err = perfring_libuv_attach(f.s, &loop, NULL, &b);
	cr_assert_eq(err, -EEXIST, "%s", perfring_strerror(err));
	cr_assert_null(b);
	detach(&f);
	fx_run(&f);
	cr_assert_eq(f.done_calls, 1);

	/* the session is still fine: attach to every CPU now works */
	f.done_calls = 0;
	attach(&f, NULL);
	f.on_tick = finish_step;
	kutil_getpid_n(N);
	fx_run(&f);
	cr_assert_eq(f.k.n, N);
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* R6: the session freed with the adapter attached. The adapter's timer and
 * idle handle go on firing while the loop runs, touching nothing of the
 * session (ASan in the sanitizer tree); detach still frees the adapter. */
static void free_session_step(struct fx *f)
{
	if (f->ticks == 5) {
		perfring_session_free(f->s);
		f->s = NULL;
		f->mark = f->k.n;
	} else if (f->ticks == 300) { /* 3 flushes of 100 ms later */
		detach(f);
		uv_unref((uv_handle_t *)&f->tick);
	}
}

Test(uv, session_freed_while_attached_cancels_the_adapter)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	getpid_session(&f, &o, getpid());
	attach(&f, NULL);
	f.on_tick = free_session_step;
	uv_ref((uv_handle_t *)&f.tick); /* the loop runs on the tick timer until detach */
	fx_run(&f);
	cr_assert_eq(f.k.n, f.mark, "a callback ran after the session was freed");
	cr_assert_eq(f.done_calls, 1, "detach finished");
	fx_fini(&f);
}

/* R2: the child's main thread exits first (its fds report HUP) while its
 * other thread writes for a second: every record arrives, and the end is
 * reported once per CPU, after the process's. */
Test(uv, pid_mode_follows_the_process_past_its_main_thread)
{
	static struct kleader l = { 5000, 1000, 0 };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct kchild c;
	uv_loop_t loop;
	struct fx f;

	fx_init(&f, &loop);
	cr_assert_eq(kutil_leader_start(&c, &l), 0);
	run_on_child(&f, &o, &c, l.worker);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(f.k.n, 5000, "%llu of 5000 records", (unsigned long long)f.k.n);
	cr_assert_eq(f.errors, (int)f.nslots, "the end once per CPU");
	cr_assert_eq(f.done_calls, 1);
	perfring_session_free(f.s);
	fx_fini(&f);
}

/* The reactor's teardown under a driver whose destroy() finishes later, as
 * uv_close does (fakeloop's late_destroyed), and one that frees again
 * inside destroy(): free_then's done runs once, at the driver's
 * perfring_reactor_destroyed() and not before; nothing runs in between.
 * Under ASan a reactor never freed is a leak, one freed early a
 * use-after-free. */
struct teardown {
	struct fakeloop l;
	struct kcount k;
	int done_calls, other_calls;
	bool free_in_cb;
};

static void teardown_done(void *ctx)
{
	((struct teardown *)ctx)->done_calls++;
}

static void teardown_other(void *ctx)
{
	((struct teardown *)ctx)->other_calls++;
}

static int teardown_cb(const struct perfring_sample *smp, void *ctx)
{
	struct teardown *t = ctx;

	kutil_count_cb(smp, &t->k);
	if (t->free_in_cb)
		perfring_reactor_free_then(t->l.r, teardown_done, t);
	return 0;
}

static void teardown_attach(struct teardown *t, struct perfring_session *s, bool late)
{
	*t = (struct teardown){ .l.late_destroyed = late };
	cr_assert_eq(perfring_reactor_new(s, NULL, &fakeloop_ops, &t->l, &t->l.r), 0,
		     "%s", perfring_session_last_error(s));
}

/* Between destroy() and a late destroyed(): every call does nothing. */
static void teardown_closing(struct teardown *t, const char *what)
{
	uint64_t seen = t->k.n;

	cr_assert_eq(t->l.destroys, 1, "%s: destroy() once", what);
	cr_assert_eq(t->done_calls, 0, "%s: done before the driver's destroyed()", what);
	cr_assert_eq(t->l.unwatches, t->l.watches, "%s: every watch stopped", what);
	perfring_reactor_free_then(t->l.r, teardown_other, t);
	kutil_getpid_n(20);
	for (size_t i = 0; i < 4; i++)
		perfring_reactor_on_ready(t->l.r, i, POLLIN);
	perfring_reactor_on_soon(t->l.r);
	perfring_reactor_on_timer(t->l.r);
	cr_assert_eq(t->k.n, seen, "%s: a callback ran while closing", what);
	cr_assert_eq(t->l.destroys, 1, "%s: a second free called destroy() again", what);
	perfring_reactor_destroyed(t->l.r);
	cr_assert_eq(t->done_calls, 1, "%s: done at destroyed() (%d calls)", what,
		     t->done_calls);
	cr_assert_eq(t->other_calls, 0, "%s: the second free's done ran", what);
}

static void free_again(struct fakeloop *l)
{
	perfring_reactor_free_then(l->r, teardown_other, (struct teardown *)l); /* l is first */
}

Test(uv, reactor_teardown_waits_for_the_drivers_destroyed, .timeout = 30)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64, .wakeup_events = 1 };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct teardown t;
	struct kcount k = { 0 };
	uint64_t seen;

	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, &ev), s);
	perfring_event_set_callback(ev, teardown_cb, &t);
	KCHECK(perfring_session_start(s), s);

	teardown_attach(&t, s, true);
	perfring_reactor_free_then(t.l.r, teardown_done, &t);
	teardown_closing(&t, "freed outside a callback");

	teardown_attach(&t, s, true);
	t.free_in_cb = true;
	seen = t.k.n; /* the attach drain read what the first part left */
	kutil_getpid_n(20);
	cr_assert_gt(fakeloop_poll(&t.l), 0, "no ring was ready");
	cr_assert_eq(t.k.n, seen + 1, "%llu samples after the free",
		     (unsigned long long)(t.k.n - seen - 1));
	teardown_closing(&t, "freed inside a sample callback");

	teardown_attach(&t, s, false);
	t.l.in_destroy = free_again;
	perfring_reactor_free_then(t.l.r, teardown_done, &t);
	cr_assert_eq(t.l.destroys, 1);
	cr_assert_eq(t.done_calls, 1, "freed inside destroy(): done at its destroyed()");
	cr_assert_eq(t.other_calls, 0, "the free inside destroy() did something");

	teardown_attach(&t, s, true);
	perfring_session_free(s); /* R6: the reactor is cancelled, still ours to free */
	perfring_reactor_on_timer(t.l.r);
	perfring_reactor_free_then(t.l.r, teardown_done, &t);
	teardown_closing(&t, "freed after its session");
}
