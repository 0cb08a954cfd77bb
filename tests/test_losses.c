/* SPDX-License-Identifier: MIT */
/*
 * R4 on the real kernel: losses add up, even at the end. A ring that stays
 * full to the end never gets the LOST record of its last drops; the
 * kernel's per-event totals (read_format LOST) hold them, and the first
 * parse after stop counts them. Delivered + stats.lost = produced, exactly,
 * on every CPU, and a LOST record and a total never count a drop twice.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kutil.h"

#define N 12001    /* getpid calls, as in issue 17 */
#define MAXCPU 64

static int ncpu(void)
{
	int n = kutil_ncpu_online();

	return n < MAXCPU ? n : MAXCPU;
}

/* A session with 1-page rings, the getpid tracepoint filtered on filter_pid
 * (0: none, for pid mode), counting per CPU into k. */
static struct perfring_session *tiny_rings(struct perfring_opts *o, pid_t filter_pid,
					   struct kcount *k)
{
	struct perfring_session *s;

	o->sz = sizeof(*o);
	o->ring_pages = 1;
	KCHECK(kutil_getpid_session(o, filter_pid, k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	return s;
}

static struct perfring_cpu_stats stats_of(struct perfring_session *s, int cpu)
{
	struct perfring_cpu_stats st;

	cr_assert_eq(perfring_session_cpu_stats(s, cpu, &st), 0);
	return st;
}

/* delivered + stats.lost = produced on each CPU, and the ring did overflow. */
static void check_exact(struct perfring_session *s, const struct kcount *k,
			const uint64_t produced[MAXCPU], const char *how)
{
	for (int cpu = 0; cpu < ncpu(); cpu++) {
		struct perfring_cpu_stats st = stats_of(s, cpu);

		fprintf(stderr, "# R4 %s: CPU %d produced %llu, delivered %llu, lost %llu\n", how,
			cpu, (unsigned long long)produced[cpu], (unsigned long long)k->per_cpu[cpu],
			(unsigned long long)st.lost);
		cr_expect_eq(k->per_cpu[cpu] + st.lost, produced[cpu],
			     "%s: CPU %d: delivered %llu + lost %llu != produced %llu", how, cpu,
			     (unsigned long long)k->per_cpu[cpu], (unsigned long long)st.lost,
			     (unsigned long long)produced[cpu]);
		cr_expect_eq(st.samples, k->per_cpu[cpu]);
		if (produced[cpu])
			cr_expect_gt(st.lost, 0, "%s: CPU %d's 1-page ring never overflowed", how,
				     cpu);
	}
}

/* System-wide, this thread on each CPU in turn, N - 1000 * cpu calls each;
 * nobody reads until after stop, so no LOST record is ever written. */
Test(losses, full_to_the_end_parse_all)
{
	struct perfring_opts o = { 0 };
	uint64_t produced[MAXCPU] = { 0 };
	struct kcount k = { 0 };
	struct perfring_session *s = tiny_rings(&o, getpid(), &k);
	int cpu;

	if (kutil_under_valgrind())
		cr_skip_test("valgrind's own getpid calls make the counts lower bounds");
	for (cpu = 0; cpu < ncpu(); cpu++) {
		cr_assert_eq(kutil_pin(cpu), 0);
		produced[cpu] = N - 1000 * (uint64_t)(cpu % 10);
		kutil_getpid_n((long)produced[cpu]);
	}
	cr_assert_eq(perfring_session_stop(s), 0);
	cr_assert_geq(perfring_session_parse_all(s), 0, "%s", perfring_session_last_error(s));
	check_exact(s, &k, produced, "parse_all");
	perfring_session_free(s);
}

/* The pull form sums the LOST records it returns. */
static uint64_t pull_all(struct perfring_session *s, int cpu, struct kcount *k)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	uint64_t lost = 0;
	int r;

	while ((r = perfring_cpu_next(s, cpu, &smp, &rec)) > 0) {
		if (r == PERFRING_NEXT_SAMPLE)
			kutil_count_cb(&smp, k);
		else if (rec.type == PERF_RECORD_LOST)
			lost += rec.u.lost.lost;
	}
	cr_assert_eq(r, 0, "cpu_next: %d (%s)", r, perfring_session_last_error(s));
	cr_assert_eq(perfring_cpu_commit(s, cpu), 0);
	return lost;
}

/* Both kinds of count on one ring: the drops of a first overflow come in a
 * LOST record (written with the first record that fits after a read), those
 * of a second overflow, at the end, only in the totals. */
Test(losses, lost_records_and_totals_count_once)
{
	int cpu = ncpu() - 1;
	struct perfring_opts o = { .cpus = &cpu, .cpu_cnt = 1 };
	uint64_t produced[MAXCPU] = { 0 }, in_records;
	struct kcount k = { 0 };
	struct perfring_session *s;
	struct perfring_cpu_stats st;

	if (kutil_under_valgrind())
		cr_skip_test("valgrind's own getpid calls make the counts lower bounds");
	cr_assert_eq(kutil_pin(cpu), 0);
	s = tiny_rings(&o, getpid(), &k);
	kutil_getpid_n(N);
	in_records = pull_all(s, cpu, &k);
	cr_expect_eq(in_records, 0, "no record fitted, so no LOST record yet");
	kutil_getpid_n(1);
	kutil_getpid_n(N);
	produced[cpu] = 2 * N + 1;
	cr_assert_eq(perfring_session_stop(s), 0);
	in_records += pull_all(s, cpu, &k);
	st = stats_of(s, cpu);
	fprintf(stderr, "# R4 pull: LOST records %llu, stats.lost %llu\n",
		(unsigned long long)in_records, (unsigned long long)st.lost);
	cr_expect_gt(in_records, 0, "the first overflow's LOST record never came");
	cr_expect_gt(st.lost, in_records, "the second overflow's drops are missing");
	cr_expect_lt(st.lost, 2 * N, "counted twice: stats.lost %llu",
		     (unsigned long long)st.lost);
	cr_expect_eq(k.n + st.lost, produced[cpu]);
	cr_expect_eq(k.per_cpu[cpu] + st.lost, produced[cpu], "delivered %llu + lost %llu",
		     (unsigned long long)k.per_cpu[cpu], (unsigned long long)st.lost);
	perfring_session_free(s);
}

/* pid mode: the events inherit, and a child's drops are its parent
 * event's. The workload runs pinned in a child; parse_for_cpu reads. */
/* pid mode: a child pinned to the last CPU makes N calls into 1-page rings
 * that nobody reads, and has exited (reaped) when this returns. */
static struct perfring_session *child_filled(struct perfring_opts *o, struct kcount *k,
					     uint64_t produced[MAXCPU])
{
	struct kpinned p = { .cpu = ncpu() - 1, .n = N };
	struct perfring_session *s;
	struct kchild c;

	if (kutil_under_valgrind())
		cr_skip_test("valgrind's own getpid calls make the counts lower bounds");
	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	o->pid = c.pid;
	s = tiny_rings(o, 0, k);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	produced[p.cpu] = N;
	return s;
}

Test(losses, pid_mode_parse_for_cpu)
{
	uint64_t produced[MAXCPU] = { 0 };
	struct perfring_opts o = { 0 };
	struct kcount k = { 0 };
	struct perfring_session *s = child_filled(&o, &k, produced);

	cr_assert_eq(perfring_session_stop(s), 0);
	for (int cpu = 0; cpu < ncpu(); cpu++)
		cr_assert_geq(perfring_session_parse_for_cpu(s, cpu), 0);
	check_exact(s, &k, produced, "pid mode, parse_for_cpu");
	perfring_session_free(s);
}

/* ------------------------------------------- the kernel fact R4 relies on */

static int peo(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* read() with ID | LOST: { value, id, lost }. */
static uint64_t fd_lost(int fd)
{
	uint64_t v[3] = { 0 };

	cr_assert_eq(read(fd, v, sizeof(v)), (ssize_t)sizeof(v));
	return v[2];
}

/* The SAMPLE records of event id in a ring never read (no wrap). */
static uint64_t ring_count(void *map, size_t page, uint64_t id)
{
	const struct perf_event_mmap_page *m = map;
	const uint8_t *data = (const uint8_t *)map + page;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), pos, n = 0, got;
	const struct perf_event_header *h;

	for (pos = 0; pos < head && pos < page; pos += h->size) {
		h = (const struct perf_event_header *)(data + pos);
		cr_assert_geq(h->size, sizeof(*h) + 8);
		memcpy(&got, h + 1, sizeof(got));
		n += h->type == PERF_RECORD_SAMPLE && got == id;
	}
	return n;
}

/* Which fd holds the count: each event redirected into a ring counts the
 * drops of its own records; the ring's owner counts only its own (here, a
 * dummy that writes none). So the library sums every fd of a CPU. */
Test(losses, each_redirected_event_counts_its_own_drops)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_DUMMY, .disabled = 1,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
				     .sample_id_all = 1,
				     .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST };
	struct perfring_session *probe;
	struct perfring_event *ev;
	int cpu = ncpu() - 1, leader, fd[2], i;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t id[2], lost[3], in_ring[2];
	char filter[64];
	void *map;

	/* The tracepoint's id, from the library's own lookup. */
	KCHECK(perfring_session_new(NULL, &probe), NULL);
	KCHECK(perfring_session_add_tracepoint(probe, "syscalls", "sys_enter_getpid", &ev), probe);
	cr_assert_eq(kutil_pin(cpu), 0);
	leader = peo(&a, cpu);
	if (leader < 0)
		cr_skip_test("perf_event_open: %s", strerror(errno));
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, leader, 0);
	cr_assert_neq(map, MAP_FAILED);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = perfring_event_attr(ev)->config;
	a.sample_period = 1;
	a.sample_type |= PERF_SAMPLE_RAW;
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	for (i = 0; i < 2; i++) {
		fd[i] = peo(&a, cpu);
		cr_assert_geq(fd[i], 0);
		cr_assert_eq(ioctl(fd[i], PERF_EVENT_IOC_SET_OUTPUT, leader), 0);
		cr_assert_eq(ioctl(fd[i], PERF_EVENT_IOC_SET_FILTER, filter), 0);
		cr_assert_eq(ioctl(fd[i], PERF_EVENT_IOC_ID, &id[i]), 0);
	}
	/* A alone fills the ring; then A and B find it full. */
	cr_assert_eq(ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
	cr_assert_eq(ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0), 0);
	kutil_getpid_n(N);
	cr_assert_eq(ioctl(fd[1], PERF_EVENT_IOC_ENABLE, 0), 0);
	kutil_getpid_n(N);
	lost[0] = fd_lost(leader);
	lost[1] = fd_lost(fd[0]);
	lost[2] = fd_lost(fd[1]);
	for (i = 0; i < 2; i++)
		in_ring[i] = ring_count(map, page, id[i]);
	fprintf(stderr, "# R4 kernel: 1-page ring; leader lost %llu; event A %d records: %llu in "
		"the ring, %llu lost; event B %d records: %llu in the ring, %llu lost\n",
		(unsigned long long)lost[0], 2 * N, (unsigned long long)in_ring[0],
		(unsigned long long)lost[1], N, (unsigned long long)in_ring[1],
		(unsigned long long)lost[2]);
	cr_expect_eq(lost[0], 0, "the ring's owner wrote nothing and dropped nothing");
	cr_expect_eq(in_ring[0] + lost[1], 2 * N, "event A's own drops");
	cr_expect_eq(in_ring[1] + lost[2], N, "event B's own drops");
	cr_expect_gt(lost[2], 0);
	close(fd[0]);
	close(fd[1]);
	munmap(map, 2 * page);
	close(leader);
	perfring_session_free(probe);
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

/* pid mode ended by the process, without stop: parse_until returns at its
 * end (R2), and its last drops, which no LOST record reports (the ring is
 * full to the end), are in stats.lost all the same. watermark 0: the
 * polling wait; else the wakeup wait (the reactor every adapter uses). */
static void process_end_counts_the_last_drops(uint32_t watermark)
{
	uint64_t produced[MAXCPU] = { 0 };
	struct perfring_opts o = { .wakeup_watermark = watermark, .poll_interval_ms = 10 };
	struct kcount k = { 0 };
	struct perfring_session *s = child_filled(&o, &k, produced);

	cr_assert_geq(perfring_session_parse_until(s, never, NULL), 0, "%s",
		      perfring_session_last_error(s));
	check_exact(s, &k, produced, watermark ? "pid mode's end, wakeup wait" :
						 "pid mode's end, polling wait");
	perfring_session_free(s);
}

Test(losses, pid_mode_process_end_wakeup_wait) { process_end_counts_the_last_drops(2048); }
Test(losses, pid_mode_process_end_polling_wait) { process_end_counts_the_last_drops(0); }
