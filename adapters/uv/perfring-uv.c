/* SPDX-License-Identifier: MIT */
/* libuv driver for the core reactor: the four operations in libuv's terms
 * (perfring-uv.h lists them). No policy: the reactor decides. */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct watch {
	uv_poll_t poll;
	struct perfring_libuv *a;
	size_t slot;
};

struct perfring_libuv {
	struct perfring_reactor *r;
	uv_loop_t *loop;
	struct watch **w;       /* by slot; NULL when not watched */
	size_t n, open;         /* open: handles not yet through their close callback */
	bool detaching, destroying;
	void (*done)(void *ctx);
	void *done_ctx;
	uv_timer_t timer;       /* these two are made on first use: an attach */
	uv_idle_t idle;         /* refused before leaves nothing on the loop */
};

static void finish(struct perfring_libuv *a)
{
	void (*done)(void *ctx) = a->done;
	void *ctx = a->done_ctx;

	perfring_reactor_destroyed(a->r);
	free(a->w);
	free(a);
	if (done)
		done(ctx);
}

static void on_closed(uv_handle_t *h)
{
	struct perfring_libuv *a = h->type == UV_POLL ? ((struct watch *)h->data)->a : h->data;

	if (h->type == UV_POLL)
		free(h->data);
	if (!--a->open && a->destroying)
		finish(a);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct watch *w = p->data;

	perfring_reactor_on_ready(w->a->r, w->slot, (status < 0 ? POLLERR : 0) |
				  ((events & UV_READABLE) ? POLLIN : 0) |
				  ((events & UV_DISCONNECT) ? POLLHUP : 0));
}

/* A handle per watch, freed in its close callback: a slot can be watched
 * again at once, with another fd if need be. */
static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libuv *a = loop;
	struct watch *w = on ? calloc(1, sizeof(*w)) : a->w[slot];
	int err = w ? 0 : -ENOMEM;

	if (!on || err) {
		if (w)
			uv_close((uv_handle_t *)&w->poll, on_closed);
		a->w[slot] = NULL;
		return err;
	}
	*w = (struct watch){ .poll.data = w, .a = a, .slot = slot };
	if ((err = uv_poll_init(a->loop, &w->poll, fd))) {
		free(w);
		return err;
	}
	a->open++;
	if ((err = uv_poll_start(&w->poll, UV_READABLE | UV_DISCONNECT, on_poll)))
		uv_close((uv_handle_t *)&w->poll, on_closed);
	a->w[slot] = err ? NULL : w;
	return err;
}

static void on_idle(uv_idle_t *h)
{
	uv_idle_stop(h);
	perfring_reactor_on_soon(((struct perfring_libuv *)h->data)->r);
}

static int soon(void *loop, bool on)
{
	struct perfring_libuv *a = loop;

	if (!a->idle.loop && on && !uv_idle_init(a->loop, &a->idle))
		a->open++;
	a->idle.data = a;
	return on ? uv_idle_start(&a->idle, on_idle) : uv_idle_stop(&a->idle);
}

static void on_timer(uv_timer_t *t)
{
	perfring_reactor_on_timer(((struct perfring_libuv *)t->data)->r);
}

static int timer(void *loop, uint32_t ms)
{
	struct perfring_libuv *a = loop;

	if (!a->timer.loop && ms && !uv_timer_init(a->loop, &a->timer))
		a->open++;
	a->timer.data = a;
	return ms ? uv_timer_start(&a->timer, on_timer, ms, 0) : uv_timer_stop(&a->timer);
}

static void destroy(void *loop)
{
	struct perfring_libuv *a = loop;

	a->destroying = true;
	if (a->timer.loop)
		uv_close((uv_handle_t *)&a->timer, on_closed);
	if (a->idle.loop)
		uv_close((uv_handle_t *)&a->idle, on_closed);
	if (!a->open)
		finish(a);
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
	.flags = PERFRING_LOOP_WATCH_LATE, /* fds reach the backend at its next poll */
};

PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out)
{
	struct perfring_libuv *a;
	int err;

	if (!s || !loop || !out)
		return -EINVAL;
	*out = NULL;
	if (!(a = calloc(1, sizeof(*a))) ||
	    !(a->w = calloc((a->n = perfring_session_fds(s, NULL)) + 1, sizeof(*a->w)))) {
		free(a);
		return -ENOMEM;
	}
	a->loop = loop;
	*out = a;
	if ((err = perfring_reactor_new(s, opts, &ops, a, &a->r)))
		*out = NULL;
	return err;
}

PERFRING_API void perfring_libuv_detach(struct perfring_libuv *a, void (*done)(void *ctx),
					void *ctx)
{
	if (!a || a->detaching)
		return;
	a->detaching = true;
	a->done = done;
	a->done_ctx = ctx;
	perfring_reactor_free(a->r);
}
