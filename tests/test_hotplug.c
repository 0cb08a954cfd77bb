/* SPDX-License-Identifier: MIT */
/* CPU hotplug, simulated (issue 22): a test's sysfs root (PERFRING_TEST_SYSFS)
 * whose online list the test writes, and uevents it sends itself
 * (PERFRING_TEST_UEVENT_FD), so that a following session really closes and
 * reopens a CPU's ring while the real CPU stays online. Each of the five
 * drivers (uv, libevent, libev, the session's own epoll wait, and a level-2
 * loop of its own on perfring_session_hotplug_fd/_sync) runs the same
 * cycles; the fault cases fail the returning CPU's open path. */
#include "kutil.h"
#include "kbpf.h"
#include "base/sys.h"

#include <perfring/perfring-uv.h>
#include <perfring/perfring-event.h>
#include <perfring/perfring-ev.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <ev.h>
#include <event2/event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PER_CYCLE 200       /* getpid records a cycle writes: above the watermark */
#define TAIL 30             /* and then below it: only the offline drain reads them */
#define WATERMARK 4096      /* 64 records */
#define WAIT_MS 30000       /* a condition not met by then fails the test */
#define MAX_CPUS 256
#define CATCHUP_TURNS 5      /* more than the reactor's two after a watch */

/* ------------------------------------------------------ the fake sysfs */

struct fake {
	char root[64], cpu_dir[160];
	int online[MAX_CPUS], n;    /* the real online CPUs */
	int cpu;                    /* the one that leaves and returns */
	int sv[2];                  /* sv[0] is named to the session; -1: no uevents */
	unsigned seq;
};

static void write_file(const struct fake *f, const char *name, const char *text)
{
	char path[256], tmp[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->cpu_dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s", f->cpu_dir, name);
	fp = fopen(tmp, "w");
	cr_assert_not_null(fp, "%s: %s", tmp, strerror(errno));
	fputs(text, fp);
	cr_assert_eq(fclose(fp), 0);
	cr_assert_eq(rename(tmp, path), 0, "%s: %s", path, strerror(errno));
}

static void read_real(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", name);
	fp = fopen(path, "r");
	cr_assert_not_null(fp);
	cr_assert_not_null(fgets(buf, (int)len, fp));
	fclose(fp);
}

/* The real online CPUs (a list such as "0-1" or "0,2-3"). */
static void parse_online(struct fake *f, const char *list)
{
	const char *p = list;
	char *end;
	long a, b;

	f->n = 0;
	while (*p && *p != '\n') {
		a = b = strtol(p, &end, 10);
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b && f->n < MAX_CPUS; a++)
			f->online[f->n++] = (int)a;
		p = *end == ',' ? end + 1 : end;
	}
}

/* The online list without `without` (-1: every real online CPU). */
static void set_online(struct fake *f, int without)
{
	char list[MAX_CPUS * 6] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < f->n; i++)
		if (f->online[i] != without)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", len ? "," : "",
						f->online[i]);
	snprintf(list + len, sizeof(list) - len, "\n");
	write_file(f, "online", list);
}

/* A kernel uevent as NETLINK_KOBJECT_UEVENT carries it. */
static void send_uevent(struct fake *f, const char *action, int cpu)
{
	char msg[256];
	int n;

	if (f->sv[1] < 0)
		return;
	n = snprintf(msg, sizeof(msg), "%s@/devices/system/cpu/cpu%d", action, cpu) + 1;
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "ACTION=%s", action) + 1;
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "DEVPATH=/devices/system/cpu/cpu%d",
		      cpu) + 1;
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "SUBSYSTEM=cpu") + 1;
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "SEQNUM=%u", ++f->seq) + 1;
	cr_assert_eq(send(f->sv[1], msg, (size_t)n, 0), n);
}

/* A copy of the root up now (its paths and fds do not change), removed by
 * the suite's fini when a test fails before its fake_down. */
static struct fake live;
static bool is_live;

/* uevents: the notifier is a socket the test writes; else the session has
 * none and reads sysfs again at each flush. */
static void fake_up(struct fake *f, bool uevents)
{
	char buf[512], num[16];

	memset(f, 0, sizeof(*f));
	f->sv[0] = f->sv[1] = -1;
	read_real("online", buf, sizeof(buf));
	parse_online(f, buf);
	if (f->n < 2)
		cr_skip_test("needs two online CPUs (one leaves, one stays)");
	snprintf(f->root, sizeof(f->root), "/tmp/perfring-hotplug.XXXXXX");
	cr_assert_not_null(mkdtemp(f->root));
	snprintf(f->cpu_dir, sizeof(f->cpu_dir), "%s/devices", f->root);
	mkdir(f->cpu_dir, 0700);
	snprintf(f->cpu_dir, sizeof(f->cpu_dir), "%s/devices/system", f->root);
	mkdir(f->cpu_dir, 0700);
	snprintf(f->cpu_dir, sizeof(f->cpu_dir), "%s/devices/system/cpu", f->root);
	cr_assert_eq(mkdir(f->cpu_dir, 0700), 0);
	read_real("possible", buf, sizeof(buf));
	write_file(f, "possible", buf);
	read_real("online", buf, sizeof(buf));
	write_file(f, "online", buf);
	f->cpu = f->online[f->n - 1];
	setenv("PERFRING_TEST_SYSFS", f->root, 1);
	unsetenv("PERFRING_TEST_UEVENT_FD");
	if (uevents) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, f->sv),
			     0);
		snprintf(num, sizeof(num), "%d", f->sv[0]);
		setenv("PERFRING_TEST_UEVENT_FD", num, 1);
	}
	live = *f;
	is_live = true;
}

static void fake_down(struct fake *f)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/online", f->cpu_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/possible", f->cpu_dir);
	unlink(path);
	rmdir(f->cpu_dir);
	snprintf(path, sizeof(path), "%s/devices/system", f->root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/devices", f->root);
	rmdir(path);
	rmdir(f->root);
	if (f->sv[0] >= 0)
		close(f->sv[0]);
	if (f->sv[1] >= 0)
		close(f->sv[1]);
	unsetenv("PERFRING_TEST_SYSFS");
	unsetenv("PERFRING_TEST_UEVENT_FD");
	is_live = false;
}

static void fini(void)
{
	if (is_live)
		fake_down(&live);
}

/* --------------------------------------------------------- the drivers */

struct run {
	struct perfring_session *s;
	struct kcount k;
	int ups, downs, other;      /* cpu callbacks: the test CPU's, and any other */
	int changes;                /* the test CPU's, ups and downs */
	int cpu;
	bool last_on;
	size_t fds_in_cb;           /* perfring_session_fds() inside the last callback */
	bool free_in_cb;            /* the callback frees the session (R7) */
	bool sync_in_cb;            /* the callback calls perfring_session_hotplug_sync */
	int sync_in_cb_got;         /* and what that returned */
	uv_loop_t uv;
	struct perfring_libuv *ua;
	bool uv_done;
	struct event_base *eb;
	struct perfring_libevent *ea;
	struct ev_loop *el;
	struct perfring_libev *va;
	uint32_t flush_ms;          /* the session's, for a loop of one's own */
	int ep;                     /* a loop of one's own: its epoll set */
	uint64_t ready[MAX_CPUS];   /* and the readiness it saw on each CPU's fd */
	uint64_t synced_ns;         /* its last hotplug sync at a flush */
};

struct driver {
	const char *name;
	void (*attach)(struct run *r);
	void (*turn)(struct run *r);    /* one turn that does not block long */
	void (*detach)(struct run *r);
	uint64_t (*wakeups)(struct run *r, int cpu); /* NULL: the stats' */
};

static void uv_attach(struct run *r)
{
	cr_assert_eq(uv_loop_init(&r->uv), 0);
	cr_assert_eq(perfring_libuv_attach(r->s, &r->uv, NULL, &r->ua), 0, "%s",
		     perfring_session_last_error(r->s));
}

static void uv_turn(struct run *r)
{
	uv_run(&r->uv, UV_RUN_NOWAIT);
}

static void uv_done(void *ctx)
{
	((struct run *)ctx)->uv_done = true;
}

static void uv_detach(struct run *r)
{
	perfring_libuv_detach(r->ua, uv_done, r);
	uv_run(&r->uv, UV_RUN_DEFAULT);
	cr_assert(r->uv_done);
	cr_assert_eq(uv_loop_close(&r->uv), 0, "a uv handle was left");
}

static void event_attach(struct run *r)
{
	cr_assert_not_null(r->eb = event_base_new());
	cr_assert_eq(perfring_libevent_attach(r->s, r->eb, NULL, &r->ea), 0, "%s",
		     perfring_session_last_error(r->s));
}

static void event_turn(struct run *r)
{
	event_base_loop(r->eb, EVLOOP_NONBLOCK);
}

static void event_detach(struct run *r)
{
	perfring_libevent_detach(r->ea);
	event_base_free(r->eb);
}

static void ev_attach(struct run *r)
{
	cr_assert_not_null(r->el = ev_loop_new(EVFLAG_AUTO));
	cr_assert_eq(perfring_libev_attach(r->s, r->el, NULL, &r->va), 0, "%s",
		     perfring_session_last_error(r->s));
}

static void ev_turn(struct run *r)
{
	ev_run(r->el, EVRUN_NOWAIT);
}

static void ev_detach(struct run *r)
{
	perfring_libev_detach(r->va);
	ev_loop_destroy(r->el);
}

static void wait_attach(struct run *r)
{
	(void)r; /* the first parse_for_duration makes the wait's epoll set */
}

static void wait_turn(struct run *r)
{
	int n = perfring_session_parse_for_duration(r->s, 2000000);

	cr_assert_geq(n, 0, "%s", perfring_session_last_error(r->s));
}

static void wait_detach(struct run *r)
{
	(void)r;
}

/* Level 2, as its header comment has it: an epoll set of the rings' fds
 * and the notifier, parse_for_cpu on readiness, and a hotplug sync when the
 * notifier is readable and at each flush; after a sync the fds of CPUs
 * that came back join the set (those of CPUs that left went with close). */
#define NOTIFIER UINT64_MAX

static void own_watch(struct run *r)
{
	struct epoll_event e = { .events = EPOLLIN };
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(r->s, &fds);

	for (i = 0; i < n; i++) {
		e.data.u64 = (uint64_t)fds[i].cpu;
		cr_assert(epoll_ctl(r->ep, EPOLL_CTL_ADD, fds[i].fd, &e) == 0 || errno == EEXIST);
	}
}

static void own_sync(struct run *r)
{
	cr_assert_geq(perfring_session_hotplug_sync(r->s), 0, "%s",
		      perfring_session_last_error(r->s));
	own_watch(r);
}

static void own_attach(struct run *r)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = NOTIFIER };
	int nfd = perfring_session_hotplug_fd(r->s);

	cr_assert_geq(r->ep = epoll_create1(EPOLL_CLOEXEC), 0);
	if (nfd >= 0)
		cr_assert_eq(epoll_ctl(r->ep, EPOLL_CTL_ADD, nfd, &e), 0);
	own_watch(r);
}

static void own_turn(struct run *r)
{
	struct epoll_event got[8];
	int n = epoll_wait(r->ep, got, 8, 1), i, cpu;

	for (i = 0; i < n; i++) {
		if (got[i].data.u64 == NOTIFIER) {
			own_sync(r);
			continue;
		}
		cpu = (int)got[i].data.u64;
		r->ready[cpu]++;
		cr_assert_geq(perfring_session_parse_for_cpu(r->s, cpu), 0, "%s",
			      perfring_session_last_error(r->s));
	}
	if (r->flush_ms != PERFRING_FLUSH_NEVER &&
	    kutil_now_ns() - r->synced_ns >= (uint64_t)r->flush_ms * 1000000) {
		r->synced_ns = kutil_now_ns();
		own_sync(r);
	}
}

static void own_detach(struct run *r)
{
	close(r->ep);
}

static uint64_t own_wakeups(struct run *r, int cpu)
{
	return r->ready[cpu];
}

static const struct driver drivers[] = {
	{ "uv", uv_attach, uv_turn, uv_detach, NULL },
	{ "libevent", event_attach, event_turn, event_detach, NULL },
	{ "libev", ev_attach, ev_turn, ev_detach, NULL },
	{ "epoll (parse_for_duration)", wait_attach, wait_turn, wait_detach, NULL },
	{ "level 2 (own epoll, parse_for_cpu)", own_attach, own_turn, own_detach, own_wakeups },
};

/* Readiness d handled on cpu's fd. */
static uint64_t wakeups(const struct driver *d, struct run *r, int cpu)
{
	struct perfring_cpu_stats st;

	if (d->wakeups)
		return d->wakeups(r, cpu);
	cr_assert_eq(perfring_session_cpu_stats(r->s, cpu, &st), 0);
	return st.wakeups;
}

/* ------------------------------------------------------------ sessions */

static void on_cpu(int cpu, bool online, void *ctx)
{
	struct run *r = ctx;

	r->fds_in_cb = perfring_session_fds(r->s, NULL);
	if (r->sync_in_cb)
		r->sync_in_cb_got = perfring_session_hotplug_sync(r->s);
	if (r->free_in_cb) {
		perfring_session_free(r->s);
		r->free_in_cb = false;
	}
	if (cpu != r->cpu) {
		r->other++;
		return;
	}
	r->last_on = online;
	r->changes++;
	if (online)
		r->ups++;
	else
		r->downs++;
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void pause_ms(int ms)
{
	poll(NULL, 0, ms);
}

/* A following session of the getpid tracepoint, filtered on this thread,
 * which runs on the test CPU, and on the load's thread (0: none). */
static void session(struct run *r, const struct fake *f, uint32_t flush_ms, int load_tid)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64, .wakeup_watermark = WATERMARK,
				   .flush_ms = flush_ms, .follow_hotplug = 1 };
	struct perfring_event *ev;
	char filter[96];

	memset(r, 0, sizeof(*r));
	r->cpu = f->cpu;
	r->flush_ms = flush_ms;
	cr_assert_eq(kutil_pin(f->cpu), 0);
	KCHECK(kutil_getpid_session(&o, gettid_(), &r->k, &r->s, &ev), r->s);
	snprintf(filter, sizeof(filter), "common_pid == %d || common_pid == %d", gettid_(),
		 load_tid ? load_tid : gettid_());
	cr_assert_eq(perfring_event_set_filter(ev, filter), 0);
	cr_assert_eq(perfring_session_set_cpu_callback(r->s, on_cpu, r), 0);
	KCHECK(perfring_session_start(r->s), r->s);
}

/* A getpid generator on a CPU that stays, counting its calls. It keeps at
 * most LOAD_AHEAD records ahead of what was delivered of its CPU, so that a
 * loaded machine that starves the loop never overflows the ring. */
#define LOAD_AHEAD 1000
struct load {
	pthread_t t;
	int cpu, tid;
	volatile bool stop, ready, go;
	long calls;
	const uint64_t *delivered;
};

static void *load_main(void *arg)
{
	struct load *l = arg;

	if (kutil_pin(l->cpu))
		return NULL;
	l->tid = gettid_();
	__atomic_store_n(&l->ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&l->go, __ATOMIC_ACQUIRE))
		pause_ms(1);
	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		if ((uint64_t)l->calls - __atomic_load_n(l->delivered, __ATOMIC_RELAXED) > LOAD_AHEAD) {
			pause_ms(1);
			continue;
		}
		kutil_getpid_n(50);
		l->calls += 50;
		pause_ms(1);
	}
	return NULL;
}

static void load_start(struct load *l, int cpu)
{
	memset(l, 0, sizeof(*l));
	l->cpu = cpu;
	cr_assert_eq(pthread_create(&l->t, NULL, load_main, l), 0);
	while (!__atomic_load_n(&l->ready, __ATOMIC_ACQUIRE))
		pause_ms(1);
}

static void load_stop(struct load *l)
{
	__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
	pthread_join(l->t, NULL);
}

/* Turns d until *v reaches want; fails after WAIT_MS. */
static void turn_until(const struct driver *d, struct run *r, const uint64_t *v, uint64_t want,
		       const char *what)
{
	uint64_t t0 = kutil_now_ns();

	while (*v < want) {
		cr_assert_lt(kutil_now_ns() - t0, (uint64_t)WAIT_MS * 1000000,
			     "%s: %s: %llu of %llu after %d ms", d->name, what,
			     (unsigned long long)*v, (unsigned long long)want, WAIT_MS);
		d->turn(r);
		pause_ms(1);
	}
}

static void turn_until_int(const struct driver *d, struct run *r, const int *v, int want,
			   const char *what)
{
	uint64_t t0 = kutil_now_ns();

	while (*v < want) {
		cr_assert_lt(kutil_now_ns() - t0, (uint64_t)WAIT_MS * 1000000,
			     "%s: %s: %d of %d after %d ms", d->name, what, *v, want, WAIT_MS);
		d->turn(r);
		pause_ms(1);
	}
}

static bool listed(const struct perfring_session *s, int cpu)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(s, &fds);

	for (i = 0; i < n; i++)
		if (fds[i].cpu == cpu)
			return true;
	return false;
}

/*
 * One leave and return of the test CPU. Its PER_CYCLE records are written
 * first: more than the watermark, so readiness on the ring's current fd
 * (the new one after a return) delivers them. TAIL more stay below the
 * watermark: with no flush, only the offline drain delivers them. While the
 * CPU is away the ring is closed: what this thread writes then is recorded
 * nowhere.
 */
static void cycle(const struct driver *d, struct run *r, struct fake *f, int fds_on)
{
	uint64_t before = r->k.per_cpu[f->cpu], w0 = wakeups(d, r, f->cpu);
	int downs = r->downs, ups = r->ups, i;

	kutil_getpid_n(PER_CYCLE);
	turn_until(d, r, &r->k.per_cpu[f->cpu], before + PER_CYCLE, "records by readiness");
	/* A flush pass may read them first, but the fd's readiness, which the
	 * kernel keeps until the fd is polled, is reported in the same turn. */
	cr_assert_gt(wakeups(d, r, f->cpu), w0, "%s: no readiness on the CPU's fd", d->name);
	kutil_getpid_n(TAIL);
	set_online(f, f->cpu);
	send_uevent(f, "offline", f->cpu);
	turn_until_int(d, r, &r->downs, downs + 1, "offline callbacks");
	cr_assert_eq(r->k.per_cpu[f->cpu], before + PER_CYCLE + TAIL, "%s: %llu of %d records after the "
		     "offline drain", d->name, (unsigned long long)(r->k.per_cpu[f->cpu] - before),
		     PER_CYCLE + TAIL);
	cr_assert_not(r->last_on);
	cr_assert_eq(perfring_session_fd_for_cpu(r->s, f->cpu), -ENOENT);
	cr_assert_not(listed(r->s, f->cpu));
	cr_assert_eq(r->fds_in_cb, (size_t)f->n - 1, "fds() inside the callback");
	cr_assert_eq(kutil_fd_count(), fds_on - 2, "%s: the leader and the event's fd close",
		     d->name);
	kutil_getpid_n(PER_CYCLE);
	d->turn(r);
	cr_assert_eq(r->k.per_cpu[f->cpu], before + PER_CYCLE + TAIL, "records of a closed ring");
	set_online(f, -1);
	send_uevent(f, "online", f->cpu);
	turn_until_int(d, r, &r->ups, ups + 1, "online callbacks");
	/* The drains of the catch-up turns (uv, libev) run now, so that the next
	 * cycle's records can come only through the new fd's readiness. */
	for (i = 0; i < CATCHUP_TURNS; i++)
		d->turn(r);
	cr_assert(r->last_on);
	cr_assert_geq(perfring_session_fd_for_cpu(r->s, f->cpu), 0);
	cr_assert(listed(r->s, f->cpu));
	cr_assert_eq(r->fds_in_cb, (size_t)f->n);
	cr_assert_eq(kutil_fd_count(), fds_on, "%s: the CPU's fds are back", d->name);
}

/* libuv makes a process-wide signal pipe with its first loop, once. */
static void uv_warm_up(void)
{
	uv_loop_t l;

	cr_assert_eq(uv_loop_init(&l), 0);
	cr_assert_eq(uv_loop_close(&l), 0);
}

/* n cycles on d; loaded: a getpid generator runs on a CPU that stays, and
 * each of its records is delivered too. */
static void cycles(const struct driver *d, bool uevents, uint32_t flush_ms, int n, bool loaded)
{
	struct perfring_cpu_stats st;
	struct kfdset fds0;
	struct load l = { 0 };
	struct fake f;
	struct run r;
	char why[256];
	int i, fds_on;

	uv_warm_up();
	cr_assert_eq(kutil_fd_snapshot(&fds0), 0);
	fake_up(&f, uevents);
	if (loaded)
		load_start(&l, f.online[0]);
	session(&r, &f, flush_ms, loaded ? l.tid : 0);
	l.delivered = &r.k.per_cpu[l.cpu];
	__atomic_store_n(&l.go, true, __ATOMIC_RELEASE); /* its records count from now */
	d->attach(&r);
	d->turn(&r);
	fds_on = kutil_fd_count();
	for (i = 0; i < n; i++)
		cycle(d, &r, &f, fds_on);
	cr_assert_eq(r.ups, n);
	cr_assert_eq(r.downs, n);
	cr_assert_eq(r.other, 0, "only the test CPU changed");
	cr_assert_eq(perfring_session_cpu_stats(r.s, f.cpu, &st), 0);
	cr_assert_eq(st.samples, (uint64_t)n * (PER_CYCLE + TAIL),
		     "stats carry on across offline times");
	cr_assert_eq(st.lost, 0);
	if (loaded)
		load_stop(&l);
	d->detach(&r);
	/* What the load wrote below the watermark: the last parse reads it. */
	cr_assert_geq(perfring_session_parse_all(r.s), 0);
	KCOUNT_EQ(r.k.per_cpu[f.cpu], (uint64_t)n * (PER_CYCLE + TAIL));
	if (loaded) {
		fprintf(stderr, "# %s: %d cycles, %ld records of the load on CPU %d\n", d->name, n,
			l.calls, l.cpu);
		cr_assert_eq(perfring_session_cpu_stats(r.s, l.cpu, &st), 0);
		cr_assert_eq(st.lost, 0);
		KCOUNT_EQ(r.k.per_cpu[l.cpu], (uint64_t)l.calls);
	}
	perfring_session_free(r.s);
	fake_down(&f);
	cr_assert_eq(kutil_fd_changed(&fds0, why, sizeof(why)), -1, "%s: %s", d->name, why);
}

TestSuite(hotplug, .fini = fini, .timeout = 240);

/* Every slot change reaches each driver: its watch() of the new fd in the
 * same slot is what delivers the records after a return. With no flush, the
 * notifier alone tells of the changes. */
Test(hotplug, uevents_uv) { cycles(&drivers[0], true, PERFRING_FLUSH_NEVER, 3, false); }
Test(hotplug, uevents_libevent) { cycles(&drivers[1], true, PERFRING_FLUSH_NEVER, 3, false); }
Test(hotplug, uevents_libev) { cycles(&drivers[2], true, PERFRING_FLUSH_NEVER, 3, false); }
Test(hotplug, uevents_epoll_wait) { cycles(&drivers[3], true, PERFRING_FLUSH_NEVER, 3, false); }
Test(hotplug, uevents_level2) { cycles(&drivers[4], true, PERFRING_FLUSH_NEVER, 3, false); }

/* No notifier: each flush reads the online list again. */
Test(hotplug, sysfs_at_flush_uv) { cycles(&drivers[0], false, 20, 3, false); }
Test(hotplug, sysfs_at_flush_libevent) { cycles(&drivers[1], false, 20, 3, false); }
Test(hotplug, sysfs_at_flush_libev) { cycles(&drivers[2], false, 20, 3, false); }
Test(hotplug, sysfs_at_flush_epoll_wait) { cycles(&drivers[3], false, 20, 3, false); }
Test(hotplug, sysfs_at_flush_level2) { cycles(&drivers[4], false, 20, 3, false); }

/* 100 leave/return pairs under a getpid load: every record written while
 * the CPU was there is delivered, and no fd is left. */
Test(hotplug, hundred_cycles_lose_nothing)
{
	cycles(&drivers[0], true, PERFRING_FLUSH_NEVER, 100, true);
	cycles(&drivers[3], true, PERFRING_FLUSH_NEVER, 100, true);
}

/* Linux always has a CPU online, so an empty or blank online list is a
 * guess, like garbage: no CPU is closed, no callback comes, and the session
 * keeps delivering. Then a real list is followed again. */
static void blank_lists(const struct driver *d, bool uevents, uint32_t flush_ms)
{
	static const char *const blank[] = { "", "\n", "  \n" };
	struct fake f;
	struct run r;
	uint64_t before, t0;
	size_t i;

	uv_warm_up();
	fake_up(&f, uevents);
	session(&r, &f, flush_ms, 0);
	d->attach(&r);
	d->turn(&r);
	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		write_file(&f, "online", blank[i]);
		send_uevent(&f, "offline", f.cpu);
		/* Five flush passes, or the uevent's turn and more. */
		for (t0 = kutil_now_ns(); kutil_now_ns() - t0 < 100 * 1000000ull; pause_ms(1))
			d->turn(&r);
		cr_assert_eq(r.changes + r.other, 0, "%s: online list \"%s\" (blank %zu): %d CPU "
			     "changes", d->name, blank[i], i, r.changes + r.other);
		cr_assert_eq(perfring_session_fds(r.s, NULL), (size_t)f.n);
		cr_assert_geq(perfring_session_fd_for_cpu(r.s, f.cpu), 0);
		before = r.k.per_cpu[f.cpu];
		kutil_getpid_n(PER_CYCLE);
		turn_until(d, &r, &r.k.per_cpu[f.cpu], before + PER_CYCLE, "records after a blank list");
	}
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	turn_until_int(d, &r, &r.downs, 1, "offline callbacks after a real list");
	cr_assert_eq(r.other, 0);
	d->detach(&r);
	perfring_session_free(r.s);
	fake_down(&f);
}

Test(hotplug, blank_online_list_by_uevent_changes_nothing)
{
	blank_lists(&drivers[0], true, PERFRING_FLUSH_NEVER);
}

Test(hotplug, blank_online_list_at_flush_changes_nothing)
{
	blank_lists(&drivers[0], false, 20);
}

Test(hotplug, blank_online_list_at_level2_sync_changes_nothing)
{
	blank_lists(&drivers[4], true, 20);
}

/* ------------------------------------------------------ fault injection */

struct fault {
	enum pr_sys_call call;      /* PR_SYS__COUNT: count only */
	long nth, seen[PR_SYS__COUNT];
	int err;
	bool fired;
};

static int fault_hook(enum pr_sys_call call, void *ctx)
{
	struct fault *fl = ctx;
	long n = ++fl->seen[call];

	if (call != fl->call || n != fl->nth || fl->fired)
		return 0;
	fl->fired = true;
	return fl->err;
}

/* Writes n records on cpu (this thread moves there and back). */
static void records_on(const struct fake *f, int cpu, long n)
{
	cr_assert_eq(kutil_pin(cpu), 0);
	kutil_getpid_n(n);
	cr_assert_eq(kutil_pin(f->cpu), 0);
}

/* The test CPU leaves, then returns with fl's fault on its open path. */
static void faulted_return(struct fault *fl)
{
	const struct driver *d = &drivers[0];
	uint64_t stay0;
	struct kfdset fds0;
	struct fake f;
	struct run r;
	char why[256], cpu_s[32];
	int i, fds_off, stay;

	uv_warm_up();
	cr_assert_eq(kutil_fd_snapshot(&fds0), 0);
	fake_up(&f, true);
	stay = f.online[0];
	session(&r, &f, PERFRING_FLUSH_NEVER, 0);
	d->attach(&r);
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	turn_until_int(d, &r, &r.downs, 1, "offline callbacks");
	fds_off = kutil_fd_count();
	pr_fault_set(fault_hook, fl);
	set_online(&f, -1);
	send_uevent(&f, "online", f.cpu);
	turn_until_int(d, &r, &r.changes, 2, "a report of the return");
	pr_fault_set(NULL, NULL);
	if (fl->call == PR_SYS__COUNT || !fl->fired) {
		cr_assert_eq(r.ups, 1);
	} else {
		snprintf(cpu_s, sizeof(cpu_s), "CPU %d", f.cpu);
		cr_assert_eq(r.ups, 0, "the open failed, yet the CPU was reported online");
		cr_assert_eq(r.downs, 2, "the failure is reported through the cpu callback");
		cr_assert_not(r.last_on);
		cr_assert_not_null(strstr(perfring_session_last_error(r.s), cpu_s), "%s",
				   perfring_session_last_error(r.s));
		cr_assert_eq(kutil_fd_count(), fds_off, "the failed open left a fd");
		cr_assert_eq(perfring_session_fd_for_cpu(r.s, f.cpu), -ENOENT);
		/* The session goes on with the CPU that stayed. */
		stay0 = r.k.per_cpu[stay];
		records_on(&f, stay, PER_CYCLE);
		turn_until(d, &r, &r.k.per_cpu[stay], stay0 + PER_CYCLE, "records of the CPU that stayed");
		/* Reported once: another uevent, and the list unchanged, try nothing. */
		send_uevent(&f, "online", f.cpu);
		for (i = 0; i < CATCHUP_TURNS; i++)
			d->turn(&r);
		cr_assert_eq(r.downs, 2, "the failure was reported again");
		/* Once it has left and come back, it opens again. */
		set_online(&f, f.cpu);
		send_uevent(&f, "offline", f.cpu);
		for (i = 0; i < CATCHUP_TURNS; i++)
			d->turn(&r);
		cr_assert_eq(r.downs, 2, "a CPU that was not open is not closed");
		set_online(&f, -1);
		send_uevent(&f, "online", f.cpu);
		turn_until_int(d, &r, &r.ups, 1, "online callbacks after the fault");
	}
	for (i = 0; i < CATCHUP_TURNS; i++)
		d->turn(&r);
	records_on(&f, f.cpu, PER_CYCLE);
	turn_until(d, &r, &r.k.per_cpu[f.cpu], PER_CYCLE, "records after the return");
	d->detach(&r);
	perfring_session_free(r.s);
	fake_down(&f);
	cr_assert_eq(kutil_fd_changed(&fds0, why, sizeof(why)), -1, "%s", why);
}

/* Each perf_event_open, mmap and ioctl of a returning CPU's open path
 * fails once, in turn: the session goes on without that CPU, the failure
 * is reported once, nothing leaks, and the CPU opens once it came back. */
Test(hotplug, faults_on_the_open_path_of_a_returning_cpu)
{
	static const enum pr_sys_call kinds[] = { PR_SYS_PERF_EVENT_OPEN, PR_SYS_MMAP,
						  PR_SYS_IOCTL };
	static const int errs[] = { EMFILE, ENOMEM, ENODEV, EBUSY };
	struct fault count = { .call = PR_SYS__COUNT };
	size_t k;
	long nth, cases = 0;

	faulted_return(&count);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		cr_assert_gt(count.seen[kinds[k]], 0, "a return makes no call of kind %d", kinds[k]);
		for (nth = 1; nth <= count.seen[kinds[k]]; nth++, cases++) {
			struct fault fl = { .call = kinds[k], .nth = nth,
					    .err = errs[cases % (sizeof(errs) / sizeof(errs[0]))] };

			faulted_return(&fl);
			cr_assert(fl.fired, "call %ld of kind %d was not reached", nth, kinds[k]);
		}
	}
	fprintf(stderr, "# %ld faulted returns: perf_event_open %ld, mmap %ld, ioctl %ld calls\n",
		cases, count.seen[PR_SYS_PERF_EVENT_OPEN], count.seen[PR_SYS_MMAP],
		count.seen[PR_SYS_IOCTL]);
}

/* ----------------------------------------------------------- the rules */

Test(hotplug, options_and_calls)
{
	static const int cpu0[] = { 0 };
	struct perfring_opts o = { .sz = sizeof(o), .follow_hotplug = 1, .cpus = cpu0,
				   .cpu_cnt = 1 };
	struct perfring_opts plain = { .sz = sizeof(plain) };
	struct perfring_session *s = NULL;
	struct fake f;
	struct run r;

	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL, "a chosen list is not followed");
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "follow_hotplug"));
	o = (struct perfring_opts){ .sz = sizeof(o), .follow_hotplug = 1, .overwrite = 1 };
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL, "a flight recorder follows nothing");
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "overwrite"));
	cr_assert_eq(perfring_session_new(&plain, &s), 0);
	cr_assert_eq(perfring_session_set_cpu_callback(s, on_cpu, NULL), -EINVAL);
	cr_assert_eq(perfring_session_slots(s), (size_t)kutil_ncpu_online(), "no notifier slot");
	cr_assert_eq(perfring_session_hotplug_fd(s), -ENOENT);
	cr_assert_eq(perfring_session_hotplug_sync(s), -EINVAL);
	cr_assert_not_null(strstr(perfring_session_last_error(s), "follow_hotplug"));
	perfring_session_free(s);
	cr_assert_eq(perfring_session_set_cpu_callback(NULL, on_cpu, NULL), -EINVAL);
	cr_assert_eq(perfring_session_slots(NULL), 0);
	cr_assert_eq(perfring_session_hotplug_fd(NULL), -EINVAL);
	cr_assert_eq(perfring_session_hotplug_sync(NULL), -EINVAL);
	o = (struct perfring_opts){ .sz = sizeof(o), .follow_hotplug = 1 };
	cr_assert_eq(perfring_session_new(&o, &s), 0);
	cr_assert_eq(perfring_session_hotplug_fd(s), -ENOENT, "no notifier before start");
	cr_assert_eq(perfring_session_hotplug_sync(s), -EINVAL);
	cr_assert_not_null(strstr(perfring_session_last_error(s), "before perfring_session_start"));
	perfring_session_free(s);
	fake_up(&f, true);
	write_file(&f, "possible", "0-7\n");
	session(&r, &f, 0, 0);
	cr_assert_eq(perfring_session_slots(r.s), 9, "every possible CPU, and the notifier");
	cr_assert_eq(perfring_session_fds(r.s, NULL), (size_t)f.n, "only the online CPUs' fds");
	cr_assert_eq(perfring_session_fd_for_cpu(r.s, 7), -ENOENT, "a possible CPU not online");
	cr_assert_eq(perfring_session_set_cpu_callback(r.s, on_cpu, &r), -EBUSY);
	cr_assert_geq(perfring_session_hotplug_fd(r.s), 0, "the notifier, after start");
	cr_assert_eq(perfring_session_hotplug_sync(r.s), 0, "no change");
	cr_assert_eq(r.changes, 0);
	/* From inside a callback (here the cpu callback of a sync's own
	 * change): -EBUSY, and the outer sync goes on. */
	r.sync_in_cb = true;
	set_online(&f, f.cpu);
	cr_assert_eq(perfring_session_hotplug_sync(r.s), 0, "%s", perfring_session_last_error(r.s));
	cr_assert_eq(r.downs, 1);
	cr_assert_eq(r.sync_in_cb_got, -EBUSY);
	cr_assert_not_null(strstr(perfring_session_last_error(r.s), "from a callback"));
	cr_assert_eq(perfring_session_fd_for_cpu(r.s, f.cpu), -ENOENT);
	perfring_session_free(r.s);
	write_file(&f, "possible", "bogus\n");
	o = (struct perfring_opts){ .sz = sizeof(o), .follow_hotplug = 1 };
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL, "a bad possible list");
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "possible"), "%s",
			   perfring_session_last_error(NULL));
	fake_down(&f);
}

/* The polling wait (no wakeup option) follows too, and counts a flush pass
 * only for the rings it has: an offline CPU's stats.flushes stays put. */
Test(hotplug, polling_wait_counts_flushes_of_present_rings_only)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .poll_interval_ms = 1,
				   .follow_hotplug = 1 };
	struct perfring_cpu_stats off0, off1, on0, on1;
	struct perfring_session *s = NULL;
	struct kcount k = { 0 };
	struct fake f;
	int stay;

	fake_up(&f, true);
	stay = f.online[0] == f.cpu ? f.online[1] : f.online[0];
	KCHECK(kutil_getpid_session(&o, gettid_(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	cr_assert_geq(perfring_session_parse_for_duration(s, 20000000), 0);
	cr_assert_eq(perfring_session_fd_for_cpu(s, f.cpu), -ENOENT, "CPU %d is still open", f.cpu);
	cr_assert_eq(perfring_session_cpu_stats(s, f.cpu, &off0), 0);
	cr_assert_eq(perfring_session_cpu_stats(s, stay, &on0), 0);
	cr_assert_geq(perfring_session_parse_for_duration(s, 30000000), 0);
	cr_assert_eq(perfring_session_cpu_stats(s, f.cpu, &off1), 0);
	cr_assert_eq(perfring_session_cpu_stats(s, stay, &on1), 0);
	cr_expect_eq(off1.flushes, off0.flushes, "an offline CPU's flushes grew");
	cr_expect_gt(on1.flushes, on0.flushes);
	perfring_session_free(s);
	fake_down(&f);
}

/* On the real sysfs the notifier is the kernel's uevent socket; a session
 * that cannot have it (socket fails) still starts, and reads sysfs at each
 * flush instead. */
Test(hotplug, real_sysfs_and_no_socket)
{
	struct perfring_opts o = { .sz = sizeof(o), .follow_hotplug = 1, .ring_pages = 8 };
	struct fault fl = { .call = PR_SYS_SOCKET, .nth = 1, .err = EMFILE };
	struct perfring_session *s = NULL;
	struct kcount k = { 0 };
	int fds0 = kutil_fd_count(), per_cpu;

	unsetenv("PERFRING_TEST_SYSFS");
	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	per_cpu = (kutil_fd_count() - fds0 - 1) / kutil_ncpu_online();
	cr_assert_eq(kutil_fd_count(), fds0 + 1 + per_cpu * kutil_ncpu_online(),
		     "the rings' fds and one notifier");
	cr_assert_eq(perfring_session_fds(s, NULL), (size_t)kutil_ncpu_online());
	perfring_session_free(s);
	cr_assert_eq(kutil_fd_count(), fds0);
	pr_fault_set(fault_hook, &fl);
	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	pr_fault_set(NULL, NULL);
	cr_assert(fl.fired);
	cr_assert_eq(kutil_fd_count(), fds0 + per_cpu * kutil_ncpu_online(), "no notifier");
	kutil_getpid_n(100);
	cr_assert_eq(perfring_session_parse_all(s), 100);
	perfring_session_free(s);
	cr_assert_eq(kutil_fd_count(), fds0);
}

/* R7: the cpu callback frees the session. On a loop the session goes when
 * the reactor's call returns (the adapter is cancelled, R6, and its detach
 * frees it); in parse_for_duration, that call returns -ECANCELED. */
Test(hotplug, free_inside_the_cpu_callback)
{
	struct kfdset fds0;
	struct fake f;
	struct run r;
	char why[256];
	int n;

	uv_warm_up();
	cr_assert_eq(kutil_fd_snapshot(&fds0), 0);
	fake_up(&f, true);
	session(&r, &f, PERFRING_FLUSH_NEVER, 0);
	drivers[0].attach(&r);
	r.free_in_cb = true;
	kutil_getpid_n(TAIL);
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	turn_until_int(&drivers[0], &r, &r.downs, 1, "offline callbacks");
	cr_assert_eq(r.k.per_cpu[f.cpu], TAIL, "the ring was drained before the callback");
	drivers[0].turn(&r);
	drivers[0].detach(&r);
	set_online(&f, -1);
	session(&r, &f, PERFRING_FLUSH_NEVER, 0);
	cr_assert_geq(perfring_session_parse_for_duration(r.s, 1000000), 0);
	r.free_in_cb = true;
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	n = perfring_session_parse_for_duration(r.s, (uint64_t)WAIT_MS * 1000000);
	cr_assert_eq(n, -ECANCELED, "got %d", n);
	cr_assert_eq(r.downs, 1);
	fake_down(&f);
	cr_assert_eq(kutil_fd_changed(&fds0, why, sizeof(why)), -1, "%s", why);
}

/* BPF output follows too: the leaving CPU's map entry is deleted with its
 * events (the program's output there then fails with -ENOENT, and no entry
 * keeps a closed event alive), and the returning CPU gets a new event and
 * entry, whose samples arrive. */
Test(hotplug, bpf_output_entries_follow)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64, .wakeup_watermark = WATERMARK,
				   .flush_ms = 20, .follow_hotplug = 1 };
	struct kbpf_check c = { .tgid = (uint32_t)getpid(), .tid = (uint32_t)gettid_() };
	struct perfring_event *ev;
	uint32_t ids[3];
	struct kfdset fds0;
	struct kbpf b;
	struct fake f;
	struct run r;
	char why[1024] = "";
	int64_t failed;
	int err;

	uv_warm_up();
	cr_assert_eq(kutil_fd_snapshot(&fds0), 0);
	fake_up(&f, true);
	err = kbpf_open(&b, getpid(), 0, why, sizeof(why));
	if (err == -EPERM || err == -EACCES || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	ids[0] = kbpf_id(b.prog);
	ids[1] = kbpf_id(b.out_map);
	ids[2] = kbpf_id(b.res_map);
	memset(&r, 0, sizeof(r));
	r.cpu = f.cpu;
	cr_assert_eq(kutil_pin(f.cpu), 0);
	KCHECK(perfring_session_new(&o, &r.s), NULL);
	KCHECK(perfring_session_add_bpf_output(r.s, b.out_map, &ev), r.s);
	cr_assert_eq(perfring_event_set_callback(ev, kbpf_check_cb, &c), 0);
	cr_assert_eq(perfring_session_set_cpu_callback(r.s, on_cpu, &r), 0);
	KCHECK(perfring_session_start(r.s), r.s);
	drivers[0].attach(&r);
	kutil_getpid_n(100);
	turn_until(&drivers[0], &r, &c.per_cpu[f.cpu], 100, "BPF samples before the leave");
	set_online(&f, f.cpu);
	send_uevent(&f, "offline", f.cpu);
	turn_until_int(&drivers[0], &r, &r.downs, 1, "offline callbacks");
	cr_assert_eq(kbpf_delete(b.out_map, (uint32_t)f.cpu), -ENOENT,
		     "the leaving CPU's map entry is gone");
	failed = kbpf_result(&b, 1);
	kutil_getpid_n(100);
	cr_assert_eq(kbpf_result(&b, 1), failed + 100, "outputs on a CPU with no entry fail");
	cr_assert_eq(kbpf_result(&b, 0), -ENOENT);
	set_online(&f, -1);
	send_uevent(&f, "online", f.cpu);
	turn_until_int(&drivers[0], &r, &r.ups, 1, "online callbacks");
	failed = kbpf_result(&b, 1);
	kutil_getpid_n(100);
	turn_until(&drivers[0], &r, &c.per_cpu[f.cpu], 200, "BPF samples after the return");
	cr_assert_eq(kbpf_result(&b, 1), failed, "an output on the returned CPU failed");
	cr_assert_eq(kbpf_check_bad(&c), 0, "%s", c.first_bad);
	drivers[0].detach(&r);
	perfring_session_free(r.s);
	cr_assert_eq(kbpf_delete(b.out_map, (uint32_t)f.cpu), -ENOENT, "free deleted the entry");
	kbpf_close(&b);
	cr_assert_eq(kbpf_wait_gone(ids, 3), 0, "a BPF object outlived the test");
	fake_down(&f);
	cr_assert_eq(kutil_fd_changed(&fds0, why, sizeof(why)), -1, "%s", why);
}
