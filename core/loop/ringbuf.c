/* SPDX-License-Identifier: MIT */
/* A reactor's BPF ring buffers: one slot each, after the other kinds', on
 * a dup of the session's fd of it (a loop may refuse a fd that another of
 * its watchers has: libuv's uv_poll_t). Ready drains it within the
 * reactor's budget and asks for a soon turn when the budget cut it; the
 * timer drains it to its end (the flush). A ring buffer's poll is level:
 * readable while it holds records, so registering it consumes nothing. */
#include "loop/reactor.h"
#include "features/bpf_ringbuf.h"
#include "read/ringbuf.h"
#include "base/sys.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

/* The ring buffers' slots are the last ones, all of them (attach.c): the
 * k-th from their first is the session's k-th ring buffer. */
static struct pr_rbuf *rbuf_of(const struct perfring_reactor *r, const struct slot *sl)
{
	size_t first = r->nslots - pr_ringbuf_count(r->s);

	return pr_ringbuf_at(r->s, (size_t)(sl - r->slots) - first);
}

/* While making r: sl is the next ring buffer's slot. A failure sets
 * sl->end, which makes attach.c refuse the reactor (the sentence is set). */
static bool rb_open(struct perfring_reactor *r, struct slot *sl)
{
	struct perfring_session *s = r->s;
	size_t k = 0, i = (size_t)(sl - r->slots);
	struct pr_rbuf *rb;
	int err;

	while (i > r->n && r->slots[i - 1].kind == &pr_ringbuf_slot) {
		i--;
		k++;
	}
	rb = pr_ringbuf_at(s, k);
	if ((sl->fd = pr_dup(rb->map_fd)) < 0) {
		err = -errno;
		sl->end = pr_err(&s->err, err, "watching %s on the loop: fcntl(F_DUPFD_CLOEXEC): "
				 "%s", rb->ev->name, perfring_strerror(err));
		return true;
	}
	if ((err = r->ops.watch(r->loop, (size_t)(sl - r->slots), sl->fd, true))) {
		close(sl->fd);
		sl->fd = -1;
		sl->end = pr_err(&s->err, err, "watching %s's fd on the loop: %s", rb->ev->name,
				 perfring_strerror(err));
		return true;
	}
	sl->watched = true;
	return true;
}

/* Whether the reactor's merged passes drain rb (a timed ring buffer in
 * the session's merge, in an ordered reactor): its slot then only asks for
 * a pass, as a CPU's slot does there. */
static bool by_merge(const struct perfring_reactor *r, const struct pr_rbuf *rb)
{
	return pr_reactor_ordered(r) && pr_ringbuf_merged(r->s, rb);
}

/* Drains sl's ring buffer (max 0: to its end). */
static void drain(struct perfring_reactor *r, struct slot *sl, uint32_t max)
{
	struct perfring_session *s = r->s;
	struct pr_rbuf *rb = rbuf_of(r, sl);
	bool stopped = false, more = false;
	int n;

	pr_session_enter(s);
	n = pr_rbuf_drain(rb, max, &more, &stopped);
	if (n < 0 && n != -EBUSY) /* -EBUSY: another parse reads it, and reads it all (R1) */
		pr_ringbuf_error(s, rb, n);
	if (!pr_reactor_drained(r, s, n) || r->cancelled)
		return;
	if (r->merged && stopped)
		r->stopped = true; /* the session's wait ends, as a merged pass's stop */
	sl->more = n >= 0 && more;
	if (sl->more)
		pr_reactor_want_soon(r, -1);
	if (n == -EIO) { /* read no further: a watched corrupt ring would spin */
		pr_reactor_unwatch(r, sl);
		pr_reactor_report(r, -1, n);
	}
}

static void rb_ready(struct perfring_reactor *r, struct slot *sl, uint32_t revents)
{
	(void)revents;
	if (!by_merge(r, rbuf_of(r, sl))) {
		drain(r, sl, r->budget);
		return;
	}
	r->merge_due = true;
	pr_reactor_want_soon(r, -1);
}

/* The flush: whatever the wakeups missed, to its end (the merged pass that
 * follows the timer hooks reads those the merge has). */
static void rb_timer(struct perfring_reactor *r, struct slot *sl)
{
	if (pr_slot_read(sl) && !by_merge(r, rbuf_of(r, sl)))
		drain(r, sl, 0);
}

static void rb_stop(struct perfring_reactor *r, struct slot *sl)
{
	(void)r;
	if (sl->fd >= 0)
		close(sl->fd);
	sl->fd = -1;
}

const struct pr_slot_kind pr_ringbuf_slot = {
	.open = rb_open, .ready = rb_ready, .timer = rb_timer, .stop = rb_stop,
};
