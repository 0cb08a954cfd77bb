/* SPDX-License-Identifier: MIT */
/* libuv driver for the core reactor: perfring-uv.h's four operations, no policy. */
#include <perfring/perfring-uv.h>

#include <poll.h>
#include <stdlib.h>

/* A uv_poll_t is bound to its fd until closed, and a slot's fd may change
 * between watches: each watch makes a handle, each unwatch closes it. */
struct poll {
	uv_poll_t h;
	size_t slot;
};

/* Every handle's data is the adapter; libuv never touches it. */
struct perfring_libuv {
	struct perfring_reactor *r;
	size_t open, n;         /* open: handles made and not through their close */
	uv_timer_t timer;
	uv_idle_t idle;
	struct poll *poll[];    /* by slot, while watched */
};

/* The last close: the reactor is freed (it calls detach's done), then us. */
static void on_closed(uv_handle_t *h)
{
	struct perfring_libuv *a = h->data;

	if (h->type == UV_POLL) /* a watch's own; the timer and idle are in *a */
		free(h);
	if (!--a->open) {
		perfring_reactor_destroyed(a->r);
		free(a);
	}
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	perfring_reactor_on_ready(((struct perfring_libuv *)h->data)->r, ((struct poll *)h)->slot,
				  (status < 0 ? POLLERR : 0) | ((events & UV_READABLE) ? POLLIN : 0) |
				  ((events & UV_DISCONNECT) ? POLLHUP : 0));
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libuv *a = loop;
	struct poll *p = NULL;
	int err = UV_ENOMEM;

	if (a->poll[slot])
		uv_close((uv_handle_t *)&a->poll[slot]->h, on_closed);
	a->poll[slot] = NULL;
	if (!on)
		return 0;
	if (!(p = malloc(sizeof(*p))) || (err = uv_poll_init(a->timer.loop, &p->h, fd))) {
		free(p); /* a failed init leaves nothing on the loop */
		return err;
	}
	p->h.data = a;
	p->slot = slot;
	a->poll[slot] = p;
	a->open++;
	if ((err = uv_poll_start(&p->h, UV_READABLE | UV_DISCONNECT, on_poll)))
		watch(a, slot, fd, false);
	return err;
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
	struct perfring_libuv *a = loop;

	return on ? uv_idle_start(&a->idle, on_idle) : uv_idle_stop(&a->idle);
}

static int timer(void *loop, uint32_t ms)
{
	struct perfring_libuv *a = loop;

	return ms ? uv_timer_start(&a->timer, on_timer, ms, 0) : uv_timer_stop(&a->timer);
}

static void destroy(void *loop)
{
	struct perfring_libuv *a = loop;

	for (size_t i = 0; i < a->n; i++)
		watch(a, i, -1, false);
	uv_close((uv_handle_t *)&a->timer, on_closed);
	uv_close((uv_handle_t *)&a->idle, on_closed);
}

static const struct perfring_loop_ops ops = { .sz = sizeof(ops), .watch = watch, .soon = soon,
	.timer = timer, .destroy = destroy, .flags = PERFRING_LOOP_WATCH_LATE };

PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out)
{
	size_t n = perfring_session_slots(s);
	struct perfring_libuv *a;
	int err;

	if (!s || !loop || !out)
		return UV_EINVAL;
	if (!(*out = a = calloc(1, sizeof(*a) + n * sizeof(a->poll[0]))))
		return UV_ENOMEM;
	*a = (struct perfring_libuv){ .open = 2, .n = n, .timer.data = a, .idle.data = a };
	uv_timer_init(loop, &a->timer); /* neither can fail; destroy() closes both */
	uv_idle_init(loop, &a->idle);
	if ((err = perfring_reactor_new(s, opts, &ops, a, &a->r)))
		*out = NULL;
	return err;
}

PERFRING_API void perfring_libuv_detach(struct perfring_libuv *a, void (*done)(void *ctx),
					void *ctx)
{
	perfring_reactor_free_then(a ? a->r : NULL, done, ctx); /* again: nothing */
}
