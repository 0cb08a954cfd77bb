/* SPDX-License-Identifier: MIT */
/* core/record.c: every sample field, every kernel record, the trailer,
 * truncation, and the helpers around them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "synth.h"

#define TRAILER_ALL SYNTH_TRAILER_BITS

static uint64_t cc[4] = { 0xffffffff81001000ull, 0xffffffff81002000ull, 0x401000, 0x7f00 };
static const uint8_t raw[20] = "tracepoint-payload!";

/* Every field distinct; ID equals IDENTIFIER, as the kernel writes them. */
static const struct synth_fields all = {
	.identifier = 0x1111, .ip = 0x2222, .pid = 0x33, .tid = 0x44, .time = 0x5555,
	.addr = 0x6666, .id = 0x1111, .stream_id = 0x7777, .cpu = 5, .period = 0x8888,
	.callchain = cc, .callchain_nr = 4, .raw = raw, .raw_size = sizeof(raw),
};

/* Trailer values, all distinct so a wrong offset shows. */
static const struct synth_fields tr = {
	.pid = 101, .tid = 102, .time = 0x1000000000ull, .id = 0xd1, .stream_id = 0x51,
	.cpu = 2, .identifier = 0xab,
};

/* A record copied to an exact-size heap block, so ASan sees any overread. */
static struct perf_event_header *exact(const uint8_t *buf, size_t len)
{
	struct perf_event_header *h = malloc(len);

	cr_assert_not_null(h);
	memcpy(h, buf, len);
	h->size = (uint16_t)len;
	return h;
}

static void sample_prefill(struct perfring_sample *s)
{
	memset(s, 0xa5, sizeof(*s));
	s->event = (struct perfring_event *)s;
	s->cpu = -7;
}

/* out->cpu is the caller's unless PERF_SAMPLE_CPU gives it. */
static void decode_sample_ok(uint64_t st, const struct synth_fields *f, struct perfring_sample *s,
			     struct perf_event_header **hp)
{
	uint8_t buf[512];
	size_t len = synth_sample(buf, sizeof(buf), st, f);

	cr_assert_gt(len, 0);
	*hp = exact(buf, len);
	sample_prefill(s);
	cr_assert_eq(pr_decode_sample(*hp, st, s), 0, "sample_type %#lx", (unsigned long)st);
	cr_assert_eq(s->record, *hp);
	cr_assert_eq(s->event, (struct perfring_event *)s, "decoder touched event");
	if (st & PERF_SAMPLE_CPU)
		cr_assert_eq(s->cpu, (int)f->cpu);
	else
		cr_assert_eq(s->cpu, -7, "decoder touched cpu without PERF_SAMPLE_CPU");
}

Test(sample, all_fields)
{
	const uint64_t st = PR_SAMPLE_SUPPORTED;
	struct perf_event_header *h;
	struct perfring_sample s;
	const uint8_t *end;

	decode_sample_ok(st, &all, &s, &h);
	end = (const uint8_t *)h + h->size;
	cr_assert_eq(h->size, 8 + 10 * 8 + 4 * 8 + 24);
	cr_assert_eq(s.ip, 0x2222);
	cr_assert_eq(s.pid, 0x33);
	cr_assert_eq(s.tid, 0x44);
	cr_assert_eq(s.time, 0x5555);
	cr_assert_eq(s.addr, 0x6666);
	cr_assert_eq(s.id, 0x1111);
	cr_assert_eq(s.stream_id, 0x7777);
	cr_assert_eq(s.period, 0x8888);
	cr_assert_eq(s.callchain_nr, 4);
	cr_assert_eq((const uint8_t *)s.callchain, (const uint8_t *)h + 8 + 10 * 8);
	cr_assert_eq(memcmp(s.callchain, cc, sizeof(cc)), 0);
	cr_assert_eq(s.raw_size, sizeof(raw));
	cr_assert_eq((const uint8_t *)s.raw + s.raw_size, end);
	cr_assert_eq(memcmp(s.raw, raw, sizeof(raw)), 0);
	free(h);
}

/* Each field alone, so its own offset is checked with nothing before it. */
Test(sample, each_field_alone)
{
	struct perf_event_header *h;
	struct perfring_sample s;

	decode_sample_ok(PERF_SAMPLE_IP, &all, &s, &h);
	cr_assert_eq(s.ip, 0x2222);
	cr_assert_eq(s.time, 0);
	cr_assert_eq(s.callchain_nr, 0);
	cr_assert_eq(s.raw_size, 0);
	free(h);
	decode_sample_ok(PERF_SAMPLE_TID, &all, &s, &h);
	cr_assert_eq(s.pid, 0x33);
	cr_assert_eq(s.tid, 0x44);
	cr_assert_eq(s.ip, 0);
	free(h);
	decode_sample_ok(PERF_SAMPLE_TIME, &all, &s, &h);
	cr_assert_eq(s.time, 0x5555);
	cr_assert_eq(s.pid, 0);
	free(h);
	decode_sample_ok(PERF_SAMPLE_ADDR, &all, &s, &h);
	cr_assert_eq(s.addr, 0x6666);
	free(h);
	decode_sample_ok(PERF_SAMPLE_ID, &all, &s, &h);
	cr_assert_eq(s.id, 0x1111);
	free(h);
	decode_sample_ok(PERF_SAMPLE_STREAM_ID, &all, &s, &h);
	cr_assert_eq(s.stream_id, 0x7777);
	free(h);
	decode_sample_ok(PERF_SAMPLE_PERIOD, &all, &s, &h);
	cr_assert_eq(s.period, 0x8888);
	cr_assert_eq(s.id, 0);
	free(h);
	decode_sample_ok(PERF_SAMPLE_CALLCHAIN, &all, &s, &h);
	cr_assert_eq(s.callchain_nr, 4);
	cr_assert_eq(memcmp(s.callchain, cc, sizeof(cc)), 0);
	free(h);
	decode_sample_ok(PERF_SAMPLE_RAW, &all, &s, &h);
	cr_assert_eq(s.raw_size, sizeof(raw));
	cr_assert_eq(memcmp(s.raw, raw, sizeof(raw)), 0);
	free(h);
}

/* CPU is a u32 and a reserved u32: the reserved half must not leak into
 * cpu nor shift what follows. */
Test(sample, cpu_field)
{
	struct synth_fields f = all;
	struct perf_event_header *h;
	struct perfring_sample s;

	f.cpu = 0x3f;
	f.res = 0xbeef;
	decode_sample_ok(PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW, &f, &s, &h);
	cr_assert_eq(h->size, 8 + 8 + 8 + 24);
	cr_assert_eq(s.cpu, 0x3f);
	cr_assert_eq(s.period, 0x8888);
	cr_assert_eq(memcmp(s.raw, raw, sizeof(raw)), 0);
	free(h);
}

Test(sample, empty_callchain_and_raw)
{
	struct synth_fields f = all;
	struct perf_event_header *h;
	struct perfring_sample s;

	f.callchain_nr = 0;
	f.raw_size = 4; /* 4 + 4 = 8: no padding */
	decode_sample_ok(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_TIME, &f, &s, &h);
	cr_assert_eq(s.callchain_nr, 0);
	cr_assert_eq(s.raw_size, 4);
	cr_assert_eq(memcmp(s.raw, raw, 4), 0);
	cr_assert_eq(s.time, 0x5555);
	free(h);
}

Test(sample, raw_size_includes_the_kernel_padding)
{
	struct synth_fields f = all;
	struct perf_event_header *h;
	struct perfring_sample s;

	f.raw_size = 7; /* the kernel pads 4 + 7 to 16: size field 12 */
	decode_sample_ok(PERF_SAMPLE_RAW, &f, &s, &h);
	cr_assert_eq(s.raw_size, 12);
	cr_assert_eq(memcmp(s.raw, raw, 7), 0);
	free(h);
}

/* Every shorter record size fails: each field is cut at least once. */
static void truncations_fail(uint64_t st, const struct synth_fields *f)
{
	uint8_t buf[512];
	size_t len = synth_sample(buf, sizeof(buf), st, f);

	cr_assert_gt(len, 8);
	for (size_t cut = len - 8; cut >= 8; cut -= 8) {
		struct perf_event_header *h = exact(buf, cut);
		struct perfring_sample s;

		cr_assert_eq(pr_decode_sample(h, st, &s), -EBADMSG, "st %#lx size %zu of %zu",
			     (unsigned long)st, cut, len);
		free(h);
	}
}

Test(sample, truncation_of_each_field)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
		PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
		PERF_SAMPLE_PERIOD, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW,
	};

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		truncations_fail(bits[i], &all);
		truncations_fail(bits[i] | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_PERIOD, &all);
	}
	truncations_fail(PR_SAMPLE_SUPPORTED, &all);
}

/* A sample with callchain (nr = 4) and raw (size 20), then n or size patched. */
static void patched_fails(size_t off, const void *val, size_t n)
{
	const uint64_t st = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	uint8_t buf[256];
	size_t len = synth_sample(buf, sizeof(buf), st, &all);
	struct perf_event_header *h;
	struct perfring_sample s;

	cr_assert_eq(len, 8 + 8 + 32 + 24);
	memcpy(buf + off, val, n);
	h = exact(buf, len);
	cr_assert_eq(pr_decode_sample(h, st, &s), -EBADMSG, "patch at %zu", off);
	free(h);
}

Test(sample, callchain_nr_and_raw_size_past_the_end)
{
	static const uint64_t nrs[] = { 5, 8, 1ull << 29, 1ull << 61, UINT64_MAX };
	static const uint32_t sizes[] = { 21, 24, 28, 36, 0x10000, UINT32_MAX - 3, UINT32_MAX };

	for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++)
		patched_fails(8, &nrs[i], sizeof(nrs[i]));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		patched_fails(8 + 8 + 32, &sizes[i], sizeof(sizes[i]));
}

/* nr * 8 wraps to a small number: must still be caught with nothing after. */
Test(sample, callchain_nr_overflow)
{
	static const uint64_t nrs[] = { 5, 1ull << 61, (1ull << 61) + 1, UINT64_MAX };
	uint8_t buf[256];
	size_t len = synth_sample(buf, sizeof(buf), PERF_SAMPLE_CALLCHAIN, &all);

	for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		struct perf_event_header *h;
		struct perfring_sample s;

		memcpy(buf + 8, &nrs[i], 8);
		h = exact(buf, len);
		cr_assert_eq(pr_decode_sample(h, PERF_SAMPLE_CALLCHAIN, &s), -EBADMSG,
			     "nr %#lx", (unsigned long)nrs[i]);
		free(h);
	}
}

Test(sample, header_only)
{
	struct perf_event_header hdr = { .type = PERF_RECORD_SAMPLE, .size = 8 };
	struct perfring_sample s;

	cr_assert_eq(pr_decode_sample(&hdr, 0, &s), 0);
	cr_assert_eq(pr_decode_sample(&hdr, PERF_SAMPLE_IP, &s), -EBADMSG);
}

/* ------------------------------------------------------- kernel records */

static struct perf_event_header *rec_buf;

static void rec_free(void)
{
	free(rec_buf);
	rec_buf = NULL;
}

/* Decodes buf[0..len) copied exactly; the trailer must be tr's. */
static void decode_ok(const uint8_t *buf, size_t len, uint64_t st, struct perfring_record *r)
{
	cr_assert_gt(len, 0);
	rec_free();
	rec_buf = exact(buf, len);
	memset(r, 0xa5, sizeof(*r));
	r->event = (struct perfring_event *)r;
	r->cpu = -7;
	cr_assert_eq(pr_decode_record(rec_buf, st, r), 0, "type %u", rec_buf->type);
	cr_assert_eq(r->type, rec_buf->type);
	cr_assert_eq(r->misc, rec_buf->misc);
	cr_assert_eq(r->record, rec_buf);
	cr_assert_eq(r->event, (struct perfring_event *)r, "decoder touched event");
	cr_assert_eq(r->cpu, -7, "decoder touched cpu");
	if (st & PERF_SAMPLE_TID) {
		cr_assert_eq(r->pid, tr.pid);
		cr_assert_eq(r->tid, tr.tid);
	}
	if (st & PERF_SAMPLE_TIME)
		cr_assert_eq(r->time, tr.time);
	if (st & PERF_SAMPLE_IDENTIFIER)
		cr_assert_eq(r->id, tr.identifier);
}

static bool inside(const void *p, size_t n)
{
	const uint8_t *b = (const uint8_t *)rec_buf;

	return (const uint8_t *)p >= b && (const uint8_t *)p + n <= b + rec_buf->size;
}

/* The library's trailer, and every trailer bit, with distinct values. */
static const uint64_t trailers[] = { PR_SAMPLE_FORCED, TRAILER_ALL };

#define EACH_TRAILER(st)                                                             \
	for (size_t ti_ = 0; ti_ < 2; ti_++)                                         \
		for (uint64_t st = trailers[ti_]; st; st = 0)

Test(record, lost)
{
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		decode_ok(buf, synth_lost(buf, sizeof(buf), 0x42, 937, st, &tr), st, &r);
		cr_assert_eq(r.u.lost.id, 0x42);
		cr_assert_eq(r.u.lost.lost, 937);
	}
	rec_free();
}

Test(record, lost_samples)
{
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		decode_ok(buf, synth_lost_samples(buf, sizeof(buf), 12345, st, &tr), st, &r);
		cr_assert_eq(r.u.lost_samples.lost, 12345);
	}
	rec_free();
}

Test(record, comm_with_and_without_exec)
{
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		decode_ok(buf, synth_comm(buf, sizeof(buf), 10, 11, "bash", true, st, &tr), st, &r);
		cr_assert_eq(r.u.comm.pid, 10);
		cr_assert_eq(r.u.comm.tid, 11);
		cr_assert_str_eq(r.u.comm.comm, "bash");
		cr_assert(inside(r.u.comm.comm, 5));
		cr_assert(r.u.comm.exec);
		decode_ok(buf, synth_comm(buf, sizeof(buf), 10, 12, "kworker/0:1H-kb", false, st,
					  &tr), st, &r);
		cr_assert_eq(r.u.comm.tid, 12);
		cr_assert_str_eq(r.u.comm.comm, "kworker/0:1H-kb");
		cr_assert_not(r.u.comm.exec);
	}
	rec_free();
}

static const struct synth_mmap2 mm = {
	.misc = PERF_RECORD_MISC_USER, .pid = 20, .tid = 21, .addr = 0x7f0000001000,
	.len = 0x20000, .pgoff = 0x3000, .maj = 8, .min = 1, .ino = 123456,
	.ino_generation = 7, .prot = 5, .flags = 2, .filename = "/usr/lib/libc.so.6",
};

static void check_mmap_common(const struct perfring_record *r)
{
	cr_assert_eq(r->u.mmap.pid, 20);
	cr_assert_eq(r->u.mmap.tid, 21);
	cr_assert_eq(r->u.mmap.addr, 0x7f0000001000);
	cr_assert_eq(r->u.mmap.len, 0x20000);
	cr_assert_eq(r->u.mmap.pgoff, 0x3000);
	cr_assert_eq(r->u.mmap.prot, 5);
	cr_assert_eq(r->u.mmap.flags, 2);
	cr_assert_str_eq(r->u.mmap.filename, "/usr/lib/libc.so.6");
	cr_assert(inside(r->u.mmap.filename, 19));
}

Test(record, mmap2)
{
	struct perfring_record r;
	uint8_t buf[256];

	EACH_TRAILER(st) {
		decode_ok(buf, synth_mmap2(buf, sizeof(buf), &mm, st, &tr), st, &r);
		check_mmap_common(&r);
		cr_assert_eq(r.u.mmap.maj, 8);
		cr_assert_eq(r.u.mmap.min, 1);
		cr_assert_eq(r.u.mmap.ino, 123456);
		cr_assert_eq(r.u.mmap.ino_generation, 7);
		cr_assert_null(r.u.mmap.build_id);
		cr_assert_eq(r.u.mmap.build_id_size, 0);
	}
	rec_free();
}

Test(record, mmap2_build_id)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x99 };
	struct synth_mmap2 m = mm;
	struct perfring_record r;
	uint8_t buf[256];

	m.build_id = bid;
	EACH_TRAILER(st) {
		m.build_id_size = 20;
		decode_ok(buf, synth_mmap2(buf, sizeof(buf), &m, st, &tr), st, &r);
		cr_assert(r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		check_mmap_common(&r);
		cr_assert_eq(r.u.mmap.build_id_size, 20);
		cr_assert(inside(r.u.mmap.build_id, 20));
		cr_assert_eq(memcmp(r.u.mmap.build_id, bid, 20), 0);

		m.build_id_size = 16; /* an MD5-style id */
		decode_ok(buf, synth_mmap2(buf, sizeof(buf), &m, st, &tr), st, &r);
		cr_assert_eq(r.u.mmap.build_id_size, 16);
		cr_assert_eq(memcmp(r.u.mmap.build_id, bid, 16), 0);
		check_mmap_common(&r);
	}
	rec_free();
}

/* The old PERF_RECORD_MMAP: the MMAP2 body without maj..flags. */
Test(record, mmap_legacy)
{
	struct perfring_record r;
	uint8_t body[32 + 24], buf[256];
	uint64_t v[3] = { 0x400000, 0x1000, 0x2000 };
	uint32_t ids[2] = { 60, 61 };

	memset(body, 0, sizeof(body));
	memcpy(body, ids, 8);
	memcpy(body + 8, v, sizeof(v));
	strcpy((char *)body + 32, "[vdso]");
	EACH_TRAILER(st) {
		decode_ok(buf, synth_record(buf, sizeof(buf), PERF_RECORD_MMAP, 0, body,
					    sizeof(body), st, &tr), st, &r);
		cr_assert_eq(r.u.mmap.pid, 60);
		cr_assert_eq(r.u.mmap.tid, 61);
		cr_assert_eq(r.u.mmap.addr, 0x400000);
		cr_assert_eq(r.u.mmap.len, 0x1000);
		cr_assert_eq(r.u.mmap.pgoff, 0x2000);
		cr_assert_str_eq(r.u.mmap.filename, "[vdso]");
		cr_assert(inside(r.u.mmap.filename, 7));
	}
	rec_free();
}

Test(record, fork_and_exit)
{
	static const uint32_t types[] = { PERF_RECORD_FORK, PERF_RECORD_EXIT };
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		for (size_t i = 0; i < 2; i++) {
			decode_ok(buf, synth_task(buf, sizeof(buf), types[i], 30, 31, 32, 33,
						  0x9999 + i, st, &tr), st, &r);
			cr_assert_eq(r.type, types[i]);
			cr_assert_eq(r.u.task.pid, 30);
			cr_assert_eq(r.u.task.ppid, 31);
			cr_assert_eq(r.u.task.tid, 32);
			cr_assert_eq(r.u.task.ptid, 33);
			cr_assert_eq(r.u.task.time, 0x9999 + i);
		}
	}
	rec_free();
}

Test(record, throttle_and_unthrottle)
{
	static const uint32_t types[] = { PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE };
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		for (size_t i = 0; i < 2; i++) {
			decode_ok(buf, synth_throttle(buf, sizeof(buf), types[i], 0x700 + i, 0x71,
						      0x72, st, &tr), st, &r);
			cr_assert_eq(r.type, types[i]);
			cr_assert_eq(r.u.throttle.time, 0x700 + i);
			cr_assert_eq(r.u.throttle.id, 0x71);
			cr_assert_eq(r.u.throttle.stream_id, 0x72);
		}
	}
	rec_free();
}

Test(record, switch_in_out_preempt)
{
	static const uint16_t misc[] = {
		0, PERF_RECORD_MISC_SWITCH_OUT,
		PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
	};
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		for (size_t i = 0; i < 3; i++) {
			decode_ok(buf, synth_switch(buf, sizeof(buf), misc[i], st, &tr), st, &r);
			cr_assert_eq(r.type, PERF_RECORD_SWITCH);
			cr_assert_eq(r.u.context_switch.out, i >= 1, "misc %#x", misc[i]);
			cr_assert_eq(r.u.context_switch.preempt, i == 2, "misc %#x", misc[i]);
		}
	}
	rec_free();
}

Test(record, switch_cpu_wide)
{
	struct perfring_record r;
	uint8_t buf[128];

	EACH_TRAILER(st) {
		decode_ok(buf, synth_switch_cpu_wide(buf, sizeof(buf), PERF_RECORD_MISC_SWITCH_OUT |
						     PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 40, 41,
						     st, &tr), st, &r);
		cr_assert_eq(r.type, PERF_RECORD_SWITCH_CPU_WIDE);
		cr_assert(r.u.context_switch.out);
		cr_assert(r.u.context_switch.preempt);
		cr_assert_eq(r.u.context_switch.next_prev_pid, 40);
		cr_assert_eq(r.u.context_switch.next_prev_tid, 41);
		decode_ok(buf, synth_switch_cpu_wide(buf, sizeof(buf), 0, 50, 51, st, &tr), st, &r);
		cr_assert_not(r.u.context_switch.out);
		cr_assert_not(r.u.context_switch.preempt);
		cr_assert_eq(r.u.context_switch.next_prev_pid, 50);
		cr_assert_eq(r.u.context_switch.next_prev_tid, 51);
	}
	rec_free();
}

Test(record, without_trailer)
{
	struct perfring_record r;
	uint8_t buf[128];

	decode_ok(buf, synth_lost(buf, sizeof(buf), 3, 4, 0, NULL), 0, &r);
	cr_assert_eq(rec_buf->size, 8 + 16);
	cr_assert_eq(r.u.lost.id, 3);
	cr_assert_eq(r.u.lost.lost, 4);
	decode_ok(buf, synth_switch(buf, sizeof(buf), PERF_RECORD_MISC_SWITCH_OUT, 0, NULL), 0, &r);
	cr_assert(r.u.context_switch.out);
	rec_free();
}

Test(record, unknown_type_is_enomsg)
{
	static const uint32_t types[] = { 0, 64, 999, 0xffff, 0x7fffffff };
	struct perfring_record r;
	uint8_t buf[128];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t len = synth_record(buf, sizeof(buf), types[i], 0, "abcdefgh", 8,
					  PR_SAMPLE_FORCED, &tr);
		struct perf_event_header *h = exact(buf, len);

		cr_assert_eq(pr_decode_record(h, PR_SAMPLE_FORCED, &r), -ENOMSG, "type %u",
			     types[i]);
		free(h);
	}
}

/* Every record cut by 8, 16, ... bytes is malformed. */
static void record_truncations_fail(const uint8_t *buf, size_t len, uint64_t st)
{
	struct perfring_record r;

	cr_assert_gt(len, 8);
	for (size_t cut = len - 8; cut >= 8; cut -= 8) {
		struct perf_event_header *h = exact(buf, cut);

		cr_assert_eq(pr_decode_record(h, st, &r), -EBADMSG, "type %u size %zu of %zu",
			     h->type, cut, len);
		free(h);
	}
}

/* Encodes into buf, then checks every shorter size of it fails. */
#define TRUNCATE(st, encode) record_truncations_fail(buf, (encode), (st))

Test(record, truncation_of_each_type)
{
	const size_t cap = 256;
	struct synth_mmap2 bm = mm;
	uint8_t buf[256];
	uint8_t bid[20] = { 1 };

	bm.build_id = bid;
	bm.build_id_size = 20;
	EACH_TRAILER(st) {
		TRUNCATE(st, synth_lost(buf, cap, 1, 2, st, &tr));
		TRUNCATE(st, synth_lost_samples(buf, cap, 1, st, &tr));
		TRUNCATE(st, synth_comm(buf, cap, 1, 2, "bash", true, st, &tr));
		TRUNCATE(st, synth_mmap2(buf, cap, &mm, st, &tr));
		TRUNCATE(st, synth_mmap2(buf, cap, &bm, st, &tr));
		TRUNCATE(st, synth_task(buf, cap, PERF_RECORD_FORK, 1, 2, 3, 4, 5, st, &tr));
		TRUNCATE(st, synth_task(buf, cap, PERF_RECORD_EXIT, 1, 2, 3, 4, 5, st, &tr));
		TRUNCATE(st, synth_throttle(buf, cap, PERF_RECORD_THROTTLE, 1, 2, 3, st, &tr));
		TRUNCATE(st, synth_throttle(buf, cap, PERF_RECORD_UNTHROTTLE, 1, 2, 3, st, &tr));
		TRUNCATE(st, synth_switch(buf, cap, 0, st, &tr));
		TRUNCATE(st, synth_switch_cpu_wide(buf, cap, 0, 1, 2, st, &tr));
	}
}

Test(record, truncation_without_trailer)
{
	const size_t cap = 256;
	uint8_t buf[256];

	TRUNCATE(0, synth_lost(buf, cap, 1, 2, 0, NULL));
	TRUNCATE(0, synth_comm(buf, cap, 1, 2, "bash", false, 0, NULL));
	TRUNCATE(0, synth_mmap2(buf, cap, &mm, 0, NULL));
	TRUNCATE(0, synth_task(buf, cap, PERF_RECORD_EXIT, 1, 2, 3, 4, 5, 0, NULL));
	TRUNCATE(0, synth_switch_cpu_wide(buf, cap, 0, 1, 2, 0, NULL));
}

/* A string filling its body with no NUL is malformed even at full length. */
Test(record, strings_without_nul)
{
	static const uint64_t st = PR_SAMPLE_FORCED;
	uint8_t body[64 + 16], buf[256];
	struct perfring_record r;
	struct perf_event_header *h;
	uint32_t ids[2] = { 1, 2 };
	size_t len;

	memcpy(body, ids, 8);
	memcpy(body + 8, "abcdefgh", 8);
	len = synth_record(buf, sizeof(buf), PERF_RECORD_COMM, 0, body, 16, st, &tr);
	h = exact(buf, len);
	cr_assert_eq(pr_decode_record(h, st, &r), -EBADMSG);
	free(h);

	memset(body, 0, 64);
	memcpy(body + 64, "/lib/libfoo.so.1", 16);
	len = synth_record(buf, sizeof(buf), PERF_RECORD_MMAP2, 0, body, sizeof(body), st, &tr);
	h = exact(buf, len);
	cr_assert_eq(pr_decode_record(h, st, &r), -EBADMSG);
	free(h);

	/* The same MMAP2 with one NUL in the last byte of the name is fine. */
	body[sizeof(body) - 1] = 0;
	len = synth_record(buf, sizeof(buf), PERF_RECORD_MMAP2, 0, body, sizeof(body), st, &tr);
	h = exact(buf, len);
	cr_assert_eq(pr_decode_record(h, st, &r), 0);
	cr_assert_str_eq(r.u.mmap.filename, "/lib/libfoo.so.");
	free(h);
}

/* ------------------------------------------------ identifier, time, names */

Test(helpers, record_identifier)
{
	struct perf_event_header hdr = { .type = PERF_RECORD_SAMPLE, .size = 8 };
	struct perf_event_header *h;
	uint8_t buf[256];
	uint64_t id = 0;

	h = exact(buf, synth_sample(buf, sizeof(buf), PR_SAMPLE_SUPPORTED, &all));
	cr_assert(pr_record_identifier(h, &id));
	cr_assert_eq(id, 0x1111);
	free(h);
	h = exact(buf, synth_comm(buf, sizeof(buf), 1, 2, "x", false, TRAILER_ALL, &tr));
	cr_assert(pr_record_identifier(h, &id));
	cr_assert_eq(id, 0xab);
	free(h);
	h = exact(buf, synth_switch(buf, sizeof(buf), 0, PERF_SAMPLE_IDENTIFIER, &tr));
	cr_assert(pr_record_identifier(h, &id));
	cr_assert_eq(id, 0xab);
	free(h);
	cr_assert_not(pr_record_identifier(&hdr, &id));
	hdr.type = PERF_RECORD_SWITCH;
	cr_assert_not(pr_record_identifier(&hdr, &id));
}

Test(helpers, record_time)
{
	static const uint64_t sts[] = {
		PERF_SAMPLE_TIME, PR_SAMPLE_FORCED, PR_SAMPLE_SUPPORTED,
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN,
		TRAILER_ALL, PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER,
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	};
	struct perf_event_header *h;
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		h = exact(buf, synth_sample(buf, sizeof(buf), sts[i], &all));
		cr_assert_eq(pr_record_time(h, sts[i]), 0x5555, "sample st %#lx",
			     (unsigned long)sts[i]);
		free(h);
		h = exact(buf, synth_comm(buf, sizeof(buf), 1, 2, "init", false, sts[i], &tr));
		cr_assert_eq(pr_record_time(h, sts[i]), tr.time, "comm st %#lx",
			     (unsigned long)sts[i]);
		free(h);
		h = exact(buf, synth_lost(buf, sizeof(buf), 1, 2, sts[i], &tr));
		cr_assert_eq(pr_record_time(h, sts[i]), tr.time, "lost st %#lx",
			     (unsigned long)sts[i]);
		free(h);
	}
	h = exact(buf, synth_sample(buf, sizeof(buf), PERF_SAMPLE_IP | PERF_SAMPLE_TID, &all));
	cr_assert_eq(pr_record_time(h, PERF_SAMPLE_IP | PERF_SAMPLE_TID), 0);
	free(h);
	h = exact(buf, synth_lost(buf, sizeof(buf), 1, 2, PERF_SAMPLE_IDENTIFIER, &tr));
	cr_assert_eq(pr_record_time(h, PERF_SAMPLE_IDENTIFIER), 0);
	free(h);
}

/* Too short to hold the time it should carry: no time, and no overread. */
Test(helpers, record_time_of_truncated_records)
{
	const uint64_t st = PR_SAMPLE_FORCED;
	struct perf_event_header *h;
	uint8_t buf[256];

	for (size_t cut = 8; cut <= 24; cut += 8) {
		synth_sample(buf, sizeof(buf), st, &all);
		h = exact(buf, cut);
		cr_assert_eq(pr_record_time(h, st), 0, "sample of %zu bytes", cut);
		free(h);
	}
	for (size_t cut = 8; cut <= 24; cut += 8) {
		synth_lost(buf, sizeof(buf), 1, 2, st, &tr);
		h = exact(buf, cut);
		cr_assert_eq(pr_record_time(h, st), 0, "lost of %zu bytes", cut);
		free(h);
	}
}

Test(helpers, sample_unsupported)
{
	const char *n;

	cr_assert_null(pr_sample_unsupported(0));
	cr_assert_null(pr_sample_unsupported(PR_SAMPLE_SUPPORTED));
	cr_assert_null(pr_sample_unsupported(PR_SAMPLE_FORCED | PERF_SAMPLE_RAW));
	/* The profiler's types are decoded (test_profile.c); AUX is not. */
	cr_assert_null(pr_sample_unsupported(PR_SAMPLE_PROFILE | PR_SAMPLE_SUPPORTED));
	n = pr_sample_unsupported(PERF_SAMPLE_AUX | PERF_SAMPLE_READ);
	cr_assert_not_null(n);
	cr_assert_not_null(strstr(n, "AUX"), "got %s", n);
	cr_assert_not_null(pr_sample_unsupported(1ull << 63));
}
