/* SPDX-License-Identifier: MIT */
/* One perf ring: a kernel mmap or a synthetic ring in ordinary memory. */
#ifndef PR_RING_H
#define PR_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define PR_RING_SCRATCH 65536u /* a record is at most 64 KiB (u16 size) */

/* Why a batch ended early; each is counted by the caller into its stats. */
enum pr_ring_err {
	PR_RING_OK = 0,
	PR_RING_CORRUPT, /* bad header size or misaligned tail: resynced at head */
	PR_RING_OVERRUN, /* head more than a ring ahead of tail: resynced at head */
	PR_RING_NO_ROOM, /* a wrapped record does not fit the room given: left unread */
};

struct pr_ring {
	struct perf_event_mmap_page *meta; /* data_head / data_tail */
	const uint8_t *data;
	uint64_t size;     /* bytes, power of two >= 8 */
	uint64_t head;     /* snapshot taken by pr_ring_begin */
	uint64_t tail;     /* local read position; published by pr_ring_end */
	uint8_t *scratch;  /* PR_RING_SCRATCH bytes for a record that wraps */
	uint64_t corrupt, overruns;
};

/* data_size must be a power of two >= 8; scratch PR_RING_SCRATCH bytes.
 * The local tail starts at meta->data_tail. */
int pr_ring_init(struct pr_ring *r, struct perf_event_mmap_page *meta, const void *data,
		 uint64_t data_size, uint8_t *scratch);

/* Acquire-loads data_head; returns the unread bytes (0 if empty). On an
 * overrun the tail is resynced to head, counted, *err = PR_RING_OVERRUN. */
uint64_t pr_ring_begin(struct pr_ring *r, enum pr_ring_err *err);

const struct perf_event_header *pr_ring_copy_wrapped(const struct pr_ring *r, uint64_t off,
							uint16_t size, uint8_t *dst);
const struct perf_event_header *pr_ring_bad_header(struct pr_ring *r, enum pr_ring_err *err);

/* The next record before the snapshot, contiguous (a wrapped one copied to
 * dst, which has room bytes), or NULL at the end. A corrupt header resyncs
 * to head, counts, sets *err and returns NULL; a wrapped record larger than
 * room is left where it is: NULL, *err = PR_RING_NO_ROOM. Does not advance:
 * call pr_ring_consume. Inline: it is the per-record step of every parse. */
static inline const struct perf_event_header *pr_ring_peek_to(struct pr_ring *r,
							      enum pr_ring_err *err,
							      uint8_t *dst, size_t room)
{
	const struct perf_event_header *h;
	uint64_t avail = r->head - r->tail;
	uint64_t off = r->tail & (r->size - 1);

	*err = PR_RING_OK;
	if (avail == 0)
		return NULL;
	/* The kernel keeps records 8-byte aligned, so a header never wraps; a
	 * size it would never write means the ring is not what we think. */
	h = (const struct perf_event_header *)(r->data + off);
	if (__builtin_expect((off & 7) || avail < sizeof(*h) || h->size < sizeof(*h) ||
			     (h->size & 7) || h->size > avail, 0))
		return pr_ring_bad_header(r, err);
	if (__builtin_expect(off + h->size > r->size, 0)) {
		if (h->size > room) {
			*err = PR_RING_NO_ROOM;
			return NULL;
		}
		return pr_ring_copy_wrapped(r, off, h->size, dst);
	}
	return h;
}

/* pr_ring_peek_to with the ring's own scratch, which any record fits. */
static inline const struct perf_event_header *pr_ring_peek(struct pr_ring *r,
							   enum pr_ring_err *err)
{
	return pr_ring_peek_to(r, err, r->scratch, PR_RING_SCRATCH);
}

static inline void pr_ring_consume(struct pr_ring *r, const struct perf_event_header *h)
{
	r->tail += h->size;
}

/* Release-stores the local tail into data_tail (hands the space back). */
void pr_ring_end(struct pr_ring *r);

/* Bytes the kernel has written but we have not released, from the shared page. */
uint64_t pr_ring_fill(const struct pr_ring *r);

#endif
