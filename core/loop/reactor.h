/* SPDX-License-Identifier: MIT */
/* The reactor's internal face: its slots and their kinds, its teardown
 * states, and what attach.c (making one), follow.c (the hotplug notifier's
 * kind) and wait.c (the session's own wait, merged mode) use of reactor.c.
 * reactor.c calls neither of the others: a kind reaches it through its
 * hooks. */
#ifndef PR_LOOP_REACTOR_H
#define PR_LOOP_REACTOR_H

#include "session.h"

/* Registration may consume a pending readiness, and some loops register at
 * their next poll (PERFRING_LOOP_WATCH_LATE): two soon() turns after
 * attaching each drain every ring, so that one of them comes after the
 * registration wherever in the loop attach ran (libuv runs idle handles
 * before it polls, libev after). */
#define CATCHUP_TURNS 2

struct perfring_reactor;
struct slot;

/* What a slot watches: a CPU's ring (pr_cpu_slot, reactor.c), or another
 * source (the hotplug notifier, follow.c; BPF ring buffers next). The one
 * extension point of the reactor; attach.c lists the kinds that add a slot
 * after the CPUs'. Each hook runs inside a reactor call, r live. */
struct pr_slot_kind {
	/* While making r, after the CPUs' slots are watched: whether s needs sl
	 * (its fd -1 until it watches one). false: no slot is added. */
	bool (*open)(struct perfring_reactor *r, struct slot *sl);
	/* sl's fd is ready (sl watched); revents as perfring_reactor_on_ready. */
	void (*ready)(struct perfring_reactor *r, struct slot *sl, uint32_t revents);
	/* Each timer pass, before the rings' drain; may cancel r (R7). NULL:
	 * nothing. */
	void (*timer)(struct perfring_reactor *r, struct slot *sl);
	/* In quiesce, once sl is unwatched: let go of what it holds. NULL:
	 * nothing. */
	void (*stop)(struct perfring_reactor *r, struct slot *sl);
};

extern const struct pr_slot_kind pr_cpu_slot;
extern const struct pr_slot_kind pr_follow_slot; /* follow.c: the hotplug notifier */
extern const struct pr_slot_kind pr_ringbuf_slot; /* ringbuf.c: a BPF ring buffer each */

struct slot {
	const struct pr_slot_kind *kind;
	struct pr_cpu *c;  /* pr_cpu_slot's ring; NULL for the other kinds */
	int fd;
	bool watched;
	bool orphan;     /* pid mode: its fd's task exited, the process lives on */
	bool more;       /* a budgeted drain left records behind */
	int end;         /* 0, or the error the fd reported: unwatch once drained */
};

/* A reactor's teardown (perfring/reactor.h's free, free_then, destroyed;
 * R6 and R7 of docs/RULES.md). Each transition is made in reactor.c's
 * teardown part:
 *   LIVE -> CANCELLED      the session let go (R6): s is NULL, the
 *                          adapter's detach still frees r
 *   LIVE|CANCELLED -> FREEING   perfring_reactor_free_then: quiesced and
 *                          detached; the driver's destroy() is due when the
 *                          outermost reactor call returns
 *   FREEING -> DESTROYING  inside the driver's destroy()
 *   DESTROYING -> DESTROYED     the driver said destroyed() inside it: r is
 *                          freed as destroy() returns
 *   DESTROYING -> CLOSING  destroy() returned first (uv_close): r is freed
 *                          at the driver's destroyed()
 * Every state but LIVE is cancelled: no callback, no session memory. */
enum pr_reactor_state {
	PR_REACTOR_LIVE,
	PR_REACTOR_CANCELLED,
	PR_REACTOR_FREEING,
	PR_REACTOR_DESTROYING,
	PR_REACTOR_DESTROYED,
	PR_REACTOR_CLOSING,
};

/* What each readiness reads comes first, on one cache line: a wakeup finds
 * the cache cold, and every line read costs a miss. */
struct perfring_reactor {
	struct slot *slots;     /* n CPUs' rings, then the other kinds' */
	uint32_t budget;        /* o.budget, here for the hot path */
	int depth;              /* reactor calls on the stack */
	bool pid_mode;          /* rings of tasks, which HUP when those exit */
	bool merged;
	/* state != LIVE, which drains read through a pointer: a callback may
	 * free the session or r in the middle of one. */
	volatile bool cancelled;
	bool soon_on, merge_due, stopped;
	size_t orphans;         /* slots drained on the timer alone (R2) */
	int catchup;            /* CATCHUP_TURNS left */
	size_t n;               /* the CPUs' slots */
	size_t nslots;          /* every slot: n, then the other kinds' */
	uint64_t samples;
	uint32_t flush_ms;      /* 0 = never */
	enum pr_reactor_state state;
	void (*done)(void *ctx);     /* perfring_reactor_free_then's */
	void *done_ctx;
	struct perfring_session *s;  /* NULL once the session let go (R6) */
	struct pr_attachment att;
	struct perfring_loop_ops ops;
	void *loop;
	struct perfring_loop_opts o;
	/* Time order with a bound (ordered reactors): */
	bool timing;            /* in a timer pass, which arms the timer at its end */
	bool drop_kept;         /* free without a last pass (the session is going) */
	uint64_t kept_due;      /* when the oldest kept record must go (its time +
	                           the window); 0: none */
	uint64_t timer_due;     /* when the timer fires: 0 as setup armed it (the
	                           flush period), UINT64_MAX not armed */
	uint64_t kept_slack;    /* added to kept_due while passes not on the timer
	                           come (a stream: they deliver what is due), doubling
	                           up to the flush period; 0 once the timer alone runs */
	uint32_t woke;          /* passes not on the timer since the last timer pass */
};

void pr_reactor_enter(struct perfring_reactor *r);
/* Ends a reactor call. true: r is gone (freed from inside the call). */
bool pr_reactor_leave(struct perfring_reactor *r);

/* Teardown (reactor.c). The attachment's release (R6): the session is
 * being freed. */
void pr_reactor_release(struct pr_attachment *a);
/* A reactor whose making failed, neither attached nor handed out: stops
 * what was started, calls the driver's destroy() and frees r. */
void pr_reactor_unmake(struct perfring_reactor *r);

void pr_reactor_unwatch(struct perfring_reactor *r, struct slot *sl);
/* A drain's end (R7, docs/RULES.md): false when the session was freed
 * inside it. */
bool pr_reactor_drained(struct perfring_reactor *r, struct perfring_session *s, int n);
void pr_reactor_drain_slot(struct perfring_reactor *r, struct slot *sl);
void pr_reactor_drain_all(struct perfring_reactor *r, bool flush);
/* An ordered reactor's pass without its window: what it kept goes now (a
 * ring about to close, the reactor's free). */
void pr_reactor_drain_kept(struct perfring_reactor *r);
/* Asks for a soon turn (once); a refusal is reported for cpu. */
void pr_reactor_want_soon(struct perfring_reactor *r, int cpu);
/* opts.on_error(cpu, err), unless cancelled. */
void pr_reactor_report(struct perfring_reactor *r, int cpu, int err);

/* With flushing off, rings of a process whose first task exited still need
 * the timer: nothing else tells when to read them (R2). */
#define PR_ORPHAN_MS 100

/* The timer's period now: the flush's, else the orphans', else none (0). */
static inline uint32_t pr_reactor_timer_ms(const struct perfring_reactor *r)
{
	return r->flush_ms ? r->flush_ms : r->orphans ? PR_ORPHAN_MS : 0;
}

/* Whether every drain is a time-ordered pass over all rings: the session's
 * own wait (merged), or loop opts with an order window. */
static inline bool pr_reactor_ordered(const struct perfring_reactor *r)
{
	return r->merged || r->o.order_window_ns;
}

/* Whether the reactor reads sl's ring: watched, or orphaned (R2), which is
 * read on the timer alone. */
static inline bool pr_slot_read(const struct slot *sl)
{
	return sl->watched || sl->orphan;
}

/* As perfring_reactor_new (attach.c); merged: every drain is a time-ordered
 * pass over all rings (the session's parse_for_duration), with no budget. */
int pr_reactor_make(struct perfring_session *s, const struct perfring_loop_opts *opts,
		    const struct perfring_loop_ops *ops, void *loop, bool merged,
		    struct perfring_reactor **out);

/* Stops watching CPU slot after draining its ring to the end (on false),
 * or watches it again and drains it (on true). 0 or -errno. */
int pr_reactor_slot(struct perfring_reactor *r, size_t slot, bool on);

/* Samples delivered since the last call; the count restarts at 0. */
uint64_t pr_reactor_read_samples_reset(struct perfring_reactor *r);
/* Whether a callback asked to stop (merged mode) since the last call; the
 * request is then forgotten. */
bool pr_reactor_read_stop_reset(struct perfring_reactor *r);
/* CPU slots still read. */
size_t pr_reactor_live(const struct perfring_reactor *r);

#endif
