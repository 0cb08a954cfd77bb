/* SPDX-License-Identifier: MIT */
/* libuv glue around the core reactor: a uv_poll_t per ring, a flush timer,
 * and an idle handle that continues budgeted drains. */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	uv_poll_t poll;
	struct perfring_libuv *a;
	size_t i;
};

/* What each readiness reads (r, closing) comes first, on one cache line:
 * a wakeup finds the cache cold. */
struct perfring_libuv {
	struct perfring_reactor *r;
	bool closing;
	int settle;        /* idle passes that still flush every ring */
	size_t n;          /* slots whose poll handle was initialised */
	size_t open;       /* handles not yet through their close callback */
	void (*done)(void *ctx);
	void *done_ctx;
	uv_timer_t flush;
	uv_idle_t idle;
	struct watch slot[];
};

/* libuv registers a watcher with epoll only at its next poll, and that
 * registration consumes a readiness already pending (perf_poll clears it).
 * Flushing on the next two idle passes puts one drain after the registration
 * wherever in the loop attach was called from. */
#define SETTLE_PASSES 2

static void on_idle(uv_idle_t *h);

static void on_closed(uv_handle_t *h)
{
	struct perfring_libuv *a = h->data;
	void (*done)(void *ctx) = a->done;
	void *ctx = a->done_ctx;

	if (--a->open)
		return;
	perfring_reactor_free(a->r);
	free(a);
	if (done)
		done(ctx);
}

static void close_handle(struct perfring_libuv *a, uv_handle_t *h)
{
	h->data = a;
	uv_close(h, on_closed);
}

/* Closing stops every handle now, so no libuv callback of ours runs again;
 * cancelling stops the drain in progress, if any. */
static void close_all(struct perfring_libuv *a)
{
	size_t i;

	a->closing = true;
	perfring_reactor_cancel(a->r);
	for (i = 0; i < a->n; i++)
		close_handle(a, (uv_handle_t *)&a->slot[i].poll);
	close_handle(a, (uv_handle_t *)&a->flush);
	close_handle(a, (uv_handle_t *)&a->idle);
}

/* Acts on a reactor verdict, unless a callback detached meanwhile. */
static void obey(struct perfring_libuv *a, struct watch *sl, uint32_t v)
{
	if (a->closing)
		return;
	if (v & PERFRING_REACT_UNWATCH)
		uv_poll_stop(&sl->poll);
	if (v & PERFRING_REACT_MORE)
		uv_idle_start(&a->idle, on_idle);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct watch *sl = p->data;
	struct perfring_libuv *a = sl->a;
	uint32_t revents = 0, v = 0;

	if (status < 0) {
		perfring_reactor_ready(a->r, sl->i, 0, NULL);
		perfring_reactor_fail(a->r, sl->i, status);
		obey(a, sl, PERFRING_REACT_UNWATCH);
		return;
	}
	if (events & UV_READABLE)
		revents |= POLLIN;
	if (events & UV_DISCONNECT)
		revents |= POLLHUP;
	perfring_reactor_ready(a->r, sl->i, revents, &v);
	obey(a, sl, v);
}

static void on_flush(uv_timer_t *t)
{
	struct perfring_libuv *a = t->data;
	size_t more = 0;

	perfring_reactor_flush(a->r, &more);
	if (more && !a->closing)
		uv_idle_start(&a->idle, on_idle);
}

/* Runs between loop iterations while drains are unfinished: the settling
 * flushes, then one budgeted batch per ring with records left. */
static void on_idle(uv_idle_t *h)
{
	struct perfring_libuv *a = h->data;
	size_t i, more = 0;
	uint32_t v;

	if (a->settle) {
		a->settle--;
		perfring_reactor_flush(a->r, &more);
	} else {
		for (i = 0; i < a->n && !a->closing; i++) {
			if (!perfring_reactor_pending(a->r, i))
				continue;
			perfring_reactor_ready(a->r, i, 0, &v);
			obey(a, &a->slot[i], v);
			more += !!(v & PERFRING_REACT_MORE);
		}
	}
	if (!more && !a->settle && !a->closing)
		uv_idle_stop(h);
}

static int add_watch(struct perfring_libuv *a, uv_loop_t *loop, const struct perfring_cpu_fd *fd)
{
	struct watch *sl = &a->slot[a->n];
	int err;

	if ((err = uv_poll_init(loop, &sl->poll, fd->fd)))
		return err;
	sl->a = a;
	sl->i = a->n++;
	a->open++;
	sl->poll.data = sl;
	return uv_poll_start(&sl->poll, UV_READABLE | UV_DISCONNECT, on_poll);
}

static int start(struct perfring_libuv *a, uv_loop_t *loop)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_reactor_fds(a->r, &fds);
	uint32_t ms = perfring_reactor_flush_ms(a->r);
	int err;

	uv_timer_init(loop, &a->flush);
	uv_idle_init(loop, &a->idle);
	a->flush.data = a->idle.data = a;
	a->open = 2;
	for (i = 0; i < n; i++)
		if ((err = add_watch(a, loop, &fds[i])))
			return err;
	if (ms && (err = uv_timer_start(&a->flush, on_flush, ms, ms)))
		return err;
	a->settle = SETTLE_PASSES;
	return uv_idle_start(&a->idle, on_idle);
}

PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out)
{
	struct perfring_reactor *r;
	struct perfring_libuv *a;
	int err;

	if (!s || !loop || !out)
		return -EINVAL;
	*out = NULL;
	if ((err = perfring_reactor_new(s, opts, &r)))
		return err;
	a = calloc(1, sizeof(*a) + perfring_reactor_fds(r, NULL) * sizeof(a->slot[0]));
	if (!a) {
		perfring_reactor_free(r);
		return -ENOMEM;
	}
	a->r = r;
	if ((err = start(a, loop))) {
		close_all(a);
		return err;
	}
	*out = a;
	perfring_reactor_flush(r, NULL);
	return 0;
}

PERFRING_API void perfring_libuv_detach(struct perfring_libuv *a, void (*done)(void *ctx),
					void *ctx)
{
	if (!a || a->closing)
		return;
	a->done = done;
	a->done_ctx = ctx;
	close_all(a);
}
