/* SPDX-License-Identifier: MIT */
/* BPF ring buffers in a session, on the real kernel with tests/kbpf.c's
 * programs (sys_enter_getpid, this process only): exact counts through
 * parse_all, parse_for_duration (sleep-polling and wakeup mode), a loop of
 * one's own on perfring_ringbuf_fd (level- and edge-triggered), a reactor
 * on an edge-triggered epoll driver, the budget, output / reserve+submit /
 * reserve+discard, timed records (and merged in time order with a
 * tracepoint of the same calls), two maps, the caller closing its fd, R1
 * and R7, and no fd left after free. */
#include "test_ringbuf_fx.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define N 10000
#define RING (512u << 10) /* 10,000 records of up to 48 bytes before any read */

static struct kfdset fds_before;

static void setup(void)
{
	cr_assert_eq(kutil_fd_snapshot(&fds_before), 0);
}

static void teardown(void)
{
	char why[192];

	cr_expect_lt(kutil_fd_changed(&fds_before, why, sizeof(why)), 0, "%s", why);
}

TestSuite(ringbuf, .init = setup, .fini = teardown, .timeout = 60);

Test(ringbuf, parse_all_output)
{
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, true);
	rbfx_calls(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), N, "%s", perfring_session_last_error(f.s));
	rbfx_expect(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), 0);
	rbfx_close(&f);
}

Test(ringbuf, parse_all_reserve_submit)
{
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_RESERVE, RING, 40, NULL, NULL, true);
	rbfx_calls(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), N, "%s", perfring_session_last_error(f.s));
	rbfx_expect(&f, N);
	rbfx_close(&f);
}

Test(ringbuf, reserve_discard_counted)
{
	struct perfring_ringbuf_stats st;
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_DISCARD_ODD, RING, 24, NULL, NULL, true);
	rbfx_calls(&f, N + 1);
	cr_expect_eq(perfring_session_parse_all(f.s), N / 2 + 1);
	rbfx_expect(&f, N / 2 + 1);
	cr_assert_eq(perfring_ringbuf_stats(f.ev, &st), 0);
	cr_expect_eq(st.discarded, N / 2, "discarded %llu", (unsigned long long)st.discarded);
	cr_expect_eq(kbpf_rb_calls(&f.b), N + 1);
	rbfx_close(&f);
}

Test(ringbuf, timed_records_carry_their_time)
{
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 16 };
	struct perfring_ringbuf_stats st;
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_RESERVE, RING, 24, NULL, &ro, true);
	rbfx_calls(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), N);
	rbfx_expect(&f, N); /* each sample's time is its record's ns */
	cr_assert_eq(perfring_ringbuf_stats(f.ev, &st), 0);
	cr_expect_eq(st.untimed, 0);
	rbfx_close(&f);
}

Test(ringbuf, record_too_short_for_its_time_is_untimed)
{
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 24 };
	struct perfring_ringbuf_stats st;
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, &ro, true);
	f.c.timed = false; /* time 0 */
	rbfx_calls(&f, 100);
	cr_expect_eq(perfring_session_parse_all(f.s), 100);
	rbfx_expect(&f, 100);
	cr_assert_eq(perfring_ringbuf_stats(f.ev, &st), 0);
	cr_expect_eq(st.untimed, 100, "untimed %llu", (unsigned long long)st.untimed);
	rbfx_close(&f);
}

/* The sleep-polling wait runs the features' tick. */
Test(ringbuf, parse_for_duration_polling)
{
	struct perfring_opts o = { .sz = sizeof(o), .poll_interval_ms = 5 };
	struct rbfx f;
	int n;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, true);
	rbfx_calls(&f, N);
	n = perfring_session_parse_for_duration(f.s, 200 * 1000000ull);
	cr_expect_eq(n, N, "%d (%s)", n, perfring_session_last_error(f.s));
	rbfx_expect(&f, N);
	rbfx_close(&f);
}

/* A thread making calls in bursts while the session waits. */
struct producer {
	pthread_t t;
	long n, burst;
	int pause_us;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	long done = 0, k;

	while (done < p->n) {
		k = p->n - done < p->burst ? p->n - done : p->burst;
		kutil_getpid_n(k);
		done += k;
		usleep((useconds_t)p->pause_us);
	}
	return NULL;
}

static void producer_start(struct producer *p, struct rbfx *f, long n, long burst, int pause_us)
{
	*p = (struct producer){ .n = n, .burst = burst, .pause_us = pause_us };
	f->c.tid = 0; /* another thread's */
	f->c.t0 = kutil_now_ns();
	cr_assert_eq(pthread_create(&p->t, NULL, produce, p), 0);
}

static void producer_join(struct producer *p, struct rbfx *f)
{
	pthread_join(p->t, NULL);
	f->c.t1 = kutil_now_ns();
}

static bool all_came(void *ctx)
{
	const struct rbfx *f = ctx;

	return f->c.n >= N || kutil_now_ns() > f->c.t0 + 20000000000ull;
}

/* Wakeup mode: a merged reactor on the built-in epoll driver. With flushing
 * off only the ring buffer's own wakeups read it: an untimed one drained by
 * its slot, a timed one by the merged passes its slot asks for. */
static void parse_until_no_flush(bool timed)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 16 };
	struct producer p;
	struct rbfx f;
	int n;

	rbfx_open(&f, KBPF_RB_RESERVE, RING, 40, &o, timed ? &ro : NULL, true);
	producer_start(&p, &f, N, 97, 200);
	n = perfring_session_parse_until(f.s, all_came, &f);
	producer_join(&p, &f);
	cr_expect_eq(n, N, "%d (%s)", n, perfring_session_last_error(f.s));
	rbfx_expect(&f, N);
	rbfx_close(&f);
}

Test(ringbuf, parse_until_wakeup_mode_no_flush) { parse_until_no_flush(false); }
Test(ringbuf, parse_until_wakeup_mode_no_flush_timed) { parse_until_no_flush(true); }

Test(ringbuf, parse_for_duration_wakeup_mode)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	struct rbfx f;
	int n;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, true);
	rbfx_calls(&f, N);
	n = perfring_session_parse_for_duration(f.s, 100 * 1000000ull);
	cr_expect_eq(n, N, "%d (%s)", n, perfring_session_last_error(f.s));
	rbfx_calls(&f, 10); /* the same wait again: its reactor is kept */
	f.c.last_ns = 0;
	n = perfring_session_parse_for_duration(f.s, 100 * 1000000ull);
	cr_expect_eq(n, 10, "%d (%s)", n, perfring_session_last_error(f.s));
	rbfx_expect(&f, N + 10);
	rbfx_close(&f);
}

/* A loop of one's own: epoll on perfring_ringbuf_fd, perfring_ringbuf_parse
 * on readiness. Edge-triggered, every record must come by a wakeup: a wait
 * that times out with the producer done and records missing fails. */
static void own_loop(bool edge)
{
	struct epoll_event e = { .events = EPOLLIN | (edge ? EPOLLET : 0) }, got;
	struct producer p;
	struct rbfx f;
	int ep, fd, n, timeouts = 0;
	bool done = false;

	rbfx_open(&f, KBPF_RB_OUTPUT, 4096, 40, NULL, NULL, true);
	fd = perfring_ringbuf_fd(f.ev);
	cr_assert_geq(fd, 0, "%s", perfring_session_last_error(f.s));
	ep = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e), 0);
	/* 4 KiB: 85 records of 48 bytes; the producer pauses so the reader keeps up. */
	producer_start(&p, &f, N, 20, 300);
	while (f.c.n + (uint64_t)kbpf_rb_failed(&f.b) < N) {
		n = epoll_wait(ep, &got, 1, 3000);
		if (n == 0 && ++timeouts)
			break;
		if (n == 1)
			cr_assert_geq(perfring_ringbuf_parse(f.ev, 0, NULL), 0, "%s",
				      perfring_session_last_error(f.s));
		if (!done && f.c.n >= N)
			done = true;
	}
	producer_join(&p, &f);
	cr_expect_eq(timeouts, 0, "%s: a wait timed out with %llu of %d records delivered, %lld "
		     "failed", edge ? "edge-triggered" : "level-triggered",
		     (unsigned long long)f.c.n, N, (long long)kbpf_rb_failed(&f.b));
	cr_expect_eq(f.c.bad, 0, "%s", f.c.first_bad);
	cr_expect_eq(f.c.n + (uint64_t)kbpf_rb_failed(&f.b), N);
	cr_expect_lt(kbpf_rb_failed(&f.b), N / 10, "the reader fell far behind");
	close(ep);
	rbfx_close(&f);
}

Test(ringbuf, own_loop_level_triggered) { own_loop(false); }
Test(ringbuf, own_loop_edge_triggered) { own_loop(true); }

/* The budget: max 7 on 1,000 records is 143 calls, more exact. */
Test(ringbuf, budget_seven)
{
	struct rbfx f;
	bool more = true;
	int calls = 0, n, total = 0;

	rbfx_open(&f, KBPF_RB_RESERVE, RING, 24, NULL, NULL, true);
	rbfx_calls(&f, 1000);
	while (more) {
		n = perfring_ringbuf_parse(f.ev, 7, &more);
		cr_assert_geq(n, 0, "%s", perfring_session_last_error(f.s));
		calls++;
		total += n;
		cr_expect_eq(more, total < 1000, "call %d: more %d after %d records", calls, more,
			     total);
		cr_expect_eq(n, total <= 994 ? 7 : 6, "call %d delivered %d", calls, n);
		cr_assert_leq(calls, 143);
	}
	cr_expect_eq(calls, 143);
	rbfx_expect(&f, 1000);
	rbfx_close(&f);
}

/* An edge-triggered driver for a reactor: nothing but wakeups, no flush. */
struct etloop {
	int ep;
	bool soon;
	struct perfring_reactor *r;
};

static int et_watch(void *loop, size_t slot, int fd, bool on)
{
	struct etloop *l = loop;
	struct epoll_event e = { .events = EPOLLIN | EPOLLET, .data.u64 = slot };

	return epoll_ctl(l->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &e) < 0 ? -errno : 0;
}

static int et_soon(void *loop, bool on)
{
	((struct etloop *)loop)->soon = on;
	return 0;
}

static int et_timer(void *loop, uint32_t ms)
{
	(void)loop;
	cr_expect_eq(ms, 0, "the timer was armed (%u ms) with flushing off", ms);
	return 0;
}

static void et_destroy(void *loop)
{
	perfring_reactor_destroyed(((struct etloop *)loop)->r);
}

static const struct perfring_loop_ops et_ops = {
	.sz = sizeof(et_ops), .watch = et_watch, .soon = et_soon, .timer = et_timer,
	.destroy = et_destroy,
};

/* budget 0: each readiness drains to the end; 7: the reactor continues a
 * cut drain on a soon turn, as no wakeup will come for what is left. */
static void edge_reactor(uint32_t budget)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = budget };
	struct etloop l = { .ep = epoll_create1(EPOLL_CLOEXEC) };
	struct epoll_event got[8];
	struct producer p;
	struct rbfx f;
	int n, i, timeouts = 0;

	rbfx_open(&f, KBPF_RB_OUTPUT, 4096, 40, &o, NULL, true);
	KCHECK(perfring_reactor_new(f.s, &lo, &et_ops, &l, &l.r), f.s);
	producer_start(&p, &f, N, 20, 300);
	while (f.c.n + (uint64_t)kbpf_rb_failed(&f.b) < N) {
		n = epoll_wait(l.ep, got, 8, l.soon ? 0 : 3000);
		if (n == 0 && !l.soon && ++timeouts)
			break;
		for (i = 0; i < n; i++)
			perfring_reactor_on_ready(l.r, (size_t)got[i].data.u64, got[i].events);
		if (l.soon) {
			l.soon = false;
			perfring_reactor_on_soon(l.r);
		}
	}
	producer_join(&p, &f);
	cr_expect_eq(timeouts, 0, "budget %u: a wait timed out with %llu of %d records delivered",
		     budget, (unsigned long long)f.c.n, N);
	cr_expect_eq(f.c.bad, 0, "%s", f.c.first_bad);
	cr_expect_eq(f.c.n + (uint64_t)kbpf_rb_failed(&f.b), N);
	cr_expect_lt(kbpf_rb_failed(&f.b), N / 10, "the reader fell far behind");
	perfring_reactor_free(l.r);
	close(l.ep);
	rbfx_close(&f);
}

Test(ringbuf, reactor_on_an_edge_triggered_driver) { edge_reactor(0); }
Test(ringbuf, reactor_on_an_edge_triggered_driver_budget_7) { edge_reactor(7); }

/* Two programs, two maps, one session: each map's records to its event. */
Test(ringbuf, two_maps)
{
	struct rbfx f;
	struct kbpf_rb b2;
	struct rbcheck c2;
	struct perfring_event *ev2;
	uint32_t ids[3];
	char why[1024];

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, false);
	cr_assert_eq(kbpf_rb_open(&b2, (pid_t)f.c.tgid, RING, KBPF_RB_RESERVE, 40, why, sizeof(why)), 0,
		     "%s", why);
	ids[0] = kbpf_id(b2.map);
	ids[1] = kbpf_id(b2.prog);
	ids[2] = kbpf_id(b2.res_map);
	c2 = f.c;
	c2.size = 40;
	KCHECK(perfring_session_add_bpf_ringbuf(f.s, b2.map, NULL, &ev2), f.s);
	c2.ev = ev2;
	KCHECK(perfring_event_set_callback(ev2, rbcheck_cb, &c2), f.s);
	KCHECK(perfring_session_start(f.s), f.s);
	cr_expect_neq(perfring_ringbuf_fd(f.ev), perfring_ringbuf_fd(ev2));
	rbfx_calls(&f, N);
	c2.t0 = f.c.t0;
	c2.t1 = f.c.t1;
	cr_expect_eq(perfring_session_parse_all(f.s), 2 * N);
	rbfx_expect(&f, N);
	cr_expect_eq(c2.n, N);
	cr_expect_eq(c2.bad, 0, "%s", c2.first_bad);
	cr_expect(strstr(perfring_event_name(ev2), "ringbuf:kbpf_rb"), "%s",
		  perfring_event_name(ev2));
	rbfx_close(&f);
	kbpf_rb_close(&b2);
	cr_expect_eq(kbpf_wait_gone(ids, 3), 0);
}

/* The session reads through its own dup. */
Test(ringbuf, caller_closes_its_map_fd)
{
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, false);
	close(f.b.map);
	f.b.map = -1;
	KCHECK(perfring_session_start(f.s), f.s);
	rbfx_calls(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), N, "%s", perfring_session_last_error(f.s));
	rbfx_expect(&f, N);
	rbfx_close(&f); /* the map goes with the session's dup */
}

/* A ring buffer with no perf event: the session starts on it alone. */
Test(ringbuf, session_of_a_ring_buffer_alone)
{
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, true);
	cr_expect_eq(kutil_stats(f.s).records, 0);
	rbfx_calls(&f, 10);
	cr_expect_eq(perfring_session_parse_all(f.s), 10);
	rbfx_expect(&f, 10);
	rbfx_close(&f);
}

/* Beside a tracepoint of the same calls: both counted, each to its event. */
static int count_cb(const struct perfring_sample *s, void *ctx)
{
	(void)s;
	++*(uint64_t *)ctx;
	return 0;
}

/* sys_enter_getpid of this process beside f's ring buffer, to cb. */
static struct perfring_event *getpid_tracepoint(struct rbfx *f, perfring_sample_fn cb,
						void *ctx)
{
	struct perfring_event *tp;
	char filter[64];

	KCHECK(perfring_session_add_tracepoint(f->s, "syscalls", "sys_enter_getpid", &tp), f->s);
	/* Not getpid(): each call now makes a record (glibc does not cache it). */
	snprintf(filter, sizeof(filter), "common_pid == %u", f->c.tgid);
	KCHECK(perfring_event_set_filter(tp, filter), f->s);
	KCHECK(perfring_event_set_callback(tp, cb, ctx), f->s);
	return tp;
}

Test(ringbuf, beside_a_tracepoint)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	uint64_t tps = 0;
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, false);
	getpid_tracepoint(&f, count_cb, &tps);
	KCHECK(perfring_session_start(f.s), f.s);
	rbfx_calls(&f, N);
	cr_expect_eq(perfring_session_parse_all(f.s), 2 * N);
	KCOUNT_EQ(tps, N);
	rbfx_expect(&f, N);
	rbfx_close(&f);
}

/* A timed ring buffer and a tracepoint of the same calls in one merged
 * stream: every sample of either is checked by its own rule, and the
 * times seen, of both together, never go back. */
struct merged_check {
	struct rbcheck *rb;
	const struct perfring_event *tp;
	uint64_t tps, last, back, first_back_at;
};

static int merged_cb(const struct perfring_sample *s, void *ctx)
{
	struct merged_check *m = ctx;

	if (s->event == m->tp)
		m->tps++;
	else
		rbcheck_cb(s, m->rb);
	if (s->time < m->last && !m->back++)
		m->first_back_at = m->tps + m->rb->n;
	m->last = s->time > m->last ? s->time : m->last;
	return 0;
}

/* form 0: parse_all; 1: parse_for_duration in wakeup mode with a 2 ms
 * window (the built-in wait's merged reactor). */
static void timed_with_a_tracepoint(int form)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256,
				   .wakeup_watermark = form ? 4096 : 0,
				   .order_window_ns = form ? 2000000 : 0 };
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 16 };
	struct merged_check m = { 0 };
	struct rbfx f;
	int n;

	rbfx_open(&f, KBPF_RB_RESERVE, RING, 24, &o, &ro, false);
	m.rb = &f.c;
	m.tp = getpid_tracepoint(&f, merged_cb, &m);
	KCHECK(perfring_event_set_callback(f.ev, merged_cb, &m), f.s);
	KCHECK(perfring_session_start(f.s), f.s);
	rbfx_calls(&f, N);
	n = form ? perfring_session_parse_for_duration(f.s, 100000000) :
		   perfring_session_parse_all(f.s);
	cr_expect_eq(n, 2 * N, "%d of %d samples", n, 2 * N);
	KCOUNT_EQ(m.tps, N);
	cr_expect_eq(m.back, 0, "%llu samples older than one before them (the first at #%llu)",
		     (unsigned long long)m.back, (unsigned long long)m.first_back_at);
	rbfx_expect(&f, N);
	rbfx_close(&f);
}

Test(ringbuf, timed_merged_with_a_tracepoint_parse_all) { timed_with_a_tracepoint(0); }
Test(ringbuf, timed_merged_with_a_tracepoint_wakeup_wait) { timed_with_a_tracepoint(1); }

/* R1: a parse of the ring buffer inside its own callback. */
struct reentry {
	struct perfring_event *ev;
	struct perfring_session *s;
	int inner;
	char why[256];
	uint64_t n;
};

static int reenter_cb(const struct perfring_sample *smp, void *ctx)
{
	struct reentry *re = ctx;

	(void)smp;
	if (!re->n++) {
		re->inner = perfring_ringbuf_parse(re->ev, 0, NULL);
		snprintf(re->why, sizeof(re->why), "%s", perfring_session_last_error(re->s));
	}
	return 0;
}

Test(ringbuf, r1_parse_inside_its_callback_is_ebusy)
{
	struct reentry re = { 0 };
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, true);
	re.ev = f.ev;
	re.s = f.s;
	cr_assert_eq(perfring_event_set_callback(f.ev, reenter_cb, &re), 0);
	rbfx_calls(&f, 100);
	cr_expect_eq(perfring_ringbuf_parse(f.ev, 0, NULL), 100);
	cr_expect_eq(re.inner, -EBUSY);
	cr_expect(strstr(re.why, "is being parsed already"), "%s", re.why);
	cr_expect_eq(re.n, 100, "each record once: %llu", (unsigned long long)re.n);
	cr_expect_eq(perfring_session_parse_all(f.s), 0);
	rbfx_close(&f);
}

/* R7: free inside a ring buffer's callback, from each parse form. */
struct freer {
	struct perfring_session *s;
	uint64_t n;
};

static int free_cb(const struct perfring_sample *smp, void *ctx)
{
	struct freer *fr = ctx;

	(void)smp;
	if (++fr->n == 3)
		perfring_session_free(fr->s);
	return 0;
}

static void free_inside(int form)
{
	struct perfring_opts o = { .sz = sizeof(o), .poll_interval_ms = 5 };
	struct freer fr = { 0 };
	struct rbfx f;
	int n = 0;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, true);
	fr.s = f.s;
	cr_assert_eq(perfring_event_set_callback(f.ev, free_cb, &fr), 0);
	rbfx_calls(&f, 100);
	if (form == 0)
		n = perfring_ringbuf_parse(f.ev, 0, NULL);
	else if (form == 1)
		n = perfring_session_parse_all(f.s);
	else
		n = perfring_session_parse_for_duration(f.s, 100 * 1000000ull);
	cr_expect_eq(n, -ECANCELED, "form %d: %d", form, n);
	cr_expect_eq(fr.n, 3, "form %d: %llu callbacks, none after the free", form,
		     (unsigned long long)fr.n);
	f.s = NULL; /* freed */
	rbfx_close(&f);
}

Test(ringbuf, r7_free_inside_ringbuf_parse) { free_inside(0); }
Test(ringbuf, r7_free_inside_parse_all) { free_inside(1); }
Test(ringbuf, r7_free_inside_parse_for_duration) { free_inside(2); }

/* Stop and start again (R11): the ring buffer is read throughout. */
Test(ringbuf, stop_and_restart)
{
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, NULL, NULL, true);
	rbfx_calls(&f, 10);
	KCHECK(perfring_session_stop(f.s), f.s);
	cr_expect_eq(perfring_session_parse_all(f.s), 10);
	KCHECK(perfring_session_start(f.s), f.s);
	f.c.last_ns = 0;
	rbfx_calls(&f, 5);
	cr_expect_eq(perfring_session_parse_all(f.s), 5);
	rbfx_expect(&f, 15);
	rbfx_close(&f);
}

/* No fd of the session's is left after free: the dup, the reactor's dup. */
Test(ringbuf, no_fd_left_after_free)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	int before, during;
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, false);
	before = rbfx_fd_count();
	KCHECK(perfring_session_start(f.s), f.s);
	rbfx_calls(&f, 10);
	cr_expect_eq(perfring_session_parse_for_duration(f.s, 20 * 1000000ull), 10);
	during = rbfx_fd_count();
	cr_expect_gt(during, before, "the wait's epoll set, timerfd and dups are open");
	rbfx_close(&f);
}

/* perfring_reactor_new drains every source once: records already in the
 * ring buffer are delivered before the loop turns at all. */
Test(ringbuf, reactor_new_drains_what_is_there)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct etloop l = { .ep = epoll_create1(EPOLL_CLOEXEC) };
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, true);
	rbfx_calls(&f, 100);
	KCHECK(perfring_reactor_new(f.s, NULL, &et_ops, &l, &l.r), f.s);
	cr_expect_eq(f.c.n, 100, "%llu of 100 delivered by the attach",
		     (unsigned long long)f.c.n);
	perfring_reactor_free(l.r);
	close(l.ep);
	rbfx_expect(&f, 100);
	rbfx_close(&f);
}

/* The flush: a timer pass reads what no readiness reported (a program
 * that submits with BPF_RB_NO_WAKEUP wakes nobody). */
Test(ringbuf, reactor_timer_reads_without_wakeups)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct etloop l = { .ep = epoll_create1(EPOLL_CLOEXEC) };
	struct rbfx f;

	rbfx_open(&f, KBPF_RB_OUTPUT, RING, 24, &o, NULL, true);
	KCHECK(perfring_reactor_new(f.s, NULL, &et_ops, &l, &l.r), f.s);
	rbfx_calls(&f, 100);
	cr_expect_eq(f.c.n, 0);
	perfring_reactor_on_timer(l.r); /* no on_ready: the readiness is ignored */
	cr_expect_eq(f.c.n, 100, "%llu of 100 delivered by the timer pass",
		     (unsigned long long)f.c.n);
	perfring_reactor_free(l.r);
	close(l.ep);
	rbfx_expect(&f, 100);
	rbfx_close(&f);
}
