/* SPDX-License-Identifier: MIT */
/* A timed ring buffer's leaf of the merge: its records read in place, or
 * copied and sorted by time while an order window keeps them. */
#include "read/rbkeep.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* R8: only the claimed parser writes the stats; readers load them relaxed
 * (as read/ringbuf.c writes them). */
#define KEPT_STAT_ADD(rb, field, v) \
	__atomic_store_n(&(rb)->st.field, (rb)->st.field + (v), __ATOMIC_RELAXED)

#define END_TRIES 4 /* copies of late arrivals at a pass's end */

void pr_kept_free(struct pr_kept *k)
{
	free(k->rec);
	free(k->bytes);
	memset(k, 0, sizeof(*k));
}

/* The live copies into a fresh bytes[] of size bytes, from its start (the
 * copies lie in arrival order, the records in time order: moving them in
 * place could overwrite one not moved yet). -ENOMEM: nothing changed. */
static int compact(struct pr_kept *k, uint64_t size)
{
	uint8_t *b = pr_calloc(1, size);
	uint64_t at = 0;
	uint32_t i, j = 0;

	if (!b)
		return -ENOMEM;
	for (i = k->head; i < k->n; i++, j++) {
		memcpy(b + at, k->bytes + k->rec[i].off, k->rec[i].len);
		k->rec[j] = k->rec[i];
		k->rec[j].off = (uint32_t)at;
		at += (k->rec[i].len + 7u) & ~7u;
	}
	free(k->bytes);
	k->bytes = b;
	k->size = size;
	k->head = 0;
	k->n = j;
	k->used = at;
	return 0;
}

/* Room for one more copy of len bytes, within k->max. */
static int room(struct pr_kept *k, uint32_t len)
{
	uint64_t need = (len + 7u) & ~7u, size;
	void *p;

	/* Copies delivered already leave their room once the live ones move. */
	if (k->used + need > k->size && k->head && compact(k, k->size))
		return -ENOMEM;
	if (k->used + need > k->max)
		return -ENOSPC;
	if (k->used + need > k->size) {
		size = k->size ? k->size : 4096;
		while (size < k->used + need)
			size *= 2;
		size = size < k->max ? size : k->max; /* >= used + need, checked above */
		if (!(p = pr_realloc(k->bytes, size)))
			return -ENOMEM;
		k->bytes = p;
		k->size = size;
	}
	if (k->n == k->cap && k->head) {
		memmove(k->rec, k->rec + k->head, (size_t)(k->n - k->head) * sizeof(*k->rec));
		k->n -= k->head;
		k->head = 0;
	}
	if (k->n == k->cap) {
		if (!(p = pr_realloc(k->rec, (k->cap ? 2 * (size_t)k->cap : 64) * sizeof(*k->rec))))
			return -ENOMEM;
		k->rec = p;
		k->cap = k->cap ? 2 * k->cap : 64;
	}
	return 0;
}

int pr_kept_add(struct pr_kept *k, uint64_t time, const void *rec, uint32_t len)
{
	uint32_t at;
	int err;

	if ((err = room(k, len)))
		return err;
	memcpy(k->bytes + k->used, rec, len);
	/* Mostly in order already: from the end, past every later time. */
	for (at = k->n; at > k->head && k->rec[at - 1].time > time; at--)
		;
	memmove(&k->rec[at + 1], &k->rec[at], (size_t)(k->n - at) * sizeof(*k->rec));
	k->rec[at] = (struct pr_kept_rec){ time, (uint32_t)k->used, len };
	k->n++;
	k->used += (len + 7u) & ~7u;
	return 0;
}

/* Every record now in the ring into kept, up to kept's room. */
static void copy_all(struct pr_rbleaf *l)
{
	uint64_t t;

	while (pr_rbuf_peek(l->rb, &t)) {
		if (pr_kept_add(&l->kept, t, l->rb->rec, l->rb->len))
			break; /* full: the rest stays in the ring, for a later pass */
		pr_rb_consume(&l->rb->map);
		l->rb->peeked = false;
	}
}

static bool key_of(struct pr_rbleaf *l, uint64_t *key)
{
	if (!l->copying)
		return pr_rbuf_peek(l->rb, key);
	if (pr_kept_empty(&l->kept))
		return false;
	*key = l->kept.rec[l->kept.head].time;
	return true;
}

bool pr_rbleaf_begin(struct pr_rbleaf *l, bool window, uint64_t *key)
{
	l->copying = window || !pr_kept_empty(&l->kept);
	if (!l->kept.max)
		l->kept.max = l->rb->map.size ? l->rb->map.size : 4096;
	if (l->copying)
		copy_all(l);
	*key = 0;
	return key_of(l, key);
}

/* The oldest copy to the callback, as read/ringbuf.c delivers a record in
 * place. true: the callback asked to stop. */
static bool deliver_copy(struct pr_rbleaf *l)
{
	struct pr_rbuf *rb = l->rb;
	const struct pr_kept_rec *r = &l->kept.rec[l->kept.head];
	struct perfring_sample smp;

	memset(&smp, 0, sizeof(smp));
	smp.event = rb->ev;
	smp.cpu = -1;
	smp.time = r->time;
	smp.raw = l->kept.bytes + r->off;
	smp.raw_size = r->len;
	if (rb->timed && (uint64_t)rb->time_offset + sizeof(smp.time) > r->len)
		KEPT_STAT_ADD(rb, untimed, 1);
	KEPT_STAT_ADD(rb, records, 1);
	KEPT_STAT_ADD(rb, bytes, r->len);
	rb->pass++;
	/* The copy stays valid through the callback: nothing is added then. */
	return rb->ev && pr_event_call(rb->ev, &smp);
}

int pr_rbleaf_step(struct pr_rbleaf *l, uint64_t *key, bool *live, bool *stop)
{
	int r;

	if (l->copying) {
		if (deliver_copy(l))
			*stop = true;
		if (++l->kept.head == l->kept.n)
			l->kept.head = l->kept.n = 0, l->kept.used = 0;
		r = 1;
	} else {
		r = pr_rbuf_deliver(l->rb);
		if (r < 0)
			*stop = true;
		r = r != 0;
	}
	*key = 0;
	*live = !*stop && key_of(l, key);
	return r;
}

bool pr_rbleaf_end(struct pr_rbleaf *l)
{
	int tries;

	for (tries = 0; tries < END_TRIES; tries++) {
		if (!pr_rbuf_end(l->rb))
			return false;
		if (!l->copying)
			return true;
		copy_all(l);
	}
	return true;
}
