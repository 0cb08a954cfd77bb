/* SPDX-License-Identifier: MIT */
/* The fast path's per-record pieces, shared by the drain loop (state in
 * registers) and the merge (state in one pr_cursor per ring). */
#ifndef PR_READ_FAST_H
#define PR_READ_FAST_H

#include "decode/record.h"
#include "event.h"
#include "read/cpu.h"
#include "read/tree.h"

#include <string.h>

/* The sample the fast loop hands to callbacks. A fixed-shape decode writes
 * only its own fields, so the others must be zero: shape is the last decode's
 * (enum pr_shape, or PR_SB_PROFILE), which says which fields may not be.
 * Zeroed = fresh. */
struct pr_sbuf {
	struct perfring_sample smp;
	uint8_t shape;
};

/* A merge's bound on one ring's delivery: its records that sort before
 * bound, the runner-up (time, ring index). newest and late carry the
 * merge's late rule (read/order.h) in and out. */
struct pr_run {
	struct pr_tree_ent bound;
	uint32_t idx;              /* this ring's index in the merge */
	uint64_t newest;           /* newest time merged so far */
	uint64_t late;             /* records found late on the way */
	uint64_t limit;            /* with no runner-up (bound.idx >= PR_TREE_DONE):
	                              records past this time stay, a pass's window
	                              (UINT64_MAX: none) */
};

/* What the loop keeps in registers instead of in *c: the callback is opaque,
 * so the compiler would reload and re-store every field of *c around each
 * call, and the tail's store-to-load chain would set the pace. */
struct pr_fast {
	uint64_t tail, tail0;       /* tail now, and at fast_load */
	uint64_t end;               /* min(head, where the ring wraps) */
	uint64_t fast;              /* samples delivered by the fast path since */
	uint64_t id;                /* IDENTIFIER of the fast path's event */
	struct perfring_event *ev;  /* NULL: every record takes the slow path */
};

/* Readies sb for a sample of ev: a fixed shape needs the fields it does not
 * write at zero. A general decode writes every field but the profiler's,
 * which only a layout with them (PR_SB_PROFILE) writes, and leaves; a
 * tracepoint's leaves raw behind, which a forced-only sample must not show. */
static inline void pr_sbuf_ready(struct pr_sbuf *sb, struct perfring_event *ev)
{
	uint8_t shape = ev ? ev->layout.sb_shape : PR_SHAPE_FORCED;

	if (__builtin_expect(sb->shape != shape, 0)) {
		if (sb->shape == PR_SB_PROFILE ||
		    (shape != PR_SHAPE_ANY && shape != PR_SB_PROFILE &&
		     (sb->shape == PR_SHAPE_ANY || shape == PR_SHAPE_FORCED)))
			memset(&sb->smp, 0, sizeof(sb->smp));
		sb->shape = shape;
	}
	sb->smp.event = ev;
}

/* Takes c's ring position and last event into k. */
static inline void fast_from(const struct pr_cpu *c, struct pr_fast *k)
{
	uint64_t to_head, to_wrap;

	k->tail = k->tail0 = c->ring.tail;
	/* Distances, not positions: a position may pass 2^64 (a multiple of
	 * every ring size) between the tail and the ring's end or the head. */
	to_head = c->ring.head - k->tail;
	to_wrap = c->ring.size - (k->tail & (c->ring.size - 1));
	/* An unaligned tail (only hostile memory makes one) leaves the fast
	 * path nothing: the slow path resyncs it. */
	k->end = k->tail + (k->tail & 7 ? 0 : to_head < to_wrap ? to_head : to_wrap);
	k->fast = 0;
	k->id = c->last.id;
	k->ev = c->last.ev;
}

/* fast_from, and sb readied for samples of k->ev on c. */
static inline void fast_load(struct pr_cpu *c, struct pr_fast *k, struct pr_sbuf *sb)
{
	fast_from(c, k);
	pr_sbuf_ready(sb, k->ev);
	sb->smp.cpu = c->cpu;
}

/* Every fast-path record is a sample, so one counter serves three stats. */
static inline void fast_store(struct pr_cpu *c, const struct pr_fast *k)
{
	c->ring.tail = k->tail;
	PR_STAT_ADD(c, records, k->fast);
	PR_STAT_ADD(c, samples, k->fast);
	PR_STAT_ADD(c, bytes, k->tail - k->tail0);
}

/* A sample of the event with layout l, decoded as shape: l->shape, or a
 * constant equal to it, so that a caller inlined per shape drops the
 * dispatch. A fixed shape writes only its own fields; the rest stay zero
 * (pr_sbuf). */
static inline __attribute__((always_inline)) bool
pr_decode_as(const struct pr_layout *l, enum pr_shape shape, const struct perf_event_header *h,
	     struct perfring_sample *smp)
{
	if (shape != PR_SHAPE_ANY)
		return pr_decode_shaped(h, shape, smp) == 0;
	return pr_decode_sample_sb(h, l, smp) == 0;
}

static inline bool pr_decode_laid(const struct pr_layout *l, const struct perf_event_header *h,
				  struct perfring_sample *smp)
{
	return pr_decode_as(l, (enum pr_shape)l->shape, h, smp);
}

static inline bool fast_decode(const struct pr_fast *k, const struct perf_event_header *h,
			      struct perfring_sample *smp)
{
	return pr_decode_laid(&k->ev->layout, h, smp);
}

/* A sample with IDENTIFIER id, of at least min bytes (min >= 16: header +
 * IDENTIFIER), a multiple of 8, wholly before end. h is at tail, which must
 * be 8-aligned and below end: only then does its header lie inside the data
 * area. With size a multiple of 8 and tail aligned, `tail + size <= end` is
 * all that pr_ring_peek checks. */
static inline bool pr_sample_fits(const struct perf_event_header *h, uint64_t tail, uint64_t end,
				  uint32_t min, uint64_t id)
{
	return !(h->size & 7) && h->size >= min && tail + h->size <= end &&
	       h->type == PERF_RECORD_SAMPLE && pr_ld64((const uint8_t *)(h + 1)) == id;
}

/* A sample of k->ev, at least header + IDENTIFIER, wholly before k->end. */
static inline bool fast_fits(const struct pr_fast *k, const struct perf_event_header *h)
{
	return !(k->tail & 7) && k->ev && pr_sample_fits(h, k->tail, k->end, 16, k->id);
}

/* The fast path's record, decoded into smp. */
static inline bool fast_take(const struct pr_fast *k, const struct perf_event_header *h,
			    struct perfring_sample *smp)
{
	return fast_fits(k, h) && fast_decode(k, h, smp);
}

#endif
