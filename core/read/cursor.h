/* SPDX-License-Identifier: MIT */
/* The merge's reading state of one ring: what its one-record steps move
 * (merge.c) and its batches read (batch.c). */
#ifndef PR_READ_CURSOR_H
#define PR_READ_CURSOR_H

#include "read/fast.h"

struct pr_cursor {
	struct pr_fast k;
	const uint8_t *data;
	uint64_t mask;
	uint64_t head;  /* the ring's snapshot */
	bool ready; /* the record at k.tail passed pr_fast_key: a sample of k.ev */
} __attribute__((aligned(64)));

/* Whether the record h at k->tail is one the fast path takes, short of
 * decoding it; if so, its time. */
static inline bool pr_fast_key(const struct pr_fast *k, const struct perf_event_header *h,
			       uint64_t *key)
{
	const struct pr_layout *l;

	if (!fast_fits(k, h))
		return false;
	l = &k->ev->layout;
	/* l->time >= 0: every event's sample_type has TIME (PR_SAMPLE_FORCED). */
	if (h->size < sizeof(*h) + l->fixed)
		return false;
	*key = pr_ld64((const uint8_t *)(h + 1) + l->time);
	return true;
}

static inline const struct perf_event_header *pr_cursor_at(const struct pr_cursor *u,
							   uint64_t pos)
{
	return (const struct perf_event_header *)(u->data + (pos & u->mask));
}

#endif
