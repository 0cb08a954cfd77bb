/* SPDX-License-Identifier: MIT */
/*
 * Issue 17, item 13: a field an event's sample_type lacks is zero, in every
 * parse. Synthetic rings carry four events mixed record by record and in
 * runs: a tracepoint-shaped one (the forced fields and RAW), a forced-only
 * one (no RAW), a general one without RAW (IP, ADDR, PERIOD) and a general
 * one with RAW and CALLCHAIN. Every field of every sample is checked against
 * what its record holds and its sample_type allows, through parse_all (the
 * merge's tree alone, and batches after every step), parse_for_cpu and the
 * pull form. Before the fix, a forced-only sample after a tracepoint's in a
 * merged parse kept the tracepoint's raw and raw_size.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthsession.h"

#define RINGS 4
#define PER_RING 6000
#define NEV 4

enum { EV_TP, EV_FORCED, EV_GENERAL, EV_RAW_CHAIN };

static const uint64_t ev_type[NEV] = {
	[EV_TP] = PERF_SAMPLE_RAW,
	[EV_FORCED] = 0,
	[EV_GENERAL] = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD,
	[EV_RAW_CHAIN] = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW,
};
/* Kinds that are not software events of one kind twice (R12). */
static const uint32_t ev_attr_type[NEV] = { PERF_TYPE_TRACEPOINT, PERF_TYPE_SOFTWARE,
					    PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT };
static const uint64_t ev_config[NEV] = { 1, PERF_COUNT_SW_PAGE_FAULTS,
					 PERF_COUNT_SW_CPU_MIGRATIONS, 2 };

struct check {
	struct synth_session b;
	uint8_t *event_of;          /* [ring * PER_RING + j]: which event wrote it */
	uint64_t delivered[NEV], bad[NEV];
	char first_bad[256];
};

struct evctx { struct check *c; size_t k; };

/* Record j of ring r: a time unique across rings, every field from it. */
static uint64_t time_of(size_t r, size_t j)
{
	return 1000 + (uint64_t)j * RINGS + r;
}

static uint32_t raw_size_of(uint64_t seq)
{
	return 4 + 8 * (uint32_t)(seq % 5); /* 4 + size a multiple of 8 */
}

static void raw_of(uint64_t seq, uint8_t *raw, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		raw[i] = (uint8_t)(seq * 7 + i + 1);
}

static void fields_of(uint64_t seq, struct synth_fields *f, uint8_t *raw, uint64_t *chain)
{
	memset(f, 0, sizeof(*f));
	f->pid = (uint32_t)seq * 3 + 1;
	f->tid = (uint32_t)seq * 5 + 2;
	f->time = seq;
	f->ip = 0x400000 + seq;
	f->addr = 0x7f0000000000 + seq;
	f->period = seq + 11;
	f->raw_size = raw_size_of(seq);
	raw_of(seq, raw, f->raw_size);
	f->raw = raw;
	chain[0] = 0xffffffff81000000ull + seq;
	chain[1] = 0x400000 + seq;
	f->callchain = chain;
	f->callchain_nr = 1 + seq % 2;
}

#define BAD(cond, ...)                                                                   \
	do {                                                                             \
		if (!(cond)) {                                                           \
			if (!c->first_bad[0])                                            \
				snprintf(c->first_bad, sizeof(c->first_bad), __VA_ARGS__); \
			c->bad[k]++;                                                     \
			return;                                                          \
		}                                                                        \
	} while (0)

/* Every field, against the record and what sample_type allows. */
static void check_sample(struct check *c, size_t k, const struct perfring_sample *s)
{
	uint64_t st = ev_type[k], seq = s->time;
	size_t r = (size_t)s->cpu, j = (size_t)((seq - 1000) / RINGS);
	uint8_t raw[64];

	c->delivered[k]++;
	BAD(r < RINGS && seq >= 1000 && (seq - 1000) % RINGS == r && j < PER_RING,
	    "event %zu: cpu %d time %llu is no record written", k, s->cpu,
	    (unsigned long long)seq);
	BAD(c->event_of[r * PER_RING + j] == k, "ring %zu record %zu of event %u went to %zu", r,
	    j, c->event_of[r * PER_RING + j], k);
	BAD(s->event == c->b.evs[k] && s->record && s->record->type == PERF_RECORD_SAMPLE,
	    "event %zu: wrong event or record pointer", k);
	BAD(s->id == synth_event_k_id(r, k), "event %zu: id %llu", k, (unsigned long long)s->id);
	BAD(s->pid == (uint32_t)seq * 3 + 1 && s->tid == (uint32_t)seq * 5 + 2,
	    "event %zu: pid %u tid %u", k, s->pid, s->tid);
	BAD(s->ip == (st & PERF_SAMPLE_IP ? 0x400000 + seq : 0), "event %zu seq %llu: ip %#llx", k,
	    (unsigned long long)seq, (unsigned long long)s->ip);
	BAD(s->addr == (st & PERF_SAMPLE_ADDR ? 0x7f0000000000 + seq : 0),
	    "event %zu seq %llu: addr %#llx", k, (unsigned long long)seq,
	    (unsigned long long)s->addr);
	BAD(s->period == (st & PERF_SAMPLE_PERIOD ? seq + 11 : 0),
	    "event %zu seq %llu: period %llu", k, (unsigned long long)seq,
	    (unsigned long long)s->period);
	BAD(s->stream_id == 0, "event %zu: stream_id %llu", k, (unsigned long long)s->stream_id);
	if (st & PERF_SAMPLE_CALLCHAIN)
		BAD(s->callchain_nr == 1 + seq % 2 && s->callchain &&
		    s->callchain[0] == 0xffffffff81000000ull + seq,
		    "event %zu seq %llu: callchain of %llu", k, (unsigned long long)seq,
		    (unsigned long long)s->callchain_nr);
	else
		BAD(!s->callchain && !s->callchain_nr, "event %zu seq %llu: stale callchain", k,
		    (unsigned long long)seq);
	if (!(st & PERF_SAMPLE_RAW)) {
		BAD(!s->raw && !s->raw_size, "event %zu seq %llu: stale raw of %u bytes", k,
		    (unsigned long long)seq, s->raw_size);
		return;
	}
	raw_of(seq, raw, raw_size_of(seq));
	BAD(s->raw && s->raw_size == raw_size_of(seq) && !memcmp(s->raw, raw, s->raw_size),
	    "event %zu seq %llu: raw of %u bytes, want %u", k, (unsigned long long)seq,
	    s->raw_size, raw_size_of(seq));
}

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	const struct evctx *e = ctx;

	check_sample(e->c, e->k, s);
	return 0;
}

/* Mixed record by record (a new event at random), then runs of 1 to 300,
 * then one event per 1500-record stretch: every change of shape in every
 * parse form, and long enough runs of one event for batches to take. */
static size_t pick_event(size_t j, uint64_t *rnd, size_t *left, size_t *cur)
{
	*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
	if (j < PER_RING / 3)
		return (size_t)(*rnd >> 33) % NEV;
	if (j >= 2 * PER_RING / 3)
		return (j / 1500) % NEV;
	if (!*left) {
		*cur = (size_t)(*rnd >> 33) % NEV;
		*left = 1 + (size_t)(*rnd >> 17) % 300;
	}
	--*left;
	return *cur;
}

static void fill(struct check *c)
{
	uint8_t rec[512], raw[64];
	uint64_t chain[2], rnd = 12345;
	struct synth_fields f;
	size_t r, j, k, left = 0, cur = 0, len;

	for (j = 0; j < PER_RING; j++) {
		for (r = 0; r < RINGS; r++) {
			k = pick_event(j, &rnd, &left, &cur);
			c->event_of[r * PER_RING + j] = (uint8_t)k;
			fields_of(time_of(r, j), &f, raw, chain);
			len = synth_session_template_k(&c->b, r, k, &f, rec, sizeof(rec));
			cr_assert_gt(len, 0);
			cr_assert_eq(synth_put(&c->b.rings[r], rec, len), 0);
		}
	}
}

static struct evctx ctxs[NEV];

static void setup(struct check *c)
{
	struct perf_event_attr a[NEV];
	struct synth_event_spec spec[NEV];
	size_t k;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < NEV; k++) {
		a[k] = (struct perf_event_attr){ .type = ev_attr_type[k], .config = ev_config[k],
						 .sample_period = 1, .sample_type = ev_type[k] };
		ctxs[k] = (struct evctx){ c, k };
		spec[k] = (struct synth_event_spec){ &a[k], on_sample, &ctxs[k] };
	}
	cr_assert_eq(synth_session_new_events(&c->b, RINGS, 1 << 20, spec, NEV), 0);
	/* The two fixed shapes of the fast path, and two general ones. */
	cr_assert_eq(synth_session_sample_type_k(&c->b, EV_TP), PR_SAMPLE_TRACEPOINT);
	cr_assert_eq(synth_session_sample_type_k(&c->b, EV_FORCED), PR_SAMPLE_FORCED);
	c->event_of = calloc(RINGS * PER_RING, 1);
	cr_assert_not_null(c->event_of);
	fill(c);
}

static void verdict(struct check *c, const char *how)
{
	uint64_t total = 0;

	for (size_t k = 0; k < NEV; k++) {
		total += c->delivered[k];
		cr_expect_gt(c->delivered[k], 0, "%s: event %zu got nothing", how, k);
		cr_expect_eq(c->bad[k], 0, "%s: %llu of event %zu's %llu samples are wrong; first: %s",
			     how, (unsigned long long)c->bad[k], k,
			     (unsigned long long)c->delivered[k], c->first_bad);
	}
	cr_expect_eq(total, (uint64_t)RINGS * PER_RING, "%s: delivered %llu of %d", how,
		     (unsigned long long)total, RINGS * PER_RING);
	for (size_t r = 0; r < RINGS; r++) {
		struct perfring_cpu_stats st;

		cr_assert_eq(perfring_session_cpu_stats(c->b.s, (int)r, &st), 0);
		cr_expect_eq(st.corrupt + st.unknown + st.late, 0, "%s: ring %zu", how, r);
	}
	synth_session_free(&c->b);
	free(c->event_of);
}

static void parse_by(enum synth_form f)
{
	struct check c;

	setup(&c);
	cr_assert_eq(synth_session_parse(&c.b, f), RINGS * PER_RING, "%s", synth_form_name[f]);
	verdict(&c, synth_form_name[f]);
}

Test(stale, parse_all_tree) { parse_by(SYNTH_TREE); }
Test(stale, parse_all_batches) { parse_by(SYNTH_BATCHES); }
Test(stale, parse_for_cpu) { parse_by(SYNTH_PER_CPU); }
Test(stale, pull) { parse_by(SYNTH_PULL); }
