/* SPDX-License-Identifier: MIT */
/* One ring: acquire the head, hand out records (copying one that wraps), release the tail. */
#include "kernel/ring.h"

#include <errno.h>
#include <string.h>

int pr_ring_init(struct pr_ring *r, struct perf_event_mmap_page *meta, const void *data,
		 uint64_t data_size, uint8_t *scratch)
{
	if (!meta || !data || !scratch || data_size < 8 || (data_size & (data_size - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->meta = meta;
	r->data = data;
	r->size = data_size;
	r->scratch = scratch;
	r->tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
	r->head = r->tail;
	return 0;
}

/* Gives up on everything unread: the only safe restart point is the head. */
static void resync(struct pr_ring *r)
{
	r->tail = r->head;
}

uint64_t pr_ring_begin(struct pr_ring *r, enum pr_ring_err *err)
{
	/* Pairs with the kernel's smp_wmb() before it publishes data_head:
	 * record bytes below head are visible once we see head. */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	*err = PR_RING_OK;
	if (r->head - r->tail > r->size) {
		r->overruns++;
		*err = PR_RING_OVERRUN;
		resync(r);
	}
	return r->head - r->tail;
}

const struct perf_event_header *pr_ring_copy_wrapped(const struct pr_ring *r, uint64_t off,
							uint16_t size, uint8_t *dst)
{
	uint64_t first = r->size - off;

	memcpy(dst, r->data + off, first);
	memcpy(dst + first, r->data, size - first);
	return (const struct perf_event_header *)dst;
}

const struct perf_event_header *pr_ring_bad_header(struct pr_ring *r, enum pr_ring_err *err)
{
	r->corrupt++;
	*err = PR_RING_CORRUPT;
	resync(r);
	return NULL;
}

void pr_ring_end(struct pr_ring *r)
{
	/* Our reads of the consumed records must complete before the kernel
	 * may overwrite them: release ordering on the tail store. */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

uint64_t pr_ring_fill(const struct pr_ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);

	return head - tail > r->size ? r->size : head - tail;
}
