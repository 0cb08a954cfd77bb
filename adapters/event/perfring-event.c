/* SPDX-License-Identifier: MIT */
/* libevent driver for the core reactor. The four operations, in libevent terms:
 *   watch(slot, fd, on)  an EV_READ|EV_PERSIST event per watched slot: new+add / free
 *   soon(on)             a zero-timeout timer event: add / del
 *   timer(ms)            a one-shot timer event: add / del
 *   destroy()            frees the timers and the adapter, then
 *                        perfring_reactor_destroyed (synchronous) */
#include <perfring/perfring-event.h>

#include <event2/event.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	struct event *io;
	struct perfring_libevent *a;
	size_t slot;
};

struct perfring_libevent {
	struct perfring_reactor *r;
	struct event_base *base;
	struct watch **w;       /* by slot; NULL when not watched */
	size_t n;
	struct event *timer, *soon;
	bool detaching;
};

/* libevent reports EPOLLHUP as plain EV_READ; the reactor checks for it. */
static void on_io(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;

	perfring_reactor_on_ready(w->a->r, w->slot, POLLIN);
}

static int add(struct event *ev, uint32_t ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	errno = 0;
	if (event_add(ev, ms == UINT32_MAX ? NULL : &tv) == 0)
		return 0;
	return errno > 0 ? -errno : -ENOMEM;
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libevent *a = loop;
	struct watch *w;
	int err;

	if (slot >= a->n)
		return -EINVAL;
	if (!on) {
		w = a->w[slot];
		a->w[slot] = NULL;
		event_free(w->io); /* safe inside its own callback */
		free(w);
		return 0;
	}
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	*w = (struct watch){ .a = a, .slot = slot };
	w->io = event_new(a->base, fd, EV_READ | EV_PERSIST, on_io, w);
	err = w->io ? add(w->io, UINT32_MAX) : -ENOMEM;
	if (err && w->io)
		event_free(w->io);
	if (err)
		free(w);
	else
		a->w[slot] = w;
	return err;
}

static void on_soon(evutil_socket_t fd, short what, void *a)
{
	perfring_reactor_on_soon(((struct perfring_libevent *)a)->r);
}

static int soon(void *a, bool on)
{
	struct event *ev = ((struct perfring_libevent *)a)->soon;

	return on ? add(ev, 0) : event_del(ev) ? -EINVAL : 0;
}

static void on_timer(evutil_socket_t fd, short what, void *a)
{
	perfring_reactor_on_timer(((struct perfring_libevent *)a)->r);
}

static int timer(void *a, uint32_t ms)
{
	struct event *ev = ((struct perfring_libevent *)a)->timer;

	return ms ? add(ev, ms) : event_del(ev) ? -EINVAL : 0;
}

static void destroy(void *loop)
{
	struct perfring_libevent *a = loop;

	if (a->timer)
		event_free(a->timer);
	if (a->soon)
		event_free(a->soon);
	perfring_reactor_destroyed(a->r);
	free(a->w);
	free(a);
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
};

PERFRING_API int perfring_libevent_attach(struct perfring_session *s, struct event_base *base,
					  const struct perfring_loop_opts *opts,
					  struct perfring_libevent **out)
{
	struct perfring_libevent *a;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s || !base || !(a = calloc(1, sizeof(*a))))
		return !s || !base ? -EINVAL : -ENOMEM;
	a->base = base;
	a->n = perfring_session_fds(s, NULL);
	a->w = calloc(a->n + 1, sizeof(*a->w));
	a->timer = evtimer_new(base, on_timer, a);
	a->soon = evtimer_new(base, on_soon, a);
	if (!a->w || !a->timer || !a->soon) {
		destroy(a);
		return -ENOMEM;
	}
	*out = a;
	if ((err = perfring_reactor_new(s, opts, &ops, a, &a->r)))
		*out = NULL;
	return err;
}

PERFRING_API void perfring_libevent_detach(struct perfring_libevent *a)
{
	if (!a || a->detaching)
		return;
	a->detaching = true;
	perfring_reactor_free(a->r);
}
