/* SPDX-License-Identifier: MIT */
/* A stretch: the samples of the fast path's event that lie contiguous ahead
 * of its tail, walked by both fast loops (the drain's callbacks, the batch
 * pull's items). */
#ifndef PR_READ_STRETCH_H
#define PR_READ_STRETCH_H

#include "read/fast.h"

/*
 * Why a stretch: the walk from one record to the next is a chain of
 * dependent loads (the next header's place is this header's size), and a
 * loop that adds each loaded size to its tail is held to that chain's
 * latency however little else it does. A stretch remembers the header of
 * the record before (type, misc and size, 8 bytes) and checks that each
 * record's header is the same: the tail then moves by a register, the
 * loaded header feeds only a predicted branch, and the loop runs at the
 * rate of its instructions; one compare checks type and size. A record
 * with another header is checked in full and its header becomes the one to
 * expect: nothing is assumed about sizes or misc bits, a change only costs
 * a mispredicted branch.
 *
 * Every record of a stretch is still checked: a sample (type), of the
 * event (IDENTIFIER), a multiple of 8 of at least the shape's minimum, and
 * wholly before the end (min(head, the ring's end)): p <= last, where last
 * is the last place a record of sz bytes ends by then.
 */
struct pr_stretch {
	const uint8_t *p;        /* the next record */
	const uint8_t *end;      /* end of the written, contiguous bytes */
	const uint8_t *last;     /* last place a record of sz bytes fits */
	uint64_t hdr;            /* the header each record is expected to have */
	uint64_t sz;             /* its size */
	uint32_t min;            /* the least a sample of this shape can be */
	uint32_t room;           /* sz - min: what a tracepoint's RAW may take */
	uint64_t id;             /* IDENTIFIER of the event */
};

/* F(shape, ...) with shape a constant equal to s (an enum pr_shape), so
 * that F, inlined, is compiled once per shape with no dispatch on it. */
#define PR_BY_SHAPE(s, F, ...)                                                           \
	((s) == PR_SHAPE_TRACEPOINT ? F(PR_SHAPE_TRACEPOINT, __VA_ARGS__)                 \
	 : (s) == PR_SHAPE_FORCED   ? F(PR_SHAPE_FORCED, __VA_ARGS__)                     \
				    : F(PR_SHAPE_ANY, __VA_ARGS__))

/* A record with another header than the last: checked in full. */
static inline bool pr_stretch_relearn(struct pr_stretch *st, const struct perf_event_header *h)
{
	uint32_t size = h->size;

	if (h->type != PERF_RECORD_SAMPLE || (size & 7) || size < st->min ||
	    size > (uint64_t)(st->end - st->p))
		return false;
	st->hdr = pr_ld64(st->p);
	st->sz = size;
	st->room = size - st->min;
	st->last = st->end - size;
	return true;
}

/* A stretch at k's tail for samples of k->ev decoded as shape (its layout's,
 * or a constant equal to it). false: no sample of it can start there. */
static inline __attribute__((always_inline)) bool
pr_stretch_begin(struct pr_stretch *st, const struct pr_fast *k, const uint8_t *data,
		 uint64_t mask, enum pr_shape shape)
{
	/* fast_from leaves end at tail for an unaligned tail: nothing left. */
	uint64_t left = k->end - k->tail;

	st->p = data + (k->tail & mask);
	st->end = st->p + left;
	st->min = shape == PR_SHAPE_ANY ? 16 : pr_shape_min(shape);
	st->id = k->id;
	if (!k->ev || left < st->min)
		return false;
	/* The header to expect is always one checked in full: the first. */
	return pr_stretch_relearn(st, (const struct perf_event_header *)st->p);
}

/* The record at st->p if it is a sample of the event, wholly before the
 * end; NULL: the general path takes it (or nothing is left). Does not
 * advance: pr_stretch_take does. */
static inline __attribute__((always_inline)) const struct perf_event_header *
pr_stretch_peek(struct pr_stretch *st)
{
	const struct perf_event_header *h = (const struct perf_event_header *)st->p;

	if (st->p > st->last)
		return NULL;
	if (__builtin_expect(pr_ld64(st->p) != st->hdr, 0) && !pr_stretch_relearn(st, h))
		return NULL;
	if (pr_ld64(st->p + sizeof(*h)) != st->id)
		return NULL;
	return h;
}

static inline __attribute__((always_inline)) void pr_stretch_take(struct pr_stretch *st)
{
	st->p += st->sz;
}

/* h, from pr_stretch_peek, decoded as shape. A fixed shape writes only its
 * own fields, the id not among them: every record of the stretch has
 * st->id, which the caller writes once. The record's size is known to hold
 * them. */
static inline __attribute__((always_inline)) bool
pr_stretch_decode(const struct pr_stretch *st, const struct pr_layout *l, enum pr_shape shape,
		  const struct perf_event_header *h, struct perfring_sample *smp)
{
	/* The profiler's fields are the caller's to zero (a drain's sample
	 * starts zeroed; a pull's item is zeroed by the pull). */
	if (shape == PR_SHAPE_ANY)
		return pr_decode_sample_sb(h, l, smp) == 0;
	return pr_decode_fixed_but_id(h, shape, st->room, smp) == 0;
}

/* k's tail once the stretch begun there has taken what it took: as far
 * before k->end as st->p is before st->end (nothing is kept of where it
 * began, which would hold a register for the whole loop). */
static inline uint64_t pr_stretch_tail(const struct pr_stretch *st, const struct pr_fast *k)
{
	return k->end - (uint64_t)(st->end - st->p);
}

#endif
