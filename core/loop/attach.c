/* SPDX-License-Identifier: MIT */
/* Making a reactor (its options and slots, the first watches and drain),
 * adding and removing a slot, and freeing it through its driver. */
#include "loop/reactor.h"
#include "hotplug.h"
#include "read/drain.h"
#include "base/sys.h"
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int copy_loop_opts(struct perfring_session *s, const struct perfring_loop_opts *in,
			  struct perfring_loop_opts *o)
{
	int err = pr_opts_copy(&s->err, "perfring_loop_opts", o, sizeof(*o), sizeof(*o), in);

	if (!err && !o->cpus != !o->cpu_cnt)
		return pr_err(&s->err, -EINVAL, "perfring_loop_opts.cpus and cpu_cnt disagree");
	return err;
}

static uint32_t pick_flush_ms(const struct perfring_session *s, uint32_t want)
{
	if (!want)
		want = pr_wakeup_mode(s) ? s->o.flush_ms : s->o.poll_interval_ms;
	return want == PERFRING_FLUSH_NEVER ? 0 : want;
}

/* Slot r->n for s->cpu[idx], refusing a CPU listed twice. */
static int add_slot(struct perfring_reactor *r, int idx)
{
	struct pr_cpu *c = &r->s->cpu[idx];
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->slots[i].c == c)
			return pr_err(&r->s->err, -EINVAL, "perfring_loop_opts.cpus lists CPU %d twice",
				      c->cpu);
	r->slots[r->n++] = (struct slot){ .c = c, .fd = c->leader_fd };
	return 0;
}

static int fill_slots(struct perfring_reactor *r)
{
	struct perfring_session *s = r->s;
	size_t want = r->o.cpus ? r->o.cpu_cnt : s->ncpu, i;
	int idx, err;

	r->slots = pr_calloc(want ? want : 1, sizeof(*r->slots));
	if (!r->slots)
		return pr_err(&s->err, -ENOMEM, "out of memory attaching to a loop");
	for (i = 0; i < want; i++) {
		idx = r->o.cpus ? pr_cpu_index(s, r->o.cpus[i]) : (int)i;
		if (idx < 0)
			return pr_err(&s->err, -ENOENT, "perfring_loop_opts.cpus: CPU %d is not "
				      "watched by the session", r->o.cpus[i]);
		if ((err = add_slot(r, idx)))
			return err;
	}
	return 0;
}

/* Watches every slot whose ring has not ended. */
static int watch_all(struct perfring_reactor *r)
{
	size_t i;
	int err;

	for (i = 0; i < r->n; i++) {
		/* An ended ring, or an offline CPU of a hotplug session. */
		if (r->slots[i].c->ended ||
		    !pr_session_cpu_on(r->s, (size_t)(r->slots[i].c - r->s->cpu)))
			continue;
		if ((err = r->ops.watch(r->loop, i, r->slots[i].fd, true)))
			return pr_err(&r->s->err, err, "watching CPU %d's ring fd on the loop: %s",
				      r->slots[i].c->cpu, perfring_strerror(err));
		r->slots[i].watched = true;
	}
	return 0;
}

/* Stops everything that could call back: watches, the soon turn, the timer. */
static void quiesce(struct perfring_reactor *r)
{
	size_t i;

	r->cancelled = true;
	pr_reactor_follow_stop(r);
	for (i = 0; i < r->n; i++)
		pr_reactor_unwatch(r, &r->slots[i]);
	if (r->soon_on)
		r->ops.soon(r->loop, false);
	r->soon_on = false;
	if (pr_reactor_timer_ms(r)) /* the flush's, or the orphans' (R2) */
		r->ops.timer(r->loop, 0);
}

/* The session is being freed (R6, docs/RULES.md): let go of it; every later
 * call on r does nothing, and the adapter's detach frees r. */
static void release(struct pr_attachment *a)
{
	struct perfring_reactor *r = (struct perfring_reactor *)((char *)a -
								  offsetof(struct perfring_reactor, att));

	quiesce(r);
	r->s = NULL;
}

/* The four operations are what every driver has; flags came later. */
#define OPS_MIN_SZ offsetof(struct perfring_loop_ops, flags)

static bool ops_usable(const struct perfring_loop_ops *ops)
{
	return ops && ops->sz >= OPS_MIN_SZ && ops->watch && ops->soon && ops->timer &&
	       ops->destroy;
}

/* A copy of ops with the fields an older driver lacks at zero. */
static struct perfring_loop_ops ops_copy(const struct perfring_loop_ops *ops)
{
	struct perfring_loop_ops o = { 0 };

	memcpy(&o, ops, ops->sz < sizeof(o) ? ops->sz : sizeof(o));
	return o;
}

static int setup(struct perfring_reactor *r, const struct perfring_loop_opts *opts)
{
	struct perfring_session *s = r->s;
	int err;

	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "attach before perfring_session_start");
	/* No wakeup and nothing to read until a snapshot: nothing to attach. */
	if ((err = pr_overwrite_refuse(s, "perfring_reactor_new (and the adapters' attach)")))
		return err;
	if ((err = copy_loop_opts(s, opts, &r->o)) || (err = fill_slots(r)))
		return err;
	r->o.cpus = NULL;
	r->o.cpu_cnt = r->n;
	r->budget = r->merged ? 0 : r->o.budget;
	r->flush_ms = pick_flush_ms(s, r->o.flush_ms);
	r->pid_mode = s->o.pid > 0;
	if ((err = watch_all(r)))
		return err;
	pr_reactor_follow_start(r);
	if (r->flush_ms && (err = r->ops.timer(r->loop, r->flush_ms)))
		return pr_err(&s->err, err, "arming the flush timer on the loop: %s",
			      perfring_strerror(err));
	r->settle = (r->ops.flags & PERFRING_LOOP_WATCH_LATE) ? SETTLE_TURNS : 0;
	if (r->settle && (err = r->ops.soon(r->loop, true)))
		return pr_err(&s->err, err, "asking the loop for a turn: %s", perfring_strerror(err));
	r->soon_on = r->settle > 0;
	return 0;
}

int pr_reactor_make(struct perfring_session *s, const struct perfring_loop_opts *opts,
		    const struct perfring_loop_ops *ops, void *loop, bool merged,
		    struct perfring_reactor **out)
{
	struct perfring_reactor *r;
	int err;

	if (!s || !out || !ops_usable(ops))
		return pr_null(pr_serr(s), "perfring_reactor_new",
			       !s ? "s" : !out ? "out" : "ops (or one of its functions)");
	*out = NULL;
	r = pr_calloc(1, sizeof(*r));
	if (!r) {
		ops->destroy(loop);
		return pr_err(&s->err, -ENOMEM, "out of memory attaching to a loop");
	}
	*r = (struct perfring_reactor){ .s = s, .ops = ops_copy(ops), .loop = loop,
					.merged = merged, .att.release = release };
	*out = r;
	if ((err = setup(r, opts))) {
		/* The driver's destroy() finds *out NULL, and its
		 * perfring_reactor_destroyed(NULL) does nothing: r goes here. */
		*out = NULL;
		quiesce(r);
		ops->destroy(loop);
		pr_reactor_finish(r);
		return err;
	}
	pr_attach(s, &r->att);
	pr_reactor_enter(r);
	pr_reactor_drain_all(r, true);
	pr_reactor_leave(r);
	return 0;
}

PERFRING_API int perfring_reactor_new(struct perfring_session *s,
				      const struct perfring_loop_opts *opts,
				      const struct perfring_loop_ops *ops, void *loop,
				      struct perfring_reactor **out)
{
	return pr_reactor_make(s, opts, ops, loop, false, out);
}

PERFRING_API void perfring_reactor_free(struct perfring_reactor *r)
{
	perfring_reactor_free_then(r, NULL, NULL);
}

PERFRING_API void perfring_reactor_free_then(struct perfring_reactor *r, void (*done)(void *ctx),
					     void *ctx)
{
	if (!r || r->freeing)
		return;
	r->freeing = true;
	r->done = done;
	r->done_ctx = ctx;
	quiesce(r);
	if (r->s)
		pr_detach(r->s, &r->att);
	if (r->depth)
		r->destroy_due = true;
	else
		pr_reactor_destroy_now(r);
}

PERFRING_API void perfring_reactor_destroyed(struct perfring_reactor *r)
{
	if (!r)
		return;
	r->destroyed = true;
	if (!r->in_destroy)
		pr_reactor_finish(r);
}

int pr_reactor_slot(struct perfring_reactor *r, size_t slot, bool on)
{
	struct slot *sl;
	int err = 0;

	if (!r || slot >= r->n || r->cancelled)
		return -EINVAL;
	sl = &r->slots[slot];
	if (on == sl->watched)
		return 0;
	pr_reactor_enter(r);
	if (!on) {
		pr_session_enter(r->s);
		if (pr_reactor_drained(r, r->s, pr_drain(sl->c, 0, NULL, &r->cancelled)))
			pr_reactor_unwatch(r, sl);
	} else if (!(err = r->ops.watch(r->loop, slot, sl->fd, true))) {
		sl->watched = true;
		pr_reactor_drain_slot(r, sl);
	}
	pr_reactor_leave(r);
	return err;
}

uint64_t pr_reactor_take_samples(struct perfring_reactor *r)
{
	uint64_t n = r->samples;

	r->samples = 0;
	return n;
}

bool pr_reactor_take_stop(struct perfring_reactor *r)
{
	bool stop = r->stopped;

	r->stopped = false;
	return stop;
}

size_t pr_reactor_live(const struct perfring_reactor *r)
{
	size_t i, live = 0;

	for (i = 0; i < r->n; i++)
		live += pr_slot_read(&r->slots[i]);
	return live;
}
