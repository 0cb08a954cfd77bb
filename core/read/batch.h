/* SPDX-License-Identifier: MIT */
/* The merge in batches, for finely interleaved rings: a window of every
 * ring, placed into buckets by time, costs a few memory operations a
 * record, where a tree replay costs a dependent game per level. */
#ifndef PR_READ_BATCH_H
#define PR_READ_BATCH_H

#include "read/cursor.h"

/* A record in a window: its time, and where it is. */
struct pr_batch_item {
	uint64_t key;
	const struct perf_event_header *h;
};

struct pr_batch {
	struct pr_batch_item *in;   /* the windows, ring after ring */
	uint32_t *next;             /* per item: the next in its bucket's list */
	uint32_t *slot;             /* per bucket: its lone item, or its list's last */
	const struct perf_event_header **table; /* per bucket: its one item's record,
	                               NULL when it holds a list */
	uint64_t *bits;             /* nb / 64 words: the buckets that hold items */
	uint32_t *start, *len;      /* per ring: its window in `in` */
	uint32_t *done;             /* per ring: how many of it went out */
	uint32_t cap, per_ring, nb; /* items; items a ring; buckets (2 * cap, 64 | nb) */
	unsigned shift;             /* a bucket spans 2^shift time units */
	uint32_t min_total;         /* fewer records than this do not pay */
	uint32_t after; /* one-record steps in a row before the merge tries a batch */
	uint32_t wait;  /* steps before the next try: doubles after each refusal */
	uint32_t wait_max; /* up to this */
	uint64_t batches, records; /* delivered so far: for tests and benchmarks */
};

/* For n rings; NULL when batches would not pay (fewer than two rings) or on
 * ENOMEM (*err). */
struct pr_batch *pr_batch_new(uint32_t n, int *err);
void pr_batch_free(struct pr_batch *b);

/* Delivers, in (time, CPU) order, every record of the n rings that sorts
 * before the oldest one a window leaves behind: exactly the records the
 * tree would give next. lo: the oldest head (the tree's winner). Reads the
 * cursors, never moves them: b->done[i] tells the merge how many of ring
 * i's window went out (pr_batch_item). Nothing past limit goes (a pass's
 * bound, pr_pass; UINT64_MAX: none). Returns the samples delivered, or -1
 * (nothing done) when the windows hold too few records, or records of more
 * than one event; -2 (nothing done, no refusal) when limit leaves too few.
 * *unpaid: a record the decode refuses cut it short before
 * it delivered enough to pay for itself (the caller backs off as after a -1). */
int pr_batch_run(struct pr_batch *b, const struct pr_cursor *cur, uint32_t n, uint64_t lo,
		 uint64_t limit, struct pr_sbuf *sb, bool *stop, bool *unpaid);

/* Ring i's j-th window record of the last batch. */
static inline const struct pr_batch_item *pr_batch_item(const struct pr_batch *b, uint32_t i,
							uint32_t j)
{
	return &b->in[b->start[i] + j];
}

#endif
