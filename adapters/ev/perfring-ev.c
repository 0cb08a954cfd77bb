/* SPDX-License-Identifier: MIT */
/* libev glue around the core reactor: an ev_io per ring, an ev_timer for the
 * flush, an ev_idle to continue budgeted drains. The reactor decides. */
#include <perfring/perfring-ev.h>

#include <ev.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>

/* What each readiness reads comes before the watchers, on one cache line:
 * a wakeup finds the cache cold. */
struct perfring_libev {
	struct ev_loop *loop;
	struct perfring_reactor *r;
	ev_io *io;              /* one per reactor slot */
	size_t n;
	int depth;              /* our callbacks on the stack */
	bool dead;              /* detached: free when depth drops to 0 */
	bool first;             /* the attach drain is still due */
	ev_timer flush;
	ev_idle more;           /* continues budgeted drains */
};

static void destroy(struct perfring_libev *a)
{
	free(a->io);
	free(a);
}

static void stop_all(struct perfring_libev *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		ev_io_stop(a->loop, &a->io[i]);
	ev_timer_stop(a->loop, &a->flush);
	ev_idle_stop(a->loop, &a->more);
}

/* Returns true when a was detached (and possibly freed): touch nothing. */
static bool leave(struct perfring_libev *a)
{
	a->depth--;
	if (!a->dead)
		return false;
	if (!a->depth)
		destroy(a);
	return true;
}

static void apply(struct perfring_libev *a, size_t i, uint32_t v)
{
	if (a->dead)
		return;
	if (v & PERFRING_REACT_UNWATCH)
		ev_io_stop(a->loop, &a->io[i]);
	if (v & PERFRING_REACT_MORE)
		ev_idle_start(a->loop, &a->more);
}

static void on_io(EV_P_ ev_io *w, int revents)
{
	struct perfring_libev *a = w->data;
	size_t i = (size_t)(w - a->io);
	uint32_t v = 0;

	a->depth++;
	if (revents & EV_ERROR) {
		ev_io_stop(EV_A_ w);
		perfring_reactor_fail(a->r, i, -EIO);
	} else {
		/* libev folds POLLHUP into EV_READ; the reactor checks for it. */
		perfring_reactor_ready(a->r, i, POLLIN, &v);
	}
	apply(a, i, v);
	leave(a);
}

/* Drains every ring; returns whether some still hold records. */
static bool flush_all(struct perfring_libev *a)
{
	size_t left = 0;

	perfring_reactor_flush(a->r, &left);
	return left > 0;
}

/* One budgeted batch on each ring left unfinished. */
static bool continue_drains(struct perfring_libev *a)
{
	uint32_t v, more = 0;
	size_t i;

	for (i = 0; i < a->n && !a->dead; i++) {
		if (!perfring_reactor_pending(a->r, i))
			continue;
		perfring_reactor_ready(a->r, i, 0, &v);
		apply(a, i, v & PERFRING_REACT_UNWATCH);
		more |= v & PERFRING_REACT_MORE;
	}
	return more;
}

/* An idle watcher makes the loop poll without blocking and runs only when
 * nothing else is pending, so timers and other fds get their turn between
 * batches. */
static void on_idle(EV_P_ ev_idle *w, int revents)
{
	struct perfring_libev *a = w->data;
	bool more;

	a->depth++;
	if (a->first) {
		a->first = false;
		more = flush_all(a);
	} else {
		more = continue_drains(a);
	}
	if (!leave(a) && !more)
		ev_idle_stop(EV_A_ w);
}

static void on_flush(EV_P_ ev_timer *w, int revents)
{
	struct perfring_libev *a = w->data;

	a->depth++;
	apply(a, 0, flush_all(a) ? PERFRING_REACT_MORE : 0);
	leave(a);
}

static void start_all(struct perfring_libev *a, const struct perfring_cpu_fd *fds)
{
	double every = perfring_reactor_flush_ms(a->r) / 1000.0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		ev_io_init(&a->io[i], on_io, fds[i].fd, EV_READ);
		a->io[i].data = a;
		ev_io_start(a->loop, &a->io[i]);
	}
	ev_idle_init(&a->more, on_idle);
	a->more.data = a;
	ev_timer_init(&a->flush, on_flush, every, every);
	a->flush.data = a;
	if (every > 0)
		ev_timer_start(a->loop, &a->flush);
}

PERFRING_API int perfring_libev_attach(struct perfring_session *s, struct ev_loop *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libev **out)
{
	const struct perfring_cpu_fd *fds;
	struct perfring_libev *a;
	int err;

	if (out)
		*out = NULL;
	if (!s || !loop || !out)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->loop = loop;
	if ((err = perfring_reactor_new(s, opts, &a->r))) {
		free(a);
		return err;
	}
	a->n = perfring_reactor_fds(a->r, &fds);
	a->io = calloc(a->n ? a->n : 1, sizeof(*a->io));
	if (!a->io) {
		perfring_reactor_free(a->r);
		free(a);
		return -ENOMEM;
	}
	/* ev_io_start registers the fds with the backend only at the next loop
	 * iteration, and epoll_ctl(ADD) consumes a pending readiness: drain
	 * after that, from the idle watcher, instead of now. */
	a->first = true;
	start_all(a, fds);
	ev_idle_start(loop, &a->more);
	*out = a;
	return 0;
}

PERFRING_API void perfring_libev_detach(struct perfring_libev *a)
{
	if (!a || a->dead)
		return;
	a->dead = true;
	perfring_reactor_cancel(a->r);
	stop_all(a);
	perfring_reactor_free(a->r); /* deferred by the reactor while it is busy */
	a->r = NULL;
	if (!a->depth)
		destroy(a);
}
