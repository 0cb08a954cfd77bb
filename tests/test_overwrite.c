/* The flight recorder on the real kernel (issue 21): overwrite rings, snapshots, their accounting. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kutil.h"
#include "base/sys.h"

#define BASE_FD 1000000u
#define MAX_SEEN 70000

/* What the callbacks saw: each close sample's number (fd - BASE_FD). */
struct seen {
	struct perfring_field fd;
	uint32_t *num;
	size_t n;
	uint16_t size;              /* of the last close record */
	uint64_t last_time[1024];   /* per CPU, across snapshots */
	uint64_t merged_time;       /* within one snapshot */
	uint64_t back_cpu, back_merged, lost;
	uint64_t samples;
};

static int on_close(const struct perfring_sample *smp, void *ctx)
{
	struct seen *w = ctx;
	uint64_t fd = 0;

	cr_assert_eq(perfring_field_uint(&w->fd, smp, &fd), 0);
	w->size = smp->record->size;
	if (fd >= BASE_FD && fd < BASE_FD + MAX_SEEN && w->n < MAX_SEEN)
		w->num[w->n++] = (uint32_t)(fd - BASE_FD);
	return 0;
}

/* Times: non-decreasing per CPU over every snapshot, and across CPUs
 * within each one. */
static int on_timed(const struct perfring_sample *smp, void *ctx)
{
	struct seen *w = ctx;

	cr_assert(smp->cpu >= 0 && smp->cpu < 1024);
	w->back_cpu += smp->time < w->last_time[smp->cpu];
	w->back_merged += smp->time < w->merged_time;
	w->last_time[smp->cpu] = smp->time;
	w->merged_time = smp->time;
	w->samples++;
	return 0;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct seen *w = ctx;

	if (r->type == PERF_RECORD_LOST)
		w->lost += r->u.lost.lost;
	return 0;
}

static void close_n(uint32_t from, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		close((int)(BASE_FD + from + i)); /* EBADF: only the tracepoint sees it */
}

/* An overwrite session on this process's close calls, on cpus (NULL: every
 * online CPU). */
static struct perfring_session *close_session_on(const int *cpus, size_t n, uint32_t pages,
						 struct seen *w)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpus, .cpu_cnt = n,
				   .ring_pages = pages, .overwrite = 1 };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	char filter[64];

	memset(w, 0, sizeof(*w));
	w->num = calloc(MAX_SEEN, sizeof(*w->num));
	cr_assert(w->num);
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_close", &ev), s);
	KCHECK(perfring_event_field(ev, "fd", &w->fd), s);
	KCHECK(perfring_event_set_filter(ev, filter), s);
	KCHECK(perfring_event_set_callback(ev, on_close, w), s);
	KCHECK(perfring_session_set_record_callback(s, 0, on_record, w), s);
	KCHECK(perfring_session_start(s), s);
	return s;
}

/* A one-CPU overwrite session on this process's close calls, pinned there. */
static struct perfring_session *close_session(uint32_t pages, struct seen *w)
{
	int cpu = sched_getcpu();

	cr_assert_eq(kutil_pin(cpu), 0);
	return close_session_on(&cpu, 1, pages, w);
}

static struct perfring_cpu_stats stats_of(struct perfring_session *s)
{
	return kutil_stats(s);
}

/* The run w->num[from..n) is last-k+1 .. last, each once, in order. */
static void expect_run(const struct seen *w, size_t from, uint32_t last)
{
	size_t i, k = w->n - from;

	cr_assert(k > 0, "the snapshot delivered nothing");
	cr_expect_eq(w->num[w->n - 1], last, "last delivered %u, last made %u", w->num[w->n - 1],
		     last);
	for (i = from + 1; i < w->n; i++)
		cr_assert_eq(w->num[i], w->num[i - 1] + 1, "gap or duplicate at %zu: %u after %u",
			     i, w->num[i], w->num[i - 1]);
}

Test(overwrite, exact_newest)
{
	struct seen w;
	struct perfring_session *s = close_session(1, &w);
	struct perfring_cpu_stats st;
	int n = perfring_session_snapshot(s);

	cr_assert_eq(n, 0, "an empty recorder: %d (%s)", n, perfring_session_last_error(s));
	close_n(0, 20000);
	n = perfring_session_snapshot(s);
	cr_assert_gt(n, 0, "%s", perfring_session_last_error(s));
	cr_assert_eq((size_t)n, w.n);
	expect_run(&w, 0, 19999);
	/* Every record is one size, so a page holds exactly 4096 / size whole ones. */
	cr_expect_eq((uint32_t)n, 4096u / w.size, "%d records of %u bytes in a page", n, w.size);
	st = stats_of(s);
	cr_expect_eq(st.overwritten, (uint64_t)(20000 - n) * w.size, "overwritten %llu bytes",
		     (unsigned long long)st.overwritten);
	cr_expect_eq(st.lost, 0);
	cr_expect_eq(st.corrupt, 0);
	cr_expect_eq(perfring_session_snapshot(s), 0, "nothing new, nothing delivered");
	perfring_session_free(s);
	free(w.num);
}

Test(overwrite, two_snapshots_without_overlap)
{
	struct seen w;
	struct perfring_session *s = close_session(1, &w);
	uint64_t over;
	size_t first;
	int n;

	close_n(0, 20000);
	cr_assert_gt(perfring_session_snapshot(s), 0);
	over = stats_of(s).overwritten;
	first = w.n;
	/* Fewer than a page: exactly these, nothing of the first snapshot. */
	close_n(20000, 20);
	n = perfring_session_snapshot(s);
	cr_assert_eq(n, 20, "%d (%s)", n, perfring_session_last_error(s));
	cr_expect_eq(w.num[first], 20000);
	expect_run(&w, first, 20019);
	cr_expect_eq(stats_of(s).overwritten, over, "nothing was overwritten in between");
	/* More than a page: the newest run, starting after the last one. */
	first = w.n;
	close_n(20020, 20000);
	n = perfring_session_snapshot(s);
	cr_assert_gt(n, 0);
	cr_expect_gt(w.num[first], 20019u);
	expect_run(&w, first, 40019);
	cr_expect_eq(stats_of(s).lost, 0);
	perfring_session_free(s);
	free(w.num);
}

/* The hook's first membarrier or sched_getaffinity (the wait for the
 * kernel's writers) runs while every ring is paused: whatever happens in it
 * is what a snapshot's pause costs. */
struct during {
	uint32_t calls;
	bool done;
};

static int paused_calls(enum pr_sys_call call, void *ctx)
{
	struct during *d = ctx;

	if ((call == PR_SYS_MEMBARRIER || call == PR_SYS_AFFINITY) && !d->done) {
		d->done = true;
		close_n(50000, d->calls);
	}
	return 0;
}

Test(overwrite, pause_cost_is_reported_as_lost)
{
	struct seen w;
	struct perfring_session *s = close_session(16, &w);
	struct during d = { 100, false };
	size_t i;
	int n;

	close_n(0, 10);
	pr_fault_set(paused_calls, &d);
	n = perfring_session_snapshot(s);
	pr_fault_set(NULL, NULL);
	cr_assert_eq(n, 10, "%d (%s)", n, perfring_session_last_error(s));
	/* The kernel dropped the paused ones and reports them with the next
	 * record it writes. */
	close_n(10, 5);
	cr_assert_eq(perfring_session_snapshot(s), 5);
	cr_expect_eq(w.lost, d.calls, "LOST records: %llu", (unsigned long long)w.lost);
	cr_expect_eq(stats_of(s).lost, d.calls);
	cr_expect_eq(stats_of(s).overwritten, 0);
	for (i = 0; i < w.n; i++)
		cr_assert_lt(w.num[i], 50000u, "a record made while paused was delivered");
	/* After stop, R4 holds: delivered + lost = made. */
	cr_assert_eq(perfring_session_stop(s), 0);
	cr_assert_eq(perfring_session_snapshot(s), 0);
	cr_expect_eq(w.n + stats_of(s).lost, 15 + d.calls);
	perfring_session_free(s);
	free(w.num);
}

static int generating, gen_tid;

/* Tells its tid (the filter's common_pid), waits for the session, then
 * makes two sizes of record until told to stop. */
static void *generator(void *arg)
{
	uint32_t i = 0;

	(void)arg;
	__atomic_store_n(&gen_tid, gettid(), __ATOMIC_RELEASE);
	while (__atomic_load_n(&generating, __ATOMIC_ACQUIRE) == 0)
		usleep(1000);
	while (__atomic_load_n(&generating, __ATOMIC_RELAXED) == 1) {
		close_n(i++ % 1000, 1);
		getpid();
	}
	return NULL;
}

Test(overwrite, no_torn_record_in_200_snapshots)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 2, .overwrite = 1 };
	struct perfring_session *s = NULL;
	struct perfring_event *a, *b;
	struct perfring_cpu_stats st;
	struct seen *w = calloc(1, sizeof(*w));
	pthread_t t;
	char filter[64];
	int i, n;

	cr_assert(w);
	cr_assert_eq(pthread_create(&t, NULL, generator, NULL), 0);
	while (!__atomic_load_n(&gen_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	snprintf(filter, sizeof(filter), "common_pid == %d", gen_tid);
	KCHECK(perfring_session_new(&o, &s), NULL);
	/* Two sizes of record, so that a torn one would not line up. */
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_close", &a), s);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &b), s);
	KCHECK(perfring_event_set_filter(a, filter), s);
	KCHECK(perfring_event_set_filter(b, filter), s);
	KCHECK(perfring_event_set_callback(a, on_timed, w), s);
	KCHECK(perfring_event_set_callback(b, on_timed, w), s);
	KCHECK(perfring_session_set_record_callback(s, 0, on_record, w), s);
	KCHECK(perfring_session_start(s), s);
	__atomic_store_n(&generating, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 200; i++) {
		w->merged_time = 0;
		n = perfring_session_snapshot(s);
		cr_assert_geq(n, 0, "%s", perfring_session_last_error(s));
		usleep(1000); /* each pause is a grace period: let the generator write */
	}
	__atomic_store_n(&generating, 2, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	st = stats_of(s);
	cr_expect_eq(st.corrupt, 0);
	cr_expect_eq(st.unknown, 0);
	cr_expect_eq(w->back_cpu, 0, "%llu went back in time on their CPU",
		     (unsigned long long)w->back_cpu);
	cr_expect_eq(w->back_merged, 0);
	cr_expect_gt(w->samples, 0, "the generator ran: %llu samples",
		     (unsigned long long)w->samples);
	cr_log_info("%llu samples, %llu lost while paused, %llu bytes overwritten",
		    (unsigned long long)w->samples, (unsigned long long)st.lost,
		    (unsigned long long)st.overwritten);
	cr_expect_eq(st.samples, w->samples);
	perfring_session_free(s);
	free(w);
}

Test(overwrite, ordinary_parses_and_wakeups_are_refused)
{
	struct perfring_opts o = { .sz = sizeof(o), .overwrite = 1, .wakeup_watermark = 4096 };
	struct perfring_session *s = NULL;
	const struct perfring_cpu_fd *fds;
	struct perfring_sample smp;
	struct perfring_record rec;

	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(NULL), "wakeup_watermark"));
	o.wakeup_watermark = 0;
	o.flush_ms = 10;
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL);
	o.flush_ms = 0;
	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_expect_eq(perfring_session_snapshot(s), -EINVAL, "before start");
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_gt(perfring_session_fds(s, &fds), 0);
	cr_expect_eq(perfring_session_parse_all(s), -EOPNOTSUPP);
	cr_expect(strstr(perfring_session_last_error(s), "perfring_session_snapshot"));
	cr_expect_eq(perfring_session_parse_for_cpu(s, fds[0].cpu), -EOPNOTSUPP);
	cr_expect_eq(perfring_cpu_next(s, fds[0].cpu, &smp, &rec), -EOPNOTSUPP);
	cr_expect_eq(perfring_session_parse_for_duration(s, 1000000), -EOPNOTSUPP);
	perfring_session_free(s);
}

Test(overwrite, snapshot_of_an_ordinary_session_is_refused)
{
	struct perfring_session *s = NULL;

	KCHECK(perfring_session_new(NULL, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_expect_eq(perfring_session_snapshot(s), -EOPNOTSUPP);
	cr_expect_eq(perfring_session_snapshot(NULL), -EINVAL);
	perfring_session_free(s);
}

struct synth_seen {
	int comm, mmap_self, mmap, ring_records, after_ring, not_synthetic;
	char self[4096];
};

static int on_synth(const struct perfring_record *r, void *ctx)
{
	struct synth_seen *y = ctx;

	if (!r->synthetic) {
		y->ring_records++;
		return 0;
	}
	y->after_ring += y->ring_records > 0;
	cr_expect_eq(r->cpu, -1);
	cr_expect_eq(r->pid, (uint32_t)getpid());
	if (r->type == PERF_RECORD_COMM) {
		y->comm++;
		cr_expect_eq(r->u.comm.pid, (uint32_t)getpid());
		cr_expect(r->u.comm.comm[0]);
	} else if (r->type == PERF_RECORD_MMAP2) {
		y->mmap++;
		cr_expect(r->u.mmap.prot & 4 /* PROT_EXEC */);
		cr_expect_gt(r->u.mmap.len, 0);
		y->mmap_self += strcmp(r->u.mmap.filename, y->self) == 0;
	}
	return 0;
}

static int on_sample_seen(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	((struct synth_seen *)ctx)->ring_records++;
	return 0;
}

Test(overwrite, tail_synthesis_comes_first_and_is_marked)
{
	struct perfring_opts o = { .sz = sizeof(o), .pid = getpid(), .overwrite = 1 };
	struct perfring_snapshot_opts so = { .sz = sizeof(so),
					     .synthesize = PERFRING_REC_COMM | PERFRING_REC_MMAP };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	struct synth_seen y = { 0 };
	ssize_t n;

	n = readlink("/proc/self/exe", y.self, sizeof(y.self) - 1);
	cr_assert_gt(n, 0);
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev), s);
	KCHECK(perfring_event_set_callback(ev, on_sample_seen, &y), s);
	cr_expect_eq(perfring_session_snapshot_opts(s, &so), -EINVAL, "before start");
	KCHECK(perfring_session_set_record_callback(s, 0, on_synth, &y), s);
	KCHECK(perfring_session_start(s), s);
	kutil_getpid_n(10);
	so.synthesize |= 1u << 3;
	cr_expect_eq(perfring_session_snapshot_opts(s, &so), -EINVAL);
	so.synthesize &= ~(1u << 3);
	cr_assert_eq(perfring_session_snapshot_opts(s, &so), 10, "%s",
		     perfring_session_last_error(s));
	cr_expect_eq(y.comm, kutil_thread_count(getpid()));
	cr_expect_eq(y.mmap_self, 1, "one executable mapping of %s", y.self);
	cr_expect_gt(y.mmap, 1, "libc too");
	cr_expect_eq(y.after_ring, 0, "synthetic records come before the ring's");
	cr_expect_eq(y.ring_records, 10);
	perfring_session_free(s);
}

struct stopper {
	int left;                   /* samples before asking to stop */
	struct perfring_session *s;
	bool free_it;               /* free the session instead (R7) */
	int got;
};

static int on_stopper(const struct perfring_sample *smp, void *ctx)
{
	struct stopper *k = ctx;

	(void)smp;
	k->got++;
	if (--k->left)
		return 0;
	if (k->free_it)
		perfring_session_free(k->s);
	return 1;
}

static struct perfring_session *getpid_session(struct stopper *k)
{
	int cpu = sched_getcpu();
	struct perfring_opts o = { .sz = sizeof(o), .cpus = &cpu, .cpu_cnt = 1, .ring_pages = 16,
				   .overwrite = 1 };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	char filter[64];

	cr_assert_eq(kutil_pin(cpu), 0);
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev), s);
	KCHECK(perfring_event_set_filter(ev, filter), s);
	KCHECK(perfring_event_set_callback(ev, on_stopper, k), s);
	KCHECK(perfring_session_start(s), s);
	k->s = s;
	return s;
}

Test(overwrite, a_stopped_snapshot_goes_on_at_the_next_call)
{
	struct stopper k = { .left = 3 };
	struct perfring_session *s = getpid_session(&k);

	kutil_getpid_n(10);
	cr_assert_eq(perfring_session_snapshot(s), 3);
	k.left = 1000;
	/* The rest of the first, then the 5 made since: nothing twice. */
	kutil_getpid_n(5);
	cr_assert_eq(perfring_session_snapshot(s), 12);
	cr_expect_eq(k.got, 15);
	cr_expect_eq(kutil_stats(s).samples, 15);
	perfring_session_free(s);
}

Test(overwrite, free_inside_a_snapshot_callback_is_deferred)
{
	struct stopper k = { .left = 2, .free_it = true };
	struct perfring_session *s = getpid_session(&k);

	kutil_getpid_n(10);
	cr_expect_eq(perfring_session_snapshot(s), -ECANCELED);
	cr_expect_eq(k.got, 2);
}

static int nop_watch(void *loop, size_t slot, int fd, bool on)
{
	(void)loop, (void)slot, (void)fd, (void)on;
	return 0;
}

static int nop_soon(void *loop, bool on)
{
	(void)loop, (void)on;
	return 0;
}

static int nop_timer(void *loop, uint32_t ms)
{
	(void)loop, (void)ms;
	return 0;
}

static void count_destroy(void *loop)
{
	++*(int *)loop;
}

Test(overwrite, a_reactor_is_refused_and_its_driver_released)
{
	static const struct perfring_loop_ops ops = { .sz = sizeof(ops), .watch = nop_watch,
		.soon = nop_soon, .timer = nop_timer, .destroy = count_destroy };
	struct stopper k = { .left = 1000 };
	struct perfring_session *s = getpid_session(&k);
	struct perfring_reactor *r = (void *)1;
	int destroyed = 0;

	cr_expect_eq(perfring_reactor_new(s, NULL, &ops, &destroyed, &r), -EOPNOTSUPP);
	cr_expect_null(r);
	cr_expect_eq(destroyed, 1);
	cr_expect(strstr(perfring_session_last_error(s), "perfring_session_snapshot"));
	perfring_session_free(s);
}

static int fail_call(enum pr_sys_call call, void *ctx)
{
	return call == *(enum pr_sys_call *)ctx ? ENOSYS : 0;
}

static int fail_waits(enum pr_sys_call call, void *ctx)
{
	(void)ctx;
	return call == PR_SYS_AFFINITY || call == PR_SYS_MEMBARRIER ? ENOSYS : 0;
}

/* Counts the two ways of waiting for the kernel's writers, failing one. */
struct waits {
	enum pr_sys_call fail;
	unsigned affinity, membarrier;
};

static int count_waits(enum pr_sys_call call, void *ctx)
{
	struct waits *c = ctx;

	c->affinity += call == PR_SYS_AFFINITY;
	c->membarrier += call == PR_SYS_MEMBARRIER;
	return call == c->fail ? ENOSYS : 0;
}

static bool pinned_to(int cpu)
{
	cpu_set_t now;

	return sched_getaffinity(0, sizeof(now), &now) == 0 && CPU_COUNT(&now) == 1 &&
	       CPU_ISSET(cpu, &now) && sched_getcpu() == cpu;
}

static const struct perfring_snapshot_opts visit = { .sz = sizeof(visit),
						      .wait = PERFRING_SNAPSHOT_WAIT_VISIT };

/* By default the wait is one grace period, and nothing moves the thread. */
Test(overwrite, the_default_wait_is_a_grace_period)
{
	struct waits c = { PR_SYS__COUNT, 0, 0 };
	struct perfring_snapshot_opts bad = visit;
	struct seen w;
	struct perfring_session *s = close_session(1, &w);

	close_n(0, 10);
	pr_fault_set(count_waits, &c);
	cr_assert_eq(perfring_session_snapshot(s), 10, "%s", perfring_session_last_error(s));
	pr_fault_set(NULL, NULL);
	cr_expect_eq(c.membarrier, 1);
	cr_expect_eq(c.affinity, 0);
	bad.wait = PERFRING_SNAPSHOT_WAIT_VISIT + 1;
	cr_expect_eq(perfring_session_snapshot_opts(s, &bad), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(s), "wait"), "%s", perfring_session_last_error(s));
	perfring_session_free(s);
	free(w.num);
}

/* WAIT_VISIT: every ring's CPU visited, no grace period, and the caller
 * keeps its affinity (the snapshot runs on the last CPU, then is back). */
Test(overwrite, the_visit_wait_visits_each_cpu_and_the_thread_keeps_its_affinity)
{
	struct waits c = { PR_SYS__COUNT, 0, 0 };
	struct perfring_session *s;
	struct seen w;
	int n;

	cr_assert_gt(kutil_ncpu_online(), 1, "the test needs two CPUs");
	cr_assert_eq(kutil_pin(0), 0);
	s = close_session_on(NULL, 0, 16, &w);
	close_n(0, 100);
	pr_fault_set(count_waits, &c);
	n = perfring_session_snapshot_opts(s, &visit);
	pr_fault_set(NULL, NULL);
	cr_assert_geq(n, 100, "%d (%s)", n, perfring_session_last_error(s));
	cr_expect_eq(w.n, 100);
	expect_run(&w, 0, 99);
	cr_expect_eq(c.membarrier, 0);
	/* get, one set per CPU, the set back */
	cr_expect_eq(c.affinity, 2 + (unsigned)kutil_ncpu_online());
	cr_expect(pinned_to(0), "the snapshot left the thread elsewhere");
	perfring_session_free(s);
	free(w.num);
}

/* A CPU the thread cannot run on (a cpuset without it): the grace period. */
Test(overwrite, a_failed_visit_waits_a_grace_period)
{
	struct waits c = { PR_SYS_AFFINITY, 0, 0 };
	struct seen w;
	struct perfring_session *s = close_session(1, &w);
	int cpu = sched_getcpu(), n;

	close_n(0, 20000);
	pr_fault_set(count_waits, &c);
	n = perfring_session_snapshot_opts(s, &visit);
	pr_fault_set(NULL, NULL);
	cr_assert_eq((uint32_t)n, 4096u / w.size, "%d (%s)", n, perfring_session_last_error(s));
	expect_run(&w, 0, 19999);
	cr_expect_eq(c.affinity, 1);
	cr_expect_eq(c.membarrier, 1);
	cr_expect(pinned_to(cpu));
	perfring_session_free(s);
	free(w.num);
}

Test(overwrite, without_either_wait_the_head_is_read_again)
{
	struct seen w;
	struct perfring_session *s = close_session(1, &w);
	int n;

	close_n(0, 20000);
	pr_fault_set(fail_waits, NULL);
	n = perfring_session_snapshot_opts(s, &visit);
	pr_fault_set(NULL, NULL);
	cr_assert_eq((uint32_t)n, 4096u / w.size, "%d (%s)", n, perfring_session_last_error(s));
	expect_run(&w, 0, 19999);
	perfring_session_free(s);
	free(w.num);
}

Test(overwrite, a_failed_pause_leaves_no_ring_paused)
{
	enum pr_sys_call which = PR_SYS_IOCTL;
	struct seen w;
	struct perfring_session *s = close_session(1, &w);
	int n;

	close_n(0, 10);
	pr_fault_set(fail_call, &which);
	n = perfring_session_snapshot(s);
	pr_fault_set(NULL, NULL);
	cr_assert_eq(n, -ENOSYS);
	cr_expect(strstr(perfring_session_last_error(s), "PERF_EVENT_IOC_PAUSE_OUTPUT"), "%s",
		  perfring_session_last_error(s));
	/* Nothing was taken: the next snapshot has all of it, and the ring
	 * kept recording meanwhile. */
	close_n(10, 5);
	cr_assert_eq(perfring_session_snapshot(s), 15);
	expect_run(&w, 0, 14);
	cr_expect_eq(stats_of(s).lost, 0);
	perfring_session_free(s);
	free(w.num);
}
