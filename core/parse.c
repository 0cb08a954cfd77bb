/* SPDX-License-Identifier: MIT */
#include "parse.h"
#include "event.h"
#include "record.h"

#include <errno.h>
#include <string.h>

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
		c->st.max_fill_pct = (uint32_t)fill;
}

static void count_lost(struct pr_cpu *c, const struct perfring_record *r)
{
	if (r->type == PERF_RECORD_LOST)
		c->st.lost += r->u.lost.lost;
	else if (r->type == PERF_RECORD_LOST_SAMPLES)
		c->st.lost += r->u.lost_samples.lost;
}

/* The uncommon records: anything but a sample of a known event. */
static int __attribute__((noinline)) decode_other(struct pr_cpu *c,
						  const struct perf_event_header *h,
						  struct perfring_record *rec)
{
	struct perfring_event *ev = NULL;
	uint64_t id;
	int err;

	if (h->type == PERF_RECORD_SAMPLE || !pr_record_identifier(h, &id) ||
	    !event_of(c, id, &ev)) {
		c->st.unknown++;
		return 0;
	}
	rec->event = ev;
	rec->cpu = c->cpu;
	err = pr_decode_record(h, sample_type_of(ev), rec);
	if (err == -ENOMSG) {
		c->st.unknown++;
		return 0;
	}
	if (err) {
		c->st.corrupt++;
		return 0;
	}
	count_lost(c, rec);
	return PERFRING_NEXT_RECORD;
}

/* Decodes h into a sample or a kernel record. Returns PERFRING_NEXT_SAMPLE,
 * PERFRING_NEXT_RECORD, or 0 for a record that was skipped and counted. */
static inline int decode(struct pr_cpu *c, const struct perf_event_header *h,
			 struct perfring_sample *smp, struct perfring_record *rec)
{
	struct perfring_event *ev;

	c->st.records++;
	c->st.bytes += h->size;
	if (__builtin_expect(h->type == PERF_RECORD_SAMPLE && h->size >= 16, 1) &&
	    event_of(c, pr_ld64((const uint8_t *)(h + 1)), &ev) && ev) {
		smp->event = ev;
		smp->cpu = c->cpu;
		if (__builtin_expect(pr_decode_sample_fast(h, &ev->layout, smp) < 0, 0)) {
			c->st.corrupt++;
			return 0;
		}
		c->st.samples++;
		return PERFRING_NEXT_SAMPLE;
	}
	return decode_other(c, h, rec);
}

/* Delivers one record to its callback. Returns 1 for a sample, else 0;
 * *stop is set when the callback asks to stop. */
static inline int dispatch(struct perfring_session *s, struct pr_cpu *c,
			   const struct perf_event_header *h, bool *stop)
{
	struct perfring_sample smp;
	struct perfring_record rec;

	switch (decode(c, h, &smp, &rec)) {
	case PERFRING_NEXT_SAMPLE:
		c->last_time = smp.time;
		if (smp.event->fn && smp.event->fn(&smp, smp.event->ctx))
			*stop = true;
		return 1;
	case PERFRING_NEXT_RECORD:
		c->last_time = rec.time;
		if (s->rec_fn && s->rec_fn(&rec, s->rec_ctx))
			*stop = true;
		return 0;
	default:
		return 0;
	}
}

static void begin(struct pr_cpu *c)
{
	enum pr_ring_err err;

	pr_ring_begin(&c->ring, &err);
	if (err)
		c->st.corrupt++;
	note_fill(c);
}

static inline const struct perf_event_header *peek(struct pr_cpu *c)
{
	enum pr_ring_err err;
	const struct perf_event_header *h = pr_ring_peek(&c->ring, &err);

	if (__builtin_expect(!h && err, 0))
		c->st.corrupt++;
	return h;
}

static void end(struct pr_cpu *c)
{
	pr_ring_end(&c->ring);
	c->pulling = false;
}

/* What the drain loop keeps in registers instead of in *c: the callback is
 * opaque, so the compiler would reload and re-store every field of *c
 * around each call, and the tail's store-to-load chain would set the pace. */
struct hot {
	uint64_t tail, tail0;       /* tail now, and at hot_load */
	uint64_t end;               /* min(head, where the ring wraps) */
	uint64_t fast;              /* samples delivered by the fast path since */
	uint64_t last_time;
	uint64_t id;                /* IDENTIFIER of the fast path's event */
	struct perfring_event *ev;  /* NULL: every record takes the slow path */
};

static inline void hot_load(struct pr_cpu *c, struct hot *k, struct perfring_sample *smp)
{
	uint64_t wrap;

	k->tail = k->tail0 = c->ring.tail;
	wrap = k->tail - (k->tail & (c->ring.size - 1)) + c->ring.size;
	/* An unaligned tail (only hostile memory makes one) leaves the fast
	 * path nothing: the slow path resyncs it. */
	k->end = k->tail & 7 ? k->tail : c->ring.head < wrap ? c->ring.head : wrap;
	k->fast = 0;
	k->last_time = c->last_time;
	k->id = c->last.id;
	k->ev = c->last.ev;
	*smp = (struct perfring_sample){ .event = k->ev, .cpu = c->cpu };
}

/* Every fast-path record is a sample, so one counter serves three stats. */
static inline void hot_store(struct pr_cpu *c, const struct hot *k)
{
	c->ring.tail = k->tail;
	c->last_time = k->last_time;
	c->st.records += k->fast;
	c->st.samples += k->fast;
	c->st.bytes += k->tail - k->tail0;
}

/* Decodes a sample of k->ev: a fixed shape writes only its own fields, and
 * the rest of smp stays as hot_load zeroed it. */
static inline bool hot_decode(const struct hot *k, const struct perf_event_header *h,
			      struct perfring_sample *smp)
{
	const struct pr_layout *l = &k->ev->layout;

	if (l->shape != PR_SHAPE_ANY)
		return pr_decode_shaped(h, (enum pr_shape)l->shape, smp) == 0;
	return pr_decode_sample_fast(h, l, smp) == 0;
}

/* The fast path's record: a sample of k->ev, 8-aligned, at least header +
 * IDENTIFIER, wholly before k->end; decoded into smp. With size a multiple
 * of 8 and tail aligned, `tail + size <= end` is all pr_ring_peek checks. */
static inline bool hot_take(const struct hot *k, const struct perf_event_header *h,
			    struct perfring_sample *smp)
{
	return !(h->size & 7) && h->size >= 16 && k->tail + h->size <= k->end &&
	       h->type == PERF_RECORD_SAMPLE && k->ev &&
	       pr_ld64((const uint8_t *)(h + 1)) == k->id && hot_decode(k, h, smp);
}

#define STEP_SAMPLE 1 /* slow_step delivered a sample */
#define STEP_STOP 2   /* and its callback asked to stop */

/* Anything the fast path does not take: a wrapped or corrupt record, another
 * event, a kernel record. Works on *c; kept out of line so the loop's state
 * never has its address taken and stays in registers. */
static int __attribute__((noinline)) slow_step(struct perfring_session *s, struct pr_cpu *c)
{
	const struct perf_event_header *h = peek(c);
	bool stop = false;
	int n;

	if (!h)
		return 0;
	n = dispatch(s, c, h, &stop);
	pr_ring_consume(&c->ring, h);
	return (n ? STEP_SAMPLE : 0) | (stop ? STEP_STOP : 0);
}

/* Delivers c's records up to its snapshot head, at most max (0 = all). The
 * common record, a sample of the same event as the last one, is decoded
 * inline. Always inlined, so that drain() below gets a copy without the max
 * and cancel checks for parse_for_cpu. */
static inline __attribute__((always_inline)) int
drain_loop(struct perfring_session *s, struct pr_cpu *c, uint32_t max,
	   const volatile bool *cancel, bool *stop)
{
	const uint8_t *data = c->ring.data;
	const uint64_t mask = c->ring.size - 1, head = c->ring.head;
	uint64_t left = max;
	struct perfring_sample smp;
	const struct perf_event_header *h;
	struct hot k;
	perfring_sample_fn fn;
	int n = 0, step;

	hot_load(c, &k, &smp);
	while (k.tail != head && !(max && !left--) && !(cancel && *cancel)) {
		h = (const struct perf_event_header *)(data + (k.tail & mask));
		if (__builtin_expect(!hot_take(&k, h, &smp), 0)) {
			hot_store(c, &k);
			n += (int)k.fast;
			step = slow_step(s, c);
			hot_load(c, &k, &smp);
			n += step & STEP_SAMPLE;
			if (step & STEP_STOP)
				goto stopped;
			continue;
		}
		k.tail += h->size;
		k.fast++;
		k.last_time = smp.time;
		fn = k.ev->fn;
		if (fn && fn(&smp, k.ev->ctx))
			goto stopped;
	}
	hot_store(c, &k);
	return n + (int)k.fast;
stopped:
	*stop = true;
	hot_store(c, &k);
	return n + (int)k.fast;
}

static int drain(struct perfring_session *s, struct pr_cpu *c, uint32_t max,
		 const volatile bool *cancel, bool *stop)
{
	if (!max && !cancel)
		return drain_loop(s, c, 0, NULL, stop);
	return drain_loop(s, c, max, cancel, stop);
}

int pr_parse_ring(struct perfring_session *s, struct pr_cpu *c, uint32_t max, bool *more,
		  const volatile bool *cancel)
{
	bool stop = false;
	int n;

	begin(c);
	n = drain(s, c, max, cancel, &stop);
	end(c);
	if (more)
		*more = c->ring.tail != c->ring.head;
	return n;
}

static uint64_t key_of(struct pr_cpu *c, const struct perf_event_header *h)
{
	struct perfring_event *ev = NULL;
	uint64_t id;

	if (h->type == PERF_RECORD_SAMPLE && h->size >= 16 &&
	    event_of(c, pr_ld64((const uint8_t *)(h + 1)), &ev) && ev) {
		if (ev->layout.time >= 0 && h->size >= sizeof(*h) + ev->layout.fixed)
			return pr_ld64((const uint8_t *)(h + 1) + ev->layout.time);
		return 0;
	}
	if (pr_record_identifier(h, &id))
		event_of(c, id, &ev);
	return pr_record_time(h, sample_type_of(ev));
}

static void note_late(struct perfring_session *s, struct pr_cpu *c, uint64_t t)
{
	if (t < s->last_merged_time)
		c->st.late++;
	else
		s->last_merged_time = t;
}

static void fill_heap(struct perfring_session *s, const bool *mask)
{
	const struct perf_event_header *h;
	size_t i;

	s->heap.n = 0;
	for (i = 0; i < s->ncpu; i++) {
		if (mask && !mask[i])
			continue;
		begin(&s->cpu[i]);
		h = peek(&s->cpu[i]);
		if (h)
			pr_heap_push(&s->heap, key_of(&s->cpu[i], h), (uint32_t)i);
	}
}

/* One ring left: its records are already in order, so it is drained like
 * parse_for_cpu; only its first and last timestamps matter to the merge. */
static int drain_last(struct perfring_session *s, struct pr_cpu *c, uint64_t first, bool *stop)
{
	uint64_t records = c->st.records;
	int n;

	note_late(s, c, first);
	n = drain(s, c, 0, NULL, stop);
	s->merged_records += c->st.records - records;
	if (c->last_time > s->last_merged_time)
		s->last_merged_time = c->last_time;
	return n;
}

/* One heap step per record while several rings have records; replace_top is
 * O(1) while the same ring stays oldest, so coarse per-CPU runs cost little. */
int pr_parse_merged(struct perfring_session *s, const bool *mask, bool *stopped)
{
	const struct pr_heap_ent *top;
	const struct perf_event_header *h;
	struct pr_cpu *c;
	bool stop = false;
	int n = 0;
	size_t i;

	fill_heap(s, mask);
	while (!stop && (top = pr_heap_top(&s->heap))) {
		c = &s->cpu[top->idx];
		if (s->heap.n == 1) {
			n += drain_last(s, c, top->key, &stop);
			break;
		}
		h = peek(c);
		if (!h) { /* only if the ring changed under us: hostile memory */
			pr_heap_pop(&s->heap);
			continue;
		}
		note_late(s, c, top->key);
		s->merged_records++;
		n += dispatch(s, c, h, &stop);
		pr_ring_consume(&c->ring, h);
		h = peek(c);
		if (h)
			pr_heap_replace_top(&s->heap, key_of(c, h));
		else
			pr_heap_pop(&s->heap);
	}
	for (i = 0; i < s->ncpu; i++)
		if (!mask || mask[i])
			end(&s->cpu[i]);
	if (stopped)
		*stopped = stop;
	return n;
}

/* ------------------------------------------------------------ public API */

static int started_cpu(struct perfring_session *s, int cpu, struct pr_cpu **c)
{
	int i;

	if (!s)
		return pr_null(NULL, "parse_for_cpu", "s");
	if (s->state == PR_NEW)
		return pr_err(s, -EINVAL, "parse before perfring_session_start");
	i = pr_cpu_index(s, cpu);
	if (i < 0)
		return pr_err(s, -ENOENT, "CPU %d is not watched by this session", cpu);
	*c = &s->cpu[i];
	return 0;
}

PERFRING_API int perfring_session_parse_for_cpu_n(struct perfring_session *s, int cpu,
						  uint32_t max, bool *more)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	return pr_parse_ring(s, c, max, more, NULL);
}

PERFRING_API int perfring_session_parse_for_cpu(struct perfring_session *s, int cpu)
{
	return perfring_session_parse_for_cpu_n(s, cpu, 0, NULL);
}

PERFRING_API int perfring_cpu_next(struct perfring_session *s, int cpu,
				   struct perfring_sample *sample, struct perfring_record *rec)
{
	const struct perf_event_header *h;
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c), kind;

	if (err)
		return err;
	if (!sample || !rec)
		return pr_null(s, __func__, sample ? "rec" : "sample");
	if (!c->pulling) {
		begin(c);
		c->pulling = true;
	}
	while ((h = peek(c))) {
		pr_ring_consume(&c->ring, h);
		kind = decode(c, h, sample, rec);
		if (kind)
			return kind;
	}
	return 0;
}

PERFRING_API int perfring_cpu_commit(struct perfring_session *s, int cpu)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	end(c);
	return 0;
}

PERFRING_API int perfring_session_parse_all(struct perfring_session *s)
{
	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state == PR_NEW)
		return pr_err(s, -EINVAL, "parse before perfring_session_start");
	return pr_parse_merged(s, NULL, NULL);
}
