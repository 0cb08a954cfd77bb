/* SPDX-License-Identifier: MIT */
/* perfring_session_set_lost_callback on the real kernel: 1-page rings of
 * the getpid tracepoint overflowed. The increases the callback is told add
 * up to stats.lost exactly, the end-of-run read_format count (R4) included,
 * while a port that sums LOST records (a perf_buffer lost_cb of old) falls
 * short: the kernel never writes the LOST record of a ring full to the end. */
#include "kutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#define N 12001
#define MAXCPU 64

struct lost {
	uint64_t cb[MAXCPU], calls, bad_cpu, in_records, zero;
};

static void lost_cb(int cpu, uint64_t n, void *ctx)
{
	struct lost *l = ctx;

	l->calls++;
	l->zero += n == 0;
	if (cpu < 0 || cpu >= MAXCPU)
		l->bad_cpu++;
	else
		l->cb[cpu] += n;
}

/* What a port reading only LOST records counts. */
static int record_cb(const struct perfring_record *r, void *ctx)
{
	struct lost *l = ctx;

	if (r->type == PERF_RECORD_LOST)
		l->in_records += r->u.lost.lost;
	return 0;
}

static int ncpu(void)
{
	int n = kutil_ncpu_online();

	return n < MAXCPU ? n : MAXCPU;
}

static struct perfring_session *tiny(struct perfring_opts *o, struct kcount *k, struct lost *l)
{
	struct perfring_session *s;

	o->sz = sizeof(*o);
	o->ring_pages = 1;
	KCHECK(kutil_getpid_session(o, getpid(), k, &s, NULL), s);
	KCHECK(perfring_session_set_lost_callback(s, lost_cb, l), s);
	KCHECK(perfring_session_set_record_callback(s, 0, record_cb, l), s);
	KCHECK(perfring_session_start(s), s);
	return s;
}

static uint64_t lost_of(struct perfring_session *s, int cpu)
{
	struct perfring_cpu_stats st;

	cr_assert_eq(perfring_session_cpu_stats(s, cpu, &st), 0);
	return st.lost;
}

/* One CPU, two overflows: the first one's drops come in a LOST record
 * (written with the first record that fits after a read), the second's,
 * at the end, only in the kernel's count read after stop. */
Test(lost_cb, sums_to_stats_lost_with_the_end_count, .timeout = 60)
{
	int cpu = ncpu() - 1;
	struct perfring_opts o = { .cpus = &cpu, .cpu_cnt = 1 };
	struct kcount k = { 0 };
	struct lost l = { 0 };
	struct perfring_session *s;
	uint64_t lost, before_end;

	if (kutil_under_valgrind())
		cr_skip_test("valgrind's own getpid calls make the counts lower bounds");
	cr_assert_eq(kutil_pin(cpu), 0);
	s = tiny(&o, &k, &l);
	kutil_getpid_n(N);
	cr_assert_geq(perfring_session_parse_for_cpu(s, cpu), 0);
	kutil_getpid_n(1);
	kutil_getpid_n(N);
	cr_assert_geq(perfring_session_parse_for_cpu(s, cpu), 0);
	before_end = l.cb[cpu];
	cr_expect_eq(before_end, lost_of(s, cpu), "before stop: told %llu, stats.lost %llu",
		     (unsigned long long)before_end, (unsigned long long)lost_of(s, cpu));
	cr_assert_eq(perfring_session_stop(s), 0);
	cr_assert_geq(perfring_session_parse_for_cpu(s, cpu), 0);
	lost = lost_of(s, cpu);
	fprintf(stderr, "# lost_cb: LOST records %llu, callback %llu in %llu calls, stats.lost "
		"%llu\n", (unsigned long long)l.in_records, (unsigned long long)l.cb[cpu],
		(unsigned long long)l.calls, (unsigned long long)lost);
	cr_expect_eq(l.cb[cpu], lost, "the increases add up to stats.lost: %llu != %llu",
		     (unsigned long long)l.cb[cpu], (unsigned long long)lost);
	cr_expect_gt(l.cb[cpu], before_end, "the end-of-run count reached the callback");
	cr_expect_gt(l.in_records, 0, "the first overflow's LOST record came");
	cr_expect_lt(l.in_records, lost, "LOST records alone fall short of stats.lost");
	cr_expect_eq(k.per_cpu[cpu] + lost, 2 * N + 1, "delivered %llu + lost %llu",
		     (unsigned long long)k.per_cpu[cpu], (unsigned long long)lost);
	cr_expect_eq(l.bad_cpu + l.zero, 0, "a call with a bad CPU or an increase of 0");
	cr_expect_geq(l.calls, 2);
	perfring_session_free(s);
}

/* Every CPU, full to the end, read once after stop by parse_all: no LOST
 * record at all, every drop told by the end count. */
Test(lost_cb, every_cpu_full_to_the_end, .timeout = 60)
{
	struct perfring_opts o = { 0 };
	uint64_t produced[MAXCPU] = { 0 };
	struct kcount k = { 0 };
	struct lost l = { 0 };
	struct perfring_session *s;
	int cpu;

	if (kutil_under_valgrind())
		cr_skip_test("valgrind's own getpid calls make the counts lower bounds");
	s = tiny(&o, &k, &l);
	for (cpu = 0; cpu < ncpu(); cpu++) {
		cr_assert_eq(kutil_pin(cpu), 0);
		produced[cpu] = 2000 + 100 * (uint64_t)cpu;
		kutil_getpid_n((long)produced[cpu]);
	}
	cr_assert_eq(perfring_session_stop(s), 0);
	cr_assert_geq(perfring_session_parse_all(s), 0, "%s", perfring_session_last_error(s));
	cr_expect_eq(l.in_records, 0, "no record fitted after the overflow: no LOST record");
	for (cpu = 0; cpu < ncpu(); cpu++) {
		cr_expect_eq(l.cb[cpu], lost_of(s, cpu), "CPU %d: told %llu, stats.lost %llu", cpu,
			     (unsigned long long)l.cb[cpu], (unsigned long long)lost_of(s, cpu));
		cr_expect_gt(l.cb[cpu], 0, "CPU %d's ring overflowed", cpu);
		cr_expect_eq(k.per_cpu[cpu] + lost_of(s, cpu), produced[cpu]);
	}
	cr_expect_eq(l.bad_cpu + l.zero, 0);
	perfring_session_free(s);
}

/* NULL unsets it before start; no call then. */
Test(lost_cb, null_unsets, .timeout = 60)
{
	int cpu = 0;
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 1, .cpus = &cpu, .cpu_cnt = 1 };
	struct kcount k = { 0 };
	struct lost l = { 0 };
	struct perfring_session *s;

	cr_assert_eq(kutil_pin(cpu), 0);
	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_set_lost_callback(s, lost_cb, &l), s);
	KCHECK(perfring_session_set_lost_callback(s, NULL, NULL), s);
	KCHECK(perfring_session_start(s), s);
	kutil_getpid_n(2000);
	cr_assert_eq(perfring_session_stop(s), 0);
	cr_assert_geq(perfring_session_parse_all(s), 0);
	cr_expect_gt(lost_of(s, cpu), 0);
	cr_expect_eq(l.calls, 0);
	perfring_session_free(s);
}
