/* SPDX-License-Identifier: MIT */
/* One record of one CPU's ring to its callback: the general (slow) path that
 * every parse shares. drain.c has the fast path for the common sample. */
#ifndef PR_READ_DELIVER_H
#define PR_READ_DELIVER_H

#include "read/cpu.h"

/* A batch: snapshot the head (counting corruption and fill), then read up to
 * it, then hand the space back (pr_end also ends a pull batch). */
void pr_begin(struct pr_cpu *c);
const struct perf_event_header *pr_peek(struct pr_cpu *c); /* NULL: none left */
/* pr_peek copying a wrapped record to dst (room bytes) instead of the
 * ring's scratch; NULL with *no_room when it does not fit there. */
const struct perf_event_header *pr_peek_to(struct pr_cpu *c, uint8_t *dst, size_t room,
					   bool *no_room);
void pr_end(struct pr_cpu *c);

/* Claims c for a parse by thread me (R1, docs/RULES.md): free, or held by
 * me for my own uncommitted pull batch, which the parse then commits.
 * false: another parse holds it. */
bool pr_claim(struct pr_cpu *c, uintptr_t me);

/* Claims c for a pull call (cpu_next, cpu_commit) by thread me: free, or
 * held by me for my own pull batch. false: another parse holds it. Inline:
 * cpu_next pays it for every record. */
static inline bool pr_claim_pull(struct pr_cpu *c, uintptr_t me)
{
	/* Only the holder reads pulling: it is the holder's to write. */
	return pr_cpu_mine(c, me) ? c->pulling : pr_cpu_claim(c, me);
}

/* Decodes h into a sample or a kernel record, counting it. Returns
 * PERFRING_NEXT_SAMPLE, PERFRING_NEXT_RECORD, or 0 for a record that was
 * skipped and counted. */
int pr_decode(struct pr_cpu *c, const struct perf_event_header *h, struct perfring_sample *smp,
	      struct perfring_record *rec);

/* Decodes h and calls its callback. Returns 1 for a sample, else 0; *stop
 * is set when the callback asks to stop. Does not consume h. */
int pr_dispatch(struct pr_cpu *c, const struct perf_event_header *h, bool *stop);

/* h's timestamp for the merge, 0 when it has none we can trust (no TIME,
 * or an id no event of this session owns). */
uint64_t pr_key_of(struct pr_cpu *c, const struct perf_event_header *h);

#endif
