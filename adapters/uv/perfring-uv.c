/* SPDX-License-Identifier: MIT */
/* libuv driver for the core reactor: the four operations in libuv's terms
 * (perfring-uv.h lists them). No policy: the reactor decides. */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

/* Every handle is made on first use, so that an attach refused before the
 * reactor asks for anything leaves nothing on the loop. Each handle's data
 * is the adapter, set at attach: libuv never touches it. */
struct perfring_libuv {
	struct perfring_reactor *r;
	uv_loop_t *loop;
	size_t open, n;         /* open: handles made and not through their close */
	uv_timer_t timer;
	uv_idle_t idle;
	uv_poll_t poll[];       /* by slot; .loop is set once it is made */
};

/* The last close: the reactor is freed (it calls detach's done), then us. */
static void on_closed(uv_handle_t *h)
{
	struct perfring_libuv *a = h->data;

	if (--a->open)
		return;
	perfring_reactor_destroyed(a->r);
	free(a);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct perfring_libuv *a = p->data;

	perfring_reactor_on_ready(a->r, (size_t)(p - a->poll), (status < 0 ? POLLERR : 0) |
				  ((events & UV_READABLE) ? POLLIN : 0) |
				  ((events & UV_DISCONNECT) ? POLLHUP : 0));
}

/* The timer and the idle handle come with the first operation; their inits
 * cannot fail. */
static struct perfring_libuv *ready(void *loop)
{
	struct perfring_libuv *a = loop;

	if (!a->timer.loop && !uv_timer_init(a->loop, &a->timer) && !uv_idle_init(a->loop, &a->idle))
		a->open += 2;
	return a;
}

static int watch(void *loop, size_t slot, int fd, bool on)
{
	struct perfring_libuv *a = ready(loop);
	uv_poll_t *p = &a->poll[slot];
	uv_os_fd_t was;
	int err;

	if (!on)
		return uv_poll_stop(p);
	if (p->loop && (uv_fileno((uv_handle_t *)p, &was) || was != fd))
		return -EBUSY; /* a slot's new fd would need a handle of its own */
	if (!p->loop && (err = uv_poll_init(a->loop, p, fd)))
		return err;
	a->open += p->data != a; /* the first watch of this slot */
	p->data = a;
	return uv_poll_start(p, UV_READABLE | UV_DISCONNECT, on_poll);
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

/* Closes whatever was made; with nothing made, frees at once. */
static void destroy(void *loop)
{
	struct perfring_libuv *a = loop;
	size_t i;

	a->open++; /* held until every close is asked for */
	for (i = 0; i < a->n; i++)
		if (a->poll[i].loop)
			uv_close((uv_handle_t *)&a->poll[i], on_closed);
	if (a->timer.loop) {
		uv_close((uv_handle_t *)&a->timer, on_closed);
		uv_close((uv_handle_t *)&a->idle, on_closed);
	}
	on_closed((uv_handle_t *)&a->idle); /* drops the hold */
}

static const struct perfring_loop_ops ops = {
	.sz = sizeof(ops), .watch = watch, .soon = soon, .timer = timer, .destroy = destroy,
	.flags = PERFRING_LOOP_WATCH_LATE, /* fds reach the backend at its next poll */
};

PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out)
{
	size_t n = s ? perfring_session_fds(s, NULL) : 0;
	struct perfring_libuv *a;
	int err;

	if (!s || !loop || !out)
		return -EINVAL;
	if (!(*out = a = calloc(1, sizeof(*a) + n * sizeof(a->poll[0]))))
		return -ENOMEM;
	*a = (struct perfring_libuv){ .loop = loop, .n = n, .timer.data = a, .idle.data = a };
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
