/* SPDX-License-Identifier: MIT */
/* libev driver for the core reactor: the four operations in libev's terms
 * (perfring-ev.h lists them). No policy: the reactor decides. */
#include <perfring/perfring-ev.h>

#include <ev.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	ev_io io;
	struct perfring_libev *a;
};

struct perfring_libev {
	struct perfring_reactor *r;
	struct ev_loop *loop;
	ev_timer timer;
	ev_idle idle;
	struct watch w[];       /* by slot */
};

/* libev reports a hang-up as EV_READ; the reactor asks poll(2). */
static void on_io(EV_P_ ev_io *io, int revents)
{
	struct watch *w = (struct watch *)io;

	perfring_reactor_on_ready(w->a->r, (size_t)(w - w->a->w),
				  (revents & EV_ERROR) ? POLLERR : POLLIN);
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libev *a = loop;
	struct watch *w = &a->w[slot];

	if (!on) {
		ev_io_stop(a->loop, &w->io);
		return 0;
	}
	w->a = a;
	ev_io_init(&w->io, on_io, fd, EV_READ);
	ev_io_start(a->loop, &w->io);
	return 0;
}

static void on_idle(EV_P_ ev_idle *idle, int revents)
{
	ev_idle_stop(EV_A_ idle);
	perfring_reactor_on_soon(((struct perfring_libev *)idle->data)->r);
}

static int soon(void *loop, bool on)
{
	struct perfring_libev *a = loop;

	if (on)
		ev_idle_start(a->loop, &a->idle);
	else
		ev_idle_stop(a->loop, &a->idle);
	return 0;
}

static void on_timer(EV_P_ ev_timer *t, int revents)
{
	perfring_reactor_on_timer(((struct perfring_libev *)t->data)->r);
}

static int timer(void *loop, uint32_t ms)
{
	struct perfring_libev *a = loop;

	ev_timer_stop(a->loop, &a->timer);
	if (ms) {
		ev_timer_set(&a->timer, ms / 1000.0, 0.);
		ev_timer_start(a->loop, &a->timer);
	}
	return 0;
}

/* The reactor stopped every watcher before; nothing of libev's is left. */
static void destroy(void *loop)
{
	struct perfring_libev *a = loop;

	perfring_reactor_destroyed(a->r);
	free(a);
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
	.flags = PERFRING_LOOP_WATCH_LATE, /* fds reach the backend at its next poll */
};

PERFRING_API int perfring_libev_attach(struct perfring_session *s, struct ev_loop *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libev **out)
{
	struct perfring_libev *a;
	int err;

	if (out)
		*out = NULL;
	if (!s || !loop || !out)
		return -EINVAL;
	if (!(a = calloc(1, sizeof(*a) + perfring_session_slots(s) * sizeof(a->w[0]))))
		return -ENOMEM;
	a->loop = loop;
	ev_idle_init(&a->idle, on_idle);
	ev_timer_init(&a->timer, on_timer, 0., 0.);
	a->idle.data = a->timer.data = a;
	*out = a;
	if ((err = perfring_reactor_new(s, opts, &ops, a, &a->r)))
		*out = NULL;
	return err;
}

PERFRING_API void perfring_libev_detach(struct perfring_libev *a)
{
	if (a) /* a second call inside a callback finds the reactor freeing */
		perfring_reactor_free(a->r);
}
