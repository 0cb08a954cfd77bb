/* SPDX-License-Identifier: MIT */
/* libevent glue around the core reactor: one EV_READ event and one
 * continuation timer per ring, one flush timer. */
#include <perfring/perfring-event.h>

#include <event2/event.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct ev_slot {
	struct perfring_libevent *a;
	size_t i;
	struct event *io;   /* EV_READ|EV_PERSIST on the ring's fd */
	struct event *more; /* zero-timeout timer: continues a budgeted drain */
};

struct perfring_libevent {
	struct perfring_reactor *r;
	struct ev_slot *sl;
	size_t n;
	struct event *flush; /* NULL when flushing is off */
	int depth;           /* our callbacks on the stack */
	bool detached;
};

static void drop(struct event *ev, bool free_it)
{
	if (ev && free_it)
		event_free(ev);
	else if (ev)
		event_del(ev);
}

/* Deletes every event from the base, or frees them (which deletes too). */
static void drop_all(struct perfring_libevent *a, bool free_them)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		drop(a->sl[i].io, free_them);
		drop(a->sl[i].more, free_them);
	}
	drop(a->flush, free_them);
}

static void destroy(struct perfring_libevent *a)
{
	drop_all(a, true);
	perfring_reactor_free(a->r);
	free(a->sl);
	free(a);
}

/* Ends one of our callbacks. Freeing an event or its state from inside its
 * own callback is what detach must not do, so the outermost callback frees. */
static void leave(struct perfring_libevent *a)
{
	if (--a->depth == 0 && a->detached)
		destroy(a);
}

static void follow(struct ev_slot *sl, uint32_t verdict)
{
	static const struct timeval now = { 0, 0 };

	if (verdict & PERFRING_REACT_UNWATCH) {
		event_del(sl->io);
		event_del(sl->more);
	} else if ((verdict & PERFRING_REACT_MORE) && event_add(sl->more, &now) < 0) {
		perfring_reactor_fail(sl->a->r, sl->i, -ENOMEM);
		event_del(sl->io);
	}
}

static void run(struct ev_slot *sl, uint32_t revents)
{
	struct perfring_libevent *a = sl->a;
	uint32_t v;

	a->depth++;
	/* libevent reports EPOLLHUP as plain EV_READ; the reactor checks for it. */
	perfring_reactor_ready(a->r, sl->i, revents, &v);
	if (!a->detached)
		follow(sl, v);
	leave(a);
}

static void on_io(evutil_socket_t fd, short what, void *arg)
{
	run(arg, POLLIN);
}

static void on_more(evutil_socket_t fd, short what, void *arg)
{
	run(arg, 0);
}

static void drain_all(struct perfring_libevent *a)
{
	size_t i, more = 0;

	perfring_reactor_flush(a->r, &more);
	for (i = 0; more && i < a->n && !a->detached; i++)
		if (perfring_reactor_pending(a->r, i))
			follow(&a->sl[i], PERFRING_REACT_MORE);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	struct perfring_libevent *a = arg;

	a->depth++;
	drain_all(a);
	leave(a);
}

static int make_events(struct perfring_libevent *a, struct event_base *base)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_reactor_fds(a->r, &fds);

	a->sl = calloc(n ? n : 1, sizeof(*a->sl));
	if (!a->sl)
		return -ENOMEM;
	for (a->n = n, i = 0; i < n; i++) {
		a->sl[i] = (struct ev_slot){ .a = a, .i = i };
		a->sl[i].io = event_new(base, fds[i].fd, EV_READ | EV_PERSIST, on_io, &a->sl[i]);
		a->sl[i].more = evtimer_new(base, on_more, &a->sl[i]);
		if (!a->sl[i].io || !a->sl[i].more)
			return -ENOMEM;
	}
	if (perfring_reactor_flush_ms(a->r)) {
		a->flush = event_new(base, -1, EV_PERSIST, on_flush, a);
		if (!a->flush)
			return -ENOMEM;
	}
	return 0;
}

static int add_one(struct event *ev, const struct timeval *tv)
{
	errno = 0;
	if (event_add(ev, tv) == 0)
		return 0;
	return errno > 0 ? -errno : -ENOMEM;
}

static int add_events(struct perfring_libevent *a)
{
	uint32_t ms = perfring_reactor_flush_ms(a->r);
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	size_t i;
	int err;

	for (i = 0; i < a->n; i++)
		if ((err = add_one(a->sl[i].io, NULL)))
			return err;
	return a->flush ? add_one(a->flush, &tv) : 0;
}

PERFRING_API int perfring_libevent_attach(struct perfring_session *s, struct event_base *base,
					  const struct perfring_loop_opts *opts,
					  struct perfring_libevent **out)
{
	struct perfring_libevent *a;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s || !base)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if ((err = perfring_reactor_new(s, opts, &a->r)) || (err = make_events(a, base)) ||
	    (err = add_events(a))) {
		destroy(a);
		return err;
	}
	/* Registering a fd polls it, which consumes a readiness already pending. */
	a->depth++;
	drain_all(a);
	a->depth--;
	*out = a;
	return 0;
}

PERFRING_API void perfring_libevent_detach(struct perfring_libevent *a)
{
	if (!a || a->detached)
		return;
	a->detached = true;
	if (!a->depth) {
		destroy(a);
		return;
	}
	/* Inside one of our callbacks (which covers perfring_reactor_busy()):
	 * stop delivery now, free when the outermost callback returns. */
	perfring_reactor_cancel(a->r);
	drop_all(a, false);
}
