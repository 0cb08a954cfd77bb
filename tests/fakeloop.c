/* SPDX-License-Identifier: MIT */
/* A loop driver for tests that records what the reactor asks of it. */
#include "fakeloop.h"

#include <errno.h>
#include <poll.h>

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct fakeloop *l = loop;

	if (slot >= FAKELOOP_SLOTS || l->watched[slot] == on)
		return -EINVAL; /* the reactor never asks twice */
	if (on && ++l->watches == l->fail_watch)
		return -EIO;
	l->unwatches += !on;
	l->watched[slot] = on;
	l->fd[slot] = fd;
	return 0;
}

static int soon(void *loop, bool on)
{
	struct fakeloop *l = loop;

	l->soons += on;
	l->soon = on;
	return 0;
}

static int timer(void *loop, uint32_t ms)
{
	struct fakeloop *l = loop;

	l->timers += ms > 0;
	l->timer_ms = ms;
	return 0;
}

static void destroy(void *loop)
{
	struct fakeloop *l = loop;

	l->destroys++;
	if (l->in_destroy)
		l->in_destroy(l);
	if (l->late_destroyed)
		return;
	l->destroyed = true;
	perfring_reactor_destroyed(l->r);
}

const struct perfring_loop_ops fakeloop_ops = {
	.sz = sizeof(fakeloop_ops), .watch = watch, .soon = soon, .timer = timer,
	.destroy = destroy,
};

int fakeloop_soon_turns(struct fakeloop *l, int max)
{
	int n = 0;

	while (l->soon && n < max && !l->destroyed) {
		l->soon = false;
		perfring_reactor_on_soon(l->r);
		n++;
	}
	return n;
}

int fakeloop_poll(struct fakeloop *l)
{
	struct pollfd p;
	int ready = 0;

	for (size_t i = 0; i < FAKELOOP_SLOTS && !l->destroyed; i++) {
		if (!l->watched[i])
			continue;
		p = (struct pollfd){ .fd = l->fd[i], .events = POLLIN };
		if (poll(&p, 1, 0) == 1) {
			ready++;
			perfring_reactor_on_ready(l->r, i, (uint32_t)p.revents);
		}
	}
	return ready;
}
