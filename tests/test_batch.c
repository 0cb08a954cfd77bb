/* SPDX-License-Identifier: MIT */
/*
 * The merge's batches (core/batch.c) against its tree: two synthetic
 * sessions get the same records, one merged by the tree alone and one
 * trying a batch after every step, and both must deliver the same sequence
 * (samples and kernel records, each with its CPU, sequence number and time)
 * and count the same stats. The time patterns aim at each way a window
 * ends: ties across rings (long bucket lists), clocks offset per ring,
 * time going back inside a ring (late records), jumps far past the
 * buckets, times near UINT64_MAX, records of other kinds in between, rings
 * that wrap, and callbacks that stop the parse.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/merge.h"
#include "synthsession.h"

#define MAXOUT 40000

enum tpat { JITTER, TIES, SKEWED_CLOCKS, BACKWARDS, JUMPS, NEAR_MAX, T__N };

struct ev { uint64_t seq, time; int cpu; int kind; };

struct out {
	struct ev *e;
	size_t n;
	uint64_t stop_every, calls;
};

static void add(struct out *o, uint64_t seq, uint64_t time, int cpu, int kind)
{
	cr_assert_lt(o->n, MAXOUT);
	o->e[o->n++] = (struct ev){ seq, time, cpu, kind };
}

static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct out *o = ctx;

	add(o, smp->pid, smp->time, smp->cpu, 0);
	return o->stop_every && ++o->calls % o->stop_every == 0;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct out *o = ctx;

	add(o, r->pid, r->time, r->cpu, (int)r->type);
	return 0;
}

struct gen {
	enum tpat t;
	size_t k;
	uint64_t rnd, j, now;
	bool mixed; /* one record in 97 a COMM, an unknown id or a malformed tail;
		       samples of three sizes and two cpumodes */
};

static uint64_t next_rand(struct gen *g)
{
	g->rnd = g->rnd * 6364136223846793005ull + 1442695040888963407ull;
	return g->rnd >> 17;
}

/* Ring and time of record j. */
static void pick(struct gen *g, size_t *ring, uint64_t *t)
{
	uint64_t r = next_rand(g);

	*ring = (r % 7 == 0) ? (size_t)(r >> 8) % g->k : (size_t)(g->j % g->k);
	g->now += 1 + (r >> 20) % 2000;
	*t = g->now;
	switch (g->t) {
	case TIES:
		*t = 1000 + g->j / 40 * 7;
		break;
	case SKEWED_CLOCKS:
		*t += (uint64_t)*ring * 150000;
		break;
	case BACKWARDS:
		if (r % 13 == 0)
			*t -= (r >> 12) % 50000;
		break;
	case JUMPS:
		if (r % 301 == 0)
			g->now += (r % 2) ? (1ull << 40) : (1ull << 22);
		*t = g->now;
		break;
	case NEAR_MAX:
		*t = UINT64_MAX - 3000000 + g->j * 3;
		if (r % 53 == 0)
			*t = UINT64_MAX - (r % 2);
		break;
	default:
		break;
	}
}

/* One record into ring r of both sessions. -ENOSPC: full. */
static int put(struct synth_session *b, struct gen *g, size_t r, uint64_t t)
{
	uint32_t raw[5] = { 7 };
	struct synth_fields f = { .pid = (uint32_t)g->j, .tid = 1, .time = t, .raw = raw,
				  .raw_size = 4, .misc = PERF_RECORD_MISC_USER };
	uint8_t rec[256];
	size_t len, i;
	int err = 0, what = g->mixed ? (int)(g->j % 97) : -1;

	/* Mixed: samples come in runs of equal size (4, 12 or 20 bytes of RAW),
	 * and their cpumode varies within a run. */
	if (g->mixed) {
		f.raw_size = 4 + 8 * (uint32_t)((g->j / 5) % 3);
		f.misc = g->j % 3 ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	}

	if (what == 5) {
		struct synth_fields tr = { .pid = (uint32_t)g->j, .tid = 1, .time = t,
					   .cpu = (uint32_t)r, .identifier = synth_leader_id(r) };

		/* Its pid and tid spell the event's id where a sample has it,
		 * and it is as long as the samples of 12 bytes of RAW: only
		 * its type tells it from one. */
		len = synth_comm(rec, sizeof(rec), (uint32_t)synth_event_id(r), 0, "x", false,
				 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_CPU, &tr);
		for (i = 0; i < 2 && !err; i++)
			err = synth_put(&b[i].rings[r], rec, len);
		return err;
	}
	len = synth_session_template(&b[0], r, &f, rec, sizeof(rec));
	if (what == 11)
		memcpy(rec + 8, &(uint64_t){ 77777 }, 8); /* IDENTIFIER no event owns */
	if (what == 17) /* RAW size past the record's end */
		memcpy(rec + 8 + 8 * 4, &(uint32_t){ 4096 }, 4);
	for (i = 0; i < 2 && !err; i++)
		err = synth_session_put(&b[i], r, rec, len, synth_time_offset(synth_session_sample_type(&b[i])), t);
	return err;
}

static void drain(struct synth_session *b)
{
	uint64_t before;
	int guard = 0;

	do {
		before = b->s->merge->records;
		cr_assert_geq(perfring_session_parse_all(b->s), 0);
	} while (b->s->merge->records != before && ++guard < 100000);
}

static void same_stats(struct synth_session *b, size_t k)
{
	struct perfring_cpu_stats a, z;
	size_t r;

	for (r = 0; r < k; r++) {
		cr_assert_eq(perfring_session_cpu_stats(b[0].s, (int)r, &a), 0);
		cr_assert_eq(perfring_session_cpu_stats(b[1].s, (int)r, &z), 0);
		cr_expect_eq(a.records, z.records, "ring %zu records", r);
		cr_expect_eq(a.samples, z.samples, "ring %zu samples", r);
		cr_expect_eq(a.bytes, z.bytes, "ring %zu bytes", r);
		cr_expect_eq(a.late, z.late, "ring %zu late: %llu, batched %llu", r,
			     (unsigned long long)a.late, (unsigned long long)z.late);
		cr_expect_eq(a.unknown, z.unknown, "ring %zu unknown", r);
		cr_expect_eq(a.corrupt, z.corrupt, "ring %zu corrupt", r);
	}
}

static void same_output(const struct out *o)
{
	size_t i;

	cr_assert_eq(o[0].n, o[1].n, "tree delivered %zu, batches %zu", o[0].n, o[1].n);
	for (i = 0; i < o[0].n; i++)
		cr_assert(!memcmp(&o[0].e[i], &o[1].e[i], sizeof(o[0].e[i])),
			  "record %zu: tree seq %llu cpu %d time %llu, batches seq %llu cpu %d "
			  "time %llu", i, (unsigned long long)o[0].e[i].seq, o[0].e[i].cpu,
			  (unsigned long long)o[0].e[i].time, (unsigned long long)o[1].e[i].seq,
			  o[1].e[i].cpu, (unsigned long long)o[1].e[i].time);
}

/* n records in k rings of ring_size bytes, parsed whenever a ring fills. */
static void compare(enum tpat t, size_t k, uint64_t ring_size, size_t n, uint64_t stop_every,
		    bool mixed)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_RAW };
	struct gen g = { .t = t, .k = k, .rnd = k * 31 + t, .now = 1000000, .mixed = mixed };
	struct synth_session b[2];
	struct out o[2] = { { 0 } };
	uint64_t tm;
	size_t i, r;
	int err;

	for (i = 0; i < 2; i++) {
		o[i].e = calloc(MAXOUT, sizeof(*o[i].e));
		o[i].stop_every = stop_every;
		cr_assert_not_null(o[i].e);
		cr_assert_eq(synth_session_new(&b[i], k, ring_size, &a, on_sample, &o[i]), 0);
		b[i].s->reg.sink = (struct pr_sink){ on_record, &o[i], PERFRING_REC_ALL };
		cr_assert_not_null(b[i].s->merge->batch, "no batches for %zu rings", k);
	}
	b[0].s->merge->batch->after = b[0].s->merge->batch->wait = b[0].s->merge->batch->wait_max = UINT32_MAX;
	b[1].s->merge->batch->after = b[1].s->merge->batch->wait = b[1].s->merge->batch->wait_max = 1;
	b[1].s->merge->batch->min_total = 1;
	for (g.j = 0; g.j < n;) {
		pick(&g, &r, &tm);
		while ((err = put(b, &g, r, tm)) == -ENOSPC) { /* both rings are full alike */
			drain(&b[0]);
			drain(&b[1]);
		}
		cr_assert_eq(err, 0);
		g.j++;
	}
	drain(&b[0]);
	drain(&b[1]);
	same_output(o);
	same_stats(b, k);
	cr_expect_eq(b[0].s->merge->batch->batches, 0);
	/* Each pattern leaves a good part of the stream to batches. */
	cr_expect_geq(b[1].s->merge->batch->records, o[1].n / 8, "batches delivered %llu of %zu",
		      (unsigned long long)b[1].s->merge->batch->records, o[1].n);
	cr_expect_geq(o[0].n, n * 9 / 10, "delivered %zu of %zu", o[0].n, n);
	for (i = 0; i < 2; i++) {
		synth_session_free(&b[i]);
		free(o[i].e);
	}
}

#define PATTERN(name, t)                                                                   \
	Test(batch, name##_fine) { compare(t, 16, 1 << 16, 30000, 0, false); }            \
	Test(batch, name##_two_rings) { compare(t, 2, 1 << 17, 30000, 0, false); }        \
	Test(batch, name##_many_rings) { compare(t, 300, 1 << 12, 30000, 0, false); }     \
	Test(batch, name##_wraps) { compare(t, 8, 4096, 20000, 0, false); }               \
	Test(batch, name##_mixed) { compare(t, 12, 1 << 15, 30000, 0, true); }            \
	Test(batch, name##_stops) { compare(t, 16, 1 << 16, 20000, 37, true); }

PATTERN(jitter, JITTER)
PATTERN(ties, TIES)
PATTERN(skewed_clocks, SKEWED_CLOCKS)
PATTERN(backwards, BACKWARDS)
PATTERN(jumps, JUMPS)
PATTERN(near_max, NEAR_MAX)

/* Records the window takes but the decode refuses (RAW size past the end)
 * cut a batch short. Such a batch counts as a refusal, so a stream of them
 * does not pay a whole batch for each record: tries back off. */
Test(batch, refused_records_back_off)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_RAW };
	struct perfring_cpu_stats st;
	struct synth_session b;
	struct out o = { 0 };
	const size_t k = 8, n = 20000;
	uint32_t raw = 7;
	struct synth_fields f = { .tid = 1, .raw = &raw, .raw_size = sizeof(raw) };
	uint64_t corrupt = 0;
	uint8_t rec[256];
	size_t i, len;

	o.e = calloc(MAXOUT, sizeof(*o.e));
	cr_assert_not_null(o.e);
	cr_assert_eq(synth_session_new(&b, k, 1 << 18, &a, on_sample, &o), 0);
	cr_assert_not_null(b.s->merge->batch);
	for (i = 0; i < n; i++) {
		f.pid = (uint32_t)i;
		len = synth_session_template(&b, i % k, &f, rec, sizeof(rec));
		memcpy(rec + 8 + 8 * 4, &(uint32_t){ 4096 }, 4);
		cr_assert_eq(synth_session_put(&b, i % k, rec, len, synth_time_offset(synth_session_sample_type(&b)),
				       1000 + i), 0);
	}
	cr_assert_geq(perfring_session_parse_all(b.s), 0);
	for (i = 0; i < k; i++) {
		cr_assert_eq(perfring_session_cpu_stats(b.s, (int)i, &st), 0);
		corrupt += st.corrupt;
	}
	cr_expect_eq(corrupt, n, "every record is counted corrupt");
	cr_expect_eq(o.n, 0);
	/* One try after 64 steps, then 128, 256, ... up to 65536 apart: about
	 * a dozen for 20,000 records, where a retry after every step made
	 * 20,000. */
	cr_expect_leq(b.s->merge->batch->batches, 16, "%llu batches",
		      (unsigned long long)b.s->merge->batch->batches);
	synth_session_free(&b);
	free(o.e);
}
