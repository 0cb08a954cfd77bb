/* The core alone on your own epoll loop: every CPU's ring fd in one epoll
 * set, the shared reactor logic deciding what to drain, continue and unwatch,
 * and epoll_wait's timeout doing the flush.
 * usage: epoll-reactor [SECONDS]   (as root) */
#include <perfring/perfring.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int on_switch(const struct perfring_sample *s, void *ctx)
{
	(void)s;
	++*(unsigned long *)ctx;
	return 0;
}

static int setup(struct perfring_session **s, unsigned long *count)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	struct perfring_event *ev;

	if (perfring_session_new(&o, s) ||
	    perfring_session_add_tracepoint(*s, "sched", "sched_switch", &ev) ||
	    perfring_event_set_callback(ev, on_switch, count) || perfring_session_start(*s))
		return -1;
	return 0;
}

/* Registers every slot of the reactor in a new epoll set. */
static int watch_all(struct perfring_reactor *r)
{
	const struct perfring_cpu_fd *fds;
	size_t n = perfring_reactor_fds(r, &fds);
	int ep = epoll_create1(EPOLL_CLOEXEC);

	for (size_t i = 0; ep >= 0 && i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i].fd, &ev) < 0)
			return -1;
	}
	return ep;
}

static void serve(struct perfring_reactor *r, int ep, time_t end)
{
	const struct perfring_cpu_fd *fds;
	struct epoll_event evs[64];
	size_t pending = 0;
	uint32_t v;

	perfring_reactor_fds(r, &fds);
	/* Adding the fds to epoll consumed any readiness already pending. */
	perfring_reactor_flush(r, &pending);
	while (time(NULL) < end) {
		int n = epoll_wait(ep, evs, 64, pending ? 0 : perfring_reactor_next_flush_ms(r));

		for (int i = 0; i < n; i++) {
			size_t slot = evs[i].data.u64;

			perfring_reactor_ready(r, slot, evs[i].events, &v);
			if (v & PERFRING_REACT_UNWATCH)
				epoll_ctl(ep, EPOLL_CTL_DEL, fds[slot].fd, NULL);
		}
		if (pending || perfring_reactor_next_flush_ms(r) == 0)
			perfring_reactor_flush(r, &pending);
	}
}

int main(int argc, char **argv)
{
	struct perfring_session *s = NULL;
	struct perfring_reactor *r = NULL;
	unsigned long count = 0;
	int secs = argc > 1 ? atoi(argv[1]) : 3, ep = -1;

	if (setup(&s, &count) || perfring_reactor_new(s, NULL, &r) || (ep = watch_all(r)) < 0) {
		fprintf(stderr, "epoll-reactor: %s\n", perfring_session_last_error(s));
		perfring_reactor_free(r);
		perfring_session_free(s);
		return 1;
	}
	serve(r, ep, time(NULL) + secs);
	printf("%lu context switches in %d s\n", count, secs);
	close(ep);
	perfring_reactor_free(r);
	perfring_session_free(s);
	return 0;
}
