/* SPDX-License-Identifier: MIT */
/* libevent driver for the core reactor: the four operations in libevent's
 * terms (perfring-event.h lists them). No policy: the reactor decides. */
#include <perfring/perfring-event.h>

#include <event2/event.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	struct perfring_libevent *a;
	struct event *io;       /* NULL when not watched */
};

struct perfring_libevent {
	struct perfring_reactor *r;
	struct event_base *base;
	struct event *timer, *soon;
	struct watch w[];       /* by slot */
};

/* libevent reports EPOLLHUP as plain EV_READ; the reactor asks poll(2). */
static void on_io(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;

	perfring_reactor_on_ready(w->a->r, (size_t)(w - w->a->w), POLLIN);
}

static void on_soon(evutil_socket_t fd, short what, void *a)
{
	perfring_reactor_on_soon(((struct perfring_libevent *)a)->r);
}

static void on_timer(evutil_socket_t fd, short what, void *a)
{
	perfring_reactor_on_timer(((struct perfring_libevent *)a)->r);
}

/* -errno: an allocation failure may leave errno 0, hence -ENOMEM. */
static int add(struct event *ev, const struct timeval *tv)
{
	errno = 0;
	if (event_add(ev, tv) == 0)
		return 0;
	return errno > 0 ? -errno : -ENOMEM;
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libevent *a = loop;
	struct watch *w = &a->w[slot];
	int err = 0;

	if (on) {
		*w = (struct watch){ a, event_new(a->base, fd, EV_READ | EV_PERSIST, on_io, w) };
		err = w->io ? add(w->io, NULL) : -ENOMEM;
	}
	if ((!on || err) && w->io)
		event_free(w->io); /* safe inside its own callback */
	if (!on || err)
		w->io = NULL;
	return err;
}

/* A zero timer: it runs after the events ready now. */
static int soon(void *a, bool on)
{
	struct event *ev = ((struct perfring_libevent *)a)->soon;

	return on ? add(ev, &(struct timeval){ 0, 0 }) : event_del(ev) ? -EINVAL : 0;
}

static int timer(void *a, uint32_t ms)
{
	struct event *ev = ((struct perfring_libevent *)a)->timer;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	return ms ? add(ev, &tv) : event_del(ev) ? -EINVAL : 0;
}

static void destroy(void *loop)
{
	struct perfring_libevent *a = loop;

	if (a->timer)
		event_free(a->timer);
	if (a->soon)
		event_free(a->soon);
	perfring_reactor_destroyed(a->r);
	free(a);
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
};

PERFRING_API int perfring_libevent_attach(struct perfring_session *s, struct event_base *base,
					  const struct perfring_loop_opts *opts,
					  struct perfring_libevent **out)
{
	size_t n = perfring_session_slots(s);
	struct perfring_libevent *a;
	int err;

	if (out)
		*out = NULL;
	if (!out || !s || !base)
		return -EINVAL;
	if (!(a = calloc(1, sizeof(*a) + n * sizeof(a->w[0]))))
		return -ENOMEM;
	a->base = base;
	a->timer = evtimer_new(base, on_timer, a);
	a->soon = evtimer_new(base, on_soon, a);
	if (!a->timer || !a->soon) {
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
	if (a) /* a second call inside a callback finds the reactor freeing */
		perfring_reactor_free(a->r);
}
