/* One session, one thread per CPU: each thread has its own epoll set holding
 * only its CPU's fd and calls parse_for_cpu for it (safe concurrently for
 * different CPUs). The seed request's "pipeline thread per core".
 * usage: thread-per-cpu [SECONDS]   (as root) */
#include <perfring/perfring.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct worker {
	struct perfring_session *s;
	int cpu, fd;
	time_t end;
	unsigned long samples;
};

static int on_switch(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	(void)ctx;
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC), n;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &ev) < 0)
		return NULL;
	while (time(NULL) < w->end) {
		/* The 100 ms timeout flushes records below the watermark. */
		epoll_wait(ep, &ev, 1, 100);
		n = perfring_session_parse_for_cpu(w->s, w->cpu);
		if (n > 0)
			w->samples += (unsigned long)n;
	}
	close(ep);
	return NULL;
}

int main(int argc, char **argv)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	struct worker *w;
	pthread_t *t;
	size_t n;

	if (perfring_session_new(&o, &s) ||
	    perfring_session_add_tracepoint(s, "sched", "sched_switch", &ev) ||
	    perfring_event_set_callback(ev, on_switch, NULL) || perfring_session_start(s)) {
		fprintf(stderr, "thread-per-cpu: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	n = perfring_session_fds(s, &fds);
	w = calloc(n, sizeof(*w));
	t = calloc(n, sizeof(*t));
	for (size_t i = 0; w && t && i < n; i++) {
		w[i] = (struct worker){ s, fds[i].cpu, fds[i].fd, time(NULL) + (argc > 1 ? atoi(argv[1]) : 3), 0 };
		pthread_create(&t[i], NULL, run, &w[i]);
	}
	for (size_t i = 0; w && t && i < n; i++) {
		pthread_join(t[i], NULL);
		printf("cpu %d: %lu context switches\n", w[i].cpu, w[i].samples);
	}
	free(w);
	free(t);
	perfring_session_free(s);
	return 0;
}
