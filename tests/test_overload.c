/* SPDX-License-Identifier: MIT */
/*
 * Overload: a session on a single CPU, a time merge over 256 synthetic rings,
 * 1-page rings under a generator far faster than the consumer (every record
 * is either delivered or reported lost, exactly), 200 tracepoints sharing one
 * ring, and running out of file descriptors.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "synthsession.h"
#include "kutil.h"

#define NS_PER_S 1000000000ull

static int last_online_cpu(void)
{
	return kutil_ncpu_online() - 1;
}

/* ------------------------------------------------------------ single CPU */

struct stop_at { struct kcount *k; uint64_t want; };

static bool reached(void *ctx)
{
	struct stop_at *st = ctx;

	return st->k->n >= st->want;
}

static void single_cpu(uint32_t watermark)
{
	int cpu = last_online_cpu(), other = cpu ? 0 : 1;
	struct perfring_opts o = { .sz = sizeof(o), .cpus = &cpu, .cpu_cnt = 1,
				   .wakeup_watermark = watermark, .flush_ms = 10 };
	struct perfring_cpu_stats st;
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct stop_at until = { &k, 1000 };
	int n;

	cr_assert_eq(kutil_pin(cpu), 0);
	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_session_fds(s, &fds), 1);
	cr_expect_eq(fds[0].cpu, cpu);
	cr_expect_eq(perfring_session_fd_for_cpu(s, other), -ENOENT);
	kutil_getpid_n(1000);
	n = perfring_session_parse_until(s, reached, &until);
	cr_expect_eq(n, 1000, "parse_until handled %d samples", n);
	cr_expect_eq(k.n, 1000);
	cr_expect_eq(k.per_cpu[cpu], 1000);
	cr_assert_eq(perfring_session_cpu_stats(s, cpu, &st), 0);
	cr_expect_eq(st.samples, 1000);
	cr_expect_eq(st.lost, 0);
	cr_expect_eq(st.corrupt, 0);
	cr_expect_eq(perfring_session_cpu_stats(s, other, &st), -ENOENT);
	perfring_session_free(s);
}

Test(overload, single_cpu_polling) { single_cpu(0); }
Test(overload, single_cpu_watermark) { single_cpu(4096); }

/* ------------------------------------------- 256 synthetic rings, merged */

#define RINGS 256
#define PER_RING 600 /* two rounds of 300 records of 40 B in 16 KiB rings */

struct order {
	uint64_t n, last, out_of_order;
	uint32_t per_ring[RINGS];
};

static int order_cb(const struct perfring_sample *s, void *ctx)
{
	struct order *o = ctx;

	o->n++;
	if (s->time < o->last)
		o->out_of_order++;
	o->last = s->time;
	if (s->cpu >= 0 && s->cpu < RINGS)
		o->per_ring[s->cpu]++;
	return 0;
}

/* Record j of ring i: times interleave across rings, all distinct. */
static uint64_t stamp(size_t ring, size_t j)
{
	return 1000000 + (uint64_t)j * RINGS * 2 + ((ring * 37) % RINGS) * 2;
}

static void fill(struct synth_session *b, size_t from, size_t to)
{
	struct synth_fields f = { .pid = 1, .tid = 1 };
	size_t off = synth_time_offset(synth_session_sample_type(b)), len, i, j;
	uint8_t rec[256];

	for (i = 0; i < RINGS; i++) {
		len = synth_session_template(b, i, &f, rec, sizeof(rec));
		cr_assert_gt(len, 0);
		for (j = from; j < to; j++)
			cr_assert_eq(synth_session_put(b, i, rec, len, off, stamp(i, j)), 0,
				     "ring %zu is full at record %zu", i, j);
	}
}

Test(overload, merge_256_synthetic_rings)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY };
	struct perfring_cpu_stats st;
	struct synth_session b;
	struct order o = { 0 };
	size_t i;
	int n;

	cr_assert_eq(synth_session_new(&b, RINGS, 16384, &a, order_cb, &o), 0);
	fill(&b, 0, PER_RING / 2);
	n = perfring_session_parse_all(b.s);
	cr_expect_eq(n, RINGS * PER_RING / 2);
	fill(&b, PER_RING / 2, PER_RING);
	n = perfring_session_parse_all(b.s);
	cr_expect_eq(n, RINGS * PER_RING / 2);
	cr_expect_eq(o.n, (uint64_t)RINGS * PER_RING);
	cr_expect_eq(o.out_of_order, 0, "%llu records out of time order",
		     (unsigned long long)o.out_of_order);
	/* 37 is coprime to 256, so some ring has the largest offset, 255. */
	cr_expect_eq(o.last, stamp(0, PER_RING - 1) + (RINGS - 1) * 2,
		     "the newest record comes last");
	for (i = 0; i < RINGS; i++) {
		cr_expect_eq(o.per_ring[i], PER_RING, "ring %zu: %u records", i, o.per_ring[i]);
		cr_assert_eq(perfring_session_cpu_stats(b.s, (int)i, &st), 0);
		cr_expect_eq(st.samples, PER_RING, "ring %zu stats.samples", i);
		cr_expect_eq(st.late + st.lost + st.corrupt + st.unknown, 0,
			     "ring %zu: late %llu lost %llu corrupt %llu unknown %llu", i,
			     (unsigned long long)st.late, (unsigned long long)st.lost,
			     (unsigned long long)st.corrupt, (unsigned long long)st.unknown);
	}
	synth_session_free(&b);
}

/* ---------------------------------------------------------- ring pressure */

#define PRESSURE_NS (5 * NS_PER_S)

struct lost_sum { uint64_t lost, records; };

static int lost_cb(const struct perfring_record *r, void *ctx)
{
	struct lost_sum *l = ctx;

	l->records++;
	if (r->type == PERF_RECORD_LOST)
		l->lost += r->u.lost.lost;
	else if (r->type == PERF_RECORD_LOST_SAMPLES)
		l->lost += r->u.lost_samples.lost;
	return 0;
}

/* The generator: getpid as fast as it can for PRESSURE_NS, reports how many
 * on `out`, waits for the parent to drain (a byte on `in`), then one more
 * getpid, which carries the kernel's last LOST record. */
struct gen { int cpu, in, out; };

static int generator(void *arg)
{
	const struct gen *g = arg;
	uint64_t n = 0, end;
	char b;

	if (kutil_pin(g->cpu))
		return 2;
	end = kutil_now_ns() + PRESSURE_NS;
	while (kutil_now_ns() < end) {
		kutil_getpid_n(1000);
		n += 1000;
	}
	if (write(g->out, &n, sizeof(n)) != sizeof(n) || read(g->in, &b, 1) != 1)
		return 3;
	syscall(SYS_getpid);
	return 0;
}

struct pressure {
	struct perfring_session *s;
	struct kcount k;
	struct lost_sum l;
	long busy_passes;
};

/* The consumer: much slower than the generator on purpose (one pass, then
 * a 2 ms sleep), until the generator reports its count. */
static uint64_t consume_until_report(struct pressure *p, int cpu, int report_fd)
{
	const struct timespec nap = { 0, 2000000 };
	uint64_t n = 0;
	int got;

	for (;;) {
		got = perfring_session_parse_for_cpu(p->s, cpu);
		cr_assert_geq(got, 0, "parse_for_cpu: %d (%s)", got,
			      perfring_session_last_error(p->s));
		p->busy_passes += got > 0;
		if (read(report_fd, &n, sizeof(n)) == sizeof(n))
			return n;
		nanosleep(&nap, NULL);
	}
}

static int fcntl_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void drain(struct pressure *p, int cpu)
{
	while (perfring_session_parse_for_cpu(p->s, cpu) > 0)
		;
}

static void start_pressure(struct pressure *p, int cpu, pid_t pid)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = &cpu, .cpu_cnt = 1, .pid = pid,
				   .ring_pages = 1 };
	struct perfring_event *ev;

	KCHECK(perfring_session_new(&o, &p->s), NULL);
	KCHECK(perfring_session_add_tracepoint(p->s, "syscalls", "sys_enter_getpid", &ev), p->s);
	cr_assert_eq(perfring_event_set_callback(ev, kutil_count_cb, &p->k), 0);
	cr_assert_eq(perfring_session_set_record_callback(p->s, 0, lost_cb, &p->l), 0);
	KCHECK(perfring_session_start(p->s), p->s);
}

static void check_pressure(struct pressure *p, int cpu, uint64_t produced)
{
	struct perfring_cpu_stats st;

	cr_assert_eq(perfring_session_cpu_stats(p->s, cpu, &st), 0);
	fprintf(stderr, "# ring pressure (1-page ring, %.0f s): produced %llu, delivered %llu, "
		"lost %llu in %llu LOST records, busy passes %ld, max fill %u%%\n",
		(double)PRESSURE_NS / NS_PER_S, (unsigned long long)produced,
		(unsigned long long)p->k.n, (unsigned long long)p->l.lost,
		(unsigned long long)p->l.records, p->busy_passes, st.max_fill_pct);
	cr_expect_eq(p->k.n + p->l.lost, produced, "delivered %llu + lost %llu != produced %llu",
		     (unsigned long long)p->k.n, (unsigned long long)p->l.lost,
		     (unsigned long long)produced);
	cr_expect_gt(p->l.records, 0, "the LOST record callback never fired");
	cr_expect_gt(p->l.lost, 0);
	cr_expect_eq(st.lost, p->l.lost, "stats.lost %llu != LOST records' sum %llu",
		     (unsigned long long)st.lost, (unsigned long long)p->l.lost);
	cr_expect_eq(st.samples, p->k.n);
	cr_expect_eq(st.corrupt, 0, "%llu corrupt records under pressure",
		     (unsigned long long)st.corrupt);
	cr_expect_geq(st.max_fill_pct, 50, "the ring never filled (max %u%%)", st.max_fill_pct);
	/* Never stalled: records kept arriving pass after pass under overflow. */
	cr_expect_geq(p->busy_passes, 10, "only %ld passes delivered records", p->busy_passes);
}

Test(overload, ring_pressure, .timeout = 60)
{
	int to_parent[2], to_child[2], gen_cpu = 0, me = last_online_cpu();
	struct pressure p = { 0 };
	struct kchild child;
	struct gen g;
	uint64_t produced;

	cr_assert_eq(pipe(to_parent), 0);
	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(fcntl_nonblock(to_parent[0]), 0);
	g = (struct gen){ gen_cpu, to_child[0], to_parent[1] };
	cr_assert_eq(kutil_child_start(&child, generator, &g), 0);
	if (me != gen_cpu)
		kutil_pin(me);
	start_pressure(&p, gen_cpu, child.pid);
	kutil_child_go(&child);
	produced = consume_until_report(&p, gen_cpu, to_parent[0]);
	drain(&p, gen_cpu);
	cr_assert_eq(write(to_child[1], "d", 1), 1);
	cr_assert_eq(kutil_child_wait(&child), 0, "generator failed");
	drain(&p, gen_cpu);
	check_pressure(&p, gen_cpu, produced + 1);
	perfring_session_free(p.s);
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
}

/* ------------------------------------------------------------ many events */

#define MANY 200
#define SYSCALLS_DIR "/sys/kernel/tracing/events/syscalls"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sys_enter_getpid and the first MANY - 1 other sys_enter_* tracepoints. */
static size_t list_tracepoints(char *names[MANY])
{
	DIR *d = opendir(SYSCALLS_DIR);
	struct dirent *e;
	size_t n = 1;

	cr_assert_not_null(d, "%s: %s", SYSCALLS_DIR, strerror(errno));
	names[0] = strdup("sys_enter_getpid");
	while (n < MANY && (e = readdir(d)))
		if (!strncmp(e->d_name, "sys_enter_", 10) && strcmp(e->d_name, names[0]))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names + 1, n - 1, sizeof(*names), cmp_str);
	return n;
}

static void free_names(char *names[MANY], size_t n)
{
	while (n)
		free(names[--n]);
}

/* A session on `cpu` with the MANY tracepoints, the getpid one counting
 * this process's calls into k. */
static struct perfring_session *many_session(int cpu, struct kcount *k)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = &cpu, .cpu_cnt = 1, .ring_pages = 16 };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	char *names[MANY], filter[64];
	size_t n = list_tracepoints(names), i;

	cr_assert_eq(n, MANY, "only %zu sys_enter_* tracepoints", n);
	KCHECK(perfring_session_new(&o, &s), NULL);
	for (i = 0; i < n; i++) {
		KCHECK(perfring_session_add_tracepoint(s, "syscalls", names[i], &ev), s);
		if (i == 0) {
			snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
			cr_assert_eq(perfring_event_set_filter(ev, filter), 0);
			cr_assert_eq(perfring_event_set_callback(ev, kutil_count_cb, k), 0);
		}
	}
	free_names(names, n);
	return s;
}

Test(overload, many_events_one_ring)
{
	int cpu = last_online_cpu(), fds_before = kutil_fd_count();
	const struct perfring_cpu_fd *fds;
	struct kcount k = { 0 };
	struct perfring_session *s;

	cr_assert_eq(kutil_pin(cpu), 0);
	s = many_session(cpu, &k);
	KCHECK(perfring_session_start(s), s);
	cr_expect_eq(perfring_session_fds(s, &fds), 1, "one ring fd for %d events", MANY);
	cr_expect_eq(fds[0].fd, perfring_session_fd_for_cpu(s, cpu));
	cr_expect_eq(kutil_fd_count() - fds_before, 1 + MANY,
		     "a leader plus one fd per event, all redirected into its ring");
	kutil_getpid_n(500);
	perfring_session_parse_all(s);
	cr_expect_eq(k.n, 500, "getpid samples through the shared ring: %llu",
		     (unsigned long long)k.n);
	perfring_session_free(s);
	cr_expect_eq(kutil_fd_count(), fds_before);
	fprintf(stderr, "# many events: %d tracepoints on CPU %d, 1 ring fd, %d fds in all\n",
		MANY, cpu, 1 + MANY);
}

/* Running out of fds while opening: -EMFILE naming RLIMIT_NOFILE, and the
 * failed start closes everything it opened. */
Test(overload, fd_limit)
{
	int cpu = last_online_cpu(), fds_before, rc;
	struct rlimit saved, low;
	struct kcount k = { 0 };
	struct perfring_session *s = many_session(cpu, &k);
	const char *why;

	fds_before = kutil_fd_count();
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	low.rlim_cur = (rlim_t)fds_before + 3 + MANY / 2;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	rc = perfring_session_start(s);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
	why = perfring_session_last_error(s);
	fprintf(stderr, "# fd limit %llu: start returned %d: %s\n",
		(unsigned long long)low.rlim_cur, rc, why);
	cr_expect_eq(rc, -EMFILE, "start under a low fd limit: %d (%s)", rc, why);
	cr_expect(strstr(why, "RLIMIT_NOFILE"), "sentence: %s", why);
	cr_expect(strstr(why, "perf_event_open"), "sentence names the call: %s", why);
	cr_expect_eq(kutil_fd_count(), fds_before, "the failed start closed every fd");
	KCHECK(perfring_session_start(s), s);
	cr_expect_eq(perfring_session_fds(s, NULL), 1);
	perfring_session_free(s);
}
