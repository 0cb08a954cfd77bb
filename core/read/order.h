/* SPDX-License-Identifier: MIT */
/* The merge's order rules, in one place: which record goes first, and which
 * is late. Every path of a merged parse (its steps, a ring's run through the
 * drain loop, its batches) applies these and nothing else. */
#ifndef PR_READ_ORDER_H
#define PR_READ_ORDER_H

#include "read/tree.h"

#include <stdbool.h>
#include <stdint.h>

/* Late: a record older than one a merged parse already delivered. newest is
 * the newest time delivered so far, which a record that is not late
 * becomes. A record without a time (an id the session does not own) is
 * never given to this rule: it goes out when its ring is next. */
static inline bool pr_late(uint64_t *newest, uint64_t t)
{
	bool late = t < *newest;

	*newest = late ? *newest : t;
	return late;
}

/* Whether a record of ring idx with this time goes before bound, the
 * runner-up: by time, then ring index (CPU order). */
static inline bool pr_before(struct pr_tree_ent bound, uint32_t idx, uint64_t time)
{
	return pr_tree_less((struct pr_tree_ent){ time, idx }, bound);
}

#endif
