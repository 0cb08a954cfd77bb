/* SPDX-License-Identifier: MIT */
/* One watched CPU: its ring, the ids of the events writing into it, its
 * stats and its flags. Filled by rings/open.c (or a test's synthetic
 * ring), read by the drain and the merge. */
#ifndef PR_READ_CPU_H
#define PR_READ_CPU_H

#include "event.h"
#include "kernel/ring.h"

#include <perfring/perfring.h>
#include <pthread.h>

struct pr_idmap {
	uint64_t id;
	struct perfring_event *ev;  /* NULL: the CPU's dummy leader */
};

/* A ring's drops as two counts of one sequence (rings/lost.c): the sum
 * of its LOST records and the kernel's per-event totals at the last read. */
struct pr_lost {
	uint64_t rec, read;
	int due;                    /* atomic: read the totals at the next parse */
};

/* A watched CPU's one state: rings/open.c sets ON once its ring is open
 * and mapped and OFF when it closes; a following session (hotplug) marks a
 * CPU whose reopen failed, which is tried again only once it has left. */
enum pr_cpu_state { PR_CPU_OFF, PR_CPU_ON, PR_CPU_FAILED };

/* Written only by the thread parsing this CPU, so it is padded to its own
 * cache lines. */
struct pr_cpu {
	int cpu;
	enum pr_cpu_state state;
	int leader_fd;              /* mmapped; the fd callers watch */
	void *map;
	size_t map_len;
	struct pr_ring ring;
	uint8_t *scratch;
	struct pr_idmap *ids;       /* sorted by id */
	size_t nids;
	struct pr_idmap last;       /* last lookup hit */
	int *fds;                   /* every other fd on this CPU */
	size_t nfds;
	const struct pr_sink *sink; /* where kernel records go */
	struct perfring_cpu_stats st;
	uintptr_t busy;             /* R1: the parsing thread (pr_self), 0 = none */
	bool pulling;               /* pull form holds an uncommitted batch */
	bool ended;                 /* its fd reported the end and the ring was
	                               drained after it: nobody watches it now */
	struct pr_lost lost;        /* what stats.lost is made of */
	char pad[64];               /* keeps CPUs parsed by different threads apart */
};

/* The one spelling of "this CPU is on": its ring is open and read. */
static inline bool pr_cpu_on(const struct pr_cpu *c)
{
	return c->state == PR_CPU_ON;
}

/* R1 (docs/RULES.md): one parse of a ring at a time, from any thread or
 * callback. A parse claims the ring with one compare-and-swap per call,
 * never per record. */
static inline uintptr_t pr_self(void)
{
	return (uintptr_t)pthread_self();
}

static inline bool pr_cpu_claim(struct pr_cpu *c, uintptr_t me)
{
	uintptr_t none = 0;

	return __atomic_compare_exchange_n(&c->busy, &none, me, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void pr_cpu_unclaim(struct pr_cpu *c)
{
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
}

/* Whether this thread holds c (a pull batch it began). */
static inline bool pr_cpu_mine(const struct pr_cpu *c, uintptr_t me)
{
	return __atomic_load_n(&c->busy, __ATOMIC_RELAXED) == me;
}

/* R8: stats are read from any thread while the ring is parsed. Only the
 * ring's parser writes them (R1 hands the ring from one to the next with
 * acquire and release), so a plain read and a relaxed store do; on x86 and
 * arm64 that is the plain code. Readers load each counter relaxed. */
#define PR_STAT_SET(c, field, v) __atomic_store_n(&(c)->st.field, (v), __ATOMIC_RELAXED)
#define PR_STAT_ADD(c, field, n) PR_STAT_SET(c, field, (c)->st.field + (n))

/* A copy of c's stats, each counter whole (not a snapshot across them). */
void pr_cpu_stats_read(const struct pr_cpu *c, struct perfring_cpu_stats *out);

/* The entry of id in c's sorted id table, or NULL. */
const struct pr_idmap *pr_cpu_find_id(const struct pr_cpu *c, uint64_t id);

/* Sorts c's id table and starts its lookups at the first entry. */
void pr_cpu_ids_ready(struct pr_cpu *c);

/* Forgets what was read: tail at the ring's data_tail, stats and flags at
 * zero (a synthetic ring made readable again). */
void pr_cpu_rewind(struct pr_cpu *c);

#endif
