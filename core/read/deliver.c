/* SPDX-License-Identifier: MIT */
/* One record: its event, its decoding, its callback, and the stats it moves. */
#include "read/deliver.h"
#include "rings/lost.h"

#include <errno.h>

/* Finds the event that owns a record id. false when the id is not ours;
 * *ev is NULL for the CPU's dummy leader. */
static bool lookup(struct pr_cpu *c, uint64_t id, struct perfring_event **ev)
{
	size_t lo = 0, hi = c->nids, mid;

	if (c->last.id == id && c->nids) {
		*ev = c->last.ev;
		return true;
	}
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nids || c->ids[lo].id != id)
		return false;
	c->last = c->ids[lo];
	*ev = c->last.ev;
	return true;
}

static inline uint64_t sample_type_of(const struct perfring_event *ev)
{
	return ev ? ev->attr.sample_type : PR_SAMPLE_FORCED;
}

/* The event of a record whose IDENTIFIER is id; false for an unknown id.
 * The common case, the same event as the last record, costs one compare. */
static inline bool event_of(struct pr_cpu *c, uint64_t id, struct perfring_event **ev)
{
	if (__builtin_expect(c->last.id == id, 1)) {
		*ev = c->last.ev;
		return true;
	}
	return lookup(c, id, ev);
}

static void note_fill(struct pr_cpu *c)
{
	uint64_t fill = (c->ring.head - c->ring.tail) * 100 / c->ring.size;

	if (fill > c->st.max_fill_pct)
		PR_STAT_SET(c, max_fill_pct, (uint32_t)fill);
}

/* A LOST record's drops may already be in a total read from the kernel
 * (rings/lost.c). LOST_SAMPLES counts what no total holds. */
static void count_lost(struct pr_cpu *c, const struct perfring_record *r)
{
	if (r->type == PERF_RECORD_LOST)
		pr_lost_record(c, r->u.lost.lost);
	else if (r->type == PERF_RECORD_LOST_SAMPLES)
		pr_lost_samples(c, r->u.lost_samples.lost); /* the lost callback too */
}

/* The uncommon records: anything but a sample of a known event. */
static int decode_other(struct pr_cpu *c, const struct perf_event_header *h,
			struct perfring_record *rec)
{
	struct perfring_event *ev = NULL;
	uint64_t id;
	int err;

	if (h->type == PERF_RECORD_SAMPLE || !pr_record_identifier(h, &id) ||
	    !event_of(c, id, &ev)) {
		PR_STAT_ADD(c, unknown, 1);
		return 0;
	}
	rec->event = ev;
	rec->cpu = c->cpu;
	err = pr_decode_record(h, sample_type_of(ev), rec);
	if (err == -ENOMSG) {
		PR_STAT_ADD(c, unknown, 1);
		return 0;
	}
	if (err) {
		PR_STAT_ADD(c, corrupt, 1);
		return 0;
	}
	count_lost(c, rec);
	return pr_sink_wants(c->sink, rec->type) ? PERFRING_NEXT_RECORD : 0;
}

int pr_decode(struct pr_cpu *c, const struct perf_event_header *h, struct perfring_sample *smp,
	      struct perfring_record *rec)
{
	struct perfring_event *ev;

	PR_STAT_ADD(c, records, 1);
	PR_STAT_ADD(c, bytes, h->size);
	if (__builtin_expect(h->type == PERF_RECORD_SAMPLE && h->size >= 16, 1) &&
	    event_of(c, pr_ld64((const uint8_t *)(h + 1)), &ev) && ev) {
		smp->event = ev;
		smp->cpu = c->cpu;
		if (__builtin_expect(pr_decode_sample_fast(h, &ev->layout, smp) < 0, 0)) {
			PR_STAT_ADD(c, corrupt, 1);
			return 0;
		}
		PR_STAT_ADD(c, samples, 1);
		return PERFRING_NEXT_SAMPLE;
	}
	return decode_other(c, h, rec);
}

int pr_dispatch(struct pr_cpu *c, const struct perf_event_header *h, bool *stop)
{
	struct perfring_sample smp;
	struct perfring_record rec;
	perfring_record_fn fn;

	switch (pr_decode(c, h, &smp, &rec)) {
	case PERFRING_NEXT_SAMPLE:
		if (pr_event_call(smp.event, &smp))
			*stop = true;
		return 1;
	case PERFRING_NEXT_RECORD:
		fn = __atomic_load_n(&c->sink->fn, __ATOMIC_RELAXED);
		if (fn && fn(&rec, c->sink->ctx))
			*stop = true;
		return 0;
	default:
		return 0;
	}
}

void pr_begin(struct pr_cpu *c)
{
	enum pr_ring_err err;

	pr_lost_begin(c);
	pr_ring_begin(&c->ring, &err);
	if (err)
		PR_STAT_ADD(c, corrupt, 1);
	note_fill(c);
}

const struct perf_event_header *pr_peek_to(struct pr_cpu *c, uint8_t *dst, size_t room,
					   bool *no_room)
{
	enum pr_ring_err err;
	const struct perf_event_header *h = pr_ring_peek_to(&c->ring, &err, dst, room);

	*no_room = err == PR_RING_NO_ROOM;
	if (__builtin_expect(!h && err && !*no_room, 0))
		PR_STAT_ADD(c, corrupt, 1);
	return h;
}

const struct perf_event_header *pr_peek(struct pr_cpu *c)
{
	bool no_room;

	return pr_peek_to(c, c->ring.scratch, PR_RING_SCRATCH, &no_room);
}

bool pr_claim(struct pr_cpu *c, uintptr_t me)
{
	if (!pr_claim_pull(c, me))
		return false;
	if (c->pulling)
		pr_end(c); /* this thread's own pull batch: the parse commits it */
	return true;
}

void pr_end(struct pr_cpu *c)
{
	pr_ring_end(&c->ring);
	c->pulling = false;
}

uint64_t pr_key_of(struct pr_cpu *c, const struct perf_event_header *h)
{
	struct perfring_event *ev = NULL;
	uint64_t id;

	/* A record of an id we do not own has a layout we do not know. */
	if (!pr_record_identifier(h, &id) || !event_of(c, id, &ev))
		return 0;
	if (h->type != PERF_RECORD_SAMPLE)
		return pr_record_time(h, sample_type_of(ev));
	if (ev && ev->layout.time >= 0 && h->size >= sizeof(*h) + ev->layout.fixed)
		return pr_ld64((const uint8_t *)(h + 1) + ev->layout.time);
	return 0;
}
