/* SPDX-License-Identifier: MIT */
/* The real CPU hotplug check's program (scripts/hotplug-test, opt-in, root;
 * never in make check): one following session, on libuv, on a caller's epoll
 * driver, in parse_for_duration or in a level-2 loop of its own
 * (perfring_session_hotplug_fd/_sync), while a getpid generator per possible CPU
 * writes records on its CPU whenever the session watches it. It runs for
 * SECONDS, then checks that every record written was delivered, that the cpu
 * callback fired as often as it was told (CHANGES) and that the fds are back
 * to where they were at start. Prints one line; exit 0 when all holds. */
#include "kutil.h"
#include "epoll-driver.h"

#include <perfring/perfring-uv.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_GEN 64
#define BATCH 100

struct gen {
	pthread_t t;
	int cpu, tid;
	long calls;
};

static struct perfring_session *s;
static struct kcount k;
static struct gen gens[MAX_GEN];
static int ngen, changes;
static volatile bool watched[MAX_GEN], stop, ready[MAX_GEN];

static void on_cpu(int cpu, bool online, void *ctx)
{
	(void)ctx;
	changes++;
	if (cpu >= 0 && cpu < MAX_GEN)
		__atomic_store_n(&watched[cpu], online, __ATOMIC_RELEASE);
	fprintf(stderr, "hotplug_real: CPU %d %s\n", cpu, online ? "joined" : "left");
}

/* Writes only on its own CPU, and only while the session watches it: a
 * CPU back online is not read until the session has reopened it. A batch
 * that a going offline moves to another CPU lands in that CPU's ring. */
static void *gen_main(void *arg)
{
	struct gen *g = arg;
	cpu_set_t set;

	g->tid = (int)syscall(SYS_gettid);
	__atomic_store_n(&ready[g - gens], true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		if (!__atomic_load_n(&watched[g->cpu], __ATOMIC_ACQUIRE) ||
		    sched_setaffinity(0, sizeof(set), &set) || sched_getcpu() != g->cpu) {
			usleep(1000);
			continue;
		}
		kutil_getpid_n(BATCH);
		g->calls += BATCH;
		usleep(1000);
	}
	return NULL;
}

/* The fds are counted inside the loop, at its first and last look, so
 * that the loop's own fds are in both. */
static int fds0 = -1, fds1 = -1;

static bool until(void *ctx)
{
	bool done = kutil_now_ns() >= *(uint64_t *)ctx;

	if (fds0 < 0)
		fds0 = kutil_fd_count();
	if (done)
		fds1 = kutil_fd_count();
	return done;
}

static void on_uv_timer(uv_timer_t *t)
{
	if (until(t->data))
		uv_stop(t->loop);
}

static int run_uv(uint64_t end)
{
	struct perfring_libuv *a;
	uv_timer_t t;
	uv_loop_t loop;
	int err;

	uv_loop_init(&loop);
	if ((err = perfring_libuv_attach(s, &loop, NULL, &a)))
		return err;
	uv_timer_init(&loop, &t);
	t.data = &end;
	uv_timer_start(&t, on_uv_timer, 50, 50);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&t, NULL);
	perfring_libuv_detach(a, NULL, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	return uv_loop_close(&loop);
}

static int run_epoll(uint64_t end)
{
	struct epoll_driver d = { .tfd = -1 };
	struct epoll_event evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, i, err;

	if (ep < 0 || (err = epoll_driver_open(&d, ep)) ||
	    (err = perfring_reactor_new(s, NULL, &epoll_driver_ops, &d, &d.r)))
		return ep < 0 ? -errno : err;
	while (!until(&end)) {
		n = epoll_wait(ep, evs, 64, epoll_driver_timeout(&d) ? 50 : 0);
		for (i = 0; i < n; i++)
			epoll_driver_event(&d, &evs[i]);
		epoll_driver_after(&d);
	}
	perfring_reactor_free(d.r);
	epoll_driver_close(&d);
	close(ep);
	return 0;
}

/* A loop of one's own: the rings' fds and the notifier in one epoll set,
 * parse_for_cpu on readiness, a hotplug sync when the notifier is readable
 * and every 100 ms; a returning CPU's new fd joins the set after a sync. */
#define NOTIFIER UINT64_MAX

static int level2_watch(int ep)
{
	struct epoll_event e = { .events = EPOLLIN };
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(s, &fds);

	for (i = 0; i < n; i++) {
		e.data.u64 = (uint64_t)fds[i].cpu;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i].fd, &e) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

static int level2_sync(int ep)
{
	int err = perfring_session_hotplug_sync(s);

	return err < 0 ? err : level2_watch(ep);
}

static int run_level2(uint64_t end)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = NOTIFIER }, evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), nfd = perfring_session_hotplug_fd(s), n, i;
	uint64_t flushed = kutil_now_ns();
	int err = ep < 0 ? -errno : 0;

	if (!err && nfd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, nfd, &e))
		err = -errno;
	if (!err)
		err = level2_watch(ep);
	while (err >= 0 && !until(&end)) {
		n = epoll_wait(ep, evs, 64, 100);
		for (i = 0; i < n && err >= 0; i++)
			err = evs[i].data.u64 == NOTIFIER ? level2_sync(ep)
			      : perfring_session_parse_for_cpu(s, (int)evs[i].data.u64);
		if (err >= 0 && kutil_now_ns() - flushed >= 100000000ull) {
			flushed = kutil_now_ns();
			err = level2_sync(ep);
			for (i = 0; i < ngen && err >= 0; i++)
				if (perfring_session_fd_for_cpu(s, i) >= 0)
					err = perfring_session_parse_for_cpu(s, i);
		}
	}
	if (ep >= 0)
		close(ep);
	return err < 0 ? err : 0;
}

static int setup(void)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096,
				   .follow_hotplug = 1 };
	struct perfring_event *ev;
	char filter[MAX_GEN * 24] = "";
	size_t len = 0;
	int i, err;

	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev)))
		return err;
	for (i = 0; i < ngen; i++)
		len += (size_t)snprintf(filter + len, sizeof(filter) - len, "%scommon_pid == %d",
					i ? " || " : "", gens[i].tid);
	if ((err = perfring_event_set_filter(ev, filter)) ||
	    (err = perfring_event_set_callback(ev, kutil_count_cb, &k)) ||
	    (err = perfring_session_set_cpu_callback(s, on_cpu, NULL)) ||
	    (err = perfring_session_start(s)))
		return err;
	return 0;
}

/* A generator for every possible CPU, each waiting until the session
 * watches its CPU; their tids go into the session's filter. */
static int start_gens(void)
{
	struct perfring_opts po = { .sz = sizeof(po), .follow_hotplug = 1 };
	struct perfring_session *probe;
	int g, err;

	if ((err = perfring_session_new(&po, &probe)))
		return err;
	ngen = (int)perfring_session_slots(probe) - 1;
	perfring_session_free(probe);
	if (ngen > MAX_GEN)
		ngen = MAX_GEN;
	for (g = 0; g < ngen; g++) {
		gens[g].cpu = g;
		if (pthread_create(&gens[g].t, NULL, gen_main, &gens[g]))
			return -EAGAIN;
	}
	for (g = 0; g < ngen; g++)
		while (!__atomic_load_n(&ready[g], __ATOMIC_ACQUIRE))
			usleep(1000);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double secs = argc > 2 ? atof(argv[2]) : 0;
	int want = argc > 3 ? atoi(argv[3]) : -1, err, g;
	uint64_t end, calls = 0;

	if (argc != 4 || secs <= 0) {
		fprintf(stderr, "usage: %s uv|epoll|duration|level2 SECONDS CHANGES\n", argv[0]);
		return 2;
	}
	if ((err = start_gens()))
		goto fail;
	if ((err = setup()))
		goto fail;
	for (g = 0; g < ngen; g++)
		watched[g] = perfring_session_fd_for_cpu(s, g) >= 0;
	end = kutil_now_ns() + (uint64_t)(secs * 1e9);
	if (!strcmp(mode, "uv"))
		err = run_uv(end);
	else if (!strcmp(mode, "epoll"))
		err = run_epoll(end);
	else if (!strcmp(mode, "duration"))
		err = perfring_session_parse_until(s, until, &end);
	else if (!strcmp(mode, "level2"))
		err = run_level2(end);
	else
		err = -EINVAL;
	if (err < 0)
		goto fail;
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (g = 0; g < ngen; g++) {
		pthread_join(gens[g].t, NULL);
		calls += (uint64_t)gens[g].calls;
	}
	perfring_session_stop(s);
	perfring_session_parse_all(s);
	printf("hotplug_real %s: %llu of %llu records delivered, %llu lost, %d cpu callbacks "
	       "(want %d), fds %d at start and %d at the end\n", mode,
	       (unsigned long long)k.n, (unsigned long long)calls,
	       (unsigned long long)kutil_stats(s).lost, changes, want, fds0, fds1);
	err = k.n == calls && changes == want && fds0 >= 0 && fds0 == fds1 && !kutil_stats(s).lost;
	perfring_session_free(s);
	return err ? 0 : 1;
fail:
	fprintf(stderr, "hotplug_real %s: %s (%s)\n", mode, perfring_session_last_error(s),
		perfring_strerror(err));
	return 1;
}
