/* SPDX-License-Identifier: MIT */
/* The batch pull: the fast loop into items, and the general path with its
 * wrapped records copied one after the other into the scratch. */
#include "read/pull.h"
#include "read/deliver.h"
#include "read/stretch.h"

#include <string.h>

_Static_assert(PERFRING_PULL_SCRATCH == PR_RING_SCRATCH, "the scratch the header promises");

/* Two u64 stored at once. Writing the item is what bounds the batch pull
 * (bench/RESULTS.md): 14 stores of up to 8 bytes for its 120; pairs of
 * fields side by side take 9, and the loop runs 15-20% faster. */
typedef uint64_t pr_u64x2 __attribute__((vector_size(16)));

static inline void put2(void *dst, uint64_t a, uint64_t b)
{
	pr_u64x2 v = { a, b };

	memcpy(dst, &v, sizeof(v));
}

/* x in the first bytes of a zeroed u64, as memory has it whatever the byte
 * order: an int or u32 field and the padding after it, in one store. */
static inline uint64_t low32(uint32_t x)
{
	uint64_t w = 0;

	memcpy(&w, &x, sizeof(x));
	return w;
}

#define AT(f) offsetof(struct perfring_item, u.sample.f)

_Static_assert(offsetof(struct perfring_item, kind) == 0 && AT(event) == 8,
	       "kind, its padding and event make 16 bytes");
_Static_assert(AT(pid) == AT(cpu) + 4 && AT(tid) == AT(pid) + 4, "cpu, pid, tid");
_Static_assert(AT(id) == AT(time) + 8 && AT(addr) == AT(ip) + 8 && AT(period) == AT(addr) + 8 &&
	       AT(callchain) == AT(period) + 8 && AT(callchain_nr) == AT(callchain) + 8 &&
	       AT(raw) == AT(callchain_nr) + 8 && AT(raw_size) == AT(raw) + 8 &&
	       AT(record) == AT(raw_size) + 8 && AT(stream_id) == AT(record) + 8,
	       "the pairs an item is written in");

/* A sample item of a fixed shape from f: the fields every sample has, raw
 * and raw_size when the shape has them, and with zeroed set, zero for the
 * fields up to record the shape lacks. What follows (stream_id, the
 * profiler's fields) is the caller's to read only under its sample_type bit,
 * which a fixed shape has none of. The zeros are 36 of a tracepoint item's
 * 112 bytes, and 0.1-0.2x the walk's time (bench/RESULTS.md). */
static inline __attribute__((always_inline)) void
item_fixed(struct perfring_item *it, struct perfring_event *ev, uint64_t id,
	   const struct perf_event_header *h, const struct pr_fixed *f, enum pr_shape shape,
	   bool zeroed)
{
	uint8_t *p = (uint8_t *)it;

	put2(p, low32((uint32_t)PERFRING_NEXT_SAMPLE), (uintptr_t)ev);
	it->u.sample.cpu = (int)f->cpu;
	memcpy(p + AT(pid), &f->pid_tid, sizeof(f->pid_tid));
	put2(p + AT(time), f->time, id);
	if (zeroed) {
		put2(p + AT(ip), 0, 0);
		put2(p + AT(period), 0, 0);
		put2(p + AT(callchain_nr), 0, (uintptr_t)f->raw);
		put2(p + AT(raw_size), low32(f->raw_size), (uintptr_t)h);
		return;
	}
	if (shape == PR_SHAPE_TRACEPOINT) {
		it->u.sample.raw = f->raw;
		it->u.sample.raw_size = f->raw_size;
	}
	it->u.sample.record = h;
}
#undef AT

/* k's stretch into items, decoded as shape: every field the header
 * promises is written, since the caller's items may hold anything (zeroed:
 * those up to record that the shape lacks too). A general layout's decode
 * writes every field up to stream_id, and zeroes the profiler's fields
 * before it fills them when it has any. */
static inline __attribute__((always_inline)) size_t
pull_stretch(enum pr_shape shape, bool zeroed, struct pr_fast *k, const uint8_t *data,
	     uint64_t mask, struct perfring_item *it, size_t max)
{
	struct perfring_event *const ev = k->ev;
	const struct perf_event_header *h;
	struct perfring_sample *smp;
	struct perfring_item *cur = it, *const stop = it + max;
	struct pr_stretch st;
	struct pr_fixed f;
	size_t n;

	if (!pr_stretch_begin(&st, k, data, mask, shape))
		return 0;
	/* The item pointer is the count: one register and one add the less. */
	while (cur != stop && __builtin_expect((h = pr_stretch_peek(&st)) != NULL, 1)) {
		if (shape != PR_SHAPE_ANY) {
			if (pr_fixed_read(h, shape, st.room, &f))
				break;
			item_fixed(cur, ev, st.id, h, &f, shape, zeroed);
		} else {
			smp = &cur->u.sample;
			if (!pr_stretch_decode(&st, &ev->layout, shape, h, smp))
				break;
			smp->event = ev;
			cur->kind = PERFRING_NEXT_SAMPLE;
		}
		pr_stretch_take(&st);
		cur++;
	}
	n = (size_t)(cur - it);
	k->tail = pr_stretch_tail(&st, k);
	k->fast += n;
	return n;
}

/* Out of line, so that the loop has the registers to itself. A general
 * layout writes its zeros either way: one loop of it is enough. */
static size_t __attribute__((noinline))
pull_fast(struct pr_fast *k, const uint8_t *data, uint64_t mask, struct perfring_item *it,
	  size_t max, bool zeroed)
{
	if (!k->ev)
		return 0;
	if (zeroed || k->ev->layout.shape == PR_SHAPE_ANY)
		return PR_BY_SHAPE(k->ev->layout.shape, pull_stretch, true, k, data, mask, it, max);
	if (k->ev->layout.shape == PR_SHAPE_TRACEPOINT)
		return pull_stretch(PR_SHAPE_TRACEPOINT, false, k, data, mask, it, max);
	return pull_stretch(PR_SHAPE_FORCED, false, k, data, mask, it, max);
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

size_t pr_pull_batch(struct pr_cpu *c, struct perfring_item *items, size_t max, bool zeroed)
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
		n += pull_fast(&k, data, mask, items + n, max - n, zeroed);
		fast_store(c, &k);
		if (n == max || c->ring.tail == c->ring.head)
			continue;
		if ((r = pull_slow(c, items + n, &used)) == PULL_END)
			break;
		n += (size_t)r;
	}
	return n;
}
