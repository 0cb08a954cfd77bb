/* Level 1: opt-in kernel wakeups (byte watermark or sample count). */
#include "event.h"
#include "kutil.h"
#include "session.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <unistd.h>

#define N 10000
#define SAMPLE_BYTES 64 /* a getpid sample with RAW, see DESIGN.md */

static int getpid_n(void *arg)
{
	kutil_getpid_n((long)(intptr_t)arg);
	return 0;
}

struct until { struct kcount *k; uint64_t want, deadline; };

static bool reached(void *ctx)
{
	struct until *u = ctx;

	return u->k->n >= u->want || kutil_now_ns() > u->deadline;
}

#define SUM(s, field) (kutil_stats(s).field)

/* Runs N getpids in a child while parse_until waits for them. */
static void run_stream(struct perfring_opts *o, struct kcount *k, struct perfring_session **sp)
{
	struct until u = { k, N, 0 };
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, getpid_n, (void *)(intptr_t)N), 0);
	KCHECK(kutil_getpid_session(o, c.pid, k, sp, NULL), *sp);
	KCHECK(perfring_session_start(*sp), *sp);
	kutil_child_go(&c);
	u.deadline = kutil_now_ns() + 10000000000ull;
	perfring_session_parse_until(*sp, reached, &u);
	cr_assert_eq(kutil_child_wait(&c), 0);
}

/* The attr ev (NULL = the leader) is opened with, from s's plan. */
static void open_attr(const struct perfring_session *s, const struct perfring_event *ev,
		      struct perf_event_attr *a)
{
	struct pr_plan p;

	pr_session_plan(s, &p);
	pr_open_attr(&p, ev, a);
}

Test(wakeup, default_mode_leaves_attrs_untouched)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct perf_event_attr a;
	struct kcount k = { 0 };

	KCHECK(kutil_getpid_session(&o, 0, &k, &s, &ev), s);
	open_attr(s, NULL, &a);
	cr_assert_eq(a.watermark, 0);
	cr_assert_eq(a.wakeup_events, 0);
	cr_assert_eq(a.wakeup_watermark, 0);
	open_attr(s, ev, &a);
	cr_assert_eq(a.watermark, 0);
	cr_assert_eq(a.wakeup_events, 0);
	perfring_session_free(s);

	o.wakeup_watermark = 4096;
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, &ev), s);
	open_attr(s, NULL, &a);
	cr_assert_eq(a.watermark, 1);
	cr_assert_eq(a.wakeup_watermark, 4096);
	open_attr(s, ev, &a);
	cr_assert_eq(a.watermark, 0, "redirected events share the leader's ring");
	perfring_session_free(s);

	o.wakeup_watermark = 0;
	o.wakeup_events = 100;
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, &ev), s);
	open_attr(s, ev, &a);
	cr_assert_eq(a.wakeup_events, 100, "counted per sampling event");
	perfring_session_free(s);
}

/* Without an option the kernel wakes at half the ring: 100 records into a
 * 64-page ring must not make the fd readable; with a 4 KiB watermark they do. */
Test(wakeup, default_mode_does_not_signal_small_batches)
{
	uint32_t marks[] = { 0, 4096 };

	for (int i = 0; i < 2; i++) {
		struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = marks[i] };
		struct perfring_session *s;
		struct kcount k = { 0 };
		struct pollfd p = { .events = POLLIN };
		int self = (int)syscall(SYS_gettid);

		KCHECK(kutil_getpid_session(&o, self, &k, &s, NULL), s);
		KCHECK(perfring_session_start(s), s);
		kutil_pin(0);
		p.fd = perfring_session_fd_for_cpu(s, 0);
		kutil_getpid_n(100);
		cr_assert_eq(poll(&p, 1, 0), marks[i] ? 1 : 0, "watermark %u", marks[i]);
		perfring_session_free(s);
	}
}

Test(wakeup, watermark_bounds_wakeups)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	uint64_t wakeups, bound = (uint64_t)N * SAMPLE_BYTES / 4096 + 2;

	run_stream(&o, &k, &s);
	cr_assert_eq(k.n, N);
	wakeups = SUM(s, wakeups);
	cr_log_info("watermark 4096: %llu wakeups for %d records (bound %llu), %llu flushes",
		    (unsigned long long)wakeups, N, (unsigned long long)bound,
		    (unsigned long long)SUM(s, flushes));
	cr_assert_leq(wakeups, bound);
	cr_assert_gt(wakeups, 0, "the kernel woke us at least once");
	cr_assert_eq(SUM(s, lost), 0);
	perfring_session_free(s);
}

Test(wakeup, wakeup_events_bounds_wakeups)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_events = 100 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	uint64_t wakeups;

	run_stream(&o, &k, &s);
	cr_assert_eq(k.n, N);
	wakeups = SUM(s, wakeups);
	cr_log_info("wakeup_events 100: %llu wakeups for %d records", (unsigned long long)wakeups, N);
	cr_assert_leq(wakeups, 102);
	cr_assert_gt(wakeups, 0);
	perfring_session_free(s);
}

static long voluntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

Test(wakeup, idle_flush_never_makes_no_wakeups)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_session *s;
	struct kcount k = { 0 };
	long before;

	/* Filtered on a pid that never runs: no matching events. */
	KCHECK(kutil_getpid_session(&o, 0x3ffffff0, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	before = voluntary_switches();
	cr_assert_eq(perfring_session_parse_for_duration(s, 500000000ull), 0);
	cr_log_info("idle 500 ms, flush never: %llu wakeups, %ld voluntary switches",
		    (unsigned long long)SUM(s, wakeups), voluntary_switches() - before);
	cr_assert_eq(SUM(s, wakeups), 0);
	cr_assert_leq(voluntary_switches() - before, 3);
	perfring_session_free(s);
}

Test(wakeup, idle_default_mode_polls_every_interval)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = (int[]){ 0 }, .cpu_cnt = 1 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	uint64_t passes;

	KCHECK(kutil_getpid_session(&o, 0x3ffffff0, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	perfring_session_parse_for_duration(s, 500000000ull);
	passes = SUM(s, flushes);
	cr_log_info("idle 500 ms, default mode: %llu passes (500/15 = 33)", (unsigned long long)passes);
	/* Each empty pass sleeps 15 ms, so 500 ms holds at most 35 of them. */
	cr_assert_leq(passes, 35);
	cr_assert_geq(passes, 10);
	cr_assert_eq(SUM(s, wakeups), 0);
	perfring_session_free(s);
}

static void expect_new(struct perfring_opts *o, const char *words)
{
	struct perfring_session *s;

	cr_assert_eq(perfring_session_new(o, &s), -EINVAL);
	cr_assert(strstr(perfring_session_last_error(NULL), words), "%s",
		  perfring_session_last_error(NULL));
}

Test(wakeup, validation)
{
	long page = sysconf(_SC_PAGESIZE);
	char both[64];

	expect_new(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .ring_pages = 4,
					    .wakeup_watermark = (uint32_t)(4 * page) },
		   "must be smaller than the ring's data size");
	expect_new(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .ring_pages = 4,
					    .wakeup_watermark = (uint32_t)(8 * page) }, "(4 pages)");
	expect_new(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .ring_pages = 1,
					    .wakeup_watermark = (uint32_t)page }, "(1 pages)");
	snprintf(both, sizeof(both), "exclude each other");
	expect_new(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .wakeup_watermark = 64,
					    .wakeup_events = 1 }, both);
}

static int sleep_then_getpid(void *arg)
{
	(void)arg;
	usleep(100000);
	kutil_getpid_n(1);
	return 0;
}

/* With flush never, only a kernel wakeup can deliver the record. */
Test(wakeup, low_watermark_delivers_within_one_wakeup)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 8,
				   .flush_ms = PERFRING_FLUSH_NEVER };
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct until u = { &k, 1, 0 };
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, sleep_then_getpid, NULL), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(&c);
	u.deadline = kutil_now_ns() + 5000000000ull;
	perfring_session_parse_until(s, reached, &u);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(k.n, 1);
	cr_assert_eq(SUM(s, wakeups), 1);
	cr_assert_eq(SUM(s, flushes), perfring_session_fds(s, NULL), "only the initial pass");
	perfring_session_free(s);
}

/* The session's own wait opens its epoll set and flush timerfd on the first
 * wait, not at start: level-2 and adapter users never pay for them. */
Test(wakeup, epoll_and_timer_fds_live_from_first_wait_to_free)
{
	struct perfring_opts plain = { .sz = sizeof(plain) }, wm = plain;
	struct perfring_session *a, *b;
	struct kcount k = { 0 };
	int base = kutil_fd_count(), with_plain, with_wm;

	wm.wakeup_watermark = 4096;
	KCHECK(kutil_getpid_session(&plain, 0, &k, &a, NULL), a);
	KCHECK(kutil_getpid_session(&wm, 0, &k, &b, NULL), b);
	cr_assert_eq(kutil_fd_count(), base, "nothing is opened before start");
	KCHECK(perfring_session_start(a), a);
	with_plain = kutil_fd_count() - base;
	KCHECK(perfring_session_start(b), b);
	with_wm = kutil_fd_count() - base - with_plain;
	cr_assert_eq(with_wm, with_plain, "start opens only the rings");
	cr_assert_geq(perfring_session_parse_for_duration(b, 1000000), 0);
	cr_assert_eq(kutil_fd_count() - base - with_plain, with_plain + 2,
		     "the first wait adds an epoll fd and its flush timerfd");
	cr_assert_geq(perfring_session_parse_for_duration(b, 1000000), 0);
	cr_assert_eq(kutil_fd_count() - base - with_plain, with_plain + 2, "and only once");
	cr_assert_geq(perfring_session_parse_for_duration(a, 1000000), 0);
	cr_assert_eq(kutil_fd_count() - base - with_plain, with_plain + 2,
		     "default mode's wait sleeps: no fd");
	perfring_session_free(a);
	perfring_session_free(b);
	cr_assert_eq(kutil_fd_count(), base);
}
