/* SPDX-License-Identifier: MIT */
/* Time order across rings: the merge owns its loser tree, one cursor per
 * ring, its batch strategy, and the newest time it delivered (the late
 * rule's state, read/order.h). Knows rings (pr_cpu), not the session. */
#ifndef PR_READ_MERGE_H
#define PR_READ_MERGE_H

#include "read/batch.h"
#include "read/cursor.h"
#include "read/tree.h"

struct pr_merge {
	struct pr_cpu *cpu;         /* the rings, n of them */
	uint32_t n;
	struct pr_tree tree;
	struct pr_cursor *cur;      /* the reading state, a line per ring */
	struct pr_batch *batch;     /* NULL: one ring, batches would not pay */
	uint64_t newest;            /* newest time delivered so far */
	uint64_t records;           /* records read by merged parses, ever */
};

/* A merge over cpu[0..n). NULL on ENOMEM. */
struct pr_merge *pr_merge_new(struct pr_cpu *cpu, uint32_t n);
void pr_merge_free(struct pr_merge *m);

/* Forgets the newest time delivered (the rings were rewound). */
void pr_merge_reset(struct pr_merge *m);

/* Whether a parse holds one of the rings now (R1, docs/RULES.md). */
bool pr_merge_busy(const struct pr_merge *m);

/* Time-ordered drain of every ring up to one snapshot of their heads.
 * *stopped (may be NULL): a callback asked to stop. Returns samples, or
 * -EBUSY with nothing done while another parse holds one of the rings. */
int pr_merge_parse(struct pr_merge *m, bool *stopped);

#endif
