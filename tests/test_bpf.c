/* SPDX-License-Identifier: MIT */
/* BPF output on the real kernel with a real BPF program (tests/kbpf.c): on
 * sys_enter_getpid, for this process only, a 24-byte record per call. Exact
 * counts, intact payloads, times, the merge with the tracepoint itself, a
 * CPU subset, pid mode, several maps, losses, the errors, and what free
 * leaves in the map. */
#include "kbpf.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 10000
#define PAGES 256 /* 10,000 records of 72 bytes before any read */

/* What every test checks at its end: no fd and no BPF object left. */
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
	cr_expect_eq(left, 0, "%d of %d BPF objects (programs, maps) outlived the test", left,
		     nids);
}

TestSuite(bpf, .init = setup, .fini = teardown, .timeout = 60);

static void remember(int fd)
{
	if (fd >= 0 && nids < 8)
		ids[nids++] = kbpf_id(fd);
}

/* The program for this process, its objects remembered for teardown. */
static void bpf_open(struct kbpf *b, pid_t tgid, uint32_t entries)
{
	char why[1024] = "";
	int err = kbpf_open(b, tgid, entries, why, sizeof(why));

	if (err == -EPERM || err == -EACCES || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	/* The teardown's check can fail: the ids name these objects now. */
	cr_assert(kbpf_prog_exists(kbpf_id(b->prog)) && kbpf_map_exists(kbpf_id(b->out_map)));
	remember(b->prog);
	remember(b->out_map);
	remember(b->res_map);
}

static struct perfring_session *bpf_session(struct perfring_opts *o, struct kbpf *b,
					    struct kbpf_check *c, struct perfring_event **ev)
{
	struct perfring_session *s;

	KCHECK(perfring_session_new(o, &s), NULL);
	KCHECK(perfring_session_add_bpf_output(s, b->out_map, ev), s);
	KCHECK(perfring_event_set_callback(*ev, kbpf_check_cb, c), s);
	return s;
}

static void calls(struct kbpf_check *c, long n)
{
	c->t0 = kutil_now_ns();
	kutil_getpid_n(n);
	c->t1 = kutil_now_ns();
}

static void expect_exact(const struct kbpf_check *c, uint64_t want)
{
	cr_expect_eq(c->n, want, "%llu samples, want %llu", (unsigned long long)c->n,
		     (unsigned long long)want);
	cr_expect_eq(kbpf_check_bad(c), 0, "%llu bad samples (size %llu, magic %llu, task %llu, "
		     "time %llu); first: %s", (unsigned long long)kbpf_check_bad(c),
		     (unsigned long long)c->bad_size, (unsigned long long)c->bad_magic,
		     (unsigned long long)c->bad_task, (unsigned long long)c->bad_time,
		     c->first_bad);
	cr_expect_eq(c->raw_size, 28, "raw_size %u: 24 bytes arrive as round_up(24 + 4, 8) - 4",
		     c->raw_size);
}

static void self_check(struct kbpf_check *c)
{
	*c = (struct kbpf_check){ .tgid = (uint32_t)getpid(), .tid = (uint32_t)syscall(SYS_gettid) };
}

/* The usual test: this process's program, a session on it, maybe started. */
struct fx {
	struct kbpf b;
	struct kbpf_check c;
	struct perfring_session *s;
	struct perfring_event *ev;
};

static void fx_open(struct fx *f, struct perfring_opts *o, bool start)
{
	self_check(&f->c);
	bpf_open(&f->b, getpid(), 0);
	f->s = bpf_session(o, &f->b, &f->c, &f->ev);
	if (start)
		KCHECK(perfring_session_start(f->s), f->s);
}

static void fx_close(struct fx *f)
{
	perfring_session_free(f->s);
	kbpf_close(&f->b);
}

Test(bpf, parse_all_exact)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES };
	struct fx f;

	fx_open(&f, &o, true);
	calls(&f.c, N);
	cr_assert_eq(perfring_session_parse_all(f.s), N);
	expect_exact(&f.c, N);
	cr_expect_eq(f.c.out_of_order, 0);
	cr_expect_eq(kutil_stats(f.s).lost, 0);
	cr_expect_eq(kbpf_result(&f.b, 1), 0, "no output call failed");
	fx_close(&f);
}

Test(bpf, parse_for_cpu_exact)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES, .wakeup_watermark = 4096 };
	const struct perfring_cpu_fd *fds;
	struct fx f;
	size_t i, n;
	int got = 0, r;

	fx_open(&f, &o, true);
	calls(&f.c, N);
	n = perfring_session_fds(f.s, &fds);
	for (i = 0; i < n; i++) {
		r = perfring_session_parse_for_cpu(f.s, fds[i].cpu);
		cr_assert_geq(r, 0, "%s", perfring_session_last_error(f.s));
		cr_expect_eq((uint64_t)r, f.c.per_cpu[fds[i].cpu]);
		got += r;
	}
	cr_expect_eq(got, N);
	expect_exact(&f.c, N);
	fx_close(&f);
}

/* One callback for both events: the stream in merged order. */
struct pair { struct perfring_event *bpf; uint64_t n, last, bad_order, bad_pair, tp, bo;
	      char *seq; uint32_t *tid; };

static int pair_cb(const struct perfring_sample *s, void *ctx)
{
	struct pair *p = ctx;

	if (p->n < 2 * N + 2) {
		p->seq[p->n] = s->event == p->bpf ? 'B' : 'T';
		p->tid[p->n] = s->tid;
	}
	if (s->time < p->last)
		p->bad_order++;
	p->last = s->time;
	p->n++;
	return 0;
}

Test(bpf, merged_with_tracepoint)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 2 * PAGES };
	struct perfring_event *tp, *ev;
	struct perfring_session *s;
	struct pair p = { 0 };
	struct fx f;
	char filter[64];
	uint64_t i;
	int n;

	fx_open(&f, &o, false);
	s = f.s;
	ev = p.bpf = f.ev;
	p.seq = calloc(2 * N + 2, 1);
	p.tid = calloc(2 * N + 2, sizeof(*p.tid));
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &tp), s);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	KCHECK(perfring_event_set_filter(tp, filter), s);
	KCHECK(perfring_event_set_callback(tp, pair_cb, &p), s);
	KCHECK(perfring_event_set_callback(ev, pair_cb, &p), s);
	KCHECK(perfring_session_start(s), s);
	calls(&f.c, N);
	n = perfring_session_parse_all(s);
	cr_assert_eq(n, 2 * N, "parse_all: %d (%s); first %c, output result %lld, lost %llu",
		     n, perfring_session_last_error(s), p.seq[0], (long long)kbpf_result(&f.b, 0),
		     (unsigned long long)kutil_stats(s).lost);
	cr_expect_eq(p.n, 2 * N);
	cr_expect_eq(p.bad_order, 0, "%llu samples older than the one before",
		     (unsigned long long)p.bad_order);
	/* The program runs before the tracepoint writes its own sample. */
	for (i = 0; i < 2 * N; i += 2)
		if (p.seq[i] != 'B' || p.seq[i + 1] != 'T' || p.tid[i] != p.tid[i + 1])
			p.bad_pair++;
	cr_expect_eq(p.bad_pair, 0, "%llu of %d calls without their BPF sample next to the "
		     "tracepoint's", (unsigned long long)p.bad_pair, N);
	free(p.seq);
	free(p.tid);
	fx_close(&f);
}

static void pin_or_skip(int cpu)
{
	if (kutil_ncpu_online() < 2)
		cr_skip_test("needs CPUs 0 and 1 online");
	cr_assert_eq(kutil_pin(cpu), 0);
}

static void unpin(void)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

/* Only CPU 0 watched: on CPU 1 the output has no entry and fails. */
Test(bpf, cpu_subset)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = (int[]){ 0 }, .cpu_cnt = 1 };
	struct fx f;

	pin_or_skip(1);
	fx_open(&f, &o, true);
	calls(&f.c, 100);
	cr_expect_eq(perfring_session_parse_all(f.s), 0);
	cr_expect_eq(f.c.n, 0, "no sample from an unwatched CPU");
	cr_expect_eq(kbpf_result(&f.b, 0), -ENOENT, "output result %lld",
		     (long long)kbpf_result(&f.b, 0));
	cr_expect_eq(kbpf_result(&f.b, 1), 100);
	cr_assert_eq(kutil_pin(0), 0);
	calls(&f.c, 100);
	cr_expect_eq(perfring_session_parse_all(f.s), 100);
	expect_exact(&f.c, 100);
	cr_expect_eq(kbpf_result(&f.b, 0), 0);
	unpin();
	fx_close(&f);
}

static int child_calls(void *arg)
{
	kutil_getpid_n(*(long *)arg);
	return 0;
}

static void pid_mode(bool enable_on_exec)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES,
				   .enable_on_exec = enable_on_exec };
	struct perfring_event *ev;
	struct perfring_session *s;
	struct kbpf_check c = { 0 };
	struct kchild ch;
	struct kbpf b;
	long n = N;

	cr_assert_eq(kutil_child_start(&ch, child_calls, &n), 0);
	c.tgid = (uint32_t)ch.pid;
	c.tid = (uint32_t)ch.pid;
	o.pid = ch.pid;
	bpf_open(&b, ch.pid, 0);
	s = bpf_session(&o, &b, &c, &ev);
	KCHECK(perfring_session_start(s), s);
	c.t0 = kutil_now_ns();
	kutil_child_go(&ch);
	cr_assert_eq(kutil_child_wait(&ch), 0);
	c.t1 = kutil_now_ns();
	cr_assert_eq(perfring_session_parse_all(s), N);
	expect_exact(&c, N);
	perfring_session_free(s);
	kbpf_close(&b);
}

Test(bpf, pid_mode) { pid_mode(false); }

/* A CPU-wide event is never enabled by an exec: with enable_on_exec the
 * session enables it at start, and the child here never execs. */
Test(bpf, pid_mode_enable_on_exec) { pid_mode(true); }

Test(bpf, two_maps)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES };
	struct perfring_event *ev1, *ev2;
	struct perfring_session *s;
	struct kbpf_check c1, c2;
	struct kbpf b1, b2;

	self_check(&c1);
	self_check(&c2);
	bpf_open(&b1, getpid(), 0);
	bpf_open(&b2, getpid(), 0);
	s = bpf_session(&o, &b1, &c1, &ev1);
	KCHECK(perfring_session_add_bpf_output(s, b2.out_map, &ev2), s);
	KCHECK(perfring_event_set_callback(ev2, kbpf_check_cb, &c2), s);
	cr_assert_neq(ev1, ev2);
	KCHECK(perfring_session_start(s), s);
	calls(&c1, 1000);
	c2.t0 = c1.t0;
	c2.t1 = c1.t1;
	cr_assert_eq(perfring_session_parse_all(s), 2000);
	expect_exact(&c1, 1000);
	expect_exact(&c2, 1000);
	perfring_session_free(s);
	kbpf_close(&b1);
	kbpf_close(&b2);
}

/* A one-page ring holds 56 of these records: the rest are counted lost,
 * and after stop, delivered + lost = written exactly (R4). */
Test(bpf, losses_add_up)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 1, .cpus = (int[]){ 0 },
				   .cpu_cnt = 1 };
	struct fx f;
	uint64_t lost;

	if (kutil_pin(0))
		cr_skip_test("cannot run on CPU 0");
	fx_open(&f, &o, true);
	calls(&f.c, 1000);
	KCHECK(perfring_session_stop(f.s), f.s);
	cr_assert_geq(perfring_session_parse_all(f.s), 0);
	lost = kutil_stats(f.s).lost;
	cr_expect_eq(f.c.n + lost, 1000, "%llu delivered + %llu lost",
		     (unsigned long long)f.c.n, (unsigned long long)lost);
	cr_expect_gt(lost, 0);
	cr_expect_eq(kbpf_check_bad(&f.c), 0, "%s", f.c.first_bad);
	unpin();
	fx_close(&f);
}

/* ------------------------------------------------------------ errors */

static void expect_add_err(int fd, int want, const char *says)
{
	struct perfring_session *s;
	struct perfring_event *ev = NULL;
	int err;

	KCHECK(perfring_session_new(NULL, &s), NULL);
	err = perfring_session_add_bpf_output(s, fd, &ev);
	cr_expect_eq(err, want, "fd %d: %d (%s)", fd, err, perfring_session_last_error(s));
	cr_expect(strstr(perfring_session_last_error(s), says), "sentence \"%s\" lacks \"%s\"",
		  perfring_session_last_error(s), says);
	cr_expect_null(ev);
	perfring_session_free(s);
}

Test(bpf, error_not_a_map)
{
	struct kbpf b;
	int efd = eventfd(0, EFD_CLOEXEC);

	cr_assert_geq(efd, 0);
	expect_add_err(efd, -EBADF, "is not a BPF map");
	close(efd);
	expect_add_err(efd, -EBADF, "not an open file descriptor");
	expect_add_err(-1, -EBADF, "not an open file descriptor");
	bpf_open(&b, getpid(), 0);
	expect_add_err(b.prog, -EBADF, "not a map");
	kbpf_close(&b);
}

Test(bpf, error_null_session)
{
	struct perfring_event *ev = NULL;

	cr_expect_eq(perfring_session_add_bpf_output(NULL, 0, &ev), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(NULL), "NULL"), "%s",
		  perfring_session_last_error(NULL));
	cr_expect_null(ev);
}

Test(bpf, error_array_map)
{
	int fd = kbpf_array_map(4);

	if (fd < 0 && (errno == EPERM || errno == ENOSYS))
		cr_skip_test("BPF unavailable");
	cr_assert_geq(fd, 0);
	remember(fd);
	expect_add_err(fd, -EINVAL, "not BPF_MAP_TYPE_PERF_EVENT_ARRAY");
	close(fd);
}

Test(bpf, error_map_too_small)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = (int[]){ 1 }, .cpu_cnt = 1 };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct kbpf_check c;
	struct kbpf b;
	const char *why;

	if (kutil_ncpu_online() < 2)
		cr_skip_test("needs CPU 1 online");
	self_check(&c);
	bpf_open(&b, getpid(), 1);
	s = bpf_session(&o, &b, &c, &ev);
	cr_assert_eq(perfring_session_start(s), -E2BIG);
	why = perfring_session_last_error(s);
	cr_expect(strstr(why, "max_entries 1") && strstr(why, "highest watched CPU is 1"),
		  "sentence: %s", why);
	cr_expect_eq(perfring_session_fds(s, NULL), 0, "nothing opened");
	perfring_session_free(s);
	kbpf_close(&b);
}

/* A PERF_EVENT_ARRAY of the possible CPUs made here, with map_flags. */
static int event_array(uint32_t map_flags)
{
	union bpf_attr a;
	int fd, n = kbpf_possible_cpus();

	cr_assert_gt(n, 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = (uint32_t)n;
	a.map_flags = map_flags;
	fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0 && (errno == EPERM || errno == ENOSYS))
		cr_skip_test("BPF unavailable: %s", strerror(errno));
	cr_assert_geq(fd, 0, "BPF_MAP_CREATE: %s", strerror(errno));
	remember(fd);
	return fd;
}

static int freeze(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	return (int)syscall(SYS_bpf, BPF_MAP_FREEZE, &a, sizeof(a));
}

/* The entries are written at start: a map user space cannot write is
 * refused when it is added, with why, not at start with a bare EPERM. */
Test(bpf, error_read_only_map)
{
	int fd = event_array(BPF_F_RDONLY);

	expect_add_err(fd, -EPERM, "is read-only to user space");
	expect_add_err(fd, -EPERM, "BPF_F_RDONLY");
	close(fd);
}

Test(bpf, error_frozen_map)
{
	int fd = event_array(0);

	cr_assert_eq(freeze(fd), 0, "BPF_MAP_FREEZE: %s", strerror(errno));
	expect_add_err(fd, -EPERM, "is frozen (BPF_MAP_FREEZE)");
	close(fd);
}

/* Frozen after the add: start's BPF_MAP_UPDATE_ELEM says why it failed. */
Test(bpf, error_frozen_before_start)
{
	struct perfring_session *s;
	struct perfring_event *ev;
	const char *why;
	int fd = event_array(0);

	KCHECK(perfring_session_new(NULL, &s), NULL);
	KCHECK(perfring_session_add_bpf_output(s, fd, &ev), s);
	cr_assert_eq(freeze(fd), 0, "BPF_MAP_FREEZE: %s", strerror(errno));
	cr_expect_eq(perfring_session_start(s), -EPERM);
	why = perfring_session_last_error(s);
	cr_expect(strstr(why, "BPF_MAP_UPDATE_ELEM") && strstr(why, "read-only to user space"),
		  "sentence: %s", why);
	perfring_session_free(s);
	close(fd);
}

/* A second add of the map: after start, or before it on the same map. */
static void second_add(bool start, int want, const char *says)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_event *again = NULL;
	struct fx f;

	fx_open(&f, &o, start);
	cr_expect_eq(perfring_session_add_bpf_output(f.s, f.b.out_map, &again), want);
	cr_expect(strstr(perfring_session_last_error(f.s), says), "%s",
		  perfring_session_last_error(f.s));
	cr_expect_null(again);
	fx_close(&f);
}

Test(bpf, error_same_map_twice) { second_add(false, -EEXIST, "already reads map"); }
Test(bpf, error_after_start) { second_add(true, -EBUSY, "before perfring_session_start"); }

/* ------------------------------------------------------- what free leaves */

/* The session watches CPU 0; the test writes key 1 itself (with a dummy
 * event the map accepts). Free deletes key 0, and key 1 stays. */
Test(bpf, free_deletes_only_its_entries)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = (int[]){ 0 }, .cpu_cnt = 1 };
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_DUMMY, .disabled = 1 };
	struct fx f;
	int dummy;

	pin_or_skip(0);
	fx_open(&f, &o, false);
	dummy = (int)syscall(SYS_perf_event_open, &a, -1, 1, -1, PERF_FLAG_FD_CLOEXEC);
	cr_assert_geq(dummy, 0);
	cr_assert_eq(kbpf_update(f.b.out_map, 1, (uint32_t)dummy), 0);
	KCHECK(perfring_session_start(f.s), f.s);
	calls(&f.c, 10);
	cr_expect_eq(perfring_session_parse_all(f.s), 10);
	cr_expect_eq(kbpf_result(&f.b, 0), 0);
	perfring_session_free(f.s);
	f.s = NULL;
	/* The program's own output now finds no entry on CPU 0. */
	calls(&f.c, 1);
	cr_expect_eq(kbpf_result(&f.b, 0), -ENOENT, "output after free: %lld",
		     (long long)kbpf_result(&f.b, 0));
	cr_expect_eq(kbpf_delete(f.b.out_map, 0), -ENOENT, "the session's entry is gone");
	cr_expect_eq(kbpf_delete(f.b.out_map, 1), 0, "the test's own entry was untouched");
	unpin();
	close(dummy);
	fx_close(&f);
}

/* The caller may close its map fd at once: the session holds its own. */
Test(bpf, caller_closes_map_fd)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES };
	struct fx f;

	fx_open(&f, &o, false);
	close(f.b.out_map);  /* the program still holds the map */
	f.b.out_map = -1;
	KCHECK(perfring_session_start(f.s), f.s);
	calls(&f.c, 500);
	cr_expect_eq(perfring_session_parse_all(f.s), 500);
	expect_exact(&f.c, 500);
	fx_close(&f);
}

/* Stop disables the events (the output fails with EOPNOTSUPP), start after
 * stop resumes them (R11). */
Test(bpf, stop_and_restart)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = PAGES };
	struct fx f;

	fx_open(&f, &o, true);
	KCHECK(perfring_session_stop(f.s), f.s);
	calls(&f.c, 50);
	cr_expect_eq(kbpf_result(&f.b, 0), -EOPNOTSUPP);
	KCHECK(perfring_session_start(f.s), f.s);
	calls(&f.c, 50);
	cr_expect_eq(perfring_session_parse_all(f.s), 50);
	expect_exact(&f.c, 50);
	fx_close(&f);
}
