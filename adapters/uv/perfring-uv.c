/* SPDX-License-Identifier: MIT */
/* libuv driver for the core reactor: the four operations in libuv's terms
 * (perfring-uv.h lists them). No policy: the reactor decides. */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	uv_poll_t poll;         /* .data: the adapter */
	int fd;                 /* the fd poll was made for; -1: not made */
};

struct perfring_libuv {
	struct perfring_reactor *r;
	uv_loop_t *loop;
	size_t open, n;         /* open: made and not through their close callback */
	uv_timer_t timer;
	uv_idle_t idle;
	struct watch w[];       /* by slot */
};

/* Drops one handle (or destroy's hold); the last frees the reactor (which
 * calls detach's done), then us. */
static void release(struct perfring_libuv *a)
{
	if (--a->open)
		return;
	perfring_reactor_destroyed(a->r);
	free(a);
}

static void on_closed(uv_handle_t *h)
{
	release(h->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct perfring_libuv *a = p->data;

	perfring_reactor_on_ready(a->r, (size_t)((struct watch *)p - a->w),
				  (status < 0 ? POLLERR : 0) | ((events & UV_READABLE) ? POLLIN : 0) |
				  ((events & UV_DISCONNECT) ? POLLHUP : 0));
}

/* The timer and the idle handle are made by the first operation, so that
 * an attach refused before any leaves nothing on the loop. */
static struct perfring_libuv *ready(void *loop)
{
	struct perfring_libuv *a = loop;

	if (!a->timer.loop) { /* uv_timer_init and uv_idle_init cannot fail */
		uv_timer_init(a->loop, &a->timer);
		uv_idle_init(a->loop, &a->idle);
		a->timer.data = a->idle.data = a;
		a->open += 2;
	}
	return a;
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libuv *a = ready(loop);
	struct watch *w = &a->w[slot];
	int err;

	if (!on)
		return uv_poll_stop(&w->poll);
	if (w->fd >= 0 && w->fd != fd)
		return -EBUSY; /* a slot's new fd would need a handle of its own */
	if (w->fd < 0 && (err = uv_poll_init(a->loop, &w->poll, fd)))
		return err;
	a->open += w->fd < 0;
	w->poll.data = a;
	w->fd = fd;
	return uv_poll_start(&w->poll, UV_READABLE | UV_DISCONNECT, on_poll);
}

static void on_idle(uv_idle_t *h)
{
	uv_idle_stop(h);
	perfring_reactor_on_soon(((struct perfring_libuv *)h->data)->r);
}

static void on_timer(uv_timer_t *t)
{
	perfring_reactor_on_timer(((struct perfring_libuv *)t->data)->r);
}

static int soon(void *loop, bool on)
{
	struct perfring_libuv *a = ready(loop);

	return on ? uv_idle_start(&a->idle, on_idle) : uv_idle_stop(&a->idle);
}

static int timer(void *loop, uint32_t ms)
{
	struct perfring_libuv *a = ready(loop);

	return ms ? uv_timer_start(&a->timer, on_timer, ms, 0) : uv_timer_stop(&a->timer);
}

static void destroy(void *loop)
{
	struct perfring_libuv *a = loop;
	size_t i;

	a->open++; /* held until every close is asked for: with none, we end here */
	for (i = 0; i < a->n; i++)
		if (a->w[i].fd >= 0)
			uv_close((uv_handle_t *)&a->w[i].poll, on_closed);
	if (a->timer.loop) {
		uv_close((uv_handle_t *)&a->timer, on_closed);
		uv_close((uv_handle_t *)&a->idle, on_closed);
	}
	release(a);
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
	.flags = PERFRING_LOOP_WATCH_LATE, /* fds reach the backend at its next poll */
};

PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out)
{
	size_t n = s ? perfring_session_fds(s, NULL) : 0, i;
	struct perfring_libuv *a;
	int err;

	if (!s || !loop || !out)
		return -EINVAL;
	if (!(*out = a = calloc(1, sizeof(*a) + n * sizeof(a->w[0]))))
		return -ENOMEM;
	a->loop = loop;
	for (a->n = n, i = 0; i < n; i++)
		a->w[i].fd = -1;
	if ((err = perfring_reactor_new(s, opts, &ops, a, &a->r)))
		*out = NULL;
	return err;
}

PERFRING_API void perfring_libuv_detach(struct perfring_libuv *a, void (*done)(void *ctx),
					void *ctx)
{
	if (a) /* a second call before done finds the reactor freeing: nothing */
		perfring_reactor_free_then(a->r, done, ctx);
}
