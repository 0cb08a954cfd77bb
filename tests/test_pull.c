/* SPDX-License-Identifier: MIT */
/*
 * The batch pull (perfring_cpu_pull) on synthetic rings: the same records,
 * in the same order and with the same fields and stats, as parse_for_cpu,
 * for every sample shape, with wrapped records, kernel records and ids the
 * session does not own among them, at max 1, 7, 64 and 4096, with commits
 * in the middle and on hostile rings; every field of an item set; all of a
 * pull's items valid together, a wrapped one in the scratch included, and a
 * pull that would need more scratch stopping early; R1 and the errors. Each
 * comparison runs with and without PERFRING_PULL_PRESENT_ONLY, whose fixed
 * shapes leave the fields their event lacks untouched.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthsession.h"

#define RING 32768u
#define START (RING - 104) /* the stream's first record: it wraps soon */
#define MAXE 1024
#define NREC 600           /* records put, at most (the ring fills first) */

/* What one delivered record says, and a hash of its bytes. */
struct ent { /* all 64-bit: no padding, so memcmp compares them */
	int64_t kind, ev, cpu, raw_off, cc_off;
	uint64_t type, misc, pid, tid, raw_size, cc_nr;
	uint64_t time, id, ip, addr, period, stream_id, hash, extra;
};

struct trace {
	struct ent e[MAXE];
	size_t n;
};

struct bed {
	struct synth_session b;
	uint64_t pos[NREC];  /* where each record put begins */
	size_t nput;
	struct trace *t;     /* the push form's callbacks write here */
};

static uint64_t hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

static int64_t off_in(const void *rec, const void *p)
{
	return p ? (int64_t)((const uint8_t *)p - (const uint8_t *)rec) : -1;
}

static int64_t ev_index(const struct bed *bd, const struct perfring_event *ev)
{
	for (size_t k = 0; k < bd->b.nevents; k++)
		if (bd->b.evs[k] == ev)
			return (int64_t)k;
	return ev ? -2 : -1;
}

/* Whether a pulled item's field of sample_type bit is to be read: always
 * for a field before record (all: a pull with zeros), else only under the
 * bit, as the header promises stream_id always and, with
 * PERFRING_PULL_PRESENT_ONLY, the fields before record too. */
static bool has(const struct perfring_sample *s, uint64_t bit, bool all)
{
	return all || (perfring_event_attr(s->event)->sample_type & bit);
}

/* s as either form gives it: absent fields as zero when the form may leave
 * them (all false: the pull's PERFRING_PULL_PRESENT_ONLY). */
static struct ent of_sample_as(const struct bed *bd, const struct perfring_sample *s, bool all)
{
	bool cc = has(s, PERF_SAMPLE_CALLCHAIN, all) && s->callchain_nr;
	bool raw = has(s, PERF_SAMPLE_RAW, all);

	return (struct ent){
		.kind = PERFRING_NEXT_SAMPLE, .ev = ev_index(bd, s->event), .pid = s->pid,
		.tid = s->tid, .cpu = s->cpu, .time = s->time, .id = s->id,
		.ip = has(s, PERF_SAMPLE_IP, all) ? s->ip : 0,
		.addr = has(s, PERF_SAMPLE_ADDR, all) ? s->addr : 0,
		.period = has(s, PERF_SAMPLE_PERIOD, all) ? s->period : 0,
		.stream_id = has(s, PERF_SAMPLE_STREAM_ID, false) ? s->stream_id : 0,
		.raw_size = raw ? s->raw_size : 0, .raw_off = raw ? off_in(s->record, s->raw) : -1,
		.cc_nr = cc ? s->callchain_nr : 0,
		.cc_off = has(s, PERF_SAMPLE_CALLCHAIN, all) ? off_in(s->record, s->callchain) : -1,
		.hash = hash(s->record, s->record->size),
		.extra = cc ? s->callchain[s->callchain_nr - 1] : 0,
	};
}

static struct ent of_sample(const struct bed *bd, const struct perfring_sample *s)
{
	return of_sample_as(bd, s, true);
}

static struct ent of_record(const struct bed *bd, const struct perfring_record *r)
{
	struct ent e = {
		.kind = PERFRING_NEXT_RECORD, .ev = ev_index(bd, r->event), .type = r->type,
		.misc = r->misc, .pid = r->pid, .tid = r->tid, .cpu = r->cpu, .time = r->time,
		.id = r->id, .hash = hash(r->record, r->record->size),
	};

	if (r->type == PERF_RECORD_LOST)
		e.extra = r->u.lost.lost;
	else if (r->type == PERF_RECORD_COMM)
		e.raw_off = off_in(r->record, r->u.comm.comm);
	else if (r->type == PERF_RECORD_MMAP2)
		e.raw_off = off_in(r->record, r->u.mmap.filename);
	return e;
}

static void add(struct trace *t, struct ent e)
{
	cr_assert_lt(t->n, MAXE);
	t->e[t->n++] = e;
}

static struct bed *cur;

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	add(cur->t, of_sample(ctx, s));
	return 0;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	add(cur->t, of_record(ctx, r));
	return 0;
}

/* ---------------------------------------------------------- the stream */

static const uint64_t chain[6] = { 0xffffffff81000010ull, 0x401000, 0x401100, 0x401200, 7, 8 };
static const uint8_t payload[48] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static struct synth_fields fields(size_t ring, uint64_t id, unsigned i)
{
	return (struct synth_fields){
		.identifier = id, .id = id, .ip = 0xffffffff81234560ull + i, .pid = 100 + i,
		.tid = 200 + i, .addr = 0xdead0000 + i, .stream_id = id + 1,
		.cpu = (uint32_t)ring, .period = 1 + i, .callchain = chain,
		.callchain_nr = i % 7, .raw = payload, .raw_size = 4 * (1 + i % 12),
	};
}

/* Record i of the stream (sometimes a kernel record, an id the session does
 * not own or the other event), timed t. Its length. */
static size_t record(const struct bed *bd, unsigned i, uint64_t t, uint8_t *buf, size_t cap)
{
	struct synth_fields f = fields(0, synth_event_id(0), i), l;
	struct synth_mmap2 m = { .pid = 1, .tid = 2, .addr = 0x7f0000000000ull, .len = 4096,
				 .filename = "/usr/lib/libpull.so" };

	f.time = t;
	l = fields(0, synth_leader_id(0), i);
	l.time = t;
	switch (i % 11) {
	case 3:
		return synth_comm(buf, cap, 7, 7, "pull-test", i & 1, PR_SAMPLE_FORCED, &l);
	case 5:
		return synth_lost(buf, cap, synth_leader_id(0), i, PR_SAMPLE_FORCED, &l);
	case 7:
		f.identifier = f.id = synth_event_k_id(0, 1);
		return synth_sample(buf, cap, synth_session_sample_type_k(&bd->b, 1), &f);
	case 8:
		return synth_mmap2(buf, cap, &m, PR_SAMPLE_FORCED, &l);
	case 9:
		f.identifier = f.id = 777; /* no event of this session */
		return synth_sample(buf, cap, synth_session_sample_type(&bd->b), &f);
	default:
		return synth_sample(buf, cap, synth_session_sample_type(&bd->b), &f);
	}
}

static void bed_rewind(struct bed *bd);

/* Two events: ev 0 of sample_type st (on top of the forced bits), ev 1 of
 * the general layout; the stream starts at START, so records wrap. */
static void bed_new(struct bed *bd, uint64_t st)
{
	struct perf_event_attr a0 = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				      .sample_period = 1, .sample_type = st };
	struct perf_event_attr a1 = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				      .sample_period = 1,
				      .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN };
	struct synth_event_spec evs[2] = { { &a0, on_sample, bd }, { &a1, on_sample, bd } };
	uint8_t buf[512];
	size_t len;

	memset(bd, 0, sizeof(*bd));
	cr_assert_eq(synth_session_new_events(&bd->b, 1, RING, evs, 2), 0);
	bd->b.s->reg.sink = (struct pr_sink){ on_record, bd, PERFRING_REC_ALL };
	cr_assert_eq(synth_ring_set_pos(&bd->b.rings[0], START), 0);
	for (bd->nput = 0; bd->nput < NREC; bd->nput++) {
		len = record(bd, (unsigned)bd->nput, 1000 + bd->nput, buf, sizeof(buf));
		cr_assert_gt(len, 0);
		bd->pos[bd->nput] = synth_head(&bd->b.rings[0]);
		if (synth_put(&bd->b.rings[0], buf, len))
			break;
	}
	cr_assert_gt(bd->nput, 100);
	bed_rewind(bd);
}

/* Unread again from START, stats at zero, the ring's bytes as they are. */
static void bed_rewind(struct bed *bd)
{
	__atomic_store_n(&bd->b.rings[0].meta->data_tail, START, __ATOMIC_RELEASE);
	pr_cpu_rewind(&bd->b.s->cpu[0]);
}

static struct perfring_cpu_stats stats(const struct bed *bd)
{
	struct perfring_cpu_stats st;

	cr_assert_eq(perfring_session_cpu_stats(bd->b.s, 0, &st), 0);
	st.max_fill_pct = 0; /* a pull may read the head more than once */
	return st;
}

/* ------------------------------------------------------------- the forms */

static void push(struct bed *bd, struct trace *t, struct perfring_cpu_stats *st)
{
	int n;

	bed_rewind(bd);
	t->n = 0;
	cur = bd;
	bd->t = t;
	n = perfring_session_parse_for_cpu(bd->b.s, 0);
	cr_assert_geq(n, 0);
	*st = stats(bd);
	cr_assert_eq((uint64_t)n, st->samples);
}

static const struct perfring_pull_opts present = { sizeof(present), PERFRING_PULL_PRESENT_ONLY };

/* Pulls of max items with opts until one returns 0; commit_every: commit
 * after that many pulls (0: only at the end). Every item of a pull is read
 * after the pull returns, so all must be valid together. */
static void pull_opts(struct bed *bd, size_t max, unsigned commit_every,
		      const struct perfring_pull_opts *o, struct trace *t,
		      struct perfring_cpu_stats *st)
{
	struct perfring_item *it = malloc(max * sizeof(*it));
	const struct pr_ring *r = &bd->b.s->cpu[0].ring;
	unsigned pulls = 0;
	uint64_t samples = 0;
	int n, i;

	cr_assert_not_null(it);
	bed_rewind(bd);
	t->n = 0;
	cur = bd;
	bd->t = NULL; /* no callback may run */
	while (memset(it, 0xa5, max * sizeof(*it)),
	       (n = perfring_cpu_pull_opts(bd->b.s, 0, it, max, o)) > 0) {
		cr_assert_leq((size_t)n, max);
		for (i = 0; i < n; i++) {
			cr_assert(it[i].kind == PERFRING_NEXT_SAMPLE || it[i].kind == PERFRING_NEXT_RECORD);
			if (it[i].kind == PERFRING_NEXT_SAMPLE) {
				add(t, of_sample_as(bd, &it[i].u.sample, !o));
				samples++;
			} else {
				add(t, of_record(bd, &it[i].u.record));
			}
		}
		if (commit_every && ++pulls % commit_every == 0) {
			cr_assert_eq(perfring_cpu_commit(bd->b.s, 0), 0);
			cr_assert_eq(r->meta->data_tail, r->tail, "commit hands back what was pulled");
		}
	}
	cr_assert_eq(n, 0, "%s", perfring_session_last_error(bd->b.s));
	cr_assert_eq(perfring_cpu_commit(bd->b.s, 0), 0);
	cr_assert_eq(r->meta->data_tail, r->tail);
	*st = stats(bd);
	cr_assert_eq(samples, st->samples);
	free(it);
}


static void same(const struct trace *a, const struct trace *b, const char *what)
{
	size_t i;

	cr_assert_eq(a->n, b->n, "%s: %zu records pushed, %zu pulled", what, a->n, b->n);
	for (i = 0; i < a->n; i++)
		cr_assert_eq(memcmp(&a->e[i], &b->e[i], sizeof(a->e[i])), 0,
			     "%s: record %zu (kind %lld type %llu) differs", what, i,
			     (long long)a->e[i].kind, (unsigned long long)a->e[i].type);
}

static void same_stats(const struct perfring_cpu_stats *a, const struct perfring_cpu_stats *b,
		       const char *what)
{
	cr_assert_eq(a->records, b->records, "%s: records", what);
	cr_assert_eq(a->bytes, b->bytes, "%s: bytes", what);
	cr_assert_eq(a->samples, b->samples, "%s: samples", what);
	cr_assert_eq(a->corrupt, b->corrupt, "%s: corrupt", what);
	cr_assert_eq(a->unknown, b->unknown, "%s: unknown", what);
	cr_assert_eq(a->lost, b->lost, "%s: lost", what);
	cr_assert_eq(memcmp(a, b, sizeof(*a)), 0, "%s: stats", what);
}

static const size_t maxes[] = { 1, 7, 64, 4096 };

/* The pull at every max, with and without commits in the middle, with and
 * without PERFRING_PULL_PRESENT_ONLY, against parse_for_cpu on the same
 * ring. */
static void against_push(struct bed *bd, const char *what, uint64_t want_corrupt)
{
	static struct trace a, b;
	const struct perfring_pull_opts *o;
	struct perfring_cpu_stats sa, sb;
	char name[128];
	size_t m;
	unsigned every, k;

	push(bd, &a, &sa);
	cr_assert_eq(sa.corrupt, want_corrupt, "%s: corrupt %llu", what,
		     (unsigned long long)sa.corrupt);
	for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		for (k = 0; k < 4; k++) {
			every = k & 1 ? 3 : 0;
			o = k & 2 ? &present : NULL;
			snprintf(name, sizeof(name), "%s, max %zu, commit every %u%s", what,
				 maxes[m], every, o ? ", present fields only" : "");
			pull_opts(bd, maxes[m], every, o, &b, &sb);
			same(&a, &b, name);
			same_stats(&sa, &sb, name);
		}
	}
}

static const uint64_t shapes[] = {
	0,                                        /* the forced fields only */
	PERF_SAMPLE_RAW,                          /* a tracepoint */
	PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,   /* the general layout */
	PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD | PERF_SAMPLE_STREAM_ID |
	PERF_SAMPLE_ID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW,
};

#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

Test(pull, same_records_as_parse_for_cpu_every_shape_and_max)
{
	static struct bed bd;
	uint64_t wrapped;
	size_t i, j;

	for (i = 0; i < NSHAPES; i++) {
		bed_new(&bd, shapes[i]);
		for (wrapped = 0, j = 0; j + 1 < bd.nput; j++)
			wrapped += (bd.pos[j] & (RING - 1)) > (bd.pos[j + 1] & (RING - 1));
		cr_assert_geq(wrapped, 1, "the stream wraps");
		against_push(&bd, "well formed", 0);
		synth_session_free(&bd.b);
	}
}

/* Where CALLCHAIN or RAW begins in a sample of st: after the fixed fields. */
static uint64_t tail_off(uint64_t st)
{
	return 8 + 8 * (uint64_t)__builtin_popcountll(st & ~(uint64_t)(PERF_SAMPLE_CALLCHAIN |
								   PERF_SAMPLE_RAW));
}

/* Hostile rings: what the push form counts, the pull counts the same way. */
Test(pull, hostile_rings_counted_as_the_push_form)
{
	static struct bed bd;
	struct synth_ring *sr;
	uint64_t base;
	uint16_t bad;
	size_t i;

	for (i = 0; i < NSHAPES; i++) {
		bed_new(&bd, shapes[i]);
		sr = &bd.b.rings[0];
		base = 0;
		/* A sample whose RAW or callchain runs past its end. */
		if (shapes[i] & (PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN)) {
			uint32_t huge = 0xffffffffu;

			synth_write(sr, bd.pos[10] + tail_off(synth_session_sample_type(&bd.b)),
				    &huge, sizeof(huge));
			against_push(&bd, "a field past the record's end", ++base);
		}
		/* A header of zeros where a stretch of the fast path begins
		 * (record 1: record 0 names the event): once taken for a
		 * sample of size 0 (fuzz_parse). */
		if (i == 0) {
			static const uint8_t zero[8];
			static struct bed z;

			bed_new(&z, shapes[i]);
			synth_write(&z.b.rings[0], z.pos[1], zero, sizeof(zero));
			against_push(&z, "a header of zeros", 1);
			synth_session_free(&z.b);
		}
		/* A truncated record: head in the middle of the last one. Each
		 * case keeps the ones before it. */
		synth_set_head(sr, bd.pos[bd.nput - 1] + 8);
		against_push(&bd, "truncated", base + 1);
		/* A header size that is no multiple of 8, in the middle. */
		memcpy(&bad, sr->data + ((bd.pos[50] + 6) & (RING - 1)), sizeof(bad));
		bad |= 4;
		synth_write(sr, bd.pos[50] + 6, &bad, sizeof(bad));
		against_push(&bd, "corrupt header", base + 1);
		/* An overrun: head more than a ring ahead. */
		synth_set_head(sr, START + RING + 64);
		against_push(&bd, "overrun", 1);
		synth_session_free(&bd.b);
	}
}

/* Every field of an item up to record is set, whatever the caller's memory
 * held (stream_id only under its bit: the shapes that have it compare it). */
static bool clean(const struct perfring_sample *smp, uint64_t st)
{
	return smp->addr == (st & PERF_SAMPLE_ADDR ? smp->addr : 0) &&
	       (st & PERF_SAMPLE_IP || smp->ip == 0) && (st & PERF_SAMPLE_PERIOD || smp->period == 0) &&
	       (st & PERF_SAMPLE_RAW || (smp->raw == NULL && smp->raw_size == 0)) &&
	       (st & PERF_SAMPLE_CALLCHAIN || (smp->callchain == NULL && smp->callchain_nr == 0));
}

Test(pull, every_field_of_an_item_is_set)
{
	static struct bed bd;
	struct perfring_item it[64];
	uint64_t checked;
	size_t i;
	int n, k;

	for (i = 0; i < NSHAPES; i++) {
		bed_new(&bd, shapes[i]);
		for (checked = 0;;) {
			memset(it, 0xa5, sizeof(it));
			if ((n = perfring_cpu_pull(bd.b.s, 0, it, 64)) <= 0)
				break;
			for (k = 0; k < n; k++) {
				const struct perfring_sample *s = &it[k].u.sample;

				if (it[k].kind != PERFRING_NEXT_SAMPLE)
					continue;
				cr_assert(clean(s, perfring_event_attr(s->event)->sample_type),
					  "shape %zu: a stale field", i);
				cr_assert_eq(s->cpu, 0);
				checked++;
			}
		}
		cr_assert_eq(n, 0);
		cr_assert_gt(checked, bd.nput / 2, "shape %zu: %llu samples", i,
			     (unsigned long long)checked);
		cr_assert_eq(stats(&bd).corrupt, 0);
		cr_assert_eq(perfring_cpu_commit(bd.b.s, 0), 0);
		synth_session_free(&bd.b);
	}
}

/* PERFRING_PULL_PRESENT_ONLY: a fixed shape's item (the forced fields, a
 * tracepoint) leaves the fields its event lacks as they were on the fast
 * path, or zeroes them, never anything else; against_push shows that the
 * others hold what the zeroed pull holds. Pulls with and without the flag
 * mix in one batch. */
static bool untouched(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++ != 0xa5)
			return false;
	return true;
}

Test(pull, present_only_leaves_the_absent_fields_alone)
{
	static struct bed bd;
	struct perfring_item it[16];
	uint64_t fixed[2] = { 0 }, left[2] = { 0 }, st;
	size_t i;
	int n, k, pulls;

	for (i = 0; i < 2; i++) { /* shapes[0] and [1]: the fixed ones */
		bed_new(&bd, shapes[i]);
		for (pulls = 0;; pulls++) {
			memset(it, 0xa5, sizeof(it));
			n = perfring_cpu_pull_opts(bd.b.s, 0, it, 16, pulls % 2 ? NULL : &present);
			if (n <= 0)
				break;
			for (k = 0; k < n; k++) {
				const struct perfring_sample *s = &it[k].u.sample;

				if (it[k].kind != PERFRING_NEXT_SAMPLE)
					continue;
				st = perfring_event_attr(s->event)->sample_type;
				if (pulls % 2 || st & PERF_SAMPLE_CALLCHAIN) {
					/* zeroed, or the general layout: as before */
					cr_assert(clean(s, st), "shape %zu: a stale field", i);
					continue;
				}
				cr_assert_eq(s->cpu, 0);
				cr_assert_eq(s->record->type, PERF_RECORD_SAMPLE);
				cr_assert(s->time >= 1000 && s->time < 1000 + NREC &&
					  s->pid == 100 + (s->time - 1000));
				fixed[i]++;
				/* The general path (a wrapped record, one after a
				 * kernel record) zeroes them. */
				if (clean(s, st))
					continue;
				cr_assert(untouched(&s->ip, sizeof(s->ip)) &&
					  untouched(&s->addr, sizeof(s->addr)) &&
					  untouched(&s->period, sizeof(s->period)) &&
					  untouched(&s->callchain, sizeof(s->callchain)) &&
					  untouched(&s->callchain_nr, sizeof(s->callchain_nr)),
					  "shape %zu: an absent field neither zero nor left alone", i);
				cr_assert_eq(untouched(&s->raw, sizeof(s->raw)), !(st & PERF_SAMPLE_RAW));
				left[i]++;
			}
		}
		cr_assert_eq(n, 0);
		cr_assert_gt(fixed[i], bd.nput / 4, "shape %zu: %llu samples of the fixed shape", i,
			     (unsigned long long)fixed[i]);
		cr_assert_gt(left[i], fixed[i] / 4, "shape %zu: %llu of %llu items left alone", i,
			     (unsigned long long)left[i], (unsigned long long)fixed[i]);
		cr_assert_eq(stats(&bd).corrupt, 0);
		synth_session_free(&bd.b);
	}
}

/*
 * Two wrapped records of 40,000 bytes in one pull need 80,000 bytes of the
 * 64 KiB scratch: the pull stops before the second, and the next returns
 * it. The kernel never does this (one wrap per lap between commits); a
 * ring whose head moved on over uncommitted space with the same bytes does:
 *   X (48 B) at START', A (40,000 B) wrapping, 532 records R, B (= A)
 *   wrapping at the same place one lap later; X is the lap's last R.
 */
#define BIG 40000u
#define BRING 65536u
#define A_AT (BRING - 20000u)

Test(pull, a_pull_needing_more_scratch_stops_early)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1, .sample_type = PERF_SAMPLE_RAW };
	static uint8_t big[BIG], raw[BIG];
	static struct perfring_item it[4096];
	struct synth_fields f = fields(0, synth_event_id(0), 0);
	struct synth_session b;
	struct synth_ring *sr;
	uint8_t small[64];
	size_t blen, slen;
	uint64_t p, head;
	int i;

	cr_assert_eq(synth_session_new(&b, 1, BRING, &a, NULL, NULL), 0);
	sr = &b.rings[0];
	memset(raw, 0x3c, sizeof(raw));
	f.raw = raw;
	f.raw_size = BIG - 44;
	blen = synth_session_template(&b, 0, &f, big, sizeof(big));
	f.raw_size = 4;
	slen = synth_session_template(&b, 0, &f, small, sizeof(small));
	cr_assert_eq(blen, BIG);
	cr_assert_eq(slen, 48);
	synth_write(sr, A_AT - 48, small, slen);
	synth_write(sr, A_AT, big, blen);
	for (p = A_AT + BIG; p < BRING + A_AT; p += slen)
		synth_write(sr, p, small, slen);
	cr_assert_eq(p, BRING + A_AT, "the records fill the lap exactly");
	synth_write(sr, BRING + A_AT, big, blen); /* B: the same bytes, a lap later */
	head = BRING + A_AT + BIG;
	sr->meta->data_tail = A_AT - 48;
	sr->meta->data_head = A_AT + BIG;
	cr_assert_eq(pr_ring_init(&b.s->cpu[0].ring, sr->meta, sr->data, sr->size, sr->scratch), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 1), 1, "X");
	synth_set_head(sr, head);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 4096), 1 + 532, "A, then the lap's records");
	cr_assert_eq(it[0].u.sample.raw_size, BIG - 44);
	cr_assert_eq((const uint8_t *)it[0].u.sample.record, sr->scratch, "A is in the scratch");
	cr_assert_eq(memcmp(it[0].u.sample.record, big, BIG), 0);
	for (i = 1; i <= 532; i++)
		cr_assert_eq(it[i].u.sample.raw_size, 4);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 4096), 1, "B, in the next pull");
	cr_assert_eq(memcmp(it[0].u.sample.record, big, BIG), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 4096), 0);
	cr_assert_eq(perfring_cpu_commit(b.s, 0), 0);
	cr_assert_eq(sr->meta->data_tail, head);
	synth_session_free(&b);
}

/* Records written after a pull are seen by the next without a commit; a
 * pull that returns 0 ends the batch (committed), so another thread may
 * parse. */
static void *parse_elsewhere(void *arg)
{
	return (void *)(intptr_t)perfring_session_parse_for_cpu(arg, 0);
}

static int other_thread_parse(struct perfring_session *s)
{
	pthread_t th;
	void *ret;

	cr_assert_eq(pthread_create(&th, NULL, parse_elsewhere, s), 0);
	cr_assert_eq(pthread_join(th, &ret), 0);
	return (int)(intptr_t)ret;
}

Test(pull, zero_needs_no_commit_and_ends_the_batch)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1, .sample_type = PERF_SAMPLE_RAW };
	struct synth_fields f = fields(0, synth_event_id(0), 0);
	struct perfring_item it[8];
	struct synth_session b;
	uint8_t rec[64];
	size_t len;

	cr_assert_eq(synth_session_new(&b, 1, 4096, &a, NULL, NULL), 0);
	len = synth_session_template(&b, 0, &f, rec, sizeof(rec));
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 8), 0);
	cr_assert_eq(other_thread_parse(b.s), 0, "an empty pull holds nothing");
	cr_assert_eq(synth_put(&b.rings[0], rec, len), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 8), 1);
	cr_assert_eq(b.rings[0].meta->data_tail, 0, "nothing handed back before the commit");
	cr_assert_eq(other_thread_parse(b.s), -EBUSY, "R1: the batch holds the ring");
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 8), 0);
	cr_assert_eq(b.rings[0].meta->data_tail, len, "an empty pull commits what went before");
	cr_assert_eq(other_thread_parse(b.s), 0, "and frees the ring");
	cr_assert_eq(synth_put(&b.rings[0], rec, len), 0);
	cr_assert_eq(synth_put(&b.rings[0], rec, len), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 8), 2, "written after a 0, no commit between");
	cr_assert_eq(synth_put(&b.rings[0], rec, len), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 8), 1, "written after a pull, no commit between");
	cr_assert_eq(b.rings[0].meta->data_tail, len);
	cr_assert_eq(perfring_cpu_commit(b.s, 0), 0);
	cr_assert_eq(b.rings[0].meta->data_tail, 4 * len);
	cr_assert_eq(other_thread_parse(b.s), 0);
	synth_session_free(&b);
}

/* R1: a pull from a callback of a parse of the same ring. */
struct inside {
	struct perfring_session *s;
	int got, calls;
};

static int pull_inside(const struct perfring_sample *smp, void *ctx)
{
	struct inside *in = ctx;
	struct perfring_item it[4];

	(void)smp;
	if (!in->calls++)
		in->got = perfring_cpu_pull(in->s, 0, it, 4);
	return 0;
}

Test(pull, r1_a_pull_inside_a_parse_is_busy)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1 };
	struct synth_fields f = fields(0, synth_event_id(0), 0);
	struct inside in = { 0 };
	struct synth_session b;
	uint8_t rec[64];
	size_t len;

	cr_assert_eq(synth_session_new(&b, 1, 4096, &a, pull_inside, &in), 0);
	in.s = b.s;
	len = synth_session_template(&b, 0, &f, rec, sizeof(rec));
	cr_assert_eq(synth_put_n(&b.rings[0], rec, len, 5), 5);
	cr_assert_eq(perfring_session_parse_for_cpu(b.s, 0), 5, "the running parse goes on");
	cr_assert_eq(in.got, -EBUSY);
	cr_assert_eq(in.calls, 5);
	synth_session_free(&b);
}

Test(pull, errors)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_item it[2];
	struct perfring_session *s;
	struct synth_session b;

	cr_assert_eq(perfring_cpu_pull(NULL, 0, it, 2), -EINVAL);
	cr_assert_eq(synth_session_new(&b, 1, 4096, &a, NULL, NULL), 0);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, NULL, 2), -EINVAL);
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 0), -EINVAL);
	cr_assert(strstr(perfring_session_last_error(b.s), "max is 0"));
	cr_assert_eq(perfring_cpu_pull(b.s, 5, it, 2), -ENOENT);
	b.s->o.overwrite = 1; /* a flight recorder's rings are read by snapshots only */
	cr_assert_eq(perfring_cpu_pull(b.s, 0, it, 2), -EOPNOTSUPP);
	cr_assert(strstr(perfring_session_last_error(b.s), "cpu_pull"));
	b.s->o.overwrite = 0;
	{
		struct perfring_pull_opts po = { sizeof(po), 2 };
		struct { struct perfring_pull_opts o; uint64_t more; } big = {
			{ sizeof(big), PERFRING_PULL_PRESENT_ONLY }, 1
		};

		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 2, &po), -EINVAL);
		cr_assert(strstr(perfring_session_last_error(b.s), "flags = 0x2"));
		po.sz = 4;
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 2, &po), -EINVAL);
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 2, &big.o), -E2BIG);
		big.more = 0; /* a newer caller's struct with nothing in its new fields */
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 2, &big.o), 0, "%s",
			     perfring_session_last_error(b.s));
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 2, &present), 0);
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, NULL, 2, &present), -EINVAL);
		cr_assert_eq(perfring_cpu_pull_opts(b.s, 0, it, 0, &present), -EINVAL);
	}
	synth_session_free(&b);
	cr_assert_eq(perfring_cpu_pull_opts(NULL, 0, it, 2, &present), -EINVAL);
	cr_assert_eq(perfring_session_new(&o, &s), 0);
	cr_assert_eq(perfring_cpu_pull(s, 0, it, 2), -EINVAL, "before start");
	cr_assert_eq(perfring_cpu_pull_opts(s, 0, it, 2, &present), -EINVAL, "before start");
	perfring_session_free(s);
}

/* A head just before 2^64, which is a multiple of every ring size: the
 * fast path must stop at the head, not at the ring's end past 2^64
 * (fuzz_parse found the stretch reading past the head there). */
Test(pull, head_just_before_2_to_the_64)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1, .sample_type = PERF_SAMPLE_RAW };
	struct synth_fields f = fields(0, synth_event_id(0), 0);
	struct perfring_cpu_stats st;
	struct perfring_item it[16];
	struct synth_session b;
	uint64_t start = (uint64_t)0 - 512;
	uint8_t rec[64];
	size_t len;
	int n;

	for (int form = 0; form < 2; form++) {
		cr_assert_eq(synth_session_new(&b, 1, 4096, &a, NULL, NULL), 0);
		len = synth_session_template(&b, 0, &f, rec, sizeof(rec));
		cr_assert_eq(synth_ring_set_pos(&b.rings[0], start), 0);
		cr_assert_eq(synth_put_n(&b.rings[0], rec, len, 5), 5);
		/* Bytes after the head that would pass for samples. */
		synth_write(&b.rings[0], start + 5 * len, rec, len);
		b.s->cpu[0].ring = b.rings[0].ring;
		if (form == 0) {
			n = perfring_session_parse_for_cpu(b.s, 0);
		} else {
			n = perfring_cpu_pull(b.s, 0, it, 16);
			cr_assert_eq(perfring_cpu_commit(b.s, 0), 0);
		}
		cr_assert_eq(n, 5, "form %d: %d", form, n);
		cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
		cr_assert_eq(st.bytes, 5 * len);
		cr_assert_eq(st.corrupt, 0);
		synth_session_free(&b);
	}
}
