/* SPDX-License-Identifier: MIT */
/* The fast loop over one CPU's ring, for parse_for_cpu and for the runs of a
 * merged parse. */
#ifndef PR_DRAIN_H
#define PR_DRAIN_H

#include "session.h"

/* The sample the fast loop hands to callbacks. A fixed-shape decode writes
 * only its own fields, so the others must be zero: dirty says a general
 * decode may have left them not. */
struct pr_sbuf {
	struct perfring_sample smp;
	bool dirty;
};

/* One run of a merged parse: the ring's records that sort before bound. */
struct pr_run {
	struct pr_tree_ent bound;  /* the runner-up: (time, CPU index) */
	uint32_t idx;              /* this ring's index in s->cpu */
};

/* Delivers ring idx's records while they sort before run->bound; the first
 * (the tree's winner) always does. In one batch (between pr_begin and pr_end). */
int pr_drain_run(struct perfring_session *s, struct pr_cpu *c, struct pr_run *run,
		 struct pr_sbuf *sb, bool *stop);

/* perfring_cpu_next() inside a pull batch: the next sample or kernel record
 * (PERFRING_NEXT_*), or 0 at the batch's end. */
int pr_pull(struct pr_cpu *c, struct perfring_sample *smp, struct perfring_record *rec);

#endif
