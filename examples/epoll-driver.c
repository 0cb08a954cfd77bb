/* SPDX-License-Identifier: MIT */
/* A libperfring loop driver on a plain epoll set (see epoll-driver.h). */
#include "epoll-driver.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define TAG_TIMER (EPOLL_DRIVER_TAGS - 1)

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct epoll_driver *d = loop;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = slot };

	return epoll_ctl(d->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) < 0 ? -errno : 0;
}

static int soon(void *loop, bool on)
{
	((struct epoll_driver *)loop)->soon = on;
	return 0;
}

static int timer(void *loop, uint32_t ms)
{
	struct itimerspec its = { .it_value = { ms / 1000, (ms % 1000) * 1000000L } };

	return timerfd_settime(((struct epoll_driver *)loop)->tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void destroy(void *loop)
{
	perfring_reactor_destroyed(((struct epoll_driver *)loop)->r);
}

const struct perfring_loop_ops epoll_driver_ops = {
	.sz = sizeof(epoll_driver_ops),
	.watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
};

int epoll_driver_open(struct epoll_driver *d, int ep)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_TIMER };

	*d = (struct epoll_driver){ .ep = ep };
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, d->tfd, &ev) < 0)
		return -errno;
	return 0;
}

void epoll_driver_close(struct epoll_driver *d)
{
	if (d->tfd >= 0)
		close(d->tfd);
	d->tfd = -1;
}

int epoll_driver_event(struct epoll_driver *d, const void *epoll_event)
{
	const struct epoll_event *e = epoll_event;
	uint64_t ticks;

	if (e->data.u64 == TAG_TIMER) {
		if (read(d->tfd, &ticks, sizeof(ticks)) == sizeof(ticks))
			perfring_reactor_on_timer(d->r);
		return 1;
	}
	if (e->data.u64 >= EPOLL_DRIVER_TAGS)
		return 0;
	perfring_reactor_on_ready(d->r, (size_t)e->data.u64, e->events);
	return 1;
}

void epoll_driver_after(struct epoll_driver *d)
{
	if (d->soon) {
		d->soon = 0;
		perfring_reactor_on_soon(d->r);
	}
}

int epoll_driver_timeout(const struct epoll_driver *d)
{
	return d->soon ? 0 : -1;
}
