/* SPDX-License-Identifier: MIT */
/* Fault injection over BPF ring buffers (core/base/sys.h's hook): a
 * wakeup-mode session with one ring buffer is made, started, read by
 * parse_for_duration (the built-in epoll driver: its set, its timer, a
 * watch per CPU and one on a dup of the ring buffer's fd) and by
 * perfring_ringbuf_parse, and freed; once to count each kind of call, then
 * with each call of each kind failing in turn. The ring buffer's own calls
 * are the bpf(2) info call, the dup (counted as an open), the two mmaps and
 * the epoll watch. Each case fails cleanly (the injected errno and a
 * sentence) or carries on with every record delivered; after free no fd
 * the session made is open and LeakSanitizer finds nothing. */
#include "kbpf.h"
#include "kutil.h"
#include "base/sys.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CALLS 10

struct fault {
	enum pr_sys_call call;  /* PR_SYS__COUNT: count only */
	long nth, seen[PR_SYS__COUNT];
	int err;
};

static int hook(enum pr_sys_call call, void *ctx)
{
	struct fault *f = ctx;
	long n = ++f->seen[call];

	return call == f->call && n == f->nth ? f->err : 0;
}

/* This case's records: the map outlives each case, and a record written
 * after a case's last parse (criterion's own getpid calls, when it reports
 * a failed expectation) is read by the next one. */
struct count {
	uint64_t t0;
	int n;
};

static int count_cb(const struct perfring_sample *s, void *ctx)
{
	struct count *c = ctx;
	struct kbpf_rec r;

	memcpy(&r, s->raw, sizeof(r));
	c->n += s->raw_size == 24 && r.magic == KBPF_MAGIC && r.ns >= c->t0;
	return 0;
}

/* Calls of each kind made before the parse, and before free. */
struct phases { long setup[PR_SYS__COUNT], parsed[PR_SYS__COUNT]; };

/* 0, or the failing step's error with its sentence in why. */
static int scenario(const struct kbpf_rb *b, struct fault *f, struct phases *ph, char *why,
		    size_t len, int *got)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .wakeup_watermark = 4096 };
	struct count c = { .t0 = kutil_now_ns() };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err, n;

	pr_fault_set(hook, f);
	if (!(err = perfring_session_new(&o, &s)) &&
	    !(err = perfring_session_add_bpf_ringbuf(s, b->map, NULL, &ev)) &&
	    !(err = perfring_event_set_callback(ev, count_cb, &c)) &&
	    !(err = perfring_session_start(s))) {
		if (ph)
			memcpy(ph->setup, f->seen, sizeof(f->seen));
		kutil_getpid_n(CALLS);
		n = perfring_session_parse_for_duration(s, 20 * 1000000ull);
		err = n < 0 ? n : 0;
		/* A wait that carried on read them all: none is left for the
		 * ring buffer's own parse below to find. */
		if (!err && c.n != CALLS)
			err = -EPROTO;
		kutil_getpid_n(CALLS);
		if (!err && (n = perfring_ringbuf_parse(ev, 0, NULL)) < 0)
			err = n;
		if (ph)
			memcpy(ph->parsed, f->seen, sizeof(f->seen));
	}
	snprintf(why, len, "%s", perfring_session_last_error(s));
	perfring_session_free(s);
	pr_fault_set(NULL, NULL);
	*got = c.n;
	return err;
}

static const char *const kind_name[PR_SYS__COUNT] = {
	[PR_SYS_PERF_EVENT_OPEN] = "perf_event_open", [PR_SYS_MMAP] = "mmap",
	[PR_SYS_IOCTL] = "ioctl", [PR_SYS_EPOLL_CREATE] = "epoll_create",
	[PR_SYS_EPOLL_CTL] = "epoll_ctl", [PR_SYS_OPEN] = "open", [PR_SYS_READ] = "read",
	[PR_SYS_MALLOC] = "malloc", [PR_SYS_CALLOC] = "calloc", [PR_SYS_REALLOC] = "realloc",
	[PR_SYS_TIMERFD] = "timerfd", [PR_SYS_BPF] = "bpf",
};

enum outcome { BAD, FAILED_CLEANLY, RECOVERED };

static enum outcome one_case(const struct kbpf_rb *b, const struct phases *ph,
			     enum pr_sys_call call, long nth, int e)
{
	struct fault f = { .call = call, .nth = nth, .err = e };
	bool alloc = call == PR_SYS_MALLOC || call == PR_SYS_CALLOC || call == PR_SYS_REALLOC;
	int want = alloc ? -ENOMEM : -e, got = 0, rc, fds;
	struct kfdset before;
	char why[512], fdwhy[192];
	bool ok, leak;

	/* The info call's EINVAL is the kernel's answer for a fd that is no BPF object. */
	if (call == PR_SYS_BPF && nth == 1 && e == EINVAL)
		want = -EBADF;
	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	rc = scenario(b, &f, NULL, why, sizeof(why), &got);
	if (nth > ph->parsed[call])          /* in free: nothing to report, all released */
		ok = rc == 0 && got == 2 * CALLS;
	else if (nth > ph->setup[call])      /* in a parse: its error, or every record */
		ok = (rc == want && why[0]) || (rc == 0 && got == 2 * CALLS);
	else                                 /* fdinfo unread (its open, malloc, read): the
					        info call alone tells a map */
		ok = (rc == want && why[0]) ||
		     ((call == PR_SYS_OPEN || call == PR_SYS_READ || call == PR_SYS_MALLOC) &&
		      rc == 0 && got == 2 * CALLS);
	cr_expect(f.seen[call] >= nth, "%s #%ld never reached", kind_name[call], nth);
	cr_expect(ok, "%s #%ld failing with %s: returned %d (%s), %d records", kind_name[call],
		  nth, strerrorname_np(e), rc, why, got);
	fds = kutil_fd_changed(&before, fdwhy, sizeof(fdwhy));
	cr_expect_lt(fds, 0, "%s #%ld failing with %s: %s", kind_name[call], nth,
		     strerrorname_np(e), fdwhy);
	leak = kutil_leak_found();
	cr_expect(!leak, "%s #%ld failing with %s: LeakSanitizer found a leak (its report is "
		  "above)", kind_name[call], nth, strerrorname_np(e));
	if (!ok || fds >= 0 || leak || f.seen[call] < nth)
		return BAD;
	return rc ? FAILED_CLEANLY : RECOVERED;
}

static void counted(struct kbpf_rb *b, struct fault *count, struct phases *ph)
{
	char why[1024];
	int got = 0, err = kbpf_rb_open(b, getpid(), 1u << 16, KBPF_RB_OUTPUT, 24, why,
					sizeof(why));

	if (err == -EPERM || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	*count = (struct fault){ .call = PR_SYS__COUNT };
	cr_assert_eq(scenario(b, count, ph, why, sizeof(why), &got), 0, "%s", why);
	cr_assert_eq(got, 2 * CALLS);
}

static void run(enum pr_sys_call call)
{
	static const int errs[] = { EMFILE, ENOMEM, EPERM, EINVAL };
	long n, cases = 0, tally[3] = { 0 };
	struct fault count;
	struct phases ph;
	struct kbpf_rb b;
	size_t e;

	counted(&b, &count, &ph);
	for (n = 1; n <= count.seen[call]; n++)
		for (e = 0; e < sizeof(errs) / sizeof(errs[0]); e++, cases++)
			tally[one_case(&b, &ph, call, n, errs[e])]++;
	fprintf(stderr, "# ringbuf fault injection %s: %ld calls (%ld before the parse, %ld in "
		"free), %ld cases: %ld failed cleanly, %ld carried on, %ld bad; leak check: %s\n",
		kind_name[call], count.seen[call], ph.setup[call],
		count.seen[call] - ph.parsed[call], cases, tally[FAILED_CLEANLY],
		tally[RECOVERED], tally[BAD], kutil_leak_check_on() ? "LeakSanitizer" : "off");
	cr_assert_gt(count.seen[call], 0);
	cr_assert_eq(tally[BAD], 0);
	cr_assert_eq(kbpf_rb_close_gone(&b), 0, "BPF objects outlived the test");
}

TestSuite(ringbuf_faults, .timeout = 300);

/* The ring buffer's own calls are there: one info call, the two mmaps per
 * ring buffer beside one per CPU, a dup at the add and one for the wait's
 * watch (opens), the watch itself. */
Test(ringbuf_faults, calls_reached)
{
	long ncpu = kutil_ncpu_online();
	struct fault count;
	struct phases ph;
	struct kbpf_rb b;

	counted(&b, &count, &ph);
	fprintf(stderr, "# ringbuf calls: bpf %ld, mmap %ld, open %ld, epoll_ctl %ld\n",
		count.seen[PR_SYS_BPF], count.seen[PR_SYS_MMAP], count.seen[PR_SYS_OPEN],
		count.seen[PR_SYS_EPOLL_CTL]);
	cr_expect_eq(ph.setup[PR_SYS_BPF], 1, "the info call");
	cr_expect_eq(ph.setup[PR_SYS_MMAP], ncpu + 2, "a ring per CPU, the ring buffer's two");
	cr_expect_geq(ph.parsed[PR_SYS_EPOLL_CTL] - ph.setup[PR_SYS_EPOLL_CTL], ncpu + 2,
		      "the wait watches each CPU, its timer and the ring buffer");
	cr_expect_geq(ph.parsed[PR_SYS_OPEN] - ph.setup[PR_SYS_OPEN], 1, "the watch's dup");
	kbpf_rb_close_gone(&b);
}

Test(ringbuf_faults, bpf) { run(PR_SYS_BPF); }
Test(ringbuf_faults, mmap) { run(PR_SYS_MMAP); }
Test(ringbuf_faults, open_and_dup) { run(PR_SYS_OPEN); }
Test(ringbuf_faults, epoll_create) { run(PR_SYS_EPOLL_CREATE); }
Test(ringbuf_faults, epoll_ctl) { run(PR_SYS_EPOLL_CTL); }
Test(ringbuf_faults, timerfd) { run(PR_SYS_TIMERFD); }
Test(ringbuf_faults, calloc) { run(PR_SYS_CALLOC); }
Test(ringbuf_faults, malloc) { run(PR_SYS_MALLOC); }
Test(ringbuf_faults, realloc) { run(PR_SYS_REALLOC); }
Test(ringbuf_faults, read) { run(PR_SYS_READ); }
