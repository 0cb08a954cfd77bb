/* One session, one thread per CPU: each thread runs its own reactor over its
 * CPU alone, on its own epoll set (epoll-driver.c), so CPUs are parsed in
 * parallel (safe for different CPUs). The seed request's "pipeline thread
 * per core". The reactors are made on the main thread: attaching is not
 * thread-safe, driving each one from its own thread is.
 * usage: thread-per-cpu [SECONDS]   (as root) */
#include "epoll-driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct worker {
	int cpu, ep;
	struct epoll_driver d;
	time_t end;
	unsigned long samples;
};

static int on_switch(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	__atomic_fetch_add((unsigned long *)ctx, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[8];
	int n;

	while (time(NULL) < w->end) {
		n = epoll_wait(w->ep, evs, 8, epoll_driver_timeout(&w->d) ? 1000 : 0);
		for (int i = 0; i < n; i++)
			epoll_driver_event(&w->d, &evs[i]);
		epoll_driver_after(&w->d);
	}
	return NULL;
}

/* The worker's epoll set, its driver, and a reactor over its CPU. */
static int attach(struct perfring_session *s, struct worker *w)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .cpus = &w->cpu, .cpu_cnt = 1 };

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	if (w->ep < 0 || epoll_driver_open(&w->d, w->ep))
		return -1;
	return perfring_reactor_new(s, &lo, &epoll_driver_ops, &w->d, &w->d.r);
}

int main(int argc, char **argv)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	unsigned long total = 0;
	struct worker *w;
	pthread_t *t;
	size_t n, i;
	int ok = 1;

	if (perfring_session_new(&o, &s) ||
	    perfring_session_add_tracepoint(s, "sched", "sched_switch", &ev) ||
	    perfring_event_set_callback(ev, on_switch, &total) || perfring_session_start(s)) {
		fprintf(stderr, "thread-per-cpu: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	n = perfring_session_fds(s, &fds);
	w = calloc(n, sizeof(*w));
	t = calloc(n, sizeof(*t));
	ok = w && t;
	for (i = 0; ok && i < n; i++)
		w[i] = (struct worker){ .cpu = fds[i].cpu, .ep = -1, .d.tfd = -1,
					.end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3) };
	for (i = 0; ok && i < n; i++)
		ok = attach(s, &w[i]) == 0;
	for (i = 0; ok && i < n; i++)
		pthread_create(&t[i], NULL, run, &w[i]);
	for (i = 0; ok && i < n; i++)
		pthread_join(t[i], NULL);
	if (!ok)
		fprintf(stderr, "thread-per-cpu: %s\n", perfring_session_last_error(s));
	printf("%lu context switches on %zu CPUs\n", total, n);
	for (i = 0; w && t && i < n; i++) {
		perfring_reactor_free(w[i].d.r);
		epoll_driver_close(&w[i].d);
		if (w[i].ep >= 0)
			close(w[i].ep);
	}
	free(w);
	free(t);
	perfring_session_free(s);
	return !ok;
}
