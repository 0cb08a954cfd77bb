/* SPDX-License-Identifier: MIT */
/*
 * Writes the seed inputs of fuzz_ring (layout in fuzz_ring.c) into a
 * directory, default fuzz/corpus/ring. Each seed is a ring built with synth.
 *   gcc -std=c11 -D_GNU_SOURCE -Icore/include -Icore fuzz/gen_ring_corpus.c \
 *       tests/synth.c core/ring.c -o /tmp/gen && /tmp/gen fuzz/corpus/ring
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "synth.h"

#define FZ_RAW_TYPE 1u
#define FZ_ODD_TAIL 4u

#define ST_TP (PR_SAMPLE_FORCED | PERF_SAMPLE_RAW)
#define ST_ALL PR_SAMPLE_SUPPORTED

struct seed {
	uint8_t flags, stop;
	uint64_t st;
};

static const char *out_dir = "fuzz/corpus/ring";
static uint8_t rec[SYNTH_REC_MAX];
static const uint64_t cc[5] = { 0xffffffff81000010ull, 0xffffffff81000020ull, 0x401000,
				0x401100, 0x7ffff7a00000ull };
static const struct synth_fields tr = {
	.identifier = 7, .pid = 100, .tid = 101, .time = 123456789, .cpu = 1,
};

static void die(const char *what)
{
	fprintf(stderr, "gen_ring_corpus: %s failed\n", what);
	exit(1);
}

static void put(struct synth_ring *sr, size_t len)
{
	if (!len || synth_put(sr, rec, len))
		die("synth_put");
}

static void put_le64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Header + the data area, without its trailing zeros (fuzz_ring adds them). */
static void emit(const char *name, struct synth_ring *sr, const struct seed *s)
{
	uint8_t hdr[32] = { 0 };
	uint64_t tail = sr->meta->data_tail, len = sr->size;
	char path[512];
	FILE *f;

	hdr[0] = (uint8_t)__builtin_ctzll(sr->size / 8);
	hdr[1] = s->flags;
	hdr[2] = s->stop;
	put_le64(hdr + 8, tail);
	put_le64(hdr + 16, synth_head(sr) - tail);
	put_le64(hdr + 24, s->st);
	while (len && !sr->data[len - 1])
		len--;
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr) ||
	    fwrite(sr->data, 1, len, f) != len || fclose(f))
		die(path);
	synth_ring_free(sr);
}

static void ring(struct synth_ring *sr, uint64_t size, uint64_t pos)
{
	if (synth_ring_init(sr, size) || synth_ring_set_pos(sr, pos))
		die("synth_ring_init");
}

static size_t sample(uint64_t st, uint32_t i, uint32_t raw_size)
{
	uint8_t raw[128];
	struct synth_fields f = {
		.identifier = 7, .ip = 0xffffffff81234560ull + i, .pid = 100 + i, .tid = 200 + i,
		.time = 1000000 + i, .addr = 0xdead0000 + i, .id = 7, .stream_id = 8,
		.cpu = i % 4, .period = 1, .callchain = cc, .callchain_nr = 1 + i % 5,
		.raw = raw, .raw_size = raw_size,
	};

	for (size_t k = 0; k < sizeof(raw); k++)
		raw[k] = (uint8_t)(i + k);
	return synth_sample(rec, sizeof(rec), st, &f);
}

static void seed_samples(void)
{
	struct synth_ring sr;

	ring(&sr, 256, 1024);
	emit("01-empty", &sr, &(struct seed){ .st = ST_TP });
	ring(&sr, 512, 0);
	for (uint32_t i = 0; i < 4; i++)
		put(&sr, sample(ST_TP, i, 20));
	emit("02-tracepoint-samples", &sr, &(struct seed){ .st = ST_TP });
	ring(&sr, 1024, 1024 * 3 + 960);
	for (uint32_t i = 0; i < 4; i++)
		put(&sr, sample(ST_ALL, i, 12));
	emit("03-all-fields-wrapping", &sr, &(struct seed){ .st = ST_ALL });
	ring(&sr, 256, 256 + 32);
	for (uint32_t i = 0; i < 4; i++)
		put(&sr, sample(ST_TP, i, 20)); /* 64 bytes each */
	emit("04-exactly-full", &sr, &(struct seed){ .st = ST_TP });
}

static void seed_bad(void)
{
	static const uint16_t bad[] = { 0, 12, 200 };
	static const char *names[] = { "06-corrupt-size-0", "07-corrupt-size-12",
				       "08-corrupt-too-large" };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	struct synth_ring sr;

	ring(&sr, 256, 0);
	put(&sr, sample(ST_TP, 0, 20));
	put(&sr, sample(ST_TP, 1, 20));
	synth_set_head(&sr, 256 + 8);
	emit("05-overrun", &sr, &(struct seed){ .st = ST_TP });
	for (size_t i = 0; i < 3; i++) {
		ring(&sr, 256, 64);
		put(&sr, sample(ST_TP, 0, 20));
		put(&sr, sample(ST_TP, 1, 20));
		h.size = bad[i];
		memcpy(rec, &h, sizeof(h));
		memset(rec + sizeof(h), 0x5a, 16);
		put(&sr, 24);
		emit(names[i], &sr, &(struct seed){ .st = ST_TP });
	}
	ring(&sr, 256, 64);
	put(&sr, sample(ST_TP, 0, 20));
	sr.meta->data_tail = 68;
	emit("14-misaligned-tail", &sr, &(struct seed){ .flags = FZ_ODD_TAIL, .st = ST_TP });
}

static void seed_kernel_records(void)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };
	struct synth_mmap2 m = {
		.pid = 100, .tid = 100, .addr = 0x7f0000000000ull, .len = 0x21000,
		.pgoff = 0, .maj = 8, .min = 1, .ino = 4242, .prot = 5, .flags = 2,
		.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	const uint64_t st = PR_SAMPLE_FORCED;
	struct synth_ring sr;

	ring(&sr, 512, 512 - 16);
	put(&sr, synth_lost(rec, sizeof(rec), 7, 937, st, &tr));
	put(&sr, synth_lost_samples(rec, sizeof(rec), 63, st, &tr));
	emit("09-lost", &sr, &(struct seed){ .st = st });

	ring(&sr, 1024, 1024 - 40);
	put(&sr, synth_comm(rec, sizeof(rec), 100, 100, "perf-exec", true, st, &tr));
	put(&sr, synth_mmap2(rec, sizeof(rec), &m, st, &tr));
	m.build_id = bid;
	m.build_id_size = 20;
	put(&sr, synth_mmap2(rec, sizeof(rec), &m, st, &tr));
	emit("10-comm-mmap2", &sr, &(struct seed){ .st = st });

	ring(&sr, 512, 96);
	put(&sr, synth_task(rec, sizeof(rec), PERF_RECORD_FORK, 101, 100, 101, 100, 5, st, &tr));
	put(&sr, synth_task(rec, sizeof(rec), PERF_RECORD_EXIT, 101, 100, 101, 100, 6, st, &tr));
	put(&sr, synth_throttle(rec, sizeof(rec), PERF_RECORD_THROTTLE, 7, 7, 8, st, &tr));
	put(&sr, synth_throttle(rec, sizeof(rec), PERF_RECORD_UNTHROTTLE, 8, 7, 8, st, &tr));
	emit("11-task-throttle", &sr, &(struct seed){ .st = st });

	ring(&sr, 256, 0);
	put(&sr, synth_switch(rec, sizeof(rec), 0, st, &tr));
	put(&sr, synth_switch(rec, sizeof(rec), PERF_RECORD_MISC_SWITCH_OUT |
			      PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, st, &tr));
	put(&sr, synth_switch_cpu_wide(rec, sizeof(rec), PERF_RECORD_MISC_SWITCH_OUT, 5, 6, st,
				       &tr));
	emit("12-switch", &sr, &(struct seed){ .st = st });
}

static void seed_mixed(void)
{
	const uint64_t st_b = PR_SAMPLE_FORCED | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	struct synth_ring sr;

	ring(&sr, 1024, 1024 * 5 + 800);
	for (uint32_t i = 0; i < 8; i++)
		put(&sr, sample(i % 2 ? st_b : ST_TP, i, 28));
	emit("13-two-events", &sr, &(struct seed){ .st = ST_TP });

	/* The largest record, wrapping through scratch. */
	ring(&sr, 65536, 65536 - 1024);
	memset(rec, 0, sizeof(rec));
	put(&sr, synth_record(rec, sizeof(rec), 99, 0, NULL, SYNTH_REC_MAX - 8 - 32,
			      PR_SAMPLE_FORCED, &tr));
	emit("15-largest-record-wraps", &sr, &(struct seed){ .st = PR_SAMPLE_FORCED });

	ring(&sr, 2048, 2048 - 200);
	for (uint32_t i = 0; i < 10; i++)
		put(&sr, sample(ST_TP, i, 4 + 8 * i));
	emit("16-stop-every-3", &sr, &(struct seed){ .stop = 3, .st = ST_TP });

	ring(&sr, 512, 0);
	for (uint32_t i = 0; i < 3; i++)
		put(&sr, sample(ST_TP, i, 20));
	emit("17-unsupported-type", &sr, &(struct seed){
		.flags = FZ_RAW_TYPE,
		.st = ST_TP | PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK });

	ring(&sr, 8, 8);
	put(&sr, synth_switch(rec, sizeof(rec), 0, 0, NULL));
	emit("18-tiny-ring", &sr, &(struct seed){ .flags = FZ_RAW_TYPE, .st = 0 });
}

int main(int argc, char **argv)
{
	if (argc > 1)
		out_dir = argv[1];
	seed_samples();
	seed_bad();
	seed_kernel_records();
	seed_mixed();
	return 0;
}
