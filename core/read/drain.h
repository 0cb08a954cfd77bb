/* SPDX-License-Identifier: MIT */
/* One ring, completely: the fast loop and the slow step for parse_for_cpu,
 * the bounded delivery a merge asks for, and the pull form. */
#ifndef PR_READ_DRAIN_H
#define PR_READ_DRAIN_H

#include "read/fast.h"

/* Drains c up to its head: at most max records (0 = all), stopping early
 * when a callback returns non-zero or *cancel becomes true (may be NULL).
 * *more (may be NULL): records remain. Returns samples handled, or -EBUSY
 * with nothing done while another parse holds c (R1, docs/RULES.md). */
int pr_drain(struct pr_cpu *c, uint32_t max, bool *more, const volatile bool *cancel);

/* For a merge, inside its snapshot (pr_begin .. pr_end): delivers c's
 * records while they sort before run->bound (all of them when the bound is
 * PR_TREE_DONE, but for those past run->limit); the first, the merge's
 * winner, always goes. Applies the
 * late rule to each (run->newest, run->late). *stop: a callback asked. */
int pr_drain_run(struct pr_cpu *c, struct pr_run *run, struct pr_sbuf *sb, bool *stop);

#define PR_STEP_SAMPLE 1 /* pr_slow_step delivered a sample */
#define PR_STEP_STOP 2   /* its callback asked to stop */
#define PR_STEP_BOUND 4  /* the record sorts after run's bound: left for later */

/* One record the fast path does not take (a wrapped or corrupt record,
 * another event, a kernel record) through the general path. run: the
 * merge's bound and late rule, or NULL. Works on *c; out of line so that a
 * loop's state never has its address taken. */
int pr_slow_step(struct pr_cpu *c, struct pr_run *run);

/* pr_pull's general path: the next record through pr_peek and pr_decode. */
int pr_pull_slow(struct pr_cpu *c, struct perfring_sample *smp, struct perfring_record *rec);

/* perfring_cpu_next() inside a pull batch: the next sample or kernel record
 * (PERFRING_NEXT_*), or 0 at the batch's end. One record a call leaves
 * nothing to keep in registers, but the fast path's checks and decode still
 * spare the general path's lookups when the record is another sample of
 * the last event. Inline, as cpu_next's every record is. */
static inline int pr_pull(struct pr_cpu *c, struct perfring_sample *smp,
			  struct perfring_record *rec)
{
	const struct pr_ring *r = &c->ring;
	const struct perf_event_header *h = (const void *)(r->data + (r->tail & (r->size - 1)));
	struct pr_fast k;

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
	return pr_pull_slow(c, smp, rec);
}

#endif
