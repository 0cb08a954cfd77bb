/* SPDX-License-Identifier: MIT */
/* The merge's reading state of one ring, shared by its one-record steps
 * (merged.c) and its batches (batch.c). */
#ifndef PR_CURSOR_H
#define PR_CURSOR_H

#include "hot.h"

struct pr_cursor {
	struct hot k;
	const uint8_t *data;
	uint64_t mask;
	bool ready; /* the record at k.tail passed pr_fast_key: a sample of k.ev */
} __attribute__((aligned(64)));

/* Whether the record h at k->tail is one the fast path takes, short of
 * decoding it; if so, its time. */
static inline bool pr_fast_key(const struct hot *k, const struct perf_event_header *h,
			       uint64_t *key)
{
	const struct pr_layout *l;

	if (!hot_fits(k, h))
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

/* A record merged with time t: late if it sorts before one already out.
 * t 0: a record without a time, which is never late. */
static inline void pr_note_late(struct perfring_session *s, struct pr_cpu *c, uint64_t t)
{
	if (!t)
		return;
	if (t < s->last_merged_time)
		c->st.late++;
	else
		s->last_merged_time = t;
}

#endif
