/* Level 2: per-CPU fds, parse_for_cpu and its budgeted and pull forms,
 * readiness, HUP, masking, and the reactor logic adapters share. */
#include "fakeloop.h"
#include "kutil.h"
#include "loop/reactor.h"

#include <criterion/criterion.h>
#include <sched.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 10000


static void need_two_cpus(void)
{
	if (kutil_ncpu_online() < 2)
		cr_skip_test("needs CPUs 0 and 1 online");
}

/* A started getpid session fed by a child pinned to `cpu` writing n records. */
static struct perfring_session *fed(struct perfring_opts *o, int cpu, long n, struct kcount *k)
{
	struct kpinned p = { cpu, n };
	struct perfring_session *s;
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	KCHECK(kutil_getpid_session(o, c.pid, k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	return s;
}

static int cpu_must_be_1(const struct perfring_sample *smp, void *ctx)
{
	cr_assert_eq(smp->cpu, 1);
	return kutil_count_cb(smp, ctx);
}

Test(level2, fds_sorted_and_one_per_cpu)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s;
	struct kcount k = { 0 };
	size_t n;

	KCHECK(kutil_getpid_session(&o, 0, &k, &s, NULL), s);
	KCHECK(perfring_session_add_software(s, PERFRING_SW_CONTEXT_SWITCHES, 1, NULL), s);
	cr_assert_eq(perfring_session_fds(s, &fds), 0, "no fds before start");
	KCHECK(perfring_session_start(s), s);
	n = perfring_session_fds(s, &fds);
	cr_assert_eq(n, (size_t)kutil_ncpu_online(), "two events on a CPU still share one fd");
	for (size_t i = 0; i < n; i++) {
		cr_assert(i == 0 || fds[i].cpu > fds[i - 1].cpu);
		cr_assert_eq(perfring_session_fd_for_cpu(s, fds[i].cpu), fds[i].fd);
	}
	cr_assert_eq(perfring_session_fd_for_cpu(s, 4000), -ENOENT);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 4000), -ENOENT);
	perfring_session_free(s);
}

Test(level2, masking_one_cpu_one_fd)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = (int[]){ 1 }, .cpu_cnt = 1 };
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s;
	struct kcount k = { 0 };

	need_two_cpus();
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_session_fds(s, &fds), 1);
	cr_assert_eq(fds[0].cpu, 1);
	cr_assert_eq(perfring_session_fd_for_cpu(s, 0), -ENOENT);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 0), -ENOENT);
	perfring_session_free(s);
}

Test(level2, parse_for_cpu_touches_only_that_ring)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct kcount k = { 0 };
	struct kchild c;
	struct kpinned p = { 1, N };

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, &ev), s);
	perfring_event_set_callback(ev, cpu_must_be_1, &k);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 0), 0);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 1), N);
	cr_assert_eq(k.per_cpu[1], N);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 1), 0, "drained to its head");
	perfring_session_free(s);
}

Test(level2, budget_delivers_exactly_and_says_when_done)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	bool more = true;
	int total = 0, calls = 0, n;

	need_two_cpus();
	s = fed(&o, 1, N, &k);
	while (more) {
		n = perfring_session_parse_for_cpu_n(s, 1, 64, &more);
		cr_assert_leq(n, 64);
		cr_assert(n == 64 || !more, "a short batch means the ring is drained");
		total += n;
		cr_assert_lt(++calls, N, "budgeted drain never ends");
	}
	cr_assert_eq(total, N);
	cr_assert_eq(k.n, N);
	cr_assert_geq(calls, N / 64);
	perfring_session_free(s);
}

/* Two sessions see the same records but time them separately, so compare
 * what the records carry: close(fd)'s payload, with a distinct fd each. */
struct seq { uint8_t raw[N][32]; int n; };

static int record_seq(const struct perfring_sample *smp, void *ctx)
{
	struct seq *q = ctx;

	cr_assert_leq(smp->raw_size, 32);
	if (q->n < N)
		memcpy(q->raw[q->n], smp->raw, smp->raw_size);
	q->n++;
	return 0;
}

static int pinned_closes(void *arg)
{
	(void)arg;
	if (kutil_pin(1))
		return 1;
	for (int i = 0; i < N; i++)
		close(1000000 + i);
	return 0;
}

static struct perfring_session *close_session(pid_t pid, struct seq *q)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .pid = pid };
	struct perfring_session *s;
	struct perfring_event *ev;

	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_close", &ev), s);
	/* Only the generator's closes, not the child's own pipe handling. */
	cr_assert_eq(perfring_event_set_filter(ev, "fd >= 1000000"), 0);
	perfring_event_set_callback(ev, record_seq, q);
	KCHECK(perfring_session_start(s), s);
	return s;
}

/* Two sessions watch the same stream: one pulls, one is pushed to. */
Test(level2, pull_form_matches_push_form)
{
	struct seq *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct perfring_session *push, *pull;
	struct perfring_sample smp;
	struct perfring_record rec;
	struct kchild c;
	int kind;

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, pinned_closes, NULL), 0);
	push = close_session(c.pid, a);
	pull = close_session(c.pid, NULL);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(perfring_session_parse_for_cpu(push, 1), N);
	while ((kind = perfring_cpu_next(pull, 1, &smp, &rec)) > 0) {
		cr_assert_eq(kind, PERFRING_NEXT_SAMPLE);
		cr_assert_eq(smp.cpu, 1);
		cr_assert_eq(smp.pid, (uint32_t)c.pid);
		record_seq(&smp, b);
	}
	cr_assert_eq(kind, 0);
	cr_assert_eq(perfring_cpu_commit(pull, 1), 0);
	cr_assert_eq(b->n, N);
	cr_assert_eq(a->n, N);
	cr_assert_eq(memcmp(a->raw, b->raw, sizeof(a->raw)), 0);
	cr_assert_neq(memcmp(a->raw[0], a->raw[1], sizeof(a->raw[0])), 0, "payloads differ");
	cr_assert_eq(perfring_session_parse_for_cpu(pull, 1), 0, "commit released them all");
	perfring_session_free(push);
	perfring_session_free(pull);
	free(a);
	free(b);
}

/* Children that each make one getpid call on CPU 1 when told, made before
 * the session so that its filter can name them: CPU 1 is shared, and any
 * other getpid there would be a readiness the test does not expect. */
struct one_shots {
	struct kchild c[3];
	int next;
};

static void one_shots_start(struct one_shots *o, char *filter, size_t len)
{
	static struct kpinned p = { 1, 1 };

	for (int i = 0; i < 3; i++)
		cr_assert_eq(kutil_child_start(&o->c[i], kutil_pinned_getpid, &p), 0);
	snprintf(filter, len, "common_pid == %d || common_pid == %d || common_pid == %d",
		 (int)o->c[0].pid, (int)o->c[1].pid, (int)o->c[2].pid);
	o->next = 0;
}

static int one_getpid_on_1(struct one_shots *o)
{
	struct kchild *c = &o->c[o->next++];

	kutil_child_go(c);
	return kutil_child_wait(c);
}

static int epoll_for(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	cr_assert_geq(ep, 0);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	return ep;
}

static int ready(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

/* Readiness is one-shot on perf fds (DESIGN.md): these assert exactly that. */
Test(level2, readiness_is_one_shot)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_events = 1 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct pollfd p = { .events = POLLIN };
	struct perfring_event *ev;
	struct one_shots shots;
	char filter[128];
	int early, late;

	need_two_cpus();
	one_shots_start(&shots, filter, sizeof(filter));
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, &ev), s);
	KCHECK(perfring_event_set_filter(ev, filter), s);
	KCHECK(perfring_session_start(s), s);
	p.fd = perfring_session_fd_for_cpu(s, 1);
	perfring_session_parse_for_cpu(s, 1);
	while (poll(&p, 1, 0) > 0)
		perfring_session_parse_for_cpu(s, 1);
	early = epoll_for(p.fd);
	cr_assert_eq(one_getpid_on_1(&shots), 0);
	cr_assert_eq(ready(early), 1, "an epoll set made before the record reports it");
	cr_assert_eq(ready(early), 0, "and only once");
	cr_assert_eq(one_getpid_on_1(&shots), 0);
	late = epoll_for(p.fd);
	cr_assert_eq(ready(late), 0, "a fresh epoll set misses a readiness that already happened");
	cr_assert_eq(ready(early), 0, "registering consumed it for everyone");
	cr_assert_gt(perfring_session_parse_for_cpu(s, 1), 0);
	cr_assert_eq(ready(early), 0, "no new records, no readiness after a drain");
	cr_assert_eq(one_getpid_on_1(&shots), 0);
	cr_assert_eq(poll(&p, 1, 0), 1, "poll(2) sees the new record");
	cr_assert(p.revents & POLLIN);
	close(early);
	close(late);
	perfring_session_free(s);
}

static int sleep_and_getpid(void *arg)
{
	usleep(20000);
	kutil_getpid_n((long)(intptr_t)arg);
	return 0;
}

struct errs { int calls, cpu, err; };

static void on_error(int cpu, int err, void *ctx)
{
	struct errs *e = ctx;

	e->calls++;
	e->cpu = cpu;
	e->err = err;
}

Test(level2, hup_after_exit_delivers_everything_then_unwatches)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct errs e = { 0 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error, .ctx = &e };
	struct fakeloop l = { 0 };
	struct perfring_session *s;
	struct perfring_cpu_stats st;
	const struct perfring_cpu_fd *fds;
	struct kcount k = { 0 };
	struct kchild c;
	size_t n;

	cr_assert_eq(kutil_child_start(&c, sleep_and_getpid, (void *)(intptr_t)1000), 0);
	o.pid = c.pid;
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &l.r), 0);
	n = perfring_session_fds(s, &fds);
	cr_assert_eq(l.watches, (int)n, "every slot watched at attach");
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(fakeloop_poll(&l), (int)n, "every fd ready after the task exited");
	for (size_t i = 0; i < n; i++) {
		cr_assert_not(l.watched[i], "CPU %d: unwatched after its HUP", fds[i].cpu);
		cr_assert_eq(perfring_session_cpu_stats(s, fds[i].cpu, &st), 0);
		cr_assert_eq(st.hup, 1);
		perfring_reactor_on_ready(l.r, i, POLLIN | POLLHUP);
	}
	cr_assert_eq(k.n, 1000, "every record still delivered");
	cr_assert_eq(e.calls, (int)n, "on_error once per CPU, even when called again");
	cr_assert_eq(e.err, -EPIPE);
	cr_assert_eq(fakeloop_poll(&l), 0, "nothing watched: nothing spins");
	perfring_reactor_free(l.r);
	cr_assert_eq(l.destroys, 1);
	perfring_session_free(s);
}

Test(level2, reactor_budget_continues_on_soon_turns)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .flush_ms = 50,
				   .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .budget = 100, .cpus = (int[]){ 1 },
					 .cpu_cnt = 1 };
	struct fakeloop l = { 0 };
	struct perfring_session *s;
	struct kcount k = { 0 };

	need_two_cpus();
	s = fed(&o, 1, 1000, &k);
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &l.r), 0);
	cr_assert_eq(l.watches, 1, "only opts.cpus is watched");
	cr_assert_eq(l.timer_ms, 50, "the flush timer: the session's flush_ms");
	cr_assert_eq(k.n, 100, "attach drains once, one budget");
	cr_assert(l.soon, "the rest is left for a soon turn");
	cr_assert_eq(fakeloop_soon_turns(&l, 100), 9, "nine more budgets, then no turn asked");
	cr_assert_eq(k.n, 1000);
	cr_assert_not(l.soon);
	perfring_reactor_on_timer(l.r);
	cr_assert_eq(l.timers, 2, "the timer is re-armed after each flush");
	perfring_reactor_free(l.r);
	cr_assert_eq(l.timer_ms, 0, "free disarms the timer");
	cr_assert_eq(l.unwatches, 1, "free stops every watch");
	cr_assert_eq(l.destroys, 1);
	perfring_session_free(s);
}

Test(level2, reactor_new_failures_call_destroy_once)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo) };
	struct perfring_loop_ops bad = fakeloop_ops;
	struct perfring_reactor *r = (void *)1;
	struct perfring_session *s;
	struct fakeloop l = { 0 };
	struct kcount k = { 0 };

	need_two_cpus();
	s = fed(&o, 1, 10, &k);
	lo.cpus = (int[]){ 0, 0 };
	lo.cpu_cnt = 2;
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &r), -EINVAL, "a CPU twice");
	cr_assert_null(r);
	cr_assert_eq(l.destroys, 1);
	cr_assert_eq(l.watches, 0);
	l = (struct fakeloop){ 0 };
	lo.cpus = (int[]){ 4000 };
	lo.cpu_cnt = 1;
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &l.r), -ENOENT);
	cr_assert_eq(l.destroys, 1);
	l = (struct fakeloop){ .fail_watch = 2 };
	cr_assert_eq(perfring_reactor_new(s, NULL, &fakeloop_ops, &l, &l.r), -EIO,
		     "the driver's error is returned");
	cr_assert_eq(l.destroys, 1);
	cr_assert_eq(l.unwatches, 1, "the slot watched before the failure is unwatched");
	cr_assert_eq(k.n, 0, "no callback ran");
	bad.timer = NULL;
	l = (struct fakeloop){ 0 };
	cr_assert_eq(perfring_reactor_new(s, NULL, &bad, &l, &l.r), -EINVAL);
	cr_assert_eq(l.destroys, 0, "unusable ops: nothing is called");
	lo = (struct perfring_loop_opts){ .sz = sizeof(lo), .flush_ms = PERFRING_FLUSH_NEVER };
	cr_assert_eq(perfring_reactor_new(s, &lo, &fakeloop_ops, &l, &l.r), 0);
	cr_assert_eq(l.timers, 0, "PERFRING_FLUSH_NEVER: no timer");
	cr_assert_eq(k.n, 10);
	perfring_reactor_free(l.r);
	perfring_session_free(s);
}

struct cancel_ctx { struct fakeloop *l; int seen; };

static int free_inside(const struct perfring_sample *smp, void *ctx)
{
	struct cancel_ctx *c = ctx;

	(void)smp;
	c->seen++;
	perfring_reactor_free(c->l->r);
	cr_assert_eq(c->l->destroys, 0, "destroy waits until the reactor call returns");
	perfring_reactor_free(c->l->r); /* a second free does nothing */
	return 0;
}

Test(level2, reactor_free_inside_callback_is_deferred)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct fakeloop l = { 0 };
	struct cancel_ctx cc = { &l, 0 };
	struct kcount k = { 0 };
	struct kpinned p = { 1, 50 };
	struct kchild c;

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &p), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, &ev), s);
	perfring_event_set_callback(ev, free_inside, &cc);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(perfring_reactor_new(s, NULL, &fakeloop_ops, &l, &l.r), 0);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	perfring_reactor_on_ready(l.r, 1, POLLIN);
	cr_assert_eq(cc.seen, 1, "no callback after the free");
	cr_assert_eq(l.destroys, 1, "destroyed once the call returned");
	cr_assert_eq(l.unwatches, 2, "every watch stopped");
	perfring_event_set_callback(ev, kutil_count_cb, &k);
	cr_assert_eq(perfring_session_parse_for_cpu(s, 1), 49, "the rest stays for a later parse");
	perfring_session_free(s);
}

/* n getpid calls from this thread, on CPU 1 (and it stays there). */
static void getpid_here_on_1(long n)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	while (n--)
		syscall(SYS_getpid);
}

Test(level2, slot_removed_and_put_back_while_attached_loses_nothing)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct fakeloop l = { 0 };
	struct perfring_session *s;
	struct kcount k = { 0 };

	need_two_cpus();
	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	getpid_here_on_1(300);
	cr_assert_eq(perfring_reactor_new(s, NULL, &fakeloop_ops, &l, &l.r), 0);
	cr_assert_eq(k.n, 300);
	for (int round = 0; round < 3; round++) {
		cr_assert_eq((getpid_here_on_1(200), 0), 0);
		cr_assert_eq(pr_reactor_slot(l.r, 1, false), 0);
		cr_assert_not(l.watched[1], "the slot is unwatched");
		cr_assert_eq(k.n, 500 + 400 * (uint64_t)round, "its ring was drained first");
		cr_assert_eq((getpid_here_on_1(200), 0), 0);
		cr_assert_eq(fakeloop_poll(&l), 0, "slot 0 has nothing");
		cr_assert_eq(pr_reactor_slot(l.r, 1, true), 0);
		cr_assert(l.watched[1]);
		cr_assert_eq(k.n, 700 + 400 * (uint64_t)round, "put back: drained at once");
	}
	perfring_reactor_free(l.r);
	perfring_session_free(s);
}

/* The batch pull in a custom epoll loop, as a runtime binding would run it:
 * every ring fd and the generator's pidfd in one epoll set (made before any
 * record), batches of 64 committed one by one, each ring pulled until a
 * batch comes back short (readiness is one-shot), and a last pass over
 * every ring once the generator has exited. Pulls with and without
 * PERFRING_PULL_PRESENT_ONLY alternate. */
struct pulled {
	struct perfring_event *ev;
	pid_t pid;
	uint64_t n, pulls, full, last_time[64];
};

/* Every other pull with PERFRING_PULL_PRESENT_ONLY: the fields read below
 * are in every sample. */
static void pull_ring(struct perfring_session *s, int cpu, struct pulled *p)
{
	static const struct perfring_pull_opts present = { sizeof(present),
							   PERFRING_PULL_PRESENT_ONLY };
	struct perfring_item it[64];
	int n, i;

	do {
		n = perfring_cpu_pull_opts(s, cpu, it, 64, p->pulls % 2 ? &present : NULL);
		cr_assert_geq(n, 0, "%s", perfring_session_last_error(s));
		cr_assert_leq(n, 64);
		p->pulls++;
		p->full += n == 64;
		for (i = 0; i < n; i++) {
			const struct perfring_sample *smp = &it[i].u.sample;

			cr_assert_eq(it[i].kind, PERFRING_NEXT_SAMPLE);
			cr_assert_eq(smp->event, p->ev);
			cr_assert_eq(smp->pid, (uint32_t)p->pid);
			cr_assert_eq(smp->cpu, cpu);
			cr_assert_geq(smp->time, p->last_time[cpu & 63], "time goes on");
			p->last_time[cpu & 63] = smp->time;
		}
		p->n += (uint64_t)n;
		cr_assert_eq(perfring_cpu_commit(s, cpu), 0);
	} while (n == 64);
}

static int pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		cr_skip_test("pidfd_open: %s", strerror(errno));
	return fd;
}

Test(level2, batch_pull_in_a_custom_epoll_loop_is_exact)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct epoll_event ev = { .events = EPOLLIN }, got[8];
	const struct perfring_cpu_fd *fds;
	struct kpinned kp = { 1, N };
	struct perfring_session *s;
	struct pulled p = { 0 };
	struct kcount k = { 0 };
	struct perfring_cpu_stats st;
	struct kchild c;
	bool exited = false;
	size_t nfds, i;
	int ep, pidfd, n, j;

	need_two_cpus();
	cr_assert_eq(kutil_child_start(&c, kutil_pinned_getpid, &kp), 0);
	p.pid = c.pid;
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, &p.ev), s);
	KCHECK(perfring_session_start(s), s);
	nfds = perfring_session_fds(s, &fds);
	cr_assert_geq(ep = epoll_create1(EPOLL_CLOEXEC), 0);
	for (i = 0; i < nfds; i++) {
		ev.data.u32 = (uint32_t)i;
		cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i].fd, &ev), 0);
	}
	pidfd = pidfd_of(c.pid);
	ev.data.u32 = UINT32_MAX;
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev), 0);
	kutil_child_go(&c);
	while (!exited) {
		/* 30 s: only a lost wakeup, never a slow machine, takes that long. */
		n = epoll_wait(ep, got, 8, 30000);
		cr_assert_gt(n, 0, "no wakeup in 30 s with %llu of %d records pulled",
			     (unsigned long long)p.n, N);
		for (j = 0; j < n; j++) {
			if (got[j].data.u32 == UINT32_MAX)
				exited = true;
			else
				pull_ring(s, fds[got[j].data.u32].cpu, &p);
		}
	}
	cr_assert_eq(kutil_child_wait(&c), 0);
	for (i = 0; i < nfds; i++)
		pull_ring(s, fds[i].cpu, &p);
	KCOUNT_EQ(p.n, N);
	cr_assert_eq(k.n, 0, "no callback ran");
	for (i = 0, st.lost = 0; i < nfds; i++) {
		struct perfring_cpu_stats one;

		cr_assert_eq(perfring_session_cpu_stats(s, fds[i].cpu, &one), 0);
		st.lost += one.lost;
	}
	cr_assert_eq(st.lost, 0);
	cr_assert_geq(p.full, 1, "some batches were full: %llu of %llu pulls",
		      (unsigned long long)p.full, (unsigned long long)p.pulls);
	close(pidfd);
	close(ep);
	perfring_session_free(s);
}
