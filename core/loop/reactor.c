/* SPDX-License-Identifier: MIT */
/* The reactor: every rule of running a session on an event loop (drain,
 * continue, flush, catch-up turns, unwatch at the end, deferred free),
 * driven through a loop's four operations. Adapters only translate. The CPU
 * rings' slot kind is here; the other kinds reach the reactor through
 * their hooks (loop/reactor.h), so this file calls none of them. */
#include "loop/reactor.h"
#include "read/drain.h"
#include "read/merge.h"
#include "rings/lost.h"
#include "base/clock.h"
#include "base/sys.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

void pr_reactor_enter(struct perfring_reactor *r)
{
	r->depth++;
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

/* ms until due, rounded up (the timer never fires before it), at least 1. */
static uint32_t ms_until(uint64_t due, uint64_t now)
{
	uint64_t ms = due > now ? (due - now + PR_NS_PER_MS - 1) / PR_NS_PER_MS : 1;

	return ms > UINT32_MAX ? UINT32_MAX : ms ? (uint32_t)ms : 1;
}

/* The timer: the flush period, or sooner when the oldest kept record is
 * due sooner (bounded latency of an ordered reactor). A timer the loop
 * cannot re-arm is a loop error of no one CPU: -1. */
static void arm_timer(struct perfring_reactor *r)
{
	uint32_t ms = pr_reactor_timer_ms(r), k;
	uint64_t now = 0;
	int err;

	if (r->kept_due) {
		now = pr_now_ns();
		k = ms_until(pr_pass_due(r->kept_due, r->kept_slack), now);
		ms = !ms || k < ms ? k : ms;
	}
	r->timer_due = UINT64_MAX;
	if (!ms || r->cancelled)
		return;
	if ((err = r->ops.timer(r->loop, ms)))
		report(r, -1, err);
	else if (r->kept_due)
		r->timer_due = now + (uint64_t)ms * PR_NS_PER_MS;
	else
		r->timer_due = 0; /* the flush period: whatever a kept record needs is sooner */
}

/* Stops watching sl (once). */
void pr_reactor_unwatch(struct perfring_reactor *r, struct slot *sl)
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

	pr_reactor_unwatch(r, sl);
	if (err == -EPIPE) {
		sl->c->ended = true;
		PR_STAT_SET(sl->c, hup, 1);
		/* The totals the process's end made due: no parse of it follows. */
		pr_lost_sync(sl->c);
	}
	report(r, sl->c->cpu, err);
}

/* A drain holds the session (R7, docs/RULES.md): freed inside it, the
 * session released r (cancelled) and nothing of either may be touched
 * after. */
bool pr_reactor_drained(struct perfring_reactor *r, struct perfring_session *s, int n)
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
	pr_reactor_unwatch(r, sl);
	sl->orphan = true;
	sl->end = 0;
	if (!r->orphans++ && !r->flush_ms)
		arm_timer(r);
}

void pr_reactor_drain_slot(struct perfring_reactor *r, struct slot *sl)
{
	struct perfring_session *s = r->s;

	pr_session_enter(s);
	if (!pr_reactor_drained(r, s, pr_drain(sl->c, r->budget, &sl->more, &r->cancelled)))
		return;
	if (r->cancelled)
		sl->more = false;
	if (sl->more)
		want_soon(r, sl->c->cpu);
	else if (sl->end && !r->cancelled)
		end_or_orphan(r, sl);
}

/* The reactor's own window, else its session's (0: none). */
static uint64_t configured_window(const struct perfring_reactor *r)
{
	return r->o.order_window_ns ? r->o.order_window_ns : r->s->o.order_window_ns;
}

/* The order window of r's passes now: none once nothing younger can come
 * (the session stopped, a ring reported its end), else the loop opts' or,
 * for the session's own wait, the session's. */
static uint64_t window_of(const struct perfring_reactor *r)
{
	const struct perfring_session *s = r->s;
	size_t i;

	if (s->state == PR_STOPPED)
		return 0;
	for (i = 0; i < r->n; i++)
		if (r->slots[i].watched && r->slots[i].end)
			return 0;
	return configured_window(r);
}

/* Whether a timer armed now for due would fire before armed, the time the
 * armed one fires (UINT64_MAX: none is; 0: the flush period's, no sooner
 * than a kept record needs). */
static bool fires_sooner(uint64_t due, uint64_t armed)
{
	uint64_t now;

	if (!armed)
		return true;
	now = pr_now_ns();
	return now + (uint64_t)ms_until(due, now) * PR_NS_PER_MS < armed;
}

/* After a pass that kept records: the timer for the oldest, unless the one
 * armed fires sooner (or a timer pass arms it as it ends). A timer rounds
 * up to whole ms, so under a stream each pass's oldest kept record is due
 * before the armed timer and yet a new one would fire after it: re-arming
 * would only push it back, at a syscall each time (a timerfd's: 3,967 a
 * run of 1 M records here, and in a VM an exit to the host each), which
 * made a 2 ms window cost parse_until 1.77x the CPU per record. */
static void keep(struct perfring_reactor *r, const struct pr_pass *p)
{
	r->kept_due = p->kept ? pr_pass_due(p->kept, p->window) : 0;
	if (r->kept_due && !r->timing && !r->cancelled &&
	    fires_sooner(pr_pass_due(r->kept_due, r->kept_slack), r->timer_due))
		arm_timer(r);
}

/* A time-ordered pass over every ring (all: without the window); then the
 * slots that reported their end have been drained. A budget (loop opts)
 * stops the pass and asks for a soon turn for the rest. */
static void merged_pass_as(struct perfring_reactor *r, bool all)
{
	struct perfring_session *s = r->s;
	struct pr_pass p = { .window = all ? 0 : window_of(r), .max = all ? 0 : r->o.budget };
	size_t i;

	r->merge_due = false;
	r->woke += !r->timing;
	pr_session_enter(s);
	if (!pr_reactor_drained(r, s, pr_merge_pass(s->merge, &p)))
		return;
	r->stopped |= p.stopped;
	if (r->cancelled)
		return;
	keep(r, &p);
	if (p.more) {
		r->merge_due = true;
		want_soon(r, -1);
		return;
	}
	for (i = 0; i < r->n && !r->cancelled; i++)
		if (r->slots[i].watched && r->slots[i].end)
			end_or_orphan(r, &r->slots[i]);
}

static void merged_pass(struct perfring_reactor *r)
{
	merged_pass_as(r, false);
}

void pr_reactor_drain_kept(struct perfring_reactor *r)
{
	merged_pass_as(r, true);
}

/* Every watched ring: budgeted, or merged. flush: counted as a flush pass
 * (a catch-up turn is not one). */
void pr_reactor_drain_all(struct perfring_reactor *r, bool flush)
{
	size_t i;

	for (i = 0; i < r->n && flush; i++)
		if (pr_slot_read(&r->slots[i]))
			PR_STAT_ADD(r->slots[i].c, flushes, 1);
	if (pr_reactor_ordered(r)) {
		merged_pass(r);
		return;
	}
	for (i = 0; i < r->n && !r->cancelled; i++)
		if (pr_slot_read(&r->slots[i]))
			pr_reactor_drain_slot(r, &r->slots[i]);
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

/* pr_cpu_slot's ready: a CPU's ring is readable, or its fd ended. */
static void cpu_ready(struct perfring_reactor *r, struct slot *sl, uint32_t revents)
{
	revents = with_hup(r, sl, revents);
	if (revents & POLLIN)
		PR_STAT_ADD(sl->c, wakeups, 1);
	if ((revents & (POLLHUP | POLLERR)) && !sl->end)
		sl->end = (revents & POLLERR) ? -EIO : -EPIPE;
	if (pr_reactor_ordered(r)) {
		r->merge_due = true;
		want_soon(r, sl->c->cpu);
	} else {
		pr_reactor_drain_slot(r, sl);
	}
}

/* A CPU's ring: its timer pass is the reactor's own (on_timer). */
const struct pr_slot_kind pr_cpu_slot = { .ready = cpu_ready };

PERFRING_API void perfring_reactor_on_ready(struct perfring_reactor *r, size_t slot,
					    uint32_t revents)
{
	struct slot *sl;

	if (!r || r->cancelled || slot >= r->nslots || !r->slots[slot].watched)
		return;
	sl = &r->slots[slot];
	pr_reactor_enter(r);
	sl->kind->ready(r, sl, revents);
	pr_reactor_leave(r);
}

PERFRING_API void perfring_reactor_on_soon(struct perfring_reactor *r)
{
	size_t i;

	if (!r || r->cancelled)
		return;
	pr_reactor_enter(r);
	r->soon_on = false;
	if (r->catchup) {
		r->catchup--;
		pr_reactor_drain_all(r, false);
	} else if (pr_reactor_ordered(r)) {
		if (r->merge_due)
			merged_pass(r);
	} else {
		/* By index: the other kinds' slots continue through their ready
		 * hook, told nothing new (revents 0). */
		for (i = 0; i < r->nslots && !r->cancelled; i++) {
			if (!pr_slot_read(&r->slots[i]) || !r->slots[i].more)
				continue;
			if (i < r->n)
				pr_reactor_drain_slot(r, &r->slots[i]);
			else
				r->slots[i].kind->ready(r, &r->slots[i], 0);
		}
	}
	if (r->catchup)
		want_soon(r, -1);
	pr_reactor_leave(r);
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

/* The other kinds' timer hooks, then the rings' flush pass. */
static void timer_pass(struct perfring_reactor *r)
{
	bool gone;

	/* By index: slots is NULL while there are none (no pointer sum on it). */
	for (size_t i = r->n; i < r->nslots && !r->cancelled; i++)
		if (r->slots[i].kind->timer)
			r->slots[i].kind->timer(r, &r->slots[i]);
	if (r->cancelled) /* R7: the session went inside a hook */
		return;
	gone = r->orphans && pr_session_process_gone(r->s);
	pr_reactor_drain_all(r, true);
	if (gone)
		end_orphans(r);
	arm_timer(r);
}

/* The kept records' timer under a stream: the passes its wakeups bring
 * deliver what is due, so the timer that would also come every window's
 * length backs off, doubling, to the flush period (what the latency bound,
 * W + the flush period, allows); it comes at the kept record's due time
 * again once a timer pass finds that no other pass ran. */
static void adapt_slack(struct perfring_reactor *r)
{
	uint64_t cap = (uint64_t)(r->flush_ms ? r->flush_ms : PR_ORPHAN_MS) * PR_NS_PER_MS;
	uint64_t w = configured_window(r);

	if (!w)
		w = PR_NS_PER_MS;
	if (!r->woke)
		r->kept_slack = 0;
	else
		r->kept_slack = !r->kept_slack ? (w < cap ? w : cap) :
				r->kept_slack < cap / 2 ? 2 * r->kept_slack : cap;
	r->woke = 0;
}

PERFRING_API void perfring_reactor_on_timer(struct perfring_reactor *r)
{
	if (!r || r->cancelled)
		return;
	pr_reactor_enter(r);
	adapt_slack(r);
	r->timing = true;
	timer_pass(r);
	r->timing = false; /* r lives until the leave, whatever the pass did */
	pr_reactor_leave(r);
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

void pr_reactor_report(struct perfring_reactor *r, int cpu, int err)
{
	report(r, cpu, err);
}

void pr_reactor_want_soon(struct perfring_reactor *r, int cpu)
{
	want_soon(r, cpu);
}

uint64_t pr_reactor_read_samples_reset(struct perfring_reactor *r)
{
	uint64_t n = r->samples;

	r->samples = 0;
	return n;
}

bool pr_reactor_read_stop_reset(struct perfring_reactor *r)
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

/* Teardown: every change of r->state is below (loop/reactor.h draws them). */

static void to(struct perfring_reactor *r, enum pr_reactor_state st)
{
	r->state = st;
	r->cancelled = st != PR_REACTOR_LIVE;
}

/* Stops everything that could call back: watches, the soon turn, the timer;
 * then each kind lets go of what its slot holds. r is cancelled first. */
static void quiesce(struct perfring_reactor *r)
{
	struct slot *sl;

	for (size_t i = 0; i < r->nslots; i++) {
		sl = &r->slots[i];
		pr_reactor_unwatch(r, sl);
		if (sl->kind->stop)
			sl->kind->stop(r, sl);
	}
	if (r->soon_on)
		r->ops.soon(r->loop, false);
	r->soon_on = false;
	/* The flush's, the orphans' (R2), or a kept record's. */
	if (pr_reactor_timer_ms(r) || (r->timer_due && r->timer_due != UINT64_MAX))
		r->ops.timer(r->loop, 0);
}

/* Frees r's memory, then calls free_then's done. */
static void finish(struct perfring_reactor *r)
{
	void (*done)(void *ctx) = r->done;
	void *ctx = r->done_ctx;

	free(r->slots);
	free(r);
	if (done)
		done(ctx);
}

/* The driver's destroy(), which may say destroyed() inside or later. */
static void destroy(struct perfring_reactor *r)
{
	to(r, PR_REACTOR_DESTROYING);
	r->ops.destroy(r->loop);
	if (r->state == PR_REACTOR_DESTROYED)
		finish(r);
	else
		to(r, PR_REACTOR_CLOSING);
}

bool pr_reactor_leave(struct perfring_reactor *r)
{
	if (--r->depth || r->state != PR_REACTOR_FREEING)
		return false;
	destroy(r);
	return true;
}

/* The session is being freed (R6, docs/RULES.md): let go of it; every later
 * call on r does nothing, and the adapter's detach frees r. */
void pr_reactor_release(struct pr_attachment *a)
{
	struct perfring_reactor *r = (struct perfring_reactor *)((char *)a -
								  offsetof(struct perfring_reactor, att));

	if (r->state != PR_REACTOR_LIVE)
		return;
	to(r, PR_REACTOR_CANCELLED);
	quiesce(r);
	r->s = NULL;
}

void pr_reactor_unmake(struct perfring_reactor *r)
{
	to(r, PR_REACTOR_CANCELLED);
	quiesce(r);
	r->ops.destroy(r->loop);
	finish(r);
}

PERFRING_API void perfring_reactor_free(struct perfring_reactor *r)
{
	perfring_reactor_free_then(r, NULL, NULL);
}

PERFRING_API void perfring_reactor_free_then(struct perfring_reactor *r, void (*done)(void *ctx),
					     void *ctx)
{
	bool attached;

	if (!r || r->state > PR_REACTOR_CANCELLED)
		return;
	/* What an ordered reactor kept goes first, unless the session is being
	 * freed or a pass is running (a callback frees r). */
	if (r->state == PR_REACTOR_LIVE && pr_reactor_ordered(r) && !r->depth && !r->drop_kept &&
	    !pr_session_closing(r->s)) {
		pr_reactor_enter(r);
		pr_reactor_drain_kept(r);
		if (pr_reactor_leave(r) || r->state > PR_REACTOR_CANCELLED)
			return;
	}
	attached = r->state == PR_REACTOR_LIVE;
	to(r, PR_REACTOR_FREEING);
	r->done = done;
	r->done_ctx = ctx;
	quiesce(r);
	if (attached)
		pr_detach(r->s, &r->att);
	if (!r->depth)
		destroy(r);
}

PERFRING_API void perfring_reactor_destroyed(struct perfring_reactor *r)
{
	if (!r)
		return;
	if (r->state == PR_REACTOR_DESTROYING)
		to(r, PR_REACTOR_DESTROYED);
	else
		finish(r);
}
