/* SPDX-License-Identifier: MIT */
/* A ring's drops, each counted once (R4, docs/RULES.md): what its LOST
 * records report, and the kernel's per-event totals (read_format LOST,
 * Linux 6.0+), which also hold the drops that no LOST record reports yet. */
#ifndef PR_RINGS_LOST_H
#define PR_RINGS_LOST_H

#include "read/cpu.h"

/* The read_format every event is opened with: PERF_FORMAT_ID |
 * PERF_FORMAT_LOST where the kernel has it (6.0 on), else 0. */
uint64_t pr_lost_read_format(void);

/* Counts a PERF_RECORD_LOST of n drops into c's stats. */
void pr_lost_record(struct pr_cpu *c, uint64_t n);

/* Counts a PERF_RECORD_LOST_SAMPLES of n drops (which no total holds). */
void pr_lost_samples(struct pr_cpu *c, uint64_t n);

/* Each of the two, and each total read, adds its growth to stats.lost and
 * tells the sink's lost callback of it (if any). */

/* Asks for the kernel's totals of cpu[0..n) at each one's next parse. Any
 * thread may call it: stop does, once the events are disabled. */
void pr_lost_due(struct pr_cpu *cpu, size_t n);

/* Reads the totals of every fd of c into its stats, if they are due. Only
 * the thread parsing c calls it. 0, or -errno of a failed read (the totals
 * stay due: the next parse reads them again). */
int pr_lost_sync(struct pr_cpu *c);

/* At the start of each parse of c: one load unless the totals are due. */
static inline void pr_lost_begin(struct pr_cpu *c)
{
	if (__builtin_expect(__atomic_load_n(&c->lost.due, __ATOMIC_RELAXED), 0))
		pr_lost_sync(c);
}

#endif
