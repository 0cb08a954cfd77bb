/* SPDX-License-Identifier: MIT */
/* Fault injection over BPF output (core/base/sys.h's hook): a session on
 * every online CPU with one BPF output, started, read and freed, is run
 * once to count each kind of call, then again with each call of the kinds
 * on this path failing in turn. Every case fails cleanly (the injected
 * errno, a sentence) or, in free, carries on; and after free no fd the
 * session made is open and no entry it wrote is in the map. */
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

/* Calls of each kind made before the parse, and before free. */
struct phases { long setup[PR_SYS__COUNT], parsed[PR_SYS__COUNT]; };

/* 0, or the failing step's error with its sentence in why. */
static int scenario(const struct kbpf *b, struct fault *f, struct phases *ph, char *why,
		    size_t len, int *got)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8 };
	struct kbpf_check c = { .tgid = (uint32_t)getpid() };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err;

	pr_fault_set(hook, f);
	if (!(err = perfring_session_new(&o, &s)) &&
	    !(err = perfring_session_add_bpf_output(s, b->out_map, &ev)) &&
	    !(err = perfring_event_set_callback(ev, kbpf_check_cb, &c)) &&
	    !(err = perfring_session_start(s))) {
		if (ph)
			memcpy(ph->setup, f->seen, sizeof(f->seen));
		kutil_getpid_n(CALLS);
		err = perfring_session_parse_all(s);
		*got = (int)c.n;
		err = err < 0 ? err : 0;
		if (ph)
			memcpy(ph->parsed, f->seen, sizeof(f->seen));
	}
	snprintf(why, len, "%s", perfring_session_last_error(s));
	perfring_session_free(s);
	pr_fault_set(NULL, NULL);
	return err;
}

static long entries_left(const struct kbpf *b)
{
	long left = 0;
	uint32_t k;

	for (k = 0; k < b->out_entries; k++)
		left += kbpf_delete(b->out_map, k) == 0;
	return left;
}

static const char *const kind_name[PR_SYS__COUNT] = {
	[PR_SYS_PERF_EVENT_OPEN] = "perf_event_open", [PR_SYS_IOCTL] = "ioctl",
	[PR_SYS_OPEN] = "open", [PR_SYS_REALLOC] = "realloc", [PR_SYS_BPF] = "bpf",
	[PR_SYS_MALLOC] = "malloc", [PR_SYS_CALLOC] = "calloc",
};

/* What one case did. */
enum outcome { BAD, FAILED_CLEANLY, RECOVERED };

static enum outcome one_case(const struct kbpf *b, const struct phases *ph,
			     enum pr_sys_call call, long nth, int e)
{
	struct fault f = { .call = call, .nth = nth, .err = e };
	bool alloc = call == PR_SYS_MALLOC || call == PR_SYS_CALLOC || call == PR_SYS_REALLOC;
	int want = alloc ? -ENOMEM : -e, got = 0, rc, fds;
	struct kfdset before;
	char why[512], fdwhy[192];
	bool ok, leak;
	long left;

	/* The info call's EINVAL is the kernel's answer for a fd that is no BPF object. */
	if (call == PR_SYS_BPF && nth == 1 && e == EINVAL)
		want = -EBADF;
	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	rc = scenario(b, &f, NULL, why, sizeof(why), &got);
	left = entries_left(b);
	if (nth > ph->parsed[call])          /* in free: nothing to report, all released */
		ok = rc == 0 && got == CALLS;
	else if (nth > ph->setup[call])      /* in the parse */
		ok = rc == 0 || rc == want;
	else                                 /* open fails over to another source */
		ok = (rc == want && why[0]) || (call == PR_SYS_OPEN && rc == 0);
	cr_expect(f.seen[call] >= nth, "%s #%ld never reached", kind_name[call], nth);
	cr_expect(ok, "%s #%ld failing with %s: returned %d (%s), %d samples", kind_name[call],
		  nth, strerrorname_np(e), rc, why, got);
	cr_expect_eq(left, 0, "%s #%ld failing with %s: %ld map entries left behind",
		     kind_name[call], nth, strerrorname_np(e), left);
	fds = kutil_fd_changed(&before, fdwhy, sizeof(fdwhy));
	cr_expect_lt(fds, 0, "%s #%ld failing with %s: %s", kind_name[call], nth,
		     strerrorname_np(e), fdwhy);
	leak = kutil_leak_found();
	cr_expect(!leak, "%s #%ld failing with %s: LeakSanitizer found a leak (its report is "
		  "above)", kind_name[call], nth, strerrorname_np(e));
	if (!ok || left || fds >= 0 || leak || f.seen[call] < nth)
		return BAD;
	return rc ? FAILED_CLEANLY : RECOVERED;
}

/* The program, and a fault-free run that counts the calls (ph, count). */
static void counted(struct kbpf *b, struct fault *count, struct phases *ph)
{
	char why[1024];
	int got = 0, err = kbpf_open(b, getpid(), 0, why, sizeof(why));

	if (err == -EPERM || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	*count = (struct fault){ .call = PR_SYS__COUNT };
	cr_assert_eq(scenario(b, count, ph, why, sizeof(why), &got), 0, "%s", why);
	cr_assert_eq(got, CALLS);
	cr_assert_eq(entries_left(b), 0, "a fault-free run left entries");
}

static void run(enum pr_sys_call call)
{
	static const int errs[] = { EMFILE, ENOMEM, EPERM, EINVAL };
	struct fault count;
	struct phases ph;
	struct kbpf b;
	long n, cases = 0, bad, tally[3] = { 0 };
	size_t e;

	counted(&b, &count, &ph);
	for (n = 1; n <= count.seen[call]; n++)
		for (e = 0; e < sizeof(errs) / sizeof(errs[0]); e++, cases++)
			tally[one_case(&b, &ph, call, n, errs[e])]++;
	fprintf(stderr, "# bpf fault injection %s: %ld calls (%ld before the parse, %ld in "
		"free), %ld cases: %ld failed cleanly, %ld carried on, %ld bad; leak check: %s\n",
		kind_name[call], count.seen[call], ph.setup[call],
		count.seen[call] - ph.parsed[call], cases, tally[FAILED_CLEANLY],
		tally[RECOVERED], tally[BAD], kutil_leak_check_on() ? "LeakSanitizer" : "off");
	bad = tally[BAD];
	cr_assert_gt(count.seen[call], 0);
	cr_assert_eq(bad, 0);
	cr_assert_eq(kbpf_close_gone(&b), 0, "BPF objects outlived the test");
}

TestSuite(bpf_faults, .timeout = 120);

/* The bpf(2) calls: the map's info, one update per CPU, one delete per CPU. */
Test(bpf_faults, calls_reached)
{
	long ncpu = kutil_ncpu_online();
	struct fault count;
	struct phases ph;
	struct kbpf b;

	counted(&b, &count, &ph);
	cr_expect_eq(ph.setup[PR_SYS_BPF], 1 + ncpu);
	cr_expect_eq(count.seen[PR_SYS_BPF], 1 + 2 * ncpu);
	cr_expect_eq(ph.setup[PR_SYS_PERF_EVENT_OPEN], 2 * ncpu, "a leader and a BPF event per CPU");
	kbpf_close(&b);
}

Test(bpf_faults, bpf) { run(PR_SYS_BPF); }
Test(bpf_faults, perf_event_open) { run(PR_SYS_PERF_EVENT_OPEN); }
Test(bpf_faults, ioctl) { run(PR_SYS_IOCTL); }
Test(bpf_faults, open) { run(PR_SYS_OPEN); }
Test(bpf_faults, realloc) { run(PR_SYS_REALLOC); }
