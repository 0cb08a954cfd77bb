/* SPDX-License-Identifier: MIT */
/*
 * Fault injection through core/sys.h. A full scenario (session_new on every
 * online CPU in wakeup mode, two tracepoints, a filter, a software event,
 * start) is first run once to count each kind of call it makes; then, for
 * every kind and every N up to that count, it is run again with the Nth call
 * of that kind failing with each realistic errno. Every case must fail
 * cleanly (the injected errno, a sentence), leave the process's fds exactly as
 * they were, leak nothing (LeakSanitizer, in a sanitizer build), and the same
 * session must complete and work once the hook is removed.
 *
 * Checks use cr_expect so one run lists every bad case; the case count of each
 * kind goes to the .log ("# fault injection ...").
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kutil.h"
#include "base/sys.h"

/* Present only in a sanitizer build; weak so other builds link. */

static const char *const call_name[PR_SYS__COUNT] = {
	[PR_SYS_PERF_EVENT_OPEN] = "perf_event_open", [PR_SYS_MMAP] = "mmap",
	[PR_SYS_IOCTL] = "ioctl", [PR_SYS_EPOLL_CREATE] = "epoll_create1",
	[PR_SYS_EPOLL_CTL] = "epoll_ctl", [PR_SYS_OPEN] = "open", [PR_SYS_READ] = "read",
	[PR_SYS_MALLOC] = "malloc", [PR_SYS_CALLOC] = "calloc", [PR_SYS_REALLOC] = "realloc",
	[PR_SYS_TIMERFD] = "timerfd_create", [PR_SYS_BPF] = "bpf",
	[PR_SYS_MEMBARRIER] = "membarrier", [PR_SYS_SOCKET] = "socket",
	[PR_SYS_AFFINITY] = "sched_setaffinity",
};

static const int sys_errnos[] = { EMFILE, ENOMEM, EACCES, EINVAL, ENODEV, EBUSY };
static const int alloc_errnos[] = { ENOMEM }; /* all an allocator fails with */

static bool is_alloc(enum pr_sys_call call)
{
	return call == PR_SYS_MALLOC || call == PR_SYS_CALLOC || call == PR_SYS_REALLOC;
}

/* ------------------------------------------------------------- the hook */

struct fault {
	enum pr_sys_call call;   /* kind to fail; PR_SYS__COUNT = count only */
	long nth;                /* 1-based */
	int err;
	long seen[PR_SYS__COUNT];
	bool fired;
};

static int fault_hook(enum pr_sys_call call, void *ctx)
{
	struct fault *f = ctx;

	if (++f->seen[call] == f->nth && call == f->call && !f->fired) {
		f->fired = true;
		return f->err;
	}
	return 0;
}

/* --------------------------------------------------------- the scenario */

enum step { ST_NEW, ST_ADD_GETPID, ST_FILTER, ST_ADD_SWITCH, ST_ADD_SOFTWARE, ST_START,
	    ST_WAIT, ST__COUNT };
static const char *const step_name[ST__COUNT] = {
	"perfring_session_new", "add_tracepoint(syscalls:sys_enter_getpid)",
	"set_filter", "add_tracepoint(sched:sched_switch)",
	"add_software(context-switches)", "perfring_session_start",
	"parse_for_duration (its first wait opens the epoll set)",
};
#define SCEN_EVENTS 3

struct scen {
	struct perfring_session *s;
	struct perfring_event *getpid;
	struct kcount k;
};

/* 0: every task (system-wide); else pid mode on this two-thread process. */
static pid_t scen_pid;

static int scen_new(struct scen *sc)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .wakeup_watermark = 256,
				   .pid = scen_pid };

	return perfring_session_new(&o, &sc->s);
}

static int scen_filter(struct scen *sc)
{
	char filter[64];
	int err;

	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	if ((err = perfring_event_set_filter(sc->getpid, filter)))
		return err;
	return perfring_event_set_callback(sc->getpid, kutil_count_cb, &sc->k);
}

static int scen_step(struct scen *sc, enum step st)
{
	switch (st) {
	case ST_NEW:
		return scen_new(sc);
	case ST_ADD_GETPID:
		return perfring_session_add_tracepoint(sc->s, "syscalls", "sys_enter_getpid",
						       &sc->getpid);
	case ST_FILTER:
		return scen_filter(sc);
	case ST_ADD_SWITCH:
		return perfring_session_add_tracepoint(sc->s, "sched", "sched_switch", NULL);
	case ST_ADD_SOFTWARE:
		return perfring_session_add_software(sc->s, PERFRING_SW_CONTEXT_SWITCHES, 1, NULL);
	case ST_START:
		return perfring_session_start(sc->s);
	case ST_WAIT: {
		int n = perfring_session_parse_for_duration(sc->s, 1000000);

		return n < 0 ? n : 0;
	}
	default:
		return -EINVAL;
	}
}

/* Runs the steps from `first` on; returns 0, or the error of step *failed.
 * at (may be NULL): the fds just before the step that failed. */
static int scen_run(struct scen *sc, enum step first, enum step *failed, struct kfdset *at)
{
	enum step st;
	int err;

	for (st = first; st < ST__COUNT; st++) {
		if (at)
			cr_assert_eq(kutil_fd_snapshot(at), 0);
		if ((err = scen_step(sc, st))) {
			*failed = st;
			return err;
		}
	}
	return 0;
}

/* The session really works: one ring per CPU, and (system-wide) its own
 * getpid calls arrive exactly. */
static bool scen_works(struct scen *sc, const char *what)
{
	const struct perfring_cpu_fd *fds;
	size_t nfd = perfring_session_fds(sc->s, &fds);
	int n;

	cr_expect_eq(nfd, (size_t)kutil_ncpu_online(), "%s: %zu ring fds", what, nfd);
	if (scen_pid) {
		n = perfring_session_parse_all(sc->s);
		cr_expect_geq(n, 0, "%s: parse_all: %d", what, n);
		return nfd == (size_t)kutil_ncpu_online() && n >= 0;
	}
	memset(&sc->k, 0, sizeof(sc->k));
	kutil_getpid_n(25);
	n = perfring_session_parse_all(sc->s);
	cr_expect_eq(sc->k.n, 25, "%s: %llu of 25 getpid samples (parse_all gave %d)", what,
		     (unsigned long long)sc->k.n, n);
	return nfd == (size_t)kutil_ncpu_online() && sc->k.n == 25;
}

/* ------------------------------------------------------------ the cases */

struct tally { long cases, restarted, recovered, bad; };

static void case_name(char *buf, size_t len, const struct fault *f)
{
	snprintf(buf, len, "%s #%ld failing with %s", call_name[f->call], f->nth,
		 strerrorname_np(f->err));
}

/* A fault the library may recover from by itself: probing for tracefs opens
 * each known root and falls back to /proc/mounts. */
static bool recoverable(enum pr_sys_call call)
{
	return call == PR_SYS_OPEN;
}

static bool check_fds(const char *what, const struct kfdset *before)
{
	char why[192];
	bool same = kutil_fd_changed(before, why, sizeof(why)) < 0;

	cr_expect(same, "%s: %s", what, why);
	return same;
}

static bool check_failure(struct scen *sc, const struct fault *f, enum step st, int rc,
			  const struct kfdset *before)
{
	const char *why = perfring_session_last_error(st == ST_NEW ? NULL : sc->s);
	int want = is_alloc(f->call) ? -ENOMEM : -f->err;
	char what[192], name[96];

	case_name(name, sizeof(name), f);
	snprintf(what, sizeof(what), "%s: %s", name, step_name[st]);
	cr_expect_eq(rc, want, "%s returned %d (%s), want %d; sentence \"%s\"", what, rc,
		     perfring_strerror(rc), want, why);
	cr_expect(why[0], "%s returned %d with an empty sentence", what, rc);
	if (st == ST_NEW)
		cr_expect_null(sc->s, "%s: a failed session_new must leave *out NULL", what);
	return check_fds(what, before) && rc == want && why[0] && (st != ST_NEW || !sc->s);
}

/* Completes the scenario without the hook, from the step that failed. */
static bool check_restart(struct scen *sc, const struct fault *f, enum step st)
{
	enum step again = ST__COUNT;
	char what[160], name[96];
	int rc = scen_run(sc, st, &again, NULL);

	case_name(name, sizeof(name), f);
	snprintf(what, sizeof(what), "after %s in %s", name, step_name[st]);
	cr_expect_eq(rc, 0, "%s: %s failed again: %d (%s)", what,
		     again < ST__COUNT ? step_name[again] : "?", rc,
		     perfring_session_last_error(again == ST_NEW ? NULL : sc->s));
	return rc == 0 && scen_works(sc, what);
}

static bool check_clean(const struct fault *f, const struct kfdset *before)
{
	char name[96], what[128];
	bool leak = kutil_leak_found();

	case_name(name, sizeof(name), f);
	snprintf(what, sizeof(what), "%s, after perfring_session_free", name);
	cr_expect(!leak, "%s: LeakSanitizer found a leak (its report is above)", what);
	return check_fds(what, before) && !leak;
}

static void one_case(enum pr_sys_call call, long nth, int err, struct tally *t)
{
	struct fault f = { .call = call, .nth = nth, .err = err };
	struct scen sc = { 0 };
	enum step st = ST__COUNT;
	struct kfdset before, at_step;
	bool ok = true;
	int rc;

	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	pr_fault_set(fault_hook, &f);
	rc = scen_run(&sc, ST_NEW, &st, &at_step);
	pr_fault_set(NULL, NULL);
	cr_assert(f.fired, "%s #%ld was never reached", call_name[call], nth);
	t->cases++;
	if (rc == 0) {
		cr_expect(recoverable(call), "%s #%ld failing with %s was ignored: start succeeded",
			  call_name[call], nth, strerrorname_np(err));
		ok = recoverable(call) && scen_works(&sc, "after a recovered fault");
		t->recovered++;
	} else {
		/* A failed step leaves the fds as they were before it. */
		ok = check_failure(&sc, &f, st, rc, &at_step);
		if (ok && check_restart(&sc, &f, st))
			t->restarted++;
		else
			ok = false;
	}
	perfring_session_free(sc.s);
	ok = check_clean(&f, &before) && ok;
	t->bad += !ok;
}

/* The calls a fault-free run makes, checking that it works. */
static void count_calls(long seen[PR_SYS__COUNT])
{
	struct fault f = { .call = PR_SYS__COUNT };
	struct scen sc = { 0 };
	enum step st = ST__COUNT;
	int rc;

	pr_fault_set(fault_hook, &f);
	rc = scen_run(&sc, ST_NEW, &st, NULL);
	pr_fault_set(NULL, NULL);
	KCHECK(rc, st == ST_NEW ? NULL : sc.s);
	cr_assert(scen_works(&sc, "fault-free run"));
	perfring_session_free(sc.s);
	cr_assert(!kutil_leak_found(), "LeakSanitizer found a leak in the fault-free run");
	memcpy(seen, f.seen, sizeof(f.seen));
}

static void report(enum pr_sys_call call, long reached, const struct tally *t)
{
	fprintf(stderr, "# fault injection %s%s: %ld calls reached, %ld cases: %ld failed cleanly "
		"and restarted, %ld recovered by the library, %ld bad; leak check: %s\n",
		call_name[call], scen_pid ? " (pid mode)" : "", reached, t->cases, t->restarted,
		t->recovered, t->bad,
		kutil_leak_check_on() ? "LeakSanitizer" : "off (no sanitizers)");
}

static void run_kind_errnos(enum pr_sys_call call, const int *errs, size_t nerr)
{
	long seen[PR_SYS__COUNT], n;
	struct tally t = { 0 };
	size_t e;

	count_calls(seen);
	cr_assert_gt(seen[call], 0, "the scenario makes no %s call", call_name[call]);
	for (n = 1; n <= seen[call]; n++)
		for (e = 0; e < nerr; e++)
			one_case(call, n, errs[e], &t);
	report(call, seen[call], &t);
	cr_assert_eq(t.cases, seen[call] * (long)nerr);
	cr_assert_eq(t.bad, 0, "%ld of %ld %s cases misbehaved (listed above)", t.bad, t.cases,
		     call_name[call]);
}

static void run_kind(enum pr_sys_call call)
{
	if (is_alloc(call))
		run_kind_errnos(call, alloc_errnos, 1);
	else
		run_kind_errnos(call, sys_errnos, sizeof(sys_errnos) / sizeof(sys_errnos[0]));
}

/* ------------------------------------------------------------- the tests */

TestSuite(faults, .timeout = 600);

/* The scenario's shape: one leader per CPU plus one fd per event, each with
 * PERF_EVENT_IOC_ID; SET_OUTPUT per event, SET_FILTER once, and ENABLE on
 * every fd. The fault loops below cover exactly these calls. */
Test(faults, calls_reached)
{
	long seen[PR_SYS__COUNT], ncpu = kutil_ncpu_online();
	enum pr_sys_call c;

	count_calls(seen);
	for (c = 0; c < PR_SYS__COUNT; c++)
		fprintf(stderr, "# calls reached by the scenario: %s %ld\n", call_name[c], seen[c]);
	cr_expect_eq(seen[PR_SYS_PERF_EVENT_OPEN], ncpu * (1 + SCEN_EVENTS));
	cr_expect_eq(seen[PR_SYS_MMAP], ncpu);
	cr_expect_eq(seen[PR_SYS_IOCTL], ncpu * (1 + 2 * SCEN_EVENTS + 1 + 1 + SCEN_EVENTS));
	cr_expect_eq(seen[PR_SYS_EPOLL_CREATE], 1);
	cr_expect_eq(seen[PR_SYS_EPOLL_CTL], ncpu + 1, "the first wait: each ring fd, the timer");
	cr_expect_eq(seen[PR_SYS_TIMERFD], 1);
}

Test(faults, perf_event_open) { run_kind(PR_SYS_PERF_EVENT_OPEN); }
Test(faults, mmap) { run_kind(PR_SYS_MMAP); }
Test(faults, ioctl) { run_kind(PR_SYS_IOCTL); }
Test(faults, epoll_create1) { run_kind(PR_SYS_EPOLL_CREATE); }
Test(faults, epoll_ctl) { run_kind(PR_SYS_EPOLL_CTL); }
Test(faults, open) { run_kind(PR_SYS_OPEN); }
Test(faults, read) { run_kind(PR_SYS_READ); }
Test(faults, malloc) { run_kind(PR_SYS_MALLOC); }
Test(faults, calloc) { run_kind(PR_SYS_CALLOC); }
Test(faults, realloc) { run_kind(PR_SYS_REALLOC); }
Test(faults, timerfd_create) { run_kind(PR_SYS_TIMERFD); }

/* The fds before, then the whole scenario run without faults. */
static void started(struct scen *sc, struct kfdset *before)
{
	enum step st = ST__COUNT;

	cr_assert_eq(kutil_fd_snapshot(before), 0);
	KCHECK(scen_run(sc, ST_NEW, &st, NULL), st == ST_NEW ? NULL : sc->s);
}

/* Stopping: a failed PERF_EVENT_IOC_DISABLE is reported, the session stays
 * running, a second stop works, and free releases everything. */
static void one_stop_case(long nth, int err, struct tally *t)
{
	struct fault f = { .call = PR_SYS_IOCTL, .nth = nth, .err = err };
	struct scen sc = { 0 };
	struct kfdset before;
	int rc;

	started(&sc, &before);
	pr_fault_set(fault_hook, &f);
	rc = perfring_session_stop(sc.s);
	pr_fault_set(NULL, NULL);
	t->cases++;
	cr_expect_eq(rc, -err, "ioctl #%ld of stop failing with %s: stop returned %d (%s)", nth,
		     strerrorname_np(err), rc, perfring_session_last_error(sc.s));
	cr_expect(strstr(perfring_session_last_error(sc.s), "PERF_EVENT_IOC_DISABLE"),
		  "sentence: \"%s\"", perfring_session_last_error(sc.s));
	rc = perfring_session_stop(sc.s);
	cr_expect_eq(rc, 0, "second stop: %d (%s)", rc, perfring_session_last_error(sc.s));
	t->restarted += rc == 0;
	perfring_session_free(sc.s);
	t->bad += !check_clean(&f, &before) || rc != 0;
}

Test(faults, stop)
{
	long n, total = kutil_ncpu_online() * (1 + SCEN_EVENTS);
	struct tally t = { 0 };
	size_t e;

	for (n = 1; n <= total; n++)
		for (e = 0; e < sizeof(sys_errnos) / sizeof(sys_errnos[0]); e++)
			one_stop_case(n, sys_errnos[e], &t);
	fprintf(stderr, "# fault injection ioctl in stop: %ld calls, %ld cases, %ld bad\n",
		total, t.cases, t.bad);
	cr_assert_eq(t.bad, 0);
}

/* R4's totals: the first parse after stop reads each fd's drop count, one
 * read per fd. A failed read is not the parse's failure: that CPU's totals
 * stay due and the next parse reads all of its fds again, then none. */
static long reads_in_parse(struct scen *sc, struct fault *f)
{
	int n;

	memset(f->seen, 0, sizeof(f->seen));
	pr_fault_set(fault_hook, f);
	n = perfring_session_parse_all(sc->s);
	pr_fault_set(NULL, NULL);
	cr_expect_geq(n, 0, "parse_all after stop: %d (%s)", n, perfring_session_last_error(sc->s));
	return f->seen[PR_SYS_READ];
}

static void one_lost_case(long nth, int err, struct tally *t)
{
	long per_cpu = 1 + SCEN_EVENTS, ncpu = kutil_ncpu_online(), got[3];
	/* nth 0: the fault-free case (the hook counts from 1, so it never fires). */
	struct fault f = { .call = PR_SYS_READ, .nth = nth, .err = nth ? err : EIO };
	struct fault count = { .call = PR_SYS__COUNT };
	struct scen sc = { 0 };
	struct kfdset before;
	bool ok;

	started(&sc, &before);
	cr_assert_eq(perfring_session_stop(sc.s), 0);
	got[0] = reads_in_parse(&sc, &f);
	got[1] = reads_in_parse(&sc, &count);
	got[2] = reads_in_parse(&sc, &count);
	t->cases++;
	/* Fault-free: every fd once. Read #nth failed: the rest of its CPU's
	 * fds were skipped, and the next parse reads that CPU's again. */
	if (!nth)
		ok = got[0] == ncpu * per_cpu && got[1] == 0;
	else
		ok = f.fired && got[0] == ncpu * per_cpu - (per_cpu - (nth - 1) % per_cpu) + 1 &&
		     got[1] == per_cpu && got[2] == 0;
	cr_expect(ok, "read #%ld failing with %s: reads %ld, %ld, %ld", nth,
		  nth ? strerrorname_np(err) : "nothing", got[0], got[1], got[2]);
	cr_expect_eq(kutil_stats(sc.s).lost, 0, "nothing was dropped");
	t->restarted += ok;
	perfring_session_free(sc.s);
	t->bad += !check_clean(&f, &before) || !ok;
}

Test(faults, lost_read_after_stop)
{
	long n, total = kutil_ncpu_online() * (1 + SCEN_EVENTS);
	struct tally t = { 0 };
	size_t e;

	one_lost_case(0, EIO, &t);
	for (n = 1; n <= total; n++)
		for (e = 0; e < sizeof(sys_errnos) / sizeof(sys_errnos[0]); e++)
			one_lost_case(n, sys_errnos[e], &t);
	fprintf(stderr, "# fault injection read of the drop counts after stop: %ld calls, "
		"%ld cases, %ld bad\n", total, t.cases - 1, t.bad);
	cr_assert_eq(t.bad, 0);
}

/* ------------------------------------------------------------- pid mode */

/* pid mode adds the thread listing and, per CPU, a dummy tracker and one fd
 * per event for every other thread. The target is a child with two threads.
 * The full errno matrix ran above; here each call fails with EMFILE and
 * ENOMEM (allocators: ENOMEM). */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static pid_t two_thread_child(void)
{
	const struct timespec nap = { 0, 1000000 };
	pthread_t t;
	pid_t pid = fork();
	int i;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* Dies with the test even when a failed assert skips reap(). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1 ||
		    pthread_create(&t, NULL, idle_thread, NULL))
			_exit(1);
		idle_thread(NULL);
	}
	for (i = 0; i < 5000 && kutil_thread_count(pid) != 2; i++)
		nanosleep(&nap, NULL);
	cr_assert_eq(kutil_thread_count(pid), 2, "the child never had two threads");
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void pid_mode_kind(enum pr_sys_call call)
{
	static const int errs[] = { EMFILE, ENOMEM };

	scen_pid = two_thread_child();
	run_kind_errnos(call, errs, is_alloc(call) ? 1 : 2);
	reap(scen_pid);
}

Test(faults_pid, calls_reached)
{
	long seen[PR_SYS__COUNT], ncpu = kutil_ncpu_online(), threads = 2;

	scen_pid = two_thread_child();
	count_calls(seen);
	reap(scen_pid);
	/* Per CPU: the leader, a dummy for the second thread, each event per thread. */
	cr_expect_eq(seen[PR_SYS_PERF_EVENT_OPEN],
		     ncpu * (1 + (threads - 1) + SCEN_EVENTS * threads));
	cr_expect_eq(seen[PR_SYS_MMAP], ncpu);
}

Test(faults_pid, perf_event_open, .timeout = 600) { pid_mode_kind(PR_SYS_PERF_EVENT_OPEN); }
Test(faults_pid, ioctl, .timeout = 600) { pid_mode_kind(PR_SYS_IOCTL); }
Test(faults_pid, realloc, .timeout = 600) { pid_mode_kind(PR_SYS_REALLOC); }
