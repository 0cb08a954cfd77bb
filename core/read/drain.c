/* SPDX-License-Identifier: MIT */
/* One ring's records to their callbacks: the fast loop, the slow step, and
 * the pull form. */
#include "read/drain.h"
#include "read/deliver.h"
#include "read/order.h"

#include <errno.h>

/* Whether a record with this time goes before the run's bound. No run: all do. */
static inline bool within(const struct pr_run *run, uint64_t time)
{
	return !run || pr_before(run->bound, run->idx, time);
}

int __attribute__((noinline)) pr_slow_step(struct pr_cpu *c, struct pr_run *run)
{
	const struct perf_event_header *h = pr_peek(c);
	bool stop = false;
	uint64_t key;
	int n;

	if (!h)
		return 0;
	if (run) {
		key = pr_key_of(c, h);
		if (!within(run, key))
			return PR_STEP_BOUND;
		if (key)
			run->late += pr_late(&run->newest, key);
	}
	n = pr_dispatch(c, h, &stop);
	pr_ring_consume(&c->ring, h);
	return (n ? PR_STEP_SAMPLE : 0) | (stop ? PR_STEP_STOP : 0);
}

/* The late rule's state, kept in registers by the loop, back into run. */
static inline void run_sync(struct pr_run *run, uint64_t newest, uint64_t *late)
{
	if (!run)
		return;
	run->late += *late;
	*late = 0;
	run->newest = newest;
}

/* Delivers c's records up to its snapshot head: at most max (0 = all). In a
 * merge run (run set) it counts late records as the merge does, and when
 * bounded delivers only those that sort before the run's bound. The common
 * record, a sample of the same event as the last one, is decoded inline.
 * Always inlined, so each caller gets a copy without the checks it does not
 * need. */
static inline __attribute__((always_inline)) int
drain_loop(struct pr_cpu *c, uint32_t max,
	   const volatile bool *cancel, struct pr_run *run, bool bounded, struct pr_sbuf *sb,
	   bool *stop)
{
	const uint8_t *data = c->ring.data;
	const uint64_t mask = c->ring.size - 1, head = c->ring.head;
	const struct perf_event_header *h;
	uint64_t left = max, newest = run ? run->newest : 0, late = 0;
	struct pr_fast k;
	int n = 0, step;

	fast_load(c, &k, sb);
	while (k.tail != head && !(max && !left--) && !(cancel && *cancel)) {
		h = (const struct perf_event_header *)(data + (k.tail & mask));
		if (__builtin_expect(!fast_take(&k, h, &sb->smp), 0)) {
			fast_store(c, &k);
			n += (int)k.fast;
			run_sync(run, newest, &late);
			step = pr_slow_step(c, run);
			newest = run ? run->newest : 0;
			fast_load(c, &k, sb);
			n += step & PR_STEP_SAMPLE;
			if (step & PR_STEP_STOP)
				goto stopped;
			if (step & PR_STEP_BOUND)
				break;
			continue;
		}
		if (run) {
			if (bounded && !within(run, sb->smp.time))
				break;
			late += pr_late(&newest, sb->smp.time);
		}
		k.tail += h->size;
		k.fast++;
		k.last_time = sb->smp.time;
		if (pr_event_call(k.ev, &sb->smp))
			goto stopped;
	}
	fast_store(c, &k);
	run_sync(run, newest, &late);
	return n + (int)k.fast;
stopped:
	*stop = true;
	fast_store(c, &k);
	run_sync(run, newest, &late);
	return n + (int)k.fast;
}

int pr_drain(struct pr_cpu *c, uint32_t max, bool *more, const volatile bool *cancel)
{
	struct pr_sbuf sb = { .shape = PR_SHAPE_ANY };
	bool stop = false;
	int n;

	if (!pr_take(c, pr_self())) {
		if (more)
			*more = false;
		return -EBUSY;
	}
	pr_begin(c);
	if (!max && !cancel)
		n = drain_loop(c, 0, NULL, NULL, false, &sb, &stop);
	else
		n = drain_loop(c, max, cancel, NULL, false, &sb, &stop);
	pr_end(c);
	if (more)
		*more = c->ring.tail != c->ring.head;
	pr_cpu_unclaim(c);
	return n;
}

int pr_drain_run(struct pr_cpu *c, struct pr_run *run, struct pr_sbuf *sb, bool *stop)
{
	/* Nothing else left to merge with: the plain loop, without bound checks. */
	if (run->bound.idx >= PR_TREE_DONE)
		return drain_loop(c, 0, NULL, run, false, sb, stop);
	return drain_loop(c, 0, NULL, run, true, sb, stop);
}

/* The pull form's next record. One record a call leaves nothing to keep in
 * registers, but the fast path's checks and decode still spare the general
 * path's lookups when the record is another sample of the last event. */
int pr_pull(struct pr_cpu *c, struct perfring_sample *smp, struct perfring_record *rec)
{
	struct pr_ring *r = &c->ring;
	const struct perf_event_header *h = (const void *)(r->data + (r->tail & (r->size - 1)));
	struct pr_fast k;
	int kind;

	fast_from(c, &k);
	/* The caller's sample may hold anything: the full decode, which
	 * writes every field. */
	if (k.tail != k.end && fast_fits(&k, h) &&
	    pr_decode_sample_fast(h, &k.ev->layout, smp) == 0) {
		smp->event = k.ev;
		k.tail += h->size;
		k.fast = 1;
		fast_store(c, &k);
		return PERFRING_NEXT_SAMPLE;
	}
	while ((h = pr_peek(c))) {
		pr_ring_consume(r, h);
		kind = pr_decode(c, h, smp, rec);
		if (kind)
			return kind;
	}
	return 0;
}
