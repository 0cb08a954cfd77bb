/* SPDX-License-Identifier: MIT */
/* The reactor's internal face: the session's own wait (merged mode) and the
 * tests that add and remove slots while attached. */
#ifndef PR_LOOP_REACTOR_H
#define PR_LOOP_REACTOR_H

#include "session.h"

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
	int hp_fd;              /* hotplug: our dup of the notifier, slot n */
	bool hp_on;             /* hp_fd is open and watched */
};


/* Shared by reactor.c (the rules) and attach.c (making and freeing one). */
void pr_reactor_enter(struct perfring_reactor *r);
/* Ends a reactor call. true: r is gone (freed from inside the call). */
bool pr_reactor_leave(struct perfring_reactor *r);
/* Frees r's memory, then calls free_then's done. */
void pr_reactor_finish(struct perfring_reactor *r);
/* Calls the driver's destroy(); frees r if the driver said destroyed in it. */
void pr_reactor_destroy_now(struct perfring_reactor *r);
void pr_reactor_unwatch(struct perfring_reactor *r, struct slot *sl);
/* A drain's end (R7, docs/RULES.md): false when the session was freed
 * inside it. */
bool pr_reactor_drained(struct perfring_reactor *r, struct perfring_session *s, int n);
void pr_reactor_drain_slot(struct perfring_reactor *r, struct slot *sl);
void pr_reactor_drain_all(struct perfring_reactor *r, bool flush);
/* Asks for a soon turn (once); a refusal is reported for cpu. */
void pr_reactor_want_soon(struct perfring_reactor *r, int cpu);
/* opts.on_error(cpu, err), unless cancelled. */
void pr_reactor_report(struct perfring_reactor *r, int cpu, int err);

/* CPU hotplug (loop/follow.c). The notifier is slot n, after the CPUs'. */
void pr_reactor_follow_start(struct perfring_reactor *r);  /* in setup: watch it */
void pr_reactor_follow_stop(struct perfring_reactor *r);   /* in quiesce */
void pr_reactor_follow_ready(struct perfring_reactor *r);  /* slot n is readable */
/* In on_timer, before the drain: without a notifier, sysfs is read again.
 * true: r was cancelled inside (R7), and nothing of the session is left. */
bool pr_reactor_follow_timer(struct perfring_reactor *r);

/* With flushing off, rings of a process whose first task exited still need
 * the timer: nothing else tells when to read them (R2). */
#define PR_ORPHAN_MS 100

/* The timer's period now: the flush's, else the orphans', else none (0). */
static inline uint32_t pr_reactor_timer_ms(const struct perfring_reactor *r)
{
	return r->flush_ms ? r->flush_ms : r->orphans ? PR_ORPHAN_MS : 0;
}

/* Whether the reactor reads sl's ring: watched, or orphaned (R2), which is
 * read on the timer alone. */
static inline bool pr_slot_read(const struct slot *sl)
{
	return sl->watched || sl->orphan;
}

/* As perfring_reactor_new; merged: every drain is a time-ordered pass over
 * all rings (the session's parse_for_duration), with no budget. */
int pr_reactor_make(struct perfring_session *s, const struct perfring_loop_opts *opts,
		    const struct perfring_loop_ops *ops, void *loop, bool merged,
		    struct perfring_reactor **out);

/* Stops watching slot after draining its ring to the end (on false), or
 * watches it again and drains it (on true). 0 or -errno. */
int pr_reactor_slot(struct perfring_reactor *r, size_t slot, bool on);

/* Samples delivered since the last call (and resets the count). */
uint64_t pr_reactor_take_samples(struct perfring_reactor *r);
/* A callback asked to stop (merged mode), since the last call. */
bool pr_reactor_take_stop(struct perfring_reactor *r);
/* Slots still watched. */
size_t pr_reactor_live(const struct perfring_reactor *r);

#endif
