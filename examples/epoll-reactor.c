/* The core alone on your own epoll loop: epoll-driver.c is the whole driver
 * (the four operations of struct perfring_loop_ops); the reactor decides
 * what to drain, continue, flush and unwatch.
 * usage: epoll-reactor [SECONDS]   (as root) */
#include "epoll-driver.h"

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

int main(int argc, char **argv)
{
	struct perfring_session *s = NULL;
	struct epoll_driver d = { .tfd = -1 };
	struct epoll_event evs[64];
	unsigned long count = 0;
	int secs = argc > 1 ? atoi(argv[1]) : 3, ep = epoll_create1(EPOLL_CLOEXEC), n;
	time_t end = time(NULL) + secs;

	if (ep < 0 || setup(&s, &count) || epoll_driver_open(&d, ep) ||
	    perfring_reactor_new(s, NULL, &epoll_driver_ops, &d, &d.r)) {
		fprintf(stderr, "epoll-reactor: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	while (time(NULL) < end) {
		n = epoll_wait(ep, evs, 64, epoll_driver_timeout(&d) ? 1000 : 0);
		for (int i = 0; i < n; i++)
			epoll_driver_event(&d, &evs[i]);
		epoll_driver_after(&d);
	}
	printf("%lu context switches in %d s\n", count, secs);
	perfring_reactor_free(d.r);
	epoll_driver_close(&d);
	close(ep);
	perfring_session_free(s);
	return 0;
}
