/* SPDX-License-Identifier: MIT */
/* perfring_session_set_lost_callback on the real kernel: 1-page rings of
 * the getpid tracepoint overflowed. The increases the callback is told add
 * up to stats.lost exactly, the end-of-run read_format count (R4) included,
 * while a port that sums LOST records (a perf_buffer lost_cb of old) falls
 * short: the kernel never writes the LOST record of a ring full to the end.
 * PERF_RECORD_LOST_SAMPLES, which only some PMUs write (Intel PEBS, not a
 * VM's software events), comes from synthetic rings (tests/support). */
#include "kutil.h"
#include "synthsession.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
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

/* ------------------------------------------ LOST_SAMPLES, synthetic rings */

#define LS_RINGS 2
#define LS_SAMPLES 60
#define LS_CALLS_MAX 64

/* Each call of the lost callback, in order. */
struct lost_log {
	int n, cpu[LS_CALLS_MAX];
	uint64_t lost[LS_CALLS_MAX];
	uint64_t samples;
};

static void log_lost(int cpu, uint64_t n, void *ctx)
{
	struct lost_log *g = ctx;

	if (g->n < LS_CALLS_MAX) {
		g->cpu[g->n] = cpu;
		g->lost[g->n] = n;
	}
	g->n++;
}

static int count_sample(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	((struct lost_log *)ctx)->samples++;
	return 0;
}

/* Every fifth sample is followed by a LOST_SAMPLES; its count differs by
 * ring and place, and the one after sample 24 reports 0 drops (no call: an
 * increase is never 0). */
static bool ls_after(int k)
{
	return k % 5 == 4;
}

static uint64_t ls_count(size_t r, int k)
{
	if (!ls_after(k) || k == 24)
		return 0;
	return 1000 * (uint64_t)(r + 1) + (uint64_t)k * (uint64_t)k;
}

static void put_rec(struct synth_session *b, size_t r, const uint8_t *buf, size_t len)
{
	cr_assert_gt(len, 0);
	cr_assert_eq(synth_put(&b->rings[r], buf, len), 0);
}

/* The event's samples, each ring's LOST_SAMPLES after some of them, timed
 * in one sequence across the rings (the merge orders by it). */
static void ls_fill(struct synth_session *b)
{
	struct synth_fields f;
	uint8_t buf[256];
	uint64_t t = 1000;
	size_t r;
	int k;

	for (k = 0; k < LS_SAMPLES; k++)
		for (r = 0; r < LS_RINGS; r++) {
			memset(&f, 0, sizeof(f));
			f.pid = f.tid = 42;
			f.time = t++;
			put_rec(b, r, buf, synth_session_template(b, r, &f, buf, sizeof(buf)));
			if (!ls_after(k))
				continue;
			f.time = t++; /* the kernel writes the event's own id and trailer */
			put_rec(b, r, buf, synth_lost_samples(buf, sizeof(buf), ls_count(r, k),
							      synth_session_sample_type(b), &f));
		}
}

/* What one parse must tell ring r's CPU, in ring order. */
static void ls_expect(size_t r, uint64_t *want, int *n, uint64_t *sum)
{
	int k;

	*n = 0;
	*sum = 0;
	for (k = 0; k < LS_SAMPLES; k++)
		if (ls_count(r, k)) {
			want[(*n)++] = ls_count(r, k);
			*sum += ls_count(r, k);
		}
}

static void ls_check_ring(struct synth_session *b, const struct lost_log *g, size_t r,
			  const char *form)
{
	uint64_t want[LS_CALLS_MAX], sum, told = 0;
	struct perfring_cpu_stats st;
	int n, i, seen = 0;

	ls_expect(r, want, &n, &sum);
	for (i = 0; i < g->n && i < LS_CALLS_MAX; i++) {
		if (g->cpu[i] != (int)r)
			continue;
		cr_expect_lt(seen, n, "%s: ring %zu: more calls than LOST_SAMPLES", form, r);
		if (seen < n)
			cr_expect_eq(g->lost[i], want[seen], "%s: ring %zu, call %d: told %llu, "
				     "the record said %llu", form, r, seen,
				     (unsigned long long)g->lost[i],
				     (unsigned long long)want[seen]);
		told += g->lost[i];
		seen++;
	}
	cr_assert_eq(perfring_session_cpu_stats(b->s, (int)r, &st), 0);
	cr_expect_eq(seen, n, "%s: ring %zu: %d calls for %d nonzero LOST_SAMPLES", form, r,
		     seen, n);
	cr_expect_eq(told, st.lost, "%s: ring %zu: told %llu, stats.lost %llu", form, r,
		     (unsigned long long)told, (unsigned long long)st.lost);
	cr_expect_eq(st.lost, sum, "%s: ring %zu: stats.lost %llu, the records said %llu", form,
		     r, (unsigned long long)st.lost, (unsigned long long)sum);
}

/* Every form of parse tells the callback each LOST_SAMPLES count, once and
 * in order, on its ring's CPU, and the increases add up to stats.lost. */
Test(lost_cb, lost_samples_records_reach_the_callback, .timeout = 60)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1 };
	struct synth_session b;
	struct lost_log g;
	size_t r;
	int form, n;

	cr_assert_eq(synth_session_new(&b, LS_RINGS, 1 << 16, &a, count_sample, &g), 0);
	/* What perfring_session_set_lost_callback sets before a start; this
	 * session is made started. */
	b.s->reg.lost = (struct pr_lost_cb){ log_lost, &g };
	ls_fill(&b);
	for (form = 0; form < SYNTH__FORMS; form++) {
		synth_session_rewind(&b);
		memset(&g, 0, sizeof(g));
		n = synth_session_parse(&b, (enum synth_form)form);
		if (n == -ENOTSUP)
			continue;
		cr_assert_eq(n, LS_RINGS * LS_SAMPLES, "%s: %d samples", synth_form_name[form], n);
		cr_assert_eq(g.samples, LS_RINGS * LS_SAMPLES);
		for (r = 0; r < LS_RINGS; r++)
			ls_check_ring(&b, &g, r, synth_form_name[form]);
		fprintf(stderr, "# %s: %d lost callbacks\n", synth_form_name[form], g.n);
	}
	synth_session_free(&b);
}
