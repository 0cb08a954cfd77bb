/* SPDX-License-Identifier: MIT */
/* Time order across rings: the merge owns its loser tree, one cursor per
 * ring, its batch strategy, and the newest time it delivered (the late
 * rule's state, read/order.h). Knows rings (pr_cpu), not the session. */
#ifndef PR_READ_MERGE_H
#define PR_READ_MERGE_H

#include "read/batch.h"
#include "read/cursor.h"
#include "read/rbkeep.h"
#include "read/tree.h"
#include "read/window.h"

struct pr_merge {
	struct pr_cpu *cpu;         /* the rings, n of them */
	uint32_t n;
	struct pr_tree tree;
	struct pr_cursor *cur;      /* the reading state, a line per ring */
	struct pr_batch *batch;     /* NULL: one ring, batches would not pay */
	uint64_t newest;            /* newest time delivered so far */
	uint64_t records;           /* records read by merged parses, ever */
	struct pr_rbleaf *rbl;      /* timed ring buffers: tree leaves n.. */
	uint32_t nrb;
	struct pr_window win;       /* the window's account of late records */
};

/* A merge over cpu[0..n). NULL on ENOMEM. */
struct pr_merge *pr_merge_new(struct pr_cpu *cpu, uint32_t n);
void pr_merge_free(struct pr_merge *m);

/* The timed BPF ring buffers rb[0..n) become leaves of the merge after the
 * rings (at start; the merge does not own them, and drops what their
 * windows kept when freed). Their records are merged by time with the
 * rings' (and sorted within a pass's window: read/rbkeep.h); with them a
 * pass takes no batches. 0 or -ENOMEM (the merge is then as before). */
int pr_merge_set_ringbufs(struct pr_merge *m, struct pr_rbuf **rb, uint32_t n);

/* Forgets the newest time delivered (the rings were rewound). */
void pr_merge_reset(struct pr_merge *m);

/* Whether a parse holds one of the rings now (R1, docs/RULES.md). */
bool pr_merge_busy(const struct pr_merge *m);

/* Time-ordered drain of every ring up to one snapshot of their heads.
 * *stopped (may be NULL): a callback asked to stop. Returns samples, or
 * -EBUSY with nothing done while another parse holds one of the rings. */
int pr_merge_parse(struct pr_merge *m, bool *stopped);

/* One merged pass with a bound ("Time order with a bound", perfring/parse.h):
 * with a window W, the pass that begins at T (read before any head)
 * delivers every record with time <= T - W, in time order, and keeps the
 * younger ones where they are, in their rings (each ring is in time order,
 * so a ring stops at its first record past the bound and its tail stays
 * there). Records without a time go when next, as in every merge. */
struct pr_pass {
	uint64_t window;  /* in: ns; 0: up to the heads (pr_merge_parse) */
	uint64_t now;     /* in: T, CLOCK_MONOTONIC ns; 0: the clock, read here */
	uint32_t max;     /* in: stop after this many samples; 0: no max. With a
	                     max the pass goes record by record (no runs, no
	                     batches), so that it stops where it says */
	bool stopped;     /* out: a callback asked to stop */
	bool more;        /* out: the pass stopped (max, a callback) with records
	                     it could have delivered left */
	uint64_t kept;    /* out: the oldest time held back by the window (the
	                     smallest head past the bound), 0: none */
};

/* pr_merge_parse with p's bounds. Returns samples or -EBUSY (p's outs then
 * false and 0). */
int pr_merge_pass(struct pr_merge *m, struct pr_pass *p);

/* The bound of a pass that begins at now with window w: the newest time
 * it delivers. */
static inline uint64_t pr_pass_limit(uint64_t now, uint64_t w)
{
	return !w ? UINT64_MAX : now > w ? now - w : 0;
}

/* When a record of time t that a pass with window w kept must go: t + w,
 * saturated (UINT64_MAX - 1: never before a pass without the window). */
static inline uint64_t pr_pass_due(uint64_t t, uint64_t w)
{
	return t < UINT64_MAX - 1 && w < UINT64_MAX - 1 - t ? t + w : UINT64_MAX - 1;
}

#endif
