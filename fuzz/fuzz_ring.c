/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for core/ring.c and core/record.c: an arbitrary ring
 * (size, head, tail, bytes) read the way parse.c reads it, with every record
 * decoded. Input layout (little endian), see also gen_ring_corpus.c:
 *
 *   0  u8   size: 8 << (byte % 14), so 8 B .. 64 KiB
 *   1  u8   flags: FZ_RAW_TYPE, FZ_RAW_HEAD, FZ_ODD_TAIL
 *   2  u8   stop: if non-zero, end and begin again after this many records
 *   3  u8   unused
 *   4  u32  unused
 *   8  u64  tail
 *   16 u64  head: tail + this % (2 * size + 1), or as is with FZ_RAW_HEAD
 *   24 u64  sample_type: (this & PR_SAMPLE_SUPPORTED) | PR_SAMPLE_FORCED,
 *           or as is with FZ_RAW_TYPE
 *   32 ...  the data area from offset 0; the rest of it is zero
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "kernel/ring.h"
#include "synth.h"

#define FZ_HDR 32
#define FZ_RAW_TYPE 1u
#define FZ_RAW_HEAD 2u
#define FZ_ODD_TAIL 4u

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n);

#define check(cond) ((cond) ? (void)0 : __builtin_trap())

struct fz {
	struct synth_ring *sr;
	uint64_t st, tail0, consumed;
	unsigned stop;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One ring per size, kept across runs: only the bytes change. */
static struct synth_ring *ring_for(unsigned lg)
{
	static struct synth_ring rings[14];
	struct synth_ring *sr = &rings[lg];

	if (!sr->data && synth_ring_init(sr, 8ull << lg))
		abort();
	return sr;
}

static bool within(const void *rec, size_t size, const void *p, size_t len)
{
	const uint8_t *b = rec, *q = p;

	return q >= b && q <= b + size && len <= (size_t)(b + size - q);
}

static void check_str(const struct perf_event_header *h, const char *s)
{
	const uint8_t *end = (const uint8_t *)h + h->size;

	check(within(h, h->size, s, 1));
	check(memchr(s, 0, (size_t)(end - (const uint8_t *)s)) != NULL);
}

static void check_sample(const struct perf_event_header *h, uint64_t st)
{
	struct perfring_sample s;
	int ret = pr_decode_sample(h, st, &s);

	check(ret == 0 || ret == -EBADMSG);
	if (ret)
		return;
	check(s.record == h);
	check(within(h, h->size, s.callchain ? (const void *)s.callchain : (const void *)h,
		     (size_t)s.callchain_nr * 8));
	check(within(h, h->size, s.raw ? s.raw : (const void *)h, s.raw_size));
}

static void check_record(const struct perf_event_header *h, uint64_t st)
{
	struct perfring_record r;
	int ret = pr_decode_record(h, st, &r);

	check(ret == 0 || ret == -EBADMSG || ret == -ENOMSG);
	if (ret)
		return;
	check(r.record == h && r.type == h->type && r.misc == h->misc);
	if (h->type == PERF_RECORD_COMM)
		check_str(h, r.u.comm.comm);
	if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
		check_str(h, r.u.mmap.filename);
	if (h->type == PERF_RECORD_MMAP2 && r.u.mmap.build_id)
		check(within(h, h->size, r.u.mmap.build_id, r.u.mmap.build_id_size));
}

/* Decodes a copy of exactly h->size bytes, so ASan sees any overread. */
static void decode(const struct perf_event_header *rec, uint64_t st)
{
	struct perf_event_header *h = malloc(rec->size);
	uint64_t id;

	if (!h)
		abort();
	memcpy(h, rec, rec->size);
	if (h->type == PERF_RECORD_SAMPLE)
		check_sample(h, st);
	else
		check_record(h, st);
	pr_record_identifier(h, &id);
	pr_record_time(h, st);
	free(h);
}

static void check_rec(const struct fz *f, const struct perf_event_header *h)
{
	const struct pr_ring *r = &f->sr->ring;
	const uint8_t *p = (const uint8_t *)h;

	check(h->size >= sizeof(*h) && !(h->size & 7));
	check(h->size <= r->head - r->tail);
	if (p == r->scratch)
		check((r->tail & (r->size - 1)) + h->size > r->size);
	else
		check(p == r->data + (r->tail & (r->size - 1)) &&
		      within(r->data, r->size, p, h->size));
}

/* One batch: begin, peek/decode/consume until NULL or `stop` records. */
static bool batch(struct fz *f)
{
	struct pr_ring *r = &f->sr->ring;
	enum pr_ring_err err = PR_RING_OK;
	const struct perf_event_header *h;
	uint64_t avail = pr_ring_begin(r, &err);
	unsigned k = 0;

	check(avail <= r->size && avail == r->head - r->tail);
	check(err == PR_RING_OK || (err == PR_RING_OVERRUN && r->tail == r->head));
	while ((h = pr_ring_peek(r, &err))) {
		check_rec(f, h);
		decode(h, f->st);
		f->consumed += h->size;
		pr_ring_consume(r, h);
		check(f->consumed <= r->head - f->tail0);
		if (f->stop && ++k == f->stop) {
			pr_ring_end(r);
			check(r->meta->data_tail == r->tail);
			return true;
		}
	}
	check(r->tail == r->head);
	check(err == PR_RING_OK || err == PR_RING_CORRUPT || err == PR_RING_OVERRUN);
	pr_ring_end(r);
	check(r->meta->data_tail == r->head);
	check(pr_ring_fill(r) <= r->size);
	return false;
}

static void setup(struct fz *f, const uint8_t *in, size_t n)
{
	unsigned flags = in[1];
	struct synth_ring *sr = ring_for(in[0] % 14);
	uint64_t size = sr->size, tail = rd64(in + 8), head = rd64(in + 16);
	size_t len = n - FZ_HDR < size ? n - FZ_HDR : size;

	if (!(flags & FZ_ODD_TAIL))
		tail &= ~7ull;
	if (!(flags & FZ_RAW_HEAD))
		head = tail + head % (2 * size + 1);
	f->st = rd64(in + 24);
	if (!(flags & FZ_RAW_TYPE))
		f->st = (f->st & PR_SAMPLE_SUPPORTED) | PR_SAMPLE_FORCED;
	memcpy(sr->data, in + FZ_HDR, len);
	memset(sr->data + len, 0, size - len);
	sr->meta->data_tail = tail;
	sr->meta->data_head = head;
	if (pr_ring_init(&sr->ring, sr->meta, sr->data, size, sr->scratch))
		abort();
	f->sr = sr;
	f->tail0 = tail;
	f->consumed = 0;
	f->stop = in[2];
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
	struct fz f;
	uint64_t overruns;

	if (n < FZ_HDR)
		return 0;
	setup(&f, in, n);
	while (batch(&f))
		;
	overruns = f.sr->ring.overruns;
	check(overruns <= 1 && f.sr->ring.corrupt <= 1 && overruns + f.sr->ring.corrupt <= 1);
	check(!overruns || f.consumed == 0);
	return 0;
}
