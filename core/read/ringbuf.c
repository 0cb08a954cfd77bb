/* SPDX-License-Identifier: MIT */
/* A BPF ring buffer's records to its event's callback: the drain of its own
 * and the merge's face. */
#include "read/ringbuf.h"

#include <errno.h>
#include <string.h>

/* R8: only the claimed parser writes the stats; readers load them relaxed. */
#define RB_STAT_ADD(rb, field, n) \
	__atomic_store_n(&(rb)->st.field, (rb)->st.field + (n), __ATOMIC_RELAXED)

bool pr_rbuf_claim(struct pr_rbuf *rb)
{
	bool none = false;

	return __atomic_compare_exchange_n(&rb->busy, &none, true, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void pr_rbuf_unclaim(struct pr_rbuf *rb)
{
	__atomic_store_n(&rb->busy, false, __ATOMIC_RELEASE);
}

void pr_rbuf_stats_read(const struct pr_rbuf *rb, struct perfring_ringbuf_stats *out)
{
	out->records = __atomic_load_n(&rb->st.records, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&rb->st.bytes, __ATOMIC_RELAXED);
	out->discarded = __atomic_load_n(&rb->st.discarded, __ATOMIC_RELAXED);
	out->untimed = __atomic_load_n(&rb->st.untimed, __ATOMIC_RELAXED);
	out->wakeups = __atomic_load_n(&rb->st.wakeups, __ATOMIC_RELAXED);
}

/* The first corrupt header: counted nowhere else, said once, read no more. */
static int corrupt(struct pr_rbuf *rb)
{
	if (!rb->err)
		rb->err = pr_err(rb->ev ? rb->ev->reg->err : NULL, -EIO,
				 "BPF ring buffer%s%s: corrupt record header at consumer "
				 "position %llu (producer %llu, data size %llu): no longer read",
				 rb->ev ? " " : "", rb->ev ? rb->ev->name : "",
				 (unsigned long long)rb->map.cons_pos,
				 (unsigned long long)rb->map.prod_pos,
				 (unsigned long long)rb->map.size);
	return rb->err;
}

/* The next record into rb->rec/len: 1, 0 (none: empty or BUSY) or -EIO. */
static int next(struct pr_rbuf *rb)
{
	uint64_t disc = 0;
	int r;

	if (rb->err)
		return rb->err;
	r = pr_rb_next(&rb->map, &rb->rec, &rb->len, &disc);
	if (disc)
		RB_STAT_ADD(rb, discarded, disc);
	if (r < 0)
		return corrupt(rb);
	rb->peeked = r > 0;
	return r;
}

static uint64_t time_of(struct pr_rbuf *rb)
{
	uint64_t t;

	if (!rb->timed)
		return 0;
	if ((uint64_t)rb->time_offset + sizeof(t) > rb->len)
		return 0;
	memcpy(&t, (const uint8_t *)rb->rec + rb->time_offset, sizeof(t));
	return t;
}

/* The peeked record to the callback and past it. true: stop. */
static bool deliver(struct pr_rbuf *rb)
{
	struct perfring_sample smp;

	memset(&smp, 0, sizeof(smp));
	smp.event = rb->ev;
	smp.cpu = -1;
	smp.time = time_of(rb);
	smp.raw = rb->rec;
	smp.raw_size = rb->len;
	if (rb->timed && (uint64_t)rb->time_offset + sizeof(smp.time) > rb->len)
		RB_STAT_ADD(rb, untimed, 1);
	RB_STAT_ADD(rb, records, 1);
	RB_STAT_ADD(rb, bytes, rb->len);
	rb->pass++;
	rb->peeked = false;
	pr_rb_consume(&rb->map);
	return rb->ev && pr_event_call(rb->ev, &smp);
}

/* Whether a record is ready: when next() finds none, the position is
 * committed and rechecked, as the kernel wakes the reader only for a record
 * committed at the consumer position it sees. */
static int ready(struct pr_rbuf *rb)
{
	int r = next(rb);

	if (r)
		return r;
	pr_rb_commit(&rb->map);
	return pr_rb_recheck(&rb->map) ? next(rb) : 0;
}

int pr_rbuf_drain(struct pr_rbuf *rb, size_t max, bool *more, bool *stopped)
{
	bool stop = false;
	size_t n = 0;
	int r = 0;

	if (more)
		*more = false;
	if (stopped)
		*stopped = false;
	if (!pr_rbuf_claim(rb))
		return -EBUSY;
	/* With no max it drains until the recheck finds nothing, as libbpf's
	 * ring_buffer__consume does: a caller that passes no *more must not be
	 * left with a record no wakeup announces. */
	while ((!max || n < max) && !stop && (r = ready(rb)) > 0) {
		stop = deliver(rb);
		n++;
	}
	/* Budget or stop: exactly whether a record waits (the recheck inside
	 * ready() keeps an edge-triggered driver from missing one). */
	if ((max && n == max) || stop)
		r = ready(rb);
	pr_rb_commit(&rb->map); /* discards ready() skipped too */
	if (more)
		*more = r > 0;
	if (stopped)
		*stopped = stop;
	if (n)
		RB_STAT_ADD(rb, wakeups, 1);
	rb->peeked = false;
	pr_rbuf_unclaim(rb);
	if (r < 0 && !(max && n == max) && !stop)
		return r;
	return (int)(n > (size_t)__INT_MAX__ ? __INT_MAX__ : n);
}

bool pr_rbuf_peek(struct pr_rbuf *rb, uint64_t *time)
{
	if (!rb->peeked && next(rb) <= 0) {
		*time = 0;
		return false;
	}
	*time = time_of(rb);
	return true;
}

int pr_rbuf_deliver(struct pr_rbuf *rb)
{
	if (!rb->peeked)
		return 0;
	return deliver(rb) ? -1 : 1;
}

bool pr_rbuf_end(struct pr_rbuf *rb)
{
	if (rb->pass)
		RB_STAT_ADD(rb, wakeups, 1);
	rb->pass = 0;
	rb->peeked = false;
	pr_rb_commit(&rb->map);
	return !rb->err && pr_rb_recheck(&rb->map);
}
