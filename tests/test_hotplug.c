/* SPDX-License-Identifier: MIT */
/* CPU hotplug, simulated (issue 22): a test's sysfs root (PERFRING_TEST_SYSFS)
 * whose online list the test writes, and uevents it sends itself
 * (PERFRING_TEST_UEVENT_FD), so that a following session really closes and
 * reopens a CPU's ring while the real CPU stays online. Each of the four
 * drivers (uv, libevent, libev, the session's own epoll wait) runs the same
 * cycles; the fault cases fail the returning CPU's open path. */
#include "kutil.h"
#include "base/sys.h"

#include <perfring/perfring-uv.h>
#include <perfring/perfring-event.h>
#include <perfring/perfring-ev.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <ev.h>
#include <event2/event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PER_CYCLE 200       /* getpid records a cycle writes: above the watermark */
#define TAIL 30             /* and then below it: only the offline drain reads them */
#define WATERMARK 4096      /* 64 records */
#define WAIT_MS 30000       /* a condition not met by then fails the test */
#define MAX_CPUS 256
#define SETTLE_TURNS 5      /* more than the reactor's two after a watch */

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

/* uevents: the notifier is a socket the test writes; else the session has
 * none and reads sysfs again at each flush. */
static void fake_up(struct fake *f, bool uevents)
{
	char buf[512], num[16];

	memset(f, 0, sizeof(*f));
	f->sv[0] = f->sv[1] = -1;
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
	parse_online(f, buf);
	if (f->n < 2)
		cr_skip_test("needs two online CPUs (one leaves, one stays)");
	f->cpu = f->online[f->n - 1];
	setenv("PERFRING_TEST_SYSFS", f->root, 1);
	unsetenv("PERFRING_TEST_UEVENT_FD");
	if (uevents) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, f->sv),
			     0);
		snprintf(num, sizeof(num), "%d", f->sv[0]);
		setenv("PERFRING_TEST_UEVENT_FD", num, 1);
	}
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
}

/* --------------------------------------------------------- the drivers */

struct run {
	struct perfring_session *s;
	struct kcount k;
	int ups, downs, other;      /* cpu callbacks: the test CPU's, and any other */
	int cpu;
	bool last_on;
	size_t fds_in_cb;           /* perfring_session_fds() inside the last callback */
	uv_loop_t uv;
	struct perfring_libuv *ua;
	bool uv_done;
	struct event_base *eb;
	struct perfring_libevent *ea;
	struct ev_loop *el;
	struct perfring_libev *va;
};

struct driver {
	const char *name;
	void (*attach)(struct run *r);
	void (*turn)(struct run *r);    /* one turn that does not block long */
	void (*detach)(struct run *r);
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

static const struct driver drivers[] = {
	{ "uv", uv_attach, uv_turn, uv_detach },
	{ "libevent", event_attach, event_turn, event_detach },
	{ "libev", ev_attach, ev_turn, ev_detach },
	{ "epoll (parse_for_duration)", wait_attach, wait_turn, wait_detach },
};

/* ------------------------------------------------------------ sessions */

static void on_cpu(int cpu, bool online, void *ctx)
{
	struct run *r = ctx;

	r->fds_in_cb = perfring_session_fds(r->s, NULL);
	if (cpu != r->cpu) {
		r->other++;
		return;
	}
	r->last_on = online;
	if (online)
		r->ups++;
	else
		r->downs++;
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

/* A following session of the getpid tracepoint, filtered on this thread,
 * which runs on the test CPU; flush_ms 0: the driver's default flush. */
static void session(struct run *r, const struct fake *f, uint32_t flush_ms)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64, .wakeup_watermark = WATERMARK,
				   .flush_ms = flush_ms, .follow_hotplug = 1 };

	memset(r, 0, sizeof(*r));
	r->cpu = f->cpu;
	cr_assert_eq(kutil_pin(f->cpu), 0);
	KCHECK(kutil_getpid_session(&o, gettid_(), &r->k, &r->s, NULL), r->s);
	cr_assert_eq(perfring_session_set_cpu_callback(r->s, on_cpu, r), 0);
	KCHECK(perfring_session_start(r->s), r->s);
}

static void pause_ms(int ms)
{
	poll(NULL, 0, ms);
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
	uint64_t before = r->k.n;
	int downs = r->downs, ups = r->ups, i;

	struct perfring_cpu_stats st0, st;

	cr_assert_eq(perfring_session_cpu_stats(r->s, f->cpu, &st0), 0);
	kutil_getpid_n(PER_CYCLE);
	turn_until(d, r, &r->k.n, before + PER_CYCLE, "records by readiness");
	/* A flush pass may read them first, but the fd's readiness, which the
	 * kernel keeps until the fd is polled, is reported in the same turn. */
	cr_assert_eq(perfring_session_cpu_stats(r->s, f->cpu, &st), 0);
	cr_assert_gt(st.wakeups, st0.wakeups, "%s: no readiness on the CPU's fd", d->name);
	kutil_getpid_n(TAIL);
	set_online(f, f->cpu);
	send_uevent(f, "offline", f->cpu);
	turn_until_int(d, r, &r->downs, downs + 1, "offline callbacks");
	cr_assert_eq(r->k.n, before + PER_CYCLE + TAIL, "%s: %llu of %d records after the "
		     "offline drain", d->name, (unsigned long long)(r->k.n - before),
		     PER_CYCLE + TAIL);
	cr_assert_not(r->last_on);
	cr_assert_eq(perfring_session_fd_for_cpu(r->s, f->cpu), -ENOENT);
	cr_assert_not(listed(r->s, f->cpu));
	cr_assert_eq(r->fds_in_cb, (size_t)f->n - 1, "fds() inside the callback");
	cr_assert_eq(kutil_fd_count(), fds_on - 2, "%s: the leader and the event's fd close",
		     d->name);
	kutil_getpid_n(PER_CYCLE);
	d->turn(r);
	cr_assert_eq(r->k.n, before + PER_CYCLE + TAIL, "records of a closed ring");
	set_online(f, -1);
	send_uevent(f, "online", f->cpu);
	turn_until_int(d, r, &r->ups, ups + 1, "online callbacks");
	/* The drains of the settle turns (uv, libev) run now, so that the next
	 * cycle's records can come only through the new fd's readiness. */
	for (i = 0; i < SETTLE_TURNS; i++)
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

static void cycles(const struct driver *d, bool uevents, uint32_t flush_ms, int n)
{
	struct perfring_cpu_stats st;
	struct kfdset fds0;
	struct fake f;
	struct run r;
	char why[256];
	int i, fds_on;

	uv_warm_up();
	cr_assert_eq(kutil_fd_snapshot(&fds0), 0);
	fake_up(&f, uevents);
	session(&r, &f, flush_ms);
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
	KCOUNT_EQ(r.k.n, (uint64_t)n * (PER_CYCLE + TAIL));
	d->detach(&r);
	perfring_session_free(r.s);
	fake_down(&f);
	cr_assert_eq(kutil_fd_changed(&fds0, why, sizeof(why)), -1, "%s: %s", d->name, why);
}

TestSuite(hotplug, .timeout = 240);

/* Every slot change reaches each driver: its watch() of the new fd in the
 * same slot is what delivers the records after a return. With no flush, the
 * notifier alone tells of the changes. */
Test(hotplug, uevents_uv) { cycles(&drivers[0], true, PERFRING_FLUSH_NEVER, 3); }
Test(hotplug, uevents_libevent) { cycles(&drivers[1], true, PERFRING_FLUSH_NEVER, 3); }
Test(hotplug, uevents_libev) { cycles(&drivers[2], true, PERFRING_FLUSH_NEVER, 3); }
Test(hotplug, uevents_epoll_wait) { cycles(&drivers[3], true, PERFRING_FLUSH_NEVER, 3); }

/* No notifier: each flush reads the online list again. */
Test(hotplug, sysfs_at_flush_uv) { cycles(&drivers[0], false, 20, 3); }
Test(hotplug, sysfs_at_flush_libevent) { cycles(&drivers[1], false, 20, 3); }
Test(hotplug, sysfs_at_flush_libev) { cycles(&drivers[2], false, 20, 3); }
Test(hotplug, sysfs_at_flush_epoll_wait) { cycles(&drivers[3], false, 20, 3); }

/* 100 leave/return pairs under a getpid load: every record written while
 * the CPU was there is delivered, and no fd is left. */
Test(hotplug, hundred_cycles_lose_nothing)
{
	cycles(&drivers[0], true, PERFRING_FLUSH_NEVER, 100);
	cycles(&drivers[3], true, PERFRING_FLUSH_NEVER, 100);
}
