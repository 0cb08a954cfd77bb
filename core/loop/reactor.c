/* SPDX-License-Identifier: MIT */
/* The reactor: every rule of running a session on an event loop (drain,
 * continue, flush, settle, unwatch at the end, deferred free), driven
 * through a loop's four operations. Adapters only translate. */
#include "loop/reactor.h"
#include "read/drain.h"
#include "read/merge.h"
#include "base/sys.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

/* Registration may consume a pending readiness, and some loops register at
 * their next poll (PERFRING_LOOP_WATCH_LATE): two soon() turns after
 * attaching each drain every ring, so that one of them comes after the
 * registration wherever in the loop attach ran (libuv runs idle handles
 * before it polls, libev after). */
#define SETTLE_TURNS 2

struct slot {
	struct pr_cpu *c;
	int fd;
	bool watched;
	bool orphan;     /* pid mode: its fd's task exited, the process lives on */
	bool more;       /* a budgeted drain left records behind */
	int end;         /* 0, or the error the fd reported: unwatch once drained */
};

/* What each readiness reads comes first, on one cache line: a wakeup finds
 * the cache cold, and every line read costs a miss. */
struct perfring_reactor {
	struct slot *slots;
	uint32_t budget;        /* o.budget, here for the hot path */
	int depth;              /* reactor calls on the stack */
	bool pid_mode;          /* rings of tasks, which HUP when those exit */
	bool merged;
	volatile bool cancelled;
	bool soon_on, merge_due, stopped;
	size_t orphans;         /* slots drained on the timer alone (R2) */
	int settle;
	size_t n;
	uint64_t samples;
	uint32_t flush_ms;      /* 0 = never */
	bool freeing, destroy_due, in_destroy, destroyed;
	void (*done)(void *ctx);     /* perfring_reactor_free_then's */
	void *done_ctx;
	struct perfring_session *s;  /* NULL once the session let go (R6) */
	struct pr_attachment att;
	struct perfring_loop_ops ops;
	void *loop;
	struct perfring_loop_opts o;
};

static void enter(struct perfring_reactor *r)
{
	r->depth++;
}

static void finish_destroy(struct perfring_reactor *r)
{
	void (*done)(void *ctx) = r->done;
	void *ctx = r->done_ctx;

	free(r->slots);
	free(r);
	if (done)
		done(ctx);
}

static void run_destroy(struct perfring_reactor *r)
{
	r->in_destroy = true;
	r->ops.destroy(r->loop);
	r->in_destroy = false;
	if (r->destroyed)
		finish_destroy(r);
}

/* Ends a reactor call. true: r is gone (freed from inside the call). */
static bool leave(struct perfring_reactor *r)
{
	if (--r->depth || !r->destroy_due)
		return false;
	r->destroy_due = false;
	run_destroy(r);
	return true;
}

static void report(struct perfring_reactor *r, int cpu, int err)
{
	if (r->o.on_error && !r->cancelled)
		r->o.on_error(cpu, err, r->o.ctx);
}

/* Asks for a soon turn; a loop that cannot give one is reported for the
 * CPU left waiting (its records wait for the next flush). */
static void want_soon(struct perfring_reactor *r, int cpu)
{
	int err;

	if (r->soon_on || r->cancelled)
		return;
	if (!(err = r->ops.soon(r->loop, true)))
		r->soon_on = true;
	else
		report(r, cpu, err);
}

/* With flushing off, rings of a process whose first task exited still need
 * the timer: nothing else tells when to read them (R2). */
#define ORPHAN_MS 100

/* A timer the loop cannot re-arm is a loop error of no one CPU: -1. */
static void arm_timer(struct perfring_reactor *r)
{
	uint32_t ms = r->flush_ms ? r->flush_ms : r->orphans ? ORPHAN_MS : 0;
	int err;

	if (ms && !r->cancelled && (err = r->ops.timer(r->loop, ms)))
		report(r, -1, err);
}

/* Stops watching sl (once). */
static void unwatch(struct perfring_reactor *r, struct slot *sl)
{
	if (!sl->watched)
		return;
	sl->watched = false;
	sl->more = false;
	r->ops.watch(r->loop, (size_t)(sl - r->slots), sl->fd, false);
}

/* A slot whose fd reported its end, and whose ring is now drained. */
static void end_slot(struct perfring_reactor *r, struct slot *sl)
{
	int err = sl->end;

	unwatch(r, sl);
	if (err == -EPIPE) {
		sl->c->ended = true;
		PR_STAT_SET(sl->c, hup, 1);
	}
	report(r, sl->c->cpu, err);
}

/* A drain holds the session (R7): freed inside it, the session released r
 * (cancelled) and nothing of either may be touched after. */
static bool drained(struct perfring_reactor *r, struct perfring_session *s, int n)
{
	if (pr_session_leave(s))
		return false;
	if (n > 0) /* -EBUSY: another parse holds the ring (R1) and reads it */
		r->samples += (uint64_t)n;
	return true;
}

/* R2: in pid mode a HUP is the exit of the task that owns the fd, not of the
 * process, whose other tasks go on writing into the ring. Until the process
 * exits, the ring is read on every timer pass instead of watched (its fd
 * would report HUP forever); after it, one more drain and the end. */
static void end_or_orphan(struct perfring_reactor *r, struct slot *sl)
{
	if (sl->end != -EPIPE || !r->pid_mode || pr_session_process_gone(r->s)) {
		end_slot(r, sl);
		return;
	}
	unwatch(r, sl);
	sl->orphan = true;
	sl->end = 0;
	if (!r->orphans++ && !r->flush_ms)
		arm_timer(r);
}

static void drain_slot(struct perfring_reactor *r, struct slot *sl)
{
	struct perfring_session *s = r->s;

	pr_session_enter(s);
	if (!drained(r, s, pr_drain(sl->c, r->budget, &sl->more, &r->cancelled)))
		return;
	if (r->cancelled)
		sl->more = false;
	if (sl->more)
		want_soon(r, sl->c->cpu);
	else if (sl->end && !r->cancelled)
		end_or_orphan(r, sl);
}

/* A time-ordered pass over every ring; then the slots that reported their
 * end have been drained. */
static void merged_pass(struct perfring_reactor *r)
{
	struct perfring_session *s = r->s;
	size_t i;

	r->merge_due = false;
	pr_session_enter(s);
	if (!drained(r, s, pr_merge_parse(s->merge, &r->stopped)))
		return;
	for (i = 0; i < r->n && !r->cancelled; i++)
		if (r->slots[i].watched && r->slots[i].end)
			end_or_orphan(r, &r->slots[i]);
}

/* Every watched ring: budgeted, or merged. flush: counted as a flush pass
 * (a settle turn is not one). */
static void drain_all(struct perfring_reactor *r, bool flush)
{
	size_t i;

	for (i = 0; i < r->n && flush; i++)
		if (r->slots[i].watched || r->slots[i].orphan)
			PR_STAT_ADD(r->slots[i].c, flushes, 1);
	if (r->merged) {
		merged_pass(r);
		return;
	}
	for (i = 0; i < r->n && !r->cancelled; i++)
		if (r->slots[i].watched || r->slots[i].orphan)
			drain_slot(r, &r->slots[i]);
}

/* Some loops (libev, libevent's epoll backend) fold POLLHUP into "readable",
 * and a per-task ring HUPs forever once its task is gone. Only pid mode has
 * such rings. Polling before the drain is safe: perf readiness is one-shot,
 * but whatever it reports here the drain that follows reads. */
static uint32_t with_hup(const struct perfring_reactor *r, const struct slot *sl,
			 uint32_t revents)
{
	struct pollfd p;

	if (!r->pid_mode || !(revents & POLLIN) || (revents & (POLLHUP | POLLERR)))
		return revents;
	p = (struct pollfd){ .fd = sl->fd, .events = POLLIN };
	if (poll(&p, 1, 0) == 1)
		revents |= (uint32_t)p.revents & (POLLHUP | POLLERR);
	return revents;
}

PERFRING_API void perfring_reactor_on_ready(struct perfring_reactor *r, size_t slot,
					    uint32_t revents)
{
	struct slot *sl;

	if (!r || r->cancelled || slot >= r->n || !r->slots[slot].watched)
		return;
	sl = &r->slots[slot];
	enter(r);
	revents = with_hup(r, sl, revents);
	if (revents & POLLIN)
		PR_STAT_ADD(sl->c, wakeups, 1);
	if ((revents & (POLLHUP | POLLERR)) && !sl->end)
		sl->end = (revents & POLLERR) ? -EIO : -EPIPE;
	if (r->merged) {
		r->merge_due = true;
		want_soon(r, sl->c->cpu);
	} else {
		drain_slot(r, sl);
	}
	leave(r);
}

PERFRING_API void perfring_reactor_on_soon(struct perfring_reactor *r)
{
	size_t i;

	if (!r || r->cancelled)
		return;
	enter(r);
	r->soon_on = false;
	if (r->settle) {
		r->settle--;
		drain_all(r, false);
	} else if (r->merged) {
		if (r->merge_due)
			merged_pass(r);
	} else {
		for (i = 0; i < r->n && !r->cancelled; i++)
			if (r->slots[i].watched && r->slots[i].more)
				drain_slot(r, &r->slots[i]);
	}
	if (r->settle)
		want_soon(r, -1);
	leave(r);
}

/* The process is gone (checked before the drain that read its last
 * records): its orphaned rings end. */
static void end_orphans(struct perfring_reactor *r)
{
	size_t i;

	for (i = 0; i < r->n && !r->cancelled; i++) {
		if (!r->slots[i].orphan)
			continue;
		r->slots[i].orphan = false;
		r->orphans--;
		r->slots[i].end = -EPIPE;
		end_slot(r, &r->slots[i]);
	}
}

PERFRING_API void perfring_reactor_on_timer(struct perfring_reactor *r)
{
	bool gone;

	if (!r || r->cancelled)
		return;
	enter(r);
	gone = r->orphans && pr_session_process_gone(r->s);
	drain_all(r, true);
	if (gone)
		end_orphans(r);
	arm_timer(r);
	leave(r);
}

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
		if (r->slots[i].c->ended)
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
	for (i = 0; i < r->n; i++)
		unwatch(r, &r->slots[i]);
	if (r->soon_on)
		r->ops.soon(r->loop, false);
	r->soon_on = false;
	if (r->flush_ms)
		r->ops.timer(r->loop, 0);
}

/* The session is being freed (R6): let go of it; every later call on r does
 * nothing, and the adapter's detach frees r. */
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
	if ((err = copy_loop_opts(s, opts, &r->o)) || (err = fill_slots(r)))
		return err;
	r->o.cpus = NULL;
	r->o.cpu_cnt = r->n;
	r->budget = r->merged ? 0 : r->o.budget;
	r->flush_ms = pick_flush_ms(s, r->o.flush_ms);
	r->pid_mode = s->o.pid > 0;
	if ((err = watch_all(r)))
		return err;
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
		finish_destroy(r);
		return err;
	}
	pr_attach(s, &r->att);
	enter(r);
	drain_all(r, true);
	leave(r);
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
		run_destroy(r);
}

PERFRING_API void perfring_reactor_destroyed(struct perfring_reactor *r)
{
	if (!r)
		return;
	r->destroyed = true;
	if (!r->in_destroy)
		finish_destroy(r);
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
	enter(r);
	if (!on) {
		pr_session_enter(r->s);
		if (drained(r, r->s, pr_drain(sl->c, 0, NULL, &r->cancelled)))
			unwatch(r, sl);
	} else if (!(err = r->ops.watch(r->loop, slot, sl->fd, true))) {
		sl->watched = true;
		drain_slot(r, sl);
	}
	leave(r);
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
		live += r->slots[i].watched || r->slots[i].orphan;
	return live;
}
