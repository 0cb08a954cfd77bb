/* SPDX-License-Identifier: MIT */
/* Making a reactor: its options, its slots (the CPUs', then those of the
 * other kinds below), the first watches and drain. The top of core/loop:
 * it names follow.c's and ringbuf.c's kinds, and nothing in core/loop but
 * wait.c calls it. */
#include "loop/reactor.h"
#include "features/bpf_ringbuf.h"
#include "base/sys.h"
#include "snapshot.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static size_t follow_count(const struct perfring_session *s)
{
	return s->hp != NULL;
}

/* The kinds that may add slots after the CPUs', in slot order: how many
 * slots each may add (its open says yes or no to each), and whether the
 * first drain after attaching runs its timer hook too. A kind's open that
 * sets its slot's end failed, with the sentence set: the reactor is not
 * made. The ring buffers come last, every one of them a slot: their k-th
 * slot is the session's k-th ring buffer (loop/ringbuf.c). */
static const struct other_kind {
	const struct pr_slot_kind *kind;
	size_t (*count)(const struct perfring_session *s);
	bool first_drain;
} other_kinds[] = {
	{ &pr_follow_slot, follow_count, false },
	{ &pr_ringbuf_slot, pr_ringbuf_count, true },
};

#define N_KINDS (sizeof(other_kinds) / sizeof(other_kinds[0]))

static size_t n_other(const struct perfring_session *s)
{
	size_t k, n = 0;

	for (k = 0; k < N_KINDS; k++)
		n += other_kinds[k].count(s);
	return n;
}

static int copy_loop_opts(struct perfring_session *s, const struct perfring_loop_opts *in,
			  struct perfring_loop_opts *o)
{
	/* A caller built before order_window_ns passes a smaller struct. */
	int err = pr_opts_copy(&s->err, "perfring_loop_opts", o, sizeof(*o),
			       offsetof(struct perfring_loop_opts, order_window_ns), in);

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
	r->slots[r->n++] = (struct slot){ .kind = &pr_cpu_slot, .c = c, .fd = c->leader_fd };
	return 0;
}

static int fill_slots(struct perfring_reactor *r)
{
	struct perfring_session *s = r->s;
	size_t want = r->o.cpus ? r->o.cpu_cnt : s->ncpu, i, all = want + n_other(s);
	int idx, err;

	r->slots = pr_calloc(all ? all : 1, sizeof(*r->slots));
	if (!r->slots)
		return pr_err(&s->err, -ENOMEM, "out of memory attaching to a loop");
	for (i = 0; i < want; i++) {
		idx = r->o.cpus ? pr_cpu_index(s, r->o.cpus[i]) : (int)i;
		if (idx < 0)
			return pr_err(&s->err, -ENOENT, "perfring_loop_opts.cpus: CPU %d is not "
				      "watched by the session", r->o.cpus[i]);
		if ((err = add_slot(r, idx)))
			return err;
		r->nslots = r->n;
	}
	/* A driver sizes its per-slot state by perfring_session_slots(). */
	if (r->n + n_other(s) > perfring_session_slots(s))
		return pr_err(&s->err, -E2BIG, "attaching to a loop: %zu slots needed, but "
			      "perfring_session_slots() says %zu", r->n + n_other(s),
			      perfring_session_slots(s));
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

/* The other kinds' slots, after the CPUs' (fill_slots made room). */
static int open_others(struct perfring_reactor *r)
{
	struct slot *sl;
	size_t k, i, n;

	for (k = 0; k < N_KINDS; k++) {
		n = other_kinds[k].count(r->s);
		for (i = 0; i < n; i++) {
			sl = &r->slots[r->nslots];
			*sl = (struct slot){ .kind = other_kinds[k].kind, .fd = -1 };
			if (!sl->kind->open(r, sl))
				continue;
			if (sl->end)
				return sl->end;
			r->nslots++;
		}
	}
	return 0;
}

/* After the rings' first drain: the kinds that read on their timer hook. */
static void first_drain_others(struct perfring_reactor *r)
{
	size_t i, k;

	for (i = r->n; i < r->nslots && !r->cancelled; i++)
		for (k = 0; k < N_KINDS; k++)
			if (other_kinds[k].kind == r->slots[i].kind && other_kinds[k].first_drain &&
			    r->slots[i].kind->timer)
				r->slots[i].kind->timer(r, &r->slots[i]);
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
	r->merged = r->merged || r->o.order_window_ns; /* time order is the merge's */
	r->budget = r->merged ? 0 : r->o.budget;
	r->flush_ms = pick_flush_ms(s, r->o.flush_ms);
	r->pid_mode = s->o.pid > 0;
	if ((err = watch_all(r)) || (err = open_others(r)))
		return err;
	if (r->flush_ms && (err = r->ops.timer(r->loop, r->flush_ms)))
		return pr_err(&s->err, err, "arming the flush timer on the loop: %s",
			      perfring_strerror(err));
	r->catchup = (r->ops.flags & PERFRING_LOOP_WATCH_LATE) ? CATCHUP_TURNS : 0;
	if (r->catchup && (err = r->ops.soon(r->loop, true)))
		return pr_err(&s->err, err, "asking the loop for a turn: %s", perfring_strerror(err));
	r->soon_on = r->catchup > 0;
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
					.merged = merged, .att.release = pr_reactor_release };
	*out = r;
	if ((err = setup(r, opts))) {
		/* The driver's destroy() finds *out NULL, and its
		 * perfring_reactor_destroyed(NULL) does nothing: r goes here. */
		*out = NULL;
		pr_reactor_unmake(r);
		return err;
	}
	pr_attach(s, &r->att);
	pr_reactor_enter(r);
	pr_reactor_drain_all(r, true);
	first_drain_others(r);
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

/* The kinds' table counts the slots: the CPUs', the notifier's, one per
 * ring buffer. */
PERFRING_API size_t perfring_session_slots(const struct perfring_session *s)
{
	return s ? s->ncpu + n_other(s) : 0;
}
