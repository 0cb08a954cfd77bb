/* SPDX-License-Identifier: MIT */
/*
 * The BPF ring buffer reader (core/kernel/ringbuf, core/read/ringbuf) on the
 * real kernel: a BPF_MAP_TYPE_RINGBUF written by tests/kbpf.c's programs on
 * sys_enter_getpid (bpf_ringbuf_output, reserve + submit, reserve + discard),
 * mapped by pr_rb_map and read by pr_rbuf_drain. Exact counts, whole records
 * across the end of a 4 KiB ring, discards, a full ring, an edge-triggered
 * epoll driver, and the mapping's errors and faults.
 */
#include "kbpf.h"
#include "kutil.h"

#include "base/sys.h"
#include "kernel/ringbuf.h"
#include "read/ringbuf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static struct kfdset fds_before;
static uint32_t ids[8];
static int nids;

static void setup(void)
{
	cr_assert_eq(kutil_fd_snapshot(&fds_before), 0);
	nids = 0;
}

static void teardown(void)
{
	char why[192];
	int left;

	cr_expect_lt(kutil_fd_changed(&fds_before, why, sizeof(why)), 0, "%s", why);
	left = kbpf_wait_gone(ids, nids);
	cr_expect_eq(left, 0, "%d of %d BPF objects outlived the test", left, nids);
}

TestSuite(rbkernel, .init = setup, .fini = teardown, .timeout = 120);

/* What the callback checks: the program's record, whole, in order. */
struct check {
	uint32_t size, tgid;
	uint64_t n, bad, wrapped, last_ns, t0;
	const uint8_t *data;
	uint64_t data_size;
	char first_bad[160];
};

static int check_cb(const struct perfring_sample *s, void *ctx)
{
	struct check *c = ctx;
	struct kbpf_rec r;
	const uint8_t *p = s->raw;
	uint32_t i;
	const char *why = NULL;

	c->n++;
	if (s->raw_size != c->size) {
		why = "size";
	} else {
		memcpy(&r, p, sizeof(r));
		if (r.magic != KBPF_MAGIC)
			why = "magic";
		else if (r.tgid != c->tgid)
			why = "tgid";
		else if (r.ns < c->last_ns || r.ns < c->t0 || r.ns > kutil_now_ns())
			why = "time";
		else if (s->time && s->time != r.ns)
			why = "sample time";
		for (i = sizeof(r); i < s->raw_size && !why; i++)
			if (p[i])
				why = "padding";
		c->last_ns = r.ns;
	}
	if (why) {
		if (!c->bad)
			snprintf(c->first_bad, sizeof(c->first_bad), "record %llu: %s (size %u)",
				 (unsigned long long)c->n, why, s->raw_size);
		c->bad++;
	}
	if ((uint64_t)(p - c->data) + s->raw_size > c->data_size)
		c->wrapped++;
	return 0;
}

struct reader {
	struct kbpf_rb b;
	struct pr_rbuf rb;
	struct perfring_event ev;
	struct pr_registry reg;
	struct pr_errbuf err;
	struct check c;
};

static void remember(int fd)
{
	if (fd >= 0 && nids < 8)
		ids[nids++] = kbpf_id(fd);
}

static void reader_open(struct reader *r, uint32_t ring, enum kbpf_rb_mode mode, uint32_t size)
{
	char why[2048] = "";
	pid_t me = getpid(); /* not after the attach: each call makes a record */
	int err;

	memset(r, 0, sizeof(*r));
	err = kbpf_rb_open(&r->b, me, ring, mode, size, why, sizeof(why));
	cr_assert_eq(err, 0, "%s", why);
	remember(r->b.prog);
	remember(r->b.map);
	remember(r->b.res_map);
	cr_assert_eq(pr_rb_map(&r->rb.map, r->b.map, ring), 0, "pr_rb_map: %s", strerror(errno));
	snprintf(r->ev.name, sizeof(r->ev.name), "kbpf_rb");
	r->reg.err = &r->err;
	r->ev.reg = &r->reg;
	r->ev.fn = check_cb;
	r->ev.ctx = &r->c;
	r->rb.ev = &r->ev;
	r->rb.map_fd = r->b.map;
	r->rb.timed = true;
	r->rb.time_offset = 16;
	r->c.size = size;
	r->c.tgid = (uint32_t)me;
	r->c.data = r->rb.map.data;
	r->c.data_size = ring;
	r->c.t0 = kutil_now_ns();
}

static void reader_close(struct reader *r)
{
	pr_rb_unmap(&r->rb.map);
	pr_rb_unmap(&r->rb.map);
	kbpf_rb_close(&r->b);
}

static int drain(struct reader *r)
{
	bool more, stopped;
	int n = pr_rbuf_drain(&r->rb, 0, &more, &stopped);

	cr_assert_geq(n, 0, "drain: %d (%s)", n, r->err.msg);
	cr_assert(!more && !stopped);
	return n;
}

/* 256-byte records take 264 bytes of the ring, 8 times an odd number, so
 * their headers start at every 8-byte offset of the 4 KiB ring in turn; the
 * 32 of each 512 that start in its last 256 bytes cross its end: 60,000
 * records cross it 3,750 times (40-byte ones, 48 apart, only 2 in 256).
 * 15 calls (3,960 bytes) fit the ring; each batch's drain empties it. */
#define STRADDLE_N 60000
#define STRADDLE_SIZE 256
#define STRADDLE_BATCH 15

Test(rbkernel, records_straddle_a_4k_ring_and_arrive_whole_in_order)
{
	struct reader r;
	long i;

	reader_open(&r, 4096, KBPF_RB_RESERVE, STRADDLE_SIZE);
	for (i = 0; i < STRADDLE_N; i += STRADDLE_BATCH) {
		kutil_getpid_n(STRADDLE_BATCH);
		drain(&r);
	}
	cr_assert_eq(r.c.n, STRADDLE_N, "%llu records", (unsigned long long)r.c.n);
	cr_assert_eq(r.c.bad, 0, "%s", r.c.first_bad);
	cr_assert_eq(kbpf_rb_failed(&r.b), 0);
	cr_assert_eq(kbpf_rb_calls(&r.b), STRADDLE_N);
	cr_assert_geq(r.c.wrapped, 2000, "%llu records crossed the end",
		      (unsigned long long)r.c.wrapped);
	cr_assert_eq(r.rb.st.records, STRADDLE_N);
	cr_assert_eq(r.rb.st.bytes, (uint64_t)STRADDLE_N * STRADDLE_SIZE);
	cr_assert_eq(r.rb.st.untimed, 0);
	fprintf(stderr, "# 4 KiB ring: %llu of %d records crossed its end\n",
		(unsigned long long)r.c.wrapped, STRADDLE_N);
	reader_close(&r);
}

Test(rbkernel, ringbuf_output_records_are_exact)
{
	struct reader r;

	reader_open(&r, 1 << 20, KBPF_RB_OUTPUT, 24);
	kutil_getpid_n(10000);
	cr_assert_eq(drain(&r), 10000);
	cr_assert_eq(r.c.bad, 0, "%s", r.c.first_bad);
	cr_assert_eq(kbpf_rb_failed(&r.b), 0);
	cr_assert_eq(r.rb.st.bytes, 240000);
	cr_assert_eq(drain(&r), 0);
	reader_close(&r);
}

Test(rbkernel, discarded_records_are_counted_exactly)
{
	struct reader r;

	reader_open(&r, 1 << 16, KBPF_RB_DISCARD_ODD, 48);
	kutil_getpid_n(1000);
	cr_assert_eq(drain(&r), 500);
	cr_assert_eq(r.c.bad, 0, "%s", r.c.first_bad);
	cr_assert_eq(r.rb.st.discarded, 500);
	cr_assert_eq(kbpf_rb_calls(&r.b), 1000);
	cr_assert_eq(kbpf_rb_failed(&r.b), 0);
	reader_close(&r);
}

/* The kernel keeps the producer less than the size ahead of the consumer:
 * a 4 KiB ring holds 127 records of 32 bytes; the rest fail, counted only by
 * the program. Once drained, the ring takes records again. */
Test(rbkernel, a_full_ring_fails_reserves_and_recovers)
{
	struct reader r;
	int n;

	reader_open(&r, 4096, KBPF_RB_RESERVE, 24);
	kutil_getpid_n(200);
	n = drain(&r);
	cr_assert_eq(n + kbpf_rb_failed(&r.b), 200, "%d read, %lld failed", n,
		     (long long)kbpf_rb_failed(&r.b));
	cr_assert_eq(n, 4095 / 32, "%d read", n);
	kutil_getpid_n(100);
	cr_assert_eq(drain(&r), 100);
	cr_assert_eq(r.c.bad, 0, "%s", r.c.first_bad);
	reader_close(&r);
}

struct storm {
	long calls;
	volatile int done;
};

static void *storm_run(void *arg)
{
	struct storm *s = arg;
	long i;

	for (i = 0; i < s->calls; i += 10) {
		kutil_getpid_n(10);
		if (i % 1000 == 0)
			usleep(50);
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* An edge-triggered epoll driver: a wakeup only for the record the consumer
 * position has caught up to. Records committed while a drain ends must be
 * found by its recheck, or they wait for a wakeup that never comes. */
Test(rbkernel, an_edge_triggered_driver_gets_every_record)
{
	struct reader r;
	struct storm s = { .calls = 200000 };
	struct epoll_event e = { .events = EPOLLIN | EPOLLET }, out;
	pthread_t t;
	int ep, idle = 0;

	reader_open(&r, 1 << 16, KBPF_RB_RESERVE, 24);
	r.c.last_ns = 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(ep, 0);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, r.b.map, &e), 0);
	cr_assert_eq(pthread_create(&t, NULL, storm_run, &s), 0);
	/* Two writers: this thread's drains make no getpid calls, so one; the
	 * order check holds. A second of silence after the storm: all in. */
	while (idle < 10) {
		int n = epoll_wait(ep, &out, 1, 100);

		if (n > 0) {
			drain(&r);
			idle = 0;
		} else if (__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
			idle++;
		}
	}
	pthread_join(t, NULL);
	close(ep);
	cr_assert_eq(r.c.bad, 0, "%s", r.c.first_bad);
	cr_assert_eq((int64_t)r.c.n + kbpf_rb_failed(&r.b), 200000, "%llu read, %lld failed",
		     (unsigned long long)r.c.n, (long long)kbpf_rb_failed(&r.b));
	fprintf(stderr, "# edge-triggered: %llu records, %lld failed reserves, %llu drains\n",
		(unsigned long long)r.c.n, (long long)kbpf_rb_failed(&r.b),
		(unsigned long long)r.rb.st.wakeups);
	reader_close(&r);
}

static int maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int c, n = 0;

	cr_assert(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int nth_mmap_fails;

static int fail_nth_mmap(enum pr_sys_call call, void *ctx)
{
	(void)ctx;
	return call == PR_SYS_MMAP && --nth_mmap_fails == 0 ? ENOMEM : 0;
}

Test(rbkernel, mapping_errors_and_faults_leave_nothing_mapped)
{
	struct kbpf_rb b;
	struct pr_rb_map m;
	char why[2048] = "";
	int arr, before, k;

	cr_assert_eq(kbpf_rb_open(&b, getpid(), 8192, KBPF_RB_RESERVE, 24, why, sizeof(why)), 0,
		     "%s", why);
	remember(b.prog);
	remember(b.map);
	remember(b.res_map);
	before = maps_lines();
	for (k = 1; k <= 2; k++) {
		nth_mmap_fails = k;
		pr_fault_set(fail_nth_mmap, NULL);
		cr_assert_eq(pr_rb_map(&m, b.map, 8192), -ENOMEM, "mmap %d failing", k);
		pr_fault_set(NULL, NULL);
		cr_assert_eq(maps_lines(), before, "mmap %d failing left a mapping", k);
		pr_rb_unmap(&m);
	}
	cr_assert_lt(pr_rb_map(&m, b.map, 16384), 0, "a size larger than the map's");
	cr_assert_eq(maps_lines(), before);
	arr = kbpf_array_map(1);
	cr_assert_geq(arr, 0);
	cr_assert_lt(pr_rb_map(&m, arr, 4096), 0, "not a ring buffer");
	close(arr);
	cr_assert_eq(maps_lines(), before);
	cr_assert_eq(pr_rb_map(&m, b.map, 8192), 0);
	cr_assert_eq(maps_lines(), before + 2);
	pr_rb_unmap(&m);
	cr_assert_eq(maps_lines(), before);
	cr_assert_eq(kbpf_rb_close_gone(&b), 0);
}
