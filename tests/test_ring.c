/* SPDX-License-Identifier: MIT */
/* core/ring.c on synthetic rings: wrapping, full/empty, overrun, corrupt
 * headers, batches; and ring + record decoding together. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "kernel/ring.h"
#include "synth.h"

/* A record the ring does not interpret: header + a pattern tied to seq. */
static size_t mk_rec(uint8_t *buf, uint16_t len, uint8_t seq)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = seq, .size = len };

	memcpy(buf, &h, sizeof(h));
	for (size_t i = sizeof(h); i < len; i++)
		buf[i] = (uint8_t)(seq * 37 + i);
	return len;
}

static void ring_new(struct synth_ring *sr, uint64_t size, uint64_t pos)
{
	cr_assert_eq(synth_ring_init(sr, size), 0);
	cr_assert_eq(synth_ring_set_pos(sr, pos), 0);
}

static void put_ok(struct synth_ring *sr, const void *rec, size_t len)
{
	cr_assert_eq(synth_put(sr, rec, len), 0, "synth_put of %zu bytes", len);
}

static bool wraps_at(const struct synth_ring *sr, uint64_t pos, size_t len)
{
	return (pos & (sr->size - 1)) + len > sr->size;
}

static bool in_data(const struct synth_ring *sr, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;

	return p >= sr->data && p + h->size <= sr->data + sr->size;
}

/* Peeks, checks the bytes against want and where they were handed out. */
static const struct perf_event_header *expect_rec(struct synth_ring *sr, const uint8_t *want,
						  size_t len, bool wraps)
{
	enum pr_ring_err err = PR_RING_OK;
	const struct perf_event_header *h = pr_ring_peek(&sr->ring, &err);

	cr_assert_not_null(h, "expected a record of %zu bytes", len);
	cr_assert_eq(err, PR_RING_OK);
	cr_assert_eq(h->size, len);
	cr_assert_eq(memcmp(h, want, len), 0, "record bytes differ");
	if (wraps)
		cr_assert_eq((const void *)h, (const void *)sr->scratch, "wrapped: not in scratch");
	else
		cr_assert(in_data(sr, h), "contiguous record not handed out in place");
	return h;
}

static void expect_end(struct synth_ring *sr)
{
	enum pr_ring_err err = PR_RING_OK;

	cr_assert_null(pr_ring_peek(&sr->ring, &err));
	cr_assert_eq(err, PR_RING_OK);
}

Test(ring, init_checks_size_and_takes_tail)
{
	static const uint64_t bad[] = { 0, 4, 12, 24, 100, 4097 };
	struct perf_event_mmap_page meta = { .data_head = 4096, .data_tail = 4096 };
	static uint8_t data[4096], scratch[PR_RING_SCRATCH];
	struct pr_ring r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_lt(pr_ring_init(&r, &meta, data, bad[i], scratch), 0, "size %lu",
			     (unsigned long)bad[i]);
	cr_assert_eq(pr_ring_init(&r, &meta, data, 8, scratch), 0);
	cr_assert_eq(pr_ring_init(&r, &meta, data, sizeof(data), scratch), 0);
	cr_assert_eq(r.tail, 4096);
	cr_assert_eq(r.size, sizeof(data));
	cr_assert_eq(r.corrupt, 0);
	cr_assert_eq(r.overruns, 0);
}

Test(ring, empty)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;

	ring_new(&sr, 256, 1000);
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), 0);
	cr_assert_eq(err, PR_RING_OK);
	expect_end(&sr);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, 1000);
	cr_assert_eq(pr_ring_fill(&sr.ring), 0);
	cr_assert_eq(sr.ring.corrupt + sr.ring.overruns, 0);
	synth_ring_free(&sr);
}

/* Fills the ring to exactly its size (legal) from pos, in 64-byte records. */
static void full_from(uint64_t pos)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t rec[4][64];

	ring_new(&sr, 256, pos);
	for (int i = 0; i < 4; i++)
		put_ok(&sr, rec[i], mk_rec(rec[i], 64, (uint8_t)i));
	cr_assert_eq(synth_put(&sr, rec[0], 8), -ENOSPC);
	cr_assert_eq(pr_ring_fill(&sr.ring), 256);
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), 256);
	cr_assert_eq(err, PR_RING_OK);
	for (int i = 0; i < 4; i++) {
		bool wraps = wraps_at(&sr, pos + 64 * (uint64_t)i, 64);

		pr_ring_consume(&sr.ring, expect_rec(&sr, rec[i], 64, wraps));
	}
	expect_end(&sr);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, pos + 256);
	cr_assert_eq(pr_ring_fill(&sr.ring), 0);
	cr_assert_eq(sr.ring.overruns, 0);
	cr_assert_eq(sr.ring.corrupt, 0);
	synth_ring_free(&sr);
}

Test(ring, exactly_full)
{
	full_from(0);
	full_from(256 * 5);
	full_from(256 * 5 + 40); /* one record wraps */
}

Test(ring, one_record_fills_the_ring)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t rec[64];

	mk_rec(rec, 64, 9);
	for (uint64_t pos = 0; pos < 64; pos += 8) {
		ring_new(&sr, 64, pos);
		put_ok(&sr, rec, 64);
		cr_assert_eq(pr_ring_begin(&sr.ring, &err), 64);
		pr_ring_consume(&sr.ring, expect_rec(&sr, rec, 64, pos != 0));
		expect_end(&sr);
		pr_ring_end(&sr.ring);
		cr_assert_eq(sr.meta->data_tail, pos + 64);
		synth_ring_free(&sr);
	}
}

/*
 * A 64-byte record R starting k*8 bytes before the ring's end, followed by a
 * 24-byte record F: for k = 1..7 R wraps and must come from scratch; k = 8
 * ends exactly at the end and k = 0 starts at the beginning (no copy).
 */
Test(ring, wrap_at_every_offset)
{
	const uint64_t size = 256, base = size * 3;
	uint8_t r[64], f[24];

	mk_rec(f, sizeof(f), 0xf0);
	for (uint64_t k = 0; k <= 8; k++) {
		uint64_t pos = base + size - 8 * k;
		struct synth_ring sr;
		enum pr_ring_err err = PR_RING_OK;
		const struct perf_event_header *h;

		mk_rec(r, sizeof(r), (uint8_t)k);
		ring_new(&sr, size, pos);
		memset(sr.scratch, 0xee, PR_RING_SCRATCH);
		put_ok(&sr, r, sizeof(r));
		put_ok(&sr, f, sizeof(f));
		cr_assert_eq(pr_ring_begin(&sr.ring, &err), sizeof(r) + sizeof(f));
		h = expect_rec(&sr, r, sizeof(r), k >= 1 && k <= 7);
		if (!(k >= 1 && k <= 7)) {
			cr_assert_eq((const uint8_t *)h, sr.data + (pos & (size - 1)));
			cr_assert_eq(sr.scratch[0], 0xee, "scratch written for k=%lu",
				     (unsigned long)k);
		}
		pr_ring_consume(&sr.ring, h);
		h = expect_rec(&sr, f, sizeof(f), false);
		cr_assert_eq((const uint8_t *)h, sr.data + ((pos + sizeof(r)) & (size - 1)));
		pr_ring_consume(&sr.ring, h);
		expect_end(&sr);
		pr_ring_end(&sr.ring);
		cr_assert_eq(sr.meta->data_tail, pos + sizeof(r) + sizeof(f));
		synth_ring_free(&sr);
	}
}

Test(ring, largest_record_wraps_through_scratch)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t *rec = malloc(SYNTH_REC_MAX);

	cr_assert_not_null(rec);
	mk_rec(rec, SYNTH_REC_MAX, 3);
	ring_new(&sr, 1u << 17, (1u << 17) - 4096);
	put_ok(&sr, rec, SYNTH_REC_MAX);
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), SYNTH_REC_MAX);
	pr_ring_consume(&sr.ring, expect_rec(&sr, rec, SYNTH_REC_MAX, true));
	expect_end(&sr);
	synth_ring_free(&sr);
	free(rec);
}

Test(ring, overrun)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t rec[32];
	uint64_t head = 512 + 256 + 8;

	ring_new(&sr, 256, 512);
	synth_set_head(&sr, head);
	pr_ring_begin(&sr.ring, &err);
	cr_assert_eq(err, PR_RING_OVERRUN);
	cr_assert_eq(sr.ring.overruns, 1);
	cr_assert_eq(sr.ring.corrupt, 0);
	cr_assert_eq(sr.ring.tail, head);
	err = PR_RING_OK;
	cr_assert_null(pr_ring_peek(&sr.ring, &err));
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, head);

	/* The ring works again after the resync. */
	put_ok(&sr, rec, mk_rec(rec, sizeof(rec), 1));
	err = PR_RING_OK;
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), sizeof(rec));
	cr_assert_eq(err, PR_RING_OK);
	pr_ring_consume(&sr.ring, expect_rec(&sr, rec, sizeof(rec), false));
	expect_end(&sr);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, head + sizeof(rec));
	cr_assert_eq(sr.ring.overruns, 1);
	synth_ring_free(&sr);
}

Test(ring, head_exactly_one_ring_ahead_is_no_overrun)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;

	ring_new(&sr, 256, 0);
	for (int i = 0; i < 32; i++) {
		uint8_t rec[8];

		put_ok(&sr, rec, mk_rec(rec, 8, (uint8_t)i));
	}
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), 256);
	cr_assert_eq(err, PR_RING_OK);
	cr_assert_eq(sr.ring.overruns, 0);
	synth_ring_free(&sr);
}

/*
 * Two valid records, then a header whose size is bad, then `extra` more
 * bytes. The valid ones are delivered; the bad one resyncs to head.
 */
static void corrupt_case(uint16_t bad_size, size_t extra, uint64_t pos)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t a[32], b[40], pad[64] = { 0 };
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = bad_size };
	uint64_t head;

	ring_new(&sr, 256, pos);
	put_ok(&sr, a, mk_rec(a, sizeof(a), 1));
	put_ok(&sr, b, mk_rec(b, sizeof(b), 2));
	put_ok(&sr, &bad, sizeof(bad));
	put_ok(&sr, pad, extra);
	head = synth_head(&sr);
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), head - pos);
	pr_ring_consume(&sr.ring, expect_rec(&sr, a, sizeof(a), wraps_at(&sr, pos, sizeof(a))));
	pr_ring_consume(&sr.ring, expect_rec(&sr, b, sizeof(b),
					     wraps_at(&sr, pos + sizeof(a), sizeof(b))));
	cr_assert_null(pr_ring_peek(&sr.ring, &err), "bad size %u", bad_size);
	cr_assert_eq(err, PR_RING_CORRUPT, "bad size %u", bad_size);
	cr_assert_eq(sr.ring.corrupt, 1);
	cr_assert_eq(sr.ring.overruns, 0);
	cr_assert_eq(sr.ring.tail, head);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, head);

	/* Later records are read normally. */
	put_ok(&sr, a, sizeof(a));
	err = PR_RING_OK;
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), sizeof(a));
	pr_ring_consume(&sr.ring, expect_rec(&sr, a, sizeof(a), wraps_at(&sr, head, sizeof(a))));
	expect_end(&sr);
	cr_assert_eq(sr.ring.corrupt, 1);
	synth_ring_free(&sr);
}

Test(ring, corrupt_size_zero)
{
	corrupt_case(0, 16, 0);
}

Test(ring, corrupt_size_below_header)
{
	corrupt_case(4, 16, 0);
}

Test(ring, corrupt_size_not_multiple_of_8)
{
	corrupt_case(12, 16, 0);
	corrupt_case(20, 16, 0);
}

/* 64 <= all the unread bytes at begin (96), but > the 24 left at the header. */
Test(ring, corrupt_size_larger_than_unread)
{
	corrupt_case(64, 16, 0);
	corrupt_case(0xfff8, 16, 0);
}

Test(ring, corrupt_header_after_wrap)
{
	corrupt_case(12, 16, 256 - 40); /* the second record wraps */
}

/* The bytes at the misaligned tail even look like a valid 16-byte header. */
Test(ring, misaligned_tail_is_corrupt)
{
	struct perf_event_header fake = { .type = PERF_RECORD_SAMPLE, .size = 16 };
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t rec[32];

	ring_new(&sr, 256, 64);
	mk_rec(rec, sizeof(rec), 1);
	memcpy(rec + 12, &fake, sizeof(fake));
	put_ok(&sr, rec, sizeof(rec));
	sr.meta->data_tail = 76;
	cr_assert_eq(pr_ring_init(&sr.ring, sr.meta, sr.data, sr.size, sr.scratch), 0);
	pr_ring_begin(&sr.ring, &err);
	if (err == PR_RING_OK)
		cr_assert_null(pr_ring_peek(&sr.ring, &err));
	cr_assert_eq(err, PR_RING_CORRUPT);
	cr_assert_eq(sr.ring.corrupt, 1);
	cr_assert_eq(sr.ring.tail, 96);
	synth_ring_free(&sr);
}

/* Sizes of 10 records; the 3rd ends past the wrap point of a 512-byte ring. */
static const uint16_t batch_len[10] = { 40, 64, 72, 8, 16, 24, 32, 48, 56, 8 };

Test(ring, stop_in_mid_batch)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t rec[10][72];
	const struct perf_event_header *h;
	uint64_t pos = 512 * 7 + 384, end3 = pos + 40 + 64 + 72, total = 0;

	ring_new(&sr, 512, pos);
	for (int i = 0; i < 10; i++) {
		put_ok(&sr, rec[i], mk_rec(rec[i], batch_len[i], (uint8_t)i));
		total += batch_len[i];
	}
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), total);
	for (int i = 0; i < 3; i++) {
		h = pr_ring_peek(&sr.ring, &err);
		cr_assert_not_null(h);
		cr_assert_eq(memcmp(h, rec[i], batch_len[i]), 0);
		pr_ring_consume(&sr.ring, h);
	}
	h = pr_ring_peek(&sr.ring, &err); /* seen, not consumed: the caller stopped */
	cr_assert_not_null(h);
	cr_assert_eq(h->misc, 3);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, end3);
	cr_assert_eq(pr_ring_fill(&sr.ring), total - (end3 - pos));

	cr_assert_eq(pr_ring_begin(&sr.ring, &err), total - (end3 - pos));
	for (int i = 3; i < 10; i++) {
		h = pr_ring_peek(&sr.ring, &err);
		cr_assert_not_null(h, "record %d", i + 1);
		cr_assert_eq(h->size, batch_len[i]);
		cr_assert_eq(memcmp(h, rec[i], batch_len[i]), 0, "record %d", i + 1);
		pr_ring_consume(&sr.ring, h);
	}
	expect_end(&sr);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, pos + total);
	cr_assert_eq(err, PR_RING_OK);
	synth_ring_free(&sr);
}

Test(ring, batch_stops_at_its_snapshot)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t a[24], b[24];

	ring_new(&sr, 256, 0);
	put_ok(&sr, a, mk_rec(a, sizeof(a), 1));
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), sizeof(a));
	put_ok(&sr, b, mk_rec(b, sizeof(b), 2)); /* arrives during the batch */
	pr_ring_consume(&sr.ring, expect_rec(&sr, a, sizeof(a), false));
	expect_end(&sr);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, sizeof(a));
	cr_assert_eq(pr_ring_fill(&sr.ring), sizeof(b));
	cr_assert_eq(pr_ring_begin(&sr.ring, &err), sizeof(b));
	pr_ring_consume(&sr.ring, expect_rec(&sr, b, sizeof(b), false));
	expect_end(&sr);
	synth_ring_free(&sr);
}

Test(ring, end_without_consume_keeps_tail)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	uint8_t a[24];

	ring_new(&sr, 256, 48);
	put_ok(&sr, a, mk_rec(a, sizeof(a), 1));
	pr_ring_begin(&sr.ring, &err);
	expect_rec(&sr, a, sizeof(a), false);
	pr_ring_end(&sr.ring);
	cr_assert_eq(sr.meta->data_tail, 48);
	cr_assert_eq(pr_ring_fill(&sr.ring), sizeof(a));
	synth_ring_free(&sr);
}

/* ------------------------------------------------ ring + record decoding */

#define ST_A (PR_SAMPLE_FORCED | PERF_SAMPLE_RAW)
#define ST_B (PR_SAMPLE_FORCED | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static const struct synth_fields trailer = {
	.identifier = 0x1d, .pid = 41, .tid = 42, .time = 1000000123, .cpu = 3,
};

Test(ring_decode, lost_and_lost_samples)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	struct synth_fields t2 = trailer;
	const struct perf_event_header *h;
	struct perfring_record rec;
	uint8_t buf[128];

	t2.time = 2000000456;
	t2.identifier = 0x2e;
	ring_new(&sr, 256, 256 - 24); /* the LOST record wraps */
	put_ok(&sr, buf, synth_lost(buf, sizeof(buf), 0x77, 937, PR_SAMPLE_FORCED, &trailer));
	put_ok(&sr, buf, synth_lost_samples(buf, sizeof(buf), 63, PR_SAMPLE_FORCED, &t2));
	pr_ring_begin(&sr.ring, &err);

	h = pr_ring_peek(&sr.ring, &err);
	cr_assert_not_null(h);
	cr_assert_eq((const void *)h, (const void *)sr.scratch);
	cr_assert_eq(pr_decode_record(h, PR_SAMPLE_FORCED, &rec), 0);
	cr_assert_eq(rec.type, PERF_RECORD_LOST);
	cr_assert_eq(rec.record, h);
	cr_assert_eq(rec.u.lost.id, 0x77);
	cr_assert_eq(rec.u.lost.lost, 937);
	cr_assert_eq(rec.pid, 41);
	cr_assert_eq(rec.tid, 42);
	cr_assert_eq(rec.time, 1000000123);
	cr_assert_eq(rec.id, 0x1d);
	cr_assert_eq(pr_record_time(h, PR_SAMPLE_FORCED), 1000000123);
	pr_ring_consume(&sr.ring, h);

	h = pr_ring_peek(&sr.ring, &err);
	cr_assert_not_null(h);
	cr_assert_eq(pr_decode_record(h, PR_SAMPLE_FORCED, &rec), 0);
	cr_assert_eq(rec.type, PERF_RECORD_LOST_SAMPLES);
	cr_assert_eq(rec.u.lost_samples.lost, 63);
	cr_assert_eq(rec.pid, 41);
	cr_assert_eq(rec.tid, 42);
	cr_assert_eq(rec.time, 2000000456);
	cr_assert_eq(rec.id, 0x2e);
	pr_ring_consume(&sr.ring, h);
	expect_end(&sr);
	synth_ring_free(&sr);
}

static uint64_t type_of(uint64_t id)
{
	return id == 100 ? ST_A : id == 200 ? ST_B : 0;
}

static void fields_for(struct synth_fields *f, int i, uint64_t *cc, uint8_t *raw)
{
	memset(f, 0, sizeof(*f));
	f->identifier = i % 2 ? 200 : 100;
	f->pid = 1000 + (uint32_t)i;
	f->tid = 2000 + (uint32_t)i;
	f->time = 5000 + (uint64_t)i;
	f->cpu = (uint32_t)i % 4;
	f->ip = 0xffffffff81000000ull + (uint64_t)i;
	f->period = 10 + (uint64_t)i;
	for (int j = 0; j < 3; j++)
		cc[j] = 0x400000 + (uint64_t)(i * 16 + j);
	f->callchain = cc;
	f->callchain_nr = 1 + (uint64_t)i % 3;
	for (int j = 0; j < 12; j++)
		raw[j] = (uint8_t)(i * 11 + j);
	f->raw = raw;
	f->raw_size = 12;
}

static void check_interleaved(const struct perf_event_header *h, int i)
{
	struct perfring_sample s;
	struct synth_fields f;
	uint64_t id, cc[3];
	uint8_t raw[12];

	fields_for(&f, i, cc, raw);
	cr_assert(pr_record_identifier(h, &id));
	cr_assert_eq(id, f.identifier, "record %d", i);
	memset(&s, 0, sizeof(s));
	cr_assert_eq(pr_decode_sample(h, type_of(id), &s), 0);
	cr_assert_eq(s.pid, f.pid);
	cr_assert_eq(s.tid, f.tid);
	cr_assert_eq(s.time, f.time);
	cr_assert_eq(pr_record_time(h, type_of(id)), f.time);
	if (id == 100) {
		cr_assert_eq(s.raw_size, 12);
		cr_assert_eq(memcmp(s.raw, raw, 12), 0);
		cr_assert_eq(s.callchain_nr, 0);
		cr_assert_eq(s.ip, 0);
	} else {
		cr_assert_eq(s.ip, f.ip);
		cr_assert_eq(s.period, f.period);
		cr_assert_eq(s.callchain_nr, f.callchain_nr);
		cr_assert_eq(memcmp(s.callchain, cc, f.callchain_nr * 8), 0);
		cr_assert_eq(s.raw_size, 0);
	}
}

Test(ring_decode, two_events_told_apart_by_identifier)
{
	struct synth_ring sr;
	enum pr_ring_err err = PR_RING_OK;
	const struct perf_event_header *h;
	struct perfring_record rec;
	const struct synth_fields comm_tr = { .identifier = 200, .time = 9999, .pid = 7, .tid = 8 };
	struct synth_fields f;
	uint64_t cc[3], id;
	uint8_t raw[12], buf[256];
	int i;

	ring_new(&sr, 1024, 1024 * 2 + 704);
	for (i = 0; i < 8; i++) {
		fields_for(&f, i, cc, raw);
		put_ok(&sr, buf, synth_sample(buf, sizeof(buf), type_of(f.identifier), &f));
	}
	put_ok(&sr, buf, synth_comm(buf, sizeof(buf), 7, 8, "sh", true, ST_B, &comm_tr));
	pr_ring_begin(&sr.ring, &err);
	for (i = 0; (h = pr_ring_peek(&sr.ring, &err)) && h->type == PERF_RECORD_SAMPLE; i++) {
		check_interleaved(h, i);
		pr_ring_consume(&sr.ring, h);
	}
	cr_assert_eq(i, 8);
	cr_assert_not_null(h);
	cr_assert(pr_record_identifier(h, &id));
	cr_assert_eq(id, 200);
	cr_assert_eq(pr_decode_record(h, type_of(id), &rec), 0);
	cr_assert_eq(rec.time, 9999);
	cr_assert_str_eq(rec.u.comm.comm, "sh");
	pr_ring_consume(&sr.ring, h);
	expect_end(&sr);
	synth_ring_free(&sr);
}

/* A sample whose callchain and RAW payload straddle the ring's end, at every
 * 8-byte offset, decoded from the scratch copy. */
Test(ring_decode, callchain_and_raw_across_the_end)
{
	const uint64_t st = PR_SAMPLE_FORCED | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN |
			    PERF_SAMPLE_RAW;
	uint64_t cc[6] = { 1, 2, 3, 0xfffffffffffffe00ull, 5, 6 };
	uint8_t raw[28], buf[256];
	struct synth_fields f = {
		.identifier = 5, .ip = 0x1234, .pid = 1, .tid = 2, .time = 3, .cpu = 1,
		.callchain = cc, .callchain_nr = 6, .raw = raw, .raw_size = sizeof(raw),
	};
	size_t len;

	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(0xa0 + i);
	len = synth_sample(buf, sizeof(buf), st, &f);
	cr_assert_eq(len, 8 + 5 * 8 + 8 + 48 + 32);
	for (uint64_t k = 1; k < len / 8; k++) {
		struct synth_ring sr;
		enum pr_ring_err err = PR_RING_OK;
		const struct perf_event_header *h;
		struct perfring_sample s;
		const uint8_t *end;

		ring_new(&sr, 256, 256 * 9 - 8 * k);
		put_ok(&sr, buf, len);
		pr_ring_begin(&sr.ring, &err);
		h = expect_rec(&sr, buf, len, true);
		memset(&s, 0, sizeof(s));
		cr_assert_eq(pr_decode_sample(h, st, &s), 0, "k=%lu", (unsigned long)k);
		end = (const uint8_t *)h + h->size;
		cr_assert_eq(s.record, h);
		cr_assert_eq(s.ip, 0x1234);
		cr_assert_eq(s.callchain_nr, 6);
		cr_assert(s.callchain > (const uint64_t *)h &&
			  (const uint8_t *)(s.callchain + 6) <= end);
		cr_assert_eq(memcmp(s.callchain, cc, sizeof(cc)), 0);
		cr_assert_eq(s.raw_size, sizeof(raw));
		cr_assert((const uint8_t *)s.raw + s.raw_size <= end);
		cr_assert_eq(memcmp(s.raw, raw, sizeof(raw)), 0);
		pr_ring_consume(&sr.ring, h);
		expect_end(&sr);
		synth_ring_free(&sr);
	}
}
