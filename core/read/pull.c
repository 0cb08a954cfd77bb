/* SPDX-License-Identifier: MIT */
/* The batch pull: the fast loop into items, and the general path with its
 * wrapped records copied one after the other into the scratch. */
#include "read/pull.h"
#include "read/deliver.h"
#include "read/stretch.h"

_Static_assert(PERFRING_PULL_SCRATCH == PR_RING_SCRATCH, "the scratch the header promises");

/* k's stretch into items, decoded as shape: every field of each item's
 * sample is written, since the caller's items may hold anything. */
static inline __attribute__((always_inline)) size_t
pull_stretch(enum pr_shape shape, struct pr_fast *k, const uint8_t *data, uint64_t mask,
	     struct perfring_item *it, size_t max)
{
	struct perfring_event *const ev = k->ev;
	const struct perf_event_header *h;
	struct perfring_sample *smp;
	struct pr_stretch st;
	size_t n = 0;

	if (!pr_stretch_begin(&st, k, data, mask, shape))
		return 0;
	while (n < max && __builtin_expect((h = pr_stretch_peek(&st)) != NULL, 1)) {
		smp = &it[n].u.sample;
		/* A fixed shape writes only its own fields: the rest are
		 * zero, whatever fields the struct has. */
		if (shape != PR_SHAPE_ANY)
			*smp = (struct perfring_sample){ 0 };
		if (!pr_stretch_decode(&st, &ev->layout, shape, h, smp))
			break;
		smp->event = ev;
		it[n].kind = PERFRING_NEXT_SAMPLE;
		pr_stretch_take(&st);
		n++;
	}
	k->tail = pr_stretch_tail(&st, k);
	k->fast += n;
	return n;
}

/* Out of line, so that the loop has the registers to itself. */
static size_t __attribute__((noinline))
pull_fast(struct pr_fast *k, const uint8_t *data, uint64_t mask, struct perfring_item *it,
	  size_t max)
{
	if (!k->ev)
		return 0;
	return PR_BY_SHAPE(k->ev->layout.shape, pull_stretch, k, data, mask, it, max);
}

#define PULL_END (-1) /* nothing left, or no room for a wrapped record */

/* The next record through the general path into *it: 1 when it holds it,
 * 0 for one skipped (and counted), PULL_END. A wrapped record is copied to
 * the scratch after the ones this pull already returned (*used bytes). */
static int pull_slow(struct pr_cpu *c, struct perfring_item *it, size_t *used)
{
	uint8_t *dst = c->ring.scratch + *used;
	const struct perf_event_header *h;
	bool no_room;

	h = pr_peek_to(c, dst, PR_RING_SCRATCH - *used, &no_room);
	if (!h)
		return PULL_END;
	pr_ring_consume(&c->ring, h);
	it->kind = pr_decode(c, h, &it->u.sample, &it->u.record);
	if (!it->kind)
		return 0;
	if ((const uint8_t *)h == dst)
		*used += h->size;
	return 1;
}

size_t pr_pull_batch(struct pr_cpu *c, struct perfring_item *items, size_t max)
{
	const uint8_t *data = c->ring.data;
	const uint64_t mask = c->ring.size - 1;
	bool fresh = !c->pulling;
	size_t n = 0, used = 0;
	struct pr_fast k;
	int r;

	if (fresh)
		pr_begin(c);
	c->pulling = true;
	while (n < max) {
		if (c->ring.tail == c->ring.head) {
			/* Once a pull: what was written since the snapshot. */
			if (fresh)
				break;
			pr_begin(c);
			fresh = true;
			continue;
		}
		fast_from(c, &k);
		n += pull_fast(&k, data, mask, items + n, max - n);
		fast_store(c, &k);
		if (n == max || c->ring.tail == c->ring.head)
			continue;
		if ((r = pull_slow(c, items + n, &used)) == PULL_END)
			break;
		n += (size_t)r;
	}
	return n;
}
