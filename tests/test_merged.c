/* SPDX-License-Identifier: MIT */
/*
 * parse_all over synthetic rings: every record exactly once, in (time, CPU)
 * order, whatever the interleaving (fine, coarse, random runs, ties), the
 * sample shape (fixed-offset forced or tracepoint, or a general layout),
 * kernel records, unknown ids and malformed samples mixed in, records that
 * wrap, and callbacks that stop the parse anywhere. The merge keeps each
 * ring's reading state in a cursor and in struct pr_cpu in turn; these tests
 * catch either going stale. Each test also runs as *_batch, with the merge
 * trying a batch (core/batch.c) after every step.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/merge.h"
#include "synthsession.h"

#define MAXR 40
#define TOTAL 6000

struct seen {
	uint64_t n, last_time, bad_order, dup, stop_every;
	int last_cpu;
	uint8_t got[TOTAL];
	uint64_t per_ring[MAXR], records, rec_per_ring[MAXR];
};

static void see(struct seen *v, uint64_t time, int cpu)
{
	if (time < v->last_time || (time == v->last_time && cpu < v->last_cpu))
		v->bad_order++;
	v->last_time = time;
	v->last_cpu = cpu;
}

/* The sample's pid is its sequence number in the whole stream. */
static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct seen *v = ctx;

	see(v, smp->time, smp->cpu);
	if (smp->pid >= TOTAL || v->got[smp->pid]++)
		v->dup++;
	if (smp->cpu >= 0 && smp->cpu < MAXR)
		v->per_ring[smp->cpu]++;
	v->n++;
	return v->stop_every && v->n % v->stop_every == 0;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct seen *v = ctx;

	see(v, r->time, r->cpu);
	if (r->cpu >= 0 && r->cpu < MAXR)
		v->rec_per_ring[r->cpu]++;
	v->records++;
	return 0;
}

enum pattern { FINE, COARSE, RANDOM };

/* What was written, to compare with what came out. */
struct plan {
	uint64_t samples, per_ring[MAXR], comm_per_ring[MAXR], unknown, corrupt;
};

static size_t ring_of(enum pattern p, size_t k, uint64_t j, uint64_t *rnd, size_t *cur)
{
	*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
	switch (p) {
	case FINE:
		return j % k;
	case COARSE:
		return (j / 100) % k;
	default:
		if ((*rnd >> 40) % 5 == 0)
			*cur = (*rnd >> 20) % k;
		return *cur;
	}
}

/* Where a sample's variable part starts: its RAW size or CALLCHAIN nr. */
static size_t tail_off(uint64_t st)
{
	return 8 + 8 * (size_t)__builtin_popcountll(st & ~(uint64_t)(PERF_SAMPLE_RAW |
								      PERF_SAMPLE_CALLCHAIN));
}

/* Makes a sample's RAW size or CALLCHAIN nr run past its end: the decoder
 * must skip it and count it corrupt. false for a sample without either. */
static bool corrupt_tail(uint8_t *rec, uint64_t st)
{
	if (st & PERF_SAMPLE_CALLCHAIN)
		memcpy(rec + tail_off(st), &(uint64_t){ 4096 }, 8);
	else if (st & PERF_SAMPLE_RAW)
		memcpy(rec + tail_off(st), &(uint32_t){ 4096 }, 4);
	return st & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW);
}

/* One record at time t into ring r: mostly samples; every 17th a COMM from
 * the leader, every 23rd a sample of an id no event owns, every 29th one
 * whose variable part is malformed. -ENOSPC: full. */
static int put_one(struct synth_session *b, size_t r, uint64_t seq, uint64_t t,
		   struct plan *pl)
{
	static const uint64_t chain[3] = { 1, 2, 3 };
	uint32_t raw = 7;
	struct synth_fields f = { .pid = (uint32_t)seq, .tid = 1, .time = t, .ip = 9,
				  .callchain = chain, .callchain_nr = 3, .raw = &raw,
				  .raw_size = sizeof(raw) };
	uint8_t rec[256];
	size_t len;
	bool bad;
	int err;

	if (seq % 17 == 5) {
		struct synth_fields tr = { .pid = 1, .tid = 1, .time = t, .cpu = (uint32_t)r,
					   .identifier = synth_leader_id(r) };

		len = synth_comm(rec, sizeof(rec), 1, 1, "x", false, PERF_SAMPLE_IDENTIFIER |
				 PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU, &tr);
		if (!(err = synth_put(&b->rings[r], rec, len)))
			pl->comm_per_ring[r]++;
		return err;
	}
	len = synth_session_template(b, r, &f, rec, sizeof(rec));
	if (seq % 23 == 7)
		memcpy(rec + 8, &(uint64_t){ 77777 }, 8); /* IDENTIFIER no event owns */
	bad = seq % 29 == 11 && corrupt_tail(rec, synth_session_sample_type(b));
	if ((err = synth_session_put(b, r, rec, len, synth_time_offset(synth_session_sample_type(b)), t)))
		return err;
	if (seq % 23 == 7) {
		pl->unknown++;
	} else if (bad) {
		pl->corrupt++;
	} else {
		pl->per_ring[r]++;
		pl->samples++;
	}
	return 0;
}

/* Parses until a parse reads nothing; a stop only ends one parse_all. */
static void drain_all(struct synth_session *b, struct seen *v)
{
	uint64_t before;
	int guard = 0;

	/* Records written after this drain may tie with the last one delivered
	 * from a higher CPU: across drains only time order holds. */
	v->last_cpu = -1;
	do {
		before = b->s->merge->records;
		cr_assert_geq(perfring_session_parse_all(b->s), 0);
	} while (b->s->merge->records != before && ++guard < 100000);
	cr_assert_lt(guard, 100000, "parse_all never ran dry");
}

static void check(struct synth_session *b, struct seen *v, const struct plan *pl, size_t k)
{
	struct perfring_cpu_stats st;
	uint64_t unknown = 0, corrupt = 0;
	size_t r;

	cr_expect_eq(v->bad_order, 0, "%llu records out of (time, CPU) order",
		     (unsigned long long)v->bad_order);
	cr_expect_eq(v->dup, 0, "%llu samples delivered twice", (unsigned long long)v->dup);
	cr_expect_eq(v->n, pl->samples, "delivered %llu of %llu samples",
		     (unsigned long long)v->n, (unsigned long long)pl->samples);
	for (r = 0; r < k; r++) {
		cr_expect_eq(v->per_ring[r], pl->per_ring[r], "ring %zu", r);
		cr_expect_eq(v->rec_per_ring[r], pl->comm_per_ring[r], "ring %zu COMM", r);
		cr_assert_eq(perfring_session_cpu_stats(b->s, (int)r, &st), 0);
		cr_expect_eq(st.samples, pl->per_ring[r], "ring %zu stats", r);
		cr_expect_eq(st.late, 0);
		unknown += st.unknown;
		corrupt += st.corrupt;
	}
	cr_expect_eq(unknown, pl->unknown);
	cr_expect_eq(corrupt, pl->corrupt);
}

/* Writes TOTAL records in rounds as big as the rings take, parsing after
 * each round; small rings make records wrap. */
/* batch: the merge tries a batch (batch.c) after every step, whatever its
 * size, instead of only after long stretches without runs. */
static void run(uint64_t sample_type, enum pattern p, size_t k, uint64_t ring_size,
		uint64_t stop_every, bool ties, bool batch)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = sample_type };
	struct synth_session b;
	struct seen *v = calloc(1, sizeof(*v));
	struct plan pl = { 0 };
	uint64_t j = 0, rnd = k * 977 + p, t;
	size_t cur = 0, r;
	int err;

	cr_assert_not_null(v);
	v->stop_every = stop_every;
	cr_assert_eq(synth_session_new(&b, k, ring_size, &a, on_sample, v), 0);
	b.s->reg.sink = (struct pr_sink){ .fn = on_record, .ctx = v, .mask = PERFRING_REC_ALL };
	if (batch && b.s->merge->batch) {
		b.s->merge->batch->after = b.s->merge->batch->wait = b.s->merge->batch->wait_max = 1;
		b.s->merge->batch->min_total = 1;
	}
	while (j < TOTAL) {
		r = ring_of(p, k, j, &rnd, &cur);
		t = 1000 + (ties ? j / 3 : j); /* ties: three records a timestamp */
		err = put_one(&b, r, j, t, &pl);
		if (err == -ENOSPC) {
			drain_all(&b, v);
			continue;
		}
		cr_assert_eq(err, 0);
		j++;
	}
	drain_all(&b, v);
	check(&b, v, &pl, k);
	/* A batch whose decode refused every record would still give the
	 * tree's output: only this shows that batches ran. */
	if (batch && b.s->merge->batch)
		cr_expect_gt(b.s->merge->batch->records, 0, "no batch delivered a record");
	synth_session_free(&b);
	free(v);
}

#define SHAPES_OF(name, st, b)                                                        \
	Test(merged, name##_fine) { run(st, FINE, 5, 4096, 0, false, b); }           \
	Test(merged, name##_coarse) { run(st, COARSE, 3, 4096, 0, false, b); }       \
	Test(merged, name##_random) { run(st, RANDOM, 7, 4096, 0, false, b); }       \
	Test(merged, name##_ties) { run(st, RANDOM, 4, 8192, 0, true, b); }          \
	Test(merged, name##_stops) { run(st, RANDOM, 6, 4096, 13, false, b); }       \
	Test(merged, name##_one_ring_stops) { run(st, FINE, 1, 4096, 7, false, b); } \
	Test(merged, name##_many_rings) { run(st, FINE, MAXR, 2048, 0, true, b); }
#define SHAPES(name, st) SHAPES_OF(name, st, false) SHAPES_OF(name##_batch, st, true)

SHAPES(forced, 0)
SHAPES(tracepoint, PERF_SAMPLE_RAW)
SHAPES(general, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN)
