/* SPDX-License-Identifier: MIT */
/* The reliability contract on the real kernel: R1 (one parse of a ring at a
 * time, from a callback or another thread), R5 (free disables first) and R7
 * (free inside a callback). R6 lives with each adapter's tests. */
#include "fakeloop.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 1000

static void need_two_cpus(void)
{
	if (kutil_ncpu_online() < 2)
		cr_skip_test("needs CPUs 0 and 1 online");
}

/* A started getpid session on a child that writes n records on CPU 1. */
static struct perfring_session *fed(long n, struct kcount *k, struct perfring_event **ev)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct kpinned p = { 1, n };
	struct perfring_session *s;
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, k, &s, ev), s);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	return s;
}

enum form { F_CPU, F_CPU_N, F_ALL, F_DURATION, F_NEXT, F_PULL, F_COMMIT, F__N };

struct reenter {
	struct perfring_session *s;
	enum form form;
	struct kcount k;
	int inner[F__N];        /* what the inner call returned, last time */
	int calls;
};

static int inner_parse(struct perfring_session *s, enum form f)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	struct perfring_item it[4];

	switch (f) {
	case F_CPU: return perfring_session_parse_for_cpu(s, 1);
	case F_CPU_N: return perfring_session_parse_for_cpu_n(s, 1, 10, NULL);
	case F_ALL: return perfring_session_parse_all(s);
	case F_DURATION: return perfring_session_parse_for_duration(s, 1000000);
	case F_NEXT: return perfring_cpu_next(s, 1, &smp, &rec);
	case F_PULL: return perfring_cpu_pull(s, 1, it, 4);
	default: return perfring_cpu_commit(s, 1);
	}
}

static int reentering(const struct perfring_sample *smp, void *ctx)
{
	struct reenter *r = ctx;

	r->inner[r->form] = inner_parse(r->s, r->form);
	r->calls++;
	return kutil_count_cb(smp, &r->k);
}

/* R1: a callback that parses its own CPU again, in every form, from inside
 * each outer form: -EBUSY, and every record exactly once, in time order. */
Test(promises, reentry_from_a_callback_is_ebusy_for_every_form, .timeout = 60)
{
	struct perfring_event *ev;
	struct kcount k0 = { 0 };

	need_two_cpus();
	for (int outer = F_CPU; outer <= F_DURATION; outer++) {
		for (int f = 0; f < F__N; f++) {
			struct reenter r = { .form = (enum form)f };
			int n;

			r.s = fed(N, &k0, &ev);
			perfring_event_set_callback(ev, reentering, &r);
			if (outer == F_CPU_N)
				while ((n = perfring_session_parse_for_cpu_n(r.s, 1, 100, NULL)) > 0)
					;
			else
				n = inner_parse(r.s, (enum form)outer);
			cr_assert_geq(n, 0, "outer form %d: %d", outer, n);
			perfring_session_parse_all(r.s); /* nothing left: no re-entry */
			cr_expect_eq(r.k.n, N, "outer %d, inner %d: %llu samples of %d", outer, f,
				     (unsigned long long)r.k.n, N);
			cr_expect_eq(r.k.out_of_order, 0, "outer %d, inner %d: time went back", outer,
				     f);
			cr_expect_eq(r.inner[f], -EBUSY, "outer %d, inner %d returned %d", outer, f,
				     r.inner[f]);
			cr_expect_eq(r.calls, N);
			perfring_session_free(r.s);
		}
	}
}

/* The same with a producer still writing: the outer call returns. */
static int produce_on_1(void *arg)
{
	struct kpinned p = { 1, (long)(intptr_t)arg };

	return kutil_pinned_getpid(&p);
}

Test(promises, reentry_with_a_producer_running_returns, .timeout = 60)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct reenter r = { .form = F_CPU };
	struct perfring_event *ev;
	struct kchild c;
	uint64_t lost;

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, produce_on_1, (void *)(intptr_t)300000), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &r.k, &r.s, &ev), r.s);
	perfring_event_set_callback(ev, reentering, &r);
	KCHECK(perfring_session_start(r.s), r.s);
	kutil_child_go(&c);
	while (!kill(c.pid, 0) && waitpid(c.pid, NULL, WNOHANG) == 0)
		cr_assert_geq(perfring_session_parse_for_cpu(r.s, 1), 0);
	while (perfring_session_parse_for_cpu(r.s, 1) > 0)
		;
	lost = kutil_stats(r.s).lost;
	cr_expect_eq(r.k.out_of_order, 0, "a record came twice or out of order");
	cr_expect_eq(r.inner[F_CPU], -EBUSY);
	/* Drops the kernel has not reported yet are R4's; never more than made. */
	cr_expect_leq(r.k.n + lost, 300000, "%llu delivered + %llu lost",
		      (unsigned long long)r.k.n, (unsigned long long)lost);
	cr_expect_gt(r.k.n, 16384, "the parse kept up with only a ring's worth");
	perfring_session_free(r.s);
}

/* R1 across threads: two threads parse CPU 1 at once; one of them at a time
 * delivers, the other gets -EBUSY, and every record comes exactly once. */
struct racer {
	struct perfring_session *s;
	volatile int *stop;
	long busy, calls;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	int n;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		n = perfring_session_parse_for_cpu(r->s, 1);
		r->calls++;
		r->busy += n == -EBUSY;
		cr_assert(n >= 0 || n == -EBUSY, "parse_for_cpu: %d", n);
	}
	return NULL;
}

Test(promises, two_threads_on_one_cpu_deliver_exactly_once, .timeout = 60)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	volatile int stop = 0;
	struct racer a, b;
	pthread_t ta, tb;
	struct kchild c;
	uint64_t lost;

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, produce_on_1, (void *)(intptr_t)400000), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	a = (struct racer){ s, &stop, 0, 0 };
	b = a;
	pthread_create(&ta, NULL, race, &a);
	pthread_create(&tb, NULL, race, &b);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	while (perfring_session_parse_for_cpu(s, 1) > 0)
		;
	lost = kutil_stats(s).lost;
	cr_expect_eq(k.out_of_order, 0, "a record came twice or out of order");
	cr_expect_eq(kutil_stats(s).corrupt, 0);
	cr_expect_leq(k.n + lost, 400000, "%llu delivered + %llu lost", (unsigned long long)k.n,
		      (unsigned long long)lost);
	cr_expect_gt(k.n, 16384, "the racers kept up with only a ring's worth");
	cr_log_info("calls %ld + %ld, -EBUSY %ld + %ld", a.calls, b.calls, a.busy, b.busy);
	perfring_session_free(s);
}

/* R1: a pull batch holds its ring against other threads until its commit;
 * a parse by the thread that pulled commits the batch, as it always did. */
static void *parse_cpu1(void *arg)
{
	struct perfring_session *s = arg;
	static int r[4];
	struct perfring_sample smp;
	struct perfring_record rec;
	struct perfring_item it[4];

	r[0] = perfring_session_parse_for_cpu(s, 1);
	r[1] = perfring_session_parse_all(s);
	r[2] = perfring_cpu_next(s, 1, &smp, &rec);
	r[3] = perfring_cpu_pull(s, 1, it, 4);
	return r;
}

Test(promises, a_pull_batch_holds_its_ring_until_commit)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	struct perfring_session *s;
	struct kcount k = { 0 };
	pthread_t t;
	int *r;

	need_two_cpus();
	s = fed(N, &k, NULL);
	cr_assert_eq(perfring_cpu_next(s, 1, &smp, &rec), PERFRING_NEXT_SAMPLE);
	pthread_create(&t, NULL, parse_cpu1, s);
	pthread_join(t, (void **)&r);
	cr_assert_eq(r[0], -EBUSY, "parse_for_cpu from another thread: %d", r[0]);
	cr_assert_eq(r[1], -EBUSY, "parse_all from another thread: %d", r[1]);
	cr_assert_eq(r[2], -EBUSY, "cpu_next from another thread: %d", r[2]);
	cr_assert_eq(r[3], -EBUSY, "cpu_pull from another thread: %d", r[3]);
	cr_assert_eq(k.n, 0, "nothing delivered by the refused parses");
	cr_assert_eq(perfring_session_parse_for_cpu(s, 1), N - 1, "ours commits the batch");
	perfring_session_free(s);
}

/* The pull form's empty next needs no commit to see later records. */
Test(promises, an_empty_next_sees_later_records_without_a_commit)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	struct perfring_session *s;
	struct kpinned p = { 1, 5 };
	struct kchild c;
	struct kcount k = { 0 };
	int got = 0;

	need_two_cpus();
	s = fed(0, &k, NULL);
	cr_assert_eq(perfring_cpu_next(s, 1, &smp, &rec), 0, "empty");
	cr_assert_eq(perfring_session_parse_for_cpu(s, 1), 0, "an empty next holds nothing");
	perfring_session_free(s);
	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	{
		struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };

		KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, NULL), s);
	}
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_cpu_next(s, 1, &smp, &rec), 0);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	while (perfring_cpu_next(s, 1, &smp, &rec) > 0)
		got++;
	cr_assert_eq(got, 5, "the next after an empty one sees what came since");
	cr_assert_eq(perfring_cpu_commit(s, 1), 0);
	perfring_session_free(s);
}

/* R7: free inside a callback, from every parse form. */
struct freer {
	struct perfring_session *s;
	int seen;
};

static int free_here(const struct perfring_sample *smp, void *ctx)
{
	struct freer *f = ctx;

	if (++f->seen == 10)
		perfring_session_free(f->s);
	return 0;
}

Test(promises, free_inside_a_callback_is_deferred_to_the_parse_end, .timeout = 30)
{
	struct perfring_event *ev;
	struct kcount k = { 0 };

	need_two_cpus();
	for (int outer = F_CPU; outer <= F_DURATION; outer++) {
		struct freer f = { 0 };
		int n;

		f.s = fed(N, &k, &ev);
		perfring_event_set_callback(ev, free_here, &f);
		n = inner_parse(f.s, (enum form)outer);
		cr_expect_eq(n, -ECANCELED, "form %d returned %d", outer, n);
		cr_expect_eq(f.seen, 10, "form %d: %d callbacks: none after the free", outer,
			     f.seen);
		/* f.s is gone: ASan reports any use of it. */
	}
}

/* R5: a forked child holding the fds after the parent's free keeps nothing
 * counting: the ring the child still maps stays where it was. */
Test(promises, free_disables_before_closing)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .cpus = (int[]){ 0 },
				   .cpu_cnt = 1 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	const struct perfring_cpu_fd *fds;
	int to_child[2], to_parent[2], st;
	uint64_t head0, head1;
	char b;
	pid_t pid;

	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_session_fds(s, &fds), 1);
	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(pipe(to_parent), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* The child maps the ring again through its copy of the fd. */
		struct perf_event_mmap_page *m = mmap(NULL, 9 * 4096, PROT_READ, MAP_SHARED,
						      fds[0].fd, 0);

		/* Mapped before the parent frees: its unmap must not be the last. */
		if (m == MAP_FAILED || write(to_parent[1], "m", 1) != 1 ||
		    read(to_child[0], &b, 1) != 1)
			_exit(2);
		head0 = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		if (write(to_parent[1], &head0, sizeof(head0)) != sizeof(head0) ||
		    read(to_child[0], &b, 1) != 1)
			_exit(3);
		head1 = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		_exit(head1 == head0 ? 0 : 1);
	}
	kutil_pin(0);
	cr_assert_eq(read(to_parent[0], &b, 1), 1, "the child mapped the ring");
	perfring_session_free(s);
	cr_assert_eq(write(to_child[1], "x", 1), 1);
	cr_assert_eq(read(to_parent[0], &head0, sizeof(head0)), sizeof(head0));
	kutil_getpid_n(1000); /* the child's copy would count these if still enabled */
	cr_assert_eq(write(to_child[1], "x", 1), 1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "child died");
	cr_assert_eq(WEXITSTATUS(st), 0, "the freed session's event still wrote records");
}

/* R2: pid mode follows the process, not its first thread. The child's main
 * thread exits at once (every leader fd reports HUP) while another thread
 * writes 5,000 records over a second. */
#define R2_N 5000

static struct perfring_session *leader_exits(struct perfring_opts *o, struct kcount *k,
					     struct kchild *c)
{
	static struct kleader l = { R2_N, 1000, 0 };
	struct perfring_session *s;

	cr_assert_eq(kutil_leader_start(c, &l), 0);
	o->pid = c->pid;
	/* Only the worker's calls: a sanitizer runtime makes some of its own. */
	KCHECK(kutil_getpid_session(o, l.worker, k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(c);
	return s;
}

/* The session's own wait returns at the process's end, not before, with
 * every record: the reactor's (wakeup mode) and the polling one. */
static void wait_follows_the_process(struct perfring_opts *o)
{
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct kchild c;
	uint64_t t0;
	int n;

	s = leader_exits(o, &k, &c);
	t0 = kutil_now_ns();
	n = perfring_session_parse_for_duration(s, 10000000000ull);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_expect_eq(n, R2_N, "parse_for_duration gave %d", n);
	cr_expect_eq(k.n, R2_N, "%llu of %d records", (unsigned long long)k.n, R2_N);
	cr_expect_gt(kutil_now_ns() - t0, 500000000ull, "it returned before the process exited");
	cr_expect_lt(kutil_now_ns() - t0, 5000000000ull, "it did not return at the process's end");
	cr_expect_eq(kutil_stats(s).hup, 1);
	perfring_session_free(s);
}

Test(promises, pid_mode_wait_follows_the_process_past_its_main_thread, .timeout = 30)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };

	wait_follows_the_process(&o);
}

Test(promises, pid_mode_polling_wait_ends_with_the_process, .timeout = 30)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };

	wait_follows_the_process(&o);
}

static void count_error(int cpu, int err, void *ctx)
{
	int *e = ctx;

	if (err == -EPIPE)
		(*e)++;
}

Test(promises, pid_mode_reactor_follows_the_process_past_its_main_thread, .timeout = 30)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .flush_ms = 20 };
	int ends = 0;
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = count_error, .ctx = &ends };
	struct fakeloop l = { 0 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct kchild c;
	size_t n;

	s = leader_exits(&o, &k, &c);
	n = perfring_session_fds(s, NULL);
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &l.r), 0);
	for (int i = 0; i < 1000 && ends < (int)n; i++) {
		fakeloop_poll(&l);
		usleep(10000);
		if (l.timer_ms) /* a loop's timer, due every pass here */
			perfring_reactor_on_timer(l.r);
	}
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_expect_eq(k.n, R2_N, "%llu of %d records", (unsigned long long)k.n, R2_N);
	cr_expect_eq(ends, (int)n, "the end reported once per CPU, after the process's");
	perfring_reactor_free(l.r);
	perfring_session_free(s);
}
