/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the parse loops: drain.c (the fast per-ring loop and
 * its slow step), merged.c (the loser-tree merge, its cursors and runs),
 * batch.c (the merge's batches),
 * deliver.c and parse.c, over a started synthetic session of 1 to 8 rings
 * (synth_session_new) whose bytes, heads and tails come from the input.
 *
 * fuzz-sources: the test-support library and every core source (fuzz/run.sh)
 *
 * Input layout (little endian), see also gen_parse_corpus.c:
 *
 *   0  u8   rings: 1 + byte % 8
 *   1  u8   ring size: 8 << (byte % 12), so 8 B .. 16 KiB
 *   2  u8   sample_type beyond the forced bits: bit 0 IP, 1 ADDR, 2 ID,
 *           3 STREAM_ID, 4 PERIOD, 5 CALLCHAIN, 6 RAW (0: the forced shape,
 *           0x40: the tracepoint shape, anything else: the general layout)
 *   3  u8   flags: FZ_STAMP, FZ_DESC, FZ_ODD_TAIL, FZ_RAW_HEAD, FZ_NO_REC_CB,
 *           FZ_NO_SAMPLE_CB, FZ_AUTO_HEAD
 *   4  u8   stop: every stop-th callback returns non-zero (0: none does)
 *   5  u8   the script runs 1 + byte % 4 times
 *   6  u8   bit 0: the merge tries a batch after every step, whatever its
 *           size (else only after long stretches without runs, as in use)
 *           bits 1-7: the profiler's sample types (decode/profile.c): 1 READ
 *           (a group of 2, both times), 2 BRANCH_STACK (HW_INDEX), 3
 *           REGS_USER, 4 STACK_USER, 5 WEIGHT_STRUCT and DATA_SRC, 6
 *           TRANSACTION and REGS_INTR, 7 PHYS_ADDR, CGROUP and the page
 *           sizes; samples built with FZ_DESC carry them (arg bit 7: a
 *           kernel thread's, without registers and stack)
 *   7  u8   mode: bit 0 set, the batch pull (perfring_cpu_pull of
 *           1 + (byte >> 1) items) takes the pull steps' place, and the
 *           input is run once more through parse_for_cpu and twice through
 *           the batch pull (with and without PERFRING_PULL_PRESENT_ONLY),
 *           which must return the same records in the same order, decoded
 *           the same, with the same stats
 *   8  u64  base, added to every ring's tail (to reach 2^64 wrap-around)
 *   16 8 x  script steps of two bytes a, b:
 *             a & 3: 0 parse_for_cpu_n(max b; b = 0 and a & 0x40: parse_for_cpu),
 *                    1 pull (perfring_cpu_next, or in the batch mode
 *                      perfring_cpu_pull, with PERFRING_PULL_PRESENT_ONLY
 *                      when a & 0x40, b times, b = 0: until 0, then
 *                      perfring_cpu_commit unless a & 0x20),
 *                    2 parse_all,
 *                    3 the reactor's and parse_until's internal forms: with
 *                      a & 0x20 pr_drain(max b) with a cancel flag that
 *                      the stopping callback sets instead of returning
 *                      non-zero, else pr_merge_parse reporting *stopped
 *             (a >> 2) & 7: the ring (modulo rings)
 *   32 8 x  per ring: u32 tail (+ base; 8-aligned unless FZ_ODD_TAIL),
 *           u32 head: tail + this % (2 * size + 1); as is with FZ_RAW_HEAD;
 *           tail + the bytes written with FZ_AUTO_HEAD
 *   96 ...  split evenly between the rings. Each ring's part is either its
 *           data from its tail on (wrapping, the rest of the ring zero), or
 *           with FZ_DESC a list of 4-byte ops (kind, arg, u16 v) that build
 *           records with tests/synth.c (see build_op). FZ_STAMP then walks
 *           the records from tail to head and writes the ring's event id (or
 *           leader id) where each one's IDENTIFIER goes, so that mutated
 *           bytes still reach the fast paths.
 *
 * After the script, one parse_all whose callbacks never stop must leave every
 * ring at its head, and a further parse_all (and parse_for_cpu) must deliver
 * nothing. Traps if a delivered record lies outside its ring's data area or
 * scratch, comes before an earlier one or twice, is not the ring's event (or
 * leader), decodes differently from the general decoder on an exact-size copy
 * (so ASan sees overreads), or has a callchain/raw/string outside it; if a
 * callback runs after one asked to stop; if a parse's return is not the
 * samples it counted; if parse_for_cpu_n handles more than max records or
 * misreports *more; if the stats do not add up; or, when every ring's records
 * are well formed, of this ring and timed in order, if a merged parse
 * delivers out of (time, ring) order or counts a late record.
 *
 * The callbacks delivered over the run are counted and printed at exit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthsession.h"
#include "read/merge.h"
#include "read/drain.h"
#include "decode/record.h"

#define FZ_HDR 96
#define FZ_MAX_RINGS 8
#define FZ_STEPS 8

#define FZ_STAMP 1u
#define FZ_DESC 2u
#define FZ_ODD_TAIL 4u
#define FZ_RAW_HEAD 8u
#define FZ_NO_REC_CB 16u
#define FZ_NO_SAMPLE_CB 32u
#define FZ_AUTO_HEAD 64u

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

#define check(cond) ((cond) ? (void)0 : (fprintf(stderr, "check failed line %d: %s\n", __LINE__, #cond), __builtin_trap()))

struct fz_ring {
	uint64_t tail0, avail;    /* first tail; head - tail0 */
	uint64_t end;             /* just past the last record delivered, from tail0 */
	uint64_t samples, records; /* delivered by callbacks or the pull form */
};

struct fz {
	struct synth_session b;
	struct fz_ring r[FZ_MAX_RINGS];
	uint64_t st;              /* the event's sample_type */
	struct perf_event_attr attr; /* the event's attr, after forcing */
	unsigned flags, stop_every;
	uint64_t calls;           /* callbacks so far, for stop_every */
	int cur;                  /* ring parsed now, -1: any (parse_all) */
	unsigned cb_samples, cb_records; /* callbacks in the current call */
	bool stopped, no_stop;
	bool cancel_mode;         /* stop through cancel, not the return value */
	volatile bool cancel;
	bool ordered;             /* every ring's records are delivered, in time order */
	uint64_t last_time;       /* of the last record this merged parse delivered */
	size_t last_ring;
	size_t batch;             /* the batch mode's items a pull; 0: not in it */
	struct fz_seq *seq;       /* non-NULL: callbacks note what they deliver */
};

/* What one form delivered, ring after ring: a digest of each record. */
#define FZ_SEQ_MAX 8192
struct fz_seq {
	uint64_t d[FZ_SEQ_MAX];
	size_t n;
};

static struct fz fz;
static uint64_t total_samples, total_records, total_inputs, total_batched;

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void report(void)
{
	fprintf(stderr, "fuzz_parse: %llu inputs, %llu samples and %llu records delivered, "
		"%llu samples in merge batches\n", (unsigned long long)total_inputs,
		(unsigned long long)total_samples, (unsigned long long)total_records,
		(unsigned long long)total_batched);
}

/* ------------------------------------------------ where a record lies */

static bool wrapped_at(const struct synth_ring *sr, uint64_t off,
		       const struct perf_event_header *h)
{
	uint64_t first = sr->size - off;

	return !memcmp(h, sr->data + off, first) &&
	       !memcmp((const uint8_t *)h + first, sr->data, h->size - first);
}

/* A record in scratch wrapped: the first unread place where the ring holds
 * the same bytes across its end. The earliest match is a lower bound, so
 * taking it never fails a later check that the true place would pass. */
static uint64_t wrapped_pos(const struct synth_ring *sr, const struct fz_ring *r,
			    const struct perf_event_header *h)
{
	uint64_t pos, off;

	for (pos = r->end; pos + h->size <= r->avail; pos += 8) {
		off = (r->tail0 + pos) & (sr->size - 1);
		if (off + h->size > sr->size && wrapped_at(sr, off, h))
			return pos;
	}
	__builtin_trap();
}

/* Inside the ring's scratch, where the pull forms copy wrapped records
 * (the batch pull one after the other). */
static bool in_scratch(const struct synth_ring *sr, const uint8_t *p)
{
	return p >= sr->scratch && p < sr->scratch + PR_RING_SCRATCH;
}

/* The ring a delivered record belongs to: its data area or its scratch. */
static size_t ring_of(const struct fz *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	const struct synth_ring *sr;
	size_t j;

	for (j = 0; j < f->b.nrings; j++) {
		sr = &f->b.rings[j];
		if (in_scratch(sr, p) || (p >= sr->data && p < sr->data + sr->size)) {
			check(f->cur < 0 || (size_t)f->cur == j);
			return j;
		}
	}
	__builtin_trap();
}

/* Unread, after the last record delivered, 8-aligned and wholly before head. */
static void check_placed(struct fz *f, size_t j, const struct perf_event_header *h)
{
	const struct synth_ring *sr = &f->b.rings[j];
	struct fz_ring *r = &f->r[j];
	const uint8_t *p = (const uint8_t *)h;
	uint64_t pos, off;

	check(r->avail <= sr->size && !(r->tail0 & 7));
	check(h->size >= sizeof(*h) && !(h->size & 7) && h->size <= r->avail);
	if (in_scratch(sr, p)) {
		check(!((p - sr->scratch) & 7) && p + h->size <= sr->scratch + PR_RING_SCRATCH);
		pos = wrapped_pos(sr, r, h);
	} else {
		off = (uint64_t)(p - sr->data);
		check(!(off & 7) && off + h->size <= sr->size);
		pos = (off - r->tail0) & (sr->size - 1);
	}
	check(pos >= r->end && pos + h->size <= r->avail);
	r->end = pos + h->size;
}

static bool within(const void *rec, size_t size, const void *p, size_t len)
{
	const uint8_t *b = rec, *q = p;

	return q >= b && q <= b + size && len <= (size_t)(b + size - q);
}

/* Offset of p in its record (or in the copy), -1 for NULL. */
static long off_in(const void *rec, const void *p)
{
	return p ? (long)((const uint8_t *)p - (const uint8_t *)rec) : -1;
}

/* ------------------------------------------------------- what it says */

static void same_sample(const struct perfring_sample *a, const struct perfring_sample *b)
{
	check(a->pid == b->pid && a->tid == b->tid && a->time == b->time && a->id == b->id);
	check(a->ip == b->ip && a->addr == b->addr && a->period == b->period);
	check(a->stream_id == b->stream_id && a->cpu == b->cpu);
	check(a->callchain_nr == b->callchain_nr && a->raw_size == b->raw_size);
	check(off_in(a->record, a->callchain) == off_in(b->record, b->callchain));
	check(off_in(a->record, a->raw) == off_in(b->record, b->raw));
	check(off_in(a->record, a->read) == off_in(b->record, b->read) &&
	      a->read_nr == b->read_nr && a->read_format == b->read_format &&
	      a->time_enabled == b->time_enabled && a->time_running == b->time_running);
	check(off_in(a->record, a->branches) == off_in(b->record, b->branches) &&
	      a->branch_nr == b->branch_nr && a->branch_hw_idx == b->branch_hw_idx);
	check(off_in(a->record, a->regs_user) == off_in(b->record, b->regs_user) &&
	      a->regs_user_abi == b->regs_user_abi && a->regs_user_nr == b->regs_user_nr);
	check(off_in(a->record, a->regs_intr) == off_in(b->record, b->regs_intr) &&
	      a->regs_intr_abi == b->regs_intr_abi && a->regs_intr_nr == b->regs_intr_nr);
	check(off_in(a->record, a->stack_user) == off_in(b->record, b->stack_user) &&
	      a->stack_user_size == b->stack_user_size &&
	      a->stack_user_dyn_size == b->stack_user_dyn_size);
	check(a->weight == b->weight && a->data_src == b->data_src &&
	      a->transaction == b->transaction && a->phys_addr == b->phys_addr &&
	      a->cgroup == b->cgroup && a->data_page_size == b->data_page_size &&
	      a->code_page_size == b->code_page_size);
}

/* The profiler's pointers lie inside the record, with all they cover. */
static void check_profile_within(const struct perf_event_header *h,
				 const struct perfring_sample *smp)
{
	struct perfring_read_value v;

	check(within(h, h->size, smp->read ? (const void *)smp->read : (const void *)h,
		     smp->read ? 8u : 0u));
	for (uint32_t i = 0; i < smp->read_nr; i++)
		check(perfring_sample_read_value(smp, i, &v) == 0);
	check(within(h, h->size, smp->branches ? (const void *)smp->branches : (const void *)h,
		     (size_t)smp->branch_nr * sizeof(*smp->branches)));
	check(within(h, h->size, smp->regs_user ? (const void *)smp->regs_user : (const void *)h,
		     (size_t)smp->regs_user_nr * 8));
	check(within(h, h->size, smp->regs_intr ? (const void *)smp->regs_intr : (const void *)h,
		     (size_t)smp->regs_intr_nr * 8));
	check(within(h, h->size, smp->stack_user ? (const void *)smp->stack_user : (const void *)h,
		     (size_t)smp->stack_user_size) &&
	      smp->stack_user_dyn_size <= smp->stack_user_size);
}

/* The general decoder on an exact-size copy must agree with what was
 * delivered (the fast path may have used a fixed shape or the inline loop). */
static void check_sample(struct fz *f, size_t j, const struct perfring_sample *smp)
{
	const struct perf_event_header *h = smp->record;
	struct perfring_sample ref = { 0 };
	struct perf_event_header *copy;
	struct pr_layout l;

	check(smp->event == f->b.ev && h && h->type == PERF_RECORD_SAMPLE);
	check_placed(f, j, h);
	check(h->size >= 16 && pr_ld64((const uint8_t *)(h + 1)) == synth_event_id(j));
	check(within(h, h->size, smp->callchain ? (const void *)smp->callchain : (const void *)h,
		     (size_t)smp->callchain_nr * 8));
	check(within(h, h->size, smp->raw ? smp->raw : (const void *)h, smp->raw_size));
	check_profile_within(h, smp);
	if (!(copy = malloc(h->size)))
		abort();
	memcpy(copy, h, h->size);
	pr_layout_init(&l, f->st);
	pr_layout_profile(&l, &f->attr);
	l.shape = PR_SHAPE_ANY;
	check(pr_decode_sample_fast(copy, &l, &ref) == 0);
	same_sample(smp, &ref);
	free(copy);
}

static void check_str(const struct perf_event_header *h, const char *s)
{
	const uint8_t *end = (const uint8_t *)h + h->size;

	check(within(h, h->size, s, 1));
	check(memchr(s, 0, (size_t)(end - (const uint8_t *)s)) != NULL);
}

static void check_pointers(const struct perfring_record *r)
{
	const struct perf_event_header *h = r->record;

	if (r->type == PERF_RECORD_COMM)
		check_str(h, r->u.comm.comm);
	if (r->type == PERF_RECORD_MMAP || r->type == PERF_RECORD_MMAP2)
		check_str(h, r->u.mmap.filename);
	if (r->type == PERF_RECORD_MMAP2 && r->u.mmap.build_id)
		check(within(h, h->size, r->u.mmap.build_id, r->u.mmap.build_id_size));
}

static void same_record(const struct perfring_record *a, const struct perfring_record *b)
{
	check(a->type == b->type && a->misc == b->misc && a->pid == b->pid && a->tid == b->tid);
	check(a->time == b->time && a->id == b->id);
	if (a->type == PERF_RECORD_LOST)
		check(a->u.lost.lost == b->u.lost.lost && a->u.lost.id == b->u.lost.id);
	if (a->type == PERF_RECORD_COMM)
		check(off_in(a->record, a->u.comm.comm) == off_in(b->record, b->u.comm.comm));
	if (a->type == PERF_RECORD_MMAP || a->type == PERF_RECORD_MMAP2)
		check(off_in(a->record, a->u.mmap.filename) ==
		      off_in(b->record, b->u.mmap.filename));
}

/* A kernel record of the ring's event or of its dummy leader. */
static void check_record(struct fz *f, size_t j, const struct perfring_record *r)
{
	const struct perf_event_header *h = r->record;
	uint64_t st = r->event ? f->st : PR_SAMPLE_FORCED, id = 0;
	struct perfring_record ref;
	struct perf_event_header *copy;

	check(h && h->type != PERF_RECORD_SAMPLE && r->type == h->type && r->misc == h->misc);
	check(r->event == NULL || r->event == f->b.ev);
	check(r->cpu == (int)j);
	check_placed(f, j, h);
	check(pr_record_identifier(h, &id));
	check(id == (r->event ? synth_event_id(j) : synth_leader_id(j)));
	check_pointers(r);
	if (!(copy = malloc(h->size)))
		abort();
	memcpy(copy, h, h->size);
	check(pr_decode_record(copy, st, &ref) == 0);
	same_record(r, &ref);
	free(copy);
}

/* When every ring is in time order, a merged parse delivers in (time, ring)
 * order: the tree's order, equal times in ring order. */
static void check_order(struct fz *f, size_t j, uint64_t time)
{
	if (!f->ordered || f->cur >= 0)
		return;
	check(time > f->last_time || (time == f->last_time && j >= f->last_ring));
	f->last_time = time;
	f->last_ring = j;
}

/* ------------------------------------------------- one form's sequence */

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

/* A sample as delivered: its bytes and what was decoded from them (in a
 * struct of 64-bit fields, so that no padding is hashed). */
static uint64_t sample_digest(const struct perfring_sample *smp)
{
	const uint64_t v[] = {
		smp->pid, smp->tid, smp->time, smp->id, smp->ip, smp->addr, smp->period,
		smp->stream_id, (uint64_t)smp->cpu, smp->raw_size, smp->callchain_nr,
		(uint64_t)off_in(smp->record, smp->raw), (uint64_t)off_in(smp->record, smp->callchain),
	};

	return mix(mix(1469598103934665603ull, smp->record, smp->record->size), v, sizeof(v));
}

static uint64_t record_digest(const struct perfring_record *r)
{
	const uint64_t v[] = {
		r->type, r->pid, r->tid, r->time, r->id, (uint64_t)r->cpu,
		r->type == PERF_RECORD_LOST ? r->u.lost.lost : 0,
	};

	return mix(mix(7, r->record, r->record->size), v, sizeof(v));
}

static void note(struct fz *f, uint64_t d)
{
	if (f->seq && f->seq->n < FZ_SEQ_MAX)
		f->seq->d[f->seq->n++] = d;
}

/* ---------------------------------------------------------- callbacks */

static int want_stop(struct fz *f)
{
	if (f->no_stop || !f->stop_every || ++f->calls % f->stop_every)
		return 0;
	f->stopped = true;
	if (f->cancel_mode) {
		f->cancel = true;
		return 0;
	}
	return 1;
}

static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct fz *f = ctx;
	size_t j;

	check(f == &fz && !f->stopped);
	j = ring_of(f, smp->record);
	check_sample(f, j, smp);
	check_order(f, j, smp->time);
	note(f, sample_digest(smp));
	f->r[j].samples++;
	f->cb_samples++;
	total_samples++;
	return want_stop(f);
}

static int on_record(const struct perfring_record *rec, void *ctx)
{
	struct fz *f = ctx;
	size_t j;

	check(f == &fz && !f->stopped);
	j = ring_of(f, rec->record);
	check_record(f, j, rec);
	check_order(f, j, rec->time);
	note(f, record_digest(rec));
	f->r[j].records++;
	f->cb_records++;
	total_records++;
	return want_stop(f);
}

/* ---------------------------------------------------- building rings */

static const uint64_t fz_callchain[8] = { 0xffffffff81000010ull, 0xffffffff81000020ull, 0x401000,
					  0x401100, 0x401200, 0x7ffff7a00000ull, 1, 2 };
static const uint8_t fz_raw[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t fz_build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };

/* Records being built for one ring (FZ_DESC). */
struct fz_build {
	uint8_t *buf;
	size_t cap, len;
	size_t ring;
	uint64_t st, time;
	const struct perf_event_attr *attr;
};

static uint64_t sample_type_of(unsigned bits)
{
	static const uint64_t map[7] = { PERF_SAMPLE_IP, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
					 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_PERIOD,
					 PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW };
	uint64_t st = 0;
	unsigned i;

	for (i = 0; i < 7; i++)
		if (bits & (1u << i))
			st |= map[i];
	return st;
}

static struct synth_fields fields(const struct fz_build *bd, uint64_t id, unsigned arg)
{
	return (struct synth_fields){
		.identifier = id, .ip = 0xffffffff81234560ull + arg, .pid = 100 + arg,
		.tid = 200 + arg, .time = bd->time, .addr = 0xdead0000 + arg, .id = id,
		.stream_id = id + 1, .cpu = (uint32_t)bd->ring, .period = 1 + arg,
		.callchain = fz_callchain, .callchain_nr = (arg >> 4) & 7,
		.raw = fz_raw, .raw_size = (arg & 15) * 4,
	};
}

/* A sample of another id: the leader, another ring's event, any value, or
 * the ring's event laid out with the forced bits only. */
static size_t other_sample(struct fz_build *bd, uint8_t *p, size_t cap, unsigned arg, uint16_t v)
{
	uint64_t id = synth_event_id(bd->ring), st = bd->st;
	struct synth_fields sf;

	switch (arg & 3) {
	case 0:
		id = synth_leader_id(bd->ring);
		break;
	case 1:
		id = synth_event_id((bd->ring + 1 + (arg >> 2)) % FZ_MAX_RINGS);
		break;
	case 2:
		id = v;
		break;
	default:
		st = PR_SAMPLE_FORCED;
	}
	sf = fields(bd, id, arg);
	return synth_sample(p, cap, st, &sf);
}

/* The trailer of a kernel record: the ring's event's (arg & 2) or the
 * leader's, whose layout is the forced bits. */
static uint64_t trailer_of(const struct fz_build *bd, unsigned arg, struct synth_fields *t)
{
	bool ev = arg & 2;

	*t = fields(bd, ev ? synth_event_id(bd->ring) : synth_leader_id(bd->ring), arg);
	return ev ? bd->st : PR_SAMPLE_FORCED;
}

static size_t mmap2_rec(struct fz_build *bd, uint8_t *p, size_t cap, unsigned arg)
{
	struct synth_fields t;
	uint64_t st = trailer_of(bd, arg, &t);
	struct synth_mmap2 m = {
		.pid = 100, .tid = 101, .addr = 0x7f0000000000ull, .len = 0x21000, .maj = 8,
		.min = 1, .ino = 4242, .prot = 5, .flags = 2, .filename = "/usr/lib/libfuzz.so",
		.build_id = (arg & 1) ? fz_build_id : NULL, .build_id_size = 20,
	};

	return synth_mmap2(p, cap, &m, st, &t);
}

static size_t task_rec(struct fz_build *bd, uint8_t *p, size_t cap, unsigned arg, uint16_t v)
{
	static const uint32_t types[4] = { PERF_RECORD_FORK, PERF_RECORD_EXIT,
					   PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE };
	struct synth_fields t;
	uint64_t st = trailer_of(bd, arg, &t);
	uint32_t type = types[(arg >> 2) & 3];

	if (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT)
		return synth_task(p, cap, type, v, 1, v, 1, bd->time, st, &t);
	return synth_throttle(p, cap, type, bd->time, t.id, t.stream_id, st, &t);
}

static size_t kernel_rec(struct fz_build *bd, uint8_t *p, size_t cap, unsigned kind,
			 unsigned arg, uint16_t v)
{
	struct synth_fields t;
	uint64_t st = trailer_of(bd, arg, &t);

	switch (kind) {
	case 4:
		return synth_comm(p, cap, v, v, (arg & 4) ? "a-long-command-name" : "fz", arg & 1,
				  st, &t);
	case 5:
		return mmap2_rec(bd, p, cap, arg);
	case 6:
		if (arg & 1)
			return synth_lost_samples(p, cap, v, st, &t);
		return synth_lost(p, cap, t.id, v, st, &t);
	case 7:
		return task_rec(bd, p, cap, arg, v);
	default:
		if (arg & 1)
			return synth_switch_cpu_wide(p, cap, (uint16_t)(v & 0x3000), v, v, st, &t);
		return synth_switch(p, cap, (uint16_t)(v & 0x3000), st, &t);
	}
}

/* A header the kernel never writes: any type and size, then arg % 8 words. */
static size_t garbage(uint8_t *p, size_t cap, unsigned arg, uint16_t v)
{
	struct perf_event_header h = { .type = arg * 7u, .misc = 0, .size = v };
	size_t len = sizeof(h) + 8 * (arg % 8);

	if (len > cap)
		return 0;
	memcpy(p, &h, sizeof(h));
	memset(p + sizeof(h), 0xa5, len - sizeof(h));
	return len;
}

static const uint64_t fz_read[9] = { 2, 5000, 4000, 10, 0, 0, 20, 0, 0 };
static const struct perf_branch_entry fz_br[3] = { { .from = 1, .to = 2 }, { .from = 3 } };
static const uint64_t fz_regs[8] = { 0x7ffd0000, 0x401000, 0x7ffd0040 };
static const uint8_t fz_stack[64] = "user stack bytes";

/* A sample of the ring's event with the profiler's parts its attr asks for;
 * arg bit 7: as from a kernel thread (no user registers, no stack). */
static size_t profile_sample(struct fz_build *bd, uint8_t *p, size_t cap,
			     const struct synth_fields *sf, unsigned arg)
{
	bool kthread = arg & 0x80;
	struct synth_prof pf = {
		.read = fz_read, .read_words = 9, .br = fz_br, .br_nr = arg % 4, .hw_idx = arg,
		.regs_user_abi = kthread ? 0 : PERF_SAMPLE_REGS_ABI_64, .regs_user = fz_regs,
		.stack = fz_stack, .stack_size = kthread ? 0 : 64, .stack_dyn = arg % 64,
		.weight = arg, .data_src = 0x1000 + arg, .transaction = arg,
		.regs_intr_abi = PERF_SAMPLE_REGS_ABI_64, .regs_intr = fz_regs,
		.phys_addr = 0x1000 * arg, .cgroup = 77, .data_page_size = 4096,
		.code_page_size = 4096,
	};

	if (!(bd->st & PR_SAMPLE_PROFILE))
		return synth_sample(p, cap, bd->st, sf);
	return synth_sample_prof(p, cap, bd->attr, sf, &pf);
}

/* One 4-byte op: kind 0-2 a sample of the ring's event (the time moves by
 * v as an int16), 3 a sample of another id, 4-8 a kernel record, 9 a
 * garbage header, 10 byte arg at offset v of what is built so far, 11 time
 * += v << 16, 12-15 nothing. */
static void build_op(struct fz_build *bd, const uint8_t *op)
{
	unsigned kind = op[0] & 15, arg = op[1];
	uint16_t v = rd16(op + 2);
	uint8_t *p = bd->buf + bd->len;
	size_t cap = bd->cap - bd->len, len = 0;
	struct synth_fields sf;

	if (kind <= 2) {
		bd->time += (uint64_t)(int64_t)(int16_t)v;
		sf = fields(bd, synth_event_id(bd->ring), arg);
		len = profile_sample(bd, p, cap, &sf, arg);
	} else if (kind == 3) {
		len = other_sample(bd, p, cap, arg, v);
	} else if (kind <= 8) {
		len = kernel_rec(bd, p, cap, kind, arg, v);
	} else if (kind == 9) {
		len = garbage(p, cap, arg, v);
	} else if (kind == 10 && bd->len) {
		bd->buf[v % bd->len] = (uint8_t)arg;
	} else if (kind == 11) {
		bd->time += (uint64_t)v << 16;
	}
	bd->len += len;
}

/* Builds ring j's records from ops into buf (at most cap bytes); their length. */
static size_t build(const struct fz *f, size_t j, const uint8_t *ops, size_t n, uint8_t *buf,
		    size_t cap)
{
	struct fz_build bd = {
		.buf = buf, .cap = cap, .ring = j, .st = f->st, .time = (uint64_t)1 << 20,
		.attr = &f->attr,
	};
	size_t i;

	for (i = 0; i + 4 <= n; i += 4)
		build_op(&bd, ops + i);
	return bd.len;
}

/* Writes id where each record's IDENTIFIER goes, walking from tail to head
 * the way the reader will, until a header it would reject. */
static void stamp(struct synth_ring *sr, size_t j, uint64_t tail, uint64_t head)
{
	struct perf_event_header h;
	uint64_t pos, id;

	for (pos = tail; !(pos & 7) && head - pos >= sizeof(h) && head - pos <= sr->size;
	     pos += h.size) {
		memcpy(&h, sr->data + (pos & (sr->size - 1)), sizeof(h));
		if (h.size < 16 || (h.size & 7) || h.size > head - pos)
			return;
		id = h.type == PERF_RECORD_SAMPLE || !(h.misc & 1) ? synth_event_id(j)
								 : synth_leader_id(j);
		synth_write(sr, h.type == PERF_RECORD_SAMPLE ? pos + 8 : pos + h.size - 8, &id,
			    sizeof(id));
	}
}

/* Ring j: its bytes from part, its tail and head, the session's view of it. */
static void fill_ring(struct fz *f, size_t j, const uint8_t *in, const uint8_t *part,
		      size_t len)
{
	static uint8_t buf[16384];
	struct synth_ring *sr = &f->b.rings[j];
	const uint8_t *ent = in + 32 + 8 * j;
	uint64_t tail = rd64(in + 8) + rd32(ent), head = rd32(ent + 4);

	if (!(f->flags & FZ_ODD_TAIL))
		tail &= ~7ull;
	if (f->flags & FZ_DESC) {
		len = build(f, j, part, len, buf, sr->size);
		part = buf;
	}
	len = len < sr->size ? len : sr->size;
	synth_write(sr, tail, part, len);
	if (f->flags & FZ_AUTO_HEAD)
		head = tail + len;
	else if (f->flags & FZ_RAW_HEAD)
		head += tail;
	else
		head = tail + head % (2 * sr->size + 1);
	if (f->flags & FZ_STAMP)
		stamp(sr, j, tail, head);
	sr->meta->data_tail = tail;
	sr->meta->data_head = head;
	if (pr_ring_init(&f->b.s->cpu[j].ring, sr->meta, sr->data, sr->size, sr->scratch))
		abort();
	f->r[j] = (struct fz_ring){ .tail0 = tail, .avail = head - tail };
}

/* Record pos of ring j (from its first tail), made contiguous in buf; NULL
 * where the reader would find a corrupt header. */
static const struct perf_event_header *record_at(const struct fz *f, size_t j, uint64_t pos,
						 uint8_t *buf)
{
	const struct synth_ring *sr = &f->b.rings[j];
	uint64_t off = (f->r[j].tail0 + pos) & (sr->size - 1), left = f->r[j].avail - pos;
	struct perf_event_header h;
	size_t first;

	if (left < sizeof(h))
		return NULL;
	memcpy(&h, sr->data + off, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) || h.size > left)
		return NULL;
	first = off + h.size > sr->size ? sr->size - off : h.size;
	memcpy(buf, sr->data + off, first);
	memcpy(buf + first, sr->data, h.size - first);
	return (const struct perf_event_header *)buf;
}

/* The merge key of a record every parse delivers: its time. 0 if it would
 * be skipped, or has no time (which the merge treats apart). */
static uint64_t key_of(const struct fz *f, size_t j, const struct perf_event_header *h)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	uint64_t id = 0;

	if (!pr_record_identifier(h, &id))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE)
		return id == synth_event_id(j) && !pr_decode_sample_attr(h, &f->attr, &smp) ?
		       smp.time : 0;
	if (id == synth_event_id(j))
		return pr_decode_record(h, f->st, &rec) ? 0 : rec.time;
	if (id == synth_leader_id(j))
		return pr_decode_record(h, PR_SAMPLE_FORCED, &rec) ? 0 : rec.time;
	return 0;
}

/* Whether ring j's records, read from its tail, are all delivered and
 * timed in order. A ring that is overrun or misaligned delivers nothing. */
static bool ring_ordered(const struct fz *f, size_t j)
{
	static uint8_t buf[PR_RING_SCRATCH];
	const struct fz_ring *r = &f->r[j];
	const struct perf_event_header *h;
	uint64_t pos, key, prev = 0;

	if (r->avail > f->b.rings[j].size || (r->tail0 & 7))
		return true;
	for (pos = 0; pos < r->avail; pos += h->size) {
		if (!(h = record_at(f, j, pos, buf)) || (key = key_of(f, j, h)) < prev || !key)
			return false;
		prev = key;
	}
	return true;
}

/* Byte 6's profiler sample types (bits 1-7), and the attr fields that size them. */
static void profile_attr(struct perf_event_attr *a, unsigned bits)
{
	static const uint64_t map[7] = {
		PERF_SAMPLE_READ, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER,
		PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC,
		PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR,
		PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
			PERF_SAMPLE_CODE_PAGE_SIZE,
	};

	for (unsigned i = 0; i < 7; i++)
		if (bits & (1u << i))
			a->sample_type |= map[i];
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	a->sample_regs_user = 0x7;
	a->sample_regs_intr = 0x3;
	a->sample_stack_user = 64;
}

static bool setup(struct fz *f, const uint8_t *in, size_t n)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .sample_period = 1 };
	size_t k = 1 + in[0] % FZ_MAX_RINGS, part = (n - FZ_HDR) / k, j;
	uint64_t size = 8ull << (in[1] % 12);

	memset(f, 0, sizeof(*f));
	f->flags = in[3];
	f->stop_every = in[4];
	f->batch = (in[7] & 1) ? 1 + (in[7] >> 1) : 0;
	attr.sample_type = sample_type_of(in[2]);
	profile_attr(&attr, in[6] >> 1);
	if (synth_session_new(&f->b, k, size, &attr,
				    (f->flags & FZ_NO_SAMPLE_CB) ? NULL : on_sample, f))
		return false;
	f->st = synth_session_sample_type(&f->b);
	f->attr = *perfring_event_attr(f->b.ev);
	if ((in[6] & 1) && f->b.s->merge->batch) {
		struct pr_batch *bt = f->b.s->merge->batch;

		bt->after = bt->wait = bt->wait_max = 1;
		bt->min_total = 1;
	}
	if (!(f->flags & FZ_NO_REC_CB)) {
		/* set_record_callback refuses once started, and this one is. */
		f->b.s->reg.sink = (struct pr_sink){ on_record, f, PERFRING_REC_ALL };
	}
	for (j = 0; j < k; j++)
		fill_ring(f, j, in, in + FZ_HDR + j * part, part);
	f->ordered = true;
	for (j = 0; j < k; j++)
		f->ordered = f->ordered && ring_ordered(f, j);
	return true;
}

/* -------------------------------------------------------------- parses */

static struct perfring_cpu_stats stats(const struct fz *f, size_t j)
{
	struct perfring_cpu_stats st;

	check(perfring_session_cpu_stats(f->b.s, (int)j, &st) == 0);
	return st;
}

static void call_begin(struct fz *f, int cur)
{
	f->cur = cur;
	f->last_time = 0;
	f->last_ring = 0;
	f->cb_samples = f->cb_records = 0;
	f->stopped = false;
}

/* A parse's return is the samples it handled; each had its callback. */
static void check_count(const struct fz *f, int n, uint64_t samples)
{
	check(n >= 0 && (uint64_t)n == samples);
	if (!(f->flags & FZ_NO_SAMPLE_CB))
		check(f->cb_samples == (unsigned)n);
	if (f->flags & FZ_NO_REC_CB)
		check(f->cb_records == 0);
}

static bool at_head(const struct fz *f, size_t j)
{
	const struct pr_ring *r = &f->b.s->cpu[j].ring;

	return r->tail == r->head && r->meta->data_tail == r->head;
}

static void op_cpu(struct fz *f, size_t j, unsigned a, uint32_t max)
{
	struct perfring_cpu_stats st0 = stats(f, j), st1;
	const struct pr_ring *r = &f->b.s->cpu[j].ring;
	bool more = true;
	int n;

	call_begin(f, (int)j);
	if (!max && (a & 0x40))
		n = perfring_session_parse_for_cpu(f->b.s, (int)j);
	else
		n = perfring_session_parse_for_cpu_n(f->b.s, (int)j, max, &more);
	st1 = stats(f, j);
	check_count(f, n, st1.samples - st0.samples);
	check(r->meta->data_tail == r->tail && !f->b.s->cpu[j].pulling);
	if (max || !(a & 0x40))
		check(more == (r->tail != r->head));
	check(!max || st1.records - st0.records <= max);
	/* It ends at head unless a callback stopped it or max records went. */
	check(f->stopped || at_head(f, j) || (max && st1.records - st0.records == max));
}

/* After a pull step: no callback ran, the stats count what it returned,
 * an empty pull (ended) left the ring at its head; a commit unless a & 0x20. */
static void pull_done(struct fz *f, size_t j, unsigned a, const struct perfring_cpu_stats *st0,
		      uint64_t samples, uint64_t records, bool ended)
{
	const struct pr_ring *r = &f->b.s->cpu[j].ring;
	struct perfring_cpu_stats st1;

	check(f->cb_samples == 0 && f->cb_records == 0);
	f->r[j].samples += samples;
	f->r[j].records += records;
	st1 = stats(f, j);
	check(st1.samples - st0->samples == samples);
	check(st1.records - st0->records >= samples + records);
	if (ended)
		check(r->tail == r->head);
	if (!(a & 0x20)) {
		check(perfring_cpu_commit(f->b.s, (int)j) == 0);
		check(r->meta->data_tail == r->tail && !f->b.s->cpu[j].pulling);
	}
}

static void op_pull(struct fz *f, size_t j, unsigned a, unsigned count)
{
	struct perfring_cpu_stats st0 = stats(f, j);
	struct perfring_sample smp;
	struct perfring_record rec;
	uint64_t samples = 0, records = 0;
	unsigned i;
	int k = 1;

	call_begin(f, (int)j);
	for (i = 0; (!count || i < count) && k; i++) {
		k = perfring_cpu_next(f->b.s, (int)j, &smp, &rec);
		check(k == 0 || k == PERFRING_NEXT_SAMPLE || k == PERFRING_NEXT_RECORD);
		if (k == PERFRING_NEXT_SAMPLE) {
			check_sample(f, j, &smp);
			samples++;
		} else if (k == PERFRING_NEXT_RECORD) {
			check_record(f, j, &rec);
			records++;
		}
	}
	pull_done(f, j, a, &st0, samples, records, !k);
}

/* A pulled sample as the header promises it: the fields after record are
 * set only under their sample_type bit, and with PERFRING_PULL_PRESENT_ONLY
 * (present) the optional ones before it too (the rest may still hold the
 * 0xa5 bytes the items were filled with), so those are zeroed, as the push
 * form has them. */
static struct perfring_sample as_pulled(const struct fz *f, const struct perfring_sample *smp,
					bool present)
{
	struct perfring_sample v = *smp;
	const size_t prof = offsetof(struct perfring_sample, read);

	if (!(f->st & PERF_SAMPLE_STREAM_ID))
		v.stream_id = 0;
	if (!(f->st & PR_SAMPLE_PROFILE))
		memset((uint8_t *)&v + prof, 0, sizeof(v) - prof);
	if (!present)
		return v;
	if (!(f->st & PERF_SAMPLE_IP))
		v.ip = 0;
	if (!(f->st & PERF_SAMPLE_ADDR))
		v.addr = 0;
	if (!(f->st & PERF_SAMPLE_PERIOD))
		v.period = 0;
	if (!(f->st & PERF_SAMPLE_CALLCHAIN)) {
		v.callchain = NULL;
		v.callchain_nr = 0;
	}
	if (!(f->st & PERF_SAMPLE_RAW)) {
		v.raw = NULL;
		v.raw_size = 0;
	}
	return v;
}

/* The batch mode's pull step: count pulls of f->batch items (0: until one
 * returns 0), every item of a pull checked once the pull has returned, so
 * all must be valid together. */
static void op_pull_batch(struct fz *f, size_t j, unsigned a, unsigned count)
{
	static const struct perfring_pull_opts po = { sizeof(po), PERFRING_PULL_PRESENT_ONLY };
	static struct perfring_item it[128];
	const bool present = a & 0x40;
	struct perfring_cpu_stats st0 = stats(f, j);
	const struct pr_ring *r = &f->b.s->cpu[j].ring;
	uint64_t samples = 0, records = 0;
	unsigned i;
	int n = 1, k;

	call_begin(f, (int)j);
	for (i = 0; (!count || i < count) && n; i++) {
		memset(it, 0xa5, f->batch * sizeof(it[0]));
		n = perfring_cpu_pull_opts(f->b.s, (int)j, it, f->batch, present ? &po : NULL);
		check(n >= 0 && (size_t)n <= f->batch);
		for (k = 0; k < n; k++) {
			check(it[k].kind == PERFRING_NEXT_SAMPLE || it[k].kind == PERFRING_NEXT_RECORD);
			if (it[k].kind == PERFRING_NEXT_SAMPLE) {
				struct perfring_sample smp = as_pulled(f, &it[k].u.sample, present);

				check_sample(f, j, &smp);
				note(f, sample_digest(&smp));
				samples++;
			} else {
				check_record(f, j, &it[k].u.record);
				note(f, record_digest(&it[k].u.record));
				records++;
			}
		}
	}
	/* An empty pull ends the batch, committed. */
	if (!n)
		check(r->meta->data_tail == r->tail && !f->b.s->cpu[j].pulling);
	pull_done(f, j, a, &st0, samples, records, !n);
}

/* parse_all, or (internal) pr_merge_parse as parse_until calls it, whose
 * *stopped must say whether a callback asked to stop. */
static void op_all(struct fz *f, bool internal)
{
	uint64_t samples0 = 0, samples1 = 0;
	bool stopped = true;
	size_t j;
	int n;

	for (j = 0; j < f->b.nrings; j++)
		samples0 += stats(f, j).samples;
	call_begin(f, -1);
	if (internal) {
		n = pr_merge_parse(f->b.s->merge, &stopped);
		check(stopped == f->stopped);
	} else {
		n = perfring_session_parse_all(f->b.s);
	}
	for (j = 0; j < f->b.nrings; j++) {
		samples1 += stats(f, j).samples;
		check(!f->b.s->cpu[j].pulling);
		check(f->stopped || at_head(f, j));
	}
	check_count(f, n, samples1 - samples0);
}

/* Like the reactor: a budget and a cancel flag set from a callback. */
static void op_cancel(struct fz *f, size_t j, uint32_t max)
{
	struct perfring_cpu_stats st0 = stats(f, j), st1;
	const struct pr_ring *r = &f->b.s->cpu[j].ring;
	bool more = true;
	int n;

	call_begin(f, (int)j);
	f->cancel_mode = true;
	f->cancel = false;
	n = pr_drain(&f->b.s->cpu[j], max, &more, &f->cancel);
	f->cancel_mode = false;
	st1 = stats(f, j);
	check_count(f, n, st1.samples - st0.samples);
	check(f->cancel == f->stopped && more == (r->tail != r->head));
	check(r->meta->data_tail == r->tail && !f->b.s->cpu[j].pulling);
	check(!max || st1.records - st0.records <= max);
	check(f->stopped || at_head(f, j) || (max && st1.records - st0.records == max));
}

static void step(struct fz *f, const uint8_t *s)
{
	size_t j = ((s[0] >> 2) & 7) % f->b.nrings;

	switch (s[0] & 3) {
	case 0:
		op_cpu(f, j, s[0], s[1]);
		break;
	case 1:
		if (f->batch)
			op_pull_batch(f, j, s[0], s[1]);
		else
			op_pull(f, j, s[0], s[1]);
		break;
	case 2:
		op_all(f, false);
		break;
	default:
		if (s[0] & 0x20)
			op_cancel(f, j, s[1]);
		else
			op_all(f, true);
	}
}

/* ------------------------------------------------------------- the end */

static void check_stats(const struct fz *f, size_t j)
{
	struct perfring_cpu_stats st = stats(f, j);
	const struct fz_ring *r = &f->r[j];

	check(st.samples <= st.records && st.late <= st.records);
	check(st.records >= r->samples + r->records);
	if (!(f->flags & FZ_NO_SAMPLE_CB))
		check(st.samples == r->samples);
	check(!(st.bytes & 7) && st.bytes >= r->end && st.records * 8 <= st.bytes);
	if (r->avail <= f->b.rings[j].size)
		check(st.bytes <= r->avail);
	else
		check(st.bytes == 0 && st.records == 0);
	check(st.max_fill_pct <= 100);
	/* The merge takes records oldest first, so none is older than one
	 * already merged. */
	if (f->ordered)
		check(st.late == 0);
}

/* With nothing written since, a parse that is never stopped leaves every
 * ring at its head, and the next delivers nothing. */
static void drain_and_check(struct fz *f)
{
	size_t j;
	int n;

	f->no_stop = true;
	op_all(f, false);
	call_begin(f, -1);
	n = perfring_session_parse_all(f->b.s);
	check(n == 0 && f->cb_samples == 0 && f->cb_records == 0);
	for (j = 0; j < f->b.nrings; j++) {
		check(at_head(f, j));
		call_begin(f, (int)j);
		n = perfring_session_parse_for_cpu(f->b.s, (int)j);
		check(n == 0 && f->cb_samples == 0 && f->cb_records == 0);
		check_stats(f, j);
	}
}

/* One form over every ring of a fresh session on the input, to its end:
 * parse_for_cpu (batch 0) or pulls of batch items (a: op_pull_batch's
 * step byte), every callback set; what it delivered into q, its stats
 * into st. */
static void one_form(const uint8_t *in, size_t n, size_t batch, unsigned a, struct fz_seq *q,
		     struct perfring_cpu_stats st[FZ_MAX_RINGS])
{
	struct fz *f = &fz;
	size_t j;

	if (!setup(f, in, n))
		abort();
	check(perfring_event_set_callback(f->b.ev, on_sample, f) == 0);
	f->b.s->reg.sink = (struct pr_sink){ on_record, f, PERFRING_REC_ALL };
	f->flags &= ~(FZ_NO_SAMPLE_CB | FZ_NO_REC_CB);
	f->no_stop = true;
	f->batch = batch;
	f->seq = q;
	q->n = 0;
	for (j = 0; j < f->b.nrings; j++) {
		if (batch) {
			op_pull_batch(f, j, a, 0);
		} else {
			call_begin(f, (int)j);
			check(perfring_session_parse_for_cpu(f->b.s, (int)j) >= 0);
		}
		st[j] = stats(f, j);
		st[j].max_fill_pct = 0; /* a pull may read the head more than once */
	}
	f->seq = NULL;
	synth_session_free(&f->b);
}

/* The batch pull and the push form on the same input: the same records in
 * the same order, decoded the same, and the same stats. */
static void compare_forms(const uint8_t *in, size_t n, size_t batch)
{
	static struct fz_seq push, pull;
	struct perfring_cpu_stats a[FZ_MAX_RINGS], b[FZ_MAX_RINGS];
	size_t k = 1 + in[0] % FZ_MAX_RINGS, j;
	unsigned present;

	one_form(in, n, 0, 0, &push, a);
	for (present = 0; present <= 0x40; present += 0x40) {
		one_form(in, n, batch, present, &pull, b);
		check(push.n == pull.n && !memcmp(push.d, pull.d, push.n * sizeof(push.d[0])));
		for (j = 0; j < k; j++)
			check(!memcmp(&a[j], &b[j], sizeof(a[j])));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
	static bool registered;
	unsigned reps, i, k;

	if (!registered) {
		atexit(report);
		registered = true;
	}
	if (n < FZ_HDR)
		return 0;
	if (!setup(&fz, in, n))
		abort();
	total_inputs++;
	reps = 1 + in[5] % 4;
	for (k = 0; k < reps; k++)
		for (i = 0; i < FZ_STEPS; i++)
			step(&fz, in + 16 + 2 * i);
	drain_and_check(&fz);
	if (fz.b.s->merge->batch)
		total_batched += fz.b.s->merge->batch->records;
	synth_session_free(&fz.b);
	if (in[7] & 1)
		compare_forms(in, n, 1 + (in[7] >> 1));
	return 0;
}
