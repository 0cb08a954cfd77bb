/* SPDX-License-Identifier: MIT */
/*
 * Time order with a bound (perfring/parse.h), over synthetic rings: a model
 * of producers whose records become visible some time after their stamp,
 * passes at chosen times T, and the window W. With every delay within W,
 * every record comes out once, in (time, CPU) order, none late, each at a
 * pass no later than W + the pass period after its time; with delays past
 * W the late ones are counted and still delivered. The same through the
 * tree's steps, runs and batches, with a max, through parse_all, and
 * through a reactor on tests/fakeloop (budget, the timer of the oldest kept
 * record, free, R1 and R7 inside callbacks with records kept).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "fakeloop.h"
#include "read/batch.h"
#include "read/merge.h"
#include "synthsession.h"

#define MAXR 8
#define TOTAL 20000
#define T0 1000000000ull /* the model's first stamp, ns */

struct seen {
	uint64_t n, last_time, bad_order, dup, slow, now, worst;
	int last_cpu;
	uint8_t got[TOTAL];
};

/* The sample's pid is its sequence number; the model's pass time is now. */
static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct seen *v = ctx;

	if (smp->time < v->last_time || (smp->time == v->last_time && smp->cpu < v->last_cpu))
		v->bad_order++;
	v->last_time = smp->time;
	v->last_cpu = smp->cpu;
	if (smp->pid >= TOTAL || v->got[smp->pid]++)
		v->dup++;
	if (v->now > smp->time && v->now - smp->time > v->worst)
		v->worst = v->now - smp->time;
	v->n++;
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* One record of the model: ring, stamp, and when its ring shows it. */
struct rec {
	uint32_t ring;
	uint64_t t, vis;
};

/* TOTAL records over k rings, stamps 1 us apart on average, each visible
 * up to delay ns after its stamp (a ring shows its records in order, so
 * one visible late holds back those after it on its ring). block: the
 * rings take turns in runs of that many records; 0: each record's ring at
 * random. */
static struct rec *model(size_t k, uint64_t delay, uint64_t seed, size_t block)
{
	struct rec *m = calloc(TOTAL, sizeof(*m));
	uint64_t last_vis[MAXR] = { 0 }, t = T0;
	size_t j;

	cr_assert_not_null(m);
	for (j = 0; j < TOTAL; j++) {
		t += rnd(&seed) % 2000;
		m[j].ring = (uint32_t)(block ? (j / block) % k : rnd(&seed) % k);
		m[j].t = t;
		m[j].vis = t + (delay ? rnd(&seed) % (delay + 1) : 0);
		if (m[j].vis < last_vis[m[j].ring])
			m[j].vis = last_vis[m[j].ring];
		last_vis[m[j].ring] = m[j].vis;
	}
	return m;
}

struct run_opts {
	size_t k, block;
	uint64_t delay, window, period;
	uint32_t max;
	bool batches;
	uint64_t sample_type;
};

struct result {
	uint64_t late, n, bad_order, dup, worst, passes, batches;
	uint64_t after; /* late_after_window */
};

/* The window's account of late records that arrived after it. */
static uint64_t late_after_window(struct perfring_session *s)
{
	struct perfring_order_stats os = { .sz = sizeof(os) };

	cr_assert_eq(perfring_session_order_stats(s, &os), 0);
	return os.late_after_window;
}

/* Two synthetic rings of ring_bytes each, their records samples of one
 * software event counted into the struct seen returned (the caller frees
 * it after synth_session_free). */
static struct seen *two_rings(struct synth_session *b, size_t ring_bytes)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1 };
	struct seen *v = calloc(1, sizeof(*v));

	cr_assert_not_null(v);
	cr_assert_eq(synth_session_new(b, 2, ring_bytes, &a, on_sample, v), 0);
	return v;
}

static void put(struct synth_session *b, const struct rec *r, size_t seq)
{
	struct synth_fields f = { .pid = (uint32_t)seq, .tid = 1, .time = r->t };
	uint8_t buf[256];
	size_t len = synth_session_template(b, r->ring, &f, buf, sizeof(buf));

	cr_assert_eq(synth_session_put(b, r->ring, buf, len,
				       synth_time_offset(synth_session_sample_type(b)), r->t), 0,
		     "ring %u full", r->ring);
}

static uint64_t rec_len(const struct synth_session *b)
{
	struct synth_fields f = { 0 };
	uint8_t buf[256];

	return synth_session_template(b, 0, &f, buf, sizeof(buf));
}

/* Passes every period from T0 on: before each, the records visible by then
 * are written; a last pass without the window empties what was kept. */
static struct result run(const struct run_opts *o)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1, .sample_type = o->sample_type };
	struct rec *m = model(o->k, o->delay, o->k * 31 + o->delay, o->block);
	struct seen *v = calloc(1, sizeof(*v));
	struct synth_session b;
	struct pr_pass p;
	struct result res = { 0 };
	struct perfring_cpu_stats st;
	size_t *order = calloc(TOTAL, sizeof(*order)), j, w = 0, r;
	uint64_t now;
	int n;

	cr_assert(v && order);
	/* Records in the order they become visible (stable: ring order). */
	for (j = 0; j < TOTAL; j++)
		order[j] = j;
	for (j = 1; j < TOTAL; j++)
		for (r = j; r > 0 && m[order[r - 1]].vis > m[order[r]].vis; r--) {
			size_t x = order[r];
			order[r] = order[r - 1];
			order[r - 1] = x;
		}
	cr_assert_eq(synth_session_new(&b, o->k, 1u << 20, &a, on_sample, v), 0);
	if (o->batches && b.s->merge->batch) {
		b.s->merge->batch->after = b.s->merge->batch->wait = b.s->merge->batch->wait_max = 1;
		b.s->merge->batch->min_total = 1;
	}
	v->last_cpu = -1;
	for (now = T0; w < TOTAL || now < m[TOTAL - 1].t + o->window + 2 * o->period;
	     now += o->period) {
		while (w < TOTAL && m[order[w]].vis <= now) {
			put(&b, &m[order[w]], order[w]);
			w++;
		}
		v->now = now;
		do {
			p = (struct pr_pass){ .window = o->window, .now = now, .max = o->max };
			n = pr_merge_pass(b.s->merge, &p);
			cr_assert_geq(n, 0);
			cr_assert_leq((uint32_t)n, o->max ? o->max : UINT32_MAX);
			if (p.kept)
				cr_assert_gt(p.kept, now - o->window, "kept %llu is not past the bound",
					     (unsigned long long)p.kept);
			res.passes++;
		} while (p.more);
	}
	for (r = 0; r < o->k; r++) {
		cr_assert_eq(perfring_session_cpu_stats(b.s, (int)r, &st), 0);
		res.late += st.late;
		cr_expect_eq(b.rings[r].meta->data_tail, b.rings[r].meta->data_head,
			     "ring %zu kept records past the end", r);
	}
	res.after = late_after_window(b.s);
	res.n = v->n;
	res.bad_order = v->bad_order;
	res.dup = v->dup;
	res.worst = v->worst;
	res.batches = b.s->merge->batch ? b.s->merge->batch->records : 0;
	synth_session_free(&b);
	free(m);
	free(v);
	free(order);
	return res;
}

/* Every delay within the window: exact order, nothing late, nothing lost,
 * each record out by W + one period after its stamp. */
static void in_order(struct run_opts o)
{
	struct result r = run(&o);

	cr_expect_eq(r.n, TOTAL, "delivered %llu of %d", (unsigned long long)r.n, TOTAL);
	cr_expect_eq(r.dup, 0);
	cr_expect_eq(r.bad_order, 0, "%llu out of order", (unsigned long long)r.bad_order);
	cr_expect_eq(r.late, 0, "%llu late", (unsigned long long)r.late);
	cr_expect_eq(r.after, 0);
	cr_expect_leq(r.worst, o.window + o.period, "a record waited %llu ns (window %llu)",
		      (unsigned long long)r.worst, (unsigned long long)o.window);
	if (o.batches)
		cr_expect_gt(r.batches, 0, "no batch ran");
}

#define ST_TP PERF_SAMPLE_RAW

Test(order, window_covers_the_delays_steps)
{
	in_order((struct run_opts){ .k = 4, .delay = 300000, .window = 300000, .period = 50000 });
}

Test(order, window_covers_the_delays_batches)
{
	in_order((struct run_opts){ .k = 4, .delay = 300000, .window = 300000, .period = 500000,
				    .batches = true });
}

Test(order, window_covers_the_delays_coarse_runs)
{
	/* Rings taking turns in runs of 20: a run through the drain loop ends
	 * at the bound when the other ring shows nothing older yet. */
	in_order((struct run_opts){ .k = 2, .delay = 300000, .window = 300000, .period = 50000,
				    .sample_type = ST_TP, .block = 20 });
}

Test(order, window_covers_the_delays_many_rings_tracepoint)
{
	in_order((struct run_opts){ .k = MAXR, .delay = 1000000, .window = 1000000,
				    .period = 100000, .sample_type = ST_TP, .batches = true });
}

Test(order, with_a_max_each_pass_stops_there)
{
	in_order((struct run_opts){ .k = 3, .delay = 200000, .window = 200000, .period = 300000,
				    .max = 7 });
}

/* The same stream without the window: the late records the window removes
 * (what this file's other tests would see with the window disabled). */
Test(order, without_the_window_records_come_late)
{
	struct run_opts o = { .k = 4, .delay = 300000, .window = 0, .period = 50000 };
	struct result r = run(&o);

	cr_expect_eq(r.n, TOTAL);
	cr_expect_gt(r.late, 0, "the model gives no late record: it tests nothing");
	cr_expect_gt(r.bad_order, 0);
	cr_expect_geq(r.late, r.bad_order, "late %llu, out of order %llu",
		      (unsigned long long)r.late, (unsigned long long)r.bad_order);
	cr_expect_eq(r.after, 0, "no window, yet %llu late after it", (unsigned long long)r.after);
}

/* Delays past the window: some late, each counted, none dropped. */
Test(order, visible_later_than_the_window_is_late_never_dropped)
{
	struct run_opts o = { .k = 4, .delay = 1000000, .window = 100000, .period = 50000 };
	struct result r = run(&o);

	cr_expect_eq(r.n, TOTAL, "delivered %llu of %d", (unsigned long long)r.n, TOTAL);
	cr_expect_eq(r.dup, 0);
	cr_expect_gt(r.bad_order, 0);
	cr_expect_geq(r.late, r.bad_order);
	/* Each came later than its window: the account excuses all of them. */
	cr_expect_eq(r.after, r.late, "late %llu, after the window %llu",
		     (unsigned long long)r.late, (unsigned long long)r.after);
}

/* A ring out of time order in itself (a hostile one): its late record was
 * in the snapshot before, so no window excuses it. */
Test(order, late_within_one_ring_is_not_the_windows)
{
	struct synth_session b;
	struct seen *v;
	struct perfring_cpu_stats st;
	struct pr_pass p = { .window = 100, .now = 300 };

	v = two_rings(&b, 4096);
	put(&b, &(struct rec){ 0, 300, 0 }, 0);
	put(&b, &(struct rec){ 0, 150, 0 }, 1);
	/* Bound 200: 300 heads ring 0, so both stay. */
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 0);
	p = (struct pr_pass){ .window = 100, .now = 1000 };
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 2);
	cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
	cr_expect_eq(st.late, 1);
	cr_expect_eq(late_after_window(b.s), 0);
	synth_session_free(&b);
	free(v);
}

/* sz: below the first struct refused, said; a larger one's tail zeroed. */
Test(order, order_stats_sizes)
{
	struct { struct perfring_order_stats os; uint64_t tail; } big;
	struct perfring_order_stats os = { .sz = sizeof(size_t) + 8 };
	struct perfring_session *s = NULL;

	cr_assert_eq(perfring_session_new(NULL, &s), 0);
	cr_expect_eq(perfring_session_order_stats(NULL, &os), -EINVAL);
	cr_expect_eq(perfring_session_order_stats(s, NULL), -EINVAL);
	cr_expect_eq(perfring_session_order_stats(s, &os), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(s), "sz"), "%s",
		  perfring_session_last_error(s));
	memset(&big, 0xff, sizeof(big));
	big.os.sz = sizeof(big);
	cr_expect_eq(perfring_session_order_stats(s, &big.os), 0);
	cr_expect_eq(big.os.sz, sizeof(big));
	cr_expect_eq(big.os.passes + big.os.late_after_window + big.tail, 0);
	perfring_session_free(s);
}

/* A hand-written ring: what the bound keeps, kept reports, a record shown
 * after its window went is late. */
Test(order, kept_and_late_by_hand)
{
	struct synth_session b;
	struct seen *v;
	struct perfring_cpu_stats st;
	struct pr_pass p = { .window = 100, .now = 300 };

	v = two_rings(&b, 4096);
	put(&b, &(struct rec){ 0, 100, 0 }, 0);
	put(&b, &(struct rec){ 0, 250, 0 }, 1);
	/* Bound 200: 100 goes; 250 is kept, and reported. */
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 1);
	cr_expect_eq(p.kept, 250);
	cr_expect_not(p.more);
	cr_expect_eq(b.rings[0].meta->data_head - b.rings[0].meta->data_tail, rec_len(&b),
		     "the kept record is not the one left in its ring");
	/* Ring 1 shows 180 and 400 only now: 180 is within the bound and goes
	 * in order (nothing newer went yet). */
	put(&b, &(struct rec){ 1, 180, 0 }, 2);
	put(&b, &(struct rec){ 1, 400, 0 }, 3);
	p = (struct pr_pass){ .window = 100, .now = 340 };
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 1);
	cr_expect_eq(p.kept, 250);
	p = (struct pr_pass){ .window = 100, .now = 360 };
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 1);
	cr_expect_eq(p.kept, 400);
	/* A record of 200 shows up after 250 went (a ring written out of order
	 * by hand): late, counted, delivered. */
	put(&b, &(struct rec){ 0, 200, 0 }, 4);
	p = (struct pr_pass){ .window = 100, .now = 360 };
	cr_assert_eq(pr_merge_pass(b.s->merge, &p), 1);
	cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
	cr_expect_eq(st.late, 1);
	cr_expect_eq(late_after_window(b.s), 1, "200 came after its window: the account says so");
	cr_expect_eq(p.kept, 400);
	/* No window: everything. */
	cr_assert_eq(pr_merge_parse(b.s->merge, NULL), 1);
	cr_expect_eq(v->n, 5);
	cr_expect_eq(v->dup, 0);
	synth_session_free(&b);
	free(v);
}

/* The bound limit of a window longer than the clock: only untimed records. */
Test(order, limit_saturates)
{
	cr_expect_eq(pr_pass_limit(5, 10), 0);
	cr_expect_eq(pr_pass_limit(15, 10), 5);
	cr_expect_eq(pr_pass_limit(15, 0), UINT64_MAX);
}

/* Two rings, one sample each side of the bound of a window of 50 ms: at
 * now - 1 s (goes) and at now + 10 s (kept until nothing younger can come). */
#define WIN_NS (50ull * 1000000ull)

static struct seen *two_sides(struct synth_session *b, size_t per_ring, size_t kept)
{
	struct seen *v = two_rings(b, 1u << 16);
	uint64_t now = pr_now_ns();
	size_t i, r, seq = 0;

	v->last_cpu = -1;
	for (i = 0; i < per_ring; i++)
		for (r = 0; r < 2; r++, seq++)
			put(b, &(struct rec){ (uint32_t)r, now - 1000000000ull + seq, 0 }, seq);
	for (i = 0; i < kept; i++, seq++)
		put(b, &(struct rec){ (uint32_t)(i % 2), now + 10000000000ull + seq, 0 }, seq);
	return v;
}

/* two_sides' 10 old records delivered by a windowed parse_all, 3 kept. */
static struct seen *three_kept(struct synth_session *b)
{
	struct seen *v = two_sides(b, 5, 3);

	b->s->o.order_window_ns = WIN_NS;
	cr_expect_eq(perfring_session_parse_all(b->s), 10);
	return v;
}

Test(order, parse_all_keeps_the_young_until_stop)
{
	struct synth_session b;
	struct seen *v;

	v = three_kept(&b);
	cr_expect_eq(perfring_session_parse_all(b.s), 0, "a kept record went before its time");
	/* After stop nothing younger can come: one parse delivers the rest. */
	b.s->state = PR_STOPPED;
	cr_expect_eq(perfring_session_parse_all(b.s), 3);
	cr_expect_eq(v->n, 13);
	cr_expect_eq(v->bad_order + v->dup, 0);
	synth_session_free(&b);
	free(v);
}

/* perfring_session_free delivers what the window kept (one last pass
 * without it), in time order. */
Test(order, session_free_delivers_what_is_kept)
{
	struct synth_session b;
	struct seen *v;

	v = three_kept(&b);
	cr_expect_eq(v->n, 10);
	synth_session_free(&b);
	cr_expect_eq(v->n, 13, "free dropped %llu kept records", 13 - (unsigned long long)v->n);
	cr_expect_eq(v->bad_order + v->dup, 0);
	free(v);
}

static struct perfring_reactor *ordered_reactor(struct synth_session *b, struct fakeloop *l,
						uint32_t budget)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = budget, .flush_ms = 1000,
					 .order_window_ns = WIN_NS };

	*l = (struct fakeloop){ 0 };
	cr_assert_eq(perfring_reactor_new(b->s, &lo, &fakeloop_ops, l, &l->r), 0, "%s",
		     perfring_session_last_error(b->s));
	return l->r;
}

/* A budget stops each pass and asks for a soon turn; what the window kept
 * arms the timer for its due time, well before the flush; free delivers it. */
Test(order, reactor_budget_timer_and_free)
{
	struct synth_session b;
	struct seen *v;
	struct fakeloop l;
	int turns;

	v = two_sides(&b, 20, 3); /* 40 old, 3 kept */
	ordered_reactor(&b, &l, 7);
	cr_expect_eq(v->n, 7, "the first pass went past its budget: %llu",
		     (unsigned long long)v->n);
	cr_expect(l.soon, "a budgeted pass with more did not ask for a turn");
	turns = fakeloop_soon_turns(&l, 100);
	cr_expect_eq(v->n, 40);
	cr_expect_geq(turns, 5, "%d turns for 40 records at 7 a pass", turns);
	cr_expect_eq(v->bad_order + v->dup, 0);
	/* The oldest kept is 10 s ahead: due later than the 1000 ms flush,
	 * which stays the timer. */
	cr_expect_eq(l.timer_ms, 1000);
	perfring_reactor_on_timer(l.r);
	cr_expect_eq(v->n, 40, "a timer pass delivered a kept record early");
	perfring_reactor_free(l.r);
	cr_expect_eq(v->n, 43, "free left %llu kept records", 43 - (unsigned long long)v->n);
	cr_expect_eq(v->bad_order + v->dup, 0);
	synth_session_free(&b);
	free(v);
}

/* A kept record due sooner than the flush: the timer is armed for it. */
Test(order, reactor_timer_for_the_oldest_kept)
{
	struct synth_session b;
	struct seen *v;
	struct fakeloop l;
	uint64_t now = pr_now_ns();

	v = two_rings(&b, 1u << 16);
	put(&b, &(struct rec){ 0, now - 1000000000ull, 0 }, 0);
	put(&b, &(struct rec){ 1, now + 20000000ull, 0 }, 1); /* due at now + 70 ms */
	ordered_reactor(&b, &l, 0);
	cr_expect_eq(v->n, 1);
	cr_expect_gt(l.timer_ms, 0);
	cr_expect_leq(l.timer_ms, 71, "armed for %u ms, the kept record is due in 70",
		      l.timer_ms);
	/* Fire it when it is due: the record goes, and the flush is armed again. */
	while (pr_now_ns() < now + 20000000ull + WIN_NS)
		;
	perfring_reactor_on_timer(l.r);
	cr_expect_eq(v->n, 2);
	cr_expect_eq(l.timer_ms, 1000);
	perfring_reactor_free(l.r);
	synth_session_free(&b);
	free(v);
}

/* A stream of wakeup passes that each keep records: the timer armed for
 * the oldest kept fires no later for them, so a pass re-arms it only when
 * a new one would fire sooner (a timer rounds up to whole ms), not on every
 * pass: re-arming is a syscall with the built-in epoll driver (a timerfd),
 * and it cost a 2 ms window 1.77x the CPU per record in parse_until. */
Test(order, reactor_stream_keeps_its_timer)
{
	struct synth_session b;
	struct seen *v;
	struct fakeloop l;
	uint64_t first = pr_now_ns(), last = first;
	int i, armed;

	v = two_rings(&b, 1u << 16);
	ordered_reactor(&b, &l, 0);
	armed = l.timers;
	for (i = 0; i < 200; i++) {
		last = i ? pr_now_ns() : first;
		put(&b, &(struct rec){ 0, last, 0 }, (size_t)i);
		perfring_reactor_on_ready(l.r, 0, POLLIN);
		cr_assert(l.soon, "an ordered reactor's wakeup asks for a soon turn");
		l.soon = false;
		perfring_reactor_on_soon(l.r); /* the pass */
	}
	cr_expect_eq(v->n, 0, "every record is younger than the window: all kept");
	cr_expect_leq(l.timers - armed, 20, "200 passes re-armed the timer %d times",
		      l.timers - armed);
	cr_expect_leq(l.timer_ms, WIN_NS / 1000000 + 1, "armed for %u ms", l.timer_ms);
	/* It still fires in time for the oldest: all of them go by then. */
	while (pr_now_ns() < last + WIN_NS + 1000000ull)
		;
	perfring_reactor_on_timer(l.r);
	cr_expect_eq(v->n, 200);
	perfring_reactor_free(l.r);
	synth_session_free(&b);
	free(v);
}

/* R1 and R7 inside a callback while the window keeps records. */
struct inside {
	struct seen v;
	struct perfring_session *s;
	int busy, calls;
	bool free_it;
};

static int on_inside(const struct perfring_sample *smp, void *ctx)
{
	struct inside *in = ctx;

	in->calls++;
	if (perfring_session_parse_all(in->s) == -EBUSY)
		in->busy++;
	if (in->free_it && in->calls == 2)
		perfring_session_free(in->s);
	return on_sample(smp, &in->v);
}

static void inside_run(bool free_it)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1 };
	struct inside *in = calloc(1, sizeof(*in));
	struct synth_session b;
	uint64_t now = pr_now_ns();
	size_t i;
	int n;

	cr_assert_eq(synth_session_new(&b, 2, 1u << 16, &a, on_inside, in), 0);
	in->s = b.s;
	in->free_it = free_it;
	in->v.last_cpu = -1;
	b.s->o.order_window_ns = WIN_NS;
	for (i = 0; i < 6; i++)
		put(&b, &(struct rec){ (uint32_t)(i % 2), now - 1000000000ull + i, 0 }, i);
	for (i = 6; i < 10; i++)
		put(&b, &(struct rec){ (uint32_t)(i % 2), now + 10000000000ull + i, 0 }, i);
	n = perfring_session_parse_all(b.s);
	if (free_it) {
		/* R7: delivery stops after the freeing callback's record. */
		cr_expect_eq(n, -ECANCELED);
		cr_expect_eq(in->calls, 2);
		b.s = NULL; /* gone with the parse; the rings are still ours */
	} else {
		cr_expect_eq(n, 6);
		cr_expect_eq(in->busy, 6, "a parse inside a callback was not -EBUSY");
	}
	synth_session_free(&b);
	free(in);
}

Test(order, r1_inside_a_callback_with_records_kept) { inside_run(false); }
Test(order, r7_free_inside_a_callback_with_records_kept) { inside_run(true); }

Test(order, due_saturates)
{
	cr_expect_eq(pr_pass_due(10, 5), 15);
	cr_expect_eq(pr_pass_due(10, UINT64_MAX), UINT64_MAX - 1);
	cr_expect_eq(pr_pass_due(UINT64_MAX, 1), UINT64_MAX - 1);
}

/* A window above 60 s, or with a flight recorder: -EINVAL, said. */
Test(order, window_options_refused)
{
	struct perfring_opts o = { .sz = sizeof(o), .order_window_ns = 61000000000ull };
	struct perfring_session *s = NULL;

	cr_expect_eq(perfring_session_new(&o, &s), -EINVAL);
	cr_expect_null(s);
	cr_expect(strstr(perfring_session_last_error(NULL), "order_window_ns"), "%s",
		  perfring_session_last_error(NULL));
	o = (struct perfring_opts){ .sz = sizeof(o), .overwrite = true, .order_window_ns = 1000 };
	cr_expect_eq(perfring_session_new(&o, &s), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(NULL), "order_window_ns"), "%s",
		  perfring_session_last_error(NULL));
	o.order_window_ns = 0;
	cr_expect_eq(perfring_session_new(&o, &s), 0);
	perfring_session_free(s);
}

/* A loop window of any size: kept records wait for the end, the timer is
 * never armed for them in the past (no spin), free delivers them. */
Test(order, reactor_huge_window)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER,
					 .order_window_ns = UINT64_MAX };
	struct synth_session b;
	struct seen *v;
	struct fakeloop l = { 0 };

	v = two_rings(&b, 1u << 16);
	put(&b, &(struct rec){ 0, 5, 0 }, 0);
	put(&b, &(struct rec){ 1, 6, 0 }, 1);
	cr_assert_eq(perfring_reactor_new(b.s, &lo, &fakeloop_ops, &l, &l.r), 0);
	cr_expect_eq(v->n, 0);
	cr_expect_eq(l.timer_ms, UINT32_MAX, "armed for %u ms", l.timer_ms);
	perfring_reactor_on_timer(l.r);
	cr_expect_eq(v->n, 0);
	perfring_reactor_free(l.r);
	cr_expect_eq(v->n, 2);
	synth_session_free(&b);
	free(v);
}
