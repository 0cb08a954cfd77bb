/* SPDX-License-Identifier: MIT */
/*
 * Writes the seed inputs of fuzz_parse (layout in fuzz_parse.c) into a
 * directory, default fuzz/corpus/parse. Most seeds describe their records
 * with fuzz_parse's 4-byte build ops (FZ_DESC); the raw ones are rings
 * built with synth.
 *   gcc -std=c11 -D_GNU_SOURCE -Icore/include -Icore -Itests \
 *       fuzz/gen_parse_corpus.c tests/synth.c core/ring.c -o /tmp/gen \
 *       && /tmp/gen fuzz/corpus/parse
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthsession.h"
#include "decode/record.h"

#define FZ_HDR 96
#define FZ_STAMP 1u
#define FZ_DESC 2u
#define FZ_NO_REC_CB 16u
#define FZ_NO_SAMPLE_CB 32u
#define FZ_AUTO_HEAD 64u

/* sample_type bits of the input's byte 2 */
#define ST_FORCED 0x00u
#define ST_IP 0x01u
#define ST_CALLCHAIN 0x20u
#define ST_RAW 0x40u
#define ST_ALL 0x7fu

/* Ops (kind, arg, v): see build_op in fuzz_parse.c. */
enum { OP_SAMPLE = 0, OP_OTHER = 3, OP_COMM, OP_MMAP2, OP_LOST, OP_TASK, OP_SWITCH,
       OP_GARBAGE, OP_PATCH, OP_TIME, OP_NOP = 12 };

/* Script steps: a, b. */
#define CPU_N(r, max) (uint8_t)((r) << 2), (uint8_t)(max)
#define CPU(r) (uint8_t)(((r) << 2) | 0x40), 0
#define PULL(r, n) (uint8_t)(((r) << 2) | 1), (uint8_t)(n)
#define PULL_NC(r, n) (uint8_t)(((r) << 2) | 1 | 0x20), (uint8_t)(n)
#define ALL 2, 0
#define MERGED 3, 0
#define CANCEL(r, max) (uint8_t)(((r) << 2) | 3 | 0x20), (uint8_t)(max)

#define PART_MAX 16384

struct seed {
	uint8_t hdr[FZ_HDR];
	uint8_t part[8][PART_MAX];
	size_t len[8], nrings;
	uint64_t size;
	bool desc;
};

static const char *out_dir = "fuzz/corpus/parse";
static struct seed sd;

static void die(const char *what)
{
	fprintf(stderr, "gen_parse_corpus: %s failed\n", what);
	exit(1);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Starts a seed: rings, size 8 << lg, sample_type bits, flags, the script. */
static void begin(size_t rings, unsigned lg, uint8_t st, uint8_t flags, const uint8_t steps[16])
{
	memset(&sd, 0, sizeof(sd));
	sd.nrings = rings;
	sd.size = 8ull << lg;
	sd.desc = flags & FZ_DESC;
	sd.hdr[0] = (uint8_t)(rings - 1);
	sd.hdr[1] = (uint8_t)lg;
	sd.hdr[2] = st;
	sd.hdr[3] = flags;
	memcpy(sd.hdr + 16, steps, 16);
}

static void stop_every(uint8_t n, uint8_t reps)
{
	sd.hdr[4] = n;
	sd.hdr[5] = (uint8_t)(reps - 1);
}

static void ring_pos(size_t ring, uint32_t tail, uint32_t head)
{
	put_le32(sd.hdr + 32 + 8 * ring, tail);
	put_le32(sd.hdr + 36 + 8 * ring, head);
}

static void op(size_t ring, unsigned kind, uint8_t arg, uint16_t v)
{
	uint8_t *p = sd.part[ring] + sd.len[ring];

	if (sd.len[ring] + 4 > PART_MAX)
		die("op");
	p[0] = (uint8_t)kind;
	p[1] = arg;
	memcpy(p + 2, &v, sizeof(v));
	sd.len[ring] += 4;
}

static void raw(size_t ring, const uint8_t *rec, size_t len)
{
	if (!len || sd.len[ring] + len > PART_MAX)
		die("raw");
	memcpy(sd.part[ring] + sd.len[ring], rec, len);
	sd.len[ring] += len;
}

static void write_seed(const char *name, const char *suffix, size_t max)
{
	char path[512];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s", out_dir, name, suffix);
	f = fopen(path, "wb");
	if (!f || fwrite(sd.hdr, 1, FZ_HDR, f) != FZ_HDR)
		die(path);
	for (i = 0; i < sd.nrings; i++)
		if (fwrite(sd.part[i], 1, max, f) != max)
			die(path);
	if (fclose(f))
		die(path);
}

/* Every ring's part is as long as the longest: nop ops, or zeros past head.
 * Each seed comes twice: as is, and with the merge batching at every step. */
static void emit(const char *name)
{
	size_t max = 0, i;

	for (i = 0; i < sd.nrings; i++)
		max = sd.len[i] > max ? sd.len[i] : max;
	for (i = 0; i < sd.nrings; i++)
		while (sd.len[i] < max)
			if (sd.desc)
				op(i, OP_NOP, 0, 0);
			else
				sd.part[i][sd.len[i]++] = 0;
	write_seed(name, "", max);
	sd.hdr[6] |= 1;
	write_seed(name, "-batch", max);
	sd.hdr[6] &= (uint8_t)~1u;
	/* The batch pull, 7 items a pull: byte 7 is 1 | (7 - 1) << 1. */
	sd.hdr[7] = 1 | 6 << 1;
	write_seed(name, "-pull7", max);
	sd.hdr[7] = 0;
}

/* ---------------------------------------------------- described seeds */

static void seed_forced(void)
{
	static const uint8_t steps[16] = { CPU(0), CPU_N(0, 5), ALL, ALL, ALL, ALL, ALL, ALL };

	begin(1, 9, ST_FORCED, FZ_DESC | FZ_AUTO_HEAD, steps);
	for (int i = 0; i < 30; i++)
		op(0, OP_SAMPLE, 0, 10);
	emit("01-forced-one-ring");
}

/* Two rings whose times alternate: the merge steps record by record. */
static void seed_tracepoint_fine(void)
{
	static const uint8_t steps[16] = { ALL, ALL, CPU(0), CPU(1), ALL, ALL, ALL, ALL };

	begin(2, 9, ST_RAW, FZ_DESC | FZ_AUTO_HEAD, steps);
	op(1, OP_SAMPLE, 3, 5);
	for (int i = 0; i < 25; i++) {
		op(0, OP_SAMPLE, (uint8_t)(i % 16), 10);
		op(1, OP_SAMPLE, (uint8_t)(i % 16), 10);
	}
	emit("02-tracepoint-merge-fine");
}

/* Eight rings, each a block of times after the previous ring's: runs. */
static void seed_coarse_runs(void)
{
	static const uint8_t steps[16] = { ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL };

	begin(8, 7, ST_FORCED, FZ_DESC | FZ_AUTO_HEAD, steps);
	for (size_t r = 0; r < 8; r++) {
		op(r, OP_TIME, 0, (uint16_t)(r * 4));
		for (int i = 0; i < 12; i++)
			op(r, OP_SAMPLE, 0, 1);
	}
	emit("03-coarse-runs-8-rings");
}

static void general_ring(size_t r)
{
	for (int i = 0; i < 6; i++) {
		op(r, OP_SAMPLE, (uint8_t)(0x10 * i + i), 7);
		op(r, (unsigned)(OP_COMM + i % 5), (uint8_t)(i | 2), (uint16_t)(300 + i));
	}
}

/* Every supported bit, records wrapping the ring end, every parse form. */
static void seed_general(void)
{
	static const uint8_t steps[16] = { CPU_N(0, 3), PULL(1, 2), ALL, PULL(2, 0),
					   CPU(0), CPU_N(1, 1), ALL, PULL(0, 0) };

	begin(3, 8, ST_ALL, FZ_DESC | FZ_AUTO_HEAD, steps);
	for (size_t r = 0; r < 3; r++) {
		ring_pos(r, (uint32_t)(sd.size - 48 - 64 * r), 0);
		general_ring(r);
	}
	emit("04-general-all-bits-wrapping");
}

/* Kernel records of the event and of the leader; a callback stops every 2. */
static void seed_kernel_records(void)
{
	static const uint8_t steps[16] = { ALL, CPU(0), ALL, PULL(1, 3), ALL, CPU_N(1, 2),
					   ALL, ALL };

	begin(2, 9, ST_FORCED, FZ_DESC | FZ_AUTO_HEAD, steps);
	stop_every(2, 4);
	for (size_t r = 0; r < 2; r++)
		for (uint8_t arg = 0; arg < 16; arg++) {
			op(r, OP_COMM + arg % 5, arg, (uint16_t)(100 + arg));
			op(r, OP_SAMPLE, 0, 3);
		}
	emit("05-kernel-records-stop-2");
}

static void seed_pull(void)
{
	static const uint8_t steps[16] = { PULL_NC(0, 3), CPU_N(0, 2), PULL(1, 0), PULL_NC(1, 1),
					   ALL, PULL(0, 0), CPU(1), ALL };

	begin(2, 8, ST_IP | ST_CALLCHAIN, FZ_DESC | FZ_AUTO_HEAD, steps);
	for (size_t r = 0; r < 2; r++)
		for (int i = 0; i < 10; i++) {
			op(r, OP_SAMPLE, (uint8_t)(i << 4), 4);
			if (i % 3 == 0)
				op(r, OP_LOST, (uint8_t)i, 2);
		}
	emit("06-pull-uncommitted");
}

/* Garbage, patched bytes and samples of ids the ring does not own. */
static void seed_corrupt(void)
{
	static const uint8_t steps[16] = { CPU(0), CPU(1), ALL, ALL, CPU_N(2, 4), ALL, ALL, ALL };

	begin(3, 9, ST_RAW, FZ_DESC | FZ_AUTO_HEAD, steps);
	for (size_t r = 0; r < 3; r++) {
		for (uint8_t arg = 0; arg < 8; arg++) {
			op(r, OP_SAMPLE, arg, 5);
			op(r, OP_OTHER, arg, 0x55);
		}
		op(r, r == 0 ? OP_GARBAGE : OP_PATCH, (uint8_t)(3 + r), (uint16_t)(r == 0 ? 12 : 200));
		op(r, OP_SAMPLE, 1, 5);
	}
	emit("07-corrupt-and-unknown-ids");
}

/* The profiler's types (byte 6, bits 1-7): every one of them, then each
 * group alone; samples of a kernel thread (arg 0x80) among them, one cut by a
 * patched length, records wrapping the ring end. */
static void seed_profile(void)
{
	static const uint8_t steps[16] = { CPU_N(0, 3), PULL(1, 2), ALL, CPU(0), ALL, PULL(1, 0),
					   ALL, ALL };
	static const char *const names[7] = {
		"18-profile-read-group", "18-profile-branches", "18-profile-regs-user",
		"18-profile-stack-user", "18-profile-weight-data-src", "18-profile-txn-regs-intr",
		"18-profile-phys-cgroup-pages",
	};

	for (int bit = -1; bit < 7; bit++) {
		begin(2, 11, ST_IP | ST_CALLCHAIN | ST_RAW, FZ_DESC | FZ_AUTO_HEAD, steps);
		sd.hdr[6] = bit < 0 ? 0xfe : (uint8_t)(2u << bit);
		for (size_t r = 0; r < 2; r++) {
			ring_pos(r, (uint32_t)(sd.size - 200 - 96 * r), 0);
			for (uint8_t arg = 0; arg < 12; arg++) {
				op(r, OP_SAMPLE, (uint8_t)(arg * 0x13 | (arg % 4 == 3 ? 0x80 : 0)), 9);
				if (arg == 6)
					op(r, OP_MMAP2, 2, 0);
			}
			op(r, OP_PATCH, 0xff, (uint16_t)(300 + 40 * r));
			op(r, OP_SAMPLE, 1, 5);
		}
		emit(bit < 0 ? "18-profile-all-types" : names[bit]);
	}
}

static void seed_no_callbacks(void)
{
	static const uint8_t steps[16] = { CPU(0), PULL(1, 0), ALL, CPU_N(2, 3), ALL, ALL, ALL,
					   ALL };

	begin(3, 8, ST_FORCED, FZ_DESC | FZ_AUTO_HEAD | FZ_NO_SAMPLE_CB | FZ_NO_REC_CB, steps);
	for (size_t r = 0; r < 3; r++)
		general_ring(r);
	emit("08-no-callbacks");
}

/* Positions that cross 2^64 while the merge runs. */
static void seed_wrap64(void)
{
	static const uint8_t steps[16] = { ALL, ALL, CPU(0), CPU(1), ALL, ALL, ALL, ALL };

	begin(2, 6, ST_FORCED, FZ_DESC | FZ_AUTO_HEAD, steps);
	put_le64(sd.hdr + 8, (uint64_t)0 - 256);
	for (size_t r = 0; r < 2; r++)
		for (int i = 0; i < 12; i++)
			op(r, OP_SAMPLE, 0, (uint16_t)(r ? 3 : 40));
	emit("09-positions-cross-2e64");
}

/* Times that go back: late records in the merge. */
static void seed_late(void)
{
	static const uint8_t steps[16] = { ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL };

	begin(4, 8, ST_RAW, FZ_DESC | FZ_AUTO_HEAD, steps);
	stop_every(3, 2);
	for (size_t r = 0; r < 4; r++)
		for (int i = 0; i < 8; i++)
			op(r, OP_SAMPLE, (uint8_t)i, (uint16_t)(i % 2 ? (uint16_t)-20 : 30));
	emit("10-times-go-back");
}

/* The reactor's cancel flag and parse_until's *stopped, stopping every 3. */
static void seed_cancel(void)
{
	static const uint8_t steps[16] = { CANCEL(0, 0), MERGED, CANCEL(1, 4), MERGED,
					   CANCEL(2, 0), MERGED, ALL, MERGED };

	begin(3, 8, ST_IP, FZ_DESC | FZ_AUTO_HEAD, steps);
	stop_every(3, 3);
	for (size_t r = 0; r < 3; r++)
		for (int i = 0; i < 10; i++) {
			op(r, OP_SAMPLE, (uint8_t)i, (uint16_t)(5 + r));
			if (i % 4 == 1)
				op(r, OP_TASK, (uint8_t)(i | 2), 9);
		}
	emit("14-cancel-and-stopped");
}

/* ------------------------------------------------------- raw seeds */

static size_t tracepoint(uint8_t *buf, size_t ring, uint64_t id, uint64_t time)
{
	static const uint8_t payload[20] = { 1, 2, 3, 4 };
	struct synth_fields f = {
		.identifier = id, .pid = 7, .tid = 7, .time = time, .cpu = (uint32_t)ring,
		.raw = payload, .raw_size = sizeof(payload),
	};

	return synth_sample(buf, SYNTH_REC_MAX, PR_SAMPLE_TRACEPOINT, &f);
}

/* Samples with a zero IDENTIFIER, tail near the ring's end: FZ_STAMP gives
 * them the ring's event id again. */
static void seed_stamped(void)
{
	static const uint8_t steps[16] = { CPU(0), ALL, CPU(1), ALL, ALL, ALL, ALL, ALL };
	static uint8_t rec[SYNTH_REC_MAX];
	size_t len;

	begin(2, 6, ST_RAW, FZ_STAMP, steps);
	for (size_t r = 0; r < 2; r++) {
		for (int i = 0; i < 7; i++) {
			len = tracepoint(rec, r, 0, 100 + 10 * (uint64_t)i + r);
			raw(r, rec, len);
		}
		ring_pos(r, (uint32_t)(sd.size - 64), (uint32_t)sd.len[r]);
	}
	emit("11-raw-stamped-wrapping");
}

/* A ring whose head is more than a ring ahead, beside a healthy one. */
static void seed_overrun(void)
{
	static const uint8_t steps[16] = { ALL, CPU(0), CPU(1), PULL(0, 0), ALL, ALL, ALL, ALL };
	static uint8_t rec[SYNTH_REC_MAX];
	size_t len;

	begin(2, 6, ST_RAW, 0, steps);
	for (size_t r = 0; r < 2; r++) {
		for (int i = 0; i < 8; i++) {
			len = tracepoint(rec, r, synth_event_id(r), 50 + (uint64_t)i);
			raw(r, rec, len);
		}
	}
	ring_pos(0, 0, (uint32_t)sd.size);
	ring_pos(1, 8, (uint32_t)(2 * sd.size));
	emit("12-raw-overrun");
}

/* Eight 64-byte rings holding one tracepoint sample and a bit more. */
static void seed_tiny(void)
{
	static const uint8_t steps[16] = { ALL, CPU(3), PULL(5, 0), ALL, CPU_N(7, 1), ALL, ALL,
					   ALL };
	static uint8_t rec[SYNTH_REC_MAX];
	size_t len;

	begin(8, 3, ST_RAW, 0, steps);
	for (size_t r = 0; r < 8; r++) {
		len = tracepoint(rec, r, synth_event_id(r), 8 - r);
		raw(r, rec, len);
		ring_pos(r, (uint32_t)(8 * r), (uint32_t)(len + 8 * (r % 2)));
	}
	emit("13-tiny-rings");
}

/* ------------------------------------------------ BPF output samples */

/* A bpf_perf_event_output() record: the RAW shape (forced bits + RAW) with
 * n bytes of output padded to raw_size = round_up(n + 4, 8) - 4, as the
 * kernel writes them (24 bytes: magic, tgid, tid, ktime; 72-byte record). */
static size_t bpf_output(uint8_t *buf, size_t ring, uint64_t time, uint32_t n)
{
	static uint8_t payload[1024];
	struct synth_fields f = {
		.identifier = synth_event_id(ring), .pid = 4242, .tid = 4243, .time = time,
		.cpu = (uint32_t)ring, .raw = payload, .raw_size = ((n + 4 + 7) & ~7u) - 4,
	};
	uint64_t magic = 0x70726270665f7631ull, ns = time - 61;
	uint32_t ids[2] = { 4242, 4243 };

	memset(payload, 0, sizeof(payload));
	memcpy(payload, &magic, sizeof(magic));
	memcpy(payload + 8, ids, sizeof(ids));
	memcpy(payload + 16, &ns, sizeof(ns));
	for (uint32_t i = 24; i < n && i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	return synth_sample(buf, SYNTH_REC_MAX, PR_SAMPLE_TRACEPOINT, &f);
}

/* Two rings of 24-byte outputs in alternating times, ring 0's tail near
 * its end so that records wrap; parse_for_cpu, pull and merged parses. */
static void seed_bpf_rings(void)
{
	static const uint8_t steps[16] = { CPU(0), ALL, PULL(1, 3), ALL, CPU_N(0, 2), ALL,
					   MERGED, ALL };
	static uint8_t rec[SYNTH_REC_MAX];
	size_t len;

	begin(2, 9, ST_RAW, 0, steps);
	for (int i = 0; i < 12; i++)
		for (size_t r = 0; r < 2; r++) {
			len = bpf_output(rec, r, 1000 + 20 * (uint64_t)i + 10 * r, 24);
			raw(r, rec, len);
		}
	ring_pos(0, (uint32_t)(sd.size - 40), (uint32_t)sd.len[0]);
	ring_pos(1, 0, (uint32_t)sd.len[1]);
	emit("15-bpf-output-24-bytes");
}

/* One ring of outputs of 1, 9, 24, 100 and 1020 bytes (raw_size 4, 12, 28,
 * 100, 1020), the large one wrapping the ring's end. */
static void seed_bpf_sizes(void)
{
	static const uint8_t steps[16] = { ALL, CPU(0), ALL, PULL(0, 0), ALL, ALL, ALL, ALL };
	static const uint32_t n[] = { 1, 9, 24, 100, 1020, 24, 3 };
	static uint8_t rec[SYNTH_REC_MAX];
	size_t len;

	begin(1, 8, ST_RAW, 0, steps);
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		len = bpf_output(rec, 0, 500 + 7 * (uint64_t)i, n[i]);
		raw(0, rec, len);
	}
	ring_pos(0, 1536, (uint32_t)sd.len[0]);
	emit("16-bpf-output-sizes-wrapping");
}

/* Outputs beside a LOST record (a full ring's drops) and a record of an id
 * the session does not own (another map's event). */
static void seed_bpf_lost(void)
{
	static const uint8_t steps[16] = { ALL, ALL, CPU(0), CPU(1), ALL, ALL, ALL, ALL };
	static uint8_t rec[SYNTH_REC_MAX];
	struct synth_fields tr = { .identifier = 0, .pid = 4242, .tid = 4243, .cpu = 0 };
	size_t len;

	begin(2, 9, ST_RAW, 0, steps);
	for (int i = 0; i < 6; i++) {
		len = bpf_output(rec, 0, 100 + 10 * (uint64_t)i, 24);
		raw(0, rec, len);
		len = bpf_output(rec, 1, 105 + 10 * (uint64_t)i, 24);
		raw(1, rec, len);
	}
	tr.identifier = synth_leader_id(0);
	tr.time = 170;
	len = synth_lost(rec, SYNTH_REC_MAX, synth_event_id(0), 937, PR_SAMPLE_TRACEPOINT, &tr);
	raw(0, rec, len);
	len = bpf_output(rec, 1, 180, 24);
	memcpy(rec + 8, "\x99\x99\x99\x99\x99\x99\x99\x99", 8); /* a foreign IDENTIFIER */
	raw(1, rec, len);
	len = bpf_output(rec, 0, 190, 24);
	raw(0, rec, len);
	ring_pos(0, 0, (uint32_t)sd.len[0]);
	ring_pos(1, 0, (uint32_t)sd.len[1]);
	emit("17-bpf-output-lost-and-foreign");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		out_dir = argv[1];
	seed_forced();
	seed_tracepoint_fine();
	seed_coarse_runs();
	seed_general();
	seed_kernel_records();
	seed_pull();
	seed_corrupt();
	seed_profile();
	seed_no_callbacks();
	seed_wrap64();
	seed_late();
	seed_stamped();
	seed_overrun();
	seed_tiny();
	seed_cancel();
	seed_bpf_rings();
	seed_bpf_sizes();
	seed_bpf_lost();
	return 0;
}
