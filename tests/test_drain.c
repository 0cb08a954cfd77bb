/* SPDX-License-Identifier: MIT */
/*
 * One ring's fast loop (parse_for_cpu, parse_for_cpu_n) and the pull form on
 * synthetic rings: the fields a fixed-shape decode does not write are zero,
 * whatever the caller's sample held; max stops exactly; a callback that
 * changes callbacks mid-batch is obeyed from the next record on.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "synthsession.h"

#define N 300

struct tally {
	uint64_t n, bad, time_sum;
};

/* Every field the layout does not carry must be zero: the fast path reuses
 * one sample and a fixed shape writes only its own fields. */
static bool clean(const struct perfring_sample *smp, uint64_t st)
{
	return (st & PERF_SAMPLE_IP ? smp->ip == 9 : smp->ip == 0) && smp->addr == 0 &&
	       smp->period == 0 && smp->stream_id == 0 &&
	       (st & PERF_SAMPLE_RAW ? smp->raw != NULL && smp->raw_size == 4 :
				       smp->raw == NULL && smp->raw_size == 0) &&
	       (st & PERF_SAMPLE_CALLCHAIN ? smp->callchain_nr == 2 :
					     smp->callchain == NULL && smp->callchain_nr == 0);
}

static uint64_t tally_st;

static int count(const struct perfring_sample *smp, void *ctx)
{
	struct tally *t = ctx;

	t->n++;
	t->time_sum += smp->time;
	t->bad += !clean(smp, tally_st) || smp->pid != 4242 || smp->cpu != 0;
	return 0;
}

static void fill(struct synth_session *b, size_t n)
{
	static const uint64_t chain[2] = { 5, 6 };
	uint32_t raw = 1;
	struct synth_fields f = { .pid = 4242, .tid = 1, .ip = 9, .callchain = chain,
				  .callchain_nr = 2, .raw = &raw, .raw_size = sizeof(raw) };
	uint8_t rec[256];
	size_t len = synth_session_template(b, 0, &f, rec, sizeof(rec)), i;

	cr_assert_gt(len, 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(synth_session_put(b, 0, rec, len, synth_time_offset(synth_session_sample_type(b)),
				       100 + i), 0);
}

static void session(struct synth_session *b, uint64_t st, perfring_sample_fn fn, void *ctx)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = st };

	cr_assert_eq(synth_session_new(b, 1, 65536, &a, fn, ctx), 0);
	tally_st = synth_session_sample_type(b);
	fill(b, N);
}

static const uint64_t shapes[] = { 0, PERF_SAMPLE_RAW, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
				   PERF_SAMPLE_IP | PERF_SAMPLE_RAW };

Test(drain, pull_overwrites_whatever_the_caller_held)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	struct synth_session b;
	size_t i;
	int n, k;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		session(&b, shapes[i], NULL, NULL);
		for (n = 0;; n++) {
			memset(&smp, 0xa5, sizeof(smp));
			k = perfring_cpu_next(b.s, 0, &smp, &rec);
			if (k == 0)
				break;
			cr_assert_eq(k, PERFRING_NEXT_SAMPLE);
			cr_assert(clean(&smp, tally_st), "shape %zu, record %d: a stale field", i, n);
			cr_assert_eq(smp.time, 100 + (uint64_t)n);
			cr_assert_eq(smp.event, b.ev);
		}
		cr_expect_eq(n, N);
		cr_expect_eq(perfring_cpu_commit(b.s, 0), 0);
		synth_session_free(&b);
	}
}

Test(drain, every_shape_delivers_clean_samples)
{
	struct synth_session b;
	struct tally t;
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		t = (struct tally){ 0 };
		session(&b, shapes[i], count, &t);
		cr_expect_eq(perfring_session_parse_for_cpu(b.s, 0), N);
		cr_expect_eq(t.n, N);
		cr_expect_eq(t.bad, 0, "shape %zu: %llu samples with wrong fields", i,
			     (unsigned long long)t.bad);
		cr_expect_eq(t.time_sum, N * 100ull + N * (N - 1ull) / 2);
		synth_session_free(&b);
	}
}

Test(drain, max_stops_exactly_and_says_more)
{
	struct synth_session b;
	struct tally t = { 0 };
	bool more = false;
	int got = 0, n;

	session(&b, PERF_SAMPLE_RAW, count, &t);
	while ((n = perfring_session_parse_for_cpu_n(b.s, 0, 7, &more)) > 0) {
		cr_assert_leq(n, 7);
		got += n;
		cr_assert_eq(more, got < N, "more says %d after %d of %d", more, got, N);
	}
	cr_expect_eq(n, 0);
	cr_expect_eq(got, N);
	cr_expect_eq(t.n, N);
	synth_session_free(&b);
}

/* The first callback hands the event to the second after 10 records. */
struct swap {
	struct perfring_event *ev;
	uint64_t first, second;
};

static int second_cb(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	((struct swap *)ctx)->second++;
	return 0;
}

static int first_cb(const struct perfring_sample *smp, void *ctx)
{
	struct swap *sw = ctx;

	(void)smp;
	if (++sw->first == 10)
		cr_assert_eq(perfring_event_set_callback(sw->ev, second_cb, sw), 0);
	return 0;
}

Test(drain, callback_changed_inside_a_callback)
{
	struct synth_session b;
	struct swap sw = { 0 };

	session(&b, 0, first_cb, &sw);
	sw.ev = b.ev;
	cr_expect_eq(perfring_session_parse_for_cpu(b.s, 0), N);
	cr_expect_eq(sw.first, 10);
	cr_expect_eq(sw.second, N - 10);
	synth_session_free(&b);
}

/* An unaligned tail 3 bytes before the end of the data area (only hostile
 * memory makes one): the fast path must not read a header there, since it
 * would run past the mapping; the ring is resynced and counted corrupt.
 * ASan builds catch the overread this test once found (fuzz_parse). */
Test(drain, unaligned_tail_at_the_end_of_the_ring)
{
	struct perfring_cpu_stats st;
	struct perfring_sample smp;
	struct perfring_record rec;
	struct synth_session b;
	struct tally t = { 0 };
	uint64_t size;

	session(&b, 0, count, &t);
	size = b.rings[0].size;
	cr_assert_eq(synth_ring_set_pos(&b.rings[0], size - 3), 0);
	synth_set_head(&b.rings[0], size + 5);
	b.s->cpu[0].ring = b.rings[0].ring;
	cr_expect_eq(perfring_session_parse_for_cpu(b.s, 0), 0);
	cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
	cr_expect_eq(st.corrupt, 1);
	cr_assert_eq(synth_ring_set_pos(&b.rings[0], 2 * size - 3), 0);
	synth_set_head(&b.rings[0], 2 * size + 5);
	b.s->cpu[0].ring = b.rings[0].ring;
	cr_expect_eq(perfring_cpu_next(b.s, 0, &smp, &rec), 0);
	cr_expect_eq(perfring_cpu_commit(b.s, 0), 0);
	cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
	cr_expect_eq(st.corrupt, 2);
	cr_expect_eq(t.n, 0);
	synth_session_free(&b);
}
