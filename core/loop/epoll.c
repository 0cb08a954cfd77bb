/* SPDX-License-Identifier: MIT */
/* The built-in driver: what the reactor asks of a loop, done with one epoll
 * set and one timerfd. */
#include "loop/epoll.h"
#include "base/clock.h"
#include "base/sys.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MAX_EVENTS 64
/* epoll data of the timerfd; a ring's is its slot. */
#define TIMER_TOKEN UINT64_MAX

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct pr_epoll *d = loop;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = slot };

	if (pr_epoll_ctl(d->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) < 0)
		return -errno;
	return 0;
}

static int soon(void *loop, bool on)
{
	((struct pr_epoll *)loop)->soon = on;
	return 0;
}

/* One-shot; disarming also consumes a tick that came due meanwhile. */
static int timer(void *loop, uint32_t ms)
{
	struct pr_epoll *d = loop;
	struct itimerspec its = { .it_value = pr_ts_of_ms(ms) };
	uint64_t ticks;

	if (timerfd_settime(d->tfd, 0, &its, NULL) < 0)
		return -errno;
	if (!ms && read(d->tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		ticks = 0; /* EAGAIN: none was due */
	return 0;
}

static void destroy(void *loop)
{
	struct pr_epoll *d = loop;
	struct perfring_reactor *r = d->r;

	d->r = NULL;
	perfring_reactor_destroyed(r);
}

const struct perfring_loop_ops pr_epoll_ops = {
	.sz = sizeof(struct perfring_loop_ops),
	.watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
};

int pr_epoll_open(struct pr_epoll *d, struct pr_errbuf *e)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TIMER_TOKEN };

	*d = (struct pr_epoll){ .epfd = -1, .tfd = -1 };
	d->epfd = pr_epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return pr_err(e, -errno, "epoll_create1: %s", perfring_strerror(-errno));
	/* The timer is a timerfd in the same set, so waits need no timeout:
	 * a timed epoll_wait starts and cancels a kernel timer on every sleep. */
	d->tfd = pr_timerfd_create(TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0)
		return pr_err(e, -errno, "timerfd_create: %s", perfring_strerror(-errno));
	if (pr_epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev) < 0)
		return pr_err(e, -errno, "epoll_ctl(ADD) of the flush timer: %s",
			      perfring_strerror(-errno));
	return 0;
}

void pr_epoll_close(struct pr_epoll *d)
{
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	d->epfd = d->tfd = -1;
}

int pr_epoll_turn(struct pr_epoll *d, int timeout_ms)
{
	struct epoll_event ev[MAX_EVENTS];
	uint64_t ticks;
	int n, k;

	n = epoll_wait(d->epfd, ev, MAX_EVENTS, d->soon ? 0 : timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (k = 0; k < n && d->r; k++) {
		if (ev[k].data.u64 != TIMER_TOKEN)
			perfring_reactor_on_ready(d->r, (size_t)ev[k].data.u64, ev[k].events);
		else if (read(d->tfd, &ticks, sizeof(ticks)) == sizeof(ticks))
			perfring_reactor_on_timer(d->r);
	}
	if (d->soon && d->r) {
		d->soon = false;
		perfring_reactor_on_soon(d->r);
	}
	return 0;
}
